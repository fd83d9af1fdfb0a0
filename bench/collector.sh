#!/bin/bash
# collector.sh - the in-process collector against everything else, on the
# tracer benchmark's workload (bench/workload.c, frame pointers kept) and
# the same workload without them, modes interleaved round by round (the
# machine is shared: a burst of load falls on one round of every mode, not
# on every round of one). Per mode: the best round's ns per call, its
# ratio to untraced, and the spread (worst - best) / best; then the same
# by the program's own CPU time (its user + system time, whole run, per
# call: the time it waited for a core left out, and with it most of a
# shared machine's noise; a tracer's own process, heapsnoop's or
# heaptrack's, is not in it, the uprobes' traps are).
#   untraced, floor (heapsnoop --empty-probes), heapsnoop (dwarf, fp, and
#   dwarf with --sample-bytes 524288),
#   memleak-bpfcc -p (if installed; N_SLOW calls), heaptrack -r (raw) and
#   heaptrack, the preload (its own unwinder; frame pointers), the preload
#   with --sample-bytes 524288, the preload on the build without frame
#   pointers; the preload as it was with libunwind (built from commit
#   BENCH_BEFORE, a59ac27 by default: the last with libunwind), on both;
# then the two in-process choices behind docs/COLLECTOR.md: the unwinders
# (bench/unwinders.c) and where the record lives (bench/am_layout.c).
#   usage: bench/collector.sh [BUILD_DIR]     BENCH_ROUNDS (5), BENCH_OPS
set -eu
OUT=$(realpath "${1:-build}")
cd "$(dirname "$0")/.."
N=${BENCH_OPS:-2000000}
N_SLOW=${BENCH_OPS_SLOW:-200000}
ROUNDS=${BENCH_ROUNDS:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
WL=$T/wl
gcc -O2 -g -fno-omit-frame-pointer -o "$WL" bench/workload.c
gcc -O2 -g -fomit-frame-pointer -o "$T/wl_nofp" bench/workload.c
gcc -O2 -g -fomit-frame-pointer -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser/collector bench/unwinders.c \
	user/collector/localstack.c user/collector/framestep.c user/collector/ehframe.c \
	user/collector/ehframe_cfa.c user/collector/ehframe_expr.c user/collector/dlclose.c \
	-lunwind -o "$T/unwinders"
# The preload before its own unwinder: libunwind's (needs libunwind-dev).
BEFORE=${BENCH_BEFORE:-a59ac27}
mkdir -p "$T/before"
git archive "$BEFORE" | tar -x -C "$T/before"
make -s -C "$T/before" build/libheapsnoop_preload.so > /dev/null
PLB=$T/before/build/libheapsnoop_preload.so
gcc -O2 -g -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser/common bench/am_layout.c \
	user/collector/alloc_metadata.c user/collector/modmaps.c user/common/records/*.c \
	user/common/text.c user/common/sampling.c user/common/htab.c codec/*.c -pthread -lm \
	-o "$T/am_layout"
. bench/lib.sh
PL=$OUT/libheapsnoop_preload.so

pre() { env LD_PRELOAD="$PL" HEAPSNOOP_OUTPUT=/dev/null "$@"; }
pre_before() { env LD_PRELOAD="$PLB" HEAPSNOOP_OUTPUT=/dev/null "$@"; }
modes=(untraced floor heapsnoop heapsnoop_sampled heapsnoop_fp heaptrack_raw heaptrack
	preload preload_libunwind preload_fp preload_sampled untraced_nofp preload_nofp
	preload_nofp_libunwind)
# bcc attaches uprobes through tracefs; without it memleak cannot run.
if command -v memleak-bpfcc > /dev/null && ls -d /usr/src/linux-headers-*-amd64 > /dev/null 2>&1 &&
	[ -e /sys/kernel/tracing/uprobe_events ]; then
	bcc_headers "$OUT"
	modes+=(memleak)
else
	echo "collector: memleak left out: it needs memleak-bpfcc, kernel headers (bench/run.sh" \
		"installs both) and tracefs at /sys/kernel/tracing"
fi
run_mode() { # MODE: one run, its workload line on stdout
	case $1 in
	untraced) "$WL" "$N" ;;
	floor) "$OUT/heapsnoop" -q --empty-probes -o /dev/null -- "$WL" "$N" ;;
	heapsnoop) "$OUT/heapsnoop" -q -o /dev/null -- "$WL" "$N" ;;
	heapsnoop_sampled) "$OUT/heapsnoop" -q --sample-bytes 524288 -o /dev/null -- "$WL" "$N" ;;
	heapsnoop_fp) "$OUT/heapsnoop" -q --unwind fp -o /dev/null -- "$WL" "$N" ;;
	heaptrack_raw) heaptrack -r -o "$T/htr" "$WL" "$N" ;;
	heaptrack) heaptrack -o "$T/ht" "$WL" "$N" ;;
	preload) pre "$WL" "$N" ;;
	preload_fp) pre HEAPSNOOP_UNWIND=fp "$WL" "$N" ;;
	preload_sampled) pre HEAPSNOOP_SAMPLE_BYTES=524288 "$WL" "$N" ;;
	untraced_nofp) "$T/wl_nofp" "$N" ;;
	preload_nofp) pre "$T/wl_nofp" "$N" ;;
	preload_libunwind) pre_before "$WL" "$N" ;;
	preload_nofp_libunwind) pre_before "$T/wl_nofp" "$N" ;;
	memleak) memleak_run ;;
	esac
}

echo "collector benchmark: $N allocator calls per run ($N_SLOW under memleak)," \
	"$ROUNDS rounds, modes interleaved"
cpu_of() { sed -n 's/^workload: cpu \([0-9.]*\)$/\1/p' "$1"; }
for ((r = 0; r < ROUNDS; r++)); do
	for m in "${modes[@]}"; do
		run_mode "$m" > "$T/run" 2>> "$T/$m.err" || true
		v=$(ns_of "$T/run")
		[ -n "$v" ] || { echo "bench: $m printed no timing" >&2; tail -5 "$T/$m.err" >&2; exit 1; }
		echo "$v" >> "$T/$m.all"
		n=$N
		[ "$m" != memleak ] || n=$N_SLOW
		awk -v c="$(cpu_of "$T/run")" -v n="$n" 'BEGIN { print c * 1e9 / n }' >> "$T/$m.cpu"
	done
done
stat_of() { sort -g "$T/$1.all" | awk 'NR == 1 { b = $1 } { w = $1 } END { print b, w }'; }
cpu_best() { sort -g "$T/$1.cpu" | head -n 1; }
read -r ub _ < <(stat_of untraced)
read -r unb _ < <(stat_of untraced_nofp)
printf '  %-38s %9s %9s %8s %9s %9s\n' "" "ns/call" "x untr." "spread" "cpu ns" "x untr."
for m in "${modes[@]}"; do
	read -r b w < <(stat_of "$m")
	base=$ub cbase=$(cpu_best untraced)
	case $m in *nofp*) base=$unb cbase=$(cpu_best untraced_nofp) ;; esac
	awk -v m="$m" -v b="$b" -v w="$w" -v u="$base" -v c="$(cpu_best "$m")" -v cu="$cbase" \
		'BEGIN { printf "  %-38s %9.1f %8.2fx %7.0f%% %9.1f %8.2fx\n", m, b, b / u,
			100 * (w - b) / b, c, c / cu }'
done
read -r pb _ < <(stat_of preload)
read -r plb _ < <(stat_of preload_libunwind)
read -r pn _ < <(stat_of preload_nofp)
read -r pnb _ < <(stat_of preload_nofp_libunwind)
read -r ps _ < <(stat_of preload_sampled)
read -r hr _ < <(stat_of heaptrack_raw)
read -r hb _ < <(stat_of heapsnoop)
read -r hs _ < <(stat_of heapsnoop_sampled)
read -r fl _ < <(stat_of floor)
awk -v u="$ub" -v p="$pb" -v s="$ps" -v h="$hr" -v b="$hb" -v bs="$hs" -v f="$fl" \
	-v pl="$plb" -v un="$unb" -v pn="$pn" -v pnl="$pnb" 'BEGIN {
	printf "  preload / untraced:          %.2fx (aim: <= 3x; heaptrack -r: %.2fx)\n", p / u, h / u
	printf "  preload, a call: %.1f ns with its own unwinder, %.1f ns with libunwind (%.2fx, %.2fx untraced)\n",
		p - u, pl - u, p / u, pl / u
	printf "  ... without frame pointers: %.1f ns, %.1f ns with libunwind (%.2fx, %.2fx untraced)\n",
		pn - un, pnl - un, pn / un, pnl / un
	printf "  preload sampled / untraced:  %.2fx (aim: <= 1.1x)\n", s / u
	printf "  heapsnoop (BPF) / preload:   %.2fx\n", b / p
	printf "  BPF sampled / BPF: %.2fx; above the floor: %.0f ns sampled, %.0f ns not\n",
		bs / b, bs - f, b - f
}'
awk -v u="$(cpu_best untraced)" -v p="$(cpu_best preload)" -v pl="$(cpu_best preload_libunwind)" \
	-v s="$(cpu_best preload_sampled)" 'BEGIN {
	printf "  by CPU time: preload %.2fx untraced, with libunwind %.2fx, sampled %.2fx\n",
		p / u, pl / u, s / u
}'
echo "  (other engineers build and test on this machine: see the spread; an"
echo "   untraced run slowed by someone's heapsnoop -a probes shows as a large one)"
echo
echo "unwinders in the process, 12 calls deep, no frame pointers (bench/unwinders.c):"
"$T/unwinders" 200000 12 | sed 's/^/  /'
echo
"$T/am_layout" 2000000 | sed 's/^/  /'
