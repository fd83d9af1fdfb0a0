#!/bin/bash
# test_death.sh - every way a process ends, with the preload collector:
# under heapsnoop --preload (which holds the live table and writes the
# dump after the death) and with LD_PRELOAD alone (the process dumps
# itself), whole and sampled; each dump checked exactly against the
# program's own list of its live blocks (prog_death, check_death):
#   exit, _exit, _Exit, quick_exit, abort, SIGSEGV, SIGBUS, SIGFPE, a stack
#   overflow, a handler that recovers once then gives up; kill -9 (alone:
#   no dump can exist); a fork whose child _exits (each its own pid);
#   threads churning killed mid-call (no torn record, each call seen
#   before or after), main _exiting while they churn, alone a fatal
#   signal landing on a thread mid-call; fork with the
#   threads at rest, and K forks while they churn (each child's table as
#   the fork left it: the undo log); a thread stopped between two of the
#   collector's stores, then kill -9 (the test build's stops); SIGUSR1 and
#   -i dumps while threads churn (each whole, then the end exact); a
#   second signal's dump of a program at rest, exact; what is
#   not recorded said with exit status 3 (a table too small, a refused
#   hello, a collector of another version, a fork child killed before its hello, an exec into a static
#   program, another network namespace); a table under RLIMIT_AS;
#   2000 threads one after the other in a small table; alone, a dump
#   that cannot be written said (_exit, SIGSEGV, SIGABRT, SIGBUS, SIGFPE);
#   exec'd children traced, exact: under heapsnoop whole and sampled, by
#   the embedded collector's /proc/PID/fd/N, and alone. No run that exits
#   0 leaves an empty log. No sleeps: killed programs say
#   "ready PID" first. KILLS (5): rounds of the threads' kill -9. ~30 s.
set -u
. "$(dirname "$0")/../tracer/lib.sh"
PL=$OUT/libheapsnoop_preload.so
PS=$PROGS/libheapsnoop_preload_stops.so
PD=$PROGS/prog_death
CD=$PROGS/check_death
KILLS=${KILLS:-5}

checked() { # NAME CHECK_DEATH-ARGS...
	local out
	if out=$("$CD" "${@:2}" 2>&1); then echo "ok   $1: ${out#*: exact: }"; else
		echo "FAIL $1"; echo "$out" | head -5; fails=$((fails + 1)); fi
}
# ours MODE NAME ARGS...: prog_death under MODE into $T/NAME.{rec,list,err}; its status.
#   H: heapsnoop --preload; HS: ... sampled; A: LD_PRELOAD alone; AS: ... sampled
ours() {
	local mode=$1 name=$2; shift 2
	rm -f "$T/$name".*
	case $mode in
	H) "$HS" --preload -o "$T/$name.rec" -- "$PD" "$T/$name.list" "$@" ;;
	HS) "$HS" -q --preload --sample-bytes 4096 --seed 7 -o "$T/$name.rec" -- "$PD" "$T/$name.list" "$@" ;;
	A) HEAPSNOOP_OUTPUT=$T/$name.rec LD_PRELOAD=$PL "$PD" "$T/$name.list" "$@" ;;
	AS) HEAPSNOOP_SAMPLE_BYTES=4096 HEAPSNOOP_SEED=7 HEAPSNOOP_OUTPUT=$T/$name.rec \
		LD_PRELOAD=$PL "$PD" "$T/$name.list" "$@" ;;
	esac > "$T/$name.out" 2> "$T/$name.err"
	local st=$?
	# No path gives an empty log with exit status 0 (issue 27).
	if [ $st -eq 0 ] && [ ! -s "$T/$name.rec" ]; then
		echo "FAIL $mode $name: exit status 0 and an empty log"; fails=$((fails + 1))
	fi
	return $st
}
# killed MODE NAME ARGS...: started, killed with SIGKILL (KSIG) once it said ready.
killed() {
	local mode=$1 name=$2; shift 2
	rm -f "$T/$name".*
	mkfifo "$T/$name.fifo"
	case $mode in
	H) "$HS" --preload -v -o "$T/$name.rec" -- "$PD" "$T/$name.list" "$@" ;;
	HS) "$HS" -q --preload --sample-bytes 4096 --seed 7 -o "$T/$name.rec" -- "$PD" "$T/$name.list" "$@" ;;
	A) HEAPSNOOP_OUTPUT=$T/$name.rec LD_PRELOAD=$PL "$PD" "$T/$name.list" "$@" ;;
	AS) HEAPSNOOP_SAMPLE_BYTES=4096 HEAPSNOOP_SEED=7 HEAPSNOOP_OUTPUT=$T/$name.rec \
		LD_PRELOAD=$PL "$PD" "$T/$name.list" "$@" ;;
	esac > "$T/$name.fifo" 2> "$T/$name.err" &
	kill_at_ready "$name" $!
}

