#!/bin/bash
# Drive health (wiped(8) "DRIVE HEALTH"): the real smartctl on a loop device says it has no SMART,
# in the probe (JSON and the "Health:" line), the status and the report before and after (and in
# the text report). Then smartctl is replaced by tests/helpers/fake-smartctl: the external program
# the daemon runs is replaced, not the I/O path (the wipes are real, on the test's own loop
# devices, and the fake is only ever given their paths; it reads no device). With it: a
# failing drive under smart-policy = refuse is refused with nothing written and no job (a bay
# policy's job too); a probe of two devices runs both at once; a stop while the snapshot after is
# taken has the report written again with it after the start; under flag
# it is wiped and the report has passed=false before and after; a smartctl that hangs is killed at
# smart-timeout (its process group: nothing of it is left) and the job goes on; one that prints
# garbage is "unreadable"; smartctl = none and smart-policy = ignore run nothing.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

command -v smartctl >/dev/null || PATH=$PATH:/usr/sbin:/sbin
command -v smartctl >/dev/null || hard_error "smartctl missing (tools/install-deps installs smartmontools)"

L=$(make_loop 32M)
L2=$(make_loop 16M)
# A disk a bay policy takes (only this backing file matches it).
head -c 8M /dev/urandom > "$TEST_DIR/pol-1.img" || hard_error "cannot write $TEST_DIR/pol-1.img"
L3=$(make_loop_file "$TEST_DIR/pol-1.img")
# The snapshot after is taken once the job ended (seconds later with a slow smartctl); the signed
# report is written after it. report ID: the report once it has it.
after_taken() { [ "$(wipectl --json report "$1" | jq -r '.smart_after != null and .signature != null')" = true ]; }
report() {
        wait_until 60 "job $1: report with smart_after" after_taken "$1"
        wipectl --json report "$1"
}
SIZE=$((32 << 20))

# --- The real smartctl on a loop device --------------------------------------------------------
start_daemon
probe=$(wipectl --json probe "$L") || fail "probe $L"
[ "$(echo "$probe" | jq -r '.devices[0].smart.available')" = false ] || fail "probe: smart: $(echo "$probe" | jq -c '.devices[0].smart')"
[ "$(echo "$probe" | jq -r '.devices[0].smart.reason')" = "no SMART: loop device" ] ||
        fail "probe: smart reason: $(echo "$probe" | jq -c '.devices[0].smart')"
[ "$(echo "$probe" | jq -r '.devices[0].smart.passed')" = null ] || fail "probe: passed is not null"
wipectl probe "$L" > "$TEST_DIR/probe.txt" || fail "probe (text) $L"
grep -qE '^  Health: +no SMART \(loop device\)$' "$TEST_DIR/probe.txt" || { cat "$TEST_DIR/probe.txt" >&2; fail "probe text: no Health line"; }

id=$(wipectl --json wipe --yes --no-wait --method zero --verify none "$L" | jq -r '.jobs[0].job') || fail "submit"
[ "$(wipe_state=$(wait_job "$id"); echo "$wipe_state")" = done ] || fail "job $id did not end done"
st=$(wipectl --json status "$id") || fail "status $id"
[ "$(echo "$st" | jq -r '.jobs[0].smart_before.reason')" = "no SMART: loop device" ] ||
        fail "status: smart_before: $(echo "$st" | jq -c '.jobs[0].smart_before')"
rep=$(report "$id") || fail "report $id"
for k in smart_before smart_after; do
        [ "$(echo "$rep" | jq -r ".$k.available")" = false ] || fail "report: $k: $(echo "$rep" | jq -c ".$k")"
        [ "$(echo "$rep" | jq -r ".$k.reason")" = "no SMART: loop device" ] || fail "report: $k: $(echo "$rep" | jq -c ".$k")"
        [ "$(echo "$rep" | jq -r ".$k.tool")" = "smartctl 7.3" ] || [ "$(echo "$rep" | jq -r ".$k.tool")" != null ] ||
                fail "report: $k: no tool"
        [ "$(echo "$rep" | jq -r ".$k.checked_at | type")" = number ] || fail "report: $k: no checked_at"
