#!/bin/sh
# wiped end-of-job hook: print a label for the wiped drive with lp (CUPS, Debian package
# "cups-client"), to stick on the drive or its caddy.
#
#   job-end-hook = /usr/share/doc/wiped/examples/hooks/print-label.sh
#
# Needs a CUPS queue for the label printer: WIPED_LABEL_PRINTER (default: the default queue),
# WIPED_LABEL_OPTIONS for lp's -o options (e.g. "media=w62h29"), both possibly from
# /etc/wiped/hooks.env. The label is plain text: state, serial, model, size, method, job and date.
# shellcheck source=/dev/null
[ -r /etc/wiped/hooks.env ] && . /etc/wiped/hooks.env
command -v lp >/dev/null 2>&1 || { echo "lp missing (package cups-client)" >&2; exit 1; }

set --
[ -n "${WIPED_LABEL_PRINTER:-}" ] && set -- "$@" -d "$WIPED_LABEL_PRINTER"
for o in ${WIPED_LABEL_OPTIONS:-}; do
        set -- "$@" -o "$o"
done

case ${WIPED_STATE:-} in
done) verdict="WIPED" ;;
done-with-errors) verdict="WIPED, BAD SECTORS SKIPPED" ;;
*) verdict="NOT WIPED (${WIPED_STATE:-?})" ;;
esac
[ "${WIPED_EVENT:-wipe}" = verify ] && verdict="$verdict, verified again: ${WIPED_VERIFY_RESULT:-?}"

size_gb=$(( ${WIPED_SIZE_BYTES:-0} / 1000000000 ))
{
        echo "$verdict"
        echo "S/N:    ${WIPED_SERIAL:-unknown}"
        echo "Model:  ${WIPED_VENDOR:+$WIPED_VENDOR }${WIPED_MODEL:-unknown}"
        echo "Size:   ${size_gb} GB"
        echo "Method: ${WIPED_METHOD:-?}"
        echo "Job:    $(hostname) #${WIPED_JOB:-?}"
        echo "Date:   $(date '+%Y-%m-%d %H:%M')"
} | lp -s "$@"
