#!/bin/bash
# Hot-plug bay policies (wiped(8) BAY POLICIES), driven by the kernel's own device events: loop
# devices attached after the daemon started. Every policy matches only this test's backing files
# (backing-file = $TEST_DIR/X-*.img), never another loop device of the machine. Checked: a matching
# empty device becomes a job of its policy and is wiped (every byte zero); one that goes again
# within the settle time starts nothing; a mounted one and a read-only one are refused with
# nothing written; one with a file system is skipped (content = empty); a device no policy
# matches is untouched; a disabled
# policy starts nothing until resumed; a device present at start is left alone (existing =
# ignore, also after a remove event while it stays) or wiped (existing = wipe); a finished drive
# plugged again is not wiped twice; the dry run in policies --json; a reload and a restart keep a paused policy paused; bad policy files are
# named FILE:LINE by --check-config; a restart keeps a job's policy; udev's monitor
# (policy-events = udev), fed an event in udev's format by tests/helpers/udev-send; and a disk
# whose first sectors cannot be read (tests/helpers/badfs) is no empty disk.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
UDEV_SEND=${UDEV_SEND:-$top_builddir/tests/helpers/udev-send}
[ -x "$UDEV_SEND" ] || hard_error "$UDEV_SEND not built"

PD=$TEST_DIR/policies.d
mkdir -p "$PD" "$TEST_DIR/mnt"
# policy NAME LINE...: write the policy file NAME.conf.
policy() {
        local name=$1
        shift
        printf '%s\n' "$@" > "$PD/$name.conf"
}
policy zero "# wipes what appears empty" "backing-file = $TEST_DIR/z-*.img" "method = zero" "verify = last" "settle = 1" \
        "hook = echo \"\$WIPED_POLICY \$WIPED_JOB \$WIPED_STATE\" >> $TEST_DIR/hook-zero.out" "hook-timeout = 30"
policy flap "backing-file = $TEST_DIR/g-*.img" "method = zero" "settle = 5"
policy mnt "backing-file = $TEST_DIR/m-*.img" "content = any" "method = zero" "settle = 3"
policy empty "backing-file = $TEST_DIR/f-*.img" "method = zero" "settle = 1"
policy off "backing-file = $TEST_DIR/p-*.img" "method = zero" "settle = 1" "enabled = no"
policy ex "backing-file = $TEST_DIR/e-*.img" "transport = loop" "method = zero" "settle = 0.5"
policy exw "backing-file = $TEST_DIR/w-*.img" "method = zero" "settle = 0.5" "existing = wipe"

# img NAME: a file of random bytes (no signature) in the test directory; prints its path.
img() {
        head -c 8M /dev/urandom > "$TEST_DIR/$1.img" || hard_error "cannot write $TEST_DIR/$1.img"
        echo "$TEST_DIR/$1.img"
}
# attach FILE: a loop device over FILE (registered for cleanup); prints its path.
attach() { make_loop_file "$1"; }
pol() { wipectl --json policies | jq -c --arg n "$1" '.policies[] | select(.name == $n)'; }
# has_event POLICY REGEX: the policy's events hold one matching.
has_event() { pol "$1" | jq -e --arg re "$2" '[.events[].event | test($re)] | any' >/dev/null; }
# job_by NODE POLICY: the daemon has a job on NODE started by POLICY.
# (By node and policy: another job of the state directory may have had the node before.)
job_by() {
        wipectl --json list | jq -e --arg d "$1" --arg p "$2" '[.jobs[] | select(.node == $d and .policy == $p)] | length == 1' >/dev/null
}
n_policies_is() { [ "$(wipectl --json policies | jq '.policies | length')" = "$1" ]; }
# jobs_of DEV: the jobs on DEV's backing file (not on its node: a node this test let go, and a
# job on it, may come back as another of its devices while other tests take and free loop devices).
jobs_of() {
        wipectl --json list | jq -r --arg f "$(loop_file "$1")" '[.jobs[] | select(.identity.loop.backing_file == $f)] | length'
}

# Present before the daemon starts: existing = ignore leaves it alone.
e1=$(img e-1)
e1dev=$(attach "$e1")
e1sum=$(sha256sum < "$e1")
# And one the policy with existing = wipe takes at the start.
w1=$(img w-1)
w1dev=$(attach "$w1")

start_daemon --policy-dir "$PD" --policy-events kernel
grep -q "policies: 7 loaded from $PD; watching devices (kernel events)" "$TEST_DIR/daemon.log" ||
        fail "no start-up line for the policies: $(grep -i polic "$TEST_DIR/daemon.log")"

