# chain_a.py - a known chain of Python calls across two files (with
# chain_b.py), for tests/tracer/test_python.sh: <module>:30 -> main:24 ->
# f1:12 -> (chain_b) f2:7 -> f3:16 -> (chain_b) f4:11 -> f5:20, which keeps
# a block of 777777 bytes (malloc(777778): pyalloc.py). The line numbers are
# the test's: keep them.
import os
import sys
import chain_b
from pyalloc import alloc

def f1():
    return chain_b.f2()


def f3():
    return chain_b.f4()


def f5():
    return alloc(777777)


def main():
    keep = f1()
    sys.stdout.write("made %d\n" % len(keep))
    return keep


if __name__ == "__main__":
    kept = main()
    # No finalization: what the script kept is live when it exits.
    sys.stdout.flush()
    os._exit(0)
