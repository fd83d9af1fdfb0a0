#!/bin/bash
# lib.sh - what the heapdecode tests share, sourced with the test's own
# arguments: HD (the heapdecode under test, the first argument), T (a
# scratch directory, removed at exit), check() (a named check: "ok" or
# "FAIL", counted in fails), and capstone_cs_open (a real library's
# function that heapdecode does not load itself, so every open of the
# library is the symbolizer's: LIB its path, V cs_open's address in it).
set -u
HD=$(realpath "${1:?usage: $0 HEAPDECODE}")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { local n=$1; shift; if "$@"; then echo "ok   $n"; else echo "FAIL $n"; fails=$((fails + 1)); fi; }

capstone_cs_open() {
	LIB=$(realpath /usr/lib/x86_64-linux-gnu/libcapstone.so)
	V=$(nm -D --defined-only "$LIB" | awk '$3 == "cs_open" { print $1; exit }')
}
