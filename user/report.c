// SPDX-License-Identifier: MIT
/*
 * report.c - the dump and the summary (see report.h; line grammar in
 * docs/OUTPUT.md). A dump repeats the mapping records each time so that
 * any one dump, cut out of a log, can be symbolized on its own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"

struct dump_ctx {
	struct stacks *stacks;
	FILE *out;
	int err;
};

static void dump_one(const struct live_alloc *a, void *arg)
{
	struct dump_ctx *d = arg;
	char tok[HS_TOKEN_BUF];
	int n = stacks__token(d->stacks, a->stack, a->size, tok, sizeof(tok));

	if (n < 0) {
		/* Only a size >= 2^63 can fail here; say so, never guess. */
		fprintf(d->out, "heapsnoop: live pid=%u ptr=%#" PRIx64 " size=%" PRIu64
			" unencodable: %s\n", a->pid, a->addr, a->size, hs_strerror(n));
		return;
	}
	if (fprintf(d->out, "heapsnoop: live pid=%u ptr=%#" PRIx64 " %s\n", a->pid, a->addr,
		    tok) < 0)
		d->err = -EIO;
}

/* Does @pid have a live allocation? (linear, called once per process). */
struct has_ctx {
	uint32_t pid;
	int yes;
};

static void has_pid(const struct live_alloc *a, void *arg)
{
	struct has_ctx *h = arg;

	h->yes |= a->pid == h->pid;
}

int report__dump(struct trace *t, FILE *out, const char *reason)
{
	struct tracker *tr = trace__tracker(t);
	struct dump_ctx d = { .stacks = trace__stacks(t), .out = out };
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	fprintf(out, "heapsnoop: dump reason=%s time=%lld.%03ld live=%zu bytes=%" PRIu64
		" stacks=%zu\n", reason, (long long)now.tv_sec, now.tv_nsec / 1000000,
		tracker__count(tr), tracker__bytes(tr), stacks__count(d.stacks));
	for (size_t i = 0; i < trace__nprocs(t); i++) {
		struct proc *p = trace__proc(t, i);
		struct has_ctx h = { .pid = (uint32_t)p->pid };

		tracker__for_each(tr, has_pid, &h);
		if (!h.yes || !p->maps)
			continue;
		for (size_t k = 0; k < p->maps->n; k++) {
			const struct mapping *m = &p->maps->v[k];

			fprintf(out, "heapsnoop: map pid=%d start=%#" PRIx64 " end=%#" PRIx64
				" off=%#" PRIx64 " buildid=%s path=%s\n", p->pid, m->start, m->end,
				m->offset, m->build_id, m->path);
		}
	}
	tracker__for_each(tr, dump_one, &d);
	fprintf(out, "heapsnoop: end-dump live=%zu\n", tracker__count(tr));
	if (fflush(out) == EOF || ferror(out))
		d.err = -EIO;
	return d.err;
}

static void print_frame(struct trace *t, struct symbolizer *sym, const struct stack *s,
			uint32_t i, FILE *out)
{
	struct proc *p = trace__find_proc(t, (pid_t)s->pid);
	const struct mapping *m = p && p->maps ? proc_maps__find(p->maps, s->frames[i]) : NULL;
	struct sym_frame f;

	fprintf(out, "        #%-2u 0x%" PRIx64, i, s->frames[i]);
	if (!sym || symbolizer__lookup(sym, m, s->frames[i], true, &f)) {
		fputc('\n', out);
		return;
	}
	if (f.status == SYM_OK)
		fprintf(out, " %s+%#" PRIx64, f.func, f.func_off);
	else
		fprintf(out, " [%s]", sym_status_str(f.status));
	if (f.module) {
		const char *base = strrchr(f.module, '/');

		fprintf(out, " (%s)", base ? base + 1 : f.module);
	}
	if (f.file)
		fprintf(out, " %s:%d", f.file, f.line);
	fputc('\n', out);
}

void report__summary(struct trace *t, struct symbolizer *sym, FILE *out, unsigned int top)
{
	struct stacks *st = trace__stacks(t);
	struct tracker *tr = trace__tracker(t);
	size_t k;
	struct stack **v = stacks__by_live_bytes(st, &k);

	if (!v)
		return;
	fprintf(out, "heapsnoop: summary: %zu live allocations, %" PRIu64 " bytes, from %zu stacks"
		" (top %u by live bytes)\n", tracker__count(tr), tracker__bytes(tr), k, top);
	for (size_t i = 0; i < k && i < top; i++) {
		const struct stack *s = v[i];

		fprintf(out, "    %" PRIu64 " bytes in %" PRIu64 " allocations from pid %u%s%s:\n",
			s->live_bytes, s->live_count, s->pid,
			s->flags & STACK_TRUNCATED ? " (stack truncated)" : "",
			s->flags & STACK_FAULT ? " (stack unreadable past here)" : "");
		for (uint32_t f = 0; f < s->depth; f++)
			print_frame(t, sym, s, f, out);
	}
	free(v);
	fflush(out);
}
