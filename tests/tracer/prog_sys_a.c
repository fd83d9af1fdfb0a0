// SPDX-License-Identifier: MIT
/*
 * prog_sys_a.c - one of the system-wide test's programs: says "ready PID",
 * then on each "leak" line on stdin leaks 3 blocks of 1000 bytes from
 * sysa_leak(), on "free" frees every block it holds, on "rename NAME"
 * renames itself (prctl(PR_SET_NAME), as /proc/PID/comm shows), and answers
 * "done"; a stdin EOF exits. Expected results: test_syswide.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

void *volatile sink[64];
static int n;

__attribute__((noinline)) void sysa_leak(void)
{
	for (int i = 0; i < 3; i++)
		sink[n++ & 63] = malloc(1000);
}

int main(void)
{
	char line[64];

	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "leak", 4)) {
			sysa_leak();
		} else if (!strncmp(line, "free", 4)) {
			for (int i = 0; i < 64; i++) {
				free(sink[i]);
				sink[i] = NULL;
			}
			n = 0;
		} else if (!strncmp(line, "rename ", 7)) {
			line[strcspn(line, "\n")] = '\0';
			prctl(PR_SET_NAME, line + 7, 0, 0, 0);
		}
		printf("done\n");
	}
	return 0;
}
