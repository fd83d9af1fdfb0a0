#!/bin/bash
# test_hdhtml.sh - heapdecode --html (issue 32) on a log made here without
# tracing (heapdecode --encode): Python frames over a native one (capstone's
# cs_open), a hostile function name and file, samples and the whole run's
# records. The page is written, holds --report's headline and the holders,
# names no URL, escapes every text of the log, refuses to write over a log;
# without samples it says how to get them. Then Chromium renders it: a
# screenshot read back (its size, the flame graph's warm frames, the
# timeline's red peak) and the DOM after the scripts ran (the toggle
# applied from #kinds=, the flame graph as wide as the window). About 2 s.
# Usage: test_hdhtml.sh HEAPDECODE
. "$(dirname "$0")/lib.sh"

capstone_cs_open
BASE=0x7f0000000000
NAT=$(printf '0x%x' $((BASE + 0x$V + 1)))	# cs_open+0x1 (a return address)
P1=0x4000000000000001 P2=0x4000000000000002 P3=0x4000000000000003	# Python frames
enc() { echo "~b#size: $1, ${*:2}" | "$HD" --encode; }
HOSTILE='<script>alert(1)</script>'
{
	echo "heapsnoop: sample pid=5 time=1.100 live=1 bytes=4096"
	echo "heapsnoop: sample pid=5 time=1.200 live=2 bytes=69632"
	echo "heapsnoop: sample pid=5 time=1.300 live=2 bytes=69632"
	echo "heapsnoop: dump reason=exit time=1.500 live=2 bytes=69632 stacks=2"
	echo "heapsnoop: map pid=5 start=$BASE end=0x7f0001000000 off=0x0 buildid=- path=$LIB"
	echo "heapsnoop: frame pid=5 addr=$P1 kind=python line=12 file=/srv/app/server.py" \
		"function=handle_upload"
	echo "heapsnoop: frame pid=5 addr=$P2 kind=python line=3 file=/srv/app/main.py function=main"
	echo "heapsnoop: frame pid=5 addr=$P3 kind=python line=7 file=/srv/</td><b>x</b>.py" \
		"function=$HOSTILE"
	echo "heapsnoop: live pid=5 ptr=0x10 $(enc 65536 $P1 $NAT $P2)"
	echo "heapsnoop: live pid=5 ptr=0x20 $(enc 4096 $P3 $NAT)"
	echo "heapsnoop: stack pid=5 allocs=1 allocated=65536 frees=0 temporary=0 live=1" \
		"bytes=65536 peak=65536 peak_count=1 $(enc 0 $P1 $NAT $P2)"
	echo "heapsnoop: stack pid=5 allocs=1 allocated=4096 frees=0 temporary=0 live=1" \
		"bytes=4096 peak=4096 peak_count=1 $(enc 0 $P3 $NAT)"
	echo "heapsnoop: proc pid=5 peak=69632 peak_count=2 peak_time=1.200 allocs=2" \
		"allocated=69632 frees=0 temporary=0 live=2 bytes=69632 comm=python3"
	echo "heapsnoop: end-dump live=2"
} > "$T/h.log"

# 1. The page: written, the headline and the holders, no URL, all escaped.
"$HD" --html "$T/h.html" "$T/h.log" 2> "$T/err"
check "--html: exit 0, nothing said, the file written mode 0600" \
	bash -c "test $? -eq 0 && test ! -s '$T/err' && test \"\$(stat -c %a '$T/h.html')\" = 600"
"$HD" --report "$T/h.log" | head -1 > "$T/headline"
check "the headline is --report's first line, naming handle_upload and its Python caller" \
	grep -q '^biggest holder: 64.0 KiB in 1 block, handle_upload (server.py:12) <- main (main.py:3)$' "$T/headline"
check "the page's headline is that line (HTML-unescaped)" python3 -c "
import html, re, sys
p = open('$T/h.html').read()
m = re.search(r'<p id=\"headline\">(.*?)</p>', p)
assert m and html.unescape(m.group(1)) == open('$T/headline').read().rstrip('\n'), m
"
check "the holders' table: handle_upload 64.0 KiB, its caller main beneath" bash -c "
	grep -q '<tr class=\"holder\"><td class=\"f\">handle_upload (server.py:12)</td><td class=\"f\"></td><td class=\"n\">64.0 KiB</td><td class=\"n\">94.1%</td><td class=\"n\">1</td></tr>' '$T/h.html' &&
	grep -q '<tr class=\"caller\"><td class=\"f\">&larr; main (main.py:3)</td><td class=\"f\"></td><td class=\"n\">64.0 KiB</td>' '$T/h.html'"
check "no http:// or https:// outside comments, no src= or href=" python3 -c "
import re
p = re.sub(r'<!--.*?-->', '', open('$T/h.html').read(), flags=re.S)
assert not re.search(r'https?://|\bsrc=|\bhref=|@import|url\(', p, re.I), 'a reference'
"
check "the hostile name escaped where it appears (table, flame graph, timeline), never raw" bash -c "
	test \$(grep -c '&lt;script&gt;alert(1)&lt;/script&gt;' '$T/h.html') -ge 3 &&
	! grep -qF '$HOSTILE' '$T/h.html' && ! grep -qF '<b>x</b>' '$T/h.html'"
