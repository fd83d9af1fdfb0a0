// SPDX-License-Identifier: MIT
/*
 * tokscan.c - streaming token replacement (see tokscan.h).
 *
 * A byte-at-a-time state machine over whatever chunks the caller reads, so
 * memory is bounded by the longest token (ops->max_len), not the longest
 * line. Runs of plain text are written with one fwrite each.
 */
#include <stdlib.h>
#include <string.h>

#include "heapsnoop/codec.h"
#include "msg.h"
#include "tokscan.h"

enum state {
	S_LINE_START,	/* collecting a possible bare token */
	S_LINE_CR,	/* a bare token followed by '\r' */
	S_TEXT,
	S_LEAD1,	/* seen leadin[0] */
	S_LEAD2,	/* seen leadin[0..1] */
	S_TOKEN,	/* collecting a token after the lead-in */
	S_RAWTOK,	/* copying the rest of an over-long token */
};

struct tokscan {
	const struct tokscan_ops *ops;
	void *ctx;
	FILE *out;
	bool report;		/* malformed tokens said on stderr */
	const char *name;
	unsigned long line;
	enum state state;
	char *tok;
	size_t tok_len;
	bool tok_char[256];	/* ops->is_tok_char, tabulated */
	bool text_stop[256];	/* ends a run of plain text: '\n', leadin[0] */
	unsigned long converted, malformed;
};

struct tokscan *tokscan__new(const struct tokscan_ops *ops, void *ctx, FILE *out, bool report)
{
	struct tokscan *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return NULL;
	ts->tok = malloc(ops->max_len);
	if (!ts->tok) {
		free(ts);
		return NULL;
	}
	for (int c = 0; c < 256; c++)
		ts->tok_char[c] = ops->is_tok_char(c);
	ts->text_stop['\n'] = true;
	ts->text_stop[(unsigned char)ops->leadin[0]] = true;
	ts->ops = ops;
	ts->ctx = ctx;
	ts->out = out;
	ts->report = report;
	tokscan__begin(ts, "<stdin>");
	return ts;
}

void tokscan__free(struct tokscan *ts)
{
	if (!ts)
		return;
	free(ts->tok);
	free(ts);
}

void tokscan__begin(struct tokscan *ts, const char *name)
{
	ts->name = name;
	ts->line = 1;
	ts->state = S_LINE_START;
	ts->tok_len = 0;
}

unsigned long tokscan__converted(const struct tokscan *ts)
{
	return ts->converted;
}

unsigned long tokscan__malformed(const struct tokscan *ts)
{
	return ts->malformed;
}

/* Convert the collected token; on failure copy it (with its lead-in). */
static void finish_token(struct tokscan *ts, bool leadin)
{
	int n = ts->ops->convert(ts->ctx, ts->tok, ts->tok_len, ts->out);

	if (n >= 0) {
		ts->converted++;
		fwrite_unlocked(ts->tok + n, 1, ts->tok_len - (size_t)n, ts->out);
	} else {
		if (leadin) {
			ts->malformed++;
			if (ts->report)
				elog("%s:%lu: malformed %s, left unchanged: %s", ts->name, ts->line,
				     ts->ops->what, hs_strerror(n));
			fwrite_unlocked(ts->ops->leadin, 1, 3, ts->out);
		}
		fwrite_unlocked(ts->tok, 1, ts->tok_len, ts->out);
	}
	ts->tok_len = 0;
}

/* A line that is only a token: convert it if it converts, else copy it. */
static void finish_bare(struct tokscan *ts)
{
	if (ts->ops->bare_lines && ts->tok_len >= 4) {
		int n = ts->ops->convert(ts->ctx, ts->tok, ts->tok_len, ts->out);

		if (n >= 0) {
			ts->converted++;
			fwrite_unlocked(ts->tok + n, 1, ts->tok_len - (size_t)n, ts->out);
			ts->tok_len = 0;
			return;
		}
	}
	fwrite_unlocked(ts->tok, 1, ts->tok_len, ts->out);
	ts->tok_len = 0;
}

static void flush_pending(struct tokscan *ts)
{
	switch (ts->state) {
	case S_LINE_START:
		finish_bare(ts);
		break;
	case S_LINE_CR:
		finish_bare(ts);
		putc_unlocked('\r', ts->out);
		break;
	case S_LEAD1:
	case S_LEAD2:
		fwrite_unlocked(ts->ops->leadin, 1, ts->state == S_LEAD1 ? 1 : 2, ts->out);
		break;
	case S_TOKEN:
		finish_token(ts, true);
		break;
	default:
		break;
	}
}

