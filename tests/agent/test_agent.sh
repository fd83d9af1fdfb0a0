#!/bin/bash
# test_agent.sh - heapsnoop agent read by the real parts it feeds, on
# loopback (docs/AGENT.md): prog_agent's heap, known to the byte, traced
# by `heapsnoop agent -p PID --every-allocation` on a port it picks;
# Debian's Prometheus scrapes /metrics and a PromQL query through its
# HTTP API answers the program's live bytes and blocks exactly; `go tool
# pprof -raw` fetches /debug/pprof/heap over HTTP and its totals are the
# program's and heapdecode --pprof's on the same run's log (a SIGUSR1
# dump); the endpoint's refusals (404, 400, 405); its pushes to a stand-in
# for Pyroscope's /ingest (ingest_server.py: the request checked as
# Pyroscope reads it, the profile's totals by go tool pprof). The agent
# must end with the program, nothing lost. Then the same numbers under -a (the agent's
# default) filtered by --comm, ended by SIGTERM.
#
# Waits: on the program's and the agent's lines (inotify's tail -F for
# the agent's stderr and log), and for Prometheus on its answers: its API
# asked again until the series is there (each ask 0.2 s apart), bounded
# by HS_TEST_TIMEOUT.
set -u
. "$(dirname "$0")/lib.sh"
LIVE_BYTES=705360 LIVE_BLOCKS=60 ALLOC_BYTES=755360 ALLOCS=110

if ! command -v prometheus > /dev/null; then
	echo "FAIL prometheus is not installed (scripts/install-deps.sh: Debian's prometheus)"
	exit 1
fi

# A free loopback port (the kernel's pick, let go: Prometheus takes it next).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The value of PromQL QUERY once Prometheus has it ("" after LIMIT s).
prom_value() { # QUERY
	local t0=$SECONDS v
	while ((SECONDS - t0 < LIMIT)); do
		v=$(curl -s -m 5 --data-urlencode "query=$1" "http://127.0.0.1:$PPORT/api/v1/query" |
			python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2> /dev/null)
		[ -n "$v" ] && { echo "$v"; return 0; }
		sleep 0.2
	done
	return 1
}

# 1. The Pyroscope stand-in; the program, held at "go"; the agent on it,
# pushing every second.
mkfifo "$T/in" "$T/out" "$T/ingest"
python3 "$(dirname "$0")/ingest_server.py" "$T" > "$T/ingest" &
INGEST=$!
exec 9< "$T/ingest"
wait_line 9 '^listening [0-9]+$' "$T/ingest.log" || exit 1
IPORT=$(sed -n 's/^listening //p' "$T/ingest.log")
"$PROGS/prog_agent" < "$T/in" > "$T/out" &
PROG=$!
exec 8> "$T/in" 7< "$T/out"
wait_line 7 '^ready [0-9]+$' || exit 1
"$HS" agent -p "$PROG" --every-allocation --listen 127.0.0.1:0 -o "$T/rec" \
	--push-pyroscope "http://127.0.0.1:$IPORT" --push-interval 1 --push-name 'prog_agent.heap{env=test}' \
	2> "$T/agent.err" 7<&- 8>&- 9<&- &
AGENT=$!
line=$(wait_file_line "$T/agent.err" 'serving http://127\.0\.0\.1:[0-9]+/metrics') || exit 1
PORT=$(sed 's/.*127\.0\.0\.1:\([0-9]*\)\/metrics.*/\1/' <<< "$line")
URL=http://127.0.0.1:$PORT
echo go >&8
wait_line 7 '^done ' || exit 1

# 2. The endpoint: its pages and refusals.
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
expect_eq "GET / answers 200" "$(code "$URL/")" 200
expect_eq "an unknown path answers 404" "$(code "$URL/nothing")" 404
expect_eq "?pid=abc answers 400" "$(code "$URL/debug/pprof/heap?pid=abc")" 400
expect_eq "POST answers 405" "$(code -X POST -d x "$URL/metrics")" 405
curl -s -D "$T/metrics.head" -o "$T/metrics" "$URL/metrics"
check "/metrics is Prometheus text 0.0.4" grep -qi '^content-type: text/plain; version=0.0.4' "$T/metrics.head"
expect_eq "/metrics: the program's live bytes" \
	"$(sed -n "s/^heapsnoop_live_bytes{pid=\"$PROG\",comm=\"prog_agent\",source=\"bpf\"} //p" "$T/metrics")" "$LIVE_BYTES"
check "/metrics: the call sites sum to the live bytes" bash -c \
	"awk '/^heapsnoop_site_live_bytes/ { s += \$NF } END { exit s != $LIVE_BYTES }' '$T/metrics'"
check "/metrics: the largest site is hold_big" grep -q '^heapsnoop_site_live_bytes{site="hold_big prog_agent.c:[0-9]*"} 655360$' "$T/metrics"
check "/metrics: every family has its HELP and TYPE" bash -c \
	"awk '/^# TYPE/ { t[\$3] = 1 } /^[a-z]/ { n = \$1; sub(/[{ ].*/, \"\", n); if (!(n in t)) bad++ }
	      END { exit bad > 0 }' '$T/metrics'"

# 3. Prometheus scrapes it; PromQL answers the live bytes exactly.
PPORT=$(free_port)
cat > "$T/prometheus.yml" << EOF2
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: heapsnoop
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF2
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prom" \
	--web.listen-address="127.0.0.1:$PPORT" > "$T/prom.log" 2>&1 7<&- 8>&- 9<&- &
