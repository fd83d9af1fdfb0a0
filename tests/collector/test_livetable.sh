#!/bin/bash
# test_livetable.sh - the live table's reader and writer
# (tests/collector/test_livetable.c): the lines, the walk, hostile headers
# and a dump under ASan+UBSan; then the seqlock torture at speed
# (TORTURE_ROUNDS, 10 M by default). ~2 s.
set -u
OUT=$(realpath "${1:?usage: $0 BUILD_DIR}")
rc=0
"$OUT/tests/test_livetable" || rc=1
"$OUT/tests/test_livetable_torture" --torture ${TORTURE_ROUNDS:-10000000} || rc=1
exit $rc
