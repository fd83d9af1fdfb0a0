#!/bin/bash
# test_lostexit.sh - -a with a full ring buffer: a process whose exit event
# was lost must not stay in the tables (every later dump showed it live):
# its pid is gone, so it is ended before the next dump. The consumer is
# stopped while prog_waiter fills a 1 MiB ring buffer and then exits.
# About 3 s.
set -u
. "$(dirname "$0")/lib.sh"

mkfifo "$T/errpipe"
"$HS" -q -a --ringbuf-size 1 > "$T/rec" 2> "$T/errpipe" &
hs=$!
exec 5< "$T/errpipe"
wait_line 5 '^heapsnoop: tracing all processes' "$T/err" || exit 1
cat <&5 >> "$T/err" &

coproc W { exec "$PROGS/prog_waiter"; }
wait_line "${W[0]}" '^ready ' || exit 1
pid=$W_PID
kill -STOP "$hs"
echo "burst 200000" >&"${W[1]}"
wait_line "${W[0]}" '^done' || exit 1
echo exit >&"${W[1]}"
wait "$pid"
kill -CONT "$hs"
kill -INT "$hs"
wait "$hs"
check "heapsnoop exits 3 (events were lost)" test $? -eq 3
wait
check "its exit was lost (the premise)" \
	grep -Eq "^heapsnoop: EVENTS LOST: .* [1-9][0-9]* process exits or execs dropped" "$T/err"
expect_eq "the exited process is not live in the final dump" \
	"$(grep -c "^heapsnoop: live pid=$pid " "$T/rec")" 0
check "... and that is said" grep -Eq "^heapsnoop: [1-9][0-9]* processes whose exit was lost are gone: ended now" "$T/err"
finish