done
# The snapshot after is taken once the job ended, not at its start.
[ "$(echo "$rep" | jq '.smart_after.checked_at >= .smart_before.checked_at')" = true ] || fail "smart_after before smart_before"
[ "$(echo "$rep" | jq -r '.smart_policy')" = flag ] || fail "report: smart_policy $(echo "$rep" | jq -r '.smart_policy')"
wipectl report "$id" > "$TEST_DIR/report.txt" || fail "report (text)"
grep -q '^  Health before: no SMART (loop device)$' "$TEST_DIR/report.txt" || { cat "$TEST_DIR/report.txt" >&2; fail "report text: Health before"; }
grep -q '^  Health after:  no SMART (loop device)$' "$TEST_DIR/report.txt" || fail "report text: Health after"
# The signed report still verifies with the new fields in it.
expect_exit 0 wipectl report --check "$STATE/reports/$id.json"
[ "$(jq -r '.smart_after.reason' "$STATE/reports/$id.json")" = "no SMART: loop device" ] || fail "report file: smart_after"
# A restart keeps both snapshots (the record).
stop_daemon || fail "daemon stop"
start_daemon
[ "$(wipectl --json report "$id" | jq -r '.smart_before.reason')" = "no SMART: loop device" ] || fail "smart_before lost at a restart"
[ "$(wipectl --json status "$id" | jq -r '.jobs[0].smart_before.reason')" = "no SMART: loop device" ] ||
        fail "status smart_before lost at a restart"
stop_daemon || fail "daemon stop"

# --- The fake smartctl ------------------------------------------------------------------------
MODE=$TEST_DIR/smart-mode
CALLS=$TEST_DIR/smart-calls
cat > "$TEST_DIR/smartctl" <<EOF
#!/bin/sh
FAKE_SMARTCTL_DEVICE='$L $L3' FAKE_SMARTCTL_MODE_FILE='$MODE' FAKE_SMARTCTL_LOG='$CALLS' \\
FAKE_SMARTCTL_SAMPLES='$top_srcdir/tests/unit/smart' exec /bin/sh '$top_srcdir/tests/helpers/fake-smartctl' "\$@"
EOF
chmod +x "$TEST_DIR/smartctl"
touch "$CALLS"
# with_config POLICY [TIMEOUT [SMARTCTL]]: the daemon (re)started with that configuration.
with_config() {
        printf 'smartctl = %s\nsmart-policy = %s\nsmart-timeout = %s\n' "${3:-$TEST_DIR/smartctl}" "$1" "${2:-30}" \
                > "$TEST_DIR/wiped.conf"
        stop_daemon || fail "daemon stop"
        start_daemon --config "$TEST_DIR/wiped.conf" --policy-dir none
}
fill() { head -c 4M /dev/urandom | dd of="$L" bs=1M oflag=direct conv=notrunc status=none || hard_error "fill $L"; }
zeroed() { cmp -s -n "$SIZE" "$L" /dev/zero; }
jobs_count() { wipectl --json list | jq '.jobs | length'; }

# A failing drive under refuse: refused, nothing written, no job.
echo ata-failing > "$MODE"
with_config refuse
[ "$(wipectl --json version | jq -r '.daemon | [.smartctl, .smart_policy, .smart_timeout_s] | join(" ")')" = \
  "$TEST_DIR/smartctl refuse 30" ] || fail "version: $(wipectl --json version | jq -c .daemon)"
fill
sum=$(sha256sum < "$L")
n=$(jobs_count)
expect_exit 5 wipectl wipe --yes --method zero --verify none "$L"
grep -q "failed its SMART health check" "$TEST_DIR/err" || fail "refusal message: $(cat "$TEST_DIR/err")"
grep -qF "$L" "$TEST_DIR/err" || fail "the refusal does not name the device: $(cat "$TEST_DIR/err")"
[ "$(sha256sum < "$L")" = "$sum" ] || fail "a refused submit wrote to the device"
[ "$(jobs_count)" = "$n" ] || fail "a refused submit left a job"
# A dry run meets the same refusal.
expect_exit 5 wipectl wipe --yes --dry-run --method zero "$L"
# The probe shows the failure.
wipectl probe "$L" > "$TEST_DIR/probe.txt" || fail "probe"
grep -qE '^  Health: +FAILED \(SMART overall-health\), 43482 power-on hours, 3016 reallocated, 128 pending' \
        "$TEST_DIR/probe.txt" || { cat "$TEST_DIR/probe.txt" >&2; fail "probe text: no failing Health line"; }
