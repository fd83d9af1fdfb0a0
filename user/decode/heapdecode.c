// SPDX-License-Identifier: MIT
/*
 * heapdecode - turn `~m#` allocation records in any text into `~b#` lines
 * (and back with --encode), streaming in constant memory whatever the
 * line length; or read a log into the model (model.h) and write what the
 * command line asks of it, one writer of the table (writers.h), and
 * judge it (the gates). The way of a log: input/ reads it, model/ holds
 * it, analyses/ rank and group it, formats/ write it (docs/DESIGN.md).
 *
 * Format: docs/FORMAT.md, docs/OUTPUT.md. Exit status: 0; 1 if any record
 * was malformed (those lines are copied unchanged, or ignored); 2 on a
 * usage or I/O error; 23 and 24: a gate broke (heapsnoop/exit.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analyses/gate.h"
#include "formats/writers.h"
#include "hdargs.h"
#include "heapsnoop/exit.h"
#include "outguard.h"
#include "input/logread.h"
#include "input/recconv.h"
#include "model/model.h"
#include "msg.h"
#include "outfile.h"
#include "symbolizer.h"
#include "text.h"

/* Each line into the model. */
static int take_line(void *ctx, const struct hd_line *l)
{
	return hd_model__take(ctx, l);
}

/* A writer that writes as it reads (-s): each line to standard output. */
struct streamed {
	struct hd_model *m;
	const struct hd_writer *w;
};

static int stream_line(void *ctx, const struct hd_line *l)
{
	const struct streamed *s = ctx;

	return s->w->line(s->m, l, stdout);
}

/*
 * Read @files (standard input if none) into @m, or through @w if it
 * writes as it reads; count malformed records. 0, or HD_EXIT_ERROR if one failed.
 */
static int read_log(struct hd_model *m, const struct hd_writer *w, char *const *files, int nfiles,
		    unsigned long *malformed)
{
	struct streamed s = { m, w };
	int err;

	if (w && w->line)
		err = hd_input__lines(files, nfiles, stream_line, &s, stdout, malformed);
	else
		err = hd_input__lines(files, nfiles, take_line, m, NULL, malformed);
	return err ? HD_EXIT_ERROR : 0;
}

/*
 * --base FILE or --base-dump N: the baseline, read from FILE (its last
 * dump, or --base-dump's) or from the input again; NULL on error (said).
 */
static struct hd_model *read_base(const struct hd_args *a, struct symbolizer *sym,
				  char *const *files, int nfiles, unsigned long *malformed)
{
	struct hd_model_opts bo = a->mo;
	struct hd_model *base;
	char *base_file = (char *)a->base_file;

	if (!a->base_file && !nfiles) {
		elog("--base-dump reads the input twice: give it as a FILE, not standard input");
		return NULL;
	}
	bo.dump = a->base_dump;
	base = hd_model__new(&bo, sym);
	if (!base) {
		elog("out of memory");
		return NULL;
	}
	if (a->base_file ? read_log(base, NULL, &base_file, 1, malformed)
			 : read_log(base, NULL, files, nfiles, malformed)) {
		hd_model__free(base);
		return NULL;
	}
	return base;
}

/* --dump all: a heading, then each dump's live set as --report or --folded writes it. */
static void write_each(struct hd_model *m, void *ctx)
{
	const struct hd_args *a = ctx;
	struct hd_write_opts o = a->wo;
	unsigned int n;
	const int64_t *t = hd_model__dump_times(m, &n);

	printf("== dump %u at %" PRId64 ".%03d\n", n, t[n] / 1000, (int)(t[n] % 1000));
	o.sort = HD_SORT__ALL;
	hd_writer__of(a->output == HD_OUT_FOLDED ? HD_OUT_FOLDED : HD_OUT_REPORT)->write(m, &o,
											   stdout);
}

/*
 * @w's output of @m: to standard output, or to its FILE @out, opened
 * before the input was read (outfile.h) and emptied only now (NULL: "-",
 * or one file per process that @w opens itself). 0 or HD_EXIT_ERROR.
 */
static int write_output(struct hd_model *m, const struct hd_writer *w, const struct hd_args *a,
			struct outfile *out)
{
	FILE *f = stdout;

	if (w->to_file && out && !(f = outfile__start(out)))
		return HD_EXIT_ERROR;
	if (w->pattern && !out && strstr(a->wo.path, w->pattern))
		f = NULL;
	return w->write(m, &a->wo, f) ? HD_EXIT_ERROR : 0;
}

/* Can @files be read again (no standard input among them)? */
static bool rereadable(char *const *files, int nfiles)
{
	if (!nfiles)
		return false;
	for (int i = 0; i < nfiles; i++)
		if (!strcmp(files[i], "-"))
			return false;
	return true;
}

