// SPDX-License-Identifier: MIT
/*
 * test_trace.c - unit tests of the per-process state
 * (user/tracer/track/trace.c, procs.c) fed with ring buffer records as the
 * BPF side writes them: thousands of processes found by pid while others
 * exit (the table's deletions must not lose anyone), an exit that writes
 * its leaks before they are dropped, an exec that drops the old image's
 * heap, fork/exec/mmap mapping records, and records with a stack to unwind
 * (--unwind dwarf), well-formed or not; the whole-run accounting (acct.c):
 * at-peak values exact after later changes, temporary allocations per
 * thread; allocations collapsed under one stack (the agent's bound).
 * Pids are above any pid_max, so no /proc file is ever found for
 * them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "msg.h"
#include "output/status.h"
#include "frametab.h"
#include "stacks.h"
#include "track/creators.h"
#include "track/trace.h"

/* The first stack a tree iterates: its id in *ctx, and stop (1). */
static int first_id(void *ctx, uint32_t id)
{
	*(uint32_t *)ctx = id;
	return 1;
}

/* Each stack's id, after their count in ids[0] (two at most). */
static int all_ids(void *ctx, uint32_t id)
{
	uint32_t *ids = ctx;

	if (ids[0] == 2)
		return -1;
	ids[++ids[0]] = id;
	return 0;
}

#define PID0 50000000

/* Records' ring positions + 1 (trace__event's seq): growing, as in a ring. */
static uint64_t next_seq = 1;

static void feed(struct trace *t, const void *ev, size_t len)
{
	trace__event(t, ev, len, next_seq);
	next_seq += (len + 8 + 7) & ~(size_t)7;
}

static void send(struct trace *t, uint32_t type, uint32_t pid, uint64_t addr, uint64_t size)
{
	struct hs_event ev = { .type = type, .pid = pid, .tid = pid, .addr = addr,
			       .size = size, .nr_frames = 1 };

	ev.frames[0] = 0x401000 + pid % 7;
	feed(t, &ev, HS_EVENT_HDR_SIZE + sizeof(uint64_t));
}

/*
 * The i-th of many distinct pids, scattered (consecutive pids spread too
 * evenly over the table to ever collide, and collisions are what a
 * deletion can get wrong).
 */
static uint32_t pid_of(int i)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ULL;

	x ^= x >> 29;
	return PID0 + (uint32_t)((x % 8191) << 13 | (uint32_t)i);
}

static void test_many_processes(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true });
	const int n = 5000;

	(void)state;
	for (int i = 0; i < n; i++) {
		send(t, HS_EV_ALLOC, pid_of(i), 0x1000, 10);
		send(t, HS_EV_ALLOC, pid_of(i), 0x2000, 20);
	}
	assert_int_equal(trace__live_count(t), 2 * n);
	/* Every third one exits: the rest must all still be found. */
	for (int i = 0; i < n; i += 3)
		send(t, HS_EV_EXIT, pid_of(i), 0, 0);
	for (int i = 0; i < n; i++) {
		struct proc *p = trace__find_proc(t, pid_of(i));

		if (i % 3 == 0) {
			assert_null(p);
			continue;
		}
		assert_non_null(p);
		assert_int_equal(p->pid, (pid_t)pid_of(i));
		assert_int_equal(tracker__count(p->live), 2);
	}
	assert_int_equal(trace__live_count(t), 2 * (n - (n + 2) / 3));
	assert_int_equal(trace__live_bytes(t), 30 * (uint64_t)(n - (n + 2) / 3));
	/* Frees reach the right process; then everyone exits: nothing left. */
	for (int i = 0; i < n; i++)
		send(t, HS_EV_FREE, pid_of(i), 0x1000, 0);
	assert_int_equal(trace__live_bytes(t), 20 * (uint64_t)(n - (n + 2) / 3));
	for (int i = 0; i < n; i++)
		send(t, HS_EV_EXIT, pid_of(i), 0, 0);
	assert_int_equal(trace__live_count(t), 0);
	{
		size_t k;
		struct proc **v = trace__procs(t, &k);

		assert_int_equal(k, 0);
		free(v);
	}
	assert_int_equal(trace__stats(t)->exits, n);
	trace__free(t);
}

static int exit_calls;
static uint64_t exit_bytes;

static void on_exit_cb(struct proc *p, void *ctx)
{
	assert_ptr_equal(ctx, &exit_calls);
	assert_true(p->gone);
	exit_calls++;
	exit_bytes += tracker__bytes(p->live);
}

static void test_exit_writes_then_drops(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true,
							    .on_exit = on_exit_cb,
							    .ctx = &exit_calls });

	(void)state;
	send(t, HS_EV_ALLOC, PID0, 0x1000, 300);
	send(t, HS_EV_ALLOC, PID0, 0x2000, 300);
	send(t, HS_EV_ALLOC, PID0 + 1, 0x1000, 5);
	send(t, HS_EV_FREE, PID0 + 1, 0x1000, 0);
	send(t, HS_EV_EXIT, PID0, 0, 0);
	send(t, HS_EV_EXIT, PID0 + 1, 0, 0);	/* nothing live: called (its peak) */
	send(t, HS_EV_EXIT, PID0 + 2, 0, 0);	/* never allocated: not called */
	assert_int_equal(exit_calls, 2);
	assert_int_equal(exit_bytes, 600);
	assert_int_equal(trace__stats(t)->exit_live, 2);
	trace__free(t);
}

static void test_exec_drops_old_heap(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true });
	struct proc *p;

	(void)state;
	send(t, HS_EV_ALLOC, PID0, 0x1000, 64);
	send(t, HS_EV_EXEC, PID0, 0, 0);
	assert_int_equal(trace__live_count(t), 0);
	send(t, HS_EV_ALLOC, PID0, 0x1000, 32);
	p = trace__find_proc(t, PID0);
	assert_non_null(p);
	assert_int_equal(tracker__bytes(p->live), 32);
	assert_int_equal(stack_tree__count(p->stacks), 1);
	trace__free(t);
}

