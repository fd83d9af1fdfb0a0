#!/bin/bash
# test_unwind_gdb.sh - a real Debian program, not rebuilt: /usr/bin/sqlite3
# and libsqlite3 carry no frame pointers. The same workload runs twice with
# address-space randomization off, so both runs map everything at the same
# addresses: once under gdb, which writes the backtrace of every malloc,
# calloc and realloc (tests/unwind/gdb_allocs.py); once under heapsnoop,
# which writes its live set while sqlite3 still holds its page cache. Every
# stack heapsnoop reports must be one gdb saw for an allocation of that
# size, frame for frame up to main (or further, to _start): at least 99%.
set -u
. "$(dirname "$0")/lib.sh"
SRC=$PWD/tests/unwind
SQLITE=/usr/bin/sqlite3
cd "$T" || exit 1
mkfifo in ready hsout
{ cat "$SRC/sqlite_work.sql"; echo ".shell echo workload-done > $T/ready"; } > work.sql

# gdb's run: the workload through a fifo, as below, output to /dev/null.
GDB_ALLOCS_OUT=$T/gdb.txt timeout 600 gdb -batch -nx -ex "set args :memory: < $T/in > /dev/null" \
	-x "$SRC/gdb_allocs.py" "$SQLITE" > gdbout 2>&1 &
gdb_pid=$!
exec 3> in
cat work.sql >&3
wait_line 5 '^workload-done$' 5< ready
exec 3>&-
wait $gdb_pid
check "gdb ran sqlite3 to its end" grep -q 'exited normally' gdbout
ngdb=$(wc -l < gdb.txt)

# heapsnoop's run: its live set is written (SIGUSR1) once the workload is done.
setarch -R "$HS" -q -o hsout -- "$SQLITE" :memory: < in > /dev/null 2> hserr &
hs_pid=$!
exec 3> in	# sqlite3's stdin first: heapsnoop's shell opens it before hsout
exec 4< hsout
cat work.sql >&3
wait_line 5 '^workload-done$' 5< ready
kill -USR1 $hs_pid
wait_line 4 'end-dump' rec
cat <&4 > /dev/null 3>&- &	# the rest, so heapsnoop never blocks
exec 3>&-
wait $hs_pid
check "heapsnoop traced sqlite3" test $? -eq 0

# The live allocations' records only (a dump's `stack` records carry
# whole-run counts, docs/OUTPUT.md), their stacks as the filter writes them
# (after the tree the records name them by).
"$HD" rec | grep '^heapsnoop: live ' | sed -n 's/.*~b#size: \([0-9]*\), /\1 /p' > hs.txt
awk 'NR == FNR { seen[$0] = 1; next }
{	key = $1; ok = 0
	for (i = 2; i <= NF && !ok; i++) { key = key " " $i; ok = key in seen }
	if (ok) same++; else print > "differ.txt"
	n++
} END { printf "%d %d\n", same, n }' gdb.txt hs.txt > result
read -r same n < result
echo "     gdb saw $ngdb allocations; heapsnoop reported $n live ones, $same of them with gdb's stack"
[ "$ngdb" -gt 0 ] || echo "     (gdb's breakpoints in malloc never stopped: another tracer's uprobe" \
	"on the same instruction takes the trap first; is a heapsnoop -a still running?)"
check "at least 200 live allocations compared" test "$n" -ge 200
check "at least 99% of the stacks equal gdb's" test $((same * 100)) -ge $((n * 99))
if [ -s differ.txt ]; then
	echo "     stacks gdb never saw (first 3), symbolized:"
	head -3 differ.txt | while read -r size frames; do
		grep -m1 "~b#size: $size, ${frames// /.*}" <("$HD" -s rec) -A 40 |
			sed -n '2,/^heapsnoop/p' | grep '^ ' | sed 's/^/     /'
	done
fi
check "the stacks go through libsqlite3, not only libc" grep -q '(libsqlite3.so' <("$HD" --report rec)
expect_eq "their median depth is 8 frames or more" \
	"$(awk '{ print NF - 1 }' hs.txt | sort -n | awk '{ d[NR] = $1 } END { print (d[int((NR + 1) / 2)] >= 8) }')" 1
finish
