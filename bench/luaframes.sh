#!/bin/bash
# luaframes.sh - what reading Lua's frames adds to an allocation: the
# same Lua workload (bench/luaalloc.lua: a table constructor in a loop,
# one malloc a turn and the collector's frees, at a fixed depth of Lua
# frames) on Debian's /usr/bin/lua5.4 (LUABENCH_LUA: lua5.1 too),
# untraced, traced by heapsnoop -p --interp none (native frames only)
# and by heapsnoop -p --interp lua (the Lua walker on), the modes taking
# turns round after round in one run (this machine is shared), best of
# the rounds. Per mode and depth: the CPU ns per call (Lua's os.clock()
# around the loop: the process's CPU, the probes' kernel time included),
# alloc_exit's ns per run by the kernel's statistics
# (kernel.bpf_stats_enabled: the walk runs there), and the loader's
# user+system CPU per allocation and free record. Then the same on
# Debian's /usr/bin/luajit in its interpreter (-joff: the JIT would sink
# the loop's tables, no allocation at all): its tables come from its own
# allocator, lj_alloc_f, which heapsnoop probes with any walker on, so
# its "native" mode is --interp python (the allocator probed, the Lua
# walker off), its walker mode --interp lua.
#   usage: bench/luaframes.sh [BUILD_DIR]
#   LUABENCH_OPS (1000000) calls a run, LUABENCH_ROUNDS (3),
#   LUABENCH_DEPTHS ("1 10 30 60") Lua frames above the allocation,
#   LUABENCH_LUA (/usr/bin/lua5.4; empty: not run) the interpreter,
#   LUABENCH_JIT (/usr/bin/luajit; empty: not run) LuaJIT's.
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${LUABENCH_OPS:-1000000}
ROUNDS=${LUABENCH_ROUNDS:-3}
DEPTHS=${LUABENCH_DEPTHS:-1 10 30 60}
LUA=${LUABENCH_LUA-/usr/bin/lua5.4}
JIT=${LUABENCH_JIT-/usr/bin/luajit}
T=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled="$old_stats"; rm -rf "$T"' EXIT
[ -z "$LUA" ] || [ -x "$LUA" ] ||
	{ echo "luaframes: $LUA missing: scripts/install-deps.sh installs it" >&2; exit 1; }
sysctl -q kernel.bpf_stats_enabled=1

# name: heapsnoop's options ("-": untraced); LuaJIT's native mode: see above.
declare -A MODE=([untraced]="-" [native]="--interp none" [lua]="--interp lua")
ORDER="untraced native lua"
# The interpreter's command (word-split); its runs' figures under $T/$SET.
RUN=$LUA SET=puc


# NAME DEPTH ROUND: one run; its figures into $T/NAME.DEPTH.ROUND.*.
run_mode() {
	local d=$2 r=$3 opts=${MODE[$1]} line hs drain f=$T/$SET/$1.$2.$3
	mkdir -p "$T/$SET"
	mkfifo "$T/lua.in" "$T/lua.out" "$T/hs.err"
	# shellcheck disable=SC2086 # the interpreter and its options
	$RUN bench/luaalloc.lua "$N" "$d" < "$T/lua.in" > "$T/lua.out" &
	local lp=$!
	exec {to_lua}> "$T/lua.in" {from_lua}< "$T/lua.out"
	read -r line <&"$from_lua"	# ready
	if [ "$opts" != "-" ]; then
		# shellcheck disable=SC2086 # the mode's options, word-split
		/usr/bin/time -f '%U %S' -o "$T/time" "$OUT/heapsnoop" -v -o /dev/null $opts -p "$lp" \
			2> "$T/hs.err" {to_lua}>&- {from_lua}<&- &
		hs=$!
		exec {from_hs}< "$T/hs.err"
		while read -r line <&"$from_hs"; do
			case $line in *"heapsnoop: tracing "*) break ;; esac
		done
		cat <&"$from_hs" > "$f.err" {to_lua}>&- {from_lua}<&- &
		drain=$!
	fi
	echo go >&"$to_lua"
	read -r line <&"$from_lua"
	echo "$line" | sed -n 's/^luaalloc: .* \([0-9.]*\) ns per call$/\1/p' > "$f.wall"
	[ "$opts" != "-" ] && prog_stats "$(pgrep -P "$hs")" > "$f.progs"
	echo release >&"$to_lua"
	exec {to_lua}>&-
	wait "$lp"
	exec {from_lua}<&-
	if [ "$opts" != "-" ]; then
		wait "$hs" || true
		wait "$drain"
		exec {from_hs}<&-
		cp "$T/time" "$f.time"
	fi
	rm -f "$T/lua.in" "$T/lua.out" "$T/hs.err"
}

# All rounds of every depth and mode of $RUN, then its table.
bench_set() { # TITLE
	echo "$1: $N allocations a run at each depth, $RUN, modes in turn, best of $ROUNDS"
	for r in $(seq "$ROUNDS"); do
		for d in $DEPTHS; do
			for m in $ORDER; do
				run_mode "$m" "$d" "$r"
			done
		done
	done
	grep -h "EVENTS LOST\|FRAMES LOST\|not placed\|cut" "$T/$SET"/lua.*.err 2>/dev/null |
		sort | uniq -c | head || true
	# shellcheck disable=SC2086 # the depths and modes, one word each
	python3 bench/framecost.py "$T/$SET" "$ROUNDS" "$DEPTHS" lua Lua cpu \
		"Lua's os.clock() around the loop, a call = one {}: an allocation, its free by the collector" $ORDER
}

[ -z "$LUA" ] || bench_set "Lua frames"
if [ -n "$JIT" ]; then
	[ -x "$JIT" ] || { echo "luaframes: $JIT missing: scripts/install-deps.sh installs it" >&2; exit 1; }
	RUN="$JIT -joff" SET=luajit
	MODE[native]="--interp python"
	bench_set "LuaJIT frames (native: lj_alloc_f probed, --interp python)"
fi
