// SPDX-License-Identifier: MIT
/*
 * suppress.c - LeakSanitizer's suppression files (see suppress.h): the
 * `leak:` lines read, their patterns matched as LSan's TemplateMatch
 * does (`*`, `^`, `$`; unanchored patterns match anywhere); and the
 * built-in list of the C runtime's own allocations, from LeakSanitizer's
 * (sanitizer_common's kStdSuppressions, lsan_common_linux.cpp's ld.so
 * rule) and valgrind's default glibc suppressions (glibc-2.X.supp).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "suppress.h"
#include "text.h"

/* A built-in pattern and the kind of allocation it keeps (rt_whats[]). */
struct rt_entry {
	const char *pat;
	unsigned int what;
};

struct suppress {
	char **pat;
	size_t n;
	const struct rt_entry *rt;	/* the built-in list: these instead */
};

enum { RT_STDIO, RT_TLS, RT_THREAD, RT_LOADER, RT_LOCALE, RT_TZ, RT_NSS, RT_ICONV,
       RT_ATEXIT, RT__N };

static const char *const rt_whats[RT__N] = {
	[RT_STDIO] = "stdio buffer", [RT_TLS] = "thread-local storage",
	[RT_THREAD] = "thread exit", [RT_LOADER] = "dynamic loader",
	[RT_LOCALE] = "locale", [RT_TZ] = "time zone", [RT_NSS] = "NSS",
	[RT_ICONV] = "iconv modules", [RT_ATEXIT] = "atexit table",
};

/*
 * Function names, each kept for the process's lifetime by what calls
 * it. Not here: fopen's FILE (__fopen_internal) and iconv_open's
 * descriptor, which the program closes; getline's and strdup's blocks.
 */
static const struct rt_entry rt_list[] = {
	/* The buffer of stdout, stdin, stderr, allocated at its first use. */
	{ "^_IO_file_doallocate", RT_STDIO }, { "^_IO_wfile_doallocate", RT_STDIO },
	{ "^_IO_doallocbuf", RT_STDIO }, { "^_IO_wdoallocbuf", RT_STDIO },
	/* Each thread's DTV and TLS blocks (LSan: tls_get_addr). */
	{ "^_dl_allocate_tls", RT_TLS }, { "^allocate_dtv", RT_TLS },
	{ "^_dl_resize_dtv", RT_TLS }, { "^_dl_update_slotinfo", RT_TLS },
	{ "tls_get_addr", RT_TLS }, { "^__cxa_thread_atexit_impl", RT_TLS },
	/* LSan: the unwinder's state pthread_exit leaves. */
	{ "pthread_exit", RT_THREAD },
	/* ld.so's link maps, search paths, scopes; dlopen's (LSan: all of ld.so's). */
	{ "^_dl_", RT_LOADER }, { "^dl_open_worker", RT_LOADER }, { "^dl_main", RT_LOADER },
	{ "^fillin_rpath", RT_LOADER }, { "^decompose_rpath", RT_LOADER },
	{ "^expand_dynamic_string_token", RT_LOADER }, { "^open_path", RT_LOADER },
	{ "^add_to_global", RT_LOADER }, { "^_dlerror_run", RT_LOADER },
	/* setlocale's and gettext's loaded data. */
	{ "^_nl_", RT_LOCALE }, { "^setlocale", RT_LOCALE }, { "^new_composite_name", RT_LOCALE },
	{ "^__tzfile_read", RT_TZ }, { "^__tzset_parse_tz", RT_TZ },
	{ "^tzset_internal", RT_TZ }, { "^__tzstring", RT_TZ },
	{ "^__nss_", RT_NSS }, { "^nss_", RT_NSS },
	{ "^__gconv_load_cache", RT_ICONV }, { "^__gconv_read_conf", RT_ICONV },
	{ "^__gconv_find_shlib", RT_ICONV },
	{ "^__new_exitfn", RT_ATEXIT },
};

static const struct suppress rt_suppress = {
	.n = sizeof(rt_list) / sizeof(rt_list[0]), .rt = rt_list,
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

/* The first built-in pattern @f's function (or an inlined one) matches, or -1. */
static int rt_match(const struct sym_frame *f)
{
	for (size_t i = 0; i < rt_suppress.n; i++) {
		const char *p = rt_list[i].pat;

		if (f->status == SYM_OK && suppress__template_match(p, f->func))
			return (int)i;
		for (int k = 0; k < f->ninline; k++)
			if (suppress__template_match(p, f->inl[k].func))
				return (int)i;
	}
	return -1;
}

int suppress__match(const struct suppress *s, const struct sym_frame *f)
{
	if (s->rt)
		return suppress__runtime_module(f->module) ? rt_match(f) : -1;
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

int suppress__stack(const struct suppress *s, const struct stack *st, suppress_lookup_fn lookup,
		    void *ctx)
{
	struct sym_frame f;
	int i;

	for (uint32_t k = 0; k < st->depth; k++) {
		lookup(ctx, st->pid, st->frames[k], &f);
		if (s->rt && !suppress__runtime_module(f.module))
			return -1;	/* the program's code: what it asked for is its own */
		if ((i = suppress__match(s, &f)) >= 0)
			return i;
	}
	return -1;
}

const struct suppress *suppress__runtime(void)
{
	return &rt_suppress;
}

bool suppress__runtime_module(const char *path)
{
	static const char *const names[] = {
		"libc.so.", "libc-2.", "ld-linux", "ld-2.", "libpthread.so.", "libpthread-",
		"libdl.so.", "libdl-",
	};
	const char *base = path ? strrchr(path, '/') : NULL;

	if (!path)
		return false;
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(base, names[i], strlen(names[i])))
			return true;
	return false;
}

const char *suppress__what(const struct suppress *s, int i)
{
	return s->rt && i >= 0 && (size_t)i < s->n ? rt_whats[s->rt[i].what] : NULL;
}

void suppress__tally_add(struct suppress_tally *t, int i, uint64_t bytes, uint64_t count)
{
	t->bytes += bytes;
	t->count += count;
	if (i >= 0 && (size_t)i < rt_suppress.n)
		t->whats |= 1u << rt_list[i].what;
}

const char *suppress__tally_text(const struct suppress_tally *t, char *buf, size_t len)
{
	char size[32], exact[32] = "";
	int n;

	/* The exact bytes beside a rounded size: a gate's reader may want them. */
	if (t->bytes >= 1024)
		snprintf(exact, sizeof(exact), " (%" PRIu64 " bytes)", t->bytes);
	n = snprintf(buf, len, "%s%s in %" PRIu64 " allocation%s", text_size(t->bytes, false, size),
		     exact, t->count, t->count == 1 ? "" : "s");
	const char *sep = " (";

	for (unsigned int w = 0; w < RT__N && n >= 0 && (size_t)n < len; w++) {
		if (!(t->whats & (1u << w)))
			continue;
		n += snprintf(buf + n, len - (size_t)n, "%s%s", sep, rt_whats[w]);
		sep = ", ";
	}
	if (*sep == ',' && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ")");
	return buf;
}

size_t suppress__count(const struct suppress *s)
{
	return s->n;
}

const char *suppress__pattern(const struct suppress *s, int i)
{
	if (s->rt)
		return s->rt[i].pat;
	return s->pat[i];
}

void suppress__free(struct suppress *s)
{
	if (!s || s->rt)
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
