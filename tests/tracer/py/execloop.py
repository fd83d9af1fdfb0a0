# execloop.py N - exec()s a fresh code object N times, for
# tests/tracer/test_python.sh: each made_by_exec (in "<exec K>", K = turn
# % 3) keeps a bytearray of 444444 bytes: made_by_exec (<exec K>:2) <-
# <module> (<exec K>:3) <- <module> (execloop.py:13). Each code object
# dies at once, and pymalloc-like reuse gives the next one its address:
# the frames must still name the one that ran. Keep the lines.
import os
import sys

SRC = "def made_by_exec():\n    return bytearray(444444)\nkeep.append(made_by_exec())\n"
keep = []
for i in range(int(sys.argv[1])):
    exec(compile(SRC, "<exec %d>" % (i % 3), "exec"), {"keep": keep})
print("kept", len(keep), flush=True)
os._exit(0)	# no finalization: what it kept is live when it exits
