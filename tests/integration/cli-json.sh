#!/bin/bash
# wipectl --json: every command prints one JSON document on stdout (watch: one object per line)
# with the fields wipectl(1) documents (JSON OUTPUT), and nothing else; errors go to stderr and
# into the JSON object (cli-json-errors.sh). --bytes prints sizes in text as raw byte counts. Every command has --help (exit 0,
# "Usage:"), which needs no daemon.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

COMMANDS="version status list cancel report probe methods verify watch wait wipe"

# json_doc WHAT ARG...: run wipectl --json ARG...; fail unless it exits 0 and prints exactly one
# JSON object; prints it.
json_doc() {
        local what=$1 out rc
        shift
        out=$(timeout 60 "$WIPECTL_BIN" --socket "$SOCK" --json "$@" 2> "$TEST_DIR/json.err")
        rc=$?
        [ $rc = 0 ] || fail "$what: wipectl --json $* exited $rc: $(cat "$TEST_DIR/json.err")"
        [ "$(echo "$out" | jq -s 'length' 2>/dev/null)" = 1 ] || fail "$what: not one JSON document: $out"
        [ "$(echo "$out" | jq -r 'type')" = object ] || fail "$what: not a JSON object: $out"
        echo "$out"
}

# JOB_CHECK: a jq filter printing what is wrong with a JOB object (empty when nothing).
# shellcheck disable=SC2016
JOB_CHECK='
def want(k; ok): if has(k) and (.[k] | ok) then empty else "\(k) = \(.[k] | tojson)" end;
def final: IN("done", "failed", "cancelled", "interrupted");
[ want("id"; type == "number"),
  want("device"; type == "string"),
  want("node"; type == "string"),
  want("state"; IN("running", "flushing", "done", "failed", "cancelled", "interrupted")),
  want("method"; type == "string"),
  want("pass_list"; type == "array" and length > 0 and all(.[]; type == "string")),
  want("cipher"; type == "string" or . == null),
  want("pass"; type == "number"),
  want("passes"; type == "number" and . >= 1),
  want("phase"; . == null or IN("write", "flush", "verify")),
  want("size"; type == "number" and . > 0),
  want("bytes_done"; type == "number" and . >= 0),
  want("bytes_total"; type == "number" and . > 0),
  want("rate_bps"; type == "number" or . == null),
  want("eta_s"; type == "number" or . == null),
  want("verify"; type == "object" and (.mode | IN("none", "sample", "last", "all"))),
  want("sector_size"; type == "number"),
  want("queue_depth"; type == "number"),
  want("io_size"; type == "number"),
  want("max_rate"; type == "number"),
  want("started_at"; type == "number"),
  want("ended_at"; type == "number" or . == null),
  want("elapsed_s"; type == "number"),
  want("identity"; type == "object" and (.size | type) == "number" and has("model") and has("serial")),
  (if .bytes_done > .bytes_total then "bytes_done > bytes_total" else empty end),
  (if .passes != (.pass_list | length) then "passes != length of pass_list" else empty end),
  (if (.state | final) then
        (if .ended_at == null then "ended_at null in an ended job" else empty end),
        (if .phase != null then "phase \(.phase) in an ended job" else empty end)
   else (if .ended_at != null then "ended_at in a running job" else empty end) end),
  (if .state == "failed" and ((.error | type) != "object" or (.error.code | type) != "string"
        or (.error.message | type) != "string") then "error of a failed job" else empty end),
  (if .state == "done" and .bytes_done != .bytes_total then "bytes_done != bytes_total in a done job" else empty end)
] | join("; ")'

# check_jobs JSON FILTER WHAT: every JOB that FILTER selects in JSON has the documented fields.
check_jobs() {
        local bad
        bad=$(echo "$1" | jq -r "[$2 | ($JOB_CHECK) | select(. != \"\")] | join(\" | \")") || fail "$3: jq failed on $1"
        [ -z "$bad" ] || fail "$3: JOB fields: $bad
in: $1"
}

a=$(make_loop 64M)
b=$(make_loop 64M)
slow=$(make_loop 1G)
start_daemon --threads 2

