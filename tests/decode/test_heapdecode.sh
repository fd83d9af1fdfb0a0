#!/bin/bash
# test_heapdecode.sh - heapdecode as a filter: vectors through log prefixes,
# --encode, malformed records, bare lines, CRLF, and a line far longer than
# the memory the process is allowed.
set -u
HD=${1:?usage: test_heapdecode.sh HEAPDECODE [--sanitized]}
# A sanitized build reserves terabytes of address space: no ulimit -v there.
SANITIZED=${2:-}
VEC=tests/data/vectors.tsv
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { # name, condition...
	local name=$1; shift
	if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}

# 1. Every vector, each behind a different log prefix, decodes to column 3.
awk -F'\t' '{printf "2026-11-21T10:%02d [pid %d] %s\n", NR % 60, NR, $2}' $VEC > "$T/in"
awk -F'\t' '{printf "2026-11-21T10:%02d [pid %d] %s\n", NR % 60, NR, $3}' $VEC > "$T/want"
"$HD" "$T/in" > "$T/got" 2> "$T/err"
check "vectors decode (exit 0)" test $? -eq 0
check "vectors decode byte for byte" cmp -s "$T/got" "$T/want"
check "no messages on valid input" test ! -s "$T/err"

# 2. --encode: column 3 back to column 2, with the reference's trailing space.
awk -F'\t' '{print $3 " "}' $VEC > "$T/bin"
awk -F'\t' '{print $2 " "}' $VEC > "$T/bwant"
"$HD" --encode < "$T/bin" > "$T/bgot"
check "vectors encode byte for byte" cmp -s "$T/bgot" "$T/bwant"

# 3. Bare base64 lines (the reference tool's input), with LF and CRLF.
awk -F'\t' 'NR <= 50 {print substr($2, 4)}' $VEC > "$T/bare"
awk -F'\t' 'NR <= 50 {print $3}' $VEC > "$T/barewant"
"$HD" < "$T/bare" > "$T/baregot"
check "bare lines decode" cmp -s "$T/baregot" "$T/barewant"
sed 's/$/\r/' "$T/bare" | "$HD" | tr -d '\r' > "$T/crlfgot"
check "bare CRLF lines decode" cmp -s "$T/crlfgot" "$T/barewant"

# 4. Malformed records: line unchanged, stderr names the line, exit 1.
printf 'ok ~m#IF0BmUQugNCkgCnkhdAYpQa6wAAV\nbad ~m#IF0BmUQugNCkgCnkhdAYpQa6wAA tail\nplain Done\n' > "$T/mal"
"$HD" "$T/mal" > "$T/malout" 2> "$T/malerr"
rc=$?
check "malformed: exit status 1" test $rc -eq 1
check "malformed: line 2 passes unchanged" \
	test "$(sed -n 2p "$T/malout")" = "bad ~m#IF0BmUQugNCkgCnkhdAYpQa6wAA tail"
check "malformed: other lines still decoded" \
	test "$(sed -n 1p "$T/malout")" = "ok ~b#size: 7520, 0x406651 0x406852 0x406c1b 0x406294"
check "malformed: message names file and line" grep -q "$T/mal:2: malformed ~m# record" "$T/malerr"
check "word-only lines are not records" test "$(sed -n 3p "$T/malout")" = "plain Done"

# 5. Constant memory: a 256 MiB line under a 64 MiB address-space limit.
limit=65536
[ -n "$SANITIZED" ] && limit=unlimited
( ulimit -v $limit; head -c 268435456 /dev/zero | tr '\0' 'A' | "$HD" | wc -c ) > "$T/big" 2>&1
check "256 MiB line streams (address space limit: $limit KiB)" test "$(cat "$T/big")" = 268435456

# 5b. A NUL byte in a line: -s copies the whole line, --report says it
# ignored it; both count it (exit 1), neither silently drops anything.
printf 'a\0b heapsnoop: live pid=1 ptr=0x1 ~m#GL38AAAAAAQclAAaqABUAAAS\nnext\n' > "$T/nul"
"$HD" -s "$T/nul" > "$T/nul.s" 2> "$T/nul.serr"
check "NUL byte, -s: exit 1" test $? -eq 1
check "NUL byte, -s: the whole line copied, then the next" cmp -s "$T/nul" "$T/nul.s"
check "NUL byte, -s: said with the line number" grep -q 'nul:1: a NUL byte in the line' "$T/nul.serr"
"$HD" --report "$T/nul" > /dev/null 2> "$T/nul.rerr"
check "NUL byte, --report: exit 1, the record said ignored" \
	bash -c "test $? -eq 1 && grep -q 'nul:1: a NUL byte in the line: ignored' '$T/nul.rerr'"

