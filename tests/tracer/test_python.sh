#!/bin/bash
# test_python.sh - Python frames among the native ones (docs/DESIGN.md,
# "Interpreter frames"), on Debian's real interpreter, /usr/bin/python3.11
# (never the python3.11 a PATH finds first: pyenv's is another build;
# HS_PYTHON names another, the kernel matrix's guests a copy of it), with
# the scripts of tests/tracer/py:
#   launched: a known chain across two files, each function at its
#     file:line in order, native frames before and after, no eval frame
#     left (chain_a.py); the eval loop re-entered from C three ways, C
#     frames between the segments (interleave.py); a stack 60 Python
#     frames deep, whole (deep.py);
#     a million small objects, each a live block under its Python line
#     (million.py, PYTHONMALLOC=malloc set by heapsnoop); a heap CPython
#     freed at exit said by -s and --report with its peak (heapfreed.py); the chain in
#     every output of heapdecode (-s, --report, --folded, the flame graph,
#     --json, --speedscope, --pprof read by go tool pprof) from the log
#     alone, its scripts removed first; code exec()'d
#     again and again, each frame named after the code that ran, none
#     "<code gone>" (execloop.py); a thread that released the GIL to
#     allocate (threads.py);
#   attached (-p) to a running one: the same chain and the deep stack,
#     under the server's own line, in a dump asked for while it runs
#     (server.py); a process that uses pymalloc said so;
#   --no-interp: native frames only, PYTHONMALLOC left alone;
#   a copy of python3.11 whose eval loop is not exported (renamed in its
#     .dynstr): refused once, the message naming what is missing, where
#     it was looked for and what to do;
#   trixie's python3.13, the kernel matrix's guests' own, or in its root
#     (chroot) where tests/distro made it: the same chain (3.13's layout
#     from its _Py_DebugOffsets);
#   the other builds where they are (pylib.sh's other_pythons:
#     python-build-standalone's 3.12, clang, no .symtab; pyenv's 3.12.1
#     and 3.13.0, --enable-shared), each launched (the chain; the 3.12 of
#     python-build-standalone re-entered, 60 deep, a thread too) and
#     attached (the chain, 60 deep); "skipped: no ..." for each one absent;
#   forky's python3.14 in its root (tests/distro/make-root.sh forky, made
#     when missing: 90 s once) and free-threaded 3.14 and 3.13
#     (tests/tracer/make-python.sh 3.14t, 3.13t, made when missing: 12 and
#     40 minutes once on this busy machine), each launched (the chain,
#     re-entered, 60 deep, a thread) and attached (the chain, 60 deep), its
#     layout from its _Py_DebugOffsets: 30 s for 3.14 (in its root, with
#     the cookie's copy), 12 s and 10 s for 3.14t and 3.13t at a load of 9;
#     a copy of forky's python3.14 whose cookie is altered: refused once,
#     the message naming the cookie and what to do.
# HS_PY_MILLION: the small objects' count (default 1000000).
# HS_PY_KERNEL_ONLY=1 (the kernel matrix's guests): only the parts whose
# outcome the kernel decides, the BPF walk's loading and reads (launched:
# the chain, the deep stack, the small objects, the thread; attached; 3.13);
# not those of the loader and heapdecode alone, which this machine's run
# checks (each run costs some 25 s under TCG).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pylib.sh"
PY=${HS_PYTHON:-/usr/bin/python3.11}
SCRIPTS=$(cd "$(dirname "$0")/py" && pwd)
MILLION=${HS_PY_MILLION:-1000000}
# False, and said, for a part HS_PY_KERNEL_ONLY leaves out (but those
# HS_PY_ALSO names: "re-entered" in the arm64 guest).
all_parts() { # LABEL
	[ "${HS_PY_KERNEL_ONLY:-0}" = 1 ] || return 0
	[[ " ${HS_PY_ALSO:-} " == *" $1 "* ]] && return 0
	echo "note: $1: not run (HS_PY_KERNEL_ONLY=1: the loader's and heapdecode's part, checked natively)"
	return 1
}
[ -x "$PY" ] || { echo "FAIL $PY is not there: scripts/install-deps.sh installs Debian's python3.11"; exit 1; }
echo "python: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"

