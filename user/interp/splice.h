/* SPDX-License-Identifier: MIT */
/*
 * splice.h - an allocation's interpreter frames put among its native
 * ones: each native frame in the interpreter's eval loop (CPython's
 * _PyEval_EvalFrameDefault, its .cold part included) stands for one
 * segment of the interpreter's frames, the frames one run of the loop
 * executes (3.11 runs a whole chain of Python calls in one C frame; the
 * chain's is_entry frames, or 3.12's shim frames, end the segments), and
 * is replaced by them, innermost first; the native frames between (the
 * C functions a call went through: PyObject_Vectorcall, slot wrappers,
 * an extension's own) stay where they are.
 *
 * Both lists are innermost first and complete from the inside, so the
 * k-th eval frame is the k-th segment's. When the counts differ, what
 * can be placed is, and the stack says why the rest is not exact:
 *   - the native walk was cut (--stack-copy, depth, a frame not
 *     recovered): the segments past it follow the last frame, after the
 *     cut (the stack is already marked cut);
 *   - the interpreter's chain was cut (more frames than are read): the
 *     outer eval frames stay native frames (marked cut by the caller);
 *   - neither: a mismatch (greenlets, a PEP 523 frame evaluator, an eval
 *     loop entered without a frame): the segments left are put at the
 *     outermost eval frame, and SPLICE_ORDER says the interpreter frames
 *     are not placed exactly (cut=order): never a wrong order unmarked.
 */
#ifndef HEAPSNOOP_SPLICE_H
#define HEAPSNOOP_SPLICE_H

#include <stdbool.h>
#include <stdint.h>

/* splice__frames() result flags */
#define SPLICE_ORDER	(1u << 0)	/* the interpreter frames are not placed exactly */
#define SPLICE_DEPTH	(1u << 1)	/* more frames than @max: the outer ones dropped */

struct splice_in {
	const uint64_t *native;		/* return addresses, innermost first */
	uint32_t nnative;
	bool native_cut;		/* the native walk did not reach the stack's end */
	const uint64_t *iframes;	/* the interpreter frames' addresses, innermost first */
	const uint32_t *seg_end;	/* segment k is iframes[seg_end[k-1] .. seg_end[k]) */
	uint32_t nseg;
	bool interp_cut;		/* the interpreter's chain went on past what was read */
	/* Is return address @ra (minus one: its call) in the eval loop? */
	bool (*is_eval)(void *ctx, uint64_t ra);
	void *ctx;
};

/*
 * The spliced frames of @in into @out, at most @max; *@flags gets
 * SPLICE_*. Returns how many.
 */
uint32_t splice__frames(const struct splice_in *in, uint64_t *out, uint32_t max, uint32_t *flags);

#endif /* HEAPSNOOP_SPLICE_H */
