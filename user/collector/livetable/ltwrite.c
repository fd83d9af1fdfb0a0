// SPDX-License-Identifier: MIT
/*
 * ltwrite.c - this image's live table (see ltwrite.h): made, grown
 * by segments, its slots handed to threads, its writers frozen for a
 * moment.
 *
 * Growth: a region that fills gets its next segment, twice the last
 * (livetable.h, include/heapsnoop/livetable.h): a new memfd, sealed,
 * mapped, handed to heapsnoop, then named in the header. Nothing moves,
 * no pointer goes stale, no reader sees a table half moved; a program
 * that closes every descriptor it did not open (closefrom, daemons) takes
 * nothing from the table, which keeps none open. One thread makes a
 * segment at a time (a spinlock: a few system calls, a handful of times
 * in a run); one that cannot be made (no memory, RLIMIT_AS, heapsnoop
 * gone) is said once, and what needed it counted (lost_*), never waited on.
 *
 * Slots: each thread caches free slots (a list through the private
 * next_free, 4 bytes a slot, in segments as the entries'), takes 64 at
 * once from a global pool under a spinlock, or a fresh run of 64 past
 * the high-water mark, and gives 64 back when it holds 128: no lock on
 * the common path.
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

#include "ltwrite.h"

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
#define MAX_SLOTS ((uint64_t)LT_NO_SLOT - BATCH)

_Static_assert((1ull << LT_SLOT_SHIFT) % BATCH == 0, "a batch of slots is in one segment");

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

static int pool_lock, reg_lock;		/* spinlocks: 0 free, 1 held */
static int grow_lock;			/* 0 free, else the tid of the thread making a segment */
static int grow_said[LT_NREGIONS];
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

static const uint64_t seg0[LT_NREGIONS] = { LT_MOD_SEG0, LT_STK_SEG0, LT_ENT_SEG0 };

