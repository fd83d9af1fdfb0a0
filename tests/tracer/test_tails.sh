#!/bin/bash
# test_tails.sh - deep stacks copied once (docs/DESIGN.md, "Deep stacks
# copied once"): prog_tails' threads allocate at varying depths below two
# phases of one depth, frames with and without a frame pointer. With the
# stack tails (the default) the programs copy only the stack below a tail
# still in place, and every stack comes out whole and the same, frame by
# frame, as with --no-tails (the whole stack copied at each allocation):
# the same ~b# records, address for address (ASLR off for both), each
# block under its own phase. -v says tails were used and none missed.
set -u
. "$(dirname "$0")/lib.sh"

# MODE OUT [OPTION...]: prog_tails traced, its records' stacks sorted into OUT.b.
traced() {
	local name=$1 out=$2
	shift 2
	setarch "$(uname -m)" -R "$HS" -q -v "$@" -o "$out" -- "$PROGS/prog_tails" 3 20 2> "$out.err"
	check "$name: exits 0" test $? -eq 0
	check_no_loss "$name: no events lost" "$out.err"
	"$HD" < "$out" | grep -o '~b#.*' | sort > "$out.b"
}

traced "--no-tails" "$T/whole" --no-tails
traced "tails" "$T/tails"
expect_eq "the same number of live blocks" "$(wc -l < "$T/tails.b")" "$(wc -l < "$T/whole.b")"
check "every stack the same, frame by frame" cmp -s "$T/whole.b" "$T/tails.b"
check "tails were taken up (-v)" \
	grep -qE '^heapsnoop: stack tails: [1-9][0-9]* made .*; [1-9][0-9]* stacks copied up to one still in place' "$T/tails.err"
check "no stack cut at a tail (-v)" \
	grep -qE '^heapsnoop: stack tails: .*; 0 did not meet it, 0 named one no longer kept' "$T/tails.err"
check "every stack complete (-v)" \
	grep -qE '^heapsnoop: unwinding: ([0-9]+) stacks, \1 complete' "$T/tails.err"
# Each block under its own phase: sizes 1000..1999 phase_a's, 2000..2999 phase_b's.
"$HD" -s "$T/tails" | awk '
	/^heapsnoop: live / { s = $0; sub(/^[^~]*~b#size: /, "", s); sub(/,.*/, "", s); size = s + 0 }
	/^    #[0-9]+ .* phase_[ab]\+/ && size {
		want = size < 2000 ? "phase_a" : "phase_b"
		if (index($0, want "+")) ok++; else bad++
		size = 0
	}
	END { print ok + 0, bad + 0 }' > "$T/phases"
read -r ok bad < "$T/phases"
expect_eq "each block under its own phase" "$bad" 0
# 3 threads x 20 rounds x 2 phases x 50 blocks.
expect_eq "... and every one of them is there" "$ok" 6000
finish
