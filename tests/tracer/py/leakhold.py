# leakhold.py - a script that leaks (test_python.sh): handle() calls
# remember() 2048 times, which keeps 4 KiB each in a module-level cache
# (a bytearray and its buffer: 4097 blocks), 8 MiB in all; os._exit()
# ends it with the cache live, as a process that leaks would be found
# running. The answer the headline must give: remember, at its append
# line, called from handle.
import os

cache = []


def remember(i):
    cache.append(bytearray(4096 + i % 7))


def handle(n):
    for i in range(n):
        remember(i)


handle(2048)
os._exit(0)
