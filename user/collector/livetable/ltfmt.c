// SPDX-License-Identifier: MIT
/*
 * ltfmt.c - records/' lines for a dump of a live table, byte for byte,
 * without stdio (see ltfmt.h): numbers as printf's %d, %llu, %#llx and
 * %03u write them, written into an lt_out's buffer, which goes out by
 * write(2) as it fills. The grammar is docs/OUTPUT.md's.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ltfmt.h"

void lt_out__init(struct lt_out *o, int fd)
{
	o->fd = fd;
	o->err = 0;
	o->lines = 0;
	o->tick = NULL;
	o->tick_arg = NULL;
	o->xlate = NULL;
	o->names = NULL;
	o->xarg = NULL;
	o->len = 0;
}

int lt_out__flush(struct lt_out *o)
{
	for (size_t off = 0; off < o->len;) {
		ssize_t n = write(o->fd, o->buf + off, o->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!o->err)
				o->err = n < 0 ? errno : EIO;
			break;
		}
		off += (size_t)n;
	}
	o->len = 0;
	return o->err ? -o->err : 0;
}

static void put(struct lt_out *o, const char *s, size_t n)
{
	while (n) {
		size_t k = sizeof(o->buf) - o->len < n ? sizeof(o->buf) - o->len : n;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == sizeof(o->buf))
			lt_out__flush(o);
	}
}

void lt_out__put(struct lt_out *o, const char *s, size_t n)
{
	put(o, s, n);
}

static void puts_(struct lt_out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* %llu, at least @width digits with leading zeros (%03u: 3). */
static void put_u64w(struct lt_out *o, uint64_t v, int width)
{
	char t[24];
	int i = sizeof(t);

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v || (int)sizeof(t) - i < width);
	put(o, t + i, sizeof(t) - (size_t)i);
}

static void put_u64(struct lt_out *o, uint64_t v)
{
	put_u64w(o, v, 1);
}

/* %lld and %d. */
static void put_i64(struct lt_out *o, int64_t v)
{
	if (v < 0) {
		put(o, "-", 1);
		put_u64(o, (uint64_t)-(v + 1) + 1);
	} else {
		put_u64(o, (uint64_t)v);
	}
}

/* %#llx: "0" for 0, else "0x" and lower-case hex. */
static void put_hex(struct lt_out *o, uint64_t v)
{
	char t[16];
	int i = sizeof(t);

	if (!v) {
		put(o, "0", 1);
		return;
	}
	for (; v; v >>= 4)
		t[--i] = "0123456789abcdef"[v & 15];
	put(o, "0x", 2);
	put(o, t + i, sizeof(t) - (size_t)i);
}

/* "time=S.MS live=N bytes=B", records.c's write_tlb(). */
static void put_tlb(struct lt_out *o, const struct record *r)
{
	puts_(o, "time=");
	put_i64(o, r->time_s);
	put(o, ".", 1);
	put_u64w(o, r->time_ms, 3);
	puts_(o, " live=");
	put_u64(o, r->live);
	puts_(o, " bytes=");
	put_u64(o, r->bytes);
}

/* " cut=depth,unreadable" for @cut's bits (rectoken.c's cut_words order). */
static void put_cut(struct lt_out *o, uint32_t cut)
{
	static const char *const words[] = { "depth", "unreadable", "order" };
	const char *sep = " cut=";

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (!(cut & (1u << i)))
			continue;
		puts_(o, sep);
		puts_(o, words[i]);
		sep = ",";
	}
}

int ltfmt__record(struct lt_out *o, const struct record *r)
{
	switch (r->type) {
	case REC_DUMP:
		puts_(o, RECORDS_PREFIX "dump reason=");
		puts_(o, r->reason);
		put(o, " ", 1);
		put_tlb(o, r);
		puts_(o, " stacks=");
		put_u64(o, r->stacks);
		if (r->sample_bytes) {
			puts_(o, " sample-bytes=");
			put_u64(o, r->sample_bytes);
		}
		break;
	case REC_MAP:
		puts_(o, RECORDS_PREFIX "map pid=");
		put_i64(o, r->pid);
		puts_(o, " start=");
		put_hex(o, r->start);
		puts_(o, " end=");
		put_hex(o, r->end);
		puts_(o, " off=");
		put_hex(o, r->off);
		puts_(o, " buildid=");
		puts_(o, r->build_id);
		puts_(o, " path=");
		puts_(o, r->path);
		break;
	case REC_LIVE:
		puts_(o, RECORDS_PREFIX "live pid=");
		put_i64(o, r->pid);
		puts_(o, " ptr=");
		put_hex(o, r->ptr);
		put_cut(o, r->cut & REC_CUT_ALL);
		if (r->token) {
			/* rectoken.c's rec_write_tokens(): depth= of a deep stack, its tokens. */
			if (r->depth) {
				puts_(o, " depth=");
				put_u64(o, r->depth);
			}
			put(o, " ", 1);
			put(o, r->token, r->token_len);
			if (r->tail)
				put(o, r->tail, r->tail_len);
		} else {
			puts_(o, " size=");
			put_u64(o, r->size);
			puts_(o, " unencodable: ");
			puts_(o, r->error);
		}
		break;
	case REC_END_DUMP:
		puts_(o, RECORDS_PREFIX "end-dump live=");
		put_u64(o, r->live);
		break;
	case REC_EXIT:
		puts_(o, RECORDS_PREFIX "exit pid=");
		put_i64(o, r->pid);
		put(o, " ", 1);
		put_tlb(o, r);
		puts_(o, " comm=");
		puts_(o, r->comm);
		break;
	case REC_END_EXIT:
		puts_(o, RECORDS_PREFIX "end-exit pid=");
		put_i64(o, r->pid);
		puts_(o, " live=");
		put_u64(o, r->live);
		break;
	default:
		return -EINVAL;
	}
	put(o, "\n", 1);
	if (!(++o->lines % 4096) && o->tick)
		o->tick(o->tick_arg);
	return 0;
}

void ltfmt__creator_frame(struct lt_out *o, int pid)
{
	puts_(o, RECORDS_PREFIX "frame pid=");
	put_i64(o, pid);
	puts_(o, " addr=");
	put_hex(o, LT_CREATOR_FRAME);
	puts_(o, " kind=thread line=0 file=- function=[created%20by]\n");
	if (!(++o->lines % 4096) && o->tick)
		o->tick(o->tick_arg);
}
