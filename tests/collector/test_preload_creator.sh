#!/bin/bash
# test_preload_creator.sh - a thread's stacks go on with the stack that
# created it under heapsnoop --preload and the collector alone (docs/
# COLLECTOR.md, "Who created a thread"): the collector's pthread_create
# takes the call's stack and hands it to the thread. prog_creator's 4
# pool workers' leaks are one stack of 400 bytes, leak_here;worker_loop;
# worker_main, the [created by] boundary, then pthread_create;spawn_pool;
# main to _start; the thread a thread made has two boundaries, to
# spawn_parent;main: the patterns test_creator.sh checks for the BPF
# tracer (creatorlib.sh), exactly, in heapdecode --folded and --report
# and heapsnoop -s; with --unwind fp from main on (its walk ends at
# __libc_start_call_main); the collector alone (HEAPSNOOP_OUTPUT): the
# same stacks, the boundary's one `frame` record; a pthread_create that
# fails returns the C library's error, and the run goes on; a thread that
# ends by pthread_exit or cancellation, a destructor after it, a fork
# child's thread (prog_creatorends). No BPF: runs as any user. ~1 s.
set -u
. "$(dirname "$0")/../tracer/lib.sh"
. "$(dirname "$0")/../tracer/creatorlib.sh"
PL=$OUT/libheapsnoop_preload.so

"$HS" --preload -q -s -o "$T/p" -- "$PROGS/prog_creator" 2> "$T/p.err"
check "--preload: exits 0" test $? -eq 0
"$HD" --report "$T/p" > "$T/p.report"
expect_chains "--preload" "$T/p" "$T/p.report"
report_chain "$T/p.err" 400 > "$T/p.s400"
check "--preload: -s: the workers' chain" grep -qxE \
	"leak_here;worker_loop;worker_main;\\|;pthread_create;spawn_pool;main;" "$T/p.s400"
report_chain "$T/p.err" 300 > "$T/p.s300"
check "--preload: -s: the nested chain" grep -qxE \
	"child_leak;child_main;\\|;pthread_create;spawn_child;parent_main;\\|;pthread_create;spawn_parent;main;" \
	"$T/p.s300"
expect_eq "--preload: one boundary frame record" \
	"$(grep -c '^heapsnoop: frame pid=[0-9]* addr=0x6000000000000000 kind=thread line=0 file=- function=\[created%20by\]$' "$T/p")" 1
check "--preload: -s says nothing is missing" bash -c "! grep -q 'NOT RECORDED' '$T/p.err'"
"$HD" --pprof "$T/p.pb" "$T/p" 2> /dev/null
check "--preload: pprof has the [created by] function" bash -c "zcat '$T/p.pb' | grep -qa 'created by'"

# --unwind fp: the same chains from main on.
START='(.*;)?main;'
creator_patterns
"$HS" --preload -q --unwind fp -o "$T/fp" -- "$PROGS/prog_creator" 2> "$T/fp.err"
check "--preload --unwind fp: exits 0" test $? -eq 0
"$HD" --report "$T/fp" > "$T/fp.report"
expect_chains "--preload --unwind fp" "$T/fp" "$T/fp.report"
START='_start;__libc_start_main;(__libc_start_call_main;)?main;'
creator_patterns

# The collector alone: its own last dump.
HEAPSNOOP_OUTPUT=$T/a LD_PRELOAD=$PL "$PROGS/prog_creator" fail > "$T/a.out"
check "alone: exits 0" test $? -eq 0
check "alone: a failing pthread_create returns the C library's EAGAIN" \
	grep -qx 'create failed: 11' "$T/a.out"
"$HD" --report "$T/a" > "$T/a.report"
expect_chains "alone" "$T/a" "$T/a.report"
expect_eq "alone: one boundary frame record" "$(grep -c '^heapsnoop: frame .*kind=thread' "$T/a")" 1

# The ways a thread with a creator ends (prog_creatorends), alone, each
# process its own file: pthread_exit and cancellation keep the creator;
# the destructor run after the start routine has none (its chain freed);
# a fork child's thread keeps its creator; main has none.
HEAPSNOOP_OUTPUT=$T/e.%p LD_PRELOAD=$PL "$PROGS/prog_creatorends" > "$T/e.out"
check "ends: exits 0" test $? -eq 0
check "ends: done" grep -qx done "$T/e.out"
parent=$(grep -l 'main_leak' /dev/null $(for f in "$T"/e.[0-9]*; do "$HD" --folded "$f" > "$f.f"; echo "$f.f"; done))
child=$(grep -l 'forked_leak' "$T"/e.[0-9]*.f)
expect_eq "ends: two processes' dumps" "$(ls "$T"/e.[0-9]*.f | wc -l)" 2
EC="^${START}pthread_create;\[created_by\];${S}start_thread;"
check "ends: pthread_exit: its creator" grep -qE "${EC}exiter;exiter_leak 11\$" "$parent"
check "ends: cancelled: its creator" grep -qE "${EC}canceled;cancel_leak 22\$" "$parent"
check "ends: the destructor after it: none" grep -qE "^${S}start_thread;.*;dtor 55\$" "$parent"
check "ends: main: none" grep -qE "^${START}main_leak 44\$" "$parent"
check "ends: a fork child's thread: its creator" grep -qE "${EC}forker;forked_leak 33\$" "$child"

# A process that makes no thread: no boundary record.
HEAPSNOOP_OUTPUT=$T/n LD_PRELOAD=$PL ls / > /dev/null
check "no thread: a dump" grep -q '^heapsnoop: live ' "$T/n"
check "no thread: no boundary record" bash -c "! grep -q 'kind=thread' '$T/n'"
finish
