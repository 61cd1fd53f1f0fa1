#!/bin/bash
# Bad sectors are skipped, not fatal: a wipe over a device with unreadable, unwritable sectors
# writes every other byte, verifies around them, ends "done-with-errors" (wipectl exit 10) and
# reports exactly the bad byte ranges; over --max-bad it fails (exit 6, "bad sectors").
#
# The bad sectors are real I/O errors: the device is a loop device over a file of badfs
# (tests/helpers/badfs, FUSE) that fails every read and write touching the configured sectors with
# EIO, and passes everything else through to a backing file that the test then reads directly.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

size=$((64 << 20))
# Bad 512-byte sectors: 1000..1007, 60001 (one sector), 100000..100063.
make_badfs_loop "$size" 1000:8 60001:1 100000:64
dev=$BADFS_DEV
backing=$BADFS_BACKING
ranges='[{"offset":512000,"length":4096},{"offset":30720512,"length":512},{"offset":51200000,"length":32768}]'
bad_bytes=$((4096 + 512 + 32768))
note "$dev over $BADFS_MNT/disk (badfs pid $BADFS_PID), bad ranges $ranges"

# The fixture itself: a bad sector fails, its neighbours do not.
dd if="$dev" of=/dev/null bs=512 skip=60001 count=1 iflag=direct status=none 2>/dev/null &&
        hard_error "badfs: sector 60001 of $dev reads"
dd if="$dev" of=/dev/null bs=512 skip=60002 count=1 iflag=direct status=none ||
        hard_error "badfs: sector 60002 of $dev does not read"

start_daemon --threads 2

# wctl ARG...: wipectl, killed after 300 s (a hung wait is a failure, not a hung test).
wctl() { timeout 300 "$WIPECTL_BIN" --socket "$SOCK" "$@"; }

# job_id_of: the id of the one job in $TEST_DIR/out (wipectl --json wipe), else the newest job.
job_id_of() {
        local id
        id=$(jq -r '.jobs[0].id // empty' "$TEST_DIR/out" 2>/dev/null | head -n 1)
        [ -n "$id" ] || id=$(wipectl --json list | jq -r '[.jobs[].id] | max // empty')
        [ -n "$id" ] || fail "no job id: $(cat "$TEST_DIR/out" "$TEST_DIR/err")"
        echo "$id"
}

# check_bad ID WHAT: job ID's status and report have exactly the bad ranges, each once.
check_bad() {
        local id=$1 what=$2 st rep
        st=$(wipectl --json status "$id") || fail "$what: status $id exited $?"
        jq_is "$st" '.jobs[0].state' done-with-errors "$what: status"
        jq_is "$st" '.jobs[0].bad_bytes' "$bad_bytes" "$what: status"
        rep=$(wipectl --json report "$id") || fail "$what: report $id exited $?"
        jq_is "$rep" '.state' done-with-errors "$what: report"
        jq_is "$rep" '[.bad_ranges[] | {offset, length}] | tojson' "$ranges" "$what: report"
        jq_is "$rep" '.bad_bytes' "$bad_bytes" "$what: report"
        jq_is "$rep" '.verification.result' passed "$what: report"
}

# 1. One random pass, verified: done with errors, exit 10.
expect_exit 10 wctl --json wipe --yes --verify last "$dev"
id=$(job_id_of)
check_bad "$id" "wipe $id"
grep -q "EIO" "$(dirname "$backing")/badfs.log" || fail "badfs logged no EIO: the bad sectors were never tried"

# Every other byte of the backing file is the keystream of the job's key; the bad ranges were
# never written (badfs refuses the whole request) and are still zero.
key=$(job_key "$id")
cipher=$(job_cipher "$id")
[[ $key =~ ^[0-9a-f]{32,64}$ ]] || fail "report --keys $id: key '$key'"
openssl enc "-$cipher" -K "$key" -iv 00000000000000000000000000000000 -in /dev/zero 2>/dev/null |
        head -c "$size" > "$TEST_DIR/expected" || hard_error "openssl enc -$cipher"
[ "$(stat -c %s "$TEST_DIR/expected")" = "$size" ] || hard_error "openssl made $(stat -c %s "$TEST_DIR/expected") bytes"
while read -r offset length; do
        dd if=/dev/zero of="$TEST_DIR/expected" bs=512 seek=$((offset / 512)) count=$((length / 512)) \
                conv=notrunc status=none || hard_error "dd into $TEST_DIR/expected"
done < <(echo "$ranges" | jq -r '.[] | "\(.offset) \(.length)"')
cmp "$TEST_DIR/expected" "$backing" ||
        fail "$backing: differs from openssl enc -$cipher with the bad ranges cut out"

# The text report lists the bad ranges.
wipectl report "$id" > "$TEST_DIR/text" || fail "report $id exited $?"
grep -Eq "Bad ranges: +3," "$TEST_DIR/text" || fail "text report: no 'Bad ranges: 3': $(cat "$TEST_DIR/text")"
for offset in 512000 30720512 51200000; do
        grep -q "at byte $offset," "$TEST_DIR/text" || fail "text report: no range at byte $offset: $(cat "$TEST_DIR/text")"
done

# 2. Over the limit: 2 KiB of bad sectors allowed, 4 KiB in the first range: the job fails.
expect_exit 6 wctl --json wipe --yes --verify last --max-bad 2K "$dev"
id2=$(job_id_of)
[ "$id2" != "$id" ] || fail "no new job for the --max-bad 2K wipe"
st=$(wipectl --json status "$id2") || fail "status $id2 exited $?"
jq_is "$st" '.jobs[0].state' failed "--max-bad 2K: status"
jq_is "$st" '.jobs[0].error.code' EIO "--max-bad 2K: status"
echo "$st" | jq -r '.jobs[0].error.message' | grep -q "bad sectors" || fail "--max-bad 2K: message lacks 'bad sectors': $st"
grep -q "bad sectors" "$TEST_DIR/err" || fail "wipectl did not print the error: $(cat "$TEST_DIR/err")"
jq_is "$(wipectl --json report "$id2")" '.max_bad_bytes' 2048 "--max-bad 2K: report"

# 3. Two passes meet the same bad sectors: each range is recorded once. The last pass (zero)
# wrote every good byte: the backing file is all zero again.
expect_exit 10 wctl --json wipe --yes --verify last --passes random,zero "$dev"
id3=$(job_id_of)
[ "$id3" != "$id2" ] || fail "no new job for the two-pass wipe"
check_bad "$id3" "two passes, job $id3"
jq_is "$(wipectl --json report "$id3")" '[.passes[].pattern] | join(",")' random,zero "two passes, job $id3"
cmp -n "$size" "$backing" /dev/zero || fail "$backing: not all zero after the zero pass of job $id3"

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
