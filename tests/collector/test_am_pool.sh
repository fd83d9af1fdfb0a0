#!/bin/bash
# test_am_pool.sh - the alloc-metadata library inside an allocator of its
# own (examples/am_pool.c): its dump, read by heapdecode, gives the live
# set and the recorded stacks, symbolized. Well under 1 s.
set -u
. "$(dirname "$0")/../tracer/lib.sh"

"$OUT/am_pool" > "$T/rec"
check "am_pool exits 0" test $? -eq 0
fold "$T/rec"
expect_eq "make_name: 4 x 40 bytes from main" "$(folded_sum "$T/rec.bytes" "main;make_name")" 160
expect_eq "make_name: 4 blocks" "$(folded_sum "$T/rec.count" "main;make_name")" 4
expect_eq "make_buffer: 4 x 1000 bytes" "$(folded_sum "$T/rec.bytes" "main;make_buffer")" 4000
check "stacks run from _start, the call site first" \
	grep -q '^_start;__libc_start_main[^;]*;__libc_start_call_main;main;make_buffer 4000$' "$T/rec.bytes"
expect_eq "nothing else live" "$(wc -l < "$T/rec.bytes")" 2
"$HD" --report "$T/rec" > "$T/report"
check "--report names the file and line of the call" \
	grep -qE '#0  0x[0-9a-f]+ make_buffer\+0x[0-9a-f]+ \(am_pool\) examples/am_pool.c:[0-9]+$' "$T/report"
finish
