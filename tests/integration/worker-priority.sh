#!/bin/bash
# The CPU priority of the worker threads (worker-policy, worker-nice): while a wipe runs, exactly
# the worker threads (wiped-wN) and the io_uring helper threads they started (iou-wrk-TID) have
# the configured policy and nice value, and the main thread and the flusher keep the daemon's own
# (0, SCHED_OTHER). The defaults, the command line over the file, SIGHUP keeping them (restart
# only), version and status reporting them; a worker never raises its priority (a daemon started
# at nice 15 keeps its workers there); a worker that may not take its policy logs one warning,
# reports it and still wipes correctly; bad values stop start-up with a clear message.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v setpriv >/dev/null || skip "setpriv (util-linux) missing"
command -v chrt >/dev/null || skip "chrt (util-linux) missing"

CONF=$TEST_DIR/wiped.conf
dev=$(make_loop 64M)
small=$(make_loop 16M)

# Scheduling policies as /proc shows them (field 41 of stat).
OTHER=0 BATCH=3 IDLE=5

# thread_prio TID: "NICE POLICY" of one thread of the daemon (fields 19 and 41 of its stat, counted
# after the command name, which may hold blanks); fails when the thread is gone.
thread_prio() {
        local stat
        stat=$(cat "/proc/$DAEMON_PID/task/$1/stat" 2>/dev/null) || return 1
        stat=${stat##*) }
        # shellcheck disable=SC2086
        set -- $stat
        echo "${17} ${39}"
}

# check_threads WHAT NICE POLICY [MAIN_NICE MAIN_POLICY]: every worker thread (there are 2) at NICE
# and POLICY, every io_uring helper at what its owner has, every other thread (the main thread,
# the flusher) at MAIN_NICE and MAIN_POLICY (default 0 and SCHED_OTHER).
check_threads() {
        local what=$1 want_w="$2 $3" want_m="${4:-0} ${5:-$OTHER}" t tid comm got want owner workers=0 main=0
        note "$what: $(ps -L -o tid=,comm=,ni=,cls= -p "$DAEMON_PID" | tr -s ' ' | tr '\n' ';')"
        for t in "/proc/$DAEMON_PID/task/"*; do
                tid=${t##*/}
                comm=$(cat "$t/comm" 2>/dev/null) || continue   # a helper thread that just ended
                got=$(thread_prio "$tid") || continue
                case $comm in
                wiped-w[0-9]*)
                        want=$want_w
                        workers=$((workers + 1)) ;;
                iou-wrk-*)
                        # Started by a worker (or, if ever, another thread): it has what its owner has.
                        owner=${comm#iou-wrk-}
                        case $(cat "/proc/$DAEMON_PID/task/$owner/comm" 2>/dev/null) in
                        wiped-w[0-9]*) want=$want_w ;;
                        *) want=$want_m ;;
                        esac ;;
                *)
                        want=$want_m
                        [ "$tid" = "$DAEMON_PID" ] && main=1 ;;
                esac
                [ "$got" = "$want" ] || fail "$what: thread $tid ($comm) has nice and policy '$got', expected '$want'"
        done
        [ "$workers" = 2 ] || fail "$what: $workers worker threads named wiped-wN, expected 2"
        [ "$main" = 1 ] || fail "$what: the main thread was not seen"
}

# running_wipe: a wipe of $dev held running by a rate limit (64 MiB at 1 MB/s: a minute), so that
# the workers and their io_uring helpers are busy while the threads are looked at; prints its id.
running_wipe() {
        local id
        id=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 1M "$dev" | jq -r '.jobs[0].id') ||
                fail "wipe --no-wait failed"
        wait_bytes "$id" 1 || fail "job $id wrote nothing"
        echo "$id"
}

# cancel_job ID: cancel it and wait until it has ended.
cancel_job() {
        wipectl cancel "$1" >/dev/null || fail "cancel $1"
        [ "$(wait_job "$1")" = cancelled ] || fail "job $1 did not end cancelled"
}

