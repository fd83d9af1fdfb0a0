#!/bin/bash
# guest.sh - run one command inside another Debian kernel, booted in qemu:
#   guest.sh KERNEL -- CMD [ARG]...        KERNEL: 5.10, 6.1, 6.12 or 6.1-arm64
# The kernel comes from fetch-kernel.sh's cache. qemu (TCG: no KVM needed)
# boots it with a small initramfs (a static busybox, the virtio and 9p
# modules of that kernel, an /init). The guest's root is not this
# machine's: it is a Debian root of tests/distro/make-root.sh's cache
# (trixie, Debian 13; trixie-arm64 for 6.1-arm64), shared read-only over
# 9p, with none of heapsnoop's libraries in it (no libbpf, libdw, libelf,
# capstone): the binaries under test bring what they need. Seen through a
# tmpfs (each of its entries bind-mounted there, so that new mount points
# can be made), it gets at their own paths the host directories the
# command needs, read-only over 9p: this checkout (its build directory
# included) and those of KMATRIX_DIRS. /init mounts fresh proc, sysfs,
# devtmpfs, bpffs, tracefs, debugfs and tmpfs on /run, /tmp and /dev/shm,
# chroots there and runs CMD as root, in the same directory (if the guest
# has it), with the root's own PATH, every HS_* variable of this
# environment, and TMPDIR /run/tmp. CMD's output (stdout and stderr
# together, and the kernel's warnings) streams on stdout as it comes;
# guest.sh exits with CMD's exit status, read from a marker line the guest
# prints after it. Nothing waits on a sleep: the console is read until the
# guest powers off.
#
# 6.1-arm64 (tests/arm64, docs/ARCH.md): Debian's arm64 kernel under
# qemu-system-aarch64 -M virt -cpu max (TCG), on the trixie-arm64 root;
# its initramfs has busybox-static:arm64 (fetch-kernel.sh's userland/).
#
# Environment:
#   KMATRIX_CACHE    the kernel and initramfs cache
#                    (default /var/cache/heapsnoop/kmatrix, shared by checkouts)
#   KMATRIX_ROOT     the guest's root, a name make-root.sh knows (default
#                    trixie, or trixie-arm64 for an arm64 kernel)
#   KMATRIX_DIRS     more host directories the guest sees at their own
#                    paths, read-only, separated by ':' (e.g. a build
#                    directory outside the checkout)
#   KMATRIX_TIMEOUT  seconds before a hung guest is killed (default 1800);
#                    that is a failure (exit 124)
#   KMATRIX_MEM      guest memory (default 2G); KMATRIX_SMP vCPUs (default 2)
#   KMATRIX_TCG_THREAD  single (default: the vCPUs on one host thread) or multi
#   KMATRIX_VERBOSE  1: show the boot messages too (on stderr)
#   KMATRIX_APPEND   more kernel parameters (e.g. preempt=full)
#   KMATRIX_SHARE    a host directory the guest may write, mounted at
#                    /run/share in it (9p, read-write): what CMD leaves
#                    there outlives the guest
# The kernel runs with oops=panic: an oops ends the guest at once, with its
# message, instead of letting the tests go on (or hang) on a broken kernel.
# Exit status: CMD's, or 124 on timeout, 125 when the guest could not be
# booted or could not run CMD (the reason and the boot log on stderr), 123
# when the guest died (kernel panic) before CMD ended.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: $0 KERNEL -- CMD [ARG]...   (KERNEL: 5.10 6.1 6.12 6.1-arm64)" >&2; exit 2; }
[ $# -ge 3 ] && [ "$2" = -- ] || usage
KNAME=$1; shift 2
CMD=("$@")
CACHE=${KMATRIX_CACHE:-/var/cache/heapsnoop/kmatrix}
TMO=${KMATRIX_TIMEOUT:-1800}
die() { echo "guest.sh: $KNAME: $*" >&2; exit 125; }

case $KNAME in
*-arm64) QEMU_BIN=qemu-system-aarch64 CONSOLE=ttyAMA0 ;;
*) QEMU_BIN=qemu-system-x86_64 CONSOLE=ttyS0 ;;
esac
for tool in "$QEMU_BIN" cpio; do
	command -v "$tool" > /dev/null || die "$tool not found: run scripts/install-deps.sh (it installs qemu-system-x86 busybox-static cpio xz-utils zstd kmod; --arm64: qemu-system-arm)"
