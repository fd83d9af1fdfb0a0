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
# matrix's slow guests name them as they run. Then a record whose frame
# was named before its function became a global, renamed before a dump.
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

# A record named before its function had a global name, and no record
# after it of that frame: tests/interp/lua/latename.lua allocates once in
# a local function, a dump makes the loader name it ("local 'once'"),
# then the function is made a global; the next dump names the same
# record as Lua's traceback would then, "function 'late_named'" (the
# loader walks package.loaded before a dump and renames the frame).
LATE=$(realpath "$(dirname "$0")/../interp/lua/latename.lua")
rm -f "$T/in" "$T/out" "$T/recs"
mkfifo "$T/in" "$T/out" "$T/recs"
"$HS" -q -o "$T/recs" -- "$LUA54" "$LATE" < "$T/in" > "$T/out" 2> "$T/lerr" &
hs=$!
exec 6> "$T/in" 8< "$T/out" 7< "$T/recs"
wait_line 8 '^ONE' "$T/lo1" || echo "FAIL latename.lua did not allocate"
kill -USR1 "$hs"
wait_line 7 '^heapsnoop: end-dump' "$T/l1" || echo "FAIL no dump after ONE"
echo >&6
wait_line 8 '^TWO' "$T/lo2" || echo "FAIL latename.lua did not set its global"
kill -USR1 "$hs"
wait_line 7 '^heapsnoop: end-dump' "$T/l2" || echo "FAIL no dump after TWO"
echo >&6
exec 6>&-
cat <&7 > /dev/null
cat <&8 > /dev/null
exec 7<&- 8<&-
wait "$hs"
# The record's frame in each dump, read alone: its first in latename.lua (string.rep's before it).
once_frame() { # DUMP
	"$HD" -s "$1" 2> /dev/null | awk '/^heapsnoop: live .*~b#size: 1225,/ { r = 1; next }
		r && / \[lua\] .*latename\.lua:/ { sub(/^    #[0-9]+ +0x[0-9a-f]+ /, ""); print; exit }'
}
expect_eq "latename.lua, dump at ONE: the record named as called, before the global" \
	"$(once_frame "$T/l1")" "local 'once' [lua] $LATE:7"
expect_eq "latename.lua, dump at TWO: the same record named as Lua's traceback names it now" \
	"$(once_frame "$T/l2")" "function 'late_named' [lua] $LATE:7"
finish
