#!/bin/bash
# test_preload_lua.sh - PUC Lua frames under heapsnoop --preload
# (docs/COLLECTOR.md, "Lua frames"): the collector walks the state in the
# process and names each new frame there, heapsnoop splices them, on
# Debian's real lua5.4 and lua5.1 (HS_LUA54, HS_LUA51 name others), with
# test_lua.sh's chain (tests/interp/lua/chain.lua: a metamethod, a C
# function calling back into Lua, pcall, a method, a coroutine and its
# resumer) and lua/plexit.lua:
#   kill -9 of an interpreter waiting after the chain ran 200 times (a
#     copy of the scripts, removed before the log is read): its final dump
#     holds exactly the 64 kept strings (528 bytes), each named as Lua's
#     own traceback names the chain (the script prints it), in order,
#     the resumer after the coroutine, with chunk and line; the tables
#     under the same chain; native frames kept between the Lua ones, no
#     luaV_execute frame left, whole to the executable's start;
#   os.exit(0, false) (the state not closed): the 10 strings of 1025
#     bytes under inner <- outer <- the main chunk, exactly; and so when
#     it ended before heapsnoop took its hello (heapsnoop stopped): its
#     binary and names by its table alone; and when it ends while
#     heapsnoop reads its binary (gdb holds heapsnoop in lua_find__file);
#   two states on two threads of an embedder (prog_luastates, the VM in
#     liblua5.4.so.0): each thread's 10 strings under its chain, its
#     global named from its own state, both named at once;
#   --no-interp, and the collector alone: native frames only.
# No BPF: runs as any user. ~1 s.
set -u
. "$(dirname "$0")/../tracer/lib.sh"
. "$(dirname "$0")/../tracer/lualib.sh"
. "$(dirname "$0")/pllib.sh"
LUA54=${HS_LUA54:-/usr/bin/lua5.4}
LUA51=${HS_LUA51:-/usr/bin/lua5.1}
EXIT=$(cd "$(dirname "$0")/lua" && pwd)/plexit.lua
x_line() { grep -n -- "$1" "$EXIT" | head -1 | cut -d: -f1; }
X_ALLOC=$(x_line '-- ALLOC$')
X_OUTER=$(x_line '^	inner(i)$')
X_MAIN=$(x_line '^for i = 1, 10 do outer(i) end$')
for l in "$LUA54" "$LUA51"; do
	[ -x "$l" ] || { echo "FAIL $l is not there: scripts/install-deps.sh installs Debian's lua5.4 and lua5.1"; exit 1; }
done

