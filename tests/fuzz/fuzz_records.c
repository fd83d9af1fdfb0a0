// SPDX-License-Identifier: MIT
/*
 * fuzz_records.c - libFuzzer harness for the record-line parser
 * (user/common/records.c): any line parses without fault, and a record
 * that parses, written again, parses to the same values. Build: `make
 * fuzz`; run: `make fuzz-run`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"

static int str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void check_same(const struct record *a, const struct record *b)
{
	if (a->type != b->type || a->pid != b->pid || a->time_s != b->time_s ||
	    a->time_ms != b->time_ms || a->live != b->live || a->bytes != b->bytes ||
	    a->stacks != b->stacks || a->sample_bytes != b->sample_bytes || strcmp(a->reason, b->reason) || !str_eq(a->comm, b->comm) ||
	    a->start != b->start || a->end != b->end || a->off != b->off ||
	    strcmp(a->build_id, b->build_id) || !str_eq(a->path, b->path) || a->ptr != b->ptr ||
	    a->cut != b->cut || a->token_len != b->token_len ||
	    (a->token && memcmp(a->token, b->token, a->token_len)) ||
	    a->size != b->size || !str_eq(a->error, b->error) || a->allocs != b->allocs ||
	    a->allocated != b->allocated || a->frees != b->frees ||
	    a->temporary != b->temporary || a->peak != b->peak ||
	    a->peak_count != b->peak_count || a->peak_time_s != b->peak_time_s ||
	    a->peak_time_ms != b->peak_time_ms)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1), *text = NULL;
	struct record r, back;
	size_t len = 0;
	FILE *f;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	line[strcspn(line, "\n")] = '\0';	/* one line, as its readers give it */
	if (records__parse(line, &r) == 0) {
		f = open_memstream(&text, &len);
		if (!f || records__write(f, &r) || fclose(f) || !len)
			abort();
		text[len - 1] = '\0';
		if (records__parse(text, &back))
			abort();
		check_same(&r, &back);
		free(text);
	}
	free(line);
	return 0;
}
