// SPDX-License-Identifier: MIT
/*
 * luaglobal.c - package.loaded's functions by name (see luaglobal.h),
 * the depth-first walk of lauxlib.c's findfield(level 2) in lua_next's
 * order, written anew over a reader: the registry's "_LOADED" table, each
 * of its string-keyed values (a function is named by its key; a table is
 * walked one level down, its functions named "key.field").
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "interp/lua/luaglobal.h"

struct name {
	uint64_t key;		/* proto, or C function | 1 (functions are aligned) */
	char *text;
};

struct lua_globals {
	struct htab *names;	/* key -> struct name */
};

/* A table's (string key, value) pairs, its nodes read at once. */
struct node {
	uint64_t key, value;
	uint32_t tag;
};

static int read_nodes(const struct lua_reader *rd, uint64_t table, struct node **out,
		      size_t *n)
{
	const struct lua_layout *l = rd->l;
	uint8_t h[64], *raw;
	uint64_t node;
	unsigned int lsize;
	size_t count, k = 0;
	struct node *v;
	int err;

	*out = NULL;
	*n = 0;
	err = rd->read(rd->ctx, table, h, (size_t)l->t_node + 8);
	if (err)
		return err;
	if (h[l->l_tt] != (l->tag_table & 0x3f))
		return -ESTALE;
	lsize = h[l->t_lsizenode];
	memcpy(&node, h + l->t_node, sizeof(node));
	if (lsize > LUA_GLOBAL_MAX_LSIZENODE)
		return -E2BIG;
	count = (size_t)1 << lsize;
	raw = malloc(count * l->node_size);
	v = calloc(count, sizeof(*v));
	if (!raw || !v) {
		free(raw);
		free(v);
		return -ENOMEM;
	}
	err = rd->read(rd->ctx, node, raw, count * l->node_size);
	for (size_t i = 0; !err && i < count; i++) {
		const uint8_t *nd = raw + i * l->node_size;
		uint8_t ktag = nd[l->node_key_tt], vtag = nd[l->node_val_tt];

		/* An empty slot (a nil variant), or a key that is not a string. */
		if (!(vtag & 0x0f) || (ktag != l->tag_shrstr && ktag != l->tag_lngstr))
			continue;
		memcpy(&v[k].value, nd, 8);
		memcpy(&v[k].key, nd + l->node_key, 8);
		v[k++].tag = vtag;
	}
	free(raw);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = k;
	return 0;
}

/* The function value @value of tag @tag as a key: its proto, or its C function. */
static int func_key(const struct lua_reader *rd, uint32_t tag, uint64_t value, uint64_t *key)
{
	const struct lua_layout *l = rd->l;

	if (tag == l->tag_lcf) {
		*key = value | 1;
		return 0;
	}
	if (tag == l->tag_lua)
		return rd->read(rd->ctx, value + l->lcl_p, key, 8);
	if (tag == l->tag_ccl) {
		int err = rd->read(rd->ctx, value + l->ccl_f, key, 8);

		*key |= 1;
		return err;
	}
	return -ENOENT;
}

static uint64_t key_hash(uint64_t key)
{
	return htab_hash2(key, 0);
}

/* The first name found for a function wins, as findfield's search stops there. */
static int add_name(struct lua_globals *gl, uint64_t key, const char *prefix, const char *field)
{
	struct name *nm;
	size_t len;

	if (htab__find(gl->names, key_hash(key), key))
		return 0;
	if (prefix && !strcmp(prefix, "_G"))
		prefix = NULL;	/* pushglobalfuncname drops "_G." */
	len = (prefix ? strlen(prefix) + 1 : 0) + strlen(field) + 1;
	nm = malloc(sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	nm->key = key;
	nm->text = malloc(len);
	if (!nm->text) {
		free(nm);
		return -ENOMEM;
	}
	strcpy(nm->text, prefix ? prefix : "");
	if (prefix)
		strcat(nm->text, ".");
	strcat(nm->text, field);
	if (htab__add(gl->names, key_hash(key), key, nm)) {
		free(nm->text);
		free(nm);
		return -ENOMEM;
	}
	return 0;
}

/* findfield(@table, @level) naming each function under @prefix. */
static int walk(const struct lua_reader *rd, struct lua_globals *gl, uint64_t table,
		const char *prefix, int level)
{
	struct node *v;
	size_t n;
	int err = read_nodes(rd, table, &v, &n);

	if (err)
		return err == -ENOMEM ? err : 0;
	for (size_t i = 0; i < n && !err; i++) {
		uint64_t fkey;
		char *key;

		if (lua_str__read(rd, v[i].key, &key))
			continue;
		if (!func_key(rd, v[i].tag, v[i].value, &fkey))
			err = add_name(gl, fkey, prefix, key);
		else if (level > 1 && v[i].tag == rd->l->tag_table)
			err = walk(rd, gl, v[i].value, key, level - 1);
		free(key);
	}
	free(v);
	return err;
}

/* The value of string key @name in @table: its tag and value. */
static int table_get(const struct lua_reader *rd, uint64_t table, const char *name,
		     uint32_t *tag, uint64_t *value)
{
	struct node *v;
	size_t n;
	int err = read_nodes(rd, table, &v, &n);

	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < n && err; i++) {
		char *key;

		if (lua_str__read(rd, v[i].key, &key))
			continue;
		if (!strcmp(key, name)) {
			*tag = v[i].tag;
			*value = v[i].value;
			err = 0;
		}
		free(key);
	}
	free(v);
	return err;
}

void lua_globals__free(struct lua_globals *gl)
{
	struct name *nm;
	size_t pos = 0;

	if (!gl)
		return;
	while (gl->names && (nm = htab__next(gl->names, &pos, NULL))) {
		free(nm->text);
		free(nm);
	}
	htab__free(gl->names);
	free(gl);
}

int lua_globals__build(const struct lua_reader *rd, uint64_t g, struct lua_globals **out)
{
	const struct lua_layout *l = rd->l;
	struct lua_globals *gl;
	uint8_t reg[16];
	uint64_t registry, loaded;
	uint32_t tag;
	int err;

	*out = NULL;
	if (l->vm != LUA_VM_54)
		return -ENOTSUP;
	err = rd->read(rd->ctx, g + l->g_registry, reg, sizeof(reg));
	if (err)
		return err;
	if (reg[l->tv_tt] != l->tag_table)
		return -EFAULT;
	memcpy(&registry, reg, 8);
	if (table_get(rd, registry, "_LOADED", &tag, &loaded) || tag != l->tag_table)
		return -EFAULT;
	gl = calloc(1, sizeof(*gl));
	if (!gl)
		return -ENOMEM;
	gl->names = htab__new(256, NULL, NULL);
	if (!gl->names) {
		free(gl);
		return -ENOMEM;
	}
	err = walk(rd, gl, loaded, NULL, 2);
	if (err) {
		lua_globals__free(gl);
		return err;
	}
	*out = gl;
	return 0;
}

const char *lua_globals__name(const struct lua_globals *gl, uint64_t proto, uint64_t cfunc)
{
	uint64_t key = proto ? proto : cfunc | 1;
	const struct name *nm = htab__find(gl->names, key_hash(key), key);

	return nm ? nm->text : NULL;
}

unsigned int lua_globals__count(const struct lua_globals *gl)
{
	return (unsigned int)htab__count(gl->names);
}
