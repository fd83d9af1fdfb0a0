#!/bin/bash
# test_creator.sh - a thread's stacks go on with the stack that created it
# (docs/DESIGN.md, "Who created a thread"): prog_creator's 4 pool workers'
# leaks are one stack, leak_here;worker_loop;worker_main, the [created by]
# boundary, then pthread_create;spawn_pool;main to _start; the thread a
# thread made has two boundaries, to spawn_parent;main. Exactly so in
# heapdecode --folded and --report, in heapsnoop -s, in launch mode and
# with -p, --unwind dwarf and fp, and with -a (--comm). Where the kernel
# has no bpf_task_pt_regs (5.15), or with --without task-pt-regs, the run
# says creator stacks are not kept and the stacks end at the thread's
# start, the same bytes.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/creatorlib.sh"

if ! "$HS" -q -v -- true 2>&1 | grep -qE '^heapsnoop:   bpf_task_pt_regs\(\) +yes'; then
	# 5.10: the program is not loaded, and the run says so.
	"$HS" -q -- "$PROGS/prog_creator" > "$T/old" 2> "$T/old.err"
	check "no bpf_task_pt_regs: exits 0" test $? -eq 0
	check "no bpf_task_pt_regs: says creator stacks are not kept" \
		grep -q '^heapsnoop: creator stacks are not kept: this kernel has no bpf_task_pt_regs() (Linux 5.15)' "$T/old.err"
	fold "$T/old"
	expect_eq "no bpf_task_pt_regs: the workers' leaks" \
		"$(folded_sum "$T/old.bytes" "start_thread;worker_main;worker_loop;leak_here")" 400
	check "no bpf_task_pt_regs: no boundary" bash -c "! grep -q 'created_by' '$T/old.bytes'"
	check_no_loss "no bpf_task_pt_regs: no events lost" "$T/old.err"
	finish
	exit
fi

for unwind in dwarf fp; do
	"$HS" -q -s --unwind "$unwind" -o "$T/l.$unwind" -- "$PROGS/prog_creator" \
		2> "$T/l.$unwind.err"
	check "launch, $unwind: exits 0" test $? -eq 0
	"$HD" --report "$T/l.$unwind" > "$T/l.$unwind.report"
	expect_chains "launch, $unwind" "$T/l.$unwind" "$T/l.$unwind.report"
	report_chain "$T/l.$unwind.err" 400 > "$T/l.$unwind.s400"
	check "launch, $unwind: -s: the workers' chain" grep -qxE \
		"leak_here;worker_loop;worker_main;\\|;$RW*pthread_create;spawn_pool;main;" \
		"$T/l.$unwind.s400"
	check_no_loss "launch, $unwind: no events lost" "$T/l.$unwind.err"

	# -p: attached before the process makes its threads.
	coproc P { exec "$PROGS/prog_creator" wait; }
	wait_line "${P[0]}" '^ready ' || exit 1
	pid=$P_PID
	rm -f "$T/errpipe"
	mkfifo "$T/errpipe"
	"$HS" -q --unwind "$unwind" -p "$pid" > "$T/p.$unwind" 2> "$T/errpipe" &
	hs=$!
	exec 5< "$T/errpipe"
	wait_line 5 "^heapsnoop: tracing pid $pid" "$T/p.$unwind.err" || exit 1
	echo go >&"${P[1]}"
	wait "$hs"
	check "-p, $unwind: exits 0" test $? -eq 0
	cat <&5 >> "$T/p.$unwind.err"
	exec 5<&-
	"$HD" --report "$T/p.$unwind" > "$T/p.$unwind.report"
	expect_chains "-p, $unwind" "$T/p.$unwind" "$T/p.$unwind.report"
	check_no_loss "-p, $unwind: no events lost" "$T/p.$unwind.err"
done

# -a: the processes named prog_creator (--comm), each written at its exit.
mkfifo "$T/aerr"
"$HS" -q -a --comm prog_creator --leaks-at-exit > "$T/a" 2> "$T/aerr" &
hs=$!
exec 5< "$T/aerr"
wait_line 5 '^heapsnoop: tracing all processes' "$T/a.err" || exit 1
"$PROGS/prog_creator"
check "-a: the program exits 0" test $? -eq 0
kill -INT "$hs"
cat <&5 >> "$T/a.err"
wait "$hs"
check "-a: heapsnoop exits 0" test $? -eq 0
exec 5<&-
"$HD" --report "$T/a" > "$T/a.report"
expect_chains "-a --comm" "$T/a" "$T/a.report"

# Without bpf_task_pt_regs (as on 5.10): said, and the stacks end at the
# thread's start, the same bytes.
"$HS" -q --without task-pt-regs -- "$PROGS/prog_creator" > "$T/w" 2> "$T/w.err"
check "--without task-pt-regs: exits 0" test $? -eq 0
check "--without task-pt-regs: says creator stacks are not kept" \
	grep -q '^heapsnoop: creator stacks are not kept: bpf_task_pt_regs() is off by --without task-pt-regs' "$T/w.err"
fold "$T/w"
expect_eq "--without task-pt-regs: the workers' leaks" \
	"$(folded_sum "$T/w.bytes" "start_thread;worker_main;worker_loop;leak_here")" 400
check "--without task-pt-regs: no boundary" bash -c "! grep -q 'created_by' '$T/w.bytes'"
finish
