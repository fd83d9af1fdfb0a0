# million.py N - N small objects kept alive (an empty list each: 56 bytes
# with its GC header), made at one line, for tests/tracer/test_python.sh:
# <module>:18 -> make:13 -> make.<locals>.<listcomp>:13. Under
# PYTHONMALLOC=malloc each is one live malloc'ed block. Keep the lines.
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
