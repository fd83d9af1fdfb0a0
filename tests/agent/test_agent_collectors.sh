#!/bin/bash
# test_agent_collectors.sh - heapsnoop agent as a service (docs/AGENT.md):
# processes that say hello, a restart that loses none of them, the
# memory bound enforced.
#
# 1. prog_agent started with the collector (LD_PRELOAD) and
#    HEAPSNOOP_AGENT naming the agent's socket says hello; /metrics and
#    go tool pprof give its heap exactly (60 blocks, 705360 bytes, its
#    two stacks, source="collector"; ?comm= filters).
# 2. The agent killed with SIGKILL and started again finds the table in
#    /proc (no hello) and serves the same totals, exactly; a second agent
#    on the same socket is refused while one listens.
# 3. --max-memory 1K under every allocation: past the bound at once, the
#    program's 110 allocations go under "[over the memory bound]", its
#    live bytes still exact, said once and counted.
#
# Waits: on the program's lines and the agent's (tail -F of its stderr:
# its ready line, "its live table served", "over --max-memory"), never
# on sleeps.
set -u
. "$(dirname "$0")/lib.sh"
LIVE_BYTES=705360 LIVE_BLOCKS=60 ALLOC_BYTES=755360 ALLOCS=110
SOCK=$T/run/agent.sock
PRELOAD=$OUT/libheapsnoop_preload.so

# The agent started on the collectors' socket (every process, filtered to
# a name nothing has: the collectors' tables only); its URL in $URL.
start_agent() { # ERRFILE
	"$HS" agent --comm hs-no-such-prog --listen 127.0.0.1:0 --collectors "$SOCK" \
		2> "$1" 7<&- 8>&- &
	AGENT=$!
	line=$(wait_file_line "$1" 'serving http://127\.0\.0\.1:[0-9]+/metrics') || exit 1
	URL=http://127.0.0.1:$(sed 's/.*127\.0\.0\.1:\([0-9]*\)\/metrics.*/\1/' <<< "$line")
}

# The collector's series VALUE of family NAME for the program.
series() { # FILE NAME
	sed -n "s/^$2{pid=\"$PROG\",comm=\"prog_agent\",source=\"collector\"} //p" "$1"
}

# 1. A hello.
start_agent "$T/agent1.err"
mkfifo "$T/in" "$T/out"
LD_PRELOAD=$PRELOAD HEAPSNOOP_AGENT=$SOCK HEAPSNOOP_OUTPUT=$T/self.%p \
	"$PROGS/prog_agent" < "$T/in" > "$T/out" &
PROG=$!
exec 8> "$T/in" 7< "$T/out"
wait_line 7 '^ready [0-9]+$' || exit 1
wait_file_line "$T/agent1.err" "pid $PROG \\(prog_agent\\): its live table served \\(it said hello\\)" \
	> /dev/null || exit 1
check "the socket is mode 0666 in a directory only its owner writes" bash -c \
	"test \"\$(stat -c %a '$SOCK')\" = 666 && test \"\$(stat -c %a '$T/run')\" = 755"
echo go >&8
wait_line 7 '^done ' || exit 1
curl -s -o "$T/m1" "$URL/metrics"
expect_eq "hello: /metrics: the program's live bytes" "$(series "$T/m1" heapsnoop_live_bytes)" "$LIVE_BYTES"
expect_eq "hello: /metrics: its live blocks" "$(series "$T/m1" heapsnoop_live_allocations)" "$LIVE_BLOCKS"
check "hello: one hello counted" grep -q '^heapsnoop_agent_collector_hellos_total 1$' "$T/m1"
PPROF1=$(raw_totals "$URL/debug/pprof/heap?pid=$PROG")
expect_eq "hello: go tool pprof -raw: alloc_objects alloc_space inuse_objects inuse_space" \
	"$PPROF1" "0 0 $LIVE_BLOCKS $LIVE_BYTES"
go tool pprof -raw "$URL/debug/pprof/heap?pid=$PROG" > "$T/raw1" 2> /dev/null
check "hello: its stacks named, hold_small and hold_big, labelled source collector" bash -c \
	"grep -q ' hold_small ' '$T/raw1' && grep -q ' hold_big ' '$T/raw1' &&
	 grep -q 'source:\\[collector\\]' '$T/raw1'"

expect_eq "hello: ?comm=prog_agent: the same totals" \
	"$(raw_totals "$URL/debug/pprof/heap?comm=prog_agent")" "$PPROF1"
