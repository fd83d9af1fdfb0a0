#!/bin/bash
# realprogs.sh - heapsnoop on programs nobody here wrote, at their real
# load (issue 31): each workload untraced, traced by heapsnoop (BPF, its
# defaults), by heapsnoop --preload (the in-process collector) and by
# heaptrack, the modes taking turns round after round (the machine is
# shared: a burst of load falls on one round of every mode, not on every
# round of one). Workloads:
#   clang++      Debian's clang++ 14 -O2 -c on bench/templates.cpp (the
#                standard library's templates, recursive ones: millions of
#                allocations, stacks deeper than heapsnoop's default 16 KiB
#                copy of the stack; the compiler runs in its driver's
#                process, nothing is forked)
#   python3.11   Debian's /usr/bin/python3.11 on bench/imports.py (some 200
#                standard modules, numpy, scipy's subpackages, ast.dump of
#                the standard library: Python frames on, heapsnoop's default)
#   sqlite3      Debian's sqlite3 restoring a 300,000-row database from its
#                .dump (made untraced first from bench/rows.sql), index too
#   prog_mt      tests/tracer/prog_mt.c, 16 threads churning 100,000 rounds
#                each (2.1 M calls, 16,000 blocks kept)
#   prog_paths   tests/tracer/prog_paths.c, 2^22 blocks, each from a call
#                path of its own, all kept
# Per workload and mode: wall time, best and median of the rounds, against
# untraced and heaptrack; heapsnoop's own peak memory and its tracker's
# bytes per unique stack (its closing accounting's lines), its log's size
# against heaptrack's data file; what heapsnoop says it lost or cut and its
# exit status. Then the oracle: calls to allocation functions, the peak
# and the bytes leaked, heapsnoop's (heapdecode --stats: the proc records)
# against heaptrack's (heaptrack_print), equal or not and by how much.
#
# Like with like. heaptrack 1.4's own definitions (src/track/
# heaptrack_preload.cpp, libheaptrack.cpp, src/analyze/
# accumulatedtracedata.cpp; checked on a program of known counts):
#   calls   every malloc, calloc, realloc, posix_memalign, aligned_alloc
#           and valloc that returned a block; a failed call, free(NULL)
#           and a free are not calls; a realloc is one call (its old block
#           freed first, then the new one allocated), moved or not;
#           memalign and pvalloc are not hooked ("TODO"): not counted.
#           heapsnoop's proc record `allocs` counts the same (docs/
#           OUTPUT.md: calls that succeeded, a realloc one), memalign and
#           pvalloc included.
#   peak    the most requested bytes live at once, over heaptrack's one
#           stream of events (a realloc's free before its allocation);
#           heapsnoop's `peak` is the same over its events.
#   leaked  the requested bytes never freed by the time heaptrack stops,
#           its builtin and embedded suppressions off here
#           (--disable-builtin-suppressions, --disable-embedded-
#           suppressions); heapsnoop's `bytes` live at the process's end.
#           A realloc(p, 0) frees p and returns NULL: heaptrack records
#           nothing of it, p stays leaked in its count.
#   heaptrack's preload library links libstdc++, whose start-up allocates
#   its exception emergency pool in the traced process, and heaptrack's
#   atexit handler frees it (__gnu_cxx::__freeres) before it stops: one
#   call of P bytes, live at heaptrack's peak, not leaked. That baseline is
#   measured here (heaptrack on an empty program: 1 call, P bytes at the
#   peak, 0 leaked) and taken out of every heaptrack figure. A program that
#   loads libstdc++ itself (clang++; python3.11 once scipy is imported)
#   has the same pool, which heapsnoop sees allocated and never freed: its
#   stack (libstdc++'s own code called from call_init) is found in the log
#   (heapdecode --folded) and taken out of heapsnoop's figures the same way.
# The collector's log (--preload) holds the live set only, no whole-run
# records: its calls and peak are "-", its leaked is its live set's total.
# Not taken out, and why a verdict may say "not equal" with heapsnoop
# right (docs/PERFORMANCE.md, "Real programs"): heaptrack's data lacks the
# frees a process makes at exit after its recording stopped (clang++'s
# static constructors' blocks, glibc's atexit lists: 237,987 bytes more
# "leaked"); its realloc hook writes the old block's free after the real
# realloc returned, so another thread given that address in between can
# be paired with it (prog_mt under load: 2,073 bytes more).
# python3.11 runs with PYTHONMALLOC=malloc in every mode (heapsnoop sets it
# for a Python it launches: heaptrack and the untraced run must get the
# same), PYTHONHASHSEED=0 and PYTHONDONTWRITEBYTECODE=1 (each run the
# same). Every mode runs with ASLR off (setarch -R): clang++ hashes
# pointers, and with addresses drawn anew its calls moved by tens between
# runs of one tool (110,005 to 110,048 on a small file); with them fixed a
# tool's runs repeat exactly (heapsnoop 110,003 each time, heaptrack
# 110,036). They still differ between tools: heaptrack's libraries (and
# the collector's) move the heap a preloaded tracer's process has, and the
# program's pointer hashing with it; heapsnoop (BPF) sees the untraced
# layout. A program whose threads race (prog_mt, numpy's) can reach a
# different peak in each run, traced or not: its peak may differ by a few
# blocks without either tool being wrong.
# heaptrack's run is limited to REALPROGS_HT_VMEM of address space: on
# python3.11's workload heaptrack_interpret (its own raw data replayed
# alone too) grows to 19 GB and dies with std::bad_alloc, which on a shared
# 24 GB machine takes others' memory first. A heaptrack that failed is
# said, its figures shown as far as its file goes, and it is no oracle.
#
# Nothing here is a test: no timing is checked against anything.
#   usage: bench/realprogs.sh [BUILD_DIR]
#   REALPROGS_ROUNDS (3; 1 for a quick look), REALPROGS_ONLY ("clang++
#   python3.11 sqlite3 prog_mt prog_paths": a subset, in that order),
#   REALPROGS_MT ("16 100000": prog_mt's threads and rounds),
#   REALPROGS_PATHS (22: prog_paths's levels, 2^22 paths),
#   HOG=1: as many busy loops as CPUs beside every mode, killed when the
#   rounds end;
#   REALPROGS_HT_VMEM (8388608 KiB): heaptrack's run's address space
#   (ulimit -v; see above);
#   REALPROGS_KEEP=1: the scratch directory (last round's logs, heaptrack's
#   files, each run's output) kept, and said where.
# Needs root. Installs heaptrack, clang, python3.11, python3-numpy,
# python3-scipy and sqlite3 when missing.
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/.."
ROUNDS=${REALPROGS_ROUNDS:-3}
ONLY=${REALPROGS_ONLY:-clang++ python3.11 sqlite3 prog_mt prog_paths}
HOG=${HOG:-0}
HT_VMEM=${REALPROGS_HT_VMEM:-8388608}
MODES="untraced heapsnoop preload heaptrack"
T=$(mktemp -d)
HOGS=()
stop_hogs() {
	local p
	for p in "${HOGS[@]}"; do
		kill "$p" 2> /dev/null || true
	done
	wait 2> /dev/null || true
	HOGS=()
}
cleanup() {
	stop_hogs
	if [ "${REALPROGS_KEEP:-0}" = 1 ]; then
		echo "realprogs: logs and data files kept in $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT

missing=
for p in heaptrack clang python3.11 python3-numpy python3-scipy sqlite3; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "realprogs: installing$missing" >&2
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing > /dev/null
fi
make -s OUTPUT="$OUT" "$OUT/heapsnoop" "$OUT/heapdecode" "$OUT/tests/prog_mt" "$OUT/tests/prog_paths" > /dev/null
HS=$OUT/heapsnoop
HD=$OUT/heapdecode

# The workloads: W_CMD the command, W_ENV its environment (every mode's),
# W_IN its standard input; prep() before every run (untimed).
declare -A W_CMD W_ENV W_IN
W_CMD[clang++]="clang++ -std=c++17 -O2 -c -o $T/templates.o bench/templates.cpp"
W_CMD[python3.11]="/usr/bin/python3.11 bench/imports.py"
W_ENV[python3.11]="PYTHONMALLOC=malloc PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1"
W_CMD[sqlite3]="sqlite3 -batch -init /dev/null $T/load.db"
W_IN[sqlite3]=$T/dump.sql
W_CMD[prog_mt]="$OUT/tests/prog_mt ${REALPROGS_MT:-16 100000}"
W_CMD[prog_paths]="$OUT/tests/prog_paths ${REALPROGS_PATHS:-22}"
for w in $ONLY; do
	[ -n "${W_CMD[$w]:-}" ] || { echo "realprogs: no workload $w" >&2; exit 1; }
done
prep() {
	rm -f "$T/templates.o" "$T/load.db" "$T/load.db-journal"
}
case " $ONLY " in *" sqlite3 "*)
	sqlite3 -batch -init /dev/null "$T/src.db" < bench/rows.sql
	sqlite3 -batch -init /dev/null "$T/src.db" .dump > "$T/dump.sql"
	rm -f "$T/src.db" ;;
