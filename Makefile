# SPDX-License-Identifier: MIT
# heapsnoop - build, test and demo. `make V=1` shows the commands.
#
#   make            the tools: build/heapsnoop, build/heapdecode, each one static
#                   file that runs on any Linux of its architecture (STATIC=0:
#                   linked to the shared libraries instead)
#   make demo       install what is missing, build, trace examples/leaky
#   make check      install what is missing, build, run every test
#   make install    PREFIX=/usr/local DESTDIR=: programs, preload and libhsam.a
#                   libraries, headers, pkg-config file, man pages
#   make dist       build/dist/heapsnoop-VERSION-COMMIT-{x86_64,aarch64}.tar.gz
#   make kmatrix    only the tracer tests in other kernels, in qemu (docs/KERNELS.md)
#   make arm64      only the arm64 build's tests, in qemu-system-aarch64 (docs/ARCH.md)
#   make bench      the benchmarks in bench/ (not part of check)

OUTPUT ?= build
CLANG ?= clang
BPFTOOL ?= bpftool
# The architecture built for (docs/ARCH.md): x86 (x86-64) or arm64, this
# machine's by default. `make ARCH=arm64 OUTPUT=build/arm64` on an x86-64
# machine cross-builds with CROSS_COMPILE (aarch64-linux-gnu-, Debian's
# gcc-aarch64-linux-gnu) against the arm64 -dev packages installed
# multiarch (scripts/install-deps.sh --arm64); on an arm64 machine plain
# `make` builds natively. Its BPF object, vmlinux.h and per-architecture
# files (user/tracer/arch/) follow ARCH.
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH ?= $(HOST_ARCH)
ifneq ($(filter-out x86 arm64,$(ARCH)),)
$(error ARCH=$(ARCH): heapsnoop builds for x86 (x86-64) or arm64)
endif
ifneq ($(ARCH),$(HOST_ARCH))
CROSS_COMPILE ?= $(if $(filter arm64,$(ARCH)),aarch64-linux-gnu-,x86_64-linux-gnu-)
ifneq ($(origin CC),command line)
CC := $(CROSS_COMPILE)gcc
endif
ifneq ($(origin AR),command line)
AR := $(CROSS_COMPILE)ar
endif
else ifeq ($(origin CC),default)
CC := gcc
endif

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wno-missing-field-initializers
# Each program's folder, and the one both share (docs/DESIGN.md, the map).
COMMON := user/common
TRACER := user/tracer
DECODE := user/decode
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -I$(COMMON) -I$(OUTPUT)
# A program's files see their own folder and common/, never the other's.
TRACER_CFLAGS := $(ALL_CFLAGS) -I$(TRACER)
# heapdecode's folders, the stages of its pipeline (docs/DESIGN.md); its
# files name another folder's headers by their path from $(DECODE).
DECODE_DIRS := $(DECODE) $(addprefix $(DECODE)/,input model analyses formats formats/pprof)
DECODE_CFLAGS := $(ALL_CFLAGS) -I$(DECODE) -I$(OUTPUT)/proto
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# The version (user/common/version.h) and the commit built (--version,
# make dist): `git describe --always --dirty` in a git checkout of this
# tree, else the commit git archive wrote into user/common/gitcommit
# (export-subst: a source archive), else "unknown".
VERSION := $(shell sed -n 's/^\#define HEAPSNOOP_VERSION "\(.*\)"$$/\1/p' user/common/version.h)
GIT_DESC := $(shell if [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ]; then \
	git describe --always --dirty; else sed -n '/^[0-9a-f]\{7,\}$$/p' user/common/gitcommit; fi)
