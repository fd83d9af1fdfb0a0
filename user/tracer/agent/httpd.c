// SPDX-License-Identifier: MIT
/*
 * httpd.c - the agent's pull endpoint (see httpd.h) on libmicrohttpd
 * (GNU libmicrohttpd 0.9.75, Debian's libmicrohttpd-dev): its parser, its
 * limits, its chunked responses; here only the routes and the queue
 * between its threads and the loop. A body is a pipe: the daemon's
 * MHD_create_response_from_pipe() reads it on the connection's thread,
 * which blocks only that connection; the loop's child writes it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "httpd.h"
#include "msg.h"

/* A request's head (line, headers) is read into this much, at most. */
#define HTTPD_CONN_MEMORY	(16 * 1024)

struct httpd {
	struct MHD_Daemon *d;
	int wake;			/* eventfd: requests wait */
	pthread_mutex_t lock;		/* the queue's */
	struct agent_req q[HTTPD_QUEUE];
	size_t head, n;
	struct httpd_stats st;		/* counted under @lock */
	uint16_t port;
};

static const char index_text[] =
	"heapsnoop agent\n"
	"/metrics           Prometheus text: live heap per process, losses, the agent's memory\n"
	"/debug/pprof/heap  the live heap as a pprof profile (?pid=N: one process; ?comm=NAME:\n"
"                   the processes of that name)\n";

static const char *const route_type[AGENT__ROUTES] = {
	[AGENT_METRICS] = "text/plain; version=0.0.4; charset=utf-8",
	[AGENT_HEAP] = "application/octet-stream",
};

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int code, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
								  MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static void count_bad(struct httpd *h)
{
	pthread_mutex_lock(&h->lock);
	h->st.bad++;
	pthread_mutex_unlock(&h->lock);
}

/* ?pid=N: 1 to INT_MAX in decimal, nothing else; 0: absent; -1: bad. */
static pid_t parse_pid(const char *v)
{
	unsigned long n = 0;

	if (!v)
		return 0;
	if (!*v || strlen(v) > 10)
		return -1;
	for (const char *c = v; *c; c++) {
		if (*c < '0' || *c > '9')
			return -1;
		n = n * 10 + (unsigned long)(*c - '0');
	}
	return n && n <= INT_MAX ? (pid_t)n : -1;
}

/* ?comm=NAME: 1 to 15 printable bytes; true if absent (@out "") or good. */
static bool parse_comm(const char *v, char *out, size_t cap)
{
	size_t n = v ? strlen(v) : 0;

	out[0] = '\0';
	if (!v)
		return true;
	if (!n || n >= cap)
		return false;
	for (size_t i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] > 0x7e)
			return false;
	memcpy(out, v, n + 1);
	return true;
}

/* Queue @route for the loop; the body's read end into *@rfd. 0 or -EAGAIN. */
static int enqueue(struct httpd *h, enum agent_route route, pid_t pid, const char *comm, int *rfd)
{
	int fds[2];
	uint64_t one = 1;

	if (pipe2(fds, O_CLOEXEC))
		return -EAGAIN;
	pthread_mutex_lock(&h->lock);
	if (h->n == HTTPD_QUEUE) {
		h->st.refused++;
		pthread_mutex_unlock(&h->lock);
		close(fds[0]);
		close(fds[1]);
		return -EAGAIN;
	}
	h->q[(h->head + h->n) % HTTPD_QUEUE] = (struct agent_req){ route, pid, fds[1] };
	snprintf(h->q[(h->head + h->n++) % HTTPD_QUEUE].comm, sizeof(h->q[0].comm), "%s", comm);
	h->st.requests[route]++;
	pthread_mutex_unlock(&h->lock);
	if (write(h->wake, &one, sizeof(one)) < 0) {
		/* An eventfd's counter full: the loop is woken already. */
	}
	*rfd = fds[0];
	return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_size, void **con_cls)
{
	struct httpd *h = cls;
	enum agent_route route;
	struct MHD_Response *r;
	enum MHD_Result ret;
	char comm[sizeof(((struct agent_req *)0)->comm)];
	pid_t pid;
	int rfd;

	(void)version;
	(void)upload;
	/* The first call has the head only: answer at the next (MHD's rule). */
	if (!*con_cls) {
		*con_cls = h;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET)) {
		count_bad(h);
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	}
	if (!strcmp(url, "/"))
		return reply_text(c, MHD_HTTP_OK, index_text);
	if (!strcmp(url, "/metrics"))
		route = AGENT_METRICS;
	else if (!strcmp(url, "/debug/pprof/heap"))
		route = AGENT_HEAP;
	else {
		count_bad(h);
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
	}
	pid = parse_pid(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid"));
	if (pid < 0) {
		count_bad(h);
		return reply_text(c, MHD_HTTP_BAD_REQUEST, "pid= wants a process id\n");
	}
	if (!parse_comm(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "comm"), comm,
			sizeof(comm))) {
		count_bad(h);
		return reply_text(c, MHD_HTTP_BAD_REQUEST, "comm= wants a process name, 1 to 15 "
				  "printable bytes\n");
	}
	if (enqueue(h, route, pid, comm, &rfd))
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy: try again\n");
	r = MHD_create_response_from_pipe(rfd);
	if (!r) {
		close(rfd);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, route_type[route]);
	if (route == AGENT_HEAP)
		MHD_add_response_header(r, "Content-Disposition", "attachment; filename=\"heap\"");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];

	(void)cls;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = 0;
	elog("agent: http: %s", buf);
}

