#!/bin/bash
# test_unwind.sh - --unwind dwarf on code without frame pointers: a program
# and libraries of its own built -O2 -fomit-frame-pointer (tests/unwind/),
# chains of 9+ frames crossing the library boundary, a frame with no CFI
# (frame-pointer fallback), a thread, a library dlopen()ed while traced, a
# library constructor run by the dynamic loader (complete at its entry), a
# stack deeper than the copy, a frame whose stack pages were never touched
# (cut at --stack-copy 16384, complete through the holes at 64 KiB and by
# default, the whole stack copied);
# the same program with --unwind fp for contrast; options.
set -u
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

"$HS" -q -v -s --stack-copy 16384 -- "$PROGS/prog_nofp" > rec 2> err
check "traced (dwarf, the default)" test $? -eq 0
fold rec
# Folded stacks are outermost first: each must start at the process's or
# the thread's first frame and be the source's chain, nothing missing.
chain_a='main;p_run;p_step;lib_enter;lib_mid;lib_back;fp_hop;p_callback;p_deep;lib_leaf'
chain_t='p_thread;lib_enter;lib_mid;lib_back;fp_hop;p_callback;p_deep;lib_leaf'
chain_l='main;p_late;late_enter;late_mid;p_late_cb;lib_leaf'
stack_of() { # FOLDED VALUE -> the stacks with that value
	awk -v v="$2" '$NF == v { sub(/ [0-9]+$/, ""); print }' "$1"
}
expect_eq "3 x 1111 bytes: one stack, 10 frames to main and on to _start" \
	"$(stack_of rec.bytes 3333 | grep -cE "^_start;(.*;)?$chain_a\$")" 1
expect_eq "... all three allocations on it" "$(grep -cE ";$chain_a 3\$" rec.count)" 1
expect_eq "a thread's 3333 bytes: to the thread's start" \
	"$(grep -cE "^(.*;)?start_thread;$chain_t 3333\$" rec.bytes)" 1
expect_eq "dlopen()ed after start: 2 x 2222 bytes through the late library" \
	"$(grep -cE "^_start;(.*;)?$chain_l 4444\$" rec.bytes)" 1
expect_eq "no other stack holds those sizes" \
	"$("$HD" rec | grep -cE '~b#size: (1111|2222|3333),')" 6
check "80 KiB deep: innermost frames right, then cut (16 KiB: 4 frames)" \
	grep -qE '^\[stack_truncated\];p_recurse;p_recurse;p_recurse;p_recurse;lib_leaf 4444$' rec.bytes
grep -qE '^\[stack_truncated\];p_recurse;p_recurse;p_recurse;p_recurse;lib_leaf 4444$' rec.bytes ||
	grep -E ' 4444$' rec.bytes | sed 's/^/     got: /'
check "... marked truncated in the summary" \
	grep -q '^    4.3 KiB in 1 allocations from pid [0-9]* (stack truncated):$' err
check "... counted in the closing accounting" \
	grep -q '^heapsnoop: 2 allocations had a truncated stack, 0 a stack with an unreadable frame' err
check "... and the remedy said" grep -q '2 stacks were deeper than the copy.*--stack-copy' err
check "a 32 KiB frame, its pages never touched: deeper than 16 KiB, cut there" \
	grep -qE '^\[stack_truncated\];p_bigframe;lib_leaf 5555$' rec.bytes
check "-v: how stacks ended" grep -qE 'unwinding: [0-9]+ stacks, [0-9]+ complete, 2 cut at --stack-copy, 0 at a short copy \(ring buffer full\), 0 deeper than kept, 0 with a frame not recovered' err
check "-v: the frame without CFI was unwound by its frame pointer" \
	grep -qE 'caller frames, [1-9][0-9]* of them by frame pointer' err
check "-v: the tables' memory" grep -qE 'unwind tables: [4-9] modules .* [0-9]+ bytes of CFI mapped, rule cache [0-9]+ bytes' err

# A constructor run by the dynamic loader: complete at its entry
# (_dl_start_user on x86-64, _start on arm64).
expect_eq "a library's constructor: to the loader's entry, complete" \
	"$(grep -cE '^(_dl_start_user|_start);_dl_init;call_init;(call_init(_\[i\])?;)?lib_ctor;lib_leaf 1357$' rec.bytes)" 1
check "... no cut= on its record" \
	bash -c "\"$HD\" rec | grep -E '~b#size: 1357,' | grep -qv 'cut='"

# Every stack but those two is complete: it starts at _start, a thread's
# start (glibc's clone3: __clone3 on x86-64, its thread_start on arm64) or
# the loader's.
expect_eq "every other stack reaches the first frame" \
	"$(grep -vcE '^(_start|__clone3|thread_start|_dl_start_user);' rec.bytes)" 2

# The same program with frame pointers followed: %rbp is data here, so the
# walk stops at the call site. What makes the test above mean something.
# On arm64, code built without frame pointers does not point x29 at new
# frame records, so x29 still points at an outer one: the walk skips
# every frame between that one and the call site.
"$HS" -q --unwind fp -- "$PROGS/prog_nofp" > fprec 2> /dev/null
fold fprec
if [ "$(uname -m)" = aarch64 ]; then
	check "--unwind fp: the chain skips the frames without a frame record" \
		bash -c "! grep -q 'lib_enter' fprec.bytes && grep -q '^_start;[^ ]*;main;lib_leaf ' fprec.bytes"
else
	check "--unwind fp: the chain is lost after the call site" \
		bash -c "! grep -q 'lib_enter' fprec.bytes && grep -q '^lib_leaf ' fprec.bytes"
fi

# Options.
"$HS" --unwind lr -- true > /dev/null 2> bad
check "--unwind lr refused with the choices" grep -q "give fp (frame pointers) or dwarf" bad
"$HS" --stack-copy 1000 -- true > /dev/null 2> bad
check "--stack-copy 1000 refused" grep -q -- "--stack-copy must be a power of two (bytes), from 512 to 8388608" bad
"$HS" -q -v --stack-copy 65536 -- "$PROGS/prog_nofp" > big 2> bigerr
fold big
expect_eq "--stack-copy 65536: the same chains" \
	"$(grep -cE "^_start;(.*;)?$chain_a 3333\$" big.bytes)" 1
# The copy in one read faults on the pages the 32 KiB array never touched;
# page by page, they are holes and the slots the unwinder needs are not.
expect_eq "--stack-copy 65536: past the pages never touched, complete" \
	"$(grep -cE '^_start;(.*;)?main;p_bigframe;lib_leaf 5555$' big.bytes)" 1
check "... copied page by page, holes said (-v)" \
	grep -qE 'unwinding: [1-9][0-9]* stacks copied page by page, around [1-9][0-9]* pages never touched' bigerr
# By default the whole stack is copied: the 80 KiB one whole too.
"$HS" -q -v -- "$PROGS/prog_nofp" > whole 2> wholeerr
fold whole
expect_eq "default: the 80 KiB deep stack whole, to _start" \
	"$(grep -cE '^_start;(.*;)?p_recurse;lib_leaf 4444$' whole.bytes)" 1
expect_eq "default: past the pages never touched, complete" \
	"$(grep -cE '^_start;(.*;)?main;p_bigframe;lib_leaf 5555$' whole.bytes)" 1
check "default: no stack cut (-v)" \
	grep -qE 'unwinding: [0-9]+ stacks, [0-9]+ complete, 0 cut at --stack-copy, 0 at a short copy \(ring buffer full\), 0 deeper than kept, 0 with a frame not recovered' wholeerr
finish
