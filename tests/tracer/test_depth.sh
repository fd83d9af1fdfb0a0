#!/bin/bash
# test_depth.sh - a stack deeper than one `~m#` token (31 frames) is kept
# whole by the tracer, up to a record's 1024 frames (docs/OUTPUT.md,
# depth=): prog_collect's `deep N` is N + 5 frames from _start. deep 60:
# 65 frames through main, no cut=, in the live and the stack record,
# whole in -s, --report, --folded and heapsnoop's own summary; deep 1100
# (1105 frames): its innermost 1024, cut=depth; --unwind fp's BPF walk
# stays at its limit (31 frames), marked cut=depth as before. About 3 s.
set -u
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
PC=$PROGS/prog_collect
D60='^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_deep;(deep_recurse;){59}deep_recurse 1234$'

"$HS" -s -o rec60 -- "$PC" deep 60 > /dev/null 2> err60
check "deep 60: traced (exit 0)" test $? -eq 0
expect_eq "deep 60: the live record says depth=65, no cut=" \
	"$(grep -c '^heapsnoop: live pid=[0-9]* ptr=0x[0-9a-f]* depth=65 ~m#[^ ]* ~m#[^ ]* ~m#[^ ]*$' rec60)" 1
expect_eq "deep 60: the stack record too" \
	"$(grep -c '^heapsnoop: stack .* peak_count=1 depth=65 ~m#[^ ]* ~m#[^ ]* ~m#[^ ]*$' rec60)" 1
expect_eq "deep 60: no record is cut" "$(grep -c ' cut=' rec60)" 0
fold rec60
expect_eq "deep 60: --folded, whole from _start through main, 60 deep_recurse" \
	"$(grep -cE "$D60" rec60.bytes)" 1
"$HD" -s rec60 > sym60
check "deep 60: -s numbers the 65 frames, _start the last" \
	bash -c "sed -n '/ptr=.* depth=65 ~b#size: 1234,/,/^heapsnoop/p' sym60 | grep -c '^    #' | grep -qx 65 &&
		grep -q '^    #64 .* _start' sym60"
"$HD" --report rec60 > rep60
check "deep 60: --report, 65 frames, not marked" \
	bash -c "grep -A66 '^1234 bytes .* from pid [0-9]*:$' rep60 | grep -c '^    #' | grep -qx 65"
check "deep 60: heapsnoop's summary shows it whole (#64, no mark)" \
	bash -c "grep -q '^ *#64 .* _start' err60 && ! grep -q 'stack truncated' err60"
check "deep 60: the accounting counts no truncated stack" \
	grep -q '^heapsnoop: 0 allocations had a truncated stack' err60

# Past a record's 1024 frames: the innermost 1024, said.
"$HS" -q --stack-copy 65536 -o rec1100 -- "$PC" deep 1100 > /dev/null 2> err1100
check "deep 1100: traced (exit 0)" test $? -eq 0
expect_eq "deep 1100: its 1024 innermost frames, cut=depth" \
	"$(grep -c '^heapsnoop: live .* cut=depth depth=1024 ~m#' rec1100)" 1
fold rec1100
check "deep 1100: --folded roots it at [stack_truncated]" \
	grep -qE '^\[stack_truncated\];(deep_recurse;){1023}deep_recurse 1234$' rec1100.bytes

# --unwind fp: BPF's walk keeps 31 frames, and says the rest is cut.
"$HS" -q --unwind fp -o recfp -- "$PC" deep 60 > /dev/null 2> errfp
check "--unwind fp, deep 60: traced (exit 0)" test $? -eq 0
expect_eq "--unwind fp, deep 60: 31 frames, cut=depth, no depth=" \
	"$(grep -c '^heapsnoop: live pid=[0-9]* ptr=0x[0-9a-f]* cut=depth ~m#[^ ]*$' recfp)" 1

[ $fails -eq 0 ]
