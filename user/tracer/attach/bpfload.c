// SPDX-License-Identifier: MIT
/*
 * bpfload.c - the BPF object from nothing to loaded (see bpfload.h). The
 * whole load sequence is bpfload__open(); what the running kernel can do,
 * and the errors when it refuses, are kfeatures.c's.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bpfload.h"
#include "heapsnoop/interpframe.h"
#include "heapsnoop.skel.h"
#include "kfeatures.h"
#include "maps/procmaps.h"
#include "msg.h"
#include "pacmask.h"
#include "records.h"
#include "sampling.h"

static bool verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Say what is missing in the kernel or in our privileges, before libbpf. */
int bpfload__preflight(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		elog("this kernel has no BTF (/sys/kernel/btf/vmlinux): heapsnoop needs a "
			"kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK)) {
		elog("this kernel has no uprobe support: heapsnoop needs "
			"CONFIG_UPROBE_EVENTS=y");
		return -ENOTSUP;
	}
	return 0;
}

/* The filters and sizes the BPF side reads, before load. */
static void set_rodata(struct heapsnoop_bpf *skel, const struct bpfload_opts *o)
{
	const char *from;

	skel->rodata->self_tgid = (__u32)getpid();
	skel->rodata->ra_mask = pacmask__detect(&from);
	if (o->verbose && HS_RA_MASK != ~0ULL)
		elog("return addresses: the address bits %#llx, from %s",
		     (unsigned long long)skel->rodata->ra_mask, from);
	skel->rodata->empty_probes = o->empty_probes;
	skel->rodata->empty_read = o->empty_read;
	skel->rodata->unwind_dwarf = o->dwarf;
	/* A new thread's creator: -a's processes as skip_task() says (bpf/creator.h). */
	skel->rodata->creators_all = o->all;
	skel->rodata->have_tails = o->dwarf && o->tails;	/* kfeatures.c: if the kernel can */
	/* A record fits an eighth of the ring at most: others wait beside it. */
	skel->rodata->stack_copy = o->stack_copy < o->ringbuf_bytes / 8 ? o->stack_copy :
				   (__u32)(o->ringbuf_bytes / 8);
	bpf_map__set_max_entries(skel->maps.events, (__u32)o->ringbuf_bytes);
	bpf_map__set_max_entries(skel->maps.thread_slots, o->thread_slots);
	skel->rodata->thread_slot_mask = o->thread_slots - 1;
	/*
	 * The loader reads at a pace that finds some 1/8 of the ring waiting
	 * (pace.h), at least every 10 ms (the session's SESSION_POLL_MS);
	 * woken only when that falls behind: at half full; or, when the
	 * traced processes wait for it (o->hold: stream/flow.h), at the
	 * quarter where they are made to; or, when load is shed (o->shed), at
	 * the quarter where it begins: a level more each eighth past it.
	 */
	skel->rodata->wakeup_bytes = o->ringbuf_bytes / (o->hold || o->shed ? 4 : 2);
	skel->rodata->shed_step = o->ringbuf_bytes / 8;
	if (o->shed)
		skel->bss->shed_mark = o->ringbuf_bytes / 4;
	skel->rodata->free_wakeup_bytes = o->ringbuf_bytes / 2;
	skel->rodata->filter_comm = o->comm != NULL;
	if (o->comm)
		memcpy((char *)skel->rodata->comm, o->comm, strlen(o->comm));
	skel->rodata->filter_uid = o->uid < 0 ? (__u32)-1 : (__u32)o->uid;
	/* -f: probes on every process, pid_filter says which are traced. */
	skel->rodata->filter_pids = o->npids > 0 || o->follow_forks;
	skel->rodata->follow_forks = o->follow_forks;
	skel->rodata->min_size = o->min_size;
	skel->rodata->max_size = o->max_size;
	skel->rodata->sample_bytes = o->sample_bytes;
	if (o->sample_bytes)
		sample_gap_table((uint32_t *)skel->rodata->sample_gap,
				 sizeof(skel->rodata->sample_gap) / sizeof(skel->rodata->sample_gap[0]));
	/*
	 * Execs are followed in every mode (session.c); exits in -a and -f
	 * (a followed child's); forks of the target in -p and launch mode.
	 */
	if (!o->all && !o->follow_forks)
		bpf_program__set_autoload(skel->progs.task_exit, false);
	if (o->all)
		bpf_program__set_autoload(skel->progs.task_fork, false);
	if (!o->comm)
		bpf_program__set_autoload(skel->progs.comm_fork, false);
	/* Interpreter frames (bpf/interp.bpf.h): -p and launch mode read them. */
	skel->rodata->interp_walk = o->interp && !o->all;
	if (!skel->rodata->interp_walk)
		bpf_program__set_autoload(skel->progs.interp_code_gone, false);
}

