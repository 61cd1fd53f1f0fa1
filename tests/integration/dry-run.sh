#!/bin/bash
# wipectl wipe --dry-run (-n): every check and the plan, nothing written. A random wipe, a
# pattern method with verification, a refused device (exit 5, the real submit's words), a
# firmware method on a simulated NVMe drive (the command it would send) and an ATA drive with a
# host protected area (it would be restored: it is not). After every dry run the device's bytes
# are unchanged, no job is in status, no record or report in the state directory. The estimate
# comes from --max-rate, else from the last finished wipe of the same device, else is unknown.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
command -v sha256sum >/dev/null || skip "sha256sum missing"
[ -f "$DRIVESIM_SO" ] || hard_error "$DRIVESIM_SO not built"

SIZE=$((16 << 20))
A=$(make_loop $SIZE)            # random
B=$(make_loop $SIZE)            # a pattern method with verification
MOUNTED=$(make_loop $SIZE)      # refused: mounted
NVME=$(make_loop $SIZE)         # simulated NVMe drive: sanitize
ATAHPA=$(make_loop $SIZE)       # simulated ATA drive with a host protected area
MEASURED=$(make_loop $SIZE)     # wiped for real once: its rate is measured
cat > "$DRIVESIM_CONF" <<EOF
[$NVME]
type = nvme
serial = NVDRY001
sanitize = crypto block overwrite
sanitize_seconds = 1
[$ATAHPA]
type = ata
serial = ATADRY01
sanitize = none
native_sectors = 40000
EOF
for dev in "$A" "$B" "$NVME" "$ATAHPA"; do
        dd if=/dev/urandom of="$dev" bs=1M count=16 oflag=direct status=none || hard_error "cannot fill $dev"
done
mkfs.ext4 -q "$MOUNTED" || hard_error "mkfs.ext4 $MOUNTED failed"
mkdir -p "$TEST_DIR/mnt"
mount "$MOUNTED" "$TEST_DIR/mnt" || hard_error "cannot mount $MOUNTED"
register_mount "$TEST_DIR/mnt"
declare -A before
for dev in "$A" "$B" "$NVME" "$ATAHPA"; do
        before[$dev]=$(sha256sum < "$dev") || hard_error "cannot read $dev"
done

start_daemon_sim

# unchanged: no device's bytes changed, no job, no record, no report.
unchanged() {
        local dev
        for dev in "$A" "$B" "$NVME" "$ATAHPA"; do
                [ "$(sha256sum < "$dev")" = "${before[$dev]}" ] || fail "$1: $dev changed"
        done
        [ "$(wipectl --json status | jq '.jobs | length')" = "${2:-0}" ] || fail "$1: a job appeared: $(wipectl status)"
        [ "$(find "$STATE" -path '*/jobs/*' -o -path '*/reports/*' -type f | wc -l)" = "$((2 * ${2:-0}))" ] ||
                fail "$1: records in $STATE: $(find "$STATE" -type f)"
}

# --- random, the defaults: text and JSON; no rate known. ---
out=$(wipectl wipe --dry-run "$A" 2>&1) || fail "dry run of $A exited $?: $out"
echo "$out" | grep -q "^Dry run: nothing was written" || fail "dry run text: $out"
echo "$out" | grep -qF "$A (16.0 MiB): would be wiped" || fail "dry run text: $out"
echo "$out" | grep -qE "^  Pass 1: +random$" || fail "dry run text: $out"
echo "$out" | grep -qE "^  Verify: +sample \(10%\)$" || fail "dry run text: $out"
echo "$out" | grep -qE "^  Estimate: +rate unknown" || fail "dry run text: $out"
unchanged "dry run of $A (text)"
json=$(wipectl --json wipe -n "$A") || fail "dry run --json of $A exited $?"
jq_is "$json" .dry_run true "dry run"
jq_is "$json" '.jobs | length' 1 "dry run"
jq_is "$json" '.jobs[0] | "\(.node) \(.size_bytes) \(.method) \(.passes[0].pattern) \(.verify) \(.verify_percent)"' \
        "$A $SIZE random random sample 10" "dry run of $A"
jq_is "$json" '.jobs[0].identity.loop.backing_file | type' string "dry run of $A"
jq_is "$json" '.jobs[0].work_total_bytes > .jobs[0].size_bytes' true "dry run of $A: writes and sample reads"
jq_is "$json" '.jobs[0].estimate | "\(.duration_s) \(.rate_bps) \(.rate_from) \(.job)"' "null null null null" "dry run of $A"
jq_is "$json" '.jobs[0] | has("id")' false "dry run of $A: a job id"
# Options anywhere, as for every command: after the device, -J for --json.
jq_is "$(wipectl wipe "$A" -n -J)" '"\(.dry_run) \(.format_version | type) \(.jobs[0].node)"' "true number $A" "wipe $A -n -J"
unchanged "dry run of $A (json)"

