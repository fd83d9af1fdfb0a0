// SPDX-License-Identifier: MIT
/*
 * plimage.c - the images heapsnoop --preload holds and the records it
 * writes of them (see plimage.h). A table is mapped from its hello to
 * its image's end: its memfd (the header, each region's segment 0: 2.1
 * MiB of address space, sparse) and each later segment as its message
 * comes (mapped, then its descriptor closed: the mapping holds it), so
 * that the view holds what the table held when its process died, kill
 * -9 included. Everything read from a table is checked (livedump.h): the
 * program that wrote it may be broken or hostile.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "heapsnoop/livedump.h"
#include "msg.h"
#include "plimage.h"
#include "interp/plread.h"
#include "plsummary.h"

#ifndef F_GET_SEALS
#define F_GET_SEALS 1034
#define F_SEAL_SHRINK 0x0002
#endif

struct segmap {
	void *p;
	uint64_t len;
};

struct plimage {
	pid_t pid;			/* ours (the hello's credentials) */
	int32_t own_pid;		/* its own, as its header and exec mark say */
	uint32_t kind;
	int32_t parent;
	uint64_t start;			/* its start time: the same across exec */
	int memfd, pidfd;
	uint64_t size;			/* its memfd's */
	const struct lt_header *hdr;	/* the header, in map */
	char comm[16];
	bool dumped;			/* in a dump of the running images */
	bool seg_said;			/* a segment refused, said */
	void *map;			/* its memfd, read-only */
	struct lt_view view;		/* it and each segment handed over */
	struct segmap segs[LT_HELLO_SEGS];
	unsigned int nsegs;
	struct lt_snap snap;
	struct plread_image *py;		/* its Python frames (plpython.c), once its header says */
	/* -s: a Python's live set read while it runs (read_peak()), its most kept. */
	uint64_t peak, peak_count;
	uint64_t peak_at_ms, read_at_ms;	/* CLOCK_MONOTONIC; 0: never read */
};

/*
 * How often a running Python's live bytes are read for its peak (-s's
 * freed-heap line, pyexit.h): the table keeps no peak, and CPython
 * frees its heap at exit. A read walks the table as a dump does.
 */
#define PEAK_READ_MS	100

struct plimages {
	struct plimage **alive;
	size_t n, cap;
	struct plimage *held;		/* the last image to end, not yet written */
	struct plsock *sock;
	struct plhello *pending;	/* messages taken during a dump, handled after, in order */
	size_t npending, pending_cap;
	struct lt_out *out;
	struct plread *py;		/* NULL: --no-interp */
	struct summary *sum;		/* -s: each image's live set at its end, or NULL */
	struct frametab *sum_names;	/* ... its interpreter frames' names */
	bool sum_err;			/* one could not be added: said once */
	bool verbose;
	int write_err;
	uint64_t hellos, fork_hellos, forks, refused, bad_tables, other_versions;
	uint64_t segments, bad_segments, missing_segments;
	uint64_t exec_dropped, exec_dropped_live, untraced_execs, untraced_live;
	uint64_t lost_entries, lost_stacks, lost_modules, unstable, undumped;
};

static void tick(void *arg);
static void python_of(struct plimages *ims, struct plimage *im);

struct plimages *plimages__new(int fd, struct plsock *sock, bool verbose, bool python)
{
	struct plimages *ims = calloc(1, sizeof(*ims));

	if (!ims || !(ims->out = malloc(sizeof(*ims->out))) ||
	    (python && !(ims->py = plread__new(verbose)))) {
		if (ims)
			free(ims->out);
		free(ims);
		return NULL;
	}
	lt_out__init(ims->out, fd);
	if (ims->py)
		plread__hook(ims->py, ims->out);
	ims->out->tick = tick;
	ims->out->tick_arg = ims;
	ims->sock = sock;
	ims->verbose = verbose;
	return ims;
}

/* --- an image's table ----------------------------------------------------- */

