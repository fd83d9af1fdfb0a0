#!/bin/bash
# test_table_grows.sh - the collector's live table grows with the live set
# and the stacks (docs/COLLECTOR.md, "The live table"; issue 31): nothing
# has a room of its own to fill, nothing is dropped, kill -9 loses nothing.
#   prog_paths LEVELS (tests/tracer/prog_paths.c: 2^LEVELS blocks, each
#     from a call path of its own; TABLE_LEVELS, 20 by default; 22 is
#     issue 31's, 2^22 stacks, ~20 s here) under heapsnoop --preload:
#     exit 0, nothing NOT RECORDED, segments handed over; its last dump
#     exact (check_paths: every leaf block, its size, its whole stack, all
#     distinct);
#   the same killed by kill -9 once it said "done": the dump heapsnoop
#     writes after the death has them all;
#   the same alone (LD_PRELOAD by hand): its own dump at exit, exact;
#   the collector with 4 KiB first segments (libheapsnoop_preload_smallseg.so)
#     under test_death.sh's program, so that every case grows its table
#     within a few blocks: exit, a fork after 600 stacks of their own (its
#     stacks in 4 segments, the child's copies of them), kill -9 at rest,
#     4 threads killed mid-call, 100 forks while they churn (each child's
#     table as the fork left it, its segments its own), alone with a
#     SIGSEGV on a thread mid-call: each exact (check_death);
#   a table that may not grow (HEAPSNOOP_TABLE_ENTRIES) or cannot
#     (RLIMIT_AS): counted, said, exit status 3, the program run to its end.
# No sleeps: the programs say "ready"/"done" first.
set -u
. "$(dirname "$0")/../tracer/lib.sh"
L=${TABLE_LEVELS:-20}
PP=$PROGS/prog_paths
CP=$PROGS/check_paths
PD=$PROGS/prog_death
CD=$PROGS/check_death
SS=$PROGS/libheapsnoop_preload_smallseg.so

# check_paths LOG: the last dump exact, its line said.
paths_exact() { # NAME LOG
	local out
	out=$("$CP" "$L" "$2")
	check "$1: $out" test $? -eq 0
}

# --- prog_paths, whole -----------------------------------------------------------
"$HS" --preload -v -o "$T/paths.rec" -- "$PP" "$L" > /dev/null 2> "$T/paths.err"
expect_eq "prog_paths $L: heapsnoop's status" "$?" 0
check "prog_paths $L: nothing NOT RECORDED" sh -c "! grep -q 'NOT RECORDED' '$T/paths.err'"
# 2^L entries of 32 bytes and 2^L stacks from 1 MiB segments 0, doubling (20: 11, 22: 14)
segs=$(sed -n 's/^heapsnoop: \([0-9]*\) segments of live tables taken.*/\1/p' "$T/paths.err")
check "prog_paths $L: the table grew by segments handed over (${segs:-0}, at least $((L >= 16 ? L - 14 : 0)))" \
	test "${segs:-0}" -ge $((L >= 16 ? L - 14 : 0))
paths_exact "prog_paths $L" "$T/paths.rec"

# --- killed by kill -9 once the blocks are there ----------------------------------
mkfifo "$T/kill.in" "$T/kill.out"
"$HS" --preload -v -o "$T/kill.rec" -- "$PP" "$L" wait < "$T/kill.in" > "$T/kill.out" \
	2> "$T/kill.err" &
bg=$!
exec 8> "$T/kill.in"
exec 9< "$T/kill.out"
if wait_line 9 '^ready [0-9]+$' "$T/kill.said"; then
	pid=$(sed -n 's/^ready //p' "$T/kill.said")
	echo go >&8
	wait_line 9 '^done$' && kill -9 "$pid"
fi
exec 8>&- 9<&-
wait "$bg"
expect_eq "prog_paths $L, kill -9: heapsnoop's status (the command's: 128 + 9)" "$?" 137
check "prog_paths $L, kill -9: nothing NOT RECORDED" sh -c "! grep -q 'NOT RECORDED' '$T/kill.err'"
paths_exact "prog_paths $L, kill -9 after 'done': the dump after the death" "$T/kill.rec"

# --- alone: the process's own dump at exit, through its own segments ---------------
HEAPSNOOP_OUTPUT=$T/alone.rec LD_PRELOAD=$OUT/libheapsnoop_preload.so "$PP" "$L" > /dev/null \
	2> "$T/alone.err"
expect_eq "prog_paths $L alone: status" "$?" 0
check "prog_paths $L alone: nothing said" test ! -s "$T/alone.err"
paths_exact "prog_paths $L alone: its own dump at exit" "$T/alone.rec"