CHAIN="f5 chain_a.py:20, f4 chain_b.py:11, f3 chain_a.py:16, f2 chain_b.py:7, f1 chain_a.py:12, main chain_a.py:24"
DEEP="rec deep.py:10$(for _ in $(seq 57); do printf ', rec deep.py:11'; done), main deep.py:15"

# --- launched ---------------------------------------------------------------
cd "$SCRIPTS" || exit 1
"$HS" -q -o "$T/chain" -- "$PY" chain_a.py > "$T/chain.out" 2> "$T/chain.err"
check "launched: heapsnoop exits with python's status (0)" test $? -eq 0
check "launched: it says it reads Python's frames" \
	grep -q "runs Python 3\.[0-9.]* (.*): its frames are read" "$T/chain.err"
check "launched: PYTHONMALLOC=malloc for the command" \
	grep -q "allocates its objects with PYTHONMALLOC=malloc" "$T/chain.err"
stack_of "$T/chain" 777778 > "$T/chain.stack"
expect_chain "launched chain" "$T/chain.stack" "$CHAIN, <module> chain_a.py:30"
check_no_loss "launched: no events lost" "$T/chain.err"

if all_parts "re-entered"; then
	# The loop re-entered from C (map(), a class call, a generator): each
	# eval frame its segment of Python frames, C frames between them.
	"$HS" -q -o "$T/inter" -- "$PY" interleave.py > /dev/null 2> "$T/inter.err"
	expect_reentered "$T/inter"
fi

# HS_PY_SKIP="deep" (the arm64 guest: the walk's loop is the same BPF
# code on both architectures, checked natively) leaves it out.
if [[ " ${HS_PY_SKIP:-} " == *" deep "* ]]; then
	echo "note: 60 frames deep: not run (HS_PY_SKIP)"
else
"$HS" -q -o "$T/deep" -- "$PY" deep.py > /dev/null 2> "$T/deep.err"
stack_of "$T/deep" 666667 > "$T/deep.stack"
expect_chain "60 frames deep" "$T/deep.stack" "$DEEP, <module> deep.py:19"
check "60 frames deep: the stack is whole (no cut=)" \
	bash -c "'$HD' -s '$T/deep' | grep '^heapsnoop: live .*~b#size: 666667,' | grep -vq 'cut='"
fi

# HS_PY_SKIP="million" (the arm64 guest, where a run is a minute or two
# under TCG) leaves the small objects out.
if [[ " ${HS_PY_SKIP:-} " == *" million "* ]]; then
	echo "note: a million small objects: not run (HS_PY_SKIP)"