done

KDIR=$("$HERE/fetch-kernel.sh" "$KNAME") ||
	die "kernel not available (not in the cache $CACHE/kernels/$KNAME and could not be fetched; see above)"
if [ -d "$KDIR/userland" ]; then
	# Another architecture's static busybox (fetch-kernel.sh).
	BUSYBOX=$KDIR/userland/bin/busybox
else
	BUSYBOX=/bin/busybox
	[ -x "$BUSYBOX" ] && ! ldd "$BUSYBOX" > /dev/null 2>&1 ||
		die "$BUSYBOX is not a static busybox: apt-get install busybox-static"
fi
case $KNAME in
*-arm64) RNAME=${KMATRIX_ROOT:-trixie-arm64} ;;
*) RNAME=${KMATRIX_ROOT:-trixie} ;;
esac
GROOT=$("$HERE/../distro/make-root.sh" "$RNAME")/root ||
	die "the guest's root $RNAME could not be made (see above)"
# The host directories the guest sees at their own paths: this checkout,
# and KMATRIX_DIRS; one inside another is seen through the other.
dirs=()
IFS=: read -ra more <<< "${KMATRIX_DIRS:-}"
for d in "$(cd "$HERE/../.." && pwd -P)" "${more[@]}"; do
	[ -n "$d" ] || continue
	r=$(realpath -e "$d") && [ -d "$r" ] || die "KMATRIX_DIRS: $d is not a directory"
	[[ $r =~ ^(/[A-Za-z0-9._+-]+)+$ ]] ||
		die "$r: the guest mounts only paths of letters, digits and ._+- (its kernel command line carries them)"
	dirs+=("$r")
