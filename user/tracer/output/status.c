// SPDX-License-Identifier: MIT
/* status.c - live status line and closing accounting (see status.h). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "attach/hold.h"
#include "track/creators.h"
#include "msg.h"
#include "status.h"

int status__read_counters(const struct bpf_map *counters, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(counters);
	uint64_t *v;

	if (ncpu <= 0)
		return -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t k = 0; k < HS_CNT__MAX; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, v))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[k] += v[c];
	}
	free(v);
	return 0;
}

static void human_bytes(uint64_t b, char *buf, size_t cap)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

/*
 * Events lost: every counter but four. The returns without an entry are
 * calls that began while the probes were going in (the uretprobe is
 * attached before the uprobe at the same site, so a call in between has
 * its return hooked and no entry): untraced, like any allocation made
 * before tracing began, and said apart. A call kept in the LRU hash, a
 * thread that ended inside a call, and a free sent to the ring buffer
 * because its CPU's log was full, a stack tail found or not (only what
 * the copy held changed), lose nothing; nor does load shed by sampling
 * (its samples stand for the rest, said apart). Interpreter frames not
 * sent lose no allocation: its stack says so (cut=unreadable), and the
 * accounting says how many.
 */
static bool is_loss(int k)
{
	return k != HS_CNT_UNMATCHED_RETURN && k != HS_CNT_SPILLED && k != HS_CNT_DIED_IN_CALL &&
	       k != HS_CNT_FREE_LOG_FULL && k != HS_CNT_INTERP_LOST &&
	       k != HS_CNT_INTERP_CODE_LOST && k != HS_CNT_TAIL_MISS && k != HS_CNT_SHED &&
	       k != HS_CNT_SHED_BYTES && k != HS_CNT_SHORT_COPY && k != HS_CNT_RB_LOST_THREAD;
}

static uint64_t lost_of(const uint64_t *cnt)
{
	uint64_t n = 0;

	for (int k = 0; k < HS_CNT__MAX; k++)
		n += is_loss(k) ? cnt[k] : 0;
	return n;
}

uint64_t status__lost(const uint64_t *cnt)
{
	return lost_of(cnt);
}

void status__line(FILE *tty, struct trace *t, const uint64_t *cnt, double events_per_s)
{
	char bytes[32];

	human_bytes(trace__live_bytes(t), bytes, sizeof(bytes));
	fprintf(tty, "\r\033[Kheapsnoop: %.0f events/s, %zu live, %s live, %" PRIu64 " lost",
		events_per_s, trace__live_count(t), bytes, lost_of(cnt));
	fflush(tty);
}

void status__clear(FILE *tty)
{
	fputs("\r\033[K", tty);
	fflush(tty);
}

