#!/bin/bash
# A job is resumed only on its own device, found by identity, not by name: after a crash, another
# disk of the same size on the job's node is left alone (the job stays interrupted, with a reason,
# and a resume request is refused with ENODEV), while the job's own disk under a new name is
# resumed there and finished. With --resume manual a restart resumes nothing by itself.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

SIZE=$((96 << 20))
OPTS=(--chunk-size 8M --checkpoint-interval 1 --checkpoint-bytes 16M --threads 2)

a=$TEST_DIR/a.img
b=$TEST_DIR/b.img
truncate -s $SIZE "$a" || hard_error "cannot create $a"
head -c $SIZE /dev/urandom > "$b" || hard_error "cannot fill $b"
sum_b=$(sha256sum < "$b" | cut -d' ' -f1)
l1=$(make_loop_file "$a" --direct-io=on)

# b_unchanged WHEN: fail unless B holds what it held at the start (read through the page cache
# of the file: the loop device does direct I/O on it, so nothing it wrote is left unseen).
b_unchanged() {
        [ "$(sha256sum < "$b" | cut -d' ' -f1)" = "$sum_b" ] || fail "$1: $b (another disk) was written"
}

start_daemon "${OPTS[@]}"
out=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 20M "$l1") || fail "submit exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
wait_bytes "$id" $((SIZE * 3 / 10)) 30 || fail "job $id does not progress: $(job_field "$id" state)"
kill_daemon
note "job $id killed mid pass 1"

# Another disk of the same size on the same node.
detach_loop "$l1"
reattach_loop "$l1" "$b" --direct-io=on || skip "$l1 was taken by another program after the detach"
[ "$(dev_sha256 "$l1")" = "$sum_b" ] || hard_error "$l1 does not show $b"

start_daemon "${OPTS[@]}"
state=$(wait_state "$id" interrupted 5) || fail "job $id after the restart: $state, expected interrupted"
reason=$(job_field "$id" reason)
[ -n "$reason" ] && [ "$reason" != null ] || fail "job $id is interrupted without a reason"
note "interrupted: $reason"
# The daemon tries again for 10 s after its start, as for a device still busy or not there yet,
# then gives up and logs "not resumed": still interrupted, with a reason, and B untouched.
wait_until 60 "the daemon's log line saying job $id is not resumed (its retries ended)" \
        grep -q "job $id: not resumed" "$TEST_DIR/daemon.log"
js=$(wipectl --json status "$id")
jq_is "$js" '.jobs[0].state' interrupted "job $id after the resume retries"
jq_is "$js" '.jobs[0].reason | type' string "job $id after the resume retries"
b_unchanged "after the resume retries"
# ENODEV: exit 5 as for the other refusals of a device (wipectl(1)).
expect_exit 5 wipectl resume "$id"
grep -Eqi "ENODEV|no device|no present device" "$TEST_DIR/err" || fail "resume without the device: $(cat "$TEST_DIR/err")"
jq_is "$(request '{"id":1,"op":"resume","job":'"$id"'}')" '"\(.ok) \(.error.code)"' "false ENODEV" "resume op without the device"
# Naming the wrong disk explicitly does not help either: ESTALE, exit 5.
expect_exit 5 wipectl resume "$id" --device "$l1"
jq_is "$(request '{"id":1,"op":"resume","job":'"$id"',"device":"'"$l1"'"}')" '"\(.ok) \(.error.code)"' \
        "false ESTALE" "resume op with another disk"
state=$(job_field "$id" state)
[ "$state" = interrupted ] || fail "job $id after the refused resumes: $state"
# Time for anything a refused resume might still start to write: nothing may.
sleep 1
b_unchanged "after the refused resumes"
[ "$(dev_sha256 "$l1")" = "$sum_b" ] || fail "$l1 (another disk) was written"

# The job's own disk, under another name.
l2=$(make_loop_file "$a" --direct-io=on)
note "$a is on $l2 now"
wipectl resume "$id" > "$TEST_DIR/out" 2> "$TEST_DIR/err" || fail "resume $id with $a on $l2 exited $?: $(cat "$TEST_DIR/err")"
state=$(wait_state "$id" 'running|flushing|done' 5) || fail "job $id after resume: $state"
jq_is "$(wipectl --json status "$id")" '.jobs[0] | "\(.node) \(.resumes)"' "$l2 1" "job $id resumed"
state=$(wait_job "$id" 60)
[ "$state" = done ] || fail "job $id ended $state"
check_last_pass "$l2" "$id"
b_unchanged "after the job ended"
report=$(wipectl --json report "$id")
jq_is "$report" '"\(.interruptions) \(.resumes) \([.history[] | select(.event == "resumed")] | last | .node)"' \
        "1 1 $l2" "report $id"

# --- --resume manual: a restart leaves the job interrupted until asked. ---
dev=$(make_loop 64M)
out=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 20M "$dev") || fail "submit exited $?: $out"
mid=$(echo "$out" | jq -r '.jobs[0].id')
wait_bytes "$mid" $((20 << 20)) 30 || fail "job $mid does not progress"
kill_daemon
sum=$(dev_sha256 "$dev")
start_daemon "${OPTS[@]}" --resume manual
state=$(wait_state "$mid" interrupted 5) || fail "job $mid after a restart with --resume manual: $state"
# With --resume auto the job would be resumed at the daemon's first tick: 3 s must pass without it.
sleep 3
state=$(job_field "$mid" state)
[ "$state" = interrupted ] || fail "job $mid 3 s after a restart with --resume manual: $state"
reason=$(job_field "$mid" reason)
[ -n "$reason" ] && [ "$reason" != null ] || fail "job $mid is interrupted without a reason"
[ "$(dev_sha256 "$dev")" = "$sum" ] || fail "$dev was written with --resume manual before any resume"
wipectl resume "$mid" > "$TEST_DIR/out" 2> "$TEST_DIR/err" || fail "resume $mid exited $?: $(cat "$TEST_DIR/err")"
state=$(wait_job "$mid" 60)
[ "$state" = done ] || fail "job $mid ended $state"
check_last_pass "$dev" "$mid"
jq_is "$(wipectl --json report "$mid")" '"\(.interruptions) \(.resumes)"' "1 1" "report $mid"

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
