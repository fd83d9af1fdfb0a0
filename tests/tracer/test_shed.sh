#!/bin/bash
# test_shed.sh - load shed by sampling (--on-full sample, -a's default;
# bpf/alloc.h shed_keep): heapsnoop falls behind for certain, stopped
# (SIGSTOP) while the program it traces with -p makes its 2^16
# allocations (prog_paths 16: 16 + path % 64 bytes each, all kept, a
# stack each), with a ring buffer of 1 MiB. Past a quarter of it the
# programs record small blocks only as samples, kept with probability
# size/M (M = 1 KiB, 4 KiB, ... as the backlog grows), each then standing
# for M bytes: nothing is lost, the accounting says how many were shed
# and sampled, each sample's live record says its mean (shed=), and
# heapdecode's estimate of the live bytes is within 4.5 of its own
# standard errors of the truth, 3,112,960 bytes (1 in ~150,000 runs fails
# by chance under a normal law; the kernel's generator has no seed).
# And -a says it sheds load by default; a launched command that cannot
# be held (no cgroup v2) sheds it too: test_load.sh.
set -u
. "$(dirname "$0")/lib.sh"

LEVELS=16 TRUTH=3112960

coproc P { exec "$PROGS/prog_paths" $LEVELS wait; }
wait_line "${P[0]}" '^ready ' || exit 1
pid=$P_PID
mkfifo "$T/errpipe"
"$HS" -q --on-full sample --ringbuf-size 1 -o "$T/rec" -p "$pid" 2> "$T/errpipe" &
hs=$!
exec 5< "$T/errpipe"
wait_line 5 "^heapsnoop: tracing pid $pid" "$T/err" || exit 1
cat <&5 >> "$T/err" &
drain=$!
# heapsnoop reads nothing until the program is done: the ring fills.
kill -STOP "$hs"
echo go >&"${P[1]}"
wait_line "${P[0]}" '^done' || exit 1
kill -CONT "$hs"
echo bye >&"${P[1]}"
wait "$pid"
check "the program exits 0" test $? -eq 0
wait "$hs"
check "heapsnoop exits 0 (its target gone)" test $? -eq 0
wait "$drain"
exec 5<&-

check_no_loss "no events lost" "$T/err"
shed=$(sed -n 's/.*LOAD SHED: .* meanwhile: \([0-9]*\) recorded, .* in place of \([0-9]*\) not recorded .*/\1 \2/p' "$T/err")
check "the accounting says load was shed: samples in place of the rest ($shed)" \
	test -n "$shed" -a "${shed% *}" -gt 0 -a "${shed#* }" -gt "${shed% *}"
expect_eq "every block live or shed: the live records and those not recorded make 2^$LEVELS" \
	"$(( $(grep -c '^heapsnoop: live ' "$T/rec") + ${shed#* } ))" $((1 << LEVELS))
expect_eq "each sample's live record says its mean: as many as the accounting's" \
	"$(grep -c '^heapsnoop: live .* shed=' "$T/rec")" "${shed% *}"
expect_eq "... and the process's record" \
	"$(sed -n 's/^heapsnoop: proc .* shed=\([0-9]*\) comm=.*/\1/p' "$T/rec")" "${shed% *}"
# Each mean one of the levels', each sample smaller than its mean.
"$HD" -s "$T/rec" | awk '/^heapsnoop: live .* shed=/ {
		m = $0; sub(/.* shed=/, "", m); sub(/ .*/, "", m)
		s = $0; sub(/.*~b#size: /, "", s); sub(/,.*/, "", s)
		ok = 0; for (l = 1024; l <= 1048576; l *= 4) if (m == l) ok = 1
		if (!ok || s + 0 >= m + 0) bad++ }
	END { print bad + 0 }' > "$T/bad"
expect_eq "each mean a level's (1 KiB to 1 MiB), each sample below it" "$(cat "$T/bad")" 0

"$HD" --report "$T/rec" > "$T/report"
est=$(sed -nE 's/^total \(estimated, \+-([0-9]+) bytes at 95%\): ([0-9.]+ [KMGT]iB \()?([0-9]+) bytes\)? in .*/\3 \1/p' "$T/report")
check "--report: the total is an estimate, with its margin ($est)" test -n "$est"
check "--report: within 4.5 standard errors of the truth, $TRUTH bytes" \
	awk -v e="${est% *}" -v m="${est#* }" -v t=$TRUTH 'BEGIN {
		sd = m / 1.96; d = e - t; exit !(sd > 0 && d * d <= 20.25 * sd * sd) }'
check "--report: says why" grep -q '^estimated: [0-9]* of its blocks recorded as samples while the tracer shed load' "$T/report"
check "--stats: says which counts are of what was recorded" \
	bash -c "'$HD' --stats '$T/rec' | grep -q '^  estimated: the tracer fell behind and shed load: ${shed% *} of these allocations were recorded as samples'"

# -a sheds load by default, and says so with -v; hold cannot be asked.
coproc A { exec "$HS" -a -v -q --comm nosuchprog -o /dev/null 2>&1; }
wait_line "${A[0]}" '^heapsnoop: tracing all processes' "$T/a.err"
kill -INT "$A_PID"
wait "$A_PID"
check "-a: sheds load by default, said with -v" \
	grep -q 'allocations .* are recorded as samples that stand for the rest: --on-full sample' "$T/a.err"
"$HS" -a --on-full hold -o /dev/null 2> "$T/ahold"
check "-a: --on-full hold refused" grep -q -- "--on-full hold goes with -p or a command" "$T/ahold"
"$HS" --on-full nope -- true 2> "$T/bad.err"
check "--on-full: an unknown word refused, the three named" \
	grep -q "give hold .*, sample .* or drop" "$T/bad.err"
finish
