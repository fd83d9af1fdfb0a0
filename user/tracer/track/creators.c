// SPDX-License-Identifier: MIT
/*
 * creators.c - thread id -> the chain of frames that created it (see
 * creators.h): two tables, tid -> chain and chain by content -> chain, so
 * that equal chains are kept once.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "creators.h"
#include "htab.h"

struct chain {
	uint64_t hash;
	uint32_t n;
	uint32_t flags;
	uint64_t frames[];
};

/* What a look-up by content compares with a stored chain. */
struct probe {
	const uint64_t *frames;
	uint32_t n;
	uint32_t flags;
};

struct creators {
	struct htab *by_tid;	/* tid -> struct chain * */
	struct htab *chains;	/* struct chain * (key) -> itself */
	size_t bytes;		/* the chains' */
};

static bool chain_equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	const struct chain *s = (const struct chain *)stored;
	const struct probe *p = (const struct probe *)probe;

	(void)ctx;
	return s->n == p->n && s->flags == p->flags &&
	       !memcmp(s->frames, p->frames, (size_t)p->n * sizeof(*p->frames));
}

static uint64_t frames_hash(const uint64_t *frames, uint32_t n, uint32_t flags)
{
	uint64_t h = htab_hash2(n, flags);

	for (uint32_t i = 0; i < n; i++)
		h = htab_hash2(h, frames[i]);
	return h;
}

static uint64_t tid_hash(uint32_t tid)
{
	return htab_hash2(tid, 0x74);
}

struct creators *creators__new(void)
{
	struct creators *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->by_tid = htab__new(16, NULL, NULL);
	c->chains = htab__new(16, chain_equal, NULL);
	if (!c->by_tid || !c->chains) {
		creators__free(c);
		return NULL;
	}
	return c;
}

void creators__free(struct creators *c)
{
	struct chain *ch;
	size_t pos = 0;

	if (!c)
		return;
	while (c->chains && (ch = htab__next(c->chains, &pos, NULL)))
		free(ch);
	htab__free(c->chains);
	htab__free(c->by_tid);
	free(c);
}

/* The chain of these frames, interned; NULL: no memory. */
static struct chain *chain_of(struct creators *c, const uint64_t *frames, uint32_t n,
			      uint32_t flags)
{
	struct probe p = { frames, n, flags };
	uint64_t h = frames_hash(frames, n, flags);
	struct chain *ch = htab__find(c->chains, h, (uintptr_t)&p);

	if (ch)
		return ch;
	ch = malloc(sizeof(*ch) + (size_t)n * sizeof(*frames));
	if (!ch)
		return NULL;
	ch->hash = h;
	ch->n = n;
	ch->flags = flags;
	memcpy(ch->frames, frames, (size_t)n * sizeof(*frames));
	if (htab__add(c->chains, h, (uintptr_t)ch, ch)) {
		free(ch);
		return NULL;
	}
	c->bytes += sizeof(*ch) + (size_t)n * sizeof(*frames);
	return ch;
}

int creators__set(struct creators *c, uint32_t tid, const uint64_t *frames, uint32_t n,
		  uint32_t flags)
{
	uint64_t h = tid_hash(tid);
	struct chain *ch;
	bool had;

	if (!n)
		return -EINVAL;
	had = htab__find(c->by_tid, h, tid) != NULL;
	if (!had && htab__count(c->by_tid) >= CREATORS_MAX_THREADS)
		return -ENOSPC;
	ch = chain_of(c, frames, n, flags);
	if (!ch)
		return -ENOMEM;
	if (had)
		htab__delete(c->by_tid, h, tid);
	return htab__add(c->by_tid, h, tid, ch);
}

int creators__get(const struct creators *c, uint32_t tid, const uint64_t **frames, uint32_t *n,
		  uint32_t *flags)
{
	const struct chain *ch = htab__find(c->by_tid, tid_hash(tid), tid);

	if (!ch)
		return -ENOENT;
	*frames = ch->frames;
	*n = ch->n;
	*flags = ch->flags;
	return 0;
}

size_t creators__threads(const struct creators *c)
{
	return htab__count(c->by_tid);
}

size_t creators__chains(const struct creators *c)
{
	return htab__count(c->chains);
}

size_t creators__memory(const struct creators *c)
{
	return sizeof(*c) + htab__memory(c->by_tid) + htab__memory(c->chains) + c->bytes;
}
