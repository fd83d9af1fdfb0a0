/* SPDX-License-Identifier: MIT */
/*
 * profbuild.h - a pprof profile (github.com/google/pprof proto/profile.proto,
 * vendored beside it as proto/profile.proto) built up piece by piece and
 * written gzip-compressed, as the format requires on disk. The messages are
 * protobuf-c's, generated from the official .proto at build time; this file
 * only interns: each string, function, mapping and location once, with the
 * ids the format wants (strings by index, string 0 ""; the others from 1).
 *
 * It knows nothing of heapsnoop: pprof.c fills it from heapdecode's view.
 */
#ifndef HEAPDECODE_PROFBUILD_H
#define HEAPDECODE_PROFBUILD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct profbuild;

/* A sample type: ["inuse_space", "bytes"]. */
struct prof_type {
	const char *type, *unit;
};

/* One Line of a Location: a function (name, source file) and its line. */
struct prof_line {
	const char *func;	/* never NULL */
	const char *file;	/* NULL: unknown */
	int64_t line;		/* 0: unknown */
};

/* A sample's label: a string (@str) or, @str NULL, a number. */
struct prof_label {
	const char *key;
	const char *str;
	int64_t num;
};

/*
 * An empty profile whose samples have @ntypes values of @types (copied),
 * @default_type among them the one viewers show first. NULL: no memory.
 */
struct profbuild *profbuild__new(const struct prof_type *types, size_t ntypes,
				 const char *default_type);
void profbuild__free(struct profbuild *b);

/*
 * The Mapping of memory [@start, @limit) at file offset @offset of @path
 * (build ID @build_id in hex, NULL or "-": none), interned by @key (any
 * pointer that identifies it). Returns its id (>= 1), or 0: no memory.
 */
uint64_t profbuild__mapping(struct profbuild *b, const void *key, uint64_t start,
			    uint64_t limit, uint64_t offset, const char *path,
			    const char *build_id);

/*
 * Make mapping @id (from profbuild__mapping) the profile's first, the
 * one pprof calls the main binary ("File:"); by default the first made.
 */
void profbuild__main_mapping(struct profbuild *b, uint64_t id);

/* The id of the Location of @addr in process @pid, if made (0: not yet). */
uint64_t profbuild__find_location(const struct profbuild *b, uint32_t pid, uint64_t addr);

/*
 * Make the Location of @addr in process @pid, in mapping @mapping_id (0:
 * none), with @nlines lines, innermost inlined function first and the
 * function they were inlined into last (the format's order). Functions
 * are interned by name and file. Returns its id (>= 1), or 0: no memory.
 */
uint64_t profbuild__location(struct profbuild *b, uint32_t pid, uint64_t addr,
			     uint64_t mapping_id, const struct prof_line *lines, size_t nlines);

/*
 * A Sample: @nlocs location ids, leaf first; as many @values as the
 * profile has types; @nlabels labels. Returns 0 or -ENOMEM.
 */
int profbuild__sample(struct profbuild *b, const uint64_t *locs, size_t nlocs,
		      const int64_t *values, const struct prof_label *labels, size_t nlabels);

/*
 * Serialize the profile (collected at @time_ns since the epoch, 0:
 * unknown, with @comment, NULL: none) and write it gzip-compressed to
 * @out. Returns 0, -ENOMEM, or -EIO if writing failed.
 */
int profbuild__write(struct profbuild *b, FILE *out, int64_t time_ns, const char *comment);

#endif /* HEAPDECODE_PROFBUILD_H */
