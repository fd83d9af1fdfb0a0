// SPDX-License-Identifier: MIT
/*
 * nodetab.c - each process's tree of frames from a log's records (see
 * nodetab.h). A tree is an array of nodes in the order of their
 * records, each its parent and where its frames start in one array of
 * frames; the way down to the last node, its node at each level, gives
 * a new node's parent (the last node of the level above it).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "heapsnoop/codec.h"
#include "htab.h"
#include "input/nodetab.h"

#define NO_PARENT UINT32_MAX

struct tnode {
	uint32_t parent;	/* a node's index, NO_PARENT at the root */
	uint32_t first;		/* its frames' start in frames[] */
	uint16_t nframes;
	uint16_t depth;		/* its stack's frames: its own and those above it */
};

struct tree {
	uint32_t expect;	/* nodes= */
	uint32_t n, cap;
	struct tnode *nodes;
	uint64_t *frames;	/* every node's, outermost first */
	size_t nf, fcap;
	bool broken;		/* a node did not fit: no more taken */
	uint32_t levels;	/* the way down to the last node: */
	uint32_t *path;		/* its node at each level (pcap of them, grown) */
	uint32_t pcap;
};

struct nodetab {
	struct htab *trees;	/* pid -> struct tree */
};

struct nodetab *nodetab__new(void)
{
	struct nodetab *nt = calloc(1, sizeof(*nt));

	if (!nt)
		return NULL;
	nt->trees = htab__new(16, NULL, NULL);
	if (!nt->trees) {
		free(nt);
		return NULL;
	}
	return nt;
}

static void tree_free(struct tree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->frames);
	free(t->path);
	free(t);
}

void nodetab__reset(struct nodetab *nt)
{
	struct tree *t;
	size_t pos = 0;

	while ((t = htab__next(nt->trees, &pos, NULL)))
		tree_free(t);
	htab__free(nt->trees);
	nt->trees = htab__new(16, NULL, NULL);
}

size_t nodetab__stop(struct nodetab *nt)
{
	struct tree *t;
	size_t pos = 0, n = 0;

	while (nt->trees && (t = htab__next(nt->trees, &pos, NULL))) {
		n += !t->broken;
		t->broken = true;
	}
	return n;
}

void nodetab__free(struct nodetab *nt)
{
	if (!nt)
		return;
	nodetab__reset(nt);
	htab__free(nt->trees);
	free(nt);
}

static struct tree *tree_of(const struct nodetab *nt, uint32_t pid)
{
	return nt->trees ? htab__find(nt->trees, htab_hash2(pid, 0), pid) : NULL;
}

/* A `tree` record: @pid's tree begins again, empty. */
static int begin(struct nodetab *nt, const struct record *r)
{
	uint32_t pid = (uint32_t)r->pid;
	uint64_t h = htab_hash2(pid, 0);
	struct tree *t;

	if (!nt->trees)
		return -HS_ENOSPC;
	tree_free(htab__delete(nt->trees, h, pid));
	t = calloc(1, sizeof(*t));
	if (!t || htab__add(nt->trees, h, pid, t)) {
		free(t);
		return -HS_ENOSPC;
	}
	t->expect = r->nodes;
	return 0;
}

/* Room for one node more and @nframes frames; 0 or -HS_ENOSPC. */
static int room(struct tree *t, uint32_t nframes)
{
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		struct tnode *v = realloc(t->nodes, (size_t)cap * sizeof(*v));

		if (!v)
			return -HS_ENOSPC;
		t->nodes = v;
		t->cap = cap;
	}
	if (t->nf + nframes > t->fcap) {
		size_t cap = t->fcap ? t->fcap * 2 : 256;
		uint64_t *v;

		while (cap < t->nf + nframes)
			cap *= 2;
		v = realloc(t->frames, cap * sizeof(*v));
		if (!v)
			return -HS_ENOSPC;
		t->frames = v;
		t->fcap = cap;
	}
	return 0;
}

/* Room for the way down to level @level (< REC_MAX_DEPTH); 0 or -HS_ENOSPC. */
static int path_room(struct tree *t, uint32_t level)
{
	uint32_t cap = t->pcap ? t->pcap : 64;
	uint32_t *v;

	if (level < t->pcap)
		return 0;
	while (cap <= level)
		cap *= 2;
	v = realloc(t->path, (size_t)cap * sizeof(*v));
	if (!v)
		return -HS_ENOSPC;
	t->path = v;
	t->pcap = cap;
	return 0;
}

/* A `node` record: the next node of its process's tree, if it fits. */
static int add(struct nodetab *nt, const struct record *r)
{
	struct tree *t = tree_of(nt, (uint32_t)r->pid);
	uint32_t parent, above;
	struct tnode *nd;
	int err;

	if (!t)
		return -HS_ETREE;
	if (t->broken || t->n == t->expect || r->level > t->levels)
		goto broken;
	parent = r->level ? t->path[r->level - 1] : NO_PARENT;
	above = parent == NO_PARENT ? 0 : t->nodes[parent].depth;
	if (above + r->nframes > REC_MAX_DEPTH)
		goto broken;
	err = room(t, r->nframes) ?: path_room(t, r->level);
	if (err)
		return err;
	nd = &t->nodes[t->n];
	*nd = (struct tnode){ parent, (uint32_t)t->nf, (uint16_t)r->nframes,
			      (uint16_t)(above + r->nframes) };
	records__frames(r, t->frames + t->nf, r->nframes);
	t->nf += r->nframes;
	t->path[r->level] = t->n++;
	t->levels = r->level + 1;
	return 0;
broken:
	/* The nodes after it would be numbered wrong: none is taken. */
	t->broken = true;
	return -HS_ETREE;
}

int nodetab__take(struct nodetab *nt, const struct record *r)
{
	if (r->type == REC_TREE)
		return begin(nt, r);
	if (r->type == REC_NODE)
		return add(nt, r);
	return 1;
}

int nodetab__stack(const struct nodetab *nt, uint32_t pid, uint32_t node, uint64_t *frames,
		   uint32_t *depth)
{
	const struct tree *t = tree_of(nt, pid);
	uint32_t k = 0;

	*depth = 0;
	/* node=^: the last node taken, if none was refused since. */
	if (t && node == REC_NODE_PREV && !t->broken)
		node = t->n - 1;
	if (!t || node >= t->n)
		return -HS_ENODE;
	for (uint32_t x = node; x != NO_PARENT; x = t->nodes[x].parent) {
		const struct tnode *nd = &t->nodes[x];

		for (uint32_t i = nd->nframes; i-- > 0;)
			frames[k++] = t->frames[nd->first + i];
	}
	*depth = k;
	return 0;
}

int nodetab__record(const struct nodetab *nt, const struct record *r, uint64_t *size,
		    uint64_t *frames, uint32_t *depth)
{
	if (!r->has_node)
		return records__stack(r, size, frames, depth);
	*size = r->type == REC_LIVE ? r->size : 0;
	return nodetab__stack(nt, (uint32_t)r->pid, r->node, frames, depth);
}
