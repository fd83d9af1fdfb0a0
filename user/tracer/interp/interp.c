// SPDX-License-Identifier: MIT
/*
 * interp.c - interpreter frames in the loader (see interp.h): the traced
 * processes' state, the walk's records kept for the allocation they come
 * with, named, and spliced among its native frames. Finding a CPython in
 * a process and registering it: look.c; the code objects' deaths ahead
 * in the ring: ahead.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "attach/detach.h"
#include "heapsnoop.skel.h"
#include "interp/interp_int.h"
#include "interp/splice.h"
#include "msg.h"
#include "stacks.h"

struct interp *interp__new(const struct interp_opts *o)
{
	struct interp *ip = calloc(1, sizeof(*ip));

	if (!ip)
		return NULL;
	ip->o = *o;
	if (!ip->o.max_frames || ip->o.max_frames > HS_INTERP_MAX_FRAMES)
		ip->o.max_frames = HS_INTERP_MAX_FRAMES;
	ip->procs = htab__new(16, NULL, NULL);
	ip->iframes = calloc(HS_INTERP_MAX_FRAMES, sizeof(*ip->iframes));
	ip->seg_end = calloc(HS_INTERP_MAX_FRAMES + 1, sizeof(*ip->seg_end));
	if (!ip->procs || !ip->iframes || !ip->seg_end) {
		interp__free(ip);
		return NULL;
	}
	return ip;
}

static void free_deaths(struct htab *h)
{
	struct death *d, *next;
	size_t pos = 0;

	while (h && (d = htab__next(h, &pos, NULL)))
		for (; d; d = next) {
			next = d->next;
			free(d);
		}
	htab__free(h);
}

static void free_pending(struct htab *h)
{
	struct pending *p;
	size_t pos = 0;

	while (h && (p = htab__next(h, &pos, NULL)))
		free(p);
	htab__free(h);
}

static void add_cache_stats(struct interp *ip, const struct py_cache *c)
{
	struct py_cache_stats st;

	if (!c)
		return;
	py_cache__stats(c, &st);
	ip->cache.hits += st.hits;
	ip->cache.reads += st.reads;
	ip->cache.from_death += st.from_death;
	ip->cache.gone += st.gone;
	ip->cache.live_lost += st.live_lost;
}

void interp__reset(struct interp *ip, struct iproc *p)
{
	add_cache_stats(ip, p->cache);
	py_cache__free(p->cache);
	p->cache = NULL;
	free_pending(p->pending);
	p->pending = NULL;
	free_deaths(p->deaths);
	p->deaths = NULL;
	lua_proc__free(p->lua);
	p->lua = NULL;
	lj_proc__free(p->lj);
	p->lj = NULL;
	if (p->state == IP_ON && ip->nregistered) {
		ip->nregistered--;
		ip->o.skel->bss->interp_procs_n = ip->nregistered;
	}
	p->state = IP_OFF;
	p->kind = HS_INTERP_NONE;
	p->looked = false;
}

void interp__free(struct interp *ip)
{
	struct link_batch *b;
	struct iproc *p;
	size_t pos = 0;

	if (!ip)
		return;
	while (ip->procs && (p = htab__next(ip->procs, &pos, NULL))) {
		interp__reset(ip, p);
		free(p->execs);
		free(p);
	}
	htab__free(ip->procs);
	/* Detached at once (attach/detach.h). */
	b = link_batch__new();
	for (size_t i = 0; i < ip->nprobes; i++) {
		link_batch__add(b, ip->probes[i].link);
		if (!ip->probes[i].link)
			link_batch__add_fd(b, ip->probes[i].fd);
	}
	link_batch__destroy(b);
	free(ip->probes);
	free(ip->iframes);
	free(ip->seg_end);
	free(ip);
}

struct iproc *interp__find_proc(const struct interp *ip, pid_t pid)
{
	return htab__find(ip->procs, key_hash((uint32_t)pid), (uint32_t)pid);
}

