// SPDX-License-Identifier: MIT
/*
 * forkcopy.c - a forked child's live table, copied by the child while
 * the parent saves what it changes meanwhile in an undo log (see
 * forkcopy.h; docs/COLLECTOR.md, "fork").
 *
 * The log (shared anonymous memory, made at each fork, sized to the slots
 * handed out then): a state word (open bit | records reserved), a bitmap
 * of slots saved, and one record per slot saved {commit, slot, old entry}.
 * A parent writer, before its first change to slot s < the fork's mark:
 * the bit clear, a record reserved while the log is open (CAS on the
 * state), the bit set, the old entry copied, commit (release). A slot has
 * one writer at a time (its owner; handed between threads through a
 * lock), so its bit, once set, is seen by the next. The child: the
 * table copied, the log closed (the open bit cleared: no more records),
 * each reserved record's commit awaited, the old entries put back.
 * Every change made before the close reserved its record before it
 * changed the slot, so the copy plus the log is the table at the fork;
 * a writer that finds the log closed changes the slot freely (the child
 * has its copy). The log also holds the modules' gone flags at the fork.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forkcopy.h"
#include "ltwrite.h"
#include "ltmods.h"
#include "ltstacks.h"

#define OPEN (1ull << 63)

struct forklog {
	uint64_t state;			/* OPEN | records reserved */
	int32_t child;			/* the copying child's pid, once known */
	int32_t parent;
	uint64_t hwm;			/* slots at the fork */
	uint64_t *bits;			/* in this mapping */
	struct logrec *rec;		/* in this mapping */
	unsigned int nmods;		/* module records at the fork */
	uint64_t *gone;			/* their gone flags then, in this mapping */
	size_t len;
};

struct logrec {
	uint32_t commit;
	uint32_t slot;
	struct lt_entry old;
};

static struct forklog *flog;		/* the last fork's log (the parent's) */
static uint64_t mod_used_fork, stk_used_fork;	/* the marks at the fork */
static unsigned int segs_fork[LT_NREGIONS];	/* segments made at the fork */

/* The copying child is gone (exited, killed, reaped) or the log unknown. */
static bool child_gone(const struct forklog *l)
{
	int32_t pid = __atomic_load_n(&l->child, __ATOMIC_ACQUIRE);
	siginfo_t si;

	if (pid <= 0)
		return false;
	if (kill(pid, 0) && errno == ESRCH)
		return true;
	si.si_pid = 0;
	return !waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == pid;
}

/*
 * The previous child done with its log, or dead (then the log is closed
 * for it). Its writers may still be looking at it: unmapped under the
 * freeze only.
 */
static void previous_closed(void)
{
	struct forklog *l = flog;
	long spins = 0;

	while (l && (__atomic_load_n(&l->state, __ATOMIC_ACQUIRE) & OPEN)) {
		/* A child that died copying, or whose pid never came: closed for it. */
		if (child_gone(l) || (!__atomic_load_n(&l->child, __ATOMIC_RELAXED) && ++spins > 1000000))
			__atomic_fetch_and(&l->state, ~OPEN, __ATOMIC_ACQ_REL);
		else
			sched_yield();
	}
}

static struct forklog *log_new(uint64_t hwm, unsigned int nmods)
{
	size_t words = (hwm + 63) / 64, mwords = (nmods + 63) / 64;
	size_t len = sizeof(struct forklog) + (words + mwords) * 8 + hwm * sizeof(struct logrec);
	struct forklog *l;

	len = (len + 4095) & ~(size_t)4095;
	l = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (l == MAP_FAILED)
		return NULL;
	l->len = len;
	l->hwm = hwm;
	l->parent = getpid();
	l->bits = (uint64_t *)(l + 1);
	l->gone = l->bits + words;
	l->nmods = nmods;
	l->rec = (struct logrec *)(l->gone + mwords);
	ltmods__gone(l->gone, nmods);
	return l;
}

