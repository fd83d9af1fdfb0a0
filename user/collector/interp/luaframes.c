// SPDX-License-Identifier: MIT
/*
 * luaframes.c - the calling thread's PUC Lua frames in the process (see
 * luaframes.h).
 *
 * The state: lua_newstate allocates its LG (the main thread, then its
 * global_State) first, with the state's allocator; the standard one
 * (lauxlib's l_alloc, which luaL_newstate gives and lua.c uses) is a tail
 * call of realloc(NULL, n), so the collector's realloc returns straight
 * into lua_newstate (its bounds: dladdr1's symbol size). That block is
 * the state, made by this thread: the walk runs on it only there (a
 * state is one thread's, as the tracer's BPF walk takes it), the main
 * thread at its start (5.4: after LUA_EXTRASPACE's 8 bytes). Interposing
 * lua_newstate would not do: Debian's lua5.4 calls it inside its own
 * binary, not through the PLT. The block is zeroed, so that an
 * allocation inside lua_newstate finds no CallInfo yet and walks
 * nothing; its free (lua_close's last) ends the walk.
 *
 * The walk is luawalk.c's, over a reader that loads in place: the
 * thread's own state cannot change under it while it allocates, and Lua
 * allocates only where its state is whole (the next CallInfo, a stack
 * grown, are allocated before they are linked). Each frame's two words
 * (livetable.h, LT_LUA_*): its Proto or C function, its instruction's
 * index in the Proto's code, its kind and flags, the Proto's
 * fingerprint.
 *
 * The names: a frame's name is its caller's calling instruction's
 * (getfuncname) or package.loaded's (5.4's pushglobalfuncname), so the
 * first new stack that holds a frame under a caller names it in the
 * process, as luanames.c names the tracer's, and writes the name, the
 * chunk and the line into the table (LT_LUA_NAMEREC), which heapsnoop
 * names the frame by, after the process's death too. Its reads are in
 * place too (the frames' Protos live, package.loaded's tables whole: a
 * table is resized into memory allocated before it is linked), its
 * memory the C library's (inside the collector's hook: not tracked);
 * package.loaded walked again for each such name (a global set since the
 * last walk is named as Lua's traceback names it then), the package.loaded
 * of the naming thread's own state; one thread names at a time. Through
 * process_vm_readv of itself (no fault on any pointer) a name cost 0.57
 * ms, 3000 new functions 1.7 s; in place 20 us.
 * docs/COLLECTOR.md, "Lua frames".
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heapsnoop/luaframe.h"
#include "interp/lualayout.h"
#include "interp/luanames.h"
#include "interp/luawalk.h"
#include "ltwrite.h"
#include "ltstacks.h"
#include "luaframes.h"

#define MAX_FRAMES	HS_LUA_MAX_FRAMES	/* the tracer's bound */
#define SEEN_SLOTS	(1u << 16)		/* frames named: 512 KiB, sparse */
#define FILE_BYTES	1024			/* a chunk's bytes kept */

bool luaframes_on;
uintptr_t luaframes_ns_lo, luaframes_ns_hi;
__thread uint64_t luaframes_main __attribute__((tls_model("initial-exec")));
__thread uint64_t luaframes_block __attribute__((tls_model("initial-exec")));

static const struct lua_layout *lay;
static uint64_t *seen;			/* names written: their keys' hashes; 0: empty */
static struct lua_names *names;		/* the naming's, under name_lock */
static uint64_t names_g;		/* the global_State it names for */
static int name_lock;			/* the pid that holds it, 0 */

static inline uint64_t u64_at(uint64_t addr)
{
	return *(const uint64_t *)(uintptr_t)addr;
}

static inline uint32_t u32_at(uint64_t addr)
{
	return *(const uint32_t *)(uintptr_t)addr;
}

