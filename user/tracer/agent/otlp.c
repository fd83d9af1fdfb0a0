// SPDX-License-Identifier: MIT
/*
 * otlp.c - the agent's pprof as an OTLP profiles export request (see
 * otlp.h). The pprof is read back with protobuf-c's messages of
 * profile.proto (the builder's own, profbuild.h) and the request built
 * with those protoc-c made of opentelemetry-proto 1.11.0's files: no
 * field number is written here. The pprof's ids become the dictionary's
 * indices (profbuild.h gives them from 1 with none missed; entry 0 is the
 * zero value), so the translation is a copy of its tables plus the
 * stacks, the build IDs' attributes and the resources. Every string is
 * printable UTF-8, as proto3 wants: the pprof's are already (profbuild.c
 * keeps them as the reports print them, text.h), and what is read from
 * /proc here is made so.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <zlib.h>

#include "gitversion.h"
#include "otlp.h"
#include "profile.pb-c.h"
#include "text.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

/* protoc-c's names, shortened. */
#define P(x)	Opentelemetry__Proto__Profiles__V1development__##x
#define PI(x)	opentelemetry__proto__profiles__v1development__##x##__init
#define C(x)	Opentelemetry__Proto__Common__V1__##x
#define CI(x)	opentelemetry__proto__common__v1__##x##__init
typedef Perftools__Profiles__Profile pprof_t;
typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	request_t;
typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse
	response_t;

#define OTLP_PPROF_MAX	(512u << 20)	/* the pprof's bound, unpacked */
#define OTLP_RES_ATTRS	9		/* a Resource's attributes at most */
#define BUILD_ID_KEY	"process.executable.build_id.gnu"

/* What a request's build holds: every allocation, freed at its end. */
struct ox {
	void **v;
	size_t n, cap;
	int err;
};

/* @p freed with @x. 0, or -ENOMEM (@p not taken). */
static int adopt(struct ox *x, void *p)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 256;
		void **v = realloc(x->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		x->v = v;
		x->cap = cap;
	}
	x->v[x->n++] = p;
	return 0;
}

/* @n zeroed objects of @size, freed by ox_free(); NULL (x->err set): no memory. */
static void *grab(struct ox *x, size_t n, size_t size)
{
	void *p;

	if (x->err)
		return NULL;
	p = calloc(n ? n : 1, size);
	if (!p || adopt(x, p)) {
		free(p);
		x->err = -ENOMEM;
		return NULL;
	}
	return p;
}

static char *grab_str(struct ox *x, const char *s)
{
	char *p = grab(x, strlen(s) + 1, 1);

	return p ? strcpy(p, s) : NULL;
}

/*
 * @s as every report prints a name (text.h's text_printable(): valid
 * UTF-8, no control character, '%' and each bad byte as %XX): proto3's
 * strings must be UTF-8, a path or a process name may be any bytes, and
 * a receiver that checks (Go's protobuf does) refuses the whole request
 * over one of them. @s itself, or a copy of @x's.
 */
static const char *printable(struct ox *x, const char *s)
{
	char *c = text_printable(s);

	if (c == s)
		return s;
	if (!c || adopt(x, c)) {
		free(c);
		x->err = -ENOMEM;
		return s;
	}
	return c;
}

static void ox_free(struct ox *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->v[i]);
	free(x->v);
}

