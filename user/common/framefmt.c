// SPDX-License-Identifier: MIT
/* framefmt.c - one symbolized frame as text (see framefmt.h). */
#include <inttypes.h>
#include <string.h>

#include "framefmt.h"
#include "frametab.h"
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
	/* A thread's stack ends; the frames that created it follow. */
	if (f->status == SYM_OK && f->kind && !strcmp(f->kind, FRAMETAB_CREATOR_KIND)) {
		fprintf(out, " ---- created by ----\n");
		return;
	}
	/* Not native code: the kind where a native frame has its module. */
	if (f->status == SYM_OK && f->kind) {
		/* A JIT range's name may hold blanks: its offset with the kind. */
		if (!strcmp(f->kind, "jit"))
			fprintf(out, " %s [jit+%#" PRIx64 "]", f->func, f->func_off);
		else
			fprintf(out, " %s [%s]", f->func, f->kind);
		if (f->file && f->line)
			fprintf(out, " %s:%d", f->file, f->line);
		else if (f->file)
			fprintf(out, " %s", f->file);
		fputc('\n', out);
		return;
	}
	/* A stand-in, not code (heapdecode --frames' "[native]"): its name alone. */
	if (f->status == SYM_OK && !f->module && f->func[0] == '[') {
		fprintf(out, " %s\n", f->func);
		return;
	}
	if (f->status == SYM_OK) {
		fprintf(out, " %s+%#" PRIx64, f->func, f->func_off);
		if (f->module)
			fprintf(out, " (%s)", path_base(f->module));
	} else if (f->module && f->status != SYM_UNMAPPED) {
		/* Something to look up still: where in which file, then why not named. */
		fprintf(out, " %s+%#" PRIx64 " [%s]", path_base(f->module), framefmt__module_off(f),
			sym_status_str(f->status));
	} else {
		fprintf(out, " [%s]", sym_status_str(f->status));
	}
	if (f->file)
		fprintf(out, " %s:%d", f->file, f->line);
	fputc('\n', out);
}

uint64_t framefmt__module_off(const struct sym_frame *f)
{
	return f->elf_addr ? f->elf_addr : f->file_off;
}

const char *framefmt__cut(uint32_t flags)
{
#define T "stack truncated"
#define U "stack unreadable past here"
#define O "interpreter frames out of place"
	/* Each mark of a bit, in bit order, joined by ", ". */
	static const char *const marks[STACK_CUT_ALL + 1] = {
		"", T, U, T ", " U, O, T ", " O, U ", " O, T ", " U ", " O,
	};
#undef T
#undef U
#undef O
	return marks[flags & STACK_CUT_ALL];
}