static int in_place(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

int luaframes__init(void)
{
	void *ns = dlsym(RTLD_DEFAULT, "lua_newstate");
	const ElfW(Sym) *sym = NULL;
	enum lua_vm vm = LUA_VM_NONE;
	Dl_info di;

	if (!ns)
		return -ENOENT;
	if (dlsym(RTLD_DEFAULT, "luaJIT_setmode")) {
		dprintf(2, "heapsnoop-preload: pid %d: LuaJIT: its frames are not read in --preload "
			"mode (heapsnoop without --preload reads them)\n", (int)getpid());
		return -ENOENT;
	}
	if (dlsym(RTLD_DEFAULT, "lua_resetthread") || dlsym(RTLD_DEFAULT, "lua_closeslot"))
		vm = LUA_VM_54;
	else if (dlsym(RTLD_DEFAULT, "lua_setfenv"))
		vm = LUA_VM_51;
	if (vm == LUA_VM_NONE || !dladdr1(ns, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !sym->st_size) {
		dprintf(2, "heapsnoop-preload: pid %d: a Lua whose frames are not read (5.4 and "
			"5.1 only, lua_newstate's size known)\n", (int)getpid());
		return -ENOENT;
	}
	lay = lua_layout__of(vm);
	seen = mmap(NULL, SEEN_SLOTS * sizeof(*seen), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (seen == MAP_FAILED)
		return -ENOMEM;
	luaframes_ns_lo = (uintptr_t)ns;
	luaframes_ns_hi = (uintptr_t)ns + sym->st_size;
	lt.h->lua_newstate = (uint64_t)(uintptr_t)ns;
	__atomic_store_n(&lt.h->lua_vm, (uint32_t)vm, __ATOMIC_RELEASE);
	luaframes_on = true;
	return 0;
}

void luaframes__newstate(void *p, size_t size)
{
	memset(p, 0, size);
	luaframes_block = (uint64_t)(uintptr_t)p;
	/* 5.4's LX: LUA_EXTRASPACE (a pointer's size) before the thread; 5.1's LG: none. */
	luaframes_main = luaframes_block + (lay->vm == LUA_VM_54 ? sizeof(void *) : 0);
}

/* --- a frame's words ------------------------------------------------------ */

static inline uint64_t rotl(uint64_t v, unsigned int k)
{
	return v << k | v >> (64 - k);
}

/* Proto @p's fingerprint: addresses and sizes it keeps for its life. */
static inline uint32_t proto_fp(uint64_t p)
{
	uint64_t h = (u64_at(p + lay->p_source) >> 3) ^ rotl(u64_at(p + lay->p_code) >> 2, 21) ^
		     rotl(u64_at(p + lay->p_lineinfo), 42) ^
		     rotl((uint64_t)u32_at(p + lay->p_sizecode) << 20 ^ u32_at(p + lay->p_linedefined), 7);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return (uint32_t)h & LT_LUA_FP_MASK;
}

static inline void frame_words(const struct lua_frame *f, uint64_t *w)
{
	uint32_t kind = HS_LUA_POS_KIND(f->pos), fp = 0, index = 0;
	uint64_t pc = HS_LUA_POS_PC(f->pos), code;

	if (kind == HS_LUA_LUA && f->code) {
		fp = proto_fp(f->code);
		code = u64_at(f->code + lay->p_code);
		if (pc > code && pc - code < (1ull << 26))
			index = (uint32_t)((pc - code) / 4);
	}
	w[0] = LT_PY_WORD | (f->code & LT_PY_ADDR);
	w[1] = lt_lua_pos(fp, kind, (uint32_t)(f->pos >> 56), index);
}

/* --- names ---------------------------------------------------------------- */

static uint64_t key_hash(const uint64_t *k)
{
	uint64_t h = k[0] * 0x9e3779b97f4a7c15ull ^ rotl(k[1], 17) ^ rotl(k[2], 31) ^ rotl(k[3], 47);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h ? h : 1;
}

/* Is @h named? @add: say it is now. A full probe forgets nothing (named again). */
static bool seen_has(uint64_t h, bool add)
{
	for (uint32_t i = 0, k = (uint32_t)(h >> 40); i < 64; i++, k++) {
		uint64_t *sl = &seen[k & (SEEN_SLOTS - 1)], v = __atomic_load_n(sl, __ATOMIC_RELAXED);

		if (v == h)
			return true;
		if (!v) {
			if (add)
				__atomic_compare_exchange_n(sl, &v, h, false, __ATOMIC_RELAXED,
							    __ATOMIC_RELAXED);
			return false;
		}
	}
	return false;
}

/*
 * The naming's lock: another thread of this process that holds it is
 * naming (system calls and the C library's malloc, none of them waiting
 * on this thread), so it is waited for; one held by the parent's other
 * thread at a fork (its pid the parent's) is taken over by the child,
 * with a naming state of its own.
 */
static void name_lock_take(void)
{
	int me = getpid();

	for (;;) {
		int v = 0;

		if (__atomic_compare_exchange_n(&name_lock, &v, me, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		if (v != me && __atomic_compare_exchange_n(&name_lock, &v, me, false,
							   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			names = NULL;	/* the parent's, maybe half changed: left, not freed */
			return;
		}
		sched_yield();
	}
}

static void name_lock_drop(void)
{
	__atomic_store_n(&name_lock, 0, __ATOMIC_RELEASE);
}

/* Is frame @f's instruction a call (5.1's OP_CALL, OP_TAILCALL)? Not known: yes. */
static bool calls(const struct lua_frame *f)
{
	struct lua_proto *p = HS_LUA_POS_KIND(f->pos) == HS_LUA_LUA ?
			      lua_names__proto(names, f->code) : NULL;
	int pc = p ? lua_proto__pc(p, HS_LUA_POS_PC(f->pos)) : -1;
	uint32_t op = pc >= 0 ? p->code[pc] & 0x3f : 28;

	return op == 28 || op == 29;
}

/* Frame @i of @f[@nf] (its words @w, its caller's @cw or NULL) named into the table. */
static void name_record(const struct lua_frame *f, unsigned int nf, unsigned int i,
			const uint64_t *w, const uint64_t *cw, uint64_t h)
{
	struct lua_where where;
	uint64_t *r, flags = 0;
	size_t fn, fl;
	uint32_t words, id;

	/* Proto addresses are reused: what was read at this one before is read again. */
	lua_names__forget(names, f[i].code);
	if (cw)
		lua_names__forget(names, f[i + 1].code);
	lua_names__globals_now(names);
	if (lua_names__describe(names, f, nf, i, 0, &where))
		flags |= LT_LUA_REC_STALE;
	if (lay->vm == LUA_VM_51 && calls(&f[i]))
		flags |= LT_LUA_REC_CALLS;
	fn = strnlen(where.function, sizeof(where.function) - 1);
	fl = strnlen(where.file, FILE_BYTES);
	words = LT_LUA_NAMEREC_WORDS + (uint32_t)((fn + fl + 7) / 8);
	r = ltstacks__reserve(words, &id);
	if (!r)
		return;
	r[0] = LT_LUA_NAMEREC;
	r[1] = w[0];
	r[2] = w[1];
	r[3] = cw ? cw[0] : 0;
	r[4] = cw ? cw[1] : 0;
	r[5] = (uint32_t)where.line | (uint64_t)fn << 32 | flags;
	r[6] = fl;
	r[words - 1] = 0;	/* the padding */
	memcpy(r + LT_LUA_NAMEREC_WORDS, where.function, fn);
	memcpy((char *)(r + LT_LUA_NAMEREC_WORDS) + fn, where.file, fl);
	ltstacks__commit(id, words);
	seen_has(h, true);
}

/*
 * The naming state of this thread's Lua state (its package.loaded: a
 * process may run several states, one a thread), made anew when another
 * state names. Under name_lock. NULL: no memory.
 */
static struct lua_names *names_for_state(void)
{
	struct lua_reader rd = { lay, in_place, NULL };
	uint64_t m, g;

	if (lua_state__main(&rd, luaframes_main, &m, &g))
		g = 0;	/* no global names, the rest all the same */
	if (names && names_g == g)
		return names;
	lua_names__free(names);
	names = lua_names__new(&rd, g);
	names_g = g;
	return names;
}

/*
 * The frames of a new stack (@w: @named pairs of words, of the walk's
 * @f[@nf]) named where not yet: each under its caller, the thread's
 * outermost frame under none. A frame whose caller was not walked (the
 * stack cut: MORE) is not named (heapsnoop says "?").
 */
static void name_new(const uint64_t *w, const struct lua_frame *f, unsigned int named,
		     unsigned int nf)
{
	bool locked = false;

	for (unsigned int i = 0; i < named; i++) {
		bool outer = i + 1 >= nf || (f[i + 1].pos & HS_LUA_F_THREAD);
		const uint64_t *cw = outer ? NULL : w + 2 * i + 2;
		uint64_t k[4] = { w[2 * i], w[2 * i + 1], cw ? cw[0] : 0, cw ? cw[1] : 0 };
		uint64_t h;

		if (w[2 * i] & LT_PY_MORE)
			break;
		h = key_hash(k);
		if (seen_has(h, false))
			continue;
		if (!locked) {
			name_lock_take();
			locked = true;
		}
		if (!names_for_state())
			break;
		name_record(f, nf, i, w + 2 * i, cw, h);
	}
	if (locked)
		name_lock_drop();
}

/* --- the walk ------------------------------------------------------------- */

static __attribute__((noinline)) uint32_t with_lua(const uint64_t *frames, uint32_t depth,
						   uint32_t cut)
{
	const struct lua_reader rd = { lay, in_place, NULL };
	uint64_t buf[LT_MAX_DEPTH];
	struct lua_frame f[MAX_FRAMES + 1];
	uint32_t room = (LT_MAX_DEPTH - depth) / 2, max = room < MAX_FRAMES ? room : MAX_FRAMES;
	unsigned int nf = 0, keep, n = depth;
	uint32_t id;
	int err;

	/* One frame more than kept: the last kept one's caller names it. */
	err = lua_walk(&rd, luaframes_main, f, max + 1, &nf);
	if (!nf)
		return ltstacks__intern(frames, depth, cut);
	keep = nf > max ? max : nf;
	memcpy(buf, frames, depth * sizeof(*frames));
	for (unsigned int i = 0; i < keep; i++, n += 2)
		frame_words(&f[i], buf + n);
	/* The walk went on (or could not): heapsnoop leaves the outer runs native. */
	if (nf > keep || err < 0)
		buf[n - 2] |= LT_PY_MORE;
	id = ltstacks__find(buf, n, cut);
	if (id)
		return id;
	name_new(buf + depth, f, keep, nf);
	return ltstacks__intern(buf, n, cut);
}

uint32_t luaframes__intern(const uint64_t *frames, uint32_t depth, uint32_t cut)
{
	/* No CallInfo yet (inside lua_newstate) or no room: the native stack alone. */
	if (!u64_at(luaframes_main + lay->l_ci) || depth + 2 > LT_MAX_DEPTH)
		return ltstacks__intern(frames, depth, cut);
	return with_lua(frames, depth, cut);
}