# --- the ways to end, each under heapsnoop and alone, whole and sampled ----
for mode in H HS A AS; do
	s=; [ "${mode#?}" = S ] && s=-s
	for c in exit _exit _Exit quick_exit abort segv bus fpe overflow sigchain; do
		ours $mode "$mode-$c" "$c"
		st=$?
		case $c in abort) want=134 ;; bus) want=135 ;; fpe) want=136 ;;
			segv | overflow | sigchain) want=139 ;; *) want=0 ;; esac
		expect_eq "$mode $c: the command's status" "$st" "$want"
		checked "$mode $c" $s "$T/$mode-$c.list" "$T/$mode-$c.rec"
	done
	expect_eq "$mode sigchain: one section (the fault recovered from wrote none)" \
		"$(grep -c '^heapsnoop: \(dump\|exit\) ' "$T/$mode-sigchain.rec")" 1
	# fork: the child _exits; each process its own section under its own pid.
	if [ "${mode:0:1}" = H ]; then
		ours $mode "$mode-fork" fork
		expect_eq "$mode fork: status" "$?" 0
		child=$(ls "$T/$mode-fork.list".[0-9]*)
		checked "$mode fork: the child" $s "$child" "$T/$mode-fork.rec"
		checked "$mode fork: the parent" $s "$T/$mode-fork.list" "$T/$mode-fork.rec"
		expect_eq "$mode fork: the child's exit section, then the parent's dump" \
			"$(sed -n 's/^heapsnoop: \(exit\|dump\) .*/\1/p' "$T/$mode-fork.rec" | tr '\n' ' ')" "exit dump "
	else
		rm -f "$T/$mode-fork".*
		env HEAPSNOOP_OUTPUT="$T/$mode-fork.rec.%p" LD_PRELOAD="$PL" \
			$([ $mode = AS ] && echo HEAPSNOOP_SAMPLE_BYTES=4096 HEAPSNOOP_SEED=7) \
			"$PD" "$T/$mode-fork.list" fork > /dev/null
		child=$(ls "$T/$mode-fork.list".[0-9]*)
		checked "$mode fork: the child (its own file)" $s "$child" "$T/$mode-fork.rec.${child##*.}"
		expect_eq "$mode fork: two files, one a process" "$(ls "$T/$mode-fork.rec".* | wc -l)" 2
		cat "$T/$mode-fork.rec".* > "$T/$mode-fork.all"
		checked "$mode fork: the parent" $s "$T/$mode-fork.list" "$T/$mode-fork.all"
	fi
done

# --- kill -9 ------------------------------------------------------------------
killed H H-kill kill
checked "H kill -9 of a program at rest" "$T/H-kill.list" "$T/H-kill.rec"
killed HS HS-kill kill
checked "HS kill -9 of a program at rest (sampled)" -s "$T/HS-kill.list" "$T/HS-kill.rec"
killed A A-kill kill
checked "A kill -9: alone, nothing can be written" -n "$T/A-kill.list" "$T/A-kill.rec"