esac

# W MODE: one run of workload W in MODE, its wall seconds appended to
# $T/W.MODE.wall, its exit status in $T/W.MODE.rc, its output in
# $T/W.MODE.out and .err, its log in $T/W.MODE.log (heaptrack's: .ht.*).
run_once() {
	local w=$1 m=$2 f=$T/$1.$2 t0 t1 rc=0
	local -a cmd env
	read -r -a cmd <<< "${W_CMD[$w]}"
	read -r -a env <<< "${W_ENV[$w]:-}"
	case $m in
	heapsnoop) cmd=("$HS" -v -o "$f.log" -- "${cmd[@]}") ;;
	preload) cmd=("$HS" --preload -v -o "$f.log" -- "${cmd[@]}") ;;
	heaptrack) rm -f "$f".ht.*; cmd=(heaptrack -o "$f.ht" "${cmd[@]}") ;;
	esac
	prep
	t0=$EPOCHREALTIME
	(
		[ "$m" != heaptrack ] || ulimit -v "$HT_VMEM"
		exec env "${env[@]}" setarch "$(uname -m)" -R "${cmd[@]}"
	) < "${W_IN[$w]:-/dev/null}" > "$f.out" 2> "$f.err" || rc=$?
	t1=$EPOCHREALTIME
	echo "$rc" > "$f.rc"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >> "$f.wall"
	if [ "$m" = untraced ] && [ "$rc" != 0 ]; then
		echo "realprogs: $w failed untraced (exit $rc):" >&2
		tail -5 "$f.err" >&2
		exit 1
	fi
}

