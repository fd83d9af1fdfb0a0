/* SPDX-License-Identifier: MIT */
/*
 * forkcopy.h - a forked child's own live table: the parent's at the
 * moment of fork(), copied by the child while the parent goes on.
 *
 * The table is shared memory, so fork() gives the child no copy of it,
 * and the parent's threads go on changing it. At the fork the parent
 * holds its writers (a freeze: no change half made) and opens an undo
 * log in memory the child shares; from then until the child has copied
 * the table, the parent's first change to each slot that existed at the
 * fork first saves the slot's entry in the log. The child copies the
 * table, closes the log, and puts every saved entry back: its copy is
 * the table at the fork. The parent's stall is the freeze, not a copy
 * of its live set; the child starts later by its copy. A fork while the
 * previous child still copies waits for that child (or its death). Each
 * segment the table had at the fork is copied into a memfd of the
 * child's own, mapped where the parent's was.
 */
#ifndef HEAPSNOOP_COLLECTOR_FORKCOPY_H
#define HEAPSNOOP_COLLECTOR_FORKCOPY_H

#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/livetable.h"

/* pthread_atfork's three: the parent before and after, the child. */
void forkcopy__prepare(void);
void forkcopy__parent(void);

/* A fork child's segments past the first: their memfds and which they are (region << 5 | k). */
struct forkcopy_segs {
	unsigned int n;
	int fd[LT_HELLO_SEGS];
	uint8_t id[LT_HELLO_SEGS];
};

/*
 * In the child: its table made and mapped where the parent's was (every
 * slot and pointer stays good), the header made its own. Returns the new
 * table's memfd (the caller hands it over with @segs' and closes them
 * all), -1 when the table is anonymous memory (@segs empty), or -errno:
 * the child has no table (its allocations are not recorded; the caller
 * says so).
 */
int forkcopy__child(struct forkcopy_segs *segs);

/* fork() returned @child in the parent (-1: it failed): the child the log waits for. */
void forkcopy__forked(pid_t child);

#endif /* HEAPSNOOP_COLLECTOR_FORKCOPY_H */
