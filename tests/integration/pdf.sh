#!/bin/bash
# The PDF certificate (wipectl report --pdf): for one real wipe of a loop device, one A4 page that
# poppler renders and whose text holds the device, its method and state, the signature's key ID,
# the command that checks it, and the report ID (the SHA-256 of the report file, recomputed here)
# that the QR code holds too (decoded with zbarimg when installed); for two jobs a batch summary
# first. A report with every field of the record (signed here with the daemon's key, a 1000-character
# note, UTF-8) shows them all on its one page, through --check; a tampered file or a job still
# running gets no certificate. 77 when wipectl was built without PDF support.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

SIGN_REPORT=${SIGN_REPORT:-$top_builddir/tests/helpers/sign-report}
for tool in pdfinfo pdftotext pdftoppm; do
        command -v $tool > /dev/null || hard_error "$tool missing (poppler-utils; tools/install-deps installs it)"
done
[ -x "$SIGN_REPORT" ] || hard_error "$SIGN_REPORT not built (make check builds it)"

# Under LeakSanitizer (the ASan build): what fontconfig caches lives until exit, and pango's font
# sorting threads may still hold some of it then; that is not a leak of wipectl. Only allocations
# made by fontconfig itself are excused.
echo 'leak:libfontconfig.so' > "$TEST_DIR/lsan.supp"
export LSAN_OPTIONS="suppressions=$TEST_DIR/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# Under ThreadSanitizer (the TSan build): wipectl has no thread of its own, but pango starts glib
# threads ("[pango] FcInit") that share fontconfig with wipectl's one thread, all in uninstrumented
# libraries, where TSan reports races and "unlock of an unlocked mutex" that are not wipectl's code.
# So wipectl here runs with TSan's reports off; the daemon of this test keeps them on.
wipectl() { TSAN_OPTIONS="report_bugs=0${TSAN_OPTIONS:+:$TSAN_OPTIONS}" "$WIPECTL_BIN" --socket "$SOCK" "$@"; }

dev1=$(make_loop 32M)
dev2=$(make_loop 16M)
slow=$(make_loop 256M)
start_daemon --threads 2

out=$(wipectl --json wipe --yes --passes random --verify last "$dev1") || fail "wipe of $dev1 exited $?: $out"
id1=$(echo "$out" | jq -r '.jobs[0].id')
out=$(wipectl --json wipe --yes --passes zero,random --verify sample "$dev2") || fail "wipe of $dev2 exited $?: $out"
id2=$(echo "$out" | jq -r '.jobs[0].id')

# A build without PDF support says so (and this test has nothing to test).
if ! wipectl report --pdf "$TEST_DIR/probe.pdf" "$id1" > "$TEST_DIR/out" 2> "$TEST_DIR/err"; then
        grep -q "built without PDF support" "$TEST_DIR/err" && skip "wipectl built with --disable-pdf"
        fail "report --pdf of job $id1 exited non-zero: $(cat "$TEST_DIR/err")"
fi

# keep FILE: a copy for a person to look at, in $WIPED_PDF_KEEP when set.
keep() {
        if [ -n "${WIPED_PDF_KEEP:-}" ]; then
                cp "$1" "$WIPED_PDF_KEEP"/ || hard_error "cannot copy $1 to $WIPED_PDF_KEEP"
        fi
}

# pages FILE: the page count pdfinfo reads; the file also renders, every page, with pdftoppm.
pages() {
        rm -f "$TEST_DIR"/page-*.png
        keep "$1"
        pdftoppm -r 50 -png "$1" "$TEST_DIR/page" 2> "$TEST_DIR/poppler.err" ||
                fail "pdftoppm cannot render $1: $(cat "$TEST_DIR/poppler.err")"
        [ "$(find "$TEST_DIR" -maxdepth 1 -name 'page-*.png' | wc -l)" -ge 1 ] || fail "pdftoppm made no page of $1"
        pdfinfo "$1" 2> "$TEST_DIR/poppler.err" | sed -n 's/^Pages: *//p'
}

# totext FILE: the text of a PDF, laid out as on the page ($TEST_DIR/pdf.txt, for lines and
# columns), and in reading order ($TEST_DIR/pdf.raw, where a wrapped value follows on).
totext() {
        pdftotext -layout "$1" "$TEST_DIR/pdf.txt" && pdftotext "$1" "$TEST_DIR/pdf.raw" || fail "pdftotext cannot read $1"
}

