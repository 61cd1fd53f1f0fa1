#!/bin/bash
# Reports delivered to a collector (wiped(8) DELIVERY) that is a real HTTP server on 127.0.0.1
# (tests/helpers/collector.py): while it refuses connections and while it hangs (report-timeout
# ends each attempt), a report stays pending in STATE_DIR/outbox, shown by status with its error,
# across a SIGTERM and a SIGKILL of the daemon; an outbox file whose name is not its hash goes to
# outbox/bad/. Once the collector accepts, each report arrives byte for byte (its SHA-256 is its
# Idempotency-Key and the report id of status), passes report --check, and is stored once even
# though the collector answered 500 to a first arrival (the resend carries the same key). A
# report rewritten by a later verification is a new report, delivered too. Then the same over
# HTTPS with report-ca-file.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

command -v python3 > /dev/null || skip "python3 missing (the collector)"

COL=$TEST_DIR/collector
COLLECTOR_PID=
mkdir -p "$COL"
touch "$COL/arrivals"

# start_collector [OPTION...]: the collector in the background; waits for its port file.
start_collector() {
        rm -f "$COL/port"
        python3 "$top_srcdir/tests/helpers/collector.py" "$COL" "$@" >> "$TEST_DIR/collector.log" 2>&1 &
        COLLECTOR_PID=$!
        register_pid $COLLECTOR_PID
        for _ in $(seq 100); do
                [ -s "$COL/port" ] && return 0
                kill -0 $COLLECTOR_PID 2>/dev/null || hard_error "the collector exited: $(cat "$TEST_DIR/collector.log")"
                sleep 0.1
        done
        hard_error "the collector did not write its port"
}
stop_collector() { stop_pid $COLLECTOR_PID; COLLECTOR_PID=; }
mode() { echo "$1" > "$COL/mode"; }

status_json() { wipectl --json status; }
# delivery_of ID FIELD: a field of the job's delivery object.
delivery_of() { wipectl --json status "$1" | jq -r ".jobs[0].delivery.$2"; }
has_error() { [ "$(delivery_of "$1" last_error)" != null ] && grep -qi -- "$2" <<< "$(delivery_of "$1" last_error)"; }
is_delivered() { [ "$(delivery_of "$1" state)" = delivered ]; }
arrivals_of() { grep -c "^$1 " "$COL/arrivals" 2>/dev/null; }
arrived() { [ "$(arrivals_of "$1")" -ge "$2" ]; }

# A free port: the collector's, which then stops: nothing listens there (connection refused).
start_collector
PORT=$(cat "$COL/port")
stop_collector

cat > "$TEST_DIR/wiped.conf" <<EOF
report-url = http://127.0.0.1:$PORT/reports
report-header = Authorization: Bearer not-a-real-secret
report-timeout = 2
report-retry-max-interval = 2
metrics-textfile = $TEST_DIR/wiped.prom
metrics-interval = 1
EOF
# --check-config shows the header's name, never its value.
"$WIPED" --config "$TEST_DIR/wiped.conf" --check-config > "$TEST_DIR/check.out" 2>&1 ||
        fail "--check-config: $(cat "$TEST_DIR/check.out")"
grep -q '^report-header = Authorization: (value not shown)$' "$TEST_DIR/check.out" || fail "check-config: $(cat "$TEST_DIR/check.out")"
! grep -q not-a-real-secret "$TEST_DIR/check.out" || fail "--check-config prints the header's secret"
# Bad values are refused when the file is read.
for bad in 'report-url = ftp://127.0.0.1/x' 'report-url = http://' 'report-header = Idempotency-Key: 1' \
           'report-header = no colon' 'report-timeout = 0'; do
        echo "$bad" > "$TEST_DIR/bad.conf"
        "$WIPED" --config "$TEST_DIR/bad.conf" --check-config > /dev/null 2>&1 && fail "--check-config accepts '$bad'"
done
# A header refused for a bad character: its name in the error, never its value (a secret).
printf 'report-header = Authorization: Bearer not-a-real-secret\001\n' > "$TEST_DIR/bad.conf"
"$WIPED" --config "$TEST_DIR/bad.conf" --check-config > "$TEST_DIR/check.out" 2>&1 &&
        fail "--check-config accepts a header with a control character"
