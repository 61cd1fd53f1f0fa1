#!/bin/bash
# A device failing mid-wipe fails its own job only; the others finish.
#
# The failing device is real: an inner loop device (direct I/O) over a file on an ext4 file
# system, itself on an outer loop device of the test's own. Once the inner job has made progress
# the file system is shut down (xfs_io's "shutdown", the EXT4_IOC_SHUTDOWN ioctl, as fstests'
# godown does), and from then on every read and write of the inner loop device fails with EIO.
#
# This also stands in for a device detached mid-wipe: "losetup -d" of a loop device that is open
# (the daemon holds it) only sets autoclear, so the device goes on working until its last close;
# a real disk that drops off the bus behaves like the shut-down file system: every I/O ends EIO.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

command -v xfs_io >/dev/null || skip "xfs_io missing (package xfsprogs; tools/install-deps installs it)"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"

others=()
for _ in $(seq 3); do others+=("$(make_loop 256M)"); done

# The ext4 file system: 1 GiB of inner device. Its backing file is sparse: only what is written
# takes memory.
outer=$(make_loop 1200M)
mkfs.ext4 -q -F "$outer" || hard_error "mkfs.ext4 $outer failed"
mnt=$TEST_DIR/mnt
mkdir "$mnt" || hard_error "mkdir $mnt"
mount -t ext4 "$outer" "$mnt" || skip "cannot mount ext4 here"
register_mount "$mnt"
truncate -s 1G "$mnt/inner.img" || hard_error "cannot create $mnt/inner.img"
inner=$(make_loop_file "$mnt/inner.img" --direct-io=on) || exit $?

# The inner loop device must be gone before the file system can be unmounted: at cleanup it goes
# first (cleanup detaches loops in file order, and unmounts only after all are detached).
{ echo "$inner"; grep -vx "$inner" "$TEST_DIR/loops"; } > "$TEST_DIR/loops.new" && mv "$TEST_DIR/loops.new" "$TEST_DIR/loops"

# A rate limit holds the inner job in its pass, so that it is certainly still writing when its file
# system goes, however fast the devices: its 1 GiB at 16 MB/s would take about 67 s. The other jobs'
# 256 MiB at 128 MB/s take about 2 s: they run on beside the failure.
start_daemon --threads 2
out=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 16M "$inner") || fail "submit of $inner exited $?: $out"
inner_id=$(echo "$out" | jq -r '.jobs[0].id')
[[ $inner_id =~ ^[0-9]+$ ]] || fail "no job for $inner: $out"
out=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 128M "${others[@]}") || fail "submit exited $?: $out"
[ "$(echo "$out" | jq '.jobs | length')" = 3 ] || fail "expected three jobs: $out"
mapfile -t ids < <(echo "$out" | jq -r '.jobs[].id')

# Fail the file system once the inner job has written something (and before it has written all).
for _ in $(seq 600); do
        st=$(wipectl --json status "$inner_id") || fail "status exited $?"
        state=$(echo "$st" | jq -r '.jobs[0].state')
        done_bytes=$(echo "$st" | jq -r '.jobs[0].bytes_done')
        [ "$state" = running ] || fail "job $inner_id on $inner is $state before the file system failed: $st"
        [ "$done_bytes" -gt 0 ] && break
        sleep 0.05
done
[ "$done_bytes" -gt 0 ] || fail "job $inner_id on $inner made no progress in 30 s"
xfs_io -x -c "shutdown -f" "$mnt" || skip "xfs_io cannot shut down ext4 here"
note "shut down the file system under $inner after $((done_bytes >> 20)) MiB of 1024"

# The inner job fails, with EIO, within a minute (a hung job would never end).
state=$(wait_job "$inner_id" 60)
st=$(wipectl --json status "$inner_id") || fail "status exited $?"
[ "$state" = failed ] || fail "job $inner_id on the failed file system ended $state: $st"
code=$(echo "$st" | jq -r '.jobs[0].error.code')
[ "$code" = EIO ] || fail "job $inner_id failed with $code, expected EIO: $st"
echo "$st" | jq -r '.jobs[0].error.message' | grep -q "^$inner: " || fail "the error does not name $inner: $st"
[ "$(echo "$st" | jq -r '.jobs[0].bytes_done')" -lt $((1 << 30)) ] || fail "all of $inner counted as written: $st"

# The daemon is alive and answers; every other job ends done with exactly its keystream.
daemon_alive || fail "daemon died"
wipectl version > /dev/null || fail "the daemon does not answer after the failure"
for id in "${ids[@]}"; do
        state=$(wait_job "$id" 300)
        dev=$(job_field "$id" node)
        [ "$state" = done ] || fail "job $id on $dev ended $state"
        check_keystream "$dev" "$(job_cipher "$id")" "$(job_key "$id")"
done
[ "$(wipectl --json list | jq '[.jobs[] | select(.state == "done")] | length')" = 3 ] || fail "not three jobs done"

# Take the stack down here, in order, so that a leftover shows as a failure: the daemon, the
# inner loop device, the (shut down) file system; the outer device is left to cleanup.
stop_daemon || fail "daemon exit status $?"
detach_loop "$inner"
umount "$mnt" || fail "umount $mnt after the shutdown failed"
sed -i "\\|^$mnt\$|d" "$TEST_DIR/mounts"
pass
