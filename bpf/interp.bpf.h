/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * interp.bpf.h - interpreter frames at an allocation (included by alloc.h,
 * whose return program calls interp_emit(), and by task.h): for a process
 * the loader registered in interp_procs (an interpreter it found in it:
 * user/interp/),
 * the allocation's return program walks the interpreter's frames (each
 * kind's walk: python.h) and sends them as an HS_EV_INTERP record just
 * before the allocation's own, which then says HS_EVF_INTERP; the loader
 * splices them into the native frames. A code object's destructor sends
 * its last look (HS_EV_INTERP_CODE) before its memory can be reused.
 * include/heapsnoop/interpframe.h has the records; docs/DESIGN.md,
 * "Interpreter frames", the why.
 *
 * Runs on 5.10's verifier: bounded loops, no bpf_loop; the record is
 * built in a per-CPU scratch and sent with bpf_ringbuf_output(), whose
 * size may vary, then checked as --unwind fp's scratch is (a program
 * that preempted this one on its CPU may have taken it).
 *
 * Maps: interp_procs, interp_scratch_map, icode_scratch_map; the global
 * interp_procs_n.
 */
#ifndef HEAPSNOOP_BPF_INTERP_H
#define HEAPSNOOP_BPF_INTERP_H

#include "heapsnoop/interpframe.h"
#include "record.h"
#include "filter.h"

/* --interp: any walker on (the loader clears it with --interp=none). */
const volatile bool interp_walk = true;

/*
 * Processes registered in interp_procs now: 0 spares every allocation the
 * look-up (a program with no interpreter pays one load).
 */
__u32 interp_procs_n;

/* tgid -> what its interpreter's walk needs (the loader's). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HS_INTERP_PROCS);
	__type(key, __u32);
	__type(value, struct hs_interp_proc);
} interp_procs SEC(".maps");

/*
 * The walk's record and a frame's copy, per CPU; @owner as in struct
 * scratch (heapsnoop.bpf.c).
 */
struct interp_scratch {
	__u64 owner;
	__u8 frame[128];
	__u8 rec[__builtin_offsetof(struct hs_event, frames) + HS_INTERP_MAX_FRAMES * sizeof(struct hs_interp_frame)];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct interp_scratch);
} interp_scratch_map SEC(".maps");

/* A code object's last look being built, per CPU. */
struct icode_scratch {
	__u64 owner;
	__u8 rec[__builtin_offsetof(struct hs_event, frames) + sizeof(struct hs_interp_code) + HS_ICODE_TABLE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct icode_scratch);
} icode_scratch_map SEC(".maps");

#include "interp/python/python.bpf.h"
#include "interp/lua/lua.bpf.h"
#include "interp/luajit/luajit.bpf.h"

/* LuaJIT's walk (luajit.h) into @s's record, as lua_emit's below. */
static __always_inline __u32 lj_emit(const struct hs_interp_proc *cfg, struct interp_scratch *s,
				     __u32 max)
{
	struct hs_event *h = (struct hs_event *)s->rec;
	struct hs_lj_work *w;
	__u32 zero = 0, n;
	__u64 bytes;

	w = bpf_map_lookup_elem(&lj_work_map, &zero);
	if (!w)
		return 0;
	n = lj_walk(&cfg->lua, w, max);
	h->flags |= w->flags;
	if (n > HS_INTERP_MAX_FRAMES)
		n = HS_INTERP_MAX_FRAMES;
	bytes = (__u64)n * sizeof(struct hs_interp_frame);
	barrier_var(bytes);
	if (bytes > sizeof(w->out))
		bytes = sizeof(w->out);
	if (bytes && bpf_probe_read_kernel(s->rec + HS_EVENT_HDR_SIZE, bytes, w->out.w))
		return 0;
	return n;
}

/*
 * Lua: the frames of the process's state into @s's record, when thread
 * @id is the one that runs it (a state is one thread's) and its main
 * thread is known (launch mode: once lua_newstate returned). Returns
 * the frames read; the record's flags get the walk's.
 */
