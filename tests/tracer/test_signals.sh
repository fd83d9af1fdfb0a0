#!/bin/bash
# test_signals.sh - SIGUSR1 while heapsnoop -a is still starting (probing
# the kernel, loading, attaching: seconds) is a dump asked for, written
# once tracing runs, not the end of heapsnoop (its default action). The
# signal goes when -v has said what the kernel has, in the middle of
# start-up. Only an idle process is traced (--pid-filter): -a's start-up
# is the same, and what else runs on the machine (this shell reading -v's
# output among it) cannot fill the ring buffer. About 3 s.
set -u
. "$(dirname "$0")/lib.sh"

coproc W { exec "$PROGS/prog_waiter"; }
wait_line "${W[0]}" '^ready ' || exit 1
mkfifo "$T/errpipe" "$T/recpipe"
"$HS" -v -a --pid-filter "$W_PID" -o "$T/recpipe" 2> "$T/errpipe" &
hs=$!
exec 5< "$T/errpipe" 6< "$T/recpipe"	# the shell opens stderr, heapsnoop -o
wait_line 5 'BPF features probed' "$T/err" || exit 1
kill -USR1 "$hs"
wait_line 5 '^heapsnoop: tracing all processes' "$T/err"
check "heapsnoop -a survives a SIGUSR1 during start-up" kill -0 "$hs"
[ "$fails" -eq 0 ] || exit 1
cat <&5 >> "$T/err" &
wait_line 6 '^heapsnoop: end-dump' "$T/rec"
check "... and writes the dump it asked for once tracing runs" \
	grep -q '^heapsnoop: dump reason=usr1 ' "$T/rec"
cat <&6 > /dev/null &
kill -INT "$hs"
wait "$hs"
rc=$?
check "... and exits 0 at SIGINT" test "$rc" -eq 0
[ "$rc" -eq 0 ] || { echo "     (exit $rc; its last messages:)"; wait; grep -v '^libbpf' "$T/err" | tail -n 5; }
exec 5<&- 6<&-
echo exit >&"${W[1]}"
wait
finish