/*
 * @m's last dump has no end-dump: say so and, where the input can be read
 * again and no dump was named, read it again up to the dump before, into
 * *@m. Returns 0 (said; *@m the model to report), or HD_EXIT_ERROR.
 */
static int take_complete(const struct hd_args *a, const struct hd_writer *w,
			 struct symbolizer *sym, char *const *files, int nfiles,
			 struct hd_model **m, unsigned long *malformed)
{
	unsigned int n = hd_model__dumps(*m);
	struct hd_model_opts mo = a->mo;
	struct hd_model *prev;

	if (a->mo.dump || n < 2 || !rereadable(files, nfiles) || (w && w->line)) {
		elog("%s: dump %u has no end-dump (the log was cut while heapsnoop wrote it, or "
		     "is read while it writes): what it holds is reported, and may lack blocks "
		     "and whole-run counts%s", a->wo.input, n,
		     n < 2 ? "" : "; --dump N picks a complete one");
		return 0;
	}
	mo.dump = n - 1;
	prev = hd_model__new(&mo, sym);
	if (!prev) {
		elog("out of memory");
		return HD_EXIT_ERROR;
	}
	if (read_log(prev, w, files, nfiles, malformed)) {
		hd_model__free(prev);
		return HD_EXIT_ERROR;
	}
	elog("%s: its last dump, dump %u, has no end-dump (the log was cut while heapsnoop "
	     "wrote it, or is read while it writes): dump %u, the last complete one, is "
	     "reported (--dump %u reads the cut one as far as it goes)", a->wo.input, n, n - 1,
	     n);
	hd_model__free(*m);
	*m = prev;
	return 0;
}

/*
 * Each module that named no frame, said once (not once a frame): its
 * path, its build ID, a frame of it as the reports show it
 * (module+0xOFF), and what would find it.
 */
static void say_missing(struct symbolizer *sym)
{
	struct sym_missing mm;
	size_t pos = 0;

	while (symbolizer__next_missing(sym, &pos, &mm)) {
		char id[80] = "";

		/* "[anon]", "[vdso]": no file to look for. */
		if (mm.path[0] != '/')
			continue;
		if (strcmp(mm.build_id, "-"))
			snprintf(id, sizeof(id), " (build ID %s)", mm.build_id);
		if (mm.status == SYM_BUILD_ID_MISMATCH)
			elog("module %s%s: the file here is not the traced one (build ID mismatch); "
			     "its frames shown as module+offset, e.g. %s+%#" PRIx64 "; give the traced "
			     "machine's files with --sysroot DIR", mm.path, id, path_base(mm.path),
			     mm.first_off);
		else
			elog("module %s%s not found: its frames shown as module+offset, "
			     "e.g. %s+%#" PRIx64 "; give a copy of the traced machine's files with "
			     "--sysroot DIR (the module itself; its debug info then with "
			     "--debug-dir DIR, DEBUGINFOD_URLS or the distribution's -dbg/-dbgsym "
			     "package)", mm.path, id, path_base(mm.path), mm.first_off);
	}
}

/*
 * No frame named of all those looked up in a file: said (the modules not
 * found were said above; -e's file may not be the program's), true.
 */
static bool say_unnamed(struct symbolizer *sym, const struct hd_args *a)
{
	uint64_t looked, named;

	symbolizer__counts(sym, &looked, &named);
	if (!looked || named)
		return false;
	if (a->mo.elf)
		elog("no frame could be named: none of %" PRIu64 " lookups in -e %s found a "
		     "function (is it the program the addresses are from, with its symbols?)",
		     looked, a->mo.elf);
	else
		elog("no frame could be named: none of %" PRIu64 " lookups in the modules the log "
		     "maps found a function (each module not found is said above)", looked);
	return true;
}

