/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * alloc.h - the allocator's calls: the bodies of the entry programs and of
 * the return program. An entry records the arguments of the outermost call
 * on its thread (calls.h); that call's return works out what it did
 * (alloc_result) and, for an allocation that the size filters,
 * --sample-bytes and load shedding keep, emits one HS_EV_ALLOC with its stack (stack.h); a
 * realloc's old block goes as an HS_EV_FREE. And free()'s program: its
 * CPU's log (freelog.h), or an HS_EV_FREE.
 *
 * Owns no map.
 */
#ifndef HEAPSNOOP_BPF_ALLOC_H
#define HEAPSNOOP_BPF_ALLOC_H

#include "record.h"
#include "filter.h"
#include "calls.h"
#include "stack.h"
#include "frees.h"
#include "interp.bpf.h"

/*
 * Does the call of @func need its place in the stream of records? Only the
 * realloc family: its old block is released only if it was allocated
 * before the call began (HS_EV_FREE). A constant per program.
 */
static __always_inline bool needs_entry_pos(enum hs_func func)
{
	return func == HS_FN_REALLOC || func == HS_FN_REALLOCARRAY || func == HS_FN_LUA_ALLOCF;
}

/*
 * The entry of allocator function @func, its arguments @a0-@a2 in its own
 * order (0 past its last): the thread's outermost call noted, with its
 * stack pointer and age, or a nested one counted in that call's depth.
 */
static __always_inline int gen_alloc_enter(struct pt_regs *ctx, enum hs_func func,
					   __u64 a0, __u64 a1, __u64 a2)
{
	__u64 sp = PT_REGS_SP(ctx), id, now;
	struct call_state *st;
	struct call_ref r;

	if (empty_probes)
		return 0;
	id = bpf_get_current_pid_tgid();
	if (skip_task(id))
		return 0;
	now = stale_clock();
	r = call_enter(id);
	st = r.st;
	if (!st) {
		count(HS_CNT_NO_STATE);
		return 0;
	}
	if (st->depth) {
		if (sp <= st->sp && now - st->age < HS_STALE_JIFFIES) {
			/* Called from inside the outer call, or tail-jumped to. */
			st->depth++;
			return 0;
		}
		if (armed)
			count(HS_CNT_MISSED_RETURN);
	} else {
		call_begun(&r);
	}
	st->sp = sp;
	st->age = now;
	st->entry_pos = needs_entry_pos(func) ? ring_pos() : 0;
	st->func = func;
	st->args[0] = a0;
	st->args[1] = a1;
	st->args[2] = a2;
	st->depth = 1;
	st->emitted = 0;
	return 0;
}

/* An exponential gap of mean sample_bytes. */
static __always_inline __s64 sample_gap_draw(void)
{
	__u32 i = bpf_get_prandom_u32() & (HS_SAMPLE_GAPS - 1);

	return (__s64)((sample_bytes * sample_gap[i]) >> 16) + 1;
}

/*
 * --sample-bytes: does a sample point fall in these @size bytes of the
 * thread's allocations? The next one is a fresh gap past this allocation's
 * end (a Poisson process has no memory). An unsampled allocation costs
 * this and nothing more: no stack, no record; its free reaches the loader,
 * which finds no such block and drops it.
 */
static __always_inline bool sampled(struct call_state *st, __u64 size)
{
	if (!st->sampling) {
		st->sampling = 1;
		st->sample_left = sample_gap_draw();
	}
	st->sample_left -= (__s64)size;
	if (st->sample_left > 0)
		return false;
	st->sample_left = sample_gap_draw();
	return true;
}

/*
 * --on-full sample: with the loader behind by shed_mark bytes or more, is
 * this allocation of @size bytes one of the samples that stand for the
 * rest? Its level (1 at shed_mark, one more each shed_step bytes, at most
 * HS_SHED_LEVELS) sets the mean M (hs_shed_mean): a block of M bytes or
 * more is always kept, as it would be without shedding (level 0), a
 * smaller one with probability size / M exactly (M a power of two), and
 * then stands for M bytes and M / size blocks (the loader, heapdecode).
 * The rest cost a draw, no stack and no record; their frees reach the
 * loader, which finds no such block. But thread @id's first
 * HS_SHED_EXACT allocations of an epoch are kept as without
 * shedding: the floods are sampled, the trickles beside them exact
 * (test_syswide.sh's programs of a few allocations each, beside a
 * compiler). Returns the level's record flags, 0: kept as every
 * allocation is, or -1: not kept.
 */
static __always_inline int shed_keep(struct call_state *st, __u64 id, __u64 size)
{
	__u64 backlog, mean;
	__u32 level, epoch;

	if (!shed_mark)
		return 0;
	backlog = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	if (backlog < shed_mark)
		return 0;
	epoch = (__u32)(stale_clock() >> HS_SHED_EPOCH_SHIFT);
	if (st->shed_epoch != epoch || st->shed_tid != (__u32)id) {
		st->shed_tid = (__u32)id;
		st->shed_epoch = epoch;
		st->shed_exact = 0;
	}
	if (st->shed_exact < HS_SHED_EXACT) {
		st->shed_exact++;
		return 0;
	}
	level = 1 + (backlog - shed_mark) / shed_step;
	if (level > HS_SHED_LEVELS)
		level = HS_SHED_LEVELS;
	mean = hs_shed_mean(level);
	if (size >= mean)
		return 0;
	if ((((__u64)bpf_get_prandom_u32() * mean) >> 32) < size)
		return level << HS_EVF_SHED_SHIFT;
	count(HS_CNT_SHED);
	count_add(HS_CNT_SHED_BYTES, size);
	return -1;
}

