#!/bin/bash
# in-guest.sh - the part of the arm64 test (tests/arm64/run.sh) that runs
# inside the arm64 guest (tests/kmatrix/guest.sh 6.1-arm64):
#   the tracer tests of the kernel matrix that matter most on another
#   architecture, run on the arm64 build (tests/kmatrix/in-guest.sh):
#     launch mode, the exact live set and chains, --unwind dwarf and fp
#                                   (test_semantics.sh)
#     attach to a running process   (test_attach.sh)
#     DWARF unwinding without frame pointers, across libraries, a frame
#     with no CFI, a thread         (test_unwind.sh)
#     threads                       (test_threads.sh)
#   return addresses signed by pointer authentication (test_pac.sh)
#   a thread's stacks go on with its creator's, out of arm64's clone3 by
#     its link register (test_creator.sh)
#   the preload collector, no BPF: its library and heapsnoop --preload on
#     the tracer tests' programs (tests/collector/test_preload.sh)
#   the collector's unwinder on frames of known shapes, signal frames,
#     libraries unloaded and replaced, threads (tests/collector/
#     test_unwind.c, cmocka)
#   .eh_frame without .eh_frame_hdr and .debug_frame alone, both ways:
#     heapsnoop and --preload give the same frames (tests/tracer/
#     test_cfiplace.sh)
#   the live table's seqlock torture (arm64's orderings: stlr, ldar, dmb)
#     and every way a process ends, each dump exact (tests/collector/
#     test_livetable.c, test_death.sh)
#   Python frames on the root's python3.13 (arm64's own CPython):
#     launched (a chain's names and lines, the loop re-entered from C, 60
#     frames deep, a thread that released the GIL) and attached
#     (tests/tracer/test_python.sh, the kernel's part and the re-entered
#     loop), and under --preload (tests/collector/test_preload_python.sh)
#   LuaJIT frames on the root's luajit (trixie's, OpenResty's 2.1): its
#     allocator probed, the leak's blocks at their lines, the known chain
#     named as LuaJIT's own traceback names it, launched and attached, a
#     LuaJIT of no known layout refused, the JIT on (tests/tracer/
#     test_luajit.sh, all but its run with the walker off: the loader's
#     choice alone, the same on both)
#   an x86-64 program refused, by the machine's name
#   then, for the host to compare (run.sh), into SHARE:
#     arm64.heap            a log of prog_nofp recorded here
#     arm64root/            the files it names (sysroot.sh)
#     arm64.report.guest    heapdecode --report of it, here
#     x86.report.guest      heapdecode --report of the host's x86.heap,
#                           with the files it names (x86root/, --sysroot)
# Usage: in-guest.sh ARM64_BUILD_DIR SHARE
# HS_ARM64_TESTS: the parts to run (default all but preload-python): kmatrix (the
# kernel matrix's four), pac, preload, unwinder, cfiplace, torture, python,
# preload-python, luajit, refused, creator, offline (--keep-stacks' records unwound
# again by the arm64 heapdecode: the online frames), logs (the two logs
# for the host: run.sh needs them).
# Exits non-zero if a test failed or a file could not be written.
set -u
OUT=$(realpath "${1:?usage: $0 ARM64_BUILD_DIR SHARE}"); SHARE=${2:?usage: $0 ARM64_BUILD_DIR SHARE}
cd "$(dirname "$0")/../.." || exit 2
rc=0
PARTS=" ${HS_ARM64_TESTS:-kmatrix pac creator preload unwinder cfiplace offline torture python luajit refused logs} "
part() { [[ $PARTS == *" $1 "* ]]; }
part kmatrix && { tests/kmatrix/in-guest.sh "$OUT" semantics attach unwind threads || rc=1; }

# WHAT CMD [ARG]...: one more test on the arm64 build, timed; a failure sets rc.
run_test() {
	local what=$1 name start=$SECONDS
	shift
	name=$(basename "$1" .sh)
	echo "=== arm64: $what ($name)"
	if "$@"; then
		echo "--- ok: arm64: $name ($((SECONDS - start)) s)"
	else
		echo "--- FAILED: arm64: $name ($((SECONDS - start)) s)"; rc=1
	fi
}
part pac && run_test "pointer authentication" tests/arm64/test_pac.sh "$OUT"
part creator && run_test "threads' creators, out of clone3 by the link register" \
	tests/tracer/test_creator.sh "$OUT"
