// SPDX-License-Identifier: MIT
/*
 * textout.c - the pieces heapdecode's text reports share (see textout.h).
 */
#include <inttypes.h>
#include <string.h>

#include "formats/textout.h"
#include "framefmt.h"
#include "stackview.h"
#include "text.h"

const char *hd_textout__num(const struct hd_model *m, uint64_t v, char *buf)
{
	if (hd_model__is_diff(m))
		snprintf(buf, 32, "%+" PRId64, (int64_t)v);
	else
		snprintf(buf, 32, "%" PRIu64, v);
	return buf;
}

const char *hd_textout__size(const struct hd_model *m, uint64_t v, char *buf)
{
	return text_size(v, hd_model__is_diff(m), buf);
}

const char *hd_textout__size_exact(const struct hd_model *m, uint64_t v, char *buf)
{
	char size[32], exact[32];

	hd_textout__size(m, v, size);
	if (!strstr(size, "iB"))
		snprintf(buf, 64, "%s", size);
	else
		snprintf(buf, 64, "%.24s (%.24s bytes)", size, hd_textout__num(m, v, exact));
	return buf;
}

bool hd_textout__lookup(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	hd_model__lookup(ctx, pid, addr, f);
	return true;
}

void hd_textout__stack(struct hd_model *m, const char *indent, const struct stack *s,
		       bool full, FILE *out)
{
	stackview__write(out, indent, s->pid, s->frames, s->depth, full, hd_textout__lookup, m);
}

void hd_textout__frame(struct hd_model *m, const char *indent, uint32_t pid, uint32_t k,
		       uint64_t addr, FILE *out)
{
	struct sym_frame f;

	hd_model__lookup(m, pid, addr, &f);
	framefmt__write(out, indent, k, addr, &f);
}

bool hd_textout__why_estimated(const struct hd_model *m, char *buf, size_t size)
{
	uint64_t mean = hd_model__sample_bytes(m), shed = hd_model__shed_blocks(m);
	int n = 0;

	buf[0] = '\0';
	if (mean)
		n = snprintf(buf, size, "a sample by bytes, one per %" PRIu64 " bytes on average",
			     mean);
	if (shed && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "%s%" PRIu64 " of its blocks recorded as "
			 "samples while the tracer shed load (shed=)", mean ? "; " : "", shed);
	return mean || shed;
}

void hd_textout__estimated(const struct hd_model *m, FILE *out)
{
	char why[160];

	if (hd_textout__why_estimated(m, why, sizeof(why)))
		fprintf(out, "estimated: %s; each sampled block counts as the bytes and "
			"allocations it stands for\n", why);
}

const char *hd_textout__est_mark(const struct hd_model *m, char *buf)
{
	if (!hd_model__estimated(m))
		buf[0] = '\0';
	else
		snprintf(buf, 64, " (estimated, +-%.0f bytes at 95%%)",
			 1.96 * hd_model__live_stderr(m));
	return buf;
}
