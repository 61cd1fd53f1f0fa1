#!/bin/bash
# The sanitization record (wiped(8) REPORTS, issue 20): a wipe with every record option carries
# them into its signed report (which report --check still accepts), its status and the report's
# text; the configuration's destination, operator-* and verifier-* are the defaults, overridden
# key by key; a reload changes new jobs only; a restart and an interrupted-then-resumed job keep
# them; several devices of one submit share one batch and get their own asset tags; a bad value
# is refused with nothing written; the overall status is "erased" for a clean verified wipe,
# "erased with exceptions" for a sampled one and "not erased" for a cancelled one.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

a=$(make_loop 16M)
b=$(make_loop 16M)
c=$(make_loop 16M)
big=$(make_loop 1G)
conf=$TEST_DIR/wiped.conf
cat > "$conf" <<EOF
job-end-hook = echo "\$WIPED_JOB \$WIPED_BATCH \$WIPED_ASSET_TAG" >> $TEST_DIR/hook.out
destination = reuse
operator-name = Conf Operator
operator-organization = Conf Org
verifier-name = Conf Verifier
EOF
start_daemon --config "$conf" --policy-dir none --threads 2

# reload: SIGHUP, then wait until the daemon logged that it read the file again.
reload() {
        local n
        n=$(grep -c 'reloaded' "$TEST_DIR/daemon.log")
        kill -HUP "$DAEMON_PID" || fail "kill -HUP"
        for _ in $(seq 100); do
                [ "$(grep -c 'reloaded' "$TEST_DIR/daemon.log")" -gt "$n" ] && return 0
                sleep 0.1
        done
        fail "no reload logged after SIGHUP"
}

# report_of ID: the signed report, once its file is written; report --check must accept it.
report_of() {
        local f=$STATE/reports/$1.json
        for _ in $(seq 100); do [ -f "$f" ] && break; sleep 0.1; done
        [ -f "$f" ] || fail "job $1 has no report $f"
        wipectl report --check "$f" > /dev/null 2> "$TEST_DIR/err" || fail "report --check $f: $(cat "$TEST_DIR/err")"
        cat "$f"
}

# 1. Every option, a full verification: "erased", no exceptions.
out=$(wipectl --json wipe --yes --verify last --asset-tag 'AT-0001' --customer 'ACME Corp' \
        --note 'rack 4, slot 2; Müller' --destination resale --operator-name 'Ana Müller' \
        --operator-title Technician --operator-organization 'IT Asset Services' --operator-location Hamburg \
        --operator-contact ana@example.org --verifier-name 'Ben Okafor' --verifier-title Supervisor \
        --verifier-organization QA --verifier-location Berlin --verifier-contact '+49 30 1234' "$a") ||
        fail "wipe of $a exited $?: $out"
id_a=$(echo "$out" | jq -r '.jobs[0].job')
check_last_pass "$a" "$id_a"
r=$(report_of "$id_a")
jq_is "$r" .asset_tag AT-0001 "report of $id_a"
jq_is "$r" .customer 'ACME Corp' "report of $id_a"
jq_is "$r" .note 'rack 4, slot 2; Müller' "report of $id_a"
jq_is "$r" .destination resale "report of $id_a (the option over the configuration)"
jq_is "$r" '.operator | [.name, .title, .organization, .location, .contact] | join("|")' \
        'Ana Müller|Technician|IT Asset Services|Hamburg|ana@example.org' "report of $id_a"
jq_is "$r" '.verifier | [.name, .title, .organization, .location, .contact] | join("|")' \
        'Ben Okafor|Supervisor|QA|Berlin|+49 30 1234' "report of $id_a"