struct iproc *interp__get_proc(struct interp *ip, pid_t pid)
{
	struct iproc *p = interp__find_proc(ip, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (htab__add(ip->procs, key_hash((uint32_t)pid), (uint32_t)pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

/* --- records --------------------------------------------------------------- */

static void keep_frames(struct iproc *p, const struct hs_event *ev, size_t len)
{
	struct pending *pd = htab__find(p->pending, key_hash(ev->tid), ev->tid);
	uint32_t n = ev->nr_frames;

	if (n > HS_INTERP_MAX_FRAMES || HS_EVENT_HDR_SIZE + n * sizeof(pd->f[0]) > len)
		return;
	if (!pd) {
		pd = malloc(sizeof(*pd));
		if (!pd || htab__add(p->pending, key_hash(ev->tid), ev->tid, pd)) {
			free(pd);
			return;
		}
	}
	pd->nr = n;
	pd->flags = ev->flags;
	memcpy(pd->f, (const char *)ev + HS_EVENT_HDR_SIZE, n * sizeof(pd->f[0]));
}

/* -f: a child of a process whose frames are read runs the same image (BPF copied its entry). */
static void forked(struct interp *ip, pid_t parent, pid_t child)
{
	struct iproc *pp = interp__find_proc(ip, parent), *c;

	if (!pp || pp->state != IP_ON || !(c = interp__get_proc(ip, child)))
		return;
	interp__reset(ip, c);
	if (pp->kind == HS_INTERP_LUA) {
		interp__forked_lua(ip, pp, c);
		return;
	}
	c->img = pp->img;
	c->bias = pp->bias;
	snprintf(c->exe, sizeof(c->exe), "%s", pp->exe);
	c->cache = py_cache__new(child, &c->img.layout, c->img.code_type + c->bias, interp__ahead,
				 ip);
	c->pending = htab__new(8, NULL, NULL);
	c->deaths = htab__new(8, NULL, NULL);
	c->looked = true;
	if (!c->cache || !c->pending || !c->deaths) {
		interp__reset(ip, c);
		return;
	}
	c->state = IP_ON;
	c->kind = HS_INTERP_PYTHON;
	c->since = ip->o.head ? ip->o.head(ip->o.ctx) : 0;
	ip->nregistered++;
	ip->o.skel->bss->interp_procs_n = ip->nregistered;
}

void interp__record(struct interp *ip, const struct hs_event *ev, size_t len, uint64_t seq)
{
	struct iproc *p;

	if (len < HS_EVENT_HDR_SIZE)
		return;
	p = interp__find_proc(ip, (pid_t)ev->pid);
	switch (ev->type) {
	case HS_EV_INTERP:
		if (p && p->state == IP_ON)
			keep_frames(p, ev, len);
		break;
	case HS_EV_INTERP_CODE:
		ip->c.deaths++;
		if (p)
			interp__death_handled(p, ev->addr, seq - 1);
		break;
	case HS_EV_EXEC:
		if (!p)
			break;
		/* Seen ahead: handled now (a later one stays). */
		while (p->nexecs && p->execs[0] <= seq - 1)
			memmove(p->execs, p->execs + 1, --p->nexecs * sizeof(*p->execs));
		/* The old image's end; one registered at the exec stop came after it. */
		if (seq - 1 >= p->since)
			interp__reset(ip, p);
		break;
	case HS_EV_EXIT:
		if (p) {
			interp__reset(ip, p);
			htab__delete(ip->procs, key_hash((uint32_t)p->pid), (uint32_t)p->pid);
			free(p->execs);
			free(p);
		}
		break;
	case HS_EV_FORK:
		if (ev->size)
			forked(ip, (pid_t)ev->old_addr, (pid_t)ev->pid);
		break;
	default:
		break;
	}
}

/* --- the splice ------------------------------------------------------------ */

static bool is_eval(void *ctx, uint64_t ra)
{
	const struct iproc *p = ctx;

	return ra > p->bias && py_image__in_eval(&p->img, ra - 1 - p->bias);
}

static bool any_eval(struct iproc *p, const uint64_t *native, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (is_eval(p, native[i]))
			return true;
	return false;
}

/*
 * @pd's frames named into ip->iframes, cut into segments (ip->seg_end):
 * 3.11 ends one at each is_entry frame (it included), 3.12 and later at
 * each shim frame (owner 3, or 3.14's 4: dropped, as a 3.13 f_executable
 * that is None). Frames not started yet are dropped (CPython's tracebacks do).
 */
static uint32_t name_frames(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			    const struct pending *pd, uint64_t pos, uint32_t *nseg, bool *cut)
{
	bool by_entry = p->img.layout.fr_entry >= 0;
	uint32_t k = 0, s = 0;

	for (uint32_t i = 0; i < pd->nr; i++) {
		uint64_t w = pd->f[i].pos;
		struct py_frame_name fn;
		struct interp_frame f;

		if (!by_entry && HS_PY_POS_OWNER(w) >= PY_OWNER_CSTACK) {
			ip->seg_end[s++] = k;
			continue;
		}
		py_cache__name(p->cache, pd->f[i].code, HS_PY_POS_INDEX(w), pos, &fn);
		if (fn.incomplete) {
			ip->c.incomplete++;
		} else {
			f = (struct interp_frame){ .kind = HS_INTERP_PYTHON, .function = fn.name,
						   .file = fn.file, .line = (uint32_t)fn.line };
			/* Named once per (code object, line): the address kept with it. */
			uint64_t a = fn.memo && *fn.memo ? *fn.memo :
				     ip->o.frame_addr(ip->o.ctx, (pid_t)ev->pid, &f);

			if (!a) {
				*cut = true;	/* the frame table is full: the stack ends here */
				break;
			}
			if (fn.memo)
				*fn.memo = a;
			ip->iframes[k++] = a;
			ip->c.named++;
			ip->c.gone += fn.gone;
		}
		if (by_entry && (w & HS_PY_POS_ENTRY))
			ip->seg_end[s++] = k;
	}
	/* An open segment: the chain was cut (or ends oddly): the next eval frame's. */
	if (!s || ip->seg_end[s - 1] != k || (pd->flags & HS_EVF_TRUNCATED))
		if (k && (!s || ip->seg_end[s - 1] != k))
			ip->seg_end[s++] = k;
	*nseg = s;
	return k;
}

uint32_t interp__copy_native(const uint64_t *native, uint32_t n, uint64_t *out, uint32_t max)
{
	n = n < max ? n : max;
	memcpy(out, native, n * sizeof(*out));
	return n;
}

uint32_t interp__splice(struct interp *ip, const struct hs_event *ev, uint64_t seq,
			const uint64_t *native, uint32_t n, bool native_cut,
			const struct unwind_grab *grab, uint64_t *out, uint32_t max, uint32_t *flags)
{
	struct iproc *p = interp__find_proc(ip, (pid_t)ev->pid);
	struct pending *pd;
	struct splice_in in;
	uint32_t sflags, got;
	bool cut = false;

	*flags = 0;
	if (!ip->o.python && !ip->o.lua)
		return interp__copy_native(native, n, out, max);
	/* -p after an exec, -f's children: looked at (again) lazily. */
	if (!p || (p->state != IP_ON && (!p->looked || p->state == IP_WAIT_LIBC))) {
		interp__look(ip, (pid_t)ev->pid, INTERP_RUNNING);
		p = interp__find_proc(ip, (pid_t)ev->pid);
	}
	if (!p || p->state != IP_ON)
		return interp__copy_native(native, n, out, max);
	ip->c.allocs++;
	/* Made before an exec stop registered the image there now: not its frames. */
	if ((ev->flags & HS_EVF_INTERP) && seq - 1 < p->since) {
		ip->c.lost++;
		*flags = STACK_FAULT;
		return interp__copy_native(native, n, out, max);
	}
	if (ev->flags & HS_EVF_INTERP_LOST) {
		ip->c.lost++;
		*flags = STACK_FAULT;
		return interp__copy_native(native, n, out, max);
	}
	pd = (ev->flags & HS_EVF_INTERP) ?
	     htab__find(p->pending, key_hash(ev->tid), ev->tid) : NULL;
	if ((ev->flags & HS_EVF_INTERP) && (!pd || pd->nr != ev->interp_frames)) {
		ip->c.mismatch++;
		*flags = STACK_FAULT;
		return interp__copy_native(native, n, out, max);
	}
	if (p->kind == HS_INTERP_LUA)
		return interp__lua_splice(ip, p, ev, pd, native, n, native_cut, grab, out, max,
					  flags);
	if (!pd) {
		/* Not a Python thread (yet): no frames; an eval frame then is not placed. */
		ip->c.no_frames++;
		if (any_eval(p, native, n))
			*flags = STACK_ORDER;
		return interp__copy_native(native, n, out, max);
	}
	in = (struct splice_in){ .native = native, .nnative = n, .native_cut = native_cut,
				 .iframes = ip->iframes, .seg_end = ip->seg_end,
				 .interp_cut = pd->flags & HS_EVF_TRUNCATED, .is_eval = is_eval,
				 .ctx = p };
	got = name_frames(ip, p, ev, pd, seq - 1, &in.nseg, &cut);
	in.interp_cut = in.interp_cut || cut;
	ip->c.frames += got;
	pd->nr = 0;	/* taken */
	n = splice__frames(&in, out, max, &sflags);
	if (sflags & SPLICE_ORDER) {
		ip->c.order++;
		*flags |= STACK_ORDER;
	}
	if ((sflags & SPLICE_DEPTH) || in.interp_cut) {
		ip->c.truncated++;
		*flags |= STACK_TRUNCATED;
	}
	if (pd->flags & HS_EVF_STACK_FAULT)
		*flags |= STACK_FAULT;
	return n;
}

void interp__stats(const struct interp *ip, FILE *out)
{
	struct py_cache_stats cs = ip->cache, st;
	const struct iproc *p;
	size_t pos = 0;

	while ((p = htab__next(ip->procs, &pos, NULL)))
		if (p->cache) {
			py_cache__stats(p->cache, &st);
			cs.hits += st.hits;
			cs.reads += st.reads;
			cs.from_death += st.from_death;
			cs.gone += st.gone;
			cs.live_lost += st.live_lost;
			cs.entries += st.entries;
		}
	flog(out, "interpreter frames: %" PRIu64 " processes read (%" PRIu64 " refused, said "
	     "above); %" PRIu64 " allocations, %" PRIu64 " frames named (%" PRIu64
	     " of a code object gone), %" PRIu64 " not started dropped; %" PRIu64
	     " allocations without frames (not a Python thread yet), %" PRIu64 " whose frames "
	     "were lost, %" PRIu64 " not matched, %" PRIu64 " not placed exactly (cut=order), %"
	     PRIu64 " cut", ip->c.registered, ip->c.refused, ip->c.allocs, ip->c.named, ip->c.gone,
	     ip->c.incomplete, ip->c.no_frames, ip->c.lost, ip->c.mismatch, ip->c.order,
	     ip->c.truncated);
	flog(out, "code objects: %" PRIu64 " read, %" PRIu64 " named by their last look "
	     "(%" PRIu64 " of them after a read that came too late), %" PRIu64 " gone, %"
	     PRIu64 " cache hits, %zu kept; %" PRIu64 " deaths, %" PRIu64 " seen ahead",
	     cs.reads, cs.from_death + cs.live_lost, cs.live_lost, cs.gone, cs.hits, cs.entries,
	     ip->c.deaths, ip->c.deaths_ahead);
	if (ip->o.lua)
		flog(out, "Lua: %" PRIu64 " states found, %" PRIu64 " frames whose prototype could "
		     "not be read (named \"?\")", ip->c.lua_states, ip->c.lua_stale);
}
