// SPDX-License-Identifier: MIT
/*
 * hdgroup.c - heapdecode's grouped outputs of what model.c took in (see
 * model.h): rows keyed by stack, pid, function or module (--report,
 * --by), folded stacks (--folded) and the flame graph.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/flamegraph.h"
#include "framefmt.h"
#include "model/model.h"
#include "model/model_int.h"
#include "msg.h"
#include "text.h"

/* A frame's name for folded stacks: function, or [module+0xoff]. */
static void frame_name(const struct sym_frame *f, uint64_t addr, char *buf, size_t cap)
{
	if (f->status == SYM_OK)
		snprintf(buf, cap, "%.*s", (int)symbol_unversioned_len(f->func), f->func);
	else if (f->module && f->status != SYM_UNMAPPED)
		snprintf(buf, cap, "[%s+%#" PRIx64 "]", path_base(f->module), f->elf_addr);
	else
		snprintf(buf, cap, "[%#" PRIx64 "]", addr);
	/* ';' and ' ' separate frames and the value in the folded format. */
	for (char *c = buf; *c; c++)
		if (*c == ';' || *c == ' ')
			*c = '_';
}

/* A row of a grouped report: a key and what is live under it. */
struct keyed {
	char *key;
	uint64_t bytes, count;
	uint64_t cut;	/* allocations of those whose stack is incomplete */
};

static int keyed_by_key(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

/* Biggest first; signed, for the differences of --base. */
static int keyed_by_bytes(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->bytes != y->bytes)
		return (int64_t)x->bytes < (int64_t)y->bytes ? 1 : -1;
	if (x->count != y->count)
		return (int64_t)x->count < (int64_t)y->count ? 1 : -1;
	return strcmp(x->key, y->key);
}

/*
 * Rows with equal keys summed into one (the others' keys freed), then
 * sorted by bytes, biggest first. Returns the number of rows left.
 */
static size_t merge_rows(struct keyed *rows, size_t m)
{
	size_t k = 0;

	qsort(rows, m, sizeof(*rows), keyed_by_key);
	for (size_t i = 0; i < m; i++) {
		if (k && !strcmp(rows[k - 1].key, rows[i].key)) {
			rows[k - 1].bytes += rows[i].bytes;
			rows[k - 1].count += rows[i].count;
			rows[k - 1].cut += rows[i].cut;
			free(rows[i].key);
			continue;
		}
		rows[k++] = rows[i];
	}
	/* With --base, what did not change at all is not shown. */
	for (size_t i = m = 0; i < k; i++) {
		if (rows[i].bytes || rows[i].count)
			rows[m++] = rows[i];
		else
			free(rows[i].key);
	}
	k = m;
	qsort(rows, k, sizeof(*rows), keyed_by_bytes);
	return k;
}

/*
 * One row per stack with live allocations, keyed by @key_fn; merged.
 * Returns a calloc'ed array of *@n rows, or NULL if out of memory.
 */
static struct keyed *grouped_rows(struct hd_model *r,
				  char *(*key_fn)(struct hd_model *r, const struct stack *s), size_t *n)
{
	size_t ns, m = 0;
	struct stack **v = hd_model__live_stacks(r, &ns);
	struct keyed *rows = v ? calloc(ns ? ns : 1, sizeof(*rows)) : NULL;

	*n = 0;
	if (rows) {
		for (size_t i = 0; i < ns; i++) {
			rows[m] = (struct keyed){ key_fn(r, v[i]), v[i]->live_bytes, v[i]->live_count,
						  *framefmt__cut(v[i]->flags) ? v[i]->live_count : 0 };
			if (rows[m].key)
				m++;
		}
		*n = merge_rows(rows, m);
	}
	free(v);
	return rows;
}

static void free_rows(struct keyed *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i].key);
	free(rows);
}

