// SPDX-License-Identifier: MIT
/*
 * amlines.c - hs_am__dump_lines() (include/heapsnoop/alloc_metadata.h):
 * the alloc-metadata list's `dump`, `live` and `end-dump` lines without
 * stdio, for a firmware that prints its heap over a serial line (lws'
 * use of the format: docs/MCU.md). The lines are records.c's grammar
 * (docs/OUTPUT.md), byte for byte what records__write() writes for the
 * same values: tests/collector/test_amlines.c holds the two side by side.
 * Each line is formatted in a buffer on the stack and written whole.
 */
#include <errno.h>
#include <string.h>

#include "amlist.h"

/* A `live` line: prefix, pid, ptr, cut=, one token, newline. */
#define LINE_BUF (64 + 16 + 24 + HS_TOKEN_BUF + 2)

struct line {
	char buf[LINE_BUF];
	size_t len;
};

/* Append @n bytes of @s (room was counted by LINE_BUF). */
static void put_mem(struct line *l, const char *s, size_t n)
{
	if (n > sizeof(l->buf) - l->len)
		n = sizeof(l->buf) - l->len;
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static void put_str(struct line *l, const char *s)
{
	put_mem(l, s, strlen(s));
}

/* @v in decimal, as PRIu64 writes it; @width digits at least, 0-padded. */
static void put_dec(struct line *l, uint64_t v, unsigned int width)
{
	char d[20];
	unsigned int n = 0;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n < width && n < sizeof(d))
		d[n++] = '0';
	while (n)
		put_mem(l, &d[--n], 1);
}

/* @v as %d writes it. */
static void put_int(struct line *l, int v)
{
	if (v < 0) {
		put_mem(l, "-", 1);
		put_dec(l, (uint64_t)-(int64_t)v, 0);
		return;
	}
	put_dec(l, (uint64_t)v, 0);
}

/* @v as %#llx writes it: 0x and lower-case digits, "0" for 0. */
static void put_hex(struct line *l, uint64_t v)
{
	char d[16];
	unsigned int n = 0;

	if (!v) {
		put_mem(l, "0", 1);
		return;
	}
	for (; v; v >>= 4)
		d[n++] = "0123456789abcdef"[v & 15];
	put_mem(l, "0x", 2);
	while (n)
		put_mem(l, &d[--n], 1);
}

static int flush(struct line *l, hs_am_write_fn write, void *arg)
{
	int err = write(arg, l->buf, l->len);

	l->len = 0;
	return err;
}

/* records.c's cut words, in their bit order (HS_AM_CUT_*). */
static void put_cut(struct line *l, uint32_t cut)
{
	static const char *const words[] = { "depth", "unreadable" };
	const char *sep = " cut=";

	for (unsigned int i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (!(cut & (1u << i)))
			continue;
		put_str(l, sep);
		put_str(l, words[i]);
		sep = ",";
	}
}

static int write_live(struct line *l, hs_am_write_fn write, void *arg, int pid,
		      const struct hs_am_node *n)
{
	const void *user = n + 1;
	size_t len, at;
	const uint8_t *blob = hs_am_blob(user, &len);
	int k;

	put_str(l, "heapsnoop: live pid=");
	put_int(l, pid);
	put_str(l, " ptr=");
	put_hex(l, (uintptr_t)user);
	put_cut(l, n->cut | (n->tail ? HS_AM_CUT_DEPTH : 0));
	at = l->len;
	put_str(l, " ~m#");
	/* The token straight into the line (LINE_BUF counted it). */
	k = hs_base64_encode(blob, len, l->buf + l->len, sizeof(l->buf) - l->len);
	if (k < 0) {
		/* Never for a blob this list wrote; said as records.c says it. */
		l->len = at;
		put_str(l, " size=");
		put_dec(l, n->size, 0);
		put_str(l, " unencodable: ");
		put_str(l, hs_strerror(k));
	} else {
		l->len += (size_t)k;
	}
	put_mem(l, "\n", 1);
	return flush(l, write, arg);
}

int hs_am__dump_lines(struct hs_am *am, hs_am_write_fn write, void *arg, int pid,
		      const char *reason, uint64_t time_ms)
{
	struct line l = { .len = 0 };
	char why[16];
	int err = 0;

	if (!write)
		return -EINVAL;
	/* records.c keeps 15 bytes of a reason. */
	strncpy(why, reason, sizeof(why) - 1);
	why[sizeof(why) - 1] = '\0';
	am_lock_take(&am->lock);
	put_str(&l, "heapsnoop: dump reason=");
	put_str(&l, why);
	put_str(&l, " time=");
	put_dec(&l, time_ms / 1000, 0);
	put_mem(&l, ".", 1);
	put_dec(&l, time_ms % 1000, 3);
	put_str(&l, " live=");
	put_dec(&l, am->live, 0);
	put_str(&l, " bytes=");
	put_dec(&l, am->bytes, 0);
	/* stacks=0: the list keeps blobs, not unique stacks (docs/COLLECTOR.md). */
	put_str(&l, " stacks=0");
	if (am->sample_bytes) {
		put_str(&l, " sample-bytes=");
		put_dec(&l, am->sample_bytes, 0);
	}
	put_mem(&l, "\n", 1);
	err = flush(&l, write, arg);
	for (struct hs_am_node *n = am->head.next; !err && n != &am->head; n = n->next)
		err = write_live(&l, write, arg, pid, n);
	if (!err) {
		put_str(&l, "heapsnoop: end-dump live=");
		put_dec(&l, am->live, 0);
		put_mem(&l, "\n", 1);
		err = flush(&l, write, arg);
	}
	am_lock_give(&am->lock);
	return err;
}
