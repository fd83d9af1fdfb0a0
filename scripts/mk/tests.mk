# SPDX-License-Identifier: MIT
# scripts/mk/tests.mk - the unit tests, the programs the tracer tests trace (included by the Makefile, in its order).

# --- tests --------------------------------------------------------------------
# A C unit test (tests/ as the source folders): its file and the libraries
# of the folders it tests, in link order ($^), as the ASan+UBSan build's
# when it runs under them; its headers followed as the objects' are.
TEST_DEP = -MMD -MP -MF $@.d -MT $@
UNIT_TESTS := $(addprefix $(OUTPUT)/tests/,test_codec test_records test_frametab test_htab test_suppress \
	test_tracker test_pace test_freelog test_trace test_probesite test_probesite_arm64 test_pydecode_arm64 test_model \
	test_pylines test_pyfind test_splice test_perfmap test_jitdump test_lua test_luafind test_luasegs test_luabpf \
	test_ljbpf test_namecache test_holders test_otlpenc test_cfi)
-include $(UNIT_TESTS:=.d)
# Each is linked by this one rule: the prerequisites below (its file, then
# the libraries of the folders it tests, in link order, as a group), with
# its flags (TEST_CFLAGS: by default common/'s include paths under
# ASan+UBSan; a tracer folder's test, the tracer's) and the libraries
# beyond cmocka it needs (TEST_LIBS), each set for it below.
TEST_CFLAGS = $(ALL_CFLAGS) $(SAN)
$(UNIT_TESTS): $(OUTPUT)/tests/%: | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(TEST_CFLAGS) $(TEST_DEP) $(LINK_IN) $(TEST_LIBS) -lcmocka -o $@

$(OUTPUT)/tests/test_codec: tests/codec/test_codec.c $(call libs,$(OUTPUT),codec) | $(OUTPUT)/tests
$(OUTPUT)/tests/test_codec: TEST_CFLAGS = $(ALL_CFLAGS)

$(OUTPUT)/tests/test_records: tests/common/test_records.c $(call libs,$(OUTPUT)/asan,$(COMMON_DIRS) codec) \
		| $(OUTPUT)/tests

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
		$(call libs,$(OUTPUT)/asan,$(addprefix $(DECODE)/,model input) $(UNWIND) $(COMMON_DIRS) codec) | $(OUTPUT)/tests
$(OUTPUT)/tests/test_model: TEST_CFLAGS = $(DECODE_CFLAGS) $(SAN)
$(OUTPUT)/tests/test_model: TEST_LIBS = -lelf -ldw -lzstd -lz -lstdc++ -lm

$(OUTPUT)/tests/test_frametab: tests/common/test_frametab.c $(call libs,$(OUTPUT)/asan,$(COMMON_DIRS) codec) \
		| $(OUTPUT)/tests

# The CPython pieces the tracer and the collector share (user/interp/python/).
$(OUTPUT)/tests/test_pylines: tests/interp/test_pylines.c $(call libs,$(OUTPUT)/asan,$(INTERP)/python $(COMMON_DIRS)) \
		| $(OUTPUT)/tests

# The tracer's CPython finder and resolver on real binaries and a real
# process (tests/interp/test_pyfind.sh).
$(OUTPUT)/tests/test_pyfind: tests/interp/test_pyfind.c \
		$(call libs,$(OUTPUT)/asan,$(INTERP_DIRS) $(addprefix $(TRACER)/,maps arch) $(UNWIND) \
		$(COMMON_DIRS) codec) | $(OUTPUT)/tests
$(OUTPUT)/tests/test_pyfind: TEST_CFLAGS = $(TRACER_CFLAGS) $(SAN)
$(OUTPUT)/tests/test_pyfind: TEST_LIBS = -pthread -lbpf -ldw -lelf -lcapstone -lz

# The splice of interpreter frames among native ones.
$(OUTPUT)/tests/test_splice: tests/interp/test_splice.c $(call libs,$(OUTPUT)/asan,$(INTERP)) \
		| $(OUTPUT)/tests
$(OUTPUT)/tests/test_splice: TEST_CFLAGS = $(TRACER_CFLAGS) $(SAN)

