#!/bin/bash
# A stopped job goes on only over what it left: before a resume (asked for, or automatic at start)
# the daemon reads back the sectors where libblkid finds signatures, the device's first and last
# sector and a random sample of what the checkpoint says was written, and fails the job (ESTALE,
# signed report) when the device changed meanwhile: a file system made on it while the daemon was
# down (SIGKILL, mkfs, mount, restart, unmount, resume), a sector zeroed while paused, a device
# changed before an automatic resume. A job killed in its second pass (sectors after the
# checkpoint hold either pass) resumes and ends right. After the last pass a signature a fresh
# probe finds must be in the bytes the pass wrote: one written by someone else during the wipe
# fails the job; a pattern pass whose bytes happen to look like swap ends done, its signatures
# marked as the pass's own.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v mkfs.ext4 >/dev/null || hard_error "mkfs.ext4 missing"
command -v blkid >/dev/null || hard_error "blkid missing"

OPTS=(--chunk-size 8M --checkpoint-interval 0.5 --checkpoint-bytes 8M --threads 2)
MANUAL=$TEST_DIR/manual.conf
echo "resume = manual" > "$MANUAL"
# A 32-byte pattern whose repetition libblkid reads as a swap header (version 1 at offset 1024,
# "SWAPSPACE2" at 4086): a legitimate pass that leaves a "signature".
SWAPLIKE=0x01000000ff000000000000000000000000000000000053574150535041434532

# submit ARG...: wipe --no-wait; prints the job id.
submit() {
        local out
        out=$(wipectl --json wipe --yes --no-wait "$@") || fail "wipe --no-wait $* exited $?: $out"
        echo "$out" | jq -r '.jobs[0].id'
}

# wait_ckpt ID BYTES: until the job's saved checkpoint (its record on disk, what a restart finds)
# covers at least BYTES of its work.
wait_ckpt() {
        local got
        for _ in $(seq 600); do
                got=$(jq -r .checkpoint.bytes_done "$STATE/jobs/$1.json" 2>/dev/null)
                [[ $got =~ ^[0-9]+$ ]] && [ "$got" -ge "$2" ] && return 0
                sleep 0.05
        done
        fail "job $1: no checkpoint of $2 bytes within 30 s (last: $got)"
}

# done_chunk ID: the first chunk (8 MiB) the job's saved checkpoint counts as written (chunks
# complete out of order), from its record; waits for the record to say the job stopped.
done_chunk() {
        local rec=$STATE/jobs/$1.json
        for _ in $(seq 100); do
                case $(jq -r .state "$rec" 2>/dev/null) in
                paused|running|flushing|interrupted) break ;;
                esac
                sleep 0.05
        done
        jq -e '.checkpoint.done[0][0]' "$rec" 2>/dev/null || fail "job $1: no chunk done in its record: $(cat "$rec")"
}

# check_failed ID WHAT: the job failed with ESTALE and a message holding WHAT, and its signed report
# says so and passes its check.
check_failed() {
        local job report
        job=$(wipectl --json status "$1" | jq -c '.jobs[0]')
        jq_is "$job" '"\(.state) \(.error.code)"' "failed ESTALE" "job $1"
        echo "$job" | jq -r .error.message | grep -q -- "$2" || fail "job $1: error is not about '$2': $job"
        wipectl --json report "$1" > "$TEST_DIR/report.json" || fail "report $1"
        jq_is "$(cat "$TEST_DIR/report.json")" '"\(.state) \(.signature != null) \(.history[-1].event)"' \
                "failed true ended" "report of job $1"
        wipectl report --check "$TEST_DIR/report.json" --key "$STATE/host-key.pub" > /dev/null ||
                fail "report of job $1 fails its check"
}

