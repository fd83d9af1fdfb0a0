// SPDX-License-Identifier: MIT
/*
 * shutdown.c - the end of a run of heapsnoop (see session.h): the probes
 * detached first, so that the target runs at full speed again, the last
 * records and events drained, the last dump and -s's summary written,
 * the closing accounting said (status.c: what was lost, not traced, the
 * unwinder's counts with -v), and the exit status chosen
 * (heapsnoop/exit.h): an error, then incomplete records, then the
 * command's own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "attach/attach.h"
#include "attach/detach.h"
#include "attach/execprobe.h"
#include "attach/libcfollow.h"
#include "attach/libcwatch.h"
#include "heapsnoop.skel.h"
#include "heapsnoop/exit.h"
#include "interp/interp.h"
#include "msg.h"
#include "outfile.h"
#include "output/bgdump.h"
#include "output/liveview.h"
#include "output/dump.h"
#include "output/status.h"
#include "output/ttylog.h"
#include "session_int.h"
#include "stream/flow.h"
#include "stream/reader.h"
#include "symbolizer.h"
#include "track/mmaprec.h"
#include "track/trace.h"

/*
 * The last of both, probes detached: the records, then the watcher they
 * call closed, its probes and the tracepoints detached together (one
 * grace period's wait, detach.h), then the events. Returns the mapping
 * records lost.
 */
static uint64_t drain_last(struct session *s)
{
	struct link_batch *b;
	uint64_t lost;

	session__drain(s);
	lost = s->mr ? mmaprec__lost(s->mr) : 0;
	mmaprec__free(s->mr);	/* before the watcher it calls */
	s->mr = NULL;
	b = link_batch__new();
	libc_watch__free(s->watch, b);
	s->watch = NULL;
	session__detach_tasks(s, b);
	link_batch__destroy(b);
	reader__drain(s->rd);
	return lost;
}

/* Detached, drained: the last dump, -s, the accounting; the exit status. */
int session__finish(struct session *s, int status)
{
	uint64_t lost_maps, lost, untraced;
	double view_ms;
	int flow_err;

	/*
	 * Disarmed first: the links go in any order (detach.h), so a call's
	 * return probe may go before its entry's; its thread's next entry
	 * would count a missed return for a call begun as tracing ended,
	 * no more a loss than one begun before it started (session.c).
	 */
	s->skel->bss->armed = false;
	/* Detach before writing: the target runs at full speed again. */
	attach__free(s->att);
	s->att = NULL;
	/* Nothing more comes: the traced processes never wait again. */
	flow_err = s->flow ? flow__error(s->flow) : 0;
	if (s->flow && s->o.verbose && !flow__realtime(s->flow))
		elog("the thread that makes the traced processes wait could not run real-time "
		     "(SCHED_FIFO: CAP_SYS_NICE): on a busy machine it may come late, and events "
		     "be lost (counted)");
	flow__stop(s->flow);
	s->flow = NULL;
	lost_maps = drain_last(s);
	/* The terminal's own screen back before the summary is written. */
	view_ms = liveview__longest_ms(s->lv);
	liveview__free(s->lv);
	s->lv = NULL;
	bgdump__reap(s->bg, true);	/* a dump still written: its end */
	if (s->o.all)
		session__reap(s);
	status__read_counters(s->skel->maps.counters, s->cnt);
	interp__settle(s->interp);
	if (report__dump(s->trace, s->out, s->reason)) {
		elog("writing records failed: %s", strerror(errno));
		status = HS_EXIT_ERROR;
	}
	if (s->o.summary) {
		struct symbolizer *sym = symbolizer__new(NULL);

		report__summary(s->trace, sym, stderr, s->o.summary,
				&(struct summary_opts){ !s->o.gate.no_default_supp, s->o.output,
							s->o.full_stacks });
		symbolizer__free(sym);
	}
	if (outfile__close(s->of))
		status = HS_EXIT_ERROR;
	s->of = NULL;
	s->out = stdout;
	lost = status__final(stderr, s->trace, s->cnt);
	if (s->hold)
		status__hold(stderr, s->hold, flow_err);
	if (s->unfollowed)
		elog("%" PRIu64 " processes forked by the traced ones were not traced "
		     "(-f follows them)", s->unfollowed);
	untraced = exec_probe__untraced(s->ep);
	if (untraced)
		elog("IMAGES NOT TRACED: %" PRIu64 " of the images the command exec'd had no "
		     "allocator heapsnoop could probe (said above, each): their allocations are "
		     "not in the records", untraced);
	if (libc_follow__late(s->follow))
		elog("%" PRIu64 " C libraries were probed only once a traced process had mapped "
		     "them, or not at all (said above): what those processes allocated until "
		     "then is missing", libc_follow__late(s->follow));
	if (s->o.keep_stacks_mb)
		status__kept(stderr, s->trace);
	if (s->o.verbose) {
		status__stacks(stderr, s->trace);
		status__unwind(stderr, s->trace, s->cnt);
		if (s->interp)
			interp__stats(s->interp, stderr);
		status__backlog(stderr, s->max_backlog, s->o.ringbuf_mb << 20);
		if (s->skel->rodata->have_free_log)
			status__free_logs(stderr, reader__logged_frees(s->rd),
					  s->cnt[HS_CNT_FREE_LOG_FULL]);
		if (s->cnt[HS_CNT_SPILLED])
			elog("%" PRIu64 " allocator calls kept their state in the LRU hash: "
			     "another thread's call held their thread slot (ids equal modulo "
			     "--thread-slots)", s->cnt[HS_CNT_SPILLED]);
		if (bgdump__longest_ms(s->bg) > 0)
			elog("longest stop of the event loop for a dump: %.1f ms",
			     bgdump__longest_ms(s->bg));
		if (view_ms > 0)
			elog("longest stop of the event loop for a --top redraw: %.1f ms", view_ms);
	}
	if (lost_maps)
		elog("MAPPING RECORDS LOST: %" PRIu64 " (the kernel's buffer was full): %s",
		     lost_maps, s->o.all ? "stacks of processes started meanwhile may not symbolize" :
		     "a C library a traced process mapped meanwhile may not have been probed");
	if (s->logpath[0] && !s->write_err)
		ttylog__next(stderr, s->logpath);
	if (s->write_err)
		status = HS_EXIT_ERROR;
	if (status)
		return status;
	if (lost || lost_maps || untraced) {
		if (s->launched && !strcmp(s->reason, "exit"))
			elog("exit status %d: %s (the command's own status: %s %d)",
			     HS_EXIT_LOST, lost || lost_maps ? "events were lost" :
			     "images were not traced",
			     WIFSIGNALED(s->child_status) ? "signal" : "exit",
			     WIFSIGNALED(s->child_status) ? WTERMSIG(s->child_status) :
			     WEXITSTATUS(s->child_status));
		return HS_EXIT_LOST;
	}
	if (s->launched && !strcmp(s->reason, "exit")) {
		if (WIFEXITED(s->child_status))
			return WEXITSTATUS(s->child_status);
		if (WIFSIGNALED(s->child_status))
			return HS_EXIT_SIGNALED(WTERMSIG(s->child_status));
	}
	return 0;
}
