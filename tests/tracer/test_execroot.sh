#!/bin/bash
# test_execroot.sh - launch mode probes the allocator of what the command
# execs, not heapsnoop's own C library: `chroot ROOT prog` into a root
# made here from copies of the host's libraries (other inodes, which is
# what uprobes go by) is traced exactly from the new image's first
# allocation; a static program through its own malloc, with no
# --allocator; --allocator as found in the exec'd image's root; an image
# with no allocator to find is said and exits 3 (never a silent empty
# run); the dynamic loader run as the program. -f: a child that chroots
# has its C library probed as it maps it (late: only what it does after
# is asserted); -p: an exec into the root, the same. About 25 s (a BPF
# load a run).
set -u
. "$(dirname "$0")/lib.sh"

# ROOT with copies of prog_waiter's libraries at their paths, and the
# program as /prog_waiter. With ODD, the C library is a file of another
# name (libmyc.so.1, libc.so.6 a link to it): one heapsnoop cannot know.
make_root() { # ROOT [ODD]
	local f d
	mkdir -p "$1" && cp "$PROGS/prog_waiter" "$1/" || return 1
	for f in $(ldd "$PROGS/prog_waiter" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
		d=$1$(dirname "$f")
		mkdir -p "$d" || return 1
		if [ -n "${2:-}" ] && [ "$(basename "$f")" = libc.so.6 ]; then
			cp -L "$f" "$d/libmyc.so.1" && ln -s libmyc.so.1 "$d/libc.so.6" || return 1
		else
			cp -L "$f" "$d/" || return 1
		fi
	done
}
R=$T/root ODD=$T/oddroot
make_root "$R" || { echo "FAIL cannot make $R"; exit 1; }
make_root "$ODD" odd || { echo "FAIL cannot make $ODD"; exit 1; }
LIBC=$(ldd "$PROGS/prog_waiter" | awk '$1 == "libc.so.6" { print $3 }')
INTERP=$(ldd "$PROGS/prog_waiter" | awk '$1 ~ /^\// { print $1 }')

# prog_waiter's leaks exactly, every live stack through its main.
exact_waiter() { # NAME RECORDS
	fold "$2"
	expect_eq "$1: the leak before its first line" \
		"$(folded_sum "$2.count" "main;before_attach_leak")" 8
	expect_eq "$1: its bytes" "$(folded_sum "$2.bytes" "main;before_attach_leak")" 7992
	expect_eq "$1: the leak asked for" "$(folded_sum "$2.count" "main;after_attach_leak")" 3
	expect_eq "$1: no live stack outside prog_waiter's main" \
		"$(grep -vc ';main;' "$2.count")" 0
}

# chroot ROOT /prog_waiter: the image in the root, its own C library.
printf 'leak 3 100\nexit\n' | "$HS" -q -- chroot "$R" /prog_waiter > "$T/c" 2> "$T/c.err"
check "chroot ROOT prog: exit 0" test $? -eq 0
exact_waiter "chroot ROOT prog" "$T/c"
check "chroot ROOT prog: says chroot's C library" \
	grep -q "^heapsnoop: pid [0-9]* execs .*/chroot: probing .*/libc.so.6: [0-9]* allocator functions$" "$T/c.err"
check "chroot ROOT prog: says the root's, as it changes" \
	grep -q "^heapsnoop: pid [0-9]* execs $R/prog_waiter: probing $R$LIBC: [0-9]* allocator functions$" "$T/c.err"
check "chroot ROOT prog: the root's C library is written as a mapping" \
	grep -q "^heapsnoop: map pid=[0-9]* .* path=$R$LIBC$" "$T/c"
check_no_loss "chroot ROOT prog: no events lost" "$T/c.err"

# The dynamic loader run as the program: the C library it maps.
printf 'leak 3 100\nexit\n' | "$HS" -q -- "$R$INTERP" "$R/prog_waiter" \
	> "$T/ld" 2> "$T/ld.err"
check "ld.so PROG: exit 0" test $? -eq 0
exact_waiter "ld.so PROG" "$T/ld"

# A static program: its own malloc, said, no --allocator needed.
"$HS" -q -- "$PROGS/prog_static" > "$T/s" 2> "$T/s.err"
check "static program: exit 0" test $? -eq 0
fold "$T/s"
expect_eq "static program: its leak" "$(folded_sum "$T/s.count" "main;static_leak")" 4
expect_eq "static program: its bytes" "$(folded_sum "$T/s.bytes" "main;static_leak")" 200
check "static program: said" grep -q "execs $PROGS/prog_static: probing its own malloc, statically linked" "$T/s.err"

# --allocator, found in the exec'd image's own root; chroot has none in
# its root (/): its own C library instead, said.
printf 'leak 3 100\nexit\n' | "$HS" -q --allocator "${LIBC%/*}/libmyc.so.1" -- \
	chroot "$ODD" /prog_waiter > "$T/a" 2> "$T/a.err"
check "--allocator in the root: exit 0" test $? -eq 0
exact_waiter "--allocator in the root" "$T/a"
check "--allocator in the root: said, with the root" \
	grep -q "execs $ODD/prog_waiter: probing --allocator $ODD${LIBC%/*}/libmyc.so.1: " "$T/a.err"
check "--allocator not in chroot's root: its C library instead, said" \
	grep -q "execs .*/chroot: --allocator ${LIBC%/*}/libmyc.so.1 is not in its root (/): probing its own allocator instead" "$T/a.err"

# No allocator to find: said as it happens, counted, exit status 3.
printf 'leak 3 100\nexit\n' | "$HS" -q -- chroot "$ODD" /prog_waiter > "$T/n" 2> "$T/n.err"
check "no C library known: exit 3" test $? -eq 3
check "no C library known: said, with what to do" \
	grep -q "^heapsnoop: pid [0-9]* execs $ODD/prog_waiter: NOT TRACED: its dynamic loader mapped no C library .*--allocator" "$T/n.err"
check "no C library known: counted at the end" grep -q "^heapsnoop: IMAGES NOT TRACED: 1 " "$T/n.err"
if command -v strip > /dev/null; then
	strip -o "$T/static_stripped" "$PROGS/prog_static"
	"$HS" -q -- "$T/static_stripped" > /dev/null 2> "$T/ss.err"
	check "static, stripped: exit 3" test $? -eq 3
	check "static, stripped: said, with what to do" \
		grep -q "execs $T/static_stripped: NOT TRACED: statically linked, with no malloc and free symbols.*--allocator" "$T/ss.err"
fi

# -f: a child that chroots. Its C library is probed once the kernel's
# mapping record names it (said); what it leaks after that is exact.
mkfifo "$T/ferr"
coproc F { exec "$HS" -q -f --leaks-at-exit -o "$T/f" -- sh -c "chroot '$R' /prog_waiter; true" 2> "$T/ferr"; }
hs=$F_PID
exec 5< "$T/ferr"
wait_line "${F[0]}" '^ready ' || exit 1
wait_line 5 "^heapsnoop: pid [0-9]* maps $R$LIBC, a C library not probed before: probed now" "$T/f.err" || exit 1
cat <&5 >> "$T/f.err" &
echo "leak 3 100" >&"${F[1]}"
wait_line "${F[0]}" '^done' || exit 1
echo exit >&"${F[1]}"
wait "$hs"
check "-f, a child that chroots: exit 0" test $? -eq 0
fold "$T/f"
expect_eq "-f, a child that chroots: its leak after the probe" \
	"$(folded_sum "$T/f.count" "main;after_attach_leak")" 3
check "-f, a child that chroots: in its exit section" \
	grep -q "^heapsnoop: end-exit pid=[0-9]* live=" "$T/f"
check "-f: the late probe counted at the end" \
	grep -q "^heapsnoop: 1 C libraries were probed only once a traced process had mapped them" "$T/f.err"
exec 5<&-

# -p: the process attached to execs into the root; the same.
coproc W { exec bash -c "read -r go; exec chroot '$R' /prog_waiter"; }
pid=$W_PID
mkfifo "$T/perr" "$T/prec"
"$HS" -q -p "$pid" > "$T/prec" 2> "$T/perr" &
hs=$!
exec 6< "$T/prec" 5< "$T/perr"	# the order heapsnoop opens them
wait_line 5 "^heapsnoop: tracing pid $pid" "$T/p.err" || exit 1
echo go >&"${W[1]}"
wait_line "${W[0]}" '^ready ' || exit 1
wait_line 5 "^heapsnoop: pid $pid maps $R$LIBC, a C library not probed before: probed now" "$T/p.err" || exit 1
cat <&5 >> "$T/p.err" &
echo "leak 3 100" >&"${W[1]}"
wait_line "${W[0]}" '^done' || exit 1
# No exit stop with -p: a dump takes every event before the process ends.
kill -USR1 "$hs"
wait_line 6 '^heapsnoop: end-dump' "$T/p" || exit 1
cat <&6 >> "$T/p" &
echo exit >&"${W[1]}"
wait "$hs"
check "-p, then exec into the root: exit 0" test $? -eq 0
fold "$T/p"
expect_eq "-p, then exec into the root: the leak after the probe" \
	"$(folded_sum "$T/p.count" "main;after_attach_leak")" 3
finish
