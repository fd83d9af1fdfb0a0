#!/bin/bash
# test_preload_embedded.sh - `heapsnoop --preload` with only the heapsnoop
# binary at hand (a copy alone in a directory, no libheapsnoop_preload.so
# beside it or in ../lib): the collector embedded in it, written to a
# sealed memfd that heapsnoop keeps and names /proc/HEAPSNOOP_PID/fd/N,
# traces prog_semantics and prog_collect as test_preload.sh expects, and
# the programs the command executes too (one exec'd as another user
# cannot open it: said, exit 3); the program sees no fd of it; without
# /proc (a mount namespace without it), through a private file that is
# gone afterwards; the library beside heapsnoop reaches a command in
# another root (chroot). ~2 s.
set -u
. "$(dirname "$0")/../tracer/lib.sh"
PC=$PROGS/prog_collect
mkdir -p "$T/alone/bin" "$T/work"
cp "$HS" "$T/alone/bin/heapsnoop"
ALONE=$T/alone/bin/heapsnoop
cd "$T/work" || exit 1

"$ALONE" --preload -o "$T/sem" -- "$PROGS/prog_semantics" > /dev/null 2> "$T/sem.err"
check "embedded: heapsnoop --preload exits 0" test $? -eq 0
check "embedded: nothing said" test ! -s "$T/sem.err"
fold "$T/sem"
expect_semantics "$T/sem"
check "embedded: stacks reach _start, the call site first" \
	grep -q '^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_malloc_leak 300$' "$T/sem.bytes"

"$ALONE" --preload -o "$T/deep" -- "$PC" deep 26 > /dev/null 2>&1
fold "$T/deep"
expect_eq "embedded: 31 frames, whole, to _start" \
	"$(grep -cE '^_start;__libc_start_main[^;]*;__libc_start_call_main;main;case_deep;(deep_recurse;){25}deep_recurse 1234$' "$T/deep.bytes")" 1

"$ALONE" --preload -o "$T/al" -- "$PC" align > "$T/al.stdout" 2> /dev/null
check "embedded: every aligned pointer aligned" grep -qx 'ok align' "$T/al.stdout"
fold "$T/al"
for f in align_posix align_aligned_alloc align_memalign; do
	expect_eq "embedded: $f live bytes" "$(folded_sum "$T/al.bytes" "case_align;$f")" 8185
done

"$ALONE" --preload -o "$T/fork" -- "$PC" fork > /dev/null 2>&1
expect_eq "embedded: fork, the child's exit section and the parent's dump" \
	"$(sed -n 's/^heapsnoop: \(exit\|dump\) .*/\1/p' "$T/fork" | tr '\n' ' ')" "exit dump "
fold "$T/fork"
expect_eq "embedded: fork, both hold the 111 bytes from before it" \
	"$(folded_sum "$T/fork.bytes" "main;case_fork")" 222
expect_eq "embedded: fork, the child's 222, the parent's 333" \
	"$(grep -cE 'case_fork;(fork_child_alloc 222|fork_parent_alloc 333)$' "$T/fork.bytes")" 2

# The programs the command executes load it too: by its name, which lives
# as long as heapsnoop, which waits for every one of them.
"$ALONE" --preload -o "$T/ex" -- sh -c "'$PC' deep 3 > /dev/null; exec '$PC' deep 4" > /dev/null 2>&1
check "embedded: exec'd, exit 0" test $? -eq 0
fold "$T/ex"
expect_eq "embedded: a program sh ran and the one it exec'd, both traced" \
	"$(grep -cE '^_start;(.*;)?main;case_deep;(deep_recurse;){2,3}deep_recurse 1234$' "$T/ex.bytes")" 2