# check_reported JSON WHAT POLICY NICE APPLIED: the daemon object of version or status says it.
check_reported() {
        jq_is "$1" '.daemon.worker_policy' "$3" "$2"
        jq_is "$1" '.daemon.worker_nice' "$4" "$2"
        jq_is "$1" '.daemon.worker_priority_applied' "$5" "$2"
}

# --- the defaults: the normal policy at nice 10 -------------------------------------------------
start_daemon --threads 2
grep -q "workers at policy other, nice 10" "$TEST_DIR/daemon.log" || fail "start-up line without the workers' priority"
check_reported "$(wipectl --json version)" "version (defaults)" other 10 true
wipectl version | grep -q "no rate limit; workers at nice 10 (other)$" || fail "wipectl version: $(wipectl version)"
id=$(running_wipe)
check_threads "defaults" 10 $OTHER
check_reported "$(wipectl --json status)" "status (defaults)" other 10 true
cancel_job "$id"
stop_daemon || fail "daemon exit status $?"

# --- the file, and the command line over it -----------------------------------------------------
printf 'worker-nice = 19\nworker-policy = idle\n' > "$CONF"
start_daemon --config "$CONF" --threads 2 --worker-nice 3
check_reported "$(wipectl --json version)" "version (file: idle, command line: nice 3)" idle 3 true
id=$(running_wipe)
check_threads "file idle, command line nice 3" 3 $IDLE
cancel_job "$id"
# An idle worker still wipes, and correctly.
out=$(wipectl --json wipe --yes --verify last "$small") || fail "wipe under worker-policy = idle exited $?: $out"
sid=$(echo "$out" | jq -r '.jobs[0].id')
[ "$(job_field "$sid" state)" = done ] || fail "wipe under worker-policy = idle ended $(job_field "$sid" state)"
check_keystream "$small" "$(job_cipher "$sid")" "$(job_key "$sid")"
# SIGHUP with other values: restart only, each named in a warning; the threads keep theirs.
printf 'worker-nice = 12\nworker-policy = batch\n' > "$CONF"
kill -HUP "$DAEMON_PID" || fail "kill -HUP"
wait_match "$TEST_DIR/daemon.log" "reloaded" || fail "no reload logged after SIGHUP"
grep -qF "$CONF:2: worker-policy = batch: needs a restart, idle stays in effect" "$TEST_DIR/daemon.log" ||
        fail "no warning naming worker-policy: $(tail -n 5 "$TEST_DIR/daemon.log")"
# worker-nice comes from the command line, which a reload does not change: no warning for it.
! grep -q "worker-nice = 12" "$TEST_DIR/daemon.log" || fail "a reload warned about worker-nice, which the command line sets"
check_reported "$(wipectl --json version)" "version after SIGHUP" idle 3 true
check_threads "after SIGHUP" 3 $IDLE
stop_daemon || fail "daemon exit status $?"

# --- batch, and the normal priority: nothing lowered ---------------------------------------------
start_daemon --threads 2 --worker-policy batch --worker-nice 19
check_reported "$(wipectl --json status)" "status (batch, 19)" batch 19 true
id=$(running_wipe)
check_threads "batch, nice 19" 19 $BATCH
cancel_job "$id"
stop_daemon || fail "daemon exit status $?"
start_daemon --threads 2 --worker-policy other --worker-nice 0
check_reported "$(wipectl --json status)" "status (other, 0)" other 0 true
id=$(running_wipe)
check_threads "other, nice 0" 0 $OTHER
cancel_job "$id"
stop_daemon || fail "daemon exit status $?"

# --- never raised: a daemon started at nice 15 keeps its workers at 15, without a warning -------
real=$WIPED
WIPED=$TEST_DIR/wiped-nice
printf '#!/bin/sh\nexec nice -n 15 "%s" "$@"\n' "$real" > "$WIPED"
chmod +x "$WIPED"
start_daemon --threads 2 --worker-policy batch --worker-nice 10
id=$(running_wipe)
check_threads "started at nice 15, worker-nice 10" 15 $BATCH 15 $OTHER
cancel_job "$id"
check_reported "$(wipectl --json version)" "version (started at nice 15)" batch 10 true
! grep -q "cannot set" "$TEST_DIR/daemon.log" || fail "a warning although nothing was to be raised"
stop_daemon || fail "daemon exit status $?"

