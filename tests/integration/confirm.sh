#!/bin/bash
# What the user named and confirmed is what is wiped.
# Relative device paths are resolved where the user typed them: with the daemon's working
# directory elsewhere, wipectl probe, wipe and resume --device of a relative path (a link named
# alike in both directories, to another device in each) act on the device of wipectl's directory,
# and the daemon refuses a relative path in a probe, submit or resume request (EINVAL).
# The confirmation cannot be bypassed: on a terminal, wipe submits the identity it showed and the
# daemon refuses any other device (ESTALE, exit 5, nothing written): a link repointed while the
# question is on the screen; a raw submit whose "expect" is another device's identity, or differs
# in size, loop backing or serial (of two devices, neither is wiped when one differs); a malformed
# "expect" is EINVAL. Confirmed as shown, the wipe goes on.
# Last, with a link flipping between two devices as fast as it can, each confirmed wipe either is
# refused or wipes the device that was shown, never the other one.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

SIZE=$((8 << 20))

# expect_error LINE CODE [MESSAGE]: the raw request LINE fails with CODE (and a message holding
# MESSAGE); the reply is left in $reply.
expect_error() {
        reply=$(request "$1")
        [ "$(echo "$reply" | jq -r 'if .ok then "ok" else .error.code end')" = "$2" ] ||
                fail "expected $2 for $1, got: $reply"
        [ -z "${3:-}" ] || echo "$reply" | jq -r .error.message | grep -qF -- "$3" ||
                fail "expected a message with '$3' for $1, got: $reply"
}

# zeros DEV WHAT: DEV still holds only zeros (nothing was written to it).
zeros() { cmp -s -n "$SIZE" "$1" /dev/zero || fail "$1 was written: $2"; }

# last_id: the highest job id the daemon knows (0: none).
last_id() { wipectl --json list --all | jq '[.jobs[].id] | max // 0'; }

# new_jobs SINCE: the ids of the jobs above SINCE, one per line.
new_jobs() { wipectl --json list --all | jq --argjson s "$1" '.jobs[] | select(.id > $s) | .id'; }

# dev_re DEV: an extended regex for DEV as a word (/dev/loop1 but not /dev/loop10).
dev_re() { printf '%s([^0-9]|$)' "$1"; }

# name_re DEV: the same for DEV's name, loop1 of /dev/loop1, whatever stands before it (the
# daemon's messages quote JSON values, where "/" may be written "\/").
name_re() { printf '(^|[^0-9A-Za-z])%s([^0-9]|$)' "${1##*/}"; }

# point LINK TARGET: make LINK a symbolic link to TARGET at once (never missing in between).
point() { ln -sfn "$2" "$1.new" && mv -fT "$1.new" "$1"; }

# confirm_start NAME ARG...: wipectl wipe ARG... (no --yes) in a tmux pane of the test's server;
# waits for the question; its screen is then in $TEST_DIR/screen.NAME.
confirm_start() {
        local name=$1 args
        shift
        printf -v args ' %q' "$@"
        tmux_start "$name" 220 40 "'$WIPECTL_BIN' --socket '$SOCK' wipe$args; echo EXIT=\$?; sleep 600"
        tmux_wait "$name" 'Type "yes" to wipe:|EXIT=' 30 || fail "$name: no question within 30 s:
$(cat "$TEST_DIR/screen.$name")"
        grep -q 'Type "yes" to wipe:' "$TEST_DIR/screen.$name" || fail "$name: wipectl exited without asking:
$(cat "$TEST_DIR/screen.$name")"
}

# shown_node LINK NAME: the node the question in the pane NAME showed for LINK.
shown_node() {
        grep -F "($1):" "$TEST_DIR/screen.$2" | grep -Eo '^ +/dev/loop[0-9]+' | tr -d ' ' | head -n 1
}

