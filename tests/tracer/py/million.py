# million.py N - N small objects kept alive (an empty list each: 56 bytes
# with its GC header), made at one line, for tests/tracer/test_python.sh:
# <module>:19 -> make:14 -> make.<locals>.<listcomp>:14. Under
# PYTHONMALLOC=malloc each is one live malloc'ed block. Keep the lines.
import os
import sys


def make(n):
    # One list per turn: range's ints die at once (the next one replaces
    # each), the lists stay.
    if n < 0:
        return None
    return [[] for _ in range(n)]


if __name__ == "__main__":
    n = int(sys.argv[1])
    keep = make(n)
    print("made", len(keep), flush=True)
    os._exit(0)	# no finalization: what it kept is live when it exits
