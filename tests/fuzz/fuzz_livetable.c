// SPDX-License-Identifier: MIT
/*
 * fuzz_livetable.c - libFuzzer harness for the reader of a live table
 * (user/collector/livetable/ltread.c, ltdump.c): heapsnoop --preload maps tables
 * written by programs that may be broken or hostile, so any bytes at all
 * as a table must be walked, copied out and written as records without a
 * read outside the mapping (ASan), a hang, or a line that does not parse.
 * The input is the table, its size exactly the buffer's; the header's
 * magic, version and entry size are forced (else nearly every input
 * would stop at the first check) unless the input's first byte is odd.
 * Build: `make fuzz`; run: `make fuzz-run-livetable`; seeds:
 * tests/fuzz/livetable-seeds (tables the preload wrote, cut down).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapsnoop/livedump.h"
#include "records.h"

static struct lt_out out;

static int count(void *arg, const struct lt_live *l)
{
	uint64_t *n = arg;

	/* The frames the walk hands over are inside the table: read them all. */
	for (uint32_t i = 0; i < l->depth; i++)
		*n += l->frames[i] & 1;
	return 0;
}

static int mod(void *arg, const struct lt_mod *m)
{
	(void)arg;
	if (strlen(m->path) >= sizeof(m->path) || strlen(m->build_id) >= sizeof(m->build_id))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lt_walk_stats st = { 0 };
	struct lt_snap s, *sp = &s;
	struct lt_view v;
	uint64_t n = 0;
	char *base, line[8192];
	FILE *f;

	if (size < sizeof(struct lt_header))
		return 0;
	base = aligned_alloc(64, (size + 63) & ~(size_t)63);
	if (!base)
		return 0;
	memcpy(base, data, size);
	if (!(data[0] & 1)) {
		struct lt_header *h = (struct lt_header *)base;

		h->magic = LT_MAGIC;
		h->version = LT_VERSION;
		h->entry_size = sizeof(struct lt_entry);
	}
	if (lt_view__open(&v, base, size)) {
		free(base);
		return 0;
	}
	lt_walk(&v, 0, 0, count, &n, &st);
	lt_modules(&v, mod, NULL);
	f = tmpfile();
	if (f && !lt_snap__take(&s, &v, 1234)) {
		lt_out__init(&out, fileno(f));
		lt_out__dump(&out, &sp, 1, "exit", 0);
		lt_out__exit(&out, &s, "fuzz");
		lt_snap__free(&s);
		/* Every line written parses: nothing of the table broke a line. */
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			struct record r;

			if (strlen(line) < sizeof(line) - 1 && records__parse(line, &r))
				abort();
		}
	}
	if (f)
		fclose(f);
	free(base);
	return 0;
}
