// SPDX-License-Identifier: MIT
/* unwind/unwind.c - CFI unwinding of a copied user stack (see unwind.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pacmask.h"
#include "unwind/unwind.h"

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
	/* Above the copy: the record's tail's words, checked in place by the program. */
	const struct unwind_tail *tail;
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
/* Bytes of a stack copy loaded ahead of the walk. */
#define UNWIND_PREFETCH 16384

/* Load a word of each line of @p's first @n bytes, each load on its own. */
static void touch_lines(const uint8_t *p, uint32_t n)
{
	uint64_t sum = 0;

	for (uint32_t off = 0; off < n; off += 64)
		sum += *(const volatile uint64_t *)(p + off);
	__asm__ volatile("" : : "r"(sum));
}

/*
 * arm64: a return address's address bits (pacmask.h: the CPU's, one for
 * every process of the machine), set by the first unwinder made.
 */
static uint64_t ra_mask = HS_RA_MASK;

struct unwinder *unwinder__new(const struct cfi_src *src)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	ra_mask = pacmask__detect(NULL);
	u->cfi = cfi_cache__new(src);
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

	if (addr < s->base || s->size < 8 || off > s->size - 8) {
		/* A word of the record's tail: its value is the one checked. */
		for (uint32_t i = 0; s->tail && i < s->tail->nwords; i++) {
			if (s->tail->start + s->tail->words[i].off == addr) {
				*val = s->tail->words[i].val;
				return 0;
			}
		}
		return -EFAULT;
	}
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
	r->v[CFI_REG_RA] &= ra_mask;
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
	r->v[CFI_REG_RA] &= ra_mask;
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
	ra &= ra_mask;
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

/* --- stack tails (unwind.h's struct unwind_tail) ------------------------ */

/*
 * Where a tail may start: the first frame whose CFA is at least this far
 * above the lowest start wanted (a little above the allocation's stack
 * pointer, or as high as the thread's recent stacks went: unwind_req's
 * hint), the nearest first; a tail whose check would read more than
 * HS_TAIL_WORDS words is tried further out.
 */
static const uint32_t tail_top[] = { 0, 4096, 16384, 65536 };
#define TAIL_CANDIDATES (sizeof(tail_top) / sizeof(tail_top[0]))
/* Bytes above the stack pointer a tail starts at the lowest. */
#define TAIL_LOW 1024
/* A stack smaller than this costs little to copy whole: no tail. */
#define TAIL_MIN_STACK 8192
/* A tail of fewer frames saves less than its check costs. */
#define TAIL_MIN_FRAMES 4

/* A frame the walk might start a tail at: its state there. */
struct boundary {
	struct regs r;
	unsigned int n;		/* frames before it, the state's RA the last */
};

/* How one step of a tail's replay went: what its result depends on. */
enum tstep_kind { TS_RULE, TS_FP, TS_END_RULE, TS_END_LOADER };

struct tstep {
	uint8_t kind;
	struct cfi_rule rule;	/* TS_RULE */
	uint64_t cfa;		/* TS_RULE: the CFA; TS_FP: the frame record's address */
	struct regs in;		/* the state it stepped from */
	uint32_t need;		/* ... the registers of it the tail's frames from there need */
};

/* Mark the word at @addr needed (its value from the copy); false if it cannot be. */
static bool need_word(struct unwind_tail *t, const struct stack_copy *s, uint64_t addr)
{
	uint64_t v;

	if (addr < t->start || addr - t->start > UINT32_MAX || read_stack((void *)s, addr, &v))
		return false;
	for (uint32_t i = 0; i < t->nwords; i++)
		if (t->start + t->words[i].off == addr)
			return true;
	if (t->nwords == HS_TAIL_WORDS)
		return false;
	t->words[t->nwords++] = (struct hs_tail_word){ .off = (uint32_t)(addr - t->start),
						       .val = v };
	return true;
}

