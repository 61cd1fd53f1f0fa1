#!/bin/bash
# Wipe methods and multi-pass jobs: every named method leaves exactly its final pattern (every byte
# compared) and, with --verify all, records every pass as verified; a custom pass list ending in a
# 3-byte pattern on a device whose size is not a multiple of 3; every random pass has its own key;
# bytes_total counts every pass and the planned verification; status shows pass i/n on the way.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

SIZE=$((8 << 20))               # 16384 sectors: 1000 sample subsections; 2^23 is not a multiple of 3
dev=$(make_loop $SIZE)

# scramble DEV: random bytes from the kernel, so that no earlier pattern can pass for a new one.
scramble() {
        head -c "$(blockdev --getsize64 "$1")" /dev/urandom | dd of="$1" bs=1M oflag=direct iflag=fullblock status=none ||
                hard_error "cannot scramble $1"
}

# --- wipectl methods: the table, no daemon needed -----------------------------------------------
methods=$("$WIPECTL_BIN" --socket "$TEST_DIR/no-daemon.sock" --json methods) || fail "wipectl --json methods exited $?"
jq_is "$methods" '[.methods[].name] | join(",")' "random,zero,random-zero,zeroout,discard,secure-discard,sanitize,sanitize-crypto,sanitize-block,sanitize-overwrite,nvme-format,ata-secure-erase,purge,dod-3pass,schneier,gutmann" "methods"
jq_is "$methods" '[.methods[] | "\(.name):\(.passes | length):\(.legacy)"] | join(" ")' \
        "random:1:false zero:1:false random-zero:2:false zeroout:1:false discard:1:false secure-discard:1:false sanitize:1:false sanitize-crypto:1:false sanitize-block:1:false sanitize-overwrite:1:false nvme-format:1:false ata-secure-erase:1:false purge:1:false dod-3pass:3:true schneier:7:true gutmann:35:true" "methods"
jq_is "$methods" '[.methods[] | select(.legacy) | .description | test("800-88")] | all' true "legacy descriptions"
jq_is "$methods" '.methods[] | select(.name == "dod-3pass") | .passes | join(",")' "zero,one,random" "dod-3pass"
"$WIPECTL_BIN" --socket "$TEST_DIR/no-daemon.sock" methods > "$TEST_DIR/methods.txt" || fail "wipectl methods exited $?"
for m in random zero random-zero dod-3pass schneier gutmann; do
        grep -qw -- "$m" "$TEST_DIR/methods.txt" || fail "wipectl methods does not list $m: $(cat "$TEST_DIR/methods.txt")"
done

start_daemon --threads 2

# --- every named method, --verify all -----------------------------------------------------------
# name, expected pass list
while read -r method list; do
        n=$(echo "$list" | tr ',' '\n' | wc -l)
        note "method $method ($n passes)"
        scramble "$dev"
        out=$(wipectl --json wipe --yes --method "$method" --verify all "$dev") || fail "wipe --method $method exited $?: $out"
        job=$(echo "$out" | jq -c '.jobs[0]')
        id=$(echo "$job" | jq -r .id)
        # Every pass written and read back whole: 2 x passes x size.
        jq_is "$job" '"\(.state) \(.method) \(.pass_list | join(",")) \(.passes) \(.pass) \(.phase)"' \
                "done $method $list $n $n null" "job $id"
        jq_is "$job" '"\(.size) \(.bytes_total) \(.bytes_done) \(.verify.mode)"' \
                "$SIZE $((2 * n * SIZE)) $((2 * n * SIZE)) all" "job $id"
        report=$(wipectl --json report --keys "$id") || fail "report $id exited $?"
        jq_is "$report" '"\(.method) \(.pass_list | join(",")) \(.passes | length) \(.bytes_written)"' \
                "$method $list $n $((n * SIZE))" "report $id"
        jq_is "$report" '[.passes[].pattern] | join(",")' "$list" "report $id: patterns"
        jq_is "$report" '[.passes[].pass] == [range(1; '"$n"' + 1)]' true "report $id: pass numbers"
        # Each pass verified, whole, passed.
        jq_is "$report" '[.passes[].verified | "\(.result) \(.mode) \(.bytes_read) \(.coverage_percent == 100) \(.mismatched_sectors) \(.first_mismatches)"] | unique | join(";")' \
                "passed all $SIZE true 0 []" "report $id: verified passes"
        jq_is "$report" '.verification | "\(.mode) \(.result) \(.coverage_bytes) \(.coverage_percent == 100) \(.mismatched_sectors) \(.first_mismatches) \(.runs | length)"' \
                "all passed $SIZE true 0 [] 1" "report $id: verification"
        # Every random pass has its own key, and a fingerprint that names it.
        r=$(echo "$list" | tr ',' '\n' | grep -c '^random$')
        jq_is "$report" '[.passes[] | select(.pattern == "random") | .key] | unique | length' "$r" "report $id: distinct keys"
        jq_is "$report" '[.passes[] | select(.pattern == "random") | .key_fingerprint] | unique | length' "$r" "report $id: distinct fingerprints"
        jq_is "$report" '[.passes[] | select(.pattern != "random") | has("key") or has("cipher")] | any' false "report $id: key on a pattern pass"
        check_last_pass "$dev" "$id"
