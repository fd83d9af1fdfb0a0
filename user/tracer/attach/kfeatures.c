// SPDX-License-Identifier: MIT
/*
 * kfeatures.c - probe what the running kernel's BPF can do, choose the
 * fallbacks of bpf/heapsnoop.bpf.c for what it cannot (docs/KERNELS.md),
 * and load the skeleton with errors that tell the truth: a verifier
 * rejection as one, a missing privilege only when it is missing. See
 * kfeatures.h.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kfeatures.h"
#include "umulti.h"
#include "msg.h"
#include "heapsnoop.skel.h"

/* Threads whose in-flight call fits in the LRU hash used without task storage. */
#define CALLS_HASH_ENTRIES 32768

struct feature_desc {
	const char *name;	/* as --without takes it */
	const char *what;
	const char *since;	/* first mainline version that has it */
	const char *instead;	/* what heapsnoop does without it */
};

static const struct feature_desc descs[FEAT__MAX] = {
	[FEAT_TASK_STORAGE] = { "task-storage", "task storage from uprobe programs", "5.12",
		"in-flight calls kept in an LRU hash by thread id" },
	[FEAT_TASK_BTF] = { "task-btf", "bpf_get_current_task_btf()", "5.11",
		"bpf_get_current_task() and CO-RE reads of the task" },
	[FEAT_FIND_VMA] = { "find-vma", "bpf_find_vma()", "5.17",
		"a stack that is neither a main thread's nor a C library thread's "
		"(sigaltstack, coroutines) is copied up to --stack-copy and may end "
		"unreadable where its mapping ends" },
	[FEAT_JIFFIES] = { "jiffies", "bpf_jiffies64() in uprobe programs", "5.5",
		"a clock read per allocator call for the in-flight call's age" },
	[FEAT_ATOMICS] = { "atomics", "BPF atomics (cmpxchg, xchg)", "5.12",
		"no thread slots: every in-flight call in task storage (or the LRU "
		"hash), a look-up per probe; no free logs: every free a ring buffer "
		"record; no stack tails: every stack copied whole" },
	[FEAT_UPROBE_MULTI] = { "uprobe-multi", "multi-uprobe links", "6.6",
		"one perf-event uprobe per allocator function: each one's detach "
		"waits for the kernel in turn (about 0.1 s each on 6.18)" },
	[FEAT_TASK_PT_REGS] = { "task-pt-regs", "bpf_task_pt_regs()", "5.15",
		"creator stacks are not kept: a thread's stacks end where it "
		"started (clone3, start_thread)" },
};

int kfeatures__parse(const char *list, unsigned int *mask)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");
		int i;

		for (i = 0; i < FEAT__MAX; i++) {
			if (strlen(descs[i].name) == n && !strncmp(p, descs[i].name, n))
				break;
		}
		if (i == FEAT__MAX) {
			elog("--without: unknown feature '%.*s' (give task-storage, task-btf, "
			     "find-vma, jiffies, atomics, uprobe-multi or task-pt-regs, "
			     "comma-separated)", (int)n, p);
			return -EINVAL;
		}
		*mask |= 1u << i;
		p += n + (p[n] == ',');
	}
	return 0;
}

/* Does the process have capability @cap in its effective set? */
static bool has_cap(int cap)
{
	char line[256];
	uint64_t eff = 0;
	FILE *st = fopen("/proc/self/status", "re");

	if (!st)
		return true;	/* cannot tell: do not claim it is missing */
	while (fgets(line, sizeof(line), st)) {
		if (sscanf(line, "CapEff: %" SCNx64, &eff) == 1)
			break;
	}
	fclose(st);
	return (eff >> cap) & 1;
}

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

static bool may_load_bpf(void)
{
	if (has_cap(CAP_SYS_ADMIN_BIT))
		return true;
	return has_cap(CAP_BPF_BIT) && has_cap(CAP_PERFMON_BIT);
}


/* The kernel's lockdown ("integrity", "confidentiality"), NULL: none. */
static const char *lockdown(void)
{
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/security/lockdown", "re");

	if (f && !fgets(mode, sizeof(mode), f))
		mode[0] = '\0';
	if (f)
		fclose(f);
	return strstr(mode, "[integrity]") ? "integrity" :
	       strstr(mode, "[confidentiality]") ? "confidentiality" : NULL;
}

/*
 * Without the privilege, or under a lockdown that refuses it: how to get
 * it, and how to trace without it (--preload needs no privilege).
 */
