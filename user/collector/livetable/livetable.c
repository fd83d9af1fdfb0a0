// SPDX-License-Identifier: MIT
/*
 * livetable.c - this image's live table (see livetable.h): made, its
 * slots handed to threads, its writers frozen for a moment.
 *
 * Slots: each thread caches free slots (a list through the private
 * lt_next_free, 4 bytes a slot), takes 64 at once from a global pool
 * under a spinlock, or a fresh run of 64 past the high-water mark, and
 * gives 64 back when it holds 128: no lock on the common path. The table
 * is mapped once at its whole size, sparse, so it grows by touching
 * pages: nothing moves, no pointer goes stale, no reader sees a table
 * half moved. A region that is full is counted (lost_*), never waited on.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "livetable.h"

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001u
#define MFD_ALLOW_SEALING 0x0002u
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008u	/* 6.3: data, never executed (vm.memfd_noexec) */
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#endif

#define BATCH 64
#define MOD_CAP (4ull << 20)		/* module records: thousands of modules */
#define STK_CAP (512ull << 20)		/* stacks: ~2 M of 31 frames */
#define MIN_CAP (1ull << 20)

#if defined(__x86_64__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ volatile("yield" ::: "memory")
#else
#define cpu_relax() do { } while (0)
#endif

struct lt_self lt;
int lt_memfd_err;
__thread struct lt_thread lt_tls __attribute__((tls_model("initial-exec")));
uint32_t lt_ctl;
bool lt_membarrier;

static uint32_t *lt_next_free;		/* private: each free slot's successor */
static int pool_lock, reg_lock;		/* spinlocks: 0 free, 1 held */
static uint32_t pool_head, pool_n;	/* slots given back by threads */
static struct lt_thread *reg_head;	/* threads that changed the table */

static void spin_lock(int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		cpu_relax();
}

static bool spin_trylock(int *l)
{
	return !__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE);
}

static void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* --- the table ------------------------------------------------------------ */

