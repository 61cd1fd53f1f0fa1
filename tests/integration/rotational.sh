#!/bin/bash
# Per-device I/O settings: rotational devices (the loop devices' sysfs flag set) get the
# rotational queue depth and are written one region at a time, shared out between the workers;
# non-rotational ones the other default; a submit's queue_depth and io_size win; an io_size larger
# than the daemon's buffers is refused. Every device holds exactly its keystream afterwards.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

rot=()
for _ in 1 2 3; do
        dev=$(make_loop 96M)
        echo 1 > "/sys/block/${dev#/dev/}/queue/rotational" 2>/dev/null || skip "cannot mark $dev rotational"
        [ "$(cat "/sys/block/${dev#/dev/}/queue/rotational")" = 1 ] || skip "$dev stays non-rotational"
        rot+=("$dev")
done
ssd=$(make_loop 96M)
echo 0 > "/sys/block/${ssd#/dev/}/queue/rotational"
tuned=$(make_loop 64M)
echo 0 > "/sys/block/${tuned#/dev/}/queue/rotational"

start_daemon --threads 2 --io-size 1M
out=$(wipectl --json wipe --yes --no-wait --verify none "${rot[@]}" "$ssd") || fail "submit exited $?: $out"
tuned_out=$(wipectl --json wipe --yes --no-wait --verify none --queue-depth 3 --io-size 256K "$tuned") ||
        fail "tuned submit exited $?: $tuned_out"
tuned_id=$(echo "$tuned_out" | jq -r '.jobs[0].id')

for id in $(echo "$out" | jq -r '.jobs[].id'); do
        dev=$(job_field "$id" node)
        want=8
        [ "$dev" = "$ssd" ] || want=4
        [ "$(job_field "$id" queue_depth)" = "$want" ] || fail "job $id on $dev: queue_depth $(job_field "$id" queue_depth), expected $want"
        [ "$(job_field "$id" io_size)" = 1048576 ] || fail "job $id on $dev: io_size $(job_field "$id" io_size)"
        [ "$(job_field "$id" identity.rotational)" = "$([ "$dev" = "$ssd" ] && echo false || echo true)" ] ||
                fail "job $id on $dev: rotational flag $(job_field "$id" identity.rotational)"
        [ "$(job_field "$id" in_order)" = "$([ "$dev" = "$ssd" ] && echo false || echo true)" ] ||
                fail "job $id on $dev: in_order $(job_field "$id" in_order)"
done
[ "$(job_field "$tuned_id" queue_depth)" = 3 ] || fail "--queue-depth 3 not applied: $(job_field "$tuned_id" queue_depth)"
[ "$(job_field "$tuned_id" io_size)" = 262144 ] || fail "--io-size 256K not applied: $(job_field "$tuned_id" io_size)"

for id in $(echo "$out" "$tuned_out" | jq -r '.jobs[].id'); do
        state=$(wait_job "$id" 300)
        dev=$(job_field "$id" node)
        [ "$state" = done ] || fail "job $id on $dev ended $state"
        check_keystream "$dev" "$(job_cipher "$id")" "$(job_key "$id")"
done

# Larger I/Os than the daemon's buffers cannot be: refused before anything is written.
expect_exit 5 wipectl wipe --yes --verify none --io-size 2M "$ssd"
grep -q "io_size" "$TEST_DIR/err" || fail "no io_size in the refusal: $(cat "$TEST_DIR/err")"
expect_exit 2 wipectl wipe --yes --verify none --queue-depth 0 "$ssd"
expect_exit 2 wipectl wipe --yes --verify none --io-size 1000 "$ssd"
reply=$(request '{"id":1,"op":"submit","devices":["'"$ssd"'"],"queue_depth":300}')
jq_is "$reply" '.error.code' EINVAL "queue_depth 300"
reply=$(request '{"id":2,"op":"submit","devices":["'"$ssd"'"],"max_rate":-1}')
jq_is "$reply" '.error.code' EINVAL "max_rate -1"
[ "$(wipectl --json list | jq '.jobs | length')" = 5 ] || fail "a refused submit created a job"
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