# A bay policy's job meets the same refusal (existing = wipe: the disk present at the start).
mkdir -p "$TEST_DIR/policies.d"
printf '%s\n' "backing-file = $TEST_DIR/pol-*.img" "method = zero" "settle = 0.5" "existing = wipe" \
        > "$TEST_DIR/policies.d/bay.conf"
sum3=$(sha256sum < "$L3")
stop_daemon || fail "daemon stop"
start_daemon --config "$TEST_DIR/wiped.conf" --policy-dir "$TEST_DIR/policies.d"
refused_by_policy() {
        wipectl --json policies | jq -e '[.policies[] | select(.name == "bay") | .events[].event |
                test("refused: .*failed its SMART health check")] | any' > /dev/null
}
wait_until 60 "policy bay refuses $L3 (failing drive, smart-policy = refuse)" refused_by_policy
[ "$(sha256sum < "$L3")" = "$sum3" ] || fail "the policy's refused job wrote to $L3"
[ "$(wipectl --json list | jq --arg d "$L3" '[.jobs[] | select(.node == $d)] | length')" = 0 ] || fail "a job on $L3"
with_config refuse
# A healthy drive under refuse is wiped.
echo ata-hdd > "$MODE"
id=$(wipectl --json wipe --yes --no-wait --method zero --verify none "$L" | jq -r '.jobs[0].job') || fail "submit (healthy)"
[ "$(wait_job "$id")" = done ] || fail "healthy drive: job $id not done"
rep=$(report "$id")
[ "$(echo "$rep" | jq -r '.smart_before.passed,.smart_before.power_on_hours,.smart_before.reallocated_sectors')" = \
  "$(printf 'true\n19402\n8')" ] || fail "healthy drive: smart_before $(echo "$rep" | jq -c .smart_before)"
[ "$(echo "$rep" | jq -r '.smart_policy')" = refuse ] || fail "smart_policy"

# Under flag: wiped, and the report says the drive failed, before and after.
echo ata-failing > "$MODE"
with_config flag
fill
id=$(wipectl --json wipe --yes --no-wait --method zero --verify none "$L" | jq -r '.jobs[0].job') || fail "submit (flag)"
[ "$(wait_job "$id")" = done ] || fail "flag: job $id not done"
zeroed || fail "flag: the device was not wiped"
rep=$(report "$id")
for k in smart_before smart_after; do
        [ "$(echo "$rep" | jq -r ".$k.available,.$k.passed,.$k.pending_sectors,.$k.offline_uncorrectable,.$k.temperature_c")" = \
          "$(printf 'true\nfalse\n128\n96\n39')" ] || fail "flag: $k: $(echo "$rep" | jq -c ".$k")"
done
[ "$(echo "$rep" | jq -r '.smart_policy')" = flag ] || fail "flag: smart_policy"
wipectl report "$id" > "$TEST_DIR/report.txt"
grep -q '^  Health before: FAILED (SMART overall-health), 43482 power-on hours' "$TEST_DIR/report.txt" ||
        { cat "$TEST_DIR/report.txt" >&2; fail "flag: report text"; }
grep -q "failed its SMART health check" "$TEST_DIR/daemon.log" || fail "flag: no warning logged"