grep -q 'report-header = Authorization: (value not shown): not a header' "$TEST_DIR/check.out" ||
        fail "--check-config of a bad header: $(cat "$TEST_DIR/check.out")"
! grep -q not-a-real-secret "$TEST_DIR/check.out" || fail "--check-config prints a refused header's secret"

dev=$(make_loop $((16 << 20)))
chmod 0644 "$TEST_DIR/wiped.conf"
start_daemon --config "$TEST_DIR/wiped.conf" --policy-dir none --threads 2
# A file with a header (a secret, maybe) that others may read: a warning.
grep -q "wiped.conf: others may read it (mode 0644), and it holds report-header values" "$TEST_DIR/daemon.log" ||
        fail "no warning about a wiped.conf that others may read"
chmod 0600 "$TEST_DIR/wiped.conf"

# --- refused ----------------------------------------------------------------------------------
out=$(wipectl --json wipe --yes --verify none "$dev") || fail "wipe exited $?: $out"
id=$(echo "$out" | jq -r '.jobs[0].job')
[ "$(wait_job "$id")" = "done" ] || fail "job $id did not end done"
wait_until 30 "a report of job $id refused by the collector in its status" has_error "$id" "connect"
report=$STATE/reports/$id.json
rid=$(sha256sum "$report" | cut -d' ' -f1)
st=$(status_json)
jq_is "$st" ".jobs[0].report_id" "$rid" "report id of job $id"
jq_is "$st" ".jobs[0].delivery.state" pending "delivery of job $id while refused"
jq_is "$st" ".reports_pending_delivery" 1 "pending reports while refused"
jq_is "$st" ".collector.host" "127.0.0.1:$PORT" "collector of the status"
cmp -s "$report" "$STATE/outbox/$rid.json" || fail "outbox/$rid.json is not the report of job $id"
[ "$(stat -c %a "$STATE/outbox/$rid.json")" = 600 ] || fail "outbox file mode $(stat -c %a "$STATE/outbox/$rid.json")"
wipectl status > "$TEST_DIR/status.txt" || fail "status"
grep -q "^Reports pending delivery: 1 (collector 127.0.0.1:$PORT; last error: " "$TEST_DIR/status.txt" ||
        fail "status text: $(cat "$TEST_DIR/status.txt")"
grep -q "^job $id: report delivery pending (attempt [0-9]*: " "$TEST_DIR/status.txt" ||
        fail "status text: $(cat "$TEST_DIR/status.txt")"
wait_until 30 "the pending report in the metrics" grep -q '^wiped_reports_pending_delivery 1$' "$TEST_DIR/wiped.prom"
wait_until 30 "the failed attempts in the metrics" grep -q '^wiped_report_deliveries_total{outcome="failed_attempt"} [1-9]' \
        "$TEST_DIR/wiped.prom"

# A reload keeps the report-* settings (they need a restart) and never logs a header's value.
sed -i 's/^report-header = .*/report-header = Authorization: Bearer other-secret/' "$TEST_DIR/wiped.conf"
kill -HUP "$DAEMON_PID"
wait_match "$TEST_DIR/daemon.log" "report-header = \(not shown\): needs a restart" ||
        fail "no warning about report-header at the reload: $(tail -5 "$TEST_DIR/daemon.log")"
! grep -q "secret" "$TEST_DIR/daemon.log" || fail "the log shows a header's value: $(grep secret "$TEST_DIR/daemon.log")"
sed -i 's/^report-header = .*/report-header = Authorization: Bearer not-a-real-secret/' "$TEST_DIR/wiped.conf"

# --- hang: the collector takes the request and never answers ----------------------------------
mode hang
start_collector --port "$PORT"
wait_until 30 "the report at the hanging collector" arrived "$rid" 1
wait_until 30 "the hanging collector's timeout in the status of job $id" has_error "$id" "time"
jq_is "$(status_json)" ".jobs[0].delivery.state" pending "delivery of job $id while the collector hangs"
grep "^$rid " "$COL/arrivals" | grep -q " $id [0-9a-f]* hang Bearer_not-a-real-secret /reports$" ||
        fail "arrivals: $(cat "$COL/arrivals")"
