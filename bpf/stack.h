/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * stack.h - the allocation's record with its stack, in either mode. By
 * default (--unwind dwarf) the record carries the caller's registers and
 * its stack, copied straight into the ring buffer in the smallest size
 * class that holds it, for the loader to unwind by each module's CFI
 * (user/unwind/unwind.c); with --unwind fp the stack is walked here
 * along the frame-pointer chain inside one bulk copy of the top of the
 * stack, in a per-CPU scratch. No stack map: every stack travels in its
 * record, so nothing fills up silently (docs/DESIGN.md, "Stacks").
 *
 * Maps: scratch_map (and tail.h's tails).
 */
#ifndef HEAPSNOOP_BPF_STACK_H
#define HEAPSNOOP_BPF_STACK_H

#include "record.h"
#include "calls.h"
#include "tail.h"

/* The current task: a BTF pointer where the kernel has one (5.11). */
static __always_inline struct task_struct *current_task(void)
{
	if (have_task_btf)
		return bpf_get_current_task_btf();
	return (struct task_struct *)bpf_get_current_task();
}

/*
 * --unwind fp: the record being built and the bulk copy of the stack's
 * top, per CPU. A uprobe's program can be preempted (a kernel with full or
 * lazy preemption) and another program then run on the same CPU, so the
 * scratch names its owner (the thread's bpf_get_current_pid_tgid()):
 * claimed before it is written, checked once the record is copied out of
 * it; a record built while another program took the scratch is thrown
 * away (bpf_ringbuf_discard) and walked again, straight into the ring
 * buffer, by single reads. No two programs of one thread run at once, so
 * the id is unique among the programs that can interleave.
 */
struct scratch {
	__u64 owner;
	struct hs_event ev;
	__u8 stack[HS_FP_STACK_COPY];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

/*
 * Did a frame-pointer walk of a thread's stack (@ev's), which could not
 * read the frame at @fp, leave the stack at its start, into the thread's
 * descriptor: a thread of glibc or musl (its stack below its thread
 * pointer, stack_end()'s rule), @fp at or above that pointer? glibc 2.41's
 * start_thread keeps no frame pointer: its %rbp points there, so every
 * such thread's walk ends so, which is its end, not a frame unreadable.
 */
static __always_inline bool walk_left_thread(const struct hs_event *ev, __u64 sp, __u64 fp)
{
	__u64 tp;

	if (ev->pid == ev->tid)
		return false;
	tp = HS_THREAD_POINTER(current_task(), have_task_btf);
	return sp < tp && tp - sp <= (64ULL << 20) && fp >= tp;
}

/*
 * Walk the frame-pointer chain from the return into @ev: @ip is the call
 * site in the allocator's caller, @fp that caller's frame pointer. Frames
 * inside @stack, the bulk copy of [sp, sp + HS_FP_STACK_COPY), if @copied,
 * cost nothing; the rest one read each. (@copied apart from @stack, which
 * is then never NULL: verifiers before 6.x lose a pointer's NULL check
 * across a loop.)
 */
static __always_inline void walk_stack(struct hs_event *ev, const __u8 *stack, bool copied,
				       __u64 ip, __u64 sp, __u64 fp)
{
	__u32 n = 0;
	bool fault = false;

	ev->frames[n++] = ip;
	/* To HS_BPF_MAX_FRAMES inclusive: a walk stopped by max_frames says so. */
	for (int i = 1; i <= HS_BPF_MAX_FRAMES; i++) {
		__u64 pair[2], off = fp - sp;

		if (i >= max_frames) {
			if (fp)
				ev->flags |= HS_EVF_TRUNCATED;
			break;
		}
		/* The chain must climb the stack, 8-aligned; 0 ends it. */
		if (!fp || (fp & 7) || fp < sp)
			break;
		if (copied && off <= HS_FP_STACK_COPY - sizeof(pair)) {
			pair[0] = *(__u64 *)(stack + off);
			pair[1] = *(__u64 *)(stack + off + 8);
		} else if (bpf_probe_read_user(pair, sizeof(pair), (void *)fp)) {
			fault = true;
			break;
		}
		if (!pair[1])
			break;
		/* Not a user address: the frame pointer register held data. */
		if (!HS_RA_IS_USER(pair[1])) {
			fault = true;
			break;
		}
		/* arm64: a return address signed by PAC, its signature off. */
		pair[1] &= ra_mask;
		ev->frames[n++ & (HS_BPF_MAX_FRAMES - 1)] = pair[1];
		if (pair[0] <= fp)
			break;
		fp = pair[0];
	}
	if (fault && !walk_left_thread(ev, sp, fp))
		ev->flags |= HS_EVF_STACK_FAULT;
	ev->nr_frames = n;
}

static __always_inline struct scratch *scratch_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&scratch_map, &zero);
}

