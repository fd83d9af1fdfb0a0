# threads.py - an allocation made by a thread that released the GIL (a C
# function called through ctypes), while another thread runs Python code,
# for tests/tracer/test_python.sh: nogil_alloc (threads.py:16) <- run_it
# (threads.py:21) <- Thread.run; malloc(333333), 20 times, kept.
import ctypes
import threading

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
stop = False
kept = []


def nogil_alloc():
    kept.append(libc.malloc(333333))


def run_it():
    for _ in range(20):
        nogil_alloc()


def spin():
    while not stop:
        sum(range(100))


t1 = threading.Thread(target=spin)
t1.start()
t2 = threading.Thread(target=run_it)
t2.start()
t2.join()
stop = True
t1.join()
print("kept", len(kept), flush=True)
