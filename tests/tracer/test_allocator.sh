#!/bin/bash
# test_allocator.sh - --allocator probes every entry point of another
# allocator, found in its dynamic symbols: prog_jemalloc allocates through
# jemalloc's C++ operators and *allocx API, none of which calls its malloc
# (before: only the malloc'ed block was seen). -v lists them. -p with an
# allocator the process does not map is an error; a moving realloc is
# counted as a free. About 3 s.
set -u
. "$(dirname "$0")/lib.sh"

JE=$(realpath /usr/lib/x86_64-linux-gnu/libjemalloc.so.2)
"$HS" -q -v --allocator "$JE" -- "$PROGS/prog_jemalloc" > "$T/rec" 2> "$T/err"
check "jemalloc: exit 0" test $? -eq 0
fold "$T/rec"
B=$T/rec.bytes C=$T/rec.count
expect_eq "operator new: 3 leaks" "$(folded_sum "$C" "main;new_leak")" 3
expect_eq "operator new: 144 bytes" "$(folded_sum "$B" "main;new_leak")" 144
expect_eq "new then delete: nothing live" "$(folded_sum "$C" "main;new_freed")" 0
expect_eq "mallocx: 2 leaks, 200 bytes" "$(folded_sum "$B" "main;mallocx_leak")" 200
expect_eq "rallocx: the block, 5000 bytes" "$(folded_sum "$B" "main;rallocx_leak")" 5000
expect_eq "rallocx: one block" "$(folded_sum "$C" "main;rallocx_leak")" 1
expect_eq "xallocx in place: the block, 4096 bytes" "$(folded_sum "$B" "main;xallocx_leak")" 4096
expect_eq "xallocx: one block" "$(folded_sum "$C" "main;xallocx_leak")" 1
expect_eq "dallocx, sdallocx: nothing live" "$(folded_sum "$C" "main;dallocx_freed")" 0
expect_eq "malloc: 1 leak" "$(folded_sum "$C" "main;malloc_leak")" 1
for f in _Znwm _ZdlPv _ZdlPvm mallocx rallocx xallocx dallocx sdallocx; do
	check "-v lists $f" grep -qE "^heapsnoop: $f +0x" "$T/err"
done
check "no events lost" grep -q "no events lost" "$T/err"

# The closing accounting adds up: a realloc that moves its block frees the
# old one, counted with the frees (prog_realloc: 3 allocations, 1 moved).
"$HS" -q -- "$PROGS/prog_realloc" > /dev/null 2> "$T/rerr"
expect_eq "moving realloc: counted as a free, the totals add up" \
	"$(sed -n 's/^heapsnoop: traced \([0-9]*\) allocations and \([0-9]*\) frees (\([0-9]*\) of them by a realloc that moved the block) in 1 process(es); \([0-9]*\) live.*/\1 \2 \3 \4/p' "$T/rerr")" "3 1 1 2"

# -p with an allocator the process does not map.
coproc W { exec "$PROGS/prog_waiter"; }
wait_line "${W[0]}" '^ready ' || exit 1
"$HS" -q --allocator "$JE" -p "$W_PID" > /dev/null 2> "$T/e1"
check "-p, an allocator not mapped: exit 1" test $? -eq 1
check "-p, an allocator not mapped: says so" grep -q "process $W_PID does not map $JE" "$T/e1"
echo exit >&"${W[1]}"
finish
