/* SPDX-License-Identifier: MIT */
/*
 * httpd.h - the agent's pull endpoint (docs/AGENT.md): libmicrohttpd's
 * daemon on its own threads (one per connection, at most
 * HTTPD_MAX_CONNS), bound to 127.0.0.1 unless told otherwise. It never
 * touches the trace: a request it routes becomes a struct agent_req in a
 * bounded queue, its response body a pipe whose write end the queue
 * holds; the loop takes the queue (httpd__take(), woken by
 * httpd__wake_fd()) and a forked child writes each body from its
 * copy-on-write snapshot (user/tracer/agent.c). The daemon reads the pipe as the
 * client takes it, chunked, so neither the loop nor a slow client waits
 * on the other.
 *
 * Routes: GET /metrics (Prometheus text), GET /debug/pprof/heap (pprof,
 * gzip'ed; ?pid=N, ?comm=NAME), GET / (a short index). Anything else: 404, a method
 * other than GET or HEAD: 405, a bad query: 400, the queue full: 503.
 */
#ifndef HEAPSNOOP_AGENT_HTTPD_H
#define HEAPSNOOP_AGENT_HTTPD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HTTPD_MAX_CONNS	8	/* connections served at once (a thread each) */
#define HTTPD_QUEUE	16	/* requests waiting for the loop's next child */
#define HTTPD_TIMEOUT_S	30	/* an idle connection closed after it */

enum agent_route { AGENT_METRICS, AGENT_HEAP, AGENT__ROUTES };

/* A request the loop serves: its route, its ?pid= (0: all), ?comm= ("": all), its body's pipe. */
struct agent_req {
	enum agent_route route;
	pid_t pid;
	int fd;		/* the body's write end: the loop's to close */
	char comm[16];	/* a process name, as ps -o comm (15 bytes at most) */
};

/* What the daemon counted (read racily: monotonic counters). */
struct httpd_stats {
	uint64_t requests[AGENT__ROUTES];	/* queued */
	uint64_t refused;	/* 503: the queue was full, or no pipe */
	uint64_t bad;		/* 400, 404, 405 */
};

struct httpd;

/*
 * Parse @listen, "ADDR:PORT" ("127.0.0.1:6068", "[::1]:6068", numeric
 * addresses only; PORT 0: any free one) into the daemon's address and
 * start it. Returns the daemon, or NULL after saying why (msg.h).
 */
struct httpd *httpd__new(const char *listen);

/* The port it is bound to (the one picked where 0 was asked). */
uint16_t httpd__port(const struct httpd *h);

/* Readable while requests wait (an eventfd); the loop polls it. */
int httpd__wake_fd(const struct httpd *h);

/*
 * Up to @max waiting requests of @route (AGENT__ROUTES: any) into @out,
 * oldest first, the others left in their order; the wakeup cleared when
 * none is left. Returns how many.
 */
size_t httpd__take(struct httpd *h, enum agent_route route, struct agent_req *out, size_t max);

void httpd__stats(const struct httpd *h, struct httpd_stats *st);

/*
 * Stop the daemon (its connections closed, their threads joined), the
 * requests still queued closed (their clients see an empty body), free.
 * NULL: nothing.
 */
void httpd__free(struct httpd *h);

#endif /* HEAPSNOOP_AGENT_HTTPD_H */