done
exports=()
for d in "${dirs[@]}"; do
	inside=0
	for e in "${dirs[@]}"; do
		[ "$e" != "$d" ] && [[ $d == "$e"/* ]] && inside=1
	done
	[ "$inside" = 1 ] || [[ " ${exports[*]} " == *" $d "* ]] || exports+=("$d")
done
REL=$(cat "$KDIR/release")
KIMG=$KDIR/root/boot/vmlinuz-$REL
MODDIR=$KDIR/root/lib/modules/$REL

# --- the initramfs, built once per kernel and init version -------------------
# The modules to mount the host's root: virtio-pci and 9p over virtio (those
# built into the kernel are skipped), each after its dependencies.
WANT_MODULES="virtio_pci 9pnet_virtio 9p"

read -r -d '' INIT <<'EOF'
#!/bin/busybox sh
# /init of heapsnoop's kernel matrix guest (tests/kmatrix/guest.sh): the
# guest's root (9p, read-only) seen through a tmpfs, the host directories
# of kmatrix.dirs= at their own paths in it (9p, read-only); chroot into
# it, run the command file of the hsrun share, print its exit status in a
# marker line and power off.
/bin/busybox mkdir -p /proc /sys /dev /sbin /usr/bin /usr/sbin /lower /newroot /hsrun
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
nonce= dirs= share=
for arg in $(cat /proc/cmdline); do
	case $arg in
	kmatrix.nonce=*) nonce=${arg#*=} ;;
	kmatrix.dirs=*) dirs=${arg#*=} ;;
	kmatrix.share=*) share=${arg#*=} ;;
	esac
done
fail() {
	echo "KMATRIX-BOOTFAIL-$nonce: $*"
	poweroff -f
}
for m in $(cat /modules.order); do
	insmod "/modules/$m" || fail "insmod $m failed"
done
# cache=loose: a file keeps one inode, so uprobes on it fire.
ninep() { # OPTIONS TAG DIR
	mount -t 9p -o "$1,trans=virtio,version=9p2000.L,cache=loose,msize=262144" "$2" "$3"
}
ninep ro guestroot /lower || fail "cannot mount the guest's root (9p)"
ninep ro hsrun /hsrun || fail "cannot mount the command's directory (9p)"
R=/newroot
# DIR: a tmpfs on $R/DIR holding what the root has in DIR: each directory
# and file bind-mounted from it, each symbolic link copied.
shadow() {
	mount -t tmpfs -o "mode=$(stat -c %a "/lower$1")" tmpfs "$R$1" || return 1
	for e in "/lower$1"/* "/lower$1"/.[!.]*; do
		n=${e##*/}
		if [ -L "$e" ]; then
			ln -s "$(readlink "$e")" "$R$1/$n"
		elif [ -d "$e" ]; then
			mkdir "$R$1/$n" && mount --bind "$e" "$R$1/$n"
		elif [ -e "$e" ]; then
			: > "$R$1/$n" && mount --bind "$e" "$R$1/$n"
		fi || return 1
	done
}
writable() { touch "$1/.kmatrix-w" 2> /dev/null && rm -f "$1/.kmatrix-w"; }
# PATH: a directory to mount on, made where the root has none (the read-
# only directories on the way shadowed).
point() {
	cur=
	for c in $(echo "$1" | tr / ' '); do
		if [ ! -e "$R$cur/$c" ] && [ ! -L "$R$cur/$c" ]; then
			{ writable "$R$cur" || shadow "$cur"; } && mkdir "$R$cur/$c" || return 1
		elif [ -L "$R$cur/$c" ] || [ ! -d "$R$cur/$c" ]; then
			return 1
		fi
		cur=$cur/$c
	done
}
shadow "" || fail "cannot show the guest's root through a tmpfs"
mount -t proc proc $R/proc || fail "mount proc"
mount -t sysfs sysfs $R/sys || fail "mount sysfs"
mount -t devtmpfs devtmpfs $R/dev || fail "mount devtmpfs"
mkdir -p $R/dev/shm $R/dev/pts
mount -t devpts devpts $R/dev/pts || fail "mount devpts"
for d in /run /tmp /dev/shm; do
	mount -t tmpfs -o mode=1777 tmpfs $R$d || fail "mount tmpfs on $d"
done
mkdir -p $R/run/tmp && chmod 1777 $R/run/tmp || fail "cannot make /run/tmp"
i=0
for d in $(echo "$dirs" | tr , ' '); do
	point "$d" || fail "cannot make a mount point $d in the guest's root"
	ninep ro "hsd$i" "$R$d" || fail "cannot mount the host's $d (9p)"
	i=$((i + 1))
done
# KMATRIX_SHARE: a host directory to write to.
if [ -n "$share" ]; then
	mkdir -p $R/run/share &&
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 hsshare $R/run/share ||
		fail "cannot mount the share (9p)"
fi
mount -t bpf bpf $R/sys/fs/bpf || fail "mount bpffs"
mount -t tracefs tracefs $R/sys/kernel/tracing || fail "mount tracefs"
mount -t debugfs debugfs $R/sys/kernel/debug || fail "mount debugfs"
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup 2> /dev/null
mkdir -p $R/run/kmatrix && cp /hsrun/cmd.sh $R/run/kmatrix/cmd.sh || fail "cannot copy the command file"
echo "KMATRIX-START-$nonce"
chroot $R /bin/bash /run/kmatrix/cmd.sh < /dev/null > /dev/console 2>&1
echo "KMATRIX-EXIT-$nonce=$?"
poweroff -f
EOF

key=$( (echo "$REL"; echo "$WANT_MODULES"; echo "$INIT"; sha256sum "$BUSYBOX") |
	sha256sum | cut -c1-16)
