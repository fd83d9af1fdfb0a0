# heapfreed.py - a script whose heap CPython frees at exit (test_python.sh):
# 300,000 strings, some 20 MiB, held until the end, never freed by the
# script; Py_FinalizeEx frees them at shutdown, so the live set at exit
# is a few KiB and the peak is seen only in the whole-run counts.
x = [str(i) * 3 for i in range(300000)]
print(len(x))
