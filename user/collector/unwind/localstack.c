// SPDX-License-Identifier: MIT
/*
 * localstack.c - in-process stack capture (see localstack.h): the walk by
 * CFI and its rule cache, and the frame-pointer walk.
 *
 * The walk is the tracer's (user/unwind/unwind.c), on the live
 * stack: per
 * frame, the rule of its pc (a return address minus one, so that a call
 * that ends a function finds its own row), then one step to the caller
 * (framestep.c: by the rule, through a signal frame, or by the frame
 * pointer where code has no CFI; on arm64 the caller's rule must then
 * have its CFA from x29, or from the frame record x29 points at). The rule's FDE by the module's .eh_frame_hdr,
 * else by modcfi.c's index of its .eh_frame or of its file's
 * .debug_frame, built once, under the loader's lock. It ends complete where the
 * return address is undefined (_start, a thread's clone3 start) or 0, or
 * in the dynamic loader's entry code (no CFI, %rbp/x29 zeroed: the ABI's
 * outermost frame, as the tracer's is_loader()). A frame reached by the
 * frame pointer must be code a module holds. Anything else stops the
 * walk, which says so (unreadable past there): never a frame that may be
 * wrong.
 *
 * The cache: a direct-mapped table of rules by pc, each entry under its
 * own sequence count (a seqlock whose writer only tries: a thread that
 * finds an entry being written neither waits nor writes, it uses the rule
 * it parsed). An entry holds the epoch it was parsed under, and a walk
 * reads the epoch once (one atomic load, no lock): the collector's dlclose
 * (dlclose.c) moves it before and after a module goes, so no rule of the
 * old module is used for whatever is mapped at its addresses since. An
 * unload that does not pass through dlclose (glibc's own, of iconv's
 * modules) is seen at the next rule parsed, by the loader's count of
 * unloads (dlpi_subs): the epoch moves and that walk starts again.
 * Loading modules needs no invalidation: an address that was in no module
 * has no entry.
 *
 * The walk keeps its registers in registers: the common frame (its rule
 * in the cache, CFA = sp or fp + n, the return address at CFA + n) is
 * stepped inline, a few loads from one cache line and one from the stack;
 * anything else goes through frame_slow().
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "ehframe.h"
#include "framestep.h"
#include "heapsnoop/arch.h"
#include "localstack.h"
#include "modcfi.h"
#include "pacmask.h"

uintptr_t localstack_self_start, localstack_self_end;
bool localstack_fp;
unsigned int localstack_snip_pre, localstack_snip_post;
uint64_t localstack_ra_mask = HS_RA_MASK;
_Atomic uint32_t localstack_epoch;

/* The rule cache: 32-byte entries, a power of two of them (128 KiB). */
#define CACHE_BITS 12
#define CACHE_SIZE (1u << CACHE_BITS)

struct entry {
	_Atomic uint32_t seq;		/* odd while written */
	_Atomic uint32_t epoch;		/* localstack_epoch when parsed */
	_Atomic uint64_t key;		/* pc << 1 | exact; 0: empty */
	_Atomic uint64_t rule[2];	/* rule_pack() */
};

static struct entry cache[CACHE_SIZE];
/* The loader's count of unloads when the epoch last moved for them. */
static _Atomic uint32_t seen_subs;
/* Per thread: a shared counter would be a cache line every walk fights for. */
static __thread uint64_t st_walks, st_parsed, st_evicted;

/*
 * A rule as the cache's two words, so that the walk reads its fields
 * with shifts from registers: cfa_off | (cfa_off + ra_off) << 32, and
 * (cfa_off + fp_off) | cfa_base << 32 | ra << 40 | fp << 48 | flags << 56.
 * The return address's and the frame pointer's offsets are from the CFA's
 * base register, not the CFA: the load of the return address then waits
 * on one add, not two.
 */
#define W_CFA_OFF(w0) ((intptr_t)(int32_t)(uint32_t)(w0))
#define W_RA_OFF(w0) ((intptr_t)(int32_t)(uint32_t)((w0) >> 32))
#define W_FP_OFF(w1) ((intptr_t)(int32_t)(uint32_t)(w1))
#define W_CFA_BASE(w1) ((uint8_t)((w1) >> 32))
#define W_FP(w1) ((uint8_t)((w1) >> 48))
#define W_FLAGS(w1) ((uint8_t)((w1) >> 56))

