#!/bin/bash
# compare.sh - two builds of heapsnoop on bench/workload.c in one run: the
# same modes (the floor, --unwind dwarf, --unwind fp) of each, round after
# round in turn (so drift of the machine hits both alike), best ns per
# call of ROUNDS, and the ratios B/A. For a change that must not cost
# anything (a restructuring) or one that must gain: build A from the
# commit before it (git worktree add /tmp/a COMMIT && make -C /tmp/a).
#   usage: bench/compare.sh BUILD_A BUILD_B [ROUNDS]
set -eu
A=$1 B=$2 ROUNDS=${3:-5}
cd "$(dirname "$0")/.."
N=${BENCH_OPS:-2000000}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
WL=$T/workload
gcc -O2 -g -fno-omit-frame-pointer -o "$WL" bench/workload.c
. bench/lib.sh

echo "compare: $A (A) against $B (B), $N allocator calls per run, best of $ROUNDS rounds"
for _ in $(seq "$ROUNDS"); do
	once untraced "$WL" "$N"
	for b in A B; do
		hs=${!b}/heapsnoop
		once "floor_$b" "$hs" -q --empty-probes -o /dev/null -- "$WL" "$N"
		once "dwarf_$b" "$hs" -q -o /dev/null -- "$WL" "$N"
		once "fp_$b" "$hs" -q --unwind fp -o /dev/null -- "$WL" "$N"
	done
done
for b in A B; do
	grep -h "events lost\|EVENTS LOST" "$T/dwarf_$b.err" "$T/fp_$b.err" | sort | uniq -c |
		sed "s/^/  $b: /"
done
u=$(cat "$T/untraced")
printf "  %-24s %12s %12s %8s\n" "ns/call (untraced $u)" "A" "B" "B/A"
for m in floor dwarf fp; do
	awk -v m="$m" -v a="$(cat "$T/${m}_A")" -v b="$(cat "$T/${m}_B")" -v u="$u" 'BEGIN {
		printf "  %-24s %12.1f %12.1f %8.3f\n", m, a, b, b / a
		printf "  %-24s %12.1f %12.1f %8.3f\n", m " above untraced", a - u, b - u, (b - u) / (a - u)
	}'
done
