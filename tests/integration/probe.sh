#!/bin/bash
# Probe and identity: a mounted file system (on the device or on one of its partitions) is refused
# and nothing is written; unmounted, the probe shows what libblkid, blkid and wipefs see (file
# system, label, UUID, GPT and its partitions) and what the device is (size, sectors, loop backing
# file and inode) and what the block layer offers to erase (discard, write-zeroes: the queue limits
# in sysfs, a partition's being its disk's); the job records that identity; after the wipe no
# signature is left.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v socat >/dev/null || hard_error "socat missing (tools/install-deps installs it)"
for c in mkfs.ext4 mkswap blkid blkdiscard wipefs blockdev sfdisk partx; do
        command -v $c >/dev/null || hard_error "$c missing (tools/install-deps installs it)"
done

# probe_json DEV: the PROBE object wipectl --json probe prints for DEV (whatever its exit code).
probe_json() {
        local out
        out=$(wipectl --json probe "$1" 2> "$TEST_DIR/probe.err")
        echo "$out" | jq -e -c '.devices | length == 1' > /dev/null ||
                fail "probe $1: not {\"devices\":[one PROBE]}: $out $(cat "$TEST_DIR/probe.err")"
        echo "$out" | jq -c '.devices[0]'
}

# wipefs_sigs DEV: "type@offset" of every signature wipefs finds, sorted, one per line.
wipefs_sigs() {
        wipefs -J "$1" | jq -r '.signatures[]? | "\(.type) \(.offset)"' |
                while read -r type offset; do echo "$type@$((offset))"; done | sort
}
probe_sigs() { echo "$1" | jq -r '.signatures[] | "\(.type)@\(.offset)"' | sort; }

# check_identity PROBE DEV FILE: the identity matches what blockdev, stat and sysfs say.
check_identity() {
        local p=$1 dev=$2 file=$3 name id
        name=$(basename "$dev")
        id=$(echo "$p" | jq -c '.identity')
        jq_is "$id" .node "$dev" "identity of $dev"
        jq_is "$id" .name "$name" "identity of $dev"
        jq_is "$id" '"\(.major):\(.minor)"' "$(stat -c '%Hr:%Lr' "$dev")" "identity of $dev"
        jq_is "$id" .size "$(blockdev --getsize64 "$dev")" "identity of $dev"
        jq_is "$id" .logical_sector "$(blockdev --getss "$dev")" "identity of $dev"
        jq_is "$id" .physical_sector "$(blockdev --getpbsz "$dev")" "identity of $dev"
        jq_is "$id" .minimum_io "$(blockdev --getiomin "$dev")" "identity of $dev"
        jq_is "$id" .optimal_io "$(blockdev --getioopt "$dev")" "identity of $dev"
        jq_is "$id" .alignment_offset "$(blockdev --getalignoff "$dev")" "identity of $dev"
        jq_is "$id" .rotational "$([ "$(cat /sys/class/block/$name/queue/rotational)" = 1 ] && echo true || echo false)" "identity of $dev"
        jq_is "$id" .removable "$([ "$(cat /sys/class/block/$name/removable)" = 1 ] && echo true || echo false)" "identity of $dev"
        jq_is "$id" .read_only false "identity of $dev"
        jq_is "$id" .transport loop "identity of $dev"
        jq_is "$id" '.by_id | type' array "identity of $dev"
        jq_is "$id" .loop.backing_file "$file" "identity of $dev"
        jq_is "$id" .loop.backing_inode "$(stat -c %i "$file")" "identity of $dev"
        jq_is "$id" .loop.backing_device "$(stat -c '%Hd:%Ld' "$file")" "identity of $dev"
}

