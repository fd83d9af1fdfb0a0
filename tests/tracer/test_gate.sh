#!/bin/bash
# test_gate.sh - heapsnoop as a CI gate on real runs: --fail-on-leak[=BYTES]
# fails with exit status 23 and names the leaking stacks; LSan-format
# --suppressions (function, source file, module patterns) leave them out;
# a program that frees everything passes; --max-peak below its peak fails
# with 24, at it passes; -f and -a --leaks-at-exit gate each process at its
# exit; heapdecode applies the same gates to the logs.
# prog_phases leaks 700 bytes from site_m (7 blocks) and 320 from leak_one
# (5 blocks), or nothing with an argument; its peak is 1049276 bytes in 8.
set -u
. "$(dirname "$0")/lib.sh"
PEAK=1049276

phases() { # RUN-NAME [HEAPSNOOP OPTION]... -- [PROG ARG]: status in $rc
	local name=$1; shift
	local opts=() arg=
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	arg=${2:-}
	printf 'go\ngo\ngo\ngo\ngo\ngo\n' | "$HS" -q -o "$T/$name.rec" "${opts[@]}" -- \
		"$PROGS/prog_phases" $arg > /dev/null 2> "$T/$name.err"
	rc=$?
}

# The stack said after a "N bytes in M allocations from pid P (comm):"
# header: its frame 0's function.
said_frame0() { # ERRFILE BYTES
	awk -v b="$2" '$1 == b && $2 == "bytes" && /from pid/ {s = 1; next}
		s && /#0 / {sub(/\+0x.*/, "", $3); print $3; exit}' "$1"
}

phases leak --fail-on-leak --
expect_eq "leaks: exit status 23" "$rc" 23
check "leaks: the verdict says 1020 bytes in 12 allocations" \
	grep -q "^heapsnoop: LEAK GATE FAILED: 1020 bytes in 12 allocations live at the end, not suppressed, more than the 0 allowed (--fail-on-leak), from these 2 stacks:" "$T/leak.err"
expect_eq "leaks: site_m's stack named, symbolized" "$(said_frame0 "$T/leak.err" 700)" site_m
expect_eq "leaks: leak_one's stack named" "$(said_frame0 "$T/leak.err" 320)" leak_one
check "leaks: with file:line" grep -q '#0 .* site_m+0x[0-9a-f]* (prog_phases) tests/tracer/prog_phases.c:[0-9]*$' "$T/leak.err"
check_no_loss "leaks: no events lost" "$T/leak.err"

printf '# the pool is freed at shutdown\nleak:site_m\n\n  leak:^leak_one$\n' > "$T/both.supp"
phases both --fail-on-leak --suppressions "$T/both.supp" --
expect_eq "both suppressed by function: exit 0" "$rc" 0
check "both suppressed: what each suppression took" bash -c \
	"grep -q '^heapsnoop: suppressed by leak:site_m: 700 bytes in 7 allocations$' '$T/both.err' &&
	 grep -q '^heapsnoop: suppressed by leak:^leak_one\$: 320 bytes in 5 allocations$' '$T/both.err'"
check "both suppressed: the gate passed, said" \
	grep -q '^heapsnoop: leak gate passed: 0 bytes in 0 allocations live at the end, not suppressed (at most 0 allowed)$' "$T/both.err"

printf 'leak:site_*\n' > "$T/one.supp"
phases one --fail-on-leak --suppressions "$T/one.supp" --
expect_eq "one suppressed (a glob): exit status 23" "$rc" 23
check "one suppressed: only leak_one's 320 bytes fail" \
	grep -q 'LEAK GATE FAILED: 320 bytes in 5 allocations .* from these 1 stacks:' "$T/one.err"
expect_eq "one suppressed: leak_one's stack named" "$(said_frame0 "$T/one.err" 320)" leak_one

printf 'leak:tests/tracer/prog_phases.c\n' > "$T/file.supp"
phases file --fail-on-leak --suppressions "$T/file.supp" --
expect_eq "suppressed by source file: exit 0" "$rc" 0
printf 'leak:*/tests/prog_phases$\n' > "$T/mod.supp"
phases mod --fail-on-leak --suppressions "$T/mod.supp" --
expect_eq "suppressed by module: exit 0" "$rc" 0
printf 'leak:no_such_function\n' > "$T/none.supp"
phases none --fail-on-leak --suppressions "$T/none.supp" --
expect_eq "a suppression that matches nothing: exit status 23" "$rc" 23

