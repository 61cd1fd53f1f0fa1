#!/bin/bash
# Rate limits: a job's own (wipectl wipe --max-rate, submit "max_rate") and the daemon's over all
# I/O (wiped --max-rate). RATE is decimal (32M = 32000000 bytes/s), 0 means no limit, and a rate
# that is not a number is a usage error.
#
# Only lower bounds on the elapsed time are asserted (a loaded machine only makes a wipe slower):
# writing SIZE bytes at RATE takes at least 80 % of SIZE / RATE (the 20 % leaves room for an
# initial burst of the limiter). Unlimited, these devices take a fraction of that.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

RATE=32000000

# now_ms: a monotonic-enough clock in milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# at_least_ms BYTES: the least time in ms that BYTES may take at RATE (80 % of BYTES / RATE).
at_least_ms() { echo $(($1 * 800 / RATE)); }

one=$(make_loop 96M)
two_a=$(make_loop 48M)
two_b=$(make_loop 48M)
free=$(make_loop 32M)

start_daemon --threads 2

# Bad rates are usage errors of wipectl (exit 2) and never reach the daemon.
jobs_before=$(wipectl --json list | jq '.jobs | length')
expect_exit 2 wipectl wipe --yes --verify none --max-rate abc "$free"
expect_exit 2 wipectl wipe --yes --verify none --max-rate -5M "$free"
expect_exit 2 wipectl wipe --yes --verify none --max-rate 12Q "$free"
[ "$(wipectl --json list | jq '.jobs | length')" = "$jobs_before" ] || fail "a rejected --max-rate made a job"
cmp -n $((32 << 20)) "$free" /dev/zero || fail "$free was written by a rejected request"

# --max-rate 0 means no limit: the job runs, and shows max_rate 0.
out=$(wipectl --json wipe --yes --verify none --max-rate 0 "$free") || fail "wipe --max-rate 0 exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
st=$(wipectl --json status "$id")
jq_is "$st" '.jobs[0].state' done "--max-rate 0"
jq_is "$st" '.jobs[0].max_rate' 0 "--max-rate 0"
check_keystream "$free" "$(job_cipher "$id")" "$(job_key "$id")"

# A job's own limit: 96 MiB at 32 MB/s.
bytes=$(blockdev --getsize64 "$one")
least=$(at_least_ms "$bytes")
t0=$(now_ms)
out=$(wipectl --json wipe --yes --verify none --max-rate 32M "$one") || fail "wipe --max-rate 32M exited $?: $out"
elapsed=$(($(now_ms) - t0))
id=$(echo "$out" | jq -r '.jobs[0].id')
st=$(wipectl --json status "$id")
jq_is "$st" '.jobs[0].state' done "--max-rate 32M"
jq_is "$st" '.jobs[0].max_rate' $RATE "--max-rate 32M"
note "job limit: $bytes bytes at 32 MB/s took $elapsed ms (at least $least ms)"
[ "$elapsed" -ge "$least" ] || fail "$bytes bytes at --max-rate 32M took $elapsed ms, less than $least ms"
check_keystream "$one" "$(job_cipher "$id")" "$(job_key "$id")"

# The daemon's limit covers all its I/O together: two 48 MiB devices at once, 32 MB/s in all.
stop_daemon || fail "daemon exit status $?"
start_daemon --threads 2 --max-rate 32M
jq_is "$(wipectl --json version)" '.daemon.max_rate' $RATE "wiped --max-rate 32M: version"
jq_is "$(wipectl --json status)" '.daemon.max_rate' $RATE "wiped --max-rate 32M: status"
bytes=$(($(blockdev --getsize64 "$two_a") + $(blockdev --getsize64 "$two_b")))
least=$(at_least_ms "$bytes")
t0=$(now_ms)
out=$(wipectl --json wipe --yes --verify none "$two_a" "$two_b") || fail "wipe of two exited $?: $out"
elapsed=$(($(now_ms) - t0))
note "daemon limit: $bytes bytes on two devices at 32 MB/s took $elapsed ms (at least $least ms)"
[ "$elapsed" -ge "$least" ] || fail "$bytes bytes on two devices under wiped --max-rate 32M took $elapsed ms, less than $least ms"
for id in $(echo "$out" | jq -r '.jobs[].id'); do
        st=$(wipectl --json status "$id")
        jq_is "$st" '.jobs[0].state' done "under wiped --max-rate 32M"
        check_keystream "$(echo "$st" | jq -r '.jobs[0].node')" "$(job_cipher "$id")" "$(job_key "$id")"
done
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"

# A cancel reaches a job whose workers sleep on its rate limit (1 MiB at 10 kB/s: 100 s a piece):
# it ends cancelled at once, not when the sleep is over; and a SIGTERM right after a cancel keeps
# it cancelled (not interrupted: its record says cancelled, so it is not resumed).
start_daemon --threads 2
slow=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 10k "$one" | jq -r '.jobs[0].id')
for _ in $(seq 100); do [ "$(job_field "$slow" bytes_done)" -gt 0 ] && break; sleep 0.1; done
wipectl cancel "$slow" > /dev/null || fail "cancel of the slow job exited $?"
state=$(wait_job "$slow" 30)
[ "$state" = cancelled ] || fail "the rate-limited job ended $state after a cancel"
slow2=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 10k "$one" | jq -r '.jobs[0].id')
for _ in $(seq 100); do [ "$(job_field "$slow2" bytes_done)" -gt 0 ] && break; sleep 0.1; done
wipectl cancel "$slow2" > /dev/null && stop_daemon || fail "cancel then SIGTERM failed"
grep -q "job $slow2: $one: cancelled" "$TEST_DIR/daemon.log" || fail "job $slow2 did not end cancelled: $(tail -5 "$TEST_DIR/daemon.log")"
[ "$(jq -r .state "$STATE/jobs/$slow2.json")" = cancelled ] || fail "the cancelled job's record is not cancelled (it would resume): $(cat "$STATE/jobs/$slow2.json")"

# The daemon refuses a bad rate at start (it must not come up; timeout 124 would mean it did).
timeout 10 "$WIPED" --socket "$TEST_DIR/bad.sock" --state-dir "$TEST_DIR/bad-state" --foreground --max-rate abc \
        > "$TEST_DIR/out" 2>&1
rc=$?
{ [ $rc -ne 0 ] && [ $rc -ne 124 ]; } || fail "wiped --max-rate abc exited $rc: $(cat "$TEST_DIR/out")"
pass