# --- --help of every command: exit 0, "Usage:", no daemon needed. ---
nosock=$TEST_DIR/none.sock
out=$("$WIPECTL_BIN" --socket "$nosock" --help) || fail "wipectl --help exited $?"
echo "$out" | grep -q "^Usage:" || fail "wipectl --help: no Usage: $out"
for opt in --socket --json --bytes --help --version; do
        echo "$out" | grep -q -- "$opt" || fail "wipectl --help does not list $opt"
done
for cmd in $COMMANDS; do
        echo "$out" | grep -Eq "^ +$cmd( |$)" || fail "wipectl --help does not list the command $cmd"
        h=$("$WIPECTL_BIN" --socket "$nosock" "$cmd" --help 2>&1)
        rc=$?
        [ $rc = 0 ] || fail "wipectl $cmd --help exited $rc: $h"
        echo "$h" | head -n 1 | grep -q "^Usage: wipectl .*$cmd" || fail "wipectl $cmd --help: $h"
        h2=$("$WIPECTL_BIN" --socket "$nosock" --json "$cmd" --help 2>&1) || fail "wipectl --json $cmd --help exited $?"
        [ "$h" = "$h2" ] || fail "wipectl --json $cmd --help differs from $cmd --help"
done
"$WIPECTL_BIN" --socket "$nosock" watch --help | grep -q -- '--interval' || fail "watch --help does not list --interval"
"$WIPECTL_BIN" --socket "$nosock" list --help | grep -q -- '--all' || fail "list --help does not list --all"

# --- version, methods, probe ---
v=$(json_doc version version)
jq_is "$v" '.client | type' string "version"
jq_is "$v" '.daemon.version | type' string "version"
jq_is "$v" '.daemon.protocol | type' number "version"
jq_is "$v" '.daemon.ciphers | type' array "version"
jq_is "$v" '.daemon.threads' 2 "version"

m=$(json_doc methods methods)
jq_is "$m" 'all(.methods[]; (.name | type) == "string" and (.passes | type) == "array"
        and (.description | type) == "string" and (.legacy | type) == "boolean")' true \
        "methods: every entry has name, passes, description, legacy"
jq_is "$m" '[.methods[].name] | contains(["random", "zero", "random-zero", "dod-3pass", "schneier", "gutmann"])' true "methods"
jq_is "$m" '.methods[] | select(.name == "dod-3pass") | .passes | join(",")' zero,one,random "methods"

p=$(json_doc probe probe "$a")
jq_is "$p" '.devices | length' 1 "probe"
jq_is "$p" '.devices[0].path' "$a" "probe"
jq_is "$p" '.devices[0].node' "$a" "probe"
jq_is "$p" '.devices[0].wipeable' true "probe"
jq_is "$p" '.devices[0].identity.size' 67108864 "probe"
jq_is "$p" '.devices[0].signatures | type' array "probe"
jq_is "$p" '.devices[0].partitions | type' array "probe"

# --- wipe --no-wait, wipe (waiting), status, list, report, verify, wait, watch ---
w=$(json_doc "wipe --no-wait" wipe --yes --no-wait --verify none "$a")
jq_is "$w" '.jobs | length' 1 "wipe --no-wait"
jq_is "$w" '.jobs[0].id | type' number "wipe --no-wait"
jq_is "$w" '.jobs[0].device' "$a" "wipe --no-wait"
ida=$(echo "$w" | jq -r '.jobs[0].id')

j=$(json_doc "wait JOB" wait "$ida")
jq_is "$j" '.jobs | length' 1 "wait JOB"
jq_is "$j" '.jobs[0].id' "$ida" "wait JOB"
jq_is "$j" '.jobs[0].state' done "wait JOB"
check_jobs "$j" '.jobs[]' "wait JOB"

# (A rate limit, 64 MiB at 128 MB/s, also holds the job's later verification, whose --no-wait reply
# below must find it running.)
w=$(json_doc "wipe" wipe --yes --verify sample --max-rate 128M "$b")
jq_is "$w" '.jobs | length' 1 "wipe"
jq_is "$w" '.jobs[0].device' "$b" "wipe"
jq_is "$w" '.jobs[0].state' done "wipe"
jq_is "$w" '.jobs[0].verify.mode' sample "wipe"
check_jobs "$w" '.jobs[]' "wipe"
idb=$(echo "$w" | jq -r '.jobs[0].id')

