#!/bin/bash
# progcost.sh - what each of heapsnoop's BPF programs costs per run, by the
# kernel's own accounting (kernel.bpf_stats_enabled=1: run_time_ns and
# run_cnt per program, read with `bpftool prog show` while the programs are
# still attached), beside the wall-clock cost per allocator call and the
# loader's CPU per event, for every mode: the floor (--empty-probes), the
# floor with one 8-byte read of the stack at each allocation's return
# (--empty-probes=read: the kernel's cost of a read of user memory, which
# every record that carries the stack pays), --unwind fp, --unwind dwarf
# (the default), dwarf on the fallbacks of older kernels
# (--without ...), dwarf with a 2 MiB ring buffer (one that stays in the
# cache), and heapsnoop -a with its filters.
#
# The workload (bench/workload.c, frame pointers) is attached by PID (-p)
# except in the -a modes, where every process of the machine runs the
# programs (the per-run averages then include other processes' calls; the
# loader's CPU includes their events). The modes take turns, round after
# round (this machine is shared: wall time drifts), and each figure is the
# best of the rounds. The statistics themselves add ~20-30 ns to each run
# (two clock reads), in every mode alike.
#   usage: bench/progcost.sh [BUILD_DIR]
#   PROGCOST_OPS (1000000) calls a run, PROGCOST_ROUNDS (3),
#   PROGCOST_MODES (all of them: names as in the table) to run fewer;
#   PROGCOST_BASE=/path/to/another/heapsnoop: an A/B in the same run, each
#   traced mode also run with that binary as "base_MODE", in turn;
#   PROGCOST_BUILDS="NAME=/path/to/heapsnoop ...": as many as that, each
#   traced mode run with each binary as "NAME_MODE".
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${PROGCOST_OPS:-1000000}
ROUNDS=${PROGCOST_ROUNDS:-3}
T=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled="$old_stats"; rm -rf "$T"' EXIT
WL=$T/workload
gcc -O2 -g -fno-omit-frame-pointer -o "$WL" bench/workload.c
sysctl -q kernel.bpf_stats_enabled=1

# name: heapsnoop's options for that mode ("-" for the untraced run).
declare -A MODE=(
	[untraced]="-"
	[floor]="--empty-probes"
	[floor_read]="--empty-probes=read"
	[fp]="--unwind fp"
	[dwarf]=""
	[dwarf_510]="--without task-storage,task-btf,find-vma"
	[dwarf_rb2]="--ringbuf-size 2"
	[a_floor]="-a --empty-probes"
	[a_dwarf]="-a"
	[a_comm]="-a --comm workload"
	[a_pidf]="-a --pid-filter PID"
	[a_size]="-a --min-size 256"
)
ORDER=${PROGCOST_MODES:-untraced floor floor_read fp dwarf dwarf_510 dwarf_rb2 a_floor a_dwarf a_comm a_pidf a_size}
# NAME -> the heapsnoop binary of the modes NAME_*.
declare -A BIN=()
BUILDS=${PROGCOST_BUILDS:-}
[ -n "${PROGCOST_BASE:-}" ] && BUILDS="base=$PROGCOST_BASE $BUILDS"
MODES0=$ORDER
for b in $BUILDS; do
	BIN[${b%%=*}]=${b#*=}
	for m in $MODES0; do
		[ "${MODE[$m]}" = "-" ] && continue
		MODE[${b%%=*}_$m]=${MODE[$m]}
		ORDER="$ORDER ${b%%=*}_$m"
	done
done


# NAME ROUND: one run of mode NAME; its figures into $T/NAME.ROUND.*.
run_mode() {
	local name=$1 r=$2 opts=${MODE[$1]} hs line bin=$OUT/heapsnoop
	[ -n "${BIN[${name%%_*}]:-}" ] && bin=${BIN[${name%%_*}]}
	mkfifo "$T/wl.in" "$T/wl.out" "$T/hs.err"
	"$WL" "$N" --wait-hold < "$T/wl.in" > "$T/wl.out" &
	local wl=$!
	exec {to_wl}> "$T/wl.in" {from_wl}< "$T/wl.out"
	read -r line <&"$from_wl"	# ready
	if [ "$opts" != "-" ]; then
		opts=${opts//PID/$wl}
		case " $opts " in
		*" -a "*) ;;
		*) opts="$opts -p $wl" ;;
		esac
		# shellcheck disable=SC2086 # the mode's options, word-split
		/usr/bin/time -f '%U %S' -o "$T/time" "$bin" -o /dev/null $opts \
			2> "$T/hs.err" {to_wl}>&- {from_wl}<&- &
		hs=$!
		exec {from_hs}< "$T/hs.err"
		while read -r line <&"$from_hs"; do
			case $line in *"heapsnoop: tracing "*) break ;; esac
		done
		cat <&"$from_hs" > "$T/$name.$r.err" {to_wl}>&- {from_wl}<&- &
		local drain=$!
	fi
	echo go >&"$to_wl"
	read -r line <&"$from_wl"	# the timing
	echo "$line" | sed -n 's/^workload: .* \([0-9.]*\) ns per call$/\1/p' > "$T/$name.$r.wall"
	echo "$line" | sed -n 's/^workload: \([0-9]*\) calls.*/\1/p' > "$T/$name.$r.calls"
	if [ "$opts" != "-" ]; then
		prog_stats "$(pgrep -P "$hs")" > "$T/$name.$r.progs"
	fi
	echo release >&"$to_wl"	# a line: heapsnoop and cat hold the fifo open too
	exec {to_wl}>&-
	wait "$wl"
	exec {from_wl}<&-
	if [ "$opts" != "-" ]; then
		case " $opts " in *" -a "*) pkill -INT -P "$hs" ;; esac
		wait "$hs" || true
		wait "$drain"
		exec {from_hs}<&-
		cp "$T/time" "$T/$name.$r.time"
	fi
	rm -f "$T/wl.in" "$T/wl.out" "$T/hs.err"
}

