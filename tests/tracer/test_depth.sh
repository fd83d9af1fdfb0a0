#!/bin/bash
# test_depth.sh - a stack deeper than one `~m#` token (31 frames) is kept
# whole by the tracer (its records name it by node=, docs/OUTPUT.md; the
# collector's in tokens, docs/FORMAT.md "Deeper stacks", depth=), with
# both --unwind modes: prog_deep's `N` is an allocation N
# calls deep through deep_a, deep_b, deep_c in turn. deep 60 is 64 frames
# from _start (--unwind fp: 62, its walk ends at libc's
# __libc_start_call_main, as every fp stack does): every frame, named, in
# order, at its source line where the output has lines, in the `live` and
# `stack` records and in every output of heapdecode (-s, --report,
# --folded, --json, --speedscope, --pprof read by `go tool pprof`) and in
# heapsnoop's own -s summary; no record is cut. The same under the
# collector (--preload, its CFI walk and --unwind fp). Deep 1100 (1104
# frames) whole, its node a chain's second. Past what is kept: dwarf's
# 16384 frames of a record (deep 16400), the collector's 1024 (deep 1100),
# fp's BPF walk of 128 (deep 200), the innermost kept, in order, cut=depth. A kernel whose verifier
# refuses fp's walk of 128 (Linux 5.10, 6.1) gets 31, said; the test then
# checks those. About 10 s.
set -u
. "$(dirname "$0")/lib.sh"
SRC=$(realpath "$(dirname "$0")/prog_deep.c")
cd "$T" || exit 1
PD=$PROGS/prog_deep
export HOME=$T/home GOCACHE=$T/gocache GOPROXY=off GOTOOLCHAIN=local PPROF_TMPDIR=$T/pprof
mkdir -p "$HOME" "$PPROF_TMPDIR"

# The source line of each deep_* frame: where it calls the next (the
# innermost's malloc is on that line too).
line_a=$(grep -n '? deep_b(n - 1)' "$SRC" | cut -d: -f1)
line_b=$(grep -n '? deep_c(n - 1)' "$SRC" | cut -d: -f1)
line_c=$(grep -n '? deep_a(n - 1)' "$SRC" | cut -d: -f1)

