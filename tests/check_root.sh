#!/bin/bash
# check_root.sh - the repository root tracks only the project's own files:
# README, Makefile (its areas in scripts/mk/), LICENSE, .gitignore, .ci, the
# design's folders (bpf, user, codec, include, tests, vmlinux), bench,
# docs, examples, scripts.
# Scratch output of a manual run (err.txt, rec5, ...) was committed twice;
# this says which file to remove. Outside a git checkout there is nothing
# to check.
set -u
cd "$(dirname "$0")/.." || exit 2
git rev-parse --is-inside-work-tree > /dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 0; }
allowed='^(README(\.md)?|Makefile|LICENSE|\.gitignore|\.ci|bpf|user|codec|include|tests|vmlinux|bench|docs|examples|scripts)$'
stray=$(git ls-files | cut -d/ -f1 | sort -u | grep -Ev "$allowed")
if [ -n "$stray" ]; then
	echo "tracked at the repository root but not one of the project's files (git rm them):"
	echo "$stray" | sed 's/^/  /'
	exit 1
fi
echo "repository root: only the project's files"
