#!/bin/bash
# The firmware erase methods (sanitize, sanitize-*, nvme-format, ata-secure-erase, purge) run by
# the real daemon against drives of the simulator (tests/sim) over loop devices of the test's
# own: each resolves into the drive's command with the parameters the report names, the drive's
# progress reaches status, the proof (markers written before, none left after, sampled extents
# changed) holds, and the device's bytes are what the drive left (checked here independently:
# every 4 KiB block differs from what was there). Refusals send nothing and change nothing;
# a drive that fails or stalls fails its job with the drive's status; purge falls back to a
# random pass (Clear) on a drive without firmware erase, or refuses by configuration. The daemon
# is SIGKILLed during a sanitize and follows it after its restart; at SIGTERM during one it waits
# for the step's thread, saves the job interrupted and follows it after; and a temporary ATA password
# left set by an interrupted security erase is removed on resume.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
for c in cmp python3 hdparm; do
        command -v $c >/dev/null || skip "$c missing"
done
[ -f "$DRIVESIM_SO" ] || hard_error "$DRIVESIM_SO not built"

SIZE=$((16 << 20))
NVME=$(make_loop $SIZE)         # every sanitize action, crypto format, estimates
NVMEF=$(make_loop $SIZE)        # Format NVM without crypto: SES 1, erase pattern zeros
NVMEFAIL=$(make_loop $SIZE)     # every sanitize fails
NVMESTUCK=$(make_loop $SIZE)    # a sanitize that stays at 10 %
NVMELONG=$(make_loop $SIZE)     # a sanitize long enough to kill the daemon under it
NVMELONG2=$(make_loop $SIZE)    # the same, after a random pass, done while the daemon is away
NVMETERM=$(make_loop $SIZE)     # a sanitize running when the daemon gets SIGTERM
NVMEPAUSE=$(make_loop $SIZE)    # a sanitize to pause, resume and cancel
ATA=$(make_loop $SIZE)          # security erase (enhanced) and sanitize
ATAFROZEN=$(make_loop $SIZE)    # security frozen
ATALONG=$(make_loop $SIZE)      # a security erase long enough to interrupt
ATALONG2=$(make_loop $SIZE)     # the same, left to end while the daemon is away
SCSI=$(make_loop $SIZE)         # SCSI SANITIZE block erase
PLAIN=$(make_loop $SIZE)        # a loop device the simulator does not know: no firmware erase
ATAHPA=$(make_loop $SIZE)       # a host protected area: native max 40000 sectors, 32768 visible
ATAHPA2=$(make_loop $SIZE)      # the same, for hidden-area = refuse
ATADCO=$(make_loop $SIZE)       # a device configuration overlay beyond the native max
cat > "$DRIVESIM_CONF" <<EOF
[$NVME]
type = nvme
serial = NVFW0001
sanitize = crypto block overwrite
fna = crypto
est_crypto = 2
est_block = 2
sanitize_seconds = 1
format_seconds = 0.5
[$NVMEF]
type = nvme
sanitize = none
format_seconds = 0.5
erase_pattern = 0
[$NVMEFAIL]
type = nvme
sanitize = block
sanitize_seconds = 1
sanitize_fail = yes
[$NVMESTUCK]
type = nvme
sanitize = crypto
est_crypto = 1
sanitize_stuck = yes
[$NVMELONG]
type = nvme
sanitize = block
est_block = 8
sanitize_seconds = 8
erase_pattern = 0
[$NVMELONG2]
type = nvme
sanitize = block
sanitize_seconds = 3
erase_pattern = 0
[$NVMETERM]
type = nvme
sanitize = block
sanitize_seconds = 4
erase_pattern = 0
[$NVMEPAUSE]
type = nvme
sanitize = crypto
sanitize_seconds = 5
[$ATA]
type = ata
security = yes
enhanced_erase = yes
erase_seconds = 1
enhanced_erase_seconds = 1
sanitize = block
sanitize_seconds = 1
hpa = no
[$ATAFROZEN]
type = ata
frozen = yes
sanitize = none
hpa = no
[$ATALONG]
type = ata
enhanced_erase = no
erase_seconds = 3
sanitize = none
hpa = no
erase_pattern = 0
[$ATAHPA]
type = ata
sanitize = none
native_sectors = 40000
[$ATAHPA2]
type = ata
sanitize = none
native_sectors = 40000
[$ATADCO]
type = ata
sanitize = none
dco_sectors = 50000
[$ATALONG2]
type = ata
enhanced_erase = no
erase_seconds = 3
sanitize = none
hpa = no
erase_pattern = 0
[$SCSI]
type = scsi
sanitize = block
sanitize_seconds = 1
erase_pattern = 0
EOF