# has TEXT WHAT: the text of the last PDF turned to text ($TEST_DIR/pdf.txt) holds TEXT.
has() {
        grep -qF -- "$1" "$TEST_DIR/pdf.txt" || fail "the certificate lacks $2 ('$1'); its text: $(cat "$TEST_DIR/pdf.txt")"
}

# has_joined TEXT WHAT: the same, but TEXT may be wrapped across lines (a long command): compared
# in reading order with all white space taken out of both.
has_joined() {
        tr -d ' \n' < "$TEST_DIR/pdf.raw" | grep -qF -- "$(echo "$1" | tr -d ' \n')" ||
                fail "the certificate lacks $2 ('$1'); its text: $(cat "$TEST_DIR/pdf.txt")"
}

# check_certificate ID: what the certificate of job ID must say ($TEST_DIR/pdf.txt).
check_certificate() {
        local id=$1 f=$STATE/reports/$1.json rep hash v
        rep=$(cat "$f") || hard_error "no report file $f"
        # The report ID: the SHA-256 of the file's bytes; the daemon's reply renders to the same bytes.
        hash=$(sha256sum "$f" | cut -d' ' -f1)
        [ "$(wipectl --json report "$id" | sha256sum | cut -d' ' -f1)" = "$hash" ] ||
                fail "wipectl --json report $id does not hash as $f does"
        has "Certificate of Sanitization" "its title"
        has "$(echo "$rep" | jq -r .node)" "the device node"
        has "$(echo "$rep" | jq -r .method)" "the method"
        has "$(echo "$rep" | jq -r .state)" "the job's state"
        has "$(echo "$rep" | jq -r .signature.key_id)" "the signing key's ID"
        has "$(echo "$rep" | jq -r .signature.public_key)" "the public key"
        has "$hash" "the report's SHA-256"
        has_joined "wipectl report --check $f --key $STATE/host-key.pub" "the command that checks it (the key of the state directory that holds the report)"
        has_joined "sha256sum $f" "the command that recomputes the hash"
        # The overall status is shown in capitals ("Overall status: ERASED WITH EXCEPTIONS").
        v=$(echo "$rep" | jq -r '.overall_status // empty')
        [ -z "$v" ] || has "Overall status: ${v^^}" "the overall status"
        for v in .identity.serial .identity.model .asset_tag .batch .media_type; do
                local x
                x=$(echo "$rep" | jq -r "$v // empty")
                if [ -n "$x" ]; then
                        has "$x" "$v"
                fi
        done
        # Loop devices have no serial or model: the certificate says so rather than leaving a blank.
        [ -n "$(echo "$rep" | jq -r '.identity.serial // empty')" ] || has "not recorded" "'not recorded'"
        echo "$hash"
}

# One job: one page.
wipectl report --pdf "$TEST_DIR/one.pdf" "$id1" > "$TEST_DIR/out" 2> "$TEST_DIR/err" ||
        fail "report --pdf $id1 exited $?: $(cat "$TEST_DIR/err")"
grep -qF "$TEST_DIR/one.pdf: written" "$TEST_DIR/out" || fail "report --pdf does not say what it wrote: $(cat "$TEST_DIR/out")"
[ "$(pages "$TEST_DIR/one.pdf")" = 1 ] || fail "the certificate of one job is not one page: $(pdfinfo "$TEST_DIR/one.pdf")"
totext "$TEST_DIR/one.pdf"
hash1=$(check_certificate "$id1") || exit 1
has "page 1 of 1" "its page number"
has "wiped " "the tool's name in the footer"

# The QR code holds exactly the report ID.
if command -v zbarimg > /dev/null; then
        pdftoppm -r 200 -png "$TEST_DIR/one.pdf" "$TEST_DIR/qr" || fail "pdftoppm -r 200 failed"
        qr=$(zbarimg -q --raw "$TEST_DIR"/qr-*.png) || fail "zbarimg found no QR code on the certificate"
        [ "$qr" = "$hash1" ] || fail "the QR code holds '$qr', not the report ID $hash1"
else
        note "zbarimg missing (zbar-tools): the QR code is not decoded"
fi

# --json names the file, the jobs and their report IDs.
out=$(wipectl --json report --pdf "$TEST_DIR/json.pdf" "$id1" "$id2") || fail "--json report --pdf exited $?: $out"
jq_is "$out" '.file' "$TEST_DIR/json.pdf" "--json report --pdf"
jq_is "$out" '.jobs | join(",")' "$id1,$id2" "--json report --pdf"
jq_is "$out" '.report_ids[0]' "$hash1" "--json report --pdf"

