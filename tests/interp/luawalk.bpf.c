// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * luawalk.bpf.c - user/interp/lua/lua.bpf.h's walk alone, for tests/interp/test_luabpf.c,
 * or, built with HS_WALK_LJ (ljwalk.bpf.o), user/interp/luajit/luajit.bpf.h's,
 * for tests/interp/test_ljbpf.c: at a read(0) of process target_tgid (the
 * Lua interpreter, or luajit, of chain.lua, waiting on stdin where its
 * call chain is deepest) once walk_cfg names its state, the state is
 * walked, its frames kept in walk_result and a record sent to walk_done.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "heapsnoop/event.h"
#include "interp/lua/lua.bpf.h"
#ifdef HS_WALK_LJ
#include "interp/luajit/luajit.bpf.h"
#define walk_work hs_lj_work
#define walk_work_map lj_work_map
#define walk lj_walk
#else
#define walk_work hs_lua_work
#define walk_work_map lua_work_map
#define walk lua_walk
#endif

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 target_tgid;

struct walk_result {
	__u32 hits, n, flags, pad;
	struct hs_lua_out out;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hs_lua_proc);
} walk_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_result);
} walk_result SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} walk_done SEC(".maps");

SEC("uprobe")
int BPF_KPROBE(at_read, int fd)
{
	__u32 zero = 0;
	struct hs_lua_proc *cfg;
	struct walk_result *r;
	struct walk_work *w;

	if (bpf_get_current_pid_tgid() >> 32 != target_tgid || fd != 0)
		return 0;
	cfg = bpf_map_lookup_elem(&walk_cfg, &zero);
	r = bpf_map_lookup_elem(&walk_result, &zero);
	w = bpf_map_lookup_elem(&walk_work_map, &zero);
	if (!cfg || !r || !w || !cfg->main || r->hits++)
		return 0;
	r->n = walk(cfg, w, HS_LUA_MAX_FRAMES);
	r->flags = w->flags;
	bpf_probe_read_kernel(&r->out, sizeof(r->out), &w->out);
	bpf_ringbuf_output(&walk_done, &r->n, sizeof(r->n), 0);
	return 0;
}