# Threads mid-call: 4 threads churning malloc, calloc, posix_memalign,
# realloc and free, killed at any point, KILLS rounds whole and sampled.
for mode in H HS; do
	s=; [ $mode = HS ] && s=-s
	nin=0 ok=0
	for ((k = 0; k < KILLS; k++)); do
		killed $mode "$mode-thr" threads 4
		out=$("$CD" $s "$T/$mode-thr.list" "$T/$mode-thr.rec" 2>&1) && ok=$((ok + 1)) ||
			{ echo "$out" | head -5; }
		n=$(echo "$out" | sed -n 's/.*; \([0-9]*\) calls in flight.*/\1/p')
		nin=$((nin + ${n:-0}))
	done
	expect_eq "$mode threads killed mid-call: rounds exact ($nin calls caught in flight)" "$ok" "$KILLS"
	ours $mode "$mode-thx" threads-exit 4
	checked "$mode threads: main _exits while they churn" $s "$T/$mode-thx.list" "$T/$mode-thx.rec"
done
for mode in A AS; do
	s=; [ $mode = AS ] && s=-s
	ours $mode "$mode-thx" threads-exit 4
	checked "$mode threads: main _exits while they churn (the others held)" $s \
		"$T/$mode-thx.list" "$T/$mode-thx.rec"
	# A fatal signal on a thread mid-call (main blocks them): the dump
	# from its handler, which must not take the allocator's locks, then
	# the default action.
	for sw in SEGV:139 ABRT:134 BUS:135 FPE:136; do
		KSIG=${sw%:*} killed $mode "$mode-ths" threads-sig 4
		expect_eq "$mode threads: SIG${sw%:*} sent while they churn: the default action's status" \
			"$?" "${sw#*:}"
		checked "$mode threads: SIG${sw%:*} on a thread mid-call, dumped from its handler" $s \
			"$T/$mode-ths.list" "$T/$mode-ths.rec"
	done
done

# --- fork while threads churn ---------------------------------------------------
for mode in H HS; do
	s=; [ $mode = HS ] && s=-s
	killed $mode "$mode-thf" threads-fork 4
	checked "$mode fork with the threads at rest: the child" $s "$(ls "$T/$mode-thf.list".[0-9]*)" \
		"$T/$mode-thf.rec"
	checked "$mode fork with the threads at rest: the parent, then kill -9" $s \
		"$T/$mode-thf.list" "$T/$mode-thf.rec"
	killed $mode "$mode-cow" threads-forkcow 4 100
	expect_eq "$mode 100 forks while 4 threads churn: 100 children's sections" \
		"$(grep -c '^heapsnoop: exit ' "$T/$mode-cow.rec")" 100
	bad=0
	for child in "$T/$mode-cow.list".[0-9]*; do
		"$CD" $s "$child" "$T/$mode-cow.rec" > /dev/null 2> "$T/$mode-cow.why" ||
			{ bad=$((bad + 1)); head -3 "$T/$mode-cow.why"; }
	done
	expect_eq "$mode 100 forks while 4 threads churn: every child's table as the fork left it" "$bad" 0
	checked "$mode 100 forks while 4 threads churn: the parent, then kill -9" $s \
		"$T/$mode-cow.list" "$T/$mode-cow.rec"
done

# --- a thread stopped between two of the collector's stores, then kill -9 --------
names=([1]="an entry's fields written, its seq not" [2]="a realloc's new entry and link published, the old one live"
	[3]="a realloc's old entry freed, the link not cleared" [4]="a free's entry freed, the block not given back")