# Fill a device with random data and keep a copy of what it held.
fill() {
        dd if=/dev/urandom of="$1" bs=1M count=$((SIZE >> 20)) oflag=direct status=none || hard_error "fill $1"
        dd if="$1" of="$TEST_DIR/before.${1#/dev/}" bs=1M iflag=direct status=none || hard_error "copy $1"
}
# Every 4 KiB block of the device differs from what it held before.
all_changed() {
        dd if="$1" of="$TEST_DIR/after" bs=1M iflag=direct status=none || fail "read $1"
        python3 - "$TEST_DIR/before.${1#/dev/}" "$TEST_DIR/after" <<'PY' || fail "$1: $2: blocks still hold their old data"
import sys
a, b = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read()
same = sum(1 for i in range(0, len(a), 4096) if a[i:i + 4096] == b[i:i + 4096])
if same:
    print(f"{same} of {len(a) // 4096} blocks unchanged", file=sys.stderr)
    sys.exit(1)
PY
}
# The report's firmware part of pass 1 (or of pass N).
fw_of() { wipectl --json report "$1" | jq -c '.passes[0].firmware'; }
fw_of_pass() { wipectl --json report "$1" | jq -c ".passes[$2].firmware"; }

start_daemon_sim

# The stalling sanitize starts first and runs beside what follows (its own drive; nothing below
# counts jobs): it fails only after 12 s without progress (twice the drive's estimate, and 10 s),
# which the test sat out on its own before. Its end is checked with the other failures.
out=$(wipectl --json wipe --yes --no-wait --method sanitize "$NVMESTUCK") || fail "stuck sanitize exited $?: $out"
stuck=$(echo "$out" | jq -r '.jobs[0].id')

# --- the methods are listed ---------------------------------------------------------------------
methods=$(wipectl --json methods) || fail "methods exited $?"
for m in sanitize sanitize-crypto sanitize-block sanitize-overwrite nvme-format ata-secure-erase purge; do
        jq_is "$methods" '.methods[] | select(.name == "'$m'") | .passes | join(",")' "$m" "method $m"
done

# --- probe: what each method would send to each drive, or why not ------------------------------
m=$(wipectl --json probe "$NVME" | jq -c .devices[0].erase.firmware.methods) || fail "probe $NVME"
jq_is "$m" '"\(.sanitize.command) \(.purge.command) \(."nvme-format".command) \(."ata-secure-erase".refused)"' \
        "sanitize-crypto sanitize-crypto nvme-format not an ATA drive" "probe methods of $NVME"
m=$(wipectl --json probe "$PLAIN" | jq -c .devices[0].erase.firmware.methods) || fail "probe $PLAIN"
jq_starts "$m" '.purge.refused' "the device answers no firmware erase command" "probe methods of $PLAIN"
wipectl probe "$NVME" | grep -qF "Methods:       sanitize-crypto, sanitize-block, sanitize-overwrite, nvme-format; purge sends sanitize-crypto" ||
        fail "probe text of $NVME: $(wipectl probe "$NVME")"
wipectl probe "$ATAFROZEN" | grep -qF "Methods:       none: purge writes its fallback" ||
        fail "probe text of $ATAFROZEN: $(wipectl probe "$ATAFROZEN")"

# --- sanitize on NVMe: the strongest action (crypto erase); Purge; proof; bytes all changed ----
fill "$NVME"
out=$(wipectl --json wipe --yes --method sanitize "$NVME") || fail "sanitize exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$out" '.jobs[0] | "\(.state) \(.pass_list | join(","))"' "done sanitize-crypto" "sanitize job $id"
all_changed "$NVME" "after sanitize (crypto)"
fw=$(fw_of "$id")
jq_is "$fw" '"\(.command.action) \(.command.command_set) \(.command.sanact) \(.command.ause) \(.command.all_namespaces)"' \
        "sanitize-crypto nvme 100b crypto erase false true" "sanitize command"
