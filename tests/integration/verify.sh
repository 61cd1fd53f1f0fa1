#!/bin/bash
# Re-verification of a finished job (wipectl verify): an untouched device passes; one corrupted
# sector fails `--verify last` and a sample whose plan covers it, naming exactly that sector's
# offset; the report's coverage is exact; a device whose identity changed (another backing file on
# the same node, another sector size) is refused with ESTALE (exit 5), the same file on the same
# node is accepted again; a mounted device and a running job are refused.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v mkfs.ext4 >/dev/null || hard_error "mkfs.ext4 missing"
command -v socat >/dev/null || hard_error "socat missing (tools/install-deps installs it)"

SIZE=$((64 << 20))              # 131072 sectors: sample subsections of 131 sectors
OFF=$((37 * 1048576 + 5 * 4096 + 512))  # the sector corrupted: in the middle, inside a 4 KiB block
dev=$(make_loop $SIZE)
start_daemon --threads 2

# run_verify ID ARGS...: wipectl --json verify; its exit status in $rc, the job object it printed
# in $job, its stderr in $TEST_DIR/verify.err.
run_verify() {
        local id=$1 out
        shift
        out=$(wipectl --json verify "$id" "$@" 2> "$TEST_DIR/verify.err")
        rc=$?
        job=$(echo "$out" | jq -c '.jobs[0] // .job' 2>/dev/null)
}

# verification REPORT: the latest run as one line.
runline() {
        echo "$1" | jq -r '.verification | "\(.mode) \(.result) \(.mismatched_sectors) \(.first_mismatches | map(tostring) | join(","))"'
}

out=$(wipectl --json wipe --yes --verify none "$dev") || fail "wipe exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$out" '.jobs[0] | "\(.state) \(.bytes_total) \(.verify.mode)"' "done $SIZE none" "job $id"
jq_is "$(wipectl --json report "$id")" '.verification | "\(.mode) \(.result) \(.runs | length)"' "none not run 0" "job $id before verify"

# --- an untouched device passes ------------------------------------------------------------------
run_verify "$id"          # no mode: the job had none, so the whole device ("last")
[ "$rc" = 0 ] || fail "verify $id of an untouched device exited $rc: $(cat "$TEST_DIR/verify.err")"
jq_is "$job" '"\(.state) \(.phase) \(.bytes_done) \(.bytes_total) \(.size) \(.pass)"' "done null $SIZE $SIZE $SIZE 1" "verify $id"
report=$(wipectl --json report "$id")
[ "$(runline "$report")" = "last passed 0 " ] || fail "verify $id: $(runline "$report")"
jq_is "$report" '.verification | "\(.coverage_bytes) \(.coverage_percent == 100) \(.runs | length) \(.runs[0].mode) \(.runs[0].coverage_bytes) \(.runs[0].at | type)"' \
        "$SIZE true 1 last $SIZE number" "verify $id: coverage"
jq_is "$report" '"\(.state) \(.error)"' "done null" "verify $id: report"
run_verify "$id" --verify sample=25 --seed 1
[ "$rc" = 0 ] || fail "verify $id --verify sample=25 --seed 1 of an untouched device exited $rc"
report=$(wipectl --json report "$id")
cov=$(echo "$report" | jq -r .verification.coverage_bytes)
jq_is "$report" '.verification | "\(.mode) \(.percent == 25) \(.seed) \(.subsections) \(.result) \(.runs | length)"' \
        "sample true 1 1000 passed 2" "verify $id sample=25"
[ "$cov" -ge $((SIZE / 4)) ] && [ "$cov" -lt $((SIZE / 4 + 2002 * 512)) ] || fail "sample=25 covers $cov bytes"
jq_is "$report" ".verification.coverage_percent - ($cov * 100 / $SIZE) | fabs < 0.001" true "sample=25 coverage_percent"
# The re-verification is all of the job's work now: the sample's bytes.
jq_is "$job" '"\(.bytes_total) \(.bytes_done)"' "$cov $cov" "verify $id sample=25 job"