/*
 * The fields of a record of @type (HS_EV_ALLOC, or HS_EV_THREAD with
 * no_call's state), from its call's state.
 */
static __always_inline void fill_record(struct hs_event *ev, __u32 type, __u64 id,
					struct call_state *st, __u64 addr, __u64 size, __u64 old)
{
	fill_header(ev, id, type, (__u16)st->func, addr, st->entry_pos);
	ev->flags = st->interp_flags;
	ev->interp_frames = st->interp_frames;
	ev->ts = 0;	/* its place in the ring buffer orders it */
	ev->old_addr = old;
	ev->size = size;
}

/* The fields of an allocation's record, from its call's state. */
static __always_inline void fill_alloc(struct hs_event *ev, __u64 id, struct call_state *st,
				       __u64 addr, __u64 size, __u64 old)
{
	fill_record(ev, HS_EV_ALLOC, id, st, addr, size, old);
}

struct vma_end_ctx {
	__u64 end;
};

static long vma_end_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct vma_end_ctx *)data)->end = vma->vm_end;
	return 0;
}

/*
 * Where the stack holding @sp ends (its highest address + 1), so that the
 * copy takes no more than the frames there are:
 *  - the main thread: mm->start_stack (argc; argv and the environment are
 *    above it);
 *  - a thread of glibc or musl: its thread pointer (x86-64's %fs base,
 *    arm64's tpidr_el0: bpf/arch.bpf.h), at or just above the thread
 *    descriptor that the C library puts at the top of the thread's stack
 *    mapping, above the stack;
 *  - else (an alternate signal stack, a coroutine): the end of the mapping
 *    holding @sp. bpf_find_vma() only tries the mmap lock, so under a
 *    concurrent mmap it fails: 0 then, "not known", as on kernels without
 *    it (@find_vma false).
 * @id is the thread's bpf_get_current_pid_tgid().
 */
static __always_inline __u64 stack_end(__u64 sp, __u64 id, bool find_vma)
{
	struct task_struct *t = current_task();
	struct vma_end_ctx c = { 0 };
	__u64 end;

	/*
	 * A BTF task pointer is read directly (a load the JIT guards), the
	 * other one through a helper call per field: bpf_probe_read_kernel.
	 */
	if (id >> 32 == (__u32)id) {
		end = have_task_btf ? t->mm->start_stack : BPF_CORE_READ(t, mm, start_stack);
		if (sp < end)
			return end;
	}
	end = HS_THREAD_POINTER(t, have_task_btf);
	if (sp < end && end - sp <= (64ULL << 20))
		return end;
	/* alloc_exit_compat: no bpf_find_vma (5.17) on this kernel. */
	if (!find_vma || bpf_find_vma(bpf_get_current_task_btf(), sp, vma_end_cb, &c, 0))
		return 0;
	return c.end;
}

/*
 * Read @n bytes of the user stack at @sp into @dst, a record with room for
 * @room (a constant). The clamp is for verifiers before 5.16, which lose a
 * scalar's bounds when it is spilled to the stack across helper calls: the
 * size must be bounded by the record's room in the register passed.
 */