PROM=$!
expect_eq "Prometheus: heapsnoop_live_bytes of the program" \
	"$(prom_value "heapsnoop_live_bytes{job=\"heapsnoop\",pid=\"$PROG\"}")" "$LIVE_BYTES"
expect_eq "Prometheus: heapsnoop_live_allocations of the program" \
	"$(prom_value "heapsnoop_live_allocations{job=\"heapsnoop\",pid=\"$PROG\"}")" "$LIVE_BLOCKS"
expect_eq "Prometheus: the scrape is up" "$(prom_value "up{job=\"heapsnoop\"}")" 1
kill "$PROM" 2> /dev/null
wait "$PROM" 2> /dev/null

# 4. go tool pprof over HTTP; heapdecode's totals on the same run's log.
expect_eq "go tool pprof -raw $URL/debug/pprof/heap: alloc_objects alloc_space inuse_objects inuse_space" \
	"$(raw_totals "$URL/debug/pprof/heap?pid=$PROG")" "$ALLOCS $ALLOC_BYTES $LIVE_BLOCKS $LIVE_BYTES"
check "?pid= of another process: a profile without samples" \
	test -z "$(raw_totals "$URL/debug/pprof/heap?pid=1")"
check "the profile names hold_small and hold_big" bash -c \
	"go tool pprof -raw '$URL/debug/pprof/heap' 2> /dev/null | grep -q ' hold_small ' &&
	 go tool pprof -raw '$URL/debug/pprof/heap' 2> /dev/null | grep -q ' hold_big '"
kill -USR1 "$AGENT"
wait_file_line "$T/rec" '^heapsnoop: end-dump ' > /dev/null
"$HD" --pprof "$T/rec.pb.gz" "$T/rec" 2> "$T/hd.err"
expect_eq "heapdecode --pprof on the agent's log: the same totals" \
	"$(raw_totals "$T/rec.pb.gz")" "$(raw_totals "$URL/debug/pprof/heap?pid=$PROG")"

# 5. The pushes: each one Pyroscope's /ingest takes (name, from <= until,
# format=pprof, multipart with a gzip'ed "profile"); one made after the
# program's "done" has its totals (at most 10 waited for).
PUSHED=
for ((i = 0; i < 10; i++)); do
	wait_line 9 '^(push|bad) ' "$T/ingest.log" || break
	n=$(tail -n 1 "$T/ingest.log" | awk '{ print $2 }')
	[ "$(raw_totals "$T/push-$n.pb.gz")" = "$ALLOCS $ALLOC_BYTES $LIVE_BLOCKS $LIVE_BYTES" ] &&
		{ PUSHED=$n; break; }
done
check "push: every request is one /ingest takes" bash -c "! grep -q '^bad ' '$T/ingest.log'"
check "push: its name and labels" grep -q '^push [0-9]* name=prog_agent.heap{env=test} ' "$T/ingest.log"
expect_eq "push: a profile pushed after the program's allocations has its totals" \
	"${PUSHED:+$(raw_totals "$T/push-$PUSHED.pb.gz")}" "$ALLOCS $ALLOC_BYTES $LIVE_BLOCKS $LIVE_BYTES"
curl -s -o "$T/metrics2" "$URL/metrics"
check "push: counted in /metrics, none failed" bash -c \
	"grep -q '^heapsnoop_agent_pushes_total [1-9]' '$T/metrics2' &&
	 grep -q '^heapsnoop_agent_push_failures_total 0$' '$T/metrics2'"

# 6. The program ends: so does the agent (-p), nothing lost.
end_agent "the agent ends with its -p target, exit 0" "$T/agent.err"
check_no_loss "the agent lost no event" "$T/agent.err"
kill "$INGEST" 2> /dev/null
exec 9<&-

# 7. Every process (-a, the agent's default) filtered to the program's
# name: the same numbers; SIGTERM ends it, nothing lost.
rm -f "$T/in" "$T/out"
mkfifo "$T/in" "$T/out"
"$PROGS/prog_agent" < "$T/in" > "$T/out" &
PROG=$!
exec 8> "$T/in" 7< "$T/out"
wait_line 7 '^ready [0-9]+$' || exit 1
"$HS" agent --comm prog_agent --every-allocation --listen 127.0.0.1:0 2> "$T/agent_a.err" 7<&- 8>&- &
AGENT=$!
line=$(wait_file_line "$T/agent_a.err" 'serving http://127\.0\.0\.1:[0-9]+/metrics') || exit 1
URL=http://127.0.0.1:$(sed 's/.*127\.0\.0\.1:\([0-9]*\)\/metrics.*/\1/' <<< "$line")
echo go >&8
wait_line 7 '^done ' || exit 1
curl -s -o "$T/metrics_a" "$URL/metrics"
expect_eq "-a --comm: /metrics: the program's live bytes" \
	"$(sed -n "s/^heapsnoop_live_bytes{pid=\"$PROG\",comm=\"prog_agent\",source=\"bpf\"} //p" "$T/metrics_a")" "$LIVE_BYTES"
expect_eq "-a --comm: go tool pprof -raw: the program's totals" \
	"$(raw_totals "$URL/debug/pprof/heap?pid=$PROG")" "$ALLOCS $ALLOC_BYTES $LIVE_BLOCKS $LIVE_BYTES"
end_agent "-a --comm: SIGTERM ends the agent, exit 0" "$T/agent_a.err" term
check_no_loss "-a --comm: the agent lost no event" "$T/agent_a.err"
finish
