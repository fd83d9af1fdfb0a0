#!/bin/bash
# test_hdframes.sh - heapdecode on stacks of any depth with frames that are
# not native code (docs/OUTPUT.md: depth=, `frame`, `jit`): a 70-frame
# stack in three tokens, native frames (capstone's, a real library)
# interleaved with Python and Lua frames and a JIT frame, read by every
# output: the filter, -s, --report (--by module), --folded, the flame
# graph, --stats, --json, --speedscope, --pprof (go tool pprof and protoc
# read it), the leak gate and its suppressions. Then what breaks: a frame
# without its record, a continuation that does not decode, a record whose
# tokens are not its depth='s; each said, none shown as whole.
# Usage: test_hdframes.sh HEAPDECODE
. "$(dirname "$0")/lib.sh"
PROTO_DIR=$(realpath "$(dirname "$0")/../../user/decode/formats/pprof/proto")

capstone_cs_open
BASE=0x7f0000000000
NAT=$(printf '0x%x' $((BASE + 0x$V + 1)))	# cs_open+0x1 (a return address)
PY=0x4000000000000000				# synthetic: 2^62 + id
JIT=0x7fd0a4007210				# in the perf map's range below
# 70 frames, innermost first: frame K is Python frame K/10 where K % 10
# is 3, Lua frame at 7, JIT at 5, else native.
F=()
for k in $(seq 0 69); do
	if [ $((k % 10)) -eq 3 ]; then F+=($(printf '0x%x' $((PY + k / 10))))
	elif [ "$k" -eq 7 ]; then F+=(0x4000000000000010)
	elif [ "$k" -eq 5 ]; then F+=($JIT)
	else F+=($NAT); fi
done
enc() { echo "~b#size: $1, ${*:2}" | "$HD" --encode; }
T1=$(enc 4096 "${F[@]:0:31}"); T2=$(enc 0 "${F[@]:31:31}"); T3=$(enc 0 "${F[@]:62:8}")
S1=$(enc 0 "${F[@]:0:31}")
frames() { # PID
	for k in 0 1 2 3 4 5 6; do
		echo "heapsnoop: frame pid=$1 addr=0x400000000000000$k kind=python line=4$k" \
			"file=/srv/app/server.py function=handle$k"
	done
	echo "heapsnoop: frame pid=$1 addr=0x4000000000000010 kind=lua line=0 file=./mod.lua" \
		"function=function%20'mod.leaf'"
	echo "heapsnoop: jit pid=$1 start=0x7fd0a4007200 end=0x7fd0a4007400" \
		"name=JS:*leaf%20/x/alloc.js:5:14"
}
{
	echo "heapsnoop: dump reason=exit time=1.000 live=1 bytes=4096 stacks=1"
	echo "heapsnoop: map pid=5 start=$BASE end=0x7f0001000000 off=0x0 buildid=- path=$LIB"
	frames 5
	echo "heapsnoop: live pid=5 ptr=0x10 depth=70 $T1 $T2 $T3"
	echo "heapsnoop: proc pid=5 peak=4096 peak_count=1 peak_time=1.000 allocs=1" \
		"allocated=4096 frees=0 temporary=0 live=1 bytes=4096 comm=server"
	echo "heapsnoop: stack pid=5 allocs=1 allocated=4096 frees=0 temporary=0 live=1" \
		"bytes=4096 peak=4096 peak_count=1 depth=70 $S1 $T2 $T3"
	echo "heapsnoop: end-dump live=1"
} > "$T/deep.log"

# 1. The filter: each token on its own, the first with the size.
"$HD" "$T/deep.log" > "$T/filt" 2> "$T/filt.err"
check "filter: exit 0, nothing said" bash -c "test $? -eq 0 && test ! -s '$T/filt.err'"
check "filter: three ~b# records, sizes 4096, 0, 0" \
	test "$(grep 'live pid=5' "$T/filt" | grep -o '~b#size: [0-9]*' | paste -sd' ')" = \
	"~b#size: 4096 ~b#size: 0 ~b#size: 0"

# 2. -s and --report: every frame, numbered through, named.
"$HD" -s "$T/deep.log" > "$T/s" 2> "$T/s.err"
check "-s: exit 0" test $? -eq 0
check "-s: 70 frames of the live record, #0 to #69" \
	bash -c "sed -n '/live pid=5/,/proc pid=5/p' '$T/s' | grep -c '^    #' | grep -qx 70 &&
		grep -q '^    #69 ' '$T/s'"
check "-s: a Python frame, its function, kind, file:line" \
	grep -q '^    #3  0x4000000000000000 handle0 \[python\] /srv/app/server.py:40$' "$T/s"
check "-s: the Lua frame" grep -q "^    #7  0x4000000000000010 function 'mod.leaf' \[lua\] ./mod.lua$" "$T/s"
check "-s: the JIT frame, named by the perf map's range" \
	grep -q '^    #5  0x7fd0a4007210 JS:\*leaf /x/alloc.js:5:14 \[jit+0x10\]$' "$T/s"
