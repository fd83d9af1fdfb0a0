// SPDX-License-Identifier: MIT
/*
 * jitnames.c - the perf map's and the jitdump's names of a process's JIT
 * frames (see jitnames.h).
 *
 * Which file's definition is newer: each read that took new lines or
 * records is given the next number of a counter the two files share, and
 * each file keeps where its reads began (its ids are in the order read);
 * a definition's age is its read's number. The names kept are a set of
 * keys (the perf map's line id; the jitdump's code id and line), and the
 * addresses not named yet a small table, looked up again at each dump.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "jitdumpfile.h"
#include "jitnames.h"

/*
 * A file not there is looked for again at a new stack this long after
 * the last look (a process may start writing it late: V8's
 * --perf-basic-prof can be turned on by a flag at run time).
 */
#define JIT_RETRY_NS	200000000ULL
#define PENDING_MAX	4096		/* addresses kept for jit_names__retry() */
#define DUMP_KEY	(1ULL << 62)	/* a jitdump's name: | id << 25 | line's number */

/* The reads of one file: ids [upto[i - 1], upto[i]) came in read epoch[i]. */
struct ages {
	uint32_t *upto;
	uint64_t *epoch;
	size_t n, cap;
	uint64_t resets;	/* the file's, when the ids began */
};

struct jit_names {
	struct perf_map *map;
	struct jit_dump_file *dump;
	struct ages map_ages, dump_ages;
	uint64_t epoch;
	struct htab *used;	/* keys of the names kept */
	struct htab *pending;	/* address -> frames seen there unnamed */
	struct jit_names_stats st;
};

struct jit_names *jit_names__new(pid_t pid)
{
	struct jit_names *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->map = perf_map__new(pid);
	j->dump = jit_dump_file__new(pid);
	j->used = htab__new(64, NULL, NULL);
	j->pending = htab__new(16, NULL, NULL);
	if (!j->map || !j->dump || !j->used || !j->pending) {
		jit_names__free(j);
		return NULL;
	}
	return j;
}

void jit_names__free(struct jit_names *j)
{
	if (!j)
		return;
	perf_map__free(j->map);
	jit_dump_file__free(j->dump);
	free(j->map_ages.upto);
	free(j->map_ages.epoch);
	free(j->dump_ages.upto);
	free(j->dump_ages.epoch);
	htab__free(j->used);
	htab__free(j->pending);
	free(j);
}

/* The number of the read that took id @id (0: none recorded). */
static uint64_t age(const struct ages *a, uint32_t id)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->upto[mid] <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < a->n ? a->epoch[lo] : 0;
}

/*
 * A file was read: its ids below @count that no read had are this read's.
 * A reset (the file made shorter) begins its ids again, and the names
 * kept are forgotten (each is kept again as it names a frame).
 */
static int stamp(struct jit_names *j, struct ages *a, uint32_t count, uint64_t resets)
{
	if (resets != a->resets) {
		struct htab *used = htab__new(64, NULL, NULL);

		if (!used)
			return -ENOMEM;
		htab__free(j->used);
		j->used = used;
		j->st.used = 0;
		a->n = 0;
		a->resets = resets;
	}
	if (count <= (a->n ? a->upto[a->n - 1] : 0))
		return 0;
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		uint32_t *u = realloc(a->upto, cap * sizeof(*u));
		uint64_t *e = u ? realloc(a->epoch, cap * sizeof(*e)) : NULL;

		if (u)
			a->upto = u;
		if (!e)
			return -ENOMEM;
		a->epoch = e;
		a->cap = cap;
	}
	a->upto[a->n] = count;
	a->epoch[a->n++] = ++j->epoch;
	return 0;
}

/* Both files read as far as they have grown (the perf map first). */
static int refresh(struct jit_names *j, uint64_t retry_ns)
{
	struct perf_map_stats ps;
	struct jit_dump_stats ds;
	const struct jit_dump *jd = jit_dump_file__dump(j->dump);

	perf_map__refresh(j->map, retry_ns);
	perf_map__stats(j->map, &ps);
	if (stamp(j, &j->map_ages, perf_map__count(j->map), ps.resets))
		return -ENOMEM;
	if (jit_dump_file__refresh(j->dump, retry_ns) == -ENOMEM)
		return -ENOMEM;
	jit_dump__stats(jd, &ds);
	return stamp(j, &j->dump_ages, jit_dump__count(jd), ds.resets);
}

