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
# A program's files see their own folder and common/, never the other's;
# they name another folder's header by its path from their program's
# ("track/trace.h", "model/model.h"). The folders: TRACER_LIB_DIRS,
# DECODE_LIB_DIRS below.
TRACER_INC := -I$(TRACER)
DECODE_INC := -I$(DECODE) -I$(OUTPUT)/proto
TRACER_CFLAGS := $(ALL_CFLAGS) $(TRACER_INC)
DECODE_CFLAGS := $(ALL_CFLAGS) $(DECODE_INC)
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
COMMON_SRC := $(wildcard $(COMMON)/*.c $(COMMON)/records/*.c)
# --pprof: protobuf-c's messages, generated from the official profile.proto.
PROFILE_PB := $(OUTPUT)/proto/profile.pb-c.c

# One static library per folder: its .c files, compiled into obj/ (the
# folder's path below it), archived as libhs_<folder>.a, the folder's
# path under user/ with _ for / (libhs_common.a, libhs_tracer_track.a,
# libhs_decode_formats_pprof.a; the codec's is libhscodec.a). A program
# or a test links the libraries of the folders it uses and no source; the
# lists below are in link order, each library before those it needs and
# none needing one before it (docs/DESIGN.md: no folder uses a later
# stage). A program's own top folder (main, its options, heapsnoop's
# session) is linked as objects. The same libraries are built under
# ASan+UBSan into $(OUTPUT)/asan/ and for libFuzzer into $(OUTPUT)/fuzz/.
# interp/ (interpreter frames: CPython found, registered, its frames named
# and spliced) uses maps/ and arch/; common/interp/ holds the CPython
# pieces the tracer and the collector share (layouts, line tables, code
# objects through a reader), on common/.
TRACER_LIB_DIRS := $(addprefix $(TRACER)/,output track unwind stream attach interp maps arch)
DECODE_LIB_DIRS := $(addprefix $(DECODE)/,formats formats/pprof analyses model input)
# user/common/records/: the record lines (their writers and parsers), used
# by user/common's stacks and frame tables: linked after them.
COMMON_DIRS := $(COMMON) $(COMMON)/records
LIB_DIRS := $(TRACER_LIB_DIRS) $(DECODE_LIB_DIRS) $(COMMON)/interp $(COMMON_DIRS) codec
# A folder's sources; the tracer's arch/: this architecture's files
# (*_$(ARCH).c); formats/pprof: with protobuf-c's generated messages.
lib_src = $(if $(filter $(TRACER)/arch,$(1)),$(wildcard $(1)/*_$(ARCH).c),$(wildcard $(1)/*.c)) \
	$(if $(filter $(DECODE)/formats/pprof,$(1)),$(PROFILE_PB))
lib_name = $(if $(filter codec,$(1)),libhscodec.a,libhs_$(subst /,_,$(patsubst user/%,%,$(1))).a)
# $(call libs,VARIANT_DIR,FOLDERS): those folders' libraries in that variant.
libs = $(foreach d,$(2),$(1)/$(call lib_name,$(d)))
# $(call objs,VARIANT_DIR,SOURCES): their objects.
objs = $(patsubst %.c,$(1)/obj/%.o,$(patsubst $(OUTPUT)/%,%,$(2)))

# The collector's folder; the live table's reader (include/heapsnoop/
# livedump.h, user/collector/livetable/), which the preload's own last
# dumps and heapsnoop --preload's share.
COLLECTOR := user/collector
CLIVE := $(COLLECTOR)/livetable
LIVEDUMP_SRC := $(CLIVE)/ltread.c $(CLIVE)/ltdump.c $(CLIVE)/ltfmt.c
# heapsnoop's top: main, its options, the session, and --preload's side
# (user/tracer/preload/: it holds every image's table and writes the dumps
# with the collector's reader), linked as objects.
TRACER_TOP_SRC := $(wildcard $(TRACER)/*.c $(TRACER)/preload/*.c) $(LIVEDUMP_SRC)
HEAPSNOOP_A = $(call libs,$(1),$(TRACER_LIB_DIRS) $(COMMON)/interp $(COMMON_DIRS) codec)
HEAPSNOOP_LIBS := -lbpf -ldw -lelf -lcapstone -lzstd -lz -lstdc++ -lm
DECODE_TOP_SRC := $(wildcard $(DECODE)/*.c)
HEAPDECODE_A = $(call libs,$(1),$(DECODE_LIB_DIRS) $(COMMON_DIRS) codec)
HEAPDECODE_LIBS := -ldw -lelf -lprotobuf-c -lzstd -lz -lstdc++ -lm
# The release binaries (README, "One binary for every Linux"): heapsnoop
# and heapdecode linked static-pie, every library above and the C library
# inside (the BPF object is in the skeleton), so that one file runs on any
# Linux of its architecture with BTF: no PT_INTERP, no DT_NEEDED
# (tests/test_static.sh). Position-independent, so the kernel still
# randomizes where they load: both parse files they did not write (a
# stranger's log, a traced program's ELF and CFI) as root. libdw's own
# libraries come in statically too (bz2, lzma); -Wl,--wrap=dlopen refuses
# libdwfl's dlopen of libdebuginfod.so (user/common/nodlopen.c's wrapper,
# asked for by -u: libhs_common.a comes before the libdw that calls it),
# and --fatal-warnings fails the link on any other function that would
# need the machine's shared C library at run time (getpwnam's NSS, ...):
# the -u look-up reads getent or /etc/passwd instead
# (user/tracer/attach/userdb.c). STATIC=0 links them against the shared
# libraries (a quicker link, and the distribution's debug symbols for
# them); the ASan, fuzz and test builds are always dynamic.
STATIC ?= 1
ifeq ($(STATIC),1)
RELEASE_LDFLAGS := -static-pie -Wl,--wrap=dlopen -Wl,-u,__wrap_dlopen -Wl,--fatal-warnings
RELEASE_LIBS := -lbz2 -llzma
endif
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Iinclude

.PHONY: FORCE all clean check demo man install dist deps deps-arm64 bench fuzz fuzz-run fuzz-run-records kmatrix arm64 arm64-build
.DEFAULT_GOAL := all

all: $(OUTPUT)/heapdecode $(OUTPUT)/heapsnoop $(OUTPUT)/libheapsnoop_preload.so

$(OUTPUT) $(OUTPUT)/collector $(OUTPUT)/tests $(OUTPUT)/asan $(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

# The commit, rewritten only when it changed (so that only then both relink).
$(OUTPUT)/gitversion.h: FORCE | $(OUTPUT)
	$(Q)echo '#define HEAPSNOOP_GIT "$(GIT_DESC)"' | cmp -s - $@ || \
		echo '#define HEAPSNOOP_GIT "$(GIT_DESC)"' > $@

# --- objects and the folders' libraries ---------------------------------------
# Three variants, each under its own directory: the build's ($(OUTPUT)),
# ASan+UBSan ($(OUTPUT)/asan) and libFuzzer's ($(OUTPUT)/fuzz). Headers
# are followed through the compiler's dependency files (-MMD).
VARIANTS := $(OUTPUT) $(OUTPUT)/asan $(OUTPUT)/fuzz
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
DEPFLAGS = -MMD -MP -MF $(@:.o=.d)

# A program's files see their own folder and common/ (the codec's, the
# generated headers'): the tracer's and heapdecode's objects, each variant.
$(addsuffix /obj/$(TRACER)/%.o,$(VARIANTS)): DIR_CFLAGS := $(TRACER_INC)
$(addsuffix /obj/$(DECODE)/%.o,$(VARIANTS)): DIR_CFLAGS := $(DECODE_INC)

$(OUTPUT)/obj/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DIR_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OUTPUT)/asan/obj/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DIR_CFLAGS) $(SAN) $(DEPFLAGS) -c $< -o $@

$(OUTPUT)/fuzz/obj/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(filter-out -Wshadow,$(ALL_CFLAGS)) $(DIR_CFLAGS) $(FUZZ_SAN) $(DEPFLAGS) -c $< -o $@

# protobuf-c's generated messages, in formats/pprof's library.
$(OUTPUT)/obj/proto/%.o: $(OUTPUT)/proto/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/asan/obj/proto/%.o: $(OUTPUT)/proto/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) -c $< -o $@

# $(call lib_rule,VARIANT_DIR,FOLDER): the folder's library in that variant.
define lib_rule
$(1)/$(call lib_name,$(2)): $(call objs,$(1),$(call lib_src,$(2)))
	$$(call msg,AR,$$@)
	$$(Q)rm -f $$@ && $$(AR) rcs $$@ $$^
endef
$(foreach v,$(VARIANTS),$(foreach d,$(LIB_DIRS),$(eval $(call lib_rule,$(v),$(d)))))

# The headers generated before the first compile; later, the dependency files.
all_objs = $(foreach v,$(VARIANTS),$(call objs,$(v),$(1)))
TRACER_OBJ := $(call all_objs,$(TRACER_TOP_SRC) $(foreach d,$(TRACER_LIB_DIRS),$(call lib_src,$(d))))
DECODE_OBJ := $(call all_objs,$(DECODE_TOP_SRC) $(foreach d,$(DECODE_LIB_DIRS),$(call lib_src,$(d))))
$(TRACER_OBJ): | $(OUTPUT)/heapsnoop.skel.h $(OUTPUT)/gitversion.h
$(DECODE_OBJ): | $(OUTPUT)/proto/profile.pb-c.h $(OUTPUT)/gitversion.h
-include $(patsubst %.o,%.d,$(TRACER_OBJ) $(DECODE_OBJ) \
	$(call all_objs,$(COMMON_SRC) $(wildcard $(COMMON)/interp/*.c) $(CODEC_SRC)))

# --- BPF object and its skeleton ---------------------------------------------
$(OUTPUT)/heapsnoop.bpf.o: bpf/heapsnoop.bpf.c $(wildcard bpf/*.h) include/heapsnoop/event.h \
		include/heapsnoop/interp.h include/heapsnoop/arch.h vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)llvm-strip -g $@.tmp -o $@ && rm -f $@.tmp

$(OUTPUT)/heapsnoop.skel.h: $(OUTPUT)/heapsnoop.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name heapsnoop_bpf > $@

# --- heapsnoop ----------------------------------------------------------------
$(OUTPUT)/heapsnoop: $(call objs,$(OUTPUT),$(TRACER_TOP_SRC)) $(call HEAPSNOOP_A,$(OUTPUT)) | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(RELEASE_LDFLAGS) $^ $(HEAPSNOOP_LIBS) $(RELEASE_LIBS) -o $@

# --- heapdecode ---------------------------------------------------------------
$(OUTPUT)/proto/profile.pb-c.h: $(PROFILE_PB)
$(PROFILE_PB): $(DECODE)/formats/pprof/proto/profile.proto
	$(call msg,PROTOC-C,$@)
	$(Q)mkdir -p $(OUTPUT)/proto
	$(Q)protoc-c --c_out=$(OUTPUT)/proto --proto_path=$(DECODE)/formats/pprof/proto $<

$(OUTPUT)/heapdecode: $(call objs,$(OUTPUT),$(DECODE_TOP_SRC)) $(call HEAPDECODE_A,$(OUTPUT)) | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(RELEASE_LDFLAGS) $^ $(HEAPDECODE_LIBS) $(RELEASE_LIBS) -o $@

# --- the in-process collector (user/collector, docs/COLLECTOR.md) ------------
# The alloc-metadata library (with the record lines and the codec it
# writes through, its deep stacks' outer frames in stacktail.c), and the
# preload library, whose live set is a table in shared memory
# (include/heapsnoop/livetable.h); all -fPIC.
RECORDS_SRC := $(wildcard $(COMMON)/records/*.c) $(COMMON)/text.c
AM_SRC := $(COLLECTOR)/alloc_metadata.c $(COLLECTOR)/amlines.c $(COLLECTOR)/amdump.c \
	$(COLLECTOR)/modmaps.c $(COLLECTOR)/stacktail.c $(RECORDS_SRC) $(COMMON)/sampling.c $(CODEC_SRC)
# The collector's unwinder: the walk and its cache, its steps, an address's
# rule from .eh_frame (the FDE, the CFA program, the expressions), the
# dlclose that empties the cache.
CUNWIND := $(COLLECTOR)/unwind
LOCALSTACK_SRC := $(CUNWIND)/localstack.c $(CUNWIND)/framestep.c $(CUNWIND)/ehframe.c \
	$(CUNWIND)/ehframe_cfa.c $(CUNWIND)/ehframe_expr.c $(CUNWIND)/modcfi.c $(CUNWIND)/dlclose.c
# The table written: its slots and segments, stacks (their private index)
# and modules, a fork child's copy, the hello to heapsnoop, exec marks,
# the process's own dumps.
LIVETABLE_SRC := $(CLIVE)/ltwrite.c $(CLIVE)/ltstacks.c $(CLIVE)/ltindex.c $(CLIVE)/ltmods.c \
	$(COLLECTOR)/forkcopy.c $(COLLECTOR)/hello.c $(COLLECTOR)/execmark.c $(COLLECTOR)/lastdump.c
# interp/: a CPython's frames read in the process (pywalk.c), a PUC Lua's (luaframes.c,
# named with common/'s luanames.c); their layouts common/'s.
CINTERP := $(COLLECTOR)/interp
PRELOAD_SRC := $(COLLECTOR)/preload.c $(COLLECTOR)/setup.c $(LIVETABLE_SRC) $(LIVEDUMP_SRC) $(LOCALSTACK_SRC) \
	$(COLLECTOR)/modmaps.c $(COLLECTOR)/sampler.c $(COMMON)/sampling.c $(COMMON)/text.c $(CODEC_SRC) \
	$(CINTERP)/pywalk.c $(COMMON)/interp/pylayout.c $(CINTERP)/luaframes.c $(COMMON)/htab.c \
	$(COMMON)/interp/lualayout.c $(COMMON)/interp/luawalk.c $(COMMON)/interp/luanames.c \
	$(COMMON)/interp/luaproto.c $(COMMON)/interp/luacall.c $(COMMON)/interp/luaglobal.c
COLLECTOR_CFLAGS := $(ALL_CFLAGS) -I$(COLLECTOR) -I$(CUNWIND) -I$(CLIVE) -I$(CINTERP) -fPIC -pthread
COLLECTOR_HDR := include/heapsnoop/alloc_metadata.h include/heapsnoop/codec.h include/heapsnoop/env.h \
	include/heapsnoop/livetable.h include/heapsnoop/livedump.h \
	$(wildcard $(COLLECTOR)/*.h $(COLLECTOR)/port/*.h $(CUNWIND)/*.h $(CLIVE)/*.h $(CINTERP)/*.h) $(COMMON)/records.h \
	$(COMMON)/records/records_int.h $(COMMON)/text.h $(COMMON)/sampling.h $(COMMON)/pacmask.h

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
# same build and architecture embedded (user/tracer/preload/pllib.c's .incbin of
# a copy without debug sections; its .eh_frame stays, the walk needs it).
$(OUTPUT)/collector/libheapsnoop_preload.embed.so: $(OUTPUT)/libheapsnoop_preload.so | $(OUTPUT)/collector
	$(call msg,STRIP,$@)
	$(Q)llvm-strip --strip-debug $< -o $@

$(OUTPUT)/preload_blob.h: $(OUTPUT)/collector/libheapsnoop_preload.embed.so
	$(call msg,GEN,$@)
	$(Q)printf '/* generated: the collector heapsnoop --preload embeds */\n#define HS_PRELOAD_BLOB "%s"\n' \
		'$(abspath $<)' > $@

$(call objs,$(OUTPUT),$(TRACER)/preload/pllib.c): $(OUTPUT)/preload_blob.h

# The live table's reader and writer (tests/collector/test_livetable.c):
# under ASan+UBSan, and its torture at speed, without them.
LIVETABLE_TEST_SRC := tests/collector/test_livetable.c $(LIVEDUMP_SRC) $(RECORDS_SRC) \
	$(COMMON)/sampling.c $(CODEC_SRC)
$(OUTPUT)/tests/test_livetable: $(LIVETABLE_TEST_SRC) $(COLLECTOR_HDR) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) -I$(COLLECTOR) -I$(CLIVE) $(filter %.c,$^) -pthread -lcmocka -lm -o $@

