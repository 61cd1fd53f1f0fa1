#!/bin/bash
# wipectl wait (and the waiting of wipectl wipe and watch): exit 0 when every job is done, 6 when
# one failed, else 7 when one was cancelled, 3 when the daemon is not running or the connection is
# lost (naming the socket), 130 on Ctrl-C (the jobs keep running); a line per job at the end;
# an unknown job is an error naming it.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

# wctl SECONDS ARG...: wipectl on the test's daemon, killed after SECONDS (exit 124).
wctl() { timeout "$1" "$WIPECTL_BIN" --socket "$SOCK" "${@:2}"; }

# expect_rc CODE SECONDS ARG...: wctl, failing unless it exits CODE; output in $TEST_DIR/out, err.
expect_rc() {
        local want=$1 rc
        wctl "${@:2}" > "$TEST_DIR/out" 2> "$TEST_DIR/err"
        rc=$?
        [ $rc = "$want" ] || fail "'wipectl ${*:3}' exited $rc, expected $want
--- stdout ---
$(cat "$TEST_DIR/out")
--- stderr ---
$(cat "$TEST_DIR/err")"
}

# submit ARG...: wipe --no-wait; prints the job ids, one a line.
submit() {
        local out
        out=$(wipectl --json wipe --yes --no-wait "$@") || fail "wipe --no-wait $* exited $?: $out"
        echo "$out" | jq -r '.jobs[].id'
}

# wait_running ID: until the job has written something.
wait_running() {
        for _ in $(seq 100); do
                [ "$(job_field "$1" bytes_done)" -gt 0 ] && return 0
                sleep 0.05
        done
        fail "job $1 did not start: $(job_field "$1" state)"
}

