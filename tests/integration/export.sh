#!/bin/bash
# wipectl report --all: the signed reports the daemon keeps (a forgotten job's too), oldest first,
# as JSON lines each of which passes "report --check" with the host's key, and as CSV whose
# columns hold the same values; --since/--until/--batch/JOB select; the read-only socket exports;
# the CLI pages through the "reports" request (limit 1) and gets everything once; a corrupt,
# oversized or misnamed report file is named and left out, the rest still exported.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

command -v python3 > /dev/null || skip "python3 missing (the CSV is read with its csv module)"
command -v socat > /dev/null || skip "socat missing"
a=$(make_loop 8M)
b=$(make_loop 8M)
c=$(make_loop 8M)
start_daemon --threads 2
PUB=$STATE/host-key.pub
STATUS_SOCK=$TEST_DIR/wiped-status.sock      # beside $SOCK, the daemon's default

# A alone; then B and C in one submission, after a second boundary (so --since can part them).
out=$(wipectl --json wipe --yes --method zero --verify none "$a") || fail "wipe of $a exited $?: $out"
ja=$(echo "$out" | jq -r '.jobs[0].id')
sleep 2
mid=$(date +%s)
out=$(wipectl --json wipe --yes --method zero --verify none "$b" "$c") || fail "wipe of $b $c exited $?: $out"
jb=$(echo "$out" | jq -r '.jobs[] | select(.device == "'"$b"'") | .id')
jc=$(echo "$out" | jq -r '.jobs[] | select(.device == "'"$c"'") | .id')
for j in "$ja" "$jb" "$jc"; do
        [ "$(wait_job "$j" 60)" = done ] || fail "job $j did not end done"
        for _ in $(seq 50); do [ -f "$STATE/reports/$j.json" ] && break; sleep 0.1; done
        [ -f "$STATE/reports/$j.json" ] || fail "job $j: no report file"
done
# A forgotten job's report is still exported.
wipectl forget "$ja" > /dev/null || fail "forget $ja exited $?"
ended() { jq -r .ended_at "$STATE/reports/$1.json"; }
[ "$(ended "$ja")" -lt "$mid" ] && [ "$(ended "$jb")" -ge "$mid" ] && [ "$(ended "$jc")" -ge "$mid" ] ||
        hard_error "the jobs did not end on both sides of $mid: $(ended "$ja") $(ended "$jb") $(ended "$jc")"
# The expected order: by end, then job.
order=$(for j in "$ja" "$jb" "$jc"; do echo "$(ended "$j") $j"; done | sort -n -k1,1 -k2,2 | awk '{ print $2 }' | xargs)

# jobs_of FILE: the jobs of a JSON lines file, in order, on one line.
jobs_of() { jq -r .job "$1" | xargs; }

# --- JSON lines ---
wipectl report --all > "$TEST_DIR/all.jsonl" 2> "$TEST_DIR/err" || fail "report --all exited $?: $(cat "$TEST_DIR/err")"
[ "$(wc -l < "$TEST_DIR/all.jsonl")" = 3 ] || fail "report --all: $(wc -l < "$TEST_DIR/all.jsonl") lines, expected 3"
[ "$(jobs_of "$TEST_DIR/all.jsonl")" = "$order" ] || fail "report --all: jobs $(jobs_of "$TEST_DIR/all.jsonl"), expected $order"
for i in 1 2 3; do
        sed -n "${i}p" "$TEST_DIR/all.jsonl" > "$TEST_DIR/line.json"
        j=$(jq -r .job "$TEST_DIR/line.json")
        # Each line is the signed report as it is, on one line; it checks against the host's key.
        expect_exit 0 wipectl report --check "$TEST_DIR/line.json" --key "$PUB"
        expect_exit 0 wipectl report --check - --key "$PUB" < "$TEST_DIR/line.json"
        [ "$(jq -S . "$TEST_DIR/line.json")" = "$(jq -S . "$STATE/reports/$j.json")" ] ||
                fail "line $i differs from $STATE/reports/$j.json"
        # One byte changed: no longer valid.
        sed 's/"state":"done"/"state":"dune"/' "$TEST_DIR/line.json" > "$TEST_DIR/bad.json"
        cmp -s "$TEST_DIR/line.json" "$TEST_DIR/bad.json" && hard_error "line $i: no \"state\":\"done\" to change"
        expect_exit 9 wipectl report --check "$TEST_DIR/bad.json"