want_linked=([1]=0 [2]=1 [3]=0 [4]=0)
for p in 1 2 3 4; do
	rm -f "$T/stop".*
	mkfifo "$T/stop.fifo"
	HEAPSNOOP_PRELOAD_LIB=$PS "$HS" --preload -v -o "$T/stop.rec" -- env HEAPSNOOP_TEST_STOP=$p:50 \
		"$PD" "$T/stop.list" stopmix > "$T/stop.fifo" 2> "$T/stop.err" &
	bg=$!
	exec 9< "$T/stop.fifo"
	wait_line 9 '^ready [0-9]+$' "$T/stop.out"
	line=$(tail -n 1 "$T/stop.out")
	kill -9 "${line#ready }"
	exec 9<&-
	wait $bg
	checked "stop $p (${names[$p]}), kill -9" "$T/stop.list" "$T/stop.rec"
	expect_eq "stop $p: realloc entries the link rule skipped" \
		"$(sed -n 's/.* \([0-9]*\) realloc links followed$/\1/p' "$T/stop.err" | tail -n 1)" \
		"${want_linked[$p]}"
done

# --- live dumps: SIGUSR1 to heapsnoop and -i while threads churn ---------------
mkfifo "$T/live.fifo" "$T/live.said"
"$HS" --preload -v -i 1 -o "$T/live.rec" -- "$PD" "$T/live.list" threads 4 > "$T/live.fifo" \
	2> "$T/live.said" &
hs=$!
exec 9< "$T/live.fifo"
exec 8< "$T/live.said"
wait_line 9 '^ready [0-9]+$' "$T/live.out"
line=$(tail -n 1 "$T/live.out")
for ((k = 0; k < 20; k++)); do
	kill -USR1 $hs
	wait_line 8 'usr1 dump written' "$T/live.err" || break
done
wait_line 8 'interval dump written' "$T/live.err"
kill -9 "${line#ready }"
cat <&8 >> "$T/live.err"
exec 8<&- 9<&-
wait $hs
expect_eq "live dumps: 20 on SIGUSR1 while 4 threads churn" \
	"$(grep -c '^heapsnoop: dump reason=usr1 ' "$T/live.rec")" 20
check "live dumps: an interval dump (-i 1)" grep -q '^heapsnoop: dump reason=interval ' "$T/live.rec"
checked "live dumps: each whole and agreeing with itself; the end after kill -9 exact" \
	"$T/live.list" "$T/live.rec"

# A second signal stops heapsnoop --preload at once, with a dump of what
# runs (SIGINT passed on and ignored by the command, then SIGTERM).
rm -f "$T/sig2".*
mkfifo "$T/sig2.fifo"
"$HS" --preload -o "$T/sig2.rec" -- sh -c "trap '' INT TERM; exec '$PD' '$T/sig2.list' kill" \
	> "$T/sig2.fifo" 2> "$T/sig2.err" &
hs=$!
exec 9< "$T/sig2.fifo"
wait_line 9 '^ready [0-9]+$' "$T/sig2.out"
line=$(tail -n 1 "$T/sig2.out")
kill -INT $hs
kill -TERM $hs
wait $hs
expect_eq "a second signal: heapsnoop stops, 128 + SIGINT" "$?" 130
kill -9 "${line#ready }"
exec 9<&-
check "a second signal: a dump of what runs" grep -q '^heapsnoop: dump reason=signal ' "$T/sig2.rec"
checked "a second signal: the program at rest in it, exact" "$T/sig2.list" "$T/sig2.rec"

# A small address space (RLIMIT_AS): the table takes what it holds (2
# MiB at first, its segments as they fill), nothing to say, exact. (Before
# version 3 it reserved 2.5 GiB and was halved until it mapped.)
"$HS" --preload -o "$T/as.rec" -- sh -c "ulimit -v 1000000; exec '$PD' '$T/as.list' _exit" \
	> /dev/null 2> "$T/as.err"
expect_eq "RLIMIT_AS of 1 GB: status" "$?" 0
check "RLIMIT_AS of 1 GB: nothing said of the table" sh -c "! grep -q 'live table' '$T/as.err'"
checked "RLIMIT_AS of 1 GB: exact" "$T/as.list" "$T/as.rec"

# A thread a request: each thread's slots go back at its end (2000 threads
# in a table of 4096 entries lose nothing).
HEAPSNOOP_TABLE_ENTRIES=4096 ours H storm storm 2000
expect_eq "2000 threads one after the other, a table of 4096 entries: status" "$?" 0
checked "2000 threads one after the other: exact" "$T/storm.list" "$T/storm.rec"

