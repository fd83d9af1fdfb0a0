#!/bin/bash
# test_threads.sh - 4 threads allocating and freeing each other's blocks:
# exact live totals, nothing lost; and so with every thread in one thread
# slot (--thread-slots 1), their calls' state moving to task storage
# whenever another thread's call holds the slot.
set -u
. "$(dirname "$0")/lib.sh"

"$HS" -q -- "$PROGS/prog_threads" > "$T/rec" 2> "$T/err"
check "launch mode exits 0" test $? -eq 0
fold "$T/rec"
expect_eq "live blocks from thread_alloc" "$(folded_sum "$T/rec.count" "thread_main;thread_alloc")" 2000
expect_eq "live bytes from thread_alloc" "$(folded_sum "$T/rec.bytes" "thread_main;thread_alloc")" 80000
check_no_loss "no events lost" "$T/err"
check "no free went missing" bash -c "! grep -q 'allocated again while live' '$T/err'"

"$HS" -q -v --thread-slots 1 -- "$PROGS/prog_threads" > "$T/one" 2> "$T/one.err"
check "--thread-slots 1: exits 0" test $? -eq 0
fold "$T/one"
expect_eq "--thread-slots 1: live blocks" "$(folded_sum "$T/one.count" "thread_main;thread_alloc")" 2000
expect_eq "--thread-slots 1: live bytes" "$(folded_sum "$T/one.bytes" "thread_main;thread_alloc")" 80000
check_no_loss "--thread-slots 1: no events lost" "$T/one.err"
check "--thread-slots 1: no free went missing" bash -c "! grep -q 'allocated again while live' '$T/one.err'"
# The path under test was taken: calls whose slot another thread's call
# held. Kernels without BPF atomics (before 5.12) have no thread slots.
if grep -qE '^heapsnoop:   BPF atomics \(cmpxchg, xchg\) +yes' "$T/one.err"; then
	spilled=$(sed -n 's/^heapsnoop: \([0-9]*\) allocator calls kept their state in task storage.*/\1/p' "$T/one.err")
	check "--thread-slots 1: calls moved to task storage (${spilled:-none})" test "${spilled:-0}" -gt 0
else
	echo "skip --thread-slots 1: calls moved to task storage: no thread slots on this kernel (no BPF atomics, Linux 5.12)"
fi

"$HS" --thread-slots 3 -- true > /dev/null 2> "$T/bad"
check "--thread-slots 3: exit 1" test $? -eq 1
check "--thread-slots 3: says it must be a power of two" \
	grep -q -- "--thread-slots must be a power of two, from 1 to 1048576" "$T/bad"
finish