# A smartctl that hangs is killed at smart-timeout (2 s); the job goes on and ends done.
echo hang > "$MODE"
with_config flag 2
fill
id=$(wipectl --json wipe --yes --no-wait --method zero --verify none "$L" | jq -r '.jobs[0].job') || fail "submit (hang)"
[ "$(wait_job "$id")" = done ] || fail "hang: job $id not done"
zeroed || fail "hang: the device was not wiped"
rep=$(report "$id")
for k in smart_before smart_after; do
        [ "$(echo "$rep" | jq -r ".$k.available,.$k.reason")" = "$(printf 'false\nsmartctl timed out')" ] ||
                fail "hang: $k: $(echo "$rep" | jq -c ".$k")"
done
pid=$(cat "$MODE.pid") || fail "the hanging fake did not run"
# Killed with its process group (it leads it: the daemon spawned it so, and the wrapper exec'd
# it): neither the script nor its sleep is left.
group_gone() { ! pgrep -g "$1" > /dev/null; }
wait_until 10 "the hanging smartctl's process group ($pid) is gone" group_gone "$pid"

# wipectl wipe returns once the job's signed report is written, which here waits for the
# snapshot after until smart-timeout: "wipectl wipe DEV && cat STATE/reports/N.json" holds.
fill
out=$(wipectl --json wipe --yes --method zero --verify none "$L") || fail "wipe (hang, waited) exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].job')
[ -f "$STATE/reports/$id.json" ] || fail "wipectl wipe returned before job $id's report was written"
[ "$(jq -r '.smart_after.reason' "$STATE/reports/$id.json")" = "smartctl timed out" ] ||
        fail "job $id: the report file lacks the snapshot after"
[ "$(wipectl --json status "$id" | jq -r '.jobs[0].report_pending')" = false ] || fail "job $id: report_pending"
# The main thread waits for smartctl at a submit: it keeps telling the service manager's watchdog
# that it is alive meanwhile (WatchdogSec=3min in wiped.service; here 4 s, told every 2 s), or a
# drive whose SMART hangs (several, in one tick of bay policies) would get the daemon killed with
# every wipe under way. A hang of 12 s must leave no gap of 8 s between two WATCHDOG=1.
socat -u UNIX-RECVFROM:"$TEST_DIR/notify",fork SYSTEM:'echo "$(date +%s.%N) $(cat)"' >> "$TEST_DIR/notify.log" 2>&1 &
register_pid $!
wait_until 10 "the notify socket" test -S "$TEST_DIR/notify"
printf 'smartctl = %s\nsmart-policy = flag\nsmart-timeout = 12\n' "$TEST_DIR/smartctl" > "$TEST_DIR/wiped.conf"
stop_daemon || fail "daemon stop"
NOTIFY_SOCKET=$TEST_DIR/notify WATCHDOG_USEC=4000000 start_daemon --config "$TEST_DIR/wiped.conf" --policy-dir none
id=$(wipectl --json wipe --yes --no-wait --method zero --verify none "$L" | jq -r '.jobs[0].job') || fail "submit (watchdog)"
[ "$(wait_job "$id")" = done ] || fail "watchdog: job $id not done"
gap=$(grep -a 'WATCHDOG=1' "$TEST_DIR/notify.log" | awk '{ if (p && $1 - p > m) m = $1 - p; p = $1 } END { print m + 0 }')
[ "$(grep -ac 'WATCHDOG=1' "$TEST_DIR/notify.log")" -ge 4 ] || fail "watchdog: too few WATCHDOG=1: $(cat "$TEST_DIR/notify.log")"
awk -v g="$gap" 'BEGIN { exit !(g < 8) }' || fail "watchdog: no WATCHDOG=1 for $gap s while smartctl hung at a submit"
with_config flag 2

# A probe of two devices runs both at once; the fake answers nothing for the second (empty
# output: unreadable) while the first hangs until smart-timeout.
probe=$(wipectl --json probe "$L" "$L2") || fail "probe of two devices"
[ "$(echo "$probe" | jq -r '.devices[0].smart.reason,.devices[1].smart.reason')" = \
  "$(printf 'smartctl timed out\nsmartctl output unreadable')" ] || fail "probe of two: $(echo "$probe" | jq -c '[.devices[].smart]')"

