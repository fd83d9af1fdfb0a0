#!/bin/bash
# test_preload_oldlibc.sh - libheapsnoop_preload.so needs nothing but the
# C library, at old symbol versions (docs/COLLECTOR.md, "Old C
# libraries"), and loads into a program of Debian 11's glibc 2.31: its
# DT_NEEDED only glibc's own libraries, its highest GLIBC_x.y at most
# 2.17 (x86-64 and, when built, arm64); then prog_collect built against
# the bullseye sysroot (scripts/glibc-sysroot.sh) run by that sysroot's
# own ld.so and libc, collected exactly, alone and under heapsnoop
# --preload (the table handed over from glibc 2.31). ~1 s.
set -u
. "$(dirname "$0")/../tracer/lib.sh"
FLOOR=2.17
S=$(scripts/glibc-sysroot.sh "$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')") ||
	{ echo "FAIL no bullseye sysroot (scripts/glibc-sysroot.sh)"; exit 1; }

needs() { # LIBRARY: its DT_NEEDED, one a line
	readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}
highest() { # LIBRARY: the highest GLIBC_x.y it needs
	objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1
}
for pl in "$OUT/libheapsnoop_preload.so" "$OUT/arm64/libheapsnoop_preload.so"; do
	[ -e "$pl" ] || continue
	name=${pl#"$OUT"/}
	expect_eq "$name: needs glibc's libraries only" \
		"$(needs "$pl" | grep -vcE '^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux.*)$')" 0
	h=$(highest "$pl")
	check "$name: highest symbol version GLIBC_$h, at most $FLOOR" \
		test "$(printf '%s\n%s\n' "$h" "$FLOOR" | sort -V | tail -n 1)" = "$FLOOR"
done

case $(uname -m) in
x86_64) LDSO=$S/lib64/ld-linux-x86-64.so.2 LIBS=$S/lib/x86_64-linux-gnu ;;
aarch64) LDSO=$S/lib/ld-linux-aarch64.so.1 LIBS=$S/lib/aarch64-linux-gnu ;;
esac
old() { # RECORDS ARGS...: prog_collect_old under glibc 2.31, collected into RECORDS
	local rec=$1; shift
	HEAPSNOOP_OUTPUT=$rec LD_PRELOAD=$OUT/libheapsnoop_preload.so \
		"$LDSO" --library-path "$LIBS" "$PROGS/prog_collect_old" "$@" > "$rec.stdout"
}
check "the sysroot's ld.so runs a glibc 2.31 program" \
	bash -c "'$LDSO' --library-path '$LIBS' '$PROGS/prog_collect_old' deep 3 | grep -qx 'ok deep'"
old "$T/deep" deep 26
check "glibc 2.31: the program ran with the preload" grep -qx 'ok deep' "$T/deep.stdout"
check "glibc 2.31: the libc collected from is bullseye's" grep -q "^heapsnoop: map .* path=$LIBS/libc.so.6$" "$T/deep"
fold "$T/deep"
# glibc 2.31 calls main from __libc_start_main itself: 30 frames from _start.
expect_eq "glibc 2.31: 26 calls deep, whole to _start" \
	"$(grep -cE '^_start;__libc_start_main;main;case_deep;(deep_recurse;){25}deep_recurse 1234$' "$T/deep.bytes")" 1
# Under heapsnoop --preload: the table handed over from a glibc 2.31 process.
"$HS" --preload -o "$T/hs" -- "$LDSO" --library-path "$LIBS" "$PROGS/prog_collect_old" deep 26 \
	> "$T/hs.stdout" 2> "$T/hs.err"
check "glibc 2.31 under heapsnoop --preload: exit 0, nothing said" \
	bash -c "[ $? -eq 0 ] && ! grep -q . '$T/hs.err'"
fold "$T/hs"
expect_eq "glibc 2.31 under heapsnoop --preload: 26 calls deep, whole to _start" \
	"$(grep -cE '^_start;__libc_start_main;main;case_deep;(deep_recurse;){25}deep_recurse 1234$' "$T/hs.bytes")" 1
old "$T/al" align
check "glibc 2.31: every aligned pointer aligned" grep -qx 'ok align' "$T/al.stdout"
fold "$T/al"
for f in align_posix align_aligned_alloc align_memalign; do
	expect_eq "glibc 2.31: $f live bytes" "$(folded_sum "$T/al.bytes" "case_align;$f")" 8185
done
finish
