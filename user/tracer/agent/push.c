// SPDX-License-Identifier: MIT
/*
 * push.c - heapsnoop agent's push to Pyroscope's /ingest (see push.h):
 * an HTTP/1.1 POST written whole (Content-Length, Connection: close)
 * and the reply's status line read, nothing more of it: a client this
 * small is the project's own, since Debian's libcurl has no static
 * closure either (as libmicrohttpd's GnuTLS, notls.c). The reply is read
 * into a bounded buffer and only "HTTP/1.x NNN" at its start is looked at.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "heapprof.h"
#include "msg.h"
#include "push.h"

#define PUSH_BOUNDARY "heapsnoop-agent-7f3a9c2e"

int push__parse(const char *url, const char *name, struct push_target *pt)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)&pt->addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&pt->addr;
	const char *hp, *slash, *colon;
	char host[INET6_ADDRSTRLEN + 2], hostname[128] = "";
	unsigned long port;
	char *end;
	size_t n;

	memset(pt, 0, sizeof(*pt));
	if (strncmp(url, "http://", 7))
		goto bad;
	hp = url + 7;
	slash = strchr(hp, '/');
	n = slash ? (size_t)(slash - hp) : strlen(hp);
	if (!n || n >= sizeof(pt->host) || (slash && strlen(slash) >= sizeof(pt->path)))
		goto bad;
	memcpy(pt->host, hp, n);
	snprintf(pt->path, sizeof(pt->path), "%s", slash && slash[1] ? slash : "");
	/* A path prefix without its last slash: "/ingest" follows. */
	n = strlen(pt->path);
	if (n && pt->path[n - 1] == '/')
		pt->path[n - 1] = 0;
	colon = strrchr(pt->host, ':');
	if (!colon || colon == pt->host || (size_t)(colon - pt->host) >= sizeof(host))
		goto bad;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || !port || port > 65535)
		goto bad;
	memcpy(host, pt->host, (size_t)(colon - pt->host));
	host[colon - pt->host] = 0;
	n = strlen(host);
	if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
		host[n - 1] = 0;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		pt->len = sizeof(*a6);
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			goto bad;
	} else {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		pt->len = sizeof(*a4);
		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			goto bad;
	}
	gethostname(hostname, sizeof(hostname) - 1);
	for (char *c = hostname; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '.' || *c == '_'))
			*c = '_';
	if (name)
		snprintf(pt->name, sizeof(pt->name), "%s", name);
	else
		snprintf(pt->name, sizeof(pt->name), "heapsnoop{host=%s}", hostname);
	for (const char *c = pt->name; *c; c++)
		if (*c <= ' ' || *c == '&' || *c == '#' || *c == '%' || *c == '+' || *c > '~') {
			elog("--push-name %s: letters, digits and {=,._-} only", pt->name);
			return -EINVAL;
		}
	return 0;
bad:
	elog("--push-pyroscope %s: not http://ADDR:PORT[/PREFIX] with a numeric address", url);
	return -EINVAL;
}

/* "{" and "}" and "=" and "," in the query's name, as %XX. */
static void query_name(const char *name, char *out, size_t cap)
{
	size_t k = 0;

	for (; *name && k + 4 < cap; name++) {
		if (strchr("{}=,", *name))
			k += (size_t)snprintf(out + k, cap - k, "%%%02X", (unsigned char)*name);
		else
			out[k++] = *name;
	}
	out[k] = 0;
}

static int send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* One try: the request @req (@len bytes) sent, the status read. HTTP code, or -errno. */
static int try_once(const struct push_target *pt, const char *req, size_t len)
{
	struct timeval tv = { .tv_sec = PUSH_TIMEOUT_S };
	char reply[PUSH_REPLY_MAX + 1];
	size_t got = 0;
	int fd, code = -EIO;

	fd = socket(pt->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (const struct sockaddr *)&pt->addr, pt->len) || send_all(fd, req, len)) {
		code = -errno ? -errno : -EIO;
		goto out;
	}
	/* The status line: at most PUSH_REPLY_MAX bytes, until its end or the reply's. */
	while (got < PUSH_REPLY_MAX && !memchr(reply, '\n', got)) {
		ssize_t r = recv(fd, reply + got, PUSH_REPLY_MAX - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	reply[got] = 0;
	if (got >= 12 && !strncmp(reply, "HTTP/1.", 7) && reply[8] == ' ' &&
	    reply[9] >= '1' && reply[9] <= '5' && reply[10] >= '0' && reply[10] <= '9' &&
	    reply[11] >= '0' && reply[11] <= '9')
		code = (reply[9] - '0') * 100 + (reply[10] - '0') * 10 + (reply[11] - '0');
out:
	close(fd);
	return code;
}

int push__send(struct trace *t, const struct push_target *pt, int64_t from, int64_t until)
{
	char *prof = NULL, *req = NULL, qname[768];
	size_t plen = 0, rlen = 0;
	FILE *f = open_memstream(&prof, &plen);
	int err, code = 0;

	if (!f)
		return -ENOMEM;
	err = heapprof__write(t, 0, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err)
		goto out;
	query_name(pt->name, qname, sizeof(qname));
	f = open_memstream(&req, &rlen);
	if (!f) {
		err = -ENOMEM;
		goto out;
	}
	/* The part's header, the profile, the closing boundary: the body. */
	{
		static const char part_head[] =
			"--" PUSH_BOUNDARY "\r\n"
			"Content-Disposition: form-data; name=\"profile\"; filename=\"profile.pprof\"\r\n"
			"Content-Type: application/octet-stream\r\n\r\n";
		static const char part_tail[] = "\r\n--" PUSH_BOUNDARY "--\r\n";
		size_t body = sizeof(part_head) - 1 + plen + sizeof(part_tail) - 1;

		fprintf(f, "POST %s/ingest?name=%s&from=%lld&until=%lld&format=pprof&spyName=heapsnoop"
			" HTTP/1.1\r\nHost: %s\r\nUser-Agent: heapsnoop-agent\r\n"
			"Content-Type: multipart/form-data; boundary=" PUSH_BOUNDARY "\r\n"
			"Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
			pt->path, qname, (long long)from, (long long)until, pt->host, body, part_head);
		fwrite(prof, 1, plen, f);
		fputs(part_tail, f);
	}
	if (fclose(f)) {
		err = -ENOMEM;
		goto out;
	}
	err = -EIO;
	for (int i = 0; i < PUSH_TRIES; i++) {
		code = try_once(pt, req, rlen);
		if (code >= 200 && code < 300) {
			err = 0;
			break;
		}
		if (code < 0)
			elog("agent: push to %s: %s (try %d of %d)", pt->host, strerror(-code),
			     i + 1, PUSH_TRIES);
		else
			elog("agent: push to %s: HTTP %d (try %d of %d)", pt->host, code, i + 1,
			     PUSH_TRIES);
		if (i + 1 < PUSH_TRIES)
			sleep(1u << i);
	}
out:
	free(prof);
	free(req);
	return err;
}
