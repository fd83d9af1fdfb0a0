/* SPDX-License-Identifier: MIT */
/*
 * alloc_metadata.h - the in-process half of heapsnoop's format:
 * libwebsockets' lws_alloc_metadata in our own terms. An allocator that
 * wants its live blocks as heapsnoop records over-allocates each block,
 * keeps the allocation's compressed record (size and stack, the `~m#` blob
 * of docs/FORMAT.md) behind the block the user gets, and links it into a
 * lock-protected list of live blocks; a dump writes that list as the same
 * `dump`/`map`/`live`/`end-dump` lines heapsnoop writes (docs/OUTPUT.md),
 * so heapdecode reads them unchanged. docs/COLLECTOR.md shows how to put
 * it into an allocator; examples/am_pool.c does it for a tiny one.
 *
 * The layout of one block, low addresses first (the lws order: blob,
 * 16-bit length, list node):
 *
 *   block                                               user
 *   | padding | blob (len bytes) | u16 len | struct hs_am_node | size bytes...
 *   '------------------------ head bytes ------------------------'
 *
 * head is a multiple of the alignment asked for, so a block aligned to it
 * gives a user pointer aligned to it; the node is the 40 bytes just before
 * the user pointer (32 on a 32-bit target) and ends with a magic number
 * that tells our blocks from others (hs_am_owns()).
 */
#ifndef HEAPSNOOP_ALLOC_METADATA_H
#define HEAPSNOOP_ALLOC_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heapsnoop/codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The list node just before every user pointer (40 bytes; 32 where
 * pointers are 4 bytes, as on Cortex-M or i386). */
struct hs_am_node {
	struct hs_am_node *prev, *next;
	uint64_t size;		/* bytes the user asked for: the record's size */
	uint32_t cut;		/* HS_AM_CUT_* bits: the record's stack is incomplete */
	uint32_t tail;		/* the stack's frames past the blob's 31: an id
				 * of the preload's deep stacks, 0: none */
	uint32_t head;		/* bytes from the block to the user pointer */
	uint32_t magic;		/* HS_AM_MAGIC ^ the node's address bits */
};

/*
 * Why a record's stack is incomplete, written as its `live` line's cut=
 * (docs/OUTPUT.md): the stack went on past the frames kept (the blob's
 * HS_MAX_DEPTH; the preload's, with its tail, REC_MAX_DEPTH), or a frame
 * could not be recovered.
 */
#define HS_AM_CUT_DEPTH		(1u << 0)
#define HS_AM_CUT_UNREADABLE	(1u << 1)

/* Smallest alignment of a user pointer (the node's). */
#define HS_AM_MIN_ALIGN 16

/*
 * One allocation's metadata, prepared before the allocator is called:
 * the blob and how many bytes to put in front of the user's.
 */
struct hs_am_site {
	uint64_t size;		/* the user's bytes, the record's size field */
	uint32_t cut;		/* HS_AM_CUT_*: 0 from prepare, set by the caller */
	uint32_t tail;		/* hs_am_node's tail: 0 from prepare, set by the
				 * preload for a deep stack */
	size_t head;		/* bytes before the user pointer */
	uint16_t len;		/* blob bytes */
	uint8_t blob[HS_BLOB_BUF];
};

/* Optional callbacks, called with the list lock held; may not allocate
 * from the instrumented allocator. */
struct hs_am_ops {
	/* @user was placed: @size bytes, its record's blob @blob[@len]. */
	void (*alloc)(void *arg, const void *user, uint64_t size, const uint8_t *blob,
		      size_t len);
	/* @user (@size bytes) is about to be given back. */
	void (*free)(void *arg, const void *user, uint64_t size);
	void *arg;
};

/*
 * Writes the `map` records of process @pid to @out (docs/OUTPUT.md) for
 * hs_am__dump(); returns 0 or a negative errno. NULL: no map records.
 */
typedef int (*hs_am_maps_fn)(FILE *out, int pid, void *arg);

/*
 * The hs_am_maps_fn of a Linux process dumping itself: one `map` line per
 * executable segment of each object the dynamic loader has loaded
 * (dl_iterate_phdr), the build ID from its PT_NOTE in memory, the main
 * program's path /proc/self/exe's target, the vDSO's "[vdso]". Opens no
 * file, allocates nothing. @arg is unused. Returns 0 or -EIO.
 */
int hs_am_maps_self(FILE *out, int pid, void *arg);

struct hs_am;	/* the live list, its lock and callbacks: opaque */

/* A new, empty list; @ops may be NULL. Returns NULL without memory (errno). */
struct hs_am *hs_am__new(const struct hs_am_ops *ops);
/* Frees the list (not the blocks on it). NULL is a no-op. */
void hs_am__free(struct hs_am *am);

/*
 * Prepare @site for an allocation of @size bytes aligned to @align (a power
 * of two; raised to HS_AM_MIN_ALIGN) made from @frames[@depth] (return
 * addresses, call site first; depth <= HS_MAX_DEPTH). The record says
 * @size bytes, sampled or not (a sampled list says its mean instead:
 * hs_am__set_sample_bytes()); site->cut is 0, for the caller to set if the
 * stack went deeper than @frames. Returns the bytes to ask the allocator
 * for (@size + site->head), aligned to @align; or 0 with
 * -HS_EDEPTH/-HS_ERANGE in *@err, or 0 on overflow of size_t (*@err
 * -HS_ERANGE). @err may be NULL.
 */