# Stacks taken out of both sides' bytes, as heapdecode --folded and
# heaptrack_print -F name their frames: libstdc++'s pool (an unnamed frame
# of libstdc++ called straight from call_init, libstdc++'s one allocation
# at its start-up; heaptrack's own is its baseline's) and the dynamic
# thread vectors (glibc's allocate_dtv, _dl_resize_dtv), whose size grows
# with the TLS modules a process has: heaptrack's preload brings 3, the
# collector 1, so the same thread's vector is 48 or 16 bytes bigger there.
POOL_RE=';call_init;\[libstdc\+\+\.so[^];]*\] -?[0-9]+$'
DTV_RE='(^|;)(allocate_dtv|_dl_resize_dtv)( \(|;| -?[0-9]+$)'

# heaptrack's figures of a data file: "calls peak dtv_peak leaked
# dtv_leaked", exact (its summary rounds bytes: these are the sums of its
# flame graph files').
ht_counts() {
	local calls
	calls=$(heaptrack_print -f "$1" -p 0 -a 0 -T 0 -F "$T/ht.peak" --flamegraph-cost-type peak \
		--disable-builtin-suppressions --disable-embedded-suppressions |
		sed -n 's/^calls to allocation functions: \([0-9]*\) .*/\1/p')
	heaptrack_print -f "$1" -p 0 -a 0 -T 0 -F "$T/ht.leaked" --flamegraph-cost-type leaked \
		--disable-builtin-suppressions --disable-embedded-suppressions > /dev/null
	echo "${calls:--}" "$(sums "$T/ht.peak")" "$(sums "$T/ht.leaked")"
}

# Of a flame graph file: "total dtv" (the values of its lines, of the
# dynamic thread vectors' lines).
sums() {
	awk -v dtv="$DTV_RE" '{ s += $NF } $0 ~ dtv { d += $NF } END { print s + 0, d + 0 }' "$1"
}

