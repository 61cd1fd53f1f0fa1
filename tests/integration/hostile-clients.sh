#!/bin/bash
# Hostile clients: 500 at once, more than the limit, garbage of every kind, watchers that vanish,
# slow and silent ones. The daemon serves every client it can, stays alive and small, keeps no
# connection it closed, writes to no device it was not asked to wipe, and closes a connection
# that holds an unfinished request (or sends nothing) for --client-timeout seconds, but never a
# quiet watcher. protocol-errors.sh has the basic malformed lines (NULs, over-long lines, deep
# nesting); this test adds wrong types for every op's fields, numbers out of range, paths that are
# not block devices, and a seeded random stream of all of it (HAMMER_SEED=N repeats a run).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v socat >/dev/null || hard_error "socat missing (tools/install-deps installs it)"
HAMMER=${HAMMER:-$top_builddir/tests/helpers/hammer}
[ -x "$HAMMER" ] || hard_error "$HAMMER not built (make check builds it)"
hammer() { "$HAMMER" --socket "$SOCK" "$@"; }

TIMEOUT=2

dev=$(make_loop 32M)            # wiped while 500 clients are connected
target=$(make_loop 32M)         # never to be written: every hostile request names it or others
slowdev=$(make_loop 256M)       # a rate-limited job for the watchers (at 1 MB/s: outlives the test)
dd if=/dev/urandom of="$target" bs=1M count=32 oflag=direct status=none || hard_error "cannot fill $target"
target_sum=$(dev_sha256 "$target")
file=$TEST_DIR/plain-file
truncate -s 1M "$file"
dir=$TEST_DIR/a-directory
mkdir "$dir"
fifo=$TEST_DIR/a-fifo
mkfifo "$fifo" || hard_error "mkfifo failed"
ln -s /dev/null "$TEST_DIR/null-link"

start_daemon --threads 2 --client-timeout "$TIMEOUT"

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }
n_fds() { find "/proc/$DAEMON_PID/fd" -mindepth 1 | wc -l; }

# fds_settle BASE WHAT: the daemon's open files come back to BASE (+2: a job's device, a record
# being written) within 5 s of its clients going; fail otherwise.
fds_settle() {
        local n
        for _ in $(seq 50); do
                n=$(n_fds)
                [ "$n" -le $(($1 + 2)) ] && return 0
                sleep 0.1
        done
        fail "$2: the daemon has $n open files, $1 before (connections not closed?)"
}

# field KEY LINE: the value of KEY=... among hammer's words.
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# --- 500 connections at once, all served; status and a wipe meanwhile -----------------------
rss0=$(rss_kib)
fds0=$(n_fds)
hammer --connections 500 --hold 5 --interval 1 > "$TEST_DIR/conn.out" 2> "$TEST_DIR/conn.err" &
hpid=$!
register_pid "$hpid"
wait_match "$TEST_DIR/conn.out" '^connections=' 60 || fail "500 connections: no result in 60 s: $(cat "$TEST_DIR/conn.err")"
line=$(head -n 1 "$TEST_DIR/conn.out")
[ "$(field served "$line")" = 500 ] || fail "500 connections: $line; $(head -n 5 "$TEST_DIR/conn.err")"
kill -0 "$hpid" 2>/dev/null || fail "hammer did not hold its connections: $(cat "$TEST_DIR/conn.out")"
st=$(wipectl --json status) || fail "status with 500 clients connected exited $?"
echo "$st" | jq -e '.jobs and .daemon' > /dev/null || fail "status with 500 clients connected: $st"
out=$(wipectl --json wipe --yes --no-wait --verify none "$dev") || fail "wipe with 500 clients connected exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
state=$(wait_job "$id" 60)
[ "$state" = done ] || fail "job $id on $dev ended $state with 500 clients connected"
check_last_pass "$dev" "$id"
wait "$hpid"
rc=$?
sed -i "/^$hpid\$/d" "$TEST_DIR/pids"
line=$(tail -n 1 "$TEST_DIR/conn.out")
[ "$(field dropped "$line")" = 0 ] && [ "$(field missed "$line")" = 0 ] && [ $rc = 0 ] ||
        fail "500 held connections (pinged every second): $line (exit $rc); $(head -n 5 "$TEST_DIR/conn.err")"
fds_settle "$fds0" "after 500 connections"
# A moment for the daemon to settle before its RSS is read: no event marks it (the RSS is the
# measure itself), and the bound below is far above what a moment more could change.
sleep 1
rss1=$(rss_kib)
note "daemon RSS ${rss0} KiB before 500 connections, ${rss1} KiB after"
# A sanitizer's allocator keeps freed memory in quarantine and adds shadow memory: its RSS says
# nothing of the daemon's (the leak checker covers that build).
if ldd "$WIPED" 2>/dev/null | grep -qE 'lib(a|t)san'; then
        note "sanitizer build: the RSS bound is checked in the normal build only"
