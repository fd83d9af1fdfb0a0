/* SPDX-License-Identifier: MIT */
/*
 * kfeatures.h - what the running kernel's BPF can do, what heapsnoop uses
 * in its place where it cannot, and loading the skeleton with errors that
 * say which program or map the kernel refused and why. The table of
 * features, kernel versions and fallbacks is docs/KERNELS.md.
 */
#ifndef HEAPSNOOP_KFEATURES_H
#define HEAPSNOOP_KFEATURES_H

#include <stdbool.h>
#include <stdio.h>

struct heapsnoop_bpf;

/* One kernel feature heapsnoop can do without (see kfeatures.c's table). */
enum bpf_feature {
	FEAT_TASK_STORAGE,	/* task storage usable from uprobe programs */
	FEAT_TASK_BTF,		/* bpf_get_current_task_btf() */
	FEAT_FIND_VMA,		/* bpf_find_vma() */
	FEAT_JIFFIES,		/* bpf_jiffies64() */
	FEAT_ATOMICS,		/* BPF atomic compare-and-exchange, exchange */
	FEAT_UPROBE_MULTI,	/* multi-uprobe links that filter by process */
	FEAT_TASK_PT_REGS,	/* bpf_task_pt_regs(): a thread's creator's stack */
	FEAT__MAX,
};

struct bpf_features {
	bool have[FEAT__MAX];	/* the kernel has it (probed) */
	bool off[FEAT__MAX];	/* --without: not used even if the kernel has it */
	char release[65];	/* uname -r */
};

/*
 * The features named in @list ("task-storage,find-vma", as --without takes
 * them) as bits (1 << enum bpf_feature) added to *@mask. Returns 0, or
 * -EINVAL for an unknown name (said on stderr with the names there are).
 */
int kfeatures__parse(const char *list, unsigned int *mask);

/*
 * Probe the running kernel with libbpf (libbpf_probe_bpf_map_type,
 * libbpf_probe_bpf_helper) into @f->have; @without (kfeatures__parse()'s
 * bits) into @f->off. Returns 0; -EPERM when the
 * process may not load BPF programs (its effective capabilities), or
 * -ENOTSUP when a feature heapsnoop cannot do without is missing (the BPF
 * ring buffer, Linux 5.8): each said on stderr with what to do.
 */
int kfeatures__probe(struct bpf_features *f, unsigned int without);

/*
 * Is feature @which used: the kernel has it, --without did not say no,
 * and so for what it needs (task storage and bpf_find_vma: the BTF task)?
 */
bool kfeatures__use(const struct bpf_features *f, enum bpf_feature which);

/*
 * Print to @out, one line each, what was probed and what is used instead
 * of what is missing (for -v).
 */
void kfeatures__print(const struct bpf_features *f, FILE *out);

/*
 * Choose @skel's programs and map types for @f (before load): the
 * fallbacks of docs/KERNELS.md. Where the kernel has no BPF atomics, the
 * programs' (dead) atomic instructions are rewritten to ones its verifier
 * parses. Returns 0 or -errno (-ENOMEM).
 */
int kfeatures__apply(const struct bpf_features *f, struct heapsnoop_bpf *skel);

/*
 * Load @skel. On failure say on stderr what failed and why: a missing
 * privilege only when the process lacks it (effective capabilities), else
 * the kernel's refusal of a map or program: its name, the verifier's last
 * lines, the kernel's version, what to do (report it; an option that
 * avoids the program, if any: @dwarf and @all say which were loaded).
 * libbpf's own messages are held back unless @verbose; @quiet: the refusal
 * is not said either (the caller tries a lighter load). Returns 0 or the
 * -errno of the load.
 */
int kfeatures__load(const struct bpf_features *f, struct heapsnoop_bpf *skel, bool dwarf,
		   bool all, bool verbose, bool quiet);

#endif /* HEAPSNOOP_KFEATURES_H */
