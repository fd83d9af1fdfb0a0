# pyalloc.py - the workload of bench/pyframes.sh: one Python thread that
# allocates at a fixed depth of Python frames. Prints "ready", waits for a
# line on stdin, makes N objects of bytes(200) (each one malloc'ed and
# freed under PYTHONMALLOC=malloc: one allocator call and one free a turn)
# from DEPTH frames down, prints "pyalloc: N calls, DEPTH frames, X ns per
# call", then waits for another line before it exits (the tracer's
# statistics are read meanwhile).
#   usage: python3.11 pyalloc.py N DEPTH
import sys, time

n, depth = int(sys.argv[1]), int(sys.argv[2])


def work(left):
    if left > 1:
        return work(left - 1)
    t0 = time.perf_counter_ns()
    for _ in range(n):
        b = bytes(200)
    return time.perf_counter_ns() - t0


print("ready", flush=True)
sys.stdin.readline()
ns = work(depth)
print("pyalloc: %d calls, %d frames, %.1f ns per call" % (n, depth, ns / n), flush=True)
sys.stdin.readline()
