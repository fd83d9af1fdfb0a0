#!/bin/bash
# pyframes.sh - what reading Python's frames adds to an allocation: the
# same Python workload (bench/pyalloc.py: bytes(200) in a loop, one
# malloc and one free a turn under PYTHONMALLOC=malloc, at a fixed depth
# of Python frames) on Debian's /usr/bin/python3.11, untraced, traced by
# heapsnoop -p --no-interp (native frames only) and by heapsnoop -p (the
# Python walker on), the modes taking turns round after round in one run
# (this machine is shared), best of the rounds. Per mode and depth: the
# wall ns per call (Python's own clock around the loop), alloc_exit's ns
# per run by the kernel's statistics (kernel.bpf_stats_enabled: the walk
# runs there), and the loader's user+system CPU per allocation.
#   usage: bench/pyframes.sh [BUILD_DIR]
#   PYBENCH_OPS (1000000) calls a run, PYBENCH_ROUNDS (3),
#   PYBENCH_DEPTHS ("1 10 30 60") Python frames above the allocation.
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${PYBENCH_OPS:-1000000}
ROUNDS=${PYBENCH_ROUNDS:-3}
DEPTHS=${PYBENCH_DEPTHS:-1 10 30 60}
PY=/usr/bin/python3.11
T=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled="$old_stats"; rm -rf "$T"' EXIT
[ -x "$PY" ] || { echo "pyframes: $PY missing: scripts/install-deps.sh installs it" >&2; exit 1; }
sysctl -q kernel.bpf_stats_enabled=1

# name: heapsnoop's options ("-": untraced)
declare -A MODE=([untraced]="-" [native]="--no-interp" [python]="")
ORDER="untraced native python"


# NAME DEPTH ROUND: one run; its figures into $T/NAME.DEPTH.ROUND.*.
run_mode() {
	local name=$1 d=$2 r=$3 opts=${MODE[$1]} line hs drain f=$T/$1.$2.$3
	mkfifo "$T/py.in" "$T/py.out" "$T/hs.err"
	PYTHONMALLOC=malloc "$PY" bench/pyalloc.py "$N" "$d" < "$T/py.in" > "$T/py.out" &
	local py=$!
	exec {to_py}> "$T/py.in" {from_py}< "$T/py.out"
	read -r line <&"$from_py"	# ready
	if [ "$opts" != "-" ]; then
		# shellcheck disable=SC2086 # the mode's options, word-split
		/usr/bin/time -f '%U %S' -o "$T/time" "$OUT/heapsnoop" -v -o /dev/null $opts -p "$py" \
			2> "$T/hs.err" {to_py}>&- {from_py}<&- &
		hs=$!
		exec {from_hs}< "$T/hs.err"
		while read -r line <&"$from_hs"; do
			case $line in *"heapsnoop: tracing "*) break ;; esac
		done
		cat <&"$from_hs" > "$f.err" {to_py}>&- {from_py}<&- &
		drain=$!
	fi
	echo go >&"$to_py"
	read -r line <&"$from_py"
	echo "$line" | sed -n 's/^pyalloc: .* \([0-9.]*\) ns per call$/\1/p' > "$f.wall"
	[ "$opts" != "-" ] && prog_stats "$(pgrep -P "$hs")" > "$f.progs"
	echo release >&"$to_py"
	exec {to_py}>&-
	wait "$py"
	exec {from_py}<&-
	if [ "$opts" != "-" ]; then
		wait "$hs" || true
		wait "$drain"
		exec {from_hs}<&-
		cp "$T/time" "$f.time"
	fi
	rm -f "$T/py.in" "$T/py.out" "$T/hs.err"
}

echo "Python frames: $N allocations a run at each depth, $PY, modes in turn, best of $ROUNDS"
for r in $(seq "$ROUNDS"); do
	for d in $DEPTHS; do
		for m in $ORDER; do
			run_mode "$m" "$d" "$r"
		done
	done
done
grep -h "EVENTS LOST\|FRAMES LOST\|not placed\|cut" "$T"/python.*.err 2>/dev/null | sort | uniq -c | head || true

# shellcheck disable=SC2086 # the depths and modes, one word each
python3 bench/framecost.py "$T" "$ROUNDS" "$DEPTHS" python Python wall \
	"Python's clock around the loop, a call = one bytes(200): a malloc and a free" $ORDER
