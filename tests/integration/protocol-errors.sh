#!/bin/bash
# Malformed and hostile requests get a clear error reply and never hurt the daemon; the CLI maps
# errors to its documented exit codes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v socat >/dev/null || hard_error "socat missing (tools/install-deps installs it)"

dev=$(make_loop 32M)
truncate -s 1M "$TEST_DIR/plain-file"
start_daemon --threads 1

# expect_error LINE CODE: the reply to LINE is an error with this code and a message.
expect_error() {
        local reply
        reply=$(request "$1" | head -n 1)
        [ "$(echo "$reply" | jq -r '.ok')" = false ] || fail "no error for: ${1:0:80} -> $reply"
        [ "$(echo "$reply" | jq -r '.error.code')" = "$2" ] || fail "code for ${1:0:80}: $reply (expected $2)"
        [ -n "$(echo "$reply" | jq -r '.error.message')" ] || fail "no message: $reply"
}

expect_error 'not json' EBADMSG
expect_error '[1,2]' EBADMSG
expect_error '"x"' EBADMSG
expect_error '{"id":1,"op":"version"' EBADMSG
expect_error '{"op":"version"}' EINVAL
expect_error '{"id":-1,"op":"version"}' EINVAL
expect_error '{"id":"1","op":"version"}' EINVAL
expect_error '{"id":1,"op":"rm -rf"}' EOPNOTSUPP
expect_error '{"id":1,"op":"submit"}' EINVAL
expect_error '{"id":1,"op":"submit","devices":"/dev/sda"}' EINVAL
expect_error '{"id":1,"op":"submit","devices":[]}' EINVAL
expect_error '{"id":1,"op":"submit","devices":[1]}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"cipher":"rot13"}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"method":"gutmann9"}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"devcies":["x"]}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$TEST_DIR"'/plain-file"]}' ENOTBLK
expect_error '{"id":1,"op":"submit","devices":["/dev/does-not-exist"]}' ENOENT
expect_error '{"id":1,"op":"status","jobs":[12345]}' ESRCH
expect_error '{"id":1,"op":"status","jobs":[-3]}' EINVAL
# json-c saturates integers past 2^64-1 without a word: the daemon finds them in the text and
# refuses them (EINVAL, naming the field), whatever the field; null is a type error, not a default.
expect_error '{"id":1,"op":"cancel","job":99999999999999999999}' EINVAL
for field in max_rate seed queue_depth io_size max_bad_bytes; do
        expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"verify":"sample","'$field'":18446744073709551616}' EINVAL
        reply=$(request '{"id":1,"op":"submit","devices":["'"$dev"'"],"verify":"sample","'$field'":18446744073709551616}')
        echo "$reply" | jq -r .error.message | grep -q "\"$field\": 18446744073709551616 is out of range" ||
                fail "$field at 2^64: $reply"
        expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"verify":"sample","'$field'":null}' EINVAL
done
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"max_rate":-1}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"cipher":null}' EINVAL
expect_error '{"id":1,"op":"status","jobs":null}' EINVAL
expect_error '{"id":1,"op":"watch","interval_ms":null}' EINVAL
expect_error '{"id":1,"op":"report","job":1,"keys":null}' EINVAL
# Device paths are absolute: a relative one would be resolved in the daemon's working directory.
expect_error '{"id":1,"op":"probe","devices":["loop0"]}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"${dev#/}"'"]}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["./disk"]}' EINVAL
expect_error '{"id":1,"op":"resume","job":1,"device":"dev/loop0"}' EINVAL
reply=$(request '{"id":1,"op":"probe","devices":["loop0"]}')
echo "$reply" | jq -r .error.message | grep -q '"loop0" is not an absolute path' || fail "relative probe: $reply"
# Not strict UTF-8 (overlong forms, surrogates, past U+10FFFF, escaped lone surrogates): malformed,
# and no reply ever echoes such bytes (every reply line is valid UTF-8, so valid JSON text).
for bytes in '\xc0\xaf' '\xed\xa0\x80' '\xf4\x90\x80\x80' '\xe0\x80\xaf'; do
        line=$(printf '{"id":9,"op":"probe","devices":["/dev/%b"]}' "$bytes")
        reply=$(request "$line")
        [ "$(echo "$reply" | jq -r '"\(.id) \(.error.code)"')" = "9 EBADMSG" ] || fail "bytes $bytes: $reply"
        echo "$reply" | iconv -f UTF-8 -t UTF-8 > /dev/null 2>&1 || fail "bytes $bytes: the reply is not valid UTF-8"
