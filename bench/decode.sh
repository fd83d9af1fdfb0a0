#!/bin/bash
# decode.sh - heapdecode throughput on 1,000,000 `~m#` lines of varied depth
# (0..31 frames, PIE/library-like 64-bit addresses), against `base64 -d` over
# the same tokens in the same run. Prints lines/s and the ratio.
#   usage: bench/decode.sh [BUILD_DIR] [LINES]
set -eu
OUT=${1:-build}
N=${2:-1000000}
HD=$OUT/heapdecode
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# Records as ~b# lines, then encoded by heapdecode itself.
awk -v n="$N" 'BEGIN {
	srand(42)
	split("0x55d0c3a4 0x7f3a1a0f 0x7f3a1236 0x7ffd0012 0x401", base, " ")
	for (i = 0; i < n; i++) {
		d = int(rand() * 32)
		printf "~b#size: %d, ", int(rand() * 100000)
		for (j = 0; j < d; j++)
			printf "%s%s%04x", j ? " " : "", base[1 + int(rand() * 5)], int(rand() * 65536)
		printf "\n"
	}
}' | "$HD" --encode > "$T/m"
sed 's/^~m#//' "$T/m" > "$T/b64"
lines=$(wc -l < "$T/m")

best() { # command... -> best of 3 wall-clock seconds
	local b=
	for _ in 1 2 3; do
		local s e
		s=$(date +%s.%N)
		"$@" > /dev/null
		e=$(date +%s.%N)
		b=$(echo "$e $s ${b:-1e9}" | awk '{t = $1 - $2; print (t < $3) ? t : $3}')
	done
	echo "$b"
}
t_hd=$(best "$HD" "$T/m")
t_b64=$(best base64 -d "$T/b64")
awk -v n="$lines" -v a="$t_hd" -v b="$t_b64" -v bytes="$(wc -c < "$T/m")" 'BEGIN {
	printf "decode benchmark: %d lines, %.1f MB of ~m# text\n", n, bytes / 1e6
	printf "  %-22s %8.3f s  %12.0f lines/s\n", "heapdecode", a, n / a
	printf "  %-22s %8.3f s  %12.0f lines/s\n", "base64 -d (same tokens)", b, n / b
	printf "  ratio heapdecode / base64 -d: %.2fx (aim: <= 3x)\n", a / b
}'
