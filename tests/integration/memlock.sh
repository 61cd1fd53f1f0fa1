#!/bin/bash
# Registered buffers are pinned memory within RLIMIT_MEMLOCK. A daemon that may neither raise the
# limit (no CAP_SYS_RESOURCE) nor pin beyond it (no CAP_IPC_LOCK) says so, falls back to
# unregistered buffers, reports it, and still wipes correctly.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

command -v setpriv >/dev/null || skip "setpriv (util-linux) missing"
command -v prlimit >/dev/null || skip "prlimit (util-linux) missing"
dev=$(make_loop 80M)

# The daemon itself under a 1 MiB memlock limit (room for its rings, which newer kernels account
# there too, per user: other root processes without CAP_IPC_LOCK share it; not for 8 MiB of
# buffers per worker) and without the two capabilities.
real=$WIPED
WIPED=$TEST_DIR/wiped-limited
cat > "$WIPED" <<EOS
#!/bin/sh
exec setpriv --bounding-set -ipc_lock,-sys_resource --inh-caps -ipc_lock,-sys_resource \
        prlimit --memlock=1048576:1048576 "$real" "\$@"
EOS
chmod +x "$WIPED"
start_daemon --threads 2 --buffers 8
grep -q "cannot register I/O buffers" "$TEST_DIR/daemon.log" || fail "no warning about unregistered buffers in the log"
v=$(wipectl --json version) || fail "version exited $?"
jq_is "$v" '.daemon.registered_buffers' false "version under a 1 MiB memlock limit"
jq_is "$v" '.daemon.buffers' 8 "version buffers"
jq_is "$v" '.daemon.buffer_memory' $((2 * 8 * 1048576 + 2 * 65536)) "version buffer_memory"
wipectl status | grep -q "not registered" || fail "status does not say the buffers are not registered"

out=$(wipectl --json wipe --yes --verify last "$dev") || fail "wipe exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
[ "$(job_field "$id" state)" = done ] || fail "job ended $(job_field "$id" state)"
check_keystream "$dev" "$(job_cipher "$id")" "$(job_key "$id")"
stop_daemon || fail "daemon exit status $?"

# And without the limit the same daemon registers them.
WIPED=$real
start_daemon --threads 2 --buffers 8
jq_is "$(wipectl --json version)" '.daemon.registered_buffers' true "version without a limit"
stop_daemon || fail "daemon exit status $?"
pass