# confirm_answer NAME: type "yes", wait for wipectl to exit; prints its exit status.
confirm_answer() {
        tmux_cmd send-keys -t "$1" yes Enter || hard_error "tmux send-keys failed"
        tmux_wait "$1" 'EXIT=[0-9]+' 60 || fail "$1: wipectl did not exit within 60 s:
$(cat "$TEST_DIR/screen.$1")"
        grep -Eo 'EXIT=[0-9]+' "$TEST_DIR/screen.$1" | head -n 1 | cut -d= -f2
}

A=$(make_loop $SIZE)
B=$(make_loop $SIZE)
C=$(make_loop $SIZE)
D=$(make_loop $SIZE)
mkdir "$TEST_DIR/dA" "$TEST_DIR/dB" || hard_error "mkdir failed"
ln -s "$A" "$TEST_DIR/dA/disk" && ln -s "$B" "$TEST_DIR/dB/disk" || hard_error "ln failed"
# The daemon's working directory is dA: a relative "disk" resolved there would be A.
cd "$TEST_DIR/dA" || hard_error "cd dA"
start_daemon
cd / || hard_error "cd /"

# --- 1. Relative paths are resolved in wipectl's working directory ------------------------------
cd "$TEST_DIR/dB" || hard_error "cd dB"
out=$(wipectl --json probe disk) || fail "probe disk in dB exited $?: $out"
jq_is "$out" '.devices[0].node' "$B" "probe disk in dB"
jq_is "$out" '.devices[0].path' "$TEST_DIR/dB/disk" "probe disk in dB"
out=$(wipectl --json probe ./disk ../dA/disk) || fail "probe ./disk ../dA/disk in dB exited $?: $out"
jq_is "$out" '[.devices[].node] | join(" ")' "$B $A" "probe ./disk ../dA/disk in dB"
jq_is "$out" '.devices[1].path' "$TEST_DIR/dB/../dA/disk" "probe ../dA/disk in dB"

# The daemon takes no relative path, whatever its own working directory would make of it.
expect_error '{"id":1,"op":"probe","devices":["disk"]}' EINVAL '"disk" is not an absolute path'
expect_error '{"id":1,"op":"submit","devices":["disk"],"verify":"none"}' EINVAL '"disk" is not an absolute path'
expect_error '{"id":1,"op":"submit","devices":["'"$B"'","./disk"],"verify":"none"}' EINVAL '"./disk" is not an absolute path'
[ "$(last_id)" = 0 ] || fail "a refused submit made a job: $(wipectl list --all)"
zeros "$A" "a refused relative submit"
zeros "$B" "a refused relative submit"

# wipe disk in dB wipes B, not the daemon's dA/disk.
out=$(wipectl --json wipe --yes --no-wait --verify none disk) || fail "wipe disk in dB exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
[ "$(wait_job "$id" 30)" = done ] || fail "job $id ended $(job_field "$id" state)"
jq_is "$(wipectl --json status "$id")" '.jobs[0] | "\(.node) \(.device)"' "$B $TEST_DIR/dB/disk" "wipe disk in dB"
check_last_pass "$B" "$id"
zeros "$A" "wipe disk in dB"