echo "per-program cost (kernel.bpf_stats_enabled): $N allocator calls a run, modes in turn, best of $ROUNDS"
for r in $(seq "$ROUNDS"); do
	for m in $ORDER; do
		run_mode "$m" "$r"
	done
done
for m in $ORDER; do
	grep -h "events lost\|EVENTS LOST" "$T/$m".*.err 2>/dev/null | sort | uniq -c | sed "s/^/  $m: /" || true
done

# One row per mode: the best round's wall ns/call, and per program group
# the best round's ns per run; the loader's CPU per traced call.
# shellcheck disable=SC2086 # the modes, one word each
python3 - "$T" "$ROUNDS" $ORDER <<'EOF'
import sys, os
T, rounds, order = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def read(path):
	try:
		return open(path).read().split()
	except OSError:
		return []
groups = {"entry": ("malloc_enter", "calloc_enter", "realloc_enter"),
	  "free": ("free_enter",), "exit": ("alloc_exit", "alloc_exit_compat")}
rows = {}
for m in order:
	best = {}
	for r in range(1, rounds + 1):
		w = read(f"{T}/{m}.{r}.wall")
		if not w:
			continue
		calls = int(read(f"{T}/{m}.{r}.calls")[0])
		val = {"wall": float(w[0])}
		progs = {}
		for line in open(f"{T}/{m}.{r}.progs") if os.path.exists(f"{T}/{m}.{r}.progs") else []:
			name, cnt, ns = line.split()
			progs[name] = (int(cnt), int(ns))
		runs = 0
		for g, names in groups.items():
			cnt = sum(progs.get(n, (0, 0))[0] for n in names)
			ns = sum(progs.get(n, (0, 0))[1] for n in names)
			if cnt:
				val[g] = ns / cnt
			if g != "entry":
				runs += cnt
		if progs:
			val["bpf"] = sum(ns for cnt, ns in progs.values()) / calls
			# The last line: GNU time says "Command exited with non-zero
			# status 3" first when heapsnoop lost events.
			t = (open(f"{T}/{m}.{r}.time").read().splitlines() or [""])[-1].split() \
			    if os.path.exists(f"{T}/{m}.{r}.time") else []
			if t and runs:
				val["loader"] = (float(t[0]) + float(t[1])) * 1e9 / runs
		for k, v in val.items():
			best[k] = min(best.get(k, v), v)
	rows[m] = best
u = rows.get("untraced", {}).get("wall")
fl = rows.get("floor", {})
print("  %-10s %8s %8s %9s %8s %8s %8s %8s %9s" % ("mode", "wall ns", "x untr", "ovh/floor",
      "entry", "free", "exit", "bpf/call", "loader/ev"))
def f(v, fmt):
	return fmt % v if v is not None else "-"
for m in order:
	b = rows[m]
	w = b.get("wall")
	ratio = None
	if u and w and fl.get("wall") and fl["wall"] > u:
		ratio = (w - u) / (fl["wall"] - u)
	print("  %-10s %8s %8s %9s %8s %8s %8s %8s %9s" % (m, f(w, "%.1f"),
	      f(w / u if u and w else None, "%.1fx"), f(ratio, "%.2f"),
	      f(b.get("entry"), "%.0f"), f(b.get("free"), "%.0f"), f(b.get("exit"), "%.0f"),
	      f(b.get("bpf"), "%.0f"), f(b.get("loader"), "%.0f")))
print("  (entry/free/exit: ns per run of the program, kernel's run_time_ns/run_cnt;")
print("   bpf/call: all programs' ns per workload call; loader/ev: the loader's")
print("   user+system ns per record (alloc return + free runs); -a: every process's)")
if fl:
	for m in order:
		b = rows[m]
		if m in ("untraced", "floor", "floor_read", "a_floor") or "entry" not in b:
			continue
		base = rows["a_floor"] if m.startswith("a_") and "a_floor" in rows else fl
		print("  %-10s above its floor: entry %+.0f, free %+.0f, exit %+.0f ns" % (m,
		      b["entry"] - base.get("entry", 0), b.get("free", 0) - base.get("free", 0),
		      b.get("exit", 0) - base.get("exit", 0)))
# The aims of the hot path's work (docs/PERFORMANCE.md), for the default
# mode: each program above the floor, the wall overhead against the floor's.
d = rows.get("dwarf", {})
if fl and "entry" in d:
	aims = [("entry", d["entry"] - fl.get("entry", 0), 50, "%+.0f ns"),
		("free", d.get("free", 0) - fl.get("free", 0), 60, "%+.0f ns"),
		("alloc_exit", d.get("exit", 0) - fl.get("exit", 0), 250, "%+.0f ns")]
	if u and d.get("wall") and fl.get("wall", 0) > u:
		aims.append(("overhead/floor's", (d["wall"] - u) / (fl["wall"] - u), 1.15, "%.2fx"))
	print("  aims, dwarf: " + "; ".join("%s %s (<= %s: %s)" % (n, fmt % v,
	      ("%.2f" if isinstance(a, float) else "%d") % a, "met" if v <= a else "not met")
	      for n, v, a, fmt in aims))
# What one read of user memory costs alloc_exit on this kernel: the floor of
# any record that carries the stack (docs/PERFORMANCE.md).
fr = rows.get("floor_read", {})
if fl and "exit" in fr and "exit" in fl:
	print("  one read of user memory (floor_read's alloc_exit above the floor): %+.0f ns"
	      % (fr["exit"] - fl["exit"]))
EOF