static void test_mapping_records(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true });
	struct mapping m = { .start = 0x400000, .end = 0x401000, .offset = 0x1000,
			     .build_id = "ab", .path = "/bin/parent" };
	struct proc *c;

	(void)state;
	assert_int_equal(trace__map_add(t, PID0, &m), 0);
	trace__set_comm(t, PID0, "parent");
	/* A child starts with its parent's mappings and name. */
	assert_int_equal(trace__map_fork(t, PID0, PID0 + 1), 0);
	c = trace__find_proc(t, PID0 + 1);
	assert_non_null(c);
	assert_string_equal(c->comm, "parent");
	assert_non_null(mapset__find(c->maps, 0x400800));
	/* Its exec leaves nothing of them; its new image's mapping is found. */
	assert_int_equal(trace__map_exec(t, PID0 + 1), 0);
	assert_null(mapset__find(c->maps, 0x400800));
	m.path = "/bin/child";
	assert_int_equal(trace__map_add(t, PID0 + 1, &m), 0);
	assert_string_equal(mapset__find(c->maps, 0x400800)->path, "/bin/child");
	assert_string_equal(mapset__find(trace__find_proc(t, PID0)->maps, 0x400800)->path,
			    "/bin/parent");
	trace__free(t);
}

int main(void);

/* A function whose entry is the call site of the records below. */
__attribute__((noinline)) void unwind_target(void)
{
	__asm__ volatile("" ::: "memory");
}

/* An allocation record with a user stack (--unwind dwarf) of @size bytes. */
struct ustack_event {
	struct hs_event ev;
	uint64_t words[64];
};

static size_t ustack_event(struct ustack_event *e, uint32_t pid, uint64_t ip, uint64_t sp,
			   uint32_t size)
{
	struct hs_user_stack *us = (void *)((char *)&e->ev + HS_EVENT_HDR_SIZE);

	memset(e, 0, sizeof(*e));
	e->ev = (struct hs_event){ .type = HS_EV_ALLOC, .pid = pid, .tid = pid, .addr = 0x1000,
				   .size = 24, .flags = HS_EVF_USER_STACK };
	us->regs[HS_UREG_IP] = ip;
	us->regs[HS_UREG_SP] = sp;
	us->size = size;
	us->want = size;
	return HS_EVENT_HDR_SIZE + sizeof(*us) + 256;
}

/*
 * Records carrying a stack to unwind, against this very executable's CFI
 * (mapped for a fake pid by a mapping record): at a function's entry the
 * CFA is %rsp + 8 and the return address is at %rsp; the caller's frame
 * then returns to 0, the end of a complete stack. A record whose stack
 * claims more bytes than it has is malformed; one whose address is in no
 * mapping and whose %rbp is no frame pointer is a fault, not a stack.
 */
static void test_user_stacks(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true, .unwind = true });
	uint64_t ip = (uint64_t)(uintptr_t)unwind_target, ret = (uint64_t)(uintptr_t)main + 1;
	struct hs_user_stack *us;
	struct ustack_event e;
	struct mapset *self;
	const struct mapping *m;
	struct unwind_stats st;
	struct cfi_stats cs;
	struct proc *p;
	uint64_t f[REC_MAX_DEPTH];
	uint32_t id;
	size_t len;

	(void)state;
	assert_int_equal(proc_maps__load_files(getpid(), &self), 0);
	m = mapset__find(self, ip);
	assert_non_null(m);
	assert_int_equal(trace__map_add(t, PID0, m), 0);

	len = ustack_event(&e, PID0, ip, 0x7ff000000000, 256);
	us = (void *)((char *)&e.ev + HS_EVENT_HDR_SIZE);
	memcpy(us->data, &ret, sizeof(ret));	/* the caller: main */
	feed(t, &e, len);
	p = trace__find_proc(t, PID0);
	assert_int_equal(stack_tree__count(p->stacks), 1);
	assert_int_equal(stack_tree__for_each(p->stacks, false, first_id, &id), 1);
	assert_int_equal(stack_tree__frames(p->stacks, id, f), 2);
	assert_int_equal(f[0], ip);
	assert_int_equal(f[1], ret);
	assert_int_equal(stack_tree__flags(p->stacks, id), 0);
	assert_int_equal(trace__unwind_stats(t, &st, &cs), 0);
	assert_int_equal(st.complete, 1);
	assert_int_equal(cs.modules, 1);

	/* 4096 bytes of stack claimed in a 256-byte record. */
	len = ustack_event(&e, PID0, ip, 0x7ff000000000, 4096);
	feed(t, &e, len);
	assert_int_equal(trace__stats(t)->bad_events, 1);

	/* In no mapping, %rbp 0: the call site alone, marked unreadable. */
	len = ustack_event(&e, PID0, 0x10, 0x7ff000000000, 256);
	feed(t, &e, len);
	assert_int_equal(trace__stats(t)->stack_faults, 1);
	assert_int_equal(trace__stats(t)->allocs, 2);
	mapset__free(self);
	trace__free(t);
}

/*
 * --keep-stacks (track/keptstk.c): a block's registers and copy kept while
 * it is live and written as its ustack record, dropped when it is freed
 * (its bytes back to the budget); past the budget none kept, counted.
 */
