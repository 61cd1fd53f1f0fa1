#!/bin/bash
# The test harness itself (tests/driver, the LOG_DRIVER of every test), on made-up tests in a
# directory of its own (no root, no device): two ordinary tests started together run side by side;
# a test marked "# test: alone" started with them overlaps neither; a test past TEST_TIMEOUT is
# stopped with SIGTERM (its cleanup runs) and fails; every result line ends with the wall time and
# every log with "# time: wall W s, cpu C s".
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
DRIVER=$top_srcdir/tests/driver
fail() { echo "FAIL: harness: $*" >&2; exit 1; }
[ -f "$DRIVER" ] || { echo "ERROR: harness: $DRIVER missing" >&2; exit 99; }
[ -f "$top_srcdir/build-aux/test-driver" ] || { echo "SKIP: harness: no build-aux/test-driver (autoreconf)" >&2; exit 77; }
command -v flock > /dev/null || { echo "SKIP: harness: flock missing" >&2; exit 77; }

dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 99
mkdir -p tests

# mk NAME [MARK]: a test that notes when it ran (start and end, in ns) and sleeps 1.5 s.
mk() {
        {
                echo '#!/bin/bash'
                [ -n "${2:-}" ] && echo "$2"
                echo "s=\$(date +%s%N); sleep 1.5; echo \"\$s \$(date +%s%N)\" > $dir/$1.ran"
        } > "$dir/$1.sh"
        chmod +x "$dir/$1.sh"
}
mk one
mk two
mk alone '# test: alone'
run() { bash "$DRIVER" --test-name "$1.sh" --log-file "$1.log" --trs-file "$1.trs" --color-tests no -- "./$1.sh"; }

# Started at once, twice: the alone one may get the lock first or last; it never overlaps.
for round in 1 2; do
        rm -f ./*.ran
        run one > one.out & p1=$!
        run alone > alone.out & p2=$!
        run two > two.out & p3=$!
        wait $p1 $p2 $p3
        for t in one two alone; do
                [ -f "$t.ran" ] || fail "round $round: $t did not run: $(cat "$t.out" "$t.log" 2>/dev/null)"
                grep -Eq "^PASS: $t.sh \([0-9]+\.[0-9] s\)$" "$t.out" || fail "round $round: $t's result line: $(cat "$t.out")"
                grep -Eq '^# time: wall [0-9]+\.[0-9] s, cpu [0-9]+\.[0-9] s$' "$t.log" || fail "$t.log: no time line: $(cat "$t.log")"
        done
        read -r s1 e1 < one.ran; read -r s2 e2 < two.ran; read -r sa ea < alone.ran
        overlap() { [ "$1" -lt "$4" ] && [ "$3" -lt "$2" ]; }
        overlap "$s1" "$e1" "$sa" "$ea" && fail "round $round: the alone test overlapped one"
        overlap "$s2" "$e2" "$sa" "$ea" && fail "round $round: the alone test overlapped two"
        overlap "$s1" "$e1" "$s2" "$e2" || fail "round $round: one and two did not run side by side"
done

# A test past its deadline: SIGTERM, its trap runs, it fails.
cat > slow.sh <<EOF
#!/bin/bash
trap 'echo cleaned > $dir/slow.cleaned; exit 130' TERM
sleep 60 & wait
EOF
chmod +x slow.sh
start=$SECONDS
TEST_TIMEOUT=1 run slow > slow.out
rc=$?
[ $((SECONDS - start)) -lt 30 ] || fail "the test past TEST_TIMEOUT=1 ran $((SECONDS - start)) s"
[ "$rc" = 0 ] || fail "the driver exited $rc (it reports a failure in the .trs, exits 0)"
grep -q '^FAIL: slow.sh' slow.out || fail "the test past its deadline: $(cat slow.out)"
grep -q '^:test-result: FAIL' slow.trs || fail "slow.trs: $(cat slow.trs)"
[ -f slow.cleaned ] || fail "the test past its deadline got no SIGTERM (its cleanup did not run)"
echo "PASS: harness"
