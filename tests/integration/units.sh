#!/bin/bash
# The systemd units, without a service manager (PID 1 need not be systemd; nothing here starts,
# stops or asks one): `make install` into a DESTDIR of the test's own; systemd-analyze verify of
# the installed units (a copy whose Exec paths point into the DESTDIR) and their exposure;
# systemd-sysusers --dry-run of the sysusers.d file; the installed daemon under the unit's
# capability bounding set and no-new-privileges; the template's ExecStart line, with %I and
# $WIPE_OPTIONS substituted as systemd does, run by hand against the test's loop devices (a wipe
# that succeeds: 0; a device that fails: 6; a path that is no block device: 5); ExecReload= by
# hand; and socket activation through systemd-socket-activate (the daemon serves the socket it is
# passed and leaves it in place when it stops).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

for t in make systemd-analyze systemd-escape systemd-sysusers systemd-socket-activate setpriv; do
        command -v "$t" >/dev/null || skip "$t missing"
done
[ -f "$top_builddir/Makefile" ] || skip "$top_builddir is not a configured build tree"

# --- make install into the test's own root ---
ROOT=$TEST_DIR/root
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" install DESTDIR="$ROOT" \
        > "$TEST_DIR/install.log" 2>&1 || { cat "$TEST_DIR/install.log" >&2; fail "make install DESTDIR=$ROOT failed"; }

# find_one PATH: the one installed file whose path ends in /PATH (its path inside $ROOT, with
# the leading /).
find_one() {
        local found
        found=$(cd "$ROOT" && find . -path "*/$1" \( -type f -o -type l \) | sed 's|^\.||')
        [ -n "$found" ] || fail "make install installed no $1"
        [ "$(echo "$found" | wc -l)" = 1 ] || fail "make install installed more than one $1: $found"
        echo "$found"
}
socket_unit=$(find_one wiped.socket)
status_unit=$(find_one wiped-status.socket)
service_unit=$(find_one wiped.service)
template_unit=$(find_one 'wipe@.service')
sysusers_file=$(find_one sysusers.d/wiped.conf)
example_file=$(find_one wipe.conf.example)
unitdir=$(dirname "$socket_unit")
if [ "$(dirname "$service_unit")" != "$unitdir" ] || [ "$(dirname "$template_unit")" != "$unitdir" ] ||
        [ "$(dirname "$status_unit")" != "$unitdir" ]; then
        fail "the units are not in one directory: $socket_unit $status_unit $service_unit $template_unit"
fi
note "units in $unitdir, $sysusers_file, $example_file"

# unit_value UNIT KEY: the values of KEY= in the installed UNIT, one per line.
unit_value() { sed -n "s/^$2=//p" "$ROOT$1"; }

# Exec lines: the installed programs, and system tools from the base system.
exec_path() { local w=${1%% *}; echo "${w#"${w%%[!-@:+!]*}"}"; }
wiped_path=$(exec_path "$(unit_value "$service_unit" ExecStart)")
wipectl_path=$(exec_path "$(unit_value "$template_unit" ExecStart)")
[ -x "$ROOT$wiped_path" ] || fail "wiped.service: ExecStart=$wiped_path is not installed"
[ -x "$ROOT$wipectl_path" ] || fail "wipe@.service: ExecStart=$wipectl_path is not installed"
"$ROOT$wiped_path" --version | grep -q '^wiped ' || fail "$wiped_path is not wiped"
"$ROOT$wipectl_path" --version | grep -q '^wipectl ' || fail "$wipectl_path is not wipectl"
[ "$(unit_value "$service_unit" ExecStart)" = "$wiped_path --foreground" ] ||
        fail "wiped.service: ExecStart=$(unit_value "$service_unit" ExecStart)"