# LOG NEED KEYS: of a heapsnoop log, "pool_calls pool_peak pool_live
# dtv_peak dtv_live" from heapdecode --folded (KEYS: "allocations peak
# live", or "live" alone for a collector's log, which has no whole-run
# records: the others 0). --sort allocations and --sort peak are the whole
# run's, plain --folded the live set at the end. Each pass symbolizes
# every stack (a minute for millions): made only when the log maps
# libstdc++ or heaptrack saw thread vectors (NEED=1); else zeros.
hs_takeout() {
	local log=$1 need=$2 keys=$3 k
	if [ "$need" != 1 ] && ! grep -q '^heapsnoop: map .*path=.*/libstdc++\.so' "$log"; then
		echo 0 0 0 0 0
		return
	fi
	for k in allocations peak live; do
		case " $keys " in
		*" $k "*) ;;
		*)
			[ $k = allocations ] && printf 0 || printf ' 0 0'
			continue ;;
		esac
		if [ $k = live ]; then
			"$HD" --folded "$log"
		else
			"$HD" --folded --sort $k "$log"
		fi 2> /dev/null | awk -v pool="$POOL_RE" -v dtv="$DTV_RE" -v k=$k '
			$0 ~ pool { p += $NF } $0 ~ dtv { d += $NF }
			END { printf "%s%d", k == "allocations" ? "" : " ", p; if (k != "allocations") printf " %d", d }'
	done | awk '{ print $1, $2, $4, $3, $5 }'
}

# heapsnoop's figures of a log with proc records: "calls peak live procs"
# (calls and live summed over its processes, the highest peak).
hs_counts() {
	"$HD" --stats --top 1 "$1" 2> /dev/null | awk '
	/^pid [0-9]+ \(.*\): peak [0-9]+ bytes/ {
		n++; for (i = 1; i < NF; i++) if ($i == "peak") { p = $(i + 1); break }
		if (p > peak) peak = p }
	/^  [0-9]+ allocations, / { calls += $1 }
	/^  live at the end: / { live += $5 }
	END { if (n) print calls, peak, live, n; else print "- - - 0" }'
}

# The live set's bytes of a log (the collector's): its --report's total.
live_total() {
	"$HD" --report --by module "$1" 2> /dev/null |
		sed -n 's/^total: \([0-9]*\) bytes in .*/\1/p' | tail -n 1
}

# LOG MODE: what heapsnoop said of its run: "own_kib bytes_per_stack lost
# cut" ("-" where it says nothing). heapsnoop's lost counts every event of
# EVENTS LOST; the collector's (preload) is "A/S": A blocks NOT RECORDED
# (its table full), S recorded without their stack (its stacks full).
# cut: the allocations with a truncated stack and those with an
# unreadable frame, as heapsnoop's closing accounting counts them.
hs_said() {
	awk -v mode="$2" '
	/^heapsnoop: heapsnoop.s own memory: / { own = $5 }
	/^heapsnoop: tracker memory: / {
		for (i = 1; i <= NF; i++) if ($i == "unique") { b = $(i - 4); s = $(i - 1) }
		if (s > 0) per = sprintf("%.0f", b / s) }
	/^heapsnoop: EVENTS LOST: / {
		sub(/^.*EVENTS LOST: /, ""); n = split($0, f, /[^0-9]+/)
		for (i = 1; i <= n; i++) lost += f[i] }
	/NOT RECORDED: [0-9]+ allocations \(its live table was full\), [0-9]+ stacks/ {
		sub(/^.*NOT RECORDED: /, ""); nra += $1; nrs += $8 }
	/^heapsnoop: [0-9]+ allocations had a truncated stack, [0-9]+ a stack with/ {
		cut += $2 + $8 }
	END {
		lost = mode == "preload" ? (nra + 0) "/" (nrs + 0) : lost + 0
		printf "%s %s %s %s\n", own == "" ? "-" : own, per == "" ? "-" : per, lost, cut + 0 }' "$1"
}

if [ "$HOG" = 1 ]; then
	for _ in $(seq "$(nproc)"); do
		(while :; do :; done) &
		HOGS+=($!)
	done
fi

