/* SPDX-License-Identifier: MIT */
/*
 * group.h - the live set of the model in rows: its stacks grouped by a
 * key, each key's bytes and allocations summed, biggest first. The keys:
 * its process, its holder function or its call site's module (--report
 * --by); the folded stacks' rows are analyses/fold.h's, merged here. With a baseline subtracted the sums are
 * differences, signed, and a key whose sums are both 0 has no row.
 */
#ifndef HEAPDECODE_GROUP_H
#define HEAPDECODE_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "holders.h"
#include "model/model.h"

/* What --report groups by: the whole stack, or one key of it. */
enum hd_by { HD_BY_STACK, HD_BY_PID, HD_BY_FUNCTION, HD_BY_MODULE };

/* A row: a key and what is live under it. */
struct hd_row {
	char *key;
	uint64_t bytes, count;	/* signed, with a baseline subtracted */
	uint64_t cut;		/* allocations whose stack is incomplete */
};

/*
 * The live stacks grouped by @by (pid, function: the holder's, the
 * innermost of the program's own, holders.h; or module: frame 0's, the
 * allocator's caller), as "pid N", the function's name, the module's path. Returns a malloc'ed array of *@n rows (hd_group__free),
 * or NULL: no memory.
 */
struct hd_row *hd_group__by(struct hd_model *m, enum hd_by by, size_t *n);

/*
 * Stack @s's key by @by (HD_BY_FUNCTION: its holder's name, as
 * holders__name() gives it), malloc'ed; NULL: no memory.
 */
char *hd_group__key(struct hd_model *m, enum hd_by by, const struct stack *s);

/*
 * Rows of equal keys in @rows[@n] summed into one (the others' keys
 * freed), those left at 0 bytes and 0 allocations (with a baseline)
 * dropped, the rest sorted by bytes, biggest first (signed). Returns how
 * many rows are left, in place.
 */
size_t hd_group__merge(struct hd_row *rows, size_t n);

/*
 * @n stacks @v by holder (holders.h: the innermost function of the
 * program's own, callers beneath), each with @bytes[i] in @count[i]
 * blocks (NULL: its live bytes and count; both 0: left out), signed
 * with @diff (a baseline subtracted, growth). Returns a holders__free'd set, or NULL: no
 * memory.
 */
struct holders *hd_group__holders(struct hd_model *m, struct stack *const *v, size_t n,
				  const uint64_t *bytes, const uint64_t *count, bool diff);

void hd_group__free(struct hd_row *rows, size_t n);

#endif /* HEAPDECODE_GROUP_H */