/* A memfd named for what it holds (livetable.h's LT_MEMFD_NAME): @id LT_MEMFD_TABLE or r << 5 | k. */
static int memfd_new(uint64_t size, unsigned int id)
{
	static const char hex[] = "0123456789abcdef";
	char name[sizeof(LT_MEMFD_NAME) + 3] = LT_MEMFD_NAME;
	int fd;

	if (id != LT_MEMFD_TABLE) {
		name[sizeof(LT_MEMFD_NAME) - 1] = '-';
		name[sizeof(LT_MEMFD_NAME)] = hex[(id >> 4) & 15];
		name[sizeof(LT_MEMFD_NAME) + 1] = hex[id & 15];
		name[sizeof(LT_MEMFD_NAME) + 2] = '\0';
	}
	fd = (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
	if (fd < 0 && errno == EINVAL)	/* before 6.3: no MFD_NOEXEC_SEAL */
		fd = (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
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

static void *map_private(uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int livetable__memfd(uint64_t size, unsigned int id, char **map)
{
	int fd = lt.shared ? memfd_new(size, id) : -1;
	void *p;

	if (fd < -1)
		return fd;
	p = map_table(fd, size, NULL);
	if (p == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	*map = p;
	return fd;
}

int livetable__create(uint64_t entries, uint64_t sample, const char *comm)
{
	uint64_t off = LT_HDR_SIZE;
	void *base, *next;
	int fd;

	if (!syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
		lt_membarrier = true;
	lt.size = LT_HDR_SIZE + LT_MOD_SEG0 + LT_STK_SEG0 + LT_ENT_SEG0;
	fd = memfd_new(lt.size, LT_MEMFD_TABLE);
	if (fd < 0) {
		/* No memfd (before 3.17, out of files): this process's own dumps only. */
		lt_memfd_err = -fd;
		fd = -1;
	}
	base = map_table(fd, lt.size, NULL);
	next = base == MAP_FAILED ? NULL : map_private((LT_ENT_SEG0 / sizeof(struct lt_entry)) * 4);
	if (!next) {
		if (base != MAP_FAILED)
			munmap(base, lt.size);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	lt.base = base;
	lt.h = base;
	lt.shared = fd >= 0;
	lt.max_slots = entries && entries < MAX_SLOTS ? entries : MAX_SLOTS;
	lt.next_free[0] = next;
	lt.h->magic = LT_MAGIC;
	lt.h->version = LT_VERSION;
	lt.h->entry_size = sizeof(struct lt_entry);
	lt.h->pid = getpid();
	lt.h->sample_bytes = sample;
	strncpy(lt.h->comm, comm, sizeof(lt.h->comm) - 1);
	for (unsigned int r = 0; r < LT_NREGIONS; r++) {
		lt.h->region[r].seg0 = seg0[r];
		lt.h->region[r].seg[0] = off;
		lt.seg[r][0] = lt.base + off;
		off += seg0[r];
	}
	__atomic_store_n(&lt.h->stk_used, 8, __ATOMIC_RELEASE);	/* id 0: no stack */
	return fd;
}

/* Region @r's segment @k made: mapped, handed over, named in the header. Under grow_lock. */
static int seg_make(unsigned int r, unsigned int k)
{
	uint64_t size = seg0[r] << k;
	uint32_t *next = NULL;
	char *p;
	int fd, err = 0;

	if (r == LT_ENT && !(next = map_private((size / sizeof(struct lt_entry)) * 4)))
		return -ENOMEM;
	fd = livetable__memfd(size, r << 5 | k, &p);
	if (fd < -1) {
		err = fd;
	} else if (fd >= 0 && lt.handover) {
		/* Before anyone uses it: heapsnoop reads nothing it does not hold. */
		err = lt.handover(fd, r, k);
		if (err)
			munmap(p, size);
	}
	if (fd >= 0)
		close(fd);
	if (err) {
		if (next)
			munmap(next, (size / sizeof(struct lt_entry)) * 4);
		return err;
	}
	if (next)
		__atomic_store_n(&lt.next_free[k], next, __ATOMIC_RELEASE);
	__atomic_store_n(&lt.seg[r][k], p, __ATOMIC_RELEASE);
	__atomic_store_n(&lt.h->region[r].seg[k], LT_SEG_OWN, __ATOMIC_RELEASE);
	return 0;
}

int livetable__grow(unsigned int r, unsigned int k)
{
	static const char *const names[] = { "modules", "stacks", "entries" };
	int me, free_ = 0, err = 0;
	uint64_t bytes = 0;

	if (k >= LT_SEGS)
		return -ENOSPC;
	if (lt_made(r, k))
		return 0;
	/*
	 * A vfork child shares its parent's memory, not its pid: a segment
	 * it handed over would be named another process's. What needed it
	 * is counted in the parent's header.
	 */
	if (getpid() != lt.h->pid)
		return -EPERM;
	me = (int)syscall(SYS_gettid);
	while (!__atomic_compare_exchange_n(&grow_lock, &free_, me, false, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		if (free_ == me)
			return -EDEADLK;	/* a signal's allocation inside this thread's own */
		free_ = 0;
		sched_yield();
	}
	for (unsigned int j = 0; j <= k && !err; j++) {
		if (!lt_made(r, j))
			err = seg_make(r, j);
		bytes += seg0[r] << j;
	}
	__atomic_store_n(&grow_lock, 0, __ATOMIC_RELEASE);
	if (err && !__atomic_exchange_n(&grow_said[r], 1, __ATOMIC_RELAXED))
		dprintf(2, "heapsnoop-preload: pid %d: the live table's %s cannot grow to %llu MiB "
			"(%s): what does not fit is counted, not recorded\n", (int)getpid(), names[r],
			(unsigned long long)(bytes >> 20), strerror(-err));
	return err;
}

int livetable__view(struct lt_view *v)
{
	int err = lt_view__open(v, lt.base, lt.size);

	for (unsigned int r = 0; !err && r < LT_NREGIONS; r++)
		for (unsigned int k = 1; k < LT_SEGS && lt_made(r, k); k++)
			lt_view__attach(v, r, k, lt.seg[r][k], seg0[r] << k);
	return err;
}

/* --- slots ---------------------------------------------------------------- */

/* Slot @s's successor in a free list (its segment made). */
static inline uint32_t *next_of(uint32_t s)
{
	unsigned int k = lt_seg_of(s, LT_SLOT_SHIFT);

	return lt.next_free[k] + (s - lt_seg_start(k, LT_SLOT_SHIFT));
}

static __attribute__((noinline)) uint32_t slot_refill(void)
{
	struct lt_thread *t = &lt_tls;
	uint64_t b;

	spin_lock(&pool_lock);
	if (pool_n) {
		uint32_t s = pool_head, take = pool_n < BATCH ? pool_n : BATCH, last = s;

		for (uint32_t i = 1; i < take; i++)
			last = *next_of(last);
		pool_head = *next_of(last);
		pool_n -= take;
		spin_unlock(&pool_lock);
		*next_of(last) = t->head;
		t->head = *next_of(s);
		t->n += take - 1;
		return s;
	}
	spin_unlock(&pool_lock);
	if (t->bump < t->bump_end)
		return (uint32_t)t->bump++;
	b = __atomic_fetch_add(&lt.h->ent_hwm, BATCH, __ATOMIC_RELEASE);
	/*
	 * Past the bound, or no segment for it: the mark stays past what
	 * is made (readers clamp it); those slots are never handed out.
	 */
	if (b + BATCH > lt.max_slots)
		return LT_NO_SLOT;
	if (unlikely(!lt_made(LT_ENT, lt_seg_of(b, LT_SLOT_SHIFT))) &&
	    livetable__grow(LT_ENT, lt_seg_of(b, LT_SLOT_SHIFT)))
		return LT_NO_SLOT;
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
		t->head = *next_of(s);
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
		last = *next_of(last);
	t->head = *next_of(last);
	t->n -= BATCH;
	spin_lock(&pool_lock);
	*next_of(last) = pool_head;
	pool_head = first;
	pool_n += BATCH;
	spin_unlock(&pool_lock);
}

void lt_slot_put(uint32_t s)
{
	struct lt_thread *t = &lt_tls;

	*next_of(s) = t->head;
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

		*next_of(s) = first;
		first = s;
		if (last == LT_NO_SLOT)
			last = s;
		n++;
	}
	for (; t->n; t->n--) {
		uint32_t s = t->head;

		t->head = *next_of(s);
		*next_of(s) = first;
		first = s;
		if (last == LT_NO_SLOT)
			last = s;
		n++;
	}
	if (!n)
		return;
	spin_lock(&pool_lock);
	*next_of(last) = pool_head;
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
	grow_lock = 0;
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
