// SPDX-License-Identifier: MIT
/*
 * flamegraph.c - folded stacks to an interactive SVG (see flamegraph.h),
 * after the idea of Brendan Gregg's flamegraph.pl: a prefix tree of frames,
 * root at the bottom, each frame as wide as its share of the total.
 * Frames carry their position as fractions (data-x, data-w) and depth
 * (data-d) so the embedded script can zoom without recomputing the tree.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"
#include "text.h"

#define PAD 10
#define ROW 17		/* px per frame row */
#define TOP 66		/* title, controls and the legend */

struct node {
	char *name;
	uint64_t value;
	int64_t net;		/* differential: the signed change under it */
	struct node *child, *next;
};

static struct node *child_of(struct node *parent, const char *name, size_t len)
{
	struct node **pp = &parent->child, *n;

	for (; *pp; pp = &(*pp)->next)
		if (strlen((*pp)->name) == len && !memcmp((*pp)->name, name, len))
			return *pp;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->name = strndup(name, len);
	if (!n->name) {
		free(n);
		return NULL;
	}
	*pp = n;
	return n;
}

static void free_tree(struct node *n)
{
	while (n) {
		struct node *next = n->next;

		free_tree(n->child);
		free(n->name);
		free(n);
		n = next;
	}
}

static int depth_of(const struct node *n)
{
	int d = 0;

	for (const struct node *c = n->child; c; c = c->next) {
		int cd = depth_of(c);

		if (cd > d)
			d = cd;
	}
	return d + 1;
}

/*
 * A frame's kind, which picks its palette and its <g>'s class (the class
 * names are what heapdecode --html's toggle selects by): flamegraph.pl's
 * --color=java and js idea, one hue a kind of code.
 */
enum fg_kind { FG_NATIVE, FG_INLINE, FG_PYTHON, FG_LUA, FG_JIT, FG__N };

static const struct {
	const char *cls, *legend;
	int r0, rs, g0, gs, b0, bs;	/* each channel's base and spread */
} palette[FG__N] = {
	[FG_NATIVE] = { "f-native", "native", 205, 50, 0, 180, 0, 55 },	/* warm */
	[FG_INLINE] = { "f-inline", "inlined", 50, 60, 165, 55, 165, 55 },	/* aqua */
	[FG_PYTHON] = { "f-python", "Python", 40, 50, 150, 50, 120, 50 },	/* blue-green */
	[FG_LUA] = { "f-lua", "Lua", 150, 50, 80, 50, 200, 50 },		/* purple */
	[FG_JIT] = { "f-jit", "JIT code", 160, 50, 205, 45, 30, 50 },	/* yellow-green */
};

/*
 * The length of @name without its annotation "_[KIND]" (flamegraph.pl's
 * `_[i]`; fold.h's `_[python]`, `_[lua]`, `_[jit]`), and the kind it
 * says in *@kind: FG_NATIVE for none, FG_PYTHON for any interpreter
 * but Lua.
 */
static size_t plain_len(const char *name, enum fg_kind *kind)
{
	size_t len = strlen(name);
	const char *open = len > 3 && name[len - 1] == ']' ? strrchr(name, '[') : NULL;
	size_t word;

	*kind = FG_NATIVE;
	if (!open || open == name || open[-1] != '_')
		return len;
	word = len - 2 - (size_t)(open - name);	/* between the brackets */
	if (!strcmp(open, "[i]"))
		*kind = FG_INLINE;
	else if (!strcmp(open, "[jit]"))
		*kind = FG_JIT;
	else if (!strcmp(open, "[lua]"))
		*kind = FG_LUA;
	else if (word && strspn(open + 1, "abcdefghijklmnopqrstuvwxyz0123456789_") == word)
		*kind = FG_PYTHON;	/* python, or another interpreter's */
	else
		return len;
	return (size_t)(open - 1 - name);
}