static void test_kept_stacks(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true, .unwind = true,
							   .keep_stacks = 4096 });
	uint64_t ip = (uint64_t)(uintptr_t)unwind_target, ret = (uint64_t)(uintptr_t)main + 1;
	const struct kept_budget *b;
	struct hs_user_stack *us;
	struct ustack_event e;
	struct mapset *self;
	struct record r;
	struct proc *p;
	size_t len;

	(void)state;
	assert_int_equal(proc_maps__load_files(getpid(), &self), 0);
	assert_int_equal(trace__map_add(t, PID0, mapset__find(self, ip)), 0);
	len = ustack_event(&e, PID0, ip, 0x7ff000000000, 256);
	us = (void *)((char *)&e.ev + HS_EVENT_HDR_SIZE);
	memcpy(us->data, &ret, sizeof(ret));
	us->regs[HS_UREG_BP] = 0x1234;
	feed(t, &e, len);
	b = trace__kept(t);
	p = trace__find_proc(t, PID0);
	assert_int_equal(b->kept, 1);
	assert_int_equal(b->held, 1);
	assert_int_equal(b->copy_bytes, 256);
	assert_true(b->bytes > 256 && b->bytes <= b->budget);
	assert_true(kept_stacks__record(p->kept, PID0, 0x1000, &r));
	assert_int_equal(r.type, REC_USTACK);
	assert_int_equal(r.ptr, 0x1000);
	assert_int_equal(r.us.frames, 2);	/* the call site and main */
	assert_int_equal(r.us.nregs, HS_UREG__MAX);
	assert_int_equal(r.us.regs[HS_UREG_IP], ip);
	assert_int_equal(r.us.regs[HS_UREG_BP], 0x1234);
	assert_int_equal(r.us.size, 256);
	assert_memory_equal(r.us.bytes, us->data, 256);
	assert_false(kept_stacks__record(p->kept, PID0, 0x2000, &r));
	/* Freed: dropped, its bytes given back. */
	send(t, HS_EV_FREE, PID0, 0x1000, 0);
	assert_int_equal(b->held, 0);
	assert_int_equal(b->bytes, 0);
	assert_false(kept_stacks__record(p->kept, PID0, 0x1000, &r));
	/* Past the budget: not kept, counted; the block is live all the same. */
	ustack_event(&e, PID0, ip, 0x7ff000000000, 256);
	e.ev.addr = 0x3000;
	us->size = us->want = 4096;
	len = HS_EVENT_HDR_SIZE + sizeof(*us) + 4096;
	{
		char *big = calloc(1, len);

		memcpy(big, &e, sizeof(e));
		memcpy(((struct hs_user_stack *)(big + HS_EVENT_HDR_SIZE))->data, &ret, sizeof(ret));
		feed(t, big, len);
		free(big);
	}
	assert_int_equal(b->over_budget, 1);
	assert_int_equal(b->held, 0);
	assert_int_equal(tracker__count(p->live), 1);
	mapset__free(self);
	trace__free(t);
}

/* An --unwind fp allocation of thread @tid of PID0 at @addr, with frames @a, @b. */
static void fp_alloc(struct trace *t, uint32_t tid, uint64_t addr, uint64_t a, uint64_t b,
		     uint32_t flags)
{
	struct hs_event ev = { .type = HS_EV_ALLOC, .pid = PID0, .tid = tid, .addr = addr,
			       .size = 100, .nr_frames = 2, .flags = flags };

	ev.frames[0] = a;
	ev.frames[1] = b;
	feed(t, &ev, HS_EVENT_HDR_SIZE + 2 * sizeof(uint64_t));
}

struct find_ctx {
	uint64_t addr;
	uint32_t stack;
	bool found;
};

static void find_live(const struct live_alloc *a, void *ctx)
{
	struct find_ctx *c = ctx;

	if (a->addr == c->addr) {
		c->stack = a->stack;
		c->found = true;
	}
}

/* The frames of the stack of PID0's live block at @addr into @f; their count. */
static uint32_t frames_at(struct trace *t, uint64_t addr, uint64_t *f, uint32_t *flags)
{
	struct proc *p = trace__find_proc(t, PID0);
	struct find_ctx c = { .addr = addr };

	tracker__for_each(p->live, find_live, &c);
	assert_true(c.found);
	*flags = stack_tree__flags(p->stacks, c.stack);
	return stack_tree__frames(p->stacks, c.stack, f);
}

/*
 * Threads' creators (track/creators.c), with --unwind fp (the records of
 * creation unwound by CFI all the same): thread PID0 makes 4 threads from
 * one place (unwind_target called from main, against this executable's
 * CFI), one of them a fifth. Each allocation of theirs goes on past the
 * boundary frame with its creator's frames; the fifth's with two
 * boundaries; the 4 share one chain, their stacks one; a stack cut short
 * gets nothing appended; --snip-post drops the creator's end.
 */
