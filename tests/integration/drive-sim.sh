#!/bin/bash
# The drive simulator (tests/sim) checked against the real tools rather than against our own
# code: nvme-cli, hdparm and sg3_utils, run with the simulator preloaded over loop devices of the
# test's own, see the drives the specifications describe (identify data, logs, state machines,
# progress over time, refusals, injected failures), and every completed erase leaves the loop
# device's bytes as the drive would (zeros, a pattern, or not the old data). A process killed
# during a sanitize leaves it running: the next process finds it progressing, then done. Last,
# wiped itself runs with the simulator (start_daemon_sim), is SIGKILLed during a sanitize and
# restarted, and its probe finds each drive's command set.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
for c in nvme hdparm sg_inq sg_vpd sg_opcodes sg_sanitize sg_requests sg_turs cmp od; do
        command -v $c >/dev/null || skip "$c missing (tools/install-deps installs nvme-cli, hdparm, sg3-utils)"
done
[ -f "$DRIVESIM_SO" ] || hard_error "$DRIVESIM_SO not built"

SIZE=16M
NVME=$(make_loop $SIZE)         # NVMe: every sanitize action, crypto format
NVME2=$(make_loop $SIZE)        # NVMe: block erase and overwrite only, no crypto format, sanitize fails
ATA=$(make_loop $SIZE)          # ATA: security, sanitize, an HPA
ATA2=$(make_loop $SIZE)         # ATA: locked with a password the test does not give
ATA3=$(make_loop $SIZE)         # ATA: frozen; its sanitize never progresses
SCSI=$(make_loop $SIZE)         # SCSI: block and crypto erase; a long sanitize for the restart
SCSI2=$(make_loop $SIZE)        # SCSI: sanitize fails
SCSI4=$(make_loop $SIZE)        # SCSI: overwrite only
# Drives whose sanitize never ends: what holds while one runs is checked there, with no race
# against the clock (the machine may be slow at any moment).
NVME3=$(make_loop $SIZE)
SCSI3=$(make_loop $SIZE)
cat > "$DRIVESIM_CONF" <<EOF
[$NVME]
type = nvme
model = SIMNVME
serial = NV0001
sanitize = crypto block overwrite
fna = crypto
est_block = 10
est_crypto = 2
sanitize_seconds = 2
[$NVME2]
type = nvme
sanitize = block overwrite
sanitize_seconds = 1
sanitize_fail = yes
[$ATA]
type = ata
model = SIMATA
erase_seconds = 1
enhanced_erase_seconds = 1
sanitize_seconds = 2
native_sectors = 40000
[$ATA2]
type = ata
user_password = notgiven
locked = yes
[$ATA3]
type = ata
frozen = yes
sanitize_stuck = yes
[$SCSI]
type = scsi
vendor = SIMVEND
model = SIMSCSI
sanitize = block crypto
sanitize_seconds = 10
[$SCSI2]
type = scsi
sanitize = block
sanitize_seconds = 1
sanitize_fail = yes
[$SCSI4]
type = scsi
sanitize = overwrite
sanitize_seconds = 1
[$NVME3]
type = nvme
sanitize_stuck = yes
[$SCSI3]
type = scsi
sanitize_stuck = yes
EOF

sim() { with_drivesim "$@"; }
# fill DEV: random bytes over all of DEV; prints their SHA-256.
fill() {
        dd if=/dev/urandom of="$1" bs=1M iflag=fullblock count=16 oflag=direct status=none || hard_error "cannot fill $1"
        dev_sha256 "$1"
}
# is_byte DEV OCTAL: every byte of DEV is the byte \OCTAL.
is_byte() { head -c $SIZE /dev/zero | tr '\0' "\\$2" | cmp -s - "$1"; }
# random_looking DEV OLD_SHA: DEV holds neither what it held nor zeros, and its first sectors vary.
random_looking() {
        [ "$(dev_sha256 "$1")" != "$2" ] || return 1
        is_byte "$1" 000 && return 1
        [ "$(od -An -tx1 -N4096 -v "$1" | tr -s ' ' '\n' | sort -u | wc -l)" -gt 200 ]
}
# expect OUT REGEX WHAT: fail unless OUT has a line matching the extended REGEX.
expect() { grep -Eq -- "$2" <<< "$1" || fail "$3: no line matching '$2' in: $1"; }
# wait_for SECONDS COMMAND...: until COMMAND succeeds; 1 on timeout.
wait_for() {
        local limit=$1
        shift
        for _ in $(seq $((limit * 10))); do "$@" && return 0; sleep 0.1; done
        return 1
}

