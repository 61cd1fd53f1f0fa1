#!/bin/bash
# Prometheus metrics, end to end with the real programs: wiped serves /metrics on 127.0.0.1 and
# writes node_exporter's textfile; a real Prometheus scrapes both the endpoint and a real
# node_exporter reading that file, every second. While a rate-limited wipe runs, Prometheus's
# HTTP API must show its bytes done rising by both ways, its state going running -> done, a
# cancelled job and a failed one (a write error: ENOSPC under a full tmpfs) in the state metric.
# The endpoint answers 404 elsewhere and 405 to another method; one client holding many slow
# connections does not keep another from scraping; its text passes promtool check
# metrics. The shipped alerting rules pass promtool check rules and their unit tests, and every
# wiped_ metric that they and the Grafana dashboard use is one the daemon exports; every
# expression of the dashboard is a query Prometheus accepts.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
NODE_EXPORTER=${NODE_EXPORTER:-/usr/bin/prometheus-node-exporter}
PROMTOOL=${PROMTOOL:-/usr/bin/promtool}
CONTRIB=$top_srcdir/contrib
for b in "$PROMETHEUS" "$NODE_EXPORTER" "$PROMTOOL"; do
        [ -x "$b" ] || skip "$b missing (tools/install-deps installs prometheus and prometheus-node-exporter)"
done
command -v curl >/dev/null || hard_error "curl missing (tools/install-deps installs it)"
command -v python3 >/dev/null || skip "python3 missing (finds free ports)"

# The shipped rules and their unit tests (promtool runs them relative to the file's directory).
"$PROMTOOL" check rules "$CONTRIB/prometheus/wiped-alerts.yml" > "$TEST_DIR/promtool.out" 2>&1 ||
        fail "promtool check rules: $(cat "$TEST_DIR/promtool.out")"
(cd "$CONTRIB/prometheus" && "$PROMTOOL" test rules wiped-alerts.test.yml) > "$TEST_DIR/promtool.out" 2>&1 ||
        fail "promtool test rules: $(cat "$TEST_DIR/promtool.out")"
jq -e '.panels | length > 0' "$CONTRIB/grafana/wiped-dashboard.json" > /dev/null ||
        fail "the Grafana dashboard is not valid JSON with panels"

# Bad values of the keys are refused with the key named; good ones parse.
check_key() {
        printf '%s\n' "$1" > "$TEST_DIR/key.conf"
        "$WIPED" --config "$TEST_DIR/key.conf" --check-config > /dev/null 2> "$TEST_DIR/key.err"
}
for bad in 'metrics-listen = localhost:9137' 'metrics-listen = 127.0.0.1' 'metrics-listen = 127.0.0.1:0' \
           'metrics-listen = 127.0.0.1:65536' 'metrics-listen = ::1:9137' 'metrics-listen = [::1]9137' \
           'metrics-textfile = relative.prom' 'metrics-textfile = /tmp/wiped.txt' 'metrics-textfile = /tmp/.prom' \
           'metrics-interval = 0.5' 'metrics-interval = 3601' 'metrics-ended-max-age = -1'; do
        check_key "$bad" && fail "accepted: $bad"
        grep -q "key.conf:1: " "$TEST_DIR/key.err" || fail "$bad: $(cat "$TEST_DIR/key.err")"
done
for good in 'metrics-listen = 127.0.0.1:9137' 'metrics-listen = [::1]:9137' 'metrics-listen = 0.0.0.0:1' \
            'metrics-textfile = /var/lib/prometheus/node-exporter/wiped.prom' 'metrics-interval = 1' \
            'metrics-ended-max-age = 0'; do
        check_key "$good" || fail "refused: $good: $(cat "$TEST_DIR/key.err")"
done

# The systemd drop-in that opens the shipped unit to the metrics: every key known to systemd.
if command -v systemd-analyze > /dev/null; then
        unit=$TEST_DIR/unit
        mkdir -p "$unit/wiped.service.d" || hard_error "mkdir $unit"
        sed -e 's|@sbindir@/wiped|/bin/true|' "$top_srcdir/systemd/wiped.service.in" > "$unit/wiped.service"
        cp "$top_srcdir/systemd/wiped.socket" "$top_srcdir/systemd/wiped-status.socket" "$unit/" || hard_error "cp units"
        cp "$CONTRIB/prometheus/wiped-metrics.service.conf" "$unit/wiped.service.d/metrics.conf" || hard_error "cp drop-in"
        (cd "$unit" && SYSTEMD_UNIT_PATH=$unit: systemd-analyze verify --man=no wiped.service) > "$TEST_DIR/verify.out" 2>&1 ||
                fail "systemd-analyze verify with the drop-in: $(cat "$TEST_DIR/verify.out")"
        [ ! -s "$TEST_DIR/verify.out" ] || fail "systemd-analyze verify with the drop-in: $(cat "$TEST_DIR/verify.out")"