GIT_DESC := $(or $(GIT_DESC),unknown)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CODEC_SRC := $(wildcard codec/*.c)
CODEC_OBJ := $(patsubst codec/%.c,$(OUTPUT)/codec/%.o,$(CODEC_SRC))
COMMON_SRC := $(wildcard $(COMMON)/*.c)
USER_HDR := $(wildcard $(COMMON)/*.h $(COMMON)/interp/*.h $(TRACER)/*.h $(TRACER)/arch/*.h \
	$(TRACER)/interp/*.h $(DECODE_DIRS:=/*.h)) \
	$(wildcard include/heapsnoop/*.h)
# --pprof: protobuf-c's messages, generated from the official profile.proto.
PROFILE_PB := $(OUTPUT)/proto/profile.pb-c.c
HEAPDECODE_SRC := $(wildcard $(DECODE_DIRS:=/*.c)) $(COMMON_SRC) $(PROFILE_PB)
HEAPDECODE_LIBS := -ldw -lelf -lprotobuf-c -lz -lstdc++ -lm
# The tracer's architecture-specific files: user/tracer/arch/*_$(ARCH).c.
TRACER_ARCH_SRC := $(wildcard $(TRACER)/arch/*_$(ARCH).c)
# Interpreter frames (docs/DESIGN.md): the tracer's part, and the CPython
# pieces it shares with the collector.
PYCOMMON_SRC := $(wildcard $(COMMON)/interp/py*.c)
HEAPSNOOP_SRC := $(wildcard $(TRACER)/*.c) $(wildcard $(TRACER)/interp/*.c) $(TRACER_ARCH_SRC) \
	$(COMMON_SRC) $(wildcard $(COMMON)/interp/*.c)
HEAPSNOOP_LIBS := -lbpf -ldw -lelf -lcapstone -lz -lstdc++ -lm
# The release binaries (README, "One binary for every Linux"): heapsnoop
# and heapdecode linked static-pie, every library above and the C library
# inside (the BPF object is in the skeleton), so that one file runs on any
# Linux of its architecture with BTF: no PT_INTERP, no DT_NEEDED
# (tests/test_static.sh). Position-independent, so the kernel still
# randomizes where they load: both parse files they did not write (a
# stranger's log, a traced program's ELF and CFI) as root. libdw's own
# libraries come in statically too (bz2, lzma); -Wl,--wrap=dlopen refuses
# libdwfl's dlopen of libdebuginfod.so (user/common/nodlopen.c), and
# --fatal-warnings fails the link on any other function that would need
# the machine's shared C library at run time (getpwnam's NSS, ...): the
# -u look-up reads getent or /etc/passwd instead (user/tracer/userdb.c).
# STATIC=0 links them against the shared libraries (a quicker link, and
# the distribution's debug symbols for them); the ASan, fuzz and test
# builds are always dynamic.
STATIC ?= 1
ifeq ($(STATIC),1)
RELEASE_LDFLAGS := -static-pie -Wl,--wrap=dlopen -Wl,--fatal-warnings
RELEASE_LIBS := -lbz2 -llzma
endif
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Iinclude

.PHONY: FORCE all clean check demo man install dist deps deps-arm64 bench fuzz fuzz-run fuzz-run-records kmatrix arm64 arm64-build
.DEFAULT_GOAL := all

all: $(OUTPUT)/heapdecode $(OUTPUT)/heapsnoop $(OUTPUT)/libheapsnoop_preload.so

$(OUTPUT) $(OUTPUT)/codec $(OUTPUT)/collector $(OUTPUT)/user $(OUTPUT)/tests $(OUTPUT)/asan $(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

# The commit, rewritten only when it changed (so that only then both relink).
$(OUTPUT)/gitversion.h: FORCE | $(OUTPUT)
	$(Q)echo '#define HEAPSNOOP_GIT "$(GIT_DESC)"' | cmp -s - $@ || \
		echo '#define HEAPSNOOP_GIT "$(GIT_DESC)"' > $@

# --- codec: a static library with no BPF dependency -------------------------
$(OUTPUT)/codec/%.o: codec/%.c include/heapsnoop/codec.h | $(OUTPUT)/codec
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/libhscodec.a: $(CODEC_OBJ)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

# --- BPF object and its skeleton ---------------------------------------------
$(OUTPUT)/heapsnoop.bpf.o: bpf/heapsnoop.bpf.c $(wildcard bpf/*.h) include/heapsnoop/event.h include/heapsnoop/interp.h \
		include/heapsnoop/arch.h vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)llvm-strip -g $@.tmp -o $@ && rm -f $@.tmp

$(OUTPUT)/heapsnoop.skel.h: $(OUTPUT)/heapsnoop.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name heapsnoop_bpf > $@

# --- heapsnoop ----------------------------------------------------------------
$(OUTPUT)/heapsnoop: $(HEAPSNOOP_SRC) $(USER_HDR) $(OUTPUT)/heapsnoop.skel.h \
		$(OUTPUT)/libhscodec.a $(OUTPUT)/gitversion.h | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(RELEASE_LDFLAGS) $(HEAPSNOOP_SRC) $(OUTPUT)/libhscodec.a \
		$(HEAPSNOOP_LIBS) $(RELEASE_LIBS) -o $@

# --- heapdecode ---------------------------------------------------------------
$(OUTPUT)/proto/profile.pb-c.h: $(PROFILE_PB)
$(PROFILE_PB): $(DECODE)/formats/pprof/proto/profile.proto
	$(call msg,PROTOC-C,$@)
	$(Q)mkdir -p $(OUTPUT)/proto
	$(Q)protoc-c --c_out=$(OUTPUT)/proto --proto_path=$(DECODE)/formats/pprof/proto $<

$(OUTPUT)/heapdecode: $(HEAPDECODE_SRC) $(USER_HDR) $(OUTPUT)/proto/profile.pb-c.h $(OUTPUT)/libhscodec.a \
		$(OUTPUT)/gitversion.h | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(DECODE_CFLAGS) $(RELEASE_LDFLAGS) $(HEAPDECODE_SRC) $(OUTPUT)/libhscodec.a \
		$(HEAPDECODE_LIBS) $(RELEASE_LIBS) -o $@

# --- the in-process collector (user/collector, docs/COLLECTOR.md) ------------
# The alloc-metadata library (with the record lines and the codec it
# writes through), and the preload library built on it; all -fPIC.
COLLECTOR := user/collector
AM_SRC := $(COLLECTOR)/alloc_metadata.c $(COLLECTOR)/modmaps.c $(COLLECTOR)/stacktail.c \
	$(COMMON)/records.c $(COMMON)/text.c $(COMMON)/sampling.c $(CODEC_SRC)
# The collector's unwinder: the walk and its cache, its steps, an address's
# rule from .eh_frame (the FDE, the CFA program, the expressions), the
# dlclose that empties the cache.
LOCALSTACK_SRC := $(COLLECTOR)/localstack.c $(COLLECTOR)/framestep.c $(COLLECTOR)/ehframe.c \
	$(COLLECTOR)/ehframe_cfa.c $(COLLECTOR)/ehframe_expr.c $(COLLECTOR)/dlclose.c
PRELOAD_SRC := $(AM_SRC) $(COLLECTOR)/preload.c $(COLLECTOR)/carrier.c $(LOCALSTACK_SRC) \
	$(COLLECTOR)/sampler.c $(COLLECTOR)/stackcache.c
COLLECTOR_CFLAGS := $(ALL_CFLAGS) -I$(COLLECTOR) -fPIC -pthread
COLLECTOR_HDR := include/heapsnoop/alloc_metadata.h include/heapsnoop/codec.h \
	$(wildcard $(COLLECTOR)/*.h) $(COMMON)/records.h $(COMMON)/text.h $(COMMON)/sampling.h

$(OUTPUT)/libhsam.a: $(AM_SRC) $(COLLECTOR_HDR) | $(OUTPUT)/collector
	$(call msg,AR,$@)
	$(Q)cd $(OUTPUT)/collector && for f in $(abspath $(AM_SRC)); do \
		$(CC) $(patsubst -I%,-I$(CURDIR)/%,$(COLLECTOR_CFLAGS)) -c $$f || exit 1; done
	$(Q)$(AR) rcs $@ $(addprefix $(OUTPUT)/collector/,$(notdir $(AM_SRC:.c=.o)))

# The preload loads into programs of older distributions: it is compiled
# and linked against the oldest C library it supports, Debian 11's glibc
# 2.31, as a sysroot (docs/COLLECTOR.md, "Old C libraries"):
#   PRELOAD_SYSROOT=bullseye  fetched once into /var/cache/heapsnoop/sysroot
#                             (scripts/glibc-sysroot.sh; the default)
#   PRELOAD_SYSROOT=DIR       a sysroot of that layout made otherwise
#   PRELOAD_SYSROOT=          this machine's own C library (its versions)
# Its -B and -L come first: Debian's gcc searches /usr/lib/<triplet>
# before a --sysroot's own libraries. log() is bound to its first version
# (oldlibc.c). Frame pointers kept, so that HEAPSNOOP_UNWIND=fp climbs out of it.
PRELOAD_SYSROOT ?= bullseye
PRELOAD_TRIPLET := $(if $(filter arm64,$(ARCH)),aarch64-linux-gnu,x86_64-linux-gnu)
PRELOAD_SRC += $(COLLECTOR)/oldlibc.c
PRELOAD_SYSROOT_SH = sysroot='$(PRELOAD_SYSROOT)'; \
	if [ "$$sysroot" = bullseye ]; then sysroot=$$(scripts/glibc-sysroot.sh $(ARCH)) || exit 1; fi; \
	sysflags=$${sysroot:+"--sysroot=$$sysroot -B$$sysroot/usr/lib/$(PRELOAD_TRIPLET)/ \
		-L$$sysroot/usr/lib/$(PRELOAD_TRIPLET) -L$$sysroot/lib/$(PRELOAD_TRIPLET)"}

$(OUTPUT)/libheapsnoop_preload.so: $(PRELOAD_SRC) $(COLLECTOR_HDR) | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(PRELOAD_SYSROOT_SH); \
	$(CC) $$sysflags $(COLLECTOR_CFLAGS) -shared -fvisibility=hidden -fno-omit-frame-pointer \
		-ftls-model=initial-exec -Wl,-z,defs -Wl,--wrap=log $(PRELOAD_SRC) -ldl -lm -o $@

# prog_collect against the same sysroot, run by its own ld.so and libc
# (tests/collector/test_preload_oldlibc.sh).
$(OUTPUT)/tests/prog_collect_old: tests/collector/prog_collect.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(PRELOAD_SYSROOT_SH); [ -n "$$sysroot" ] || sysroot=$$(scripts/glibc-sysroot.sh $(ARCH)) || exit 1; \
	sysflags="--sysroot=$$sysroot -B$$sysroot/usr/lib/$(PRELOAD_TRIPLET)/ -L$$sysroot/usr/lib/$(PRELOAD_TRIPLET) \
		-L$$sysroot/lib/$(PRELOAD_TRIPLET)"; $(CC) $$sysflags $(PROG_CFLAGS) $< -o $@

# heapsnoop --preload with nothing but heapsnoop: the collector of the
# same build and architecture embedded (user/tracer/preload.c's .incbin of
# a copy without debug sections; its .eh_frame stays, the walk needs it).
$(OUTPUT)/collector/libheapsnoop_preload.embed.so: $(OUTPUT)/libheapsnoop_preload.so | $(OUTPUT)/collector
	$(call msg,STRIP,$@)
	$(Q)llvm-strip --strip-debug $< -o $@

$(OUTPUT)/preload_blob.h: $(OUTPUT)/collector/libheapsnoop_preload.embed.so
	$(call msg,GEN,$@)
	$(Q)printf '/* generated: the collector heapsnoop --preload embeds */\n#define HS_PRELOAD_BLOB "%s"\n' \
		'$(abspath $<)' > $@

$(OUTPUT)/heapsnoop: $(OUTPUT)/preload_blob.h

$(OUTPUT)/am_pool: examples/am_pool.c $(OUTPUT)/libhsam.a | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 -fno-omit-frame-pointer -fno-inline $< $(OUTPUT)/libhsam.a -pthread -lm -o $@

# --- man pages, install, dist ------------------------------------------------
# heapsnoop(8) and heapdecode(1), made by help2man from each program's
# --help and the README's content in docs/man/*.h2m (the date: the last
# commit's). They come from running the programs, so a cross build takes
# them from a native build's directory: MAN_FROM (make dist passes it).
MAN_FROM ?= $(if $(filter $(HOST_ARCH),$(ARCH)),$(OUTPUT),build)
MAN_DATE := $(shell git log -1 --format=%ct 2>/dev/null)
MAN_DATE := $(or $(MAN_DATE),0)
HELP2MAN := SOURCE_DATE_EPOCH=$(MAN_DATE) help2man --no-info --version-string=$(VERSION)

$(OUTPUT)/man/heapsnoop.8: $(MAN_FROM)/heapsnoop docs/man/heapsnoop.h2m
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(HELP2MAN) --section=8 --name="trace the heap of a process with eBPF" \
		--include=docs/man/heapsnoop.h2m -o $@ $<

$(OUTPUT)/man/heapdecode.1: $(MAN_FROM)/heapdecode docs/man/heapdecode.h2m
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(HELP2MAN) --section=1 --name="decode, symbolize and report heapsnoop's allocation records" \
		--include=docs/man/heapdecode.h2m -o $@ $<

MAN_PAGES := $(OUTPUT)/man/heapsnoop.8 $(OUTPUT)/man/heapdecode.1
man: $(MAN_PAGES)

# make install PREFIX=/usr/local DESTDIR=: the two programs, the preload
# library, libhsam.a with its headers and a pkg-config file
# (heapsnoop-am), the man pages. PC_PREFIX is the pkg-config file's
# prefix (make dist's is relative to the file, so the tarball can go
# anywhere).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
PC_PREFIX ?= $(PREFIX)
# The alloc-metadata library's public headers: alloc_metadata.h and what it includes.
AM_HEADERS := include/heapsnoop/alloc_metadata.h include/heapsnoop/codec.h

# heapsnoop-am.pc, written by install (its paths are install's).
define PC_TEXT
prefix=$(PC_PREFIX)
libdir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
includedir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))

