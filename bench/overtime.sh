#!/bin/bash
# overtime.sh - what the whole-run accounting (issue 13: per-stack calls,
# bytes, frees, temporary, at-peak values; per-process peak; --sample-ms)
# costs: bench/workload.c launched by heapsnoop without it (BASE,
# a build of the commit before it) and with it (this build), and by the
# floor (--empty-probes). The modes take turns, run by run (this VM's speed
# drifts over minutes and other users share it); best and spread of
# RUNS (5) each. Per mode: the traced program's ns per call, and the
# loader's CPU per event handled (allocations + frees it says it traced):
# heapsnoop's rusage with its launched program's (user + system) minus
# the program's own (it prints it).
#   usage: bench/overtime.sh BUILD_DIR BASE_HEAPSNOOP
set -eu
OUT=${1:-build}
BASE=${2:?usage: $0 BUILD_DIR BASE_HEAPSNOOP}
cd "$(dirname "$0")/.."
N=${BENCH_OPS:-2000000}
RUNS=${BENCH_RUNS:-5}
WL=$OUT/workload
T=$(mktemp -d)
trap 'rm -rf "$T"; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
gcc -O2 -g -fno-omit-frame-pointer -o "$WL" bench/workload.c

once() { # NAME HEAPSNOOP ARGS... : one run; "ns/call cpu_ns events" to $T/NAME.runs
	local name=$1 hs=$2 ns ev cpu wcpu; shift 2
	/usr/bin/time -f "cpu %U %S" -o "$T/time" "$hs" -q "$@" -o /dev/null -- "$WL" "$N" \
		> "$T/out" 2> "$T/err"
	ns=$(sed -n 's/^workload: .* \([0-9.]*\) ns per call$/\1/p' "$T/out")
	wcpu=$(sed -n 's/^workload: cpu \([0-9.]*\)$/\1/p' "$T/out")
	ev=$(sed -n 's/^heapsnoop: traced \([0-9]*\) allocations and \([0-9]*\) frees.*/\1 \2/p' \
		"$T/err" | awk '{ print $1 + $2 }')
	cpu=$(awk -v w="$wcpu" '/^cpu / { print ($2 + $3 - w) * 1e9 }' "$T/time")
	grep -h "EVENTS LOST" "$T/err" | sed "s/^/  $name: /" || true
	echo "${ns:-nan} ${cpu:-0} ${ev:-0}" >> "$T/$name.runs"
}

echo "whole-run accounting benchmark: $N allocator calls per run, $RUNS runs, modes in turn"
awk -v n="$N" 'BEGIN { printf "  (rusage counts 10 ms ticks: %.1f ns per event at %d events)\n", 1e7 / n, n }'
for _ in $(seq "$RUNS"); do
	once floor "$OUT/heapsnoop" --empty-probes
	once before "$BASE"
	once after "$OUT/heapsnoop"
done
# best, median and worst of column $1 of the runs of mode $2
stat() { awk -v c="$1" '{ print $c }' "$T/$2.runs" | sort -g |
	awk '{ v[NR] = $1 } END { printf "best %7.1f median %7.1f worst %7.1f", v[1], v[int((NR + 1) / 2)], v[NR] }'; }
for m in floor before after; do
	awk '{ printf "%s %s\n", $1, $3 ? $2 / $3 : 0 }' "$T/$m.runs" > "$T/$m.per"
	mv "$T/$m.per" "$T/$m.runs"
	printf "  %-7s ns/call %s" "$m" "$(stat 1 "$m")"
	[ "$m" = floor ] || printf "   loader CPU/event %s ns" "$(stat 2 "$m")"
	echo
done