done
# --json gives the same JSON lines.
wipectl --json report --all > "$TEST_DIR/json.jsonl" || fail "--json report --all exited $?"
cmp "$TEST_DIR/all.jsonl" "$TEST_DIR/json.jsonl" || fail "--json report --all differs from report --all"

# --- selections ---
sel() { wipectl report --all "$@" > "$TEST_DIR/sel.jsonl" 2> "$TEST_DIR/err" || fail "report --all $* exited $?: $(cat "$TEST_DIR/err")"; jobs_of "$TEST_DIR/sel.jsonl"; }
rest=$(for j in "$jb" "$jc"; do echo "$(ended "$j") $j"; done | sort -n -k1,1 -k2,2 | awk '{ print $2 }' | xargs)
[ "$(sel --since "@$mid")" = "$rest" ] || fail "--since @$mid: $(sel --since "@$mid"), expected $rest"
iso=$(date -u -d "@$mid" +%Y-%m-%dT%H:%M:%SZ)
[ "$(sel --since "$iso")" = "$rest" ] || fail "--since $iso: $(sel --since "$iso"), expected $rest"
local_time=$(date -d "@$mid" '+%Y-%m-%d %H:%M:%S')
[ "$(sel --since "$local_time")" = "$rest" ] || fail "--since '$local_time' (local): $(sel --since "$local_time"), expected $rest"
[ "$(sel --until "@$mid")" = "$ja" ] || fail "--until @$mid: $(sel --until "@$mid"), expected $ja"
[ "$(sel --since 1h)" = "$order" ] || fail "--since 1h: $(sel --since 1h), expected $order"
[ -z "$(sel --since "@$(($(date +%s) + 3600))")" ] || fail "--since an hour ahead: not empty"
[ "$(sel "$jb")" = "$jb" ] || fail "report --all $jb: $(sel "$jb")"
[ "$(sel "$ja" "$jc" 4000)" = "$(echo "$order" | tr ' ' '\n' | grep -xE "$ja|$jc" | xargs)" ] || fail "report --all $ja $jc 4000"
batch=$(jq -r '.batch // empty' "$STATE/reports/$jb.json")
if [ -n "$batch" ]; then
        [ "$(sel --batch "$batch")" = "$rest" ] || fail "--batch $batch: $(sel --batch "$batch"), expected $rest"
        [ -z "$(sel --batch 00000000000000000000000000000000)" ] || fail "--batch of none: not empty"
else
        note "reports have no \"batch\" yet: --batch not tested"
fi
expect_exit 2 wipectl report --all --since yesterday
expect_exit 2 wipectl report --all --since 2026-02-30
expect_exit 2 wipectl report --since 1d
expect_exit 2 wipectl report --all --format xml
expect_exit 2 wipectl --json report --all --format csv
expect_exit 2 wipectl report --all --keys
expect_exit 2 wipectl report --all --page-size 0

# --- a report written again (a later verification) is exported as it is now, not as indexed ---
sum_before=$(sha256sum < "$STATE/reports/$jc.json")
wipectl verify --verify last "$jc" > "$TEST_DIR/verify.out" 2>&1 || fail "verify $jc exited $?: $(cat "$TEST_DIR/verify.out")"
for _ in $(seq 50); do [ "$(sha256sum < "$STATE/reports/$jc.json")" != "$sum_before" ] && break; sleep 0.1; done
[ "$(sha256sum < "$STATE/reports/$jc.json")" != "$sum_before" ] || hard_error "the report of $jc was not written again"
wipectl report --all "$jc" > "$TEST_DIR/again.jsonl" || fail "report --all $jc exited $?"
[ "$(jq -S . "$TEST_DIR/again.jsonl")" = "$(jq -S . "$STATE/reports/$jc.json")" ] || fail "report --all $jc: not the report as written again"
expect_exit 0 wipectl report --check "$TEST_DIR/again.jsonl" --key "$PUB"
wipectl report --all > "$TEST_DIR/all.jsonl" || fail "report --all exited $?"
order=$(for j in "$ja" "$jb" "$jc"; do echo "$(ended "$j") $j"; done | sort -n -k1,1 -k2,2 | awk '{ print $2 }' | xargs)
[ "$(jobs_of "$TEST_DIR/all.jsonl")" = "$order" ] || fail "report --all after verify: jobs $(jobs_of "$TEST_DIR/all.jsonl"), expected $order"

