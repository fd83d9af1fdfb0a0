# plcounts.py - blocks of known sizes and counts under known chains, for
# tests/collector/test_preload_python.sh (heapsnoop --preload, so
# PYTHONMALLOC=malloc): leaf:13 <- middle:17 <- run:26 <- <module>:31
# keeps 100 bytearrays of 54321 bytes (their buffers: malloc(54322)), and
# make_bytes:21 <- run:28 <- <module>:31 50 bytes objects of 4000 (each
# one block: calloc(1, 4033)). Ends by os._exit. Keep the lines.
import os

keep = []


def leaf(n):
    keep.append(bytearray(n))


def middle(n):
    leaf(n)


def make_bytes(n):
    keep.append(bytes(n))


def run():
    for _ in range(100):
        middle(54321)
    for _ in range(50):
        make_bytes(4000)


run()
print("kept", len(keep), flush=True)
os._exit(0)	# no finalization: what it kept is live when it ends