else
        [ $((rss1 - rss0)) -le $((32 << 10)) ] || fail "daemon RSS grew from $rss0 to $rss1 KiB over 500 connections"
fi

# --- more than the limit (1024): the rest are refused at once, none hangs -------------------
out=$(hammer --connections 1100 2> "$TEST_DIR/conn.err") || fail "1100 connections: $out; $(head -n 5 "$TEST_DIR/conn.err")"
line=$(echo "$out" | head -n 1)
served=$(field served "$line")
refused=$(field refused "$line")
[ "$(field failed "$line")" = 0 ] || fail "1100 connections: some got no answer: $line"
[ "$served" -le 1024 ] && [ "$served" -ge 1000 ] || fail "1100 connections: $served served, expected 1000..1024: $line"
[ $((served + refused)) = 1100 ] || fail "1100 connections: $line"
wipectl version > /dev/null || fail "the daemon does not answer after 1100 connections"
fds_settle "$fds0" "after 1100 connections"

# --- wrong types, numbers out of range, non-devices: each a clear error --------------------------
# expect_code LINE CODE: one request on its own connection; its reply is an error with CODE
# (a |-separated list allowed) and a message.
expect_code() {
        local reply code
        reply=$(request "$1" | head -n 1)
        code=$(echo "$reply" | jq -r 'if .ok == false and (.error.message | length) > 0 then .error.code else "not-an-error" end' 2>/dev/null)
        [[ $code =~ ^($2)$ ]] || fail "${1:0:200} -> '${reply:0:300}' (expected $2)"
}

# Every job-id field with a value of the wrong type, naming a real job ($id, done) so that a
# daemon that coerced the value would act on it (forget it, say).
for v in "\"$id\"" -1 "$id.0" "$id.5" 1e400 true false "[$id]" "{\"job\":$id}" '""' null; do
        for op in cancel pause resume forget report verify; do
                expect_code "{\"id\":1,\"op\":\"$op\",\"job\":$v}" EINVAL
        done
done
job_field "$id" state > /dev/null || fail "job $id is gone after the wrong-type requests"

# submit: every field wrong, the rest valid and naming $target.
T="\"devices\":[\"$target\"]"
many=$(printf ',"%s"' $(for _ in $(seq 257); do echo "$target"; done))
for bad in '"devices":"'"$target"'"' '"devices":[]' '"devices":[1]' '"devices":[""]' '"devices":[null]' \
        '"devices":[["'"$target"'"]]' '"devices":{"0":"'"$target"'"}' '"devices":true' '"devices":1' \
        "\"devices\":[${many:1}]"; do
        expect_code "{\"id\":1,\"op\":\"submit\",$bad}" EINVAL
done
# An escaped NUL anywhere (a value, a key) makes the line malformed: a path cut at it is not a path,
# and a key cut at it ("op\u0000x" is "op" to json-c) could stand for another field.
for bad in '"devices":["'"$target"'\u0000x"]' '"devices\u0000x":["'"$target"'"]'; do
        expect_code "{\"id\":1,\"op\":\"submit\",$bad}" EBADMSG
done
expect_code '{"id":1,"op":"list","op\u0000x":"cancel"}' EBADMSG
for bad in '"cipher":1' '"cipher":true' '"cipher":[]' '"cipher":["auto"]' '"cipher":"AES"' '"cipher":""' \
        '"method":1' '"method":true' '"method":["random"]' '"method":""' '"method":{}' \
        '"passes":"random"' '"passes":1' '"passes":[]' '"passes":[1]' '"passes":[""]' '"passes":["random",1]' \
        '"passes":["0x"]' '"passes":["0xZZ"]' '"passes":["0x1"]' '"passes":[null]' \
        "\"passes\":[$(printf '"zero",%.0s' $(seq 64))\"zero\"]" \
        '"method":"zero","passes":["zero"]' \
        '"verify":1' '"verify":true' '"verify":[]' '"verify":"sample=101"' '"verify":"sample=-1"' \
        '"verify":"sample=abc"' '"verify":"sometimes"' '"verify":""' \
        '"seed":"1"' '"seed":-1' '"seed":1.5' '"seed":true' '"seed":[]' '"seed":1,"verify":"none"' \
        '"queue_depth":0' '"queue_depth":257' '"queue_depth":-1' '"queue_depth":"8"' '"queue_depth":1.5' \
        '"queue_depth":1e400' '"queue_depth":18446744073709551615' '"queue_depth":99999999999999999999' \
        '"io_size":0' '"io_size":4097' '"io_size":2048' '"io_size":-4096' '"io_size":"4096"' '"io_size":1e400' \
        '"io_size":1099511627776' '"io_size":18446744073709551615' \
        '"max_rate":-1' '"max_rate":"100M"' '"max_rate":1.5' '"max_rate":true' '"max_rate":[1]' \
        '"devcies":["x"]' '"":1' '"DEVICES":1'; do
        expect_code "{\"id\":1,\"op\":\"submit\",$T,$bad}" EINVAL
