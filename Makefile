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

# The areas, each a file of scripts/mk/, included in this order (later ones use the
# variables and rules of earlier ones).
include scripts/mk/config.mk scripts/mk/folders.mk

.PHONY: FORCE all clean check demo man install dist deps deps-arm64 bench fuzz fuzz-run fuzz-run-records kmatrix arm64 arm64-build
.DEFAULT_GOAL := all

all: $(OUTPUT)/heapdecode $(OUTPUT)/heapsnoop $(OUTPUT)/libheapsnoop_preload.so

$(OUTPUT) $(OUTPUT)/collector $(OUTPUT)/tests $(OUTPUT)/asan $(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

# The commit, rewritten only when it changed (so that only then both relink).
$(OUTPUT)/gitversion.h: FORCE | $(OUTPUT)
	$(Q)echo '#define HEAPSNOOP_GIT "$(GIT_DESC)"' | cmp -s - $@ || \
		echo '#define HEAPSNOOP_GIT "$(GIT_DESC)"' > $@

include scripts/mk/objects.mk scripts/mk/bpf.mk scripts/mk/programs.mk scripts/mk/collector.mk scripts/mk/mcu.mk scripts/mk/install.mk scripts/mk/tests.mk scripts/mk/fuzz.mk

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
		$(OUTPUT)/tests/test_otlpenc \
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
		$(OUTPUT)/tests/test_trace $(OUTPUT)/tests/test_cfi $(OUTPUT)/tests/test_namecache $(OUTPUT)/tests/test_probesite $(OUTPUT)/tests/test_probesite_arm64 $(OUTPUT)/tests/test_pydecode_arm64 \
		$(OUTPUT)/asan/test_codec $(OUTPUT)/asan/heapdecode fuzz $(TRACER_PROGS) $(UNWIND_PROGS) \
		$(AGENT_PROGS) \
		$(OUTPUT)/tests/python3.11 $(OUTPUT)/tests/lua5.4 $(OUTPUT)/tests/lua5.1 man arm64-build
	$(Q)tests/run.sh $(OUTPUT)

# KMATRIX_KERNELS="6.1" for one kernel.
kmatrix: deps
	$(Q)$(MAKE) --no-print-directory all $(TRACER_PROGS) $(UNWIND_PROGS) $(OUTPUT)/tests/prog_collect \
		$(OUTPUT)/tests/python3.11 $(OUTPUT)/tests/lua5.4 $(OUTPUT)/tests/lua5.1
	$(Q)tests/kmatrix/run.sh $(OUTPUT)

include scripts/mk/arm64.mk

bench: deps all
	$(Q)bench/run.sh $(OUTPUT)

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)
