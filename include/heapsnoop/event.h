/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * event.h - what crosses the ring buffer from bpf/heapsnoop.bpf.c to the
 * loader (user/tracer/track/trace.c), and the counters the BPF side
 * keeps. Shared by both sides, so it uses only fixed-width types of both
 * worlds.
 */
#ifndef HEAPSNOOP_EVENT_H
#define HEAPSNOOP_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "heapsnoop/arch.h"

/*
 * Frames --unwind fp's BPF walk takes at most (a power of two: the walk
 * masks its index with it). 128: a stack of 60 calls and more keeps every
 * frame, as perf's kernel.perf_event_max_stack default (127) does, in a
 * record of 1 KiB of frames; deeper, the walk says it cut the stack
 * (HS_EVF_TRUNCATED). --unwind dwarf's loader unwinds up to a record's
 * 1024 frames (trace_max_frames()).
 */
#define HS_BPF_MAX_FRAMES 128
/*
 * --unwind fp: bytes of user stack copied in one read at each allocation's
 * return, in which the frame-pointer walk costs nothing per frame (frames
 * above it are read one by one). Not --stack-copy, which is dwarf's.
 */
#define HS_FP_STACK_COPY 512
/*
 * An in-flight call older than this is taken as a missed return: in
 * jiffies (1 s at HZ=1000, 4 s at Debian's 250, 10 s at 100) or, without
 * them, in units of 2^22 ns (~4.2 s).
 */
#define HS_STALE_JIFFIES 1000ULL

/* The thread slots of in-flight calls by default (--thread-slots). */
#define HS_THREAD_SLOTS 16384

/* The probed allocator functions (index into the loader's probe table). */
enum hs_func {
	HS_FN_MALLOC,
	HS_FN_CALLOC,
	HS_FN_REALLOC,
	HS_FN_REALLOCARRAY,
	HS_FN_POSIX_MEMALIGN,
	HS_FN_ALIGNED_ALLOC,
	HS_FN_MEMALIGN,
	HS_FN_VALLOC,
	HS_FN_PVALLOC,
	HS_FN_XALLOCX,		/* jemalloc's resize in place: (ptr, size, extra, flags) */
	HS_FN_FREE,
	/*
	 * A lua_Alloc (ud, ptr, osize, nsize), LuaJIT's lj_alloc_f: realloc's
	 * rules on (ptr, nsize): nsize 0 frees ptr, ptr NULL allocates.
	 */
	HS_FN_LUA_ALLOCF,
	HS_FN__MAX,
};

enum hs_event_type {
	/*
	 * A successful allocation of @size bytes at @addr with its stack.
	 * A realloc-family call also sets @old_addr and @entry_pos: the block
	 * at @old_addr is released if it moved (see HS_EV_FREE for the rule).
	 * Its time is its place in the ring buffer: no clock is read.
	 */
	HS_EV_ALLOC = 1,
	/*
	 * @addr was released. @entry_pos == 0: by free(), before the
	 * allocator could hand the block out again. @entry_pos != 0: by a
	 * realloc that began when the ring buffer's producer position was
	 * @entry_pos - 1, so the block is released only if its record lies
	 * before that position: allocated before the realloc began (another
	 * thread may have been given the same address in between, and its
	 * record then lies after).
	 */
	HS_EV_FREE = 2,
	/*
	 * System-wide mode: process @pid ended (its last thread exited,
	 * @tid is that thread). Its live allocations are gone with it.
	 */
	HS_EV_EXIT = 3,
	/* Process @pid exec'd (every mode); the old image's heap is gone. */
	HS_EV_EXEC = 4,
	/*
	 * -p and launch mode: the traced process @old_addr (a tgid) forked
	 * process @pid. @size is 1 if @pid is traced from now on (-f), 0 if
	 * not (no -f, or more processes than the map holds).
	 */
	HS_EV_FORK = 5,
	/*
	 * The interpreter frames of thread @tid's next HS_EV_ALLOC, which
	 * has HS_EVF_INTERP: @func is their kind (enum hs_interp_kind),
	 * @nr_frames struct hs_interp_frame follow the header, innermost
	 * first; @addr is the kind's context (Python: the thread state).
	 * @flags: HS_EVF_TRUNCATED (the chain went on past what was read),
	 * HS_EVF_STACK_FAULT (a frame could not be read). Made by the same
	 * program run as the allocation's record, just before it
	 * (include/heapsnoop/interpframe.h; docs/DESIGN.md, "Interpreter frames").
	 */
	HS_EV_INTERP = 6,
	/*
	 * The code object @addr of process @pid, an interpreter's (@func:
	 * enum hs_interp_kind), is about to be freed: struct hs_interp_code
	 * after the header is its last look, what records before this one
	 * name their frames of it by (its address may hold another one
	 * after).
	 */
	HS_EV_INTERP_CODE = 7,
	/*
	 * Thread @tid of process @pid created thread @addr (a tid) of the
	 * same process: a struct hs_user_stack follows the header
	 * (HS_EVF_USER_STACK, in both --unwind modes), the creating thread's
	 * user registers and stack in the clone syscall, for the loader to
	 * unwind by CFI through clone3 and pthread_create to their caller;
	 * @old_addr: its link register (arm64's x30, where the clone
	 * wrappers, leaves, keep their return address; 0 on x86-64, whose
	 * return address is on the copied stack).
	 * Made by the sched_process_fork tracepoint in the parent, before
	 * the new thread runs, so before any of its records. Where the
	 * kernel has no bpf_task_pt_regs (5.15), none is made
	 * (docs/DESIGN.md, "Who created a thread").
	 */
	HS_EV_THREAD = 8,
};

