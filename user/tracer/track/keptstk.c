// SPDX-License-Identifier: MIT
/* keptstk.c - live blocks' stack copies for --keep-stacks (see keptstk.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "keptstk.h"

struct kept {
	uint64_t ptr;
	uint32_t frames;
	struct hs_user_stack us;	/* its data[] after it: us.size bytes */
};

struct kept_stacks {
	struct htab *by_ptr;	/* ptr -> struct kept */
	struct kept_budget *b;
};

/* What a copy costs the budget: itself, its header, a table slot's share. */
static uint64_t cost(const struct kept *k)
{
	return sizeof(*k) + k->us.size + 32;
}

struct kept_stacks *kept_stacks__new(struct kept_budget *b)
{
	struct kept_stacks *ks = calloc(1, sizeof(*ks));

	if (!ks)
		return NULL;
	ks->b = b;
	ks->by_ptr = htab__new(64, NULL, NULL);
	if (!ks->by_ptr) {
		free(ks);
		return NULL;
	}
	return ks;
}

static void give_back(struct kept_stacks *ks, struct kept *k)
{
	ks->b->bytes -= cost(k);
	ks->b->held--;
	free(k);
}

void kept_stacks__free(struct kept_stacks *ks)
{
	struct kept *k;
	size_t pos = 0;

	if (!ks)
		return;
	while ((k = htab__next(ks->by_ptr, &pos, NULL)))
		give_back(ks, k);
	htab__free(ks->by_ptr);
	free(ks);
}

void kept_stacks__drop(struct kept_stacks *ks, uint64_t ptr)
{
	struct kept *k;

	if (!ks || !htab__count(ks->by_ptr))
		return;
	k = htab__delete(ks->by_ptr, htab_hash2(ptr, 0), (uintptr_t)ptr);
	if (k)
		give_back(ks, k);
}

int kept_stacks__put(struct kept_stacks *ks, uint64_t ptr, const struct hs_user_stack *us,
		     uint32_t frames)
{
	struct kept *k;

	kept_stacks__drop(ks, ptr);
	if (ks->b->bytes + sizeof(*k) + us->size + 32 > ks->b->budget) {
		ks->b->over_budget++;
		return -ENOSPC;
	}
	k = malloc(sizeof(*k) + us->size);
	if (!k) {
		ks->b->no_memory++;
		return -ENOMEM;
	}
	k->ptr = ptr;
	k->frames = frames;
	memcpy(&k->us, us, sizeof(*us) + us->size);
	if (htab__add(ks->by_ptr, htab_hash2(ptr, 0), (uintptr_t)ptr, k)) {
		free(k);
		ks->b->no_memory++;
		return -ENOMEM;
	}
	ks->b->bytes += cost(k);
	if (ks->b->bytes > ks->b->peak)
		ks->b->peak = ks->b->bytes;
	ks->b->kept++;
	ks->b->held++;
	ks->b->copy_bytes += us->size;
	return 0;
}

bool kept_stacks__record(const struct kept_stacks *ks, int pid, uint64_t ptr,
			 struct record *r)
{
	const struct kept *k;

	if (!ks || !htab__count(ks->by_ptr))
		return false;
	k = htab__find(ks->by_ptr, htab_hash2(ptr, 0), (uintptr_t)ptr);
	if (!k)
		return false;
	*r = (struct record){ .type = REC_USTACK, .pid = pid, .ptr = ptr,
			      .us = { .version = REC_USTACK_VERSION, .arch = HS_ARCH_NAME,
				      .frames = k->frames, .nregs = HS_UREG__MAX,
				      .size = k->us.size, .want = k->us.want, .skip = k->us.skip,
				      .holes = k->us.holes, .bytes = k->us.data } };
	memcpy(r->us.regs, k->us.regs, sizeof(k->us.regs));
	return true;
}
