#!/bin/bash
# test_exec.sh - a traced process that execs (env, sh -c 'exec ...', or
# one attached with -p): the old image's live blocks are closed (dropped
# and counted, as -a does), the new image is traced from its first
# allocation and its mappings are the ones written; with --leaks-at-exit
# (-a, -f) the old image's blocks are written at the exec, with its name
# and mappings. About 5 s.
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
# --leaks-at-exit: the old image's live blocks written at its exec, as an
# exit section with its own name and mappings (-a: the new image's mapping
# records come before the exec), then the new image's at its exit.
exec_sections() { # NAME RECORDS PID LIVE BYTES BEFORE_READY_BYTES NEW_IMAGE_LINE
	local sec="$T/$1.sec"
	awk -v p="$3" '$2 == "exit" && $3 == "pid=" p { on = 1 } on { print }
		$2 == "end-exit" && $3 == "pid=" p { on = 0 }' "$2" > "$sec"
	check "$1: the old image's exit section, named" \
		grep -qE "^heapsnoop: exit pid=$3 .* live=$4 bytes=$5 comm=prog_waiter$" "$sec"
	check "$1: with the old image's mappings" grep -q "^heapsnoop: map pid=$3 .*/prog_waiter$" "$sec"
	"$HD" --folded "$sec" > "$sec.folded" 2> /dev/null
	expect_eq "$1: its leaks symbolized, after ready" \
		"$(folded_sum "$sec.folded" "main;after_attach_leak")" "$(($5 - $6 - ${8:-0}))"
	expect_eq "$1: and before" "$(folded_sum "$sec.folded" "main;before_attach_leak")" "$6"
	check "$1: the new image's leaks at its exit" grep -qE "^heapsnoop: $7" "$2"
}
mkfifo "$T/in" "$T/out" "$T/errpipe2" "$T/recpipe2"

# -a (the pid filtered): traced from after ready. Its allocations are read
# (a SIGUSR1 dump) before the exec: a process heapsnoop first hears of from
# its exec's mapping records has no old image known to write.
"$PROGS/prog_waiter" < "$T/in" > "$T/out" & wpid=$!
exec 6> "$T/in" 7< "$T/out"
wait_line 7 '^ready ' || exit 1
"$HS" -q -a --leaks-at-exit --pid-filter "$wpid" -o "$T/recpipe2" 2> "$T/errpipe2" &
hs=$!
exec 5< "$T/errpipe2" 8< "$T/recpipe2"	# the shell opens stderr, heapsnoop -o
wait_line 5 '^heapsnoop: tracing all processes' "$T/aexec.err" || exit 1
cat <&5 >> "$T/aexec.err" &
echo "leak 1 50" >&6; wait_line 7 '^done' || exit 1
kill -USR1 "$hs"
wait_line 8 '^heapsnoop: end-dump' "$T/aexec" || exit 1
cat <&8 >> "$T/aexec" &
# The last allocations, then the exec at once: their events are often read
# after the new image's mapping records; they must be unwound with the old.
printf 'leak 3 100\nexec %s\n' "$PROGS/prog_sys_short" >&6
wait "$wpid"
exec 6>&- 7<&- 5<&- 8<&-
kill -INT "$hs"; wait "$hs"
check "-a --leaks-at-exit, exec: exit 0" test $? -eq 0
wait
exec_sections "-a --leaks-at-exit, exec" "$T/aexec" "$wpid" 4 350 0 \
	"exit pid=$wpid .* live=7 bytes=2100 comm=prog_sys_short$"

# -f, launched: traced from the start. The live set is read (a SIGUSR1 dump)
# before the exec: in this mode mappings are read from /proc, and an image
# gone before its allocations were read leaves none to unwind them with.
"$HS" -q -f --leaks-at-exit -o "$T/recpipe2" -- "$PROGS/prog_waiter" < "$T/in" > "$T/out" \
	2> "$T/fexec.err" &
hs=$!
exec 6> "$T/in" 7< "$T/out" 8< "$T/recpipe2"
wait_line 7 '^ready ' || exit 1
echo "leak 3 100" >&6; wait_line 7 '^done' || exit 1
kill -USR1 "$hs"
wait_line 8 '^heapsnoop: end-dump' "$T/fexec" || exit 1
cat <&8 >> "$T/fexec" &
fpid=$(sed -n 's/^heapsnoop: live pid=\([0-9]*\) .*/\1/p' "$T/fexec" | head -n 1)
echo "exec $PROGS/prog_sys_short" >&6
exec 6>&- 7<&- 8<&-
wait "$hs"
check "-f --leaks-at-exit, exec: exit 0" test $? -eq 0
wait
# Its stdio buffers too (2 x 4096); the new image's leaks in the final dump.
exec_sections "-f --leaks-at-exit, exec" "$T/fexec" "${fpid:-none}" 13 16484 7992 \
	"dump reason=exit .* live=7 bytes=2100 " 8192
finish
