#!/bin/bash
# wipectl watch. Off a terminal: plain lines without escape codes, a line per job now and then
# and when its state changes, never a redraw; with --json one event object per line, "start"
# first and "end" last. On a terminal (a tmux pane of a known size): a live view with one row per
# job (device, percentage, ETA) and a summary row, redrawn in place within the width, adapting
# when the window is resized, rows that do not fit summarised in one "N more jobs" row; the final
# screen shows every job done and watch exits 0.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

# wctl SECONDS ARG...: wipectl on the test's daemon, killed after SECONDS (exit 124).
wctl() { timeout "$1" "$WIPECTL_BIN" --socket "$SOCK" "${@:2}"; }

# dev_re DEV: an extended regex for DEV as a word (/dev/loop1 but not /dev/loop10).
dev_re() { printf '%s([^0-9]|$)' "$1"; }

PCT='[0-9]+(\.[0-9])?%'
ETA='(^|[^0-9A-Za-z])([0-9]+h[0-9]{2}m|[0-9]+m[0-9]{2}s|[0-9]+s)([^0-9A-Za-z/]|$)'

# screen_sane FILE WIDTH: no line of the screen is wider than WIDTH (tmux_screen joins lines the
# program let wrap) and no line shows two devices (rows drawn over each other).
screen_sane() {
        local file=$1 width=$2 long
        long=$(awk -v w="$width" 'length($0) > w { print length($0) ": " $0 }' "$file")
        [ -z "$long" ] || fail "a line wider than the $width columns of the terminal: $long
--- screen ---
$(cat "$file")"
        ! grep -Eq '/dev/loop[0-9]+.*/dev/loop[0-9]+' "$file" ||
                fail "a line shows two devices (garbled):
$(cat "$file")"
}

# show_screen FILE: the screen in the log, without its empty lines.
show_screen() { sed 's/ *$//' "$1" | grep -v '^$' | sed 's/^/#   /'; }

# rows_live FILE DEV...: every DEV has a row with a percentage and a time left.
rows_live() {
        local file=$1 dev
        shift
        for dev in "$@"; do
                grep -E "$(dev_re "$dev")" "$file" | grep -E "$PCT" | grep -Eq "$ETA" || return 1
        done
}

plain=("$(make_loop 512M)" "$(make_loop 512M)")
big=("$(make_loop 1G)" "$(make_loop 1G)")
many=()
for _ in $(seq 6); do many+=("$(make_loop 256M)"); done
start_daemon --threads 2

# --- Nothing to watch: watch returns 0 at once; --json says start and end with no job. ---
wctl 10 watch > "$TEST_DIR/empty.out" 2>&1 || fail "watch with no job exited $?: $(cat "$TEST_DIR/empty.out")"
wctl 10 --json watch > "$TEST_DIR/empty.json" 2>&1 || fail "--json watch with no job exited $?: $(cat "$TEST_DIR/empty.json")"
jq_is "$(head -n 1 "$TEST_DIR/empty.json")" '[.event, (.jobs | length)] | map(tostring) | join(" ")' "start 0" \
        "--json watch with no job: first line"
jq_is "$(tail -n 1 "$TEST_DIR/empty.json")" '[.event, (.jobs | length)] | map(tostring) | join(" ")' "end 0" \
        "--json watch with no job: last line"

