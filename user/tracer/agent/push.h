/* SPDX-License-Identifier: MIT */
/*
 * push.h - heapsnoop agent's push to Grafana Pyroscope's /ingest (its
 * HTTP API, grafana.com/docs/pyroscope: "Pyroscope server HTTP API"):
 * every interval, the heap profile (heapprof.h) POSTed as
 * multipart/form-data, its "profile" part the gzip'ed pprof, with
 * name, from, until and format=pprof in the query.
 *
 * Run in a child of the agent (agent.c), on its snapshot, so the loop
 * never waits on the network: the child connects, sends, reads the
 * status line (at most PUSH_REPLY_MAX bytes, PUSH_TIMEOUT_S for each
 * step), tries PUSH_TRIES times in all, and says by its exit status
 * whether the backend took it. One push at a time: a push due while one
 * runs is skipped, counted (the queue is one deep). Plain HTTP to a
 * numeric address only (the static binary resolves no names; TLS is a
 * proxy's job, docs/AGENT.md).
 */
#ifndef HEAPSNOOP_AGENT_PUSH_H
#define HEAPSNOOP_AGENT_PUSH_H

#include <stdint.h>
#include <sys/socket.h>

#define PUSH_TRIES	3
#define PUSH_TIMEOUT_S	10
#define PUSH_REPLY_MAX	4096

struct trace;

struct push_target {
	struct sockaddr_storage addr;
	socklen_t len;
	char host[300];		/* the Host header: ADDR:PORT as given */
	char path[256];		/* the URL's path prefix, "" or "/prefix" */
	char name[256];		/* Pyroscope's application name, with its labels */
};

/*
 * Parse @url, "http://ADDR:PORT[/PREFIX]" (ADDR numeric, IPv6 in
 * brackets), and @name (NULL: "heapsnoop{host=HOSTNAME}") into @pt.
 * 0, or -EINVAL after saying why.
 */
int push__parse(const char *url, const char *name, struct push_target *pt);

/*
 * The child's push of @t's heap profile for [@from, @until] (Unix
 * seconds) to @pt. Returns 0 if the backend answered 2xx, -EIO if it
 * answered otherwise or could not be reached (each try said on stderr),
 * -ENOMEM.
 */
int push__send(struct trace *t, const struct push_target *pt, int64_t from, int64_t until);

#endif /* HEAPSNOOP_AGENT_PUSH_H */
