// SPDX-License-Identifier: MIT
/*
 * preload.c - `heapsnoop --preload` (see preload.h): the environment the
 * collector reads (user/collector/preload.c, docs/COLLECTOR.md), then
 * execvp. The command keeps heapsnoop's pid, so `kill -USR1` reaches it.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"
#include "preload.h"

#define PRELOAD_LIB "libheapsnoop_preload.so"

/* The library's path: $HEAPSNOOP_PRELOAD_LIB, else beside our binary. */
static int find_lib(char *path, size_t cap)
{
	const char *env = getenv("HEAPSNOOP_PRELOAD_LIB");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(path, cap, "%s", env);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return -errno;
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		*slash = '\0';
		if ((size_t)snprintf(path, cap, "%s/%s", exe, PRELOAD_LIB) >= cap)
			return -ENAMETOOLONG;
	}
	return access(path, R_OK) ? -errno : 0;
}

static int set_num(const char *name, unsigned long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", v);
	return setenv(name, buf, 1);
}

int preload__exec(const struct options *o)
{
	char lib[PATH_MAX + sizeof(PRELOAD_LIB) + 1], out[PATH_MAX], pre[2 * PATH_MAX];
	const char *old = getenv("LD_PRELOAD");
	int err = find_lib(lib, sizeof(lib));

	if (err) {
		elog("cannot use %s: %s (set HEAPSNOOP_PRELOAD_LIB to its path)", lib,
		     strerror(-err));
		return 127;
	}
	snprintf(pre, sizeof(pre), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	if (o->output && o->output[0] != '/' && getcwd(out, sizeof(out))) {
		size_t n = strlen(out);

		snprintf(out + n, sizeof(out) - n, "/%s", o->output);
	} else {
		snprintf(out, sizeof(out), "%s", o->output ? o->output : "");
	}
	if (setenv("LD_PRELOAD", pre, 1) ||
	    (o->output && setenv("HEAPSNOOP_OUTPUT", out, 1)) ||
	    (o->interval && set_num("HEAPSNOOP_INTERVAL", o->interval)) ||
	    (o->sample_bytes && set_num("HEAPSNOOP_SAMPLE_BYTES", o->sample_bytes)) ||
	    (o->seed && set_num("HEAPSNOOP_SEED", o->seed)) ||
	    (o->unwind_fp && setenv("HEAPSNOOP_UNWIND", "fp", 1)) ||
	    set_num("HEAPSNOOP_SIGNAL", SIGUSR1)) {
		elog("cannot set the collector's environment: %s", strerror(errno));
		return 127;
	}
	execvp(o->argv[0], o->argv);
	elog("cannot run %s: %s", o->argv[0], strerror(errno));
	return 127;
}
