#!/bin/bash
# test_offline.sh - unwinding later, elsewhere (heapsnoop --keep-stacks,
# heapdecode's offline unwinding of the ustack records, docs/DESIGN.md
# "Unwinding later, elsewhere"):
#  - the same log unwound online and offline gives the same frames, stack
#    for stack, on tests/unwind/prog_nofp (no frame pointers, a library
#    without CFI, a thread with its creator, a library dlopen()ed late, a
#    stack of 80 KiB) and on tests/tracer/prog_deep's three CFI places
#    (.eh_frame, no .eh_frame_hdr, .debug_frame alone);
#  - prog_deep_dbg with its .debug_frame only in a separate debug file
#    (objcopy --only-keep-debug, then --strip-debug): the tracer cuts its
#    stacks after the call site; heapdecode --debug-dir unwinds them
#    offline to _start, whole; with .eh_frame and .eh_frame_hdr removed
#    too (the C runtime's _start loses its CFI) to _start, marked cut
#    there; without --debug-dir the online frames, said;
#  - "another machine": the traced binary moved away, found by its build
#    ID alone under --debug-dir (DIR/.build-id/xx/rest): the same frames,
#    named; without it, the module said not found and the online frames
#    kept;
#  - the cost: the log's bytes with and without the records.
# About 5 s. The parts that make files with binutils (objcopy, readelf) are
# skipped where there are none (the arm64 guest's root: its part runs the
# rest, tests/arm64/in-guest.sh).
set -u
. "$(dirname "$0")/../tracer/lib.sh"
cd "$T" || exit 1

# The folded stacks of LOG (heapdecode's further arguments after it), symbol versions off.
folded() { # LOG [ARGS...]
	local log=$1; shift
	"$HD" --folded "$@" "$log" 2> /dev/null | sed -E 's/@[^; ]*//g' | sort
}
# heapdecode's line on the offline unwinding of LOG, its counts as "same further differ sooner".
counts() { # LOG [ARGS...]
	local log=$1; shift
	"$HD" --folded "$@" "$log" 2>&1 > /dev/null | sed -nE 's/.*: ([0-9]+) the online frames exactly, ([0-9]+) further .*, ([0-9]+) other frames as deep, ([0-9]+) ending sooner.*/\1 \2 \3 \4/p'
}

# --- the same frames online and offline -----------------------------------
"$HS" -q --keep-stacks -o nofp.log -- "$PROGS/prog_nofp" > /dev/null 2> nofp.err
check "prog_nofp: traced with --keep-stacks" test $? -eq 0
n=$(grep -c ' ustack ' nofp.log)
expect_eq "prog_nofp: a ustack record before each live record" "$n" "$(grep -c ' live ' nofp.log)"
check "prog_nofp: each just before its block's live record" awk '
	/ ustack / { match($0, /ptr=0x[0-9a-f]+/); want = substr($0, RSTART, RLENGTH); next }
	/ live / { match($0, /ptr=0x[0-9a-f]+/); if (substr($0, RSTART, RLENGTH) != want) bad++; want = "" }
	END { exit bad > 0 }' nofp.log
check "prog_nofp: the budget said at the start and the copies at the end" \
	bash -c "grep -q 'keep-stacks: each dump keeps' nofp.err && grep -q 'stack copies kept' nofp.err"
expect_eq "prog_nofp: offline, every stack the online one exactly" "$(counts nofp.log)" "$n 0 0 0"
expect_eq "prog_nofp: the same folded stacks" "$(folded nofp.log | md5sum)" \
	"$(folded nofp.log --no-unwind-offline | md5sum)"
check "prog_nofp: ... whole ones among them (to _start)" \
	bash -c "'$HD' --folded nofp.log 2>/dev/null | grep -q '^_start;.*lib_leaf '"
# A thread's creator after its start: x86-64's (docs/DESIGN.md, "Who created a thread").
[ "$(uname -m)" = x86_64 ] &&
	check "prog_nofp: ... a thread's creator after its start, kept after the offline frames" \
		bash -c "'$HD' --folded nofp.log 2>/dev/null | grep -q 'created_by\];__clone3;start_thread;p_thread'"
for p in eh nohdr dbg; do
	"$HS" -q --keep-stacks -o deep_$p.log -- "$PROGS/prog_deep_$p" 5 > /dev/null 2>&1
	n=$(grep -c ' ustack ' deep_$p.log)
	expect_eq "prog_deep_$p: offline, the online frames exactly" "$(counts deep_$p.log)" "$n 0 0 0"
	expect_eq "prog_deep_$p: the same folded stacks" "$(folded deep_$p.log)" \
		"$(folded deep_$p.log --no-unwind-offline)"
done