# resume --device disk: B's job, paused, is resumed on B from dB; from dA "disk" is A, not its device.
out=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 1M disk) || fail "wipe --max-rate disk exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
wait_bytes "$id" 1 20 || fail "job $id does not start"
wipectl pause "$id" > /dev/null || fail "pause $id exited $?"
state=$(wait_state "$id" paused 10) || fail "job $id is $state after pause"
expect_error '{"id":1,"op":"resume","job":'"$id"',"device":"disk"}' EINVAL '"disk" is not an absolute path'
expect_error '{"id":1,"op":"resume","job":'"$id"',"device":"../dB/disk"}' EINVAL 'is not an absolute path'
[ "$(job_field "$id" state)" = paused ] || fail "job $id left paused on a refused resume: $(job_field "$id" state)"
cd "$TEST_DIR/dA" || hard_error "cd dA"
expect_exit 5 wipectl resume --device disk "$id"
grep -Eq "$(dev_re "$A")" "$TEST_DIR/err" || fail "resume --device disk in dA does not name $A: $(cat "$TEST_DIR/err")"
[ "$(job_field "$id" state)" = paused ] || fail "job $id left paused on a resume on A: $(job_field "$id" state)"
zeros "$A" "resume --device disk in dA"
cd "$TEST_DIR/dB" || hard_error "cd dB"
out=$(wipectl --json resume --device disk "$id") || fail "resume --device disk in dB exited $?: $out"
state=$(wait_state "$id" 'running|flushing' 10) || fail "job $id is $state after resume --device disk in dB"
jq_is "$(wipectl --json status "$id")" '.jobs[0].node' "$B" "resume --device disk in dB"
wipectl cancel "$id" > /dev/null || fail "cancel $id exited $?"
[ "$(wait_job "$id" 30)" = cancelled ] || fail "job $id ended $(job_field "$id" state)"
zeros "$A" "the job on B"
cd / || hard_error "cd /"

# --- 2. A link repointed while the question is on the screen: refused, nothing written -----------
tmux_start keep 80 5 "sleep 600"        # keeps the test's tmux server up between sessions
L=$TEST_DIR/L
point "$L" "$C"
confirm_start flip --verify none "$L"
[ "$(shown_node "$L" flip)" = "$C" ] || fail "the question does not show $C for $L:
$(cat "$TEST_DIR/screen.flip")"
before=$(last_id)
point "$L" "$D"
rc=$(confirm_answer flip)
[ "$rc" = 5 ] || fail "a wipe confirmed for $C with $L now at $D exited $rc, expected 5:
$(cat "$TEST_DIR/screen.flip")"
grep -q 'not the device that was confirmed' "$TEST_DIR/screen.flip" || fail "no 'not the device that was confirmed':
$(cat "$TEST_DIR/screen.flip")"
grep 'not the device that was confirmed' "$TEST_DIR/screen.flip" | grep -E "$(name_re "$D")" | grep -Eq "$(name_re "$C")" ||
        fail "the refusal does not name both $D and $C:
$(cat "$TEST_DIR/screen.flip")"
[ -z "$(new_jobs "$before")" ] || fail "the refused wipe made a job: $(new_jobs "$before")"
zeros "$C" "the wipe confirmed for it was refused"
zeros "$D" "a wipe confirmed for $C"
tmux_cmd kill-session -t flip

# Not repointed: the device shown is wiped.
point "$L" "$C"
confirm_start same --verify none "$L"
[ "$(shown_node "$L" same)" = "$C" ] || fail "the question does not show $C for $L:
$(cat "$TEST_DIR/screen.same")"
rc=$(confirm_answer same)
[ "$rc" = 0 ] || fail "a confirmed wipe of $C exited $rc:
$(cat "$TEST_DIR/screen.same")"
id=$(new_jobs "$before")
[ "$(echo "$id" | wc -w)" = 1 ] || fail "a confirmed wipe made the jobs '$id'"
jq_is "$(wipectl --json status "$id")" '.jobs[0] | "\(.state) \(.node) \(.device)"' "done $C $L" "the confirmed wipe"
check_last_pass "$C" "$id"
zeros "$D" "a confirmed wipe of $C"
tmux_cmd kill-session -t same

