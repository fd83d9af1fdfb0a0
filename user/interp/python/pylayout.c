// SPDX-License-Identifier: MIT
/*
 * pylayout.c - CPython's layouts per version (see pylayout.h for where
 * each number comes from).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pylayout.h"

/* What 3.11 to 3.14 share, with the GIL (x86-64 and arm64: LP64). */
static const struct py_layout common = {
	.fr_previous = 8,
	.fr_instr = 56,
	.fr_entry = -1,
	.fr_read = 72,		/* up to localsplus */
	.co_filename = 112,
	.co_name = 120,
	.co_qualname = 128,
	.co_linetable = 136,
	.ob_type = 8,
	.tp_dealloc = 48,
	.str_length = 16,
	.str_state = 32,
	.str_ascii = 40,
	.str_compact = 56,
	.bytes_size = 16,
	.bytes_data = 32,
};

/*
 * What _Py_DebugOffsets does not say of a 3.13 or later build: its TSS
 * key's offset in _PyRuntime, PyCodeObject._co_firsttraceable,
 * PyTypeObject.tp_dealloc. Returns 0, or -ENOTSUP for a minor version or
 * build not known.
 */
static int table_extras(uint32_t minor, bool free_threaded, struct py_layout *l)
{
	switch (minor) {
	case 0x030d:	/* 3.13: trixie's headers; 3.13t: 3.13.5's with Py_GIL_DISABLED */
		l->rt_tss_key = 2160;
		l->co_firsttraceable = free_threaded ? 200 : 184;
		l->tp_dealloc = free_threaded ? 64 : 48;	/* PyObject 32 bytes, not 16 */
		return 0;
	case 0x030e:	/* 3.14: 3.14.7's headers, Py_GIL_DISABLED or not */
		l->rt_tss_key = 2336;
		l->co_firsttraceable = free_threaded ? 208 : 192;
		l->tp_dealloc = free_threaded ? 64 : 48;	/* PyObject 32 bytes, not 16 */
		return 0;
	default:
		return -ENOTSUP;
	}
}

int py_layout__table(uint32_t version, struct py_layout *l)
{
	*l = common;
	l->version = version;
	l->fr_tlbc = -1;
	l->co_tlbc = -1;
	switch (PY_MINOR_OF(version)) {
	case 0x030b:	/* 3.11 */
#ifdef __aarch64__
		/* The GIL's two pthread_mutex_t before it: 48 bytes each, 40 on x86-64. */
		l->rt_tss_key = 608;
#else
		l->rt_tss_key = 592;	/* gilstate.autoTSSkey */
#endif
		l->ts_frame = 56;	/* cframe */
		l->cf_frame = 8;
		l->fr_code = 32;
		l->fr_previous = 48;
		l->fr_owner = 69;
		l->fr_entry = 68;
		l->co_firstlineno = 72;
		l->co_firsttraceable = 168;
		l->co_code = 184;
		l->str_ascii = 48;
		l->str_compact = 72;
		return 0;
	case 0x030c:	/* 3.12: by hand, checked on a 3.12.1 built from source */
		l->rt_tss_key = 1544;	/* autoTSSkey: 3.12.1's DWARF, 3.12.10 live */
		l->ts_frame = 56;	/* cframe */
		l->cf_frame = 0;
		l->fr_code = 0;
		l->fr_owner = 70;
		l->co_firstlineno = 68;
		l->co_firsttraceable = 176;
		l->co_code = 192;
		return 0;
	case 0x030d:	/* 3.13 */
		l->ts_frame = 72;	/* current_frame */
		l->cf_frame = -1;
		l->fr_code = 0;	/* f_executable */
		l->fr_owner = 70;
		l->co_firstlineno = 68;
		l->co_code = 200;
		return table_extras(0x030d, false, l);
	case 0x030e:	/* 3.14 */
		l->ts_frame = 72;	/* current_frame */
		l->cf_frame = -1;
		l->fr_code = 0;	/* f_executable, a _PyStackRef */
		l->fr_code_tag = 3;
		l->fr_owner = 74;
		l->fr_read = 80;
		l->co_firstlineno = 68;
		l->co_code = 208;
		return table_extras(0x030e, false, l);
	default:
		return -ENOTSUP;
	}
}

