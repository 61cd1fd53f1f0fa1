#!/bin/sh
# wiped end-of-job hook: spin a wiped drive down, so that it is cool and still when pulled.
#
#   job-end-hook = /usr/share/doc/wiped/examples/hooks/spin-down.sh
#
# Only after "done" (a failed drive is left as it is, for a look). An ATA drive (SATA, or
# transport "ata") gets STANDBY IMMEDIATE from hdparm -y (Debian package "hdparm"); others (SAS,
# USB bridges) a SCSI START STOP UNIT from sg_start --stop (package "sg3-utils"). Solid-state
# and loop devices are skipped: nothing spins.
[ "${WIPED_STATE:-}" = "done" ] || exit 0
[ -n "${WIPED_DEVICE:-}" ] || { echo "WIPED_DEVICE not set: run by wiped" >&2; exit 2; }
case ${WIPED_TRANSPORT:-} in
loop|nvme|mmc|virtio) exit 0 ;;
esac
# Rotational only (sysfs says so; 1: a disk with heads).
rot=/sys/block/${WIPED_DEVICE_NAME:-none}/queue/rotational
[ -r "$rot" ] && [ "$(cat "$rot")" = 0 ] && exit 0

case ${WIPED_TRANSPORT:-} in
sata|ata)
        command -v hdparm >/dev/null 2>&1 || { echo "hdparm missing (package hdparm)" >&2; exit 1; }
        exec hdparm -y "$WIPED_DEVICE"
        ;;
*)
        command -v sg_start >/dev/null 2>&1 || { echo "sg_start missing (package sg3-utils)" >&2; exit 1; }
        exec sg_start --stop "$WIPED_DEVICE"
        ;;
esac
