#!/bin/bash
# tests/bench/bench.sh: how fast wiped writes, next to fio, dd, openssl, shred and nwipe, how much
# CPU it spends per GiB, how fast it verifies (--verify last) next to fio's sequential read, and how
# quickly it answers status requests while it wipes; on RAM-backed loop devices, for several device
# counts in one run, with the devices' rotational flag at 0 (and one row at 1). Leaves the table, a
# JSON file of every figure and plots in a results directory. Run by hand as root; not part of
# "make check". See tests/bench/README.md.
#
# Safety: the only devices this script ever writes to are loop devices it created itself with
# "losetup -f --show --direct-io=on FILE" over files of its own in a private directory under
# /dev/shm, named by the path losetup printed. Before every write it checks again that each device
# is a block device whose backing file is still ours. nwipe is only ever started with those device
# paths on its command line (never without: it would pick every disk), and its command line is
# checked before and after it starts. The devices are detached and the files deleted between
# device counts and on every exit.

set -u -o pipefail
export LC_ALL=C         # dd's summary, awk's and numfmt's numbers, EPOCHREALTIME's decimal point

prog=bench.sh
top=$(cd "$(dirname "$0")/../.." && pwd)

size_arg=512M
counts_arg="1,2,4,8,16"
reps=3
threads=2
build=
cipher_speed=false
urandom_arg=512M
do_shred=true
do_nwipe=true
do_read=true
nwipe_seconds=20
nwipe_counts_arg=1
status_requests=200
do_rot=true
results_dir=
daemon_args=()

usage() {
        cat <<EOF
Usage: $prog [OPTION]...
Measure wiped's random and zero wipes against fio's sequential write of zeros (the device's
limit), dd from /dev/urandom, an openssl enc pipeline, shred and nwipe; wiped's read-back
verification (wipectl verify --verify last) against fio's sequential read; the CPU each spends per
GiB; and the latency of status requests while wiped wipes. On RAM-backed loop devices, for each
device count in turn. Run as root. Prints one table per device count and a summary of the targets,
and leaves them, a JSON file of every figure and plots (gnuplot) in a results directory.

  --size SIZE          size of each loop device (default $size_arg; K, M, G suffixes are powers of 1024)
  --counts LIST        device counts to measure, in one run, comma- or space-separated
                       (default $counts_arg); all devices of a count are written at once
  --devices N          shorthand for --counts N
  --reps N             interleaved repetitions; medians are reported (default $reps)
  --threads N          wiped worker threads (default $threads)
  --daemon-args "ARGS" more options for wiped, split at blanks, e.g. "--buffers 64 --queue-depth 16"
  --daemon-arg ARG     one more option for wiped (repeatable), e.g. --daemon-arg=--queue-depth=16
  --build DIR          build directory holding daemon/wiped and cli/wipectl
                       (default: $top/build, else $top)
  --urandom-size SIZE  bytes dd copies from /dev/urandom to each device (default $urandom_arg,
                       at most --size; /dev/urandom is slow)
  --no-shred           leave out shred
  --no-nwipe           leave out nwipe
  --nwipe-seconds N    how long nwipe runs before it is stopped, per repetition (default $nwipe_seconds)
  --nwipe-counts LIST  the device counts nwipe runs at, or "all" (default $nwipe_counts_arg)
  --no-read            leave out the read-back rows (fio read, wipectl verify --verify last)
  --no-rotational      leave out the row of the aes-128-ctr wipe with the devices' rotational flag at 1
  --status-requests N  status requests timed per device count, per client (default $status_requests)
  --cipher-speed       also print "openssl speed" for both ciphers (one core, 1 MiB blocks) next to
                       wiped's own keystream speed (build/tests/bench/keystream-speed, always run)
  --results DIR        where to leave table.txt, results.json and the plots
                       (default ./bench-results/YYYYmmdd-HHMMSS)
  -h, --help           this text
EOF
}

die() {
        echo "$prog: $*" >&2
        exit 1
}

say() {
        echo "$prog: $*" >&2
}

# Parse a size with an optional K/M/G/T suffix (powers of 1024) into bytes.
parse_size() {
        local v
        v=$(numfmt --from=iec -- "${1%iB}" 2>/dev/null) || return 1
        [[ $v =~ ^[0-9]+$ ]] || return 1
        echo "$v"
}

# A list of device counts ("1,2,4 8") -> sorted, unique, one per word. Fails on anything else.
parse_counts() {
        local c list=()
        for c in ${1//,/ }; do
                [[ $c =~ ^[1-9][0-9]*$ && $c -le 16 ]] || return 1
                list+=("$c")
        done
        ((${#list[@]} > 0)) || return 1
        printf '%s\n' "${list[@]}" | sort -nu | tr '\n' ' '
}

while [[ $# -gt 0 ]]; do
        opt=$1
        val=
        case $opt in
        --*=*)
                val=${opt#*=}
                opt=${opt%%=*}
                ;;
        esac
        case $opt in
        --size|--counts|--devices|--reps|--threads|--build|--urandom-size|--daemon-arg|--daemon-args|\
        --nwipe-seconds|--nwipe-counts|--status-requests|--results)
                if [[ $1 != *=* ]]; then
                        [[ $# -ge 2 ]] || { usage >&2; die "$opt: needs an argument"; }
                        val=$2
                        shift
                fi
                ;;
        esac
        case $opt in
        --size) size_arg=$val ;;
        --counts) counts_arg=$val ;;
        --devices) counts_arg=$val ;;
        --reps) reps=$val ;;
        --threads) threads=$val ;;
        --build) build=$val ;;
        --urandom-size) urandom_arg=$val ;;
        --daemon-arg) daemon_args+=("$val") ;;
        --daemon-args)
                read -r -a more <<<"$val"
                daemon_args+=("${more[@]}")
                ;;
        --nwipe-seconds) nwipe_seconds=$val ;;
        --nwipe-counts) nwipe_counts_arg=$val ;;
        --status-requests) status_requests=$val ;;
        --no-shred) do_shred=false ;;
        --no-nwipe) do_nwipe=false ;;
        --no-read) do_read=false ;;
        --no-rotational) do_rot=false ;;
        --results) results_dir=$val ;;
        --cipher-speed) cipher_speed=true ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "$opt: unknown option" ;;
        esac
        shift
done

