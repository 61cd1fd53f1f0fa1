#!/bin/bash
# keystream backends: the daemon measures OpenSSL and libgcrypt at start-up and says in `version`
# which one makes each cipher and why; keystream-backend (option or file) sets it and needs a
# restart; a bad setting stops the daemon with a message. Whatever the backend, every byte of a
# wiped device equals the openssl CLI's keystream, also when a job written by one backend is
# resumed by a daemon using the other, which reads back and verifies the first one's bytes. The
# job's status and report name every backend that made its passes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

version() { wipectl --json version | jq .daemon; }

# backends ID: the job's keystream_backends in status and report, which must agree: "a,b".
backends() {
        local s r
        s=$(wipectl --json status "$1" | jq -r '.jobs[0].keystream_backends | join(",")')
        r=$(wipectl --json report "$1" | jq -r '.keystream_backends | join(",")')
        [ "$s" = "$r" ] || fail "job $1: keystream_backends '$s' in status, '$r' in the report"
        echo "$s"
}

# wipe_check DEV CIPHER WANT: a one-pass random wipe with full verification; done, every byte the
# CLI's keystream, made by the backends WANT.
wipe_check() {
        local dev=$1 cipher=$2 want=$3 id state
        id=$(wipectl --json wipe --yes --no-wait --method random --cipher "$cipher" --verify all "$dev" |
                jq -r '.jobs[0].id') || fail "wipe $dev"
        state=$(wait_job "$id" 60)
        [ "$state" = done ] || fail "job $id ($cipher) ended $state: $(wipectl --json status "$id")"
        [ "$(job_cipher "$id")" = "$cipher" ] || fail "job $id: cipher $(job_cipher "$id")"
        check_keystream "$dev" "$cipher" "$(job_key "$id")"
        [ "$(backends "$id")" = "$want" ] || fail "job $id ($cipher): keystream_backends $(backends "$id"), not $want"
}

d1=$(make_loop 48M)
d2=$(make_loop 384M)

# --- a bad setting: the daemon does not start, and says why ---------------------------------------
for bad in fast aes:gcrypt "aes-128-ctr:gcrypt,aes-128-ctr:openssl" "chacha20:"; do
        expect_exit 2 timeout 20 "$WIPED" --config /dev/null --keystream-backend "$bad" --socket "$SOCK" \
                --state-dir "$STATE" --foreground
        grep -qF "unknown keystream backend" "$TEST_DIR/err" ||
                fail "--keystream-backend $bad: $(cat "$TEST_DIR/err")"
done
[ ! -S "$SOCK" ] || fail "a daemon refusing its settings left $SOCK"

# --- auto: both measured, the faster chosen ----------------------------------------------------------
start_daemon --threads 2
v=$(version)
for c in aes-128-ctr chacha20; do
        jq_is "$v" ".keystream[\"$c\"].chosen_by" measured "version: $c"
        jq_is "$v" ".keystream[\"$c\"].mbps | (.openssl > 0) and (.gcrypt > 0)" true "version: $c speeds"
        # The chosen one is the faster of the two measured then.
        jq_is "$v" ".keystream[\"$c\"] | .mbps[.backend] == (.mbps | [.[]] | max)" true "version: $c choice"
done
jq_is "$v" .keystream_backend auto "version: the setting"
note "auto: $(echo "$v" | jq -c .keystream)"
grep -Eq "keystream: aes-128-ctr made by (openssl|gcrypt) \(the fastest; measured on one thread: openssl [0-9.]+ GB/s, gcrypt [0-9.]+ GB/s\)" \
        "$TEST_DIR/daemon.log" || fail "no start-up line naming the choice: $(grep keystream "$TEST_DIR/daemon.log")"
auto_aes=$(echo "$v" | jq -r '.keystream["aes-128-ctr"].backend')
wipe_check "$d1" aes-128-ctr "$auto_aes"
stop_daemon || fail "wiped exited $? on SIGTERM"

