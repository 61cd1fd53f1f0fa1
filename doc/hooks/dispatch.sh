#!/bin/sh
# wiped end-of-job hook: run every executable file of a directory, in name order, as run-parts
# does, each with the job's environment (wiped(8) HOOKS); so a site combines the examples:
#
#   job-end-hook = /etc/wiped/hooks/dispatch.sh
#   # and link the ones it wants:  ln -s .../led-ledctl.sh /etc/wiped/hooks.d/10-led
#
# Needs: nothing but sh. The directory is WIPED_HOOKS_DIR, /etc/wiped/hooks.d by default (names
# made of letters, digits, '-' and '_' only, like run-parts: editor backups and *.dpkg-old are
# skipped). Every script runs even when one fails; the exit status is the first failure's, so the
# journal says that something went wrong (each script's output is there too, prefixed with the job).
dir=${WIPED_HOOKS_DIR:-/etc/wiped/hooks.d}
status=0
[ -d "$dir" ] || exit 0
for f in "$dir"/*; do
        name=${f##*/}
        case $name in
        *[!A-Za-z0-9_-]*) continue ;;
        esac
        if [ ! -f "$f" ] || [ ! -x "$f" ]; then continue; fi
        "$f"
        rc=$?
        if [ "$rc" -ne 0 ]; then
                echo "$name: exit status $rc" >&2
                [ "$status" -eq 0 ] && status=$rc
        fi
done
exit "$status"
