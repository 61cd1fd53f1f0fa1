#!/bin/bash
# soak.sh [--duration SECONDS] [--devices N]: a bounded soak of the daemon (root; not part of
# make check). Several 64 MiB loop devices are wiped over and over while status clients poll in a
# loop, watch clients come and go (killed mid-watch), and jobs are cancelled, resubmitted, paused
# and resumed at random. Prints the daemon's RSS at the start and the end and the jobs done and
# cancelled; fails when the RSS grew by more than 16 MiB, the daemon died, a status request failed
# or any job failed. Uses the binaries of $top_builddir as the tests do (builds nothing):
#   sudo top_builddir=/path/to/build tests/soak/soak.sh --duration 300 --devices 6
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

DURATION=120
DEVICES=4
RSS_BOUND_KIB=$((16 << 10))
while [ $# -gt 0 ]; do
        case $1 in
        --duration) DURATION=${2:?}; shift 2 ;;
        --duration=*) DURATION=${1#*=}; shift ;;
        --devices) DEVICES=${2:?}; shift 2 ;;
        --devices=*) DEVICES=${1#*=}; shift ;;
        *) hard_error "usage: soak.sh [--duration SECONDS] [--devices N]" ;;
        esac
done
[[ $DURATION =~ ^[0-9]+$ && $DURATION -ge 10 && $DURATION -le 86400 ]] || hard_error "--duration: 10 to 86400 seconds"
[[ $DEVICES =~ ^[0-9]+$ && $DEVICES -ge 1 && $DEVICES -le 32 ]] || hard_error "--devices: 1 to 32"

devs=()
for _ in $(seq "$DEVICES"); do devs+=("$(make_loop 64M)"); done
start_daemon --threads 2 --checkpoint-interval 1

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }
# A moment for the new daemon to settle before the first RSS is read: no event marks it (the RSS
# is the measure itself).
sleep 1
rss_start=$(rss_kib)
note "soak: $DEVICES devices of 64 MiB for ${DURATION}s; daemon pid $DAEMON_PID, RSS ${rss_start} KiB at start"

# --- background clients ------------------------------------------------------------------------
# Status pollers: every failure is a line in status.fail.
for _ in 1 2; do
        (
                while :; do
                        wipectl --json status > /dev/null 2>&1 || { daemon_alive && echo "status exited $?" >> "$TEST_DIR/status.fail"; }
                        sleep 0.05
                done
        ) &
        register_pid $!
done
# Watch churn: a watch of everything, killed after 0.1 to 2 s, over and over.
(
        while :; do
                wipectl --json watch > /dev/null 2>&1 &
                w=$!
                sleep "0.$((RANDOM % 10 + 1))$((RANDOM % 10))"
                kill -KILL "$w" 2>/dev/null
                wait "$w" 2>/dev/null
        done
) &
register_pid $!

# --- the job churn -----------------------------------------------------------------------------
declare -A job paused_at
declare -A count=([done]=0 [cancelled]=0 [failed]=0 [other]=0 [pauses]=0 [resumes]=0 [cancels]=0)
methods=(random zero random-zero)
verifies=(none sample last)
rates=(30M 60M 150M)    # slow enough that the churn catches jobs running (RAM-backed devices)

submit() {
        local dev=$1 out
        out=$(wipectl --json wipe --yes --no-wait --method "${methods[RANDOM % 3]}" --verify "${verifies[RANDOM % 3]}" \
                --max-rate "${rates[RANDOM % 3]}" "$dev" 2>&1) ||
                fail "submit on $dev exited $?: $out"
        job[$dev]=$(echo "$out" | jq -r '.jobs[0].id')
}

