// SPDX-License-Identifier: MIT
/*
 * liveview.c - heapsnoop --top (see liveview.h): each redraw a child's,
 * from its snapshot; the loader keeps the names and the last sizes the
 * children sent back.
 *
 * A child writes back, one line each (tab-separated, nothing else in its
 * fields): "N OFF KEY FUNC LOC" for a native frame it named (KEY the
 * file's build ID, or its path without one; OFF the file offset of the
 * return address; LOC "file:line" or ""), "U OFF KEY" for a kept name it
 * used that the loader may take for unused (namecache.h: least recently
 * used out), and "S PID ID BYTES" for each stack it ranked (the next
 * redraw's growth is against these).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "framefmt.h"
#include "frametab.h"
#include "holders.h"
#include "liveview.h"
#include "msg.h"
#include "namecache.h"
#include "records.h"
#include "status.h"
#include "symbolizer.h"
#include "text.h"

#define LV_HEAD 4		/* title, totals, a blank line, the columns' */
#define LV_COLS 31		/* LIVE, GROWTH, BLOCKS: the stack's column */
#define LV_MAX_ROWS 500		/* stacks ranked at most (a very tall terminal) */
#define LV_MAX_NAMES 65536	/* frames whose names are kept (namecache.h) */
#define LV_READ_MAX (256 << 10)	/* bytes read back per tick at most */
#define LV_LINE_MAX 4096	/* a longer line read back is dropped */

/* A stack's live bytes as a child saw them: (pid << 32 | id). */
struct seen {
	uint64_t key, bytes;
};

struct seen_vec {
	struct seen *v;
	size_t n, cap;
};

struct liveview {
	struct liveview_opts o;
	pid_t pid, last;	/* the child drawing, or 0; the last one */
	int rfd;		/* its pipe's read end, or -1 */
	char line[LV_LINE_MAX];
	size_t len;		/* of a line read in part */
	bool skip;		/* the line in part is too long: dropped */
	struct namecache *names;	/* native frames' names, kept across redraws */
	struct seen_vec prev;	/* the last child's, sorted by key */
	struct seen_vec next;	/* the running child's so far */
	double next_draw, prev_t;
	uint64_t prev_allocs, prev_frees;
	uint64_t peak;		/* the most live bytes a redraw saw */
	double longest;		/* s: the loader's longest stop for a redraw */
	bool failed;
};

static volatile sig_atomic_t resized;

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

struct liveview *liveview__new(const struct liveview_opts *o)
{
	struct sigaction sa = { .sa_handler = on_winch };
	struct liveview *lv = calloc(1, sizeof(*lv));
	static const char enter[] = "\033[?1049h\033[?25l\033[H\033[2J";

	if (!lv || !(lv->names = namecache__new(LV_MAX_NAMES))) {
		free(lv);
		elog("out of memory: no live view (--top)");
		return NULL;
	}
	lv->o = *o;
	lv->rfd = -1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
	if (write(o->fd, enter, sizeof(enter) - 1) < 0)
		lv->failed = true;
	return lv;
}

/* --- the child: rank, name, draw --------------------------------------- */

/* A stack among the top ones. */
struct pick {
	uint64_t bytes, count;
	const struct proc *p;
	uint32_t id;
};

struct picks {
	struct pick *v;
	unsigned int k, top;
	const struct proc *p;	/* the process whose stacks go by */
};

static bool before(const struct pick *a, const struct pick *b)
{
	return a->bytes != b->bytes ? a->bytes > b->bytes : a->count > b->count;
}

/* stack_tree__for_each(): keep the @top stacks by live bytes, in order. */
static int keep(void *ctx, uint32_t id)
{
	struct picks *t = ctx;
	struct acct_counts c;
	struct pick e;
	unsigned int j;

	acct__counts(&t->p->acct, id, &c);
	e = (struct pick){ c.live_bytes, c.live_count, t->p, id };
	if (!c.live_count || (t->k == t->top && !before(&e, &t->v[t->top - 1])))
		return 0;
	j = t->k < t->top ? t->k++ : t->top - 1;
	for (; j && before(&e, &t->v[j - 1]); j--)
		t->v[j] = t->v[j - 1];
	t->v[j] = e;
	return 0;
}

