// SPDX-License-Identifier: MIT
/* buildid.c - build IDs by file identity (see buildid.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buildid.h"
#include "elfsym.h"

struct entry {
	uint64_t dev, ino;	/* ino 0: empty */
	char hex[BUILD_ID_HEX_SIZE];
};

struct buildid_cache {
	struct entry *v;
	size_t mask, count;
};

struct buildid_cache *buildid_cache__new(void)
{
	struct buildid_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->mask = 255;
	c->v = calloc(c->mask + 1, sizeof(*c->v));
	if (!c->v) {
		free(c);
		return NULL;
	}
	return c;
}

void buildid_cache__free(struct buildid_cache *c)
{
	if (!c)
		return;
	free(c->v);
	free(c);
}

static struct entry *slot(const struct buildid_cache *c, uint64_t dev, uint64_t ino)
{
	size_t i = (size_t)(((ino * 0x9e3779b97f4a7c15ULL) ^ dev) >> 17) & c->mask;

	while (c->v[i].ino && (c->v[i].dev != dev || c->v[i].ino != ino))
		i = (i + 1) & c->mask;
	return &c->v[i];
}

static int grow(struct buildid_cache *c)
{
	struct buildid_cache n = { .mask = c->mask * 2 + 1 };

	n.v = calloc(n.mask + 1, sizeof(*n.v));
	if (!n.v)
		return -ENOMEM;
	for (size_t i = 0; i <= c->mask; i++)
		if (c->v[i].ino)
			*slot(&n, c->v[i].dev, c->v[i].ino) = c->v[i];
	free(c->v);
	c->v = n.v;
	c->mask = n.mask;
	return 0;
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
	const struct entry *e = dev ? slot(c, dev, ino) : NULL;

	if (!e || !e->ino)
		return -ENOENT;
	strcpy(out, e->hex);
	return 0;
}

int buildid_cache__read(struct buildid_cache *c, uint64_t dev, uint64_t ino, const char *path,
			char *out)
{
	struct entry *e;

	strcpy(out, "-");
	if (!read_id(path, out))
		return -ENOENT;
	if (!dev)
		return 0;
	/* A table that cannot grow just stops remembering. */
	if ((c->count + 1) * 4 > (c->mask + 1) * 3 && grow(c))
		return 0;
	e = slot(c, dev, ino);
	if (!e->ino) {
		e->dev = dev;
		e->ino = ino;
		strcpy(e->hex, out);
		c->count++;
	}
	return 0;
}
