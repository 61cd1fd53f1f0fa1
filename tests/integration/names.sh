#!/bin/bash
# One naming scheme (wiped(8) NAMES AND UNITS) in what status, report, version, submit and watch
# send: snake_case names; a rate ends in _bps, a byte count in _bytes (or is a *size); a job's id is
# "job". The names of the release before are sent beside the new ones, with the same values, until
# the next release: only those may break the rule.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

d1=$(make_loop 32M)
start_daemon --max-rate 1G

# The rule over every name of a document, deprecated names excepted. Object keys that are values
# (cipher and backend names under keystream) are not names.
check_names() {
        local what=$1 doc=$2 bad
        bad=$(echo "$doc" | jq -r '
          def deprecated: ["id", "size", "bytes_done", "bytes_total", "bytes_written", "bytes_read",
                           "max_rate", "max_bad", "buffer_memory", "mbps"];
          [paths | . as $p | select(($p[-1] | type) == "string")
             | select(($p | index("keystream")) == null or ($p | length) - ($p | index("keystream")) > 3)
             | $p[-1]] | unique[] | select(. as $k | deprecated | index($k) | not)
          | select((test("^[a-z][a-z0-9_]*$") | not)
                   or (test("rate") and (test("_bps$") | not))
                   or test("^bytes_")
                   or (test("bytes") and (test("_bytes$") | not)))') || fail "$what: jq failed"
        [ -z "$bad" ] || fail "$what: names against the scheme: $(echo $bad)"
}

out=$(wipectl --json wipe --yes --no-wait --verify all "$d1") || fail "wipe exited $?: $out"
check_names submit "$out"
id=$(echo "$out" | jq -r '.jobs[0].job')
[ "$(echo "$out" | jq -r '.jobs[0].id')" = "$id" ] || fail "submit: deprecated id is not job"
check_names "status (running)" "$(wipectl --json status)"
state=$(wait_job "$id" 60)
[ "$state" = done ] || fail "job $id ended $state"
st=$(wipectl --json status "$id")
check_names status "$st"
# New and deprecated names say the same.
jq_is "$st" '.jobs[0] | [.job == .id, .size_bytes == .size, .work_done_bytes == .bytes_done,
        .work_total_bytes == .bytes_total, .max_rate_bps == .max_rate, .checkpoint.work_done_bytes == .checkpoint.bytes_done]
        | all' true "status: new and deprecated names"
# Two passes' work (a write and a full read back) of a 32 MiB device; the phase in device bytes.
jq_is "$st" '.jobs[0] | "\(.size_bytes) \(.work_total_bytes) \(.phase_total_bytes) \(.phase_done_bytes)"' \
        "$((32 << 20)) $((64 << 20)) $((32 << 20)) $((32 << 20))" "status: device and work bytes"
jq_is "$st" '.jobs[0].rate_bps > 0' true "status: a finished job's rate (its average)"
jq_is "$st" '.daemon | [.max_rate_bps == .max_rate, .buffer_memory_bytes == .buffer_memory, .max_bad_bytes == .max_bad] | all' \
        true "status daemon: new and deprecated names"
rep=$(wipectl --json report "$id") || fail "report exited $?"
check_names report "$rep"
jq_is "$rep" '[.job == '"$id"', .size_bytes == .bytes_total, .written_bytes == .bytes_written, .max_rate_bps == .max_rate,
        (.passes[0].verified.read_bytes == .passes[0].verified.bytes_read)] | all' true "report: new and deprecated names"
ver=$(wipectl --json version) || fail "version exited $?"
check_names version "$ver"
jq_is "$ver" '.daemon.keystream | to_entries | map(.value | (.rate_bps | keys) == (.mbps | keys)) | all' true "version: keystream rate_bps"
# watch: the reply and its events.
ev=$(request '{"id":1,"op":"watch","jobs":['"$id"']}' 2>/dev/null | head -3 | jq -s .) || fail "watch request failed"
check_names watch "$ev"
# Text: the same headings in status and watch.
text=$(wipectl status "$id") || fail "status exited $?"
echo "$text" | head -1 | grep -Eq '^JOB +DEVICE +STATE +METHOD +PHASE ' || fail "status heading: $(echo "$text" | head -1)"
pass
