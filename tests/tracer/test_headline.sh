#!/bin/bash
# test_headline.sh - the answer first (issue 32): the first line of
# heapsnoop -s, heapdecode --report and --growth names the biggest holder,
# the innermost function of the program's own with its file:line, its
# size in KiB and its blocks (--growth's: test_overtime.sh); a helper's callers summed under it (--by
# function); --top N; stacks cut below main and the thread start unless
# --full-stacks; symbol versions hidden; --report --sort KEY's headline. On examples/leaky.c and
# prog_holder.c (a helper inlined into two callers, one in a thread).
set -u
. "$(dirname "$0")/lib.sh"

# leaky: load_config's 4096-byte config is the biggest holder (the stdio
# buffer printf asks for holds as much, in main: after load_config by name).
"$HS" -s -o "$T/leaky.log" -- "$OUT/leaky" > /dev/null 2> "$T/leaky.err"
check "leaky traced" test $? -eq 0
LEAKY_LINE="4.0 KiB in 1 block, load_config (leaky.c:58) <- main (leaky.c:67)"
expect_eq "heapsnoop -s: the summary's first line names the holder" \
	"$(grep -m1 -A1 '^heapsnoop: biggest holder' "$T/leaky.err" | tail -n 1 | cut -c1-19)" \
	"heapsnoop: summary:"
expect_eq "heapsnoop -s: the headline" \
	"$(sed -n 's/^heapsnoop: biggest holder: //p' "$T/leaky.err")" "$LEAKY_LINE"
"$HD" --report "$T/leaky.log" > "$T/leaky.rep"
expect_eq "--report: its first line, the same holder" "$(head -n 1 "$T/leaky.rep")" \
	"biggest holder: $LEAKY_LINE"
check "--report: sizes in KiB, the total's exact bytes beside (the stdio buffer apart)" \
	grep -q '^total: 6.5 KiB (6656 bytes) in 11 allocations from 2 stacks$' "$T/leaky.rep"
check "--report: new_session's 10 sessions, 2.5 KiB" \
	grep -q '^2.5 KiB (38.5%) in 10 allocations from pid [0-9]*:$' "$T/leaky.rep"
check "--report: no __libc_start_main, no _start; main kept" bash -c "
	! grep -qE '__libc_start_main|__libc_start_call_main| _start\\+' '$T/leaky.rep' &&
	grep -qE '#1  0x[0-9a-f]+ main\\+0x[0-9a-f]+ \\(leaky\\) .*leaky.c:67$' '$T/leaky.rep'"
# printf's stdio buffer is the C runtime's: shown with --no-default-suppressions.
"$HD" --report --no-default-suppressions "$T/leaky.log" > "$T/leaky.rt"
check "--report --no-default-suppressions: no symbol version (printf's stdio frames)" bash -c "
	grep -q ' _IO_file_overflow+0x' '$T/leaky.rt' && ! grep -q '@@GLIBC' '$T/leaky.rt'"
"$HD" --report --full-stacks "$T/leaky.log" > "$T/leaky.full"
check "--full-stacks: the C runtime's start below main" \
	grep -qE '__libc_start_main\+0x[0-9a-f]+ \(libc.so.6\)' "$T/leaky.full"
"$HD" --report --top 1 "$T/leaky.log" > "$T/leaky.top"
expect_eq "--report --top 1: one stack" "$(grep -c 'allocations from pid' "$T/leaky.top")" 1
check "--top 1: the others summed, the total whole" bash -c "
	grep -q '^... 1 more stack, 2.5 KiB (--top N shows more)$' '$T/leaky.top' &&
	grep -q '^total: 6.5 KiB (6656 bytes) in 11 allocations from 2 stacks$' '$T/leaky.top'"

# prog_holder: grow_buffer's 4 blocks of 16 KiB, inlined into read_a and
# read_b (in a thread), sum to more than big_table's 40 KiB in one stack.
"$HS" -s -o "$T/h.log" -- "$PROGS/prog_holder" > /dev/null 2> "$T/h.err"
check "prog_holder traced" test $? -eq 0
H_LINE="64.0 KiB in 4 blocks, grow_buffer (prog_holder.c:19) <- read_a (prog_holder.c:27)"
expect_eq "heapsnoop -s: the inlined helper, its callers summed" \
	"$(sed -n 's/^heapsnoop: biggest holder: //p' "$T/h.err")" "$H_LINE"
"$HD" --report "$T/h.log" > "$T/h.rep"
expect_eq "--report: the same first line" "$(head -n 1 "$T/h.rep")" "biggest holder: $H_LINE"
check "--report: the biggest stack is big_table's, 40.0 KiB" \
	grep -q '^40.0 KiB (38.5%) in 1 allocations from pid [0-9]*:$' <(sed -n 2p "$T/h.rep")
# (Then its creator's frames, after the boundary: docs/DESIGN.md, "Who
# created a thread"; clone3 is among them, start_thread is not.)
check "--report: the thread's stacks end at its function (no start_thread), its creator after" bash -c "
	grep -qE 'reader\\+0x[0-9a-f]+ \\(prog_holder\\)' '$T/h.rep' &&
	grep -q -- '---- created by ----' '$T/h.rep' && ! grep -qE 'start_thread' '$T/h.rep'"
check "--full-stacks: start_thread there" \
	bash -c "'$HD' --report --full-stacks '$T/h.log' | grep -q ' start_thread'"
"$HD" --report --by function "$T/h.log" > "$T/h.fn"
expect_eq "--by function: the inlined helper first, its callers beneath, their shares" \
	"$(sed -n 2,4p "$T/h.fn")" \
"64.0 KiB (61.4%) in 4 allocations: grow_buffer
    32.0 KiB (50.0%) in 2 allocations from read_a (prog_holder.c:27)
    32.0 KiB (50.0%) in 2 allocations from read_b (prog_holder.c:33)"
check "--by function: big_table from main" bash -c "
	grep -A1 '^40.0 KiB (38.4%) in 1 allocations: big_table$' '$T/h.fn' |
	grep -q '^    40.0 KiB (100.0%) in 1 allocations from main (prog_holder.c:53)$'"
"$HD" --report --sort live "$T/h.log" > "$T/h.sort"
expect_eq "--report --sort live: the same headline first" "$(head -n 1 "$T/h.sort")" "biggest holder: $H_LINE"
expect_eq "--report --sort live: its first stack, big_table's, said not the holder's" \
	"$(sed -n 2p "$T/h.sort")" "sorted by live: the first stack below is big_table's, not the biggest holder's"

# Nothing live: said plainly.
printf 'heapsnoop: dump reason=exit time=1.000 live=0 bytes=0 stacks=0\nheapsnoop: end-dump live=0\n' > "$T/none.log"
expect_eq "--report on a dump of nothing live: said" "$("$HD" --report "$T/none.log" | head -n 1)" \
	"biggest holder: none, nothing is live"
finish