jq_is "$r" '.batch | test("^[0-9a-f]{32}$")' true "report of $id_a"
batch_a=$(echo "$r" | jq -r .batch)
jq_is "$r" .media_type 'virtual disk' "report of $id_a (a loop device)"
jq_is "$r" .manufacturer null "report of $id_a (a loop device has no vendor)"
jq_is "$r" .sanitization.category Clear "report of $id_a"
jq_is "$r" .sanitization.method random "report of $id_a"
jq_is "$r" .sanitization.technique overwrite "report of $id_a"
jq_starts "$r" .sanitization.tool 'wiped ' "report of $id_a"
jq_is "$r" .sanitization.verification_method 'full read-back' "report of $id_a"
jq_is "$r" .sanitization.verification_result passed "report of $id_a"
jq_is "$r" .overall_status erased "report of $id_a"
jq_is "$r" '.exceptions | length' 0 "report of $id_a"
# The host's DMI identity: what sysfs says where it can be read, null elsewhere.
jq_is "$r" '.host.dmi | keys | join(",")' 'product,serial,uuid,vendor' "report of $id_a"
for pair in vendor:sys_vendor product:product_name serial:product_serial uuid:product_uuid; do
        key=${pair%%:*} file=/sys/class/dmi/id/${pair#*:}
        want=$(tr -d '\n' 2>/dev/null < "$file" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
        got=$(echo "$r" | jq -r ".host.dmi.$key")
        case $want in ''|'To be filled by O.E.M.'|'Default string'|None|'Not Specified'|'System Serial Number') want=null ;; esac
        [ "$got" = "$want" ] || fail "report of $id_a: host.dmi.$key is '$got', $file says '$want'"
done
# The end hook has the asset tag and the batch (for a label).
hook_saw() { grep -qx "$id_a $batch_a AT-0001" "$TEST_DIR/hook.out" 2>/dev/null; }
wait_until 30 "the end hook of job $id_a with its asset tag" hook_saw
# Status and list carry the batch and the record too.
s=$(wipectl --json status "$id_a")
jq_is "$s" .jobs[0].batch "$batch_a" "status of $id_a"
jq_is "$s" .jobs[0].asset_tag AT-0001 "status of $id_a"
wipectl status "$id_a" | grep -qx "job $id_a: asset tag AT-0001" || fail "status $id_a text: $(wipectl status "$id_a")"
# The text: the record section, its overall status first.
wipectl report "$id_a" > "$TEST_DIR/text" || fail "report $id_a exited $?"
grep -A1 '^Sanitization record$' "$TEST_DIR/text" | grep -qE '^  Overall status: +erased$' ||
        fail "report $id_a text: no 'Overall status: erased' first in the record: $(cat "$TEST_DIR/text")"
for want in 'Asset tag: +AT-0001' 'Customer: +ACME Corp' 'Media type: +virtual disk' 'Manufacturer: +not recorded' \
        'Category: +Clear' 'Technique: +overwrite' 'Verification: +full read-back: passed' 'Destination: +resale' \
        'Performed by: +Ana Müller, Technician, IT Asset Services, Hamburg \(ana@example.org\)' \
        'Verified by: +Ben Okafor, Supervisor, QA, Berlin \(\+49 30 1234\)' 'Host DMI: +'; do
        grep -qE "^  $want" "$TEST_DIR/text" || fail "report $id_a text: no '$want' in: $(cat "$TEST_DIR/text")"
done

# 2. The configuration's defaults, one key overridden: only that key changes; a sampled
# verification is an exception.
out=$(wipectl --json wipe --yes --verify sample=5 --operator-title Lead "$b") || fail "wipe of $b exited $?: $out"
id_b=$(echo "$out" | jq -r '.jobs[0].job')
r=$(report_of "$id_b")
jq_is "$r" .destination reuse "report of $id_b (the configuration's)"
jq_is "$r" '.operator | [.name, .title, .organization, .location // "-"] | join("|")' 'Conf Operator|Lead|Conf Org|-' \
        "report of $id_b"
jq_is "$r" .verifier.name 'Conf Verifier' "report of $id_b"
jq_is "$r" .verifier.contact null "report of $id_b"
jq_is "$r" .asset_tag null "report of $id_b"
jq_is "$r" .customer null "report of $id_b"
jq_is "$r" .overall_status 'erased with exceptions' "report of $id_b"
jq_is "$r" '.exceptions | join("|")' 'verification sampled only (5%)' "report of $id_b"
jq_is "$r" .sanitization.verification_method 'sampled read-back (5%)' "report of $id_b"
[ "$(echo "$r" | jq -r .batch)" != "$batch_a" ] || fail "two submits share the batch $batch_a"
wipectl report "$id_b" > "$TEST_DIR/text" || fail "report $id_b exited $?"
grep -qE '^  Overall status: +erased with exceptions: verification sampled only \(5%\)$' "$TEST_DIR/text" ||
        fail "report $id_b text: $(cat "$TEST_DIR/text")"
grep -qE '^  Customer: +not recorded$' "$TEST_DIR/text" || fail "report $id_b text: customer: $(cat "$TEST_DIR/text")"

# 3. Several devices in one submit: one batch, an asset tag each, in order; no verification is
# an exception too.
out=$(wipectl --json wipe --yes --verify none --asset-tag T-B --asset-tag T-C "$b" "$c") || fail "wipe of $b $c exited $?: $out"
id_1=$(echo "$out" | jq -r '.jobs[0].job') id_2=$(echo "$out" | jq -r '.jobs[1].job')
r1=$(report_of "$id_1") r2=$(report_of "$id_2")
jq_is "$r1" .asset_tag T-B "report of $id_1 ($b)"
jq_is "$r2" .asset_tag T-C "report of $id_2 ($c)"
[ "$(echo "$r1" | jq -r .batch)" = "$(echo "$r2" | jq -r .batch)" ] || fail "jobs $id_1 and $id_2 of one submit have two batches"
jq_is "$r1" .overall_status 'erased with exceptions' "report of $id_1"
jq_is "$r1" '.exceptions | join("|")' 'verification not run' "report of $id_1"

# 4. Bad values: refused, no job made, nothing written.
printf 'MARKER-%.0s' $(seq 4096) | dd of="$c" bs=1M conv=fsync status=none 2>/dev/null ||
        hard_error "cannot write the marker to $c"
sum=$(dev_sha256 "$c")
jobs_before=$(wipectl --json list | jq '.jobs | length')
long=$(printf 'x%.0s' $(seq 300))
for body in '"customer":"a\u0001b"' '"note":"line\nbreak"' "\"asset_tag\":\"$long\"" '"customer":5' \
        '"destination":""' '"operator":{"name":"A","shoe_size":"44"}' '"verifier":"Ben"' \
        '"operator":{"name":7}' '"asset_tags":["only one"]' '"asset_tags":"T"' \
        '"customer":"\u0085"'; do
        reply=$(request "{\"id\":1,\"op\":\"submit\",\"devices\":[\"$c\",\"$b\"],$body}")
        jq_is "$reply" .error.code EINVAL "submit with $body"
        field=$(echo "$body" | sed 's/^"\([a-z_]*\)".*/\1/')
        echo "$reply" | jq -r .error.message | grep -qF "\"$field" || fail "the refusal of $body does not name $field: $reply"
done
reply=$(request "{\"id\":1,\"op\":\"submit\",\"devices\":[\"$c\",\"$b\"],\"asset_tag\":\"ONE\"}")
jq_is "$reply" .error.code EINVAL "submit of two devices with one asset_tag"
reply=$(request "{\"id\":1,\"op\":\"submit\",\"devices\":[\"$c\"],\"asset_tag\":\"ONE\",\"asset_tags\":[\"ONE\"]}")
jq_is "$reply" .error.code EINVAL "submit with asset_tag and asset_tags"
expect_exit 2 wipectl wipe --yes --asset-tag ONE "$c" "$b"
grep -q 'once per device' "$TEST_DIR/err" || fail "wipe with one --asset-tag for two devices: $(cat "$TEST_DIR/err")"
expect_exit 2 wipectl wipe --yes --asset-tag ONE --asset-tag TWO --asset-tag THREE "$c" "$b"
[ "$(wipectl --json list | jq '.jobs | length')" = "$jobs_before" ] || fail "a refused submit made a job"
[ "$(dev_sha256 "$c")" = "$sum" ] || fail "a refused submit wrote to $c"
# A dry run shows the record the job would carry.
wipectl wipe --dry-run --asset-tag DRY-1 --customer 'Dry Customer' --verifier-name 'Dry Verifier' "$c" > "$TEST_DIR/text" ||
        fail "wipe --dry-run exited $?"
for want in 'Asset tag: +DRY-1' 'Customer: +Dry Customer' 'Destination: +reuse' 'Verified by: +Dry Verifier' \
        'Performed by: +Conf Operator, Conf Org'; do
        grep -qE "^    $want" "$TEST_DIR/text" || fail "wipe --dry-run: no '$want' in: $(cat "$TEST_DIR/text")"
done
[ "$(dev_sha256 "$c")" = "$sum" ] || fail "a dry run wrote to $c"

# 5. A reload changes new jobs only; a restart and a resume keep what a job was submitted with.
out=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 20M --asset-tag BIG-1 --customer Keep "$big") ||
        fail "submit on $big exited $?: $out"