/*
 * Where each field py_layout__from_debug_offsets() reads is in a
 * version's _Py_DebugOffsets: its word after the 8-byte cookie; -1: none.
 */
struct do_map {
	uint32_t minor;		/* PY_MINOR_OF */
	int words;		/* the struct's words after its cookie */
	int rt_size;
	int ts_size, ts_current_frame;
	int if_size, if_previous, if_executable, if_instr_ptr, if_owner, if_tlbc_index;
	int co_size, co_filename, co_name, co_qualname, co_linetable, co_firstlineno;
	int co_code_adaptive, co_tlbc;
	int ob_size, ob_type;
	int by_size, by_ob_size, by_ob_sval;
	int un_size, un_state, un_length, un_ascii_size;
};

static const struct do_map do_maps[] = {
	/* 3.13's pycore_runtime.h */
	{ .minor = 0x030d, .words = 72, .rt_size = 2, .ts_size = 18, .ts_current_frame = 22,
	  .if_size = 27, .if_previous = 28, .if_executable = 29, .if_instr_ptr = 30,
	  .if_owner = 32, .if_tlbc_index = -1, .co_size = 33, .co_filename = 34,
	  .co_name = 35, .co_qualname = 36, .co_linetable = 37, .co_firstlineno = 38,
	  .co_code_adaptive = 42, .co_tlbc = -1, .ob_size = 43, .ob_type = 44,
	  .by_size = 63, .by_ob_size = 64, .by_ob_sval = 65, .un_size = 66, .un_state = 67,
	  .un_length = 68, .un_ascii_size = 69 },
	/*
	 * 3.14's pycore_debug_offsets.h: the interpreter state's 16 words
	 * (3.13: 13), the thread state's status, the frame's stackpointer
	 * and tlbc_index, the code object's co_tlbc, a set's, generators',
	 * lists' nodes and the remote debugger's words.
	 */
	{ .minor = 0x030e, .words = 94, .rt_size = 2, .ts_size = 21, .ts_current_frame = 25,
	  .if_size = 30, .if_previous = 31, .if_executable = 32, .if_instr_ptr = 33,
	  .if_owner = 35, .if_tlbc_index = 37, .co_size = 38, .co_filename = 39,
	  .co_name = 40, .co_qualname = 41, .co_linetable = 42, .co_firstlineno = 43,
	  .co_code_adaptive = 47, .co_tlbc = 48, .ob_size = 49, .ob_type = 50,
	  .by_size = 73, .by_ob_size = 74, .by_ob_sval = 75, .un_size = 76, .un_state = 77,
	  .un_length = 78, .un_ascii_size = 79 },
};

static uint64_t word(const unsigned char *blob, int i)
{
	uint64_t v;

	memcpy(&v, blob + 8 + 8 * i, sizeof(v));
	return v;
}

/* Is field @off of @width bytes inside a struct of @size bytes, and small? */
static int inside(uint64_t off, uint64_t width, uint64_t size)
{
	return size < (1u << 20) && off + width <= size;
}

