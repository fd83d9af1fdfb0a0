#!/bin/bash
# test_pool.sh - the unwinding pool (docs/DESIGN.md, "A loader that scales
# with the cores"): stacks unwound on 3 threads of the pool, ahead of their
# turn, are the ones the loop's thread unwinds alone, address for address
# (ASLR off for both), on prog_paths' 16,384 call paths of their own and on
# prog_tails' 3 threads at varying depths below a tail. The pool's default
# (one per CPU but two) is 0 threads on a 2-CPU machine, so the pool is
# asked for here: make check runs it whatever the CPUs.
set -u
. "$(dirname "$0")/lib.sh"

# NAME OUT N PROG ARGS...: PROG traced with N unwinding threads, its
# live records' stacks sorted into OUT.b.
traced() {
	local name=$1 out=$2 n=$3
	shift 3
	setarch "$(uname -m)" -R "$HS" -q -v --unwind-threads "$n" -o "$out" -- "$@" 2> "$out.err"
	check "$name, $n threads: exits 0" test $? -eq 0
	check_no_loss "$name, $n threads: no events lost" "$out.err"
	check "$name, $n threads: every stack complete (-v)" \
		grep -qE '^heapsnoop: unwinding: ([0-9]+) stacks, \1 complete' "$out.err"
	[ "$n" -gt 0 ] && check "$name, $n threads: the pool's threads unwound stacks (-v)" \
		grep -qE "^heapsnoop: unwinding pool: $n threads beside the loop's \(--unwind-threads\); [1-9][0-9]* of the [0-9]+ stacks unwound by them" "$out.err"
	"$HD" < "$out" | grep '^heapsnoop: live ' | grep -o '~b#.*' | sort > "$out.b"
}

traced prog_paths "$T/p0" 0 "$PROGS/prog_paths" 14
traced prog_paths "$T/p3" 3 "$PROGS/prog_paths" 14
# 2^14 paths and main's array of their addresses.
expect_eq "prog_paths: every block live" "$(wc -l < "$T/p3.b")" 16385
expect_eq "prog_paths: as many stacks as blocks" "$(sort -u "$T/p3.b" | wc -l)" 16385
check "prog_paths: every stack the same, frame by frame" cmp -s "$T/p0.b" "$T/p3.b"

traced prog_tails "$T/t0" 0 "$PROGS/prog_tails" 3 20
traced prog_tails "$T/t3" 3 "$PROGS/prog_tails" 3 20
expect_eq "prog_tails: the same number of live blocks" "$(wc -l < "$T/t3.b")" "$(wc -l < "$T/t0.b")"
check "prog_tails: every stack the same, frame by frame" cmp -s "$T/t0.b" "$T/t3.b"
finish