# --- systemd-analyze verify: every key known, every dependency found, every Exec program there and
# executable, every Documentation= man page installed. A copy of the units, with the paths of the
# installed programs moved into $ROOT (verify looks for them on this system; --root would need a
# whole system's units in $ROOT); nothing else changes. ---
VERIFY=$TEST_DIR/verify
mkdir -p "$VERIFY"
cp "$ROOT$socket_unit" "$ROOT$status_unit" "$ROOT$service_unit" "$ROOT$template_unit" "$VERIFY/"
for u in "$VERIFY"/*; do
        while IFS= read -r line; do
                p=$(exec_path "${line#*=}")
                if [ -e "$ROOT$p" ]; then
                        sed -i "s|^\(${line%%=*}=[-@:+!]*\)$p|\1$ROOT$p|" "$u"
                else
                        case $p in /bin/* | /usr/bin/*) ;; *) fail "$(basename "$u"): ${line%%=*}=$p is neither installed nor a system tool" ;; esac
                fi
        done < <(grep '^Exec[A-Za-z]*=' "$u")
done
grep -q "^ExecStart=$ROOT$wiped_path " "$VERIFY/wiped.service" || fail "the verify copy of wiped.service kept $wiped_path"
mandir=$(dirname "$(dirname "$(find_one man8/wiped.8)")")
man_opt=--man=yes
command -v man >/dev/null || { man_opt=--man=no; note "man missing: Documentation= not checked"; }
instance="dev-loop0"
MANPATH=$ROOT$mandir systemd-analyze verify "$man_opt" "$VERIFY/wiped.socket" "$VERIFY/wiped-status.socket" "$VERIFY/wiped.service" \
        "$VERIFY/wipe@$instance.service" > "$TEST_DIR/verify.out" 2>&1
rc=$?
if [ $rc != 0 ] || [ -s "$TEST_DIR/verify.out" ]; then
        cat "$TEST_DIR/verify.out" >&2
        fail "systemd-analyze verify exited $rc or complained"
fi

# The sandbox stays tight: systemd-analyze's exposure score (0 to 10; "OK" up to 4.9) at most 2.5.
if systemd-analyze security --help 2>&1 | grep -q -- --offline; then
        for u in wiped.service "wipe@$instance.service"; do
                systemd-analyze security --offline=yes --threshold=25 "$VERIFY/$u" > "$TEST_DIR/security.out" 2>&1 ||
                        { tail -n 30 "$TEST_DIR/security.out" >&2; fail "$u: exposure above 2.5"; }
                note "$(grep -a 'Overall exposure' "$TEST_DIR/security.out")"
        done
else
        note "systemd-analyze security --offline unsupported: exposure not checked"
fi

# --- sysusers.d: the file parses and creates the group wiped (in an empty root of the test's own;
# --dry-run writes nothing). ---
SYSROOT=$TEST_DIR/sysroot
mkdir -p "$SYSROOT"
out=$(systemd-sysusers --root="$SYSROOT" --dry-run "$ROOT$sysusers_file" 2>&1) || fail "systemd-sysusers: $out"
echo "$out" | grep -q "Creating group 'wiped'" || fail "systemd-sysusers does not create the group wiped: $out"
[ -z "$(ls -A "$SYSROOT")" ] || fail "systemd-sysusers --dry-run wrote into $SYSROOT"
# Where systemd-sysusers looks for it (not for an installation under another prefix).
out=$(systemd-sysusers --root="$ROOT" --dry-run 2>&1)
if echo "$out" | grep -q "Creating group 'wiped'"; then
        [ ! -e "$ROOT/etc" ] || fail "systemd-sysusers --dry-run wrote into $ROOT/etc"
else
        note "$sysusers_file is not where systemd-sysusers reads (a prefix of its own)"
fi

# --- The socket unit: the path the programs use by default, and group wiped ---
[ "$(unit_value "$socket_unit" ListenStream)" = /run/wiped.sock ] || fail "wiped.socket: ListenStream is not /run/wiped.sock"
[ "$(unit_value "$socket_unit" SocketGroup)" = wiped ] || fail "wiped.socket: SocketGroup is not wiped"
[ "$(unit_value "$socket_unit" SocketMode)" = 0660 ] || fail "wiped.socket: SocketMode is not 0660"
# The read-only socket: beside it, for everyone, passed to wiped.service under the name the daemon
# knows it by, and enabled with wiped.socket.
[ "$(unit_value "$status_unit" ListenStream)" = /run/wiped-status.sock ] ||
        fail "wiped-status.socket: ListenStream is not /run/wiped-status.sock"
[ "$(unit_value "$status_unit" SocketMode)" = 0666 ] || fail "wiped-status.socket: SocketMode is not 0666"
[ "$(unit_value "$status_unit" Service)" = wiped.service ] || fail "wiped-status.socket: Service is not wiped.service"
[ "$(unit_value "$status_unit" FileDescriptorName)" = status ] || fail "wiped-status.socket: FileDescriptorName is not status"
[ "$(unit_value "$socket_unit" FileDescriptorName)" != status ] || fail "wiped.socket: named status"
unit_value "$socket_unit" Also | grep -qx wiped-status.socket || fail "wiped.socket: no Also=wiped-status.socket"

# --- The daemon as wiped.service runs it: the installed binary, only the capabilities of the
# unit's bounding set, no new privileges, its umask. (Its mount namespace, device policy and
# system call filter need a service manager.) ---

# setpriv_caps UNIT: setpriv's --bounding-set argument for UNIT's CapabilityBoundingSet= (an
# allow list; empty: none).
setpriv_caps() {
        local v c arg=-all
        v=$(unit_value "$1" CapabilityBoundingSet)
        [ "$(unit_value "$1" CapabilityBoundingSet | wc -l)" = 1 ] || fail "$1: not one CapabilityBoundingSet= line"
        case $v in '~'*) fail "$1: CapabilityBoundingSet= is a deny list" ;; esac
        for c in $v; do
                c=${c,,}
                arg+=",+${c#cap_}"
        done
        echo "$arg"
}
daemon_caps=$(setpriv_caps "$service_unit")
client_caps=$(setpriv_caps "$template_unit")
[ "$daemon_caps" = "-all,+sys_admin,+sys_rawio" ] ||
        fail "wiped.service: CapabilityBoundingSet= keeps $daemon_caps, expected CAP_SYS_ADMIN and CAP_SYS_RAWIO only"
[ "$(unit_value "$service_unit" NoNewPrivileges)" = yes ] || fail "wiped.service: NoNewPrivileges is not yes"
[ "$(unit_value "$template_unit" NoNewPrivileges)" = yes ] || fail "wipe@.service: NoNewPrivileges is not yes"
umask_daemon=$(unit_value "$service_unit" UMask)
umask_client=$(unit_value "$template_unit" UMask)

# LimitMEMLOCK=infinity as well when this test may raise the limit (CAP_SYS_RESOURCE); else the
# daemon gets few enough buffers to register them within the test's own limit.
memlock=$(unit_value "$service_unit" LimitMEMLOCK)
[ "$memlock" = infinity ] || fail "wiped.service: LimitMEMLOCK=$memlock"
if prlimit --memlock=unlimited:unlimited true 2>/dev/null; then
        limit_cmd="prlimit --memlock=unlimited:unlimited"
        daemon_opts=(--threads 2)
else
        limit_cmd=
        daemon_opts=(--threads 1 --buffers 4)
        note "cannot raise RLIMIT_MEMLOCK here: LimitMEMLOCK=infinity not applied, 4 MiB of buffers"
fi
UNIT_WIPED=$TEST_DIR/wiped-as-unit
cat > "$UNIT_WIPED" <<EOF
#!/bin/sh
umask ${umask_daemon:-0022}
exec $limit_cmd setpriv --bounding-set $daemon_caps --inh-caps -all --no-new-privs "$ROOT$wiped_path" "\$@"
EOF
chmod +x "$UNIT_WIPED"
WIPED=$UNIT_WIPED
start_daemon "${daemon_opts[@]}"
if command -v capsh >/dev/null; then
        for f in CapEff CapPrm CapBnd; do
                got=$(capsh --decode="$(awk -v f="$f:" '$1 == f { print $2 }' "/proc/$DAEMON_PID/status")" |
                        sed 's/^[^=]*=\?//' | tr , '\n' | sort | paste -sd,)
                want=$(unit_value "$service_unit" CapabilityBoundingSet | tr 'A-Z ' 'a-z\n' | sort | paste -sd,)
                [ "$got" = "$want" ] || fail "the daemon's $f is '$got', expected '$want'"
        done
fi
ulimit_l=$(prlimit --pid "$DAEMON_PID" --memlock --noheadings --raw --output HARD 2>/dev/null)
if [ -n "$limit_cmd" ] || [ "$ulimit_l" = unlimited ] || [ "${ulimit_l:-0}" -ge $((5 << 20)) ] 2>/dev/null; then
        jq_is "$(wipectl --json version)" .daemon.registered_buffers true \
                "buffers registered without CAP_IPC_LOCK (LimitMEMLOCK)"
fi

# --- The template's ExecStart, run by hand as systemd would ---
exec_start=$(unit_value "$template_unit" ExecStart)
env_file=$(unit_value "$template_unit" EnvironmentFile)
[ "$env_file" = -/etc/wiped/wipe.conf ] || fail "wipe@.service: EnvironmentFile=$env_file"
[ "$(unit_value "$template_unit" Type)" = oneshot ] || fail "wipe@.service: Type is not oneshot"
[ "$(unit_value "$template_unit" TimeoutStartSec)" = infinity ] || fail "wipe@.service: a start timeout"
case $exec_start in *\"* | *\'* | *\\*) fail "wipe@.service: ExecStart= has quoting this test does not emulate: $exec_start" ;; esac

# The example's WIPE_OPTIONS (an environment file as systemd reads it: here one plain assignment).
assignments=$(grep -Ev '^[[:space:]]*(#|$)' "$ROOT$example_file")
if [ "$(echo "$assignments" | wc -l)" != 1 ] || [[ $assignments != WIPE_OPTIONS=* ]]; then
        fail "$example_file: not one WIPE_OPTIONS= assignment: $assignments"
fi
# shellcheck disable=SC2016
wipe_options=$(env -i bash -c 'set -a; . "$1"; printf %s "$WIPE_OPTIONS"' - "$ROOT$example_file") ||
        fail "$example_file does not parse"
note "WIPE_OPTIONS=$wipe_options"

# exec_line INSTANCE: the template's ExecStart argument vector for wipe@INSTANCE.service, one
# argument per line: split at blanks, then $WIPE_OPTIONS split again, %I the unescaped instance
# (dev-sdb: dev/sdb), %i the instance, %% a %. Anything else is not emulated: fail.
exec_line() {
        local inst=$1 unescaped w words opts
        unescaped=$(systemd-escape --unescape "$inst") || fail "systemd-escape --unescape $inst"
        read -ra words <<< "$exec_start"
        read -ra opts <<< "$wipe_options"
        for w in "${words[@]}"; do
                # shellcheck disable=SC2016
                if [ "$w" = '$WIPE_OPTIONS' ]; then
                        [ ${#opts[@]} = 0 ] || printf '%s\n' "${opts[@]}"
                        continue
                fi
                case $w in *'$'*) fail "wipe@.service: unknown variable in '$w'" ;; esac
                w=${w//%%/$'\001'}
                w=${w//%I/$unescaped}
                w=${w//%i/$inst}
                case $w in *%*) fail "wipe@.service: unknown specifier in '$w'" ;; esac
                echo "${w//$'\001'/%}"
        done
}

# run_instance DEVICE_PATH: run wipe@$(systemd-escape --path DEVICE_PATH).service's ExecStart with
# the installed wipectl, as root without capabilities (its bounding set), on the test's socket;
# its output goes to $TEST_DIR/out and $TEST_DIR/err. Returns its exit status.
run_instance() {
        local inst argv=()
        inst=$(systemd-escape --path "$1") || fail "systemd-escape --path $1"
        exec_line "$inst" > "$TEST_DIR/argv"
        mapfile -t argv < "$TEST_DIR/argv"
        [ "${argv[0]}" = "$wipectl_path" ] || fail "ExecStart runs ${argv[0]}"
        [ "${argv[-1]}" = "$1" ] || fail "wipe@$inst.service would wipe '${argv[-1]}', not '$1'"
        note "wipe@$inst.service: ${argv[*]}"
        argv[0]=$ROOT$wipectl_path
        (umask "${umask_client:-0022}" && exec env WIPED_SOCKET="$SOCK" setpriv --bounding-set "$client_caps" \
                --inh-caps -all --no-new-privs "${argv[@]}") < /dev/null > "$TEST_DIR/out" 2> "$TEST_DIR/err"
}

# A device that wipes: exit 0, every byte as WIPE_OPTIONS said.
dev=$(make_loop 64M)
dd if=/dev/urandom of="$dev" bs=1M count=64 oflag=direct status=none || hard_error "cannot fill $dev"
run_instance "$dev"
rc=$?
[ $rc = 0 ] || { cat "$TEST_DIR/out" "$TEST_DIR/err" >&2; fail "the template's ExecStart on $dev exited $rc"; }
job=$(wipectl --json list --all | jq -c --arg d "$dev" '[.jobs[] | select(.node == $d)] | last')
[ "$job" != null ] || fail "no job for $dev"
jq_is "$job" .state "done" "the template's job"
case " $wipe_options " in
*" --method zero "*)
        jq_is "$job" .method zero "the job of WIPE_OPTIONS=$wipe_options"
        check_pattern "$dev" 00 ;;
*)      check_last_pass "$dev" "$(echo "$job" | jq -r .id)" ;;
esac
case " $wipe_options " in
*" --verify last "*) jq_is "$job" .verify.mode last "the job of WIPE_OPTIONS=$wipe_options" ;;
esac

# A device that fails (writes past 8 MiB hit ENOSPC), named through a link whose escaped name
# has \x2d escapes: exit 6.
thin=$(make_thin_loop 64M 8M)
link=$TEST_DIR/disk-by-test-thin
ln -s "$thin" "$link"
[[ $(systemd-escape --path "$link") == *'\x2d'* ]] || hard_error "no \\x2d in $(systemd-escape --path "$link")"
run_instance "$link"
rc=$?
[ $rc = 6 ] || { cat "$TEST_DIR/out" "$TEST_DIR/err" >&2; fail "the template's ExecStart on a failing device exited $rc, expected 6"; }

# A path that is no block device: refused, exit 5.
: > "$TEST_DIR/not-a-disk"
run_instance "$TEST_DIR/not-a-disk"
rc=$?
[ $rc = 5 ] || { cat "$TEST_DIR/out" "$TEST_DIR/err" >&2; fail "the template's ExecStart on a regular file exited $rc, expected 5"; }

# ExecReload= by hand: SIGHUP, and the daemon serves on.
reload=$(unit_value "$service_unit" ExecReload)
# shellcheck disable=SC2016
[ "$reload" = '/bin/kill -HUP $MAINPID' ] || fail "wiped.service: ExecReload=$reload"
# Handled once the daemon logged the reload's outcome ("reloaded" or "not reloaded"), or died.
reloads() { grep -c 'reloaded' "$TEST_DIR/daemon.log"; }
# shellcheck disable=SC2317  # called through wait_until
reload_handled() { [ "$(reloads)" -gt "$1" ] || ! daemon_alive; }
n=$(reloads)
/bin/kill -HUP "$DAEMON_PID" || fail "/bin/kill -HUP failed"
wait_until 30 "the daemon's log line on the reload after SIGHUP" reload_handled "$n"
daemon_alive || fail "the daemon died of ExecReload="
wipectl version > /dev/null || fail "no answer after ExecReload="
stop_daemon || fail "the daemon exited $? on SIGTERM"

# --- Socket activation: systemd-socket-activate makes and listens on the sockets, passes them
# (LISTEN_FDS, named as the units name them) and execs the daemon as wiped.service does (the
# unit's ExecStart, plus a state directory of the test's own; --socket names the same path, so
# that a daemon that ignored the passed socket would fail to start rather than make one
# elsewhere). A wipe through the control socket succeeds; the read-only one answers a status and
# refuses a submit; the daemon makes no socket of its own; on SIGTERM it exits 0 and leaves the
# sockets it did not create. ---
SOCK=$TEST_DIR/activated.sock
ro_sock=$TEST_DIR/activated-ro.sock
systemd-socket-activate -l "$SOCK" -l "$ro_sock" --fdname="$(unit_value "$socket_unit" FileDescriptorName):status" \
        "$UNIT_WIPED" --foreground --state-dir "$TEST_DIR/state2" \
        --socket "$SOCK" "${daemon_opts[@]}" >> "$TEST_DIR/daemon.log" 2>&1 &
act_pid=$!
register_pid "$act_pid"
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "systemd-socket-activate made no socket at $SOCK"
# (The passed socket is blocking, as systemd passes it without NonBlocking=yes: a daemon that
# accepted until EAGAIN on it would hang in accept.)
if ! timeout 20 "$WIPECTL_BIN" --socket "$SOCK" version > /dev/null; then
        why=
        grep -qw unix_accept "/proc/$act_pid/stack" 2>/dev/null &&
                why=": its main loop is blocked in accept() on the passed socket, which is blocking"
        kill -KILL "$act_pid"
        wait "$act_pid"
        sed -i "/^$act_pid\$/d" "$TEST_DIR/pids"
        fail "no answer through the socket-activated daemon$why"
fi
dev2=$(make_loop 32M)
dd if=/dev/urandom of="$dev2" bs=1M count=32 oflag=direct status=none || hard_error "cannot fill $dev2"
run_instance "$dev2"
rc=$?
[ $rc = 0 ] || { cat "$TEST_DIR/out" "$TEST_DIR/err" >&2; fail "a wipe through the activated socket exited $rc"; }
out=$("$WIPECTL_BIN" --socket "$ro_sock" --json list --all) || fail "list through the passed read-only socket exited $?"
[ "$(echo "$out" | jq '.jobs | length')" -ge 1 ] || fail "list through the passed read-only socket: $out"
out=$("$WIPECTL_BIN" --socket "$ro_sock" wipe --yes --no-wait --verify none "$dev2" 2>&1)
rc=$?
[ $rc = 4 ] || fail "a wipe through the passed read-only socket exited $rc, expected 4: $out"
[ ! -e "$TEST_DIR/activated-status.sock" ] || fail "the socket-activated daemon made a read-only socket of its own"
kill -TERM "$act_pid"
wait "$act_pid"
rc=$?
sed -i "/^$act_pid\$/d" "$TEST_DIR/pids"
[ $rc = 0 ] || fail "the socket-activated daemon exited $rc on SIGTERM"
[ -S "$SOCK" ] || fail "the daemon removed the socket systemd-socket-activate made"
[ -S "$ro_sock" ] || fail "the daemon removed the read-only socket systemd-socket-activate made"

pass "units verified; the template's ExecStart: 0, 6, 5; socket activation"