static void test_creators(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true });
	uint64_t ip = (uint64_t)(uintptr_t)unwind_target, ret = (uint64_t)(uintptr_t)main + 1;
	struct hs_user_stack *us;
	struct ustack_event e;
	struct mapset *self;
	const struct mapping *m;
	struct sym_frame sf;
	struct proc *p;
	uint64_t f[REC_MAX_DEPTH];
	uint32_t n, flags;
	size_t len;

	(void)state;
	assert_int_equal(proc_maps__load_files(getpid(), &self), 0);
	m = mapset__find(self, ip);
	assert_non_null(m);
	assert_int_equal(trace__map_add(t, PID0, m), 0);
	for (uint32_t k = 1; k <= 5; k++) {
		len = ustack_event(&e, PID0, ip, 0x7ff000000000, 256);
		e.ev.type = HS_EV_THREAD;
		e.ev.tid = k == 5 ? PID0 + 1 : PID0;
		e.ev.addr = PID0 + k;
		us = (void *)((char *)&e.ev + HS_EVENT_HDR_SIZE);
		memcpy(us->data, &ret, sizeof(ret));
		feed(t, &e, len);
	}
	p = trace__find_proc(t, PID0);
	assert_non_null(p->creators);
	assert_int_equal(creators__threads(p->creators), 5);
	assert_int_equal(creators__chains(p->creators), 2);
	assert_int_equal(trace__stats(t)->threads_created, 5);
	assert_int_equal(trace__stats(t)->creators_dropped, 0);

	for (uint32_t k = 1; k <= 4; k++)
		fp_alloc(t, PID0 + k, 0x1000 * k, 0x401000, 0x402000, 0);
	n = frames_at(t, 0x1000, f, &flags);
	assert_int_equal(n, 5);
	assert_int_equal(flags, 0);
	assert_int_equal(f[0], 0x401000);
	assert_int_equal(f[1], 0x402000);
	assert_true(rec_is_frame_addr(f[2]));
	assert_int_equal(f[3], ip);
	assert_int_equal(f[4], ret);
	assert_true(frametab__symbolize(trace__frames(t), PID0, f[2], &sf));
	assert_string_equal(sf.kind, FRAMETAB_CREATOR_KIND);
	assert_string_equal(sf.func, FRAMETAB_CREATOR_FUNC);
	/* The 4 workers' stacks are one; the main thread's has no creator. */
	fp_alloc(t, PID0, 0x9000, 0x401000, 0x402000, 0);
	assert_int_equal(stack_tree__count(p->stacks), 2);

	/* A thread's thread: two boundaries, the same frame. */
	fp_alloc(t, PID0 + 5, 0x5000, 0x401000, 0x402000, 0);
	assert_int_equal(frames_at(t, 0x5000, f, &flags), 8);
	assert_int_equal(f[2], f[5]);
	assert_int_equal(f[3], ip);
	assert_int_equal(f[6], ip);
	assert_int_equal(f[7], ret);

	/* Cut short: the next frame would not be what called it. */
	fp_alloc(t, PID0 + 1, 0x6000, 0x401000, 0x403000, HS_EVF_TRUNCATED);
	assert_int_equal(frames_at(t, 0x6000, f, &flags), 2);
	assert_int_equal(flags, STACK_TRUNCATED);

	/* The process's new image: its threads' creators are gone with the old one. */
	send(t, HS_EV_EXEC, PID0, 0, 0);
	assert_null(p->creators);
	assert_int_equal(p->created_by, 0);
	trace__free(t);

	/* --snip-post 1: the creator's outermost frame, not the thread's. */
	t = trace__new(&(struct trace_opts){ .map_records = true, .snip_post = 1 });
	assert_int_equal(trace__map_add(t, PID0, m), 0);
	len = ustack_event(&e, PID0, ip, 0x7ff000000000, 256);
	e.ev.type = HS_EV_THREAD;
	e.ev.addr = PID0 + 1;
	us = (void *)((char *)&e.ev + HS_EVENT_HDR_SIZE);
	memcpy(us->data, &ret, sizeof(ret));
	feed(t, &e, len);
	fp_alloc(t, PID0 + 1, 0x1000, 0x401000, 0x402000, 0);
	assert_int_equal(frames_at(t, 0x1000, f, &flags), 4);
	assert_int_equal(f[1], 0x402000);
	assert_int_equal(f[3], ip);
	trace__free(t);
	mapset__free(self);
}

#ifdef __x86_64__
/*
 * JIT code (V8's): anonymous executable memory, no CFI, frames chained by
 * %rbp. The call site and its caller are in an anonymous mapping; the
 * walk goes through them by frame pointer into main (this executable's
 * CFI), whose caller is 0: a complete stack. Without the anonymous
 * mapping, the first frame-pointer step has nowhere to land: a fault.
 * The frames in JIT code are named by the perf map of the process (this
 * one's, written here), the line that named one kept for the dumps.
 */
static void test_jit_frames(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true, .unwind = true });
	const uint64_t sp = 0x7ff000000000, jit = 0x10000000;
	const uint32_t pid = (uint32_t)getpid();
	struct perf_map_entry pe;
	char perfmap[64];
	FILE *f;
	uint64_t ret = (uint64_t)(uintptr_t)main + 1, *w;
	struct mapping anon = { .start = jit, .end = jit + 0x1000, .build_id = "-",
				.path = MAPPING_ANON_PATH, .flags = MAPPING_ANON };
	struct hs_user_stack *us;
	struct ustack_event e;
	struct mapset *self;
	struct unwind_stats st;
	struct cfi_stats cs;
	struct stack_tree *tree;
	uint64_t fr[REC_MAX_DEPTH];
	uint32_t ids[3] = { 0 }, n = 0;
	size_t len;

	(void)state;
	snprintf(perfmap, sizeof(perfmap), "/tmp/perf-%u.map", pid);
	f = fopen(perfmap, "w");
	assert_non_null(f);
	fprintf(f, "%llx 80 JS:*outer /srv/app.js:1:1\n%llx 20 JS:*leaf /srv/app.js:9:1\n",
		(unsigned long long)jit + 0xc0, (unsigned long long)jit);
	fclose(f);
	assert_int_equal(proc_maps__load_files(getpid(), &self), 0);
	assert_int_equal(trace__map_add(t, pid, mapset__find(self, ret)), 0);
	for (int with_anon = 0; with_anon < 2; with_anon++) {
		if (with_anon)
			assert_int_equal(trace__map_add(t, pid, &anon), 0);
		len = ustack_event(&e, pid, jit + 0x10, sp, 256);
		us = (void *)((char *)&e.ev + HS_EVENT_HDR_SIZE);
		us->regs[HS_UREG_BP] = sp + 0x10;
		w = (uint64_t *)us->data;
		w[2] = sp + 0x40;		/* the JIT frame's record: its caller's %rbp */
		w[3] = jit + 0x100;		/* ... and return address, JIT code again */
		w[8] = 0;			/* the next record: main's */
		w[9] = ret;
		w[10] = 0;			/* main's caller (its CFA - 8): none */
		feed(t, &e, len);
	}
	/* Without the mapping: the call site alone, cut; with it: the whole. */
	tree = trace__find_proc(t, pid)->stacks;
	assert_int_equal(stack_tree__count(tree), 2);
	assert_int_equal(stack_tree__for_each(tree, false, all_ids, ids), 0);
	for (uint32_t i = 1; i <= ids[0]; i++) {
		uint32_t id = ids[i];

		if (stack_tree__frames(tree, id, fr) == 1) {
			assert_int_equal(stack_tree__flags(tree, id), STACK_FAULT);
		} else {
			assert_int_equal(stack_tree__frames(tree, id, fr), 3);
			assert_int_equal(fr[1], jit + 0x100);
			assert_int_equal(fr[2], ret);
			assert_int_equal(stack_tree__flags(tree, id), 0);
		}
		n++;
	}
	assert_int_equal(n, 2);
	assert_int_equal(trace__unwind_stats(t, &st, &cs), 0);
	assert_int_equal(st.complete, 1);
	assert_int_equal(st.fp_frames, 2);
	assert_int_equal(st.jit_frames, 1);
	/* Named: the call site by the second line, its caller by the first. */
	assert_int_equal(trace__stats(t)->jit_frames, 2);
	assert_int_equal(trace__stats(t)->jit_named, 2);
	assert_int_equal(jit_names__find(trace__find_proc(t, pid)->jit, jit + 0x10, &pe), 0);
	assert_string_equal(pe.name, "JS:*leaf /srv/app.js:9:1");
	assert_int_equal(jit_names__find(trace__find_proc(t, pid)->jit, jit + 0x100, &pe), 0);
	assert_string_equal(pe.name, "JS:*outer /srv/app.js:1:1");
	unlink(perfmap);
	mapset__free(self);
	trace__free(t);
}
#endif

