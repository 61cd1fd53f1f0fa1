#!/bin/bash
# A full state directory: the job goes on with its state in memory, the error is logged once, the
# record saved before is left exactly as it was (never a torn or empty file), and once there is
# room again the record and the report are written.
. "${top_srcdir:-.}/tests/lib.sh"

mkdir -p "$STATE"
mount -t tmpfs -o size=256k,mode=0700 tmpfs "$STATE" || skip "cannot mount a tmpfs here"
register_mount "$STATE"

dev=$(make_loop 64M)
start_daemon --chunk-size 8M --checkpoint-interval 0.5
id=$(wipectl --json wipe --yes --no-wait --verify last --max-rate 20M "$dev" | jq -r '.jobs[0].id')
rec=$STATE/jobs/$id.json
wait_bytes "$id" $((16 << 20)) 30 || fail "job $id does not progress"
[ -f "$rec" ] || fail "no record $rec"
# Paused while the directory is filled: a running job's record is saved again at every checkpoint
# (twice a second here), which could come between the copy and the fill. A paused job's record,
# once saved with its "paused" event, does not change until the job is resumed.
wipectl pause "$id" > /dev/null || fail "pause $id exited $?"
state=$(wait_state "$id" paused 5) || fail "job $id is $state 5 s after pause"
saved_paused() { jq -e '.state == "paused" and ([.history[].event] | index("paused") != null)' "$rec" > /dev/null 2>&1; }
for _ in $(seq 50); do saved_paused && break; sleep 0.1; done
saved_paused || fail "$rec does not say paused: $(cat "$rec")"
cp "$rec" "$TEST_DIR/before.json"

# Fill it: every write of the daemon fails with ENOSPC from now on. Then the job goes on.
dd if=/dev/zero of="$STATE/fill" bs=4k status=none 2>/dev/null
[ "$(df --output=avail "$STATE" | tail -1)" -eq 0 ] || note "tmpfs not quite full: $(df -h "$STATE" | tail -1)"
wipectl resume "$id" > "$TEST_DIR/out" 2> "$TEST_DIR/err" || fail "resume $id exited $?: $(cat "$TEST_DIR/err")"
for _ in $(seq 100); do grep -q "job $id: .*cannot save its record" "$TEST_DIR/daemon.log" && break; sleep 0.1; done
grep -q "job $id: .*cannot save its record" "$TEST_DIR/daemon.log" || fail "no log line about the record that cannot be saved"
[ "$(grep -c "job $id: .*cannot save its record" "$TEST_DIR/daemon.log")" = 1 ] || fail "the failure is logged more than once"
cmp -s "$rec" "$TEST_DIR/before.json" || fail "the saved record changed while the directory is full"
ls -A "$STATE/jobs" | grep -q tmp && fail "a temporary file was left in $STATE/jobs: $(ls -A "$STATE/jobs")"

# The job goes on in memory and ends; its report cannot be written yet.
[ "$(wait_job "$id" 60)" = done ] || fail "job $id did not end done: $(wipectl --json status "$id")"
check_keystream "$dev" "$(job_cipher "$id")" "$(job_key "$id")"
for _ in $(seq 50); do grep -q "job $id: .*cannot write its report" "$TEST_DIR/daemon.log" && break; sleep 0.1; done
grep -q "job $id: .*cannot write its report" "$TEST_DIR/daemon.log" || fail "no log line about the report that cannot be written"
cmp -s "$rec" "$TEST_DIR/before.json" || fail "the saved record changed while the directory is full"

# Room again: within the 5 s retry, the record says done and the signed report is there.
rm -f "$STATE/fill"
for _ in $(seq 100); do [ -f "$STATE/reports/$id.json" ] && break; sleep 0.1; done
[ -f "$STATE/reports/$id.json" ] || fail "no report after the directory had room again"
wipectl report --check "$STATE/reports/$id.json" > /dev/null || fail "report of $id does not check"
for _ in $(seq 100); do [ "$(jq -r .state "$rec")" = done ] && break; sleep 0.1; done
[ "$(jq -r .state "$rec")" = done ] || fail "record still says $(jq -r .state "$rec")"
grep -q "job $id: .*saved again" "$TEST_DIR/daemon.log" || fail "no log line when the record was saved again"
daemon_alive || fail "daemon died"
pass "a full state directory loses nothing"
