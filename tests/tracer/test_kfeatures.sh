#!/bin/bash
# test_kfeatures.sh - the paths heapsnoop takes on kernels older than this
# one, taken here with --without (docs/KERNELS.md): the in-flight calls in
# an LRU hash instead of task storage, the current task without BTF, the
# stack's end without bpf_find_vma (alloc_exit_compat), the in-flight
# call's age by a clock read instead of jiffies, every in-flight call in
# task storage instead of a thread slot (atomics), one perf-event uprobe
# per allocator function instead of one multi-uprobe link per program
# (uprobe-multi), no creator stacks (task-pt-regs). Each must give the
# same live set and stacks as the full-featured path, to the byte; -v says
# what was probed and chosen. The kernel matrix (tests/kmatrix) runs the
# tracer tests where those features are really missing.
set -u
. "$(dirname "$0")/lib.sh"
ALL=task-storage,task-btf,find-vma,jiffies,atomics,uprobe-multi,task-pt-regs

"$HS" -q -v -- "$PROGS/prog_semantics" > "$T/full" 2> "$T/full.err"
check "full-featured run exits 0" test $? -eq 0
check "-v: the kernel and what was probed" grep -qE '^heapsnoop: kernel .*: BPF features probed$' "$T/full.err"
for what in 'task storage from uprobe programs' 'bpf_get_current_task_btf()' 'bpf_find_vma()' \
	'bpf_jiffies64() in uprobe programs' 'BPF atomics (cmpxchg, xchg)' 'multi-uprobe links'; do
	check "-v: $what: yes on this kernel" grep -qF "heapsnoop:   $what" "$T/full.err"
	check "... said available" grep -qE "^heapsnoop:   ${what//[()]/.} +yes \(Linux " "$T/full.err"
done
fold "$T/full"

for without in task-storage task-btf find-vma jiffies atomics uprobe-multi task-pt-regs "$ALL"; do
	"$HS" -q -v --without "$without" -- "$PROGS/prog_semantics" > "$T/w" 2> "$T/w.err"
	check "--without $without: exits 0" test $? -eq 0
	fold "$T/w"
	check "--without $without: the same live bytes per stack" cmp -s "$T/full.bytes" "$T/w.bytes"
	check "--without $without: the same live counts per stack" cmp -s "$T/full.count" "$T/w.count"
	check_no_loss "--without $without: no events lost" "$T/w.err"
done
check "-v says what is used instead" \
	grep -q 'task storage from uprobe programs    off by --without (Linux 5.12): in-flight calls kept in an LRU hash by thread id' "$T/w.err"
check "-v: find-vma off by --without" grep -qE 'bpf_find_vma\(\) +off by --without' "$T/w.err"
check "-v: jiffies off by --without" grep -qE 'bpf_jiffies64\(\) in uprobe programs +off by --without' "$T/w.err"
check "-v: atomics off by --without" grep -qE 'BPF atomics \(cmpxchg, xchg\) +off by --without' "$T/w.err"
check "-v: multi-uprobe links off by --without" grep -qE 'multi-uprobe links +off by --without' "$T/w.err"
check "-v: bpf_task_pt_regs off by --without" grep -qE 'bpf_task_pt_regs\(\) +off by --without' "$T/w.err"

# Threads freeing each other's blocks, each thread's call state in the hash.
"$HS" -q --without "$ALL" -- "$PROGS/prog_threads" > "$T/thr" 2> "$T/thr.err"
fold "$T/thr"
expect_eq "--without all, 4 threads: live blocks" "$(folded_sum "$T/thr.count" "thread_main;thread_alloc")" 2000
expect_eq "--without all, 4 threads: live bytes" "$(folded_sum "$T/thr.bytes" "thread_main;thread_alloc")" 80000
check_no_loss "--without all, 4 threads: no events lost" "$T/thr.err"

# Unwinding without frame pointers, a thread's stack ended by its thread
# pointer, a dlopen()ed library, stack pages never touched: the 5.10
# path's chains equal the full one's. ASLR off for both, so that both see
# one layout (p_recurse's 80 KiB once had a page never touched, and was
# cut, where ASLR put the stack's top; it touches each page now).
# (The full run without creator stacks, which the 5.10 path has not: its
# threads' stacks would go on past their start.)
setarch "$(uname -m)" -R "$HS" -q --without task-pt-regs -- "$PROGS/prog_nofp" > "$T/nofp" 2> /dev/null
setarch "$(uname -m)" -R "$HS" -q --without "$ALL" -- "$PROGS/prog_nofp" > "$T/nofp510" 2> /dev/null
fold "$T/nofp"; fold "$T/nofp510"
check "--without all: the same chains without frame pointers" \
	cmp -s "$T/nofp.bytes" "$T/nofp510.bytes"
expect_eq "... of the same number of stacks" "$(wc -l < "$T/nofp510.bytes")" \
	"$(wc -l < "$T/nofp.bytes")"

"$HS" --without task-storage,bogus -- true > /dev/null 2> "$T/bad"
check "--without bogus: exit 1" test $? -eq 1
check "--without bogus: names the features there are" \
	grep -q "unknown feature 'bogus' (give task-storage, task-btf, find-vma, jiffies, atomics, uprobe-multi or task-pt-regs, comma-separated)" "$T/bad"
finish
