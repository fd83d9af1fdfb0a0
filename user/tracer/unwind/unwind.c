// SPDX-License-Identifier: MIT
/* unwind.c - CFI unwinding of a copied user stack (see unwind.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind.h"

/*
 * What a return address leads to: its mapping, module and CFI row, so
 * that a frame seen before costs one look-up, not three (the mapping's
 * binary search, the module's file identity, the rule cache). Valid while
 * the set it came from keeps its generation.
 */
struct pc_entry {
	const struct mapset *pm;
	uint64_t gen;
	uint64_t pc;
	const struct mapping *m;
	struct cfi_module *mod;
	uint64_t off;		/* @pc's file offset in @m */
	int err;		/* cfi_cache__rule()'s, or -ENOENT without a module */
	struct cfi_rule rule;
};

#define PC_CACHE 4096	/* entries, a power of two */

struct unwinder {
	struct cfi_cache *cfi;
	struct unwind_stats st;
	struct pc_entry pcs[PC_CACHE];
};

/* The copy of the stack: [base, base + size) of the process. */
struct stack_copy {
	uint64_t base;		/* the address of data[0] */
	uint32_t size;
	uint32_t holes;		/* bit i: page i of data was not there */
	bool cut;		/* the stack went on past the copy */
	const uint8_t *data;
};

/* One frame's registers (DWARF numbering); @known: bitmask of those set. */
struct regs {
	uint64_t v[CFI_NREGS];
	uint32_t known;
};

enum step {
	STEP_OK,	/* the caller's frame is in @r */
	STEP_END,	/* this was the outermost frame */
	STEP_CUT,	/* the caller's frame is past the copy */
	STEP_FAIL,	/* no way to the caller */
};

#define BIT(reg) (1u << (reg))
/* Bytes of a stack copy asked for ahead of the walk (a few frames' worth). */
#define UNWIND_PREFETCH 4096

struct unwinder *unwinder__new(void)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->cfi = cfi_cache__new();
	if (!u->cfi) {
		free(u);
		return NULL;
	}
	return u;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	cfi_cache__free(u->cfi);
	free(u);
}

static int read_stack(void *ctx, uint64_t addr, uint64_t *val)
{
	const struct stack_copy *s = ctx;

	uint64_t off = addr - s->base;

	if (addr < s->base || s->size < 8 || off > s->size - 8)
		return -EFAULT;
	/* A page the copy could not read: zeros, not the stack's. */
	if (s->holes && ((s->holes >> (off / HS_PAGE_SIZE)) & 1 ||
			 (s->holes >> ((off + 7) / HS_PAGE_SIZE)) & 1))
		return -EFAULT;
	memcpy(val, s->data + off, sizeof(*val));
	return 0;
}

/* A read outside the copy: past its end because it was cut, or garbage. */
static enum step missed(const struct stack_copy *s, uint64_t addr)
{
	return s->cut && addr >= s->base + s->size ? STEP_CUT : STEP_FAIL;
}

/* One step by a row whose CFA and registers are expressions. */
static enum step step_slow(struct unwinder *u, struct cfi_module *mod, uint64_t off,
			   const struct stack_copy *s, struct regs *r)
{
	uint64_t cfa, caller[CFI_NREGS];
	uint32_t known;
	int err;

	err = cfi_module__eval_frame(mod, off, r->v, r->known, read_stack, (void *)s, &cfa,
				     caller, &known);
	if (err == -EFAULT)
		return missed(s, cfa);
	if (err)
		return STEP_FAIL;
	u->st.slow_frames++;
	if (!(known & BIT(CFI_REG_RA)))
		return STEP_END;
	if (cfa <= r->v[CFI_REG_SP])
		return STEP_FAIL;
	memcpy(r->v, caller, sizeof(caller));
	r->v[CFI_REG_RA] &= HS_RA_MASK;
	r->known = known;
	return STEP_OK;
}

/*
 * One step by a compact rule (nearly every row), in place: the caller's
 * registers are computed into @v first (a rule reads the callee's), then
 * stored; the others keep stale values, which @r->known says are unknown
 * (no zeroing of the whole register file per frame: it was a sixth of
 * the loader's time, rep stos).
 */
static enum step step_rule(struct unwinder *u, struct cfi_module *mod, uint64_t off,
			   const struct cfi_rule *rule, const struct stack_copy *s,
			   struct regs *r)
{
	uint32_t known = BIT(CFI_REG_SP);
	uint64_t cfa, v[CFI_RULE_REGS];