/* False: an offset from the base does not fit 32 bits (not cached). */
static bool rule_pack(const struct ls_rule *r, uint64_t w[2])
{
	int64_t ra = (int64_t)r->cfa_off + r->ra_off, fp = (int64_t)r->cfa_off + r->fp_off;

	if (ra != (int32_t)ra || fp != (int32_t)fp)
		return false;
	w[0] = (uint32_t)r->cfa_off | (uint64_t)(uint32_t)ra << 32;
	w[1] = (uint32_t)fp | (uint64_t)r->cfa_base << 32 | (uint64_t)r->ra << 40 |
	       (uint64_t)r->fp << 48 | (uint64_t)r->flags << 56;
	return true;
}

static void rule_unpack(const uint64_t w[2], struct ls_rule *r)
{
	r->cfa_off = (int32_t)W_CFA_OFF(w[0]);
	r->ra_off = (int32_t)(W_RA_OFF(w[0]) - r->cfa_off);
	r->fp_off = (int32_t)(W_FP_OFF(w[1]) - r->cfa_off);
	r->cfa_base = W_CFA_BASE(w[1]);
	r->ra = (uint8_t)(w[1] >> 40);
	r->fp = W_FP(w[1]);
	r->flags = W_FLAGS(w[1]);
}

/*
 * An entry by pc: its low bits folded with the next ones (a shift, an xor
 * and a mask on the walk's path from one frame to the next, where a
 * multiply would wait three cycles). A pc and the same pc exact share it.
 */
static inline struct entry *slot(uintptr_t pc)
{
	return &cache[(pc ^ pc >> CACHE_BITS) & (CACHE_SIZE - 1)];
}

/*
 * The cached rule of @key under @epoch into @w: a seqlock read (the
 * entry's count even and unchanged around the copy). False: not there.
 */
static inline bool cache_get(uintptr_t pc, uint64_t key, uint32_t epoch, uint64_t w[2])
{
	struct entry *e = slot(pc);
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_acquire);
	bool hit;

	hit = atomic_load_explicit(&e->key, memory_order_relaxed) == key &&
	      atomic_load_explicit(&e->epoch, memory_order_relaxed) == epoch;
	w[0] = atomic_load_explicit(&e->rule[0], memory_order_relaxed);
	w[1] = atomic_load_explicit(&e->rule[1], memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	return hit && !(s & 1) && atomic_load_explicit(&e->seq, memory_order_relaxed) == s;
}

/*
 * @w as @key's rule under @epoch, in place of what the entry held (counted
 * as evicted if that was another pc's rule of this epoch), unless the
 * entry is being written or the epoch moved on.
 */
static void cache_put(uintptr_t pc, uint64_t key, uint32_t epoch, const uint64_t w[2])
{
	struct entry *e = slot(pc);
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);

	if ((s & 1) || atomic_load_explicit(&localstack_epoch, memory_order_relaxed) != epoch ||
	    !atomic_compare_exchange_strong_explicit(&e->seq, &s, s + 1, memory_order_relaxed,
						     memory_order_relaxed))
		return;
	if (atomic_load_explicit(&e->epoch, memory_order_relaxed) == epoch &&
	    atomic_load_explicit(&e->key, memory_order_relaxed) &&
	    atomic_load_explicit(&e->key, memory_order_relaxed) != key)
		st_evicted++;
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&e->key, key, memory_order_relaxed);
	atomic_store_explicit(&e->epoch, epoch, memory_order_relaxed);
	atomic_store_explicit(&e->rule[0], w[0], memory_order_relaxed);
	atomic_store_explicit(&e->rule[1], w[1], memory_order_relaxed);
	atomic_store_explicit(&e->seq, s + 2, memory_order_release);
}

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint32_t *)arg = (uint32_t)info->dlpi_subs;
	return 1;
}

