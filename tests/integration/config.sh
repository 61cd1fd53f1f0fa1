#!/bin/bash
# The configuration file (wiped --config): its values apply and the command line wins over them; an
# unknown key, a bad value or a duplicate key stops start-up with FILE:LINE; a missing --config file
# is an error. deny and allow patterns refuse devices at probe and at submit with EACCES and nothing
# is written. The default method and verification of a submit come from the file; SIGHUP reads it
# again for the next submit, keeps what needs a restart, and a bad file keeps the old settings.
# socket-group owns the socket the daemon creates, mode 0660. An unknown key names the closest
# known one, and start-up reports every problem of the file. wiped --check-config prints every
# problem (exit 1) or the settings in effect (exit 0, a file that reads back the same), touching no
# state directory or socket; the annotated example wiped.conf parses, with its lines commented
# out (the defaults) and uncommented, and shows every key.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v socat >/dev/null || hard_error "socat missing (tools/install-deps installs it)"
command -v groupadd >/dev/null && command -v groupdel >/dev/null || hard_error "groupadd/groupdel missing (passwd)"

CONF=$TEST_DIR/wiped.conf

# A group of the test's own for socket-group, deleted on any exit (then lib.sh's cleanup runs).
GROUP=wipedt$$
groupadd "$GROUP" || hard_error "groupadd $GROUP failed"
trap 'rc=$?; groupdel "$GROUP" 2>/dev/null; (exit $rc); cleanup' EXIT

version() { wipectl --json version | jq -c .daemon; }

# reload: SIGHUP, then wait until the daemon logged the outcome ("reloaded" or "not reloaded").
reload() {
        local n
        n=$(grep -c 'reloaded' "$TEST_DIR/daemon.log")
        kill -HUP "$DAEMON_PID" || fail "kill -HUP"
        for _ in $(seq 100); do
                [ "$(grep -c 'reloaded' "$TEST_DIR/daemon.log")" -gt "$n" ] && return 0
                sleep 0.1
        done
        fail "no reload logged after SIGHUP"
}

# start_fails FILE LINE TEXT: wiped --config FILE exits 1 with "FILE:LINE: TEXT" on stderr and
# serves nothing.
start_fails() {
        local file=$1 line=$2 text=$3
        expect_exit 1 timeout 20 "$WIPED" --config "$file" --socket "$SOCK" --state-dir "$STATE" --foreground
        grep -qF -- "$file:$line: $text" "$TEST_DIR/err" ||
                fail "$file: expected '$file:$line: $text' on stderr, got: $(cat "$TEST_DIR/err")"
        [ ! -e "$SOCK" ] || fail "$file: a socket was created"
}

# submit_raw DEV: the daemon's reply to a submit of DEV that names nothing else.
submit_raw() { request "{\"id\":1,\"op\":\"submit\",\"devices\":[\"$1\"]}"; }

# fill_random DEV: random bytes over all of one of the test's loop devices; prints their sha256.
fill_random() {
        head -c "$(blockdev --getsize64 "$1")" /dev/urandom | dd of="$1" bs=1M iflag=fullblock oflag=direct status=none ||
                hard_error "cannot fill $1"
        sha256sum < "$1" | cut -d' ' -f1
}

# --- values apply; the command line wins -------------------------------------------------------
cat > "$CONF" <<EOF
# wiped.conf of $TEST_NAME

threads = 3
   buffers=5
io-size = 512K
method = zero
verify = none
cipher = chacha20
EOF
start_daemon --config "$CONF"
v=$(version)
jq_is "$v" .threads 3 "version (file)"
jq_is "$v" .buffers 5 "version (file)"
jq_is "$v" .io_size 524288 "version (file)"
jq_is "$v" .config "$CONF" "version (file)"
jq_is "$v" .method zero "version (file)"
jq_is "$v" .verify none "version (file)"
jq_is "$v" .cipher chacha20 "version (file)"
s=$(wipectl --json status)
jq_is "$s" .daemon.config "$CONF" "status (file)"
jq_is "$s" .daemon.method zero "status (file)"
stop_daemon || fail "daemon exit status $?"

start_daemon --config "$CONF" --threads 2 --io-size 1M
v=$(version)
jq_is "$v" .threads 2 "version (command line over the file)"
jq_is "$v" .io_size 1048576 "version (command line over the file)"
jq_is "$v" .buffers 5 "version (the file where the command line says nothing)"
stop_daemon || fail "daemon exit status $?"

