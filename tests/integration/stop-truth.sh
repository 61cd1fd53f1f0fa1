#!/bin/bash
# What a stopping job shows is true:
# A. a job that status shows ended (done, cancelled) has its signed report at once: "report" right
#    after status said so is signed and "report --check" accepts it;
# B. "paused" is shown only once the device is closed: another program's exclusive open right after
#    status said paused succeeds, and resume never answers "still stopping" (24 cycles); the raw
#    pause reply says "stopping": true (or already paused);
# C. pauses are counted apart from interruptions: after 24 pause/resume cycles the job and its
#    signed report say pauses 24, resumes 24, interruptions 0 (24 "paused" and "resumed" events);
#    a daemon stop (SIGTERM) under a running job is one interruption, and not one for a paused job;
# D. forgetting a paused or interrupted job ends it cancelled with a signed report (history: ended,
#    "forgotten while paused/interrupted"), which "report" still serves after the record is gone;
# E. "wipectl pause" and "wipectl cancel" wait and print the job paused / cancelled, "stopping":
#    false;
# and a cancel sent while a pause settles ends the job cancelled; a pause never overrides a cancel.
# The jobs that must keep running are held by --max-rate, never raced.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

HOLD_EXCL=${HOLD_EXCL:-$top_builddir/tests/helpers/hold-excl}
[ -x "$HOLD_EXCL" ] || hard_error "$HOLD_EXCL not built"
command -v socat >/dev/null || hard_error "socat missing"

# One 64 MiB chunk covers each 32 MiB device: a pause throws away the chunk in progress, so a job
# held at 8 MB/s is never done before it ran ~4 s without a pause.
OPTS=(--resume manual)
HELD=(--verify none --max-rate 8M)

# submit ARG...: wipe --no-wait; prints the job id.
submit() {
        local out
        out=$(wipectl --json wipe --yes --no-wait "$@") || fail "wipe --no-wait $* exited $?: $out"
        echo "$out" | jq -r '.jobs[0].id'
}

# state_now ID: the job's state, one status request.
state_now() { wipectl --json status "$1" | jq -r '.jobs[0].state'; }

# until_state ID STATE: poll status as fast as it answers until the job is STATE (fail if it ends
# otherwise, or after 30 s).
until_state() {
        local id=$1 want=$2 s
        for _ in $(seq 3000); do
                s=$(state_now "$id")
                [ "$s" = "$want" ] && return 0
                case $s in done|done-with-errors|failed|cancelled|interrupted|paused)
                        fail "job $id became $s, expected $want" ;;
                esac
        done
        fail "job $id is still $s, expected $want"
}

# signed_report ID STATE WHAT: "wipectl --json report ID", at once: signed, of a job ended STATE,
# accepted by report --check; its JSON in $TEST_DIR/report.ID.json and $REPORT.
REPORT=
signed_report() {
        local id=$1 state=$2 what=$3 f=$TEST_DIR/report.$1.json
        wipectl --json report "$id" > "$f" || fail "$what: report $id exited $?"
        REPORT=$(cat "$f")
        jq_is "$REPORT" '"\(.job) \(.state) \(.signature | type)"' "$id $state object" "$what: report $id"
        wipectl report --check "$f" > "$TEST_DIR/out" 2> "$TEST_DIR/err" ||
                fail "$what: report --check of job $id's report exited $?: $(cat "$TEST_DIR/out" "$TEST_DIR/err")"
        expect_exit 0 wipectl report --check "$f" --key "$STATE/host-key.pub"
}

# excl_open DEV WHAT: another program's exclusive open of DEV succeeds now (nothing holds it).
# (A new output file each time: "held" in an old one could be seen before the child's exec, and a
# SIGTERM then would be lost in the forked shell, leaving hold-excl running.)
HOLDS=0
excl_open() {
        local dev=$1 what=$2 pid out file
        HOLDS=$((HOLDS + 1))
        file=$TEST_DIR/hold.$HOLDS.out
        "$HOLD_EXCL" "$dev" > "$file" 2>&1 &
        pid=$!
        register_pid "$pid"
        for _ in $(seq 500); do
                grep -qx held "$file" 2>/dev/null && break
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.02
        done
        out=$(cat "$file" 2>/dev/null)
        stop_pid "$pid"
        [ "$out" = held ] || fail "$what: an exclusive open of $dev failed: $out"
}

