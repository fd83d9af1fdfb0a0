# SPDX-License-Identifier: MIT
# scripts/mk/fuzz.mk - the ASan+UBSan tool and suite, libFuzzer targets and their runs (included by the Makefile, in its order).

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

# ... with the ustack records' offline unwinding (input/ustacks.c, user/unwind/).
$(OUTPUT)/fuzz/fuzz_records: tests/fuzz/fuzz_records.c \
		$(call libs,$(OUTPUT)/fuzz,$(DECODE)/input $(UNWIND) $(COMMON_DIRS) codec) | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -I$(DECODE) $^ -ldw -lelf -lstdc++ -o $@

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
