// SPDX-License-Identifier: MIT
/*
 * treelog.c - a dump's tree of a process's stacks (see treelog.h).
 *
 * The nodes a dump needs are the needed stacks and every node above
 * them: a bit each in a bitmap over the tree's arena (nodes start at even
 * offsets: a bit per 2 bytes is one per node), its rank (the set
 * bits before it, a count per 64 bits and a popcount) a dense number
 * for the arrays; each node's children in the order of their ids, in
 * one array cut by a start per node (the roots' children last, by cut
 * flags). A depth-first walk gives the `node` records in preorder, a
 * record a chain of nodes down to a needed stack or a branch, its
 * frames decoded from the frame before it, each needed stack's records
 * after its node; a first walk marks the frames in them that are not
 * native code, where the process has any.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "stacks.h"
#include "treelog.h"

struct tree_log {
	const struct stack_tree *st;
	uint64_t *marked;	/* a bit per 2 bytes of the arena: in the tree */
	uint64_t *wanted;	/* ... a stack the records name */
	uint32_t *rank_base;	/* marked bits before each word */
	size_t words;
	uint32_t n;		/* nodes marked */
	uint32_t *first;	/* by rank, and the roots' n..n + 7: where its children start */
	uint32_t *kids;		/* the children, as ids */
	uint32_t lines;		/* the records' nodes */
	uint64_t *frames;	/* a record's frames (REC_MAX_DEPTH) */
	struct step *steps;	/* the walk's way down (REC_MAX_DEPTH + 2) */
};

/* One record on the walk's way down: its children left. */
struct step {
	uint32_t next, end;	/* its children in kids[] */
	uint32_t line, level;	/* its node number and level */
	uint64_t last;		/* its last frame */
};

#define NROOTS	(STACK_CUT_ALL + 1)

static inline bool bit(const uint64_t *map, uint32_t id)
{
	return map[id >> 7] >> (id >> 1 & 63) & 1;
}

static inline void set_bit(uint64_t *map, uint32_t id)
{
	map[id >> 7] |= 1ULL << (id >> 1 & 63);
}

/* The bits set in @w (x86-64's baseline has no popcnt instruction). */
static inline uint32_t popcount(uint64_t w)
{
	w -= (w >> 1) & 0x5555555555555555ULL;
	w = (w & 0x3333333333333333ULL) + ((w >> 2) & 0x3333333333333333ULL);
	w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (uint32_t)((w * 0x0101010101010101ULL) >> 56);
}

static inline uint32_t rank_of(const struct tree_log *tl, uint32_t id)
{
	uint64_t w = tl->marked[id >> 7] & ((1ULL << (id >> 1 & 63)) - 1);

	return tl->rank_base[id >> 7] + popcount(w);
}

struct tree_log *tree_log__new(const struct stack_tree *st)
{
	struct tree_log *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->st = st;
	tl->words = stack_tree__span(st) / 2 / 64 + 1;
	tl->marked = calloc(tl->words, sizeof(*tl->marked));
	tl->wanted = calloc(tl->words, sizeof(*tl->wanted));
	tl->frames = malloc(REC_MAX_DEPTH * sizeof(*tl->frames));
	tl->steps = malloc((REC_MAX_DEPTH + 2) * sizeof(*tl->steps));
	if (!tl->marked || !tl->wanted || !tl->frames || !tl->steps) {
		tree_log__free(tl);
		return NULL;
	}
	return tl;
}

void tree_log__free(struct tree_log *tl)
{
	if (!tl)
		return;
	free(tl->marked);
	free(tl->wanted);
	free(tl->rank_base);
	free(tl->first);
	free(tl->kids);
	free(tl->frames);
	free(tl->steps);
	free(tl);
}