/* hs_event.flags */
#define HS_EVF_TRUNCATED	(1u << 0) /* the frame chain went on past max */
#define HS_EVF_STACK_FAULT	(1u << 1) /* a frame could not be read */
/*
 * --unwind dwarf: no frames; a struct hs_user_stack follows the header
 * (nr_frames is 0) for the loader to unwind
 * (user/unwind/unwind.c).
 */
#define HS_EVF_USER_STACK	(1u << 2)
/*
 * An HS_EV_INTERP record of this thread came just before: the
 * interpreter frames at this allocation (@interp_frames of them).
 */
#define HS_EVF_INTERP		(1u << 3)
/*
 * The process runs an interpreter whose frames were read, but their
 * record was lost (the ring buffer was full, or a program preempted this
 * one took its scratch space): counted (HS_CNT_INTERP_LOST).
 */
#define HS_EVF_INTERP_LOST	(1u << 4)
/*
 * --unwind dwarf: the ring buffer had no room for the stack's whole copy
 * (the loader behind: a hold that came late, --on-full drop), so the
 * allocation was sent with HS_USER_STACK_SHORT bytes of it, its stack
 * cut there, rather than lost (HS_CNT_SHORT_COPY).
 */
#define HS_EVF_SHORT_COPY	(1u << 5)
/*
 * --on-full sample: the allocation was recorded as a sample while the
 * loader fell behind, at shed level L (1..HS_SHED_LEVELS) in these bits:
 * kept with probability min(1, size / hs_shed_mean(L)); 0: recorded as
 * every allocation is (docs/DESIGN.md, "Load shed by sampling, -a").
 */
#define HS_EVF_SHED_SHIFT	8
#define HS_EVF_SHED_MASK	(7u << HS_EVF_SHED_SHIFT)

/*
 * The shed levels: level L's mean, HS_SHED_BASE << 2 (L - 1) bytes (1 KiB
 * to 1 MiB), a power of two, so that the programs' draw is exact: a block
 * of s < mean bytes is kept when a 32-bit random number times the mean,
 * over 2^32, is below s, with probability s / mean exactly.
 */
#define HS_SHED_BASE		1024ULL
#define HS_SHED_LEVELS		6
/*
 * While shedding, each thread's first HS_SHED_EXACT allocations of an
 * epoch (2^HS_SHED_EPOCH_SHIFT ticks of the programs' stale clock: 256
 * jiffies, 0.26 to 2.6 s by HZ, or about 1 s of 4 ms units) are recorded
 * as every allocation is, weight 1: a process that allocates little is
 * never sampled because another floods the ring, and the weights stay
 * known (bpf/alloc.h shed_keep).
 */
#define HS_SHED_EXACT		64
#define HS_SHED_EPOCH_SHIFT	8

static inline __u64 hs_shed_mean(__u32 level)
{
	return level ? HS_SHED_BASE << (2 * (level - 1)) : 0;
}

/*
 * Every record begins with the fields up to @entry_pos; an HS_EV_FREE is
 * only those (HS_EVENT_FREE_SIZE bytes: a free is a third of a busy
 * program's allocator calls, and each byte of the ring buffer it takes is
 * a store to a cold cache line). The others have the whole header
 * (HS_EVENT_HDR_SIZE) and an allocation its frames or stack after it.
 */
