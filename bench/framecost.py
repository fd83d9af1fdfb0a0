#!/usr/bin/env python3
# framecost.py - the table bench/pyframes.sh and bench/luaframes.sh print:
# for each stack depth and mode, the best of the rounds of the cost per
# call the interpreter measured itself, its excess over the untraced run,
# alloc_exit's ns per run (the kernel's run_time_ns/run_cnt, where the
# walk runs) and the loader's CPU per record; then what the walker adds
# against the native mode at each depth.
#   framecost.py DIR ROUNDS "DEPTHS" WALKER LABEL CLOCK NOTE MODE...
# DIR holds MODE.DEPTH.ROUND.{wall,progs,time} (the scripts' runs);
# WALKER is the mode with the walker on ("python", "lua"), LABEL its frames'
# name, CLOCK what the interpreter's clock measured ("wall", "cpu"), NOTE
# how it measured a call.
import sys, os
T, rounds, depths = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
walker, label, clock, note = sys.argv[4:8]
order = sys.argv[8:]
def read(path):
	try:
		return open(path).read().split()
	except OSError:
		return []
print("  %-6s %-9s %9s %9s %12s %12s" % ("depth", "mode", clock + " ns", "+untraced", "alloc_exit ns",
      "loader ns/ev"))
for d in depths:
	best = {}
	for m in order:
		b = {}
		for r in range(1, rounds + 1):
			f = f"{T}/{m}.{d}.{r}"
			w = read(f + ".wall")
			if not w:
				continue
			v = {"wall": float(w[0])}
			progs = {}
			for line in open(f + ".progs") if os.path.exists(f + ".progs") else []:
				name, cnt, ns = line.split()
				progs[name] = (int(cnt), int(ns))
			ex = [progs[n] for n in ("alloc_exit", "alloc_exit_compat") if n in progs]
			if ex and sum(c for c, _ in ex):
				v["exit"] = sum(ns for _, ns in ex) / sum(c for c, _ in ex)
			t = read(f + ".time")[-2:]	# after "Command exited with ..." if said
			runs = sum(c for c, _ in ex) + progs.get("free_enter", (0, 0))[0]
			if t and runs:
				v["loader"] = (float(t[0]) + float(t[1])) * 1e9 / runs
			for k, x in v.items():
				b[k] = min(b.get(k, x), x)
		best[m] = b
	u = best.get("untraced", {}).get("wall")
	for m in order:
		b = best[m]
		f = lambda k, fmt: fmt % b[k] if k in b else "-"
		print("  %-6s %-9s %9s %9s %12s %12s" % (d, m, f("wall", "%.1f"),
		      "%+.1f" % (b["wall"] - u) if u and "wall" in b else "-", f("exit", "%.0f"),
		      f("loader", "%.0f")))
	n, p = best.get("native", {}), best.get(walker, {})
	if "exit" in n and "exit" in p:
		print("  %-6s walker: alloc_exit %+.0f ns (%.1f ns a %s frame), %s %+.1f ns a call"
		      % (d, p["exit"] - n["exit"], (p["exit"] - n["exit"]) / int(d), label, clock,
			 p.get("wall", 0) - n.get("wall", 0)))
print("  (%s: %s;" % (clock, note))
print("   alloc_exit: the kernel's run_time_ns/run_cnt of the program the walk runs in;")
print("   loader: heapsnoop's user+system ns per allocation and free record)")