# An empty file: the defaults.
start_daemon --config /dev/null
v=$(version)
jq_is "$v" .config /dev/null "version (empty file)"
jq_is "$v" .method random "version (empty file)"
jq_is "$v" .verify sample "version (empty file)"
jq_is "$v" .cipher auto "version (empty file)"
stop_daemon || fail "daemon exit status $?"
# No --config and no default file (the case of every other test): fine, and "config" is null.
if [ ! -e /etc/wiped/wiped.conf ]; then
        NO_CONFIG=1 start_daemon
        jq_is "$(version)" .config null "version (no file)"
        stop_daemon || fail "daemon exit status $?"
else
        note "/etc/wiped/wiped.conf exists: the case without a file is not checked"
fi

# --- errors stop start-up with FILE:LINE ---------------------------------------------------------
bad=$TEST_DIR/bad.conf
printf '# colours\nthreads = 2\ncolour = blue\n' > "$bad"
start_fails "$bad" 3 'unknown key "colour"'
printf 'threads = 2\nbuffers = 4\n\nthreads = 3\n' > "$bad"
start_fails "$bad" 4 'duplicate key "threads" (first set on line 1)'
printf 'threads = 0\n' > "$bad"
start_fails "$bad" 1 'threads = 0: invalid thread count (1..256)'
printf 'method = zero\nverify = most\n' > "$bad"
start_fails "$bad" 2 'verify = most: unknown verification'
printf 'method = shred\n' > "$bad"
start_fails "$bad" 1 'method = shred: unknown method'
printf 'io-size = 1000\n' > "$bad"
start_fails "$bad" 1 'io-size = 1000: invalid I/O size'
printf 'deny = loop*\n' > "$bad"
start_fails "$bad" 1 'deny = loop*: not an absolute path pattern'
printf 'threads 2\n' > "$bad"
start_fails "$bad" 1 'expected "key = value"'
printf 'socket-group = %s-none\n' "$GROUP" > "$bad"
start_fails "$bad" 1 "socket-group = $GROUP-none: no such group"
# The command line is no excuse for a bad file.
printf 'threads = 0\n' > "$bad"
expect_exit 1 timeout 20 "$WIPED" --config "$bad" --threads 2 --socket "$SOCK" --state-dir "$STATE" --foreground
grep -qF "$bad:1: threads = 0" "$TEST_DIR/err" || fail "bad file under --threads: $(cat "$TEST_DIR/err")"
# A --config file that does not exist.
expect_exit 1 timeout 20 "$WIPED" --config "$TEST_DIR/none.conf" --socket "$SOCK" --state-dir "$STATE" --foreground
grep -qF "$TEST_DIR/none.conf: No such file or directory" "$TEST_DIR/err" ||
        fail "missing --config file: $(cat "$TEST_DIR/err")"
[ ! -e "$SOCK" ] || fail "missing --config file: a socket was created"

# --- deny and allow ------------------------------------------------------------------------------
d1=$(make_loop 16M)
d2=$(make_loop 16M)
sum1=$(fill_random "$d1")
cat > "$CONF" <<EOF
allow = /dev/loop*
deny = $d1
EOF
start_daemon --config "$CONF" --threads 2
p=$(wipectl --json probe "$d1" 2> "$TEST_DIR/probe.err")
jq_is "$p" '.devices[0].wipeable' false "probe of a denied device"
jq_is "$p" '.devices[0].refusal.code' EACCES "probe of a denied device"
jq_is "$p" '.devices[0].refusal.message' "$d1: refusing: denied by the configuration (deny = $d1)" \
        "probe of a denied device"
expect_exit 5 wipectl probe "$d1"
grep -qF "$d1: refusing: denied by the configuration (deny = $d1)" "$TEST_DIR/out" "$TEST_DIR/err" ||
        fail "probe text of a denied device: $(cat "$TEST_DIR/out" "$TEST_DIR/err")"
