# lines_dump.py - every code object of some standard modules, compiled by
# the interpreter that runs this, with CPython's own answer for the line
# of each of its code units (co_lines()): what test_pylines.c checks
# heapsnoop's decoder of the location table against. Runs on 3.11 and
# later (co_qualname, the 3.11 location table). One code object a line:
#   code FIRSTLINE HEXTABLE NAME
#   lines START END LINE...   (code units [START, END) have LINE; -1: none)
import sys, types, importlib.util

MODULES = sys.argv[1:] or ["json.decoder", "email.parser", "http.client", "argparse",
                           "typing", "asyncio.base_events", "unittest.case", "pathlib",
                           "collections", "re._compiler", "inspect", "dataclasses",
                           "decimal", "tarfile", "pydoc"]

def dump(co):
    print("code", co.co_firstlineno, co.co_linetable.hex() or "-", co.co_qualname)
    out = []
    for start, end, line in co.co_lines():
        out.append("%d %d %d" % (start // 2, end // 2, -1 if line is None else line))
    print("lines", " ".join(out))
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            dump(c)

for name in MODULES:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        continue
    with open(spec.origin, encoding="utf-8") as f:
        dump(compile(f.read(), spec.origin, "exec"))
