#!/bin/bash
# make-root.sh - a Debian root filesystem made with debootstrap, for the
# tests that run heapsnoop's release binaries on another userland
# (tests/distro: the binaries copied alone into it; tests/kmatrix and
# tests/arm64: the guests' root, docs/KERNELS.md), in a cache shared by all
# checkouts and kept between runs:
#   make-root.sh NAME       NAME: bullseye, trixie, forky, forky-otel (x86-64),
#                           trixie-arm64
# prints the root's cache directory, which holds:
#   root/      the root filesystem
#   packages   its packages and versions (dpkg-query), one a line
#   recipe     what it was made from (suite, architecture, packages)
#   took       how many seconds it took to make
# bullseye is Debian 11 (glibc 2.31), trixie Debian 13: `debootstrap
# --variant=minbase` (the Essential and required packages: perl-base,
# bash, coreutils, ...) and what the tests need beyond that (INCLUDE
# below): nothing for bullseye; for trixie, which is also the x86-64
# guests' root, python3 (test_syswide reads --json) and libc6-dbg
# (test_semantics names glibc's static __libc_start_call_main).
# forky is Debian 14 (testing): python3.14, for test_python's 3.14 chains
# (debootstrap 1.0.128 has no script named forky: sid's, which all
# suites since buster use, is passed by path).
# forky-otel is forky with Debian's OpenTelemetry protocol: its .proto
# files (opentelemetry-proto) and the Python classes generated from them
# (python3-opentelemetry-proto, on python3-protobuf), for the agent's
# OTLP receiver (tests/agent/otlp_server.py): code that is not heapsnoop's
# decodes heapsnoop's pushes.
# trixie-arm64 is the arm64 guest's root, with libc6-dbg, libcmocka0
# (the collector's unwinder test runs there), python3 (3.13), luajit and
# procps (Python's and LuaJIT's arm64 tests, tests/arm64; test_preload_python's
# pgrep): `debootstrap --foreign` unpacks it without running its programs (they are arm64 code: no qemu-user
# needed), the packages the first stage leaves packed are unpacked the
# same way (dpkg-deb -x), and what the maintainer scripts would have made
# and the guest's tests use (/etc/passwd, the awk link) is made here.
# Its packages are never configured; the guest runs it read-only.
#
# A root is made once, by whoever needs it first, under a lock (one make at
# a time per name; another waits and then uses it), in a temporary
# directory renamed into place when complete: a root in the cache is whole.
# Its directory's name ends in a hash of its recipe, so a changed package
# list makes a new root and never changes one a running test uses.
# Needs root (debootstrap), network to the mirror the first time, and
# debootstrap (scripts/install-deps.sh installs it).
# Environment:
#   DISTRO_CACHE   the cache (default /var/cache/heapsnoop/roots)
#   DISTRO_MIRROR  the Debian mirror (default http://deb.debian.org/debian)
set -u
NAME=${1:?usage: $0 bullseye|trixie|forky|forky-otel|trixie-arm64}
CACHE=${DISTRO_CACHE:-/var/cache/heapsnoop/roots}
MIRROR=${DISTRO_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
die() { echo "make-root: $NAME: $*" >&2; exit 1; }

FOREIGN=0
SCRIPT=
case $NAME in
bullseye) SUITE=bullseye ARCH=amd64 INCLUDE= ;;
trixie) SUITE=trixie ARCH=amd64 INCLUDE=python3,libc6-dbg ;;
forky) SUITE=forky ARCH=amd64 INCLUDE=python3.14 SCRIPT=/usr/share/debootstrap/scripts/sid ;;
forky-otel) SUITE=forky ARCH=amd64 SCRIPT=/usr/share/debootstrap/scripts/sid
	INCLUDE=python3,python3-protobuf,python3-opentelemetry-proto,opentelemetry-proto ;;
trixie-arm64) SUITE=trixie ARCH=arm64 INCLUDE=libc6-dbg,libcmocka0,python3,luajit,procps FOREIGN=1 ;;
*) die "unknown root (known: bullseye trixie forky forky-otel trixie-arm64)" ;;
esac
# Bump the last field when what is done to a root below changes.
recipe="$SUITE $ARCH minbase include=$INCLUDE foreign=$FOREIGN v1"
key=$(printf '%s\n' "$recipe" | sha256sum | cut -c1-12)
DIR=$CACHE/$NAME.$key
if [ -e "$DIR/ready" ]; then
	echo "$DIR"
	exit 0