static __always_inline __u32 lua_emit(const struct hs_interp_proc *cfg, struct interp_scratch *s,
				      __u64 id)
{
	struct hs_event *h = (struct hs_event *)s->rec;
	__u32 zero = 0, n, max = cfg->max_frames;
	struct hs_lua_work *w;
	__u64 bytes;

	if (!cfg->lua.main || (__u32)id != cfg->lua.owner)
		return 0;
	if (cfg->lua.vm == HS_LUA_VM_JIT)
		return lj_emit(cfg, s, max < HS_LUA_MAX_FRAMES ? max : HS_LUA_MAX_FRAMES);
	w = bpf_map_lookup_elem(&lua_work_map, &zero);
	if (!w)
		return 0;
	n = lua_walk(&cfg->lua, w, max < HS_LUA_MAX_FRAMES ? max : HS_LUA_MAX_FRAMES);
	h->flags |= w->flags;
	if (n > HS_INTERP_MAX_FRAMES)
		n = HS_INTERP_MAX_FRAMES;
	bytes = (__u64)n * sizeof(struct hs_interp_frame);
	barrier_var(bytes);
	if (bytes > sizeof(w->out))
		bytes = sizeof(w->out);
	/* Per CPU both: a copy, not a walk again. */
	if (bytes && bpf_probe_read_kernel(s->rec + HS_EVENT_HDR_SIZE, bytes, w->out.w))
		return 0;
	return n;
}

/*
 * Before thread @id's allocation record: if its process runs an
 * interpreter, its frames as an HS_EV_INTERP record. Returns the flags the
 * allocation's record takes (HS_EVF_INTERP, HS_EVF_INTERP_LOST or 0) and
 * in *@nr the frames sent.
 */
static __always_inline __u32 interp_emit(__u64 id, __u32 *nr)
{
	__u32 tgid = id >> 32, zero = 0, n;
	struct hs_interp_proc *cfg;
	struct interp_scratch *s;
	struct hs_event *h;
	__u64 bytes;

	*nr = 0;
	if (!interp_walk || !READ_ONCE(interp_procs_n))
		return 0;
	cfg = bpf_map_lookup_elem(&interp_procs, &tgid);
	if (!cfg || (cfg->kind != HS_INTERP_PYTHON && cfg->kind != HS_INTERP_LUA))
		return 0;
	s = bpf_map_lookup_elem(&interp_scratch_map, &zero);
	if (!s)
		return 0;
	s->owner = id;
	h = (struct hs_event *)s->rec;
	fill_header(h, id, HS_EV_INTERP, (__u16)cfg->kind, 0, 0);
	h->ts = 0;
	h->old_addr = 0;
	h->size = 0;
	if (cfg->kind == HS_INTERP_LUA)
		n = lua_emit(cfg, s, id);
	else
		n = py_walk(cfg, s);
	if (!n && !(h->flags & HS_EVF_STACK_FAULT))
		return 0;	/* not the interpreter's thread, or not one yet */
	if (n > HS_INTERP_MAX_FRAMES)
		n = HS_INTERP_MAX_FRAMES;
	h->nr_frames = (__u16)n;
	bytes = HS_EVENT_HDR_SIZE + (__u64)n * sizeof(struct hs_interp_frame);
	barrier_var(bytes);
	if (bytes > sizeof(s->rec))
		return 0;
	if (bpf_ringbuf_output(&events, s->rec, bytes, BPF_RB_NO_WAKEUP) ||
	    READ_ONCE(s->owner) != id) {
		count(HS_CNT_INTERP_LOST);
		return HS_EVF_INTERP_LOST;
	}
	*nr = n;
	return HS_EVF_INTERP;
}

/*
 * Launch mode: lua_newstate (luaL_newstate calls it) returned the new
 * state's main thread @L: the first one a Lua process makes is the one
 * walked, on the thread that made it.
 */
