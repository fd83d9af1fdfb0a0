// SPDX-License-Identifier: MIT
/*
 * interp.c - interpreter frames in the loader (see interp.h): the traced
 * processes' state, the walk's records kept for the allocation they come
 * with and handed to the room of the runtime a process runs (its row of
 * ops.h) to be named and spliced among its native frames. Looking at a
 * process (each row's look): look.c; the code objects' deaths ahead in
 * the ring: ahead.c; each runtime's naming: its room (python/pyops.c,
 * lua/luainterp.c, luajit/ljinterp.c).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "attach/detach.h"
#include "heapsnoop.skel.h"
#include "interp/interp_int.h"
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

void interp__reset(struct interp *ip, struct iproc *p)
{
	free_pending(p->pending);
	p->pending = NULL;
	free_deaths(p->deaths);
	p->deaths = NULL;
	/* Its room forgets its own state of it (the slot's row). */
	if (p->ops && p->ops->forget)
		p->ops->forget(ip, p);
	p->room = NULL;
	if (p->state == IP_ON && ip->nregistered) {
		ip->nregistered--;
		ip->o.skel->bss->interp_procs_n = ip->nregistered;
	}
	p->state = IP_OFF;
	p->ops = NULL;
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
	free(ip->py_cache);
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

int interp__turn_on(struct interp *ip, struct iproc *p, const struct interp_ops *ops,
		    const struct hs_interp_proc *cfg)
{
	uint32_t pid = (uint32_t)p->pid;

	if (bpf_map__update_elem(ip->o.skel->maps.interp_procs, &pid, sizeof(pid), cfg,
				 sizeof(*cfg), BPF_ANY))
		return -errno;
	p->since = ip->o.head ? ip->o.head(ip->o.ctx) : 0;
	p->state = IP_ON;
	p->ops = ops;
	ip->nregistered++;
	ip->o.skel->bss->interp_procs_n = ip->nregistered;
	ip->c.registered++;
	return 0;
}

void interp__forked_on(struct interp *ip, struct iproc *c, const struct interp_ops *ops)
{
	c->state = IP_ON;
	c->ops = ops;
	c->since = ip->o.head ? ip->o.head(ip->o.ctx) : 0;
	ip->nregistered++;
	ip->o.skel->bss->interp_procs_n = ip->nregistered;
}

/* -f: a child of a process whose frames are read runs the same image (BPF copied its entry). */
static void forked(struct interp *ip, pid_t parent, pid_t child)
{
	struct iproc *pp = interp__find_proc(ip, parent), *c;

	if (!pp || pp->state != IP_ON || !(c = interp__get_proc(ip, child)))
		return;
	interp__reset(ip, c);
	if (pp->ops->fork)
		pp->ops->fork(ip, pp, c);
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
	return p->ops->splice(ip, p, ev, seq, pd, native, n, native_cut, grab, out, max, flags);
}

uint32_t interp__splice_out(struct interp *ip, const struct splice_in *in,
			    const struct pending *pd, bool interp_cut, uint64_t *out,
			    uint32_t max, uint32_t *flags)
{
	uint32_t sflags, n = splice__frames(in, out, max, &sflags);

	if (sflags & SPLICE_ORDER) {
		ip->c.order++;
		*flags |= STACK_ORDER;
	}
	if ((sflags & SPLICE_DEPTH) || interp_cut) {
		ip->c.truncated++;
		*flags |= STACK_TRUNCATED;
	}
	if (pd->flags & HS_EVF_STACK_FAULT)
		*flags |= STACK_FAULT;
	return n;
}
void interp__stats(const struct interp *ip, FILE *out)
{
	flog(out, "interpreter frames: %" PRIu64 " processes read (%" PRIu64 " refused, said "
	     "above); %" PRIu64 " allocations, %" PRIu64 " frames named (%" PRIu64
	     " of a code object gone), %" PRIu64 " not started dropped; %" PRIu64
	     " allocations without frames (not a Python thread yet), %" PRIu64 " whose frames "
	     "were lost, %" PRIu64 " not matched, %" PRIu64 " not placed exactly (cut=order), %"
	     PRIu64 " cut", ip->c.registered, ip->c.refused, ip->c.allocs, ip->c.named, ip->c.gone,
	     ip->c.incomplete, ip->c.no_frames, ip->c.lost, ip->c.mismatch, ip->c.order,
	     ip->c.truncated);
	for (const struct interp_ops *const *r = interp_rooms; *r; r++)
		if ((*r)->stats)
			(*r)->stats(ip, out);
	if (ip->o.lua)
		flog(out, "Lua: %" PRIu64 " states found, %" PRIu64 " frames whose prototype could "
		     "not be read (named \"?\"), %" PRIu64 " named anew before a dump (a global "
		     "name found since)", ip->c.lua_states, ip->c.lua_stale, ip->c.lua_renamed);
}

void interp__settle(struct interp *ip)
{
	struct iproc *p;
	size_t pos = 0;

	while (ip && ip->procs && (p = htab__next(ip->procs, &pos, NULL)))
		if (p->ops && p->ops->settle && p->room)
			p->ops->settle(ip, p);
}

bool interp__grab(struct interp *ip, pid_t pid, uint64_t *lo, uint64_t *hi)
{
	struct iproc *p = interp__find_proc(ip, pid);

	if (!p || !p->ops || !p->ops->grab)
		return false;
	return p->ops->grab(p, lo, hi);
}
