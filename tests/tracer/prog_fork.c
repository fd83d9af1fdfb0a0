// SPDX-License-Identifier: MIT
/*
 * prog_fork.c - a process that forks: it says "ready PID", waits for a
 * line on stdin, then forks 2 children that each leak 3 blocks of 200
 * bytes from child_leak() and exit; once both are reaped it leaks one
 * block of 100 bytes from parent_leak() and exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile keep[8];	/* not static: the leaks are not optimized away */

__attribute__((noinline)) static void child_leak(void)
{
	for (int i = 0; i < 3; i++)
		keep[i] = malloc(200);
}

__attribute__((noinline)) static void parent_leak(void)
{
	keep[7] = malloc(100);
}

int main(void)
{
	char line[64];

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (int i = 0; i < 2; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			child_leak();
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	parent_leak();
	return 0;
}
