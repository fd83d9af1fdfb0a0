// SPDX-License-Identifier: MIT
/*
 * fuzz_livetable.c - libFuzzer harness for the reader of a live table
 * (user/collector/livetable/ltread.c, ltdump.c): heapsnoop --preload maps tables
 * written by programs that may be broken or hostile, so any bytes at all
 * as a table must be walked, copied out and written as records without a
 * read outside the mapping (ASan), a hang, or a line that does not parse.
 * The input is the table, its size exactly the buffer's, every segment
 * placed in it; unless the input's first byte is odd, the header's magic,
 * version and entry size are forced, each region's segment 0 made 4 KiB
 * and each segment's place made one that fits (else nearly every input
 * would stop at the first check). Nodes are gone through in order as
 * heapsnoop's scan does (lt_stack__next()), each whole stack rebuilt.
 * Build: `make fuzz`; run: `make fuzz-run-livetable`; seeds:
 * tests/fuzz/livetable-seeds (tables made as the preload writes them).
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
		uint64_t pages = (size - LT_HDR_SIZE) / 4096;

		h->magic = LT_MAGIC;
		h->version = LT_VERSION;
		h->entry_size = sizeof(struct lt_entry);
		for (unsigned int r = 0; r < LT_NREGIONS; r++) {
			h->region[r].seg0 = 4096;
			for (unsigned int k = 0; k < LT_SEGS; k++) {
				uint64_t at = h->region[r].seg[k];

				if (at == 0 || at == LT_SEG_OWN)
					continue;
				at = pages ? LT_HDR_SIZE + (at >> 12) % pages * 4096 : 0;
				h->region[r].seg[k] = at && at + (4096ull << k) <= size ? at : 0;
			}
		}
	}
	if (lt_view__open(&v, base, size)) {
		free(base);
		return 0;
	}
	lt_walk(&v, 0, 0, count, &n, &st);
	lt_modules(&v, mod, NULL);
	{
		/* heapsnoop's scan: every node in order, each stack whole. */
		static uint64_t words[LT_MAX_DEPTH];
		struct lt_node nd;
		uint32_t depth, cut;
		uint64_t off = 8;

		for (int i = 0; i < 100000 && lt_stack__next(&v, off, &nd) == 1; i++, off = nd.next) {
			for (uint32_t w = 0; w < nd.n; w++)
				n += nd.words[w] & 1;
			if (!lt_stack__words(&v, nd.id, words, &depth, &cut) && depth > LT_MAX_DEPTH)
				abort();
			if (nd.next <= off)
				abort();	/* the scan would never end */
		}
	}
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
