# SPDX-License-Identifier: MIT
# scripts/mk/objects.mk - the objects of each folder in the three variants and the folders' libraries (included by the Makefile, in its order).

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
$(addsuffix /obj/$(INTERP)/%.o,$(VARIANTS)): DIR_CFLAGS := $(TRACER_INC)
$(addsuffix /obj/$(DECODE)/%.o,$(VARIANTS)): DIR_CFLAGS := $(DECODE_INC)
# ... the agent's: the pprof builder's header too (its one reach across).
$(addsuffix /obj/$(TRACER)/agent/%.o,$(VARIANTS)): DIR_CFLAGS := $(TRACER_INC) \
	-I$(DECODE)/formats/pprof -I$(OUTPUT)/proto

# The other architecture's unwinder (user/unwind/otherarch.c: heapdecode
# unwinds a log of either): its headers that architecture's.
$(addsuffix /obj/$(UNWIND)/otherarch.o,$(VARIANTS)): DIR_CFLAGS := -D__TARGET_ARCH_$(OTHER_ARCH)

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

# ... and the OpenTelemetry ones, which name each other by their path.
$(OTEL_PB_OBJ): ALL_CFLAGS += -I$(OUTPUT)/proto

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
$(call all_objs,$(AGENT_SRC) $(TRACER)/agent.c): | $(OUTPUT)/proto/profile.pb-c.h $(OUTPUT)/proto/otel.stamp
$(DECODE_OBJ): | $(OUTPUT)/proto/profile.pb-c.h $(OUTPUT)/gitversion.h
-include $(patsubst %.o,%.d,$(TRACER_OBJ) $(DECODE_OBJ) \
	$(call all_objs,$(COMMON_SRC) $(CODEC_SRC)))
