#!/bin/bash
# run.sh - heapsnoop on 64-bit Arm (docs/ARCH.md): the arm64 build
# (BUILD_DIR/arm64, `make ARCH=arm64 OUTPUT=BUILD_DIR/arm64`) inside
# Debian's arm64 kernel under qemu-system-aarch64 (TCG: tests/kmatrix's
# guest.sh 6.1-arm64), and logs symbolized across architectures:
#   in the guest (in-guest.sh): launch mode with the exact live set and
#   chains, attach, DWARF unwinding through libraries without frame
#   pointers, threads; the preload collector and its unwinder's unit
#   test; Python's frames on the root's python3.13 (BPF and --preload),
#   LuaJIT's frames on its luajit; prog_nofp recorded there;
#   here: that arm64 log symbolized by this machine's (x86-64) heapdecode
#   gives the report the guest's own heapdecode gave, with the function
#   names and source lines of the program's chain; and an x86-64 log
#   recorded here, symbolized in the guest by the arm64 heapdecode, gives
#   the report this machine's gives. Neither machine has the other's C
#   library (the guest runs on its own Debian root, guest.sh): each log
#   travels with the files it names (sysroot.sh), found there with
#   heapdecode --sysroot.
# tests/run.sh (`make check`) runs it; `make arm64` alone builds and runs it.
#   run.sh BUILD_DIR        (this machine's build; BUILD_DIR/arm64 the guest's)
# Exits non-zero if a check failed, or the guest could not be booted.
set -u
. "$(dirname "$0")/../tracer/lib.sh"
cd "$(dirname "$0")/../.." || exit 2
ARM=$OUT/arm64
HERE=tests/arm64
for f in "$OUT/heapsnoop" "$OUT/heapdecode" "$OUT/asan/heapdecode" "$OUT/tests/prog_nofp" \
		"$OUT/tests/prog_semantics" "$ARM/heapsnoop" \
		"$ARM/heapdecode" "$ARM/tests/prog_nofp" "$ARM/tests/prog_semantics" \
		"$ARM/tests/prog_waiter" "$ARM/tests/prog_threads" "$ARM/tests/prog_semantics_pac" \
		"$ARM/tests/prog_collect" "$ARM/tests/test_unwind" "$ARM/libheapsnoop_preload.so" \
		"$ARM/tests/prog_death" "$ARM/tests/check_death" "$ARM/tests/test_livetable_torture"; do
	[ -x "$f" ] || { echo "arm64: $f missing: make check (or make arm64) builds it" >&2; exit 2; }
done
# Under TCG the tests' waits get 5 minutes a line (they end at the line);
# the guest 40 minutes (Python's two tests took 543 s and 739 s on a
# shared machine).
export HS_TEST_TIMEOUT=${HS_TEST_TIMEOUT:-300} KMATRIX_TIMEOUT=${KMATRIX_TIMEOUT:-2400}

# The x86-64 log, recorded here, for the guest to symbolize with the files
# it names.
# Both logs keep their stacks' bytes (--keep-stacks): each heapdecode
# unwinds the other's offline, by the other architecture's unwinder
# (user/unwind/otherarch.c), to the frames its own tracer found.
"$HS" -q --keep-stacks -o "$T/x86.heap" -- "$OUT/tests/prog_nofp" 2> "$T/x86.err"
check "x86-64: prog_nofp recorded here" test $? -eq 0
check "x86-64: the files it names copied for the guest" "$HERE/sysroot.sh" "$T/x86.heap" "$T/x86root"
for b in "$ARM/heapsnoop" "$ARM/heapdecode"; do
	need=$(readelf -d "$b" 2>&1 | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' ')
	echo "arm64: $b needs (readelf -d): ${need:-nothing}"
done

start=$SECONDS
KMATRIX_SHARE=$T KMATRIX_DIRS=$OUT tests/kmatrix/guest.sh 6.1-arm64 -- "$HERE/in-guest.sh" "$ARM" /run/share
rc=$?
check "the arm64 guest's tests passed ($((SECONDS - start)) s, exit $rc)" test "$rc" -eq 0

# The arm64 log here, with the guest's files: the same report as the guest's.
SYSROOT=(--sysroot "$T/arm64root" --debug-dir "$T/arm64root/usr/lib/debug")
"$HD" "${SYSROOT[@]}" --report --full-stacks "$T/arm64.heap" > "$T/arm64.report.host" 2> "$T/hd.err"
check "arm64 log: symbolized here" test $? -eq 0 -a -s "$T/arm64.report.host"
check "arm64 log: this machine's report is the guest's, line for line" \
	cmp -s "$T/arm64.report.host" "$T/arm64.report.guest"