struct hs_event {
	__u32 type;		/* enum hs_event_type */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u16 func;		/* enum hs_func that made the call */
	__u16 nr_frames;	/* valid entries in frames[] */
	__u64 addr;
	__u64 entry_pos;	/* realloc family: the producer position at entry + 1 */
	/* HS_EVENT_FREE_SIZE */
	__u64 ts;		/* CLOCK_MONOTONIC ns: process records; 0 in allocations */
	__u64 old_addr;		/* realloc family: the block passed in */
	__u64 size;		/* bytes requested */
	__u32 flags;		/* HS_EVF_* */
	__u32 interp_frames;	/* HS_EVF_INTERP: the frames of its HS_EV_INTERP */
	/* Return addresses, innermost (the allocator's caller) first. */
	__u64 frames[HS_BPF_MAX_FRAMES];
};

#define HS_EVENT_HDR_SIZE ((unsigned long)&((struct hs_event *)0)->frames)
#define HS_EVENT_FREE_SIZE ((unsigned long)&((struct hs_event *)0)->ts)

/*
 * A plain free() goes, where the kernel has BPF atomics, to its CPU's log
 * in a BPF_F_MMAPABLE array the loader maps
 * (user/tracer/stream/freelog.c), not to the ring buffer: no reservation,
 * no commit, ~35 ns less a free (docs/PERFORMANCE.md). @stamp orders it
 * among the ring buffer's records as a realloc's @entry_pos does: the
 * producer position + 1, read after the entry was claimed; 0 while the
 * entry is being written.
 */
struct hs_free_entry {
	__u64 addr;
	__u64 id;		/* bpf_get_current_pid_tgid(): tgid << 32 | tid */
	__u64 stamp;
};

/* Entries of one CPU's log (a power of two): 192 KiB. */
#define HS_FREE_LOG_ENTRIES 8192

/*
 * One CPU's log, a ring of entries: @head counts the entries claimed
 * (compare-and-exchange by the programs of that CPU), @tail those the
 * loader took (it alone writes it), each on its own cache line. A free
 * that finds its log full, or loses the claim to a program that preempted
 * it, goes to the ring buffer instead (HS_CNT_FREE_LOG_FULL).
 */
struct hs_free_log {
	__u64 head;
	__u64 pad0[7];
	__u64 tail;
	__u64 pad1[7];
	struct hs_free_entry e[HS_FREE_LOG_ENTRIES];
};

/*
 * The registers an allocation's caller had when the allocator returned to
 * it: what unwinding by CFI starts from (enum hs_ureg, one per
 * architecture: heapsnoop/arch.h). The callee-saved ones, because a
 * caller's CFA or saved registers may be computed from any of them.
 */

/*
 * Bytes of stack --unwind dwarf copies at most (--stack-copy): by default
 * the whole stack, up to 8 MiB (glibc's default thread stack, and
 * RLIMIT_STACK's; an eighth of the ring buffer at most: bpfload.c); a
 * stack whose end is not known (bpf/stack.h's stack_end()), up to
 * HS_USER_STACK_GUESS only, since the copy may fault at its end. Records
 * of more than HS_USER_STACK_PAGED bytes that fault are read again page
 * by page to that size only (bpf/stack.h).
 */
#define HS_USER_STACK_MIN 512
#define HS_USER_STACK_MAX (8u << 20)
#define HS_USER_STACK_DEFAULT HS_USER_STACK_MAX
#define HS_USER_STACK_GUESS (1u << 20)
#define HS_USER_STACK_PAGED 65536
/* The copy an allocation falls back to when its class found no room. */
#define HS_USER_STACK_SHORT 8192

/*
 * --unwind dwarf: what follows the header of an HS_EV_ALLOC that has
 * HS_EVF_USER_STACK. @data holds @size bytes of the caller's stack from
 * regs[HS_UREG_SP] - @skip upward; @want is how many there were from
 * regs[HS_UREG_SP] up to the end of that stack (the main thread's start,
 * or the end of the thread's stack mapping), so @size - @skip < @want says
 * the copy was cut at --stack-copy. @skip is 0 unless the copy in one read
 * faulted (a page never touched: a large local array no one wrote) and was
 * made page by page from the page holding the stack pointer: then bit i of
 * @holes says that page i of @data was not there (zeros). The record is
 * reserved in size classes (powers of two): @data may hold more bytes than
 * @size, which are not the stack's.
 */
struct hs_user_stack {
	__u64 regs[HS_UREG__MAX];
	__u32 size;
	__u32 want;
	__u32 skip;
	__u32 holes;
	/*
	 * A stack tail (struct hs_tail) the program found still in place
	 * above the copy: its id, the copy holding the stack below its start
	 * and HS_TAIL_OVERLAP bytes above (@want is up to there); 0: none,
	 * the copy is the whole stack.
	 */
	__u64 tail;
	__u8 data[];
};

