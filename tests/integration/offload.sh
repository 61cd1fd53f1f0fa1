#!/bin/bash
# The block layer's erase commands as passes (zeroout, discard, secure-discard), run for real on
# loop devices (which support discard and write-zeroes; secure discard they do not): every byte
# reads back zero, verification checks zeros, the report names the ioctl; mixed with written
# passes in one list; a device without secure discard fails its job with a clear message and
# keeps every byte it had; the refusals that protect an overwrite protect these too.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v mkfs.ext4 >/dev/null || hard_error "mkfs.ext4 missing"

SIZE=$((96 << 20))              # two chunks of 64 MiB, the second one short
dev=$(make_loop $SIZE)
other=$(make_loop 16M)

# scramble DEV: random bytes from the kernel, so that nothing earlier can pass for zeros.
scramble() {
        head -c "$(blockdev --getsize64 "$1")" /dev/urandom | dd of="$1" bs=1M oflag=direct iflag=fullblock status=none ||
                hard_error "cannot scramble $1"
        ! cmp -s -n 4096 "$1" /dev/zero || hard_error "$1 reads zeros after scrambling"
}

# discard needs the loop driver to offer it (a backing file that can punch holes, as tmpfs can).
[ "$(cat "/sys/block/${dev#/dev/}/queue/discard_max_bytes")" -gt 0 ] ||
        skip "$dev has no discard (backing file system: $(stat -f -c %T "$(loop_file "$dev")"))"

start_daemon --threads 2

# --- the methods table names them ----------------------------------------------------------------
methods=$(wipectl --json methods) || fail "wipectl --json methods exited $?"
for m in zeroout discard secure-discard; do
        jq_is "$methods" '.methods[] | select(.name == "'$m'") | .passes | join(",")' "$m" "method $m"
done

# --- each command alone, verified whole: the device reads zeros, the report says how --------------
for m in zeroout discard; do
        case $m in zeroout) cmd=BLKZEROOUT ;; discard) cmd=BLKDISCARD ;; esac
        scramble "$dev"
        out=$(wipectl --json wipe --yes --method "$m" --verify all "$dev") || fail "wipe --method $m exited $?: $out"
        job=$(echo "$out" | jq -c '.jobs[0]')
        id=$(echo "$job" | jq -r .id)
        jq_is "$job" '"\(.state) \(.method) \(.pass_list | join(",")) \(.bytes_total) \(.bytes_done)"' \
                "done $m $m $((2 * SIZE)) $((2 * SIZE))" "job $id ($m)"
        cmp -n $SIZE "$dev" /dev/zero || fail "$dev does not read zeros after $m"
        report=$(wipectl --json report "$id") || fail "report $id exited $?"
        jq_is "$report" '.passes[0] | "\(.pattern) \(.command) \(.written) \(.verified.result) \(.verified.mode) \(.verified.bytes_read)"' \
                "$m $cmd true passed all $SIZE" "report $id ($m)"
        jq_is "$report" '"\(.bytes_written) \(.passes[0] | has("key") or has("cipher"))"' "$SIZE false" "report $id ($m)"
        # The command the report prints to check the device compares it with zeros.
        wipectl report "$id" | grep -qF "cmp -n $SIZE /dev/zero $dev" ||
                fail "report $id ($m) does not print a check against zeros: $(wipectl report "$id")"
        grep -qF "job $id: $dev: pass 1 of 1 ($m) written and flushed" "$TEST_DIR/daemon.log" ||
                fail "the daemon's log does not name $m for job $id"
done

# --- mixed with written passes, in either order ----------------------------------------------------
scramble "$dev"
out=$(wipectl --json wipe --yes --passes random,zeroout --verify all "$dev") || fail "random,zeroout exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
report=$(wipectl --json report "$id")
jq_is "$report" '[.passes[] | "\(.pattern):\(.command):\(.verified.result)"] | join(" ")' \
        "random:null:passed zeroout:BLKZEROOUT:passed" "report $id (random,zeroout)"
cmp -n $SIZE "$dev" /dev/zero || fail "$dev does not read zeros after random,zeroout"
out=$(wipectl --json wipe --yes --passes discard,random --verify last "$dev") || fail "discard,random exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$out" '.jobs[0] | "\(.state) \(.pass_list | join(","))"' "done discard,random" "job $id (discard,random)"
check_last_pass "$dev" "$id"
# A sampled verification (the default) of an erase command.
scramble "$dev"
out=$(wipectl --json wipe --yes --method zeroout "$dev") || fail "zeroout with the default verification exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$(wipectl --json report "$id")" '.passes[0].verified | "\(.result) \(.mode)"' "passed sample" "report $id (sampled)"

# --- a device without secure discard: the job fails at once, clearly, and nothing is lost ---------
scramble "$dev"
before=$(sha256sum < "$dev")
expect_exit 6 wipectl wipe --yes --method secure-discard "$dev"
id=$(wipectl --json list | jq -r '.jobs[-1].id')
st=$(wipectl --json status "$id")
jq_is "$st" '.jobs[0] | "\(.state) \(.error.code) \(.pass_list | join(","))"' "failed EOPNOTSUPP secure-discard" "job $id (secure-discard)"
echo "$st" | jq -r '.jobs[0].error.message' | grep -qF "$dev: the device does not support secure-discard (BLKSECDISCARD)" ||
        fail "secure-discard failed with: $(echo "$st" | jq -r '.jobs[0].error.message')"
[ "$(sha256sum < "$dev")" = "$before" ] || fail "a refused secure discard changed $dev"
jq_is "$(wipectl --json report "$id")" '"\(.state) \(.passes[0].command) \(.passes[0].written)"' \
        "failed BLKSECDISCARD false" "report $id (secure-discard)"
# The daemon goes on: another device is wiped meanwhile and after.
scramble "$other"
out=$(wipectl --json wipe --yes --method zeroout --verify all "$other") || fail "zeroout of $other after the failure exited $?"
cmp -n $((16 << 20)) "$other" /dev/zero || fail "$other does not read zeros"

# --- the refusals protect these too ---------------------------------------------------------------
fs=$(make_loop 32M)
mkfs.ext4 -q -L wiped-offload "$fs" || hard_error "mkfs.ext4 failed"
mkdir -p "$TEST_DIR/mnt"
mount "$fs" "$TEST_DIR/mnt" || skip "cannot mount ext4 here"
register_mount "$TEST_DIR/mnt"
jobs_before=$(wipectl --json list | jq '.jobs | length')
for m in zeroout discard secure-discard; do
        expect_exit 5 wipectl wipe --yes --method "$m" "$fs"
        grep -q "$fs: refusing: is mounted on $TEST_DIR/mnt" "$TEST_DIR/err" || fail "mounted, $m: $(cat "$TEST_DIR/err")"
done
# Refused before a job exists (refusals.sh shows that a refused submit writes nothing).
[ "$(wipectl --json list | jq '.jobs | length')" = "$jobs_before" ] || fail "a refused erase left a job"
umount "$TEST_DIR/mnt" || hard_error "umount failed"
stop_daemon || fail "daemon exit status $?"
pass