/* An allocation (or free, @size unused) by thread @tid from frame @site. */
static void send_at(struct trace *t, uint32_t type, uint32_t tid, uint64_t site, uint64_t addr,
		    uint64_t size)
{
	struct hs_event ev = { .type = type, .pid = PID0, .tid = tid, .addr = addr,
			       .size = size, .nr_frames = 1 };

	ev.frames[0] = site;
	feed(t, &ev, HS_EVENT_HDR_SIZE + sizeof(uint64_t));
}

/* Stack @site's values: at the peak, and whole-run (in *@s). */
static void at_peak(struct trace *t, uint64_t site, uint64_t *count, uint64_t *bytes,
		    struct acct_counts *s)
{
	struct proc *p = trace__find_proc(t, PID0);
	bool created;
	uint32_t id;

	assert_int_equal(stack_tree__intern(p->stacks, &site, 1, 0, &id, &created), 0);
	assert_false(created);
	acct__counts(&p->acct, id, s);
	*count = s->peak_count;
	*bytes = s->peak_bytes;
}

static void test_accounting(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true });
	const uint64_t A = 0x401000, B = 0x402000;
	struct acct_counts st, *s = &st;
	uint64_t c, b;
	struct proc *p;

	(void)state;
	send_at(t, HS_EV_ALLOC, 1, A, 0x1000, 100);
	send_at(t, HS_EV_ALLOC, 1, B, 0x2000, 50);	/* peak: 150 */
	send_at(t, HS_EV_FREE, 1, 0, 0x1000, 0);	/* not B's: A's not temporary */
	send_at(t, HS_EV_ALLOC, 1, B, 0x3000, 30);	/* 80 live, under the peak */
	p = trace__find_proc(t, PID0);
	assert_int_equal(p->acct.peak_bytes, 150);
	assert_int_equal(p->acct.peak_count, 2);
	at_peak(t, A, &c, &b, s);
	assert_true(c == 1 && b == 100);		/* changed since: kept aside */
	assert_true(s->live_count == 0 && s->frees == 1 && s->temporary == 0);
	at_peak(t, B, &c, &b, s);
	assert_true(c == 1 && b == 50);
	assert_true(s->allocs == 2 && s->alloc_bytes == 80 && s->live_bytes == 80);

	send_at(t, HS_EV_ALLOC, 1, A, 0x4000, 200);	/* a new peak: 280 */
	at_peak(t, A, &c, &b, s);
	assert_true(c == 1 && b == 200);
	at_peak(t, B, &c, &b, s);			/* untouched since: its live */
	assert_true(c == 2 && b == 80);
	send_at(t, HS_EV_FREE, 1, 0, 0x2000, 0);
	send_at(t, HS_EV_FREE, 1, 0, 0x3000, 0);
	at_peak(t, B, &c, &b, s);
	assert_true(c == 2 && b == 80 && s->live_count == 0);

	/* Temporary: freed before its thread allocated again, per thread. */
	send_at(t, HS_EV_ALLOC, 2, B, 0x5000, 8);
	send_at(t, HS_EV_ALLOC, 3, B, 0x6000, 8);	/* another thread: no matter */
	send_at(t, HS_EV_FREE, 2, 0, 0x5000, 0);	/* temporary */
	send_at(t, HS_EV_ALLOC, 3, B, 0x7000, 8);
	send_at(t, HS_EV_FREE, 3, 0, 0x6000, 0);	/* not: 0x7000 came between */
	at_peak(t, B, &c, &b, s);
	assert_int_equal(s->temporary, 1);
	assert_int_equal(p->acct.temporary, 1);
	assert_int_equal(p->acct.allocs, 7);
	assert_int_equal(p->acct.frees, 5);
	trace__free(t);
}

/* Stack @site's id in process PID0's tree (it exists). */
static uint32_t id_of(struct trace *t, uint64_t site)
{
	struct proc *p = trace__find_proc(t, PID0);
	bool created;
	uint32_t id;

	assert_int_equal(stack_tree__intern(p->stacks, &site, 1, 0, &id, &created), 0);
	assert_false(created);
	return id;
}

/*
 * A stack's counts past what its node holds (1,500 calls; a block
 * replaced unseen), exact, its at-peak values too; the marks that say
 * which `stack` records a dump writes: a stack changed since written, one
 * written with at-peak values apart from its live ones once a new peak
 * makes its live ones the peak's, and no other.
 */