# --- NVMe (NVMe Base Specification 2.0) ---
out=$(sim nvme id-ctrl "$NVME") || fail "nvme id-ctrl: $out"
expect "$out" '^mn +: SIMNVME' "id-ctrl model"
expect "$out" '^sn +: NV0001' "id-ctrl serial"
expect "$out" '^oacs +: 0x2$' "id-ctrl OACS (Format NVM)"
expect "$out" '^sanicap +: 0x7$' "id-ctrl SANICAP (crypto, block, overwrite)"
expect "$out" '^fna +: 0x4$' "id-ctrl FNA (crypto erase)"
expect "$out" '^nn +: 1$' "id-ctrl NN"
out=$(sim nvme id-ctrl "$NVME2") || fail "nvme id-ctrl: $out"
expect "$out" '^sanicap +: 0x6$' "id-ctrl SANICAP of $NVME2"
out=$(sim nvme id-ns "$NVME") || fail "nvme id-ns: $out"
expect "$out" '^nsze +: 0x8000$' "id-ns NSZE (16 MiB of 512-byte blocks)"
expect "$out" 'lbaf +0 : ms:0 +lbads:9 .*in use' "id-ns LBA format 0"
out=$(sim nvme sanitize-log "$NVME") || fail "nvme sanitize-log: $out"
expect "$out" '\(SPROG\) : +65535' "sanitize log before any sanitize"
expect "$out" '\(SSTAT\) : +0$' "sanitize log: never sanitized"
expect "$out" 'Block Erase +: +10$' "sanitize log: block erase estimate"
expect "$out" 'Crypto Erase +: +2$' "sanitize log: crypto erase estimate"
expect "$out" 'For Overwrite +: +4294967295' "sanitize log: no overwrite estimate"

# While a sanitize runs (one that never ends): in progress, other sanitizes and formats refused.
sim nvme sanitize --sanact=2 "$NVME3" > /dev/null || fail "nvme sanitize block erase refused"
out=$(sim nvme sanitize-log "$NVME3")
expect "$out" '\(SSTAT\) : +0x2' "sanitize log: in progress"
expect "$out" '\(SPROG\) : +6554$' "sanitize log: the stuck sanitize's progress"
out=$(sim nvme sanitize --sanact=4 "$NVME3" 2>&1) && fail "a second sanitize while one runs was taken"
expect "$out" 'Sanitize In Progress' "sanitize during a sanitize"
out=$(sim nvme format --ses=1 --force "$NVME3" 2>&1) && fail "a format while a sanitize runs was taken"
expect "$out" 'Sanitize In Progress' "format during a sanitize"

# Block erase: done, the device zeros.
fill "$NVME" > /dev/null
sim nvme sanitize --sanact=2 "$NVME" > /dev/null || fail "nvme sanitize block erase refused"
log_done() { sim nvme sanitize-log "$1" | grep -Eq '\(SSTAT\) : +0x1'; }
wait_for 60 log_done "$NVME" || fail "block erase never completed: $(sim nvme sanitize-log "$NVME")"
out=$(sim nvme sanitize-log "$NVME")
expect "$out" '\(SPROG\) : +65535' "sanitize log after the sanitize"
expect "$out" '\(SCDW10\) : +0x2' "sanitize log: SCDW10 of the block erase"
is_byte "$NVME" 000 || fail "$NVME: not zeros after a block erase"

