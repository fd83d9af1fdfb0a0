#!/bin/bash
# test_terminal.sh - good defaults on a terminal (issue 32): without -o, a
# terminal on standard output gets no records but the summary and the
# heapdecode commands, the records a new file of their own (BPF and
# --preload alike); a pipe gets the records as before. The messages that
# say what to do: no privilege to load BPF (--preload named), -p of a
# kernel thread. script(1) gives heapsnoop its terminal.
set -u
. "$(dirname "$0")/lib.sh"

LEAKY=$OUT/leaky
mkdir "$T/cwd" "$T/pl"

# 1. The tracer on a terminal: the log is heapsnoop.leaky.PID.heap here.
(cd "$T/cwd" && script -qec "'$HS' -- '$LEAKY'" /dev/null < /dev/null > "$T/tty" 2>&1)
check "terminal: exit 0 (the command's)" test $? -eq 0
log=$(cd "$T/cwd" && ls heapsnoop.leaky.*.heap 2> /dev/null)
check "terminal: one log, heapsnoop.leaky.PID.heap" \
	bash -c "[ \$(echo '$log' | grep -c '^heapsnoop\.leaky\.[0-9]*\.heap\$') -eq 1 ]"
check "terminal: no record on the terminal" \
	bash -c "! grep -q '~m#\|^heapsnoop: \(live\|dump\|map\|node\|tree\) ' '$T/tty'"
check "terminal: the log holds the dump to its end" \
	bash -c "grep -q '^heapsnoop: dump reason=exit' '$T/cwd/$log' &&
		 grep -q '^heapsnoop: end-dump' '$T/cwd/$log'"
check "terminal: the log is mode 0600" test "$(stat -c %a "$T/cwd/$log")" = 600
# -s on by default: its stacks are the only symbolized frames said.
check "terminal: the summary, leaky's leak in load_config named" \
	grep -q 'load_config+0x[0-9a-f]* (leaky) examples/leaky.c:58' "$T/tty"
check "terminal: the report's command named" grep -q "^  heapdecode --report $log" "$T/tty"
check "terminal: the flame graph's command named" \
	grep -q "^  heapdecode --flamegraph ${log%.heap}.svg $log" "$T/tty"
(cd "$T/cwd" && "$HD" --report "$log" > "$T/report")
check "terminal: the command said reads the log (load_config's leak)" \
	bash -c "test $? -eq 0 && grep -q load_config '$T/report'"

# A pipe on standard output: the records, as before; no file made.
(cd "$T/cwd" && "$HS" -q -- "$LEAKY" 2> /dev/null | cat > "$T/piped")
check "pipe: the records on standard output" grep -q '^heapsnoop: end-dump' "$T/piped"
check "pipe: no log file made" test "$(ls "$T/cwd" | wc -l)" -eq 1

# A start that fails leaves no log behind.
(cd "$T/cwd" && script -qec "'$HS' -- /nonexistent/cmd" /dev/null < /dev/null > "$T/tty2" 2>&1)
check "a failed start: no log left" test "$(ls "$T/cwd" | wc -l)" -eq 1

# 2. --preload on a terminal: the same file, the same commands.
(cd "$T/pl" && script -qec "'$HS' --preload -- '$LEAKY'" /dev/null < /dev/null > "$T/ptty" 2>&1)
check "--preload terminal: exit 0" test $? -eq 0
plog=$(cd "$T/pl" && ls heapsnoop.leaky.*.heap 2> /dev/null)
check "--preload terminal: the log holds the dump" \
	bash -c "test -n '$plog' && grep -q '^heapsnoop: end-dump' '$T/pl/$plog'"
check "--preload terminal: no record on the terminal" \
	bash -c "! grep -q '~m#\|^heapsnoop: \(live\|dump\|map\|node\|tree\) ' '$T/ptty'"
check "--preload terminal: the report's command named" grep -q "^  heapdecode --report $plog" "$T/ptty"

# What --preload does not honour is refused, one line each, never ignored.
"$HS" --preload --min-size 8 --max-size 64 -o "$T/refused" -- "$LEAKY" \
	> /dev/null 2> "$T/refused.err"
check "--preload --min-size --max-size: exit 1, nothing run" \
	bash -c "test $? -eq 1 && test ! -e '$T/refused'"
check "... one line for each" bash -c "[ \$(grep -c 'goes with the BPF tracer, not --preload' \
	'$T/refused.err') -eq 2 ] && grep -q '^heapsnoop: --max-size goes with the BPF tracer, not --preload: every allocation is recorded' '$T/refused.err'"
