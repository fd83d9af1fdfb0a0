#!/bin/bash
# live.sh - does the consumer stop for its own work? (issue 14; docs/DESIGN.md,
# "The consumer never stops"). tests/tracer/prog_live makes N (10,000,000)
# blocks live as fast as it can, then frees half, launched by BASE (a build
# from before dumps went to the background and the table grew step by
# step) and by this build, each with and without -i 4 dumps, the modes in
# turn, RUNS (1) each. A stall of the consumer shows as events lost once
# the ring buffer (RB MiB, default 64) fills behind it. Per run: events
# lost (allocations, frees), the exit status, the run's wall time, the
# loader's peak RSS (the background dump's copy-on-write pages are the
# child's and not in it), and the dumps written.
# heapsnoop -v says this build's longest stop for a dump (the fork). Then
# the live table alone (bench/trackstall.c): 10 million inserts timed one
# by one, this tree's tracker.c and BASE_REV's.
# BENCH_MODES: "nodumps dumps" (default), either alone; BENCH_RB: the ring
# buffer, MiB; BENCH_LIVE_N: blocks.
#   usage: bench/live.sh BUILD_DIR BASE_HEAPSNOOP [BASE_REV]
set -eu
OUT=${1:-build}
BASE=${2:?usage: $0 BUILD_DIR BASE_HEAPSNOOP [BASE_REV]}
BASE_REV=${3:-41e37ba}
cd "$(dirname "$0")/.."
N=${BENCH_LIVE_N:-10000000}
RUNS=${BENCH_RUNS:-1}
RB=${BENCH_RB:-64}
MODES=${BENCH_MODES:-nodumps dumps}
T=$(mktemp -d)
trap 'rm -rf "$T"; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
make -s OUTPUT="$OUT" "$OUT/tests/prog_live" "$OUT/heapsnoop"

once() { # NAME HEAPSNOOP ARGS...: one run, its line
	local name=$1 hs=$2 lost wall rss; shift 2
	# Records to a pipe (a -i dump at 10M is ~1 GB): the dumps counted.
	{ /usr/bin/time -f "%e %M" -o "$T/time" "$hs" --ringbuf-size "$RB" "$@" \
		-- "$OUT/tests/prog_live" "$N" 0 2> "$T/err"; echo "status $?" > "$T/status"; } |
		grep -c '^heapsnoop: end-dump ' > "$T/dumps" || true
	lost=$(sed -n 's/^heapsnoop: EVENTS LOST: \([0-9]*\) allocations and \([0-9]*\) frees.*/\1 \2/p' \
		"$T/err")
	lost=${lost:-0 0}
	read -r wall rss < <(tail -n 1 "$T/time")	# after "Command exited with ..."
	printf '  %-18s lost %8s allocations %8s frees  %s  %6.1f s  rss %5d MiB  %s dumps\n' \
		"$name" "${lost% *}" "${lost#* }" "$(cat "$T/status")" "$wall" $((rss / 1024)) \
		"$(cat "$T/dumps")"
	sed -n 's/^heapsnoop: \(longest stop .*\)/    \1/p' "$T/err"
}

echo "live-set benchmark: $N blocks made live, half freed; ring buffer $RB MiB; $RUNS run(s) a mode"
echo "  $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$RUNS"); do
	if [[ " $MODES " == *" nodumps "* ]]; then
		once "before, no dumps" "$BASE"
		once "after, no dumps" "$OUT/heapsnoop"
	fi
	if [[ " $MODES " == *" dumps "* ]]; then
		once "before, -i 4" "$BASE" -i 4
		once "after, -i 4" "$OUT/heapsnoop" -v -i 4
	fi
done
mkdir -p "$T/base"
# (tracker.c's place: user/tracer/track/, user/tracer/ before issue 28.)
for f in tracker.c tracker.h; do
	git show "$BASE_REV:user/tracer/track/$f" > "$T/base/$f" 2> /dev/null ||
		git show "$BASE_REV:user/tracer/$f" > "$T/base/$f"
done
gcc -O2 -Iuser/tracer/track -o "$T/stall" bench/trackstall.c user/tracer/track/tracker.c
gcc -O2 -DTRACKER_PID -I"$T/base" -o "$T/stall.base" bench/trackstall.c "$T/base/tracker.c"
echo "the live table alone:"
echo "  before ($BASE_REV): $("$T/stall.base" "$N")"
echo "  after:              $("$T/stall" "$N")"
