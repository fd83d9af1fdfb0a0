#!/bin/bash
# test_runtime.sh - the C runtime's own allocations apart from the
# program's (suppress__runtime(), issue 32): prog_rtleak leaks 4000 bytes
# from own_leak and printf's stdout buffer is glibc's, kept for the
# process's lifetime. The -s summary, heapdecode --report and both leak
# gates list the program's leak alone, the buffer in a line of its own;
# --no-default-suppressions counts it again (2 leaks).
set -u
. "$(dirname "$0")/lib.sh"

"$HS" -q --summary=3 --fail-on-leak -o "$T/rt.rec" -- "$PROGS/prog_rtleak" > "$T/rt.out" 2> "$T/rt.err"
expect_eq "a leak and the stdout buffer: exit status 23" "$?" 23
check "the program printed its line (stdout's buffer allocated)" grep -q '^leaked 4000 bytes' "$T/rt.out"
check_no_loss "no events lost" "$T/rt.err"
# A size as the human reports give it (1024-based, one decimal).
kib() { awk -v b="$1" 'BEGIN { if (b < 1024) print b " bytes"; else printf "%.1f KiB\n", b / 1024 }'; }
# -s's stacks' sizes, in order.
sizes() { awk '/^    [0-9.]+ (bytes|KiB|MiB) in [0-9]+ allocations from pid/ { print $1 " " $2 }' "$1" | sort | paste -sd,; }
expect_eq "-s: the program's stacks are own_leak's alone, 3.9 KiB (4000 bytes)" "$(sizes "$T/rt.err")" "3.9 KiB"
check "-s: the stdout buffer said apart" grep -Eq \
	"^heapsnoop: the C runtime's own, not above: [0-9.]+ KiB \([0-9]+ bytes\) in 1 allocation \(stdio buffer\)" "$T/rt.err"
check "the gate: 1 leak of 4000 bytes, own_leak's" \
	grep -q '^heapsnoop: LEAK GATE FAILED: 4000 bytes in 1 allocations live at the end, not suppressed, more than the 0 allowed (--fail-on-leak), from these 1 stacks:$' "$T/rt.err"
check "the gate: the runtime's not counted, said" grep -Eq \
	"^heapsnoop: the C runtime's own, not counted: [0-9.]+ KiB \([0-9]+ bytes\) in 1 allocation \(stdio buffer\)" "$T/rt.err"
buf=$(sed -n "s/^heapsnoop: the C runtime's own, not counted: [0-9.]* KiB (\([0-9]*\) bytes).*/\1/p" "$T/rt.err")

"$HS" -q --summary=3 --fail-on-leak --no-default-suppressions -o "$T/all.rec" -- "$PROGS/prog_rtleak" \
	> /dev/null 2> "$T/all.err"
expect_eq "--no-default-suppressions: exit status 23" "$?" 23
check "--no-default-suppressions: the gate counts 2 leaks, the buffer's too" \
	grep -q "^heapsnoop: LEAK GATE FAILED: $((4000 + buf)) bytes in 2 allocations .* from these 2 stacks:$" "$T/all.err"
expect_eq "--no-default-suppressions: -s shows both stacks" "$(sizes "$T/all.err")" \
	"$(printf '%s\n' "3.9 KiB" "$(kib "$buf")" | sort | paste -sd,)"
check "--no-default-suppressions: nothing said apart" bash -c "! grep -q \"C runtime's own\" '$T/all.err'"

# heapdecode on the log: the same split.
"$HD" --report "$T/rt.rec" > "$T/report" 2> "$T/report.err"
expect_eq "--report: one stack, own_leak's, in the program's total" \
	"$(grep -cE '^[0-9.]+ (bytes|KiB|MiB) \(' "$T/report"):$(grep '^total:' "$T/report")" \
	"1:total: 3.9 KiB (4000 bytes) in 1 allocations from 1 stacks"
check "--report: its frame 0 is own_leak" grep -q '#0 .* own_leak+0x' "$T/report"
expect_eq "--report: the runtime's line after the total" \
	"$(tail -1 "$T/report" | cut -d, -f1-2)" \
	"the C runtime's own, not above: $(kib "$buf") ($buf bytes) in 1 allocation (stdio buffer)"
"$HD" --report --no-default-suppressions "$T/rt.rec" > "$T/report2"
expect_eq "--report --no-default-suppressions: both stacks, in the total" \
	"$(tail -1 "$T/report2")" "total: $(kib $((4000 + buf))) ($((4000 + buf)) bytes) in 2 allocations from 2 stacks"
"$HD" --fail-on-leak "$T/rt.rec" 2> "$T/hd.err"
expect_eq "heapdecode --fail-on-leak: exit status 23" "$?" 23
check "heapdecode's gate: 1 leak of 4000 bytes" \
	grep -q '^heapdecode: LEAK GATE FAILED: 4000 bytes in 1 allocations .* from these 1 stacks:$' "$T/hd.err"
"$HD" --fail-on-leak=4000 "$T/rt.rec" 2> /dev/null
expect_eq "heapdecode --fail-on-leak=4000: the buffer is not counted, exit 0" "$?" 0
"$HD" --fail-on-leak=4000 --no-default-suppressions "$T/rt.rec" 2> "$T/hd2.err"
expect_eq "... with --no-default-suppressions: exit status 23" "$?" 23
check "... 2 leaks" grep -q "LEAK GATE FAILED: $((4000 + buf)) bytes in 2 allocations" "$T/hd2.err"
finish
