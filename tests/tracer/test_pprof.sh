#!/bin/bash
# test_pprof.sh - heapdecode --pprof and --speedscope read by the tools
# themselves, on logs the real tracer wrote: `go tool pprof` (-raw, -top,
# -diff_base, labels) and protoc --decode against the official
# profile.proto; speedscope's JSON through python3's json and rendered by
# speedscope itself in headless Chromium. The totals, function names and
# file:line of each must be heapdecode's own. Also --folded without
# symbol versions.
set -u
. "$(dirname "$0")/lib.sh"
PROTO_DIR=$(realpath "$(dirname "$0")/../../user/decode/formats/pprof/proto")
# go tool pprof: no network, a HOME and a cache of its own.
export HOME=$T/home GOCACHE=$T/gocache GOPROXY=off GOTOOLCHAIN=local PPROF_TMPDIR=$T/pprof
mkdir -p "$HOME" "$PPROF_TMPDIR"
pp() { go tool pprof "$@" 2> "$T/pprof.err"; }

# Sample values of `go tool pprof -raw` FILE summed: one line "V1 V2 ...".
raw_totals() { # FILE
	pp -raw "$1" | awk '/^Samples:/ {s = 1; getline; next} /^Locations/ {s = 0}
		s && /^ *-?[0-9]+ .*:/ { sub(/:.*/, ""); for (i = 1; i <= NF; i++) t[i] += $i; n = NF }
		END { for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? " " : ""), t[i]; print "" }'
}

# Each frame of -raw's Locations as "ADDR K NAME FILE:LINE" (K: the
# line's index in its location, inlined functions first).
raw_frames() { # FILE
	pp -raw "$1" | awk '/^Locations/ {s = 1; next} /^Mappings/ {s = 0}
		s && /^ *[0-9]+: 0x/ { a = $2; k = 0; f = ($3 ~ /^M=/) ? 4 : 3
			print a, k++, $f, $(f + 1); next }
		s && NF == 3 { print a, k++, $1, $2 }' | sort
}

# The same of heapdecode --report's frames (function names unversioned,
# no offset; ":0" where it has no file:line), named frames only.
report_frames() { # REPORT
	awk '/^ +#[0-9]+ +0x/ { a = $2
			if (a != last) { k = 0; last = a }
			if ($4 == "(inlined)") { print a, k++, $3, (NF >= 5 ? $5 : ":0"); next }
			if ($3 ~ /^\[/) { k++; next }
			n = $3; sub(/\+0x[0-9a-f]+$/, "", n); sub(/@.*/, "", n)
			print a, k++, n, ($NF ~ /^\(/ ? ":0" : $NF) }' "$1" | sort -u
}

# 1. One process, a leak made inside two inlined functions (prog_inline).
"$HS" -q -o "$T/inl" -- "$PROGS/prog_inline" 2> "$T/inl.err"
check "prog_inline traced (exit 0)" test $? -eq 0
"$HD" --pprof "$T/inl.pb.gz" "$T/inl"
check "--pprof: exit 0" test $? -eq 0
check "--pprof: gzip" bash -c "gzip -t '$T/inl.pb.gz'"
gzip -dc "$T/inl.pb.gz" | protoc --decode perftools.profiles.Profile \
	--proto_path="$PROTO_DIR" profile.proto > "$T/inl.txt" 2> "$T/protoc.err"
check "protoc --decode parses it against the official profile.proto" \
	bash -c "test ${PIPESTATUS[1]} -eq 0 && grep -q '^sample {' '$T/inl.txt'"
pp -raw "$T/inl.pb.gz" > "$T/inl.raw"
check "the mappings carry the build ID" \
	grep -q '/prog_inline [0-9a-f]\{40\} \[FN\]\[FL\]\[LN\]\[IN\]$' "$T/inl.raw"
check "the inlined functions are lines of the caller's location, innermost first" \
	bash -c "grep -A2 ' inner .*prog_inline.c:11 ' '$T/inl.raw' | tr -s ' ' |
		sed -n '2,3p' | cut -d' ' -f2,3 | paste -sd' ' |
		grep -qx 'mid tests/tracer/prog_inline.c:12 outer_fn tests/tracer/prog_inline.c:14'"
expect_eq "the program is pprof's main binary (mapping 0)" \
	"$(pp -top "$T/inl.pb.gz" | sed -n 's/^File: //p')" prog_inline
expect_eq "-top: inuse_space is 42 bytes under outer_fn" \
	"$(pp -top -cum -sample_index=inuse_space -unit=B "$T/inl.pb.gz" | awk '$NF == "outer_fn" {print $4}')" "42B"

# 2. A log with dumps at known points (prog_phases, as test_overtime.sh):
# totals, names and file:line, whole-run counts, -diff_base.
trace_phases "prog_phases traced (exit 0)" -i 3600 || exit 1
R=$T/rec
"$HD" --pprof "$T/last.pb.gz" "$R"
"$HD" --report --full-stacks "$R" > "$T/last.report"
read -r rb rc < <(sed -nE 's/^total: ([0-9.]+ [KMGT]iB \()?([0-9]+) bytes\)? in ([0-9]+) allocations.*/\2 \3/p' "$T/last.report")
"$HD" --stats --sort allocations "$R" > "$T/last.stats"
read -r sa sb < <(sed -n 's/^  \([0-9]*\) allocations, \([0-9]*\) bytes allocated.*/\1 \2/p' "$T/last.stats")
expect_eq "-raw totals: alloc_objects alloc_space inuse_objects inuse_space = --stats', --report's" \
	"$(raw_totals "$T/last.pb.gz")" "$sa $sb $rc $rb"
expect_eq "-top: inuse_space total = --report's" \
	"$(pp -top -sample_index=inuse_space -unit=B "$T/last.pb.gz" |
		sed -n 's/^Showing nodes accounting for .* of \([0-9]*\)B total$/\1/p')" "$rb"
