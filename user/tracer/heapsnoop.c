// SPDX-License-Identifier: MIT
/*
 * heapsnoop - trace the heap of a running process or of a command, and
 * write every live (outstanding) allocation as a `~m#` record with the
 * stack that made it. The options are options.c's; a run, from loading
 * the BPF side to the last dump, is the session's (session.c starts it,
 * loop.c runs it, shutdown.c ends it); --preload runs the command with
 * the in-process collector instead (preload/plrun.c); `heapsnoop agent`
 * runs a session as a service with a pull endpoint (agent.c).
 *
 * Line grammar of the output: docs/OUTPUT.md (user/common/records/records.c).
 */
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "heapsnoop/exit.h"
#include "msg.h"
#include "options.h"
#include "preload/preload.h"
#include "session.h"

int main(int argc, char **argv)
{
	struct options o;
	struct session *s;
	int status;

	msg_init("heapsnoop");
	/* heapsnoop agent ...: the service (agent.h). */
	if (argc > 1 && !strcmp(argv[1], "agent"))
		return agent__main(argc - 1, argv + 1);
	if (options__parse(argc, argv, &o)) {
		fputs("Try 'heapsnoop --help' for more information.\n", stderr);
		return HS_EXIT_ERROR;
	}
	if (o.sample_bytes && !o.quiet)
		elog("sampling: one allocation per %llu bytes on average is recorded, as it is; "
		     "the dumps say so and heapdecode's reports estimate what the sampled blocks "
		     "stand for (byte totals here are estimates, counts are of sampled blocks)",
		     (unsigned long long)o.sample_bytes);
	if (o.preload)
		return preload__run(&(struct preload_opts){
			.argv = o.argv, .output = o.output, .interval = o.interval,
			.summary = o.summary, .full_stacks = o.full_stacks,
			.default_supp = !o.gate.no_default_supp, .verbose = o.verbose,
			.unwind_fp = o.unwind_fp, .snip_pre = o.snip_pre, .snip_post = o.snip_post,
			.sample_bytes = o.sample_bytes, .seed = o.seed,
			.python = o.interp & OPT_INTERP_PYTHON, .lua = o.interp & OPT_INTERP_LUA });
	s = session__new(&o);
	if (!s)
		return HS_EXIT_ERROR;
	status = session__run(s);
	session__free(s);
	return status;
}
