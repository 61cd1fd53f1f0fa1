#!/bin/sh
# The guest half of tests/integration/vm-drives.sh, run by /init in the VM (busybox sh): find the
# emulated NVMe, SATA and USB disks, start wiped, probe the three, wipe the NVMe disk (random) and
# the SATA disk (zeroout) with --verify all, read the SATA disk back. The host checks the output.
#
# Output for the host, on the serial console:
#       @@@ BEGIN NAME                  a section follows (e.g. the JSON of a probe)
#       @@@ END NAME RC                 it ended; RC is the exit status of its command
#       @@@ DEV ROLE PATH               the disk found for ROLE (nvme, sata, usb)
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

kill -TERM $pid
wait $pid
echo "@@@ DAEMON-EXIT $?"
section daemon-log cat /run/daemon.log
exit 0
