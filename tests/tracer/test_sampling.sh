#!/bin/bash
# test_sampling.sh - --sample-bytes in the BPF tracer: on a known live set
# (tests/collector/prog_collect sample: 50000 x 64 and 781 x 8192 bytes
# live, as many again freed, each freed block's free reaching the loader),
# the estimated live bytes per stack within 4 standard deviations of the
# truth (1 in ~16000 runs fails by chance: the kernel's generator has no
# seed); unsampled allocations leave no record; every report says its
# values are estimates. ~2 s here.
set -u
. "$(dirname "$0")/lib.sh"

"$HS" -q --sample-bytes 4096 -o "$T/rec" -- "$PROGS/prog_collect" sample 50000 > /dev/null 2> "$T/err"
check "traced with --sample-bytes" test $? -eq 0
fold "$T/rec"
expect_sampled "$T/rec" 50000 4096
# The whole-run reports say it too (the tracer's proc/stack/sample records).
check "--stats says which values are estimates" \
	bash -c "'$HD' --stats '$T/rec' | head -1 | grep -q '^estimated: a sample by bytes, one per 4096 bytes'"
# --growth compares dumps: the run's one twice over.
cat "$T/rec" "$T/rec" > "$T/rec2"
check "--growth says so" bash -c "'$HD' --growth '$T/rec2' | grep -q '^estimated: '"
"$HD" --growth "$T/rec" > /dev/null 2> "$T/growth1.err"
check "--growth on one dump: exit 2, with how to get more" bash -c "test $? -eq 2 &&
	grep -q -- '--growth compares dumps, and the input holds 1: heapsnoop -i SECS' '$T/growth1.err'"
check "--json gives the mean" bash -c "'$HD' --json '$T/rec' | grep -q '\"sample_bytes\": 4096'"
"$HD" --timeline "$T/tl.svg" "$T/rec" && "$HD" --massif "$T/ms" "$T/rec"
check "--timeline's title says estimated" grep -q 'bytes estimated: a sample by bytes, one per 4096 bytes on average' "$T/tl.svg"
check "--massif's desc says estimated" grep -q '^desc: .*bytes estimated (a sample by bytes, one per 4096 bytes on average)' "$T/ms"
check "no events lost" grep -q "no events lost" "$T/err"
"$HS" --sample-bytes 4096 --seed 1 -- true 2> "$T/bad"
check "--seed is --preload's" grep -q -- "--seed goes with --preload" "$T/bad"
finish
