# SPDX-License-Identifier: MIT
# scripts/mk/collector.mk - the in-process collector: libhsam.a, the preload library, their tests and programs (included by the Makefile, in its order).

# --- the in-process collector (user/collector, docs/COLLECTOR.md) ------------
# The alloc-metadata library (with the record lines and the codec it
# writes through, its deep stacks' outer frames in stacktail.c), and the
# preload library, whose live set is a table in shared memory
# (include/heapsnoop/livetable.h); all -fPIC.
RECORDS_SRC := $(wildcard $(COMMON)/records/*.c) $(COMMON)/text.c
AM_SRC := $(COLLECTOR)/alloc_metadata.c $(COLLECTOR)/amlines.c $(COLLECTOR)/amdump.c \
	$(CLIVE)/modmaps.c $(COLLECTOR)/stacktail.c $(RECORDS_SRC) $(COMMON)/sampling.c $(CODEC_SRC)
# The collector's unwinder: the walk and its cache, its steps, an address's
# rule from .eh_frame (the FDE, the CFA program, the expressions), the
# dlclose that empties the cache.
CUNWIND := $(COLLECTOR)/unwind
LOCALSTACK_SRC := $(CUNWIND)/localstack.c $(CUNWIND)/framestep.c $(CUNWIND)/ehframe.c \
	$(CUNWIND)/ehframe_cfa.c $(CUNWIND)/ehframe_expr.c $(CUNWIND)/modcfi.c $(CUNWIND)/dlclose.c
# The preload's own top, linked as objects (as a program's): the
# interposed functions (pthread_create: creator.c), the set-up, a fork child's copy, the hello to
# heapsnoop, exec marks, the process's own dumps, the sampler; the C
# library's log() bound to its first version.
CTOP_SRC := $(COLLECTOR)/preload.c $(COLLECTOR)/creator.c $(COLLECTOR)/setup.c $(COLLECTOR)/forkcopy.c $(COLLECTOR)/hello.c \
	$(COLLECTOR)/execmark.c $(COLLECTOR)/lastdump.c $(COLLECTOR)/sampler.c $(COLLECTOR)/oldlibc.c
# The table written (its slots and segments, stacks with their private
# index, modules) and read (its dumps), the modules' segments.
LIVETABLE_SRC := $(CLIVE)/ltwrite.c $(CLIVE)/ltstacks.c $(CLIVE)/ltindex.c $(CLIVE)/ltmods.c \
	$(LIVEDUMP_SRC) $(CLIVE)/modmaps.c
# Its folders' files: each folder a library (CLIB_DIRS, as the programs'
# LIB_DIRS), of the files that run in the process, inside malloc (no
# allocation of the C library on those paths): the table, the unwinder,
# the rooms' walks in the process (interp/crooms.c, their table; a
# CPython's frames, python/pywalk.c; a PUC Lua's, lua/luaframes.c, named
# with lua/luanames.c) with their layouts, common/'s sampling, texts and
# hash table, the codec.
CLIB_SRC := $(LIVETABLE_SRC) $(LOCALSTACK_SRC) \
	$(INTERP)/crooms.c $(INTERP)/python/pywalk.c $(INTERP)/python/pylayout.c $(INTERP)/lua/luaframes.c \
	$(INTERP)/lua/lualayout.c $(INTERP)/lua/luawalk.c $(INTERP)/lua/luanames.c \
	$(INTERP)/lua/luaproto.c $(INTERP)/lua/luacall.c $(INTERP)/lua/luaglobal.c \
	$(COMMON)/sampling.c $(COMMON)/text.c $(COMMON)/htab.c $(CODEC_SRC)
CLIB_DIRS := $(CLIVE) $(CUNWIND) $(INTERP) $(INTERP)/python $(INTERP)/lua $(COMMON) codec
PRELOAD_SRC := $(CTOP_SRC) $(CLIB_SRC)
COLLECTOR_CFLAGS := $(ALL_CFLAGS) -I$(COLLECTOR) -I$(CUNWIND) -I$(CLIVE) -I$(INTERP)/python -I$(INTERP)/lua \
	-fPIC -pthread
COLLECTOR_HDR := include/heapsnoop/alloc_metadata.h include/heapsnoop/codec.h include/heapsnoop/env.h \
	include/heapsnoop/livetable.h include/heapsnoop/livedump.h \
	$(wildcard $(COLLECTOR)/*.h $(COLLECTOR)/port/*.h $(CUNWIND)/*.h $(CLIVE)/*.h $(INTERP)/cops.h \
	$(INTERP)/*/*.h) $(COMMON)/records.h \
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
PRELOAD_SYSROOT_SH = sysroot='$(PRELOAD_SYSROOT)'; \
	if [ "$$sysroot" = bullseye ]; then sysroot=$$(scripts/glibc-sysroot.sh $(ARCH)) || exit 1; fi; \
	sysflags=$${sysroot:+"--sysroot=$$sysroot -B$$sysroot/usr/lib/$(PRELOAD_TRIPLET)/ \
		-L$$sysroot/usr/lib/$(PRELOAD_TRIPLET) -L$$sysroot/lib/$(PRELOAD_TRIPLET)"}