# --- not permitted: started SCHED_IDLE without CAP_SYS_NICE, the workers may not leave it --------
# (leaving SCHED_IDLE takes CAP_SYS_NICE or room in RLIMIT_NICE, which is 0 here).
WIPED=$TEST_DIR/wiped-idle
printf '#!/bin/sh\nexec chrt -i 0 setpriv --bounding-set -sys_nice --inh-caps -sys_nice prlimit --nice=0:0 "%s" "$@"\n' \
        "$real" > "$WIPED"
chmod +x "$WIPED"
log=$TEST_DIR/daemon.log
from=$(($(wc -l < "$log") + 1))
start_daemon --threads 2 --worker-policy batch --worker-nice 10
wait_match "$log" "worker threads: cannot set" 10 || fail "no warning that the policy could not be set"
tail -n +"$from" "$log" | grep -qF "worker threads: cannot set worker-policy = batch (Operation not permitted): they run on at the priority they have" ||
        fail "unexpected warning: $(grep 'cannot set' "$log")"
[ "$(tail -n +"$from" "$log" | grep -c "cannot set")" = 1 ] || fail "the warning was logged more than once"
check_reported "$(wipectl --json version)" "version (not permitted)" batch 10 false
wipectl version | grep -q "workers at nice 10 (batch), not applied: see the daemon's log$" ||
        fail "wipectl version: $(wipectl version)"
# The nice value was still lowered; the policy stays the daemon's.
check_threads "not permitted" 10 $IDLE 0 $IDLE
out=$(wipectl --json wipe --yes --verify last "$small") || fail "wipe with the priority not set exited $?: $out"
sid=$(echo "$out" | jq -r '.jobs[0].id')
[ "$(job_field "$sid" state)" = done ] || fail "wipe with the priority not set ended $(job_field "$sid" state)"
check_keystream "$small" "$(job_cipher "$sid")" "$(job_key "$sid")"
stop_daemon || fail "daemon exit status $?"
WIPED=$real

# --- bad values stop start-up with a clear message -----------------------------------------------
expect_exit 2 timeout 20 "$WIPED" --worker-nice 20 --socket "$SOCK" --state-dir "$STATE" --foreground --config /dev/null
grep -qF "wiped: 20: invalid nice value (0..19)" "$TEST_DIR/err" || fail "--worker-nice 20: $(cat "$TEST_DIR/err")"
expect_exit 2 timeout 20 "$WIPED" --worker-nice -1 --socket "$SOCK" --state-dir "$STATE" --foreground --config /dev/null
grep -qF "wiped: -1: invalid nice value (0..19)" "$TEST_DIR/err" || fail "--worker-nice -1: $(cat "$TEST_DIR/err")"
expect_exit 2 timeout 20 "$WIPED" --worker-policy fifo --socket "$SOCK" --state-dir "$STATE" --foreground --config /dev/null
grep -qF "wiped: fifo: unknown scheduling policy (other, batch, idle)" "$TEST_DIR/err" ||
        fail "--worker-policy fifo: $(cat "$TEST_DIR/err")"
printf '# bad\nworker-policy = rr\n' > "$CONF"
expect_exit 1 timeout 20 "$WIPED" --config "$CONF" --socket "$SOCK" --state-dir "$STATE" --foreground
grep -qF "$CONF:2: worker-policy = rr: unknown scheduling policy (other, batch, idle)" "$TEST_DIR/err" ||
        fail "worker-policy = rr: $(cat "$TEST_DIR/err")"
printf 'worker-nice = 42\n' > "$CONF"
expect_exit 1 timeout 20 "$WIPED" --config "$CONF" --socket "$SOCK" --state-dir "$STATE" --foreground
grep -qF "$CONF:1: worker-nice = 42: invalid nice value (0..19)" "$TEST_DIR/err" ||
        fail "worker-nice = 42: $(cat "$TEST_DIR/err")"
[ ! -e "$SOCK" ] || fail "a refused start left a socket"
pass
