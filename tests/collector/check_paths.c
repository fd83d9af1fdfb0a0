// SPDX-License-Identifier: MIT
/*
 * check_paths.c - test_table_grows.sh's checker: the last dump of a
 * heapsnoop --preload log of tests/tracer/prog_paths LEVELS against what
 * the program holds: 2^LEVELS blocks allocated at one call site in
 * leaf() (the frame 0 that most live blocks share), of 16 + path % 64
 * bytes each (their sum exactly), each with a whole stack (no cut=, at
 * least LEVELS + 2 frames deep) and every stack distinct (their count:
 * each stack's frames hashed twice, 128 bits, sorted). Every line of the
 * dump must parse and every token decode; its count, lines and end agree.
 *
 *   check_paths LEVELS RECORDS
 * Prints one line: what it found. Exits 0 if exact, 1 if not, 2 on bad use.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "records.h"

struct seen {
	uint64_t h1, h2;		/* the stack, twice hashed */
	uint32_t site;			/* its frame 0, as an index into sites[] */
	uint32_t size;
	uint32_t depth;
	uint32_t reserved;
};

static struct seen *v;
static size_t n, cap;
static uint64_t sites[64], site_n[64];
static uint32_t nsites;
static uint64_t lines, live_said, end_said, bad, cut;

static uint64_t hash(const uint64_t *f, uint32_t depth, uint64_t seed)
{
	uint64_t h = seed ^ depth;

	for (uint32_t i = 0; i < depth; i++) {
		h = (h ^ f[i]) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

static int by_hash(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	if (x->h1 != y->h1)
		return x->h1 < y->h1 ? -1 : 1;
	return x->h2 < y->h2 ? -1 : x->h2 > y->h2;
}

/* A dump begins: what the last one held is forgotten. */
static void reset(void)
{
	n = 0;
	nsites = 0;
	lines = live_said = end_said = bad = cut = 0;
}

static void live(const struct record *r)
{
	static uint64_t f[REC_MAX_DEPTH];
	uint64_t size;
	uint32_t depth, s;

	lines++;
	if (!r->token || records__stack(r, &size, f, &depth) || !depth) {
		bad++;
		return;
	}
	cut += r->cut != 0;
	for (s = 0; s < nsites && sites[s] != f[0]; s++)
		;
	if (s == nsites) {
		if (nsites == 64) {
			bad++;
			return;
		}
		sites[nsites++] = f[0];
		site_n[s] = 0;
	}
	site_n[s]++;
	if (n == cap) {
		cap = cap ? 2 * cap : 1 << 20;
		v = realloc(v, cap * sizeof(*v));
		if (!v) {
			perror("check_paths");
			exit(2);
		}
	}
	v[n++] = (struct seen){ hash(f, depth, 0x9e3779b97f4a7c15ull), hash(f, depth, 7), s,
				(uint32_t)size, depth, 0 };
}

int main(int argc, char **argv)
{
	unsigned int levels = argc == 3 ? (unsigned int)atoi(argv[1]) : 0;
	uint64_t want_n, want_bytes, bytes = 0, distinct = 0, top = 0, shallow = 0;
	uint32_t min_depth = UINT32_MAX, max_depth = 0;
	bool dumped = false, ended = false, ok;
	struct stat st;
	char *map, *p, *end;
	int fd;

	if (levels < 6 || levels > 28) {
		fprintf(stderr, "usage: check_paths LEVELS (6..28) RECORDS\n");
		return 2;
	}
	fd = open(argv[2], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || !st.st_size) {
		fprintf(stderr, "check_paths: %s: empty or unreadable\n", argv[2]);
		return 1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return 2;
	for (p = map, end = map + st.st_size; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), line[16384];
		size_t len = (size_t)((nl ? nl : end) - p);
		struct record r;

		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
			if (!records__parse(line, &r)) {
				if (r.type == REC_DUMP) {
					reset();
					dumped = true;
					ended = false;
					live_said = r.live;
				} else if (r.type == REC_LIVE && dumped && !ended) {
					live(&r);
				} else if (r.type == REC_END_DUMP && dumped) {
					end_said = r.live;
					ended = true;
				}
			} else if (dumped && !ended && strstr(line, " live ")) {
				bad++;
			}
		} else if (dumped && !ended) {
			bad++;
		}
		p = nl ? nl + 1 : end;
	}
	/* The leaf's call site: the frame 0 most blocks share. */
	for (uint32_t s = 1; s < nsites; s++)
		if (site_n[s] > site_n[top])
			top = s;
	qsort(v, n, sizeof(*v), by_hash);
	for (size_t i = 0; i < n; i++) {
		if (v[i].site != top)
			continue;
		bytes += v[i].size;
		shallow += v[i].depth < levels + 2;
		min_depth = v[i].depth < min_depth ? v[i].depth : min_depth;
		max_depth = v[i].depth > max_depth ? v[i].depth : max_depth;
		if (!i || v[i].h1 != v[i - 1].h1 || v[i].h2 != v[i - 1].h2)
			distinct++;
	}
	want_n = 1ull << levels;
	/* sum over p < 2^L of 16 + p % 64 */
	want_bytes = want_n * 16 + (want_n / 64) * (63 * 64 / 2);
	ok = dumped && ended && !bad && !cut && !shallow && nsites && site_n[top] == want_n &&
	     bytes == want_bytes && distinct == want_n && lines == live_said && lines == end_said;
	printf("check_paths: %s: last dump %llu live (said %llu, end %llu), %llu unreadable, "
	       "%llu cut; the leaf's site 0x%llx: %llu blocks (want %llu), %llu bytes (want %llu), "
	       "%llu distinct stacks, %u..%u frames\n", ok ? "exact" : "FAIL",
	       (unsigned long long)lines, (unsigned long long)live_said,
	       (unsigned long long)end_said, (unsigned long long)bad, (unsigned long long)cut,
	       (unsigned long long)(nsites ? sites[top] : 0),
	       (unsigned long long)(nsites ? site_n[top] : 0), (unsigned long long)want_n,
	       (unsigned long long)bytes, (unsigned long long)want_bytes,
	       (unsigned long long)distinct, min_depth == UINT32_MAX ? 0 : min_depth, max_depth);
	return ok ? 0 : 1;
}