# --- one corrupted sector ------------------------------------------------------------------------
dd if="$dev" of="$TEST_DIR/sector" bs=512 skip=$((OFF / 512)) count=1 iflag=direct status=none || hard_error "cannot read $dev"
before=$(od -An -tx1 "$TEST_DIR/sector" | tr -d ' \n')
head -c 512 /dev/urandom > "$TEST_DIR/junk"
dd if="$TEST_DIR/junk" of="$dev" bs=512 seek=$((OFF / 512)) count=1 oflag=direct conv=notrunc status=none ||
        hard_error "cannot corrupt $dev"
after=$(dd if="$dev" bs=512 skip=$((OFF / 512)) count=1 iflag=direct status=none | od -An -tx1 | tr -d ' \n')
[ "$before" != "$after" ] || hard_error "the corruption left the sector as it was"

run_verify "$id" --verify last
[ "$rc" = 6 ] || fail "verify $id --verify last of a corrupted device exited $rc, expected 6"
grep -q "$dev" "$TEST_DIR/verify.err" || fail "wipectl verify did not name the device: $(cat "$TEST_DIR/verify.err")"
jq_is "$job" '"\(.state) \(.error.code)"' "failed EIO" "verify $id (corrupted)"
jq_is "$job" '.error.message' "$dev: verification of pass 1 failed: 1 mismatching sector, first at offset $OFF" "verify $id (corrupted)"
jq_is "$(wipectl --json status "$id")" '.jobs[0] | "\(.state) \(.error.code)"' "failed EIO" "status $id"
report=$(wipectl --json report "$id")
[ "$(runline "$report")" = "last failed 1 $OFF" ] || fail "verify $id: $(runline "$report"), expected the sector at $OFF"
jq_is "$report" '.verification | "\(.coverage_bytes) \(.runs | length) \(.runs[2].result) \(.runs[2].first_mismatches)"' \
        "$SIZE 3 failed [$OFF]" "report $id"
jq_is "$report" '"\(.state) \(.error.code)"' "failed EIO" "report $id"
# The text report names the offset too.
wipectl report "$id" | grep -q "$OFF" || fail "text report of $id lacks offset $OFF"

# A sample whose plan covers the sector fails the same way; one that misses it passes. The plan is
# a pure function of the seed, so the seeds found are the same on every run.
cover="" miss=""
for seed in $(seq 1 64); do
        run_verify "$id" --verify sample=25 --seed "$seed"
        case $rc in
        6) [ -n "$cover" ] || cover=$seed ;;
        0) [ -n "$miss" ] || miss=$seed ;;
        *) fail "verify $id --seed $seed exited $rc: $(cat "$TEST_DIR/verify.err")" ;;
        esac
        [ -n "$cover" ] && [ -n "$miss" ] && break
done
[ -n "$cover" ] || fail "no seed of 1..64 samples the sector at $OFF (25 %)"
[ -n "$miss" ] || fail "every seed of 1..64 samples the sector at $OFF (25 %): is the sample the whole device?"
note "seed $cover samples offset $OFF, seed $miss does not"
run_verify "$id" --verify sample=25 --seed "$cover"
[ "$rc" = 6 ] || fail "verify $id --seed $cover exited $rc the second time"
report=$(wipectl --json report "$id")
[ "$(runline "$report")" = "sample failed 1 $OFF" ] || fail "sample seed $cover: $(runline "$report")"
jq_is "$report" '.verification | "\(.seed) \(.percent == 25) \(.subsections)"' "$cover true 1000" "sample seed $cover"
run_verify "$id" --verify sample=25 --seed "$miss"
[ "$rc" = 0 ] || fail "verify $id --seed $miss exited $rc the second time"
[ "$(runline "$(wipectl --json report "$id")")" = "sample passed 0 " ] || fail "sample seed $miss"

# Repaired, the same covering seed passes.
dd if="$TEST_DIR/sector" of="$dev" bs=512 seek=$((OFF / 512)) count=1 oflag=direct conv=notrunc status=none ||
        hard_error "cannot repair $dev"
