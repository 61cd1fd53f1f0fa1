#!/bin/bash
# Real drivers, emulated drives: boot a Debian 12 kernel in QEMU (TCG) with an emulated NVMe
# drive, a SATA disk on q35's AHCI controller and a USB disk on an xHCI controller; inside, wiped
# probes the three and wipes the NVMe disk (random) and the SATA disk (zeroout), each with
# --verify all, through the kernel's nvme and libata drivers under io_uring and O_DIRECT; then it
# formats the NVMe disk (Format NVM) and is refused the firmware methods the disks do not have.
#
# Checked on the host from the VM's serial console (tests/vm/guest-drives.sh prints it): each
# disk's identity and firmware command set (.erase.firmware), the USB disk's refusal, both wipes
# done and verified, the SATA disk reading back as zeros, no sanitizer report from the daemon.
# Then the firmware methods on the real drivers: the NVMe disk, filled with data, is formatted
# (--method nvme-format, then purge, which resolves to it) and read back as zeros, with the report's
# command (SES 1: QEMU 7.2 has no crypto erase), proof and NIST category Purge; sanitize is refused
# on it (QEMU 7.2 has none) and leaves its data; on the USB disk every firmware method is refused
# (the bridge) and purge falls back to a random pass, Clear, the report naming why; on the SATA
# disk (no security or sanitize feature set in QEMU's IDE disk) ata-secure-erase and sanitize are
# refused with the reason. No refusal starts a job.
#
# Skips (77) only when QEMU or the kernel cannot be had or run at all, or for a ThreadSanitizer
# build whose daemon cannot start in the VM. The kernel comes from tests/vm/fetch-kernel.sh (its
# cache, $WIPED_VM_CACHE; tools/install-deps fills it). tests/vm/README.md: running it by hand.
#
# Unlike the loop-device tests it needs no root: nothing on this machine is touched but files of
# its own (the disk images, in its directory under /dev/shm).
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
WIPED=${WIPED:-$top_builddir/daemon/wiped}
WIPECTL_BIN=${WIPECTL_BIN:-$top_builddir/cli/wipectl}
TEST_NAME=$(basename "$0" .sh)
VM=$top_srcdir/tests/vm
QEMU=${QEMU:-qemu-system-x86_64}
# TCG by default (the CI has no KVM); WIPED_VM_ACCEL=kvm for a quicker run by hand.
ACCEL=${WIPED_VM_ACCEL:-tcg}
TIMEOUT=${WIPED_VM_TIMEOUT:-300}
DISK_MIB=32

skip() { echo "SKIP: $TEST_NAME: $*" >&2; exit 77; }
fail() { echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }
hard_error() { echo "ERROR: $TEST_NAME: $*" >&2; exit 99; }
pass() { echo "PASS: $TEST_NAME${1:+: $1}"; exit 0; }
note() { echo "# $*"; }

command -v "$QEMU" > /dev/null || skip "$QEMU missing (tools/install-deps installs qemu-system-x86)"
command -v jq > /dev/null || hard_error "jq missing (tools/install-deps installs it)"
command -v busybox > /dev/null || hard_error "busybox missing (tools/install-deps installs busybox-static)"
command -v cpio > /dev/null || hard_error "cpio missing (tools/install-deps installs it)"
[ -x "$WIPED" ] || hard_error "$WIPED not built"
[ -x "$WIPECTL_BIN" ] || hard_error "$WIPECTL_BIN not built"

# Can QEMU run here at all (the machine, the accelerator)? The only QEMU failure that skips: once
# this works, a VM that does not boot or run the test is a failure.
if ! qemu_err=$(echo quit | timeout 60 "$QEMU" -machine q35 -accel "$ACCEL" -cpu max -nodefaults -display none \
                -S -monitor stdio 2>&1 > /dev/null); then
        skip "QEMU cannot run here: $qemu_err"
fi

