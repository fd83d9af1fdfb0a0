// SPDX-License-Identifier: MIT
/*
 * agent.c - `heapsnoop agent` (see agent.h): its own options taken out
 * of the command line and the rest given to options.c; the session run
 * with the agent's hooks; each snapshot's child, which answers every
 * request that waited when it was forked.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "agent/collectors.h"
#include "agent/heapprof.h"
#include "agent/httpd.h"
#include "agent/metrics.h"
#include "agent/push.h"
#include "fdio.h"
#include "heapsnoop/exit.h"
#include "msg.h"
#include "options.h"
#include "output/status.h"
#include "session.h"
#include "track/trace.h"

/* A route's snapshots: one child at a time. */
struct agent_slot {
	pid_t child;		/* answering now, 0: none */
	pid_t last;		/* the last child, until its exit event */
	double t0;		/* when it was forked */
};

struct agent {
	struct httpd *http;
	/* One per route: a slow profile never holds /metrics back. */
	struct agent_slot slot[AGENT__ROUTES];
	uint64_t children, failed;
	/* --push-pyroscope, --push-otlp: NULL: none; its child's slot, its interval, counts */
	struct push_target *push;
	struct agent_slot push_slot;
	unsigned int push_interval;
	double next_push;
	int64_t last_push;	/* Unix seconds the last push's profile ended at */
	uint64_t pushes, push_failed, push_skipped;
	double fork_ms_max;
	uint64_t memory_bound;	/* bytes */
	uint64_t over_bound;	/* seconds over it */
	double next_check;
	bool said_over, said_live;
	bool collapsed;		/* trace__collapse() on: over the bound */
	struct collectors *coll;	/* --collectors: the tables of processes that say hello */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- the child: every request's body from the snapshot ------------------- */

/*
 * Request @r's body built whole in memory, then written: a body that
 * could not be built is empty, never cut (the client sees no profile
 * rather than a wrong one). 0, or -errno.
 */
static int answer(struct trace *t, const struct agent_req *r, const struct metrics_in *in)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return -ENOMEM;
	if (r->route == AGENT_METRICS)
		err = metrics__write(t, in, f);
	else
		err = heapprof__write_for(t, r->pid, r->comm, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (!err)
		err = fd__write_all(r->fd, buf, len, false);
	free(buf);
	return err;
}

static void __attribute__((noreturn)) child(struct trace *t, struct agent_req *r, size_t n,
					    const struct metrics_in *in)
{
	int failed = 0;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < n; i++) {
		/* A client gone (EPIPE) is not the snapshot's failure. */
		int err = answer(t, &r[i], in);

		failed |= err && err != -EIO;
		close(r[i].fd);
	}
	_exit(failed);
}

/* --- the loop's side ---------------------------------------------------- */

/*
 * The agent's resident memory by kind, bytes (/proc/self/status: RssAnon,
 * RssFile, RssShmem): its own heap is the anonymous part; the ring buffer
 * and the BPF maps it maps, and the pages of the traced programs' files
 * read for their CFI and symbols, are the others.
 */
static void resident(uint64_t *anon, uint64_t *file, uint64_t *shmem)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned long long kb;

	*anon = *file = *shmem = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "RssAnon: %llu kB", &kb) == 1)
			*anon = kb << 10;
		else if (sscanf(line, "RssFile: %llu kB", &kb) == 1)
			*file = kb << 10;
		else if (sscanf(line, "RssShmem: %llu kB", &kb) == 1)
			*shmem = kb << 10;
	}
	fclose(f);
}

static void fill_in(struct agent *a, const struct bpf_map *counters, struct metrics_in *in)
{
	struct httpd_stats hs;

	memset(in, 0, sizeof(*in));
	if (counters)
		status__read_counters(counters, in->cnt);
	httpd__stats(a->http, &hs);
	in->requests[0] = hs.requests[AGENT_METRICS];
	in->requests[1] = hs.requests[AGENT_HEAP];
	in->refused = hs.refused;
	in->bad = hs.bad;
	in->children = a->children;
	in->failed = a->failed;
	in->fork_ms_max = a->fork_ms_max;
	in->memory_bound = a->memory_bound;
	in->pushes = a->pushes;
	in->push_failed = a->push_failed;
	in->push_skipped = a->push_skipped;
	in->over_bound = a->over_bound;
	in->collapsing = a->collapsed;
	resident(&in->rss_anon, &in->rss_file, &in->rss_shmem);
	in->coll = a->coll;
	collectors__stats(a->coll, &in->coll_st);
}