$(OUTPUT)/tests/test_livetable_torture: $(LIVETABLE_TEST_SRC) $(COLLECTOR_HDR) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(COLLECTOR) -I$(CLIVE) $(filter %.c,$^) -pthread -lcmocka -lm -o $@

# The ways a process ends (tests/collector/test_death.sh): the program
# that keeps its own list of live blocks, the checker, and the preload
# with its test stops (HEAPSNOOP_TEST_STOP, teststop.h; never installed).
$(OUTPUT)/tests/prog_death: tests/collector/prog_death.c tests/collector/ownlist.h \
		$(COLLECTOR)/block.h include/heapsnoop/livetable.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) -Iinclude -I$(COLLECTOR) $< -o $@

# Two Lua states on two threads (tests/collector/test_preload_lua.sh), on
# Debian's liblua5.4.so.0 (its C API declared in the program: no -dev package).
$(OUTPUT)/tests/prog_luastates: tests/collector/prog_luastates.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) $< -l:liblua5.4.so.0 -pthread -o $@

$(OUTPUT)/tests/check_death: tests/collector/check_death.c tests/collector/ownlist.h \
		$(RECORDS_SRC) $(CODEC_SRC) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(filter %.c,$^) -o $@

# The last dump of prog_paths under heapsnoop --preload, exactly (tests/collector/test_table_grows.sh).
$(OUTPUT)/tests/check_paths: tests/collector/check_paths.c $(RECORDS_SRC) $(CODEC_SRC) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -O2 $(filter %.c,$^) -o $@

