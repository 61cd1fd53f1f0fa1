#!/bin/bash
# The Ansible role of contrib/ansible against this host (local connection) and the test's own
# daemon: it writes wiped.conf (checked first); it wipes exactly the two loop devices its patterns
# name (a third stays untouched), waits, fetches the signed reports and checks them; --check, a
# play without wiped_confirm, a pattern matching nothing and a mounted device write nothing; a
# second run wipes nothing again; a run of two hosts in which one job is cancelled fails that host,
# naming it; --tags reports submits nothing; a job already running is waited for, and cancelled at
# wiped_timeout; wiped_skip_refused skips the mounted device; a device that changed after the
# selection is not wiped; a report changed on the host fails the play. The patterns are the exact paths
# losetup printed for the test's own devices.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

command -v ansible-playbook >/dev/null || skip "ansible-playbook missing (tools/install-deps installs ansible-core)"

role_dir=$top_srcdir/contrib/ansible/roles
[ -d "$role_dir/wiped" ] || hard_error "$role_dir/wiped missing"

# Everything Ansible keeps goes into the test's directory; plain, uncoloured logs.
mkdir -p "$TEST_DIR/ansible/tmp" "$TEST_DIR/ansible/remote" || hard_error "mkdir"
export ANSIBLE_HOME=$TEST_DIR/ansible ANSIBLE_LOCAL_TEMP=$TEST_DIR/ansible/tmp \
        ANSIBLE_REMOTE_TEMP=$TEST_DIR/ansible/remote ANSIBLE_CONFIG=$TEST_DIR/ansible/none.cfg \
        ANSIBLE_ROLES_PATH=$role_dir ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 \
        ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 \
        ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0 ANSIBLE_DEPRECATION_WARNINGS=0
# The role's action plugin is imported by this Python: no __pycache__ in the source tree.
export PYTHONDONTWRITEBYTECODE=1

# The sample playbook and the role parse.
ansible-playbook -i localhost, --syntax-check "$top_srcdir/contrib/ansible/wipe.yml" > "$TEST_DIR/syntax.log" 2>&1 ||
        { cat "$TEST_DIR/syntax.log" >&2; fail "ansible-playbook --syntax-check of contrib/ansible/wipe.yml"; }
if command -v ansible-lint >/dev/null; then
        # Its cache (ansible-compat) in the test directory as well.
        (cd "$top_srcdir/contrib/ansible" && XDG_CACHE_HOME=$TEST_DIR/cache ansible-lint --offline -q wipe.yml roles/wiped) > "$TEST_DIR/lint.log" 2>&1 ||
                { cat "$TEST_DIR/lint.log" >&2; fail "ansible-lint"; }
else
        note "ansible-lint missing: not linted"
fi

a=$(make_loop 16M)
b=$(make_loop 16M)
c=$(make_loop 16M)
# A fourth, mounted: the daemon refuses it.
d=$(make_loop 16M)
command -v mkfs.ext4 >/dev/null || hard_error "mkfs.ext4 missing"
mkfs.ext4 -q "$d" || hard_error "mkfs.ext4 $d"
mkdir -p "$TEST_DIR/mnt"
mount "$d" "$TEST_DIR/mnt" || skip "cannot mount ext4 here"
register_mount "$TEST_DIR/mnt"
for dev in "$a" "$b" "$c"; do
        dd if=/dev/urandom of="$dev" bs=1M count=16 oflag=direct status=none || hard_error "dd $dev"
done
start_daemon

devhash() { sha256sum < "$1" | cut -d' ' -f1; }
ha=$(devhash "$a"); hb=$(devhash "$b"); hc=$(devhash "$c")
jobs_count() { wipectl --json list --all | jq '.jobs | length'; }

cat > "$TEST_DIR/play.yml" <<PLAY
- name: Wipe the test's loop devices
  hosts: all
  gather_facts: false
  roles:
    - role: wiped
PLAY
reports=$TEST_DIR/reports
# play LOG EXTRA-VARS-JSON [ANSIBLE-OPTION...]: the role with the test's daemon, client and devices,
# on the hosts of $INVENTORY (default: localhost), all of them this machine.
play() {
        local log=$TEST_DIR/$1 extra=${2:-\{\}}
        shift 2
        jq -n --arg wipectl "$WIPECTL_BIN" --arg socket "$SOCK" --arg reports "$reports" \
                --arg a "$a" --arg b "$b" --argjson extra "$extra" '{
                        wiped_install: "none", wiped_wipectl: $wipectl, wiped_socket: $socket,
                        wiped_controller_wipectl: $wipectl, wiped_reports_dir: $reports,
                        wiped_devices: [$a, $b], wiped_method: "zero", wiped_verify: "last",
                        wiped_poll_interval: 1, wiped_timeout: 120} + $extra' > "$TEST_DIR/vars.json" ||
                hard_error "play $1: bad extra variables: $extra"
        ansible-playbook -i "${INVENTORY:-localhost,}" -c local "$TEST_DIR/play.yml" -e "@$TEST_DIR/vars.json" "$@" > "$log" 2>&1
}