void tree_log__need(struct tree_log *tl, uint32_t id)
{
	struct stack_node nd;

	if (bit(tl->wanted, id))
		return;
	set_bit(tl->wanted, id);
	/* Up to the first node another stack needed already. */
	for (uint32_t x = id; stack_tree__is_node(x) && !bit(tl->marked, x); x = nd.parent) {
		set_bit(tl->marked, x);
		tl->n++;
		stack_tree__node(tl->st, x, &nd);
	}
}

/* What the walk does with each record, and with each stack. */
struct walk_ops {
	int (*line)(void *ctx, uint32_t line, uint32_t level, const uint64_t *frames, uint32_t n);
	/* @last: @line is the record just given to line() */
	int (*stack)(void *ctx, uint32_t id, uint32_t line, bool last);
	bool frames;	/* line() reads @frames (else they are not decoded) */
};

/*
 * Node @c's record: its chain down (nodes of one child each, up to a
 * record's REC_NODE_MAX_FRAMES), its frames after @prev into tl->frames.
 */
static uint32_t chain(const struct tree_log *tl, uint32_t c, uint64_t prev, bool frames,
		      uint32_t *n, uint64_t *last)
{
	struct stack_node nd;
	uint32_t x = c, r, k;

	*n = 0;
	for (;;) {
		stack_tree__node(tl->st, x, &nd);
		if (frames)
			prev = stack_tree__edge(tl->st, x, prev, tl->frames + *n);
		*n += nd.nframes;
		if (bit(tl->wanted, x))
			break;
		r = rank_of(tl, x);
		if (tl->first[r + 1] - tl->first[r] != 1)
			break;
		k = tl->kids[tl->first[r]];
		stack_tree__node(tl->st, k, &nd);
		if (*n + nd.nframes > REC_NODE_MAX_FRAMES)
			break;
		x = k;
	}
	*last = prev;
	return x;
}

/* The tree depth first, each record and each needed stack to @ops. */
static int walk(const struct tree_log *tl, const struct walk_ops *ops, void *ctx)
{
	struct step *s = tl->steps;
	uint32_t lines = 0;
	int err;

	for (uint32_t f = 0; f < NROOTS; f++) {
		uint32_t depth = 1;

		s[0] = (struct step){ tl->first[tl->n + f], tl->first[tl->n + f + 1], TREE_LOG_NONE,
				      UINT32_MAX, 0 };
		while (depth) {
			struct step *top = &s[depth - 1];
			struct stack_node nd;
			uint32_t c, x, n, r;
			uint64_t last;

			if (top->next == top->end) {
				depth--;
				continue;
			}
			c = tl->kids[top->next++];
			stack_tree__node(tl->st, c, &nd);
			if (!nd.nframes) {
				/* A stack that ends where its parent's record does. */
				if ((err = ops->stack(ctx, c, top->line, false)))
					return err;
				continue;
			}
			x = chain(tl, c, top->last, ops->frames, &n, &last);
			if ((err = ops->line(ctx, lines, top->level + 1, tl->frames, n)))
				return err;
			if (bit(tl->wanted, x) && (err = ops->stack(ctx, x, lines, true)))
				return err;
			r = rank_of(tl, x);
			if (tl->first[r] != tl->first[r + 1] && depth < REC_MAX_DEPTH + 2)
				s[depth++] = (struct step){ tl->first[r], tl->first[r + 1], lines,
							    top->level + 1, last };
			lines++;
		}
	}
	return 0;
}

struct need_ctx {
	struct tree_log *tl;
	struct frametab *ft;
	uint32_t pid;
};

/* A record counted; its frames that are not native code needed, if any are. */
static int need_line(void *ctx, uint32_t line, uint32_t level, const uint64_t *frames,
		     uint32_t n)
{
	struct need_ctx *c = ctx;

	(void)level;
	c->tl->lines = line + 1;
	return c->ft && frametab__need(c->ft, c->pid, frames, n) ? -ENOMEM : 0;
}

static int no_stack(void *ctx, uint32_t id, uint32_t line, bool last)
{
	(void)ctx;
	(void)id;
	(void)line;
	(void)last;
	return 0;
}