# stop_reply RAW|CLI JOB WANT PAUSES WHAT: JOB (JSON) as the reply of a pause or cancel shows it:
# stopped (state WANT, "stopping": false) or, in a raw reply only, still stopping (running,
# "stopping": true). The job JSON is one snapshot: never running with "stopping": false. (PAUSES
# is kept for the callers: "-" for a cancel, which counts nothing.)
stop_reply() {
        local kind=$1 job=$2 want=$3 what=$5 got
        got=$(echo "$job" | jq -r '"\(.state) \(.stopping)"')
        case $got in
        "$want false") return 0 ;;
        "running true") [ "$kind" = RAW ] && return 0 ;;
        esac
        [ "$kind" = RAW ] && want="$want false' or 'running true" || want="$want false"
        fail "$what: state and stopping are '$got', expected '$want': $job"
}

# counts ID: "interruptions pauses resumes" of the job's status.
counts() { wipectl --json status "$1" | jq -r '.jobs[0] | "\(.interruptions) \(.pauses) \(.resumes)"'; }

# events JSON EVENT: how many history events of that name a report has.
events() { echo "$1" | jq "[.history[] | select(.event == \"$2\")] | length"; }

deva=$(make_loop 16M)
devb=$(make_loop 32M)
devc1=$(make_loop 32M)
devc2=$(make_loop 32M)
devd=$(make_loop 32M)
start_daemon "${OPTS[@]}"

# --- A: the report of a job status just showed done is signed -------------------------------------
for i in $(seq 10); do
        id=$(submit --verify none "$deva")
        until_state "$id" "done"
        if [ $((i % 2)) = 0 ]; then
                # The text form first: signed, not "Signed: no (report of a job still running)".
                wipectl report "$id" > "$TEST_DIR/text" || fail "done $i: report $id exited $?"
                grep -Eq '^ *Signed: +ed25519 ' "$TEST_DIR/text" ||
                        fail "done $i: report $id is not signed: $(grep Signed "$TEST_DIR/text")"
        fi
        signed_report "$id" "done" "done $i"
        jq_is "$REPORT" .bytes_written $((16 << 20)) "done $i: report $id"
done

# --- A, E: the report of a job just cancelled is signed; wipectl cancel prints it cancelled --------
for i in $(seq 10); do
        id=$(submit --verify none --max-rate 1M "$deva")
        wait_bytes "$id" 1 10 || fail "job $id does not start"
        if [ $((i % 2)) = 1 ]; then
                # The CLI waits until the job has stopped.
                out=$(wipectl --json cancel "$id") || fail "cancel $id exited $?: $out"
                jq_is "$out" .job.id "$id" "wipectl cancel $id"
                stop_reply CLI "$(echo "$out" | jq .job)" cancelled - "wipectl cancel $id"
                [ "$(state_now "$id")" = cancelled ] || fail "job $id is $(state_now "$id") once wipectl cancel returned"
        else
                # The raw request answers at once; status shows cancelled only once it settled.
                out=$(request '{"id":1,"op":"cancel","job":'"$id"'}')
                jq_is "$out" '"\(.ok) \(.job.id)"' "true $id" "cancel op of job $id"
                stop_reply RAW "$(echo "$out" | jq .job)" cancelled - "cancel op of job $id"
                until_state "$id" cancelled
        fi
        signed_report "$id" cancelled "cancel $i"
        jq_is "$REPORT" '.bytes_written < .identity.size' true "cancel $i: report $id"
        jq_is "$REPORT" '.history[-1] | "\(.event) \(.reason)"' "ended cancelled" "cancel $i: report $id"
done

# --- B: paused means closed, 24 times; C: pauses are not interruptions -----------------------------
idb=$(submit "${HELD[@]}" "$devb")
wait_bytes "$idb" 1 10 || fail "job $idb does not start"
jq_is "$(wipectl --json status "$idb")" '.jobs[0] | "\(.state) \(.stopping)"' "running false" "job $idb"
# cycle N: pause with a raw request, poll until paused, open the device exclusively at once.
pause_cycle() {
        local n=$1 out
        out=$(request '{"id":1,"op":"pause","job":'"$idb"'}')
        jq_is "$out" '"\(.ok) \(.job.id)"' "true $idb" "pause $n: pause op of job $idb"
        stop_reply RAW "$(echo "$out" | jq .job)" paused "$n" "pause $n: pause op of job $idb"
        until_state "$idb" paused
        excl_open "$devb" "pause $n of job $idb"
        jq_is "$(wipectl --json status "$idb")" '.jobs[0].stopping' false "pause $n: paused job $idb"
}
# resume_cycle N: wipectl resume, which must find it stopped.
resume_cycle() {
        wipectl resume "$idb" > "$TEST_DIR/out" 2> "$TEST_DIR/err" ||
                fail "resume $1 of job $idb exited $?: $(cat "$TEST_DIR/err")"
}
for n in $(seq 12); do
        pause_cycle "$n"
        [ "$n" = 12 ] || resume_cycle "$n"
