#!/bin/bash
# Build the VM test's initramfs: busybox-static, the kernel modules the emulated drives need (with
# their dependencies, loaded in order by /init), programs with every shared library they need, the
# init script tests/vm/init and a guest script that /init runs.
#
# Usage: mkinitramfs.sh KERNEL_DIR OUT SCRIPT [PROGRAM...]
#   KERNEL_DIR  a directory of tests/vm/fetch-kernel.sh (vmlinuz, lib/modules/RELEASE)
#   OUT         the initramfs to write (a newc cpio archive, uncompressed: quicker to boot under TCG)
#   SCRIPT      the guest script, run by /init as /test.sh
#   PROGRAM     copied to /bin under its own name, with the libraries ldd names (sanitizer
#               runtimes included) at their own paths
# The environment variables ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS and TSAN_OPTIONS are passed
# on to the guest (in /etc/test.env).
set -eu -o pipefail
PATH=$PATH:/usr/sbin:/sbin       # modprobe

[ $# -ge 3 ] || { echo "usage: $0 KERNEL_DIR OUT SCRIPT [PROGRAM...]" >&2; exit 2; }
kdir=$1 out=$2 script=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)

# The drivers: NVMe (PCI), AHCI (q35's SATA controller, through libata and the SCSI disk driver),
# xHCI and USB mass storage (usb-storage, its SCSI disks through sd_mod).
MODULES="nvme ahci sd_mod xhci_pci usb_storage"

rel=$(ls "$kdir/lib/modules")
[ "$(echo "$rel" | wc -l)" = 1 ] && [ -s "$kdir/lib/modules/$rel/modules.dep" ] || {
        echo "mkinitramfs: $kdir/lib/modules holds no one kernel with modules.dep" >&2
        exit 1
}
busybox=$(command -v busybox) || { echo "mkinitramfs: busybox missing (busybox-static)" >&2; exit 1; }
bb_ldd=$(ldd "$busybox" 2>&1 || true)
echo "$bb_ldd" | grep -Eq 'not a dynamic executable|statically linked' ||
        { echo "mkinitramfs: $busybox is not static (install busybox-static)" >&2; exit 1; }
command -v cpio > /dev/null || { echo "mkinitramfs: cpio missing" >&2; exit 1; }

root=$(mktemp -d "${TMPDIR:-/tmp}/wiped-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,run,tmp,lib/modules,lib64}

# busybox and its applets as links (programs of our own win over an applet of the same name).
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
        [ "$applet" = busybox ] || ln -s busybox "$root/bin/$applet"
done

# Modules, dependencies first, in the order modprobe would insert them.
: > "$root/etc/modules"
for m in $MODULES; do
        modprobe -d "$kdir" -S "$rel" --show-depends "$m" || { echo "mkinitramfs: no module $m in $kdir" >&2; exit 1; }
done | while read -r kind path args; do
        [ "$kind" = insmod ] || continue        # "builtin X": nothing to load
        name=$(basename "$path")
        grep -q "^$name\\b" "$root/etc/modules" && continue
        cp "$path" "$root/lib/modules/$name"
        # usb-storage: scan the disk at once, not after its default delay of seconds.
        [ "$name" = usb-storage.ko ] && args="$args delay_use=0"
        echo "$name $args" >> "$root/etc/modules"
done
[ -s "$root/etc/modules" ] || { echo "mkinitramfs: no modules resolved" >&2; exit 1; }

# Programs and their libraries.
copy_lib() {
        local lib=$1
        [ -e "$root$lib" ] && return 0
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
}
for prog in "$@"; do
        [ -x "$prog" ] || { echo "mkinitramfs: $prog is not an executable" >&2; exit 1; }
        cp -L "$prog" "$root/bin/$(basename "$prog")"
        # "libx.so => /path (addr)" and "/lib64/ld-linux-x86-64.so.2 (addr)"; "not found" fails.
        libs=$(ldd "$prog") || { echo "mkinitramfs: ldd $prog failed" >&2; exit 1; }
        if echo "$libs" | grep -q 'not found'; then
                echo "mkinitramfs: $prog: missing libraries: $libs" >&2
                exit 1
        fi
        for lib in $(echo "$libs" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'); do
                copy_lib "$lib"
        done
done

printf 'root:x:0:0:root:/:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\n' > "$root/etc/group"
: > "$root/etc/test.env"
for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS TSAN_OPTIONS; do
        [ -n "${!v:-}" ] && printf 'export %s=%q\n' "$v" "${!v}" >> "$root/etc/test.env"
done
cp "$here/init" "$root/init"
cp "$script" "$root/test.sh"
chmod 755 "$root/init" "$root/test.sh"

(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) > "$out.tmp"
mv "$out.tmp" "$out"
