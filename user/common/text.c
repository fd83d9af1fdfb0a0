// SPDX-License-Identifier: MIT
/* text.c - build IDs in hex, file names of paths (see text.h). */
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
