// SPDX-License-Identifier: MIT
/*
 * html.c - heapdecode --html (see html.h). The page is the other
 * writers' output put together, not a second drawing of it: the
 * headline and the holders are report.c's (holders.h), the flame graph
 * is flamegraph.c's SVG and the heap over time timeline.c's, each
 * written into memory and copied in as HTML takes an SVG inline. The
 * flame graph's script (its globals W, zoomed, zoom, reset) is the one
 * the page's own drives to refit its width; its frames' classes by
 * kind (f-native, f-inline, f-python, f-lua, f-jit) are what the
 * toggle dims or hides. A Content-Security-Policy lets the page fetch
 * nothing at all.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/folded.h"
#include "formats/html.h"
#include "formats/report.h"
#include "formats/textout.h"
#include "formats/timeline.h"
#include "holders.h"
#include "text.h"
#include "version.h"

static const char head[] =
"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
"style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
"<style>\n"
"body { font: 14px/1.4 sans-serif; margin: 16px; color: #222; background: #fff; }\n"
"h1 { font-size: 20px; margin: 0 0 8px; } h2 { font-size: 16px; margin: 24px 0 8px; }\n"
"#headline { font: bold 15px monospace; background: #fff4d6; border-left: 4px solid #e08a00;\n"
"  padding: 8px 12px; overflow-wrap: anywhere; }\n"
"table { border-collapse: collapse; } th, td { text-align: left; padding: 2px 10px; }\n"
"th { border-bottom: 1px solid #999; } td.n { text-align: right; white-space: nowrap; }\n"
"tr.holder td { border-top: 1px solid #ddd; font-weight: bold; }\n"
"tr.caller td:first-child { padding-left: 28px; color: #555; }\n"
"td.f { font-family: monospace; overflow-wrap: anywhere; }\n"
"#flame { overflow-x: auto; } #flame svg text { font: 12px monospace; }\n"
"#flame svg #title { font-size: 17px; } #timeline svg { max-width: 100%; height: auto; }\n"
"p.none { color: #555; font-style: italic; } footer { margin-top: 24px; color: #777; }\n"
"</style>\n";

/*
 * The toggle (#kinds, or the URL's #kinds=VALUE) and the width: the
 * flame graph's globals exist only once its script ran, so both wait
 * for the load event, after the flame graph's own handler.
 */
static const char script[] =
"<script>\n"
"(function () {\n"
"  var KIND = { interp: ['f-python', 'f-lua', 'f-jit'], native: ['f-native', 'f-inline'] };\n"
"  var box = document.getElementById('flame'), sel = document.getElementById('kinds');\n"
"  function of(kind) {\n"
"    return box ? Array.prototype.slice.call(box.querySelectorAll(KIND[kind].map(function (c) {\n"
"      return 'g.' + c; }).join(','))) : [];\n"
"  }\n"
"  function kinds(k) {\n"
"    if (!box) return;\n"
"    box.setAttribute('data-kinds', k);\n"
"    of('interp').forEach(function (g) {\n"
"      g.style.opacity = k === 'dim-interp' ? '0.25' : '';\n"
"      g.style.visibility = k === 'hide-interp' ? 'hidden' : '';\n"
"    });\n"
"    of('native').forEach(function (g) { g.style.opacity = k === 'dim-native' ? '0.25' : ''; });\n"
"  }\n"
"  /* The flame graph as wide as its box, its frames placed again (zoomed or not). */\n"
"  function fit() {\n"
"    var svg = box && box.querySelector('svg[data-width]');\n"
"    if (!svg || box.hasAttribute('data-fixed') || typeof reset !== 'function') return;\n"
"    var w = Math.max(200, Math.floor(box.clientWidth) - 20), h = svg.getAttribute('height');\n"
"    if (w === W) return;\n"
"    W = w;\n"
"    svg.setAttribute('data-width', w);\n"
"    svg.setAttribute('width', w + 20);\n"
"    svg.setAttribute('viewBox', '0 0 ' + (w + 20) + ' ' + h);\n"
"    var t = svg.getElementById('title');\n"
"    if (t) t.setAttribute('x', w / 2 + 10);\n"
"    ['search', 'matched'].forEach(function (id) {\n"
"      var e = svg.getElementById(id);\n"
"      if (e) e.setAttribute('x', w + 10);\n"
"    });\n"
"    if (zoomed) zoom(zoomed); else reset();\n"
"  }\n"
"  window.addEventListener('load', function () {\n"
"    var m = /(?:^#|&)kinds=([a-z-]+)/.exec(location.hash);\n"
"    fit();\n"
"    if (sel) {\n"
"      if (m) sel.value = m[1];\n"
"      sel.addEventListener('change', function () { kinds(sel.value); });\n"
"      kinds(sel.value);\n"
"    }\n"
"  });\n"
"  window.addEventListener('resize', fit);\n"
"})();\n"
"</script>\n";