Name: heapsnoop-am
Description: heapsnoop's alloc-metadata library: an allocator's live blocks as heapsnoop's records
Version: $(VERSION)
Cflags: -I$${includedir}
Libs: -L$${libdir} -lhsam -lm -pthread
endef
export PC_TEXT

install: all $(OUTPUT)/libhsam.a $(MAN_PAGES)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 0755 -t $(DESTDIR)$(BINDIR) $(OUTPUT)/heapsnoop $(OUTPUT)/heapdecode
	$(Q)install -D -m 0644 -t $(DESTDIR)$(LIBDIR) $(OUTPUT)/libheapsnoop_preload.so $(OUTPUT)/libhsam.a
	$(Q)install -D -m 0644 -t $(DESTDIR)$(INCLUDEDIR)/heapsnoop $(AM_HEADERS)
	$(Q)mkdir -p $(DESTDIR)$(PKGCONFIGDIR) && \
		printf '%s\n' "$$PC_TEXT" > $(DESTDIR)$(PKGCONFIGDIR)/heapsnoop-am.pc
	$(Q)install -D -m 0644 -t $(DESTDIR)$(MANDIR)/man8 $(OUTPUT)/man/heapsnoop.8
	$(Q)install -D -m 0644 -t $(DESTDIR)$(MANDIR)/man1 $(OUTPUT)/man/heapdecode.1

