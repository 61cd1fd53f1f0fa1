#!/bin/bash
# Progress across a pause and a resume: the work done up to the checkpoint stays counted (status
# right after the resume shows at least what the paused job showed), and status tells the device's
# position in the current pass beside the work over all passes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

d1=$(make_loop 256M)
start_daemon --chunk-size 8M --threads 2

id=$(wipectl --json wipe --yes --no-wait --verify last --max-rate 20M "$d1" | jq -r '.jobs[0].job') ||
        fail "wipe --no-wait exited $?"
[ -n "$id" ] && [ "$id" != null ] || fail "no job id in the submit reply"
total=$(job_field "$id" work_total_bytes)
wait_bytes "$id" $((total / 9)) 60 || fail "job $id does not reach 11 %"
wipectl pause "$id" > /dev/null || fail "pause $id exited $?"
state=$(wait_state "$id" paused 10) || fail "job $id is $state 10 s after pause"
paused=$(job_field "$id" work_done_bytes)
ckpt=$(job_field "$id" checkpoint.work_done_bytes)
note "paused at $paused of $total (checkpoint $ckpt)"
[ "$paused" -gt 0 ] || fail "job $id paused at $paused of $total: its progress was dropped at the pause"
# A stopped job counts its checkpoint: what was written after it is written again on the resume,
# and status says how much.
[ "$paused" = "$ckpt" ] || fail "job $id paused shows $paused, its checkpoint $ckpt"
jq_is "$(wipectl --json status "$id")" '.jobs[0] | (.checkpoint.redo_bytes >= 0 and .rate_bps == 0 and .eta_s == null)' \
        true "paused job's redo, rate and ETA"
text=$(wipectl status "$id") || fail "status $id exited $?"
echo "$text" | grep -q 'checkpoint' || fail "status of paused job $id does not name its checkpoint: $text"
# The deprecated names say the same for one release.
[ "$(job_field "$id" bytes_done)" = "$paused" ] || fail "bytes_done $(job_field "$id" bytes_done) != work_done_bytes $paused"
wipectl resume "$id" > /dev/null || fail "resume $id exited $?"
# Every look from the resume on: never below the checkpointed progress.
for _ in $(seq 20); do
        st=$(wipectl --json status "$id") || fail "status $id exited $?"
        now=$(echo "$st" | jq -r '.jobs[0].work_done_bytes')
        [ "$now" -ge "$paused" ] || fail "job $id resumed shows $now of $total, below its checkpoint $paused"
        jq_is "$st" '.jobs[0] | (.phase_done_bytes <= .phase_total_bytes and .size_bytes == .size and .phase_total_bytes == .size_bytes)' true "pass position in device bytes"
        sleep 0.1
done
text=$(wipectl status "$id") || fail "status $id exited $?"
echo "$text" | grep -Eq 'JOB +DEVICE' || fail "status heading is not JOB DEVICE: $text"
state=$(wait_job "$id" 120)
[ "$state" = done ] || fail "job $id ended $state"
st=$(wipectl --json status "$id")
jq_is "$st" '.jobs[0].rate_bps > 0' true "rate of a finished job (its average)"
jq_is "$st" '.jobs[0].work_done_bytes == .jobs[0].work_total_bytes' true "work of a finished job"
pass
