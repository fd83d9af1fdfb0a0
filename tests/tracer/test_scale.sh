#!/bin/bash
# test_scale.sh - stacks at scale (issue 31): prog_paths LEVELS (16) makes
# 2^LEVELS blocks, each from a call path of its own, the path's bits its
# call sites. heapsnoop -v -o LOG.zst: nothing lost; its stack tables at
# most 64 bytes per unique stack (-v says); the log zstd-compressed and
# at most twice heaptrack's file of the same run. heapdecode: every block
# and its bytes, 2^LEVELS + 1 stacks (main's array of their addresses
# besides); each block's frames its path's bits, call site by call site,
# and its size the program's for that path; each path once. The log in
# the old form (each record its own ~m# tokens, made from the new one by
# heapdecode's filter and --encode): every output of heapdecode the same
# as the new form's. No timing.
set -u
. "$(dirname "$0")/lib.sh"
L=${HS_SCALE_LEVELS:-16}
N=$((1 << L))
SRC=$(realpath "$(dirname "$0")/prog_paths.c")
# The two call sites of down(): the path's bit 1, then its bit 0.
one=$(grep -n 'down(level - 1, path, bits >> 1);' "$SRC" | sed -n 1p | cut -d: -f1)
zero=$(grep -n 'down(level - 1, path, bits >> 1);' "$SRC" | sed -n 2p | cut -d: -f1)

"$HS" -v -o "$T/log.zst" -- "$PROGS/prog_paths" "$L" > /dev/null 2> "$T/err"
check "prog_paths $L: traced (exit 0)" test $? -eq 0
check_no_loss "prog_paths $L: no events lost" "$T/err"
line=$(grep '^heapsnoop: stack tables: ' "$T/err")
expect_eq "-v: the stack tables' unique stacks" \
	"$(sed -n 's/^heapsnoop: stack tables: \([0-9]*\) unique stacks.*/\1/p' <<< "$line")" $((N + 1))
per=$(sed -n 's/.*: \([0-9.]*\) bytes per unique stack; .*/\1/p' <<< "$line")
check "-v: at most 64 bytes of stack tables per unique stack, the fixed ones apart ($per)" \
	awk -v b="$per" 'BEGIN { exit !(b != "" && b <= 64) }'
check "the log is zstd (its magic), whole" \
	bash -c "head -c 4 '$T/log.zst' | od -An -tx1 | grep -q '28 b5 2f fd' &&
		 { ! command -v zstd > /dev/null || zstd -tq '$T/log.zst'; }"

# What the program holds: each path's 16 + path % 64 bytes, and its array.
bytes=$(awk -v n=$N 'BEGIN { for (p = 0; p < n; p++) s += 16 + p % 64; print s + 8 * n }')
expect_eq "--report: every block, its bytes, a stack each" \
	"$("$HD" --report "$T/log.zst" | tail -n 1)" \
	"total: $(human_size $bytes) ($bytes bytes) in $((N + 1)) allocations from $((N + 1)) stacks"
expect_eq "--stats: the process's whole run" \
	"$("$HD" --stats "$T/log.zst" | sed -n 's/^  live at the end: //p')" \
	"$bytes bytes in $((N + 1)) allocations"
"$HD" -s "$T/log.zst" > "$T/new.s"
check "the dump's header counts them" \
	grep -q "^heapsnoop: dump reason=exit .* live=$((N + 1)) bytes=$bytes stacks=$((N + 1))" "$T/new.s"

# Each leaf block's frames, innermost first: leaf, down at level 0, then
# down's call site at levels 1..L, the path's bits from its highest.
awk -v one="$one" -v zero="$zero" -v L="$L" '
	function done() {
		if (!on) return
		if (sites != L || size != 16 + path % 64 || seen[path]++) bad++
		blocks++; on = 0 }
	/^heapsnoop: / { done() }
	/^heapsnoop: live / && / size=[0-9]+ / {
		size = $0; sub(/.* size=/, "", size); sub(/ .*/, "", size)
		if (size + 0 >= 16 && size + 0 < 80) { on = 1; path = 0; sites = 0 } next }
	on && /^    #[0-9]+ / && / down\+/ {
		f = $NF; sub(/.*:/, "", f)
		if (f == one) { path = path * 2 + 1; sites++ }
		else if (f == zero) { path = path * 2; sites++ } }
	END { done(); n = 0; for (p in seen) n++
	      print blocks " blocks, " n " paths, " bad + 0 " wrong" }' "$T/new.s" > "$T/paths"