done <<'EOF'
random random
zero zero
random-zero random,zero
dod-3pass zero,one,random
schneier zero,one,random,random,random,random,random
gutmann random,random,random,random,0x55,0xaa,0x924924,0x492492,0x249249,zero,0x11,0x22,0x33,0x44,0x55,0x66,0x77,0x88,0x99,0xaa,0xbb,0xcc,0xdd,0xee,one,0x924924,0x492492,0x249249,0x6db6db,0xb6db6d,0xdb6db6,random,random,random,random
EOF
# dod-3pass ends random; "one" as the last pass: every byte 0xff.
scramble "$dev"
out=$(wipectl --json wipe --yes --passes random,one --verify last "$dev") || fail "wipe --passes random,one exited $?"
id=$(echo "$out" | jq -r '.jobs[0].id')
check_pattern "$dev" ff
jq_is "$(wipectl --json report "$id")" '[.passes[].verified] | "\(.[0]) \(.[1].result) \(.[1].mode)"' \
        "null passed last" "job $id: --verify last verifies only the last pass"

# --- a custom list ending in a 3-byte pattern, size not a multiple of 3 --------------------------
ODD=$((SIZE + 512 * 7))         # 8392192 = 3 * 2797397 + 1
[ $((ODD % 3)) != 0 ] || hard_error "size $ODD is a multiple of 3"
odd=$(make_loop $ODD)
scramble "$odd"
out=$(wipectl --json wipe --yes --passes random,zero,0x924924 --verify all "$odd") || fail "custom wipe exited $?: $out"
job=$(echo "$out" | jq -c '.jobs[0]')
id=$(echo "$job" | jq -r .id)
jq_is "$job" '"\(.state) \(.method) \(.pass_list | join(",")) \(.passes) \(.size) \(.bytes_total)"' \
        "done custom random,zero,0x924924 3 $ODD $((6 * ODD))" "custom job $id"
check_pattern "$odd" 924924
# The last bytes, by hand: offset o holds 92 49 24 [o % 3].
tail_hex=$(dd if="$odd" bs=512 skip=$((ODD / 512 - 1)) count=1 iflag=direct status=none | od -An -tx1 | tr -d ' \n' | tail -c 6)
want=$(for o in $((ODD - 3)) $((ODD - 2)) $((ODD - 1)); do case $((o % 3)) in 0) printf 92 ;; 1) printf 49 ;; 2) printf 24 ;; esac; done)
[ "$tail_hex" = "$want" ] || fail "$odd: last 3 bytes $tail_hex, expected $want"
jq_is "$(wipectl --json report "$id")" '[.passes[].verified.result] | join(",")' "passed,passed,passed" "custom job $id"
# Upper-case hex is the same pattern; the job names it canonically.
out=$(wipectl --json wipe --yes --passes 0X5A,0xA5B6 --verify none "$odd") || fail "wipe --passes 0X5A,0xA5B6 exited $?"
jq_is "$out" '.jobs[0] | "\(.pass_list | join(",")) \(.bytes_total)"' "0x5a,0xa5b6 $((2 * ODD))" "upper-case patterns"
check_pattern "$odd" a5b6