	if (rule->slow)
		return step_slow(u, mod, off, s, r);
	if (!(r->known & BIT(rule->cfa_reg)))
		return STEP_FAIL;
	cfa = r->v[rule->cfa_reg] + (int64_t)rule->cfa_off;
	if (rule->kind[0] == CFI_UNDEF)
		return STEP_END;
	if (cfa <= r->v[CFI_REG_SP])
		return STEP_FAIL;
	for (int i = 0; i < CFI_RULE_REGS; i++) {
		int reg = cfi_rule_regs[i];
		uint64_t addr = cfa + (int64_t)rule->off[i];

		switch (rule->kind[i]) {
		case CFI_SAME:
			if (r->known & BIT(reg)) {
				v[i] = r->v[reg];
				known |= BIT(reg);
			}
			break;
		case CFI_AT:
			if (read_stack((void *)s, addr, &v[i]) == 0)
				known |= BIT(reg);
			else if (reg == CFI_REG_RA)
				return missed(s, addr);
			break;
		case CFI_VAL:
			v[i] = addr;
			known |= BIT(reg);
			break;
		default:
			break;
		}
	}
	if (!(known & BIT(CFI_REG_RA)))
		return STEP_FAIL;
	for (int i = 0; i < CFI_RULE_REGS; i++) {
		if (known & BIT(cfi_rule_regs[i]))
			r->v[cfi_rule_regs[i]] = v[i];
	}
	r->v[CFI_REG_SP] = cfa;
	/* arm64: a return address signed by PAC, its signature off. */
	r->v[CFI_REG_RA] &= HS_RA_MASK;
	r->known = known;
	return STEP_OK;
}

/*
 * The process's mappings during one walk: read again once, the first time
 * an address falls in none of them (a module mapped, or JIT code made,
 * since they were read).
 */
struct walk_maps {
	unwind_maps_fn fn;
	void *ctx;
	const struct mapset *pm;
	bool refreshed;
};

static const struct mapping *walk_find(struct walk_maps *w, uint64_t addr)
{
	const struct mapping *m = w->pm ? mapset__find(w->pm, addr) : NULL;

	if (m || w->refreshed)
		return m;
	w->refreshed = true;
	w->pm = w->fn(w->ctx, true);
	return w->pm ? mapset__find(w->pm, addr) : NULL;
}

/*
 * One step by the frame pointer, where there is no CFI: it points at the
 * frame record, the saved frame pointer and the return address above it
 * (x86-64's %rbp, arm64's x29). The return address must be in an
 * executable mapping, a file's or JIT code's (anonymous), or the register
 * was not a frame pointer.
 */
static enum step step_fp(struct unwinder *u, struct walk_maps *w, const struct stack_copy *s,
			 struct regs *r)
{
	uint64_t bp = r->v[CFI_REG_FP], saved, ra;
	const struct mapping *m;

	if (!(r->known & BIT(CFI_REG_FP)) || !bp || (bp & 7) || bp < r->v[CFI_REG_SP])
		return STEP_FAIL;
	if (read_stack((void *)s, bp, &saved) || read_stack((void *)s, bp + 8, &ra))
		return missed(s, bp + 8);
	ra &= HS_RA_MASK;
	if (!ra)
		return STEP_END;
	m = walk_find(w, ra - 1);
	if (!m)
		return STEP_FAIL;
	if (m->flags & MAPPING_ANON)
		u->st.jit_frames++;
	r->v[CFI_REG_FP] = saved;
	r->v[CFI_REG_RA] = ra;
	r->v[CFI_REG_SP] = ARCH_FP_RECORD_SP(bp);
	r->known = BIT(CFI_REG_FP) | BIT(CFI_REG_RA) | BIT(CFI_REG_SP);
	u->st.fp_frames++;
	return STEP_OK;
}

/*
 * Is @m the dynamic loader (ld-linux-x86-64.so.2, ld-linux-aarch64.so.1,
 * ld-musl-*)? Its entry code (glibc's RTLD_START: _start, _dl_start_user)
 * has no CFI and zeroes the frame pointer (%rbp, x29) before calling the
 * constructors, the ABI's mark of the outermost frame: a stack that
 * reaches it there is complete.
 */
static bool is_loader(const struct mapping *m)
{
	const char *base = m && m->path ? strrchr(m->path, '/') : NULL;

	base = base ? base + 1 : m && m->path ? m->path : "";
	return !strncmp(base, "ld-linux", 8) || !strncmp(base, "ld-musl", 7);
}

/*
 * The cache entry of return address @pc in process @pid's mappings @pm,
 * looked up and filled on a miss; NULL when @pc is in none of them.
 */
