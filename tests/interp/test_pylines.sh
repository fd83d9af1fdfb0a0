#!/bin/bash
# test_pylines.sh BUILD_DIR - the CPython pieces the tracer and the
# collector share (tests/interp/test_pylines.c), the location-table
# decoder checked against CPython's own co_lines() on every code unit of
# some standard modules: compiled by Debian's /usr/bin/python3.11 (not the
# python3.11 a PATH may find first: pyenv's), and by a 3.13 where there
# is one (HS_PYROOT313: a Debian 13 root with /usr/bin/python3.13, run
# there with chroot; by default tests/distro/make-root.sh's trixie root
# if it is made), and by forky's python3.14 the same way (HS_PYROOT314,
# default the forky root if it is made).
set -u
OUT=$(realpath "${1:?usage: $0 BUILD_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PY311=/usr/bin/python3.11
[ -x "$PY311" ] || { echo "FAIL $PY311 is not there: scripts/install-deps.sh installs Debian's python3.11"; exit 1; }
"$PY311" "$HERE/lines_dump.py" > "$T/311" || { echo "FAIL $PY311 lines_dump.py"; exit 1; }
dumps=("$T/311")
root=${HS_PYROOT313:-$(ls -d /var/cache/heapsnoop/roots/trixie.*/root 2> /dev/null | head -n 1)}
if [ -n "$root" ] && [ -x "$root/usr/bin/python3.13" ]; then
	chroot "$root" /usr/bin/python3.13 - < "$HERE/lines_dump.py" > "$T/313" ||
		{ echo "FAIL python3.13 in $root: lines_dump.py"; exit 1; }
	dumps+=("$T/313")
else
	echo "note: no 3.13 root (HS_PYROOT313, or tests/distro/make-root.sh trixie): 3.11 only"
fi
root=${HS_PYROOT314:-$(ls -d /var/cache/heapsnoop/roots/forky.*/root 2> /dev/null | head -n 1)}
if [ -n "$root" ] && [ -x "$root/usr/bin/python3.14" ]; then
	chroot "$root" /usr/bin/python3.14 - < "$HERE/lines_dump.py" > "$T/314" ||
		{ echo "FAIL python3.14 in $root: lines_dump.py"; exit 1; }
	dumps+=("$T/314")
else
	echo "note: no 3.14 root (HS_PYROOT314, or tests/distro/make-root.sh forky): not run on 3.14"
fi
exec "$OUT/tests/test_pylines" "${dumps[@]}"