# NAME LUA LEAF RESUME TABLES: the chain 200 times, then kill -9; TABLES:
# its tables' (and their arrays') live blocks under the chain.
killed() {
	local name=$1 lua=$2 leaf=$3 resume=$4 tables=$5 hs lp rest at_tab
	rm -rf "$T/gone" && mkdir "$T/gone" && cp "$CHAIN" "$(dirname "$CHAIN")/chainmod.lua" "$T/gone/"
	coproc K { exec "$HS" --preload -v -o "$T/k9" -- "$lua" "$T/gone/chain.lua" loop 200 2> "$T/k9.err"; }
	hs=$K_PID
	: > "$T/k9.out"
	wait_line "${K[0]}" '^DONE' "$T/k9.out" || echo "FAIL $name: the script did not finish"
	lp=$(pgrep -P "$hs")
	kill -9 "$lp"
	wait "$hs"
	check "$name: heapsnoop exits with 137 (the command's signal)" test $? -eq 137
	rm -rf "$T/gone"
	check "$name: it says the collector reads and names its frames" \
		grep -q "pid $lp: Lua 5\.[14], its frames read and named by its collector" "$T/k9.err"
	"$HD" -s "$T/k9" > "$T/k9.s" 2> /dev/null
	lua_frames "$T/k9.s" > "$T/k9.lua"
	# The script's names are its copy's, gone now: from the log alone.
	local CHAIN=$T/gone/chain.lua
	rest=$(expected_rest "$T/k9.out" "$resume")
	expect_eq "$name: the 64 kept strings (528 bytes), each at leaf's line $L_STR, then Lua's traceback's frames and the resumer's" \
		"$(grep "^528|" "$T/k9.lua" | grep -cF "|$leaf [lua] $CHAIN:$L_STR|$rest")" 64
	expect_eq "$name: 64 live strings of 528 bytes in the final dump, no other" \
		"$(grep -c '^heapsnoop: live .*~b#size: 528,' "$T/k9.s")" 64
	# A table is made before the VM saves its pc (OP_NEWTABLE): at the last saved one's line.
	at_tab=$(grep -cF "|$leaf [lua] $CHAIN:$L_TAB|$rest" "$T/k9.lua")
	expect_eq "$name: the chain's other blocks: its tables and their arrays at line $L_STR (the pc Lua saved last), keep's array at $L_TAB" \
		"$(grep -v "^528|" "$T/k9.lua" | grep -cF "|$leaf [lua] $CHAIN:$L_STR|$rest") $at_tab" "$tables 1"
	lua_check_natives "$name" "$T/k9.lua" "$T/k9.s" "|$leaf [lua] $CHAIN:$L_STR|$rest"
	check "$name: no interpreter loop frame left (each replaced by its Lua frames)" \
		bash -c "! grep -q 'luaV_execute' '$T/k9.s'"
	check "$name: the strings' stacks whole to the executable's start, not cut" \
		bash -c "! grep '^heapsnoop: live .*~b#size: 528,' '$T/k9.s' | grep -q ' cut=' &&
			awk '/^heapsnoop: live .*size: 528,/ { r = 1; next } r && /^    #/ { last = \$0; next }
			     r { if (last !~ / \\($(basename "$lua")\\)/) bad = 1; r = 0 }
			     END { if (r && last !~ / \\($(basename "$lua")\\)/) bad = 1; exit bad }' '$T/k9.s'"
	check "$name: the dump names its frames (frame records, kind=lua)" \
		grep -q "^heapsnoop: frame pid=$lp addr=0x4[0-9a-f]* kind=lua line=$L_STR file=.*chain\.lua function=${leaf// /%20}\$" "$T/k9"
	check "$name: no frame named \"?\" but lua.c's pmain, no NOT RECORDED" \
		bash -c "! grep -v '^528|' '$T/k9.lua' | tr '|' '\n' | grep -v '^[0-9]*$' | grep -q '^? \[lua\] ?' &&
			 ! grep -q 'NOT RECORDED\|are named \"?\"' '$T/k9.err'"
}

# The tables: 64 kept and their 64 arrays; 5.1's string table, grown there too, one more.
killed "lua5.4 kill -9" "$LUA54" "upvalue 'leaf'" "function 'coroutine.resume'" 128
killed "lua5.1 kill -9" "$LUA51" "function 'leaf'" "function 'resume'" 129

# os.exit(0, false): lua.c does not close the state; its blocks live at the exit dump.
"$HS" --preload -o "$T/exit" -- "$LUA54" "$EXIT" > /dev/null 2> "$T/exit.err"
check "os.exit(0, false): heapsnoop exits with 0" test $? -eq 0
"$HD" -s "$T/exit" > "$T/exit.s" 2> /dev/null
expect_eq "os.exit(0, false): the 10 strings (1025 bytes) under inner <- outer <- the main chunk <- pmain" \
	"$(lua_frames "$T/exit.s" | grep -cxF "1025|upvalue 'inner' [lua] $EXIT:$X_ALLOC|function 'outer' [lua] $EXIT:$X_OUTER|main chunk [lua] $EXIT:$X_MAIN|? [lua] [C]")" 10
expect_eq "os.exit(0, false): no other live string of 1025 bytes" \
	"$(grep -c '^heapsnoop: live .*~b#size: 1025,' "$T/exit.s")" 10
check "os.exit(0, false): no frames said unnamed" bash -c "! grep -q 'not named' '$T/exit.err'"

# A Lua that ended before heapsnoop took its hello (heapsnoop stopped
# meanwhile; a zombie has no mappings): its binary by its table's module
# records, its frames by the table's name records, as if seen running.
# The same route names one that dies while its binary is read (its
# map_files gone between two opens: 2 runs of 6 on a loaded machine).
ended_first "$T/late" '^made' "$LUA54" "$EXIT"
lua_pid=$late_pid
"$HD" -s "$T/late" > "$T/late.s" 2> /dev/null
expect_eq "ended first: the 10 strings (1025 bytes) under inner <- outer <- the main chunk <- pmain" \
	"$(lua_frames "$T/late.s" | grep -cxF "1025|upvalue 'inner' [lua] $EXIT:$X_ALLOC|function 'outer' [lua] $EXIT:$X_OUTER|main chunk [lua] $EXIT:$X_MAIN|? [lua] [C]")" 10
