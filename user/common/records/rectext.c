// SPDX-License-Identifier: MIT
/*
 * rectext.c - the frame and jit records (see records.h; grammar:
 * docs/OUTPUT.md): frames that are not native code, an interpreter's frame
 * by its synthetic address and a range of JIT code, their texts escaped
 * (printable ASCII as it is, any other byte %XX) and taken back.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "records.h"
#include "records_int.h"

/* --- frame, jit: frames that are not native code ------------------------- */

static const char hexdig[] = "0123456789ABCDEF";

/* A text byte written as it is: printable ASCII but '%' (and no blank). */
static bool text_plain(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '%';
}

/* " NAME=" and @s escaped: "-" for none, "%2D" for "-" itself. */
static int write_text(FILE *out, const char *name, const char *s)
{
	if (fprintf(out, " %s=", name) < 0)
		return -EIO;
	if (!s || !*s)
		return fputc('-', out) == EOF ? -EIO : 0;
	if (!strcmp(s, "-"))
		return fputs("%2D", out) == EOF ? -EIO : 0;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (text_plain(*c) ? putc(*c, out) == EOF :
		    fprintf(out, "%%%c%c", hexdig[*c >> 4], hexdig[*c & 15]) < 0)
			return -EIO;
	}
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * An escaped text at @p into @t: printable ASCII up to a blank or the end,
 * each '%' two hex digits but "%00", at most @max bytes decoded. Returns
 * the characters taken, or -EINVAL.
 */
static int parse_text(const char *p, size_t max, struct rec_text *t)
{
	size_t i = 0, bytes = 0;

	while (p[i] > 0x20 && p[i] < 0x7f) {
		if (p[i] == '%') {
			if (hexval(p[i + 1]) < 0 || hexval(p[i + 2]) < 0 ||
			    (p[i + 1] == '0' && p[i + 2] == '0'))
				return -EINVAL;
			i += 2;
		}
		i++;
		bytes++;
	}
	if (!i || bytes > max)
		return -EINVAL;
	*t = (struct rec_text){ p, i };
	return (int)i;
}

int records__text(const struct rec_text *t, char *out, size_t cap)
{
	size_t n = 0, len = t->len == 1 && t->s[0] == '-' ? 0 : t->len;

	for (size_t i = 0; i < len; i++, n++) {
		if (n + 1 >= cap)
			return -ENOSPC;
		if (t->s[i] == '%') {
			out[n] = (char)(hexval(t->s[i + 1]) << 4 | hexval(t->s[i + 2]));
			i += 2;
		} else {
			out[n] = t->s[i];
		}
	}
	if (!cap)
		return -ENOSPC;
	out[n] = '\0';
	return (int)n;
}

/*
 * An interpreter's name: [a-z][a-z0-9_]*, at most REC_KIND_MAX; not "jit"
 * (JIT code is named by `jit` records, its kind in every report).
 */
