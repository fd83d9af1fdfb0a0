// SPDX-License-Identifier: MIT
/*
 * pylayout.c - CPython's layouts per version (see pylayout.h for where
 * each number comes from).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pylayout.h"

/* What 3.11, 3.12 and 3.13 share (x86-64 and arm64: LP64). */
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

int py_layout__table(uint32_t version, struct py_layout *l)
{
	*l = common;
	l->version = version;
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
		l->rt_tss_key = 2160;
		l->ts_frame = 72;	/* current_frame */
		l->cf_frame = -1;
		l->fr_code = 0;	/* f_executable */
		l->fr_owner = 70;
		l->co_firstlineno = 68;
		l->co_firsttraceable = 184;
		l->co_code = 200;
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* _Py_DebugOffsets' words after its 8-byte cookie (3.13's pycore_runtime.h). */
enum {
	DO_VERSION = 0,
	DO_RT_SIZE = 2,
	DO_TS_SIZE = 18,
	DO_TS_CURRENT_FRAME = 22,
	DO_IF_SIZE = 27,
	DO_IF_PREVIOUS = 28,
	DO_IF_EXECUTABLE = 29,
	DO_IF_INSTR_PTR = 30,
	DO_IF_OWNER = 32,
	DO_CO_SIZE = 33,
	DO_CO_FILENAME = 34,
	DO_CO_NAME = 35,
	DO_CO_QUALNAME = 36,
	DO_CO_LINETABLE = 37,
	DO_CO_FIRSTLINENO = 38,
	DO_CO_CODE_ADAPTIVE = 42,
	DO_OB_TYPE = 44,
	DO_BY_SIZE = 63,
	DO_BY_OB_SIZE = 64,
	DO_BY_OB_SVAL = 65,
	DO_UN_SIZE = 66,
	DO_UN_STATE = 67,
	DO_UN_LENGTH = 68,
	DO_UN_ASCII_SIZE = 69,
	DO__WORDS = 72,
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

int py_layout__from_debug_offsets(const void *blob, size_t len, uint32_t version,
				  uint64_t runtime_size, struct py_layout *l)
{
	const unsigned char *b = blob;
	uint64_t ts, fr, co, un, by;
	int err;

	if (PY_MINOR_OF(version) < 0x030d)
		return -ENOTSUP;
	err = py_layout__table(version, l);
	if (err)
		return err;
	if (len < PY_DEBUG_OFFSETS_SIZE || memcmp(b, "xdebugpy", 8) ||
	    word(b, DO_VERSION) != version || word(b, DO_RT_SIZE) != runtime_size)
		return -EINVAL;
	ts = word(b, DO_TS_SIZE);
	fr = word(b, DO_IF_SIZE);
	co = word(b, DO_CO_SIZE);
	un = word(b, DO_UN_SIZE);
	by = word(b, DO_BY_SIZE);
	if (!inside(word(b, DO_TS_CURRENT_FRAME), 8, ts) ||
	    !inside(word(b, DO_IF_PREVIOUS), 8, fr) || !inside(word(b, DO_IF_EXECUTABLE), 8, fr) ||
	    !inside(word(b, DO_IF_INSTR_PTR), 8, fr) || !inside(word(b, DO_IF_OWNER), 1, fr) ||
	    !inside(word(b, DO_CO_FILENAME), 8, co) || !inside(word(b, DO_CO_NAME), 8, co) ||
	    !inside(word(b, DO_CO_QUALNAME), 8, co) || !inside(word(b, DO_CO_LINETABLE), 8, co) ||
	    !inside(word(b, DO_CO_FIRSTLINENO), 4, co) ||
	    !inside(word(b, DO_CO_CODE_ADAPTIVE), 2, co) ||
	    !inside(word(b, DO_UN_STATE), 4, un) || !inside(word(b, DO_UN_LENGTH), 8, un) ||
	    word(b, DO_UN_ASCII_SIZE) > un || !inside(word(b, DO_BY_OB_SIZE), 8, by) ||
	    word(b, DO_BY_OB_SVAL) > by || word(b, DO_OB_TYPE) != 8)
		return -EINVAL;
	l->ts_frame = (uint32_t)word(b, DO_TS_CURRENT_FRAME);
	l->cf_frame = -1;
	l->fr_previous = (uint32_t)word(b, DO_IF_PREVIOUS);
	l->fr_code = (uint32_t)word(b, DO_IF_EXECUTABLE);
	l->fr_instr = (uint32_t)word(b, DO_IF_INSTR_PTR);
	l->fr_owner = (uint32_t)word(b, DO_IF_OWNER);
	l->fr_entry = -1;
	l->co_filename = (uint32_t)word(b, DO_CO_FILENAME);
	l->co_name = (uint32_t)word(b, DO_CO_NAME);
	l->co_qualname = (uint32_t)word(b, DO_CO_QUALNAME);
	l->co_linetable = (uint32_t)word(b, DO_CO_LINETABLE);
	l->co_firstlineno = (uint32_t)word(b, DO_CO_FIRSTLINENO);
	l->co_code = (uint32_t)word(b, DO_CO_CODE_ADAPTIVE);
	l->str_state = (uint32_t)word(b, DO_UN_STATE);
	l->str_length = (uint32_t)word(b, DO_UN_LENGTH);
	l->str_ascii = (uint32_t)word(b, DO_UN_ASCII_SIZE);
	l->bytes_size = (uint32_t)word(b, DO_BY_OB_SIZE);
	l->bytes_data = (uint32_t)word(b, DO_BY_OB_SVAL);
	/* A frame is read up to its last field the walk uses. */
	l->fr_read = l->fr_owner + 1;
	if (l->fr_read < l->fr_instr + 8)
		l->fr_read = l->fr_instr + 8;
	if (l->fr_read < l->fr_previous + 8)
		l->fr_read = l->fr_previous + 8;
	if (l->fr_read < l->fr_code + 8)
		l->fr_read = l->fr_code + 8;
	return l->fr_read <= 128 ? 0 : -EINVAL;
}

const char *py_layout__version_str(uint32_t version, char *buf, size_t cap)
{
	snprintf(buf, cap, "%u.%u.%u", version >> 24, (version >> 16) & 0xff,
		 (version >> 8) & 0xff);
	return buf;
}
