// SPDX-License-Identifier: MIT
/*
 * attach.c - resolve allocator symbols in an ELF file, place each probe
 * (probesite.h) and attach the skeleton's programs with libbpf. See attach.h.
 *
 * Each allocating function gets a uretprobe and then a uprobe at the same
 * site, in that order, so that an entry the BPF side sees always has its
 * return hooked. Aliases (glibc's memalign and aligned_alloc are one
 * function) are probed once. Where the kernel has multi-uprobe links
 * (umulti.h) each program gets one link for all its sites in the file,
 * the return program's first; else one perf-event uprobe a site.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/probesite.h"
#include "attach.h"
#include "detach.h"
#include "umulti.h"
#include "heapsnoop.skel.h"
#include "maps/elffile.h"
#include "msg.h"

struct probe_spec {
	const char *sym;
	enum hs_func func;
	unsigned int args_read;	/* PS_ARG bits the entry program reads */
	int null_arg;		/* argument whose NULL skips tracing, or -1 */
};

/*
 * free first: while the rest is being attached (a system-wide attach takes
 * milliseconds per probe), a block is never seen allocated and then freed
 * unseen.
 */
static const struct probe_spec specs[] = {
	{ "free", HS_FN_FREE, PS_ARG(0), 0 },
	{ "malloc", HS_FN_MALLOC, PS_ARG(0), -1 },
	{ "calloc", HS_FN_CALLOC, PS_ARG(0) | PS_ARG(1), -1 },
	{ "realloc", HS_FN_REALLOC, PS_ARG(0) | PS_ARG(1), -1 },
	{ "reallocarray", HS_FN_REALLOCARRAY, PS_ARG(0) | PS_ARG(1) | PS_ARG(2), -1 },
	{ "posix_memalign", HS_FN_POSIX_MEMALIGN, PS_ARG(0) | PS_ARG(1) | PS_ARG(2), -1 },
	{ "aligned_alloc", HS_FN_ALIGNED_ALLOC, PS_ARG(0) | PS_ARG(1), -1 },
	{ "memalign", HS_FN_MEMALIGN, PS_ARG(0) | PS_ARG(1), -1 },
	{ "valloc", HS_FN_VALLOC, PS_ARG(0), -1 },
	{ "pvalloc", HS_FN_PVALLOC, PS_ARG(0), -1 },
	/*
	 * Another allocator's own entry points (found only in its file: the C
	 * library has none of them), each probed as the standard function
	 * whose arguments it shares. jemalloc's, tcmalloc's and mimalloc's
	 * C++ operators allocate without calling their malloc: a program's
	 * `new` blocks were not seen at all. An entry point that calls
	 * another one is nested, and only the outer call makes a record.
	 */
#define NEW_LIKE(sym) { sym, HS_FN_MALLOC, PS_ARG(0), -1 }
#define DELETE_LIKE(sym) { sym, HS_FN_FREE, PS_ARG(0), 0 }
	/* C++ (Itanium ABI): new, new[], nothrow, aligned; delete, sized. */
	NEW_LIKE("_Znwm"), NEW_LIKE("_Znam"), NEW_LIKE("_ZnwmRKSt9nothrow_t"),
	NEW_LIKE("_ZnamRKSt9nothrow_t"), NEW_LIKE("_ZnwmSt11align_val_t"),
	NEW_LIKE("_ZnamSt11align_val_t"), NEW_LIKE("_ZnwmSt11align_val_tRKSt9nothrow_t"),
	NEW_LIKE("_ZnamSt11align_val_tRKSt9nothrow_t"),
	DELETE_LIKE("_ZdlPv"), DELETE_LIKE("_ZdaPv"), DELETE_LIKE("_ZdlPvm"),
	DELETE_LIKE("_ZdaPvm"), DELETE_LIKE("_ZdlPvRKSt9nothrow_t"),
	DELETE_LIKE("_ZdaPvRKSt9nothrow_t"), DELETE_LIKE("_ZdlPvSt11align_val_t"),
	DELETE_LIKE("_ZdaPvSt11align_val_t"), DELETE_LIKE("_ZdlPvmSt11align_val_t"),
	DELETE_LIKE("_ZdaPvmSt11align_val_t"), DELETE_LIKE("_ZdlPvSt11align_val_tRKSt9nothrow_t"),
	DELETE_LIKE("_ZdaPvSt11align_val_tRKSt9nothrow_t"),
	/* jemalloc: the *allocx API (flags carry alignment, zeroing, arena). */
	NEW_LIKE("mallocx"), DELETE_LIKE("dallocx"), DELETE_LIKE("sdallocx"),
	{ "rallocx", HS_FN_REALLOC, PS_ARG(0) | PS_ARG(1), -1 },
	{ "xallocx", HS_FN_XALLOCX, PS_ARG(0) | PS_ARG(1) | PS_ARG(2), 0 },
	/* tcmalloc (gperftools): tc_* (most are aliases of malloc & co). */
	NEW_LIKE("tc_malloc"), NEW_LIKE("tc_malloc_skip_new_handler"), NEW_LIKE("tc_new"),
	NEW_LIKE("tc_newarray"), NEW_LIKE("tc_new_nothrow"), NEW_LIKE("tc_newarray_nothrow"),
	DELETE_LIKE("tc_free"), DELETE_LIKE("tc_cfree"), DELETE_LIKE("tc_free_sized"),
	DELETE_LIKE("tc_delete"), DELETE_LIKE("tc_deletearray"), DELETE_LIKE("tc_delete_sized"),
	DELETE_LIKE("tc_deletearray_sized"), DELETE_LIKE("tc_delete_nothrow"),
	DELETE_LIKE("tc_deletearray_nothrow"),
	{ "tc_calloc", HS_FN_CALLOC, PS_ARG(0) | PS_ARG(1), -1 },
	{ "tc_realloc", HS_FN_REALLOC, PS_ARG(0) | PS_ARG(1), -1 },
	{ "tc_memalign", HS_FN_MEMALIGN, PS_ARG(0) | PS_ARG(1), -1 },
	{ "tc_posix_memalign", HS_FN_POSIX_MEMALIGN, PS_ARG(0) | PS_ARG(1) | PS_ARG(2), -1 },
	{ "tc_valloc", HS_FN_VALLOC, PS_ARG(0), -1 },
	{ "tc_pvalloc", HS_FN_PVALLOC, PS_ARG(0), -1 },
	/* mimalloc: mi_* (aligned forms take the size first, as malloc). */
	NEW_LIKE("mi_malloc"), NEW_LIKE("mi_zalloc"), NEW_LIKE("mi_new"),
	NEW_LIKE("mi_malloc_aligned"), NEW_LIKE("mi_zalloc_aligned"), NEW_LIKE("mi_new_aligned"),
	NEW_LIKE("mi_new_nothrow"), NEW_LIKE("mi_new_aligned_nothrow"),
	DELETE_LIKE("mi_free"), DELETE_LIKE("mi_free_size"), DELETE_LIKE("mi_free_aligned"),
	DELETE_LIKE("mi_free_size_aligned"), DELETE_LIKE("mi_cfree"),
	{ "mi_calloc", HS_FN_CALLOC, PS_ARG(0) | PS_ARG(1), -1 },
	{ "mi_mallocn", HS_FN_CALLOC, PS_ARG(0) | PS_ARG(1), -1 },
	{ "mi_new_n", HS_FN_CALLOC, PS_ARG(0) | PS_ARG(1), -1 },
	{ "mi_realloc", HS_FN_REALLOC, PS_ARG(0) | PS_ARG(1), -1 },
	{ "mi_realloc_aligned", HS_FN_REALLOC, PS_ARG(0) | PS_ARG(1), -1 },
	{ "mi_reallocn", HS_FN_REALLOCARRAY, PS_ARG(0) | PS_ARG(1) | PS_ARG(2), -1 },
	{ "mi_recalloc", HS_FN_REALLOCARRAY, PS_ARG(0) | PS_ARG(1) | PS_ARG(2), -1 },
#undef NEW_LIKE
#undef DELETE_LIKE
};

