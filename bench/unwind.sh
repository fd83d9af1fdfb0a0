#!/bin/bash
# unwind.sh - what complete stacks cost without frame pointers: the tracer
# benchmark's workload (bench/workload.c) built twice, with frame pointers
# and with -fomit-frame-pointer, each traced in the mode it needs:
#   fp build,   --unwind fp     (the BPF frame-pointer walk)
#   nofp build, --unwind dwarf  (stack copy + CFI unwinding, the default)
# plus, for reference, the nofp build under --unwind fp (cheap, and wrong:
# one frame). Overheads are against each build's own untraced run; stack
# completeness comes from heapsnoop -v's unwinding line. Best of 3.
#   usage: bench/unwind.sh [BUILD_DIR]
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
N=${BENCH_OPS:-2000000}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
gcc -O2 -g -fno-omit-frame-pointer -o "$T/wl_fp" bench/workload.c
gcc -O2 -g -fomit-frame-pointer -o "$T/wl_nofp" bench/workload.c

. bench/lib.sh
# "complete/stacks" from the last run's unwinding line (-v, dwarf only).
complete() {
	sed -n 's/^heapsnoop: unwinding: \([0-9]*\) stacks, \([0-9]*\) complete.*/\2\/\1/p' \
		"$T/$1.err" | tail -1
}

echo "unwinding benchmark: $N allocator calls per run, best of 3"
best u_fp "$T/wl_fp" "$N"
best u_nofp "$T/wl_nofp" "$N"
best fp "$OUT/heapsnoop" -q -v --unwind fp -o "$T/fp.rec" -- "$T/wl_fp" "$N"
best dwarf "$OUT/heapsnoop" -q -v --unwind dwarf -o "$T/dwarf.rec" -- "$T/wl_nofp" "$N"
best fp_on_nofp "$OUT/heapsnoop" -q -v --unwind fp -o "$T/fpn.rec" -- "$T/wl_nofp" "$N"
for m in fp dwarf fp_on_nofp; do
	grep -h "events lost\|EVENTS LOST\|truncated stack" "$T/$m.err" | sort | uniq -c |
		sed "s/^/  $m: /"
done
# Stacks that reach _start, among the live ones written at exit.
reach() { "$OUT/heapdecode" --folded --count "$1" |
	awk '{ n += $NF; if ($0 ~ /^_start;/) s += $NF } END { printf "%d/%d", s, n }'; }
awk -v ufp="$(cat "$T/u_fp")" -v unf="$(cat "$T/u_nofp")" -v fp="$(cat "$T/fp")" \
    -v dw="$(cat "$T/dwarf")" -v fn="$(cat "$T/fp_on_nofp")" \
    -v cdw="$(complete dwarf)" -v rfp="$(reach "$T/fp.rec")" -v rdw="$(reach "$T/dwarf.rec")" \
    -v rfn="$(reach "$T/fpn.rec")" 'BEGIN {
	printf "  %-36s %9s %9s %11s\n", "", "ns/call", "overhead", "to _start"
	printf "  %-36s %9.1f\n", "untraced, frame pointers", ufp
	printf "  %-36s %9.1f\n", "untraced, no frame pointers", unf
	printf "  %-36s %9.1f %9.1f %11s\n", "fp build, --unwind fp", fp, fp - ufp, rfp
	printf "  %-36s %9.1f %9.1f %11s\n", "nofp build, --unwind dwarf", dw, dw - unf, rdw
	printf "  %-36s %9.1f %9.1f %11s\n", "nofp build, --unwind fp (wrong)", fn, fn - unf, rfn
	printf "  dwarf overhead / fp overhead: %.2f (aim: <= 1.5); stacks unwound complete: %s\n",
		(dw - unf) / (fp - ufp), cdw
}'
