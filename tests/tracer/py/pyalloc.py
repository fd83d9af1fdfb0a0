# pyalloc.py - what test_python's scripts (chain_a.py, deep.py,
# interleave.py) keep their block of N bytes with: a bytearray, which is
# malloc(N + 1) under the PYTHONMALLOC=malloc heapsnoop sets; in a
# free-threaded build, whose objects come from its own mimalloc (it
# refuses PYTHONMALLOC=malloc), the C library's malloc(N + 1) called
# through ctypes from the same line: a C call, no Python frame of its own
# while it runs (N's conversion runs before it, the result's after), and
# the result has len() N as the bytearray would.
import sys

# sys.abiflags has "t" in a free-threaded build (Py_GIL_DISABLED).
if "t" not in sys.abiflags:
    alloc = bytearray
else:
    import ctypes

    _last = [0]

    class _Size:
        @classmethod
        def from_param(cls, n):
            _last[0] = n
            return ctypes.c_size_t(n + 1)

    class _Block:
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

    alloc = ctypes.CDLL(None).malloc
    alloc.argtypes = [_Size]
    alloc.restype = lambda p: _Block(_last[0])
