#!/bin/bash
# Fairness of the worker pool: six equal devices on two threads, submitted in one command, all
# progress together. At every status sample taken while all six jobs run, no device's bytes_done
# lags the mean bytes_done by more than 10 % of the device size (the bound wiped(8) states); at
# the end every job is done and every device holds exactly its keystream.
#
# Loop devices over /dev/shm are fast: unthrottled, six 384M devices are done in about a second,
# and 10 % of a device is then 15 ms of scheduling, which any other process on the machine can
# take. The daemon's own rate limit (all its I/O together) stretches the round to about 6 s, so
# that the bound measures how the pool shares its buffers and threads between the jobs, not the
# machine's noise. When fewer than MIN_SAMPLES samples could be taken while all six ran, the round
# is repeated on larger devices (nothing is concluded from a short round).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

N=6
MIN_SAMPLES=3
# pct PART WHOLE: PART as a percentage of WHOLE with one decimal.
pct() { local t=$(($1 * 1000 / $2)); echo "$((t / 10)).$((t % 10))"; }
SIZES="384M 1G 2G"

start_daemon --threads 2 --max-rate 400M

# jq program over `wipectl --json status ID...`: "ended" when every job has ended, "partial"
# when some but not all are running (starting, flushing or ended), else "all SAMPLE-LAG MEAN
# DETAIL": the largest lag behind the mean in bytes, the mean, and every job's bytes_done.
# shellcheck disable=SC2016  # jq variables, not shell ones
SAMPLE_JQ='
.jobs as $j
| if ([$j[].state] | all(. == "done" or . == "failed" or . == "cancelled" or . == "interrupted")) then "ended"
  elif ($j | length) != $n or ([$j[].state] | any(. != "running")) then "partial"
  else ([$j[].bytes_done] | add / length) as $m
       | "all \([$j[] | $m - .bytes_done] | max | floor) \($m | floor) \([$j[].bytes_done] | map(tostring) | join(","))"
  end'

for size in $SIZES; do
        devs=()
        for _ in $(seq $N); do devs+=("$(make_loop "$size")"); done
        bytes=$(blockdev --getsize64 "${devs[0]}") || hard_error "blockdev ${devs[0]}"
        bound=$((bytes / 10))

        out=$(wipectl --json wipe --yes --no-wait --verify none "${devs[@]}") || fail "submit of $N exited $?: $out"
        [ "$(echo "$out" | jq '.jobs | length')" = $N ] || fail "expected $N jobs: $out"
        mapfile -t ids < <(echo "$out" | jq -r '.jobs[].id')

        samples=0 worst=0 worst_detail='' polls=0
        deadline=$((SECONDS + 600))
        while :; do
                st=$(wipectl --json status "${ids[@]}") || fail "status exited $?"
                line=$(echo "$st" | jq -r --argjson n $N "$SAMPLE_JQ") || fail "status is not the expected JSON: $st"
                polls=$((polls + 1))
                case $line in
                ended) break ;;
                all\ *)
                        read -r _ lag mean detail <<< "$line"
                        # A sample before anything was written says nothing about fairness.
                        if [ "$mean" -gt 0 ]; then
                                samples=$((samples + 1))
                                if [ "$lag" -gt "$worst" ]; then worst=$lag worst_detail=$detail; fi
                                [ "$lag" -le "$bound" ] ||
                                        fail "$size devices: a device lags the mean ($mean bytes) by $lag bytes = $(pct "$lag" "$bytes") %" \
                                                "of the size, more than 10 % ($bound); bytes_done: $detail"
                        fi
                        ;;
                esac
                [ $SECONDS -lt $deadline ] || fail "$size devices: the jobs did not end within 600 s"
                sleep 0.05
        done
        note "$size devices: $samples samples with all $N running (of $polls polls); worst lag behind the mean" \
                "$((worst >> 20)) MiB = $(pct "$worst" "$bytes") % of the size (bound 10 %)${worst_detail:+; bytes_done then: $worst_detail}"

        for id in "${ids[@]}"; do
                state=$(wait_job "$id" 60)
                [ "$state" = done ] || fail "job $id on $(job_field "$id" node) ended $state"
        done
        [ "$samples" -ge $MIN_SAMPLES ] && break
        # Too fast to observe: free this round's memory, try larger devices.
        for dev in "${devs[@]}"; do
                file=$(loop_file "$dev")
                detach_loop "$dev"
                rm -f "$file"
        done
        devs=()
done
[ "$samples" -ge $MIN_SAMPLES ] ||
        skip "only $samples samples with all $N jobs running even on $size devices: cannot observe fairness here"

for id in "${ids[@]}"; do
        check_keystream "$(job_field "$id" node)" "$(job_cipher "$id")" "$(job_key "$id")"
done
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass "worst lag $((worst >> 20)) MiB ($(pct "$worst" "$bytes") % of $size)"
