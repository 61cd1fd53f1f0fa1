#!/bin/bash
# wipectl --json always prints exactly one JSON object on stdout, errors included
# ({"format_version":N,"error":{"message","errno","exit_status"}}), and every JSON document carries
# "format_version": with the daemon down (exit 3), for a usage error (2), a refused device (5),
# an unknown job (1). cancel, pause and resume take several jobs and print the state each reached.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

FORMAT=2

# one_doc WHAT WANT_RC ARG...: run wipectl --json ARG... with $SOCKET; fail unless it exits
# WANT_RC and prints exactly one JSON object with format_version; prints the object.
one_doc() {
        local what=$1 want=$2 out rc
        shift 2
        out=$(timeout 120 "$WIPECTL_BIN" --socket "$SOCKET" "$@" 2> "$TEST_DIR/err" < /dev/null)
        rc=$?
        [ "$rc" = "$want" ] || fail "$what: wipectl $* exited $rc, expected $want: $(cat "$TEST_DIR/err") $out"
        [ "$(echo "$out" | jq -s 'length' 2>/dev/null)" = 1 ] || fail "$what: not one JSON document: $out"
        [ "$(echo "$out" | jq -r 'type')" = object ] || fail "$what: not a JSON object: $out"
        echo "$out" | jq -e ".format_version == $FORMAT" > /dev/null || fail "$what: no format_version $FORMAT: $out"
        echo "$out"
}

# error_doc WHAT RC ERRNO ARG...: one_doc, whose error has exit_status RC and errno ERRNO ("null":
# none), and whose message is the one printed on stderr too.
error_doc() {
        local what=$1 rc=$2 errno=$3 out msg
        shift 3
        out=$(one_doc "$what" "$rc" "$@") || exit 1
        jq_is "$out" '.error.exit_status' "$rc" "$what"
        jq_is "$out" '.error.errno' "$errno" "$what"
        msg=$(echo "$out" | jq -r '.error.message')
        [ -n "$msg" ] && [ "$msg" != null ] || fail "$what: no error message: $out"
        grep -qF "wipectl: $msg" "$TEST_DIR/err" || fail "$what: stderr does not say '$msg': $(cat "$TEST_DIR/err")"
        echo "$out"
}

a=$(make_loop 64M)
rofile=$TEST_DIR/ro.img
truncate -s 16M "$rofile" || hard_error "cannot create $rofile"
ro=$(make_loop_file "$rofile" -r)
slow1=$(make_loop 1G)
slow2=$(make_loop 1G)
slow3=$(make_loop 1G)

# --- The daemon down: every command prints the error as JSON, exit 3. ---
SOCKET=$TEST_DIR/none.sock
for args in "status" "status 1" "list" "list --all" "cancel 1" "cancel 1 2" "pause 1" "resume 1" "forget 1" \
        "report 1" "version" "wait" "wait 1" "watch" "watch 1" "probe $a" "verify 1" "devices" \
        "wipe --yes $a" "wipe --yes --no-wait $a" "wipe --dry-run $a"; do
        # shellcheck disable=SC2086
        out=$(error_doc "$args, daemon down" 3 ENOENT --json $args) || exit 1
        # shellcheck disable=SC2086
        out2=$(one_doc "$args -J, daemon down" 3 $args -J) || exit 1
        [ "$out" = "$out2" ] || fail "$args: -J after the command differs from --json before it: $out2"
done
# version still tells its own version.
out=$(one_doc "version, daemon down" 3 --json version)
jq_is "$out" '.client | type' string "version, daemon down"
# wipectl --json status | jq: never "no jobs" when the daemon is down.
jq_is "$("$WIPECTL_BIN" --socket "$SOCKET" --json status 2>/dev/null)" '.jobs' null "status, daemon down"

# --- Usage errors: exit 2, errno null, before or after the command name. ---
SOCKET=$TEST_DIR/none.sock
error_doc "unknown option" 2 null --json status --nope > /dev/null
error_doc "unknown option before -J" 2 null status --nope -J > /dev/null
error_doc "unknown global option" 2 null --nope --json status > /dev/null
error_doc "unknown command" 2 null -J nosuch > /dev/null
error_doc "no command" 2 null -J > /dev/null
error_doc "not a job id" 2 null -J cancel 1 x > /dev/null
error_doc "help of no command" 2 null -J help nosuch > /dev/null
error_doc "wipe without --yes" 2 null -J wipe "$a" > /dev/null

start_daemon --threads 2
SOCKET=$SOCK