/* One stack's folded text (root first), in a malloc'ed string. */
static char *fold_stack(struct hd_model *r, const struct stack *s)
{
	char *text = NULL, name[512];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	/* An incomplete stack's root is the mark: it does not reach main. */
	if (*framefmt__cut(s->flags)) {
		snprintf(name, sizeof(name), "[%s]", framefmt__cut(s->flags));
		for (char *c = name; *c; c++)
			if (*c == ' ')
				*c = '_';
		fprintf(f, "%s%s", name, s->depth ? ";" : "");
	}
	if (s->depth == 0)
		fputs("[no stack]", f);
	for (uint32_t k = s->depth; k-- > 0;) {
		struct sym_frame sf;

		hd_model__lookup(r, s->pid, s->frames[k], &sf);
		frame_name(&sf, s->frames[k], name, sizeof(name));
		fprintf(f, "%s%s", name, k ? ";" : "");
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

int hd_model__folded_values(struct hd_model *r, struct stack *const *v, const uint64_t *values,
			    size_t n, FILE *out)
{
	struct keyed *rows = calloc(n ? n : 1, sizeof(*rows));
	size_t m = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		rows[m] = (struct keyed){ values[i] ? fold_stack(r, v[i]) : NULL, values[i], 0 };
		if (rows[m].key)
			m++;
	}
	m = merge_rows(rows, m);
	for (size_t i = 0; i < m; i++)
		fprintf(out, "%s %" PRId64 "\n", rows[i].key, (int64_t)rows[i].bytes);
	free_rows(rows, m);
	return 0;
}

void hd_model__folded(struct hd_model *r, FILE *out)
{
	size_t n;
	struct keyed *rows = grouped_rows(r, fold_stack, &n);

	/* Folded lines have no room for it: standard error says so. */
	if (r->lc.mean)
		elog("the values are estimates: the dump is a sample by bytes, one per %" PRIu64
		     " bytes on average", r->lc.mean);
	/* Stacks that differ only in addresses fold to the same names: merged. */
	for (size_t i = 0; rows && i < n; i++)
		fprintf(out, "%s %" PRId64 "\n", rows[i].key,
			(int64_t)(r->opts.count_values ? rows[i].count : rows[i].bytes));
	free_rows(rows, n);
}

int hd_model__flamegraph(struct hd_model *r, FILE *out, const char *title)
{
	size_t n;
	struct keyed *rows = grouped_rows(r, fold_stack, &n);
	struct folded_line *lines = rows ? calloc(n ? n : 1, sizeof(*lines)) : NULL;
	const char *unit = r->opts.count_values ? "allocations" : "bytes";
	char sampled[600], est_unit[32];
	int err = -ENOMEM;

	if (r->lc.mean) {
		snprintf(sampled, sizeof(sampled), "%s (estimated from a sample by bytes, mean %"
			 PRIu64 ")", title, r->lc.mean);
		snprintf(est_unit, sizeof(est_unit), "estimated %s", unit);
		title = sampled;
		unit = est_unit;
	}
	if (lines) {
		for (size_t i = 0; i < n; i++) {
			int64_t v = (int64_t)(r->opts.count_values ? rows[i].count : rows[i].bytes);

			lines[i] = (struct folded_line){ rows[i].key, (uint64_t)(v < 0 ? -v : v),
							 r->base ? v : 0 };
		}
		err = flamegraph__write(out, lines, n, title, unit);
	}
	free(lines);
	free_rows(rows, n);
	return err;
}

/* The --by key of stack @s: its pid, or frame 0's function or module. */
static char *key_of(struct hd_model *r, const struct stack *s)
{
	struct sym_frame f;
	char *k = NULL, name[512];

	if (r->opts.by == HD_BY_PID) {
		if (asprintf(&k, "pid %u", s->pid) < 0)
			return NULL;
		return k;
	}
	if (!s->depth)
		return strdup("[no stack]");
	hd_model__lookup(r, s->pid, s->frames[0], &f);
	if (r->opts.by == HD_BY_MODULE)
		return strdup(f.module ? f.module : "[unmapped]");
	frame_name(&f, s->frames[0], name, sizeof(name));
	return strdup(name);
}

const char *hd_model__num(const struct hd_model *r, uint64_t v, char *buf)
{
	if (r->base)
		snprintf(buf, 32, "%+" PRId64, (int64_t)v);
	else
		snprintf(buf, 32, "%" PRIu64, v);
	return buf;
}

/* @v's share of the total bytes, in percent (of the total change). */
static double share(const struct hd_model *r, uint64_t v)
{
	return r->total_bytes ? 100.0 * (double)(int64_t)v / (double)(int64_t)r->total_bytes : 0;
}

static void report_by_key(struct hd_model *r, FILE *out)
{
	static const char *const what[] = { "stack", "process", "function", "module" };
	size_t k;
	struct keyed *rows = grouped_rows(r, key_of, &k);
	char b1[32], b2[32];

	if (!rows)
		return;
	hd_model_say_estimated(r, out);
	for (size_t i = 0; i < k; i++) {
		fprintf(out, "%s bytes (%.1f%%) in %s allocations: %s",
			hd_model__num(r, rows[i].bytes, b1), share(r, rows[i].bytes),
			hd_model__num(r, rows[i].count, b2), rows[i].key);
		if (rows[i].cut)
			fprintf(out, " (%" PRIu64 " with an incomplete stack)", rows[i].cut);
		fputc('\n', out);
	}
	fprintf(out, "total%s: %s bytes in %s allocations from %zu %s%s\n",
		r->lc.mean ? " (estimated)" : "", hd_model__num(r, r->total_bytes, b1), hd_model__num(r, r->total_count, b2), k,
		what[r->opts.by], k == 1 ? "" : "s");
	free_rows(rows, k);
}

static void report_by_stack(struct hd_model *r, FILE *out)
{
	size_t n;
	struct stack **v = hd_model__live_stacks(r, &n);
	char b1[32], b2[32];

	if (!v)
		return;
	hd_model_say_estimated(r, out);
	for (size_t i = 0; i < n; i++) {
		const struct stack *s = v[i];

		fprintf(out, "%s bytes (%.1f%%) in %s allocations", hd_model__num(r, s->live_bytes, b1),
			share(r, s->live_bytes), hd_model__num(r, s->live_count, b2));
		if (s->pid)
			fprintf(out, " from pid %u", s->pid);
		if (*framefmt__cut(s->flags))
			fprintf(out, " (%s)", framefmt__cut(s->flags));
		fputs(":\n", out);
		for (uint32_t k = 0; k < s->depth; k++)
			hd_model__write_frame(r, "    ", s->pid, k, s->frames[k], out);
	}
	fprintf(out, "total%s: %s bytes in %s allocations from %zu stacks\n",
		r->lc.mean ? " (estimated)" : "", hd_model__num(r, r->total_bytes, b1), hd_model__num(r, r->total_count, b2), n);
	free(v);
}

void hd_model__report(struct hd_model *r, FILE *out)
{
	if (r->opts.by == HD_BY_STACK)
		report_by_stack(r, out);
	else
		report_by_key(r, out);
}
