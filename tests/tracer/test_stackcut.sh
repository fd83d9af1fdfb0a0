#!/bin/bash
# test_stackcut.sh - an incomplete stack is never passed off as complete:
# prog_nofp's 4444-byte block (80 KiB deep: cut at --stack-copy) and its
# 5555-byte block (below a 32 KiB frame: cut too) carry cut= in their
# `live` and `stack` records (docs/OUTPUT.md), and heapdecode's -s, --report, --report
# --by and --folded show the mark, cut=unreadable's too (the same record so
# marked); complete stacks carry none. About 2 s.
set -u
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

"$HS" -q --stack-copy 16384 -- "$PROGS/prog_nofp" > rec 2> err
check "traced" test $? -eq 0
"$HD" rec > dec
expect_eq "the 4444-byte block: its record says cut=depth" \
	"$(grep -c '^heapsnoop: live pid=[0-9]* ptr=0x[0-9a-f]* cut=depth size=4444 node=[0-9^]* ~b#size: 4444,' dec)" 1
expect_eq "the 5555-byte block (a 32 KiB frame, deeper than the copy): cut=depth" \
	"$(grep -c '^heapsnoop: live pid=[0-9]* ptr=0x[0-9a-f]* cut=depth size=5555 node=[0-9^]* ~b#size: 5555,' dec)" 1
expect_eq "no other live record is marked" "$(grep -c '^heapsnoop: live .* cut=' dec)" 2
expect_eq "... and their stacks' whole-run records are, as theirs" "$(grep -c '^heapsnoop: stack .* cut=depth node=[0-9^]* ~b#size: 0,' dec)" 2

# The unreadable mark, on the same record: the 4444-byte block's line
# (the filter keeps line numbers) with cut=unreadable.
n=$(grep -n 'cut=depth size=4444 node=[0-9^]* ~b#size: 4444,' dec | cut -d: -f1)
sed "${n}s/ cut=depth / cut=unreadable /" rec > unr
"$HD" -s rec > sym
"$HD" -s unr > usym
# The line after a record's frames (those starting "    #").
after_frames() { # REGEX FILE
	awk -v re="$1" 'on && !/^    #/ { print; exit } $0 ~ re { on = 1 }' "$2"
}
expect_eq "-s: the mark after the cut stack's frames" \
	"$(after_frames 'cut=depth size=4444 node=[0-9^]* ~b#size: 4444,' sym)" "    (stack truncated)"
expect_eq "-s: ... and after an unreadable one's" \
	"$(after_frames 'cut=unreadable size=4444 node=[0-9^]* ~b#size: 4444,' usym)" \
	"    (stack unreadable past here)"
"$HD" --report rec > rep
"$HD" --report unr > urep
check "--report: the cut stack's header" \
	grep -q '^4.3 KiB (.*) in 1 allocations from pid [0-9]* (stack truncated):$' rep
check "--report: the other's" \
	grep -q '^5.4 KiB (.*) in 1 allocations from pid [0-9]* (stack truncated):$' rep
check "--report: an unreadable one's" \
	grep -q '^4.3 KiB (.*) in 1 allocations from pid [0-9]* (stack unreadable past here):$' urep
expect_eq "--report: no other stack marked" "$(grep -c '(stack ' rep)" 2
"$HD" --report --by function rec > byf
check "--report --by function: lib_leaf's row counts the 2 incomplete ones" \
	grep -q 'allocations: lib_leaf (2 with an incomplete stack)$' byf
fold rec
fold unr
check "--folded: the mark is the cut stack's root" \
	grep -qE '^\[stack_truncated\];p_recurse;p_recurse;p_recurse;p_recurse;lib_leaf 4444$' rec.bytes
check "--folded: and the other's" grep -qE '^\[stack_truncated\];p_bigframe;lib_leaf 5555$' rec.bytes
check "--folded: an unreadable one's" \
	grep -qE '^\[stack_unreadable_past_here\];p_recurse;p_recurse;p_recurse;p_recurse;lib_leaf 4444$' unr.bytes
expect_eq "--folded: every other stack starts at the first frame" \
	"$(grep -vcE '^(_start|__clone3|thread_start|_dl_start_user);' rec.bytes)" 2
finish
