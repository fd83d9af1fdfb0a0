#!/bin/bash
# test_overtime.sh - the heap over time (whole-run accounting) on
# prog_phases, a program with known phases, launched and dumped by
# SIGUSR1 at points it signals: the exact peak and the stack that held it,
# temporary allocations, calls per site, the leak growing by one block a
# dump (--growth), --dump, --json; only what changed is written again.
set -u
. "$(dirname "$0")/lib.sh"

PEAK=$((1048576 + 7 * 100))	# the transient buffer and site_m's 7 blocks

trace_phases "heapsnoop exits 0 with the command" -i 3600 --sample-ms 1 || exit 1
R=$T/rec
expect_eq "7 dumps: 6 on SIGUSR1, 1 at exit" "$(grep -c '^heapsnoop: dump ' "$R")" 7

"$HD" --stats "$R" > "$T/stats"
pid=$(sed -n 's/^pid \([0-9]*\) (prog_phases).*/\1/p' "$T/stats")
check "--stats: the peak, exactly, and its allocations" \
	grep -q "^pid [0-9]* (prog_phases): peak $PEAK bytes in 8 allocations at " "$T/stats"
check "--stats: 63 allocations, 51 temporary (50 + the peak buffer's)" \
	grep -q "^  63 allocations, $((PEAK + 50 * 32 + 5 * 64)) bytes allocated, 51 frees, 51 temporary" "$T/stats"
check "--stats: live at the end, site_m's and the leak's" \
	grep -q "^  live at the end: $((700 + 5 * 64)) bytes in 12 allocations" "$T/stats"
# The first stack of a section, frame 0's function.
top_of() { # SECTION-TITLE-REGEX
	awk -v t="$1" '$0 ~ t {s = 1; next} s && /^  [0-9]/ {h = $0; next}
		s && h && /#0 / {print h " @ " $3; exit}' "$T/stats" | sed 's/+0x[0-9a-f]*$//'
}
expect_eq "--stats: the peak's stack" "$(top_of '^peak consumers')" \
	"  1048576 bytes in 1 allocations at the peak from pid $pid: @ peak_buffer"
expect_eq "--stats: most calls" "$(top_of '^most calls')" \
	"  50 allocations of 1600 bytes from pid $pid: @ temp_site"
expect_eq "--stats: most temporary" "$(top_of '^most temporary')" \
	"  50 temporary of 50 allocations from pid $pid: @ temp_site"
check "--stats: site_m called exactly 7 times" \
	grep -q "^  7 allocations of 700 bytes from pid $pid:" "$T/stats"
expect_eq "--stats: most live" "$(top_of '^most live')" \
	"  700 bytes live in 7 allocations from pid $pid: @ site_m"

"$HD" --growth "$R" > "$T/growth"
expect_eq "--growth: the answer first, the function that grew" "$(sed -n 1p "$T/growth")" \
	"biggest growth: +320 bytes in +5 blocks, leak_one (prog_phases.c:52) <- main (prog_phases.c:79)"
expect_eq "--growth: the leak first, one block a dump" "$(sed -n 3p "$T/growth")" \
	"  +320 bytes (+5 allocations), +53.3 bytes per dump, grew in 5 of 6 intervals, from pid $pid:"
check "--growth: its stack is leak_one's" bash -c "sed -n 4p '$T/growth' | grep -q ' leak_one+'"
expect_eq "--growth: nothing else grew" "$(grep -c '^  +' "$T/growth")" 1

"$HD" --stats --dump 1 "$R" > "$T/stats1"
check "--dump 1: live then is site_m's only" \
	grep -q "^  live at the end: 700 bytes in 7 allocations" "$T/stats1"
"$HD" --report --dump all "$R" > "$T/repall"
expect_eq "--dump all: each dump's report in turn, the leak growing" \
	"$(sed -nE 's/^total: ([0-9.]+ [KMGT]iB \()?([0-9]+) bytes.*/\2/p' "$T/repall" | paste -sd' ')" \
	"700 764 828 892 956 1020 1020"
"$HD" --report --dump first "$R" > "$T/rep1"
expect_eq "--report --dump first: the first dump's live set" "$(tail -1 "$T/rep1")" \
	"total: 700 bytes in 7 allocations from 1 stacks"

