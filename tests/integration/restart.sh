#!/bin/bash
# The daemon's own life: a second daemon may not share a socket or state directory (the refusal
# names the pid of the one that holds it); SIGTERM
# mid-wipe stops the workers and exits 0, removing its socket; after SIGKILL mid-wipe the stale
# socket is replaced and the device can be wiped again (the dead daemon's exclusive open is gone).
# The jobs stopped are held by a rate limit (1 GiB at 32 MB/s: about 34 s) so that they are
# certainly still running at the signal, however fast the device.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

dev=$(make_loop 1G)
start_daemon --threads 1 --queue-depth 1 --io-size 4K

# A second daemon on the same state directory, or on the same live socket: refused.
"$WIPED" --socket "$TEST_DIR/other.sock" --state-dir "$STATE" --foreground 2> "$TEST_DIR/err2" &&
        fail "second daemon on the same state directory started"
# The refusal names the daemon that holds the directory.
grep -qF "$STATE: another wiped (pid $DAEMON_PID) uses this state directory" "$TEST_DIR/err2" ||
        fail "state dir: $(cat "$TEST_DIR/err2")"
[ "$(cat "$STATE/wiped.lock")" = "$DAEMON_PID" ] || fail "wiped.lock holds '$(cat "$STATE/wiped.lock")', not $DAEMON_PID"
"$WIPED" --socket "$SOCK" --state-dir "$TEST_DIR/state2" --foreground 2> "$TEST_DIR/err2" &&
        fail "second daemon on the same socket started"
grep -q "another daemon is serving" "$TEST_DIR/err2" || fail "socket: $(cat "$TEST_DIR/err2")"
wipectl version > /dev/null || fail "the first daemon stopped serving"

# SIGTERM while a job runs: a clean exit, the socket it made is gone.
id=$(wipectl --json wipe --yes --no-wait --max-rate 32M "$dev" | jq -r '.jobs[0].id')
wait_bytes "$id" 1 10 || fail "job $id does not progress"
kill -TERM "$DAEMON_PID"
for _ in $(seq 100); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$DAEMON_PID" 2>/dev/null && fail "daemon still running 10 s after SIGTERM"
wait "$DAEMON_PID"
rc=$?
DAEMON_PID=
[ $rc = 0 ] || fail "daemon exited $rc after SIGTERM"
[ -e "$SOCK" ] && fail "socket left behind after SIGTERM"
grep -q "job $id: $dev: interrupted" "$TEST_DIR/daemon.log" || fail "job not logged as interrupted"

# SIGKILL while a job runs: the next daemon replaces the stale socket and may wipe the device.
# (resume manual: the interrupted jobs stay interrupted instead of taking the device back.)
start_daemon --threads 1 --queue-depth 1 --io-size 4K --resume manual
[ "$(job_field "$id" state)" = interrupted ] || fail "job $id is $(job_field "$id" state) after a restart with resume manual"
id=$(wipectl --json wipe --yes --no-wait --max-rate 32M "$dev" | jq -r '.jobs[0].id')
wait_bytes "$id" 1 10 || fail "job $id does not progress"
[ "$(job_field "$id" state)" = running ] || fail "job $id is $(job_field "$id" state) before SIGKILL"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
[ -S "$SOCK" ] || fail "expected a stale socket after SIGKILL"
start_daemon --threads 2 --resume manual
out=$(wipectl --json wipe --yes "$dev") || fail "wipe after SIGKILL exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
check_keystream "$dev" "$(job_cipher "$id")" "$(job_key "$id")"
stop_daemon || fail "daemon exit status $?"
pass
