// SPDX-License-Identifier: MIT
/*
 * profbuild.c - a pprof profile built and written (see profbuild.h). The
 * messages are those protoc-c generated from the official profile.proto;
 * every one, array and string is malloc'ed, so protobuf-c's own
 * free_unpacked frees the whole tree. The gzip wrapper is zlib's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "htab.h"
#include "profbuild.h"
#include "profile.pb-c.h"
#include "text.h"

/* A growing array of pointers: what protobuf-c's repeated fields are. */
struct pvec {
	void **v;
	size_t n, cap;
};

struct profbuild {
	Perftools__Profiles__Profile *p;
	struct pvec types, samples, mappings, locations, functions, strings;
	struct htab *str_ids;	/* string -> index + 1 */
	struct htab *func_ids;	/* name index << 32 | file index -> id */
	struct htab *map_ids;	/* caller's key -> id */
	struct htab *loc_ids;	/* struct loc_key * -> id */
	struct pvec loc_keys;
};

struct loc_key {
	uint32_t pid;
	uint64_t addr;
};

static int pvec_push(struct pvec *p, void *x)
{
	if (!x)
		return -ENOMEM;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		void **v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = x;
	return 0;
}

static bool str_equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	(void)ctx;
	return !strcmp((const char *)stored, (const char *)probe);
}

static bool loc_equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	const struct loc_key *a = (const void *)stored, *b = (const void *)probe;

	(void)ctx;
	return a->pid == b->pid && a->addr == b->addr;
}

/* FNV-1a, 64 bits. */
static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/*
 * The index of @raw in the string table, added if new; -ENOMEM. It is
 * kept as the reports print it (text.h's text_printable()): proto3's
 * strings must be UTF-8, a path may be any bytes, and a strict reader
 * (Python's protobuf, Go's) refuses the whole profile over one.
 */
static int64_t string_id(struct profbuild *b, const char *raw)
{
	char *s = text_printable(raw), *copy;
	uint64_t h;
	void *v;

	if (!s)
		return -ENOMEM;
	h = str_hash(s);
	v = htab__find(b->str_ids, h, (uintptr_t)s);
	if (v) {
		if (s != raw)
			free(s);
		return (int64_t)(uintptr_t)v - 1;
	}
	copy = s != raw ? s : strdup(s);
	if (!copy)
		return -ENOMEM;
	if (pvec_push(&b->strings, copy)) {
		free(copy);
		return -ENOMEM;
	}
	if (htab__add(b->str_ids, h, (uintptr_t)copy, (void *)(uintptr_t)b->strings.n))
		return -ENOMEM;	/* the string stays in the table, unfound */
	return (int64_t)b->strings.n - 1;
}

/* The repeated fields point at the vectors' arrays (after any growth). */
static void sync_profile(struct profbuild *b)
{
	Perftools__Profiles__Profile *p = b->p;

	p->n_sample_type = b->types.n;
	p->sample_type = (Perftools__Profiles__ValueType **)b->types.v;
	p->n_sample = b->samples.n;
	p->sample = (Perftools__Profiles__Sample **)b->samples.v;
	p->n_mapping = b->mappings.n;
	p->mapping = (Perftools__Profiles__Mapping **)b->mappings.v;
	p->n_location = b->locations.n;
	p->location = (Perftools__Profiles__Location **)b->locations.v;
	p->n_function = b->functions.n;
	p->function = (Perftools__Profiles__Function **)b->functions.v;
	p->n_string_table = b->strings.n;
	p->string_table = (char **)b->strings.v;
}

static Perftools__Profiles__ValueType *value_type(struct profbuild *b, const char *type,
						  const char *unit)
{
	Perftools__Profiles__ValueType *vt = malloc(sizeof(*vt));

	if (!vt)
		return NULL;
	perftools__profiles__value_type__init(vt);
	vt->type = string_id(b, type);
	vt->unit = string_id(b, unit);
	if (vt->type < 0 || vt->unit < 0) {
		free(vt);
		return NULL;
	}
	return vt;
}

struct profbuild *profbuild__new(const struct prof_type *types, size_t ntypes,
				 const char *default_type)
{
	struct profbuild *b = calloc(1, sizeof(*b));
	int err = -ENOMEM;

	if (!b)
		return NULL;
	b->p = malloc(sizeof(*b->p));
	if (b->p)
		perftools__profiles__profile__init(b->p);
	b->str_ids = htab__new(1024, str_equal, NULL);
	b->func_ids = htab__new(1024, NULL, NULL);
	b->map_ids = htab__new(64, NULL, NULL);
	b->loc_ids = htab__new(1024, loc_equal, NULL);
	if (b->p && b->str_ids && b->func_ids && b->map_ids && b->loc_ids) {
		err = string_id(b, "") < 0;	/* string 0 is "" */
		for (size_t i = 0; !err && i < ntypes; i++)
			err = pvec_push(&b->types, value_type(b, types[i].type, types[i].unit));
		b->p->period_type = err ? NULL : value_type(b, "space", "bytes");
		b->p->period = 1;
		b->p->default_sample_type = err ? 0 : string_id(b, default_type);
	}
	if (err || !b->p->period_type || b->p->default_sample_type < 0) {
		profbuild__free(b);
		return NULL;
	}
	return b;
}