/* A color from the name, stable across runs (flamegraph.pl's idea), in @kind's hue. */
static void color_of(const char *name, enum fg_kind kind, int *r, int *g, int *b)
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	*r = palette[kind].r0 + (int)(h % (uint32_t)palette[kind].rs);
	*g = palette[kind].g0 + (int)((h >> 8) % (uint32_t)palette[kind].gs);
	*b = palette[kind].b0 + (int)((h >> 16) % (uint32_t)palette[kind].bs);
}

struct layout {
	FILE *out;
	uint64_t total;
	int width, height;
	const char *unit;
	bool diff, bytes;	/* bytes: the values are bytes (text_size) */
};

/* Differential: red for growth, blue for shrinkage, deeper for more. */
static void diff_color_of(const struct node *n, uint64_t total, int *r, int *g, int *b)
{
	double share = total ? (double)(n->net < 0 ? -n->net : n->net) / (double)total : 0;
	int fade = 200 - (int)(share * 160);

	*r = n->net > 0 ? 230 : n->net < 0 ? fade : 200;
	*g = n->net ? fade : 200;
	*b = n->net < 0 ? 230 : n->net > 0 ? fade : 200;
}

/* @v of @l's unit as hover and title say it: "4.0 KiB, 4096 bytes" or "12 allocations". */
static void put_value(FILE *out, const struct layout *l, uint64_t v, bool sign)
{
	uint64_t mag = sign && (int64_t)v < 0 ? -v : v;
	char human[32];

	if (l->bytes && mag >= 1024)
		fprintf(out, "%s, ", text_size(v, sign, human));
	fprintf(out, sign ? "%+" PRId64 " %s" : "%" PRIu64 " %s", v, l->unit);
}

static void emit(struct layout *l, const struct node *n, uint64_t start, int depth)
{
	double x = (double)start / (double)l->total, w = (double)n->value / (double)l->total;
	int r, g, b, y = l->height - PAD - (depth + 1) * ROW;
	uint64_t off = start;
	enum fg_kind kind;
	size_t len = plain_len(n->name, &kind);
	char *name = strndup(n->name, len);

	if (depth >= 0 && name) {
		if (l->diff)
			diff_color_of(n, l->total, &r, &g, &b);
		else
			color_of(n->name, kind, &r, &g, &b);
		fprintf(l->out, "<g class=\"f %s\" data-x=\"%.9f\" data-w=\"%.9f\" "
			"data-d=\"%d\" data-v=\"%" PRIu64 "\" data-n=\"", palette[kind].cls,
			x, w, depth, n->value);
		xml_escape(l->out, name);
		fprintf(l->out, "\"><title>");
		xml_escape(l->out, name);
		if (kind == FG_INLINE)
			fputs(" (inlined)", l->out);
		fputs(" (", l->out);
		put_value(l->out, l, l->diff ? (uint64_t)n->net : n->value, l->diff);
		fprintf(l->out, ", %.2f%%)</title><rect x=\"%.1f\" y=\"%d\" "
			"width=\"%.1f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>"
			"<text x=\"%.1f\" y=\"%d\">", 100 * w, PAD + x * l->width, y,
			w * l->width > 0.5 ? w * l->width - 0.5 : 0, ROW - 1, r, g, b,
			PAD + x * l->width + 3, y + ROW - 5);
		/* Label only what fits (~7 px a character); the script refits. */
		{
			size_t fit = (size_t)(w * l->width / 7);

			if (fit >= 3) {
				char buf[512];

				snprintf(buf, sizeof(buf), "%.*s%s", (int)(len <= fit ? len : fit - 2),
					 name, len <= fit ? "" : "..");
				xml_escape(l->out, buf);
			}
		}
		fputs("</text></g>\n", l->out);
	}
	free(name);
	for (const struct node *c = n->child; c; c = c->next) {
		emit(l, c, off, depth + 1);
		off += c->value;
	}
}

