// SPDX-License-Identifier: MIT
/* framefmt.c - one symbolized frame as text (see framefmt.h). */
#include <inttypes.h>

#include "framefmt.h"
#include "stacks.h"
#include "text.h"

void framefmt__write(FILE *out, const char *indent, uint32_t k, uint64_t addr,
		     const struct sym_frame *f)
{
	for (int i = 0; f && i < f->ninline; i++) {
		fprintf(out, "%s#%-2u 0x%" PRIx64 " %s (inlined)", indent, k, addr,
			f->inl[i].func ? f->inl[i].func : "??");
		if (f->inl[i].file)
			fprintf(out, " %s:%d", f->inl[i].file, f->inl[i].line);
		fputc('\n', out);
	}
	fprintf(out, "%s#%-2u 0x%" PRIx64, indent, k, addr);
	if (!f) {
		fputc('\n', out);
		return;
	}
	if (f->status == SYM_OK)
		fprintf(out, " %s+%#" PRIx64, f->func, f->func_off);
	else
		fprintf(out, " [%s]", sym_status_str(f->status));
	if (f->module)
		fprintf(out, " (%s)", path_base(f->module));
	if (f->file)
		fprintf(out, " %s:%d", f->file, f->line);
	fputc('\n', out);
}

const char *framefmt__cut(uint32_t flags)
{
	switch (flags & (STACK_TRUNCATED | STACK_FAULT)) {
	case STACK_TRUNCATED: return "stack truncated";
	case STACK_FAULT: return "stack unreadable past here";
	case STACK_TRUNCATED | STACK_FAULT: return "stack truncated, stack unreadable past here";
	default: return "";
	}
}
