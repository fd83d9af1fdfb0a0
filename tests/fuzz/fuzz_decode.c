// SPDX-License-Identifier: MIT
/*
 * fuzz_decode.c - libFuzzer harness for the decoder and the line scanner.
 *
 * The input is used three ways: as a raw blob (hs_blob_decode), as text
 * streamed through heapdecode's own scanner both ways (tokscan + recconv),
 * and as a `~b#` body (hs_bline_parse). Whatever decodes must re-encode and
 * decode to the same record. Build: `make fuzz`; run: `make fuzz-run`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapsnoop/codec.h"
#include "input/recconv.h"
#include "input/tokscan.h"

static void check_roundtrip(const struct hs_record *rec)
{
	char tok[HS_TOKEN_BUF];
	struct hs_record back;
	int n = hs_token_encode(rec, tok, sizeof(tok));

	if (n == -HS_ERANGE)
		return; /* a ~b# line may hold values no record can */
	if (n < 0 || hs_token_decode(tok + 3, (size_t)n - 3, &back) ||
	    back.size != rec->size || back.depth != rec->depth ||
	    memcmp(back.frames, rec->frames, rec->depth * sizeof(uint64_t)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct hs_record rec;
	struct tokscan *ts;

	if (!devnull)
		devnull = fopen("/dev/null", "w");

	if (hs_blob_decode(data, size, &rec) == 0)
		check_roundtrip(&rec);
	if (hs_bline_parse((const char *)data, size, &rec) > 0)
		check_roundtrip(&rec);

	/* Feed in two uneven chunks to exercise state kept across calls. */
	for (int mode = 0; mode < 2; mode++) {
		ts = tokscan__new(mode ? &recconv_encode_ops : &recconv_decode_ops, NULL, devnull, false);
		if (!ts)
			return 0;
		tokscan__begin(ts, "fuzz");
		tokscan__feed(ts, (const char *)data, size / 3);
		tokscan__feed(ts, (const char *)data + size / 3, size - size / 3);
		tokscan__end(ts);
		tokscan__free(ts);
	}
	return 0;
}