void forkcopy__prepare(void)
{
	uint64_t hwm;

	/*
	 * The module lock and the loader's are taken inside sections only:
	 * once frozen, no thread holds them.
	 */
	if (!lt.base)
		return;
	previous_closed();
	lt_tls.freezing++;
	livetable__freeze(false);
	if (flog)
		munmap(flog, flog->len);
	/* Frozen: the marks and segments are the table's at the fork. */
	mod_used_fork = __atomic_load_n(&lt.h->mod_used, __ATOMIC_ACQUIRE);
	stk_used_fork = __atomic_load_n(&lt.h->stk_used, __ATOMIC_ACQUIRE);
	hwm = __atomic_load_n(&lt.h->ent_hwm, __ATOMIC_ACQUIRE);
	for (unsigned int r = 0; r < LT_NREGIONS; r++) {
		unsigned int k = 0;

		while (lt_made(r, k))
			k++;
		segs_fork[r] = k;
	}
	/* Slots past the entries' last segment were never handed out. */
	if (hwm > lt_seg_start(segs_fork[LT_ENT], LT_SLOT_SHIFT))
		hwm = lt_seg_start(segs_fork[LT_ENT], LT_SLOT_SHIFT);
	flog = log_new(hwm, ltmods__count());
	__atomic_fetch_add(&lt.h->forks, 1, __ATOMIC_RELAXED);
	if (!flog)
		return;	/* the child says it has no table */
	__atomic_store_n(&flog->state, OPEN, __ATOMIC_RELEASE);
	__atomic_fetch_or(&lt_ctl, LT_CTL_LOGGING, __ATOMIC_RELEASE);
}

void forkcopy__parent(void)
{
	if (lt.base) {
		livetable__thaw();
		lt_tls.freezing--;
	}
}

void forkcopy__forked(pid_t child)
{
	struct forklog *l = flog;

	if (l && child > 0)
		__atomic_store_n(&l->child, (int32_t)child, __ATOMIC_RELEASE);
	if (child < 0 && lt.base) {
		/* No child: nobody copies, nobody says hello. */
		if (l)
			__atomic_fetch_and(&l->state, ~OPEN, __ATOMIC_ACQ_REL);
		__atomic_fetch_sub(&lt.h->forks, 1, __ATOMIC_RELAXED);
	}
}

