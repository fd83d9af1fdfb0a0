// SPDX-License-Identifier: MIT
/*
 * localstack.c - in-process stack capture (see localstack.h): the walk by
 * CFI and its rule cache, and the frame-pointer walk.
 *
 * The walk is the tracer's (user/tracer/unwind.c), on the live stack: per
 * frame, the rule of its pc (a return address minus one, so that a call
 * that ends a function finds its own row), the CFA from it, the caller's
 * return address and frame pointer from the CFA. It ends complete where the
 * return address is undefined (_start, a thread's clone3 start) or 0, or in
 * the dynamic loader's entry code (no CFI, %rbp/x29 zeroed: the ABI's
 * outermost frame, as the tracer's is_loader()). Where a pc has no FDE
 * (a module without CFI, JIT code), x86-64 takes one frame-pointer step
 * with the tracer's checks (the frame pointer aligned and above the stack
 * pointer, the return address in a module), its two loads made through
 * process_vm_readv so that a frame pointer that was not one faults
 * nothing; arm64 does not (a frame record does not say where its caller's
 * stack pointer was). Both know the kernel's and glibc's signal return
 * trampolines, by CFI (glibc's x86-64 __restore_rt) or by their two
 * instructions (the arm64 vDSO's __kernel_rt_sigreturn has no CFI), and
 * step through the saved ucontext. Anything else stops the walk, which
 * says so (unreadable past there): never a frame that may be wrong.
 *
 * The cache: a direct-mapped table of rules by pc, each entry under its
 * own sequence count (a seqlock whose writer only tries: a thread that
 * finds an entry being written neither waits nor writes, it uses the rule
 * it parsed). An entry holds the count of unloaded modules
 * (dl_iterate_phdr's dlpi_subs) it was parsed under; a walk reads that
 * count first, so after a dlclose no rule of the old module is used for
 * whatever is mapped at its addresses since. Loading modules needs no
 * invalidation: an address that was in no module has no entry.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/ucontext.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ehframe.h"
#include "heapsnoop/arch.h"
#include "localstack.h"

uintptr_t localstack_self_start, localstack_self_end;
bool localstack_fp;

/* The rule cache: 32-byte entries, a power of two of them (128 KiB). */
#define CACHE_BITS 12
#define CACHE_SIZE (1u << CACHE_BITS)

struct entry {
	_Atomic uint32_t seq;		/* odd while written */
	_Atomic uint32_t epoch;		/* dlpi_subs when parsed */
	_Atomic uint64_t key;		/* pc << 1 | exact; 0: empty */
	_Atomic uint64_t rule[2];	/* struct ls_rule */
};

static struct entry cache[CACHE_SIZE];
static _Atomic uint32_t last_epoch;
static _Atomic uint64_t st_epochs;
/* Per thread: a shared counter would be a cache line every walk fights for. */
static __thread uint64_t st_walks, st_parsed;

/* One frame's registers: those the rules read. */
struct frame {
	uintptr_t pc, sp, fp, lr;
	bool fp_ok, lr_ok;
	bool exact;	/* pc is where the frame is, not a return address */
};

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint32_t *)arg = (uint32_t)info->dlpi_subs;
	return 1;
}

/* The dynamic loader's count of modules unloaded so far. */
static uint32_t epoch_now(void)
{
	uint32_t subs = 0;

	dl_iterate_phdr(first_object, &subs);
	return subs;
}

struct find {
	uintptr_t pc;
	struct ls_module mod;
	uint32_t subs;
	bool found, loader, readable;
};

/* The module holding f->pc, its .eh_frame_hdr and the segment around it. */
static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	const ElfW(Phdr) *hdr = NULL;
	const char *base;

	(void)size;
	f->subs = (uint32_t)info->dlpi_subs;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && f->pc - s < ph->p_memsz) {
			f->found = true;
			f->readable = ph->p_flags & PF_R;
		}
		if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = ph;
	}
	if (!f->found)
		return 0;
	if (hdr) {
		uintptr_t h = info->dlpi_addr + hdr->p_vaddr;

		for (int i = 0; i < info->dlpi_phnum; i++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
			uintptr_t s = info->dlpi_addr + ph->p_vaddr;

			if (ph->p_type == PT_LOAD && h - s < ph->p_filesz) {
				f->mod = (struct ls_module){ (const uint8_t *)h, s, s + ph->p_filesz };
				break;
			}
		}
	}
	base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	base = base ? base + 1 : info->dlpi_name ? info->dlpi_name : "";
	f->loader = !strncmp(base, "ld-linux", 8) || !strncmp(base, "ld-musl", 7);
	return 1;
}