# --- Every command's JSON carries format_version. ---
one_doc version 0 --json version > /dev/null
one_doc methods 0 methods --json > /dev/null
one_doc probe 0 -J probe "$a" > /dev/null
id=$(one_doc "wipe --no-wait" 0 -J wipe --yes --no-wait --verify none "$a" | jq -r '.jobs[0].id')
one_doc wait 0 -J wait "$id" > /dev/null
one_doc status 0 -J status > /dev/null
one_doc list 0 -J list > /dev/null
# A signed report is printed as the daemon signed it (report --check passes on it): no
# format_version there.
out=$(timeout 60 "$WIPECTL_BIN" --socket "$SOCK" -J report "$id") || fail "report --json exited $?"
jq_is "$out" 'has("signature") or .format_version == '"$FORMAT" true "report"
"$WIPECTL_BIN" --socket "$SOCK" -J report "$id" > "$TEST_DIR/report.json"
one_doc "report --check" 0 -J report --check "$TEST_DIR/report.json" > /dev/null
one_doc "verify" 0 -J verify --verify last "$id" > /dev/null
one_doc "wipe" 0 -J wipe --yes --verify none "$a" > /dev/null
# watch --json: one event per line, each with the format version.
timeout 120 "$WIPECTL_BIN" --socket "$SOCK" --json watch "$id" > "$TEST_DIR/watch.out" 2> "$TEST_DIR/err" ||
        fail "watch --json of an ended job exited $?: $(cat "$TEST_DIR/err")"
jq -s -e "length >= 1 and all(.[]; .format_version == $FORMAT and (.event | type) == \"string\")" \
        "$TEST_DIR/watch.out" > /dev/null || fail "watch --json: events without format_version: $(cat "$TEST_DIR/watch.out")"

# --- An unknown job: exit 1, ESRCH. ---
error_doc "status of an unknown job" 1 ESRCH --json status 999999 > /dev/null
error_doc "cancel of an unknown job" 1 ESRCH --json cancel 999999 > /dev/null
error_doc "report of an unknown job" 1 ESRCH -J report 999999 > /dev/null
error_doc "wait for an unknown job" 1 ESRCH -J wait 999999 > /dev/null
# One job known, one not: the jobs that were reached, and the error.
out=$(one_doc "forget JOB 999999" 1 -J forget "$id" 999999)
jq_is "$out" '.forgotten | map(tostring) | join(",")' "$id" "forget JOB 999999"
jq_is "$out" '.error.errno' ESRCH "forget JOB 999999"
jq_is "$out" '.error.exit_status' 1 "forget JOB 999999"

# --- A refusal: exit 5, the daemon's errno, the refusal as the message. ---
out=$(error_doc "wipe of a read-only device" 5 EROFS -J wipe --yes "$ro")
jq_is "$out" '.error.message | contains("'"$ro"'")' true "wipe of a read-only device"
# probe answers with the refusal in its object, and the same exit status.
out=$(one_doc "probe of a read-only device" 5 -J probe "$ro")
jq_is "$out" '.devices[0].wipeable' false "probe of a read-only device"

# --- cancel, pause, resume of several jobs: the states they reached. ---
ids=()
for d in "$slow1" "$slow2" "$slow3"; do
        ids+=("$(one_doc "wipe --no-wait $d" 0 -J wipe --yes --no-wait --verify none --max-rate 8M "$d" | jq -r '.jobs[0].id')")
done
for i in "${ids[@]}"; do wait_bytes "$i" 1 || fail "job $i wrote nothing"; done
out=$(one_doc "pause two jobs" 0 -J pause "${ids[0]}" "${ids[1]}")
jq_is "$out" '[.jobs[] | "\(.id):\(.state)"] | join(",")' "${ids[0]}:paused,${ids[1]}:paused" "pause two jobs"
# Text: the state reached too.
out=$("$WIPECTL_BIN" --socket "$SOCK" resume "${ids[0]}" "${ids[1]}") || fail "resume two jobs exited $?"
[ "$(echo "$out" | grep -cw running)" = 2 ] || fail "resume of two jobs does not show them running: $out"
echo "$out" | grep -qw paused && fail "resume shows a job paused: $out"
# Cancel a paused one, a running one, and an unknown one: the two cancelled, and the error.
one_doc "pause" 0 -J pause "${ids[2]}" > /dev/null
out=$(one_doc "cancel three jobs" 1 -J cancel "${ids[2]}" "${ids[0]}" 999999)
jq_is "$out" '[.jobs[] | "\(.id):\(.state)"] | join(",")' "${ids[2]}:cancelled,${ids[0]}:cancelled" "cancel three jobs"
jq_is "$out" 'has("job")' false "cancel of several jobs"
jq_is "$out" '.error.errno' ESRCH "cancel three jobs"
# One job in text: "job N: DEVICE: cancelled (...)"; in JSON also "job" (kept for one release).
out=$("$WIPECTL_BIN" --socket "$SOCK" cancel "${ids[1]}") || fail "cancel ${ids[1]} exited $?"
echo "$out" | grep -q "^job ${ids[1]}: $slow2: cancelled" || fail "cancel in text: $out"
for i in "${ids[@]}"; do
        jq_is "$(wipectl --json status "$i")" '.jobs[0].state' cancelled "job $i after cancel"
done
out=$(one_doc "cancel of a cancelled job" 1 -J cancel "${ids[1]}")
jq_is "$out" '.error.errno' EALREADY "cancel of a cancelled job"

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