#define NSPECS (sizeof(specs) / sizeof(specs[0]))

struct attachment {
	struct bpf_link *links[2 * NSPECS];
	int nlinks;
	int fds[2 * NSPECS];	/* multi-uprobe links (umulti.h): one a program */
	int nfds;
	int nfuncs;
};

/* Multi-uprobe links' sites: one program's offsets in the file. */
struct site_group {
	struct bpf_program *prog;
	bool ret;
	uint64_t offs[NSPECS];
	uint32_t n;
};

static struct bpf_program *entry_prog(struct heapsnoop_bpf *skel, enum hs_func f)
{
	switch (f) {
	case HS_FN_MALLOC: return skel->progs.malloc_enter;
	case HS_FN_CALLOC: return skel->progs.calloc_enter;
	case HS_FN_REALLOC: return skel->progs.realloc_enter;
	case HS_FN_REALLOCARRAY: return skel->progs.reallocarray_enter;
	case HS_FN_POSIX_MEMALIGN: return skel->progs.posix_memalign_enter;
	case HS_FN_ALIGNED_ALLOC: return skel->progs.aligned_alloc_enter;
	case HS_FN_MEMALIGN: return skel->progs.memalign_enter;
	case HS_FN_VALLOC: return skel->progs.valloc_enter;
	case HS_FN_PVALLOC: return skel->progs.pvalloc_enter;
	case HS_FN_XALLOCX: return skel->progs.xallocx_enter;
	case HS_FN_FREE: return skel->progs.free_enter;
	default: return NULL;
	}
}

