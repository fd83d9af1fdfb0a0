# deep.py - a stack 60 Python frames deep, for tests/tracer/test_python.sh:
# <module>:19 -> main:15 -> rec:11 (57 times) -> rec:10, which keeps a
# block of 666666 bytes (malloc(666667): pyalloc.py). Keep the line numbers.
import os
import sys
from pyalloc import alloc

def rec(n):
    if n == 0:
        return alloc(666666)
    return rec(n - 1)


def main():
    return rec(57)


if __name__ == "__main__":
    kept = main()
    print("made", len(kept), flush=True)
    os._exit(0)	# no finalization: what it kept is live when it exits
