#!/usr/bin/env python3
# check-includes.py - no include circle between the product's folders
# (docs/DESIGN.md, the map: each folder uses only the ones before it).
# A folder A uses folder B when a file of A includes a file of B; a circle
# is a set of folders each reaching the others that way (collector <->
# collector/livetable and tracer <-> tracer/preload were the last two,
# issue 33). Folders, not files: two files that include each other are a
# circle of one folder and the compiler's to refuse.
#
# What is read: the C sources and headers (.c .h) tracked under bpf/ user/
# codec/ include/. An `#include "NAME"` is resolved as the compiler does
# for that file's program (scripts/mk/config.mk, collector.mk): the
# including file's own folder first, then its program's -I folders in
# their order; a name found nowhere (a generated header such as
# heapsnoop.skel.h, a system header) is no edge.
#
# Usage: check-includes.py [-v]. Prints each circle's folders and one
# include that makes each of its edges, exits 1 if any; -v prints every
# edge too. tests/check_includes.sh runs it on the tree and on made-up
# folders.
import os, re, subprocess, sys

SRC_TOP = ("bpf/", "user/", "codec/", "include/")
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# Each program's -I folders, in the order its compile lines give them.
COMMON = ["include", "user/common", "user"]
ROOTS = [
	("user/collector/", COMMON + ["user/collector", "user/collector/unwind",
		"user/collector/livetable", "user/interp/python", "user/interp/lua"]),
	("user/tracer/", COMMON + ["user/tracer"]),
	("user/interp/", COMMON + ["user/tracer", "user/collector", "user/collector/unwind",
		"user/collector/livetable", "user/interp/python", "user/interp/lua"]),
	("user/decode/", COMMON + ["user/decode"]),
	("bpf/", ["include", "bpf", "user"]),
	("", COMMON),
]


def roots_of(path):
	for prefix, roots in ROOTS:
		if path.startswith(prefix):
			return roots
	return COMMON


def resolve(path, name, files):
	for d in [os.path.dirname(path)] + roots_of(path):
		cand = os.path.normpath(os.path.join(d, name))
		if cand in files:
			return cand
	return None


def graph(files, read):
	"""{folder: {folder: (file, name)}}: one include for each edge."""
	edges = {}
	for path in sorted(files):
		if not path.endswith((".c", ".h")) or not path.startswith(SRC_TOP):
			continue
		src = read(path)
		for name in INC.findall(src):
			target = resolve(path, name, files)
			if target is None:
				continue
			a, b = os.path.dirname(path), os.path.dirname(target)
			if a != b:
				edges.setdefault(a, {}).setdefault(b, (path, name))
	return edges


def circles(edges):
	"""Tarjan's strongly connected components of more than one folder."""
	index, low, stack, on, out = {}, {}, [], set(), []
	nodes = sorted(set(edges) | {b for a in edges for b in edges[a]})

	def visit(v):
		index[v] = low[v] = len(index)
		stack.append(v)
		on.add(v)
		for w in sorted(edges.get(v, {})):
			if w not in index:
				visit(w)
				low[v] = min(low[v], low[w])
			elif w in on:
				low[v] = min(low[v], index[w])
		if low[v] == index[v]:
			comp = []
			while True:
				w = stack.pop()
				on.discard(w)
				comp.append(w)
				if w == v:
					break
			if len(comp) > 1:
				out.append(sorted(comp))

	sys.setrecursionlimit(10000)
	for v in nodes:
		if v not in index:
			visit(v)
	return out


def main():
	verbose = sys.argv[1:] == ["-v"]
	if sys.argv[1:] and not verbose:
		print("usage: check-includes.py [-v]", file=sys.stderr)
		return 2
	root = os.environ.get("HS_INCLUDES_ROOT")
	if root:
		# The made-up tree of tests/check_includes.sh: every file under it.
		files = set()
		for d, _, names in os.walk(root):
			for n in names:
				files.add(os.path.relpath(os.path.join(d, n), root))
		base = root
	else:
		ls = subprocess.run(["git", "ls-files"], capture_output=True, text=True)
		if ls.returncode != 0:
			print("check-includes.py: git ls-files failed", file=sys.stderr)
			return 2
		files = set(ls.stdout.split())
		base = "."

	def read(path):
		with open(os.path.join(base, path), encoding="utf-8", errors="replace") as f:
			return f.read()

	edges = graph(files, read)
	if verbose:
		for a in sorted(edges):
			for b in sorted(edges[a]):
				f, n = edges[a][b]
				print(f"{a} -> {b} ({f}: \"{n}\")")
	found = circles(edges)
	for comp in found:
		print("include circle: " + " <-> ".join(comp))
		for a in comp:
			for b in comp:
				if b in edges.get(a, {}):
					f, n = edges[a][b]
					print(f"  {a} -> {b}: {f} includes \"{n}\"")
	if not found:
		nfold = len(set(edges) | {b for a in edges for b in edges[a]})
		print(f"no include circle between the product's {nfold} folders")
	return 1 if found else 0


if __name__ == "__main__":
	sys.exit(main())
