#!/bin/bash
# run.sh - heapsnoop's benchmarks, all in one run on this machine:
#   1. tracer cost per allocator call on bench/workload.c (mixed malloc,
#      calloc, realloc, free through 6-12 frames, ~540 stacks): untraced;
#      the floor (heapsnoop --empty-probes: same probes, empty programs);
#      heapsnoop; bcc's memleak-bpfcc -p; heaptrack (preloaded);
#   2. the same workload without frame pointers: --unwind dwarf against
#      the frame-pointer build's --unwind fp (bench/unwind.sh);
#   3. heapsnoop -a on a process a --comm filter excludes, against the
#      system-wide floor (bench/syswide.sh);
#   4. heapdecode decode throughput against base64 -d (bench/decode.sh);
#   5. heapdecode --report/--folded on 1M lines (bench/report.sh);
#   6. the fallbacks for older kernels against the full-featured path
#      (bench/kfeatures.sh);
#   7. each BPF program's cost per run by the kernel's statistics, and the
#      loader's CPU per event, in every mode (bench/progcost.sh);
#   8. the in-process collector (--preload, sampling) against all of the
#      above, interleaved round by round (bench/collector.sh);
#   9. Python frames: the walker on against off on Debian's python3.11, by
#      depth (bench/pyframes.sh), and the collector's under --preload
#      (bench/plpyframes.sh).
#  10. Lua frames: the walker on against off on Debian's lua5.4, by depth
#      (bench/luaframes.sh), and the collector's under --preload
#      (bench/plluaframes.sh);
#  11. JIT frames: node's named by its perf map against not named
#      (bench/jitframes.sh);
#  12. real programs (clang++, python3.11 with numpy and scipy, sqlite3,
#      and tests/tracer's prog_mt and prog_paths) untraced, under
#      heapsnoop, heapsnoop --preload and heaptrack, heaptrack's calls,
#      peak and leaked bytes the oracle (bench/realprogs.sh; its own
#      packages installed when missing; HOG=1 beside busy loops).
# Best of 3 runs each. Needs root. Installs bpfcc-tools, heaptrack and
# kernel headers for bcc when missing (BCC_KERNEL_SOURCE: lib.sh).
#   usage: bench/run.sh [BUILD_DIR]
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
N=${BENCH_OPS:-2000000}
N_SLOW=${BENCH_OPS_SLOW:-200000}	# memleak is ~100x slower
WL=$OUT/workload
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

missing=
for p in bpfcc-tools heaptrack linux-headers-amd64; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "bench: installing$missing" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing > /dev/null
fi
gcc -O2 -g -fno-omit-frame-pointer -o "$WL" bench/workload.c

. bench/lib.sh
bcc_headers "$OUT"

echo "tracer benchmark: $N allocator calls per run ($N_SLOW under memleak), best of 3"
best untraced "$WL" "$N"
best floor "$OUT/heapsnoop" -q --empty-probes -o /dev/null -- "$WL" "$N"
best heapsnoop "$OUT/heapsnoop" -q -o /dev/null -- "$WL" "$N"
best heapsnoop_fp "$OUT/heapsnoop" -q --unwind fp -o /dev/null -- "$WL" "$N"
grep -h "events lost\|EVENTS LOST\|tracker memory" "$T/heapsnoop.err" | sort | uniq -c | sed 's/^/  heapsnoop: /'
best memleak memleak_run
best heaptrack heaptrack -o "$T/ht" "$WL" "$N"

awk -v u="$(cat "$T/untraced")" -v f="$(cat "$T/floor")" -v h="$(cat "$T/heapsnoop")" \
    -v m="$(cat "$T/memleak")" -v k="$(cat "$T/heaptrack")" -v hf="$(cat "$T/heapsnoop_fp")" 'BEGIN {
	printf "  %-34s %10s %10s %9s\n", "", "ns/call", "overhead", "x untraced"
	row("untraced", u); row("floor (empty probes, same sites)", f)
	row("heapsnoop (--unwind dwarf, default)", h); row("heapsnoop --unwind fp", hf)
	row("memleak-bpfcc -p", m); row("heaptrack (preload)", k)
	printf "  heapsnoop overhead / memleak overhead: %.3f (aim: <= 0.2)\n", (h - u) / (m - u)
	printf "  heapsnoop overhead above the floor:    %.0f ns per call\n", h - f
	printf "  heapsnoop / untraced:                  %.1fx (aim: <= 20x)\n", h / u
	printf "  --unwind fp: overhead / memleak'"'"'s %.3f, above the floor %.0f ns, %.1fx untraced\n",
		(hf - u) / (m - u), hf - f, hf / u
}
function row(name, v) { printf "  %-34s %10.1f %10.1f %9.1fx\n", name, v, v - u, v / u }'
echo
bench/collector.sh "$OUT"
echo
bench/unwind.sh "$OUT"
echo
bench/syswide.sh "$OUT"
echo
bench/decode.sh "$OUT"
echo
bench/report.sh "$OUT"
echo
bench/kfeatures.sh "$OUT"
echo
bench/progcost.sh "$OUT"
echo
bench/pyframes.sh "$OUT"
echo
bench/plpyframes.sh "$OUT"
echo
bench/luaframes.sh "$OUT"
echo
bench/plluaframes.sh "$OUT"
echo
bench/jitframes.sh "$OUT"
echo
bench/realprogs.sh "$OUT"
