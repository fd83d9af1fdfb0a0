// SPDX-License-Identifier: MIT
/* text.c - build IDs in hex, file names of paths (see text.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

void build_id_hex(const uint8_t *id, int len, char *out)
{
	static const char hex[] = "0123456789abcdef";

	if (len <= 0) {
		strcpy(out, "-");
		return;
	}
	for (int i = 0; i < len; i++) {
		out[2 * i] = hex[id[i] >> 4];
		out[2 * i + 1] = hex[id[i] & 15];
	}
	out[2 * len] = '\0';
}

const char *path_base(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "?";
}

void xml_escape(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t')
				fputc(*s, out);
		}
	}
}

size_t symbol_unversioned_len(const char *name)
{
	const char *at = strchr(name, '@');

	/* "@" alone at the start is no version: a name of its own. */
	return at && at != name ? (size_t)(at - name) : strlen(name);
}

const char *text_size(uint64_t bytes, bool sign, char *buf)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	bool neg = sign && (int64_t)bytes < 0;
	uint64_t b = neg ? -bytes : bytes;
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u)
		snprintf(buf, 32, "%s%.1f %s", neg ? "-" : sign ? "+" : "", v, unit[u]);
	else
		snprintf(buf, 32, "%s%" PRIu64 " bytes", neg ? "-" : sign ? "+" : "", b);
	return buf;
}

void json_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20)
			fprintf(out, "\\u%04x", *c);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

/*
 * The length of the valid UTF-8 sequence at @s (RFC 3629's table: no
 * overlong form, no surrogate, nothing above U+10FFFF) that is not a
 * control character, 0 if there is none: its first byte must be escaped.
 */
static size_t utf8_printable(const unsigned char *s)
{
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f && s[0] != '%';
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	/* C1 controls, U+0080..U+009F: control characters too. */
	return s[0] == 0xc2 && s[1] < 0xa0 ? 0 : n;
}

char *text_printable(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *c = (const unsigned char *)s;
	size_t bad = 0, k;
	char *out, *o;

	for (size_t i = 0; c[i]; i += k ? k : 1)
		if (!(k = utf8_printable(c + i)))
			bad++;
	if (!bad)
		return (char *)s;
	out = o = malloc(strlen(s) + 2 * bad + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; c[i]; i += k ? k : 1) {
		k = utf8_printable(c + i);
		if (k) {
			memcpy(o, c + i, k);
			o += k;
		} else {
			*o++ = '%';
			*o++ = hex[c[i] >> 4];
			*o++ = hex[c[i] & 15];
		}
	}
	*o = '\0';
	return out;
}