/* @sl's child, if it ended (or ran too long: killed), reaped; failures into *@failed. */
static void reap(struct agent_slot *sl, uint64_t *failed, double now)
{
	int st;
	pid_t r;

	if (!sl->child)
		return;
	if (now - sl->t0 > AGENT_CHILD_MAX_S) {
		elog("agent: a snapshot's child ran past %d s: killed (a client too slow?)",
		     AGENT_CHILD_MAX_S);
		kill(sl->child, SIGKILL);
		while (waitpid(sl->child, &st, 0) < 0 && errno == EINTR)
			;
		(*failed)++;
		sl->child = 0;
		return;
	}
	while ((r = waitpid(sl->child, &st, WNOHANG)) < 0 && errno == EINTR)
		;
	if (r == 0)
		return;
	if (r < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		(*failed)++;
	sl->child = 0;
}

/*
 * Once a second: the tables against --max-memory. Over it, the agent
 * sheds, in this order: (1) new allocations go under one stack of their
 * process, "[over the memory bound]" (trace__collapse(): no stack is
 * made, the live bytes stay exact), until the tables are back under 90%
 * of the bound; (2) if that is not enough (the live blocks alone pass
 * it), nothing more is dropped: said, and a larger --sample-bytes is the
 * way. Each said once on stderr and counted in /metrics.
 */
static void check_memory(struct agent *a, struct trace *t, double now)
{
	uint64_t used;

	if (now < a->next_check || !a->memory_bound)
		return;
	a->next_check = now + 1;
	used = trace__live_memory(t) + trace__stack_memory(t);
	if (a->collapsed && used < a->memory_bound / 10 * 9) {
		trace__collapse(t, false);
		a->collapsed = false;
		elog("agent: the tables hold %" PRIu64 " KiB, back under --max-memory: stacks "
		     "again", used >> 10);
	}
	if (used <= a->memory_bound)
		return;
	a->over_bound++;
	if (!a->collapsed) {
		trace__collapse(t, true);
		a->collapsed = true;
		if (!a->said_over)
			elog("agent: the tables hold %" PRIu64 " KiB, over --max-memory's %" PRIu64
			     " KiB: new allocations go under one stack per process, \"[over the memory "
			     "bound]\", their bytes still counted (heapsnoop_agent_collapsed_allocations_"
			     "total); said once", used >> 10, a->memory_bound >> 10);
		a->said_over = true;
		return;
	}
	if (!a->said_live && trace__live_memory(t) > a->memory_bound) {
		elog("agent: the live blocks alone hold %" PRIu64 " KiB, over --max-memory: "
		     "nothing more is shed (a larger --sample-bytes bounds them); counted "
		     "(heapsnoop_agent_over_bound_seconds_total)", trace__live_memory(t) >> 10);
		a->said_live = true;
	}
}

/* A child forked for @route's waiting requests, if its slot is free. */
static void serve(struct agent *a, enum agent_route route, struct trace *t,
		  const struct bpf_map *counters, double now)
{
	struct agent_slot *sl = &a->slot[route];
	struct agent_req r[HTTPD_QUEUE];
	struct metrics_in in;
	double t0, ms;
	size_t n;
	pid_t pid;

	if (sl->child)
		return;
	n = httpd__take(a->http, route, r, HTTPD_QUEUE);
	if (!n)
		return;
	fill_in(a, counters, &in);
	fflush(stderr);
	t0 = now_s();
	pid = fork();
	if (pid == 0)
		child(t, r, n, &in);
	ms = (now_s() - t0) * 1000;
	if (ms > a->fork_ms_max)
		a->fork_ms_max = ms;
	for (size_t i = 0; i < n; i++)
		close(r[i].fd);
	if (pid < 0) {
		elog("agent: fork: %s; %zu requests answered empty", strerror(errno), n);
		a->failed++;
		return;
	}
	a->children++;
	sl->child = sl->last = pid;
	sl->t0 = now;
}

/* --push-pyroscope: every interval, a child pushes the heap profile. */
static void push(struct agent *a, struct trace *t, double now)
{
	struct timespec wall;
	int64_t from;
	pid_t pid;

	if (!a->push || now < a->next_push)
		return;
	a->next_push = now + a->push_interval;
	if (a->push_slot.child) {
		a->push_skipped++;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &wall);
	from = a->last_push ? a->last_push : wall.tv_sec - a->push_interval;
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGUSR1, SIG_IGN);
		_exit(push__send(t, a->push, from, wall.tv_sec) ? 1 : 0);
	}
	if (pid < 0) {
		elog("agent: fork: %s; this push skipped", strerror(errno));
		a->push_failed++;
		return;
	}
	a->pushes++;
	a->last_push = wall.tv_sec;
	a->push_slot.child = a->push_slot.last = pid;
	a->push_slot.t0 = now;
}

