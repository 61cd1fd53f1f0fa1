#!/bin/bash
# Permissions (wiped(8) PERMISSIONS): two sockets. The control socket (0660) is for root and the
# group wiped; beside it the read-only socket (0666, wiped-status.sock) serves anyone what changes
# nothing. An unprivileged client may look (version, status, list, watch, report without keys)
# through the read-only socket, directly or by wipectl's fallback when the control socket refuses
# it, but not act: submit, cancel, pause, resume, forget, probe, verify and report with keys are
# refused with EPERM, "permission denied" and the usermod line, wipectl exit 4, and change nothing
# (on the read-only socket even for root). The control socket made reachable to all (0666) still
# checks each request. A member of the group "wiped" may submit (when the group exists on this
# machine). --status-socket none: no read-only socket; both sockets go when the daemon stops.
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

STATUS_SOCK=$TEST_DIR/wiped-status.sock      # beside $SOCK, the daemon's default
start_daemon --threads 2
# The test directory is root's and 0700; nobody needs to reach the sockets in it.
chmod 0711 "$TEST_DIR" || hard_error "chmod $TEST_DIR"
[ -S "$STATUS_SOCK" ] || fail "no read-only socket at $STATUS_SOCK: $(ls -l "$TEST_DIR")"
[ "$(stat -c %a "$SOCK")" = 660 ] || fail "$SOCK has mode $(stat -c %a "$SOCK"), expected 660"
[ "$(stat -c %a "$STATUS_SOCK")" = 666 ] || fail "$STATUS_SOCK has mode $(stat -c %a "$STATUS_SOCK"), expected 666"

# as_nobody COMMAND...: run it as nobody, without supplementary groups.
as_nobody() { setpriv --reuid=nobody --regid="$nogroup" --clear-groups "$@"; }
nobody_wipectl() { as_nobody "$WIPECTL_BIN" --socket "$SOCK" "$@"; }
as_nobody socat -t 5 - "UNIX-CONNECT:$SOCK" < /dev/null > /dev/null 2>&1 && hard_error "nobody can connect to $SOCK (0660)"

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

# refused WHAT ARG...: nobody's wipectl ARG... exits 4 with "permission denied" and the exact fix
# on stderr: the usermod line (keys: root only).
refused() {
        local what=$1 out rc fix='sudo usermod -aG wiped $USER'
        shift
        [[ " $* " == *" --keys "* ]] && fix="keys are for root only"
        out=$(nobody_wipectl "$@" 2>&1 < /dev/null)
        rc=$?
        [ $rc = 4 ] || fail "unprivileged $what exited $rc, expected 4: $out"
        echo "$out" | grep -qi "permission denied" || fail "unprivileged $what: no \"permission denied\": $out"
        echo "$out" | grep -qF "$fix" || fail "unprivileged $what: no \"$fix\": $out"
}

# --- the read-only socket: anyone may look, nobody may act ---------------------------------------
# Through the fallback (--socket names the control socket, which refuses nobody) and directly.
for sock in "$SOCK" "$STATUS_SOCK"; do
        for args in version status "status $rid" list "list --all" "report $did" "--json report $did" "watch $did" \
                "--json watch $did" "wait $did"; do
                # shellcheck disable=SC2086
                out=$(as_nobody "$WIPECTL_BIN" --socket "$sock" $args 2>&1 < /dev/null) ||
                        fail "unprivileged '$args' through $sock exited $?: $out"
        done
        out=$(as_nobody "$WIPECTL_BIN" --socket "$sock" --json status "$rid") || fail "unprivileged status $rid through $sock"
        [ "$(echo "$out" | jq -r '.jobs[0].state')" = running ] || fail "unprivileged status $rid through $sock: $out"
        out=$(as_nobody "$WIPECTL_BIN" --socket "$sock" --json report "$did")
        [ "$(echo "$out" | jq -r '[.passes[] | has("key")] | any')" = false ] || fail "report through $sock shows a key"
        out=$(as_nobody "$WIPECTL_BIN" --socket "$sock" --json watch "$rid" 2>&1 < /dev/null | head -c 4096 | head -n 1)
        [ -n "$out" ] || fail "unprivileged watch $rid through $sock: nothing"
        SOCK=$sock refused "wipe through $sock" wipe --yes --verify none "$target"
        SOCK=$sock refused "wipe --no-wait through $sock" wipe --yes --no-wait "$target"
        SOCK=$sock refused "cancel through $sock" cancel "$rid"
        SOCK=$sock refused "pause through $sock" pause "$rid"
        SOCK=$sock refused "resume through $sock" resume "$pid"
        SOCK=$sock refused "forget through $sock" forget "$did"
        SOCK=$sock refused "probe through $sock" probe "$target"
        SOCK=$sock refused "verify through $sock" verify "$did"
        SOCK=$sock refused "report --keys through $sock" report --keys "$did"
