#!/bin/bash
# test_hdpaths.sh - heapdecode treats every path in a log as hostile: a
# FIFO is never opened (nothing blocks), --sysroot confines every path
# ("..", an absolute symbolic link), --no-local-files opens none; strace
# shows what was opened. And map records cost O(log n) each: 100,000 of
# them in descending order (quadratic before: 41 s) under a timeout that
# only stops a hang. About 2 s (10 s under ASan).
# Usage: test_hdpaths.sh HEAPDECODE
. "$(dirname "$0")/lib.sh"

# A real library heapdecode does not load itself (so every open of it is
# the symbolizer's): capstone, one of the build's dependencies.
capstone_cs_open
BASE=0x7f0000000000
# One live record, frames: cs_open in capstone, then 0x10001 in
# whatever the map records at 0x10000 name.
TOK=$(printf '~b#size: 16, 0x%x 0x10001\n' $((BASE + 0x$V + 1)) | "$HD" --encode)
log() { # PATH... : a dump whose second mapping is each PATH in turn (pids 1..)
	local pid=0
	echo "heapsnoop: dump reason=exit time=1.000 live=$# bytes=16 stacks=1"
	for p in "$@"; do
		pid=$((pid + 1))
		echo "heapsnoop: map pid=$pid start=$BASE end=0x7f0001000000 off=0x0 buildid=- path=$LIB"
		echo "heapsnoop: map pid=$pid start=0x10000 end=0x20000 off=0x0 buildid=- path=$p"
		echo "heapsnoop: live pid=$pid ptr=0x10 $TOK"
	done
	echo "heapsnoop: end-dump live=$#"
}
# The opens heapdecode made: strace -y prints each returned fd's file.
traced() { # OUT ARGS...
	local out=$1; shift
	# LeakSanitizer cannot run under ptrace; the untraced runs below check leaks.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		timeout 60 strace -f -qq -y -e trace=open,openat,openat2 -o "$out" "$HD" "$@"
}

mkfifo "$T/fifo"
log "$T/fifo" > "$T/l1.log"
traced "$T/st1" --report "$T/l1.log" > "$T/r1"
check "FIFO in a map record: heapdecode ends, exit 0" test $? -eq 0
check "FIFO: its frame says it is no regular file" \
	grep -q '0x10001 fifo+0x1 \[module path is not a regular file\]$' "$T/r1"
check "FIFO: opened only O_PATH (never for reading)" \
	bash -c "! grep '\"$T/fifo\"' '$T/st1' | grep -v O_PATH | grep -q ."
check "FIFO: looked at (O_PATH)" grep -q "\"$T/fifo\", O_RDONLY|O_CLOEXEC|O_PATH" "$T/st1"
check "a real library is still named" grep -q 'cs_open+0x1 (libcapstone.so' "$T/r1"
check "a real library is read (the positive control)" grep -q "<$LIB>" "$T/st1"
"$HD" --report "$T/l1.log" > "$T/r1b"
check "the same, not under strace (ASan: no leak): exit 0" test $? -eq 0

# Under --sysroot: escapes by "..", by an absolute symbolic link, and a
# path that exists only on this machine.
mkdir -p "$T/root/lib" "$T/root/etc"
ln -s /etc/shadow "$T/root/lib/evil.so"
log /../../../../../etc/shadow /lib/evil.so /etc/shadow "$LIB" > "$T/sys.log"
traced "$T/st2" --sysroot "$T/root" --report "$T/sys.log" > "$T/r2"
check "--sysroot: nothing found, so nothing named: exit 3" test $? -eq 3
check "--sysroot: the host's /etc/shadow is never opened" \
	bash -c "! grep -q '</etc/shadow>' '$T/st2'"
check "--sysroot: nor the host's capstone" bash -c "! grep -q '<$LIB>' '$T/st2'"
check "--sysroot: the frames say not found" \
	test "$(grep -c '0x10001 [^ ]*+0x1 \[module file not found\]$' "$T/r2")" -eq 4

# --no-local-files: no path of the log is looked at.
log /etc/shadow > "$T/local.log"
traced "$T/st3" --no-local-files --report "$T/local.log" > "$T/r3"
check "--no-local-files: exit 0" test $? -eq 0
check "--no-local-files: /etc/shadow never opened" bash -c "! grep -q /etc/shadow '$T/st3'"
check "--no-local-files: capstone never opened" bash -c "! grep -q '$LIB' '$T/st3'"
check "--no-local-files: the frames say why" \
	test "$(grep -c 'module file not opened: --no-local-files' "$T/r3")" -eq 2

# A later mapping replaces those it overlaps: [0x1000,0x3000) /x/a, then
# [0x2000,0x4000) /x/b; 0x1501 is then in none, 0x2501 in b.
TOK2=$(echo '~b#size: 8, 0x2501 0x1501' | "$HD" --encode)
printf '%s\n' "heapsnoop: dump reason=exit time=1.000 live=1 bytes=8 stacks=1" \
	"heapsnoop: map pid=9 start=0x1000 end=0x3000 off=0x0 buildid=- path=/x/a" \
	"heapsnoop: map pid=9 start=0x2000 end=0x4000 off=0x0 buildid=- path=/x/b" \
	"heapsnoop: live pid=9 ptr=0x10 $TOK2" "heapsnoop: end-dump live=1" > "$T/ov.log"
"$HD" --report "$T/ov.log" > "$T/r4"
check "overlap: the later mapping holds 0x2501" grep -q '#0  0x2501 b+0x501 ' "$T/r4"
check "overlap: the replaced one is gone" grep -q '#1  0x1501 \[not in any mapping\]' "$T/r4"

# 100,000 map records, highest address first, the frame in the lowest.
TOK3=$(echo '~b#size: 8, 0x10000801' | "$HD" --encode)
awk -v tok="$TOK3" 'BEGIN {
	print "heapsnoop: dump reason=exit time=1.000 live=1 bytes=8 stacks=1"
	for (i = 99999; i >= 0; i--)
		printf "heapsnoop: map pid=5 start=0x%x end=0x%x off=0x0 buildid=- path=/nx/lib%d.so\n",
			268435456 + i * 8192, 268435456 + i * 8192 + 4096, i
	print "heapsnoop: live pid=5 ptr=0x10 " tok
	print "heapsnoop: end-dump live=1"
}' > "$T/many.log"
timeout 120 "$HD" --report "$T/many.log" > "$T/r5"
check "100,000 map records: done, nothing named (no such files): exit 3" test $? -eq 3
check "100,000 map records: the frame is in the lowest" grep -q '0x10000801 lib0.so+0x801 ' "$T/r5"
[ "$fails" -eq 0 ]
