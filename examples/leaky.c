// SPDX-License-Identifier: MIT
/*
 * leaky.c - a small program with a known leak, for heapsnoop's demo.
 *
 * It serves 100 "requests". Each parses a header into a buffer it frees,
 * and caches a session it forgets to free every 10th time: 10 leaked
 * sessions of 256 bytes, plus one 4096-byte config that lives to the end.
 * Built with frame pointers so every stack reaches main.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct session {
	char id[248];
	struct session *next;
};

static struct session *sessions;

__attribute__((noinline)) static struct session *new_session(int n)
{
	struct session *s = malloc(sizeof(*s));

	if (!s)
		abort();
	snprintf(s->id, sizeof(s->id), "session-%d", n);
	s->next = NULL;
	return s;
}

__attribute__((noinline)) static char *parse_header(int n)
{
	char *h = calloc(1, 64);

	if (h)
		snprintf(h, 64, "X-Request: %d", n);
	return h;
}

__attribute__((noinline)) static void handle_request(int n)
{
	char *h = parse_header(n);
	struct session *s = new_session(n);

	if (n % 10 == 0) {
		/* Bug: cached, then the cache entry is dropped without free(). */
		s->next = sessions;
		sessions = NULL;
	} else {
		free(s);
	}
	free(h);
}

__attribute__((noinline)) static char *load_config(void)
{
	char *cfg = malloc(4096);

	if (cfg)
		memset(cfg, 0, 4096);
	return cfg;
}

int main(void)
{
	char *cfg = load_config();

	for (int i = 0; i < 100; i++)
		handle_request(i);
	printf("leaky: served 100 requests (config at %p)\n", (void *)cfg);
	return 0;
}
