#!/bin/bash
# The provisioning kit, without a service manager or udev (neither need run here; nothing starts,
# stops or asks one, and no rule is installed): `make install` into a DESTDIR of the test's own
# installs the examples (wiped.conf, wipe.conf, the bay udev rule) and the journal's catalog; the
# catalog parses (journalctl --update-catalog into that root) and explains every MESSAGE_ID of
# daemon/log.c; the udev rule is well formed, matches whole disks on add by ID_PATH, starts
# wipe@ through SYSTEMD_WANTS (never RUN) with the instance systemd-escape --path gives;
# wipe@.service's exit status 10 fails the unit (no SuccessExitStatus=); and its ExecStopPost=,
# run by hand as systemd would after a stop, cancels the job on the unit's device only with
# WIPE_CANCEL_ON_STOP=yes and only when wipectl was killed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

for t in make journalctl systemd-escape; do
        command -v "$t" >/dev/null || skip "$t missing"
done
[ -f "$top_builddir/Makefile" ] || skip "$top_builddir is not a configured build tree"

ROOT=$TEST_DIR/root
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" install DESTDIR="$ROOT" \
        > "$TEST_DIR/install.log" 2>&1 || { cat "$TEST_DIR/install.log" >&2; fail "make install DESTDIR=$ROOT failed"; }

# find_one PATH: the one installed file whose path ends in /PATH (its path inside $ROOT).
find_one() {
        local found
        found=$(cd "$ROOT" && find . -path "*/$1" -type f | sed 's|^\.||')
        [ -n "$found" ] || fail "make install installed no $1"
        [ "$(echo "$found" | wc -l)" = 1 ] || fail "make install installed more than one $1: $found"
        echo "$found"
}
conf_example=$(find_one doc/wiped/examples/wiped.conf.example)
rules_example=$(find_one doc/wiped/examples/70-wiped-bays.rules.example)
find_one doc/wiped/examples/wipe.conf.example > /dev/null
# The example end-of-job hooks (wiped(8) HOOKS), installed executable.
for h in dispatch led-ledctl led-sg_ses spin-down upload-report print-label; do
        f=$(find_one "doc/wiped/examples/hooks/$h.sh")
        [ -x "$ROOT$f" ] || fail "$f is installed without execute permission"
done
catalog=$(find_one lib/systemd/catalog/wiped.catalog)
template_unit=$(find_one 'wipe@.service')
cmp -s "$ROOT$conf_example" "$top_srcdir/doc/wiped.conf.example" || fail "$conf_example is not doc/wiped.conf.example"
note "installed $conf_example $rules_example $catalog"

# --- The catalog: journalctl reads it (into the test's root: --update-catalog writes the
# database there) and lists one entry per MESSAGE_ID of the daemon. ---
CROOT=$TEST_DIR/catroot
mkdir -p "$CROOT/usr/lib/systemd/catalog"
cp "$ROOT$catalog" "$CROOT/usr/lib/systemd/catalog/"
journalctl --root="$CROOT" --update-catalog > "$TEST_DIR/catalog.out" 2>&1 ||
        { cat "$TEST_DIR/catalog.out" >&2; fail "journalctl --update-catalog failed on $catalog"; }
[ ! -s "$TEST_DIR/catalog.out" ] || { cat "$TEST_DIR/catalog.out" >&2; fail "journalctl complained of $catalog"; }
journalctl --root="$CROOT" --list-catalog > "$TEST_DIR/list" 2>&1 || fail "journalctl --list-catalog failed"
ids=$(grep -o '= "[0-9a-f]\{32\}"' "$top_srcdir/daemon/log.c" | tr -dc '0-9a-f\n')
[ "$(echo "$ids" | wc -l)" -ge 12 ] || hard_error "found only $(echo "$ids" | wc -l) MESSAGE_IDs in daemon/log.c"
for id in $ids; do
        grep -q "^$id wiped: " "$TEST_DIR/list" || fail "no catalog entry for MESSAGE_ID $id: $(cat "$TEST_DIR/list")"
        journalctl --root="$CROOT" --dump-catalog "$id" > "$TEST_DIR/entry" || fail "--dump-catalog $id"
        grep -q '^Documentation: man:' "$TEST_DIR/entry" || fail "catalog entry $id names no documentation"
        [ "$(grep -cv '^\(--\|Subject:\|Defined-By:\|Documentation:\|$\)' "$TEST_DIR/entry")" -gt 0 ] ||
                fail "catalog entry $id has no text"
