// SPDX-License-Identifier: MIT
/*
 * luaproto.c - a Lua Proto read from its bytes, its lines and chunk (see
 * luaproto.h). The algorithms are Lua's own, written anew over a reader:
 * luaG_getfuncline and getbaseline (5.4 ldebug.c), currentline (5.1
 * ldebug.c), luaO_chunkid (both lobject.c), luaF_getlocalname (lfunc.c).
 * The names from a calling instruction are luacall.c's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/lua/luaproto.h"

/* Lua's LUA_IDSIZE (luaconf.h): the room of a short source, NUL included. */
#define LUA_IDSIZE 60

static uint64_t u64_at(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static int32_t i32_at(const uint8_t *b, size_t off)
{
	int32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* @n elements of @size bytes at @addr, malloc'ed (a zero-sized one too). */
static int read_array(const struct lua_reader *rd, uint64_t addr, size_t n, size_t size,
		      void **out)
{
	void *v = calloc(n ? n : 1, size);
	int err;

	*out = NULL;
	if (!v)
		return -ENOMEM;
	if (n && (err = rd->read(rd->ctx, addr, v, n * size))) {
		free(v);
		return err;
	}
	*out = v;
	return 0;
}

int lua_str__read(const struct lua_reader *rd, uint64_t addr, char **out)
{
	const struct lua_layout *l = rd->l;
	uint8_t h[32];
	uint64_t len;
	uint32_t tag;
	char *s;
	int err;

	*out = NULL;
	if (!addr)
		return -EFAULT;
	err = rd->read(rd->ctx, addr, h, l->s_data);
	if (err)
		return err;
	tag = h[l->l_tt];
	if (l->vm == LUA_VM_54) {
		/* The object's own tag: the variant without the collectable bit. */
		if (tag == (l->tag_shrstr & 0x3f))
			len = h[l->s_shrlen];
		else if (tag == (l->tag_lngstr & 0x3f))
			len = u64_at(h, l->s_len);
		else
			return -ESTALE;
	} else {
		if (tag != l->tag_shrstr)
			return -ESTALE;
		len = u64_at(h, l->s_len);
	}
	if (len > LUA_STR_MAX)
		len = LUA_STR_MAX;
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	err = len ? rd->read(rd->ctx, addr + l->s_data, s, len) : 0;
	if (err) {
		free(s);
		return err;
	}
	s[len] = '\0';
	*out = s;
	return 0;
}

void lua_chunkid(enum lua_vm vm, const char *source, char *out, size_t cap)
{
	size_t len = strlen(source);

	if (!cap)
		return;
	if (source[0] == '=' || source[0] == '@') {
		/* Lua cuts these at LUA_IDSIZE; a file's whole name says more. */
		snprintf(out, cap, "%s", source + 1);
		return;
	}
	if (vm == LUA_VM_51) {
		size_t room = LUA_IDSIZE - sizeof(" [string \"...\"] ");
		size_t n = strcspn(source, "\n\r");

		if (n > room)
			n = room;
		snprintf(out, cap, "[string \"%.*s%s\"]", (int)n, source,
			 source[n] ? "..." : "");
	} else {
		size_t room = LUA_IDSIZE - (sizeof("[string \"") - 1 + 3 + 2) - 1;
		const char *nl = strchr(source, '\n');

		if (len < room && !nl) {
			snprintf(out, cap, "[string \"%s\"]", source);
			return;
		}
		if (nl)
			len = (size_t)(nl - source);
		if (len > room)
			len = room;
		snprintf(out, cap, "[string \"%.*s...\"]", (int)len, source);
	}
}

void lua_proto__fini(struct lua_proto *p)
{
	free(p->chunk);
	free(p->code);
	free(p->lineinfo);
	free(p->lineinfo51);
	free(p->abs);
	for (int i = 0; p->locvars && i < p->sizelocvars; i++)
		free(p->locvars[i].text);
	free(p->locvars);
	for (int i = 0; p->upvaltexts && i < p->sizeupvalues; i++)
		free(p->upvaltexts[i]);
	free(p->upvaltexts);
	free(p->upvalnames);
	for (int i = 0; p->ktexts && i < p->sizek; i++)
		free(p->ktexts[i]);
	free(p->ktexts);
	free(p->ktexts_read);
	free(p->child_nups);
	memset(p, 0, sizeof(*p));
}

/* Sizes a real Proto can have; anything else is not one. */
static bool sane(int n)
{
	return n >= 0 && (unsigned int)n <= LUA_PROTO_MAX_CODE;
}

static int read_names(const struct lua_reader *rd, const uint8_t *h, struct lua_proto *p)
{
	const struct lua_layout *l = rd->l;
	uint8_t *raw;
	int err;

	err = read_array(rd, u64_at(h, l->p_locvars), (size_t)p->sizelocvars, 16, (void **)&raw);
	if (err)
		return err;
	p->locvars = calloc((size_t)p->sizelocvars + 1, sizeof(*p->locvars));
	if (!p->locvars) {
		free(raw);
		return -ENOMEM;
	}
	for (int i = 0; i < p->sizelocvars; i++)
		p->locvars[i] = (struct lua_locvar){ .name = u64_at(raw, i * 16u),
						     .startpc = i32_at(raw, i * 16u + 8),
						     .endpc = i32_at(raw, i * 16u + 12) };
	free(raw);
	err = read_array(rd, u64_at(h, l->p_upvalues), (size_t)p->sizeupvalues,
			 l->upvaldesc_size, (void **)&raw);
	if (err)
		return err;
	p->upvalnames = calloc((size_t)p->sizeupvalues + 1, sizeof(uint64_t));
	p->upvaltexts = calloc((size_t)p->sizeupvalues + 1, sizeof(char *));
	if (!p->upvalnames || !p->upvaltexts) {
		free(raw);
		return -ENOMEM;
	}
	/* 5.4's Upvaldesc and 5.1's TString * both start with the name. */
	for (int i = 0; i < p->sizeupvalues; i++)
		p->upvalnames[i] = u64_at(raw, (size_t)i * l->upvaldesc_size);
	free(raw);
	p->ktexts = calloc((size_t)p->sizek + 1, sizeof(char *));
	p->ktexts_read = calloc((size_t)p->sizek + 1, 1);
	if (!p->ktexts || !p->ktexts_read)
		return -ENOMEM;
	return 0;
}

/* 5.1's symbexec skips an OP_CLOSURE's pseudo-instructions: one per upvalue of the nested Proto. */
static int read_children(const struct lua_reader *rd, const uint8_t *h, struct lua_proto *p)
{
	const struct lua_layout *l = rd->l;
	uint64_t *kids;
	int err;

	p->child_nups = calloc((size_t)p->sizep + 1, 1);
	if (!p->child_nups)
		return -ENOMEM;
	err = read_array(rd, u64_at(h, l->p_p), (size_t)p->sizep, 8, (void **)&kids);
	if (err)
		return err;
	for (int i = 0; i < p->sizep; i++)
		if (rd->read(rd->ctx, kids[i] + l->p_nups, &p->child_nups[i], 1))
			p->child_nups[i] = 0;
	free(kids);
	return 0;
}

int lua_proto__read(const struct lua_reader *rd, uint64_t addr, struct lua_proto *p)
{
	const struct lua_layout *l = rd->l;
	uint8_t h[256];
	char *source = NULL, chunk[LUA_STR_MAX + 32];
	int err;

	memset(p, 0, sizeof(*p));
	if (!addr || l->p_size > sizeof(h))
		return -EFAULT;
	err = rd->read(rd->ctx, addr, h, l->p_size);
	if (err)
		return err;
	if (h[l->l_tt] != l->tag_proto)
		return -ESTALE;
	p->addr = addr;
	p->l = l;
	p->linedefined = i32_at(h, l->p_linedefined);
	p->lastlinedefined = i32_at(h, l->p_lastlinedefined);
	p->sizecode = i32_at(h, l->p_sizecode);
	p->sizelineinfo = i32_at(h, l->p_sizelineinfo);
	p->sizelocvars = i32_at(h, l->p_sizelocvars);
	p->sizeupvalues = i32_at(h, l->p_sizeupvalues);
	p->sizek = i32_at(h, l->p_sizek);
	p->sizep = i32_at(h, l->p_sizep);
	p->sizeabs = l->p_sizeabslineinfo ? i32_at(h, l->p_sizeabslineinfo) : 0;
	p->code_addr = u64_at(h, l->p_code);
	p->k_addr = u64_at(h, l->p_k);
	if (!sane(p->sizecode) || !p->sizecode || !sane(p->sizelineinfo) ||
	    !sane(p->sizelocvars) || !sane(p->sizeupvalues) || !sane(p->sizek) ||
	    !sane(p->sizep) || !sane(p->sizeabs) || p->linedefined < 0) {
		memset(p, 0, sizeof(*p));
		return -ESTALE;
	}
	err = read_array(rd, p->code_addr, (size_t)p->sizecode, 4, (void **)&p->code);
	if (!err && l->vm == LUA_VM_54) {
		err = read_array(rd, u64_at(h, l->p_lineinfo), (size_t)p->sizelineinfo, 1,
				 (void **)&p->lineinfo);
		if (!err)
			err = read_array(rd, u64_at(h, l->p_abslineinfo), (size_t)p->sizeabs,
					 sizeof(*p->abs), (void **)&p->abs);
	} else if (!err) {
		err = read_array(rd, u64_at(h, l->p_lineinfo), (size_t)p->sizelineinfo, 4,
				 (void **)&p->lineinfo51);
	}
	if (!err)
		err = read_names(rd, h, p);
	if (!err && l->vm == LUA_VM_51)
		err = read_children(rd, h, p);
	if (err) {
		lua_proto__fini(p);
		return err;
	}
	/* A Proto without a source (stripped bytecode) is "=?" to Lua. */
	if (lua_str__read(rd, u64_at(h, l->p_source), &source))
		source = NULL;
	lua_chunkid(l->vm, source ? source : "=?", chunk, sizeof(chunk));
	free(source);
	p->chunk = strdup(chunk);
	if (!p->chunk) {
		lua_proto__fini(p);
		return -ENOMEM;
	}
	return 0;
}

int lua_proto__pc(const struct lua_proto *p, uint64_t savedpc)
{
	int64_t pc;

	if (savedpc < p->code_addr || (savedpc - p->code_addr) % 4)
		return -1;
	pc = (int64_t)((savedpc - p->code_addr) / 4) - 1;
	return pc >= 0 && pc < p->sizecode ? (int)pc : -1;
}

int lua_proto__line(const struct lua_proto *p, int pc)
{
	int basepc, line;

	if (pc < 0 || pc >= p->sizecode || pc >= p->sizelineinfo)
		return -1;
	if (p->l->vm == LUA_VM_51)
		return p->lineinfo51[pc];
	/* getbaseline: the absolute line at or before pc, then the deltas. */
	if (!p->sizeabs || pc < p->abs[0].pc) {
		basepc = -1;
		line = p->linedefined;
	} else {
		int i = pc / 128 - 1;	/* MAXIWTHABS */

		if (i < 0)
			i = 0;
		while (i + 1 < p->sizeabs && pc >= p->abs[i + 1].pc)
			i++;
		basepc = p->abs[i].pc;
		line = p->abs[i].line;
	}
	while (basepc++ < pc)
		line += p->lineinfo[basepc];
	return line;
}
