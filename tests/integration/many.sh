#!/bin/bash
# Many devices on one worker pool: eight submitted in one command and two more while those run
# all end done and hold exactly their keystream; a device that fails mid-wipe (its backing file
# on a full tmpfs) fails its own job only, and the others finish.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

devs=()
for _ in $(seq 8); do devs+=("$(make_loop 48M)"); done
late1=$(make_loop 32M)
late2=$(make_loop 40M)

thin=$(make_thin_loop 48M 8M) || exit $?

start_daemon --threads 2
out=$(wipectl --json wipe --yes --no-wait --verify none "${devs[@]}" "$thin") || fail "submit of nine exited $?: $out"
[ "$(echo "$out" | jq '.jobs | length')" = 9 ] || fail "expected nine jobs: $out"
more=$(wipectl --json wipe --yes --no-wait --cipher chacha20 "$late1" "$late2") || fail "late submit exited $?"
[ "$(echo "$more" | jq '.jobs | length')" = 2 ] || fail "expected two late jobs: $more"

for id in $(echo "$out" "$more" | jq -r '.jobs[].id'); do
        state=$(wait_job "$id" 300)
        dev=$(job_field "$id" node)
        if [ "$dev" = "$thin" ]; then
                [ "$state" = failed ] || fail "job $id on the full device ended $state"
                [ "$(job_field "$id" error.code)" = ENOSPC ] || fail "job $id on the full device failed with $(job_field "$id" error.code), expected ENOSPC"
        else
                [ "$state" = done ] || fail "job $id on $dev ended $state"
                check_keystream "$dev" "$(job_cipher "$id")" "$(job_key "$id")"
        fi
done
[ "$(wipectl --json list | jq '[.jobs[] | select(.state == "done")] | length')" = 10 ] || fail "not ten jobs done"
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