static bool drain(struct plimages *ims);
static void pending_take(struct plimages *ims, bool keep_held);
static void plimages__other_version(struct plimages *ims, struct plhello *h);

/*
 * Segment @id (region << 5 | k) of @im, the memfd @fd (closed here):
 * mapped and taken into its view, if it is one (sealed against
 * shrinking: a read inside it never faults; the size its header says);
 * else counted and said once.
 */
static void segment_take(struct plimages *ims, struct plimage *im, uint8_t id, int fd)
{
	unsigned int r = id >> 5, k = id & 31;
	int seals = fcntl(fd, F_GET_SEALS);
	uint64_t len = r < LT_NREGIONS ? lt_view__seg_size(&im->view, r, k) : 0;
	struct stat st;
	void *p = MAP_FAILED;
	int err = -EINVAL;

	if (r < LT_NREGIONS && seals >= 0 && (seals & F_SEAL_SHRINK) && !fstat(fd, &st) &&
	    (uint64_t)st.st_size >= len && im->nsegs < LT_HELLO_SEGS) {
		p = mmap(NULL, len, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd, 0);
		err = p == MAP_FAILED ? -errno : lt_view__attach(&im->view, r, k, p, len);
	}
	close(fd);
	if (!err) {
		im->segs[im->nsegs++] = (struct segmap){ p, len };
		ims->segments++;
		return;
	}
	if (p != MAP_FAILED)
		munmap(p, len);
	ims->bad_segments++;
	if (!im->seg_said) {
		im->seg_said = true;
		elog("pid %d: a segment of its live table refused (%s): what it holds is not "
		     "written", (int)im->pid, strerror(-err));
	}
}

/*
 * Its copy-out for a dump, and what the walk met, said with -v. First
 * the messages on the socket (a segment sent before its process ended,
 * or before this dump, is in it then) and the segments placed in its
 * memfd since.
 */
static bool snap(struct plimages *ims, struct plimage *im)
{
	drain(ims);
	lt_view__refresh(&im->view);
	if (lt_snap__take(&im->snap, &im->view, (int)im->pid)) {
		elog("pid %d: no memory to copy its live set out: it is not written", (int)im->pid);
		ims->bad_tables++;
		return false;
	}
	ims->unstable += im->snap.st.unstable;
	if (im->snap.st.bad_stack)
		elog("pid %d: %" PRIu64 " live blocks named a stack its table does not hold: "
		     "written without one", (int)im->pid, im->snap.st.bad_stack);
	if (ims->verbose)
		elog("pid %d: %" PRIu64 " live of %" PRIu64 " slots; %" PRIu64 " read again, %"
		     PRIu64 " realloc links followed", (int)im->pid, im->snap.n, im->snap.st.slots,
		     im->snap.st.retries, im->snap.st.linked);
	return true;
}

/*
 * An ended image's segments that never came (its header names them):
 * what they hold is in no dump. Counted, said.
 */
static void missing(struct plimages *ims, struct plimage *im)
{
	unsigned int n = lt_view__missing(&im->view);

	if (!n)
		return;
	ims->missing_segments += n;
	elog("pid %d: NOT RECORDED: %u segments of its live table were never handed over: what "
	     "they held is not in its dump", (int)im->pid, n);
}

/* -v: what its table holds, in bytes, nodes and stacks (the docs' numbers). */
static void say_table(const struct plimage *im)
{
	const struct lt_header *h = im->hdr;
	uint64_t off = 8, nodes = 0, stacks = 0;
	struct lt_node n;

	while (lt_stack__next(&im->view, off, &n) == 1) {
		nodes += n.commit != LT_STK_PAD;
		stacks += !!(n.commit & LT_STK_LEAF);
		off = n.next;
	}
	elog("pid %d: its live table: %" PRIu64 " bytes of stacks (%" PRIu64 " nodes, %" PRIu64
	     " made as whole stacks), %" PRIu64 " of entries (%" PRIu64 " slots), %" PRIu64
	     " of modules; %u segments beside its memfd", (int)im->pid,
	     __atomic_load_n(&h->stk_used, __ATOMIC_RELAXED), nodes, stacks,
	     __atomic_load_n(&h->ent_hwm, __ATOMIC_RELAXED) * sizeof(struct lt_entry),
	     __atomic_load_n(&h->ent_hwm, __ATOMIC_RELAXED),
	     __atomic_load_n(&h->mod_used, __ATOMIC_RELAXED), im->nsegs);
}

