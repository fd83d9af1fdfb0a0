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
#   with --sample-bytes 524288, the preload under heapsnoop --preload (which
#   holds its table), the preload on the build without frame pointers;
#   the preload as it was before its live set went into a shared table
#   (its list behind the blocks: built from commit BENCH_BEFORE, 89ebebf
#   by default, issue 27's base), whole, sampled and without frame
#   pointers: before and after in one run;
# then the two in-process choices behind docs/COLLECTOR.md: the unwinders
# (bench/unwinders.c) and where the record lives (bench/am_layout.c); and
# the live set's costs beyond a call's time, before and after
# (bench/livecost.c): memory per live block, a fork()'s stall with 10 k,
# 100 k and 1 M blocks live; with valgrind, the instructions a call costs
# before and after (callgrind: (Ir(2N) - Ir(N)) / N, which the machine's
# load cannot blur).
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
U=user/collector/unwind
gcc -O2 -g -fomit-frame-pointer -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser/common -I$U bench/unwinders.c \
	$U/localstack.c $U/framestep.c $U/ehframe.c $U/ehframe_cfa.c $U/ehframe_expr.c $U/modcfi.c $U/dlclose.c \
	-lunwind -o "$T/unwinders"
# The preload before its live table: its list behind the blocks.
BEFORE=${BENCH_BEFORE:-89ebebf}
mkdir -p "$T/before"
git archive "$BEFORE" | tar -x -C "$T/before"
make -s -C "$T/before" build/libheapsnoop_preload.so > /dev/null
PLB=$T/before/build/libheapsnoop_preload.so
gcc -O2 -g -fno-omit-frame-pointer -o "$T/livecost" bench/livecost.c
gcc -O2 -g -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser/common -Iuser/collector bench/am_layout.c \
	user/collector/alloc_metadata.c user/collector/modmaps.c user/collector/stacktail.c \
	user/common/records/*.c \
	user/common/text.c user/common/sampling.c user/common/htab.c codec/*.c -pthread -lm \
	-o "$T/am_layout"
. bench/lib.sh
PL=$OUT/libheapsnoop_preload.so

pre() { env LD_PRELOAD="$PL" HEAPSNOOP_OUTPUT=/dev/null "$@"; }
pre_before() { env LD_PRELOAD="$PLB" HEAPSNOOP_OUTPUT=/dev/null "$@"; }
modes=(untraced floor heapsnoop heapsnoop_sampled heapsnoop_fp heaptrack_raw heaptrack
	preload preload_before preload_supervised preload_fp preload_sampled preload_sampled_before
	untraced_nofp preload_nofp preload_nofp_before)
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
	preload_before) pre_before "$WL" "$N" ;;
	preload_supervised) HEAPSNOOP_PRELOAD_LIB=$PL "$OUT/heapsnoop" -q --preload -o /dev/null -- "$WL" "$N" ;;
	preload_fp) pre HEAPSNOOP_UNWIND=fp "$WL" "$N" ;;
	preload_sampled) pre HEAPSNOOP_SAMPLE_BYTES=524288 "$WL" "$N" ;;
	preload_sampled_before) pre_before HEAPSNOOP_SAMPLE_BYTES=524288 "$WL" "$N" ;;
	untraced_nofp) "$T/wl_nofp" "$N" ;;
	preload_nofp) pre "$T/wl_nofp" "$N" ;;
	preload_nofp_before) pre_before "$T/wl_nofp" "$N" ;;
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
read -r plb _ < <(stat_of preload_before)
read -r pv _ < <(stat_of preload_supervised)
read -r pn _ < <(stat_of preload_nofp)
read -r pnb _ < <(stat_of preload_nofp_before)
read -r ps _ < <(stat_of preload_sampled)
read -r psb _ < <(stat_of preload_sampled_before)
read -r hr _ < <(stat_of heaptrack_raw)
read -r hb _ < <(stat_of heapsnoop)
read -r hs _ < <(stat_of heapsnoop_sampled)
read -r fl _ < <(stat_of floor)
awk -v u="$ub" -v p="$pb" -v s="$ps" -v h="$hr" -v b="$hb" -v bs="$hs" -v f="$fl" \
	-v pl="$plb" -v un="$unb" -v pn="$pn" -v pnl="$pnb" -v pv="$pv" -v sb="$psb" 'BEGIN {
	printf "  preload / untraced:          %.2fx (aim: <= 3x; heaptrack -r: %.2fx)\n", p / u, h / u
	printf "  preload, a call: %.1f ns with its live table, %.1f ns before it (%.2fx, %.2fx untraced)\n",
		p - u, pl - u, p / u, pl / u
	printf "  ... under heapsnoop --preload: %.1f ns (%.2fx untraced)\n", pv - u, pv / u
	printf "  ... without frame pointers: %.1f ns, %.1f ns before (%.2fx, %.2fx untraced)\n",
		pn - un, pnl - un, pn / un, pnl / un
	printf "  preload sampled / untraced:  %.2fx, before %.2fx (aim: <= 1.1x)\n", s / u, sb / u
	printf "  heapsnoop (BPF) / preload:   %.2fx\n", b / p
	printf "  BPF sampled / BPF: %.2fx; above the floor: %.0f ns sampled, %.0f ns not\n",
		bs / b, bs - f, b - f
}'
awk -v u="$(cpu_best untraced)" -v p="$(cpu_best preload)" -v pl="$(cpu_best preload_before)" \
	-v s="$(cpu_best preload_sampled)" -v sb="$(cpu_best preload_sampled_before)" 'BEGIN {
	printf "  by CPU time: preload %.2fx untraced, before %.2fx; sampled %.2fx, before %.2fx\n",
		p / u, pl / u, s / u, sb / u
}'
echo "  (other engineers build and test on this machine: see the spread; an"
echo "   untraced run slowed by someone's heapsnoop -a probes shows as a large one)"
echo
echo "unwinders in the process, 12 calls deep, no frame pointers (bench/unwinders.c):"
"$T/unwinders" 200000 12 | sed 's/^/  /'
echo
"$T/am_layout" 2000000 | sed 's/^/  /'
echo
echo "the live set beyond a call (bench/livecost.c): before (its list behind the blocks) and after (its table)"
mem_of() { sed -n 's/^livecost: mem [0-9]* blocks, RssAnon \([0-9]*\) KB, RssShmem \([0-9]*\) KB$/\1 \2/p'; }
read -r ua us < <("$T/livecost" mem 1000000 | mem_of)
for m in before after; do
	lib=$PL; [ $m = before ] && lib=$PLB
	read -r a sh < <(env LD_PRELOAD="$lib" HEAPSNOOP_OUTPUT=/dev/null "$T/livecost" mem 1000000 | mem_of)
	awk -v m="$m" -v a="$a" -v s="$sh" -v ua="$ua" -v us="$us" 'BEGIN {
		printf "  1 M blocks of 32 bytes, %-6s %6.1f MB anonymous + %5.1f MB shared: %5.1f bytes a block above untraced\n",
			m, a / 1024, s / 1024, (a + s - ua - us) * 1024 / 1e6 }'
done
for n in 10000 100000 1000000; do
	u=$("$T/livecost" fork $n | sed -n 's/.*, \([0-9]*\) ns$/\1/p')
	b=$(env LD_PRELOAD="$PLB" HEAPSNOOP_OUTPUT=/dev/null "$T/livecost" fork $n | sed -n 's/.*, \([0-9]*\) ns$/\1/p')
	a=$(env LD_PRELOAD="$PL" HEAPSNOOP_OUTPUT=/dev/null "$T/livecost" fork $n | sed -n 's/.*, \([0-9]*\) ns$/\1/p')
	awk -v n="$n" -v u="$u" -v b="$b" -v a="$a" 'BEGIN {
		printf "  fork() with %7d live: untraced %7.0f us, before %7.0f us, after %7.0f us\n", n, u / 1e3, b / 1e3, a / 1e3 }'
done
command -v valgrind > /dev/null || { echo "  (no valgrind: no instruction counts)"; exit 0; }
echo
echo "instructions a workload call costs (callgrind, (Ir(2N) - Ir(N)) / N, N = 50000):"
ir_of() { # ENV... -- runs the workload N and 2N times: prints the difference over N
	local a b
	a=$(env "$@" valgrind --tool=callgrind --callgrind-out-file="$T/cg" "$WL" 50000 2> /dev/null > /dev/null;
		sed -n 's/^summary: *//p' "$T/cg")
	b=$(env "$@" valgrind --tool=callgrind --callgrind-out-file="$T/cg" "$WL" 100000 2> /dev/null > /dev/null;
		sed -n 's/^summary: *//p' "$T/cg")
	awk -v a="$a" -v b="$b" 'BEGIN { printf "%.0f", (b - a) / 50000 }'
}
u=$(ir_of X=1)
for m in before after before_sampled after_sampled; do
	lib=$PL; case $m in before*) lib=$PLB ;; esac
	smp=X=1; case $m in *sampled) smp=HEAPSNOOP_SAMPLE_BYTES=524288 ;; esac
	v=$(ir_of LD_PRELOAD="$lib" HEAPSNOOP_OUTPUT=/dev/null "$smp")
	awk -v m="$m" -v v="$v" -v u="$u" 'BEGIN { printf "  %-16s %6d (untraced %d: %.2fx)\n", m, v, u, v / u }'
done
