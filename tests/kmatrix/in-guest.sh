#!/bin/bash
# in-guest.sh - the part of the kernel matrix test (tests/kmatrix/run.sh)
# that runs inside the guest kernel: heapsnoop's tracer tests that matter
# most on another kernel, each with its own ok/FAIL lines and time:
#   launch mode, exact live set and chains, --unwind dwarf and fp
#                                    (test_semantics.sh)
#   attach to a running process      (test_attach.sh)
#   DWARF unwinding, no frame pointers, across libraries (test_unwind.sh)
#   -a, several processes at once    (test_syswide.sh)
#   ring buffer full, every loss counted (test_ringbuf.sh)
#   --sample-bytes: the sampling check in BPF, estimates (test_sampling.sh)
#   forks followed (-f) or said, in launch and -p (test_fork.sh)
#   Python frames among the native ones, launched and attached, on
#   Debian's python3.11 (the build directory's copy: the root has none)
#   and the root's own python3.13 (test_python.sh)
#   Lua frames, launched and attached, on Debian's lua5.4 and lua5.1 (the
#   build directory's copies) (test_lua.sh), and the root's luajit
#   (test_luajit.sh: skipped, the trixie root has none)
# Before them, what the guest runs them on: its own Debian root, not this
# machine's (tests/kmatrix/guest.sh), with none of heapsnoop's libraries,
# and the release heapsnoop and heapdecode needing none (ldd).
# Usage: in-guest.sh BUILD_DIR [TEST...]   (TEST: semantics attach ...)
# Exits non-zero if any test failed.
set -u
OUT=$(realpath "${1:?usage: $0 BUILD_DIR [TEST...]}"); shift
cd "$(dirname "$0")/../.." || exit 2
TESTS=("$@")
[ ${#TESTS[@]} -gt 0 ] || TESTS=(semantics attach unwind syswide ringbuf sampling fork python)
# test_python.sh: Debian's python3.11 from the build directory (run.sh
# shows the guest its standard library); a smaller "million" under TCG.
[ -x /usr/bin/python3.11 ] || export HS_PYTHON=$OUT/tests/python3.11
export HS_PY_MILLION=${HS_PY_MILLION:-100000}
# Only the kernel's part of it (the loader's and heapdecode's run natively):
# some 25 s a heapsnoop run under TCG.
export HS_PY_KERNEL_ONLY=${HS_PY_KERNEL_ONLY:-1}
# test_lua.sh: Debian's lua5.4 and lua5.1 from the build directory.
[ -x /usr/bin/lua5.4 ] || export HS_LUA54=$OUT/tests/lua5.4
[ -x /usr/bin/lua5.1 ] || export HS_LUA51=$OUT/tests/lua5.1
pass=0 fail=0 failed=
# The kernel's messages from here on are the tests' (a marker in the log).
MARK="heapsnoop kmatrix: tests begin"
echo "<6>$MARK" > /dev/kmsg

echo "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print $2 / 1024 " MiB"}' /proc/meminfo)"

echo "=== the guest's root: $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -n 1)"
ok=1
for b in heapsnoop heapdecode; do
	need=$(ldd "$OUT/$b" 2>&1)
	echo "ldd $b: $(echo "$need" | paste -sd' ')"
	echo "$need" | grep -q '=>\|ld-linux' && ok=0
done
libs=$(ls /usr/lib/*-linux-gnu | grep -E '^lib(bpf|dw|elf|capstone)[.-]' | paste -sd' ')
echo "libbpf, libdw, libelf, capstone in the root's /usr/lib/$(uname -m)-linux-gnu: ${libs:-none}"
[ -z "$libs" ] || ok=0
if [ "$ok" = 1 ]; then
	pass=$((pass + 1)); echo "--- ok: the release binaries need no library, the root has none of theirs"
else
	fail=$((fail + 1)); failed="$failed root"; echo "--- FAILED: the release binaries need no library, the root has none of theirs"
fi

# First, whether heapsnoop can load and trace at all here: when it cannot,
# every test below fails, and this shows why (its own stderr, the end of
# which has the verifier's or the kernel's reason).
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "=== heapsnoop loads and traces a program (launch mode)"
"$OUT/heapsnoop" -q -v -- "$OUT/tests/prog_semantics" > "$T/rec" 2> "$T/err"
# What this kernel's BPF has, as -v says it (docs/KERNELS.md's table).
sed -n '/BPF features probed$/,/^heapsnoop: [^ ]/p' "$T/err" | grep '^heapsnoop:   '
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^heapsnoop: live ' "$T/rec"; then
	pass=$((pass + 1)); echo "--- ok: heapsnoop loads and traces"
else
	fail=$((fail + 1)); failed="$failed preflight"
	n=$(wc -l < "$T/err")
	echo "heapsnoop exited $rc and wrote $(grep -c '^heapsnoop: live ' "$T/rec") live records;" \
		"its stderr ($n lines$([ "$n" -gt 60 ] && echo ", the first 10 and the last 50")):"
	if [ "$n" -gt 60 ]; then
		head -n 10 "$T/err"; echo "    [... $((n - 60)) lines ...]"; tail -n 50 "$T/err"
	else
		cat "$T/err"
	fi
	echo "--- FAILED: heapsnoop loads and traces"
fi

for t in "${TESTS[@]}"; do
	s=tests/tracer/test_$t.sh
	[ -x "$s" ] || { echo "in-guest.sh: no test $s" >&2; exit 2; }
	echo "=== tracer: test_$t"
	start=$SECONDS
	if "$s" "$OUT"; then
		pass=$((pass + 1)); echo "--- ok: tracer: test_$t ($((SECONDS - start)) s)"
	else
		fail=$((fail + 1)); failed="$failed $t"
		echo "--- FAILED: tracer: test_$t ($((SECONDS - start)) s)"
	fi
done
if [ "$fail" -gt 0 ]; then
	# From the marker's time on (the log's own clock), warnings and worse.
	t0=$(dmesg 2> /dev/null | sed -n "s/^\[ *\([0-9.]*\)\] $MARK\$/\1/p" | tail -n 1)
	k=$(dmesg --level=emerg,alert,crit,err,warn 2> /dev/null | awk -v t0="${t0:-0}" '
		/^\[ *[0-9.]+\]/ { s = $0; sub(/^\[ */, "", s); sub(/\].*/, "", s); on = s + 0 >= t0 + 0 } on' |
		tail -n 30)
	echo "the kernel's warnings and errors (dmesg) since the tests began, the last 30:${k:+$'\n'}${k:- none}"
fi
echo "kernel $(uname -r): $pass passed, $fail failed${failed:+ (failed:$failed)}"
[ "$fail" -eq 0 ]