else
        note "systemd-analyze missing: the drop-in is not checked"
fi

# Three free TCP ports on 127.0.0.1 (the kernel's choice; a race with another program is unlikely).
read -r P_WIPED P_NODE P_PROM < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])') || hard_error "no free ports"
TEXTDIR=$TEST_DIR/textfile
mkdir "$TEXTDIR" || hard_error "mkdir $TEXTDIR"
WIPED_URL=http://127.0.0.1:$P_WIPED/metrics
PROM_URL=http://127.0.0.1:$P_PROM

big=$(make_loop 256M)
other=$(make_loop 256M)
thin=$(make_thin_loop 64M 16M) || exit $?
printf 'metrics-interval = 1\n' > "$TEST_DIR/wiped.conf"
start_daemon --config "$TEST_DIR/wiped.conf" --threads 2 --metrics-listen "127.0.0.1:$P_WIPED" \
        --metrics-textfile "$TEXTDIR/wiped.prom"

# A second daemon cannot have the same address: it says so and does not start.
if timeout 60 "$WIPED" --config /dev/null --socket "$TEST_DIR/second.sock" --state-dir "$TEST_DIR/second" --foreground \
        --metrics-listen "127.0.0.1:$P_WIPED" > "$TEST_DIR/second.log" 2>&1; then
        fail "a second daemon started on the metrics address in use"
fi
grep -q "metrics-listen 127.0.0.1:$P_WIPED: cannot serve the metrics" "$TEST_DIR/second.log" ||
        fail "second daemon: $(cat "$TEST_DIR/second.log")"

# The endpoint itself.
curl -sS -D "$TEST_DIR/headers" -o "$TEST_DIR/scrape" "$WIPED_URL" || fail "GET $WIPED_URL failed"
head -n 1 "$TEST_DIR/headers" | grep -q ' 200' || fail "GET /metrics: $(head -n 1 "$TEST_DIR/headers")"
grep -qi '^content-type: text/plain; version=0.0.4' "$TEST_DIR/headers" ||
        fail "content type: $(grep -i content-type "$TEST_DIR/headers")"
grep -qx 'wiped_up 1' "$TEST_DIR/scrape" || fail "no wiped_up 1 in the scrape"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P_WIPED/")" = 404 ] || fail "/ is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P_WIPED/metricsx")" = 404 ] || fail "/metricsx is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x=1 "$WIPED_URL")" = 405 ] || fail "POST is not 405"
[ -s "$TEXTDIR/wiped.prom" ] || fail "no textfile written at start"
[ "$(stat -c %a "$TEXTDIR/wiped.prom")" = 644 ] || fail "textfile mode $(stat -c %a "$TEXTDIR/wiped.prom")"

"$NODE_EXPORTER" --web.listen-address="127.0.0.1:$P_NODE" --collector.disable-defaults --collector.textfile \
        --collector.textfile.directory="$TEXTDIR" > "$TEST_DIR/node_exporter.log" 2>&1 &
register_pid $!
cat > "$TEST_DIR/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $CONTRIB/prometheus/wiped-alerts.yml
scrape_configs:
  - job_name: wiped
    static_configs:
      - targets: ['127.0.0.1:$P_WIPED']
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$P_NODE']
EOF
"$PROMETHEUS" --config.file="$TEST_DIR/prometheus.yml" --storage.tsdb.path="$TEST_DIR/prom" \
        --web.listen-address="127.0.0.1:$P_PROM" --log.level=warn > "$TEST_DIR/prometheus.log" 2>&1 &
register_pid $!
ready() { curl -sf "$PROM_URL/-/ready" > /dev/null; }
for _ in $(seq 300); do ready && break; sleep 0.1; done
ready || { cat "$TEST_DIR/prometheus.log" >&2; hard_error "prometheus did not come up on $PROM_URL"; }

# query EXPR: the value of the first series of an instant query, or nothing.
query() {
        curl -sf "$PROM_URL/api/v1/query" --data-urlencode "query=$1" |
                jq -r 'if .status == "success" and (.data.result | length) > 0 then .data.result[0].value[1] else empty end'
}
# wait_query EXPR SECONDS: until the query has a result (printed); fails the test after SECONDS.
wait_query() {
        local v end=$((SECONDS + $2))
        while :; do
                v=$(query "$1")
                [ -n "$v" ] && { echo "$v"; return 0; }
                [ "$SECONDS" -lt "$end" ] || fail "no result for $1 within $2 s"
                sleep 0.5
        done
}
wait_query 'up{job="wiped"} == 1' 60 > /dev/null
wait_query 'up{job="node"} == 1' 60 > /dev/null
wait_query 'wiped_up{job="node"} == 1' 60 > /dev/null

