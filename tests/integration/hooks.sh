#!/bin/bash
# The hook run at the end of a job (wiped(8) HOOKS): its environment names the job that ended
# (done, cancelled, failed, and a later verification's end), nothing of the daemon's environment
# leaks, its report is written before it runs; its exit status and output (20 lines at most) are
# logged and shown by status; a hook past hook-timeout has its process group killed while the
# daemon answers; it holds no descriptor of the daemon, in a process group of its own; a clean
# stop cuts a long hook short within a bound and runs it again after the start;
# hook-max-running=1 runs two one after the other, none lost; a job forgotten while its hook
# waits in the queue does not get it; and a hook the daemon did not get to run (SIGKILLed first)
# runs after the next start. The examples of doc/hooks/ pass sh -n and
# shellcheck; dispatch.sh and spin-down.sh are run.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

H=$TEST_DIR/hooks
OUT=$TEST_DIR/out
mkdir -p "$H" "$OUT" || hard_error "mkdir"

command -v shellcheck >/dev/null || hard_error "shellcheck missing (tools/install-deps installs it)"

# The shipped examples parse and pass shellcheck as POSIX sh scripts.
n=0
for f in "$top_srcdir"/doc/hooks/*.sh; do
        [ -x "$f" ] || fail "$f is not executable"
        sh -n "$f" || fail "$f does not parse"
        shellcheck -s sh "$f" >&2 || fail "shellcheck $f"
        n=$((n + 1))
done
[ $n = 6 ] || fail "$n examples in doc/hooks, expected 6"

# dispatch.sh runs every executable of its directory in name order, skips what run-parts skips,
# goes on past a failure and exits with the first failure's status.
D=$TEST_DIR/hooks.d
mkdir -p "$D" || hard_error "mkdir $D"
printf '#!/bin/sh\necho "10 $WIPED_JOB" >> %s/dispatched; exit 4\n' "$TEST_DIR" > "$D/10-first"
printf '#!/bin/sh\necho "20 $WIPED_JOB" >> %s/dispatched\n' "$TEST_DIR" > "$D/20-second"
printf '#!/bin/sh\necho skipped >> %s/dispatched\n' "$TEST_DIR" > "$D/30-backup.sh~"
printf '#!/bin/sh\necho skipped >> %s/dispatched\n' "$TEST_DIR" > "$D/40-not-executable"
chmod +x "$D/10-first" "$D/20-second" "$D/30-backup.sh~"
WIPED_HOOKS_DIR=$D WIPED_JOB=9 "$top_srcdir/doc/hooks/dispatch.sh" 2> "$TEST_DIR/dispatch.err"
rc=$?
[ $rc = 4 ] || fail "dispatch.sh exited $rc, expected 4 (the first failure's)"
[ "$(cat "$TEST_DIR/dispatched")" = "$(printf '10 9\n20 9')" ] || fail "dispatch.sh ran: $(cat "$TEST_DIR/dispatched")"
grep -q '^10-first: exit status 4$' "$TEST_DIR/dispatch.err" || fail "dispatch.sh did not name the failure"
# spin-down.sh leaves what does not spin alone (a loop device: nothing is sent).
WIPED_STATE=done WIPED_TRANSPORT=loop WIPED_DEVICE=/nonexistent "$top_srcdir/doc/hooks/spin-down.sh" ||
        fail "spin-down.sh on a loop device exited $?"

# A hook that writes its environment and whether the report exists.
cat > "$H/env.sh" <<EOF
#!/bin/sh
env > "$OUT/\$WIPED_JOB.env.tmp"
[ -f "\$WIPED_REPORT" ] && echo REPORT_EXISTS=yes >> "$OUT/\$WIPED_JOB.env.tmp"
mv "$OUT/\$WIPED_JOB.env.tmp" "$OUT/\$WIPED_JOB.env"
EOF
chmod +x "$H/env.sh"

hook_state() { wipectl --json status "$1" | jq -r '.jobs[0].hook.state'; }
hook_is() { [[ $(hook_state "$1") =~ ^($2)$ ]]; }
# wait_hook ID STATE_REGEX: until the job's hook is in that state.
wait_hook() { wait_until 60 "job $1: hook $2" hook_is "$1" "$2"; }
envval() { sed -n "s/^$2=//p" "$OUT/$1.env"; }
# check_env ID VAR VALUE
check_env() {
        grep -q "^$2=" "$OUT/$1.env" || fail "job $1: $2 missing from the hook's environment"
        [ "$(envval "$1" "$2")" = "$3" ] || fail "job $1: $2 is '$(envval "$1" "$2")', expected '$3'"
}
# check_job_env ID STATE EXIT: every variable against what status says of the job.
check_job_env() {
        local id=$1 st json node byid bypath=
        json=$(wipectl --json status "$id") || fail "status $id"
        st=$(echo "$json" | jq -c '.jobs[0]')
        node=$(echo "$st" | jq -r '.identity.node')
        check_env "$id" WIPED_EVENT wipe
        check_env "$id" WIPED_JOB "$id"
        check_env "$id" WIPED_STATE "$2"
        check_env "$id" WIPED_EXIT_STATUS "$3"
        check_env "$id" WIPED_DEVICE "$node"
        check_env "$id" WIPED_DEVICE_NAME "${node#/dev/}"
        check_env "$id" WIPED_SIZE_BYTES "$(echo "$st" | jq -r '.identity.size')"
        for v in serial:SERIAL model:MODEL vendor:VENDOR wwn:WWN transport:TRANSPORT; do
                check_env "$id" "WIPED_${v#*:}" "$(echo "$st" | jq -r ".identity.${v%%:*} // \"\"")"
        done
        byid=$(echo "$st" | jq -r '(.identity.by_id // []) | join(" ")')
        check_env "$id" WIPED_BY_ID "$byid"
        for l in /dev/disk/by-path/*; do
                [ -e "$l" ] && [ "$(readlink -f "$l")" = "$node" ] && bypath=$l
        done
        check_env "$id" WIPED_BY_PATH "$bypath"
        check_env "$id" WIPED_METHOD "$(echo "$st" | jq -r '.method')"
        check_env "$id" WIPED_REPORT "$STATE/reports/$id.json"
        check_env "$id" WIPED_POLICY ""
        check_env "$id" REPORT_EXISTS yes
        check_env "$id" PATH /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
        grep -q '^HOOKS_TEST_LEAK=' "$OUT/$id.env" && fail "job $id: the daemon's environment leaked into the hook"
}

a=$(make_loop 16M)
big=$(make_loop 1G)
thin=$(make_thin_loop 64M 16M) || exit $?

# ---- done, cancelled, failed: the environment ----
export HOOKS_TEST_LEAK=1
start_daemon --threads 2 --job-end-hook "$H/env.sh" --hook-timeout 60
unset HOOKS_TEST_LEAK
id=$(wipectl --json wipe --yes --verify none "$a" | jq -r '.jobs[0].id') || fail "wipe $a"
wait_hook "$id" exited
[ -f "$OUT/$id.env" ] || fail "job $id: the hook did not run"
check_job_env "$id" done 0
check_env "$id" WIPED_ERROR ""
[ "$(wipectl --json status "$id" | jq -r '.jobs[0].hook.exit_status')" = 0 ] || fail "hook exit status not 0"
wipectl status "$id" | grep -q "^job $id: hook (wipe) exited 0" || fail "status text: $(wipectl status "$id")"
grep -q "job $id: $a: hook exited 0" "$TEST_DIR/daemon.log" || fail "no log of the hook's end"
# A later verification's end runs it again, as a "verify" event, after the report is rewritten.
mv "$OUT/$id.env" "$OUT/$id.wipe.env"
wipectl verify --verify last "$id" > /dev/null || fail "verify $id exited $?"
wait_until 60 "the hook of job $id's verification" test -f "$OUT/$id.env"
wait_hook "$id" exited
check_env "$id" WIPED_EVENT verify
check_env "$id" WIPED_STATE done
check_env "$id" WIPED_EXIT_STATUS 0
check_env "$id" WIPED_VERIFY_RESULT passed
check_env "$id" REPORT_EXISTS yes
[ "$(wipectl --json status "$id" | jq -r '.jobs[0].hook.event')" = verify ] || fail "status: hook event not verify"

idc=$(wipectl --json wipe --yes --no-wait --max-rate 32M "$big" | jq -r '.jobs[0].id') || fail "wipe $big"
wait_state "$idc" running 30 > /dev/null || fail "job $idc not running"
wipectl cancel "$idc" > /dev/null || fail "cancel $idc"
wait_hook "$idc" exited
check_job_env "$idc" cancelled 7

idf=$(wipectl --json wipe --yes --no-wait "$thin" | jq -r '.jobs[0].id') || fail "wipe $thin"
wait_hook "$idf" exited
check_job_env "$idf" failed 6
[ -n "$(envval "$idf" WIPED_ERROR)" ] || fail "failed job $idf: WIPED_ERROR empty"
check_env "$idf" WIPED_ERROR "$(wipectl --json status "$idf" | jq -r '.jobs[0].error.message')"
stop_daemon || fail "daemon exit status $?"

# ---- exit status and output logged ----
start_daemon --threads 2 --job-end-hook 'echo "out of $WIPED_JOB"; echo "err of $WIPED_JOB" >&2; seq 100; exit 3'
id=$(wipectl --json wipe --yes --verify none "$a" | jq -r '.jobs[0].id') || fail "wipe $a"
wait_hook "$id" exited
[ "$(wipectl --json status "$id" | jq -r '.jobs[0].hook.exit_status')" = 3 ] || fail "exit status not 3"
grep -q "job $id: $a: hook failed: exit status 3" "$TEST_DIR/daemon.log" || fail "exit status 3 not logged"
grep -q "job $id: hook: out of $id" "$TEST_DIR/daemon.log" || fail "stdout not logged"
grep -q "job $id: hook: err of $id" "$TEST_DIR/daemon.log" || fail "stderr not logged"
# 20 lines at most: the two above and 1..18 of seq; the rest counted (19..100: 247 bytes).
grep -qx '<6>job '"$id"': hook: 18' "$TEST_DIR/daemon.log" || fail "line 20 of the output not logged"
grep -q "job $id: hook: 19\$" "$TEST_DIR/daemon.log" && fail "more than 20 lines of output logged"
grep -q "job $id: hook: 247 more bytes of output not logged" "$TEST_DIR/daemon.log" || fail "the rest not counted"
stop_daemon || fail "daemon exit status $?"

# ---- timeout: the process group is killed; the daemon answers meanwhile ----
start_daemon --threads 2 --hook-timeout 2 --job-end-hook "echo \$\$ > $OUT/pgid; sleep 1000 & sleep 1000"
id=$(wipectl --json wipe --yes --verify none "$a" | jq -r '.jobs[0].id') || fail "wipe $a"
wait_until 30 "the sleeping hook started" test -s "$OUT/pgid"
pgid=$(cat "$OUT/pgid")
wait_hook "$id" running
d=$(wipectl --json version | jq -c '.daemon | [.job_end_hook, .hook_timeout_s, .hook_max_running, .hooks_running, .hooks_queued]')
[ "$d" = '[true,2,4,1,0]' ] || fail "version: hook settings and counts $d, expected [true,2,4,1,0]"
timeout 10 "$WIPECTL_BIN" --socket "$SOCK" version > /dev/null || fail "the daemon did not answer while a hook ran"
# No descriptor of the daemon in the hook (its shell, looked at from outside while it waits):
# stdin /dev/null, stdout and stderr one pipe.
fds=$(ls /proc/"$pgid"/fd | sort -n | tr '\n' ' ')
[ "$fds" = "0 1 2 " ] || fail "the hook holds descriptors $fds: $(ls -l /proc/"$pgid"/fd)"
[ "$(readlink /proc/"$pgid"/fd/0)" = /dev/null ] || fail "the hook's stdin is $(readlink /proc/"$pgid"/fd/0)"
[ "$(readlink /proc/"$pgid"/fd/1)" = "$(readlink /proc/"$pgid"/fd/2)" ] || fail "stdout and stderr differ"
[ "$(ps -o pgid= -p "$pgid" | tr -d ' ')" = "$pgid" ] || fail "the hook is not in a process group of its own"
wait_hook "$id" timed-out
# (SIGKILLed processes take a moment to go.)
group_gone() { ! pgrep -g "$pgid" > /dev/null; }
wait_until 10 "processes of the hook's group $pgid gone: $(pgrep -g "$pgid" | tr '\n' ' ')" group_gone
grep -q "job $id: $a: hook timed out after 2 s" "$TEST_DIR/daemon.log" || fail "timeout not logged"
stop_daemon || fail "daemon exit status $?"

# ---- a clean stop does not wait for a hook for ever; the hook runs again after the start ----
rm -f "$OUT/pgid"
start_daemon --threads 2 --hook-timeout 600 --job-end-hook "echo \$\$ > $OUT/pgid; exec sleep 1000"
id=$(wipectl --json wipe --yes --verify none "$a" | jq -r '.jobs[0].id') || fail "wipe $a"
wait_until 30 "the sleeping hook started" test -s "$OUT/pgid"
pgid=$(cat "$OUT/pgid")
wait_hook "$id" running
kill -TERM "$DAEMON_PID"
# Bounded by the stop's grace (5 s) and the SIGKILL after the SIGTERM (5 s), with room.
daemon_gone() { ! kill -0 "$DAEMON_PID" 2>/dev/null; }
wait_until 60 "the daemon stopped while a hook ran" daemon_gone
wait "$DAEMON_PID"
rc=$?
DAEMON_PID=
[ $rc = 0 ] || fail "daemon exit status $rc"
wait_until 10 "processes of the hook's group $pgid gone" group_gone
grep -q "job $id: $a: hook still running at shutdown: stopped" "$TEST_DIR/daemon.log" || fail "stop not logged"
grep -q "job $id: $a: hook stopped by the daemon.s stop after .*; it runs again after the next start" "$TEST_DIR/daemon.log" ||
        fail "the hook cut short not logged as such"
start_daemon --threads 2 --job-end-hook "echo again \$WIPED_JOB > $OUT/again"
wait_hook "$id" exited
[ "$(cat "$OUT/again")" = "again $id" ] || fail "the hook cut short by the stop did not run again after the start"
stop_daemon || fail "daemon exit status $?"

# ---- hook-max-running=1: one after the other, none lost ----
b=$(make_loop 16M)
start_daemon --threads 2 --hook-max-running 1 \
        --job-end-hook "echo start \$WIPED_JOB >> $OUT/serial; sleep 1; echo end \$WIPED_JOB >> $OUT/serial"
ids=$(wipectl --json wipe --yes --verify none "$a" "$b" | jq -r '.jobs[].id') || fail "wipe $a $b"
for i in $ids; do wait_hook "$i" exited; done
[ "$(wc -l < "$OUT/serial")" = 4 ] || fail "hooks lost: $(cat "$OUT/serial")"
awk '{ if ($1 == "start") { if (open) bad = 1; open = 1 } else open = 0 } END { exit bad }' "$OUT/serial" ||
        fail "hooks overlapped: $(cat "$OUT/serial")"
stop_daemon || fail "daemon exit status $?"

# ---- a job forgotten while its hook waits in the queue does not get it (wiped(8) HOOKS) ----
rm -f "$OUT/ran" "$OUT/sleeper"
rmdir "$OUT/first" 2>/dev/null
hook="mkdir $OUT/first 2>/dev/null && { echo \$\$ > $OUT/sleeper; while [ ! -e $OUT/go ]; do sleep 0.1; done; }; echo ran \$WIPED_JOB >> $OUT/ran"
start_daemon --threads 2 --hook-max-running 1 --job-end-hook "$hook"
id1=$(wipectl --json wipe --yes --verify none "$a" | jq -r '.jobs[0].id') || fail "wipe $a"
wait_until 30 "the first hook started" test -s "$OUT/sleeper"
register_pid "$(cat "$OUT/sleeper")"
id2=$(wipectl --json wipe --yes --verify none "$b" | jq -r '.jobs[0].id') || fail "wipe $b"
wait_hook "$id2" pending
wipectl forget "$id2" > /dev/null || fail "forget $id2"
touch "$OUT/go"
wait_hook "$id1" exited
# The runner would have started the queued one right after the first: give it a start's time.
id3=$(wipectl --json wipe --yes --verify none "$a" | jq -r '.jobs[0].id') || fail "wipe $a"
wait_hook "$id3" exited
grep -qx "ran $id2" "$OUT/ran" && fail "the hook of job $id2 ran after the job was forgotten"
grep -qx "ran $id3" "$OUT/ran" || fail "job $id3: its hook did not run"
stop_daemon || fail "daemon exit status $?"
rm -f "$OUT/go" "$OUT/ran" "$OUT/sleeper"
rmdir "$OUT/first"

# ---- killed before its hook ran: it runs after the next start ----
rm -f "$OUT/ran"
hook="mkdir $OUT/first 2>/dev/null && { echo \$\$ > $OUT/sleeper; exec sleep 1000; }; echo ran \$WIPED_JOB >> $OUT/ran"
start_daemon --threads 2 --hook-max-running 1 --job-end-hook "$hook"
ids=$(wipectl --json wipe --yes --verify none "$a" "$b" | jq -r '.jobs[].id') || fail "wipe $a $b"
wait_until 30 "the first hook started" test -s "$OUT/sleeper"
register_pid "$(cat "$OUT/sleeper")"
for i in $ids; do wait_hook "$i" 'running|pending'; done
kill_daemon
stop_pid "$(cat "$OUT/sleeper")"
start_daemon --threads 2 --hook-max-running 1 --job-end-hook "$hook"
for i in $ids; do
        wait_hook "$i" exited
        grep -qx "ran $i" "$OUT/ran" || fail "job $i: its hook did not run after the restart"
done
stop_daemon || fail "daemon exit status $?"
pass
