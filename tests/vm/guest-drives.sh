#!/bin/sh
# The guest half of tests/integration/vm-drives.sh, run by /init in the VM (busybox sh): find the
# emulated NVMe, SATA and USB disks, start wiped, probe the three, wipe the NVMe disk (random) and
# the SATA disk (zeroout) with --verify all, read the SATA disk back; then the firmware methods:
# Format NVM (nvme-format, and purge) on the NVMe disk filled with data, sums before and after,
# and the methods that must be refused on each disk (purge on the USB disk falls back to a random
# pass). The host checks the output.
#
# Output for the host, on the serial console:
#       @@@ BEGIN NAME                  a section follows (e.g. the JSON of a probe)
#       @@@ END NAME RC                 it ended; RC is the exit status of its command
#       @@@ DEV ROLE PATH               the disk found for ROLE (nvme, sata, usb)
#       @@@ SUM WHAT MD5                the MD5 of the whole NVMe disk at the point WHAT
#       @@@ UP WHAT UPTIME              the guest's uptime when WHAT was reached
#       @@@ ERROR TEXT                  a fixture failed (the host reports it as a hard error)
SOCK=/run/wiped.sock
STATE=/run/wiped-state

# section NAME COMMAND...: COMMAND's output between markers (through a file: on the console,
# wipectl would draw its live progress screen).
section() {
        name=$1
        shift
        "$@" > /run/section.out 2>&1
        rc=$?
        echo "@@@ BEGIN $name"
        cat /run/section.out
        echo "@@@ END $name $rc"
        return $rc
}

# The disks, by where they hang in sysfs (not by name: the order of sdX depends on probing).
find_disks() {
        NVME='' SATA='' USB=''
        for b in /sys/block/*; do
                [ -e "$b/device" ] || continue
                path=$(readlink -f "$b/device")
                case $path in
                */nvme/*) NVME=/dev/${b##*/} ;;
                */usb[0-9]*/*) USB=/dev/${b##*/} ;;
                */ata[0-9]*/*) SATA=/dev/${b##*/} ;;
                esac
        done
        [ -n "$NVME" ] && [ -n "$SATA" ] && [ -n "$USB" ] && [ -b "$NVME" ] && [ -b "$SATA" ] && [ -b "$USB" ]
}
i=0
until find_disks; do
        i=$((i + 1))
        if [ $i -gt 600 ]; then
                echo "@@@ ERROR the three disks did not appear within 60 s (nvme '$NVME' sata '$SATA' usb '$USB')"
                ls -l /sys/block
                exit 1
        fi
        sleep 0.1
done
echo "@@@ UP disks $(cut -d ' ' -f 1 /proc/uptime)"
echo "@@@ DEV nvme $NVME"
echo "@@@ DEV sata $SATA"
echo "@@@ DEV usb $USB"

mkdir -p "$STATE"
wiped --foreground --socket "$SOCK" --state-dir "$STATE" --config /dev/null > /run/daemon.log 2>&1 &
pid=$!
i=0
until [ -S "$SOCK" ] && wipectl --socket "$SOCK" version > /dev/null 2>&1; do
        i=$((i + 1))
        if ! kill -0 $pid 2> /dev/null || [ $i -gt 600 ]; then
                echo "@@@ ERROR wiped did not come up"
                section daemon-log cat /run/daemon.log
                exit 1
        fi
        sleep 0.1
done
echo "@@@ UP wiped $(cut -d ' ' -f 1 /proc/uptime)"

w() { wipectl --socket "$SOCK" "$@"; }
section probe-nvme w --json probe "$NVME"
section probe-sata w --json probe "$SATA"
section probe-usb w --json probe "$USB"

# Real wipes through the kernel's NVMe and libata drivers.
section wipe-nvme w --json wipe --yes --method random --verify all "$NVME"
section wipe-sata w --json wipe --yes --method zeroout --verify all "$SATA"
echo "@@@ UP wiped-disks $(cut -d ' ' -f 1 /proc/uptime)"
# Every byte of the SATA disk reads back as zero (the page cache dropped: from the disk).
echo 3 > /proc/sys/vm/drop_caches
section cmp-sata sh -c "head -c \$(blockdev --getsize64 $SATA) /dev/zero | cmp - $SATA && echo zero"

# --- the firmware methods --------------------------------------------------------------------------
# The NVMe disk gets random data (its MD5 printed: "@@@ SUM WHAT MD5"); a refused sanitize leaves
# it as it was; Format NVM erases it; filled again, purge resolves to Format NVM and erases it too
# (the daemon's proof says that its sampled extents all held data before).
# Every sum reads the whole disk O_DIRECT, from the drive, not the page cache.
sum() { dd if="$1" bs=1M iflag=direct status=none | md5sum | cut -d ' ' -f 1; }
# fill DEV: 1 MiB of random bytes, over and over (quicker under TCG than /dev/urandom for all of it).
fill() {
        dd if=/dev/urandom of=/run/chunk bs=1M count=1 status=none &&
                for i in $(seq $(($(blockdev --getsize64 "$1") >> 20))); do cat /run/chunk; done |
                dd of="$1" bs=1M iflag=fullblock oflag=direct status=none
}
# wipe_report NAME ARGS...: "wipe --json ARGS" as section wipe-NAME, then its job's report as
# section report-NAME (the job's id is the first "id" of the wipe's reply).
wipe_report() {
        what=$1
        shift
        section "wipe-$what" w --json wipe --yes "$@"
        id=$(sed -n 's/^ *"id": \([0-9][0-9]*\),*$/\1/p' /run/section.out | head -n 1)
        section "report-$what" w --json report "${id:-none}"
}
# refused NAME ARGS...: a wipe that must be refused, as section NAME (its exit status is the END's).
refused() {
        name=$1
        shift
        section "$name" w wipe --yes "$@"
}
section fill-nvme fill "$NVME"
echo "@@@ UP filled $(cut -d ' ' -f 1 /proc/uptime)"
echo "@@@ SUM nvme-filled $(sum "$NVME")"
refused refuse-nvme-sanitize --method sanitize "$NVME"
echo "@@@ SUM nvme-after-refusal $(sum "$NVME")"
wipe_report nvme-format --method nvme-format "$NVME"
echo "@@@ SUM nvme-formatted $(sum "$NVME")"
section fill-nvme-2 fill "$NVME"
wipe_report nvme-purge --method purge "$NVME"
echo "@@@ SUM nvme-purged $(sum "$NVME")"

echo "@@@ UP nvme-firmware $(cut -d ' ' -f 1 /proc/uptime)"
# The USB disk: every firmware method refused (the bridge), purge falls back to a random pass.
for m in sanitize ata-secure-erase; do
        refused "refuse-usb-$m" --method "$m" "$USB"
done
echo "@@@ UP usb-refusals $(cut -d ' ' -f 1 /proc/uptime)"
wipe_report usb-purge --method purge "$USB"

echo "@@@ UP usb-purge $(cut -d ' ' -f 1 /proc/uptime)"
# The SATA disk: QEMU's IDE disk has neither the security nor the sanitize feature set.
for m in ata-secure-erase sanitize nvme-format; do
        refused "refuse-sata-$m" --method "$m" "$SATA"
done
echo "@@@ UP firmware $(cut -d ' ' -f 1 /proc/uptime)"

kill -TERM $pid
wait $pid
echo "@@@ DAEMON-EXIT $?"
section daemon-log cat /run/daemon.log
exit 0