void agent__tick(struct agent *a, struct trace *t, const struct bpf_map *counters, double now)
{
	if (!a)
		return;
	for (int k = 0; k < AGENT__ROUTES; k++)
		reap(&a->slot[k], &a->failed, now);
	reap(&a->push_slot, &a->push_failed, now);
	collectors__tick(a->coll, now);
	check_memory(a, t, now);
	for (int k = 0; k < AGENT__ROUTES; k++)
		serve(a, (enum agent_route)k, t, counters, now);
	push(a, t, now);
}

int agent__wake_fd(const struct agent *a)
{
	/*
	 * Not while a child answers: a request of its route would wake the
	 * loop at once, again and again; the poll's timeout (SESSION_POLL_MS
	 * at most) brings the next step soon enough.
	 */
	if (!a)
		return -1;
	for (int k = 0; k < AGENT__ROUTES; k++)
		if (a->slot[k].child)
			return -1;
	return httpd__wake_fd(a->http);
}

bool agent__owns(const struct agent *a, pid_t pid)
{
	if (!a || !pid)
		return false;
	for (int k = 0; k < AGENT__ROUTES; k++)
		if (pid == a->slot[k].child || pid == a->slot[k].last)
			return true;
	return pid == a->push_slot.child || pid == a->push_slot.last;
}

void agent__gone(struct agent *a, pid_t pid)
{
	for (int k = 0; a && k < AGENT__ROUTES; k++)
		if (pid == a->slot[k].last)
			a->slot[k].last = 0;
	if (a && pid == a->push_slot.last)
		a->push_slot.last = 0;
}

/* --- the command line --------------------------------------------------- */

static const char usage[] =
"Usage: heapsnoop agent [--listen ADDR:PORT] [--max-memory MB] [--every-allocation]\n"
"                       [--push-pyroscope URL] [--push-otlp URL] [--push-interval S]\n"
"                       [--push-name NAME] [--collectors PATH]\n"
"                       [-a | -p PID] [heapsnoop's options]\n"
"Trace until SIGTERM and serve the live heap (docs/AGENT.md):\n"
"  GET /metrics            Prometheus text: live bytes per process, losses, the agent\n"
"  GET /debug/pprof/heap   pprof (go tool pprof, Parca, Pyroscope); ?pid=N, ?comm=NAME\n"
"  --listen ADDR:PORT      where to listen (default " AGENT_LISTEN "; 0.0.0.0:PORT\n"
"                          serves every machine that reaches this one: see AGENT.md)\n"
"  --max-memory MB         the tables' bound (NK: KiB): past it, new allocations go under\n"
"                          one stack per process, said and counted (default %d)\n"
"  --every-allocation      no sampling (default: --sample-bytes %d, Go's rate)\n"
"  --push-pyroscope URL    every interval, POST the heap profile to URL/ingest\n"
"                          (Grafana Pyroscope; http://ADDR:PORT[/PREFIX], numeric)\n"
"  --push-otlp URL         every interval, POST it as OTLP profiles (protobuf) to\n"
"                          URL/v1development/profiles (an OpenTelemetry Collector)\n"
"  --push-interval S       seconds between pushes (default %d)\n"
"  --push-name NAME        the application name (default heapsnoop{host=HOSTNAME})\n"
"  --collectors PATH       serve the live tables of processes started with the collector\n"
"                          and HEAPSNOOP_AGENT=PATH (" COLLECTORS_SOCK " in the unit)\n"
"Without -p, every process (-a). Records go to -o FILE, else nowhere.\n";