phases at --fail-on-leak=1020 --
expect_eq "--fail-on-leak=1020 (what leaks): exit 0" "$rc" 0
phases below --fail-on-leak=1019 --
expect_eq "--fail-on-leak=1019: exit status 23" "$rc" 23

phases clean --fail-on-leak -- free
expect_eq "a program that frees everything: exit 0" "$rc" 0
check "it frees everything: the gate passed, said" \
	grep -q '^heapsnoop: leak gate passed: 0 bytes in 0 allocations' "$T/clean.err"

phases peakhi --max-peak $PEAK -- free
expect_eq "--max-peak at the peak: exit 0" "$rc" 0
check "--max-peak at the peak: said" \
	grep -q "^heapsnoop: peak gate passed: the highest peak, $PEAK bytes in 8 allocations (pid [0-9]*, prog_phases), is at most --max-peak $PEAK$" "$T/peakhi.err"
phases peaklo --max-peak $((PEAK - 1)) -- free
expect_eq "--max-peak below the peak: exit status 24" "$rc" 24
check "--max-peak below: the process and its peak named" bash -c \
	"grep -q '^heapsnoop: PEAK GATE FAILED: 1 process(es) held more than --max-peak $((PEAK - 1)) bytes' '$T/peaklo.err' &&
	 grep -q '^  pid [0-9]* (prog_phases): a peak of $PEAK bytes in 8 allocations$' '$T/peaklo.err'"
phases both2 --max-peak $((PEAK - 1)) --fail-on-leak --
expect_eq "both gates broken: the leak gate's status, 23" "$rc" 23
check "both gates broken: both said" bash -c \
	"grep -q 'LEAK GATE FAILED' '$T/both2.err' && grep -q 'PEAK GATE FAILED' '$T/both2.err'"

# The same gates offline, on the logs: heapdecode judges them alike.
"$HD" --fail-on-leak "$T/leak.rec" 2> "$T/hd.err"
expect_eq "heapdecode --fail-on-leak on the log: exit status 23" "$?" 23
check "heapdecode: the same verdict" bash -c "grep -q '^heapdecode: LEAK GATE FAILED: 1020 bytes in 12 allocations live at the end, not suppressed, more than the 0 allowed (--fail-on-leak), from these 2 stacks:' '$T/hd.err'"
expect_eq "heapdecode: site_m's stack named" "$(said_frame0 "$T/hd.err" 700)" site_m
"$HD" --fail-on-leak --suppressions "$T/both.supp" --report "$T/leak.rec" > "$T/hd.report" 2> /dev/null
expect_eq "heapdecode: suppressed, with --report: exit 0, the report written" "$?:$(tail -1 "$T/hd.report")" \
	"0:total: 1020 bytes in 12 allocations from 2 stacks"
"$HD" --max-peak $((PEAK - 1)) "$T/leak.rec" 2> /dev/null
expect_eq "heapdecode --max-peak below the peak: exit status 24" "$?" 24
"$HD" --max-peak $PEAK "$T/leak.rec" 2> /dev/null
expect_eq "heapdecode --max-peak at the peak: exit 0" "$?" 0

# -f --leaks-at-exit: the children are gated at their exit.
echo go | "$HS" -q -f --leaks-at-exit --fail-on-leak -o "$T/f.rec" -- "$PROGS/prog_fork" \
	> /dev/null 2> "$T/f.err"
expect_eq "-f: the children's and the parent's leaks: exit status 23" "$?" 23
# (child_leak's loop is unrolled: a call site, so a stack, a block)
expect_eq "-f: each child's 3 leaked blocks named, from child_leak" \
	"$(awk '/^  200 bytes in 1 allocations from pid [0-9]* \(prog_fork\):$/ {p[$8]++; s = 1; next}
		s && /#0 .* child_leak\+/ {n++} {s = 0} END {print length(p), n}' "$T/f.err")" "2 6"
