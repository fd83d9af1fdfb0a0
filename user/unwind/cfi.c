// SPDX-License-Identifier: MIT
/*
 * unwind/cfi.c - modules' CFI as compact rules (see cfi.h). libdw does the
 * parsing; this file turns its rows into struct cfi_rule, remembers them,
 * and evaluates the DWARF expressions of the rows that are not simple.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elfseg.h"
#include "unwind/cfi.h"
#include "fileid.h"

/* Rule cache entries (a power of two): ~56 B each. */
#define RULE_CACHE 8192

/*
 * The bounds of a cache that lives for weeks (an -a agent). libdw keeps
 * every FDE it parsed for a CFI in a search tree for as long as the CFI
 * lives (intern_fde: ~64 bytes each, CIEs beside), and each module holds
 * a descriptor and its file mapped. Traced by a second heapsnoop, a
 * sampled -a beside bench/workload.c and a machine's builds held 151,477
 * FDEs (9.3 MiB) after 2 minutes, still growing; one lookup in
 * libLLVM-14.so.1 or libclang-cpp.so.14 took 2.7 to 5.2 MiB at once
 * (libdw read their .eh_frame through rather than by its table). So
 * every CFI_TRIM_MISSES misses of the rule cache, CFI_TRIM_MODULES
 * modules opened, or CFI_TRIM_S seconds with a miss, the cache is trimmed (cfi_cache__trim()): the modules
 * not used since the last trim closed, the others' CFI ended and begun
 * again, its tree gone. What one trim's interval holds stays: at most
 * the FDEs of the modules used in it.
 */
#define CFI_TRIM_MISSES 16384
#define CFI_TRIM_MODULES 256
#define CFI_TRIM_S 30		/* ... or this many seconds with a miss */

struct cfi_module {
	uint32_t id;		/* 1.., for the rule cache */
	int fd;
	Elf *elf;
	Dwarf *dwarf;		/* for .debug_frame, if the file has one */
	Dwarf_CFI *eh, *debug;	/* either may be NULL */
	/* A separate debug file's (--only-keep-debug: the same addresses): its .debug_frame. */
	int dfd;
	Elf *delf;
	Dwarf *ddwarf;
	Dwarf_CFI *ddebug;
	struct elf_segments segs;	/* file offset -> address */
	uint64_t used;		/* the trim epoch it was last used in */
};

struct rule_entry {
	uint64_t off;
	uint32_t mod;		/* 0: empty */
	int32_t err;		/* 0, or -ENOENT remembered */
	struct cfi_rule rule;
};

struct cfi_cache {
	struct cfi_src src;
	struct fileid_map *mods;	/* (dev, ino) -> struct cfi_module */
	struct rule_entry *rules;
	struct cfi_stats st;
	uint64_t epoch;		/* trims done */
	uint64_t misses, opened;	/* ... since the last */
	time_t last_trim;	/* CLOCK_MONOTONIC_COARSE s */
};

static time_t coarse_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec;
}

struct cfi_cache *cfi_cache__new(const struct cfi_src *src)
{
	struct cfi_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->src = *src;
	/* libelf's one global setting, made before threads use it (pool.h). */
	elf_version(EV_CURRENT);
	c->mods = fileid_map__new();
	c->rules = calloc(RULE_CACHE, sizeof(*c->rules));
	if (!c->mods || !c->rules) {
		cfi_cache__free(c);
		return NULL;
	}
	c->st.cache_bytes = RULE_CACHE * sizeof(*c->rules);
	c->last_trim = coarse_now();
	return c;
}

static void module_free(void *arg)
{
	struct cfi_module *m = arg;

	/* .eh_frame's CFI is the caller's to end; .debug_frame's, the Dwarf's. */
	if (m->eh)
		dwarf_cfi_end(m->eh);
	if (m->dwarf)
		dwarf_end(m->dwarf);
	if (m->elf)
		elf_end(m->elf);
	if (m->fd >= 0)
		close(m->fd);
	if (m->ddwarf)
		dwarf_end(m->ddwarf);
	if (m->delf)
		elf_end(m->delf);
	if (m->dfd >= 0)
		close(m->dfd);
	elf_segments__free(&m->segs);
	free(m);
}

