#!/bin/bash
# test_preload_debian.sh - Debian's own python3 and sqlite3 (no frame
# pointers, not rebuilt) under the preload collector and under heapsnoop's
# BPF tracer, address-space randomization off: the live set at exit must
# be the same allocations from the same stacks, function for function, and
# every stack complete to _start, python3's deepest (some 80 frames) too:
# a stack deeper than one token (31 frames) is whole in both. ~3 s.
set -u
. "$(dirname "$0")/../tracer/lib.sh"
SRC=$PWD/tests/unwind
cd "$T" || exit 1
PY='import json
d = [dict(k=i, v=str(i) * 50) for i in range(3000)]
s = json.dumps(d)
keep = [bytearray(1000 + i) for i in range(200)]
print(len(s))'

both() { # NAME COMMAND... : the exit live set traced, then collected
	local name=$1; shift
	# --no-interp: native frames only, PYTHONMALLOC left as it is, as the
	# collector sees a Python (it reads no interpreter frames).
	setarch -R "$HS" -q --no-interp -o "$name.hs" -- "$@" > /dev/null 2> "$name.err" < "$name.in"
	check "$name: traced (BPF)" test $? -eq 0
	HEAPSNOOP_OUTPUT=$name.pl LD_PRELOAD=$OUT/libheapsnoop_preload.so setarch -R "$@" \
		> /dev/null < "$name.in"
	check "$name: collected (preload)" test $? -eq 0
	# Exactly: a stack deeper than one token (31 frames) is kept whole by
	# both (docs/FORMAT.md, "Deeper stacks").
	"$HD" --folded --count "$name.hs" | sort > "$name.hs.f"
	"$HD" --folded --count "$name.pl" | sort > "$name.pl.f"
	"$HD" --folded "$name.hs" | sort > "$name.hs.b"
	"$HD" --folded "$name.pl" | sort > "$name.pl.b"
	expect_eq "$name: the same stacks, allocation counts and bytes" \
		"$(cat "$name.pl.f" "$name.pl.b" | md5sum)" "$(cat "$name.hs.f" "$name.hs.b" | md5sum)"
	check "$name: some stacks to compare ($(wc -l < "$name.pl.f"))" test "$(wc -l < "$name.pl.f")" -ge 5
}

: > python3.in
PYTHONHASHSEED=0 both python3 /usr/bin/python3 -c "$PY"
# Complete: every stack from _start, those deeper than 31 frames too.
expect_eq "python3: every stack complete, from _start" "$(grep -vc '^_start;' python3.pl.f)" 0
deeper=$(awk '{ n = split($1, f, ";") } n > 31' python3.pl.f | wc -l)
check "python3: some stacks deeper than 31 frames, whole ($deeper)" test "$deeper" -gt 0
check "python3: stacks name the interpreter's functions" grep -q '_PyEval_EvalFrameDefault' python3.pl.f

cp "$SRC/sqlite_work.sql" sqlite3.in
both sqlite3 /usr/bin/sqlite3 :memory:
# sqlite3 is stripped: its _start is an address, then libc's start.
expect_eq "sqlite3: every stack from the program's entry through __libc_start_main" \
	"$(grep -vc '^\[sqlite3+0x[0-9a-f]*\];__libc_start_main' sqlite3.pl.f)" 0
finish
