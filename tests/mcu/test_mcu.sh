#!/bin/bash
# test_mcu.sh - lws' own use of the `~m#` format: a Cortex-M3 firmware
# (examples/mcu, docs/MCU.md) keeps its pool's live blocks with their
# stacks and prints them to its UART; it runs in qemu-system-arm -M
# mps2-an385, and heapdecode -e fw.elf reads what the UART said. The test
# reads the UART as it comes and goes on at the firmware's own end marker
# ("fw: done"), never after a sleep; the firmware then stops qemu through
# semihosting with main()'s status. First the codec alone on the core:
# tests/mcu/vectors_fw.c checks the format's vectors there. A firmware that never says it is done
# fails after MCU_TIMEOUT seconds (60), with what the UART said. A few
# seconds (qemu's start).
set -u
. "$(dirname "$0")/../tracer/lib.sh"
SRC=$(realpath "$(dirname "$0")/../../examples/mcu/main.c")
FW=$OUT/mcu/fw.elf
LIMIT=${MCU_TIMEOUT:-60}

if [ ! -f "$FW" ] || [ ! -f "$OUT/mcu/vectors.elf" ] || ! command -v qemu-system-arm > /dev/null; then
	echo "FAIL $FW, $OUT/mcu/vectors.elf or qemu-system-arm missing: make mcu (scripts/install-deps.sh: gcc-arm-none-eabi, libnewlib-arm-none-eabi, qemu-system-arm)"
	exit 1
fi

# Run firmware ELF in qemu; its UART through a fifo into LOG, read line
# by line until the marker; then qemu's exit status, main()'s.
run_fw() { # NAME ELF LOG
	local line done=0 deadline=$((SECONDS + LIMIT)) qemu
	rm -f "$T/uart" && mkfifo "$T/uart"
	timeout $((LIMIT + 10)) qemu-system-arm -M mps2-an385 -nographic \
		-semihosting-config enable=on,target=native -kernel "$2" < /dev/null > "$T/uart" 2>&1 &
	qemu=$!
	exec 3< "$T/uart"
	while [ $SECONDS -lt $deadline ] && IFS= read -r -t $((deadline - SECONDS)) -u 3 line; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >> "$3"
		if [ "$line" = "fw: done" ]; then
			done=1
			break
		fi
	done
	if [ $done -ne 1 ]; then
		echo "FAIL $1: its end marker 'fw: done' within $LIMIT s; the UART said:"
		sed 's/^/    /' "$3" 2> /dev/null
		kill "$qemu" 2> /dev/null
		exit 1
	fi
	wait "$qemu"
	check "$1: qemu exits 0 through semihosting: main() returned 0" test $? -eq 0
	exec 3<&-
}

# The codec on the core: the format's 600 vectors, each exact.
run_fw "the vectors firmware" "$OUT/mcu/vectors.elf" "$T/vectors"
check "the codec on the Cortex-M3: every vector of tests/data/vectors.tsv exact" \
	grep -qx 'vectors: 600 of 600 exact' "$T/vectors"
grep '^fw: FAIL' "$T/vectors"

run_fw "the pool firmware" "$FW" "$T/log"

check "the firmware says how deep its stack went" grep -qE '^fw: stack used [0-9]+ bytes at most$' "$T/log"
expect_eq "two dumps, each whole" "$(grep -c '^heapsnoop: end-dump live=' "$T/log")" 2
check "the last dump: 6 blocks, 376 bytes" \
	grep -qx 'heapsnoop: dump reason=exit time=0.000 live=6 bytes=376 stacks=0' "$T/log"
expect_eq "every live block at a 32-bit address in the board's RAM, with a ~m# record" \
	"$(grep -cE '^heapsnoop: live pid=1 ptr=0x2[0-9a-f]{7}( cut=depth)? ~m#[A-Za-z0-9+/]+=*$' "$T/log")" 9

