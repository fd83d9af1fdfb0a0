#!/usr/bin/env python3
# check-paths.py - every path of this repository that a comment or a doc
# names exists in the git tree (files from `git ls-files`, and the folders
# that hold them). Files move: after user/tracer's split into folders, 11
# comments in 7 files (bpf/config.h among them) still named
# kfeatures.c and five others at user/tracer's top, where they had been
# (now attach/kfeatures.c); this says which comment to fix. A file it
# flags that is new and not yet added (git add) is not in the tree yet.
#
# What is read: the comments of the C sources and headers (.c .h .cpp) under
# bpf/ user/ codec/ include/ tests/ bench/ examples/ (// and /* */, strings
# and characters skipped); the # comments of the shell and Python scripts
# (.sh .py) under tests/ bench/ scripts/, of .ci/run, of the Makefile and
# its scripts/mk/*.mk;
# all of README.md and docs/ (.md, the man pages' .h2m).
#
# What is a path, in two rules:
#  - rooted: a word that starts with one of the top folders (bpf/ user/
#    codec/ include/ tests/ bench/ docs/ scripts/ examples/ vmlinux/ .ci/)
#    and has a second part that is a file name with an extension, a folder
#    (a trailing /) or more parts (user/tracer/track): it must exist from
#    the repository root. Two words joined by / in prose ("user/kernel")
#    are not taken;
#  - relative: a word a/b.ext (one / at least, an extension at the end)
#    whose first part is the name of a folder of this repository (track/,
#    interp/, tracer/, ...): it must exist below the commenting file's
#    folder or one above it, or be the tail of a tracked path (the tail
#    after a /), as docs write tracer/track/stacktree.c for
#    user/tracer/track/stacktree.c. A path whose first part is no folder of
#    ours (src/track/heaptrack_preload.cpp, Documentation/..., Include/...)
#    is another project's and is not checked; a bare name (pycore_runtime.h)
#    is not checked either.
# Either may also name a program built from a tracked source
# (tests/tracer/prog_live: prog_live.c), and a part in capitals is a
# placeholder for any name (vmlinux/ARCH/vmlinux.h, tests/distro/NAME/).
# Not paths: a word that starts after a letter, a digit or one of / . $ @ %
# { } - (build/tests/x, $(OUTPUT)/tests/x, /proc/PID/maps,
# https://.../tests/x), a word that goes on with a glob or a template
# (tests/tracer/prog_*.c, tests/{a,b}.sh, tests/distro/<name>), and the
# kernel's paths that start like ours (FOREIGN).
#
# Usage: check-paths.py [FILE...]  (default: the files above, as tracked;
# a FILE's comments are told by its name: .c .h .cpp, .sh .py, else every
# line). Prints "FILE:LINE: PATH does not exist" for each, exits 1 if any,
# 2 on a usage error or a file that cannot be read. tests/check_paths.sh
# runs it on the tree and on made-up cases.
import os, re, subprocess, sys

TOP = ("bpf", "user", "codec", "include", "tests", "bench", "docs", "scripts",
       "examples", "vmlinux", ".ci")
# The kernel's tree, whose arch/ and include/ are also names of ours: the
# comments cite arch/x86/kernel/uprobes.c, include/uapi/linux/perf_event.h.
FOREIGN = ("arch/x86/", "arch/arm64/", "arch/arm/", "include/linux/",
	   "include/uapi/", "include/asm")
C_EXT = (".c", ".h", ".cpp")
SCRIPT_EXT = (".sh", ".py")
DOC_EXT = (".md", ".h2m")
WORD = r"[A-Za-z0-9_.+/-]"
# The character before a word that can start a path: none of these.
START = r"(?<![A-Za-z0-9_./$@%{}\-])"
ROOTED = re.compile(START + r"((?:%s)/%s*)" %
		    ("|".join(re.escape(t) for t in TOP), WORD))
RELATIVE = re.compile(START + r"([A-Za-z_][A-Za-z0-9_.+-]*/%s*)" % WORD)
GLOB_NEXT = set("*?[{<$%")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]+$")
BUILT_FROM = (".c", ".cpp")
EXT = re.compile(r"\.[A-Za-z0-9]+$")


def git(*args):
	return subprocess.run(("git",) + args, check=True, capture_output=True,
			      text=True).stdout.split("\n")


def tracked():
	files = set(f for f in git("ls-files") if f)
	dirs = set()
	for f in files:
		d = os.path.dirname(f)
		while d and d not in dirs:
			dirs.add(d)
			d = os.path.dirname(d)
	return files, dirs


def c_comments(text):
	"""(line, text) of each comment of C source TEXT."""
	i, n, line = 0, len(text), 1
	while i < n:
		c = text[i]
		if c == "\n":
			line += 1
			i += 1
		elif text.startswith("//", i):
			j = text.find("\n", i)
			j = n if j < 0 else j
			yield line, text[i:j]
			i = j
		elif text.startswith("/*", i):
			j = text.find("*/", i + 2)
			j = n if j < 0 else j + 2
			for k, part in enumerate(text[i:j].split("\n")):
				yield line + k, part
			line += text.count("\n", i, j)
			i = j
		elif c in "\"'":
			i += 1
			while i < n and text[i] != c and text[i] != "\n":
				i += 2 if text[i] == "\\" else 1
			i += 1
		else:
			i += 1