mib=$((1024 * 1024))
gib=$((1024 * mib))
size=$(parse_size "$size_arg") || die "$size_arg: invalid size"
urandom_size=$(parse_size "$urandom_arg") || die "$urandom_arg: invalid size"
counts_list=$(parse_counts "$counts_arg") || die "$counts_arg: invalid device counts (numbers 1..16, comma-separated)"
read -r -a counts <<<"$counts_list"
max_count=${counts[${#counts[@]} - 1]}
if [[ $nwipe_counts_arg == all ]]; then
        nwipe_counts=" ${counts[*]} "
else
        nwipe_counts=$(parse_counts "$nwipe_counts_arg") || die "$nwipe_counts_arg: invalid --nwipe-counts"
        nwipe_counts=" $nwipe_counts"
fi
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "$reps: invalid repetition count"
[[ $threads =~ ^[1-9][0-9]*$ ]] || die "$threads: invalid thread count"
[[ $nwipe_seconds =~ ^[1-9][0-9]*$ && $nwipe_seconds -ge 3 ]] || die "$nwipe_seconds: invalid --nwipe-seconds (3 or more)"
[[ $status_requests =~ ^[1-9][0-9]*$ ]] || die "$status_requests: invalid --status-requests"
((size >= 64 * mib && size % mib == 0)) || die "$size_arg: the size must be a multiple of 1 MiB, at least 64 MiB"
((urandom_size > size)) && urandom_size=$size
((urandom_size >= mib && urandom_size % mib == 0)) || die "$urandom_arg: must be a multiple of 1 MiB"
[[ ${EPOCHREALTIME:-} =~ ^[0-9]+\.[0-9]{6}$ ]] || die "needs bash 5 (EPOCHREALTIME)"

# --- prerequisites -------------------------------------------------------------------------------

[[ $(id -u) -eq 0 ]] || die "must run as root (it creates loop devices and starts wiped)"
for c in fio openssl losetup jq dd head awk numfmt fallocate blockdev cmp sort getconf; do
        command -v "$c" >/dev/null || die "$c: not found; install it (fio, openssl, util-linux, jq, coreutils)"
done
have_shred=false
$do_shred && command -v shred >/dev/null && have_shred=true
nwipe_bin=
if $do_nwipe; then
        nwipe_bin=$(command -v nwipe || true)
        [[ -z $nwipe_bin && -x /usr/sbin/nwipe ]] && nwipe_bin=/usr/sbin/nwipe
fi
have_perl=false
perl -MIO::Socket::UNIX -MTime::HiRes -e 1 2>/dev/null && have_perl=true
have_gnuplot=false
command -v gnuplot >/dev/null && have_gnuplot=true
clk_tck=$(getconf CLK_TCK)
[[ $clk_tck =~ ^[1-9][0-9]*$ ]] || die "getconf CLK_TCK: no answer"

if [[ -z $build ]]; then
        for d in "$top/build" "$top"; do
                if [[ -x $d/daemon/wiped && -x $d/cli/wipectl ]]; then
                        build=$d
                        break
                fi
        done
        [[ -n $build ]] || die "no built daemon/wiped and cli/wipectl in $top/build or $top; build first:" \
                "tools/build, or ./configure && make (out of tree: mkdir build && cd build && ../configure && make)," \
                "or name the build directory with --build DIR"
fi
[[ -d $build ]] || die "$build: no such directory (--build)"
build=$(cd "$build" && pwd) || die "$build: cannot enter"
wiped=$build/daemon/wiped
wipectl=$build/cli/wipectl
[[ -x $wiped ]] || die "$wiped: not found; build it (tools/build, or ./configure && make)"
[[ -x $wipectl ]] || die "$wipectl: not found; build it (tools/build, or ./configure && make)"

[[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]] || die "/dev/shm: not a tmpfs; the devices must be RAM-backed"

# Whether COUNT devices of SIZE fit in /dev/shm and in the available RAM, with 512 MiB to spare
# (wiped's buffers, fio, the page cache nwipe fills).
check_memory() {
        local n=$1 need shm_avail mem_avail
        need=$((n * size))
        shm_avail=$(df --output=avail -B1 /dev/shm | tail -n 1)
        mem_avail=$(awk '/^MemAvailable:/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
        ((need + 512 * mib <= shm_avail)) ||
                die "$n devices x $((size / mib)) MiB need $((need / mib)) MiB in /dev/shm plus 512 MiB;" \
                "only $((shm_avail / mib)) MiB free there. Lower --size or leave out the largest of --counts."
        ((need + 512 * mib <= mem_avail)) ||
                die "$n devices x $((size / mib)) MiB need $((need / mib)) MiB of RAM plus 512 MiB;" \
                "only $((mem_avail / mib)) MiB available (MemAvailable). Lower --size or leave out the largest of --counts."
}
check_memory "$max_count"

# The results directory: the table (a copy of stdout), results.json and the plots.
[[ -n $results_dir ]] || results_dir=./bench-results/$(date +%Y%m%d-%H%M%S)
mkdir -p -- "$results_dir" || die "$results_dir: cannot create the results directory"
results_dir=$(cd "$results_dir" && pwd) || die "$results_dir: cannot enter"
[[ -e $results_dir/results.json ]] && die "$results_dir: holds the results of an earlier run; name another with --results"

# --- set-up and clean-up -------------------------------------------------------------------------

work=
loops=()                # the paths losetup printed, and only those
files=()                # their backing files, same index
daemon_pid=
bg_pids=()              # writers running in the background
tee_pid=

stop_bg() {
        local p
        for p in "${bg_pids[@]}"; do
                kill "$p" 2>/dev/null
        done
        for p in "${bg_pids[@]}"; do
                wait "$p" 2>/dev/null
        done
        bg_pids=()
}

# Detach our loop devices and delete their files (between device counts and at exit).
release_devices() {
        local i p b
        for i in "${!loops[@]}"; do
                losetup -d "${loops[$i]}" || say "${loops[$i]}: cannot detach; do it by hand (backing file ${files[$i]})"
        done
        # A detach waits for the last opener (udev's probe after a write, say): give it a moment.
        for i in "${!loops[@]}"; do
                for p in $(seq 30); do
                        b=$(cat "/sys/block/${loops[$i]#/dev/}/loop/backing_file" 2>/dev/null)
                        [[ $b == "${files[$i]}"* ]] || break
                        sleep 0.1
                done
                [[ $b == "${files[$i]}"* ]] &&
                        say "${loops[$i]}: still open by someone; the kernel detaches it on the last close"
        done
        for i in "${!files[@]}"; do
                rm -f -- "${files[$i]}"
        done
        loops=()
        files=()
}

cleanup() {
        local i
        trap - EXIT INT TERM
        stop_bg
        if [[ -n $daemon_pid ]]; then
                kill -TERM "$daemon_pid" 2>/dev/null
                for i in $(seq 50); do
                        kill -0 "$daemon_pid" 2>/dev/null || break
                        sleep 0.1
                done
                kill -KILL "$daemon_pid" 2>/dev/null
                wait "$daemon_pid" 2>/dev/null
        fi
        release_devices
        [[ -n $work && -d $work ]] && rm -rf -- "$work"
        if [[ -n $tee_pid ]]; then
                exec >&5
                wait "$tee_pid" 2>/dev/null
        fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Everything printed on stdout also goes to the results directory's table.txt; cleanup() closes
# the pipe and waits for tee, so that the copy is complete when the script ends.
exec 5>&1 > >(tee "$results_dir/table.txt" >&5)
tee_pid=$!

work=$(mktemp -d /dev/shm/wiped-bench.XXXXXX) || die "cannot create a directory in /dev/shm"
sock=$work/wiped.sock
state=$work/state
daemon_log=$work/wiped.log

# Create N devices of $size: our files, attached with losetup -f --show --direct-io=on.
make_devices() {
        local n=$1 i f d
        check_memory "$n"
        for ((i = 0; i < n; i++)); do
                f=$work/dev$i.img
                # Allocate the pages now (the warm-up write does the rest).
                fallocate -l "$size" "$f" || die "$f: cannot allocate $size bytes"
                files[i]=$f
                d=$(losetup -f --show --direct-io=on "$f") || die "$f: losetup failed"
                [[ $d =~ ^/dev/loop[0-9]+$ ]] || die "losetup printed \"$d\", not a loop device"
                loops[i]=$d
        done
        n_devices=$n
        set_rotational 0
}

# Set the rotational flag (queue/rotational) of every device of this count to $1 and check that
# it took. wiped reads it when a job starts: 1 makes a device one worker's at a time, written in
# order, with the rotational queue depth; 0 lets the workers share it. The loop driver's default
# depends on the backing file, so the script always sets it.
set_rotational() {
        local d q
        for d in "${loops[@]}"; do
                [[ $d =~ ^/dev/loop[0-9]+$ ]] || die "$d: not a loop device path; stopping"
                q=/sys/block/${d#/dev/}/queue/rotational
                echo "$1" >"$q" 2>/dev/null || die "$q: cannot set it to $1"
                [[ $(<"$q") == "$1" ]] || die "$q: reads $(<"$q") after setting it to $1"
        done
}

# Check that every device is still ours: a block device backed by our file, of our size.
# Called before everything that writes.
guard() {
        local i d b
        ((${#loops[@]} == n_devices && n_devices > 0)) || die "internal error: no devices to check"
        for i in "${!loops[@]}"; do
                d=${loops[$i]}
                [[ $d =~ ^/dev/loop[0-9]+$ ]] || die "$d: not a loop device path; stopping"
                [[ -b $d ]] || die "$d: no longer a block device; stopping"
                b=$(cat "/sys/block/${d#/dev/}/loop/backing_file" 2>/dev/null)
                [[ $b == "${files[$i]}" ]] || die "$d: backing file is \"$b\", not ${files[$i]}; stopping"
                [[ $(blockdev --getsize64 "$d") == "$size" ]] || die "$d: unexpected size; stopping"
        done
}

"$wiped" --socket "$sock" --state-dir "$state" --threads "$threads" --foreground "${daemon_args[@]}" \
        >"$daemon_log" 2>&1 5>&- &
daemon_pid=$!
for ((i = 0; ; i++)); do
        if ! kill -0 "$daemon_pid" 2>/dev/null; then
                cat "$daemon_log" >&2
                daemon_pid=
                die "wiped exited at start-up (log above)"
        fi
        [[ -S $sock ]] && "$wipectl" --socket "$sock" version >/dev/null 2>&1 && break
        ((i < 200)) || die "wiped: socket $sock not up after 10 s"
        sleep 0.05
done
version_json=$("$wipectl" --socket "$sock" --json version) || die "wipectl version failed"

# --- clocks and CPU counters (no process is started to read them) --------------------------------

# now: microseconds since the epoch, into $now_us.
now() {
        now_us=${EPOCHREALTIME/./}
}

# CPU clock ticks (user + system) of all the children this shell has reaped: fio, wipectl, dd,
# openssl, shred and everything they waited for; into $child_ticks. And the busy ticks of all
# CPUs of the machine (/proc/stat: user, nice, system, irq, softirq, steal), which also count the
# kernel's work for the writers (the loop driver's workers) and anything else running; into
# $all_busy.
read_child_ticks() {
        local a
        read -r -a a <"/proc/$$/stat"
        child_ticks=$((a[15] + a[16]))
        read -r -a a </proc/stat
        all_busy=$((a[1] + a[2] + a[3] + a[6] + a[7] + a[8]))
}

# The CPU time of the running daemon (user + system, all its threads, also those that have
# ended), in ns, into $daemon_ns. With perl, from the daemon's process CPU clock
# (clock_gettime(2) of the clock id clock_getcpuclockid(3) gives for its pid: -8 * pid - 6), to
# the nanosecond; otherwise from /proc/PID/stat, in clock ticks (10 ms), which is coarse next to
# the 0.02 s/GiB of a target when the wipe is small.
daemon_cpu_clock=
read_daemon_ns() {
        local a v
        if $have_perl; then
                v=$(perl -MTime::HiRes=clock_gettime -e 'printf "%.0f\n", clock_gettime(-8 * $ARGV[0] - 6) * 1e9' "$daemon_pid")
                if [[ $v =~ ^[1-9][0-9]*$ ]]; then
                        daemon_ns=$v
                        daemon_cpu_clock="the daemon's process CPU clock (ns)"
                        return
                fi
        fi
        read -r -a a <"/proc/$daemon_pid/stat" || die "wiped (pid $daemon_pid) is gone; its log: $(tail -n 5 "$daemon_log")"
        daemon_ns=$(((a[13] + a[14]) * 1000000000 / clk_tck))
        daemon_cpu_clock="/proc/PID/stat (clock ticks of 10 ms: coarse with small wipes)"
}

# CPU seconds per GiB: ns bytes
cpu_per_gib() {
        awk -v t="$1" -v b="$2" -v g="$gib" 'BEGIN { printf "%.3f", (b > 0 ? t / 1e9 / (b / g) : 0) }'
}

# Clock ticks -> ns.
ticks_ns() {
        echo $(($1 * 1000000000 / clk_tck))
}

# --- measurements --------------------------------------------------------------------------------
# Each run_* sets "bytes" (written or read in all), "ns" (time taken), "wall_ns", "cpu_ns" (the CPU
# the tool spent on it), "all_ns" (the busy time of all CPUs over it) and "dcpu_ns" (the daemon's
# own CPU: wipectl rows only, empty for the others).

# fio: one job per device in one group, so that bw_bytes is the aggregate. $2: write (zeros,
# the default) or read.
run_fio() {
        local qd=$1 rw=${2:-write} out=$work/fio.json args=() d t0 c0 a0 bw
        for d in "${loops[@]}"; do
                args+=(--name="${d#/dev/}" --filename="$d")
        done
        [[ $rw == write ]] && args+=(--zero_buffers)
        read_child_ticks
        c0=$child_ticks
        a0=$all_busy
        now
        t0=$now_us
        fio --ioengine=io_uring --direct=1 --rw="$rw" --bs=1M --iodepth="$qd" --numjobs=1 \
                --size="$size" --group_reporting --output-format=json --output="$out" "${args[@]}" \
                >"$work/fio.err" 2>&1 || { cat "$work/fio.err" >&2; die "fio --rw=$rw failed"; }
        now
        read_child_ticks
        wall_ns=$(((now_us - t0) * 1000))
        cpu_ns=$(ticks_ns $((child_ticks - c0)))
        all_ns=$(ticks_ns $((all_busy - a0)))
        dcpu_ns=
        bytes=$(jq ".jobs[0].$rw.io_bytes" "$out")
        bw=$(jq ".jobs[0].$rw.bw_bytes" "$out")
        ((bytes == n_devices * size)) || die "fio --rw=$rw moved $bytes bytes, expected $((n_devices * size))"
        [[ $bw =~ ^[0-9]+$ && $bw -gt 0 ]] || die "fio reported no bandwidth"
        # Back to a time, so that all rows are computed alike: bytes / ns.
        ns=$(awk -v b="$bytes" -v bw="$bw" 'BEGIN { printf "%.0f", b / bw * 1e9 }')
}

# wipectl waits for the jobs itself (one process, a status poll every 0.1 s) and prints the final
# job objects. Polling from here instead (a wipectl and a jq every 20 ms) costs ~20 % of the rate
# on a 2-CPU machine, so the time comes from the jobs' own elapsed_s, not from our clock.
# --verify none: the write alone (the default, a 10 % sample read-back, would add reads).
# $1: a cipher (random pass) or "zero" (--method zero); $2: the rotational flag the devices get
# for this wipe (default 0; set back to 0 after it). The CPU is the daemon's (its workers do the
# work) plus wipectl's own; dcpu_ns the daemon's alone. The policy the daemon gave each device
# goes into $policy (see wipe_policy).
wipe_timing=
declare -A wipe_jobs=()         # cipher -> the job ids of its latest wipe, for run_verify
run_wipe() {
        local kind=$1 rot=${2:-0} args st rc t0 c0 a0 d0 d i
        local -a before=()
        if [[ $kind == zero ]]; then
                args=(--method zero)
        else
                args=(--cipher "$kind")
        fi
        # What the last MiB of each device holds now: a random pass must change it.
        for i in "${!loops[@]}"; do
                before[i]=$(dd if="${loops[$i]}" bs=1M skip=$((size / mib - 1)) count=1 iflag=direct status=none | cksum)
        done
        ((rot == 0)) || set_rotational "$rot"
        read_child_ticks
        c0=$child_ticks
        a0=$all_busy
        read_daemon_ns
        d0=$daemon_ns
        now
        t0=$now_us
        st=$("$wipectl" --socket "$sock" --json wipe --yes --verify none "${args[@]}" "${loops[@]}" \
                2>"$work/wipectl.err")
        rc=$?
        now
        read_daemon_ns
        read_child_ticks
        ((rot == 0)) || set_rotational 0
        wall_ns=$(((now_us - t0) * 1000))
        dcpu_ns=$((daemon_ns - d0))
        cpu_ns=$((dcpu_ns + $(ticks_ns $((child_ticks - c0)))))
        all_ns=$(ticks_ns $((all_busy - a0)))
        if [[ $rc -ne 0 ]]; then
                cat "$work/wipectl.err" >&2
                [[ -n $st ]] && jq -c '[.jobs[]? | {device, state, error}]' <<<"$st" >&2
                die "wipectl wipe ${args[*]} failed (exit $rc)"
        fi
        jq -e --argjson n "$n_devices" '(.jobs | length) == $n and all(.jobs[]; .state == "done")' \
                <<<"$st" >/dev/null || die "wipectl wipe ${args[*]}: unexpected result: $st"
        bytes=$(jq '[.jobs[].bytes_total] | add' <<<"$st")
        ((bytes == n_devices * size)) || die "wipe covered $bytes bytes, expected $((n_devices * size))"
        [[ $kind != zero && $rot == 0 ]] && wipe_jobs[$kind]=$(jq -r '[.jobs[].id] | join(" ")' <<<"$st")
        wipe_policy "$st" "$rot"
        # All jobs of one submit start at the same time: the aggregate time is the longest job.
        if jq -e 'all(.jobs[]; .elapsed_s | type == "number")' <<<"$st" >/dev/null; then
                ns=$(jq '[.jobs[].elapsed_s] | max * 1e9 | floor' <<<"$st")
                wipe_timing="the jobs' own elapsed_s (daemon clock, submit to done including the final flush, 1 ms resolution)"
        else
                ns=$wall_ns
                wipe_timing="the wall clock around wipectl wipe (no elapsed_s in its JSON; coarse: wipectl polls every 0.1 s)"
        fi
        # The zero wipe must leave zeros; a random one something else than before (the zero wipe,
        # fio's zeros or another key's stream).
        for i in "${!loops[@]}"; do
                d=${loops[$i]}
                if dd if="$d" bs=1M skip=$((size / mib - 1)) count=1 iflag=direct status=none |
                        cmp -s -n "$mib" - /dev/zero; then
                        [[ $kind == zero ]] || die "$d: the last MiB is zeros after a random wipe reported done"
                elif [[ $kind == zero ]]; then
                        die "$d: the last MiB is not zeros after a zero wipe reported done"
                elif [[ $(dd if="$d" bs=1M skip=$((size / mib - 1)) count=1 iflag=direct status=none | cksum) == "${before[$i]}" ]]; then
                        die "$d: the last MiB did not change in a random wipe reported done"
                fi
        done
}

# The policy wiped gave each device of a wipe, from the final JSON ($1) and the daemon's log:
# the job's "in_order" (one worker at a time; older daemons lack it, then the identity's
# "rotational", what the daemon read from queue/rotational when the job started) and the job's
# queue depth; the log's "started" line of a job says "(rotational: in order)" when
# the device is one worker's at a time. $2: the flag the script set. Into $policy, one word per
# device: DEV:rotational/QD or DEV:shared/QD ("?" where the JSON says nothing); dies when the
# daemon did not see the flag the script set.
wipe_policy() {
        local st=$1 rot=$2 dev r qd id line p o
        policy=
        while read -r id dev r qd o; do
                line=$(grep -a "job $id: [^ ]*: started:" "$daemon_log" | tail -n 1)
                if [[ $o == true ]]; then
                        p=rotational
                elif [[ $o == false ]]; then
                        p=shared
                elif [[ $r == true ]]; then
                        p=rotational
                elif [[ $r == false ]]; then
                        p=shared
                elif [[ $line == *"(rotational: in order)"* ]]; then
                        p=rotational
                elif [[ -n $line ]]; then
                        p=shared
                else
                        p="?"
                fi
                [[ $p == rotational && -n $line && $line != *"(rotational: in order)"* ]] &&
                        die "job $id: the identity says rotational, the daemon's log does not: $line"
                if [[ $p != "?" && $p != "$([[ $rot == 1 ]] && echo rotational || echo shared)" ]]; then
                        die "$dev: the rotational flag was $rot, but the daemon's job $id got the $p policy"
                fi
                policy+="${policy:+ }${dev#/dev/}:$p/$qd"
        done < <(jq -r '.jobs[] | "\(.id) \(.device // .identity.node // "?") \(.identity.rotational // "?") \(.queue_depth // "?") \(.in_order // "?")"' <<<"$st")
}

# Read back the devices of the latest wipe with this cipher: one "wipectl --json verify JOB
# --verify last" per device, all started at once. Each prints its final job object, whose
# elapsed_s is the daemon's clock from the verify request to the end of the read-back (a
# re-verification restarts the job's clock); with several devices, the longest. Every job must
# pass (it read back exactly what the wipe wrote), and have read the whole device.
verify_timing=
run_verify() {
        local cipher=$1 ids i id st t0 c0 a0 d0
        read -r -a ids <<<"${wipe_jobs[$cipher]:-}"
        ((${#ids[@]} == n_devices)) || die "verify: no wipe with $cipher to verify"
        bg_pids=()
        read_child_ticks
        c0=$child_ticks
        a0=$all_busy
        read_daemon_ns
        d0=$daemon_ns
        now
        t0=$now_us
        for i in "${!ids[@]}"; do
                "$wipectl" --socket "$sock" --json verify --verify last "${ids[$i]}" >"$work/ver$i.out" 2>"$work/ver$i.err" &
                bg_pids[i]=$!
        done
        for i in "${!ids[@]}"; do
                wait "${bg_pids[$i]}" || { cat "$work/ver$i.err" "$work/ver$i.out" >&2; die "wipectl verify ${ids[$i]} ($cipher) failed"; }
        done
        now
        read_daemon_ns
        read_child_ticks
        bg_pids=()
        wall_ns=$(((now_us - t0) * 1000))
        dcpu_ns=$((daemon_ns - d0))
        cpu_ns=$((dcpu_ns + $(ticks_ns $((child_ticks - c0)))))
        all_ns=$(ticks_ns $((all_busy - a0)))
        st=$(jq -s '{jobs: [.[].jobs[0]]}' "$work"/ver*.out) || die "verify: unreadable output"
        rm -f "$work"/ver*.out "$work"/ver*.err
        jq -e --argjson n "$n_devices" --argjson s "$size" \
                '(.jobs | length) == $n and all(.jobs[]; .state == "done" and .bytes_total == $s and .bytes_done == $s)' \
                <<<"$st" >/dev/null || die "wipectl verify --verify last ($cipher): unexpected result: $st"
        for id in "${ids[@]}"; do
                "$wipectl" --socket "$sock" --json report "$id" |
                        jq -e --argjson s "$size" '.verification | .mode == "last" and .result == "passed" and .coverage_bytes == $s' \
                        >/dev/null || die "job $id: the report does not record a passed read-back of $size bytes"
        done
        bytes=$((n_devices * size))
        ns=$(jq '[.jobs[].elapsed_s] | max * 1e9 | floor' <<<"$st")
        ((ns > 0)) || die "verify: no elapsed_s in $st"
        verify_timing="the jobs' own elapsed_s (daemon clock, from the verify request to the end of the read-back)"
}

# Start one writer per device in the background ("$1" is a function taking the device), wait for
# all, check each wrote what it should. The CPU is that of the whole process tree of each writer.
run_parallel() {
        local fn=$1 expect=$2 i t0 c0 a0 got
        bg_pids=()
        read_child_ticks
        c0=$child_ticks
        a0=$all_busy
        now
        t0=$now_us
        for i in "${!loops[@]}"; do
                "$fn" "${loops[$i]}" >"$work/par$i.out" 2>"$work/par$i.err" &
                bg_pids[i]=$!
        done
        for i in "${!loops[@]}"; do
                wait "${bg_pids[$i]}" || { cat "$work/par$i.err" >&2; die "$fn ${loops[$i]} failed"; }
        done
        now
        read_child_ticks
        bg_pids=()
        ns=$(((now_us - t0) * 1000))
        wall_ns=$ns
        cpu_ns=$(ticks_ns $((child_ticks - c0)))
        all_ns=$(ticks_ns $((all_busy - a0)))
        dcpu_ns=
        for i in "${!loops[@]}"; do
                # dd's summary line: "N bytes (...) copied, ..."
                got=$(awk '/bytes .* copied/ { n = $1 } END { printf "%.0f", n }' "$work/par$i.err")
                [[ $fn == shred_one ]] && got=$expect
                ((got == expect)) || { cat "$work/par$i.err" >&2; die "$fn ${loops[$i]}: wrote $got bytes, expected $expect"; }
        done
        bytes=$((n_devices * expect))
}

dd_urandom_one() {
        dd if=/dev/urandom of="$1" bs=1M count=$((urandom_size / mib)) oflag=direct
}

openssl_one() {
        local key
        key=$(openssl rand -hex 16) || return 1
        # openssl dies of SIGPIPE when head has had enough: only head's and dd's status count.
        openssl enc -aes-128-ctr -K "$key" -iv 00000000000000000000000000000000 -in /dev/zero 2>/dev/null |
                head -c "$size" | dd of="$1" bs=1M iflag=fullblock oflag=direct
        local s=("${PIPESTATUS[@]}")
        [[ ${s[1]} -eq 0 && ${s[2]} -eq 0 ]]
}

shred_one() {
        shred -n1 -s "$size" "$1"
}

# nwipe, one process for all devices (it wipes them in parallel threads), its PRNG stream method,
# one round, no verification, no blanking pass, no GUI; stopped after --nwipe-seconds. Its rate is
# the bytes it passed to write() (/proc/PID/io wchar: nwipe writes through the page cache) over the
# time between two samples, the first 1 s after it started (past its set-up), the last just before
# it is stopped; its CPU is its own over the same interval (/proc/PID/stat).
nwipe_prng=
nwipe_sample() {
        local pid=$1 k v a w=
        { read -r -a a <"/proc/$pid/stat"; } 2>/dev/null || return 1
        [[ ${a[2]} != Z ]] || return 1         # exited, not yet reaped
        { while read -r k v; do
                if [[ $k == wchar: ]]; then
                        w=$v
                fi
        done <"/proc/$pid/io"; } 2>/dev/null
        [[ -n $w ]] || return 1
        s_ticks=$((a[13] + a[14]))
        read_child_ticks
        now
        s_w=$w
        s_all=$all_busy
        s_us=$now_us
}

run_nwipe() {
        local args expect got pid t0 i d w0 k0 u0 a0 w1 k1 u1 a1 stopped=false
        [[ -n $nwipe_bin ]] || die "internal error: no nwipe"
        args=(--autonuke --nogui --method=random --rounds=1 --verify=off --noblank --nowait
                --logfile="$work/nwipe.log")
        # Never without devices: nwipe would then enumerate and wipe every disk of the machine.
        ((${#loops[@]} > 0)) || die "internal error: nwipe without devices"
        for d in "${loops[@]}"; do
                [[ $d =~ ^/dev/loop[0-9]+$ ]] || die "nwipe: \"$d\" is not one of our loop devices"
        done
        guard
        expect=$(printf '%s\n' "$nwipe_bin" "${args[@]}" "${loops[@]}")
        rm -f "$work/nwipe.log"
        (cd "$work" && exec "$nwipe_bin" "${args[@]}" "${loops[@]}") </dev/null >"$work/nwipe.out" 2>&1 &
        pid=$!
        bg_pids=("$pid")
        now
        t0=$now_us
        # The subshell execs nwipe: once it has, its command line must be exactly ours.
        for ((i = 0; i < 200; i++)); do
                got=$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null)
                [[ $got == "$nwipe_bin"$'\n'* ]] && break
                sleep 0.01
        done
        if [[ $got != "$expect" ]]; then
                kill -KILL "$pid" 2>/dev/null
                die "nwipe's command line is not what was started:"$'\n'"$got"
        fi
        sleep 1
        nwipe_sample "$pid" || { cat "$work/nwipe.out" "$work/nwipe.log" >&2 2>/dev/null; die "nwipe ended at start-up (output above)"; }
        w0=$s_w k0=$s_ticks u0=$s_us a0=$s_all
        w1=$w0 k1=$k0 u1=$u0 a1=$a0
        while :; do
                sleep 0.25
                now
                ((now_us - t0 >= nwipe_seconds * 1000000)) && break
                nwipe_sample "$pid" || break     # it finished by itself
                ((s_w >= w1)) || break
                w1=$s_w k1=$s_ticks u1=$s_us a1=$s_all
        done
        if kill -0 "$pid" 2>/dev/null; then
                nwipe_sample "$pid" && ((s_w >= w1)) && { w1=$s_w k1=$s_ticks u1=$s_us a1=$s_all; }
                kill -TERM "$pid" 2>/dev/null
                stopped=true
        fi
        for ((i = 0; i < 150; i++)); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        bg_pids=()
        ((u1 - u0 >= 500000)) || die "nwipe: less than 0.5 s of writing to measure (--nwipe-seconds, --size)"
        bytes=$((w1 - w0))
        ns=$(((u1 - u0) * 1000))
        wall_ns=$ns
        cpu_ns=$(ticks_ns $((k1 - k0)))
        all_ns=$(ticks_ns $((a1 - a0)))
        dcpu_ns=
        ((bytes > 0)) || { cat "$work/nwipe.log" >&2; die "nwipe wrote nothing"; }
        if [[ -z $nwipe_prng ]]; then
                nwipe_prng=$(awk -F'= *' '/ prng *=/ { print $2; exit }' "$work/nwipe.log" 2>/dev/null)
                [[ -n $nwipe_prng ]] || nwipe_prng="?"
        fi
        $stopped || say "nwipe finished by itself before --nwipe-seconds (a larger --size gives a longer sample)"
}

# --- status latency ------------------------------------------------------------------------------

# Jobs ids -> wait until none of them runs any more (cancelling them first).
finish_jobs() {
        local id i
        for id in "$@"; do
                "$wipectl" --socket "$sock" cancel "$id" >/dev/null 2>&1
        done
        for ((i = 0; i < 600; i++)); do
                "$wipectl" --socket "$sock" --json status "$@" 2>/dev/null |
                        jq -e 'all(.jobs[]; .state != "running" and .state != "flushing")' >/dev/null && return 0
                sleep 0.1
        done
        die "jobs $* still running 60 s after being cancelled"
}

# Submit a random wipe of all devices (cipher auto, --verify none) without waiting; the job ids
# into $probe_ids.
probe_submit() {
        guard
        probe_ids=$("$wipectl" --socket "$sock" --json wipe --yes --no-wait --verify none "${loops[@]}" |
                jq -r '[.jobs[].id] | join(" ")') || die "wipectl wipe --no-wait failed"
        local a
        read -r -a a <<<"$probe_ids"
        ((${#a[@]} == n_devices)) || die "wipectl wipe --no-wait: expected $n_devices job ids, got \"$probe_ids\""
}

# How many of the jobs in a status reply are "running".
count_running() {
        local str=${1//[[:space:]]/} rest
        rest=${str//\"state\":\"running\"/}
        echo $(((${#str} - ${#rest}) / 17))
}

# Time $status_requests status requests, each while every device's wipe is running; when the
# wipe ends first, a new one is submitted and the sample that saw it end is dropped.
# 1. "wipectl --json status JOB..." as a user or a monitoring script would: process start-up,
#    connect, request, reply and printing the JSON (to a file on tmpfs), timed around the process.
# 2. With perl: one connection, {"op":"status","jobs":[...]} request and reply line, timed in the
#    client: the daemon's own answer time plus the socket round trip, no process start-up.
# 3. For scale, "wipectl --version" after each wipectl status request, under the same load: the
#    process start-up alone, without the daemon.
# Latencies in ms into $work/lat-wipectl, $work/lat-raw, $work/lat-spawn.
status_probe() {
        local got=0 rounds=0 t0 body id n running ids_json
        : >"$work/lat-wipectl"
        : >"$work/lat-raw"
        : >"$work/lat-spawn"
        while ((got < status_requests)); do
                ((rounds++ < 200)) || die "status latency: the wipes end too fast to take $status_requests samples"
                probe_submit
                while ((got < status_requests)); do
                        now
                        t0=$now_us
                        # shellcheck disable=SC2086
                        "$wipectl" --socket "$sock" --json status $probe_ids >"$work/status.json" 2>&1
                        n=$?
                        now
                        ((n == 0)) || { cat "$work/status.json" >&2; die "wipectl status failed during a wipe"; }
                        read -r -d '' body <"$work/status.json"
                        running=$(count_running "$body")
                        ((running == n_devices)) || break
                        echo "$((now_us - t0))" >>"$work/lat-wipectl"
                        got=$((got + 1))
                        # For scale, under the same load: the process start-up alone.
                        now
                        t0=$now_us
                        "$wipectl" --version >/dev/null 2>&1
                        now
                        echo "$((now_us - t0))" >>"$work/lat-spawn"
                done
                # shellcheck disable=SC2086
                finish_jobs $probe_ids
        done
        if $have_perl; then
                got=0
                rounds=0
                while ((got < status_requests)); do
                        ((rounds++ < 200)) || die "status latency: the wipes end too fast to take $status_requests samples"
                        probe_submit
                        ids_json=$(tr ' ' ',' <<<"$probe_ids")
                        # Prints one latency (us) per request that saw all jobs running; stops at the
                        # first that did not.
                        perl -MIO::Socket::UNIX -MTime::HiRes=time -e '
                                my ($path, $n, $ids, $want) = @ARGV;
                                my $s = IO::Socket::UNIX->new(Peer => $path) or die "connect $path: $!\n";
                                $s->autoflush(1);
                                for my $i (1 .. $n) {
                                        my $t0 = time;
                                        print $s "{\"id\":$i,\"op\":\"status\",\"jobs\":[$ids]}\n";
                                        my $line = <$s>;
                                        my $t1 = time;
                                        defined $line or die "connection closed\n";
                                        $line =~ /"ok"\s*:\s*true/ or die "status failed: $line";
                                        my $r = () = $line =~ /"state"\s*:\s*"running"/g;
                                        last if $r != $want;
                                        printf "%.0f\n", ($t1 - $t0) * 1e6;
                                }' "$sock" "$((status_requests - got))" "$ids_json" "$n_devices" >"$work/lat-raw.part" ||
                                die "status latency: the perl client failed"
                        cat "$work/lat-raw.part" >>"$work/lat-raw"
                        got=$(wc -l <"$work/lat-raw")
                        # shellcheck disable=SC2086
                        finish_jobs $probe_ids
                done
        fi
}

# p50 p99 max (ms, two decimals) of a file of latencies in us: nearest rank.
percentiles() {
        sort -n "$1" | awk '{ a[NR] = $1 } END {
                if (NR == 0) { print "- - - 0"; exit }
                p50 = a[int((NR * 50 + 99) / 100)]; p99 = a[int((NR * 99 + 99) / 100)]
                printf "%.2f %.2f %.2f %d\n", p50 / 1000, p99 / 1000, a[NR] / 1000, NR }'
}

# --- the tests -----------------------------------------------------------------------------------

# Each verify_* reads back what the wipe_* just before it wrote; the zero wipe overwrites a random
# one, so that a zero wipe that did not write shows. wipe_aes_rot is the aes-128-ctr wipe with the
# devices' rotational flag at 1 (all other rows: 0); it comes after the last verification, so that
# it overwrites nothing a verification still reads.
all_writers=(fio2 fio4 fio32 wipe_aes wipe_chacha wipe_zero)
$do_rot && all_writers+=(wipe_aes_rot)
all_writers+=(urandom openssl)
$have_shred && all_writers+=(shred)
[[ -n $nwipe_bin ]] && all_writers+=(nwipe)
all_readers=()
$do_read && all_readers=(fioread2 fioread4 fioread32 verify_aes verify_chacha)

# The order within one repetition.
tests_for() {
        local n=$1 t=(fio2 fio4 fio32)
        $do_read && t+=(fioread2 fioread4 fioread32)
        t+=(wipe_aes)
        $do_read && t+=(verify_aes)
        t+=(wipe_zero wipe_chacha)
        $do_read && t+=(verify_chacha)
        $do_rot && t+=(wipe_aes_rot)
        t+=(urandom openssl)
        $have_shred && t+=(shred)
        [[ -n $nwipe_bin && $nwipe_counts == *" $n "* ]] && t+=(nwipe)
        echo "${t[*]}"
}

declare -A label=(
        [fio2]="fio write zeros, iodepth 2"
        [fio4]="fio write zeros, iodepth 4"
        [fio32]="fio write zeros, iodepth 32"
        [fioread2]="fio read, iodepth 2"
        [fioread4]="fio read, iodepth 4"
        [fioread32]="fio read, iodepth 32"
        [wipe_aes]="wipectl wipe random, aes-128-ctr"
        [wipe_chacha]="wipectl wipe random, chacha20"
        [wipe_zero]="wipectl wipe --method zero"
        [wipe_aes_rot]="wipectl wipe random, aes, rotational=1"
        [verify_aes]="wipectl verify last, aes-128-ctr"
        [verify_chacha]="wipectl verify last, chacha20"
        [urandom]="dd if=/dev/urandom"
        [openssl]="openssl enc aes-128-ctr | dd"
        [shred]="shred -n1"
        [nwipe]="nwipe random"
)
((urandom_size < size)) && label[urandom]="dd if=/dev/urandom ($((urandom_size / mib)) MiB/dev)"

run_one() {
        case $1 in
        fio2) run_fio 2 ;;
        fio4) run_fio 4 ;;
        fio32) run_fio 32 ;;
        fioread2) run_fio 2 read ;;
        fioread4) run_fio 4 read ;;
        fioread32) run_fio 32 read ;;
        wipe_aes) run_wipe aes-128-ctr ;;
        wipe_chacha) run_wipe chacha20 ;;
        wipe_zero) run_wipe zero ;;
        wipe_aes_rot) run_wipe aes-128-ctr 1 ;;
        verify_aes) run_verify aes-128-ctr ;;
        verify_chacha) run_verify chacha20 ;;
        urandom) run_parallel dd_urandom_one "$urandom_size" ;;
        openssl) run_parallel openssl_one "$size" ;;
        shred) run_parallel shred_one "$size" ;;
        nwipe) run_nwipe ;;
        esac
}

mbps() {
        awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.0f", b / (ns / 1e9) / 1e6 }'
}

# median FORMAT VALUE...
median() {
        local fmt=$1
        shift
        printf '%s\n' "$@" | sort -g | awk -v f="$fmt" '{ a[NR] = $1 } END {
                if (NR % 2) printf f "\n", a[(NR + 1) / 2]; else printf f "\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B with two decimals.
ratio() {
        awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'
}

# --- machine information -------------------------------------------------------------------------

cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
[[ -n $cpu_model ]] || cpu_model=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ { print $2; exit }')
aes_flag=no
grep -qw aes /proc/cpuinfo && aes_flag=yes     # x86 "flags", arm64 "Features"
git_commit=$(git -C "$top" rev-parse HEAD 2>/dev/null || true)
git_dirty=null
[[ -n $git_commit ]] && { git -C "$top" diff --quiet HEAD 2>/dev/null && git_dirty=false || git_dirty=true; }
run_date=$(date --iso-8601=seconds)

nwipe_version=
[[ -n $nwipe_bin ]] && nwipe_version=$(dpkg-query -W -f '${Package} ${Version}' nwipe 2>/dev/null || "$nwipe_bin" --version 2>/dev/null | head -n 1)
fio_version=$(fio --version)
openssl_version=$(openssl version | awk '{ print $1, $2 }')
wiped_version=$("$wiped" --version 2>/dev/null | head -n 1)
echo "machine:  $(nproc) CPUs, ${cpu_model:-unknown CPU} (AES instructions: $aes_flag), $(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM"
echo "kernel:   $(uname -srm)"
echo "source:   ${git_commit:-not a git checkout}$([[ $git_dirty == true ]] && echo " with uncommitted changes") ($top), $run_date"
echo "tools:    $fio_version, $openssl_version${nwipe_version:+, $nwipe_version}, $wiped_version from $build"
echo "wiped:    $(jq -r '.daemon | "\(.threads) threads, \(.buffers // "?") buffers per thread x \((.io_size // 0) / 1048576) MiB (buffer memory \((.buffer_memory // 0) / 1048576 | floor) MiB), queue depth \(if .queue_depth == 0 then "from topology" else (.queue_depth // "?") end), rate limit \(if (.max_rate // 0) == 0 then "none" else "\(.max_rate) B/s" end), auto cipher \(.cipher_auto)"' <<<"$version_json")"
echo "          wiped --threads $threads${daemon_args[*]:+ ${daemon_args[*]}}"
# How busy the CPUs are with other work right now (1 s sample): other work makes figures noisy.
cpu_ticks() {
        awk '/^cpu / { busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, busy + $5 + $6 }' /proc/stat
}
read -r busy0 total0 < <(cpu_ticks)
sleep 1
read -r busy1 total1 < <(cpu_ticks)
busy=$(awk -v b=$((busy1 - busy0)) -v t=$((total1 - total0)) 'BEGIN { printf "%.0f", (t > 0 ? 100 * b / t : 0) }')
echo "load:     CPUs ${busy}% busy over 1 s before the runs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "plan:     device counts ${counts[*]} x $((size / mib)) MiB loop devices over tmpfs files, $reps interleaved repetitions," \
        "queue/rotational 0$($do_rot && echo " (and 1 for one aes-128-ctr row)")"

# --- the keystream: how fast one core makes it, and which backend the daemon uses ---------------
#
# keystream-speed prints "CIPHER BACKEND N MB/s" per backend and "chosen CIPHER BACKEND" per
# cipher; an older one "CIPHER N MB/s" alone (its only backend, OpenSSL's). The daemon says which
# backend it uses in version's "keystream" object ({"aes-128-ctr": {"backend": ..., "chosen_by":
# ..., "mbps": {...}}, ...}) when it has one. The keystream's own cost, for the target of the
# random pass, is 2^30 / 10^6 / MB/s of the backend the daemon uses, by keystream-speed's figure.
ciphers=(aes-128-ctr chacha20)
declare -A ks_mbps=() ks_chosen=() ks_backends=() ks_used=() ks_used_from=() ks_cost=()
ks_json=null
ks_daemon=$(jq -c '.daemon.keystream // .keystream // empty' <<<"$version_json")
ks=$build/tests/bench/keystream-speed
ks_note=
ks_share=
if [[ -x $ks ]]; then
        # Its figures are per second of its own CPU time, so other work does not lower them; how
        # much of one CPU it had is still noted.
        read_child_ticks
        c0=$child_ticks
        now
        t0=$now_us
        if ks_out=$(timeout 300 "$ks" 2>&1); then
                now
                read_child_ticks
                ks_share=$(awk -v t=$((child_ticks - c0)) -v hz="$clk_tck" -v us=$((now_us - t0)) \
                        'BEGIN { printf "%.2f", (us > 0 ? t / hz / (us / 1e6) : 0) }')
                while read -r a b c d; do
                        if [[ $a == chosen && -n $b && -n $c ]]; then
                                ks_chosen[$b]=$c
                        elif [[ $c =~ ^[0-9.]+$ && $d == MB/s* ]]; then
                                ks_mbps[$a,$b]=$c
                                ks_backends[$a]+="${ks_backends[$a]:+ }$b"
                        elif [[ $b =~ ^[0-9.]+$ && $c == MB/s* ]]; then
                                ks_mbps[$a,openssl]=$b
                                ks_backends[$a]+="${ks_backends[$a]:+ }openssl"
                        fi
                done <<<"$ks_out"
        else
                ks_note="keystream-speed failed: $(tail -n 1 <<<"$ks_out")"
        fi
else
        ks_note="no $ks in this build: the random pass's target is not judged"
fi
for c in "${ciphers[@]}"; do
        b=
        if [[ -n $ks_daemon ]]; then
                b=$(jq -r --arg c "$c" '.[$c].backend // empty' <<<"$ks_daemon")
                [[ -n $b ]] && ks_used_from[$c]="the daemon's choice, $(jq -r --arg c "$c" '.[$c].chosen_by // "?"' <<<"$ks_daemon")"
        fi
        if [[ -z $b && -n ${ks_chosen[$c]:-} ]]; then
                b=${ks_chosen[$c]}
                ks_used_from[$c]="keystream-speed's choice; the daemon does not say"
        fi
        if [[ -z $b && -n ${ks_backends[$c]:-} && ${ks_backends[$c]} != *" "* ]]; then
                b=${ks_backends[$c]}
                ks_used_from[$c]="the only backend; the daemon does not say"
        fi
        ks_used[$c]=$b
        v=${ks_mbps[$c,$b]:-}
        if [[ -z $v && -n $b && -n $ks_daemon ]]; then
                v=$(jq -r --arg c "$c" --arg b "$b" '.[$c].mbps[$b] // empty' <<<"$ks_daemon")
                [[ -n $v ]] && ks_used_from[$c]+=", the daemon's MB/s"
        fi
        [[ -n $v ]] && ks_cost[$c]=$(awk -v m="$v" 'BEGIN { printf "%.4f", 1073.741824 / m }')
done
if [[ -n $ks_daemon ]]; then
        echo "keystream: the daemon uses $(jq -r '[to_entries[] | "\(.key) \(.value.backend // "?") (\(.value.chosen_by // "?")\(if .value.mbps then ": " + ([.value.mbps | to_entries[] | "\(.key) \(.value)"] | join(", ")) + " MB/s" else "" end))"] | join("; ")' <<<"$ks_daemon")"
else
        echo "keystream: the daemon does not report its backends (no \"keystream\" in wipectl --json version)"
fi
for c in "${ciphers[@]}"; do
        l=
        for b in ${ks_backends[$c]:-}; do
                l+="${l:+, }$b ${ks_mbps[$c,$b]} MB/s"
        done
        [[ -n $l ]] || continue
        printf '  keystream-speed %-11s %s%s; ' "$c" "$l" "${ks_chosen[$c]:+ (it chose ${ks_chosen[$c]})}"
        if [[ -n ${ks_cost[$c]:-} ]]; then
                echo "used: ${ks_used[$c]} (${ks_used_from[$c]}), $(printf '%.3f' "${ks_cost[$c]}") s/GiB"
        else
                echo "used: unknown"
        fi
done
[[ -n $ks_note ]] && echo "  $ks_note"
[[ -n $ks_share ]] && awk -v s="$ks_share" 'BEGIN { exit !(s < 0.9) }' &&
        echo "  keystream-speed had $(awk -v s="$ks_share" 'BEGIN { printf "%.0f", s * 100 }') % of one CPU over its run (other work took the rest; its MB/s are per CPU second)"
if $cipher_speed; then
        declare -A ossl=()
        for c in "${ciphers[@]}"; do
                v=$(openssl speed -evp "$c" -bytes 1048576 -seconds 1 2>/dev/null | tail -n 1 | awk '{ print $NF }')
                if [[ $v =~ ^([0-9.]+)k$ ]]; then
                        ossl[$c]=$(awk -v k="${BASH_REMATCH[1]}" 'BEGIN { printf "%.0f", k / 1000 }')
                        printf '  openssl speed -evp %-11s %6s MB/s on one core (1 MiB blocks)' "$c" "${ossl[$c]}"
                        [[ -n ${ks_used[$c]:-} && -n ${ks_mbps[$c,${ks_used[$c]}]:-} ]] &&
                                printf '; wiped (%s) %sx' "${ks_used[$c]}" "$(ratio "${ks_mbps[$c,${ks_used[$c]}]}" "${ossl[$c]}")"
                        echo
                else
                        echo "  openssl speed -evp $c: no figure (got \"$v\")"
                fi
        done
fi
ks_json=$(
        for c in "${ciphers[@]}"; do
                for b in ${ks_backends[$c]:-}; do
                        printf '%s %s %s\n' "$c" "$b" "${ks_mbps[$c,$b]}"
                done
        done | jq -R -s --argjson daemon "${ks_daemon:-null}" \
                --argjson chosen "$(for c in "${!ks_chosen[@]}"; do printf '%s %s\n' "$c" "${ks_chosen[$c]}"; done |
                        jq -R -s '[split("\n")[] | select(length > 0) | split(" ") | {(.[0]): .[1]}] | add // {}')" \
                --argjson used "$(for c in "${ciphers[@]}"; do
                        printf '%s\t%s\t%s\t%s\n' "$c" "${ks_used[$c]:-}" "${ks_cost[$c]:-}" "${ks_used_from[$c]:-}"; done |
                        jq -R -s '[split("\n")[] | select(length > 0) | split("\t") |
                                {(.[0]): {backend: (if .[1] == "" then null else .[1] end),
                                          cost_s_per_gib: (if .[2] == "" then null else (.[2] | tonumber) end),
                                          from: (if .[3] == "" then null else .[3] end)}}] | add')" \
                --arg share "$ks_share" \
                '{keystream_speed_mbps: ([split("\n")[] | select(length > 0) | split(" ") | {(.[0]): {(.[1]): (.[2] | tonumber)}}]
                        | reduce .[] as $x ({}; . * $x)),
                  keystream_speed_chosen: $chosen, keystream_speed_cpu_share: ($share | tonumber? // null),
                  daemon: $daemon, used: $used}'
) || die "internal error: keystream JSON"
if $cipher_speed; then
        ks_json=$(jq --argjson o "$(for c in "${!ossl[@]}"; do printf '%s %s\n' "$c" "${ossl[$c]}"; done |
                jq -R -s '[split("\n")[] | select(length > 0) | split(" ") | {(.[0]): (.[1] | tonumber)}] | add // {}')" \
                '. + {openssl_speed_mbps: $o}' <<<"$ks_json")
fi
echo
((busy > 10)) && say "warning: the CPUs were ${busy}% busy before the runs: something else is running; expect noise"

# --- the runs, one device count after the other --------------------------------------------------

# The JSON of one row of a count's table (for $work/rows.jsonl): its figures per repetition and
# medians. $1: the test. Reads raw, wall, cpu, dcpu, acpu, pol, M, C, D, A, BEST, BESTR.
row_json() {
        local row=$1 kind=write ref=${BEST[$n]} tool rot=0 cipher=null
        case $row in
        fioread*|verify_*) kind="read"; ref=${BESTR[$n]} ;;
        esac
        case $row in
        fio*) tool="fio" ;;
        wipe_*|verify_*) tool="wiped" ;;
        urandom) tool="dd" ;;
        *) tool=$row ;;
        esac
        case $row in
        *_aes*) cipher='"aes-128-ctr"' ;;
        *_chacha) cipher='"chacha20"' ;;
        esac
        [[ $row == wipe_aes_rot ]] && rot=1
        jq -n -c --arg test "$row" --arg lbl "${label[$row]}" --arg kind "$kind" --arg tool "$tool" \
                --argjson cipher "$cipher" --argjson rot "$rot" --argjson ref "$ref" \
                --arg raw "${raw[$row]}" --arg wall "${wall[$row]}" --arg cpu "${cpu[$row]}" --arg dcpu "${dcpu[$row]:-}" \
                --arg acpu "${acpu[$row]}" --arg pol "${pol[$row]:-}" --arg m "${M[$n,$row]}" --arg c "${C[$n,$row]}" \
                --arg d "${D[$n,$row]:-}" --arg a "${A[$n,$row]}" '
                def nums: [split(" ")[] | select(length > 0) | tonumber];
                def num: if . == "" then null else tonumber end;
                {test: $test, "label": $lbl, kind: $kind, tool: $tool, cipher: $cipher, rotational: $rot,
                 gbps_median: ($m | tonumber / 1000), gbps_reps: ($raw | nums | map(. / 1000)),
                 ratio: (if $ref > 0 then (($m | tonumber) / $ref * 1000 | round / 1000) else null end),
                 ratio_to: (if $kind == "write" then "fio best write" else "fio best read" end),
                 cpu_s_per_gib: ($c | num), cpu_s_per_gib_reps: ($cpu | nums),
                 daemon_cpu_s_per_gib: ($d | num), daemon_cpu_s_per_gib_reps: (if $dcpu == "" then null else ($dcpu | nums) end),
                 all_cpus_s_per_gib: ($a | num), all_cpus_s_per_gib_reps: ($acpu | nums),
                 wall_gbps_reps: (if $tool == "wiped" then ($wall | nums | map(. / 1000)) else null end),
                 policy: (if $pol == "" then null else [$pol | split(" ")[] | split(":") |
                         {device: .[0], policy: (.[1] | split("/")[0]), queue_depth: (.[1] | split("/")[1] | tonumber? // null)}] end)}'
}

# p50 p99 max n (ms; "- - - 0" for none) -> a JSON object, or null.
lat_json() {
        jq -n --arg a "$1" --arg b "$2" --arg c "$3" --arg d "$4" \
                'if $d == "0" then null else {p50: ($a | tonumber), p99: ($b | tonumber), max: ($c | tonumber), n: ($d | tonumber)} end'
}

# A policy string (DEV:POLICY/QD ...) in a few words: "all N shared, queue depth 8" when the
# devices agree, else the list.
policy_text() {
        local p=$1 k
        k=$(tr ' ' '\n' <<<"$p" | cut -d: -f2 | sort -u)
        if [[ $(wc -l <<<"$k") -eq 1 && -n $k ]]; then
                echo "${k%/*} (queue depth ${k#*/}) on all $(wc -w <<<"$p")"
        else
                echo "$p"
        fi
}

declare -A M=() C=() D=() A=() BEST=() BESTR=() LAT=() HWM=()   # per count, for the summary
run_start=${EPOCHREALTIME/./}
# The daemon's peak RSS is reset at the start of each count (clear_refs 5, Linux 4.0), so that
# VmHWM at its end is the peak of that count alone.
hwm_start=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$daemon_pid/status")
hwm_per_count=true
: >"$work/counts.jsonl"

for n in "${counts[@]}"; do
        say "=== $n device(s) x $((size / mib)) MiB ==="
        count_start=${EPOCHREALTIME/./}
        make_devices "$n"
        guard
        dio=
        for d in "${loops[@]}"; do
                dio+=" $(cat "/sys/block/${d#/dev/}/loop/dio" 2>/dev/null || echo '?')"
        done
        read -r -a tests <<<"$(tests_for "$n")"
        declare -A raw=() wall=() cpu=() dcpu=() acpu=() pol=()
        echo 5 >"/proc/$daemon_pid/clear_refs" 2>/dev/null || hwm_per_count=false

        say "warm-up: one fio pass over each device (not counted)"
        guard
        run_fio 32

        for ((r = 1; r <= reps; r++)); do
                for t in "${tests[@]}"; do
                        guard
                        policy=
                        run_one "$t"
                        v=$(mbps "$bytes" "$ns")
                        raw[$t]+=" $v"
                        wall[$t]+=" $(mbps "$bytes" "$wall_ns")"
                        cpu[$t]+=" $(cpu_per_gib "$cpu_ns" "$bytes")"
                        acpu[$t]+=" $(cpu_per_gib "$all_ns" "$bytes")"
                        [[ -n $dcpu_ns ]] && dcpu[$t]+=" $(cpu_per_gib "$dcpu_ns" "$bytes")"
                        [[ -n $policy ]] && pol[$t]=$policy
                        say "rep $r/$reps, $n device(s): ${label[$t]}: $v MB/s, $(cpu_per_gib "$cpu_ns" "$bytes") CPU s/GiB" \
                                "${dcpu_ns:+(wiped $(cpu_per_gib "$dcpu_ns" "$bytes")) }($(cpu_per_gib "$all_ns" "$bytes") all CPUs)"
                done
        done

        say "status latency: $status_requests requests per client while all $n device(s) are being wiped"
        status_probe
        read -r lw50 lw99 lwmax lwn < <(percentiles "$work/lat-wipectl")
        read -r lr50 lr99 lrmax lrn < <(percentiles "$work/lat-raw")
        read -r ls50 ls99 lsmax lsn < <(percentiles "$work/lat-spawn")
        hwm=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$daemon_pid/status")
        rss=$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$daemon_pid/status")
        HWM[$n]=$hwm
        count_end=${EPOCHREALTIME/./}

        # --- the table of this count ---
        for t in "${tests[@]}"; do
                # shellcheck disable=SC2086
                M[$n,$t]=$(median "%.0f" ${raw[$t]})
                # shellcheck disable=SC2086
                C[$n,$t]=$(median "%.3f" ${cpu[$t]})
                # shellcheck disable=SC2086
                [[ -n ${dcpu[$t]:-} ]] && D[$n,$t]=$(median "%.3f" ${dcpu[$t]})
                # shellcheck disable=SC2086
                A[$n,$t]=$(median "%.3f" ${acpu[$t]})
        done
        bt=
        b=0
        for t in fio2 fio4 fio32; do
                ((M[$n,$t] > b)) && { b=${M[$n,$t]}; bt=$t; }
        done
        BEST[$n]=$b
        brt=
        br=0
        if $do_read; then
                for t in fioread2 fioread4 fioread32; do
                        ((M[$n,$t] > br)) && { br=${M[$n,$t]}; brt=$t; }
                done
        fi
        BESTR[$n]=$br
        LAT[$n]="$lw50 $lw99 $lwmax $lwn $lr50 $lr99 $lrmax $lrn"

        if ((n > 1)); then
                echo "=== $n devices x $((size / mib)) MiB, written (read) at once: aggregate MB/s (${loops[*]}, direct I/O:$dio)"
        else
                echo "=== 1 device x $((size / mib)) MiB (${loops[*]}, direct I/O:$dio)"
        fi
        printf '%-38s %7s %7s  %9s %9s %9s   %s\n' "writer" "MB/s" "x fio" "CPU s/GiB" "wiped" "all CPUs" "raw MB/s, rep 1..$reps"
        for t in "${all_writers[@]}"; do
                [[ -n ${M[$n,$t]:-} ]] || continue
                l=${label[$t]}
                [[ $t == nwipe ]] && l="nwipe random (${nwipe_prng:-?}), ${nwipe_seconds} s"
                m=
                [[ $t == "$bt" ]] && m="  <- fio best: 1.00x reference"
                printf '%-38s %7s %6sx  %9s %9s %9s   %s%s\n' "$l" "${M[$n,$t]}" "$(ratio "${M[$n,$t]}" "$b")" "${C[$n,$t]}" \
                        "${D[$n,$t]:--}" "${A[$n,$t]}" "${raw[$t]# }" "$m"
        done
        $have_shred || printf '%-38s %7s\n' "shred -n1" "skipped ($($do_shred && echo "shred not found" || echo "--no-shred"))"
        if [[ -z $nwipe_bin ]]; then
                printf '%-38s %7s\n' "nwipe" "skipped ($($do_nwipe && echo "nwipe not found" || echo "--no-nwipe"))"
        elif [[ $nwipe_counts != *" $n "* ]]; then
                printf '%-38s %7s\n' "nwipe" "skipped (only at --nwipe-counts${nwipe_counts% })"
        fi
        if $do_read; then
                printf '%-38s %7s %7s  %9s %9s %9s   %s\n' "reader" "MB/s" "x read" "CPU s/GiB" "wiped" "all CPUs" "raw MB/s, rep 1..$reps"
                for t in "${all_readers[@]}"; do
                        m=
                        [[ $t == "$brt" ]] && m="  <- fio best read: 1.00x reference"
                        printf '%-38s %7s %6sx  %9s %9s %9s   %s%s\n' "${label[$t]}" "${M[$n,$t]}" "$(ratio "${M[$n,$t]}" "$br")" \
                                "${C[$n,$t]}" "${D[$n,$t]:--}" "${A[$n,$t]}" "${raw[$t]# }" "$m"
                done
        fi
        echo "policy wiped gave the devices (from each job's identity.rotational and queue_depth, and its \"started\" log line):"
        echo "  queue/rotational 0: $(policy_text "${pol[wipe_aes]}")"
        $do_rot && echo "  queue/rotational 1: $(policy_text "${pol[wipe_aes_rot]}")"
        echo "status latency, ms (p50 / p99 / max), while all $n device(s) were being wiped:"
        printf '  %-52s %6s / %6s / %6s  (%d requests)\n' "wipectl --json status JOB... (process start included)" "$lw50" "$lw99" "$lwmax" "$lwn"
        if $have_perl; then
                printf '  %-52s %6s / %6s / %6s  (%d requests)\n' "status request on one open connection (no start-up)" "$lr50" "$lr99" "$lrmax" "$lrn"
        else
                printf '  %-52s %s\n' "status request on one open connection" "skipped (perl with IO::Socket::UNIX, Time::HiRes not found)"
        fi
        printf '  %-52s %6s / %6s / %6s  (%d runs, same load)\n' "for scale: wipectl --version (start-up alone)" "$ls50" "$ls99" "$lsmax" "$lsn"
        echo "wiped memory: peak RSS (VmHWM) $($hwm_per_count && echo "of this count" || echo "so far") $hwm MiB, RSS now $rss MiB"
        echo "wipectl wipe rows by the wall clock around wipectl (start-up, 0.1 s polls), MB/s: aes-128-ctr${wall[wipe_aes]}, chacha20${wall[wipe_chacha]}, zero${wall[wipe_zero]}"
        awk -v s="$count_start" -v e="$count_end" 'BEGIN { printf "time for this device count: %.0f s\n\n", (e - s) / 1e6 }'

        # --- and its JSON ---
        for t in "${all_writers[@]}" "${all_readers[@]}"; do
                [[ -n ${M[$n,$t]:-} ]] && row_json "$t"
        done >"$work/rows.jsonl" || die "internal error: row JSON"
        jq -s -c --argjson n "$n" --argjson size "$size" --arg loops "${loops[*]}" --arg dio "${dio# }" \
                --arg bt "$bt" --argjson b "$b" --arg brt "$brt" --argjson br "$br" \
                --argjson lw "$(lat_json "$lw50" "$lw99" "$lwmax" "$lwn")" \
                --argjson lr "$($have_perl && lat_json "$lr50" "$lr99" "$lrmax" "$lrn" || echo null)" \
                --argjson ls "$(lat_json "$ls50" "$ls99" "$lsmax" "$lsn")" \
                --argjson hwm "$hwm" --argjson rss "$rss" --argjson hpc "$hwm_per_count" \
                --argjson secs "$(((count_end - count_start) / 1000000))" \
                '{devices: $n, size_bytes: $size, loop_devices: ($loops | split(" ")), direct_io: ($dio | split(" ")),
                  fio_best_write: {test: $bt, gbps: ($b / 1000)},
                  fio_best_read: (if $brt == "" then null else {test: $brt, gbps: ($br / 1000)} end),
                  rows: .,
                  status_latency_ms: {wipectl_status: $lw, one_connection: $lr, wipectl_version_startup: $ls},
                  rss_mib: {peak: $hwm, peak_is_this_count_alone: $hpc, now: $rss},
                  seconds: $secs}' "$work/rows.jsonl" >>"$work/counts.jsonl" || die "internal error: count JSON"

        unset raw wall cpu dcpu acpu pol
        stop_bg
        release_devices
done
run_end=${EPOCHREALTIME/./}
run_seconds=$(((run_end - run_start) / 1000000))

# --- notes and the summary -----------------------------------------------------------------------

echo "MB/s = 10^6 bytes/s, median of $reps interleaved runs; x fio = median / fio's best write median of that"
echo "  device count (readers: / fio's best read). CPU s/GiB: median of user+system CPU seconds per GiB written"
echo "  (read): for wipectl, the daemon's (all threads) plus wipectl's own; for the others, their whole process"
echo "  tree (getrusage of the reaped children); nwipe, its own process. wiped: the daemon's own CPU alone, from"
echo "  ${daemon_cpu_clock:-?}. The loop driver's kernel workers, which copy the data into tmpfs, are"
echo "  not counted there. all CPUs: the busy time of all CPUs of the machine (/proc/stat) per GiB: the loop"
echo "  workers included, and anything else that ran at the time."
echo "wipectl wipe rows: \"wipectl --json wipe --yes --verify none\" (all devices in one submit), timed by"
echo "  ${wipe_timing:-?}."
echo "  Every device's queue/rotational is 0 (wiped shares it between its workers) except in the row"
echo "  \"rotational=1\", the same aes-128-ctr wipe with the flag at 1 (one worker at a time, in order)."
$do_read && echo "wipectl verify rows: \"wipectl --json verify --verify last JOB\" of the wipe just before (one per device, at once), timed by ${verify_timing:-?}."
echo "dd, openssl and shred rows run one writer per device at once and are timed by the wall clock."
((urandom_size < size)) && echo "dd if=/dev/urandom wrote only the first $((urandom_size / mib)) MiB of each device (--urandom-size): rates, not times, compare."
[[ -n $nwipe_prng ]] && echo "nwipe: one process for the devices, --method=random (its PRNG stream), stopped after $nwipe_seconds s; MB/s = bytes it passed to write() (/proc/PID/io wchar, through the page cache) from 1 s after its start to its stop."
echo "status latency: each request is timed only while every device's random wipe is running (a new wipe is submitted"
echo "  when one ends). wipectl: the whole process, start-up + connect + request + reply + JSON out; one connection:"
echo "  the request/reply round trip alone (perl client); wipectl --version: the start-up alone, timed after each"
echo "  status request under the same load."
awk -v s="$run_seconds" -v b="$busy" 'BEGIN {
        printf "run time %d s (%.1f min).%s\n", s, s / 60, (b > 10 ? " The CPUs were " b "% busy with other work before the runs: figures are noisy." : "") }'
hwm_run=$(printf '%s\n' "$hwm_start" "${HWM[@]}" | sort -g | tail -n 1)
echo "wiped peak RSS over the whole run: $hwm_run MiB"
echo

# --- the targets (issue 16), each met or missed, also into $work/targets.jsonl ---
note=
((threads != 2)) && note=" (measured with --threads $threads; the targets are for 2)"
has_count() {
        [[ " ${counts[*]} " == *" $1 "* ]]
}
: >"$work/targets.jsonl"
n_met=0
n_missed=0
n_unmeasured=0
# judge TARGET DEVICES SUBJECT VALUE OP LIMIT: "met" or "missed" (or "not measured" when VALUE is
# empty), counted, and a JSON line for results.json.
judge() {
        local tg=$1 dev=$2 subj=$3 val=$4 op=$5 lim=$6 res
        if [[ -z $val || $val == - ]]; then
                res="not measured"
                n_unmeasured=$((n_unmeasured + 1))
        else
                res=$(awk -v a="$val" -v b="$lim" -v op="$op" 'BEGIN {
                        ok = (op == ">=" ? a >= b : op == "<=" ? a <= b : a < b); print (ok ? "met" : "missed") }')
                if [[ $res == met ]]; then
                        n_met=$((n_met + 1))
                else
                        n_missed=$((n_missed + 1))
                fi
        fi
        jq -n -c --arg tg "$tg" --arg dev "$dev" --arg subj "$subj" --arg val "$val" --arg op "$op" --arg lim "$lim" --arg res "$res" \
                '{target: $tg, devices: ($dev | tonumber? // null), subject: $subj,
                  value: ($val | tonumber? // null), op: $op, limit: ($lim | tonumber),
                  met: (if $res == "not measured" then null else $res == "met" end)}' >>"$work/targets.jsonl"
        judged=$res
}

echo "targets (issue 16)$note:"
# 1, 2: each cipher's random wipe against fio's best write, >= 0.95x at 1 device, >= 0.85x at 4, 8, 16.
echo "  random wipe / fio's best write >= 0.95x at 1 device, >= 0.85x at 4, 8 and 16 devices:"
for n in 1 4 8 16; do
        lim=0.85
        ((n == 1)) && lim=0.95
        if ! has_count "$n"; then
                judge "random wipe vs fio write" "$n" "not in --counts" "" ">=" "$lim"
                printf '    %2d dev: not measured (not in --counts)\n' "$n"
                continue
        fi
        v=
        for t in wipe_aes wipe_chacha; do
                x=$(ratio "${M[$n,$t]}" "${BEST[$n]}")
                judge "random wipe vs fio write" "$n" "${label[$t]##*, }" "$x" ">=" "$lim"
                v+="${v:+; }${label[$t]##*, } ${x}x (${M[$n,$t]} / ${BEST[$n]} MB/s) $judged"
        done
        printf '    %2d dev, >= %sx: %s\n' "$n" "$lim" "$v"
done
# 3: each cipher's verification against fio's best read, at every count.
echo "  verify --verify last / fio's best read >= 0.80x at every count:"
for n in "${counts[@]}"; do
        v=
        for t in verify_aes verify_chacha; do
                if $do_read; then
                        x=$(ratio "${M[$n,$t]}" "${BESTR[$n]}")
                        judge "verification vs fio read" "$n" "${label[$t]##*, }" "$x" ">=" 0.80
                        v+="${v:+; }${label[$t]##*, } ${x}x (${M[$n,$t]} / ${BESTR[$n]} MB/s) $judged"
                else
                        judge "verification vs fio read" "$n" "${label[$t]##*, }" "" ">=" 0.80
                        v+="${v:+; }${label[$t]##*, } not measured (--no-read)"
                fi
        done
        printf '    %2d dev: %s\n' "$n" "$v"
done
# 4: the zero pass, the daemon's own CPU.
v=
for n in "${counts[@]}"; do
        judge "zero pass daemon CPU" "$n" "zero" "${D[$n,wipe_zero]}" "<=" 0.02
        v+="${v:+; }$n dev ${D[$n,wipe_zero]} $judged"
done
echo "  zero pass, wiped's own CPU <= 0.020 s/GiB: $v"
# 5: the random pass, the daemon's own CPU against the keystream's own cost + 0.02 s/GiB.
echo "  random pass, wiped's own CPU <= the keystream's own cost + 0.020 s/GiB:"
for t in wipe_aes wipe_chacha; do
        c=${label[$t]##*, }
        if [[ -n ${ks_cost[$c]:-} ]]; then
                lim=$(awk -v k="${ks_cost[$c]}" 'BEGIN { printf "%.4f", k + 0.02 }')
                v=
                for n in "${counts[@]}"; do
                        judge "random pass daemon CPU" "$n" "$c" "${D[$n,$t]}" "<=" "$lim"
                        v+="${v:+; }$n dev ${D[$n,$t]} $judged"
                done
                printf '    %-11s (%s %s MB/s: %.3f + 0.020 = %.3f s/GiB): %s\n' "$c" "${ks_used[$c]}" \
                        "${ks_mbps[$c,${ks_used[$c]}]:-?}" "${ks_cost[$c]}" "$lim" "$v"
        else
                for n in "${counts[@]}"; do
                        judge "random pass daemon CPU" "$n" "$c" "" "<=" 0
                done
                printf '    %-11s not judged: the keystream'"'"'s own cost is unknown (%s)\n' "$c" "${ks_note:-no figure for its backend}"
        fi
done
# 6: status p99 < 50 ms, wipectl process start included.
v=
for n in "${counts[@]}"; do
        read -r _ p99 _ _ _ rp99 _ _ <<<"${LAT[$n]}"
        judge "status p99 (wipectl)" "$n" "wipectl --json status" "$p99" "<" 50
        v+="${v:+; }$n dev $p99 ms $judged"
        $have_perl && v+=" (connection alone $rp99)"
done
echo "  wipectl --json status p99 < 50 ms (process start included): $v"
# 7: peak RSS independent of the device count: every count's peak within 10 % of the smallest
# count's (the buffers are per thread; a job's own memory is small).
v=
n0=${counts[0]}
for n in "${counts[@]}"; do
        v+="${v:+, }$n dev ${HWM[$n]}"
done
if ! $hwm_per_count; then
        judge "peak RSS flat" "" "VmHWM" "" "<=" 1.10
        echo "  peak RSS independent of the device count: not judged (cannot reset VmHWM: /proc/PID/clear_refs); peaks so far, MiB: $v"
elif ((${#counts[@]} < 2)); then
        judge "peak RSS flat" "" "VmHWM" "" "<=" 1.10
        echo "  peak RSS independent of the device count: not judged (one count); MiB: $v"
else
        x=$(printf '%s\n' "${HWM[@]}" | sort -g | tail -n 1)
        x=$(awk -v a="$x" -v b="${HWM[$n0]}" 'BEGIN { printf "%.3f", a / b }')
        judge "peak RSS flat" "${counts[-1]}" "largest peak / peak at $n0 device(s)" "$x" "<=" 1.10
        echo "  peak RSS independent of the device count (every count's peak <= 1.10x that at $n0): ${x}x $judged; MiB: $v" \
                "($(awk -v a="${HWM[${counts[-1]}]}" -v b="${HWM[$n0]}" -v n=$((counts[-1] - n0)) \
                'BEGIN { printf "%+.0f KiB per device from %d to %d", (a - b) * 1024 / n, '"$n0"', '"${counts[-1]}"' }'))"
fi
# For information: the rotational policy against the shared one.
if $do_rot; then
        v=
        for n in "${counts[@]}"; do
                v+="${v:+; }$n dev $(ratio "${M[$n,wipe_aes_rot]}" "${M[$n,wipe_aes]}")x"
        done
        echo "  (for information) aes-128-ctr wipe with queue/rotational 1 / with 0: $v"
fi
echo "  $n_met met, $n_missed missed$( ((n_unmeasured > 0)) && echo ", $n_unmeasured not measured")"

# --- results.json and the plots ------------------------------------------------------------------

jq -n --slurpfile counts "$work/counts.jsonl" --slurpfile targets "$work/targets.jsonl" \
        --argjson version "$version_json" --argjson ks "$ks_json" \
        --arg cpu "$cpu_model" --argjson nproc "$(nproc)" --arg aes "$aes_flag" \
        --argjson mem "$(awk '/^MemTotal:/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)" --arg kernel "$(uname -srm)" \
        --arg date "$run_date" --arg commit "$git_commit" --argjson dirty "$git_dirty" --arg top "$top" \
        --arg fio "$fio_version" --arg openssl "$openssl_version" --arg nwipe "$nwipe_version" --arg wiped "$wiped_version" \
        --arg build "$build" --argjson size "$size" --arg countlist "${counts[*]}" --argjson reps "$reps" \
        --argjson threads "$threads" --arg dargs "${daemon_args[*]}" --argjson busy "$busy" \
        --argjson secs "$run_seconds" --argjson hwm "$hwm_run" --arg clock "${daemon_cpu_clock:-}" \
        --arg wt "${wipe_timing:-}" --arg vt "${verify_timing:-}" --arg prng "${nwipe_prng:-}" \
        --argjson nws "$nwipe_seconds" --argjson urs "$urandom_size" \
        '{format: "wiped bench results 1",
          date: $date, source: {commit: (if $commit == "" then null else $commit end), dirty: $dirty, dir: $top},
          machine: {cpu_model: $cpu, nproc: $nproc, aes_instructions: ($aes == "yes"), memory_bytes: $mem,
                    kernel: $kernel, cpus_busy_percent_before: $busy},
          tools: {fio: $fio, openssl: $openssl, nwipe: (if $nwipe == "" then null else $nwipe end),
                  nwipe_prng: (if $prng == "" then null else $prng end), wiped: $wiped, build: $build},
          settings: {size_bytes: $size, counts: ($countlist | split(" ") | map(tonumber)), reps: $reps,
                     threads: $threads, daemon_args: $dargs, nwipe_seconds: $nws, urandom_bytes: $urs},
          daemon: $version.daemon, keystream: $ks,
          timing: {wipe: $wt, verify: $vt, daemon_cpu: $clock},
          counts: $counts, targets: $targets,
          run_seconds: $secs, daemon_peak_rss_mib: $hwm}' >"$work/results.json" ||
        die "internal error: results.json"
mv -- "$work/results.json" "$results_dir/results.json" || die "$results_dir: cannot write results.json"

plot=$(dirname "$0")/plot.sh
if ! $have_gnuplot; then
        echo "plots: skipped (gnuplot not found; Debian: apt-get install gnuplot-nox; then $plot $results_dir)"
elif [[ ! -f $plot ]]; then
        echo "plots: skipped ($plot not found)"
elif bash "$plot" "$results_dir" >"$work/plot.out" 2>&1; then
        pngs=("$results_dir"/*.png)
        echo "plots: ${pngs[*]##*/}"
else
        echo "plots: failed: $(tail -n 3 "$work/plot.out")"
fi
echo "results: $results_dir (table.txt, results.json$($have_gnuplot && echo ", plots"))"