run_verify "$id" --verify sample=25 --seed "$cover"
[ "$rc" = 0 ] || fail "verify $id --seed $cover of the repaired device exited $rc"
check_last_pass "$dev" "$id"

# Several corrupted sectors: counted, the first 16 listed in order.
for k in $(seq 0 19); do
        dd if="$TEST_DIR/junk" of="$dev" bs=512 seek=$((1000 + 4 * k)) count=1 oflag=direct conv=notrunc status=none
done
run_verify "$id" --verify last
[ "$rc" = 6 ] || fail "verify $id with 20 bad sectors exited $rc"
want=$(seq 0 15 | while read -r k; do echo $(((1000 + 4 * k) * 512)); done | paste -sd,)
[ "$(runline "$(wipectl --json report "$id")")" = "last failed 20 $want" ] ||
        fail "20 bad sectors: $(runline "$(wipectl --json report "$id")")"

# The mode "none" is refused, and an unknown job.
reply=$(request '{"id":1,"op":"verify","job":'"$id"',"verify":"none"}')
jq_is "$reply" '"\(.ok) \(.error.code)"' "false EINVAL" "verify none"
reply=$(request '{"id":1,"op":"verify","job":999}')
jq_is "$reply" '"\(.ok) \(.error.code)"' "false ESRCH" "verify of an unknown job"
expect_exit 1 wipectl verify 999
# A device a later job wipes holds that job's passes: the older job's verification is refused,
# naming the later job; a running job cannot be verified. (Job ids count up from 1: the new job is
# the next id.) The second job is held in its write pass by a rate limit (1 GiB at 20 MB/s: about
# 54 s), so that the cancel certainly comes before its pass was written whole, however fast the
# device.
big=$(make_loop 1G)
out=$(wipectl --json wipe --yes --method zero --verify none "$big") || fail "wipe of $big exited $?"
bid=$(echo "$out" | jq -r '.jobs[0].id')
reply=$(request '{"id":1,"op":"submit","devices":["'"$big"'"],"verify":"last","max_rate":20000000}' \
        '{"id":2,"op":"verify","job":'"$bid"'}' '{"id":3,"op":"verify","job":'"$((bid + 1))"'}')
jq_is "$(echo "$reply" | sed -n 1p)" '"\(.ok) \(.jobs[0].id)"' "true $((bid + 1))" "second submit of $big"
jq_is "$(echo "$reply" | sed -n 2p)" '"\(.ok) \(.error.code) \(.error.message)"' \
        "false ESTALE job $bid: $big was wiped again by a later job, $((bid + 1)), since: verify job $((bid + 1)) instead" \
        "verify of job $bid while $big is being wiped"
jq_is "$(echo "$reply" | sed -n 3p)" '"\(.ok) \(.error.code)"' "false EBUSY" "verify of a running job"
wipectl cancel $((bid + 1)) > /dev/null || fail "cancel of job $((bid + 1)) exited $?"
[ "$(wait_job $((bid + 1)) 30)" = cancelled ] || fail "job $((bid + 1)) was not cancelled"
jq_is "$(wipectl --json report $((bid + 1)))" '.passes[0].written' false "job $((bid + 1)) cancelled in its write pass"
# A cancelled job's last pass was never written whole: nothing to verify.
reply=$(request '{"id":1,"op":"verify","job":'"$((bid + 1))"'}')
jq_is "$reply" .ok false "verify of a cancelled job"
# The refused verification left job $bid as it was.
jq_is "$(wipectl --json report "$bid")" '"\(.state) \(.verification.runs | length)"' "done 0" "job $bid after EBUSY"

# Unprivileged users may not verify.
if command -v setpriv >/dev/null; then
        chmod 0711 "$TEST_DIR"
        chmod 0666 "$SOCK"
        out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$WIPECTL_BIN" --socket "$SOCK" verify "$id" 2>&1)
        r=$?
        [ $r = 4 ] || fail "unprivileged verify exited $r: $out"
fi

