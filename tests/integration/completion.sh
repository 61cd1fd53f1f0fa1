#!/bin/bash
# The bash completion of wipectl (cli/wipectl.bash), sourced into a plain bash (no bash-completion
# package needed): the commands, the global options, each command's options as its --help lists
# them, the values of --method (wipectl methods), --cipher and --verify, job ids from the daemon
# that --socket on the line or $WIPED_SOCKET names, and for wipe and probe only the devices that
# daemon would wipe (nothing without a daemon).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

COMPLETION=$top_srcdir/cli/wipectl.bash
COMMANDS="version status list cancel pause resume forget report devices policies probe methods verify watch wait wipe help"
GLOBALS="--socket --json -J --bytes --quiet -q --help --version -V"
[ -f "$COMPLETION" ] || hard_error "$COMPLETION missing"
bash -n "$COMPLETION" || fail "$COMPLETION: syntax error"

# comp WORD...: what the completion offers (sorted, one a line) for the line WORD... with the
# cursor at the end of the last WORD (give '' to complete a new word). wipectl is the one built
# here (first in PATH); WIPED_SOCKET is COMP_SOCKET when that is set, else unset.
COMP_SOCKET=
comp() {
        local -a envs=(PATH="$top_builddir/cli:$PATH")
        [ -n "$COMP_SOCKET" ] && envs+=(WIPED_SOCKET="$COMP_SOCKET")
        env -u WIPED_SOCKET "${envs[@]}" bash --norc --noprofile -c '
                . "$1" || exit 99
                f=$(complete -p wipectl 2>/dev/null | sed -n "s/.* -F \([^ ]*\) .*/\1/p")
                [ -n "$f" ] || { echo "no complete -F for wipectl" >&2; exit 98; }
                shift
                COMP_WORDS=("$@")
                COMP_CWORD=$(($# - 1))
                COMP_LINE="$*"
                COMP_POINT=${#COMP_LINE}
                COMP_TYPE=9
                "$f" wipectl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                [ ${#COMPREPLY[@]} = 0 ] || printf "%s\n" "${COMPREPLY[@]}"
        ' comp "$COMPLETION" "$@" | sort -u
        [ "${PIPESTATUS[0]}" = 0 ] || fail "completion of '$*' failed"
}

# words LIST...: the words, sorted, one a line.
# shellcheck disable=SC2048,SC2086
words() { printf '%s\n' $* | sort -u; }

# comp_is EXPECTED WORD...: the completion of WORD... offers exactly the words of EXPECTED.
comp_is() {
        local want=$1 got
        shift
        got=$(comp "$@")
        [ "$got" = "$(words "$want")" ] || fail "completion of '$*': got [$(echo $got)], expected [$(echo $(words "$want"))]"
}

# comp_has EXPECTED WORD...: the completion of WORD... offers every word of EXPECTED.
comp_has() {
        local want=$1 got missing
        shift
        got=$(comp "$@")
        missing=$(comm -23 <(words "$want") <(echo "$got"))
        [ -z "$missing" ] || fail "completion of '$*' lacks [$(echo $missing)]: got [$(echo $got)]"
}

# help_options CMD: the options "wipectl CMD --help" lists.
help_options() {
        "$WIPECTL_BIN" "$1" --help | sed -n '/^Options:/,$p' |
                sed -nE 's/^ +(-[[:alnum:]], )?(--[[:alnum:]][[:alnum:]-]*).*/\2/p' | sort -u
}

command -v bash >/dev/null || skip "bash missing"
out=$(bash --norc --noprofile -c '. "$1"; complete -p wipectl' _ "$COMPLETION") || fail "sourcing $COMPLETION: $out"
echo "$out" | grep -q -- '-F ' || fail "no completion function registered for wipectl: $out"

# --- Commands and global options. ---
comp_is "$COMMANDS" wipectl ''
comp_is "wait watch wipe" wipectl w
comp_is "version verify" wipectl ve
comp_is "$GLOBALS" wipectl -
comp_is "$COMMANDS" wipectl --json --bytes ''
comp_is "$COMMANDS" wipectl --socket /nowhere.sock ''
comp_is "$COMMANDS" wipectl --socket = /nowhere.sock --json ''
comp_is "$COMMANDS" wipectl help ''
comp_is "wait watch wipe" wipectl -J help w
comp_is "--socket" wipectl --so
# After --socket: a path, never a command.
got=$(comp wipectl --socket '')
echo "$got" | grep -qx wipe && fail "completion after --socket offers commands: $got"

# --- Each command's options: everything its --help lists (the CLI's own help is the list). ---
for cmd in ${COMMANDS% help}; do
        opts=$(help_options "$cmd")
        [ -n "$opts" ] || fail "wipectl $cmd --help lists no option"
        comp_has "$opts" wipectl "$cmd" -
        comp_has "$opts" wipectl --json "$cmd" --
        # Only options, when a dash was typed.
        comp "wipectl" "$cmd" -- | grep -v '^--' | grep -q . && fail "completion of 'wipectl $cmd --' offers non-options"
done
comp_has "--method --passes --verify --seed --cipher --max-rate --queue-depth --io-size --yes --no-wait --help" wipectl wipe --
# The sanitization record's options (issue 20), also those its help names mid-line.
comp_has "--asset-tag --customer --note --destination --operator-name --operator-title --operator-organization
        --operator-location --operator-contact --verifier-name --verifier-title --verifier-organization
        --verifier-location --verifier-contact" wipectl wipe --
comp_has "--interval" wipectl watch --
comp_has "--all" wipectl list --
comp_has "--pdf --summary-only" wipectl report --
# report --pdf FILE: a file name (the PDF to write).
touch "$TEST_DIR/cert-a.pdf"
comp_is "$TEST_DIR/cert-a.pdf" wipectl report --pdf "$TEST_DIR/cert-"
comp_is "--method --max-rate --max-bad" wipectl wipe --m
# Nothing but options and nothing at all after commands without arguments.
comp_is "" wipectl version ''
comp_is "" wipectl methods ''

# --- Option values. ---
methods=$("$WIPECTL_BIN" --socket "$TEST_DIR/none.sock" --json methods | jq -r '.methods[].name') || fail "methods --json failed"
comp_is "$methods" wipectl wipe --method ''
comp_is "dod-3pass" wipectl wipe --method do
comp_is "secure-discard" wipectl wipe --method sec
comp_is "$methods" wipectl --socket /x wipe --yes --method ''
comp_has "aes-128-ctr chacha20" wipectl wipe --cipher ''
comp_has "none sample last all" wipectl wipe --verify ''
comp_has "sample last all" wipectl verify --verify ''
comp_is "jsonl csv" wipectl report --all --format ''
comp_is "csv" wipectl report --all --format c
comp_is "--all" wipectl report --al
comp_is "" wipectl report --all --since ''
# Values to type: nothing offered (no devices, no options).
for opt in --max-rate --seed --queue-depth --io-size --passes; do comp_is "" wipectl wipe "$opt" ''; done
comp_is "" wipectl watch --interval ''

# --- Devices: only those the daemon would wipe, and nothing without a daemon. ---
loops=()
for _ in $(seq 3); do loops+=("$(make_loop 16M)"); done
comp_is "" wipectl --socket "$TEST_DIR/none.sock" wipe /dev/lo
comp_is "" wipectl --socket "$TEST_DIR/none.sock" probe ''
start_daemon --threads 2
# A mounted one is refused, so not offered.
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
mounted=$(make_loop 16M)
mkfs.ext4 -q "$mounted" || hard_error "mkfs.ext4 $mounted failed"
mkdir -p "$TEST_DIR/mnt"
mount "$mounted" "$TEST_DIR/mnt" || hard_error "cannot mount $mounted"
register_mount "$TEST_DIR/mnt"
wipeable=$(wipectl devices --wipeable) || fail "devices --wipeable failed"
echo "$wipeable" | grep -qx "${loops[0]}" || fail "devices --wipeable lacks ${loops[0]}: $wipeable"
echo "$wipeable" | grep -qx "$mounted" && fail "devices --wipeable lists the mounted $mounted"
root_disk=$(wipectl --json devices | jq -r '.devices[] | select(.mountpoint == "/") | .node')
for line in "wipectl --socket $SOCK wipe" "wipectl --socket $SOCK probe" "wipectl --socket $SOCK --json wipe --yes --verify none" \
            "wipectl --socket $SOCK wipe --method zero ${loops[0]}"; do
        # shellcheck disable=SC2086
        got=$(comp $line /dev/lo)
        for dev in "${loops[@]}"; do
                echo "$got" | grep -qx "$dev" || fail "completion of '$line /dev/lo' lacks $dev: $(echo $got)"
        done
        echo "$got" | grep -qx "$mounted" && fail "completion of '$line /dev/lo' offers the mounted $mounted"
        # (Other loop devices of the machine come and go meanwhile: only their kind is checked.)
        while read -r p; do
                [ -z "$p" ] || [ -b "$p" ] || fail "completion of '$line /dev/lo' offers $p, not a block device"
        done <<< "$got"
done
comp_is "" wipectl --socket "$SOCK" wipe /dev/loop-contr
COMP_SOCKET=$SOCK
got=$(comp wipectl wipe /dev/)
COMP_SOCKET=
echo "$got" | grep -qx "${loops[0]}" || fail "completion of 'wipectl wipe /dev/' lacks ${loops[0]}"
for p in /dev/null /dev/pts/ /dev/pts /dev/shm/ "$mounted" ${root_disk:+"$root_disk"}; do
        echo "$got" | grep -qx "$p" && fail "completion of 'wipectl wipe /dev/' offers $p"
done
while read -r p; do
        [ -b "$p" ] || fail "completion of 'wipectl wipe /dev/' offers $p: not a block device"
done <<< "$got"
umount "$TEST_DIR/mnt" || hard_error "cannot unmount $TEST_DIR/mnt"
# Status takes jobs, not devices.
comp wipectl --socket "$SOCK" status /dev/lo | grep -q . && fail "status offers devices"

# --- Job ids, from the daemon on the line's --socket or $WIPED_SOCKET. ---
done_id=$(wipectl --json wipe --yes --verify none "${loops[0]}" | jq -r '.jobs[0].id') || fail "wipe failed"
slow=$(make_loop 1G)
run_id=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 20M "$slow" | jq -r '.jobs[0].id') || fail "submit failed"
[ "$(job_field "$done_id" state)" = done ] && [ "$(job_field "$run_id" state)" = running ] ||
        fail "jobs not as planned: $done_id $(job_field "$done_id" state), $run_id $(job_field "$run_id" state)"
both="$done_id $run_id"

comp_is "$both" wipectl --socket "$SOCK" status ''
comp_is "$both" wipectl --socket = "$SOCK" status ''
comp_is "$both" wipectl --json --socket "$SOCK" status "$done_id" ''
comp_is "$run_id" wipectl --socket "$SOCK" cancel ''
comp_is "$run_id" wipectl --socket "$SOCK" wait ''
comp_is "$run_id" wipectl --socket "$SOCK" watch --interval 2 ''
comp_is "$done_id" wipectl --socket "$SOCK" verify ''
comp_is "$done_id" wipectl --socket "$SOCK" verify --verify last ''
comp_has "$both" wipectl --socket "$SOCK" report ''
comp_has "$both" wipectl --socket "$SOCK" report --keys ''
comp_is "$done_id" wipectl --socket "$SOCK" status "$done_id"
COMP_SOCKET=$SOCK
comp_is "$both" wipectl status ''
comp_is "$run_id" wipectl cancel ''
# The socket on the line wins over $WIPED_SOCKET.
comp_is "" wipectl --socket "$TEST_DIR/none.sock" status ''
COMP_SOCKET=
# No daemon there: nothing, quickly.
comp_is "" wipectl --socket "$TEST_DIR/none.sock" status ''

wipectl cancel "$run_id" > /dev/null || fail "cancel failed"
wait_job "$run_id" > /dev/null
comp_is "" wipectl --socket "$SOCK" cancel ''
daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
