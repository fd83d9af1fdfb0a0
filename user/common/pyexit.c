// SPDX-License-Identifier: MIT
/*
 * pyexit.c - a Python that freed its heap at exit (see pyexit.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pyexit.h"
#include "text.h"

bool pyexit__freed(const char *comm, uint64_t peak, uint64_t live)
{
	return comm && !strncmp(comm, "python", 6) && peak >= PYEXIT_MIN_PEAK &&
	       live <= peak / PYEXIT_RATIO;
}

const char *pyexit__text(char *buf, size_t len, int pid, const char *comm, uint64_t peak,
			 uint64_t peak_count, int64_t ago_ms, uint64_t live, const char *log,
			 unsigned int read_ms)
{
	char when[64] = "", lv[32], pk[32];

	if (ago_ms >= 0)
		snprintf(when, sizeof(when), ", %" PRId64 ".%" PRId64 " s before the end",
			 ago_ms / 1000, ago_ms % 1000 / 100);
	if (read_ms) {
		snprintf(buf, len, "%s (pid %d) freed its heap at exit: %s live at the end, its "
			 "peak at least %s (%" PRIu64 " bytes) in %" PRIu64 " allocations%s (the "
			 "most live read, every %u ms); see it with: heapsnoop --preload -i SECS "
			 "(a dump every SECS seconds), then heapdecode --report --dump N %s", comm,
			 pid, text_size(live, false, lv), text_size(peak, false, pk), peak,
			 peak_count, when, read_ms, log ? log : "LOG");
		return buf;
	}
	snprintf(buf, len, "%s (pid %d) freed its heap at exit: %s live at the end, its peak "
		 "%s (%" PRIu64 " bytes) in %" PRIu64 " allocations%s; see it with: heapdecode "
		 "--stats --sort peak %s", comm, pid, text_size(live, false, lv),
		 text_size(peak, false, pk), peak, peak_count, when, log ? log : "LOG");
	return buf;
}
