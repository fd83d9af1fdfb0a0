# plfork.py - a forked child's Python frames, for
# tests/collector/test_preload_python.sh: the child keeps 3 bytearrays of
# 33333 bytes (malloc(33334)) under child_leaf:15 <- child_main:20 <-
# <module>:26 and _exits (its exit section); the parent, once it has
# ended, one of 22222 (malloc(22223)) under parent_leaf:31 <-
# <module>:34 (the final dump). The child's frames are read by the copy
# of the parent's collector in it, named from its own table. Keep the
# lines.
import os

keep = []


def child_leaf():
    keep.append(bytearray(33333))


def child_main():
    for _ in range(3):
        child_leaf()
    os._exit(0)


pid = os.fork()
if pid == 0:
    child_main()
os.waitpid(pid, 0)


def parent_leaf():
    keep.append(bytearray(22222))


parent_leaf()
os._exit(0)