# make dist: $(OUTPUT)/dist/heapsnoop-VERSION-COMMIT-MACHINE.tar.gz for
# x86_64 and aarch64, each an install tree (bin, lib, include, share/man)
# under a folder of that name, owner root, dated by the last commit.
DIST_DIR := $(OUTPUT)/dist
DIST_BASE := heapsnoop-$(VERSION)-$(GIT_DESC)
DIST_TAR = tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(MAN_DATE) \
	-C $(DIST_DIR) -cf - $(1) | gzip -n9 > $(DIST_DIR)/$(1).tar.gz
ARM64_MAKE = $(MAKE) --no-print-directory ARCH=arm64 OUTPUT=$(ARM64_OUT) CC=$(ARM64_CROSS)gcc \
	AR=$(ARM64_CROSS)ar

dist: all man
	$(Q)[ $(HOST_ARCH) = x86 ] || { echo "make dist: on an x86-64 machine (it cross-builds arm64)" >&2; exit 1; }
	$(Q)rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	$(Q)$(MAKE) --no-print-directory install DESTDIR=$(abspath $(DIST_DIR))/$(DIST_BASE)-x86_64 \
		PREFIX= PC_PREFIX='$$$${pcfiledir}/../..'
	$(Q)$(ARM64_MAKE) install DESTDIR=$(abspath $(DIST_DIR))/$(DIST_BASE)-aarch64 \
		PREFIX= PC_PREFIX='$$$${pcfiledir}/../..' MAN_FROM=$(abspath $(OUTPUT))
	$(call msg,DIST,$(DIST_DIR)/$(DIST_BASE)-x86_64.tar.gz)
	$(Q)$(call DIST_TAR,$(DIST_BASE)-x86_64)
	$(call msg,DIST,$(DIST_DIR)/$(DIST_BASE)-aarch64.tar.gz)
	$(Q)$(call DIST_TAR,$(DIST_BASE)-aarch64)
	$(Q)rm -rf $(DIST_DIR)/$(DIST_BASE)-x86_64 $(DIST_DIR)/$(DIST_BASE)-aarch64

