#!/bin/bash
# test_vs_heaptrack.sh - the whole-run accounting against heaptrack on the
# same program (prog_phases): per stack of the program's own, the bytes at
# the peak, the calls and the temporary allocations agree exactly with
# heaptrack_print's (its -F folded stacks of each cost type).
#
# Left out: the stacks that do not go through main. heaptrack's preload
# library links libstdc++, whose start-up allocates its 72704-byte
# exception emergency pool in the traced process (from _dl_init); the
# program alone allocates nothing outside main. heaptrack's stacks end at
# main, ours reach _start: both are compared from main on.
set -u
. "$(dirname "$0")/lib.sh"

yes go | "$HS" -q -o "$T/rec" -- "$PROGS/prog_phases" > /dev/null 2> "$T/err"
check "heapsnoop exits 0 with the command" test "${PIPESTATUS[1]}" -eq 0
(cd "$T" && yes go | heaptrack -o "$T/ht" "$PROGS/prog_phases" > "$T/ht.out" 2>&1)
check "heaptrack wrote its data file" test -s "$T/ht.zst"

for cost in peak allocations temporary; do
	heaptrack_print -f "$T/ht.zst" -F "$T/ht.$cost" --flamegraph-cost-type "$cost" > /dev/null
	# "main (prog_phases.c);site_m (prog_phases.c); 700" -> "main;site_m 700"
	sed -e 's/ ([^)]*)//g' -e 's/; \([0-9-]*\)$/ \1/' "$T/ht.$cost" |
		awk '/^main;/ && $NF != 0' | sort > "$T/want.$cost"
	"$HD" --folded --sort "$cost" "$T/rec" | sed -n 's/.*;\(main;.*\)/\1/p' | sort > "$T/got.$cost"
	check "$cost per stack: as heaptrack_print's ($(paste -sd, "$T/got.$cost"))" \
		bash -c "[ -s '$T/want.$cost' ] && cmp -s '$T/want.$cost' '$T/got.$cost'"
done
check "heaptrack counted the same temporary allocations in all" \
	grep -q "^temporary memory allocations: 51 " <(heaptrack_print -f "$T/ht.zst" 2> /dev/null)
finish