static void say_not_allowed(void)
{
	if (may_load_bpf() && lockdown())
		elog("cannot load BPF programs: %s (the kernel is locked down, lockdown=%s); "
		     "without them, trace a command you launch with heapsnoop --preload -- "
		     "COMMAND", strerror(EPERM), lockdown());
	else
		elog("cannot load BPF programs: %s (needs root, or CAP_BPF and CAP_PERFMON: "
		     "setcap cap_bpf,cap_perfmon,cap_sys_ptrace+ep); without them, trace a "
		     "command you launch with heapsnoop --preload -- COMMAND", strerror(EPERM));
}

/*
 * Does the verifier take BPF_ATOMIC's compare-and-exchange (5.12)? A
 * kprobe-type program doing one on its stack, loaded and closed.
 */
static bool have_atomics(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_STX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_0, .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_DW | BPF_ATOMIC, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1, .off = -8, .imm = BPF_CMPXCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "hs_atomics", "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* 1 if the kernel lets kprobe/uprobe programs call @helper, else 0. */
static bool have_helper(enum bpf_func_id helper)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, helper, NULL) == 1;
}

int kfeatures__probe(struct bpf_features *f, unsigned int without)
{
	struct utsname u;

	for (int i = 0; i < FEAT__MAX; i++)
		f->off[i] = (without >> i) & 1;
	if (uname(&u) == 0)
		snprintf(f->release, sizeof(f->release), "%s", u.release);
	/* Without the privilege every probe fails: say what is really wrong. */
	if (!may_load_bpf()) {
		say_not_allowed();
		return -EPERM;
	}
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 1) {
		elog("this kernel (Linux %s) has no BPF ring buffer, which heapsnoop "
			"needs: Linux 5.8 or later (docs/KERNELS.md lists what each version "
			"gives)", f->release);
		return -ENOTSUP;
	}
	f->have[FEAT_TASK_BTF] = have_helper(BPF_FUNC_get_current_task_btf);
	/* The map type alone is not enough: uprobes must be allowed to use it. */
	f->have[FEAT_TASK_STORAGE] = f->have[FEAT_TASK_BTF] &&
		libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1 &&
		have_helper(BPF_FUNC_task_storage_get);
	f->have[FEAT_FIND_VMA] = f->have[FEAT_TASK_BTF] && have_helper(BPF_FUNC_find_vma);
	f->have[FEAT_JIFFIES] = have_helper(BPF_FUNC_jiffies64);
	f->have[FEAT_ATOMICS] = have_atomics();
	f->have[FEAT_UPROBE_MULTI] = umulti__probe();
	f->have[FEAT_TASK_PT_REGS] = f->have[FEAT_TASK_BTF] && have_helper(BPF_FUNC_task_pt_regs);
	return 0;
}

bool kfeatures__use(const struct bpf_features *f, enum bpf_feature which)
{
	/* Task storage, bpf_find_vma and bpf_task_pt_regs take the BTF task pointer. */
	if ((which == FEAT_TASK_STORAGE || which == FEAT_FIND_VMA || which == FEAT_TASK_PT_REGS) &&
	    !kfeatures__use(f, FEAT_TASK_BTF))
		return false;
	return f->have[which] && !f->off[which];
}

void kfeatures__print(const struct bpf_features *f, FILE *out)
{
	flog(out, "kernel %s: BPF features probed", f->release);
	for (int i = 0; i < FEAT__MAX; i++) {
		const struct feature_desc *d = &descs[i];

		if (kfeatures__use(f, i) && i == FEAT_TASK_STORAGE && kfeatures__use(f, FEAT_ATOMICS))
			flog(out, "  %-36s yes (Linux %s), used without thread slots (--without "
			     "atomics): their overflow is an LRU hash", d->what, d->since);
		else if (kfeatures__use(f, i))
			flog(out, "  %-36s yes (Linux %s)", d->what, d->since);
		else
			flog(out, "  %-36s %s (Linux %s): %s", d->what,
				f->have[i] ? "off by --without" : "no", d->since, d->instead);
	}
}

/*
 * Verifiers before 5.12 reject every BPF_STX | BPF_ATOMIC but the add
 * ("BPF_STX uses reserved fields") in a pass over the whole program, dead
 * code included. Where the kernel has no atomics the thread slots' code is
 * dead (have_slots is false: the verifier prunes it, and it could never
 * run), so its compare-and-exchanges and exchanges become adds, which
 * those verifiers parse. The instructions' count and places stay, so
 * libbpf's relocations still hold. Returns 0 or -errno.
 */
