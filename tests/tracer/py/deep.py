# deep.py - a stack 60 Python frames deep, for tests/tracer/test_python.sh:
# <module>:18 -> main:14 -> rec:10 (57 times) -> rec:9, which keeps a
# bytearray of 666666 bytes (malloc(666667)). Keep the line numbers.
import sys


def rec(n):
    if n == 0:
        return bytearray(666666)
    return rec(n - 1)


def main():
    return rec(57)


if __name__ == "__main__":
    kept = main()
    print("made", len(kept), flush=True)
