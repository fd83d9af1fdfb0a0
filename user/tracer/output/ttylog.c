// SPDX-License-Identifier: MIT
/*
 * ttylog.c - the log heapsnoop names for itself when standard output is a
 * terminal and no -o is given (see ttylog.h). The name holds only
 * characters a shell takes as they are, so the commands said at the end
 * can be pasted without quoting.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msg.h"
#include "ttylog.h"

#define TTYLOG_PROGRAM	32	/* characters of the program's name kept */
#define TTYLOG_TRIES	99

bool ttylog__wanted(const char *output)
{
	return !output && isatty(STDOUT_FILENO);
}

/* The program's name into @buf (TTYLOG_PROGRAM + 1 bytes), shell-safe. */
static void program_name(char *const *argv, pid_t pid, char *buf)
{
	const char *base = "all";
	char comm[64] = "", path[64];
	size_t i;
	FILE *f;

	if (argv) {
		base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	} else if (pid) {
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "re");
		if (f && fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		if (f)
			fclose(f);
		base = *comm ? comm : "pid";
	}
	for (i = 0; base[i] && i < TTYLOG_PROGRAM; i++) {
		char c = base[i];

		buf[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '_' || c == '+' || c == '-' ? c : '_';
	}
	buf[i] = '\0';
	if (!i || buf[0] == '.' || buf[0] == '-')	/* never hidden, never an option */
		snprintf(buf, TTYLOG_PROGRAM + 1, "%s", "program");
}

struct outfile *ttylog__create(char *const *argv, pid_t pid, char *path, size_t cap)
{
	char prog[TTYLOG_PROGRAM + 1];
	pid_t id = argv || !pid ? getpid() : pid;
	struct outfile *of;

	program_name(argv, pid, prog);
	for (int i = 1; i <= TTYLOG_TRIES; i++) {
		if (i == 1)
			snprintf(path, cap, "heapsnoop.%s.%d.heap", prog, id);
		else
			snprintf(path, cap, "heapsnoop.%s.%d.%d.heap", prog, id, i);
		of = outfile__create(path);
		if (of)
			return of;
		if (errno != EEXIST)
			return NULL;	/* outfile.c said why */
	}
	elog("%s and %d others like it exist: give the log's name with -o FILE", path,
	     TTYLOG_TRIES - 1);
	return NULL;
}

void ttylog__next(FILE *out, const char *path)
{
	struct stat st;
	size_t n = strlen(path);
	int stem = n > 5 && !strcmp(path + n - 5, ".heap") ? (int)(n - 5) : (int)n;

	if (stat(path, &st))
		return;
	flog(out, "the records are in %s (%lld bytes); next:", path, (long long)st.st_size);
	fprintf(out, "  heapdecode --report %s\n", path);
	fprintf(out, "  heapdecode --flamegraph %.*s.svg %s\n", stem, path, path);
	fflush(out);
}
