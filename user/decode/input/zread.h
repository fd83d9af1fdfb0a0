/* SPDX-License-Identifier: MIT */
/*
 * zread.h - a log's file read as the text it holds, whether it is plain
 * or zstd-compressed (heapsnoop -o FILE.zst, docs/OUTPUT.md), told by its
 * first four bytes (a zstd frame's magic number, or a skippable frame's),
 * never by its name: a log piped into heapdecode, or renamed, reads the
 * same. Its frames one after another, as heapsnoop writes them, are one
 * text; a stream that ends inside a frame, or that does not decompress,
 * is said with its name and read as an error after the text before it.
 */
#ifndef HEAPDECODE_ZREAD_H
#define HEAPDECODE_ZREAD_H

#include <stdio.h>

/*
 * The text of @in (named @name in messages, which must outlive it): @in
 * itself, or a stream that decompresses it. Closing the stream returned
 * closes @in too, unless it is stdin. NULL: no memory (said).
 */
FILE *zread__open(FILE *in, const char *name);

#endif /* HEAPDECODE_ZREAD_H */
