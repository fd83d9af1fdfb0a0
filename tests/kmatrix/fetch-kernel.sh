#!/bin/bash
# fetch-kernel.sh - get one Debian kernel for the kernel matrix test
# (tests/kmatrix) into a cache that survives between runs and clones:
#   fetch-kernel.sh NAME      NAME: 5.10 (bullseye), 6.1 or 6.12 (bookworm),
#                             6.1-arm64 (bookworm's arm64 kernel: tests/arm64)
# prints the kernel's cache directory, which holds:
#   package   the concrete package fetched (e.g. linux-image-6.1.0-56-amd64)
#   release   its `uname -r`
#   root/     the package unpacked (dpkg-deb -x): boot/vmlinuz-*, lib/modules/
#   userland/ arm64 only: the static busybox of its initramfs (the host's
#             is x86-64 code): busybox-static:arm64 unpacked (bin/busybox).
#             Needs `dpkg --add-architecture arm64; apt-get update`.
# The package name is resolved from Debian's meta package with apt-cache in
# the same apt configuration it is downloaded with: the system's for
# bookworm, a private one (own sources, lists and cache under the cache
# directory) for bullseye, so the system's apt sources are never touched.
# modules.dep is made with depmod (the package leaves that to its postinst).
# A kernel in the cache needs no network; KMATRIX_REFRESH=1 fetches again.
set -u
NAME=${1:?usage: $0 5.10|6.1|6.12}
CACHE=${KMATRIX_CACHE:-/var/cache/heapsnoop/kmatrix}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
die() { echo "fetch-kernel: $NAME: $*" >&2; exit 1; }

case $NAME in
5.10) SUITE=bullseye META=linux-image-amd64 ;;
6.1) SUITE=bookworm META=linux-image-amd64 ;;
6.12) SUITE=bookworm META=linux-image-6.12-amd64 ;;
6.1-arm64) SUITE=bookworm META=linux-image-arm64:arm64 ;;
*) die "unknown kernel (known: 5.10 6.1 6.12 6.1-arm64; to add one, see docs/KERNELS.md)" ;;
esac
USERLAND=
case $NAME in *-arm64) USERLAND="busybox-static:arm64" ;; esac

DIR=$CACHE/kernels/$NAME
if [ -e "$DIR/ready" ] && [ "${KMATRIX_REFRESH:-0}" != 1 ]; then
	echo "$DIR"
	exit 0
fi
mkdir -p "$CACHE/kernels" || die "cannot create the cache $CACHE (run as root, or set KMATRIX_CACHE to a writable directory)"
# One fetch of a kernel at a time (runs from several checkouts share the cache).
exec 9> "$CACHE/kernels/.$NAME.lock"
flock 9 || die "cannot lock $CACHE/kernels/.$NAME.lock"
if [ -e "$DIR/ready" ] && [ "${KMATRIX_REFRESH:-0}" != 1 ]; then
	echo "$DIR"
	exit 0
fi

APT=(-o Debug::NoLocking=1 -o APT::Sandbox::User=root)
if [ "$SUITE" = bullseye ]; then
	# A private apt configuration: its own sources, state and cache.
	A=$CACHE/apt-$SUITE
	mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/sourceparts" || die "cannot create $A"
	[ -r "$KEYRING" ] || die "$KEYRING missing: apt-get install debian-archive-keyring"
	cat > "$A/sources.list" <<-EOS
	deb [signed-by=$KEYRING] http://deb.debian.org/debian $SUITE main
	deb [signed-by=$KEYRING] http://deb.debian.org/debian-security $SUITE-security main
	EOS
	APT=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts="$A/sourceparts"
		-o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache"
		-o Dir::State::Status=/dev/null -o APT::Architecture=amd64
		-o APT::Architectures::=amd64 -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
	echo "fetch-kernel: $NAME: apt-get update of a private $SUITE configuration ($A)" >&2
	apt-get "${APT[@]}" -qq --error-on=any update >&2 ||
		die "apt-get update failed for $SUITE (no network to deb.debian.org?) and the kernel is not cached in $DIR"
fi

# The concrete package the meta package depends on: linux-image-<release>.
pkg=$(apt-cache "${APT[@]}" depends "$META" 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
[ -n "$pkg" ] || die "apt-cache depends $META found no linux-image-* package (for bookworm: apt-get update; for bullseye, the private apt lists in $CACHE/apt-$SUITE; for arm64: dpkg --add-architecture arm64 first)"
release=${pkg#linux-image-}
release=${release%:*}	# linux-image-6.1.0-56-arm64:arm64

tmp=$(mktemp -d "$CACHE/kernels/.$NAME.XXXXXX") || die "mktemp in $CACHE/kernels failed"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-kernel: $NAME: downloading $pkg" >&2
(cd "$tmp" && apt-get "${APT[@]}" -qq download "$pkg" >&2) ||
	die "apt-get download $pkg failed (no network to deb.debian.org?) and the kernel is not cached in $DIR"
deb=$(ls "$tmp"/*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || die "apt-get download $pkg left no .deb"
dpkg-deb -x "$deb" "$tmp/root" || die "dpkg-deb -x $deb failed"
[ -e "$tmp/root/boot/vmlinuz-$release" ] || die "$pkg has no boot/vmlinuz-$release"
[ -d "$tmp/root/lib/modules/$release/kernel" ] || die "$pkg has no lib/modules/$release/kernel"
# The package does not ship modules.dep (the postinst runs depmod): make it.
command -v depmod > /dev/null || die "depmod not found: apt-get install kmod (scripts/install-deps.sh does)"
depmod -b "$tmp/root" "$release" || die "depmod -b $tmp/root $release failed"
rm -f "$deb"
for u in $USERLAND; do
	(cd "$tmp" && apt-get "${APT[@]}" -qq download "$u" >&2) ||
		die "apt-get download $u failed (no network to deb.debian.org?)"
	dpkg-deb -x "$tmp"/"${u%%:*}"_*.deb "$tmp/userland" || die "dpkg-deb -x of $u failed"
	rm -f "$tmp"/"${u%%:*}"_*.deb
done
[ -z "$USERLAND" ] || [ -x "$tmp/userland/bin/busybox" ] ||
	die "the unpacked userland has no bin/busybox"
echo "$pkg" > "$tmp/package"
echo "$release" > "$tmp/release"
: > "$tmp/ready"
rm -rf "$DIR.old"
[ -e "$DIR" ] && mv "$DIR" "$DIR.old"
mv "$tmp" "$DIR" || die "cannot move the unpacked kernel to $DIR"
rm -rf "$DIR.old"
trap - EXIT
echo "fetch-kernel: $NAME: $pkg unpacked in $DIR" >&2
echo "$DIR"