# --- paging: one report a request, everything once, in the same order ---
wipectl report --all --page-size 1 > "$TEST_DIR/paged.jsonl" || fail "report --all --page-size 1 exited $?"
cmp "$TEST_DIR/all.jsonl" "$TEST_DIR/paged.jsonl" || fail "paged export differs: $(jobs_of "$TEST_DIR/paged.jsonl")"
reply=$(request '{"id":1,"op":"reports","limit":1}')
jq_is "$reply" '"\(.ok) \(.reports | length) \(.report_ids | length) \(.truncated)"' "true 1 1 true" "reports limit 1"
first=$(echo "$order" | awk '{ print $1 }')
jq_is "$reply" '.reports[0].job' "$first" "reports limit 1"
jq_is "$reply" '.report_ids[0]' "$(sha256sum < "$STATE/reports/$first.json" | awk '{ print $1 }')" "report id of $first"
reply=$(request '{"id":2,"op":"reports","since":'"$(ended "$first")"',"after_job":'"$first"'}')
jq_is "$reply" '"\(.reports | length) \(.truncated) \(.reports[0].job != '"$first"')"' "2 false true" "reports after $first"
reply=$(request '{"id":3,"op":"reports","limit":0}')
jq_is "$reply" '.error.code' EINVAL "limit 0"
reply=$(request '{"id":4,"op":"reports","after_job":1}')
jq_is "$reply" '.error.code' EINVAL "after_job without since"
reply=$(request '{"id":5,"op":"reports","keys":true}')
jq_is "$reply" '.error.code' EINVAL "an unknown field"

# --- CSV ---
wipectl report --all --format csv > "$TEST_DIR/all.csv" || fail "report --all --format csv exited $?"
python3 - "$TEST_DIR/all.csv" "$STATE/reports" "$order" > "$TEST_DIR/csv.out" 2>&1 <<'EOF' || fail "CSV: $(cat "$TEST_DIR/csv.out")"
import csv, hashlib, json, sys, datetime
path, reports, order = sys.argv[1], sys.argv[2], sys.argv[3].split()
columns = ("report_id,job,batch,host,machine_id,dmi_serial,device,model,serial,wwn,media_type,manufacturer,"
           "size_bytes,asset_tag,customer,destination,method,category,technique,state,overall_status,exceptions,"
           "verification_method,verification_result,started_at,ended_at,duration_s,operator_name,"
           "operator_organization,verifier_name,smart_before_passed,smart_after_passed,power_on_hours,"
           "signature_key_id,tool").split(",")
raw = open(path, newline="").read()
assert "\r" not in raw, "CRLF line ends: LF expected"
rows = list(csv.reader(open(path, newline="")))
assert rows[0] == columns, f"header {rows[0]}"
assert [r[1] for r in rows[1:]] == order, f"jobs {[r[1] for r in rows[1:]]}, expected {order}"
def iso(t):
    return "" if t is None else datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
def get(o, *path):
    for k in path:
        if not isinstance(o, dict) or o.get(k) is None:
            return None
        o = o[k]
    return o
