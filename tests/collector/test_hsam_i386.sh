#!/bin/bash
# test_hsam_i386.sh - the alloc-metadata library on 32-bit x86 Linux:
# examples/am_pool.c and libhsam built by gcc-i686-linux-gnu
# ($OUT/i386/am_pool, docs/MCU.md), run here (the kernel's IA32
# emulation, the cross C library's loader); its dump of 32-bit pointers
# and 32-bit frames, with its `map` records, read by this machine's
# heapdecode: the same live set as the 64-bit build's test
# (test_am_pool.sh), named; and the codec there, the format's vectors
# exact (tests/codec/vectors_host.c). Well under 1 s.
set -u
. "$(dirname "$0")/../tracer/lib.sh"
P=$OUT/i386/am_pool

if [ ! -x "$P" ]; then
	echo "FAIL $P missing: make $P (scripts/install-deps.sh: gcc-i686-linux-gnu, libc6-dev-i386-cross)"
	exit 1
fi
check "am_pool is a 32-bit x86 program (ELFCLASS32, EM_386)" \
	test "$(od -An -tu1 -j4 -N1 "$P" | tr -d ' ')/$(od -An -tu2 -j18 -N2 "$P" | tr -d ' ')" = 1/3
"$P" > "$T/rec" 2> "$T/err"
rc=$?
if [ $rc -eq 126 ] || grep -q 'Exec format error' "$T/err"; then
	echo "FAIL this kernel runs no 32-bit x86 program (CONFIG_IA32_EMULATION, ia32_emulation=): $(cat "$T/err")"
	exit 1
fi
check "am_pool (i386) exits 0" test $rc -eq 0
expect_eq "every live pointer below 2^32" \
	"$(grep -cE '^heapsnoop: live pid=[0-9]+ ptr=0x[0-9a-f]{1,8} ~m#' "$T/rec")" 8
check "its own map record, 32-bit addresses" \
	grep -qE "^heapsnoop: map pid=[0-9]+ start=0x[0-9a-f]{1,8} end=0x[0-9a-f]{1,8} .* path=$P\$" "$T/rec"
fold "$T/rec"
expect_eq "make_name: 4 x 40 bytes from main" "$(folded_sum "$T/rec.bytes" "main;make_name")" 160
expect_eq "make_name: 4 blocks" "$(folded_sum "$T/rec.count" "main;make_name")" 4
expect_eq "make_buffer: 4 x 1000 bytes" "$(folded_sum "$T/rec.bytes" "main;make_buffer")" 4000
expect_eq "make_buffer: 4 blocks" "$(folded_sum "$T/rec.count" "main;make_buffer")" 4
check "stacks run from _start" grep -q '^_start;__libc_start_main;.*;main;make_buffer 4000$' "$T/rec.bytes"
expect_eq "nothing else live" "$(wc -l < "$T/rec.bytes")" 2
"$HD" --report "$T/rec" > "$T/report"
check "the codec on i386: every vector of tests/data/vectors.tsv exact" \
	test "$("$OUT/i386/vectors_host" "$(dirname "$0")/../data/vectors.tsv")" = "vectors: 600 of 600 exact"
check "--report names the file and line of the call" \
	grep -qE '#0  0x[0-9a-f]{1,8} make_buffer\+0x[0-9a-f]+ \(am_pool\) examples/am_pool.c:[0-9]+$' "$T/report"
finish