# connected PID: the wipectl that the background wctl PID runs (PID itself, its child timeout or
# that one's child) holds a connected Unix socket: it has reached the daemon and waits.
# shellcheck disable=SC2317  # called through wait_until
connected() {
        local pids p fd link
        pids=$(pgrep -P "$1")
        pids="$1 $pids $(for p in $pids; do pgrep -P "$p"; done)"
        for p in $pids; do
                for fd in /proc/"$p"/fd/*; do
                        link=$(readlink "$fd" 2>/dev/null) || continue
                        [[ $link =~ ^socket:\[([0-9]+)\]$ ]] || continue
                        # /proc/net/unix: ... St Inode [Path]; St 03 is connected.
                        awk -v ino="${BASH_REMATCH[1]}" '$6 == "03" && $7 == ino { found = 1 } END { exit !found }' \
                                /proc/net/unix && return 0
                done
        done
        return 1
}

a=$(make_loop 64M)
b=$(make_loop 64M)
slow=$(make_loop 1G)
slow2=$(make_loop 1G)
thin=$(make_thin_loop 64M 8M) || exit $?
thin2=$(make_thin_loop 64M 8M) || exit $?
start_daemon --threads 2

# --- Nothing to wait for: 0 at once. ---
expect_rc 0 10 wait

# --- All done: 0, one line per job "job ID: DEVICE: done". ---
mapfile -t ids < <(submit --verify none --max-rate 32M "$a" "$b")
expect_rc 0 30 wait "${ids[@]}"
grep -qx "job ${ids[0]}: $a: done" "$TEST_DIR/out" || fail "no line 'job ${ids[0]}: $a: done': $(cat "$TEST_DIR/out")"
grep -qx "job ${ids[1]}: $b: done" "$TEST_DIR/out" || fail "no line 'job ${ids[1]}: $b: done': $(cat "$TEST_DIR/out")"
done_id=${ids[0]}

# Without JOB: every job that had not ended (again two, about 2 s), not the ones that had.
mapfile -t ids < <(submit --verify none --max-rate 32M "$a" "$b")
expect_rc 0 30 wait
grep -qx "job ${ids[0]}: $a: done" "$TEST_DIR/out" && grep -qx "job ${ids[1]}: $b: done" "$TEST_DIR/out" ||
        fail "wait without JOB: $(cat "$TEST_DIR/out")"
grep -q "job $done_id:" "$TEST_DIR/out" && fail "wait without JOB waited for job $done_id, which had ended: $(cat "$TEST_DIR/out")"
for id in "${ids[@]}"; do [ "$(job_field "$id" state)" = done ] || fail "job $id not done after wait"; done

# --json: {"jobs":[JOB...]}, their final state.
mapfile -t ids < <(submit --verify none --max-rate 32M "$a")
expect_rc 0 30 --json wait "${ids[0]}"
js=$(cat "$TEST_DIR/out")
jq_is "$js" '.jobs | length' 1 "--json wait"
jq_is "$js" '.jobs[0].id' "${ids[0]}" "--json wait"
jq_is "$js" '.jobs[0].state' done "--json wait"
jq_is "$js" '.jobs[0].device' "$a" "--json wait"

# --- A failed job (its device full mid-wipe): 6; also when the others are done. ---
fail_id=$(submit --verify none "$thin")
expect_rc 6 60 wait "$fail_id"
grep -q "job $fail_id: $thin: failed" "$TEST_DIR/out" || fail "no line 'job $fail_id: $thin: failed': $(cat "$TEST_DIR/out")"
expect_rc 6 10 wait "$done_id" "$fail_id"
expect_rc 6 10 --json wait "$fail_id"
jq_is "$(cat "$TEST_DIR/out")" '.jobs[0].state' failed "--json wait of a failed job"
jq_is "$(cat "$TEST_DIR/out")" '.jobs[0].error.code | type' string "--json wait of a failed job"

# --- A job cancelled while waited for: 7. ---
cancel_id=$(submit --verify none --max-rate 50M "$slow")
wait_running "$cancel_id"
wctl 60 wait "$cancel_id" > "$TEST_DIR/wait.out" 2> "$TEST_DIR/wait.err" &
wpid=$!
wait_until 30 "wipectl wait $cancel_id connected to the daemon" connected "$wpid"
wipectl cancel "$cancel_id" > /dev/null || fail "cancel of job $cancel_id exited $?"
wait $wpid
rc=$?
[ $rc = 7 ] || fail "wait for a job cancelled meanwhile exited $rc, expected 7: $(cat "$TEST_DIR/wait.out" "$TEST_DIR/wait.err")"
grep -q "job $cancel_id: $slow: cancelled" "$TEST_DIR/wait.out" ||
        fail "no line 'job $cancel_id: $slow: cancelled': $(cat "$TEST_DIR/wait.out")"
# Which wins: failed over cancelled, cancelled over done.
expect_rc 7 10 wait "$done_id" "$cancel_id"
expect_rc 6 10 wait "$cancel_id" "$fail_id"
expect_rc 6 10 wait "$done_id" "$cancel_id" "$fail_id"

# --- watch ends with the same rule. ---
expect_rc 0 10 watch "$done_id"
expect_rc 6 10 watch "$fail_id"
expect_rc 7 10 watch "$cancel_id"
expect_rc 6 10 watch "$cancel_id" "$fail_id"

# --- wipectl wipe (waiting): the same codes for its jobs. ---
expect_rc 0 60 wipe --yes --verify none "$a"
expect_rc 6 60 wipe --yes --verify none "$thin2"
grep -q "$thin2" "$TEST_DIR/err" || fail "wipe of a failing device: its error does not name $thin2: $(cat "$TEST_DIR/err")"
# A mismatch found by the verification fails the job too: the wipe's device changed under it
# would be racy, so a verify of a done job whose device was overwritten since.
id=$(wipectl --json wipe --yes --verify none "$b" | jq -r '.jobs[0].id') || fail "wipe of $b failed"
dd if=/dev/zero of="$b" bs=1M count=1 seek=10 oflag=direct conv=notrunc status=none || hard_error "dd $b"
expect_rc 6 60 verify --verify all "$id"
grep -q "$b" "$TEST_DIR/err" || fail "verify with a mismatch: the error does not name $b: $(cat "$TEST_DIR/err")"

# --- Unknown job: an error naming it (exit 1, as status). ---
expect_rc 1 10 wait 999999
grep -q "job 999999" "$TEST_DIR/err" || fail "wait 999999: the error does not name the job: $(cat "$TEST_DIR/err")"
grep -q "no such job" "$TEST_DIR/err" || fail "wait 999999: $(cat "$TEST_DIR/err")"
expect_rc 1 10 wait "$done_id" 888888
grep -q "job 888888" "$TEST_DIR/err" || fail "wait $done_id 888888: the error does not name the job: $(cat "$TEST_DIR/err")"
expect_rc 1 10 watch 999999
grep -q "job 999999" "$TEST_DIR/err" || fail "watch 999999: the error does not name the job: $(cat "$TEST_DIR/err")"
# Not a job id at all: a usage error.
expect_rc 2 10 wait abc

# --- Ctrl-C (SIGINT) while waiting: 130, the job keeps running. ---
int_id=$(submit --verify none --max-rate 50M "$slow")
wait_running "$int_id"
timeout --preserve-status -s INT 2 "$WIPECTL_BIN" --socket "$SOCK" wait "$int_id" > "$TEST_DIR/out" 2> "$TEST_DIR/err"
rc=$?
[ $rc = 130 ] || fail "wait interrupted by SIGINT exited $rc, expected 130: $(cat "$TEST_DIR/err")"
# (Killed by the signal would be 130 too: the message tells that wipectl detached.)
grep -q "detached" "$TEST_DIR/err" || fail "wait on SIGINT did not say it detached: $(cat "$TEST_DIR/err")"
[ "$(job_field "$int_id" state)" = running ] || fail "job $int_id after detaching: $(job_field "$int_id" state)"

# --- The daemon stops while a wait that does not reconnect runs (--reconnect-timeout 0; the
# waits that reconnect are follow-restart.sh's): the job ends interrupted; the wait exits 8 if it
# saw that, or 3 (connection lost). Killed: 3. ---
wctl 60 wait --reconnect-timeout 0 "$int_id" > "$TEST_DIR/wait.out" 2> "$TEST_DIR/wait.err" &
wpid=$!
wait_until 30 "wipectl wait $int_id connected to the daemon" connected "$wpid"
stop_daemon || fail "daemon exit status $?"
wait $wpid
rc=$?
case $rc in
8) note "wait when the daemon stopped: 8 (interrupted)" ;;
3) note "wait when the daemon stopped: 3 (connection lost; the daemon sent no interrupted event): $(cat "$TEST_DIR/wait.err")" ;;
*) fail "wait when the daemon stopped exited $rc, expected 8 or 3: $(cat "$TEST_DIR/wait.out" "$TEST_DIR/wait.err")" ;;
esac

start_daemon --threads 2
kill_id=$(submit --verify none --max-rate 50M "$slow2")
wait_running "$kill_id"
wctl 60 wait --reconnect-timeout 0 "$kill_id" > "$TEST_DIR/wait.out" 2> "$TEST_DIR/wait.err" &
wpid=$!
wait_until 30 "wipectl wait $kill_id connected to the daemon" connected "$wpid"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
wait $wpid
rc=$?
[ $rc = 3 ] || fail "wait when the daemon was killed exited $rc, expected 3: $(cat "$TEST_DIR/wait.out" "$TEST_DIR/wait.err")"
[ -s "$TEST_DIR/wait.err" ] || fail "wait when the daemon was killed: nothing on stderr"
rm -f "$SOCK"

# --- The daemon not running: 3, "wipectl: PATH: cannot connect to wiped: ...". ---
expect_rc 3 10 wait
grep -q "^wipectl: $SOCK: cannot connect to wiped" "$TEST_DIR/err" || fail "wait without a daemon: $(cat "$TEST_DIR/err")"
expect_rc 3 10 wait 1
grep -q "^wipectl: $SOCK: cannot connect to wiped" "$TEST_DIR/err" || fail "wait 1 without a daemon: $(cat "$TEST_DIR/err")"
expect_rc 3 10 watch
grep -q "^wipectl: $SOCK: cannot connect to wiped" "$TEST_DIR/err" || fail "watch without a daemon: $(cat "$TEST_DIR/err")"
nothing=$TEST_DIR/nothing.sock
out=$(WIPED_SOCKET=$nothing timeout 10 "$WIPECTL_BIN" wait 2>&1)
rc=$?
[ $rc = 3 ] || fail "wait with WIPED_SOCKET=$nothing exited $rc: $out"
echo "$out" | grep -q "^wipectl: $nothing: cannot connect to wiped" || fail "wait with WIPED_SOCKET=$nothing: $out"
pass
