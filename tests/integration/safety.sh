#!/bin/bash
# Devices that must not be written are refused, each with its own code and message naming the
# device, by submit, by wipectl (exit 5) and by probe, and nothing is written: active swap, a
# device another program holds open exclusively, a read-only or empty loop device, a regular
# file, a directory, a missing path, a character device, a device already being wiped. What may
# be wiped is: a 4096-byte-sector device of an odd number of sectors (every byte checked) and a
# symlink to a device (the job names the link and the real node).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v socat >/dev/null || hard_error "socat missing (tools/install-deps installs it)"
command -v mkswap >/dev/null || hard_error "mkswap missing"
HOLD_EXCL=${HOLD_EXCL:-$top_builddir/tests/helpers/hold-excl}
[ -x "$HOLD_EXCL" ] || hard_error "$HOLD_EXCL not built (make check builds it)"

# random_loop SIZE [SECTOR]: a loop device filled with random bytes (so that any write shows).
random_loop() {
        local dev
        dev=$(make_loop "$@")
        head -c "$(blockdev --getsize64 "$dev")" /dev/urandom | dd of="$dev" bs=1M oflag=direct iflag=fullblock status=none ||
                hard_error "cannot fill $dev"
        echo "$dev"
}

# expect_refused PATH CODE MESSAGE [NODE]: a raw submit of PATH fails with CODE and a message
# starting with MESSAGE; wipectl wipe --yes exits 5 printing it; probe says not wipeable for the same
# reason (its node NODE, "null" when it does not resolve); no job is left; nothing is written
# (PATH's content, when it has any, is the same before and after; its first SNAP_BYTES bytes only,
# when that is set).
expect_refused() {
        local path=$1 code=$2 msg=$3 node=${4-$1} reply snap=
        if [ -b "$path" ] || [ -f "$path" ]; then
                snap=$TEST_DIR/snapshot
                if [ -n "${SNAP_BYTES:-}" ]; then
                        head -c "$SNAP_BYTES" "$path" > "$snap" || hard_error "cannot copy $path"
                else
                        cp "$path" "$snap" || hard_error "cannot copy $path"
                fi
        fi
        reply=$(request '{"id":11,"op":"submit","devices":["'"$path"'"]}')
        jq_is "$reply" .ok false "submit $path"
        jq_is "$reply" .id 11 "submit $path"
        jq_is "$reply" .error.code "$code" "submit $path"
        jq_starts "$reply" .error.message "$msg" "submit $path"
        expect_exit 5 wipectl wipe --yes "$path"
        grep -qF -- "$msg" "$TEST_DIR/err" || fail "wipectl wipe $path: '$(cat "$TEST_DIR/err")', expected '$msg'"
        reply=$(request '{"id":12,"op":"probe","devices":["'"$path"'"]}')
        jq_is "$reply" .ok true "probe $path"
        jq_is "$reply" .devices[0].path "$path" "probe $path"
        jq_is "$reply" .devices[0].node "$node" "probe $path"
        jq_is "$reply" .devices[0].wipeable false "probe $path"
        jq_is "$reply" .devices[0].refusal.code "$code" "probe $path"
        jq_starts "$reply" .devices[0].refusal.message "$msg" "probe $path"
        [ "$(wipectl --json list | jq '.jobs | length')" = "$JOBS" ] || fail "refusing $path left a job"
        if [ -n "$snap" ]; then
                cmp -n "$(stat -c %s "$snap")" "$path" "$snap" || fail "$path changed although it was refused"
        fi
        LAST_PROBE=$reply
}
JOBS=0

start_daemon --threads 2