# check_erase PROBE DEV [DISK]: the erase offloads are the queue limits sysfs has for DEV (for a
# partition, for its DISK), in JSON and in the text of wipectl probe; they are not in the identity.
# A loop device over a file in /dev/shm discards (tmpfs punches holes). Its write-zeroes limit is
# not fixed: tmpfs has no FALLOC_FL_ZERO_RANGE, and newer kernels set the limit to 0 after the first
# BLKZEROOUT (mkfs issues one) fails with EOPNOTSUPP; the kernel then writes zero pages instead.
check_erase() {
        local p=$1 dev=$2 q e max gran wz unmap=null text zeroes
        q=/sys/block/$(basename "${3:-$2}")/queue
        max=$(cat "$q/discard_max_bytes") && gran=$(cat "$q/discard_granularity") &&
                wz=$(cat "$q/write_zeroes_max_bytes") || hard_error "no queue limits in $q"
        [ -e "$q/write_zeroes_unmap_max_bytes" ] && unmap=$(cat "$q/write_zeroes_unmap_max_bytes")
        [ "$max" -gt 0 ] || hard_error "$dev: the kernel gives a loop device over tmpfs no discard"
        e=$(echo "$p" | jq -c '.erase')
        jq_is "$e" .discard.supported true "erase offloads of $dev"
        jq_is "$e" .discard.max_bytes "$max" "erase offloads of $dev"
        jq_is "$e" .discard.granularity "$gran" "erase offloads of $dev"
        jq_is "$e" .write_zeroes.offloaded "$([ "$wz" -gt 0 ] && echo true || echo false)" "erase offloads of $dev"
        jq_is "$e" .write_zeroes.max_bytes "$wz" "erase offloads of $dev"
        jq_is "$e" .write_zeroes.unmap_max_bytes "$unmap" "erase offloads of $dev"
        jq_is "$e" 'has("secure_discard") and .secure_discard == null' true "erase offloads of $dev"
        jq_is "$p" '.identity | has("erase")' false "identity of $dev"
        if [ "$wz" -gt 0 ]; then zeroes="write-zeroes (up to $wz bytes"; else zeroes="write-zeroes not offloaded (zeroing writes)"; fi
        text=$(wipectl --bytes probe "$dev" 2>&1)
        echo "$text" | grep -qF "Erase offloads:  discard (up to $max bytes, granularity $gran bytes), $zeroes" ||
                fail "probe text (--bytes) of $dev does not show the offloads: $text"
        [ "$wz" -gt 0 ] && zeroes="write-zeroes (up to [0-9.]* [KMGT]\?i\?B"
        text=$(wipectl probe "$dev" 2>&1)
        echo "$text" | grep -A1 "^  Erase offloads:  discard (up to [0-9.]* [KMGT]\?i\?B, granularity [0-9.]* [KMGT]\?i\?B), $zeroes" |
                grep -q "^ *secure discard unknown until tried$" ||
                fail "probe text of $dev does not show the offloads: $text"
}

# check_wiped ID DEV: the job ended done, its report finds no signature left, nor do blkid and wipefs.
check_wiped() {
        local id=$1 dev=$2 report rc out
        [ "$(job_field "$id" state)" = done ] || fail "job $id: $(wipectl --json status "$id")"
        report=$(wipectl --json report "$id") || fail "report $id exited $?"
        jq_is "$report" '.signatures_after | tostring' '[]' "report of job $id"
        blkid -p "$dev" > "$TEST_DIR/blkid.out" 2>&1
        rc=$?
        [ $rc = 2 ] || fail "blkid -p $dev after the wipe exited $rc (2: nothing found): $(cat "$TEST_DIR/blkid.out")"
        out=$(wipefs "$dev") || fail "wipefs $dev exited $?"
        [ -z "$out" ] || fail "wipefs $dev after the wipe: $out"
        check_keystream "$dev" "$(job_cipher "$id")" "$(job_key "$id")"
}

start_daemon --threads 2

# --- Erase offloads of a fresh loop device, and again after a BLKZEROOUT -----------------------
efile=$TEST_DIR/erase.img
truncate -s 16M "$efile" || hard_error "truncate failed"
edev=$(make_loop_file "$efile" --direct-io=on)
check_erase "$(probe_json "$edev")" "$edev"
[ "$(cat /sys/block/$(basename "$edev")/queue/write_zeroes_max_bytes)" -gt 0 ] ||
        note "$edev: no write-zeroes offload even fresh: only the not-offloaded text is checked"
# The limits are the kernel's of the moment: a probe after a zeroing shows what sysfs says then.
blkdiscard -z -l 1M "$edev" || hard_error "blkdiscard -z $edev failed"
check_erase "$(probe_json "$edev")" "$edev"

# --- ext4 on the whole device -----------------------------------------------------------------
file=$TEST_DIR/ext4.img
truncate -s 64M "$file" || hard_error "truncate failed"
dev=$(make_loop_file "$file" --direct-io=on)
# No lazy initialisation: a mounted file system that is left alone writes nothing later.
mkfs.ext4 -q -L wiped-probe -E lazy_itable_init=0,lazy_journal_init=0 "$dev" || hard_error "mkfs.ext4 failed"
uuid=$(blkid -c /dev/null -s UUID -o value "$dev")
[ -n "$uuid" ] || hard_error "blkid finds no UUID on $dev"
mnt=$TEST_DIR/mnt
mkdir -p "$mnt"
# Read-only first: then the kernel writes nothing and "nothing written" can be checked exactly.
mount -o ro "$dev" "$mnt" || skip "cannot mount ext4 here"
register_mount "$mnt"
cp "$dev" "$TEST_DIR/before" || hard_error "cannot copy $dev"