struct agent_args {
	const char *listen;
	const char *collectors;
	const char *push_url, *push_name, *otlp_url;
	unsigned long push_interval;
	unsigned long max_kb;
	bool every, sample_given, target_given, help;
};

/* The agent's own options out of @argv (kept in order in @rest). 0 or -EINVAL. */
static int take_args(int argc, char **argv, struct agent_args *aa, char **rest, int *nrest)
{
	int k = 0;

	rest[k++] = "heapsnoop";
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], *val = NULL;
		char *end;

		if (!strcmp(s, "--")) {
			elog("heapsnoop agent traces running processes (-a, -p PID): start the "
			     "command, then give its pid");
			return -EINVAL;
		}
		if (!strcmp(s, "--collectors") || !strncmp(s, "--collectors=", 13)) {
			val = s[12] ? s + 13 : i + 1 < argc ? argv[++i] : NULL;
			if (!val) {
				elog("%s wants a value", s);
				return -EINVAL;
			}
			aa->collectors = val;
			continue;
		}
		if (!strcmp(s, "--listen") || !strcmp(s, "--max-memory") ||
		    !strcmp(s, "--push-pyroscope") || !strcmp(s, "--push-interval") ||
		    !strcmp(s, "--push-name") || !strcmp(s, "--push-otlp")) {
			if (i + 1 >= argc) {
				elog("%s wants a value", s);
				return -EINVAL;
			}
			val = argv[++i];
		} else if (!strncmp(s, "--listen=", 9) || !strncmp(s, "--max-memory=", 13) ||
			   !strncmp(s, "--push-pyroscope=", 17) || !strncmp(s, "--push-interval=", 16) ||
			   !strncmp(s, "--push-name=", 12) || !strncmp(s, "--push-otlp=", 12)) {
			val = strchr(s, '=') + 1;
		}
		if (val && !strncmp(s, "--listen", 8)) {
			aa->listen = val;
		} else if (val && !strncmp(s, "--push-pyroscope", 16)) {
			aa->push_url = val;
		} else if (val && !strncmp(s, "--push-otlp", 11)) {
			aa->otlp_url = val;
		} else if (val && !strncmp(s, "--push-name", 11)) {
			aa->push_name = val;
		} else if (val && !strncmp(s, "--push-interval", 15)) {
			errno = 0;
			aa->push_interval = strtoul(val, &end, 10);
			if (!*val || *end || errno || !aa->push_interval || aa->push_interval > 86400) {
				elog("--push-interval %s: seconds, 1 to 86400", val);
				return -EINVAL;
			}
		} else if (val) {
			unsigned long v;
			bool kib;

			errno = 0;
			v = strtoul(val, &end, 10);
			/* MiB, or KiB with a K (the tests' small bounds). */
			kib = end != val && *end == 'K' && end[1] == '\0';
			end += kib;
			if (!*val || *end || errno || v > (1ul << 30)) {
				elog("--max-memory %s: a number of MiB (or of KiB, with K)", val);
				return -EINVAL;
			}
			aa->max_kb = kib ? v : v << 10;
		} else if (!strcmp(s, "--every-allocation")) {
			aa->every = true;
		} else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			aa->help = true;
		} else {
			if (!strncmp(s, "--sample-bytes", 14))
				aa->sample_given = true;
			if (!strncmp(s, "-p", 2) || !strcmp(s, "--pid") || !strncmp(s, "--pid=", 6) ||
			    !strcmp(s, "-a") || !strcmp(s, "--all"))
				aa->target_given = true;
			rest[k++] = argv[i];
		}
	}
	/* Without -p, every process: -a (options.c wants a target). */
	if (!aa->target_given)
		rest[k++] = "-a";
	rest[k] = NULL;
	*nrest = k;
	return 0;
}