uint64_t status__final(FILE *out, struct trace *t, const uint64_t *cnt)
{
	const struct trace_stats *s = trace__stats(t);
	struct unwind_stats us;
	struct cfi_stats cs;
	uint64_t lost = lost_of(cnt), live_bytes = trace__live_bytes(t);
	size_t live = trace__live_count(t), nstacks = trace__stack_count(t);
	struct rusage ru;
	char bytes[32];

	human_bytes(live_bytes, bytes, sizeof(bytes));
	flog(out, "traced %" PRIu64 " allocations and %" PRIu64 " frees (%" PRIu64 " of them "
		"by a realloc that moved the block) in %" PRIu64 " process(es); %zu live "
		"allocations, %" PRIu64 " bytes (%s), %zu unique stacks", s->allocs, s->frees,
		s->realloc_moves, s->procs_seen, live, live_bytes, bytes, nstacks);
	if (s->exits || s->execs)
		flog(out, "%" PRIu64 " traced processes ended, %" PRIu64 " images were "
			"replaced by exec; %" PRIu64 " allocations (%" PRIu64 " bytes) were still "
			"live at their exit or exec", s->exits, s->execs, s->exit_live,
			s->exit_bytes);
	flog(out, "tracker memory: %zu bytes for %zu live allocations, %zu bytes "
		"for %zu unique stacks", trace__live_memory(t), live, trace__stack_memory(t),
		nstacks);
	if (!getrusage(RUSAGE_SELF, &ru))
		flog(out, "heapsnoop's own memory: %ld KiB resident at its peak; its CPU time: "
		     "%.2f s user, %.2f s system", ru.ru_maxrss,
		     ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		     ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	if (!lost && !s->bad_events && !s->no_memory) {
		flog(out, "no events lost");
	} else {
		flog(out, "EVENTS LOST: %" PRIu64 " allocations and %" PRIu64
			" frees dropped (ring buffer full), %" PRIu64 " calls whose return was "
			"missed, %" PRIu64 " without per-thread state, %" PRIu64
			" posix_memalign blocks unreadable, %" PRIu64
			" process exits or execs dropped, %" PRIu64 " malformed, %" PRIu64
			" out of memory.",
			cnt[HS_CNT_RB_LOST_ALLOC], cnt[HS_CNT_RB_LOST_FREE],
			cnt[HS_CNT_MISSED_RETURN], cnt[HS_CNT_NO_STATE], cnt[HS_CNT_BAD_OUTPTR], cnt[HS_CNT_RB_LOST_TASK], s->bad_events,
			s->no_memory);
		flog(out, "the live set above may miss allocations and include "
			"freed ones; if the ring buffer filled, rerun with a larger "
			"--ringbuf-size");
	}
	if (cnt[HS_CNT_SHED] || s->shed_kept) {
		human_bytes(cnt[HS_CNT_SHED_BYTES], bytes, sizeof(bytes));
		flog(out, "LOAD SHED: heapsnoop fell behind (a quarter of the ring buffer "
			"waiting), so small allocations were recorded as samples meanwhile: %"
			PRIu64 " recorded, each standing for its size or the sampling mean (%llu "
			"KiB to %llu KiB, as far behind as it was), whichever is more, in place "
			"of %" PRIu64 " not recorded (%s); the live bytes above and in the dumps "
			"are estimates there (shed= on their live records; heapdecode says so), "
			"counts and whole-run totals are of the allocations recorded; a larger "
			"--ringbuf-size or more --unwind-threads shed less, and -p or a command "
			"with --on-full hold none", s->shed_kept, HS_SHED_BASE >> 10,
			hs_shed_mean(HS_SHED_LEVELS) >> 10, cnt[HS_CNT_SHED], bytes);
	}
	if (cnt[HS_CNT_COMM_FULL])
		flog(out, "%" PRIu64 " processes named as --comm asks were not traced: "
			"more than 65536 such processes at once", cnt[HS_CNT_COMM_FULL]);
	if (cnt[HS_CNT_UNMATCHED_RETURN])
		flog(out, "%" PRIu64 " allocator calls were under way while the probes went in: "
			"not traced, like allocations made before tracing began",
			cnt[HS_CNT_UNMATCHED_RETURN]);
	if (cnt[HS_CNT_INTERP_LOST] || cnt[HS_CNT_INTERP_CODE_LOST])
		flog(out, "INTERPRETER FRAMES LOST: %" PRIu64 " allocations' (the ring buffer was "
			"full, or a program that preempted the walk took its scratch space: their "
			"stacks say cut=unreadable), and %" PRIu64 " code objects' last looks (ring "
			"buffer full: frames of them read later may be <code gone>); a larger "
			"--ringbuf-size keeps more", cnt[HS_CNT_INTERP_LOST],
			cnt[HS_CNT_INTERP_CODE_LOST]);
	if (cnt[HS_CNT_DIED_IN_CALL])
		flog(out, "%" PRIu64 " threads ended inside an allocator call (another thread "
			"ended the process, or a cancellation): those calls never returned",
			cnt[HS_CNT_DIED_IN_CALL]);
	if (s->missed_frees)
		flog(out, "%" PRIu64 " addresses were allocated again while live "
			"(their free was not seen)", s->missed_frees);
	if (s->truncated_stacks || s->stack_faults)
		flog(out, "%" PRIu64 " allocations had a truncated stack, %" PRIu64
			" a stack with an unreadable frame", s->truncated_stacks, s->stack_faults);
	if (s->jit_frames > s->jit_named)
		flog(out, "%" PRIu64 " of %" PRIu64 " frames in JIT code (anonymous executable "
			"memory) have no name: their process wrote no perf map, /tmp/perf-PID.map, "
			"nor a jitdump that names them (node: --perf-basic-prof or --perf-prof, and "
			"--interpreted-frames-native-stack for its interpreted functions; a "
			"jitdump's last records are lost with a process killed by a signal)",
			s->jit_frames - s->jit_named, s->jit_frames);
	/* No allocation lost: a thread's stacks without its creator, said. */
	if (cnt[HS_CNT_RB_LOST_THREAD] || s->creators_dropped)
		flog(out, "CREATORS NOT KEPT: of %" PRIu64 " threads made while traced, %" PRIu64
			" have no creator stack (ring buffer full: %" PRIu64 "; a malformed record, "
			"no memory, or more than %u threads of one process at once: the rest); "
			"their stacks end where they started (clone3, start_thread)",
			s->threads_created + cnt[HS_CNT_RB_LOST_THREAD],
			s->creators_dropped + cnt[HS_CNT_RB_LOST_THREAD], cnt[HS_CNT_RB_LOST_THREAD],
			CREATORS_MAX_THREADS);
	if (cnt[HS_CNT_SHORT_COPY])
		flog(out, "%" PRIu64 " allocations were sent with only the first %u KiB of their "
			"stack, the ring buffer having no room for the whole copy (heapsnoop fell "
			"behind): the allocations are kept, %" PRIu64 " of their stacks cut there "
			"(cut=); a larger --ringbuf-size keeps them whole",
			cnt[HS_CNT_SHORT_COPY], HS_USER_STACK_SHORT >> 10, s->short_cut);
	/* The short copies' cuts are said above, not as the copy's size. */
	if (trace__unwind_stats(t, &us, &cs) == 0 && us.cut)
		flog(out, "%" PRIu64 " stacks were deeper than the copy of the "
			"stack (--stack-copy): rerun with a larger one for them", us.cut);
	if (us.tail_missed || us.tail_unknown)
		flog(out, "%" PRIu64 " stacks were cut where their copy stopped, at the part "
			"of the thread's stack heapsnoop found in place and had unwound before "
			"(%" PRIu64 " did not meet it there, %" PRIu64 " named one no longer "
			"kept): rerun with --no-tails to copy them whole",
			us.tail_missed + us.tail_unknown, us.tail_missed, us.tail_unknown);
	/*
	 * The exit status's count. lost_of() leaves out the returns without an
	 * entry: a call in flight when its probe was attached (-a probing a
	 * library a running process maps) is an allocation made before
	 * tracing, not one lost.
	 */
	return lost + s->bad_events + s->no_memory;
}

void status__backlog(FILE *out, uint64_t max_backlog, uint64_t size)
{
	char most[32], all[32];

	human_bytes(max_backlog, most, sizeof(most));
	human_bytes(size, all, sizeof(all));
	flog(out, "ring buffer: at most %s (%" PRIu64 " bytes, %.0f%%) of its %s waited for the "
		"loader%s", most, max_backlog, 100.0 * (double)max_backlog / (double)size, all,
		max_backlog * 4 >= size * 3 ? ": it came close to full or filled; a larger "
		"--ringbuf-size keeps more" : "");
}

void status__free_logs(FILE *out, uint64_t logged, uint64_t to_ring)
{
	flog(out, "frees: %" PRIu64 " through the per-CPU logs, %" PRIu64 " to the ring buffer "
		"(a log full or contended)", logged, to_ring);
}

/* @b bytes per each of @n, 0 for none. */
static double per(size_t b, size_t n)
{
	return n ? (double)b / (double)n : 0;
}

void status__stacks(FILE *out, const struct trace *t)
{
	struct trace_stack_stats s;
	size_t all = trace__stack_memory(t), n, own;

	trace__stack_stats(t, &s);
	n = s.tree.stacks;
	/* What grows with stacks: the nodes, their index, the counts beside. */
	own = s.tree.used_bytes + s.tree.index_bytes + s.acct_bytes;
	flog(out, "stack tables: %zu unique stacks, a tree of %zu nodes holding %zu frames: "
		"%zu bytes of nodes (%zu of them counts, %d a stack), %zu of the index of "
		"children past a node's first two (%zu of %zu slots), %zu of counts whole (%zu "
		"stacks), %zu of at-peak values (%zu kept): %.1f bytes per unique stack; with the "
		"nodes' arena's unused end (%zu bytes) and the cache of the last stacks (%zu, "
		"fixed), %zu bytes in all, %.1f per unique stack", n, s.tree.nodes, s.tree.frames,
		s.tree.used_bytes, n * STACK_TREE_PAYLOAD, STACK_TREE_PAYLOAD, s.tree.index_bytes,
		s.tree.index_used, s.tree.index_slots, s.acct_bytes - s.snap_bytes, s.wide,
		s.snap_bytes, s.snapshots, per(own, n),
		s.tree.arena_bytes - s.tree.used_bytes, s.cache_bytes, all, per(all, n));
}

void status__kept(FILE *out, const struct trace *t)
{
	const struct kept_budget *b = trace__kept(t);
	uint64_t left = b->over_budget + b->interp + b->no_memory;

	flog(out, "--keep-stacks: %" PRIu64 " stack copies kept (%" PRIu64 " bytes of stack, "
	     "%.0f a copy), %" PRIu64 " of them live at the end, %" PRIu64 " bytes held at most of "
	     "the %" PRIu64 " allowed", b->kept, b->copy_bytes, per(b->copy_bytes, b->kept),
	     b->held, b->peak, b->budget);
	if (left)
		flog(out, "--keep-stacks: NOT KEPT: %" PRIu64 " allocations' stacks (%" PRIu64
		     " over the budget: raise --keep-stacks=MIB; %" PRIu64 " with interpreter "
		     "frames among the native ones; %" PRIu64 " out of memory): their blocks have "
		     "no ustack record, heapdecode shows their online frames", left,
		     b->over_budget, b->interp, b->no_memory);
}

void status__unwind(FILE *out, const struct trace *t, const uint64_t *cnt)
{
	struct unwind_stats us;
	struct cfi_stats cs;
	unsigned int threads;
	uint64_t pooled;
	double hit;

	if (trace__unwind_stats(t, &us, &cs))
		return;
	hit = cs.lookups ? 100.0 * (double)(cs.lookups - cs.misses) / (double)cs.lookups : 0;
	flog(out, "unwinding: %" PRIu64 " stacks, %" PRIu64 " complete, %" PRIu64
		" cut at --stack-copy, %" PRIu64 " at a short copy (ring buffer full), %" PRIu64
		" deeper than kept, %" PRIu64 " with a frame not recovered; %" PRIu64
		" caller frames, %" PRIu64 " of them by frame pointer (no CFI; %" PRIu64
		" into JIT code), %" PRIu64 " by DWARF expression", us.stacks, us.complete,
		us.cut, us.short_cut, us.depth, us.fault, us.frames, us.fp_frames,
		us.jit_frames, us.slow_frames);
	if (trace__pool_share(t, &threads, &pooled) == 0)
		flog(out, "unwinding pool: %u thread%s beside the loop's (--unwind-threads); "
		     "%" PRIu64 " of the %" PRIu64 " stacks unwound by them", threads,
		     threads == 1 ? "" : "s", pooled, us.stacks);
	if (us.paged)
		flog(out, "unwinding: %" PRIu64 " stacks copied page by page, around %" PRIu64
			" pages never touched (read as holes)", us.paged, us.holes);
	if (us.tails_built || us.spliced)
		flog(out, "stack tails: %" PRIu64 " made for threads' next stacks; %" PRIu64
			" stacks copied up to one still in place, %" PRIu64 " frames of theirs "
			"from it (%.1f a stack), %" PRIu64 " copied whole (a word of the tail "
			"changed); %" PRIu64 " did not meet it, %" PRIu64 " named one no longer "
			"kept (both cut there)", us.tails_built, us.spliced, us.tail_frames,
			us.spliced ? (double)us.tail_frames / us.spliced : 0, cnt[HS_CNT_TAIL_MISS],
			us.tail_missed, us.tail_unknown);
	flog(out, "unwind tables: %zu modules (%zu without CFI), %zu bytes of CFI "
		"mapped, rule cache %zu bytes, %" PRIu64 " lookups, %.1f%% hits (each unwinding "
		"thread its own tables and cache: the most modules one holds, the caches' sum)",
		cs.modules, cs.no_cfi, cs.cfi_bytes, cs.cache_bytes, cs.lookups, hit);
	if (cs.trims)
		flog(out, "unwind tables trimmed %" PRIu64 " times (libdw's parsed FDEs freed, "
			"%zu modules unused since the last trim closed)", cs.trims, cs.closed);
}

void status__hold(FILE *out, const struct hold *h, int err)
{
	struct hold_stats st;

	hold__stats(h, &st);
	if (st.holds)
		flog(out, "the traced processes waited %" PRIu64 " time%s for heapsnoop to catch "
		     "up, %.1f ms in all (the longest %.1f ms)", st.holds, st.holds == 1 ? "" : "s",
		     st.held_ns / 1e6, st.longest_ns / 1e6);
	if (err)
		flog(out, "making the traced processes wait failed: %s (events may have been "
		     "lost: counted above)", strerror(-err));
}