# --- (8) the dry run: the present device the ex policy matches, left alone as existing. ---
json=$(wipectl --json policies) || fail "policies --json failed"
jq_is "$json" '.policies | length' 7 "policies --json"
jq_is "$json" '.events' kernel "policies --json"
jq_is "$json" '.policies[] | select(.name == "off") | .state' paused "enabled = no"
jq_is "$json" '.policies[] | select(.name == "zero") | .settle_s' 1 "settle"
jq_is "$json" '.policies[] | select(.name == "zero") | .method' zero "method"
jq_is "$json" '.policies[] | select(.name == "ex") | [.devices[] | .node] | join(",")' "$e1dev" "ex matches the present device"
jq_is "$json" '.policies[] | select(.name == "ex") | .devices[0] | "\(.would_wipe) \(.existing)"' "true true" "dry run of ex"
jq_is "$json" '[.policies[] | select(.name != "ex" and .name != "exw") | .devices[]] | length' 0 \
        "the other policies match nothing yet"

# existing = wipe: the disk there at the start is wiped after the settle time.
wait_until 30 "a job on $w1dev by policy exw" job_by "$w1dev" exw
idw=$(wipectl --json list | jq -r --arg d "$w1dev" '.jobs[] | select(.node == $d and .policy == "exw") | .job')
[ "$(wait_job "$idw" 60)" = done ] || fail "job $idw: $(job_field "$idw" state)"
cmp -n $((8 << 20)) "$w1dev" /dev/zero || fail "$w1dev: not zero after job $idw (existing = wipe)"
wipectl policies | grep -q "^policy zero: enabled" || fail "policies text: $(wipectl policies)"
# A remove event of a disk that stays (as udevadm trigger --action=remove makes, written here to
# the test's own device's uevent file), then a change: the disk was there all along, no new one
# for existing = ignore (its file is compared at the end, after the other cases).
echo remove > "/sys/block/${e1dev#/dev/}/uevent" || hard_error "cannot write the uevent file of $e1dev"
echo change > "/sys/block/${e1dev#/dev/}/uevent" || hard_error "cannot write the uevent file of $e1dev"

# --- (1) a matching empty device becomes a job of its policy, wiped to zeros. ---
z1=$(img z-1)
z1dev=$(attach "$z1")
wait_until 30 "a job on $z1dev by policy zero" job_by "$z1dev" zero
id=$(wipectl --json list | jq -r --arg d "$z1dev" '.jobs[] | select(.node == $d and .policy == "zero") | .job')
[ "$(wait_job "$id" 60)" = done ] || fail "job $id: $(job_field "$id" state)"
cmp -n $((8 << 20)) "$z1dev" /dev/zero || fail "$z1dev: not every byte is zero after job $id"
# The policy's own hook ran, with the policy's name in its environment.
hook_ran() { grep -qx "zero $id done" "$TEST_DIR/hook-zero.out" 2>/dev/null; }
wait_until 30 "the hook of policy zero for job $id" hook_ran
has_event zero "job $id started" || fail "policy zero: no event of job $id: $(pol zero)"
jq_is "$(pol zero)" '.jobs_started' 1 "policy zero"
wipectl status "$id" | grep -q "policy.*zero" || fail "status $id does not name the policy: $(wipectl status "$id")"
jq_is "$(wipectl --json report "$id")" '.policy' zero "report of job $id"
wipectl report "$id" | grep -qi "policy.*zero" || fail "report text of job $id does not name the policy"
# Its sanitization record (issue 20): a batch of its own, the configuration's defaults (none here).
jq_is "$(wipectl --json report "$id")" '"\(.batch | test("^[0-9a-f]{32}$")) \(.operator) \(.asset_tag)"' "true null null" \
        "report of job $id"
[ "$(wipectl --json report "$id" | jq -r .batch)" != "$(wipectl --json report "$idw" | jq -r .batch)" ] ||
        fail "jobs $idw and $id of policies share a batch"
grep -q "policy zero: /dev/.*: job $id started" "$TEST_DIR/daemon.log" || fail "no log line of job $id"

# A finished drive plugged in again is not wiped twice.
detach_loop "$z1dev"
z1dev=$(attach "$z1")
wait_until 30 "policy zero skips $z1dev (it has a job)" has_event zero "skipped: already has job $id"
# (Counted by policy: the device may come back under another loop number than the job's node.)
[ "$(wipectl --json list | jq '[.jobs[] | select(.policy == "zero")] | length')" = 1 ] ||
        fail "a second job of policy zero after $z1 came back as $z1dev: $(wipectl list)"