void localstack__unloading(void)
{
	atomic_fetch_add_explicit(&localstack_epoch, 1, memory_order_acq_rel);
}

void localstack__unloaded(void)
{
	uint32_t subs = 0;

	dl_iterate_phdr(first_object, &subs);
	atomic_store_explicit(&seen_subs, subs, memory_order_relaxed);
	/* Every rule parsed before an unload this count includes is forgotten. */
	atomic_fetch_add_explicit(&localstack_epoch, 1, memory_order_acq_rel);
}

struct find {
	uintptr_t pc;
	struct ls_module mod;
	uint32_t subs;
	bool found, loader, readable;
	/* The second pass, modcfi's: the rule of @addr into *@r, its answer in @err. */
	bool index;
	uintptr_t addr;
	struct ls_rule *r;
	int err;
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
	/* Under the loader's lock, as modcfi's tables want. */
	if (f->index)
		f->err = modcfi__rule(info, f->mod.hdr != NULL, f->addr, f->pc, f->r);
	return 1;
}

/* rule_parse()'s answers */
enum parsed {
	PARSED,		/* the rule is in *r */
	PARSED_NONE,	/* the pc is in no module */
	PARSED_AGAIN,	/* a module was unloaded unseen: walk again */
};

/*
 * The cache's miss: the rule of @f's pc parsed from its module's CFI,
 * kept in the cache unless the epoch moved since the walk began (@epoch).
 * An unload the collector's dlclose did not see (the loader's count moved
 * past seen_subs) moves the epoch here, and the walk starts again.
 */
static __attribute__((noinline)) enum parsed rule_parse(const struct frame *f, uint32_t epoch,
							 struct ls_rule *r)
{
	struct find fd = { .pc = f->pc };
	uintptr_t addr = f->exact ? f->pc : f->pc - 1;
	bool keep = true;
	uint64_t w[2];
	uint32_t seen;
	int err;

	st_parsed++;
	dl_iterate_phdr(find_module, &fd);
	seen = atomic_load_explicit(&seen_subs, memory_order_relaxed);
	if ((int32_t)(fd.subs - seen) > 0) {
		if (atomic_compare_exchange_strong(&seen_subs, &seen, fd.subs))
			atomic_fetch_add_explicit(&localstack_epoch, 1, memory_order_acq_rel);
		return PARSED_AGAIN;
	}
	if (!fd.found)
		return PARSED_NONE;
	memset(r, 0, sizeof(*r));
	err = fd.mod.hdr ? ehframe__rule(&fd.mod, addr, f->pc, r) : -ENOENT;
	if (err == -ENOENT) {
		/* No .eh_frame_hdr, or no FDE in it: modcfi's indexes, once more under the lock. */
		fd = (struct find){ .pc = f->pc, .index = true, .addr = addr, .r = r, .err = -ENOENT };
		dl_iterate_phdr(find_module, &fd);
		err = fd.err;
		if (err == -EBUSY) {
			keep = false;
			err = -ENOENT;
		}
	}
	if (err == -ENOENT) {
		r->flags = LS_RULE_NOFDE | (fd.loader ? LS_RULE_LOADER : 0);
		if (fd.readable && framestep__is_sigreturn(f->pc))
			r->flags |= LS_RULE_SIGRETURN;
	} else if (err) {
		r->flags = LS_RULE_BAD;	/* malformed CFI */
	}
	if (keep && rule_pack(r, w))
		cache_put(f->pc, (uint64_t)f->pc << 1 | f->exact, epoch, w);
	return PARSED;
}

/*
 * This function's own registers, at the label in the asm; on arm64 x30
 * too, which this pc's CFI reads where the prologue has not saved it (it
 * says where x30 is at this pc, whichever way the compiler wrapped it).
 */
#if defined(__x86_64__)
#define GET_REGS(f)                                                                   \
	__asm__ volatile("lea 1f(%%rip), %0\n1:\n\tmov %%rsp, %1\n\tmov %%rbp, %2"     \
			 : "=r"((f).pc), "=r"((f).sp), "=r"((f).fp))
