#!/bin/bash
# The read-only socket (0666) must not let an unprivileged user hurt the root daemon (wiped(8)
# PERMISSIONS, Limits):
# - a flood of "devices" requests from nobody does not stall the main loop: root's version on the
#   control socket answers meanwhile, and a listing never opens a device O_EXCL (another program's
#   exclusive open of a free device never fails with EBUSY during the flood);
# - connections that never read their replies stay small (their further requests wait: back-
#   pressure), get every reply once they read, and a uid holds at most 32 such connections (the
#   next is refused with EUSERS); the daemon's RSS stays bounded;
# - empty lines are not activity: a client that only sends "\n" goes after client-timeout;
# - "devices" rows say exclusive_checked false, and are in natural order (loop2 before loop10).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v setpriv >/dev/null || skip "setpriv missing (util-linux)"
getent passwd nobody > /dev/null || skip "no user nobody"
nogroup=$(id -gn nobody) || skip "no group of nobody"
PY=/usr/bin/python3                     # nobody cannot reach a python under /root
[ -x "$PY" ] || skip "$PY missing"

free=$(make_loop 16M)           # never written: opened O_EXCL by the test while nobody lists
# The hoarding clients below leave their replies unread from their first requests until the test
# lets them read: that must stay within client-timeout however loaded the machine is, so 60 s
# (the default) here; the daemon of the empty lines' check at the end has 3 s.
TIMEOUT=3
STATUS_SOCK=$TEST_DIR/wiped-status.sock      # beside $SOCK, the daemon's default
start_daemon --threads 2 --client-timeout 60
chmod 0711 "$TEST_DIR" || hard_error "chmod $TEST_DIR"
[ -S "$STATUS_SOCK" ] || fail "no read-only socket at $STATUS_SOCK"
grep -q "read-only socket for everyone (.*devices)" "$TEST_DIR/daemon.log" ||
        fail "the start message does not name devices: $(grep read-only "$TEST_DIR/daemon.log")"
as_nobody() { setpriv --reuid=nobody --regid="$nogroup" --clear-groups "$@"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }
n_fds() { find "/proc/$DAEMON_PID/fd" -mindepth 1 | wc -l; }
fds0=$(n_fds)
sanitizer=false
ldd "$WIPED" 2>/dev/null | grep -qE 'lib(a|t)san' && sanitizer=true

# The clients, in one script nobody can read.
client=$TEST_DIR/ro-client.py
cat > "$client" <<'PY'
import errno, os, selectors, socket, sys, time

def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s

def read_lines(s, want, limit):
    """Read until want lines came, EOF, or limit seconds: the number of lines."""
    s.settimeout(1)
    buf, n, end = b"", 0, time.monotonic() + limit
    while n < want and time.monotonic() < end:
        try:
            d = s.recv(1 << 16)
        except socket.timeout:
            continue
        if not d:
            break
        n += d.count(b"\n")
    return n

mode, path = sys.argv[1], sys.argv[2]
if mode == "flood":
    # flood PATH CONNS SECONDS: CONNS connections, each with 16 devices requests in flight,
    # reading the replies, for SECONDS; prints the replies read.
    conns, secs = int(sys.argv[3]), float(sys.argv[4])
    ss = [connect(path) for _ in range(conns)]
    req = b'{"id":1,"op":"devices"}\n' * 16
    got, end = 0, time.monotonic() + secs
    while time.monotonic() < end:
        for s in ss:
            s.sendall(req)
        for s in ss:
            got += read_lines(s, 16, 30)
    print("replies=%d" % got, flush=True)