static void human(uint64_t b, char *buf, size_t cap)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b / 1024;
	int u = 0;

	if (b < 1024) {
		snprintf(buf, cap, "%" PRIu64 " B", b);
		return;
	}
	for (; v >= 1024 && u < 3; u++)
		v /= 1024;
	snprintf(buf, cap, "%.1f %s", v, unit[u]);
}

struct draw {
	struct liveview *lv;
	struct trace *t;
	struct symbolizer *sym;	/* made at the first frame not known */
	FILE *back;		/* to the loader */
	FILE *scr;		/* the screen, written at once at the end */
	int cols;
};

/* One line of the screen, cut to its width. */
static void __attribute__((format(printf, 2, 3))) put(struct draw *d, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > d->cols)
		n = d->cols;
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	fprintf(d->scr, "%.*s\033[K\n", n, buf);
}

static bool plain(const char *s)
{
	return !strpbrk(s, "\t\n");
}

/* A frame's function and "file:line" from the symbolizer's @f. */
static void name_of(const struct sym_frame *f, char *func, size_t fcap, char *loc, size_t lcap)
{
	/* The innermost inlined function, where the address is. */
	const char *fn = f->ninline ? f->inl[0].func : f->func;
	const char *file = f->ninline ? f->inl[0].file : f->file;
	int line = f->ninline ? f->inl[0].line : f->line;

	snprintf(func, fcap, "%s", fn ? fn : "?");
	if (file && line)
		snprintf(loc, lcap, "%s:%d", path_base(file), line);
	else
		snprintf(loc, lcap, "%s", file ? path_base(file) : "");
	for (char *c = func; *c; c++)
		if (*c == '\t' || *c == '\n')
			*c = ' ';
}

/*
 * Frame @addr of @p: its function and place into @func, @loc, from the
 * names kept (looked up and sent back if new, its use sent back if the
 * loader may take it for unused: namecache.h); *@runtime if it is the
 * allocator's, the C runtime's or heapsnoop's (holders__is_runtime(),
 * the headline's rule).
 */
static void frame(struct draw *d, const struct proc *p, uint64_t addr, char *func, size_t fcap,
		  char *loc, size_t lcap, bool *runtime)
{
	const struct mapping *m = p->maps ? mapset__find(p->maps, addr) : NULL;
	struct name_ent *e;
	struct sym_frame f;
	const char *key;
	uint64_t off;

	*runtime = false;
	if (frametab__symbolize(trace__frames(d->t), (uint32_t)p->pid, addr, &f)) {
		name_of(&f, func, fcap, loc, lcap);
		return;
	}
	if (!m) {
		snprintf(func, fcap, "0x%" PRIx64, addr);
		*loc = 0;
		return;
	}
	key = m->build_id[0] && strcmp(m->build_id, "-") ? m->build_id : m->path;
	off = addr - m->start + m->offset;
	e = namecache__find(d->lv->names, key, off);
	if (e) {
		snprintf(func, fcap, "%s", e->func);
		snprintf(loc, lcap, "%s", e->loc);
		/* Kept by its name: a frame of a static program's malloc is the allocator's too. */
		*runtime = holders__is_runtime(&(struct sym_frame){ .status = SYM_OK,
								    .func = e->func,
								    .module = m->path });
		if (plain(key) && namecache__stale(d->lv->names, e))
			fprintf(d->back, "U\t%" PRIx64 "\t%s\n", off, key);
		return;
	}
	if (!d->sym)
		d->sym = symbolizer__new(NULL);
	if (d->sym && !symbolizer__lookup(d->sym, m, addr, true, &f) && f.status == SYM_OK) {
		name_of(&f, func, fcap, loc, lcap);
		f.module = m->path;
		*runtime = holders__is_runtime(&f);
	} else {
		snprintf(func, fcap, "%s+0x%" PRIx64, path_base(m->path), off);
		*loc = 0;
		*runtime = holders__is_runtime(&(struct sym_frame){ .status = SYM_NO_SYMBOL,
								    .module = m->path });
	}
	if (plain(key) && namecache__add(d->lv->names, key, off, func, loc))
		fprintf(d->back, "N\t%" PRIx64 "\t%s\t%s\t%s\n", off, key, func, loc);
}

/*
 * @k's stack in one line of @cap bytes: the innermost frame not in a
 * runtime library (else the innermost) with its file:line, then its
 * callers' functions, outwards, as many as @cap holds.
 */
