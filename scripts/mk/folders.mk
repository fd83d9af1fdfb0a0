# SPDX-License-Identifier: MIT
# scripts/mk/folders.mk - each program's folders and libraries, the interpreters' rooms, the link lists, the release link (included by the Makefile, in its order).

CODEC_SRC := $(wildcard codec/*.c)
COMMON_SRC := $(wildcard $(COMMON)/*.c $(COMMON)/records/*.c)
# --pprof: protobuf-c's messages, generated from the official profile.proto.
PROFILE_PB := $(OUTPUT)/proto/profile.pb-c.c
# heapsnoop agent --push-otlp: protobuf-c's messages, generated from the
# official OpenTelemetry .proto files of Debian's opentelemetry-proto
# (scripts/otel-proto.sh: its .deb pinned by SHA-256, fetched once and
# cached), linked into heapsnoop alone.
OTEL_PROTOS := common/v1/common resource/v1/resource profiles/v1development/profiles \
	collector/profiles/v1development/profiles_service
OTEL_PB := $(patsubst %,$(OUTPUT)/proto/opentelemetry/proto/%.pb-c.c,$(OTEL_PROTOS))
OTEL_PB_OBJ := $(patsubst $(OUTPUT)/%.c,$(OUTPUT)/obj/%.o,$(OTEL_PB))

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
# The collector's folder; the live table's reader (include/heapsnoop/
# livedump.h, user/collector/livetable/), which the preload's own last
# dumps and heapsnoop --preload's share.
COLLECTOR := user/collector
CLIVE := $(COLLECTOR)/livetable
LIVEDUMP_SRC := $(CLIVE)/ltread.c $(CLIVE)/ltdump.c $(CLIVE)/ltfmt.c
# user/interp/ (interpreter frames, docs/DESIGN.md "The rooms"): the core
# (the table of runtimes, the process table, the splice) and a folder, a
# room, per runtime (python/, lua/, luajit/), each a library of its
# finding, layout, naming and decoders, linked by the tracer and the tests
# (a group: the core calls the rooms through its table, they call its
# helpers); the collector links its own libraries of the pieces it needs
# (scripts/mk/collector.mk, CLIB_SRC). They use maps/ and arch/ and common/.
INTERP := user/interp
INTERP_ROOMS := $(sort $(patsubst %/,%,$(dir $(wildcard $(INTERP)/*/*.c))))
INTERP_DIRS := $(INTERP) $(INTERP_ROOMS)
# The rooms' walks in the collector, in its library alone: not the tracer's.
INTERP_COLLECTOR_SRC := $(wildcard $(INTERP)/crooms.c $(INTERP)/python/pywalk.c $(INTERP)/lua/luaframes.c)
# user/unwind/: the CFI unwinder both programs link, below every folder of
# either (it uses common/ alone): heapsnoop's walk of each record as it
# comes, heapdecode's of the `ustack` records a log keeps (docs/DESIGN.md,
# "Unwinding later, elsewhere"); the tracer's unwind/ keeps its pool, its
# tails and where a live process's files are (procsrc.c).
UNWIND := user/unwind
TRACER_LIB_DIRS := $(addprefix $(TRACER)/,preload output track unwind stream attach) $(INTERP_DIRS) \
	$(addprefix $(TRACER)/,maps arch) $(CLIVE) $(UNWIND)
DECODE_LIB_DIRS := $(addprefix $(DECODE)/,formats formats/pprof analyses model input) $(UNWIND)
# user/common/records/: the record lines (their writers and parsers), used
# by user/common's stacks and frame tables: linked after them.
COMMON_DIRS := $(COMMON) $(COMMON)/records
LIB_DIRS := $(sort $(TRACER_LIB_DIRS) $(DECODE_LIB_DIRS)) $(COMMON_DIRS) codec
# A folder's sources: of the per-architecture files (*_x86.c, *_arm64.c:
# the tracer's arch/, a room's decoders) this architecture's alone;
# formats/pprof: with protobuf-c's generated messages.
OTHER_ARCH := $(filter-out $(ARCH),x86 arm64)
# collector/livetable/: the programs' library of it is its reader
# (LIVEDUMP_SRC); the collector builds its own (scripts/mk/collector.mk).
lib_src = $(if $(filter $(CLIVE),$(1)),$(LIVEDUMP_SRC), \
	$(filter-out %_$(OTHER_ARCH).c $(INTERP_COLLECTOR_SRC),$(wildcard $(1)/*.c)) \
	$(if $(filter $(DECODE)/formats/pprof,$(1)),$(PROFILE_PB)))
lib_name = $(if $(filter codec,$(1)),libhscodec.a,libhs_$(subst /,_,$(patsubst user/%,%,$(1))).a)
# $(call libs,VARIANT_DIR,FOLDERS): those folders' libraries in that variant.
libs = $(foreach d,$(2),$(1)/$(call lib_name,$(d)))
# $(LINK_IN): a link's objects, then its libraries as a group (the
# interpreters' core and rooms need each other).
LINK_IN = $(filter-out %.a %.h,$^) -Wl,--start-group $(filter %.a,$^) -Wl,--end-group
# $(call objs,VARIANT_DIR,SOURCES): their objects.
objs = $(patsubst %.c,$(1)/obj/%.o,$(patsubst $(OUTPUT)/%,%,$(2)))

# heapsnoop's top: main, its options, the session, linked as objects;
# --preload's side (user/tracer/preload/: it holds every image's table and
# writes the dumps with the collector's reader, collector/livetable/'s
# library) is a library as the stages are.
# heapsnoop agent (user/tracer/agent/, docs/AGENT.md): the pull endpoint on
# libmicrohttpd, its heap profiles through heapdecode's pprof builder
# (formats/pprof/profbuild.c, protobuf-c: its library is linked, and only
# the agent's objects see its header), its metrics.
AGENT_SRC := $(filter-out %/notls.c,$(wildcard $(TRACER)/agent/*.c))
TRACER_TOP_SRC := $(wildcard $(TRACER)/*.c) $(AGENT_SRC)
HEAPSNOOP_A = $(call libs,$(1),$(TRACER_LIB_DIRS) $(DECODE)/formats/pprof $(COMMON_DIRS) codec)
HEAPSNOOP_LIBS := -lbpf -ldw -lelf -lcapstone -lmicrohttpd -lprotobuf-c -lzstd -lz -lstdc++ -lm
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
# Debian's libmicrohttpd.a calls GnuTLS, whose static closure Debian does
# not ship (p11-kit, libunistring): the agent never asks for TLS, and
# agent/notls.c's refusals stand in for those calls (docs/AGENT.md).
HEAPSNOOP_STATIC_OBJ = $(call objs,$(OUTPUT),$(TRACER)/agent/notls.c)
endif
# The rooms' BPF walks (user/interp/*/*.bpf.h) included by bpf/interp.bpf.h by
# their path from user/; theirs see bpf/'s headers.
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Iinclude -Ibpf -Iuser
