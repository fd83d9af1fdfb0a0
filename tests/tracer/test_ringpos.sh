#!/bin/bash
# test_ringpos.sh - records are ordered by their positions in the ring
# buffer's stream, not by a clock (docs/DESIGN.md, "Order without a
# clock"): a realloc releases its old block only if the block's record lies
# below the position the realloc noted at its entry. prog_churn's 100,000
# calls wrap a small ring many times; what it says it left live must be
# what heapsnoop says, to the block and the byte, in both unwinding modes.
set -u
. "$(dirname "$0")/lib.sh"

# MODE RING_MIB: fp records are ~100 bytes, dwarf ones ~1 KiB (5-10 wraps).
for run in "fp 1" "dwarf 8"; do
	set -- $run
	"$HS" -q --unwind "$1" --ringbuf-size "$2" -o "$T/rec" -- "$PROGS/prog_churn" \
		> "$T/out" 2> "$T/err"
	check "--unwind $1, $2 MiB ring: exits 0" test $? -eq 0
	read -r _ count bytes < "$T/out"
	fold "$T/rec"
	got_count=$(( $(folded_sum "$T/rec.count" "main;churn_alloc") +
		      $(folded_sum "$T/rec.count" "main;churn_realloc") ))
	got_bytes=$(( $(folded_sum "$T/rec.bytes" "main;churn_alloc") +
		      $(folded_sum "$T/rec.bytes" "main;churn_realloc") ))
	expect_eq "--unwind $1: the live blocks the program counted" "$got_count" "$count"
	expect_eq "--unwind $1: their bytes" "$got_bytes" "$bytes"
	check_no_loss "--unwind $1: no events lost" "$T/err"
	check "--unwind $1: no free went missing" \
		bash -c "! grep -q 'allocated again while live' '$T/err'"
done
finish