# Two jobs: the summary, then a certificate each; --summary-only: the summary alone.
wipectl report --pdf "$TEST_DIR/two.pdf" "$id1" "$id2" > /dev/null 2> "$TEST_DIR/err" ||
        fail "report --pdf $id1 $id2 exited $?: $(cat "$TEST_DIR/err")"
[ "$(pages "$TEST_DIR/two.pdf")" = 3 ] || fail "two jobs did not make 3 pages: $(pdfinfo "$TEST_DIR/two.pdf")"
totext "$TEST_DIR/two.pdf"
has "Sanitization Summary" "the summary's title"
has "page 3 of 3" "the last page's number"
check_certificate "$id1" > /dev/null || exit 1
check_certificate "$id2" > /dev/null || exit 1
grep -E "^ *$id2 +$dev2 " "$TEST_DIR/pdf.txt" > /dev/null || fail "the summary has no row of job $id2 on $dev2: $(cat "$TEST_DIR/pdf.txt")"
# The overall status in the table is whole, not "erased with exc...": on the page its last word is
# about 43 points wide, cut short about 20 (pdftotext reads the whole word either way).
if [ "$(jq -r .overall_status "$STATE/reports/$id2.json")" = "erased with exceptions" ]; then
        pdftotext -f 1 -l 1 -bbox "$TEST_DIR/two.pdf" - |
                sed -n 's/.*xMin="\([0-9.]*\)".*xMax="\([0-9.]*\)".*>exceptions<.*/\1 \2/p' > "$TEST_DIR/bbox"
        [ -s "$TEST_DIR/bbox" ] || fail "the summary has no word 'exceptions' in its table"
        awk '{ w = $2 - $1; if (w < 38) { print; exit 1 } }' "$TEST_DIR/bbox" > /dev/null ||
                fail "the summary's overall status column cuts 'erased with exceptions' short: $(cat "$TEST_DIR/bbox")"
fi
wipectl report --pdf "$TEST_DIR/summary.pdf" --summary-only "$id1" "$id2" > /dev/null 2> "$TEST_DIR/err" ||
        fail "report --pdf --summary-only exited $?: $(cat "$TEST_DIR/err")"
[ "$(pages "$TEST_DIR/summary.pdf")" = 1 ] || fail "--summary-only of two jobs is not one page"
# A table longer than a page goes on over the next (a job named 100 times: 100 rows).
mapfile -t many < <(for _ in $(seq 100); do echo "$id2"; done)
wipectl report --pdf "$TEST_DIR/long.pdf" --summary-only "${many[@]}" > /dev/null 2> "$TEST_DIR/err" ||
        fail "report --pdf --summary-only of 100 jobs exited $?: $(cat "$TEST_DIR/err")"
[ "$(pages "$TEST_DIR/long.pdf")" = 2 ] || fail "100 rows of the summary are not on 2 pages: $(pdfinfo "$TEST_DIR/long.pdf")"
totext "$TEST_DIR/long.pdf"
has "Sanitization Summary (continued)" "the second page's title"
has "page 2 of 2" "the second page's number"
[ "$(grep -cE "^ *$id2 +$dev2 " "$TEST_DIR/pdf.txt")" = 100 ] || fail "the summary of 100 jobs has not 100 rows"

# --all selects the reports as the export does: all of them, or one submission (--batch).
wipectl report --all --pdf "$TEST_DIR/all.pdf" --summary-only > /dev/null 2> "$TEST_DIR/err" ||
        fail "report --all --pdf --summary-only exited $?: $(cat "$TEST_DIR/err")"
totext "$TEST_DIR/all.pdf"
grep -E "^ *$id1 +$dev1 " "$TEST_DIR/pdf.txt" > /dev/null && grep -E "^ *$id2 +$dev2 " "$TEST_DIR/pdf.txt" > /dev/null ||
        fail "report --all --pdf: the summary lacks a row of job $id1 or $id2: $(cat "$TEST_DIR/pdf.txt")"
batch1=$(wipectl --json report "$id1" | jq -r .batch)
[ -n "$batch1" ] && [ "$batch1" != null ] || fail "job $id1 has no batch"
wipectl report --all --batch "$batch1" --pdf "$TEST_DIR/batch.pdf" > /dev/null 2> "$TEST_DIR/err" ||
        fail "report --all --batch --pdf exited $?: $(cat "$TEST_DIR/err")"
