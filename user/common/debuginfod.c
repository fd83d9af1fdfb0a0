// SPDX-License-Identifier: MIT
/*
 * debuginfod.c - debug info by build ID from debuginfod servers, through
 * `debuginfod-find debuginfo BUILDID` (see debuginfod.h). The client
 * writes the path of the file it downloaded (or found in its cache) on
 * standard output and exits 0; anything else is "not found", as libdwfl
 * takes a failed query. Its complaints (a 404 for every module the
 * servers do not have) go to /dev/null, as libdwfl's own client keeps
 * them quiet.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "debuginfod.h"
#include "msg.h"
#include "text.h"

#define CLIENT "debuginfod-find"

/* Set once the client could not be run: not asked again, not said again. */
static bool no_client;

/*
 * Run the client for build ID @hex, its standard output into @out (a
 * path, NUL-terminated). Returns its exit status (128 + N: killed by
 * signal N), or -errno (-ENOENT, -EACCES: no client to run).
 */
static int run_client(const char *hex, char *out, size_t cap)
{
	char *const argv[] = { CLIENT, "debuginfo", (char *)hex, NULL };
	posix_spawn_file_actions_t fa;
	size_t len = 0;
	int p[2], err, status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	err = posix_spawn_file_actions_init(&fa);
	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	if (!err)
		err = posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	if (!err)
		err = posix_spawnp(&pid, CLIENT, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (err) {
		close(p[0]);
		return -err;
	}
	for (;;) {
		ssize_t n = read(p[0], out + len, cap - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == cap - 1)	/* longer than a path: not one */
			break;
	}
	close(p[0]);
	out[len] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (len == cap - 1)
		return -ENAMETOOLONG;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int debuginfod__find(const unsigned char *id, int len, char **path)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char hex[BUILD_ID_HEX_SIZE], out[4096];
	struct stat st;
	int status, fd;

	if (!urls || !*urls || no_client || len <= 0 || len > BUILD_ID_MAX)
		return -1;
	build_id_hex(id, len, hex);
	status = run_client(hex, out, sizeof(out));
	if (status == -ENOENT || status == -EACCES) {
		no_client = true;
		elog("DEBUGINFOD_URLS is set, but %s, which fetches debug info from those "
		     "servers, is not installed (Debian: debuginfod; Fedora: "
		     "elfutils-debuginfod-client): modules without local debug info are "
		     "named by their symbols only", CLIENT);
		return -1;
	}
	if (status != 0)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	if (out[0] != '/')
		return -1;
	fd = open(out, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(*path = strdup(out))) {
		close(fd);
		return -1;
	}
	return fd;
}
