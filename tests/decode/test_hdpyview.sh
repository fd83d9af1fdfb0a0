#!/bin/bash
# test_hdpyview.sh - heapdecode --frames (a Python program's stacks as
# Python tracebacks) and the flame graph's kinds of frame: stacks of
# native frames (capstone's, a real library) interleaved with Python,
# Lua and JIT frames; --frames python keeps the Python frames alone and
# one [native] frame at the leaf, merging stacks that differ only in
# native frames; --folded without it is unchanged; the SVG puts each
# frame in its kind's class (f-native, f-python, f-lua, f-jit) and hue,
# the title in KiB.
# Usage: test_hdpyview.sh HEAPDECODE
. "$(dirname "$0")/lib.sh"

capstone_cs_open
BASE=0x7f0000000000
NAT=$(printf '0x%x' $((BASE + 0x$V + 1)))	# cs_open+0x1
NAT2=$(printf '0x%x' $((BASE + 0x$V + 5)))	# cs_open+0x5: another native frame
PY0=0x4000000000000000 PY1=0x4000000000000001 LUA=0x4000000000000002
JIT=0x7fd0a4007210
enc() { echo "~b#size: $1, ${*:2}" | "$HD" --encode; }
{
	echo "heapsnoop: dump reason=exit time=1.000 live=4 bytes=16484 stacks=4"
	echo "heapsnoop: map pid=5 start=$BASE end=0x7f0001000000 off=0x0 buildid=- path=$LIB"
	echo "heapsnoop: frame pid=5 addr=$PY0 kind=python line=20 file=/srv/app.py function=handle_request"
	echo "heapsnoop: frame pid=5 addr=$PY1 kind=python line=10 file=/srv/app.py function=serve"
	echo "heapsnoop: frame pid=5 addr=$LUA kind=lua line=3 file=./mod.lua function=lua_leaf"
	echo "heapsnoop: jit pid=5 start=0x7fd0a4007200 end=0x7fd0a4007400 name=JS:jitted"
	# innermost first; the first two differ only in native frames
	echo "heapsnoop: live pid=5 ptr=0x10 $(enc 12288 $NAT $NAT $PY0 $NAT $PY1 $NAT)"
	echo "heapsnoop: live pid=5 ptr=0x20 $(enc 2048 $NAT2 $PY0 $NAT2 $PY1 $NAT)"
	echo "heapsnoop: live pid=5 ptr=0x30 $(enc 100 $NAT $NAT)"
	echo "heapsnoop: live pid=5 ptr=0x40 $(enc 2048 $NAT $JIT $LUA $NAT $PY1 $NAT)"
	echo "heapsnoop: end-dump live=4"
} > "$T/py.log"

# 1. --folded: unchanged by the flame graph's kinds; --frames python: Python alone.
"$HD" --folded "$T/py.log" > "$T/all.folded" 2> "$T/err"
check "--folded: native frames kept, no kind marks" \
	bash -c "grep -q 'cs_open;serve_(app.py:10);cs_open;handle_request_(app.py:20);cs_open;cs_open 12288' '$T/all.folded' &&
		! grep -q '_\[python\]\|_\[lua\]\|_\[jit\]' '$T/all.folded'"
"$HD" --frames python --folded "$T/py.log" > "$T/py.folded" 2> "$T/err"
check "--frames python --folded: exit 0, nothing said" bash -c "test $? -eq 0 && test ! -s '$T/err'"
check "--frames python --folded: stacks differing in native frames merged, [native] at the leaf" \
	grep -qx 'serve_(app.py:10);handle_request_(app.py:20);\[native\] 14336' "$T/py.folded"
check "--frames python --folded: Lua and JIT frames left out" \
	grep -qx 'serve_(app.py:10);\[native\] 2048' "$T/py.folded"
check "--frames python --folded: a stack with no Python frame is [native] alone" \
	grep -qx '\[native\] 100' "$T/py.folded"
check "--frames python --folded: no native frame's name" bash -c "! grep -q cs_open '$T/py.folded'"
"$HD" --frames interpreter --folded "$T/py.log" > "$T/in.folded"
check "--frames interpreter: Lua's frame too, JIT code not" \
	grep -qx "serve_(app.py:10);lua_leaf_(mod.lua:3);\[native\] 2048" "$T/in.folded"