# --- Off a terminal: two jobs of about 6.7 s each, watched as text and as JSON at once. ---
out=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 80M "${plain[@]}") || fail "submit exited $?: $out"
mapfile -t ids < <(echo "$out" | jq -r '.jobs[].id')
[ ${#ids[@]} = 2 ] || fail "expected two jobs: $out"
t0=$(date +%s)
wctl 60 watch > "$TEST_DIR/text.out" 2> "$TEST_DIR/text.err" < /dev/null &
text_pid=$!
wctl 60 --json watch --interval 1 > "$TEST_DIR/json.out" 2> "$TEST_DIR/json.err" < /dev/null &
json_pid=$!
wait $text_pid
rc=$?
[ $rc = 0 ] || fail "watch > file exited $rc: $(cat "$TEST_DIR/text.err")"
wait $json_pid
rc=$?
[ $rc = 0 ] || fail "--json watch exited $rc: $(cat "$TEST_DIR/json.err")"
note "watch took $(($(date +%s) - t0)) s"
for id in "${ids[@]}"; do [ "$(job_field "$id" state)" = done ] || fail "job $id not done after watch"; done

# Text: no escape sequence, no carriage return; per job a line while running (with its
# percentage) and a final line done; plain lines now and then, not a redraw every tick.
LC_ALL=C grep -q $'\x1b' "$TEST_DIR/text.out" && fail "watch > file wrote escape codes:
$(cat -v "$TEST_DIR/text.out" | head -n 20)"
LC_ALL=C grep -q $'\r' "$TEST_DIR/text.out" && fail "watch > file wrote carriage returns:
$(cat -v "$TEST_DIR/text.out" | head -n 20)"
for dev in "${plain[@]}"; do
        grep -E "$(dev_re "$dev")" "$TEST_DIR/text.out" | grep -w running | grep -Eq "$PCT" ||
                fail "watch > file: no line with $dev running and a percentage:
$(cat "$TEST_DIR/text.out")"
        grep -E "$(dev_re "$dev")" "$TEST_DIR/text.out" | grep -qw done ||
                fail "watch > file: no line with $dev done:
$(cat "$TEST_DIR/text.out")"
done
lines=$(wc -l < "$TEST_DIR/text.out")
note "watch > file: $lines lines:"
sed 's/^/#   /' "$TEST_DIR/text.out"
[ "$lines" -le 40 ] || fail "watch > file wrote $lines lines for two 7 s jobs (redraws?):
$(head -n 50 "$TEST_DIR/text.out")"
# Every line is about one job, or a summary: none is empty noise.
grep -Evq '^$' "$TEST_DIR/text.out" || fail "watch > file wrote nothing"

# JSON: one object per line; start (the jobs), state and progress events, end last.
n_lines=$(wc -l < "$TEST_DIR/json.out")
n_json=$(jq -c . "$TEST_DIR/json.out" | wc -l)
[ "$n_lines" = "$n_json" ] && [ "$n_lines" -ge 3 ] || fail "--json watch: $n_lines lines, $n_json JSON values:
$(head -c 2000 "$TEST_DIR/json.out")"
jq -e -s 'all(type == "object")' "$TEST_DIR/json.out" > /dev/null || fail "--json watch: a line is not an object"
want=$(printf '%s\n' "${ids[@]}" | sort -n | paste -sd,)
first=$(head -n 1 "$TEST_DIR/json.out")
jq_is "$first" '.event' start "--json watch: first line"
jq_is "$first" '.time | type' number "--json watch: start"
jq_is "$first" '[.jobs[].id] | sort | join(",")' "$want" "--json watch: start"
last=$(tail -n 1 "$TEST_DIR/json.out")
jq_is "$last" '.event' end "--json watch: last line"
jq_is "$last" '[.jobs[].id] | sort | join(",")' "$want" "--json watch: end"
jq_is "$last" '[.jobs[].state] | unique | join(",")' done "--json watch: end"
jq_is "$(jq -s -c . "$TEST_DIR/json.out")" '[.[1:-1][] | .event] - ["state","progress"] | length' 0 \
        "--json watch: the events between start and end"
jq_is "$(jq -s -c . "$TEST_DIR/json.out")" '[.[] | select(.event == "end")] | length' 1 "--json watch: end events"
for id in "${ids[@]}"; do
        n=$(jq -s "[.[] | select(.event == \"progress\" and .job.id == $id)] | length" "$TEST_DIR/json.out")
        [ "$n" -ge 2 ] || fail "--json watch --interval 1: $n progress events of job $id in a 7 s run"
        jq_is "$(jq -s -c . "$TEST_DIR/json.out")" \
                "[.[] | select(.event == \"state\" and .job.id == $id)][-1].job.state" done "--json watch: job $id"
done

# --- On a terminal, 150 x 30: two 1 GiB jobs at 100 MB/s (about 11 s). ---
out=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 100M "${big[@]}") || fail "submit exited $?: $out"
mapfile -t ids < <(echo "$out" | jq -r '.jobs[].id')
tmux_start wide 150 30 "'$WIPECTL_BIN' --socket '$SOCK' watch; echo \"exit=\$?\"; sleep 600"
screen=$TEST_DIR/screen.wide
for _ in $(seq 100); do
        tmux_screen wide > "$screen"
        rows_live "$screen" "${big[@]}" && break
        grep -q 'exit=' "$screen" && break
        sleep 0.1
done
rows_live "$screen" "${big[@]}" || fail "no screen with both devices, a percentage and an ETA each:
$(cat "$screen")"
note "watch on a 150x30 terminal:"
show_screen "$screen"
screen_sane "$screen" 150
grep -Eq '(^|[^0-9])2 jobs:.*2 running' "$screen" || fail "no summary row '2 jobs: 2 running, ...':
$(cat "$screen")"
# Redrawn in place: a second look after the next redraw (the screen changed) still fits, with the
# same rows.
cp "$screen" "$TEST_DIR/screen.before"
# shellcheck disable=SC2317  # called through wait_until
redrawn() { tmux_screen wide > "$screen" && ! cmp -s "$screen" "$1"; }
wait_until 30 "a redraw of the watch view on the 150x30 terminal" redrawn "$TEST_DIR/screen.before"
screen_sane "$screen" 150
[ "$(grep -Ec '/dev/loop[0-9]+' "$screen")" -le 4 ] || fail "the view was not redrawn in place:
$(cat "$screen")"

# Resized to 90 columns: the rows shrink to fit and still show both jobs.
tmux_cmd resize-window -t wide -x 90 -y 30 || hard_error "tmux resize-window failed"
# Redrawn for the new width: the screen changed since the resize (watch drew it again, not only
# tmux) and has no line wider than 90 columns; or watch has exited.
tmux_screen wide > "$TEST_DIR/screen.before"
# shellcheck disable=SC2317  # called through wait_until
resized() {
        redrawn "$TEST_DIR/screen.before" || return 1
        grep -q 'exit=' "$screen" || [ -z "$(awk 'length($0) > 90' "$screen")" ]
}
wait_until 30 "a redraw of the watch view within 90 columns after the resize" resized
if ! grep -q 'exit=' "$screen"; then
        note "after a resize to 90x30:"
        show_screen "$screen"
        screen_sane "$screen" 90
        for dev in "${big[@]}"; do
                grep -E "$(dev_re "$dev")" "$screen" | grep -Eq "$PCT" ||
                        fail "after a resize to 90 columns, no row with $dev and a percentage:
$(cat "$screen")"
        done
else
        note "the jobs ended before the resize could be seen"
fi

tmux_wait wide 'exit=[0-9]+' 60 || fail "watch did not exit within 60 s:
$(cat "$screen")"
note "final screen:"
show_screen "$screen"
grep -q 'exit=0' "$screen" || fail "watch exited $(grep -o 'exit=[0-9]*' "$screen")"
screen_sane "$screen" 90
for dev in "${big[@]}"; do
        grep -E "$(dev_re "$dev")" "$screen" | grep -qw done || fail "the final screen does not show $dev done:
$(cat "$screen")"
done
for id in "${ids[@]}"; do [ "$(job_field "$id" state)" = done ] || fail "job $id not done"; done
tmux_cmd kill-session -t wide

# --- On a small terminal, 60 x 6, six jobs: the rows that do not fit are one summary row. ---
out=$(wipectl --json wipe --yes --no-wait --verify none --max-rate 40M "${many[@]}") || fail "submit exited $?: $out"
tmux_start narrow 60 6 "'$WIPECTL_BIN' --socket '$SOCK' watch; echo \"exit=\$?\"; sleep 600"
screen=$TEST_DIR/screen.narrow
tmux_wait narrow '[0-9]+ more jobs?' 20 || fail "no 'N more jobs' row on a 60x6 terminal with six jobs:
$(cat "$screen")"
note "watch of six jobs on a 60x6 terminal:"
show_screen "$screen"
# Several looks while it runs: always within the width and the height, never garbled.
for look in 1 2 3 4; do
        tmux_screen narrow > "$screen"
        grep -q 'exit=' "$screen" && break
        screen_sane "$screen" 60
        [ "$(wc -l < "$screen")" -le 6 ] || fail "more lines than the terminal's 6:
$(cat "$screen")"
        shown=$(grep -Eo '/dev/loop[0-9]+' "$screen" | sort -u | wc -l)
        more=$(grep -Eo '[0-9]+ more jobs?' "$screen" | grep -Eo '^[0-9]+')
        [ -n "$more" ] || fail "look $look: no 'N more jobs' row:
$(cat "$screen")"
        [ $((shown + more)) = 6 ] || fail "look $look: $shown rows shown + $more more jobs is not the six jobs:
$(cat "$screen")"
        grep -E '[0-9]+ more jobs?' "$screen" | grep -Eq 'running|done' ||
                fail "the 'more jobs' row does not say what they do:
$(cat "$screen")"
        # Looks spread over the run (about one a redraw): what each shows is checked, not when.
        sleep 0.7
done
tmux_wait narrow 'exit=[0-9]+' 60 || fail "watch of six jobs did not exit within 60 s:
$(cat "$screen")"
note "final screen:"
show_screen "$screen"
grep -q 'exit=0' "$screen" || fail "watch of six jobs exited $(grep -o 'exit=[0-9]*' "$screen")"
screen_sane "$screen" 60
tmux_cmd kill-session -t narrow

daemon_alive || fail "daemon died"
stop_daemon || fail "daemon exit status $?"
pass