static void summary(struct draw *d, const struct pick *k, char *out, size_t cap)
{
	uint64_t frames[REC_MAX_DEPTH];
	uint32_t n = stack_tree__frames(k->p->stacks, k->id, frames);
	char func[256], loc[256];
	size_t len = 0;
	bool shown = false, runtime;
	const char *cut;

	*out = 0;
	for (uint32_t i = 0; i < n && len + 8 < cap; i++) {
		frame(d, k->p, frames[i], func, sizeof(func), loc, sizeof(loc), &runtime);
		if (!shown && runtime && i + 1 < n)
			continue;
		/* A caller whole or not at all. */
		if (shown && len + 3 + strlen(func) >= cap)
			break;
		if (!shown)
			len += snprintf(out + len, cap - len, "%s%s%s", func, *loc ? " " : "", loc);
		else
			len += snprintf(out + len, cap - len, " < %s", func);
		shown = true;
		if (len >= cap) {
			len = cap - 1;
			break;
		}
	}
	cut = framefmt__cut(stack_tree__flags(k->p->stacks, k->id));
	if (*cut && len + 8 < cap)
		snprintf(out + len, cap - len, " (%s)", cut);
}

static int by_key(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* "+1.0 KiB" since the last redraw, "" unchanged, "new" not ranked then. */
static void growth(const struct liveview *lv, const struct pick *k, char *buf, size_t cap)
{
	struct seen key = { (uint64_t)k->p->pid << 32 | k->id, 0 };
	const struct seen *s = lv->prev.n ? bsearch(&key, lv->prev.v, lv->prev.n,
						    sizeof(key), by_key) : NULL;
	char h[32];

	if (!s) {
		snprintf(buf, cap, "%s", lv->prev_t ? "new" : "");
		return;
	}
	human(k->bytes > s->bytes ? k->bytes - s->bytes : s->bytes - k->bytes, h, sizeof(h));
	snprintf(buf, cap, "%s%s", k->bytes == s->bytes ? "" : k->bytes > s->bytes ? "+" : "-",
		 k->bytes == s->bytes ? "" : h);
}

/* The title and the totals. */
static void draw_head(struct draw *d, struct proc **v, size_t n, size_t with_live, double now)
{
	const struct liveview *lv = d->lv;
	const struct trace_stats *st = trace__stats(d->t);
	uint64_t cnt[HS_CNT__MAX] = { 0 }, peak = lv->peak, live = trace__live_bytes(d->t);
	double dt = now - lv->prev_t;
	char hl[32], hp[32], samp[64] = "";

	for (size_t i = 0; i < n; i++)
		if (v[i]->acct.peak_bytes > peak)
			peak = v[i]->acct.peak_bytes;
	if (live > peak)
		peak = live;
	if (lv->o.counters)
		status__read_counters(lv->o.counters, cnt);
	human(live, hl, sizeof(hl));
	human(peak, hp, sizeof(hp));
	if (n == 1)
		put(d, "heapsnoop --top: pid %d (%s), every %u s; Ctrl-C ends", v[0]->pid,
		    v[0]->comm[0] ? v[0]->comm : "?", lv->o.interval);
	else
		put(d, "heapsnoop --top: %zu processes, %zu with live blocks, every %u s; "
		    "Ctrl-C ends", n, with_live, lv->o.interval);
	if (lv->o.sample_bytes)
		snprintf(samp, sizeof(samp), "; 1 in %" PRIu64 " bytes sampled",
			 lv->o.sample_bytes);
	put(d, "live %s in %zu blocks, peak %s; %.0f allocs/s, %.0f frees/s; lost %" PRIu64
	    ", shed %" PRIu64 "%s", hl, trace__live_count(d->t), hp,
	    lv->prev_t && dt > 0 ? (double)(st->allocs - lv->prev_allocs) / dt : 0,
	    lv->prev_t && dt > 0 ? (double)(st->frees - lv->prev_frees) / dt : 0,
	    status__lost(cnt), cnt[HS_CNT_SHED], samp);
	put(d, "%s", "");
	put(d, "%10s %10s %7s  %sSTACK (innermost program frame < its callers)", "LIVE",
	    "GROWTH", "BLOCKS", with_live > 1 ? "    PID " : "");
}

/* The whole screen of @rows x @cols into d->scr; the ranks sent back. */
static void draw(struct draw *d, int rows, double now)
{
	size_t n = 0, with_live = 0;
	struct proc **v = trace__procs(d->t, &n);
	unsigned int top = rows > LV_HEAD + 1 ? (unsigned int)(rows - LV_HEAD - 1) : 1;
	struct picks pk = { calloc(LV_MAX_ROWS, sizeof(struct pick)), 0, 0, NULL };
	char line[1024], g[48], b[32];
	size_t width = 1;

	if (top > LV_MAX_ROWS)
		top = LV_MAX_ROWS;
	/* Ranked past the screen too: fewer stacks are "new" at the next. */
	pk.top = top * 2 < LV_MAX_ROWS ? top * 2 : LV_MAX_ROWS;
	while (with_live < n && tracker__count(v[with_live]->live))
		with_live++;
	/* What the columns before the stack leave of the width, and its 0. */
	if (d->cols > LV_COLS + (with_live > 1 ? 8 : 0))
		width = (size_t)d->cols - LV_COLS - (with_live > 1 ? 8 : 0) + 1;
	draw_head(d, v, n, with_live, now);
	for (size_t i = 0; pk.v && i < with_live; i++) {
		pk.p = v[i];
		stack_tree__for_each(v[i]->stacks, false, keep, &pk);
	}
	for (unsigned int i = 0; i < pk.k; i++) {
		const struct pick *k = &pk.v[i];

		fprintf(d->back, "S\t%d\t%u\t%" PRIu64 "\n", k->p->pid, k->id, k->bytes);
		if (i >= top)
			continue;
		summary(d, k, line, width < sizeof(line) ? width : sizeof(line));
		human(k->bytes, b, sizeof(b));
		growth(d->lv, k, g, sizeof(g));
		if (with_live > 1)
			put(d, "%10s %10s %7" PRIu64 "  %7d %s", b, g, k->count, k->p->pid, line);
		else
			put(d, "%10s %10s %7" PRIu64 "  %s", b, g, k->count, line);
	}
	if (!pk.k)
		put(d, "%s", "(no live blocks)");
	free(pk.v);
	free(v);
}

/* The child: draw from the snapshot, write the screen, send back, leave. */
static void __attribute__((noreturn)) child(struct liveview *lv, struct trace *t, int wfd,
					    double now)
{
	struct draw d = { .lv = lv, .t = t };
	struct winsize ws = { 0 };
	char *scr = NULL;
	size_t len = 0;
	int rows = 24;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGWINCH, SIG_IGN);
	d.cols = 80;
	if (!ioctl(lv->o.fd, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		rows = ws.ws_row;
		d.cols = ws.ws_col;
	}
	d.back = fdopen(wfd, "w");
	d.scr = open_memstream(&scr, &len);
	if (!d.back || !d.scr)
		_exit(1);
	fputs("\033[H", d.scr);
	draw(&d, rows, now);
	fputs("\033[J", d.scr);
	if (fclose(d.scr))
		_exit(1);
	/* The screen in one write (a terminal takes it whole, or in parts). */
	if (fd__write_all(lv->o.fd, scr, len, false))
		_exit(1);
	_exit(fclose(d.back) ? 1 : 0);
}

/* --- the loader's side --------------------------------------------------- */

static int seen_add(struct seen_vec *s, uint64_t key, uint64_t bytes)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct seen *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct seen){ key, bytes };
	return 0;
}