/* Which kinds the tree under @n has frames of, a bit each (1 << fg_kind). */
static unsigned int kinds_of(const struct node *n)
{
	unsigned int seen = 0;

	for (const struct node *c = n->child; c; c = c->next) {
		enum fg_kind kind;

		plain_len(c->name, &kind);
		seen |= 1u << kind | kinds_of(c);
	}
	return seen;
}

/*
 * The legend: a swatch and a name for each kind of frame the graph has,
 * when it has more than native code (a differential graph's colors say
 * growth instead); not of class f-KIND, which selects frames alone.
 */
static void put_legend(const struct layout *l, unsigned int seen)
{
	int x = PAD;

	if (l->diff || !(seen & ~(1u << FG_NATIVE)))
		return;
	for (int k = 0; k < FG__N; k++) {
		int r, g, b;

		if (!(seen & 1u << k))
			continue;
		color_of(palette[k].legend, k, &r, &g, &b);
		fprintf(l->out, "<g class=\"legend\" data-kind=\"%s\"><rect x=\"%d\" y=\"%d\" width=\"12\" "
			"height=\"12\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/><text x=\"%d\" y=\"%d\">"
			"%s</text></g>\n", palette[k].cls, x, TOP - 16, r, g, b, x + 16, TOP - 6,
			palette[k].legend);
		x += 16 + 7 * (int)strlen(palette[k].legend) + 14;
	}
}

static const char script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"var W = +document.documentElement.getAttribute('data-width'), PAD = 10, frames = [],\n"
"  details, matched, zoomed = null;\n"
"function attr(f, k) { return f.getAttribute('data-' + k); }\n"
"function fit(name, px) {\n"
"  var n = Math.floor(px / 7);\n"
"  if (n < 3) return '';\n"
"  return name.length <= n ? name : name.substring(0, n - 2) + '..';\n"
"}\n"
"function place(f, x, w) {\n"
"  var r = f.getElementsByTagName('rect')[0], t = f.getElementsByTagName('text')[0];\n"
"  r.setAttribute('x', PAD + x * W);\n"
"  r.setAttribute('width', Math.max(w * W - 0.5, 0));\n"
"  t.setAttribute('x', PAD + x * W + 3);\n"
"  t.textContent = fit(attr(f, 'n'), w * W);\n"
"}\n"
"function zoom(g) {\n"
"  var x0 = +attr(g, 'x'), w0 = +attr(g, 'w'), d0 = +attr(g, 'd'), e = 1e-9;\n"
"  zoomed = g;\n"
"  frames.forEach(function (f) {\n"
"    var x = +attr(f, 'x'), w = +attr(f, 'w'), d = +attr(f, 'd');\n"
"    var inside = d >= d0 && x >= x0 - e && x + w <= x0 + w0 + e;\n"
"    var above = d < d0 && x <= x0 + e && x + w >= x0 + w0 - e;\n"
"    f.style.display = inside || above ? '' : 'none';\n"
"    if (inside) place(f, (x - x0) / w0, w / w0);\n"
"    else if (above) place(f, 0, 1);\n"
"  });\n"
"  document.getElementById('reset').style.opacity = 1;\n"
"}\n"
"function reset() {\n"
"  zoomed = null;\n"
"  frames.forEach(function (f) { f.style.display = ''; place(f, +attr(f, 'x'), +attr(f, 'w')); });\n"
"  document.getElementById('reset').style.opacity = 0.3;\n"
"}\n"
"function search(term) {\n"
"  if (term === undefined) term = window.prompt('Search frames (regular expression)', '');\n"
"  if (term === null) return;\n"
"  var re, share = 0, seen = [];\n"
"  try { re = new RegExp(term); } catch (err) { matched.textContent = 'bad expression'; return; }\n"
"  frames.forEach(function (f) {\n"
"    var r = f.getElementsByTagName('rect')[0], hit = term !== '' && re.test(attr(f, 'n'));\n"
"    if (!r.getAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
"    r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));\n"
"    if (!hit) return;\n"
"    var x = +attr(f, 'x'), w = +attr(f, 'w');\n"
"    /* Count a matched frame once, not again under a matched ancestor. */\n"
"    if (seen.some(function (s) { return x >= s[0] && x + w <= s[0] + s[1] + 1e-9; })) return;\n"
"    seen.push([x, w]); share += w;\n"
"  });\n"
"  matched.textContent = term === '' ? '' : 'Matched: ' + (100 * share).toFixed(2) + '%';\n"
"}\n"
"window.addEventListener('load', function () {\n"
"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  details = document.getElementById('details');\n"
"  matched = document.getElementById('matched');\n"
"  frames.forEach(function (f) {\n"
"    f.addEventListener('mouseover', function () {\n"
"      details.textContent = f.getElementsByTagName('title')[0].textContent; });\n"
"    f.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"    f.addEventListener('click', function () { zoom(f); });\n"
"  });\n"
"  document.getElementById('reset').addEventListener('click', reset);\n"
"  document.getElementById('search').addEventListener('click', function () { search(); });\n"
"  /* Links can open a view: #zoom=FRAME, #search=REGEX. */\n"
"  var h = decodeURIComponent(location.hash.substring(1)), m;\n"
"  if ((m = /^zoom=(.*)$/.exec(h))) {\n"
"    var g = frames.filter(function (f) { return attr(f, 'n') === m[1]; })[0];\n"
"    if (g) zoom(g);\n"
"  } else if ((m = /^search=(.*)$/.exec(h))) {\n"
"    search(m[1]);\n"
"  }\n"
"});\n"
"]]></script>\n";

