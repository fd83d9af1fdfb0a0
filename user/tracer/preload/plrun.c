// SPDX-License-Identifier: MIT
/*
 * plrun.c - `heapsnoop --preload` (see preload.h): the library
 * (pllib.c), the socket (plsock.c), the command forked with the
 * collector's environment, then one loop until every process it made has
 * ended: hellos taken, ends written, SIGUSR1 and -i dumps (plimage.c).
 *
 * heapsnoop is the command's parent and a child subreaper
 * (PR_SET_CHILD_SUBREAPER): a descendant whose parent ends becomes
 * heapsnoop's child, so that when waitpid() says no child is left, no
 * process that could still say hello is, and the run is over (as strace
 * -f waits for every process it follows). Where the kernel has no
 * pidfd_open (before 5.3), the processes write their own dumps
 * (lastdump.c) to -o's file, and kill -9 loses them: said.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frametab.h"
#include "heapsnoop/env.h"
#include "interp/interp.h"
#include "msg.h"
#include "outfile.h"
#include "output/summary.h"
#include "output/ttylog.h"
#include "plimage.h"
#include "pllib.h"
#include "plsock.h"
#include "preload.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

struct run {
	const struct preload_opts *o;
	struct pllib lib;
	struct plsock sock;
	struct plimages *ims;
	unsigned int summary;		/* -s's top N (on a terminal: 10), 0: none */
	struct summary *sum;		/* its stacks, or NULL */
	struct frametab *sum_names;	/* their interpreter frames' names, or NULL */
	struct outfile *of;
	const char *output;		/* -o, or the log named for a terminal */
	char logpath[64];		/* that log's name (ttylog.h), "" without one */
	int out_fd;
	int sfd, tfd;
	sigset_t mask;
	pid_t child;
	int child_status;
	bool child_done, no_children, stop;
	int signals;			/* SIGINT/SIGTERM taken */
	bool standalone;		/* no pidfd_open: the processes dump themselves */
};

static int set_num(const char *name, unsigned long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", v);
	return setenv(name, buf, 1);
}

/* -o made absolute: the command may change its directory. */
static void abs_output(const char *o, char *out, size_t cap)
{
	if (o[0] != '/' && getcwd(out, cap)) {
		size_t n = strlen(out);

		snprintf(out + n, cap - n, "/%s", o);
	} else {
		snprintf(out, cap, "%s", o);
	}
}

