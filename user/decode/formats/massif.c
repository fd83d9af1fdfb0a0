// SPDX-License-Identifier: MIT
/*
 * massif.c - the massif file (see massif.h). Times are milliseconds from
 * the first snapshot (massif's time_unit: ms); extra-heap and stack bytes
 * are not known here and written as 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#include "massif.h"
#include "formats/textout.h"
#include "text.h"

struct item {
	const struct stack *s;
	uint64_t bytes;		/* at the peak */
};

struct massif {
	struct hd_model *m;
	FILE *out;
	uint32_t depth;		/* the frame the items are being grouped by */
};

/* Frame @d of @s, or 0 if @s ends before it (such items sort first). */
static uint64_t frame_at(const struct stack *s, uint32_t d)
{
	return d < s->depth ? s->frames[d] : 0;
}

static int by_frame(const void *a, const void *b, void *ctx)
{
	uint32_t d = *(const uint32_t *)ctx;
	uint64_t x = frame_at(((const struct item *)a)->s, d);
	uint64_t y = frame_at(((const struct item *)b)->s, d);

	return x < y ? -1 : x > y;
}

/* A run of items sharing frame @d: where it starts, its length, its bytes. */
struct group {
	size_t start, n;
	uint64_t bytes;
};

static int by_bytes_desc(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

static void write_label(struct massif *ms, const struct stack *s, uint32_t d)
{
	struct sym_frame f;
	uint64_t addr = s->frames[d];

	hd_model__lookup(ms->m, s->pid, addr, &f);
	fprintf(ms->out, "0x%" PRIX64 ": %s", addr, f.status == SYM_OK ? f.func : "???");
	if (f.file)
		fprintf(ms->out, " (%s:%d)", path_base(f.file), f.line);
	else if (f.module)
		fprintf(ms->out, " (in %s)", f.module);
	fputc('\n', ms->out);
}

/*
 * The node for @n items sharing frames [0, @d): a line with its children
 * (the distinct frames @d among them) and bytes, then each child's node,
 * biggest first. @d 0 is the root, all allocation functions.
 */
static int write_node(struct massif *ms, struct item *v, size_t n, uint32_t d, uint64_t bytes)
{
	struct group *g = calloc(n ? n : 1, sizeof(*g));
	size_t ng = 0, i = 0;
	int err = 0;

	if (!g)
		return -ENOMEM;
	qsort_r(v, n, sizeof(*v), by_frame, &d);
	while (i < n && !frame_at(v[i].s, d))
		i++;	/* stacks that end here: in this node's bytes only */
	for (; i < n; i++) {
		if (!ng || frame_at(v[i].s, d) != frame_at(v[g[ng - 1].start].s, d))
			g[ng++] = (struct group){ .start = i };
		g[ng - 1].n++;
		g[ng - 1].bytes += v[i].bytes;
	}
	qsort(g, ng, sizeof(*g), by_bytes_desc);
	fprintf(ms->out, "%*sn%zu: %" PRIu64 " ", (int)d, "", ng, bytes);
	if (d == 0)
		fputs("(heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n", ms->out);
	else
		write_label(ms, v[0].s, d - 1);
	for (size_t k = 0; k < ng && !err; k++)
		err = write_node(ms, v + g[k].start, g[k].n, d + 1, g[k].bytes);
	free(g);
	return err;
}

/* The detailed tree of process @pid at its peak of @peak bytes. */
static int write_peak_tree(struct massif *ms, int pid, uint64_t peak)
{
	size_t ns, n = 0;
	struct stack **v = hd_model__run_stacks(ms->m, &ns);
	struct item *items = v ? calloc(ns ? ns : 1, sizeof(*items)) : NULL;
	int err = -ENOMEM;

	if (items) {
		for (size_t i = 0; i < ns; i++)
			if ((int)v[i]->pid == pid && v[i]->peak_bytes)
				items[n++] = (struct item){ v[i], v[i]->peak_bytes };
		err = write_node(ms, items, n, 0, peak);
	}
	free(items);
	free(v);
	return err;
}

int hd_massif__write(struct hd_model *m, FILE *out)
{
	size_t np, n;
	struct rs_proc **procs = hd_model__procs(m, &np);
	struct massif ms = { .m = m, .out = out };
	struct rs_sample *v;
	const struct rs_proc *p;
	int err = 0;
	bool peak_done = false;
	char why[160];

	if (!procs || !np)
		return procs ? -ENOENT : -ENOMEM;
	p = procs[0];
	v = hd_model__series(p, &n);
	if (!v)
		return -ENOMEM;
	fprintf(out, "desc: heapsnoop, pid %d", p->pid);
	if (hd_textout__why_estimated(m, why, sizeof(why)))
		fprintf(out, ", bytes estimated (%s)", why);
	fprintf(out, "\ncmd: %s\ntime_unit: ms\n", p->comm[0] ? p->comm : "?");
	for (size_t i = 0; i < n && !err; i++) {
		bool peak = !peak_done && v[i].time_ms == p->peak_time_ms && v[i].bytes == p->peak;

		fprintf(out, "#-----------\nsnapshot=%zu\n#-----------\ntime=%" PRId64 "\n"
			"mem_heap_B=%" PRIu64 "\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n",
			i, v[i].time_ms - v[0].time_ms, v[i].bytes, peak ? "peak" : "empty");
		if (peak) {
			err = write_peak_tree(&ms, p->pid, p->peak);
			peak_done = true;
		}
	}
	free(v);
	if (!err && (fflush(out) == EOF || ferror(out)))
		err = -EIO;
	return err;
}