static int fill_pid_filter(struct heapsnoop_bpf *skel, const struct bpfload_opts *o)
{
	__u8 one = 1;

	for (unsigned int i = 0; i < o->npids; i++) {
		if (bpf_map__update_elem(skel->maps.pid_filter, &o->pids[i], sizeof(o->pids[i]),
					 &one, sizeof(one), BPF_ANY)) {
			elog("cannot set up --pid-filter: %s", strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/*
 * pid_filter or comm_pids changed: the probes' cached verdicts
 * (bpf/heapsnoop.bpf.c, filter_trace()) are stale.
 */
static void filter_changed(struct heapsnoop_bpf *skel)
{
	__atomic_fetch_add(&skel->bss->filter_gen, 1, __ATOMIC_SEQ_CST);
}

int bpfload__trace_pid(struct heapsnoop_bpf *skel, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;

	if (bpf_map__update_elem(skel->maps.pid_filter, &key, sizeof(key), &one, sizeof(one),
				 BPF_ANY)) {
		int err = -errno;

		elog("cannot add pid %d to the traced processes: %s", pid, strerror(errno));
		return err;
	}
	filter_changed(skel);
	return 0;
}

struct named {
	struct heapsnoop_bpf *skel;
	const char *name;
	int n, err;	/* found; the first failed update's -errno, said */
};

/* proc_maps__each_pid: @pid into comm_pids if its name is the one asked for. */
static int add_if_named(pid_t pid, void *ctx)
{
	struct named *w = ctx;
	__u32 key = (__u32)pid;
	char comm[32];
	__u8 one = 1;

	if (proc_maps__comm(pid, comm, sizeof(comm)) || strcmp(comm, w->name))
		return 0;	/* gone meanwhile, or another */
	if (bpf_map__update_elem(w->skel->maps.comm_pids, &key, sizeof(key), &one, sizeof(one),
				 BPF_ANY)) {
		w->err = -errno;
		elog("cannot add pid %d (%s) to the traced processes: %s", pid, w->name,
		     strerror(errno));
		return w->err;
	}
	w->n++;
	return 0;
}

int bpfload__trace_named(struct heapsnoop_bpf *skel, const char *name)
{
	struct named w = { .skel = skel, .name = name };
	int err = proc_maps__each_pid(add_if_named, &w);

	if (err && !w.err)
		elog("cannot list the processes in /proc: %s", strerror(-err));
	filter_changed(skel);
	return err ? err : w.n;
}

/*
 * The object opened, set for @o with a walk of @max_frames, loaded into
 * *@out; a refusal said unless @quiet. Returns 0 or -errno.
 */
static bool release_before(const char *release, unsigned int major, unsigned int minor);

static int open_load(const struct bpfload_opts *o, const struct bpf_features *f,
		     unsigned int max_frames, bool quiet, struct heapsnoop_bpf **out)
{
	struct heapsnoop_bpf *skel = heapsnoop_bpf__open();
	int err;

	if (!skel) {
		err = -errno;
		elog("cannot open the BPF object: %s", strerror(errno));
		return err ? err : -EINVAL;
	}
	set_rodata(skel, o);
	skel->rodata->max_frames = max_frames;
	/* Python's walk shorter before 6.2 (bpf/config.h's py_walk_bound). */
	skel->rodata->py_walk_bound = release_before(f->release, 6, 2) ? HS_PY_WALK_OLD :
				      HS_INTERP_MAX_FRAMES;
	err = kfeatures__apply(f, skel);
	if (err)
		elog("cannot prepare the BPF programs: %s", strerror(-err));
	else
		err = kfeatures__load(f, skel, o->dwarf, o->all, o->verbose, quiet);
	if (err) {
		heapsnoop_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}

/* Is uname's @release ("6.1.0-56-amd64") before @major.@minor? Unparsed: no. */
static bool release_before(const char *release, unsigned int major, unsigned int minor)
{
	unsigned int ma, mi;

	if (sscanf(release, "%u.%u", &ma, &mi) != 2)
		return false;
	return ma < major || (ma == major && mi < minor);
}

int bpfload__open(const struct bpfload_opts *o, struct heapsnoop_bpf **out)
{
	struct bpf_features f = { 0 };
	struct heapsnoop_bpf *skel;
	bool lighter, old;
	int err;

	verbose_libbpf = o->verbose;
	libbpf_set_print(libbpf_print);
	err = kfeatures__probe(&f, o->without);
	if (err)
		return err;
	if (o->verbose)
		kfeatures__print(&f, stderr);
	/*
	 * --unwind fp's walk is a bounded loop the verifier follows step by
	 * step, its branches in each: Linux 5.10's and 6.1's refuse 128 steps,
	 * after a long try (in the kernel matrix's guest, some 15 s at each
	 * start). A kernel before 6.2 is not asked; a later one that refuses
	 * is asked again. Either gets the walk every kernel took before stacks
	 * kept any depth (a token's 31 frames and the snips), said: deeper
	 * stacks are then cut.
	 */
	lighter = !o->dwarf && o->fallback_frames && o->fallback_frames < o->max_frames;
	old = release_before(f.release, 6, 2);
	err = lighter && old ? -E2BIG : open_load(o, &f, o->max_frames, lighter, &skel);
	if (err && lighter) {
		err = open_load(o, &f, o->fallback_frames, false, &skel);
		if (!err)
			elog("this kernel's BPF verifier (Linux %s) %s --unwind fp's walk of "
			     "%u frames: it walks %u, a deeper stack is cut (cut=depth); "
			     "--unwind dwarf keeps up to %u", f.release,
			     old ? "is too old for" : "refused", o->max_frames, o->fallback_frames,
			     REC_MAX_DEPTH);
	}
	if (err)
		return err;
	/* Without it the run's threads have no creators: said once, here (docs/KERNELS.md). */
	if (!kfeatures__use(&f, FEAT_TASK_PT_REGS) && !o->empty_probes)
		elog("creator stacks are not kept: %s; a thread's stacks end where it started "
		     "(clone3, start_thread)", f.have[FEAT_TASK_PT_REGS] ?
		     "bpf_task_pt_regs() is off by --without task-pt-regs" :
		     "this kernel has no bpf_task_pt_regs() (Linux 5.15)");
	err = fill_pid_filter(skel, o);
	if (err) {
		heapsnoop_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}
