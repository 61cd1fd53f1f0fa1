#!/bin/bash
# A forgotten job's memory is freed while the daemon runs, and a new job's passes may get the same
# address: the new job must still be written with its own key (workers cache their cipher by a key
# serial, never by address). Also: forget right after the end keeps the report.
. "${top_srcdir:-.}/tests/lib.sh"

dev=$(make_loop 32M)
# --verbose: the daemon says when it frees a forgotten job ("job N: freed").
start_daemon --threads 1 --chunk-size 8M --verbose
submit() { wipectl --json wipe --yes --no-wait "$@" | jq -r '.jobs[0].id'; }

for round in 1 2; do
        a=$(submit --method random --verify none "$dev")
        [ "$(wait_job "$a" 60)" = done ] || fail "round $round: job $a did not end done"
        wipectl forget "$a" > /dev/null || fail "round $round: forget $a exited $?"
        # Its report stays, also when forgotten at once.
        [ -f "$STATE/reports/$a.json" ] || fail "round $round: forgotten job $a has no report"
        wipectl report --check "$STATE/reports/$a.json" > /dev/null || fail "round $round: report of $a does not check"
        wipectl --json report "$a" | cmp -s - "$STATE/reports/$a.json" || fail "round $round: report $a after forget differs from its file"
        [ -e "$STATE/jobs/$a.json" ] && fail "round $round: record of forgotten job $a is still there"
        # The daemon frees a forgotten job a little later (5 s); then the next job's passes may
        # take the freed memory.
        wait_match "$TEST_DIR/daemon.log" "job $a: freed\$" 60 || fail "round $round: forgotten job $a was not freed"
        b=$(submit --method random --verify none "$dev")
        [ "$(wait_job "$b" 60)" = done ] || fail "round $round: job $b did not end done"
        check_keystream "$dev" "$(job_cipher "$b")" "$(job_key "$b")"
        wipectl forget "$b" > /dev/null || fail "round $round: forget $b exited $?"
done
expect_exit 1 wipectl forget "$b"
daemon_alive || fail "daemon died"
pass "new jobs keep their own keys after forgets; reports outlive their jobs"
