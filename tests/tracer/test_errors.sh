#!/bin/bash
# test_errors.sh - bad input gets a clear error: no such pid, no such
# command, a 32-bit program, no privileges, bad options.
set -u
. "$(dirname "$0")/lib.sh"

# A pid that cannot exist (above pid_max).
"$HS" -p 99999999 > /dev/null 2> "$T/e1"
check "no such pid: exit 1" test $? -eq 1
check "no such pid: says so" grep -q "no process with pid 99999999" "$T/e1"

"$HS" -- /nonexistent/cmd > /dev/null 2> "$T/e2"
check "no such command: exit 1" test $? -eq 1
check "no such command: says so" grep -q "cannot run /nonexistent/cmd" "$T/e2"

# A 32-bit program (ELFCLASS32: /bin/true's header says so) was traced as
# empty with exit 0: refused, before it runs, saying why.
cp /bin/true "$T/true32" && printf '\001' | dd of="$T/true32" bs=1 seek=4 conv=notrunc 2> /dev/null
"$HS" -- "$T/true32" > /dev/null 2> "$T/e32"
check "32-bit program: exit 1" test $? -eq 1
check "32-bit program: says why and what to do" \
	grep -q "true32 is not an x86-64 program (32-bit.*trace a 64-bit build of it" "$T/e32"

# A static binary, through its own malloc named by --allocator (without
# it, found at its exec: test_execroot.sh).
"$HS" -q --allocator "$PROGS/prog_static" -- "$PROGS/prog_static" > "$T/rec" 2> "$T/e4"
check "static binary with --allocator: exit 0" test $? -eq 0
"$HD" --folded --count "$T/rec" > "$T/rec.count"
expect_eq "static binary: its leak is seen" "$(folded_sum "$T/rec.count" "main;static_leak")" 4

if command -v setpriv > /dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$HS" -- /bin/true > /dev/null 2> "$T/e5"
	check "unprivileged: exit 1" test $? -eq 1
	check "unprivileged: says what to do" grep -q "CAP_BPF and CAP_PERFMON" "$T/e5"
fi

# Interpreter frames: a kind heapsnoop does not know; -a, which reads none.
"$HS" --interp python,perl -- /bin/true > /dev/null 2> "$T/ei"
check "--interp perl: exit 1, the kinds there are" \
	bash -c "test $? -eq 1 && grep -q \"\\--interp 'perl': give python, lua (a comma list), or none\" '$T/ei'"
"$HS" -a --interp python -o /dev/null > /dev/null 2> "$T/ea"
check "-a --interp: exit 1, why" \
	bash -c "test $? -eq 1 && grep -q -- '--interp goes with -p or a command' '$T/ea'"

"$HS" > /dev/null 2> "$T/e6"
check "nothing to trace: exit 1 with usage hint" \
	bash -c "test $? -eq 1 && grep -q 'give -p PID, -a or -- COMMAND' '$T/e6'"
"$HS" -a -p 1 > /dev/null 2> "$T/e8"
check "-a with -p: exit 1, says so" \
	bash -c "test $? -eq 1 && grep -q 'not several' '$T/e8'"
"$HS" --leaks-at-exit -- /bin/true > /dev/null 2> "$T/e9"
check "--leaks-at-exit without -a: exit 1, says why" \
	bash -c "test $? -eq 1 && grep -q 'goes with -a' '$T/e9'"
"$HS" -a --comm 0123456789abcdefg > /dev/null 2> "$T/e10"
check "--comm longer than the kernel keeps: exit 1, says so" \
	bash -c "test $? -eq 1 && grep -q '1 to 15 characters' '$T/e10'"
"$HS" -a --min-size 100 --max-size 10 > /dev/null 2> "$T/e11"
check "--min-size above --max-size: exit 1, says so" \
	bash -c "test $? -eq 1 && grep -q 'nothing would be traced' '$T/e11'"
"$HS" --ringbuf-size 3 -- /bin/true > /dev/null 2> "$T/e7"
check "bad ring buffer size: exit 1" test $? -eq 1
# Every option value is checked, with a message naming it.
bad_value() { # WHAT MESSAGE_REGEX ARGS...
	local what=$1 re=$2; shift 2
	"$HS" "$@" > /dev/null 2> "$T/ebad"
	check "$what: exit 1" test $? -eq 1
	check "$what: says why" grep -Eq "$re" "$T/ebad"
}
bad_value "-p 0" "invalid pid '0' \(expected a whole number from 1 to" -p 0
bad_value "-i 0" "invalid interval \(seconds\) '0'" -i 0 -- /bin/true
bad_value "--min-size -1" "invalid size '-1'" --min-size -1 -- /bin/true
bad_value "--max-size ' 7'" "invalid size ' 7'" --max-size ' 7' -- /bin/true
bad_value "--ringbuf-size 4096 (2^32 bytes overflow the kernel's 32 bits)" \
	"invalid ring buffer size \(MiB\) '4096' \(expected a whole number from 1 to 2048\)" \
	--ringbuf-size 4096 -- /bin/true
bad_value "--pid-filter 1,0" "invalid pid '0'" -a --pid-filter 1,0
bad_value "-s0" "invalid summary count '0'" -s0 -- /bin/true
# --empty-probes takes no value or =read (bench/progcost.sh's floors).
"$HS" --empty-probes=all -- true > /dev/null 2> "$T/e_empty"
check "--empty-probes=all: exit 1" test $? -eq 1
check "--empty-probes=all: names the choices" grep -q "give no value, or read" "$T/e_empty"

finish