r=$(submit_raw "$d1")
jq_is "$r" .ok false "submit of a denied device"
jq_is "$r" .error.code EACCES "submit of a denied device"
jq_is "$r" .error.message "$d1: refusing: denied by the configuration (deny = $d1)" "submit of a denied device"
# Through a symlink of its own the resolved node is what the pattern sees.
ln -s "$d1" "$TEST_DIR/alias"
r=$(submit_raw "$TEST_DIR/alias")
jq_is "$r" .error.code EACCES "submit of a denied device through a symlink"
# A device the configuration denies is a refusal: exit 5.
expect_exit 5 wipectl wipe --yes "$d1"
grep -qF "denied by the configuration (deny = $d1)" "$TEST_DIR/err" || fail "wipe of a denied device: $(cat "$TEST_DIR/err")"
# All or nothing: the allowed device of the same request is not written either.
expect_exit 5 wipectl wipe --yes --passes one "$d2" "$d1"
[ "$(wipectl --json list --all | jq '.jobs | length')" = 0 ] || fail "a denied device got a job"
cmp -s -n $((16 << 20)) "$d2" /dev/zero || fail "$d2 was written by a refused request"
[ "$(sha256sum < "$d1" | cut -d' ' -f1)" = "$sum1" ] || fail "$d1 was written though denied"
# deny wins, and the other loop device matches the allow pattern.
jq_is "$(wipectl --json probe "$d2")" '.devices[0].wipeable' true "probe of an allowed device"
stop_daemon || fail "daemon exit status $?"

# Only d2 allowed: d1 matches no allow pattern.
printf 'allow = %s\nallow = /dev/disk/by-id/*\n' "$d2" > "$CONF"
start_daemon --config "$CONF" --threads 2
r=$(submit_raw "$d1")
jq_is "$r" .error.code EACCES "submit of a device no allow pattern matches"
jq_is "$r" .error.message "$d1: refusing: denied by the configuration (matches no allow pattern)" \
        "submit of a device no allow pattern matches"
jq_is "$(wipectl --json probe "$d1")" '.devices[0].refusal.code' EACCES "probe of a device no allow pattern matches"
jq_is "$(wipectl --json probe "$d2")" '.devices[0].wipeable' true "probe of an allowed device"
[ "$(sha256sum < "$d1" | cut -d' ' -f1)" = "$sum1" ] || fail "$d1 was written though not allowed"
stop_daemon || fail "daemon exit status $?"

# --- the defaults of a submit, and SIGHUP --------------------------------------------------------
cat > "$CONF" <<EOF
threads = 2
method = zero
verify = last
deny = $d1
EOF
start_daemon --config "$CONF"
id=$(wipectl --json wipe --yes --no-wait "$d2" | jq -r '.jobs[0].id')
[ "$(wait_job "$id")" = done ] || fail "job $id: $(wipectl --json status "$id")"
[ "$(job_field "$id" method)" = zero ] || fail "job $id: method $(job_field "$id" method), not the file's zero"
[ "$(job_field "$id" verify.mode)" = last ] || fail "job $id: verify $(job_field "$id" verify.mode), not the file's last"
check_pattern "$d2" 00
# A request that says wins over the file.
id=$(wipectl --json wipe --yes --no-wait --method random --verify none "$d2" | jq -r '.jobs[0].id')
[ "$(wait_job "$id")" = done ] || fail "job $id: $(wipectl --json status "$id")"
[ "$(job_field "$id" method)" = random ] || fail "job $id: method $(job_field "$id" method), not the request's random"
[ "$(job_field "$id" verify.mode)" = none ] || fail "job $id: verify $(job_field "$id" verify.mode), not the request's"

# SIGHUP: the method, verification and patterns change for the next submit; threads needs a restart.
cat > "$CONF" <<EOF
threads = 3
method = random-zero
verify = none
cipher = chacha20
EOF
reload
daemon_alive || fail "daemon died on SIGHUP"
grep -qF "$CONF:1: threads = 3: needs a restart, 2 stays in effect" "$TEST_DIR/daemon.log" ||
        fail "no warning naming threads: $(tail -n 5 "$TEST_DIR/daemon.log")"
v=$(version)
jq_is "$v" .threads 2 "version after SIGHUP"
jq_is "$v" .method random-zero "version after SIGHUP"
jq_is "$v" .cipher chacha20 "version after SIGHUP"
id=$(wipectl --json wipe --yes --no-wait "$d1" | jq -r '.jobs[0].id')
[ "$(wait_job "$id")" = done ] || fail "job $id (deny removed by SIGHUP): $(wipectl --json status "$id")"
[ "$(job_field "$id" method)" = random-zero ] || fail "job $id: method $(job_field "$id" method) after SIGHUP"
[ "$(job_field "$id" verify.mode)" = none ] || fail "job $id: verify $(job_field "$id" verify.mode) after SIGHUP"
[ "$(job_field "$id" cipher)" = chacha20 ] || fail "job $id: cipher $(job_field "$id" cipher) after SIGHUP"
check_pattern "$d1" 00