# --- bytes_total: passes plus the planned verification -------------------------------------------
# The default: one random pass and a 10 % sample.
out=$(wipectl --json wipe --yes "$dev") || fail "default wipe exited $?"
job=$(echo "$out" | jq -c '.jobs[0]')
id=$(echo "$job" | jq -r .id)
report=$(wipectl --json report "$id")
cov=$(echo "$report" | jq -r .verification.coverage_bytes)
jq_is "$job" '"\(.method) \(.passes) \(.verify.mode) \(.verify.percent == 10)"' "random 1 sample true" "default job $id"
jq_is "$report" '.verification | "\(.mode) \(.percent == 10) \(.subsections) \(.seed | type) \(.result) \(.runs | length)"' \
        "sample true 1000 number passed 1" "default job $id: verification"
[ "$cov" -ge $((SIZE / 10)) ] && [ "$cov" -lt $((SIZE / 10 + 2002 * 512)) ] || fail "default job $id: sample of $cov bytes"
jq_is "$job" '"\(.bytes_total) \(.bytes_done)"' "$((SIZE + cov)) $((SIZE + cov))" "default job $id"
jq_is "$report" '.passes[0].verified | "\(.result) \(.mode) \(.bytes_read)"' "passed sample $cov" "default job $id: pass 1"
check_last_pass "$dev" "$id"
# --verify none: exactly the passes.
out=$(wipectl --json wipe --yes --method random-zero --verify none "$dev") || fail "random-zero --verify none exited $?"
jq_is "$out" '.jobs[0] | "\(.bytes_total) \(.bytes_done) \(.verify.mode)"' "$((2 * SIZE)) $((2 * SIZE)) none" "--verify none"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$(wipectl --json report "$id")" '.verification | "\(.mode) \(.result) \(.coverage_bytes)"' "none not run 0" "--verify none report"
check_pattern "$dev" 00
# sample=2.5 with a given seed: recorded as given, planned in bytes_total.
out=$(wipectl --json wipe --yes --method zero --verify sample=2.5 --seed 12345 "$dev") || fail "--verify sample=2.5 exited $?"
id=$(echo "$out" | jq -r '.jobs[0].id')
report=$(wipectl --json report "$id")
cov=$(echo "$report" | jq -r .verification.coverage_bytes)
jq_is "$report" '.verification | "\(.mode) \(.percent == 2.5) \(.seed) \(.result)"' "sample true 12345 passed" "sample=2.5 report"
jq_is "$out" '.jobs[0] | "\(.verify.percent == 2.5) \(.bytes_total)"' "true $((SIZE + cov))" "sample=2.5 job"
[ "$cov" -ge $((SIZE / 40)) ] || fail "sample=2.5: $cov bytes"

# --- the protocol refuses bad method requests -----------------------------------------------------
jobs_before=$(wipectl --json list | jq '.jobs | length')
expect_error() {
        local reply
        reply=$(request "$1" | head -n 1)
        jq_is "$reply" '"\(.ok) \(.error.code)"' "false $2" "${1:0:100}"
}
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"method":"zero","passes":["zero"]}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"passes":[]}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"passes":["0x5"]}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"passes":["zero",""]}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"passes":"zero"}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"passes":['"$(printf '"zero",%.0s' $(seq 64))"'"zero"]}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"verify":"sample=0"}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"verify":"sample=101"}' EINVAL
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"verify":"some"}' EINVAL
# The daemon takes the same strict syntax as wipectl: a plain decimal percentage.
for pct in 1e1 0x10 inf " 5" +5; do
        expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"verify":"sample='"$pct"'"}' EINVAL
        expect_exit 2 wipectl wipe --yes --method zero --verify "sample=$pct" "$dev"