check "-s: native frames symbolized" grep -q '^    #0  0x[0-9a-f]* cs_open+0x1 (libcapstone' "$T/s"
check "-s: no mark, the stack is whole" bash -c "! grep -q '(stack' '$T/s'"
"$HD" --report "$T/deep.log" > "$T/r" 2> "$T/r.err"
check "--report: exit 0, 70 frames, the last #69" \
	bash -c "test $? -eq 0 && grep -c '^    #' '$T/r' | grep -qx 70 && grep -q '^    #69 ' '$T/r'"
check "--report: Python frame 6 at #63" grep -q '^    #63 0x4000000000000006 handle6 \[python\] /srv/app/server.py:46$' "$T/r"
echo "heapsnoop: dump reason=exit time=2.000 live=1 bytes=1 stacks=1" > "$T/py0.log"
frames 6 >> "$T/py0.log"
echo "heapsnoop: live pid=6 ptr=0x10 $(enc 1 $PY $NAT)" >> "$T/py0.log"
echo "heapsnoop: live pid=6 ptr=0x20 $(enc 2 $JIT $NAT)" >> "$T/py0.log"
echo "heapsnoop: end-dump live=2" >> "$T/py0.log"
"$HD" --report --by module "$T/py0.log" > "$T/mod"
check "--by module: [python] and [jit]" \
	bash -c "grep -q ' in 1 allocations: \[python\]$' '$T/mod' && grep -q ' in 1 allocations: \[jit\]$' '$T/mod'"
"$HD" --report --by function "$T/py0.log" > "$T/fn"
check "--by function: the Python function at its line" grep -q ': handle0 (server.py:40)$' "$T/fn"

# 3. --folded and the flame graph: the whole chain, root first.
"$HD" --folded "$T/deep.log" > "$T/fold"
want=$(for k in $(seq 69 -1 0); do
	case ${F[$k]} in
	$NAT) printf 'cs_open' ;;
	$JIT) printf 'JS:*leaf_/x/alloc.js:5:14' ;;
	0x4000000000000010) printf "function_'mod.leaf'_(mod.lua)" ;;
	*) printf 'handle%d_(server.py:4%d)' $((k / 10)) $((k / 10)) ;;
	esac
	[ "$k" -gt 0 ] && printf ';'
done; echo ' 4096')
check "--folded: one line, 70 names, root first" test "$(cat "$T/fold")" = "$want"
"$HD" --flamegraph "$T/fg.svg" "$T/deep.log"
check "--flamegraph: the Python frames drawn" grep -q 'handle6_(server.py:46)' "$T/fg.svg"

# 4. The whole run: --stats and --json name the deep stack record.
"$HD" --stats "$T/deep.log" > "$T/st"
check "--stats: the stack record's 70 frames" \
	bash -c "grep -q '^      #69 ' '$T/st' && grep -q '#63 0x4000000000000006 handle6 \[python\]' '$T/st'"
"$HD" --json "$T/deep.log" > "$T/j"
check "--json: valid, 70 frames, kinds and lines" python3 -c "
import json, sys
d = json.load(open('$T/j'))
f = d['stacks'][0]['frames']
assert len(f) == 70, len(f)
assert f[3] == {'addr': '0x4000000000000000', 'function': 'handle0', 'file': '/srv/app/server.py', 'line': 40, 'module': '[python]', 'kind': 'python'}, f[3]
assert f[5]['kind'] == 'jit' and f[5]['function'] == 'JS:*leaf /x/alloc.js:5:14', f[5]
assert f[0]['kind'] == 'native' and f[0]['function'] == 'cs_open', f[0]
assert d['stacks'][0]['incomplete'] is None
"

# 5. speedscope and pprof, read by their own tools.
"$HD" --speedscope "$T/ss.json" "$T/deep.log"
check "--speedscope: Python frames with file and line, a sample of 70 frames" python3 -c "
import json
d = json.load(open('$T/ss.json'))
fr = d['shared']['frames']
assert {'name': 'handle2', 'file': '/srv/app/server.py', 'line': 42} in fr, fr
s = d['profiles'][0]['samples'][0]
assert len(s) == 70 and fr[s[-1]]['name'] == 'cs_open', s
"
export HOME=$T/home GOCACHE=$T/gocache GOPROXY=off GOTOOLCHAIN=local PPROF_TMPDIR=$T/pprof
mkdir -p "$HOME" "$PPROF_TMPDIR"
"$HD" --pprof "$T/p.pb.gz" "$T/deep.log"
check "--pprof: protoc decodes it against profile.proto" bash -c "gzip -dc '$T/p.pb.gz' |
	protoc --decode perftools.profiles.Profile --proto_path='$PROTO_DIR' profile.proto > '$T/p.txt'"