/* The return program loaded for this kernel (kfeatures.c chose it). */
static struct bpf_program *exit_prog(struct heapsnoop_bpf *skel)
{
	if (bpf_program__autoload(skel->progs.alloc_exit))
		return skel->progs.alloc_exit;
	return skel->progs.alloc_exit_compat;
}

static int link_one(struct attachment *a, struct bpf_program *prog, pid_t pid,
		    const char *path, uint64_t off, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret);
	struct bpf_link *l;

	l = bpf_program__attach_uprobe_opts(prog, pid, path, off, &opts);
	if (!l)
		return -errno;
	a->links[a->nlinks++] = l;
	return 0;
}

/*
 * Multi-uprobe links (umulti.h): offset @off added to @prog's group,
 * the groups made in the order their first site came.
 */
static void group_add(struct site_group *g, int *ng, struct bpf_program *prog, bool ret,
		      uint64_t off)
{
	int i = 0;

	while (i < *ng && (g[i].prog != prog || g[i].ret != ret))
		i++;
	if (i == *ng)
		g[(*ng)++] = (struct site_group){ .prog = prog, .ret = ret };
	g[i].offs[g[i].n++] = off;
}

/*
 * One multi-uprobe link a group, the return probes' first: an entry the
 * BPF side sees always has its return hooked. Returns 0 or -errno.
 */
static int link_groups(struct attachment *a, const struct site_group *g, int ng,
		       const char *path, pid_t pid)
{
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < ng; i++) {
			int fd;

			if (g[i].ret != !pass)
				continue;
			fd = umulti__attach(g[i].prog, path, g[i].offs, g[i].n, g[i].ret, pid);
			if (fd < 0)
				return fd;
			a->fds[a->nfds++] = fd;
		}
	return 0;
}

/* Where in @fn to probe (probesite.h); the entry if its code is unreadable. */
static void find_site(struct elf_file *ef, const struct probe_spec *sp,
		      const struct elf_func *fn, bool verbose, struct probesite *ps)
{
	uint8_t code[96];
	ssize_t n;

	n = elf_file__pread(ef, code, fn->size && fn->size < sizeof(code) ? fn->size : sizeof(code),
			    fn->offset);
	if (n <= 0 || probesite__find(code, (size_t)n, fn->addr, sp->args_read, sp->null_arg, ps))
		memset(ps, 0, sizeof(*ps));
	if (verbose)
		elog("%-15s %#llx+%-3u %-28s %s%s", sp->sym, (unsigned long long)fn->addr,
		     ps->offset, ps->insn, ps->why, ps->emulated ? "" : " (single-stepped: slow)");
}

