// SPDX-License-Identifier: MIT
/*
 * amdump.c - the alloc-metadata list's dump on Linux
 * (include/heapsnoop/alloc_metadata.h, hs_am__dump(), hs_am_maps_self()):
 * the record lines through stdio (records.c's writers), the wall-clock
 * time, a deep stack's continuation (stacktail.c), this process's `map`
 * records (modmaps.c). A system without them writes the same lines with
 * amlines.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "amlist.h"
#include "livetable/modmaps.h"
#include "records.h"
#include "stacktail.h"

_Static_assert(HS_AM_CUT_DEPTH == REC_CUT_DEPTH && HS_AM_CUT_UNREADABLE == REC_CUT_UNREADABLE,
	       "a node's cut bits are the live record's");

/* One `live` line: the blob behind @user as a `~m#` token. */
static int write_live(FILE *out, int pid, const void *user)
{
	char tok[HS_TOKEN_BUF] = "~m#";
	struct record r = { .type = REC_LIVE, .pid = pid, .ptr = (uintptr_t)user,
			    .cut = hs_am_node(user)->cut };
	size_t len;
	const uint8_t *blob = hs_am_blob(user, &len);
	int n = hs_base64_encode(blob, len, tok + 3, sizeof(tok) - 3);

	if (n < 0) {
		r.size = hs_am_node(user)->size;
		r.error = hs_strerror(n);
		return records__write(out, &r);
	}
	r.token = tok;
	r.token_len = (size_t)n + 3;
	/* A deep stack: its continuation, kept once for all its blocks. */
	r.tail = stacktail__tokens(hs_am_node(user)->tail, &r.depth);
	r.tail_len = r.tail ? strlen(r.tail) : 0;
	if (!r.tail)
		r.depth = 0;
	return records__write(out, &r);
}

int hs_am__dump(struct hs_am *am, FILE *out, int pid, const char *reason,
		hs_am_maps_fn maps, void *arg)
{
	struct record r = { .type = REC_DUMP };
	struct timespec now;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	r.time_s = now.tv_sec;
	r.time_ms = (uint32_t)(now.tv_nsec / 1000000);
	snprintf(r.reason, sizeof(r.reason), "%s", reason);
	am_lock_take(&am->lock);
	r.live = am->live;
	r.bytes = am->bytes;
	r.sample_bytes = am->sample_bytes;
	/* stacks=0: the list keeps blobs, not unique stacks (docs/COLLECTOR.md). */
	err |= records__write(out, &r);
	if (maps)
		err |= maps(out, pid, arg);
	for (struct hs_am_node *n = am->head.next; n != &am->head; n = n->next)
		err |= write_live(out, pid, n + 1);
	r = (struct record){ .type = REC_END_DUMP, .live = am->live };
	err |= records__write(out, &r);
	am_lock_give(&am->lock);
	return err || fflush(out) ? -EIO : 0;
}

/* --- map records of this process (modmaps.c's segments) ------------------ */

struct write_ctx {
	FILE *out;
	int pid;
};

static int write_seg(void *arg, const struct modmap_seg *seg)
{
	struct write_ctx *w = arg;
	struct record r = { .type = REC_MAP, .pid = w->pid, .start = seg->start, .end = seg->end,
			    .off = seg->off, .path = seg->path };

	memcpy(r.build_id, seg->build_id, sizeof(r.build_id));
	return records__write(w->out, &r) ? -EIO : 0;
}

int hs_am_maps_self(FILE *out, int pid, void *arg)
{
	struct write_ctx w = { .out = out, .pid = pid };

	(void)arg;
	return modmaps__each(write_seg, &w);
}