static void test_acct_wide_and_marks(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true });
	const uint64_t A = 0x401000, B = 0x402000, C = 0x403000;
	struct acct_counts c;
	struct proc *p;
	uint32_t a, b, cc;

	(void)state;
	for (uint64_t i = 0; i < 1500; i++)
		send_at(t, HS_EV_ALLOC, 1, A, 0x100000 + i * 16, 5000000);
	send_at(t, HS_EV_ALLOC, 1, B, 0x1000, 64);
	send_at(t, HS_EV_ALLOC, 1, B, 0x1000, 32);	/* its free never seen: replaced */
	p = trace__find_proc(t, PID0);
	a = id_of(t, A);
	b = id_of(t, B);
	acct__counts(&p->acct, a, &c);
	assert_true(c.allocs == 1500 && c.alloc_bytes == 7500000000ULL && c.live_count == 1500);
	assert_true(c.peak_bytes == 7500000000ULL && c.peak_count == 1500);
	acct__counts(&p->acct, b, &c);
	assert_true(c.allocs == 2 && c.frees == 0 && c.live_count == 1 && c.live_bytes == 32);
	assert_int_equal(acct__wide(&p->acct), 2);
	/* Free A's past the peak: its at-peak values kept, past 32 bits. */
	for (uint64_t i = 0; i < 1000; i++)
		send_at(t, HS_EV_FREE, 1, 0, 0x100000 + i * 16, 0);
	acct__counts(&p->acct, a, &c);
	assert_true(c.live_count == 500 && c.live_bytes == 2500000000ULL && c.frees == 1000);
	assert_true(c.peak_count == 1500 && c.peak_bytes == 7500000000ULL);

	/* Marks: every stack written; none changed then. */
	assert_true(acct__changed(&p->acct, a) && acct__changed(&p->acct, b));
	acct__written(&p->acct, a);
	acct__written(&p->acct, b);
	acct__all_written(&p->acct);
	assert_false(acct__changed(&p->acct, a) || acct__changed(&p->acct, b));
	/*
	 * C makes a new peak: A and B, written with at-peak values apart from
	 * their live ones (1500 blocks; B's 64-byte block, replaced since),
	 * change: their live ones are the peak's now.
	 */
	send_at(t, HS_EV_ALLOC, 1, C, 0x2000, 6000000000ULL);
	cc = id_of(t, C);
	assert_true(acct__changed(&p->acct, cc) && acct__changed(&p->acct, a) &&
		    acct__changed(&p->acct, b));
	acct__counts(&p->acct, a, &c);
	assert_true(c.peak_count == 500 && c.peak_bytes == 2500000000ULL);
	acct__counts(&p->acct, b, &c);
	assert_true(c.peak_count == 1 && c.peak_bytes == 32);
	acct__written(&p->acct, a);
	acct__written(&p->acct, b);
	acct__written(&p->acct, cc);
	acct__all_written(&p->acct);
	/* Another peak: those written with their live values as the peak's do not. */
	send_at(t, HS_EV_ALLOC, 1, B, 0x3000, 1000);
	assert_true(acct__changed(&p->acct, b));
	assert_false(acct__changed(&p->acct, a) || acct__changed(&p->acct, cc));
	trace__free(t);
}

/*
 * A stack's counts in its node (8 bytes) to their limits: calls and frees
 * to 255, temporary allocations to 127, bytes asked for to 4 MiB - 1 and
 * live to 64 KiB - 1; one past any of them, its counts whole, exact.
 */
static void test_acct_node_limits(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true });
	const uint64_t A = 0x401000, B = 0x402000, C = 0x403000, D = 0x404000;
	struct acct_counts c;
	struct proc *p;
	uint64_t i;

	(void)state;
	for (i = 0; i < 255; i++)
		send_at(t, HS_EV_ALLOC, 1, A, 0x100000 + i * 16, 1);
	for (i = 0; i < 255; i++)
		send_at(t, HS_EV_FREE, 1, 0, 0x100000 + i * 16, 0);
	send_at(t, HS_EV_ALLOC, 1, B, 0x1000, 65535);
	for (i = 0; i < 69; i++) {			/* 69 * 60000 asked: 4,140,000 */
		send_at(t, HS_EV_ALLOC, 1, C, 0x2000, 60000);
		send_at(t, HS_EV_FREE, 2, 0, 0x2000, 0);	/* another thread's: not temporary */
	}
	for (i = 0; i < 127; i++) {
		send_at(t, HS_EV_ALLOC, 3, D, 0x3000, 8);
		send_at(t, HS_EV_FREE, 3, 0, 0x3000, 0);
	}
	p = trace__find_proc(t, PID0);
	assert_int_equal(acct__wide(&p->acct), 0);
	acct__counts(&p->acct, id_of(t, A), &c);
	assert_true(c.allocs == 255 && c.frees == 255 && c.alloc_bytes == 255 && c.live_count == 0);
	acct__counts(&p->acct, id_of(t, B), &c);
	assert_true(c.allocs == 1 && c.live_bytes == 65535);
	acct__counts(&p->acct, id_of(t, C), &c);
	assert_true(c.allocs == 69 && c.alloc_bytes == 4140000 && c.temporary == 0);
	acct__counts(&p->acct, id_of(t, D), &c);
	assert_true(c.allocs == 127 && c.temporary == 127 && c.frees == 127);

	send_at(t, HS_EV_ALLOC, 1, A, 0x100000, 1);
	send_at(t, HS_EV_ALLOC, 1, B, 0x1100000, 1);
	send_at(t, HS_EV_ALLOC, 1, C, 0x2000, 60000);
	send_at(t, HS_EV_ALLOC, 3, D, 0x3000, 8);
	send_at(t, HS_EV_FREE, 3, 0, 0x3000, 0);
	assert_int_equal(acct__wide(&p->acct), 4);
	acct__counts(&p->acct, id_of(t, A), &c);
	assert_true(c.allocs == 256 && c.frees == 255 && c.alloc_bytes == 256 && c.live_count == 1);
	acct__counts(&p->acct, id_of(t, B), &c);
	assert_true(c.allocs == 2 && c.live_bytes == 65536 && c.live_count == 2);
	acct__counts(&p->acct, id_of(t, C), &c);
	assert_true(c.allocs == 70 && c.alloc_bytes == 4200000 && c.live_bytes == 60000);
	acct__counts(&p->acct, id_of(t, D), &c);
	assert_true(c.allocs == 128 && c.temporary == 128 && c.frees == 128);
	trace__free(t);
}

