#!/bin/bash
# wipectl's command line: global options before or after the command (--json, -J, --bytes,
# --socket, -q), a command's options after its operands, "--" ends the options, the short forms
# (-J, -V, -q, -y), "wipectl help [CMD]", and usage errors (exit 2).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

a=$(make_loop 64M)
start_daemon

nosock=$TEST_DIR/none.sock

# expect_rc WANT WHAT CMD...: run CMD, fail unless it exits WANT; its stdout in $out.
expect_rc() {
        local want=$1 what=$2 rc
        shift 2
        out=$("$@" 2> "$TEST_DIR/err")
        rc=$?
        [ "$rc" = "$want" ] || fail "$what: exited $rc, expected $want: $(cat "$TEST_DIR/err") $out"
}

# --- help, version ---
expect_rc 0 "help" "$WIPECTL_BIN" help
main_help=$out
echo "$main_help" | grep -q '^Usage: wipectl' || fail "help: $main_help"
[ "$("$WIPECTL_BIN" --help)" = "$main_help" ] || fail "help differs from --help"
[ "$("$WIPECTL_BIN" -h)" = "$main_help" ] || fail "help differs from -h"
for opt in -J -q -V --socket --bytes; do
        echo "$main_help" | grep -q -- "$opt" || fail "--help does not list $opt"
done
for cmd in status list cancel pause resume forget wait watch wipe verify report probe methods version; do
        expect_rc 0 "help $cmd" "$WIPECTL_BIN" help "$cmd"
        [ "$out" = "$("$WIPECTL_BIN" "$cmd" --help)" ] || fail "help $cmd differs from $cmd --help"
        [ "$out" = "$("$WIPECTL_BIN" --socket "$nosock" "$cmd" -h)" ] || fail "help $cmd differs from $cmd -h"
        echo "$out" | head -n 1 | grep -q "^Usage: wipectl $cmd" || fail "help $cmd: $out"
        echo "$out" | grep -q -- '-J, --json' || fail "help $cmd does not list -J"
done
expect_rc 2 "help nosuch" "$WIPECTL_BIN" help nosuch
grep -q 'nosuch: unknown command' "$TEST_DIR/err" || fail "help nosuch: $(cat "$TEST_DIR/err")"
v=$("$WIPECTL_BIN" -V) || fail "-V exited $?"
[ "$v" = "$("$WIPECTL_BIN" --version)" ] || fail "-V differs from --version"
echo "$v" | grep -q '^wipectl ' || fail "-V: $v"

# --- global options after the command, -J as --json ---
ref=$(wipectl --json status | jq -S 'del(.daemon)') || fail "--json status"
for args in "status --json" "status -J" "-J status"; do
        # shellcheck disable=SC2086
        got=$(wipectl $args | jq -S 'del(.daemon)') || fail "$args exited"
        [ "$got" = "$ref" ] || fail "$args differs from --json status: $got"
done
# --socket after the command, also as --socket=PATH.
expect_rc 0 "status --socket" "$WIPECTL_BIN" --socket "$nosock" status --socket "$SOCK"
expect_rc 0 "status --socket=" "$WIPECTL_BIN" status --socket="$SOCK"
expect_rc 3 "--socket last wins" "$WIPECTL_BIN" --socket "$SOCK" status --socket "$nosock"

# wipe: --yes, -y, --json after the device; report --bytes after the job.
w=$(wipectl wipe "$a" --no-wait --verify none -y --json) || fail "wipe DEVICE ... -y --json exited $?"
id=$(echo "$w" | jq -r '.jobs[0].id')
[ "$(echo "$w" | jq -r '.jobs[0].device')" = "$a" ] || fail "wipe with options after the device: $w"
expect_rc 0 "wait JOB -J" "$WIPECTL_BIN" --socket "$SOCK" wait "$id" -J
[ "$(echo "$out" | jq -r '.jobs[0].state')" = done ] || fail "wait JOB -J: $out"
expect_rc 0 "report JOB --bytes" "$WIPECTL_BIN" --socket "$SOCK" report "$id" --bytes
echo "$out" | grep -q 67108864 || fail "report JOB --bytes shows no byte count: $out"
echo "$out" | grep -q '64.0 MiB' && fail "report JOB --bytes still shows IEC units: $out"
expect_rc 0 "status JOB --json --bytes" "$WIPECTL_BIN" --socket "$SOCK" status "$id" --json --bytes
[ "$(echo "$out" | jq -r '.jobs[0].id')" = "$id" ] || fail "status JOB --json: $out"
expect_rc 0 "list --all -J" "$WIPECTL_BIN" --socket "$SOCK" list -J --all
echo "$out" | jq -e ".jobs | map(.id) | index($id) != null" > /dev/null || fail "list -J --all: $out"

# A second wipe with --yes after the device, waiting, quiet: nothing on stdout, exit 0.
expect_rc 0 "wipe -q" "$WIPECTL_BIN" --socket "$SOCK" wipe "$a" --verify none --yes -q
[ -z "$out" ] || fail "wipe -q printed on stdout: $out"
expect_rc 0 "-q wait" "$WIPECTL_BIN" --socket "$SOCK" -q wait "$id"
[ -z "$out" ] || fail "-q wait printed: $out"
expect_rc 0 "status -q" "$WIPECTL_BIN" --socket "$SOCK" status -q "$id"
[ -z "$out" ] || fail "status -q printed: $out"
# -q still says what went wrong, on stderr, and the exit status.
expect_rc 1 "status -q unknown" "$WIPECTL_BIN" --socket "$SOCK" status -q 999999
[ -z "$out" ] || fail "status -q 999999 printed on stdout: $out"
grep -q 'job 999999: no such job' "$TEST_DIR/err" || fail "status -q 999999: $(cat "$TEST_DIR/err")"
# -q with --json: the one JSON object still.
expect_rc 0 "status -q -J" "$WIPECTL_BIN" --socket "$SOCK" status -q -J "$id"
[ "$(echo "$out" | jq -r '.jobs[0].id')" = "$id" ] || fail "status -q -J: $out"

