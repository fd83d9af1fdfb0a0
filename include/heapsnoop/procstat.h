/* SPDX-License-Identifier: MIT */
/*
 * procstat.h - a process's start time as proc(5) gives it: field 22 of
 * /proc/PID/stat, `starttime`, in clock ticks since boot. With the pid it
 * names one process for its life (a pid is reused, the pair is not): the
 * collector's hello carries it (livetable.h's lt_hello) and the agent
 * checks a table's process by it (tracer/agent/collectors.c). Header
 * only, no allocation and no stdio: the collector calls it from code that
 * may run inside malloc.
 */
#ifndef HEAPSNOOP_PROCSTAT_H
#define HEAPSNOOP_PROCSTAT_H

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/*
 * The start time of the process whose stat file is @path
 * ("/proc/self/stat", "/proc/PID/stat"), clock ticks since boot; 0 when
 * it cannot be read (gone, no /proc) or parsed. The command name (field
 * 2) may hold blanks and parentheses: fields are counted after its last
 * ')'.
 */
static inline uint64_t procstat__start_ticks(const char *path)
{
	char buf[1024], *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC), field = 3;
	ssize_t n;
	uint64_t v = 0;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	for (p = p ? p + 2 : buf; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	return v;
}

#endif /* HEAPSNOOP_PROCSTAT_H */