# --- 3. "expect" in the protocol -----------------------------------------------------------------
idC=$(wipectl --json probe "$C" | jq -c '.devices[0].identity') || fail "probe $C"
idD=$(wipectl --json probe "$D" | jq -c '.devices[0].identity') || fail "probe $D"
before=$(last_id)
sub() { echo '{"id":1,"op":"submit","devices":["'"$D"'"],"verify":"none","expect":'"$1"'}'; }
# Another device's identity, or D's with another size or backing inode: not what was confirmed.
expect_error "$(sub "[$idC]")" ESTALE "$D: refusing: not the device that was confirmed: its node is"
expect_error "$(sub "[$(echo "$idD" | jq -c '.size += 512')]")" ESTALE "not the device that was confirmed: its size is $SIZE, not $((SIZE + 512))"
expect_error "$(sub "[$(echo "$idD" | jq -c '.loop.backing_inode += 1')]")" ESTALE "not the device that was confirmed: its loop is"
expect_error "$(sub "[$(echo "$idD" | jq -c '.serial = "WRONG"')]")" ESTALE "not the device that was confirmed: its serial is null"
# All or nothing: the first device is as confirmed, the second is not: neither is wiped.
sumC=$(dev_sha256 "$C")
expect_error '{"id":1,"op":"submit","devices":["'"$C"'","'"$D"'"],"verify":"none","expect":['"$idC,$idC"']}' ESTALE \
        "$D: refusing: not the device that was confirmed"
[ "$(dev_sha256 "$C")" = "$sumC" ] || fail "$C was written by a submit refused for $D"
# Malformed: not one identity object per device, a required member missing, an unknown one.
expect_error "$(sub '[]')" EINVAL '"expect" must be an array of one identity per device'
expect_error "$(sub "[$idD,$idD]")" EINVAL '"expect" must be an array of one identity per device'
expect_error "$(sub "$idD")" EINVAL '"expect" must be an array of one identity per device'
expect_error "$(sub '["'"$D"'"]')" EINVAL '"expect" entry 1 must be an identity object'
for member in node major minor size; do
        expect_error "$(sub "[$(echo "$idD" | jq -c "del(.$member)")]")" EINVAL "\"expect\" entry 1 needs \"$member\""
done
expect_error "$(sub "[$(echo "$idD" | jq -c '.node = 7')]")" EINVAL '"expect" entry 1 has "node" of the wrong type'
expect_error "$(sub "[$(echo "$idD" | jq -c '.size = "8M"')]")" EINVAL '"expect" entry 1 has "size" of the wrong type'
expect_error "$(sub "[$(echo "$idD" | jq -c '.size = -1')]")" EINVAL '"expect" entry 1 has "size" of the wrong type'
expect_error "$(sub "[$(echo "$idD" | jq -c '.serial = 5')]")" EINVAL '"expect" entry 1 has "serial" of the wrong type'
expect_error "$(sub "[$(echo "$idD" | jq -c '.colour = "blue"')]")" EINVAL '"expect" entry 1 has an unknown member "colour"'
[ -z "$(new_jobs "$before")" ] || fail "a refused submit made a job: $(new_jobs "$before")"
zeros "$D" "every submit with a wrong or malformed \"expect\" was refused"
# D's own identity: wiped.
reply=$(request "$(sub "[$idD]")")
jq_is "$reply" '.ok' true "a submit of $D expecting its own identity"
id=$(echo "$reply" | jq -r '.jobs[0].id')
[ "$(wait_job "$id" 30)" = done ] || fail "job $id ended $(job_field "$id" state)"
check_last_pass "$D" "$id"

# --- 4. A link flipping between C and D as fast as it can: the device shown or nothing ------------
point "$L" "$C"
( while :; do point "$L" "$C"; point "$L" "$D"; done ) > /dev/null 2>&1 &
flipper=$!
register_pid "$flipper"
refused=0 wiped=0
for try in 1 2 3 4 5 6; do
        before=$(last_id)
        sumC=$(dev_sha256 "$C")
        sumD=$(dev_sha256 "$D")
        confirm_start "try$try" --no-wait --verify none --max-rate 1M "$L"
        shown=$(shown_node "$L" "try$try")
        [ "$shown" = "$C" ] || [ "$shown" = "$D" ] || fail "try $try: the question shows '$shown' for $L:
