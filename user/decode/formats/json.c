// SPDX-License-Identifier: MIT
/*
 * json.c - heapdecode --json (see json.h): one object, its schema in
 * docs/OUTPUT.md ("What heapdecode writes"); numbers signed, so that
 * with a baseline subtracted a difference reads negative.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#include "analyses/top.h"
#include "formats/json.h"
#include "framefmt.h"
#include "text.h"

static void json_frames(struct hd_model *m, const struct stack *s, FILE *out)
{
	fputs("\"frames\": [", out);
	for (uint32_t k = 0; k < s->depth; k++) {
		struct sym_frame f;

		hd_model__lookup(m, s->pid, s->frames[k], &f);
		fprintf(out, "%s{\"addr\": \"%#" PRIx64 "\", \"function\": ", k ? ", " : "",
			s->frames[k]);
		json_string(out, f.status == SYM_OK ? f.func : NULL);
		fputs(", \"file\": ", out);
		json_string(out, f.file);
		fprintf(out, ", \"line\": %d, \"module\": ", f.line);
		json_string(out, f.module);
		/* Native code, an interpreter's frame, JIT code. */
		fputs(", \"kind\": ", out);
		json_string(out, f.kind ? f.kind : "native");
		fputc('}', out);
	}
	fputc(']', out);
}

/* A stack's pid, frames and cut mark: the fields both arrays begin with. */
static void json_stack_head(struct hd_model *m, const struct stack *s, bool first, FILE *out)
{
	fprintf(out, "%s\n  {\"pid\": %u, ", first ? "" : ",", s->pid);
	json_frames(m, s, out);
	/* An incomplete stack says how, as every report marks it. */
	fputs(", \"incomplete\": ", out);
	json_string(out, *framefmt__cut(s->flags) ? framefmt__cut(s->flags) : NULL);
}

/*
 * The described dump's live set, as -s and --report show it: every log
 * has one, the collector's (no `stack` or `proc` records) too.
 */
static void json_live(struct hd_model *m, struct stack **v, size_t n, FILE *out)
{
	uint64_t bytes, count;

	hd_model__totals(m, &bytes, &count);
	fprintf(out, "\n], \"live_bytes\": %" PRId64 ", \"live_count\": %" PRId64
		", \"live\": [", (int64_t)bytes, (int64_t)count);
	for (size_t i = 0; i < n; i++) {
		json_stack_head(m, v[i], !i, out);
		fprintf(out, ", \"live_bytes\": %" PRId64 ", \"live_count\": %" PRId64 "}",
			v[i]->live_bytes, v[i]->live_count);
	}
	fputs("\n]", out);
}

int hd_json__write(struct hd_model *m, FILE *out)
{
	size_t np, ns, nl;
	struct rs_proc **procs = hd_model__procs(m, &np);
	struct stack **v = hd_model__run_stacks(m, &ns);
	struct stack **live = hd_model__live_stacks(m, &nl);

	if (!v || !live || (!procs && np)) {
		free(v);
		free(live);
		return -ENOMEM;
	}
	/* Signed: with --base, every count is a difference. */
	fprintf(out, "{\"dumps\": %u, \"diff\": %s, \"sample_bytes\": %" PRIu64
		", \"shed_blocks\": %" PRIu64 ", \"live_bytes_stderr\": %.0f, \"processes\": [",
		hd_model__dumps(m), hd_model__is_diff(m) ? "true" : "false",
		hd_model__sample_bytes(m), hd_model__shed_blocks(m), hd_model__live_stderr(m));
	for (size_t i = 0; i < np; i++) {
		const struct rs_proc *p = procs[i];

		fprintf(out, "%s\n  {\"pid\": %d, \"comm\": ", i ? "," : "", p->pid);
		json_string(out, p->comm);
		fprintf(out, ", \"peak_bytes\": %" PRId64 ", \"peak_count\": %" PRId64
			", \"peak_time\": %" PRId64 ".%03d, \"allocations\": %" PRId64
			", \"allocated_bytes\": %" PRId64 ", \"frees\": %" PRId64
			", \"temporary\": %" PRId64 ", \"live_bytes\": %" PRId64
			", \"live_count\": %" PRId64 "}", p->peak, p->peak_count,
			p->peak_time_ms / 1000, (int)(p->peak_time_ms % 1000), p->allocs,
			p->allocated, p->frees, p->temporary, p->bytes, p->live);
	}
	json_live(m, live, nl, out);
	fputs(", \"stacks\": [", out);
	hd_top__sort(v, ns, HD_SORT_PEAK);
	for (size_t i = 0; i < ns; i++) {
		const struct stack *s = v[i];

		json_stack_head(m, s, !i, out);
		fprintf(out, ", \"live_bytes\": %" PRId64 ", \"live_count\": %" PRId64
			", \"allocations\": %" PRId64 ", \"allocated_bytes\": %" PRId64
			", \"frees\": %" PRId64 ", \"temporary\": %" PRId64
			", \"peak_bytes\": %" PRId64 ", \"peak_count\": %" PRId64 "}",
			s->live_bytes, s->live_count, s->allocs, s->alloc_bytes, s->frees,
			s->temporary, s->peak_bytes, s->peak_count);
	}
	fputs("\n]}\n", out);
	free(v);
	free(live);
	return 0;
}
