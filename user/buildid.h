/* SPDX-License-Identifier: MIT */
/*
 * buildid.h - the GNU build IDs of mapped files, read once per file and
 * remembered by the file's identity (device, inode), so that a library
 * mapped by a thousand processes is opened once, and a file mapped by a
 * process that has since exited is still named right if any path to the
 * same file is left.
 */
#ifndef HEAPSNOOP_BUILDID_H
#define HEAPSNOOP_BUILDID_H

#include <stddef.h>
#include <stdint.h>

struct buildid_cache;

struct buildid_cache *buildid_cache__new(void);
void buildid_cache__free(struct buildid_cache *c);

/*
 * The build ID of file (@dev, @ino) (st_dev, st_ino) in lower-case hex
 * into @out (2 * ELFSYM_BUILD_ID_MAX + 1 bytes), "-" if the file has none.
 * On a miss, the first of the @n @paths that stat()s as that very file
 * (a /proc/PID/map_files link, /proc/PID/root/PATH, PATH) is read; @dev 0
 * takes the first path that opens, unchecked, and is not remembered.
 * Returns 0; -ENOENT if no path led to the file (@out is "-" then).
 */
int buildid_cache__get(struct buildid_cache *c, uint64_t dev, uint64_t ino,
		       const char *const *paths, size_t n, char *out);

#endif /* HEAPSNOOP_BUILDID_H */