expect_eq "-s: each block's frames its path's bits, its size the path's, each path once" \
	"$(cat "$T/paths")" "$N blocks, $N paths, 0 wrong"

# The old form: each record's stack in ~m# tokens, no tree.
"$HD" "$T/log.zst" | grep -v '^heapsnoop: \(tree\|node\) ' |
	sed -E 's/ (size=[0-9]+ )?node=([0-9]+|\^) ~b#/ ~b#/' | "$HD" --encode > "$T/old.log"
expect_eq "the old form: a token for each live and stack record, no node=" \
	"$(grep -c '^heapsnoop: \(live\|stack\) .* ~m#[A-Za-z0-9+/=]*$' "$T/old.log") $(grep -c 'node=' "$T/old.log")" \
	"$((2 * (N + 1))) 0"
same() { # LABEL ARGS...: heapdecode ARGS on both forms, the same, its exit status too
	local label=$1; shift
	"$HD" "$@" "$T/log.zst" > "$T/new.out" 2>&1
	echo "exit $?" >> "$T/new.out"
	"$HD" "$@" "$T/old.log" > "$T/old.out" 2>&1
	echo "exit $?" >> "$T/old.out"
	check "old and new forms alike: $label" cmp -s "$T/new.out" "$T/old.out"
}
same "--report" --report
same "--report --by function" --report --by function
same "--stats" --stats
same "--folded" --folded
same "--folded --count" --folded --count
same "--folded --sort peak" --folded --sort peak
same "--json" --json
same "--growth" --growth
same "--fail-on-leak (exit status 23, the stacks that broke it)" --fail-on-leak
same "--max-peak (exit status 24)" --max-peak 1000
# The outputs that name their input: each read as "log" in a folder of its own
# (the compressed one too: heapdecode tells it by its bytes, not its name).
mkdir "$T/new" "$T/old"
ln -s "$T/log.zst" "$T/new/log"
ln -s "$T/old.log" "$T/old/log"
for o in speedscope massif pprof flamegraph; do
	(cd "$T/new" && "$HD" "--$o" "$o" log 2> /dev/null)
	(cd "$T/old" && "$HD" "--$o" "$o" log 2> /dev/null)
	check "old and new forms alike: --$o" bash -c "[ -s '$T/new/$o' ] && cmp -s '$T/new/$o' '$T/old/$o'"
done
check "old and new forms alike: -s, every frame" \
	bash -c "cmp -s <(grep '^    ' '$T/new.s') <('$HD' -s '$T/old.log' | grep '^    ')"
check "old and new forms alike: the filter's ~b# stacks" \
	bash -c "cmp -s <('$HD' '$T/log.zst' | sed -n 's/.*\(~b#\)/\1/p') <('$HD' '$T/old.log' | sed -n 's/.*\(~b#\)/\1/p')"
check "the log decompressed reads as the log" \
	bash -c "! command -v zstd > /dev/null ||
		 cmp -s <(zstd -dc '$T/log.zst' | '$HD' --stats) <('$HD' --stats '$T/log.zst')"

# heaptrack's file of the same run (its .zst), where heaptrack is.
if command -v heaptrack > /dev/null; then
	(cd "$T" && heaptrack -o "$T/ht" "$PROGS/prog_paths" "$L" > "$T/ht.out" 2>&1)
	ours=$(stat -c %s "$T/log.zst") theirs=$(stat -c %s "$T/ht.zst" 2> /dev/null || echo 0)
	check "the log at most twice heaptrack's file ($ours bytes, heaptrack's $theirs)" \
		test "$theirs" -gt 0 -a "$ours" -le $((2 * theirs))
else
	echo "skip the log against heaptrack's: no heaptrack here"
fi
finish
