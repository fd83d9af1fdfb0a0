#!/bin/bash
# test_pac.sh - arm64 with pointer authentication (run in the arm64 guest
# by in-guest.sh): prog_semantics built -mbranch-protection=standard signs
# every return address it saves (paciasp), and its CFI toggles the return
# address's state (DW_CFA_AARCH64_negate_ra_state). With the signatures
# masked off (the CPU's mask, user/common/pacmask.h), the live set and the
# chains are those of the unsigned build, by CFI and by frame pointers,
# and under the collector (--preload). The mask heapsnoop -v says is the
# guest kernel's: its virtual address bits (CONFIG_ARM64_VA_BITS, from
# its config in /proc/config.gz or /boot, else the 48 of Debian's build).
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
# The mask: said by -v, from the CPU, the kernel's address bits.
"$HS" -v -q -- "$PROGS/prog_semantics_pac" > /dev/null 2> "$T/v.err"
vabits=$( (zcat /proc/config.gz 2> /dev/null || cat "/boot/config-$(uname -r)" 2> /dev/null) |
	sed -n 's/^CONFIG_ARM64_VA_BITS=//p')
expect_eq "-v: the return addresses' mask, from the CPU" \
	"$(sed -n 's/^heapsnoop: return addresses: the address bits \(0x[0-9a-f]*\), from the CPU (xpaclri)$/\1/p' "$T/v.err" | head -1)" \
	"$(printf '%#x' $(((1 << ${vabits:-48}) - 1)))"
# The collector masks with the same bits: its stacks whole too.
"$HS" --preload -o "$T/pl" -- "$PROGS/prog_semantics_pac" > /dev/null 2>&1
check "--preload: collected (exit 0)" test $? -eq 0
fold "$T/pl"
check "signed return addresses: the collector's stacks reach _start" \
	grep -q '^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_malloc_leak 300$' "$T/pl.bytes"
finish
