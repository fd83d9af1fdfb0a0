// SPDX-License-Identifier: MIT
/*
 * pywalk.c - the calling thread's CPython frames in the process (see
 * pywalk.h). The thread state is the one CPython's own
 * PyGILState_GetThisThreadState() returns (pthread_getspecific of
 * _PyRuntime's autoTSSkey: no lock, no allocation, right on a thread that
 * released the GIL to allocate), the one bpf/python.h reads from outside;
 * then tstate->cframe->current_frame (3.11, 3.12) or
 * tstate->current_frame (3.13) and each frame's previous, the fields at
 * the offsets of pylayout.c's table (3.11, 3.12) or of the process's own
 * _Py_DebugOffsets (3.13), loaded in place (the thread's own frames
 * cannot change under it while it allocates). Each frame keeps its code
 * object, its instruction's index in the code units, whether it ends an
 * eval loop's run (3.11's is_entry; from 3.12 the frame inside the shim
 * frame the loop pushes on entry, the shim itself left out), and a
 * fingerprint of the code object (livetable.h, lt_py_fingerprint(): some
 * of its addresses and contents). The first new stack that holds a code
 * object copies it into the table (its name, file and location table:
 * LT_PY_CODEREC), which heapsnoop names its frames by, after the
 * process's death too; a code object freed and another made at its
 * address has another fingerprint, another record.
 * docs/COLLECTOR.md, "Python frames".
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "interp/pylayout.h"
#include "ltwrite.h"
#include "ltstacks.h"
#include "pywalk.h"

#define SEEN_SLOTS (1u << 16)	/* code objects recorded: 1 MiB, sparse */

bool pywalk_on;
/* Code objects recorded: (address, fingerprint); code 0: empty. Private memory. */
struct seen_slot {
	uint64_t code;
	uint32_t fp, ready;
};
static struct seen_slot *seen;
static struct py_layout L;
static void *(*this_tstate)(void);	/* PyGILState_GetThisThreadState */
static uint64_t code_type;		/* &PyCode_Type: a frame's code object checked (3.12+) */

static inline uint64_t u64_at(uint64_t addr)
{
	return *(const uint64_t *)(uintptr_t)addr;
}

static inline uint32_t u32_at(uint64_t addr)
{
	return *(const uint32_t *)(uintptr_t)addr;
}

/*
 * @version's layout into L: 3.11's and 3.12's from the table, 3.13's from
 * the _Py_DebugOffsets at the start of @runtime (its size the symbol's),
 * each checked against PyCode_Type's tp_basicsize (@code: the code
 * objects' size up to their code units) as the tracer's pyfind.c checks
 * the file. Returns 0, or -ENOTSUP with the reason in @why.
 */
static int layout_of(uint32_t version, const void *runtime, const uint8_t *code, char *why,
		     size_t cap)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;
	uint64_t basicsize;
	int err;

	if (PY_MINOR_OF(version) < 0x030d) {
		err = py_layout__table(version, &L);
	} else if (!dladdr1(runtime, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym) {
		snprintf(why, cap, "its _PyRuntime's size is not in its symbols");
		return -ENOTSUP;
	} else {
		err = py_layout__from_debug_offsets(runtime, PY_DEBUG_OFFSETS_SIZE, version,
						    sym->st_size, &L);
		if (err == -EINVAL) {
			snprintf(why, cap, "its _Py_DebugOffsets is not the layout heapsnoop knows "
				 "(3.13's)");
			return -ENOTSUP;
		}
	}
	if (err) {
		snprintf(why, cap, "heapsnoop reads the frames of 3.11 to 3.13; run it on one of "
			 "those for its Python frames");
		return -ENOTSUP;
	}
	/* tp_basicsize (PyTypeObject's fifth word): the code object up to its code units. */
	memcpy(&basicsize, code + 32, sizeof(basicsize));
	if (basicsize != L.co_code) {
		snprintf(why, cap, "its code objects are %llu bytes before their code, the layout of "
			 "its version says %u (please report this with heapsnoop -V and the "
			 "binary's package version)", (unsigned long long)basicsize, L.co_code);
		return -ENOTSUP;
	}
	return 0;
}