/* The gzip'ed @gz inflated into *@out (malloc'ed). 0, -ENOMEM or -EINVAL. */
static int gunzip(const void *gz, size_t len, uint8_t **out, size_t *outlen)
{
	z_stream z = { .next_in = (Bytef *)gz, .avail_in = (uInt)len };
	size_t cap = len * 4 + 4096, got = 0;
	uint8_t *buf = NULL;
	int rc = Z_OK, err = 0;

	if (len > UINT_MAX || inflateInit2(&z, 15 + 16) != Z_OK)
		return -EINVAL;
	while (rc != Z_STREAM_END) {
		if (got == cap || !buf) {
			uint8_t *nb;

			if (buf)
				cap *= 2;
			if (cap > OTLP_PPROF_MAX) {
				err = -EINVAL;
				break;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
		}
		z.next_out = buf + got;
		z.avail_out = (uInt)(cap - got);
		rc = inflate(&z, Z_NO_FLUSH);
		got = cap - z.avail_out;
		if (rc != Z_OK && rc != Z_STREAM_END) {
			err = -EINVAL;
			break;
		}
	}
	inflateEnd(&z);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*outlen = got;
	return 0;
}

/* A pprof string index as the dictionary's (the same table): -1 out of it. */
static int32_t sidx(const pprof_t *p, int64_t i)
{
	return i >= 0 && (uint64_t)i < p->n_string_table ? (int32_t)i : -1;
}

/*
 * Each pprof entry at its id: @tab[id] for ids 1..@n, tab[0] left NULL.
 * -EINVAL for an id out of 1..n or twice.
 */
#define BY_ID(tab, src, n)						\
	({								\
		int __e = 0;						\
		for (size_t __i = 0; __i < (n) && !__e; __i++) {	\
			uint64_t __id = (src)[__i]->id;			\
			if (!__id || __id > (n) || (tab)[__id])		\
				__e = -EINVAL;				\
			else						\
				(tab)[__id] = (src)[__i];		\
		}							\
		__e;							\
	})

struct group {
	int64_t pid;		/* 0: samples without a pid label */
	size_t first, n;	/* its samples in the order[] below */
	const char *comm;
};

struct order {
	int64_t pid;
	size_t sample;
};

static int by_pid(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

void otlp__cgroup_ids(const char *cgroup, char *cid, char *pod)
{
	const char *s;

	cid[0] = pod[0] = 0;
	/* The last run of exactly 64 hex digits: docker-<id>.scope, cri-containerd-<id>, /docker/<id>. */
	for (s = cgroup; *s; s++) {
		size_t n = strspn(s, "0123456789abcdef");

		if (n == 64 && (s == cgroup || !strchr("0123456789abcdef", s[-1]))) {
			memcpy(cid, s, 64);
			cid[64] = 0;
		}
		if (n)
			s += n - 1;
	}
	/* "pod" then a UUID: /kubepods/burstable/pod<uid>/, kubepods-besteffort-pod<uid_>.slice. */
	for (s = cgroup; (s = strstr(s, "pod")); s++) {
		const char *u = s + 3;
		bool ok = true;

		for (int i = 0; i < 36 && ok; i++) {
			if (i == 8 || i == 13 || i == 18 || i == 23)
				ok = u[i] == '-' || u[i] == '_';
			else
				ok = u[i] && strchr("0123456789abcdef", u[i]);
		}
		if (!ok || strchr("0123456789abcdef", u[36] ? u[36] : ' '))
			continue;
		for (int i = 0; i < 36; i++)
			pod[i] = u[i] == '_' ? '-' : u[i];
		pod[36] = 0;
	}
}

/* The Resource's attributes, into @kv (OTLP_RES_ATTRS of them). */
struct res {
	C(KeyValue) kv[OTLP_RES_ATTRS], *pkv[OTLP_RES_ATTRS];
	C(AnyValue) val[OTLP_RES_ATTRS];
	size_t n;
};

/* @r's next attribute, named @key: its value, to be set; NULL when @r is full. */
static C(AnyValue) *res_add(struct res *r, const char *key)
{
	if (r->n == OTLP_RES_ATTRS)
		return NULL;
	CI(key_value)(&r->kv[r->n]);
	CI(any_value)(&r->val[r->n]);
	r->kv[r->n].key = (char *)key;
	r->kv[r->n].value = &r->val[r->n];
	r->pkv[r->n] = &r->kv[r->n];
	return &r->val[r->n++];
}

static void res_str(struct ox *x, struct res *r, const char *key, const char *val)
{
	char *v = grab_str(x, val);
	C(AnyValue) *a = v ? res_add(r, key) : NULL;

	if (!a)
		return;
	a->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	a->string_value = v;
}

static void res_int(struct res *r, const char *key, int64_t val)
{
	C(AnyValue) *a = res_add(r, key);

	if (!a)
		return;
	a->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
	a->int_value = val;
}

/*
 * The process's executable's build ID: that of a mapping of its file
 * among its samples' frames, the file named as @exe, or as @shown (its
 * printable form, as the pprof's builder may have written it).
 */
static const char *exe_build_id(const pprof_t *p, Perftools__Profiles__Location **loc,
				Perftools__Profiles__Mapping **map, const struct order *o,
				const struct group *g, const char *exe, const char *shown)
{
	for (size_t i = 0; i < g->n; i++) {
		const Perftools__Profiles__Sample *s = p->sample[o[g->first + i].sample];

		for (size_t k = 0; k < s->n_location_id; k++) {
			const Perftools__Profiles__Mapping *m = map[loc[s->location_id[k]]->mapping_id];

			const char *file = m ? p->string_table[m->filename] : "";

			if (m && m->build_id > 0 && (!strcmp(file, exe) || !strcmp(file, shown)))
				return p->string_table[m->build_id];
		}
	}
	return NULL;
}

/*
 * Group @g's Resource: the process as /proc says it now (it may have
 * ended: then less). Its path and the host's name made printable, the
 * pprof's comm already is.
 */
static void resource(struct ox *x, const pprof_t *p, Perftools__Profiles__Location **loc,
		     Perftools__Profiles__Mapping **map, const struct order *o,
		     const struct group *g, const char *host, struct res *r)
{
	char path[64], exe[4096], cg[8192], cid[65], pod[37];
	const char *name = g->comm, *bid = NULL;
	const char *shown = NULL;
	ssize_t n = -1;
	FILE *f;

	if (g->pid > 0) {
		snprintf(path, sizeof(path), "/proc/%lld/exe", (long long)g->pid);
		n = readlink(path, exe, sizeof(exe) - 1);
	}
	if (n > 0) {
		exe[n] = 0;
		if (n > 10 && !strcmp(exe + n - 10, " (deleted)"))
			exe[n - 10] = 0;
		shown = printable(x, exe);
		name = strrchr(shown, '/') ? strrchr(shown, '/') + 1 : shown;
		bid = exe_build_id(p, loc, map, o, g, exe, shown);
	}
	if (name && *name) {
		res_str(x, r, "service.name", name);
		res_str(x, r, "process.executable.name", name);
	}
	res_str(x, r, "host.name", printable(x, host));
	if (g->pid > 0)
		res_int(r, "process.pid", g->pid);
	if (shown)
		res_str(x, r, "process.executable.path", shown);
	if (bid && *bid)
		res_str(x, r, BUILD_ID_KEY, bid);
	if (g->pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%lld/cgroup", (long long)g->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	n = (ssize_t)fread(cg, 1, sizeof(cg) - 1, f);
	fclose(f);
	cg[n > 0 ? n : 0] = 0;
	otlp__cgroup_ids(cg, cid, pod);
	if (cid[0])
		res_str(x, r, "container.id", cid);
	if (pod[0])
		res_str(x, r, "k8s.pod.uid", pod);
}

/* The request of @p into @req, its memory in @x. 0, -ENOMEM or -EINVAL. */
static int build(struct ox *x, const pprof_t *p, request_t *req)
{
	size_t ns = p->n_sample, nt = p->n_sample_type, nl = 0, nlines = 0, ngroups = 0, k;
	Perftools__Profiles__Mapping **pmap;
	Perftools__Profiles__Location **ploc;
	Perftools__Profiles__Function **pfn;
	P(ProfilesDictionary) *d;
	int64_t pid_key = -1, comm_key = -1, bid_key;
	struct order *o;
	struct group *g;
	char host[256] = "";

	if (p->n_string_table < 1 || p->string_table[0][0] || nt == 0 ||
	    p->n_string_table >= INT32_MAX - 1 || p->n_mapping >= INT32_MAX ||
	    p->n_location >= INT32_MAX || p->n_function >= INT32_MAX || ns >= INT32_MAX / nt)
		return -EINVAL;
	pmap = grab(x, p->n_mapping + 1, sizeof(*pmap));
	ploc = grab(x, p->n_location + 1, sizeof(*ploc));
	pfn = grab(x, p->n_function + 1, sizeof(*pfn));
	d = grab(x, 1, sizeof(*d));
	if (x->err)
		return x->err;
	if (BY_ID(pmap, p->mapping, p->n_mapping) || BY_ID(ploc, p->location, p->n_location) ||
	    BY_ID(pfn, p->function, p->n_function))
		return -EINVAL;
	for (size_t i = 0; i < p->n_string_table; i++) {
		if (!strcmp(p->string_table[i], "pid"))
			pid_key = (int64_t)i;
		else if (!strcmp(p->string_table[i], "comm"))
			comm_key = (int64_t)i;
	}
	PI(profiles_dictionary)(d);

	/* Strings: the pprof's, and the build IDs' key after them. */
	d->n_string_table = p->n_string_table + 1;
	d->string_table = grab(x, d->n_string_table, sizeof(char *));
	if (!d->string_table)
		return x->err;
	memcpy(d->string_table, p->string_table, p->n_string_table * sizeof(char *));
	bid_key = (int64_t)p->n_string_table;
	d->string_table[bid_key] = BUILD_ID_KEY;

	/* Mappings at their ids; each build ID an attribute, once. */
	{
		P(Mapping) *m = grab(x, p->n_mapping + 1, sizeof(*m));
		P(KeyValueAndUnit) *a = grab(x, p->n_mapping + 1, sizeof(*a));
		C(AnyValue) *av = grab(x, p->n_mapping + 1, sizeof(*av));
		int32_t *attr_of = grab(x, p->n_string_table, sizeof(*attr_of));
		int32_t *ai = grab(x, p->n_mapping + 1, sizeof(*ai));

		d->mapping_table = grab(x, p->n_mapping + 1, sizeof(*d->mapping_table));
		d->attribute_table = grab(x, p->n_mapping + 1, sizeof(*d->attribute_table));
		if (x->err)
			return x->err;
		PI(key_value_and_unit)(&a[0]);
		d->attribute_table[d->n_attribute_table++] = &a[0];
		for (size_t i = 0; i <= p->n_mapping; i++) {
			const Perftools__Profiles__Mapping *pm = pmap[i];

			PI(mapping)(&m[i]);
			d->mapping_table[d->n_mapping_table++] = &m[i];
			if (!i)
				continue;
			m[i].memory_start = pm->memory_start;
			m[i].memory_limit = pm->memory_limit;
			m[i].file_offset = pm->file_offset;
			m[i].filename_strindex = sidx(p, pm->filename);
			if (m[i].filename_strindex < 0 || sidx(p, pm->build_id) < 0)
				return -EINVAL;
			if (!pm->build_id)
				continue;
			if (!attr_of[pm->build_id]) {
				size_t j = d->n_attribute_table++;

				PI(key_value_and_unit)(&a[j]);
				CI(any_value)(&av[j]);
				av[j].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
				av[j].string_value = d->string_table[pm->build_id];
				a[j].key_strindex = (int32_t)bid_key;
				a[j].value = &av[j];
				d->attribute_table[j] = &a[j];
				attr_of[pm->build_id] = (int32_t)j;
			}
			ai[i] = attr_of[pm->build_id];
			m[i].attribute_indices = &ai[i];
			m[i].n_attribute_indices = 1;
		}
	}

	/* Functions at their ids. */
	{
		P(Function) *fn = grab(x, p->n_function + 1, sizeof(*fn));

		d->function_table = grab(x, p->n_function + 1, sizeof(*d->function_table));
		if (x->err)
			return x->err;
		for (size_t i = 0; i <= p->n_function; i++) {
			PI(function)(&fn[i]);
			d->function_table[d->n_function_table++] = &fn[i];
			if (!i)
				continue;
			fn[i].name_strindex = sidx(p, pfn[i]->name);
			fn[i].system_name_strindex = sidx(p, pfn[i]->system_name);
			fn[i].filename_strindex = sidx(p, pfn[i]->filename);
			fn[i].start_line = pfn[i]->start_line;
			if (fn[i].name_strindex < 0 || fn[i].system_name_strindex < 0 ||
			    fn[i].filename_strindex < 0)
				return -EINVAL;
		}
	}

	/* Locations at their ids, their lines. */
	for (size_t i = 1; i <= p->n_location; i++)
		nlines += ploc[i]->n_line;
	{
		P(Location) *lo = grab(x, p->n_location + 1, sizeof(*lo));
		P(Line) *li = grab(x, nlines, sizeof(*li));
		P(Line) **pli = grab(x, nlines, sizeof(*pli));

		d->location_table = grab(x, p->n_location + 1, sizeof(*d->location_table));
		if (x->err)
			return x->err;
		for (size_t i = 0; i <= p->n_location; i++) {
			const Perftools__Profiles__Location *pl = ploc[i];

			PI(location)(&lo[i]);
			d->location_table[d->n_location_table++] = &lo[i];
			if (!i)
				continue;
			if (pl->mapping_id > p->n_mapping)
				return -EINVAL;
			lo[i].mapping_index = (int32_t)pl->mapping_id;
			lo[i].address = pl->address;
			lo[i].lines = &pli[nl];
			lo[i].n_lines = pl->n_line;
			for (size_t j = 0; j < pl->n_line; j++, nl++) {
				if (!pl->line[j]->function_id || pl->line[j]->function_id > p->n_function)
					return -EINVAL;
				PI(line)(&li[nl]);
				li[nl].function_index = (int32_t)pl->line[j]->function_id;
				li[nl].line = pl->line[j]->line;
				pli[nl] = &li[nl];
			}
		}
	}

	/* The links' table: its zero value alone (the spec's 16 and 8 zero bytes). */
	{
		P(Link) *ln = grab(x, 1, sizeof(*ln));
		P(Link) **pln = grab(x, 1, sizeof(*pln));
		uint8_t *zero = grab(x, 16, 1);

		if (x->err)
			return x->err;
		PI(link)(ln);
		ln->trace_id = (ProtobufCBinaryData){ 16, zero };
		ln->span_id = (ProtobufCBinaryData){ 8, zero };
		pln[0] = ln;
		d->link_table = pln;
		d->n_link_table = 1;
	}

	/* A stack per sample (ns + 1 with the zero one); the samples by process. */
	o = grab(x, ns, sizeof(*o));
	g = grab(x, ns + 1, sizeof(*g));
	{
		P(Stack) *st = grab(x, ns + 1, sizeof(*st));
		size_t nlocs = 0, at = 0;
		int32_t *li;

		for (size_t i = 0; i < ns; i++)
			nlocs += p->sample[i]->n_location_id;
		li = grab(x, nlocs, sizeof(*li));
		d->stack_table = grab(x, ns + 1, sizeof(*d->stack_table));
		if (x->err)
			return x->err;
		PI(stack)(&st[0]);
		d->stack_table[d->n_stack_table++] = &st[0];
		for (size_t i = 0; i < ns; i++) {
			const Perftools__Profiles__Sample *s = p->sample[i];

			if (s->n_value != nt)
				return -EINVAL;
			PI(stack)(&st[i + 1]);
			st[i + 1].location_indices = &li[at];
			st[i + 1].n_location_indices = s->n_location_id;
			for (size_t j = 0; j < s->n_location_id; j++) {
				if (!s->location_id[j] || s->location_id[j] > p->n_location)
					return -EINVAL;
				li[at++] = (int32_t)s->location_id[j];
			}
			d->stack_table[d->n_stack_table++] = &st[i + 1];
			o[i] = (struct order){ 0, i };
			for (size_t j = 0; j < s->n_label; j++)
				if ((int64_t)s->label[j]->key == pid_key && !s->label[j]->str)
					o[i].pid = s->label[j]->num;
		}
	}
	qsort(o, ns, sizeof(*o), by_pid);
	for (size_t i = 0; i < ns; i++) {
		const Perftools__Profiles__Sample *s = p->sample[o[i].sample];

		if (!ngroups || g[ngroups - 1].pid != o[i].pid)
			g[ngroups++] = (struct group){ .pid = o[i].pid, .first = i };
		g[ngroups - 1].n++;
		for (size_t j = 0; j < s->n_label; j++)
			if ((int64_t)s->label[j]->key == comm_key && s->label[j]->str &&
			    sidx(p, s->label[j]->str) > 0)
				g[ngroups - 1].comm = p->string_table[s->label[j]->str];
	}

	/* A ResourceProfiles per process: one scope, a Profile per sample type. */
	gethostname(host, sizeof(host) - 1);
	req->dictionary = d;
	req->resource_profiles = grab(x, ngroups, sizeof(*req->resource_profiles));
	{
		P(Sample) *sa = grab(x, ns * nt, sizeof(*sa));
		P(Sample) **psa = grab(x, ns * nt, sizeof(*psa));
		int64_t *val = grab(x, ns * nt, sizeof(*val));

		if (x->err)
			return x->err;
		k = 0;
		for (size_t gi = 0; gi < ngroups; gi++) {
			P(ResourceProfiles) *rp = grab(x, 1, sizeof(*rp));
			P(ScopeProfiles) *sp = grab(x, 1, sizeof(*sp)), **psp = grab(x, 1, sizeof(*psp));
			Opentelemetry__Proto__Resource__V1__Resource *rs = grab(x, 1, sizeof(*rs));
			C(InstrumentationScope) *sc = grab(x, 1, sizeof(*sc));
			P(Profile) *pr = grab(x, nt, sizeof(*pr)), **ppr = grab(x, nt, sizeof(*ppr));
			P(ValueType) *vt = grab(x, nt + 1, sizeof(*vt));
			struct res *r = grab(x, 1, sizeof(*r));
			uint8_t *id = grab(x, nt, 16);

			if (x->err)
				return x->err;
			PI(resource_profiles)(rp);
			PI(scope_profiles)(sp);
			opentelemetry__proto__resource__v1__resource__init(rs);
			CI(instrumentation_scope)(sc);
			sc->name = "heapsnoop";
			sc->version = HEAPSNOOP_GIT;
			resource(x, p, ploc, pmap, o, &g[gi], host, r);
			rs->attributes = r->pkv;
			rs->n_attributes = r->n;
			rp->resource = rs;
			sp->scope = sc;
			psp[0] = sp;
			rp->scope_profiles = psp;
			rp->n_scope_profiles = 1;
			PI(value_type)(&vt[nt]);
			if (p->period_type) {
				vt[nt].type_strindex = sidx(p, p->period_type->type);
				vt[nt].unit_strindex = sidx(p, p->period_type->unit);
			}
			for (size_t t = 0; t < nt; t++) {
				PI(profile)(&pr[t]);
				PI(value_type)(&vt[t]);
				vt[t].type_strindex = sidx(p, p->sample_type[t]->type);
				vt[t].unit_strindex = sidx(p, p->sample_type[t]->unit);
				if (vt[t].type_strindex < 0 || vt[t].unit_strindex < 0 ||
				    vt[nt].type_strindex < 0 || vt[nt].unit_strindex < 0)
					return -EINVAL;
				pr[t].sample_type = &vt[t];
				pr[t].period_type = p->period_type ? &vt[nt] : NULL;
				pr[t].period = p->period;
				pr[t].time_unix_nano = (uint64_t)p->time_nanos;
				pr[t].duration_nano = (uint64_t)p->duration_nanos;
				if (getrandom(id + 16 * t, 16, GRND_NONBLOCK) == 16)
					pr[t].profile_id = (ProtobufCBinaryData){ 16, id + 16 * t };
				pr[t].samples = &psa[k];
				for (size_t i = 0; i < g[gi].n; i++) {
					size_t si = o[g[gi].first + i].sample;
					int64_t v = p->sample[si]->value[t];

					if (!v)
						continue;
					PI(sample)(&sa[k]);
					val[k] = v;
					sa[k].values = &val[k];
					sa[k].n_values = 1;
					sa[k].stack_index = (int32_t)si + 1;
					psa[k] = &sa[k];
					pr[t].n_samples++;
					k++;
				}
				ppr[t] = &pr[t];
			}
			sp->profiles = ppr;
			sp->n_profiles = nt;
			req->resource_profiles[req->n_resource_profiles++] = rp;
		}
	}
	return x->err;
}

int otlp__request(const void *gz, size_t len, uint8_t **out, size_t *outlen)
{
	request_t req = OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	struct ox x = { 0 };
	uint8_t *raw = NULL;
	size_t rawlen = 0;
	pprof_t *p = NULL;
	int err;

	*out = NULL;
	*outlen = 0;
	err = gunzip(gz, len, &raw, &rawlen);
	if (err)
		return err;
	p = perftools__profiles__profile__unpack(NULL, rawlen, raw);
	if (!p) {
		err = -EINVAL;
		goto out;
	}
	err = build(&x, p, &req);
	if (err)
		goto out;
	*outlen = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(&req);
	*out = malloc(*outlen ? *outlen : 1);
	if (!*out) {
		err = -ENOMEM;
		goto out;
	}
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(&req, *out);
out:
	ox_free(&x);
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	return err;
}

int64_t otlp__rejected(const void *body, size_t len, char *why, size_t cap)
{
	response_t *r = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__unpack(NULL, len, body);
	int64_t n = 0;

	if (cap)
		why[0] = 0;
	if (!r)
		return 0;
	if (r->partial_success) {
		n = r->partial_success->rejected_profiles;
		if (cap)
			snprintf(why, cap, "%s", r->partial_success->error_message);
	}
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__free_unpacked(r, NULL);
	return n;
}