grep -qi "^X-Wiped-Host: $(cat /etc/machine-id 2>/dev/null)" "$COL/last-headers" || fail "headers: $(cat "$COL/last-headers")"
grep -qi "^Content-Type: application/json" "$COL/last-headers" || fail "headers: $(cat "$COL/last-headers")"

# SIGTERM while an attempt hangs: the daemon stops (the transfer is aborted), the outbox stays.
n=$(arrivals_of "$rid")
wait_until 30 "another attempt at the hanging collector" arrived "$rid" $((n + 1))
stop_daemon || fail "wiped exited $? on SIGTERM during a delivery"
[ -f "$STATE/outbox/$rid.json" ] || fail "outbox/$rid.json gone after a SIGTERM"
start_daemon --config "$TEST_DIR/wiped.conf" --policy-dir none --threads 2
jq_is "$(status_json)" '"\(.jobs[0].report_id) \(.jobs[0].delivery.state) \(.reports_pending_delivery)"' \
        "$rid pending 1" "job $id after a restart"
# SIGKILL, and an outbox file that is not what its name says: moved to bad/.
kill_daemon
bad=0000000000000000000000000000000000000000000000000000000000000000
echo '{"job":99}' > "$STATE/outbox/$bad.json"
[ -f "$STATE/outbox/$rid.json" ] || fail "outbox/$rid.json gone after a SIGKILL"
start_daemon --config "$TEST_DIR/wiped.conf" --policy-dir none --threads 2
[ ! -e "$STATE/outbox/$bad.json" ] && ls "$STATE/outbox/bad/$bad.json".* > /dev/null 2>&1 ||
        fail "a torn outbox file was not moved to outbox/bad/: $(ls -R "$STATE/outbox")"
grep -q "$bad.json: its SHA-256 is not its name" "$TEST_DIR/daemon.log" || fail "the bad outbox file is not logged"
jq_is "$(status_json)" ".reports_pending_delivery" 1 "pending reports after a SIGKILL"

# --- a 400 is logged as an error and tried again; a redirect is not followed -----------------------
n=$(arrivals_of "$rid")
mode 400
wait_until 30 "an arrival at the collector that answers 400" arrived "$rid" $((n + 1))
wait_until 30 "the 400 in job $id's status" has_error "$id" "HTTP 400: no such tenant"
wait_match "$TEST_DIR/daemon.log" "^<3>job $id: report $rid refused by 127.0.0.1:$PORT: HTTP 400: no such tenant" ||
        fail "the 400 is not logged as an error"
n=$(arrivals_of "$rid")
mode redirect
wait_until 30 "an arrival at the collector that redirects" arrived "$rid" $((n + 1))
wait_until 30 "the 307 in job $id's status" has_error "$id" "HTTP 307"
jq_is "$(status_json)" ".jobs[0].delivery.state" pending "delivery of job $id after a redirect"
! grep -q " /elsewhere$" "$COL/arrivals" || fail "the redirect was followed: $(cat "$COL/arrivals")"

# --- the collector stores it but answers 500, then accepts: one report, two arrivals -----------
n=$(arrivals_of "$rid")
mode store500
wait_until 30 "an arrival at the collector that answers 500" arrived "$rid" $((n + 1))
[ -f "$COL/store/$rid.json" ] || fail "the collector did not store $rid"
mode accept
wait_until 30 "job $id's report delivered" is_delivered "$id"
st=$(status_json)
jq_is "$st" ".reports_pending_delivery" 0 "pending reports once delivered"
jq_is "$st" '.jobs[0].delivery | "\(.delivered_at != null) \(.last_error)"' "true null" "delivery of job $id"
[ ! -e "$STATE/outbox/$rid.json" ] || fail "outbox/$rid.json stays after its delivery"
[ -f "$STATE/outbox/delivered/$rid" ] || fail "no delivery marker for $rid"
cmp -s "$report" "$COL/store/$rid.json" || fail "the stored report differs from $report"
[ "$(sha256sum "$COL/store/$rid.json" | cut -d' ' -f1)" = "$rid" ] || fail "the stored report's hash is not its key"
wipectl report --check "$COL/store/$rid.json" --key "$STATE/host-key.pub" > /dev/null ||
        fail "the delivered report fails its check"
