#!/bin/bash
# test_preload_python.sh - Python frames under heapsnoop --preload
# (docs/COLLECTOR.md, "Python frames"): the collector reads the frames in
# the process, heapsnoop names them, on Debian's real interpreter,
# /usr/bin/python3.11 (HS_PYTHON names another), with test_python.sh's
# scripts (tests/tracer/py) and plcounts.py:
#   a known chain across two files, each function at its file:line in
#     order, native frames before and after, no eval frame left, ending by
#     os._exit (chain_a.py); the eval loop re-entered from C three ways
#     (interleave.py); 60 Python frames deep, whole (deep.py); exact
#     counts of blocks of known sizes under their chains (plcounts.py);
#     a forked child's, in its exit section (plfork.py); a Python that
#     ended before heapsnoop took its hello (plquick.py);
#     code exec()'d again and again, each frame named after the code that
#     ran, none "<code gone>" (execloop.py); a thread that released the
#     GIL (threads.py);
#   kill -9 of a running one (server.py): its blocks' names, files and
#     lines in the log all the same; the log read with the scripts gone;
#   -s: the headline names leakhold.py's remember <- handle, the freed
#     heap of heapfreed.py said with its peak;
#   --no-interp: native frames only, PYTHONMALLOC left alone; a
#     PYTHONMALLOC the user set, left alone;
#   the collector alone (LD_PRELOAD by hand): native frames only;
#   the other builds where they are (pylib.sh's other_pythons:
#     python-build-standalone's 3.12, clang, no .symtab; pyenv's 3.12.1
#     and 3.13.0), trixie's python3.13 and forky's python3.14 in their
#     roots (chroot, as root), free-threaded 3.14 and 3.13 built from
#     Debian's source (tests/tracer/make-python.sh, made if missing; in
#     them each block is malloc through ctypes: pyalloc.py): the chain,
#     re-entered, 60 deep, a thread (pyenv's: the chain), each Python's
#     frames read by the layout of its version (3.12: the table's; 3.13
#     and 3.14: their own _Py_DebugOffsets), no stack cut=order;
#     pyenv's 3.10.13 said not read (before 3.11); "skipped: no ..." for
#     each one absent.
# No BPF: runs as any user (the root's 3.13: as root). ~12 s; the other
# builds here 62 s more (pyenv's DWARF: 8 s a heapdecode -s).
set -u
. "$(dirname "$0")/../tracer/lib.sh"
. "$(dirname "$0")/../tracer/pylib.sh"
. "$(dirname "$0")/pllib.sh"
PY=${HS_PYTHON:-/usr/bin/python3.11}
SCRIPTS=$(cd "$(dirname "$0")/../tracer/py" && pwd)
COUNTS=$(cd "$(dirname "$0")/py" && pwd)/plcounts.py
FORK=$(cd "$(dirname "$0")/py" && pwd)/plfork.py
QUICK=$(cd "$(dirname "$0")/py" && pwd)/plquick.py
[ -x "$PY" ] || { echo "FAIL $PY is not there: scripts/install-deps.sh installs Debian's python3.11"; exit 1; }
echo "python: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"

CHAIN="f5 chain_a.py:20, f4 chain_b.py:11, f3 chain_a.py:16, f2 chain_b.py:7, f1 chain_a.py:12, main chain_a.py:24"
DEEP="rec deep.py:10$(for _ in $(seq 57); do printf ', rec deep.py:11'; done), main deep.py:15"

# How many of LOG's live blocks of SIZE bytes have WANT as their Python frames.
count_under() { # LOG SIZE WANT
	stacks_of "$1" "$2" | awk -v want="$3" '$1 == "py" { s = s (n++ ? ", " : "") substr($0, 4) }
		/^--$/ { k += s == want; s = ""; n = 0 } END { print k + 0 }'
}

cd "$SCRIPTS" || exit 1
"$HS" --preload -v -o "$T/chain" -- "$PY" chain_a.py > "$T/chain.out" 2> "$T/chain.err"
check "chain: heapsnoop exits with python's status (0, after os._exit)" test $? -eq 0
check "chain: PYTHONMALLOC=malloc for the command" \
	grep -q "PYTHONMALLOC=malloc for the command" "$T/chain.err"
