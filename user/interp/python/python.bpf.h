/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python.h - CPython's frames at an allocation, read in BPF (included by
 * bpf/interp.bpf.h): the allocating thread's state found without the
 * process's help, then its chain of _PyInterpreterFrame, one read each.
 *
 * The thread state: the one CPython's own PyGILState_GetThisThreadState()
 * returns, pthread_getspecific(_PyRuntime.autoTSSkey), read as glibc does
 * through the thread's struct pthread (its specific_1stblock, or for keys
 * of 32 and more the second level), the offsets the loader found in the
 * process's C library (its _thread_db_* descriptions, what debuggers
 * read). Right for every thread, one that released the GIL to allocate
 * included (200 of 200 in the research; "the GIL holder" was right for 0
 * of them). A thread that is not a Python thread has none: no frames.
 *
 * The frames: tstate->cframe->current_frame (3.11, 3.12) or
 * tstate->current_frame (3.13, 3.14), then ->previous; 3.14's code object
 * a tagged _PyStackRef (its low bits cleared), a free-threaded 3.14's
 * instruction pointer into the thread's own copy of the code units. Each frame is one read
 * of its first fr_read bytes (72 in 3.11), from which the code object,
 * the instruction pointer, the previous frame, its owner and 3.11's
 * is_entry are taken: three 8-byte reads a frame cost 2.9 times more
 * (docs/PERFORMANCE.md). Offsets are the process's (struct hs_py_proc),
 * so fields are picked from a map value (variable offsets into the stack
 * need 5.12's verifier or later).
 */
#ifndef HEAPSNOOP_BPF_PYTHON_H
#define HEAPSNOOP_BPF_PYTHON_H

static __always_inline __u64 py_read_u64(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/*
 * The calling thread's PyThreadState, or 0 (no Python thread state on
 * this thread, or the key not made yet).
 */
static __always_inline __u64 py_thread_state(const struct hs_py_proc *py)
{
	struct task_struct *t = current_task();
	__u64 tp = HS_THREAD_POINTER(t, have_task_btf), slot;
	struct {
		__u32 initialized;
		__u32 key;
	} k;

	if (bpf_probe_read_user(&k, sizeof(k), (void *)py->tss_key) || !k.initialized)
		return 0;
	if (k.key < 32) {
		slot = tp + py->tsd_first + (__u64)k.key * py->tsd_entry;
	} else if (k.key < 1024) {
		slot = py_read_u64(tp + py->tsd_second + (__u64)(k.key / 32) * 8);
		if (!slot)
			return 0;
		slot += (__u64)(k.key % 32) * py->tsd_entry;
	} else {
		return 0;
	}
	return py_read_u64(slot + py->tsd_data);
}

/* A field of the frame copied into @f (a map value of 128 bytes). */
static __always_inline __u64 py_field(const __u8 *f, __u32 off)
{
	return *(const __u64 *)(f + (off & 0x78));
}

/*
 * Where the code units a frame of code object @code runs are: its own,
 * @own (co_code_adaptive), or in a free-threaded 3.14 the thread's copy,
 * co_tlbc->entries[@idx] (_PyCodeArray: its size, then a pointer a
 * copy; @idx the frame's tlbc_index, @co_tlbc the code object's field,
 * @fr_tlbc < 0: a build without them); two reads for a thread other than
 * the first. @own where a copy is not there.
 *
 * A global function, not inlined: the verifier checks it once, apart, and
 * the walk's loop sees one call that returns a number, not the five ways
 * out of it in each of its 128 turns (with them, Linux 6.1's verifier
 * passed its million instructions on alloc_exit).
 */
__noinline __u64 py_code_units(__u64 own, __u64 code, __s32 idx, __s32 fr_tlbc, __s32 co_tlbc)
{
	__u64 arr, n, copy;

	if (fr_tlbc < 0 || co_tlbc < 0 || idx <= 0 || idx > 4096)
		return own;
	arr = py_read_u64(code + (__u32)co_tlbc);
	if (!arr)
		return own;
	n = py_read_u64(arr);
	if ((__u64)idx >= n)
		return own;
	copy = py_read_u64(arr + 8 + (__u64)idx * 8);
	return copy ? copy : own;
}

/*
 * Walk the thread's frames into @s's record (its header's flags and
 * nr_frames, its frames) at most @max; its context word (@s's addr) the
 * thread state. Returns the frames read.
 */
static __always_inline __u32 py_walk(const struct hs_interp_proc *cfg, struct interp_scratch *s)
{
	const struct hs_py_proc *py = &cfg->py;
	struct hs_event *h = (struct hs_event *)s->rec;
	struct hs_interp_frame *fr = (struct hs_interp_frame *)(s->rec + HS_EVENT_HDR_SIZE);
	__u32 n = 0, max = cfg->max_frames, len = py->fr_read & 127;
	__u64 ts, frame;

	ts = py_thread_state(py);
	h->addr = ts;
	if (!ts)
		return 0;
	frame = py_read_u64(ts + py->ts_frame);
	if (py->cf_frame >= 0 && frame)
		frame = py_read_u64(frame + (__u32)py->cf_frame);
	for (int i = 0; i < HS_INTERP_MAX_FRAMES; i++) {
		__u64 code, instr;
		__s64 index;
		__u8 owner, entry;

		if (!frame || i >= max || i >= py_walk_bound)
			break;
		if (!len || bpf_probe_read_user(s->frame, len, (void *)frame)) {
			h->flags |= HS_EVF_STACK_FAULT;
			frame = 0;
			break;
		}
		code = py_field(s->frame, py->fr_code) & ~py->fr_code_tag;
		instr = py_field(s->frame, py->fr_instr);
		owner = s->frame[py->fr_owner & 127];
		entry = py->fr_entry >= 0 ? s->frame[py->fr_entry & 127] : 0;
		index = (__s64)(instr - py_code_units(code + py->co_code, code,
						      *(const __s32 *)(s->frame + (py->fr_tlbc & 0x7c)),
						      py->fr_tlbc, py->co_tlbc)) >> 1;
		if (index < -(1LL << 30) || index > (1LL << 30))
			index = -(1LL << 30);
		fr[i & (HS_INTERP_MAX_FRAMES - 1)].code = code;
		fr[i & (HS_INTERP_MAX_FRAMES - 1)].pos = (__u64)(__u32)(__s32)index |
			(__u64)owner << 32 | (entry ? HS_PY_POS_ENTRY : 0);
		frame = py_field(s->frame, py->fr_previous);
		n++;
	}
	if (frame)
		h->flags |= HS_EVF_TRUNCATED;
	return n;
}

/* A str object's characters into @dst (@room bytes) and *@kind. */
static __always_inline __u32 py_str_copy(const struct hs_py_proc *py, __u64 str, __u8 *dst,
					  const __u32 room, __u8 *kind)
{
	struct {
		__u32 state;
	} st;
	__u64 len = 0, data, n;
	__u32 k;

	*kind = 0;
	if (!str || bpf_probe_read_user(&len, sizeof(len), (void *)(str + py->str_length)) ||
	    bpf_probe_read_user(&st, sizeof(st), (void *)(str + py->str_state)))
		return 0;
	st.state >>= py->str_state_shift & 31;
	k = (st.state >> 2) & 7;
	if (!(st.state & 0x20) || (k != 1 && k != 2 && k != 4))
		return 0;
	data = str + ((st.state & 0x40) ? py->str_ascii : py->str_compact);
	n = len * k;
	if (n > room)
		n = room - room % k;	/* whole characters */
	barrier_var(n);
	if (n > room)
		return 0;
	if (n && bpf_probe_read_user(dst, n, (void *)data))
		return 0;
	*kind = (__u8)k;
	return (__u32)n;
}

/*
 * Code object @co's last look into @c (its table at most HS_ICODE_TABLE
 * bytes, the first ones): name, file, first line, first traceable
 * instruction, location table.
 */
static __always_inline void py_code_look(const struct hs_py_proc *py, __u64 co,
					 struct hs_interp_code *c)
{
	__u64 table, tlen = 0;

	c->firstline = 0;
	c->aux = -1;
	bpf_probe_read_user(&c->firstline, sizeof(c->firstline), (void *)(co + py->co_firstlineno));
	if (py->co_firsttraceable >= 0)
		bpf_probe_read_user(&c->aux, sizeof(c->aux),
				    (void *)(co + (__u32)py->co_firsttraceable));
	c->name_len = (__u16)py_str_copy(py, py_read_u64(co + py->co_qualname), c->name,
					 HS_ICODE_NAME, &c->name_kind);
	c->file_len = (__u16)py_str_copy(py, py_read_u64(co + py->co_filename), c->file,
					 HS_ICODE_FILE, &c->file_kind);
	c->table_len = 0;
	c->table_want = 0;
	table = py_read_u64(co + py->co_linetable);
	if (!table || bpf_probe_read_user(&tlen, sizeof(tlen), (void *)(table + py->bytes_size)))
		return;
	c->table_want = tlen > 0xffffffffULL ? 0xffffffffU : (__u32)tlen;
	if (tlen > HS_ICODE_TABLE)
		tlen = HS_ICODE_TABLE;
	barrier_var(tlen);
	if (tlen > HS_ICODE_TABLE)
		return;
	if (tlen && !bpf_probe_read_user(c->table, tlen, (void *)(table + py->bytes_data)))
		c->table_len = (__u32)tlen;
}

#endif /* HEAPSNOOP_BPF_PYTHON_H */
