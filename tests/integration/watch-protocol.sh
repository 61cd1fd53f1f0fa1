#!/bin/bash
# The daemon's watch request, spoken directly over the socket (socat): the reply (the watched jobs
# now), then event lines without id or ok: "state" within ~0.1 s of a change of state, pass or
# phase, "progress" every interval while a job runs, "end" once when every watched job has ended
# (at once when there is none), and nothing after it. Unknown jobs are ESRCH, bad intervals EINVAL,
# anyone may watch, and a watcher that vanishes mid-stream leaves the daemon serving the others.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

command -v socat >/dev/null || hard_error "socat missing (tools/install-deps installs it)"

# lines_json FILE: every line of FILE is one JSON object (else fail).
lines_json() {
        local n_lines n_json
        n_lines=$(wc -l < "$1")
        n_json=$(jq -c . "$1" 2>/dev/null | wc -l) || fail "$1: a line is not JSON: $(head -c 600 "$1")"
        [ "$n_lines" = "$n_json" ] || fail "$1: $n_lines lines but $n_json JSON values"
        jq -e -s 'all(type == "object")' "$1" > /dev/null || fail "$1: a line is not a JSON object"
}

# finish_conn: wait until the background watch connection (WATCH_PID) ended by itself.
finish_conn() { wait "$WATCH_PID" 2>/dev/null; stop_pid "$WATCH_PID"; }

# events FILE: the event lines of a watch connection (every line but the replies), as a JSON array.
events() { jq -s '[.[] | select(has("event"))]' "$1"; }

slow=$(make_loop 512M)
two_b=$(make_loop 256M)
two_c=$(make_loop 64M)
vanish=$(make_loop 512M)
start_daemon --threads 2

# --- Nothing to watch: the reply with no job, then "end" with no job at once. ---
t0=$(now_s)
watch_conn "$TEST_DIR/none" 5 '{"id":1,"op":"watch"}'
wait_match "$TEST_DIR/none" '"event": *"end"' 5 || fail "no end event for a watch with no job: $(cat "$TEST_DIR/none")"
finish_conn
lines_json "$TEST_DIR/none"
[ "$(wc -l < "$TEST_DIR/none")" = 2 ] || fail "watch with no job: expected the reply and end: $(cat "$TEST_DIR/none")"
r=$(sed -n 1p "$TEST_DIR/none")
jq_is "$r" '.id' 1 "watch reply"
jq_is "$r" '.ok' true "watch reply"
jq_is "$r" '.jobs | length' 0 "watch reply with no job"
jq_is "$r" '.interval_ms' 1000 "default interval"
e=$(sed -n 2p "$TEST_DIR/none")
jq_is "$e" '.event' end "watch with no job"
jq_is "$e" '.jobs' '[]' "end with no job"
jq_is "$e" 'has("id") or has("ok")' false "an event line"
jq_is "$e" '.time | type' number "end event time"
late=$(jq -n --argjson t "$(echo "$e" | jq .time)" --argjson t0 "$t0" '$t - $t0')
note "end of an empty watch came $late s after the request"
jq -e -n --argjson d "$late" '$d < 0.5 and $d > -1' > /dev/null || fail "end of an empty watch came $late s after the request"

# --- One running job, interval 200 ms: reply, progress about every 0.2 s, state done, end. ---
id=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 100M "$slow" | jq -r '.jobs[0].id') ||
        fail "submit of $slow failed"
# The reply and a version request sent on the same connection: its reply comes among the events.
watch_conn "$TEST_DIR/one" 60 '{"id":2,"op":"watch","interval_ms":200}' '{"id":3,"op":"version"}'
wait_match "$TEST_DIR/one" '"event": *"end"' 60 || fail "no end event within 60 s: $(tail -c 600 "$TEST_DIR/one")"
finish_conn
lines_json "$TEST_DIR/one"
r=$(sed -n 1p "$TEST_DIR/one")
jq_is "$r" '.id' 2 "watch reply"
jq_is "$r" '.ok' true "watch reply"
jq_is "$r" '.interval_ms' 200 "watch reply"
jq_is "$r" '[.jobs[].id] | join(",")' "$id" "the jobs of a default watch"
jq_is "$r" '.jobs[0].state' running "the job in the reply"
for f in id device node state method pass_list cipher pass passes phase size bytes_done bytes_total rate_bps eta_s \
        verify sector_size queue_depth io_size max_rate started_at ended_at elapsed_s identity; do
        jq_is "$r" ".jobs[0] | has(\"$f\")" true "the JOB of the watch reply"