jq_is "$fw" '"\(.started) \(.drive_status) \(.proven) \(.markers) \(.markers_survived) \(.samples_unchanged) \(.returns)"' \
        "true done true 16 0 0 random-looking data" "sanitize proof"
jq_is "$fw" '.drive_status_text | test("^SSTAT 00.[19]h: completed")' true "sanitize drive status"
jq_is "$fw" '.command | has("temporary_password")' false "the report holds no password"
report=$(wipectl --json report "$id")
jq_is "$report" '"\(.nist_category) \(.caveat) \(.purge_fallback)"' "Purge null null" "sanitize report category"
# The sanitization record's summary of it (issue 20).
jq_is "$report" '.sanitization | "\(.category) \(.technique) \(.verification_method) \(.verification_result)"' \
        "Purge crypto erase firmware erase proof passed" "sanitize record"
jq_is "$report" '"\(.overall_status) \(.exceptions | length)"' "erased 0" "sanitize overall status"
grep -qF "job $id: $NVME: pass 1 of 1 (sanitize-crypto) done by the drive: none of 16 markers left" "$TEST_DIR/daemon.log" ||
        fail "no pass line for job $id in the log"
text=$(wipectl report "$id") || fail "report $id exited $?"
for want in "Firmware erase (pass 1): sanitize-crypto: Sanitize (NVMe 5.24)" "Parameters:  sanact 100b crypto erase, AUSE no" \
            "Proof:       16 of 16 markers gone; 32 of 32 sampled extents changed" "Standard:      NIST SP 800-88 Purge" \
            "Check:         none: what a firmware erase leaves is the drive's own"; do
        grep -qF "$want" <<< "$text" || fail "report $id text lacks '$want': $text"
done
# A later verification has no pattern to compare a firmware erase with.
expect_exit 1 wipectl verify "$id"
grep -qF "its last pass is a firmware erase (sanitize-crypto)" "$TEST_DIR/err" || fail "verify $id: $(cat "$TEST_DIR/err")"

# --- the explicit actions: overwrite reads back its pattern (zeros); block erase ---------------
fill "$NVME"
out=$(wipectl --json wipe --yes --method sanitize-overwrite "$NVME") || fail "sanitize-overwrite exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$out" '.jobs[0].state' done "sanitize-overwrite job"
cmp -n $SIZE "$NVME" /dev/zero || fail "$NVME does not read zeros after an overwrite sanitize of pattern 0"
jq_is "$(fw_of "$id")" '"\(.command.sanact) \(.command.overwrite_passes) \(.command.overwrite_pattern) \(.returns)"' \
        "011b overwrite 1 0x00000000 zeros" "sanitize-overwrite"

# --- nvme-format: crypto erase where the controller has it (SES 2), else user data (SES 1) -----
fill "$NVME"
out=$(wipectl --json wipe --yes --method nvme-format "$NVME") || fail "nvme-format exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$out" '.jobs[0].state' done "nvme-format (crypto) job"
all_changed "$NVME" "after format SES 2"
jq_is "$(fw_of "$id")" '"\(.command.ses) \(.command.ses_name) \(.returns)"' "2 cryptographic erase random-looking data" \
        "nvme-format SES 2"
fill "$NVMEF"
out=$(wipectl --json wipe --yes --method nvme-format "$NVMEF") || fail "nvme-format SES 1 exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$out" '.jobs[0].state' done "nvme-format (user data) job"
cmp -n $SIZE "$NVMEF" /dev/zero || fail "$NVMEF does not read zeros after a user data format"
jq_is "$(fw_of "$id")" '"\(.command.ses) \(.returns)"' "1 zeros" "nvme-format SES 1"
# sanitize on a controller without it is refused (exit 5), and nothing changed.
fill "$NVMEF"
expect_exit 5 wipectl wipe --yes --method sanitize "$NVMEF"
grep -q "refusing sanitize: the drive supports no sanitize action" "$TEST_DIR/err" ||
        fail "sanitize without one: $(cat "$TEST_DIR/err")"
