# SPDX-License-Identifier: MIT
# scripts/mk/programs.mk - heapsnoop and heapdecode (included by the Makefile, in its order).

# --- heapsnoop ----------------------------------------------------------------
$(OUTPUT)/heapsnoop: $(call objs,$(OUTPUT),$(TRACER_TOP_SRC)) $(HEAPSNOOP_STATIC_OBJ) \
		$(call HEAPSNOOP_A,$(OUTPUT)) | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(RELEASE_LDFLAGS) $(LINK_IN) $(HEAPSNOOP_LIBS) $(RELEASE_LIBS) -o $@

# heapsnoop agent's OTLP messages (folders.mk's OTEL_PB): the .proto files
# out of Debian's package, then protoc-c over the four the push uses.
$(OUTPUT)/heapsnoop: $(OTEL_PB_OBJ)
$(OUTPUT)/otel/include/opentelemetry/proto/profiles/v1development/profiles.proto: scripts/otel-proto.sh
	$(call msg,OTEL-PROTO,$(OUTPUT)/otel/include)
	$(Q)scripts/otel-proto.sh $(OUTPUT)/otel/include
	$(Q)touch $@
$(OUTPUT)/proto/otel.stamp: $(OUTPUT)/otel/include/opentelemetry/proto/profiles/v1development/profiles.proto
	$(call msg,PROTOC-C,$(OUTPUT)/proto/opentelemetry)
	$(Q)mkdir -p $(OUTPUT)/proto
	$(Q)protoc-c --c_out=$(OUTPUT)/proto --proto_path=$(OUTPUT)/otel/include \
		$(patsubst %,opentelemetry/proto/%.proto,$(OTEL_PROTOS))
	$(Q)touch $@
$(OTEL_PB) $(OTEL_PB:.c=.h): $(OUTPUT)/proto/otel.stamp ;

# --- heapdecode ---------------------------------------------------------------
$(OUTPUT)/proto/profile.pb-c.h: $(PROFILE_PB)
$(PROFILE_PB): $(DECODE)/formats/pprof/proto/profile.proto
	$(call msg,PROTOC-C,$@)
	$(Q)mkdir -p $(OUTPUT)/proto
	$(Q)protoc-c --c_out=$(OUTPUT)/proto --proto_path=$(DECODE)/formats/pprof/proto $<

$(OUTPUT)/heapdecode: $(call objs,$(OUTPUT),$(DECODE_TOP_SRC)) $(call HEAPDECODE_A,$(OUTPUT)) | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(RELEASE_LDFLAGS) $^ $(HEAPDECODE_LIBS) $(RELEASE_LIBS) -o $@
