#!/bin/bash
# wipectl devices: every block device with whether the daemon would wipe it and why not (a
# mounted loop device: "is mounted on"; the running system's disk: listed, refused, never
# touched), partitions under their disk, --json fields, --wipeable. A bare device name gets a hint
# to try /dev/NAME. After a wipe the kernel forgets the old partitions (BLKRRPART) and the report
# says so (partitions_reread).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
command -v sfdisk >/dev/null || skip "sfdisk missing"

free=$(make_loop 32M)
mounted=$(make_loop 32M)
mkfs.ext4 -q "$mounted" || hard_error "mkfs.ext4 $mounted failed"
mkdir -p "$TEST_DIR/mnt"
mount "$mounted" "$TEST_DIR/mnt" || hard_error "cannot mount $mounted"
register_mount "$TEST_DIR/mnt"

start_daemon

# dev_json NODE: the row of NODE in "wipectl --json devices" (a disk or a partition), or nothing.
dev_json() {
        wipectl --json devices | jq -c --arg n "$1" '[.devices[] | ., .partitions[]] | map(select(.node == $n)) | .[0] // empty'
}

# --- JSON: one object, every row with its fields. ---
json=$(wipectl --json devices) || fail "devices --json failed"
[ "$(echo "$json" | jq -s 'length')" = 1 ] || fail "devices --json: not one JSON document"
[ "$(wipectl devices -J | jq -r '.format_version | type')" = number ] || fail "devices -J: no format_version"
# shellcheck disable=SC2016
bad=$(echo "$json" | jq -r '
def want(k; ok): if has(k) and (.[k] | ok) then empty else "\(.name // "?"): \(k) = \(.[k] | tojson)" end;
def row: want("name"; type == "string"), want("node"; type == "string" and startswith("/dev/")),
         want("type"; IN("disk", "loop", "part")), want("size_bytes"; type == "number" or . == null),
         want("model"; type == "string" or . == null), want("serial"; type == "string" or . == null),
         want("transport"; type == "string" or . == null), want("rotational"; type == "boolean" or . == null),
         want("content"; type == "string" or . == null), want("signatures"; type == "array"),
         want("holder"; type == "string" or . == null), want("mountpoint"; type == "string" or . == null),
         want("wipeable"; type == "boolean"),
         want("refusal"; if . == null then true else (.code | type == "string") and (.message | type == "string") end);
.devices | if type != "array" or length == 0 then "devices: \(tojson)" else
  (.[] | row, want("partitions"; type == "array"), (.partitions[]? | row, (if .type != "part" then "\(.name): a partition of type \(.type)" else empty end))) end')
[ -z "$bad" ] || fail "devices --json: $bad"
# Wipeable exactly when there is no refusal.
[ "$(echo "$json" | jq '[.devices[] | ., .partitions[] | select(.wipeable == (.refusal != null))] | length')" = 0 ] ||
        fail "devices --json: wipeable and refusal disagree"

# --- The free loop device may be wiped, the mounted one not, with the submit's reason. ---
row=$(dev_json "$free")
[ -n "$row" ] || fail "$free not listed: $json"
jq_is "$row" .wipeable true "$free"
jq_is "$row" .type loop "$free"
jq_is "$row" .transport loop "$free"
jq_is "$row" .size_bytes 33554432 "$free"
jq_is "$row" .refusal null "$free"
row=$(dev_json "$mounted")
[ -n "$row" ] || fail "$mounted not listed"
jq_is "$row" .wipeable false "$mounted"
jq_is "$row" .content ext4 "$mounted"
jq_is "$row" .mountpoint "$TEST_DIR/mnt" "$mounted"
jq_is "$row" .refusal.code EBUSY "$mounted"
jq_is "$row" .refusal.message "$mounted: refusing: is mounted on $TEST_DIR/mnt" "$mounted"
# The same words as the submit's refusal.
out=$(wipectl wipe --yes --verify none "$mounted" 2>&1)
rc=$?
[ $rc = 5 ] || fail "wipe of the mounted $mounted exited $rc: $out"
echo "$out" | grep -qF "$mounted: refusing: is mounted on $TEST_DIR/mnt" || fail "wipe refusal differs: $out"

# --- Text: one line per device, the reason after "no:". ---
text=$(wipectl devices) || fail "devices failed"
echo "$text" | head -1 | grep -q "^NAME .*SIZE .*WIPEABLE" || fail "devices: no header: $text"
echo "$text" | grep -E "^${free#/dev/} " | grep -q " yes$" || fail "devices: $free not 'yes': $text"
echo "$text" | grep -E "^${mounted#/dev/} " | grep -qF "no: is mounted on $TEST_DIR/mnt" || fail "devices: $mounted: $text"

# --- --wipeable: the nodes that may be wiped, one a line. ---
names=$(wipectl devices --wipeable) || fail "devices --wipeable failed"
echo "$names" | grep -qx "$free" || fail "devices --wipeable lacks $free: $names"
echo "$names" | grep -qx "$mounted" && fail "devices --wipeable lists the mounted $mounted"
wipectl devices --json --wipeable > /dev/null 2>&1 && fail "devices --json --wipeable accepted"

# --- Anyone may list, through the read-only socket beside the control socket (wipectl goes there
# by itself when the control socket refuses the connection). ---
if command -v setpriv >/dev/null && [ -S "$TEST_DIR/wiped-status.sock" ]; then
        chmod 0711 "$TEST_DIR" || hard_error "chmod $TEST_DIR"
        nogroup=$(id -gn nobody 2>/dev/null || echo nogroup)
        out=$(setpriv --reuid=nobody --regid="$nogroup" --clear-groups "$WIPECTL_BIN" --socket "$SOCK" devices --wipeable 2>&1) ||
                fail "devices as nobody exited $?: $out"
        echo "$out" | grep -qx "$free" || fail "devices as nobody lacks $free: $out"
        echo "$out" | grep -qx "$mounted" && fail "devices as nobody lists the mounted $mounted"
else
        note "no setpriv or no read-only socket: the unprivileged listing is left out"
fi

# --- The running system's disk is listed and refused (only listed: nothing is written to it). ---
root_majmin=$(findmnt -no MAJ:MIN / 2>/dev/null | head -1 | tr -d "[:space:]")
if [ -n "$root_majmin" ] && [ "${root_majmin%%:*}" != 0 ] && [ -e "/sys/dev/block/$root_majmin" ]; then
        root_name=$(basename "$(readlink -f "/sys/dev/block/$root_majmin")")
        row=$(wipectl --json devices | jq -c --arg n "$root_name" '[.devices[] | ., .partitions[]] | map(select(.name == $n)) | .[0] // empty')
        [ -n "$row" ] || fail "the root file system's device $root_name is not listed"
        jq_is "$row" .wipeable false "$root_name"
        echo "$row" | jq -r .refusal.message | grep -q "running system's root" || fail "$root_name: $(echo "$row" | jq -r .refusal.message)"
else
        note "the root file system is not on a block device: its check is left out"
fi

# --- A bare name: the hint. ---
name=${free#/dev/}
out=$(cd "$TEST_DIR" && wipectl probe "$name" 2>&1)
rc=$?
[ $rc = 2 ] || fail "probe $name exited $rc: $out"
echo "$out" | grep -qF "$name: no such file; did you mean /dev/$name?" || fail "no hint: $out"
out=$(cd "$TEST_DIR" && wipectl wipe --yes "$name" 2>&1)
echo "$out" | grep -qF "did you mean /dev/$name?" || fail "wipe: no hint: $out"
# A name that is not under /dev either gets the daemon's "does not exist".
out=$(cd "$TEST_DIR" && wipectl probe nosuchdevice-$$ 2>&1)
echo "$out" | grep -q "did you mean" && fail "hint for a name /dev does not have: $out"

# --- Partitions: listed under their disk, forgotten by the kernel after a wipe. ---
file=$(mktemp "$TEST_DIR/parted.XXXXXX") || hard_error "mktemp failed"
truncate -s 64M "$file" || hard_error "truncate failed"
printf 'label: gpt\n,16M\n,16M\n' | sfdisk -q "$file" || hard_error "sfdisk failed"
parted=$(make_loop_file "$file" --direct-io=on -P)
pname=${parted#/dev/}
udevadm settle 2>/dev/null
# A kernel without partition table support creates none at -P: add them as partx does (BLKPG).
[ -e "/sys/block/$pname/${pname}p1" ] || partx -a "$parted" 2>/dev/null
[ -e "/sys/block/$pname/${pname}p1" ] || skip "no partitions appear on $parted"
row=$(dev_json "$parted")
jq_is "$row" .content gpt "$parted"
jq_is "$row" '.partitions | length' 2 "$parted"
jq_is "$row" '.partitions[0].node' "${parted}p1" "$parted"
jq_is "$row" '.partitions[0].type' part "$parted"
jq_is "$row" '.partitions[0].size_bytes' 16777216 "$parted"
wipectl devices | grep -qE "^(└─|├─)${pname}p1 " || fail "devices: ${pname}p1 not drawn under its disk: $(wipectl devices)"
id=$(wipectl --json wipe --yes --method zero --verify none "$parted" | jq -r '.jobs[0].id') || fail "wipe $parted failed"
[ "$(job_field "$id" state)" = done ] || fail "job $id: $(job_field "$id" state)"
[ -e "/sys/block/$pname/${pname}p1" ] && fail "${pname}p1 is still known to the kernel after the wipe"
report=$(wipectl --json report "$id") || fail "report $id failed"
jq_is "$report" .partitions_reread true "report $id"
jq_is "$report" .partitions_reread_error null "report $id"
wipectl report "$id" | grep -q "^  Partitions: *the kernel read the partition table again" ||
        fail "report $id: no Partitions line: $(wipectl report "$id")"
# The job's record keeps it: a restarted daemon's report says the same.
stop_daemon || fail "daemon exited $? at SIGTERM"
start_daemon
jq_is "$(wipectl --json status "$id")" '.jobs[0].state' done "job $id after a restart"
jq_is "$(wipectl --json report "$id")" .partitions_reread true "report $id after a restart"
row=$(dev_json "$parted")
jq_is "$row" '.partitions | length' 0 "$parted"
jq_is "$row" .content null "$parted"

# A loop device without partition scanning: nothing to read again, null in the report.
id=$(wipectl --json wipe --yes --method zero --verify none "$free" | jq -r '.jobs[0].id') || fail "wipe $free failed"
jq_is "$(wipectl --json report "$id")" .partitions_reread null "report $id"

umount "$TEST_DIR/mnt" || hard_error "cannot unmount $TEST_DIR/mnt"
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