# The Lua pieces the tracer and the collector share (user/interp/lua/):
# layouts, prototypes, names, the walk; tested against Debian's interpreters.
# The three Lua walk tests share tests/interp/luaharness.c (the interpreter
# as a child, its state, the BPF walk at its read(0)).
LUA_HARNESS := tests/interp/luaharness.c tests/interp/luaharness.h
$(OUTPUT)/tests/test_lua: tests/interp/test_lua.c $(LUA_HARNESS) \
		$(call libs,$(OUTPUT)/asan,$(INTERP)/luajit $(INTERP)/lua $(COMMON_DIRS)) | $(OUTPUT)/tests
$(OUTPUT)/tests/test_lua: TEST_LIBS = -lbpf -lelf -lz

# The BPF side's Lua walk alone (user/interp/lua/lua.bpf.h), against the loader's.
$(OUTPUT)/tests/luawalk.bpf.o: tests/interp/luawalk.bpf.c user/interp/lua/lua.bpf.h include/heapsnoop/luaframe.h \
		include/heapsnoop/event.h vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/tests
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/luawalk.skel.h: $(OUTPUT)/tests/luawalk.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name luawalk_bpf > $@

$(OUTPUT)/tests/test_luabpf: tests/interp/test_luabpf.c $(LUA_HARNESS) \
		$(call libs,$(OUTPUT),$(INTERP)/luajit $(INTERP)/lua $(COMMON_DIRS)) \
		| $(OUTPUT)/tests/luawalk.skel.h $(OUTPUT)/tests
$(OUTPUT)/tests/test_luabpf: TEST_CFLAGS = $(ALL_CFLAGS) -I$(OUTPUT)/tests
$(OUTPUT)/tests/test_luabpf: TEST_LIBS = -lbpf -lelf -lz

# The BPF side's LuaJIT walk alone (user/interp/luajit/luajit.bpf.h), against ljwalk.c's:
# the same harness as Lua's, built with HS_WALK_LJ.
$(OUTPUT)/tests/ljwalk.bpf.o: tests/interp/luawalk.bpf.c user/interp/lua/lua.bpf.h user/interp/luajit/luajit.bpf.h \
		include/heapsnoop/luaframe.h include/heapsnoop/event.h vmlinux/$(ARCH)/vmlinux.h \
		| $(OUTPUT)/tests
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DHS_WALK_LJ -c $< -o $@

$(OUTPUT)/tests/ljwalk.skel.h: $(OUTPUT)/tests/ljwalk.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name ljwalk_bpf > $@

$(OUTPUT)/tests/test_ljbpf: tests/interp/test_ljbpf.c $(LUA_HARNESS) \
		$(call libs,$(OUTPUT),$(INTERP)/luajit $(INTERP)/lua $(COMMON_DIRS)) \
		| $(OUTPUT)/tests/ljwalk.skel.h $(OUTPUT)/tests
$(OUTPUT)/tests/test_ljbpf: TEST_CFLAGS = $(ALL_CFLAGS) -I$(OUTPUT)/tests
$(OUTPUT)/tests/test_ljbpf: TEST_LIBS = -lbpf -lelf -lz

# The Lua VM finder on Debian's files; a Lua walk cut into the loop's runs.
$(OUTPUT)/tests/test_luafind: tests/interp/test_luafind.c \
		$(call libs,$(OUTPUT)/asan,$(INTERP_DIRS) $(addprefix $(TRACER)/,maps arch) $(UNWIND) \
		$(COMMON_DIRS)) | $(OUTPUT)/tests
$(OUTPUT)/tests/test_luafind: TEST_CFLAGS = $(TRACER_CFLAGS) $(SAN)
$(OUTPUT)/tests/test_luafind: TEST_LIBS = -ldw -lelf -lz -lcapstone

$(OUTPUT)/tests/test_luasegs: tests/interp/test_luasegs.c $(call libs,$(OUTPUT)/asan,$(INTERP)/lua) \
		| $(OUTPUT)/tests
$(OUTPUT)/tests/test_luasegs: TEST_CFLAGS = $(TRACER_CFLAGS) $(SAN)