# 2. --report: a Python traceback.
"$HD" --frames python --report "$T/py.log" > "$T/r" 2> "$T/err"
check "--frames python --report: the Python functions, innermost first, under [native]" \
	bash -c "grep -A3 '^14.0 KiB' '$T/r' | tail -3 | tr -s ' ' | cut -d' ' -f4- | paste -sd'|' |
		grep -qx '\[native\]|handle_request \[python\] /srv/app.py:20|serve \[python\] /srv/app.py:10'"
check "--frames python --report: no native frame's name" bash -c "! grep -q cs_open '$T/r'"

# 3. The flame graph: kinds of frame, their classes and hues, KiB.
hue() { # SVG CLASS DATA-N: the rgb() of that frame
	grep -o "<g class=\"f $2\"[^>]*data-n=\"$3\">.*fill=\"rgb([0-9,]*)\"" "$1" | head -1 |
		grep -o 'rgb([0-9,]*)' | tr -d 'rgb()'
}
in_range() { # R,G,B R0 R1 G0 G1 B0 B1
	local r g b; IFS=, read -r r g b <<< "$1"
	[ -n "$b" ] && [ "$r" -ge "$2" ] && [ "$r" -le "$3" ] && [ "$g" -ge "$4" ] &&
		[ "$g" -le "$5" ] && [ "$b" -ge "$6" ] && [ "$b" -le "$7" ]
}
"$HD" --flamegraph "$T/all.svg" "$T/py.log" 2> "$T/err"
check "--flamegraph: exit 0" test $? -eq 0
check "flame graph: the title in KiB, exact bytes beside" \
	grep -q 'id="title"[^<]*(16.1 KiB, 16484 bytes)' "$T/all.svg"
check "flame graph: hover in KiB and bytes" \
	grep -q '<title>handle_request_(app.py:20) (14.0 KiB, 14336 bytes, 86.97%)</title>' "$T/all.svg"
check "flame graph: a Python frame in class f-python, blue-green" \
	in_range "$(hue "$T/all.svg" f-python 'handle_request_(app.py:20)')" 40 89 150 199 120 169
check "flame graph: a native frame in class f-native, warm" \
	in_range "$(hue "$T/all.svg" f-native cs_open)" 205 254 0 179 0 54
check "flame graph: the Lua frame in class f-lua, purple" \
	in_range "$(hue "$T/all.svg" f-lua 'lua_leaf_(mod.lua:3)')" 150 199 80 129 200 249
check "flame graph: the JIT frame in class f-jit, yellow-green" \
	in_range "$(hue "$T/all.svg" f-jit 'JS:jitted')" 160 209 205 249 30 79
check "flame graph: no kind mark left in a frame's name" \
	bash -c "! grep -q '_\[python\]\|_\[lua\]\|_\[jit\]' '$T/all.svg'"
check "flame graph: a legend naming the four kinds" \
	bash -c "test \"\$(grep -o 'class=\"legend\" data-kind=\"[a-z-]*\"' '$T/all.svg' | cut -d'\"' -f4 | paste -sd,)\" = f-native,f-python,f-lua,f-jit"
"$HD" --frames python --flamegraph "$T/py.svg" "$T/py.log"
check "--frames python --flamegraph: the only native frame is [native]" \
	bash -c "grep -o '<g class=\"f f-native\"[^>]*data-n=\"[^\"]*\"' '$T/py.svg' | grep -o 'data-n=\"[^\"]*\"' | sort -u | grep -qx 'data-n=\"\[native\]\"'"
check "--frames python --flamegraph: the two Python frames f-python" \
	bash -c "grep -c '<g class=\"f f-python\"' '$T/py.svg' | grep -qx 2"

# 4. What --frames refuses.
"$HD" --frames jit --folded "$T/py.log" > /dev/null 2> "$T/err"
check "--frames jit: refused, exit 2, said" bash -c "test $? -eq 2 && grep -q 'frames takes' '$T/err'"
"$HD" --frames python --json "$T/py.log" > /dev/null 2> "$T/err"
check "--frames with --json: refused, exit 2" bash -c "test $? -eq 2 && grep -q 'frames views' '$T/err'"

echo "$fails failed"
exit $((fails > 0))