# --- each backend configured, each cipher -----------------------------------------------------------
for b in gcrypt openssl; do
        start_daemon --threads 2 --keystream-backend "$b"
        v=$(version)
        for c in aes-128-ctr chacha20; do
                jq_is "$v" ".keystream[\"$c\"].backend" "$b" "version with $b: $c"
                jq_is "$v" ".keystream[\"$c\"].chosen_by" configured "version with $b: $c"
                wipe_check "$d1" "$c" "$b"
        done
        stop_daemon || fail "wiped exited $? on SIGTERM"
done

# --- one job, two backends: written by gcrypt, finished and verified by openssl ----------------------
start_daemon --threads 2 --keystream-backend gcrypt --checkpoint-interval 0.5 --checkpoint-bytes 16M --chunk-size 8M
id=$(wipectl --json wipe --yes --no-wait --method random --cipher chacha20 --verify all --max-rate 60M "$d2" |
        jq -r '.jobs[0].id') || fail "wipe $d2"
wait_bytes "$id" $((96 << 20)) 30 || fail "job $id does not progress"
stop_daemon || fail "wiped exited $? on SIGTERM"
start_daemon --threads 2 --keystream-backend chacha20:openssl,aes-128-ctr:gcrypt
v=$(version)
jq_is "$v" '.keystream["chacha20"].backend' openssl "version after the restart"
jq_is "$v" '.keystream["aes-128-ctr"].backend' gcrypt "version after the restart"
jq_is "$v" .keystream_backend chacha20:openssl,aes-128-ctr:gcrypt "version: the setting"
# The daemon resumes it at its first tick, after the socket is served: until then it is
# interrupted, which wait_job would take for its end.
state=$(wait_state "$id" 'running|flushing|done|failed' 20) || fail "job $id not resumed at start: $state"
state=$(wait_job "$id" 90)
[ "$state" = done ] || fail "job $id ended $state after the restart: $(wipectl --json status "$id")"
[ "$(job_field "$id" resumes)" -ge 1 ] || fail "job $id was not resumed: $(wipectl --json status "$id")"
[ "$(backends "$id")" = openssl,gcrypt ] || fail "job $id: keystream_backends $(backends "$id")"
wipectl report "$id" | grep -qF "Keystream:     made by openssl and gcrypt (the same bytes either way" ||
        fail "report $id in text names not both backends: $(wipectl report "$id")"
wipectl version | grep -Eq "^keystream: aes-128-ctr by gcrypt \(configured: openssl [0-9.]+ GB/s, gcrypt [0-9.]+ GB/s\); chacha20 by openssl \(configured: " ||
        fail "version in text: $(wipectl version)"
wipectl --json report "$id" | jq -e '.verification.result == "passed"' >/dev/null ||
        fail "job $id: verification $(wipectl --json report "$id" | jq -c .verification)"
check_keystream "$d2" chacha20 "$(job_key "$id")"

# --- the setting needs a restart: a reload keeps the backends and says so -------------------------------
CONF=$TEST_DIR/wiped.conf
echo "keystream-backend = openssl" > "$CONF"
stop_daemon || fail "wiped exited $? on SIGTERM"
start_daemon --threads 2 --config "$CONF"
jq_is "$(version)" '.keystream["aes-128-ctr"].backend' openssl "version with $CONF"
echo "keystream-backend = gcrypt" > "$CONF"
kill -HUP "$DAEMON_PID"
wait_match "$TEST_DIR/daemon.log" "keystream-backend = gcrypt: needs a restart" 10 ||
        fail "no warning naming keystream-backend: $(tail -n 5 "$TEST_DIR/daemon.log")"
v=$(version)
jq_is "$v" '.keystream["aes-128-ctr"].backend' openssl "version after SIGHUP"
jq_is "$v" .keystream_backend openssl "version after SIGHUP: the setting in effect"
stop_daemon || fail "wiped exited $? on SIGTERM"

pass
