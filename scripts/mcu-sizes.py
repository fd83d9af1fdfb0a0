#!/usr/bin/env python3
# mcu-sizes.py - what each part of the firmware (examples/mcu, docs/MCU.md)
# takes in it, from the linker's map (build/mcu/fw.map, written by
# `make mcu`): text (code, read-only data, the EHABI tables), data and bss
# of the sections kept after --gc-sections, summed by part: the codec,
# libhsam's core and its dump (amlines.c), the firmware's own files,
# libgcc's unwinder, libgcc's other helpers, newlib. The README's table.
#   scripts/mcu-sizes.py [build/mcu/fw.map]
import re
import sys
from collections import defaultdict

path = sys.argv[1] if len(sys.argv) > 1 else "build/mcu/fw.map"
text = open(path).read()
text = text[text.index("Linker script and memory map"):]
KEPT = (".text", ".rodata", ".ARM.ex", ".data", ".bss", ".vectors")
UNWIND = ("unwind-arm.o", "pr-support.o", "libunwind.o")


def part(obj):
    m = re.search(r"\(([^)]+)\)$", obj)
    member = m.group(1) if m else obj.rsplit("/", 1)[-1]
    if "libhscodec.a" in obj:
        return "codec (codec/*.c)"
    if "libhsam.a" in obj:
        return "libhsam: " + member.replace(".o", ".c")
    if "examples/mcu/" in obj:
        return "firmware: " + member.replace(".o", ".c")
    if "libgcc.a" in obj:
        return "libgcc: EHABI unwinder" if member in UNWIND else "libgcc: other helpers"
    if "libc" in obj:
        return "newlib (string functions)"
    return "other: " + obj


sizes = defaultdict(lambda: [0, 0, 0])
pending = None
for line in text.splitlines():
    m = re.match(r"^ (\S+)\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S.*)$", line)
    if m:
        sec, size, obj = m.group(1), int(m.group(3), 16), m.group(4)
    else:
        m1 = re.match(r"^ (\S+)$", line)
        if m1:
            pending = m1.group(1)
            continue
        m2 = re.match(r"^\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S.*)$", line)
        if not (m2 and pending):
            pending = None
            continue
        sec, size, obj = pending, int(m2.group(2), 16), m2.group(3)
    pending = None
    if not sec.startswith(KEPT) or not size:
        continue
    kind = 2 if sec.startswith(".bss") else 1 if sec.startswith(".data") else 0
    sizes[part(obj)][kind] += size

print("| part | text | data | bss |")
print("|---|---:|---:|---:|")
total = [0, 0, 0]
for name in sorted(sizes):
    t, d, b = sizes[name]
    total = [total[0] + t, total[1] + d, total[2] + b]
    print(f"| {name} | {t} | {d} | {b} |")
print(f"| all | {total[0]} | {total[1]} | {total[2]} |")
