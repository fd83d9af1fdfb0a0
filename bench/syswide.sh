#!/bin/bash
# syswide.sh - the cost of heapsnoop -a on a process that is not of
# interest: bench/workload.c run untraced; under `heapsnoop -a
# --empty-probes` (the floor: the same system-wide probes, programs that
# return at once); under `heapsnoop -a --comm NAME` where NAME is another
# process (excluded: each probe returns after the filter); and under plain
# `heapsnoop -a` (traced). Best of 5 runs each; the modes take turns run by
# run (this VM's speed drifts over minutes), heapsnoop started for each run
# and waited for ("tracing all processes").
#   usage: bench/syswide.sh [BUILD_DIR]   (root; after `make`)
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
N=${BENCH_OPS:-2000000}
WL=$OUT/workload
T=$(mktemp -d)
trap 'rm -rf "$T"; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
[ -x "$WL" ] || gcc -O2 -g -fno-omit-frame-pointer -o "$WL" bench/workload.c

once() { # NAME : one workload run; keep the best ns/call in $T/NAME
	local v
	v=$("$WL" "$N" | sed -n 's/^workload: .* \([0-9.]*\) ns per call$/\1/p')
	awk -v a="$v" -v b="$(cat "$T/$1" 2>/dev/null || echo 1e18)" \
		'BEGIN { print (a < b) ? a : b }' > "$T/$1.new" && mv "$T/$1.new" "$T/$1"
}

under() { # NAME HEAPSNOOP_ARGS... : once() while heapsnoop -a ARGS runs
	local name=$1 hs line; shift
	rm -f "$T/err"; mkfifo "$T/err"
	"$OUT/heapsnoop" -q -a "$@" -o /dev/null 2> "$T/err" &
	hs=$!
	exec 5< "$T/err"
	while IFS= read -r -t 60 line <&5; do
		[[ $line == "heapsnoop: tracing all processes"* ]] && break
	done
	cat <&5 >> "$T/$name.log" &
	once "$name"
	kill -INT "$hs"; wait "$hs"; wait
	exec 5<&-
}

echo "system-wide benchmark: $N allocator calls per run, best of 5, modes in turn"
for _ in 1 2 3 4 5; do
	once untraced
	under floor --empty-probes
	under excluded --comm no-such-name
	under traced
done
for m in floor excluded traced; do
	grep -h "events lost\|EVENTS LOST" "$T/$m.log" | sort | uniq -c | sed "s/^/  $m: /"
done
awk -v u="$(cat "$T/untraced")" -v f="$(cat "$T/floor")" -v e="$(cat "$T/excluded")" \
    -v t="$(cat "$T/traced")" 'BEGIN {
	printf "  %-40s %10s %10s %9s\n", "", "ns/call", "overhead", "x untraced"
	row("untraced", u); row("heapsnoop -a --empty-probes (floor)", f)
	row("heapsnoop -a --comm other (excluded)", e); row("heapsnoop -a (traced)", t)
	printf "  excluded overhead / floor overhead: %.3f (aim: <= 1)\n", (e - u) / (f - u)
	printf "  excluded above the floor:           %.0f ns per call\n", e - f
}
function row(name, v) { printf "  %-40s %10.1f %10.1f %9.1fx\n", name, v, v - u, v / u }'