# --- A pattern method with verification of every pass, at a given rate. ---
json=$(wipectl --json wipe -n --passes 0x55aa,zero --verify all --max-rate 100M "$B") || fail "dry run of $B exited $?"
jq_is "$json" '.jobs[0] | "\(.method) \([.passes[].pattern] | join(",")) \(.verify) \(.max_rate_bps)"' \
        "custom 0x55aa,zero all 100000000" "dry run of $B"
jq_is "$json" '.jobs[0].work_total_bytes' $((4 * SIZE)) "dry run of $B: two passes, each read back"
jq_is "$json" '.jobs[0].estimate | "\(.rate_bps) \(.rate_from) \(.duration_s)"' \
        "100000000 max_rate_bps $(( (4 * SIZE + 50000000) / 100000000 ))" "dry run of $B"
out=$(wipectl wipe -n --method dod-3pass --verify last --max-rate 100M "$B") || fail "dry run of $B exited $?"
echo "$out" | grep -qE "^  Estimate: +[0-9]+s at 100.0 MB/s \(the max rate\)" || fail "dry run text: $out"
unchanged "dry run of $B"

# --- A refused device: the real submit's message and exit status. ---
out=$(wipectl wipe -n "$MOUNTED" 2>&1)
rc=$?
[ $rc = 5 ] || fail "dry run of the mounted $MOUNTED exited $rc: $out"
real=$(wipectl wipe --yes "$MOUNTED" 2>&1)
rc=$?
[ $rc = 5 ] || fail "wipe of the mounted $MOUNTED exited $rc: $real"
[ "$out" = "$real" ] || fail "dry run refusal [$out] is not the submit's [$real]"
echo "$out" | grep -qF "$MOUNTED: refusing: is mounted on $TEST_DIR/mnt" || fail "refusal: $out"
# One refused device refuses the whole request, as a submit does.
wipectl wipe -n "$A" "$MOUNTED" > /dev/null 2>&1 && fail "dry run with a refused device passed"
unchanged "refused dry runs"

# --- A firmware method: the command the drive would get, nothing sent. ---
json=$(wipectl --json wipe -n --method sanitize "$NVME") || fail "dry run sanitize of $NVME exited $?"
jq_is "$json" '.jobs[0].passes[0] | "\(.pattern) \(.firmware.action) \(.firmware.command_set) \(.firmware.sanact)"' \
        "sanitize-crypto sanitize-crypto nvme 100b crypto erase" "dry run sanitize"
jq_is "$json" '.jobs[0].estimate.firmware_not_counted' true "dry run sanitize"
out=$(wipectl wipe -n --method sanitize "$NVME") || fail "dry run sanitize text exited $?"
echo "$out" | grep -qE "^  Pass 1: +sanitize-crypto: firmware sanitize-crypto, Sanitize \(NVMe 5.24\) 100b crypto erase$" ||
        fail "dry run sanitize text: $out"
unchanged "dry run sanitize"

# --- A host protected area: the dry run says it would be restored; it is not. ---
hidden=$(wipectl --json probe "$ATAHPA" | jq -r '.devices[0].erase.firmware.ata.hidden_area.hpa_hidden_sectors')
[ "$hidden" = $((40000 - SIZE / 512)) ] || fail "probe: $ATAHPA hides '$hidden' sectors"
json=$(wipectl --json wipe -n --method zero "$ATAHPA") || fail "dry run of $ATAHPA exited $?"
jq_is "$json" '.jobs[0].hidden_area' restore "dry run of $ATAHPA"
hidden=$(wipectl --json probe "$ATAHPA" | jq -r '.devices[0].erase.firmware.ata.hidden_area.hpa_hidden_sectors')
[ "$hidden" = $((40000 - SIZE / 512)) ] || fail "after the dry run $ATAHPA hides '$hidden' sectors: it was restored"
grep -q "restored" "$TEST_DIR/daemon.log" && fail "the daemon logged a restore: $(grep restored "$TEST_DIR/daemon.log")"
unchanged "dry run of $ATAHPA"

# --- The rate of the last finished wipe of the same device. ---
id=$(wipectl --json wipe --yes --method zero --verify none "$MEASURED" | jq -r '.jobs[0].id') || fail "wipe of $MEASURED failed"
[ "$(job_field "$id" state)" = done ] || fail "job $id: $(job_field "$id" state)"
json=$(wipectl --json wipe -n --method zero --verify none "$MEASURED") || fail "dry run of $MEASURED exited $?"
jq_is "$json" '.jobs[0].estimate | "\(.rate_from) \(.job) \(.rate_bps > 0) \(.duration_s >= 0)"' "job $id true true" \
        "dry run of $MEASURED"
out=$(wipectl wipe -n --method zero --verify none "$MEASURED") || fail "dry run of $MEASURED exited $?"
echo "$out" | grep -qE "^  Estimate: +.* at .* \(measured by job $id\)$" || fail "dry run text: $out"
unchanged "dry run of $MEASURED" 1

umount "$TEST_DIR/mnt" || hard_error "cannot unmount $TEST_DIR/mnt"
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