int attach__allocator(struct heapsnoop_bpf *skel, const char *path, pid_t pid, bool verbose,
		      struct attachment **out)
{
	struct site_group *groups = NULL;
	uint64_t done_addr[NSPECS];
	struct attachment *a;
	bool multi = umulti__is_prog(exit_prog(skel));
	int ngroups = 0;
	struct elf_file *ef;
	bool have_malloc = false, have_free = false;
	const char *failed = NULL;
	int err, ndone = 0;

	err = elf_file__open(path, &ef);
	if (err) {
		elog("cannot read %s: %s", path,
			err == -ENOEXEC ? "not an ELF file" : strerror(-err));
		return err;
	}
	a = calloc(1, sizeof(*a));
	if (multi)
		groups = calloc(NSPECS + 1, sizeof(*groups));
	if (!a || (multi && !groups)) {
		free(a);
		elf_file__close(ef);
		return -ENOMEM;
	}
	for (size_t i = 0; i < NSPECS; i++) {
		const struct probe_spec *sp = &specs[i];
		struct elf_func fn;
		struct probesite ps;
		bool dup = false;

		if (elf_file__find_func(ef, sp->sym, &fn))
			continue;
		failed = sp->sym;
		if (fn.ifunc) {
			elog("%s in %s is an IFUNC resolver: not probed",
				sp->sym, path);
			continue;
		}
		for (int k = 0; k < ndone; k++)
			dup |= done_addr[k] == fn.addr;
		if (dup) {
			if (verbose)
				elog("%-15s alias of a probed function at %#llx",
					sp->sym, (unsigned long long)fn.addr);
			continue;
		}
		done_addr[ndone++] = fn.addr;

		find_site(ef, sp, &fn, verbose, &ps);

		if (multi) {
			if (sp->func != HS_FN_FREE)
				group_add(groups, &ngroups, exit_prog(skel), true,
					  fn.offset + ps.offset);
			group_add(groups, &ngroups, entry_prog(skel, sp->func), false,
				  fn.offset + ps.offset);
		} else if (sp->func != HS_FN_FREE) {
			err = link_one(a, exit_prog(skel), pid, path, fn.offset + ps.offset, true);
			if (err)
				goto fail;
		}
		if (!multi)
			err = link_one(a, entry_prog(skel, sp->func), pid, path,
				       fn.offset + ps.offset, false);
		if (err)
			goto fail;
		failed = NULL;
		a->nfuncs++;
		have_malloc |= sp->func == HS_FN_MALLOC;
		have_free |= sp->func == HS_FN_FREE;
	}
	/* Every function's sites known: their links, only if there is a heap to trace. */
	if (multi && have_malloc && have_free) {
		failed = "its allocator functions";
		err = link_groups(a, groups, ngroups, path, pid);
		if (err)
			goto fail;
	}
	free(groups);
	elf_file__close(ef);
	if (!have_malloc || !have_free) {
		elog("%s has no %s symbol to probe", path,
			have_malloc ? "free" : "malloc");
		attach__free(a);
		return -ENOENT;
	}
	*out = a;
	return 0;
fail:
	free(groups);
	if (err != -ESRCH)
		elog("cannot attach a uprobe to %s in %s: %s",
			failed ? failed : "?", path, strerror(-err));
	elf_file__close(ef);
	attach__free(a);
	return err;
}

int attach__count(const struct attachment *a)
{
	return a->nfuncs;
}

void attach__detach(struct attachment *a, struct link_batch *b)
{
	if (!a)
		return;
	while (a->nlinks > 0)
		link_batch__add(b, a->links[--a->nlinks]);
	while (a->nfds > 0)
		link_batch__add_fd(b, a->fds[--a->nfds]);
	free(a);
}

void attach__free(struct attachment *a)
{
	struct link_batch *b;

	if (!a)
		return;
	b = link_batch__new();
	attach__detach(a, b);
	link_batch__destroy(b);
}