/* One line the child sent back (its fields split at tabs in place). */
static void take_line(struct liveview *lv, char *l)
{
	struct name_ent *e;
	char *f[5];
	int n = 0;

	for (char *save = NULL, *tok = strtok_r(l, "\t", &save); tok && n < 5;
	     tok = strtok_r(NULL, "\t", &save))
		f[n++] = tok;
	if (n == 3 && !strcmp(f[0], "U") && (e = namecache__find(lv->names, f[2],
								  strtoull(f[1], NULL, 16))))
		namecache__touch(lv->names, e);
	else if (n == 4 && !strcmp(f[0], "S"))
		seen_add(&lv->next, strtoull(f[1], NULL, 10) << 32 | strtoull(f[2], NULL, 10),
			 strtoull(f[3], NULL, 10));
	else if ((n == 5 || n == 4) && !strcmp(f[0], "N"))
		namecache__add(lv->names, f[2], strtoull(f[1], NULL, 16), f[3], n == 5 ? f[4] : "");
}

/* What the child wrote back so far (LV_READ_MAX at most); true at its end. */
static bool read_back(struct liveview *lv)
{
	char buf[8192];
	size_t total = 0;
	ssize_t r;

	while (total < LV_READ_MAX && (r = read(lv->rfd, buf, sizeof(buf))) != 0) {
		if (r < 0)
			return errno != EAGAIN && errno != EINTR;
		total += (size_t)r;
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] != '\n') {
				if (lv->len + 1 < sizeof(lv->line))
					lv->line[lv->len++] = buf[i];
				else
					lv->skip = true;
				continue;
			}
			lv->line[lv->len] = 0;
			if (!lv->skip)
				take_line(lv, lv->line);
			lv->len = 0;
			lv->skip = false;
		}
	}
	return total < LV_READ_MAX;
}