#define WF_LR_KNOWN 0
#else
#define GET_REGS(f)                                                                   \
	__asm__ volatile("adr %0, 1f\n1:\n\tmov %1, sp\n\tmov %2, x29\n\tmov %3, x30" \
			 : "=r"((f).pc), "=r"((f).sp), "=r"((f).fp), "=r"((f).lr))
#define WF_LR_KNOWN WF_LR_OK
#endif

/*
 * A frame the inline step does not take (its rule not cached, or not
 * plain): its rule, cached (@hit: @w0, @w1) or parsed, then the step it
 * says. @first: the walk's own frame. STEP_NONE: the pc is in no module,
 * not to be recorded.
 */
static __attribute__((noinline)) enum step frame_slow(struct frame *f, bool hit, uint64_t w0,
						       uint64_t w1, uint32_t epoch, bool first)
{
	const uint64_t w[2] = { w0, w1 };
	struct ls_rule r;

	if (hit) {
		rule_unpack(w, &r);
	} else {
		switch (rule_parse(f, epoch, &r)) {
		case PARSED_AGAIN:
			return STEP_AGAIN;
		case PARSED_NONE:
			/* JIT code, or not code at all: a frame reached by rule only. */
			if (f->by_fp || first)
				return STEP_NONE;
			f->by_fp = true;
			return framestep__fp(f);
		case PARSED:
			break;
		}
	}
#if defined(__aarch64__)
	/*
	 * Past a frame record the caller's sp is only bounded (fp + 16,
	 * framestep__fp()): a rule whose CFA is from sp would read the wrong
	 * slot. x29 vouches for the frame where its rule saves x29 and x30
	 * as a frame record (x29 at CFA + k, x30 at CFA + k + 8: code that
	 * keeps frame pointers, AAPCS64 6.2.3, where x29 points at that
	 * record), so CFA = x29 - k, and the sp from it; code without frame
	 * pointers saves x30 alone and leaves x29 at an outer record: the
	 * walk stops there. A CFA from x29 needs nothing more; code without
	 * CFI is stepped by its record again.
	 */
	if (f->by_fp && !(r.flags & (LS_RULE_NOFDE | LS_RULE_BAD)) && r.cfa_base != LS_BASE_FP) {
		uintptr_t cfa = f->fp - (intptr_t)r.fp_off;

		if (r.fp != LS_LOC(LS_AT, LS_BASE_CFA) || r.ra != LS_LOC(LS_AT, LS_BASE_CFA) ||
		    r.ra_off != r.fp_off + 8 || !f->fp_ok || (r.flags & LS_RULE_CFA_DEREF) ||
		    cfa - (intptr_t)r.cfa_off < f->sp)
			return STEP_FAIL;
		f->sp = cfa - (intptr_t)r.cfa_off;
	}
#endif
	f->by_fp = false;
	if (!(r.flags & (LS_RULE_NOFDE | LS_RULE_BAD)))
		return framestep__rule(&r, f);
	if (r.flags & LS_RULE_SIGRETURN)
		return framestep__sigreturn(f);
	if (r.flags & LS_RULE_LOADER && f->fp_ok && !f->fp)
		return STEP_END;
	if (r.flags & LS_RULE_NOFDE) {
		f->by_fp = true;
		return framestep__fp(f);
	}
	return STEP_FAIL;
}

/* Walks begun again at most, when modules were unloaded unseen meanwhile. */
#define WALK_AGAIN_MAX 4

/* The walk's flags, a struct frame's booleans in one register. */
#define WF_FP_OK (1u << 0)
#define WF_LR_OK (1u << 1)
#define WF_EXACT (1u << 2)
#define WF_BY_FP (1u << 3)
/* The flags the inline step leaves to frame_slow(): arm64's frame-record chain. */
#if defined(__aarch64__)
#define WF_SLOW WF_BY_FP
#else
#define WF_SLOW 0u
#endif