# --- "--" ends the options: what follows is an operand, even "--json". ---
expect_rc 2 "status -- --json" "$WIPECTL_BIN" --socket "$SOCK" status -- --json
grep -q 'status: --json: not a job id' "$TEST_DIR/err" || fail "status -- --json: $(cat "$TEST_DIR/err")"
[ -z "$out" ] || fail "status -- --json printed JSON: $out"
expect_rc 0 "status -- JOB" "$WIPECTL_BIN" --socket "$SOCK" status --json -- "$id"
[ "$(echo "$out" | jq -r '.jobs[0].id')" = "$id" ] || fail "status --json -- JOB: $out"
expect_rc 2 "wipe -- -y" "$WIPECTL_BIN" --socket "$SOCK" wipe --no-wait -- -y
[ -z "$out" ] || fail "wipe -- -y printed: $out"

# --- usage errors: exit 2, the command named, a hint ---
expect_rc 2 "unknown option after the command" "$WIPECTL_BIN" --socket "$SOCK" status --nope
grep -q "^wipectl: status: unknown option '--nope'" "$TEST_DIR/err" || fail "status --nope: $(cat "$TEST_DIR/err")"
grep -q "^Try 'wipectl status --help'" "$TEST_DIR/err" || fail "status --nope: no hint: $(cat "$TEST_DIR/err")"
expect_rc 2 "unknown short option" "$WIPECTL_BIN" --socket "$SOCK" list -x
grep -q "unknown option '-x'" "$TEST_DIR/err" || fail "list -x: $(cat "$TEST_DIR/err")"
expect_rc 2 "--socket without a path" "$WIPECTL_BIN" status --socket
grep -q "option '--socket' needs an argument" "$TEST_DIR/err" || fail "status --socket: $(cat "$TEST_DIR/err")"
expect_rc 2 "empty --socket" "$WIPECTL_BIN" status --socket ""
grep -q -- "--socket: empty path" "$TEST_DIR/err" || fail "status --socket '': $(cat "$TEST_DIR/err")"
expect_rc 2 "unknown command" "$WIPECTL_BIN" --socket "$SOCK" nosuch
expect_rc 2 "no command" "$WIPECTL_BIN" --socket "$SOCK"
expect_rc 2 "cancel without a job" "$WIPECTL_BIN" --socket "$SOCK" cancel
# The options of every wait, on each command that waits: a bad value is a usage error.
expect_rc 2 "wait --reconnect-timeout abc" "$WIPECTL_BIN" --socket "$SOCK" wait --reconnect-timeout abc 1
grep -q "wait: bad reconnect timeout 'abc'" "$TEST_DIR/err" || fail "wait --reconnect-timeout abc: $(cat "$TEST_DIR/err")"
expect_rc 2 "wipe --progress-interval 0" "$WIPECTL_BIN" --socket "$SOCK" wipe --progress-interval 0 --yes "$a"
expect_rc 2 "verify --reconnect-timeout -1" "$WIPECTL_BIN" --socket "$SOCK" verify --reconnect-timeout -1 1
expect_rc 2 "status --reconnect-timeout 5 (not a wait)" "$WIPECTL_BIN" --socket "$SOCK" status --reconnect-timeout 5
# -V and --version go anywhere too: the version, nothing of the command.
for args in "status -V" "wipe --version $a" "report 1 -V --json"; do
        # shellcheck disable=SC2086
        out=$("$WIPECTL_BIN" --socket "$SOCK" $args) || fail "$args exited $?"
        [ "$out" = "$v" ] || fail "$args printed: $out"
done
expect_rc 2 "wipe without --yes off a terminal" "$WIPECTL_BIN" --socket "$SOCK" wipe "$a" < /dev/null

# A record value the daemon refuses (a note over 1024 bytes): EINVAL to a wipe, status 5, as
# wipectl(1) says, naming the field.
jobs_before=$("$WIPECTL_BIN" --socket "$SOCK" --json list | jq '.jobs | length')
expect_rc 5 "wipe --note of 1025 bytes" "$WIPECTL_BIN" --socket "$SOCK" wipe --yes --note "$(head -c 1025 /dev/zero | tr '\0' n)" "$a"
grep -q '"note"' "$TEST_DIR/err" || fail "wipe --note of 1025 bytes: $(cat "$TEST_DIR/err")"
[ "$("$WIPECTL_BIN" --socket "$SOCK" --json list | jq '.jobs | length')" = "$jobs_before" ] || fail "a refused --note made a job"
# A dry run shows the record the job would carry, but no batch id: the submit draws another.
"$WIPECTL_BIN" --socket "$SOCK" wipe --dry-run --asset-tag DRY --passes zero "$a" > "$TEST_DIR/out" 2> "$TEST_DIR/err" ||
        fail "wipe --dry-run --asset-tag exited $?: $(cat "$TEST_DIR/err")"
grep -qE '^    Asset tag: +DRY$' "$TEST_DIR/out" || fail "wipe --dry-run shows no asset tag: $(cat "$TEST_DIR/out")"
grep -q 'Batch:' "$TEST_DIR/out" && fail "wipe --dry-run shows a batch id no job will have: $(cat "$TEST_DIR/out")"
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
