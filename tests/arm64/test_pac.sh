#!/bin/bash
# test_pac.sh - arm64 with pointer authentication (run in the arm64 guest
# by in-guest.sh): prog_semantics built -mbranch-protection=standard signs
# every return address it saves (paciasp), and its CFI toggles the return
# address's state (DW_CFA_AARCH64_negate_ra_state). With the signatures
# masked off (heapsnoop/arch.h's HS_RA_MASK), the live set and the chains
# are those of the unsigned build, by CFI and by frame pointers.
set -u
. "$(dirname "$0")/../tracer/lib.sh"

check "the CPU authenticates pointers (paca in /proc/cpuinfo)" grep -qw paca /proc/cpuinfo
"$HS" -q -- "$PROGS/prog_semantics_pac" > "$T/rec" 2> "$T/err"
check "launch mode exits 0" test $? -eq 0
fold "$T/rec"
expect_semantics "$T/rec"
check "signed return addresses: stacks reach _start by CFI" \
	grep -q '^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_malloc_leak 300$' "$T/rec.bytes"
check_no_loss "no events lost" "$T/err"
"$HS" -q --unwind fp -- "$PROGS/prog_semantics_pac" > "$T/fp" 2> /dev/null
fold "$T/fp"
check "signed return addresses: stacks reach _start by frame records" \
	grep -q '^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_malloc_leak 300$' "$T/fp.bytes"
finish
