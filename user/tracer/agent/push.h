/* SPDX-License-Identifier: MIT */
/*
 * push.h - heapsnoop agent's pushes: to Grafana Pyroscope's /ingest (its
 * HTTP API, grafana.com/docs/pyroscope: "Pyroscope server HTTP API"):
 * every interval, the heap profile (heapprof.h) POSTed as
 * multipart/form-data, its "profile" part the gzip'ed pprof, with
 * name, from, until and format=pprof in the query; and to an
 * OpenTelemetry collector's OTLP/HTTP receiver (the OTLP specification's
 * "OTLP/HTTP": binary protobuf, POST URL/v1development/profiles), the
 * same profile as an ExportProfilesServiceRequest (otlp.h).
 *
 * Run in a child of the agent (user/tracer/agent.c), on its snapshot, so the loop
 * never waits on the network: the child connects, sends, reads the
 * reply (at most PUSH_REPLY_MAX bytes, PUSH_TIMEOUT_S for each step:
 * its status line, and an OTLP reply's body for a partial success),
 * tries PUSH_TRIES times in all within PUSH_BUDGET_S, and says by its
 * exit status whether the backends took it. One push at a time: a push
 * due while one runs is skipped, counted (the queue is one deep: a heap
 * profile is a snapshot, and the next one says what a skipped one would
 * have). Plain HTTP to a numeric address only (the static binary
 * resolves no names; TLS is a proxy's job, docs/AGENT.md).
 */
#ifndef HEAPSNOOP_AGENT_PUSH_H
#define HEAPSNOOP_AGENT_PUSH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define PUSH_TRIES	3
#define PUSH_TIMEOUT_S	10
/*
 * A push's tries, all destinations', end this many seconds after its
 * child starts: the profile's naming (HEAPPROF_NAMING_S) and these stay
 * under AGENT_CHILD_MAX_S, past which the agent kills the child.
 */
#define PUSH_BUDGET_S	40
#define PUSH_REPLY_MAX	4096

struct trace;

/* Where one kind of push goes. */
struct push_dest {
	struct sockaddr_storage addr;
	socklen_t len;		/* 0: not asked for */
	char host[300];		/* the Host header: ADDR:PORT as given */
	char path[256];		/* the URL's path prefix, "" or "/prefix" */
	const char *what;	/* "Pyroscope", "OTLP": for what is said */
	bool reply_body;	/* read the reply's body (OTLP's partial success) */
};

/* What the pushes' children share with each other: whether a failure was said. */
struct push_state {
	int said_pyroscope, said_otlp;
};

struct push_target {
	struct push_dest pyroscope;	/* --push-pyroscope: URL/ingest */
	struct push_dest otlp;		/* --push-otlp: URL/v1development/profiles */
	char name[256];		/* Pyroscope's application name, with its labels */
	struct push_state *state;	/* a shared page (MAP_SHARED), or NULL */
};

/*
 * Parse @pyroscope_url and @otlp_url (either NULL: not asked for), each
 * "http://ADDR:PORT[/PREFIX]" (ADDR numeric, IPv6 in brackets), and
 * @name (NULL: "heapsnoop{host=HOSTNAME}") into @pt, and map the page
 * the children say their failures through. 0, or -EINVAL after saying why.
 */
int push__parse(const char *pyroscope_url, const char *otlp_url, const char *name,
		struct push_target *pt);

/*
 * The child's push of @t's heap profile for [@from, @until] (Unix
 * seconds) to each destination of @pt: the pprof made once, POSTed to
 * Pyroscope's /ingest and, as OTLP (otlp.h), to the collector's
 * /v1development/profiles. Each is tried PUSH_TRIES times (1 s, 2 s
 * apart; not again after a 4xx other than 408 and 429, which a retry
 * would not change). A destination's failure is said once, with why,
 * and not again until one of its pushes has gone through (said then):
 * the agent counts each push that failed (heapsnoop_agent_push_failures_total).
 * Returns 0 if every destination answered 2xx (and the OTLP reply
 * rejected no profile), -EIO if one did not, -ENOMEM.
 */
int push__send(struct trace *t, const struct push_target *pt, int64_t from, int64_t until);

#endif /* HEAPSNOOP_AGENT_PUSH_H */