# --- tests --------------------------------------------------------------------
$(OUTPUT)/tests/test_codec: tests/test_codec.c $(OUTPUT)/libhscodec.a | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(OUTPUT)/libhscodec.a -lcmocka -o $@

$(OUTPUT)/tests/test_records: tests/test_records.c $(COMMON)/records.c $(CODEC_SRC) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $^ -lcmocka -o $@

$(OUTPUT)/tests/test_alloc_metadata: tests/collector/test_alloc_metadata.c $(AM_SRC) $(COLLECTOR_HDR) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(filter %.c,$^) -pthread -lcmocka -lm -o $@

# The collector's unwinder on frames of known shapes (tests/collector/
# test_unwind.c): the shapes without frame pointers, one frame with a frame
# pointer and no CFI, two libraries of the shapes loaded in turn.
SHAPES_CFLAGS := -O2 -g -fomit-frame-pointer -pthread
$(OUTPUT)/tests/unwind_shapes.o: tests/collector/unwind_shapes.c tests/collector/unwind_shapes.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(SHAPES_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/unwind_nocfi.o: tests/collector/unwind_nocfi.c tests/collector/unwind_shapes.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -fno-omit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables \
		-c $< -o $@

$(OUTPUT)/tests/libshapes_a.so $(OUTPUT)/tests/libshapes_b.so: $(OUTPUT)/tests/libshapes_%.so: \
		tests/collector/unwind_swap.S tests/collector/unwind_shapes.c tests/collector/unwind_shapes.h \
		| $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(SHAPES_CFLAGS) -DSHAPES_LIB $(if $(filter b,$*),-DSHAPES_PAD -DSWAP_B) -fPIC -shared \
		-fvisibility=hidden $(filter %.S %.c,$^) -o $@

$(OUTPUT)/tests/test_unwind: tests/collector/test_unwind.c $(LOCALSTACK_SRC) \
		$(OUTPUT)/tests/unwind_shapes.o $(OUTPUT)/tests/unwind_nocfi.o $(COLLECTOR_HDR) \
		$(OUTPUT)/tests/libshapes_a.so $(OUTPUT)/tests/libshapes_b.so | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(COLLECTOR) -Itests/collector $(filter %.c %.o,$^) -rdynamic \
		-pthread -ldl -lcmocka -o $@

$(OUTPUT)/tests/prog_collect: tests/collector/prog_collect.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) $< -o $@