/* The newest name of @pc among what was read, and its key: 0 or -ENOENT. */
static int pick(struct jit_names *j, uint64_t pc, struct jit_name *out, uint64_t *key)
{
	const struct jit_dump *jd = jit_dump_file__dump(j->dump);
	struct perf_map_entry e;
	struct jit_code c;
	bool in_map = !perf_map__find(j->map, pc, &e);
	bool in_dump = !jit_dump__find(jd, pc, &c);

	if (in_map && in_dump && age(&j->map_ages, e.id) > age(&j->dump_ages, c.id))
		in_dump = false;
	if (in_dump) {
		*out = (struct jit_name){ c.lstart, c.lend, c.name, c.file, c.line, c.start };
		*key = DUMP_KEY | (uint64_t)c.id << 25 | c.lidx;
		return 0;
	}
	if (in_map) {
		*out = (struct jit_name){ e.start, e.end, e.name, NULL, 0, e.start };
		*key = e.id;
		return 0;
	}
	return -ENOENT;
}

/* Name @n is kept: @kept called the first time. 0 or -ENOMEM. */
static int keep(struct jit_names *j, const struct jit_name *n, uint64_t key,
		int (*kept)(const struct jit_name *e, void *ctx), void *ctx)
{
	uint64_t h = htab_hash2(key, 1);

	if (htab__find(j->used, h, (uintptr_t)key))
		return 0;
	if (htab__add(j->used, h, (uintptr_t)key, (void *)1))
		return -ENOMEM;
	j->st.used++;
	return kept && kept(n, ctx) ? -ENOMEM : 0;
}

/* @pc named no frame yet: looked up again at the next dump. */
static void wait_for(struct jit_names *j, uint64_t pc)
{
	uint64_t h = htab_hash2(pc, 2);
	uintptr_t seen = (uintptr_t)htab__delete(j->pending, h, (uintptr_t)pc);

	if (seen || htab__count(j->pending) < PENDING_MAX)
		htab__add(j->pending, h, (uintptr_t)pc, (void *)(seen + 1));
}

int jit_names__note(struct jit_names *j, const struct mapset *ms, const uint64_t *frames,
		    uint32_t n, int (*kept)(const struct jit_name *e, void *ctx), void *ctx)
{
	struct jit_name name;
	uint64_t key;
	int found = 0;

	for (uint32_t i = 0; ms && i < n; i++) {
		/* A return address: its call is the byte before. */
		uint64_t pc = frames[i] - (frames[i] > 0);
		const struct mapping *m = mapset__find(ms, pc);

		if (!m || !(m->flags & MAPPING_ANON))
			continue;
		found++;
		j->st.frames++;
		if (pick(j, pc, &name, &key)) {
			if (refresh(j, JIT_RETRY_NS))
				return -ENOMEM;
			if (pick(j, pc, &name, &key)) {
				j->st.no_map = !perf_map__count(j->map) &&
					       !jit_dump_file__found(j->dump);
				wait_for(j, pc);
				continue;
			}
		}
		j->st.named++;
		j->st.no_map = false;
		if (keep(j, &name, key, kept, ctx))
			return -ENOMEM;
	}
	return found;
}

int jit_names__retry(struct jit_names *j, int (*kept)(const struct jit_name *e, void *ctx),
		     void *ctx)
{
	size_t pos = 0, k = 0, count = htab__count(j->pending);
	uint64_t *done, key, pc;
	struct jit_name name;
	uintptr_t addr;
	void *seen;
	int named = 0, err = 0;

	if (!count)
		return 0;
	done = malloc(count * sizeof(*done));
	if (!done || refresh(j, 0)) {
		free(done);
		return -ENOMEM;
	}
	while ((seen = htab__next(j->pending, &pos, &addr))) {
		pc = addr;
		if (pick(j, pc, &name, &key))
			continue;
		if (keep(j, &name, key, kept, ctx)) {
			err = -ENOMEM;
			break;
		}
		named += (int)(uintptr_t)seen;
		done[k++] = pc;
	}
	for (size_t i = 0; i < k; i++)
		htab__delete(j->pending, htab_hash2(done[i], 2), (uintptr_t)done[i]);
	free(done);
	j->st.named += (uint64_t)named;
	if (named)
		j->st.no_map = false;
	return err ? err : named;
}

int jit_names__find(struct jit_names *j, uint64_t addr, struct perf_map_entry *e)
{
	struct jit_name name;
	uint64_t key;

	if (pick(j, addr - (addr > 0), &name, &key))
		return -ENOENT;
	*e = (struct perf_map_entry){ .start = name.start, .end = name.end, .name = name.name,
				      .id = (uint32_t)(key & DUMP_KEY ? (key & ~DUMP_KEY) >> 25 : key) };
	return 0;
}

void jit_names__stats(const struct jit_names *j, struct jit_names_stats *st)
{
	*st = j->st;
	st->pending = (uint32_t)htab__count(j->pending);
	st->dump_found = jit_dump_file__found(j->dump);
	perf_map__stats(j->map, &st->map);
	jit_dump__stats(jit_dump_file__dump(j->dump), &st->dump);
}