done
# $WIPED_STATUS_SOCKET names the read-only socket of the fallback.
ln -s "$STATUS_SOCK" "$TEST_DIR/elsewhere.sock" || hard_error "ln"
out=$(as_nobody env WIPED_STATUS_SOCKET="$TEST_DIR/elsewhere.sock" "$WIPECTL_BIN" --socket "$SOCK" status 2>&1) ||
        fail "status with WIPED_STATUS_SOCKET exited $?: $out"
# A live watch through the read-only socket: its reply and the first progress events.
out=$(printf '{"id":1,"op":"watch","jobs":[%s],"interval_ms":200}\n' "$rid" |
        timeout 2 setpriv --reuid=nobody --regid="$nogroup" --clear-groups socat - "UNIX-CONNECT:$STATUS_SOCK" 2>/dev/null)
[ "$(echo "$out" | head -n 1 | jq -r '.ok')" = true ] || fail "watch of job $rid on $STATUS_SOCK: $(echo "$out" | head -n 1)"
echo "$out" | grep -q '"event":"progress"' || fail "watch of job $rid on $STATUS_SOCK: no progress events: ${out:0:300}"
# The raw protocol on the read-only socket, as root: only what changes nothing.
ro_code() {
        local reply
        reply=$(printf '%s\n' "$1" | socat -t 5 - "UNIX-CONNECT:$STATUS_SOCK" 2>/dev/null | head -n 1)
        [ "$(echo "$reply" | jq -r '.ok')" = true ] && { echo ok; return; }
        [ "$(echo "$reply" | jq -r '.error.code')" != EPERM ] ||
                echo "$reply" | jq -r '.error.message' | grep -Eq "permission denied.*$SOCK($| .*usermod -aG wiped)" ||
                fail "EPERM on $STATUS_SOCK without the control socket and the usermod line: $reply"
        echo "$reply" | jq -r '.error.code // "no-reply"'
}
for line in "{\"id\":1,\"op\":\"submit\",\"devices\":[\"$target\"],\"verify\":\"none\"}" \
        "{\"id\":1,\"op\":\"cancel\",\"job\":$rid}" "{\"id\":1,\"op\":\"pause\",\"job\":$rid}" \
        "{\"id\":1,\"op\":\"resume\",\"job\":$pid}" "{\"id\":1,\"op\":\"forget\",\"job\":$did}" \
        "{\"id\":1,\"op\":\"probe\",\"devices\":[\"$target\"]}" "{\"id\":1,\"op\":\"verify\",\"job\":$did}" \
        "{\"id\":1,\"op\":\"report\",\"job\":$did,\"keys\":true}"; do
        code=$(ro_code "$line")
        [ "$code" = EPERM ] || fail "root on the read-only socket: $line -> $code, expected EPERM"
done
for line in '{"id":1,"op":"version"}' '{"id":1,"op":"status"}' '{"id":1,"op":"list"}' \
        "{\"id\":1,\"op\":\"report\",\"job\":$did,\"keys\":false}" "{\"id\":1,\"op\":\"watch\",\"jobs\":[$did]}"; do
        code=$(ro_code "$line")
        [ "$code" = ok ] || fail "root on the read-only socket: $line -> $code, expected ok"
