/* SPDX-License-Identifier: MIT */
/*
 * outguard.h - heapdecode never writes over what the user gives it: an
 * output file (--flamegraph FILE, --pprof FILE, ...) that is one of the
 * run's own inputs, or that holds a heapsnoop log, is refused before
 * anything is read or written (a forgotten output name makes the log the
 * output: `heapdecode --flamegraph leak.log`); and a run with no input
 * named does not wait, silently, on a terminal.
 */
#ifndef HEAPSNOOP_OUTGUARD_H
#define HEAPSNOOP_OUTGUARD_H

/*
 * May @option's output @path be written? Not when it is the same file
 * (device and inode) as one of @files[@nfiles] or @base (NULL: none),
 * and not when it is a regular file whose first 64 KiB hold a heapsnoop
 * or lws record (a line's `heapsnoop: ` or `~m#`) or which starts as a
 * zstd frame (a compressed log). A path that does not exist, or is not a
 * regular file (a FIFO, /dev/null), may be. The file is opened
 * O_NOFOLLOW|O_NONBLOCK and only read. Returns 0, or HD_EXIT_ERROR after
 * saying which file, why, and the command that was probably meant.
 */
int hd_outguard__output(const char *option, const char *path, char *const *files, int nfiles,
			const char *base);

/*
 * With no input file named (@nfiles 0), is standard input a terminal?
 * Then nothing is read: returns HD_EXIT_ERROR after saying how to give
 * a log (a FILE, a pipe, or `-` to read the terminal all the same);
 * else 0.
 */
int hd_outguard__input(int nfiles);

#endif /* HEAPSNOOP_OUTGUARD_H */
