// SPDX-License-Identifier: MIT
/* flow.c - holding the traced processes while heapsnoop catches up (see flow.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "flow.h"

struct flow {
	struct flow_opts o;
	int epfd, stopfd;
	pthread_t watch;
	bool watching;
	bool realtime;		/* the watch thread runs SCHED_FIFO */
	int err;
};

static void set(struct flow *f, bool on)
{
	int err = f->o.hold(f->o.ctx, on);

	if (err)
		__atomic_compare_exchange_n(&f->err, &(int){ 0 }, err, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
}

static void *watch_main(void *arg)
{
	struct flow *f = arg;
	struct epoll_event ev[2];
	struct sched_param sp = { .sched_priority = 1 };

	/*
	 * Real-time, where allowed (root, CAP_SYS_NICE): on a machine whose
	 * CPUs are all busy, a thread of the normal class woken at the mark
	 * may wait for its turn longer than the ring takes to fill. It only
	 * looks at two words and writes one file, then sleeps again.
	 */
	__atomic_store_n(&f->realtime, !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp),
			 __ATOMIC_RELAXED);

	for (;;) {
		int n = epoll_wait(f->epfd, ev, 2, FLOW_WATCH_MS);

		for (int i = 0; i < n; i++)
			if (ev[i].data.fd == f->stopfd)
				return NULL;
		if (f->o.backlog(f->o.ctx) >= f->o.high)
			set(f, true);
	}
}

int flow__start(const struct flow_opts *o, struct flow **out)
{
	struct flow *f = calloc(1, sizeof(*f));
	struct epoll_event ring = { .events = EPOLLIN | EPOLLET }, stop = { .events = EPOLLIN };
	int err;

	if (!f)
		return -ENOMEM;
	f->o = *o;
	f->epfd = epoll_create1(EPOLL_CLOEXEC);
	f->stopfd = eventfd(0, EFD_CLOEXEC);
	ring.data.fd = o->ring_fd;
	stop.data.fd = f->stopfd;
	if (f->epfd < 0 || f->stopfd < 0 ||
	    epoll_ctl(f->epfd, EPOLL_CTL_ADD, o->ring_fd, &ring) ||
	    epoll_ctl(f->epfd, EPOLL_CTL_ADD, f->stopfd, &stop)) {
		err = -errno;
		goto fail;
	}
	err = -pthread_create(&f->watch, NULL, watch_main, f);
	if (err)
		goto fail;
	f->watching = true;
	*out = f;
	return 0;
fail:
	flow__stop(f);
	return err;
}

void flow__backlog(struct flow *f, uint64_t backlog)
{
	if (backlog >= f->o.high)
		set(f, true);
	else if (backlog <= f->o.low)
		set(f, false);
}

bool flow__realtime(const struct flow *f)
{
	return __atomic_load_n(&f->realtime, __ATOMIC_RELAXED);
}

int flow__error(const struct flow *f)
{
	return __atomic_load_n(&f->err, __ATOMIC_RELAXED);
}

void flow__stop(struct flow *f)
{
	if (!f)
		return;
	if (f->watching) {
		uint64_t one = 1;

		if (write(f->stopfd, &one, sizeof(one)) == sizeof(one))
			pthread_join(f->watch, NULL);
		else
			pthread_cancel(f->watch);
	}
	if (f->o.hold)
		f->o.hold(f->o.ctx, false);
	if (f->epfd >= 0)
		close(f->epfd);
	if (f->stopfd >= 0)
		close(f->stopfd);
	free(f);
}
