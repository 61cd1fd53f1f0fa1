#!/bin/bash
# A random wipe writes exactly the documented keystream: 256 MiB + 4 KiB (a last chunk that is
# not whole) with 1, 2 and 4 worker threads and each cipher, every byte compared with the openssl
# CLI for the reported key; and a device with 4096-byte logical sectors.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

SIZE=$((256 * 1024 * 1024 + 4096))
dev=$(make_loop $SIZE)

for threads in 1 2 4; do
        start_daemon --threads $threads
        for cipher in aes-128-ctr chacha20; do
                note "threads=$threads cipher=$cipher"
                # Start from a known non-random state so that a stale result cannot pass.
                dd if=/dev/zero of="$dev" bs=1M oflag=direct status=none 2>/dev/null
                out=$(wipectl --json wipe --yes --cipher $cipher "$dev") || fail "wipe exited $?: $out"
                id=$(echo "$out" | jq -r '.jobs[0].id')
                [ "$(echo "$out" | jq -r '.jobs[0].state')" = done ] || fail "job $id: $out"
                # size is the device; bytes_total all the work (the pass and the default sample).
                jq_is "$out" '.jobs[0] | "\(.size) \(.bytes_done == .bytes_total) \(.bytes_total > .size)"' \
                        "$SIZE true true" "job $id"
                [ "$(job_cipher "$id")" = $cipher ] || fail "job $id: cipher $(job_cipher "$id")"
                key=$(job_key "$id")
                [ ${#key} -eq $([ $cipher = chacha20 ] && echo 64 || echo 32) ] || fail "job $id: key '$key'"
                check_keystream "$dev" $cipher "$key"
        done
        stop_daemon || fail "daemon exit status $?"
done

note "4096-byte logical sectors"
dev4k=$(make_loop $((64 * 1024 * 1024 + 4096 * 3)) 4096)
start_daemon --threads 2
out=$(wipectl --json wipe --yes "$dev4k") || fail "wipe of 4K-sector device exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
[ "$(wipectl --json status "$id" | jq -r '.jobs[0].sector_size')" = 4096 ] || fail "sector size not 4096"
check_keystream "$dev4k" "$(job_cipher "$id")" "$(job_key "$id")"
stop_daemon || fail "daemon exit status $?"
pass
