#!/bin/bash
# test_cfiplace.sh - both unwinders find CFI where a program keeps it: the
# BPF tracer (heapsnoop, --unwind dwarf, libdw's CFI) and the in-process
# collector (heapsnoop --preload, user/collector/unwind/modcfi.c) on
# tests/tracer/prog_deep.c built without frame pointers three ways (the
# Makefile's CFI_PLACES): its CFI in .eh_frame with .eh_frame_hdr (_eh),
# in .eh_frame linked --no-eh-frame-hdr (_nohdr), in .debug_frame alone
# (_dbg). prog_deep 5's 1234-byte block must have the same frames both
# ways, from _start to the call site (_start, __libc_start_main,
# __libc_start_call_main, main, deep_a, deep_b, deep_c, deep_a, deep_b),
# and no record cut. Before modcfi.c, --preload cut _nohdr's and _dbg's
# after deep_b (cut=unreadable). Then --snip-pre/--snip-post both ways,
# the same frames dropped (--preload refused them). About 3 s.
set -u
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

want='_start;__libc_start_main;__libc_start_call_main;main;deep_a;deep_b;deep_c;deep_a;deep_b'
# The 1234-byte block's frames, root first, symbol versions off.
frames() { # LOG
	"$HD" --folded "$1" | sed -n 's/ 1234$//p' | sed -E 's/@[^;]*//g'
}

for p in eh nohdr dbg; do
	prog=$PROGS/prog_deep_$p
	"$HS" -q -o bpf_$p -- "$prog" 5 > /dev/null 2> bpf_$p.err
	check "$p: heapsnoop (BPF) exits 0" test $? -eq 0
	"$HS" --preload -o pl_$p -- "$prog" 5 > /dev/null 2> pl_$p.err
	check "$p: heapsnoop --preload exits 0" test $? -eq 0
	expect_eq "$p: BPF's frames, _start to the call site" "$(frames bpf_$p)" "$want"
	expect_eq "$p: --preload's frames, the same" "$(frames pl_$p)" "$(frames bpf_$p)"
	expect_eq "$p: --preload cut no record" "$(grep -c ' cut=' pl_$p)" 0
done
# --snip-pre 1 --snip-post 2 honoured by both (issue 34: --preload ignored
# them, then refused them): the call site and _start, __libc_start_main off.
snipped='__libc_start_call_main;main;deep_a;deep_b;deep_c;deep_a'
"$HS" -q --snip-pre 1 --snip-post 2 -o bpf_snip -- "$PROGS/prog_deep_eh" 5 > /dev/null 2> bpf_snip.err
check "snip: heapsnoop (BPF) exits 0" test $? -eq 0
"$HS" --preload --snip-pre 1 --snip-post 2 -o pl_snip -- "$PROGS/prog_deep_eh" 5 > /dev/null 2> pl_snip.err
check "snip: heapsnoop --preload exits 0, nothing said" bash -c "test $? -eq 0 && test ! -s pl_snip.err"
expect_eq "snip: BPF drops the innermost and the 2 outermost" "$(frames bpf_snip)" "$snipped"
expect_eq "snip: --preload the same" "$(frames pl_snip)" "$snipped"
# --unwind fp both ways: each takes its chain as whole (x86-64's ends in
# libc's __libc_start_call_main, arm64's at _start), so both drop its 2
# outermost.
"$HS" -q --unwind fp -o bpf_fp -- "$PROGS/prog_deep" 5 > /dev/null 2>&1
"$HS" -q --unwind fp --snip-post 2 -o bpf_snipfp -- "$PROGS/prog_deep" 5 > /dev/null 2>&1
"$HS" --preload --unwind fp --snip-post 2 -o pl_snipfp -- "$PROGS/prog_deep" 5 > /dev/null 2>&1
expect_eq "snip: --unwind fp --snip-post 2, BPF's: its whole chain less 2" "$(frames bpf_snipfp)" \
	"$(frames bpf_fp | cut -d';' -f3-)"
expect_eq "snip: --unwind fp --snip-post 2, --preload's the same" "$(frames pl_snipfp)" "$(frames bpf_snipfp)"

# The places are as named: the programs as the linker made them (where
# binutils are: the arm64 guest's root has none).
if ! command -v readelf > /dev/null || ! command -v nm > /dev/null; then
	echo "skip the sections' checks: no readelf or nm here"
	[ "$fails" -eq 0 ]
	exit
fi
check "nohdr: no .eh_frame_hdr" bash -c "! readelf -lW '$PROGS/prog_deep_nohdr' | grep -q GNU_EH_FRAME"
# Which section's FDE covers ADDR (hex, no 0x) in PROG: eh_frame, debug_frame, or none.
covered_by() { # PROG ADDR
	readelf -wf "$1" | awk -v a="$2" '
		function hex(s,  i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
		/^Contents of the / { sec = $4; sub(/^\./, "", sec); next }
		/ FDE / { split(substr($NF, 4), r, /\.\./); if (hex(a) >= hex(r[1]) && hex(a) < hex(r[2])) { print sec; exit } }'
}
main_at() { nm "$1" | awk '$3 == "main" { print $1 }'; }
expect_eq "dbg: main's CFI in .debug_frame alone" "$(covered_by "$PROGS/prog_deep_dbg" "$(main_at "$PROGS/prog_deep_dbg")")" "debug_frame"
expect_eq "eh: main's CFI in .eh_frame" "$(covered_by "$PROGS/prog_deep_eh" "$(main_at "$PROGS/prog_deep_eh")")" "eh_frame"

[ "$fails" -eq 0 ]