report_frames "$T/last.report" > "$T/want.frames"
raw_frames "$T/last.pb.gz" > "$T/got.frames"
check "every named frame of --report is in the profile: address, function, file:line" \
	test "$(wc -l < "$T/want.frames")" -gt 5 -a -z "$(comm -23 "$T/want.frames" "$T/got.frames")"
comm -23 "$T/want.frames" "$T/got.frames" | head -5

"$HD" --folded "$R" > "$T/last.folded"
check "--folded, --report: no symbol versions (glibc's __libc_start_main@@GLIBC_2.34, as -s --symbol-versions shows it, folds as __libc_start_main)" \
	bash -c "'$HD' -s --symbol-versions '$R' | grep -q '__libc_start_main@@GLIBC' && grep -q '^_start;__libc_start_main;' '$T/last.folded' &&
		! grep -q @ '$T/last.folded' && grep -q ' __libc_start_main+0x' '$T/last.report' && ! grep -q '@@GLIBC' '$T/last.report'"

# speedscope's JSON of the same dump: its total in bytes, stacks root first.
"$HD" --speedscope "$T/last.json" "$R"
expect_eq "--speedscope: JSON with one profile in bytes, its total and weights = --report's" \
	"$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["profiles"]
f = d["shared"]["frames"]
leaves = sorted(set(f[s[-1]]["name"] for s in p[0]["samples"]))
print(d["$schema"], len(p), p[0]["type"], p[0]["unit"], p[0]["endValue"], sum(p[0]["weights"]),
      f[p[0]["samples"][0][0]]["name"], " ".join(leaves))' "$T/last.json")" \
	"https://www.speedscope.app/file-format-schema.json 1 sampled bytes $rb $rb _start leak_one site_m"
"$HD" --speedscope "$T/diff.json" --base-dump 4 --dump 2 "$R"
expect_eq "--speedscope --base: what grew (nothing) and what shrank (leak_one's 128 bytes)" \
	"$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = d["shared"]["frames"]
for p in d["profiles"]:
    print(p["name"].split(": ")[1], p["endValue"], sum(p["weights"]),
          ",".join(f[s[-1]]["name"] for s in p["samples"]))' "$T/diff.json" | paste -sd' ')" \
	"grew 0 0  shrank 128 128 leak_one"

