#!/bin/bash
# pool.sh - the loader's records per second against its unwinding threads
# (issue 31; docs/DESIGN.md, "A loader that scales with the cores").
# Each workload is traced launched, heapsnoop's defaults but
# --unwind-threads N, for each N in THREADS, the Ns in turn round after
# round (a burst of other load falls on one run of every N, not on every
# run of one). With --on-full hold (the default) nothing is lost: a loader
# that falls behind makes the program wait, so the run's wall time is the
# loader's pace, and allocations traced over it are the records a second
# it keeps. Per N: the best and median of the rounds, the ratio of the
# best to N=0's (the loop's thread alone), the loader's CPU (user +
# system) of the best run, how long the program waited for it, and what
# was lost (nothing, or the bench says so).
# Workloads (POOL_ONLY): paths, tests/tracer/prog_paths POOL_PATHS (20:
# 2^20 allocations, each a call path of its own, 26 frames by CFI); mt,
# tests/tracer/prog_mt POOL_MT ("16 20000": 16 threads, 442,689 allocations).
# On a machine whose CPUs the program keeps busy the pool can add little:
# it is for CPUs the program leaves free. Nothing here is a test.
#   usage: bench/pool.sh [BUILD_DIR]
#   POOL_THREADS ("0 1 2 4 8 15", those up to the CPUs but one kept),
#   POOL_ROUNDS (3), POOL_ONLY ("paths mt"), POOL_PATHS, POOL_MT.
# Needs root.
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
CPUS=$(nproc)
ROUNDS=${POOL_ROUNDS:-3}
ONLY=${POOL_ONLY:-paths mt}
PATHS=${POOL_PATHS:-20}
MT=${POOL_MT:-16 20000}
THREADS=
for n in ${POOL_THREADS:-0 1 2 4 8 15}; do
	[ "$n" -le $((CPUS - 1 > 1 ? CPUS - 1 : 1)) ] && THREADS="$THREADS $n"
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
make -s OUTPUT="$OUT" "$OUT/heapsnoop" "$OUT/tests/prog_paths" "$OUT/tests/prog_mt" > /dev/null

cmd_of() { # WORKLOAD: its command line
	case $1 in
	paths) echo "$OUT/tests/prog_paths $PATHS" ;;
	mt) echo "$OUT/tests/prog_mt $MT" ;;
	*) echo "pool: no workload '$1' (paths, mt)" >&2; return 1 ;;
	esac
}

# WORKLOAD N: one run; "wall allocs cpu waited lost status" appended to
# $T/WORKLOAD.N.
once() {
	local w=$1 n=$2 st=0 allocs lost cpu waited wall
	# shellcheck disable=SC2046
	/usr/bin/time -f "%e" -o "$T/time" "$OUT/heapsnoop" -v --unwind-threads "$n" \
		-o /dev/null -- $(cmd_of "$w") > /dev/null 2> "$T/err" || st=$?
	wall=$(tail -n 1 "$T/time")
	allocs=$(sed -n 's/^heapsnoop: traced \([0-9]*\) allocations.*/\1/p' "$T/err")
	cpu=$(sed -n 's/.*its CPU time: \([0-9.]*\) s user, \([0-9.]*\) s system.*/\1 \2/p' \
		"$T/err" | awk '{ print $1 + $2 }')
	waited=$(sed -n 's/.*waited [0-9]* times\{0,1\} for heapsnoop to catch up, \([0-9.]*\) ms in all.*/\1/p' \
		"$T/err")
	lost=$(sed -n 's/^heapsnoop: EVENTS LOST: \([0-9]*\) allocations and \([0-9]*\) frees.*/\1+\2/p' \
		"$T/err")
	[ -n "$allocs" ] || { echo "pool: $w with $n threads traced nothing:" >&2; cat "$T/err" >&2; return 1; }
	echo "$wall $allocs ${cpu:-0} ${waited:-0} ${lost:-0} $st" >> "$T/$w.$n"
}

echo "pool: $CPUS CPUs, load $(cut -d' ' -f1 /proc/loadavg); threads:$THREADS; rounds: $ROUNDS"
for w in $ONLY; do
	cmd_of "$w" > /dev/null
	for ((r = 1; r <= ROUNDS; r++)); do
		for n in $THREADS; do
			once "$w" "$n"
		done
	done
	echo
	echo "$w: $(cmd_of "$w")"
	printf '%8s %12s %12s %12s %8s %10s %10s %10s %6s\n' threads allocations \
		"best rec/s" "median rec/s" "x N=0" "CPU s" "waited ms" lost exit
	base=
	for n in $THREADS; do
		# Records a second of each round, best and median; the best run's figures.
		read -r best med bcpu bwait blost bst < <(awk '{ r = $2 / $1; print r, $0 }' "$T/$w.$n" |
			sort -g | awk '{ r[NR] = $1; l[NR] = $0 } END {
				split(l[NR], b, " ");
				printf "%.0f %.0f %s %s %s %s\n", r[NR], r[int((NR + 1) / 2)], b[4], b[5], b[6], b[7] }')
		base=${base:-$best}
		allocs=$(awk 'NR == 1 { print $2 }' "$T/$w.$n")
		printf '%8s %12s %12s %12s %8.2f %10s %10s %10s %6s\n' "$n" "$allocs" "$best" "$med" \
			"$(awk -v a="$best" -v b="$base" 'BEGIN { print a / b }')" "$bcpu" "$bwait" "$blost" "$bst"
	done
done
