#!/bin/bash
# test_jit.sh - JIT code: node's (V8's) frames in anonymous executable
# memory, which have no CFI. The DWARF walk goes through them by frame
# pointer (V8 keeps the %rbp chain through builtins, interpreted,
# baseline and optimized code) to the C library's start of main; the perf
# map node writes (--perf-basic-prof; --interpreted-frames-native-stack
# gives interpreted functions code of their own to be named by) names
# them: tests/tracer/js/jitchain.js's outer -> middle -> leaf, in that
# order under node's ArrayBuffer allocator; the log carries the map's
# lines (jit records), so heapdecode names them with the map gone.
# Launched, and attached (-p)
# to a node already running. The same from node's jitdump (--perf-prof),
# with the lines it gives (heapdecode -s, --report, --pprof). Without
# either file the frames are walked through all the same, unnamed, and the
# closing accounting says why.
set -u
. "$(dirname "$0")/lib.sh"

# A jitdump of a JIT compiler in miniature (prog_jitdump.c: two functions
# made at run time, one described before the allocations, one after, then
# a record cut in half): both named from it with the line of their call
# (JIT_CODE_DEBUG_INFO), the chain whole to main, in -s, in the log's jit
# records, and by heapdecode -s, --report and --pprof with the file gone.
mkdir "$T/pj"
(cd "$T/pj" && exec "$HS" -q -v --summary=1000 --min-size 100000 -o "$T/pjrec" -- \
	"$PROGS/prog_jitdump") > "$T/pjout" 2> "$T/pjerr"
PJ_CHAIN='alloc_leaf\+.*\n.* jitted_inner \[jit\+0x[0-9a-f]+\] /jit/chain.src:22\n.* jitted_outer \[jit\+0x[0-9a-f]+\] /jit/chain.src:12\n.* main\+'
pj_chain() { # FILE -> 0 if a stack shows alloc_leaf, inner, outer, main in order
	grep -zqP "$PJ_CHAIN" "$1"
}
check "prog_jitdump: ran" grep -q '^DONE' "$T/pjout"
check "prog_jitdump: -s: its JIT functions named from its jitdump at their calls' lines, the chain whole" \
	pj_chain "$T/pjerr"
check "prog_jitdump: -v: every JIT frame named (the one described late too), none lost" \
	bash -c "! grep -q 'frames in JIT code .* have no name' '$T/pjerr' &&
		grep -qE ' 0 with a frame not recovered;' '$T/pjerr'"
check "prog_jitdump: the log's jit records: each function's call at its line, once" \
	bash -c "grep -qE '^heapsnoop: jit pid=[0-9]+ .*name=jitted_outer code=0x[0-9a-f]+ line=12 file=/jit/chain.src\$' '$T/pjrec' &&
		grep -qE '^heapsnoop: jit pid=[0-9]+ .*name=jitted_inner code=0x[0-9a-f]+ line=22 file=/jit/chain.src\$' '$T/pjrec' &&
		[ \$(grep -c '^heapsnoop: jit ' '$T/pjrec') -eq 2 ]"
rm -rf "$T/pj"
"$HD" -s "$T/pjrec" > "$T/pjhd" 2> /dev/null
check "prog_jitdump: heapdecode -s, the jitdump gone: the same" pj_chain "$T/pjhd"
"$HD" --report "$T/pjrec" > "$T/pjreport" 2> /dev/null
check "prog_jitdump: heapdecode --report: inner, outer at their lines" \
	bash -c "grep -q 'jitted_inner .*/jit/chain.src:22' '$T/pjreport' &&
		grep -q 'jitted_outer .*/jit/chain.src:12' '$T/pjreport'"
if command -v go > /dev/null; then
	"$HD" --pprof "$T/pj.pb.gz" "$T/pjrec" 2> /dev/null
	HOME=$T/home GOCACHE=$T/gocache GOPROXY=off GOTOOLCHAIN=local PPROF_TMPDIR=$T/pprof \
		go tool pprof -raw "$T/pj.pb.gz" > "$T/pjraw" 2> /dev/null
	check "prog_jitdump: heapdecode --pprof: inner, outer's locations at their lines" \
		bash -c "grep -q 'jitted_inner /jit/chain.src:22' '$T/pjraw' &&
			grep -q 'jitted_outer /jit/chain.src:12' '$T/pjraw'"