TEST_DIR=$(mktemp -d /dev/shm/wiped-vm.XXXXXX) || hard_error "mktemp failed"
QEMU_PID=
cleanup() {
        local rc=$?
        trap - EXIT INT TERM
        if [ -n "$QEMU_PID" ]; then
                kill -TERM "$QEMU_PID" 2> /dev/null
                wait "$QEMU_PID" 2> /dev/null
        fi
        rm -rf "$TEST_DIR"
        exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

started=$SECONDS

# --- the kernel, the initramfs, the disks -------------------------------------------------------
kdir=$("$VM/fetch-kernel.sh" --print 2> "$TEST_DIR/fetch.err") ||
        skip "no kernel for the VM (tests/vm/fetch-kernel.sh: $(tail -n 3 "$TEST_DIR/fetch.err"))"
[ -s "$TEST_DIR/fetch.err" ] && note "$(cat "$TEST_DIR/fetch.err")"
note "kernel $kdir"
tsan=
ldd "$WIPED" 2> /dev/null | grep -q libtsan && tsan=1
"$VM/mkinitramfs.sh" "$kdir" "$TEST_DIR/initramfs" "$VM/guest-drives.sh" "$WIPED" "$WIPECTL_BIN" ||
        hard_error "mkinitramfs.sh failed"
for d in nvme sata usb; do
        truncate -s "${DISK_MIB}M" "$TEST_DIR/$d.img" || hard_error "cannot create $TEST_DIR/$d.img"
done

# --- the VM -------------------------------------------------------------------------------------
# The whole console goes to a file; "quiet loglevel=1" keeps kernel lines out of the JSON.
note "booting the VM ($ACCEL; at most $TIMEOUT s)"
# -cpu qemu64, not max: under TCG the whole test took 48 s of CPU instead of 58 (no AES
# instructions to emulate: the guest's wipes use ChaCha20, which the drivers do not care about).
timeout -k 5 "$TIMEOUT" "$QEMU" -machine q35 -accel "$ACCEL" -cpu qemu64 -smp 2 -m 1024 \
        -nographic -nodefaults -serial stdio -no-reboot \
        -kernel "$kdir/vmlinuz" -initrd "$TEST_DIR/initramfs" \
        -append "console=ttyS0 panic=-1 quiet loglevel=1 ${WIPED_VM_APPEND:-}" \
        -drive "file=$TEST_DIR/nvme.img,if=none,id=n0,format=raw" -device nvme,serial=WIPEDNVME1,drive=n0 \
        -drive "file=$TEST_DIR/sata.img,if=none,id=s0,format=raw" -device ide-hd,bus=ide.0,drive=s0,serial=WIPEDSATA1 \
        -drive "file=$TEST_DIR/usb.img,if=none,id=u0,format=raw" -device qemu-xhci \
        -device usb-storage,drive=u0,serial=WIPEDUSB1 \
        < /dev/null > "$TEST_DIR/console.raw" 2>&1 &
QEMU_PID=$!
wait "$QEMU_PID"
qrc=$?
QEMU_PID=
# Serial line ends (\r\n) and the terminal controls of the firmware and the kernel (\ec, \e[...)
# out, so that the guest's lines start with their own text.
sed 's/\r$//; s/\x1bc//g; s/\x1b\[[0-9;?]*[A-Za-z]//g' "$TEST_DIR/console.raw" > "$TEST_DIR/console"
CONSOLE=$TEST_DIR/console
note "the VM ran $((SECONDS - started)) s in all (QEMU exited $qrc)"

show_console() {
        echo "--- the VM's console (last lines) ---" >&2
        grep -v '^[[:space:]]*$' "$CONSOLE" | tail -n 60 >&2
}
if ! grep -q '^@@@ WIPED-VM BOOTED' "$CONSOLE"; then
        show_console
        [ $qrc = 124 ] && fail "the VM did not boot within $TIMEOUT s"
        fail "the VM did not start /init (QEMU exited $qrc; no BOOTED line on the console)"
fi

# section NAME: the lines the guest printed between "@@@ BEGIN NAME" and "@@@ END NAME RC".
section() {
        awk -v b="@@@ BEGIN $1" -v e="@@@ END $1 " 'index($0, e) == 1 { f = 0 } f { print } $0 == b { f = 1 }' "$CONSOLE"
}
# section_rc NAME: that RC; empty when the section never ended.
section_rc() { sed -n "s/^@@@ END $1 \\([0-9]*\\)\$/\\1/p" "$CONSOLE" | tail -n 1; }
# marker WORD...: the rest of the console line "@@@ WORD..."
marker() { sed -n "s/^@@@ $* //p" "$CONSOLE" | tail -n 1; }

grep -q '^@@@ WIPED-VM EXIT' "$CONSOLE" || {
        show_console
        [ $qrc = 124 ] && fail "the VM's test did not end within $TIMEOUT s"
        fail "the VM stopped before its test ended (QEMU exited $qrc)"
}
grep '^@@@ WIPED-VM insmod' "$CONSOLE" >&2
if grep -q '^@@@ ERROR wiped did not come up' "$CONSOLE"; then
        section daemon-log >&2
        if [ -n "$tsan" ] && section daemon-log | grep -q ThreadSanitizer; then
                skip "the ThreadSanitizer build of wiped cannot start in the VM's kernel: $(section daemon-log | grep -m 1 ThreadSanitizer)"
        fi
        fail "wiped did not come up in the VM"
fi
if grep -q '^@@@ ERROR' "$CONSOLE"; then
        show_console
        hard_error "$(marker ERROR)"
fi
[ "$(marker WIPED-VM EXIT)" = 0 ] || { show_console; fail "the guest script exited $(marker WIPED-VM EXIT)"; }
note "guest uptime: /init at $(marker WIPED-VM BOOTED) s, disks at $(marker UP disks) s, wiped at $(marker UP wiped) s, wipes done at $(marker UP wiped-disks) s"
nvme=$(marker DEV nvme) sata=$(marker DEV sata) usb=$(marker DEV usb)
note "disks in the VM: nvme $nvme, sata $sata, usb $usb"

# A sanitizer's report from the daemon fails the test (also one written at its exit: a leak).
SANITIZER_REPORT='^==[0-9]+==ERROR: [A-Za-z]+Sanitizer|^WARNING: ThreadSanitizer|: runtime error: '
if section daemon-log | grep -qE "$SANITIZER_REPORT"; then
        section daemon-log | grep -m 1 -A 40 -E "$SANITIZER_REPORT" >&2
        fail "the daemon's log in the VM holds a sanitizer report"
fi
[ "$(marker DAEMON-EXIT)" = 0 ] || { section daemon-log | tail -n 20 >&2; fail "wiped exited $(marker DAEMON-EXIT) at SIGTERM"; }

# json NAME: a section that ended with 0 and holds JSON, as one line.
json() {
        local rc out
        rc=$(section_rc "$1")
        [ "$rc" = 0 ] || { section "$1" >&2; fail "$1: exited '${rc:-never ended}' in the VM"; }
        out=$(section "$1" | jq -c .) || { section "$1" >&2; fail "$1: not JSON"; }
        echo "$out"
}
# is JSON FILTER EXPECTED WHAT: fail unless jq -r FILTER of JSON prints exactly EXPECTED.
is() {
        local got
        got=$(echo "$1" | jq -r "$2")
        [ "$got" = "$3" ] || fail "$4: $2 is '$got', expected '$3' in: $1"
}

# --- probe ----------------------------------------------------------------------------------------
p=$(json probe-nvme) || exit
d=$(echo "$p" | jq -c '.devices[0]')
is "$d" '"\(.path) \(.wipeable) \(.identity.transport) \(.identity.serial) \(.identity.size)"' \
        "$nvme true nvme WIPEDNVME1 $((DISK_MIB << 20))" "NVMe identity"
is "$d" '.erase.firmware | "\(.command_set) \(.refused) \(.error)"' "nvme null null" "NVMe firmware"
# What QEMU 7.2's NVMe controller reports (hw/nvme/ctrl.c): Format NVM (OACS bit 1) with no secure
# erase restrictions (FNA 0), and no Sanitize (SANICAP 0), so no Sanitize Status log is read; one
# controller with namespace 1.
is "$d" '.erase.firmware.nvme | "\(.nsid) \(.controller) \(.namespaces | join(","))"' "1 /dev/nvme0 /dev/nvme0n1" "NVMe namespaces"
is "$d" '.erase.firmware.nvme.format | "\(.supported) \(.all_namespaces) \(.erase_all_namespaces) \(.crypto_erase)"' \
        "true false false false" "NVMe Format NVM"
is "$d" '.erase.firmware.nvme.sanitize | "\(.crypto) \(.block) \(.overwrite) \(.log_read)"' "false false false false" "NVMe sanitize"
note "NVMe firmware: $(echo "$d" | jq -c .erase.firmware)"

p=$(json probe-sata) || exit
d=$(echo "$p" | jq -c '.devices[0]')
is "$d" '"\(.path) \(.wipeable) \(.identity.model) \(.identity.size)"' "$sata true QEMU HARDDISK $((DISK_MIB << 20))" "SATA identity"
# No udev in the VM: the serial comes from the Unit Serial Number VPD page the kernel keeps.
is "$d" '.identity.serial' WIPEDSATA1 "SATA serial"
case $(echo "$d" | jq -r .identity.transport) in
sata|ata) ;;
*) fail "SATA disk: transport is $(echo "$d" | jq -c .identity.transport), expected sata or ata" ;;
esac
is "$d" '.erase.firmware.refused' null "SATA firmware"
# What QEMU's ide-hd emulates over AHCI and libata's SCSI/ATA translation: the ATA command set
# (found by the ATA Information VPD page). "none" is what the skeleton's placeholder fw-scsi.c
# reports (it asks no device yet): accepted, and said, until the SCSI/ATA modules land.
set=$(echo "$d" | jq -r .erase.firmware.command_set)
[ "$set" = ata ] || fail "SATA disk: command_set is '$set', expected ata: $(echo "$d" | jq -c .erase.firmware)"
# QEMU's IDE/AHCI disk implements neither the security nor the sanitize feature set nor HPA, and
# its IDENTIFY gives the disk's size in 512-byte sectors, through the kernel's libata SAT.
is "$d" '.erase.firmware | "\(.error) \(.ata.security.supported) \(.ata.sanitize.supported) \(.ata.hidden_area.hpa_supported) \(.ata.hidden_area.current_max_sectors)"' \
        "null false false false $((DISK_MIB << 11))" "SATA firmware"