# 6. Options.
check "--help" bash -c "'$HD' --help | grep -q -- '--encode'"
check "--version" bash -c "'$HD' --version | grep -q '^heapdecode '"
"$HD" --bogus > /dev/null 2>&1
check "bad option exits 2" test $? -eq 2
"$HD" "$T/does-not-exist" > /dev/null 2> "$T/nofile"
check "missing file exits 2 with a message" bash -c "test $? -eq 2 && grep -q 'cannot open' '$T/nofile'"

# 7. Never over what the user gave, never a silent wait on a terminal.
head -n 3 "$T/in" | sed 's/^.*\(~m#[^ ]*\).*$/heapsnoop: live pid=7 ptr=0x1000 \1/' > "$T/log"
{ printf 'heapsnoop: dump reason=exit\n'; cat "$T/log"; printf 'heapsnoop: end-dump live=3\n'; } > "$T/leak.log"
cp "$T/leak.log" "$T/leak.keep"
"$HD" --flamegraph "$T/leak.log" < /dev/null > /dev/null 2> "$T/clob.err"
check "an output named like the log (its name forgotten): exit 2" test $? -eq 2
check "... the log left as it was" cmp -s "$T/leak.log" "$T/leak.keep"
check "... said, with the command meant" \
	grep -q -- "--flamegraph $T/leak.log: that file holds a heapsnoop log: not written over. Was it meant as the input? heapdecode --flamegraph OUT $T/leak.log" "$T/clob.err"
"$HD" --folded > /dev/null 2>&1 < "$T/leak.log"
check "--folded to standard output: read from a pipe as before" test $? -eq 0
"$HD" --pprof "$T/leak.log" "$T/leak.log" > /dev/null 2> "$T/same.err"
check "an output that is this run's input: exit 2, left as it was" \
	bash -c "test $? -eq 2 && cmp -s '$T/leak.log' '$T/leak.keep' && grep -q 'that is an input of this run' '$T/same.err'"
ln "$T/leak.log" "$T/hard.svg"
"$HD" --flamegraph "$T/hard.svg" "$T/leak.log" > /dev/null 2> "$T/hard.err"
check "... found by its inode, whatever its name (a hard link)" \
	bash -c "test $? -eq 2 && cmp -s '$T/leak.log' '$T/leak.keep'"
zstd -q -c "$T/leak.log" > "$T/leak.zst"
"$HD" --speedscope "$T/leak.zst" "$T/leak.log" > /dev/null 2>&1
check "a zstd file (a compressed log) is not written over either" \
	bash -c "test $? -eq 2 && zstd -q -d -c '$T/leak.zst' | cmp -s - '$T/leak.keep'"
echo '<svg>old</svg>' > "$T/old.svg"
"$HD" --flamegraph "$T/old.svg" "$T/leak.log" > /dev/null 2>&1
check "an output of an earlier run is written over, as asked" \
	bash -c "test $? -eq 0 && ! grep -q old '$T/old.svg' && grep -q '<svg' '$T/old.svg'"
script -qec "'$HD' --report" /dev/null < /dev/null > "$T/tty.out" 2>&1
check "no input and a terminal: exit 2, no wait" test $? -eq 2
check "... with how to give a log" grep -q "no log to read, and standard input is a terminal: name the log" "$T/tty.out"
# A line typed at the terminal, then Ctrl-D (script's standard input is the terminal's).
printf '%s\n\004' "$(head -n 1 "$T/bare")" | timeout 60 script -qec "'$HD' -" /dev/null > "$T/dash.out" 2>&1
check "- reads the terminal all the same, to its end" \
	bash -c "test $? -eq 0 && grep -q '^~b#size: ' '$T/dash.out'"

# 8. Never a guess: a file with no record, a dump cut before its end-dump.
"$HD" --report /etc/passwd > "$T/pw.out" 2> "$T/pw.err"
check "a file that is no log: exit 2, said" bash -c "test $? -eq 2 && test ! -s '$T/pw.out' &&
	grep -q 'no heapsnoop dump and no ~m# record in /etc/passwd: not a heapsnoop log' '$T/pw.err'"