void cfi_cache__free(struct cfi_cache *c)
{
	if (!c)
		return;
	fileid_map__free(c->mods, module_free);
	free(c->rules);
	free(c);
}

/*
 * The sizes of the CFI sections, and whether there is a .debug_frame. A
 * damaged section header's size counts only as far as the file holds it
 * (-v once said "270479860777645 bytes of CFI mapped").
 */
static bool scan_sections(Elf *elf, size_t *bytes)
{
	size_t shstrndx, file_size = 0;
	Elf_Scn *scn = NULL;
	bool debug_frame = false;

	if (elf_getshdrstrndx(elf, &shstrndx) || !elf_rawfile(elf, &file_size))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		bool cfi;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		cfi = !strcmp(name, ".eh_frame") || !strcmp(name, ".eh_frame_hdr");
		debug_frame |= !strcmp(name, ".debug_frame");
		if ((cfi || !strcmp(name, ".debug_frame")) && sh.sh_offset <= file_size)
			*bytes += sh.sh_size < file_size - sh.sh_offset ? sh.sh_size :
				  file_size - sh.sh_offset;
	}
	return debug_frame;
}

/* @elf's DWARF opened for its .debug_frame, its CFI in *@cfi (NULL: none); NULL if it has none. */
static Dwarf *debug_frame_open(Elf *elf, Dwarf_CFI **cfi)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);

	*cfi = dw ? dwarf_getcfi(dw) : NULL;
	return dw;
}

/* A separate debug file's .debug_frame, if it has one; nothing if not. */
static void debug_open(struct cfi_module *m, size_t *cfi_bytes)
{
	size_t bytes = 0;

	m->delf = elf_begin(m->dfd, ELF_C_READ_MMAP, NULL);
	if (!m->delf || elf_kind(m->delf) != ELF_K_ELF || !scan_sections(m->delf, &bytes))
		return;
	m->ddwarf = debug_frame_open(m->delf, &m->ddebug);
	if (m->ddebug)
		*cfi_bytes += bytes;
}

/* The module of file @fd (and debug file @dfd, or -1): both its own, even on failure. */
static struct cfi_module *module_open(int fd, int dfd, size_t *cfi_bytes)
{
	struct cfi_module *m = calloc(1, sizeof(*m));

	if (!m) {
		close(fd);
		if (dfd >= 0)
			close(dfd);
		return NULL;
	}
	m->fd = fd;
	m->dfd = dfd;
	m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (!m->elf || elf_kind(m->elf) != ELF_K_ELF || elf_segments__read(m->elf, &m->segs))
		goto fail;
	m->eh = dwarf_getcfi_elf(m->elf);
	if (scan_sections(m->elf, cfi_bytes))
		m->dwarf = debug_frame_open(m->elf, &m->debug);
	if (m->dfd >= 0)
		debug_open(m, cfi_bytes);
	return m;
fail:
	module_free(m);
	return NULL;
}

struct cfi_module *cfi_cache__module(struct cfi_cache *c, pid_t pid, const struct mapping *m)
{
	struct cfi_module *mod;
	int fd, dfd = -1;

	if (!m->ino)
		return NULL;
	mod = fileid_map__find(c->mods, m->dev, m->ino);
	if (mod) {
		mod->used = c->epoch;
		return mod;
	}
	if (c->src.open(c->src.ctx, pid, m, &fd, &dfd))
		return NULL;
	mod = module_open(fd, dfd, &c->st.cfi_bytes);
	if (!mod)
		return NULL;
	if (fileid_map__add(c->mods, m->dev, m->ino, mod)) {
		module_free(mod);
		return NULL;
	}
	mod->id = (uint32_t)++c->st.modules;
	mod->used = c->epoch;
	c->opened++;
	if (!mod->eh && !mod->debug && !mod->ddebug)
		c->st.no_cfi++;
	if (mod->ddebug)
		c->st.debug_files++;
	return mod;
}

bool cfi_cache__trim_due(const struct cfi_cache *c)
{
	return c->misses >= CFI_TRIM_MISSES || c->opened >= CFI_TRIM_MODULES ||
	       (c->misses && coarse_now() - c->last_trim >= CFI_TRIM_S);
}

