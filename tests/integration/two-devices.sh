#!/bin/bash
# One daemon wipes two devices at the same time (one submit, two jobs): each gets its own key and
# is byte-exact; a third submitted while the two run also completes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

a=$(make_loop $((256 * 1024 * 1024 + 4096)))
b=$(make_loop 128M)
c=$(make_loop 64M)
start_daemon --threads 2

out=$(wipectl --json wipe --yes --no-wait "$a" "$b") || fail "submit exited $?"
[ "$(echo "$out" | jq '.jobs | length')" = 2 ] || fail "expected two jobs: $out"
ida=$(echo "$out" | jq -r '.jobs[0].id')
idb=$(echo "$out" | jq -r '.jobs[1].id')
[ "$(echo "$out" | jq -r '.jobs[1].device')" = "$b" ] || fail "job order: $out"
idc=$(wipectl --json wipe --yes --no-wait "$c" | jq -r '.jobs[0].id') || fail "third submit failed"
for id in $ida $idb $idc; do
        [ "$(wait_job "$id")" = done ] || fail "job $id did not end done"
done
ka=$(job_key "$ida")
kb=$(job_key "$idb")
[ "$ka" != "$kb" ] || fail "two jobs share a key"
check_keystream "$a" "$(job_cipher "$ida")" "$ka"
check_keystream "$b" "$(job_cipher "$idb")" "$kb"
check_keystream "$c" "$(job_cipher "$idc")" "$(job_key "$idc")"
[ "$(wipectl --json list | jq '.jobs | length')" = 3 ] || fail "list does not show three jobs"
stop_daemon || fail "daemon exit status $?"
pass
