#!/bin/bash
# What a drive's firmware can do to erase itself, as wiped's probe reads it (daemon/firmware.c and
# fw-*.c), from drives the simulator of tests/sim answers for at the ioctl boundary: an NVMe
# namespace with every sanitize action and crypto-erase format, an ATA drive whose security is
# frozen and which hides sectors behind an HPA and a DCO, an ATA drive locked by a password, a
# SCSI disk with SANITIZE and FORMAT UNIT, and one that does not report its commands. JSON and
# text; a plain loop device answers nothing; the probe reads only (every byte of every drive and
# the drives' states are as they were).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

SIZE=$((16 << 20))
SECTORS=$((SIZE / 512))
nvme=$(make_loop $SIZE)
frozen=$(make_loop $SIZE)
locked=$(make_loop $SIZE)
scsi=$(make_loop $SIZE)
plain_scsi=$(make_loop $SIZE)
plain=$(make_loop $SIZE)

cat > "$DRIVESIM_CONF" <<EOF
[$nvme]
type = nvme
model = SIMNVME
serial = NV0001
sanitize = crypto block overwrite
format = yes
fna = crypto
est_block = 10
est_crypto = 2

[$frozen]
type = ata
model = SIMATA
security = yes
enhanced_erase = yes
erase_seconds = 7200
enhanced_erase_seconds = 240
frozen = yes
sanitize = block overwrite
hpa = yes
native_sectors = $((SECTORS + 4096))
dco = yes
dco_sectors = $((SECTORS + 8192))

[$locked]
type = ata
model = SIMATA-LOCKED
security = yes
user_password = not-ours
locked = yes
sanitize = crypto

[$scsi]
type = scsi
vendor = SIMVEND
model = SIMSCSI
rsoc = yes
sanitize = block crypto
format_unit = yes

[$plain_scsi]
type = scsi
vendor = SIMVEND
model = SIMOLD
rsoc = no
EOF

for d in "$nvme" "$frozen" "$locked" "$scsi" "$plain_scsi" "$plain"; do
        head -c $SIZE /dev/urandom | dd of="$d" bs=1M oflag=direct iflag=fullblock status=none || hard_error "cannot fill $d"
done
sums() { for d in "$nvme" "$frozen" "$locked" "$scsi" "$plain_scsi" "$plain"; do sha256sum < "$d"; done; }
before=$(sums)

start_daemon_sim --threads 2
fw() { wipectl --json probe "$1" | jq -c '.devices[0].erase.firmware'; }

# --- NVMe: Identify Controller and the Sanitize Status log page ------------------------------------
f=$(fw "$nvme")
note "NVMe: $f"
jq_is "$f" '"\(.command_set) \(.refused) \(.error) \(.nvme.nsid)"' "nvme null null 1" "NVMe"
jq_is "$f" '.nvme.sanitize | "\(.crypto) \(.block) \(.overwrite) \(.log_read) \(.status)"' "true true true true never" "NVMe sanitize"
jq_is "$f" '.nvme.sanitize.estimates_s | "\(.crypto) \(.block) \(.overwrite)"' "2 10 null" "NVMe estimates"
jq_is "$f" '.nvme.format | "\(.supported) \(.crypto_erase) \(.all_namespaces) \(.erase_all_namespaces)"' "true true false false" "NVMe format"
# No sysfs controller behind a loop device: none is made up.
jq_is "$f" '"\(.nvme.controller) \(.nvme.namespaces)"' "null null" "NVMe controller"
text=$(wipectl probe "$nvme")
echo "$text" | grep -q "^  Firmware: *NVMe namespace 1$" || fail "NVMe text: $text"
echo "$text" | grep -q "^    Sanitize: *crypto erase, block erase, overwrite (about 2s); last sanitize: never$" ||
        fail "NVMe sanitize text: $text"
echo "$text" | grep -q "^    Format NVM: *secure erase: user data, crypto erase$" || fail "NVMe format text: $text"

# --- ATA, frozen, with a host protected area and a DCO ------------------------------------------
f=$(fw "$frozen")
note "ATA frozen: $f"
jq_is "$f" '"\(.command_set) \(.refused) \(.error)"' "ata null null" "ATA frozen"
jq_is "$f" '.ata.security | "\(.supported) \(.enabled) \(.locked) \(.frozen) \(.count_expired) \(.enhanced_erase)"' \
        "true false false true false true" "ATA frozen: security"