static int atomics_to_adds(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		size_t n = bpf_program__insn_cnt(prog);
		struct bpf_insn *insns = malloc(n * sizeof(*insns));
		bool changed = false;
		int err = 0;

		if (!insns)
			return -ENOMEM;
		memcpy(insns, bpf_program__insns(prog), n * sizeof(*insns));
		for (size_t i = 0; i < n; i++) {
			if (BPF_CLASS(insns[i].code) == BPF_STX &&
			    BPF_MODE(insns[i].code) == BPF_ATOMIC && insns[i].imm != BPF_ADD) {
				insns[i].imm = BPF_ADD;
				changed = true;
			}
		}
		if (changed)
			err = bpf_program__set_insns(prog, insns, n);
		free(insns);
		if (err)
			return err;
	}
	return 0;
}

int kfeatures__apply(const struct bpf_features *f, struct heapsnoop_bpf *skel)
{
	bool find_vma = kfeatures__use(f, FEAT_FIND_VMA);
	int nlogs;

	skel->rodata->have_task_btf = kfeatures__use(f, FEAT_TASK_BTF);
	skel->rodata->have_jiffies = kfeatures__use(f, FEAT_JIFFIES);
	skel->rodata->have_slots = kfeatures__use(f, FEAT_ATOMICS);
	bpf_program__set_autoload(skel->progs.thread_exit, skel->rodata->have_slots);
	if (!skel->rodata->have_slots) {
		bpf_map__set_max_entries(skel->maps.thread_slots, 1);
		skel->rodata->thread_slot_mask = 0;
	}
	/* The free logs are claimed with a compare-and-exchange too. */
	skel->rodata->have_free_log = skel->rodata->have_slots && !skel->rodata->empty_probes;
	nlogs = skel->rodata->have_free_log ? libbpf_num_possible_cpus() : 1;
	if (nlogs < 0)
		return nlogs;
	bpf_map__set_max_entries(skel->maps.free_logs, (__u32)nlogs);
	/*
	 * Stack tails' sequence count is read acquire on arm64, by an atomic
	 * add of 0 (bpf/arch.bpf.h): atomics again. The loader asked for them
	 * (dwarf, not --no-tails) by setting have_tails already.
	 */
	skel->rodata->have_tails = skel->rodata->have_tails && skel->rodata->have_slots &&
				   !skel->rodata->empty_probes;
	if (!skel->rodata->have_tails)
		bpf_map__set_max_entries(skel->maps.tails, 1);
	/*
	 * The slots' overflow is the LRU hash, whose update is safe under
	 * preemption, where task storage's creation is not (heapsnoop.bpf.c).
	 */
	skel->rodata->have_task_storage = kfeatures__use(f, FEAT_TASK_STORAGE) &&
					  !skel->rodata->have_slots;
	if (!skel->rodata->have_task_storage) {
		bpf_map__set_type(skel->maps.calls, BPF_MAP_TYPE_LRU_HASH);
		bpf_map__set_map_flags(skel->maps.calls, 0);
		bpf_map__set_max_entries(skel->maps.calls, CALLS_HASH_ENTRIES);
	}
	/* A thread's creator's stack: its registers by bpf_task_pt_regs (creator.h). */
	if (!kfeatures__use(f, FEAT_TASK_PT_REGS))
		bpf_program__set_autoload(skel->progs.thread_fork, false);
	/* bpf_find_vma's callback cannot even be loaded before 5.13. */
	bpf_program__set_autoload(skel->progs.alloc_exit, find_vma);
	bpf_program__set_autoload(skel->progs.alloc_exit_compat, !find_vma);
	/* The allocator probes' programs (attach.c), each site in one link. */
	if (kfeatures__use(f, FEAT_UPROBE_MULTI)) {
		struct bpf_program *multi[] = {
			skel->progs.malloc_enter, skel->progs.calloc_enter,
			skel->progs.realloc_enter, skel->progs.reallocarray_enter,
			skel->progs.posix_memalign_enter, skel->progs.aligned_alloc_enter,
			skel->progs.memalign_enter, skel->progs.valloc_enter,
			skel->progs.pvalloc_enter, skel->progs.xallocx_enter,
			skel->progs.free_enter, skel->progs.alloc_exit,
			skel->progs.alloc_exit_compat,
		};

		for (size_t i = 0; i < sizeof(multi) / sizeof(multi[0]); i++)
			umulti__set_prog(multi[i]);
	}
	if (!f->have[FEAT_ATOMICS])
		return atomics_to_adds(skel->obj);
	return 0;
}

