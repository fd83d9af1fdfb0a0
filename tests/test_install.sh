#!/bin/bash
# test_install.sh - make install and make dist: exactly the expected
# files (the two programs, the preload library, libhsam.a with its headers
# and pkg-config file, the man pages); examples/am_pool.c built against the
# installed libhsam.a through `pkg-config --cflags --libs heapsnoop-am`
# runs, and heapdecode names its frames; man -l renders both pages
# without a warning; each dist tarball lists the same files under one
# folder named for the version, the commit and the machine, and its
# pkg-config file works wherever it is unpacked. About 15 s (make dist
# re-runs the arm64 install).
# Usage: test_install.sh BUILD_DIR
set -u
. "$(dirname "$0")/tracer/lib.sh"
REPO=$(cd "$(dirname "$0")/.." && pwd)
mk() { make -C "$REPO" --no-print-directory OUTPUT="$OUT" "$@" > "$T/make.log" 2>&1 ||
	{ cat "$T/make.log"; return 1; }; }
FILES="bin/heapdecode bin/heapsnoop include/heapsnoop/alloc_metadata.h include/heapsnoop/codec.h
lib/libheapsnoop_preload.so lib/libhsam.a lib/pkgconfig/heapsnoop-am.pc
lib/systemd/system/heapsnoop-agent.service
share/man/man1/heapdecode.1 share/man/man8/heapsnoop.8"
files_under() { # DIR: every file and link under it, relative, on one line
	(cd "$1" && find . -type f -o -type l) | sed 's|^\./||' | sort | tr '\n' ' '
}
want() { # PREFIX: $FILES under it, on one line
	for f in $FILES; do echo "$1$f"; done | sort | tr '\n' ' '
}
# examples/am_pool.c against the library pkg-config finds (environment
# given), run; its live blocks named by heapdecode: its two call sites.
am_pool() { # NAME ENV...
	local name=$1 flags; shift
	rm -f "$T/am_pool" "$T/am.rec"
	flags=$(env "$@" pkg-config --cflags --libs heapsnoop-am) &&
		gcc -O1 -g -fno-omit-frame-pointer -fno-inline "$REPO/examples/am_pool.c" $flags \
			-o "$T/am_pool" && "$T/am_pool" > "$T/am.rec"
	check "$name: am_pool builds (pkg-config: $flags) and runs" test $? -eq 0
	"$HD" --report "$T/am.rec" > "$T/am.report"
	check "$name: heapdecode names am_pool's frames" \
		bash -c "grep -qE ' make_buffer\+0x[0-9a-f]+ \(am_pool\) .*examples/am_pool.c:[0-9]+$' '$T/am.report' &&
			grep -qE ' make_name\+0x[0-9a-f]+ \(am_pool\) ' '$T/am.report'"
}

check "make install DESTDIR PREFIX=/usr/local" mk install DESTDIR="$T/root" PREFIX=/usr/local
expect_eq "make install: exactly the expected files" "$(files_under "$T/root")" "$(want usr/local/)"
for f in heapsnoop heapdecode; do
	check "installed $f is the build's, executable" \
		bash -c "cmp -s '$OUT/$f' '$T/root/usr/local/bin/$f' && test -x '$T/root/usr/local/bin/$f'"
done
ver=$("$HS" --version | sed -n 's/^heapsnoop \([0-9.]*\) (git \(.*\))$/\1-\2/p')
expect_eq "pkg-config: the version" "$(PKG_CONFIG_LIBDIR="$T/root/usr/local/lib/pkgconfig" \
	pkg-config --modversion heapsnoop-am)" "${ver%%-*}"
am_pool "installed" PKG_CONFIG_SYSROOT_DIR="$T/root" PKG_CONFIG_LIBDIR="$T/root/usr/local/lib/pkgconfig"

for page in man8/heapsnoop.8 man1/heapdecode.1; do
	p=${page#*/} prog=${p%.*} sec=${p#*.}
	MANWIDTH=80 man --warnings -l "$T/root/usr/local/share/man/$page" > "$T/$p.txt" 2> "$T/$p.err"
	check "man -l $p: renders, no warning" bash -c "test $? -eq 0 && ! test -s '$T/$p.err'"
	check "man -l $p: its name, synopsis, an option of --help, examples" \
		bash -c "grep -q '^${prog^^}($sec)' '$T/$p.txt' && grep -q '^NAME' '$T/$p.txt' &&
			grep -q '^SYNOPSIS' '$T/$p.txt' && grep -q '^EXAMPLES' '$T/$p.txt' &&
			grep -q -- '--version' '$T/$p.txt' && grep -q '^SEE ALSO' '$T/$p.txt'"
done
check "heapsnoop(8): the exit statuses" \
	bash -c "grep -q '^EXIT STATUS' '$T/heapsnoop.8.txt' && grep -q '^ *23 *--fail-on-leak' '$T/heapsnoop.8.txt'"
check "heapdecode(1): DEBUGINFOD_URLS" grep -q '^ *DEBUGINFOD_URLS' "$T/heapdecode.1.txt"

check "make dist" mk dist
for m in x86_64 aarch64; do
	name=heapsnoop-$ver-$m tar=$OUT/dist/heapsnoop-$ver-$m.tar.gz
	check "dist $m: $tar" test -f "$tar"
	expect_eq "dist $m: the tarball lists exactly the expected files" \
		"$(tar -tzf "$tar" | grep -v '/$' | sort | tr '\n' ' ')" "$(want "$name/")"
	mkdir -p "$T/$m"
	tar -xzf "$tar" -C "$T/$m"
	machine=$(readelf -hW "$T/$m/$name/bin/heapsnoop" | sed -n 's/^ *Machine: *//p')
	expect_eq "dist $m: its heapsnoop's machine" "$machine" \
		"$([ $m = x86_64 ] && echo 'Advanced Micro Devices X86-64' || echo AArch64)"
done
check "dist x86_64: its heapsnoop is the build's" cmp -s "$HS" "$T/x86_64/heapsnoop-$ver-x86_64/bin/heapsnoop"
# Unpacked anywhere: the pkg-config file's prefix is its own place.
am_pool "dist x86_64 unpacked elsewhere" PKG_CONFIG_LIBDIR="$T/x86_64/heapsnoop-$ver-x86_64/lib/pkgconfig"
finish