/* The collector's environment, inherited by the command and its descendants. */
static int environment(struct run *r)
{
	const struct preload_opts *o = r->o;
	const char *old = getenv("LD_PRELOAD");
	char pre[2 * PATH_MAX], out[PATH_MAX + 8];
	int err = 0;

	snprintf(pre, sizeof(pre), "%s%s%s", r->lib.path, old && *old ? ":" : "", old ? old : "");
	err |= setenv("LD_PRELOAD", pre, 1);
	unsetenv(HS_ENV_SIGNAL);
	unsetenv(HS_ENV_INTERVAL);
	unsetenv(HS_ENV_OUTPUT);
	if (o->sample_bytes)
		err |= set_num(HS_ENV_SAMPLE_BYTES, o->sample_bytes);
	if (o->seed)
		err |= set_num(HS_ENV_SEED, o->seed);
	if (o->unwind_fp)
		err |= setenv(HS_ENV_UNWIND, "fp", 1);
	unsetenv(HS_ENV_SNIP_PRE);
	unsetenv(HS_ENV_SNIP_POST);
	if (o->snip_pre)
		err |= set_num(HS_ENV_SNIP_PRE, o->snip_pre);
	if (o->snip_post)
		err |= set_num(HS_ENV_SNIP_POST, o->snip_post);
	/*
	 * Python frames (docs/COLLECTOR.md, "Python frames") and Lua's
	 * ("Lua frames"): the collector reads them, heapsnoop names them.
	 * Each runtime's own environment for the command is its row's
	 * (interp__command_env(): CPython's PYTHONMALLOC=malloc, as the
	 * tracer's launch mode; --interp none: left alone).
	 */
	unsetenv(HS_ENV_INTERP);
	if ((o->python || o->lua) && !r->standalone) {
		err |= setenv(HS_ENV_INTERP, !o->lua ? "python" : !o->python ? "lua" : "python,lua", 1);
		err |= interp__command_env(&(struct interp_opts){ .python = o->python, .lua = o->lua,
							    .verbose = o->verbose },
					     o->argv && o->argv[0] ? o->argv[0] : NULL) != 0;
	}
	if (r->standalone) {
		/* Each process appends its own dumps to -o's file (or standard error). */
		if (r->output) {
			abs_output(r->output, out, sizeof(out));
			err |= setenv(HS_ENV_OUTPUT, out, 1);
		}
		if (o->interval)
			err |= set_num(HS_ENV_INTERVAL, o->interval);
		err |= set_num(HS_ENV_SIGNAL, SIGUSR1);
	} else {
		err |= setenv(HS_ENV_SOCK, r->sock.name, 1);
		err |= setenv(HS_ENV_TOKEN, r->sock.token, 1);
		/* A process that cannot reach heapsnoop writes beside -o's file, never in it. */
		if (r->output) {
			abs_output(r->output, out, sizeof(out));
			strncat(out, ".%p", sizeof(out) - strlen(out) - 1);
			err |= setenv(HS_ENV_OUTPUT, out, 1);
		}
	}
	if (err)
		elog("cannot set the collector's environment: %s", strerror(errno));
	return err ? -EINVAL : 0;
}

/* Fork the command; 0, or 127 after saying why it could not run. */
static int start(struct run *r)
{
	int p[2], e = 0;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC)) {
		elog("cannot start %s: %s", r->o->argv[0], strerror(errno));
		return 127;
	}
	r->child = fork();
	if (r->child < 0) {
		elog("cannot start %s: %s", r->o->argv[0], strerror(errno));
		return 127;
	}
	if (!r->child) {
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &r->mask, NULL);
		execvp(r->o->argv[0], r->o->argv);
		e = errno;
		if (write(p[1], &e, sizeof(e)) != sizeof(e))
			_exit(127);
		_exit(127);
	}
	close(p[1]);
	do
		n = read(p[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n == sizeof(e)) {
		elog("cannot run %s: %s", r->o->argv[0], strerror(e));
		waitpid(r->child, NULL, 0);
		return 127;
	}
	return 0;
}

/* Every child that ended reaped: the command's status kept. */
static void reap(struct run *r)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == r->child) {
			r->child_status = st;
			r->child_done = true;
		}
	}
	r->no_children = p < 0 && errno == ECHILD;
}

static void take_hellos(struct run *r)
{
	if (!r->standalone)
		plimages__take(r->ims);
}

static void on_signal(struct run *r, const struct signalfd_siginfo *si)
{
	switch (si->ssi_signo) {
	case SIGCHLD:
		reap(r);
		break;
	case SIGUSR1:
		if (r->standalone)
			kill(r->child, SIGUSR1);
		else
			plimages__dump(r->ims, "usr1");
		break;
	default:
		/*
		 * The first SIGINT or SIGTERM ends the command (passed on unless
		 * the terminal sent it to the command already), the run goes on
		 * to its end; a second stops at once, with a dump of what runs.
		 */
		if (++r->signals > 1) {
			r->stop = true;
		} else if (si->ssi_code != SI_KERNEL && !r->child_done) {
			kill(r->child, (int)si->ssi_signo);
		}
		break;
	}
}

/* The processes whose pidfd says they ended, after the hellos before their end. */
static void ends(struct run *r)
{
	take_hellos(r);
	for (size_t i = plimages__alive(r->ims); i-- > 0;) {
		struct pollfd p = { plimages__pidfd(r->ims, i), POLLIN, 0 };

		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP)))
			plimages__ended(r->ims, i);
	}
}