expect_exit 5 wipectl wipe --yes "$dev"
grep -qF "$dev: refusing: is mounted on $mnt" "$TEST_DIR/err" || fail "mounted (ro): $(cat "$TEST_DIR/err")"
reply=$(request '{"id":3,"op":"submit","devices":["'"$dev"'"]}')
jq_is "$reply" .error.code EBUSY "submit of mounted $dev"
jq_is "$reply" .error.message "$dev: refusing: is mounted on $mnt" "submit of mounted $dev"
p=$(probe_json "$dev")
jq_is "$p" .wipeable false "probe of mounted $dev"
jq_is "$p" .refusal.code EBUSY "probe of mounted $dev"
jq_is "$p" .refusal.message "$dev: refusing: is mounted on $mnt" "probe of mounted $dev"
wipectl probe "$dev" > "$TEST_DIR/probe.txt" 2>&1
grep -qF "mounted on $mnt" "$TEST_DIR/probe.txt" || fail "probe text does not say why: $(cat "$TEST_DIR/probe.txt")"
cmp "$dev" "$TEST_DIR/before" || fail "$dev changed after a refused wipe and a probe"
[ "$(wipectl --json list | jq '.jobs | length')" = 0 ] || fail "a refused request left a job"

# Mounted read-write: the same refusal.
mount -o remount,rw "$mnt" || hard_error "remount rw failed"
expect_exit 5 wipectl wipe --yes "$dev"
grep -qF "$dev: refusing: is mounted on $mnt" "$TEST_DIR/err" || fail "mounted (rw): $(cat "$TEST_DIR/err")"
umount "$mnt" || hard_error "umount failed"
fsck.ext4 -n "$dev" > /dev/null 2>&1 || fail "ext4 on $dev damaged by a refused wipe"

# Unmounted: wipeable, and the probe shows the file system, its label and UUID, where wipefs does.
p=$(probe_json "$dev")
jq_is "$p" .path "$dev" "probe of $dev"
jq_is "$p" .node "$dev" "probe of $dev"
jq_is "$p" .wipeable true "probe of $dev"
jq_is "$p" '.refusal // "none"' none "probe of $dev"
jq_is "$p" '[.signatures[] | select(.type == "ext4" and .usage == "filesystem")] | length' 1 "probe of $dev"
jq_is "$p" '.signatures[] | select(.type == "ext4") | .label' wiped-probe "probe of $dev"
jq_is "$p" '.signatures[] | select(.type == "ext4") | .uuid' "$uuid" "probe of $dev"
[ "$(probe_sigs "$p")" = "$(wipefs_sigs "$dev")" ] ||
        fail "probe signatures $(probe_sigs "$p" | tr '\n' ' ') differ from wipefs: $(wipefs_sigs "$dev" | tr '\n' ' ')"
jq_is "$p" .partition_table null "probe of $dev"
jq_is "$p" '.partitions | tostring' '[]' "probe of $dev"
check_identity "$p" "$dev" "$file"
check_erase "$p" "$dev"
wipectl probe "$dev" > "$TEST_DIR/probe.txt" || fail "probe $dev (text) exited $?"
grep -q "ext4" "$TEST_DIR/probe.txt" && grep -qF "wiped-probe" "$TEST_DIR/probe.txt" && grep -qF "$uuid" "$TEST_DIR/probe.txt" ||
        fail "probe text lacks ext4, label or UUID: $(cat "$TEST_DIR/probe.txt")"
grep -q "^  Transport: *loop$" "$TEST_DIR/probe.txt" || fail "probe text lacks the transport: $(cat "$TEST_DIR/probe.txt")"

# The wipe proceeds; the job records the identity the probe showed and what was on the device.
out=$(wipectl --json wipe --yes "$dev") || fail "wipe of unmounted $dev exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
job=$(wipectl --json status "$id" | jq -c '.jobs[0]')
[ "$(echo "$job" | jq -S -c .identity)" = "$(echo "$p" | jq -S -c .identity)" ] ||
        fail "job identity $(echo "$job" | jq -c .identity) differs from the probe's $(echo "$p" | jq -c .identity)"