# The configuration: written from wiped_config into the test's own file, checked by the test's
# daemon (--check-config) before it is installed; a bad key fails the play and leaves the file.
conffile=$TEST_DIR/etc/wiped.conf
confvars=$(jq -n --arg conf "$conffile" --arg wiped "$WIPED" \
        '{wiped_config_file: $conf, wiped_wiped: $wiped, wiped_service_enabled: false}')
play config.log "$(echo "$confvars" | jq '. + {wiped_config: {method: "zero", deny: ["/dev/nvme*", "/dev/sr*"]}}')" --tags configure ||
        { cat "$TEST_DIR/config.log" >&2; fail "the configure play failed"; }
grep -qx 'method = zero' "$conffile" && [ "$(grep -cx 'deny = /dev/nvme\*\|deny = /dev/sr\*' "$conffile")" = 2 ] ||
        { cat "$conffile" >&2; fail "wiped.conf does not hold wiped_config"; }
"$WIPED" --check-config --config "$conffile" 2>/dev/null | grep -qx 'method = zero' || fail "the daemon does not read method = zero from $conffile"
cp "$conffile" "$TEST_DIR/conf.before"
play config-bad.log "$(echo "$confvars" | jq '. + {wiped_config: {max_rate: "1M"}}')" --tags configure &&
        { cat "$TEST_DIR/config-bad.log" >&2; fail "a configuration with an unknown key was installed"; }
grep -q 'max_rate' "$TEST_DIR/config-bad.log" || { cat "$TEST_DIR/config-bad.log" >&2; fail "the failure does not name the bad key"; }
cmp -s "$conffile" "$TEST_DIR/conf.before" || fail "a configuration that does not check replaced $conffile"
# A new configuration (e.g. a deny list) is in force before anything is selected or submitted:
# the reload runs before the wipe's first task, not at the end of the play.
play config-wipe.log "$(echo "$confvars" | jq --arg a "$a" '. + {wiped_config: {method: "random"}, wiped_devices: [$a]}')" --check ||
        { cat "$TEST_DIR/config-wipe.log" >&2; fail "the check-mode play of a configuration and a wipe failed"; }
reload=$(grep -n 'RUNNING HANDLER \[wiped : Reload wiped\]' "$TEST_DIR/config-wipe.log" | head -n 1 | cut -d: -f1)
select=$(grep -n 'TASK \[wiped : Select the devices' "$TEST_DIR/config-wipe.log" | head -n 1 | cut -d: -f1)
[ -n "$reload" ] && [ -n "$select" ] && [ "$reload" -lt "$select" ] ||
        { cat "$TEST_DIR/config-wipe.log" >&2; fail "the daemon is reloaded with the new configuration only after the devices are selected"; }
cmp -s "$conffile" "$TEST_DIR/conf.before" || fail "--check changed $conffile"

# A pattern that matches nothing fails the host (and writes nothing).
play nomatch.log '{"wiped_confirm": true, "wiped_devices": ["/dev/disk/by-id/wiped-test-no-such-device"]}' &&
        { cat "$TEST_DIR/nomatch.log" >&2; fail "a play whose pattern matches nothing succeeded"; }
grep -q "no device that wiped would wipe matches" "$TEST_DIR/nomatch.log" || { cat "$TEST_DIR/nomatch.log" >&2; fail "no message for a pattern matching nothing"; }

# A matched device that the daemon refuses fails the host, with the daemon's reason, before anything
# is written; with wiped_skip_refused it would be skipped and listed.
play refused.log "$(jq -n --arg a "$a" --arg d "$d" '{wiped_confirm: true, wiped_devices: [$a, $d]}')" &&
        { cat "$TEST_DIR/refused.log" >&2; fail "a play with a mounted device succeeded"; }
grep -q "wiped refuses devices the patterns match.*$d: refusing: .*mounted" "$TEST_DIR/refused.log" ||
        { cat "$TEST_DIR/refused.log" >&2; fail "the refusal of the mounted $d is not named"; }
[ "$(jobs_count)" = 0 ] && [ "$(devhash "$a")" = "$ha" ] || fail "a play with a refused device wrote"

