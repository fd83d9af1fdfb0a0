// SPDX-License-Identifier: MIT
/*
 * ahead.c - the ring ahead of the record being handled: the code objects'
 * deaths (their last looks, HS_EV_INTERP_CODE) and the execs of processes
 * whose frames are read, seen before their turn, so a frame is named from
 * its code object's last look when the object died before the loader
 * read it, and never from another image's memory. docs/DESIGN.md,
 * "Interpreter frames".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp_int.h"

/* @p's first exec after ring position @pos, UINT64_MAX: none seen. */
static uint64_t exec_after(const struct iproc *p, uint64_t pos)
{
	for (size_t i = 0; i < p->nexecs; i++)
		if (p->execs[i] > pos)
			return p->execs[i];
	return UINT64_MAX;
}

/*
 * @p's first death of @addr after ring position @pos and before the next
 * exec (a later one is another image's code object), or NULL.
 */
static struct death *death_ahead(struct iproc *p, uint64_t addr, uint64_t pos)
{
	struct death *d = p->deaths ? htab__find(p->deaths, key_hash(addr), addr) : NULL;

	while (d && d->pos <= pos)
		d = d->next;
	return d && d->pos < exec_after(p, pos) ? d : NULL;
}

struct scan_ctx {
	struct interp *ip;
	uint64_t from;
};

/* reader__peek's callback: a death record ahead, kept (copied: its room may be reused). */
static void on_ahead(void *arg, const void *data, size_t len, uint64_t pos)
{
	struct scan_ctx *sc = arg;
	const struct hs_event *ev = data;
	struct death *d, **tail;
	struct iproc *p;

	if (pos < sc->from || len < HS_EVENT_HDR_SIZE)
		return;
	p = interp__find_proc(sc->ip, (pid_t)ev->pid);
	if (!p || p->state != IP_ON)
		return;
	if (ev->type == HS_EV_EXEC) {
		uint64_t *v = realloc(p->execs, (p->nexecs + 1) * sizeof(*v));

		/* Without room, a read may name a frame after the new image: never. */
		if (!v) {
			sc->ip->c.lost++;
			return;
		}
		p->execs = v;
		p->execs[p->nexecs++] = pos;
		return;
	}
	if (ev->type != HS_EV_INTERP_CODE || len < HS_EVENT_HDR_SIZE + sizeof(struct hs_interp_code) ||
	    !p->deaths)
		return;
	d = malloc(sizeof(*d) + len - HS_EVENT_HDR_SIZE);
	if (!d)
		return;	/* then the live read is used: the frame may be named "<code gone>" */
	d->pos = pos;
	d->addr = ev->addr;
	d->len = len - HS_EVENT_HDR_SIZE;
	d->next = NULL;
	memcpy(d->look, (const char *)data + HS_EVENT_HDR_SIZE, d->len);
	tail = (struct death **)htab__find(p->deaths, key_hash(d->addr), d->addr);
	if (!tail) {
		if (htab__add(p->deaths, key_hash(d->addr), d->addr, d))
			free(d);
		sc->ip->c.deaths_ahead++;
		return;
	}
	/* Ahead deaths come in the ring's order: appended. */
	for (struct death *e = (struct death *)tail; ; e = e->next)
		if (!e->next) {
			e->next = d;
			break;
		}
	sc->ip->c.deaths_ahead++;
}

/*
 * Look through the ring from the record at @pos (or where the last look
 * stopped, if further) to the producer now.
 */
static int ahead_scan(struct interp *ip, uint64_t pos)
{
	struct scan_ctx sc = { .ip = ip, .from = ip->scanned > pos ? ip->scanned : pos };
	uint64_t to;
	int n;

	if (!ip->o.peek)
		return 0;
	n = ip->o.peek(ip->o.ctx, sc.from, on_ahead, &sc, &to);
	if (to > ip->scanned)
		ip->scanned = to;
	return n;
}

void interp__death_handled(struct iproc *p, uint64_t addr, uint64_t pos)
{
	struct death *d = p->deaths ? htab__delete(p->deaths, key_hash(addr), addr) : NULL, *next;

	while (d && d->pos <= pos) {
		next = d->next;
		free(d);
		d = next;
	}
	if (d && htab__add(p->deaths, key_hash(addr), addr, d))
		for (; d; d = next) {
			next = d->next;
			free(d);
		}
	if (p->ops && p->ops->code_gone)
		p->ops->code_gone(p, addr);
}

const struct hs_interp_code *interp__ahead(void *ctx, pid_t pid, uint64_t addr, uint64_t pos,
					   size_t *len, bool *live)
{
	struct interp *ip = ctx;
	struct iproc *p = interp__find_proc(ip, pid);
	struct death *d;

	ahead_scan(ip, pos);
	*live = p && exec_after(p, pos) == UINT64_MAX;
	d = p ? death_ahead(p, addr, pos) : NULL;
	if (!d)
		return NULL;
	*len = d->len;
	return (const struct hs_interp_code *)d->look;
}