s=$(json_doc "status JOB" status "$ida")
jq_is "$s" '.jobs | length' 1 "status JOB"
jq_is "$s" '.jobs[0].id' "$ida" "status JOB"
jq_is "$s" '.jobs[0] | [.size, .bytes_total, .bytes_done] | map(tostring) | join(" ")' "67108864 67108864 67108864" "status JOB"
jq_is "$s" 'has("daemon")' false "status JOB"
check_jobs "$s" '.jobs[]' "status JOB"

# A running job for status, list, cancel and watch (1 GiB at 16 MB/s: about 67 s, far longer than
# the test takes to cancel it).
idr=$(json_doc "wipe --no-wait" wipe --yes --no-wait --verify none --max-rate 16M "$slow" | jq -r '.jobs[0].id')
for _ in $(seq 100); do [ "$(job_field "$idr" bytes_done)" -gt 0 ] && break; sleep 0.05; done
s=$(json_doc status status)
jq_is "$s" '[.jobs[].id] | sort | map(tostring) | join(",")' "$(printf '%s\n' "$ida" "$idb" "$idr" | sort -n | paste -sd,)" "status"
jq_is "$s" '.daemon.threads' 2 "status"
jq_is "$s" '.daemon | has("io_size") and has("max_rate") and has("buffers")' true "status"
check_jobs "$s" '.jobs[]' "status"
jq_is "$s" ".jobs[] | select(.id == $idr) | .state" running "status of the running job"
jq_is "$s" ".jobs[] | select(.id == $idr) | .phase" write "status of the running job"

l=$(json_doc list list)
check_jobs "$l" '.jobs[]' "list"
jq_is "$l" '[.jobs[].id] | sort | map(tostring) | join(",")' "$(printf '%s\n' "$ida" "$idb" "$idr" | sort -n | paste -sd,)" "list"
la=$(json_doc "list --all" list --all)
check_jobs "$la" '.jobs[]' "list --all"
jq_is "$(jq -n --argjson l "$l" --argjson a "$la" '[$l.jobs[].id] - [$a.jobs[].id] | length')" . 0 \
        "list --all holds every job of list"

# watch JOB: one object per line, start first (the job), end last.
timeout 60 "$WIPECTL_BIN" --socket "$SOCK" --json watch --interval 1 "$idr" > "$TEST_DIR/watch.out" 2> "$TEST_DIR/watch.err" &
wpid=$!
# Cancelled once the watch has shown progress (its --interval 1 s).
wait_until 60 "a progress event of job $idr from --json watch" \
        grep -Eq '"event": *"progress"' "$TEST_DIR/watch.out"
c=$(json_doc "cancel JOB" cancel "$idr")
jq_is "$c" '.job.id' "$idr" "cancel JOB"
check_jobs "$c" '.job' "cancel JOB"
wait $wpid
rc=$?
[ $rc = 7 ] || fail "--json watch of a job cancelled meanwhile exited $rc, expected 7: $(cat "$TEST_DIR/watch.err")"
[ "$(wc -l < "$TEST_DIR/watch.out")" = "$(jq -c . "$TEST_DIR/watch.out" | wc -l)" ] ||
        fail "--json watch: not one JSON value per line: $(head -c 1000 "$TEST_DIR/watch.out")"
ws=$(jq -s -c . "$TEST_DIR/watch.out")
jq_is "$ws" 'all(.[]; type == "object" and (.time | type) == "number")' true "--json watch: objects with a time"
jq_is "$ws" '.[0].event' start "--json watch"
jq_is "$ws" '.[0].jobs | map(.id) | join(",")' "$idr" "--json watch: start"
check_jobs "$ws" '.[0].jobs[]' "--json watch: start"
jq_is "$ws" '[.[1:-1][].event] - ["state", "progress"] | length' 0 "--json watch: the events"
jq_is "$ws" '[.[] | select(.event == "progress")] | length >= 1' true "--json watch: progress events"
check_jobs "$ws" '.[1:-1][].job' "--json watch: state and progress"
jq_is "$ws" '.[-1].event' end "--json watch"
jq_is "$ws" '.[-1].jobs | map(.state) | join(",")' cancelled "--json watch: end"
check_jobs "$ws" '.[-1].jobs[]' "--json watch: end"