int pywalk__init(void)
{
	const uint32_t *version = dlsym(RTLD_DEFAULT, "Py_Version");
	void *runtime = dlsym(RTLD_DEFAULT, "_PyRuntime");
	void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	const uint8_t *code = dlsym(RTLD_DEFAULT, "PyCode_Type");
	char v[32], why[256];

	this_tstate = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (runtime && eval && !version) {
		dprintf(2, "heapsnoop-preload: pid %d: a CPython before 3.11 (no Py_Version in its "
			"exported symbols): its frames are not read: heapsnoop reads the frames of "
			"3.11 to 3.13; run it on one of those for its Python frames\n", (int)getpid());
		return -ENOTSUP;
	}
	if (!version || !runtime || !eval || !this_tstate || !code)
		return -ENOENT;
	if (layout_of(*version, runtime, code, why, sizeof(why))) {
		dprintf(2, "heapsnoop-preload: pid %d: Python %s: its frames are not read: %s\n",
			(int)getpid(), py_layout__version_str(*version, v, sizeof(v)), why);
		return -ENOTSUP;
	}
	code_type = (uint64_t)(uintptr_t)code;
	seen = mmap(NULL, SEEN_SLOTS * sizeof(*seen), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (seen == MAP_FAILED)
		seen = NULL;	/* no records: heapsnoop reads the code objects while it can */
	lt.h->py_eval = (uint64_t)(uintptr_t)eval;
	__atomic_store_n(&lt.h->py_version, *version, __ATOMIC_RELEASE);
	pywalk_on = true;
	return 0;
}

/*
 * lt_py_bytes8() of the @n bytes at @p, in one load where it cannot
 * cross a page (the bytes past @n are another object's, masked off).
 */
static inline uint64_t mem8(uint64_t p, uint64_t n)
{
	if (n >= 8)
		return u64_at(p);
	if (!n)
		return 0;
	if ((p & 4095) <= 4096 - 8)
		return u64_at(p) & (~0ull >> (64 - 8 * n));
	return lt_py_bytes8((const unsigned char *)(uintptr_t)p, n);
}

/* The last 8 bytes of the compact str @s's characters (lt_py_bytes8()), 0 if not one. */
static inline uint64_t str_tail(uint64_t s)
{
	uint32_t state, kind;
	uint64_t n, data;

	if (!s || (s & 7))
		return 0;
	state = u32_at(s + L.str_state);
	kind = PY_STR_KIND(state);
	if (!(state & PY_STR_COMPACT))
		return 0;
	n = u64_at(s + L.str_length) * kind;
	data = s + ((state & PY_STR_ASCII) ? L.str_ascii : L.str_compact);
	return n >= 8 ? u64_at(data + n - 8) : mem8(data, n);
}

/* Code object @code's fingerprint (livetable.h), from its memory in place. */
static inline uint32_t fingerprint(uint64_t code)
{
	struct lt_py_code_id id = {
		.qualname = u64_at(code + L.co_qualname), .file = u64_at(code + L.co_filename),
		.table = u64_at(code + L.co_linetable), .firstline = u32_at(code + L.co_firstlineno),
		/* ob_size (a PyVarObject's, at bytes_size as a bytes object's): its code units */
		.units = u64_at(code + L.bytes_size),
	};

	id.name_tail = str_tail(id.qualname);
	id.file_tail = str_tail(id.file);
	if (id.table && !(id.table & 7)) {
		id.table_len = u64_at(id.table + L.bytes_size);
		id.table_head = mem8(id.table + L.bytes_data, id.table_len);
	}
	return lt_py_fingerprint(&id);
}

/* What frame_words() made of a frame. */
enum frame_kind {
	FRAME_BAD,	/* not a frame: the walk stops */
	FRAME_SHIM,	/* 3.12+: the eval loop's shim (owner 3), no code: ends a run */
	FRAME_CODE,	/* a code object's: 2 words */
};

/* A frame's fields, and its code object's fingerprint: 2 words into @w. */
static inline enum frame_kind frame_words(uint64_t frame, uint64_t *w, uint64_t *prev)
{
	uint64_t code = u64_at(frame + L.fr_code), instr = u64_at(frame + L.fr_instr);
	bool entry = false;
	int64_t index;

	*prev = u64_at(frame + L.fr_previous);
	if (L.fr_entry >= 0)
		entry = *(const uint8_t *)(uintptr_t)(frame + (uint32_t)L.fr_entry);
	else if (*(const uint8_t *)(uintptr_t)(frame + L.fr_owner) == PY_OWNER_CSTACK)
		return FRAME_SHIM;	/* 3.12: the trampoline's code; 3.13: None */
	if (!code || (code & 7) || code > LT_PY_ADDR)
		return FRAME_BAD;
	if (L.fr_entry < 0 && u64_at(code + L.ob_type) != code_type)
		return FRAME_BAD;
	index = (int64_t)(instr - code - L.co_code) >> 1;
	w[0] = LT_PY_WORD | (entry ? LT_PY_ENTRY : 0) | code;
	w[1] = lt_py_pos(fingerprint(code), index < INT32_MIN || index > INT32_MAX ?
			 LT_PY_INDEX_BAD : (int32_t)index);
	return FRAME_CODE;
}

/* --- code objects' records ------------------------------------------------ */

#define NAME_BYTES 1024		/* a name's bytes kept (frametab.h cuts there too) */
#define FILE_BYTES 2048		/* ... a file's */

/*
 * Is (@code, @fp) recorded? @add: say it is now. A slot is taken by its
 * code word (compare-and-exchange from 0), then its fingerprint, then
 * made ready: a slot half made is not a match (a record written twice,
 * which heapsnoop takes once); a full table forgets nothing (records
 * written again).
 */
static bool seen_has(uint64_t code, uint32_t fp, bool add)
{
	uint64_t h = (code >> 3) * 0x9e3779b97f4a7c15ull ^ fp;

	for (uint32_t i = 0, k = (uint32_t)(h >> 40); i < 64; i++, k++) {
		struct seen_slot *sl = &seen[k & (SEEN_SLOTS - 1)];
		uint64_t v = __atomic_load_n(&sl->code, __ATOMIC_RELAXED);

		if (v == code && __atomic_load_n(&sl->ready, __ATOMIC_ACQUIRE) && sl->fp == fp)
			return true;
		if (!v) {
			if (add && __atomic_compare_exchange_n(&sl->code, &v, code, false,
							       __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
				sl->fp = fp;
				__atomic_store_n(&sl->ready, 1, __ATOMIC_RELEASE);
			}
			return false;
		}
	}
	return false;
}

struct str_view {
	const void *data;
	uint32_t n;		/* characters */
	uint32_t kind;		/* bytes a character */
};

/* The compact str at @s, at most @max bytes of it (whole characters). */
static void str_of(uint64_t s, uint32_t max, struct str_view *v)
{
	uint32_t state, kind;
	uint64_t len;

	*v = (struct str_view){ "", 0, 1 };
	if (!s || (s & 7))
		return;
	state = u32_at(s + L.str_state);
	len = u64_at(s + L.str_length);
	kind = PY_STR_KIND(state);
	if (!(state & PY_STR_COMPACT) || (kind != 1 && kind != 2 && kind != 4) ||
	    ((state & PY_STR_ASCII) && kind != 1))
		return;
	if (len > max / kind)
		len = max / kind;
	v->data = (const void *)(uintptr_t)(s + ((state & PY_STR_ASCII) ? L.str_ascii : L.str_compact));
	v->n = (uint32_t)len;
	v->kind = kind;
}

/*
 * Code object @code's record (livetable.h, LT_PY_CODEREC), once: its
 * name, file and location table copied into the table while the code
 * object is alive (a module's code dies once it has run, exec()'d code
 * at once), so heapsnoop names its frames without reading the process.
 */
static void code_record(uint64_t code, uint32_t fp)
{
	uint64_t table, tlen = 0, *w;
	struct str_view name, file;
	size_t nb, fb, keep, room;
	uint32_t words, id;
	char *b;

	if (seen_has(code, fp, false))
		return;
	str_of(u64_at(code + L.co_qualname), NAME_BYTES, &name);
	str_of(u64_at(code + L.co_filename), FILE_BYTES, &file);
	table = u64_at(code + L.co_linetable);
	if (table && !(table & 7))
		tlen = u64_at(table + L.bytes_size);
	nb = (size_t)name.n * name.kind;
	fb = (size_t)file.n * file.kind;
	room = (LT_MAX_DEPTH - LT_PY_CODEREC_WORDS) * 8 - nb - fb;
	keep = tlen < room ? tlen : room;
	words = LT_PY_CODEREC_WORDS + (uint32_t)((nb + fb + keep + 7) / 8);
	w = ltstacks__reserve(words, &id);
	if (!w)
		return;
	w[0] = LT_PY_CODEREC;
	w[1] = code;
	w[2] = fp | (uint64_t)u32_at(code + L.co_firstlineno) << 32;
	w[3] = u32_at(code + (uint32_t)L.co_firsttraceable) | (uint64_t)keep << 32;
	w[4] = name.n | name.kind << 24 | (uint64_t)file.n << 32 | (uint64_t)file.kind << 56;
	w[5] = tlen;
	w[words - 1] = 0;	/* the padding */
	b = (char *)(w + LT_PY_CODEREC_WORDS);
	memcpy(b, name.data, nb);
	memcpy(b + nb, file.data, fb);
	if (keep)
		memcpy(b + nb + fb, (const void *)(uintptr_t)(table + L.bytes_data), keep);
	ltstacks__commit(id, words);
	seen_has(code, fp, true);
}

/* A new stack's code objects recorded, each once (@buf[@depth..@n): its pairs). */
static void code_records(const uint64_t *buf, uint32_t depth, uint32_t n)
{
	for (uint32_t i = depth; i + 1 < n; i += 2)
		code_record(buf[i] & LT_PY_ADDR, lt_py_fp(buf[i + 1]));
}

/* --- the walk -------------------------------------------------------------- */

/*
 * @frames and the chain from @frame into a buffer of a record's room,
 * interned. From 3.12 the frame inside each shim ends its loop's run, as
 * 3.11's is_entry frame does; a shim with no frame inside it (a loop
 * entered or leaving: a finalizer run as a frame is freed) ends an empty
 * run, which a pair of the next frame's code object at index -1 (a frame
 * not started, named by no one: plpython.c's rule) says with
 * LT_PY_ENTRY, so each eval loop's frame on the native stack keeps its
 * own run.
 */
static __attribute__((noinline)) uint32_t with_python(const uint64_t *frames, uint32_t depth,
						      uint32_t cut, uint64_t frame)
{
	uint64_t buf[LT_MAX_DEPTH], w[2], prev;
	uint32_t n = depth, id, empty = 0;
	bool open = false;	/* a frame since the last shim */

	memcpy(buf, frames, depth * sizeof(*frames));
	/* Shims add no words of their own: a chain of them ends at LT_MAX_DEPTH steps. */
	for (uint32_t steps = 0; frame && !(frame & 7) && steps < LT_MAX_DEPTH; steps++) {
		enum frame_kind k = frame_words(frame, w, &prev);

		if (k == FRAME_BAD)
			break;
		if (k == FRAME_SHIM) {
			if (open)
				buf[n - 2] |= LT_PY_ENTRY;
			else
				empty++;
			open = false;
		} else {
			for (; empty && n + 4 <= LT_MAX_DEPTH; empty--, n += 2) {
				buf[n] = w[0] | LT_PY_ENTRY;
				buf[n + 1] = lt_py_pos(lt_py_fp(w[1]), -1);
			}
			if (empty || n + 2 > LT_MAX_DEPTH)
				break;
			buf[n] = w[0];
			buf[n + 1] = w[1];
			n += 2;
			open = true;
		}
		frame = prev;
	}
	/* The chain goes on past what was kept: heapsnoop leaves the outer eval frames native. */
	if (frame && n > depth)
		buf[n - 2] |= LT_PY_MORE;
	/* A stack seen before: its code objects are recorded. */
	id = ltstacks__find(buf, n, cut);
	if (id)
		return id;
	if (seen)
		code_records(buf, depth, n);
	return ltstacks__intern(buf, n, cut);
}

uint32_t pywalk__intern(const uint64_t *frames, uint32_t depth, uint32_t cut)
{
	uint64_t ts = (uint64_t)(uintptr_t)this_tstate(), cf, frame = 0;

	if (ts) {
		cf = u64_at(ts + L.ts_frame);
		if (L.cf_frame < 0)
			frame = cf;	/* 3.13: the thread's current frame itself */
		else if (cf && !(cf & 7))
			frame = u64_at(cf + (uint32_t)L.cf_frame);
	}
	if (!frame || depth + 2 > LT_MAX_DEPTH)
		return ltstacks__intern(frames, depth, cut);
	return with_python(frames, depth, cut, frame);
}
