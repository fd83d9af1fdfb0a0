#!/bin/bash
# test_launchstop.sh - launch mode's ptrace lets a group stop through: the
# command stopped by SIGSTOP stays stopped (-v says so), SIGCONT lets it
# go on (it stayed stopped for good before: heapsnoop listened again at
# the stop's end), and it is traced after as before. About 3 s.
set -u
. "$(dirname "$0")/lib.sh"

# -v writes much before "ready": its stderr goes to a file at once,
# followed (tail -f) for the line that says the stop is in.
: > "$T/err"
coproc W { exec "$HS" -q -v -o "$T/rec" -- "$PROGS/prog_waiter" 2> "$T/err"; }
hs=$W_PID
mkfifo "$T/errf"	# not <(...): the kernel matrix's guests have no /dev/fd
tail --pid="$hs" -n +1 -f "$T/err" > "$T/errf" &
exec 5< "$T/errf"
wait_line "${W[0]}" '^ready ' "$T/out" || exit 1
pid=$(sed -n 's/^ready //p' "$T/out")
kill -STOP "$pid"
# The stop is in once heapsnoop has seen it: only then is SIGCONT its end.
check "-v says the command is stopped" wait_line 5 "^heapsnoop: pid $pid is stopped \(SIGSTOP\)"
kill -CONT "$pid"
echo "leak 3 100" >&"${W[1]}"
check "after SIGCONT, the command goes on" wait_line "${W[0]}" '^done'
echo exit >&"${W[1]}"
wait "$hs"
check "heapsnoop exits with the command (0)" test $? -eq 0
fold "$T/rec"
expect_eq "its leak after the stop" "$(folded_sum "$T/rec.count" "main;after_attach_leak")" 3
finish
