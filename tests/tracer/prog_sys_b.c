// SPDX-License-Identifier: MIT
/*
 * prog_sys_b.c - another of the system-wide test's programs: says "ready
 * PID", then on each "leak" line on stdin leaks 5 zeroed blocks of 2000
 * bytes from sysb_calloc() and grows 2 blocks to 4096 bytes with realloc in
 * sysb_grow(), and answers "done"; a stdin EOF exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink[64];
static int n;

__attribute__((noinline)) void sysb_calloc(void)
{
	for (int i = 0; i < 5; i++)
		sink[n++ & 63] = calloc(1, 2000);
}

__attribute__((noinline)) void sysb_grow(void)
{
	for (int i = 0; i < 2; i++) {
		void *p = malloc(16);

		sink[n++ & 63] = realloc(p, 4096);
	}
}

int main(void)
{
	char line[64];

	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "leak", 4)) {
			sysb_calloc();
			sysb_grow();
		}
		printf("done\n");
	}
	return 0;
}