# speedscope itself (its npm build, scripts/install-deps.sh) renders it in
# headless Chromium, served from 127.0.0.1 as its profileURL needs: the
# sandwich view's table names the functions and the process.
SS=${SPEEDSCOPE_DIR:-/var/cache/heapsnoop/speedscope}/node_modules/speedscope/dist/release
if [ -f "$SS/index.html" ]; then
	mkdir -p "$T/web"
	cp -r "$SS" "$T/web/ss"
	cp "$T/last.json" "$T/web/"
	coproc H { exec python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$T/web" 2>&1; }
	hpid=$H_PID
	wait_line "${H[0]}" '^Serving HTTP on 127.0.0.1 port [0-9]+' "$T/http" || exit 1
	port=$(sed -n 's/^Serving HTTP on 127.0.0.1 port \([0-9]*\).*/\1/p' "$T/http")
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$T/chrome" --virtual-time-budget=5000 --dump-dom \
		"http://127.0.0.1:$port/ss/index.html#profileURL=http://127.0.0.1:$port/last.json&view=sandwich" \
		2> /dev/null | sed 's/></>\n</g; s/<[^>]*>//g' | grep -v '^ *$' > "$T/ss.text"
	kill "$hpid"
	pid=$(awk '/^heapsnoop: live pid=/ {sub(/.*pid=/, ""); print $1; exit}' "$R")
	check "speedscope in Chromium: its sandwich view names leak_one, site_m and pid $pid" \
		bash -c "grep -qx ' *leak_one *' '$T/ss.text' && grep -qx ' *site_m *' '$T/ss.text' &&
			grep -qx ' *pid $pid *' '$T/ss.text'"
	# Each row: total, self, then the name.
	expect_eq "speedscope in Chromium: bytes, site_m's 700 its own, main's 1020 in all" \
		"$(grep -B2 -x ' *site_m *' "$T/ss.text" | sed -n 2p)/$(grep -B2 -x ' *main *' "$T/ss.text" |
			sed -n 1p)" "700 B (69%)/1020 B (100%)"
else
	echo "skip speedscope in Chromium: no speedscope build at $SS (scripts/install-deps.sh installs it with npm)"
fi

for d in 2 4; do "$HD" --pprof "$T/d$d.pb.gz" --dump $d "$R"; done
"$HD" --pprof "$T/diff.pb.gz" --base-dump 2 --dump 4 "$R"
"$HD" --report --base-dump 2 --dump 4 "$R" > "$T/diff.report"
expect_eq "--base: --report says +128 bytes" "$(tail -1 "$T/diff.report")" \
	"total: +128 bytes in +2 allocations from 1 stacks"
expect_eq "-diff_base between two profiles: +128 bytes, all under leak_one" \
	"$(pp -top -sample_index=inuse_space -unit=B -diff_base "$T/d2.pb.gz" "$T/d4.pb.gz" |
		awk '/^Showing/ {t = $5} $NF == "leak_one" {print $1, t}')" "128B 128B,"
expect_eq "--pprof --base: the same difference" \
	"$(pp -top -sample_index=inuse_space -unit=B "$T/diff.pb.gz" | awk '$NF == "leak_one" {print $1}')" \
	"128B"

