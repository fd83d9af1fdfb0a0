#!/bin/bash
# test_user.sh - -u USER: the command runs as USER, with USER's groups,
# HOME, USER and LOGNAME, while heapsnoop keeps root and traces it. About
# 3 s (two BPF loads).
set -u
. "$(dirname "$0")/lib.sh"

chmod 755 "$T"	# nobody writes nothing here; heapsnoop (root) does
want_groups=$(id -G nobody)
HOME=/root USER=root LOGNAME=root "$HS" -q -u nobody -o "$T/rec" -- \
	sh -c 'id -u; id -g; id -G; echo "$HOME $USER $LOGNAME"' > "$T/out" 2> "$T/err"
check "-u nobody: exit 0" test $? -eq 0
expect_eq "-u nobody: the command's uid" "$(sed -n 1p "$T/out")" 65534
expect_eq "-u nobody: its gid" "$(sed -n 2p "$T/out")" "$(id -g nobody)"
expect_eq "-u nobody: its groups, and only those" "$(sed -n 3p "$T/out")" "$want_groups"
expect_eq "-u nobody: HOME, USER, LOGNAME" "$(sed -n 4p "$T/out")" "/nonexistent nobody nobody"
check "-u nobody: the records are written (by root, mode 0600)" \
	test "$(stat -c '%U %a' "$T/rec")" = "root 600"

printf 'leak 3 100\nexit\n' | "$HS" -q -u 65534 -o "$T/w" -- "$PROGS/prog_waiter" > /dev/null 2>&1
check "-u 65534 (a uid): exit 0" test $? -eq 0
fold "$T/w"
expect_eq "-u: the command is traced" "$(folded_sum "$T/w.count" "main;after_attach_leak")" 3

"$HS" -u no-such-user-here -- /bin/true > /dev/null 2> "$T/e1"
check "-u unknown: exit 1" test $? -eq 1
check "-u unknown: says so" grep -q -- "-u no-such-user-here: no such user" "$T/e1"
"$HS" -u nobody -a > /dev/null 2> "$T/e2"
check "-u without a command: exit 1, says so" \
	bash -c "test $? -eq 1 && grep -q 'goes with a command' '$T/e2'"
finish
