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
expect_semantics "$T/rec"
check "stacks reach main and _start through the call site first" \
	grep -q '^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_malloc_leak 300$' "$B"
check_no_loss "no events lost" "$T/err"

# --unwind fp: on x86-64 the frame-pointer chain ends in libc, which keeps
# none; Debian's arm64 glibc keeps frame records, so there it reaches _start.
"$HS" -q --unwind fp -- "$PROGS/prog_semantics" > "$T/fp" 2> /dev/null
fold "$T/fp"
fp_outer=
[ "$(uname -m)" = aarch64 ] && fp_outer='_start;__libc_start_main[^;]*;'
check "--unwind fp: stacks reach main through the call site first" \
	grep -q "^${fp_outer}__libc_start_call_main;main;case_malloc_leak 300\$" "$T/fp.bytes"

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
