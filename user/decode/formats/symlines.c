// SPDX-License-Identifier: MIT
/*
 * symlines.c - heapdecode -s (see symlines.h). The `~b#` text is the
 * codec's (docs/FORMAT.md), the frame lines framefmt.h's.
 */
#include <inttypes.h>
#include <string.h>

#include "formats/symlines.h"
#include "formats/textout.h"
#include "framefmt.h"
#include "heapsnoop/codec.h"

int hd_symlines__line(struct hd_model *m, const struct hd_line *l, FILE *out)
{
	const char *p, *tok, *line = l->text;
	size_t len, end = strlen(line);
	struct hs_record rec;
	char bl[HS_BLINE_BUF];
	uint32_t pid, cut;
	int err = hd_model__follow(m, l);

	if (err < 0)
		return err;
	/* A malformed token anywhere: the line passes unchanged. */
	for (p = line; (tok = hs_token_find(p, end - (size_t)(p - line), &len)); p = tok + len) {
		err = hs_token_decode(tok, len, &rec);
		if (err) {
			fprintf(out, "%s\n", line);
			return err;
		}
	}
	for (p = line; (tok = hs_token_find(p, end - (size_t)(p - line), &len)); p = tok + len) {
		hs_token_decode(tok, len, &rec);
		fwrite(p, 1, (size_t)(tok - 3 - p), out);
		if (hs_bline_format(&rec, bl, sizeof(bl)) > 0)
			fputs(bl, out);
	}
	fprintf(out, "%s\n", p);
	pid = hd_line__pid(l);
	cut = hd_line__cut(l);
	for (p = line; (tok = hs_token_find(p, end - (size_t)(p - line), &len)); p = tok + len) {
		hs_token_decode(tok, len, &rec);
		for (uint32_t k = 0; k < rec.depth; k++)
			hd_textout__frame(m, "    ", pid, k, rec.frames[k], out);
		if (cut)
			fprintf(out, "    (%s)\n", framefmt__cut(cut));
		if (hd_model__sample_bytes(m) && l->rec.type == REC_LIVE) {
			uint64_t bytes;
			double count;

			hd_model__estimate(m, rec.size, &bytes, &count);
			fprintf(out, "    (sampled: stands for %" PRIu64 " bytes in %.2f allocations, "
				"estimated)\n", bytes, count);
		}
	}
	return 0;
}
