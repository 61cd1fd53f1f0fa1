#!/bin/bash
# Clients that follow jobs outlive the daemon's restarts: `wipectl wipe` (plain and --json) and
# `wipectl wait` that are following jobs while the daemon is stopped (SIGTERM) or killed (SIGKILL)
# and started again on the same socket and state directory reconnect, follow the same jobs as the
# new daemon resumes them, and end 0 with every job done and its device wiped. With the new daemon
# on --resume manual the job stays interrupted and `wait` ends 8; with no daemon coming back,
# `wait --reconnect-timeout 3` ends 8 once the 3 s are up. The jobs are held by a rate limit (48 MiB
# at 4 MB/s: about 12 s) so that they are certainly still running at the signal.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

RATE=4M
SIZE=48M

# job_of DEV: the id of the job of the test's device DEV, once the daemon has one running.
job_of() {
        wipectl --json status 2>/dev/null | jq -r --arg d "$1" \
                '[.jobs[] | select(.node == $d and .state == "running")] | .[0].id // empty'
}

# The three clients: a plain wipe, a --json wipe and a wait; their jobs progressing.
dev1=$(make_loop $SIZE)
dev2=$(make_loop $SIZE)
dev3=$(make_loop $SIZE)

# start_clients: set PLAIN_PID, JSON_PID, WAIT_PID and ID1..ID3, every job under way.
start_clients() {
        wipectl wipe --yes --max-rate $RATE "$dev1" > "$TEST_DIR/plain.out" 2> "$TEST_DIR/plain.err" &
        PLAIN_PID=$!
        wipectl --json wipe --yes --max-rate $RATE "$dev2" > "$TEST_DIR/json.out" 2> "$TEST_DIR/json.err" &
        JSON_PID=$!
        ID3=$(wipectl --json wipe --yes --no-wait --max-rate $RATE "$dev3" | jq -r '.jobs[0].id')
        [[ $ID3 =~ ^[0-9]+$ ]] || fail "no job for $dev3"
        wipectl wait "$ID3" > "$TEST_DIR/wait.out" 2> "$TEST_DIR/wait.err" &
        WAIT_PID=$!
        wipectl --json watch "$ID3" > "$TEST_DIR/watch.out" 2> "$TEST_DIR/watch.err" &
        WATCH_PID=$!
        wait_until 30 "jobs running on $dev1 and $dev2" eval '[ -n "$(job_of "$dev1")" ] && [ -n "$(job_of "$dev2")" ]'
        ID1=$(job_of "$dev1")
        ID2=$(job_of "$dev2")
        for id in "$ID1" "$ID2" "$ID3"; do
                wait_bytes "$id" 1 30 || fail "job $id does not progress"
        done
        # The wait is connected and following before the daemon goes.
        wait_match "$TEST_DIR/wait.err" . 1 && fail "wait: $(cat "$TEST_DIR/wait.err")"
        sleep 0.5
}

