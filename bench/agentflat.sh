#!/bin/bash
# agentflat.sh - issue 35's "Done when": heapsnoop agent left running
# beside a program that allocates and frees steadily keeps its memory
# flat. bench/workload.c (a pool of 4096 slots: its live set bounded)
# runs for MINUTES under `heapsnoop agent` (-a, sampled, the default;
# AGENT_ARGS to change), scraped every STEP seconds as Prometheus would:
# each line the agent's resident memory (its own, files' pages, shared)
# and tables, the workload's live
# bytes as the agent estimates them, the events handled and lost.
#   usage: bench/agentflat.sh [BUILD_DIR]   (root; after `make`)
#   MINUTES (10), STEP (30), AGENT_ARGS ("")
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
MINUTES=${MINUTES:-10}
STEP=${STEP:-30}
PORT=${BENCH_PORT:-16070}
WL=$OUT/workload
T=$(mktemp -d)
trap 'rm -rf "$T"; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
[ -x "$WL" ] || gcc -O2 -g -fno-omit-frame-pointer -o "$WL" bench/workload.c

mkfifo "$T/err"
# shellcheck disable=SC2086
"$OUT/heapsnoop" agent --listen "127.0.0.1:$PORT" ${AGENT_ARGS:-} 2> "$T/err" &
hs=$!
exec 5< "$T/err"
while IFS= read -r -t 60 line <&5; do
	[[ $line == *"serving http://"* ]] && break
done
cat <&5 > "$T/agent.log" &
"$WL" 4000000000 > /dev/null &
wl=$!
val() { # METRIC-LINE-REGEX
	awk -v re="$1" '$0 ~ re { s += $NF } END { printf "%.0f", s }' "$T/m"
}
printf '%6s %9s %9s %9s %10s %14s %14s %8s\n' "s" "anon_MiB" "file_MiB" "shmem_MiB" \
	"tables_MiB" "workload_live" "events" "lost"
t0=$SECONDS
while ((SECONDS - t0 < MINUTES * 60)); do
	curl -s -o "$T/m" "http://127.0.0.1:$PORT/metrics"
	printf '%6d %9.1f %9.1f %9.1f %10.1f %14s %14s %8s\n' $((SECONDS - t0)) \
		"$(val '^heapsnoop_agent_resident_bytes\\{kind="anon"' | awk '{ print $1 / 1048576 }')" \
		"$(val '^heapsnoop_agent_resident_bytes\\{kind="file"' | awk '{ print $1 / 1048576 }')" \
		"$(val '^heapsnoop_agent_resident_bytes\\{kind="shmem"' | awk '{ print $1 / 1048576 }')" \
		"$(val '^heapsnoop_agent_table_bytes' | awk '{ print $1 / 1048576 }')" \
		"$(val "^heapsnoop_live_bytes\\{pid=\"$wl\"")" \
		"$(val '^heapsnoop_events_total')" "$(val '^heapsnoop_events_lost_total ')"
	sleep "$STEP"
done
kill "$wl"
kill -TERM "$hs"
wait "$hs" || true
grep -h "events lost\|EVENTS LOST\|own memory" "$T/agent.log" | sed 's/^/  /'