# Hellos that wait behind a section: heapsnoop --preload writes to a pipe
# no one reads until the program has ended, so it is held in the first
# child's section (30000 lines) while its siblings' hellos queue up; its
# ticks take them, and each sibling still gets its section.
rm -f "$T/late".*
mkfifo "$T/late.fifo" "$T/late.pipe"
exec 7<> "$T/late.pipe"
"$HS" --preload -v -o "$T/late.pipe" -- "$PD" "$T/late.list" forklate > "$T/late.fifo" 2> "$T/late.err" &
bg=$!
exec 9< "$T/late.fifo"
wait_line 9 '^ready [0-9]+$' "$T/late.out"
exec 6< "$T/late.pipe" 7<&- 9<&-
cat <&6 > "$T/late.rec"
exec 6<&-
wait $bg
expect_eq "hellos behind a section: status" "$?" 0
expect_eq "hellos behind a section: 3 children's lists" "$(ls "$T/late.list".[0-9]* | wc -l)" 3
for child in "$T/late.list".[0-9]*; do
	checked "hellos behind a section: child ${child##*.}" "$child" "$T/late.rec"
done
checked "hellos behind a section: the parent" "$T/late.list" "$T/late.rec"

# --- what is not recorded is said, exit status 3 -----------------------------------
HEAPSNOOP_TABLE_ENTRIES=64 ours H small exit
expect_eq "a table of 64 entries: exit status 3" "$?" 3
check "a table of 64 entries: NOT RECORDED said" grep -q 'NOT RECORDED: [1-9][0-9]* allocations' "$T/small.err"
ours H bad badhello
expect_eq "a hello with a wrong token: exit status 3" "$?" 3
check "a hello with a wrong token: said" grep -q 'refused' "$T/bad.err"
checked "a hello with a wrong token: the program's own table still exact" "$T/bad.list" "$T/bad.rec"
ours H badv badversion
expect_eq "a hello of version 2 (another heapsnoop's collector): exit status 3" "$?" 3
check "a hello of version 2: said as one" \
	grep -q 'its collector is of version 2, this heapsnoop reads version 4' "$T/badv.err"
checked "a hello of version 2: the program's own table still exact" "$T/badv.list" "$T/badv.rec"
rm -f "$T/fs".*
mkfifo "$T/fs.fifo"
HEAPSNOOP_PRELOAD_LIB=$PS "$HS" --preload -o "$T/fs.rec" -- env HEAPSNOOP_TEST_STOP=5:1 \
	"$PD" "$T/fs.list" forkstop > "$T/fs.fifo" 2> "$T/fs.err" &
bg=$!
exec 9< "$T/fs.fifo"
wait_line 9 '^ready [0-9]+$' "$T/fs.out"
line=$(tail -n 1 "$T/fs.out")
kill -9 "${line#ready }"
exec 9<&-
wait $bg
expect_eq "a fork child killed before its hello: exit status 3" "$?" 3
check "a fork child killed before its hello: said" \
	grep -q 'NOT RECORDED: 1 forked processes ended before' "$T/fs.err"
