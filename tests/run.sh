#!/bin/bash
# run.sh - every test of heapsnoop; `make check` runs it (and .ci/run).
# Ends with the line "tests: N passed, N failed, in N s" and exits non-zero on any failure.
set -u
OUT=${1:-build}
cd "$(dirname "$0")/.." || exit 2
pass=0 fail=0
# Each test's time is said: the whole must stay under CI's 30 minutes.
run() {
	local name=$1 t0=$SECONDS; shift
	echo "=== $name"
	if "$@"; then
		pass=$((pass + 1)); echo "--- ok: $name ($((SECONDS - t0)) s)"
	else
		fail=$((fail + 1)); echo "--- FAILED: $name ($((SECONDS - t0)) s)"
	fi
}
run "repository root: only the project's files" tests/check_root.sh
run "paths named in comments and docs: each exists; the checker flags made-up ones, not globs or other projects' paths" \
	tests/check_paths.sh
run "no include circle between the product's folders (but the known ones, said); the checker flags a made-up one" \
	tests/check_includes.sh
run "release binaries: static, one file each, x86-64 and arm64" tests/test_static.sh "$OUT"
run "make install, make dist: the files, pkg-config, man pages" tests/test_install.sh "$OUT"
run "codec unit tests (cmocka)" "$OUT/tests/test_codec" tests/data/vectors.tsv
run "record lines unit tests (cmocka, ASan+UBSan)" "$OUT/tests/test_records"
run "frames that are not native code unit tests (cmocka, ASan+UBSan)" "$OUT/tests/test_frametab"
run "generic hash table unit tests (cmocka, ASan+UBSan)" "$OUT/tests/test_htab"
run "who holds the live heap: stacks summed by holder, named by the biggest (cmocka, ASan+UBSan)" \
	"$OUT/tests/test_holders"
run "leak suppressions unit tests (cmocka, ASan+UBSan)" "$OUT/tests/test_suppress"
run "alloc-metadata library unit tests (cmocka, ASan+UBSan)" "$OUT/tests/test_alloc_metadata"
run "the collector's unwinder unit tests (cmocka)" "$OUT/tests/test_unwind"
run "tracker and stacks unit tests (cmocka)" "$OUT/tests/test_tracker"
run "the loader's pace between ring buffer reads unit tests (cmocka, ASan+UBSan)" "$OUT/tests/test_pace"
run "the per-CPU free logs' reader unit tests (cmocka, ASan+UBSan)" "$OUT/tests/test_freelog"
run "the perf map reader unit tests: lines, the newest name, hostile content, the real file (cmocka, ASan+UBSan)" "$OUT/tests/test_perfmap"
run "the jitdump reader unit tests: records, lines, a growing file, other byte order, garbage; found by its mapping; merged with the perf map (cmocka, ASan+UBSan)" "$OUT/tests/test_jitdump"
run "Lua frames read from outside and named against lua5.4's, lua5.1's and luajit's own tracebacks (cmocka, ASan+UBSan)" "$OUT/tests/test_lua" "$PWD/tests/interp/lua/chain.lua"
run "the BPF side's Lua walk (user/interp/lua/lua.bpf.h) word for word against the loader's, lua5.4 and lua5.1 (cmocka, BPF)" "$OUT/tests/test_luabpf" "$PWD/tests/interp/lua/chain.lua"
run "the BPF side's LuaJIT walk (user/interp/luajit/luajit.bpf.h) word for word against ljwalk.c's, luajit -joff (cmocka, BPF)" "$OUT/tests/test_ljbpf" "$PWD/tests/interp/lua/chain.lua"
run "Lua VMs found in Debian's files: the VM, lua_newstate, luaV_execute by its debug symbol and by the largest FDE, alike (cmocka, ASan+UBSan)" "$OUT/tests/test_luafind"
run "a Lua walk cut into the interpreter loop's runs: FRESH (5.4), calling instructions (5.1), a resumed coroutine, C frames (cmocka, ASan+UBSan)" "$OUT/tests/test_luasegs"
run "per-process state unit tests (cmocka, ASan+UBSan)" "$OUT/tests/test_trace"
run "the unwinder's CFI cache trimmed (rules the same after, unused modules closed), ended processes' tails let go (cmocka, ASan+UBSan)" \
	"$OUT/tests/test_cfi"
run "the live view's name cache, bounded, least recently used out; the C runtime's frames (cmocka, ASan+UBSan)" \
	"$OUT/tests/test_namecache"
run "CPython location tables against co_lines(), str kinds, layouts (cmocka, ASan+UBSan)" \
	tests/interp/test_pylines.sh "$OUT"
run "interpreter frames among native ones: the splice unit tests (cmocka, ASan+UBSan)" \
	"$OUT/tests/test_splice"