else
# Two million records (each object's malloc, and the lists') come in one
# burst: the default 64 MiB ring held up to 76% of them waiting for the
# loader on a quiet machine, and filled when other engineers' guests ran
# beside it. 256 MiB keeps the check about the objects, not the machine.
"$HS" -q --ringbuf-size 256 -o "$T/million" -- "$PY" million.py "$MILLION" > /dev/null 2> "$T/million.err"
"$HD" --folded --count "$T/million" > "$T/million.count"
# Folded: each blank of a name as "_". The first few lists come from
# CPython's free list of lists (80 at most), made earlier elsewhere.
# (3.12 and later inline the comprehension: no <listcomp> frame, the
# arm64 guest's 3.13.)
n=$(awk '/;<module>_\(million\.py:19\);make_\(million\.py:14\);(make\.<locals>\.<listcomp>_\(million\.py:14\);)?/ { s += $NF }
	END { print s + 0 }' "$T/million.count")
check "a million small objects: $MILLION live blocks (but the free list's) under make (million.py:14), in its <listcomp> before 3.12 ($n)" \
	test "$n" -ge $((MILLION - 80)) -a "$n" -le "$MILLION"
check_no_loss "a million small objects: no events lost" "$T/million.err"
fi

if all_parts "a heap freed at exit"; then
	# CPython frees its heap at shutdown: the live set at exit is a sliver
	# of the 20 MiB held (heapfreed.py); -s and --report say so, with the
	# peak and where to see it.
	"$HS" -q -s -o "$T/freed" -- "$PY" heapfreed.py > /dev/null 2> "$T/freed.err"
	hint='freed its heap at exit: [0-9.]* \(bytes\|[KMG]iB\) live at the end, its peak [0-9.]* [KMG]iB ([0-9]* bytes) in [0-9]* allocations, [0-9.]* s before the end; see it with: heapdecode --stats --sort peak'
	check "freed at exit: -s says so in one line, the log named" \
		grep -q "^heapsnoop: python3[.0-9]* (pid [0-9]*) $hint $T/freed\$" "$T/freed.err"
	peak=$(sed -n 's/.* its peak [0-9.]* [KMG]iB (\([0-9]*\) bytes).*/\1/p' "$T/freed.err")
	check "freed at exit: the peak said is above 20 MiB ($peak)" test "${peak:-0}" -gt $((20 << 20))
	check "freed at exit: --report says so too" bash -c \
		"'$HD' --report '$T/freed' | grep -q '^python3[.0-9]* (pid [0-9]*) $hint $T/freed\$'"
	check "freed at exit: the peak --stats --sort peak shows is the one said" bash -c \
		"'$HD' --stats --sort peak '$T/freed' | grep -q '^pid [0-9]* (python3[.0-9]*): peak $peak bytes'"
fi

if all_parts "the biggest holder"; then
	# A script's leak: the headline names the Python function that holds
	# it and its caller, at their lines, in MiB (not the interpreter's C
	# below it, gc_alloc or PyByteArray_FromStringAndSize).
	"$HS" -q -s -o "$T/hold" -- "$PY" leakhold.py > /dev/null 2> "$T/hold.err"
	la=$(grep -n 'cache.append' leakhold.py | cut -d: -f1)
	lh=$(grep -n '        remember(i)' leakhold.py | cut -d: -f1)
	want="biggest holder: 8\.[0-9] MiB in [0-9]* blocks, remember (leakhold.py:$la) <- handle (leakhold.py:$lh)"
	check "the biggest holder: -s's first summary line names remember <- handle, in MiB" \
		grep -q "^heapsnoop: $want\$" "$T/hold.err"
	check "the biggest holder: --report's first line too" \
		bash -c "'$HD' --report '$T/hold' | head -1 | grep -q '^$want\$'"
fi

if all_parts "offline, exec'd code"; then
	# Offline: every output of heapdecode names the chain from the log alone,
	# read after the scripts are gone (a copy of them run, then removed) and
	# python has exited: their functions, files and lines come from the log's
	# frame records, never from the files or the process.
	mkdir "$T/gone" && cp chain_a.py chain_b.py pyalloc.py "$T/gone/" &&
		(cd "$T/gone" && exec "$HS" -q -o "$T/off" -- "$PY" chain_a.py) > /dev/null 2> "$T/off.err"
	rm -rf "$T/gone"
	# The chain as each output shows it: innermost first, FILE:LINE of $T/gone.
	OFF="f5 chain_a.py:20, f4 chain_b.py:11, f3 chain_a.py:16, f2 chain_b.py:7, f1 chain_a.py:12, main chain_a.py:24, <module> chain_a.py:30"
	stack_of "$T/off" 777778 > "$T/off.stack"
	expect_chain "offline, -s" "$T/off.stack" "$OFF"
	"$HD" --report "$T/off" > "$T/off.report"
	expect_eq "offline, --report: the chain's frames, [python] with $T/gone's file:line" \
		"$(awk '/^759.5 KiB / { on = 1; next } on && !/^    #/ { exit }
			on && $4 == "[python]" { sub(/.*\//, "", $5); printf "%s%s %s", n++ ? ", " : "", $3, $5 }
			END { print "" }' "$T/off.report")" "$OFF"
	"$HD" --folded "$T/off" > "$T/off.folded"
	check "offline, --folded: the chain root first, between the C frames" \
		grep -qF ';PyEval_EvalCode;<module>_(chain_a.py:30);main_(chain_a.py:24);f1_(chain_a.py:12);f2_(chain_b.py:7);f3_(chain_a.py:16);f4_(chain_b.py:11);f5_(chain_a.py:20);_PyObject_MakeTpCall;' \
		"$T/off.folded"
	"$HD" --flamegraph "$T/off.svg" "$T/off"
	check "offline, --flamegraph: each of the chain's frames drawn" bash -c "
		for f in '&lt;module&gt;_(chain_a.py:30)' 'main_(chain_a.py:24)' 'f1_(chain_a.py:12)' 'f2_(chain_b.py:7)' \
			 'f3_(chain_a.py:16)' 'f4_(chain_b.py:11)' 'f5_(chain_a.py:20)'; do
			grep -qF \"data-n=\\\"\$f\\\"\" '$T/off.svg' || exit 1
		done"
	# A stack's Python frames from a list of frames (dicts with function, file
	# and line), as OFF has them.
	PYLIST='lambda fs: ", ".join("%s %s:%d" % (f["function"], f["file"].rsplit("/", 1)[-1], f["line"]) for f in fs)'
	"$HD" --json "$T/off" > "$T/off.json"
	check "offline, --json: a stack whose python frames are the chain, file and line apart, C frames around" \
		python3 -c "
import json, sys
py = $PYLIST
d = json.load(open('$T/off.json'))
for s in d['stacks']:
	f = s['frames']
	k = [i for i, x in enumerate(f) if x['kind'] == 'python']
	if s['live_bytes'] == 777778 and py([f[i] for i in k]) == '$OFF' and \
	   all(f[i]['module'] == '[python]' and f[i]['file'].startswith('$T/gone/') for i in k) and \
	   k[0] > 0 and k[-1] < len(f) - 1 and f[0]['kind'] == f[-1]['kind'] == 'native':
		sys.exit(0)
sys.exit(1)"
	"$HD" --speedscope "$T/off.ss.json" "$T/off"
	check "offline, --speedscope: a sample (root first) with the chain's frames, file and line apart" \
		python3 -c "
import json, sys
py = $PYLIST
d = json.load(open('$T/off.ss.json'))
fr = d['shared']['frames']
for s in d['profiles'][0]['samples']:
	f = [dict(function=fr[i]['name'], file=fr[i].get('file', ''), line=fr[i].get('line', 0)) for i in reversed(s)]
	if py([x for x in f if x['file'].startswith('$T/gone/')]) == '$OFF':
		sys.exit(0)
sys.exit(1)"
	# pprof: go tool pprof's own reading. It shows '<module>' as its system
	# name (its demangler takes <...> for C++'s template arguments), the
	# location's file and line as written.
	"$HD" --pprof "$T/off.pb.gz" "$T/off"
	if command -v go > /dev/null; then
	mkdir -p "$T/home" "$T/pprof"
	HOME=$T/home GOCACHE=$T/gocache GOPROXY=off GOTOOLCHAIN=local PPROF_TMPDIR=$T/pprof \
		go tool pprof -raw "$T/off.pb.gz" > "$T/off.raw" 2> /dev/null
	check "offline, --pprof (go tool pprof -raw): the 777778 bytes' sample, its locations the chain in [python] with file:line" \
		python3 -c "
import re, sys
raw = open('$T/off.raw').read()
maps = dict(re.findall(r'^(\d+): \S+ (\S+)', raw.split('\nMappings\n')[1], re.M))
locs = {}
for m in re.finditer(r'^ +(\d+): 0x[0-9a-f]+ M=(\d+) (.*) (\S+):(\d+) s=\d+(?:\((.*)\))?$', raw, re.M):
	if maps.get(m[2]) == '[python]':
		locs[m[1]] = '%s %s:%s' % (m[3].strip() or m[6], m[4].rsplit('/', 1)[-1], m[5])
for m in re.finditer(r'^ +\d+ +777778 +\d+ +777778: ([\d ]+)$', raw, re.M):
	if ', '.join(locs[i] for i in m[1].split() if i in locs) == '$OFF':
		sys.exit(0)
sys.exit(1)"
	else
		echo "note: no go here (the kernel matrix's guests): --pprof not read back"
	fi

	"$HS" -q -o "$T/exec" -- "$PY" execloop.py 100 > /dev/null 2> "$T/exec.err"
	expect_exec_named "$T/exec"
fi

"$HS" -q -o "$T/threads" -- "$PY" threads.py > /dev/null 2> "$T/threads.err"
check "a thread that released the GIL: heapsnoop exits 0" test $? -eq 0
check_no_loss "a thread that released the GIL: no events lost" "$T/threads.err"
stack_of "$T/threads" 333333 > "$T/threads.stack"
check "a thread that released the GIL: nogil_alloc (threads.py:16) <- run_it (threads.py:21)" \
	bash -c "py_out=\$(awk '\$1 == \"py\" { print \$2, \$3 }' '$T/threads.stack' | head -n 2 | paste -sd,);
		 [ \"\$py_out\" = 'nogil_alloc threads.py:16,run_it threads.py:21' ]"
expect_eq "a thread that released the GIL: its 20 blocks" \
	"$("$HD" -s "$T/threads" | grep -c '^heapsnoop: live .*~b#size: 333333,')" 20
expect_nogil_chain "$T/threads"

# --- attached (-p) ------------------------------------------------------------
# server.py under heapsnoop -p with python's environment ENV...; its
# records to the fifo $T/NAME (read on descriptor 6), heapsnoop's stderr
# into $T/NAME.err up to its "tracing" line, then drained ($drain).
attach_server() { # NAME ENV...
	local name=$1; shift
	coproc S { exec env "$@" "$PY" server.py; }
	wait_line "${S[0]}" '^ready' || return 1
	hs_attach "$name" "$S_PID" "$T/$name" "$T/$name.err"
}

attach_server attach PYTHONMALLOC=malloc || exit 1
echo chain >&"${S[1]}"
wait_line "${S[0]}" '^did chain' || exit 1
echo deep >&"${S[1]}"
wait_line "${S[0]}" '^did deep' || exit 1
# A dump while it runs (SIGUSR1), read whole: its code objects are alive.
kill -USR1 "$hs"
wait_line 6 '^heapsnoop: end-dump' "$T/attach.rec" || exit 1
echo exit >&"${S[1]}"
wait "$hs"
check "attached: heapsnoop exits 0 when python exits" test $? -eq 0
cat <&6 > /dev/null
exec 6<&-
wait "$drain"
check "attached: it says it reads Python's frames" \
	grep -q "runs Python 3\.[0-9.]* (.*): its frames are read" "$T/attach.err"
stack_of "$T/attach.rec" 777778 > "$T/attach.chain"
expect_chain "attached chain" "$T/attach.chain" "$CHAIN, <module> server.py:20"
stack_of "$T/attach.rec" 666667 > "$T/attach.deep"
expect_chain "attached, 60 frames deep" "$T/attach.deep" "$DEEP, <module> server.py:22"
check_no_loss "attached: no events lost" "$T/attach.err"

if all_parts "pymalloc attached, --no-interp"; then
	# A process that uses pymalloc: its small objects are not live blocks, said
	# before tracing begins.
	attach_server pymalloc -u PYTHONMALLOC || exit 1
	check "attached to pymalloc: said, its small objects not live blocks" \
		grep -q "uses pymalloc (PYTHONMALLOC not set): ITS OBJECTS OF UP TO 512 BYTES ARE NOT LIVE BLOCKS HERE" \
		"$T/pymalloc.err"
	echo exit >&"${S[1]}"
	cat <&6 > /dev/null
	exec 6<&-
	wait "$hs"
	wait "$drain"

	# --- --no-interp --------------------------------------------------------------
	"$HS" -q --no-interp -o "$T/native" -- "$PY" chain_a.py > /dev/null 2> "$T/native.err"
	stack_of "$T/native" 777778 > "$T/native.stack"
	expect_eq "--no-interp: no Python frame" "$(grep -c '^py ' "$T/native.stack")" 0
	check "--no-interp: the eval loop's frames stay" grep -q '_PyEval_EvalFrameDefault' "$T/native.stack"
	check "--no-interp: PYTHONMALLOC left alone" bash -c "! grep -q PYTHONMALLOC '$T/native.err'"
fi

if all_parts "a build that hides its eval loop"; then
	# A copy of python3.11 whose _PyEval_EvalFrameDefault is renamed in its
	# .dynstr (it runs as before): refused once, the message naming the
	# missing export, where it is looked for and what to do; native frames.
	python3 -c "
import subprocess, sys
src, dst = sys.argv[1:]
out = subprocess.run(['readelf', '-SW', src], capture_output=True, text=True, check=True).stdout
f = next(l.split(']')[1].split() for l in out.splitlines() if ' .dynstr ' in l)
off, size = int(f[3], 16), int(f[4], 16)
b = bytearray(open(src, 'rb').read())
i = b.find(b'\\0_PyEval_EvalFrameDefault\\0', off, off + size)
b[i + 1] = ord('X')
open(dst, 'wb').write(b)" "$PY" "$T/noeval" && chmod +x "$T/noeval"
	"$HS" -q -o "$T/noeval.rec" -- "$T/noeval" chain_a.py > /dev/null 2> "$T/noeval.err"
	check "eval loop hidden: heapsnoop exits 0" test $? -eq 0
	expect_eq "eval loop hidden: said once, what is missing, where, what to do" \
		"$(grep -c "runs $T/noeval: its Python frames are not read: no _PyEval_EvalFrameDefault with a size in its exported symbols (.dynsym), where CPython's own build puts it: a build that hides or renames its eval loop; its Python frames need one that exports it (--no-interp: native frames only)\$" "$T/noeval.err")" 1
	stack_of "$T/noeval.rec" 777778 > "$T/noeval.stack"
	check "eval loop hidden: native frames, no Python frame" \
		bash -c "grep -q '^c ' '$T/noeval.stack' && ! grep -q '^py ' '$T/noeval.stack'"
fi

# --- other builds: python-build-standalone's, pyenv's --------------------------
# LABEL's python OPY launched (the chain) and attached (the chain, 60
# deep); python-build-standalone's (clang's code) also re-entered, 60 deep
# and a thread launched, pyenv's (GCC's, as Debian's) not: 35 s for the three.
other_build() { # LABEL OPY
	local l=$1 PY=$2
	"$HS" -q -o "$T/$l.chain" -- "$PY" chain_a.py > /dev/null 2> "$T/$l.chain.err"
	check "$l: it says it reads Python's frames" \
		grep -q "runs Python 3\.1[2-4]\.[0-9]* (.*): its frames are read" "$T/$l.chain.err"
	stack_of "$T/$l.chain" 777778 > "$T/$l.chain.stack"
	expect_chain "$l: launched chain" "$T/$l.chain.stack" "$CHAIN, <module> chain_a.py:30"
	check_no_loss "$l: no events lost" "$T/$l.chain.err"
	[ "${l#pyenv}" != "$l" ] || other_more "$l"
	other_attached "$l"
}

# LABEL's python PY launched: re-entered, 60 deep, a thread.
other_more() { # LABEL
	local l=$1
	"$HS" -q -o "$T/$l.inter" -- "$PY" interleave.py > /dev/null 2> "$T/$l.inter.err"
	expect_reentered "$T/$l.inter" "$l:"
	"$HS" -q -o "$T/$l.deep" -- "$PY" deep.py > /dev/null 2> "$T/$l.deep.err"
	stack_of "$T/$l.deep" 666667 > "$T/$l.deep.stack"
	expect_chain "$l: 60 frames deep" "$T/$l.deep.stack" "$DEEP, <module> deep.py:19"
	"$HS" -q -o "$T/$l.threads" -- "$PY" threads.py > /dev/null 2> "$T/$l.threads.err"
	expect_nogil_chain "$T/$l.threads" "$l:"
}

# LABEL's python PY attached: the chain, 60 deep (PYTHONMALLOC=malloc;
# a free-threaded build's, 3.14t, refuses it: unset there).
other_attached() { # LABEL
	local l=$1 malloc=PYTHONMALLOC=malloc
	[ "${l%t}" = "$l" ] || malloc="-u PYTHONMALLOC"
	attach_server "$l.attach" $malloc || return 1
	echo chain >&"${S[1]}"
	wait_line "${S[0]}" '^did chain' || return 1
	echo deep >&"${S[1]}"
	wait_line "${S[0]}" '^did deep' || return 1
	kill -USR1 "$hs"
	wait_line 6 '^heapsnoop: end-dump' "$T/$l.attach.rec" || return 1
	echo exit >&"${S[1]}"
	wait "$hs"
	check "$l: attached: heapsnoop exits 0 when python exits" test $? -eq 0
	cat <&6 > /dev/null
	exec 6<&-
	wait "$drain"
	check "$l: attached: it says it reads Python's frames" \
		grep -q "runs Python 3\.1[2-4]\.[0-9]* (.*): its frames are read" "$T/$l.attach.err"
	stack_of "$T/$l.attach.rec" 777778 > "$T/$l.attach.chain"
	expect_chain "$l: attached chain" "$T/$l.attach.chain" "$CHAIN, <module> server.py:20"
	stack_of "$T/$l.attach.rec" 666667 > "$T/$l.attach.deep"
	expect_chain "$l: attached, 60 frames deep" "$T/$l.attach.deep" "$DEEP, <module> server.py:22"
}

if all_parts "other builds"; then
	while read -r label opy <&3; do
		echo "python: $opy ($("$opy" -c 'import sys; print(sys.version.split()[0])'))"
		other_build "$label" "$opy" || check "$label: its server answered" false
	done 3< <(other_pythons)
fi

# --- 3.13 (trixie's, in its root; the kernel matrix's guests run on it) ----------
root=${HS_PYROOT313:-$(ls -d /var/cache/heapsnoop/roots/trixie.*/root 2> /dev/null | head -n 1)}
run313=
if [ "$PY" -ef /usr/bin/python3.13 ]; then
	# The Python above is this 3.13 (the arm64 guest's): its chain was that run.
	check "3.13: its layout from its _Py_DebugOffsets (the launched chain's run)" \
		grep -q "runs Python 3\.13\.[0-9]* (.*): its frames are read (its layout from its _Py_DebugOffsets)" \
		"$T/chain.err"
elif [ -x /usr/bin/python3.13 ]; then
	run313=(/usr/bin/python3.13 chain_a.py)
elif [ -n "$root" ] && [ -x "$root/usr/bin/python3.13" ] && [ "$(id -u)" = 0 ]; then
	run313=(unshare -m sh -c "mount --bind '$SCRIPTS' '$root/mnt' &&
		exec chroot '$root' /usr/bin/python3.13 /mnt/chain_a.py")
fi
if [ -n "$run313" ]; then
	"$HS" -q -o "$T/chain313" -- "${run313[@]}" > /dev/null 2> "$T/chain313.err"
	check "3.13: its layout from its _Py_DebugOffsets" \
		grep -q "runs Python 3\.13\.[0-9]* (.*): its frames are read (its layout from its _Py_DebugOffsets)" \
		"$T/chain313.err"
	stack_of "$T/chain313" 777778 > "$T/chain313.stack"
	expect_chain "3.13 chain" "$T/chain313.stack" "$CHAIN, <module> chain_a.py:30"
elif ! [ "$PY" -ef /usr/bin/python3.13 ]; then
	echo "note: no python3.13 here nor a trixie root with one (tests/distro/make-root.sh trixie): 3.13 not run"
fi

# --- 3.14 (forky's, in its root), free-threaded 3.14 and 3.13 (from source) ---
# Each: launched, the chain, the loop re-entered, 60 deep and a thread
# (other_build's and other_more's); attached, the chain and 60 deep
# (other_attached's): 5 runs of heapsnoop each build. 3.14 reads its
# layout from its _Py_DebugOffsets (f_executable a tagged _PyStackRef,
# owner 3 the shim); 3.14t too, with its bigger object headers and each
# thread's own copy of the code units (the thread's line is right only
# if that copy is followed); 3.13t with 3.13's frames and its headers.
# forky's runs in its root by chroot, the scripts copied into the root's
# /tmp (chroot leaves no way to the checkout), through a wrapper that
# takes a script's name as python does.
if all_parts "3.14"; then
	root=$(forky_root)
	if [ -n "$root" ] && [ -x "$root/usr/bin/python3.14" ] && [ "$(id -u)" = 0 ]; then
		rdir=$(mktemp -d "$root/tmp/hs-py.XXXXXX") && cp "$SCRIPTS"/*.py "$rdir/" &&
			chmod 755 "$rdir" || exit 1
		trap 'rm -rf "$rdir" "$T"; jobs -p | xargs -r kill 2>/dev/null' EXIT
		cat > "$T/py314" <<-EOF
		#!/bin/sh
		s=\$1; shift
		exec chroot '$root' /usr/bin/python3.14 '${rdir#"$root"}/'"\$s" "\$@"
		EOF
		chmod +x "$T/py314"
		echo "python: $root/usr/bin/python3.14 ($(chroot "$root" /usr/bin/python3.14 -c 'import sys; print(sys.version.split()[0])'))"
		other_build 3.14 "$T/py314" || check "3.14: its server answered" false
		check "3.14: its layout from its _Py_DebugOffsets" \
			grep -q "runs Python 3\.14\.[0-9]* (.*): its frames are read (its layout from its _Py_DebugOffsets)" \
			"$T/3.14.chain.err"
		# A copy whose _Py_DebugOffsets cookie is altered (it runs as
		# before: CPython never reads it): refused once, the message
		# naming the cookie, what it means and what to do; native frames.
		python3 - "$root/usr/bin/python3.14" "$rdir/python3.14-nocookie" <<-'EOF'
		import subprocess, sys
		src, dst = sys.argv[1:]
		out = subprocess.run(['readelf', '-SW', src], capture_output=True, text=True, check=True).stdout
		f = next(l.split(']')[1].split() for l in out.splitlines() if ' .PyRuntime ' in l)
		off = int(f[3], 16)
		b = bytearray(open(src, 'rb').read())
		assert b[off:off + 8] == b'xdebugpy', 'no cookie at .PyRuntime'
		b[off + 6:off + 8] = b'PY'
		open(dst, 'wb').write(b)
		EOF
		chmod +x "$rdir/python3.14-nocookie"
		"$HS" -q -o "$T/nocookie" -- chroot "$root" "${rdir#"$root"}/python3.14-nocookie" \
			"${rdir#"$root"}/chain_a.py" > /dev/null 2> "$T/nocookie.err"
		check "3.14, its cookie altered: heapsnoop exits 0" test $? -eq 0
		expect_eq "3.14, its cookie altered: said once, what is missing, what it means, what to do" \
			"$(grep -c "runs .*/python3.14-nocookie: its Python frames are not read: _Py_DebugOffsets cookie (\"xdebugpy\") not found at the start of _PyRuntime: not a 3.13 or later build, or one that moved it; heapsnoop needs it to read the frames of 3.13 and later (--no-interp: native frames only)\$" "$T/nocookie.err")" 1
		stack_of "$T/nocookie" 777778 > "$T/nocookie.stack"
		check "3.14, its cookie altered: native frames, no Python frame" \
			bash -c "grep -q '^c ' '$T/nocookie.stack' && ! grep -q '^py ' '$T/nocookie.stack'"
	else
		echo "note: no forky root with python3.14 and none could be made (tests/distro/make-root.sh forky, as root): 3.14 not run"
	fi
	for ft in 3.14t 3.13t; do
		PYT=$(python_build $ft) || continue
		echo "python: $PYT ($("$PYT" -c 'import sys; print(sys.version.split()[0], "GIL", sys._is_gil_enabled())'))"
		other_build $ft "$PYT" || check "$ft: its server answered" false
		check "$ft: its layout from its _Py_DebugOffsets" \
			grep -q "runs Python ${ft%t}\.[0-9]* (.*): its frames are read (its layout from its _Py_DebugOffsets)" \
			"$T/$ft.chain.err"
	done
fi
finish
