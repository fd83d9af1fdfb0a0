# SPDX-License-Identifier: MIT
# scripts/mk/programs.mk - heapsnoop and heapdecode (included by the Makefile, in its order).

# --- heapsnoop ----------------------------------------------------------------
$(OUTPUT)/heapsnoop: $(call objs,$(OUTPUT),$(TRACER_TOP_SRC)) $(HEAPSNOOP_STATIC_OBJ) \
		$(call HEAPSNOOP_A,$(OUTPUT)) | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(RELEASE_LDFLAGS) $(LINK_IN) $(HEAPSNOOP_LIBS) $(RELEASE_LIBS) -o $@

# --- heapdecode ---------------------------------------------------------------
$(OUTPUT)/proto/profile.pb-c.h: $(PROFILE_PB)
$(PROFILE_PB): $(DECODE)/formats/pprof/proto/profile.proto
	$(call msg,PROTOC-C,$@)
	$(Q)mkdir -p $(OUTPUT)/proto
	$(Q)protoc-c --c_out=$(OUTPUT)/proto --proto_path=$(DECODE)/formats/pprof/proto $<

$(OUTPUT)/heapdecode: $(call objs,$(OUTPUT),$(DECODE_TOP_SRC)) $(call HEAPDECODE_A,$(OUTPUT)) | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(RELEASE_LDFLAGS) $^ $(HEAPDECODE_LIBS) $(RELEASE_LIBS) -o $@
