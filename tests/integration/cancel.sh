#!/bin/bash
# Cancel stops a running job part-way (what lies past the stop point is untouched) and the daemon
# then wipes another device correctly. The jobs cancelled are held by a rate limit (1 GiB at
# 32 MB/s: about 34 s) so that they are certainly still running when the cancel arrives, however
# fast the device; the daemon is tuned slow as well (one thread, one 4 KiB write in flight).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

big=$(make_loop 1G)
small=$(make_loop 16M)
start_daemon --threads 1 --queue-depth 1 --io-size 4K

id=$(wipectl --json wipe --yes --no-wait --max-rate 32M "$big" | jq -r '.jobs[0].id') || fail "submit failed"
for _ in $(seq 100); do
        [ "$(job_field "$id" bytes_done)" -gt 0 ] && break
        sleep 0.05
done
[ "$(job_field "$id" state)" = running ] || fail "job $id is not running: $(job_field "$id" state)"
wipectl cancel "$id" > /dev/null || fail "cancel exited $?"
state=$(wait_job "$id" 10)
[ "$state" = cancelled ] || fail "job $id ended $state, expected cancelled"
done_bytes=$(job_field "$id" bytes_done)
total=$(job_field "$id" bytes_total)
size=$(job_field "$id" size)
note "cancelled after $done_bytes of $total bytes (device of $size bytes)"
[ "$size" = $((1 << 30)) ] || fail "job $id: size $size"
# bytes_total counts the planned verification too; the cancel came within the write pass.
[ "$done_bytes" -lt "$size" ] || fail "cancel came too late to test anything"
# The last 64 MiB were never reached: still zeros.
cmp -n $((64 << 20)) -i $((size - (64 << 20))):0 "$big" /dev/zero || fail "bytes past the stop point changed"
expect_exit 1 wipectl cancel "$id"
grep -q "already cancelled" "$TEST_DIR/err" || fail "second cancel: $(cat "$TEST_DIR/err")"

# Waiting for a cancelled job reports it as such (exit 7).
big2=$(make_loop 1G)
wipectl wipe --yes --cipher chacha20 --max-rate 32M "$big2" > "$TEST_DIR/wait.out" 2>&1 &
wpid=$!
id2=
for _ in $(seq 100); do
        id2=$(wipectl --json status | jq -r --arg d "$big2" '.jobs[] | select(.device == $d) | .id')
        [ -n "$id2" ] && break
        sleep 0.05
done
[ -n "$id2" ] || fail "the waiting wipe did not submit"
wipectl cancel "$id2" > /dev/null || fail "cancel of job $id2 exited $?"
wait $wpid
rc=$?
[ $rc = 7 ] || { cat "$TEST_DIR/wait.out" >&2; fail "wipectl wipe of a cancelled job exited $rc, expected 7"; }

# The daemon still serves a new job, and does it right.
out=$(wipectl --json wipe --yes "$small") || fail "wipe after cancel exited $?"
id3=$(echo "$out" | jq -r '.jobs[0].id')
check_keystream "$small" "$(job_cipher "$id3")" "$(job_key "$id3")"
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