/*
 * At-peak values past a snapshot's word (blocks to 1022, bytes to 4 MiB -
 * 1), of stacks past their node's counts: kept in their whole counts,
 * exact; many snapshots, a new peak emptying them, the next one making
 * the table small again, and the values after each exact.
 */
static void test_acct_snapshots(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ .map_records = true });
	const uint64_t A = 0x401000, B = 0x402000, C = 0x403000, D = 0x404000;
	struct acct_counts st, *s = &st;
	uint64_t c, b;
	struct proc *p;

	(void)state;
	for (uint64_t i = 0; i < 1023; i++)
		send_at(t, HS_EV_ALLOC, 1, A, 0x100000 + i * 16, 16);
	send_at(t, HS_EV_ALLOC, 1, B, 0x1000, 8u << 20);
	/* 3000 stacks of a block each, every one changed after the peak. */
	for (uint64_t i = 0; i < 3000; i++)
		send_at(t, HS_EV_ALLOC, 1, 0x500000 + i * 4, 0x200000 + i * 16, 32);
	p = trace__find_proc(t, PID0);
	assert_int_equal(acct__wide(&p->acct), 2);
	for (uint64_t i = 0; i < 3000; i++)
		send_at(t, HS_EV_FREE, 1, 0, 0x200000 + i * 16, 0);
	send_at(t, HS_EV_FREE, 1, 0, 0x100000, 0);
	send_at(t, HS_EV_FREE, 1, 0, 0x1000, 0);
	assert_int_equal(acct__snapshots(&p->acct), 3002);
	assert_int_equal(acct__wide(&p->acct), 2);
	at_peak(t, A, &c, &b, s);
	assert_true(c == 1023 && b == 1023 * 16 && s->live_count == 1022 && s->allocs == 1023);
	at_peak(t, B, &c, &b, s);
	assert_true(c == 1 && b == 8u << 20 && s->live_count == 0 && s->frees == 1);
	for (uint64_t i = 0; i < 3000; i += 999) {
		at_peak(t, 0x500000 + i * 4, &c, &b, s);
		assert_true(c == 1 && b == 32 && s->live_count == 0);
	}
	/* A new peak: every stack's live values are the peak's. */
	send_at(t, HS_EV_ALLOC, 1, C, 0x3000, 16u << 20);
	assert_int_equal(acct__snapshots(&p->acct), 0);
	at_peak(t, A, &c, &b, s);
	assert_true(c == 1022 && b == 1022 * 16);
	at_peak(t, B, &c, &b, s);
	assert_true(c == 0 && b == 0);
	send_at(t, HS_EV_FREE, 1, 0, 0x3000, 0);
	send_at(t, HS_EV_ALLOC, 1, D, 0x4000, 64);
	at_peak(t, C, &c, &b, s);
	assert_true(c == 1 && b == 16u << 20 && s->live_count == 0);
	at_peak(t, D, &c, &b, s);
	assert_true(c == 0 && b == 0 && s->live_bytes == 64);
	assert_int_equal(acct__snapshots(&p->acct), 2);
	/* The next peak empties a table of 2: it is made small again. */
	assert_true(acct__memory(&p->acct) > 3000 * 8);
	send_at(t, HS_EV_ALLOC, 1, C, 0x5000, 32u << 20);
	assert_int_equal(acct__snapshots(&p->acct), 0);
	assert_true(acct__memory(&p->acct) < 3000 * 8);
	at_peak(t, D, &c, &b, s);
	assert_true(c == 1 && b == 64);
	trace__free(t);
}

/*
 * The closing accounting's count of lost events, what decides exit status
 * 3: a return without an entry (a call under way while the probes went in)
 * is said but is not a loss, alone or beside real ones. (The count once
 * subtracted it twice: one such return made -a exit 3 with "no events
 * lost".)
 */
static void test_final_count(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ 0 });
	uint64_t cnt[HS_CNT__MAX] = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	send(t, HS_EV_ALLOC, PID0, 0x1000, 300);
	cnt[HS_CNT_UNMATCHED_RETURN] = 1;
	assert_int_equal(status__final(out, t, cnt), 0);
	fflush(out);
	assert_non_null(strstr(text, "heapsnoop: no events lost\n"));
	assert_non_null(strstr(text, "heapsnoop: 1 allocator calls were under way"));

	cnt[HS_CNT_RB_LOST_ALLOC] = 2;
	cnt[HS_CNT_MISSED_RETURN] = 3;
	assert_int_equal(status__final(out, t, cnt), 5);
	fclose(out);
	assert_non_null(strstr(text, "heapsnoop: EVENTS LOST: 2 allocations"));
	free(text);
	trace__free(t);
}

/*
 * A free is the header's first part only (HS_EVENT_FREE_SIZE bytes, as
 * the BPF side sends it); anything shorter, and any other record shorter
 * than the whole header, is a bad event, not read past its end.
 */
static void test_record_sizes(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ 0 });
	struct hs_event ev = { .type = HS_EV_FREE, .pid = PID0, .tid = PID0, .addr = 0x1000 };

	(void)state;
	send(t, HS_EV_ALLOC, PID0, 0x1000, 100);
	send(t, HS_EV_ALLOC, PID0, 0x2000, 200);
	feed(t, &ev, HS_EVENT_FREE_SIZE - 1);
	assert_int_equal(trace__stats(t)->bad_events, 1);
	assert_int_equal(trace__live_count(t), 2);
	feed(t, &ev, HS_EVENT_FREE_SIZE);
	assert_int_equal(trace__stats(t)->bad_events, 1);
	assert_int_equal(trace__live_count(t), 1);
	assert_int_equal(trace__live_bytes(t), 200);
	ev.type = HS_EV_EXIT;
	feed(t, &ev, HS_EVENT_FREE_SIZE);
	assert_int_equal(trace__stats(t)->bad_events, 2);
	assert_int_equal(trace__live_count(t), 1);
	trace__free(t);
}

