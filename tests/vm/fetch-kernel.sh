#!/bin/bash
# Fetch the Debian 12 kernel that the VM test boots (tests/integration/vm-drives.sh), without
# installing it on this machine: apt-get download the image package that linux-image-amd64 names
# and dpkg-deb -x it into the cache directory. Idempotent, and quiet when the kernel is cached.
#
# The cache: $WIPED_VM_CACHE, by default /var/cache/wiped-vm for root (and for others when it holds
# a kernel) and ${XDG_CACHE_HOME:-~/.cache}/wiped-vm otherwise. After a fetch it holds
#       kernel/RELEASE/vmlinuz                 the kernel image
#       kernel/RELEASE/lib/modules/RELEASE/    its modules, with the package's modules.dep
#       kernel/current                         the name of the cached RELEASE
# The full amd64 flavour, not the cloud one: the cloud kernel has no AHCI and no USB.
#
# Usage: fetch-kernel.sh [--print]   --print: print the kernel's directory (fetching it first).
# A cached kernel is kept as it is, also when Debian has a newer one: delete the cache to update.
set -eu
PATH=$PATH:/usr/sbin:/sbin       # depmod

print=
case ${1:-} in
--print) print=1 ;;
"") ;;
*) echo "usage: $0 [--print]" >&2; exit 2 ;;
esac

# cached KDIR: the directory of the kernel cached in KDIR, when it is whole (the marker "current"
# is written last).
cached() {
        local rel
        rel=$(cat "$1/current" 2>/dev/null) || return 1
        [ -n "$rel" ] && [ -s "$1/$rel/vmlinuz" ] && [ -s "$1/$rel/lib/modules/$rel/modules.dep" ] || return 1
        echo "$1/$rel"
}

if [ -z "${WIPED_VM_CACHE:-}" ]; then
        # Not root: the system's cache when tools/install-deps (as root) filled it.
        if [ "$(id -u)" = 0 ] || cached /var/cache/wiped-vm/kernel > /dev/null; then
                WIPED_VM_CACHE=/var/cache/wiped-vm
        else
                WIPED_VM_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/wiped-vm
        fi
fi
kdir=$WIPED_VM_CACHE/kernel

if dir=$(cached "$kdir"); then
        [ -n "$print" ] && echo "$dir"
        exit 0
fi

command -v apt-get > /dev/null && command -v apt-cache > /dev/null && command -v dpkg-deb > /dev/null || {
        echo "fetch-kernel: apt-get, apt-cache and dpkg-deb are needed (a Debian system)" >&2
        exit 1
}

# The image package the metapackage depends on now, e.g. linux-image-6.1.0-57-amd64.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
[ -n "$pkg" ] || {
        echo "fetch-kernel: apt-cache knows no linux-image-amd64 (run apt-get update?)" >&2
        exit 1
}
rel=${pkg#linux-image-}

mkdir -p "$kdir"
# One fetch at a time (test suites may run side by side): the one that waited finds it cached.
exec 9> "$kdir/.lock"
flock 9
if dir=$(cached "$kdir"); then
        [ -n "$print" ] && echo "$dir"
        exit 0
fi
tmp=$(mktemp -d "$kdir/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "fetch-kernel: fetching $pkg into $kdir" >&2
# apt-get download writes into the current directory; as root, apt's sandbox user cannot write
# there, which apt only warns about.
(cd "$tmp" && apt-get download -qq "$pkg" 2>&1 | grep -v 'unsandboxed' >&2 || true)
deb=$(ls "$tmp"/*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { echo "fetch-kernel: apt-get download $pkg failed" >&2; exit 1; }
dpkg-deb -x "$deb" "$tmp/x"
rm -f "$deb"
[ -s "$tmp/x/boot/vmlinuz-$rel" ] && [ -d "$tmp/x/lib/modules/$rel" ] || {
        echo "fetch-kernel: $pkg holds no boot/vmlinuz-$rel and lib/modules/$rel" >&2
        exit 1
}
# The package ships no modules.dep (its postinst runs depmod): make it here.
depmod -b "$tmp/x" "$rel"
mkdir "$tmp/k"
mv "$tmp/x/boot/vmlinuz-$rel" "$tmp/k/vmlinuz"
mv "$tmp/x/boot/config-$rel" "$tmp/k/config"
mkdir -p "$tmp/k/lib/modules"
mv "$tmp/x/lib/modules/$rel" "$tmp/k/lib/modules/$rel"
rm -rf "${kdir:?}/$rel"
mv "$tmp/k" "$kdir/$rel"
echo "$rel" > "$kdir/.current.tmp" && mv "$kdir/.current.tmp" "$kdir/current"
[ -n "$print" ] && echo "$kdir/$rel"
exit 0