__attribute__((noinline)) int localstack__walk(void **ip, int max, bool *broken)
{
	struct frame f0 = { 0 };
	void **out, **end = ip + (max > 0 ? max : 0);
	uintptr_t pc, sp, fp, lr;
	unsigned int again = 0, fl;
	uint32_t epoch;

	st_walks++;
walk:
	GET_REGS(f0);
	pc = f0.pc;
	sp = f0.sp;
	fp = f0.fp;
	lr = f0.lr;
	fl = WF_FP_OK | WF_EXACT | WF_LR_KNOWN;
	out = ip;
	*broken = false;
	epoch = atomic_load_explicit(&localstack_epoch, memory_order_acquire);
	while (out < end) {
		uint64_t key = (uint64_t)pc << 1 | !!(fl & WF_EXACT), w[2];
		bool hit = cache_get(pc, key, epoch, w);
		uintptr_t base, cfa, ra_at, fp_at;
		struct frame f;
		enum step s;

		*out++ = (void *)pc;
		/* The common frame, inline: framestep__rule()'s plain case in registers. */
		if (__builtin_expect(hit && W_FLAGS(w[1]) == LS_RULE_PLAIN && !(fl & WF_SLOW) &&
				     (W_CFA_BASE(w[1]) != LS_BASE_FP || (fl & WF_FP_OK)), 1)) {
			if (out == end)
				return (int)(out - ip);
			base = W_CFA_BASE(w[1]) == LS_BASE_FP ? fp : sp;
			cfa = base + W_CFA_OFF(w[0]);
			ra_at = base + W_RA_OFF(w[0]);
			if (cfa <= sp || ra_at < sp || (ra_at & 7))
				break;
			fl &= WF_FP_OK;
			if (W_FP(w[1]) == LS_LOC(LS_AT, LS_BASE_CFA)) {
				fp_at = base + W_FP_OFF(w[1]);
				if (fp_at < sp || (fp_at & 7))
					break;
				fp = *(const uintptr_t *)fp_at;
				fl = WF_FP_OK;
			}
			pc = *(const uintptr_t *)ra_at & LS_RA_MASK;
			lr = pc;
			fl |= WF_LR_OK;
			sp = cfa;
			if (!pc)
				return (int)(out - ip);
			continue;
		}
		/* Anything else: out of line, on a struct frame. */
		f = (struct frame){ pc, sp, fp, lr, fl & WF_FP_OK, fl & WF_LR_OK, fl & WF_EXACT,
				    fl & WF_BY_FP };
		s = frame_slow(&f, hit, w[0], w[1], epoch, out == ip + 1);
		if (s == STEP_AGAIN && ++again < WALK_AGAIN_MAX)
			goto walk;
		if (s == STEP_AGAIN || s == STEP_NONE) {
			out--;
			break;
		}
		if (out == end || s == STEP_END)
			return (int)(out - ip);
		if (s == STEP_FAIL || (f.pc == pc && f.sp == sp))
			break;
		pc = f.pc;
		sp = f.sp;
		fp = f.fp;
		lr = f.lr;
		fl = (f.fp_ok ? WF_FP_OK : 0) | (f.lr_ok ? WF_LR_OK : 0) | (f.exact ? WF_EXACT : 0) |
		     (f.by_fp ? WF_BY_FP : 0);
	}
	*broken = out < end;
	return (int)(out - ip);
}

void localstack__stats(struct localstack_stats *st)
{
	st->walks = st_walks;
	st->parsed = st_parsed;
	st->evicted = st_evicted;
	st->epochs = atomic_load(&localstack_epoch);
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

void localstack__init(bool use_fp, unsigned int snip_pre, unsigned int snip_post)
{
	uint32_t subs = 0;

	localstack_fp = use_fp;
	localstack_ra_mask = pacmask__detect(NULL);
	localstack_snip_pre = snip_pre < LOCALSTACK_SNIP_MAX ? snip_pre : LOCALSTACK_SNIP_MAX;
	localstack_snip_post = snip_post < LOCALSTACK_SNIP_MAX ? snip_post : LOCALSTACK_SNIP_MAX;
	dl_iterate_phdr(find_self, (void *)(uintptr_t)localstack__init);
	/* Unloads before the collector began are no news to its empty cache. */
	dl_iterate_phdr(first_object, &subs);
	atomic_store(&seen_subs, subs);
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
