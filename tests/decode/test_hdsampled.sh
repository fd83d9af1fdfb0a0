#!/bin/bash
# test_hdsampled.sh - heapdecode on a sampled dump (`dump ... sample-bytes=M`,
# docs/OUTPUT.md): each live block of s bytes counts as the s/p bytes and
# 1/p blocks it stands for (p = 1 - e^(-s/M)), in every report, and every
# report says its values are estimates; an unsampled dump of the same log is
# counted as it is. The input is written here, so the numbers are exact:
# M = 1000, two blocks of 1000 bytes (p = 1 - 1/e: 1582 bytes and 1.582
# blocks each) from one stack, one of 100000 (p = 1: itself) from another;
# the total's margin at 95% is 1.96 sqrt(2 (1 - p) 1582^2) = 2660 bytes.
# And blocks the tracer recorded as samples while it shed load (`live
# ... shed=M`): kept with p = min(1, s/M), each counts max(s, M) bytes and
# max(1, M/s) blocks, beside blocks recorded whole in the same dump.
set -u
HD=${1:?usage: test_hdsampled.sh HEAPDECODE}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { # name, condition...
	local name=$1; shift
	if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
expect_eq() { # NAME GOT WANT
	if [ "$2" = "$3" ]; then echo "ok   $1 ($2)"; else
		echo "FAIL $1: got '$2', want '$3'"; fails=$((fails + 1)); fi
}

dump() { # SAMPLE-FIELD: one dump of the three blocks
	echo "heapsnoop: dump reason=exit time=1.000 live=3 bytes=0 stacks=0$1"
	echo "heapsnoop: live pid=7 ptr=0x10 ~b#size: 1000, 0x1000 0x2000"
	echo "heapsnoop: live pid=7 ptr=0x20 ~b#size: 1000, 0x1000 0x2000"
	echo "heapsnoop: live pid=7 ptr=0x30 ~b#size: 100000, 0x3000"
	echo "heapsnoop: end-dump live=3"
}
{ dump ""; dump " sample-bytes=1000"; } | "$HD" --encode > "$T/log"
check "the log encodes" test -s "$T/log"

"$HD" --report "$T/log" > "$T/report" 2> "$T/err"
check "--report: says it is an estimate, and of what mean" \
	grep -q '^estimated: a sample by bytes, one per 1000 bytes on average; ' "$T/report"
check "--report: 100000 bytes (97.7 KiB) stand for themselves" \
	grep -q '^97.7 KiB ([0-9.]*%) in 1 allocations from pid 7:$' "$T/report"
check "--report: two blocks of 1000 stand for 3164 bytes (3.1 KiB) in 3 allocations" \
	grep -q '^3.1 KiB ([0-9.]*%) in 3 allocations from pid 7:$' "$T/report"
expect_eq "--report: the total, estimated (4.16 blocks)" "$(grep '^total' "$T/report")" \
	"total (estimated, +-2660 bytes at 95%): 100.7 KiB (103164 bytes) in 4 allocations from 2 stacks"
"$HD" --report --by pid "$T/log" > "$T/bypid"
expect_eq "--report --by pid: the estimate" "$(grep ' pid 7$' "$T/bypid")" \
	"100.7 KiB (100.0%) in 4 allocations: pid 7"
check "--report --by pid: says it is an estimate" grep -q '^total (estimated, ' "$T/bypid"

"$HD" --report --dump first "$T/log" > "$T/first"
expect_eq "--dump first (not sampled): as it is" "$(grep '^total' "$T/first")" \
	"total: 99.6 KiB (102000 bytes) in 3 allocations from 2 stacks"
check "--dump first: no word of estimates" bash -c "! grep -q estimate '$T/first'"

"$HD" --folded "$T/log" > "$T/folded" 2> "$T/folded.err"
expect_eq "--folded: bytes estimated" "$(awk '{ t += $NF } END { print t }' "$T/folded")" 103164
check "--folded: standard error says the values are estimates" \
	grep -q 'the values are estimates: a sample by bytes, one per 1000' "$T/folded.err"
"$HD" --folded --count "$T/log" 2> /dev/null > "$T/count"
expect_eq "--folded --count: blocks estimated, per stack" \
	"$(awk '{ print $NF }' "$T/count" | sort -n | tr '\n' ' ')" "1 3 "

"$HD" -s "$T/log" > "$T/sym"
expect_eq "-s: each sampled block says what it stands for" \
	"$(grep -c '^    (sampled: stands for 1582 bytes in 1.58 allocations, estimated)$' "$T/sym")" 2
expect_eq "-s: a block far above the mean stands for itself" \
	"$(grep -c '^    (sampled: stands for 100000 bytes in 1.00 allocations, estimated)$' "$T/sym")" 1

"$HD" --flamegraph "$T/fg.svg" "$T/log"
check "--flamegraph: the title says estimated" grep -q 'estimated: a sample by bytes, one per 1000 bytes on average' "$T/fg.svg"
"$HD" --json "$T/log" > "$T/json" 2> /dev/null
check "--json: sample_bytes" grep -q '"sample_bytes": 1000' "$T/json"

# Shed samples: 1024 bytes at shed=4096 stand for 4096 bytes in 4 blocks
# (margin 1.96 sqrt((1 - 1/4) 4096^2) = 6953), beside a whole block of
# 1024 of the same stack: 5120 bytes in 5; 8192 at shed=4096 (p = 1) for
# itself. Every report says why it estimates.
{
	echo "heapsnoop: dump reason=exit time=1.000 live=3 bytes=0 stacks=0"
	echo "heapsnoop: live pid=7 ptr=0x10 shed=4096 ~b#size: 1024, 0x1000 0x2000"
	echo "heapsnoop: live pid=7 ptr=0x20 ~b#size: 1024, 0x1000 0x2000"
	echo "heapsnoop: live pid=7 ptr=0x30 shed=4096 ~b#size: 8192, 0x3000"
	echo "heapsnoop: end-dump live=3"
} | "$HD" --encode > "$T/shed"
"$HD" --report "$T/shed" > "$T/shed.report"
check "shed: --report says why it estimates" grep -q '^estimated: 2 of its blocks recorded as samples while the tracer shed load (shed=); ' "$T/shed.report"
check "shed: a sample and a whole block of one stack: 5120 bytes (5.0 KiB) in 5" \
	grep -q '^5.0 KiB ([0-9.]*%) in 5 allocations from pid 7:$' "$T/shed.report"
check "shed: a block of its mean or more stands for itself" \
	grep -q '^8.0 KiB ([0-9.]*%) in 1 allocations from pid 7:$' "$T/shed.report"
expect_eq "shed: the total and its margin" "$(grep '^total' "$T/shed.report")" \
	"total (estimated, +-6953 bytes at 95%): 13.0 KiB (13312 bytes) in 6 allocations from 2 stacks"
"$HD" -s "$T/shed" > "$T/shed.sym"
expect_eq "shed: -s says what the sample stands for" \
	"$(grep -c '^    (sampled: stands for 4096 bytes in 4.00 allocations, estimated)$' "$T/shed.sym")" 1
check "shed: -s keeps shed=" grep -q '^heapsnoop: live pid=7 ptr=0x10 shed=4096 ~b#size: 1024,' "$T/shed.sym"
"$HD" --json "$T/shed" > "$T/shed.json" 2> /dev/null
check "shed: --json gives the samples and the standard error" \
	grep -q '"shed_blocks": 2, "live_bytes_stderr": 3547' "$T/shed.json"
for m in 0 x -1; do
	expect_eq "shed=$m: malformed, said" \
		"$(sed "s/shed=4096/shed=$m/" "$T/shed" | "$HD" --report 2>&1 >/dev/null | grep -c '^heapdecode: 2 malformed record(s)')" 1
done

# Hostile: a sampled dump whose mean is 0 or not a number is malformed.
for m in 0 -1000 x; do
	expect_eq "sample-bytes=$m: no mean, the blocks as they are" \
		"$(sed "s/sample-bytes=1000/sample-bytes=$m/" "$T/log" | "$HD" --report | grep -c 'estimated\|^total: 99.6 KiB (102000 bytes) in 3 ')" 1
done
[ "$fails" -eq 0 ]