/*
 * What the tail's frames depend on, backward from its last step: each
 * step needs its CFA's register, and of the registers it gives its caller
 * those the steps after it need, the return address always (a frame, and
 * the next step's rule); a register saved on the stack needs its word.
 * What the first step needs is the state at the tail's start. False when
 * the check would read more than HS_TAIL_WORDS words.
 */
static bool tail_needs(struct unwind_tail *t, struct tstep *ts, unsigned int nts,
		       const struct stack_copy *s)
{
	uint32_t live = 0;

	for (unsigned int j = nts; j-- > 0;) {
		struct tstep *x = &ts[j];
		uint32_t out = live | BIT(CFI_REG_RA), in = 0;

		switch (x->kind) {
		case TS_RULE:
			in |= BIT(x->rule.cfa_reg);
			for (int i = 0; i < CFI_RULE_REGS; i++) {
				int reg = cfi_rule_regs[i];

				if (!(out & BIT(reg)))
					continue;
				if (x->rule.kind[i] == CFI_SAME)
					in |= BIT(reg);
				else if (x->rule.kind[i] == CFI_AT &&
					 !need_word(t, s, x->cfa + (int64_t)x->rule.off[i]))
					return false;
			}
			break;
		case TS_FP:
			/* The record at the frame pointer: the caller's FP, then the RA. */
			in |= BIT(CFI_REG_FP);
			if (!need_word(t, s, x->cfa + 8) ||
			    ((out & BIT(CFI_REG_FP)) && !need_word(t, s, x->cfa)))
				return false;
			break;
		case TS_END_LOADER:
			in |= BIT(CFI_REG_FP);	/* 0 there: the outermost frame */
			break;
		default:	/* TS_END_RULE: the rule, by the pc, its CFA's register known */
			in |= BIT(x->rule.cfa_reg);
			break;
		}
		/* The stack pointer is the state's own place and the RA its pc: checked apart. */
		x->need = in & ~(BIT(CFI_REG_SP) | BIT(CFI_REG_RA));
		if (x->need & ~x->in.known)
			return false;
		live = in;
	}
	return true;
}

/*
 * The tail from @b on: the walk again from that state over the same copy,
 * each step noted, to the stack's end; then what it depends on. NULL when
 * there is none worth having (too short, a step by an expression, more
 * words than a check reads, no memory).
 */