# --- (2) a device that goes within the settle time starts nothing. ---
g1=$(img g-1)
g1dev=$(attach "$g1")
sleep 0.5
detach_loop "$g1dev"
wait_until 30 "policy flap says $g1dev went" has_event flap "gone within the settle time"
jq_is "$(pol flap)" '.jobs_started' 0 "policy flap"
grep -q "policy flap: $g1dev: gone within the settle time" "$TEST_DIR/daemon.log" || fail "no log line of the flap"

# --- (3) a matching device mounted within the settle time is refused, nothing written. ---
m1=$TEST_DIR/m-1.img
truncate -s 16M "$m1"
mkfs.ext4 -q -F "$m1" || hard_error "mkfs.ext4 $m1 failed"
m1sum=$(sha256sum < "$m1")
m1dev=$(attach "$m1")
mount -o ro "$m1dev" "$TEST_DIR/mnt" || hard_error "cannot mount $m1dev"
register_mount "$TEST_DIR/mnt"
wait_until 30 "policy mnt refuses $m1dev" has_event mnt "refused: .*mounted"
jq_is "$(pol mnt)" '.refused' 1 "policy mnt"
jq_is "$(pol mnt)" '.jobs_started' 0 "policy mnt"
[ "$(jobs_of "$m1dev")" = 0 ] || fail "a job on the mounted $m1dev"
wipectl policies | grep -q "refused: .*mounted" || fail "policies text shows no refusal: $(wipectl policies)"
grep -q "policy mnt: $m1dev: refused: .*mounted" "$TEST_DIR/daemon.log" || fail "no log line of the refusal"
# The dry run says the same.
jq_is "$(pol mnt)" '.devices[0] | "\(.would_wipe) \(.refused)"' "false true" "dry run of the mounted device"
umount "$TEST_DIR/mnt" || hard_error "cannot unmount $TEST_DIR/mnt"
# A read-only device (losetup -r) the policy matches is refused too, nothing written.
m2=$TEST_DIR/m-2.img
head -c 8M /dev/urandom > "$m2" || hard_error "cannot write $m2"
m2sum=$(sha256sum < "$m2")
m2dev=$(make_loop_file "$m2" -r)
wait_until 30 "policy mnt refuses the read-only $m2dev" has_event mnt "refused: .*read-only"
[ "$(jobs_of "$m2dev")" = 0 ] || fail "a job on the read-only $m2dev"

# --- (4) content = empty: a device with a file system is skipped; (5) a device no policy
# matches is untouched. ---
n1=$(img n-1)
n1sum=$(sha256sum < "$n1")
n1dev=$(attach "$n1")
f1=$TEST_DIR/f-1.img
truncate -s 16M "$f1"
mkfs.ext4 -q -F "$f1" || hard_error "mkfs.ext4 $f1 failed"
f1sum=$(sha256sum < "$f1")
f1dev=$(attach "$f1")
wait_until 30 "policy empty skips $f1dev" has_event empty "skipped: not empty \\(ext4"
jq_is "$(pol empty)" '.skipped' 1 "policy empty"
jq_is "$(pol empty)" '.devices[0] | "\(.would_wipe) \(.reason)"' "false not empty (ext4; content = empty)" "dry run of ext4"

# --- (6) a disabled policy starts nothing; resumed, it acts on the next device. ---
p1=$(img p-1)
p1sum=$(sha256sum < "$p1")
p1dev=$(attach "$p1")
wait_until 30 "policy off skips $p1dev (paused)" has_event off "skipped: the policy is paused"
wipectl policies resume off | grep -q "policy off: enabled" || fail "policies resume off"
! wipectl policies resume off 2>/dev/null || fail "policies resume of an enabled policy succeeded"
p2=$(img p-2)
p2dev=$(attach "$p2")
wait_until 30 "a job on $p2dev by policy off" job_by "$p2dev" off
id2=$(wipectl --json list | jq -r --arg d "$p2dev" '.jobs[] | select(.node == $d and .policy == "off") | .job')
[ "$(wait_job "$id2" 60)" = done ] || fail "job $id2: $(job_field "$id2" state)"
cmp -n $((8 << 20)) "$p2dev" /dev/zero || fail "$p2dev: not zero after job $id2"