def text(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
for row in rows[1:]:
    assert len(row) == len(columns), f"{len(row)} cells"
    cell = dict(zip(columns, row))
    data = open(f"{reports}/{cell['job']}.json", "rb").read()
    r = json.loads(data)
    assert cell["report_id"] == hashlib.sha256(data).hexdigest(), "report_id is not the file's SHA-256"
    want = {
        "batch": text(r.get("batch")), "host": r["host"]["hostname"], "machine_id": text(get(r, "host", "machine_id")),
        "dmi_serial": text(get(r, "host", "dmi", "serial")), "device": r["device"],
        "model": text(get(r, "identity", "model")), "serial": text(get(r, "identity", "serial")),
        "wwn": text(get(r, "identity", "wwn")), "media_type": text(r.get("media_type")),
        "size_bytes": str(r["size_bytes"]), "state": r["state"],
        "category": text(get(r, "sanitization", "category") or r["nist_category"]),
        "method": text(get(r, "sanitization", "method") or r["method"]),
        "started_at": iso(r["started_at"]), "ended_at": iso(r["ended_at"]),
        "signature_key_id": r["signature"]["key_id"],
        "tool": text(get(r, "sanitization", "tool") or r["tool"]),
        "overall_status": text(r.get("overall_status")),
        "exceptions": "; ".join(r.get("exceptions") or []),
        "smart_before_passed": text(get(r, "smart_before", "passed")),
        "operator_name": text(get(r, "operator", "name")),
    }
    for k, v in want.items():
        if v[:1] in ("=", "+", "-", "@"):
            v = "'" + v
        assert cell[k] == v, f"job {cell['job']}: {k} is {cell[k]!r}, expected {v!r}"
    assert float(cell["duration_s"]) == float(r["duration_s"]), "duration_s"
print("ok")
EOF

# --- the read-only socket exports too ---
nogroup=$(id -gn nobody 2>/dev/null) || nogroup=nogroup
chmod 0711 "$TEST_DIR" || hard_error "chmod $TEST_DIR"
[ -S "$STATUS_SOCK" ] || fail "no read-only socket at $STATUS_SOCK"
setpriv --reuid=nobody --regid="$nogroup" --clear-groups "$WIPECTL_BIN" --socket "$STATUS_SOCK" report --all \
        > "$TEST_DIR/ro.jsonl" 2> "$TEST_DIR/err" || fail "report --all as nobody on the read-only socket exited $?: $(cat "$TEST_DIR/err")"
cmp "$TEST_DIR/all.jsonl" "$TEST_DIR/ro.jsonl" || fail "the read-only socket's export differs"

# --- unreadable files: named, left out, the rest exported; exit status 1 ---
printf '{"job": 900, "ended_at": ' > "$STATE/reports/900.json"                 # cut short
cp "$STATE/reports/$jb.json" "$STATE/reports/901.json"                          # another job's report
head -c $((5 << 20)) /dev/zero > "$STATE/reports/902.json"                      # too large
cp "$STATE/reports/$jb.json" "$TEST_DIR/jb.json"                               # indexed before, now cut short
head -c 100 "$TEST_DIR/jb.json" > "$STATE/reports/$jb.json"
echo '{}' > "$STATE/reports/notes.json"                                         # not a report's name: ignored
echo '{}' > "$STATE/reports/.$ja.json.tmp"                                      # a temporary file: ignored
wipectl report --all > "$TEST_DIR/some.jsonl" 2> "$TEST_DIR/err"
rc=$?
[ $rc = 1 ] || fail "report --all with unreadable files exited $rc, expected 1: $(cat "$TEST_DIR/err")"
grep -v "\"job\":$jb," "$TEST_DIR/all.jsonl" | cmp - "$TEST_DIR/some.jsonl" || fail "the readable reports were not all exported"
for n in 900 901 902 "$jb"; do
        grep -q "$n.json" "$TEST_DIR/err" || fail "no message names $n.json: $(cat "$TEST_DIR/err")"
        grep -q "reports/$n.json: left out of report listings" "$TEST_DIR/daemon.log" || fail "no log line for $n.json"
done
grep -qE "notes.json|\.tmp" "$TEST_DIR/err" && fail "a file that is no report was named: $(cat "$TEST_DIR/err")"
reply=$(request '{"id":6,"op":"reports"}')
jq_is "$reply" '.unreadable | sort | join(" ")' "$(printf '%s\n' 900.json 901.json 902.json "$jb.json" | sort | xargs)" "unreadable"
# Logged once, not at every request.
for n in 900 901 902; do
        [ "$(grep -c "reports/$n.json: left out" "$TEST_DIR/daemon.log")" = 1 ] || fail "$n.json not logged once"
done
# A job filter leaves the others unnamed.
expect_exit 0 wipectl report --all "$ja"
expect_exit 1 wipectl report --all "$jb"
rm -f "$STATE/reports/900.json" "$STATE/reports/901.json" "$STATE/reports/902.json"
cp "$TEST_DIR/jb.json" "$STATE/reports/$jb.json"
expect_exit 0 wipectl report --all

# --- CSV: the record fields of the contract, quoting and formula neutralising, on a report made
# here from a real one (the listing does not check signatures: the lines do, with --check) ---
jq -c --argjson j 903 '.job = $j | .ended_at += 100 | .asset_tag = "=SUM(A1:A9)" | .customer = "a,b \"c\"\nd" |
        .batch = "0123456789abcdef0123456789abcdef" | .destination = "reuse" | .media_type = "HDD" |
        .manufacturer = "@corp" | .overall_status = "erased with exceptions" |
        .exceptions = ["bad sectors skipped: 4096 bytes", "-verification sampled only (1%)"] |
        .host.dmi = {"vendor": "V", "product": "P", "serial": "+DMI1", "uuid": null} |
        .sanitization = {"category": "Purge", "method": "sanitize-crypto", "technique": "crypto erase",
                "tool": "wiped 9", "verification_method": "firmware erase proof", "verification_result": "passed"} |
        .operator = {"name": "Ann", "title": null, "organization": "Org, Inc.", "location": null, "contact": null} |
        .verifier = {"name": "Bob"} | .smart_before = {"available": true, "passed": true, "power_on_hours": 7} |
        .smart_after = {"available": true, "passed": false, "power_on_hours": 8}' "$STATE/reports/$jb.json" \
        > "$STATE/reports/903.json" || hard_error "cannot make 903.json"
wipectl report --all --format csv 903 > "$TEST_DIR/903.csv" || fail "report --all --format csv 903 exited $?"
python3 - "$TEST_DIR/903.csv" > "$TEST_DIR/csv.out" 2>&1 <<'EOF' || fail "CSV of 903: $(cat "$TEST_DIR/csv.out") in $(cat "$TEST_DIR/903.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 1, rows
want = {"job": "903", "asset_tag": "'=SUM(A1:A9)", "customer": 'a,b "c"\nd', "batch": "0123456789abcdef0123456789abcdef",
        "destination": "reuse", "media_type": "HDD", "manufacturer": "'@corp", "overall_status": "erased with exceptions",
        "exceptions": "bad sectors skipped: 4096 bytes; -verification sampled only (1%)", "dmi_serial": "'+DMI1",
        "category": "Purge", "method": "sanitize-crypto", "technique": "crypto erase", "tool": "wiped 9",
        "verification_method": "firmware erase proof", "verification_result": "passed", "operator_name": "Ann",
        "operator_organization": "Org, Inc.", "verifier_name": "Bob", "smart_before_passed": "true",
        "smart_after_passed": "false", "power_on_hours": "8"}
for k, v in want.items():
    assert rows[0][k] == v, f"{k} is {rows[0][k]!r}, expected {v!r}"
print("ok")
EOF
grep -q '^[^,]*,903,' "$TEST_DIR/903.csv" || fail "no row of job 903: $(cat "$TEST_DIR/903.csv")"
[ "$(sel --batch 0123456789abcdef0123456789abcdef)" = 903 ] || fail "--batch of 903: $(sel --batch 0123456789abcdef0123456789abcdef)"
rm -f "$STATE/reports/903.json"

# --- CSV quoting of a field a spreadsheet would run, when submissions can carry an asset tag ---
if "$WIPECTL_BIN" wipe --help 2>&1 | grep -q -- --asset-tag; then
        out=$(wipectl --json wipe --yes --method zero --verify none --asset-tag '=HYPERLINK("x"),1' "$a") ||
                fail "wipe with --asset-tag exited $?: $out"
        jd=$(echo "$out" | jq -r '.jobs[0].id')
        [ "$(wait_job "$jd" 60)" = done ] || fail "job $jd did not end done"
        for _ in $(seq 50); do [ -f "$STATE/reports/$jd.json" ] && break; sleep 0.1; done
        wipectl report --all --format csv "$jd" > "$TEST_DIR/tag.csv" || fail "report --all --format csv $jd exited $?"
        got=$(python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1], newline=""))); print(r[0]["asset_tag"])' "$TEST_DIR/tag.csv")
        [ "$got" = "'=HYPERLINK(\"x\"),1" ] || fail "asset_tag cell is [$got]: $(cat "$TEST_DIR/tag.csv")"