/* "ADDR:PORT", "[ADDR6]:PORT" into @ss; 0 or -EINVAL. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN + 2], *end;
	unsigned long port;
	size_t n;

	if (!colon || colon == s)
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port > 65535)
		return -EINVAL;
	n = (size_t)(colon - s);
	if (n >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = 0;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
		host[n - 1] = 0;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a6);
		return inet_pton(AF_INET6, host + 1, &a6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	*len = sizeof(*a4);
	return inet_pton(AF_INET, host, &a4->sin_addr) == 1 ? 0 : -EINVAL;
}

struct httpd *httpd__new(const char *listen)
{
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	struct httpd *h;
	socklen_t len;
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_POLL | MHD_USE_ERROR_LOG;

	if (parse_listen(listen, &ss, &len)) {
		elog("--listen %s: not ADDR:PORT with a numeric address (127.0.0.1:6068, [::1]:6068)",
		     listen);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		elog("out of memory");
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->wake < 0) {
		elog("agent: eventfd: %s", strerror(errno));
		goto err;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
				MHD_OPTION_EXTERNAL_LOGGER, on_log, NULL,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTPD_MAX_CONNS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTPD_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTPD_CONN_MEMORY,
				MHD_OPTION_END);
	if (!h->d) {
		elog("agent: cannot listen on %s (in use, or not this machine's address)", listen);
		goto err;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : 0;
	return h;
err:
	if (h->wake >= 0)
		close(h->wake);
	pthread_mutex_destroy(&h->lock);
	free(h);
	return NULL;
}

uint16_t httpd__port(const struct httpd *h)
{
	return h->port;
}

int httpd__wake_fd(const struct httpd *h)
{
	return h ? h->wake : -1;
}

size_t httpd__take(struct httpd *h, enum agent_route route, struct agent_req *out, size_t max)
{
	uint64_t v;
	size_t k = 0, kept = 0;

	pthread_mutex_lock(&h->lock);
	/* Cleared first: a request queued after it wakes the loop again. */
	if (read(h->wake, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing counted since the last take. */
	}
	/* @route's taken, the others kept in their order. */
	for (size_t i = 0; i < h->n; i++) {
		struct agent_req *r = &h->q[(h->head + i) % HTTPD_QUEUE];

		if (k < max && (route == AGENT__ROUTES || r->route == route))
			out[k++] = *r;
		else
			h->q[(h->head + kept++) % HTTPD_QUEUE] = *r;
	}
	h->n = kept;
	if (h->n) {
		v = 1;
		if (write(h->wake, &v, sizeof(v)) < 0) {
			/* Full: it is readable. */
		}
	}
	pthread_mutex_unlock(&h->lock);
	return k;
}

void httpd__stats(const struct httpd *h, struct httpd_stats *st)
{
	pthread_mutex_lock((pthread_mutex_t *)&h->lock);
	*st = h->st;
	pthread_mutex_unlock((pthread_mutex_t *)&h->lock);
}

void httpd__free(struct httpd *h)
{
	struct agent_req r;

	if (!h)
		return;
	/* The queued bodies ended first: a connection's thread waits on its pipe. */
	while (httpd__take(h, AGENT__ROUTES, &r, 1))
		close(r.fd);
	MHD_stop_daemon(h->d);
	while (httpd__take(h, AGENT__ROUTES, &r, 1))
		close(r.fd);
	close(h->wake);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
