#!/bin/bash
# test_fuzz_livetable.sh - libFuzzer on the reader of a hostile live
# table (tests/fuzz/fuzz_livetable.c: heapsnoop --preload maps tables
# that broken or hostile programs wrote) for FUZZ_LIVETABLE_SECONDS (10)
# from tests/fuzz/livetable-seeds; fails on any read outside the table,
# any undefined behaviour, any line written that does not parse.
set -u
OUT=${1:?usage: $0 BUILD_DIR}
cd "$(dirname "$0")/../.." || exit 2
exec make --no-print-directory fuzz-run-livetable OUTPUT="$OUT" \
	FUZZ_LIVETABLE_SECONDS="${FUZZ_LIVETABLE_SECONDS:-10}"