note "SATA firmware: $(echo "$d" | jq -c .erase.firmware)"

p=$(json probe-usb) || exit
d=$(echo "$p" | jq -c '.devices[0]')
is "$d" '"\(.path) \(.identity.transport) \(.identity.size)"' "$usb usb $((DISK_MIB << 20))" "USB identity"
is "$d" '.erase.firmware | "\(.command_set) \(.refused | test("USB"))"' "none true" "USB firmware"
note "USB firmware: $(echo "$d" | jq -c .erase.firmware)"

# --- the wipes --------------------------------------------------------------------------------------
for w in nvme:random sata:zeroout; do
        name=${w%%:*} method=${w#*:}
        j=$(json "wipe-$name") || exit
        job=$(echo "$j" | jq -c '.jobs[0]')
        is "$job" '"\(.state) \(.method) \(.verify.mode) \(.verify.result) \(.bad_bytes)"' "done $method all passed 0" "wipe of the $name disk"
        is "$job" '"\(.size) \(.bytes_done)"' "$((DISK_MIB << 20)) $((2 * DISK_MIB << 20))" "wipe of the $name disk"
        note "wipe of the $name disk ($method, verify all): $(echo "$job" | jq -r '"\(.state), \(.elapsed_s) s in the VM"')"
done
[ "$(section_rc cmp-sata)" = 0 ] && [ "$(section cmp-sata)" = zero ] ||
        fail "the SATA disk does not read back as zeros after zeroout: $(section cmp-sata)"

# --- the firmware methods ------------------------------------------------------------------------
note "guest uptime: NVMe filled at $(marker UP filled) s, formatted twice by $(marker UP nvme-firmware) s, USB refusals by $(marker UP usb-refusals) s, USB purge by $(marker UP usb-purge) s, SATA refusals by $(marker UP firmware) s"
# sum WHAT: the MD5 of the whole NVMe disk the guest printed at WHAT.
sum() {
        local s
        s=$(marker SUM "$1")
        [[ $s =~ ^[0-9a-f]{32}$ ]] || { show_console; fail "no sum of the NVMe disk at $1 in the VM's output"; }
        echo "$s"
}
zeros=$(head -c $((DISK_MIB << 20)) /dev/zero | md5sum | cut -d ' ' -f 1)
# refused NAME TEXT: section NAME (a wipe) exited 5, the refusal, with TEXT in its message.
refused() {
        local rc
        rc=$(section_rc "$1")
        [ "$rc" = 5 ] || fail "$1: exited '${rc:-never ended}' in the VM, expected 5 (refused): $(section "$1")"
        section "$1" | grep -qF -- "$2" || fail "$1: the refusal does not say '$2': $(section "$1")"
}
# wiped NAME: the job of section wipe-NAME, with its report (section report-NAME) as .report.
wiped() {
        local j r
        j=$(json "wipe-$1") || exit
        r=$(json "report-$1") || exit
        jq -c --argjson r "$r" '.jobs[0] + { report: $r }' <<< "$j"
}

# The NVMe disk held data (random bytes, no block of zeros); sanitize is refused (QEMU 7.2 has no
# Sanitize: SANICAP 0) and leaves it as it was.
filled=$(sum nvme-filled)
[ "$filled" != "$zeros" ] || fail "the NVMe disk reads as zeros after it was filled"
refused refuse-nvme-sanitize "$nvme: refusing sanitize: the drive supports no sanitize action"
[ "$(sum nvme-after-refusal)" = "$filled" ] || fail "the refused sanitize changed the NVMe disk"

# Format NVM: QEMU 7.2 reports FNA 0 (no crypto erase, bit 2), so the daemon sends SES 1 (user
# data erase) for its namespace only. QEMU's format writes zeros over the namespace: every byte
# reads back zero (none of the data written is left), and the daemon's proof says the same.
# "proven": none of its 16 markers left and every sampled extent (none of them blank before) changed.
fw_checks() {
        is "$1" '"\(.state) \(.pass_list | join(","))"' "done nvme-format" "$2"
        is "$1" '"\(.report.job) \(.report.state) \(.report.nist_category) \(.report.purge_fallback) \(.report.caveat)"' \
                "$(echo "$1" | jq -r .id) done Purge null null" "$2: report"
        is "$1" '.report.passes[0].firmware.command | "\(.action) \(.command_set) \(.nsid) \(.all_namespaces) \(.ses) \(.ses_name)"' \
                "nvme-format nvme 1 false 1 user data erase" "$2: the command"
        is "$1" '.report.passes[0].firmware | "\(.started) \(.drive_status) \(.proven) \(.markers) \(.markers_survived) \(.samples_blank_before) \(.samples_unchanged) \(.returns)"' \
                "true done true 16 0 0 0 zeros" "$2: the proof"
}
f=$(wiped nvme-format)
is "$f" .method nvme-format "nvme-format"
fw_checks "$f" "nvme-format"
[ "$(sum nvme-formatted)" = "$zeros" ] || fail "the NVMe disk does not read back as zeros after Format NVM"
note "nvme-format: $(echo "$f" | jq -c .report.passes[0].firmware)"
# purge on the same disk, filled again: the strongest firmware erase it has is Format NVM.
f=$(wiped nvme-purge)
is "$f" .method purge "purge on the NVMe disk"
fw_checks "$f" "purge on the NVMe disk"
[ "$(sum nvme-purged)" = "$zeros" ] || fail "the NVMe disk does not read back as zeros after purge (Format NVM)"

# The USB disk: no firmware method passes the bridge; purge falls back to a random pass (Clear).
bridge="behind a USB bridge: firmware erase commands through USB bridges are known to lock or brick drives"
for m in sanitize ata-secure-erase; do
        refused "refuse-usb-$m" "$usb: refusing $m: "
        refused "refuse-usb-$m" "$bridge"
done
f=$(wiped usb-purge)
is "$f" '"\(.state) \(.method) \(.pass_list | join(",")) \(.firmware)"' "done purge random null" "purge on the USB disk"
is "$f" '"\(.report.nist_category) \(.report.passes[0].written) \(.report.passes[0].verified.result) \(.report.passes[0].firmware)"' \
        "Clear true passed null" "purge on the USB disk: report"
is "$f" '.report.purge_fallback | startswith("'"$bridge"'") and endswith("; pass 1 is the fallback random (NIST SP 800-88 Clear)")' \
        true "purge on the USB disk: the fallback named"

# The SATA disk: QEMU's IDE disk has neither the security nor the sanitize feature set.
refused refuse-sata-ata-secure-erase "$sata: refusing ata-secure-erase: the security feature set is not supported"
refused refuse-sata-sanitize "$sata: refusing sanitize: the sanitize feature set is not supported"
refused refuse-sata-sanitize "the sanitize feature set is not supported"
refused refuse-sata-nvme-format "$sata: refusing nvme-format: not an NVMe drive"

# No refusal started a job: the daemon ran exactly these five, on these disks.
jobs=$(section daemon-log | sed -n 's/^<[0-9]>job \([0-9]*\): \([^:]*\): started: .*/\1 \2/p' | tr '\n' ' ')
[ "$jobs" = "1 $nvme 2 $sata 3 $nvme 4 $nvme 5 $usb " ] || fail "the daemon in the VM started the jobs '$jobs', expected five"

pass "NVMe, SATA and USB disks probed, two wiped, the NVMe disk formatted twice, the firmware methods refused where they must be, in a $ACCEL VM in $((SECONDS - started)) s"