elif mode == "hoard":
    # hoard PATH CONNS REQUESTS GO: CONNS connections that each send REQUESTS devices requests
    # and read nothing, sending a bare "\n" every second; prints "held=N unsent=BYTES" once all
    # were sent; when the file GO appears (at most 120 s), reads every reply: "replies=N,N...".
    conns, nreq, go = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    ss = [connect(path) for _ in range(conns)]
    req = b'{"id":1,"op":"devices"}\n' * nreq
    for s in ss:
        s.setblocking(False)
    pending = [memoryview(req) for _ in ss]
    end = time.monotonic() + 120
    while any(len(p) for p in pending) and time.monotonic() < end:
        for i, s in enumerate(ss):
            if len(pending[i]):
                try:
                    pending[i] = pending[i][s.send(pending[i]):]
                except BlockingIOError:
                    pass
        time.sleep(0.05)
    print("held=%d unsent=%d" % (len(ss), sum(len(p) for p in pending)), flush=True)
    while not os.path.exists(go) and time.monotonic() < end:
        for s in ss:
            try:
                s.send(b"\n")
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                pass
        time.sleep(1)
    # Every connection read at once, as replies come: one read after the other would leave the
    # last ones unread for as long as the daemon takes to answer all the others, which on a busy
    # machine or a sanitized build is more than client-timeout.
    got = [0] * len(ss)
    sel = selectors.DefaultSelector()
    for i, s in enumerate(ss):
        sel.register(s, selectors.EVENT_READ, i)
    end = time.monotonic() + 300
    while sel.get_map() and time.monotonic() < end:
        for key, _ in sel.select(1):
            i = key.data
            try:
                d = key.fileobj.recv(1 << 16)
            except BlockingIOError:
                continue
            got[i] += d.count(b"\n")
            if not d or got[i] >= nreq:
                sel.unregister(key.fileobj)
    print("replies=%s" % ",".join(map(str, got)), flush=True)
elif mode == "one":
    # one PATH: connect, print the first line the daemon sends (or "eof").
    s = connect(path)
    s.settimeout(20)
    d = s.recv(4096)
    print(d.decode().splitlines()[0] if d else "eof", flush=True)
elif mode == "newlines":
    # newlines PATH SECONDS: a bare "\n" every 0.5 s; "closed_after=T" when the daemon hangs up.
    s = connect(path)
    s.settimeout(0.5)
    start = time.monotonic()
    while time.monotonic() - start < float(sys.argv[3]):
        try:
            s.send(b"\n")
            if s.recv(4096) == b"":
                print("closed_after=%.1f" % (time.monotonic() - start), flush=True)
                sys.exit(0)
        except socket.timeout:
            pass
        except (BrokenPipeError, ConnectionResetError):
            print("closed_after=%.1f" % (time.monotonic() - start), flush=True)
            sys.exit(0)
    print("alive", flush=True)
elif mode == "excl":
    # excl DEVICE SECONDS: open it O_RDWR|O_EXCL (as mkfs does) again and again: "busy=N opens=M".
    busy = opens = 0
    end = time.monotonic() + float(sys.argv[3])
    while time.monotonic() < end:
        try:
            os.close(os.open(path, os.O_RDWR | os.O_EXCL))
            opens += 1
        except OSError as e:
            if e.errno != errno.EBUSY:
                raise
            busy += 1
    print("busy=%d opens=%d" % (busy, opens), flush=True)
PY
chmod 0644 "$client"

# field KEY LINE: the value of KEY=... among the words.
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# --- The rows: exclusive_checked false; natural order ----------------------------------------
json=$(as_nobody "$WIPECTL_BIN" --socket "$STATUS_SOCK" --json devices) || fail "devices as nobody exited $?: $json"
jq_is "$json" '[.devices[] | ., .partitions[] | select(.exclusive_checked != false)] | length' 0 "exclusive_checked of every row"
jq_is "$(echo "$json" | jq -c --arg n "$free" '[.devices[] | select(.node == $n)][0]')" .wipeable true "$free"
names=$(echo "$json" | jq -r '.devices[].name')
[ "$names" = "$(echo "$names" | sort -V)" ] || fail "devices not in natural order: $(echo $names)"

# --- A devices flood from nobody: root is answered, nothing is opened O_EXCL ------------------
as_nobody "$PY" "$client" flood "$STATUS_SOCK" 8 10 > "$TEST_DIR/flood.out" 2> "$TEST_DIR/flood.err" &
fpid=$!
register_pid "$fpid"
"$PY" "$client" excl "$free" 10 > "$TEST_DIR/excl.out" 2> "$TEST_DIR/excl.err" &
epid=$!
register_pid "$epid"
sleep 1                         # the flood under way (a start, not a measure)
for i in 1 2 3; do
        out=$(timeout 20 "$WIPECTL_BIN" --socket "$SOCK" version 2>&1) ||
                fail "root's version on the control socket: no answer within 20 s during a devices flood ($i): $out"
