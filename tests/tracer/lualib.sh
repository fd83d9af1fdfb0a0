# shellcheck shell=bash
# lualib.sh - helpers for the tests of Lua frames (sourced after lib.sh):
# test_lua.sh and test_luajit.sh (the BPF tracer) and
# tests/collector/test_preload_lua.sh (heapsnoop --preload) read
# tests/interp/lua/chain.lua's stacks alike.
CHAIN=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../interp/lua/chain.lua")

line_of() { grep -n -- "$1" "$CHAIN" | head -1 | cut -d: -f1; }
L_STR=$(line_of '-- ALLOC_STRING$')
L_TAB=$(line_of '-- ALLOC_TABLE$')
L_RESUME=$(line_of 'coroutine.resume(co, s)')
L_LOOP=$(line_of 'for i = 1, count do top')

# The Lua frames of each live record of heapdecode -s's output FILE, one
# record a line: "SIZE|frame|frame|..." (a frame: "function [lua] file:line").
lua_frames() { # FILE
	awk '/^heapsnoop: live / { if (r != "") print r; r = ""; n = 0
			if (match($0, /~b#size: [0-9]+/)) r = substr($0, RSTART + 9, RLENGTH - 9); next }
		/^heapsnoop: / { if (r != "") print r; r = ""; next }
		/ \[lua\] / && r != "" { sub(/^    #[0-9]+ +0x[0-9a-f]+ /, ""); r = r "|" $0 }
		END { if (r != "") print r }' "$1"
}

# The chain's frames below leaf as Lua's traceback says them (the script's
# "TB" lines, leaf's own first), then the resumer's: coroutine.resume,
# top, the main chunk, lua.c's pmain.
expected_rest() { # OUT RESUME_NAME
	sed -n 's/^TB \t//p' "$1" | sed 1d | awk '{
		if ($0 ~ /^\[C\]: \?$/) { print "? [lua] [C]"; next }
		i = index($0, ": in "); where = substr($0, 1, i - 1); fn = substr($0, i + 5)
		if (where ~ /:$/) where = substr(where, 1, length(where) - 1)
		print fn " [lua] " where }' | paste -sd'|' | tr -d '\n'
	printf '|%s [lua] [C]|function '"'"'top'"'"' [lua] %s:%s|main chunk [lua] %s:%s|? [lua] [C]\n' \
		"$2" "$CHAIN" "$L_RESUME" "$CHAIN" "$L_LOOP"
}


# NAME LUAFILE SFILE WANT: the check that heapdecode -s's SFILE keeps
# native frames between the metamethod and the function it calls (a
# chainmod.lua frame) in the record of the string WANT's first frame
# names (WANT: "|leaf's frame|the rest", as in LUAFILE, lua_frames'
# output); when no record of LUAFILE has WANT, what its records under
# leaf's frame have instead said (the three most common).
lua_check_natives() {
	local name=$1 luafile=$2 sfile=$3 want=$4 leaf
	leaf=${want#|}
	leaf=${leaf%%|*}
	if ! grep -qF -- "$want" "$luafile"; then
		echo "     want: $want"
		grep -F "${leaf%% \[lua\]*}" "$luafile" | sort | uniq -c | sort -rn | head -3 | sed 's/^/     got: /'
	fi
	awk -v leaf="$leaf" '
		/^heapsnoop: live / { in_r = 0; seen = 0 }
		index($0, leaf) { in_r = 1 }
		in_r && / \[lua\] .*chainmod.lua:5$/ { seen = 1 }
		in_r && !seen && /metamethod|function <|index/ { m = 1 }
		in_r && m && !seen && !/\[lua\]/ && /^    #/ { between++ }
		END { exit !(between > 0) }' "$sfile"
	check "$name: native frames kept between the metamethod and the function it calls" test $? -eq 0
}

# NAME CMD...: CMD (chain.lua's interpreter with "wait N") run, heapsnoop
# attached (-p) to it once it says READY (the check that heapsnoop says
# it is tracing), the chain run ("go" to DONE), a dump asked (SIGUSR1),
# the interpreter ended. Its output in $T/pout, the dump's records in
# $T/prec, heapsnoop's stderr added to $T/perr. Returns non-zero when the
# interpreter never said READY or DONE (nothing to check then).
lua_attach() {
	local name=$1 hs drain
	shift
	coproc L { exec "$@"; }
	wait_line "${L[0]}" '^READY' || return
	hs_attach "$name" "$L_PID" "$T/recs" "$T/perr"
	echo go >&"${L[1]}"
	: > "$T/pout"
	wait_line "${L[0]}" '^DONE' "$T/pout" || return
	kill -USR1 "$hs"
	: > "$T/prec"
	wait_line 6 '^heapsnoop: end-dump' "$T/prec" || echo "FAIL $name: no dump"
	echo end >&"${L[1]}"
	wait "$L_PID" 2> /dev/null
	cat <&6 > /dev/null
	wait "$hs"
	wait "$drain"
	exec 6<&-
}

# NAME CMD...: CMD (heapsnoop launching an interpreter, its records to the
# fifo $T/recs) run, its stdin, stdout and stderr $T/in, $T/outp, $T/err; a
# SIGUSR1 dump once the script says DONE, then a line to end it. The
# script's output up to DONE in $T/out, the dump's records in $T/rec, the
# records after it in $T/rec.rest (each FAIL said when not there).
lua_launch() {
	local name=$1 hs; shift
	rm -f "$T/in" "$T/outp" "$T/recs"
	mkfifo "$T/in" "$T/outp" "$T/recs"
	"$@" < "$T/in" > "$T/outp" 2> "$T/err" &
	hs=$!
	exec 6> "$T/in" 8< "$T/outp" 7< "$T/recs"
	: > "$T/out"
	# Once the script says DONE, its allocations are in the ring: a dump.
	wait_line 8 '^DONE' "$T/out" || echo "FAIL $name: the script did not finish"
	kill -USR1 "$hs"
	: > "$T/rec"
	wait_line 7 '^heapsnoop: end-dump' "$T/rec" || echo "FAIL $name: no dump"
	echo >&6
	exec 6>&-
	cat <&7 > "$T/rec.rest"
	cat <&8 > /dev/null
	exec 7<&- 8<&-
	wait "$hs"
}