cmp -n $SIZE "$NVMEF" "$TEST_DIR/before.${NVMEF#/dev/}" || fail "a refused sanitize changed $NVMEF"

# --- ATA security erase: enhanced; no password left afterwards ----------------------------------
fill "$ATA"
out=$(wipectl --json wipe --yes --method ata-secure-erase "$ATA") || fail "ata-secure-erase exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$out" '.jobs[0].state' done "ata-secure-erase job"
all_changed "$ATA" "after an enhanced security erase"
jq_is "$(fw_of "$id")" '"\(.command.enhanced) \(.command.password) \(.returns)"' \
        "true user, temporary, removed after random-looking data" "ata-secure-erase"
probe=$(wipectl --json probe "$ATA") || fail "probe $ATA exited $?"
jq_is "$probe" '.devices[0].erase.firmware.ata.security | "\(.enabled) \(.locked)"' "false false" \
        "security after the erase"
# sanitize on the same drive: block erase through ATA SANITIZE.
fill "$ATA"
out=$(wipectl --json wipe --yes --method sanitize "$ATA") || fail "ATA sanitize exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$out" '.jobs[0] | "\(.state) \(.pass_list | join(","))"' "done sanitize-block" "ATA sanitize job"
jq_is "$(fw_of "$id")" '"\(.command.feature) \(.command.failure_mode)"' "0012h BLOCK ERASE EXT false" "ATA sanitize"
# Frozen: refused with the reason, nothing sent, nothing changed.
fill "$ATAFROZEN"
expect_exit 5 wipectl wipe --yes --method ata-secure-erase "$ATAFROZEN"
grep -qi "frozen" "$TEST_DIR/err" || fail "frozen security erase: $(cat "$TEST_DIR/err")"
cmp -n $SIZE "$ATAFROZEN" "$TEST_DIR/before.${ATAFROZEN#/dev/}" || fail "a refused security erase changed $ATAFROZEN"
expect_exit 5 wipectl wipe --yes --method nvme-format "$ATA"
grep -qF "nvme-format: not an NVMe drive" "$TEST_DIR/err" || fail "nvme-format on ATA: $(cat "$TEST_DIR/err")"

# --- SCSI SANITIZE, in a pass list after a random pass ------------------------------------------
fill "$SCSI"
out=$(wipectl --json wipe --yes --passes random,sanitize-block --verify all "$SCSI") || fail "SCSI exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$out" '.jobs[0] | "\(.state) \(.pass_list | join(","))"' "done random,sanitize-block" "SCSI job"
cmp -n $SIZE "$SCSI" /dev/zero || fail "$SCSI does not read zeros after a block erase (pattern 0)"
report=$(wipectl --json report "$id")
jq_is "$report" '"\(.passes[0].verified.result) \(.passes[1].firmware.command.service_action) \(.passes[1].firmware.returns) \(.nist_category)"' \
        "passed 02h BLOCK ERASE zeros Purge" "SCSI report"
jq_is "$report" '.sanitization | "\(.category) \(.technique) \(.verification_method)"' \
        "Purge block erase firmware erase proof" "SCSI record"

# --- failures: the drive's word in the job's error ----------------------------------------------
out=$(wipectl --json wipe --yes --method sanitize-block "$NVMEFAIL")
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$out" '.jobs[0].state' failed "failing sanitize job"
jq_starts "$out" '.jobs[0].error.message' "$NVMEFAIL: the drive reports that sanitize-block failed: SSTAT 0003h" \
        "failing sanitize"
out=$(wipectl --json wait "$stuck")
jq_is "$out" '.jobs[0].state' failed "stuck sanitize job"
jq_starts "$out" '.jobs[0].error.message' "$NVMESTUCK: sanitize-crypto made no progress for" "stuck sanitize"