[ "$(pages "$TEST_DIR/batch.pdf")" = 1 ] || fail "the batch of job $id1 alone is not one certificate"
totext "$TEST_DIR/batch.pdf"
has "$dev1" "job $id1's device (its batch)"
grep -qF "$dev2" "$TEST_DIR/pdf.txt" && fail "the certificate of job $id1's batch shows $dev2 of another batch"
expect_exit 1 wipectl report --all --batch 0123456789abcdef0123456789abcdef --pdf "$TEST_DIR/none.pdf"
[ -e "$TEST_DIR/none.pdf" ] && fail "report --all --pdf wrote a file when no report matched"
expect_exit 2 wipectl report --all --format csv --pdf "$TEST_DIR/x.pdf"

# "-": the PDF on stdout; an existing file is replaced whole.
wipectl report --pdf - "$id2" > "$TEST_DIR/stdout.pdf" 2> "$TEST_DIR/err" || fail "report --pdf - exited $?: $(cat "$TEST_DIR/err")"
[ "$(pages "$TEST_DIR/stdout.pdf")" = 1 ] || fail "report --pdf - did not write one page on stdout"
wipectl report --pdf "$TEST_DIR/one.pdf" "$id2" > /dev/null 2>&1 || fail "report --pdf over an existing file exited $?"
totext "$TEST_DIR/one.pdf"
has "$dev2" "the device of the job written over the old file"
[ -z "$(find "$TEST_DIR" -maxdepth 1 -name '.*.tmp')" ] || fail "a temporary file was left: $(ls -a "$TEST_DIR")"

# A report with every field of the record, and values that do not fit: signed with the daemon's key
# (so --check accepts it), it has every value on its one page and nothing runs off it.
note=$(printf 'Zürich %.0s' $(seq 1 200) | head -c 1000)
jq --arg note "$note" '. + {
        batch: "0123456789abcdef0123456789abcdef", asset_tag: "ASSET-4711", customer: "Müller AG, Zürich",
        note: $note, destination: "resale", media_type: "HDD", manufacturer: "Seagate",
        identity: (.identity + {model: "ST4000DM004-2CV104", serial: "ZFN0ABCD", wwn: "0x5000c500a1b2c3d4"}),
        operator: {name: "Ada Operator", title: "Technician", organization: "Recyclers Ltd", location: "Bay 3", contact: "ada@example.org"},
        verifier: {name: "Vera Verifier", title: "QA lead", organization: "Recyclers Ltd", location: "Bay 3", contact: "+41 44 000 00 00"},
        host: (.host + {dmi: {vendor: "Dell Inc.", product: "PowerEdge R740", serial: "7XYZ123", uuid: "4c4c4544-0037-5810-8031-b7c04f4a3132"}}),
        sanitization: {category: "Clear", method: .method, technique: "overwrite", tool: .tool,
                       verification_method: "full read-back", verification_result: "passed"},
        smart_before: {available: true, tool: "smartctl 7.3", checked_at: 1764672000, passed: true, power_on_hours: 12345,
                       reallocated_sectors: 0, pending_sectors: 0, offline_uncorrectable: 0, nvme_percentage_used: null,
                       nvme_media_errors: null, nvme_critical_warning: null, temperature_c: 31},
        smart_after: {available: false, reason: "no SMART: loop device"},
        smart_policy: "flag", errors: [{code: "EIO", message: "write failed at byte 4096"}],
        overall_status: "erased with exceptions", exceptions: ["verification sampled only (1%)", "hidden area present (HPA/DCO)"]
}' "$STATE/reports/$id1.json" | "$SIGN_REPORT" "$STATE" > "$TEST_DIR/full.json" || hard_error "cannot make the full report"
wipectl report --check "$TEST_DIR/full.json" > /dev/null 2>&1 || hard_error "the full report does not check"
wipectl report --pdf "$TEST_DIR/full.pdf" --check "$TEST_DIR/full.json" --key "$STATE/host-key.pub" > /dev/null 2> "$TEST_DIR/err" ||
        fail "report --pdf --check of the full report exited $?: $(cat "$TEST_DIR/err")"