fi

# The same file in the other byte order: refused, said once, with why; its
# frames walked through all the same, unnamed, and the accounting says so.
mkdir "$T/pjs"
(cd "$T/pjs" && exec "$HS" -q -v --min-size 100000 -o "$T/pjsrec" -- \
	"$PROGS/prog_jitdump" swapped) > /dev/null 2> "$T/pjserr"
check "prog_jitdump swapped: the jitdump refused: the other byte order, said once" \
	bash -c "[ \$(grep -c 'jitdump .*/jit-[0-9]*\.dump is not read: it is in the other byte order' '$T/pjserr') -eq 1 ]"
check "... its JIT frames unnamed (2 of 2), said; walked through, none lost" \
	bash -c "grep -qE '^heapsnoop: 2 of 2 frames in JIT code .* have no name' '$T/pjserr' &&
		grep -qE ' 0 with a frame not recovered;' '$T/pjserr' && ! grep -q '^heapsnoop: jit ' '$T/pjsrec'"

if ! command -v node > /dev/null; then
	echo "skip test_jit.sh: no node (Debian's nodejs)"
	exit 0
fi
JS=$(realpath "$(dirname "$0")/js/jitchain.js")
NODE_FLAGS="--perf-basic-prof --interpreted-frames-native-stack"
# node leaves its /tmp/perf-PID.map behind: each traced node's goes at the end.
trap 'for r in "$T"/rec "$T"/prec; do [ -f "$r" ] && sed -n "s/^heapsnoop: map pid=\([0-9]*\) .*/\1/p" "$r" | sort -u | while read -r p; do rm -f "/tmp/perf-$p.map"; done; done; rm -rf "$T"; jobs -p | xargs -r kill 2>/dev/null' EXIT
# How V8's perf map names a JavaScript function: "JS:" since V8 11 (node
# 20), "LazyCompile:" or "Function:" before (Debian 12's node 18).
JSK='(JS|LazyCompile|Function):'
# The chain in heapsnoop's summary: leaf, middle, outer in that order
# (optimized *, baseline ^ or interpreted ~), after node's allocator.
chain_re() { # FILE -> 0 if a stack shows the chain
	awk -v js="$JS" -v jsk="$JSK" '
		/^    [0-9.]+ (bytes|KiB|MiB|GiB) in / { state = 0; alloc = 0 }
		/CreateUnsafeArrayBuffer|ArrayBufferAllocator::Allocate/ { alloc = 1 }
		alloc && $0 ~ " " jsk && index($0, js ":") {
			if (state == 0 && $0 ~ " " jsk "[*^~]?leaf ") state = 1
			else if (state == 1 && $0 ~ " " jsk "[*^~]?middle ") state = 2
			else if (state == 2 && $0 ~ " " jsk "[*^~]?outer ") { found = 1 }
		}
		END { exit !found }' "$1"
}

# node runs in $T: it writes its isolate-*.log where it runs.
cd "$T" || exit 1

# Launched: 3000 times through the chain, then SIGKILL (the buffers stay live).
# The summary shows every stack (--summary=1000), not the 10 largest: the
# 64 buffers lie under as many stacks as V8's tiers gave the chain, and
# node's own blocks of 64 KiB or more could push those out of the ten
# (2 runs in 9 once, while the log held the chain). --full-stacks: the
# summary's stacks down to the C runtime's start, which the walk reached.
"$HS" -q -v --summary=1000 --full-stacks --min-size 65536 -o "$T/rec" -- node $NODE_FLAGS "$JS" 3000 > "$T/out" 2> "$T/err"
check "launched: node ran the chain" grep -qx DONE "$T/out"
check "launched: leaf, middle, outer named by the perf map, in order, under the allocator" \
	chain_re "$T/err"