# The preload's variants, each its objects and its folders' libraries in
# its own directory, as the programs' (objects.mk): the shipped one
# ($(OUTPUT)/collector), the test stops' (HS_TEST_STOPS: HEAPSNOOP_TEST_STOP,
# teststop.h, with livetable/teststop.c; never installed) and the 4 KiB
# first segments' (LT_SMALL_SEGS, livetable.h: its tables grow within a few
# blocks, tests/collector/test_table_grows.sh). Every object -fPIC, hidden
# unless exported, initial-exec TLS, frame pointers kept, against the
# sysroot; dependencies through -MMD.
CVARIANTS := $(OUTPUT)/collector $(OUTPUT)/collector/stops $(OUTPUT)/collector/smallseg
PRELOAD_CFLAGS := $(COLLECTOR_CFLAGS) -fvisibility=hidden -fno-omit-frame-pointer -ftls-model=initial-exec
$(OUTPUT)/collector/stops/%: CVARIANT_CFLAGS := -DHS_TEST_STOPS
$(OUTPUT)/collector/smallseg/%: CVARIANT_CFLAGS := -DLT_SMALL_SEGS
# $(call clib_src,VARIANT_DIR,FOLDER): that folder's files in the variant.
clib_src = $(foreach f,$(CLIB_SRC) $(if $(findstring /stops,$(1)),$(CLIVE)/teststop.c),\
	$(if $(filter $(2)/,$(dir $(f))),$(f)))
# $(call clibs,VARIANT_DIR): its libraries.
clibs = $(foreach d,$(CLIB_DIRS),$(1)/$(call lib_name,$(d)))

define cobj_rule
$(1)/obj/%.o: %.c
	$$(call msg,CC,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(PRELOAD_SYSROOT_SH); \
	$$(CC) $$$$sysflags $$(PRELOAD_CFLAGS) $$(CVARIANT_CFLAGS) $$(DEPFLAGS) -c $$< -o $$@
endef
$(foreach v,$(CVARIANTS),$(eval $(call cobj_rule,$(v))))

define clib_rule
$(1)/$(call lib_name,$(2)): $(call objs,$(1),$(call clib_src,$(1),$(2)))
	$$(call msg,AR,$$@)
	$$(Q)rm -f $$@ && $$(AR) rcs $$@ $$^
endef
$(foreach v,$(CVARIANTS),$(foreach d,$(CLIB_DIRS),$(eval $(call clib_rule,$(v),$(d)))))
-include $(patsubst %.o,%.d,$(foreach v,$(CVARIANTS),$(call objs,$(v),$(PRELOAD_SRC) $(CLIVE)/teststop.c)))

# A variant's preload: its top objects, then its folders' libraries whole
# (--whole-archive: a shared library's interposed functions, dlclose()
# among them, and its constructor are what no other member refers to;
# every file is in, as when the preload was one compile).
PRELOAD_LINK = $(PRELOAD_SYSROOT_SH); \
	$(CC) $$sysflags -fPIC -pthread -shared -Wl,-z,defs -Wl,--wrap=log $(filter %.o,$^) \
		-Wl,--whole-archive $(filter %.a,$^) -Wl,--no-whole-archive -ldl -lm -o $@

$(OUTPUT)/libheapsnoop_preload.so: $(call objs,$(OUTPUT)/collector,$(CTOP_SRC)) \
		$(call clibs,$(OUTPUT)/collector) | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(PRELOAD_LINK)

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

# The ways a thread with a creator ends (tests/collector/test_preload_creator.sh).
$(OUTPUT)/tests/prog_creatorends: tests/collector/prog_creatorends.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) $< -pthread -o $@

$(OUTPUT)/tests/check_death: tests/collector/check_death.c tests/collector/ownlist.h \
		$(RECORDS_SRC) $(CODEC_SRC) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(filter %.c,$^) -o $@

# The last dump of prog_paths under heapsnoop --preload, exactly (tests/collector/test_table_grows.sh).
$(OUTPUT)/tests/check_paths: tests/collector/check_paths.c $(RECORDS_SRC) $(CODEC_SRC) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -O2 $(filter %.c,$^) -o $@

# The preload with its test stops (tests/collector/test_death.sh), and
# with 4 KiB first segments (tests/collector/test_table_grows.sh).
$(OUTPUT)/tests/libheapsnoop_preload_stops.so: $(call objs,$(OUTPUT)/collector/stops,$(CTOP_SRC)) \
		$(call clibs,$(OUTPUT)/collector/stops) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(PRELOAD_LINK)

$(OUTPUT)/tests/libheapsnoop_preload_smallseg.so: $(call objs,$(OUTPUT)/collector/smallseg,$(CTOP_SRC)) \
		$(call clibs,$(OUTPUT)/collector/smallseg) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(PRELOAD_LINK)

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
	$(OUTPUT)/tests/prog_luastates $(OUTPUT)/tests/prog_creatorends $(OUTPUT)/tests/check_paths \
	$(OUTPUT)/tests/libheapsnoop_preload_smallseg.so

$(OUTPUT)/am_pool: examples/am_pool.c $(OUTPUT)/libhsam.a | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 -fno-omit-frame-pointer -fno-inline $< $(OUTPUT)/libhsam.a -pthread -lm -o $@
