#!/bin/bash
# A device another block device is stacked on (here a device-mapper linear target over the test's
# own loop device) is refused, naming the holder, and nothing is written; once the holder is
# gone the device may be wiped. Skips (77) without dmsetup or a device-mapper driver.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v socat >/dev/null || hard_error "socat missing (tools/install-deps installs it)"
command -v dmsetup >/dev/null || skip "dmsetup missing"
[ -c /dev/mapper/control ] || skip "no /dev/mapper/control (no device-mapper in this kernel)"
dmsetup version 2>/dev/null | grep -q '^Driver version' || skip "device-mapper driver not available"

dev=$(make_loop 32M)
head -c $((32 << 20)) /dev/urandom | dd of="$dev" bs=1M oflag=direct iflag=fullblock status=none || hard_error "cannot fill $dev"
sectors=$(blockdev --getsz "$dev") || hard_error "blockdev $dev"
name=wiped-test-$(basename "$TEST_DIR")
# Only ever over the test's own loop device, by the path losetup printed.
case $dev in /dev/loop[0-9]*) ;; *) hard_error "not a loop device: $dev" ;; esac
register_dm "$name"
dmsetup create "$name" --table "0 $sectors linear $dev 0" || hard_error "dmsetup create failed"
holder=$(ls "/sys/class/block/$(basename "$dev")/holders")
case $holder in dm-[0-9]*) ;; *) hard_error "holders of $dev: '$holder'" ;; esac
cp "$dev" "$TEST_DIR/before" || hard_error "cannot copy $dev"

start_daemon --threads 2
msg="$dev: refusing: is held by $holder (device-mapper '$name')"
reply=$(request '{"id":1,"op":"submit","devices":["'"$dev"'"]}')
jq_is "$reply" .error.code EBUSY "submit of held $dev"
jq_is "$reply" .error.message "$msg" "submit of held $dev"
expect_exit 5 wipectl wipe --yes "$dev"
grep -qF "$msg" "$TEST_DIR/err" || fail "wipectl wipe of held $dev: $(cat "$TEST_DIR/err")"
reply=$(request '{"id":2,"op":"probe","devices":["'"$dev"'"]}')
jq_is "$reply" '.devices[0] | "\(.wipeable) \(.refusal.code) \(.refusal.message)"' "false EBUSY $msg" "probe of held $dev"
cmp "$dev" "$TEST_DIR/before" || fail "$dev changed although it was refused"
[ "$(wipectl --json list | jq '.jobs | length')" = 0 ] || fail "a refused request left a job"

# The holder gone, the device may be wiped.
dmsetup remove --retry "$name" || hard_error "dmsetup remove failed"
reply=$(request '{"id":3,"op":"probe","devices":["'"$dev"'"]}')
jq_is "$reply" .devices[0].wipeable true "probe of $dev without its holder"
out=$(wipectl --json wipe --yes "$dev") || fail "wipe of $dev exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
[ "$(job_field "$id" state)" = done ] || fail "job $id: $(wipectl --json status "$id")"
check_keystream "$dev" "$(job_cipher "$id")" "$(job_key "$id")"
stop_daemon || fail "daemon exit status $?"
pass
