/* SPDX-License-Identifier: MIT */
/*
 * nodetab.h - the stacks of a log's dumps as their `tree` and `node`
 * records give them (docs/OUTPUT.md, "Stacks as a tree"): each process's
 * last tree, node by node as the lines come, and the stack a `live` or
 * `stack` record's node= names, its frames innermost first, as the form
 * with tokens gives them (records__stack()).
 *
 * A log is hostile: a `node` record that does not fit its tree (no tree
 * before it, more nodes than the tree said, a level deeper than one below
 * the last node, a stack of more than REC_MAX_DEPTH frames) is refused and
 * the tree stops there, so that the nodes after it are never numbered
 * wrong; a node= past what was taken is refused. Memory: 12 bytes a node
 * and 8 a frame, each process's tree freed when its next one begins.
 */
#ifndef HEAPDECODE_NODETAB_H
#define HEAPDECODE_NODETAB_H

#include <stdint.h>

#include "records.h"

struct nodetab;

struct nodetab *nodetab__new(void);
void nodetab__free(struct nodetab *nt);

/* A new dump: every process's tree forgotten. */
void nodetab__reset(struct nodetab *nt);

/*
 * Every tree takes no more nodes (a line that may have held one was not
 * read): what was taken still names stacks, nothing after it. Returns
 * how many trees were taking nodes.
 */
size_t nodetab__stop(struct nodetab *nt);

/*
 * Take parsed record @r: a `tree` starts its process's tree anew, a
 * `node` is its next node. Returns 1 (another type: nothing taken), 0,
 * -HS_ETREE (a node that does not fit: said by the caller; the tree
 * takes no more) or -HS_ENOSPC.
 */
int nodetab__take(struct nodetab *nt, const struct record *r);

/*
 * The stack of node @node of process @pid's tree (REC_NODE_PREV: the
 * last one taken, if none was refused since): its frames, innermost
 * first, into @frames (REC_MAX_DEPTH entries), their count in *@depth.
 * Returns 0 or -HS_ENODE (no such node taken).
 */
int nodetab__stack(const struct nodetab *nt, uint32_t pid, uint32_t node, uint64_t *frames,
		   uint32_t *depth);

/*
 * The stack of parsed `live` or `stack` record @r in either form (tokens,
 * or node= through @nt): its size (a `live` record's; 0 for a `stack`
 * record of the node form), frames and depth, as records__stack() gives
 * them, its errors too (-HS_ENODE besides).
 */
int nodetab__record(const struct nodetab *nt, const struct record *r, uint64_t *size,
		    uint64_t *frames, uint32_t *depth);

#endif /* HEAPDECODE_NODETAB_H */
