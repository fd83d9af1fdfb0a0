#!/bin/bash
# check_paths.sh - every repository path that a comment or a doc names
# exists (scripts/check-paths.py: what is read and what is a path). First
# the checker itself on made-up files: of a C file, a shell script and a
# Markdown page, it must flag exactly the five paths that do not exist and
# none of the words that look like paths and are not ours (a glob, build
# outputs, a URL, /proc, heaptrack's, CPython's and the kernel's paths,
# prose, a string in the code). Then the tree. Outside a git checkout there
# is nothing to check.
set -u
cd "$(dirname "$0")/.." || exit 2
git rev-parse --is-inside-work-tree > /dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 0; }
T=$(mktemp -d /tmp/check_paths.XXXXXX) || exit 2
trap 'rm -rf "$T"' EXIT
# Each made-up name is written through $gone, so that this script's own
# comments and lines name none (the tree's check reads them too).
gone=nosuch
cat > "$T/case.c" <<EOF
/*
 * bpf/config.h exists; user/tracer/${gone}.c does not.
 * tests/tracer/prog_*.c is a glob, \$(OUTPUT)/tests/test_codec and
 * build/tests/prog_paths build outputs, https://example.org/user/x.c a URL,
 * /proc/PID/maps the kernel's, src/track/heaptrack_preload.cpp heaptrack's,
 * pycore_runtime.h and Include/internal/pycore_runtime.h CPython's,
 * Documentation/bpf/map_array.rst and arch/x86/kernel/uprobes.c the
 * kernel's; the user/kernel boundary is prose.
 * track/stacktree.c is ours, relative; track/${gone}.c is not.
 * tests/tracer/prog_live is a program; vmlinux/ARCH/vmlinux.h a placeholder.
 */
static const char *s = "user/${gone}_in_a_string.c"; // docs/${gone}.md
EOF
cat > "$T/case.sh" <<EOF
# scripts/${gone}.sh is named here, tests/tracer/lib.sh too.
echo "tests/${gone}.sh # in quotes: not a comment"
x=1 # bench/run.sh exists
EOF
cat > "$T/case.md" <<EOF
See docs/DESIGN.md, docs/${gone}.md and tests/distro/*.sh.
EOF
want="$T/case.c:2: user/tracer/${gone}.c does not exist
$T/case.c:9: track/${gone}.c does not exist
$T/case.c:12: docs/${gone}.md does not exist
$T/case.sh:1: scripts/${gone}.sh does not exist
$T/case.md:1: docs/${gone}.md does not exist"
got=$(scripts/check-paths.py "$T/case.c" "$T/case.sh" "$T/case.md" 2> /dev/null)
rc=$?
if [ "$rc" -ne 1 ] || [ "$got" != "$want" ]; then
	echo "the checker on made-up files: exit $rc (want 1), flagged:"
	echo "$got" | sed 's/^/  /'
	echo "want:"
	echo "$want" | sed 's/^/  /'
	exit 1
fi
echo "the checker on made-up files: the 5 stale paths flagged, nothing else"
scripts/check-paths.py
