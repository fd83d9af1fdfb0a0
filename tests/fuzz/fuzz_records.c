// SPDX-License-Identifier: MIT
/*
 * fuzz_records.c - libFuzzer harness for the record-line parser
 * (user/common/records/): any line parses without fault, and a record
 * that parses, written again, parses to the same values (a `frame` or
 * `jit` record's texts decoded, written escaped again, decode the same);
 * a `live` or `stack` record's tokens put together into a stack without
 * fault, the same from the line written again (a `node` record's frames
 * alike); a `frame` or `jit`
 * record taken into a frame table (frametab.c) as heapdecode takes it,
 * and the frame it names looked up, its texts printable; a `tree`,
 * `node` record taken into a table of trees (nodetab.c) and a node=
 * looked up there, lines of the inputs one after another; a `ustack`
 * record's stack bytes decoded, written again and decoded the same, and
 * unwound offline as heapdecode does (ustacks.c, the unwinder over
 * hostile registers and bytes). Build: `make fuzz`; run: `make
 * fuzz-run-records`.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frametab.h"
#include "input/nodetab.h"
#include "input/ustacks.h"
#include "records.h"

static int str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void check_same(const struct record *a, const struct record *b)
{
	if (a->type != b->type || a->pid != b->pid || a->time_s != b->time_s ||
	    a->time_ms != b->time_ms || a->live != b->live || a->bytes != b->bytes ||
	    a->stacks != b->stacks || a->sample_bytes != b->sample_bytes || strcmp(a->reason, b->reason) || !str_eq(a->comm, b->comm) ||
	    a->start != b->start || a->end != b->end || a->off != b->off ||
	    strcmp(a->build_id, b->build_id) || !str_eq(a->path, b->path) || a->ptr != b->ptr ||
	    a->cut != b->cut || a->token_len != b->token_len ||
	    (a->token && memcmp(a->token, b->token, a->token_len)) ||
	    a->size != b->size || !str_eq(a->error, b->error) || a->allocs != b->allocs ||
	    a->allocated != b->allocated || a->frees != b->frees ||
	    a->temporary != b->temporary || a->peak != b->peak ||
	    a->peak_count != b->peak_count || a->peak_time_s != b->peak_time_s ||
	    a->peak_time_ms != b->peak_time_ms || a->depth != b->depth ||
	    a->ntokens != b->ntokens || a->addr != b->addr || strcmp(a->kind, b->kind) ||
	    a->line != b->line || a->has_node != b->has_node || a->node != b->node ||
	    a->nodes != b->nodes || a->level != b->level || a->nframes != b->nframes)
		abort();
}

/* The texts of a `frame` or `jit` record @a and @b, decoded, the same. */
static char fa[REC_FILE_MAX + 1], fb[REC_FILE_MAX + 1], na[REC_NAME_MAX + 1],
	nb[REC_NAME_MAX + 1];

static void decode_texts(struct record *r, char *file, char *name)
{
	file[0] = name[0] = '\0';
	if ((r->type == REC_FRAME || r->type == REC_JIT) &&
	    records__text(&r->file_esc, file, REC_FILE_MAX + 1) < 0)
		abort();
	if ((r->type == REC_FRAME || r->type == REC_JIT) &&
	    records__text(&r->function_esc, name, REC_NAME_MAX + 1) < 0)
		abort();
	r->file = file;
	r->function = name;
}

/* A stack's frames from @r, and from @back (the same record) the same. */
static void check_stacks(const struct record *r, const struct record *back)
{
	static uint64_t f1[REC_MAX_DEPTH], f2[REC_MAX_DEPTH];
	uint64_t s1, s2;
	uint32_t d1, d2;
	int e1, e2;

	if (r->type == REC_NODE) {
		if (records__frames(r, f1, REC_MAX_DEPTH) != (int)r->nframes ||
		    records__frames(back, f2, REC_MAX_DEPTH) != (int)r->nframes ||
		    memcmp(f1, f2, r->nframes * sizeof(*f1)))
			abort();
		return;
	}
	if ((r->type != REC_LIVE && r->type != REC_STACK) || !r->token)
		return;
	e1 = records__stack(r, &s1, f1, &d1);
	e2 = records__stack(back, &s2, f2, &d2);
	if (e1 != e2 || d1 != d2 || d1 > REC_MAX_DEPTH || s1 != s2 ||
	    memcmp(f1, f2, d1 * sizeof(*f1)))
		abort();
}

/* A valid UTF-8 text with no control character (text_printable's promise). */
static void check_printable(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; s && *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			abort();
}