# --- small segments: test_death.sh's program, every table grown -------------------
# small MODE NAME ARGS...: prog_death under the small segments' collector.
small() {
	local mode=$1 name=$2; shift 2
	case $mode in
	H) HEAPSNOOP_PRELOAD_LIB=$SS "$HS" --preload -v -o "$T/$name.rec" -- \
		"$PD" "$T/$name.list" "$@" ;;
	A) HEAPSNOOP_OUTPUT=$T/$name.rec LD_PRELOAD=$SS "$PD" "$T/$name.list" "$@" ;;
	esac
}
# killed MODE NAME ARGS...: started, killed with KSIG (9) once it said ready.
killed() {
	local mode=$1 name=$2; shift 2
	rm -f "$T/$name".*
	mkfifo "$T/$name.fifo"
	small "$mode" "$name" "$@" > "$T/$name.fifo" 2> "$T/$name.err" &
	kill_at_ready "$name" $!
}
checked() { # NAME LIST RECORDS
	local out
	out=$("$CD" "$2" "$3" 2>&1)
	check "$1: $(echo "$out" | tail -n 1)" test $? -eq 0
}

small H ss-exit exit > /dev/null 2> "$T/ss-exit.err"
expect_eq "small segments, exit: status" "$?" 0
check "small segments: the table grew (segments handed over)" \
	grep -q '^heapsnoop: [1-9][0-9]* segments of live tables taken' "$T/ss-exit.err"
checked "small segments, exit" "$T/ss-exit.list" "$T/ss-exit.rec"
small H ss-fork forkpaths > /dev/null 2> "$T/ss-fork.err"
expect_eq "small segments, fork: status" "$?" 0
check "small segments, fork: the stacks grew past 3 segments (4 + 8 + 16 KiB)" \
	grep -q 'live table: \([3-9][0-9]\{4\}\|[0-9]\{6,\}\) bytes of stacks' "$T/ss-fork.err"
check "small segments, fork: no stack lost, nothing NOT RECORDED" \
	sh -c "! grep -q 'does not hold\|NOT RECORDED' '$T/ss-fork.err'"
checked "small segments, fork: the child (its copy of the grown table)" \
	"$(ls "$T/ss-fork.list".[0-9]*)" "$T/ss-fork.rec"
checked "small segments, fork: the parent" "$T/ss-fork.list" "$T/ss-fork.rec"
killed H ss-kill kill
checked "small segments, kill -9 at rest" "$T/ss-kill.list" "$T/ss-kill.rec"
killed H ss-thr threads 4
checked "small segments, 4 threads killed mid-call" "$T/ss-thr.list" "$T/ss-thr.rec"
killed H ss-cow threads-forkcow 4 100
expect_eq "small segments, 100 forks while 4 threads churn: 100 children's sections" \
	"$(grep -c '^heapsnoop: exit ' "$T/ss-cow.rec")" 100
bad=0
for child in "$T/ss-cow.list".[0-9]*; do
	"$CD" "$child" "$T/ss-cow.rec" > /dev/null 2> "$T/ss-cow.why" ||
		{ bad=$((bad + 1)); head -3 "$T/ss-cow.why"; }
done
expect_eq "small segments, 100 forks while 4 threads churn: every child's table as the fork left it" \
	"$bad" 0
checked "small segments, 100 forks while 4 threads churn: the parent, then kill -9" \
	"$T/ss-cow.list" "$T/ss-cow.rec"
KSIG=SEGV killed A ss-sig threads-sig 4
expect_eq "small segments alone: SIGSEGV on a thread mid-call: status" "$?" 139
checked "small segments alone: SIGSEGV on a thread mid-call, its own dump" \
	"$T/ss-sig.list" "$T/ss-sig.rec"

# --- a table that may not grow: counted, said, status 3 ---------------------------
HEAPSNOOP_TABLE_ENTRIES=64 "$HS" --preload -o "$T/cap.rec" -- "$PP" 12 > /dev/null 2> "$T/cap.err"
expect_eq "HEAPSNOOP_TABLE_ENTRIES=64: status 3" "$?" 3
check "HEAPSNOOP_TABLE_ENTRIES=64: the blocks without an entry said" \
	grep -q 'NOT RECORDED: [0-9]* allocations' "$T/cap.err"
# An address space too small for its segments (RLIMIT_AS of 250 MB; prog_paths
# 20's own blocks fit, 127 MiB of stack segments and 63 of entries do not).
"$HS" --preload -o "$T/as.rec" -- sh -c "ulimit -v 250000; exec '$PP' 20" > /dev/null 2> "$T/as.err"
expect_eq "RLIMIT_AS of 250 MB: status 3" "$?" 3
check "RLIMIT_AS of 250 MB: the collector says what cannot grow" \
	grep -q 'heapsnoop-preload: pid [0-9]*: the live table.s [a-z]* cannot grow to [0-9]* MiB' "$T/as.err"
check "RLIMIT_AS of 250 MB: heapsnoop says what is not recorded, the program ran to its end" \
	sh -c "grep -q 'NOT RECORDED: [1-9][0-9]* allocations' '$T/as.err' &&
	       grep -q \"the command's own status: exit 0\" '$T/as.err'"

finish