# --- a file system made meanwhile: SIGKILL, mkfs and mount, restart, unmount, resume -------------
dev1=$(make_loop 64M)
start_daemon "${OPTS[@]}" --config "$MANUAL"
id1=$(submit --verify none --max-rate 16M "$dev1")
wait_ckpt "$id1" $((16 << 20))
kill_daemon
# mkfs opens the device exclusively: it is "in use" until the killed daemon's last I/O drained, a
# moment after its exit. Tried again until then.
end=$((SECONDS + 30))
until mkfs.ext4 -q -F "$dev1" 2> "$TEST_DIR/mkfs.err"; do
        if ! grep -q "in use" "$TEST_DIR/mkfs.err" || [ $SECONDS -ge $end ]; then
                hard_error "mkfs.ext4 $dev1: $(cat "$TEST_DIR/mkfs.err")"
        fi
        sleep 0.1
done
mkdir -p "$TEST_DIR/mnt"
mount "$dev1" "$TEST_DIR/mnt" || skip "cannot mount ext4 here"
register_mount "$TEST_DIR/mnt"
start_daemon "${OPTS[@]}" --config "$MANUAL"
[ "$(job_field "$id1" state)" = interrupted ] || fail "job $id1 after the restart: $(job_field "$id1" state)"
umount "$TEST_DIR/mnt" || fail "umount failed"
expect_exit 5 wipectl resume "$id1"
# The superblock names the change when the checkpoint holds the first chunk (chunks complete out of
# order); else mkfs's other writes (or its discard) in the chunks it holds do.
grep -Eq "$dev1: the device changed while the job was stopped: (a ext4 signature is at offset 1080, where pass 1 had been written|the sector at offset [0-9]+ is not what pass 1 wrote there)" \
        "$TEST_DIR/err" || fail "resume of job $id1: $(cat "$TEST_DIR/err")"
check_failed "$id1" "changed while the job was stopped"
# The refused resume wrote nothing: the file system is still there.
[ "$(blkid -p -o value -s TYPE "$dev1")" = ext4 ] || fail "$dev1 is no longer ext4 after the refused resume"
jq_is "$(cat "$TEST_DIR/report.json")" '.signatures_after' null "report of job $id1"

# --- paused, then a sector of what was written changed -------------------------------------------
dev2=$(make_loop 64M)
id2=$(submit --verify none --max-rate 16M "$dev2")
wait_ckpt "$id2" $((16 << 20))
wipectl pause "$id2" > /dev/null || fail "pause $id2"
[ "$(job_field "$id2" state)" = paused ] || fail "job $id2 not paused: $(job_field "$id2" state)"
c=$(done_chunk "$id2")
dd if=/dev/zero of="$dev2" bs=8M count=1 seek="$c" oflag=direct conv=notrunc status=none || hard_error "dd $dev2"
expect_exit 5 wipectl resume "$id2"
off=$(sed -n 's/.*the sector at offset \([0-9]*\) is not what pass 1 wrote there.*/\1/p' "$TEST_DIR/err")
[ -n "$off" ] && [ "$off" -ge $((c << 23)) ] && [ "$off" -lt $(((c + 1) << 23)) ] ||
        fail "resume of job $id2 after chunk $c was zeroed: $(cat "$TEST_DIR/err")"
grep -q "^wipectl: $dev2: the device changed while the job was stopped" "$TEST_DIR/err" || fail "resume of job $id2: $(cat "$TEST_DIR/err")"
check_failed "$id2" "the sector at offset $off"
# A failed job cannot be resumed or verified again.
[ "$(request '{"id":1,"op":"resume","job":'"$id2"'}' | jq -r .error.code)" = EALREADY ] || fail "resume of failed job $id2"

# --- the same pause, nothing changed: it goes on and ends right -----------------------------------
dev3=$(make_loop 64M)
id3=$(submit --verify none --max-rate 32M "$dev3")
wait_ckpt "$id3" $((16 << 20))
wipectl pause "$id3" > /dev/null || fail "pause $id3"
wipectl resume "$id3" > /dev/null 2> "$TEST_DIR/err" || fail "resume $id3 exited $?: $(cat "$TEST_DIR/err")"
[ "$(wait_job "$id3" 60)" = done ] || fail "job $id3 did not end done: $(job_field "$id3" error)"
check_last_pass "$dev3" "$id3"
grep -q "job $id3: $dev3: [0-9]* sectors read back before going on hold what the checkpoint says" "$TEST_DIR/daemon.log" ||
        fail "job $id3: no read-back logged before the resume"