# Every arrival carried the same key and the same bytes; the collector holds one file for it.
[ "$(grep "^$rid " "$COL/arrivals" | cut -d' ' -f4 | sort -u)" = "$rid" ] || fail "arrivals: $(cat "$COL/arrivals")"
[ "$(arrivals_of "$rid")" -ge 2 ] || fail "no resend after the 500: $(cat "$COL/arrivals")"
[ "$(ls "$COL/store" | wc -l)" = 1 ] || fail "the collector stored $(ls "$COL/store")"
! wipectl status | grep -q "delivery pending" || fail "status still shows a pending delivery"

# --- a later verification writes a new report: a new id, delivered too --------------------------
out=$(wipectl --json verify --verify all "$id") || fail "verify $id exited $?: $out"
wait_until 30 "job $id's new report id" test "$(wipectl --json status "$id" | jq -r '.jobs[0].report_id')" != "$rid"
rid2=$(sha256sum "$report" | cut -d' ' -f1)
[ "$rid2" != "$rid" ] || fail "the report of job $id did not change after a verification"
wait_until 30 "job $id's second report delivered" is_delivered "$id"
jq_is "$(status_json)" ".jobs[0].report_id" "$rid2" "report id after the verification"
cmp -s "$report" "$COL/store/$rid2.json" || fail "the second report differs from what the collector stored"
[ "$(arrivals_of "$rid2")" = 1 ] || fail "arrivals of $rid2: $(cat "$COL/arrivals")"
# The restart keeps what was delivered.
stop_daemon || fail "stop"
start_daemon --config "$TEST_DIR/wiped.conf" --policy-dir none --threads 2
jq_is "$(status_json)" '"\(.jobs[0].delivery.state) \(.reports_pending_delivery)"' "delivered 0" "after a restart"
[ "$(arrivals_of "$rid")" -ge 2 ] && [ "$(arrivals_of "$rid2")" = 1 ] || fail "a delivered report was sent again"
stop_daemon || fail "stop"
stop_collector

# --- HTTPS with the collector's own CA ------------------------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
        -keyout "$TEST_DIR/tls.key" -out "$TEST_DIR/tls.crt" > /dev/null 2>&1 || hard_error "openssl req failed"
mode accept
start_collector --port "$PORT" --tls "$TEST_DIR/tls.crt" "$TEST_DIR/tls.key"
# Without the CA the certificate is not trusted: pending; with it, delivered.
sed -i "s|^report-url = .*|report-url = https://127.0.0.1:$PORT/reports|" "$TEST_DIR/wiped.conf"
start_daemon --config "$TEST_DIR/wiped.conf" --policy-dir none --threads 2
out=$(wipectl --json wipe --yes --verify none "$dev") || fail "wipe exited $?: $out"
id3=$(echo "$out" | jq -r '.jobs[0].job')
[ "$(wait_job "$id3")" = "done" ] || fail "job $id3 did not end done"
wait_until 30 "an untrusted certificate in job $id3's delivery" has_error "$id3" "certificate"
stop_daemon || fail "stop"
echo "report-ca-file = $TEST_DIR/tls.crt" >> "$TEST_DIR/wiped.conf"
start_daemon --config "$TEST_DIR/wiped.conf" --policy-dir none --threads 2
wait_until 30 "job $id3's report delivered over HTTPS" is_delivered "$id3"
rid3=$(sha256sum "$STATE/reports/$id3.json" | cut -d' ' -f1)
cmp -s "$STATE/reports/$id3.json" "$COL/store/$rid3.json" || fail "the report delivered over HTTPS differs"
stop_daemon || fail "stop"

# --- without report-url: "disabled", nothing pending, no collector ---------------------------------
start_daemon --threads 2
st=$(wipectl --json status "$id3")
jq_is "$st" '"\(.jobs[0].report_id) \(.jobs[0].delivery.state) \(.reports_pending_delivery) \(.collector)"' \
        "$rid3 disabled 0 null" "job $id3 without report-url"
stop_daemon || fail "stop"
pass
