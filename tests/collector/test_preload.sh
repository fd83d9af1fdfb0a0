#!/bin/bash
# test_preload.sh - the preload collector (libheapsnoop_preload.so) on the
# tracer tests' programs, with their expectations where the collector
# records the same, and on tests/collector/prog_collect: every aligned entry
# point, malloc_usable_size, fork, exec, sampling by bytes; then
# `heapsnoop --preload`; dumps on a signal and every second. No BPF: runs
# as any user. ~4 s.
set -u
. "$(dirname "$0")/../tracer/lib.sh"
PL=$OUT/libheapsnoop_preload.so
PC=$PROGS/prog_collect

collect() { # RECORDS PROGRAM ARGS...: run under the preload into RECORDS
	local rec=$1; shift
	HEAPSNOOP_OUTPUT=$rec LD_PRELOAD=$PL "$@" > "$rec.stdout"
}

# prog_semantics: test_semantics.sh's live set, call sites and chains.
collect "$T/sem" "$PROGS/prog_semantics"
check "prog_semantics exits 0" test $? -eq 0
fold "$T/sem"
expect_semantics "$T/sem"
check "stacks reach _start, the call site first" \
	grep -q '^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_malloc_leak 300$' "$T/sem.bytes"
check "the dump says what it holds" bash -c "grep -q '^heapsnoop: dump reason=exit .* live=[1-9][0-9]* ' '$T/sem' &&
	grep -q '^heapsnoop: end-dump live=[1-9]' '$T/sem'"

# HEAPSNOOP_UNWIND=fp: prog_semantics keeps frame pointers; libc does not.
HEAPSNOOP_UNWIND=fp collect "$T/fp" "$PROGS/prog_semantics"
fold "$T/fp"
check "frame pointers: chains to main, the call site first" \
	grep -qE '(^|;)main;case_malloc_leak 300$' "$T/fp.bytes"

# prog_threads: 4 threads freeing each other's blocks.
collect "$T/thr" "$PROGS/prog_threads"
check "prog_threads exits 0" test $? -eq 0
fold "$T/thr"
expect_eq "threads: live blocks from thread_alloc" "$(folded_sum "$T/thr.count" "thread_main;thread_alloc")" 2000
expect_eq "threads: live bytes from thread_alloc" "$(folded_sum "$T/thr.bytes" "thread_main;thread_alloc")" 80000
# The thread's outermost frame: glibc's clone3, __clone3 on x86-64, its
# thread_start on arm64; then its creator (test_preload_creator.sh).
check "threads: stacks reach the thread's start, then its creator" \
	grep -qE '^_start;.*;main;pthread_create;\[created_by\];(__clone3|thread_start);start_thread;thread_main;thread_alloc 80000$' "$T/thr.bytes"

# prog_nofp: no frame pointers, a frame with no CFI (libfp.so), a thread,
# a dlopen()ed library: test_unwind.sh's chains, complete (the CFI walk).
collect "$T/nofp" "$PROGS/prog_nofp"
fold "$T/nofp"
chain_a='main;p_run;p_step;lib_enter;lib_mid;lib_back;fp_hop;p_callback;p_deep;lib_leaf'
chain_t='p_thread;lib_enter;lib_mid;lib_back;fp_hop;p_callback;p_deep;lib_leaf'
chain_l='main;p_late;late_enter;late_mid;p_late_cb;lib_leaf'
if [ "$(uname -m)" = aarch64 ]; then
	# arm64's walk takes fp_hop's frame record (no CFI) to lib_back, whose
	# CFA is from sp, which a record does not give: it stops there. Both
	# stacks are marked as stopping there (unreadable past it), never
	# passed off as complete (docs/COLLECTOR.md, "No FDE").
	expect_eq "no frame pointers: both chains marked unreadable past lib_back (arm64)" \
		"$(grep -cE '^\[stack_unreadable_past_here\];lib_back;fp_hop;p_callback;p_deep;lib_leaf 6666$' "$T/nofp.bytes")" 1
else
	expect_eq "no frame pointers: 3 x 1111 bytes, 10 frames to main and on to _start" \
		"$(grep -cE "^_start;(.*;)?$chain_a 3333\$" "$T/nofp.bytes")" 1
	expect_eq "no frame pointers: a thread's 3333 bytes to the thread's start" \
		"$(grep -cE "^(.*;)?start_thread;$chain_t 3333\$" "$T/nofp.bytes")" 1