done
[ "$(wc -l < "$TEST_DIR/list")" = "$(echo "$ids" | wc -l)" ] || fail "the catalog has entries for unknown ids: $(cat "$TEST_DIR/list")"
# Every id is also in wiped(8) (LOGGING).
for id in $ids; do grep -q "$id" "$top_srcdir/man/wiped.8" || fail "MESSAGE_ID $id is not in wiped(8)"; done

# --- The udev rule: well formed (udevadm verify where this systemd has it: 254 on), and the
# shape of a safe bay rule. ---
RULES=$ROOT$rules_example
if command -v udevadm > /dev/null && udevadm verify --help > /dev/null 2>&1; then
        udevadm verify --resolve-names=never "$RULES" > "$TEST_DIR/verify" 2>&1 ||
                { cat "$TEST_DIR/verify" >&2; fail "udevadm verify $rules_example"; }
else
        note "udevadm verify unavailable here: the rule's syntax is checked by this test only"
fi
rules=$(grep -Ev '^[[:space:]]*(#|$)' "$RULES")
[ "$(echo "$rules" | wc -l)" = 1 ] || fail "$rules_example: expected one rule: $rules"
# KEY[{ATTR}]OP"VALUE" pairs separated by ", " (udev(7)), with keys udev knows.
rest=$rules
while [ -n "$rest" ]; do
        [[ $rest =~ ^(ACTION|SUBSYSTEM|KERNEL|DEVPATH|ENV\{[A-Z_]+\}|TAG|ATTRS?\{[a-z_/]+\})(==|!=|\+=|=)\"([^\"]*)\"(,\ (.*))?$ ]] ||
                fail "$rules_example: not udev syntax at: $rest"
        rest=${BASH_REMATCH[5]}
done
for want in 'ACTION=="add"' 'SUBSYSTEM=="block"' 'ENV{DEVTYPE}=="disk"' 'ENV{SYNTH_UUID}!="?*"' 'ENV{ID_PATH}=="' 'TAG+="systemd"' \
        'ENV{SYSTEMD_WANTS}+="wipe@dev-%k.service"'; do
        [[ $rules == *"$want"* ]] || fail "$rules_example: no $want"
done
[[ $rules == *RUN* ]] && fail "$rules_example: RUN would block the udev worker"
# The instance the rule asks for is the one `systemd-escape --path` gives the node.
for k in sdc nvme1n1 vdb; do
        [ "dev-$k" = "$(systemd-escape --path "/dev/$k")" ] || fail "wipe@dev-$k.service is not the unit of /dev/$k"
done

# --- wipe@.service: exit 10 fails the unit; the stop cancels on request ---
unit_value() { sed -n "s/^$2=//p" "$ROOT$1"; }
[ -z "$(unit_value "$template_unit" SuccessExitStatus)" ] ||
        fail "wipe@.service: SuccessExitStatus=$(unit_value "$template_unit" SuccessExitStatus): exit 10 must fail the unit"
grep -q 'SuccessExitStatus=10' "$ROOT$template_unit" || fail "wipe@.service does not say how to accept exit 10"
stop_post=$(unit_value "$template_unit" ExecStopPost)
[ "$(echo "$stop_post" | wc -l)" = 1 ] || fail "wipe@.service: not one ExecStopPost= line"
wipectl_path=$(unit_value "$template_unit" ExecStart | cut -d' ' -f1)
[ -x "$ROOT$wipectl_path" ] || fail "wipe@.service: ExecStart=$wipectl_path is not installed"

# stop_post DEVICE VAR=VALUE...: the unit's ExecStopPost= for DEVICE's instance, run as systemd
# runs it: '-' (failure ignored) dropped, "$$" a "$", %I the unescaped instance, the installed
# wipectl; in the environment systemd gives it (the unit's variables and EXIT_CODE), on the
# test's socket.
stop_post() {
        local dev=$1 line inst
        shift
        inst=$(systemd-escape --path "$dev")
        line=${stop_post#-}
        line=${line//'$$'/'$'}
        line=${line//%I/$(systemd-escape --unescape "$inst")}
        line=${line//$wipectl_path/$ROOT$wipectl_path}
        case $line in *%*) fail "ExecStopPost= has a specifier this test does not emulate: $line" ;; esac
        [[ $line == "/bin/sh -c '"*"' $dev" ]] || fail "ExecStopPost= is not /bin/sh -c '...' /%I: $line"
        env WIPED_SOCKET="$SOCK" "$@" bash -c "$line"
}

dev=$(make_loop 1G)
other=$(make_loop 1G)
start_daemon --threads 1 --queue-depth 1 --io-size 4K
# Two slow jobs (16 MB/s: a minute for 1 GiB): the unit's device and another one.
id=$(wipectl --json wipe --yes --no-wait --max-rate 16M "$dev" | jq -r '.jobs[0].id')
id_other=$(wipectl --json wipe --yes --no-wait --max-rate 16M "$other" | jq -r '.jobs[0].id')
wait_bytes "$id" 1 20 || fail "job $id does not progress"
# Not opted in, or wipectl ended by itself: nothing is cancelled.
stop_post "$dev" EXIT_CODE=killed || fail "ExecStopPost= failed without WIPE_CANCEL_ON_STOP"
[ "$(job_field "$id" state)" = running ] || fail "job $id is $(job_field "$id" state) after a stop without opt-in"
stop_post "$dev" WIPE_CANCEL_ON_STOP=yes EXIT_CODE=exited || fail "ExecStopPost= failed after wipectl exited"
[ "$(job_field "$id" state)" = running ] || fail "job $id is $(job_field "$id" state) after wipectl ended by itself"
# Opted in, and the stop killed wipectl: the job on the unit's device is cancelled, the other not.
stop_post "$dev" WIPE_CANCEL_ON_STOP=yes EXIT_CODE=killed > "$TEST_DIR/stop.out" 2>&1 ||
        fail "ExecStopPost= failed: $(cat "$TEST_DIR/stop.out")"
[ "$(job_field "$id" state)" = cancelled ] || fail "job $id is $(job_field "$id" state) after the stop: $(cat "$TEST_DIR/stop.out")"
[ "$(job_field "$id_other" state)" = running ] || fail "job $id_other on another device is $(job_field "$id_other" state)"
# A paused job is cancelled too.
wipectl pause "$id_other" > /dev/null || fail "pause $id_other"
stop_post "$other" WIPE_CANCEL_ON_STOP=yes EXIT_CODE=killed > "$TEST_DIR/stop.out" 2>&1 ||
        fail "ExecStopPost= failed: $(cat "$TEST_DIR/stop.out")"
[ "$(job_field "$id_other" state)" = cancelled ] || fail "paused job $id_other is $(job_field "$id_other" state) after the stop"
# Nothing left to cancel: still succeeds, changes nothing.
stop_post "$dev" WIPE_CANCEL_ON_STOP=yes EXIT_CODE=killed > /dev/null 2>&1 || fail "ExecStopPost= failed with no job"
stop_daemon || fail "daemon exit status $?"
pass "examples and catalog installed; catalog covers every MESSAGE_ID; the bay rule; exit 10; cancel on stop"
