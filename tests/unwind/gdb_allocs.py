# gdb_allocs.py - gdb script for test_unwind_gdb.sh: run the program to
# its end and, at every malloc, calloc and realloc, write one line to the
# file named by $GDB_ALLOCS_OUT: the size asked for, then the backtrace's
# return addresses from the caller outward, as gdb unwinds them.
#
# Only real frames are written: gdb also shows a frame for each inlined
# function (same pc as the frame it is inlined into) and synthesizes
# "tail call" frames from DWARF call-site records (a function that jumped
# to another has no return address on the stack); neither is on the stack
# for any unwinder to find.
import os

import gdb

out = open(os.environ["GDB_ALLOCS_OUT"], "w")


class AllocBreakpoint(gdb.Breakpoint):
    def __init__(self, func):
        super().__init__("*" + func, internal=True)
        self.func = func

    def stop(self):
        rdi = int(gdb.parse_and_eval("$rdi")) & 0xFFFFFFFFFFFFFFFF
        rsi = int(gdb.parse_and_eval("$rsi")) & 0xFFFFFFFFFFFFFFFF
        size = {"malloc": rdi, "calloc": rdi * rsi, "realloc": rsi}[self.func]
        pcs = []
        f = gdb.newest_frame().older()
        while f is not None:
            if f.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
                pcs.append("%#x" % f.pc())
            f = f.older()
        out.write("%d %s\n" % (size, " ".join(pcs)))
        return False


# The C library is mapped once the program starts: stop there first.
gdb.execute("set breakpoint pending on")
gdb.execute("break __libc_start_main")
gdb.execute("run")
for func in ("malloc", "calloc", "realloc"):
    AllocBreakpoint(func)
gdb.execute("continue")
out.close()
