#!/bin/bash
# test_fork.sh - a traced process that forks (prog_fork: 2 children, each
# leaking 3 x 200 bytes from child_leak() before it exits; then the parent
# leaks 100 bytes from parent_leak()). -f follows the children, each
# under its own pid from its first allocation (launch and -p); without it
# a line says each child was not traced. About 3 s of CPU.
set -u
. "$(dirname "$0")/lib.sh"

# -f --leaks-at-exit, launch mode: both children's leaks in exit sections.
echo go | "$HS" -q -f --leaks-at-exit -- "$PROGS/prog_fork" > "$T/f" 2> "$T/f.err"
check "launch -f: exit 0" test $? -eq 0
fold "$T/f"
expect_eq "launch -f: the children's leaks" "$(folded_sum "$T/f.count" "main;child_leak")" 6
expect_eq "launch -f: their bytes" "$(folded_sum "$T/f.bytes" "main;child_leak")" 1200
expect_eq "launch -f: the parent's leak" "$(folded_sum "$T/f.count" "main;parent_leak")" 1
parent=$(sed -n 's/^ready //p' "$T/f")
expect_eq "launch -f: two exit sections, of two other pids" \
	"$(grep '^heapsnoop: exit pid=' "$T/f" | grep -vc "pid=$parent ")" 2
expect_eq "launch -f: 3 live records in each" \
	"$(grep -c '^heapsnoop: end-exit pid=[0-9]* live=3$' "$T/f")" 2
check "launch -f: no child said unfollowed" bash -c "! grep -q 'not traced' '$T/f.err'"
check "launch -f: no events lost" grep -q "no events lost" "$T/f.err"

# Without -f: the parent only, and each fork said at run time.
echo go | "$HS" -q -- "$PROGS/prog_fork" > "$T/n" 2> "$T/n.err"
check "launch, no -f: exit 0" test $? -eq 0
fold "$T/n"
expect_eq "no -f: the parent's leak" "$(folded_sum "$T/n.count" "main;parent_leak")" 1
expect_eq "no -f: no child traced" "$(folded_sum "$T/n.count" "main;child_leak")" 0
expect_eq "no -f: each fork said" \
	"$(grep -c "^heapsnoop: pid [0-9]* forked pid [0-9]*: not traced (-f follows children)$" "$T/n.err")" 2

# -p -f: attached before the forks.
coproc W { exec "$PROGS/prog_fork"; }
wait_line "${W[0]}" '^ready ' || exit 1
pid=$W_PID
mkfifo "$T/errpipe"
"$HS" -q -f --leaks-at-exit -p "$pid" > "$T/p" 2> "$T/errpipe" &
hs=$!
exec 5< "$T/errpipe"
wait_line 5 "^heapsnoop: tracing pid $pid" "$T/p.err" || exit 1
cat <&5 >> "$T/p.err" &
echo go >&"${W[1]}"
wait "$hs"
check "-p -f: exit 0" test $? -eq 0
fold "$T/p"
expect_eq "-p -f: the children's leaks" "$(folded_sum "$T/p.count" "main;child_leak")" 6
expect_eq "-p -f: the parent's leak" "$(folded_sum "$T/p.count" "main;parent_leak")" 1
finish
