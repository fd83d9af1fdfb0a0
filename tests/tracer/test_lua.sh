#!/bin/bash
# test_lua.sh - Lua frames among the native ones, on Debian's real lua5.4
# and lua5.1, launched and attached (-p): tests/interp/lua/chain.lua's
# known chain (a metamethod, a C function calling back into Lua, pcall, a
# method, a coroutine and its resumer) allocates a string
# (ALLOC_STRING) and a table (ALLOC_TABLE) and keeps the last 64 of
# each; at a dump taken while it waits, every one of those live blocks
# names each Lua function as Lua's own traceback does (the one the
# script prints of the same chain), with its chunk and line, in order,
# the coroutine's resumer after it (Tarantool's order), each function
# where the interpreter loop's native frame was, the native frames
# between them kept, the stack whole to _start. The table is at its own
# line: its allocation runs before the VM saves its pc (OP_NEWTABLE),
# which the interpreter loop's register gives. Then lua5.4 again with no
# debug files to be seen (a mount namespace with /usr/lib/debug empty):
# the interpreter loop found by its FDE, the same frames. The walker off
# (--interp python): no Lua frame. LuaJIT: tests/tracer/test_luajit.sh.
# HS_LUA54, HS_LUA51: other copies of Debian's interpreters (the kernel
# matrix's guests run the build directory's).
set -u
. "$(dirname "$0")/lib.sh"
# Debian's interpreters; the kernel matrix's guests run copies (in-guest.sh).
LUA54=${HS_LUA54:-/usr/bin/lua5.4}
LUA51=${HS_LUA51:-/usr/bin/lua5.1}
N=200
. "$(dirname "$0")/lualib.sh"

# LEAF REST LUAFILE ERRFILE: for a count that is off, what the records
# under LEAF were: their sizes, the chains below LEAF that are not REST
# (the three most common), heapsnoop's accounting line.
explain_count() {
	local leaf=$1 rest=$2 luafile=$3 err=$4
	echo "     sizes of the records at '$leaf' with the chain: $(grep -F "|$leaf|$rest" "$luafile" |
		cut -d'|' -f1 | sort -n | uniq -c | awk '{ printf "%s x %s bytes; ", $1, $2 }')"
	grep -F "|$leaf|" "$luafile" | grep -vF "|$leaf|$rest" | sort | uniq -c | sort -rn | head -3 |
		sed 's/^/     other chain: /'
	grep -h 'events lost\|EVENTS LOST\|RECORDS LOST' "$err" | sed 's/^/     heapsnoop: /'
}

# NAME LUA OUT REC ERR: every kept string and table of the chain named as
# Lua names it; nothing lost (heapsnoop's stderr ERR).
check_chain() {
	local name=$1 lua=$2 out=$3 rec=$4 err=$5 leaf resume rest got
	"$HD" -s "$rec" > "$rec.s" 2> "$rec.s.err"
	lua_frames "$rec.s" > "$rec.lua"
	case $lua in *5.1) leaf="function 'leaf'"; resume="function 'resume'" ;;
		*) leaf="upvalue 'leaf'"; resume="function 'coroutine.resume'" ;; esac
	rest=$(expected_rest "$out" "$resume")
	# 528 bytes: a TString's 24 and "alpha" x 100 .. n (n 137 to 200) with
	# its NUL, in both; 5.1's string table, grown there too, is not one.
	expect_eq "$name: the 64 kept strings, each at leaf's line $L_STR, then Lua's traceback's frames and the resumer's" \
		"$(grep "^528|" "$rec.lua" | grep -F "|$leaf [lua] $CHAIN:$L_STR|$rest" | wc -l)" 64
	# keep's own array part, grown to 64 slots there, is the 129th.
	got=$(grep -cF "|$leaf [lua] $CHAIN:$L_TAB|$rest" "$rec.lua")
	expect_eq "$name: the 64 kept tables, their arrays and keep's at leaf's line $L_TAB (OP_NEWTABLE: the loop's pc)" \
		"$got" 129
	[ "$got" = 129 ] || explain_count "$leaf [lua] $CHAIN:$L_TAB" "$rest" "$rec.lua" "$err"
	# The string's record: natives between the Lua frames, to _start, no cut.
	lua_check_natives "$name" "$rec.lua" "$rec.s" "|$leaf [lua] $CHAIN:$L_STR|$rest"
	check "$name: no interpreter loop frame left (each replaced by its Lua frames)" \
		bash -c "! grep -F '$leaf' -A60 '$rec.s' | grep -q 'luaV_execute'"
	# Whole: no cut= on any kept string's record, its outermost frame in
	# the interpreter's executable (_start, named where its debug file is;
	# else lua5.4+0xOFF, its place in the file).
	check "$name: the strings' stacks whole to the executable's start, not cut" \
		bash -c "test \$(grep -c '^heapsnoop: live .*~b#size: 528,' '$rec.s') -eq 64 &&
			! grep '^heapsnoop: live .*~b#size: 528,' '$rec.s' | grep -q ' cut=' &&
			awk '/^heapsnoop: live .*size: 528,/ { r = 1; next } r && /^    #/ { last = \$0; next }
			     r { if (last !~ / \\($(basename "$lua")\\)| $(basename "$lua")\\+0x/) bad = 1; r = 0 }
			     END { if (r && last !~ / \\($(basename "$lua")\\)| $(basename "$lua")\\+0x/) bad = 1; exit bad }' '$rec.s'"
}

