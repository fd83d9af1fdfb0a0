// SPDX-License-Identifier: MIT
/*
 * setup.c - the preload collector set up (see plstate.h): its variables
 * read, this image's live table made (ltwrite.c) and handed to
 * heapsnoop (hello.c) or, with no heapsnoop to take it, dumped by the
 * process itself (lastdump.c); threads registered as they first change
 * the table; fork's handlers (forkcopy.c); the dump at exit.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "forkcopy.h"
#include "heapsnoop/env.h"
#include "hello.h"
#include "lastdump.h"
#include "ltwrite.h"
#include "localstack.h"
#include "ltmods.h"
#include "ltstacks.h"
#include "plstate.h"
#include "interp/cops.h"
#include "teststop.h"

#define EXPORT __attribute__((visibility("default")))

void execmark__init(void);

static bool supervised;			/* heapsnoop holds the table */
static bool agent;			/* ... else heapsnoop agent reads it (HEAPSNOOP_AGENT) */
static pthread_key_t thread_key;

static void thread_end(void *arg)
{
	(void)arg;
	livetable__thread_end();
	lastdump__thread_end();
}

void pl_thread_start(void)
{
	livetable__thread_start();
	pthread_setspecific(thread_key, &lt_tls);
	lastdump__thread_start();
}

static unsigned long long env_num(const char *name, unsigned long long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

/* No heapsnoop to hold the table (@err): this process writes its own dumps. */
static void alone(int err, const char *what)
{
	supervised = false;
	lt.handover = NULL;	/* its segments are its own: nobody else reads them */
	/* Its words are heapsnoop's to name (a fork child's): no room walks. */
	for (const struct interp_cops *const *r = interp_crooms; *r; r++)
		*(*r)->on = false;
	lastdump__init(0, 0);
	dprintf(2, "heapsnoop-preload: pid %d: %s %s (%s): this process writes its own dumps "
		"(to %s)\n", (int)getpid(), what, hello__name(), strerror(err), lastdump__path());
}

static void at_fork_child(void)
{
	static struct forkcopy_segs segs;
	int parent = lt.base ? lt.h->pid : 0, fd, err = 0;

	fd = forkcopy__child(&segs);
	if (fd < -1) {
		dprintf(2, "heapsnoop-preload: pid %d: no live table of its own after fork (%s): "
			"its allocations are not recorded\n", (int)getpid(), strerror(-fd));
		__atomic_store_n(&pl_ready, 0, __ATOMIC_RELAXED);
		return;
	}
	TEST_STOP(5);
	if (supervised) {
		err = fd >= 0 ? hello__send(fd, LT_HELLO_FORK, parent, segs.fd, segs.id, segs.n) :
			lt_memfd_err;
		if (err)
			alone(err < 0 ? -err : err, "cannot hand its table to heapsnoop at");
	}
	else if (fd >= 0 && agent)
		hello__agent(fd, LT_HELLO_FORK, parent);	/* else the agent's look finds it */
	if (fd >= 0)
		close(fd);
	for (unsigned int i = 0; i < segs.n; i++)
		close(segs.fd[i]);
	lastdump__forked();
}

EXPORT pid_t fork(void)
{
	static pid_t (*real_fork)(void);
	pid_t p;

	if (unlikely(!real_fork))
		real_fork = dlsym(RTLD_NEXT, "fork");
	p = real_fork();
	if (p)
		forkcopy__forked(p);
	return p;
}

__attribute__((constructor)) static void collector_init(void)
{
	const char *unwind = getenv(HS_ENV_UNWIND), *interp = getenv(HS_ENV_INTERP);
	char comm[17] = "";
	int fd, err;

	pl_resolve();
	execmark__init();
	lastdump__resolve();
	pl_in_hook++;
	if (!pl_resolved())
		goto out;
	pl_sample_mean = env_num(HS_ENV_SAMPLE_BYTES, 0);
	pl_seed = env_num(HS_ENV_SEED, 0);
	if (!pl_seed)
		pl_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	test_stop__init();
	prctl(PR_GET_NAME, comm);
	fd = livetable__create(env_num(HS_ENV_TABLE_ENTRIES, 0), pl_sample_mean, comm);
	if (fd < -1 || ltstacks__init()) {
		dprintf(2, "heapsnoop-preload: pid %d: no live table (%s): nothing is recorded\n",
			(int)getpid(), strerror(fd < -1 ? -fd : ENOMEM));
		lt.base = NULL;
		goto out;
	}
	supervised = hello__init();
	/*
	 * Python frames only where heapsnoop names them (it reads the
	 * process): said in the header before the hello, so heapsnoop knows
	 * at once; a hello that fails turns the walk off (alone()).
	 */
	for (const struct interp_cops *const *r = interp_crooms; *r; r++)
		if (supervised && interp && strstr(interp, (*r)->name))
			(*r)->init();
	if (supervised) {
		err = fd >= 0 ? -hello__send(fd, LT_HELLO_IMAGE, 0, NULL, NULL, 0) : lt_memfd_err;
		if (err)
			alone(err, "cannot hand its table to heapsnoop at");
		else
			lt.handover = hello__segment;	/* from here, each segment made */
	} else {
		lastdump__init((int)env_num(HS_ENV_SIGNAL, 0),
			       (unsigned int)env_num(HS_ENV_INTERVAL, 0));
		agent = fd >= 0 && hello__agent_init();
		if (agent)
			hello__agent(fd, LT_HELLO_IMAGE, 0);	/* else the agent's look finds it */
	}
	if (fd >= 0)
		close(fd);
	/* After the hello: a segment made from here on is handed over as it is made. */
	ltmods__refresh();
	pthread_key_create(&thread_key, thread_end);
	pl_thread_start();
	localstack__init(unwind && !strcmp(unwind, "fp"), (unsigned int)env_num(HS_ENV_SNIP_PRE, 0),
			 (unsigned int)env_num(HS_ENV_SNIP_POST, 0));
	pthread_atfork(forkcopy__prepare, forkcopy__parent, at_fork_child);
	__atomic_store_n(&pl_ready, 1, __ATOMIC_RELEASE);
out:
	pl_in_hook--;
}

__attribute__((destructor)) static void collector_fini(void)
{
	/* After the program's destructors; other threads may still run and take locks: let them. */
	if (lastdump_on)
		lastdump__write("exit", "exit", false);
}
