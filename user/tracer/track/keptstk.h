/* SPDX-License-Identifier: MIT */
/*
 * keptstk.h - heapsnoop --keep-stacks: each live allocation's registers
 * and stack copy, kept as the unwinder read them (struct hs_user_stack),
 * for the dumps' `ustack` records (docs/OUTPUT.md, "Stack bytes kept"),
 * which heapdecode unwinds again elsewhere, with files this machine may
 * not have (docs/DESIGN.md, "Unwinding later, elsewhere").
 *
 * A process's table holds its live blocks' copies by address, each
 * dropped when its block leaves the live set (freed, replaced, the
 * process gone or exec'd). All processes share one byte budget
 * (--keep-stacks=MIB): a copy that does not fit is not kept, counted.
 */
#ifndef HEAPSNOOP_KEPTSTK_H
#define HEAPSNOOP_KEPTSTK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapsnoop/event.h"
#include "records.h"

struct kept_stacks;

/* The budget and what became of the copies offered, for all processes. */
struct kept_budget {
	uint64_t budget;	/* bytes, copies and their headers */
	uint64_t bytes;		/* held now */
	uint64_t peak;		/* ... at most */
	uint64_t kept;		/* copies kept, in all */
	uint64_t held;		/* ... held now */
	uint64_t over_budget;	/* not kept: the budget was full */
	uint64_t interp;	/* not kept: interpreter frames among the native ones */
	uint64_t no_memory;	/* not kept: no memory */
	uint64_t copy_bytes;	/* the copies kept, their stack bytes in all */
};

/* An empty table charging @b; NULL: no memory. */
struct kept_stacks *kept_stacks__new(struct kept_budget *b);
/* Free it, its copies given back to the budget. */
void kept_stacks__free(struct kept_stacks *ks);

/*
 * Keep a copy of @us (@len bytes: the header and its data, checked by the
 * unwinder already) for the block at @ptr, whose first @frames frames the
 * online unwind gave; a copy kept for @ptr before is dropped first.
 * Returns 0, -ENOSPC (over the budget) or -ENOMEM, counted in the budget.
 */
int kept_stacks__put(struct kept_stacks *ks, uint64_t ptr, const struct hs_user_stack *us,
		     uint32_t frames);

/* The block at @ptr left the live set: its copy, if any, dropped. */
void kept_stacks__drop(struct kept_stacks *ks, uint64_t ptr);

/*
 * The `ustack` record of the block at @ptr of process @pid into @r (its
 * pointers into the table, valid until it changes); false: none kept.
 */
bool kept_stacks__record(const struct kept_stacks *ks, int pid, uint64_t ptr,
			 struct record *r);

#endif /* HEAPSNOOP_KEPTSTK_H */