# Overwrite: two passes of 5Ah with the pattern inverted between them leave A5h.
fill "$NVME" > /dev/null
sim nvme sanitize --sanact=3 --owpass=2 --oipbp --ovrpat=0x5a5a5a5a "$NVME" > /dev/null || fail "overwrite refused"
wait_for 60 log_done "$NVME" || fail "overwrite never completed"
is_byte "$NVME" 245 || fail "$NVME: not A5h after two inverted passes of 5Ah"

# Crypto erase: neither the old data nor zeros.
old=$(fill "$NVME")
sim nvme sanitize --sanact=4 "$NVME" > /dev/null || fail "crypto erase refused"
wait_for 60 log_done "$NVME" || fail "crypto erase never completed"
random_looking "$NVME" "$old" || fail "$NVME: crypto erase left the old data or zeros"

# Format NVM: SES 1 zeros; SES 2 only where FNA says crypto erase.
fill "$NVME" > /dev/null
sim nvme format --ses=1 --force "$NVME" > /dev/null || fail "nvme format --ses=1 failed"
is_byte "$NVME" 000 || fail "$NVME: not zeros after a user-data format"
old=$(fill "$NVME")
sim nvme format --ses=2 --force "$NVME" > /dev/null || fail "nvme format --ses=2 failed"
random_looking "$NVME" "$old" || fail "$NVME: crypto format left the old data or zeros"
out=$(sim nvme format --ses=2 --force "$NVME2" 2>&1) && fail "a crypto format without FNA bit 2 was taken"
expect "$out" 'Invalid Field in Command' "crypto format without FNA bit 2"
out=$(sim nvme sanitize --sanact=4 "$NVME2" 2>&1) && fail "crypto erase not in SANICAP was taken"
expect "$out" 'Invalid Field in Command' "crypto erase not in SANICAP"

# A sanitize that fails: SSTAT 3, the data left, a format refused until Exit Failure Mode.
old=$(fill "$NVME2")
sim nvme sanitize --sanact=2 "$NVME2" > /dev/null || fail "block erase of $NVME2 refused"
log_failed() { sim nvme sanitize-log "$1" | grep -Eq '\(SSTAT\) : +0x3'; }
wait_for 60 log_failed "$NVME2" || fail "the failing sanitize never failed: $(sim nvme sanitize-log "$NVME2")"
[ "$(dev_sha256 "$NVME2")" = "$old" ] || fail "$NVME2: a failed sanitize changed the data"
out=$(sim nvme format --ses=1 --force "$NVME2" 2>&1) && fail "a format after a failed sanitize was taken"
expect "$out" 'Sanitize Failed' "format after a failed sanitize"
# Failed in restricted completion mode (AUSE 0): Exit Failure Mode refused; only a sanitize that
# succeeds would leave it. Failed with AUSE 1: Exit Failure Mode leaves it.
out=$(sim nvme sanitize --sanact=1 "$NVME2" 2>&1) && fail "exit failure mode after a restricted failure was taken"
expect "$out" 'Sanitize Failed' "exit failure mode after a restricted failure"
sim nvme sanitize --sanact=2 --ause "$NVME2" > /dev/null || fail "block erase of $NVME2 (AUSE) refused"
wait_for 60 log_failed "$NVME2" || fail "the failing sanitize never failed"
sim nvme sanitize --sanact=1 "$NVME2" > /dev/null || fail "exit failure mode after an unrestricted failure refused"
sim nvme format --ses=1 --force "$NVME2" > /dev/null || fail "format after exit failure mode refused"
note "NVMe: identify, sanitize log, sanitize (block, overwrite, crypto, failing), format: ok"

