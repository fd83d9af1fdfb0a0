// SPDX-License-Identifier: MIT
/*
 * check_death.c - test_death.sh's checker: the last section of a
 * process's records (its exit section, or the last dump with its `map`
 * lines) against the program's own list (ownlist.h), exactly: every
 * block the program held there with its size (with -s only the sampled
 * ones, and no other), and no block of the program's the list does not
 * explain; a call in flight (at most one a thread) seen before or after
 * it, never both, and a realloc never neither. Blocks whose frame 0 is
 * outside the program's hsops functions are the C library's, not
 * checked. Every record of the file must parse and every token decode
 * (no torn record), and every dump and exit section must agree with
 * itself (its count, its lines, its end).
 *
 *   check_death [-s] [-n] LIST RECORDS    -n: there must be no section of it
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

#include "heapsnoop/codec.h"
#include "ownlist.h"
#include "records.h"

struct blk {
	uint64_t ptr, size;
	bool used;
};

static struct blk *sec_v, *cur_v;
static size_t sec_n, cur_n, cur_cap;
static int fails;

#define FAIL(...) do { fprintf(stderr, "check_death: FAIL: " __VA_ARGS__); \
		       fputc('\n', stderr); fails++; } while (0)

static struct blk *find(uint64_t ptr, uint64_t size)
{
	for (size_t i = 0; i < sec_n; i++)
		if (!sec_v[i].used && sec_v[i].ptr == ptr && sec_v[i].size == size)
			return &sec_v[i];
	return NULL;
}

static struct blk *find_size(uint64_t size)
{
	for (size_t i = 0; i < sec_n; i++)
		if (!sec_v[i].used && sec_v[i].size == size)
			return &sec_v[i];
	return NULL;
}

static void add(uint64_t ptr, uint64_t size)
{
	if (cur_n == cur_cap) {
		cur_cap = cur_cap ? 2 * cur_cap : 1024;
		cur_v = realloc(cur_v, cur_cap * sizeof(*cur_v));
	}
	cur_v[cur_n++] = (struct blk){ ptr, size, false };
}

/* The records: the last section of @pid into sec_v; the sections found. */
static int read_records(FILE *f, const struct ownlist *L)
{
	char line[8192];
	int sections = 0;
	bool in = false, ours = false, is_exit = false;
	uint64_t said = 0, lines = 0;

	while (fgets(line, sizeof(line), f)) {
		struct record r;
		struct hs_record rec;

		if (!strstr(line, RECORDS_PREFIX))
			continue;
		if (records__parse(line, &r)) {
			FAIL("a line that does not parse (torn?): %s", line);
			continue;
		}
		switch (r.type) {
		case REC_DUMP:
		case REC_EXIT:
			if (in)
				FAIL("a section begins inside another");
			in = true;
			is_exit = r.type == REC_EXIT;
			ours = is_exit && r.pid == L->pid;
			said = r.live;
			lines = 0;
			cur_n = 0;
			break;
		case REC_MAP:
			if (!in)
				FAIL("a map line outside a section");
			if (r.pid == L->pid)
				ours = true;
			break;
		case REC_LIVE:
			if (!in) {
				FAIL("a live line outside a section");
				break;
			}
			lines++;
			if (r.pid != L->pid)
				break;
			if (!r.token || hs_token_decode(r.token + 3, r.token_len - 3, &rec)) {
				FAIL("a live line whose token does not decode: %s", line);
				break;
			}
			if (!rec.depth || rec.frames[0] < L->ops_start || rec.frames[0] >= L->ops_end)
				break;	/* the C library's */
			add(r.ptr, rec.size);
			break;
		case REC_END_DUMP:
		case REC_END_EXIT:
			if (!in || is_exit != (r.type == REC_END_EXIT)) {
				FAIL("an end without its section");
				break;
			}
			if (r.live != said || r.live != lines)
				FAIL("a section says live=%llu, its end %llu, with %llu live lines",
				     (unsigned long long)said, (unsigned long long)r.live,
				     (unsigned long long)lines);
			if (ours) {
				free(sec_v);
				sec_v = cur_v;
				sec_n = cur_n;
				cur_v = NULL;
				cur_cap = 0;
				sections++;
			}
			in = false;
			break;
		default:
			break;
		}
	}
	if (in)
		FAIL("the last section has no end (cut short)");
	return sections;
}