checked "a fork child killed before its hello: the parent exact" "$T/fs.list" "$T/fs.rec"
"$HS" --preload -o "$T/static.rec" -- sh -c "exec '$PROGS/prog_static'" > /dev/null 2> "$T/static.err"
expect_eq "exec into a static program: exit status 3" "$?" 3
check "exec into a static program: said" grep -q 'NOT TRACED' "$T/static.err"
"$HS" --preload -o "$T/none.rec" -- "$PROGS/prog_static" > /dev/null 2> "$T/none.err"
expect_eq "a static command, nothing recorded: exit status 3" "$?" 3
check "a static command: said" grep -q 'no process handed its live table over' "$T/none.err"
# A process in another network namespace cannot reach heapsnoop's
# abstract socket: it says so, dumps itself beside -o's file, exact.
if [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null; then
	"$HS" --preload -o "$T/ns.rec" -- unshare -n "$PD" "$T/ns.list" _exit > /dev/null 2> "$T/ns.err"
	expect_eq "another network namespace: exit status 3" "$?" 3
	check "another network namespace: the process says where its dump goes" \
		grep -q "cannot hand its table to heapsnoop .*own dumps (to $T/ns.rec.[0-9]*)" "$T/ns.err"
	checked "another network namespace: its own dump exact" "$T/ns.list" "$(ls "$T"/ns.rec.[0-9]*)"
else
	echo "skip another network namespace: needs root and unshare"
fi
# Alone, a dump that cannot be written is said on standard error.
mkdir -p "$T/nodir"
HEAPSNOOP_OUTPUT=$T/nodir LD_PRELOAD=$PL "$PD" "$T/nw.list" _exit > /dev/null 2> "$T/nw.err"
check "alone: a dump at _exit that cannot be written is said" \
	grep -q 'the dump at _exit could not be written' "$T/nw.err"
# ... and at a fatal signal, from its handler, before the default action.
for c in segv:SIGSEGV:139 abort:SIGABRT:134 bus:SIGBUS:135 fpe:SIGFPE:136; do
	IFS=: read -r c sig want <<< "$c"
	{ HEAPSNOOP_OUTPUT=$T/nodir LD_PRELOAD=$PL "$PD" "$T/nw-$c.list" $c > /dev/null; } 2> "$T/nw-$c.err"
	expect_eq "alone: $sig, the dump unwritable: the default action's status" "$?" "$want"
	check "alone: a dump at $sig that cannot be written is said" \
		grep -q "the dump at $sig could not be written" "$T/nw-$c.err"
done

# --- exec'd children are traced -------------------------------------------------------
"$HS" --preload -v -o "$T/ex.rec" -- sh -c "env X=1 '$PD' '$T/ex.list' _exit" > /dev/null 2> "$T/ex.err"
expect_eq "exec: sh, env and the program each a new image under one pid: status" "$?" 0
checked "exec: the program exec'd twice, exact" "$T/ex.list" "$T/ex.rec"
check "exec: the images before were dropped, as the tracer drops them" \
	grep -q 'images were replaced by exec' "$T/ex.err"
"$HS" -q --preload --sample-bytes 4096 --seed 7 -o "$T/exs.rec" -- \
	sh -c "env X=1 '$PD' '$T/exs.list' _exit" > /dev/null 2> "$T/exs.err"
expect_eq "exec, sampled: status" "$?" 0
checked "exec, sampled: the program exec'd twice, exact" -s "$T/exs.list" "$T/exs.rec"
# The embedded collector (a heapsnoop with no library beside it): the
# exec'd program loads it by heapsnoop's /proc/PID/fd/N, which stays
# valid while heapsnoop waits; the program exec'd from a child of sh.
mkdir -p "$T/emb"
cp "$HS" "$T/emb/heapsnoop"
"$T/emb/heapsnoop" --preload -o "$T/exe.rec" -- \
	sh -c "env X=1 '$PD' '$T/exe.list' abort; exit 0" > /dev/null 2> "$T/exe.err"
expect_eq "exec, embedded collector: status" "$?" 0
checked "exec, embedded collector: a child of sh exec'd twice, aborted, exact" "$T/exe.list" "$T/exe.rec"
# Alone, LD_PRELOAD and the settings are inherited through exec.
{ HEAPSNOOP_OUTPUT=$T/exa.rec LD_PRELOAD=$PL sh -c "exec env X=1 '$PD' '$T/exa.list' segv" \
	> /dev/null; } 2> "$T/exa.err"
expect_eq "exec, alone: status" "$?" 139
checked "exec, alone: sh exec'd into the program, its SIGSEGV dump exact" "$T/exa.list" "$T/exa.rec"
finish