__attribute__((format(printf, 3, 4)))
static int refuse(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (why && cap) {
		va_start(ap, fmt);
		vsnprintf(why, cap, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int py_layout__from_debug_offsets(const void *blob, size_t len, uint32_t version,
				  uint64_t runtime_size, struct py_layout *l, char *why,
				  size_t cap)
{
	const unsigned char *b = blob;
	const struct do_map *m = NULL;
	uint64_t ts, fr, co, un, by, ob, dver, ft;
	char v[32];

	if (PY_MINOR_OF(version) < 0x030d) {
		refuse(why, cap, "Python %s has no _Py_DebugOffsets (3.13 and later have)",
		       py_layout__version_str(version, v, sizeof(v)));
		return -ENOTSUP;
	}
	if (len < 16 || memcmp(b, "xdebugpy", 8)) {
		refuse(why, cap, "_Py_DebugOffsets cookie (\"xdebugpy\") not found at the start "
		       "of _PyRuntime: not a 3.13 or later build, or one that moved it; heapsnoop "
		       "needs it to read the frames of 3.13 and later (--no-interp: native "
		       "frames only)");
		return -ENOTSUP;
	}
	memcpy(&dver, b + 8, sizeof(dver));
	for (size_t i = 0; i < sizeof(do_maps) / sizeof(do_maps[0]); i++)
		if (PY_MINOR_OF(dver) == do_maps[i].minor && dver >> 32 == 0)
			m = &do_maps[i];
	if (!m) {
		refuse(why, cap, "_Py_DebugOffsets of version %#llx: a debug-offsets layout this "
		       "heapsnoop does not know (it reads 3.13's and 3.14's); a newer heapsnoop "
		       "may (--no-interp: native frames only)", (unsigned long long)dver);
		return -ENOTSUP;
	}
	if (dver != version)
		return refuse(why, cap, "its _Py_DebugOffsets says version %#llx, its Py_Version "
			      "%#x: a build whose runtime state is not what it says",
			      (unsigned long long)dver, version);
	if (len < 8 + 8 * (size_t)m->words)
		return refuse(why, cap, "_Py_DebugOffsets: %zu bytes read, its layout has %d",
			      len, 8 + 8 * m->words);
	ft = word(b, 1);
	if (ft > 1)
		return refuse(why, cap, "_Py_DebugOffsets' free_threaded is %llu, not 0 or 1",
			      (unsigned long long)ft);
	if (word(b, m->rt_size) != runtime_size)
		return refuse(why, cap, "_Py_DebugOffsets says _PyRuntime is %llu bytes, its "
			      "symbol %llu", (unsigned long long)word(b, m->rt_size),
			      (unsigned long long)runtime_size);
	*l = common;
	l->version = version;
	l->free_threaded = (uint8_t)ft;
	if (table_extras(m->minor, ft, l)) {
		refuse(why, cap, "Python %s%s: heapsnoop does not know where its runtime keeps its "
		       "thread-state key (it knows 3.13's and 3.14's, free-threaded or not)",
		       py_layout__version_str(version, v, sizeof(v)), ft ? " (free-threaded)" : "");
		return -ENOTSUP;
	}
	ts = word(b, m->ts_size);
	fr = word(b, m->if_size);
	co = word(b, m->co_size);
	un = word(b, m->un_size);
	by = word(b, m->by_size);
	ob = word(b, m->ob_size);
	if (!inside(word(b, m->ts_current_frame), 8, ts) ||
	    !inside(word(b, m->if_previous), 8, fr) || !inside(word(b, m->if_executable), 8, fr) ||
	    !inside(word(b, m->if_instr_ptr), 8, fr) || !inside(word(b, m->if_owner), 1, fr) ||
	    !inside(word(b, m->co_filename), 8, co) || !inside(word(b, m->co_name), 8, co) ||
	    !inside(word(b, m->co_qualname), 8, co) || !inside(word(b, m->co_linetable), 8, co) ||
	    !inside(word(b, m->co_firstlineno), 4, co) ||
	    !inside(word(b, m->co_code_adaptive), 2, co) ||
	    !inside(word(b, m->un_state), 4, un) || !inside(word(b, m->un_length), 8, un) ||
	    word(b, m->un_ascii_size) > un || !inside(word(b, m->by_ob_size), 8, by) ||
	    word(b, m->by_ob_sval) > by || !inside(word(b, m->ob_type), 8, ob) ||
	    (word(b, m->ob_type) & 7) || (word(b, m->if_previous) & 7) ||
	    (word(b, m->if_executable) & 7) || (word(b, m->if_instr_ptr) & 7))
		return refuse(why, cap, "its _Py_DebugOffsets (version %#llx) has an offset "
			      "outside its struct or not aligned: not the layout of its version",
			      (unsigned long long)dver);
	l->ts_frame = (uint32_t)word(b, m->ts_current_frame);
	l->cf_frame = -1;
	l->fr_previous = (uint32_t)word(b, m->if_previous);
	l->fr_code = (uint32_t)word(b, m->if_executable);
	l->fr_code_tag = m->minor >= 0x030e ? 3 : 0;	/* Py_TAG_BITS: 1, free-threaded 3 */
	l->fr_instr = (uint32_t)word(b, m->if_instr_ptr);
	l->fr_owner = (uint32_t)word(b, m->if_owner);
	l->fr_entry = -1;
	l->fr_tlbc = -1;
	l->co_tlbc = -1;
	if (ft && m->if_tlbc_index >= 0 && m->co_tlbc >= 0) {
		if (!inside(word(b, m->if_tlbc_index), 4, fr) || (word(b, m->if_tlbc_index) & 3) ||
		    !inside(word(b, m->co_tlbc), 8, co) || (word(b, m->co_tlbc) & 7))
			return refuse(why, cap, "its _Py_DebugOffsets' thread-local bytecode "
				      "offsets are outside their structs");
		l->fr_tlbc = (int32_t)word(b, m->if_tlbc_index);
		l->co_tlbc = (int32_t)word(b, m->co_tlbc);
	}
	l->co_filename = (uint32_t)word(b, m->co_filename);
	l->co_name = (uint32_t)word(b, m->co_name);
	l->co_qualname = (uint32_t)word(b, m->co_qualname);
	l->co_linetable = (uint32_t)word(b, m->co_linetable);
	l->co_firstlineno = (uint32_t)word(b, m->co_firstlineno);
	l->co_code = (uint32_t)word(b, m->co_code_adaptive);
	l->ob_type = (uint32_t)word(b, m->ob_type);
	l->str_state = (uint32_t)word(b, m->un_state);
	l->str_length = (uint32_t)word(b, m->un_length);
	l->str_ascii = (uint32_t)word(b, m->un_ascii_size);
	/* PyCompactUnicodeObject: the ASCII header, utf8_length and utf8. */
	l->str_compact = l->str_ascii + 16;
	/* 3.14t: unsigned char interned (atomic), not interned:2 */
	l->str_state_shift = ft && m->minor >= 0x030e ? 6 : 0;
	l->bytes_size = (uint32_t)word(b, m->by_ob_size);
	l->bytes_data = (uint32_t)word(b, m->by_ob_sval);
	/* A frame is read up to its last field the walk uses. */
	l->fr_read = l->fr_owner + 1;
	if (l->fr_read < l->fr_instr + 8)
		l->fr_read = l->fr_instr + 8;
	if (l->fr_read < l->fr_previous + 8)
		l->fr_read = l->fr_previous + 8;
	if (l->fr_read < l->fr_code + 8)
		l->fr_read = l->fr_code + 8;
	if (l->fr_tlbc >= 0 && l->fr_read < (uint32_t)l->fr_tlbc + 4)
		l->fr_read = (uint32_t)l->fr_tlbc + 4;
	if (l->fr_read > 128)
		return refuse(why, cap, "its frames' fields reach %u bytes in, heapsnoop reads "
			      "128 at most", l->fr_read);
	return 0;
}

const char *py_layout__version_str(uint32_t version, char *buf, size_t cap)
{
	snprintf(buf, cap, "%u.%u.%u", version >> 24, (version >> 16) & 0xff,
		 (version >> 8) & 0xff);
	return buf;
}