int main(int argc, char **argv)
{
	bool sampled_mode = false, expect_none = false;
	size_t held = 0, want = 0, inflight = 0, before = 0, after = 0;
	struct ownlist *L;
	struct stat st;
	FILE *f;
	int fd, a = 1, sections;

	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "-s"))
			sampled_mode = true;
		else if (!strcmp(argv[a], "-n"))
			expect_none = true;
	}
	if (argc - a != 2)
		return 2;
	fd = open(argv[a], O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return 2;
	L = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (L == MAP_FAILED || L->magic != OWN_MAGIC)
		return 2;
	f = fopen(argv[a + 1], "r");
	sections = f ? read_records(f, L) : 0;
	if (expect_none) {
		if (sections)
			FAIL("a section of pid %d was written where none could be", L->pid);
		printf("check_death: pid %d: %s: no section, as expected\n", L->pid,
		       fails ? "FAILED" : "ok");
		return fails ? 1 : 0;
	}
	if (!sections) {
		FAIL("no section of pid %d in %s", L->pid, argv[a + 1]);
		return 1;
	}
	/* Settled blocks first, then the calls in flight take what is left. */
	for (uint32_t t = 0; t < L->nthreads; t++) {
		for (int i = 0; i < OWN_SLOTS; i++) {
			const struct own *o = &L->own[(size_t)t * OWN_SLOTS + i];
			struct blk *b;

			switch (o->state) {
			case OWN_HELD:
				held++;
				b = find(o->ptr, o->size);
				if (sampled_mode && !o->sampled) {
					if (b)
						FAIL("thread %u slot %d: 0x%llx (%llu) is in the section, "
						     "not sampled", t, i, (unsigned long long)o->ptr,
						     (unsigned long long)o->size);
					break;
				}
				want++;
				if (!b)
					FAIL("thread %u slot %d: live 0x%llx (%llu bytes) missing", t, i,
					     (unsigned long long)o->ptr, (unsigned long long)o->size);
				else
					b->used = true;
				break;
			case OWN_FREE:
				inflight++;
				if ((b = find(o->ptr, o->size)))
					b->used = true, before++;
				else
					after++;
				break;
			case OWN_REALLOC_DONE:
				inflight++;
				after++;
				b = find(o->newptr, o->newsize);
				if (b)
					b->used = true;
				else if (!sampled_mode || o->newsampled)
					FAIL("thread %u slot %d: realloc returned 0x%llx (%llu), not in the "
					     "section", t, i, (unsigned long long)o->newptr,
					     (unsigned long long)o->newsize);
				if (find(o->ptr, o->size))
					FAIL("thread %u slot %d: the realloc's old block in the section "
					     "after it returned", t, i);
				break;
			default:
				break;
			}
		}
	}
	/*
	 * The calls matched by size alone last, each kind in its own pass: a
	 * realloc's old block is known by its address, its new one must be in
	 * the section if the old is not, and an allocation in flight may be
	 * in it or not. An allocation of the same size as a realloc's old
	 * block, in flight on another thread, took that block here when
	 * threads were checked in order (a child of 100 forks, 1 in ~1000).
	 */
	for (uint32_t t = 0; t < L->nthreads; t++) {
		int pending = 0;

		for (int i = 0; i < OWN_SLOTS; i++) {
			const struct own *o = &L->own[(size_t)t * OWN_SLOTS + i];

			if (o->state == OWN_ALLOC || o->state == OWN_REALLOC)
				inflight++, pending++;
			else if (o->state == OWN_FREE || o->state == OWN_REALLOC_DONE)
				pending++;
		}
		if (pending > 1)
			FAIL("thread %u: %d calls in flight", t, pending);
	}
	bool *old_seen = calloc((size_t)L->nthreads * OWN_SLOTS, sizeof(bool));

	if (!old_seen)
		return 2;
	for (int pass = 0; pass < 3; pass++) {
		for (size_t k = 0; k < (size_t)L->nthreads * OWN_SLOTS; k++) {
			const struct own *o = &L->own[k];
			uint32_t t = (uint32_t)(k / OWN_SLOTS);
			int i = (int)(k % OWN_SLOTS);
			struct blk *b;

			if (pass == 0 && o->state == OWN_REALLOC) {
				if ((b = find(o->ptr, o->size)))
					b->used = true, before++, old_seen[k] = true;
			} else if (pass == 1 && o->state == OWN_REALLOC && !old_seen[k]) {
				if ((b = find_size(o->newsize))) {
					b->used = true;
					after++;
				} else if (!sampled_mode) {
					/* sampled: its new block may be one the sampler passed over */
					FAIL("thread %u slot %d: a realloc in flight is in the section "
					     "neither before nor after", t, i);
				}
			} else if (pass == 2 && o->state == OWN_ALLOC) {
				if ((b = find_size(o->size)))
					b->used = true, after++;
				else
					before++;
			}
		}
	}
	free(old_seen);
	for (size_t i = 0; i < sec_n; i++)
		if (!sec_v[i].used)
			FAIL("the section's 0x%llx (%llu bytes) is no block of the program's",
			     (unsigned long long)sec_v[i].ptr, (unsigned long long)sec_v[i].size);
	printf("check_death: pid %d: %s: %zu held, %zu expected; %zu calls in flight (%zu seen "
	       "before, %zu after)\n", L->pid, fails ? "FAILED" : "exact", held, want, inflight,
	       before, after);
	return fails ? 1 : 0;
}