# --- purge: the strongest firmware erase; the fallback on a drive without any --------------------
fill "$PLAIN"
out=$(wipectl --json wipe --yes --method purge "$PLAIN") || fail "purge on a plain loop device exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$out" '.jobs[0] | "\(.state) \(.pass_list | join(","))"' "done random" "purge fallback job"
report=$(wipectl --json report "$id")
jq_is "$report" '.nist_category' Clear "purge fallback category"
jq_starts "$report" '.purge_fallback' "the device answers no firmware erase command" "purge fallback"
jq_is "$report" '"\(.sanitization.category) \(.sanitization.technique) \(.overall_status)"' \
        "Clear overwrite erased with exceptions" "purge fallback record"
jq_starts "$report" '.exceptions[-1]' "purge fell back to Clear: the device answers no firmware erase command" \
        "purge fallback exception"
expect_exit 5 wipectl wipe --yes --method sanitize "$PLAIN"
fill "$NVMEF"
out=$(wipectl --json wipe --yes --method purge "$NVMEF") || fail "purge on NVMe exited $?: $out"
jq_is "$out" '.jobs[0] | "\(.state) \(.pass_list | join(","))"' "done nvme-format" "purge on a drive with format only"

# --- hidden areas: a host protected area is restored before the wipe, and recorded ----------------
hidden=$(wipectl --json probe "$ATAHPA" | jq -r '.devices[0].erase.firmware.ata.hidden_area.hpa_hidden_sectors')
[ "$hidden" = $((40000 - SIZE / 512)) ] || fail "probe: $ATAHPA hides '$hidden' sectors"
out=$(wipectl --json wipe --yes --method zero "$ATAHPA") || fail "zero wipe of $ATAHPA exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
h=$(wipectl --json report "$id" | jq -c .hidden_area)
jq_is "$h" '"\(.action) \(.current_max_sectors) \(.native_max_sectors) \(.size_before)"' "restored $((SIZE / 512)) 40000 $SIZE" \
        "hidden area of job $id"
# The simulator changes what IDENTIFY says, not the loop device's size: the report says so.
jq_starts "$h" .note "the kernel sees $SIZE bytes, not the $((40000 * 512)) the drive has now" "hidden area note"
hidden=$(wipectl --json probe "$ATAHPA" | jq -r '.devices[0].erase.firmware.ata.hidden_area.hpa_hidden_sectors')
[ "$hidden" = 0 ] || fail "probe after the restore: $ATAHPA still hides '$hidden' sectors"
grep -qF "$ATAHPA: a host protected area of $((40000 - SIZE / 512)) sectors restored" "$TEST_DIR/daemon.log" ||
        fail "the restore is not in the log"
wipectl report "$id" | grep -qF "Hidden area:   a host protected area of $((40000 - SIZE / 512)) sectors: restored" ||
        fail "report $id text: $(wipectl report "$id")"
# A submit refused for another of its devices restores no hidden area (all or nothing).
expect_exit 5 wipectl wipe --yes --method zero "$ATAHPA2" "$TEST_DIR"
hidden=$(wipectl --json probe "$ATAHPA2" | jq -r '.devices[0].erase.firmware.ata.hidden_area.hpa_hidden_sectors')
[ "$hidden" = $((40000 - SIZE / 512)) ] || fail "a refused submit changed the hidden area of $ATAHPA2: '$hidden' sectors hidden"
# A device configuration overlay is removed (DEVICE CONFIGURATION RESTORE) the same way.
hidden=$(wipectl --json probe "$ATADCO" | jq -r '.devices[0].erase.firmware.ata.hidden_area.dco_hidden_sectors')
[ "$hidden" = $((50000 - SIZE / 512)) ] || fail "probe: $ATADCO's overlay hides '$hidden' sectors"
out=$(wipectl --json wipe --yes --method zero "$ATADCO") || fail "zero wipe of $ATADCO exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
jq_is "$(wipectl --json report "$id" | jq -c .hidden_area)" '"\(.action) \(.native_max_sectors) \(.dco_max_sectors)"' \
        "restored $((SIZE / 512)) 50000" "DCO of job $id"
hidden=$(wipectl --json probe "$ATADCO" | jq -r '.devices[0].erase.firmware.ata.hidden_area.hidden_sectors')
[ "$hidden" = 0 ] || fail "probe after DEVICE CONFIGURATION RESTORE: $ATADCO still hides '$hidden' sectors"
grep -qF "$ATADCO: a device configuration overlay of $((50000 - SIZE / 512)) sectors restored" "$TEST_DIR/daemon.log" ||
        fail "the DCO restore is not in the log"