/* @n bytes at @addr of this process into @out, faulting nothing: 0 or -EFAULT. */
static int safe_read(uintptr_t addr, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)addr, n };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/*
 * Is the code at @pc a signal return trampoline: the kernel's arm64 vDSO
 * __kernel_rt_sigreturn (mov x8, #139; svc #0), or on x86-64 one without
 * CFI (mov $15, %rax; syscall)?
 */
static bool is_sigreturn(uintptr_t pc)
{
#if defined(__aarch64__)
	uint32_t insn[2];

	return !safe_read(pc, insn, sizeof(insn)) && insn[0] == 0xd2801168 &&
	       insn[1] == 0xd4000001;
#else
	static const uint8_t seq[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	uint8_t insn[9];

	return !safe_read(pc, insn, sizeof(insn)) && !memcmp(insn, seq, sizeof(seq));
#endif
}

/*
 * rule_of()'s miss: the rule of @f's pc (@key) parsed from its module's
 * CFI, kept in @e when the entry is free and no module was unloaded since
 * the walk began (@epoch). False when the pc is in no module.
 */
static __attribute__((noinline)) bool rule_parse(const struct frame *f, uint64_t key,
						 uint32_t epoch, struct entry *e, struct ls_rule *r)
{
	struct find fd = { .pc = f->pc };
	uint64_t w[2];
	uint32_t s;
	int err;

	st_parsed++;
	dl_iterate_phdr(find_module, &fd);
	if (!fd.found)
		return false;
	memset(r, 0, sizeof(*r));
	err = ehframe__rule(&fd.mod, f->exact ? f->pc : f->pc - 1, f->pc, r);
	if (err == -ENOENT) {
		r->flags = LS_RULE_NOFDE | (fd.loader ? LS_RULE_LOADER : 0);
		if (fd.readable && is_sigreturn(f->pc))
			r->flags |= LS_RULE_SIGRETURN;
	} else if (err) {
		r->flags = LS_RULE_BAD;	/* malformed CFI */
	}
	s = atomic_load_explicit(&e->seq, memory_order_relaxed);
	if (fd.subs != epoch || (s & 1) ||
	    !atomic_compare_exchange_strong_explicit(&e->seq, &s, s + 1, memory_order_relaxed,
						     memory_order_relaxed))
		return true;
	atomic_thread_fence(memory_order_release);
	memcpy(w, r, sizeof(w));
	atomic_store_explicit(&e->key, key, memory_order_relaxed);
	atomic_store_explicit(&e->epoch, epoch, memory_order_relaxed);
	atomic_store_explicit(&e->rule[0], w[0], memory_order_relaxed);
	atomic_store_explicit(&e->rule[1], w[1], memory_order_relaxed);
	atomic_store_explicit(&e->seq, s + 2, memory_order_release);
	return true;
}

/*
 * The rule of frame @f's pc, from the cache (a seqlock read: the entry's
 * count even and unchanged around the copy) or parsed. False when @f's pc
 * is in no module.
 */
static inline bool rule_of(const struct frame *f, uint32_t epoch, struct ls_rule *r)
{
	uint64_t key = (uint64_t)f->pc << 1 | f->exact, w[2];
	struct entry *e = &cache[(key * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS)];
	uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
	bool hit;

	hit = atomic_load_explicit(&e->key, memory_order_relaxed) == key &&
	      atomic_load_explicit(&e->epoch, memory_order_relaxed) == epoch;
	w[0] = atomic_load_explicit(&e->rule[0], memory_order_relaxed);
	w[1] = atomic_load_explicit(&e->rule[1], memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (__builtin_expect(hit && !(s1 & 1) &&
			     atomic_load_explicit(&e->seq, memory_order_relaxed) == s1, 1)) {
		memcpy(r, w, sizeof(*r));
		return true;
	}
	return rule_parse(f, key, epoch, e, r);
}

/* A value as a rule's location gives it: *(base + off) or base + off. */
static bool loc_value(uint8_t loc, int32_t off, uintptr_t cfa, const struct frame *f,
		      uintptr_t *out)
{
	uintptr_t base;

	switch (LS_LOC_BASE(loc)) {
	case LS_BASE_CFA: base = cfa; break;
	case LS_BASE_SP: base = f->sp; break;
	default:
		if (!f->fp_ok)
			return false;
		base = f->fp;
		break;
	}
	base += (intptr_t)off;
	if (LS_LOC_HOW(loc) == LS_VAL) {
		*out = base;
		return true;
	}
	/* Saved on the stack, above this frame's stack pointer: CFI is trusted. */
	if (base < f->sp || (base & 7))
		return false;
	*out = *(const uintptr_t *)base;
	return true;
}

enum step {
	STEP_OK,
	STEP_END,	/* the outermost frame */
	STEP_FAIL,	/* no sure way to the caller */
};

/*
 * One step by a plain rule (LS_RULE_PLAIN: nearly every frame), the
 * general step_rule()'s checks kept.
 */
static inline enum step step_plain(const struct ls_rule *r, struct frame *f)
{
	uintptr_t cfa, ra_at, fp_at;

	if (r->cfa_base == LS_BASE_FP && !f->fp_ok)
		return STEP_FAIL;
	cfa = (r->cfa_base == LS_BASE_FP ? f->fp : f->sp) + (intptr_t)r->cfa_off;
	ra_at = cfa + (intptr_t)r->ra_off;
	if (cfa <= f->sp || ra_at < f->sp || (ra_at & 7))
		return STEP_FAIL;
	if (r->fp == LS_LOC(LS_AT, LS_BASE_CFA)) {
		fp_at = cfa + (intptr_t)r->fp_off;
		if (fp_at < f->sp || (fp_at & 7))
			return STEP_FAIL;
		f->fp = *(const uintptr_t *)fp_at;
		f->fp_ok = true;
	}
	f->pc = *(const uintptr_t *)ra_at & HS_RA_MASK;
	f->lr = f->pc;
	f->lr_ok = true;
	f->sp = cfa;
	f->exact = false;
	return f->pc ? STEP_OK : STEP_END;
}

/* One step by CFI: @f becomes its caller. */
static enum step step_rule(const struct ls_rule *r, struct frame *f)
{
	uintptr_t cfa, ra, fp = 0, base;
	bool fp_ok = false;

	if (r->cfa_base == LS_BASE_FP && !f->fp_ok)
		return STEP_FAIL;
	base = (r->cfa_base == LS_BASE_FP ? f->fp : f->sp) + (intptr_t)r->cfa_off;
	if (r->flags & LS_RULE_CFA_DEREF) {
		if (base < f->sp || (base & 7))
			return STEP_FAIL;
		base = *(const uintptr_t *)base;
	}
	cfa = base;
	switch (LS_LOC_HOW(r->ra)) {
	case LS_UNDEF:
		return STEP_END;
	case LS_SAME:
		/* aarch64: a leaf (or a frame a signal interrupted) returns to x30. */
		if (!f->lr_ok)
			return STEP_FAIL;
		ra = f->lr;
		break;
	default:
		if (!loc_value(r->ra, r->ra_off, cfa, f, &ra))
			return STEP_FAIL;
	}
	switch (LS_LOC_HOW(r->fp)) {
	case LS_SAME:
		fp = f->fp;
		fp_ok = f->fp_ok;
		break;
	case LS_AT:
	case LS_VAL:
		fp_ok = loc_value(r->fp, r->fp_off, cfa, f, &fp);
		break;
	}
	/* A caller's frame is above its callee's, but across a signal (sigaltstack). */
	if (cfa <= f->sp && !(r->flags & LS_RULE_SIGNAL))
		return STEP_FAIL;
	f->pc = ra & HS_RA_MASK;
	f->lr = f->pc;
	f->lr_ok = true;
	f->sp = cfa;
	f->fp = fp;
	f->fp_ok = fp_ok;
	f->exact = r->flags & LS_RULE_SIGNAL;
	return f->pc ? STEP_OK : STEP_END;
}

/* Through a signal frame: the registers the kernel saved in its ucontext. */
static enum step step_sigreturn(struct frame *f)
{
	ucontext_t uc;
#if defined(__aarch64__)
	/* sp: the rt_sigframe, a siginfo then the ucontext; up to pc. */
	uintptr_t at = f->sp + sizeof(siginfo_t);
	size_t len = offsetof(ucontext_t, uc_mcontext.pstate);
#else
	/* sp: the ucontext (the frame's return address was popped by ret). */
	uintptr_t at = f->sp;
	size_t len = offsetof(ucontext_t, uc_mcontext.fpregs);
#endif

	if (safe_read(at, &uc, len))
		return STEP_FAIL;
#if defined(__aarch64__)
	f->pc = uc.uc_mcontext.pc & HS_RA_MASK;
	f->sp = uc.uc_mcontext.sp;
	f->fp = uc.uc_mcontext.regs[29];
	f->lr = uc.uc_mcontext.regs[30] & HS_RA_MASK;
#else
	f->pc = (uintptr_t)uc.uc_mcontext.gregs[REG_RIP];
	f->sp = (uintptr_t)uc.uc_mcontext.gregs[REG_RSP];
	f->fp = (uintptr_t)uc.uc_mcontext.gregs[REG_RBP];
	f->lr = 0;
#endif
	f->fp_ok = true;
	f->lr_ok = f->lr != 0;
	f->exact = true;
	return f->pc ? STEP_OK : STEP_END;
}

/*
 * One step by the frame pointer where the pc has no CFI (x86-64: push
 * %rbp; mov %rsp, %rbp): the saved %rbp and the return address above it.
 */
static enum step step_fp(struct frame *f)
{
#if defined(__x86_64__)
	uintptr_t rec[2];

	if (!f->fp_ok || !f->fp || (f->fp & 7) || f->fp < f->sp || safe_read(f->fp, rec, sizeof(rec)))
		return STEP_FAIL;
	if (!rec[1])
		return STEP_END;
	f->pc = rec[1];
	f->sp = f->fp + 16;
	f->fp = rec[0];
	f->exact = false;
	return STEP_OK;
#else
	(void)f;
	return STEP_FAIL;	/* a frame record does not give the caller's sp */
#endif
}

/* This function's own registers, at the label in the asm. */
#if defined(__x86_64__)
#define GET_REGS(f)                                                                   \
	__asm__ volatile("lea 1f(%%rip), %0\n1:\n\tmov %%rsp, %1\n\tmov %%rbp, %2"     \
			 : "=r"((f).pc), "=r"((f).sp), "=r"((f).fp))
#else
#define GET_REGS(f)                                                                   \
	__asm__ volatile("adr %0, 1f\n1:\n\tmov %1, sp\n\tmov %2, x29\n\tmov %3, x30" \
			 : "=r"((f).pc), "=r"((f).sp), "=r"((f).fp), "=r"((f).lr))
#endif

__attribute__((noinline)) int localstack__walk(void **ip, int max, bool *broken)
{
	struct frame f = { 0 };
	uint32_t epoch = epoch_now(), last;
	bool by_fp = false;
	int n = 0;

	GET_REGS(f);
	f.fp_ok = true;
#if defined(__aarch64__)
	f.lr_ok = true;
#endif
	f.exact = true;
	*broken = false;
	st_walks++;
	last = atomic_load_explicit(&last_epoch, memory_order_relaxed);
	if (last != epoch && atomic_compare_exchange_strong(&last_epoch, &last, epoch))
		atomic_fetch_add_explicit(&st_epochs, 1, memory_order_relaxed);
	while (n < max) {
		uintptr_t pc = f.pc, sp = f.sp;
		struct ls_rule r;
		enum step s;

		if (!rule_of(&f, epoch, &r)) {
			/* In no module: JIT code, or not code at all. */
			if (by_fp || !n)
				break;
			ip[n++] = (void *)f.pc;
			s = step_fp(&f);
			by_fp = true;
			goto stepped;
		}
		/* A frame reached by frame pointer must be code a module holds. */
		ip[n++] = (void *)f.pc;
		if (n == max)
			return n;
		by_fp = false;
		if (__builtin_expect(r.flags == LS_RULE_PLAIN, 1)) {
			s = step_plain(&r, &f);
		} else if (!(r.flags & (LS_RULE_NOFDE | LS_RULE_BAD))) {
			s = step_rule(&r, &f);
		} else if (r.flags & LS_RULE_SIGRETURN) {
			s = step_sigreturn(&f);
		} else if (r.flags & LS_RULE_LOADER && f.fp_ok && !f.fp) {
			s = STEP_END;
		} else if (r.flags & LS_RULE_NOFDE) {
			s = step_fp(&f);
			by_fp = true;
		} else {
			s = STEP_FAIL;
		}
stepped:
		if (s == STEP_END)
			return n;
		if (s == STEP_FAIL || (f.pc == pc && f.sp == sp))
			break;
	}
	*broken = n < max;
	return n;
}

void localstack__stats(struct localstack_stats *st)
{
	st->walks = st_walks;
	st->parsed = st_parsed;
	st->epochs = atomic_load(&st_epochs);
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t here = (uintptr_t)arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && here >= s && here < s + ph->p_memsz) {
			localstack_self_start = s;
			localstack_self_end = s + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void localstack__init(bool use_fp)
{
	localstack_fp = use_fp;
	dl_iterate_phdr(find_self, (void *)(uintptr_t)localstack__init);
}

/*
 * The frame pointer walk only follows a chain that climbs the stack by
 * less than 1 MiB a frame, so a caller that used %rbp for data ends it
 * rather than sending it to another mapping.
 */
int localstack__walk_fp(void **out, int max)
{
	uintptr_t *fp = __builtin_frame_address(0);
	int n = 0;

	while (n < max) {
		uintptr_t *next = (uintptr_t *)fp[0];

		out[n++] = (void *)fp[1];
		if (next <= fp || (uintptr_t)next - (uintptr_t)fp > (1u << 20) ||
		    ((uintptr_t)next & 7))
			break;
		fp = next;
	}
	return n;
}