void profbuild__free(struct profbuild *b)
{
	if (!b)
		return;
	if (b->p) {
		sync_profile(b);
		perftools__profiles__profile__free_unpacked(b->p, NULL);
	} else {
		free(b->types.v);
	}
	htab__free(b->str_ids);
	htab__free(b->func_ids);
	htab__free(b->map_ids);
	htab__free(b->loc_ids);
	for (size_t i = 0; i < b->loc_keys.n; i++)
		free(b->loc_keys.v[i]);
	free(b->loc_keys.v);
	free(b);
}

uint64_t profbuild__mapping(struct profbuild *b, const void *key, uint64_t start,
			    uint64_t limit, uint64_t offset, const char *path,
			    const char *build_id)
{
	uint64_t h = htab_hash2((uintptr_t)key, 1);
	void *v = htab__find(b->map_ids, h, (uintptr_t)key);
	Perftools__Profiles__Mapping *m;

	if (v)
		return (uint64_t)(uintptr_t)v;
	m = malloc(sizeof(*m));
	if (!m)
		return 0;
	perftools__profiles__mapping__init(m);
	m->id = b->mappings.n + 1;
	m->memory_start = start;
	m->memory_limit = limit;
	m->file_offset = offset;
	m->filename = string_id(b, path ? path : "");
	m->build_id = string_id(b, build_id && strcmp(build_id, "-") ? build_id : "");
	/* Every location comes with its lines: pprof must not look for binaries. */
	m->has_functions = m->has_filenames = m->has_line_numbers = m->has_inline_frames = true;
	if (m->filename < 0 || m->build_id < 0 || pvec_push(&b->mappings, m)) {
		free(m);
		return 0;
	}
	if (htab__add(b->map_ids, h, (uintptr_t)key, (void *)(uintptr_t)m->id))
		return 0;
	return m->id;
}

void profbuild__main_mapping(struct profbuild *b, uint64_t id)
{
	void *first;

	/* Ids live in the messages, not in their order: a swap keeps them. */
	if (id < 2 || id > b->mappings.n)
		return;
	first = b->mappings.v[0];
	b->mappings.v[0] = b->mappings.v[id - 1];
	b->mappings.v[id - 1] = first;
}

/* The id of the Function @name in @file (NULL: unknown); 0: no memory. */
static uint64_t function_id(struct profbuild *b, const char *name, const char *file)
{
	int64_t n = string_id(b, name), f = string_id(b, file ? file : "");
	uint64_t key = (uint64_t)n << 32 | (uint64_t)f, h = htab_hash2(key, 2);
	Perftools__Profiles__Function *fn;
	void *v;

	if (n < 0 || f < 0)
		return 0;
	v = htab__find(b->func_ids, h, (uintptr_t)key);
	if (v)
		return (uint64_t)(uintptr_t)v;
	fn = malloc(sizeof(*fn));
	if (!fn)
		return 0;
	perftools__profiles__function__init(fn);
	fn->id = b->functions.n + 1;
	fn->name = fn->system_name = n;
	fn->filename = f;
	if (pvec_push(&b->functions, fn)) {
		free(fn);
		return 0;
	}
	return htab__add(b->func_ids, h, (uintptr_t)key, (void *)(uintptr_t)fn->id) ? 0 : fn->id;
}

uint64_t profbuild__find_location(const struct profbuild *b, uint32_t pid, uint64_t addr)
{
	struct loc_key k = { pid, addr };

	return (uint64_t)(uintptr_t)htab__find(b->loc_ids, htab_hash2(pid, addr), (uintptr_t)&k);
}

/* @nlines Line messages, in a malloc'ed array; NULL: no memory. */
static Perftools__Profiles__Line **make_lines(struct profbuild *b, const struct prof_line *lines,
					      size_t nlines)
{
	Perftools__Profiles__Line **v = calloc(nlines ? nlines : 1, sizeof(*v));

	for (size_t i = 0; v && i < nlines; i++) {
		v[i] = malloc(sizeof(*v[i]));
		if (!v[i])
			goto fail;
		perftools__profiles__line__init(v[i]);
		v[i]->function_id = function_id(b, lines[i].func, lines[i].file);
		v[i]->line = lines[i].line;
		if (!v[i]->function_id)
			goto fail;
	}
	return v;
fail:
	for (size_t i = 0; i < nlines; i++)
		free(v[i]);
	free(v);
	return NULL;
}

