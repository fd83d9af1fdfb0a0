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
 * The remembered build ID of file (@dev, @ino) (st_dev, st_ino) in
 * lower-case hex into @out (BUILD_ID_HEX_SIZE bytes), "-" if the
 * file has none. Returns 0, or -ENOENT if not known (@dev 0: never known).
 */
int buildid_cache__find(const struct buildid_cache *c, uint64_t dev, uint64_t ino, char *out);

/*
 * Read the build ID of @path, which the caller knows to be file (@dev,
 * @ino), into @out as above, and remember it unless @dev is 0.
 * Returns 0; -ENOENT if @path cannot be read as ELF (@out is "-" then).
 */
int buildid_cache__read(struct buildid_cache *c, uint64_t dev, uint64_t ino, const char *path,
			char *out);

#endif /* HEAPSNOOP_BUILDID_H */