done
[ "$(counts "$idb")" = "0 12 11" ] || fail "job $idb after 12 pauses: interruptions pauses resumes $(counts "$idb")"

# The daemon stops (SIGTERM) with job idb paused and two jobs running.
idc1=$(submit "${HELD[@]}" "$devc1")
idc2=$(submit "${HELD[@]}" "$devc2")
wait_bytes "$idc1" 1 10 || fail "job $idc1 does not start"
wait_bytes "$idc2" 1 10 || fail "job $idc2 does not start"
stop_daemon || fail "daemon exit status $? on SIGTERM"
start_daemon "${OPTS[@]}"
jq_is "$(wipectl --json status "$idb")" '.jobs[0] | "\(.state) \(.interruptions) \(.pauses) \(.resumes)"' \
        "paused 0 12 11" "job $idb, paused when the daemon stopped"
for id in "$idc1" "$idc2"; do
        jq_is "$(wipectl --json status "$id")" '.jobs[0] | "\(.state) \(.stopping) \(.interruptions) \(.pauses) \(.resumes)"' \
                "interrupted false 1 0 0" "job $id, running when the daemon stopped"
done

# D: an interrupted job forgotten ends cancelled, with a signed report.
wipectl forget "$idc2" > "$TEST_DIR/out" 2> "$TEST_DIR/err" || fail "forget of interrupted job $idc2 exited $?: $(cat "$TEST_DIR/err")"
wipectl --json list --all | jq -e --argjson id "$idc2" 'any(.jobs[]; .id == $id)' > /dev/null &&
        fail "job $idc2 still listed after forget"
[ -e "$STATE/jobs/$idc2.json" ] && fail "$STATE/jobs/$idc2.json still there after forget"
[ -f "$STATE/reports/$idc2.json" ] || fail "no $STATE/reports/$idc2.json after forget of interrupted job $idc2"
signed_report "$idc2" cancelled "forgotten interrupted job"
jq_is "$REPORT" '"\(.bytes_written < .identity.size) \(.interruptions) \(.pauses) \(.resumes)"' "true 1 0 0" \
        "report $idc2"
jq_is "$REPORT" '.history[-1] | "\(.event) \(.reason)"' "ended forgotten while interrupted" "report $idc2"
cmp -s "$TEST_DIR/report.$idc2.json" "$STATE/reports/$idc2.json" || fail "report $idc2 differs from its file"

# Job idc1 goes on from its checkpoint; job idb resumes and is paused 12 times more.
wipectl resume "$idc1" > "$TEST_DIR/out" 2> "$TEST_DIR/err" || fail "resume of job $idc1 exited $?: $(cat "$TEST_DIR/err")"
resume_cycle 12
for n in $(seq 13 24); do
        pause_cycle "$n"
        resume_cycle "$n"
done
[ "$(counts "$idb")" = "0 24 24" ] || fail "job $idb after 24 pauses: interruptions pauses resumes $(counts "$idb")"

# --- D, E: a paused job forgotten ends cancelled; wipectl pause prints it paused -------------------
idd=$(submit "${HELD[@]}" "$devd")
wait_bytes "$idd" 1 10 || fail "job $idd does not start"
out=$(wipectl --json pause "$idd") || fail "pause $idd exited $?: $out"
jq_is "$out" '"\(.jobs | length) \(.jobs[0].id)"' "1 $idd" "wipectl pause $idd"
stop_reply CLI "$(echo "$out" | jq '.jobs[0]')" paused 1 "wipectl pause $idd"
[ "$(state_now "$idd")" = paused ] || fail "job $idd is $(state_now "$idd") once wipectl pause returned"
excl_open "$devd" "wipectl pause of job $idd"
wipectl forget "$idd" > "$TEST_DIR/out" 2> "$TEST_DIR/err" || fail "forget of paused job $idd exited $?: $(cat "$TEST_DIR/err")"
wipectl --json list --all | jq -e --argjson id "$idd" 'any(.jobs[]; .id == $id)' > /dev/null &&
        fail "job $idd still listed after forget"
