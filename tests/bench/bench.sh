#!/bin/bash
# tests/bench/bench.sh: how fast wiped writes, next to fio, dd, openssl and shred, and how fast it
# verifies (--verify last), next to fio's sequential read, on RAM-backed loop devices. Run by hand
# as root; not part of "make check". See tests/bench/README.md.
#
# Safety: the only devices this script ever writes to are loop devices it created itself with
# "losetup -f --show --direct-io=on FILE" over files of its own under /dev/shm, named by the path
# losetup printed. Before every write it checks again that each device is a block device whose
# backing file is still ours. The devices are detached and the files deleted on every exit.

set -u -o pipefail
export LC_ALL=C         # dd's summary, awk's and numfmt's numbers

prog=bench.sh
top=$(cd "$(dirname "$0")/../.." && pwd)

size_arg=2G
n_devices=1
reps=3
threads=2
build=
cipher_speed=false
urandom_arg=512M
do_shred=true
daemon_args=()

usage() {
        cat <<EOF
Usage: $prog [OPTION]...
Measure wiped's random wipe against fio's sequential write of zeros (the device's limit),
dd from /dev/urandom, an openssl enc pipeline and shred, and wiped's read-back verification
(wipectl verify --verify last) against fio's sequential read, on RAM-backed loop devices.
Run as root. Prints a table of median MB/s (10^6 bytes/s) and each one's ratio to fio's best
write (writers) or best read (verification).

  --size SIZE          size of each loop device (default $size_arg; K, M, G suffixes are powers of 1024)
  --devices N          number of loop devices, written at once (default $n_devices)
  --reps N             interleaved repetitions; medians are reported (default $reps)
  --threads N          wiped worker threads (default $threads)
  --build DIR          build directory holding daemon/wiped and cli/wipectl
                       (default: $top/build, else $top)
  --urandom-size SIZE  bytes dd copies from /dev/urandom to each device (default $urandom_arg,
                       at most --size; /dev/urandom is slow)
  --no-shred           leave out shred
  --cipher-speed       also print "openssl speed" for both ciphers (one core, 1 MiB blocks)
  --daemon-arg ARG     pass ARG on to wiped (repeatable), e.g. --daemon-arg=--queue-depth=16
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
        --size|--devices|--reps|--threads|--build|--urandom-size|--daemon-arg)
                if [[ $1 != *=* ]]; then
                        [[ $# -ge 2 ]] || { usage >&2; die "$opt: needs an argument"; }
                        val=$2
                        shift
                fi
                ;;
        esac
        case $opt in
        --size) size_arg=$val ;;
        --devices) n_devices=$val ;;
        --reps) reps=$val ;;
        --threads) threads=$val ;;
        --build) build=$val ;;
        --urandom-size) urandom_arg=$val ;;
        --daemon-arg) daemon_args+=("$val") ;;
        --no-shred) do_shred=false ;;
        --cipher-speed) cipher_speed=true ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "$opt: unknown option" ;;
        esac
        shift
done

mib=$((1024 * 1024))
size=$(parse_size "$size_arg") || die "$size_arg: invalid size"
urandom_size=$(parse_size "$urandom_arg") || die "$urandom_arg: invalid size"
[[ $n_devices =~ ^[1-9][0-9]*$ && $n_devices -le 16 ]] || die "$n_devices: invalid device count (1..16)"
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "$reps: invalid repetition count"
[[ $threads =~ ^[1-9][0-9]*$ ]] || die "$threads: invalid thread count"
((size >= 64 * mib && size % mib == 0)) || die "$size_arg: the size must be a multiple of 1 MiB, at least 64 MiB"
((urandom_size > size)) && urandom_size=$size
((urandom_size >= mib && urandom_size % mib == 0)) || die "$urandom_arg: must be a multiple of 1 MiB"

# --- prerequisites -------------------------------------------------------------------------------

[[ $(id -u) -eq 0 ]] || die "must run as root (it creates loop devices and starts wiped)"
for c in fio openssl losetup jq dd head awk numfmt fallocate blockdev cmp date; do
        command -v "$c" >/dev/null || die "$c: not found; install it (fio, openssl, util-linux, jq, coreutils)"