static __always_inline long read_user_stack(void *dst, __u64 n, const __u64 room, __u64 sp)
{
	barrier_var(n);
	if (n > room)
		n = room;
	return bpf_probe_read_user(dst, n, (void *)sp);
}

/*
 * The copy of @n bytes at @sp faulted: read the stack page by page from
 * the page holding @sp into @us->data, each page on its own, a page not
 * there left as zeros and its bit set in @us->holes, so the unwinder goes
 * on past a page nobody touched wherever the slots it needs are in pages
 * that are there. Each page lands at a constant offset (data[0] is the
 * page's start, @us->skip bytes below @sp): what verifiers before 5.16
 * can check. At most @room bytes (a constant, a multiple of the page).
 */
static __always_inline void read_user_pages(struct hs_user_stack *us, __u64 sp, __u64 n,
					    const __u64 room)
{
	__u64 base = sp & ~(HS_PAGE_SIZE - 1), end = sp + n;
	__u32 holes = 0, size = 0;

#pragma unroll
	for (int i = 0; i < (int)(room / HS_PAGE_SIZE); i++) {
		__u64 page = base + (__u64)i * HS_PAGE_SIZE;

		if (page >= end)
			break;
		if (bpf_probe_read_user(us->data + i * HS_PAGE_SIZE, HS_PAGE_SIZE, (void *)page))
			holes |= 1u << i;
		size += HS_PAGE_SIZE;
	}
	us->skip = (__u32)(sp - base);
	us->holes = holes;
	us->size = size;
}

/*
 * Send an allocation's record (or @type's) with @n bytes of stack, in a
 * record of the size class @room (a constant: the ring buffer wants
 * constant sizes), its flags @evf besides. Returns 0, or -1 when the ring
 * buffer had no room for it (nothing sent, nothing counted: the caller's
 * choice).
 */
static __always_inline int send_user_stack(struct pt_regs *ctx, __u32 type, __u64 id,
					   struct call_state *st, __u64 addr, __u64 size,
					   __u64 old, __u64 sp, __u64 want, __u64 n, __u64 tail,
					   const __u64 room, __u32 evf)
{
	struct hs_user_stack *us;
	struct hs_event *ev;

	ev = bpf_ringbuf_reserve(&events, HS_EVENT_HDR_SIZE + sizeof(*us) + room, 0);
	if (!ev)
		return -1;
	fill_record(ev, type, id, st, addr, size, old);
	ev->flags |= HS_EVF_USER_STACK | evf;
	us = (void *)ev + HS_EVENT_HDR_SIZE;
	hs_copy_uregs(us->regs, ctx);
	us->regs[HS_UREG_SP] = sp;
	us->want = want > 0xffffffffULL ? 0xffffffffU : (__u32)want;
	us->tail = tail;
	if (n > room)
		n = room;
	us->skip = 0;
	us->holes = 0;
	/*
	 * A page of the stack that was never touched (a large local array no
	 * one wrote) is not present, and a BPF read does not fault it in: the
	 * whole read fails. Then read page by page (read_user_pages), or, in
	 * a class smaller than a page, take the lower half, and so on: the
	 * frames below that page are still found, and the stack is marked
	 * unreadable past them (want = size: the walk ran out of stack, not
	 * of copy).
	 */
	if (read_user_stack(us->data, n, room, sp)) {
		if (room >= HS_PAGE_SIZE) {
			/* Its first HS_USER_STACK_PAGED bytes, in a larger class. */
			read_user_pages(us, sp, n, room < HS_USER_STACK_PAGED ? room :
						   HS_USER_STACK_PAGED);
			bpf_ringbuf_submit(ev, wakeup_flags());
			return 0;
		}
		ev->flags |= HS_EVF_STACK_FAULT;
		for (int i = 0; i < 8; i++) {
			n >>= 1;
			if (n < HS_USER_STACK_MIN) {
				n = 0;
				break;
			}
			if (!read_user_stack(us->data, n, room, sp))
				break;
		}
		/*
		 * Less than the smallest class: the caller's frames may still
		 * sit in the page holding sp (present: the call wrote its return
		 * address there). Read to the end of that page.
		 */
		if (!n) {
			__u64 rest = HS_PAGE_SIZE - (sp & (HS_PAGE_SIZE - 1));

			n = rest < room ? rest : room;
			if (read_user_stack(us->data, n, room, sp))
				n = 0;
		}
		us->want = (__u32)n;
	}
	us->size = (__u32)n;
	bpf_ringbuf_submit(ev, wakeup_flags());
	return 0;
}

