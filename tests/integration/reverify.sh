#!/bin/bash
# A later verification never rewrites the wipe's outcome: cancelled (wipectl cancel, also while
# wipectl verify waits) or interrupted (the daemon stopped), the job stays done, its error none,
# and the check cut short is in its signed report's runs as "cancelled" or "interrupted" (the
# report's verification summary stays the latest complete run); wipectl verify and wait say how
# the check ended (exit 7, 8). A device that a later job wiped again is refused for the older
# job's verification (ESTALE naming the later job, also after a restart), and the older job's
# report stays as it was.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

SIZE=$((128 << 20))
dev=$(make_loop $SIZE)
start_daemon --threads 2 --checkpoint-interval 0.5

# check_signed ID: the report of job ID is signed and passes its check; prints it.
check_signed() {
        wipectl --json report "$1" > "$TEST_DIR/report.json" || fail "report $1"
        wipectl report --check "$TEST_DIR/report.json" --key "$STATE/host-key.pub" > /dev/null ||
                fail "report of job $1 fails its check: $(cat "$TEST_DIR/report.json")"
        cat "$TEST_DIR/report.json"
}

# reverify ID: start a whole-device verification of job ID and wait until it has read 16 MiB (the
# job's own max-rate holds it: about 4 s for the whole device).
reverify() {
        local out
        out=$(wipectl --json verify --no-wait --verify last "$1") || fail "verify --no-wait $1 exited $?: $out"
        jq_is "$out" '.job.state' running "verify --no-wait $1"
        wait_bytes "$1" $((16 << 20)) 30 || fail "job $1: the verification does not progress"
        [ "$(job_field "$1" state)" = running ] || fail "job $1: the verification ended before it could be stopped"
}

# A wipe at 32 MB/s (the rate also holds every later verification of it), verified by a sample.
out=$(wipectl --json wipe --yes --verify sample --max-rate 32M "$dev") || fail "wipe exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
report=$(check_signed "$id")
jq_is "$report" '"\(.state) \(.verification.result) \(.verification.runs | length)"' "done passed 1" "job $id"
ended=$(echo "$report" | jq -r .ended_at)

# --- cancelled ------------------------------------------------------------------------------------
reverify "$id"
out=$(wipectl --json cancel "$id") || fail "cancel of the verification of $id exited $?: $out"
jq_is "$out" '.job | "\(.state) \(.stopping) \(.error) \(.verify.result)"' "done false null cancelled" "cancel of the verification"
report=$(check_signed "$id")
jq_is "$report" '"\(.state) \(.error) \(.ended_at) \(.verification.result) \(.verification.mode)"' \
        "done null $ended passed sample" "report of $id after a cancelled verification"
jq_is "$report" '.verification.runs | "\(length) \(.[1].result) \(.[1].mode) \(.[1].coverage_bytes > 0) \(.[1].coverage_bytes < '$SIZE')"' \
        "2 cancelled last true true" "runs of $id"
expect_exit 7 wipectl wait "$id"
grep -q "job $id: $dev: verifying again was cancelled; the job stays done" "$TEST_DIR/err" || fail "wait $id: $(cat "$TEST_DIR/err")"

# wipectl verify that waits, cancelled from elsewhere: exit 7.
wipectl verify --verify last "$id" > "$TEST_DIR/verify.out" 2> "$TEST_DIR/verify.err" &
vpid=$!
register_pid $vpid
wait_bytes "$id" $((16 << 20)) 30 || fail "job $id: the waited-for verification does not progress"
wipectl cancel "$id" > /dev/null || fail "cancel $id"
wait $vpid
rc=$?
sed -i "/^$vpid\$/d" "$TEST_DIR/pids"
[ $rc = 7 ] || fail "wipectl verify of $id, cancelled, exited $rc: $(cat "$TEST_DIR/verify.err")"
jq_is "$(check_signed "$id")" '"\(.state) \([.verification.runs[].result] | join(","))"' "done passed,cancelled,cancelled" \
        "report of $id"

# A complete verification after them: passes, and is the summary again.
wipectl verify --verify last "$id" > /dev/null 2> "$TEST_DIR/err" || fail "verify $id exited $?: $(cat "$TEST_DIR/err")"
jq_is "$(check_signed "$id")" '"\(.state) \(.verification.result) \(.verification.mode) \(.verification.runs | length)"' \
        "done passed last 4" "report of $id"
expect_exit 0 wipectl wait "$id"

# --- interrupted: the daemon stops during the verification -----------------------------------------
reverify "$id"
stop_daemon || fail "daemon exit status $?"
start_daemon --threads 2 --checkpoint-interval 0.5
jq_is "$(wipectl --json status "$id")" '.jobs[0] | "\(.state) \(.error) \(.verify.result) \(.interruptions)"' \
        "done null interrupted 0" "job $id after the restart"
jq_is "$(check_signed "$id")" '"\(.state) \(.verification.result) \(.verification.runs[-1].result) \(.verification.runs | length)"' \
        "done passed interrupted 5" "report of $id after the restart"
check_last_pass "$dev" "$id"

# --- wiped again by a later job ------------------------------------------------------------------
before=$(check_signed "$id")
out=$(wipectl --json wipe --yes --method zero --verify none "$dev") || fail "second wipe exited $?: $out"
later=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$(wipectl --json status "$id")" '.jobs[0].superseded_by' "$later" "job $id after job $later"
expect_exit 5 wipectl verify "$id"
grep -q "job $id: $dev was wiped again by a later job, $later, since: verify job $later instead" "$TEST_DIR/err" ||
        fail "verify of superseded job $id: $(cat "$TEST_DIR/err")"
jq_is "$(request '{"id":1,"op":"verify","job":'"$id"'}')" .error.code ESTALE "verify op of superseded job $id"
[ "$(check_signed "$id")" = "$before" ] || fail "the refused verification changed the report of job $id"
# The later job's own verification is what checks the device now.
wipectl verify --verify last "$later" > /dev/null 2> "$TEST_DIR/err" || fail "verify $later exited $?: $(cat "$TEST_DIR/err")"
# It is remembered across a restart.
stop_daemon || fail "daemon exit status $?"
start_daemon --threads 2
jq_is "$(wipectl --json status "$id")" '.jobs[0].superseded_by' "$later" "job $id after a restart"
expect_exit 5 wipectl verify "$id"
[ "$(check_signed "$id")" = "$before" ] || fail "the report of job $id changed"

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