# A bad file on SIGHUP: logged with FILE:LINE, nothing changes, the daemon goes on.
printf 'method = zero\ndeny = %s\nmethod = one\n' "$d2" > "$CONF"
reload
daemon_alive || fail "daemon died on SIGHUP with a bad file"
grep -qF "$CONF:3: duplicate key \"method\"" "$TEST_DIR/daemon.log" ||
        fail "bad file on SIGHUP not logged: $(tail -n 5 "$TEST_DIR/daemon.log")"
grep -qF "$CONF: not reloaded" "$TEST_DIR/daemon.log" || fail "no 'not reloaded' logged"
jq_is "$(version)" .method random-zero "version after a bad SIGHUP"
id=$(wipectl --json wipe --yes --no-wait "$d2" | jq -r '.jobs[0].id')
[ "$(wait_job "$id")" = done ] || fail "job $id (bad file kept no deny): $(wipectl --json status "$id")"
[ "$(job_field "$id" method)" = random-zero ] || fail "job $id: method $(job_field "$id" method) after a bad SIGHUP"

# A deny added by SIGHUP refuses the next submit.
printf 'method = zero\ndeny = %s\n' "$d2" > "$CONF"
reload
r=$(submit_raw "$d2")
jq_is "$r" .error.code EACCES "submit after a deny added by SIGHUP"
stop_daemon || fail "daemon exit status $?"

# --- socket and socket-group from the file -------------------------------------------------------
cat > "$CONF" <<EOF
socket = $SOCK
socket-group = $GROUP
threads = 1
EOF
"$WIPED" --config "$CONF" --state-dir "$STATE" --foreground >> "$TEST_DIR/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 100); do
        [ -S "$SOCK" ] && wipectl version > /dev/null 2>&1 && break
        kill -0 "$DAEMON_PID" 2>/dev/null || fail "wiped with socket and socket-group from the file exited"
        sleep 0.1
done
[ -S "$SOCK" ] || fail "no socket at $SOCK from the file"
[ "$(stat -c '%G %a' "$SOCK")" = "$GROUP 660" ] || fail "socket: $(stat -c '%G %a' "$SOCK"), expected $GROUP 660"
jq_is "$(version)" .threads 1 "version (socket from the file)"
stop_daemon || fail "daemon exit status $?"
[ ! -e "$SOCK" ] || fail "the socket was left behind"

# --- Did you mean; every problem at once; wiped --check-config ------------------------------------
printf 'max_rate = 200M\nthreads = 2\nresume = Manual\nworker-policy = idel\nspeed = 3\n' > "$CONF"
start_fails "$CONF" 1 'unknown key "max_rate"; did you mean max-rate?'
for want in "$CONF:3: resume = Manual: unknown resume mode (auto, manual); did you mean manual?" \
        "$CONF:4: worker-policy = idel: unknown scheduling policy (other, batch, idle); did you mean idle?" \
        "$CONF:5: unknown key \"speed\""; do
        grep -qxF -- "wiped: $want" "$TEST_DIR/err" || grep -qF -- "$want" "$TEST_DIR/err" ||
                fail "start-up did not report '$want': $(cat "$TEST_DIR/err")"
done
grep -q 'speed.*did you mean' "$TEST_DIR/err" && fail "a suggestion for a key far from all: $(cat "$TEST_DIR/err")"

# check_config ARG...: wiped --check-config with a socket and state directory that must stay
# untouched (they do not exist before and must not after); exit status in $rc.
check_config() {
        local never=$TEST_DIR/never
        "$WIPED" --check-config --socket "$never.sock" --state-dir "$never.state" "$@" \
                > "$TEST_DIR/out" 2> "$TEST_DIR/err"
        rc=$?
        if [ -e "$never.sock" ] || [ -e "$never.state" ]; then fail "--check-config made $never.sock or $never.state"; fi
}
check_config --config "$CONF"
[ $rc = 1 ] || fail "--check-config of a bad file exited $rc"
[ "$(grep -c "^$CONF:[0-9]*: " "$TEST_DIR/err")" = 4 ] || fail "--check-config: not 4 problems: $(cat "$TEST_DIR/err")"
grep -qxF "$CONF:1: unknown key \"max_rate\"; did you mean max-rate?" "$TEST_DIR/err" ||
        fail "--check-config: $(cat "$TEST_DIR/err")"