done
v=$(jq -c 'select(.id == 3)' "$TEST_DIR/one")
jq_is "$v" '.ok' true "a version request on a watch connection"
jq_is "$v" '.version | type' string "a version request on a watch connection"
ev=$(events "$TEST_DIR/one")
jq_is "$ev" '[.[] | select(has("id") or has("ok"))] | length' 0 "event lines"
jq_is "$ev" '[.[] | .event] - ["state","progress","end"] | length' 0 "event names"
jq_is "$ev" '[.[] | select(.event == "end")] | length' 1 "end events"
jq_is "$ev" '.[-1].event' end "the last event"
jq_is "$(tail -n 1 "$TEST_DIR/one")" '.event' end "the last line"
jq_is "$ev" '[.[] | .time | type] | unique | join(",")' number "event times"
jq_is "$ev" '[.[] | .time] | . == sort' true "event times in order"
jq_is "$ev" '[.[] | select(.event != "end") | .job.id] | unique | join(",")' "$id" "the job of the events"
jq_is "$ev" '[.[] | select(.event != "end") | .job.bytes_done] | . == sort' true "bytes_done never goes back"
n=$(echo "$ev" | jq '[.[] | select(.event == "progress")] | length')
# 512 MiB at 100 MB/s: about 5.4 s, so about 27 progress events at 0.2 s.
note "job $id: $n progress events at interval 200 ms"
[ "$n" -ge 10 ] || fail "only $n progress events in a 5 s job at interval 200 ms"
gaps=$(echo "$ev" | jq -c '[.[] | select(.event == "progress") | .time] | [range(1; length) as $i | .[$i] - .[$i - 1]] | sort')
median=$(echo "$gaps" | jq '.[length / 2 | floor]')
note "progress gaps: median $median s, min $(echo "$gaps" | jq '.[0]'), max $(echo "$gaps" | jq '.[-1]')"
jq -e -n --argjson m "$median" '$m >= 0.15 and $m <= 0.6' > /dev/null ||
        fail "progress events at interval 200 ms came every $median s (median)"
jq -e -n --argjson g "$gaps" '$g[0] >= 0.1' > /dev/null || fail "progress events faster than the interval: $gaps"
jq_is "$ev" '[.[] | select(.event == "progress") | .job.state] - ["running","flushing"] | length' 0 \
        "the state of progress events"
# The last state event says done, after every progress event; then end.
jq_is "$ev" '[.[] | select(.event == "state")][-1].job.state' done "the last state event"
jq_is "$ev" '(map(.event) | rindex("progress")) < (map(.event == "state" and .job.state == "done") | index(true))' true \
        "no progress after the done state event"
jq_is "$ev" '.[-1].jobs | length' 1 "end"
jq_is "$ev" '.[-1].jobs[0].id' "$id" "end"
jq_is "$ev" '.[-1].jobs[0].state' done "end"
jq_is "$ev" '.[-1].jobs[0] | .bytes_done == .bytes_total' true "end"
lag=$(echo "$ev" | jq '([.[] | select(.event == "state" and .job.state == "done")][0] | .time - .job.ended_at)')
# ended_at is in whole seconds (truncated): the event comes at most 1 s + ~0.1 s after it.
note "the done state event came $lag s after the job's ended_at (whole seconds)"
jq -e -n --argjson l "$lag" '$l < 1.4 and $l >= -0.01' > /dev/null || fail "the done state event came $lag s after the job ended"

# --- Two jobs, watched by id, interval 1 s: end only when both ended; phase changes are state
# events; a default watch takes only jobs that have not ended (not $id). ---
# (256 MiB at 50 MB/s, and 64 MiB written then read back at 25 MB/s: each about 5.4 s, so that the
# watches below start while both run, long before the second one's verify phase, 2.7 s in.)
idb=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 50M "$two_b" | jq -r '.jobs[0].id')
idc=$(wipectl --json wipe --yes --no-wait --verify last --max-rate 25M "$two_c" | jq -r '.jobs[0].id')
[ -n "$idb" ] && [ -n "$idc" ] || fail "submit of two jobs failed"
watch_conn "$TEST_DIR/two" 60 "{\"id\":4,\"op\":\"watch\",\"jobs\":[$idc,$idb]}"
watch_conn "$TEST_DIR/dflt" 60 '{"id":5,"op":"watch"}'
dflt_pid=$WATCH_PID
wait_match "$TEST_DIR/two" '"event": *"end"' 60 || fail "no end event for two jobs: $(tail -c 600 "$TEST_DIR/two")"
finish_conn
wait_match "$TEST_DIR/dflt" '"event": *"end"' 10 || fail "no end event for the default watch"
WATCH_PID=$dflt_pid finish_conn
lines_json "$TEST_DIR/two"
r=$(sed -n 1p "$TEST_DIR/two")
jq_is "$r" '.interval_ms' 1000 "watch reply"
jq_is "$r" '[.jobs[].id] | sort | join(",")' "$(printf '%s\n' "$idb" "$idc" | sort -n | paste -sd,)" "the jobs of a watch by id"
jq_is "$(sed -n 1p "$TEST_DIR/dflt")" '[.jobs[].id] | sort | join(",")' "$(printf '%s\n' "$idb" "$idc" | sort -n | paste -sd,)" \
        "the jobs of a default watch (jobs not ended)"
