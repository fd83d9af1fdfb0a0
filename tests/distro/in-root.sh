#!/bin/bash
# in-root.sh - the part of the distribution test (tests/distro/run.sh) that
# runs heapsnoop inside a Debian root, in the private mount namespace
# run.sh gives it (unshare -m): every mount below ends with that namespace,
# however this script ends, and none is seen outside it.
#   in-root.sh BUILD_DIR ROOT
# The root is made read-only (a bind mount of itself), a tmpfs on its /tmp
# holds the release heapsnoop and heapdecode copied alone (nothing else of
# ours: no build directory, no library), and a tracer's file systems are
# mounted in it: /proc, /sys, /sys/fs/bpf, tracefs. There, run with chroot:
#   the distribution's own perl (perl-base, Essential) keeps 100 strings
#   of 100 000 bytes; heapsnoop traces it launched (-- perl), attached
#   (-p) and with --preload (the collector embedded in heapsnoop: no
#   library beside it); each log holds exactly those 100 blocks, each of
#   100 008 bytes, from perl's string growth (Perl_sv_grow), and the
#   root's heapdecode names the frames: perl's functions in perl, the C
#   library's in libc (tests/distro/perl.sh).
set -u
. "$(dirname "$0")/../tracer/lib.sh"
. "$(dirname "$0")/perl.sh"
ROOT=${2:?usage: $0 BUILD_DIR ROOT}
[ -x "$ROOT/usr/bin/perl" ] || { echo "in-root: $ROOT is no root with a perl" >&2; exit 2; }

mount --bind "$ROOT" "$ROOT" && mount -o remount,bind,ro "$ROOT" || {
	echo "in-root: cannot bind $ROOT read-only (run through tests/distro/run.sh, as root)" >&2; exit 2; }
for m in "tmpfs tmpfs /tmp -o mode=1777" "proc proc /proc" "sysfs sysfs /sys" \
		"bpf bpf /sys/fs/bpf" "tracefs tracefs /sys/kernel/tracing"; do
	set -- $m
	mount -t "$1" "$2" "$ROOT$3" "${@:4}" || { echo "in-root: cannot mount $1 on $ROOT$3" >&2; exit 2; }
done
BIN=/tmp/heapsnoop
mkdir "$ROOT$BIN" && cp "$HS" "$HD" "$ROOT$BIN/" || exit 2
in_root() { chroot "$ROOT" "$@"; }

echo "the root: $(in_root ldd --version | head -n 1); in $BIN: $(ls "$ROOT$BIN" | paste -sd' ')"
libs=$(cd "$ROOT" && find usr/lib -name 'libbpf.so*' -o -name 'libdw.so*' -o -name 'libdw-*.so' \
	-o -name 'libcapstone.so*' -o -name 'libelf.so*' -o -name 'libelf-*.so' | head -n 5)
expect_eq "the root has no libbpf, libdw, libelf or capstone" "${libs:-none}" none
for b in heapsnoop heapdecode; do
	in_root "$BIN/$b" --version > "$T/$b.version" 2>&1
	check "$b runs in the root: $(head -n 1 "$T/$b.version")" test $? -eq 0
done

# Launch mode: heapsnoop starts perl (the C library it probes is the root's).
printf 'go\ngo\n' > "$T/lines"
in_root "$BIN/heapsnoop" -q -o /tmp/launch.heap -- perl -e "$PERL" < "$T/lines" > "$T/launch.out" 2> "$T/launch.err"
rc=$?
check "launch: heapsnoop -- perl exits 0" test "$rc" -eq 0
[ "$rc" -eq 0 ] || tail -n 5 "$T/launch.err"
check_no_loss "launch: no events lost" "$T/launch.err"
expect_perl launch /tmp/launch.heap in_root "$BIN/heapdecode"

# Attach (-p): perl is running when heapsnoop attaches; it keeps the
# strings after heapsnoop says it traces it, and exits.
coproc P { exec chroot "$ROOT" perl -e "$PERL"; }
if wait_line "${P[0]}" '^ready ' "$T/attach.out"; then
	pid=$(sed -n 's/^ready //p' "$T/attach.out")
	mkfifo "$T/errpipe"
	in_root "$BIN/heapsnoop" -q -p "$pid" -o /tmp/attach.heap 2> "$T/errpipe" &
	hs=$!
	exec 5< "$T/errpipe"
	check "attach: heapsnoop says it traces perl" wait_line 5 "^heapsnoop: tracing pid $pid" "$T/attach.err"
	cat <&5 >> "$T/attach.err" &
	echo go >&"${P[1]}"
	wait_line "${P[0]}" '^kept$' > /dev/null
	echo go >&"${P[1]}"
	wait "$hs"
	check "attach: heapsnoop exits 0 when perl exits" test $? -eq 0
	wait
	check_no_loss "attach: no events lost" "$T/attach.err"
	expect_perl attach /tmp/attach.heap in_root "$BIN/heapdecode"
else
	check "attach: perl started in the root" false
fi

# --preload: no BPF, the collector (heapsnoop's embedded copy) in perl's
# own process.
in_root "$BIN/heapsnoop" --preload -o /tmp/preload.heap -- perl -e "$PERL" < "$T/lines" > "$T/preload.out" 2> "$T/preload.err"
rc=$?
check "--preload: heapsnoop --preload -- perl exits 0" test "$rc" -eq 0
[ "$rc" -eq 0 ] || tail -n 5 "$T/preload.err"
expect_perl preload /tmp/preload.heap in_root "$BIN/heapdecode"
finish