end=$((SECONDS + DURATION))
for dev in "${devs[@]}"; do submit "$dev"; done
while [ $SECONDS -lt $end ]; do
        daemon_alive || fail "the daemon died"
        for dev in "${devs[@]}"; do
                id=${job[$dev]}
                st=$(wipectl --json status "$id" 2>/dev/null) || { daemon_alive || fail "the daemon died"; continue; }
                state=$(echo "$st" | jq -r '.jobs[0].state')
                case $state in
                done|cancelled)
                        count[$state]=$((count[$state] + 1))
                        wipectl forget "$id" > /dev/null 2>&1 || fail "forget $id ($state) exited $?"
                        submit "$dev"
                        ;;
                failed|done-with-errors|interrupted)
                        count[failed]=$((count[failed] + 1))
                        fail "job $id on $dev ended $state: $(echo "$st" | jq -c '.jobs[0].error')"
                        ;;
                paused)
                        # Resume after at least a second.
                        if [ $((SECONDS - ${paused_at[$id]:-0})) -ge 1 ]; then
                                wipectl resume "$id" > /dev/null 2>&1 || fail "resume $id exited $?"
                                count[resumes]=$((count[resumes] + 1))
                        fi
                        ;;
                running)
                        case $((RANDOM % 8)) in
                        0)      # cancel; EALREADY when it ended meanwhile
                                wipectl cancel "$id" > /dev/null 2>&1 && count[cancels]=$((count[cancels] + 1)) ;;
                        1)      # pause; EALREADY when it is no longer running, EOPNOTSUPP in a later verification
                                if wipectl pause "$id" > /dev/null 2>&1; then
                                        paused_at[$id]=$SECONDS
                                        count[pauses]=$((count[pauses] + 1))
                                fi ;;
                        esac
                        ;;
                flushing) ;;
                *) count[other]=$((count[other] + 1)); fail "job $id on $dev is in state '$state'" ;;
                esac
        done
        sleep 0.2
done

# --- wind down: clients stop, jobs end -------------------------------------------------------
if [ -f "$TEST_DIR/pids" ]; then
        while read -r p; do stop_pid "$p"; done < <(cat "$TEST_DIR/pids")
fi
# Each job is resumed whenever it is seen paused until it ends: a pause asked for in the last round
# may only take effect now (a job is running until its workers stopped), and a resume is refused
# while the job is still stopping (it is tried again then).
for dev in "${devs[@]}"; do
        id=${job[$dev]}
        for _ in $(seq 1200); do
                state=$(job_field "$id" state)
                case $state in
                paused) wipectl resume "$id" > /dev/null 2>&1 ;;
                done|done-with-errors|failed|cancelled|interrupted) break ;;
                esac
                sleep 0.1
        done
        case $state in
        done) count[done]=$((count[done] + 1)); check_last_pass "$dev" "$id" ;;
        cancelled) count[cancelled]=$((count[cancelled] + 1)) ;;
        done-with-errors|failed|interrupted) fail "job $id on $dev ended $state" ;;
        *) fail "job $id on $dev did not end within 120 s: $state" ;;
        esac
done
daemon_alive || fail "the daemon died"
[ ! -s "$TEST_DIR/status.fail" ] || fail "$(wc -l < "$TEST_DIR/status.fail") status requests failed: $(head -n 3 "$TEST_DIR/status.fail")"
# The same moment before the last RSS is read.
sleep 2
rss_end=$(rss_kib)
note "jobs done ${count[done]}, cancelled ${count[cancelled]} (cancel requests ${count[cancels]}), pauses ${count[pauses]}, resumes ${count[resumes]}"
note "daemon RSS ${rss_start} KiB at start, ${rss_end} KiB at the end (bound: +${RSS_BOUND_KIB} KiB)"
[ $((rss_end - rss_start)) -le $RSS_BOUND_KIB ] || fail "daemon RSS grew by $((rss_end - rss_start)) KiB (more than $RSS_BOUND_KIB)"
[ "${count[done]}" -gt 0 ] || fail "no job ended done in ${DURATION}s"
stop_daemon || fail "daemon exit status $?"
pass "${count[done]} done, ${count[cancelled]} cancelled, RSS ${rss_start} -> ${rss_end} KiB"
