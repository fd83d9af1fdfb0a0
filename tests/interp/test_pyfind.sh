#!/bin/bash
# test_pyfind.sh BUILD_DIR - the tracer's CPython finder and resolver
# (tests/interp/test_pyfind.c) on Debian's /usr/bin/python3.11, and on a
# python3.13 where there is one (HS_PYROOT313: a Debian 13 root; by
# default tests/distro/make-root.sh's trixie root if it is made), and on
# the 3.12 builds of tests/tracer/pylib.sh's other_pythons where they are
# (python-build-standalone's, pyenv's), and on forky's python3.14 and a
# free-threaded 3.14 where they are (HS_PY314, HS_PY314T).
set -u
OUT=$(realpath "${1:?usage: $0 BUILD_DIR}")
[ -x /usr/bin/python3.11 ] || { echo "FAIL /usr/bin/python3.11 is not there: scripts/install-deps.sh installs Debian's python3.11"; exit 1; }
root=${HS_PYROOT313:-$(ls -d /var/cache/heapsnoop/roots/trixie.*/root 2> /dev/null | head -n 1)}
py313=
if [ -n "$root" ] && [ -x "$root/usr/bin/python3.13" ]; then
	py313=$root/usr/bin/python3.13
else
	echo "note: no 3.13 root (HS_PYROOT313, or tests/distro/make-root.sh trixie): 3.11 only"
fi
. "$(dirname "$0")/../tracer/pylib.sh"
py312=()
while read -r label py; do
	# Its CPython: the libpython3.12 beside it (--enable-shared), else itself.
	lib=$(dirname "$py")/../lib/libpython3.12.so.1.0
	[ -e "$lib" ] || lib=$py
	case $label in *3.12*) py312+=("$lib") ;; esac
done < <(other_pythons)
# 3.14 (forky's root) and free-threaded 3.14 (tests/tracer/make-python.sh's)
# where they are, by environment (test_pyfind.c, test_python314).
if [ -z "${HS_PY314:-}" ]; then
	root=$(ls -d /var/cache/heapsnoop/roots/forky.*/root 2> /dev/null | head -n 1)
	[ -n "$root" ] && [ -x "$root/usr/bin/python3.14" ] && export HS_PY314=$root/usr/bin/python3.14
fi
if [ -z "${HS_PY314T:-}" ]; then
	t=$(ls -d /var/cache/heapsnoop/python/3.14t.*/prefix/bin/python3.14t 2> /dev/null | head -n 1)
	[ -n "$t" ] && export HS_PY314T=$t
fi
if [ -z "${HS_PY313T:-}" ]; then
	t=$(ls -d /var/cache/heapsnoop/python/3.13t.*/prefix/bin/python3.13t 2> /dev/null | head -n 1)
	[ -n "$t" ] && export HS_PY313T=$t
fi
exec "$OUT/tests/test_pyfind" "${py313:--}" ${py312[@]+"${py312[@]}"}