$(OUTPUT)/tests/libheapsnoop_preload_stops.so: $(PRELOAD_SRC) $(COLLECTOR)/teststop.c $(COLLECTOR_HDR) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(PRELOAD_SYSROOT_SH); \
	$(CC) $$sysflags $(COLLECTOR_CFLAGS) -DHS_TEST_STOPS -shared -fvisibility=hidden \
		-fno-omit-frame-pointer -ftls-model=initial-exec -Wl,-z,defs -Wl,--wrap=log \
		$(PRELOAD_SRC) $(COLLECTOR)/teststop.c -ldl -lm -o $@

# The preload with 4 KiB first segments (livetable.h, LT_SMALL_SEGS), so
# that its tables grow within a few blocks (tests/collector/test_table_grows.sh).
$(OUTPUT)/tests/libheapsnoop_preload_smallseg.so: $(PRELOAD_SRC) $(COLLECTOR_HDR) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(PRELOAD_SYSROOT_SH); \
	$(CC) $$sysflags $(COLLECTOR_CFLAGS) -DLT_SMALL_SEGS -shared -fvisibility=hidden \
		-fno-omit-frame-pointer -ftls-model=initial-exec -Wl,-z,defs -Wl,--wrap=log \
		$(PRELOAD_SRC) -ldl -lm -o $@

