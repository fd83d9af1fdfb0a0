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

# A copy uid 65534 can run: the checkout may be where it cannot go
# (a clone in root's own home, mode 0700, as on a fresh machine).
cp "$PROGS/prog_waiter" "$T/prog_waiter"
printf 'leak 3 100\nexit\n' | "$HS" -q -u 65534 -o "$T/w" -- "$T/prog_waiter" > /dev/null 2>&1
check "-u 65534 (a uid): exit 0" test $? -eq 0
fold "$T/w"
expect_eq "-u: the command is traced" "$(folded_sum "$T/w.count" "main;after_attach_leak")" 3

"$HS" -u no-such-user-here -- /bin/true > /dev/null 2> "$T/e1"
check "-u unknown: exit 1" test $? -eq 1
check "-u unknown: says so" grep -q -- "-u no-such-user-here: no such user" "$T/e1"
"$HS" -u 4242424 -- /bin/true > /dev/null 2> "$T/e3"
check "-u an unknown uid: exit 1, says so" \
	bash -c "test $? -eq 1 && grep -q -- '-u 4242424: no such uid' '$T/e3'"

# heapsnoop is linked static: it looks users up through getent(1), else in
# /etc/passwd and /etc/group themselves, never through the C library's NSS
# (user/tracer/attach/userdb.c). In a mount namespace of their own, a
# passwd and a group file with a user hsu1 (uid 4242) in two groups
# besides its own, bind-mounted over the real ones; coreutils' id, through
# glibc's NSS, says what its groups are.
cp /etc/passwd "$T/passwd" && cp /etc/group "$T/group"
echo 'hsu1:x:4242:4242:heapsnoop test:/home/hsu1:/bin/sh' >> "$T/passwd"
printf '%s\n' hsu1:x:4242: hsg1:x:4243:hsu1 hsg2:x:4244:other,hsu1 hsg3:x:4245:other >> "$T/group"
# As another user, in that namespace: "uid gid groups HOME", or heapsnoop's
# error. GETENT: as is, hidden (/dev/null over it, which cannot run) or
# replaced by a script answering for one more user only it knows.
as_user() { # NAME USER GETENT
	unshare -m --propagation private bash -c '
		mount --bind "$1/passwd" /etc/passwd && mount --bind "$1/group" /etc/group || exit 99
		case $4 in
		hidden) mount --bind /dev/null "$(command -v getent)" || exit 99 ;;
		script) mount --bind "$1/getent" "$(command -v getent)" || exit 99 ;;
		esac
		"$2" -q -u "$3" -o /dev/null -- sh -c '\''echo $(id -u) $(id -g) $(id -G) $HOME'\'' \
			> "$1/$5.out" 2> "$1/$5.err"' - "$T" "$HS" "$2" "$3" "$1"
}
as_user files hsu1 as-is
want=$(unshare -m --propagation private bash -c 'mount --bind "$1/passwd" /etc/passwd &&
	mount --bind "$1/group" /etc/group && id -G hsu1' - "$T")
expect_eq "id (NSS) sees hsu1 in its groups" "$want" "4242 4243 4244"
expect_eq "-u hsu1 (getent): uid, gid, groups of /etc/group, HOME" \
	"$(cat "$T/files.out")" "4242 4242 $want /home/hsu1"
as_user hidden hsu1 hidden
expect_eq "-u hsu1 without getent (/etc/passwd, /etc/group read)" \
	"$(cat "$T/hidden.out")" "4242 4242 $want /home/hsu1"
as_user hidden_uid 4242 hidden
expect_eq "-u 4242 without getent (a uid)" "$(cat "$T/hidden_uid.out")" "4242 4242 $want /home/hsu1"
as_user hidden_unknown hsu2 hidden
check "-u unknown without getent: says only /etc/passwd was read, what to install" \
	grep -q -- "-u hsu2: no such user in /etc/passwd (getent is not installed.*libc-bin" \
	"$T/hidden_unknown.err"
# A user only getent knows (as one of LDAP or sssd would be): a script in
# getent's place answers for hsu2 (uid 4343, in hsg1 and a group no file
# names); -u takes getent's word over the files.
cat > "$T/getent" <<-'EOF'
	#!/bin/sh
	case "$1 $2" in
	"passwd hsu2") echo 'hsu2:x:4343:4242::/home/hsu2:/bin/sh' ;;
	"initgroups hsu2") echo 'hsu2   4243 4999' ;;
	*) exit 2 ;;
	esac
	EOF
chmod 755 "$T/getent"
as_user script hsu2 script
expect_eq "-u hsu2, a user only getent knows: its uid, gid, groups" \
	"$(cat "$T/script.out")" "4343 4242 4242 4243 4999 /home/hsu2"
"$HS" -u nobody -a > /dev/null 2> "$T/e2"
check "-u without a command: exit 1, says so" \
	bash -c "test $? -eq 1 && grep -q 'goes with a command' '$T/e2'"
finish