/* Its counts taken into the run's, its descriptors closed. */
static void image_close(struct plimages *ims, struct plimage *im)
{
	const struct lt_header *h = im->hdr;
	uint64_t e = __atomic_load_n(&h->lost_entries, __ATOMIC_RELAXED);
	uint64_t s = __atomic_load_n(&h->lost_stacks, __ATOMIC_RELAXED);
	uint64_t m = __atomic_load_n(&h->lost_modules, __ATOMIC_RELAXED);

	if (e || s || m)
		elog("pid %d: NOT RECORDED: %" PRIu64 " allocations, %" PRIu64 " stacks, %" PRIu64
		     " modules: its live table could not grow (out of memory or address space, "
		     "or HEAPSNOOP_TABLE_ENTRIES: docs/COLLECTOR.md)", (int)im->pid, e, s, m);
	if (ims->verbose)
		say_table(im);
	ims->lost_entries += e;
	ims->lost_stacks += s;
	ims->lost_modules += m;
	ims->forks += __atomic_load_n(&h->forks, __ATOMIC_RELAXED);
	plread_image__free(im->py);
	lt_snap__free(&im->snap);
	for (unsigned int i = 0; i < im->nsegs; i++)
		munmap(im->segs[i].p, im->segs[i].len);
	munmap(im->map, im->size);
	close(im->memfd);
	close(im->pidfd);
	free(im);
}

/* The live blocks of @im now, for a message; 0 if its table cannot be read. */
static uint64_t live_now(struct plimages *ims, struct plimage *im)
{
	uint64_t n = 0;

	if (snap(ims, im))
		n = im->snap.n;
	lt_snap__free(&im->snap);
	return n;
}

/* --- hellos --------------------------------------------------------------- */

static bool pidfd_ended(int pidfd)
{
	struct pollfd p = { pidfd, POLLIN, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP));
}

/*
 * @pidfd is a pidfd of @pid (or of a process already gone: -1), as its
 * fdinfo says; true where /proc cannot say.
 */
static bool pidfd_of(int pidfd, pid_t pid)
{
	char path[64], line[128];
	bool ok = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return true;
	ok = false;
	while (fgets(line, sizeof(line), f)) {
		int p;

		if (sscanf(line, "Pid: %d", &p) == 1) {
			ok = p == pid || p == -1;
			break;
		}
	}
	fclose(f);
	return ok;
}

/*
 * @im from @h: its table checked (a sealed memfd, a header that holds)
 * and mapped, a fork child's segments taken. Returns 0, -EPROTO (a table
 * of another version: *@version says which) or -errno.
 */
