#!/bin/bash
# A device that goes away mid-wipe fails its job within seconds, with an error naming the device
# and its record saved; the daemon goes on serving and finishes the other job.
#
# The devices are loop devices over files of badfs (tests/helpers/badfs, FUSE). Killing badfs
# with SIGKILL aborts its FUSE connection: from then on every read and write of the loop device
# fails at once (EIO), as on a disk that dropped off the bus, and no I/O ever succeeds again. Two
# such devices go at the same moment: one job has the default bad-sector limit (16M, which the
# errors soon exceed), the other a limit larger than its device, so only the daemon's "no I/O
# succeeded for 10 s" rule can end it.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

other=$(make_loop 128M)
make_badfs_loop 256M
gone=$BADFS_DEV gone_pid=$BADFS_PID
make_badfs_loop 256M
stuck=$BADFS_DEV stuck_pid=$BADFS_PID
note "$gone and $stuck over badfs (pids $gone_pid $stuck_pid), $other an ordinary loop device"

start_daemon --threads 2

# submit ARG...: wipe --no-wait of one device; prints the job id.
submit() {
        local out id
        out=$(wipectl --json wipe --yes --no-wait "$@") || fail "wipe --no-wait $* exited $?: $out"
        id=$(echo "$out" | jq -r '.jobs[0].id')
        [[ $id =~ ^[0-9]+$ ]] || fail "wipe --no-wait $*: no job id: $out"
        echo "$id"
}

# The doomed jobs are slow (256 MiB at 20 MB/s: about 13 s); the other one is still running when
# the devices go (128 MiB at 30 MB/s: about 4 s, then read back).
gone_id=$(submit --verify none --max-rate 20M "$gone")
stuck_id=$(submit --verify none --max-rate 20M --max-bad 1G "$stuck")
other_id=$(submit --verify last --max-rate 30M "$other")

for id in "$gone_id" "$stuck_id"; do
        wait_bytes "$id" $((16 << 20)) 20 || fail "job $id made no progress: $(wipectl --json status "$id")"
        state=$(job_field "$id" state)
        [ "$state" = running ] || fail "job $id is $state before its device went away"
done
kill_badfs "$gone_pid"
kill_badfs "$stuck_pid"
killed=$(date +%s%N)
note "killed both badfs after $(($(job_field "$gone_id" bytes_done) >> 20)) and $(($(job_field "$stuck_id" bytes_done) >> 20)) MiB of 256"

# expect_failed ID DEV: job ID on DEV fails within 15 s of the kill, with an error naming DEV; the
# daemon answers all the while; the job's record says failed (it would never resume).
expect_failed() {
        local id=$1 dev=$2 st state code message rec=$STATE/jobs/$1.json
        while :; do
                st=$(wipectl --json status "$id") || fail "status $id exited $? after $dev went away"
                state=$(echo "$st" | jq -r '.jobs[0].state')
                case $state in done|done-with-errors|failed|cancelled|interrupted) break ;; esac
                [ $(($(date +%s%N) - killed)) -lt 15000000000 ] ||
                        fail "job $id on $dev still $state 15 s after its device went away: $st"
                sleep 0.1
        done
        note "job $id on $dev ended $state $((($(date +%s%N) - killed) / 1000000)) ms after the kill"
        [ "$state" = failed ] || fail "job $id on $dev ended $state, expected failed: $st"
        code=$(echo "$st" | jq -r '.jobs[0].error.code')
        message=$(echo "$st" | jq -r '.jobs[0].error.message')
        note "job $id: $code: $message"
        [[ $code =~ ^E[A-Z]+$ ]] || fail "job $id: error code '$code': $st"
        [[ $message == "$dev: "?* ]] || fail "job $id: the error does not name $dev first: $st"
        [ "$(echo "$st" | jq -r '.jobs[0].bytes_done')" -lt $((256 << 20)) ] || fail "all of $dev counted as written: $st"
        for _ in $(seq 50); do [ "$(jq -r .state "$rec" 2>/dev/null)" = failed ] && break; sleep 0.1; done
        [ "$(jq -r .state "$rec" 2>/dev/null)" = failed ] || fail "$rec does not say failed: $(cat "$rec" 2>&1)"
}
expect_failed "$gone_id" "$gone"
expect_failed "$stuck_id" "$stuck"

daemon_alive || fail "daemon died"
wipectl status > "$TEST_DIR/status.txt" || fail "status exited $? after the devices went away"
grep -q "$gone" "$TEST_DIR/status.txt" || fail "status does not list $gone: $(cat "$TEST_DIR/status.txt")"

# The other job, submitted before the kill, ends done with exactly what it wrote.
state=$(wait_state "$other_id" 'done|done-with-errors|failed|cancelled|interrupted' 120) ||
        fail "job $other_id on $other did not end: $state"
[ "$state" = "done" ] || fail "job $other_id on $other ended $state: $(wipectl --json status "$other_id")"
check_last_pass "$other" "$other_id"

stop_daemon || fail "daemon exit status $?"
pass