/*
 * --unwind dwarf: the allocation's record carries the caller's registers
 * and stack (struct hs_user_stack), copied straight into the ring buffer,
 * in the smallest size class (a power of two, 512 B to 8 MiB) that holds
 * the stack or --stack-copy: by default the whole stack. A record of
 * another @type (a constant: HS_EV_THREAD) the same way, without tails,
 * its loss counted as @lost.
 */
static __always_inline void emit_user_stack(struct pt_regs *ctx, __u32 type, __u32 lost,
					    __u64 id, struct call_state *st, __u64 addr,
					    __u64 size, __u64 old, bool find_vma)
{
	__u64 sp = PT_REGS_SP(ctx), end, n, want, tail = 0, start;

	/* A tail still in place: the stack up to its start (and a little over) only. */
	if (type == HS_EV_ALLOC && have_tails && !(st->interp_flags & HS_EVF_INTERP))
		tail = tail_find(id, sp, &start);
	end = tail ? start + HS_TAIL_OVERLAP : stack_end(sp, id, find_vma);
	/* Not known: as much as allowed up to a guess, which may fault at the stack's end. */
	want = end > sp ? end - sp : stack_copy < HS_USER_STACK_GUESS ? stack_copy :
	       HS_USER_STACK_GUESS;
	n = want < stack_copy ? want : stack_copy;
#define SIZE_CLASS(room)							\
	if (n <= (room) || stack_copy <= (room)) {				\
		if (!send_user_stack(ctx, type, id, st, addr, size, old, sp, want, n, \
				     tail, room, 0))				\
			return;							\
		if ((room) > HS_USER_STACK_SHORT)				\
			goto short_copy;					\
		count(lost);							\
		return;								\
	}
	SIZE_CLASS(512)
	SIZE_CLASS(1024)
	SIZE_CLASS(2048)
	SIZE_CLASS(4096)
	SIZE_CLASS(8192)
	SIZE_CLASS(16384)
	SIZE_CLASS(32768)
	SIZE_CLASS(65536)
	SIZE_CLASS(131072)
	SIZE_CLASS(262144)
	SIZE_CLASS(524288)
	SIZE_CLASS(1u << 20)
	SIZE_CLASS(2u << 20)
	SIZE_CLASS(4u << 20)
#undef SIZE_CLASS
	if (!send_user_stack(ctx, type, id, st, addr, size, old, sp, want, n, tail,
			     HS_USER_STACK_MAX, 0))
		return;
	/*
	 * No room for the whole copy (a deep stack's class is up to 8 MiB,
	 * which the ring fills with before a late hold is in): the
	 * allocation with the stack's first bytes, cut there and said, not
	 * lost (docs/DESIGN.md, "Nothing lost under load"). No tail: the
	 * walk cannot reach one past so short a copy.
	 */
short_copy:
	if (send_user_stack(ctx, type, id, st, addr, size, old, sp, want,
			    n < HS_USER_STACK_SHORT ? n : HS_USER_STACK_SHORT, 0,
			    HS_USER_STACK_SHORT, HS_EVF_SHORT_COPY)) {
		count(lost);
		return;
	}
	if (type == HS_EV_ALLOC)
		count(HS_CNT_SHORT_COPY);
}