/*
 * Stack tails (docs/DESIGN.md, "Deep stacks copied once"). A deep stack
 * changes near its top from one allocation to the next and hardly ever
 * further out, so the loader gives each thread the tail of the last stack
 * it unwound: where it starts (a frame's CFA) and the words of the stack
 * above that its frames were unwound from (return addresses, the saved
 * registers a CFA was computed from). At the next allocation the program
 * reads those words again; if each still holds its value, the stack
 * above the tail's start is what the loader unwound before, and only
 * what lies below is copied. The loader writes a thread's tail into its
 * slot (thread id modulo HS_TAIL_SLOTS) and the programs read it, a
 * sequence count (odd while written) telling a whole one from a torn one.
 */
#define HS_TAIL_SLOTS 4096	/* a power of two */
#define HS_TAIL_WORDS 64	/* words a tail's check reads at most */
/*
 * Bytes copied above a tail's start: a frame across it (its caller's
 * stack pointer differs between two of its call sites) is walked on
 * through them to where the tail is met again.
 */
#define HS_TAIL_OVERLAP 256

struct hs_tail_word {
	__u32 off;		/* bytes above the tail's start */
	__u32 pad;
	__u64 val;		/* what it held */
};

struct hs_tail {
	__u64 seq;		/* even: whole; odd: being written (64 bits: BPF's atomics) */
	__u32 tid;		/* the thread whose stack it is the tail of */
	__u32 pid;		/* ... and its process */
	__u32 nwords;		/* 0: no tail */
	__u32 pad;
	__u64 id;		/* the loader's, echoed in hs_user_stack.tail */
	__u64 start;		/* its lowest address: the CFA of the frame it begins at */
	struct hs_tail_word w[HS_TAIL_WORDS];
};

/*
 * Counters in a per-CPU array, summed by the loader: events that never
 * reached it. (Truncated and unreadable stacks are counted by the loader
 * from each record's flags.)
 */
enum hs_counter {
	HS_CNT_RB_LOST_ALLOC,	/* ring buffer full: allocation dropped */
	HS_CNT_RB_LOST_FREE,	/* ring buffer full: free dropped */
	HS_CNT_MISSED_RETURN,	/* an entry whose return never came */
	/*
	 * A return with no entry: a call begun between the attachment of a
	 * function's uretprobe and its uprobe (an attach race, not a loss:
	 * user/tracer/output/status.c says it apart), or, without task
	 * storage, an in-flight call evicted from the LRU hash (32768
	 * threads later).
	 */
	HS_CNT_UNMATCHED_RETURN,
	HS_CNT_NO_STATE,	/* no in-flight state could be made: event dropped */
	HS_CNT_BAD_OUTPTR,	/* posix_memalign out-pointer unreadable: dropped */
	HS_CNT_RB_LOST_TASK,	/* ring buffer full: a process exit or exec dropped */
	HS_CNT_COMM_FULL,	/* --comm: a process named so not traced, table full */
	/*
	 * Not a loss: a call kept in the LRU hash because another thread's
	 * call held its thread slot (thread ids equal modulo --thread-slots).
	 */
	HS_CNT_SPILLED,
	/*
	 * Not a loss: a thread ended inside an allocator call (another
	 * thread's exit_group(), a cancellation), so its return never came;
	 * its thread slot was made idle at its exit.
	 */
	HS_CNT_DIED_IN_CALL,
	/* A free sent to the ring buffer: its CPU's log was full or contended. */
	HS_CNT_FREE_LOG_FULL,
	/*
	 * An allocation's interpreter frames not sent (HS_EVF_INTERP_LOST):
	 * the ring buffer was full, or a program preempted this one took its
	 * scratch space.
	 */
	HS_CNT_INTERP_LOST,
	/* A code object's last look (HS_EV_INTERP_CODE) lost: ring buffer full. */
	HS_CNT_INTERP_CODE_LOST,
	/*
	 * Not a loss: a stack tail (struct hs_tail) checked and found changed:
	 * the whole stack copied. (Those found in place, the loader counts
	 * from the records.)
	 */
	HS_CNT_TAIL_MISS,
	/*
	 * Not a loss: --on-full sample, the loader behind: an allocation not
	 * recorded (its sample draw said so), and its bytes. The ones kept
	 * stand for them (HS_EVF_SHED).
	 */
	HS_CNT_SHED,
	HS_CNT_SHED_BYTES,
	/*
	 * Not a loss: an allocation sent with a short copy of its stack
	 * (HS_EVF_SHORT_COPY), its class finding no room in the ring buffer.
	 */
	HS_CNT_SHORT_COPY,
	/* A thread's creation (HS_EV_THREAD) lost: ring buffer full. */
	HS_CNT_RB_LOST_THREAD,
	HS_CNT__MAX,
};

#endif /* HEAPSNOOP_EVENT_H */