PYV=$("$PY" -c 'import sys; print(sys.version.split()[0])')
check "chain: it says it names Python $PYV's frames" \
	grep -q "pid [0-9]*: Python ${PYV//./\\.}, its frames read by its collector" "$T/chain.err"
stack_of "$T/chain" 777778 > "$T/chain.stack"
expect_chain "chain" "$T/chain.stack" "$CHAIN, <module> chain_a.py:30"
check "chain: the dump names its frames (frame records, kind=python)" \
	grep -q '^heapsnoop: frame pid=[0-9]* addr=0x4[0-9a-f]* kind=python line=20 file=.*chain_a\.py function=f5$' \
	"$T/chain"
check "chain: no frame <code gone>, no NOT RECORDED" \
	bash -c "! '$HD' -s '$T/chain' | grep -q '<code gone>' && ! grep -q 'NOT RECORDED\|code gone' '$T/chain.err'"

"$HS" --preload -o "$T/inter" -- "$PY" interleave.py > /dev/null 2> "$T/inter.err"
expect_reentered "$T/inter"

"$HS" --preload -o "$T/deep" -- "$PY" deep.py > /dev/null 2> "$T/deep.err"
stack_of "$T/deep" 666667 > "$T/deep.stack"
expect_chain "60 frames deep" "$T/deep.stack" "$DEEP, <module> deep.py:19"
check "60 frames deep: the stack is whole (no cut=)" \
	bash -c "'$HD' -s '$T/deep' | grep '^heapsnoop: live .*~b#size: 666667,' | grep -vq 'cut='"

"$HS" --preload -o "$T/counts" -- "$PY" "$COUNTS" > "$T/counts.out" 2> "$T/counts.err"
check "counts: heapsnoop exits 0" test $? -eq 0
expect_eq "counts: 100 bytearrays' buffers (54322 bytes) under leaf <- middle <- run <- <module>" \
	"$(count_under "$T/counts" 54322 "leaf plcounts.py:13, middle plcounts.py:17, run plcounts.py:26, <module> plcounts.py:31")" 100
expect_eq "counts: 50 bytes objects (4033 bytes) under make_bytes <- run <- <module>" \
	"$(count_under "$T/counts" 4033 "make_bytes plcounts.py:21, run plcounts.py:28, <module> plcounts.py:31")" 50
expect_eq "counts: no other block of those sizes" \
	"$("$HD" -s "$T/counts" | grep -c '^heapsnoop: live .*~b#size: \(54322\|4033\),')" 150

# A forked child: its own table, a copy of its parent's (the code objects'
# records too), its exit section named as the parent's final dump.
"$HS" --preload -o "$T/fork" -- "$PY" "$FORK" > /dev/null 2> "$T/fork.err"
check "fork: heapsnoop exits 0" test $? -eq 0
expect_eq "fork: the child's 3 blocks (33334 bytes) in its exit section under child_leaf <- child_main <- <module>" \
	"$(count_under "$T/fork" 33334 "child_leaf plfork.py:15, child_main plfork.py:20, <module> plfork.py:26")" 3
expect_eq "fork: the parent's block (22223 bytes) under parent_leaf <- <module>" \
	"$(count_under "$T/fork" 22223 "parent_leaf plfork.py:31, <module> plfork.py:34")" 1
check "fork: no stack cut=order, no frame <code gone>" \
	bash -c "! grep -q 'cut=.*order' '$T/fork' && ! '$HD' -s '$T/fork' | grep -q '<code gone>'"

# A Python that ended before heapsnoop took its hello (heapsnoop stopped
# meanwhile): its binary by its table's module records, its frames by the
# table's records, as if it had been seen running.
ended_first "$T/late" '^done' "$PY" "$QUICK"
expect_eq "ended first: its block under quick_leaf <- <module>" \
	"$(count_under "$T/late" 44445 "quick_leaf plquick.py:10, <module> plquick.py:13")" 1
check "ended first: its frames not said unnamed, no cut=order" \
	bash -c "! grep -q 'not named' '$T/late.err' && ! grep -q 'cut=.*order' '$T/late'"