# A wipe held to about 16 s by its rate limit.
id=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 16M "$big" | jq -r '.jobs[0].id') ||
        fail "submit failed"
for path in wiped node; do
        sel="job=\"$path\",job_id=\"$id\",device=\"$big\""
        wait_query "wiped_job_state{$sel,state=\"running\"} == 1" 30 > /dev/null
        v1=$(wait_query "wiped_job_work_done_bytes{$sel} > 0" 30)
        v2=$(wait_query "wiped_job_work_done_bytes{$sel} > $v1" 30)
        note "$path: bytes done of job $id rose from $v1 to $v2"
        total=$(query "wiped_job_work_total_bytes{$sel}")
        [ "$total" = $((256 << 20)) ] || fail "$path: work total $total"
        [ "$(query "wiped_job_size_bytes{$sel}")" = $((256 << 20)) ] || fail "$path: size"
        wait_query "wiped_job_rate_bytes_per_second{$sel} > 0" 30 > /dev/null
        wait_query "wiped_job_eta_seconds{$sel} > 0" 30 > /dev/null
        # The last progress is recent while it runs.
        wait_query "time() - wiped_job_last_progress_timestamp_seconds{$sel} < 30" 30 > /dev/null
        [ "$(query "count(wiped_job_state{$sel})")" = 8 ] || fail "$path: not one series per state"
        [ "$(query "sum(wiped_job_state{$sel})")" = 1 ] || fail "$path: not exactly one state at 1"
done
[ "$(query "wiped_jobs{job=\"wiped\",state=\"running\"}")" = 1 ] || fail "wiped_jobs running is not 1"

# A second wipe, cancelled; a third that fails (the tmpfs under its file is full at 16 MiB).
id2=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 16M "$other" | jq -r '.jobs[0].id') ||
        fail "second submit failed"
wait_query "wiped_job_work_done_bytes{job=\"wiped\",job_id=\"$id2\"} > 0" 30 > /dev/null
wipectl cancel "$id2" > /dev/null || fail "cancel of job $id2 exited $?"
id3=$(wipectl --json wipe --yes --no-wait --verify none "$thin" | jq -r '.jobs[0].id') || fail "third submit failed"
for path in wiped node; do
        wait_query "wiped_job_state{job=\"$path\",job_id=\"$id2\",state=\"cancelled\"} == 1" 30 > /dev/null
        wait_query "wiped_job_state{job=\"$path\",job_id=\"$id3\",state=\"failed\"} == 1" 60 > /dev/null
        wait_query "wiped_jobs_ended_total{job=\"$path\",outcome=\"failed\"} >= 1" 30 > /dev/null
        wait_query "wiped_io_errors_total{job=\"$path\"} >= 1" 30 > /dev/null
done
# The shipped rule fires in the real Prometheus too.
wait_query "ALERTS{alertname=\"WipedJobFailed\",job=\"wiped\",job_id=\"$id3\",alertstate=\"firing\"}" 60 > /dev/null

# The first wipe ends done, seen by both ways.
state=$(wait_job "$id" 120)
[ "$state" = done ] || fail "job $id ended $state"
for path in wiped node; do
        sel="job=\"$path\",job_id=\"$id\""
        wait_query "wiped_job_state{$sel,state=\"done\"} == 1" 30 > /dev/null
        wait_query "wiped_job_work_done_bytes{$sel} == $((256 << 20))" 30 > /dev/null
        wait_query "wiped_job_ended_timestamp_seconds{$sel} > 0" 30 > /dev/null
done
wait_query 'wiped_jobs_ended_total{job="wiped",outcome="done"} >= 1' 30 > /dev/null
wait_query 'wiped_reports_written_total{job="wiped"} >= 3' 30 > /dev/null

# The exposition is valid, and every wiped_ metric the rules and the dashboard use is in it.
curl -sSf -o "$TEST_DIR/scrape" "$WIPED_URL" || fail "GET $WIPED_URL failed"
"$PROMTOOL" check metrics < "$TEST_DIR/scrape" > "$TEST_DIR/promtool.out" 2>&1 ||
        fail "promtool check metrics: $(cat "$TEST_DIR/promtool.out")"
grep -qx 'wiped_hooks_running 0' "$TEST_DIR/scrape" || fail "no wiped_hooks_running 0 in the scrape"
grep -q '^wiped_job_info{.*,policy=""} 1$' "$TEST_DIR/scrape" || fail "wiped_job_info has no empty policy label"
exported=$(sed -n 's/^# TYPE \([a-z_0-9]*\) .*/\1/p' "$TEST_DIR/scrape" | sort -u)
used=$( { grep -oE 'wiped_[a-z0-9_]*[a-z0-9]' "$CONTRIB/prometheus/wiped-alerts.yml"
          jq -r '[.. | strings] | join("\n")' "$CONTRIB/grafana/wiped-dashboard.json" |
                grep -oE 'wiped_[a-z0-9_]*[a-z0-9]'; } | sort -u)