id_big=$(echo "$out" | jq -r '.jobs[0].job')
wait_bytes "$id_big" 1 30 || fail "job $id_big does not start"
batch_big=$(job_field "$id_big" batch)
sed -i 's/^operator-name = .*/operator-name = New Operator/; s/^destination = .*/destination = destruction/' "$conf"
reload
wipectl wipe --dry-run "$c" > "$TEST_DIR/text" || fail "wipe --dry-run exited $?"
grep -qE '^    Performed by: +New Operator, Conf Org' "$TEST_DIR/text" || fail "the reload did not reach a new job: $(cat "$TEST_DIR/text")"
s=$(wipectl --json status "$id_big")
jq_is "$s" .jobs[0].operator.name 'Conf Operator' "status of $id_big after a reload"
jq_is "$s" .jobs[0].destination reuse "status of $id_big after a reload"
stop_daemon || fail "wiped exited $? on SIGTERM"
start_daemon --config "$conf" --policy-dir none --threads 2
state=$(wait_state "$id_big" 'running' 30) || fail "job $id_big did not resume after the restart: $state"
s=$(wipectl --json status "$id_big")
jq_is "$s" .jobs[0].batch "$batch_big" "status of $id_big after a restart"
jq_is "$s" .jobs[0].asset_tag BIG-1 "status of $id_big after a restart"
jq_is "$s" .jobs[0].customer Keep "status of $id_big after a restart"
jq_is "$s" .jobs[0].operator.name 'Conf Operator' "status of $id_big after a restart"
s=$(wipectl --json status "$id_a")
jq_is "$s" .jobs[0].batch "$batch_a" "status of $id_a after a restart"
jq_is "$s" .jobs[0].asset_tag AT-0001 "status of $id_a after a restart"
jq_is "$s" .jobs[0].verifier.contact '+49 30 1234' "status of $id_a after a restart"
wipectl cancel "$id_big" > /dev/null || fail "cancel $id_big exited $?"
[ "$(wait_job "$id_big" 30)" = cancelled ] || fail "job $id_big was not cancelled"
r=$(report_of "$id_big")
jq_is "$r" .overall_status 'not erased' "report of the cancelled $id_big"
jq_is "$r" '.exceptions[0]' 'job cancelled' "report of the cancelled $id_big"
jq_is "$r" .asset_tag BIG-1 "report of $id_big"
jq_is "$r" .destination reuse "report of $id_big (submitted before the reload)"
jq_is "$r" .batch "$batch_big" "report of $id_big"
wipectl report "$id_big" | grep -qE '^  Overall status: +not erased: job cancelled' ||
        fail "report $id_big text: $(wipectl report "$id_big")"

# 6. A configuration value with a control character or over 256 bytes does not load.
printf 'operator-name = %s\n' "$long" > "$TEST_DIR/bad.conf"
"$WIPED" --check-config --config "$TEST_DIR/bad.conf" > /dev/null 2> "$TEST_DIR/err" &&
        fail "wiped --check-config accepts an operator-name of 300 bytes"
grep -q 'operator-name' "$TEST_DIR/err" || fail "--check-config does not name operator-name: $(cat "$TEST_DIR/err")"
printf 'verifier-contact = a\033[31mb\n' > "$TEST_DIR/bad.conf"
"$WIPED" --check-config --config "$TEST_DIR/bad.conf" > /dev/null 2> "$TEST_DIR/err" &&
        fail "wiped --check-config accepts an escape sequence in verifier-contact"

pass