# --- ATA (ACS-3, through SAT ATA PASS-THROUGH) ---
out=$(sim hdparm -I "$ATA" 2>&1) || fail "hdparm -I: $out"
expect "$out" 'Model Number: +SIMATA' "hdparm -I model"
expect "$out" '^\s+\*?\s+Security Mode feature set' "hdparm -I security"
expect "$out" '^\s+\*\s+Host Protected Area feature set' "hdparm -I HPA"
expect "$out" '^\s+\*\s+SANITIZE feature set' "hdparm -I sanitize"
expect "$out" '^\s+\*\s+CRYPTO_SCRAMBLE_EXT command' "hdparm -I crypto scramble"
expect "$out" '^\s+\*\s+BLOCK_ERASE_EXT command' "hdparm -I block erase"
expect "$out" '^\s+\*\s+OVERWRITE_EXT command' "hdparm -I overwrite"
expect "$out" '^\s+not\s+enabled' "hdparm -I: security not enabled"
expect "$out" '^\s+not\s+frozen' "hdparm -I: not frozen"
expect "$out" 'supported: enhanced erase' "hdparm -I: enhanced erase"
expect "$out" '2min for SECURITY ERASE UNIT. 2min for ENHANCED SECURITY ERASE UNIT' "hdparm -I erase times"
expect "$out" 'LBA48 +user addressable sectors: +32768' "hdparm -I current max"
expect "$out" '^Checksum: correct' "hdparm -I integrity word"
out=$(sim hdparm -N "$ATA" 2>&1) || fail "hdparm -N: $out"
expect "$out" 'max sectors += 32768/40000, HPA is enabled' "hdparm -N"
out=$(sim hdparm --dco-identify "$ATA" 2>&1) || fail "hdparm --dco-identify: $out"
expect "$out" 'DCO Checksum verified' "DCO IDENTIFY checksum"
expect "$out" 'Real max sectors: 40000' "DCO IDENTIFY maximum"

# Security: set a password (SEC1 -> SEC5), a wrong one refused, erase with the right one (SEC1).
fill "$ATA" > /dev/null
sim hdparm --user-master u --security-set-pass sim-pw "$ATA" > /dev/null 2>&1 || fail "security set password failed"
expect "$(sim hdparm -I "$ATA")" '^\s+enabled' "security enabled after set password"
sim hdparm --user-master u --security-erase wrong-pw "$ATA" > /dev/null 2>&1 && fail "erase with a wrong password done"
sim hdparm --user-master u --security-erase sim-pw "$ATA" > /dev/null 2>&1 || fail "security erase failed"
is_byte "$ATA" 000 || fail "$ATA: not zeros after SECURITY ERASE UNIT"
out=$(sim hdparm -I "$ATA")
expect "$out" '^\s+not\s+enabled' "security disabled after the erase"
# Enhanced erase: a vendor pattern, here random-looking.
old=$(fill "$ATA")
sim hdparm --user-master u --security-set-pass sim-pw "$ATA" > /dev/null 2>&1 || fail "security set password failed"
sim hdparm --user-master u --security-erase-enhanced sim-pw "$ATA" > /dev/null 2>&1 || fail "enhanced erase failed"
random_looking "$ATA" "$old" || fail "$ATA: enhanced erase left the old data or zeros"

# Sanitize: block erase in progress (SD2), then done (SD0), the device zeros.
fill "$ATA" > /dev/null
sim hdparm --yes-i-know-what-i-am-doing --sanitize-block-erase "$ATA" > /dev/null 2>&1 || fail "sanitize block erase failed"
out=$(sim hdparm --sanitize-status "$ATA" 2>&1)
expect "$out" 'SD2 Sanitize operation In Process|Last Sanitize Operation Completed Without Error' "sanitize status"
ata_done() { sim hdparm --sanitize-status "$1" 2>&1 | grep -q 'Completed Without Error'; }
wait_for 60 ata_done "$ATA" || fail "ATA sanitize never completed: $(sim hdparm --sanitize-status "$ATA" 2>&1)"
is_byte "$ATA" 000 || fail "$ATA: not zeros after BLOCK ERASE EXT"
old=$(fill "$ATA")
sim hdparm --yes-i-know-what-i-am-doing --sanitize-crypto-scramble "$ATA" > /dev/null 2>&1 || fail "crypto scramble failed"
wait_for 60 ata_done "$ATA" || fail "crypto scramble never completed"
random_looking "$ATA" "$old" || fail "$ATA: crypto scramble left the old data or zeros"
fill "$ATA" > /dev/null
sim hdparm --yes-i-know-what-i-am-doing --sanitize-overwrite-passes 2 --sanitize-overwrite hex:5a5a5a5a "$ATA" \
        > /dev/null 2>&1 || fail "sanitize overwrite failed"
