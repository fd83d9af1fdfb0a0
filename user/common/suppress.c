// SPDX-License-Identifier: MIT
/*
 * suppress.c - LeakSanitizer's suppression files (see suppress.h): the
 * `leak:` lines read, their patterns matched as LSan's TemplateMatch
 * does (`*`, `^`, `$`; unanchored patterns match anywhere).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "suppress.h"

struct suppress {
	char **pat;
	size_t n;
};

/* Does @pat (no anchors left, `*` wildcards) match all of @t? */
static bool glob_all(const char *pat, const char *t)
{
	const char *star = NULL, *back = NULL;

	while (*t) {
		if (*pat == '*') {
			star = ++pat;
			back = t;
		} else if (*pat && *pat == *t) {
			pat++;
			t++;
		} else if (star) {
			pat = star;
			t = ++back;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

bool suppress__template_match(const char *pat, const char *text)
{
	size_t len = strlen(pat);
	bool start = pat[0] == '^', end = len > (size_t)start && pat[len - 1] == '$';
	char buf[1024];

	if (!text)
		return false;
	/* Unanchored: "*pat*", as a substring anywhere. */
	snprintf(buf, sizeof(buf), "%s%.*s%s", start ? "" : "*",
		 (int)(len - start - end), pat + start, end ? "" : "*");
	return glob_all(buf, text);
}

int suppress__match(const struct suppress *s, const struct sym_frame *f)
{
	for (size_t i = 0; i < s->n; i++) {
		const char *p = s->pat[i];

		if ((f->status == SYM_OK && suppress__template_match(p, f->func)) ||
		    suppress__template_match(p, f->module) ||
		    suppress__template_match(p, f->file))
			return (int)i;
		for (int k = 0; k < f->ninline; k++)
			if (suppress__template_match(p, f->inl[k].func) ||
			    suppress__template_match(p, f->inl[k].file))
				return (int)i;
	}
	return -1;
}

size_t suppress__count(const struct suppress *s)
{
	return s->n;
}

const char *suppress__pattern(const struct suppress *s, int i)
{
	return s->pat[i];
}

void suppress__free(struct suppress *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->pat[i]);
	free(s->pat);
	free(s);
}

/* Line @line (trimmed) into @s; -EINVAL if it is not one LSan reads. */
static int take_line(struct suppress *s, char *line)
{
	char **v;

	if (!*line || *line == '#')
		return 0;
	if (strncmp(line, "leak:", 5) || !line[5])
		return -EINVAL;
	v = realloc(s->pat, (s->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->pat = v;
	if (strlen(line + 5) >= 1000 || !(v[s->n] = strdup(line + 5)))
		return strlen(line + 5) >= 1000 ? -EINVAL : -ENOMEM;
	s->n++;
	return 0;
}

struct suppress *suppress__load(const char *path)
{
	struct suppress *s = calloc(1, sizeof(*s));
	FILE *f = s ? fopen(path, "r") : NULL;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int err = s ? 0 : -ENOMEM;

	if (s && !f) {
		elog("--suppressions %s: %s", path, strerror(errno));
		free(s);
		return NULL;
	}
	while (!err && f && (n = getline(&line, &cap, f)) >= 0) {
		char *p = line;

		lineno++;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' ||
			     line[n - 1] == '\t'))
			line[--n] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		err = take_line(s, p);
		if (err == -EINVAL)
			elog("%s:%zu: not a suppression: give `leak:PATTERN` (LeakSanitizer's "
			     "format; * is any text, ^ and $ anchor) or a # comment", path, lineno);
	}
	if (!err && f && ferror(f)) {
		elog("--suppressions %s: %s", path, strerror(errno));
		err = -EIO;
	}
	if (err == -ENOMEM)
		elog("out of memory");
	free(line);
	if (f)
		fclose(f);
	if (err) {
		suppress__free(s);
		return NULL;
	}
	return s;
}