# --- Active swap --------------------------------------------------------------------------------
sdev=$(make_loop 16M)
mkswap -q "$sdev" || hard_error "mkswap failed"
register_swap "$sdev"
swapon "$sdev" || skip "swapon not permitted here"
# Only its swap header is the test's to compare: the kernel may swap pages out to it meanwhile (it
# did, with other tests filling the machine's memory). A wipe would have begun at offset 0.
SNAP_BYTES=4096 expect_refused "$sdev" EBUSY "$sdev: refusing: is active swap"
swapon --show=NAME --noheadings | grep -qx "$sdev" || fail "$sdev is no longer active swap"
jq_is "$LAST_PROBE" '[.devices[0].signatures[] | select(.type == "swap")] | length' 1 "probe of swap $sdev"
swapoff "$sdev" || hard_error "swapoff failed"
jq_is "$(request '{"id":1,"op":"probe","devices":["'"$sdev"'"]}')" .devices[0].wipeable true "probe of $sdev after swapoff"

# --- Held open exclusively by another program -----------------------------------------------------
hdev=$(random_loop 16M)
"$HOLD_EXCL" "$hdev" > "$TEST_DIR/hold.out" 2>&1 &
hpid=$!
register_pid $hpid
for _ in $(seq 50); do grep -q held "$TEST_DIR/hold.out" && break; sleep 0.1; done
grep -q held "$TEST_DIR/hold.out" || hard_error "hold-excl did not hold $hdev: $(cat "$TEST_DIR/hold.out")"
expect_refused "$hdev" EBUSY "$hdev: refusing: is open exclusively by another program"
stop_pid $hpid
jq_is "$(request '{"id":1,"op":"probe","devices":["'"$hdev"'"]}')" .devices[0].wipeable true "probe of $hdev once released"

# --- Read-only and empty loop devices ----------------------------------------------------------
truncate -s 16M "$TEST_DIR/ro.img"
rdev=$(make_loop_file "$TEST_DIR/ro.img" -r)
expect_refused "$rdev" EROFS "$rdev: refusing: is read-only"
jq_is "$LAST_PROBE" .devices[0].identity.read_only true "probe of $rdev"
cmp -n $((16 << 20)) "$TEST_DIR/ro.img" /dev/zero || fail "$TEST_DIR/ro.img was written"

: > "$TEST_DIR/empty.img"
zdev=$(make_loop_file "$TEST_DIR/empty.img")
expect_refused "$zdev" ENXIO "$zdev: refusing: has zero size (no media)"
jq_is "$LAST_PROBE" .devices[0].identity.size 0 "probe of $zdev"

# --- Not block devices: each its own code and message -------------------------------------------
dir=$(realpath "$TEST_DIR")
head -c 1M /dev/urandom > "$dir/plain" || hard_error "cannot write $dir/plain"
mkdir "$dir/adir"
expect_refused "$dir/plain" ENOTBLK "$dir/plain: refusing: is a regular file, not a block device"
jq_is "$LAST_PROBE" .devices[0].identity null "probe of a regular file"
expect_refused "$dir/adir" EISDIR "$dir/adir: refusing: is a directory, not a block device"
jq_is "$LAST_PROBE" .devices[0].identity null "probe of a directory"
expect_refused "$dir/missing" ENOENT "$dir/missing: does not exist" null
jq_is "$LAST_PROBE" .devices[0].identity null "probe of a missing path"
expect_refused /dev/null ENOTBLK "/dev/null: refusing: is a character device, not a block device"
jq_is "$LAST_PROBE" .devices[0].identity null "probe of /dev/null"
[ -e "$dir/missing" ] && fail "a refused wipe created $dir/missing"
# A symlink that resolves to nothing names the link.
ln -s "$dir/missing" "$dir/dangling"
reply=$(request '{"id":1,"op":"submit","devices":["'"$dir/dangling"'"]}')
jq_is "$reply" .error.code ENOENT "submit of a dangling symlink"
jq_is "$reply" .error.message "$dir/dangling: does not exist" "submit of a dangling symlink"