static int image_open(struct plimages *ims, struct plimage *im, struct plhello *h,
		      uint32_t *version)
{
	struct stat st;
	int seals = fcntl(h->memfd, F_GET_SEALS), err;

	/* Sealed against shrinking: a read inside its size never faults. */
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(h->memfd, &st) ||
	    st.st_size < (off_t)LT_HDR_SIZE || !pidfd_of(h->pidfd, h->pid))
		return -EBADF;
	im->size = (uint64_t)st.st_size;
	im->map = mmap(NULL, im->size, PROT_READ, MAP_SHARED | MAP_NORESERVE, h->memfd, 0);
	if (im->map == MAP_FAILED)
		return -errno;
	err = lt_view__open(&im->view, im->map, im->size);
	if (err) {
		*version = lt_view__version(im->map, im->size);
		munmap(im->map, im->size);
		return err;
	}
	im->hdr = im->view.h;
	im->pid = h->pid;
	im->own_pid = __atomic_load_n(&im->hdr->pid, __ATOMIC_RELAXED);
	im->kind = h->h.kind;
	im->parent = h->h.parent;
	im->start = h->h.start_ticks;
	im->memfd = h->memfd;
	im->pidfd = h->pidfd;
	h->memfd = h->pidfd = -1;
	memcpy(im->comm, im->hdr->comm, sizeof(im->comm) - 1);
	for (char *c = im->comm; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = '?';
	for (uint32_t i = 0; i < h->h.nsegs; i++)
		segment_take(ims, im, h->h.segs[i], h->segfd[i]);
	h->h.nsegs = 0;
	return 0;
}

