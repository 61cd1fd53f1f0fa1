#!/bin/bash
# Damaged job records after a crash: a truncated file, one of garbage, and one whose JSON is valid
# but whose checksum no longer matches (one digit of its progress changed) are each logged as
# corrupt, moved aside to jobs/ID.json.corrupt, and never resumed: their devices stay untouched.
# The daemon runs on, and the one intact job is resumed and finished.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

OPTS=(--chunk-size 8M --checkpoint-interval 1 --checkpoint-bytes 16M --threads 2)

devs=() ids=()
for _ in 1 2 3 4; do devs+=("$(make_loop 64M)"); done
# The first daemon's own rate limit holds every job in its pass until the crash, however fast the
# devices: 24 MB/s over all four (about 6 MB/s each: the 12 MiB waited for below take about 2 s,
# all 64 MiB about 11 s). The restarts have no limit: the intact job then runs at full speed.
start_daemon "${OPTS[@]}" --max-rate 24M
for i in 0 1 2 3; do
        out=$(wipectl --json wipe --yes --no-wait --verify none "${devs[i]}") || fail "submit exited $?: $out"
        ids+=("$(echo "$out" | jq -r '.jobs[0].id')")
done
# Every job has a checkpoint on disk (one a second) before the crash, and is still running: one
# status request for all four, polled, so that the crash follows the status that showed it at once.
# (ready: every job has done 12 MiB; lacking: the ids of those of them without a checkpoint.)
READY_JQ='([.jobs[] | .bytes_done >= $want] | all) as $ready
        | ([.jobs[] | select(.checkpoint == null) | .id] | map(tostring) | join(",")) as $lacking | "\($ready) \($lacking)"'
ready_at=
for _ in $(seq 600); do
        st=$(wipectl --json status "${ids[@]}") || fail "status exited $?"
        read -r ready lacking < <(echo "$st" | jq -r --argjson want $((12 << 20)) "$READY_JQ")
        if [ "$ready" = true ]; then
                [ -z "$lacking" ] && break
                [ -n "$ready_at" ] || ready_at=$(date +%s%N)
                [ $(($(date +%s%N) - ready_at)) -lt 10000000000 ] || fail "job(s) $lacking have no checkpoint 10 s after 12 MiB"
        fi
        sleep 0.05
done
[ "$ready" = true ] && [ -z "$lacking" ] || fail "the jobs did not all progress to 12 MiB with a checkpoint in 30 s: $st"
kill_daemon
jq_is "$st" '[.jobs[].state] | unique | join(",")' running "the jobs just before the crash"
for id in "${ids[@]}"; do
        [ -s "$STATE/jobs/$id.json" ] || fail "no $STATE/jobs/$id.json after the crash: $(ls -la "$STATE/jobs" 2>&1)"
done

# Damage three of the four records; job ${ids[2]} keeps its own.
f=$STATE/jobs/${ids[0]}.json
truncate -s $(($(stat -c %s "$f") / 2)) "$f"
head -c 4096 /dev/urandom > "$STATE/jobs/${ids[1]}.json"
f=$STATE/jobs/${ids[3]}.json
cp "$f" "$TEST_DIR/orig.json"
m=$(grep -oE '"bytes_done" *: *[0-9]+' "$f" | head -n 1)
[ -n "$m" ] || fail "$f has no \"bytes_done\" progress to change: $(head -c 600 "$f")"
d=${m: -1}
sed -i "0,/$m/s//${m%?}$(((d + 1) % 10))/" "$f"
[ "$(cmp -l "$TEST_DIR/orig.json" "$f" | wc -l)" = 1 ] || hard_error "the edit of $f changed other than one byte"
cp "$f" "$TEST_DIR/edited.json"
jq -e . "$f" > /dev/null 2>&1 || hard_error "$f is no valid JSON after the edit: not the case of a valid record with a wrong checksum"

sums=()
for i in 0 1 3; do sums[i]=$(dev_sha256 "${devs[i]}"); done
# devices_untouched WHEN: the devices of the damaged records hold what they held after the crash.
devices_untouched() {
        local i
        for i in 0 1 3; do
                [ "$(dev_sha256 "${devs[i]}")" = "${sums[i]}" ] ||
                        fail "$1: ${devs[i]} (job ${ids[i]}, damaged record) was written"
        done
}

start_daemon "${OPTS[@]}"
state=$(wait_state "${ids[2]}" 'running|flushing|done' 15) ||
        fail "intact job ${ids[2]} not resumed: $state, reason $(job_field "${ids[2]}" reason)"
for i in 0 1 3; do
        id=${ids[i]}
        wait_match "$TEST_DIR/daemon.log" "corrupt.*(^|[^0-9])$id\\.json|(^|[^0-9])$id\\.json.*corrupt" 5 ||
                fail "no log line says $id.json is corrupt"
        grep -E "(^|[^0-9])$id\\.json" "$TEST_DIR/daemon.log" | grep "corrupt" | grep -q "moved aside" ||
                fail "no log line says $id.json is corrupt and moved aside: $(grep -E "$id\\.json" "$TEST_DIR/daemon.log")"
        [ -f "$STATE/jobs/$id.json.corrupt" ] || fail "no $STATE/jobs/$id.json.corrupt: $(ls "$STATE/jobs")"
        [ -e "$STATE/jobs/$id.json" ] && fail "$STATE/jobs/$id.json is still there"
        # Not listed, or listed as a job that will not run.
        js=$(wipectl --json list --all) || fail "list --all exited $?"
        state=$(echo "$js" | jq -r --argjson id "$id" '.jobs[] | select(.id == $id) | .state')
        case $state in
        "") ;;
        interrupted|failed)
                note "job $id listed as $state"
                wipectl resume "$id" > /dev/null 2>&1 && fail "job $id (damaged record) was resumed on request"
                ;;
        *) fail "job $id (damaged record) is listed as $state" ;;
        esac
done
cmp -s "$TEST_DIR/edited.json" "$STATE/jobs/${ids[3]}.json.corrupt" ||
        fail "$STATE/jobs/${ids[3]}.json.corrupt is not the file as it was left"
daemon_alive || fail "daemon died on the damaged records"
wipectl version > /dev/null || fail "daemon does not answer"
# A resume of a damaged record's job would start at the daemon's first tick: 3 s pass without
# any write to their devices.
sleep 3
devices_untouched "3 s after the restart"

state=$(wait_job "${ids[2]}" 60)
[ "$state" = done ] || fail "job ${ids[2]} ended $state"
check_last_pass "${devs[2]}" "${ids[2]}"
jq_is "$(wipectl --json report "${ids[2]}")" '"\(.interruptions) \(.resumes)"' "1 1" "report ${ids[2]}"
devices_untouched "after job ${ids[2]} ended"

# The moved-aside records stay aside: a second restart resumes nothing from them.
stop_daemon || fail "daemon exit status $?"
start_daemon "${OPTS[@]}"
# Past the first tick, where a resume would start: the records stay aside, nothing is written.
sleep 1
for i in 0 1 3; do
        [ -f "$STATE/jobs/${ids[i]}.json.corrupt" ] || fail "$STATE/jobs/${ids[i]}.json.corrupt gone after a restart"
done
devices_untouched "after a second restart"
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