check "... the walk through JIT code reached the start of main" \
	bash -c "grep -q '__libc_start_call_main' '$T/err' || grep -q 'stack truncated' '$T/err'"
check "-v: frames were unwound into JIT code by frame pointer" \
	grep -qE 'by frame pointer \(no CFI; [1-9][0-9]* into JIT code\)' "$T/err"
check "-v: no stack lost a frame" grep -qE ' 0 with a frame not recovered;' "$T/err"
check "every JIT frame was named" bash -c "! grep -q 'frames in JIT code .* have no name' '$T/err'"
# The log carries the perf map's lines its stacks need (jit records):
# heapdecode names the chain with the map gone.
NPID=$(sed -n 's/^heapsnoop: map pid=\([0-9]*\) .*/\1/p' "$T/rec" | sort -u | head -1)
rm -f "/tmp/perf-$NPID.map"
check "the log's jit records: leaf, middle and outer's lines, each once" \
	bash -c "grep '^heapsnoop: jit pid=$NPID ' '$T/rec' | grep -E 'name=$JSK[*^~]?(leaf|middle|outer)%20' |
		sort | uniq -d | grep -q . && exit 1
		for f in leaf middle outer; do grep -qE \"^heapsnoop: jit pid=$NPID .*name=$JSK[*^~]?\$f%20\" '$T/rec' || exit 1; done"
"$HD" -s "$T/rec" 2> /dev/null | awk '/^heapsnoop: live / { print "    1 bytes in" } /^    #/' > "$T/hd"
check "heapdecode, the perf map gone: leaf, middle, outer named from the log, in order, under the allocator" \
	chain_re "$T/hd"
check "... each JIT frame of a live block named ([jit])" \
	bash -c "! grep -q '\[anon\]+0x[0-9a-f]* \[module file not found\]' '$T/hd' && grep -q '\[jit+0x' '$T/hd'"

# Attached to a node already running, which then runs the chain.
coproc N { exec node $NODE_FLAGS "$JS" wait 3000; }
wait_line "${N[0]}" '^READY' || exit 1
mkfifo "$T/errpipe"
"$HS" -q --summary=1000 --min-size 65536 -p "$N_PID" -o "$T/prec" 2> "$T/errpipe" &
hs=$!
exec 5< "$T/errpipe"
check "-p: heapsnoop says it is tracing" wait_line 5 "^heapsnoop: tracing pid $N_PID" "$T/perr"
cat <&5 >> "$T/perr" &
drain=$!
echo go >&"${N[1]}"
wait_line "${N[0]}" '^DONE' || exit 1
kill -INT "$hs"
wait "$hs"
wait "$drain"
check "-p: leaf, middle, outer named by the perf map, in order" chain_re "$T/perr"
echo end >&"${N[1]}"
wait "$N_PID" 2> /dev/null

# jitdump (--perf-prof, no perf map): node writes jit-PID.dump where it
# runs and maps it executable, which is how heapsnoop finds it; V8 writes it
# through a 2 MiB buffer, out when full and at its exit, so the chain's
# records come at the end: node ended by a line (process.exit: its buffers
# stay live), the last dump looks its unnamed JIT frames up again. Its
# JIT_CODE_DEBUG_INFO gives baseline and optimized code lines (not the
# interpreter's): the chain never optimized (--no-opt: which tier the last
# buffers come from is V8's choice otherwise), so they come from its
# baseline code, middle's call of leaf at its line. (V8's baseline lines
# count bytecode offsets as code offsets: right for a function on one line.)
MIDLINE=$(grep -n 'return leaf(i) + 1;' "$JS" | cut -d: -f1)
mkdir "$T/jd" && mkfifo "$T/jin" "$T/jout"
(cd "$T/jd" && exec "$HS" -q -v --summary=1000 --min-size 65536 -o "$T/jrec" -- \
	node --perf-prof --no-opt "$JS" wait 3000) \
	< "$T/jin" > "$T/jout" 2> "$T/jerr" &
