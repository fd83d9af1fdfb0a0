// SPDX-License-Identifier: MIT
/*
 * timeline.c - the heap over time as an SVG (see timeline.h). One panel
 * per process: a step line of its live bytes (samples, and the peak
 * between them), a marker at the peak, and bands of its top stacks (by
 * bytes at the peak) stacked at each dump, each held until the next.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "formats/textout.h"
#include "text.h"
#include "timeline.h"

#define WIDTH 1000	/* px of a plot */
#define LEFT 90		/* room for the byte axis */
#define PANEL 280	/* px of a panel, plot and labels */
#define PLOT 200	/* px of a plot */
#define TOP 40

/* Band colours, heaptrack's palette order. */
static const char *const colours[] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f",
};

struct scale {
	int64_t t0, t1;		/* ms */
	uint64_t max;		/* bytes */
	int y0;			/* px of the plot's top */
};

static double x_of(const struct scale *s, int64_t t)
{
	return LEFT + (s->t1 > s->t0 ? (double)(t - s->t0) / (double)(s->t1 - s->t0) : 0) * WIDTH;
}

static double y_of(const struct scale *s, uint64_t b)
{
	return s->y0 + PLOT - (s->max ? (double)b / (double)s->max : 0) * PLOT;
}

/* Stack @id's live bytes as of dump @d (held from its record on). */
static uint64_t live_at(struct hd_model *m, size_t id, unsigned int d)
{
	size_t n;
	const struct rs_point *h = hd_model__history(m, id, &n);
	uint64_t b = 0;

	for (size_t i = 0; i < n && h[i].dump <= d; i++)
		b = h[i].live_bytes;
	return b;
}

struct ranked {
	size_t id;
	uint64_t peak;
};

static int by_peak_desc(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	return x->peak < y->peak ? 1 : x->peak > y->peak ? -1 : 0;
}

/* The bands: @p's top @k stacks by bytes at the peak, stacked at each dump. */
static int write_bands(struct hd_model *m, const struct rs_proc *p, const struct scale *sc,
		       unsigned int k, FILE *out)
{
	unsigned int nd;
	const int64_t *dt = hd_model__dump_times(m, &nd);
	size_t ns, nt = 0;
	struct stack **v = hd_model__run_stacks(m, &ns);
	struct ranked *top = v ? calloc(ns ? ns : 1, sizeof(*top)) : NULL;
	uint64_t *below = calloc(nd + 1, sizeof(*below));

	if (!top || !below) {
		free(v);
		free(top);
		free(below);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ns; i++)
		if ((int)v[i]->pid == p->pid && v[i]->peak_bytes)
			top[nt++] = (struct ranked){ i, v[i]->peak_bytes };
	qsort(top, nt, sizeof(*top), by_peak_desc);
	for (size_t j = 0; j < nt && j < k && nd; j++) {
		const struct stack *s = v[top[j].id];
		struct sym_frame f;

		hd_model__lookup(m, s->pid, s->depth ? s->frames[0] : 0, &f);
		fprintf(out, "<polygon fill=\"%s\" fill-opacity=\"0.75\" points=\"",
			colours[j % (sizeof(colours) / sizeof(colours[0]))]);
		/* The top edge left to right (steps), then the bottom back. */
		for (unsigned int d = 1; d <= nd; d++) {
			uint64_t b = below[d] + live_at(m, top[j].id, d);
			int64_t end = d < nd ? dt[d + 1] : sc->t1;

			fprintf(out, "%.1f,%.1f %.1f,%.1f ", x_of(sc, dt[d]), y_of(sc, b),
				x_of(sc, end), y_of(sc, b));
		}
		for (unsigned int d = nd; d >= 1; d--) {
			int64_t end = d < nd ? dt[d + 1] : sc->t1;

			fprintf(out, "%.1f,%.1f %.1f,%.1f ", x_of(sc, end), y_of(sc, below[d]),
				x_of(sc, dt[d]), y_of(sc, below[d]));
		}
		fprintf(out, "\"><title>");
		xml_escape(out, f.status == SYM_OK ? f.func : "[no symbol]");
		fprintf(out, ": %" PRIu64 " bytes at the peak; live at each dump:", s->peak_bytes);
		for (unsigned int d = 1; d <= nd; d++) {
			uint64_t b = live_at(m, top[j].id, d);

			fprintf(out, " %" PRIu64, b);
			below[d] += b;
		}
		fputs("</title></polygon>\n", out);
		fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"%s\">", LEFT + WIDTH + 10,
			sc->y0 + 14 * (int)j + 10, colours[j % (sizeof(colours) / sizeof(colours[0]))]);
		xml_escape(out, f.status == SYM_OK ? f.func : "[no symbol]");
		fputs("</text>\n", out);
	}
	free(v);
	free(top);
	free(below);
	return 0;
}