static bool unused(void *value, void *ctx)
{
	const struct cfi_module *m = value;

	return m->used < *(const uint64_t *)ctx;
}

/* @m's CFI ended and begun again: the FDEs libdw interned for it freed. */
static void module_reset(struct cfi_module *m)
{
	if (m->eh) {
		dwarf_cfi_end(m->eh);
		m->eh = dwarf_getcfi_elf(m->elf);
	}
	if (m->dwarf) {
		dwarf_end(m->dwarf);
		m->dwarf = debug_frame_open(m->elf, &m->debug);
	}
	if (m->ddwarf) {
		dwarf_end(m->ddwarf);
		m->ddwarf = debug_frame_open(m->delf, &m->ddebug);
	}
}

static bool reset(void *value, void *ctx)
{
	(void)ctx;
	module_reset(value);
	return false;
}

int cfi_cache__trim(struct cfi_cache *c)
{
	int n = fileid_map__prune(c->mods, unused, &c->epoch, module_free);

	if (n < 0)
		return n;
	/* The rules cached stay good: a closed module's id is never used again. */
	fileid_map__prune(c->mods, reset, NULL, NULL);
	c->epoch++;
	c->misses = c->opened = 0;
	c->last_trim = coarse_now();
	c->st.trims++;
	c->st.closed += (size_t)n;
#ifdef __GLIBC__
	/* The trees' pages given back, not kept in malloc's arenas for the next. */
	malloc_trim(0);
#endif
	return 0;
}

/*
 * The row of libdw for @off: from .eh_frame, else .debug_frame, else a
 * separate debug file's .debug_frame (its addresses the file's own).
 */
static int find_frame(struct cfi_module *m, uint64_t off, Dwarf_Frame **frame)
{
	const struct elf_segment *seg = elf_segments__by_offset(&m->segs, off);
	uint64_t vaddr;

	if (!seg)
		return -ENOENT;
	vaddr = elf_segment__vaddr(seg, off);
	if (m->eh && dwarf_cfi_addrframe(m->eh, vaddr, frame) == 0)
		return 0;
	if (m->debug && dwarf_cfi_addrframe(m->debug, vaddr, frame) == 0)
		return 0;
	if (m->ddebug && dwarf_cfi_addrframe(m->ddebug, vaddr, frame) == 0)
		return 0;
	return -ENOENT;
}

/*
 * A value affine in the CFA, a * CFA + b: how a register's location or
 * value is written in nearly every row (DW_OP_call_frame_cfa, then
 * constants added). Anything else is left to the slow path.
 */
struct affine {
	int64_t a, b;
};

static bool affine_eval(const Dwarf_Op *ops, size_t n, struct affine *out, bool *value)
{
	struct affine st[8];
	size_t sp = 0;

	*value = false;
	for (size_t i = 0; i < n; i++) {
		const Dwarf_Op *op = &ops[i];

		if (op->atom == DW_OP_stack_value && i == n - 1) {
			*value = true;
			break;
		}
		if (sp == 8)
			return false;
		switch (op->atom) {
		case DW_OP_call_frame_cfa:
			st[sp++] = (struct affine){ 1, 0 };
			break;
		case DW_OP_lit0 ... DW_OP_lit31:
			st[sp++] = (struct affine){ 0, op->atom - DW_OP_lit0 };
			break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s:
		case DW_OP_const8u: case DW_OP_const8s: case DW_OP_constu:
		case DW_OP_consts:
			st[sp++] = (struct affine){ 0, (int64_t)op->number };
			break;
		case DW_OP_plus_uconst:
			if (!sp)
				return false;
			st[sp - 1].b += (int64_t)op->number;
			break;
		case DW_OP_plus:
		case DW_OP_minus:
			if (sp < 2)
				return false;
			sp--;
			if (op->atom == DW_OP_plus) {
				st[sp - 1].a += st[sp].a;
				st[sp - 1].b += st[sp].b;
			} else {
				st[sp - 1].a -= st[sp].a;
				st[sp - 1].b -= st[sp].b;
			}
			break;
		default:
			return false;
		}
	}
	if (sp != 1 || st[0].a != 1 || st[0].b < INT32_MIN || st[0].b > INT32_MAX)
		return false;
	*out = st[0];
	return true;
}