# A process's perf map read as it grows (maps/perfmap.c).
$(OUTPUT)/tests/test_perfmap: tests/tracer/maps/test_perfmap.c $(call libs,$(OUTPUT)/asan,$(TRACER)/maps $(COMMON_DIRS)) \
		| $(OUTPUT)/tests
$(OUTPUT)/tests/test_perfmap: TEST_CFLAGS = $(TRACER_CFLAGS) $(SAN)

# A process's jitdump: its records, its mapping, merged with its perf map (maps/jitdump*.c, jitnames.c).
$(OUTPUT)/tests/test_jitdump: tests/tracer/maps/test_jitdump.c \
		$(call libs,$(OUTPUT)/asan,$(TRACER)/maps $(COMMON_DIRS)) | $(OUTPUT)/tests
$(OUTPUT)/tests/test_jitdump: TEST_CFLAGS = $(TRACER_CFLAGS) $(SAN)

# Who holds the live heap (common/holders.c), frames named by the test.
$(OUTPUT)/tests/test_holders: tests/common/test_holders.c $(call libs,$(OUTPUT)/asan,$(COMMON_DIRS)) \
		| $(OUTPUT)/tests
$(OUTPUT)/tests/test_holders: TEST_LIBS = -lelf -ldw -lstdc++

$(OUTPUT)/tests/test_htab: tests/common/test_htab.c $(call libs,$(OUTPUT)/asan,$(COMMON_DIRS)) | $(OUTPUT)/tests

$(OUTPUT)/tests/test_suppress: tests/common/test_suppress.c $(call libs,$(OUTPUT)/asan,$(COMMON_DIRS)) | $(OUTPUT)/tests

$(OUTPUT)/tests/test_tracker: tests/tracer/track/test_tracker.c \
		$(call libs,$(OUTPUT),$(TRACER)/track $(COMMON_DIRS) codec) | $(OUTPUT)/tests
$(OUTPUT)/tests/test_tracker: TEST_CFLAGS = $(TRACER_CFLAGS)

$(OUTPUT)/tests/test_pace: tests/tracer/stream/test_pace.c $(call libs,$(OUTPUT)/asan,$(TRACER)/stream) \
		| $(OUTPUT)/tests
$(OUTPUT)/tests/test_pace: TEST_CFLAGS = $(TRACER_CFLAGS) $(SAN)

$(OUTPUT)/tests/test_freelog: tests/tracer/stream/test_freelog.c $(call libs,$(OUTPUT)/asan,$(TRACER)/stream) \
		| $(OUTPUT)/tests
$(OUTPUT)/tests/test_freelog: TEST_CFLAGS = $(TRACER_CFLAGS) $(SAN)

# The live view's name cache (output/namecache.c) and the runtime frames'
# rule it shares with the headline (common/holders.c).
$(OUTPUT)/tests/test_namecache: tests/tracer/output/test_namecache.c \
		$(call libs,$(OUTPUT)/asan,$(TRACER)/output $(COMMON_DIRS)) | $(OUTPUT)/tests
$(OUTPUT)/tests/test_namecache: TEST_CFLAGS = $(TRACER_CFLAGS) $(SAN)
$(OUTPUT)/tests/test_namecache: TEST_LIBS = -lelf -ldw -lstdc++

# The per-process state and what it leans on, and the closing accounting
# (output/status.c) of its counts.
# The unwinder's CFI cache trimmed, on its own executable, and ended
# processes' stack tails let go (tests/tracer/unwind/test_cfi.c).
$(OUTPUT)/tests/test_cfi: tests/tracer/unwind/test_cfi.c \
		$(call libs,$(OUTPUT)/asan,$(addprefix $(TRACER)/,unwind maps arch) $(UNWIND) $(COMMON_DIRS) codec) \
		| $(OUTPUT)/tests
$(OUTPUT)/tests/test_cfi: TEST_CFLAGS = $(TRACER_CFLAGS) $(SAN)
$(OUTPUT)/tests/test_cfi: TEST_LIBS = -lelf -ldw -lm

