/* SPDX-License-Identifier: MIT */
/*
 * version.h - the version both programs say (--version, speedscope's
 * exporter; the Makefile reads it for `make dist` and the pkg-config
 * file), and the commit they were built from: gitversion.h, which the
 * Makefile writes into the build directory from `git describe --always
 * --dirty`, or from user/common/gitcommit in a source archive made by
 * git archive (export-subst), else "unknown".
 */
#ifndef HEAPSNOOP_VERSION_H
#define HEAPSNOOP_VERSION_H

#define HEAPSNOOP_VERSION "0.2.0"

#include "gitversion.h"	/* HEAPSNOOP_GIT */

#endif /* HEAPSNOOP_VERSION_H */