static void compile(Dwarf_Frame *f, struct cfi_rule *r, uint64_t *exprs)
{
	Dwarf_Op *ops, mem[3];
	size_t n;
	bool expr = false;

	memset(r, 0, sizeof(*r));
	r->cfa_reg = CFI_NREGS;
	if (dwarf_frame_cfa(f, &ops, &n) == 0 && n == 1) {
		if (ops[0].atom == DW_OP_bregx && ops[0].number < CFI_NREGS) {
			r->cfa_reg = (uint8_t)ops[0].number;
			r->cfa_off = (int32_t)ops[0].number2;
		} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom < DW_OP_breg0 + CFI_NREGS) {
			r->cfa_reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
			r->cfa_off = (int32_t)ops[0].number;
		}
	}
	expr = r->cfa_reg == CFI_NREGS;
	for (int i = 0; i < CFI_RULE_REGS; i++) {
		struct affine v;
		bool value;

		if (dwarf_frame_register(f, cfi_rule_regs[i], mem, &ops, &n)) {
			r->kind[i] = CFI_UNDEF;
		} else if (n == 0) {
			r->kind[i] = ops ? CFI_UNDEF : CFI_SAME;
		} else if (affine_eval(ops, n, &v, &value)) {
			r->kind[i] = value ? CFI_VAL : CFI_AT;
			r->off[i] = (int32_t)v.b;
		} else {
			r->kind[i] = CFI_EXPR;
			expr = true;
		}
	}
	r->slow = expr;
	if (expr)
		(*exprs)++;
}

int cfi_cache__rule(struct cfi_cache *c, struct cfi_module *mod, uint64_t off,
		    struct cfi_rule *rule)
{
	uint64_t h = (off * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)mod->id << 40);
	struct rule_entry *e = &c->rules[(h >> 29) & (RULE_CACHE - 1)];
	Dwarf_Frame *f;

	c->st.lookups++;
	if (e->mod != mod->id || e->off != off) {
		c->st.misses++;
		c->misses++;
		e->mod = mod->id;
		e->off = off;
		e->err = find_frame(mod, off, &f);
		if (!e->err) {
			compile(f, &e->rule, &c->st.exprs);
			free(f);
		}
	}
	if (e->err)
		return e->err;
	*rule = e->rule;
	return 0;
}

struct eval_env {
	const uint64_t *regs;
	uint32_t known;
	uint64_t cfa;
	bool have_cfa;
	cfi_read_fn rd;
	void *ctx;
};

/*
 * A DWARF expression's value; the operations CFI uses (x86-64, arm64). One
 * function over 80 lines on purpose: a stack machine reads best as one
 * switch over its operations, each a few lines (DWARF 5, section 2.5).
 */
