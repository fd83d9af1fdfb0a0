/* SPDX-License-Identifier: MIT */
/*
 * htab.h - one small generic hash table for the tables that are not on
 * the per-allocation hot path (processes by pid, files by identity,
 * unique stacks): open addressing, linear probing, kept at most 3/4 full,
 * backward-shift deletion (no tombstones), growth by doubling.
 *
 * The caller computes each key's 64-bit hash (it knows its key best) and
 * gives an equality test for keys that are not plain integers; the table
 * keeps each entry's hash, so growing never hashes again. Keys and values
 * are the caller's: a key is an integer or a pointer into the value.
 *
 * The live-allocation table (tracker.c) stays specialised: it is probed
 * twice per allocation and keeps 32 bytes an entry inline.
 */
#ifndef HEAPSNOOP_HTAB_H
#define HEAPSNOOP_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Is stored key @stored the key @probe looked for? (@probe is what was
 * given to htab__find, which may be of another type than stored keys.)
 * NULL in htab__new: keys are integers, equal when equal.
 */
typedef bool (*htab_equal_fn)(uintptr_t stored, uintptr_t probe, void *ctx);

struct htab;

/* An empty table of @min_slots (a power of two) slots; NULL: no memory. */
struct htab *htab__new(size_t min_slots, htab_equal_fn equal, void *ctx);
/* Free the table, not the keys or values. */
void htab__free(struct htab *h);

/* The value of @key (hash @hash), or NULL. */
void *htab__find(const struct htab *h, uint64_t hash, uintptr_t key);

/*
 * Add @key (hash @hash, not in the table: the caller has looked) with
 * @value (not NULL). Returns 0 or -ENOMEM (the table is unchanged).
 */
int htab__add(struct htab *h, uint64_t hash, uintptr_t key, void *value);

/* Remove @key; returns its value, or NULL if it was not there. */
void *htab__delete(struct htab *h, uint64_t hash, uintptr_t key);

size_t htab__count(const struct htab *h);
/* Bytes the table itself holds (not keys or values). */
size_t htab__memory(const struct htab *h);

/*
 * Iterate: start with *@pos 0; each call returns the next value (and its
 * key in *@key if not NULL), NULL at the end. No changes meanwhile.
 */
void *htab__next(const struct htab *h, size_t *pos, uintptr_t *key);

/* A 64-bit mix of one or two integers, for callers' hashes. */
static inline uint64_t htab_hash2(uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ULL) ^ (b + 0x632be59bd9b4e019ULL);

	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ULL;
	return h ^ (h >> 32);
}

/* FNV-1a's offset basis: the hash of no bytes, where htab_hash_str() starts. */
#define HTAB_STR_SEED 0xcbf29ce484222325ULL

/*
 * FNV-1a over the bytes of NUL-terminated @s, going on from @h
 * (HTAB_STR_SEED for the first string of a key), for callers' hashes of
 * strings.
 */
static inline uint64_t htab_hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

#endif /* HEAPSNOOP_HTAB_H */