# --check: the plan (wipectl wipe --dry-run), nothing written, no job.
play check.log '{"wiped_confirm": true}' --check || { cat "$TEST_DIR/check.log" >&2; fail "--check run failed"; }
grep -q "$a: would wipe with zero" "$TEST_DIR/check.log" || { cat "$TEST_DIR/check.log" >&2; fail "--check shows no plan for $a"; }
[ "$(jobs_count)" = 0 ] || fail "--check started jobs"
[ "$(devhash "$a")" = "$ha" ] && [ "$(devhash "$b")" = "$hb" ] || fail "--check wrote to a device"

# Without wiped_confirm: refused, nothing written.
play noconfirm.log '{}' && { cat "$TEST_DIR/noconfirm.log" >&2; fail "a play without wiped_confirm succeeded"; }
grep -q "set wiped_confirm: true" "$TEST_DIR/noconfirm.log" || { cat "$TEST_DIR/noconfirm.log" >&2; fail "no confirmation message"; }
[ "$(jobs_count)" = 0 ] || fail "a play without wiped_confirm started jobs"

# A device that changes between the selection and the submit is not wiped: another drive that
# takes the node in a hot-swap bay while the play runs differs in its identity. Here a wipectl
# wrapper grows the loop device (its size is part of the identity) right after the selection's
# wipectl devices; the play must fail naming it and write nothing.
e=$(make_loop 16M)
efile=$(losetup -nO BACK-FILE "$e")
case $efile in "$TEST_DIR"/*) ;; *) hard_error "$e: backing file '$efile' is not the test's" ;; esac
dd if=/dev/urandom of="$e" bs=1M count=16 oflag=direct status=none || hard_error "dd $e"
he=$(devhash "$e")
cat > "$TEST_DIR/swap-wipectl" <<WRAP
#!/bin/bash
"$WIPECTL_BIN" "\$@"
rc=\$?
if [[ " \$* " == *" devices "* ]] && [ ! -e "$TEST_DIR/swapped" ]; then
        touch "$TEST_DIR/swapped"
        truncate -s 32M "$efile" && losetup -c "$e"
fi
exit \$rc
WRAP
chmod +x "$TEST_DIR/swap-wipectl"
play swap.log "$(jq -n --arg e "$e" --arg w "$TEST_DIR/swap-wipectl" '{wiped_confirm: true, wiped_devices: [$e], wiped_wipectl: $w}')" &&
        { cat "$TEST_DIR/swap.log" >&2; fail "a play whose device changed after the selection succeeded"; }
[ -e "$TEST_DIR/swapped" ] || { cat "$TEST_DIR/swap.log" >&2; hard_error "the wrapper did not change $e"; }
grep -q "$e: no longer the device that was selected" "$TEST_DIR/swap.log" || { cat "$TEST_DIR/swap.log" >&2; fail "the change of $e is not named"; }
[ "$(jobs_count)" = 0 ] && [ "$(head -c 16M "$e" | sha256sum | cut -d' ' -f1)" = "$he" ] || fail "$e, changed after the selection, was written"

# The wipe.
play wipe.log '{"wiped_confirm": true}' || { cat "$TEST_DIR/wipe.log" >&2; fail "the play failed"; }
grep -Eq "job [0-9]+ $a: (running|done)" "$TEST_DIR/wipe.log" || { cat "$TEST_DIR/wipe.log" >&2; fail "no progress line"; }
[ "$(jobs_count)" = 2 ] || fail "$(jobs_count) jobs, expected 2"
for dev in "$a" "$b"; do
        cmp -s "$dev" /dev/zero -n $((16 << 20)) || fail "$dev was not zeroed"
        grep -Eq "ok +localhost $dev job [0-9]+ done, report $reports/localhost/[0-9]+\.json, signature valid" "$TEST_DIR/wipe.log" ||
                { cat "$TEST_DIR/wipe.log" >&2; fail "the summary lacks $dev"; }
done
[ "$(devhash "$c")" = "$hc" ] || fail "$c, which no pattern names, changed"
[ -f "$reports/localhost/host-key.pub" ] || fail "the host key was not fetched"
n=0
for r in "$reports"/localhost/*.json; do
        "$WIPECTL_BIN" report --check "$r" --key "$reports/localhost/host-key.pub" > /dev/null ||
                fail "report --check $r failed"
        [ "$(jq -r .state "$r")" = "done" ] || fail "$r: state $(jq -r .state "$r")"
        n=$((n + 1))
done
[ "$n" = 2 ] || fail "$n reports fetched, expected 2"
# A report changed on the controller is found out by the play's check too: tested through wipectl
# itself (report --check exits 9), which the play calls.
sed 's/"done"/"done "/' "$r" > "$TEST_DIR/forged.json"
expect_exit 9 "$WIPECTL_BIN" report --check "$TEST_DIR/forged.json" --key "$reports/localhost/host-key.pub"

# Again: the devices are wiped already, nothing is submitted, the reports are checked again.
play again.log '{"wiped_confirm": true}' || { cat "$TEST_DIR/again.log" >&2; fail "the second play failed"; }
[ "$(jobs_count)" = 2 ] || fail "the second play started jobs"
grep -q "already wiped" "$TEST_DIR/again.log" || fail "the second play does not say the devices were wiped"
grep -Eq "changed=0 " "$TEST_DIR/again.log" || { cat "$TEST_DIR/again.log" >&2; fail "the second play changed something"; }

# Without wipectl on the controller the check cannot be made: the play fails and says so.
play noctl.log '{"wiped_confirm": true, "wiped_controller_wipectl": "/nonexistent/wipectl"}' &&
        { cat "$TEST_DIR/noctl.log" >&2; fail "the play succeeded without checking the reports"; }
grep -q "checking the reports needs wipectl on the controller" "$TEST_DIR/noctl.log" ||
        { cat "$TEST_DIR/noctl.log" >&2; fail "no message for a controller without wipectl"; }

# And in check mode: the jobs and reports are read, nothing is fetched, nothing written.
rm -rf "$reports"
play again-check.log '{"wiped_confirm": true}' --check || { cat "$TEST_DIR/again-check.log" >&2; fail "the check-mode play after the wipe failed"; }
grep -Eq "ok +localhost $a job [0-9]+ done \(earlier\), report .*, signature not checked" "$TEST_DIR/again-check.log" ||
        { cat "$TEST_DIR/again-check.log" >&2; fail "the check-mode summary lacks $a"; }
[ ! -e "$reports" ] || fail "check mode fetched reports"
[ "$(jobs_count)" = 2 ] || fail "check mode started jobs"

# Once more with wiped_rewipe, slowly (4 MB/s: 4 s a device), as two hosts (both this machine):
# host1 wipes $a, host2 $b. The test cancels the job on $a while the play waits: the play fails on
# host1, its summary names $a, and host2's wipe of $b ends done, its report in its own directory.
# (Each second of the wait is a status poll by each host, about a second of CPU each: at 2 MB/s
# this play took 21 s of CPU.)
printf 'host1\nhost2\n' > "$TEST_DIR/hosts"
INVENTORY=$TEST_DIR/hosts play cancel.log "$(jq -n --arg a "$a" --arg b "$b" '{wiped_confirm: true, wiped_rewipe: true,
        wiped_max_rate: "4M", test_devices: {host1: [$a], host2: [$b]},
        wiped_devices: "{{ test_devices[inventory_hostname] }}"}')" &
ppid=$!
register_pid "$ppid"
job=
for _ in $(seq 600); do
        job=$(wipectl --json list | jq -r --arg a "$a" '.jobs[] | select(.node == $a and .state == "running") | .job')
        [ -n "$job" ] && break
        sleep 0.1
done
[ -n "$job" ] || { cat "$TEST_DIR/cancel.log" >&2; fail "the third play started no job on $a"; }
wipectl cancel "$job" > /dev/null || fail "cancel $job"
wait "$ppid"
rc=$?
sed -i "/^$ppid\$/d" "$TEST_DIR/pids"
[ "$rc" != 0 ] || { cat "$TEST_DIR/cancel.log" >&2; fail "the play succeeded with a cancelled job"; }
grep -Eq "FAILED host1 $a job $job cancelled" "$TEST_DIR/cancel.log" || { cat "$TEST_DIR/cancel.log" >&2; fail "the summary does not name job $job on $a"; }
grep -Eq "1 device\(s\) on host1 not wiped: $a \(job $job\) cancelled" "$TEST_DIR/cancel.log" ||
        { cat "$TEST_DIR/cancel.log" >&2; fail "the failure does not name $a"; }
grep -Eq "ok +host2 $b job [0-9]+ done, report $reports/host2/[0-9]+\.json, signature valid" "$TEST_DIR/cancel.log" ||
        { cat "$TEST_DIR/cancel.log" >&2; fail "the summary lacks host2's $b done"; }
grep -Eq "^host1 +: .*failed=1 " "$TEST_DIR/cancel.log" && grep -Eq "^host2 +: .*failed=0 " "$TEST_DIR/cancel.log" ||
        { cat "$TEST_DIR/cancel.log" >&2; fail "the recap is not host1 failed, host2 ok"; }
"$WIPECTL_BIN" report --check "$reports/host1/$job.json" --key "$reports/host1/host-key.pub" > /dev/null ||
        fail "the cancelled job's report was not fetched or does not check"
[ "$(ls "$reports/host2"/*.json | wc -l)" = 1 ] || fail "host2's directory does not hold exactly its one report"
[ "$(devhash "$c")" = "$hc" ] || fail "$c, which no pattern names, changed"

# --tags reports submits nothing: it collects the reports of the matched devices' latest jobs, and
# fails for $a, whose latest job was cancelled.
n=$(jobs_count)
rm -rf "$reports"
play reports.log '{"wiped_confirm": true}' --tags reports &&
        { cat "$TEST_DIR/reports.log" >&2; fail "--tags reports succeeded with $a not wiped"; }
[ "$(jobs_count)" = "$n" ] || fail "--tags reports started a job"
grep -Eq "FAILED localhost $a job - not wiped" "$TEST_DIR/reports.log" &&
        grep -Eq "ok +localhost $b job [0-9]+ done \(earlier\), report $reports/localhost/[0-9]+\.json, signature valid" "$TEST_DIR/reports.log" ||
        { cat "$TEST_DIR/reports.log" >&2; fail "--tags reports: the summary is not $a not wiped, $b done"; }

# A job already running on a matched device (started by hand, 1 MB/s: 32 s of work) is waited for,
# not submitted again; the play's wiped_timeout (3 s) passes first, and with wiped_cancel_on_timeout
# the play cancels the job and fails, naming it.
job=$(wipectl --json wipe --yes --no-wait --method zero --verify last --max-rate 1M "$b" | jq -r '.jobs[0].job') ||
        fail "submit on $b"
n=$(jobs_count)
play timeout.log "$(jq -n --arg b "$b" '{wiped_confirm: true, wiped_devices: [$b], wiped_timeout: 3,
        wiped_cancel_on_timeout: true}')" &&
        { cat "$TEST_DIR/timeout.log" >&2; fail "the play succeeded past its timeout"; }
[ "$(jobs_count)" = "$n" ] || fail "the play submitted $b again while job $job ran"
grep -q "a job is running on: $b" "$TEST_DIR/timeout.log" || { cat "$TEST_DIR/timeout.log" >&2; fail "the play did not take job $job as running"; }
[ "$(job_field "$job" state)" = cancelled ] || fail "job $job on $b was not cancelled at the timeout: $(job_field "$job" state)"
grep -Eq "FAILED localhost $b job $job cancelled \(running already\)" "$TEST_DIR/timeout.log" ||
        { cat "$TEST_DIR/timeout.log" >&2; fail "the summary does not name job $job, cancelled at the timeout"; }

# wiped_skip_refused: the mounted device is skipped and listed, the other one wiped.
play skip.log "$(jq -n --arg a "$a" --arg d "$d" '{wiped_confirm: true, wiped_devices: [$a, $d], wiped_skip_refused: true}')" ||
        { cat "$TEST_DIR/skip.log" >&2; fail "the play with wiped_skip_refused failed"; }
grep -Eq "ok +localhost $a job [0-9]+ done, report" "$TEST_DIR/skip.log" &&
        grep -Eq "ok +localhost $d job - refused \(skipped\): $d: refusing: .*mounted" "$TEST_DIR/skip.log" ||
        { cat "$TEST_DIR/skip.log" >&2; fail "the summary is not $a done, $d refused and skipped"; }
mountpoint -q "$TEST_DIR/mnt" || fail "$d was unmounted"

# A report changed on the host after it was signed fails the play: the controller's check finds it.
job=$(wipectl --json list --all | jq -r --arg a "$a" '[.jobs[] | select(.node == $a and .state == "done")] | last | .job')
rfile=$(wipectl --json report "$job" | jq -r .report_file) || fail "wipectl report $job"
case $rfile in "$TEST_DIR"/*) ;; *) hard_error "job $job's report '$rfile' is not in the test's directory" ;; esac
sed -i 's/"done"/"done "/' "$rfile" || hard_error "sed $rfile"
rm -rf "$reports"
play tampered.log "$(jq -n --arg a "$a" '{wiped_confirm: true, wiped_devices: [$a]}')" --tags reports &&
        { cat "$TEST_DIR/tampered.log" >&2; fail "a play with a tampered report succeeded"; }
grep -Eq "FAILED localhost $a job $job .*signature (INVALID|no signed report)" "$TEST_DIR/tampered.log" ||
        { cat "$TEST_DIR/tampered.log" >&2; fail "the summary does not name job $job's tampered report"; }

pass