n=$(grep -c ' ustack ' "$T/arm64.heap")
check "arm64 log: its $n ustack records unwound here by arm64's unwinder, the guest's frames exactly" \
	grep -q "offline unwinding: $n ustack records, $n met their block: $n the online frames exactly.*(the other architecture's unwinder" "$T/hd.err"
n=$(grep -c ' ustack ' "$T/x86.heap")
check "x86-64 log: its $n ustack records unwound in the guest by x86-64's unwinder, this machine's frames exactly" \
	grep -q "offline unwinding: $n ustack records, $n met their block: $n the online frames exactly.*(the other architecture's unwinder" "$T/x86.hd.guest"
"$OUT/asan/heapdecode" "${SYSROOT[@]}" --report --full-stacks "$T/arm64.heap" > "$T/arm64.report.asan" 2> "$T/asan.err"
check "arm64 log: the same report under ASan+UBSan, nothing said but the offline unwinding's line" \
	bash -c "cmp -s '$T/arm64.report.host' '$T/arm64.report.asan' && ! grep -v 'offline unwinding: ' '$T/asan.err' | grep -q ."
# prog_nofp's chain to its first 1111 bytes (1.1 KiB) in a report (--full-stacks),
# innermost first.
chain_of() { # REPORT
	awk '/^[0-9]/ { if (blk && hit) exit; blk = ($1 " " $2 == "1.1 KiB"); hit = 0; out = s = ""; next }
	blk && $1 ~ /^#/ { f = $3; sub(/[+@].*/, "", f); out = out s f; s = ";"; if (f == "main") hit = 1 }
	END { if (blk && hit) print out }' "$1"
}
CHAIN="lib_leaf;p_deep;p_callback;fp_hop;lib_back;lib_mid;lib_enter;p_step;p_run;main;__libc_start_call_main;__libc_start_main;_start"
expect_eq "arm64 log: the function names of the chain, here" "$(chain_of "$T/arm64.report.host")" "$CHAIN"
line_of() { grep -nF "$2" "$1" | head -n 1 | cut -d: -f1; }
for want in "lib_leaf libnofp.so tests/unwind/libnofp.c:$(line_of tests/unwind/libnofp.c 'void *p = malloc(n);')" \
		"p_deep prog_nofp tests/unwind/prog_nofp.c:$(line_of tests/unwind/prog_nofp.c 'p = lib_leaf(n, depth + pad[0]);')" \
		"p_callback prog_nofp tests/unwind/prog_nofp.c:$(line_of tests/unwind/prog_nofp.c 'void *p = p_deep(n, depth);')" \
		"lib_mid libnofp.so tests/unwind/libnofp.c:$(line_of tests/unwind/libnofp.c 'p = lib_back(')"; do
	read -r fn mod src <<< "$want"
	check "arm64 log: $fn in $mod at $src, here" \
		grep -qE "^    #[0-9]+ +0x[0-9a-f]+ $fn\+0x[0-9a-f]+ \($mod\) $src\$" "$T/arm64.report.host"
done

# The x86-64 log in the guest: the same report as here.
"$HD" --report --full-stacks "$T/x86.heap" > "$T/x86.report.host" 2> /dev/null
check "x86-64 log: the guest's report is this machine's, line for line" \
	cmp -s "$T/x86.report.host" "$T/x86.report.guest"
expect_eq "x86-64 log: the function names of the chain, in the guest" \
	"$(chain_of "$T/x86.report.guest")" "$CHAIN"
check "x86-64 log: the allocation's call site named in the guest" \
	grep -qE "^    #0 +0x[0-9a-f]+ lib_leaf\+0x[0-9a-f]+ \(libnofp.so\) tests/unwind/libnofp.c:$(line_of tests/unwind/libnofp.c 'void *p = malloc(n);')\$" "$T/x86.report.guest"
if [ "$fails" -gt 0 ] && [ -s "$T/arm64.report.host" ]; then
	echo "the arm64 log's report here, and how the guest's differs:"
	head -n 40 "$T/arm64.report.host"
	diff "$T/arm64.report.guest" "$T/arm64.report.host" | head -n 20
fi
finish