done

# The other ops' fields.
for bad in '"jobs":"1"' '"jobs":1' '"jobs":[-1]' '"jobs":["1"]' '"jobs":[1.5]' '"jobs":{}' '"jobs":[[1]]' \
        '"jobs":true' '"jobs":[null]' '"job":1'; do
        expect_code "{\"id\":1,\"op\":\"status\",$bad}" EINVAL
        expect_code "{\"id\":1,\"op\":\"watch\",$bad}" EINVAL
done
expect_code '{"id":1,"op":"status","jobs":[0]}' ESRCH
expect_code '{"id":1,"op":"status","jobs":[18446744073709551615]}' ESRCH
for bad in 0 99 3600001 -1 '"1000"' 1.5 1e400 true '[1000]' 18446744073709551615; do
        expect_code "{\"id\":1,\"op\":\"watch\",\"interval_ms\":$bad}" EINVAL
done
for bad in '"true"' 1 0 '[]' '{}' '""' '[true]'; do
        expect_code "{\"id\":1,\"op\":\"report\",\"job\":$id,\"keys\":$bad}" EINVAL
done
for bad in 1 true '[]' '{}' '["'"$target"'"]'; do
        expect_code "{\"id\":1,\"op\":\"resume\",\"job\":$id,\"device\":$bad}" EINVAL
done
for bad in '"verify":1' '"verify":true' '"verify":"sometimes"' '"verify":"sample=0.5x"' '"seed":"1"' \
        '"seed":-1' '"seed":1.5' '"keys":true'; do
        expect_code "{\"id\":1,\"op\":\"verify\",\"job\":$id,$bad}" EINVAL
done
for bad in '"devices":"'"$target"'"' '"devices":[]' '"devices":[1]' '"devices":[""]' '"devices":{}' \
        '"devices":[null]' "\"devices\":[${many:1}]"; do
        expect_code "{\"id\":1,\"op\":\"probe\",$bad}" EINVAL
done
for op in version list; do
        for bad in '"x":1' '"jobs":[1]' '"":null' '"id ":1'; do
                expect_code "{\"id\":1,\"op\":\"$op\",$bad}" EINVAL
        done
done

# Envelopes and unknown ops.
for env in '"id":18446744073709551616,"op":"version"' '"id":9223372036854775808,"op":"version"' \
        '"id":-9223372036854775808,"op":"version"' '"id":1.0,"op":"version"' '"id":true,"op":"version"' \
        '"id":null,"op":"version"' '"id":1,"op":1' '"id":1,"op":null' '"id":1,"op":["version"]' '"id":1'; do
        expect_code "{$env}" EINVAL
done
expect_code '{"id":1,"op":"version\u0000"}' EBADMSG
for op in rm shutdown "" VERSION "version " " version" "../version" "%s%n%s" "$(head -c 5000 /dev/zero | tr '\0' x)"; do
        expect_code "{\"id\":1,\"op\":\"$op\"}" EOPNOTSUPP
done

# Paths that are not block devices, including a fifo nobody writes (opening it would block).
for p in "$file" /dev/null /dev/zero "$dir" "$fifo" "$TEST_DIR/null-link" /proc/self/fd/0; do
        code=ENOTBLK
        [ "$p" = "$dir" ] && code='ENOTBLK|EISDIR'
        expect_code "{\"id\":1,\"op\":\"submit\",\"devices\":[\"$p\"],\"verify\":\"none\"}" "$code"
        reply=$(request "{\"id\":1,\"op\":\"probe\",\"devices\":[\"$p\"]}")
        [[ $(echo "$reply" | jq -r '"\(.ok) \(.devices[0].wipeable) \(.devices[0].refusal.code)"') =~ ^true\ false\ ($code)$ ]] ||
                fail "probe of $p: ${reply:0:300}"
done
for p in /nonexistent "$TEST_DIR/no-such-file" "relative/loop0" "$(head -c 5000 /dev/zero | tr '\0' a)" "$target/x"; do
        expect_code "{\"id\":1,\"op\":\"submit\",\"devices\":[\"$p\"],\"verify\":\"none\"}" 'E[A-Z]+'
done
# A valid device next to an invalid one: nothing is submitted.
expect_code "{\"id\":1,\"op\":\"submit\",\"devices\":[\"$target\",\"$file\"],\"verify\":\"none\"}" ENOTBLK
expect_code "{\"id\":1,\"op\":\"submit\",\"devices\":[\"$target\",\"$target\"],\"verify\":\"none\"}" 'E[A-Z]+'
wipectl version > /dev/null || fail "the daemon does not answer after the fifo"

