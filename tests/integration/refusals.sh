#!/bin/bash
# Devices that must not be written are refused with a clear error, and a refused submit writes
# nothing at all, not even to the devices of the same request that were acceptable.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v mkfs.ext4 >/dev/null || hard_error "mkfs.ext4 missing"

good=$(make_loop 32M)
fs=$(make_loop 64M)
mkfs.ext4 -q -L wiped-test "$fs" || hard_error "mkfs.ext4 failed"
mkdir -p "$TEST_DIR/mnt"
mount "$fs" "$TEST_DIR/mnt" || skip "cannot mount ext4 here"
echo "$TEST_DIR/mnt" >> "$TEST_DIR/mounts"

ro_file=$TEST_DIR/ro.img
truncate -s 16M "$ro_file"
ro=$(losetup -f --show -r "$ro_file") || hard_error "losetup -r failed"
echo "$ro" >> "$TEST_DIR/loops"

start_daemon --threads 2 --queue-depth 1 --io-size 4K

expect_exit 5 wipectl wipe --yes "$fs"
grep -q "$fs: refusing: is mounted on $TEST_DIR/mnt" "$TEST_DIR/err" || fail "mounted: $(cat "$TEST_DIR/err")"

expect_exit 5 wipectl wipe --yes "$ro"
grep -q "$ro: refusing: .*read-only" "$TEST_DIR/err" || fail "read-only: $(cat "$TEST_DIR/err")"

# All or nothing: the good device named first is not touched when the second is refused.
expect_exit 5 wipectl wipe --yes "$good" "$fs"
cmp -n $((32 << 20)) "$good" /dev/zero || fail "$good was written by a refused request"
[ "$(wipectl --json list | jq '.jobs | length')" = 0 ] || fail "a refused request left a job"

# The same device twice: the CLI refuses it as a usage error, the daemon on its own too.
expect_exit 2 wipectl wipe --yes "$good" "$good"
reply=$(printf '{"id":1,"op":"submit","devices":["%s","%s"]}\n' "$good" "$TEST_DIR/link-good" |
        { ln -s "$good" "$TEST_DIR/link-good"; socat -t 5 - "UNIX-CONNECT:$SOCK"; })
echo "$reply" | grep -q "named twice" || fail "duplicate via a symlink: $reply"

# A symlink is resolved and the real node named.
ln -s "$fs" "$TEST_DIR/link"
expect_exit 5 wipectl wipe --yes "$TEST_DIR/link"
grep -q "$fs" "$TEST_DIR/err" || fail "symlink: $(cat "$TEST_DIR/err")"

# A device already being wiped (the first job held by a rate limit, 512 MiB at 16 MB/s: about 34 s,
# so that it certainly still runs however fast the device).
slow=$(make_loop 512M)
id=$(wipectl --json wipe --yes --no-wait --max-rate 16M "$slow" | jq -r '.jobs[0].id')
expect_exit 5 wipectl wipe --yes "$slow"
grep -q "already being wiped by job $id" "$TEST_DIR/err" || fail "busy: $(cat "$TEST_DIR/err")"
wipectl cancel "$id" > /dev/null || fail "cancel $id exited $?"
[ "$(wait_job "$id" 10)" = cancelled ] || fail "job $id was not cancelled"

# The file system is intact.
umount "$TEST_DIR/mnt" || fail "umount failed"
fsck.ext4 -n "$fs" > /dev/null 2>&1 || fail "ext4 on $fs damaged"
stop_daemon || fail "daemon exit status $?"
pass