check "--preload terminal: the summary on by default, its headline" grep -q \
	"^heapsnoop: biggest holder: 4.0 KiB in 1 block, load_config (leaky.c:58) <- main (leaky.c:67)" \
	"$T/ptty"

# --preload -s: the BPF tracer's summary from the collector's live tables.
"$HS" --preload -s -o "$T/pls" -- "$LEAKY" > /dev/null 2> "$T/pls.err"
check "--preload -s: exit 0, the records whole" bash -c "test $? -eq 0 &&
	grep -q '^heapsnoop: end-dump' '$T/pls'"
check "--preload -s: the headline, load_config's block in KiB" grep -qx \
	"heapsnoop: biggest holder: 4.0 KiB in 1 block, load_config (leaky.c:58) <- main (leaky.c:67)" \
	"$T/pls.err"
check "--preload -s: new_session's 10 blocks, 2.5 KiB, named" bash -c "grep -A1 \
	'^    2.5 KiB in 10 allocations from pid [0-9]*:\$' '$T/pls.err' |
	grep -q 'new_session+0x[0-9a-f]* (leaky) examples/leaky.c:23'"
check "--preload -s: the stdio buffer apart" grep -q \
	"^heapsnoop: the C runtime's own, not above: 4.0 KiB (4096 bytes) in 1 allocation (stdio buffer)" \
	"$T/pls.err"
"$HS" -s -o "$T/bpfs" -- "$LEAKY" > /dev/null 2> "$T/bpfs.err"
# The headline, each stack's line and the runtime's, pids apart.
for f in bpfs pls; do
	grep -E '^heapsnoop: biggest holder|^    [0-9.]+ [KMG]?i?B.* allocations from pid|^heapsnoop: the C runtime' \
		"$T/$f.err" | sed 's/pid [0-9]*/pid P/' > "$T/$f.lines"
done
check "--preload -s: the BPF tracer's lines (headline, stacks, runtime)" \
	bash -c "[ \$(wc -l < '$T/pls.lines') -eq 4 ] && diff '$T/bpfs.lines' '$T/pls.lines'"
# Several processes: each one that ended with live blocks, by live bytes; -sN's N stacks.
"$HS" --preload -s3 -o "$T/plm" -- sh -c "'$LEAKY' & '$LEAKY'; wait" > /dev/null 2> "$T/plm.err"
check "--preload -s3, two leaky and their sh: the processes by live bytes" bash -c "
	grep -q '^heapsnoop: summary: .* in 3 process(es) (top 3 stacks by live bytes)' '$T/plm.err' &&
	[ \$(grep -c '^    pid [0-9]* (leaky): 10.5 KiB in 12 allocations, 3 stacks\$' '$T/plm.err') -eq 2 ]"
check "--preload -s3: 2 stacks of the first, 1 of the second (the runtime's apart)" bash -c "
	[ \$(grep -c '^    4.0 KiB in 1 allocations from pid' '$T/plm.err') -eq 2 ] &&
	[ \$(grep -c '^    2.5 KiB in 10 allocations from pid' '$T/plm.err') -eq 1 ] &&
	grep -q '^heapsnoop: biggest holder: 8.0 KiB in 2 blocks, load_config (leaky.c:58)' '$T/plm.err'"

# 3. No privilege to load BPF: how to get it, and --preload to do without.
if command -v setpriv > /dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$HS" -- /bin/true > /dev/null 2> "$T/nopriv"
	check "unprivileged: exit 1" test $? -eq 1
	check "unprivileged: needs root or CAP_BPF and CAP_PERFMON, names --preload" \
		grep -q "cannot load BPF programs: Operation not permitted (needs root, or CAP_BPF and CAP_PERFMON.*without them, trace a command you launch with heapsnoop --preload -- COMMAND" "$T/nopriv"
fi

# 4. -p of a kernel thread (kthreadd, pid 2 outside a container).
if [ "$(cat /proc/2/comm 2> /dev/null)" = kthreadd ]; then
	"$HS" -p 2 > /dev/null 2> "$T/kthread"
	check "-p 2: exit 1, a kernel thread with no user heap" bash -c "test $? -eq 1 &&
		grep -q 'pid 2 is a kernel thread: it has no user heap to trace' '$T/kthread'"
fi
"$HS" -p 99999999 > /dev/null 2> "$T/nopid"
check "-p of no process: as before" grep -q "no process with pid 99999999" "$T/nopid"

finish