wait_for 60 ata_done "$ATA" || fail "overwrite never completed"
is_byte "$ATA" 132 || fail "$ATA: not 5Ah after OVERWRITE EXT"
# Sanitize freeze lock (SD1): a sanitize is then refused with the reason.
sim hdparm --yes-i-know-what-i-am-doing --sanitize-freeze-lock "$ATA" > /dev/null 2>&1 || fail "sanitize freeze lock failed"
expect "$(sim hdparm --sanitize-status "$ATA" 2>&1)" 'SD1 Sanitize Frozen' "sanitize status after freeze lock"
out=$(sim hdparm --yes-i-know-what-i-am-doing --sanitize-block-erase "$ATA" 2>&1) && fail "sanitize while sanitize-frozen done"
expect "$out" 'Device in FROZEN state' "sanitize while sanitize-frozen"
# Freeze lock: SEC1 -> SEC2, and a password can no longer be set.
sim hdparm --security-freeze "$ATA" > /dev/null 2>&1 || fail "security freeze failed"
expect "$(sim hdparm -I "$ATA")" '^\s+frozen' "frozen after freeze lock"
sim hdparm --user-master u --security-set-pass x "$ATA" > /dev/null 2>&1 && fail "set password while frozen done"

# Locked with an unknown password (SEC4): five wrong attempts expire the count; then even the
# right password is refused.
out=$(sim hdparm -I "$ATA2")
expect "$out" '^\s+locked' "$ATA2 locked"
expect "$out" '^\s+not\s+expired' "$ATA2 count not expired"
for i in 1 2 3 4 5; do
        sim hdparm --user-master u --security-unlock "guess$i" "$ATA2" > /dev/null 2>&1 && fail "a wrong password unlocked"
done
expect "$(sim hdparm -I "$ATA2")" '^\s+expired: security count' "count expired after five attempts"
sim hdparm --user-master u --security-unlock notgiven "$ATA2" > /dev/null 2>&1 && fail "unlocked with the count expired"
# Frozen, and a sanitize that never progresses.
expect "$(sim hdparm -I "$ATA3")" '^\s+frozen' "$ATA3 frozen"
sim hdparm --user-master u --security-set-pass x "$ATA3" > /dev/null 2>&1 && fail "set password on a frozen drive done"
sim hdparm --yes-i-know-what-i-am-doing --sanitize-block-erase "$ATA3" > /dev/null 2>&1 || fail "sanitize on $ATA3 failed"
p1=$(sim hdparm --sanitize-status "$ATA3" 2>&1 | grep Progress)
sleep 1
p2=$(sim hdparm --sanitize-status "$ATA3" 2>&1 | grep Progress)
[ -n "$p1" ] && [ "$p1" = "$p2" ] || fail "a stuck sanitize: progress '$p1' then '$p2'"
note "ATA: identify, HPA, DCO, security states and erase, sanitize, freeze, lock, count expired: ok"

