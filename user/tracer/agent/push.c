// SPDX-License-Identifier: MIT
/*
 * push.c - heapsnoop agent's pushes to Pyroscope's /ingest and to an
 * OTLP/HTTP receiver (see push.h): an HTTP/1.1 POST written whole
 * (Content-Length, Connection: close) and the reply read into a bounded
 * buffer: a client this small is the project's own, since Debian's
 * libcurl has no static closure either (as libmicrohttpd's GnuTLS,
 * notls.c). Of the reply only "HTTP/1.x NNN" at its start is looked at,
 * and for OTLP a body whose Content-Length the buffer holds whole.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "heapprof.h"
#include "msg.h"
#include "otlp.h"
#include "push.h"

#define PUSH_BOUNDARY "heapsnoop-agent-7f3a9c2e"

/* @url, "http://ADDR:PORT[/PREFIX]", into @d. 0, or -EINVAL after saying why. */
static int parse_dest(const char *url, const char *option, struct push_dest *d)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)&d->addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&d->addr;
	const char *hp, *slash, *colon;
	char host[INET6_ADDRSTRLEN + 2];
	unsigned long port;
	char *end;
	size_t n;

	if (strncmp(url, "http://", 7))
		goto bad;
	hp = url + 7;
	slash = strchr(hp, '/');
	n = slash ? (size_t)(slash - hp) : strlen(hp);
	if (!n || n >= sizeof(d->host) || (slash && strlen(slash) >= sizeof(d->path)))
		goto bad;
	memcpy(d->host, hp, n);
	snprintf(d->path, sizeof(d->path), "%s", slash && slash[1] ? slash : "");
	/* A path prefix without its last slash: "/ingest" follows. */
	n = strlen(d->path);
	if (n && d->path[n - 1] == '/')
		d->path[n - 1] = 0;
	colon = strrchr(d->host, ':');
	if (!colon || colon == d->host || (size_t)(colon - d->host) >= sizeof(host))
		goto bad;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || !port || port > 65535)
		goto bad;
	memcpy(host, d->host, (size_t)(colon - d->host));
	host[colon - d->host] = 0;
	n = strlen(host);
	if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
		host[n - 1] = 0;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		d->len = sizeof(*a6);
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			goto bad;
	} else {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		d->len = sizeof(*a4);
		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			goto bad;
	}
	return 0;
bad:
	elog("%s %s: not http://ADDR:PORT[/PREFIX] with a numeric address", option, url);
	return -EINVAL;
}

int push__parse(const char *pyroscope_url, const char *otlp_url, const char *name,
		struct push_target *pt)
{
	char hostname[128] = "";
	void *page;