void forkcopy__save(uint32_t s)
{
	struct forklog *l = flog;
	uint64_t st, *word, mask = 1ull << (s % 64);
	struct logrec *r;
	const struct lt_entry *e = lt_entry_at(s);

	if (!l)
		return;
	st = __atomic_load_n(&l->state, __ATOMIC_ACQUIRE);
	if (!(st & OPEN)) {
		/* The child has its copy: this thread's changes need no saving now. */
		__atomic_fetch_and(&lt_ctl, ~LT_CTL_LOGGING, __ATOMIC_RELAXED);
		return;
	}
	if (s >= l->hwm)
		return;
	word = &l->bits[s / 64];
	if (__atomic_load_n(word, __ATOMIC_RELAXED) & mask)
		return;
	do {
		if (!(st & OPEN))
			return;
	} while (!__atomic_compare_exchange_n(&l->state, &st, st + 1, true, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	__atomic_fetch_or(word, mask, __ATOMIC_RELAXED);
	r = &l->rec[st & ~OPEN];
	r->slot = s;
	r->old.seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	r->old.stack = __atomic_load_n(&e->stack, __ATOMIC_RELAXED);
	r->old.addr = __atomic_load_n(&e->addr, __ATOMIC_RELAXED);
	r->old.size = __atomic_load_n(&e->size, __ATOMIC_RELAXED);
	r->old.tid = __atomic_load_n(&e->tid, __ATOMIC_RELAXED);
	r->old.link = __atomic_load_n(&e->link, __ATOMIC_RELAXED);
	__atomic_store_n(&r->commit, 1, __ATOMIC_RELEASE);
}

/* The log closed and the old entries of the slots saved put back (into the child's table). */
static void apply_log(struct forklog *l)
{
	uint64_t st = __atomic_fetch_and(&l->state, ~OPEN, __ATOMIC_ACQ_REL) & ~OPEN;

	for (uint64_t i = 0; i < st; i++) {
		struct logrec *r = &l->rec[i];

		/*
		 * Reserved: the writer is between its reservation and its
		 * commit, a few stores. If the parent died there, its slot
		 * was not changed yet: the copy holds its old entry.
		 */
		while (!__atomic_load_n(&r->commit, __ATOMIC_ACQUIRE)) {
			if (getppid() != l->parent)
				break;
			sched_yield();
		}
		if (__atomic_load_n(&r->commit, __ATOMIC_ACQUIRE) && r->slot < l->hwm)
			*lt_entry_at(r->slot) = r->old;
	}
}

/* Bytes of region @r in use at the fork: its mark (the entries': slots * 32). */
static uint64_t used_fork(unsigned int r, uint64_t hwm)
{
	return r == LT_MOD ? mod_used_fork : r == LT_STK ? stk_used_fork :
	       hwm * sizeof(struct lt_entry);
}

/* [@from, @to) of region @r, in segment @k, copied from the parent's to @dst (the segment's copy). */
static void copy_used(unsigned int r, unsigned int k, uint64_t used, char *dst)
{
	unsigned int shift = (unsigned int)__builtin_ctzll(lt.h->region[r].seg0);
	uint64_t start = lt_seg_start(k, shift), size = lt.h->region[r].seg0 << k;

	if (used > start)
		memcpy(dst, lt.seg[r][k], used - start < size ? used - start : size);
}

struct copy {
	char *map;
	uint64_t size;
	char *at;			/* where the parent's was */
	int fd;
};

/* Every copy moved where the parent's was; false (all undone, *@err) if one cannot be. */
static bool put_in_place(struct copy *c, unsigned int n, int *err)
{
	for (unsigned int i = 0; i < n; i++) {
		if (mremap(c[i].map, c[i].size, c[i].size, MREMAP_MAYMOVE | MREMAP_FIXED, c[i].at) ==
		    MAP_FAILED) {
			*err = -errno;
			/* The moved ones are the child's copies now: none of the parent's is left. */
			for (unsigned int j = i; j < n; j++)
				munmap(c[j].map, c[j].size);
			for (unsigned int j = 0; j < n; j++)
				if (c[j].fd >= 0)
					close(c[j].fd);
			return false;
		}
	}
	return true;
}

int forkcopy__child(struct forkcopy_segs *segs)
{
	static struct copy c[1 + LT_HELLO_SEGS];
	struct forklog *l = flog;
	struct lt_header *h;
	unsigned int n = 0;
	uint64_t hwm;
	char *map;
	int fd, err = 0, parent = lt.base ? lt.h->pid : 0;

	segs->n = 0;
	livetable__forked();
	ltstacks__forked();
	flog = NULL;
	if (!lt.base)
		return -ENOENT;
	if (!l) {
		/* No log at the fork (no memory for it): no table that can be trusted. */
		lt.base = NULL;
		return -ENOMEM;
	}
	__atomic_store_n(&l->child, (int32_t)getpid(), __ATOMIC_RELEASE);
	hwm = l->hwm;
	/* The table's memfd (the header, each region's segment 0), then each later segment's. */
	fd = livetable__memfd(lt.size, LT_MEMFD_TABLE, &map);
	if (fd < -1) {
		err = fd;
		goto fail;
	}
	c[n++] = (struct copy){ map, lt.size, lt.base, fd };
	memcpy(map, lt.base, LT_HDR_SIZE);
	for (unsigned int r = 0; r < LT_NREGIONS; r++)
		copy_used(r, 0, used_fork(r, hwm), map + lt.h->region[r].seg[0]);
	for (unsigned int r = 0; r < LT_NREGIONS; r++) {
		for (unsigned int k = 1; k < segs_fork[r]; k++) {
			uint64_t size = lt.h->region[r].seg0 << k;
			int sfd = livetable__memfd(size, r << 5 | k, &map);

			if (sfd < -1) {
				err = sfd;
				goto undo;
			}
			copy_used(r, k, used_fork(r, hwm), map);
			c[n++] = (struct copy){ map, size, lt.seg[r][k], sfd };
			if (sfd >= 0) {
				segs->fd[segs->n] = sfd;
				segs->id[segs->n++] = (uint8_t)(r << 5 | k);
			}
		}
	}
	if (!put_in_place(c, n, &err))
		goto fail;
	/* In place: lt's pointers are the child's copies now. */
	apply_log(l);
	h = lt.h;
	h->parent = parent;
	h->pid = getpid();
	h->mod_used = mod_used_fork;
	h->stk_used = stk_used_fork;
	h->ent_hwm = hwm;
	h->lost_entries = h->lost_stacks = h->lost_modules = 0;
	h->forks = 0;
	h->exec_pending = 0;
	/* Segments the parent made after the fork (its header, copied since): not the child's. */
	for (unsigned int r = 0; r < LT_NREGIONS; r++)
		for (unsigned int k = segs_fork[r]; k < LT_SEGS; k++)
			h->region[r].seg[k] = 0;
	ltmods__restore_gone(l->gone, l->nmods);
	munmap(l, l->len);
	return c[0].fd;
undo:
	for (unsigned int i = 0; i < n; i++) {
		munmap(c[i].map, c[i].size);
		if (c[i].fd >= 0)
			close(c[i].fd);
	}
fail:
	__atomic_fetch_and(&l->state, ~OPEN, __ATOMIC_ACQ_REL);
	munmap(l, l->len);
	segs->n = 0;
	lt.base = NULL;
	return err;
}
