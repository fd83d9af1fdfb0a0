// SPDX-License-Identifier: MIT
/*
 * tails.c - the tails threads are given (see tails.h). Each slot of the
 * BPF map (thread id modulo HS_TAIL_SLOTS) is written as a sequence lock
 * (Linux's seqcount: odd while written; the programs read it twice,
 * bpf/tail.h), and here holds that thread's last tails, the one the slot
 * describes among them.
 *
 * When can a tail no record names any more go? Only the thread's own
 * allocations read its slot, one at a time. Once the slot describes
 * another, the allocation under way may still have read the old one (its
 * record comes later, any time later on a preemptible kernel); the one
 * after cannot. So a tail is forgotten only after two allocation records
 * of its thread, reserved after the slot stopped describing it, have been
 * handled: none still in the ring can name it. Until then it is kept, and
 * a thread whose tails are all still named gets no new one (tails.h's
 * TAILS_KEEP is room enough where stacks settle).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tails.h"

/* Allocation records of a thread over which its shallowest stack is kept. */
#define HINT_WINDOW 64
/*
 * Records of a thread after which its tails may start low again: one
 * stack copied whole, and a tail made as near its top as it holds.
 */
#define FRESH_AFTER 65536

struct kept {
	struct unwind_tail *t;
	uint64_t gone;		/* the producer's position once not described; 0: described */
	uint32_t after;		/* records of the thread handled from above @gone */
};

struct tail_slot {
	pid_t pid, tid;		/* whose tails these are (0: nobody's) */
	struct kept k[TAILS_KEEP];
	/* Its stack pointers: the highest over this window and the last. */
	uint64_t sp_cur, sp_prev;
	uint32_t nsp;
	/*
	 * Above where a tail of it changed while described: the next ones
	 * start higher, where its stacks stay the same; low again after
	 * FRESH_AFTER records.
	 */
	uint64_t floor;
	uint32_t since_fresh;
};

struct tails {
	struct hs_tail *descs;	/* the map's values, HS_TAIL_SLOTS of them */
	size_t map_size;
	uint64_t (*head)(void *ctx);	/* the ring's producer position now */
	void *ctx;
	struct tail_slot slots[HS_TAIL_SLOTS];
	uint64_t next_id;
	struct tails_stats st;
};