int flamegraph__write(FILE *out, const struct folded_line *lines, size_t n, const char *title,
		      const char *unit, int width)
{
	struct node root = { .name = "all" };
	struct layout l = { .out = out, .unit = unit, .width = width ? width : FLAMEGRAPH_WIDTH,
			    .bytes = !strcmp(unit, "bytes") || !strcmp(unit, "estimated bytes") };
	int err = 0, depth;

	for (size_t i = 0; i < n && !err; i++) {
		struct node *cur = &root;
		const char *p = lines[i].text;

		root.value += lines[i].value;
		root.net += lines[i].delta;
		l.diff |= lines[i].delta != 0;
		while (cur && *p) {
			const char *semi = strchr(p, ';');
			size_t len = semi ? (size_t)(semi - p) : strlen(p);

			cur = child_of(cur, p, len);
			if (cur) {
				cur->value += lines[i].value;
				cur->net += lines[i].delta;
			}
			p += len + (semi != NULL);
		}
		if (!cur)
			err = -ENOMEM;
	}
	depth = depth_of(&root) - 1;
	l.total = root.value ? root.value : 1;
	l.height = TOP + (depth + 1) * ROW + 2 * PAD;

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"data-width=\"%d\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font: 12px monospace; fill: #000; pointer-events: none; }\n"
		"g.f rect:hover { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
		"#title { font-size: 17px; } .btn { cursor: pointer; fill: #236; }</style>\n",
		l.width + 2 * PAD, l.height, l.width + 2 * PAD, l.height, l.width);
	fputs(script, out);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"rgb(250,250,240)\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", l.width / 2 + PAD);
	xml_escape(out, title);
	fputs(" (", out);
	put_value(out, &l, l.diff ? (uint64_t)root.net : root.value, l.diff);
	fputs(l.diff ? ": red grew, blue shrank)" : ")", out);
	fprintf(out, "</text>\n"
		"<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"22\" style=\"opacity:0.3\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%d\" y=\"22\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"40\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%d\" y=\"40\"> </text>\n",
		PAD, l.width + PAD, l.width + PAD, PAD);
	put_legend(&l, kinds_of(&root));
	emit(&l, &root, 0, -1);
	fputs("</svg>\n", out);
	free_tree(root.child);
	if (!err && (fflush(out) == EOF || ferror(out)))
		err = -EIO;
	return err;
}