static struct unwind_tail *tail_from(struct unwinder *u, pid_t pid, const struct mapset *pm,
				     const struct stack_copy *s, const struct boundary *b,
				     unsigned int max, struct tstep *ts, uint64_t *tf)
{
	struct walk_maps w = { .pm = pm, .refreshed = true };
	struct regs r = b->r;
	struct unwind_tail *t;
	unsigned int nts = 0, nf = 0, nvals = 0;
	enum step step;
	size_t size;
	uint64_t *vals;

	for (;;) {
		const struct pc_entry *e = pc_lookup(u, pid, pm, r.v[CFI_REG_RA] - 1);
		struct tstep *x = &ts[nts];

		if (nts == max)
			return NULL;
		x->in = r;
		if (e && !e->err) {
			if (e->rule.slow)
				return NULL;
			step = step_rule(u, e->mod, e->off, &e->rule, s, &r);
			x->kind = step == STEP_END ? TS_END_RULE : TS_RULE;
			x->rule = e->rule;
			x->cfa = r.v[CFI_REG_SP];
		} else if (is_loader(e ? e->m : NULL) && (r.known & BIT(CFI_REG_FP)) &&
			   !r.v[CFI_REG_FP]) {
			x->kind = TS_END_LOADER;
			step = STEP_END;
		} else {
			x->kind = TS_FP;
			x->cfa = r.v[CFI_REG_FP];
			step = step_fp(u, &w, s, &r);
		}
		nts++;
		if (step == STEP_OK && !r.v[CFI_REG_RA])
			step = STEP_END;
		if (step == STEP_END)
			break;
		if (step != STEP_OK || b->n + nf == max)
			return NULL;	/* cut, or deeper than kept: no tail */
		tf[nf++] = r.v[CFI_REG_RA];
	}
	if (nf < TAIL_MIN_FRAMES)
		return NULL;
	/* The states the tail's frames can be taken up at: all but the last step's output. */
	size = sizeof(*t) + nf * (sizeof(*t->frames) + sizeof(*t->state_sp) +
				  sizeof(*t->state_need) + sizeof(*t->state_val));
	t = calloc(1, size + 8 + nts * CFI_NREGS * sizeof(uint64_t));
	if (!t)
		return NULL;
	t->pid = pid;
	t->start = b->r.v[CFI_REG_SP];
	t->ra = b->r.v[CFI_REG_RA];
	t->first_by_rule = ts[0].kind == TS_RULE;
	t->first_rule = ts[0].rule;
	if (!tail_needs(t, ts, nts, s)) {
		free(t);
		return NULL;
	}
	t->regs_need = ts[0].need;
	for (int reg = 0; reg < CFI_NREGS; reg++)
		if (t->regs_need & BIT(reg))
			t->regs[reg] = b->r.v[reg];
	t->nframes = nf;
	memcpy(t->frames, tf, nf * sizeof(*tf));
	t->state_sp = (uint64_t *)(t->frames + nf);
	t->state_need = (uint32_t *)(t->state_sp + nf);
	t->state_val = (uint32_t *)(t->state_need + nf);
	vals = (uint64_t *)(((uintptr_t)(t->state_val + nf) + 7) & ~(uintptr_t)7);
	t->vals = vals;
	/* State j: the stack pointer and RA step j starts from, frames[j...] after it. */
	for (unsigned int j = 0; j < nf; j++) {
		t->state_sp[j] = ts[j].in.v[CFI_REG_SP];
		t->state_need[j] = ts[j].need;
		t->state_val[j] = nvals;
		for (int reg = 0; reg < CFI_NREGS; reg++)
			if (ts[j].need & BIT(reg))
				vals[nvals++] = ts[j].in.v[reg];
	}
	return t;
}

/* A tail for the thread's next stacks: the nearest boundary that makes one. */
static struct unwind_tail *tail_build(struct unwinder *u, pid_t pid, const struct mapset *pm,
				      const struct stack_copy *s, const struct boundary *b,
				      unsigned int nb, unsigned int max)
{
	struct tstep *ts = malloc(max * sizeof(*ts));
	uint64_t *tf = malloc(max * sizeof(*tf));
	struct unwind_stats st = u->st;	/* the replay's steps are not counted again */
	struct unwind_tail *t = NULL;

	for (unsigned int i = 0; ts && tf && i < nb && !t; i++)
		t = tail_from(u, pid, pm, s, &b[i], max, ts, tf);
	free(ts);
	free(tf);
	u->st = st;
	if (t)
		u->st.tails_built++;
	return t;
}

/*
 * The walk at the record's tail's start, in state @r with @n frames: in
 * the state the tail was taken in, its frames follow; else the stack is
 * cut there. Returns the frames in all.
 */
/* Is @a the same rule as @b, field by field (no padding compared)? */
static bool same_rule(const struct cfi_rule *a, const struct cfi_rule *b)
{
	return a->cfa_reg == b->cfa_reg && a->cfa_off == b->cfa_off && a->slow == b->slow &&
	       !memcmp(a->kind, b->kind, sizeof(a->kind)) && !memcmp(a->off, b->off, sizeof(a->off));
}

/*
 * The walk in state @r, at or above its record's tail's start: if it is
 * one of the tail's states (its stack pointer, its RA, the registers the
 * rest needs), the tail's frames from there follow; true once spliced.
 * A frame that straddled the start (its caller's stack pointer differs
 * between two of its call sites) is walked on through the copy's overlap
 * and the tail's checked words to the next state.
 */
