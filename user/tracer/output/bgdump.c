// SPDX-License-Identifier: MIT
/*
 * bgdump.c - dumps written by a forked child from its snapshot while the
 * loader reads events (see bgdump.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bgdump.h"
#include "msg.h"
#include "dump.h"

struct bgdump {
	pid_t pid;		/* the running writer, or 0 */
	pid_t last;		/* the last writer, until its exit event */
	FILE *out;		/* where the dump goes */
	FILE *hold;		/* the loader's records meanwhile */
	char *held;		/* the hold's buffer (open_memstream) */
	size_t held_len;
	double longest;		/* s: the loader's longest stop for a dump */
	struct summary_opts so;	/* the -s summary's */
};

struct bgdump *bgdump__new(const struct summary_opts *so)
{
	struct bgdump *b = calloc(1, sizeof(*b));

	if (!b)
		elog("out of memory");
	else
		b->so = *so;
	return b;
}

void bgdump__free(struct bgdump *b)
{
	if (!b)
		return;
	bgdump__reap(b, true);
	free(b);
}

/* The dump and the summary, in the child (@copy) or here; 0 or -EIO. */
static int write_dump(struct trace *t, FILE *out, const char *reason, unsigned int summary,
		      const struct summary_opts *so, bool copy)
{
	int err = copy ? report__dump_copy(t, out, reason) : report__dump(t, out, reason);

	if (summary) {
		struct symbolizer *sym = symbolizer__new(NULL);

		report__summary(t, sym, stderr, summary, so);
		symbolizer__free(sym);
	}
	return err;
}

/* The child: write, then leave without running anything of the loader's. */
static void __attribute__((noreturn)) child(struct trace *t, FILE *out, const char *reason,
					    unsigned int summary, const struct summary_opts *so)
{
	int err;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	err = write_dump(t, out, reason, summary, so, true);
	if (fflush(out) == EOF || ferror(out))
		err = -EIO;
	_exit(err ? 1 : 0);
}

/* Fork the child, the hold opened: 0, or -errno (said: nothing started). */
static int start(struct bgdump *b, struct trace *t, FILE *out, const char *reason,
		 unsigned int summary)
{
	pid_t pid;
	int err;

	b->hold = open_memstream(&b->held, &b->held_len);
	if (!b->hold) {
		err = -errno;
		elog("cannot write the dump in the background (memory stream): %s; "
		     "written in the foreground", strerror(errno));
		return err;
	}
	/* JIT frames named late: in the loader, so the next dump need not again. */
	trace__retry_jit(t, NULL);
	fflush(out);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		child(t, out, reason, summary, &b->so);
	if (pid < 0) {
		err = -errno;
		elog("cannot write the dump in the background (fork): %s; written in the "
		     "foreground", strerror(errno));
		fclose(b->hold);
		free(b->held);
		b->hold = NULL;
		b->held = NULL;
		return err;
	}
	b->pid = pid;
	b->last = pid;
	b->out = out;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int bgdump__dump(struct bgdump *b, struct trace *t, FILE *out, const char *reason,
		 unsigned int summary)
{
	double t0 = now_s();
	int err = 0;

	if (b->pid)
		return -EBUSY;
	if (!start(b, t, out, reason, summary))
		report__dump_written(t);
	else if (write_dump(t, out, reason, summary, &b->so, false))
		err = -EIO;
	if (err)
		elog("writing records failed: %s", strerror(errno));
	if (now_s() - t0 > b->longest)
		b->longest = now_s() - t0;
	return err;
}

double bgdump__longest_ms(const struct bgdump *b)
{
	return b ? b->longest * 1e3 : 0;
}

FILE *bgdump__out(struct bgdump *b, FILE *out)
{
	return b && b->pid ? b->hold : out;
}

bool bgdump__running(const struct bgdump *b)
{
	return b && b->pid;
}

bool bgdump__owns(const struct bgdump *b, pid_t pid)
{
	return b && pid && (pid == b->pid || pid == b->last);
}

void bgdump__gone(struct bgdump *b, pid_t pid)
{
	if (b && pid == b->last && pid != b->pid)
		b->last = 0;
}

/* The child's end as said on stderr: 0, or -EIO if its dump is not whole. */
static int child_status(pid_t pid, int st)
{
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	if (WIFSIGNALED(st))
		elog("the dump written in the background (pid %d) was killed by signal %d: "
		     "it is incomplete", pid, WTERMSIG(st));
	else
		elog("writing records failed (the dump written in the background, pid %d)", pid);
	return -EIO;
}

int bgdump__reap(struct bgdump *b, bool wait)
{
	int st, err;
	pid_t r;

	if (!b->pid)
		return 0;
	while ((r = waitpid(b->pid, &st, wait ? 0 : WNOHANG)) < 0 && errno == EINTR)
		;
	if (r == 0)
		return 0;
	err = r < 0 ? -EIO : child_status(b->pid, st);
	if (r < 0)
		elog("cannot wait for the dump written in the background: %s", strerror(errno));
	b->pid = 0;
	/* The loader's records held meanwhile, after the dump. */
	if (fclose(b->hold) == EOF ||
	    (b->held_len && fwrite(b->held, 1, b->held_len, b->out) != b->held_len) ||
	    fflush(b->out) == EOF) {
		elog("writing records failed: %s", strerror(errno));
		err = -EIO;
	}
	free(b->held);
	b->hold = NULL;
	b->held = NULL;
	b->held_len = 0;
	return err ? err : 1;
}
