// SPDX-License-Identifier: MIT
/*
 * treescan.c - the filter's lines on a log of the tree form (see
 * treescan.h). A line is gathered up to its newline; whole, it is parsed
 * once; a record of the tree taken, a record by node= given its stack.
 * The token filter sees every byte in order, the appended stack written
 * between a line and its newline once the filter has nothing pending.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "heapsnoop/codec.h"
#include "input/nodetab.h"
#include "input/treescan.h"
#include "msg.h"
#include "records.h"

struct treescan {
	struct tokscan *ts;
	FILE *out;
	struct nodetab *nt;
	const char *name;
	unsigned long line;	/* the current line's number, from 1 */
	char *buf;		/* the current line, TREESCAN_LINE_MAX + 1 */
	size_t len;
	bool streaming;		/* the current line is too long: streamed */
	uint64_t *frames;	/* a stack (REC_MAX_DEPTH) */
	unsigned long malformed;
};

struct treescan *treescan__new(struct tokscan *ts, FILE *out)
{
	struct treescan *tr = calloc(1, sizeof(*tr));

	if (!tr)
		return NULL;
	tr->ts = ts;
	tr->out = out;
	tr->nt = nodetab__new();
	tr->buf = malloc(TREESCAN_LINE_MAX + 1);
	tr->frames = malloc(REC_MAX_DEPTH * sizeof(*tr->frames));
	if (!tr->nt || !tr->buf || !tr->frames) {
		treescan__free(tr);
		return NULL;
	}
	return tr;
}

void treescan__free(struct treescan *tr)
{
	if (!tr)
		return;
	nodetab__free(tr->nt);
	free(tr->buf);
	free(tr->frames);
	free(tr);
}

void treescan__begin(struct treescan *tr, const char *name)
{
	tr->name = name;
	tr->line = 1;
	tr->len = 0;
	tr->streaming = false;
	tokscan__begin(tr->ts, name);
}

unsigned long treescan__malformed(const struct treescan *tr)
{
	return tr->malformed;
}

static void bad(struct treescan *tr, const char *what, int err)
{
	tr->malformed++;
	elog("%s:%lu: %s, left unchanged: %s", tr->name, tr->line, what, hs_strerror(err));
}

void treescan__blines(FILE *out, uint64_t size, const uint64_t *frames, uint32_t depth)
{
	char bl[HS_BLINE_BUF];
	uint32_t i = 0;

	do {
		struct hs_record rec = { .size = i ? 0 : size,
					 .depth = depth - i < HS_MAX_DEPTH ? depth - i : HS_MAX_DEPTH };

		memcpy(rec.frames, frames + i, rec.depth * sizeof(*frames));
		if (hs_bline_format(&rec, bl, sizeof(bl)) > 0)
			fprintf(out, " %s", bl);
		i += rec.depth;
	} while (i < depth);
}

/* A whole line (NUL-terminated, no newline): taken, then filtered, its stack after it. */
static void whole_line(struct treescan *tr)
{
	struct record r;
	uint32_t depth = 0;
	uint64_t size = 0;
	bool stack = false;
	int err;

	tr->buf[tr->len] = '\0';
	/* A NUL would end the line early: no record read, none numbered past it. */
	if (memchr(tr->buf, '\0', tr->len))
		nodetab__stop(tr->nt);
	else if (records__parse(tr->buf, &r) == 0) {
		err = nodetab__take(tr->nt, &r);
		if (err < 0)
			bad(tr, r.type == REC_TREE ? "tree record not taken" :
				"node record that does not fit its tree", err);
		if ((r.type == REC_LIVE || r.type == REC_STACK) && r.has_node) {
			err = nodetab__record(tr->nt, &r, &size, tr->frames, &depth);
			if (err)
				bad(tr, "record whose node= names no node", err);
			stack = !err;
		}
		if (r.type == REC_DUMP)
			nodetab__reset(tr->nt);
	}
	tokscan__feed(tr->ts, tr->buf, tr->len);
	if (stack) {
		tokscan__end(tr->ts);	/* nothing of the line left pending */
		treescan__blines(tr->out, size, tr->frames, depth);
	}
	tokscan__feed(tr->ts, "\n", 1);
}

void treescan__feed(struct treescan *tr, const char *buf, size_t len)
{
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t n = nl ? (size_t)(nl - buf) : len;

		if (!tr->streaming && tr->len + n > TREESCAN_LINE_MAX) {
			/* No record of ours: the trees numbered no further (said). */
			if (nodetab__stop(tr->nt))
				elog("%s:%lu: a line longer than %u bytes, filtered as it comes: "
				     "no stack is named by the node records after it", tr->name,
				     tr->line, TREESCAN_LINE_MAX);
			tokscan__feed(tr->ts, tr->buf, tr->len);
			tr->len = 0;
			tr->streaming = true;
		}
		if (tr->streaming) {
			tokscan__feed(tr->ts, buf, n);
		} else {
			memcpy(tr->buf + tr->len, buf, n);
			tr->len += n;
		}
		if (!nl)
			return;
		if (tr->streaming)
			tokscan__feed(tr->ts, "\n", 1);
		else
			whole_line(tr);
		tr->line++;
		tr->len = 0;
		tr->streaming = false;
		buf += n + 1;
		len -= n + 1;
	}
}

void treescan__end(struct treescan *tr)
{
	/* A last line without its newline: looked at as the others. */
	if (!tr->streaming && tr->len) {
		tr->buf[tr->len] = '\0';
		tokscan__feed(tr->ts, tr->buf, tr->len);
	}
	tr->len = 0;
	tokscan__end(tr->ts);
}
