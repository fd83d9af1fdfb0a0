#!/bin/bash
# test_semantics.sh - launch mode on prog_semantics: every allocator rule
# (realloc, calloc, posix_memalign, reallocarray, failures, free(NULL))
# gives exactly the live bytes and counts it should, from the right stack.
set -u
. "$(dirname "$0")/lib.sh"

"$HS" -q -- "$PROGS/prog_semantics" > "$T/rec" 2> "$T/err"
check "launch mode exits 0" test $? -eq 0
fold "$T/rec"
B=$T/rec.bytes C=$T/rec.count

expect_ok() { # FUNCTION BYTES COUNT
	expect_eq "$1: live bytes" "$(folded_sum "$B" "main;$1")" "$2"
	expect_eq "$1: live count" "$(folded_sum "$C" "main;$1")" "$3"
}
expect_ok case_malloc_leak 300 3
expect_ok case_freed 0 0
expect_ok case_realloc_null 111 1
expect_ok "case_realloc_zero;src_realloc_zero" 0 0
expect_ok case_realloc_zero 0 0
expect_ok "case_realloc_fail;src_realloc_fail" 333 1
expect_ok case_realloc_fail 0 0
expect_ok case_realloc_grow 5000 1
expect_ok "case_realloc_grow;src_realloc_grow" 0 0
expect_ok case_calloc 63 1
expect_ok case_calloc_overflow 0 0
expect_ok case_malloc_fail 0 0
expect_ok case_posix_memalign 444 1
expect_ok case_posix_memalign_fail 0 0
expect_ok case_aligned_alloc 512 1
expect_ok case_memalign 96 1
expect_ok case_valloc 123 1
expect_ok case_pvalloc 321 1
expect_ok case_reallocarray 200 1
expect_ok "case_reallocarray_fail;src_reallocarray_fail" 55 1
expect_ok case_reallocarray_fail 0 0
# Nothing else of the program's own is live (its functions are all case_*).
expect_eq "no other live stacks through main" \
	"$(grep ';main' "$B" | grep -vc ';case_')" 0
check "stacks reach main and _start through the call site first" \
	grep -q '^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_malloc_leak 300$' "$B"
check_no_loss "no events lost" "$T/err"

# --unwind fp: the frame-pointer chain ends in libc, which keeps none.
"$HS" -q --unwind fp -- "$PROGS/prog_semantics" > "$T/fp" 2> /dev/null
fold "$T/fp"
check "--unwind fp: stacks reach main through the call site first" \
	grep -q '^__libc_start_call_main;main;case_malloc_leak 300$' "$T/fp.bytes"

# --snip-post 3 drops the outermost frames (libc's and _start), --snip-pre
# 1 the call site.
"$HS" -q --snip-post 3 -- "$PROGS/prog_semantics" > "$T/post" 2> /dev/null
fold "$T/post"
check "--snip-post 3: stacks start at main" grep -q '^main;case_malloc_leak 300$' "$T/post.bytes"
"$HS" -q --snip-pre 1 -- "$PROGS/prog_semantics" > "$T/pre" 2> /dev/null
fold "$T/pre"
check "--snip-pre 1: the call site frame is gone" bash -c "! grep -q 'case_malloc_leak' '$T/pre.bytes'"
expect_eq "--snip-pre 1: the leak is charged to main" \
	"$(folded_sum "$T/pre.count" "__libc_start_call_main;main")" \
	"$(awk '$1 ~ /;main;case_[a-z_]*$/ {t += $2} END {print t}' "$C")"
finish
