#!/bin/bash
# tests/bench/plot.sh: the plots of one run of tests/bench/bench.sh, from its results.json, with
# gnuplot. bench.sh runs it at the end; run it by hand to redraw an earlier run's plots:
#
#   tests/bench/plot.sh RESULTS_DIR
#
# Writes into RESULTS_DIR:
#   throughput.png  GB/s (median) against the device count: wiped's random wipes (both ciphers,
#                   and aes-128-ctr with queue/rotational 1), its zero wipe and its verifications,
#                   fio's best write and best read (the devices' limit), dd from /dev/urandom, the
#                   openssl pipeline, shred and nwipe (where measured)
#   ratios.png      wiped's rows over fio's best write (wipes) or read (verifications), with the
#                   targets of issue 16
#   cpu.png         CPU seconds per GiB against the device count: left the tool's own (wiped: the
#                   daemon alone) with the targets, right all CPUs of the machine
#   *.dat           the data plotted, one column per series (NaN: not measured)
# Needs jq and gnuplot (Debian: gnuplot-nox).

set -u -o pipefail
export LC_ALL=C

prog=plot.sh
die() {
        echo "$prog: $*" >&2
        exit 1
}

[[ $# -eq 1 ]] || die "usage: $prog RESULTS_DIR (the directory holding bench.sh's results.json)"
dir=$1
res=$dir/results.json
[[ -f $res ]] || die "$res: not found"
command -v jq >/dev/null || die "jq: not found"
command -v gnuplot >/dev/null || die "gnuplot: not found (Debian: apt-get install gnuplot-nox)"

# The series: test (a row of results.json, or fio_best_write / fio_best_read) and its title.
series=(
        "wipe_aes|wiped random aes-128-ctr"
        "wipe_chacha|wiped random chacha20"
        "wipe_zero|wiped zero"
        "wipe_aes_rot|wiped aes-128-ctr, rotational=1"
        "verify_aes|wiped verify aes-128-ctr"
        "verify_chacha|wiped verify chacha20"
        "fio_best_write|fio write zeros (best iodepth)"
        "fio_best_read|fio read (best iodepth)"
        "urandom|dd if=/dev/urandom"
        "openssl|openssl enc aes-128-ctr | dd"
        "shred|shred -n1"
        "nwipe|nwipe random"
)
tests=()
for s in "${series[@]}"; do
        tests+=("${s%%|*}")
done
tests_json=$(printf '%s\n' "${tests[@]}" | jq -R -s -c 'split("\n") | map(select(length > 0))')

# One .dat per figure: the device count, then one column per series (NaN where not measured).
# FIELD: the row's field; fio's best rows are the fio row that was best at that count.
dat() {
        local field=$1
        jq -r --argjson tests "$tests_json" --arg f "$field" '
                "# devices " + ($tests | join(" ")),
                (.counts[] | . as $c | [$c.devices] + [$tests[] as $t |
                        (if $t == "fio_best_write" then $c.fio_best_write.test
                         elif $t == "fio_best_read" then ($c.fio_best_read.test // "")
                         else $t end) as $row |
                        ([$c.rows[] | select(.test == $row) | .[$f]][0] // "NaN")] | join(" "))' "$res"
}
dat gbps_median >"$dir/throughput.dat" || die "$res: unreadable"
dat ratio >"$dir/ratios.dat" || die "$res: unreadable"
# The tool's own CPU; for wiped's rows the daemon's alone (that of the targets).
jq -r --argjson tests "$tests_json" '
        "# devices " + ($tests | join(" ")),
        (.counts[] | . as $c | [$c.devices] + [$tests[] as $t |
                (if $t == "fio_best_write" then $c.fio_best_write.test
                 elif $t == "fio_best_read" then ($c.fio_best_read.test // "")
                 else $t end) as $row |
                ([$c.rows[] | select(.test == $row) | (.daemon_cpu_s_per_gib // .cpu_s_per_gib)][0] // "NaN")] | join(" "))' \
        "$res" >"$dir/cpu.dat" || die "$res: unreadable"
dat all_cpus_s_per_gib >"$dir/cpu-all.dat" || die "$res: unreadable"

# Which columns hold a figure at all (gnuplot stops at a series without one).
has_data() {
        awk -v c="$2" '!/^#/ && $c != "NaN" { found = 1 } END { exit !found }' "$1"
}

# plot_cmd DATFILE TESTS...: the "plot" clauses for those series that have data; column i + 2.
# Each series keeps one style (colour, dash, point) in every figure: style i + 1. With
# notitle=true, the series get no entry in the key.
notitle=false
plot_cmd() {
        local f=$1 i t title cmd='' first=true
        shift
        for i in "${!tests[@]}"; do
                t=${tests[$i]}
                [[ " $* " == *" $t "* ]] || continue
                has_data "$f" $((i + 2)) || continue
                title=${series[$i]#*|}
                $first || cmd+=", "
                cmd+="'$f' using 1:$((i + 2)) with linespoints linestyle $((i + 1))"
                if $notitle; then
                        cmd+=" notitle"
                else
                        cmd+=" title '${title//\'/\'\'}'"
                fi
                first=false
        done
        echo "$cmd"
}

title=$(jq -r '"\(.machine.nproc) CPUs, \(.machine.cpu_model); \(.settings.size_bytes / 1048576) MiB loop devices over tmpfs, \(.settings.reps) reps, \(.settings.threads) threads; \(.date[0:16]) \((.source.commit // "")[0:10])"' "$res")
ks_aes=$(jq -r '.keystream.used["aes-128-ctr"].cost_s_per_gib // empty' "$res")
ks_chacha=$(jq -r '.keystream.used["chacha20"].cost_s_per_gib // empty' "$res")

# The CPU targets: a thin dashed line each in the left panel, in the colour of the row it is
# for; named in the right panel's key (an entry that draws nothing there), which names the series
# of both panels, so that no key or label covers the left panel's data.
cpu_targets=", 0.02 with lines dashtype 2 linecolor rgb '#2ca02c' linewidth 1.5 notitle"
cpu_target_keys=", NaN with lines dashtype 2 linecolor rgb '#2ca02c' linewidth 1.5 title 'target (left): zero pass 0.02'"
if [[ -n $ks_aes ]]; then
        cpu_targets+=", $ks_aes + 0.02 with lines dashtype 2 linecolor rgb '#1f77b4' linewidth 1.5 notitle"
        cpu_target_keys+=", NaN with lines dashtype 2 linecolor rgb '#1f77b4' linewidth 1.5 title sprintf('target (left): aes, keystream %.3f + 0.02', $ks_aes)"
fi
if [[ -n $ks_chacha ]]; then
        cpu_targets+=", $ks_chacha + 0.02 with lines dashtype 2 linecolor rgb '#ff7f0e' linewidth 1.5 notitle"
        cpu_target_keys+=", NaN with lines dashtype 2 linecolor rgb '#ff7f0e' linewidth 1.5 title sprintf('target (left): chacha20, keystream %.3f + 0.02', $ks_chacha)"
fi

# The x axis: the device counts measured, on a log scale with a little room either side.
xtics=$(jq -r '[.counts[].devices] | join(", ")' "$res")
xmin=$(jq -r '[.counts[].devices] | min / 1.15' "$res")
xmax=$(jq -r '[.counts[].devices] | max * 1.15' "$res")
[[ -n $xtics ]] || die "$res: no device counts"
cd "$dir" || die "$dir: cannot enter"
gnuplot <<EOF || die "gnuplot failed"
set datafile missing "NaN"
set logscale x 2
set xtics ($xtics)
set xrange [$xmin:$xmax]
set grid
set key outside right top vertical Left reverse noenhanced font ",9"
set xlabel "devices written (read) at once"
# One style per series, the same in every figure: wiped's solid, the others dashed.
set style line 1 linecolor rgb '#1f77b4' linewidth 2.5 pointtype 7 pointsize 1.2
set style line 2 linecolor rgb '#ff7f0e' linewidth 2.5 pointtype 7 pointsize 1.2
set style line 3 linecolor rgb '#2ca02c' linewidth 2.5 pointtype 7 pointsize 1.2
set style line 4 linecolor rgb '#17becf' linewidth 2 pointtype 6 pointsize 1.2 dashtype 4
set style line 5 linecolor rgb '#9467bd' linewidth 2.5 pointtype 5 pointsize 1.1
set style line 6 linecolor rgb '#e377c2' linewidth 2.5 pointtype 5 pointsize 1.1
set style line 7 linecolor rgb '#000000' linewidth 2.5 pointtype 9 pointsize 1.3 dashtype 2
set style line 8 linecolor rgb '#7f7f7f' linewidth 2.5 pointtype 11 pointsize 1.3 dashtype 2
set style line 9 linecolor rgb '#8c564b' linewidth 1.5 pointtype 2 pointsize 1 dashtype 3
set style line 10 linecolor rgb '#d62728' linewidth 1.5 pointtype 3 pointsize 1 dashtype 3
set style line 11 linecolor rgb '#bcbd22' linewidth 1.5 pointtype 4 pointsize 1 dashtype 3
set style line 12 linecolor rgb '#ff9896' linewidth 1.5 pointtype 8 pointsize 1.5 dashtype 3

set terminal pngcairo noenhanced size 1300,650 font ",11"
set output "throughput.png"
set title "Throughput (median GB/s, aggregate over the devices)\n$title" noenhanced font ",11"
set ylabel "GB/s (10^9 bytes/s)"
set yrange [0:*]
plot $(plot_cmd throughput.dat "${tests[@]}")

set output "ratios.png"
set title "wiped over fio's best (writes: fio write; verifications: fio read)\n$title" noenhanced font ",11"
set ylabel "x fio"
set yrange [0:*]
plot $(plot_cmd ratios.dat wipe_aes wipe_chacha wipe_zero wipe_aes_rot verify_aes verify_chacha), \
        0.95 with lines dashtype 2 linecolor rgb '#444444' title 'target random wipe, 1 device: 0.95', \
        0.85 with lines dashtype 3 linecolor rgb '#444444' title 'target random wipe, 4-16 devices: 0.85', \
        0.80 with lines dashtype 4 linecolor rgb '#9467bd' title 'target verification: 0.80'

set terminal pngcairo noenhanced size 1700,650 font ",11"
set output "cpu.png"
set multiplot title "CPU seconds per GiB written (read), median\n$title" font ",11"
set logscale y
set yrange [*:*]
set tmargin at screen 0.84
set bmargin at screen 0.12
# The left panel without a key; the right one's key, outside, names the series of both.
set lmargin at screen 0.05
set rmargin at screen 0.37
set title "the tool's own CPU (wiped: the daemon alone; others: their processes)" font ",10"
set ylabel "CPU s/GiB (log scale)"
plot $(notitle=true plot_cmd cpu.dat "${tests[@]}")$cpu_targets
set lmargin at screen 0.42
set rmargin at screen 0.74
set title "all CPUs of the machine (loop workers' copying included)" font ",10"
set key outside right top vertical Left reverse noenhanced font ",9"
plot $(plot_cmd cpu-all.dat "${tests[@]}")$cpu_target_keys
unset multiplot
EOF