report=$(wipectl --json report "$id")
[ "$(echo "$report" | jq -S -c .identity)" = "$(echo "$p" | jq -S -c .identity)" ] ||
        fail "report identity $(echo "$report" | jq -c .identity) differs from the probe's"
jq_is "$report" '[.signatures_before[] | select(.type == "ext4" and .label == "wiped-probe" and .uuid == "'"$uuid"'")] | length' 1 "report of job $id"
check_wiped "$id" "$dev"
p=$(probe_json "$dev")
jq_is "$p" '.signatures | tostring' '[]' "probe of $dev after the wipe"

# --- GPT, two partitions, the first one mounted -----------------------------------------------
gfile=$TEST_DIR/gpt.img
truncate -s 64M "$gfile" || hard_error "truncate failed"
gdev=$(make_loop_file "$gfile" --direct-io=on -P)
LINUX=0fc63daf-8483-4772-8e79-3d69d8477de4
SWAP=0657fd6d-a4ab-43c4-84e5-0933c84b4f4f
printf 'label: gpt\nsize=24MiB, type=%s, name=wiped-one\nsize=16MiB, type=%s, name=wiped-two\n' $LINUX $SWAP |
        sfdisk -q "$gdev" > "$TEST_DIR/sfdisk.out" 2>&1 || hard_error "sfdisk failed: $(cat "$TEST_DIR/sfdisk.out")"
for _ in $(seq 20); do [ -b "${gdev}p1" ] && [ -b "${gdev}p2" ] && break; sleep 0.1; done
# A kernel without the GPT parser (CONFIG_EFI_PARTITION unset) makes no partitions on its own:
# partx reads the table in user space and adds them (BLKPG); detaching the loop removes them.
if ! [ -b "${gdev}p1" ]; then
        partx -a "$gdev" || hard_error "no partitions on $gdev after sfdisk and partx -a fails"
        for _ in $(seq 50); do [ -b "${gdev}p1" ] && [ -b "${gdev}p2" ] && break; sleep 0.1; done
fi
[ -b "${gdev}p1" ] && [ -b "${gdev}p2" ] || hard_error "no ${gdev}p1 and ${gdev}p2 after sfdisk"
mkfs.ext4 -q -L wiped-p1 -E lazy_itable_init=0,lazy_journal_init=0 "${gdev}p1" || hard_error "mkfs.ext4 p1 failed"
mkswap -q -L wiped-p2 "${gdev}p2" || hard_error "mkswap p2 failed"
p1uuid=$(blkid -c /dev/null -s UUID -o value "${gdev}p1")
p2uuid=$(blkid -c /dev/null -s UUID -o value "${gdev}p2")
ptuuid=$(blkid -p -s PTUUID -o value "$gdev")
[ -n "$p1uuid" ] && [ -n "$p2uuid" ] && [ -n "$ptuuid" ] || hard_error "blkid: '$p1uuid' '$p2uuid' '$ptuuid'"
gmnt=$TEST_DIR/gmnt
mkdir -p "$gmnt"
mount -o ro "${gdev}p1" "$gmnt" || hard_error "cannot mount ${gdev}p1"
register_mount "$gmnt"
cp "$gdev" "$TEST_DIR/before" || hard_error "cannot copy $gdev"

expect_exit 5 wipectl wipe --yes "$gdev"
# The message names the device, then the partition and where it is mounted.
grep -qF "$gdev: refusing: " "$TEST_DIR/err" && grep -qF "${gdev}p1 is mounted on $gmnt" "$TEST_DIR/err" ||
        fail "partition mounted: $(cat "$TEST_DIR/err")"

p=$(probe_json "$gdev")
jq_is "$p" .wipeable false "probe of $gdev"
jq_is "$p" .refusal.code EBUSY "probe of $gdev"
jq_is "$p" '.refusal.message | startswith("'"$gdev: refusing: "'") and contains("'"${gdev}p1 is mounted on $gmnt"'")' true "probe of $gdev"
jq_is "$p" .partition_table.type gpt "probe of $gdev"
jq_is "$p" .partition_table.uuid "$ptuuid" "probe of $gdev"
jq_is "$p" '.partitions | length' 2 "probe of $gdev"
jq_is "$p" '[.signatures[] | select(.type == "gpt" and .usage == "partition_table")] | length > 0' true "probe of $gdev"
[ "$(probe_sigs "$p")" = "$(wipefs_sigs "$gdev")" ] ||
        fail "probe signatures $(probe_sigs "$p" | tr '\n' ' ') differ from wipefs: $(wipefs_sigs "$gdev" | tr '\n' ' ')"