# NAME LUA [WRAPPER...]: launched, a SIGUSR1 dump once the chain ran.
launched() {
	local name=$1 lua=$2; shift 2
	lua_launch "$name" "$@" "$HS" -q -o "$T/recs" -- "$lua" "$CHAIN" loop "$N"
	check "$name: heapsnoop said it reads the Lua frames" grep -q 'runs Lua 5\.[14] .* its frames are read' "$T/err"
	check_chain "$name" "$lua" "$T/out" "$T/rec" "$T/err"
	check_no_loss "$name: no events lost" "$T/err"
}

# NAME LUA: attached (-p) to the interpreter waiting before the chain.
attached() {
	local name=$1 lua=$2
	lua_attach "$name" "$lua" "$CHAIN" wait "$N" || return
	check "$name: heapsnoop found the state and reads the frames" \
		grep -q 'runs Lua 5\.[14] .* its frames are read' "$T/perr"
	check_chain "$name" "$lua" "$T/pout" "$T/prec" "$T/perr"
	check_no_loss "$name: no events lost" "$T/perr"
}

for lua in "$LUA54" "$LUA51"; do
	if [ ! -x "$lua" ]; then
		echo "skip $lua: not installed (scripts/install-deps.sh installs it)"
		continue
	fi
	v=$(basename "$lua")
	launched "$v launched" "$lua"
	# How heapsnoop found lua5.4's loop: by its debug file's symbol, or not.
	[ "$lua" = "$LUA54" ] && cp "$T/err" "$T/err54"
	attached "$v -p" "$lua"
done
# No debug files: the interpreter loop by the largest FDE (where there are some).
if [ -x "$LUA54" ] && [ -d /usr/lib/debug/.build-id ] && unshare -m true 2> /dev/null; then
	launched "lua5.4 without debug files" "$LUA54" unshare -m --propagation private \
		sh -c 'mount -t tmpfs none /usr/lib/debug && exec "$@"' sh
	check "... the interpreter loop found by its FDE" grep -q 'by the largest FDE' "$T/err"
fi
# The walker off (--interp python): the interpreter loop's frames as they are.
if [ -x "$LUA54" ]; then
	"$HS" -q --interp python -o "$T/off" -- "$LUA54" "$CHAIN" loop 20 < /dev/null \
		> /dev/null 2> "$T/offerr"
	"$HD" -s "$T/off" > "$T/off.s" 2> /dev/null
	check "--interp python: Lua's frames not read, not said" \
		bash -c "! grep -q 'runs Lua' '$T/offerr' && ! grep -q ' \[lua\] ' '$T/off.s'"
	# The loop's native frames, by name where the interpreter's debug file is.
	if grep -q "its debug file's symbol" "$T/err54" 2> /dev/null; then
		check "... the run's stacks through luaV_execute's native frames" \
			grep -q ' luaV_execute+' "$T/off.s"
	else
		check "... the run's stacks through the interpreter's native frames" \
			grep -q "^    #[0-9]* .* ($(basename "$LUA54"))" "$T/off.s"
	fi
fi
finish