fi
check "no frame pointers: no frame twice in a row but p_recurse's" \
	bash -c "! grep -E '(^|;)([a-z_]+);\\2(;| )' '$T/nofp.bytes' | grep -v p_recurse"

expect_eq "no frame pointers: dlopen()ed library, 2 x 2222 bytes" \
	"$(grep -cE "^_start;(.*;)?$chain_l 4444\$" "$T/nofp.bytes")" 1
expect_eq "80 KiB deep (the tracer cuts it): whole, 21 frames of p_recurse" \
	"$(grep -cE '^_start;(.*;)?main;(p_recurse;){21}lib_leaf 4444$' "$T/nofp.bytes")" 1

# Every aligned entry point, 16 to 4096 bytes; the program checks alignment.
collect "$T/al" "$PC" align
check "alignment: every pointer aligned (the program checks)" grep -qx 'ok align' "$T/al.stdout"
fold "$T/al"
# 16..4096: 9 alignments a, each one block of a + 1 bytes: 8185 bytes.
for f in align_posix align_aligned_alloc align_memalign; do
	expect_eq "alignment: $f live bytes" "$(folded_sum "$T/al.bytes" "case_align;$f")" 8185
done
expect_eq "alignment: valloc and pvalloc" "$(folded_sum "$T/al.bytes" "case_align;align_valloc")" 8194

collect "$T/us" "$PC" usable
check "malloc_usable_size: written up to it, realloc keeps the bytes" grep -qx 'ok usable' "$T/us.stdout"
fold "$T/us"
expect_eq "malloc_usable_size: the block is live as asked (100 bytes)" \
	"$(folded_sum "$T/us.bytes" "main;case_usable")" 100

# fork: each process its own file (%p) and its own live set.
HEAPSNOOP_OUTPUT=$T/fork.%p LD_PRELOAD=$PL "$PC" fork > "$T/fork.stdout"
check "fork: the program ran" grep -qx 'ok fork' "$T/fork.stdout"
set -- "$T"/fork.[0-9]*
expect_eq "fork: two record files" "$#" 2
for f in "$@"; do fold "$f"; cat "$f.bytes"; done > "$T/fork.all"
expect_eq "fork: both hold the 111 bytes from before it" "$(grep -c 'main;case_fork 111$' "$T/fork.all")" 2
expect_eq "fork: the child's 222, the parent's 333" \
	"$(grep -cE 'case_fork;(fork_child_alloc 222|fork_parent_alloc 333)$' "$T/fork.all")" 2

# exec: the new image writes its own records to the same file.
collect "$T/ex" "$PC" exec
fold "$T/ex"
check "exec: the new image's 555 bytes" grep -q 'main;case_after_exec 555$' "$T/ex.bytes"

# A dump on a signal: the live set of that moment, then the exit's.
coproc SIG { HEAPSNOOP_OUTPUT=$T/sig HEAPSNOOP_SIGNAL=10 LD_PRELOAD=$PL exec "$PC" signal; }
sig_pid=$SIG_PID
wait_line "${SIG[0]}" '^ready$'
kill -USR1 "$sig_pid"
echo go >&"${SIG[1]}"
wait "$sig_pid"
check "signal: the program ran" test $? -eq 0
expect_eq "signal: a usr1 dump, then the exit's" \
	"$(sed -n 's/^heapsnoop: dump reason=\([a-z0-9]*\) .*/\1/p' "$T/sig" | tr '\n' ' ')" "usr1 exit "
sed -n '/reason=usr1/,/end-dump/p' "$T/sig" > "$T/sig.usr1"
fold "$T/sig.usr1"
expect_eq "signal: its dump holds the 666 bytes from before it" \
	"$(folded_sum "$T/sig.usr1.bytes" "main;case_signal")" 666

# Interval dumps: the program allocates until one is in its file (~1 s).
HEAPSNOOP_INTERVAL=1 collect "$T/iv" "$PC" interval
check "interval: a dump came within 10 s" grep -qx 'ok interval' "$T/iv.stdout"
awk '/reason=interval/ { on = 1 } on { print } on && /end-dump/ { exit }' "$T/iv" > "$T/iv.first"
check "interval: the dump holds the 888 bytes" bash -c "'$HD' --folded '$T/iv.first' | grep -q 'main;case_interval 888$'"