else
        note "wipe has no --asset-tag yet: formula quoting not tested on a real report"
fi

# --- more than the read-only socket lets a client leave unread (4 MiB): its pages are smaller,
# and nobody's export still gets every report (made here from a real one, 8 KiB each) ---
# (One python3 for the 600 files: a jq each took 25 s of CPU.)
python3 - "$STATE/reports/$ja.json" "$STATE/reports" <<'PY' || hard_error "cannot make the reports 1000..1599"
import json, sys
base = json.load(open(sys.argv[1]))
for n in range(1000, 1600):
    r = dict(base, job=n, note="x" * 8000)
    with open("%s/%d.json" % (sys.argv[2], n), "w") as f:
        f.write(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
want=$(wipectl report --all | wc -l) || fail "report --all with 600 more reports exited $?"
[ "$want" -ge 600 ] || fail "report --all with 600 more reports gave $want lines"
setpriv --reuid=nobody --regid="$nogroup" --clear-groups "$WIPECTL_BIN" --socket "$STATUS_SOCK" report --all \
        > "$TEST_DIR/ro-big.jsonl" 2> "$TEST_DIR/err" ||
        fail "report --all of 5 MiB of reports as nobody on the read-only socket exited $?: $(cat "$TEST_DIR/err")"
[ "$(wc -l < "$TEST_DIR/ro-big.jsonl")" = "$want" ] || fail "the read-only socket exported $(wc -l < "$TEST_DIR/ro-big.jsonl") of $want"
rm -f "$STATE"/reports/1[0-5][0-9][0-9].json

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