/*
 * A realloc that moved its block releases it only if the block's record
 * lies before the realloc's entry position (HS_EV_FREE): another thread
 * may have been handed the same address between the move and the
 * realloc's record, and that block stays live.
 */
static void test_realloc_order(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ 0 });
	struct hs_event ev = { .type = HS_EV_ALLOC, .pid = PID0, .tid = PID0, .addr = 0x1000,
			       .size = 16, .nr_frames = 1, .func = HS_FN_MALLOC };
	size_t len = HS_EVENT_HDR_SIZE + sizeof(uint64_t);
	uint64_t entry;

	(void)state;
	ev.frames[0] = 0x401000;
	feed(t, &ev, len);		/* thread 1: malloc(16) = 0x1000 */
	entry = next_seq;		/* thread 1: realloc(0x1000, 4096) begins */
	ev.tid = PID0 + 1;
	ev.size = 32;
	feed(t, &ev, len);		/* thread 2: malloc(32) = 0x1000, freed by the move */
	ev.tid = PID0;
	ev.func = HS_FN_REALLOC;
	ev.addr = 0x2000;
	ev.size = 4096;
	ev.old_addr = 0x1000;
	ev.entry_pos = entry;
	feed(t, &ev, len);		/* thread 1's realloc returns 0x2000 */
	assert_int_equal(trace__live_count(t), 2);
	assert_int_equal(trace__live_bytes(t), 32 + 4096);
	assert_int_equal(trace__stats(t)->realloc_races, 1);

	/* A realloc of 0x2000 that began after its record releases it. */
	ev.entry_pos = next_seq;
	ev.addr = 0x3000;
	ev.size = 8192;
	ev.old_addr = 0x2000;
	feed(t, &ev, len);
	assert_int_equal(trace__live_count(t), 2);
	assert_int_equal(trace__live_bytes(t), 32 + 8192);
	assert_int_equal(trace__stats(t)->realloc_races, 1);
	trace__free(t);
}

/* An allocation of @size at @addr whose one frame is @frame. */
static void alloc_at(struct trace *t, uint64_t addr, uint64_t size, uint64_t frame)
{
	struct hs_event ev = { .type = HS_EV_ALLOC, .pid = PID0, .tid = PID0, .addr = addr,
			       .size = size, .nr_frames = 1, .func = HS_FN_MALLOC };

	ev.frames[0] = frame;
	feed(t, &ev, HS_EVENT_HDR_SIZE + sizeof(uint64_t));
}

/* Each stack's first frame named "[over the memory bound]": how many. */
struct over_count {
	struct trace *t;
	const struct proc *p;
	int n;
};

static int count_over(void *ctx, uint32_t id)
{
	struct over_count *c = ctx;
	uint64_t frames[REC_MAX_DEPTH];
	struct sym_frame f;

	if (stack_tree__frames(c->p->stacks, id, frames) == 1 &&
	    frametab__symbolize(trace__frames(c->t), PID0, frames[0], &f) &&
	    !strcmp(f.func, TRACE_OVER_FUNC))
		c->n++;
	return 0;
}

/*
 * trace__collapse() (heapsnoop agent's --max-memory): while on, every
 * new allocation goes under one stack of its process, a frame named
 * "[over the memory bound]", counted; the live blocks and bytes stay
 * exact, frees of collapsed blocks too; off, stacks are made again.
 */
static void test_collapse(void **state)
{
	struct trace *t = trace__new(&(struct trace_opts){ 0 });
	struct over_count oc = { t };
	struct proc *p;

	(void)state;
	alloc_at(t, 0x1000, 10, 0x401000);
	alloc_at(t, 0x2000, 20, 0x402000);
	p = trace__find_proc(t, PID0);
	assert_non_null(p);
	assert_int_equal(trace__stack_count(t), 2);
	trace__collapse(t, true);
	alloc_at(t, 0x3000, 30, 0x403000);
	alloc_at(t, 0x4000, 40, 0x404000);
	alloc_at(t, 0x5000, 50, 0x401000);
	assert_int_equal(trace__stack_count(t), 3);
	assert_int_equal(trace__stats(t)->collapsed, 3);
	assert_int_equal(trace__live_count(t), 5);
	assert_int_equal(trace__live_bytes(t), 150);
	oc.p = p;
	stack_tree__for_each(p->stacks, false, count_over, &oc);
	assert_int_equal(oc.n, 1);
	send(t, HS_EV_FREE, PID0, 0x4000, 0);
	assert_int_equal(trace__live_bytes(t), 110);
	trace__collapse(t, false);
	alloc_at(t, 0x6000, 60, 0x405000);
	assert_int_equal(trace__stack_count(t), 4);
	assert_int_equal(trace__stats(t)->collapsed, 3);
	assert_int_equal(trace__live_bytes(t), 170);
	trace__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_processes),
		cmocka_unit_test(test_exit_writes_then_drops),
		cmocka_unit_test(test_exec_drops_old_heap),
		cmocka_unit_test(test_mapping_records),
		cmocka_unit_test(test_user_stacks),
		cmocka_unit_test(test_kept_stacks),
		cmocka_unit_test(test_creators),
#ifdef __x86_64__
		cmocka_unit_test(test_jit_frames),
#endif
		cmocka_unit_test(test_accounting),
		cmocka_unit_test(test_acct_wide_and_marks),
		cmocka_unit_test(test_acct_node_limits),
		cmocka_unit_test(test_acct_snapshots),
		cmocka_unit_test(test_final_count),
		cmocka_unit_test(test_record_sizes),
		cmocka_unit_test(test_realloc_order),
		cmocka_unit_test(test_collapse),
	};

	msg_init("heapsnoop");

	return cmocka_run_group_tests(tests, NULL, NULL);
}