: > "$T/empty"
"$HD" --fail-on-leak "$T/empty" > /dev/null 2>&1
check "an empty file passes no gate: exit 2" test $? -eq 2
# Two dumps of one and two blocks of 100 and 200 bytes; the second cut.
tok() { "$HD" --encode <<< "~b#size: $1, 0x401000 0x402000"; }
{
	echo "heapsnoop: dump reason=interval time=1.000 live=1 bytes=100 stacks=1"
	echo "heapsnoop: live pid=7 ptr=0x1000 $(tok 100)"
	echo "heapsnoop: end-dump live=1"
	echo "heapsnoop: dump reason=interval time=2.000 live=2 bytes=300 stacks=2"
	echo "heapsnoop: live pid=7 ptr=0x1000 $(tok 200)"
} > "$T/cut.log"
"$HD" --report "$T/cut.log" > "$T/cut.out" 2> "$T/cut.err"
check "a cut last dump: exit 1" test $? -eq 1
check "... the last complete one reported (100 bytes in 1 allocation)" \
	grep -q '^total: 100 bytes in 1 allocations' "$T/cut.out"
check "... said, with --dump to read the cut one" grep -q \
	"cut.log: its last dump, dump 2, has no end-dump (the log was cut while heapsnoop wrote it, or is read while it writes): dump 1, the last complete one, is reported (--dump 2 reads the cut one as far as it goes)" \
	"$T/cut.err"
"$HD" --report --dump 2 "$T/cut.log" > "$T/cut2.out" 2> "$T/cut2.err"
check "--dump 2: the cut dump as far as it goes, said, exit 1" bash -c "test $? -eq 1 &&
	grep -q '^total: 200 bytes in 1 allocations' '$T/cut2.out' &&
	grep -q 'dump 2 has no end-dump' '$T/cut2.err'"
"$HD" --report < "$T/cut.log" > "$T/cutin.out" 2> "$T/cutin.err"
check "from a pipe (not read twice): the cut dump, said, exit 1" bash -c "test $? -eq 1 &&
	grep -q 'stdin: dump 2 has no end-dump' '$T/cutin.err'"
echo "heapsnoop: end-dump live=1" >> "$T/cut.log"
"$HD" --report "$T/cut.log" > "$T/whole.out" 2> "$T/whole.err"
check "the same dump ended: exit 0, nothing said, it reported" bash -c "test $? -eq 0 &&
	test ! -s '$T/whole.err' && grep -q '^total: 200 bytes in 1 allocations' '$T/whole.out'"

# 9. A run of frames without a symbol (in a stripped program) is one line
# of --report, each frame its own with --full-stacks (issue 32).
tok=$("$HD" --encode <<< "~b#size: 2048, 0x7f0000002101 0x7f0000002201 0x7f0000002301 0x7f0000002401")
{
	echo "heapsnoop: dump reason=exit time=1.000 live=1 bytes=2048 stacks=1"
	echo "heapsnoop: map pid=5 start=0x7f0000000000 end=0x7f0000010000 off=0x0 buildid=- path=/usr/bin/true"
	echo "heapsnoop: live pid=5 ptr=0x10 $tok"
	echo "heapsnoop: end-dump live=1"
} > "$T/nosym.log"
"$HD" --report "$T/nosym.log" > "$T/nosym.out"
check "frames without a symbol: folded into one line" bash -c "
	test \"\$(grep -c '^    #' '$T/nosym.out')\" = 1 &&
	grep -q '^    #0  \[4 frames without a symbol in true\]$' '$T/nosym.out'"
check "... the headline names the first of them, in KiB" \
	grep -q '^biggest holder: 2.0 KiB in 1 block, \[true+0x2101\] <- \[true+0x2201\]$' "$T/nosym.out"
check "--full-stacks: each frame its own" \
	bash -c "test \"\$('$HD' --report --full-stacks '$T/nosym.log' | grep -c ' true+0x2[1-4]01 \[no symbol\]$')\" = 4"