/* libbpf's messages while loading, held back to say only what matters. */
static char *held;
static size_t held_len;
static FILE *held_stream;
static bool held_verbose;

static int hold_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list copy;

	if (held_verbose) {
		va_copy(copy, ap);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	if (level != LIBBPF_DEBUG && held_stream)
		vfprintf(held_stream, fmt, ap);
	return 0;
}

/* Print the last @n non-empty lines of [@from, @to), indented. */
static void print_tail(const char *from, const char *to, int n)
{
	const char *p = to;
	int lines = 0;

	while (p > from && lines < n) {
		p--;
		if (*p == '\n' && p + 1 < to && p[1] != '\n')
			lines++;
	}
	if (*p == '\n')
		p++;
	while (p < to) {
		const char *nl = memchr(p, '\n', (size_t)(to - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(to - p);

		if (len)
			elog("    %.*s", (int)len, p);
		p += len + 1;
	}
}

/* The option that avoids loading program @prog, or NULL if none does. */
static const char *avoided_by(const char *prog, bool dwarf, bool all)
{
	if (!strncmp(prog, "alloc_exit", 10) && dwarf)
		return "--unwind fp (stacks by frame pointers: shorter where code keeps none)";
	if (!strncmp(prog, "task_", 5) && all)
		return "tracing processes by -p PID or by command instead of -a";
	return NULL;
}

static void explain_prog(const char *log, const char *prog, const char *release, bool dwarf,
			 bool all)
{
	char begin[160];
	const char *from, *to, *option;

	elog("this kernel's verifier (Linux %s) rejected the BPF program "
		"'%s':", release, prog);
	snprintf(begin, sizeof(begin), "prog '%s': -- BEGIN PROG LOAD LOG --\n", prog);
	from = strstr(log, begin);
	to = from ? strstr(from, "-- END PROG LOAD LOG --") : NULL;
	if (from && to)
		print_tail(from + strlen(begin), to, 6);
	else
		elog("    (no verifier log)");
	elog("heapsnoop's programs should load from Linux 5.10 on: please "
		"report this with the lines above and the output of heapsnoop -v");
	option = avoided_by(prog, dwarf, all);
	if (option)
		elog("until then, %s does without this program", option);
}

/*
 * In libbpf's messages @log, the first "'NAME'@marker": NAME into @name and
 * the rest of that line after the marker into *@rest. False if none.
 */
static bool find_quoted(const char *log, const char *marker, char *name, size_t cap,
			const char **rest, int *rest_len)
{
	const char *p = strstr(log, marker), *q, *nl;

	if (!p)
		return false;
	for (q = p; q > log && q[-1] != '\''; q--)
		;
	snprintf(name, cap, "%.*s", (int)(p - q), q);
	*rest = p + strlen(marker);
	nl = strchr(*rest, '\n');
	*rest_len = nl ? (int)(nl - *rest) : (int)strlen(*rest);
	return true;
}

static void explain(int err, const struct bpf_features *f, bool dwarf, bool all)
{
	const char *log = held ? held : "", *rest;
	char name[64];
	int len;

	if ((err == -EPERM || err == -EACCES) && (!may_load_bpf() || lockdown())) {
		say_not_allowed();
		return;
	}
	if (find_quoted(log, "': BPF program load failed", name, sizeof(name), &rest, &len)) {
		explain_prog(log, name, f->release, dwarf, all);
		return;
	}
	if (find_quoted(log, "': failed to create", name, sizeof(name), &rest, &len)) {
		elog("this kernel (Linux %s) refused to create the BPF map "
			"'%s'%.*s", f->release, name, len, rest);
		elog("please report this with the output of heapsnoop -v");
		return;
	}
	elog("cannot load the BPF programs on this kernel (Linux %s): %s",
		f->release, strerror(-err));
	if (*log)
		print_tail(log, log + strlen(log), 6);
}

int kfeatures__load(const struct bpf_features *f, struct heapsnoop_bpf *skel, bool dwarf,
		   bool all, bool verbose, bool quiet)
{
	libbpf_print_fn_t prev;
	int err;

	held_verbose = verbose;
	held_stream = open_memstream(&held, &held_len);
	prev = libbpf_set_print(hold_print);
	err = heapsnoop_bpf__load(skel);
	libbpf_set_print(prev);
	if (held_stream)
		fclose(held_stream);
	held_stream = NULL;
	if (err && !quiet)
		explain(err, f, dwarf, all);
	free(held);
	held = NULL;
	return err;
}