# A seeded random stream of hostile lines on 4 connections: one error reply each, within a second;
# a line over 64 KiB gets EMSGSIZE.
seed=${HAMMER_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
note "garbage seed $seed (HAMMER_SEED=$seed repeats it)"
out=$(hammer --garbage "$seed" --count 3000 --conns 4 --log "$TEST_DIR/garbage.log" \
        --path "$file" --path /dev/null --path "$dir" --path "$fifo" --path /nonexistent 2> "$TEST_DIR/garbage.err")
rc=$?
[ $rc = 0 ] || fail "garbage (seed $seed): $out; $(head -n 20 "$TEST_DIR/garbage.err")"
note "garbage: $out"
jq -e -s 'all(.[]; .ok == false and (.error.code | test("^E[A-Z0-9]+$")) and (.error.message | length > 0))' \
        "$TEST_DIR/garbage.log" > /dev/null || fail "garbage (seed $seed): a reply that is not a clear error in $(head -c 2000 "$TEST_DIR/garbage.log")"
[ "$(field bad "$out")" = 0 ] && [ "$(field overlong "$out")" -gt 0 ] || fail "garbage: $out"

daemon_alive || fail "the daemon died of the hostile requests"
wipectl version > /dev/null || fail "the daemon does not answer after the hostile requests"
[ "$(wipectl --json list | jq '.jobs | length')" = 1 ] || fail "a hostile request made a job: $(wipectl --json list)"
[ "$(dev_sha256 "$target")" = "$target_sum" ] || fail "$target was written by a hostile request"
fds_settle "$fds0" "after the hostile requests"

# --- 50 watchers vanishing mid-watch of a running job -----------------------------------------
out=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 1M "$slowdev") || fail "slow wipe exited $?: $out"
sid=$(echo "$out" | jq -r '.jobs[0].id')
wait_bytes "$sid" 1 10 || fail "job $sid does not progress"
out=$(hammer --watch-vanish 50 --job "$sid" --for 3 --seed "$seed" 2> "$TEST_DIR/vanish.err") ||
        fail "50 vanishing watchers: $out; $(head -n 5 "$TEST_DIR/vanish.err")"
note "vanishing watchers: $out"
[ "$(field replied "$out")" = 50 ] || fail "50 vanishing watchers: $out"
daemon_alive || fail "the daemon died of vanishing watchers"
[ "$(job_field "$sid" state)" = running ] || fail "job $sid is $(job_field "$sid" state) after the watchers vanished"
out=$(hammer --watch-vanish 20 --for 0 --seed $((seed + 1)) 2> "$TEST_DIR/vanish.err") ||
        fail "20 watchers of everything vanishing at once: $out"
fds_settle "$fds0" "after the watchers vanished"

# --- client timeout: slow, silent and trickling clients go; a quiet watcher stays -------------
hammer --slow --max-wait 10 > "$TEST_DIR/slow.out" 2>&1 &
p1=$!
hammer --silent --max-wait 10 > "$TEST_DIR/silent.out" 2>&1 &
p2=$!
hammer --trickle --max-wait 10 > "$TEST_DIR/trickle.out" 2>&1 &
p3=$!
hammer --idle-watch "$sid" --max-wait $((TIMEOUT * 3)) > "$TEST_DIR/idle.out" 2>&1 &
p4=$!
for p in $p1 $p2 $p3 $p4; do register_pid "$p"; done
wait $p1; wait $p2; wait $p3; wait $p4
for kind in slow silent trickle; do
        out=$(cat "$TEST_DIR/$kind.out")
        t=$(field closed_after "$out")
        [[ $t =~ ^[0-9.]+$ ]] || fail "a $kind client was not disconnected within 10 s (--client-timeout $TIMEOUT): $out"
        awk -v t="$t" 'BEGIN { exit !(t >= 1.5 && t <= 10) }' || fail "a $kind client was disconnected after $t s (--client-timeout $TIMEOUT)"
        note "$kind client disconnected after $t s"
done
[ "$(job_field "$sid" state)" = running ] || hard_error "job $sid ended before the idle watcher's check: make it slower"
out=$(cat "$TEST_DIR/idle.out")
[ "$(field alive "$out")" = 1 ] || fail "a quiet watcher was disconnected: $out"

wipectl cancel "$sid" > /dev/null || fail "cancel $sid exited $?"
[ "$(wait_job "$sid" 10)" = cancelled ] || fail "job $sid did not end cancelled"
daemon_alive || fail "daemon died"
[ "$(dev_sha256 "$target")" = "$target_sum" ] || fail "$target was written"
stop_daemon || fail "daemon exit status $?"
pass