# --- hostile records: said, never a crash ----------------------------------------
{ grep -v ' ustack ' deep_eh.log | sed -n '1,/ tree /p'
  echo 'heapsnoop: ustack pid=1 ptr=0x10 v=1 arch=x86-64 frames=1 regs=0x1,0x2 size=8 want=8 skip=0 holes=0x0 data=AQ=='
} > bad.log
"$HD" --report bad.log > /dev/null 2> bad.err
expect_eq "a malformed ustack record: exit 1 (malformed)" "$?" 1
check "... its line named" grep -q 'bad.log:[0-9]*: malformed' bad.err
sed -E 's/ v=1 / v=9 /' deep_eh.log > v9.log
"$HD" --folded v9.log > /dev/null 2> v9.err
check "a version not known: not used, said, the online frames" \
	grep -q 'NOT USED: 2 ustack records (0 malformed, 2 of a version other than 1' v9.err

# --- the cost --------------------------------------------------------------------
"$HS" -q -o plain.log -- "$PROGS/prog_nofp" > /dev/null 2>&1
awk '/ ustack / { n++; b += length($0) + 1; s += $0 ~ /size=/ ? substr($0, index($0, "size=") + 5) + 0 : 0 }
	END { printf "cost: %d ustack records, %.0f bytes each (%.0f bytes of stack each)\n", n, b / n, s / n }' nofp.log
echo "cost: prog_nofp's log $(wc -c < plain.log) bytes without, $(wc -c < nofp.log) with"

if ! command -v objcopy > /dev/null || ! command -v readelf > /dev/null; then
	echo "skip the separate debug file's and the moved binary's checks: no objcopy or readelf here"
	[ "$fails" -eq 0 ]
	exit
fi

# --- .debug_frame only in a separate debug file ------------------------------
want='_start;__libc_start_main;__libc_start_call_main;main;deep_a;deep_b;deep_c;deep_a;deep_b 1234'
mkdir -p bin dbg
for v in strip noeh; do
	cp "$PROGS/prog_deep_dbg" bin/$v
	objcopy --only-keep-debug bin/$v bin/$v.debug
	if [ $v = strip ]; then
		objcopy --strip-debug bin/$v
	else
		objcopy --strip-debug --remove-section=.eh_frame --remove-section=.eh_frame_hdr bin/$v
	fi
	id=$(readelf -n bin/$v | awk '/Build ID/ { print $3 }')
	mkdir -p dbg/.build-id/${id:0:2}
	mv bin/$v.debug dbg/.build-id/${id:0:2}/${id:2}.debug
	check "$v: no .debug_frame left in the program" bash -c "! readelf -SW bin/$v | grep -q '\.debug_frame'"
	"$HS" -q --keep-stacks -o $v.log -- bin/$v 5 > /dev/null 2>&1
	check "$v: traced" test $? -eq 0
	expect_eq "$v: the tracer cut it after the call site" "$(folded $v.log | grep ' 1234$')" \
		'[stack_unreadable_past_here];deep_b 1234'
	expect_eq "$v: without the debug file, offline the same" "$(folded $v.log | grep ' 1234$')" \
		'[stack_unreadable_past_here];deep_b 1234'
done
expect_eq "strip: heapdecode --debug-dir unwinds it offline to _start, whole" \
	"$(folded strip.log --debug-dir dbg | grep ' 1234$')" "$want"
expect_eq "strip: ... said further than online (both stacks)" "$(counts strip.log --debug-dir dbg)" "0 2 0 0"
expect_eq "noeh: to _start, cut there (its CFI was in the .eh_frame removed)" \
	"$(folded noeh.log --debug-dir dbg | grep ' 1234$')" "[stack_unreadable_past_here];$want"
check "strip: --report names the frames by the debug file's lines" \
	bash -c "'$HD' --report --debug-dir dbg strip.log 2>/dev/null | grep -q 'deep_c+0x[0-9a-f]* (strip) tests/tracer/prog_deep.c:41'"

# --- another machine: the binary moved, found by build ID only -----------------
cp "$PROGS/prog_deep_eh" bin/moved
"$HS" -q --keep-stacks -o moved.log -- "$PWD/bin/moved" 5 > /dev/null 2>&1
check "moved: traced" test $? -eq 0
id=$(readelf -n bin/moved | awk '/Build ID/ { print $3 }')
mkdir -p ids/.build-id/${id:0:2}
mv bin/moved ids/.build-id/${id:0:2}/${id:2}
expect_eq "moved: found by its build ID under --debug-dir, the same frames offline, named" \
	"$(folded moved.log --debug-dir ids | grep ' 1234$')" "$want"
expect_eq "moved: ... the online frames exactly" "$(counts moved.log --debug-dir ids)" "2 0 0 0"
"$HD" --folded moved.log > /dev/null 2> moved.err
check "moved: without it, the module said not found for the offline unwinding" \
	grep -q "offline unwinding: $PWD/bin/moved (build ID $id): module file not found" moved.err
expect_eq "moved: ... the online frames kept (2 stacks ending sooner offline)" \
	"$(counts moved.log)" "0 0 0 2"

[ "$fails" -eq 0 ]