cpus=$(nproc)
echo "real programs: $ROUNDS round(s), modes in turn (untraced, heapsnoop, heapsnoop --preload," \
	"heaptrack); HOG=$HOG ($([ "$HOG" = 1 ] && echo "$cpus busy loops beside every run" ||
	echo "no busy loop")); $cpus CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  heapsnoop $("$HS" --version 2>&1 | head -n 1); $(heaptrack --version 2>&1 | head -n 1);" \
	"$(clang++ --version | head -n 1); Python $(/usr/bin/python3.11 -c 'import sys; print(sys.version.split()[0])');" \
	"sqlite3 $(sqlite3 --version | cut -d' ' -f1)"
for ((r = 1; r <= ROUNDS; r++)); do
	for w in $ONLY; do
		for m in $MODES; do
			run_once "$w" "$m"
		done
	done
	echo "  round $r of $ROUNDS done, load $(cut -d' ' -f1-3 /proc/loadavg)"
done
# The busy loops were beside the runs; what follows only reads their files.
stop_hogs

# heaptrack's own additions: an empty program under it.
printf 'int main(void) { return 0; }\n' > "$T/empty.c"
gcc -O2 -o "$T/empty" "$T/empty.c"
(cd "$T" && heaptrack -o "$T/empty.ht" "$T/empty" > /dev/null 2>&1)
read -r base_calls base_peak _ base_leaked _ < <(ht_counts "$(echo "$T"/empty.ht.*)")

wall_of() { # W MODE: "best median" of its rounds
	sort -g "$T/$1.$2.wall" | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print v[1], m }'
}
size_of() { stat -c %s "$1" 2> /dev/null || echo 0; }
ht_file() { # W: heaptrack's data file of W (.zst or .gz, as it was built)
	local f
	for f in "$T/$1.heaptrack.ht".*; do
		echo "$f"
	done | head -n 1
}

echo
echo "cost (wall seconds, best and median of $ROUNDS; figures of the last round):"
printf '  %-11s %-9s %8s %8s %8s %8s %9s %8s %8s %8s %9s %9s %4s\n' workload mode best median \
	"x untr." "x htrack" "own KiB" "B/stack" "log MB" "x htrack" lost cut exit
for w in $ONLY; do
	read -r ub _ < <(wall_of "$w" untraced)
	read -r hb _ < <(wall_of "$w" heaptrack)
	htf=$(ht_file "$w")
	hts=$(size_of "$htf")
	for m in $MODES; do
		f=$T/$w.$m
		read -r b md < <(wall_of "$w" "$m")
		own=- per=- lost=- cut=- logmb=- logx=-
		case $m in
		heapsnoop | preload)
			read -r own per lost cut < <(hs_said "$f.err" "$m")
			if [ "$m" = preload ]; then
				# The collector's cut stacks: its live records that say cut=.
				cut=$(awk '/^heapsnoop: live .* cut=/ { n++ } END { print n + 0 }' "$f.log")
				cut="$cut live"
			fi
			s=$(size_of "$f.log")
			logmb=$(awk -v s="$s" 'BEGIN { printf "%.1f", s / 1e6 }')
			logx=$(awk -v s="$s" -v h="$hts" 'BEGIN { if (h) printf "%.2f", s / h; else print "-" }') ;;
		heaptrack)
			logmb=$(awk -v s="$hts" 'BEGIN { printf "%.1f", s / 1e6 }')
			logx=1.00 ;;
		esac
		printf '  %-11s %-9s %8.2f %8.2f %7.2fx %7.2fx %8s %8s %8s %8s %9s %9s %4s\n' \
			"$([ "$m" = untraced ] && echo "$w")" "$m" "$b" "$md" \
			"$(awk -v a="$b" -v u="$ub" 'BEGIN { print a / u }')" \
			"$(awk -v a="$b" -v h="$hb" 'BEGIN { print a / h }')" \
			"$own" "$per" "$logmb" "$logx" "$lost" "$cut" "$(cat "$f.rc")"
	done
done

echo
echo "oracle (the last round): heaptrack's calls, peak and leaked bytes against heapsnoop's;"
echo "  heaptrack's baseline ($base_calls call, $base_peak bytes at its peak, $base_leaked leaked:" \
	"its libstdc++'s pool) taken out of its figures, libstdc++'s pool out of heapsnoop's," \
	"the thread vectors' bytes out of both"