static bool kind_ok(const char *k)
{
	size_t n = strlen(k);

	if (!n || n > REC_KIND_MAX || !islower((unsigned char)k[0]) || !strcmp(k, "jit"))
		return false;
	return strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* A text the grammar holds: at most @max bytes (none is "-"). */
static bool text_ok(const char *s, size_t max)
{
	return !s || strlen(s) <= max;
}

int rec_check_frame(const struct record *r)
{
	if (!rec_is_frame_addr(r->addr) || !kind_ok(r->kind) ||
	    !text_ok(r->file, REC_FILE_MAX) || !text_ok(r->function, REC_NAME_MAX))
		return -EINVAL;
	return 0;
}

int rec_write_frame(FILE *out, const struct record *r)
{
	if (fprintf(out, "frame pid=%d addr=%#" PRIx64 " kind=%s line=%" PRIu32, r->pid, r->addr,
		    r->kind, r->line) < 0 || write_text(out, "file", r->file) ||
	    write_text(out, "function", r->function))
		return -EIO;
	return fputc('\n', out) == EOF ? -EIO : 0;
}

/* The end of a record's last text: the end of the line, or a blank. */
static bool at_end(const char *p)
{
	return !*p || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n';
}

int rec_parse_frame(const char *p, struct record *r)
{
	unsigned long long addr;
	int n = 0, k;

	if (sscanf(p, "pid=%d addr=%llx kind=%15[a-z0-9_] line=%n", &r->pid, &addr, r->kind,
		   &n) < 3 || !n || !kind_ok(r->kind) || !rec_is_frame_addr(addr))
		return -EINVAL;
	r->addr = addr;
	p += n;
	if ((k = rec_parse_u32(p, &r->line)) < 0 || strncmp(p += k, " file=", 6))
		return -EINVAL;
	if ((k = parse_text(p += 6, REC_FILE_MAX, &r->file_esc)) < 0 ||
	    strncmp(p += k, " function=", 10))
		return -EINVAL;
	if ((k = parse_text(p += 10, REC_NAME_MAX, &r->function_esc)) < 0 || !at_end(p + k))
		return -EINVAL;
	return 0;
}

/* A JIT range: user-space code, below the synthetic frames' addresses. */
static bool jit_range_ok(uint64_t start, uint64_t end)
{
	return start < end && end <= REC_FRAME_BASE;
}

/* A jit record's code=: where the function's code starts, the range in it (0: none). */
static bool jit_code_ok(uint64_t code, uint64_t start)
{
	return code <= start;
}

/* Has a jit record a source line to write (line= file=)? */
static bool jit_has_line(const struct record *r)
{
	return r->line || (r->file && *r->file);
}

int rec_check_jit(const struct record *r)
{
	return jit_range_ok(r->start, r->end) && jit_code_ok(r->addr, r->start) &&
	       text_ok(r->function, REC_NAME_MAX) && text_ok(r->file, REC_FILE_MAX) ? 0 : -EINVAL;
}

int rec_write_jit(FILE *out, const struct record *r)
{
	if (fprintf(out, "jit pid=%d start=%#" PRIx64 " end=%#" PRIx64, r->pid, r->start,
		    r->end) < 0 || write_text(out, "name", r->function))
		return -EIO;
	if (r->addr && r->addr != r->start && fprintf(out, " code=%#" PRIx64, r->addr) < 0)
		return -EIO;
	if (jit_has_line(r) && (fprintf(out, " line=%" PRIu32, r->line) < 0 ||
				write_text(out, "file", r->file)))
		return -EIO;
	return fputc('\n', out) == EOF ? -EIO : 0;
}

/*
 * The fields after name= that a later writer added: code=, then line=
 * and file= together; a reader older than them stops at the name (a
 * blank ends it), so they are added at the end, each optional.
 */
int rec_parse_jit(const char *p, struct record *r)
{
	unsigned long long s, e, c;
	int n = 0, k;

	if (sscanf(p, "pid=%d start=%llx end=%llx name=%n", &r->pid, &s, &e, &n) < 3 || !n ||
	    !jit_range_ok(s, e))
		return -EINVAL;
	r->start = s;
	r->end = e;
	r->addr = 0;
	r->line = 0;
	r->file_esc = (struct rec_text){ "-", 1 };
	if ((k = parse_text(p += n, REC_NAME_MAX, &r->function_esc)) < 0)
		return -EINVAL;
	p += k;
	if (!strncmp(p, " code=0x", 8)) {
		n = 0;
		if (sscanf(p, " code=%llx%n", &c, &n) < 1 || !n || !jit_code_ok(c, s))
			return -EINVAL;
		r->addr = c == s ? 0 : c;	/* its own start: as if not written */
		p += n;
	}
	if (!strncmp(p, " line=", 6)) {
		if ((k = rec_parse_u32(p += 6, &r->line)) < 0 || strncmp(p += k, " file=", 6))
			return -EINVAL;
		if ((k = parse_text(p += 6, REC_FILE_MAX, &r->file_esc)) < 0)
			return -EINVAL;
		p += k;
	}
	return at_end(p) ? 0 : -EINVAL;
}
