# server.py - a Python process to attach to (heapsnoop -p), for
# tests/tracer/test_python.sh: prints "ready", then for each line of its
# standard input runs it: "chain" keeps chain_a.main()'s bytearray (its
# chain under <module>:20 here), "deep" deep.main()'s (under
# <module>:22), "exit" ends. Keep the lines.
import os
import sys
import chain_a
import deep

kept = []
print("ready %d" % len(kept), flush=True)
if True:
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "exit":
            # No finalization: what it kept is live when it exits.
            os._exit(0)
        if cmd == "chain":
            kept.append(chain_a.main())
        if cmd == "deep":
            kept.append(deep.main())
        print("did", cmd, flush=True)
