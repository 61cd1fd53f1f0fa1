#!/bin/bash
# A write error fails the job with a message naming the device and offset, without hurting the
# daemon. The fault is real: the loop device's backing file lives on a 16 MiB tmpfs, so writes
# past 16 MiB of a 64 MiB device fail with ENOSPC, as on a full thin-provisioned disk.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

thin=$(make_thin_loop 64M 16M) || exit $?
good=$(make_loop 32M)

start_daemon --threads 2

expect_exit 6 wipectl wipe --yes "$thin"
out=$(wipectl --json status 1)
[ "$(echo "$out" | jq -r '.jobs[0].state')" = failed ] || fail "state: $out"
code=$(echo "$out" | jq -r '.jobs[0].error.code')
case $code in ENOSPC|EIO) ;; *) fail "error code $code: $out" ;; esac
echo "$out" | jq -r '.jobs[0].error.message' | grep -q "^$thin: write of .* at offset [0-9]* failed" ||
        fail "message: $out"
grep -q "$thin" "$TEST_DIR/err" || fail "wipectl did not name the device: $(cat "$TEST_DIR/err")"
[ "$(echo "$out" | jq -r '.jobs[0].bytes_done')" -lt $((64 << 20)) ] || fail "all bytes counted as written"
[ "$(wipectl --json report 1 | jq -r '.error.code')" = "$code" ] || fail "report lacks the error"

# The daemon goes on: the next job on a healthy device is byte-exact.
out=$(wipectl --json wipe --yes "$good") || fail "wipe after the failure exited $?"
id=$(echo "$out" | jq -r '.jobs[0].id')
check_keystream "$good" "$(job_cipher "$id")" "$(job_key "$id")"
stop_daemon || fail "daemon exit status $?"
pass