# --- the daemon killed during a sanitize: the restarted one follows it to its end ----------------
fill "$NVMELONG"
out=$(wipectl --json wipe --yes --no-wait --method sanitize "$NVMELONG") || fail "long sanitize exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
drive_running() { [ "$(wipectl --json status "$id" | jq -r '.jobs[0].firmware.drive_status')" = running ]; }
wait_until 20 "job $id: the drive's sanitize seen running" drive_running
jq_is "$(wipectl --json status "$id")" '.jobs[0].phase' firmware "status of a running firmware step"
wipectl status "$id" | grep -qF "firmware 1/1" || fail "status text of a running firmware step: $(wipectl status "$id")"
kill_daemon
jq -e '.passes[0].firmware.started' "$STATE/jobs/$id.json" >/dev/null || fail "the record does not say the sanitize started"
start_daemon_sim
state=$(wait_state "$id" 'running|done|failed' 20) || fail "job $id not resumed: $state"
[ "$(wait_job "$id" 60)" = done ] || fail "job $id after the restart: $(wipectl --json status "$id")"
cmp -n $SIZE "$NVMELONG" /dev/zero || fail "$NVMELONG does not read zeros after the followed sanitize"
fw=$(fw_of "$id")
jq_starts "$fw" '.resume_note' "resumed: the drive's sanitize-block is still running: followed, not sent again" \
        "resumed sanitize"
jq_is "$fw" '"\(.proven) \(.markers_survived)"' "true 0" "resumed sanitize proof"
jq_is "$(wipectl --json report "$id")" '.interruptions' 1 "interruptions"

# A random pass, then a sanitize that ends while the daemon is away: the resume reads nothing back
# against the random pass (the markers and the drive changed it), asks the drive, and proves it.
fill "$NVMELONG2"
out=$(wipectl --json wipe --yes --no-wait --passes random,sanitize-block "$NVMELONG2") || fail "random,sanitize exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
wait_until 20 "job $id: the drive's sanitize seen running" drive_running
kill_daemon
sleep 4                        # the drive's 3 s pass, while nobody asks
start_daemon_sim
state=$(wait_state "$id" 'running|done|failed' 20) || fail "job $id not resumed: $state"
[ "$(wait_job "$id" 60)" = done ] || fail "job $id after the restart: $(wipectl --json status "$id")"
jq_starts "$(fw_of_pass "$id" 1)" '.resume_note' "resumed: the drive's sanitize-block completed while the daemon was away" \
        "sanitize done while away"
cmp -n $SIZE "$NVMELONG2" /dev/zero || fail "$NVMELONG2 does not read zeros after the sanitize"
grep -qF "job $id: $NVMELONG2: resumed at a firmware erase: nothing read back before it" "$TEST_DIR/daemon.log" ||
        fail "job $id: the resume check ran against the random pass"

# SIGTERM during a sanitize: the daemon waits for the step's thread (which leaves the sanitize to the
# drive at once) before it frees what the thread uses, exits 0 with the job saved interrupted, and
# the next start follows the sanitize to its end. Without that wait, ASan saw the thread use the
# freed pool (57b6986); this is the test that makes the shutdown meet a running step.
fill "$NVMETERM"
out=$(wipectl --json wipe --yes --no-wait --method sanitize "$NVMETERM") || fail "sanitize to stop exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
wait_until 20 "job $id: the drive's sanitize seen running" drive_running
stop_daemon || fail "the daemon exited $? on SIGTERM during a sanitize"
grep -qF "waiting for 1 firmware erase step to return" "$TEST_DIR/daemon.log" ||
        fail "the daemon did not wait for the firmware step at SIGTERM"
[ "$(jq -r .state "$STATE/jobs/$id.json")" = interrupted ] || fail "job $id after SIGTERM: $(jq -c '{state}' "$STATE/jobs/$id.json")"
start_daemon_sim
state=$(wait_state "$id" 'running|done|failed' 20) || fail "job $id not resumed after SIGTERM: $state"
[ "$(wait_job "$id" 60)" = done ] || fail "job $id after SIGTERM and a restart: $(wipectl --json status "$id")"
cmp -n $SIZE "$NVMETERM" /dev/zero || fail "$NVMETERM does not read zeros after the sanitize stopped at SIGTERM"
jq_is "$(fw_of "$id")" '.proven' true "sanitize stopped at SIGTERM, followed after the restart"