done
expect_error '{"id":1,"op":"submit","devices":["'"$dev"'"],"seed":-1}' EINVAL
expect_exit 2 wipectl wipe --yes --method zero --passes zero "$dev"
[ "$(wipectl --json list | jq '.jobs | length')" = "$jobs_before" ] || fail "a refused request made a job: $(wipectl --json list)"
# 64 passes are allowed.
out=$(request '{"id":1,"op":"submit","devices":["'"$odd"'"],"verify":"none","passes":['"$(printf '"0x01",%.0s' $(seq 63))"'"0x02"]}')
jq_is "$out" .ok true "64 passes"
id=$(echo "$out" | jq -r '.jobs[0].id')
[ "$(wait_job "$id" 120)" = "done" ] || fail "64-pass job $id: $(wipectl --json status "$id")"
jq_is "$(wipectl --json status "$id")" '.jobs[0] | "\(.passes) \(.bytes_total)"' "64 $((64 * ODD))" "64-pass job"
check_pattern "$odd" 02
stop_daemon || fail "daemon exit status $?"

# --- progress of a multi-pass job: pass i/n, phases, one bytes_total -----------------------------
# A job held by a rate limit (128 MiB at 32 MB/s: about 4 s a pass, and as long for the read-back)
# so that every pass can be seen, however fast the device.
SLOW=$((128 << 20))
slow=$(make_loop $SLOW)
start_daemon --threads 2
id=$(wipectl --json wipe --yes --no-wait --method dod-3pass --verify last --max-rate 32M "$slow" | jq -r '.jobs[0].id') ||
        fail "dod-3pass submit failed"
seen=
texts=
last_done=0
for _ in $(seq 3000); do
        job=$(wipectl --json status "$id" | jq -c '.jobs[0]') || fail "status $id"
        state=$(echo "$job" | jq -r .state)
        case $state in done|failed|cancelled|interrupted) break ;; esac
        jq_is "$job" '"\(.passes) \(.bytes_total) \(.size) \(.pass_list | join(","))"' \
                "3 $((4 * SLOW)) $SLOW zero,one,random" "running job $id"
        done_now=$(echo "$job" | jq -r .bytes_done)
        [ "$done_now" -ge "$last_done" ] || fail "job $id: bytes_done went back from $last_done to $done_now"
        last_done=$done_now
        seen+=" $(echo "$job" | jq -r '"\(.phase)\(.pass)"')"
        # The text status names the pass (or the verification) out of the passes.
        t=$(wipectl status "$id") || fail "status $id (text)"
        texts+=" $(echo "$t" | grep -oE '(pass|verify) [0-9]+/3' | head -n 1 | tr ' ' _)"
        sleep 0.05
done
state=$(wait_job "$id" 300)
[ "$state" = "done" ] || fail "dod-3pass job $id ended $state"
note "status polls per phase:$(echo "$seen" | tr ' ' '\n' | grep -v '^$' | uniq -c | awk '{ printf " %s x%s", $2, $1 }')"
for p in write1 write2 write3 verify3; do
        echo "$seen" | grep -qw "$p" || fail "job $id: never seen in $p (seen:$seen)"
done
# The passes come in order.
order=$(echo "$seen" | tr ' ' '\n' | grep -v '^$' | grep -v '^flush' | uniq | tr '\n' ' ')
case $order in "write1 write2 write3 verify3 "|"write1 write2 write3 "*"verify3 ") ;; *) fail "job $id: order $order" ;; esac
for t in pass_1/3 pass_2/3 pass_3/3 verify_3/3; do
        echo "$texts" | grep -qw "$t" || fail "text status of job $id never showed '${t/_/ }' (saw:$texts)"
done
jq_is "$(wipectl --json status "$id")" '.jobs[0] | "\(.bytes_done) \(.bytes_total) \(.pass) \(.phase)"' \
        "$((4 * SLOW)) $((4 * SLOW)) 3 null" "ended job $id"
check_last_pass "$slow" "$id"
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
