/* SPDX-License-Identifier: MIT */
/*
 * debuginfod.h - a module's separate debug info fetched by build ID from
 * the debuginfod servers DEBUGINFOD_URLS names, through elfutils' own
 * client program, debuginfod-find(1), run as a child.
 *
 * libdwfl does this itself by dlopen()ing libdebuginfod.so, which a
 * static program must not do (user/common/nodlopen.c): this is the same
 * client, its cache (DEBUGINFOD_CACHE_PATH) and its settings
 * (DEBUGINFOD_TIMEOUT, ...), in a process of its own.
 */
#ifndef HEAPSNOOP_DEBUGINFOD_H
#define HEAPSNOOP_DEBUGINFOD_H

/*
 * The debug file of build ID @id (@len bytes) from debuginfod, when
 * DEBUGINFOD_URLS is set and not empty. Returns a read-only fd, with the
 * file's path in *@path (malloc'ed, for libdwfl, which frees it), or -1:
 * not set, not found, or no debuginfod-find to run (said once, with what
 * to install). Blocks while the client downloads (DEBUGINFOD_TIMEOUT).
 */
int debuginfod__find(const unsigned char *id, int len, char **path);

#endif /* HEAPSNOOP_DEBUGINFOD_H */