check "the flame graph and the timeline inline, with the peak marked" bash -c "
	grep -q '^<svg [^>]*data-width=\"1200\"' '$T/h.html' && grep -q 'class=\"f f-native\"[^>]*data-n=\"cs_open\"' '$T/h.html' &&
	grep -q '<circle [^>]*class=\"peak\"><title>peak, ' '$T/h.html' && ! grep -q '<?xml' '$T/h.html'"

# 2. No samples: said how to get them; --width fixes the flame graph; a log is never written over.
grep -v '^heapsnoop: sample ' "$T/h.log" > "$T/nos.log"
"$HD" --html "$T/nos.html" --width 600 "$T/nos.log"
check "no samples: exit 0, no timeline, --sample-ms said" bash -c "test $? -eq 0 &&
	grep -q 'no <code>sample</code> records: heapsnoop writes one every <code>--sample-ms MS</code>' '$T/nos.html' &&
	test \$(grep -c '^<svg ' '$T/nos.html') -eq 1"
check "--width 600: the flame graph 620 px, fixed" \
	grep -q '^<div id="flame" data-fixed="">$' "$T/nos.html"
cp "$T/h.log" "$T/keep.log"
"$HD" --html "$T/h.log" "$T/keep.log" > /dev/null 2> "$T/guard"
check "--html LOG (its name forgotten): refused, exit 2, the log unchanged" bash -c "test $? -eq 2 &&
	cmp -s '$T/h.log' '$T/keep.log' && grep -q 'html' '$T/guard'"

# 3. Chromium: a screenshot read back, the DOM after the scripts ran.
if ! command -v chromium > /dev/null; then
	if apt-cache policy chromium 2> /dev/null | grep -q 'Candidate: [0-9]'; then
		check "chromium is installed (scripts/install-deps.sh installs it)" false
	else
		echo "SKIP chromium: not installed and no package to install here; the page not rendered"
	fi
	[ $fails -eq 0 ]
	exit
fi
chrome() { timeout 20 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$T/chrome" --window-size=1200,900 "$@" 2> /dev/null; }
chrome --screenshot="$T/shot.png" "file://$T/h.html" > /dev/null
check "the screenshot: 1200x900, not blank, the flame graph's warm frames, the red peak" python3 -c "
import struct, zlib
b = open('$T/shot.png', 'rb').read()
assert b[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat, hdr = 8, b'', None
while pos < len(b):
    n, kind = struct.unpack('>I4s', b[pos:pos + 8])
    if kind == b'IHDR': hdr = struct.unpack('>IIBBBBB', b[pos + 8:pos + 21])
    if kind == b'IDAT': idat += b[pos + 8:pos + 8 + n]
    pos += 12 + n
w, h, depth, ctype, _, _, lace = hdr
assert (w, h) == (1200, 900), (w, h)
assert depth == 8 and ctype in (2, 6) and lace == 0, hdr
bpp = 3 if ctype == 2 else 4
raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        c = prev[i - bpp] if i >= bpp else 0
        up = prev[i]
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + up) & 255
        elif f == 3: line[i] = (line[i] + (a + up) // 2) & 255
        elif f == 4:
            p = a + up - c; pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
    rows.append(line); prev = line
px = [(r[i], r[i + 1], r[i + 2]) for r in rows for i in range(0, stride, bpp)]
ink = sum(1 for p in px if p != (255, 255, 255))
warm = sum(1 for r, g, b_ in px if r >= 205 and g < 190 and b_ < 60)
red = sum(1 for r, g, b_ in px if r >= 190 and g < 40 and b_ < 40)
assert ink > len(px) // 10, ('nearly blank', ink)
assert warm > 5000, ('no flame graph frames', warm)
assert red > 30, ('no red peak', red)
"
chrome --dump-dom "file://$T/h.html#kinds=hide-interp" > "$T/dom"
check "the DOM: the toggle, set from #kinds= by the page's script" bash -c "
	grep -q '<select id=\"kinds\">' '$T/dom' && grep -q '<option value=\"hide-interp\">' '$T/dom' &&
	grep -q '<div id=\"flame\" data-kinds=\"hide-interp\">' '$T/dom'"
check "the DOM: the flame graph refitted to the window (wider than 900, narrower than 1200)" \
	bash -c "w=\$(grep -o '<svg [^>]*data-width=\"[0-9]*\"' '$T/dom' | grep -o '[0-9]*\"\$' | tr -d '\"');
		test -n \"\$w\" && test \"\$w\" -gt 900 && test \"\$w\" -lt 1200"
check "the DOM: the frames and the peak, no script from the log" bash -c "
	test \$(grep -c '<g class=\"f[ \"]' '$T/dom') -ge 5 && grep -q 'class=\"peak\"' '$T/dom' &&
	! grep -qF '$HOSTILE' '$T/dom'"
# Frames of a kind are classed by flamegraph.c (f-python, f-native, ...)
# once it marks them; until then, the toggle must change nothing.
if grep -q '<g class="[^"]*\bf-python\b' "$T/dom"; then
	check "the toggle: Python frames hidden, native ones not" bash -c "
		! grep '<g class=\"[^\"]*\bf-python\b' '$T/dom' | grep -qv 'visibility: hidden' &&
		! grep '<g class=\"[^\"]*\bf-native\b' '$T/dom' | grep -q 'visibility: hidden'"
else
	check "the toggle: no frame classed by kind, none hidden" bash -c "! grep -q 'visibility: hidden' '$T/dom'"
fi
[ $fails -eq 0 ]
