/* SPDX-License-Identifier: MIT */
/*
 * outfile.h - a file both programs write for the user (heapsnoop -o,
 * heapdecode --flamegraph), created safely: never through a symbolic link
 * (O_NOFOLLOW), never inherited by a command (O_CLOEXEC), new files mode
 * 0600 (they hold the traced processes' address layouts), and an existing
 * file left untouched until the run is known to go ahead. heapsnoop's
 * records to a file named *.zst are written zstd-compressed
 * (docs/OUTPUT.md says why the name decides), a whole frame per buffer of
 * text.
 */
#ifndef HEAPSNOOP_OUTFILE_H
#define HEAPSNOOP_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct outfile;

/*
 * Open @path for writing, created 0600 if missing, O_NOFOLLOW|O_CLOEXEC,
 * without truncating it. Returns the file, or NULL after saying why
 * (msg.h: a symbolic link, permissions, ...). @path must outlive it.
 */
struct outfile *outfile__open(const char *path);

/*
 * The same for a file that must be new (O_EXCL: heapsnoop's log named
 * for a terminal, ttylog.h): NULL with errno EEXIST, unsaid, if @path
 * exists (the caller picks another name); closed never started, it is
 * removed.
 */
struct outfile *outfile__create(const char *path);

/*
 * The same, for appending (heapsnoop -A): a new file is created 0600; an
 * existing one keeps its content and its mode (the user chose them), and
 * every write goes to its end (O_APPEND), so runs follow one another.
 */
struct outfile *outfile__open_append(const char *path);

/* Does @path name a zstd file (it ends in ".zst")? */
bool outfile__zstd_name(const char *path);

/* Before outfile__start(): @of is written zstd-compressed. */
void outfile__compress(struct outfile *of);

/*
 * The run goes ahead: truncate a regular file to zero bytes and set its
 * mode to 0600 (the records it gets hold address layouts), unless it was
 * opened to append; other files (a FIFO, /dev/null) are written as they
 * are. Returns the stream to write (one that compresses, for a ".zst"
 * name: each fflush() ends a frame), or NULL after saying why.
 */
FILE *outfile__start(struct outfile *of);

/*
 * Flush and close @of (NULL: nothing). Returns 0, or -errno after saying
 * that writing @path failed. A file never started is left as it was
 * (one outfile__create() made is removed).
 */
int outfile__close(struct outfile *of);

#endif /* HEAPSNOOP_OUTFILE_H */
