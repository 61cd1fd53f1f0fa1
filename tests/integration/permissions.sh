#!/bin/bash
# Permissions (wiped(8) PERMISSIONS): an unprivileged client may look (version, status, list, watch,
# report without keys) but not act: submit, cancel, pause, resume, forget, probe, verify and report
# with keys are refused with EPERM, "permission denied", wipectl exit 4, and change nothing. A
# member of the group "wiped" may submit (when the group exists on this machine).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v socat >/dev/null || hard_error "socat missing (tools/install-deps installs it)"
command -v setpriv >/dev/null || skip "setpriv missing (util-linux)"
getent passwd nobody > /dev/null || skip "no user nobody"
nogroup=$(id -gn nobody) || skip "no group of nobody"

target=$(make_loop 32M)         # what nobody tries to wipe: never written
running=$(make_loop 64M)        # a job running while nobody tries to stop it
paused=$(make_loop 64M)         # a paused job nobody tries to resume
ended=$(make_loop 16M)          # a done job nobody tries to verify, forget, read the keys of
dd if=/dev/urandom of="$target" bs=1M count=32 oflag=direct status=none || hard_error "cannot fill $target"
target_sum=$(dev_sha256 "$target")

start_daemon --threads 2
# The test directory is root's and 0700; nobody needs to reach the socket in it.
chmod 0711 "$TEST_DIR" || hard_error "chmod $TEST_DIR"
chmod 0666 "$SOCK" || hard_error "chmod $SOCK"

# as_nobody COMMAND...: run it as nobody, without supplementary groups.
as_nobody() { setpriv --reuid=nobody --regid="$nogroup" --clear-groups "$@"; }
nobody_wipectl() { as_nobody "$WIPECTL_BIN" --socket "$SOCK" "$@"; }
as_nobody "$WIPECTL_BIN" --socket "$SOCK" version > /dev/null 2>&1 || hard_error "nobody cannot reach $SOCK"

submit() {
        local out
        out=$(wipectl --json wipe --yes --no-wait "$@") || fail "wipe --no-wait $* exited $?: $out"
        echo "$out" | jq -r '.jobs[0].id'
}
did=$(submit --verify none "$ended")
[ "$(wait_job "$did" 60)" = done ] || fail "job $did on $ended did not end done"
rid=$(submit --verify none --max-rate 1M "$running")    # 64 s: outlives the test
pid=$(submit --verify none --max-rate 4M "$paused")
wait_bytes "$pid" 1 10 || fail "job $pid does not progress"
wipectl pause "$pid" > /dev/null || fail "pause $pid exited $?"
state=$(wait_state "$pid" paused 5) || fail "job $pid is $state 5 s after pause"
ended_sum=$(dev_sha256 "$ended")
paused_sum=$(dev_sha256 "$paused")

# --- wipectl as nobody: exit 4 and "permission denied" ---------------------------------------
# refused WHAT ARG...: nobody's wipectl ARG... exits 4 with "permission denied" on stderr.
refused() {
        local what=$1 out rc
        shift
        out=$(nobody_wipectl "$@" 2>&1 < /dev/null)
        rc=$?
        [ $rc = 4 ] || fail "unprivileged $what exited $rc, expected 4: $out"
        echo "$out" | grep -qi "permission denied" || fail "unprivileged $what: no \"permission denied\": $out"
}
refused "wipe" wipe --yes --verify none "$target"
refused "wipe --no-wait" wipe --yes --no-wait "$target"
refused "cancel" cancel "$rid"
refused "pause" pause "$rid"
refused "resume" resume "$pid"
refused "forget" forget "$did"
refused "probe" probe "$target"
refused "verify" verify "$did"
refused "verify --no-wait" verify --no-wait "$did"
refused "report --keys" report --keys "$did"

# --- the raw protocol: EPERM for every acting op, whatever the fields ----------------------------
# raw_code LINE: the error code of nobody's request LINE ("ok" when it succeeded); the message of a
# refusal must say "permission denied".
raw_code() {
        local reply
        reply=$(printf '%s\n' "$1" | as_nobody socat -t 5 - "UNIX-CONNECT:$SOCK" 2>/dev/null | head -n 1)
        if [ "$(echo "$reply" | jq -r '.ok')" = true ]; then
                echo ok
                return
        fi
        [ "$(echo "$reply" | jq -r '.error.code')" != EPERM ] || echo "$reply" | jq -r '.error.message' | grep -qi "permission denied" ||
                fail "EPERM without \"permission denied\": $reply"
        echo "$reply" | jq -r '.error.code // "no-reply"'
}
for line in \
        "{\"id\":1,\"op\":\"submit\",\"devices\":[\"$target\"],\"verify\":\"none\"}" \
        "{\"id\":1,\"op\":\"submit\",\"devices\":[\"$target\"],\"method\":\"zero\",\"verify\":\"none\",\"queue_depth\":1}" \
        "{\"id\":1,\"op\":\"cancel\",\"job\":$rid}" \
        "{\"id\":1,\"op\":\"pause\",\"job\":$rid}" \
        "{\"id\":1,\"op\":\"resume\",\"job\":$pid}" \
        "{\"id\":1,\"op\":\"resume\",\"job\":$pid,\"device\":\"$paused\"}" \
        "{\"id\":1,\"op\":\"forget\",\"job\":$did}" \
        "{\"id\":1,\"op\":\"probe\",\"devices\":[\"$target\"]}" \
        "{\"id\":1,\"op\":\"verify\",\"job\":$did}" \
        "{\"id\":1,\"op\":\"verify\",\"job\":$did,\"verify\":\"all\"}" \
        "{\"id\":1,\"op\":\"report\",\"job\":$did,\"keys\":true}"; do
        code=$(raw_code "$line")
        [ "$code" = EPERM ] || fail "unprivileged $line -> $code, expected EPERM"