# A sanitize, then a random pass interrupted half-way: the resume check knows nothing of what the
# sanitize left where the random pass has not been, and checks only what it wrote.
fill "$NVME"
out=$(wipectl --json wipe --yes --no-wait --passes sanitize-crypto,random --verify last --max-rate 4M "$NVME") ||
        fail "sanitize,random exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
wait_bytes "$id" $((SIZE + SIZE / 4)) 60 || fail "job $id: the random pass did not get going"
kill_daemon
start_daemon_sim
state=$(wait_state "$id" 'running|done|failed' 20) || fail "job $id not resumed: $state"
[ "$(wait_job "$id" 60)" = done ] || fail "job $id after the restart: $(wipectl --json status "$id")"
jq_is "$(wipectl --json report "$id")" '"\(.passes[1].verified.result) \(.nist_category)"' "passed Purge" "sanitize,random"

# Pause during a sanitize: the step stops following at once (the drive goes on), resume follows
# it again; cancel during one ends the job cancelled, and the log says the drive goes on.
fill "$NVMEPAUSE"
out=$(wipectl --json wipe --yes --no-wait --method sanitize "$NVMEPAUSE") || fail "pause sanitize exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
wait_until 20 "job $id: the drive's sanitize seen running" drive_running
out=$(wipectl --json pause "$id") || fail "pause $id exited $?: $out"
[ "$(job_field "$id" state)" = paused ] || fail "job $id after pause: $(job_field "$id" state)"
grep -qF "job $id: $NVMEPAUSE: stopped while the drive's sanitize-crypto runs: it goes on in the drive" \
        "$TEST_DIR/daemon.log" || fail "job $id: the pause does not say the drive goes on"
wipectl resume "$id" >/dev/null || fail "resume $id exited $?"
[ "$(wait_job "$id" 60)" = done ] || fail "job $id after resume: $(wipectl --json status "$id")"
jq_is "$(fw_of "$id")" '"\(.proven) \(.markers_survived) \(.resume_note | test("^resumed: the drive.s sanitize-crypto"))"' \
        "true 0 true" "paused and resumed sanitize"
all_changed "$NVMEPAUSE" "after a paused and resumed sanitize"
out=$(wipectl --json wipe --yes --no-wait --method sanitize "$NVMEPAUSE") || fail "cancel sanitize exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
wait_until 20 "job $id: the drive's sanitize seen running" drive_running
wipectl cancel "$id" >/dev/null || fail "cancel $id exited $?"
[ "$(wait_job "$id" 20)" = cancelled ] || fail "job $id after cancel: $(job_field "$id" state)"
grep -qF "job $id: $NVMEPAUSE: stopped while the drive's sanitize-crypto runs" "$TEST_DIR/daemon.log" ||
        fail "job $id: the cancel does not say the drive goes on"
jq_is "$(wipectl --json report "$id")" '"\(.nist_category) \(.passes[0].firmware.started) \(.passes[0].firmware.proven)"' \
        "Clear true false" "cancelled sanitize's report"

# --- an ATA password left set by an interrupted security erase is removed on resume --------------
# The daemon is killed during the erase. A drive that loses power during SECURITY ERASE UNIT comes
# back with the user password still set (and locked); the simulator has no power loss, so once
# its erase is over the test sets the job's own temporary password again (hdparm, with the
# simulator): the state such an interruption leaves. The restarted daemon removes it, says so,
# and erases again.
fill "$ATALONG"
stop_daemon
printf 'purge-fallback = refuse\nhidden-area = refuse\n' > "$TEST_DIR/refuse.conf"
start_daemon_sim --config "$TEST_DIR/refuse.conf"
expect_exit 5 wipectl wipe --yes --method purge "$PLAIN"
grep -qF "refusing purge" "$TEST_DIR/err" || fail "purge with purge-fallback = refuse: $(cat "$TEST_DIR/err")"
expect_exit 5 wipectl wipe --yes --method zero "$ATAHPA2"
grep -qF "$ATAHPA2: refusing: a host protected area hides $((40000 - SIZE / 512)) sectors" "$TEST_DIR/err" ||
        fail "hidden-area = refuse: $(cat "$TEST_DIR/err")"
