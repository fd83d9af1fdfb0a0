#!/bin/bash
# make-python.sh - a CPython built from Debian's sources in a configuration
# Debian does not package, for test_python's "other builds", in a cache
# shared by all checkouts and kept between runs (like tests/distro's roots
# and the kernel matrix's kernels):
#   make-python.sh NAME      NAME: 3.14t, 3.13t (free-threaded, --disable-gil)
# prints the build's cache directory, which holds:
#   prefix/    the installed build (prefix/bin/python3.14t)
#   recipe     what it was made from (the source, its sha256, configure's
#              options)
#   took       how many seconds configure, make and make install took
# 3.14t: Debian's python3.14 source package's upstream tarball
# (python3.14_3.14.7.orig.tar.xz of 3.14.7-1, checked against the sha256
# its .dsc gives; the mirror keeps no tarball of forky's 3.14.8-1),
# configured --disable-gil with neither PGO
# nor LTO (the build's minutes, not its speed, matter here) and
# --without-ensurepip, built with this machine's compiler; symbols kept
# (.symtab), DWARF stripped, linked static (libpython in the executable). 3.13t: the same
# from trixie's python3.13 3.13.5 (python3.13_3.13.5.orig.tar.xz, its
# sha256 from trixie's Sources).
#
# A build is made once, by whoever needs it first, under a lock, in a
# temporary directory renamed into place when complete; the directory's
# name ends in a hash of its recipe. Needs network to the mirror the first
# time, a C compiler and make; nothing of Python's optional modules
# (ssl, sqlite, ...) is needed by the tests, so none of their libraries.
# Environment:
#   PYTHON_CACHE   the cache (default /var/cache/heapsnoop/python)
#   DISTRO_MIRROR  the Debian mirror (default http://deb.debian.org/debian)
set -u
NAME=${1:?usage: $0 3.14t|3.13t}
CACHE=${PYTHON_CACHE:-/var/cache/heapsnoop/python}
MIRROR=${DISTRO_MIRROR:-http://deb.debian.org/debian}
die() { echo "make-python: $NAME: $*" >&2; exit 1; }

case $NAME in
3.14t)
	TARBALL=python3.14_3.14.7.orig.tar.xz
	URL=$MIRROR/pool/main/p/python3.14/$TARBALL
	SHA256=3b48dac8fb59f62eaa67ac83c1eb12bda1b7a08406dd286e252c11a66be27f81
	CONFIGURE="--disable-gil --without-ensurepip"
	;;
3.13t)
	TARBALL=python3.13_3.13.5.orig.tar.xz
	URL=$MIRROR/pool/main/p/python3.13/$TARBALL
	SHA256=93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640
	CONFIGURE="--disable-gil --without-ensurepip"
	;;
*) die "unknown build (known: 3.14t 3.13t)" ;;
esac
recipe="$TARBALL $SHA256 $CONFIGURE v1"
key=$(printf '%s\n' "$recipe" | sha256sum | cut -c1-12)
DIR=$CACHE/$NAME.$key
if [ -e "$DIR/ready" ]; then
	echo "$DIR"
	exit 0
fi
mkdir -p "$CACHE" || die "cannot create the cache $CACHE (run as root, or set PYTHON_CACHE to a writable directory)"
exec 9> "$CACHE/.$NAME.lock"
flock 9 || die "cannot lock $CACHE/.$NAME.lock"
if [ -e "$DIR/ready" ]; then
	echo "$DIR"
	exit 0
fi
for tool in cc make curl xz; do
	command -v $tool > /dev/null || die "$tool not found"
done
rm -rf "$CACHE/.$NAME.tmp."*
tmp=$(mktemp -d "$CACHE/.$NAME.tmp.XXXXXX") || die "mktemp in $CACHE failed"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
start=$SECONDS
echo "make-python: $NAME: building from $URL (once; cached in $DIR)" >&2
curl -fsS -o "$tmp/$TARBALL" "$URL" || die "cannot fetch $URL"
echo "$SHA256  $tmp/$TARBALL" | sha256sum -c --quiet - || die "$TARBALL: sha256 differs from its python3.14_3.14.7-1.dsc"
mkdir "$tmp/src" && tar -xJf "$tmp/$TARBALL" -C "$tmp/src" --strip-components=1 ||
	die "cannot unpack $TARBALL"
# The prefix is the final one: python finds its library by it.
(cd "$tmp/src" && ./configure --prefix="$DIR/prefix" $CONFIGURE > "$tmp/build.log" 2>&1 &&
	make -j"$(nproc)" >> "$tmp/build.log" 2>&1) || {
	tail -n 20 "$tmp/build.log" >&2
	die "the build failed (the lines above)"
}
# make install writes to the final prefix: a half-made one is removed
# first, and the directory's ready mark comes last.
rm -rf "$DIR"
mkdir -p "$DIR" || die "cannot create $DIR"
(cd "$tmp/src" && make install >> "$tmp/build.log" 2>&1) || {
	tail -n 20 "$tmp/build.log" >&2
	rm -rf "$DIR"
	die "make install failed (the lines above)"
}
# Their DWARF out, .symtab kept, as a distribution ships them: heapdecode
# reads 19 MiB of 3.14t's .debug_info for each log otherwise (6 s a
# heapdecode -s on this busy machine, several a test).
find "$DIR/prefix/bin/python$NAME" "$DIR/prefix/lib/python$NAME/lib-dynload" -type f \
	\( -name "python$NAME" -o -name '*.so' \) -exec strip --strip-debug {} + ||
	die "strip --strip-debug failed"
echo "$recipe" > "$DIR/recipe"
echo $((SECONDS - start)) > "$DIR/took"
: > "$DIR/ready"
echo "make-python: $NAME: made in $((SECONDS - start)) s: $DIR" >&2
echo "$DIR"