static int eval(const Dwarf_Op *ops, size_t n, const struct eval_env *env, uint64_t *out,
		bool *value)
{
	uint64_t st[16], x, y;
	size_t sp = 0;
	int err;

	*value = false;
	for (size_t i = 0; i < n; i++) {
		const Dwarf_Op *op = &ops[i];
		unsigned int reg;

		if (op->atom == DW_OP_stack_value && i == n - 1) {
			*value = true;
			break;
		}
		if (sp == 16)
			return -EINVAL;
		switch (op->atom) {
		case DW_OP_call_frame_cfa:
			if (!env->have_cfa)
				return -EINVAL;
			st[sp++] = env->cfa;
			break;
		case DW_OP_lit0 ... DW_OP_lit31:
			st[sp++] = op->atom - DW_OP_lit0;
			break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s:
		case DW_OP_const8u: case DW_OP_const8s: case DW_OP_constu:
		case DW_OP_consts:
			st[sp++] = op->number;
			break;
		case DW_OP_breg0 ... DW_OP_breg31:
		case DW_OP_bregx:
			reg = op->atom == DW_OP_bregx ? (unsigned int)op->number
						      : (unsigned int)(op->atom - DW_OP_breg0);
			if (reg >= CFI_NREGS || !(env->known & (1u << reg)))
				return -EINVAL;
			st[sp++] = env->regs[reg] +
				   (op->atom == DW_OP_bregx ? op->number2 : op->number);
			break;
		case DW_OP_dup:
			if (!sp)
				return -EINVAL;
			st[sp] = st[sp - 1];
			sp++;
			break;
		case DW_OP_drop:
			if (!sp)
				return -EINVAL;
			sp--;
			break;
		case DW_OP_deref:
			if (!sp)
				return -EINVAL;
			err = env->rd(env->ctx, st[sp - 1], &st[sp - 1]);
			if (err)
				return err;
			break;
		case DW_OP_plus_uconst:
			if (!sp)
				return -EINVAL;
			st[sp - 1] += op->number;
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_and: case DW_OP_or:
		case DW_OP_xor: case DW_OP_mul: case DW_OP_shl: case DW_OP_shr:
		case DW_OP_shra: case DW_OP_ge: case DW_OP_gt: case DW_OP_le:
		case DW_OP_lt: case DW_OP_eq: case DW_OP_ne:
			if (sp < 2)
				return -EINVAL;
			y = st[--sp];
			x = st[sp - 1];
			switch (op->atom) {
			case DW_OP_plus: x += y; break;
			case DW_OP_minus: x -= y; break;
			case DW_OP_and: x &= y; break;
			case DW_OP_or: x |= y; break;
			case DW_OP_xor: x ^= y; break;
			case DW_OP_mul: x *= y; break;
			case DW_OP_shl: x = y < 64 ? x << y : 0; break;
			case DW_OP_shr: x = y < 64 ? x >> y : 0; break;
			case DW_OP_shra: x = (uint64_t)((int64_t)x >> (y < 63 ? y : 63)); break;
			case DW_OP_ge: x = (int64_t)x >= (int64_t)y; break;
			case DW_OP_gt: x = (int64_t)x > (int64_t)y; break;
			case DW_OP_le: x = (int64_t)x <= (int64_t)y; break;
			case DW_OP_lt: x = (int64_t)x < (int64_t)y; break;
			case DW_OP_eq: x = x == y; break;
			default: x = x != y; break;
			}
			st[sp - 1] = x;
			break;
		default:
			return -EINVAL;
		}
	}
	if (!sp)
		return -EINVAL;
	*out = st[sp - 1];
	return 0;
}

int cfi_module__eval_frame(struct cfi_module *mod, uint64_t off,
			   const uint64_t regs[CFI_NREGS], uint32_t known, cfi_read_fn rd,
			   void *ctx, uint64_t *cfa, uint64_t caller[CFI_NREGS],
			   uint32_t *caller_known)
{
	struct eval_env env = { .regs = regs, .known = known, .rd = rd, .ctx = ctx };
	Dwarf_Op *ops, mem[3];
	Dwarf_Frame *f;
	size_t n;
	bool value;
	int err;

	err = find_frame(mod, off, &f);
	if (err)
		return err;
	err = -EINVAL;
	if (dwarf_frame_cfa(f, &ops, &n) || !n)
		goto out;
	err = eval(ops, n, &env, cfa, &value);
	if (err)
		goto out;
	env.cfa = *cfa;
	env.have_cfa = true;
	*caller_known = 1u << CFI_REG_SP;
	caller[CFI_REG_SP] = *cfa;
	for (int i = 0; i < CFI_RULE_REGS; i++) {
		int reg = cfi_rule_regs[i];
		uint64_t v;

		if (dwarf_frame_register(f, reg, mem, &ops, &n))
			continue;
		if (n == 0) {
			if (!ops && (known & (1u << reg))) {
				caller[reg] = regs[reg];
				*caller_known |= 1u << reg;
			}
			continue;
		}
		if (eval(ops, n, &env, &v, &value))
			continue;
		if (!value && rd(ctx, v, &v)) {
			if (reg == CFI_REG_RA) {
				err = -EFAULT;
				goto out;
			}
			continue;
		}
		caller[reg] = v;
		*caller_known |= 1u << reg;
	}
	err = 0;
out:
	free(f);
	return err;
}

void cfi_cache__stats(const struct cfi_cache *c, struct cfi_stats *st)
{
	*st = c->st;
}
