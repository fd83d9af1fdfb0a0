// SPDX-License-Identifier: MIT
/* buildid.c - build IDs by file identity (see buildid.h; fileid.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buildid.h"
#include "fileid.h"
#include "elffile.h"

struct buildid_cache {
	struct fileid_map *files;	/* (dev, ino) -> malloc'ed hex */
};

struct buildid_cache *buildid_cache__new(void)
{
	struct buildid_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->files = fileid_map__new();
	if (!c->files) {
		free(c);
		return NULL;
	}
	return c;
}

void buildid_cache__free(struct buildid_cache *c)
{
	if (!c)
		return;
	fileid_map__free(c->files, free);
	free(c);
}

static bool read_id(const char *path, char *out)
{
	uint8_t id[BUILD_ID_MAX];
	struct elf_file *ef;
	int len;

	if (elf_file__open(path, &ef))
		return false;
	len = elf_file__build_id(ef, id, sizeof(id));
	elf_file__close(ef);
	build_id_hex(id, len, out);
	return true;
}

int buildid_cache__find(const struct buildid_cache *c, uint64_t dev, uint64_t ino, char *out)
{
	const char *hex = dev ? fileid_map__find(c->files, dev, ino) : NULL;

	if (!hex)
		return -ENOENT;
	strcpy(out, hex);
	return 0;
}

int buildid_cache__read(struct buildid_cache *c, uint64_t dev, uint64_t ino, const char *path,
			char *out)
{
	char *hex;

	strcpy(out, "-");
	if (!read_id(path, out))
		return -ENOENT;
	if (!dev || fileid_map__find(c->files, dev, ino))
		return 0;
	/* A cache that cannot grow just stops remembering. */
	hex = strdup(out);
	if (hex && fileid_map__add(c->files, dev, ino, hex))
		free(hex);
	return 0;
}