# --- identity --------------------------------------------------------------------------------------
idev=$(make_loop 16M)
file=$(loop_file "$idev")
out=$(wipectl --json wipe --yes --method zero --verify none "$idev") || fail "wipe of $idev exited $?"
iid=$(echo "$out" | jq -r '.jobs[0].id')
other=$TEST_DIR/other.img
truncate -s 16M "$other"                # zeros: the same content, a different device
detach_loop "$idev"
# Nothing on the node at all.
run_verify "$iid" --verify last
[ "$rc" = 5 ] || fail "verify $iid on a detached node exited $rc, expected 5: $(cat "$TEST_DIR/verify.err")"
if reattach_loop "$idev" "$other" --direct-io=on --sector-size 512; then
        # Same node, same size, same sector size, same content: another backing file.
        run_verify "$iid" --verify last
        [ "$rc" = 5 ] || fail "verify $iid with $other behind $idev exited $rc, expected 5"
        grep -q "$idev: refusing: identity no longer matches the job's device" "$TEST_DIR/verify.err" ||
                fail "another backing file: $(cat "$TEST_DIR/verify.err")"
        jq_is "$(request '{"id":1,"op":"verify","job":'"$iid"',"verify":"last"}')" .error.code ESTALE "another backing file"
        # The refusal changed nothing: the job stays done, its verification not run.
        jq_is "$(wipectl --json report "$iid")" '"\(.state) \(.verification.runs | length)"' "done 0" "job $iid after ESTALE"
        detach_loop "$idev"
        # The job's own file with 4096-byte sectors.
        if reattach_loop "$idev" "$file" --direct-io=on --sector-size 4096; then
                run_verify "$iid" --verify last
                [ "$rc" = 5 ] || fail "verify $iid with 4096-byte sectors exited $rc, expected 5"
                jq_is "$(request '{"id":1,"op":"verify","job":'"$iid"',"verify":"last"}')" .error.code ESTALE "other sector size"
                detach_loop "$idev"
                # The job's own file as it was: the same device again.
                if reattach_loop "$idev" "$file" --direct-io=on --sector-size 512; then
                        run_verify "$iid" --verify last
                        [ "$rc" = 0 ] || fail "verify $iid of its own file on its own node exited $rc: $(cat "$TEST_DIR/verify.err")"
                else
                        note "$idev was taken by another program; the re-attach of the same file was not tested"
                fi
        else
                note "$idev was taken by another program; the sector size change was not tested"
        fi
else
        note "$idev was taken by another program; the same-node case was not tested"
        elsewhere=$(make_loop_file "$other" --direct-io=on)
        note "$other is on $elsewhere now"
        run_verify "$iid" --verify last
        [ "$rc" = 5 ] || fail "verify $iid after a detach exited $rc, expected 5"
fi

# --- a mounted device is refused ------------------------------------------------------------------
mdev=$(make_loop 32M)
out=$(wipectl --json wipe --yes --method zero --verify none "$mdev") || fail "wipe of $mdev exited $?"
mid=$(echo "$out" | jq -r '.jobs[0].id')
mkfs.ext4 -q "$mdev" || hard_error "mkfs.ext4 failed"
mkdir -p "$TEST_DIR/mnt"
mount "$mdev" "$TEST_DIR/mnt" || skip "cannot mount ext4 here"
register_mount "$TEST_DIR/mnt"
run_verify "$mid" --verify last
[ "$rc" = 5 ] || fail "verify $mid of a mounted device exited $rc, expected 5"
grep -q "$mdev: refusing: is mounted on $TEST_DIR/mnt" "$TEST_DIR/verify.err" || fail "mounted: $(cat "$TEST_DIR/verify.err")"
jq_is "$(request '{"id":1,"op":"verify","job":'"$mid"'}')" .error.code EBUSY "verify of a mounted device"
umount "$TEST_DIR/mnt" || fail "umount failed"
# Unmounted, the file system is there instead of zeros: verification fails.
run_verify "$mid" --verify last
[ "$rc" = 6 ] || fail "verify $mid after mkfs exited $rc, expected 6"

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