# A program exec'd as another user cannot open heapsnoop's /proc/PID/fd/N
# (ld.so ignores the preload): said, exit status 3; the library as a
# file beside heapsnoop keeps it traced (test_death.sh runs that one).
# The program, and heapsnoop with the library beside it, copied where uid
# 65534 can run and read them: the checkout may be where it cannot go (a
# clone in root's own home, mode 0700, as on a fresh machine).
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null; then
	chmod 711 "$T" && mkdir -m 755 "$T/pub" && cp "$PC" "$HS" "$OUT/libheapsnoop_preload.so" "$T/pub/" &&
		chmod 711 "$T/alone" "$T/alone/bin" || exit 1
	"$ALONE" --preload -o "$T/su" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$T/pub/prog_collect" deep 3 > /dev/null 2> "$T/su.err"
	expect_eq "embedded, exec'd as another user: exit status 3" "$?" 3
	check "embedded, exec'd as another user: NOT TRACED said, with why" \
		grep -q 'another user.*NOT TRACED' "$T/su.err"
	"$T/pub/heapsnoop" --preload -o "$T/suf" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$T/pub/prog_collect" deep 3 > /dev/null 2> "$T/suf.err"
	expect_eq "the library a file, exec'd as another user: exit 0" "$?" 0
	fold "$T/suf"
	expect_eq "the library a file, exec'd as another user: traced" \
		"$(grep -cE 'main;case_deep;(deep_recurse;){2}deep_recurse 1234$' "$T/suf.bytes")" 1
else
	echo "skip exec'd as another user: needs root and setpriv"
fi

# A command that enters another root (chroot): the host's path to the
# library beside heapsnoop means nothing there, its descriptor's name
# through heapsnoop's /proc does (the root's own /proc: bound from ours).
# The root: the program, and the C library and loader it links, alone.
if [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null; then
	[ -d "$T/pub" ] || { mkdir -m 755 "$T/pub" && cp "$PC" "$HS" "$OUT/libheapsnoop_preload.so" "$T/pub/"; } || exit 1
	R=$T/root
	mkdir -p "$R/proc" "$R/bin" && cp "$PC" "$R/bin/" || exit 1
	for lib in $(ldd "$PC" "$OUT/libheapsnoop_preload.so" | grep -o '/[^ :]*' | grep -v "^$OUT"); do
		mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib" || exit 1
	done
	"$T/pub/heapsnoop" --preload -o "$T/root.heap" -- unshare -m sh -c \
		"mount --bind /proc '$R/proc' && exec chroot '$R' /bin/prog_collect deep 3" \
		> "$T/root.stdout" 2> "$T/root.err"
	expect_eq "the library a file, a command in another root: exit 0" "$?" 0
	check "another root: the program ran" grep -qx 'ok deep' "$T/root.stdout"
	expect_eq "another root: traced, by the descriptor" "$("$HD" --folded --sysroot "$R" "$T/root.heap" 2> /dev/null |
		grep -cE 'main;case_deep;(deep_recurse;){2}deep_recurse 1234$')" 1
else
	echo "skip another root: needs root and unshare"
fi

# The program's fds: as many as without the collector, none for the
# memfd (heapsnoop keeps it); LD_PRELOAD names it through heapsnoop's /proc.
"$PC" fds > "$T/fds.want"
"$ALONE" --preload -o "$T/fds" -- "$PC" fds > "$T/fds.got" 2> /dev/null
expect_eq "embedded: no fd left to the program" "$(grep '^fds' "$T/fds.got")" "$(grep '^fds' "$T/fds.want")"
check "embedded: LD_PRELOAD names heapsnoop's memfd" grep -qE '^preload /proc/[0-9]+/fd/[0-9]+$' "$T/fds.got"
fold "$T/fds"
expect_eq "embedded: the program's 999 bytes" "$(folded_sum "$T/fds.bytes" "main;case_fds")" 999

# No /proc: a private file under TMPDIR, removed by the collector.
if [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null; then
	mkdir -p "$T/tmp"
	TMPDIR=$T/tmp unshare -m sh -c "umount -l /proc && exec '$ALONE' --preload -o '$T/np' -- '$PC' deep 5" \
		> "$T/np.stdout" 2> "$T/np.err"
	check "no /proc: the program ran" grep -qx 'ok deep' "$T/np.stdout"
	fold "$T/np"
	check "no /proc: collected" grep -q 'main;case_deep;(deep_recurse;)*deep_recurse 1234$\|deep_recurse 1234$' "$T/np.bytes"
	expect_eq "no /proc: the private file is gone" "$(find "$T/tmp" -mindepth 1 | wc -l)" 0
else
	echo "skip no /proc: needs root and unshare"
fi
finish
