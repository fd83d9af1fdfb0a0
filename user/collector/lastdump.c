// SPDX-License-Identifier: MIT
/*
 * lastdump.c - the process's own dumps of its table (see lastdump.h).
 *
 * Signals: for each signal whose default action ends the process (but
 * HEAPSNOOP_SIGNAL's, SIGKILL and SIGSTOP), where the disposition at
 * start is the default, the collector's handler is installed, on an
 * alternate stack (a stack overflow's SIGSEGV has no stack left). The
 * program's sigaction(), signal(), bsd_signal() and sysv_signal() for
 * those signals are recorded and reported back as its own, and the
 * collector's handler stays, with the program's mask and flags: on a
 * signal the program's handler runs first; if it returns having left a
 * handler in place (it recovered: a guard page, siglongjmp never
 * returns), nothing more; else (none, or it put the default back, as
 * Python's faulthandler does) the dump, then the default action for
 * real: the disposition set to SIG_DFL, the signal raised again and
 * unblocked, so the process ends of the same signal, status and core as
 * without the collector. A handler set by the raw rt_sigaction system
 * call escapes this: only heapsnoop --preload survives that.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "heapsnoop/env.h"
#include "heapsnoop/livedump.h"
#include "lastdump.h"
#include "ltwrite.h"

#define EXPORT __attribute__((visibility("default")))
#define ALTSTACK_SIZE (64 * 1024)

bool lastdump_on;

static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static void (*real__exit)(int) __attribute__((noreturn));
static void (*real_quick_exit)(int) __attribute__((noreturn));

static char out_name[4096];		/* HEAPSNOOP_OUTPUT, %p not yet replaced */
static char out_path[4096 + 16];	/* ... for this process; "": standard error */
static unsigned int interval_s;
static long long next_interval_ns;
static int usr_sig;
static int dumping_tid;			/* the thread writing a dump, 0 */
static struct lt_out out;		/* one dump at a time (dumping_tid) */

static const int fatal_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP, SIGSYS,
				  SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGXCPU,
				  SIGXFSZ, SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF };
#define NFATAL (sizeof(fatal_sigs) / sizeof(fatal_sigs[0]))
static struct sigaction prog_act[NSIG];	/* what the program set, as it sees it */
static bool watched[NSIG];

void lastdump__resolve(void)
{
	real_sigaction = dlsym(RTLD_NEXT, "sigaction");
	real__exit = dlsym(RTLD_NEXT, "_exit");
	real_quick_exit = dlsym(RTLD_NEXT, "quick_exit");
}

/* --- saying, without stdio -------------------------------------------------- */

static void say_parts(const char *const *parts, size_t n)
{
	char buf[512];
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		for (const char *p = parts[i]; p && *p && len < sizeof(buf) - 1; p++)
			buf[len++] = *p;
	buf[len++] = '\n';
	if (write(2, buf, len) < 0)
		return;	/* nowhere else to say it */
}

static const char *num(uint64_t v, char *buf)
{
	char *p = buf + 23;

	*p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	return p;
}

/* --- the dump ------------------------------------------------------------- */

static long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* HEAPSNOOP_OUTPUT with %p replaced by this process's pid. */
static void out_path_make(void)
{
	char pid[24];
	const char *p = num((uint64_t)syscall(SYS_getpid), pid);
	size_t n = 0;

	for (const char *v = out_name; *v && n + 24 < sizeof(out_path); v++) {
		if (v[0] == '%' && v[1] == 'p') {
			for (const char *q = p; *q; q++)
				out_path[n++] = *q;
			v++;
		} else {
			out_path[n++] = *v;
		}
	}
	out_path[n] = '\0';
}

/* Another thread's dump finished, a while at most; false if this one's own. */
static bool dump_turn(void)
{
	int me = (int)syscall(SYS_gettid), none = 0;

	for (long i = 0; !__atomic_compare_exchange_n(&dumping_tid, &none, me, false,
						       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED); i++) {
		if (none == me || i > 1000000)
			return false;	/* a dump that failed in this thread, or one stuck */
		none = 0;
		sched_yield();
	}
	return true;
}