size_t hs_am_site__prepare(struct hs_am_site *site, uint64_t size, size_t align,
			   const uint64_t *frames, uint32_t depth, int *err);

/*
 * The same for a stack already encoded (@sb, hs_stack_bits_encode()), as
 * an allocator that keeps its stacks' encodings calls it. Returns as
 * hs_am_site__prepare() does.
 */
size_t hs_am_site__prepare_bits(struct hs_am_site *site, uint64_t size, size_t align,
				const struct hs_stack_bits *sb, int *err);

/*
 * Write @site's metadata into @block (site->head + size bytes, aligned as
 * prepared), link it, call ops->alloc. Returns the user pointer,
 * @block + site->head. Thread-safe.
 */
void *hs_am__place(struct hs_am *am, const struct hs_am_site *site, void *block);

/*
 * Unlink the block of @user (hs_am_owns() true), call ops->free, and
 * return the block to give back to the allocator. Thread-safe.
 */
void *hs_am__remove(struct hs_am *am, void *user);

/* True if @user (not NULL, its 4 bytes before readable) was placed here. */
bool hs_am_owns(const void *user);

/* "hsmd": the last 4 bytes before a user pointer, mixed with its address. */
#define HS_AM_MAGIC 0x68736d64u

/* The magic a node at @n holds (never 0: glibc's chunk header has 0 there). */
static inline uint32_t hs_am_node_magic(const struct hs_am_node *n)
{
	uintptr_t a = (uintptr_t)n;

	return (HS_AM_MAGIC ^ (uint32_t)(a >> 4) ^ (uint32_t)((uint64_t)a >> 36)) | 1;
}

/*
 * hs_am_owns() inline, for an allocator's free path (a load and a compare).
 * It reads the 4 bytes before a block that may not be ours, by contract:
 * never ASan's business.
 */
__attribute__((no_sanitize_address)) static inline bool hs_am_owns_inline(const void *user)
{
	const struct hs_am_node *n = (const struct hs_am_node *)user - 1;
	uint32_t magic;

	__builtin_memcpy(&magic, &n->magic, sizeof(magic));
	return magic == hs_am_node_magic(n);
}

/* The node of @user; its blob is hs_am_blob(). */
static inline struct hs_am_node *hs_am_node(const void *user)
{
	return (struct hs_am_node *)user - 1;
}

/* The blob behind @user and its length in *@len. */
const uint8_t *hs_am_blob(const void *user, size_t *len);

/*
 * Take and drop the list lock from outside: around fork() (pthread_atfork),
 * so that the child never inherits it held by a thread it does not have.
 */
void hs_am__lock(struct hs_am *am);
void hs_am__unlock(struct hs_am *am);

/*
 * The blocks placed on @am are a sample by bytes of mean @mean bytes
 * (docs/COLLECTOR.md: each stands for s / (1 - e^(-s/mean)) bytes), not
 * every allocation: each dump says so (its `dump` line's sample-bytes=,
 * docs/OUTPUT.md), and heapdecode scales them. 0: every allocation (the
 * default). Call before the first block is placed. Built for a Cortex-M
 * (its port, docs/MCU.md) there is no sampling: the call does nothing,
 * and every dump is of every allocation, as it says.
 */
void hs_am__set_sample_bytes(struct hs_am *am, uint64_t mean);

/* Live blocks and their bytes (estimated if sampled), now. */
void hs_am__totals(struct hs_am *am, uint64_t *live, uint64_t *bytes);

/*
 * Write the live list to @out as one dump of process @pid: the `dump` line
 * (reason @reason: exit, signal, usr1, interval; sample-bytes= if set),
 * the map records from @maps(@out, @pid, @arg) if not NULL, one `live`
 * line per block (`~m#` token of its blob, and a deep stack's
 * continuation tokens and depth=; cut= if its stack is incomplete),
 * `end-dump`. Holds the lock throughout, so
 * the dump is one moment; @out must not allocate from the instrumented
 * allocator's tracked path. Returns 0, or -EIO if @out failed.
 */
int hs_am__dump(struct hs_am *am, FILE *out, int pid, const char *reason,
		hs_am_maps_fn maps, void *arg);

/*
 * Writes @len bytes at @buf, one whole record line (its '\n' included),
 * to wherever the dump goes (a UART, a log); returns 0, or a negative
 * errno that ends the dump.
 */
typedef int (*hs_am_write_fn)(void *arg, const char *buf, size_t len);

/*
 * hs_am__dump() for a system without stdio or loaded modules (a firmware,
 * docs/MCU.md): the same `dump`, `live` and `end-dump` lines, byte for
 * byte, each handed to @write(@arg, ...) whole, no `map` record (the
 * frames are addresses in one image, heapdecode -e IMAGE names them).
 * @time_ms: the `dump` line's time= in milliseconds (0: none known).
 * A block whose stack went on past its blob (a tail, set only by the
 * preload) says cut=depth here, its outer frames not written. Holds the
 * lock throughout (on a single-core port: interrupts masked while @write
 * runs). Allocates nothing; 640 bytes of stack on a Cortex-M3 (-Os).
 * Returns 0, or the first error of @write, or -EINVAL for a NULL @write.
 */
int hs_am__dump_lines(struct hs_am *am, hs_am_write_fn write, void *arg, int pid,
		      const char *reason, uint64_t time_ms);

#ifdef __cplusplus
}
#endif

#endif /* HEAPSNOOP_ALLOC_METADATA_H */
