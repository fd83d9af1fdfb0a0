// SPDX-License-Identifier: MIT
/*
 * rectree.c - a process's stacks as a tree of frames in record lines (see
 * records.h; grammar: docs/OUTPUT.md, "Stacks as a tree"): the `tree`
 * record that starts one, its `node` records, the `node=` a `live` or
 * `stack` record names its stack by, and the numbers they are made of,
 * written and read by hand: a dump of millions of stacks has millions of
 * these lines, and sscanf() and printf() were most of their cost.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "records.h"
#include "records_int.h"

/* --- numbers -------------------------------------------------------------- */

int rec_parse_u64(const char *p, uint64_t *v)
{
	uint64_t x = 0;
	int i = 0;

	for (; p[i] >= '0' && p[i] <= '9'; i++) {
		unsigned int d = (unsigned int)(p[i] - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	*v = x;
	return i ? i : -EINVAL;
}

int rec_parse_hex(const char *p, uint64_t *v)
{
	uint64_t x = 0;
	int i = 2;

	if (p[0] != '0' || p[1] != 'x')
		return -EINVAL;
	for (;; i++) {
		int c = p[i], d = c >= '0' && c <= '9' ? c - '0' :
				  c >= 'a' && c <= 'f' ? c - 'a' + 10 :
				  c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			break;
		if (i == 18)
			return -EINVAL;	/* past 64 bits */
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return i > 2 ? i : -EINVAL;
}

/* "NAME=" and a decimal number at @p: the characters taken, or -EINVAL. */
static int parse_field(const char *p, const char *name, uint64_t max, uint64_t *v)
{
	size_t n = strlen(name);
	int k;

	if (strncmp(p, name, n) || p[n] != '=')
		return -EINVAL;
	k = rec_parse_u64(p + n + 1, v);
	return k < 0 || *v > max ? -EINVAL : (int)n + 1 + k;
}

/* @v in decimal at @p (20 bytes at most), not NUL-terminated: its length. */
static int put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while (v /= 10);
	for (int i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* @v as "0x..." at @p (18 bytes at most), lower case: its length. */
static int put_hex(char *p, uint64_t v)
{
	static const char dig[] = "0123456789abcdef";
	int n = 1;

	while (n < 16 && v >> (4 * n))
		n++;
	p[0] = '0';
	p[1] = 'x';
	for (int i = 0; i < n; i++)
		p[2 + i] = dig[v >> (4 * (n - 1 - i)) & 15];
	return n + 2;
}

/* --- tree, node ----------------------------------------------------------- */

int rec_check_tree(const struct record *r)
{
	return r->pid >= 0 ? 0 : -EINVAL;
}

int rec_write_tree(FILE *out, const struct record *r)
{
	return fprintf(out, "tree pid=%d nodes=%" PRIu32 "\n", r->pid, r->nodes) < 0 ? -EIO : 0;
}

int rec_parse_tree(const char *p, struct record *r)
{
	uint64_t pid, nodes;
	int n = parse_field(p, "pid", INT_MAX, &pid), k;

	if (n < 0 || p[n] != ' ')
		return -EINVAL;
	k = parse_field(p + n + 1, "nodes", UINT32_MAX, &nodes);
	if (k < 0)
		return -EINVAL;
	r->pid = (int)pid;
	r->nodes = (uint32_t)nodes;
	return 0;
}

int rec_check_node(const struct record *r)
{
	return r->frames && r->nframes && r->nframes <= REC_NODE_MAX_FRAMES && r->level < REC_MAX_DEPTH &&
	       r->pid >= 0 ? 0 : -EINVAL;
}

int rec_write_node(FILE *out, const struct record *r)
{
	char buf[64 + 19 * 16];
	size_t n = 0;

	n += (size_t)snprintf(buf, sizeof(buf), "node pid=%d level=%" PRIu32 " frames=", r->pid,
			      r->level);
	for (uint32_t i = 0; i < r->nframes; i++) {
		if (i)
			buf[n++] = ',';
		n += (size_t)put_hex(buf + n, r->frames[i]);
		/* A line of many frames: written a piece at a time. */
		if (n > sizeof(buf) - 20) {
			if (fwrite(buf, 1, n, out) != n)
				return -EIO;
			n = 0;
		}
	}
	buf[n++] = '\n';
	return fwrite(buf, 1, n, out) == n ? 0 : -EIO;
}

/* The list "0xA,0xB" at @p: how many frames, its length in *@len; 0 if malformed. */
static uint32_t frame_list(const char *p, size_t *len)
{
	uint32_t n = 0;
	size_t i = 0;
	uint64_t v;

	for (;;) {
		int k = rec_parse_hex(p + i, &v);

		if (k < 0 || ++n > REC_NODE_MAX_FRAMES)
			return 0;
		i += (size_t)k;
		if (p[i] != ',')
			break;
		i++;
	}
	*len = i;
	/* Fields after a blank are a later writer's: read past. */
	return p[i] == '\0' || p[i] == ' ' ? n : 0;
}

int rec_parse_node(const char *p, struct record *r)
{
	uint64_t pid, level;
	int n = parse_field(p, "pid", INT_MAX, &pid), k;

	if (n < 0 || p[n] != ' ')
		return -EINVAL;
	p += n + 1;
	k = parse_field(p, "level", REC_MAX_DEPTH - 1, &level);
	if (k < 0 || strncmp(p + k, " frames=", 8))
		return -EINVAL;
	p += k + 8;
	r->pid = (int)pid;
	r->level = (uint32_t)level;
	r->frames_text = p;
	r->nframes = frame_list(p, &r->frames_len);
	return r->nframes ? 0 : -EINVAL;
}

int records__frames(const struct record *r, uint64_t *out, uint32_t cap)
{
	const char *p = r->frames_text;

	if (r->nframes > cap)
		return -ENOSPC;
	for (uint32_t i = 0; i < r->nframes; i++)
		p += rec_parse_hex(p, &out[i]) + 1;	/* checked by the parse */
	return (int)r->nframes;
}

/* --- a live or stack record's node= ---------------------------------------- */

int rec_write_ref(FILE *out, const struct record *r)
{
	char buf[64];
	size_t n = 0;

	if (r->type == REC_LIVE) {
		memcpy(buf, " size=", 6);
		n = 6 + (size_t)put_u64(buf + 6, r->size);
	}
	memcpy(buf + n, " node=", 6);
	n += 6;
	if (r->node == REC_NODE_PREV)
		buf[n++] = '^';
	else
		n += (size_t)put_u64(buf + n, r->node);
	buf[n++] = '\n';
	return fwrite(buf, 1, n, out) == n ? 0 : -EIO;
}

int rec_parse_ref(const char *p, struct record *r)
{
	uint64_t size = 0, node;
	int n = 0, k;

	if (r->type == REC_LIVE) {
		n = parse_field(p, "size", UINT64_MAX, &size);
		if (n < 0 || p[n] != ' ')
			return -EINVAL;
		n++;
	}
	if (!strncmp(p + n, "node=^", 6)) {
		node = REC_NODE_PREV;
		k = 6;
	} else {
		k = parse_field(p + n, "node", UINT32_MAX - 1, &node);
	}
	if (k < 0 || (p[n + k] != '\0' && p[n + k] != ' '))
		return -EINVAL;
	r->has_node = true;
	r->node = (uint32_t)node;
	r->size = size;
	return 0;
}
