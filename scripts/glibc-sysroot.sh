#!/bin/bash
# glibc-sysroot.sh - the oldest C library the preload collector supports,
# as a sysroot to build libheapsnoop_preload.so against
# (docs/COLLECTOR.md, "Old C libraries"): Debian 11's (bullseye, glibc
# 2.31) libc6, libc6-dev and linux-libc-dev for ARCH, fetched with
# apt-get download and unpacked with dpkg-deb -x into a cache that
# survives between runs and checkouts:
#   glibc-sysroot.sh x86|arm64     prints the sysroot's directory
# A library linked there takes from the C library only what glibc 2.31
# has, each symbol at the version 2.31 gives it: the oldest one it had.
# The packages are resolved in a private apt configuration (own sources,
# lists and cache under the cache directory, as tests/kmatrix/
# fetch-kernel.sh does), so the system's apt sources are never touched.
# A sysroot in the cache needs no network; SYSROOT_REFRESH=1 fetches again.
set -u
ARCH=${1:?usage: $0 x86|arm64}
CACHE=${HEAPSNOOP_SYSROOT_CACHE:-/var/cache/heapsnoop/sysroot}
SUITE=bullseye
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
die() { echo "glibc-sysroot: $*" >&2; exit 1; }

case $ARCH in
x86) DEB_ARCH=amd64 ;;
arm64) DEB_ARCH=arm64 ;;
*) die "unknown architecture $ARCH (x86 or arm64)" ;;
esac
DIR=$CACHE/$SUITE-$DEB_ARCH
if [ -e "$DIR/ready" ] && [ "${SYSROOT_REFRESH:-0}" != 1 ]; then
	echo "$DIR"
	exit 0
fi
mkdir -p "$CACHE" || die "cannot create the cache $CACHE (run as root, or set HEAPSNOOP_SYSROOT_CACHE to a writable directory)"
# One fetch at a time (builds from several checkouts share the cache).
exec 9> "$CACHE/.$SUITE-$DEB_ARCH.lock"
flock 9 || die "cannot lock $CACHE/.$SUITE-$DEB_ARCH.lock"
if [ -e "$DIR/ready" ] && [ "${SYSROOT_REFRESH:-0}" != 1 ]; then
	echo "$DIR"
	exit 0
fi

A=$CACHE/apt-$SUITE
mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/sourceparts" || die "cannot create $A"
[ -r "$KEYRING" ] || die "$KEYRING missing: apt-get install debian-archive-keyring"
# The release's own packages, not its security updates: what is linked
# against is the ABI, the same in every 2.31-13 (and the security pool
# does not always hold every architecture's build of an update).
cat > "$A/sources.list" <<-EOS
deb [signed-by=$KEYRING] http://deb.debian.org/debian $SUITE main
EOS
APT=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts="$A/sourceparts"
	-o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache"
	-o Dir::State::Status=/dev/null -o APT::Architecture=amd64
	-o APT::Architectures::=amd64 -o APT::Architectures::=arm64
	-o Debug::NoLocking=1 -o APT::Sandbox::User=root)
echo "glibc-sysroot: apt-get update of a private $SUITE configuration ($A)" >&2
apt-get "${APT[@]}" -qq --error-on=any update >&2 ||
	die "apt-get update failed for $SUITE (no network to deb.debian.org?) and no sysroot is cached in $DIR; or build against this machine's C library: make PRELOAD_SYSROOT="

tmp=$(mktemp -d "$CACHE/.$SUITE-$DEB_ARCH.XXXXXX") || die "mktemp in $CACHE failed"
trap 'rm -rf "$tmp"' EXIT
for p in libc6 libc6-dev linux-libc-dev; do
	(cd "$tmp" && apt-get "${APT[@]}" -qq download "$p:$DEB_ARCH" >&2) ||
		die "apt-get download $p:$DEB_ARCH failed (no network to deb.debian.org?)"
done
for deb in "$tmp"/*.deb; do
	dpkg-deb -x "$deb" "$tmp/root" || die "dpkg-deb -x $deb failed"
	dpkg-deb -f "$deb" Package Version Architecture | tr '\n' ' ' >> "$tmp/root/packages"
	echo >> "$tmp/root/packages"
	rm -f "$deb"
done
# Absolute symlinks (lib64/ld-linux-x86-64.so.2, usr/lib/*/libm.so) would
# lead out of the sysroot to this machine's own C library: made relative.
find "$tmp/root" -type l | while read -r l; do
	t=$(readlink "$l")
	case $t in /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$tmp/root$t")" "$l" ;; esac
done
case $DEB_ARCH in
amd64) triplet=x86_64-linux-gnu loader=lib64/ld-linux-x86-64.so.2 ;;
arm64) triplet=aarch64-linux-gnu loader=lib/ld-linux-aarch64.so.1 ;;
esac
[ -e "$tmp/root/usr/lib/$triplet/libc.so" ] && [ -e "$tmp/root/$loader" ] &&
	[ -e "$tmp/root/usr/include/stdio.h" ] ||
	die "the unpacked packages lack usr/lib/$triplet/libc.so, $loader or usr/include/stdio.h"
# libc.so and libpthread.so are linker scripts naming absolute paths
# (/lib/..., /usr/lib/...): the linker finds those inside the sysroot.
: > "$tmp/root/ready"
rm -rf "$DIR.old"
[ -e "$DIR" ] && mv "$DIR" "$DIR.old"
mv "$tmp/root" "$DIR" || die "cannot move the sysroot to $DIR"
rm -rf "$DIR.old"
echo "glibc-sysroot: $SUITE's C library for $DEB_ARCH unpacked in $DIR" >&2
echo "$DIR"
