#!/bin/bash
# The daemon as a systemd service sees it: READY=1, STATUS= during a wipe, WATCHDOG=1 when
# WATCHDOG_USEC asks for it and STOPPING=1 on SIGTERM, all on a NOTIFY_SOCKET the test listens on;
# SIGTERM during a wipe exits 0 within 5 s and saves the job as interrupted; and under a journal
# (a private mount namespace with a listener on /run/systemd/journal/socket, and JOURNAL_STREAM
# naming the daemon's stderr) job events are structured entries with their MESSAGE_ID and fields.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

command -v socat >/dev/null || skip "socat missing"
dev=$(make_loop 512M)

# --- sd_notify ---
notify=$TEST_DIR/notify.sock
socat -u "UNIX-RECV:$notify" "OPEN:$TEST_DIR/notify.log,creat,append" &
register_pid $!
for _ in $(seq 50); do [ -S "$notify" ] && break; sleep 0.1; done
[ -S "$notify" ] || hard_error "no notify socket"

NOTIFY_SOCKET=$notify WATCHDOG_USEC=1000000 start_daemon --threads 2
# Held by a rate limit (512 MiB at 8 MB/s: about 67 s) so that it is certainly still running at
# the SIGTERM below, however fast the device.
id=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 8M "$dev" | jq -r '.jobs[0].id')
notify_wait() { for _ in $(seq 100); do grep -q "$1" "$TEST_DIR/notify.log" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
notify_wait "READY=1" || fail "no READY=1: $(cat "$TEST_DIR/notify.log")"
notify_wait "STATUS=1 running, [0-9]*% overall, ETA " || fail "no STATUS= with the running job: $(cat "$TEST_DIR/notify.log")"
notify_wait "WATCHDOG=1" || fail "no WATCHDOG=1 with WATCHDOG_USEC set"
# Sent again and again (every 0.5 s with WATCHDOG_USEC=1000000), not once.
# shellcheck disable=SC2317  # called through wait_until
watchdogs() { [ "$(grep -o "WATCHDOG=1" "$TEST_DIR/notify.log" | wc -l)" -ge "$1" ]; }
wait_until 30 "a second WATCHDOG=1" watchdogs 2

# SIGTERM mid-wipe: STOPPING=1, exit 0 within 5 s, the job saved as interrupted.
[ "$(job_field "$id" state)" = running ] || fail "job $id not running before SIGTERM: $(job_field "$id" state)"
t0=$(date +%s%N)
kill -TERM "$DAEMON_PID"
for _ in $(seq 50); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$DAEMON_PID" 2>/dev/null && fail "daemon still running 5 s after SIGTERM"
wait "$DAEMON_PID"
rc=$?
DAEMON_PID=
[ $rc = 0 ] || fail "daemon exited $rc after SIGTERM"
note "stopped $(( ($(date +%s%N) - t0) / 1000000 )) ms after SIGTERM"
notify_wait "STOPPING=1" || fail "no STOPPING=1"
saved=$STATE/jobs/$id.json
[ -f "$saved" ] || fail "job $id not saved in $STATE/jobs: $(ls -la "$STATE" "$STATE/jobs" 2>&1)"
[ "$(stat -c %a "$saved")" = 600 ] || fail "$saved has mode $(stat -c %a "$saved"), expected 600 (it holds the key)"
jq -e --argjson id "$id" '.format == 2 and .id == $id and .state == "interrupted" and
        .identity.node != null and (.passes[0].key | length) == 32' "$saved" >/dev/null ||
        fail "saved record is not the interrupted job with its key: $(cat "$saved")"
ls -a "$STATE/jobs" | grep -q '\.tmp$' && fail "a temporary file was left in $STATE/jobs"

# --- the journal ---
command -v unshare >/dev/null || skip "unshare missing (the notify part passed)"
real=$WIPED
WIPED=$TEST_DIR/wiped-journal
cat > "$WIPED" <<EOS
#!/bin/bash
# In a private mount namespace: a journal socket of our own over /run/systemd, then wiped with its
# stderr a file that JOURNAL_STREAM names (as systemd would name the journal stream).
exec unshare -m --propagation private bash -c '
        mount -t tmpfs tmpfs /run/systemd || exit 90
        mkdir -p /run/systemd/journal
        socat -u UNIX-RECV:/run/systemd/journal/socket,mode=666 "OPEN:$TEST_DIR/journal.log,creat,append" &
        echo \$! > "$TEST_DIR/journal.pid"
        for _ in \$(seq 50); do [ -S /run/systemd/journal/socket ] && break; sleep 0.1; done
        exec 2>>"$TEST_DIR/stderr.log"
        export JOURNAL_STREAM=\$(stat -c "%d:%i" "$TEST_DIR/stderr.log")
        exec "$real" "\$@"' wiped "\$@"
EOS
chmod +x "$WIPED"
# resume manual: the job interrupted above stays interrupted, instead of taking its device back
# from the wipe below.
start_daemon --threads 2 --resume manual
register_pid "$(cat "$TEST_DIR/journal.pid")"
out=$(wipectl --json wipe --yes --verify last "$dev") || fail "wipe under the journal exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
stop_daemon || fail "daemon exit status $?"
journal=$(tr '\n' ' ' < "$TEST_DIR/journal.log")
for event in 191bb7c282d8423388b4eb8685b1a626 e9a6243f8b6441d784ff445830291483 84fca34eb01f4991803c87fbaa1ecab9 \
             015a9b3a6a7d4f6f9908acf397fbd073; do
        grep -q "MESSAGE_ID=$event" "$TEST_DIR/journal.log" || fail "no entry with MESSAGE_ID=$event: $journal"
done
grep -q "WIPED_JOB=$id" "$TEST_DIR/journal.log" || fail "no WIPED_JOB=$id field"
grep -q "WIPED_DEVICE=$dev" "$TEST_DIR/journal.log" || fail "no WIPED_DEVICE=$dev field"
grep -q "WIPED_SERIAL=" "$TEST_DIR/journal.log" || fail "no WIPED_SERIAL field"
grep -q "SYSLOG_IDENTIFIER=wiped" "$TEST_DIR/journal.log" || fail "no SYSLOG_IDENTIFIER"
grep -q "job $id" "$TEST_DIR/stderr.log" && fail "job events went to stderr as well as to the journal"
pass