ev=$(events "$TEST_DIR/two")
jq_is "$ev" '[.[] | select(.event == "end")] | length' 1 "end events"
jq_is "$ev" '.[-1].event' end "the last event"
jq_is "$ev" '.[-1].jobs | map(.state) | join(",")' done,done "end"
jq_is "$ev" '[.[] | select(.event == "state" and .job.state == "done") | .job.id] | sort | join(",")' \
        "$(printf '%s\n' "$idb" "$idc" | sort -n | paste -sd,)" "done state events"
# End comes after the later job ended.
jq_is "$ev" '.[-1].time >= ([.[-1].jobs[].ended_at] | max) - 0.05' true "end before the last job ended"
# The verification of $two_c is a phase change: a state event in phase verify.
jq_is "$ev" "[.[] | select(.event == \"state\" and .job.id == $idc and .job.phase == \"verify\")] | length > 0" true \
        "a state event for the verify phase of job $idc"
for j in "$idb" "$idc"; do
        gaps=$(echo "$ev" | jq -c "[.[] | select(.event == \"progress\" and .job.id == $j) | .time] |
                [range(1; length) as \$i | .[\$i] - .[\$i - 1]]")
        jq -e -n --argjson g "$gaps" '$g | all(. >= 0.9)' > /dev/null ||
                fail "job $j: progress events closer than the 1 s interval: $gaps"
done
[ "$(job_field "$idb" state)" = done ] && [ "$(job_field "$idc" state)" = done ] || fail "jobs $idb $idc not done"

# --- A watch of an ended job by id: the reply, then end at once. ---
watch_conn "$TEST_DIR/ended" 5 "{\"id\":6,\"op\":\"watch\",\"jobs\":[$id]}"
wait_match "$TEST_DIR/ended" '"event": *"end"' 5 || fail "no end event for an ended job: $(cat "$TEST_DIR/ended")"
finish_conn
[ "$(wc -l < "$TEST_DIR/ended")" = 2 ] || fail "watch of an ended job: $(cat "$TEST_DIR/ended")"
jq_is "$(sed -n 1p "$TEST_DIR/ended")" '.jobs[0].state' done "watch of an ended job"
jq_is "$(sed -n 2p "$TEST_DIR/ended")" '[.event, (.jobs | map(.id) | join(","))] | join(" ")' "end $id" "watch of an ended job"

# --- Errors: unknown job ESRCH, bad interval or jobs EINVAL; the connection serves on. ---
# expect_error LINE CODE [TEXT]: the reply to LINE is an error with this code (and TEXT in its message).
expect_error() {
        local reply
        reply=$(request "$1" | head -n 1)
        jq_is "$reply" '.ok' false "${1:0:80}"
        jq_is "$reply" '.error.code' "$2" "${1:0:80}"
        [ -z "${3:-}" ] || jq_starts "$reply" '.error.message' "$3" "${1:0:80}"
}
expect_error '{"id":7,"op":"watch","jobs":[999999]}' ESRCH "job 999999"
expect_error "{\"id\":7,\"op\":\"watch\",\"jobs\":[$id,888888]}" ESRCH "job 888888"
expect_error '{"id":8,"op":"watch","interval_ms":99}' EINVAL
expect_error '{"id":8,"op":"watch","interval_ms":3600001}' EINVAL
expect_error '{"id":8,"op":"watch","interval_ms":0}' EINVAL
expect_error '{"id":8,"op":"watch","interval_ms":-200}' EINVAL
expect_error '{"id":8,"op":"watch","interval_ms":"200"}' EINVAL
expect_error '{"id":8,"op":"watch","interval_ms":250.5}' EINVAL
expect_error '{"id":8,"op":"watch","jobs":"1"}' EINVAL
expect_error '{"id":8,"op":"watch","jobs":["1"]}' EINVAL
expect_error '{"id":8,"op":"watch","jobs":[-1]}' EINVAL
out=$(request '{"id":9,"op":"watch","jobs":[424242]}' '{"id":10,"op":"version"}')
jq_is "$(echo "$out" | sed -n 2p)" '[.id, .ok] | map(tostring) | join(" ")' "10 true" "a request after a refused watch"
# The bounds themselves are accepted.
for ms in 100 3600000; do
        watch_conn "$TEST_DIR/bound" 5 "{\"id\":11,\"op\":\"watch\",\"jobs\":[$id],\"interval_ms\":$ms}"
        wait_match "$TEST_DIR/bound" '"event": *"end"' 5 || fail "interval_ms $ms: $(cat "$TEST_DIR/bound")"
        finish_conn
        jq_is "$(sed -n 1p "$TEST_DIR/bound")" '.interval_ms' "$ms" "interval_ms $ms"
done

# --- Anyone may watch (no root, no wiped group). ---
if command -v setpriv >/dev/null; then
        chmod 0711 "$TEST_DIR"
        chmod 0666 "$SOCK"
        out=$(printf '%s\n' "{\"id\":12,\"op\":\"watch\",\"jobs\":[$id]}" |
                setpriv --reuid=nobody --regid=nogroup --clear-groups socat -t 2 - "UNIX-CONNECT:$SOCK" | head -n 1)
        jq_is "$out" '.ok' true "an unprivileged watch"
        jq_is "$out" '.jobs[0].id' "$id" "an unprivileged watch"
else
        note "setpriv missing: the unprivileged watch is not tested"
fi

# --- Watchers that vanish mid-stream: the daemon serves on, the other watcher goes on. ---
idv=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 60M "$vanish" | jq -r '.jobs[0].id') ||
        fail "submit of $vanish failed"
