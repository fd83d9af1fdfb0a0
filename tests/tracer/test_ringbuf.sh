#!/bin/bash
# test_ringbuf.sh - a full ring buffer (--on-full drop: the traced process
# does not wait for heapsnoop): heapsnoop's consumer is stopped
# (SIGSTOP) while the target makes 200,000 allocations into a 1 MiB ring
# buffer. Every dropped event must be counted and the loss said plainly
# (and in the exit status); tracing goes on afterwards; -v says the ring
# was full when the loader came back. Then the same stop with a burst of
# allocations whose stacks take 32 KiB each: those the ring buffer has no
# room for whole are sent with a short copy of their stack, cut there and
# said, rather than lost.
set -u
. "$(dirname "$0")/lib.sh"

coproc W { exec "$PROGS/prog_waiter"; }
wait_line "${W[0]}" '^ready ' || exit 1
pid=$W_PID
mkfifo "$T/errpipe" "$T/recpipe"
"$HS" -q -v --on-full drop --ringbuf-size 1 -p "$pid" > "$T/recpipe" 2> "$T/errpipe" &
hs=$!
exec 6< "$T/recpipe" 5< "$T/errpipe"
wait_line 5 "^heapsnoop: tracing pid $pid" "$T/err" || exit 1
cat <&5 >> "$T/err" &
drain=$!

kill -STOP "$hs"
echo "burst 200000" >&"${W[1]}"
wait_line "${W[0]}" '^done' || exit 1
kill -CONT "$hs"
# A SIGUSR1 dump drains the ring buffer first: once it is out, there is room.
kill -USR1 "$hs"
wait_line 6 '^heapsnoop: end-dump' "$T/rec.usr1" || exit 1
cat <&6 > "$T/rec" &
drain2=$!
echo "leak 3 100" >&"${W[1]}"
wait_line "${W[0]}" '^done' || exit 1
echo "exit" >&"${W[1]}"
wait "$hs"
check "heapsnoop exits 3: events were lost" test $? -eq 3
wait "$drain" "$drain2"

check "the loss is said plainly" grep -q "^heapsnoop: EVENTS LOST: [1-9][0-9]* allocations" "$T/err"
check "the advice names --ringbuf-size" grep -q -- "--ringbuf-size" "$T/err"
lost=$(sed -n 's/^heapsnoop: EVENTS LOST: \([0-9]*\) allocations and \([0-9]*\) frees.*/\1 \2/p' "$T/err")
traced=$(sed -n 's/^heapsnoop: traced \([0-9]*\) allocations and \([0-9]*\) frees.*/\1 \2/p' "$T/err")
# Every allocation and free of the burst is either traced or counted lost.
expect_eq "burst allocations all accounted for" \
	"$(( ${lost% *} + ${traced% *} >= 200003 ))" 1
expect_eq "burst frees all accounted for" "$(( ${lost#* } + ${traced#* } >= 200000 ))" 1
# -v: the deepest backlog the loader found, the whole ring here (it was
# full; a record that did not fit leaves at most its size unused).
backlog=$(sed -n 's/^heapsnoop: ring buffer: at most .* (\([0-9]*\) bytes, .* of its 1.0 MiB waited for the loader.*/\1/p' "$T/err")
expect_eq "-v: the deepest backlog is the full ring (${backlog:-none} bytes)" \
	"$(( ${backlog:-0} > 1048576 - 16384 && ${backlog:-0} <= 1048576 ))" 1
check "-v: the deepest backlog names --ringbuf-size" \
	grep -q "^heapsnoop: ring buffer: .*came close to full or filled; a larger --ringbuf-size keeps more" "$T/err"
# The burst's frees filled the stopped loader's per-CPU log and went to
# the ring buffer after it (kernels with BPF atomics: Linux 5.12).
if grep -qE '^heapsnoop:   BPF atomics \(cmpxchg, xchg\) +yes' "$T/err"; then
	logs=$(sed -n 's/^heapsnoop: frees: \([0-9]*\) through the per-CPU logs, \([0-9]*\) to the ring buffer .*/\1 \2/p' "$T/err")
	expect_eq "-v: a free log filled (${logs:-none} frees logged, to the ring)" \
		"$(( ${logs% *} >= 8192 && ${logs#* } > 0 ))" 1
else
	echo "skip -v: a free log filled: no free logs on this kernel (no BPF atomics, Linux 5.12)"
fi
fold "$T/rec"
expect_eq "tracing goes on after the loss" "$(folded_sum "$T/rec.count" "main;after_attach_leak")" 3

# 2. Wide stacks into a full ring: 100 allocations of 32 KiB copies each
# (a 64 KiB class) into 1 MiB, the loader stopped. Some 15 fit whole;
# then the ring's last room takes short copies (8 KiB), each its
# allocation kept with its two innermost frames, cut=; the rest lost.
coproc W2 { exec "$PROGS/prog_waiter"; }
wait_line "${W2[0]}" '^ready ' || exit 1
pid=$W2_PID
mkfifo "$T/errpipe2"
"$HS" -q -v --on-full drop --ringbuf-size 1 -p "$pid" > "$T/wide" 2> "$T/errpipe2" &
hs=$!
exec 5< "$T/errpipe2"
wait_line 5 "^heapsnoop: tracing pid $pid" "$T/wide.err" || exit 1
cat <&5 >> "$T/wide.err" &
drain=$!
kill -STOP "$hs"
echo "wide 100" >&"${W2[1]}"
wait_line "${W2[0]}" '^done' || exit 1
kill -CONT "$hs"
echo "exit" >&"${W2[1]}"
wait "$hs"
check "wide: heapsnoop exits 3: events were lost" test $? -eq 3
wait "$drain"
lost=$(sed -n 's/^heapsnoop: EVENTS LOST: \([0-9]*\) allocations.*/\1/p' "$T/wide.err")
short=$(sed -n 's/^heapsnoop: \([0-9]*\) allocations were sent with only the first 8 KiB of their stack.* \([0-9]*\) of their stacks cut there.*/\1 \2/p' "$T/wide.err")
echo "     (lost ${lost:-none}, short copies and their cuts: ${short:-none})"
check "wide: short copies said, each its stack cut" \
	test -n "$short" -a "${short% *}" -ge 1 -a "${short% *}" = "${short#* }"
"$HD" --folded --count "$T/wide" > "$T/wide.count"
whole=$(folded_sum "$T/wide.count" "main;wide_leak;after_attach_leak")
cut=$(grep -c "^\[stack_truncated\];wide_leak;after_attach_leak " "$T/wide.count")
ncut=$(folded_sum "$T/wide.count" "[stack_truncated];wide_leak;after_attach_leak")
expect_eq "wide: the short copies' blocks live under their two frames, marked cut" \
	"$cut:${ncut:-0}" "1:${short% *}"
expect_eq "wide: every allocation whole, short or lost (100)" \
	"$(( ${whole:-0} + ${ncut:-0} + ${lost:-0} ))" 100
check "-v: the short copies' cuts counted apart from --stack-copy's" \
	grep -qE "unwinding: [0-9]+ stacks, [0-9]+ complete, 0 cut at --stack-copy, ${short#* } at a short copy" "$T/wide.err"
finish