/*
 * One step of the scanner per state: each takes what it can of @buf
 * (@len > 0 bytes) and returns how many bytes it consumed, 0 when it only
 * changed state.
 */
static size_t feed_text(struct tokscan *ts, const char *buf, size_t len)
{
	size_t j = 0;

	/* Copy a run up to the next lead-in start or newline. */
	while (j < len && !ts->text_stop[(unsigned char)buf[j]])
		j++;
	fwrite_unlocked(buf, 1, j, ts->out);
	if (j == len)
		return j;
	if (buf[j] == '\n') {
		putc_unlocked('\n', ts->out);
		ts->line++;
		ts->state = S_LINE_START;
	} else {
		ts->state = S_LEAD1;
	}
	return j + 1;
}

static size_t feed_line_start(struct tokscan *ts, char c)
{
	if (ts->ops->bare_lines && ts->tok_char[(unsigned char)c] &&
	    ts->tok_len < ts->ops->max_len) {
		ts->tok[ts->tok_len++] = c;
		return 1;
	}
	if (c == '\r' && ts->tok_len) {
		ts->state = S_LINE_CR;
		return 1;
	}
	if (c == '\n') {
		finish_bare(ts);
		putc_unlocked('\n', ts->out);
		ts->line++;
		return 1;
	}
	fwrite_unlocked(ts->tok, 1, ts->tok_len, ts->out);
	ts->tok_len = 0;
	ts->state = S_TEXT;
	return 0;
}

static size_t feed_line_cr(struct tokscan *ts, char c)
{
	if (c == '\n') {
		finish_bare(ts);
		fwrite_unlocked("\r\n", 1, 2, ts->out);
		ts->line++;
		ts->state = S_LINE_START;
		return 1;
	}
	fwrite_unlocked(ts->tok, 1, ts->tok_len, ts->out);
	putc_unlocked('\r', ts->out);
	ts->tok_len = 0;
	ts->state = S_TEXT;
	return 0;
}

static size_t feed_lead(struct tokscan *ts, char c)
{
	int k = ts->state == S_LEAD1 ? 1 : 2;

	if (c == ts->ops->leadin[k]) {
		ts->state = k == 1 ? S_LEAD2 : S_TOKEN;
		return 1;
	}
	fwrite_unlocked(ts->ops->leadin, 1, (size_t)k, ts->out);
	ts->state = S_TEXT;
	return 0;
}

static size_t feed_token(struct tokscan *ts, const char *buf, size_t len)
{
	size_t j = 0, room = ts->ops->max_len - ts->tok_len;

	while (j < len && j < room && ts->tok_char[(unsigned char)buf[j]])
		j++;
	memcpy(ts->tok + ts->tok_len, buf, j);
	ts->tok_len += j;
	if (j == len)
		return j;
	finish_token(ts, true);
	ts->state = ts->tok_char[(unsigned char)buf[j]] ? S_RAWTOK : S_TEXT;
	return j;
}

static size_t feed_rawtok(struct tokscan *ts, char c)
{
	if (!ts->tok_char[(unsigned char)c]) {
		ts->state = S_TEXT;
		return 0;
	}
	putc_unlocked(c, ts->out);
	return 1;
}

void tokscan__feed(struct tokscan *ts, const char *buf, size_t len)
{
	size_t i = 0;

	while (i < len) {
		switch (ts->state) {
		case S_TEXT:
			i += feed_text(ts, buf + i, len - i);
			break;
		case S_LINE_START:
			i += feed_line_start(ts, buf[i]);
			break;
		case S_LINE_CR:
			i += feed_line_cr(ts, buf[i]);
			break;
		case S_LEAD1:
		case S_LEAD2:
			i += feed_lead(ts, buf[i]);
			break;
		case S_TOKEN:
			i += feed_token(ts, buf + i, len - i);
			break;
		case S_RAWTOK:
			i += feed_rawtok(ts, buf[i]);
			break;
		}
	}
}

void tokscan__end(struct tokscan *ts)
{
	flush_pending(ts);
	ts->state = S_LINE_START;
}
