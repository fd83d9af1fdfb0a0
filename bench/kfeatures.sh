#!/bin/bash
# kfeatures.sh - what the fallbacks for older kernels cost, on this kernel:
# heapsnoop with every BPF feature it probes against heapsnoop --without
# each one (the path a kernel without it takes: docs/KERNELS.md), on the
# tracer benchmark's workload (bench/workload.c, frame pointers), in both
# unwinding modes, with the floor (--empty-probes) in the same run.
# Modes run in turn, round after round, best of 3; overheads against the
# untraced run, ratios against the full-featured path.
#   usage: bench/kfeatures.sh [BUILD_DIR]
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
N=${BENCH_OPS:-2000000}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
WL=$T/workload
gcc -O2 -g -fno-omit-frame-pointer -o "$WL" bench/workload.c
. bench/lib.sh

HS=("$OUT/heapsnoop" -q -o /dev/null)
ALL=task-storage,task-btf,find-vma
echo "kernel-feature fallbacks: $N allocator calls per run, modes in turn, best of 3"
for _ in 1 2 3; do
	once untraced "$WL" "$N"
	once floor "${HS[@]}" --empty-probes -- "$WL" "$N"
	once dwarf "${HS[@]}" -- "$WL" "$N"
	once dwarf_nots "${HS[@]}" --without task-storage -- "$WL" "$N"
	once dwarf_510 "${HS[@]}" --without "$ALL" -- "$WL" "$N"
	once fp "${HS[@]}" --unwind fp -- "$WL" "$N"
	once fp_510 "${HS[@]}" --unwind fp --without "$ALL" -- "$WL" "$N"
done
for m in dwarf dwarf_nots dwarf_510 fp fp_510; do
	grep -h "events lost\|EVENTS LOST" "$T/$m.err" | sort | uniq -c | sed "s/^/  $m: /"
done
awk -v u="$(cat "$T/untraced")" -v f="$(cat "$T/floor")" -v d="$(cat "$T/dwarf")" \
    -v dn="$(cat "$T/dwarf_nots")" -v d5="$(cat "$T/dwarf_510")" -v p="$(cat "$T/fp")" \
    -v p5="$(cat "$T/fp_510")" 'BEGIN {
	printf "  %-46s %9s %9s %9s\n", "", "ns/call", "overhead", "vs full"
	printf "  %-46s %9.1f\n", "untraced", u
	printf "  %-46s %9.1f %9.1f\n", "floor (empty probes)", f, f - u
	row("dwarf, every feature (5.17+)", d, d)
	row("dwarf --without task-storage (LRU hash)", dn, d)
	row("dwarf --without all three (5.10 path)", d5, d)
	row("fp, every feature", p, p)
	row("fp --without all three (5.10 path)", p5, p)
}
function row(name, v, base) {
	printf "  %-46s %9.1f %9.1f %8.2fx\n", name, v, v - u, (v - u) / (base - u)
}'