# Pausing needs the control socket; a pause survives a reload, and a reload reads new files.
wipectl policies pause zero >/dev/null || fail "policies pause zero"
policy late "backing-file = $TEST_DIR/l-*.img" "method = zero"
kill -HUP "$DAEMON_PID"
wait_until 30 "the reload reads policy late" n_policies_is 8
jq_is "$(pol zero)" '.state' paused "policy zero after the reload"
z2=$(img z-2)
z2dev=$(attach "$z2")
wait_until 30 "policy zero skips $z2dev (paused)" has_event zero "skipped: the policy is paused"

# Nothing was written where no job ran.
[ "$(sha256sum < "$m1")" = "$m1sum" ] || fail "the mounted device's file changed"
[ "$(sha256sum < "$m2")" = "$m2sum" ] || fail "the read-only device's file changed"
[ "$(sha256sum < "$n1")" = "$n1sum" ] || fail "the device no policy matches changed"
[ "$(sha256sum < "$f1")" = "$f1sum" ] || fail "the device with a file system changed"
[ "$(sha256sum < "$p1")" = "$p1sum" ] || fail "the device of the paused policy changed"
[ "$(sha256sum < "$e1")" = "$e1sum" ] || fail "the device present at start changed (existing = ignore)"
for d in "$n1dev" "$f1dev" "$p1dev" "$e1dev" "$z2dev"; do
        [ "$(jobs_of "$d")" = 0 ] || fail "a job on $d"
done
[ "$(wipectl --json list | jq '.jobs | length')" = 3 ] || fail "jobs: $(wipectl list)"

# --- (9) bad policy files: FILE:LINE and a did-you-mean. ---
BAD=$TEST_DIR/bad.d
mkdir -p "$BAD"
printf '%s\n' "# a typo" "mach = /dev/disk/by-path/*" "backing-file = $TEST_DIR/x-*.img" > "$BAD/typo.conf"
printf '%s\n' "method = zero" > "$BAD/nothing.conf"
printf '%s\n' "backing-file = $TEST_DIR/y-*.img" "content = some" "transport = sata, usbb" > "$BAD/values.conf"
out=$("$WIPED" --check-config --config /dev/null --policy-dir "$BAD" 2>&1 >/dev/null) && fail "--check-config passed bad policies"
echo "$out" | grep -qF "$BAD/typo.conf:2: unknown key \"mach\"; did you mean match?" || fail "no did-you-mean: $out"
echo "$out" | grep -qF "$BAD/nothing.conf: no match criterion" || fail "no error of a policy without criteria: $out"
echo "$out" | grep -qF "$BAD/values.conf:2: content = some" || fail "no error of a bad content: $out"
echo "$out" | grep -qF "$BAD/values.conf:3: transport = sata, usbb: unknown transport \"usbb\"; did you mean usb?" ||
        fail "no error of a bad transport: $out"
# A FIFO named *.conf is no policy, and opening it must not block (a reload would hang the loop).
FIFO=$TEST_DIR/fifo.d
mkdir -p "$FIFO" && mkfifo "$FIFO/pipe.conf" || hard_error "mkfifo $FIFO/pipe.conf"
out=$(timeout 60 "$WIPED" --check-config --config /dev/null --policy-dir "$FIFO" 2>&1 >/dev/null)
rc=$?
[ $rc = 124 ] && fail "--check-config hung on a FIFO in the policy directory"
[ $rc != 0 ] || fail "--check-config passed a FIFO as a policy"
echo "$out" | grep -qF "$FIFO/pipe.conf: not a regular file" || fail "the FIFO not named: $out"
out=$("$WIPED" --check-config --config /dev/null --policy-dir "$PD" 2>&1 >/dev/null) || fail "--check-config: $out"
echo "$out" | grep -q "8 policies OK" || fail "--check-config of the good policies: $out"
# A reload with a bad file changes nothing.
cp "$BAD/typo.conf" "$PD/typo.conf"
kill -HUP "$DAEMON_PID"
wait_match "$TEST_DIR/daemon.log" "policies not reloaded" 30 || fail "a bad policy file was not reported at reload"
[ "$(wipectl --json policies | jq '.policies | length')" = 8 ] || fail "a bad reload changed the policies"

stop_daemon || fail "the daemon did not stop cleanly"