static int memfd_new(uint64_t size)
{
	int fd = (int)syscall(SYS_memfd_create, "heapsnoop-live",
			      MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);

	if (fd < 0 && errno == EINVAL)	/* before 6.3: no MFD_NOEXEC_SEAL */
		fd = (int)syscall(SYS_memfd_create, "heapsnoop-live", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* Sparse: pages exist once written. Sealed: nobody shrinks it under a reader. */
	if (ftruncate(fd, (off_t)size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static void *map_table(int fd, uint64_t size, void *at)
{
	return mmap(at, size, PROT_READ | PROT_WRITE,
		    (fd >= 0 ? MAP_SHARED : MAP_SHARED | MAP_ANONYMOUS) | MAP_NORESERVE |
		    (at ? MAP_FIXED : 0), fd, 0);
}

int livetable__create(uint64_t entries, uint64_t sample, const char *comm)
{
	uint64_t ent = entries * sizeof(struct lt_entry), stk = STK_CAP, size;
	bool halved = false;
	void *base = MAP_FAILED, *next = MAP_FAILED;
	int fd = -1;

	if (!syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
		lt_membarrier = true;
	/* The address space to reserve may be limited (RLIMIT_AS, sanitizers): halve. */
	for (;;) {
		size = LT_HDR_SIZE + MOD_CAP + stk + ent;
		fd = memfd_new(size);
		if (fd < 0) {
			/* No memfd (before 3.17, out of files): this process's own dumps only. */
			lt_memfd_err = -fd;
			fd = -1;
		}
		base = map_table(fd, size, NULL);
		next = base == MAP_FAILED ? MAP_FAILED :
			mmap(NULL, ent / sizeof(struct lt_entry) * 4, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (next != MAP_FAILED)
			break;
		if (base != MAP_FAILED)
			munmap(base, size);
		if (fd >= 0)
			close(fd);
		if (ent <= MIN_CAP && stk <= MIN_CAP)
			return -ENOMEM;
		ent = ent > MIN_CAP ? ent / 2 : ent;
		stk = stk > MIN_CAP ? stk / 2 : stk;
		halved = true;
	}
	if (halved)
		dprintf(2, "heapsnoop-preload: pid %d: the live table reserved %llu MiB of address "
			"space, not its whole size (RLIMIT_AS?): room for %llu live blocks\n",
			(int)getpid(), (unsigned long long)(size >> 20),
			(unsigned long long)(ent / sizeof(struct lt_entry)));
	lt.base = base;
	lt.size = size;
	lt.h = base;
	lt.shared = fd >= 0;
	lt_next_free = next;
	lt.h->magic = LT_MAGIC;
	lt.h->version = LT_VERSION;
	lt.h->entry_size = sizeof(struct lt_entry);
	lt.h->pid = getpid();
	lt.h->sample_bytes = sample;
	lt.h->mod_off = LT_HDR_SIZE;
	lt.h->mod_cap = MOD_CAP;
	lt.h->stk_off = LT_HDR_SIZE + MOD_CAP;
	lt.h->stk_cap = stk;
	lt.h->ent_off = lt.h->stk_off + stk;
	lt.h->ent_cap = ent;
	strncpy(lt.h->comm, comm, sizeof(lt.h->comm) - 1);
	__atomic_store_n(&lt.h->stk_used, 8, __ATOMIC_RELEASE);	/* id 0: no stack */
	lt.ent = (struct lt_entry *)(lt.base + lt.h->ent_off);
	lt.nslots = ent / sizeof(struct lt_entry);
	return fd;
}

int livetable__twin(char **map)
{
	int fd = memfd_new(lt.size);
	void *p;

	if (fd < 0)
		return fd;
	p = map_table(fd, lt.size, NULL);
	if (p == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	*map = p;
	return fd;
}

/* --- slots ---------------------------------------------------------------- */

static __attribute__((noinline)) uint32_t slot_refill(void)
{
	struct lt_thread *t = &lt_tls;
	uint64_t b;

	spin_lock(&pool_lock);
	if (pool_n) {
		uint32_t s = pool_head, take = pool_n < BATCH ? pool_n : BATCH, last = s;

		for (uint32_t i = 1; i < take; i++)
			last = lt_next_free[last];
		pool_head = lt_next_free[last];
		pool_n -= take;
		spin_unlock(&pool_lock);
		lt_next_free[last] = t->head;
		t->head = lt_next_free[s];
		t->n += take - 1;
		return s;
	}
	spin_unlock(&pool_lock);
	if (t->bump < t->bump_end)
		return (uint32_t)t->bump++;
	b = __atomic_fetch_add(&lt.h->ent_hwm, BATCH, __ATOMIC_RELEASE);
	if (b + BATCH > lt.nslots || b + BATCH >= LT_NO_SLOT) {
		/* Full: the mark stays at the region's end (readers clamp it). */
		return LT_NO_SLOT;
	}
	t->bump = b + 1;
	t->bump_end = b + BATCH;
	return (uint32_t)b;
}

uint32_t lt_slot_get(void)
{
	struct lt_thread *t = &lt_tls;
	uint32_t s;

	if (likely(t->n)) {
		s = t->head;
		t->head = lt_next_free[s];
		t->n--;
		return s;
	}
	return slot_refill();
}

/* BATCH of the thread's cached slots back to the pool. */
static __attribute__((noinline)) void slot_spill(void)
{
	struct lt_thread *t = &lt_tls;
	uint32_t first = t->head, last = first;

	for (uint32_t i = 1; i < BATCH; i++)
		last = lt_next_free[last];
	t->head = lt_next_free[last];
	t->n -= BATCH;
	spin_lock(&pool_lock);
	lt_next_free[last] = pool_head;
	pool_head = first;
	pool_n += BATCH;
	spin_unlock(&pool_lock);
}

void lt_slot_put(uint32_t s)
{
	struct lt_thread *t = &lt_tls;

	lt_next_free[s] = t->head;
	t->head = s;
	if (unlikely(++t->n > 2 * BATCH))
		slot_spill();
}

/* --- threads -------------------------------------------------------------- */

void livetable__thread_start(void)
{
	struct lt_thread *t = &lt_tls;

	t->tid = (uint32_t)syscall(SYS_gettid);
	spin_lock(&reg_lock);
	t->prev = NULL;
	t->next = reg_head;
	if (reg_head)
		reg_head->prev = t;
	reg_head = t;
	spin_unlock(&reg_lock);
}

/*
 * Every slot the thread holds back to the pool: its cache and the rest
 * of its fresh run (never used: even). A program that starts a thread
 * per request must not leave 127 slots behind each.
 */
static void slots_return(struct lt_thread *t)
{
	uint32_t first = LT_NO_SLOT, last = LT_NO_SLOT, n = 0;

	while (t->bump < t->bump_end) {
		uint32_t s = (uint32_t)t->bump++;

		lt_next_free[s] = first;
		first = s;
		if (last == LT_NO_SLOT)
			last = s;
		n++;
	}
	for (; t->n; t->n--) {
		uint32_t s = t->head;

		t->head = lt_next_free[s];
		lt_next_free[s] = first;
		first = s;
		if (last == LT_NO_SLOT)
			last = s;
		n++;
	}
	if (!n)
		return;
	spin_lock(&pool_lock);
	lt_next_free[last] = pool_head;
	pool_head = first;
	pool_n += n;
	spin_unlock(&pool_lock);
}

void livetable__thread_end(void)
{
	struct lt_thread *t = &lt_tls;

	if (!t->tid)
		return;
	if (lt.base) {
		lt_section_enter();
		slots_return(t);
		lt_section_exit();
	}
	spin_lock(&reg_lock);
	if (t->prev)
		t->prev->next = t->next;
	else if (reg_head == t)
		reg_head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	spin_unlock(&reg_lock);
	t->next = t->prev = NULL;
	t->tid = 0;	/* a later call (another key's destructor) registers it again */
}

void livetable__forked(void)
{
	struct lt_thread *t = &lt_tls;

	pool_lock = 0;
	reg_lock = 0;
	t->tid = (uint32_t)syscall(SYS_gettid);
	t->next = t->prev = NULL;
	t->busy = 0;
	t->freezing = 0;
	reg_head = t;
	__atomic_store_n(&lt_ctl, 0, __ATOMIC_RELEASE);
	/* The child's own registration for its own forks' freezes. */
	if (lt_membarrier)
		lt_membarrier = !syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
					 0, 0);
}

/* --- freezing ------------------------------------------------------------- */

void lt_section_wait(void)
{
	struct lt_thread *t = &lt_tls;

	if (t->freezing)
		return;	/* its own freeze: an allocation in a later fork handler, say */
	/* The outermost section only: busy is 1. */
	do {
		__atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
		while (__atomic_load_n(&lt_ctl, __ATOMIC_ACQUIRE) >= LT_CTL_FREEZE)
			sched_yield();
		__atomic_store_n(&t->busy, 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	} while (__atomic_load_n(&lt_ctl, __ATOMIC_RELAXED) >= LT_CTL_FREEZE);
}

bool livetable__freeze(bool bounded)
{
	bool all = true;
	int tries = 0;

	__atomic_fetch_add(&lt_ctl, LT_CTL_FREEZE, __ATOMIC_SEQ_CST);
	if (lt_membarrier)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	while (!spin_trylock(&reg_lock)) {
		/* bounded: this very thread may hold it (a signal in thread_start) */
		if (bounded && ++tries > 1000)
			return false;
		sched_yield();
	}
	for (struct lt_thread *t = reg_head; t; t = t->next) {
		for (long i = 0; t != &lt_tls && __atomic_load_n(&t->busy, __ATOMIC_ACQUIRE); i++) {
			if (bounded && i > 100000) {
				all = false;
				break;
			}
			sched_yield();
		}
	}
	spin_unlock(&reg_lock);
	return all;
}

void livetable__thaw(void)
{
	__atomic_fetch_sub(&lt_ctl, LT_CTL_FREEZE, __ATOMIC_RELEASE);
}
