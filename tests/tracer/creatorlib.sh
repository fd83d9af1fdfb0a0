# creatorlib.sh - what prog_creator's stacks must be with their creators
# appended (docs/DESIGN.md, "Who created a thread"), for test_creator.sh
# (the BPF tracer) and tests/collector/test_preload_creator.sh (the
# collector): sourced after lib.sh. creator_patterns makes POOL, NESTED
# from START (the frames from the process's start to main).

# The C library's frames between pthread_create and its system call, and
# those of a thread's start before start_thread, which --unwind fp's walk
# may not reach (glibc 2.36: create_thread, __GI___clone_internal,
# __clone3; its names change between versions; arm64's thread starts in
# clone3's thread_start). The collector takes the stack at
# pthread_create's call: none of them.
W='(create_thread;|[_A-Za-z0-9]*clone[_A-Za-z0-9]*;)*'
S='([_A-Za-z0-9]*clone[_A-Za-z0-9]*;|thread_start;)?'
RW='(create_thread;|[_A-Za-z0-9]*clone[_A-Za-z0-9]*;)'
START='_start;__libc_start_main;(__libc_start_call_main;)?main;'
creator_patterns() {
	POOL="^${START}spawn_pool;pthread_create;${W}\[created_by\];${S}start_thread;worker_main;worker_loop;leak_here"
	NESTED="^${START}spawn_parent;pthread_create;${W}\[created_by\];${S}start_thread;parent_main;spawn_child;pthread_create;${W}\[created_by\];${S}start_thread;child_main;child_leak"
}
creator_patterns

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
