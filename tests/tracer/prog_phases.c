// SPDX-License-Identifier: MIT
/*
 * prog_phases.c - a program with known phases for the whole-run
 * accounting (test_overtime.sh). It allocates nothing but these, and
 * talks through read(2)/write(2) only (stdio would allocate):
 *   1. site_m() called exactly M_CALLS times, each block kept;
 *   2. a PEAK_BYTES buffer from peak_buffer(), freed at once: the peak;
 *   3. N_TEMP temporary allocations from temp_site() (malloc, then free);
 *   4. then, K_LEAK times: writes "dump K" on stdout and waits for a line
 *      on stdin; before each but the first, one LEAK_BYTES block from
 *      leak_one() (so dumps taken at those points see the leak grow by
 *      exactly one block each).
 * With an argument, it also frees what it kept at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define M_CALLS 7
#define M_BYTES 100
#define PEAK_BYTES (1 << 20)
#define N_TEMP 50
#define TEMP_BYTES 32
#define K_LEAK 5
#define LEAK_BYTES 64

static void *kept[M_CALLS], *leaked[K_LEAK];

__attribute__((noinline)) static void *site_m(void)
{
	return malloc(M_BYTES);
}

__attribute__((noinline)) static void peak_buffer(void)
{
	char *volatile p = malloc(PEAK_BYTES);

	memset(p, 1, PEAK_BYTES);
	free(p);
}

__attribute__((noinline)) static void temp_site(void)
{
	void *volatile p = malloc(TEMP_BYTES);

	free(p);
}

__attribute__((noinline)) static void *leak_one(void)
{
	return malloc(LEAK_BYTES);
}

/* "dump K\n" out, then wait for any line in; 0, or -1 on EOF. */
static int handshake(int k)
{
	char buf[32], c;
	int n = snprintf(buf, sizeof(buf), "dump %d\n", k);

	if (write(1, buf, (size_t)n) != n)
		return -1;
	do {
		if (read(0, &c, 1) != 1)
			return -1;
	} while (c != '\n');
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 0; i < M_CALLS; i++)
		kept[i] = site_m();
	peak_buffer();
	for (int i = 0; i < N_TEMP; i++)
		temp_site();
	for (int k = 0; k <= K_LEAK; k++) {
		if (k)
			leaked[k - 1] = leak_one();
		if (handshake(k))
			return 1;
	}
	if (argc > 1) {
		for (int i = 0; i < M_CALLS; i++)
			free(kept[i]);
		for (int i = 0; i < K_LEAK; i++)
			free(leaked[i]);
	}
	return 0;
}
