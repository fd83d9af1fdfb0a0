#!/bin/bash
# run.sh - the kernel matrix test: heapsnoop's main tracer tests
# (in-guest.sh) inside other Debian kernels booted in qemu (guest.sh), one
# kernel after the other. tests/run.sh (`make check`) calls it once per
# kernel, so each kernel is its own pass or fail; `make kmatrix` runs the
# matrix alone.
#   run.sh BUILD_DIR [KERNEL...]   KERNEL: 5.10 6.1 6.12 6.12+preempt
#                                  (default: $KMATRIX_KERNELS or all four)
# 6.12+preempt is 6.12 booted with preempt=full on one CPU, where a
# uprobe's program can be preempted by another's on the same CPU: there
# the tests of per-CPU state (test_threads) run, not KMATRIX_TESTS.
# The guests run on a Debian root of their own (guest.sh), which has none
# of heapsnoop's libraries: BUILD_DIR's heapsnoop and heapdecode are the
# release binaries, linked with no shared library.
# KMATRIX_TESTS: the tests to run in each guest (default: all of them,
# "semantics attach unwind syswide ringbuf sampling fork", and "python" in
# the kernels of KMATRIX_PY_KERNELS, default "5.10 6.1", "lua" in those of
# KMATRIX_LUA_KERNELS, default "5.10"). This machine's own kernel has
# no image to boot; it is covered by the native tests of `make check`.
# Exits non-zero if a kernel failed, could not be fetched or booted.
set -u
OUT=$(realpath "${1:?usage: $0 BUILD_DIR [KERNEL...]}"); shift
HERE=$(cd "$(dirname "$0")" && pwd)
KERNELS=("$@")
[ ${#KERNELS[@]} -gt 0 ] || read -ra KERNELS <<< "${KMATRIX_KERNELS:-5.10 6.1 6.12 6.12+preempt}"
read -ra MAIN_TESTS <<< "${KMATRIX_TESTS:-semantics attach unwind syswide ringbuf sampling fork}"
# Python frames (test_python, its kernel's part: HS_PY_KERNEL_ONLY in
# in-guest.sh) on 5.10 (no atomics, no task storage: the LRU path) and 6.1
# (task storage, atomics), whose verifiers check the walk's programs.
read -ra PY_KERNELS <<< "${KMATRIX_PY_KERNELS-5.10 6.1}"
# Lua frames (test_lua: Debian's lua5.4 and lua5.1 from the build
# directory; test_luajit: the root's luajit, skipped where it has none,
# as trixie's roots) on the oldest kernel, whose verifier checks the Lua
# walks.
read -ra LUA_KERNELS <<< "${KMATRIX_LUA_KERNELS-5.10}"
# Under TCG everything is some 10 times slower: the tests' waits for a line
# get 5 minutes instead of one (they still end at the line, not later), a
# kernel 15 minutes before its guest is killed as hung (it takes some 3-4).
export HS_TEST_TIMEOUT=${HS_TEST_TIMEOUT:-300} KMATRIX_TIMEOUT=${KMATRIX_TIMEOUT:-900}
for f in heapsnoop heapdecode tests/prog_semantics tests/prog_waiter tests/prog_nofp \
		tests/prog_sys_a tests/prog_sys_b tests/prog_sys_short tests/prog_fork tests/prog_threads \
		tests/prog_slotexit tests/libexitcall.so tests/python3.11 tests/lua5.4 tests/lua5.1; do
	[ -x "$OUT/$f" ] || { echo "kmatrix: $OUT/$f missing: make check (or make kmatrix) builds it" >&2; exit 2; }
done

for b in heapsnoop heapdecode; do
	need=$(readelf -d "$OUT/$b" 2>&1 | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' ')
	echo "kmatrix: $b needs (readelf -d): ${need:-nothing}"
done
# The guest sees the checkout; the build directory too, wherever it is;
# and Debian's python3.11's standard library, for the copy of it in the
# build directory (its root, trixie, has no 3.11: test_python.sh).
export KMATRIX_DIRS=$OUT:/usr/lib/python3.11${KMATRIX_DIRS:+:$KMATRIX_DIRS}

failed=() total_start=$SECONDS
for k in "${KERNELS[@]}"; do
	TESTS=("${MAIN_TESTS[@]}") env=()
	[ -z "${KMATRIX_TESTS:-}" ] && [[ " ${PY_KERNELS[*]} " == *" $k "* ]] && TESTS+=(python)
	[ -z "${KMATRIX_TESTS:-}" ] && [[ " ${LUA_KERNELS[*]} " == *" $k "* ]] && TESTS+=(lua luajit)
	case $k in
	*+preempt) TESTS=(threads) env=(KMATRIX_APPEND=preempt=full KMATRIX_SMP=1) ;;
	esac
	echo "--- kernel $k: booting it in qemu (TCG), tests: ${TESTS[*]}"
	start=$SECONDS
	env "${env[@]}" "$HERE/guest.sh" "${k%+preempt}" -- "$HERE/in-guest.sh" "$OUT" "${TESTS[@]}"
	rc=$?
	took=$((SECONDS - start))
	case $rc in
	0) echo "--- kernel $k: passed in ${took} s" ;;
	124) echo "--- kernel $k: FAILED: the guest hung and was killed after ${took} s" ;;
	123) echo "--- kernel $k: FAILED: the guest kernel died during the tests (its oops or panic is above) (${took} s)" ;;
	125) echo "--- kernel $k: FAILED: could not fetch or boot the kernel (see above) (${took} s)" ;;
	*) echo "--- kernel $k: FAILED (exit $rc) in ${took} s" ;;
	esac
	[ "$rc" -eq 0 ] || failed+=("$k")
done
if [ ${#KERNELS[@]} -gt 1 ]; then
	echo "kmatrix: ${#KERNELS[@]} kernels in $((SECONDS - total_start)) s," \
		"${#failed[@]} failed${failed[*]:+: ${failed[*]}} (the host's kernel, $(uname -r): the native tests)"
fi
[ ${#failed[@]} -eq 0 ]