jq_is "$f" '.ata.security.erase_refused | test("frozen")' true "ATA frozen: erase refused"
jq_is "$f" '.ata.security | "\(.erase_time_s > 0) \(.enhanced_erase_time_s > 0)"' "true true" "ATA frozen: erase times"
jq_is "$f" '.ata.sanitize | "\(.supported) \(.crypto) \(.block) \(.overwrite) \(.refused)"' "true false true true null" "ATA frozen: sanitize"
jq_is "$f" '.ata.hidden_area | "\(.hpa_supported) \(.current_max_sectors) \(.native_max_sectors) \(.hpa_hidden_sectors)"' \
        "true $SECTORS $((SECTORS + 4096)) 4096" "ATA frozen: HPA"
jq_is "$f" '.ata.hidden_area | "\(.dco_supported) \(.dco_max_sectors) \(.hidden_sectors)"' \
        "true $((SECTORS + 8192)) 8192" "ATA frozen: DCO"
text=$(wipectl probe "$frozen")
echo "$text" | grep -q "^  Firmware: *ATA (through SCSI/ATA translation)$" || fail "ATA text: $text"
echo "$text" | grep -q "^    Security: *enhanced erase (about .*); state: frozen; refused: .*frozen" || fail "ATA security text: $text"
echo "$text" | grep -q "^    Sanitize: *block erase, overwrite$" || fail "ATA sanitize text: $text"
echo "$text" | grep -q "^    Hidden area: *8192 sectors hidden (native max $((SECTORS + 4096)), current $SECTORS)$" ||
        fail "ATA hidden area text: $text"

# --- ATA, locked by a password wiped does not know ------------------------------------------------
f=$(fw "$locked")
note "ATA locked: $f"
jq_is "$f" '.ata.security | "\(.enabled) \(.locked) \(.frozen)"' "true true false" "ATA locked: security"
jq_is "$f" '"\(.ata.security.erase_refused | test("password")) \(.ata.sanitize.refused | test("locked"))"' "true true" \
        "ATA locked: refusals"

# --- SCSI: SANITIZE service actions and FORMAT UNIT, and a device that does not report them ------
f=$(fw "$scsi")
note "SCSI: $f"
jq_is "$f" '"\(.command_set) \(.refused) \(.error) \(.scsi.report_supported_opcodes) \(.scsi.format_unit)"' \
        "scsi null null true true" "SCSI"
jq_is "$f" '.scsi.sanitize | "\(.overwrite) \(.block) \(.crypto) \(.exit_failure)"' "false true true true" "SCSI sanitize"
wipectl probe "$scsi" | grep -q "^    Sanitize: *crypto erase, block erase$" || fail "SCSI text: $(wipectl probe "$scsi")"
f=$(fw "$plain_scsi")
jq_is "$f" '"\(.command_set) \(.error) \(.scsi.report_supported_opcodes) \(.scsi.sanitize) \(.scsi.format_unit)"' \
        "scsi null false null null" "SCSI without REPORT SUPPORTED OPERATION CODES"
wipectl probe "$plain_scsi" | grep -q "^    Sanitize: *unknown (the device does not report its commands)$" ||
        fail "SCSI without RSOC, text: $(wipectl probe "$plain_scsi")"

# --- a loop device the simulator does not answer for ------------------------------------------------
jq_is "$(fw "$plain")" '"\(.command_set) \(.refused) \(.error) \(.nvme) \(.ata) \(.scsi)"' "none null null null null null" "plain loop"
wipectl probe "$plain" | grep -q "^  Firmware: *no erase commands reach it" || fail "plain loop text: $(wipectl probe "$plain")"

# --- a probe only reads: every byte as it was, and each drive's state too -------------------------
[ "$(sums)" = "$before" ] || fail "a probe changed a device's bytes"
f=$(fw "$frozen")
jq_is "$f" '.ata.security | "\(.enabled) \(.frozen)"' "false true" "ATA frozen, probed again"
jq_is "$f" '.ata.hidden_area.current_max_sectors' $SECTORS "ATA frozen, probed again: HPA"
jq_is "$(fw "$locked")" '.ata.security | "\(.enabled) \(.locked) \(.count_expired)"' "true true false" "ATA locked, probed again"
# The firmware's answers refuse nothing a wipe does: each may still be overwritten.
for d in "$nvme" "$frozen" "$scsi"; do
        jq_is "$(wipectl --json probe "$d")" '.devices[0].wipeable' true "probe of $d"
done
stop_daemon || fail "daemon exit status $?"
pass
