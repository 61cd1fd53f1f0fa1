#!/bin/bash
# pause, resume, forget: a paused job writes nothing until resumed, then ends as if never paused;
# a paused job can be cancelled; pause/cancel of an ended job is EALREADY, forget of a running job
# EBUSY, of an unknown one ESRCH; a forgotten job's record goes, its report stays; unprivileged
# users may do none of it; a job paused when the daemon stops is still paused after a restart.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

OPTS=(--chunk-size 8M --checkpoint-interval 1 --checkpoint-bytes 16M --threads 2)

# submit DEV ARG...: wipe --no-wait; prints the job id.
submit() {
        local out
        out=$(wipectl --json wipe --yes --no-wait "$@") || fail "wipe --no-wait $* exited $?: $out"
        echo "$out" | jq -r '.jobs[0].id'
}

# pause_job ID: pause it; fail unless it is paused within 2 s.
pause_job() {
        local state
        wipectl pause "$1" > "$TEST_DIR/out" 2> "$TEST_DIR/err" || fail "pause $1 exited $?: $(cat "$TEST_DIR/err")"
        state=$(wait_state "$1" paused 2) || fail "job $1 is $state 2 s after pause"
}

# op_code OP ID: the error code of a raw request OP on job ID ("ok" when it succeeded).
op_code() { request '{"id":1,"op":"'"$1"'","job":'"$2"'}' | jq -r 'if .ok then "ok" else .error.code end'; }

d1=$(make_loop 96M)
d2=$(make_loop 1G)
d3=$(make_loop 1G)
d4=$(make_loop 64M)
start_daemon "${OPTS[@]}"

# --- pause, nothing written while paused, resume, done -----------------------------------------
id1=$(submit --verify last --max-rate 20M "$d1")
wait_bytes "$id1" $((16 << 20)) 20 || fail "job $id1 does not progress"
pause_job "$id1"
b1=$(job_field "$id1" bytes_done)
s1=$(dev_sha256 "$d1")
# Time for a paused job to write if it would: nothing may change in these 2 s.
sleep 2
s2=$(dev_sha256 "$d1")
[ "$s1" = "$s2" ] || fail "$d1 changed while job $id1 was paused"
[ "$(job_field "$id1" bytes_done)" = "$b1" ] || fail "job $id1 progressed while paused: $b1 -> $(job_field "$id1" bytes_done)"
[ "$(job_field "$id1" state)" = paused ] || fail "job $id1 left paused by itself: $(job_field "$id1" state)"
wipectl resume "$id1" > "$TEST_DIR/out" 2> "$TEST_DIR/err" || fail "resume $id1 exited $?: $(cat "$TEST_DIR/err")"
state=$(wait_state "$id1" 'running|flushing|done' 2) || fail "job $id1 is $state 2 s after resume"
state=$(wait_job "$id1" 60)
[ "$state" = done ] || fail "job $id1 ended $state"
check_last_pass "$d1" "$id1"
report=$(wipectl --json report "$id1")
jq_is "$report" '[.history[].event] | "\(index("paused") != null) \(index("resumed") != null)"' "true true" "report $id1 history"
jq_is "$report" '[.history[].event] | index("paused") < rindex("resumed")' true "report $id1 history order"
jq_is "$report" '.verification.result' passed "report $id1"

# --- an ended job cannot be paused or cancelled ----------------------------------------------
expect_exit 1 wipectl pause "$id1"
grep -Eqi "EALREADY|already" "$TEST_DIR/err" || fail "pause of a done job: $(cat "$TEST_DIR/err")"
[ "$(op_code pause "$id1")" = EALREADY ] || fail "pause op of a done job: $(op_code pause "$id1")"
[ "$(op_code cancel "$id1")" = EALREADY ] || fail "cancel op of a done job: $(op_code cancel "$id1")"
[ "$(op_code pause 999999)" = ESRCH ] || fail "pause op of an unknown job: $(op_code pause 999999)"
[ "$(op_code resume 999999)" = ESRCH ] || fail "resume op of an unknown job: $(op_code resume 999999)"
[ "$(op_code forget 999999)" = ESRCH ] || fail "forget op of an unknown job: $(op_code forget 999999)"
expect_exit 1 wipectl forget 999999

# --- a paused job cancelled: cancelled, with its report -----------------------------------------
id2=$(submit --verify none --max-rate 50M "$d2")
wait_bytes "$id2" 1 10 || fail "job $id2 does not start"
pause_job "$id2"
wipectl cancel "$id2" > /dev/null || fail "cancel of paused job $id2 exited $?"
state=$(wait_job "$id2" 10)
[ "$state" = cancelled ] || fail "paused job $id2 cancelled ended $state"
for _ in $(seq 50); do [ -f "$STATE/reports/$id2.json" ] && break; sleep 0.1; done
[ -f "$STATE/reports/$id2.json" ] || fail "no report file for cancelled job $id2"
jq_is "$(cat "$STATE/reports/$id2.json")" '"\(.state) \([.history[].event] | index("paused") != null)"' \
        "cancelled true" "report $id2"