# The names, innermost first, of KEPT frames of prog_deep N's 1234-byte
# block, then NAMEs: frame i is call N - i, deep_a, _b, _c in turn.
want() { # N KEPT NAME...
	local n=$1 kept=$2 f=(deep_a deep_b deep_c); shift 2
	for ((i = 0; i < kept; i++)); do echo "${f[(n - 1 - i) % 3]}"; done
	[ $# -eq 0 ] || printf '%s\n' "$@"
}

# The 1234-byte block's record (live, or its whole-run stack record) as
# the filter writes it, the tracer's naming its stack by node= (its ~b#
# after it, one for each 31 frames): "~b#s frames cut=WHY|-".
blines() { # LOG live|stack
	"$HD" "$1" | awk -v t="$2" '
		BEGIN { re = (t == "live" ? " size=1234" : " bytes=1234 .*") " node=([0-9]+|\\^) " }
		$2 == t && $0 ~ re {
			cut = "-"; if (match($0, / cut=[a-z,]+ /)) cut = substr($0, RSTART + 1, RLENGTH - 2)
			sub(/.* node=([0-9]+|\^) /, ""); print gsub(/~b#/, "") " " gsub(/0x/, "") " " cut; n++ }
		END { if (n != 1) print n " records" }'
}

# A name as reports print it, bare: no +0xOFF, no symbol version.
bare() { sed -E 's/\+0x[0-9a-f]+$//; s/@.*//'; }

# The 1234-byte block's frames in each output, innermost first: names, or
# "name file:line" (the file's last component; a frame without one, its
# name alone) for -s and pprof.
frames_s() { # LOG
	"$HD" -s "$1" | awk '/^heapsnoop: live .*~b#size: 1234,/ { on = 1; next }
		on && /^    #/ { n = $3; sub(/\+0x[0-9a-f]+$/, "", n); sub(/@.*/, "", n)
			f = $5; sub(/.*\//, "", f); print n (f != "" ? " " f : ""); next }
		on { exit }'
}
frames_report() { # LOG
	"$HD" --report --full-stacks "$1" | awk '/^1.2 KiB .* from pid [0-9]*/ { on = 1; next }
		on && /^    #/ { print $3; next } on { exit }' | bare
}
frames_summary() { # HEAPSNOOP_STDERR
	awk '/^    1.2 KiB in 1 allocations from pid [0-9]*/ { on = 1; next }
		on && /^        #/ { print $3; next } on { exit }' "$1" | bare
}
frames_folded() { # LOG
	"$HD" --folded "$1" | sed -n 's/ 1234$//p' | tr ';' '\n' | tac
}
frames_json() { # LOG
	"$HD" --json "$1" | python3 -c 'import json, sys
d = json.load(sys.stdin)
live = [s for s in d["live"] if s["live_bytes"] == 1234]
run = [s for s in d["stacks"] if s["live_bytes"] == 1234]
# The tracer writes `stack` records too: the whole run has the same frames.
if run and [f["addr"] for f in run[0]["frames"]] != [f["addr"] for f in live[0]["frames"]]:
	sys.exit("the whole-run stack and the live one differ")
for s in live:
	print("\n".join(f["function"] for f in s["frames"]))' | bare
}
frames_speedscope() { # LOG
	"$HD" --speedscope "$1.ss" "$1" && python3 - "$1.ss" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
names = [f["name"] for f in d["shared"]["frames"]]
p = d["profiles"][0]
for s, w in zip(p["samples"], p["weights"]):
	if w == 1234:
		print("\n".join(names[i] for i in reversed(s)))
EOF
}
frames_pprof() { # LOG
	"$HD" --pprof "$1.pb.gz" "$1" &&
	go tool pprof -traces -lines "$1.pb.gz" 2> "$1.pprof.err" | awk '
		function frame(n, f) { sub(/.*\//, "", f); print n (f != "" ? " " f : "") }
		/^-+\+-/ { if (on) exit; next }
		$1 == "1.21kB" { on = 1; frame($2, $3); next }
		on { frame($1, $2) }'
}

# A run's exit status checked; its standard error shown if it failed.
traced() { # LABEL STATUS ERR
	check "$1: traced (exit 0)" test "$2" -eq 0
	[ "$2" -eq 0 ] || sed 's/^/    /' "$3" | tail -12
}

# Every output of LOG (and heapsnoop's summary ERR) against the names WANT
# (a file, innermost first); -s and pprof against their source lines too.
# JSON: the live set, and the whole run's `stack` records where there are.
expect_frames() { # LABEL LOG ERR WANT [OUTPUTS]
	local label=$1 log=$2 err=$3 want=$4 outputs=${5:-report folded json speedscope} o lines
	lines=$(sed "s/^deep_a\$/deep_a prog_deep.c:$line_a/; s/^deep_b\$/deep_b prog_deep.c:$line_b/;
		s/^deep_c\$/deep_c prog_deep.c:$line_c/" "$want")
	expect_eq "$label: -s, $(wc -l < "$want") frames named in order, deep_* at their lines" \
		"$(frames_s "$log" | sed -E 's/^(main|__libc_start[a-z_]*|_start) .*/\1/' | md5sum)" \
		"$(echo "$lines" | md5sum)"
	# The kernel matrix's guest root has no Go: the host's run reads pprof.
	if command -v go > /dev/null; then
		expect_eq "$label: go tool pprof -traces -lines, the same frames and lines" \
			"$(frames_pprof "$log" | sed -E 's/^(main|__libc_start[a-z_]*|_start) .*/\1/' | md5sum)" \
			"$(echo "$lines" | md5sum)"
	else
		echo "skip $label: go tool pprof: no go here"
	fi
	for o in $outputs; do
		expect_eq "$label: --$o, the same frames in order" \
			"$("frames_$o" "$log" | md5sum)" "$(md5sum < "$want")"
	done
	if [ -n "$err" ]; then
		expect_eq "$label: heapsnoop's -s summary, the same frames in order" \
			"$(frames_summary "$err" | md5sum)" "$(md5sum < "$want")"
	fi
}

# --unwind dwarf (the default): deep 60, 64 frames, whole.
"$HS" -s --full-stacks -o rec60 -- "$PD" 60 > /dev/null 2> err60
traced "dwarf, deep 60" $? err60
expect_eq "dwarf, deep 60: the live record's node holds 64 frames (three ~b# as tokens), no cut=" \
	"$(blines rec60 live)" "3 64 -"
expect_eq "dwarf, deep 60: the stack record too" "$(blines rec60 stack)" "3 64 -"
expect_eq "dwarf, deep 60: no record is cut" "$(grep -c ' cut=' rec60)" 0
want 60 60 main __libc_start_call_main __libc_start_main _start > want60
expect_frames "dwarf, deep 60" rec60 err60 want60
check "dwarf, deep 60: the accounting counts no truncated stack" \
	bash -c "grep -q '^heapsnoop: no events lost' err60 && ! grep -q 'had a truncated stack' err60"
check "dwarf, deep 60: the shallow block beside it is whole" \
	bash -c "'$HD' --folded rec60 | grep -qx '_start;__libc_start_main;__libc_start_call_main;main 4321'"

# --unwind fp: BPF's walk, deep 60: 62 frames, whole. Where the kernel's
# verifier refuses the walk of 128 frames (Linux 5.10's and 6.1's; before
# 6.2 it is not asked), heapsnoop says so and walks 31: the innermost 31,
# in order, cut=depth.
"$HS" -s --full-stacks --unwind fp -o recfp60 -- "$PD" 60 > /dev/null 2> errfp60
traced "fp, deep 60" $? errfp60
want 60 60 main __libc_start_call_main > wantfp60
REFUSED="^heapsnoop: this kernel's BPF verifier (Linux [^)]*) \(refused\|is too old for\) --unwind fp's walk of 128 frames: it walks 31,"
if grep -q "$REFUSED" errfp60; then
	echo "note this kernel's verifier refused the walk of 128 frames: --unwind fp keeps 31"
	expect_eq "fp, deep 60, 31-frame walk: 31 frames, cut=depth" \
		"$(blines recfp60 live)" "1 31 cut=depth"
	{ echo '[stack_truncated]'; want 60 31 | tac; } > wantfp60.31
	expect_eq "fp, deep 60, 31-frame walk: --folded, the innermost 31 in order" \
		"$(frames_folded recfp60 | tac | md5sum)" "$(md5sum < wantfp60.31)"
else
	expect_eq "fp, deep 60: the live record's node holds 62 frames (two full ~b#), no cut=" \
		"$(blines recfp60 live)" "2 62 -"
	expect_eq "fp, deep 60: no record is cut" "$(grep -c ' cut=' recfp60)" 0
	expect_frames "fp, deep 60" recfp60 errfp60 wantfp60
fi

# The collector (heapsnoop --preload): its CFI walk, then its frame-pointer
# one, each as the tracer's mode of the same name sees the stack.
"$HS" --preload -o pl60 -- "$PD" 60 > /dev/null 2> plerr60
check "--preload, deep 60: collected (exit 0)" test $? -eq 0
expect_eq "--preload, deep 60: depth=64 in three tokens; no record cut" \
	"$(grep -c '^heapsnoop: live pid=[0-9]* ptr=0x[0-9a-f]* depth=64 ~m#[^ ]* ~m#[^ ]* ~m#[^ ]*$' pl60) $(grep -c ' cut=' pl60)" "1 0"
expect_frames "--preload, deep 60" pl60 "" want60 "report folded json speedscope"
"$HS" --preload --unwind fp -o plfp60 -- "$PD" 60 > /dev/null 2> plerrfp60
check "--preload --unwind fp, deep 60: collected (exit 0)" test $? -eq 0
expect_eq "--preload --unwind fp, deep 60: depth=62 in two tokens; no record cut" \
	"$(grep -c '^heapsnoop: live pid=[0-9]* ptr=0x[0-9a-f]* depth=62 ~m#[^ ]* ~m#[^ ]*$' plfp60) $(grep -c ' cut=' plfp60)" "1 0"
expect_frames "--preload --unwind fp, deep 60" plfp60 "" wantfp60 "report folded json speedscope"

# Deeper than a node's run of 1024 frames (dwarf): deep 1100, 1104 frames,
# whole, its record's node the second of a chain (the first full).
"$HS" -s --full-stacks -q -o rec1100 -- "$PD" 1100 > /dev/null 2> err1100
traced "dwarf, deep 1100" $? err1100
expect_eq "dwarf, deep 1100: all 1104 frames (36 ~b# as tokens), no cut=" \
	"$(blines rec1100 live)" "36 1104 -"
expect_eq "dwarf, deep 1100: as many node records as tree's nodes=, none over 1024 frames, the longest over 1000" \
	"$(awk -F, '/^heapsnoop: tree pid=/ { sub(/.*nodes=/, ""); want = $1 }
		/^heapsnoop: node pid=/ { n++; if (NF > max) max = NF }
		END { print n - want, (max <= 1024 && max > 1000) ? "yes" : max }' rec1100)" "0 yes"
want 1100 1100 main __libc_start_call_main __libc_start_main _start > want1100
expect_frames "dwarf, deep 1100" rec1100 err1100 want1100 "report folded"

# Past a record's 16384 frames (dwarf, the default 1 MiB copy): the
# innermost 16384, in order, said.
"$HS" -q -o rec16400 -- "$PD" 16400 > /dev/null 2> err16400
traced "dwarf, deep 16400" $? err16400
expect_eq "dwarf, deep 16400: its 16384 innermost frames, cut=depth" \
	"$(blines rec16400 live)" "529 16384 cut=depth"
want 16400 16384 '[stack_truncated]' > want16400
expect_eq "dwarf, deep 16400: --folded, those frames in order under [stack_truncated]" \
	"$(frames_folded rec16400 | md5sum)" "$(md5sum < want16400)"

# The collector keeps 1024 (its walk's buffer is on the allocating
# thread's stack): deep 1100 under --preload, the innermost 1024, said.
"$HS" --preload -o pl1100 -- "$PD" 1100 > /dev/null 2> plerr1100
check "--preload, deep 1100: collected (exit 0)" test $? -eq 0
expect_eq "--preload, deep 1100: depth=1024 cut=depth" \
	"$(grep -c '^heapsnoop: live pid=[0-9]* ptr=0x[0-9a-f]* cut=depth depth=1024 ' pl1100)" 1
want 1100 1024 '[stack_truncated]' > wantpl1100
expect_eq "--preload, deep 1100: --folded, those frames in order under [stack_truncated]" \
	"$(frames_folded pl1100 | md5sum)" "$(md5sum < wantpl1100)"

# Past BPF's walk (fp, 128 frames, or the 31 of a verifier that refuses
# 128): the innermost 128 (31), in order, said.
"$HS" -q --unwind fp -o recfp200 -- "$PD" 200 > /dev/null 2> errfp200
traced "fp, deep 200" $? errfp200
walk=128 tokens=5
grep -q "$REFUSED" errfp200 && walk=31 tokens=1
expect_eq "fp, deep 200: the walk's $walk frames, cut=depth" \
	"$(blines recfp200 live)" "$tokens $walk cut=depth"
want 200 $walk '[stack_truncated]' > wantfp200
expect_eq "fp, deep 200: --folded, those frames in order under [stack_truncated]" \
	"$(frames_folded recfp200 | md5sum)" "$(md5sum < wantfp200)"

[ $fails -eq 0 ]
