#!/bin/bash
# test_luajit.sh - LuaJIT 2.1 (Debian's luajit, its interpreter: -joff) on
# the real binary, launched and attached (-p). Its objects come from its
# own allocator, lj_alloc_f, found in lua_newstate's code and probed with
# lua_Alloc's rules: tests/interp/lua/ljleak.lua's 500 strings of 1000
# bytes are 500 live blocks of 1028 bytes (a GCstr's 24 and the bytes
# rounded up with their NUL), exactly, each at grow's LEAK line under the
# main chunk, and none of them once freed (the state closed at exit: no
# LuaJIT block left). tests/interp/lua/chain.lua's known chain (a
# metamethod, a C function calling back into Lua, pcall, a method, a
# coroutine and its resumer) keeps 64 strings and 64 tables: at a dump
# taken while it waits, every one names each frame as LuaJIT's own
# traceback does (the script prints it: "TB" lines, where LuaJIT stops at
# the coroutine), then the resumer's (coroutine.resume, top, the main
# chunk, luajit.c's pmain), each at its chunk and line, the table at its
# own line, each run of the VM where its native frame was, the native
# frames between them kept. --interp python: the allocator probed, no Lua
# frame. A LuaJIT of no known layout (a copy whose lua_newstate asks for
# 8 more bytes): the allocator probed, its frames refused, the message
# naming its state's size and the sizes known. With the JIT on: traced,
# said, no failure.
# The same on arm64 (tests/arm64/in-guest.sh's luajit part, on the
# trixie-arm64 root's luajit: Debian 13's, OpenResty's 2.1).
# HS_LUAJIT: another luajit (Debian 12's or 13's). The kernel matrix's
# x86-64 guests (trixie roots) have none: skipped there.
# HS_LJ_SKIP: parts left out, by name: interp-python (the walker off, the
# loader's choice alone), each said.
set -u
. "$(dirname "$0")/lib.sh"
# chain.lua's lines (L_STR, L_TAB, L_RESUME, L_LOOP), lua_launch and
# lua_attach from lualib.sh; its lua_frames and expected_rest are LuaJIT's own, below.
. "$(dirname "$0")/lualib.sh"
DIR=$(realpath "$(dirname "$0")/../interp/lua")
LUAJIT=${HS_LUAJIT:-/usr/bin/luajit}
if [ ! -x "$LUAJIT" ]; then
	echo "skip test_luajit.sh: luajit skipped: the root has none (scripts/install-deps.sh installs it)"
	exit 0
fi
N=200
cd "$DIR" || exit 2
skipped() { # PART: left out by HS_LJ_SKIP (said)
	[[ " ${HS_LJ_SKIP:-} " == *" $1 "* ]] || return 1
	echo "skip $1 (HS_LJ_SKIP)"
}

leak_line() { grep -n -- "$1" ljleak.lua | head -1 | cut -d: -f1; }
L_LEAK=$(leak_line '-- LEAK$')
L_GROW=$(leak_line '^grow(tonumber')