[ -e "$STATE/jobs/$idd.json" ] && fail "$STATE/jobs/$idd.json still there after forget"
[ -f "$STATE/reports/$idd.json" ] || fail "no $STATE/reports/$idd.json after forget of paused job $idd"
signed_report "$idd" cancelled "forgotten paused job"
jq_is "$REPORT" '"\(.bytes_written < .identity.size) \(.interruptions) \(.pauses) \(.resumes)"' "true 0 1 0" \
        "report $idd"
jq_is "$REPORT" '[.history[].event] | join(" ")' "started paused ended" "report $idd"
jq_is "$REPORT" '.history[-1].reason' "forgotten while paused" "report $idd"
cmp -s "$TEST_DIR/report.$idd.json" "$STATE/reports/$idd.json" || fail "report $idd differs from its file"

# --- a cancel sent while a pause settles ends the job cancelled: the cancel is never lost -------------
deve=$(make_loop 32M)
for n in $(seq 20); do
        ide=$(submit "${HELD[@]}" "$deve")
        wait_bytes "$ide" 1 10 || fail "job $ide does not start"
        replies=$(request '{"id":1,"op":"pause","job":'"$ide"'}' '{"id":2,"op":"cancel","job":'"$ide"'}')
        jq_is "$(echo "$replies" | sed -n 2p)" '"\(.id) \(.ok)"' "2 true" "cancel $n right after a pause of job $ide"
        state=$(wait_state "$ide" 'cancelled|paused|done|failed' 10) || fail "job $ide: $state 10 s after pause and cancel"
        [ "$state" = cancelled ] || fail "cancel $n right after a pause: job $ide ended $state"
        signed_report "$ide" cancelled "job $ide, paused and cancelled at once"
        jq_is "$REPORT" '"\(.history[-1].event) \(.history[-1].reason)"' "ended cancelled" "report $ide"
done
# A pause sent while a cancel is on its way never turns it into a pause.
for n in $(seq 10); do
        ide=$(submit "${HELD[@]}" "$deve")
        wait_bytes "$ide" 1 10 || fail "job $ide does not start"
        replies=$(request '{"id":1,"op":"cancel","job":'"$ide"'}' '{"id":2,"op":"pause","job":'"$ide"'}')
        jq_is "$(echo "$replies" | sed -n 2p)" '"\(.id) \(.ok) \(.error.code)"' "2 false EALREADY" "pause $n after a cancel of job $ide"
        state=$(wait_state "$ide" 'cancelled|paused|done|failed' 10) || fail "job $ide: $state 10 s after cancel and pause"
        [ "$state" = cancelled ] || fail "pause $n right after a cancel: job $ide ended $state"
done

# --- C: the counts in the end, in the job and its signed report ----------------------------------
[ "$(wait_job "$idc1" 60)" = "done" ] || fail "job $idc1 ended $(job_field "$idc1" state)"
[ "$(counts "$idc1")" = "1 0 1" ] || fail "job $idc1 done: interruptions pauses resumes $(counts "$idc1")"
signed_report "$idc1" "done" "job interrupted once"
jq_is "$REPORT" '"\(.interruptions) \(.pauses) \(.resumes)"' "1 0 1" "report $idc1"
jq_is "$REPORT" '[.history[].event] | join(" ")' "started interrupted resumed ended" "report $idc1"
check_last_pass "$devc1" "$idc1"

[ "$(wait_job "$idb" 60)" = "done" ] || fail "job $idb ended $(job_field "$idb" state)"
[ "$(counts "$idb")" = "0 24 24" ] || fail "job $idb done: interruptions pauses resumes $(counts "$idb")"
signed_report "$idb" "done" "job paused 24 times"
jq_is "$REPORT" '"\(.interruptions) \(.pauses) \(.resumes)"' "0 24 24" "report $idb"
[ "$(events "$REPORT" paused) $(events "$REPORT" resumed) $(events "$REPORT" interrupted)" = "24 24 0" ] ||
        fail "report $idb: paused resumed interrupted events: $(events "$REPORT" paused) $(events "$REPORT" resumed) $(events "$REPORT" interrupted)"
jq_is "$REPORT" '"\(.history[0].event) \(.history[-1].event)"' "started ended" "report $idb"
check_last_pass "$devb" "$idb"

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