int tree_log__build(struct tree_log *tl, struct frametab *ft, uint32_t pid)
{
	/* The frames only when the process has some of its own to name. */
	bool named = ft && frametab__has(ft, pid);
	const struct walk_ops ops = { need_line, no_stack, named };
	struct need_ctx c = { tl, named ? ft : NULL, pid };
	uint32_t sum = 0, *pos = NULL;
	struct stack_node nd;

	tl->rank_base = malloc(tl->words * sizeof(*tl->rank_base));
	tl->first = calloc((size_t)tl->n + NROOTS + 1, sizeof(*tl->first));
	tl->kids = malloc(((size_t)tl->n + 1) * sizeof(*tl->kids));
	if (!tl->rank_base || !tl->first || !tl->kids)
		return -ENOMEM;
	for (size_t w = 0; w < tl->words; w++) {
		tl->rank_base[w] = sum;
		sum += popcount(tl->marked[w]);
	}
	/* Each node's children counted under their parent, then put there, by id. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t w = 0; w < tl->words; w++) {
			for (uint64_t m = tl->marked[w]; m; m &= m - 1) {
				uint32_t id = (uint32_t)((w * 64 + (size_t)__builtin_ctzll(m)) * 2), p;

				stack_tree__node(tl->st, id, &nd);
				p = stack_tree__is_node(nd.parent) ? rank_of(tl, nd.parent) :
				    tl->n + (nd.parent & STACK_CUT_ALL);
				if (!pass) {
					tl->first[p + 1]++;
					continue;
				}
				tl->kids[pos[p]++] = id;
			}
		}
		if (pass)
			break;
		for (uint32_t p = 0; p < tl->n + NROOTS; p++)
			tl->first[p + 1] += tl->first[p];
		/* Where each parent's next child goes: its start. */
		pos = malloc(((size_t)tl->n + NROOTS) * sizeof(*pos));
		if (!pos)
			return -ENOMEM;
		memcpy(pos, tl->first, ((size_t)tl->n + NROOTS) * sizeof(*pos));
	}
	free(pos);
	/*
	 * The records counted by the walk that writes them: a record goes
	 * on down an only child of a node that ends no needed stack, but
	 * stops at REC_NODE_MAX_FRAMES, which only the walk sees.
	 */
	tl->lines = 0;
	return walk(tl, &ops, &c);
}

uint32_t tree_log__count(const struct tree_log *tl)
{
	return tl->lines;
}

uint32_t tree_log__index(const struct tree_log *tl, uint32_t id)
{
	return rank_of(tl, id);
}

uint32_t tree_log__marked(const struct tree_log *tl)
{
	return tl->n;
}

struct write_ctx {
	FILE *out;
	uint32_t pid;
	int (*fn)(void *ctx, uint32_t id, uint32_t node, bool last);
	void *ctx;
};

static int write_line(void *ctx, uint32_t line, uint32_t level, const uint64_t *frames,
		      uint32_t n)
{
	const struct write_ctx *w = ctx;
	struct record r = { .type = REC_NODE, .pid = (int)w->pid, .level = level,
			    .frames = frames, .nframes = n };

	(void)line;
	return records__write(w->out, &r) ? -EIO : 0;
}

static int write_stack(void *ctx, uint32_t id, uint32_t line, bool last)
{
	const struct write_ctx *w = ctx;

	return w->fn(w->ctx, id, line, last);
}

int tree_log__write(const struct tree_log *tl, uint32_t pid, FILE *out,
		    int (*fn)(void *ctx, uint32_t id, uint32_t node, bool last), void *ctx)
{
	static const struct walk_ops ops = { write_line, write_stack, true };
	struct write_ctx w = { out, pid, fn, ctx };
	struct record r = { .type = REC_TREE, .pid = (int)pid, .nodes = tl->lines };

	if (records__write(out, &r))
		return -EIO;
	return walk(tl, &ops, &w);
}