# Each exec'd code object dies at once and the next takes its memory: the
# collector's record of each (its name, file, table) names its frames.
"$HS" --preload -v -o "$T/exec" -- "$PY" execloop.py 100 > /dev/null 2> "$T/exec.err"
expect_exec_named "$T/exec"

"$HS" --preload -o "$T/threads" -- "$PY" threads.py > /dev/null 2> "$T/threads.err"
expect_nogil_chain "$T/threads"

# kill -9: the table holds the frames and the collector's records of their
# code objects: names, files and lines in the log though the process is gone.
# A copy of the scripts, removed before the log is read.
mkdir "$T/gone" && cp server.py chain_a.py chain_b.py deep.py pyalloc.py "$T/gone/"
coproc SRV { cd "$T/gone" && exec "$HS" --preload -o "$T/k9" -- "$PY" -u server.py 2> "$T/k9.err"; }
hs_pid=$SRV_PID
wait_line "${SRV[0]}" '^ready' && echo chain >&"${SRV[1]}" && wait_line "${SRV[0]}" '^did chain' &&
	echo chain >&"${SRV[1]}" && wait_line "${SRV[0]}" '^did chain'
py_pid=$(pgrep -P "$hs_pid" -f server.py)
kill -9 "$py_pid"
wait "$hs_pid"
check "kill -9: heapsnoop exits with 137 (the command's signal)" test $? -eq 137
rm -rf "$T/gone"
expect_eq "kill -9: both blocks named f5 <- ... <- main <- <module> (server.py:20), from the log alone" \
	"$(count_under "$T/k9" 777778 "$CHAIN, <module> server.py:20")" 2
check "kill -9: the log's final dump holds them (reason=exit)" grep -q '^heapsnoop: dump reason=exit ' "$T/k9"
check "kill -9: no frame <code gone>" bash -c "! '$HD' -s '$T/k9' | grep -q '<code gone>'"

# -s (issue 32): the BPF mode's summary. A script's leak is headlined by
# the Python function that holds it, at its line, and its caller
# (leakhold.py: remember <- handle, 8 MiB), its frames named though the
# process is gone when the summary is written; a heap CPython frees at
# exit is said with its peak (heapfreed.py: 300,000 strings, some 20
# MiB), as heapsnoop read it while the script ran (the table keeps none).
"$HS" --preload -s -o "$T/hold" -- "$PY" leakhold.py > /dev/null 2> "$T/hold.err"
check "-s, leakhold: heapsnoop exits 0" test $? -eq 0
la=$(grep -n 'cache.append' leakhold.py | cut -d: -f1)
lh=$(grep -n '        remember(i)' leakhold.py | cut -d: -f1)
want="biggest holder: 8\.[0-9] MiB in [0-9]* blocks, remember (leakhold.py:$la) <- handle (leakhold.py:$lh)"
check "-s, leakhold: the summary's first line names remember <- handle, at their lines, in MiB" bash -c "
	grep -m1 -A1 '^heapsnoop: biggest holder' '$T/hold.err' > '$T/hold.head' &&
	sed -n 1p '$T/hold.head' | grep -q '^heapsnoop: $want\$' &&
	sed -n 2p '$T/hold.head' | grep -q '^heapsnoop: summary: '"
check "-s, leakhold: the top stack's Python frames named, file and line" bash -c "
	grep -q '^        #[0-9]*  0x4[0-9a-f]* remember \[python\] .*/leakhold.py:$la\$' '$T/hold.err' &&
	grep -q '^        #[0-9]*  0x4[0-9a-f]* handle \[python\] .*/leakhold.py:$lh\$' '$T/hold.err'"
check "-s, leakhold: --report's first line the same" \
	bash -c "'$HD' --report '$T/hold' | head -1 | grep -q '^$want\$'"
check "-s, leakhold: its heap held at the end, no freed-heap line" \
	bash -c "! grep -q 'freed its heap at exit' '$T/hold.err'"