done
[ "$(job_field "$rid" state)" = running ] || fail "job $rid is $(job_field "$rid" state) after the read-only socket"
[ "$(job_field "$pid" state)" = paused ] || fail "job $pid is $(job_field "$pid" state) after the read-only socket"
[ "$(dev_sha256 "$target")" = "$target_sum" ] || fail "$target was written through the read-only socket"

# --- the control socket open to all (0666): each request is still checked ----------------------
chmod 0666 "$SOCK" || hard_error "chmod $SOCK"
as_nobody "$WIPECTL_BIN" --socket "$SOCK" version > /dev/null 2>&1 || hard_error "nobody cannot reach $SOCK"

# --- wipectl as nobody: exit 4 and "permission denied" ---------------------------------------
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
        [ "$(echo "$reply" | jq -r '.error.code')" != EPERM ] ||
                echo "$reply" | jq -r '.error.message' | grep -qi "permission denied.*usermod -aG wiped" ||
                echo "$reply" | jq -r '.error.message' | grep -q "keys are for root only" ||
                fail "EPERM without \"permission denied\" and the usermod line: $reply"
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
[ ! -e "$SOCK" ] || fail "the daemon left $SOCK behind"
[ ! -e "$STATUS_SOCK" ] || fail "the daemon left $STATUS_SOCK behind"

# --- no read-only socket (--status-socket ""): the fallback has nowhere to go --------------------
start_daemon --threads 1 --status-socket ""
[ ! -e "$STATUS_SOCK" ] || fail "--status-socket \"\" made $STATUS_SOCK"
[ "$(find "$TEST_DIR" -maxdepth 1 -type s | wc -l)" = 1 ] || fail "sockets other than $SOCK: $(find "$TEST_DIR" -maxdepth 1 -type s)"
[ "$(stat -c %a "$SOCK")" = 660 ] || fail "$SOCK has mode $(stat -c %a "$SOCK"), expected 660"
out=$(nobody_wipectl status 2>&1)
rc=$?
[ $rc = 4 ] || fail "status as nobody without a read-only socket exited $rc, expected 4: $out"
echo "$out" | grep -qF "$SOCK: permission denied: run as root, or add yourself to the group wiped: sudo usermod -aG wiped \$USER" ||
        fail "status as nobody without a read-only socket: not the exact fix: $out"
refused "wipe without a read-only socket" wipe --yes --verify none "$target"
# A member of the group wiped reaches the control socket (0660 root:wiped) and may look and act.
if [ -n "${gid:-}" ] && [ "$(stat -c %G "$SOCK")" = wiped ]; then
        as_member() { setpriv --reuid=nobody --regid="$nogroup" --groups="$gid" "$WIPECTL_BIN" --socket "$SOCK" "$@"; }
        as_member status > /dev/null || fail "a member of wiped: status on $SOCK exited $?"
        out=$(as_member --json wipe --yes --no-wait --verify none "$target" 2>&1) || fail "a member of wiped: wipe exited $?: $out"
        [ "$(wait_job "$(echo "$out" | jq -r '.jobs[0].id')" 60)" = done ] || fail "the member's job did not end done"
fi
stop_daemon || fail "daemon exit status $?"
[ ! -e "$SOCK" ] || fail "the daemon left $SOCK behind"

# --- the configuration key: the read-only socket where the file says ----------------------------
printf 'status-socket = %s\n' "$TEST_DIR/ro.sock" > "$TEST_DIR/wiped.conf"
start_daemon --threads 1 --config "$TEST_DIR/wiped.conf"
[ -S "$TEST_DIR/ro.sock" ] || fail "status-socket = $TEST_DIR/ro.sock: no socket there"
[ ! -e "$STATUS_SOCK" ] || fail "status-socket = $TEST_DIR/ro.sock: $STATUS_SOCK made too"
out=$(as_nobody env WIPED_STATUS_SOCKET="$TEST_DIR/ro.sock" "$WIPECTL_BIN" --socket "$SOCK" list 2>&1) ||
        fail "list as nobody through WIPED_STATUS_SOCKET=$TEST_DIR/ro.sock exited $?: $out"
stop_daemon || fail "daemon exit status $?"
[ ! -e "$TEST_DIR/ro.sock" ] || fail "the daemon left $TEST_DIR/ro.sock behind"
pass
