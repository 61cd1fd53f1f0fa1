# Shared helpers of the integration tests. Source it first thing:  . "${top_srcdir:-.}/tests/lib.sh"
#
# Exit codes follow automake's default driver: 0 pass, 1 fail, 77 skip, 99 hard error (a fixture
# could not be set up: never reported as a pass).
#
# Safety: a test writes only to loop devices it created itself with make_loop, over files in its
# own directory under /dev/shm, and uses exactly the path losetup printed. Every loop device is
# detached and every daemon stopped on any exit.

set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
WIPED=${WIPED:-$top_builddir/daemon/wiped}
WIPECTL_BIN=${WIPECTL_BIN:-$top_builddir/cli/wipectl}
TEST_NAME=$(basename "$0" .sh)

skip() { echo "SKIP: $TEST_NAME: $*" >&2; exit 77; }
fail() { echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }
hard_error() { echo "ERROR: $TEST_NAME: $*" >&2; exit 99; }
pass() { echo "PASS: $TEST_NAME${1:+: $1}"; exit 0; }
note() { echo "# $*"; }

[ "$(id -u)" = 0 ] || skip "needs root (loop devices)"
command -v losetup >/dev/null || skip "losetup missing"
command -v jq >/dev/null || hard_error "jq missing (tools/install-deps installs it)"
command -v openssl >/dev/null || hard_error "openssl missing"
[ -x "$WIPED" ] || hard_error "$WIPED not built"
[ -x "$WIPECTL_BIN" ] || hard_error "$WIPECTL_BIN not built"

TEST_DIR=$(mktemp -d /dev/shm/wiped-test.XXXXXX) || hard_error "mktemp failed"
SOCK=$TEST_DIR/wiped.sock
STATE=$TEST_DIR/state
DAEMON_PID=

# The first line of a report of ASan, LeakSanitizer, TSan or UBSan (the sanitized builds of tools/check).
SANITIZER_REPORT='^==[0-9]+==ERROR: [A-Za-z]+Sanitizer|^WARNING: ThreadSanitizer|: runtime error: '

