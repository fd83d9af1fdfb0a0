#!/bin/bash
# jitframes.sh - what naming JIT frames costs: node (Debian's nodejs)
# running tests/tracer/js/jitchain.js (outer -> middle -> leaf ->
# Buffer.allocUnsafeSlow, a malloc under V8's JIT code, through the
# DWARF walk's frame-pointer steps in anonymous memory) with its perf map
# (--perf-basic-prof --interpreted-frames-native-stack), untraced, traced
# by heapsnoop -p --no-perf-map (the frames walked, not named) and by
# heapsnoop -p (each new stack's JIT frames named from the map as it
# grows, the lines kept for the dumps); and node writing its jitdump
# instead (--perf-prof --interpreted-frames-native-stack, jit-PID.dump),
# untraced and traced by heapsnoop -p (named from the jitdump, its lines
# too), the modes taking turns round after round in one run (this
# machine is shared), best of the rounds.
# Per mode: node's wall ns per allocation (the chain's run, from the line
# that starts it to its DONE), alloc_exit's ns per run by the kernel's
# statistics, and the loader's user+system CPU per allocation record.
# Only the chain's buffers (--min-size 65536) are recorded: node's own
# small allocations at startup would fill the ring faster than the loader
# unwinds their 16 KiB stack copies, and be dropped.
#   usage: bench/jitframes.sh [BUILD_DIR]
#   JITBENCH_OPS (100000) allocations a run, JITBENCH_ROUNDS (3).
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${JITBENCH_OPS:-100000}
ROUNDS=${JITBENCH_ROUNDS:-3}
JS=$PWD/tests/tracer/js/jitchain.js
NODE_FLAGS="--perf-basic-prof --interpreted-frames-native-stack"
T=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled="$old_stats"; rm -rf "$T"' EXIT
command -v node > /dev/null || { echo "jitframes: no node: scripts/install-deps.sh installs nodejs" >&2; exit 1; }
sysctl -q kernel.bpf_stats_enabled=1

declare -A MODE=([untraced]="-" [unnamed]="--no-perf-map" [named]="" [jd-untraced]="-"
	[jitdump]="")
declare -A FLAGS=([untraced]="$NODE_FLAGS" [unnamed]="$NODE_FLAGS" [named]="$NODE_FLAGS"
	[jd-untraced]="--perf-prof --interpreted-frames-native-stack"
	[jitdump]="--perf-prof --interpreted-frames-native-stack")
ORDER="untraced unnamed named jd-untraced jitdump"


now_ns() { date +%s%N; }

# NAME ROUND: one run; its figures into $T/NAME.ROUND.*.
run_mode() {
	local r=$2 opts=${MODE[$1]} line hs drain t0 t1 f=$T/$1.$2
	mkfifo "$T/in" "$T/out" "$T/err"
	# shellcheck disable=SC2086 # the mode's node flags, word-split
	(cd "$T" && exec node ${FLAGS[$1]} "$JS" wait "$N") < "$T/in" > "$T/out" &
	local np=$!
	exec {to}> "$T/in" {from}< "$T/out"
	read -r line <&"$from"	# READY
	if [ "$opts" != "-" ]; then
		# shellcheck disable=SC2086 # the mode's options, word-split
		/usr/bin/time -f '%U %S' -o "$T/time" "$OUT/heapsnoop" -v -o /dev/null \
			--min-size 65536 $opts -p "$np" \
			2> "$T/err" {to}>&- {from}<&- &
		hs=$!
		exec {herr}< "$T/err"
		while read -r line <&"$herr"; do
			case $line in *"heapsnoop: tracing "*) break ;; esac
		done
		cat <&"$herr" > "$f.err" {to}>&- {from}<&- &
		drain=$!
	fi
	t0=$(now_ns)
	echo go >&"$to"
	read -r line <&"$from"	# DONE
	t1=$(now_ns)
	echo $(((t1 - t0) / N)) > "$f.wall"
	[ "$opts" != "-" ] && prog_stats "$(pgrep -P "$hs")" > "$f.progs"
	echo end >&"$to"
	exec {to}>&-
	wait "$np" || true
	exec {from}<&-
	if [ "$opts" != "-" ]; then
		wait "$hs" || true
		wait "$drain"
		exec {herr}<&-
		cp "$T/time" "$f.time"
	fi
	rm -f "$T/in" "$T/out" "$T/err" "/tmp/perf-$np.map" "$T/jit-$np.dump" "$T"/isolate-*.log
}

echo "JIT frames: $N allocations a run (node $(node --version), jitchain.js), modes in turn, best of $ROUNDS"
for r in $(seq "$ROUNDS"); do
	for m in $ORDER; do
		run_mode "$m" "$r"
	done
done
grep -h "EVENTS LOST\|not recovered\|have no name" "$T"/*.err 2>/dev/null | sort | uniq -c | head || true

# shellcheck disable=SC2086 # the modes, one word each
python3 - "$T" "$ROUNDS" $ORDER <<'EOF'
import sys, os
T, rounds, order = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def read(path):
	try:
		return open(path).read().split()
	except OSError:
		return []
print("  %-11s %9s %10s %13s %13s" % ("mode", "wall ns", "+untraced", "alloc_exit ns", "loader ns/ev"))
best = {}
for m in order:
	b = {}
	for r in range(1, rounds + 1):
		f = f"{T}/{m}.{r}"
		w = read(f + ".wall")
		if not w:
			continue
		v = {"wall": float(w[0])}
		progs = {}
		for line in open(f + ".progs") if os.path.exists(f + ".progs") else []:
			name, cnt, ns = line.split()
			progs[name] = (int(cnt), int(ns))
		ex = [progs[n] for n in ("alloc_exit", "alloc_exit_compat") if n in progs]
		if ex and sum(c for c, _ in ex):
			v["exit"] = sum(ns for _, ns in ex) / sum(c for c, _ in ex)
		t = read(f + ".time")[-2:]	# after "Command exited with ..." if said
		runs = sum(c for c, _ in ex) + progs.get("free_enter", (0, 0))[0]
		if t and runs:
			v["loader"] = (float(t[0]) + float(t[1])) * 1e9 / runs
		for k, x in v.items():
			b[k] = min(b.get(k, x), x)
	best[m] = b
for m in order:
	b = best[m]
	u = best.get("jd-untraced" if m.startswith("j") else "untraced", {}).get("wall")
	f = lambda k, fmt: fmt % b[k] if k in b else "-"
	print("  %-11s %9s %10s %13s %13s" % (m, f("wall", "%.0f"),
	      "%+.0f" % (b["wall"] - u) if u and "wall" in b else "-", f("exit", "%.0f"),
	      f("loader", "%.0f")))
print("  (wall: node's ns per allocation, the chain's whole run, +untraced: over node untraced")
print("   writing the same file; alloc_exit: the kernel's")
print("   run_time_ns/run_cnt; loader: heapsnoop's user+system ns per allocation and free record)")
EOF