# heapdecode's model fed real record lines: its folder and the reader's,
# with common/ and the codec.
$(OUTPUT)/tests/test_model: tests/decode/test_model.c $(wildcard $(DECODE)/model/*.c) \
		$(wildcard $(DECODE)/input/*.c) $(COMMON_SRC) $(CODEC_SRC) $(USER_HDR) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(DECODE_CFLAGS) $(SAN) $(filter %.c,$^) -lelf -ldw -lz -lstdc++ -lm -lcmocka -o $@

# The CPython pieces the tracer and the collector share (user/common/interp/).
$(OUTPUT)/tests/test_pylines: tests/interp/test_pylines.c $(PYCOMMON_SRC) $(wildcard $(COMMON)/interp/*.h) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(filter %.c,$^) -lcmocka -o $@

# The tracer's CPython finder and resolver on real binaries and a real
# process (tests/interp/test_pyfind.sh).
$(OUTPUT)/tests/test_pyfind: tests/interp/test_pyfind.c $(TRACER)/interp/pyfind.c \
		$(TRACER)/interp/libctsd.c $(TRACER)/interp/pycache.c $(TRACER)/arch/pydecode_$(ARCH).c \
		$(TRACER)/arch/probesite_$(ARCH).c $(TRACER)/elffile.c $(COMMON)/elfseg.c $(COMMON)/htab.c \
		$(PYCOMMON_SRC) $(USER_HDR) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(filter %.c,$^) -pthread -ldw -lelf -lcapstone -lcmocka -o $@

# The splice of interpreter frames among native ones.
$(OUTPUT)/tests/test_splice: tests/interp/test_splice.c $(TRACER)/interp/splice.c \
		$(TRACER)/interp/splice.h | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(filter %.c,$^) -lcmocka -o $@

$(OUTPUT)/tests/test_frametab: tests/test_frametab.c $(COMMON)/frametab.c $(COMMON)/records.c \
		$(COMMON)/htab.c $(COMMON)/text.c $(CODEC_SRC) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $^ -lcmocka -o $@

# The Lua pieces the tracer and the collector share (user/common/interp/):
# layouts, prototypes, names, the walk; tested against Debian's interpreters.
LUACOMMON_SRC := $(wildcard $(COMMON)/interp/lua*.c)

$(OUTPUT)/tests/test_lua: tests/interp/test_lua.c $(LUACOMMON_SRC) $(COMMON)/htab.c \
		$(wildcard $(COMMON)/interp/lua*.h) include/heapsnoop/luaframe.h | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(filter %.c,$^) -lcmocka -o $@

# The BPF side's Lua walk alone (bpf/lua.h), against the loader's.
$(OUTPUT)/tests/luawalk.bpf.o: tests/interp/luawalk.bpf.c bpf/lua.h include/heapsnoop/luaframe.h \
		include/heapsnoop/event.h vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/tests
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Ibpf -c $< -o $@

$(OUTPUT)/tests/luawalk.skel.h: $(OUTPUT)/tests/luawalk.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name luawalk_bpf > $@

$(OUTPUT)/tests/test_luabpf: tests/interp/test_luabpf.c $(OUTPUT)/tests/luawalk.skel.h $(LUACOMMON_SRC) \
		$(COMMON)/htab.c | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OUTPUT)/tests $(filter %.c,$^) -lbpf -lelf -lz \
		-lcmocka -o $@

$(OUTPUT)/tests/test_luafind: tests/interp/test_luafind.c $(TRACER)/interp/luafind.c $(TRACER)/elffile.c \
		$(COMMON)/elfseg.c $(COMMON)/text.c $(TRACER)/interp/luafind.h | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(filter %.c,$^) -ldw -lelf \
		-lz -lcmocka -o $@

$(OUTPUT)/tests/test_luasegs: tests/interp/test_luasegs.c $(TRACER)/interp/luasegs.c \
		$(TRACER)/interp/luasegs.h | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(filter %.c,$^) -lcmocka -o $@

$(OUTPUT)/tests/test_htab: tests/test_htab.c $(COMMON)/htab.c | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $^ -lcmocka -o $@

$(OUTPUT)/tests/test_suppress: tests/test_suppress.c $(COMMON)/suppress.c $(COMMON)/msg.c | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $^ -lcmocka -o $@

$(OUTPUT)/tests/test_tracker: tests/test_tracker.c $(TRACER)/tracker.c $(COMMON)/stacks.c $(COMMON)/records.c $(COMMON)/htab.c $(OUTPUT)/libhscodec.a | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(filter %.c,$^) $(OUTPUT)/libhscodec.a -lcmocka -o $@

$(OUTPUT)/tests/test_pace: tests/test_pace.c $(TRACER)/pace.c | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $^ -lcmocka -o $@

$(OUTPUT)/tests/test_freelog: tests/test_freelog.c $(TRACER)/freelog.c | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $^ -lcmocka -o $@

$(OUTPUT)/tests/test_perfmap: tests/test_perfmap.c $(TRACER)/perfmap.c $(TRACER)/perfmap.h | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(filter %.c,$^) -lcmocka -o $@

$(OUTPUT)/tests/test_trace: tests/test_trace.c $(TRACER)/trace.c $(TRACER)/tracker.c $(TRACER)/acct.c \
		$(COMMON)/stacks.c $(COMMON)/records.c $(COMMON)/mapset.c $(TRACER)/procmaps.c $(TRACER)/buildid.c $(TRACER)/elffile.c $(COMMON)/elfseg.c $(COMMON)/text.c \
		$(COMMON)/htab.c $(TRACER)/fileid.c $(COMMON)/sampling.c \
		$(TRACER)/cfi.c $(TRACER)/unwind.c $(TRACER)/arch/regs_$(ARCH).c $(TRACER)/status.c $(COMMON)/msg.c \
		$(COMMON)/frametab.c $(TRACER)/jitnames.c $(TRACER)/perfmap.c $(OUTPUT)/libhscodec.a | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(filter %.c,$^) $(OUTPUT)/libhscodec.a -lbpf -lelf -ldw -lcmocka -lm -o $@

$(OUTPUT)/tests/test_probesite: tests/test_probesite.c $(TRACER)/arch/probesite_x86.c $(TRACER)/elffile.c $(COMMON)/elfseg.c | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $^ -lcapstone -lelf -lcmocka -o $@

# arm64's probe sites, tested on any machine (capstone decodes both).
$(OUTPUT)/tests/test_probesite_arm64: tests/test_probesite_arm64.c $(TRACER)/arch/probesite_arm64.c \
		$(TRACER)/elffile.c $(COMMON)/elfseg.c | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $^ -lcapstone -lelf -lcmocka -o $@

# Programs the tracer tests trace: frame pointers, no inlining, no sibling
# calls, so their stacks are exactly their source's call chains.
PROG_CFLAGS := -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread
TRACER_PROGS := $(patsubst tests/tracer/prog_%.c,$(OUTPUT)/tests/prog_%,$(wildcard tests/tracer/prog_*.c))

$(OUTPUT)/tests/prog_static: tests/tracer/prog_static.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) -static $< -o $@

# jemalloc's own API and C++ operators, linked in (not through libc's malloc).
$(OUTPUT)/tests/prog_jemalloc: tests/tracer/prog_jemalloc.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) $< -ljemalloc -o $@

# An allocator library whose calls can end their thread (test_threads.sh).
$(OUTPUT)/tests/libexitcall.so: tests/tracer/libexitcall.c tests/tracer/libexitcall.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) -fPIC -shared $< -o $@

$(OUTPUT)/tests/prog_slotexit: tests/tracer/prog_slotexit.c tests/tracer/libexitcall.h \
		$(OUTPUT)/tests/libexitcall.so | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) $< -L$(OUTPUT)/tests -lexitcall -Wl,-rpath,'$$ORIGIN' -o $@

# arm64 only (tests/arm64/test_pac.sh): return addresses signed on the stack.
$(OUTPUT)/tests/prog_semantics_pac: tests/tracer/prog_semantics.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) -mbranch-protection=standard $< -o $@

$(OUTPUT)/tests/prog_%: tests/tracer/prog_%.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) $< -o $@

# Debian's python3.11 for the kernel matrix's guests, whose root (trixie)
# has none: a copy they run from the build directory, its standard library
# the host's /usr/lib/python3.11 (tests/kmatrix/run.sh shows it them).
$(OUTPUT)/tests/python3.11: /usr/bin/python3.11 | $(OUTPUT)/tests
	$(call msg,CP,$@)
	$(Q)cp $< $@

# The unwinding test's program and libraries (tests/unwind): no frame
# pointers anywhere but libfp.so, which has frame pointers and no CFI.
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer
UNWIND_PROGS := $(OUTPUT)/tests/prog_nofp $(OUTPUT)/tests/libnofp_late.so

$(OUTPUT)/tests/libnofp.so $(OUTPUT)/tests/libnofp_late.so: $(OUTPUT)/tests/lib%.so: \
		tests/unwind/lib%.c tests/unwind/nofp.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -fPIC -shared $< -o $@

$(OUTPUT)/tests/libfp.so: tests/unwind/libfp.c tests/unwind/nofp.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -fno-omit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables \
		-fPIC -shared $< -o $@

$(OUTPUT)/tests/prog_nofp: tests/unwind/prog_nofp.c tests/unwind/nofp.h $(OUTPUT)/tests/libnofp.so \
		$(OUTPUT)/tests/libfp.so | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -pthread $< -o $@ -L$(OUTPUT)/tests -lnofp -lfp -ldl \
		-Wl,-rpath,'$$ORIGIN'

$(OUTPUT)/leaky: examples/leaky.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) -O1 -g -fno-omit-frame-pointer $< -o $@

# The same unit suite and tool under ASan+UBSan.
$(OUTPUT)/asan/test_codec: tests/test_codec.c $(CODEC_SRC) | $(OUTPUT)/asan
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $^ -lcmocka -o $@

$(OUTPUT)/asan/heapdecode: $(HEAPDECODE_SRC) $(CODEC_SRC) $(USER_HDR) $(OUTPUT)/proto/profile.pb-c.h \
		$(OUTPUT)/gitversion.h | $(OUTPUT)/asan
	$(call msg,LINK,$@)
	$(Q)$(CC) $(DECODE_CFLAGS) $(SAN) $(HEAPDECODE_SRC) $(CODEC_SRC) $(HEAPDECODE_LIBS) -o $@

# libFuzzer: decoder and line scanner; the record-line parser.
FUZZ_CFLAGS := $(filter-out -Wshadow,$(DECODE_CFLAGS)) -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all

$(OUTPUT)/fuzz/fuzz_decode: tests/fuzz/fuzz_decode.c $(CODEC_SRC) $(DECODE)/input/tokscan.c $(DECODE)/input/recconv.c \
		$(COMMON)/msg.c | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ -o $@

$(OUTPUT)/fuzz/fuzz_records: tests/fuzz/fuzz_records.c $(COMMON)/records.c $(CODEC_SRC) | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ -o $@

fuzz: $(OUTPUT)/fuzz/fuzz_decode $(OUTPUT)/fuzz/fuzz_records

# fuzz-run: the decoder for FUZZ_SECONDS; fuzz-run-records: the record
# parser for FUZZ_RECORDS_SECONDS (a smaller grammar).
FUZZ_SECONDS ?= 30
FUZZ_RECORDS_SECONDS ?= 10
fuzz-run: $(OUTPUT)/fuzz/fuzz_decode
	$(Q)rm -rf $(OUTPUT)/fuzz/corpus && mkdir -p $(OUTPUT)/fuzz/corpus
	$(Q)$< -max_total_time=$(FUZZ_SECONDS) -timeout=5 -print_final_stats=1 \
		-artifact_prefix=$(OUTPUT)/fuzz/ $(OUTPUT)/fuzz/corpus tests/fuzz/seeds

fuzz-run-records: $(OUTPUT)/fuzz/fuzz_records
	$(Q)rm -rf $(OUTPUT)/fuzz/records-corpus && mkdir -p $(OUTPUT)/fuzz/records-corpus
	$(Q)$< -max_total_time=$(FUZZ_RECORDS_SECONDS) -timeout=5 -print_final_stats=1 \
		-artifact_prefix=$(OUTPUT)/fuzz/ $(OUTPUT)/fuzz/records-corpus tests/fuzz/records-seeds

# What building and tracing here need; deps-arm64 adds the cross compiler,
# the arm64 libraries and qemu the arm64 build and test need (make check).
deps:
	$(Q)scripts/install-deps.sh

deps-arm64:
	$(Q)scripts/install-deps.sh --arm64

# Trace the bundled leaky example, show its records, decode and report them.
demo: deps
	$(Q)$(MAKE) --no-print-directory all $(OUTPUT)/leaky
	$(Q)$(OUTPUT)/heapsnoop --summary -o $(OUTPUT)/leaky.heap -- $(OUTPUT)/leaky
	@echo; echo "== the records heapsnoop wrote ($(OUTPUT)/leaky.heap):"
	$(Q)cat $(OUTPUT)/leaky.heap
	@echo; echo "== decoded: heapdecode < $(OUTPUT)/leaky.heap"
	$(Q)$(OUTPUT)/heapdecode < $(OUTPUT)/leaky.heap | grep 'live '
	@echo; echo "== symbolized: heapdecode --report $(OUTPUT)/leaky.heap"
	$(Q)$(OUTPUT)/heapdecode --report $(OUTPUT)/leaky.heap

check: deps-arm64
	$(Q)$(MAKE) --no-print-directory all $(OUTPUT)/leaky $(OUTPUT)/tests/test_codec $(OUTPUT)/tests/test_tracker \
		$(OUTPUT)/tests/test_records $(OUTPUT)/tests/test_frametab $(OUTPUT)/tests/test_htab \
		$(OUTPUT)/tests/test_suppress \
		$(OUTPUT)/tests/test_model \
		$(OUTPUT)/tests/test_pace $(OUTPUT)/tests/test_freelog $(OUTPUT)/tests/test_perfmap \
		$(OUTPUT)/tests/test_pylines $(OUTPUT)/tests/test_splice $(OUTPUT)/tests/test_pyfind \
		$(OUTPUT)/tests/test_lua $(OUTPUT)/tests/test_luabpf $(OUTPUT)/tests/test_luafind \
		$(OUTPUT)/tests/test_luasegs \
		$(OUTPUT)/tests/test_alloc_metadata $(OUTPUT)/tests/test_unwind $(OUTPUT)/tests/prog_collect \
		$(OUTPUT)/tests/prog_collect_old \
		$(OUTPUT)/am_pool \
		$(OUTPUT)/tests/test_trace $(OUTPUT)/tests/test_probesite $(OUTPUT)/tests/test_probesite_arm64 \
		$(OUTPUT)/asan/test_codec $(OUTPUT)/asan/heapdecode fuzz $(TRACER_PROGS) $(UNWIND_PROGS) \
		$(OUTPUT)/tests/python3.11 man arm64-build
	$(Q)tests/run.sh $(OUTPUT)

# KMATRIX_KERNELS="6.1" for one kernel.
kmatrix: deps
	$(Q)$(MAKE) --no-print-directory all $(TRACER_PROGS) $(UNWIND_PROGS) $(OUTPUT)/tests/prog_collect \
		$(OUTPUT)/tests/python3.11
	$(Q)tests/kmatrix/run.sh $(OUTPUT)

# --- arm64 (docs/ARCH.md): the tools and the programs its test traces, built
# for arm64 into $(OUTPUT)/arm64 (cross, or natively on an arm64 machine);
# tests/arm64/run.sh runs them in qemu-system-aarch64 and symbolizes logs
# across architectures with this build's heapdecode.
ARM64_OUT := $(OUTPUT)/arm64
ARM64_PROGS := $(addprefix $(ARM64_OUT)/tests/,prog_semantics prog_waiter prog_threads prog_nofp \
	libnofp_late.so prog_semantics_pac prog_slotexit libexitcall.so prog_collect test_unwind)

ARM64_CROSS := $(if $(filter arm64,$(HOST_ARCH)),,aarch64-linux-gnu-)

arm64-build:
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 OUTPUT=$(ARM64_OUT) CC=$(ARM64_CROSS)gcc \
		AR=$(ARM64_CROSS)ar all $(ARM64_PROGS)

arm64: deps-arm64
	$(Q)$(MAKE) --no-print-directory all $(OUTPUT)/asan/heapdecode $(UNWIND_PROGS) \
		$(OUTPUT)/tests/prog_semantics arm64-build
	$(Q)tests/arm64/run.sh $(OUTPUT)

bench: deps all
	$(Q)bench/run.sh $(OUTPUT)

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)