done
expect_error "$(printf '{"id":1,"op":"probe","devices":["/dev/\xff"]}')" EBADMSG
expect_error '{"id":1,"op":"probe","devices":["/dev/\ud800"]}' EBADMSG
expect_error '{"id":1,"op":"probe","devices":["/dev/\udc00"]}' EBADMSG
# A message that echoes a path cut in the middle of a character is still valid UTF-8.
long="/dev/$(printf 'x%.0s' $(seq 250))é"
reply=$(request '{"id":1,"op":"submit","devices":["'"$long"'"],"method":"'"$(printf 'é%.0s' $(seq 40))"'"}')
echo "$reply" | iconv -f UTF-8 -t UTF-8 > /dev/null 2>&1 || fail "cut message: the reply is not valid UTF-8: $reply"
expect_error '{"id":1,"op":"cancel","job":1e400}' EINVAL
expect_error '{"id":1,"op":"cancel"}' EINVAL
expect_error '{"id":1,"op":"report","job":1,"keys":"yes"}' EINVAL

# The id comes back; several requests on one connection are answered in order.
replies=$(request '{"id":41,"op":"version"}' 'garbage' '{"id":43,"op":"list"}')
[ "$(echo "$replies" | jq -s -c '[.[].id]')" = '[41,null,43]' ] || fail "reply ids: $replies"

# An embedded NUL byte.
reply=$(printf '{"id":5,"op":"version"}\0{"x":1}\n' | socat -t 5 - "UNIX-CONNECT:$SOCK")
[ "$(echo "$reply" | jq -r '.error.code')" = EBADMSG ] || fail "NUL: $reply"

# A line over the 64 KiB limit: an error, then the connection closes.
reply=$(head -c 70000 /dev/zero | tr '\0' 'a' | socat -t 5 - "UNIX-CONNECT:$SOCK")
[ "$(echo "$reply" | jq -r '.error.code')" = EMSGSIZE ] || fail "long line: ${reply:0:200}"

# Deep nesting and a big valid request near the limit.
reply=$(request "$(printf '%.0s[' $(seq 5000))")
[ "$(echo "$reply" | jq -r '.error.code')" = EBADMSG ] || fail "deep nesting: $reply"
pad=$(head -c 60000 /dev/zero | tr '\0' ' ')
reply=$(request "{\"id\":8,\"op\":\"version\"$pad}")
[ "$(echo "$reply" | jq -r '.ok')" = true ] || fail "padded request: ${reply:0:200}"

# A client that vanishes without reading its reply.
for _ in $(seq 20); do printf '{"id":1,"op":"list"}\n' | socat -t 0 - "UNIX-CONNECT:$SOCK" >/dev/null 2>&1; done

# Unprivileged users may look but not wipe, cancel or read keys.
if command -v setpriv >/dev/null; then
        chmod 0711 "$TEST_DIR"
        chmod 0666 "$SOCK"
        out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$WIPECTL_BIN" --socket "$SOCK" wipe --yes "$dev" 2>&1)
        rc=$?
        [ $rc = 4 ] || fail "unprivileged wipe exited $rc: $out"
        echo "$out" | grep -q "permission denied" || fail "unprivileged wipe: $out"
        setpriv --reuid=nobody --regid=nogroup --clear-groups "$WIPECTL_BIN" --socket "$SOCK" version >/dev/null ||
                fail "unprivileged version refused"
        # A job to ask about: root wipes, nobody may see its status and report, not its keys.
        id=$(wipectl --json wipe --yes "$dev" | jq -r '.jobs[0].id') || fail "root wipe failed"
        setpriv --reuid=nobody --regid=nogroup --clear-groups "$WIPECTL_BIN" --socket "$SOCK" status "$id" >/dev/null ||
                fail "unprivileged status refused"
        out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$WIPECTL_BIN" --socket "$SOCK" --json report "$id" 2>&1) ||
                fail "unprivileged report refused: $out"
        [ "$(echo "$out" | jq -r '.passes[0].key // "none"')" = none ] || fail "report without --keys shows a key"
        out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$WIPECTL_BIN" --socket "$SOCK" report --keys "$id" 2>&1)
        rc=$?
        [ $rc = 4 ] || fail "unprivileged report --keys exited $rc: $out"
        out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$WIPECTL_BIN" --socket "$SOCK" cancel "$id" 2>&1)
        rc=$?
        [ $rc = 4 ] || fail "unprivileged cancel exited $rc: $out"
        dd if=/dev/zero of="$dev" bs=1M oflag=direct status=none 2>/dev/null
fi

# Nothing was written by any of it.
cmp -n $((32 << 20)) "$dev" /dev/zero || fail "a refused request wrote to $dev"

# CLI exit codes: usage (2), no --yes off a terminal (2), unreachable daemon (3), unknown job (1).
expect_exit 2 wipectl frobnicate
expect_exit 2 wipectl wipe "$dev" < /dev/null
expect_exit 3 "$WIPECTL_BIN" --socket "$TEST_DIR/nope.sock" status
expect_exit 1 wipectl status 777
grep -q "777" "$TEST_DIR/err" || fail "unknown job message: $(cat "$TEST_DIR/err")"
expect_exit 5 wipectl wipe --yes "$TEST_DIR/plain-file"

daemon_alive || fail "daemon died"
[ "$(wipectl --json version | jq -r '.daemon.protocol // .protocol // empty')" != "" ] || fail "version JSON has no protocol field"
stop_daemon || fail "daemon exit status $?"
pass
