#!/bin/bash
# startup.sh - what a traced run costs before and after the program
# (issue 32, "start fast"; docs/PERFORMANCE.md, "Start-up"): the wall
# time of heapsnoop -- /bin/true against /bin/true untraced, against
# heapsnoop -- env /bin/true (env may exec an interpreter: the walkers
# are loaded, interp/reach.h), against heapsnoop --without uprobe-multi (the perf-event uprobes older kernels
# get, each detached in turn) and against heaptrack /bin/true where
# heaptrack is installed; and the time from heapsnoop's start to the
# first allocation of bench/firstalloc.c's main (it prints the clock
# there), against the same program untraced. Modes in turn, round after
# round; the median of the rounds, and ratios. Nothing here is a test.
#   usage: bench/startup.sh [BUILD_DIR]
#   STARTUP_ROUNDS (11).
# Needs root.
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
ROUNDS=${STARTUP_ROUNDS:-11}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
make -s OUTPUT="$OUT" "$OUT/heapsnoop" > /dev/null
gcc -O2 -o "$T/firstalloc" bench/firstalloc.c
HS=("$(realpath "$OUT/heapsnoop")" -q -o /dev/null)
HEAPTRACK=$(command -v heaptrack || true)

# NAME CMD...: the run's wall time in ms appended to $T/NAME.
wall() {
	local name=$1 t0 t1
	shift
	t0=$EPOCHREALTIME
	"$@" > /dev/null 2>&1 || true
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }' >> "$T/$name"
}

# NAME CMD...: ms from the start of CMD to firstalloc's main, appended.
first() {
	local name=$1 t0 at
	shift
	t0=$EPOCHREALTIME
	at=$("$@" 2> /dev/null | tail -n 1)
	awk -v a="$t0" -v b="$at" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }' >> "$T/$name"
}

median() { # NAME: the median of its values
	sort -n "$T/$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

cd "$T"	# heaptrack writes its file here
for _ in $(seq "$ROUNDS"); do
	wall true /bin/true
	wall hs "${HS[@]}" -- /bin/true
	wall hs_env "${HS[@]}" -- /usr/bin/env /bin/true
	wall hs_perf "${HS[@]}" --without uprobe-multi -- /bin/true
	[ -n "$HEAPTRACK" ] && wall heaptrack "$HEAPTRACK" /bin/true
	first first_untraced "$T/firstalloc"
	first first_hs "${HS[@]}" -- "$T/firstalloc"
	rm -f heaptrack.*
done

t=$(median true)
h=$(median hs)
echo "start-up on Linux $(uname -r), $(nproc) CPUs: the median of $ROUNDS rounds, modes in turn"
printf '%-44s %8s ms\n' "/bin/true untraced" "$t"
printf '%-44s %8s ms  %6.1fx untraced\n' "heapsnoop -- /bin/true" "$h" \
	"$(awk -v a="$h" -v b="$t" 'BEGIN { print a / b }')"
e=$(median hs_env)
printf '%-44s %8s ms  %6.2fx heapsnoop\n' "heapsnoop -- env /bin/true (walkers loaded)" "$e" \
	"$(awk -v a="$e" -v b="$h" 'BEGIN { print a / b }')"
p=$(median hs_perf)
printf '%-44s %8s ms  %6.2fx heapsnoop\n' "heapsnoop --without uprobe-multi -- /bin/true" "$p" \
	"$(awk -v a="$p" -v b="$h" 'BEGIN { print a / b }')"
if [ -n "$HEAPTRACK" ]; then
	k=$(median heaptrack)
	printf '%-44s %8s ms  heapsnoop %.2fx heaptrack\n' "heaptrack /bin/true" "$k" \
		"$(awk -v a="$h" -v b="$k" 'BEGIN { print a / b }')"
else
	echo "heaptrack: not installed"
fi
u=$(median first_untraced)
f=$(median first_hs)
printf '%-44s %8s ms\n' "start to firstalloc's main, untraced" "$u"
printf '%-44s %8s ms  +%.1f ms for heapsnoop\n' "start to firstalloc's main, heapsnoop" "$f" \
	"$(awk -v a="$f" -v b="$u" 'BEGIN { print a - b }')"