# --- forget ------------------------------------------------------------------------------------
id3=$(submit --verify none --max-rate 50M "$d3")
wait_bytes "$id3" 1 10 || fail "job $id3 does not start"
# EBUSY: exit 5 (wipectl(1)).
expect_exit 5 wipectl forget "$id3"
[ "$(op_code forget "$id3")" = EBUSY ] || fail "forget op of a running job: $(op_code forget "$id3")"
[ "$(job_field "$id3" state)" = running ] || fail "job $id3 after a refused forget: $(job_field "$id3" state)"

[ -f "$STATE/jobs/$id1.json" ] || fail "no $STATE/jobs/$id1.json before forget"
wipectl forget "$id1" > "$TEST_DIR/out" 2> "$TEST_DIR/err" || fail "forget of done job $id1 exited $?: $(cat "$TEST_DIR/err")"
wipectl --json list --all | jq -e --argjson id "$id1" 'any(.jobs[]; .id == $id)' > /dev/null &&
        fail "job $id1 still listed after forget"
[ -e "$STATE/jobs/$id1.json" ] && fail "$STATE/jobs/$id1.json still there after forget"
[ -f "$STATE/reports/$id1.json" ] || fail "$STATE/reports/$id1.json gone with forget"
wipectl report "$id1" > "$TEST_DIR/out" 2> "$TEST_DIR/err" || fail "report of forgotten job $id1 exited $?: $(cat "$TEST_DIR/err")"
grep -q "$id1" "$TEST_DIR/out" || fail "report of forgotten job $id1: $(cat "$TEST_DIR/out")"
wipectl --json report "$id1" > "$TEST_DIR/out" || fail "--json report of forgotten job $id1 exited $?"
cmp -s "$TEST_DIR/out" "$STATE/reports/$id1.json" || fail "--json report of forgotten job $id1 differs from its file"
expect_exit 0 wipectl report --check "$STATE/reports/$id1.json"

# --- unprivileged users may not pause, resume, forget or cancel -----------------------------------
if command -v setpriv >/dev/null; then
        chmod 0711 "$TEST_DIR"
        chmod 0666 "$SOCK"
        for op in pause resume forget cancel; do
                out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$WIPECTL_BIN" --socket "$SOCK" "$op" "$id3" 2>&1)
                rc=$?
                [ $rc = 4 ] || fail "unprivileged $op exited $rc: $out"
                echo "$out" | grep -q "permission denied" || fail "unprivileged $op: $out"
        done
        [ "$(job_field "$id3" state)" = running ] || fail "job $id3 after the refused requests: $(job_field "$id3" state)"
else
        hard_error "setpriv missing"
fi
wipectl cancel "$id3" > /dev/null || fail "cancel $id3 exited $?"
[ "$(wait_job "$id3" 10)" = cancelled ] || fail "job $id3 was not cancelled"

# --- a job paused when the daemon stops is still paused after a restart ------------------------------
id4=$(submit --verify none --max-rate 20M "$d4")
wait_bytes "$id4" $((16 << 20)) 20 || fail "job $id4 does not progress"
pause_job "$id4"
b4=$(job_field "$id4" bytes_done)
s4=$(dev_sha256 "$d4")
stop_daemon || fail "daemon exit status $? on SIGTERM"
start_daemon "${OPTS[@]}"
state=$(wait_state "$id4" paused 5) || fail "job $id4, paused at SIGTERM, is $state after the restart"
# Interrupted jobs are resumed at the daemon's first tick; a paused one must not be: 2 s pass
# without it.
sleep 2
[ "$(job_field "$id4" state)" = paused ] || fail "job $id4 was resumed by itself after the restart: $(job_field "$id4" state)"
[ "$(dev_sha256 "$d4")" = "$s4" ] || fail "$d4 was written while job $id4 stayed paused"
c4=$(job_field "$id4" bytes_done)
[ "$c4" -le "$b4" ] || fail "job $id4: $c4 bytes done after the restart, more than the $b4 when paused"
wipectl resume "$id4" > "$TEST_DIR/out" 2> "$TEST_DIR/err" || fail "resume $id4 exited $?: $(cat "$TEST_DIR/err")"
state=$(wait_job "$id4" 60)
[ "$state" = done ] || fail "job $id4 ended $state"
check_last_pass "$d4" "$id4"

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
