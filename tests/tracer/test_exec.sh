#!/bin/bash
# test_exec.sh - a traced process that execs (env, sh -c 'exec ...', or
# one attached with -p): the old image's live blocks are closed (dropped
# and counted, as -a does), the new image is traced from its first
# allocation and its mappings are the ones written. About 4 s.
set -u
. "$(dirname "$0")/lib.sh"

# Every live stack of RECORDS is prog_waiter's: through its main, none of
# the old image's (whose frames would be in no mapping now).
only_waiter() { # NAME RECORDS
	fold "$2"
	expect_eq "$1: no live stack outside prog_waiter's main" \
		"$(grep -vc ';main;' "$2.count")" 0
	expect_eq "$1: the leak after exec" "$(folded_sum "$2.count" "main;after_attach_leak")" 3
	expect_eq "$1: the leak before ready" "$(folded_sum "$2.count" "main;before_attach_leak")" 8
	check "$1: the new image's mappings are written" \
		grep -q "^heapsnoop: map pid=[0-9]* .* path=.*/prog_waiter$" "$2"
	check "$1: the old image's are not" bash -c "! grep -q '^heapsnoop: map .*path=$3$' '$2'"
}

printf 'leak 3 100\nexit\n' | "$HS" -q -- env A=1 "$PROGS/prog_waiter" > "$T/env" 2> "$T/env.err"
check "env A=1 prog: exit 0" test $? -eq 0
only_waiter "env A=1 prog" "$T/env" /usr/bin/env
check "env A=1 prog: the exec is counted" grep -q " 1 images were replaced by exec; " "$T/env.err"

printf 'leak 3 100\nexit\n' | "$HS" -q -- sh -c "exec '$PROGS/prog_waiter'" > "$T/sh" 2> /dev/null
check "sh -c 'exec prog': exit 0" test $? -eq 0
only_waiter "sh -c 'exec prog'" "$T/sh" "/usr/bin/dash"

# -p: attach to a shell that then execs the program. Its exit comes only
# once heapsnoop has taken every event (a SIGUSR1 dump drains them first):
# without an exit stop (-p), a process that execs and exits before its
# exec is read leaves no mappings to read.
coproc W { exec bash -c "read -r go; exec '$PROGS/prog_waiter'"; }
pid=$W_PID
mkfifo "$T/errpipe" "$T/recpipe"
"$HS" -q -p "$pid" > "$T/recpipe" 2> "$T/errpipe" &
hs=$!
exec 6< "$T/recpipe" 5< "$T/errpipe"	# the order heapsnoop opens them
wait_line 5 "^heapsnoop: tracing pid $pid" "$T/p.err" || exit 1
cat <&5 >> "$T/p.err" &
echo go >&"${W[1]}"
wait_line "${W[0]}" '^ready ' || exit 1
echo "leak 3 100" >&"${W[1]}"
wait_line "${W[0]}" '^done' || exit 1
kill -USR1 "$hs"
wait_line 6 '^heapsnoop: end-dump' "$T/p" || exit 1
cat <&6 >> "$T/p" &
echo exit >&"${W[1]}"
wait "$hs"
check "-p, then exec: exit 0" test $? -eq 0
only_waiter "-p, then exec" "$T/p" "/usr/bin/bash"
finish