static bool tail_splice(struct unwinder *u, pid_t pid, const struct mapset *pm,
			const struct unwind_tail *t, const struct regs *r, uint64_t *frames,
			unsigned int *n, unsigned int max, struct unwind_res *rs)
{
	uint32_t lo = 0, hi = t->nframes, j, k, need;
	const uint64_t *val;

	while (lo < hi) {
		j = (lo + hi) / 2;
		if (t->state_sp[j] < r->v[CFI_REG_SP])
			lo = j + 1;
		else
			hi = j;
	}
	j = lo;
	if (j == t->nframes || t->state_sp[j] != r->v[CFI_REG_SP] || !(r->known & BIT(CFI_REG_RA)))
		return false;
	need = t->state_need[j];
	val = t->vals + t->state_val[j];
	if ((r->known & need) != need)
		return false;
	for (int reg = 0; reg < CFI_NREGS; reg++)
		if ((need & BIT(reg)) && r->v[reg] != *val++)
			return false;
	/* Its pc: the tail's; or at its first state, another call site by the same rule. */
	if (r->v[CFI_REG_RA] != (j ? t->frames[j - 1] : t->ra)) {
		const struct pc_entry *e = j ? NULL : pc_lookup(u, pid, pm, r->v[CFI_REG_RA] - 1);

		if (!t->first_by_rule || !e || e->err || !same_rule(&e->rule, &t->first_rule))
			return false;
	}
	if (*n < max)
		frames[(*n)++] = r->v[CFI_REG_RA];
	k = t->nframes - j < max - *n ? t->nframes - j : max - *n;
	memcpy(frames + *n, t->frames + j, k * sizeof(*frames));
	*n += k;
	rs->flags |= t->flags;
	if (k < t->nframes - j)
		rs->flags |= UNWIND_DEPTH;
	rs->spliced = true;
	u->st.spliced++;
	u->st.tail_frames += k;
	return true;
}

int unwind__stack_grab(struct unwinder *u, pid_t pid, unwind_maps_fn maps, void *ctx,
		       const struct hs_user_stack *us, size_t len, uint64_t *frames,
		       unsigned int max, uint32_t *flags, struct unwind_grab *grab)
{
	struct unwind_req rq = { .pid = pid, .maps = maps, .ctx = ctx, .us = us, .len = len,
				 .frames = frames, .max = max, .grab = grab };
	struct unwind_res rs;
	int n = unwind__run(u, &rq, &rs);

	*flags = rs.flags;
	return n;
}