$(cat "$TEST_DIR/screen.try$try")"
        rc=$(confirm_answer "try$try")
        ids=$(new_jobs "$before")
        case $rc in
        5)
                grep -q 'not the device that was confirmed' "$TEST_DIR/screen.try$try" ||
                        fail "try $try: exit 5 without 'not the device that was confirmed':
$(cat "$TEST_DIR/screen.try$try")"
                [ -z "$ids" ] || fail "try $try: the refused wipe made the jobs $ids"
                [ "$(dev_sha256 "$C")" = "$sumC" ] && [ "$(dev_sha256 "$D")" = "$sumD" ] ||
                        fail "try $try: a refused wipe wrote to a device"
                refused=$((refused + 1))
                ;;
        0)
                [ "$(echo "$ids" | wc -w)" = 1 ] || fail "try $try: a confirmed wipe made the jobs '$ids'"
                node=$(job_field "$ids" node)
                wipectl cancel "$ids" > /dev/null || fail "try $try: cancel $ids exited $?"
                state=$(wait_job "$ids" 30)
                [ "$state" = cancelled ] || fail "try $try: job $ids ended $state"
                [ "$node" = "$shown" ] || fail "try $try: $shown was shown and confirmed, job $ids wiped $node"
                if [ "$shown" = "$C" ]; then
                        [ "$(dev_sha256 "$D")" = "$sumD" ] || fail "try $try: $D was written, $C was confirmed"
                else
                        [ "$(dev_sha256 "$C")" = "$sumC" ] || fail "try $try: $C was written, $D was confirmed"
                fi
                wiped=$((wiped + 1))
                ;;
        *)
                fail "try $try: wipectl exited $rc:
$(cat "$TEST_DIR/screen.try$try")"
                ;;
        esac
        note "try $try: $shown shown, $([ "$rc" = 5 ] && echo refused || echo "job $ids on $node")"
        tmux_cmd kill-session -t "try$try"
done
stop_pid "$flipper"
note "link flipping: $refused refused, $wiped wiped the device shown"

# A script's confirmation: wipe --yes --expect FILE, FILE a probe --json made when the device was
# chosen (contrib/ansible does so). A device that changed since is refused, nothing written.
E=$(make_loop $SIZE)
wipectl --json probe "$E" > "$TEST_DIR/e.json" || fail "probe --json $E exited $?"
wipectl wipe --expect "$TEST_DIR/e.json" "$E" > /dev/null 2>&1
[ $? = 2 ] || fail "--expect without --yes is not a usage error"
wipectl wipe --yes --expect "$TEST_DIR/e.json" "$E" "$A" > /dev/null 2>&1
[ $? = 2 ] || fail "--expect with one identity for two devices is not a usage error"
efile=$(losetup -nO BACK-FILE "$E" | sed 's/ *$//')
truncate -s $((2 * SIZE)) "$efile" && losetup -c "$E" || hard_error "cannot grow $E"
sumE=$(dev_sha256 "$E")
out=$(wipectl wipe --yes --no-wait --method zero --expect "$TEST_DIR/e.json" "$E" 2>&1)
rc=$?
[ $rc = 5 ] || fail "a device grown since its probe: wipe --expect exited $rc: $out"
echo "$out" | grep -q "size" || fail "the refusal does not name what changed: $out"
[ "$(dev_sha256 "$E")" = "$sumE" ] || fail "$E was written although it changed since the probe"
wipectl --json probe "$E" > "$TEST_DIR/e.json" || fail "probe --json $E exited $?"
id=$(wipectl --json wipe --yes --no-wait --method zero --expect "$TEST_DIR/e.json" "$E" | jq -r ".jobs[0].id")
[ -n "$id" ] && [ "$id" != null ] || fail "wipe --expect of $E as probed made no job"
[ "$(wait_job "$id" 60)" = done ] || fail "job $id: $(job_field "$id" state)"
cmp -n $((2 * SIZE)) "$E" /dev/zero || fail "$E: not zero after job $id"

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