/* @v's share of @total, in percent (signed, as report.c's). */
static double share(uint64_t total, uint64_t v)
{
	return total ? 100.0 * (double)(int64_t)v / (double)(int64_t)total : 0;
}

/*
 * The @len bytes of an SVG at @svg to @out as HTML takes one inline:
 * without its XML declaration, and without its xmlns (the HTML parser
 * puts an <svg> in its namespace), so that the page names no URL.
 */
static void embed(FILE *out, const char *svg, size_t len)
{
	static const char xmlns[] = " xmlns=\"http://www.w3.org/2000/svg\"";
	const char *end = svg + len, *p;

	if (len > 5 && !memcmp(svg, "<?xml", 5) && (p = memchr(svg, '\n', len)))
		svg = p + 1;
	p = strstr(svg, xmlns);
	if (p) {
		fwrite(svg, 1, (size_t)(p - svg), out);
		svg = p + sizeof(xmlns) - 1;
	}
	fwrite(svg, 1, (size_t)(end - svg), out);
}

/* A memory stream for a writer; NULL: no memory. */
static FILE *mem_open(char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	return open_memstream(buf, len);
}

/* The headline, and the holders it comes from (NULL: no memory). */
static struct holders *write_headline(struct hd_model *m, const struct hd_write_opts *o,
				      FILE *out)
{
	char *buf;
	size_t len;
	FILE *mem = mem_open(&buf, &len);
	struct holders *h = mem ? hd_report__holders(m, o->runtime_apart, mem) : NULL;

	if (mem && fclose(mem) == 0 && buf) {
		if (len && buf[len - 1] == '\n')
			buf[len - 1] = '\0';
		fputs("<p id=\"headline\">", out);
		xml_escape(out, buf);
		fputs("</p>\n", out);
	}
	free(buf);
	return h;
}

/* One row of the holders' table: @name (@where), bytes, share, blocks. */
static void row(struct hd_model *m, const char *cls, const char *name, const char *where,
		uint64_t bytes, double pct, uint64_t count, FILE *out)
{
	char b1[32], b2[32];

	fprintf(out, "<tr class=\"%s\"><td class=\"f\">%s", cls, *cls == 'c' ? "&larr; " : "");
	xml_escape(out, name);
	fputs("</td><td class=\"f\">", out);
	xml_escape(out, where);
	fprintf(out, "</td><td class=\"n\">%s</td><td class=\"n\">%.1f%%</td><td class=\"n\">%s</td></tr>\n",
		hd_textout__size(m, bytes, b1), pct, hd_textout__num(m, count, b2));
}

/* The top holders, their callers beneath: --report --by function's rows. */
static void write_holders(struct hd_model *m, struct holders *h, unsigned int top, FILE *out)
{
	size_t k;
	const struct holder *v = holders__list(h, &k);
	uint64_t bytes, count, rest = 0;
	char b1[64], b2[32], est[64];

	hd_model__totals(m, &bytes, &count);
	fputs("<h2>Who holds it</h2>\n<table id=\"holders\">\n<thead><tr><th>Function</th>"
	      "<th>Where</th><th>Live</th><th>Share</th><th>Blocks</th></tr></thead>\n<tbody>\n",
	      out);
	for (size_t i = 0; i < k; i++) {
		if (i >= top) {
			rest += v[i].bytes;
			continue;
		}
		row(m, "holder", v[i].func, v[i].where, v[i].bytes, share(bytes, v[i].bytes),
		    v[i].count, out);
		for (size_t j = 0; j < v[i].ncallers; j++)
			row(m, "caller", v[i].callers[j].name, NULL, v[i].callers[j].bytes,
			    share(v[i].bytes, v[i].callers[j].bytes), v[i].callers[j].count, out);
	}
	fputs("</tbody>\n</table>\n", out);
	if (k > top)
		fprintf(out, "<p>&hellip; %zu more function%s, %s (heapdecode --html --top N "
			"shows more)</p>\n", k - top, k - top == 1 ? "" : "s",
			hd_textout__size(m, rest, b2));
	fprintf(out, "<p>total%s: %s in %s allocations from %zu function%s</p>\n",
		hd_textout__est_mark(m, est), hd_textout__size_exact(m, bytes, b1),
		hd_textout__num(m, count, b2), k, k == 1 ? "" : "s");
}

