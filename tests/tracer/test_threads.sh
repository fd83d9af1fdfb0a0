#!/bin/bash
# test_threads.sh - 4 threads allocating and freeing each other's blocks:
# exact live totals, nothing lost.
set -u
. "$(dirname "$0")/lib.sh"

"$HS" -q -- "$PROGS/prog_threads" > "$T/rec" 2> "$T/err"
check "launch mode exits 0" test $? -eq 0
fold "$T/rec"
expect_eq "live blocks from thread_alloc" "$(folded_sum "$T/rec.count" "thread_main;thread_alloc")" 2000
expect_eq "live bytes from thread_alloc" "$(folded_sum "$T/rec.bytes" "thread_main;thread_alloc")" 80000
check_no_loss "no events lost" "$T/err"
check "no free went missing" bash -c "! grep -q 'allocated again while live' '$T/err'"
finish
