# SPDX-License-Identifier: MIT
# scripts/mk/install.mk - man pages, install, dist (included by the Makefile, in its order).

# --- man pages, install, dist ------------------------------------------------
# heapsnoop(8) and heapdecode(1), made by help2man from each program's
# --help and the README's content in docs/man/*.h2m (the date: the last
# commit's). They come from running the programs, so a cross build takes
# them from a native build's directory: MAN_FROM (make dist passes it).
MAN_FROM ?= $(if $(filter $(HOST_ARCH),$(ARCH)),$(OUTPUT),build)
MAN_DATE := $(shell git log -1 --format=%ct 2>/dev/null)
MAN_DATE := $(or $(MAN_DATE),0)
HELP2MAN := SOURCE_DATE_EPOCH=$(MAN_DATE) help2man --no-info --version-string=$(VERSION)

$(OUTPUT)/man/heapsnoop.8: $(MAN_FROM)/heapsnoop docs/man/heapsnoop.h2m
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(HELP2MAN) --section=8 --name="trace the heap of a process with eBPF" \
		--include=docs/man/heapsnoop.h2m -o $@ $<

$(OUTPUT)/man/heapdecode.1: $(MAN_FROM)/heapdecode docs/man/heapdecode.h2m
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(HELP2MAN) --section=1 --name="decode, symbolize and report heapsnoop's allocation records" \
		--include=docs/man/heapdecode.h2m -o $@ $<

MAN_PAGES := $(OUTPUT)/man/heapsnoop.8 $(OUTPUT)/man/heapdecode.1
man: $(MAN_PAGES)

# make install PREFIX=/usr/local DESTDIR=: the two programs, the preload
# library, libhsam.a with its headers and a pkg-config file
# (heapsnoop-am), the man pages, heapsnoop agent's systemd unit. PC_PREFIX is the pkg-config file's
# prefix (make dist's is relative to the file, so the tarball can go
# anywhere).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# heapsnoop agent's unit (scripts/heapsnoop-agent.service, docs/AGENT.md).
SYSTEMDDIR ?= $(LIBDIR)/systemd/system
PC_PREFIX ?= $(PREFIX)
# The alloc-metadata library's public headers: alloc_metadata.h and what it includes.
AM_HEADERS := include/heapsnoop/alloc_metadata.h include/heapsnoop/codec.h

# heapsnoop-am.pc, written by install (its paths are install's).
define PC_TEXT
prefix=$(PC_PREFIX)
libdir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
includedir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))

Name: heapsnoop-am
Description: heapsnoop's alloc-metadata library: an allocator's live blocks as heapsnoop's records
Version: $(VERSION)
Cflags: -I$${includedir}
Libs: -L$${libdir} -lhsam -lm -pthread
endef
export PC_TEXT

install: all $(OUTPUT)/libhsam.a $(MAN_PAGES)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 0755 -t $(DESTDIR)$(BINDIR) $(OUTPUT)/heapsnoop $(OUTPUT)/heapdecode
	$(Q)install -D -m 0644 -t $(DESTDIR)$(LIBDIR) $(OUTPUT)/libheapsnoop_preload.so $(OUTPUT)/libhsam.a
	$(Q)install -D -m 0644 -t $(DESTDIR)$(INCLUDEDIR)/heapsnoop $(AM_HEADERS)
	$(Q)mkdir -p $(DESTDIR)$(PKGCONFIGDIR) && \
		printf '%s\n' "$$PC_TEXT" > $(DESTDIR)$(PKGCONFIGDIR)/heapsnoop-am.pc
	$(Q)install -D -m 0644 -t $(DESTDIR)$(MANDIR)/man8 $(OUTPUT)/man/heapsnoop.8
	$(Q)install -D -m 0644 -t $(DESTDIR)$(MANDIR)/man1 $(OUTPUT)/man/heapdecode.1
	$(Q)mkdir -p $(DESTDIR)$(SYSTEMDDIR) && sed 's|@BINDIR@|$(BINDIR)|' \
		scripts/heapsnoop-agent.service > $(DESTDIR)$(SYSTEMDDIR)/heapsnoop-agent.service

# make dist: $(OUTPUT)/dist/heapsnoop-VERSION-COMMIT-MACHINE.tar.gz for
# x86_64 and aarch64, each an install tree (bin, lib, include, share/man)
# under a folder of that name, owner root, dated by the last commit.
DIST_DIR := $(OUTPUT)/dist
DIST_BASE := heapsnoop-$(VERSION)-$(GIT_DESC)
DIST_TAR = tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(MAN_DATE) \
	-C $(DIST_DIR) -cf - $(1) | gzip -n9 > $(DIST_DIR)/$(1).tar.gz
ARM64_MAKE = $(MAKE) --no-print-directory ARCH=arm64 OUTPUT=$(ARM64_OUT) CC=$(ARM64_CROSS)gcc \
	AR=$(ARM64_CROSS)ar

dist: all man
	$(Q)[ $(HOST_ARCH) = x86 ] || { echo "make dist: on an x86-64 machine (it cross-builds arm64)" >&2; exit 1; }
	$(Q)rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	$(Q)$(MAKE) --no-print-directory install DESTDIR=$(abspath $(DIST_DIR))/$(DIST_BASE)-x86_64 \
		PREFIX= PC_PREFIX='$$$${pcfiledir}/../..'
	$(Q)$(ARM64_MAKE) install DESTDIR=$(abspath $(DIST_DIR))/$(DIST_BASE)-aarch64 \
		PREFIX= PC_PREFIX='$$$${pcfiledir}/../..' MAN_FROM=$(abspath $(OUTPUT))
	$(call msg,DIST,$(DIST_DIR)/$(DIST_BASE)-x86_64.tar.gz)
	$(Q)$(call DIST_TAR,$(DIST_BASE)-x86_64)
	$(call msg,DIST,$(DIST_DIR)/$(DIST_BASE)-aarch64.tar.gz)
	$(Q)$(call DIST_TAR,$(DIST_BASE)-aarch64)
	$(Q)rm -rf $(DIST_DIR)/$(DIST_BASE)-x86_64 $(DIST_DIR)/$(DIST_BASE)-aarch64