# --- SCSI (SPC-4, SBC-3) ---
out=$(sim sg_inq "$SCSI" 2>&1) || fail "sg_inq: $out"
expect "$out" 'Vendor identification: SIMVEND' "sg_inq vendor"
expect "$out" 'Product identification: SIMSCSI' "sg_inq product"
out=$(sim sg_vpd "$SCSI" 2>&1) || fail "sg_vpd: $out"
expect "$out" 'Unit serial number' "sg_vpd pages"
grep -q 'ATA information' <<< "$out" && fail "a SCSI drive lists the ATA Information page"
sim sg_vpd -p 0x89 "$SCSI" > /dev/null 2>&1 && fail "a SCSI drive answers VPD page 89h"
out=$(sim sg_vpd -p 0x89 "$ATA" 2>&1) || fail "sg_vpd -p 0x89 on the ATA drive: $out"
expect "$out" 'SAT Vendor identification: linux' "ATA Information VPD page"
out=$(sim sg_opcodes "$SCSI" 2>&1) || fail "sg_opcodes: $out"
expect "$out" '^ 48 +2 +10 .*Sanitize, block erase' "sg_opcodes: block erase"
expect "$out" '^ 48 +3 +10 .*Sanitize, cryptographic erase' "sg_opcodes: crypto erase"
expect "$out" '^ 04 .*Format Unit' "sg_opcodes: format unit"
grep -q 'Sanitize, overwrite' <<< "$out" && fail "sg_opcodes lists an overwrite the drive lacks"
expect "$(sim sg_opcodes -o 0x48 -s 2 "$SCSI" 2>&1)" 'Command is supported' "one command: block erase"
expect "$(sim sg_opcodes -o 0x48 -s 1 "$SCSI" 2>&1)" 'Command is NOT supported' "one command: overwrite"
sim sg_opcodes -o 0x48 "$SCSI" > /dev/null 2>&1 && fail "reporting option 001b for a command with service actions"
expect "$(sim sg_opcodes -o 0x04 "$SCSI" 2>&1)" 'Command is supported' "one command: format unit"

# While a sanitize runs (one that never ends): NOT READY, SANITIZE IN PROGRESS with its progress.
sim sg_sanitize --block --early --quick "$SCSI3" > /dev/null 2>&1 || fail "sg_sanitize --block failed"
out=$(sim sg_turs -vv "$SCSI3" 2>&1) && fail "test unit ready during a sanitize: $out"
expect "$out" 'not ready' "TEST UNIT READY during a sanitize"
expect "$out" 'sanitize in progress' "TEST UNIT READY's sense during a sanitize"
out=$(sim sg_requests --progress "$SCSI3" 2>&1)
expect "$out" 'Progress indication: 10.00% done' "sg_requests --progress"
sim sg_sanitize --crypto --early --quick "$SCSI3" > /dev/null 2>&1 && fail "a second sanitize while one runs"

# A sanitize with IMMED: done, the device zeros.
fill "$SCSI" > /dev/null
sim sg_sanitize --block --early --quick "$SCSI" > /dev/null 2>&1 || fail "sg_sanitize --block failed"
wait_for 60 sim sg_turs "$SCSI" > /dev/null 2>&1 || fail "SCSI sanitize never completed"
is_byte "$SCSI" 000 || fail "$SCSI: not zeros after SANITIZE BLOCK ERASE"
# Overwrite with a 4-byte pattern, three passes inverted between them: the pattern stays.
printf '\x12\x34\x56\x78' > "$TEST_DIR/pattern"
cp "$TEST_DIR/pattern" "$TEST_DIR/expected"
while [ "$(stat -c %s "$TEST_DIR/expected")" -lt $((16 << 20)) ]; do
        cat "$TEST_DIR/expected" "$TEST_DIR/expected" > "$TEST_DIR/expected.2"
        mv "$TEST_DIR/expected.2" "$TEST_DIR/expected"
done
fill "$SCSI4" > /dev/null
sim sg_sanitize --overwrite --pattern="$TEST_DIR/pattern" --count=3 --invert --early --quick "$SCSI4" > /dev/null 2>&1 ||
        fail "sg_sanitize --overwrite failed"