out=$(wipectl --json wipe --yes --no-wait --method ata-secure-erase "$ATALONG") || fail "ATALONG erase exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
# Started as the record on disk says it (it is written before the first command is sent).
fw_recorded() { jq -e '.passes[0].firmware.started' "$STATE/jobs/$id.json" >/dev/null 2>&1; }
wait_until 20 "job $id: the security erase recorded as started" fw_recorded
kill_daemon
pw=$(jq -r '.passes[0].firmware.command.temporary_password' "$STATE/jobs/$id.json")
[[ $pw == wiped-* ]] || fail "the record holds no temporary password: $pw"
jq -e '.passes[0].firmware.started' "$STATE/jobs/$id.json" >/dev/null || fail "the record does not say the erase started"
# hdparm waits for the drive's erase to end, then sets the password as a power loss would leave it.
with_drivesim hdparm --user-master u --security-set-pass "$pw" "$ATALONG" >/dev/null 2>&1 ||
        hard_error "hdparm could not set the password"
with_drivesim hdparm -I "$ATALONG" 2>/dev/null | grep -qE '^\s+enabled' || hard_error "the password is not set"
start_daemon_sim --config "$TEST_DIR/refuse.conf"
state=$(wait_state "$id" 'running|done|failed' 20) || fail "job $id not resumed: $state"
[ "$(wait_job "$id" 60)" = done ] || fail "job $id after the restart: $(wipectl --json status "$id")"
jq_starts "$(fw_of "$id")" '.resume_note' \
        "resumed: the interrupted security erase had left its temporary user password set; removed" "password cleanup"
with_drivesim hdparm -I "$ATALONG" 2>/dev/null | grep -qE '^\s+not\s+enabled' ||
        fail "security still enabled after the resume: $(with_drivesim hdparm -I "$ATALONG" 2>&1 | grep -A8 Security)"
cmp -n $SIZE "$ATALONG" /dev/zero || fail "$ATALONG does not read zeros after the normal security erase"
grep -qF "job $id: $ATALONG: resumed: the interrupted security erase had left its temporary user password set" \
        "$TEST_DIR/daemon.log" || fail "the password's removal is not in the log"

# The same interruption, but the erase ends while the daemon is away (no password is left): the
# resume finds the markers gone and does not erase again. (Should the kill come between the
# record and SET PASSWORD, the markers are all there and the erase is sent again: both end done.)
fill "$ATALONG2"
out=$(wipectl --json wipe --yes --no-wait --method ata-secure-erase "$ATALONG2") || fail "ATALONG2 erase exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].id')
wait_until 20 "job $id: the security erase recorded as started" fw_recorded
wait_match "$TEST_DIR/daemon.log" "job $id: $ATALONG2: sending ata-secure-erase" 20 || fail "job $id: nothing sent"
sleep 0.5
kill_daemon
with_drivesim hdparm -I "$ATALONG2" 2>/dev/null | grep -qE '^\s+not\s+enabled' ||
        hard_error "security still enabled after the drive's erase"
start_daemon_sim --config "$TEST_DIR/refuse.conf"
state=$(wait_state "$id" 'running|done|failed' 20) || fail "job $id not resumed: $state"
[ "$(wait_job "$id" 60)" = done ] || fail "job $id after the restart: $(wipectl --json status "$id")"
note=$(fw_of "$id" | jq -r .resume_note)
case $note in
"resumed: no password is set on the drive and the markers are gone: the security erase completed"*) ;;
"resumed: no password is set on the drive and the markers are still there: the security erase is sent again")
        note "job $id: killed before SET PASSWORD reached the drive: sent again" ;;
*) fail "job $id: resume note '$note'" ;;
esac
cmp -n $SIZE "$ATALONG2" /dev/zero || fail "$ATALONG2 does not read zeros after the security erase"

stop_daemon || fail "the daemon exited $? on SIGTERM"
pass