static const struct pc_entry *pc_lookup(struct unwinder *u, pid_t pid,
					const struct mapset *pm, uint64_t pc)
{
	struct pc_entry *e = &u->pcs[(pc * 0x9e3779b97f4a7c15ULL) >> 52 & (PC_CACHE - 1)];
	const struct mapping *m;

	if (!pm)
		return NULL;
	if (e->pm == pm && e->gen == pm->gen && e->pc == pc)
		return e;
	m = mapset__find(pm, pc);
	if (!m)
		return NULL;
	e->pm = pm;
	e->gen = pm->gen;
	e->pc = pc;
	e->m = m;
	e->mod = cfi_cache__module(u->cfi, pid, m);
	e->off = pc - m->start + m->offset;
	e->err = e->mod ? cfi_cache__rule(u->cfi, e->mod, e->off, &e->rule) : -ENOENT;
	return e;
}

int unwind__stack(struct unwinder *u, pid_t pid, unwind_maps_fn maps, void *ctx,
		  const struct hs_user_stack *us, size_t len, uint64_t *frames, unsigned int max,
		  uint32_t *flags)
{
	return unwind__stack_grab(u, pid, maps, ctx, us, len, frames, max, flags, NULL);
}

int unwind__stack_grab(struct unwinder *u, pid_t pid, unwind_maps_fn maps, void *ctx,
		       const struct hs_user_stack *us, size_t len, uint64_t *frames,
		       unsigned int max, uint32_t *flags, struct unwind_grab *grab)
{
	struct walk_maps w = { .fn = maps, .ctx = ctx, .pm = maps(ctx, false) };
	struct stack_copy s;
	struct regs r = { 0 };
	unsigned int n = 0;
	enum step step;

	*flags = 0;
	if (len < sizeof(*us) || us->size > len - sizeof(*us) || us->skip > us->size ||
	    us->skip >= HS_PAGE_SIZE || !max)
		return -EINVAL;
	s = (struct stack_copy){ .base = us->regs[HS_UREG_SP] - us->skip, .size = us->size,
				 .holes = us->holes, .cut = us->size - us->skip < us->want,
				 .data = us->data };
	for (int i = 0; i < HS_UREG__MAX; i++) {
		r.v[arch_ureg_dwarf[i]] = us->regs[i];
		r.known |= BIT(arch_ureg_dwarf[i]);
	}
	/*
	 * The copy was written by another CPU into the ring buffer: its lines
	 * are not in this one's cache, and each step's read depends on the
	 * last one's. Asking for the first lines at once overlaps the misses
	 * instead of taking them one after another.
	 */
	for (uint32_t off = 0; off < us->size && off < UNWIND_PREFETCH; off += 64)
		__builtin_prefetch(us->data + off);
	frames[n++] = r.v[CFI_REG_RA];
	u->st.stacks++;
	if (us->skip || us->holes) {
		u->st.paged++;
		u->st.holes += (uint64_t)__builtin_popcount(us->holes);
	}
	for (;;) {
		/* A return address is after its call: look up the call. */
		uint64_t pc = r.v[CFI_REG_RA] - (n > 1);
		const struct pc_entry *e = pc_lookup(u, pid, w.pm, pc);

		if (!e && !w.refreshed) {
			w.refreshed = true;
			w.pm = maps(ctx, true);
			e = pc_lookup(u, pid, w.pm, pc);
		}
		if (e && !e->err)
			step = step_rule(u, e->mod, e->off, &e->rule, &s, &r);
		else if (is_loader(e ? e->m : NULL) && (r.known & BIT(CFI_REG_FP)) && !r.v[CFI_REG_FP])
			step = STEP_END;
		else
			step = step_fp(u, &w, &s, &r);
		if (step == STEP_OK && !r.v[CFI_REG_RA])
			step = STEP_END;
		if (step != STEP_OK)
			break;
		if (n == max) {
			*flags |= UNWIND_DEPTH;
			break;
		}
		frames[n++] = r.v[CFI_REG_RA];
		u->st.frames++;
		if (grab && !grab->found && r.v[CFI_REG_RA] - 1 >= grab->lo &&
		    r.v[CFI_REG_RA] - 1 < grab->hi) {
			memcpy(grab->regs, r.v, sizeof(grab->regs));
			grab->known = r.known;
			grab->found = true;
		}
	}
	if (step == STEP_CUT)
		*flags |= UNWIND_CUT;
	else if (step == STEP_FAIL)
		*flags |= UNWIND_FAULT;
	if (*flags & UNWIND_CUT)
		u->st.cut++;
	else if (*flags & UNWIND_DEPTH)
		u->st.depth++;
	else if (*flags & UNWIND_FAULT)
		u->st.fault++;
	else
		u->st.complete++;
	return (int)n;
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *st, struct cfi_stats *cst)
{
	*st = u->st;
	cfi_cache__stats(u->cfi, cst);
}