wait_for 60 sim sg_turs "$SCSI4" > /dev/null 2>&1 || fail "SCSI overwrite never completed"
cmp -s "$TEST_DIR/expected" "$SCSI4" || fail "$SCSI4: not the pattern after SANITIZE OVERWRITE"
rm -f "$TEST_DIR/expected"
# A failing one: MEDIUM ERROR, SANITIZE COMMAND FAILED until EXIT FAILURE MODE.
old=$(fill "$SCSI2")
sim sg_sanitize --block --early --quick "$SCSI2" > /dev/null 2>&1 || fail "sg_sanitize on $SCSI2 failed"
scsi_failed() { sim sg_turs "$1" 2>&1 | grep -q 'Medium or hardware error'; }
wait_for 60 scsi_failed "$SCSI2" || fail "the failing SCSI sanitize never failed: $(sim sg_turs "$SCSI2" 2>&1)"
expect "$(sim sg_requests "$SCSI2" 2>&1)" 'Sanitize command failed' "REQUEST SENSE after a failed sanitize"
[ "$(dev_sha256 "$SCSI2")" = "$old" ] || fail "$SCSI2: a failed sanitize changed the data"
note "SCSI: inquiry, VPD, report supported operation codes, sanitize with progress, failure: ok"

# --- A process killed during a sanitize; the next ones follow it to its end ---
old=$(fill "$SCSI")
# Without IMMED (--wait) sg_sanitize waits in the SANITIZE command itself: killed there.
sim sg_sanitize --block --wait --quick "$SCSI" > /dev/null 2>&1 &
pid=$!
register_pid $pid
scsi_progress() {
        sim sg_requests --progress "$SCSI" 2>&1 | sed -n 's/.*Progress indication: \([0-9.]*\)% done.*/\1/p'
}
has_progress() { [ -n "$(scsi_progress)" ]; }
wait_for 30 has_progress || fail "no progress after the sanitize started"
kill -KILL $pid
wait $pid 2>/dev/null
sed -i "/^$pid\$/d" "$TEST_DIR/pids"
p1=$(scsi_progress)
# Progress moved on, or (on a slow machine) the sanitize already ended: either way it went on
# without the process that sent it.
moved() {
        local p
        p=$(scsi_progress)
        if [ -z "$p" ]; then sim sg_turs "$SCSI" > /dev/null 2>&1; return; fi
        [ -n "$p1" ] && awk -v a="$p" -v b="$p1" 'BEGIN { exit !(a > b) }'
}
wait_for 60 moved || fail "progress did not move on from '$p1'% after the kill"
wait_for 60 sim sg_turs "$SCSI" > /dev/null 2>&1 || fail "the sanitize never completed after the kill"
is_byte "$SCSI" 000 || fail "$SCSI: not zeros after the sanitize its sender did not see end"

# --- wiped with the simulator: SIGKILL during a sanitize, restart ---
fw_set() { wipectl --json probe "$1" 2>/dev/null | jq -r '.devices[0].erase.firmware.command_set'; }
start_daemon_sim
[ "$(fw_set "$NVME")" = nvme ] || fail "wiped's probe of $NVME: command set '$(fw_set "$NVME")', not nvme"
# ATA and SCSI are told apart by fw_scsi_is_ata() (daemon/fw-scsi.c): the ATA Information VPD page.
for pair in "$ATA ata" "$SCSI scsi"; do
        set -- $pair
        got=$(fw_set "$1")
        [ "$got" = "$2" ] || fail "wiped's probe of $1: command set '$got', not $2"
done
fill "$NVME" > /dev/null
sim nvme sanitize --sanact=2 "$NVME" > /dev/null || fail "nvme sanitize refused"
kill_daemon
start_daemon_sim
[ "$(fw_set "$NVME")" = nvme ] || fail "after the restart, wiped's probe of $NVME: '$(fw_set "$NVME")'"
wait_for 60 log_done "$NVME" || fail "the sanitize never completed across the daemon's restart"
is_byte "$NVME" 000 || fail "$NVME: not zeros after a sanitize across a restart"
stop_daemon || fail "wiped did not stop cleanly"
pass "nvme-cli, hdparm and sg3_utils agree with the simulator"