SEC("uretprobe")
int BPF_KRETPROBE(lua_newstate_ret, __u64 L)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct hs_interp_proc *cfg;

	if (!interp_walk || !L)
		return 0;
	cfg = bpf_map_lookup_elem(&interp_procs, &tgid);
	if (!cfg || cfg->kind != HS_INTERP_LUA || cfg->lua.main)
		return 0;
	cfg->lua.owner = (__u32)id;
	WRITE_ONCE(cfg->lua.main, L);
	return 0;
}

/*
 * -f: a traced process forked: the child runs the same image, so the
 * same walk, from its first allocation (the loader hears of it with the
 * fork's record).
 */
static __always_inline void interp_forked(__u32 parent, __u32 child)
{
	struct hs_interp_proc *cfg;

	if (!interp_walk || !READ_ONCE(interp_procs_n))
		return;
	cfg = bpf_map_lookup_elem(&interp_procs, &parent);
	if (!cfg)
		return;
	bpf_map_update_elem(&interp_procs, &child, cfg, BPF_ANY);
	/* Lua: the child's state is its one thread's (the fork's copy of the forker's). */
	cfg = bpf_map_lookup_elem(&interp_procs, &child);
	if (cfg && cfg->kind == HS_INTERP_LUA)
		cfg->lua.owner = child;
}

/* Process @tgid exec'd or ended: its image's walk is not the new one's. */
static __always_inline void interp_gone(__u32 tgid)
{
	if (interp_walk && READ_ONCE(interp_procs_n))
		bpf_map_delete_elem(&interp_procs, &tgid);
}

/*
 * Send the record built in @s (@bytes of it, at most @room: a constant,
 * the ring buffer's reservations want one) if @s is still thread @id's
 * once copied.
 */
static __always_inline void icode_send(struct icode_scratch *s, __u64 id, __u64 bytes,
				       const __u64 room)
{
	void *r = bpf_ringbuf_reserve(&events, room, 0);

	if (!r) {
		count(HS_CNT_INTERP_CODE_LOST);
		return;
	}
	if (bytes > room)
		bytes = room;
	barrier_var(bytes);
	if (bytes > room || bpf_probe_read_kernel(r, bytes, s->rec) ||
	    READ_ONCE(s->owner) != id) {
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
		count(HS_CNT_INTERP_CODE_LOST);
		return;
	}
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/*
 * The interpreter's code object destructor (Python: code_dealloc, the
 * function in PyCode_Type.tp_dealloc), at its entry: the object is whole.
 */
static __always_inline int gen_interp_code_gone(__u64 co)
{
	__u64 id = bpf_get_current_pid_tgid(), bytes;
	__u32 tgid = id >> 32, zero = 0;
	struct hs_interp_proc *cfg;
	struct icode_scratch *s;
	struct hs_interp_code *c;
	struct hs_event *h;

	if (!interp_walk || skip_task(id))
		return 0;
	cfg = bpf_map_lookup_elem(&interp_procs, &tgid);
	s = bpf_map_lookup_elem(&icode_scratch_map, &zero);
	if (!cfg || cfg->kind != HS_INTERP_PYTHON || !s)
		return 0;
	s->owner = id;
	h = (struct hs_event *)s->rec;
	fill_header(h, id, HS_EV_INTERP_CODE, HS_INTERP_PYTHON, co, 0);
	h->ts = 0;
	h->old_addr = 0;
	h->size = 0;
	c = (struct hs_interp_code *)(s->rec + HS_EVENT_HDR_SIZE);
	py_code_look(&cfg->py, co, c);
	bytes = HS_EVENT_HDR_SIZE + sizeof(*c) + c->table_len;
	if (bytes <= 1024)
		icode_send(s, id, bytes, 1024);
	else if (bytes <= 2048)
		icode_send(s, id, bytes, 2048);
	else if (bytes <= 4096)
		icode_send(s, id, bytes, 4096);
	else
		icode_send(s, id, bytes, sizeof(s->rec));
	return 0;
}

#endif /* HEAPSNOOP_BPF_INTERP_H */