[ "$(pages "$TEST_DIR/full.pdf")" = 1 ] || fail "the full report's certificate is not one page"
cp "$TEST_DIR"/page-1.png "$TEST_DIR/full.png" 2> /dev/null || cp "$TEST_DIR"/page-01.png "$TEST_DIR/full.png" 2> /dev/null
totext "$TEST_DIR/full.pdf"
for v in "ERASED WITH EXCEPTIONS" "verification sampled only (1%)" ASSET-4711 "Müller AG, Zürich" 0123456789abcdef0123456789abcdef \
        resale HDD Seagate ST4000DM004-2CV104 ZFN0ABCD 0x5000c500a1b2c3d4 "Ada Operator" Technician "Vera Verifier" \
        "QA lead" "Recyclers Ltd" "Bay 3" ada@example.org "Dell Inc." "PowerEdge R740" 7XYZ123 \
        4c4c4544-0037-5810-8031-b7c04f4a3132 Clear overwrite "full read-back" "overall health PASSED" "12345 h powered on" \
        "not available: no SMART: loop device" "Zürich Zürich" Signature "write failed at byte 4096 (EIO)"; do
        has_joined "$v" "$v"
done
full_hash=$(sha256sum "$TEST_DIR/full.json" | cut -d' ' -f1)
has "$full_hash" "the SHA-256 of the checked file"
has_joined "wipectl report --check $STATE/reports/$id1.json --key $STATE/host-key.pub" "the check command with the key given"
# The note is cut short, not spilled: its last words are not on the page, the footer is.
[ "$(grep -o 'Zürich' "$TEST_DIR/pdf.txt" | wc -l)" -lt 150 ] || fail "all of the 1000-character note is on the page"
has "page 1 of 1" "the footer under a long note"
if command -v zbarimg > /dev/null; then
        pdftoppm -r 200 -png "$TEST_DIR/full.pdf" "$TEST_DIR/fullqr" || fail "pdftoppm -r 200 failed"
        [ "$(zbarimg -q --raw "$TEST_DIR"/fullqr-*.png)" = "$full_hash" ] || fail "the QR code of the full report is not its SHA-256"
fi

# A line of the export (the one-line form --check accepts) certifies the same report: its report ID
# is that of the report file, not the hash of the line.
wipectl report --all --batch "$(jq -r .batch "$STATE/reports/$id1.json")" > "$TEST_DIR/line.json" ||
        fail "report --all --batch exited $?"
[ "$(wc -l < "$TEST_DIR/line.json")" = 1 ] || fail "job $id1's batch did not export one line: $(cat "$TEST_DIR/line.json")"
wipectl report --pdf "$TEST_DIR/line.pdf" --check "$TEST_DIR/line.json" > /dev/null 2> "$TEST_DIR/err" ||
        fail "report --pdf --check of an export line exited $?: $(cat "$TEST_DIR/err")"
totext "$TEST_DIR/line.pdf"
has "$hash1" "the report ID of the file whose export line was checked"
grep -qF "$(sha256sum "$TEST_DIR/line.json" | cut -d' ' -f1)" "$TEST_DIR/pdf.txt" &&
        fail "the certificate of an export line shows the hash of the line, not the report ID"
if command -v zbarimg > /dev/null; then
        pdftoppm -r 200 -png "$TEST_DIR/line.pdf" "$TEST_DIR/lineqr" || fail "pdftoppm -r 200 failed"
        [ "$(zbarimg -q --raw "$TEST_DIR"/lineqr-*.png)" = "$hash1" ] || fail "the QR code of an export line is not the report ID"
fi

# Text that would escape its box or show other characters than it holds: paragraph separators
# (U+2029: 60 paragraphs of a note would push the signature and its QR code off the page) and a
# bidirectional override (U+202E: "TAG-<RLO>1234" would read "TAG-4321"). The daemon takes both.
jq --arg note "$(printf 'para%s\u2029' $(seq 0 59))" --arg tag "$(printf 'TAG-\u202e1234')" '. + {note: $note, asset_tag: $tag}' \
        "$STATE/reports/$id1.json" | "$SIGN_REPORT" "$STATE" > "$TEST_DIR/hostile.json" || hard_error "cannot make the hostile report"
wipectl report --pdf "$TEST_DIR/hostile.pdf" --check "$TEST_DIR/hostile.json" > /dev/null 2> "$TEST_DIR/err" ||
        fail "report --pdf --check of the hostile report exited $?: $(cat "$TEST_DIR/err")"