r=$(json_doc "report JOB" report "$idb")
jq_is "$r" '.job' "$idb" "report"
jq_is "$r" '.device' "$b" "report"
jq_is "$r" '.state' done "report"
jq_is "$r" '.tool | startswith("wiped ")' true "report"
jq_is "$r" '.bytes_total' 67108864 "report"
jq_is "$r" '.passes | length' 1 "report"
jq_is "$r" '.passes[0].written' true "report"
jq_is "$r" '.passes[0] | has("key")' false "report without --keys"
jq_is "$r" '.verification.mode' sample "report"
jq_is "$r" '.verification.result' passed "report"
jq_is "$r" '.identity.size' 67108864 "report"
jq_is "$r" '.signatures_after | type' array "report"

vn=$(json_doc "verify --no-wait" verify --no-wait --verify last "$idb")
jq_is "$vn" '.job.id' "$idb" "verify --no-wait"
jq_is "$vn" '.job.state' running "verify --no-wait"
jq_is "$vn" '.job.phase' verify "verify --no-wait"
check_jobs "$vn" '.job' "verify --no-wait"
json_doc "wait JOB" wait "$idb" > /dev/null
vw=$(json_doc verify verify "$idb")
jq_is "$vw" '.jobs | length' 1 "verify"
jq_is "$vw" '.jobs[0].id' "$idb" "verify"
jq_is "$vw" '.jobs[0].state' done "verify"
check_jobs "$vw" '.jobs[]' "verify"

# Errors: the message on stderr, and as the one JSON object on stdout (cli-json-errors.sh has more).
out=$("$WIPECTL_BIN" --socket "$SOCK" --json status 999999 2> "$TEST_DIR/err")
rc=$?
[ $rc = 1 ] || fail "--json status 999999 exited $rc"
jq_is "$out" '.error.message' "job 999999: no such job" "--json status 999999"
grep -q '^wipectl: job 999999: no such job' "$TEST_DIR/err" || fail "--json status 999999: $(cat "$TEST_DIR/err")"
out=$("$WIPECTL_BIN" --socket "$SOCK" --json wait 999999 2> "$TEST_DIR/err")
jq_is "$out" '.error.exit_status' 1 "--json wait 999999"
grep -q 'job 999999' "$TEST_DIR/err" || fail "--json wait 999999: $(cat "$TEST_DIR/err")"

# --- --bytes: sizes in text as byte counts; JSON unchanged. ---
plain=$(wipectl status "$ida") || fail "status $ida exited $?"
bytes=$(wipectl --bytes status "$ida") || fail "--bytes status $ida exited $?"
echo "$plain" | grep -q '64.0 MiB' || fail "status of a 64 MiB job does not show 64.0 MiB: $plain"
echo "$bytes" | grep -q '67108864' || fail "--bytes status does not show 67108864: $bytes"
echo "$bytes" | grep -Eq '[0-9] ?[KMGTPE]iB' && fail "--bytes status still shows IEC units: $bytes"
for args in "status" "list" "list --all" "probe $a" "report $ida"; do
        # shellcheck disable=SC2086
        plain=$(wipectl $args 2>&1) || fail "$args exited $?: $plain"
        # shellcheck disable=SC2086
        bytes=$(wipectl --bytes $args 2>&1) || fail "--bytes $args exited $?: $bytes"
        echo "$plain" | grep -q '64.0 MiB' || continue
        echo "$bytes" | grep -q '67108864' || fail "--bytes $args does not show 67108864:
$bytes"
        echo "$bytes" | grep -Eq '[0-9] ?[KMGTPE]iB' && fail "--bytes $args still shows IEC units:
$bytes"
done
wipectl --bytes probe "$a" | grep -q 67108864 || fail "--bytes probe does not show 67108864: $(wipectl --bytes probe "$a")"
[ "$(wipectl --json --bytes status "$ida")" = "$(wipectl --json status "$ida")" ] || fail "--bytes changed the JSON of status"
# (Without the drive health's checked_at: the two probes may fall in two seconds.)
[ "$(wipectl --bytes --json probe "$a" | jq -S 'del(.devices[].identity.by_id) | del(..|.checked_at?)')" = \
  "$(wipectl --json probe "$a" | jq -S 'del(.devices[].identity.by_id) | del(..|.checked_at?)')" ] || fail "--bytes changed the JSON of probe"

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
