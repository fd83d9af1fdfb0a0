#!/bin/bash
# test_pyfind.sh BUILD_DIR - the tracer's CPython finder and resolver
# (tests/interp/test_pyfind.c) on Debian's /usr/bin/python3.11, and on a
# python3.13 where there is one (HS_PYROOT313: a Debian 13 root; by
# default tests/distro/make-root.sh's trixie root if it is made).
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
exec "$OUT/tests/test_pyfind" ${py313:+"$py313"}