# -e with a path relative to the current directory, as addr2line takes it.
(cd "$OUT/mcu" && "$HD" -e fw.elf --folded "$T/log" > "$T/rec.bytes" 2> "$T/err" &&
	"$HD" -e fw.elf --folded --count "$T/log" > "$T/rec.count" 2>> "$T/err" &&
	"$HD" -e fw.elf --report "$T/log" > "$T/report" 2>> "$T/err" &&
	"$HD" -e fw.elf -s "$T/log" > "$T/s" 2>> "$T/err" &&
	"$HD" -e fw.elf --dump 1 --folded "$T/log" > "$T/first" 2>> "$T/err")
check "heapdecode -e fw.elf reads it all, exit 0" test $? -eq 0
check "heapdecode says nothing on standard error" test ! -s "$T/err"
[ -s "$T/err" ] && sed 's/^/    /' "$T/err"

expect_eq "packet_buffer: 2 blocks" \
	"$(folded_sum "$T/rec.count" "reset_handler;main;net_poll;net_rx;packet_buffer")" 2
expect_eq "packet_buffer: 2 x 120 bytes" \
	"$(folded_sum "$T/rec.bytes" "reset_handler;main;net_poll;net_rx;packet_buffer")" 240
expect_eq "config_entry: 3 blocks" \
	"$(folded_sum "$T/rec.count" "reset_handler;main;config_load;config_entry")" 3
expect_eq "config_entry: 3 x 40 bytes" \
	"$(folded_sum "$T/rec.bytes" "reset_handler;main;config_load;config_entry")" 120
deep="[stack_truncated]$(printf ';nest%.0s' $(seq 30));deep_leaf"
expect_eq "deep_leaf under 40 levels of nest: 1 block of 16 bytes, its innermost 31 frames, cut" \
	"$(folded_sum "$T/rec.bytes" "$deep")/$(folded_sum "$T/rec.count" "$deep")" 16/1
expect_eq "nothing else live (sensor_sample's blocks all freed)" "$(wc -l < "$T/rec.bytes")" 3
expect_eq "the first dump: the 3 config entries alone" \
	"$(cat "$T/first")" "reset_handler;main;config_load;config_entry 120"

# The exact file and line of each call, from fw.elf's DWARF.
line_of() { grep -n "$1" "$SRC" | head -1 | cut -d: -f1; }
check "--report: packet_buffer's call of pool_alloc, file and line" \
	grep -qE "^    #0  0x[0-9a-f]+ packet_buffer\+0x[0-9a-f]+ \(fw.elf\) examples/mcu/main.c:$(line_of 'return pool_alloc(120);')\$" "$T/report"
check "--report: net_rx's call of packet_buffer" \
	grep -qE "^    #1  0x[0-9a-f]+ net_rx\+0x[0-9a-f]+ \(fw.elf\) examples/mcu/main.c:$(line_of 'void \*pkt = packet_buffer();')\$" "$T/report"
check "--report: config_entry's call of pool_alloc" \
	grep -qE "^    #0  0x[0-9a-f]+ config_entry\+0x[0-9a-f]+ \(fw.elf\) examples/mcu/main.c:$(line_of 'char \*s = pool_alloc(40);')\$" "$T/report"
check "--report: 240 bytes in 2, 120 in 3, 16 in 1 cut, 376 in all" \
	bash -c "grep -q '^240 bytes (63.8%) in 2 allocations from pid 1:\$' '$T/report' &&
		grep -q '^120 bytes (31.9%) in 3 allocations from pid 1:\$' '$T/report' &&
		grep -q '^16 bytes (4.3%) in 1 allocations from pid 1 (stack truncated):\$' '$T/report' &&
		grep -q '^total: 376 bytes in 6 allocations from 3 stacks\$' '$T/report'"
expect_eq "-s: the deep block's record holds 31 frames" \
	"$(awk '/cut=depth/ { on = 1; next } on && /^    #[0-9]+ / { n++; next } { on = 0 } END { print n + 0 }' "$T/s")" 31
check "-s: every stack of a whole record ends at reset_handler's call of main" \
	test "$(grep -c 'reset_handler+0x[0-9a-f]* (fw.elf) examples/mcu/startup.c:' "$T/s")" -eq 8
finish
