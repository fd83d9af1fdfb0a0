# chain_a.py - a known chain of Python calls across two files (with
# chain_b.py), for tests/tracer/test_python.sh: <module>:29 -> main:23 ->
# f1:11 -> (chain_b) f2:7 -> f3:15 -> (chain_b) f4:11 -> f5:19, which keeps
# a bytearray of 777777 bytes (malloc(777778)). The line numbers are the
# test's: keep them.
import sys
import chain_b


def f1():
    return chain_b.f2()


def f3():
    return chain_b.f4()


def f5():
    return bytearray(777777)


def main():
    keep = f1()
    sys.stdout.write("made %d\n" % len(keep))
    return keep


if __name__ == "__main__":
    kept = main()
