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
 * has its copy).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forkcopy.h"
#include "livetable.h"
#include "ltstacks.h"

#define OPEN (1ull << 63)

struct forklog {
	uint64_t state;			/* OPEN | records reserved */
	int32_t child;			/* the copying child's pid, once known */
	int32_t parent;
	uint64_t hwm;			/* slots at the fork */
	uint64_t *bits;			/* in this mapping */
	struct logrec *rec;		/* in this mapping */
	size_t len;
};

struct logrec {
	uint32_t commit;
	uint32_t slot;
	struct lt_entry old;
};

static struct forklog *flog;		/* the last fork's log (the parent's) */
static uint64_t mod_used_fork, stk_used_fork;	/* the marks at the fork */
static uint32_t gone_fork[256];		/* ltstacks' gone flags at the fork, as bits */

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

static struct forklog *log_new(uint64_t hwm)
{
	size_t words = (hwm + 63) / 64;
	size_t len = sizeof(struct forklog) + words * 8 + hwm * sizeof(struct logrec);
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
	l->rec = (struct logrec *)(l->bits + words);
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
	/* Frozen: the marks are the table's at the fork. */
	mod_used_fork = __atomic_load_n(&lt.h->mod_used, __ATOMIC_ACQUIRE);
	stk_used_fork = __atomic_load_n(&lt.h->stk_used, __ATOMIC_ACQUIRE);
	hwm = __atomic_load_n(&lt.h->ent_hwm, __ATOMIC_ACQUIRE);
	ltstacks__gone(gone_fork, sizeof(gone_fork) * 8);
	flog = log_new(hwm < lt.nslots ? hwm : lt.nslots);
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
	const struct lt_entry *e = &lt.ent[s];

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

/* The log closed and the old entries of the slots saved put into @ent. */
static void apply_log(struct forklog *l, struct lt_entry *ent)
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
			ent[r->slot] = r->old;
	}
}

int forkcopy__child(void)
{
	struct forklog *l = flog;
	struct lt_header *h;
	uint64_t hwm;
	char *map;
	int fd, parent = lt.base ? lt.h->pid : 0;

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
	fd = lt.shared ? livetable__twin(&map) : -1;
	if (!lt.shared) {
		map = mmap(NULL, lt.size, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		fd = map == MAP_FAILED ? -ENOMEM : -1;
	}
	if (fd < -1) {
		__atomic_fetch_and(&l->state, ~OPEN, __ATOMIC_ACQ_REL);
		munmap(l, l->len);
		lt.base = NULL;
		return fd;
	}
	h = (struct lt_header *)map;
	hwm = l->hwm;
	memcpy(map, lt.base, LT_HDR_SIZE);
	memcpy(map + h->mod_off, lt.base + h->mod_off, mod_used_fork);
	memcpy(map + h->stk_off, lt.base + h->stk_off,
	       stk_used_fork < h->stk_cap ? stk_used_fork : h->stk_cap);
	memcpy(map + h->ent_off, lt.base + h->ent_off, hwm * sizeof(struct lt_entry));
	apply_log(l, (struct lt_entry *)(map + h->ent_off));
	munmap(l, l->len);
	/* Where the parent's was: every pointer into it stays good. */
	if (mremap(map, lt.size, lt.size, MREMAP_MAYMOVE | MREMAP_FIXED, lt.base) == MAP_FAILED) {
		int err = -errno;

		munmap(map, lt.size);
		if (fd >= 0)
			close(fd);
		lt.base = NULL;
		return err;
	}
	h = lt.h;
	h->parent = parent;
	h->pid = getpid();
	h->mod_used = mod_used_fork;
	h->stk_used = stk_used_fork;
	h->ent_hwm = hwm;
	h->lost_entries = h->lost_stacks = h->lost_modules = 0;
	h->forks = 0;
	h->exec_pending = 0;
	ltstacks__restore_gone(gone_fork, sizeof(gone_fork) * 8);
	return fd;
}
