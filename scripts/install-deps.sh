#!/bin/sh
# install-deps.sh - install the Debian packages heapsnoop needs to build and
# test, only those missing (so a prepared machine runs no apt-get at all).
# python3 checks the JSON outputs (--json, --speedscope: test_overtime.sh,
# test_pprof.sh, test_syswide.sh) and g++ builds the C++ program whose
# names heapdecode demangles (test_symbolize.sh): a minimal Debian 12 has
# neither.
# heaptrack and valgrind (ms_print) check the whole-run accounting and the
# massif file (tests/tracer/test_vs_heaptrack.sh, test_overtime.sh);
# protobuf-c builds heapdecode --pprof, go tool pprof and protoc read its
# profiles (tests/tracer/test_pprof.sh).
# The release binaries are linked static (Makefile, STATIC): libdw's own
# libraries come in as archives too (liblzma-dev, libbz2-dev). help2man
# makes the man pages, man-db renders them (tests/test_install.sh);
# debuginfod is elfutils' debuginfod server and its client debuginfod-find,
# which heapdecode runs (tests/test_debuginfod.sh).
# Debian's Lua interpreters and their libraries, with the 5.4 and 5.1
# debug files (whose luaV_execute symbol the Lua frames test checks the
# symbol-less way against: tests/interp/test_luafind.c), and node, whose
# JIT frames the perf map names (tests/tracer/test_jit.sh, test_lua.sh).
# python3.11 is Debian's own interpreter, /usr/bin/python3.11, which the
# Python frames' tests and benchmark trace (tests/tracer/test_python.sh,
# tests/interp, bench/pyframes.sh): named by path, as a python3.11 that
# a PATH finds first may be another build (pyenv's).
# libunwind-dev is for the benchmarks only (bench/collector.sh: the preload
# before its own unwinder, bench/unwinders.c); the preload needs none.
# The microcontroller's line (docs/MCU.md, tests/mcu/test_mcu.sh): the
# Cortex-M cross compiler and newlib, for the codec and libhsam built
# freestanding and the firmware, and qemu-system-arm (also the arm64
# line's), which runs it as an mps2-an385 board; gcc-i686-linux-gnu and
# its C library build libhsam for 32-bit Linux (tests/collector/
# test_hsam_i386.sh). Not gcc-multilib: Debian 12's conflicts with
# gcc-aarch64-linux-gnu, and installing it removes the arm64 compiler.
# The last line is the kernel matrix's (tests/kmatrix): qemu, a static
# busybox and cpio for its initramfs, xz and zstd for compressed modules,
# kmod's depmod, the archive keys that sign bullseye; debootstrap makes the
# Debian roots of the distribution test and the guests (tests/distro).
#
# install-deps.sh --arm64 also installs what the arm64 build and its test
# in qemu need (docs/ARCH.md; `make check` runs it): arm64 added to dpkg's
# architectures, the cross compiler, the arm64 -dev packages the Makefile
# links (through multiarch, beside the host's; cmocka for the collector's
# unwinder test, run in the guest) and qemu-system-aarch64. The guest's
# programs load their libraries from its own root (tests/distro), not
# from the host's.
# The cross compiler's own C library and C++ library
# (libc6-dev-arm64-cross, libstdc++-12-dev-arm64-cross: static heapsnoop
# and heapdecode link their libc.a and libstdc++.a) live under
# /usr/lib/gcc-cross and /usr/aarch64-linux-gnu, where it looks, not where
# libstdc++-12-dev:arm64 would put them.
set -e
PKGS="make gcc g++ libc6-dev python3 clang llvm libclang-rt-dev bpftool libbpf-dev libelf-dev
libdw-dev zlib1g-dev libzstd-dev liblzma-dev libbz2-dev libcapstone-dev libcmocka-dev libunwind-dev
pkg-config libjemalloc-dev protobuf-c-compiler libprotobuf-c-dev protobuf-compiler golang-go
binutils util-linux elfutils debuginfod help2man man-db libxml2-utils chromium gdb sqlite3
heaptrack valgrind strace python3.11
gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm gcc-i686-linux-gnu libc6-dev-i386-cross
lua5.4 lua5.1 luajit liblua5.4-0 liblua5.1-0 libluajit-5.1-2 liblua5.4-0-dbg liblua5.1-0-dbg nodejs
qemu-system-x86 busybox-static cpio xz-utils zstd kmod debian-archive-keyring debootstrap"
ARM64_PKGS="gcc-aarch64-linux-gnu libc6-dev-arm64-cross libstdc++-12-dev-arm64-cross
qemu-system-arm libc6-dev:arm64 libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64
zlib1g-dev:arm64 libzstd-dev:arm64 liblzma-dev:arm64 libbz2-dev:arm64 libcapstone-dev:arm64
libprotobuf-c-dev:arm64
libcmocka-dev:arm64"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if [ "${1:-}" = --arm64 ]; then
	PKGS="$PKGS $ARM64_PKGS"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		echo "install-deps: adding arm64 to dpkg's architectures" >&2
		$SUDO dpkg --add-architecture arm64
	fi
fi
missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "install-deps: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# speedscope's own build (npm), in which tests/tracer/test_pprof.sh renders
# heapdecode --speedscope files in Chromium; optional: without npm or a
# registry, that check says it was skipped.
SPEEDSCOPE=/var/cache/heapsnoop/speedscope
if command -v npm > /dev/null &&
   [ ! -f $SPEEDSCOPE/node_modules/speedscope/dist/release/index.html ]; then
	$SUDO npm install --prefix $SPEEDSCOPE --no-audit --no-fund speedscope@1.25.0 \
		> /dev/null 2>&1 ||
		echo "install-deps: speedscope (npm) not installed: test_pprof.sh skips rendering" >&2
fi
exit 0