/* An image of @pid that exec'd into @start's: the old one is over. */
static void retire_exec(struct plimages *ims, pid_t pid, uint64_t start)
{
	for (size_t i = 0; i < ims->n; i++) {
		struct plimage *im = ims->alive[i];

		/* The same process: the same start time, or still running under this pid. */
		if (im->pid != pid || (start && im->start && start != im->start) ||
		    (!(start && im->start) && pidfd_ended(im->pidfd)))
			continue;
		ims->exec_dropped++;
		ims->exec_dropped_live += live_now(ims, im);
		if (ims->verbose)
			elog("pid %d: exec'd; the old image's blocks are dropped", (int)pid);
		ims->alive[i] = ims->alive[--ims->n];
		image_close(ims, im);
		return;
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct live_sum {
	uint64_t bytes, count;
};

static int add_live(void *arg, const struct lt_live *l)
{
	struct live_sum *a = arg;

	a->bytes += l->size;
	a->count++;
	return 0;
}

/*
 * -s: a running Python's live bytes read, every PEAK_READ_MS at most,
 * the most kept: its peak as far as the reads saw it. Not for a sample
 * by bytes (its blocks stand for more than their sizes).
 */
static void read_peak(struct plimages *ims, struct plimage *im)
{
	struct lt_walk_stats st = { 0 };
	struct live_sum a = { 0 };
	uint64_t now;

	if (!ims->sum || !im->py || !__atomic_load_n(&im->hdr->py_version, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&im->hdr->sample_bytes, __ATOMIC_RELAXED))
		return;
	now = now_ms();
	if (im->read_at_ms && now - im->read_at_ms < PEAK_READ_MS)
		return;
	im->read_at_ms = now;
	lt_view__refresh(&im->view);
	lt_walk(&im->view, 0, 0, add_live, &a, &st);
	if (a.bytes > im->peak) {
		im->peak = a.bytes;
		im->peak_count = a.count;
		im->peak_at_ms = now;
	}
}

/* -s: @im's snapshot into the summary (plsummary.h). */
static void summarize(struct plimages *ims, struct plimage *im)
{
	struct plsum_peak pk = { im->peak, im->peak_count,
				 im->peak ? (int64_t)(now_ms() - im->peak_at_ms) : -1, PEAK_READ_MS };

	if (!ims->sum || ims->sum_err ||
	    !plsummary__add(ims->sum, &im->snap, im->comm, ims->out, plread__frames(ims->py),
			    ims->sum_names, &pk))
		return;
	ims->sum_err = true;
	elog("out of memory for the -s summary: pid %d's live blocks are not in it",
	     (int)im->pid);
}

/*
 * An ended image's exit section, written if it held anything (as the
 * tracer's --leaks-at-exit writes them), then closed.
 */
static void exit_section(struct plimages *ims, struct plimage *im)
{
	python_of(ims, im);
	if (snap(ims, im) && im->snap.n && lt_out__exit(ims->out, &im->snap, im->comm))
		ims->write_err = ims->out->err;
	if (im->snap.n)
		summarize(ims, im);
	missing(ims, im);
	image_close(ims, im);
}

/*
 * A hello's image taken into the run. @keep_held: the hello was sent
 * before the held image's end was seen (it waited in the socket or in
 * pending while sections were written), so it says nothing of which
 * image ended last.
 */
static void hello_take(struct plimages *ims, struct plhello *h, bool keep_held)
{
	struct plimage *im = NULL;
	uint32_t version = 0;
	int err = 0;

	if (ims->n == ims->cap) {
		size_t cap = ims->cap ? 2 * ims->cap : 16;
		struct plimage **v = realloc(ims->alive, cap * sizeof(*v));

		if (!v)
			err = -ENOMEM;
		else
			ims->alive = v, ims->cap = cap;
	}
	if (!err)
		im = calloc(1, sizeof(*im));
	err = err ? err : im ? image_open(ims, im, h, &version) : -ENOMEM;
	if (err == -EPROTO) {
		elog("pid %d: its live table is of version %u, this heapsnoop reads version %d (a "
		     "collector of another heapsnoop: HEAPSNOOP_PRELOAD_LIB, or LD_PRELOAD set by "
		     "hand?): its allocations are not recorded", (int)h->pid, version, LT_VERSION);
		ims->other_versions++;
	} else if (err) {
		elog("pid %d: its live table refused (%s): its allocations are not recorded",
		     (int)h->pid, strerror(-err));
		ims->refused++;
	}
	if (err) {
		plhello__close(h);
		free(im);
		return;
	}
	ims->hellos++;
	if (im->kind == LT_HELLO_FORK)
		ims->fork_hellos++;
	else
		retire_exec(ims, im->pid, im->start);
	/* Something started after the held image ended: that one was not the last. */
	if (ims->held && !keep_held) {
		struct plimage *held = ims->held;

		ims->held = NULL;
		exit_section(ims, held);
	}
	if (ims->verbose)
		elog("pid %d (%s%.*d): its live table taken", (int)im->pid,
		     im->kind == LT_HELLO_FORK ? "forked by " : "an image",
		     im->kind == LT_HELLO_FORK ? 1 : 0, im->kind == LT_HELLO_FORK ? im->parent : 0);
	ims->alive[ims->n++] = im;
	python_of(ims, im);
}

/* The image a segment's message from @pid is for: the running one of that pid, else the held. */
static struct plimage *image_of(struct plimages *ims, pid_t pid)
{
	for (size_t i = 0; i < ims->n; i++)
		if (ims->alive[i]->pid == pid)
			return ims->alive[i];
	return ims->held && ims->held->pid == pid ? ims->held : NULL;
}

/* A hello of @pid waits in pending: a message of @pid after it is that image's. */
static bool hello_pending(const struct plimages *ims, pid_t pid)
{
	for (size_t i = 0; i < ims->npending; i++)
		if (ims->pending[i].pid == pid && ims->pending[i].h.kind != LT_HELLO_SEGMENT)
			return true;
	return false;
}

/* A segment's message taken into its image; one of no image held is refused, counted. */
static void seg_message(struct plimages *ims, struct plhello *h)
{
	struct plimage *im = image_of(ims, h->pid);

	if (!im) {
		plhello__close(h);
		ims->bad_segments++;
		elog("pid %d: a segment of a live table heapsnoop does not hold: refused",
		     (int)h->pid);
		return;
	}
	segment_take(ims, im, h->h.segs[0], h->segfd[0]);
	h->h.nsegs = 0;
}

/*
 * A message off the socket (pending has room): a segment for an image
 * held, taken now (it changes no list: a dump may be under way);
 * anything else (a hello, a segment of an image whose hello waits) into
 * pending, in order. False when there was none.
 */
static bool message_in(struct plimages *ims)
{
	struct plhello *h = &ims->pending[ims->npending];
	int r = plsock__recv(ims->sock, h);

	if (!r)
		return false;
	if (r == -EPROTO) {
		plimages__other_version(ims, h);
	} else if (r < 0) {
		plimages__refused(ims);
	} else if (h->h.kind == LT_HELLO_SEGMENT && !hello_pending(ims, h->pid) &&
		   image_of(ims, h->pid)) {
		seg_message(ims, h);
	} else {
		ims->npending++;
	}
	return true;
}

/*
 * Every message waiting on the socket taken (a dump's view then has
 * every segment sent before): pending grows as it must. Returns true if
 * it stopped without memory for more (they wait in the socket), false
 * once the socket is empty.
 */
static bool drain(struct plimages *ims)
{
	while (ims->sock) {
		if (ims->npending == ims->pending_cap) {
			size_t cap = ims->pending_cap ? 2 * ims->pending_cap : 64;
			struct plhello *p = realloc(ims->pending, cap * sizeof(*p));

			if (!p)
				return true;
			ims->pending = p;
			ims->pending_cap = cap;
		}
		if (!message_in(ims))
			return false;
	}
	return false;
}

/* Every message waiting taken and handled, in order (@keep_held: pending_take()'s). */
static void take_all(struct plimages *ims, bool keep_held)
{
	bool more;

	do {
		more = drain(ims);
		pending_take(ims, keep_held);
	} while (more);
}

/*
 * Messages that came during a dump or a section, taken now, in order
 * (each copied out first: a section written meanwhile may take more, and
 * move the array).
 */
static void pending_take(struct plimages *ims, bool keep_held)
{
	for (size_t i = 0; i < ims->npending; i++) {
		struct plhello h = ims->pending[i];

		if (h.h.kind == LT_HELLO_SEGMENT)
			seg_message(ims, &h);
		else
			hello_take(ims, &h, keep_held);
	}
	ims->npending = 0;
}

/* During a long dump: messages taken off the socket (senders wait), hellos handled after. */
static void tick(void *arg)
{
	drain(arg);
}

void plimages__take(struct plimages *ims)
{
	take_all(ims, false);
}

static void plimages__other_version(struct plimages *ims, struct plhello *h)
{
	elog("pid %d: its collector is of version %u, this heapsnoop reads version %d (a "
	     "libheapsnoop_preload.so of another heapsnoop: HEAPSNOOP_PRELOAD_LIB, or "
	     "LD_PRELOAD set by hand?): its allocations are not recorded", (int)h->pid,
	     h->h.version, LT_VERSION);
	ims->other_versions++;
}

void plimages__refused(struct plimages *ims)
{
	if (!ims->refused)
		elog("a message on the collector's socket was refused (not a hello of this run's "
		     "processes)");
	ims->refused++;
}

size_t plimages__alive(const struct plimages *ims)
{
	return ims->n;
}

int plimages__pidfd(const struct plimages *ims, size_t i)
{
	return ims->alive[i]->pidfd;
}

void plimages__summary(struct plimages *ims, struct summary *s, struct frametab *names)
{
	ims->sum = s;
	ims->sum_names = names;
}

uint64_t plimages__hellos(const struct plimages *ims)
{
	return ims->hellos;
}

/* --- ends and dumps ------------------------------------------------------- */

/* An image that ended with its exec mark set and no new hello: said, counted, closed. */
static bool exec_untraced(struct plimages *ims, struct plimage *im)
{
	int32_t mark = __atomic_load_n(&im->hdr->exec_pending, __ATOMIC_ACQUIRE);

	if (mark && mark == im->own_pid) {
		/* It exec'd, and no new image said hello: one without the collector. */
		uint64_t live = live_now(ims, im);

		elog("pid %d exec'd a program that did not hand its table over (static, setuid, "
		     "LD_PRELOAD cleared, run as another user or in a root without /proc that cannot "
		     "open heapsnoop's collector /proc/PID/fd/N: name a copy it can read in "
		     "HEAPSNOOP_PRELOAD_LIB, or in another network namespace: then its "
		     "own dumps are beside -o's file): NOT TRACED from there on; %" PRIu64
		     " allocations of the image before were live at the exec", (int)im->pid, live);
		ims->untraced_execs++;
		ims->untraced_live += live;
		image_close(ims, im);
		return true;
	}
	return false;
}

void plimages__ended(struct plimages *ims, size_t i)
{
	struct plimage *im = ims->alive[i];

	plread_image__ended(im->py);	/* gone: nothing more is read of it */
	ims->alive[i] = ims->alive[--ims->n];
	if (exec_untraced(ims, im))
		return;
	if (ims->held)
		exit_section(ims, ims->held);
	ims->held = im;
	/*
	 * Hellos the section's ticks took: into the run now, so that their
	 * pidfds are watched (appended: ends()'s walk down the others goes on).
	 */
	pending_take(ims, true);
}

/* An image whose collector reads a CPython or a Lua: its frames named from now on. */
static void python_of(struct plimages *ims, struct plimage *im)
{
	if (ims->py && !im->py && (__atomic_load_n(&im->hdr->py_version, __ATOMIC_ACQUIRE) ||
				   __atomic_load_n(&im->hdr->lua_vm, __ATOMIC_ACQUIRE)))
		im->py = plread_image__new(ims->py, im->pid, im->pidfd, &im->view);
	plread_image__scan(im->py);
}

void plimages__scan(struct plimages *ims)
{
	for (size_t i = 0; ims->py && i < ims->n; i++) {
		python_of(ims, ims->alive[i]);
		read_peak(ims, ims->alive[i]);
	}
}

bool plimages__python(const struct plimages *ims)
{
	for (size_t i = 0; ims->py && i < ims->n; i++)
		if (ims->alive[i]->py)
			return true;
	return false;
}

/* The image whose snapshot @s is. */
static struct plimage *container_of_snap(struct lt_snap *s)
{
	return (struct plimage *)((char *)s - offsetof(struct plimage, snap));
}

static int by_bytes(const void *a, const void *b)
{
	const struct lt_snap *x = *(struct lt_snap *const *)a, *y = *(struct lt_snap *const *)b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* One dump of @v[@n] (heaviest first). */
static void dump_of(struct plimages *ims, struct plimage **v, size_t n, const char *reason)
{
	struct lt_snap **s = calloc(n ? n : 1, sizeof(*s));
	uint64_t sample = 0;
	size_t k = 0;

	if (!s) {
		elog("no memory for a dump: %s dump not written", reason);
		ims->write_err = ENOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		python_of(ims, v[i]);
		if (!snap(ims, v[i]))
			continue;
		v[i]->dumped = true;
		s[k++] = &v[i]->snap;
		if (!sample)
			sample = __atomic_load_n(&v[i]->hdr->sample_bytes, __ATOMIC_RELAXED);
	}
	qsort(s, k, sizeof(*s), by_bytes);
	if (lt_out__dump(ims->out, s, k, reason, sample))
		ims->write_err = ims->out->err;
	if (ims->verbose)
		elog("%s dump written: %zu processes", reason, k);
	/* The run's last dump (the last image's end, or a stop): the summary's. */
	for (size_t i = 0; i < k && (!strcmp(reason, "exit") || !strcmp(reason, "signal")); i++)
		summarize(ims, container_of_snap(s[i]));
	for (size_t i = 0; i < n; i++)
		lt_snap__free(&v[i]->snap);
	free(s);
	pending_take(ims, false);
}

void plimages__dump(struct plimages *ims, const char *reason)
{
	/* An image that ended before this dump: its exit section first. */
	if (ims->held) {
		struct plimage *held = ims->held;

		ims->held = NULL;
		exit_section(ims, held);
	}
	dump_of(ims, ims->alive, ims->n, reason);
}

/*
 * At the run's end: hellos still on the socket or taken by a section's
 * ticks (a process's hello can wait there while the images that ended
 * before it are written: 100 forks, the last child's hello behind its
 * sibling's section, was written nowhere). Those processes ended before
 * the last one was seen to: each its exit section, the held image
 * staying the last.
 */
static void late_hellos(struct plimages *ims)
{
	do {
		take_all(ims, true);
		for (size_t i = ims->n; i-- > 0;) {
			struct plimage *im = ims->alive[i];

			if (!pidfd_ended(im->pidfd))
				continue;
			ims->alive[i] = ims->alive[--ims->n];
			if (!exec_untraced(ims, im))
				exit_section(ims, im);
		}
	} while (ims->npending);
}

int plimages__finish(struct plimages *ims)
{
	struct plimage *last;
	uint64_t lost, unhelloed;

	late_hellos(ims);
	last = ims->held;
	ims->held = NULL;
	if (last) {
		dump_of(ims, &last, 1, "exit");
		missing(ims, last);
		image_close(ims, last);
	}
	late_hellos(ims);	/* any taken during the last dump: written after it */
	/* Still running (a second signal stopped the run): in its dump, or counted. */
	while (ims->n) {
		struct plimage *im = ims->alive[--ims->n];

		ims->undumped += !im->dumped;
		image_close(ims, im);
	}
	if (ims->py)
		plread__finish(ims->py);
	/* Every image's count of forks is in now. */
	unhelloed = ims->forks > ims->fork_hellos ? ims->forks - ims->fork_hellos : 0;
	if (ims->write_err) {
		elog("writing records failed: %s", strerror(ims->write_err));
		return 1;
	}
	if (ims->exec_dropped)
		elog("%" PRIu64 " images were replaced by exec; %" PRIu64 " allocations were still "
		     "live at their exec", ims->exec_dropped, ims->exec_dropped_live);
	if (unhelloed)
		elog("NOT RECORDED: %" PRIu64 " forked processes ended before handing their live "
		     "tables over", unhelloed);
	if (ims->refused || ims->bad_tables || ims->other_versions)
		elog("NOT RECORDED: %" PRIu64 " processes' live tables were refused or could not be "
		     "read (said above)", ims->refused + ims->bad_tables + ims->other_versions);
	if (ims->bad_segments || ims->missing_segments)
		elog("NOT RECORDED: %" PRIu64 " segments of live tables were refused or never "
		     "handed over (said above)", ims->bad_segments + ims->missing_segments);
	if (ims->verbose)
		elog("%" PRIu64 " segments of live tables taken beside their memfds", ims->segments);
	if (ims->unstable)
		elog("%" PRIu64 " live entries changed on every reading of a running table: not in "
		     "their dump", ims->unstable);
	if (!ims->hellos)
		elog("NOT RECORDED: no process handed its live table over: nothing was recorded "
		     "(a static program, a setuid one, or LD_PRELOAD cleared)");
	if (ims->undumped)
		elog("NOT RECORDED: %" PRIu64 " running processes handed their live tables over "
		     "after the last dump", ims->undumped);
	lost = ims->lost_entries + ims->lost_stacks + ims->lost_modules + unhelloed +
	       ims->refused + ims->bad_tables + ims->other_versions + ims->bad_segments +
	       ims->missing_segments + ims->untraced_execs + !ims->hellos + ims->undumped;
	return lost ? 3 : 0;
}

void plimages__free(struct plimages *ims)
{
	if (!ims)
		return;
	if (ims->held)
		image_close(ims, ims->held);
	while (ims->n)
		image_close(ims, ims->alive[--ims->n]);
	for (size_t i = 0; i < ims->npending; i++)
		plhello__close(&ims->pending[i]);
	free(ims->pending);
	plread__free(ims->py);
	free(ims->alive);
	free(ims->out);
	free(ims);
}
