#!/bin/bash
# plpyframes.sh - what the collector's Python walk (user/interp/python/
# pywalk.c) adds to an allocation under heapsnoop --preload: the workload
# of bench/pyframes.sh (bench/pyalloc.py: bytes(200) in a loop, one malloc
# and one free a turn under PYTHONMALLOC=malloc, at a fixed depth of
# Python frames) on Debian's /usr/bin/python3.11, untraced, under
# heapsnoop --preload --no-interp (native frames only) and under heapsnoop
# --preload (the walk on), the modes taking turns round after round in
# one run (this machine is shared), best of the rounds: Python's own clock
# around the loop, ns per call, and what each traced mode adds to it.
#   usage: bench/plpyframes.sh [BUILD_DIR]
#   PYBENCH_OPS (1000000) calls a run, PYBENCH_ROUNDS (5),
#   PYBENCH_DEPTHS ("1 10 30 60") Python frames above the allocation;
#   PLPY_BASE_LIB=FILE: one mode more, "base": the walk on, with that
#   build's libheapsnoop_preload.so (another version's walk, A/B).
set -eu
OUT=$(realpath "${1:-build}")
cd "$(dirname "$0")/.."
N=${PYBENCH_OPS:-1000000}
ROUNDS=${PYBENCH_ROUNDS:-5}
DEPTHS=${PYBENCH_DEPTHS:-1 10 30 60}
PY=/usr/bin/python3.11
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -x "$PY" ] || { echo "plpyframes: $PY missing: scripts/install-deps.sh installs it" >&2; exit 1; }

# name: how it runs ("-": untraced); PYTHONMALLOC=malloc in every mode.
declare -A MODE=([untraced]="-" [native]="--no-interp" [python]="--interp python")
ORDER="untraced native python"
if [ -n "${PLPY_BASE_LIB:-}" ]; then
	MODE[base]="--interp python"
	ORDER="$ORDER base"
fi

# NAME DEPTH: one run; the best ns per call of NAME at DEPTH so far into $T/NAME.DEPTH.
run_mode() {
	local opts=${MODE[$1]} f=$T/$1.$2 v
	if [ "$opts" = "-" ]; then
		printf 'go\nrelease\n' | PYTHONMALLOC=malloc "$PY" bench/pyalloc.py "$N" "$2" > "$T/run"
	else
		# shellcheck disable=SC2086 # the mode's options, word-split
		printf 'go\nrelease\n' | PYTHONMALLOC=malloc \
			HEAPSNOOP_PRELOAD_LIB=$([ "$1" = base ] && echo "$PLPY_BASE_LIB" || echo "$OUT/libheapsnoop_preload.so") \
			"$OUT/heapsnoop" --preload -q $opts \
			-o /dev/null -- "$PY" bench/pyalloc.py "$N" "$2" > "$T/run"
	fi
	v=$(sed -n 's/^pyalloc: .* \([0-9.]*\) ns per call$/\1/p' "$T/run")
	[ -n "$v" ] || { echo "plpyframes: $1 printed no timing" >&2; return 1; }
	awk -v a="$v" -v b="$(cat "$f" 2>/dev/null || echo 1e18)" 'BEGIN { print (a < b) ? a : b }' > "$f.new"
	mv "$f.new" "$f"
}

echo "Python frames under heapsnoop --preload: $N allocations a run at each depth, $PY, modes in turn, best of $ROUNDS"
for _ in $(seq "$ROUNDS"); do
	for d in $DEPTHS; do
		for m in $ORDER; do
			run_mode "$m" "$d"
		done
	done
done
printf '%-6s %10s %10s %10s %12s %12s %14s\n' depth untraced native python "native-untr" "python-native" "per py frame"
for d in $DEPTHS; do
	u=$(cat "$T/untraced.$d") n=$(cat "$T/native.$d") p=$(cat "$T/python.$d")
	awk -v d="$d" -v u="$u" -v n="$n" -v p="$p" 'BEGIN {
		printf "%-6s %10.1f %10.1f %10.1f %12.1f %12.1f %14.2f\n", d, u, n, p, n - u, p - n, (p - n) / (d + 1) }'
done
if [ -n "${PLPY_BASE_LIB:-}" ]; then
	echo "base ($PLPY_BASE_LIB), the walk on:"
	for d in $DEPTHS; do
		awk -v d="$d" -v n="$(cat "$T/native.$d")" -v b="$(cat "$T/base.$d")" \
			'BEGIN { printf "%-6s %10.1f  adds %10.1f  %8.2f a frame\n", d, b, b - n, (b - n) / (d + 1) }'
	done
fi
echo "(ns per call by Python's clock; the Python frames a stack holds: depth + 1, <module> included)"
