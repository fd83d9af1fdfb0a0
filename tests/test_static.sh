#!/bin/bash
# test_static.sh - the release binaries are one file each: heapsnoop and
# heapdecode, x86-64 and arm64 (BUILD_DIR and BUILD_DIR/arm64), are
# static-pie executables of their machine with no program interpreter
# (PT_INTERP) and no shared library (DT_NEEDED); the x86-64 ones, copied
# alone into an empty directory and run from there with an empty
# environment, say their version, decode, and trace a running process
# (the BPF object inside). Other distributions' roots are
# tests/distro's. About 2 s.
# Usage: test_static.sh BUILD_DIR
set -u
. "$(dirname "$0")/tracer/lib.sh"

for arch in x86-64 arm64; do
	dir=$OUT machine="Advanced Micro Devices X86-64"
	[ $arch = arm64 ] && dir=$OUT/arm64 machine=AArch64
	for prog in heapsnoop heapdecode; do
		f=$dir/$prog
		if [ ! -f "$f" ]; then
			check "$arch $prog: built ($f)" false
			continue
		fi
		expect_eq "$arch $prog: machine" \
			"$(readelf -hW "$f" | sed -n 's/^ *Machine: *//p')" "$machine"
		expect_eq "$arch $prog: position-independent (static-pie)" \
			"$(readelf -hW "$f" | sed -n 's/^ *Type: *\([A-Z]*\).*/\1/p')" DYN
		check "$arch $prog: no program interpreter (PT_INTERP)" \
			bash -c "readelf -lW '$f' | grep -q '^ *LOAD' && ! readelf -lW '$f' | grep -q '^ *INTERP'"
		check "$arch $prog: no shared library (DT_NEEDED)" \
			bash -c "readelf -dW '$f' | grep -q 'FLAGS_1.*PIE' && ! readelf -dW '$f' | grep -q NEEDED"
	done
done

# Alone in a directory, nothing in the environment (no PATH, no
# LD_LIBRARY_PATH, no HOME).
mkdir "$T/alone"
cp "$HS" "$HD" "$T/alone/"
alone() { (cd "$T/alone" && exec env -i "$@"); }
check "heapsnoop --version: version and commit" \
	grep -qE '^heapsnoop [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-z-]+\)$' <<< "$(alone ./heapsnoop --version)"
check "heapdecode --version: version and commit" \
	grep -qE '^heapdecode [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-z-]+\)$' <<< "$(alone ./heapdecode --version)"
rec='~b#size: 4096, 0x55d0c0de1234 0x7f0011223344'
expect_eq "heapdecode encodes and decodes" \
	"$(echo "$rec" | alone ./heapdecode --encode | alone ./heapdecode)" "$rec"

coproc W { exec "$PROGS/prog_waiter"; }
wait_line "${W[0]}" '^ready ' || exit 1
mkfifo "$T/errpipe"
alone ./heapsnoop -q -s -p "$W_PID" -o "$T/rec" 2> "$T/errpipe" &
hs=$!
exec 5< "$T/errpipe"
check "heapsnoop traces a running process" wait_line 5 "^heapsnoop: tracing pid $W_PID" "$T/err"
cat <&5 >> "$T/err" &
drain=$!
echo "leak 7 1000" >&"${W[1]}"
wait_line "${W[0]}" '^done' || exit 1
echo "exit" >&"${W[1]}"
wait "$hs"
check "heapsnoop exits 0 when the target exits" test $? -eq 0
wait "$drain"
check_no_loss "no events lost" "$T/err"
check "its summary names the leak's function (symbolized inside the binary)" \
	grep -q 'after_attach_leak+0x[0-9a-f]* (prog_waiter) tests/tracer/prog_waiter.c:' "$T/err"
cp "$T/rec" "$T/alone/rec"
expect_eq "heapdecode (alone) folds the leak: 7000 bytes" \
	"$(alone ./heapdecode --folded rec | awk '/;after_attach_leak / { s += $NF } END { print s + 0 }')" 7000
rm "$T/alone/rec"
expect_eq "the directory holds the two binaries only" "$(ls -A "$T/alone" | tr '\n' ' ')" \
	"heapdecode heapsnoop "
finish