fi
mkdir -p "$CACHE" || die "cannot create the cache $CACHE (run as root, or set DISTRO_CACHE to a writable directory)"
exec 9> "$CACHE/.$NAME.lock"
flock 9 || die "cannot lock $CACHE/.$NAME.lock"
if [ -e "$DIR/ready" ]; then
	echo "$DIR"
	exit 0
fi
command -v debootstrap > /dev/null || die "debootstrap not found: scripts/install-deps.sh installs it"
[ -r "$KEYRING" ] || die "$KEYRING missing: apt-get install debian-archive-keyring"

# What a make killed before its end left (the lock says none is running):
# its mounts first, so that removing it never reaches into them.
unmount_under() { # DIR
	findmnt -rn -o TARGET | awk -v d="$1/" 'index($0, d) == 1' | sort -r |
		while IFS= read -r m; do umount -l "$m"; done
}
for old in "$CACHE/.$NAME.tmp."*; do
	[ -d "$old" ] || continue
	unmount_under "$old"
	rm -rf --one-file-system "$old"
done

tmp=$(mktemp -d "$CACHE/.$NAME.tmp.XXXXXX") || die "mktemp in $CACHE failed"
trap 'unmount_under "$tmp"; rm -rf --one-file-system "$tmp"' EXIT
chmod 755 "$tmp"
start=$SECONDS
opts=(--variant=minbase --arch="$ARCH" --keyring="$KEYRING")
[ -n "$INCLUDE" ] && opts+=(--include="$INCLUDE")
[ "$FOREIGN" = 1 ] && opts+=(--foreign)
echo "make-root: $NAME: debootstrap ${opts[*]} $SUITE (once; cached in $DIR)" >&2
debootstrap "${opts[@]}" "$SUITE" "$tmp/root" "$MIRROR" $SCRIPT > "$tmp/debootstrap.log" 2>&1 || {
	tail -n 20 "$tmp/debootstrap.log" >&2
	[ -f "$tmp/root/debootstrap/debootstrap.log" ] && tail -n 20 "$tmp/root/debootstrap/debootstrap.log" >&2
	die "debootstrap failed (the lines above; no network to $MIRROR?)"
}
R=$tmp/root
if [ "$FOREIGN" = 1 ]; then
	# The first stage unpacked the required packages; the others (the
	# include list and what it pulls in) wait in apt's archive for a second
	# stage that would run their programs: unpack them too.
	for deb in "$R"/var/cache/apt/archives/*.deb; do
		dpkg-deb -x "$deb" "$R" || die "dpkg-deb -x $deb failed"
	done
	# What maintainer scripts make and the tests use: the users and
	# groups (base-passwd), awk (mawk's alternative).
	cp "$R/usr/share/base-passwd/passwd.master" "$R/etc/passwd" &&
		cp "$R/usr/share/base-passwd/group.master" "$R/etc/group" ||
		die "no base-passwd masters to make /etc/passwd from"
	[ -e "$R/usr/bin/awk" ] || ln -s mawk "$R/usr/bin/awk" || die "cannot link awk"
	pkgs=$(for deb in "$R"/var/cache/apt/archives/*.deb; do
		dpkg-deb -f "$deb" Package Version | paste -sd' '
	done)
	rm -rf "$R"/var/cache/apt/archives/*.deb "$R"/var/lib/apt/lists/*_Packages "$R/debootstrap"
else
	chroot "$R" perl -e 'exit 0' || die "the root's own perl does not run"
	pkgs=$(chroot "$R" dpkg-query -W -f '${Package} ${Version}\n') || die "dpkg-query in the root failed"
	rm -rf "$R"/var/cache/apt/archives/*.deb "$R"/var/lib/apt/lists/*_Packages
fi
for f in bin/bash usr/bin/perl usr/bin/awk; do
	[ -e "$R/$f" ] || die "the root has no /$f"
done
printf '%s\n' "$pkgs" | sort > "$tmp/packages"
echo "$recipe" > "$tmp/recipe"
echo $((SECONDS - start)) > "$tmp/took"
rm -f "$tmp/debootstrap.log"
: > "$tmp/ready"
mv "$tmp" "$DIR" || die "cannot move the root to $DIR"
trap - EXIT
echo "make-root: $NAME: made in $((SECONDS - start)) s, $(wc -l < "$DIR/packages") packages, $(du -sm "$DIR/root" | cut -f1) MiB: $DIR" >&2
echo "$DIR"
