#!/bin/sh
# wiped end-of-job hook: set the fault LED of the drive's slot in a SAS enclosure with sg_ses
# (sg3-utils, Debian package "sg3-utils"), for enclosures that ledctl does not drive.
#
#   job-end-hook = /usr/share/doc/wiped/examples/hooks/led-sg_ses.sh
#
# Needs: the enclosure's SES device (WIPED_SES_DEVICE, e.g. /dev/sg3 or its /dev/bsg path: see
# "lsscsi -g", type "enclosu") and, to find the slot, either the drive's SAS address (taken from
# sysfs: /sys/block/NAME/device/sas_address) or a map of by-path names to slot numbers in
# WIPED_SES_SLOTS ("BY_PATH_NAME=SLOT ..."). done: fault off (and locate off); failed,
# cancelled, done-with-errors: fault on. Settings may come from /etc/wiped/hooks.env.
# shellcheck source=/dev/null
[ -r /etc/wiped/hooks.env ] && . /etc/wiped/hooks.env
command -v sg_ses >/dev/null 2>&1 || { echo "sg_ses missing (package sg3-utils)" >&2; exit 1; }
ses=${WIPED_SES_DEVICE:-}
[ -n "$ses" ] || { echo "WIPED_SES_DEVICE not set (the enclosure's /dev/sgN)" >&2; exit 2; }

# The slot: by SAS address when the kernel knows it, else from the map by the bay's by-path name.
where=
addr_file=/sys/block/${WIPED_DEVICE_NAME:-none}/device/sas_address
if [ -r "$addr_file" ]; then
        where="--sas-addr=$(cat "$addr_file")"
else
        bay=${WIPED_BY_PATH##*/}
        for pair in ${WIPED_SES_SLOTS:-}; do
                [ "${pair%%=*}" = "$bay" ] && where="--dev-slot-num=${pair#*=}"
        done
fi
[ -n "$where" ] || { echo "$WIPED_DEVICE: no SAS address and no slot for bay '${WIPED_BY_PATH:-}'" >&2; exit 3; }

if [ "${WIPED_STATE:-}" = "done" ]; then
        sg_ses "$where" --clear=locate "$ses" && exec sg_ses "$where" --clear=fault "$ses"
else
        exec sg_ses "$where" --set=fault "$ses"
fi
