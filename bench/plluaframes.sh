#!/bin/bash
# plluaframes.sh - what the collector's Lua walk (user/interp/lua/
# luaframes.c) adds to an allocation under heapsnoop --preload: the
# workload of bench/luaframes.sh (bench/luaalloc.lua: a table constructor
# in a loop, one malloc a turn and the collector's frees, at a fixed depth
# of Lua frames) on Debian's /usr/bin/lua5.4, untraced, under heapsnoop
# --preload --no-interp (native frames only) and under heapsnoop
# --preload --interp lua (the walk on), the modes taking turns round
# after round in one run (this machine is shared), best of the rounds:
# Lua's os.clock() around the loop, ns per call, and what each traced
# mode adds to it (bench/plpyframes.sh's approach).
#   usage: bench/plluaframes.sh [BUILD_DIR]
#   LUABENCH_OPS (1000000) calls a run, LUABENCH_ROUNDS (5),
#   LUABENCH_DEPTHS ("1 10 30 60") Lua frames above the allocation,
#   LUABENCH_LUA (/usr/bin/lua5.4) the interpreter.
set -eu
OUT=$(realpath "${1:-build}")
cd "$(dirname "$0")/.."
N=${LUABENCH_OPS:-1000000}
ROUNDS=${LUABENCH_ROUNDS:-5}
DEPTHS=${LUABENCH_DEPTHS:-1 10 30 60}
LUA=${LUABENCH_LUA:-/usr/bin/lua5.4}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -x "$LUA" ] || { echo "plluaframes: $LUA missing: scripts/install-deps.sh installs it" >&2; exit 1; }

# name: heapsnoop --preload's options ("-": untraced).
declare -A MODE=([untraced]="-" [native]="--no-interp" [lua]="--interp lua")
ORDER="untraced native lua"

# NAME DEPTH: one run; the best ns per call of NAME at DEPTH so far into $T/NAME.DEPTH.
run_mode() {
	local opts=${MODE[$1]} f=$T/$1.$2 v
	if [ "$opts" = "-" ]; then
		printf 'go\nend\n' | "$LUA" bench/luaalloc.lua "$N" "$2" > "$T/run"
	else
		# shellcheck disable=SC2086 # the mode's options, word-split
		printf 'go\nend\n' | HEAPSNOOP_PRELOAD_LIB=$OUT/libheapsnoop_preload.so \
			"$OUT/heapsnoop" --preload -q $opts -o /dev/null -- \
			"$LUA" bench/luaalloc.lua "$N" "$2" > "$T/run"
	fi
	v=$(sed -n 's/^luaalloc: .* \([0-9.]*\) ns per call$/\1/p' "$T/run")
	[ -n "$v" ] || { echo "plluaframes: $1 printed no timing" >&2; return 1; }
	awk -v a="$v" -v b="$(cat "$f" 2>/dev/null || echo 1e18)" 'BEGIN { print (a < b) ? a : b }' > "$f.new"
	mv "$f.new" "$f"
}

echo "Lua frames under heapsnoop --preload: $N allocations a run at each depth, $LUA, modes in turn, best of $ROUNDS"
for _ in $(seq "$ROUNDS"); do
	for d in $DEPTHS; do
		for m in $ORDER; do
			run_mode "$m" "$d"
		done
	done
done
printf '%-6s %10s %10s %10s %12s %12s %14s\n' depth untraced native lua "native-untr" "lua-native" "per Lua frame"
for d in $DEPTHS; do
	u=$(cat "$T/untraced.$d") n=$(cat "$T/native.$d") l=$(cat "$T/lua.$d")
	# The frames a stack holds: DEPTH, the main chunk and lua.c's pmain.
	awk -v d="$d" -v u="$u" -v n="$n" -v l="$l" 'BEGIN {
		printf "%-6s %10.1f %10.1f %10.1f %12.1f %12.1f %14.2f\n", d, u, n, l, n - u, l - n, (l - n) / (d + 2) }'
done
echo "(ns per call by Lua's os.clock(), the process's CPU; the Lua frames a stack holds: depth + 2)"