# libFuzzer on the reader of a hostile live table (tests/fuzz/fuzz_livetable.c).
$(OUTPUT)/fuzz/fuzz_livetable: tests/fuzz/fuzz_livetable.c $(LIVEDUMP_SRC) $(RECORDS_SRC) \
		$(COMMON)/sampling.c $(CODEC_SRC) | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -I$(COLLECTOR) -I$(CLIVE) $^ -lm -o $@

FUZZ_LIVETABLE_SECONDS ?= 10
.PHONY: fuzz-run-livetable
fuzz-run-livetable: $(OUTPUT)/fuzz/fuzz_livetable
	$(Q)rm -rf $(OUTPUT)/fuzz/livetable-corpus && mkdir -p $(OUTPUT)/fuzz/livetable-corpus
	$(Q)$< -max_total_time=$(FUZZ_LIVETABLE_SECONDS) -timeout=5 -print_final_stats=1 \
		-artifact_prefix=$(OUTPUT)/fuzz/ $(OUTPUT)/fuzz/livetable-corpus tests/fuzz/livetable-seeds

# In the arm64 guest (tests/arm64/in-guest.sh): the torture and test_death.sh.
COLLECTOR_ARM64_PROGS := prog_death check_death test_livetable_torture libheapsnoop_preload_stops.so \
	prog_static
COLLECTOR_TESTS := $(OUTPUT)/tests/test_livetable $(OUTPUT)/tests/test_livetable_torture \
	$(OUTPUT)/fuzz/fuzz_livetable \
	$(OUTPUT)/tests/prog_death $(OUTPUT)/tests/check_death $(OUTPUT)/tests/libheapsnoop_preload_stops.so \
	$(OUTPUT)/tests/prog_luastates $(OUTPUT)/tests/check_paths \
	$(OUTPUT)/tests/libheapsnoop_preload_smallseg.so

$(OUTPUT)/am_pool: examples/am_pool.c $(OUTPUT)/libhsam.a | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 -fno-omit-frame-pointer -fno-inline $< $(OUTPUT)/libhsam.a -pthread -lm -o $@

# --- the codec and libhsam on a microcontroller (examples/mcu, docs/MCU.md) ---
# Built freestanding for a Cortex-M3 (Debian's gcc-arm-none-eabi, newlib's
# string functions, libgcc's EHABI unwinder): the codec, the
# alloc-metadata core with the Cortex-M port (its lock masks interrupts,
# no pthreads, no stdio, no module look-up) and the dump without stdio
# (amlines.c), each an archive; the firmware that uses them runs in
# qemu-system-arm -M mps2-an385 (tests/mcu/test_mcu.sh). -funwind-tables:
# the .ARM.exidx entries its stack walk reads; no sibling calls in the
# firmware, so that each of its functions stays a frame.
MCU_CROSS ?= arm-none-eabi-
MCU := $(OUTPUT)/mcu
MCU_ARCH := -mcpu=cortex-m3 -mthumb
MCU_CFLAGS := $(MCU_ARCH) -Os -g -std=gnu11 $(WARN) -ffreestanding -ffunction-sections \
	-fdata-sections -funwind-tables -Iinclude -I$(COMMON) -DHS_AM_PORT='"amport_cortexm.h"'