static int run_model(const struct hd_args *a, char *const *files, int nfiles)
{
	const struct hd_writer *w = hd_writer__of(a->output);
	const char *path = a->wo.path;
	struct hd_model_opts mo = a->mo;
	struct symbolizer *sym;
	struct hd_model *m, *base = NULL;
	struct outfile *out = NULL;
	unsigned long malformed = 0;
	int status, gate = 0;
	bool incomplete = false, unnamed;

	/*
	 * Opened first (a path that cannot be written fails at once), emptied
	 * last; a FILE that is a file per process is opened by its writer.
	 */
	if (path && strcmp(path, "-") && !(w && w->pattern && strstr(path, w->pattern)) &&
	    !(out = outfile__open(path)))
		return HD_EXIT_ERROR;
	if (a->all_dumps) {
		mo.each_dump = write_each;
		mo.ctx = (void *)a;
	}
	sym = symbolizer__new(&a->so);
	m = sym ? hd_model__new(&mo, sym) : NULL;
	if (!m) {
		elog("out of memory");
		symbolizer__free(sym);
		outfile__close(out);
		return HD_EXIT_ERROR;
	}
	status = read_log(m, w, files, nfiles, &malformed);
	/* -s streams every line as it comes, a filter: it takes no record into @m. */
	if (!status && !(w && w->line) && !malformed && !hd_model__records(m)) {
		elog("no heapsnoop dump and no ~m# record in %s: not a heapsnoop log (heapsnoop "
		     "-o FILE writes one; a device's ~m# lines are read too)", a->wo.input);
		status = HD_EXIT_ERROR;
	}
	if (!status && !a->all_dumps && hd_model__incomplete(m)) {
		incomplete = true;
		status = take_complete(a, w, sym, files, nfiles, &m, &malformed);
	}
	if (a->all_dumps && !status)
		write_each(m, (void *)a);	/* the last dump */
	if (!status && a->base) {
		base = read_base(a, sym, files, nfiles, &malformed);
		if (!base)
			status = HD_EXIT_ERROR;
		else if (hd_model__subtract(m, base)) {
			elog("out of memory");
			status = HD_EXIT_ERROR;
		}
	}
	/* An input unread: nothing is written. */
	if (!status && !a->all_dumps && w && w->write)
		status = write_output(m, w, a, out);
	if (!status && a->gating) {
		gate = hd_gate__run(m, &a->gate, stderr);
		if (gate == -ENOMEM)
			elog("out of memory");
		status = gate < 0 ? HD_EXIT_ERROR : 0;
	}
	if (outfile__close(out))
		status = HD_EXIT_ERROR;
	if (fflush(stdout) == EOF)
		status = HD_EXIT_ERROR;
	/* A stack named so is not whole: never without a word. */
	if (hd_model__missing_frames(m))
		elog("%zu interpreter frame(s) named by no frame record of the log: shown as "
		     "[interpreter frame without its frame record] (a log cut, or not "
		     "heapsnoop's)", hd_model__missing_frames(m));
	hd_model__report_offline(m, stderr);
	say_missing(sym);
	unnamed = say_unnamed(sym, a);
	hd_model__free(m);
	hd_model__free(base);
	symbolizer__free(sym);
	if (!status && malformed) {
		elog("%lu malformed record(s), each said above%s", malformed,
		     gate > 0 ? ": the gate's verdict is not trusted" : "");
		status = HD_EXIT_MALFORMED;
	}
	if (status || gate)
		return status ? status : gate;
	return incomplete ? HD_EXIT_MALFORMED : unnamed ? HD_EXIT_UNNAMED : 0;
}

/*
 * The default mode: every file through the scanner to standard output;
 * decoding, a log's stacks by node= written after their records too.
 */
static int run_filter(const struct tokscan_ops *ops, char *const *files, int nfiles)
{
	struct tokscan *ts = tokscan__new(ops, NULL, stdout, true);
	struct treescan *tr = ts && ops == &recconv_decode_ops ? treescan__new(ts, stdout) : NULL;
	unsigned long malformed;
	int status = 0;

	if (!ts || (ops == &recconv_decode_ops && !tr)) {
		elog("out of memory");
		tokscan__free(ts);
		return HD_EXIT_ERROR;
	}
	if (hd_input__scan(ts, tr, files, nfiles))
		status = HD_EXIT_ERROR;
	if (fflush(stdout) == EOF) {
		elog("error writing output: %s", strerror(errno));
		status = HD_EXIT_ERROR;
	}
	malformed = tokscan__malformed(ts) + (tr ? treescan__malformed(tr) : 0);
	if (!status && malformed) {
		elog("%lu malformed record(s) left unchanged", malformed);
		status = HD_EXIT_MALFORMED;
	}
	treescan__free(tr);
	tokscan__free(ts);
	return status;
}

int main(int argc, char **argv)
{
	static char obuf[1 << 18];
	struct hd_args a;
	int err;

	msg_init("heapdecode");
	err = hd_args__parse(argc, argv, &a);
	if (err)
		return err == 1 ? 0 : err;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	err = hd_outguard__input(argc - optind);
	if (!err && a.output != HD_OUT_NONE) {
		const struct hd_writer *w = hd_writer__of(a.output);

		if (w && w->to_file)
			err = hd_outguard__output(w->option, a.wo.path, argv + optind,
						  argc - optind, a.base_file);
	}
	if (err)
		return err;
	if (a.output != HD_OUT_NONE || a.gating)
		return run_model(&a, argv + optind, argc - optind);
	return run_filter(a.ops, argv + optind, argc - optind);
}
