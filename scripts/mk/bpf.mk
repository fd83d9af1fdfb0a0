# SPDX-License-Identifier: MIT
# scripts/mk/bpf.mk - the BPF object and its skeleton (included by the Makefile, in its order).

# --- BPF object and its skeleton ---------------------------------------------
$(OUTPUT)/heapsnoop.bpf.o: bpf/heapsnoop.bpf.c $(wildcard bpf/*.h $(INTERP)/*/*.bpf.h) include/heapsnoop/event.h \
		include/heapsnoop/interpframe.h include/heapsnoop/arch.h vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)llvm-strip -g $@.tmp -o $@ && rm -f $@.tmp

$(OUTPUT)/heapsnoop.skel.h: $(OUTPUT)/heapsnoop.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name heapsnoop_bpf > $@
