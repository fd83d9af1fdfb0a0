// SPDX-License-Identifier: MIT
/*
 * pywalk.c - the calling thread's CPython frames in the process (see
 * pywalk.h). The thread state is the one CPython's own
 * PyGILState_GetThisThreadState() returns (pthread_getspecific of
 * _PyRuntime's autoTSSkey: no lock, no allocation, right on a thread that
 * released the GIL to allocate), the one bpf/python.h reads from outside;
 * then tstate->cframe->current_frame and each frame's previous, the
 * fields at pylayout.c's offsets, loaded in place (the thread's own
 * frames cannot change under it while it allocates). Each frame keeps
 * its code object, its instruction's index in the code units, 3.11's
 * is_entry, and a fingerprint of the code object (livetable.h,
 * lt_py_fingerprint(): some of its addresses and contents). The first
 * new stack that holds a code object copies it into the table (its
 * name, file and location table: LT_PY_CODEREC), which heapsnoop names
 * its frames by, after the process's death too; a code object freed and
 * another made at its address has another fingerprint, another record.
 * docs/COLLECTOR.md, "Python frames".
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "interp/pylayout.h"
#include "livetable.h"
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

static inline uint64_t u64_at(uint64_t addr)
{
	return *(const uint64_t *)(uintptr_t)addr;
}

static inline uint32_t u32_at(uint64_t addr)
{
	return *(const uint32_t *)(uintptr_t)addr;
}

int pywalk__init(void)
{
	const uint32_t *version = dlsym(RTLD_DEFAULT, "Py_Version");
	void *runtime = dlsym(RTLD_DEFAULT, "_PyRuntime");
	void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	char v[32];

	this_tstate = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (!version || !runtime || !eval || !this_tstate)
		return -ENOENT;
	/* 3.11: the table's layout, checked by the tracer's tests on Debian's binary. */
	if (PY_MINOR_OF(*version) != 0x030b || py_layout__table(*version, &L)) {
		dprintf(2, "heapsnoop-preload: pid %d: Python %s: its frames are not read in "
			"--preload mode (3.11 only; heapsnoop without --preload reads 3.11 to "
			"3.13)\n", (int)getpid(), py_layout__version_str(*version, v, sizeof(v)));
		return -ENOTSUP;
	}
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

/* A frame's fields, and its code object's fingerprint: 2 words into @w. */
static inline bool frame_words(uint64_t frame, uint64_t *w, uint64_t *prev)
{
	uint64_t code = u64_at(frame + L.fr_code), instr = u64_at(frame + L.fr_instr);
	bool entry = *(const uint8_t *)(uintptr_t)(frame + (uint32_t)L.fr_entry);
	int64_t index;

	if (!code || (code & 7) || code > LT_PY_ADDR)
		return false;
	index = (int64_t)(instr - code - L.co_code) >> 1;
	w[0] = LT_PY_WORD | (entry ? LT_PY_ENTRY : 0) | code;
	w[1] = lt_py_pos(fingerprint(code), index < INT32_MIN || index > INT32_MAX ?
			 LT_PY_INDEX_BAD : (int32_t)index);
	*prev = u64_at(frame + L.fr_previous);
	return true;
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

/* @frames and the chain from @frame into a buffer of a record's room, interned. */
static __attribute__((noinline)) uint32_t with_python(const uint64_t *frames, uint32_t depth,
						      uint32_t cut, uint64_t frame)
{
	uint64_t buf[LT_MAX_DEPTH], prev;
	uint32_t n = depth, id;

	memcpy(buf, frames, depth * sizeof(*frames));
	while (frame && !(frame & 7) && n + 2 <= LT_MAX_DEPTH && frame_words(frame, buf + n, &prev)) {
		n += 2;
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
		if (cf && !(cf & 7))
			frame = u64_at(cf + (uint32_t)L.cf_frame);
	}
	if (!frame || depth + 2 > LT_MAX_DEPTH)
		return ltstacks__intern(frames, depth, cut);
	return with_python(frames, depth, cut, frame);
}
