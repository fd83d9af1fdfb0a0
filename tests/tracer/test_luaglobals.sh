#!/bin/bash
# test_luaglobals.sh - Lua 5.4's global names (`function 'top'`,
# `function 'chainmod.via_gsub'`: package.loaded's, as Lua's traceback
# gives them) for frames the loader first named before the program had
# set them. tests/interp/lua/chain.lua launched in its wait mode: at
# READY it has loaded chainmod (require) but not yet defined top; a dump
# then makes the loader handle every record so far, so its first walk of
# package.loaded is the one from inside require(). Then the chain runs:
# its 64 kept strings must still be named as Lua names them (the loader
# walks package.loaded again, 1 ms, 2, 4 ... after its first walk, and
# names again a frame it had named without a global name). On a fast
# machine the loader would otherwise name them all at the end; the kernel
# matrix's slow guests name them as they run.
set -u
. "$(dirname "$0")/lib.sh"
CHAIN=$(realpath "$(dirname "$0")/../interp/lua/chain.lua")
LUA54=${HS_LUA54:-/usr/bin/lua5.4}
if [ ! -x "$LUA54" ]; then
	echo "skip test_luaglobals.sh: no $LUA54 (scripts/install-deps.sh installs it)"
	exit 0
fi

mkfifo "$T/in" "$T/out" "$T/recs"
"$HS" -q -o "$T/recs" -- "$LUA54" "$CHAIN" wait 200 < "$T/in" > "$T/out" 2> "$T/err" &
hs=$!
exec 6> "$T/in" 8< "$T/out" 7< "$T/recs"
wait_line 8 '^READY' "$T/o1" || echo "FAIL the script did not start"
# The first dump: the records of the script's loading handled, names and all.
kill -USR1 "$hs"
wait_line 7 '^heapsnoop: end-dump' "$T/d1" || echo "FAIL no first dump"
echo go >&6
wait_line 8 '^DONE' "$T/o2" || echo "FAIL the chain did not run"
kill -USR1 "$hs"
wait_line 7 '^heapsnoop: end-dump' "$T/d2" || echo "FAIL no second dump"
echo end >&6
exec 6>&-
cat <&7 > /dev/null
cat <&8 > /dev/null
exec 7<&- 8<&-
wait "$hs"

check "the first dump came before the chain ran (no kept string in it)" \
	bash -c "! grep -q '^heapsnoop: live .*~b#size: 528,' '$T/d1'"
# The second dump alone: its map and frame records are its own.
"$HD" -s "$T/d2" > "$T/s" 2> /dev/null
n=$(awk '/^heapsnoop: live .*~b#size: 528,/ { if (r && t && g) n++; r = 1; t = 0; g = 0; next }
	r && /^    #/ { if (index($0, "function '"'"'top'"'"' [lua]")) t = 1
		     if (index($0, "function '"'"'chainmod.via_gsub'"'"' [lua]")) g = 1; next }
	r { if (t && g) n++; r = 0 }
	END { if (r && t && g) n++; print n + 0 }' "$T/s")
expect_eq "the 64 kept strings: function 'top' and function 'chainmod.via_gsub', as Lua names them" "$n" 64
check "no frame left named as if top were not a global" bash -c "! grep -q \"global 'top' \[lua\]\" '$T/s'"
finish