check "hello: ?comm= of another name: a profile without samples" \
	test -z "$(raw_totals "$URL/debug/pprof/heap?comm=hs-nobody")"
expect_eq "hello: ?comm= empty answers 400" \
	"$(curl -s -o /dev/null -w '%{http_code}' "$URL/debug/pprof/heap?comm=")" 400

# 2. Killed (SIGKILL), started again: the table found in /proc, the same totals.
kill -KILL "$AGENT"
wait "$AGENT" 2> /dev/null
start_agent "$T/agent2.err"
wait_file_line "$T/agent2.err" "pid $PROG \\(prog_agent\\): its live table served \\(found in /proc\\)" \
	> /dev/null || exit 1
curl -s -o "$T/m2" "$URL/metrics"
expect_eq "restart: /metrics: the same live bytes" "$(series "$T/m2" heapsnoop_live_bytes)" \
	"$(series "$T/m1" heapsnoop_live_bytes)"
expect_eq "restart: /metrics: the same live blocks" "$(series "$T/m2" heapsnoop_live_allocations)" \
	"$LIVE_BLOCKS"
check "restart: found, not said hello" bash -c \
	"grep -q '^heapsnoop_agent_collectors_found_total 1$' '$T/m2' &&
	 grep -q '^heapsnoop_agent_collector_hellos_total 0$' '$T/m2'"
expect_eq "restart: go tool pprof -raw: the same totals" \
	"$(raw_totals "$URL/debug/pprof/heap?pid=$PROG")" "$PPROF1"
"$HS" agent --comm hs-no-such-prog --listen 127.0.0.1:0 --collectors "$SOCK" 2> "$T/agent3.err" 7<&- 8>&-
status=$?
check "a second agent on the socket is refused (status $status)" bash -c \
	"test $status -ne 0 && grep -q 'another agent listens there' '$T/agent3.err'"

# The program ends: its table is let go.
end_agent "SIGTERM ends the agent, exit 0" "$T/agent2.err" term
check "the agent removed its socket" test ! -e "$SOCK"

# 3. The memory bound, passed at once: every allocation under one stack.
rm -f "$T/in" "$T/out"
mkfifo "$T/in" "$T/out"
"$PROGS/prog_agent" < "$T/in" > "$T/out" &
PROG=$!
exec 8> "$T/in" 7< "$T/out"
wait_line 7 '^ready [0-9]+$' || exit 1
"$HS" agent -p "$PROG" --every-allocation --max-memory 1K --listen 127.0.0.1:0 \
	2> "$T/agent4.err" 7<&- 8>&- &
AGENT=$!
line=$(wait_file_line "$T/agent4.err" 'serving http://127\.0\.0\.1:[0-9]+/metrics') || exit 1
URL=http://127.0.0.1:$(sed 's/.*127\.0\.0\.1:\([0-9]*\)\/metrics.*/\1/' <<< "$line")
wait_file_line "$T/agent4.err" 'over --max-memory.s 1 KiB: new allocations go under one stack' \
	> /dev/null || exit 1
echo go >&8
wait_line 7 '^done ' || exit 1
curl -s -o "$T/m4" "$URL/metrics"
expect_eq "bound: /metrics: the program's live bytes, exact" \
	"$(sed -n "s/^heapsnoop_live_bytes{pid=\"$PROG\",comm=\"prog_agent\",source=\"bpf\"} //p" "$T/m4")" \
	"$LIVE_BYTES"
check "bound: the 110 allocations counted under the bound, over it now" bash -c \
	"grep -q '^heapsnoop_agent_collapsed_allocations_total $ALLOCS$' '$T/m4' &&
	 grep -q '^heapsnoop_agent_over_bound 1$' '$T/m4'"
go tool pprof -raw "$URL/debug/pprof/heap?pid=$PROG" > "$T/raw4" 2> /dev/null
expect_eq "bound: go tool pprof -raw: the totals" \
	"$(raw_totals "$URL/debug/pprof/heap?pid=$PROG")" "$ALLOCS $ALLOC_BYTES $LIVE_BLOCKS $LIVE_BYTES"
check "bound: one stack, [over the memory bound]" bash -c \
	"grep -q '\\[over the memory bound\\]' '$T/raw4' && ! grep -q ' hold_big ' '$T/raw4'"
expect_eq "bound: said once" "$(grep -c 'over --max-memory.s' "$T/agent4.err")" 1
exec 8>&- 7<&-
wait "$PROG"
wait "$AGENT"
finish