notes=()
printf '  %-11s %-9s %11s %11s %13s %13s %13s %13s  %s\n' workload mode calls diff \
	"peak B" diff "leaked B" diff verdict
cell() { # VALUE ORACLE: the difference, "=" or signed; "-" without both
	if [ "$1" = - ] || [ "$2" = - ]; then
		echo -
	else
		awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d == 0) print "="; else printf "%+d\n", d }'
	fi
}
for w in $ONLY; do
	read -r hc hp hdp hl hdl < <(ht_counts "$(ht_file "$w")")
	[ "$hc" = - ] || hc=$((hc - base_calls))
	hp=$((hp - base_peak - hdp)) hl=$((hl - base_leaked - hdl))
	need=0
	[ "$hdp" = 0 ] && [ "$hdl" = 0 ] || need=1
	# heaptrack_interpret's own failure: its data file ends where it did.
	htfail=$(grep -m 1 -E 'terminate called|what\(\)|Segmentation fault|Aborted|core dumped' \
		"$T/$w.heaptrack.err" || true)
	[ "$(cat "$T/$w.heaptrack.rc")" = 0 ] || htfail="${htfail:+$htfail; }exit status $(cat "$T/$w.heaptrack.rc")"
	printf '  %-11s %-9s %11s %11s %13s %13s %13s %13s  %s\n' "$w" heaptrack "$hc" "" "$hp" "" "$hl" "" \
		"${htfail:+FAILED: its figures are of a partial file}"
	[ -z "$htfail" ] || notes+=("$w: heaptrack failed ($htfail): no oracle")
	taken="heaptrack's thread vectors $hdp at the peak, $hdl leaked"
	for m in heapsnoop preload; do
		f=$T/$w.$m.log
		if [ "$m" = heapsnoop ]; then
			read -r c p l procs < <(hs_counts "$f")
			read -r pc pp pl dp dl < <(hs_takeout "$f" $need "allocations peak live")
			[ "$c" = - ] || c=$((c - pc)) p=$((p - pp - dp)) l=$((l - pl - dl))
			[ "$procs" -le 1 ] || notes+=("$w: heapsnoop's log has $procs processes: calls and" \
				"live summed, the highest peak")
			taken+="; heapsnoop's pool $pc call(s), $pp at the peak, $pl live,"
			taken+=" its thread vectors $dp at the peak, $dl live"
		else
			c=- p=-
			l=$(live_total "$f")
			[ -n "$l" ] || l=-
			read -r _ _ pl _ dl < <(hs_takeout "$f" $need live)
			[ "$l" = - ] || l=$((l - pl - dl))
			taken+="; the collector's pool $pl live, its thread vectors $dl live"
		fi
		xc=$(cell "$c" "$hc") xp=$(cell "$p" "$hp") xl=$(cell "$l" "$hl")
		verdict=equal
		for d in "$xc" "$xp" "$xl"; do
			case $d in =|-) ;; *) verdict="not equal" ;; esac
		done
		[ -z "$htfail" ] || verdict="no oracle"
		printf '  %-11s %-9s %11s %11s %13s %13s %13s %13s  %s\n' "" "$m" "$c" "$xc" "$p" "$xp" \
			"$l" "$xl" "$verdict"
	done
	notes+=("$w, taken out (bytes): $taken")
done
for n in "${notes[@]}"; do
	echo "  ($n)"
done

echo
echo "what heapsnoop said was lost or cut (the last round; its exit status 3: the records are incomplete):"
said=0
for w in $ONLY; do
	for m in heapsnoop preload; do
		grep -hE 'EVENTS LOST|NOT RECORDED|INTERPRETER FRAMES LOST|truncated stack|deeper than the copy|allocated again while live|^heapsnoop: exit status' \
			"$T/$w.$m.err" | sed "s/^/  $w $m: /" > "$T/said" || true
		if [ -s "$T/said" ]; then
			said=1
			cat "$T/said"
		fi
	done
done
[ $said = 1 ] || echo "  nothing"
echo "  (other engineers build and test on this machine: compare within one run)"