done

# --- what anyone may do ------------------------------------------------------------------------
for args in version status "status $rid" list "list --all" "report $did" "--json report $did" "watch $did" \
        "--json watch $did" "wait $did"; do
        # shellcheck disable=SC2086
        out=$(nobody_wipectl $args 2>&1 < /dev/null) || fail "unprivileged '$args' exited $?: $out"
done
out=$(nobody_wipectl --json report "$did")
[ "$(echo "$out" | jq -r '[.passes[] | has("key")] | any')" = false ] || fail "report without --keys shows a key to nobody"
for line in '{"id":1,"op":"version"}' '{"id":1,"op":"status"}' "{\"id\":1,\"op\":\"status\",\"jobs\":[$rid]}" \
        '{"id":1,"op":"list"}' "{\"id\":1,\"op\":\"report\",\"job\":$did}" "{\"id\":1,\"op\":\"report\",\"job\":$did,\"keys\":false}" \
        "{\"id\":1,\"op\":\"watch\",\"jobs\":[$did]}"; do
        code=$(raw_code "$line")
        [ "$code" = ok ] || fail "unprivileged $line -> $code, expected ok"
done
# A live watch of the running job: its reply and the first progress events.
out=$(printf '{"id":1,"op":"watch","jobs":[%s],"interval_ms":200}\n' "$rid" |
        timeout 2 setpriv --reuid=nobody --regid="$nogroup" --clear-groups socat - "UNIX-CONNECT:$SOCK" 2>/dev/null)
[ "$(echo "$out" | head -n 1 | jq -r '.ok')" = true ] || fail "unprivileged watch of job $rid: $(echo "$out" | head -n 1)"
echo "$out" | grep -q '"event":"progress"' || fail "unprivileged watch of job $rid: no progress events: ${out:0:300}"

# --- nothing changed ---------------------------------------------------------------------------
[ "$(job_field "$rid" state)" = running ] || fail "job $rid is $(job_field "$rid" state) after nobody's requests"
[ "$(job_field "$pid" state)" = paused ] || fail "job $pid is $(job_field "$pid" state) after nobody's requests"
[ "$(job_field "$did" state)" = done ] || fail "job $did is $(job_field "$did" state) after nobody's requests"
[ "$(wipectl --json list --all | jq '.jobs | length')" = 3 ] || fail "the jobs changed: $(wipectl --json list --all)"
[ "$(dev_sha256 "$target")" = "$target_sum" ] || fail "$target was written after unprivileged requests"
[ "$(dev_sha256 "$paused")" = "$paused_sum" ] || fail "$paused (paused job $pid) was written"
[ "$(dev_sha256 "$ended")" = "$ended_sum" ] || fail "$ended (done job $did) was written"

# --- the group "wiped" may act ----------------------------------------------------------------
if gid=$(getent group wiped | cut -d: -f3) && [ -n "$gid" ]; then
        out=$(setpriv --reuid=nobody --regid="$nogroup" --groups="$gid" "$WIPECTL_BIN" --socket "$SOCK" --json \
                wipe --yes --no-wait --verify none "$target" 2>&1) || fail "nobody in group wiped: wipe exited $?: $out"
        gid_job=$(echo "$out" | jq -r '.jobs[0].id')
        [ "$(wait_job "$gid_job" 60)" = done ] || fail "job $gid_job of group wiped did not end done"
        out=$(setpriv --reuid=nobody --regid="$nogroup" --groups="$gid" "$WIPECTL_BIN" --socket "$SOCK" report --keys "$gid_job" 2>&1)
        rc=$?
        [ $rc = 4 ] || fail "nobody in group wiped: report --keys exited $rc, expected 4 (root only): $out"
else
        note "no group wiped on this machine: the group part is not tested"
fi

wipectl cancel "$rid" > /dev/null || fail "cancel $rid exited $?"
wipectl cancel "$pid" > /dev/null || fail "cancel $pid exited $?"
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
