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

# The C library's frames between pthread_create and its system call, and
# those of a thread's start before start_thread, which --unwind fp's walk
# may not reach (glibc 2.36: create_thread, __GI___clone_internal,
# __clone3; its names change between versions; arm64's thread starts in
# clone3's thread_start).
W='(create_thread;|[_A-Za-z0-9]*clone[_A-Za-z0-9]*;)*'
S='([_A-Za-z0-9]*clone[_A-Za-z0-9]*;|thread_start;)?'
START='_start;__libc_start_main;(__libc_start_call_main;)?main;'
POOL="^${START}spawn_pool;pthread_create;${W}\[created_by\];${S}start_thread;worker_main;worker_loop;leak_here"
RW='(create_thread;|[_A-Za-z0-9]*clone[_A-Za-z0-9]*;)'
NESTED="^${START}spawn_parent;pthread_create;${W}\[created_by\];${S}start_thread;parent_main;spawn_child;pthread_create;${W}\[created_by\];${S}start_thread;child_main;child_leak"

# A report's stack (heapdecode --report, heapsnoop -s) as its functions
# joined by ';', innermost first, the boundary as "|": the first stack of
# FILE whose header says BYTES bytes. (Into files: the kernel matrix's
# guest has no /dev/fd for a process substitution.)
report_chain() { # FILE BYTES
	awk -v b="$2" '
		$0 ~ "^ *" b " bytes .* from pid" { on = 1; next }
		on && $1 !~ /^#/ { exit }
		on && /---- created by ----/ { out = out "|;"; next }
		on { f = $3; sub(/\+0x[0-9a-f]+$/, "", f); out = out f ";" }
		END { print out }' "$1"
}

# The stacks of one traced run's records REC, its report REPORT: exact.
expect_chains() { # NAME REC REPORT
	local name=$1
	fold "$2"
	check "$name: the workers' leak, its boundary, then its creator" \
		grep -qE "$POOL 400\$" "$2.bytes"
	grep -qE "$POOL 400\$" "$2.bytes" || grep -h 'leak_here\|child_leak' "$2.bytes" |
		sed 's/^/     got: /'
	expect_eq "$name: the 4 workers' stacks are one" "$(grep -c 'leak_here' "$2.count")" 1
	check "$name: ... of 4 blocks" grep -qE "$POOL 4\$" "$2.count"
	check "$name: a thread's thread: two boundaries to main" \
		grep -qE "$NESTED 300\$" "$2.bytes"
	report_chain "$3" 400 > "$3.400"
	report_chain "$3" 300 > "$3.300"
	local rpool="leak_here;worker_loop;worker_main;\\|;$RW*pthread_create;spawn_pool;main;"
	local rnested="child_leak;child_main;\\|;$RW*pthread_create;spawn_child;parent_main;\\|;$RW*pthread_create;spawn_parent;main;"
	check "$name: report: the workers' chain" grep -qxE "$rpool" "$3.400"
	check "$name: report: the nested chain" grep -qxE "$rnested" "$3.300"
	grep -qxE "$rpool" "$3.400" && grep -qxE "$rnested" "$3.300" ||
		sed 's/^/     got: /' "$3.400" "$3.300"
}

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