def hash_comments(text):
	"""(line, text) of each # comment of a shell, Python or make TEXT: a #
	at the start of a line or after a blank, outside quotes."""
	for no, s in enumerate(text.split("\n"), 1):
		if s.startswith("#!") and no == 1:
			continue
		quote, k = None, 0
		while k < len(s):
			c = s[k]
			if c == "\\" and quote != "'":
				k += 2
				continue
			if quote:
				if c == quote:
					quote = None
			elif c in "\"'":
				quote = c
			elif c == "#" and (k == 0 or s[k - 1] in " \t"):
				yield no, s[k:]
				break
			k += 1


def all_lines(text):
	return enumerate(text.split("\n"), 1)


def sources(files):
	for f in sorted(files):
		top = f.split("/")[0]
		if f.endswith(C_EXT) and top in ("bpf", "user", "codec", "include",
						  "tests", "bench", "examples"):
			yield f, c_comments
		elif (f.endswith(SCRIPT_EXT) and top in ("tests", "bench", "scripts")) \
				or f in (".ci/run", "Makefile") \
				or (f.startswith("scripts/mk/") and f.endswith(".mk")):
			yield f, hash_comments
		elif f == "README.md" or (top == "docs" and f.endswith(DOC_EXT)):
			yield f, all_lines


def words(s):
	"""The path-like words of S: (word, rooted)."""
	seen = set()
	for rx, rooted in ((ROOTED, True), (RELATIVE, False)):
		for m in rx.finditer(s):
			if m.start() in seen:
				continue
			seen.add(m.start())
			w = m.group(1)
			end = m.end(1)
			if end < len(s) and s[end] in GLOB_NEXT:
				continue
			w = w.rstrip(".,:;-")
			if not w or w.startswith(FOREIGN) or "//" in w:
				continue
			yield w, rooted


def exists(p, files, dirs):
	"""Whether P names a tracked file, a folder of one, a program built
	from a tracked source (tests/tracer/prog_live from prog_live.c), or, a
	part in capitals being a placeholder (vmlinux/ARCH/vmlinux.h), one of
	these for some name in its place."""
	if p in files or p in dirs or any(p + e in files for e in BUILT_FROM):
		return True
	parts = p.split("/")
	if not any(PLACEHOLDER.match(x) for x in parts):
		return False
	rx = re.compile("/".join("[^/]+" if PLACEHOLDER.match(x) else re.escape(x)
				 for x in parts) + "$")
	return any(rx.match(x) for x in files | dirs)


def check(f, lines, files, dirs, basenames, tails):
	bad = []
	here = os.path.dirname(f)
	for no, s in lines:
		for w, rooted in words(s):
			p = w.rstrip("/")
			parts = p.split("/")
			if rooted:
				if len(parts) < 2:
					continue
				if len(parts) == 2 and not w.endswith("/") and \
						not EXT.search(parts[1]):
					continue	# prose: "user/kernel"
				if exists(p, files, dirs):
					continue
			else:
				if parts[0] not in basenames or \
						not (w.endswith("/") or EXT.search(parts[-1])):
					continue
				d, found = here, False
				while True:
					q = os.path.normpath(os.path.join(d, p))
					if exists(q, files, dirs):
						found = True
						break
					if not d or d == os.path.dirname(d):
						break	# the root ("" or "/")
					d = os.path.dirname(d)
				if found or p in tails:
					continue
			bad.append((no, w))
	return bad


def main(argv):
	if any(a.startswith("-") for a in argv[1:]):
		print("usage: check-paths.py [FILE...]", file=sys.stderr)
		return 2
	args = [os.path.abspath(f) for f in argv[1:]]
	try:
		root = git("rev-parse", "--show-toplevel")[0]
	except (OSError, subprocess.CalledProcessError):
		print("not a git checkout: nothing to check")
		return 0
	os.chdir(root)
	# A file inside the checkout is named from its root, as git names it.
	args = [f if os.path.relpath(f).startswith("..") else os.path.relpath(f)
		for f in args]
	files, dirs = tracked()
	basenames = set(os.path.basename(d) for d in dirs)
	tails = set()
	for f in files:
		parts = f.split("/")
		for k in range(1, len(parts) - 1):
			tails.add("/".join(parts[k:]))
	for d in dirs:
		parts = d.split("/")
		for k in range(1, len(parts)):
			tails.add("/".join(parts[k:]))
	if args:
		todo = []
		for f in args:
			kind = c_comments if f.endswith(C_EXT) else \
				hash_comments if f.endswith(SCRIPT_EXT) else all_lines
			todo.append((f, kind))
	else:
		todo = list(sources(files))
	n = 0
	for f, kind in todo:
		try:
			with open(f, encoding="utf-8", errors="replace") as fp:
				text = fp.read()
		except OSError as e:
			print("%s: %s" % (f, e.strerror), file=sys.stderr)
			return 2
		for no, w in check(f, kind(text), files, dirs, basenames, tails):
			print("%s:%d: %s does not exist" % (f, no, w))
			n += 1
	if n:
		print("paths in comments and docs: %d do not exist" % n,
		      file=sys.stderr)
		return 1
	print("paths in comments and docs: %d files read, every path exists"
	      % len(todo))
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv))
