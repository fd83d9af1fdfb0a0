// SPDX-License-Identifier: MIT
/*
 * mmaprec.c - mapping records from perf (see mmaprec.h). Record layouts:
 * include/uapi/linux/perf_event.h, enum perf_event_type; every record ends
 * in the sample_id trailer we ask for (pid, tid, time).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "mmaprec.h"

/* One record, parsed, until it is applied in time order. */
struct rec {
	uint64_t time, seq;
	uint32_t type;		/* PERF_RECORD_* */
	bool exec;		/* COMM: from exec */
	pid_t pid, tid, ppid;
	struct mapping map;	/* MMAP2; path malloc'ed */
	char comm[16];
};

struct mmaprec {
	struct mmaprec_opts opts;
	struct perf_buffer *pb;
	struct rec *v;
	size_t n, cap;
	uint64_t seq, lost;
};

/* The trailer of sample_id_all with PERF_SAMPLE_TID | PERF_SAMPLE_TIME. */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

struct mmap2_head {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

struct comm_head {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[];
};

struct fork_head {
	struct perf_event_header header;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct lost_head {
	struct perf_event_header header;
	uint64_t id, lost;
};

static bool parse_mmap2(const struct perf_event_header *h, struct rec *r)
{
	const struct mmap2_head *m = (const void *)h;
	size_t room = h->size - sizeof(*m) - sizeof(struct sample_id);

	if (h->size < sizeof(*m) + sizeof(struct sample_id) ||
	    (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) || !memchr(m->filename, '\0', room))
		return false;
	/* The kernel's name for anonymous executable memory: JIT code. */
	if (!strcmp(m->filename, "//anon")) {
		r->map.flags = MAPPING_ANON;
		strcpy(r->map.build_id, "-");
	} else if (m->filename[0] != '/') {
		return false;	/* special ([vdso] is read from /proc): nothing to symbolize */
	}
	r->pid = (pid_t)m->pid;
	r->map.start = m->addr;
	r->map.end = m->addr + m->len;
	r->map.offset = m->pgoff;
	if (!r->map.flags) {
		r->map.dev = makedev(m->maj, m->min);
		r->map.ino = m->ino;
	}
	r->map.path = strdup(r->map.flags ? MAPPING_ANON_PATH : m->filename);
	return r->map.path != NULL;
}

static enum bpf_perf_event_ret on_record(void *ctx, int cpu, struct perf_event_header *h)
{
	struct mmaprec *mr = ctx;
	const struct sample_id *sid;
	struct rec r = { 0 };

	(void)cpu;
	if (h->type == PERF_RECORD_LOST) {
		const struct lost_head *l = (const void *)h;

		if (h->size >= sizeof(*l))
			mr->lost += l->lost;
		return LIBBPF_PERF_EVENT_CONT;
	}
	if (h->size < sizeof(*h) + sizeof(*sid))
		return LIBBPF_PERF_EVENT_CONT;
	sid = (const void *)((const char *)h + h->size - sizeof(*sid));
	r.time = sid->time;
	r.type = h->type;
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (!parse_mmap2(h, &r))
			return LIBBPF_PERF_EVENT_CONT;
		break;
	case PERF_RECORD_COMM: {
		const struct comm_head *c = (const void *)h;

		r.pid = (pid_t)c->pid;
		r.tid = (pid_t)c->tid;
		r.exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
		if (r.pid != r.tid && !r.exec)
			return LIBBPF_PERF_EVENT_CONT;	/* a thread's own name */
		snprintf(r.comm, sizeof(r.comm), "%.*s", (int)sizeof(r.comm) - 1, c->comm);
		break;
	}
	case PERF_RECORD_FORK: {
		const struct fork_head *f = (const void *)h;

		if (f->pid == f->ppid)
			return LIBBPF_PERF_EVENT_CONT;	/* a new thread */
		r.pid = (pid_t)f->pid;
		r.ppid = (pid_t)f->ppid;
		break;
	}
	case PERF_RECORD_EXIT: {
		const struct fork_head *f = (const void *)h;

		/* on_task's alone: a process's end, by its first thread's. */
		if (mr->opts.trace || !mr->opts.on_task || f->pid != f->tid)
			return LIBBPF_PERF_EVENT_CONT;
		r.pid = (pid_t)f->pid;
		break;
	}
	default:
		return LIBBPF_PERF_EVENT_CONT;
	}
	if (mr->n == mr->cap) {
		size_t cap = mr->cap ? mr->cap * 2 : 256;
		struct rec *v = realloc(mr->v, cap * sizeof(*v));

		if (!v) {
			free(r.map.path);
			mr->lost++;
			return LIBBPF_PERF_EVENT_CONT;
		}
		mr->v = v;
		mr->cap = cap;
	}
	r.seq = mr->seq++;
	mr->v[mr->n++] = r;
	return LIBBPF_PERF_EVENT_CONT;
}

int mmaprec__new(const struct bpf_map *array, size_t pages, const struct mmaprec_opts *o,
		 struct mmaprec **out)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		/* bpf_ktime_get_ns()'s clock, so times compare with events'. */
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.watermark = 1,
		.wakeup_watermark = 1,
	};
	struct mmaprec *mr = calloc(1, sizeof(*mr));
	int err;

	if (!mr)
		return -ENOMEM;
	mr->opts = *o;
	mr->pb = perf_buffer__new_raw(bpf_map__fd(array), pages, &attr, on_record, mr, NULL);
	if (!mr->pb) {
		err = -errno;
		free(mr);
		return err;
	}
	*out = mr;
	return 0;
}

void mmaprec__free(struct mmaprec *mr)
{
	if (!mr)
		return;
	perf_buffer__free(mr->pb);
	for (size_t i = 0; i < mr->n; i++)
		free(mr->v[i].map.path);
	free(mr->v);
	free(mr);
}

static int by_time(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int apply(struct mmaprec *mr, struct rec *r)
{
	struct trace *t = mr->opts.trace;
	int err = 0;

	if (!t) {
		if (r->type == PERF_RECORD_MMAP2 && mr->opts.on_file)
			mr->opts.on_file(mr->opts.ctx, r->pid, &r->map);
		else if (r->type == PERF_RECORD_FORK && mr->opts.on_task)
			mr->opts.on_task(mr->opts.ctx, r->pid, r->ppid);
		else if (r->type == PERF_RECORD_EXIT && mr->opts.on_task)
			mr->opts.on_task(mr->opts.ctx, r->pid, 0);
		return 0;
	}
	switch (r->type) {
	case PERF_RECORD_MMAP2:
		err = trace__map_add(t, r->pid, &r->map);
		if (!err && mr->opts.on_file)
			mr->opts.on_file(mr->opts.ctx, r->pid, &r->map);
		break;
	case PERF_RECORD_COMM:
		if (r->exec)
			err = trace__map_exec(t, r->pid);
		trace__set_comm(t, r->pid, r->comm);
		break;
	case PERF_RECORD_FORK:
		err = trace__map_fork(t, r->ppid, r->pid);
		break;
	}
	return err;
}

int mmaprec__drain(struct mmaprec *mr)
{
	int err = 0, n;

	perf_buffer__consume(mr->pb);
	qsort(mr->v, mr->n, sizeof(*mr->v), by_time);
	for (size_t i = 0; i < mr->n; i++) {
		if (apply(mr, &mr->v[i])) {
			mr->lost++;
			err = -ENOMEM;
		}
		free(mr->v[i].map.path);
	}
	n = (int)mr->n;
	mr->n = 0;
	return err ? err : n;
}

uint64_t mmaprec__lost(const struct mmaprec *mr)
{
	return mr->lost;
}