# 3. Several processes in one log: prog_fork's parent and two children,
# their leaks in exit sections, from -f --leaks-at-exit and from -a
# --leaks-at-exit. Each log's profiles keep the processes apart.
several() { # LOG WHO PARENT-PID
	local f=$1 w=$2 parent=$3
	"$HD" --pprof "$f.pb.gz" "$f"
	# Each process's exact live bytes (--json's live stacks), which
	# --report --by pid rounds to KiB.
	"$HD" --json "$f" | python3 -c 'import json, sys
t = {}
for s in json.load(sys.stdin)["live"]:
    t[s["pid"]] = t.get(s["pid"], 0) + s["live_bytes"]
for p, b in t.items():
    print(p, b)' | sort > "$f.want"
	expect_eq "$w: --report --by pid: each process's bytes, as --json's in KiB" \
		"$("$HD" --report --by pid "$f" | sed -n 's/^\(.*\) ([0-9.]*%) in .*: pid \([0-9]*\)$/\2 \1/p' |
			sort | paste -sd' ')" \
		"$(while read -r p b; do echo "$p $(human_size "$b")"; done < "$f.want" | paste -sd' ')"
	pp -raw "$f.pb.gz" | awk '/^Samples:/ {s = 1; getline; next} /^Locations/ {s = 0}
		s && /^ *-?[0-9]+( +-?[0-9]+)*:/ { x = $0; sub(/:.*/, "", x); v = a[split(x, a, " ")] }
		s && /pid:\[/ { gsub(/[^0-9]/, ""); t[$0] += v }
		END { for (p in t) if (t[p]) print p, t[p] }' | sort > "$f.got"
	expect_eq "$w: three processes, apart by their pid label" "$(wc -l < "$f.got")" 3
	check "$w: each process's inuse_space = --report --by pid's" cmp -s "$f.want" "$f.got"
	"$HD" --speedscope "$f.json" "$f"
	expect_eq "$w: --speedscope: a profile per process, each with its bytes" \
		"$(python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["profiles"]:
    print(p["name"].split()[1], sum(p["weights"]))' "$f.json" | sort | paste -sd' ')" \
		"$(paste -sd' ' "$f.want")"
	expect_eq "$w: -tagfocus pid=PARENT: the parent's leaks alone" \
		"$(pp -top -sample_index=inuse_space -unit=B -tagfocus "pid=$parent" "$f.pb.gz" |
			sed -n 's/^Showing nodes accounting for \([0-9]*\)B, .*/\1/p')" \
		"$(awk -v p="$parent" '$1 == p {print $2}' "$f.want")"
	"$HD" --pprof "$f.root.pb.gz" --by pid "$f"
	expect_eq "$w: --by pid: each process a root frame of its own (-top -cum)" \
		"$(pp -top -cum -sample_index=inuse_space -unit=B "$f.root.pb.gz" |
			awk '$(NF-2) == "pid" {print $(NF-1), $4}' | sort | paste -sd' ')" \
		"$(sed 's/$/B/' "$f.want" | paste -sd' ')"
	"$HD" --pprof "$f.each.%p.pb.gz" "$f"
	expect_eq "$w: --pprof FILE.%p: one profile per process, each with its own bytes" \
		"$(for e in "$f".each.*.pb.gz; do p=${e#"$f.each."}; echo "${p%.pb.gz}" \
			"$(pp -top -sample_index=inuse_space -unit=B "$e" |
			sed -n 's/^Showing nodes accounting for \([0-9]*\)B, .*/\1/p')"; done |
			sort | paste -sd' ')" "$(paste -sd' ' "$f.want")"
}

echo go | "$HS" -q -f --leaks-at-exit -o "$T/f" -- "$PROGS/prog_fork" > "$T/f.out" 2> "$T/f.err"
check "prog_fork traced with -f (exit 0)" test $? -eq 0
several "$T/f" "-f" "$(sed -n 's/^ready //p' "$T/f.out")"

# -a: a copy of prog_fork under a name of its own (--comm sees no other
# test's processes), started once heapsnoop traces.
name=pp_fork_$$
name=${name:0:15}
cp "$PROGS/prog_fork" "$T/$name"
mkfifo "$T/a.errpipe"
"$HS" -q -a --leaks-at-exit --comm "$name" -o "$T/a" 2> "$T/a.errpipe" &
hs=$!
exec 5< "$T/a.errpipe"
wait_line 5 '^heapsnoop: tracing all processes' "$T/a.err" || exit 1
echo go | "$T/$name" > "$T/a.out"
kill -INT "$hs"
cat <&5 >> "$T/a.err"
wait "$hs"
check "prog_fork traced with -a (exit 0)" test $? -eq 0
exec 5<&-
several "$T/a" "-a" "$(sed -n 's/^ready //p' "$T/a.out")"

"$HD" --pprof - "$T/f" > "$T/stdout.pb.gz"
check "--pprof -: the same profile on standard output" cmp -s "$T/f.pb.gz" "$T/stdout.pb.gz"
finish