"$HS" --preload -s -o "$T/freed" -- "$PY" heapfreed.py > /dev/null 2> "$T/freed.err"
check "-s, heapfreed: heapsnoop exits 0" test $? -eq 0
hint='freed its heap at exit: [0-9.]* \(bytes\|KiB\) live at the end, its peak at least [0-9.]* MiB ([0-9]* bytes) in [0-9]* allocations, [0-9.]* s before the end (the most live read, every 100 ms); see it with: heapsnoop --preload -i SECS (a dump every SECS seconds), then heapdecode --report --dump N'
check "-s, heapfreed: the freed-heap line, the log named" \
	grep -q "^heapsnoop: python3[.0-9]* (pid [0-9]*) $hint $T/freed\$" "$T/freed.err"
peak=$(sed -n 's/.* its peak at least [0-9.]* MiB (\([0-9]*\) bytes).*/\1/p' "$T/freed.err")
check "-s, heapfreed: the peak read is over 1 MiB and at most what the script held, 32 MiB ($peak)" \
	test "${peak:-0}" -gt $((1 << 20)) -a "${peak:-0}" -le $((32 << 20))

# --no-interp: native frames (the eval loop's), PYTHONMALLOC left alone.
"$HS" --preload --no-interp -o "$T/noi" -- "$PY" chain_a.py > /dev/null 2> "$T/noi.err"
stack_of "$T/noi" 777778 > "$T/noi.stack"
check "--no-interp: native frames only, _PyEval_EvalFrameDefault among them" \
	bash -c "grep -q _PyEval_EvalFrameDefault '$T/noi.stack' && ! grep -q '^py ' '$T/noi.stack' &&
		 ! grep -q '^heapsnoop: frame ' '$T/noi'"
ENVPY='import os; print(os.environ.get("PYTHONMALLOC"))'
expect_eq "--no-interp: PYTHONMALLOC left alone" \
	"$("$HS" --preload --no-interp -o /dev/null -- "$PY" -c "$ENVPY" 2> /dev/null)" None
expect_eq "PYTHONMALLOC the user set: left alone" \
	"$(PYTHONMALLOC=pymalloc "$HS" --preload -o /dev/null -- "$PY" -c "$ENVPY" 2> /dev/null)" pymalloc
expect_eq "--interp python: PYTHONMALLOC=malloc" \
	"$("$HS" --preload --interp python -o /dev/null -- "$PY" -c "$ENVPY" 2> /dev/null)" malloc

# Alone (LD_PRELOAD by hand): no heapsnoop to name frames, none read.
HEAPSNOOP_INTERP=python HEAPSNOOP_OUTPUT=$T/alone LD_PRELOAD=$OUT/libheapsnoop_preload.so \
	"$PY" chain_a.py > /dev/null 2> "$T/alone.err"
stack_of "$T/alone" 777778 > "$T/alone.stack"
check "alone: native frames only, every line encoded" \
	bash -c "grep -q _PyEval_EvalFrameDefault '$T/alone.stack' && ! grep -q '^py ' '$T/alone.stack' &&
		 ! grep -q 'unencodable' '$T/alone'"

# --- other builds -----------------------------------------------------------
# The chain, re-entered, 60 deep and a thread under LABEL's python, run by
# COMMAND... (the scripts' directory its own SDIR); pyenv's the chain.
other_build() { # LABEL SDIR COMMAND...
	local l=$1 sdir=$2; shift 2
	"$HS" --preload -v -o "$T/$l.chain" -- "$@" "$sdir/chain_a.py" > /dev/null 2> "$T/$l.chain.err"
	check "$l: heapsnoop exits 0" test $? -eq 0
	check "$l: it says it names its frames" \
		grep -q "pid [0-9]*: Python 3\.1[2-4]\.[0-9]*, its frames read by its collector" "$T/$l.chain.err"
	stack_of "$T/$l.chain" 777778 > "$T/$l.chain.stack"
	expect_chain "$l: chain" "$T/$l.chain.stack" "$CHAIN, <module> chain_a.py:30"
	check "$l: no frame <code gone>, no stack cut=order" \
		bash -c "! '$HD' -s '$T/$l.chain' | grep -q '<code gone>' && grep -q ' 0 stacks cut=order' '$T/$l.chain.err'"
	# pyenv's: their DWARF makes each heapdecode -s 8 s.
	[ "${l#pyenv}" = "$l" ] || return 0
	"$HS" --preload -o "$T/$l.inter" -- "$@" "$sdir/interleave.py" > /dev/null 2> "$T/$l.inter.err"
	expect_reentered "$T/$l.inter" "$l:"
	"$HS" --preload -o "$T/$l.deep" -- "$@" "$sdir/deep.py" > /dev/null 2> "$T/$l.deep.err"
	stack_of "$T/$l.deep" 666667 > "$T/$l.deep.stack"
	expect_chain "$l: 60 frames deep" "$T/$l.deep.stack" "$DEEP, <module> deep.py:19"
	"$HS" --preload -o "$T/$l.threads" -- "$@" "$sdir/threads.py" > /dev/null 2> "$T/$l.threads.err"
	expect_nogil_chain "$T/$l.threads" "$l:"
}