go tool pprof -raw "$T/p.pb.gz" > "$T/p.raw" 2> "$T/p.err"
check "--pprof: a Python location is its function at file:line, in the [python] mapping" \
	bash -c "grep -q '^ *[0-9]*: 0x4000000000000003 M=[0-9]* handle3 /srv/app/server.py:43 ' '$T/p.raw' &&
		grep -q '^[0-9]*: 0x4000000000000000/0x8000000000000000/0x0 \[python\] ' '$T/p.raw'"
check "--pprof: the JIT frame in the [jit] mapping" \
	bash -c "grep -q '0x7fd0a4007210 M=[0-9]* JS:\*leaf /x/alloc.js:5:14' '$T/p.raw' &&
		grep -q ' \[jit\] ' '$T/p.raw'"
go tool pprof -traces "$T/p.pb.gz" 2> /dev/null > "$T/p.tr"
check "--pprof: the sample's trace holds all 70 frames" \
	test "$(sed -n '/-----------+/,/-----------+/p' "$T/p.tr" | grep '^ ' | grep -cv '^ *[a-z]*:  ')" -eq 70

# 6. The leak gate: suppressions match an interpreter frame's file and function.
printf 'leak:server.py\n' > "$T/supp"
"$HD" --fail-on-leak --suppressions "$T/supp" "$T/deep.log" > /dev/null 2> "$T/g1"
check "gate: suppressed by the Python file (exit 0)" \
	bash -c "test $? -eq 0 && grep -q 'suppressed by leak:server.py: 4096 bytes' '$T/g1'"
printf "leak:^function 'mod.leaf'\$\n" > "$T/supp2"
"$HD" --fail-on-leak --suppressions "$T/supp2" "$T/deep.log" > /dev/null 2> "$T/g2"
check "gate: suppressed by the Lua function's name (exit 0)" test $? -eq 0
"$HD" --fail-on-leak "$T/deep.log" > /dev/null 2> "$T/g3"
check "gate: fails without (exit 23), the stack said with its Python frames" \
	bash -c "test $? -eq 23 && grep -q 'handle0 \[python\] /srv/app/server.py:40' '$T/g3'"

# 7. What breaks is said, never shown whole.
sed '/frame pid=5 addr=0x4000000000000006 /d' "$T/deep.log" > "$T/nof.log"
"$HD" --report "$T/nof.log" > "$T/nof" 2> "$T/nof.err"
check "a frame without its record: named so" \
	grep -q '#63 0x4000000000000006 \[interpreter frame without its frame record\]$' "$T/nof"
check "a frame without its record: said on standard error, once" \
	grep -q '^heapdecode: 1 interpreter frame(s) named by no frame record' "$T/nof.err"
BAD=$(printf '%s' "$T2" | sed 's/^\(~m#....\)./\1*/')
sed "s|$T2|$BAD|" "$T/deep.log" > "$T/bad.log"
"$HD" --report "$T/bad.log" > "$T/bad" 2> "$T/bad.err"
check "a broken continuation: exit 1, said with its line" \
	bash -c "test $? -eq 1 && grep -q 'bad.log:12: malformed ~m# record, its stack kept only up to the token that broke' '$T/bad.err'"
check "a broken continuation: the 31 frames before it, marked truncated" \
	bash -c "grep -q '^4.0 KiB .* from pid 5 (stack truncated):' '$T/bad' &&
		grep -c '^    #' '$T/bad' | grep -qx 31"
"$HD" -s "$T/bad.log" > "$T/bads" 2> /dev/null
check "a broken continuation, -s: the line unchanged, no frames" \
	bash -c "grep -qF 'depth=70 $T1 $BAD' '$T/bads' && ! grep -q '^    #' <(sed -n '/live pid=5/,/proc/p' '$T/bads')"
sed "s| $T3||" "$T/deep.log" > "$T/short.log"
"$HD" --report "$T/short.log" > "$T/short" 2> "$T/short.err"
check "tokens short of depth=: not taken (exit 1), no 62-frame stack" \
	bash -c "test $? -eq 1 && grep -q 'short.log:12: malformed ~m# record, ignored: heapsnoop record with malformed fields' '$T/short.err' &&
		! grep -q '^    #' '$T/short'"
# A stack deeper than kept: its 1024 innermost frames and cut=depth.
D=(); for k in $(seq 0 1023); do D+=($NAT); done
TOK=$(enc 5 "${D[@]:0:31}")
for k in $(seq 31 31 1023); do TOK="$TOK $(enc 0 "${D[@]:$k:31}")"; done
{ echo "heapsnoop: dump reason=exit time=1.000 live=1 bytes=5 stacks=1"
  echo "heapsnoop: map pid=5 start=$BASE end=0x7f0001000000 off=0x0 buildid=- path=$LIB"
  echo "heapsnoop: live pid=5 ptr=0x10 cut=depth depth=1024 $TOK"
  echo "heapsnoop: end-dump live=1"; } > "$T/max.log"
"$HD" --report "$T/max.log" > "$T/max"
check "1024 frames, cut=depth: all shown, marked truncated" \
	bash -c "grep -q '(stack truncated):' '$T/max' && grep -q '^    #1023 ' '$T/max'"

[ $fails -eq 0 ]