watch_conn "$TEST_DIR/stay" 60 '{"id":13,"op":"watch","interval_ms":200}'
stay_pid=$WATCH_PID
watch_conn "$TEST_DIR/gone" 60 '{"id":14,"op":"watch","interval_ms":100}'
wait_match "$TEST_DIR/gone" '"event": *"progress"' 10 || fail "no progress for the watcher that will vanish"
kill -KILL "$WATCH_PID"
stop_pid "$WATCH_PID"
t_kill=$(now_s)
# More that vanish: at once after the request, and after reading a little.
for _ in $(seq 10); do
        printf '%s\n' '{"id":15,"op":"watch","interval_ms":100}' | socat -t 0 - "UNIX-CONNECT:$SOCK" > /dev/null 2>&1
done
for _ in $(seq 3); do
        watch_conn "$TEST_DIR/gone2" 10 '{"id":16,"op":"watch","interval_ms":100}'
        wait_until 30 "a progress (or end) event for a watcher about to vanish" \
                grep -Eq '"event": *"(progress|end)"' "$TEST_DIR/gone2"
        kill -KILL "$WATCH_PID"
        stop_pid "$WATCH_PID"
done
daemon_alive || fail "the daemon died when watchers vanished"
timeout 10 "$WIPECTL_BIN" --socket "$SOCK" --json status "$idv" > "$TEST_DIR/st" || fail "status after vanished watchers failed"
jq_is "$(cat "$TEST_DIR/st")" '.jobs[0].id' "$idv" "status after vanished watchers"
# The watcher that stayed gets progress after the others vanished, then the job's end.
wait_match "$TEST_DIR/stay" '"event": *"end"' 60 || fail "the staying watcher got no end: $(tail -c 600 "$TEST_DIR/stay")"
WATCH_PID=$stay_pid finish_conn
lines_json "$TEST_DIR/stay"
ev=$(events "$TEST_DIR/stay")
jq_is "$ev" "[.[] | select(.event == \"progress\" and .time > $t_kill)] | length > 0" true \
        "progress for the staying watcher after the others vanished"
jq_is "$ev" '.[-1].jobs[0].state' done "end for the staying watcher"
[ "$(job_field "$idv" state)" = done ] || fail "job $idv: $(job_field "$idv" state)"

# --- A watcher does not hold up the daemon's stop. ---
idw=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 20M "$slow" | jq -r '.jobs[0].id')
watch_conn "$TEST_DIR/stop" 30 '{"id":17,"op":"watch"}'
wait_match "$TEST_DIR/stop" '"ok": *true' 5 || fail "no reply to the watch before the stop"
daemon_alive || fail "daemon died"
kill -TERM "$DAEMON_PID"
for _ in $(seq 200); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$DAEMON_PID" 2>/dev/null && fail "the daemon did not stop within 20 s with a watcher connected"
wait "$DAEMON_PID"
rc=$?
DAEMON_PID=
[ $rc = 0 ] || fail "daemon exit status $rc"
finish_conn
note "a watcher of job $idw when the daemon stopped got: $(jq -c '{event, state: (.job.state // (.jobs // [] | map(.state)))}' "$TEST_DIR/stop" 2>/dev/null | tail -n +2 | paste -sd' ')"
pass