static int loop(struct run *r)
{
	struct pollfd *p = NULL;
	size_t cap = 0;

	for (;;) {
		size_t n = 0, alive = r->standalone ? 0 : plimages__alive(r->ims);

		if (r->child_done && r->no_children) {
			ends(r);
			if (r->standalone || !plimages__alive(r->ims))
				break;
		}
		if (cap < alive + 3) {
			struct pollfd *q = realloc(p, (alive + 3) * 2 * sizeof(*p));

			if (!q) {
				elog("out of memory");
				free(p);
				return 1;
			}
			p = q;
			cap = (alive + 3) * 2;
		}
		p[n++] = (struct pollfd){ r->sfd, POLLIN, 0 };
		if (!r->standalone)
			p[n++] = (struct pollfd){ r->sock.fd, POLLIN, 0 };
		if (r->tfd >= 0)
			p[n++] = (struct pollfd){ r->tfd, POLLIN, 0 };
		for (size_t i = 0; i < alive; i++)
			p[n++] = (struct pollfd){ plimages__pidfd(r->ims, i), POLLIN, 0 };
		/* New stacks named while their process lives (Python frames): every 10 ms. */
		if (poll(p, (nfds_t)n, !r->standalone && plimages__python(r->ims) ? 10 : -1) < 0 &&
		    errno != EINTR) {
			elog("poll: %s", strerror(errno));
			free(p);
			return 1;
		}
		take_hellos(r);
		if (!r->standalone)
			plimages__scan(r->ims);
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(r->sfd, &si, sizeof(si)) == sizeof(si))
				on_signal(r, &si);
		}
		if (r->tfd >= 0 && (p[r->standalone ? 1 : 2].revents & POLLIN)) {
			uint64_t ticks;

			if (read(r->tfd, &ticks, sizeof(ticks)) == sizeof(ticks) && !r->standalone)
				plimages__dump(r->ims, "interval");
		}
		if (!r->standalone)
			ends(r);
		if (r->stop) {
			if (!r->standalone)
				plimages__dump(r->ims, "signal");
			break;
		}
	}
	free(p);
	return 0;
}

static int setup(struct run *r)
{
	const struct preload_opts *o = r->o;
	long pidfd = syscall(SYS_pidfd_open, getpid(), 0);

	if (pidfd >= 0)
		close((int)pidfd);
	else if (errno == ENOSYS)
		r->standalone = true;
	if (r->standalone)
		elog("this kernel has no pidfd_open (5.3): each process writes its own dumps (at "
		     "exit, _exit and fatal signals); kill -9 loses them");
	if (pllib__choose(&r->lib) || (!r->standalone && plsock__open(&r->sock)))
		return 1;
	if (o->output) {
		r->of = outfile__open(o->output);
		if (!r->of)
			return 1;
	} else if (ttylog__wanted(o->output)) {
		r->of = ttylog__create(o->argv, 0, r->logpath, sizeof(r->logpath));
		if (!r->of)
			return 1;
		r->output = r->logpath;
		elog("writing the records to %s (standard output is a terminal; -o FILE or a "
		     "pipe takes them instead)", r->logpath);
		/* And -s, as the tracer's. */
		if (!r->summary)
			r->summary = 10;
	}
	if (environment(r))
		return 1;
	/* A descendant whose parent ends is ours to wait for. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		elog("cannot wait for the command's orphaned descendants (%s): the run ends "
		     "with the command", strerror(errno));
	sigemptyset(&r->mask);
	sigaddset(&r->mask, SIGCHLD);
	sigaddset(&r->mask, SIGUSR1);
	sigaddset(&r->mask, SIGINT);
	sigaddset(&r->mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &r->mask, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a reader gone is a write error, said */
	r->sfd = signalfd(-1, &r->mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r->sfd < 0) {
		elog("signalfd: %s", strerror(errno));
		return 1;
	}
	if (o->interval && !r->standalone) {
		struct itimerspec it = { { (time_t)o->interval, 0 }, { (time_t)o->interval, 0 } };

		r->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (r->tfd < 0 || timerfd_settime(r->tfd, 0, &it, NULL)) {
			elog("cannot set the -i timer: %s", strerror(errno));
			return 1;
		}
	}
	return 0;
}