/* Axes, ticks and the process's heading. */
static void write_axes(const struct rs_proc *p, const struct scale *sc, FILE *out)
{
	fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"h\">pid %d (", LEFT, sc->y0 - 10, p->pid);
	xml_escape(out, p->comm[0] ? p->comm : "?");
	fprintf(out, "): peak %" PRIu64 " bytes</text>\n", p->peak);
	fprintf(out, "<path d=\"M%d %d V%d H%d\" stroke=\"#333\" fill=\"none\"/>\n", LEFT, sc->y0,
		sc->y0 + PLOT, LEFT + WIDTH);
	for (int i = 0; i <= 4; i++) {
		uint64_t b = sc->max / 4 * (uint64_t)i;
		double y = y_of(sc, b);
		double t = (double)(sc->t1 - sc->t0) / 4000.0 * i;

		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%" PRIu64 "</text>\n"
			"<path d=\"M%d %.1f H%d\" stroke=\"#ddd\"/>\n", LEFT - 4, y + 4, b, LEFT, y,
			LEFT + WIDTH);
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">+%.1f s</text>\n",
			LEFT + WIDTH / 4.0 * i, sc->y0 + PLOT + 16, t);
	}
}

/* One process's panel at @y0. */
static int write_panel(struct hd_model *m, const struct rs_proc *p, int y0, unsigned int k,
		       FILE *out)
{
	unsigned int nd;
	const int64_t *dt = hd_model__dump_times(m, &nd);
	size_t n;
	struct rs_sample *v = hd_model__series(p, &n);
	struct scale sc = { .y0 = y0 };
	int err;

	if (!v)
		return -ENOMEM;
	sc.t0 = n ? v[0].time_ms : 0;
	sc.t1 = n ? v[n - 1].time_ms : 0;
	for (unsigned int d = 1; d <= nd; d++) {
		sc.t0 = sc.t0 && sc.t0 < dt[d] ? sc.t0 : dt[d];
		sc.t1 = sc.t1 > dt[d] ? sc.t1 : dt[d];
	}
	for (size_t i = 0; i < n; i++)
		sc.max = sc.max > v[i].bytes ? sc.max : v[i].bytes;
	sc.max = sc.max ? sc.max + sc.max / 10 : 1;
	write_axes(p, &sc, out);
	err = write_bands(m, p, &sc, k, out);
	/* The total: a step line, each sample held until the next. */
	fputs("<polyline fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\" points=\"", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%.1f,%.1f %.1f,%.1f ", x_of(&sc, v[i].time_ms),
			y_of(&sc, i ? v[i - 1].bytes : v[i].bytes), x_of(&sc, v[i].time_ms),
			y_of(&sc, v[i].bytes));
	fputs("\"/>\n", out);
	for (size_t i = 0; i < n; i++) {
		bool peak = v[i].time_ms == p->peak_time_ms && v[i].bytes == p->peak;

		fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" class=\"%s\"><title>%s+%.3f s: "
			"%" PRIu64 " bytes in %" PRIu64 " allocations</title></circle>\n",
			x_of(&sc, v[i].time_ms), y_of(&sc, v[i].bytes), peak ? 5 : 3,
			peak ? "peak" : "pt", peak ? "peak, " : "",
			(double)(v[i].time_ms - sc.t0) / 1000.0, v[i].bytes, v[i].live);
		if (peak)
			fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"peak\">peak %" PRIu64
				" bytes</text>\n", x_of(&sc, v[i].time_ms) + 8,
				y_of(&sc, v[i].bytes) + 4, v[i].bytes);
	}
	free(v);
	return err;
}

int hd_timeline__write(struct hd_model *m, FILE *out, const char *title, unsigned int procs,
		  unsigned int stacks)
{
	size_t np;
	struct rs_proc **p = hd_model__procs(m, &np);
	int height, err = 0;
	char why[160];

	if (!p || !np)
		return p ? -ENOENT : -ENOMEM;
	np = np < procs ? np : procs;
	height = TOP + (int)np * PANEL;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n<style>text { font: 12px sans-serif; }\n"
		".h { font-weight: bold; } circle.pt { fill: #000; fill-opacity: 0.2; }\n"
		"circle:hover, polygon:hover { stroke: #000; stroke-width: 1; }\n"
		"circle.peak, text.peak { fill: #d00; }</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
		"<text x=\"%d\" y=\"22\" class=\"h\">", LEFT + WIDTH + 200, height,
		LEFT + WIDTH + 200, height, LEFT);
	xml_escape(out, title);
	if (hd_textout__why_estimated(m, why, sizeof(why))) {
		fputs(" (bytes estimated: ", out);
		xml_escape(out, why);
		fputc(')', out);
	}
	fputs("</text>\n", out);
	for (size_t i = 0; i < np && !err; i++)
		err = write_panel(m, p[i], TOP + 30 + (int)i * PANEL, stacks, out);
	fputs("</svg>\n", out);
	if (!err && (fflush(out) == EOF || ferror(out)))
		err = -EIO;
	return err;
}
