// SPDX-License-Identifier: MIT
/*
 * detach.c - BPF links destroyed together (see detach.h): a pool of
 * threads takes the links one by one from a shared index, so that as
 * many closes wait in the kernel at once as there are threads.
 */
#include <bpf/libbpf.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "detach.h"

#define LINK_BATCH_MAX_THREADS 64

/* A libbpf link, or a link's bare file descriptor (umulti.h). */
struct batch_link {
	struct bpf_link *l;
	int fd;
};

struct link_batch {
	struct batch_link *v;
	size_t n, cap;
	size_t next;	/* the next link to destroy (atomic) */
};

struct link_batch *link_batch__new(void)
{
	return calloc(1, sizeof(struct link_batch));
}

static void add(struct link_batch *b, struct bpf_link *l, int fd)
{
	if (b && b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 32;
		struct batch_link *v = realloc(b->v, cap * sizeof(*v));

		if (v) {
			b->v = v;
			b->cap = cap;
		}
	}
	if (b && b->n < b->cap)
		b->v[b->n++] = (struct batch_link){ .l = l, .fd = fd };
	else if (l)
		bpf_link__destroy(l);
	else
		close(fd);
}

void link_batch__add(struct link_batch *b, struct bpf_link *l)
{
	if (l)
		add(b, l, -1);
}

void link_batch__add_fd(struct link_batch *b, int fd)
{
	if (fd >= 0)
		add(b, NULL, fd);
}

static void *destroy_some(void *arg)
{
	struct link_batch *b = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED)) < b->n) {
		if (b->v[i].l)
			bpf_link__destroy(b->v[i].l);
		else
			close(b->v[i].fd);
	}
	return NULL;
}

void link_batch__destroy(struct link_batch *b)
{
	pthread_t tid[LINK_BATCH_MAX_THREADS];
	size_t nt = 0;

	if (!b)
		return;
	/* The others started, the caller takes links too. */
	while (nt + 1 < b->n && nt < LINK_BATCH_MAX_THREADS &&
	       !pthread_create(&tid[nt], NULL, destroy_some, b))
		nt++;
	destroy_some(b);
	while (nt > 0)
		pthread_join(tid[--nt], NULL);
	free(b->v);
	free(b);
}
