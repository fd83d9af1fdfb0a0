#!/bin/bash
# report.sh - heapdecode --report, --folded, --pprof and --speedscope on
# 1,000,000 record lines
# with a few thousand unique stacks, from a real trace of bench/workload.c
# (its live lines repeated). Symbolization should scale with unique
# stacks, not lines: the same run on 100,000 lines shows it.
#   usage: bench/report.sh [BUILD_DIR]     (needs root, for the trace)
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
gcc -O2 -g -fno-omit-frame-pointer -o "$OUT/workload" bench/workload.c
WORKLOAD_PATHS=4000 "$OUT/heapsnoop" -q -o "$T/dump" -- "$OUT/workload" 400000 > /dev/null 2>&1
grep -v '^heapsnoop: live ' "$T/dump" | grep -v end-dump > "$T/head"
grep '^heapsnoop: live ' "$T/dump" > "$T/live"
make_log() { # LINES -> file
	{ cat "$T/head"
	  awk -v n="$1" 'NR == FNR { l[c++] = $0; next } END { for (i = 0; i < n; i++) print l[i % c] }' \
		"$T/live" /dev/null
	} > "$T/log.$1"
}
time_of() { # command... -> seconds (best of 3)
	local b=
	for _ in 1 2 3; do
		local s e
		s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
		b=$(awk -v a="$e" -v s="$s" -v b="${b:-1e9}" 'BEGIN { t = a - s; print (t < b) ? t : b }')
	done
	echo "$b"
}
stacks=$("$OUT/heapdecode" --report "$T/dump" | sed -n 's/^total: .* from \([0-9]*\) stacks$/\1/p')
echo "report benchmark: $(wc -l < "$T/live") live records, $stacks unique stacks, repeated"
for n in 100000 1000000; do
	make_log $n
	r=$(time_of "$OUT/heapdecode" --report "$T/log.$n")
	f=$(time_of "$OUT/heapdecode" --folded "$T/log.$n")
	p=$(time_of "$OUT/heapdecode" --pprof "$T/out.pb.gz" "$T/log.$n")
	s=$(time_of "$OUT/heapdecode" --speedscope "$T/out.json" "$T/log.$n")
	awk -v n=$n -v r="$r" -v f="$f" -v p="$p" -v s="$s" 'BEGIN {
		printf "  %8d lines: --report %6.3f s (%9.0f lines/s)   --folded %6.3f s (%9.0f lines/s)\n",
			n, r, n / r, f, n / f
		printf "  %8s        --pprof  %6.3f s (%9.0f lines/s)   --speedscope %6.3f s (%9.0f lines/s)\n",
			"", p, n / p, s, n / s }'
done
