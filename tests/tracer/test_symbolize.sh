#!/bin/bash
# test_symbolize.sh - heapdecode on heapsnoop output away from the traced
# machine's paths: moved to another directory; with the program only under
# a --sysroot; after the program was rebuilt (build-ID mismatch); -e ELF
# against addr2line; report and folded totals against the records.
set -u
. "$(dirname "$0")/lib.sh"

# A private copy of the program, traced, then moved away.
mkdir -p "$T/bin" "$T/elsewhere"
cc -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls \
	-o "$T/bin/nopie" tests/tracer/prog_nopie.c -no-pie
"$HS" -q -- "$T/bin/nopie" > "$T/rec" 2> /dev/null
check "traced" test $? -eq 0
mv "$T/rec" "$T/elsewhere/rec"
cd "$T/elsewhere" || exit 1

"$HD" --report rec > report
check "report: chain innermost first with source lines" awk '
	/^64 bytes .* in 1 allocations/ { s = 1; next }
	s == 1 && /#0 .* leaf_alloc\+0x[0-9a-f]+ \(nopie\) .*prog_nopie.c:[0-9]+$/ { s = 2; next }
	s == 2 && /#1 .* middle\+0x[0-9a-f]+ \(nopie\) .*prog_nopie.c:[0-9]+$/ { s = 3; next }
	s == 3 && /#2 .* outer\+/ { s = 4; next }
	s == 4 && /#3 .* main\+/ { ok = 1 }
	END { exit !ok }' report
expect_eq "report total = sum of record sizes" \
	"$(sed -nE 's/^total: ([0-9.]+ [KMGT]iB \()?([0-9]+) bytes.*/\2/p' report)" \
	"$("$HD" rec | sed -n 's/.*~b#size: \([0-9]*\),.*/\1/p' | awk '{t += $1} END {print t}')"
"$HD" --folded rec > folded
expect_eq "folded totals = report total" "$(awk '{t += $NF} END {print t}' folded)" \
	"$(sed -nE 's/^total: ([0-9.]+ [KMGT]iB \()?([0-9]+) bytes.*/\2/p' report)"
expect_eq "folded stack of the leak" "$(grep -c ';main;outer;middle;leaf_alloc 330$' folded)" 1

# --sysroot: the program exists only under another root.
mkdir -p "$T/root$T/bin"
mv "$T/bin/nopie" "$T/root$T/bin/nopie"
"$HD" --report rec > nosys
check "without the file: frames say the module is missing" grep -q 'module file not found' nosys
"$HD" --sysroot "$T/root" --report rec > sys
check "--sysroot: names found under the root" grep -q 'leaf_alloc+0x.* (nopie)' sys

# Rebuilt program at the same path: a different build ID, never used.
cc -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -DVARIANT \
	-o "$T/root$T/bin/nopie" "$OLDPWD/tests/tracer/prog_nopie.c" -no-pie
"$HD" --sysroot "$T/root" --report rec > mism
check "build-ID mismatch reported" grep -q 'build ID mismatch' mism
check "build-ID mismatch: no name from the wrong file" bash -c "! grep -q 'leaf_alloc' mism"

# -e: a non-PIE program's addresses are its ELF addresses, as for addr2line.
cc -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls \
	-o "$T/root$T/bin/nopie" "$OLDPWD/tests/tracer/prog_nopie.c" -no-pie
"$HD" -e "$T/root$T/bin/nopie" --report --full-stacks rec > e_report
compared=0
for a in $("$HD" rec | grep -o '~b#size: 64, .*' | head -1 | cut -d, -f2-); do
	want=$(addr2line -f -e "$T/root$T/bin/nopie" "$(printf '%#x' $((a - 1)))" | head -1)
	[ "$want" = "??" ] && continue	# a libc frame: not in this ELF
	check "-e $a is $want, as addr2line says" grep -q "$(printf '0x%x' "$a") $want+" e_report
	compared=$((compared + 1))