INITRD=$CACHE/initramfs/$KNAME-$REL-$key.cpio
if [ ! -e "$INITRD" ]; then
	mkdir -p "$CACHE/initramfs" || die "cannot create $CACHE/initramfs"
	w=$(mktemp -d "$CACHE/initramfs/.build.XXXXXX") || die "mktemp in $CACHE/initramfs failed"
	trap 'rm -rf "$w"' EXIT
	mkdir -p "$w/root/bin" "$w/root/modules"
	cp "$BUSYBOX" "$w/root/bin/busybox" || die "cannot copy $BUSYBOX"
	printf '%s\n' "$INIT" > "$w/root/init" && chmod 755 "$w/root/init"
	: > "$w/root/modules.order"
	for name in $WANT_MODULES; do
		# modules.dep: "kernel/x/name.ko[.xz]: dep dep ...", the dependencies
		# of all depths, the ones to load first last.
		line=$(awk -v n="$name" '{
			m = $1; sub(/:$/, "", m); b = m; sub(/.*\//, "", b)
			sub(/\.ko(\.xz|\.zst|\.gz)?$/, "", b); gsub(/-/, "_", b)
			if (b == n) { print; exit }
		}' "$MODDIR/modules.dep")
		if [ -z "$line" ]; then
			grep -q "/$name\.ko" "$MODDIR/modules.builtin" && continue
			die "module $name neither in $MODDIR/modules.dep nor built in"
		fi
		set -- $line # words: the module, then its dependencies
		mod=${1%:}; shift
		order=()
		for dep in "$@"; do order=("$dep" "${order[@]}"); done
		order+=("$mod")
		for m in "${order[@]}"; do
			ko=$(basename "$m"); ko=${ko%.xz}; ko=${ko%.zst}; ko=${ko%.gz}
			grep -qxF "$ko" "$w/root/modules.order" && continue
			case $m in
			*.xz) xz -dc "$MODDIR/$m" ;;
			*.zst) zstd -qdc "$MODDIR/$m" ;;
			*.gz) gzip -dc "$MODDIR/$m" ;;
			*) cat "$MODDIR/$m" ;;
			esac > "$w/root/modules/$ko" || die "cannot decompress $MODDIR/$m (xz-utils, zstd installed?)"
			echo "$ko" >> "$w/root/modules.order"
		done
	done
	(cd "$w/root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) > "$w/initrd.cpio" ||
		die "cpio failed"
	mv "$w/initrd.cpio" "$INITRD" || die "cannot write $INITRD"
	rm -rf "$w"
	trap - EXIT
fi

# --- the command file and the boot --------------------------------------------
# The guest reads it through a 9p share of its own.
RUN=$(mktemp -d /tmp/kmatrix-run.XXXXXX) || die "mktemp -d in /tmp failed"
trap 'rm -rf "$RUN"' EXIT
chmod 755 "$RUN"
nonce=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
{
	echo "# the command guest.sh runs in the guest"
	# The root's own programs (this machine's PATH may name others).
	echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LC_ALL=C.UTF-8 TMPDIR=/run/tmp'
	while IFS= read -r var; do
		printf 'export %s=%q\n' "$var" "${!var}"
	done < <(compgen -e | grep '^HS_')
	printf 'cd -- %q 2> /dev/null || { echo "guest.sh: no directory %q in the guest, running in /" >&2; cd /; }\n' "$PWD" "$PWD"
	printf 'exec'
	printf ' %q' "${CMD[@]}"
	printf '\n'
} > "$RUN/cmd.sh"
chmod 644 "$RUN/cmd.sh"

APPEND="console=$CONSOLE quiet panic=-1 oops=panic rdinit=/init kmatrix.nonce=$nonce${KMATRIX_APPEND:+ $KMATRIX_APPEND}"
# The root, the command's directory and each host directory: 9p, read-only.
# shellcheck disable=SC2054 # commas inside qemu options
VIRTFS=(-virtfs "local,path=$GROOT,mount_tag=guestroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$RUN,mount_tag=hsrun,security_model=none,readonly=on")
for i in "${!exports[@]}"; do
	VIRTFS+=(-virtfs "local,path=${exports[$i]},mount_tag=hsd$i,security_model=none,readonly=on,multidevs=remap")
done
APPEND="$APPEND kmatrix.dirs=$(IFS=,; echo "${exports[*]}")"
# KMATRIX_SHARE: a second 9p export, read-write.
SHARE=()
if [ -n "${KMATRIX_SHARE:-}" ]; then
	[ -d "$KMATRIX_SHARE" ] || die "KMATRIX_SHARE=$KMATRIX_SHARE is not a directory"
	SHARE=(-virtfs "local,path=$KMATRIX_SHARE,mount_tag=hsshare,security_model=none")
	APPEND="$APPEND kmatrix.share=1"
fi
# arm64: the virt board; pointer authentication with QEMU's cheap
# implementation-defined algorithm (the architected one costs much under TCG).
case $KNAME in
*-arm64) MACHINE=(-M virt -cpu max,pauth-impdef=on) ;;
*) MACHINE=(-cpu max) ;;
esac
# shellcheck disable=SC2054 # commas inside qemu options
QEMU=("$QEMU_BIN" "${MACHINE[@]}" -accel "tcg,thread=${KMATRIX_TCG_THREAD:-single}" -smp "${KMATRIX_SMP:-2}"
	-m "${KMATRIX_MEM:-2G}" -display none -monitor none -serial stdio -no-reboot -nic none
	-kernel "$KIMG" -initrd "$INITRD" -append "$APPEND" "${VIRTFS[@]}" "${SHARE[@]}")