hs=$!
exec {jin}> "$T/jin" {jout}< "$T/jout"
wait_line "$jout" '^READY' || exit 1
echo go >&"$jin"
wait_line "$jout" '^DONE' || exit 1
echo end >&"$jin"
exec {jin}>&-
wait "$hs"
exec {jout}<&-
JPID=$(sed -n 's/^heapsnoop: map pid=\([0-9]*\) .*/\1/p' "$T/jrec" | sort -u | head -1)
check "jitdump: node wrote jit-PID.dump where it ran, and no perf map" \
	bash -c "[ -s '$T/jd/jit-$JPID.dump' ] && [ ! -e /tmp/perf-$JPID.map ]"
check "jitdump: leaf, middle, outer named from it, in order, under the allocator" \
	chain_re "$T/jerr"
check "jitdump: -v: no stack lost a frame" grep -qE ' 0 with a frame not recovered;' "$T/jerr"
check "jitdump: every JIT frame was named (the last dump read the buffer's records)" \
	bash -c "! grep -q 'frames in JIT code .* have no name' '$T/jerr'"
check "jitdump: each jit record once" \
	bash -c "! grep '^heapsnoop: jit ' '$T/jrec' | sort | uniq -d | grep -q ."
# middle's line where V8 wrote its debug info as text: node 20 writes freed
# bytes as a long script path's file name in most runs, untraced too, and
# such a record is dropped whole (prog_jitdump above is the deterministic
# check of lines).
if grep -qE "^heapsnoop: jit pid=$JPID .*name=${JSK}[*^]middle%20.* line=" "$T/jrec"; then
	check "jitdump: middle's jit record: its call at line=$MIDLINE, its file" \
		grep -qE "^heapsnoop: jit pid=$JPID .*name=${JSK}[*^]middle%20.* code=0x[0-9a-f]+ line=$MIDLINE file=.*jitchain.js\$" "$T/jrec"
	check "jitdump: -s shows middle's call of leaf at its line" \
		grep -qE " ${JSK}[*^]middle .*\\[jit\\+0x[0-9a-f]+\\] $JS:$MIDLINE\$" "$T/jerr"
else
	echo "skip jitdump: middle's line: V8 wrote no usable debug info for it this run"
fi
# heapdecode names it all from the log, the jitdump gone.
rm -f "$T/jd/jit-$JPID.dump"
"$HD" -s "$T/jrec" 2> /dev/null | awk '/^heapsnoop: live / { print "    1 bytes in" } /^    #/' > "$T/jhd"
check "jitdump: heapdecode -s, the file gone: the chain named from the log, in order" \
	chain_re "$T/jhd"

# No perf map: walked through all the same; the frames unnamed, said.
"$HS" -q -v --summary=1000 --min-size 65536 -o "$T/nrec" -- node "$JS" 3000 > /dev/null 2> "$T/nerr"
check "no perf map: no stack lost a frame" grep -qE ' 0 with a frame not recovered;' "$T/nerr"
check "no perf map: the closing accounting says the JIT frames have no name, and why" \
	grep -qE 'frames in JIT code \(anonymous executable memory\) have no name: their process wrote no perf map' "$T/nerr"

# --no-perf-map: the map node writes is not read; walked through all the same.
"$HS" -q -v --summary=1000 --no-perf-map --min-size 65536 -o "$T/orec" -- node $NODE_FLAGS "$JS" 3000 \
	> /dev/null 2> "$T/oerr"
check "--no-perf-map: no stack lost a frame" grep -qE ' 0 with a frame not recovered;' "$T/oerr"
check "--no-perf-map: no frame named by the map, no jit record" \
	bash -c "! grep -qE ' $JSK' '$T/oerr' && ! grep -q '^heapsnoop: jit ' '$T/orec'"
sed -n 's/^heapsnoop: map pid=\([0-9]*\) .*/\1/p' "$T/orec" | sort -u | while read -r p; do
	rm -f "/tmp/perf-$p.map"; done
finish