/* @r taken into a table, as heapdecode does, and what it names looked up. */
static void check_frametab(const struct record *r)
{
	static struct frametab *ft;
	static unsigned int uses;
	struct sym_frame f;

	if (r->type != REC_FRAME && r->type != REC_JIT)
		return;
	if (!ft || ++uses % 4096 == 0) {
		frametab__free(ft);
		ft = frametab__new();
		if (!ft)
			abort();
	}
	if (frametab__take(ft, r) < 0)
		return;
	/* A JIT range's first return address: its call is its first byte. */
	if (!frametab__symbolize(ft, (uint32_t)r->pid,
				 r->type == REC_FRAME ? r->addr : r->start + 1, &f) ||
	    f.status != SYM_OK)
		abort();
	check_printable(f.func);
	check_printable(f.file);
}

/*
 * @r taken into a table of trees, as heapdecode does (each input a line
 * of one log), and a record's node= looked up: never past what was taken,
 * never deeper than a stack is.
 */
static void check_nodetab(const struct record *r)
{
	static struct nodetab *nt;
	static unsigned int uses;
	static uint64_t f[REC_MAX_DEPTH];
	uint64_t size;
	uint32_t depth;

	if (!nt || ++uses % 65536 == 0) {
		nodetab__free(nt);
		nt = nodetab__new();
		if (!nt)
			abort();
	}
	if (nodetab__take(nt, r) < 0 && r->type != REC_NODE && r->type != REC_TREE)
		abort();
	if ((r->type == REC_LIVE || r->type == REC_STACK) && r->has_node &&
	    !nodetab__record(nt, r, &size, f, &depth) && (!depth || depth > REC_MAX_DEPTH))
		abort();
}

/* The copy of a `ustack` record (REC_USTACK_MAX_SIZE at most), decoded. */
static uint8_t ub1[REC_USTACK_MAX_SIZE], ub2[REC_USTACK_MAX_SIZE];

/*
 * A `ustack` record: its bytes decoded or refused (-EINVAL), never past
 * size=; taken and unwound as heapdecode does, on a `map` record of its
 * own (no file: frame pointers over the hostile bytes). Returns whether
 * it can be written again (a version and architecture the writer knows,
 * bytes that decode).
 */
static int check_ustack(struct record *r)
{
	static struct hd_ustacks *u;
	static uint64_t frames[REC_MAX_DEPTH];
	struct record map = { .type = REC_MAP, .pid = r->pid, .start = 0x1000,
			      .end = 0x7fffffffffff, .path = "[anon]", .build_id = "-" };
	uint32_t depth = 1, flags = 0;
	int err;

	if (r->type != REC_USTACK)
		return 1;
	err = records__ustack_bytes(r, ub1, sizeof(ub1));
	if (err && err != -EINVAL)
		abort();
	if (!u && !(u = hd_ustacks__new(NULL)))
		abort();
	hd_ustacks__reset(u);
	if (hd_ustacks__map(u, &map) || hd_ustacks__take(u, r))
		abort();
	frames[0] = r->us.regs[0];
	hd_ustacks__apply(u, r->pid, r->ptr, frames, &depth, &flags);
	if (!depth || depth > REC_MAX_DEPTH)
		abort();
	if (err || r->us.version != REC_USTACK_VERSION ||
	    (strcmp(r->us.arch, "x86-64") && strcmp(r->us.arch, "arm64")))
		return 0;
	r->us.bytes = ub1;
	return 1;
}

/* Two `ustack` records' stacks the same, byte for byte. */
static void check_ustack_same(const struct record *a, const struct record *b)
{
	if (a->type != REC_USTACK)
		return;
	if (strcmp(a->us.arch, b->us.arch) || a->us.version != b->us.version ||
	    a->us.frames != b->us.frames || a->us.nregs != b->us.nregs ||
	    memcmp(a->us.regs, b->us.regs, a->us.nregs * sizeof(a->us.regs[0])) ||
	    a->us.size != b->us.size || a->us.want != b->us.want || a->us.skip != b->us.skip ||
	    a->us.holes != b->us.holes || records__ustack_bytes(b, ub2, sizeof(ub2)) ||
	    memcmp(ub1, ub2, a->us.size))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1), *text = NULL;
	struct record r, back;
	size_t len = 0;
	FILE *f;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	line[strcspn(line, "\n")] = '\0';	/* one line, as its readers give it */
	if (records__parse(line, &r) == 0 && check_ustack(&r)) {
		static uint64_t nf[REC_MAX_DEPTH];

		decode_texts(&r, fa, na);
		/* A node record is written from its frames. */
		if (r.type == REC_NODE) {
			if (records__frames(&r, nf, REC_MAX_DEPTH) != (int)r.nframes)
				abort();
			r.frames = nf;
		}
		f = open_memstream(&text, &len);
		if (!f || records__write(f, &r) || fclose(f) || !len)
			abort();
		text[len - 1] = '\0';
		if (records__parse(text, &back))
			abort();
		check_same(&r, &back);
		check_ustack_same(&r, &back);
		decode_texts(&back, fb, nb);
		if (strcmp(fa, fb) || strcmp(na, nb))
			abort();
		check_stacks(&r, &back);
		check_frametab(&back);
		check_nodetab(&back);
		free(text);
	}
	free(line);
	return 0;
}
