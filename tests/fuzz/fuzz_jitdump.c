// SPDX-License-Identifier: MIT
/*
 * fuzz_jitdump.c - libFuzzer harness for the jitdump reader
 * (user/tracer/maps/jitdump.c): any bytes, read as a file that grows
 * (its first third, its first two, then all of it, as jitdumpfile.c reads
 * a file a process is writing) and at once, without fault or a read past
 * them; the two readings take the same codes and name the same addresses
 * alike (a record is taken whole or not at all, whatever the reads); each
 * name and file it gives is a string within its limits. Build: `make
 * fuzz`; run: `make fuzz-run-jitdump`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "maps/jitdump.h"

static void same(const struct jit_dump *a, const struct jit_dump *b, uint64_t addr)
{
	struct jit_code x, y;
	int ex = jit_dump__find(a, addr, &x), ey = jit_dump__find(b, addr, &y);

	if (ex != ey)
		abort();
	if (ex)
		return;
	if (x.start != y.start || x.end != y.end || x.lstart != y.lstart || x.lend != y.lend ||
	    x.line != y.line || strcmp(x.name, y.name) || !x.file != !y.file ||
	    (x.file && strcmp(x.file, y.file)))
		abort();
	if (addr < x.start || addr >= x.end || addr < x.lstart || addr >= x.lend ||
	    x.lstart < x.start || x.lend > x.end || strlen(x.name) > JIT_DUMP_NAME_MAX ||
	    (x.file && strlen(x.file) > JIT_DUMP_FILE_MAX))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jit_dump *grown = jit_dump__new(), *whole = jit_dump__new();
	/* An exact copy: a read past @size is ASan's to see. */
	uint8_t *copy = malloc(size ? size : 1);
	int a = 0, b;

	if (!grown || !whole || !copy)
		abort();
	memcpy(copy, data, size);
	for (int part = 1; part <= 3 && a >= 0; part++)
		a = jit_dump__feed(grown, copy, size * (size_t)part / 3);
	b = jit_dump__feed(whole, copy, size);
	if ((a < 0) != (b < 0) || jit_dump__count(grown) != jit_dump__count(whole))
		abort();
	/* The addresses the input names: each 8-byte word, and one past it. */
	for (size_t i = 0; i + 8 <= size && i < 4096; i += 4) {
		uint64_t v;

		memcpy(&v, copy + i, 8);
		same(grown, whole, v);
		same(grown, whole, v + 1);
	}
	jit_dump__free(grown);
	jit_dump__free(whole);
	free(copy);
	return 0;
}