while read -r label opy <&3; do
	echo "python: $opy ($("$opy" -c 'import sys; print(sys.version.split()[0])'))"
	other_build "$label" "$SCRIPTS" "$opy"
done 3< <(other_pythons)

# trixie's python3.13 in its root: the collector where the root sees it (a
# copy under /tmp, the host's /tmp bound over the root's), the scripts in
# its /mnt, in a mount namespace of their own.
root=${HS_PYROOT313:-$(ls -d /var/cache/heapsnoop/roots/trixie.*/root 2> /dev/null | head -n 1)}
if [ -n "$root" ] && [ -x "$root/usr/bin/python3.13" ] && [ "$(id -u)" = 0 ]; then
	echo "python: $root/usr/bin/python3.13 (in its root)"
	lib=$(mktemp -d /tmp/hs-pl313.XXXXXX)
	chmod 755 "$lib" && cp "$OUT/libheapsnoop_preload.so" "$lib/"
	HEAPSNOOP_PRELOAD_LIB=$lib/libheapsnoop_preload.so other_build trixie-3.13 /mnt \
		unshare -m sh -c "mount --bind /tmp '$root/tmp' && mount --bind '$SCRIPTS' '$root/mnt' &&
			exec chroot '$root' /usr/bin/python3.13 \"\$0\"" 
	rm -rf "$lib"
else
	echo "skipped: no trixie root with python3.13 (tests/distro/make-root.sh trixie), or not root"
fi

# forky's python3.14 in its root, as trixie's 3.13; free-threaded 3.14 and
# 3.13 (tests/tracer/make-python.sh's, made if missing) as the others.
root=$(forky_root)
if [ -n "$root" ] && [ -x "$root/usr/bin/python3.14" ] && [ "$(id -u)" = 0 ]; then
	echo "python: $root/usr/bin/python3.14 (in its root)"
	lib=$(mktemp -d /tmp/hs-pl314.XXXXXX)
	chmod 755 "$lib" && cp "$OUT/libheapsnoop_preload.so" "$lib/"
	HEAPSNOOP_PRELOAD_LIB=$lib/libheapsnoop_preload.so other_build forky-3.14 /mnt \
		unshare -m sh -c "mount --bind /tmp '$root/tmp' && mount --bind '$SCRIPTS' '$root/mnt' &&
			exec chroot '$root' /usr/bin/python3.14 \"\$0\""
	rm -rf "$lib"
else
	echo "skipped: no forky root with python3.14 (tests/distro/make-root.sh forky), or not root"
fi
for ft in 3.14t 3.13t; do
	pyt=$(python_build $ft) || continue
	echo "python: $pyt ($("$pyt" -c 'import sys; print(sys.version.split()[0])'), free-threaded)"
	other_build $ft "$SCRIPTS" "$pyt"
done

# Before 3.11: said, not read.
py310=${HS_PYENV_ROOT:-/root/.pyenv}/versions/3.10.13/bin/python3.10
if [ -x "$py310" ]; then
	"$HS" --preload -o "$T/310" -- "$py310" chain_a.py > /dev/null 2> "$T/310.err"
	check "3.10: said not read, why and what to do" grep -q \
		"heapsnoop-preload: pid [0-9]*: a CPython before 3.11 (no Py_Version in its exported symbols): its frames are not read: heapsnoop reads the frames of 3.11 to 3.14; run it on one of those" \
		"$T/310.err"
else
	echo "skipped: no pyenv 3.10.13 here ($py310)"
fi

finish