# Only what changed is written again: dump 2 holds the leak's stack only,
# the exit dump (nothing changed) none.
expect_eq "dump 2 writes one stack record" "$(awk '/^heapsnoop: dump /{d++} d == 2 && /^heapsnoop: stack /' "$R" | wc -l)" 1
expect_eq "the exit dump writes none" "$(awk '/^heapsnoop: dump /{d++} d == 7 && /^heapsnoop: (stack|proc) /' "$R" | wc -l)" 0
check "sample records, live bytes over time" grep -q "^heapsnoop: sample pid=$pid time=[0-9.]* live=" "$R"

# --base: between dumps 2 and 4 (SIGUSR1 at points the program signalled)
# exactly the 2 blocks leaked in between, in every report.
"$HD" --folded --base-dump 2 --dump 4 "$R" > "$T/diff.folded"
expect_eq "--base-dump: --folded shows the 2 blocks allocated in between" \
	"$(sed 's/.*;//' "$T/diff.folded")" "leak_one 128"
"$HD" --report --base-dump 2 --dump 4 "$R" > "$T/diff.report"
expect_eq "--base-dump: --report's total" "$(tail -1 "$T/diff.report")" \
	"total: +128 bytes in +2 allocations from 1 stacks"
"$HD" --stats --sort allocations --base-dump 2 --dump 4 "$R" > "$T/diff.stats"
check "--base-dump: --stats counts the allocations in between" \
	grep -q "^  +2 allocations, +128 bytes allocated, +0 frees, +0 temporary" "$T/diff.stats"
awk '/^heapsnoop: dump /{d++} d == 2' "$R" > "$T/base.log"
"$HD" --folded --base "$T/base.log" --dump 4 "$R" > "$T/diff2.folded"
check "--base FILE: the same difference" cmp "$T/diff.folded" "$T/diff2.folded"
"$HD" --flamegraph "$T/diff.svg" --base-dump 4 --dump 2 "$R"
check "--base: a differential flame graph, shrinkage in blue" \
	grep -q 'leak_one (-128 bytes, 100.00%).*fill="rgb(40,40,230)"' "$T/diff.svg"

"$HD" --json "$R" > "$T/json"
check "--json is valid JSON" bash -c "python3 -m json.tool '$T/json' > /dev/null"
expect_eq "--json: totals equal --stats'" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["processes"][0]
s = d["stacks"]
print(p["peak_bytes"], p["allocations"], p["temporary"], sum(x["allocations"] for x in s),
      sum(x["temporary"] for x in s), sum(x["peak_bytes"] for x in s), p["live_bytes"],
      sum(x["live_bytes"] for x in s),
      [f["function"] for f in s[0]["frames"]][:2])' "$T/json")" \
	"$PEAK 63 51 63 51 $PEAK 1020 1020 ['peak_buffer', 'main']"

# --massif: ms_print reads it; its peak snapshot is --stats' peak, the
# transient buffer's stack under it.
"$HD" --massif "$T/massif" "$R"
check "--massif: ms_print reads it" bash -c "ms_print '$T/massif' > '$T/ms_print'"
commas=$(echo "$PEAK" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')
check "--massif: the peak snapshot holds --stats' peak ($commas B)" \
	grep -q "^100.00% ($commas""B) (heap allocation functions)" "$T/ms_print"
check "--massif: the peak buffer's stack under it" \
	grep -q "^->99.93% (1,048,576B) 0x[0-9A-F]*: peak_buffer (prog_phases.c:" "$T/ms_print"

# --timeline: valid SVG, rendered by headless Chromium with the peak marked.
"$HD" --timeline "$T/tl.svg" "$R"
check "--timeline: valid XML" xmllint --noout "$T/tl.svg"
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$T/chrome" --dump-dom "file://$T/tl.svg" > "$T/tl.dom" 2> /dev/null
check "--timeline: Chromium renders the peak, marked with its bytes" \
	grep -q ">peak $PEAK bytes</text>" "$T/tl.dom"
check "--timeline: hover on the peak gives time and bytes" \
	grep -q "<title>peak, +[0-9.]* s: $PEAK bytes in 8 allocations</title>" "$T/tl.dom"
check "--timeline: the top stacks' bands, named" \
	grep -q '<title>site_m: 700 bytes at the peak; live at each dump: 700 700 700 700 700 700 700</title>' "$T/tl.dom"
check "no events lost" grep -q "no events lost" "$T/err"
finish