MCU_AM_SRC := $(COLLECTOR)/alloc_metadata.c $(COLLECTOR)/amlines.c
MCU_FW_SRC := $(wildcard examples/mcu/*.c)
MCU_FW_CFLAGS := $(MCU_CFLAGS) -fno-optimize-sibling-calls -Iexamples/mcu

# The format's vectors checked on the core itself: tests/mcu/vectors_fw.c
# links tests/data/vectors.tsv in whole (.incbin).
MCU_TEST_CFLAGS := $(MCU_FW_CFLAGS) -Itests/codec -DVECTORS_TSV='"$(abspath tests/data/vectors.tsv)"'

$(MCU)/obj/%.o: %.c $(COLLECTOR_HDR) $(wildcard examples/mcu/*.h)
	$(call msg,MCU-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MCU_CROSS)gcc $(if $(filter examples/mcu/%,$<),$(MCU_FW_CFLAGS),$(if $(filter tests/%,$<),$(MCU_TEST_CFLAGS),$(MCU_CFLAGS))) -c $< -o $@

$(MCU)/obj/tests/mcu/vectors_fw.o: tests/data/vectors.tsv tests/codec/vectors_check.h

$(MCU)/libhscodec.a: $(patsubst %.c,$(MCU)/obj/%.o,$(CODEC_SRC))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(MCU_CROSS)ar rcs $@ $^

$(MCU)/libhsam.a: $(patsubst %.c,$(MCU)/obj/%.o,$(MCU_AM_SRC))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(MCU_CROSS)ar rcs $@ $^

$(MCU)/fw.elf: $(patsubst %.c,$(MCU)/obj/%.o,$(MCU_FW_SRC)) $(MCU)/libhsam.a $(MCU)/libhscodec.a \
		examples/mcu/mps2_an385.ld
	$(call msg,LINK,$@)
	$(Q)$(MCU_CROSS)gcc $(MCU_ARCH) -nostartfiles --specs=nano.specs -Wl,--gc-sections \
		-T examples/mcu/mps2_an385.ld -Wl,-Map=$(MCU)/fw.map $(filter %.o %.a,$^) -lc -lgcc -o $@

$(MCU)/vectors.elf: $(addprefix $(MCU)/obj/,examples/mcu/startup.o examples/mcu/uart.o \
		tests/mcu/vectors_fw.o tests/codec/vectors_check.o) $(MCU)/libhscodec.a examples/mcu/mps2_an385.ld
	$(call msg,LINK,$@)
	$(Q)$(MCU_CROSS)gcc $(MCU_ARCH) -nostartfiles --specs=nano.specs -Wl,--gc-sections \
		-T examples/mcu/mps2_an385.ld $(filter %.o %.a,$^) -lc -lgcc -o $@

.PHONY: mcu
mcu: $(MCU)/fw.elf $(MCU)/vectors.elf

# --- libhsam on 32-bit x86 Linux (docs/MCU.md) -------------------------------
# The same library built by gcc-i686-linux-gnu into $(OUTPUT)/i386 (this
# Makefile again, its OUTPUT and CC those), and examples/am_pool.c linked
# to it, run by the cross C library's own loader (libc6-dev-i386-cross:
# no i386 packages installed multiarch); tests/collector/test_hsam_i386.sh.
I386_CROSS ?= i686-linux-gnu-
I386 := $(OUTPUT)/i386
I386_LIBDIR := /usr/i686-linux-gnu/lib

$(I386)/libhsam.a: FORCE
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(I386) CC=$(I386_CROSS)gcc AR=$(I386_CROSS)ar $@

# The format's vectors on a 32-bit host (tests/codec/vectors_host.c).
$(I386)/vectors_host: tests/codec/vectors_host.c tests/codec/vectors_check.c $(CODEC_SRC) \
		tests/codec/vectors_check.h include/heapsnoop/codec.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(I386_CROSS)gcc $(ALL_CFLAGS) -Itests/codec $(filter %.c,$^) \
		-Wl,--dynamic-linker=$(I386_LIBDIR)/ld-linux.so.2 -Wl,-rpath=$(I386_LIBDIR) -o $@

$(I386)/am_pool: examples/am_pool.c $(I386)/libhsam.a
	$(call msg,CC,$@)
	$(Q)$(I386_CROSS)gcc $(ALL_CFLAGS) -O1 -fno-omit-frame-pointer -fno-inline $< $(I386)/libhsam.a \
		-pthread -lm -Wl,--dynamic-linker=$(I386_LIBDIR)/ld-linux.so.2 -Wl,-rpath=$(I386_LIBDIR) -o $@

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
# A C unit test (tests/ as the source folders): its file and the libraries
# of the folders it tests, in link order ($^), as the ASan+UBSan build's
# when it runs under them; its headers followed as the objects' are.
TEST_DEP = -MMD -MP -MF $@.d -MT $@
UNIT_TESTS := $(addprefix $(OUTPUT)/tests/,test_codec test_records test_frametab test_htab test_suppress \
	test_tracker test_pace test_freelog test_trace test_probesite test_probesite_arm64 test_pydecode_arm64 test_model \
	test_pylines test_pyfind test_splice test_perfmap test_jitdump test_lua test_luafind test_luasegs test_luabpf \
	test_ljbpf test_namecache test_holders)
-include $(UNIT_TESTS:=.d)

$(OUTPUT)/tests/test_codec: tests/codec/test_codec.c $(call libs,$(OUTPUT),codec) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(TEST_DEP) $^ -lcmocka -o $@

$(OUTPUT)/tests/test_records: tests/common/test_records.c $(call libs,$(OUTPUT)/asan,$(COMMON_DIRS) codec) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

$(OUTPUT)/tests/test_alloc_metadata: tests/collector/test_alloc_metadata.c $(AM_SRC) $(COLLECTOR_HDR) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(filter %.c,$^) -pthread -lcmocka -lm -o $@

# amlines.c's lines against records.c's writer (tests/collector/test_amlines.c).
$(OUTPUT)/tests/test_amlines: tests/collector/test_amlines.c $(AM_SRC) $(COLLECTOR_HDR) | $(OUTPUT)/tests
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

COMMA := ,
# ... and the shapes with CFI .eh_frame_hdr does not index (modcfi.c): in
# .debug_frame alone (_dbg), in .eh_frame linked without a header (_nohdr).
$(OUTPUT)/tests/libshapes_dbg.so $(OUTPUT)/tests/libshapes_nohdr.so: $(OUTPUT)/tests/libshapes_%.so: \
		tests/collector/unwind_shapes.c tests/collector/unwind_shapes.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(SHAPES_CFLAGS) -DSHAPES_LIB -fPIC -shared -fvisibility=hidden \
		$(if $(filter dbg,$*),-fno-asynchronous-unwind-tables -fno-unwind-tables,-Wl$(COMMA)--no-eh-frame-hdr) \
		$< -o $@

$(OUTPUT)/tests/test_unwind: tests/collector/test_unwind.c $(LOCALSTACK_SRC) \
		$(OUTPUT)/tests/unwind_shapes.o $(OUTPUT)/tests/unwind_nocfi.o $(COLLECTOR_HDR) \
		$(OUTPUT)/tests/libshapes_a.so $(OUTPUT)/tests/libshapes_b.so \
		$(OUTPUT)/tests/libshapes_dbg.so $(OUTPUT)/tests/libshapes_nohdr.so | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(CUNWIND) -Itests/collector $(filter %.c %.o,$^) -rdynamic \
		-pthread -ldl -lcmocka -o $@

$(OUTPUT)/tests/prog_collect: tests/collector/prog_collect.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) $< -o $@

# heapdecode's model fed real record lines: its folder and the reader's,
# with common/ and the codec.
$(OUTPUT)/tests/test_model: tests/decode/model/test_model.c \
		$(call libs,$(OUTPUT)/asan,$(addprefix $(DECODE)/,model input) $(COMMON_DIRS) codec) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(DECODE_CFLAGS) $(SAN) $(TEST_DEP) $^ -lelf -ldw -lzstd -lz -lstdc++ -lm -lcmocka -o $@

$(OUTPUT)/tests/test_frametab: tests/common/test_frametab.c $(call libs,$(OUTPUT)/asan,$(COMMON_DIRS) codec) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

# The CPython pieces the tracer and the collector share (user/common/interp/).
$(OUTPUT)/tests/test_pylines: tests/interp/test_pylines.c $(call libs,$(OUTPUT)/asan,$(COMMON)/interp $(COMMON_DIRS)) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

# The tracer's CPython finder and resolver on real binaries and a real
# process (tests/interp/test_pyfind.sh).
$(OUTPUT)/tests/test_pyfind: tests/interp/test_pyfind.c \
		$(call libs,$(OUTPUT)/asan,$(addprefix $(TRACER)/,interp maps arch) $(COMMON)/interp $(COMMON_DIRS) codec) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(TEST_DEP) $^ -pthread -lbpf -ldw -lelf -lcapstone -lz -lcmocka -o $@

# The splice of interpreter frames among native ones.
$(OUTPUT)/tests/test_splice: tests/interp/test_splice.c $(call libs,$(OUTPUT)/asan,$(TRACER)/interp) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

# The Lua pieces the tracer and the collector share (user/common/interp/):
# layouts, prototypes, names, the walk; tested against Debian's interpreters.
$(OUTPUT)/tests/test_lua: tests/interp/test_lua.c $(call libs,$(OUTPUT)/asan,$(COMMON)/interp $(COMMON_DIRS)) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

# The BPF side's Lua walk alone (bpf/lua.h), against the loader's.
$(OUTPUT)/tests/luawalk.bpf.o: tests/interp/luawalk.bpf.c bpf/lua.h include/heapsnoop/luaframe.h \
		include/heapsnoop/event.h vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/tests
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Ibpf -c $< -o $@

$(OUTPUT)/tests/luawalk.skel.h: $(OUTPUT)/tests/luawalk.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name luawalk_bpf > $@

$(OUTPUT)/tests/test_luabpf: tests/interp/test_luabpf.c $(call libs,$(OUTPUT),$(COMMON)/interp $(COMMON_DIRS)) \
		| $(OUTPUT)/tests/luawalk.skel.h $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OUTPUT)/tests $(TEST_DEP) $^ -lbpf -lelf -lz -lcmocka -o $@

# The BPF side's LuaJIT walk alone (bpf/luajit.h), against ljwalk.c's.
$(OUTPUT)/tests/ljwalk.bpf.o: tests/interp/ljwalk.bpf.c bpf/lua.h bpf/luajit.h \
		include/heapsnoop/luaframe.h include/heapsnoop/event.h vmlinux/$(ARCH)/vmlinux.h \
		| $(OUTPUT)/tests
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Ibpf -c $< -o $@

$(OUTPUT)/tests/ljwalk.skel.h: $(OUTPUT)/tests/ljwalk.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name ljwalk_bpf > $@

$(OUTPUT)/tests/test_ljbpf: tests/interp/test_ljbpf.c $(call libs,$(OUTPUT),$(COMMON)/interp $(COMMON_DIRS)) \
		| $(OUTPUT)/tests/ljwalk.skel.h $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OUTPUT)/tests $(TEST_DEP) $^ -lbpf -lelf -lz -lcmocka -o $@

# The Lua VM finder on Debian's files; a Lua walk cut into the loop's runs.
$(OUTPUT)/tests/test_luafind: tests/interp/test_luafind.c \
		$(call libs,$(OUTPUT)/asan,$(addprefix $(TRACER)/,interp maps arch) $(COMMON_DIRS)) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(TEST_DEP) $^ -ldw -lelf -lz -lcapstone -lcmocka -o $@

$(OUTPUT)/tests/test_luasegs: tests/interp/test_luasegs.c $(call libs,$(OUTPUT)/asan,$(TRACER)/interp) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

# A process's perf map read as it grows (maps/perfmap.c).
$(OUTPUT)/tests/test_perfmap: tests/tracer/maps/test_perfmap.c $(call libs,$(OUTPUT)/asan,$(TRACER)/maps $(COMMON_DIRS)) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

# A process's jitdump: its records, its mapping, merged with its perf map (maps/jitdump*.c, jitnames.c).
$(OUTPUT)/tests/test_jitdump: tests/tracer/maps/test_jitdump.c \
		$(call libs,$(OUTPUT)/asan,$(TRACER)/maps $(COMMON_DIRS)) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

# Who holds the live heap (common/holders.c), frames named by the test.
$(OUTPUT)/tests/test_holders: tests/common/test_holders.c $(call libs,$(OUTPUT)/asan,$(COMMON_DIRS)) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(TEST_DEP) $^ -lelf -ldw -lstdc++ -lcmocka -o $@

$(OUTPUT)/tests/test_htab: tests/common/test_htab.c $(call libs,$(OUTPUT)/asan,$(COMMON_DIRS)) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

$(OUTPUT)/tests/test_suppress: tests/common/test_suppress.c $(call libs,$(OUTPUT)/asan,$(COMMON_DIRS)) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

$(OUTPUT)/tests/test_tracker: tests/tracer/track/test_tracker.c \
		$(call libs,$(OUTPUT),$(TRACER)/track $(COMMON_DIRS) codec) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(TEST_DEP) $^ -lcmocka -o $@

$(OUTPUT)/tests/test_pace: tests/tracer/stream/test_pace.c $(call libs,$(OUTPUT)/asan,$(TRACER)/stream) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

$(OUTPUT)/tests/test_freelog: tests/tracer/stream/test_freelog.c $(call libs,$(OUTPUT)/asan,$(TRACER)/stream) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(TEST_DEP) $^ -lcmocka -o $@

# The live view's name cache (output/namecache.c) and the runtime frames'
# rule it shares with the headline (common/holders.c).
$(OUTPUT)/tests/test_namecache: tests/tracer/output/test_namecache.c \
		$(call libs,$(OUTPUT)/asan,$(TRACER)/output $(COMMON_DIRS)) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(TEST_DEP) $^ -lelf -ldw -lstdc++ -lcmocka -o $@

# The per-process state and what it leans on, and the closing accounting
# (output/status.c) of its counts.
$(OUTPUT)/tests/test_trace: tests/tracer/track/test_trace.c \
		$(call libs,$(OUTPUT)/asan,$(addprefix $(TRACER)/,output track unwind attach maps arch) $(COMMON_DIRS) codec) \
		| $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(SAN) $(TEST_DEP) $^ -lbpf -lelf -ldw -lcmocka -lm -o $@

# The probe sites of x86-64 and of arm64, each tested on any machine
# (capstone decodes both): the architecture's file named, whichever ARCH
# this build's arch/ library holds.
$(OUTPUT)/tests/test_probesite: tests/tracer/arch/test_probesite.c $(TRACER)/arch/probesite_x86.c \
		$(call libs,$(OUTPUT),$(TRACER)/maps $(COMMON)) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(TEST_DEP) $^ -lcapstone -lelf -lcmocka -o $@

$(OUTPUT)/tests/test_probesite_arm64: tests/tracer/arch/test_probesite_arm64.c $(TRACER)/arch/probesite_arm64.c \
		$(call libs,$(OUTPUT),$(TRACER)/maps $(COMMON)) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(TEST_DEP) $^ -lcapstone -lelf -lcmocka -o $@

# The arm64 decoders of CPython's and LuaJIT's code, on any machine.
$(OUTPUT)/tests/test_pydecode_arm64: tests/tracer/arch/test_pydecode_arm64.c \
		$(TRACER)/arch/pydecode_arm64.c $(TRACER)/arch/ljdecode_arm64.c | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TRACER_CFLAGS) $(TEST_DEP) $^ -lcapstone -lcmocka -o $@

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

# ... and Debian's lua5.4 and lua5.1 (their VM is inside the executable;
# they need libreadline and libtinfo, which the root has).
$(OUTPUT)/tests/lua5.4: /usr/bin/lua5.4 | $(OUTPUT)/tests
	$(call msg,CP,$@)
	$(Q)cp $< $@

$(OUTPUT)/tests/lua5.1: /usr/bin/lua5.1 | $(OUTPUT)/tests
	$(call msg,CP,$@)
	$(Q)cp $< $@

# The unwinding test's program and libraries (tests/unwind): no frame
# pointers anywhere but libfp.so, which has frame pointers and no CFI.
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer
UNWIND_PROGS := $(OUTPUT)/tests/prog_nofp $(OUTPUT)/tests/libnofp_late.so

# Where each finds its CFI (tests/tracer/test_cfiplace.sh): tests/tracer/
# prog_deep.c without frame pointers, its CFI in .eh_frame as usual
# (_eh), in .eh_frame linked without .eh_frame_hdr (_nohdr), in
# .debug_frame alone (_dbg: the C runtime's files keep their .eh_frame).
CFI_PLACE_CFLAGS := $(NOFP_CFLAGS) -fno-inline -fno-optimize-sibling-calls -fno-ipa-cp -fno-ipa-icf
CFI_PLACES := $(addprefix $(OUTPUT)/tests/prog_deep_,eh nohdr dbg)
UNWIND_PROGS += $(CFI_PLACES)

$(OUTPUT)/tests/prog_deep_eh: tests/tracer/prog_deep.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFI_PLACE_CFLAGS) $< -o $@

$(OUTPUT)/tests/prog_deep_nohdr: tests/tracer/prog_deep.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFI_PLACE_CFLAGS) -Wl,--no-eh-frame-hdr $< -o $@

$(OUTPUT)/tests/prog_deep_dbg: tests/tracer/prog_deep.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFI_PLACE_CFLAGS) -fno-asynchronous-unwind-tables -fno-unwind-tables $< -o $@

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
$(OUTPUT)/asan/test_codec: tests/codec/test_codec.c $(call libs,$(OUTPUT)/asan,codec) | $(OUTPUT)/asan
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $^ -lcmocka -o $@

$(OUTPUT)/asan/heapdecode: $(call objs,$(OUTPUT)/asan,$(DECODE_TOP_SRC)) $(call HEAPDECODE_A,$(OUTPUT)/asan) \
		| $(OUTPUT)/asan
	$(call msg,LINK,$@)
	$(Q)$(CC) $(SAN) $^ $(HEAPDECODE_LIBS) -o $@

# libFuzzer: decoder and line scanner; the record-line parser.
FUZZ_CFLAGS := $(filter-out -Wshadow,$(DECODE_CFLAGS)) $(FUZZ_SAN)

$(OUTPUT)/fuzz/fuzz_decode: tests/fuzz/fuzz_decode.c \
		$(call libs,$(OUTPUT)/fuzz,$(DECODE)/input $(COMMON_DIRS) codec) | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ -o $@

$(OUTPUT)/fuzz/fuzz_records: tests/fuzz/fuzz_records.c \
		$(call libs,$(OUTPUT)/fuzz,$(DECODE)/input $(COMMON_DIRS) codec) | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -I$(DECODE) $^ -o $@

# The jitdump reader: a traced process's file, hostile (tests/fuzz/fuzz_jitdump.c).
$(OUTPUT)/fuzz/fuzz_jitdump: tests/fuzz/fuzz_jitdump.c $(TRACER)/maps/jitdump.c \
		$(TRACER)/maps/perfmap.c $(COMMON)/htab.c | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -I$(TRACER) $^ -o $@

fuzz: $(OUTPUT)/fuzz/fuzz_decode $(OUTPUT)/fuzz/fuzz_records $(OUTPUT)/fuzz/fuzz_jitdump

# fuzz-run: the decoder for FUZZ_SECONDS; fuzz-run-records: the record
# parser for FUZZ_RECORDS_SECONDS (a smaller grammar).
FUZZ_SECONDS ?= 30
FUZZ_RECORDS_SECONDS ?= 10
fuzz-run: $(OUTPUT)/fuzz/fuzz_decode
	$(Q)rm -rf $(OUTPUT)/fuzz/corpus && mkdir -p $(OUTPUT)/fuzz/corpus
	$(Q)$< -max_total_time=$(FUZZ_SECONDS) -timeout=5 -print_final_stats=1 \
		-artifact_prefix=$(OUTPUT)/fuzz/ $(OUTPUT)/fuzz/corpus tests/fuzz/seeds

FUZZ_JITDUMP_SECONDS ?= 10
.PHONY: fuzz-run-jitdump
fuzz-run-jitdump: $(OUTPUT)/fuzz/fuzz_jitdump
	$(Q)rm -rf $(OUTPUT)/fuzz/jitdump-corpus && mkdir -p $(OUTPUT)/fuzz/jitdump-corpus
	$(Q)$< -max_total_time=$(FUZZ_JITDUMP_SECONDS) -timeout=5 -print_final_stats=1 \
		-artifact_prefix=$(OUTPUT)/fuzz/ $(OUTPUT)/fuzz/jitdump-corpus tests/fuzz/jitdump-seeds

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
		$(OUTPUT)/tests/test_holders \
		$(OUTPUT)/tests/test_suppress \
		$(OUTPUT)/tests/test_model \
		$(OUTPUT)/tests/test_pace $(OUTPUT)/tests/test_freelog $(OUTPUT)/tests/test_perfmap \
		$(OUTPUT)/tests/test_jitdump \
		$(OUTPUT)/tests/test_pylines $(OUTPUT)/tests/test_splice $(OUTPUT)/tests/test_pyfind \
		$(OUTPUT)/tests/test_lua $(OUTPUT)/tests/test_luabpf $(OUTPUT)/tests/test_luafind \
		$(OUTPUT)/tests/test_luasegs $(OUTPUT)/tests/test_ljbpf \
		$(OUTPUT)/tests/test_alloc_metadata $(OUTPUT)/tests/test_unwind $(OUTPUT)/tests/prog_collect \
		$(OUTPUT)/tests/prog_collect_old $(COLLECTOR_TESTS) \
		$(OUTPUT)/am_pool $(OUTPUT)/tests/test_amlines $(OUTPUT)/mcu/fw.elf \
		$(OUTPUT)/mcu/vectors.elf $(OUTPUT)/i386/am_pool $(OUTPUT)/i386/vectors_host \
		$(OUTPUT)/tests/test_trace $(OUTPUT)/tests/test_namecache $(OUTPUT)/tests/test_probesite $(OUTPUT)/tests/test_probesite_arm64 $(OUTPUT)/tests/test_pydecode_arm64 \
		$(OUTPUT)/asan/test_codec $(OUTPUT)/asan/heapdecode fuzz $(TRACER_PROGS) $(UNWIND_PROGS) \
		$(OUTPUT)/tests/python3.11 $(OUTPUT)/tests/lua5.4 $(OUTPUT)/tests/lua5.1 man arm64-build
	$(Q)tests/run.sh $(OUTPUT)

# KMATRIX_KERNELS="6.1" for one kernel.
kmatrix: deps
	$(Q)$(MAKE) --no-print-directory all $(TRACER_PROGS) $(UNWIND_PROGS) $(OUTPUT)/tests/prog_collect \
		$(OUTPUT)/tests/python3.11 $(OUTPUT)/tests/lua5.4 $(OUTPUT)/tests/lua5.1
	$(Q)tests/kmatrix/run.sh $(OUTPUT)

# --- arm64 (docs/ARCH.md): the tools and the programs its test traces, built
# for arm64 into $(OUTPUT)/arm64 (cross, or natively on an arm64 machine);
# tests/arm64/run.sh runs them in qemu-system-aarch64 and symbolizes logs
# across architectures with this build's heapdecode.
ARM64_OUT := $(OUTPUT)/arm64
ARM64_PROGS := $(addprefix $(ARM64_OUT)/tests/,prog_semantics prog_waiter prog_threads prog_nofp \
	libnofp_late.so prog_semantics_pac prog_slotexit libexitcall.so prog_collect test_unwind \
	prog_deep prog_deep_eh prog_deep_nohdr prog_deep_dbg \
	$(COLLECTOR_ARM64_PROGS))

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