int unwind__run(struct unwinder *u, const struct unwind_req *rq, struct unwind_res *rs)
{
	const struct hs_user_stack *us = rq->us;
	struct walk_maps w = { .fn = rq->maps, .ctx = rq->ctx, .pm = rq->maps(rq->ctx, false) };
	struct boundary b[TAIL_CANDIDATES];
	struct unwind_grab *grab = rq->grab;
	uint64_t *frames = rq->frames, sp0, low;
	unsigned int n = 0, nb = 0, max = rq->max;
	struct stack_copy s;
	struct regs r = { 0 };
	enum step step;

	*rs = (struct unwind_res){ .n = -EINVAL };
	/* Between walks: the modules the cache points at may be closed. */
	if (cfi_cache__trim_due(u->cfi) && !cfi_cache__trim(u->cfi))
		memset(u->pcs, 0, sizeof(u->pcs));
	if (rq->len < sizeof(*us) || us->size > rq->len - sizeof(*us) || us->skip > us->size ||
	    us->skip >= HS_PAGE_SIZE || !max)
		return -EINVAL;
	sp0 = us->regs[HS_UREG_SP];
	low = rq->hint > sp0 + TAIL_LOW ? rq->hint : sp0 + TAIL_LOW;
	/* A tail not known: the stack goes on past the copy, unread. */
	s = (struct stack_copy){ .base = sp0 - us->skip, .size = us->size, .holes = us->holes,
				 .cut = us->size - us->skip < us->want || (us->tail && !rq->tail),
				 .data = us->data, .tail = rq->tail };
	for (int i = 0; i < HS_UREG__MAX; i++) {
		r.v[arch_ureg_dwarf[i]] = us->regs[i];
		r.known |= BIT(arch_ureg_dwarf[i]);
	}
	/*
	 * The copy was written by another CPU into the ring buffer: its lines
	 * are not in this one's cache, and each step's read depends on the
	 * last one's. Loading its first lines at once, none waiting on
	 * another, overlaps the misses instead of taking them one after
	 * another (clang++ -O2: the loader's CPU 15.4-16.1 s, against
	 * 17.8-19.3 s with prefetch instructions, which this CPU may drop,
	 * and 20.8-21.6 s with neither).
	 */
	touch_lines(us->data, us->size < UNWIND_PREFETCH ? us->size : UNWIND_PREFETCH);
	frames[n++] = r.v[CFI_REG_RA];
	u->st.stacks++;
	if (us->skip || us->holes) {
		u->st.paged++;
		u->st.holes += (uint64_t)__builtin_popcount(us->holes);
	}
	for (;;) {
		/* A return address is after its call: look up the call. */
		uint64_t pc = r.v[CFI_REG_RA] - (n > 1);
		const struct pc_entry *e = pc_lookup(u, rq->pid, w.pm, pc);

		if (!e && !w.refreshed) {
			w.refreshed = true;
			w.pm = rq->maps(rq->ctx, true);
			e = pc_lookup(u, rq->pid, w.pm, pc);
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
		/* At one of the record's tail's states: its frames from there. */
		if (rq->tail && r.v[CFI_REG_SP] >= rq->tail->start &&
		    tail_splice(u, rq->pid, w.pm, rq->tail, &r, frames, &n, max, rs))
			break;
		if (n == max) {
			rs->flags |= UNWIND_DEPTH;
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
		if (rq->build && nb < TAIL_CANDIDATES && r.v[CFI_REG_SP] >= low + tail_top[nb])
			b[nb++] = (struct boundary){ .r = r, .n = n };
	}
	if (rq->tail && !rs->spliced) {
		/* The stack below did not meet the tail: what was copied, cut. */
		rs->tail_missed = true;
		step = STEP_CUT;
	}
	if (!rs->spliced) {
		if (step == STEP_CUT)
			rs->flags |= UNWIND_CUT;
		else if (step == STEP_FAIL)
			rs->flags |= UNWIND_FAULT;
	}
	if (rs->tail_missed)
		u->st.tail_missed++;
	else if (us->tail && !rq->tail)
		u->st.tail_unknown++;
	else if (rs->flags & UNWIND_CUT)
		u->st.cut++;
	else if (rs->flags & UNWIND_DEPTH)
		u->st.depth++;
	else if (rs->flags & UNWIND_FAULT)
		u->st.fault++;
	else
		u->st.complete++;
	/* Only a whole stack, deep enough to be worth it, gives a tail. */
	if (rq->build && !rs->flags && !rs->spliced && step == STEP_END && nb &&
	    r.v[CFI_REG_SP] - sp0 >= TAIL_MIN_STACK)
		rs->built = tail_build(u, rq->pid, w.pm, &s, b, nb, max);
	rs->n = (int)n;
	return rs->n;
}

void unwinder__stats_save(const struct unwinder *u, struct unwind_stats *st)
{
	*st = u->st;
}

void unwinder__stats_restore(struct unwinder *u, const struct unwind_stats *st)
{
	u->st = *st;
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *st, struct cfi_stats *cst)
{
	*st = u->st;
	cfi_cache__stats(u->cfi, cst);
}