void lastdump__write(const char *reason, const char *why, bool final)
{
	struct lt_view v;
	struct lt_snap s, *sp = &s;
	char n1[24], n2[24];
	bool moment;
	int fd, err, saved = errno;

	/*
	 * Not a process that shares this memory without owning the table: a
	 * vfork child (its _exit after a failed exec) would dump its parent's
	 * live set as its own, and leave the parent's writers held.
	 */
	if (!lt.base || __atomic_load_n(&lt.h->pid, __ATOMIC_RELAXED) != (int32_t)syscall(SYS_getpid) ||
	    livetable__view(&v) || !dump_turn())
		goto out;
	lt_tls.freezing++;
	moment = livetable__freeze(true);
	err = lt_snap__take(&s, &v, (int)syscall(SYS_getpid));
	/*
	 * The process ends next: the others stay held, so that nothing they
	 * do from here is half in the table (a call of theirs in flight is
	 * before or after the dump, as the program's own list says). Else
	 * they go on while the lines are written from the copy.
	 */
	if (!final) {
		livetable__thaw();
		lt_tls.freezing--;
	}
	fd = out_path[0] ? open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : 2;
	if (!err && fd < 0)
		err = -errno;
	if (!err) {
		lt_out__init(&out, fd);
		err = lt_out__dump(&out, &sp, 1, reason, v.h->sample_bytes);
	}
	if (fd > 2)
		close(fd);
	if (err) {
		const char *m[] = { "heapsnoop-preload: pid ", num((uint64_t)syscall(SYS_getpid), n1),
				    ": the dump at ", why, " could not be written (errno ",
				    num((uint64_t)-err, n2), "): its live blocks are not recorded" };

		say_parts(m, sizeof(m) / sizeof(m[0]));
	} else if (!moment) {
		const char *m[] = { "heapsnoop-preload: pid ", num((uint64_t)syscall(SYS_getpid), n1),
				    ": the dump at ", why, ": a thread did not pause (stopped?): "
				    "a call of its may be half in it" };

		say_parts(m, sizeof(m) / sizeof(m[0]));
	}
	lt_snap__free(&s);
	__atomic_store_n(&dumping_tid, 0, __ATOMIC_RELEASE);
out:
	errno = saved;
}

