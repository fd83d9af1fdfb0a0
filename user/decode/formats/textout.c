// SPDX-License-Identifier: MIT
/*
 * textout.c - the pieces heapdecode's text reports share (see textout.h).
 */
#include <inttypes.h>

#include "formats/textout.h"
#include "framefmt.h"

const char *hd_textout__num(const struct hd_model *m, uint64_t v, char *buf)
{
	if (hd_model__is_diff(m))
		snprintf(buf, 32, "%+" PRId64, (int64_t)v);
	else
		snprintf(buf, 32, "%" PRIu64, v);
	return buf;
}

void hd_textout__frame(struct hd_model *m, const char *indent, uint32_t pid, uint32_t k,
		       uint64_t addr, FILE *out)
{
	struct sym_frame f;

	hd_model__lookup(m, pid, addr, &f);
	framefmt__write(out, indent, k, addr, &f);
}

void hd_textout__estimated(const struct hd_model *m, FILE *out)
{
	if (hd_model__sample_bytes(m))
		fprintf(out, "estimated: the dump is a sample by bytes, one per %" PRIu64
			" bytes on average; each sampled block counts as the bytes and "
			"allocations it stands for\n", hd_model__sample_bytes(m));
}
