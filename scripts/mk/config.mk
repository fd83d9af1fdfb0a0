# SPDX-License-Identifier: MIT
# scripts/mk/config.mk - the toolchain, the architecture built for, the flags, the version, V=1 (included by the Makefile, in its order).

OUTPUT ?= build
CLANG ?= clang
BPFTOOL ?= bpftool
# The architecture built for (docs/ARCH.md): x86 (x86-64) or arm64, this
# machine's by default. `make ARCH=arm64 OUTPUT=build/arm64` on an x86-64
# machine cross-builds with CROSS_COMPILE (aarch64-linux-gnu-, Debian's
# gcc-aarch64-linux-gnu) against the arm64 -dev packages installed
# multiarch (scripts/install-deps.sh --arm64); on an arm64 machine plain
# `make` builds natively. Its BPF object, vmlinux.h and per-architecture
# files (user/tracer/arch/, the rooms' *_x86.c and *_arm64.c) follow ARCH.
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH ?= $(HOST_ARCH)
ifneq ($(filter-out x86 arm64,$(ARCH)),)
$(error ARCH=$(ARCH): heapsnoop builds for x86 (x86-64) or arm64)
endif
ifneq ($(ARCH),$(HOST_ARCH))
CROSS_COMPILE ?= $(if $(filter arm64,$(ARCH)),aarch64-linux-gnu-,x86_64-linux-gnu-)
ifneq ($(origin CC),command line)
CC := $(CROSS_COMPILE)gcc
endif
ifneq ($(origin AR),command line)
AR := $(CROSS_COMPILE)ar
endif
else ifeq ($(origin CC),default)
CC := gcc
endif

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wno-missing-field-initializers
# Each program's folder, and the one both share (docs/DESIGN.md, the map).
COMMON := user/common
TRACER := user/tracer
DECODE := user/decode
# user/: the interpreters' rooms (user/interp/), named by their path from it
# ("interp/python/pyfind.h"), by the tracer, the collector and the tests.
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -I$(COMMON) -I$(OUTPUT) -Iuser
# A program's files see their own folder and common/, never the other's;
# they name another folder's header by its path from their program's
# ("track/trace.h", "model/model.h"). The folders: TRACER_LIB_DIRS,
# DECODE_LIB_DIRS below.
TRACER_INC := -I$(TRACER)
DECODE_INC := -I$(DECODE) -I$(OUTPUT)/proto
TRACER_CFLAGS := $(ALL_CFLAGS) $(TRACER_INC)
DECODE_CFLAGS := $(ALL_CFLAGS) $(DECODE_INC)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# The version (user/common/version.h) and the commit built (--version,
# make dist): `git describe --always --dirty` in a git checkout of this
# tree, else the commit git archive wrote into user/common/gitcommit
# (export-subst: a source archive), else "unknown".
VERSION := $(shell sed -n 's/^\#define HEAPSNOOP_VERSION "\(.*\)"$$/\1/p' user/common/version.h)
GIT_DESC := $(shell if [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ]; then \
	git describe --always --dirty; else sed -n '/^[0-9a-f]\{7,\}$$/p' user/common/gitcommit; fi)
GIT_DESC := $(or $(GIT_DESC),unknown)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif
