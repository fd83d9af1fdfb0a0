# SPDX-License-Identifier: MIT
# scripts/mk/arm64.mk - the arm64 build and its tests in qemu (included by the Makefile, in its order).

# --- arm64 (docs/ARCH.md): the tools and the programs its test traces, built
# for arm64 into $(OUTPUT)/arm64 (cross, or natively on an arm64 machine);
# tests/arm64/run.sh runs them in qemu-system-aarch64 and symbolizes logs
# across architectures with this build's heapdecode.
ARM64_OUT := $(OUTPUT)/arm64
ARM64_PROGS := $(addprefix $(ARM64_OUT)/tests/,prog_semantics prog_waiter prog_threads prog_nofp \
	libnofp_late.so prog_semantics_pac prog_slotexit libexitcall.so prog_collect test_unwind \
	prog_deep prog_deep_eh prog_deep_nohdr prog_deep_dbg prog_creator \
	$(COLLECTOR_ARM64_PROGS))

ARM64_CROSS := $(if $(filter arm64,$(HOST_ARCH)),,aarch64-linux-gnu-)

arm64-build:
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 OUTPUT=$(ARM64_OUT) CC=$(ARM64_CROSS)gcc \
		AR=$(ARM64_CROSS)ar all $(ARM64_PROGS)

arm64: deps-arm64
	$(Q)$(MAKE) --no-print-directory all $(OUTPUT)/asan/heapdecode $(UNWIND_PROGS) \
		$(OUTPUT)/tests/prog_semantics arm64-build
	$(Q)tests/arm64/run.sh $(OUTPUT)