static int agent_options(int argc, char **argv, struct agent_args *aa, struct options *o,
			 char **rest)
{
	int nrest;

	*aa = (struct agent_args){ .listen = AGENT_LISTEN, .max_kb = AGENT_MAX_MEMORY_MB << 10,
				   .push_interval = AGENT_PUSH_INTERVAL };
	if (take_args(argc, argv, aa, rest, &nrest))
		return -EINVAL;
	if (aa->help) {
		printf(usage, AGENT_MAX_MEMORY_MB, AGENT_SAMPLE_BYTES, AGENT_PUSH_INTERVAL);
		exit(0);
	}
	if (aa->every && aa->sample_given) {
		elog("--every-allocation and --sample-bytes: one or the other");
		return -EINVAL;
	}
	if (options__parse(nrest, rest, o))
		return -EINVAL;
	if (o->argv) {
		elog("heapsnoop agent traces running processes (-a, -p PID): start the "
		     "command, then give its pid");
		return -EINVAL;
	}
	if (o->preload) {
		elog("heapsnoop agent does not take --preload");
		return -EINVAL;
	}
	if (!o->pid)
		o->all = true;
	if (!aa->every && !aa->sample_given)
		o->sample_bytes = AGENT_SAMPLE_BYTES;
	if (!o->output)
		o->output = "/dev/null";
	return 0;
}

int agent__main(int argc, char **argv)
{
	struct agent a = { 0 };
	struct push_target pt;
	struct agent_args aa;
	struct options o;
	struct session *s;
	char **rest = calloc((size_t)argc + 3, sizeof(*rest));
	int status;

	if (!rest || agent_options(argc, argv, &aa, &o, rest)) {
		fputs("Try 'heapsnoop agent --help' for more information.\n", stderr);
		free(rest);
		return HS_EXIT_ERROR;
	}
	a.memory_bound = (uint64_t)aa.max_kb << 10;
	if (aa.push_url || aa.otlp_url) {
		if (push__parse(aa.push_url, aa.otlp_url, aa.push_name, &pt)) {
			free(rest);
			return HS_EXIT_ERROR;
		}
		a.push = &pt;
		a.push_interval = (unsigned int)aa.push_interval;
		a.next_push = now_s() + a.push_interval;
	}
	a.http = httpd__new(aa.listen);
	if (!a.http) {
		free(rest);
		return HS_EXIT_ERROR;
	}
	s = session__new(&o);
	if (!s) {
		httpd__free(a.http);
		free(rest);
		return HS_EXIT_ERROR;
	}
	if (aa.collectors && collectors__open(aa.collectors, &a.coll)) {
		session__free(s);
		httpd__free(a.http);
		free(rest);
		return HS_EXIT_ERROR;
	}
	heapprof__set_collectors(a.coll);
	session__set_agent(s, &a);
	elog("agent: tracing %s, %s; serving http://%.*s:%u/metrics and /debug/pprof/heap",
	     o.all ? "every process" : "-p", o.sample_bytes ? "sampled" : "every allocation",
	     (int)(strrchr(aa.listen, ':') - aa.listen), aa.listen, httpd__port(a.http));
	status = session__run(s);
	/* The last push's child let finish (its tries are bounded). */
	if (a.push_slot.child)
		while (waitpid(a.push_slot.child, NULL, 0) < 0 && errno == EINTR)
			;
	/* The children first: the daemon's threads wait on the bodies' pipes. */
	for (int k = 0; k < AGENT__ROUTES; k++) {
		if (!a.slot[k].child)
			continue;
		kill(a.slot[k].child, SIGKILL);
		while (waitpid(a.slot[k].child, NULL, 0) < 0 && errno == EINTR)
			;
	}
	httpd__free(a.http);
	collectors__free(a.coll);
	session__free(s);
	free(rest);
	return status;
}