/* The child ended (@st): its ranks are the next growth's base. */
static void ended(struct liveview *lv, int st)
{
	while (!read_back(lv))
		;
	close(lv->rfd);
	lv->rfd = -1;
	lv->len = 0;
	lv->pid = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		elog("the live view (--top) could not draw: it stops; tracing goes on");
		lv->failed = true;
	}
	qsort(lv->next.v, lv->next.n, sizeof(*lv->next.v), by_key);
	free(lv->prev.v);
	lv->prev = lv->next;
	lv->next = (struct seen_vec){ 0 };
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A child forked to draw, its pipe opened: the loader's stop is the fork. */
static void start(struct liveview *lv, struct trace *t, double now)
{
	const struct trace_stats *st = trace__stats(t);
	double t0;
	int fds[2];
	pid_t pid;

	if (trace__live_bytes(t) > lv->peak)
		lv->peak = trace__live_bytes(t);
	/* A new redraw: names unused lately go if the cache is nearly full. */
	namecache__next(lv->names);
	if (pipe2(fds, O_CLOEXEC)) {
		elog("the live view (--top): pipe: %s; it stops, tracing goes on", strerror(errno));
		lv->failed = true;
		return;
	}
	fflush(stderr);
	t0 = now_s();
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child(lv, t, fds[1], now);
	}
	close(fds[1]);
	if (pid < 0) {
		elog("the live view (--top): fork: %s; it stops, tracing goes on", strerror(errno));
		close(fds[0]);
		lv->failed = true;
		return;
	}
	if (now_s() - t0 > lv->longest)
		lv->longest = now_s() - t0;
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	lv->rfd = fds[0];
	lv->pid = lv->last = pid;
	lv->prev_t = now;
	lv->prev_allocs = st->allocs;
	lv->prev_frees = st->frees;
}

void liveview__tick(struct liveview *lv, struct trace *t, double now)
{
	int st;
	pid_t r;

	if (!lv || lv->failed)
		return;
	if (lv->pid) {
		read_back(lv);
		while ((r = waitpid(lv->pid, &st, WNOHANG)) < 0 && errno == EINTR)
			;
		if (r == 0)
			return;
		ended(lv, r < 0 ? 1 << 8 : st);
		if (lv->failed)
			return;
	}
	if (now < lv->next_draw && !resized)
		return;
	resized = 0;
	start(lv, t, now);
	lv->next_draw = now + lv->o.interval;
}

double liveview__longest_ms(const struct liveview *lv)
{
	return lv ? lv->longest * 1e3 : 0;
}

bool liveview__owns(const struct liveview *lv, pid_t pid)
{
	return lv && pid && (pid == lv->pid || pid == lv->last);
}

void liveview__gone(struct liveview *lv, pid_t pid)
{
	if (lv && pid == lv->last && pid != lv->pid)
		lv->last = 0;
}

void liveview__free(struct liveview *lv)
{
	static const char leave[] = "\033[?25h\033[?1049l";

	if (!lv)
		return;
	if (lv->pid) {
		kill(lv->pid, SIGKILL);
		while (waitpid(lv->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (lv->rfd >= 0)
		close(lv->rfd);
	if (write(lv->o.fd, leave, sizeof(leave) - 1) < 0)
		lv->failed = true;
	signal(SIGWINCH, SIG_DFL);
	namecache__free(lv->names);
	free(lv->prev.v);
	free(lv->next.v);
	free(lv);
}
