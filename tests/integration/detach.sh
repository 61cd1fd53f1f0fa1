#!/bin/bash
# wiped started without --foreground detaches: with --pidfile the file holds the detached
# daemon's pid once it serves; nothing is written to the stdout/stderr it was started with while a
# job runs (its log goes to the journal, or syslog without one); SIGTERM removes the pid file.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

dev=$(make_loop 32M)
pidfile=$TEST_DIR/wiped.pid
"$WIPED" --socket "$SOCK" --state-dir "$STATE" --config /dev/null --pidfile "$pidfile" > "$TEST_DIR/out" 2>&1
rc=$?
[ $rc = 0 ] || fail "wiped exited $rc: $(cat "$TEST_DIR/out")"
[ -s "$pidfile" ] || fail "no pid file once the parent returned"
pid=$(cat "$pidfile")
kill -0 "$pid" 2>/dev/null || fail "pid file names $pid, not running"
register_pid "$pid"
[ "$(cat "/proc/$pid/comm")" = wiped ] || fail "pid file names $(cat "/proc/$pid/comm")"
started=$(stat -c %s "$TEST_DIR/out")

# A second one with the same pid file: refused, naming the first.
"$WIPED" --socket "$TEST_DIR/other.sock" --state-dir "$TEST_DIR/state2" --config /dev/null --pidfile "$pidfile" \
        --foreground 2> "$TEST_DIR/err2" && fail "second wiped with a live pid file started"
grep -q "names wiped $pid" "$TEST_DIR/err2" || fail "second wiped said: $(cat "$TEST_DIR/err2")"

id=$(wipectl --json wipe --yes --no-wait --max-rate 16M "$dev" | jq -r '.jobs[0].id')
wipectl wait "$id" > /dev/null || fail "job $id did not end done"
[ "$(stat -c %s "$TEST_DIR/out")" = "$started" ] || fail "the detached daemon wrote to its old stderr: $(cat "$TEST_DIR/out")"

if [ -S /run/systemd/journal/socket ] && journalctl -n1 > /dev/null 2>&1; then
        wait_until 30 "job $id in the journal" eval \
                'journalctl -o cat _PID="$pid" 2>/dev/null | grep -q "job $id: $dev: done"'
else
        note "no journal here: the syslog lines are not checked"
fi

kill -TERM "$pid"
wait_until 30 "wiped $pid to stop" eval '! kill -0 "$pid" 2>/dev/null'
[ -e "$pidfile" ] && fail "pid file left after SIGTERM"
pass