static const char toggle[] =
"<p><label>Frames: <select id=\"kinds\">\n"
"<option value=\"all\">all</option>\n"
"<option value=\"dim-interp\">interpreters' frames (Python, Lua, JIT) dimmed</option>\n"
"<option value=\"hide-interp\">interpreters' frames hidden</option>\n"
"<option value=\"dim-native\">native frames dimmed</option>\n"
"</select></label> Hover: a frame's bytes; click: zoom; Search: highlight.</p>\n";

static int write_flame(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	char *buf, title[512];
	size_t len;
	FILE *mem = mem_open(&buf, &len);
	int err = mem ? 0 : -ENOMEM;

	snprintf(title, sizeof(title), "%s: %s", hd_model__is_diff(m) ?
		 "Live heap, change from the baseline" : "Live heap", o->input);
	if (mem)
		err = hd_folded__flamegraph(m, o->counts, title, o->width, mem);
	if (mem && fclose(mem) && !err)
		err = -ENOMEM;
	fputs("<h2>Flame graph</h2>\n", out);
	fputs(toggle, out);
	fprintf(out, "<div id=\"flame\"%s>\n", o->width ? " data-fixed=\"\"" : "");
	if (!err)
		embed(out, buf, len);
	fputs("</div>\n", out);
	free(buf);
	return err;
}

/*
 * Does the log have `sample` records: is there a heap over time to draw
 * (the series of a process without any is its peak alone)? 1, 0 or -ENOMEM.
 */
static int has_samples(struct hd_model *m)
{
	size_t np;
	struct rs_proc **p = hd_model__procs(m, &np);

	for (size_t i = 0; p && i < np; i++)
		if (p[i]->nsamples)
			return 1;
	return p ? 0 : -ENOMEM;
}

static int write_timeline(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	char *buf = NULL, title[512];
	size_t len;
	FILE *mem;
	int err = has_samples(m);

	fputs("<h2>Heap over time</h2>\n<div id=\"timeline\">\n", out);
	if (err <= 0) {
		if (!err)
			fputs("<p class=\"none\">This log has no <code>sample</code> records: "
			      "heapsnoop writes one every <code>--sample-ms MS</code> (default 100; "
			      "0: none) while it traces; trace again without <code>--sample-ms "
			      "0</code> to see the heap over time, its peak marked.</p>\n", out);
		fputs("</div>\n", out);
		return err;
	}
	mem = mem_open(&buf, &len);
	snprintf(title, sizeof(title), "Heap over time: %s", o->input);
	err = mem ? hd_timeline__write(m, mem, title, 4, 5) : -ENOMEM;
	if (mem && fclose(mem) && !err)
		err = -ENOMEM;
	if (!err)
		embed(out, buf, len);
	fputs("</div>\n", out);
	free(buf);
	return err;
}

int hd_html__write(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	struct holders *h;
	char why[160];
	int err, err2;

	fputs(head, out);
	fputs("<title>heapsnoop: ", out);
	xml_escape(out, o->input);
	fputs("</title>\n</head>\n<body>\n<h1>", out);
	xml_escape(out, hd_model__is_diff(m) ? "Live heap, change from the baseline: " :
		   "Live heap: ");
	xml_escape(out, o->input);
	fputs("</h1>\n", out);
	h = write_headline(m, o, out);
	if (!h)
		return -ENOMEM;
	if (hd_textout__why_estimated(m, why, sizeof(why))) {
		fputs("<p>The values are estimates: ", out);
		xml_escape(out, why);
		fputs(".</p>\n", out);
	}
	write_holders(m, h, o->top, out);
	holders__free(h);
	err = write_flame(m, o, out);
	err2 = write_timeline(m, o, out);
	fputs("<footer>Written by heapdecode " HEAPSNOOP_VERSION " (docs/OUTPUT.md, "
	      "&ldquo;heapdecode --html&rdquo;).</footer>\n", out);
	fputs(script, out);
	fputs("</body>\n</html>\n", out);
	err = err ? err : err2;
	if (!err && (fflush(out) == EOF || ferror(out)))
		err = -EIO;
	return err;
}