for n in 1 2; do
        part=$(echo "$p" | jq -c ".partitions[$((n - 1))]")
        pnode=${gdev}p$n
        jq_is "$part" .number $n "partition $n"
        jq_is "$part" .node "$pnode" "partition $n"
        jq_is "$part" .start $(($(cat /sys/class/block/$(basename "$pnode")/start) * 512)) "partition $n"
        jq_is "$part" .size "$(blockdev --getsize64 "$pnode")" "partition $n"
        jq_is "$part" .uuid "$(blkid -p -s PART_ENTRY_UUID -o value "$pnode")" "partition $n"
done
jq_is "$p" .partitions[0].type $LINUX "partition 1"
jq_is "$p" .partitions[0].name wiped-one "partition 1"
jq_is "$p" '.partitions[0].filesystem | "\(.type) \(.label) \(.uuid)"' "ext4 wiped-p1 $p1uuid" "partition 1"
jq_is "$p" .partitions[0].mountpoint "$gmnt" "partition 1"
jq_is "$p" .partitions[1].type $SWAP "partition 2"
jq_is "$p" .partitions[1].name wiped-two "partition 2"
jq_is "$p" '.partitions[1].filesystem | "\(.type) \(.label) \(.uuid)"' "swap wiped-p2 $p2uuid" "partition 2"
jq_is "$p" .partitions[1].mountpoint null "partition 2"
cmp "$gdev" "$TEST_DIR/before" || fail "$gdev changed after a refused wipe and a probe"

# Unmounted, it may be wiped, and then nothing is found on it.
umount "$gmnt" || hard_error "umount failed"
# A partition has no queue limits of its own in sysfs: its erase offloads are its disk's.
p=$(probe_json "${gdev}p1")
check_erase "$p" "${gdev}p1" "$gdev"
# And its transport is its disk's.
jq_is "$p" .identity.transport loop "identity of ${gdev}p1"
wipectl probe "${gdev}p1" | grep -q "^  Transport: *loop$" || fail "probe text of ${gdev}p1: $(wipectl probe "${gdev}p1")"
# So is whether it spins: a partition of a rotational disk is rotational (it has no queue/rotational
# of its own), and is written in order like its disk.
for r in 1 0; do
        echo $r > "/sys/block/${gdev#/dev/}/queue/rotational" 2>/dev/null || continue
        want=true
        [ $r = 1 ] || want=false
        jq_is "$(probe_json "${gdev}p1")" .identity.rotational $want "identity of ${gdev}p1 with its disk's rotational $r"
done
p=$(probe_json "$gdev")
jq_is "$p" .wipeable true "probe of unmounted $gdev"
jq_is "$p" .partitions[0].mountpoint null "partition 1 unmounted"
out=$(wipectl --json wipe --yes "$gdev") || fail "wipe of $gdev exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$(wipectl --json report "$id")" '[.signatures_before[] | select(.type == "gpt")] | length > 0' true "report of job $id"
check_wiped "$id" "$gdev"

# --- The probe request itself -------------------------------------------------------------------
# Validation: 1 to 256 paths, strings only.
for bad in '{"id":1,"op":"probe"}' '{"id":1,"op":"probe","devices":[]}' '{"id":1,"op":"probe","devices":"'"$dev"'"}' \
           '{"id":1,"op":"probe","devices":[7]}'; do
        jq_is "$(request "$bad")" .error.code EINVAL "reply to $bad"
done
paths=$(for i in $(seq 256); do printf '"%s/missing-%d",' "$TEST_DIR" $i; done)
reply=$(request '{"id":9,"op":"probe","devices":['"${paths%,}"']}')
jq_is "$reply" '"\(.ok) \(.devices | length) \([.devices[] | select(.node == null and .wipeable == false and .refusal.code == "ENOENT")] | length)"' \
        "true 256 256" "probe of 256 missing paths"
jq_is "$reply" '.devices[255].path' "$TEST_DIR/missing-256" "probe of 256 missing paths"
reply=$(request '{"id":9,"op":"probe","devices":['"$paths"'"/dev/nope"]}')
jq_is "$reply" .error.code EINVAL "probe of 257 paths"

# Probing needs the same privilege as wiping.
if command -v setpriv >/dev/null; then
        chmod 0711 "$TEST_DIR"
        chmod 0666 "$SOCK"
        out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$WIPECTL_BIN" --socket "$SOCK" probe "$dev" 2>&1)
        rc=$?
        [ $rc = 4 ] || fail "unprivileged probe exited $rc: $out"
fi

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