# Sampling by bytes: mean 16 KiB, seed 1. Live: 200000 x 64 and 3125 x
# 8192 bytes (as many again freed): estimates within 4 standard deviations
# (3.6% and 2.2% of the true bytes, lib.sh's expect_estimate).
HEAPSNOOP_SEED=1 HEAPSNOOP_SAMPLE_BYTES=16384 collect "$T/smp" "$PC" sample 200000
fold "$T/smp"
expect_sampled "$T/smp" 200000 16384

# A stack deeper than one token holds (31 frames) is kept whole, up to a
# record's 1024 (docs/OUTPUT.md, depth=): deep N is N + 5 frames from
# _start; deep 26 is 31 (one token, no depth=), deep 27 32 and deep 60
# 65 (whole, no cut=), deep 1100 1105 (its innermost 1024, cut=depth).
D26='^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_deep;(deep_recurse;){25}deep_recurse 1234$'
D27='^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_deep;(deep_recurse;){26}deep_recurse 1234$'
D60='^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_deep;(deep_recurse;){59}deep_recurse 1234$'
DMAX='^\[stack_truncated\];(deep_recurse;){1023}deep_recurse 1234$'
for n in 26 27 60 1100; do
	collect "$T/deep$n" "$PC" deep $n
	fold "$T/deep$n"
done
expect_eq "depth: 31 frames are whole (no cut=)" "$(grep -c 'cut=' "$T/deep26")" 0
expect_eq "depth: 31 frames are whole, to _start" "$(grep -cE "$D26" "$T/deep26.bytes")" 1
expect_eq "depth: 31 frames, one token, no depth=" "$(grep -c 'depth=' "$T/deep26")" 0
expect_eq "depth: 32 frames, whole (no cut=)" "$(grep -c 'cut=' "$T/deep27")" 0
expect_eq "depth: 32 frames, depth=32 and two tokens" \
	"$(grep -cE '^heapsnoop: live .* depth=32 ~m#[^ ]+ ~m#[^ ]+$' "$T/deep27")" 1
expect_eq "depth: 32 frames, whole to _start" "$(grep -cE "$D27" "$T/deep27.bytes")" 1
expect_eq "depth: 65 frames, whole (no cut=), depth=65" \
	"$(grep -c 'cut=' "$T/deep60") $(grep -c '^heapsnoop: live .* depth=65 ~m#' "$T/deep60")" "0 1"
expect_eq "depth: 65 frames, whole to _start" "$(grep -cE "$D60" "$T/deep60.bytes")" 1
check "depth: -s numbers all 65 frames" bash -c "'$HD' -s '$T/deep60' | grep -q '^    #64 .*_start'"
expect_eq "depth: the shallow block beside it is whole" \
	"$(grep -cE '^_start;(.*;)?main;case_deep 4321$' "$T/deep60.bytes")" 1
expect_eq "depth: 1105 frames, the innermost 1024 kept, cut=depth" \
	"$(grep -c '^heapsnoop: live .* cut=depth depth=1024 ~m#' "$T/deep1100")" 1
expect_eq "depth: 1105 frames, under [stack_truncated]" "$(grep -cE "$DMAX" "$T/deep1100.bytes")" 1
check "depth: -s says the stack is truncated" bash -c "'$HD' -s '$T/deep1100' | grep -qx '    (stack truncated)'"

# heapsnoop --preload sets the same up.
"$HS" --preload -o "$T/hs" -- "$PROGS/prog_semantics" > /dev/null 2> "$T/hs.err"
check "heapsnoop --preload exits 0" test $? -eq 0
fold "$T/hs"
expect_eq "heapsnoop --preload: the leak" "$(folded_sum "$T/hs.bytes" "main;case_malloc_leak")" 300
"$HS" --preload --sample-bytes 16384 --seed 1 -o "$T/hs2" -- "$PC" sample 200000 > /dev/null 2>&1
fold "$T/hs2"
expect_eq "heapsnoop --preload --sample-bytes --seed: the same estimate as the variables" \
	"$(folded_sum "$T/hs2.bytes" "case_sample;sample_small")" \
	"$(folded_sum "$T/smp.bytes" "case_sample;sample_small")"
finish