# --- killed in its second pass, resumed on its own at start: either pass may follow the checkpoint --
dev4=$(make_loop 64M)
id4=$(submit --passes zero,random --verify none --max-rate 48M "$dev4")
wait_ckpt "$id4" $(((64 + 16) << 20))
kill_daemon
start_daemon "${OPTS[@]}"
state=$(wait_state "$id4" 'running|flushing|done|failed' 20) || fail "job $id4 not resumed at start: $state"
state=$(wait_job "$id4" 60)
[ "$state" = done ] || fail "job $id4 ended $state after an automatic resume: $(job_field "$id4" error)"
check_last_pass "$dev4" "$id4"
jq_is "$(wipectl --json status "$id4")" '.jobs[0] | "\(.interruptions) \(.resumes)"' "1 1" "job $id4"

# --- changed while the daemon was down: the automatic resume fails it ------------------------------
dev5=$(make_loop 64M)
id5=$(submit --verify none --max-rate 16M "$dev5")
wait_ckpt "$id5" $((16 << 20))
kill_daemon
# A chunk the saved checkpoint counts as written by the first pass.
c=$(done_chunk "$id5")
dd if=/dev/zero of="$dev5" bs=8M count=1 seek="$c" oflag=direct conv=notrunc status=none || hard_error "dd $dev5"
start_daemon "${OPTS[@]}"
state=$(wait_state "$id5" 'failed|running|done' 20) || fail "job $id5 is $state 20 s after the restart"
[ "$state" = failed ] || fail "job $id5 went on over a changed device: $state"
check_failed "$id5" "changed while the job was stopped"

# --- someone writes a file system during the wipe: the probe after it fails the job ---------------
dev6=$(make_loop 32M)
truncate -s 32M "$TEST_DIR/fs.img"
mkfs.ext4 -q -F "$TEST_DIR/fs.img" || hard_error "mkfs.ext4 fs.img"
id6=$(submit --method zero --verify none --max-rate 4M "$dev6")
wait_bytes "$id6" $((16 << 20)) 30 || fail "job $id6 does not progress"
# The first chunk was written long ago: its superblock now comes from elsewhere (no O_EXCL: dd may).
dd if="$TEST_DIR/fs.img" of="$dev6" bs=64K count=1 oflag=direct conv=notrunc status=none || hard_error "dd $dev6"
state=$(wait_job "$id6" 60)
[ "$state" = failed ] || fail "job $id6 with an ext4 superblock written during the wipe ended $state"
check_failed "$id6" "a probe after the wipe finds ext4 at offset 1080, which is not what pass 1 wrote there"
jq_is "$(cat "$TEST_DIR/report.json")" '[.signatures_after[] | select(.type == "ext4") | .matches_last_pass] | .[0]' \
        false "report of job $id6"

# --- a pattern that looks like swap: a chance match, the job is done ------------------------------
dev7=$(make_loop 16M)
out=$(wipectl --json wipe --yes --passes "$SWAPLIKE" --verify last "$dev7") || fail "wipe of $dev7 exited $?: $out"
id7=$(echo "$out" | jq -r '.jobs[0].id')
report=$(wipectl --json report "$id7")
jq_is "$report" '"\(.state) \([.signatures_after[].type] | unique) \([.signatures_after[].matches_last_pass] | unique)"' \
        'done ["swap"] [true]' "report of job $id7"
wipectl report "$id7" | grep -q "swap at offset 4086: the bytes there are those the last pass wrote (a chance match)" ||
        fail "the text report of job $id7 does not say the signature is the pass's own"
check_pattern "$dev7" "${SWAPLIKE#0x}"

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
