// SPDX-License-Identifier: MIT
/*
 * symlines.c - heapdecode -s (see symlines.h). The `~b#` text is the
 * codec's (docs/FORMAT.md), a `node=` record's stack after it as the
 * filter writes it (treescan.h), the frame lines framefmt.h's.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "formats/symlines.h"
#include "formats/textout.h"
#include "framefmt.h"
#include "heapsnoop/codec.h"
#include "input/treescan.h"
#include "records.h"

/* A sampled block's estimate, after its frames. */
static void write_estimate(struct hd_model *m, uint64_t size, uint64_t shed, FILE *out)
{
	uint64_t bytes;
	double count;

	hd_model__estimate(m, size, shed, &bytes, &count);
	fprintf(out, "    (sampled: stands for %" PRIu64 " bytes in %.2f allocations, "
		"estimated)\n", bytes, count);
}

/* A `live` or `stack` record's stack, its tokens one: its frames, its mark. */
static void write_record_stack(struct hd_model *m, const struct hd_line *l, const uint64_t *f,
			       uint32_t depth, uint64_t size, FILE *out)
{
	uint32_t cut = hd_line__cut(l);

	for (uint32_t k = 0; k < depth; k++)
		hd_textout__frame(m, "    ", (uint32_t)l->rec.pid, k, f[k], out);
	if (cut)
		fprintf(out, "    (%s)\n", framefmt__cut(cut));
	if (l->rec.type == REC_LIVE && (hd_model__sample_bytes(m) || l->rec.shed))
		write_estimate(m, size, l->rec.shed, out);
}

int hd_symlines__line(struct hd_model *m, const struct hd_line *l, FILE *out)
{
	static uint64_t frames[REC_MAX_DEPTH];
	const char *p, *tok, *line = l->text;
	size_t len, end = strlen(line);
	bool record = (l->rec.type == REC_LIVE || l->rec.type == REC_STACK) && !l->parsed &&
		      (l->rec.token || l->rec.has_node);
	struct hs_record rec;
	char bl[HS_BLINE_BUF];
	uint64_t size = 0;
	uint32_t pid, cut, depth = 0;
	int err = hd_model__follow(m, l);

	if (l->parsed == HD_LINE_UNREAD)
		return 0;	/* copied by the reader */
	/* A record that does not hold, or a token that does not decode: unchanged. */
	if (!err && record)
		err = hd_model__stack_of(m, l, &size, frames, &depth);
	for (p = line; !err && (tok = hs_token_find(p, end - (size_t)(p - line), &len));
	     p = tok + len)
		err = hs_token_decode(tok, len, &rec);
	if (err) {
		fprintf(out, "%s\n", line);
		return err < 0 ? err : -err;
	}
	/* Each token as the filter writes it: a deep stack's tokens each a ~b#. */
	for (p = line; (tok = hs_token_find(p, end - (size_t)(p - line), &len)); p = tok + len) {
		hs_token_decode(tok, len, &rec);
		fwrite(p, 1, (size_t)(tok - 3 - p), out);
		if (hs_bline_format(&rec, bl, sizeof(bl)) > 0)
			fputs(bl, out);
	}
	fputs(p, out);
	/* A stack by node=: after its record, as the filter writes it (treescan.h). */
	if (record && l->rec.has_node)
		treescan__blines(out, size, frames, depth);
	putc('\n', out);
	if (record) {
		write_record_stack(m, l, frames, depth, size, out);
		return 0;
	}
	/* Another program's line: each token a record of its own. */
	pid = hd_line__pid(l);
	cut = hd_line__cut(l);
	for (p = line; (tok = hs_token_find(p, end - (size_t)(p - line), &len)); p = tok + len) {
		hs_token_decode(tok, len, &rec);
		for (uint32_t k = 0; k < rec.depth; k++)
			hd_textout__frame(m, "    ", pid, k, rec.frames[k], out);
		if (cut)
			fprintf(out, "    (%s)\n", framefmt__cut(cut));
	}
	return 0;
}