# --- 4096-byte logical sectors, an odd number of them -------------------------------------------
SIZE4K=$((4096 * 2049))
kdev=$(random_loop $SIZE4K 4096)
[ "$(blockdev --getss "$kdev")" = 4096 ] || hard_error "$kdev: sector size $(blockdev --getss "$kdev")"
reply=$(request '{"id":1,"op":"probe","devices":["'"$kdev"'"]}')
jq_is "$reply" '.devices[0] | "\(.wipeable) \(.identity.size) \(.identity.logical_sector)"' "true $SIZE4K 4096" "probe of $kdev"
out=$(wipectl --json wipe --yes "$kdev") || fail "wipe of $kdev exited $?: $out"
JOBS=$((JOBS + 1))
id=$(echo "$out" | jq -r '.jobs[0].id')
job=$(wipectl --json status "$id" | jq -c '.jobs[0]')
jq_is "$job" '"\(.state) \(.size) \(.bytes_done == .bytes_total) \(.sector_size) \(.identity.logical_sector) \(.identity.size)"' \
        "done $SIZE4K true 4096 4096 $SIZE4K" "job $id on $kdev"
check_keystream "$kdev" "$(job_cipher "$id")" "$(job_key "$id")"

# --- A symlink to a loop device: accepted, the job names the link and the real node -------------
ldev=$(make_loop 16M)
link=$dir/link-to-loop
ln -s "$ldev" "$link"
reply=$(request '{"id":1,"op":"probe","devices":["'"$link"'"]}')
jq_is "$reply" '.devices[0] | "\(.path) \(.node) \(.identity.node) \(.wipeable) \(.identity.by_id | type)"' \
        "$link $ldev $ldev true array" "probe of $link"
out=$(wipectl --json wipe --yes "$link") || fail "wipe of $link exited $?: $out"
JOBS=$((JOBS + 1))
id=$(echo "$out" | jq -r '.jobs[0].id')
job=$(wipectl --json status "$id" | jq -c '.jobs[0]')
jq_is "$job" '"\(.state) \(.device) \(.node) \(.identity.node) \(.identity.by_id | type)"' \
        "done $link $ldev $ldev array" "job $id on $link"
report=$(wipectl --json report "$id")
jq_is "$report" '"\(.device) \(.identity.node)"' "$link $ldev" "report of job $id"
check_keystream "$ldev" "$(job_cipher "$id")" "$(job_key "$id")"
[ -L "$link" ] || fail "$link is no longer a symlink"
stop_daemon || fail "daemon exit status $?"

# --- The same device submitted while a job wipes it (held by a rate limit, 1 GiB at 16 MB/s:
# about 67 s, so that it certainly still runs however fast the device) --------------------------
start_daemon --threads 1 --queue-depth 1 --io-size 4K
bdev=$(make_loop 1G)
id=$(wipectl --json wipe --yes --no-wait --max-rate 16M "$bdev" | jq -r '.jobs[0].id')
[ "$(job_field "$id" state)" = running ] || hard_error "job $id is not running: $(wipectl --json status "$id")"
msg="$bdev: refusing: already being wiped by job $id"
reply=$(request '{"id":1,"op":"submit","devices":["'"$bdev"'"]}')
jq_is "$reply" '"\(.error.code) \(.error.message)"' "EBUSY $msg" "second submit of $bdev"
expect_exit 5 wipectl wipe --yes "$bdev"
grep -qF "$msg" "$TEST_DIR/err" || fail "second wipe of $bdev: $(cat "$TEST_DIR/err")"
ln -s "$bdev" "$dir/link-busy"
expect_exit 5 wipectl wipe --yes "$dir/link-busy"
grep -qF "$msg" "$TEST_DIR/err" || fail "second wipe of $bdev through a link: $(cat "$TEST_DIR/err")"
reply=$(request '{"id":1,"op":"probe","devices":["'"$bdev"'"]}')
jq_is "$reply" '.devices[0] | "\(.wipeable) \(.refusal.code) \(.refusal.message)"' "false EBUSY $msg" "probe of $bdev while wiped"
[ "$(job_field "$id" state)" = running ] || hard_error "job $id ended before the checks were done"
# (Jobs of the daemon's earlier runs are kept: only this one may be new.)
[ "$(wipectl --json list | jq "[.jobs[] | select(.id >= $id)] | length")" = 1 ] || fail "the refused second submit left a job"
wipectl cancel "$id" > /dev/null || fail "cancel $id failed"
[ "$(wait_job "$id" 30)" = cancelled ] || fail "job $id: $(wipectl --json status "$id")"

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
