# plquick.py - a Python that has ended before heapsnoop takes its hello,
# for tests/collector/test_preload_python.sh: quick_leaf:10 <- <module>:13
# keeps a bytearray of 44444 bytes (malloc(44445)), prints "done" and
# _exits. Its binary is then found by its table's module records (a
# zombie has no /proc/PID/maps). Keep the lines.
import os


def quick_leaf():
    return bytearray(44444)


kept = quick_leaf()
print("done", flush=True)
os._exit(0)