/* An interpreter's frame of the summary, by the names its images' were copied into. */
static bool name_frame(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	return ctx && frametab__symbolize(ctx, pid, addr, f);
}

/* -s: the summary of every image's last live set, as the BPF tracer's (summary.h). */
static void summarize(struct run *r)
{
	const struct preload_opts *o = r->o;
	struct symbolizer *sym = symbolizer__new(NULL);

	summary__write(r->sum, sym, name_frame, r->sum_names, r->summary,
		       &(struct summary_opts){ o->default_supp, o->output, o->full_stacks },
		       stderr);
	symbolizer__free(sym);
}

int preload__run(const struct preload_opts *o)
{
	struct run r = { .o = o, .summary = o->summary, .output = o->output, .out_fd = 1, .sfd = -1, .tfd = -1,
			 .sock = { .fd = -1 }, .lib = { .fd = -1 } };
	int status = 1, lost = 0;
	FILE *f;

	if (setup(&r))
		goto out;
	/* Said, not ignored: without heapsnoop holding the tables, nothing to sum up. */
	if (r.summary && r.standalone)
		elog("-s: the processes write their own dumps here: no summary; heapdecode "
		     "--report on the records gives their stacks by live bytes");
	/* Alone, the processes append to it from their start: emptied before. */
	if (r.of && r.standalone) {
		if (!outfile__start(r.of)) {
			status = 1;
			goto out;
		}
		outfile__close(r.of);
		r.of = NULL;
	}
	status = start(&r);
	if (status)
		goto out;
	if (r.of) {
		f = outfile__start(r.of);
		if (!f) {
			status = 1;
			goto out;
		}
		r.out_fd = fileno(f);
	}
	if (!r.standalone) {
		r.ims = plimages__new(r.out_fd, &r.sock, o->verbose,
				      o->python || o->lua);
		if (!r.ims) {
			elog("out of memory");
			goto out;
		}
		if (r.summary) {
			r.sum = summary__new();
			r.sum_names = frametab__new();
			if (!r.sum || !r.sum_names)
				elog("out of memory for the -s summary: not written");
			if (!r.sum_names) {
				summary__free(r.sum);
				r.sum = NULL;
			}
			plimages__summary(r.ims, r.sum, r.sum_names);
		}
	}
	status = loop(&r);
	if (!r.standalone)
		lost = plimages__finish(r.ims);
	if (r.sum)
		summarize(&r);
	if (r.of && outfile__close(r.of))
		status = 1;
	else if (r.logpath[0])
		ttylog__next(stderr, r.logpath);
	r.of = NULL;
	if (status || lost == 1) {
		status = 1;
	} else if (lost) {
		elog("exit status 3: not everything was recorded (the command's own status: %s %d)",
		     WIFSIGNALED(r.child_status) ? "signal" : "exit",
		     WIFSIGNALED(r.child_status) ? WTERMSIG(r.child_status) :
		     WEXITSTATUS(r.child_status));
		status = 3;
	} else if (!r.child_done) {
		status = 128 + SIGINT;	/* stopped before the command ended */
	} else if (WIFEXITED(r.child_status)) {
		status = WEXITSTATUS(r.child_status);
	} else if (WIFSIGNALED(r.child_status)) {
		status = 128 + WTERMSIG(r.child_status);
	}
out:
	summary__free(r.sum);
	frametab__free(r.sum_names);
	plimages__free(r.ims);
	if (r.of)
		outfile__close(r.of);
	plsock__close(&r.sock);
	pllib__cleanup(&r.lib);
	if (r.sfd >= 0)
		close(r.sfd);
	if (r.tfd >= 0)
		close(r.tfd);
	return status;
}
