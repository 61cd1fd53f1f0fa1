#!/bin/sh
# wiped end-of-job hook: upload the job's signed report (WIPED_REPORT) to an HTTP(S) endpoint
# with curl (Debian package "curl").
#
#   job-end-hook = /usr/share/doc/wiped/examples/hooks/upload-report.sh
#
# Needs /etc/wiped/hooks.env (mode 0600: it may hold a token) with
#   WIPED_UPLOAD_URL=https://reports.example.org/wiped/   (the report is POSTed there)
#   WIPED_UPLOAD_TOKEN=...                                 (optional: sent as a Bearer token)
# The hook runs at least once per job end (again after a daemon restart that came first): the
# receiving side should accept the same report twice (it is named by host and job id). A failed
# upload exits non-zero, which the journal shows; `wipectl report ID` gives the report again.
# curl may retry for minutes: give it room with hook-timeout (e.g. 300).
# A native alternative: report-url in wiped.conf (wiped(8) DELIVERY) has the daemon POST every
# report itself, from a spool in the state directory that survives restarts, retried until the
# collector takes it, with an Idempotency-Key (the report's SHA-256) so it is never lost nor
# held twice; wipectl status shows what is pending.
env_file=${WIPED_HOOKS_ENV:-/etc/wiped/hooks.env}
# shellcheck source=/dev/null
[ -r "$env_file" ] && . "$env_file"
command -v curl >/dev/null 2>&1 || { echo "curl missing (package curl)" >&2; exit 1; }
[ -n "${WIPED_UPLOAD_URL:-}" ] || { echo "WIPED_UPLOAD_URL not set (in $env_file)" >&2; exit 2; }
[ -r "${WIPED_REPORT:-}" ] || { echo "job ${WIPED_JOB:-?}: no report file '${WIPED_REPORT:-}'" >&2; exit 3; }

name="$(hostname)-job-${WIPED_JOB}.json"
if [ -n "${WIPED_UPLOAD_TOKEN:-}" ]; then
        # The token through a file descriptor, not the command line (ps shows that).
        printf 'header = "Authorization: Bearer %s"\n' "$WIPED_UPLOAD_TOKEN" |
                curl --silent --show-error --fail --retry 5 --retry-connrefused --max-time 30 \
                        --config - -H "Content-Type: application/json" -H "X-Wiped-Name: $name" \
                        --data-binary "@$WIPED_REPORT" "$WIPED_UPLOAD_URL"
        exit $?
fi
exec curl --silent --show-error --fail --retry 5 --retry-connrefused --max-time 30 \
        -H "Content-Type: application/json" -H "X-Wiped-Name: $name" \
        --data-binary "@$WIPED_REPORT" "$WIPED_UPLOAD_URL"