done
wait "$fpid" || fail "the flood client failed: $(cat "$TEST_DIR/flood.err")"
wait "$epid" || fail "the O_EXCL opener failed: $(cat "$TEST_DIR/excl.err")"
out=$(cat "$TEST_DIR/flood.out")
note "devices flood: $out; exclusive opens of $free: $(cat "$TEST_DIR/excl.out")"
[ "$(field replies "$out")" -gt 0 ] || fail "the devices flood got no reply: $out"
excl=$(cat "$TEST_DIR/excl.out")
[ "$(field busy "$excl")" = 0 ] || fail "another program's O_EXCL open of $free failed with EBUSY during the flood: $excl"
[ "$(field opens "$excl")" -gt 0 ] || fail "no O_EXCL open of $free succeeded: $excl"
# The submit still tries it: held O_EXCL by another program, it is listed wipeable and refused.
"$PY" -c 'import os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_EXCL); print("held", flush=True); time.sleep(60)' \
        "$free" > "$TEST_DIR/hold.out" &
hpid=$!
register_pid "$hpid"
wait_match "$TEST_DIR/hold.out" '^held' 20 || fail "cannot hold $free"
row=$(wipectl --json devices | jq -c --arg n "$free" '[.devices[] | select(.node == $n)][0]')
jq_is "$row" .wipeable true "$free held O_EXCL, listed"
jq_is "$(wipectl --json probe "$free" 2>/dev/null)" .devices[0].refusal.code EBUSY "$free held O_EXCL, probed"
stop_pid "$hpid"

# --- Replies nobody reads: paused, not buffered; 32 connections a uid -------------------------
# The flood's connections closed first (they count against nobody's 32).
for _ in $(seq 100); do [ "$(n_fds)" -le $((fds0 + 1)) ] && break; sleep 0.1; done
[ "$(n_fds)" -le $((fds0 + 1)) ] || fail "the daemon keeps $(n_fds) files open after the flood, $fds0 before"
rss0=$(rss_kib)
as_nobody "$PY" "$client" hoard "$STATUS_SOCK" 32 3000 "$TEST_DIR/go" \
        > "$TEST_DIR/hoard.out" 2> "$TEST_DIR/hoard.err" &
hoard=$!
register_pid "$hoard"
wait_match "$TEST_DIR/hoard.out" '^held=' 150 || fail "the hoarding client did not send its requests: $(cat "$TEST_DIR/hoard.err")"
note "hoarding client: $(head -n 1 "$TEST_DIR/hoard.out")"
[ "$(field unsent "$(head -n 1 "$TEST_DIR/hoard.out")")" = 0 ] || fail "the hoarding client could not send its requests: $(head -n 1 "$TEST_DIR/hoard.out")"
# The 33rd connection of nobody is refused with one line; root on the control socket is served.
out=$(as_nobody "$PY" "$client" one "$STATUS_SOCK")
echo "$out" | jq -e '.ok == false and .error.code == "EUSERS" and (.error.message | test("at most 32"))' > /dev/null ||
        fail "a 33rd connection of nobody: $out"
out=$(timeout 20 "$WIPECTL_BIN" --socket "$SOCK" version 2>&1) || fail "root's version with 32 hoarders: $out"
rss1=$(rss_kib)
note "daemon RSS ${rss0} KiB before 32 connections of unread replies, ${rss1} KiB with them"
if $sanitizer; then
        note "sanitizer build: the RSS bound is checked in the normal build only"
else
        # 32 x 256 KiB paused + a reply each: about 10 MiB; the bound leaves room for the allocator.
        [ $((rss1 - rss0)) -le $((64 << 10)) ] || fail "daemon RSS grew from $rss0 to $rss1 KiB with 32 connections not reading"
fi
touch "$TEST_DIR/go"
wait "$hoard" || fail "the hoarding client failed: $(cat "$TEST_DIR/hoard.err")"
out=$(tail -n 1 "$TEST_DIR/hoard.out")
note "hoarding client: $out"
[ "$(field replies "$out")" = "$(printf '3000,%.0s' $(seq 32) | sed 's/,$//')" ] ||
        fail "every connection that read at last gets each of its 3000 replies: $out"
daemon_alive || fail "the daemon died of the hoarding client"

# --- Empty lines are not activity ---------------------------------------------------------------
stop_daemon || fail "daemon exit status $?"
start_daemon --threads 2 --client-timeout "$TIMEOUT"
out=$(as_nobody "$PY" "$client" newlines "$STATUS_SOCK" 20)
t=$(field closed_after "$out")
[[ $t =~ ^[0-9.]+$ ]] || fail "a client sending only empty lines was not disconnected within 20 s (--client-timeout $TIMEOUT): $out"
note "a client sending only empty lines disconnected after $t s"

daemon_alive || fail "the daemon died"
wipectl version > /dev/null || fail "the daemon does not answer"
stop_daemon || fail "daemon exit status $?"
pass
