# shellcheck shell=bash
# lualib.sh - helpers for the tests of Lua frames (sourced after lib.sh):
# test_lua.sh (the BPF tracer) and tests/collector/test_preload_lua.sh
# (heapsnoop --preload) read tests/interp/lua/chain.lua's stacks alike.
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