# A stop while the snapshot after is being taken: the report written at the stop lacks it; after
# the next start it is taken again and the report is written again, signed, with it.
n=$(wc -l < "$CALLS")
id=$(wipectl --json wipe --yes --no-wait --method zero --verify none "$L" | jq -r '.jobs[0].job') || fail "submit (stop)"
[ "$(wait_job "$id")" = done ] || fail "stop: job $id not done"
calls_at_least() { [ "$(wc -l < "$CALLS")" -ge "$1" ]; }
wait_until 60 "the snapshot after of job $id runs" calls_at_least $((n + 2))
stop_daemon || fail "daemon stop during the snapshot after"
echo ata-hdd > "$MODE"
start_daemon --config "$TEST_DIR/wiped.conf" --policy-dir none
rep=$(report "$id")
[ "$(echo "$rep" | jq -r '.smart_before.reason,.smart_after.passed,.smart_after.power_on_hours')" = \
  "$(printf 'smartctl timed out\ntrue\n19402')" ] || fail "stop: $(echo "$rep" | jq -c '[.smart_before,.smart_after]')"
file_after_passed() { [ "$(jq -r '.smart_after.passed' "$STATE/reports/$1.json")" = true ]; }
wait_until 30 "job $id: the report file holds smart_after" file_after_passed "$id"
expect_exit 0 wipectl report --check "$STATE/reports/$id.json"
[ "$(grep -c "job $id: .*report written" "$TEST_DIR/daemon.log")" = 2 ] || fail "stop: the report of job $id was not written twice"

# Garbage: unreadable.
echo garbage > "$MODE"
with_config flag
probe=$(wipectl --json probe "$L") || fail "probe (garbage)"
[ "$(echo "$probe" | jq -r '.devices[0].smart.reason')" = "smartctl output unreadable" ] ||
        fail "garbage: probe smart: $(echo "$probe" | jq -c '.devices[0].smart')"
id=$(wipectl --json wipe --yes --no-wait --method zero --verify none "$L" | jq -r '.jobs[0].job') || fail "submit (garbage)"
[ "$(wait_job "$id")" = done ] || fail "garbage: job $id not done"
[ "$(report "$id" | jq -r '.smart_before.reason')" = "smartctl output unreadable" ] || fail "garbage: smart_before"

# smartctl = none and smart-policy = ignore run nothing (even for a failing drive under refuse).
echo ata-failing > "$MODE"
calls=$(wc -l < "$CALLS")
with_config refuse 30 none
id=$(wipectl --json wipe --yes --no-wait --method zero --verify none "$L" | jq -r '.jobs[0].job') || fail "submit (none)"
[ "$(wait_job "$id")" = done ] || fail "none: job $id not done"
rep=$(report "$id")
[ "$(echo "$rep" | jq -r '.smart_before.reason,.smart_after.reason')" = \
  "$(printf 'SMART disabled by configuration\nSMART disabled by configuration')" ] || fail "none: $(echo "$rep" | jq -c .smart_before)"
[ "$(wipectl --json probe "$L" | jq -r '.devices[0].smart.reason')" = "SMART disabled by configuration" ] || fail "none: probe"
with_config ignore
id=$(wipectl --json wipe --yes --no-wait --method zero --verify none "$L" | jq -r '.jobs[0].job') || fail "submit (ignore)"
[ "$(wait_job "$id")" = done ] || fail "ignore: job $id not done"
rep=$(report "$id")
[ "$(echo "$rep" | jq -r '.smart_policy,.smart_before.passed')" = "$(printf 'ignore\nnull')" ] || fail "ignore: $(echo "$rep" | jq -c .smart_before)"
[ "$(wc -l < "$CALLS")" = "$calls" ] || fail "smartctl was run with smartctl = none or smart-policy = ignore"

# The fake was only ever asked about the test's own loop devices.
while read -r _ args; do
        case " $L $L2 $L3 " in *" ${args##* } "*) ;; *) fail "smartctl was run on ${args##* }" ;; esac
done < "$CALLS"
[ -s "$CALLS" ] || fail "the fake smartctl was never run"

stop_daemon || fail "daemon stop"
pass