done
expect_eq "-e: frames compared with addr2line (leaf_alloc middle outer main _start)" "$compared" 5

# -s: records decoded in place, frames after them, inlined functions shown.
"$HS" -q -- "$PROGS/prog_inline" 2> /dev/null | "$HD" -s > inl
check "-s: the record line is decoded in place" \
	grep -q 'live pid=[0-9]* ptr=0x[0-9a-f]* size=42 node=[0-9^]* ~b#size: 42, ' inl
check "-s: inlined chain innermost first, as eu-addr2line -i" awk '
	/#0 .* inner \(inlined\) .*prog_inline.c:11$/ { s = 1; next }
	s == 1 && /#0 .* mid \(inlined\) .*prog_inline.c:12$/ { s = 2; next }
	s == 2 && /#0 .* outer_fn\+0x[0-9a-f]+ \(prog_inline\) .*prog_inline.c:14$/ { s = 3; next }
	s == 3 && /#1 .* main\+/ { ok = 1 }
	END { exit !ok }' inl

# C++: names demangled.
cat > widget.cc <<'CC'
#include <cstdlib>
namespace shop {
struct Widget {
	__attribute__((noinline)) static void *make(int n) { return std::malloc(n); }
};
}
void *volatile keep;
int main() { keep = shop::Widget::make(77); return 0; }
CC
g++ -O1 -g -fno-omit-frame-pointer -o widget widget.cc
"$HS" -q -- ./widget 2> /dev/null | "$HD" --report > cxx
check "C++ names demangled" grep -q '#0 .* shop::Widget::make(int)+0x' cxx

# --report --by: the same totals grouped by process, function, module.
"$HS" -q -- "$PROGS/prog_semantics" > sem 2> /dev/null
"$HD" --report --by function sem > byfn
check "--by function: the call site's function" grep -q '^4.9 KiB (.*) in 1 allocations: case_realloc_grow$' byfn
for by in pid function module; do
	"$HD" --report --by $by sem > by_$by
	expect_eq "--by $by: same total as by stack" "$(sed -nE 's/^total: ([0-9.]+ [KMGT]iB \()?([0-9]+) bytes.*/\2/p' by_$by)" \
		"$("$HD" --report sem | sed -nE 's/^total: ([0-9.]+ [KMGT]iB \()?([0-9]+) bytes.*/\2/p')"
done
check "--by pid: one process" grep -q 'from 1 process$' by_pid

# --flamegraph: valid XML; in headless Chromium the frames render, and the
# embedded script zooms and searches (driven by #zoom= / #search=).
"$HD" --flamegraph sem.svg sem
check "flamegraph: written" test -s sem.svg
check "flamegraph: valid XML" xmllint --noout sem.svg
check "flamegraph: frame values are live bytes" \
	grep -q 'data-v="5000" data-n="case_realloc_grow"' sem.svg
if command -v chromium > /dev/null; then
	chrome() { timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$T/chrome" --dump-dom "$1" 2> /dev/null; }
	chrome "file://$PWD/sem.svg" > dom
	check "chromium renders the frame names" grep -q '>case_realloc_grow</text>' dom
	chrome "file://$PWD/sem.svg#zoom=case_realloc_grow" > zdom
	check "click-zoom: the frame fills the width" \
		grep -q 'data-n="case_realloc_grow"[^>]*><title>[^<]*</title><rect x="10" y="[0-9]*" width="1199.5"' zdom
	check "click-zoom: other frames hidden" \
		grep -q 'data-n="case_malloc_leak"[^>]*style="display: none;"' zdom
	chrome "file://$PWD/sem.svg#search=^case_(calloc|valloc)$" > sdom
	check "search: matches highlighted and their share shown" \
		bash -c "grep -q 'id=\"matched\"[^>]*>Matched: [0-9.]*%' sdom &&
			 test \$(grep -c 'fill=\"rgb(230,0,230)\"' sdom) -eq 2"
else
	check "chromium is installed (scripts/install-deps.sh)" false
fi
finish