# 10. --report --sort KEY opens with --report's headline too (issue 32):
# the biggest holder by live bytes, whatever KEY; when the list's first
# stack is another function's, a line says whose. grow holds 32 KiB in
# two stacks of 16 KiB (its callers a and b); table one stack of 24 KiB;
# churn the most allocations and temporaries, 1 KiB live; spike the
# biggest peak and the most bytes allocated, nothing live.
F1=0x4000000000000001 F2=0x4000000000000002 F3=0x4000000000000003
F4=0x4000000000000004 F5=0x4000000000000005 F6=0x4000000000000006
sorted_log() { # GROW_A_KIB: grow's first stack, live
	local ga=$(($1 * 1024)) gb=16384 t=24576 c=1024 all
	all=$((ga + gb + t + c))
	enc() { "$HD" --encode <<< "~b#size: $1, ${*:2}"; }
	srec() { # BYTES ALLOCS ALLOCATED FREES TEMP LIVE PEAK FRAMES...
		echo "heapsnoop: stack pid=5 allocs=$2 allocated=$3 frees=$4 temporary=$5 live=$6" \
			"bytes=$1 peak=$7 peak_count=1 $(enc 0 "${@:8}")"
	}
	echo "heapsnoop: dump reason=exit time=2.000 live=4 bytes=$all stacks=5"
	echo "heapsnoop: frame pid=5 addr=$F1 kind=python line=5 file=/app/g.py function=grow"
	echo "heapsnoop: frame pid=5 addr=$F2 kind=python line=2 file=/app/a.py function=a"
	echo "heapsnoop: frame pid=5 addr=$F3 kind=python line=2 file=/app/b.py function=b"
	echo "heapsnoop: frame pid=5 addr=$F4 kind=python line=9 file=/app/t.py function=table"
	echo "heapsnoop: frame pid=5 addr=$F5 kind=python line=3 file=/app/c.py function=churn"
	echo "heapsnoop: frame pid=5 addr=$F6 kind=python line=7 file=/app/s.py function=spike"
	echo "heapsnoop: live pid=5 ptr=0x10 $(enc $ga $F1 $F2)"
	echo "heapsnoop: live pid=5 ptr=0x20 $(enc $gb $F1 $F3)"
	echo "heapsnoop: live pid=5 ptr=0x30 $(enc $t $F4)"
	echo "heapsnoop: live pid=5 ptr=0x40 $(enc $c $F5)"
	srec $ga 1 $ga 0 0 1 $ga $F1 $F2
	srec $gb 1 $gb 0 0 1 $gb $F1 $F3
	srec $t 1 $t 0 0 1 $t $F4
	srec $c 500 64000 499 400 1 $c $F5
	srec 0 1 1048576 1 0 0 1048576 $F6
	echo "heapsnoop: proc pid=5 peak=1048576 peak_count=1 peak_time=1.000 allocs=504" \
		"allocated=$((64000 + 1048576 + all - c)) frees=500 temporary=400 live=4 bytes=$all comm=python3"
	echo "heapsnoop: end-dump live=4"
}
sorted_log 16 > "$T/sort.log"
for key in peak allocations temporary allocated live; do
	"$HD" --report --sort $key "$T/sort.log" > "$T/sort.$key" 2> "$T/sort.$key.err"
	check "--report --sort $key: exit 0, nothing said" bash -c "test $? -eq 0 && test ! -s '$T/sort.$key.err'"
	check "--report --sort $key: the headline first, the holder by live bytes" test \
		"$(head -n 1 "$T/sort.$key")" = "biggest holder: 32.0 KiB in 2 blocks, grow (g.py:5) <- a (a.py:2)"
done
first_of() { sed -n 2p "$T/sort.$1"; }
check "--sort live: the first stack, table's, said not the holder's" test \
	"$(first_of live)" = "sorted by live: the first stack below is table (t.py:9)'s, not the biggest holder's"
check "--sort peak, allocated: spike's" bash -c "
	test \"\$(sed -n 2p '$T/sort.peak')\" = \"sorted by peak: the first stack below is spike (s.py:7)'s, not the biggest holder's\" &&
	test \"\$(sed -n 2p '$T/sort.allocated')\" = \"sorted by allocated: the first stack below is spike (s.py:7)'s, not the biggest holder's\""
check "--sort allocations, temporary: churn's" bash -c "
	test \"\$(sed -n 2p '$T/sort.allocations')\" = \"sorted by allocations: the first stack below is churn (c.py:3)'s, not the biggest holder's\" &&
	test \"\$(sed -n 2p '$T/sort.temporary')\" = \"sorted by temporary: the first stack below is churn (c.py:3)'s, not the biggest holder's\""
check "--sort live: then --stats --sort live's list, table first" bash -c "
	grep -A1 '^most live bytes (leaked, at the end):$' '$T/sort.live' | tail -n 1 | grep -q '^  24,\\?576 bytes live in 1 allocations from pid 5:$'"
sorted_log 30 > "$T/sort1.log"
"$HD" --report --sort live "$T/sort1.log" > "$T/sort1.live"
check "--sort live, the holder's stack first: no such line, the list after the headline" bash -c "
	head -n 1 '$T/sort1.live' | grep -q '^biggest holder: 46.0 KiB in 2 blocks, grow (g.py:5) <- a (a.py:2)$' &&
	! grep -q '^sorted by' '$T/sort1.live' && sed -n 2p '$T/sort1.live' | grep -q '^pid 5 (python3): peak '"

[ $fails -eq 0 ]
