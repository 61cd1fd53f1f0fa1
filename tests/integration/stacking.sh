#!/bin/bash
# Devices stacked on each other: a loop device whose backing file is another (block) device. The
# lower device is in use by the upper one (loop devices claim nothing and leave no holders/ link),
# and the upper one is built on whatever the lower one is: neither may be wiped while the other is
# in use. Every device here is a loop device the test made.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

lower=$(make_loop 64M)
upper=$(losetup -f --show "$lower") || hard_error "losetup over $lower failed"
# Detach the upper device first at cleanup: prepend it to the list.
{ echo "$upper"; cat "$TEST_DIR/loops"; } > "$TEST_DIR/loops.new" && mv "$TEST_DIR/loops.new" "$TEST_DIR/loops"
start_daemon --threads 1

expect_exit 5 wipectl wipe --yes "$lower"
grep -q "$lower: refusing: is the backing device of $upper" "$TEST_DIR/err" || fail "lower: $(cat "$TEST_DIR/err")"
cmp -n $((64 << 20)) "$lower" /dev/zero || fail "$lower was written"
[ "$(wipectl --json probe "$lower" | jq -r '.devices[0].wipeable')" = false ] || fail "probe calls $lower wipeable"

# The upper device is free to wipe while nothing uses the lower one...
out=$(wipectl --json wipe --yes --verify last "$upper") || fail "wipe of $upper exited $?: $out"
[ "$(echo "$out" | jq -r '.jobs[0].state')" = done ] || fail "wipe of $upper: $out"

# ...but not while the lower one is mounted.
mkfs.ext4 -q -F "$lower" || hard_error "mkfs.ext4 failed"
mkdir -p "$TEST_DIR/mnt"
mount "$lower" "$TEST_DIR/mnt" || skip "cannot mount ext4 here"
echo "$TEST_DIR/mnt" >> "$TEST_DIR/mounts"
# (Its bytes are the lower device's, which the mount itself changes: count jobs instead.)
jobs_before=$(wipectl --json list | jq '.jobs | length')
expect_exit 5 wipectl wipe --yes "$upper"
grep -q "$upper: refusing: is built on $lower, which is mounted on $TEST_DIR/mnt" "$TEST_DIR/err" ||
        fail "upper: $(cat "$TEST_DIR/err")"
umount "$TEST_DIR/mnt" || fail "umount"
[ "$(wipectl --json list | jq '.jobs | length')" = "$jobs_before" ] || fail "a refused request left a job"
fsck.ext4 -n "$lower" > /dev/null 2>&1 || fail "the file system on $lower was damaged"
stop_daemon || fail "daemon exit status $?"
pass