check "ended first: its frames read and named, not said unnamed, no cut=order" \
	bash -c "grep -q 'pid $lua_pid: Lua 5\.4, its frames read and named' '$T/late.err' &&
		 ! grep -q 'not named' '$T/late.err' && ! grep -q 'cut=.*order' '$T/late'"

# One that dies while heapsnoop reads its binary: heapsnoop held by gdb in
# lua_find__file (its mappings read, the file not opened yet) while the
# interpreter runs plexit.lua to its end; its map_files are gone then:
# its binary by its table, its frames named (before: "not named", 2 runs
# of 6 on a loaded machine).
mkfifo "$T/go2"
printf 'echo $$ > %s\nexec %s -e "io.open(\\"%s\\"):read()" %s\n' "$T/rpid" "$LUA54" "$T/go2" "$EXIT" > "$T/race.sh"
gdb -batch -nx -ex "set args --preload -v -o $T/race -- sh $T/race.sh > /dev/null 2> $T/race.err" \
	-ex 'tbreak lua_find__file' -ex run \
	-ex "shell echo go > $T/go2 && python3 -c \"import os, select; select.select([os.pidfd_open(\$(cat $T/rpid))], [], [], 60)\"" \
	-ex continue "$HS" > "$T/gdb.out" 2>&1
check "died while read: heapsnoop held in lua_find__file, the interpreter gone meanwhile" \
	grep -q 'Temporary breakpoint 1, lua_find__file' "$T/gdb.out"
"$HD" -s "$T/race" > "$T/race.s" 2> /dev/null
expect_eq "died while read: the 10 strings (1025 bytes) under inner <- outer <- the main chunk <- pmain" \
	"$(lua_frames "$T/race.s" | grep -cxF "1025|upvalue 'inner' [lua] $EXIT:$X_ALLOC|function 'outer' [lua] $EXIT:$X_OUTER|main chunk [lua] $EXIT:$X_MAIN|? [lua] [C]")" 10
check "died while read: its frames not said unnamed" bash -c "! grep -q 'not named' '$T/race.err'"

# Two states on two threads (prog_luastates: an embedder on liblua5.4.so.0),
# their first stacks named at once: each named from its own state's
# package.loaded (work: `function 'work'` in both, not `global 'work'`).
echo | "$HS" --preload -o "$T/states" -- "$PROGS/prog_luastates" > "$T/states.out" 2> "$T/states.err"
check "two states: heapsnoop exits with 0" test $? -eq 0
"$HD" -s "$T/states" > "$T/states.s" 2> /dev/null
for sz in 700 800; do
	expect_eq "two states: the 10 strings of $sz bytes under string.rep <- leaf <- work <- the chunk" \
		"$(lua_frames "$T/states.s" | grep -cxF "$sz|function 'string.rep' [lua] [C]|upvalue 'leaf' [lua] states:3|function 'work' [lua] states:6|main chunk [lua] states:9")" 10
done
expect_eq "two states: no other live block of 700 or 800 bytes" \
	"$(grep -c '^heapsnoop: live .*~b#size: [78]00,' "$T/states.s")" 20

# --no-interp: native frames (the interpreter loop's), no frame record.
"$HS" --preload --no-interp -o "$T/noi" -- "$LUA54" "$EXIT" > /dev/null 2> "$T/noi.err"
"$HD" -s "$T/noi" > "$T/noi.s" 2> /dev/null
check "--no-interp: native frames only, luaV_execute among them" \
	bash -c "grep -q luaV_execute '$T/noi.s' && ! grep -q '\[lua\]' '$T/noi.s' &&
		 ! grep -q '^heapsnoop: frame ' '$T/noi'"
expect_eq "--no-interp: the 10 strings all the same" "$(grep -c '^heapsnoop: live .*~b#size: 1025,' "$T/noi.s")" 10

# Alone (LD_PRELOAD by hand): no heapsnoop to read the table's records, no walk.
HEAPSNOOP_INTERP=lua HEAPSNOOP_OUTPUT=$T/alone LD_PRELOAD=$OUT/libheapsnoop_preload.so \
	"$LUA54" "$EXIT" > /dev/null 2> "$T/alone.err"
"$HD" -s "$T/alone" > "$T/alone.s" 2> /dev/null
check "alone: native frames only, every line encoded" \
	bash -c "grep -q luaV_execute '$T/alone.s' && ! grep -q '\[lua\]' '$T/alone.s' &&
		 ! grep -q 'unencodable' '$T/alone'"

finish