[ -n "$used" ] || fail "no wiped_ metric found in the rules and the dashboard"
for m in $used; do
        grep -qx "$m" <<< "$exported" || fail "$m is used by the rules or the dashboard but not exported"
done
# Every expression of the dashboard is a query Prometheus accepts (with its variables set).
while IFS= read -r expr; do
        expr=${expr//\$instance/.*}
        expr=${expr//\$__range/5m}
        curl -sf "$PROM_URL/api/v1/query" --data-urlencode "query=$expr" | jq -e '.status == "success"' > /dev/null ||
                fail "the dashboard's query is refused: $expr"
done < <(jq -r '.. | .expr? // empty | strings' "$CONTRIB/grafana/wiped-dashboard.json")
# The series are labelled as wiped(8) says: job_id, device (the node), serial (empty: a loop device has none).
grep -q "^wiped_job_state{job_id=\"$id\",device=\"$big\",serial=\"\",state=\"done\"} 1$" "$TEST_DIR/scrape" ||
        fail "job $id's state series is not as documented: $(grep "^wiped_job_state{job_id=\"$id\"" "$TEST_DIR/scrape")"

# metrics-ended-max-age reloads: at 0, the ended jobs leave the per-job metrics (not the table).
printf 'metrics-interval = 1\nmetrics-ended-max-age = 0\n' > "$TEST_DIR/wiped.conf"
kill -HUP "$DAEMON_PID"
ended_gone() {
        curl -sSf -o "$TEST_DIR/scrape" "$WIPED_URL" && ! grep -q '^wiped_job_' "$TEST_DIR/scrape"
}
wait_until 30 "the ended jobs leave the metrics after a reload with metrics-ended-max-age = 0" ended_gone
grep -qx 'wiped_jobs{state="done"} 1' "$TEST_DIR/scrape" || fail "wiped_jobs lost the done job"
grep -qx 'wiped_jobs{state="failed"} 1' "$TEST_DIR/scrape" || fail "wiped_jobs lost the failed job"
"$PROMTOOL" check metrics < "$TEST_DIR/scrape" > "$TEST_DIR/promtool.out" 2>&1 ||
        fail "promtool check metrics without jobs: $(cat "$TEST_DIR/promtool.out")"

# Hostile clients cost the daemon nothing and cannot keep a scrape out: 20 connections from
# 127.0.0.1 that trickle a header byte by byte (a slowloris) leave a slot for a scraper on
# 127.0.0.2; a 64 MB POST body gets 405 and a 200 kB header 431; the socket still answers.
python3 - "$P_WIPED" "$TEST_DIR/slow.ready" <<'PY' &
import socket, sys, time
held = []
for _ in range(20):
    s = socket.socket()
    s.connect(("127.0.0.1", int(sys.argv[1])))
    s.send(b"GET /metrics HTTP/1.1\r\n")
    held.append(s)
open(sys.argv[2], "w").close()
for _ in range(300):
    for s in held:
        try:
            s.send(b"X")
        except OSError:
            pass
    time.sleep(1)
PY
slow=$!
register_pid "$slow"
wait_until 30 "the slow clients connected" test -e "$TEST_DIR/slow.ready"
code=$(curl --interface 127.0.0.2 -s -m 30 -o /dev/null -w '%{http_code}' "$WIPED_URL")
[ "$code" = 200 ] || fail "a scrape from 127.0.0.2 while 127.0.0.1 holds 20 slow connections: HTTP $code"
wipectl list > /dev/null || fail "the socket does not answer while slow HTTP clients are connected"
stop_pid "$slow"
code=$(head -c 64M /dev/zero | curl -s -m 60 -o /dev/null -w '%{http_code}' -X POST --data-binary @- "$WIPED_URL")
[ "$code" = 405 ] || fail "a 64 MB POST: HTTP $code"
{ printf 'X-Big: '; head -c 200000 /dev/zero | tr '\0' a; echo; } > "$TEST_DIR/bighead"
code=$(curl -s -m 30 -o /dev/null -w '%{http_code}' -H @"$TEST_DIR/bighead" "$WIPED_URL")
[ "$code" = 431 ] || fail "a 200 kB header: HTTP $code"

# A clean stop leaves the textfile, with wiped_up 0; node_exporter goes on exporting it.
stop_daemon || fail "daemon exit status $?"
grep -qx 'wiped_up 0' "$TEXTDIR/wiped.prom" || fail "the textfile left at the stop lacks wiped_up 0"
wait_query 'wiped_up{job="node"} == 0' 30 > /dev/null
wait_query 'up{job="wiped"} == 0' 30 > /dev/null
pass