# The Lua frames of each live record of heapdecode -s's FILE, a record a
# line: "SIZE|frame|frame|..." (a frame: "function [lua] file:line"), a C
# function's address made ADDR.
lua_frames() { # FILE
	awk '/^heapsnoop: live / { if (r != "") print r; r = ""
			if (match($0, /~b#size: [0-9]+/)) r = substr($0, RSTART + 9, RLENGTH - 9); next }
		/^heapsnoop: / { if (r != "") print r; r = ""; next }
		/ \[lua\] / && r != "" { sub(/^    #[0-9]+ +0x[0-9a-f]+ /, ""); r = r "|" $0 }
		END { if (r != "") print r }' "$1" | sed 's/|at 0x[0-9a-f]* \[lua\]/|at ADDR [lua]/g'
}

# The chain's frames below leaf as LuaJIT's traceback says them (the
# script's "TB" lines, leaf's own first), then the resumer's.
expected_rest() { # OUT
	sed -n 's/^TB \t//p' "$1" | sed 1d | awk '{
		i = index($0, ": in "); where = substr($0, 1, i - 1); fn = substr($0, i + 5)
		if (where ~ /:$/) where = substr(where, 1, length(where) - 1)
		print fn " [lua] " where }' | paste -sd'|' | tr -d '\n'
	printf "|function 'resume' [lua] [C]|function 'top' [lua] chain.lua:%s|main chunk [lua] chain.lua:%s|at ADDR [lua] [C]\n" \
		"$L_RESUME" "$L_LOOP"
}

# NAME OUT REC: every kept string and table named as LuaJIT names it.
check_chain() {
	local name=$1 out=$2 rec=$3 rest
	"$HD" -s "$rec" > "$rec.s" 2> "$rec.s.err"
	lua_frames "$rec.s" > "$rec.lua"
	rest=$(expected_rest "$out")
	check "$name: LuaJIT's own traceback of the chain printed (9 frames)" \
		test "$(grep -c '^TB 	' "$out")" -eq 9
	# 528 bytes: a GCstr's 24 and "alpha" x 100 .. n (n 137 to 200) with its NUL.
	expect_eq "$name: the 64 kept strings, each at leaf's line $L_STR, then LuaJIT's traceback's frames and the resumer's" \
		"$(grep "^528|" "$rec.lua" | grep -cF "|function 'leaf' [lua] chain.lua:$L_STR|$rest")" 64
	# 88: a table with its array part inside (colocated); keep's own array, grown there, is the 65th.
	expect_eq "$name: the 64 kept tables and keep's array at leaf's line $L_TAB" \
		"$(grep -cF "|function 'leaf' [lua] chain.lua:$L_TAB|$rest" "$rec.lua")" 65
	if ! grep -qF "|function 'leaf' [lua] chain.lua:$L_STR|$rest" "$rec.lua"; then
		echo "     want: |function 'leaf' [lua] chain.lua:$L_STR|$rest"
		grep -F "leaf" "$rec.lua" | sort | uniq -c | sort -rn | head -3 | sed 's/^/     got: /'
	fi
	# string.gsub's native frames between the callback's run and gsub's frame.
	awk '/^heapsnoop: live .*size: 528,/ { r = 1; n = 0; next } /^heapsnoop: / { r = 0 }
		r && /chainmod.lua:5$/ { s = 1; next } r && s && /function .gsub. \[lua\]/ { exit !(n > 0) }
		r && s && /^    #/ { n++ }' "$rec.s"
	check "$name: native frames kept between the callback's run and gsub's frame" test $? -eq 0
	check "$name: the strings' stacks whole to the executable's start, not cut" \
		bash -c "test \$(grep -c '^heapsnoop: live .*~b#size: 528,' '$rec.s') -eq 64 &&
			! grep '^heapsnoop: live .*~b#size: 528,' '$rec.s' | grep -q ' cut=' &&
			grep -A40 '^heapsnoop: live .*~b#size: 528,' '$rec.s' | grep -q '_start+'"
}

# NAME SCRIPT ARGS...: launched; a SIGUSR1 dump once the script says DONE,
# the records in $T/rec, its output in $T/out, heapsnoop's stderr in $T/err.
launched() {
	local name=$1; shift
	# shellcheck disable=SC2086 # heapsnoop's extra options, word-split
	lua_launch "$name" "$HS" -q ${HS_EXTRA:-} -o "$T/recs" -- "$LUAJIT" "$@"
	cat "$T/rec" "$T/rec.rest" > "$T/rec.all"
	[ -n "${HS_EXTRA:-}" ] && return
	check "$name: heapsnoop said it probes LuaJIT's allocator and reads its frames" \
		grep -q "runs LuaJIT 2.1 ($LUAJIT): its objects are live blocks (its allocator lj_alloc_f probed); its frames are read" "$T/err"
}

# The leak: 500 blocks of 1028 bytes at grow's LEAK line, none left at the end.
launched "luajit leak" -joff ljleak.lua 500
"$HD" -s "$T/rec" > "$T/leak.s" 2> /dev/null
lua_frames "$T/leak.s" > "$T/leak.lua"
expect_eq "luajit leak: 500 live blocks of 1028 bytes, each at grow's line $L_LEAK under the main chunk" \
	"$(grep -cxF "1028|function 'grow' [lua] ljleak.lua:$L_LEAK|main chunk [lua] ljleak.lua:$L_GROW|at ADDR [lua] [C]" "$T/leak.lua")" 500
expect_eq "luajit leak: no other live block of 1028 bytes" "$(grep -c '^1028|' "$T/leak.lua")" 500
# The exit's dump (heapsnoop's own, once luajit closed its state): the blocks freed.
"$HD" -s "$T/rec.all" 2> /dev/null | sed -n '/^heapsnoop: dump reason=exit/,$p' > "$T/leak.exit"
check "luajit leak: the exit's dump read" grep -q '^heapsnoop: dump reason=exit' "$T/leak.exit"
expect_eq "luajit leak: at exit (lua_close freed them) no 1028-byte block live" \
	"$(grep -c '^heapsnoop: live .*~b#size: 1028,' "$T/leak.exit")" 0
check_no_loss "luajit leak: no events lost" "$T/err"
sed -n 's/^heapsnoop: pid [0-9]* runs LuaJIT/runs LuaJIT/p' "$T/err" | head -n 1

# The Lua walker off (--interp python): the allocator probed all the same, no Lua frame.
if ! skipped interp-python; then
	HS_EXTRA="--interp python" launched "luajit --interp python" -joff ljleak.lua 500
	"$HD" -s "$T/rec" > "$T/off.s" 2> /dev/null
	check "luajit --interp python: said its objects are live blocks, its frames not read" \
		grep -q "runs LuaJIT ($LUAJIT): its objects are live blocks (its allocator lj_alloc_f probed); its frames are not read" "$T/err"
	expect_eq "luajit --interp python: the 500 blocks of 1028 bytes live" \
		"$(grep -c '^heapsnoop: live .*~b#size: 1028,' "$T/off.s")" 500
	check "luajit --interp python: no Lua frame" bash -c "! grep -q ' \[lua\] ' '$T/off.s'"
fi

# A LuaJIT whose GG_State is no known build's: a copy of luajit with
# lua_newstate's size (mov $SIZE, %ecx; movz x3, #SIZE on arm64) 8 bytes
# larger, the one place it is said (it allocates 8 bytes more, nothing
# else changes).
other_size() { # LUAJIT COPY: the copy made; prints the new size
	python3 - "$1" "$2" << 'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
arm64 = struct.unpack_from('<H', d, 18)[0] == 183
for size in (6216, 6280) if arm64 else (6240, 6304):
    enc = (lambda n: struct.pack('<I', 0xd2800003 | n << 5)) if arm64 else \
        (lambda n: b'\xb9' + struct.pack('<I', n))
    if d.count(enc(size)) == 1:
        i = d.index(enc(size))
        d[i:i + len(enc(size))] = enc(size + 8)
        open(sys.argv[2], 'wb').write(d)
        print(size + 8)
        sys.exit(0)
sys.exit(1)
EOF
}
if size=$(other_size "$LUAJIT" "$T/luajit.other") && chmod +x "$T/luajit.other"; then
	LUAJIT=$T/luajit.other HS_EXTRA="--interp lua" launched "luajit of another size" -joff ljleak.lua 500
	"$HD" -s "$T/rec" > "$T/other.s" 2> /dev/null
	sed -n 's/^heapsnoop: pid [0-9]* runs LuaJIT/runs LuaJIT/p' "$T/err" | head -n 1
	check "luajit of another size: its allocator probed, its frames not read: its state's size and the known ones said" \
		grep -q "runs LuaJIT ($T/luajit.other): its objects are live blocks (its allocator lj_alloc_f probed); its frames are not read: its state is $size bytes, not the [0-9]* or [0-9]* of a LuaJIT 2.1 (GC64) whose layout heapsnoop knows" "$T/err"
	expect_eq "luajit of another size: the 500 blocks of 1028 bytes live" \
		"$(grep -c '^heapsnoop: live .*~b#size: 1028,' "$T/other.s")" 500
	check "luajit of another size: no Lua frame" bash -c "! grep -q ' \[lua\] ' '$T/other.s'"
else
	check "luajit of another size: lua_newstate's size found once in $LUAJIT to change" false
fi

launched "luajit launched" -joff chain.lua loop "$N"
check_chain "luajit launched" "$T/out" "$T/rec"

# Attached (-p) to luajit waiting before the chain: its state found in its stack.
attached() {
	local name=$1
	lua_attach "$name" "$LUAJIT" -joff chain.lua wait "$N" || return
	check "$name: heapsnoop probed its allocator, found its state and reads its frames" \
		grep -q 'runs LuaJIT 2.1 .* its objects are live blocks (its allocator lj_alloc_f probed), those it allocated before tracing began not seen; its frames are read' "$T/perr"
	check_chain "$name" "$T/pout" "$T/prec"
}
attached "luajit -p"

# The JIT on: its traces' allocations are still blocks; the run ends cleanly.
launched "luajit, JIT on" chain.lua loop "$N"
"$HD" -s "$T/rec" > "$T/jit.s" 2> /dev/null
expect_eq "luajit, JIT on: the 64 kept strings live" \
	"$(grep -c '^heapsnoop: live .*~b#size: 528,' "$T/jit.s")" 64
finish