run "the tracer's CPython finder and resolver on Debian's python3.11, trixie's 3.13, the 3.12 builds present, forky's 3.14 and a free-threaded 3.14 where made (their layouts against 3.14.7's headers); a build that hides its eval loop or _PyRuntime (cmocka, ASan+UBSan)" \
	tests/interp/test_pyfind.sh "$OUT"
run "probe site analysis unit tests (cmocka)" "$OUT/tests/test_probesite"
run "arm64 probe site analysis unit tests (cmocka)" "$OUT/tests/test_probesite_arm64"
run "arm64 CPython and LuaJIT code decoders unit tests (cmocka)" "$OUT/tests/test_pydecode_arm64"
run "codec unit tests under ASan+UBSan" "$OUT/asan/test_codec" tests/data/vectors.tsv
run "heapdecode's model of a log unit tests (cmocka, ASan+UBSan)" "$OUT/tests/test_model"
run "heapdecode filter" tests/decode/test_heapdecode.sh "$OUT/heapdecode"
run "heapdecode filter under ASan+UBSan" tests/decode/test_heapdecode.sh "$OUT/asan/heapdecode" --sanitized
run "heapdecode: a sampled dump's estimates (ASan+UBSan)" tests/decode/test_hdsampled.sh "$OUT/asan/heapdecode"
run "heapdecode: deep stacks, interpreter and JIT frames in every output (ASan+UBSan)" \
	tests/decode/test_hdframes.sh "$OUT/asan/heapdecode"
run "heapdecode: --frames python (stacks as Python tracebacks); the flame graph's kinds of frame, their classes and hues (ASan+UBSan)" \
	tests/decode/test_hdpyview.sh "$OUT/asan/heapdecode"
run "heapdecode: paths in logs are hostile; map records in O(log n) (ASan+UBSan)" \
	tests/decode/test_hdpaths.sh "$OUT/asan/heapdecode"
run "heapdecode: inlined frames in --folded and the flame graph, symbol versions hidden, -e, modules not found said once (ASan+UBSan)" \
	tests/decode/test_hdinline.sh "$OUT/asan/heapdecode"
run "heapdecode --html: one page, escaped, no URL, rendered by Chromium (ASan+UBSan)" \
	tests/decode/test_hdhtml.sh "$OUT/asan/heapdecode"
run "heapdecode: debug info from a debuginfod server, no dlopen (static)" \
	tests/test_debuginfod.sh "$OUT"
run "fuzz decoder and scanner (${FUZZ_SECONDS:-30}s)" \
	make --no-print-directory fuzz-run OUTPUT="$OUT" FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
run "fuzz record parser (${FUZZ_RECORDS_SECONDS:-10}s)" \
	make --no-print-directory fuzz-run-records OUTPUT="$OUT" \
	FUZZ_RECORDS_SECONDS="${FUZZ_RECORDS_SECONDS:-10}"
run "fuzz jitdump reader (${FUZZ_JITDUMP_SECONDS:-10}s)" \
	make --no-print-directory fuzz-run-jitdump OUTPUT="$OUT" \
	FUZZ_JITDUMP_SECONDS="${FUZZ_JITDUMP_SECONDS:-10}"
run "alloc-metadata lines without stdio (amlines.c) byte for byte the record writer's (cmocka, ASan+UBSan)" \
	"$OUT/tests/test_amlines"
run "a Cortex-M3 firmware's pool in qemu-system-arm (mps2-an385): its UART's ~m# dumps named by heapdecode -e fw.elf" \
	tests/mcu/test_mcu.sh "$OUT"
for t in tests/collector/test_*.sh; do
	run "collector: $(basename "$t" .sh)" "$t" "$OUT"
done
for t in tests/tracer/test_*.sh; do
	[ -e "$t" ] || continue
	run "tracer: $(basename "$t" .sh)" "$t" "$OUT"
done
run "heapsnoop agent's OTLP encoder: cgroups' container and pod IDs, a pprof of two processes as a request (cmocka, ASan+UBSan)" \
	"$OUT/tests/test_otlpenc"
run "unwinding later, elsewhere: heapsnoop --keep-stacks' ustack records unwound by heapdecode to the online frames, further with a separate debug file's .debug_frame, a moved binary found by build ID" \
	tests/unwind/test_offline.sh "$OUT"
run "heapsnoop agent: Prometheus scrapes /metrics and PromQL answers a program's live bytes; go tool pprof fetches /debug/pprof/heap with heapdecode's totals" \
	tests/agent/test_agent.sh "$OUT"
run "heapsnoop agent's pushes: OTLP profiles decoded by the OpenTelemetry project's classes (the dictionary's rules, resource attributes) and /ingest's pprof, with heapdecode's totals" \
	tests/agent/test_otlp.sh "$OUT"
