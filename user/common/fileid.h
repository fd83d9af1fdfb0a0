/* SPDX-License-Identifier: MIT */
/*
 * fileid.h - what is remembered per file, by the file's identity (st_dev,
 * st_ino) rather than its path: a library mapped by a thousand processes,
 * through as many paths and mount namespaces, is one file, read once.
 * Holds the build IDs (buildid.c) and the CFI modules (cfi.c).
 */
#ifndef HEAPSNOOP_FILEID_H
#define HEAPSNOOP_FILEID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fileid_map;

/* An empty map; NULL if out of memory. */
struct fileid_map *fileid_map__new(void);

/* Free the map, calling @free_value (if not NULL) on every value. */
void fileid_map__free(struct fileid_map *m, void (*free_value)(void *value));

/* The value remembered for file (@dev, @ino), or NULL. */
void *fileid_map__find(const struct fileid_map *m, uint64_t dev, uint64_t ino);

/*
 * Remember @value (not NULL) for file (@dev, @ino), not in the map yet.
 * Returns 0 or -ENOMEM (nothing remembered; @value stays the caller's).
 */
int fileid_map__add(struct fileid_map *m, uint64_t dev, uint64_t ino, void *value);

/* Files remembered. */
size_t fileid_map__count(const struct fileid_map *m);

/*
 * Forget every file whose value @drop says so (true), @free_value called
 * on each value forgotten. Returns how many were; -ENOMEM (nothing
 * forgotten) if the list of them could not be made.
 */
int fileid_map__prune(struct fileid_map *m, bool (*drop)(void *value, void *ctx), void *ctx,
		      void (*free_value)(void *value));

#endif /* HEAPSNOOP_FILEID_H */