	memset(pt, 0, sizeof(*pt));
	pt->pyroscope.what = "Pyroscope";
	pt->otlp.what = "OTLP";
	pt->otlp.reply_body = true;
	if ((pyroscope_url && parse_dest(pyroscope_url, "--push-pyroscope", &pt->pyroscope)) ||
	    (otlp_url && parse_dest(otlp_url, "--push-otlp", &pt->otlp)))
		return -EINVAL;
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
	/* Each push is a child: what it said lives on in a page they share. */
	page = mmap(NULL, sizeof(*pt->state), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	pt->state = page == MAP_FAILED ? NULL : page;
	return 0;
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

/* The reply's body, if its headers end and their Content-Length is there whole: its length, else -1. */
static ssize_t reply_body(const char *reply, size_t got, const char **body)
{
	const char *end = memmem(reply, got, "\r\n\r\n", 4), *cl;
	unsigned long n;

	if (!end)
		return -1;
	for (cl = reply; (cl = memchr(cl, '\n', (size_t)(end - cl))); ) {
		cl++;
		if (!strncasecmp(cl, "Content-Length:", 15))
			break;
	}
	if (!cl)
		return -1;
	n = strtoul(cl + 15, NULL, 10);
	*body = end + 4;
	if (n > got - (size_t)(*body - reply))
		return -1;
	return (ssize_t)n;
}

/*
 * One try: the request @req (@len bytes) sent to @d, the reply read into
 * @reply (PUSH_REPLY_MAX + 1 bytes; *@got of them): its status line, or
 * with @whole its body too (until its Content-Length, or the end). Each
 * step waits PUSH_TIMEOUT_S at most, and not past @deadline (Unix
 * seconds). Returns the HTTP code, or -errno.
 */
static int try_once(const struct push_dest *d, const char *req, size_t len, bool whole,
		    time_t deadline, char *reply, size_t *got)
{
	time_t left = deadline - time(NULL);
	struct timeval tv = { .tv_sec = left < PUSH_TIMEOUT_S ? left : PUSH_TIMEOUT_S };
	const char *body;
	int fd, code = -EIO;

	*got = 0;
	if (tv.tv_sec <= 0)
		return -ETIMEDOUT;
	fd = socket(d->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (const struct sockaddr *)&d->addr, d->len) || fd__write_all(fd, req, len, true)) {
		code = errno ? -errno : -EIO;
		goto out;
	}
	/* At most PUSH_REPLY_MAX bytes, until the status line's end (or the body's) or the reply's. */
	while (*got < PUSH_REPLY_MAX) {
		ssize_t r;

		if (!whole && memchr(reply, '\n', *got))
			break;
		if (whole && reply_body(reply, *got, &body) >= 0)
			break;
		r = recv(fd, reply + *got, PUSH_REPLY_MAX - *got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			code = -ETIMEDOUT;
		if (r <= 0)
			break;
		*got += (size_t)r;
	}
	reply[*got] = 0;
	if (*got >= 12 && !strncmp(reply, "HTTP/1.", 7) && reply[8] == ' ' &&
	    reply[9] >= '1' && reply[9] <= '5' && reply[10] >= '0' && reply[10] <= '9' &&
	    reply[11] >= '0' && reply[11] <= '9')
		code = (reply[9] - '0') * 100 + (reply[10] - '0') * 10 + (reply[11] - '0');
out:
	close(fd);
	return code;
}

/*
 * @req (@len bytes) to @d, tried PUSH_TRIES times until @deadline; its
 * failure said once (*@said: said before), its first success after one
 * said too. 0 or -EIO.
 */
static int post(const struct push_dest *d, const char *req, size_t len, time_t deadline,
		int *said)
{
	char reply[PUSH_REPLY_MAX + 1], why[256] = "";
	int code = 0;

	for (int i = 0; i < PUSH_TRIES; i++) {
		const char *body;
		ssize_t blen;
		size_t got;
		int64_t rejected;

		if (i && time(NULL) + (1 << (i - 1)) >= deadline)
			break;	/* PUSH_BUDGET_S spent: said with the tries made */
		if (i)
			sleep(1u << (i - 1));
		code = try_once(d, req, len, d->reply_body, deadline, reply, &got);
		if (code >= 200 && code < 300) {
			blen = d->reply_body ? reply_body(reply, got, &body) : -1;
			rejected = blen > 0 ? otlp__rejected(body, (size_t)blen, why, sizeof(why)) : 0;
			if (rejected) {
				/* A partial success: the spec says not to send it again. */
				snprintf(reply, sizeof(reply), "%lld profiles rejected: %s",
					 (long long)rejected, why);
				goto failed;
			}
			if (*said)
				elog("agent: %s push to %s goes through again", d->what, d->host);
			*said = 0;
			return 0;
		}
		if (code < 0)
			snprintf(why, sizeof(why), "%s", strerror(-code));
		else
			snprintf(why, sizeof(why), "HTTP %d", code);
		/* A refusal a retry would not change: the request's own fault. */
		if (code >= 400 && code < 500 && code != 408 && code != 429) {
			snprintf(reply, sizeof(reply), "%s (not tried again)", why);
			goto failed;
		}
		snprintf(reply, sizeof(reply), "%s (%d %s)", why, i + 1, i ? "tries" : "try");
	}
failed:
	if (!*said)
		elog("agent: %s push to %s failed: %s; each failed push is counted in "
		     "heapsnoop_agent_push_failures_total, said again only after one goes through",
		     d->what, d->host, reply);
	*said = 1;
	return -EIO;
}

/* The multipart POST to Pyroscope's /ingest of the pprof @prof (@plen bytes), into *@req. */
static int ingest_request(const struct push_target *pt, const char *prof, size_t plen,
			  int64_t from, int64_t until, char **req, size_t *rlen)
{
	static const char part_head[] =
		"--" PUSH_BOUNDARY "\r\n"
		"Content-Disposition: form-data; name=\"profile\"; filename=\"profile.pprof\"\r\n"
		"Content-Type: application/octet-stream\r\n\r\n";
	static const char part_tail[] = "\r\n--" PUSH_BOUNDARY "--\r\n";
	size_t body = sizeof(part_head) - 1 + plen + sizeof(part_tail) - 1;
	FILE *f = open_memstream(req, rlen);
	char qname[768];

	if (!f)
		return -ENOMEM;
	query_name(pt->name, qname, sizeof(qname));
	fprintf(f, "POST %s/ingest?name=%s&from=%lld&until=%lld&format=pprof&spyName=heapsnoop"
		" HTTP/1.1\r\nHost: %s\r\nUser-Agent: heapsnoop-agent\r\n"
		"Content-Type: multipart/form-data; boundary=" PUSH_BOUNDARY "\r\n"
		"Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		pt->pyroscope.path, qname, (long long)from, (long long)until, pt->pyroscope.host,
		body, part_head);
	fwrite(prof, 1, plen, f);
	fputs(part_tail, f);
	return fclose(f) ? -ENOMEM : 0;
}

/* The OTLP/HTTP POST of the pprof @prof (@plen bytes) as an export request, into *@req. */
static int otlp_request(const struct push_target *pt, const char *prof, size_t plen, char **req,
			size_t *rlen)
{
	uint8_t *msg = NULL;
	size_t mlen = 0;
	FILE *f;
	int err = otlp__request(prof, plen, &msg, &mlen);

	if (err)
		return err;
	f = open_memstream(req, rlen);
	if (!f) {
		free(msg);
		return -ENOMEM;
	}
	fprintf(f, "POST %s" OTLP_PATH " HTTP/1.1\r\nHost: %s\r\nUser-Agent: heapsnoop-agent\r\n"
		"Content-Type: " OTLP_CONTENT_TYPE "\r\nContent-Length: %zu\r\n"
		"Connection: close\r\n\r\n", pt->otlp.path, pt->otlp.host, mlen);
	fwrite(msg, 1, mlen, f);
	free(msg);
	return fclose(f) ? -ENOMEM : 0;
}

int push__send(struct trace *t, const struct push_target *pt, int64_t from, int64_t until)
{
	struct push_state none = { 0 }, *st = pt->state ? pt->state : &none;
	/* Every destination's tries within PUSH_BUDGET_S of the start. */
	time_t deadline = time(NULL) + PUSH_BUDGET_S;
	char *prof = NULL, *req = NULL;
	size_t plen = 0, rlen = 0;
	FILE *f = open_memstream(&prof, &plen);
	int err, failed = 0;

	if (!f)
		return -ENOMEM;
	err = heapprof__write(t, 0, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err)
		goto out;
	if (pt->pyroscope.len) {
		err = ingest_request(pt, prof, plen, from, until, &req, &rlen);
		if (!err)
			failed |= post(&pt->pyroscope, req, rlen, deadline, &st->said_pyroscope);
		free(req);
		req = NULL;
		if (err)
			goto out;
	}
	if (pt->otlp.len) {
		err = otlp_request(pt, prof, plen, &req, &rlen);
		if (err)
			elog("agent: the OTLP request could not be made: %s", strerror(-err));
		else
			failed |= post(&pt->otlp, req, rlen, deadline, &st->said_otlp);
		free(req);
		req = NULL;
	}
	if (!err && failed)
		err = -EIO;
out:
	free(prof);
	return err;
}
