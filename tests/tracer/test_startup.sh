#!/bin/bash
# test_startup.sh - what makes a run start and end fast (issue 32) keeps
# every record: a command that can run no interpreter gets no walker
# loaded (interp/reach.h), and the same records as with the walkers asked
# for; one that may (env, a Python behind env) gets them, and its Python
# frames; LD_PRELOAD loads them too. The allocator probes are multi-uprobe
# links where the kernel has them (attach/umulti.h), and none of them
# is left once heapsnoop has exited. The wall times are bench/startup.sh's.
set -u
. "$(dirname "$0")/lib.sh"

"$HS" -v -o "$T/bare" -- "$PROGS/prog_semantics" > /dev/null 2> "$T/bare.err"
check "a command that runs no interpreter: exits 0" test $? -eq 0
check "... -v: no walker loaded, and why" grep -qF \
	"interpreter frames: no walker loaded: $PROGS/prog_semantics can run no interpreter" \
	"$T/bare.err"
"$HS" -v --interp python,lua -o "$T/asked" -- "$PROGS/prog_semantics" > /dev/null 2> "$T/asked.err"
check "--interp python,lua: exits 0" test $? -eq 0
check "... loads the walkers all the same (no line saying otherwise)" \
	test "$(grep -c 'no walker loaded' "$T/asked.err")" -eq 0
fold "$T/bare"; fold "$T/asked"
check "the same live bytes per stack with and without the walkers" \
	cmp -s "$T/bare.bytes" "$T/asked.bytes"
check "the same live counts per stack" cmp -s "$T/bare.count" "$T/asked.count"
expect_semantics "$T/bare"
check_no_loss "no events lost" "$T/bare.err"

"$HS" -v -o /dev/null -- /usr/bin/env "$PROGS/prog_semantics" > /dev/null 2> "$T/env.err"
check "env, which may exec an interpreter: walkers loaded, said why" grep -qF \
	"interpreter frames: walkers loaded: /usr/bin/env may run an interpreter (it imports execvp)" \
	"$T/env.err"
LD_PRELOAD=$(gcc -print-file-name=libm.so.6) "$HS" -v -o /dev/null -- "$PROGS/prog_semantics" \
	> /dev/null 2> "$T/pre.err"
check "LD_PRELOAD set: walkers loaded" grep -qF "(LD_PRELOAD or LD_AUDIT is set)" "$T/pre.err"

PY=/usr/bin/python3.11
if [ -x "$PY" ]; then
	"$HS" -q -o "$T/py" -- /usr/bin/env "$PY" -c 'x = [bytearray(1000) for _ in range(10)]' \
		> /dev/null 2> "$T/py.err"
	check "python behind env: exits 0" test $? -eq 0
	check "... its frames are read" grep -q "runs Python 3\.[0-9.]* (.*): its frames are read" \
		"$T/py.err"
else
	echo "skip python behind env: no $PY"
fi

# The links of a run that waits (prog_waiter), read from heapsnoop's
# descriptors, then looked for once it has exited.
if grep -q 'multi-uprobe links *yes' "$T/bare.err"; then
	coproc W { exec "$HS" -q -o /dev/null -- "$PROGS/prog_waiter" 2> /dev/null; }
	hs=$W_PID
	wait_line "${W[0]}" '^ready' > /dev/null
	links= nret=0 nent=0
	for f in /proc/"$hs"/fdinfo/*; do
		type=$(sed -n 's/^link_type:[[:space:]]*//p' "$f" 2> /dev/null)
		case $type in
		uprobe_multi) nent=$((nent + 1)) ;;
		uretprobe_multi) nret=$((nret + 1)) ;;
		*) continue ;;
		esac
		links="$links $(sed -n 's/^link_id:[[:space:]]*//p' "$f")"
	done
	expect_eq "glibc's returns: one multi-uprobe link" "$nret" 1
	check "glibc's entries: one link a program, free's and malloc's at least ($nent)" \
		test "$nent" -ge 2
	echo exit >&"${W[1]}"
	wait "$hs"
	check "heapsnoop exits 0" test $? -eq 0
	left=0
	for id in $links; do
		bpftool link show id "$id" > /dev/null 2>&1 && left=$((left + 1))
	done
	expect_eq "none of its links left once it has exited" "$left" 0
else
	echo "skip the links: this kernel has no multi-uprobe links"
fi
finish