part preload && run_test "the preload collector" tests/collector/test_preload.sh "$OUT"
part unwinder && run_test "the collector's unwinder" "$OUT/tests/test_unwind"
part cfiplace && run_test "CFI where a program keeps it, the tracer's frames and the collector's the same" \
	tests/tracer/test_cfiplace.sh "$OUT"
part offline && run_test "unwinding later: ustack records unwound offline to the online frames" \
	tests/unwind/test_offline.sh "$OUT"
part torture &&
	run_test "the live table's seqlock torture" "$OUT/tests/test_livetable_torture" --torture 2000000
# Python: the root's python3.13 (the default, Debian's python3.11, is not
# in it); under TCG the kernel's part of test_python (HS_PY_KERNEL_ONLY:
# the loader's and heapdecode's parts are no different here), what is
# arm64's own: the thread state found by the thread pointer, launched, in
# a second thread and attached; not the million small objects, the loop
# re-entered nor 60 deep (the same BPF walk as x86-64's; each heapsnoop
# run of python3.13 is a minute or two under TCG: all of it took 757 s,
# and would take make check past its 30 minutes). HS_ARM64_TESTS="python
# preload-python" with HS_PY_ALSO=re-entered runs more: --preload's took
# 739 s here, and passed.
if part python; then
	HS_PYTHON=/usr/bin/python3.13 HS_PY_KERNEL_ONLY=1 HS_PY_SKIP="million deep" \
		run_test "Python frames (python3.13)" tests/tracer/test_python.sh "$OUT"
fi
part preload-python &&
	HS_PYTHON=/usr/bin/python3.13 run_test "Python frames under --preload (python3.13)" \
		tests/collector/test_preload_python.sh "$OUT"
part luajit &&
	HS_LUAJIT=/usr/bin/luajit HS_LJ_SKIP=interp-python \
		run_test "LuaJIT frames (the root's luajit)" tests/tracer/test_luajit.sh "$OUT"
# test_death.sh (the ways a process ends, with the collector) takes some
# 10 minutes under TCG, which would take make check past its 30: run it on
# an arm64 machine (it passed in this guest, the guest then 611 s), or here
# with HS_ARM64_DEATH=1 in the guest's environment.
[ "${HS_ARM64_DEATH:-0}" = 1 ] &&
	KILLS=3 run_test "the ways a process ends, with the preload collector" tests/collector/test_death.sh "$OUT"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if part refused; then
echo "=== arm64: an x86-64 program is refused"
X86PROG=$(dirname "$OUT")/tests/prog_semantics
"$OUT/heapsnoop" -q -- "$X86PROG" > /dev/null 2> "$T/x86err"
xrc=$?
if [ "$xrc" -ne 0 ] && grep -q "is not an arm64 program" "$T/x86err"; then
	echo "--- ok: refused (exit $xrc): $(head -n 1 "$T/x86err")"
else
	echo "--- FAILED: heapsnoop -- $X86PROG exited $xrc:"; cat "$T/x86err"; rc=1
fi
fi
part logs || exit "$rc"
echo "=== arm64: a log for the host to symbolize"
if "$OUT/heapsnoop" -q --keep-stacks -o "$T/arm64.heap" -- "$OUT/tests/prog_nofp" 2> "$T/err" &&
	"$OUT/heapdecode" --report --full-stacks "$T/arm64.heap" > "$T/arm64.report.guest" &&
	tests/arm64/sysroot.sh "$T/arm64.heap" "$SHARE/arm64root" &&
	cp "$T/arm64.heap" "$T/arm64.report.guest" "$SHARE/"; then
	echo "--- ok: recorded and symbolized here ($(grep -c '^heapsnoop: live ' "$T/arm64.heap") live records)"
else
	echo "--- FAILED: recording or symbolizing prog_nofp here:"; cat "$T/err"; rc=1
fi
echo "=== arm64: the host's x86-64 log symbolized here"
if "$OUT/heapdecode" --sysroot "$SHARE/x86root" --debug-dir "$SHARE/x86root/usr/lib/debug" \
		--report --full-stacks "$SHARE/x86.heap" > "$T/x86.report.guest" 2> "$T/x86.hd.guest" &&
	cp "$T/x86.report.guest" "$T/x86.hd.guest" "$SHARE/"; then
	echo "--- ok: the x86-64 log symbolized here"
else
	echo "--- FAILED: heapdecode --report $SHARE/x86.heap"; rc=1
fi
exit "$rc"
