/* SPDX-License-Identifier: MIT */
/*
 * html.h - heapdecode --html FILE: one self-contained HTML page of the
 * live heap (issue 32), read in any browser with no network: the
 * headline (--report's first line), the top holders with their callers
 * beneath (--report --by function's rows), the flame graph (--flamegraph's
 * SVG inline, its width following the window unless --width, a toggle
 * that dims or hides the frames of interpreters or of native code) and
 * the heap over time (--timeline's SVG, its peak marked) where the log
 * has `sample` records, else how to get them (heapsnoop --sample-ms).
 * Every text of the log is HTML-escaped (logs are hostile,
 * docs/OUTPUT.md); no script, style or font is fetched from anywhere.
 */
#ifndef HEAPDECODE_HTML_H
#define HEAPDECODE_HTML_H

#include <stdio.h>

#include "formats/writers.h"
#include "model/model.h"

/*
 * Write the page of @m to @out: @o->top holders (writers.h), the flame
 * graph @o->width px wide (0: the window's width), titled after
 * @o->input. Returns 0, -ENOMEM or -EIO.
 */
int hd_html__write(struct hd_model *m, const struct hd_write_opts *o, FILE *out);

#endif /* HEAPDECODE_HTML_H */