static __always_inline void emit_alloc_user_stack(struct pt_regs *ctx, __u64 id,
						  struct call_state *st, __u64 addr, __u64 size,
						  __u64 old, bool find_vma)
{
	emit_user_stack(ctx, HS_EV_ALLOC, HS_CNT_RB_LOST_ALLOC, id, st, addr, size, old, find_vma);
}

/*
 * --unwind fp, the slow path: the record built straight in the ring
 * buffer, in room for every frame, each frame read on its own.
 */
static __always_inline void emit_frames_by_reads(struct pt_regs *ctx, __u64 id,
						 struct call_state *st, __u64 addr, __u64 size,
						 __u64 old)
{
	struct hs_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);

	if (!ev) {
		count(HS_CNT_RB_LOST_ALLOC);
		return;
	}
	fill_alloc(ev, id, st, addr, size, old);
	walk_stack(ev, NULL, false, PT_REGS_IP(ctx), PT_REGS_SP(ctx), PT_REGS_FP(ctx));
	bpf_ringbuf_submit(ev, wakeup_flags());
}

/*
 * Copy the record built in @s, with room for @room frames (a constant: a
 * size class), into the ring buffer, if @s is still thread @id's once
 * copied. Returns 0, or -1 when another program took @s meanwhile
 * (the copy is discarded).
 */
static __always_inline int send_frames(struct scratch *s, __u64 id, const __u32 room)
{
	__u64 bytes = HS_EVENT_HDR_SIZE + room * sizeof(__u64);
	struct hs_event *ev = bpf_ringbuf_reserve(&events, bytes, 0);

	if (!ev) {
		count(HS_CNT_RB_LOST_ALLOC);
		return 0;
	}
	/*
	 * clang inlines a copy of at most 128 stores: the 128-frame class in
	 * two (@room is a constant, so only one of these is compiled in).
	 */
	if (room > 64) {
		__builtin_memcpy(ev, &s->ev, HS_EVENT_HDR_SIZE + 64 * sizeof(__u64));
		__builtin_memcpy(&ev->frames[64], &s->ev.frames[64], (room - 64) * sizeof(__u64));
	} else {
		__builtin_memcpy(ev, &s->ev, bytes);
	}
	if (*(volatile __u64 *)&s->owner != id) {
		bpf_ringbuf_discard(ev, BPF_RB_NO_WAKEUP);
		return -1;
	}
	bpf_ringbuf_submit(ev, wakeup_flags());
	return 0;
}

/*
 * --unwind fp: the allocation's record with the frames walked here, in
 * the smallest size class that holds them.
 */
static __always_inline void emit_alloc_frames(struct pt_regs *ctx, __u64 id,
					      struct call_state *st, __u64 addr, __u64 size,
					      __u64 old)
{
	__u64 sp = PT_REGS_SP(ctx);
	struct scratch *s = scratch_get();
	bool copied;
	__u32 n;
	int err;

	if (!s) {
		emit_frames_by_reads(ctx, id, st, addr, size, old);
		return;
	}
	s->owner = id;
	fill_alloc(&s->ev, id, st, addr, size, old);
	copied = !bpf_probe_read_user(s->stack, sizeof(s->stack), (void *)sp);
	walk_stack(&s->ev, s->stack, copied, PT_REGS_IP(ctx), sp, PT_REGS_FP(ctx));
	n = s->ev.nr_frames;
	if (n <= 8)
		err = send_frames(s, id, 8);
	else if (n <= 16)
		err = send_frames(s, id, 16);
	else if (n <= 32)
		err = send_frames(s, id, 32);
	else if (n <= 64)
		err = send_frames(s, id, 64);
	else
		err = send_frames(s, id, HS_BPF_MAX_FRAMES);
	/* Preempted by a program that took the scratch: again, by reads. */
	if (err)
		emit_frames_by_reads(ctx, id, st, addr, size, old);
}

#endif /* HEAPSNOOP_BPF_STACK_H */