# check_clients WHAT: every client ended 0, every job done, every device wiped.
check_clients() {
        local rc
        wait "$PLAIN_PID"; rc=$?
        [ $rc = 0 ] || fail "$1: plain wipe exited $rc: $(cat "$TEST_DIR/plain.out" "$TEST_DIR/plain.err")"
        wait "$JSON_PID"; rc=$?
        [ $rc = 0 ] || fail "$1: --json wipe exited $rc: $(cat "$TEST_DIR/json.err")"
        wait "$WAIT_PID"; rc=$?
        [ $rc = 0 ] || fail "$1: wait exited $rc: $(cat "$TEST_DIR/wait.out" "$TEST_DIR/wait.err")"
        # watch --json: a "reconnecting" event, a new "start", and only the real end.
        wait "$WATCH_PID"; rc=$?
        [ $rc = 0 ] || fail "$1: watch --json exited $rc: $(cat "$TEST_DIR/watch.err")"
        jq -e -s '[.[] | select(.event == "reconnecting")] | length >= 1' "$TEST_DIR/watch.out" > /dev/null ||
                fail "$1: watch --json printed no reconnecting event: $(cat "$TEST_DIR/watch.out")"
        jq -e -s '[.[] | select(.event == "start")] | length >= 2' "$TEST_DIR/watch.out" > /dev/null ||
                fail "$1: watch --json printed no second start event: $(cat "$TEST_DIR/watch.out")"
        jq -e -s '[.[] | select(.event == "end")] | length == 1 and (.[0].jobs[0].state // .[0].job.state) == "done"' \
                "$TEST_DIR/watch.out" > /dev/null || fail "$1: watch --json ends: $(jq -c -s '[.[] | select(.event == "end")]' "$TEST_DIR/watch.out")"
        jq -e --arg id "$ID2" '.jobs[0].id == ($id | tonumber) and .jobs[0].state == "done"' "$TEST_DIR/json.out" \
                > /dev/null || fail "$1: --json wipe printed $(cat "$TEST_DIR/json.out")"
        grep -q "reconnecting" "$TEST_DIR/plain.out" || fail "$1: plain wipe did not say it reconnects: $(cat "$TEST_DIR/plain.out")"
        grep -q "reconnected" "$TEST_DIR/plain.out" || fail "$1: plain wipe did not say it reconnected: $(cat "$TEST_DIR/plain.out")"
        grep -Eq "^job $ID1: .*: done" "$TEST_DIR/plain.out" || fail "$1: plain wipe: $(cat "$TEST_DIR/plain.out")"
        grep -q "interrupted" "$TEST_DIR/plain.out" && fail "$1: plain wipe showed the job interrupted: $(cat "$TEST_DIR/plain.out")"
        for id in "$ID1" "$ID2" "$ID3"; do
                [ "$(job_field "$id" state)" = done ] || fail "$1: job $id is $(job_field "$id" state)"
                [ "$(job_field "$id" resumes)" -ge 1 ] || fail "$1: job $id was not resumed"
        done
        check_keystream "$dev1" "$(job_cipher "$ID1")" "$(job_key "$ID1")"
        check_keystream "$dev2" "$(job_cipher "$ID2")" "$(job_key "$ID2")"
        check_keystream "$dev3" "$(job_cipher "$ID3")" "$(job_key "$ID3")"
}

# (a) SIGTERM, then the same daemon again.
start_daemon --threads 2
start_clients
stop_daemon || fail "daemon exit status $? after SIGTERM"
# The clients are still there, waiting for the daemon.
sleep 1
kill -0 "$WAIT_PID" 2>/dev/null || fail "wait ended when the daemon stopped: $(cat "$TEST_DIR/wait.err")"
kill -0 "$PLAIN_PID" 2>/dev/null || fail "wipe ended when the daemon stopped: $(cat "$TEST_DIR/plain.out")"
start_daemon --threads 2
check_clients SIGTERM

# (b) SIGKILL (a crash), then the same daemon again.
start_clients
kill_daemon
sleep 1
start_daemon --threads 2
check_clients SIGKILL

# (c) The next daemon does not resume: the job stays interrupted, wait ends 8.
id=$(wipectl --json wipe --yes --no-wait --max-rate $RATE "$dev1" | jq -r '.jobs[0].id')
wait_bytes "$id" 1 30 || fail "job $id does not progress"
wipectl wait "$id" > "$TEST_DIR/wait.out" 2> "$TEST_DIR/wait.err" &
WAIT_PID=$!
sleep 0.5
stop_daemon || fail "daemon exit status $? after SIGTERM"
start_daemon --threads 2 --resume manual
wait "$WAIT_PID"
rc=$?
[ $rc = 8 ] || fail "wait for a job left interrupted exited $rc: $(cat "$TEST_DIR/wait.out" "$TEST_DIR/wait.err")"
[ "$(job_field "$id" state)" = interrupted ] || fail "job $id is $(job_field "$id" state) under resume manual"
[ "$(job_field "$id" resuming)" = false ] || fail "job $id says resuming under resume manual"

# (d) No daemon comes back: wait gives up after its reconnect timeout, 8.
wipectl resume "$id" > /dev/null || fail "resume $id"
wait_state "$id" running 30 > /dev/null || fail "job $id did not run again"
wipectl wait --reconnect-timeout 3 "$id" > "$TEST_DIR/wait.out" 2> "$TEST_DIR/wait.err" &
WAIT_PID=$!
sleep 0.5
kill_daemon
t0=$SECONDS
wait "$WAIT_PID"
rc=$?
[ $rc = 8 ] || fail "wait with no daemon back exited $rc: $(cat "$TEST_DIR/wait.err")"
[ $((SECONDS - t0)) -le 30 ] || fail "wait --reconnect-timeout 3 took $((SECONDS - t0)) s"
grep -q "did not come back within 3 s" "$TEST_DIR/wait.err" || fail "wait said: $(cat "$TEST_DIR/wait.err")"
# --reconnect-timeout 0: the old way, at once.
start_daemon --threads 2 --resume manual
pass
