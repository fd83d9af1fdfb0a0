# SPDX-License-Identifier: MIT
# scripts/mk/mcu.mk - the codec and libhsam on a microcontroller and on 32-bit x86 Linux (docs/MCU.md) (included by the Makefile, in its order).

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
