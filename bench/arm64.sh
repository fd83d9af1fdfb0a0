#!/bin/bash
# arm64.sh - heapsnoop's cost per allocator call on arm64, inside the arm64
# guest of tests/arm64 (qemu-system-aarch64, TCG). TCG's timings say
# nothing absolute, so only ratios within the one guest run are reported:
# bench/workload.c untraced, the floor (heapsnoop --empty-probes: the same
# probes, empty programs), heapsnoop (--unwind dwarf) and --unwind fp,
# interleaved round after round, the best of ROUNDS each.
#   usage: bench/arm64.sh [BUILD_DIR]   (BUILD_DIR/arm64: the arm64 build)
# BENCH_ARM64_OPS: calls per run (default 100000); BENCH_ARM64_ROUNDS (3).
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
if [ "${2:-}" != --in-guest ]; then
	ARM=$OUT/arm64
	[ -x "$ARM/heapsnoop" ] || { echo "bench: $ARM/heapsnoop missing: make arm64-build" >&2; exit 2; }
	aarch64-linux-gnu-gcc -O2 -g -fno-omit-frame-pointer -o "$ARM/workload" bench/workload.c
	export HS_BENCH_OPS=${BENCH_ARM64_OPS:-100000} HS_BENCH_ROUNDS=${BENCH_ARM64_ROUNDS:-3}
	exec tests/kmatrix/guest.sh 6.1-arm64 -- bench/arm64.sh "$ARM" --in-guest
fi

# In the guest: OUT is the arm64 build.
N=$HS_BENCH_OPS WL=$OUT/workload
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. bench/lib.sh
echo "arm64 benchmark in qemu-system-aarch64 (TCG), kernel $(uname -r): $N allocator calls" \
	"per run, best of $HS_BENCH_ROUNDS rounds"
for _ in $(seq "$HS_BENCH_ROUNDS"); do
	once untraced "$WL" "$N"
	once floor "$OUT/heapsnoop" -q --empty-probes -o /dev/null -- "$WL" "$N"
	once heapsnoop "$OUT/heapsnoop" -q -o /dev/null -- "$WL" "$N"
	once heapsnoop_fp "$OUT/heapsnoop" -q --unwind fp -o /dev/null -- "$WL" "$N"
done
grep -h "events lost\|EVENTS LOST" "$T/heapsnoop.err" "$T/heapsnoop_fp.err" | sort | uniq -c |
	sed 's/^/  heapsnoop: /'
awk -v u="$(cat "$T/untraced")" -v f="$(cat "$T/floor")" -v h="$(cat "$T/heapsnoop")" \
    -v hf="$(cat "$T/heapsnoop_fp")" 'BEGIN {
	printf "  %-36s %10s %12s\n", "", "x untraced", "x the floor"
	row("untraced", u); row("floor (empty probes, same sites)", f)
	row("heapsnoop (--unwind dwarf, default)", h); row("heapsnoop --unwind fp", hf)
	printf "  overhead over the floor'"'"'s overhead: dwarf %.2f, fp %.2f\n", (h - u) / (f - u), (hf - u) / (f - u)
}
function row(name, v) { printf "  %-36s %9.2fx %11.2fx\n", name, v / u, v / f }'