uint64_t profbuild__location(struct profbuild *b, uint32_t pid, uint64_t addr,
			     uint64_t mapping_id, const struct prof_line *lines, size_t nlines)
{
	struct loc_key *k = malloc(sizeof(*k));
	Perftools__Profiles__Location *l = malloc(sizeof(*l));

	if (!k || !l || pvec_push(&b->loc_keys, k))
		goto fail;
	*k = (struct loc_key){ pid, addr };
	perftools__profiles__location__init(l);
	l->id = b->locations.n + 1;
	l->mapping_id = mapping_id;
	l->address = addr;
	l->line = make_lines(b, lines, nlines);
	if (!l->line)
		goto fail_key;
	l->n_line = nlines;
	if (pvec_push(&b->locations, l)) {
		perftools__profiles__location__free_unpacked(l, NULL);
		return 0;
	}
	return htab__add(b->loc_ids, htab_hash2(pid, addr), (uintptr_t)k,
			 (void *)(uintptr_t)l->id) ? 0 : l->id;
fail:
	free(k);
fail_key:
	free(l);
	return 0;
}

static Perftools__Profiles__Label *make_label(struct profbuild *b, const struct prof_label *pl)
{
	Perftools__Profiles__Label *l = malloc(sizeof(*l));

	if (!l)
		return NULL;
	perftools__profiles__label__init(l);
	l->key = string_id(b, pl->key);
	if (pl->str)
		l->str = string_id(b, pl->str);
	else
		l->num = pl->num;
	if (l->key < 0 || l->str < 0) {
		free(l);
		return NULL;
	}
	return l;
}

int profbuild__sample(struct profbuild *b, const uint64_t *locs, size_t nlocs,
		      const int64_t *values, const struct prof_label *labels, size_t nlabels)
{
	Perftools__Profiles__Sample *s = malloc(sizeof(*s));

	if (!s)
		return -ENOMEM;
	perftools__profiles__sample__init(s);
	s->location_id = malloc((nlocs ? nlocs : 1) * sizeof(*s->location_id));
	s->value = malloc((b->types.n ? b->types.n : 1) * sizeof(*s->value));
	s->label = calloc(nlabels ? nlabels : 1, sizeof(*s->label));
	if (s->location_id && s->value && s->label) {
		memcpy(s->location_id, locs, nlocs * sizeof(*locs));
		s->n_location_id = nlocs;
		memcpy(s->value, values, b->types.n * sizeof(*values));
		s->n_value = b->types.n;
		for (size_t i = 0; i < nlabels && (s->label[i] = make_label(b, &labels[i])); i++)
			s->n_label++;
		if (s->n_label == nlabels && !pvec_push(&b->samples, s))
			return 0;
	}
	perftools__profiles__sample__free_unpacked(s, NULL);
	return -ENOMEM;
}

/* @len bytes of @buf gzip-compressed to @out; 0, -ENOMEM or -EIO. */
static int write_gzip(const uint8_t *buf, size_t len, FILE *out)
{
	static uint8_t chunk[1 << 16];
	z_stream zs = { .next_in = (uint8_t *)buf, .avail_in = (uInt)len };
	int zerr;

	if (len > UINT32_MAX)
		return -ENOMEM;
	/* 15 + 16: a gzip header and trailer, not zlib's. */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zerr = deflate(&zs, Z_FINISH);
		if (fwrite(chunk, 1, sizeof(chunk) - zs.avail_out, out) !=
		    sizeof(chunk) - zs.avail_out)
			zerr = Z_ERRNO;
	} while (zerr == Z_OK || zerr == Z_BUF_ERROR);
	deflateEnd(&zs);
	if (zerr != Z_STREAM_END)
		return -EIO;
	return fflush(out) == EOF || ferror(out) ? -EIO : 0;
}

int profbuild__write(struct profbuild *b, FILE *out, int64_t time_ns, const char *comment)
{
	int64_t c = comment ? string_id(b, comment) : 0;
	uint8_t *buf;
	size_t len;
	int err;

	if (c < 0)
		return -ENOMEM;
	if (comment) {
		free(b->p->comment);
		b->p->comment = malloc(sizeof(*b->p->comment));
		if (!b->p->comment)
			return -ENOMEM;
		b->p->comment[0] = c;
		b->p->n_comment = 1;
	}
	b->p->time_nanos = time_ns;
	sync_profile(b);
	len = perftools__profiles__profile__get_packed_size(b->p);
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	perftools__profiles__profile__pack(b->p, buf);
	err = write_gzip(buf, len, out);
	free(buf);
	return err;
}