grep -qF "configuration NOT OK" "$TEST_DIR/err" || fail "--check-config: no verdict: $(cat "$TEST_DIR/err")"
[ ! -s "$TEST_DIR/out" ] || fail "--check-config of a bad file printed settings: $(cat "$TEST_DIR/out")"
check_config --config "$TEST_DIR/missing.conf"
[ $rc = 1 ] || fail "--check-config of a missing --config file exited $rc"

# A good file: its values, the command line's over them, the defaults; the output reads back.
printf '# c\nmax-rate = 200M\nthreads = 3\ndeny = /dev/sdz\ndeny = /dev/sdy*\n' > "$CONF"
check_config --config "$CONF" --threads 5
[ $rc = 0 ] || fail "--check-config of a good file exited $rc: $(cat "$TEST_DIR/err")"
grep -qF "$CONF: configuration OK" "$TEST_DIR/err" || fail "--check-config: no verdict: $(cat "$TEST_DIR/err")"
for want in "max-rate = 200000000" "threads = 5" "deny = /dev/sdz" "deny = /dev/sdy*" "method = random" \
        "socket = $TEST_DIR/never.sock" "resume = auto"; do
        grep -qxF -- "$want" "$TEST_DIR/out" || fail "--check-config: no '$want' in: $(cat "$TEST_DIR/out")"
done
cp "$TEST_DIR/out" "$TEST_DIR/effective.conf"
check_config --config "$TEST_DIR/effective.conf" --threads 5
[ $rc = 0 ] || fail "--check-config's own output does not parse: $(cat "$TEST_DIR/err")"
diff <(grep -v '^#' "$TEST_DIR/effective.conf") <(grep -v '^#' "$TEST_DIR/out") ||
        fail "--check-config's output read back gives other settings"

# The annotated example: parses as it is (every line a comment: the defaults) and with every
# "#key = value" line made active (socket-group's group need not exist here: gid 0); it shows
# every key that --check-config prints.
example=$top_srcdir/doc/wiped.conf.example
check_config --config "$example"
[ $rc = 0 ] || fail "$example does not parse: $(cat "$TEST_DIR/err")"
[ -z "$(grep -Ev '^[[:space:]]*(#|$)' "$example")" ] || fail "$example sets something: it must show defaults only"
defaults=$(grep -v '^#' "$TEST_DIR/out")
sed -e 's/^#\([a-z][a-z-]* = \)/\1/' -e 's/^socket-group = .*/socket-group = 0/' "$example" > "$TEST_DIR/all.conf"
check_config --config "$TEST_DIR/all.conf"
[ $rc = 0 ] || fail "$example with every key uncommented does not parse: $(cat "$TEST_DIR/err")"
for key in $(sed -n 's/^#* *\([a-z][a-z-]*\) = .*/\1/p' "$TEST_DIR/out" | sort -u); do
        grep -q "^#$key = " "$example" || fail "$example does not show the key $key"
        grep -q "^$key = " "$TEST_DIR/all.conf" || fail "$key is not set when $example is uncommented"
done
# The values shown are the defaults (threads: one per CPU; the lists and the group have none; the
# sockets and the state directory are the test's own).
while IFS= read -r line; do
        case $line in job-end-hook\ =*) continue ;; esac   # none by default; the example shows one
        # The metrics have no endpoint and no file by default: the example shows one of each.
        case $line in metrics-listen\ =* | metrics-textfile\ =*) continue ;; esac
        # The sanitization record has no defaults: the example shows one of each.
        case $line in destination\ =* | operator-*\ =* | verifier-*\ =*) continue ;; esac
        # Nor a collector: the example shows one, with a header, a CA and a client certificate.
        case $line in report-url\ =* | report-header\ =* | report-ca-file\ =* | report-client-*\ =*) continue ;; esac
        case $line in threads\ =* | allow\ =* | deny\ =* | socket-group\ =* | socket\ =* | status-socket\ =* | state-dir\ =*) continue ;; esac
        grep -qxF -- "$line" <(echo "$defaults") || fail "$example: '$line' is not the default"
done < <(grep -v '^#' "$TEST_DIR/out")

pass