# A restart keeps the policy of a job (its record) and the pauses and resumes (policies.json);
# the disks there at start are not new; udev's
# monitor opens (where udev does not run it never reports anything: the kernel's events are those
# above). The broken file is gone first, or the start would load no policy.
rm -f "$PD/typo.conf"
start_daemon --policy-dir "$PD" --policy-events udev
jq_is "$(wipectl --json status "$id")" '.jobs[0].policy' zero "job $id after a restart"
wipectl list | grep -q "^job $id: started by policy zero" || fail "list does not name the policy: $(wipectl list)"
json=$(wipectl --json policies) || fail "policies --json after the restart"
jq_is "$json" '.events' udev "--policy-events udev"
jq_is "$json" '.policies | length' 8 "policies after the restart"
jq_is "$json" '.policies[] | select(.name == "zero") | .state' paused "a pause outlives a restart"
jq_is "$json" '.policies[] | select(.name == "off") | .state' enabled "a resume outlives a restart (over enabled = no)"
grep -q "policy zero: loaded from .*(paused, as wipectl policies pause left it)" "$TEST_DIR/daemon.log" ||
        fail "the start does not say policy zero is paused"
jq_is "$json" '[.policies[] | select(.name == "zero") | .devices[] | select(.node == "'"$z2dev"'") | .existing] | .[0]' true \
        "a disk present at the start"
# existing = wipe after a restart: the disk it wiped before is present at the start again, and
# its job (done) is in the table: not wiped twice.
wait_until 30 "policy exw skips $w1dev after the restart (it has job $idw)" has_event exw "skipped: already has job $idw"
[ "$(jobs_of "$w1dev")" = 1 ] || fail "a second job on $w1dev after the restart: $(wipectl list)"
# Through udev's monitor: an event in udev's format (where udev runs, udevd sends it after its
# rules; here the test does, for its own loop device only) makes a job of the policy.
if [ -e /run/udev/control ]; then
        note "udev runs here: its own event for the device is awaited"
fi
l1=$(img l-1)
l1dev=$(attach "$l1")
[ -e /run/udev/control ] || "$UDEV_SEND" change "${l1dev#/dev/}" "$(cat "/sys/block/${l1dev#/dev/}/dev")" ||
        hard_error "udev-send failed"
wait_until 30 "a job on $l1dev by policy late (udev's event)" job_by "$l1dev" late
idl=$(wipectl --json list | jq -r --arg d "$l1dev" '.jobs[] | select(.node == $d and .policy == "late") | .job')
[ "$(wait_job "$idl" 60)" = done ] || fail "job $idl: $(job_field "$idl" state)"
cmp -n $((8 << 20)) "$l1dev" /dev/zero || fail "$l1dev: not zero after job $idl"
stop_daemon || fail "the daemon did not stop cleanly after the restart"

# content = empty and a disk whose first sectors cannot be read: libblkid finds nothing there, but
# that is no empty disk (here an ext4 behind failing sectors 0..7, a badfs loop device present at
# the start of a policy with existing = wipe): skipped, nothing written.
BADFS=${BADFS:-$top_builddir/tests/helpers/badfs}
if [ -x "$BADFS" ] && [ -c /dev/fuse ]; then
        PD2=$TEST_DIR/policies2.d
        mkdir -p "$PD2"
        make_badfs_loop 16M 0:8
        mkfs.ext4 -q -F "$BADFS_BACKING" || hard_error "mkfs.ext4 $BADFS_BACKING failed"
        badsum=$(sha256sum < "$BADFS_BACKING")
        printf '%s\n' "backing-file = $TEST_DIR/badfs.*/mnt/disk" "method = zero" "settle = 0.5" "existing = wipe" \
                > "$PD2/unread.conf"
        start_daemon --policy-dir "$PD2" --policy-events kernel
        wait_until 30 "policy unread skips $BADFS_DEV (unreadable start)" has_event unread "skipped: content unknown"
        # Counted by policy, not by node: the jobs of this state directory's earlier devices are
        # listed too, and one of them may have had the node badfs's device got (it did, once).
        [ "$(wipectl --json list | jq '[.jobs[] | select(.policy == "unread")] | length')" = 0 ] ||
                fail "a job on $BADFS_DEV, whose content could not be read: $(wipectl list)"
        [ "$(jobs_of "$BADFS_DEV")" = 0 ] || fail "a job on $BADFS_DEV, whose content could not be read"
        [ "$(sha256sum < "$BADFS_BACKING")" = "$badsum" ] || fail "the ext4 behind unreadable sectors was written"
        stop_daemon || fail "the daemon did not stop cleanly (badfs)"
else
        note "badfs or /dev/fuse missing: a disk with unreadable first sectors not checked"
fi
pass
