#!/bin/bash
# Pattern passes write their buffers again without refilling them: with few buffers shared by
# jobs that write different patterns, the same pattern at other phases, random passes, and
# verification reads between the passes, every pass verifies and every device ends with exactly
# its last pass. A verification of a pattern pass names exactly the sectors that differ: one
# byte off, the right pattern at the wrong phase, two sectors on either side of an I/O boundary,
# the last sector.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

ODD=$(((40 << 20) + 7 * 512))   # neither a multiple of 3 nor of an I/O
a=$(make_loop $ODD)
b=$(make_loop $ODD)
c=$(make_loop $((24 << 20)) 4096)
d=$(make_loop $ODD)
# Two buffers per thread: each buffer serves every job in turn.
start_daemon --threads 2 --buffers 2

submit() {
        local dev=$1 passes=$2 out
        out=$(wipectl --json wipe --yes --no-wait --verify all --passes "$passes" "$dev") ||
                fail "wipe --passes $passes $dev exited $?: $out"
        echo "$out" | jq -r '.jobs[0].id'
}
# 0x492492 is 0x924924 one byte on: the same bytes at another phase.
ida=$(submit "$a" 0x924924,0x492492,zero,0x924924)
idb=$(submit "$b" 0x492492,random,0x249249)
idc=$(submit "$c" one,0x0102030405,zero)
idd=$(submit "$d" zero,0x924924,random)
for id in $ida $idb $idc $idd; do
        st=$(wait_job "$id" 300)
        [ "$st" = done ] || fail "job $id ended $st: $(wipectl --json status "$id" | jq -c '.jobs[0].error')"
        jq_is "$(wipectl --json report "$id")" '[.passes[].verified.result] | unique | join(",")' passed "job $id: every pass verified"
done
check_pattern "$a" 924924
check_last_pass "$b" "$idb"
check_pattern "$c" 00
check_last_pass "$d" "$idd"

# runline REPORT: the latest verification as one line.
runline() {
        echo "$1" | jq -r '.verification | "\(.mode) \(.result) \(.mismatched_sectors) \(.first_mismatches | map(tostring) | join(","))"'
}
# put DEV OFFSET FILE: write FILE's bytes at OFFSET.
put() {
        dd if="$3" of="$1" bs="$(stat -c %s "$3")" seek="$2" oflag=direct,seek_bytes conv=notrunc status=none ||
                hard_error "cannot write $1 at $2"
}

# --- a 3-byte pattern, 512-byte sectors ------------------------------------------------------------
sector=$TEST_DIR/sector
# One byte off in the middle of a sector.
s1=$((3 * 1048576 + 9 * 512))
dd if="$a" of="$sector" bs=512 skip=$((s1 / 512)) count=1 iflag=direct status=none || hard_error "cannot read $a"
printf '\x00' | dd of="$sector" bs=1 seek=200 conv=notrunc status=none
put "$a" $s1 "$sector"
# The pattern at the wrong phase: 0x924924 from the sector's own start, where the device has
# another phase.
s2=$((7 * 1048576 + 1024))
[ $((s2 % 3)) != 0 ] || hard_error "s2 is at phase 0"
pattern_stream 924924 512 > "$sector"
put "$a" $s2 "$sector"
# Both sides of a 1 MiB boundary (the default I/O size), and the last sector.
dd if=/dev/urandom of="$TEST_DIR/two" bs=1024 count=1 status=none
s3=$((16 * 1048576 - 512))
put "$a" $s3 "$TEST_DIR/two"
s4=$((ODD - 512))
head -c 512 /dev/urandom > "$sector"
put "$a" $s4 "$sector"
out=$(wipectl --json verify --verify last "$ida" 2> "$TEST_DIR/verify.err")
rc=$?
[ "$rc" = 6 ] || fail "verify $ida of a corrupted device exited $rc, expected 6: $(cat "$TEST_DIR/verify.err")"
want="last failed 5 $s1,$s2,$s3,$((s3 + 512)),$s4"
[ "$(runline "$(wipectl --json report "$ida")")" = "$want" ] ||
        fail "verify $ida: $(runline "$(wipectl --json report "$ida")"), expected $want"

# --- zeros, 4096-byte sectors --------------------------------------------------------------------
# The first byte of one sector, the last byte of the device.
t1=$((5 * 1048576 + 3 * 4096))
head -c 4096 /dev/zero > "$sector"
printf '\x01' | dd of="$sector" bs=1 conv=notrunc status=none
put "$c" $t1 "$sector"
t2=$(((24 << 20) - 4096))
head -c 4095 /dev/zero > "$sector"
printf '\x80' >> "$sector"
put "$c" $t2 "$sector"
wipectl --json verify --verify last "$idc" > /dev/null 2> "$TEST_DIR/verify.err"
rc=$?
[ "$rc" = 6 ] || fail "verify $idc of a corrupted device exited $rc, expected 6: $(cat "$TEST_DIR/verify.err")"
want="last failed 2 $t1,$t2"
[ "$(runline "$(wipectl --json report "$idc")")" = "$want" ] ||
        fail "verify $idc: $(runline "$(wipectl --json report "$idc")"), expected $want"

stop_daemon || fail "daemon exit status $?"
pass
