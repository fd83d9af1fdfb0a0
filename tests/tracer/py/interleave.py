# interleave.py - a chain that re-enters the eval loop from C three ways,
# for tests/tracer/test_python.sh: map() calling a function, a class call
# running __init__, next() on a generator; leaf keeps a block of
# 555555 bytes (malloc(555556): pyalloc.py): leaf:12 <- gen:17 <- K.__init__:22 <-
# g:26 <- main:30 <- <module>:34, C frames between each re-entry. Keep
# the lines.
import os
from pyalloc import alloc

def leaf():
    # One line apart from the others.
    keep = alloc(555555)
    return keep


def gen():
    yield leaf()


class K:
    def __init__(self):
        self.v = next(gen())


def g(x):
    return K()


def main():
    return list(map(g, [1]))


if __name__ == "__main__":
    kept = main()
    os._exit(0)	# no finalization: what it kept is live when it exits
