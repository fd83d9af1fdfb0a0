#!/bin/bash
# test_luajit.sh - LuaJIT on arm64 (in the arm64 guest: tests/arm64/
# in-guest.sh), on the guest root's luajit (Debian 13's, OpenResty's 2.1
# with lua_newstate in the executable): its allocator lj_alloc_f found in
# lua_newstate's code (ljdecode_arm64.c) and probed, so that
# tests/interp/lua/ljleak.lua's 500 strings of 1000 bytes are 500 live
# blocks of 1028 bytes at a dump taken while it waits, none left at exit;
# its frames said not read (its GG_State is 6280 bytes, not the 6240 of
# the x86-64 2.1 whose layout heapsnoop knows: arm64's C frames and
# OpenResty's fast functions differ). tests/tracer/test_luajit.sh is the
# whole test on x86-64.
#   test_luajit.sh BUILD_DIR        HS_LUAJIT: another luajit
set -u
. "$(dirname "$0")/../tracer/lib.sh"
DIR=$(realpath "$(dirname "$0")/../interp/lua")
LUAJIT=${HS_LUAJIT:-/usr/bin/luajit}
if [ ! -x "$LUAJIT" ]; then
	echo "skip test_luajit.sh: no $LUAJIT (tests/distro/make-root.sh trixie-arm64 includes it)"
	exit 0
fi
cd "$DIR" || exit 2
rm -f "$T/in" "$T/outp" "$T/recs"
mkfifo "$T/in" "$T/outp" "$T/recs"
"$HS" -q -o "$T/recs" -- "$LUAJIT" -joff ljleak.lua 500 < "$T/in" > "$T/outp" 2> "$T/err" &
hs=$!
exec 6> "$T/in" 8< "$T/outp" 7< "$T/recs"
: > "$T/out"
wait_line 8 '^DONE' "$T/out" || echo "FAIL luajit leak: the script did not finish"
kill -USR1 "$hs"
: > "$T/rec"
wait_line 7 '^heapsnoop: end-dump' "$T/rec" || echo "FAIL luajit leak: no dump"
echo >&6
exec 6>&-
cat <&7 > "$T/rec.rest"
cat <&8 > /dev/null
exec 7<&- 8<&-
wait "$hs"
check "luajit leak: heapsnoop exits with luajit's status (0)" test $? -eq 0
sed -n 's/^heapsnoop: pid [0-9]* runs LuaJIT/runs LuaJIT/p' "$T/err" | head -n 2
check "luajit leak: said its allocator is probed, its frames not read (its state's size)" \
	grep -q "runs LuaJIT ($LUAJIT): its objects are live blocks (its allocator lj_alloc_f probed); its frames are not read: its state is [0-9]* bytes" "$T/err"
"$HD" -s "$T/rec" > "$T/leak.s" 2> /dev/null
expect_eq "luajit leak: 500 live blocks of 1028 bytes at the dump" \
	"$(grep -c '^heapsnoop: live .*~b#size: 1028,' "$T/leak.s")" 500
cat "$T/rec" "$T/rec.rest" > "$T/rec.all"
"$HD" -s "$T/rec.all" 2> /dev/null | sed -n '/^heapsnoop: dump reason=exit/,$p' > "$T/leak.exit"
check "luajit leak: the exit's dump read" grep -q '^heapsnoop: dump reason=exit' "$T/leak.exit"
expect_eq "luajit leak: at exit (lua_close freed them) no 1028-byte block live" \
	"$(grep -c '^heapsnoop: live .*~b#size: 1028,' "$T/leak.exit")" 0
check_no_loss "luajit leak: no events lost" "$T/err"
finish
