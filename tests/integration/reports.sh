#!/bin/bash
# Signed wipe reports: every job that ends (done, failed, cancelled) leaves reports/ID.json, which
# "wipectl --json report" prints byte for byte; it has the fields of a NIST SP 800-88 record and no
# keys; "report --check" accepts it as written and rejects it (exit 9) with any one byte changed or
# against another key. The host key (0600, its public half 0644) survives a restart.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

done_dev=$(make_loop 32M)
thin=$(make_thin_loop 64M 8M) || exit $?
big=$(make_loop 1G)
# The cancelled job's device is rotational: its report has no flash caveat.
if echo 1 > "/sys/block/${big#/dev/}/queue/rotational" 2>/dev/null &&
        [ "$(cat "/sys/block/${big#/dev/}/queue/rotational")" = 1 ]; then
        rotational=true
else
        rotational=false
        note "cannot mark $big rotational: the caveat of a rotational device is not tested"
fi
machine_id=$(cat /etc/machine-id 2>/dev/null) || machine_id=
start_daemon --threads 2

# Three jobs ending three ways.
out=$(wipectl --json wipe --yes --passes random,zero,random --verify last "$done_dev") || fail "wipe of $done_dev exited $?: $out"
done_id=$(echo "$out" | jq -r '.jobs[0].id')
check_last_pass "$done_dev" "$done_id"
out=$(wipectl --json wipe --yes --no-wait --verify none "$thin") || fail "submit on $thin exited $?: $out"
fail_id=$(echo "$out" | jq -r '.jobs[0].id')
[ "$(wait_job "$fail_id" 60)" = failed ] || fail "job $fail_id on a full device did not fail"
out=$(wipectl --json wipe --yes --no-wait --verify sample --max-rate 50M "$big") || fail "submit on $big exited $?: $out"
cancel_id=$(echo "$out" | jq -r '.jobs[0].id')
wait_bytes "$cancel_id" 1 10 || fail "job $cancel_id does not start"
wipectl cancel "$cancel_id" > /dev/null || fail "cancel $cancel_id exited $?"
[ "$(wait_job "$cancel_id" 10)" = cancelled ] || fail "job $cancel_id was not cancelled"

openssl genpkey -algorithm ed25519 -out "$TEST_DIR/other.pem" 2>/dev/null &&
        openssl pkey -in "$TEST_DIR/other.pem" -pubout -out "$TEST_DIR/other.pub" 2>/dev/null ||
        hard_error "openssl cannot make an Ed25519 key"
[ "$(stat -c %a "$STATE/host-key.pem" 2>&1)" = 600 ] || fail "$STATE/host-key.pem: mode $(stat -c %a "$STATE/host-key.pem" 2>&1)"
[ "$(stat -c %a "$STATE/host-key.pub" 2>&1)" = 644 ] || fail "$STATE/host-key.pub: mode $(stat -c %a "$STATE/host-key.pub" 2>&1)"

# tamper FILE WHAT SED_EXPR: a copy of FILE with SED_EXPR applied, which must change exactly one
# byte; report --check of it exits 9.
tamper() {
        local file=$1 what=$2 copy=$TEST_DIR/tampered.json
        sed "$3" "$file" > "$copy"
        [ "$(cmp -l "$file" "$copy" 2>/dev/null | wc -l)" = 1 ] || hard_error "tamper $what: not one byte changed"
        wipectl report --check "$copy" > "$TEST_DIR/out" 2> "$TEST_DIR/err"
        local rc=$?
        [ $rc = 9 ] || fail "report --check of $file with $what changed exited $rc, expected 9: $(cat "$TEST_DIR/out" "$TEST_DIR/err")"
}

# check_report ID STATE SIZE VERIFY: the report file of job ID, ended STATE, and its checks.
check_report() {
        local id=$1 state=$2 size=$3 vmode=$4 f=$STATE/reports/$1.json r d m
        for _ in $(seq 50); do [ -f "$f" ] && break; sleep 0.1; done
        [ -f "$f" ] || fail "job $id ended $state but there is no $f: $(ls -la "$STATE/reports" 2>&1)"
        wipectl --json report "$id" > "$TEST_DIR/report.out" || fail "report $id exited $?"
        cmp "$TEST_DIR/report.out" "$f" || fail "wipectl --json report $id differs from $f"
        grep "report written" "$TEST_DIR/daemon.log" | grep -qF "$f" || fail "no 'report written' log line names $f"
        r=$(cat "$f")
        jq_is "$r" '"\(.job) \(.state)"' "$id $state" "$f"
        jq_starts "$r" '.tool' "wiped " "$f"
        jq_is "$r" '.host.hostname' "$(uname -n)" "$f"
        if [ -n "$machine_id" ]; then
                jq_is "$r" '.host.machine_id' "$machine_id" "$f"
        else
                jq_is "$r" '.host | has("machine_id")' true "$f"
        fi
        jq_is "$r" '"\(.identity.size) \(.identity.logical_sector)"' "$size 512" "$f"
        jq_is "$r" '"\(.method | type) \(.passes | length > 0) \([.passes[].pattern | type == "string"] | all)"' \
                "string true true" "$f"
        jq_is "$r" '[.passes[] | select(.pattern == "random") | .key_fingerprint | type == "string" and length >= 16] | all' \
                true "$f: key fingerprints"
        jq_is "$r" '[.. | objects | has("key")] | any' false "$f: keys"
        jq_is "$r" '.verification.mode' "$vmode" "$f"
        jq_is "$r" '[.started_at, .ended_at, .duration_s, .bytes_written, .avg_rate_bps] | map(type) | join(" ")' \
                "number number number number number" "$f"
        jq_is "$r" '.ended_at >= .started_at and .duration_s >= 0' true "$f"
        jq_is "$r" '.nist_category' Clear "$f"
        jq_is "$r" 'if .identity.rotational then .caveat == null else (.caveat | type == "string" and length > 0) end' \
                true "$f: caveat for rotational $(echo "$r" | jq .identity.rotational)"
        jq_is "$r" '"\(.history | type) \(.history[0].event) \(.history[-1].event)"' "array started ended" "$f: history"
        jq_is "$r" '[.history[] | (.at | type == "number") and (.event | type == "string")] | all' true "$f: history"
        jq_is "$r" '[.history[] | ["event", "at", "node", "reason", "pass", "phase", "bytes_done"] - keys] | add | join(" ")' \
                "" "$f: fields missing from history events"
        jq_is "$r" '"\(.interruptions) \(.resumes) \(.bad_ranges | type) \(.errors | type)"' "0 0 array array" "$f"
        if [ "$state" = failed ]; then
                jq_is "$r" '.errors | length > 0 and (.[0].code | type == "string") and (.[0].message | type == "string")' \
                        true "$f: errors of a failed job"
        elif [ "$state" = done ]; then
                jq_is "$r" '.errors | length' 0 "$f: errors of a done job"
        fi
        jq_is "$r" ".report_file | endswith(\"/reports/$id.json\")" true "$f: report_file"
        jq_is "$r" '.signature | "\(.algorithm) \(.key_id | type) \(.public_key | type) \(.value | type)"' \
                "ed25519 string string string" "$f: signature"

        expect_exit 0 wipectl report --check "$f"
        expect_exit 0 wipectl report --check "$f" --key "$STATE/host-key.pub"
        expect_exit 9 wipectl report --check "$f" --key "$TEST_DIR/other.pub"
        # One byte changed anywhere: a digit, a letter, a space, the final newline.
        m=$(grep -oE '"bytes_written": [0-9]+' "$f" | head -n 1)
        [ -n "$m" ] || fail "$f: no \"bytes_written\": N"
        d=${m: -1}
        tamper "$f" "a digit of bytes_written" "0,/$m/s//${m%?}$(((d + 1) % 10))/"
        tamper "$f" "a letter of the node" '0,/"node": "\/dev\/loop/s//"node": "\/dev\/laop/'
        tamper "$f" "a letter of the tool" '0,/"tool": "wiped/s//"tool": "Wiped/'
        tamper "$f" "a space (a tab instead)" '0,/": /s//":\t/'
        head -c -1 "$f" > "$TEST_DIR/tampered.json" && printf ' ' >> "$TEST_DIR/tampered.json"
        expect_exit 9 wipectl report --check "$TEST_DIR/tampered.json"
        # The copy as it was is still good (the check reads the bytes, not the name).
        cp "$f" "$TEST_DIR/copy.json"
        expect_exit 0 wipectl report --check "$TEST_DIR/copy.json"
}

check_report "$done_id" done $((32 << 20)) last
check_report "$fail_id" failed $((64 << 20)) none
check_report "$cancel_id" cancelled $((1 << 30)) sample
jq_is "$(cat "$STATE/reports/$cancel_id.json")" .identity.rotational "$rotational" "report $cancel_id"
jq_is "$(cat "$STATE/reports/$done_id.json")" '[.passes[].pattern] | join(",")' random,zero,random "report $done_id"
# Not a report at all.
echo '{"job":1}' > "$TEST_DIR/plain.json"
expect_exit 9 wipectl report --check "$TEST_DIR/plain.json"
expect_exit 9 wipectl report --check /etc/hostname

# Root may see the keys, the file never holds them.
keys=$(wipectl --json report --keys "$done_id") || fail "report --keys $done_id exited $?"
jq_is "$keys" '[.passes[] | select(.pattern == "random") | .key | test("^[0-9a-f]{32,64}$")] | "\(length) \(all)"' \
        "2 true" "report --keys $done_id"
grep -q '"key"' "$STATE/reports/$done_id.json" && fail "$STATE/reports/$done_id.json holds a key"

# The text form.
wipectl report "$done_id" > "$TEST_DIR/text" || fail "report $done_id exited $?"
grep -q "NIST SP 800-88" "$TEST_DIR/text" || fail "text report lacks 'NIST SP 800-88': $(cat "$TEST_DIR/text")"
grep -q "Signed" "$TEST_DIR/text" || fail "text report lacks 'Signed': $(cat "$TEST_DIR/text")"

# The host key survives a restart: reports from before and after have the same key_id, and the
# earlier ones are still served byte for byte.
key_id=$(jq -r .signature.key_id "$STATE/reports/$done_id.json")
key_sum=$(sha256sum < "$STATE/host-key.pem")
stop_daemon || fail "daemon exit status $?"
# Checking needs no daemon.
"$WIPECTL_BIN" --socket "$TEST_DIR/none.sock" report --check "$STATE/reports/$done_id.json" > /dev/null 2> "$TEST_DIR/err" ||
        fail "report --check without the daemon exited $?: $(cat "$TEST_DIR/err")"
start_daemon --threads 2
[ "$(sha256sum < "$STATE/host-key.pem")" = "$key_sum" ] || fail "$STATE/host-key.pem changed across a restart"
out=$(wipectl --json wipe --yes --method zero --verify none "$done_dev") || fail "wipe after the restart exited $?"
id2=$(echo "$out" | jq -r '.jobs[0].id')
check_report "$id2" done $((32 << 20)) none
jq_is "$(cat "$STATE/reports/$id2.json")" .signature.key_id "$key_id" "report $id2 after a restart"
for id in "$done_id" "$fail_id" "$cancel_id"; do
        wipectl --json report "$id" > "$TEST_DIR/report.out" || fail "report $id after a restart exited $?"
        cmp "$TEST_DIR/report.out" "$STATE/reports/$id.json" || fail "report $id after a restart differs from its file"
        expect_exit 0 wipectl report --check "$STATE/reports/$id.json" --key "$STATE/host-key.pub"
done

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