/* Fill the event for a successful allocation and send it. */
static __always_inline void emit_alloc(struct pt_regs *ctx, __u64 id, struct call_state *st,
				       __u64 addr, __u64 size, __u64 old, bool find_vma)
{
	int shed = 0;

	if (size < min_size || size > max_size || (sample_bytes && !sampled(st, size)) ||
	    (shed = shed_keep(st, id, size)) < 0) {
		/* Not traced; a realloc's old block is released all the same. */
		if (old)
			emit_free(id, old, st->entry_pos);
		return;
	}
	/* Its interpreter's frames first, in a record just before its own. */
	st->interp_flags = interp_emit(id, &st->interp_frames) | shed;
	if (unwind_dwarf) {
		emit_alloc_user_stack(ctx, id, st, addr, size, old, find_vma);
		return;
	}
	emit_alloc_frames(ctx, id, st, addr, size, old);
}

/*
 * What an allocator's return means, from its call's state: the block
 * allocated (*@addr, 0 for none), its size, and the block the call was
 * given (*@old, realloc family). A realloc-family call that returned NULL
 * with size 0 freed @old: *@addr 0 and *@old set. Kept apart from
 * emit_alloc(), so that the record's code (a copy per stack size class) is
 * inlined once, not once per allocator function.
 */
static __always_inline void alloc_result(struct call_state *st, __u64 ret, __u64 *addr,
					 __u64 *size, __u64 *old)
{
	__u64 out = 0;

	switch (st->func) {
	case HS_FN_MALLOC:
	case HS_FN_VALLOC:
	case HS_FN_PVALLOC:
		*addr = ret;
		*size = st->args[0];
		break;
	case HS_FN_CALLOC:
		/* Non-NULL means nmemb * size did not overflow. */
		*addr = ret;
		*size = st->args[0] * st->args[1];
		break;
	case HS_FN_ALIGNED_ALLOC:
	case HS_FN_MEMALIGN:
		*addr = ret;
		*size = st->args[1];
		break;
	case HS_FN_REALLOC:
		*addr = ret;
		*size = st->args[1];
		/* NULL with size 0 freed the block; NULL otherwise failed: old lives. */
		if (ret || !st->args[1])
			*old = st->args[0];
		break;
	case HS_FN_LUA_ALLOCF:
		/*
		 * lua_Alloc's rules (LuaJIT's lj_alloc_f), args (ptr, nsize):
		 * nsize 0 frees ptr (returns NULL); ptr NULL allocates; else
		 * a realloc, whose NULL leaves ptr live.
		 */
		if (!st->args[1]) {
			*old = st->args[0];
			break;
		}
		*addr = ret;
		*size = st->args[1];
		if (ret)
			*old = st->args[0];
		break;
	case HS_FN_REALLOCARRAY:
		/*
		 * A non-NULL return means nmemb * size did not overflow; an
		 * overflow returns NULL and leaves the block live.
		 */
		*addr = ret;
		*size = st->args[1] * st->args[2];
		if (ret || !st->args[1] || !st->args[2])
			*old = st->args[0];
		break;
	case HS_FN_XALLOCX:
		/*
		 * Returns the block's real size: at least size when it was
		 * resized in place (the block now holds up to size + extra
		 * asked for), below it when it could not be (unchanged).
		 */
		if (ret < st->args[1])
			break;
		*addr = st->args[0];
		*old = st->args[0];
		*size = ret < st->args[1] + st->args[2] ? ret : st->args[1] + st->args[2];
		break;
	case HS_FN_POSIX_MEMALIGN:
		/* Returns 0 or an error number; the block is in *memptr. */
		if ((int)ret != 0)
			break;
		if (bpf_probe_read_user(&out, sizeof(out), (void *)st->args[0])) {
			count(HS_CNT_BAD_OUTPTR);
			break;
		}
		*addr = out;
		*size = st->args[2];
		break;
	default:
		break;
	}
}

/* @find_vma: a compile-time constant, false in alloc_exit_compat. */
static __always_inline int gen_alloc_exit(struct pt_regs *ctx, bool find_vma)
{
	__u64 ret = PT_REGS_RC(ctx), entry_sp = PT_REGS_SP(ctx) - HS_RET_SP_ADJ;
	__u64 addr = 0, size = 0, old = 0, id;
	struct call_state *st;
	struct call_ref r;

	if (empty_probes) {
		if (empty_read)
			bpf_probe_read_user(&addr, sizeof(addr), (void *)PT_REGS_SP(ctx));
		return 0;
	}
	id = bpf_get_current_pid_tgid();
	if (skip_task(id))
		return 0;
	r = call_exit(id);
	st = r.st;
	if (!st || !st->depth) {
		if (armed)
			count(HS_CNT_UNMATCHED_RETURN);
		return 0;
	}
	st->depth--;
	/* A nested call's return, or the second of a tail-call pair. */
	if (entry_sp == st->sp && !st->emitted) {
		st->emitted = 1;
		alloc_result(st, ret, &addr, &size, &old);
		if (addr)
			emit_alloc(ctx, id, st, addr, size, old, find_vma);
		else if (old)
			emit_free(id, old, st->entry_pos);
	}
	if (!st->depth)
		call_done(&r, id);
	return 0;
}

/*
 * free(@ptr): into this CPU's log where the kernel has BPF atomics
 * (freelog.h), else, or when the log is full, a record.
 */
static __always_inline int gen_free_enter(__u64 ptr)
{
	__u64 id;

	if (empty_probes || !ptr)
		return 0;
	id = bpf_get_current_pid_tgid();
	if (skip_task(id))
		return 0;
	if (!have_free_log || !log_free(id, ptr))
		emit_free(id, ptr, 0);
	return 0;
}

#endif /* HEAPSNOOP_BPF_ALLOC_H */
