#!/bin/bash
# test_live.sh - the consumer never stops for its own work (docs/DESIGN.md,
# "The consumer never stops"). prog_live makes 1,000,000 blocks live as
# fast as it can, then frees half: heapsnoop dumps every second (-i 1) and
# at each of the program's checkpoints (SIGUSR1), each dump written from a
# snapshot while events are read, and its live table grows 15 times
# meanwhile. Nothing may be lost (exit status 0, "no events lost"), every
# dump must be whole (its live lines as many as its header and end-dump
# say) and the live set at the end exact. The same again without dumps:
# growth alone. (bench/live.sh: 10 million, the consumer's stalls timed.)
set -u
. "$(dirname "$0")/lib.sh"
N=${HS_LIVE_N:-1000000}

# Every dump of RECORDS whole: "dump live=N", N live lines, "end-dump live=N".
dumps_whole() { # RECORDS
	awk '/^heapsnoop: dump / { if (open) bad++; open = 1; n = 0
			want = $0; sub(/.* live=/, "", want); sub(/ .*/, "", want); next }
	     open && /^heapsnoop: live / { n++; next }
	     /^heapsnoop: end-dump / { got = $0; sub(/.* live=/, "", got)
			if (!open || n != want || got != want) bad++; open = 0; dumps++ }
	     END { exit !(dumps > 0 && !bad && !open) }' "$1"
}

# The last dump of RECORDS (the one at the exit), on its own.
last_dump() { # RECORDS OUT
	awk '/^heapsnoop: dump / { n = 0; delete l } { l[n++] = $0 }
	     END { for (i = 0; i < n; i++) print l[i] }' "$1" > "$2"
}

run_case() { # NAME CHECKPOINTS HEAPSNOOP-OPTIONS...
	local name=$1 k=$2; shift 2
	mkfifo "$T/$name.out"
	"$HS" -q "$@" -o "$T/$name.rec" -- "$PROGS/prog_live" "$N" "$k" \
		> "$T/$name.out" 2> "$T/$name.err" &
	local hs=$! status
	exec 7< "$T/$name.out"
	# A dump asked for at each checkpoint, while the program goes on.
	for ((i = 0; i < k - 1; i++)); do
		wait_line 7 '^at ' || break
		kill -USR1 "$hs"
	done
	wait_line 7 '^done' || true
	exec 7<&-
	wait "$hs"
	status=$?
	check "$name: heapsnoop exits 0 (status $status)" test "$status" -eq 0
	check_no_loss "$name: no events lost" "$T/$name.err"
	check "$name: every dump whole" dumps_whole "$T/$name.rec"
	last_dump "$T/$name.rec" "$T/$name.last"
	fold "$T/$name.last"
	expect_eq "$name: the live set at the end: blocks" \
		"$(folded_sum "$T/$name.last.count" "grow_live")" $((N / 2))
	expect_eq "$name: the live set at the end: bytes" \
		"$(folded_sum "$T/$name.last.bytes" "grow_live")" $((N / 2 * 24))
}

run_case dumps 8 -i 1 --unwind fp --ringbuf-size 4
expect_eq "dumps: SIGUSR1 dumps written" \
	"$(grep -c '^heapsnoop: dump reason=usr1' "$T/dumps.rec" | awk '{ print ($1 > 0) }')" 1
run_case growth 0 --unwind fp --ringbuf-size 4
finish