done
have_shred=false
$do_shred && command -v shred >/dev/null && have_shred=true

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
need=$((n_devices * size))
shm_avail=$(df --output=avail -B1 /dev/shm | tail -n 1)
mem_avail=$(awk '/^MemAvailable:/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
((need + 512 * mib <= shm_avail)) || die "/dev/shm: $((need / mib)) MiB needed, $((shm_avail / mib)) MiB free; lower --size or --devices"
((need + 512 * mib <= mem_avail)) || die "$((need / mib)) MiB of RAM needed (plus 512 MiB), $((mem_avail / mib)) MiB available; lower --size or --devices"

# --- set-up and clean-up -------------------------------------------------------------------------

work=
loops=()                # the paths losetup printed, and only those
files=()                # their backing files, same index
daemon_pid=
bg_pids=()              # writers running in the background

cleanup() {
        local p i
        trap - EXIT INT TERM
        for p in "${bg_pids[@]}"; do
                kill "$p" 2>/dev/null
        done
        for p in "${bg_pids[@]}"; do
                wait "$p" 2>/dev/null
        done
        if [[ -n $daemon_pid ]]; then
                kill -TERM "$daemon_pid" 2>/dev/null
                for i in $(seq 50); do
                        kill -0 "$daemon_pid" 2>/dev/null || break
                        sleep 0.1
                done
                kill -KILL "$daemon_pid" 2>/dev/null
                wait "$daemon_pid" 2>/dev/null
        fi
        for i in "${!loops[@]}"; do
                losetup -d "${loops[$i]}" || say "${loops[$i]}: cannot detach; do it by hand (backing file ${files[$i]})"
        done
        # A detach waits for the last opener (udev's probe after a write, say): give it a moment.
        for i in "${!loops[@]}"; do
                for p in $(seq 30); do
                        [[ $(cat "/sys/block/${loops[$i]#/dev/}/loop/backing_file" 2>/dev/null) == "${files[$i]}"* ]] || break
                        sleep 0.1
                done
                [[ $(cat "/sys/block/${loops[$i]#/dev/}/loop/backing_file" 2>/dev/null) == "${files[$i]}"* ]] &&
                        say "${loops[$i]}: still open by someone; the kernel detaches it on the last close"
        done
        [[ -n $work && -d $work ]] && rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

work=$(mktemp -d /dev/shm/wiped-bench.XXXXXX) || die "cannot create a directory in /dev/shm"
sock=$work/wiped.sock
state=$work/state
daemon_log=$work/wiped.log

for ((i = 0; i < n_devices; i++)); do
        f=$work/dev$i.img
        # Allocate the pages now (the warm-up write below does the rest).
        fallocate -l "$size" "$f" || die "$f: cannot allocate $size bytes"
        files[i]=$f
        d=$(losetup -f --show --direct-io=on "$f") || die "$f: losetup failed"
        [[ $d =~ ^/dev/loop[0-9]+$ ]] || die "losetup printed \"$d\", not a loop device"
        loops[i]=$d
done

# Check that every device is still ours: a block device backed by our file, of our size.
# Called before everything that writes.
guard() {
        local i d b
        for i in "${!loops[@]}"; do
                d=${loops[$i]}
                [[ -b $d ]] || die "$d: no longer a block device; stopping"
                b=$(cat "/sys/block/${d#/dev/}/loop/backing_file" 2>/dev/null)
                [[ $b == "${files[$i]}" ]] || die "$d: backing file is \"$b\", not ${files[$i]}; stopping"
                [[ $(blockdev --getsize64 "$d") == "$size" ]] || die "$d: unexpected size; stopping"
        done
}
guard

dio=
for d in "${loops[@]}"; do
        dio+=" $(cat "/sys/block/${d#/dev/}/loop/dio" 2>/dev/null || echo '?')"
done

"$wiped" --socket "$sock" --state-dir "$state" --threads "$threads" --foreground "${daemon_args[@]}" \
        >"$daemon_log" 2>&1 &
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

# --- measurements --------------------------------------------------------------------------------
# Each run_* sets "bytes" (written in all) and "ns" (time taken); wipes also set "wall_ns".

now_ns() {
        date +%s%N
}

# fio: one job per device in one group, so that bw_bytes is the aggregate. $2: write (zeros,
# the default) or read.
run_fio() {
        local qd=$1 rw=${2:-write} out=$work/fio.json args=() d t0 t1
        for d in "${loops[@]}"; do
                args+=(--name="${d#/dev/}" --filename="$d")
        done
        [[ $rw == write ]] && args+=(--zero_buffers)
        t0=$(now_ns)
        fio --ioengine=io_uring --direct=1 --rw="$rw" --bs=1M --iodepth="$qd" --numjobs=1 \
                --size="$size" --group_reporting --output-format=json --output="$out" "${args[@]}" \
                >"$work/fio.err" 2>&1 || { cat "$work/fio.err" >&2; die "fio --rw=$rw failed"; }
        t1=$(now_ns)
        bytes=$(jq ".jobs[0].$rw.io_bytes" "$out")
        local bw
        bw=$(jq ".jobs[0].$rw.bw_bytes" "$out")
        ((bytes == n_devices * size)) || die "fio --rw=$rw moved $bytes bytes, expected $((n_devices * size))"
        [[ $bw =~ ^[0-9]+$ && $bw -gt 0 ]] || die "fio reported no bandwidth"
        # Back to a time, so that all rows are computed alike: bytes / ns.
        ns=$(awk -v b="$bytes" -v bw="$bw" 'BEGIN { printf "%.0f", b / bw * 1e9 }')
        wall_ns=$((t1 - t0))
}

# wipectl waits for the jobs itself (one process, a status poll every 0.5 s) and prints the final
# job objects. Polling from here instead (a wipectl and a jq every 20 ms) costs ~20 % of the rate
# on a 2-CPU machine, so the time comes from the jobs' own elapsed_s, not from our clock.
# --verify none: the write alone (the default, a 10 % sample read-back, would add reads).
wipe_timing=
declare -A wipe_jobs=()         # cipher -> the job ids of its latest wipe, for run_verify
run_wipe() {
        local cipher=$1 st rc t0 t1 d
        t0=$(now_ns)
        st=$("$wipectl" --socket "$sock" --json wipe --yes --verify none --cipher "$cipher" "${loops[@]}" \
                2>"$work/wipectl.err")
        rc=$?
        t1=$(now_ns)
        if [[ $rc -ne 0 ]]; then
                cat "$work/wipectl.err" >&2
                [[ -n $st ]] && jq -c '[.jobs[]? | {device, state, error}]' <<<"$st" >&2
                die "wipectl wipe --cipher $cipher failed (exit $rc)"
        fi
        jq -e --argjson n "$n_devices" '(.jobs | length) == $n and all(.jobs[]; .state == "done")' \
                <<<"$st" >/dev/null || die "wipectl wipe --cipher $cipher: unexpected result: $st"
        bytes=$(jq '[.jobs[].bytes_total] | add' <<<"$st")
        ((bytes == n_devices * size)) || die "wipe covered $bytes bytes, expected $((n_devices * size))"
        wipe_jobs[$cipher]=$(jq -r '[.jobs[].id] | join(" ")' <<<"$st")
        wall_ns=$((t1 - t0))
        # All jobs of one submit start at the same time: the aggregate time is the longest job.
        if jq -e 'all(.jobs[]; .elapsed_s | type == "number")' <<<"$st" >/dev/null; then
                ns=$(jq '[.jobs[].elapsed_s] | max * 1e9 | floor' <<<"$st")
                wipe_timing="the jobs' own elapsed_s (daemon clock, submit to done including the final flush, 1 ms resolution)"
        else
                ns=$wall_ns
                wipe_timing="the wall clock around wipectl wipe (no elapsed_s in its JSON; coarse: wipectl polls every 0.5 s)"
        fi
        # The fio run before this one left zeros: the last MiB must not be zeros any more.
        for d in "${loops[@]}"; do
                if dd if="$d" bs=1M skip=$((size / mib - 1)) count=1 iflag=direct status=none |
                        cmp -s -n "$mib" - /dev/zero; then
                        die "$d: the last MiB is still zeros after a wipe reported done"
                fi
        done
}

# Read back the devices of the latest wipe with this cipher: one "wipectl --json verify JOB
# --verify last" per device, all started at once. Each prints its final job object, whose
# elapsed_s is the daemon's clock from the verify request to the end of the read-back (a
# re-verification restarts the job's clock); with several devices, the longest. Every job must
# pass (it read back exactly what the wipe wrote), and have read the whole device.
verify_timing=
run_verify() {
        local cipher=$1 ids i id st t0 t1
        read -r -a ids <<<"${wipe_jobs[$cipher]:-}"
        ((${#ids[@]} == n_devices)) || die "verify: no wipe with $cipher to verify"
        bg_pids=()
        t0=$(now_ns)
        for i in "${!ids[@]}"; do
                "$wipectl" --socket "$sock" --json verify --verify last "${ids[$i]}" >"$work/ver$i.out" 2>"$work/ver$i.err" &
                bg_pids[i]=$!
        done
        for i in "${!ids[@]}"; do
                wait "${bg_pids[$i]}" || { cat "$work/ver$i.err" "$work/ver$i.out" >&2; die "wipectl verify ${ids[$i]} ($cipher) failed"; }
        done
        t1=$(now_ns)
        bg_pids=()
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
        wall_ns=$((t1 - t0))
}

# Start one writer per device in the background ("$1" is a function taking the device), wait for
# all, check each wrote what it should.
run_parallel() {
        local fn=$1 expect=$2 i t0 t1 got
        bg_pids=()
        t0=$(now_ns)
        for i in "${!loops[@]}"; do
                "$fn" "${loops[$i]}" >"$work/par$i.out" 2>"$work/par$i.err" &
                bg_pids[i]=$!
        done
        for i in "${!loops[@]}"; do
                wait "${bg_pids[$i]}" || { cat "$work/par$i.err" >&2; die "$fn ${loops[$i]} failed"; }
        done
        t1=$(now_ns)
        bg_pids=()
        for i in "${!loops[@]}"; do
                # dd's summary line: "N bytes (...) copied, ..."
                got=$(awk '/bytes .* copied/ { n = $1 } END { printf "%.0f", n }' "$work/par$i.err")
                [[ $fn == shred_one ]] && got=$expect
                ((got == expect)) || { cat "$work/par$i.err" >&2; die "$fn ${loops[$i]}: wrote $got bytes, expected $expect"; }
        done
        bytes=$((n_devices * expect))
        ns=$((t1 - t0))
        wall_ns=$ns
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

# Each verify_* reads back what the wipe_* just before it wrote: nothing writes in between.
tests=(fio2 fio4 fio32 fioread2 fioread4 fioread32 wipe_aes verify_aes wipe_chacha verify_chacha urandom openssl)
$have_shred && tests+=(shred)
writers=(fio2 fio4 fio32 wipe_aes wipe_chacha urandom openssl)
$have_shred && writers+=(shred)
readers=(fioread2 fioread4 fioread32 verify_aes verify_chacha)
declare -A label=(
        [fio2]="fio write zeros, iodepth 2"
        [fio4]="fio write zeros, iodepth 4"
        [fio32]="fio write zeros, iodepth 32"
        [fioread2]="fio read, iodepth 2"
        [fioread4]="fio read, iodepth 4"
        [fioread32]="fio read, iodepth 32"
        [wipe_aes]="wipectl wipe, aes-128-ctr"
        [wipe_chacha]="wipectl wipe, chacha20"
        [verify_aes]="wipectl verify last, aes-128-ctr"
        [verify_chacha]="wipectl verify last, chacha20"
        [urandom]="dd if=/dev/urandom"
        [openssl]="openssl enc aes-128-ctr | dd"
        [shred]="shred -n1"
)
((urandom_size < size)) && label[urandom]="dd if=/dev/urandom ($((urandom_size / mib)) MiB/dev)"
declare -A raw=() wall=()

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
        verify_aes) run_verify aes-128-ctr ;;
        verify_chacha) run_verify chacha20 ;;
        urandom) run_parallel dd_urandom_one "$urandom_size" ;;
        openssl) run_parallel openssl_one "$size" ;;
        shred) run_parallel shred_one "$size" ;;
        esac
}

mbps() {
        awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.0f", b / (ns / 1e9) / 1e6 }'
}

median() {
        printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.0f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# --- machine information -------------------------------------------------------------------------

cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
[[ -n $cpu_model ]] || cpu_model=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ { print $2; exit }')
aes_flag=no
grep -qw aes /proc/cpuinfo && aes_flag=yes     # x86 "flags", arm64 "Features"

echo "machine:  $(nproc) CPUs, ${cpu_model:-unknown CPU} (AES instructions: $aes_flag), $(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM"
echo "kernel:   $(uname -srm)"
echo "tools:    $(fio --version), $(openssl version | awk '{ print $1, $2 }'), $("$wiped" --version 2>/dev/null | head -n 1) from $build"
echo "wiped:    $(jq -r '.daemon | "\(.threads) threads x \(.queue_depth // "?") writes in flight x \((.io_size // 0) / 1024) KiB, auto cipher \(.cipher_auto)"' <<<"$version_json")${daemon_args[*]:+ (extra: ${daemon_args[*]})}"
# How busy the CPUs are with other work right now (1 s sample): other work makes figures noisy.
cpu_ticks() {
        awk '/^cpu / { busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, busy + $5 + $6 }' /proc/stat
}
read -r busy0 total0 < <(cpu_ticks)
sleep 1
read -r busy1 total1 < <(cpu_ticks)
busy=$(awk -v b=$((busy1 - busy0)) -v t=$((total1 - total0)) 'BEGIN { printf "%.0f", (t > 0 ? 100 * b / t : 0) }')
echo "load:     CPUs ${busy}% busy over 1 s before the runs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "devices:  $n_devices x $((size / mib)) MiB loop device(s) over tmpfs files (${loops[*]}, direct I/O:$dio)"
if $cipher_speed; then
        for c in aes-128-ctr chacha20; do
                v=$(openssl speed -evp "$c" -bytes 1048576 -seconds 1 2>/dev/null | tail -n 1 | awk '{ print $NF }')
                if [[ $v =~ ^([0-9.]+)k$ ]]; then
                        printf 'openssl speed -evp %-11s  %6.0f MB/s on one core (1 MiB blocks)\n' "$c" \
                                "$(awk -v k="${BASH_REMATCH[1]}" 'BEGIN { print k / 1000 }')"
                else
                        echo "openssl speed -evp $c: no figure (got \"$v\")"
                fi
        done
fi
echo

# --- the runs ------------------------------------------------------------------------------------

((busy > 10)) && say "warning: the CPUs were ${busy}% busy before the runs: something else is running; expect noise"
start=$(now_ns)
say "warm-up: one fio pass over each device (not counted)"
guard
run_fio 32

for ((r = 1; r <= reps; r++)); do
        for t in "${tests[@]}"; do
                guard
                run_one "$t"
                v=$(mbps "$bytes" "$ns")
                raw[$t]+=" $v"
                wall[$t]+=" $(mbps "$bytes" "$wall_ns")"
                say "rep $r/$reps: ${label[$t]}: $v MB/s"
        done
done
end=$(now_ns)

# --- the table -----------------------------------------------------------------------------------

declare -A med=()
for t in "${tests[@]}"; do
        # shellcheck disable=SC2086
        med[$t]=$(median ${raw[$t]})
done
# best_of T...: the test with the highest median.
best_of() {
        local t b=0 bt=
        for t in "$@"; do
                if ((med[$t] > b)); then
                        b=${med[$t]}
                        bt=$t
                fi
        done
        echo "$bt"
}
best_t=$(best_of fio2 fio4 fio32)
best=${med[$best_t]:-0}
best_read_t=$(best_of fioread2 fioread4 fioread32)
best_read=${med[$best_read_t]:-0}
# ratio A [B]: A / B (default: fio's best write) with two decimals.
ratio() {
        awk -v a="$1" -v b="${2:-$best}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'
}

if ((n_devices > 1)); then
        echo "results: $n_devices devices x $((size / mib)) MiB written (read) at once, aggregate MB/s"
else
        echo "results: 1 device x $((size / mib)) MiB"
fi
printf '%-36s %9s %8s   %s\n' "writer" "MB/s" "x best" "raw MB/s, rep 1..$reps"
for t in "${writers[@]}"; do
        mark=
        [[ $t == "$best_t" ]] && mark=" <- fio best: the device's limit"
        printf '%-36s %9s %7sx  %s%s\n' "${label[$t]}" "${med[$t]}" "$(ratio "${med[$t]}")" "${raw[$t]# }" "$mark"
done
$have_shred || printf '%-36s %9s\n' "shred -n1" "skipped ($($do_shred && echo "shred not found" || echo "--no-shred"))"
printf '%-36s %9s %8s   %s\n' "reader" "MB/s" "x best" "raw MB/s, rep 1..$reps"
for t in "${readers[@]}"; do
        mark=
        [[ $t == "$best_read_t" ]] && mark=" <- fio best read: the device's limit"
        printf '%-36s %9s %7sx  %s%s\n' "${label[$t]}" "${med[$t]}" "$(ratio "${med[$t]}" "$best_read")" "${raw[$t]# }" "$mark"
done
echo
echo "MB/s = 10^6 bytes/s, median of $reps interleaved runs; x best = median / fio's best median"
echo "  (writers: fio's best write; readers: fio's best read)."
echo "wipectl wipe rows: \"wipectl --json wipe --yes --verify none\" (all devices in one submit), timed by $wipe_timing"
echo "  as printed in wipectl's final job objects (the same JOB objects as status --json)."
echo "  By the wall clock around wipectl (start-up, 0.5 s polls) they were: aes-128-ctr${wall[wipe_aes]}, chacha20${wall[wipe_chacha]} MB/s."
echo "wipectl verify rows: \"wipectl --json verify --verify last JOB\" of the wipe just before (one per device, at once):"
echo "  every byte read back with O_DIRECT and compared with the regenerated keystream, timed by $verify_timing."
echo "  By the wall clock around wipectl they were: aes-128-ctr${wall[verify_aes]}, chacha20${wall[verify_chacha]} MB/s."
echo "dd, openssl and shred rows run one writer per device at once and are timed by the wall clock."
((urandom_size < size)) && echo "dd if=/dev/urandom wrote only the first $((urandom_size / mib)) MiB of each device (--urandom-size): rates, not times, compare."
awk -v s="$start" -v e="$end" -v b="$busy" 'BEGIN {
        printf "run time %.0f s.%s\n", (e - s) / 1e9, (b > 10 ? " The CPUs were " b "% busy with other work before the runs: figures are noisy." : "") }'

# verdict TARGET REFERENCE T...: "<cipher> 0.93x met; ..." for each test against the reference.
verdict() {
        local target=$1 ref=$2 t x ok v=
        shift 2
        for t in "$@"; do
                x=$(ratio "${med[$t]}" "$ref")
                ok=$(awk -v a="${med[$t]}" -v b="$ref" -v t="$target" 'BEGIN { print ((b > 0 && a / b >= t) ? "met" : "NOT met") }')
                v+="${v:+; }${label[$t]##*, } ${x}x $ok"
        done
        echo "$v"
}
note=
((threads != 2)) && note=" (measured with --threads $threads; the targets are for 2)"
echo "target (random wipe >= 0.70x fio's best write, with 2 threads): $(verdict 0.70 "$best" wipe_aes wipe_chacha)$note"
echo "target (verify --verify last >= 0.80x fio's best read, with 2 threads): $(verdict 0.80 "$best_read" verify_aes verify_chacha)$note"