int tails__open(int map_fd, uint64_t (*head)(void *ctx), void *ctx, struct tails **out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct tails *ts = calloc(1, sizeof(*ts));
	int err;

	if (!ts)
		return -ENOMEM;
	/* An mmapable array's values lie one after another from offset 0. */
	ts->map_size = (HS_TAIL_SLOTS * sizeof(struct hs_tail) + page - 1) & ~(page - 1);
	ts->descs = mmap(NULL, ts->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (ts->descs == MAP_FAILED) {
		err = -errno;
		free(ts);
		return err;
	}
	ts->next_id = 1;
	ts->head = head;
	ts->ctx = ctx;
	*out = ts;
	return 0;
}

static void retire(struct unwind_tail *t)
{
	if (t && t->pins)
		t->retired = true;
	else
		free(t);
}

static struct tail_slot *slot_at(struct tails *ts, pid_t tid)
{
	return &ts->slots[(uint32_t)tid & (HS_TAIL_SLOTS - 1)];
}

/*
 * @tid's slot, made @pid's and @tid's if it was another thread's: that
 * one ended (a thread id is reused once its thread is gone), and its
 * records all lie before this thread's in the ring.
 */
static struct tail_slot *slot_of(struct tails *ts, pid_t pid, pid_t tid)
{
	struct tail_slot *sl = slot_at(ts, tid);

	if (sl->pid != pid || sl->tid != tid) {
		for (int i = 0; i < TAILS_KEEP; i++)
			retire(sl->k[i].t);
		memset(sl, 0, sizeof(*sl));
		sl->pid = pid;
		sl->tid = tid;
	}
	return sl;
}

/* The slot's description for the programs: @t's, or none (@t NULL). */
static void write_desc(struct tails *ts, pid_t pid, pid_t tid, const struct unwind_tail *t)
{
	struct hs_tail *d = &ts->descs[(uint32_t)tid & (HS_TAIL_SLOTS - 1)];
	uint64_t seq = __atomic_load_n(&d->seq, __ATOMIC_RELAXED) | 1;

	__atomic_store_n(&d->seq, seq, __ATOMIC_RELAXED);
	/* Odd before any field changes, as a reader on another CPU sees them. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	d->pid = (uint32_t)pid;
	d->tid = (uint32_t)tid;
	d->nwords = t ? t->nwords : 0;
	d->id = t ? t->id : 0;
	d->start = t ? t->start : 0;
	if (t)
		memcpy(d->w, t->words, t->nwords * sizeof(*d->w));
	__atomic_store_n(&d->seq, seq + 1, __ATOMIC_RELEASE);
}

/*
 * The slot now describes @now (NULL: none), written: the others were not
 * described from the producer's position read after the write on.
 */
static void describe(struct tails *ts, struct tail_slot *sl, const struct unwind_tail *now)
{
	uint64_t pos;

	write_desc(ts, sl->pid, sl->tid, now);
	pos = ts->head(ts->ctx) + 1;
	for (int i = 0; i < TAILS_KEEP; i++) {
		if (sl->k[i].t == now) {
			sl->k[i].gone = 0;
			sl->k[i].after = 0;
		} else if (sl->k[i].t && !sl->k[i].gone) {
			sl->k[i].gone = pos;
		}
	}
}

void tails__note(struct tails *ts, pid_t pid, pid_t tid, uint64_t seq, uint64_t sp, bool whole)
{
	struct tail_slot *sl = slot_at(ts, tid);

	if (sl->pid != pid || sl->tid != tid)
		return;
	for (int i = 0; i < TAILS_KEEP; i++) {
		struct kept *k = &sl->k[i];

		if (k->t && k->gone && seq > k->gone && k->after < 2)
			k->after++;
		/* Copied whole below the tail described: a word of it changed. */
		if (whole && k->t && !k->gone && sp < k->t->start && k->t->start >= sl->floor)
			sl->floor = k->t->start + 1;
	}
	if (++sl->since_fresh >= FRESH_AFTER) {
		sl->since_fresh = 0;
		sl->floor = 0;
		describe(ts, sl, NULL);
	}
	if (sp > sl->sp_cur)
		sl->sp_cur = sp;
	if (++sl->nsp == HINT_WINDOW) {
		sl->sp_prev = sl->sp_cur;
		sl->sp_cur = 0;
		sl->nsp = 0;
	}
}

uint64_t tails__hint(struct tails *ts, pid_t pid, pid_t tid)
{
	struct tail_slot *sl = slot_at(ts, tid);

	uint64_t h;

	if (sl->pid != pid || sl->tid != tid)
		return 0;
	h = sl->sp_cur > sl->sp_prev ? sl->sp_cur : sl->sp_prev;
	return h > sl->floor ? h : sl->floor;
}

const struct unwind_tail *tails__find(struct tails *ts, pid_t pid, pid_t tid, uint64_t id)
{
	struct tail_slot *sl = slot_at(ts, tid);

	if (sl->pid == pid && sl->tid == tid) {
		for (int i = 0; i < TAILS_KEEP; i++) {
			if (sl->k[i].t && sl->k[i].t->id == id) {
				sl->k[i].t->pins++;
				return sl->k[i].t;
			}
		}
	}
	ts->st.unknown++;
	return NULL;
}

void tails__unpin(struct tails *ts, const struct unwind_tail *t)
{
	struct unwind_tail *w = (struct unwind_tail *)t;

	(void)ts;
	if (!--w->pins && w->retired)
		free(w);
}

/* Are @a and @b one tail (what the programs check, what it gives)? */
static bool same_tail(const struct unwind_tail *a, const struct unwind_tail *b)
{
	return a->start == b->start && a->ra == b->ra && a->regs_need == b->regs_need &&
	       a->flags == b->flags && a->nwords == b->nwords && a->nframes == b->nframes &&
	       !memcmp(a->words, b->words, a->nwords * sizeof(a->words[0])) &&
	       !memcmp(a->frames, b->frames, a->nframes * sizeof(a->frames[0])) &&
	       !memcmp(a->regs, b->regs, sizeof(a->regs));
}

bool tails__give(struct tails *ts, pid_t pid, pid_t tid, struct unwind_tail *t)
{
	struct tail_slot *sl = slot_of(ts, pid, tid);
	int i, room = -1;

	/*
	 * One the thread had before, given again, keeps its name and its
	 * place: a thread going back and forth between a few deep stacks
	 * makes no new ones.
	 */
	for (i = 0; i < TAILS_KEEP; i++) {
		if (sl->k[i].t && same_tail(sl->k[i].t, t))
			break;
		if (room < 0 && (!sl->k[i].t || (sl->k[i].gone && sl->k[i].after >= 2)))
			room = i;
	}
	if (i < TAILS_KEEP) {
		free(t);
		t = sl->k[i].t;
	} else if (room < 0) {
		/* Every one may still be named by a record in the ring: none new. */
		free(t);
		ts->st.refused++;
		return false;
	} else {
		i = room;
		retire(sl->k[i].t);
		t->id = ts->next_id++;
		t->tid = tid;
		sl->k[i] = (struct kept){ .t = t };
		ts->st.made++;
	}
	describe(ts, sl, t);
	ts->st.given++;
	return true;
}

void tails__withdraw(struct tails *ts, pid_t pid, pid_t tid)
{
	struct tail_slot *sl = slot_at(ts, tid);

	/* The tails stay: records already in the ring may name them. */
	if (sl->pid == pid && sl->tid == tid) {
		describe(ts, sl, NULL);
		ts->st.withdrawn++;
	}
}

void tails__forget(struct tails *ts, pid_t pid)
{
	/*
	 * Its threads' slots would keep their tails until other threads
	 * took them: an -a that runs for days would hold some on every one
	 * of the HS_TAIL_SLOTS (16 kept each, ~5 KiB a deep stack's).
	 */
	for (int s = 0; s < HS_TAIL_SLOTS; s++) {
		struct tail_slot *sl = &ts->slots[s];

		if (sl->pid != pid)
			continue;
		for (int i = 0; i < TAILS_KEEP; i++)
			retire(sl->k[i].t);
		write_desc(ts, 0, sl->tid, NULL);	/* its pid 0: nobody's */
		memset(sl, 0, sizeof(*sl));
		ts->st.forgotten++;
	}
}

void tails__stats(const struct tails *ts, struct tails_stats *st)
{
	*st = ts->st;
}

void tails__free(struct tails *ts)
{
	if (!ts)
		return;
	for (int s = 0; s < HS_TAIL_SLOTS; s++)
		for (int i = 0; i < TAILS_KEEP; i++)
			retire(ts->slots[s].k[i].t);
	munmap(ts->descs, ts->map_size);
	free(ts);
}