$(OUTPUT)/tests/test_trace: tests/tracer/track/test_trace.c \
		$(call libs,$(OUTPUT)/asan,$(addprefix $(TRACER)/,output track unwind attach maps arch) $(UNWIND) $(COMMON_DIRS) codec) \
		| $(OUTPUT)/tests
$(OUTPUT)/tests/test_trace: TEST_CFLAGS = $(TRACER_CFLAGS) $(SAN)
$(OUTPUT)/tests/test_trace: TEST_LIBS = -lbpf -lelf -ldw -lm

# The probe sites of x86-64 and of arm64, each tested on any machine
# (capstone decodes both): the architecture's file named, whichever ARCH
# this build's arch/ library holds.
$(OUTPUT)/tests/test_probesite: tests/tracer/arch/test_probesite.c $(TRACER)/arch/probesite_x86.c \
		$(call libs,$(OUTPUT),$(TRACER)/maps $(COMMON)) | $(OUTPUT)/tests
$(OUTPUT)/tests/test_probesite: TEST_CFLAGS = $(TRACER_CFLAGS)
$(OUTPUT)/tests/test_probesite: TEST_LIBS = -lcapstone -lelf

$(OUTPUT)/tests/test_probesite_arm64: tests/tracer/arch/test_probesite_arm64.c $(TRACER)/arch/probesite_arm64.c \
		$(call libs,$(OUTPUT),$(TRACER)/maps $(COMMON)) | $(OUTPUT)/tests
$(OUTPUT)/tests/test_probesite_arm64: TEST_CFLAGS = $(TRACER_CFLAGS)
$(OUTPUT)/tests/test_probesite_arm64: TEST_LIBS = -lcapstone -lelf

# The arm64 decoders of CPython's and LuaJIT's code, on any machine.
$(OUTPUT)/tests/test_pydecode_arm64: tests/tracer/arch/test_pydecode_arm64.c \
		$(INTERP)/python/pydecode_arm64.c $(INTERP)/luajit/ljdecode_arm64.c $(INTERP)/insnwalk.c \
		| $(OUTPUT)/tests
$(OUTPUT)/tests/test_pydecode_arm64: TEST_CFLAGS = $(TRACER_CFLAGS)
$(OUTPUT)/tests/test_pydecode_arm64: TEST_LIBS = -lcapstone

# Programs the tracer tests trace: frame pointers, no inlining, no sibling
# calls, so their stacks are exactly their source's call chains.
PROG_CFLAGS := -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread
TRACER_PROGS := $(patsubst tests/tracer/prog_%.c,$(OUTPUT)/tests/prog_%,$(wildcard tests/tracer/prog_*.c))

# heapsnoop agent's OTLP encoder (agent/otlp.c) on a pprof of profbuild's,
# read back with the generated messages; all under ASan+UBSan.
OTEL_PB_ASAN_OBJ := $(patsubst $(OUTPUT)/%.c,$(OUTPUT)/asan/obj/%.o,$(OTEL_PB))
$(OTEL_PB_ASAN_OBJ): ALL_CFLAGS += -I$(OUTPUT)/proto
$(OUTPUT)/tests/test_otlpenc: tests/agent/test_otlpenc.c $(call objs,$(OUTPUT)/asan,$(TRACER)/agent/otlp.c) \
		$(OTEL_PB_ASAN_OBJ) $(call libs,$(OUTPUT)/asan,$(DECODE)/formats/pprof $(COMMON_DIRS) codec) \
		| $(OUTPUT)/tests
$(OUTPUT)/tests/test_otlpenc: TEST_CFLAGS = $(TRACER_CFLAGS) -I$(TRACER)/agent -I$(DECODE)/formats/pprof \
	-I$(OUTPUT)/proto $(SAN)
$(OUTPUT)/tests/test_otlpenc: TEST_LIBS = -lprotobuf-c -lz -lelf -ldw -lstdc++ -lm

# heapsnoop agent's test program (tests/agent/test_agent.sh, test_otlp.sh): a heap known to the byte.
AGENT_PROGS := $(OUTPUT)/tests/prog_agent
$(OUTPUT)/tests/prog_agent: tests/agent/prog_agent.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) $< -o $@

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