run "heapsnoop agent: a collector's hello served exactly, found again after kill -9 and a restart; --max-memory sheds into one stack" \
	tests/agent/test_agent_collectors.sh "$OUT"
# The release binaries alone in Debian 11 and 13 roots (debootstrap, cached):
# they trace each one's perl, heapdecode there names the frames
# (tests/distro, docs/KERNELS.md). DISTRO_ROOTS="trixie" for one; set and empty, none.
for r in ${DISTRO_ROOTS-bullseye trixie}; do
	run "Debian $r root: the release binaries alone in it trace its perl (tests/distro)" \
		tests/distro/run.sh "$OUT" "$r"
done
# The guests: the kernel matrix, the main tracer tests inside other Debian
# kernels booted in qemu, each kernel one pass or fail (tests/kmatrix,
# docs/KERNELS.md; KMATRIX_KERNELS="6.12" runs only that one; set and
# empty, none), and 64-bit Arm, the arm64 build's tracer tests in
# qemu-system-aarch64, logs symbolized across architectures (tests/arm64,
# docs/ARCH.md; KMATRIX_ARM64=0: not run). Each qemu runs its guest on one
# host thread (TCG), so KMATRIX_LANES of them run at once (default: the
# CPUs, 4 at most), the longest first; their kernels and roots fetched
# before, one at a time. Each guest's output is shown whole when it ends.
guest_names=() guest_cmds=() guest_cost=()
for k in ${KMATRIX_KERNELS-5.10 6.1 6.12 6.12+preempt}; do
	guest_names+=("kernel $k in qemu: tracer tests (tests/kmatrix)")
	guest_cmds+=("tests/kmatrix/run.sh $OUT $k")
	# Seconds each took in a run here (Python in 5.10's and 6.1's).
	case $k in 6.1) c=430 ;; 5.10) c=330 ;; 6.12) c=140 ;; *) c=40 ;; esac
	guest_cost+=("$c")
done
[ -n "${KMATRIX_KERNELS-x}" ] || echo "=== kernel matrix skipped: KMATRIX_KERNELS is set and empty"
if [ "${KMATRIX_ARM64:-1}" != 0 ]; then
	guest_names+=("arm64 in qemu: tracer tests, logs across architectures (tests/arm64)")
	guest_cmds+=("tests/arm64/run.sh $OUT")
	guest_cost+=(250)
else
	echo "=== arm64 in qemu skipped: KMATRIX_ARM64=0"
fi
if [ ${#guest_names[@]} -gt 0 ]; then
	G=$(mktemp -d) || exit 2
	lanes=${KMATRIX_LANES:-$(nproc)}
	[ "$lanes" -ge 1 ] 2> /dev/null || lanes=1
	[ "$lanes" -le 4 ] || lanes=4
	echo "=== the guests' kernels and roots (fetched once, cached)"
	for k in ${KMATRIX_KERNELS-5.10 6.1 6.12 6.12+preempt}; do
		tests/kmatrix/fetch-kernel.sh "${k%%+*}" > /dev/null
	done
	[ "${KMATRIX_ARM64:-1}" = 0 ] || tests/kmatrix/fetch-kernel.sh 6.1-arm64 > /dev/null
	tests/distro/make-root.sh trixie > /dev/null
	[ "${KMATRIX_ARM64:-1}" = 0 ] || tests/distro/make-root.sh trixie-arm64 > /dev/null
	# The queue, longest first: each lane takes the next index under a lock.
	for i in "${!guest_names[@]}"; do echo "${guest_cost[$i]} $i"; done | sort -rn |
		awk '{ print $2 }' > "$G/queue"
	echo 0 > "$G/next"
	echo "=== the guests, $lanes at a time: ${#guest_names[@]} of them"
	for ((l = 0; l < lanes; l++)); do
		while i=$(flock "$G/next" sh -c 'n=$(cat "$1/next"); sed -n "$((n + 1))p" "$1/queue";
			echo $((n + 1)) > "$1/next"' sh "$G") && [ -n "$i" ]; do
			t0=$SECONDS
			${guest_cmds[$i]} > "$G/$i.log" 2>&1
			rc=$?
			echo "$rc" > "$G/$i.rc"
			[ "$rc" = 0 ] && st=ok || st=FAILED
			flock "$G/next" sh -c 'echo "=== $2"; cat "$1"; echo "--- $3: $2 ($4 s)"' \
				sh "$G/$i.log" "${guest_names[$i]}" "$st" "$((SECONDS - t0))"
		done &
	done
	wait
	for i in "${!guest_names[@]}"; do
		read -r rc < "$G/$i.rc" 2> /dev/null || rc=1
		if [ "$rc" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	done
	rm -rf "$G"
fi
echo
echo "tests: $pass passed, $fail failed, in $SECONDS s"
[ "$fail" -eq 0 ]
