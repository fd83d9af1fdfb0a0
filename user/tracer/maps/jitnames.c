// SPDX-License-Identifier: MIT
/* jitnames.c - the perf map lines that name a process's JIT frames (see jitnames.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jitnames.h"

/*
 * A perf map not there is looked for again at a new stack this long
 * after the last look (a process may start writing it late: V8's
 * --perf-basic-prof can be turned on by a flag at run time).
 */
#define JIT_RETRY_NS 200000000ULL

struct jit_names {
	struct perf_map *map;
	uint64_t *used;		/* bit id: line id named a frame */
	size_t words;
	uint64_t resets;	/* the map's when @used was filled */
	struct jit_names_stats st;
};

struct jit_names *jit_names__new(pid_t pid)
{
	struct jit_names *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->map = perf_map__new(pid);
	if (!j->map) {
		free(j);
		return NULL;
	}
	return j;
}

void jit_names__free(struct jit_names *j)
{
	if (!j)
		return;
	perf_map__free(j->map);
	free(j->used);
	free(j);
}

static int mark(struct jit_names *j, uint32_t id)
{
	size_t w = id / 64;

	if (w >= j->words) {
		size_t words = w + 1 > 2 * j->words ? w + 1 : 2 * j->words;
		uint64_t *v = realloc(j->used, words * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + j->words, 0, (words - j->words) * sizeof(*v));
		j->used = v;
		j->words = words;
	}
	if (!(j->used[w] >> (id % 64) & 1)) {
		j->used[w] |= 1ULL << (id % 64);
		j->st.used++;
		return 1;
	}
	return 0;
}

int jit_names__note(struct jit_names *j, const struct mapset *ms, const uint64_t *frames,
		    uint32_t n, int (*kept)(const struct perf_map_entry *e, void *ctx), void *ctx)
{
	struct perf_map_stats ps;
	struct perf_map_entry e;
	int found = 0, err;

	for (uint32_t i = 0; ms && i < n; i++) {
		/* A return address: its call is the byte before. */
		uint64_t pc = frames[i] - (frames[i] > 0);
		const struct mapping *m = mapset__find(ms, pc);

		if (!m || !(m->flags & MAPPING_ANON))
			continue;
		found++;
		j->st.frames++;
		err = perf_map__lookup(j->map, pc, JIT_RETRY_NS, &e);
		perf_map__stats(j->map, &ps);
		if (ps.resets != j->resets) {
			/* The file was written again: its old lines are gone. */
			if (j->used)
				memset(j->used, 0, j->words * sizeof(*j->used));
			j->st.used = 0;
			j->resets = ps.resets;
		}
		if (err) {
			j->st.no_map = !ps.entries;
			continue;
		}
		j->st.named++;
		j->st.no_map = false;
		err = mark(j, e.id);
		if (err < 0 || (err && kept && kept(&e, ctx)))
			return -ENOMEM;
	}
	return found;
}

int jit_names__find(struct jit_names *j, uint64_t addr, struct perf_map_entry *e)
{
	return perf_map__find(j->map, addr - (addr > 0), e);
}

int jit_names__each(const struct jit_names *j,
		    int (*fn)(const struct perf_map_entry *e, void *ctx), void *ctx)
{
	struct perf_map_entry e;
	int ret;

	for (size_t w = 0; w < j->words; w++) {
		for (uint64_t bits = j->used[w]; bits; bits &= bits - 1) {
			uint32_t id = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));

			if (perf_map__entry(j->map, id, &e))
				continue;
			ret = fn(&e, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

void jit_names__stats(const struct jit_names *j, struct jit_names_stats *st)
{
	*st = j->st;
	perf_map__stats(j->map, &st->map);
}
