// SPDX-License-Identifier: MIT
/*
 * creator.c - who created a thread, in the process (see creator.h): the
 * collector's pthread_create. It takes the calling thread's stack with
 * the collector's unwinder (its own frames dropped, --snip-pre not
 * applied: that is the allocation's), puts pthread_create first and the
 * creating thread's own chain after a boundary, and starts the thread in
 * creator_start(), which names the chain in a thread-local pointer for
 * the thread's allocations (preload.c's this_stack()) while the user's
 * start routine runs, and frees it when the thread ends (its return,
 * pthread_exit, cancellation: a cleanup handler). The start routine's
 * frame is the collector's, between start_thread and the user's: the
 * walk goes through it by its CFI to the thread's start as before, and
 * creator__append() drops it. pthread_create failing: the chain freed,
 * its error returned. No chain (not tracking, or no memory for it): the
 * thread is made as asked, its stacks end at its start.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "creator.h"
#include "localstack.h"
#include "ltwrite.h"
#include "plstate.h"
#include "records.h"

#define EXPORT __attribute__((visibility("default")))

__thread const struct creator *creator_self __attribute__((tls_model("initial-exec")));
__thread int creator_calling __attribute__((tls_model("initial-exec")));

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static create_fn real_create(void)
{
	static create_fn fn;
	create_fn f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);

	if (!f) {
		f = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
		__atomic_store_n(&fn, f, __ATOMIC_RELEASE);
	}
	return f;
}

/* @f[@depth] without creator_start()'s frame (among its outermost): the new depth. */
static uint32_t drop_start(uint64_t *f, uint32_t depth)
{
	uint32_t lo = depth > 4 ? depth - 4 : 0;

	for (uint32_t i = depth; i-- > lo;) {
		if (f[i] >= localstack_self_start && f[i] < localstack_self_end) {
			memmove(f + i, f + i + 1, (depth - i - 1) * sizeof(*f));
			return depth - 1;
		}
	}
	return depth;
}

/*
 * The chain of a thread the calling thread makes with @fn: pthread_create
 * itself (as a return address: its entry + 1, named pthread_create), the
 * calling thread's stack from its caller of pthread_create on, then, if
 * that stack is whole and the calling thread has a creator, the boundary
 * and that creator's chain; at most CREATOR_MAX_FRAMES frames (more:
 * cut=depth). In memory of the C library's malloc, of its size; NULL
 * without.
 */
static struct creator *creator_new(create_fn fn)
{
	uint64_t buf[LOCALSTACK_BUF_FOR(CREATOR_MAX_FRAMES)];
	const struct creator *up = creator_self;
	int room = LOCALSTACK_SKIP_MAX + CREATOR_MAX_FRAMES, n, k = 0;
	uint32_t own, cut = 0, ups = 0;
	bool broken = false;
	struct creator *c;

	lt_section_enter();
	n = localstack_fp ? localstack__walk_fp((void **)buf, room) :
		localstack__walk((void **)buf, room, &broken);
	lt_section_exit();
	while (k < n && k < LOCALSTACK_SKIP_MAX && buf[k] >= localstack_self_start &&
	       buf[k] < localstack_self_end)
		k++;
	own = drop_start(buf + k, (uint32_t)(n - k));
	if (own > CREATOR_MAX_FRAMES - 1) {
		own = CREATOR_MAX_FRAMES - 1;
		cut = REC_CUT_DEPTH;
	} else if (broken) {
		cut = REC_CUT_UNREADABLE;
	}
	/* The creating thread's creator: only after a stack that reached its thread's start. */
	if (up && !cut && 1 + own + 1 < CREATOR_MAX_FRAMES) {
		ups = up->n;
		if (1 + own + 1 + ups > CREATOR_MAX_FRAMES) {
			ups = CREATOR_MAX_FRAMES - (1 + own + 1);
			cut = REC_CUT_DEPTH;
		}
		cut |= up->cut;
	} else if (up && !cut) {
		cut = REC_CUT_DEPTH;
	}
	c = pl_libc_malloc(sizeof(*c) + (1 + own + (up && ups ? 1 + ups : 0)) * sizeof(uint64_t));
	if (!c)
		return NULL;
	c->frames[0] = (uint64_t)(uintptr_t)fn + 1;
	memcpy(c->frames + 1, buf + k, own * sizeof(uint64_t));
	c->n = 1 + own;
	if (up && ups) {
		c->frames[c->n++] = LT_CREATOR_FRAME;
		memcpy(c->frames + c->n, up->frames, ups * sizeof(uint64_t));
		c->n += ups;
	}
	c->cut = cut;
	return c;
}

static void creator_gone(void *arg)
{
	creator_self = NULL;
	pl_libc_free(arg);
}

/* The new thread's start: its creator named while the user's start routine runs. */
static void *creator_start(void *arg)
{
	struct creator *c = arg;
	void *ret;

	creator_self = c;
	pthread_cleanup_push(creator_gone, c);
	ret = c->start(c->arg);
	pthread_cleanup_pop(1);
	return ret;
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*start)(void *),
			  void *arg)
{
	create_fn fn = real_create();
	struct creator *c = NULL;
	int err;

	if (!fn)
		return EAGAIN;
	if (__atomic_load_n(&pl_ready, __ATOMIC_RELAXED) && !pl_in_hook && lt.h) {
		pl_in_hook++;
		c = creator_new(fn);
		pl_in_hook--;
	}
	if (!c)
		return fn(t, attr, start, arg);
	c->start = start;
	c->arg = arg;
	/* Before any stack holds the boundary: a dump names it from now on. */
	if (!__atomic_load_n(&lt.h->creators, __ATOMIC_RELAXED))
		__atomic_store_n(&lt.h->creators, 1, __ATOMIC_RELEASE);
	/* The C library's allocations in it: this frame dropped from their stacks. */
	creator_calling++;
	err = fn(t, attr, creator_start, c);
	creator_calling--;
	if (err) {
		pl_libc_free(c);	/* no thread: nothing else holds it */
		return err;
	}
	return 0;
}

uint32_t creator__append(uint64_t *f, uint32_t depth, uint32_t room, uint32_t *cut, bool chain)
{
	const struct creator *c = creator_self;
	uint32_t n;

	if (creator_calling) {
		/* pthread_create's frame (this file's), between its caller and the C library's. */
		for (uint32_t i = 0; i < depth; i++) {
			if (f[i] >= localstack_self_start && f[i] < localstack_self_end) {
				memmove(f + i, f + i + 1, (depth - i - 1) * sizeof(*f));
				depth--;
				break;
			}
		}
	}
	depth = drop_start(f, depth);
	if (!c || !chain || *cut || depth + 1 >= room)
		return depth;
	f[depth++] = LT_CREATOR_FRAME;
	n = c->n <= room - depth ? c->n : room - depth;
	memcpy(f + depth, c->frames, n * sizeof(*f));
	*cut |= c->cut | (n < c->n ? REC_CUT_DEPTH : 0);
	return depth + n;
}
