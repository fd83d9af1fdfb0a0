#!/bin/bash
# test_attach.sh - attach (-p) to a process already running: what it
# allocated before is not reported, what it leaks after is, exactly; it
# exits mid-trace and heapsnoop writes the live set at that exit.
set -u
. "$(dirname "$0")/lib.sh"

coproc W { exec "$PROGS/prog_waiter"; }
wait_line "${W[0]}" '^ready ' || exit 1
pid=$W_PID
mkfifo "$T/errpipe"
"$HS" -q -p "$pid" > "$T/rec" 2> "$T/errpipe" &
hs=$!
exec 5< "$T/errpipe"
check "heapsnoop says it is tracing" wait_line 5 "^heapsnoop: tracing pid $pid" "$T/err"
cat <&5 >> "$T/err" &
drain=$!

echo "leak 7 1000" >&"${W[1]}"
wait_line "${W[0]}" '^done' || exit 1
echo "free-old" >&"${W[1]}"
wait_line "${W[0]}" '^done' || exit 1
echo "exit" >&"${W[1]}"
wait "$hs"
check "heapsnoop exits 0 when the target exits" test $? -eq 0
wait "$drain"

fold "$T/rec"
expect_eq "leaks after attach: bytes" "$(folded_sum "$T/rec.bytes" "main;after_attach_leak")" 7000
expect_eq "leaks after attach: count" "$(folded_sum "$T/rec.count" "main;after_attach_leak")" 7
expect_eq "allocations before attach not reported" \
	"$(folded_sum "$T/rec.count" "main;before_attach_leak")" 0
check "dump written at the target's exit" grep -q '^heapsnoop: dump reason=exit' "$T/rec"
check "map records before the live records" \
	awk '/^heapsnoop: map /{m=1} /^heapsnoop: live /{exit !m}' "$T/rec"
check_no_loss "no events lost" "$T/err"
finish
