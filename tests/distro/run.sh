#!/bin/bash
# run.sh - heapsnoop's release binaries on another Debian's userland: the
# distribution test, one Debian root a run (tests/run.sh runs it for
# bullseye and trixie):
#   run.sh BUILD_DIR NAME     NAME: bullseye (Debian 11, glibc 2.31) or
#                             trixie (Debian 13)
# The root is made by make-root.sh on first use and cached. Here:
#   BUILD_DIR's heapsnoop and heapdecode depend on no shared library
#   (readelf -d: no dynamic section);
#   in the root (in-root.sh, in a private mount namespace: its mounts end
#   with it, on any failure too): the two copied alone there trace the
#   root's own perl exactly, launched, attached and with --preload, and
#   heapdecode there names the frames (tests/distro/perl.sh);
#   afterwards nothing is left mounted in the root;
#   from this machine: `heapsnoop -- chroot ROOT perl ...` traces that
#   perl exactly (launch mode follows the exec into the root's C library),
#   its log symbolized here.
# Exits non-zero if a check failed or the root could not be made.
set -u
. "$(dirname "$0")/../tracer/lib.sh"
. "$(dirname "$0")/perl.sh"
NAME=${2:?usage: $0 BUILD_DIR bullseye|trixie}
HERE=$(cd "$(dirname "$0")" && pwd)

for b in heapsnoop heapdecode; do
	needed=$(readelf -d "$OUT/$b" 2>&1 | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' ')
	expect_eq "$b needs no shared library (readelf -d: ${needed:-none})" "${needed:-none}" none
done

DIR=$("$HERE/make-root.sh" "$NAME") || { echo "FAIL the $NAME root could not be made (above)"; exit 1; }
ROOT=$DIR/root
echo "the $NAME root: $ROOT ($(wc -l < "$DIR/packages") packages, made in $(cat "$DIR/took") s;" \
	"$(awk '$1 == "libc6" || $1 == "perl-base" { printf "%s%s %s", s, $1, $2; s = ", " }' "$DIR/packages"))"

unshare -m --propagation private "$HERE/in-root.sh" "$OUT" "$ROOT"
check "in the root: the release binaries alone trace its perl, heapdecode names the frames" test $? -eq 0
left=$(findmnt -rn -o TARGET | awk -v d="$ROOT" 'index($0, d) == 1' | paste -sd' ')
expect_eq "nothing is left mounted in the root" "${left:-none}" none

# From this machine: heapsnoop launches chroot, which execs the root's perl.
printf 'go\ngo\n' > "$T/lines"
"$HS" -q -o "$T/host.heap" -- chroot "$ROOT" perl -e "$PERL" < "$T/lines" > "$T/host.out" 2> "$T/host.err"
rc=$?
check "heapsnoop -- chroot ROOT perl: exits 0" test "$rc" -eq 0
check_no_loss "heapsnoop -- chroot ROOT perl: no events lost" "$T/host.err"
expect_perl "heapsnoop -- chroot ROOT perl" "$T/host.heap" "$HD"
if [ "$fails" -gt 0 ]; then
	echo "heapsnoop -- chroot ROOT perl: its stderr's last lines:"; tail -n 8 "$T/host.err"
fi
finish
