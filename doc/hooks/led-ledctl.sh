#!/bin/sh
# wiped end-of-job hook: light the bay LED of the drive that was wiped, with ledctl (ledmon,
# Debian package "ledmon"; the enclosure or backplane must support it: SES-2, SGPIO, VMD, NPEM).
#
#   job-end-hook = /usr/share/doc/wiped/examples/hooks/led-ledctl.sh
#
# done: LED back to normal (the drive may be pulled); anything else (failed, cancelled,
# done-with-errors): "failure" pattern, so the bay that needs a look is the one lit. ledctl
# takes the device node (WIPED_DEVICE). Needs root (the daemon runs hooks as itself: root).
command -v ledctl >/dev/null 2>&1 || { echo "ledctl missing (package ledmon)" >&2; exit 1; }
[ -n "${WIPED_DEVICE:-}" ] || { echo "WIPED_DEVICE not set: run by wiped" >&2; exit 2; }

case ${WIPED_STATE:-} in
done)
        exec ledctl "normal=$WIPED_DEVICE"
        ;;
*)
        exec ledctl "failure=$WIPED_DEVICE"
        ;;
esac