printf 'leak:child_leak\nleak:parent_leak\nleak:_IO_file_doallocate\n' > "$T/f.supp"
echo go | "$HS" -q -f --leaks-at-exit --fail-on-leak --suppressions "$T/f.supp" -o "$T/f2.rec" \
	-- "$PROGS/prog_fork" > /dev/null 2> "$T/f2.err"
expect_eq "-f: all suppressed: exit 0" "$?" 0
check "-f: the children's leaks were suppressed at their exit" \
	grep -q '^heapsnoop: suppressed by leak:child_leak: 1200 bytes in 6 allocations$' "$T/f2.err"

# -p: attached once prog_phases waits at "dump 0" (site_m's blocks are
# older than the tracing: not its to judge), the leak_one blocks after.
coproc W { exec "$PROGS/prog_phases"; }
wait_line "${W[0]}" '^dump 0$' || exit 1
wpid=$W_PID
mkfifo "$T/p.errpipe"
"$HS" -q -p "$wpid" --fail-on-leak -o "$T/p.rec" 2> "$T/p.errpipe" &
hs=$!
exec 6< "$T/p.errpipe"
wait_line 6 "^heapsnoop: tracing pid $wpid" "$T/p.err" || exit 1
printf 'go\ngo\ngo\ngo\ngo\ngo\n' >&"${W[1]}"
cat <&6 >> "$T/p.err"
wait "$hs"
expect_eq "-p: exit status 23 when the process exits" "$?" 23
check "-p: the 320 bytes leaked while traced, leak_one's" bash -c \
	"grep -q 'LEAK GATE FAILED: 320 bytes in 5 allocations' '$T/p.err' &&
	 grep -A1 '^  320 bytes in 5 allocations from pid $wpid (prog_phases):$' '$T/p.err' | grep -q ' leak_one+'"
exec 6<&-

# -a --leaks-at-exit: a process started after heapsnoop, gated at its exit.
# A copy of prog_phases under a name of its own, so that --comm sees no
# other test's processes.
name=gate_ph_$$
name=${name:0:15}
cp "$PROGS/prog_phases" "$T/$name"
mkfifo "$T/a.errpipe"
"$HS" -q -a --leaks-at-exit --comm "$name" --fail-on-leak --suppressions "$T/one.supp" \
	--max-peak $((PEAK - 1)) -o "$T/a.rec" 2> "$T/a.errpipe" &
hs=$!
exec 5< "$T/a.errpipe"
if wait_line 5 '^heapsnoop: tracing all processes' "$T/a.err"; then
	printf 'go\ngo\ngo\ngo\ngo\ngo\n' | "$T/$name" > /dev/null
	kill -INT "$hs"
fi
cat <&5 >> "$T/a.err"
wait "$hs"
expect_eq "-a --leaks-at-exit: exit status 23 (the peak gate broke too)" "$?" 23
check "-a: leak_one's stack named, under the process's own name" bash -c \
	"grep -q '^  320 bytes in 5 allocations from pid [0-9]* ($name):$' '$T/a.err'"
check "-a: site_m's leak suppressed at its exit" \
	grep -q '^heapsnoop: suppressed by leak:site_\*: 700 bytes in 7 allocations$' "$T/a.err"
check "-a: its peak seen at its exit" \
	grep -q "^  pid [0-9]* ($name): a peak of $PEAK bytes in 8 allocations$" "$T/a.err"
exec 5<&-

# Misuse is said at once.
printf 'leak:ok\ninterceptor_via_fun:foo\n' > "$T/bad.supp"
"$HS" -q --fail-on-leak --suppressions "$T/bad.supp" -- /bin/true > /dev/null 2> "$T/bad.err"
expect_eq "a bad suppressions file: exit 1" "$?" 1
check "a bad suppressions file: its line said" grep -q "bad.supp:2: not a suppression" "$T/bad.err"
"$HS" -q -a --fail-on-leak > /dev/null 2> "$T/a.err"
check "-a --fail-on-leak without --leaks-at-exit: refused" \
	grep -q -- '--fail-on-leak with -a needs --leaks-at-exit' "$T/a.err"
check "--help: the exit status table" bash -c "'$HS' --help | grep -q '^  23  --fail-on-leak'"
finish