cleanup() {
        local rc=$? dev
        trap - EXIT INT TERM
        if [ -n "$DAEMON_PID" ]; then
                kill -TERM "$DAEMON_PID" 2>/dev/null
                wait "$DAEMON_PID" 2>/dev/null
        fi
        # Whatever still holds a loop device goes before it is detached: helper processes, swap
        # the test enabled, device-mapper devices the test created over its own loop devices.
        if [ -f "$TEST_DIR/pids" ]; then
                while read -r pid; do kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done < "$TEST_DIR/pids"
        fi
        if [ -f "$TEST_DIR/swaps" ]; then
                while read -r dev; do swapoff "$dev" 2>/dev/null; done < "$TEST_DIR/swaps"
        fi
        if [ -f "$TEST_DIR/dms" ]; then
                while read -r name; do dmsetup remove --retry "$name" >/dev/null 2>&1; done < "$TEST_DIR/dms"
        fi
        # Detach first (a mounted loop device is then freed by its umount), then unmount.
        if [ -f "$TEST_DIR/loops" ]; then
                while read -r dev; do losetup -d "$dev" 2>/dev/null; done < "$TEST_DIR/loops"
        fi
        if [ -f "$TEST_DIR/mounts" ]; then
                while read -r dev; do
                        umount "$dev" 2>/dev/null && continue
                        mountpoint -q "$dev" || continue        # the test unmounted it itself
                        # Busy: a loop device over a file on it may still be closing (udev probes
                        # it; its detach waits for the last close). Wait a little, then detach the
                        # mount lazily so that it goes when the last user does.
                        udevadm settle 2>/dev/null
                        for _ in $(seq 20); do umount "$dev" 2>/dev/null && continue 2; sleep 0.1; done
                        umount -l "$dev" 2>/dev/null
                done < "$TEST_DIR/mounts"
        fi
        # A sanitizer's report from the daemon fails the test, also one written at its exit (a leak),
        # whose exit status nobody waits for here.
        if [ -f "$TEST_DIR/daemon.log" ] && grep -qE "$SANITIZER_REPORT" "$TEST_DIR/daemon.log"; then
                echo "FAIL: the daemon's log holds a sanitizer report:" >&2
                grep -m 1 -A 40 -E "$SANITIZER_REPORT" "$TEST_DIR/daemon.log" >&2
                if [ $rc -eq 0 ] || [ $rc -eq 77 ]; then rc=1; fi
        elif [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ -f "$TEST_DIR/daemon.log" ]; then
                echo "--- daemon log ---" >&2
                tail -n 40 "$TEST_DIR/daemon.log" >&2
        fi
        rm -rf "$TEST_DIR"
        exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# make_loop SIZE [SECTOR]: a loop device with direct I/O over a new zero-filled file of SIZE
# (truncate syntax) in the test directory; prints the device path losetup printed.
# (Called in $(...): a subshell, so the file name comes from mktemp, not a counter.)
make_loop() {
        local size=$1 sector=${2:-512} file
        file=$(mktemp "$TEST_DIR/disk.XXXXXX") || hard_error "mktemp failed"
        truncate -s "$size" "$file" || hard_error "cannot create $file"
        make_loop_file "$file" --direct-io=on --sector-size "$sector"
}

# make_loop_file FILE [LOSETUP_OPTION...]: a loop device over FILE, a file of the test's own in
# $TEST_DIR (e.g. -r, -P, --sector-size 4096); registered for cleanup; prints its path.
make_loop_file() {
        local file=$1 dev
        shift
        case $file in "$TEST_DIR"/*) ;; *) hard_error "make_loop_file: $file is not in $TEST_DIR" ;; esac
        dev=$(losetup -f --show "$@" "$file") || hard_error "losetup $* $file failed"
        case $dev in /dev/loop*) ;; *) hard_error "losetup printed '$dev'" ;; esac
        echo "$dev" >> "$TEST_DIR/loops"
        echo "$dev"
}

# Register what cleanup must undo before the loop devices are detached.
register_mount() { echo "$1" >> "$TEST_DIR/mounts"; }   # a mount point
register_swap() { echo "$1" >> "$TEST_DIR/swaps"; }     # a device the test swapon'ed
register_dm() { echo "$1" >> "$TEST_DIR/dms"; }         # a dm name over the test's own loop device
register_pid() { echo "$1" >> "$TEST_DIR/pids"; }       # a helper process the test started

# stop_pid PID: end a registered helper now and forget it (so cleanup never signals a reused pid).
stop_pid() {
        kill -TERM "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        sed -i "/^$1\$/d" "$TEST_DIR/pids"
}

# make_thin_loop SIZE ROOM: a loop device of SIZE whose backing file lives on a tmpfs of only ROOM,
# so that writes past ROOM fail with ENOSPC: a real I/O error. Prints the device path.
make_thin_loop() {
        local dir
        dir=$(mktemp -d "$TEST_DIR/thin.XXXXXX") || hard_error "mktemp failed"
        mount -t tmpfs -o size="$2" tmpfs "$dir" || skip "cannot mount tmpfs"
        echo "$dir" >> "$TEST_DIR/mounts"
        truncate -s "$1" "$dir/thin.img" || hard_error "cannot create $dir/thin.img"
        make_loop_file "$dir/thin.img" --direct-io=on
}

# start_daemon [OPTION...]: wiped on the test's own socket and state directory.
start_daemon() {
        # Never the machine's /etc/wiped/wiped.conf; NO_CONFIG=1 start_daemon: the daemon's default.
        local conf=(--config /dev/null)
        [[ -n ${NO_CONFIG:-} || " $* " == *" --config "* || " $* " == *" -c "* ]] && conf=()
        # Nor the machine's bay policies (/etc/wiped/policies.d), unless the test names a directory.
        [[ ${#conf[@]} -gt 0 && " $* " != *" --policy-dir "* ]] && conf+=(--policy-dir none)
        "$WIPED" --socket "$SOCK" --state-dir "$STATE" --foreground "${conf[@]}" "$@" >> "$TEST_DIR/daemon.log" 2>&1 &
        DAEMON_PID=$!
        for _ in $(seq 100); do
                [ -S "$SOCK" ] && wipectl version >/dev/null 2>&1 && return 0
                kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$TEST_DIR/daemon.log" >&2; hard_error "wiped exited at start"; }
                sleep 0.1
        done
        hard_error "wiped did not come up on $SOCK"
}

stop_daemon() {
        [ -n "$DAEMON_PID" ] || return 0
        kill -TERM "$DAEMON_PID"
        wait "$DAEMON_PID"
        local rc=$?
        DAEMON_PID=
        return $rc
}

daemon_alive() { [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; }

wipectl() { "$WIPECTL_BIN" --socket "$SOCK" "$@"; }

# request LINE...: send raw protocol lines on one connection, print the reply lines.
request() {
        printf '%s\n' "$@" | socat -t 5 - "UNIX-CONNECT:$SOCK"
}

# jq_is JSON FILTER EXPECTED WHAT: fail unless jq -r FILTER of JSON prints exactly EXPECTED.
jq_is() {
        local got
        got=$(echo "$1" | jq -r "$2")
        [ "$got" = "$3" ] || fail "$4: $2 is '$got', expected '$3' in: $1"
}

# jq_starts JSON FILTER PREFIX WHAT: the same, for output that starts with PREFIX.
jq_starts() {
        local got
        got=$(echo "$1" | jq -r "$2")
        [[ $got == "$3"* ]] || fail "$4: $2 is '$got', expected '$3...' in: $1"
}

# job_field ID FIELD: one field of a job's status.
job_field() { wipectl --json status "$1" | jq -r ".jobs[0].$2"; }

# wait_job ID [SECONDS]: until the job has ended; prints its final state.
wait_job() {
        local id=$1 limit=${2:-120} state
        for _ in $(seq $((limit * 10))); do
                state=$(job_field "$id" state) || return 1
                case $state in done|done-with-errors|failed|cancelled|interrupted) echo "$state"; return 0 ;; esac
                sleep 0.1
        done
        fail "job $id did not end within ${limit}s"
}

# job_key ID: the hex key of the job's random pass (report --keys, root only).
job_key() { wipectl --json report --keys "$1" | jq -r '.passes[0].key'; }
job_cipher() { wipectl --json report "$1" | jq -r '.passes[0].cipher'; }

# check_keystream DEV CIPHER KEY: every byte of DEV equals the openssl CLI's keystream.
check_keystream() {
        local dev=$1 cipher=$2 key=$3 size
        size=$(blockdev --getsize64 "$dev") || hard_error "blockdev $dev"
        openssl enc "-$cipher" -K "$key" -iv 00000000000000000000000000000000 -in /dev/zero 2>/dev/null |
                head -c "$size" | cmp - "$dev" ||
                fail "$dev: contents differ from openssl enc -$cipher with the reported key"
}

# expect_exit CODE COMMAND...: run it, fail unless it exits with CODE; its stderr goes to $TEST_DIR/err.
expect_exit() {
        local want=$1 rc
        shift
        "$@" > "$TEST_DIR/out" 2> "$TEST_DIR/err"
        rc=$?
        [ "$rc" = "$want" ] || { cat "$TEST_DIR/err" >&2; fail "'$*' exited $rc, expected $want"; }
}

# pass_hex PASS: the bytes of a pattern pass as hex ("zero" 00, "one" ff, "0x924924" 924924; the
# erase commands' passes read back as zeros).
pass_hex() {
        case $1 in
        zero|zeroout|discard|secure-discard) echo 00 ;;
        one) echo ff ;;
        0x*) echo "${1#0x}" ;;
        *) hard_error "pass_hex: '$1' is not a pattern pass" ;;
        esac
}

# pattern_stream HEX SIZE: SIZE bytes of the pattern HEX repeated from device offset 0 (byte o is
# pattern[o % k]), built independently of common/method.c: one period doubled to >= 1 MiB (a whole
# number of periods), then that block over and over.
pattern_stream() {
        local hex=$1 size=$2 block=$TEST_DIR/pattern.$1 esc="" i n
        [[ $hex =~ ^([0-9a-f]{2})+$ ]] || hard_error "pattern_stream: bad pattern '$hex'"
        if [ ! -f "$block" ]; then
                for ((i = 0; i < ${#hex}; i += 2)); do esc+="\\x${hex:i:2}"; done
                printf '%b' "$esc" > "$block.tmp" || hard_error "pattern_stream: cannot write $block"
                [ "$(stat -c %s "$block.tmp")" = $((${#hex} / 2)) ] || hard_error "pattern_stream: printf made a wrong period"
                while [ "$(stat -c %s "$block.tmp")" -lt 1048576 ]; do
                        cat "$block.tmp" "$block.tmp" > "$block.2" && mv "$block.2" "$block.tmp"
                done
                mv "$block.tmp" "$block"
        fi
        n=$((size / $(stat -c %s "$block") + 1))
        for ((i = 0; i < n; i++)); do cat "$block"; done | head -c "$size"
}

# check_pattern DEV HEX: every byte of DEV equals the repeated pattern HEX, aligned to offset 0.
check_pattern() {
        local dev=$1 hex=$2 size
        size=$(blockdev --getsize64 "$dev") || hard_error "blockdev $dev"
        pattern_stream "$hex" "$size" | cmp - "$dev" || fail "$dev: contents differ from the pattern 0x$hex"
}

# check_last_pass DEV ID: every byte of DEV is what job ID's last pass wrote (a random pass: the
# keystream of that pass's own key, from report --keys).
check_last_pass() {
        local dev=$1 id=$2 last
        last=$(wipectl --json report --keys "$id" | jq -c '.passes[-1]') || fail "report --keys $id"
        case $(echo "$last" | jq -r .pattern) in
        random) check_keystream "$dev" "$(echo "$last" | jq -r .cipher)" "$(echo "$last" | jq -r .key)" ;;
        *) check_pattern "$dev" "$(pass_hex "$(echo "$last" | jq -r .pattern)")" ;;
        esac
}

# detach_loop DEV: detach one of the test's own loop devices now and forget it, so that cleanup
# never detaches whatever another program attaches to the node later.
detach_loop() {
        grep -qx "$1" "$TEST_DIR/loops" 2>/dev/null || hard_error "detach_loop: $1 is not the test's own"
        udevadm settle 2>/dev/null
        losetup -d "$1" || hard_error "losetup -d $1 failed"
        sed -i "\\|^$1\$|d" "$TEST_DIR/loops"
        # The detach completes on the last close: udev may still be probing, and the daemons of
        # other tests running beside this one list every block device (30 s: under load a close
        # took more than the 5 s this waited before).
        for _ in $(seq 300); do
                [ -e "/sys/block/${1#/dev/}/loop/backing_file" ] || return 0
                sleep 0.1
        done
        hard_error "$1 still attached 30 s after losetup -d"
}

# reattach_loop DEV FILE [LOSETUP_OPTION...]: attach FILE (the test's own) to the node DEV the test
# detached; returns 1 (nothing attached, nothing registered) when the node was taken meanwhile.
reattach_loop() {
        local dev=$1 file=$2
        shift 2
        case $file in "$TEST_DIR"/*) ;; *) hard_error "reattach_loop: $file is not in $TEST_DIR" ;; esac
        case $dev in /dev/loop[0-9]*) ;; *) hard_error "reattach_loop: $dev is not a loop device" ;; esac
        losetup "$@" "$dev" "$file" 2>/dev/null || return 1
        echo "$dev" >> "$TEST_DIR/loops"
        [ "$(cat "/sys/block/${dev#/dev/}/loop/backing_file")" = "$file" ] || hard_error "$dev: not backed by $file"
}

# loop_file DEV: the backing file of one of the test's loop devices.
loop_file() { cat "/sys/block/${1#/dev/}/loop/backing_file"; }

# --- Waiting: a condition, a log line, raw watch connections, terminal sessions in tmux ---

# wait_until SECONDS WHAT COMMAND...: run COMMAND every 0.1 s until it succeeds; fail naming WHAT
# (what should have happened) when it has not within SECONDS. Call it directly, not in $(...): a
# failure must end the test, not a subshell.
wait_until() {
        local limit=$1 what=$2 end
        shift 2
        end=$((SECONDS + limit))
        until "$@"; do
                [ "$SECONDS" -lt "$end" ] || fail "not within ${limit} s: $what"
                sleep 0.1
        done
}

# wait_match FILE REGEX [SECONDS]: until FILE has a line matching the extended REGEX; 1 on timeout.
wait_match() {
        local file=$1 re=$2 limit=${3:-30}
        for _ in $(seq $((limit * 10))); do
                grep -Eq -- "$re" "$file" 2>/dev/null && return 0
                sleep 0.1
        done
        return 1
}

# watch_conn OUT SECONDS LINE...: a raw protocol connection in the background that sends LINE...
# and stays open until the daemon sent an "end" event, socat ended, or SECONDS passed; then socat
# reads for one second more. Everything the daemon sends goes to OUT. Sets WATCH_PID (socat's pid,
# registered: stop_pid ends it, kill -KILL makes the client vanish).
WATCH_PID=
watch_conn() {
        local out=$1 secs=$2 fifo
        shift 2
        fifo=$(mktemp -u "$TEST_DIR/fifo.XXXXXX") && mkfifo "$fifo" || hard_error "mkfifo failed"
        : > "$out"
        socat -t 1 - "UNIX-CONNECT:$SOCK" < "$fifo" > "$out" 2>> "$TEST_DIR/socat.err" &
        WATCH_PID=$!
        register_pid "$WATCH_PID"
        (
                printf '%s\n' "$@"
                for _ in $(seq $((secs * 10))); do
                        kill -0 "$WATCH_PID" 2>/dev/null || exit 0
                        grep -Eq '"event": *"end"' "$out" 2>/dev/null && exit 0
                        sleep 0.1
                done
        ) > "$fifo" &
        register_pid $!
}

# now_s: the time in seconds since the epoch, with milliseconds (as the daemon's event times).
now_s() { date +%s.%3N; }

# TMUX_SOCK: a tmux server of the test's own (tmux_start starts it; cleanup ends it).
TMUX_SOCK=$TEST_DIR/tmux.sock
tmux_cmd() { tmux -S "$TMUX_SOCK" "$@"; }

# tmux_start NAME WIDTH HEIGHT COMMAND: a detached tmux session NAME of exactly WIDTH x HEIGHT (no
# status line) whose one pane runs the shell command line COMMAND, on the test's own tmux server;
# the server is registered for cleanup. Skips (77) when tmux is missing.
tmux_start() {
        local name=$1 width=$2 height=$3 cmd=$4 pid
        command -v tmux >/dev/null || skip "tmux missing (tools/install-deps installs it)"
        printf 'set -g status off\nset -g default-terminal screen\n' > "$TEST_DIR/tmux.conf"
        env -u TMUX TERM="${TERM:-xterm}" tmux -S "$TMUX_SOCK" -f "$TEST_DIR/tmux.conf" \
                new-session -d -s "$name" -x "$width" -y "$height" "$cmd" || hard_error "tmux new-session failed"
        pid=$(tmux_cmd display-message -p '#{pid}') || hard_error "tmux server pid"
        grep -qx "$pid" "$TEST_DIR/pids" 2>/dev/null || register_pid "$pid"
}

# tmux_screen NAME: what the pane shows now, one line per screen line (lines the program wrapped
# joined again, trailing spaces kept).
tmux_screen() { tmux_cmd capture-pane -p -J -t "$1"; }

# tmux_wait NAME REGEX [SECONDS]: until the screen of NAME has a line matching the extended REGEX;
# the last screen is then in $TEST_DIR/screen.NAME. 1 on timeout.
tmux_wait() {
        local name=$1 re=$2 limit=${3:-30}
        for _ in $(seq $((limit * 10))); do
                tmux_screen "$name" > "$TEST_DIR/screen.$name" 2>/dev/null
                grep -Eq -- "$re" "$TEST_DIR/screen.$name" && return 0
                sleep 0.1
        done
        return 1
}

# --- Persistent jobs: crashes, states ---

# kill_daemon: SIGKILL the test's daemon (a crash: no checkpoint, no report) and reap it; the
# stale socket stays behind for the next start_daemon to replace.
kill_daemon() {
        [ -n "$DAEMON_PID" ] || hard_error "kill_daemon: no daemon running"
        kill -KILL "$DAEMON_PID"
        wait "$DAEMON_PID" 2>/dev/null
        DAEMON_PID=
}

# wait_state ID REGEX [SECONDS]: until the job's state matches the extended REGEX (anchored);
# prints that state; 1 on timeout (the last state seen printed).
wait_state() {
        local id=$1 re=$2 limit=${3:-10} state=
        for _ in $(seq $((limit * 20))); do
                state=$(job_field "$id" state 2>/dev/null)
                [[ $state =~ ^($re)$ ]] && { echo "$state"; return 0; }
                sleep 0.05
        done
        echo "$state"
        return 1
}

# wait_bytes ID BYTES [SECONDS]: until the job's bytes_done reaches BYTES; 1 on timeout.
wait_bytes() {
        local id=$1 want=$2 limit=${3:-30} got
        for _ in $(seq $((limit * 20))); do
                got=$(job_field "$id" bytes_done 2>/dev/null)
                [[ $got =~ ^[0-9]+$ ]] && [ "$got" -ge "$want" ] && return 0
                sleep 0.05
        done
        return 1
}

# dev_sha256 DEV: the SHA-256 of all of one of the test's devices, read with direct I/O.
dev_sha256() {
        local sum
        sum=$(dd if="$1" bs=1M iflag=direct status=none | sha256sum) || hard_error "cannot read $1"
        echo "${sum%% *}"
}

# --- Bad sectors: a loop device over tests/helpers/badfs, a FUSE file with failing sectors ---

BADFS=${BADFS:-$top_builddir/tests/helpers/badfs}
BADFS_PID='' BADFS_MNT='' BADFS_BACKING='' BADFS_DEV=''

# make_badfs_loop SIZE [FIRST:COUNT...]: a zero-filled backing file of SIZE in the test directory,
# served by badfs as MNT/disk with the 512-byte sectors FIRST..FIRST+COUNT-1 of each range failing
# every read and write with EIO, and a loop device over MNT/disk (direct I/O when the kernel takes
# it). Sets BADFS_PID, BADFS_MNT, BADFS_BACKING and BADFS_DEV (the path losetup printed); call it
# directly, not in $(...). Registered so that on exit, before the rest of cleanup, the daemon is
# stopped, the loop device detached, badfs ended and its mount removed, in that order. Skips (77)
# when badfs is not built (no libfuse3-dev), /dev/fuse is missing or FUSE mounts are not allowed.
make_badfs_loop() {
        local size=$1 dir dev args=() range
        shift
        [ -x "$BADFS" ] || skip "$BADFS not built (libfuse3-dev; tools/install-deps installs it)"
        [ -c /dev/fuse ] || skip "/dev/fuse missing"
        for range in "$@"; do args+=(--bad "$range"); done
        dir=$(mktemp -d "$TEST_DIR/badfs.XXXXXX") || hard_error "mktemp failed"
        BADFS_BACKING=$dir/backing
        BADFS_MNT=$dir/mnt
        mkdir "$BADFS_MNT" || hard_error "mkdir $BADFS_MNT"
        truncate -s "$size" "$BADFS_BACKING" || hard_error "cannot create $BADFS_BACKING"
        "$BADFS" "$BADFS_BACKING" "$BADFS_MNT" "${args[@]}" --verbose 2>> "$dir/badfs.log" &
        BADFS_PID=$!
        # One line per instance: "MNT PID", and the loop device once attached.
        echo "$BADFS_MNT $BADFS_PID" >> "$TEST_DIR/badfs"
        [ "$(wc -l < "$TEST_DIR/badfs")" = 1 ] && trap 'badfs_teardown; cleanup' EXIT
        for _ in $(seq 100); do
                [ "$(stat -c %s "$BADFS_MNT/disk" 2>/dev/null)" = "$(stat -c %s "$BADFS_BACKING")" ] && break
                kill -0 "$BADFS_PID" 2>/dev/null || skip "badfs exited at start (FUSE not usable here?): $(cat "$dir/badfs.log")"
                sleep 0.1
        done
        findmnt -rn -M "$BADFS_MNT" -t fuse.badfs > /dev/null || hard_error "badfs did not mount $BADFS_MNT: $(cat "$dir/badfs.log")"
        dev=$(losetup -f --show "$BADFS_MNT/disk") || hard_error "losetup $BADFS_MNT/disk failed"
        case $dev in /dev/loop*) ;; *) hard_error "losetup printed '$dev'" ;; esac
        echo "$dev" >> "$TEST_DIR/loops"
        sed -i "\\|^$BADFS_MNT $BADFS_PID\$|s|\$| $dev|" "$TEST_DIR/badfs"
        BADFS_DEV=$dev
        # Direct I/O when the kernel takes it (switched on after the attach, so that a refusal
        # leaves no second device behind); without it badfs's direct_io still bypasses the cache.
        losetup --direct-io=on "$dev" 2>/dev/null || note "$dev: no direct I/O over FUSE here"
}

# badfs_backs DEV MNT: the loop device DEV is still over MNT/disk (the file of a badfs).
badfs_backs() {
        local file
        file=$(cat "/sys/block/${1#/dev/}/loop/backing_file" 2>/dev/null) || return 1
        [ "$file" = "$2/disk" ] || [ "$file" = "$2/disk (deleted)" ]
}

# badfs_teardown: the part of cleanup for make_badfs_loop (run before cleanup; keeps $?). A loop
# device over a FUSE file must be detached while its server still answers, and the server must
# be gone before its mount can go when it no longer can (killed: the mount is left dead).
badfs_teardown() {
        local rc=$? mnt pid dev
        if [ -n "$DAEMON_PID" ]; then
                kill -TERM "$DAEMON_PID" 2>/dev/null
                wait "$DAEMON_PID" 2>/dev/null
                DAEMON_PID=
        fi
        udevadm settle 2>/dev/null
        while read -r mnt pid dev; do
                # Over a killed badfs the backing file reads "MNT/disk (deleted)" once a lookup of
                # the path failed: the loop device is the test's own all the same.
                if [ -n "$dev" ] && badfs_backs "$dev" "$mnt"; then
                        losetup -d "$dev" 2>/dev/null
                        for _ in $(seq 50); do
                                badfs_backs "$dev" "$mnt" || break
                                sleep 0.1
                        done
                fi
                [ -n "$dev" ] && sed -i "\\|^$dev\$|d" "$TEST_DIR/loops"
                if [ "$pid" != - ]; then
                        kill -TERM "$pid" 2>/dev/null
                        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                        kill -KILL "$pid" 2>/dev/null
                        wait "$pid" 2>/dev/null
                fi
                if findmnt -rn -M "$mnt" > /dev/null 2>&1; then
                        fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
                fi
        done < "$TEST_DIR/badfs"
        return $rc
}

# kill_badfs [PID]: SIGKILL one badfs of make_badfs_loop (default the last one's, BADFS_PID): its
# device then fails every I/O at once, as a disk that dropped off the bus; reaps it. Its dead mount
# and loop device stay for badfs_teardown.
kill_badfs() {
        local pid=${1:-$BADFS_PID}
        [ -n "$pid" ] && grep -q "^[^ ]* $pid\( \|\$\)" "$TEST_DIR/badfs" 2>/dev/null ||
                hard_error "kill_badfs: '$pid' is no running badfs of the test"
        kill -KILL "$pid" || hard_error "kill_badfs: $pid is gone"
        wait "$pid" 2>/dev/null
        sed -i "s|^\([^ ]*\) $pid\( \|\$\)|\1 -\2|" "$TEST_DIR/badfs"
        [ "$pid" = "$BADFS_PID" ] && BADFS_PID=
        return 0
}

# --- The drive simulator (tests/sim/README.md): NVMe, ATA and SCSI drives at the ioctl boundary ---

DRIVESIM_SO=${DRIVESIM_SO:-$top_builddir/tests/sim/libdrivesim.so}
DRIVESIM_CONF=$TEST_DIR/drivesim.conf           # the test writes its [/dev/loopN] sections here
DRIVESIM_STATE_DIR=$TEST_DIR/drivesim           # each simulated drive's state file

# with_drivesim COMMAND...: run COMMAND (a program, not a shell function) with the simulator
# preloaded, answering for the drives of $DRIVESIM_CONF; their state is in $DRIVESIM_STATE_DIR,
# shared by every process. A program built with ASan refuses a preload that is not after its
# runtime in the library list; verify_asan_link_order=0 lets it be (the simulator is built without
# sanitizers; its ioctl() is found first and calls the ASan runtime's as the next one).
with_drivesim() {
        [ -f "$DRIVESIM_SO" ] || hard_error "$DRIVESIM_SO not built (make check builds it)"
        [ -f "$DRIVESIM_CONF" ] || hard_error "with_drivesim: write $DRIVESIM_CONF first"
        mkdir -p "$DRIVESIM_STATE_DIR" || hard_error "mkdir $DRIVESIM_STATE_DIR"
        env LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD }$DRIVESIM_SO" DRIVESIM_CONFIG="$DRIVESIM_CONF" \
                DRIVESIM_STATE="$DRIVESIM_STATE_DIR" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
                "$@"
}

# start_daemon_sim [OPTION...]: start_daemon with the simulator preloaded into wiped (as
# with_drivesim). The simulator reads $DRIVESIM_CONF once, at the daemon's first ioctl: write it,
# and create its loop devices, before. kill_daemon and start_daemon_sim again: a crash and a
# restart that find the drives as they were left (a sanitize still running, or done).
start_daemon_sim() {
        [ -f "$DRIVESIM_SO" ] || hard_error "$DRIVESIM_SO not built (make check builds it)"
        [ -f "$DRIVESIM_CONF" ] || hard_error "start_daemon_sim: write $DRIVESIM_CONF first"
        mkdir -p "$DRIVESIM_STATE_DIR" || hard_error "mkdir $DRIVESIM_STATE_DIR"
        LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD }$DRIVESIM_SO" DRIVESIM_CONFIG="$DRIVESIM_CONF" \
                DRIVESIM_STATE="$DRIVESIM_STATE_DIR" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
                start_daemon "$@"
}