void lastdump__tick(void)
{
	long long now, due;

	if (!interval_s || !lastdump_on)
		return;
	now = mono_ns();
	due = __atomic_load_n(&next_interval_ns, __ATOMIC_RELAXED);
	if (now >= due && __atomic_compare_exchange_n(&next_interval_ns, &due,
						      now + interval_s * 1000000000ll, false,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		lastdump__write("interval", "an interval", false);
}

/* --- signals -------------------------------------------------------------- */

static const char *sig_name(int sig)
{
	static const struct { int sig; const char *name; } names[] = {
		{ SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" }, { SIGABRT, "SIGABRT" },
		{ SIGFPE, "SIGFPE" }, { SIGILL, "SIGILL" }, { SIGTRAP, "SIGTRAP" },
		{ SIGSYS, "SIGSYS" }, { SIGTERM, "SIGTERM" }, { SIGINT, "SIGINT" },
		{ SIGHUP, "SIGHUP" }, { SIGQUIT, "SIGQUIT" }, { SIGPIPE, "SIGPIPE" },
		{ SIGALRM, "SIGALRM" }, { SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
		{ SIGUSR1, "SIGUSR1" }, { SIGUSR2, "SIGUSR2" }, { SIGVTALRM, "SIGVTALRM" },
		{ SIGPROF, "SIGPROF" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return "a signal";
}

static void on_fatal(int sig, siginfo_t *si, void *uc);

/* Ours for @sig, with the program's mask and flags (@prog). */
static int install(int sig, const struct sigaction *prog)
{
	struct sigaction sa;

	if (prog->sa_handler == SIG_IGN)
		return real_sigaction(sig, prog, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_mask = prog->sa_mask;
	sa.sa_flags = (prog->sa_flags & ~SA_RESETHAND) | SA_SIGINFO | SA_ONSTACK;
	return real_sigaction(sig, &sa, NULL);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	struct sigaction *p = &prog_act[sig], dfl;
	sigset_t set;
	int saved = errno;

	if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
		/* The program's own handler first: it may recover. */
		struct sigaction now = *p;

		if (now.sa_flags & SA_RESETHAND) {
			p->sa_handler = SIG_DFL;
			p->sa_flags &= ~SA_SIGINFO;
		}
		if (now.sa_flags & SA_SIGINFO)
			now.sa_sigaction(sig, si, uc);
		else
			now.sa_handler(sig);
		errno = saved;
		if (p->sa_handler != SIG_DFL)
			return;	/* it returned, a handler still there: recovered */
	} else if (p->sa_handler == SIG_IGN) {
		return;
	}
	lastdump__write("exit", sig_name(sig), true);
	/* The default action: from here, as if the collector were never there. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	real_sigaction(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	/* A fault returns to its instruction and faults again, by default now. */
	errno = saved;
}

static void on_usr(int sig)
{
	(void)sig;
	lastdump__write("usr1", "the signal HEAPSNOOP_SIGNAL", false);
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!real_sigaction)
		lastdump__resolve();
	if (sig <= 0 || sig >= NSIG || !watched[sig])
		return real_sigaction(sig, act, old);
	if (old)
		*old = prog_act[sig];
	if (act) {
		if (install(sig, act))
			return -1;
		prog_act[sig] = *act;
	}
	return 0;
}

static sighandler_t set_handler(int sig, sighandler_t h, int flags)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old))
		return SIG_ERR;
	return old.sa_handler;
}

/* glibc's signal() is BSD's: restarted calls, the signal blocked in its handler. */
EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}

/* A stack for a handler when the thread's own has run out: if it has none. */
static void altstack_make(void)
{
	stack_t ss, old;

	if (sigaltstack(NULL, &old) || !(old.ss_flags & SS_DISABLE))
		return;	/* the program has its own */
	ss.ss_sp = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	ss.ss_size = ALTSTACK_SIZE;
	ss.ss_flags = 0;
	if (ss.ss_sp == MAP_FAILED)
		return;
	if (sigaltstack(&ss, NULL))
		munmap(ss.ss_sp, ALTSTACK_SIZE);
	else
		lt_tls.altstack = ss.ss_sp;
}

void lastdump__thread_start(void)
{
	if (lastdump_on)
		altstack_make();
}

void lastdump__thread_end(void)
{
	stack_t ss = { .ss_flags = SS_DISABLE }, cur;

	if (!lt_tls.altstack)
		return;
	/* Only ours, and only if not on it now. */
	if (!sigaltstack(NULL, &cur) && cur.ss_sp == lt_tls.altstack && !(cur.ss_flags & SS_ONSTACK) &&
	    !sigaltstack(&ss, NULL))
		munmap(lt_tls.altstack, ALTSTACK_SIZE);
	lt_tls.altstack = NULL;
}

void lastdump__init(int sig, unsigned int interval)
{
	const char *v = getenv(HS_ENV_OUTPUT);

	if (!real_sigaction)
		lastdump__resolve();
	lastdump_on = true;
	if (v && strlen(v) < sizeof(out_name))
		strcpy(out_name, v);
	out_path_make();
	interval_s = interval;
	next_interval_ns = mono_ns() + interval * 1000000000ll;
	if (sig > 0 && sig < NSIG) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr;
		sa.sa_flags = SA_RESTART | SA_ONSTACK;
		sigfillset(&sa.sa_mask);
		real_sigaction(sig, &sa, NULL);
		usr_sig = sig;
	}
	for (size_t i = 0; i < NFATAL; i++) {
		int s = fatal_sigs[i];

		if (s == usr_sig || real_sigaction(s, NULL, &prog_act[s]))
			continue;
		/* An ignored signal stays ignored (nohup); a handler from before us is chained. */
		if (prog_act[s].sa_handler == SIG_IGN)
			continue;
		if (!install(s, &prog_act[s]))
			watched[s] = true;
	}
	altstack_make();
}

const char *lastdump__path(void)
{
	return out_path[0] ? out_path : "standard error";
}

void lastdump__forked(void)
{
	if (!lastdump_on)
		return;
	out_path_make();
	next_interval_ns = mono_ns() + interval_s * 1000000000ll;
}

/* --- the ways out that skip the destructors -------------------------------- */

EXPORT void _exit(int status)
{
	if (lastdump_on)
		lastdump__write("exit", "_exit", true);
	if (!real__exit)
		lastdump__resolve();
	if (real__exit)
		real__exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

EXPORT void _Exit(int status)
{
	_exit(status);
}

EXPORT void quick_exit(int status)
{
	if (!real_quick_exit)
		lastdump__resolve();
	if (!real_quick_exit)
		_exit(status);
	/* Then at_quick_exit's handlers, and glibc's own _exit (not this one). */
	if (lastdump_on)
		lastdump__write("exit", "quick_exit", true);
	real_quick_exit(status);
}
