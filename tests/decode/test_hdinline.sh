#!/bin/bash
# test_hdinline.sh - what heapdecode names a frame (issues 32 and 34): a
# leak made in a function inlined at -O2 keeps that function in --folded
# (`main;make_rec_[i]`), the flame graph (its own hue, "(inlined)"; its
# --width) and --speedscope; a symbol's version is hidden
# (--symbol-versions shows it); -e takes a path relative to the cwd (the
# user's, not a log's);
# a module not found is said once per module on standard error and its
# frames are module+0xOFFSET. Programs built here with cc; about 1 s.
# Usage: test_hdinline.sh HEAPDECODE
. "$(dirname "$0")/lib.sh"

# A leak of 48 bytes in make_rec, which -O2 inlines into main.
cat > "$T/leak.c" <<'C'
#include <stdlib.h>
void *volatile keep;
static void *make_rec(int n) { return malloc((size_t)n * 4); }
int main(int argc, char **argv) { (void)argv; keep = make_rec(argc + 11); return 0; }
C
cc -O2 -g -fno-omit-frame-pointer -o "$T/leak" "$T/leak.c"
# The return address of main's call to malloc: the instruction after it.
RET=$(objdump -d --no-show-raw-insn "$T/leak" | awk '
	/^[0-9a-f]+ <main>:/ { m = 1; next } m && /^$/ { m = 0 }
	m && call { sub(":", "", $1); print $1; exit }
	m && /call.*<malloc@plt>/ { call = 1 }')
check "the -O2 build calls malloc from main (make_rec inlined)" test -n "$RET"
check "the -O2 build has no make_rec of its own" bash -c "! nm '$T/leak' | grep -q make_rec"
BASE=0x555555554000
ADDR=$(printf '0x%x' $((BASE + 0x$RET)))
dump() { # MAP-LINES TOKEN...: a dump of one live block per token, pid 7
	echo "heapsnoop: dump reason=exit time=1.000 live=$(($# - 1)) bytes=48 stacks=1"
	printf '%s\n' "$1"
	shift
	for t in "$@"; do echo "heapsnoop: live pid=7 ptr=0x10 $t"; done
	echo "heapsnoop: end-dump live=$#"
}
TOK=$(echo "~b#size: 48, $ADDR" | "$HD" --encode)
dump "heapsnoop: map pid=7 start=$BASE end=0x555555560000 off=0x0 buildid=- path=$T/leak" \
	"$TOK" > "$T/inl.log"

# 1. --folded, the flame graph, --speedscope: the inlined function is there.
"$HD" --folded "$T/inl.log" > "$T/folded" 2> "$T/folded.err"
check "--folded: exit 0, nothing said" bash -c "test $? -eq 0 && test ! -s '$T/folded.err'"
check "--folded: main;make_rec_[i] holds the 48 bytes" grep -qx 'main;make_rec_\[i\] 48' "$T/folded"
"$HD" --flamegraph "$T/fg.svg" "$T/inl.log"
check "--flamegraph: make_rec drawn, said inlined, under main" bash -c "
	grep -q 'data-d=\"0\" [^>]* data-n=\"main\"' '$T/fg.svg' &&
	grep -q 'data-d=\"1\" [^>]* data-n=\"make_rec\"><title>make_rec (inlined) (48 bytes' '$T/fg.svg'"
check "--flamegraph: the inlined frame aqua (r < 110, g and b >= 165), main warm" bash -c "
	grep 'data-n=\"make_rec\"' '$T/fg.svg' | grep -q 'fill=\"rgb(\([0-9]\|[0-9][0-9]\|10[0-9]\),1[6-9][0-9],\(1[6-9][0-9]\|2[0-9][0-9]\))\"' &&
	grep 'data-n=\"main\"' '$T/fg.svg' | grep -q 'fill=\"rgb(2[0-9][0-9],'"
"$HD" --flamegraph "$T/fg600.svg" --width 600 "$T/inl.log"
check "--width 600: the SVG 620 px wide (10 each side), the whole stack's frames 600" bash -c "
	grep -q '^<svg [^>]*width=\"620\" [^>]*data-width=\"600\"' '$T/fg600.svg' &&
	grep -q 'width=\"1220\"' '$T/fg.svg' &&
	test \$(grep -c '<rect x=\"10.0\" y=\"[0-9]*\" width=\"599.5\"' '$T/fg600.svg') -eq 2"
"$HD" --flamegraph "$T/fg10.svg" --width 10 "$T/inl.log" 2> "$T/w.err"
check "--width 10: exit 2, said, nothing written" bash -c "
	test $? -eq 2 && grep -q -- '--width takes' '$T/w.err' && test ! -s '$T/fg10.svg'"
"$HD" --speedscope "$T/ss.json" "$T/inl.log"
check "--speedscope: make_rec a frame of its own in leak.c, after main" python3 -c "
import json, sys
d = json.load(open('$T/ss.json'))
fr = d['shared']['frames']
names = [fr[i]['name'] for i in d['profiles'][0]['samples'][0]]
mk = [f for f in fr if f['name'] == 'make_rec']
sys.exit(not (names == ['main', 'make_rec'] and mk and mk[0]['file'].endswith('leak.c')))"
"$HD" --report "$T/inl.log" > "$T/report"
check "--report: make_rec (inlined) before main" bash -c "
	grep -q '^    #0  $ADDR make_rec (inlined) .*leak.c:3$' '$T/report' &&
	grep -q '^    #0  $ADDR main+0x[0-9a-f]* (leak) .*leak.c:4$' '$T/report'"

# 2. -e FILE relative to the cwd (addr2line's habit): the user's path.
echo "~b#size: 48, 0x$RET" | "$HD" --encode > "$T/elf.log"
(cd "$T" && "$HD" -e leak --folded elf.log > elf.folded 2> elf.err)
check "-e leak (relative): exit 0, nothing said" bash -c "test $? -eq 0 && test ! -s '$T/elf.err'"
check "-e leak (relative): frames named" grep -qx 'main;make_rec_\[i\] 48' "$T/elf.folded"
(cd "$T" && "$HD" -e ./leak -s elf.log > elf.s)
check "-e ./leak -s: the frame and its inlined function" bash -c "
	grep -q '^    #0  0x$RET make_rec (inlined)' '$T/elf.s' && grep -q ' main+0x' '$T/elf.s'"
(cd "$T" && "$HD" -e nosuch --folded elf.log > /dev/null 2> nosuch.err)
check "-e nosuch: exit 2, said" bash -c "test $? -eq 2 && grep -q '^heapdecode: -e nosuch: No such file' '$T/nosuch.err'"
# -e a file that is not the program: nothing named, said, exit 3 (issue 34).
cp "$T/leak" "$T/other" && strip "$T/other"
(cd "$T" && "$HD" -e other --folded elf.log > other.folded 2> other.err)
check "-e other (stripped, not the addresses' program): exit 3" test $? -eq 3
check "-e other: the frame as module+offset, and none named said" bash -c "
	grep -qx '\[other+0x$RET\] 48' '$T/other.folded' &&
	grep -qx 'heapdecode: no frame could be named: none of 1 lookups in -e other found a function (is it the program the addresses are from, with its symbols?)' '$T/other.err'"

# 3. A symbol's version: hidden everywhere, shown when asked.
cat > "$T/v.c" <<'C'
#include <stdlib.h>
void *volatile keep;
__attribute__((noinline)) void vfun_impl(int n) { keep = malloc((size_t)n); }
__asm__(".symver vfun_impl, vfun@@VER_1");
C
echo 'VER_1 { global: vfun; local: *; };' > "$T/v.map"
cc -O1 -g -shared -fPIC -Wl,--version-script="$T/v.map" -o "$T/libv.so" "$T/v.c"
VRET=$(objdump -d --no-show-raw-insn "$T/libv.so" | awk '
	/^[0-9a-f]+ <vfun@@VER_1>:/ { m = 1; next } m && /^$/ { m = 0 }
	m && call { sub(":", "", $1); print $1; exit }
	m && /call.*<malloc@plt>/ { call = 1 }')
check "libv.so's symbol table names vfun@@VER_1" test -n "$VRET"
VTOK=$(printf '~b#size: 48, 0x%x\n' $((0x7f0000000000 + 0x$VRET)) | "$HD" --encode)
dump "heapsnoop: map pid=7 start=0x7f0000000000 end=0x7f0000010000 off=0x0 buildid=- path=$T/libv.so" \
	"$VTOK" > "$T/v.log"
check "--report, -s, --folded: vfun, no version" bash -c "
	'$HD' --report '$T/v.log' | grep -q '^    #0  0x[0-9a-f]* vfun+0x[0-9a-f]* (libv.so)' &&
	'$HD' -s '$T/v.log' | grep -q '^    #0  0x[0-9a-f]* vfun+0x' &&
	'$HD' --folded '$T/v.log' | grep -qx 'vfun 48' &&
	! '$HD' --report '$T/v.log' | grep -q '@'"
check "--symbol-versions: vfun@@VER_1" bash -c "
	'$HD' --report --symbol-versions '$T/v.log' | grep -q ' vfun@@VER_1+0x'"

# 4. Modules not found (a log from another machine): once each, module+offset.
BID=0123456789abcdef0123456789abcdef01234567
T1=$(echo '~b#size: 16, 0x7f0000001234 0x7f1000002001 0x7f0000001400' | "$HD" --encode)
T2=$(echo '~b#size: 32, 0x7f2000000010 0x7f0000001300 0x7f1000002002' | "$HD" --encode)
dump "heapsnoop: map pid=7 start=0x7f0000000000 end=0x7f0000010000 off=0x0 buildid=$BID path=/nx/lib/libfar.so
heapsnoop: map pid=7 start=0x7f1000000000 end=0x7f1000010000 off=0x1000 buildid=- path=/nx/bin/farprog
heapsnoop: map pid=7 start=0x7f2000000000 end=0x7f2000010000 off=0x0 buildid=- path=[anon]" \
	"$T1" "$T2" > "$T/far.log"
"$HD" --report "$T/far.log" > "$T/far.r" 2> "$T/far.err"
check "not found: no frame named: exit 3" test $? -eq 3
check "not found: one stderr line per module, two in all ([anon] is no file), then that none was named" \
	test "$(grep -c '^heapdecode: module ' "$T/far.err") $(grep -c '^heapdecode: no frame could be named: none of [0-9]* lookups in the modules the log maps' "$T/far.err") $(wc -l < "$T/far.err")" = "2 1 3"
check "not found: libfar.so's line, its build ID, a frame, what to try" bash -c "
	grep -c 'module /nx/lib/libfar.so (build ID $BID) not found: .* e\\.g\\. libfar\\.so+0x1[234]..;' '$T/far.err' | grep -qx 1 &&
	grep 'libfar' '$T/far.err' | grep -q -- '--sysroot DIR.*--debug-dir DIR, DEBUGINFOD_URLS.*-dbgsym'"
check "not found: farprog's line, no build ID, the offset in its file" \
	grep -q 'module /nx/bin/farprog not found: .* e\.g\. farprog+0x300[12];' "$T/far.err"
check "not found: frames as module+0xOFFSET" bash -c "
	grep -q '^    #0  0x7f0000001234 libfar.so+0x1234 \\[module file not found\\]$' '$T/far.r' &&
	grep -q '^    #1  0x7f1000002001 farprog+0x3001 \\[module file not found\\]$' '$T/far.r'"
check "not found: the headline names frames by their offset in their file too" \
	grep -qF "biggest holder: 32 bytes in 1 block, [[anon]+0x10] <- [libfar.so+0x1300]" "$T/far.r"
"$HD" --folded "$T/far.log" > "$T/far.f" 2> "$T/far.ferr"
check "not found: --folded names module+offset, said once per module too" bash -c "
	grep -qx '\\[libfar.so+0x1400\\];\\[farprog+0x3001\\];\\[libfar.so+0x1234\\] 16' '$T/far.f' &&
	test \$(grep -c '^heapdecode: module ' '$T/far.ferr') -eq 2"

exit $((fails > 0))