totext "$TEST_DIR/hostile.pdf"
[ "$(grep -c 'para[0-9]' "$TEST_DIR/pdf.txt")" -le 4 ] || fail "a note of 60 paragraphs is not cut to its 4 lines: $(cat "$TEST_DIR/pdf.txt")"
has "TAG-$(printf '\ufffd')1234" "the asset tag with its override shown as U+FFFD"
has "Digital signature of the report" "the signature section under a note of 60 paragraphs"
if command -v zbarimg > /dev/null; then
        pdftoppm -r 200 -png "$TEST_DIR/hostile.pdf" "$TEST_DIR/hostileqr" || fail "pdftoppm -r 200 failed"
        [ "$(zbarimg -q --raw "$TEST_DIR"/hostileqr-*.png)" = "$(sha256sum "$TEST_DIR/hostile.json" | cut -d' ' -f1)" ] ||
                fail "the QR code is not on the page under a note of 60 paragraphs"
fi

# No certificate of a report that does not check, nor of a job still running.
sed 's/"ASSET-4711"/"ASSET-4712"/' "$TEST_DIR/full.json" > "$TEST_DIR/tampered.json"
expect_exit 9 wipectl report --pdf "$TEST_DIR/tampered.pdf" --check "$TEST_DIR/tampered.json"
grep -q "INVALID" "$TEST_DIR/err" || fail "a tampered report's refusal does not say INVALID: $(cat "$TEST_DIR/err")"
[ ! -e "$TEST_DIR/tampered.pdf" ] || fail "a certificate was written for a tampered report"
out=$(wipectl --json wipe --yes --no-wait --max-rate 1M "$slow") || fail "submit on $slow exited $?: $out"
id3=$(echo "$out" | jq -r '.jobs[0].id')
expect_exit 1 wipectl report --pdf "$TEST_DIR/running.pdf" "$id3"
grep -q "job $id3: its report is not signed yet" "$TEST_DIR/err" || fail "a running job's refusal: $(cat "$TEST_DIR/err")"
[ ! -e "$TEST_DIR/running.pdf" ] || fail "a certificate was written for a running job"
wipectl cancel "$id3" > /dev/null || fail "cancel $id3 exited $?"
# An unknown job: the exit status of "report JOB", and no file.
wipectl report 999 > /dev/null 2>&1
unknown=$?
[ "$unknown" != 0 ] || hard_error "report of an unknown job exited 0"
expect_exit "$unknown" wipectl report --pdf "$TEST_DIR/unknown.pdf" "$id1" 999
[ ! -e "$TEST_DIR/unknown.pdf" ] || fail "a PDF was written though job 999 is unknown"
expect_exit 2 wipectl report --summary-only "$id1"
expect_exit 2 wipectl report --pdf "$TEST_DIR/x.pdf" --keys "$id1"
expect_exit 2 wipectl report --pdf "$TEST_DIR/x.pdf"
expect_exit 2 wipectl --quiet report --pdf - "$id1"

# Right after "wipectl wipe" returns the job has ended but the daemon signs its report a moment
# later: a certificate asked for at once waits for it rather than saying the job has not ended.
out=$(wipectl --json wipe --yes --passes zero "$dev2") || fail "wipe of $dev2 exited $?: $out"
id4=$(echo "$out" | jq -r '.jobs[0].id')
wipectl report --pdf "$TEST_DIR/at-once.pdf" "$id4" > /dev/null 2> "$TEST_DIR/err" ||
        fail "report --pdf of job $id4 right after its wipe exited $?: $(cat "$TEST_DIR/err")"
totext "$TEST_DIR/at-once.pdf"
has "$(sha256sum "$STATE/reports/$id4.json" | cut -d' ' -f1)" "the report ID of the job certified right after its wipe"

# The same for a batch, through --all (the export's selection): both jobs of a submit are in it,
# exported and certified, at once after the wipe returns.
out=$(wipectl --json wipe --yes --passes zero "$dev1" "$dev2") || fail "wipe of $dev1 $dev2 exited $?: $out"
batch=$(echo "$out" | jq -r '.jobs[0].batch')
[ "$(wipectl report --all --batch "$batch" | wc -l)" = 2 ] || fail "report --all --batch right after the wipe: not 2 lines"
out=$(wipectl --json wipe --yes --passes zero "$dev1" "$dev2") || fail "wipe of $dev1 $dev2 exited $?: $out"
batch=$(echo "$out" | jq -r '.jobs[0].batch')
wipectl report --all --batch "$batch" --pdf "$TEST_DIR/batch-at-once.pdf" > /dev/null 2> "$TEST_DIR/err" ||
        fail "report --all --batch --pdf right after the wipe exited $?: $(cat "$TEST_DIR/err")"
[ "$(pages "$TEST_DIR/batch-at-once.pdf")" = 3 ] || fail "the batch of two jobs right after the wipe is not 3 pages"

pass
