#!/bin/bash
# agent.sh - what heapsnoop agent costs: bench/workload.c (allocator calls
# at full speed, frame pointers) run untraced; under `heapsnoop agent
# --empty-probes` (the floor: the same probes on every C library, their
# programs returning at once, as bench/syswide.sh's); under `heapsnoop agent`
# (-a, sampled at 512 KiB, the default); under `heapsnoop agent
# --every-allocation`; and under the default agent scraped once a second
# on both pages (/metrics and /debug/pprof/heap, as Prometheus and Parca
# would, a loop of curl). Best of ROUNDS runs each, the modes in turn (the
# machine is shared: its speed drifts). For each agent run: its resident
# memory and its tables at the end, its loop's longest stop for a
# snapshot's fork, and how long each page took to answer (the last).
#   usage: bench/agent.sh [BUILD_DIR]   (root; after `make`)
#   BENCH_OPS (2000000) calls a run, BENCH_ROUNDS (3)
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
N=${BENCH_OPS:-2000000}
R=${BENCH_ROUNDS:-3}
WL=$OUT/workload
PORT=${BENCH_PORT:-16069}
T=$(mktemp -d)
trap 'rm -rf "$T"; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
[ -x "$WL" ] || gcc -O2 -g -fno-omit-frame-pointer -o "$WL" bench/workload.c

once() { # NAME : one workload run; keep the best ns/call in $T/NAME
	local v
	v=$("$WL" "$N" | sed -n 's/^workload: .* \([0-9.]*\) ns per call$/\1/p')
	awk -v a="$v" -v b="$(cat "$T/$1" 2>/dev/null || echo 1e18)" \
		'BEGIN { print (a < b) ? a : b }' > "$T/$1.new" && mv "$T/$1.new" "$T/$1"
}

metric() { # NAME-REGEX: its value in $T/metrics
	awk -v re="^$1 " '$0 ~ re { print $NF; exit }' "$T/metrics"
}

under() { # NAME SCRAPE(0/1) AGENT_ARGS... : once() while the agent runs
	local name=$1 scrape=$2 hs line sc=; shift 2
	rm -f "$T/err"; mkfifo "$T/err"
	"$OUT/heapsnoop" agent --listen "127.0.0.1:$PORT" "$@" 2> "$T/err" &
	hs=$!
	exec 5< "$T/err"
	while IFS= read -r -t 60 line <&5; do
		[[ $line == *"serving http://"* ]] && break
	done
	cat <&5 >> "$T/$name.log" &
	if [ "$scrape" = 1 ]; then
		(while :; do
			curl -s -o /dev/null "http://127.0.0.1:$PORT/metrics"
			curl -s -o /dev/null "http://127.0.0.1:$PORT/debug/pprof/heap"
			sleep 1
		done) &
		sc=$!
	fi
	once "$name"
	[ -n "$sc" ] && { kill "$sc"; wait "$sc" 2> /dev/null || true; }
	curl -s -o "$T/metrics" -w '%{time_total}' "http://127.0.0.1:$PORT/metrics" > "$T/tm"
	curl -s -o "$T/heap" -w '%{time_total}' "http://127.0.0.1:$PORT/debug/pprof/heap" > "$T/th"
	printf '%s rss_mib=%.1f tables_mib=%.1f fork_ms_max=%.1f metrics_s=%s heap_s=%s heap_kib=%d\n' \
		"$name" "$(awk '/^heapsnoop_agent_resident_bytes/ { s += $NF } END { print s / 1048576 }' \
			"$T/metrics")" \
		"$(awk '/^heapsnoop_agent_table_bytes/ { s += $NF } END { print s / 1048576 }' "$T/metrics")" \
		"$(metric heapsnoop_agent_fork_seconds_max | awk '{ print $1 * 1000 }')" \
		"$(cat "$T/tm")" "$(cat "$T/th")" "$(($(stat -c %s "$T/heap") / 1024))" >> "$T/agent.txt"
	kill -TERM "$hs"; wait "$hs" || true; wait || true
	exec 5<&-
}

echo "heapsnoop agent benchmark: $N allocator calls per run, best of $R, modes in turn"
for _ in $(seq "$R"); do
	once untraced
	under floor 0 --empty-probes
	under sampled 0
	under every 0 --every-allocation
	under scraped 1
done
for m in floor sampled every scraped; do
	grep -h "events lost\|EVENTS LOST" "$T/$m.log" | sort | uniq -c | sed "s/^/  $m: /"
done
awk -v u="$(cat "$T/untraced")" -v f="$(cat "$T/floor")" -v s="$(cat "$T/sampled")" \
    -v e="$(cat "$T/every")" \
    -v c="$(cat "$T/scraped")" 'BEGIN {
	printf "  %-52s %10s %10s %9s\n", "", "ns/call", "overhead", "x untraced"
	row("untraced", u); row("heapsnoop agent --empty-probes (the floor)", f)
	row("heapsnoop agent (sampled 512 KiB)", s)
	row("heapsnoop agent --every-allocation", e)
	row("heapsnoop agent, both pages scraped every second", c)
}
function row(name, v) { printf "  %-52s %10.1f %10.1f %9.2fx\n", name, v, v - u, v / u }'
sed 's/^/  /' "$T/agent.txt"
