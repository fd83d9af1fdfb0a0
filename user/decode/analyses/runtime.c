// SPDX-License-Identifier: MIT
/*
 * runtime.c - the C runtime's own allocations and a Python's freed heap,
 * said apart in heapdecode --report (see runtime.h).
 */
#include <string.h>

#include "analyses/runtime.h"
#include "pyexit.h"

static void lookup(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	hd_model__lookup(ctx, pid, addr, f);
}

size_t hd_runtime__split(struct hd_model *m, struct stack **v, size_t n,
			 struct suppress_tally *t)
{
	const struct suppress *rt = suppress__runtime();
	size_t k = 0;
	int i;

	memset(t, 0, sizeof(*t));
	if (hd_model__is_diff(m))
		return n;
	for (size_t j = 0; j < n; j++) {
		if ((i = suppress__stack(rt, v[j], lookup, m)) >= 0)
			suppress__tally_add(t, i, v[j]->live_bytes, v[j]->live_count);
		else
			v[k++] = v[j];
	}
	return k;
}

void hd_runtime__write(const struct suppress_tally *t, FILE *out)
{
	char text[160];

	if (t->count)
		fprintf(out, "the C runtime's own, not above: %s, kept for the process's "
			"lifetime (--no-default-suppressions shows them)\n",
			suppress__tally_text(t, text, sizeof(text)));
}

void hd_runtime__python(struct hd_model *m, const char *input, FILE *out)
{
	size_t n = 0;
	unsigned int nd = 0;
	struct rs_proc **v = hd_model__is_diff(m) ? NULL : hd_model__procs(m, &n);
	const int64_t *dumps = hd_model__dump_times(m, &nd);
	char line[512];

	for (size_t i = 0; v && i < n; i++) {
		const struct rs_proc *p = v[i];
		int64_t ago = dumps && nd && p->peak_time_ms ? dumps[nd] - p->peak_time_ms : -1;

		if (pyexit__freed(p->comm, p->peak, p->bytes))
			fprintf(out, "%s\n", pyexit__text(line, sizeof(line), p->pid, p->comm,
							  p->peak, p->peak_count, ago, p->bytes,
							  input, 0));
	}
}