# Read the console until the guest powers off (or the timeout kills qemu):
# before the start marker it is the boot log, then CMD's output.
state=boot rc='' qemu_rc=''
while IFS= read -r line; do
	line=${line%$'\r'}
	case $state,$line in
	boot,"KMATRIX-START-$nonce") state=run ;;
	*"KMATRIX-EXIT-$nonce="*) # after output with no newline at its end, on its line
		pre=${line%%KMATRIX-EXIT-"$nonce"=*}
		[ -n "$pre" ] && printf '%s\n' "$pre"
		rc=${line##*=}; state=finished ;;
	*,"KMATRIX-QEMU-$nonce="*) qemu_rc=${line#*=} ;;
	*,"KMATRIX-BOOTFAIL-$nonce: "*)
		echo "$line" >> "$RUN/boot.log"; state=bootfail ;;
	boot,*) echo "$line" >> "$RUN/boot.log"
		[ "${KMATRIX_VERBOSE:-0}" = 1 ] && printf '%s\n' "$line" >&2 ;;
	run,*) printf '%s\n' "$line" ;;
	esac
done < <(timeout -k 10 "$TMO" "${QEMU[@]}" < /dev/null 2> "$RUN/qemu.err"; echo "KMATRIX-QEMU-$nonce=$?")

case $state in
finished) exit "$rc" ;;
run) [ "$qemu_rc" = 124 ] || {
	echo "guest.sh: $KNAME: the guest ended while running the command, with no exit status" \
		"(qemu exit $qemu_rc: a kernel panic? its message is above)" >&2
	[ -s "$RUN/qemu.err" ] && { echo "guest.sh: qemu said:" >&2; cat "$RUN/qemu.err" >&2; }
	exit 123; } ;;
*) echo "guest.sh: $KNAME: the guest did not get to run the command (qemu exit $qemu_rc). Boot log:" >&2
	tail -n 40 "$RUN/boot.log" >&2 ;;
esac
[ -s "$RUN/qemu.err" ] && { echo "guest.sh: qemu said:" >&2; cat "$RUN/qemu.err" >&2; }
[ "$qemu_rc" = 124 ] && { echo "guest.sh: $KNAME: the guest was killed after KMATRIX_TIMEOUT=${TMO}s (hung?)" >&2; exit 124; }
exit 125
