// SPDX-License-Identifier: MIT
/*
 * test_freelog.c - unit tests of the per-CPU free logs' reader
 * (user/tracer/stream/freelog.c): the frees come out in stamp order across
 * CPUs, each log's room is given back, and the ring is read only up to
 * where no free can still be missing, an entry claimed and not yet stamped
 * holding it at the producer's position of the last read before its claim.
 * The logs live in a memfd laid out as the kernel lays out the
 * BPF_F_MMAPABLE array (struct hs_free_log after struct hs_free_log); the
 * tests write them as the BPF side's log_free() does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "stream/freelog.h"

#define NCPUS 2

struct logs {
	int fd;
	struct hs_free_log *log;	/* [NCPUS], the test's view */
	struct freelog *fl;
};

static int setup(void **state)
{
	static struct logs l;
	size_t size = NCPUS * sizeof(struct hs_free_log);

	l.fd = memfd_create("free_logs", 0);
	assert_true(l.fd >= 0);
	assert_int_equal(ftruncate(l.fd, (off_t)size), 0);
	l.log = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, l.fd, 0);
	assert_true(l.log != MAP_FAILED);
	assert_int_equal(freelog__open(l.fd, NCPUS, &l.fl), 0);
	*state = &l;
	return 0;
}

static int teardown(void **state)
{
	struct logs *l = *state;

	freelog__free(l->fl);
	munmap(l->log, NCPUS * sizeof(struct hs_free_log));
	close(l->fd);
	return 0;
}

/* log_free()'s claim: the entry's index. */
static uint64_t claim(struct logs *l, int cpu)
{
	return l->log[cpu].head++;
}

static void stamp(struct logs *l, int cpu, uint64_t idx, uint64_t addr, uint64_t s)
{
	struct hs_free_entry *e = &l->log[cpu].e[idx & (HS_FREE_LOG_ENTRIES - 1)];

	e->addr = addr;
	e->id = (uint64_t)(100 + cpu) << 32 | (uint64_t)(200 + cpu);
	e->stamp = s;
}

static void logged(struct logs *l, int cpu, uint64_t addr, uint64_t s)
{
	stamp(l, cpu, claim(l, cpu), addr, s);
}

/* The next free before @seq must be @addr, stamped @s. */
static void expect_next(struct logs *l, uint64_t seq, uint64_t addr, uint64_t s)
{
	struct hs_free_entry e;

	assert_true(freelog__next(l->fl, seq, &e));
	assert_int_equal(e.addr, addr);
	assert_int_equal(e.stamp, s);
}

static void frees_come_out_in_stamp_order_across_cpus(void **state)
{
	struct logs *l = *state;
	struct hs_free_entry e;

	logged(l, 0, 0xa0, 9);
	logged(l, 0, 0xa1, 33);
	logged(l, 1, 0xb0, 17);
	/* Nothing unstamped: the ring may be read up to the producer's position. */
	assert_int_equal(freelog__collect(l->fl, 100), 100);
	expect_next(l, 16, 0xa0, 9);
	/* 0xb0 belongs before the record at 16 (sequence 17), not before 8's. */
	assert_false(freelog__next(l->fl, 16, &e));
	expect_next(l, 17, 0xb0, 17);
	expect_next(l, UINT64_MAX, 0xa1, 33);
	assert_false(freelog__next(l->fl, UINT64_MAX, &e));
	assert_int_equal(freelog__taken(l->fl), 3);
	/* The thread of each entry comes through. */
	logged(l, 1, 0xb1, 121);
	freelog__collect(l->fl, 200);
	assert_true(freelog__next(l->fl, UINT64_MAX, &e));
	assert_int_equal(e.id, (uint64_t)101 << 32 | 201);
}

static void the_room_is_given_back(void **state)
{
	struct logs *l = *state;
	struct hs_free_entry e;

	for (uint64_t i = 0; i < 3 * HS_FREE_LOG_ENTRIES; i++) {
		logged(l, 1, 0x1000 + i, 8 * i + 1);
		if (l->log[1].head - l->log[1].tail == HS_FREE_LOG_ENTRIES) {
			freelog__collect(l->fl, 8 * i + 8);
			/* Every entry taken, its stamp cleared for the next round. */
			assert_int_equal(l->log[1].tail, l->log[1].head);
			assert_int_equal(l->log[1].e[0].stamp, 0);
		}
	}
	for (uint64_t i = 0; i < 3 * HS_FREE_LOG_ENTRIES; i++)
		expect_next(l, UINT64_MAX, 0x1000 + i, 8 * i + 1);
	assert_false(freelog__next(l->fl, UINT64_MAX, &e));
}

static void an_unstamped_entry_holds_the_ring_at_the_read_before_its_claim(void **state)
{
	struct logs *l = *state;
	uint64_t idx;

	assert_int_equal(freelog__collect(l->fl, 40), 40);
	idx = claim(l, 0);
	/* Claimed after the read at 40: its stamp will be above 40. */
	assert_int_equal(freelog__collect(l->fl, 80), 40);
	assert_int_equal(freelog__collect(l->fl, 96), 40);
	/* The other CPU's frees still come out. */
	logged(l, 1, 0xb0, 73);
	assert_int_equal(freelog__collect(l->fl, 120), 40);
	expect_next(l, 73, 0xb0, 73);
	stamp(l, 0, idx, 0xa0, 89);
	assert_int_equal(freelog__collect(l->fl, 128), 128);
	expect_next(l, 89, 0xa0, 89);
}

static void an_entry_claimed_before_the_first_read_holds_the_ring_at_zero(void **state)
{
	struct logs *l = *state;
	uint64_t idx = claim(l, 1);

	/* Claimed before any read: it may be stamped 1. */
	assert_int_equal(freelog__collect(l->fl, 40), 0);
	assert_int_equal(freelog__collect(l->fl, 80), 0);
	stamp(l, 1, idx, 0xb0, 9);
	assert_int_equal(freelog__collect(l->fl, 88), 88);
	expect_next(l, 9, 0xb0, 9);
}

static void a_read_with_no_claim_since_moves_the_bound_up(void **state)
{
	struct logs *l = *state;
	uint64_t idx;

	logged(l, 0, 0xa0, 9);
	freelog__collect(l->fl, 40);
	/* No claim between: an entry claimed after this read comes after 80. */
	freelog__collect(l->fl, 80);
	idx = claim(l, 0);
	assert_int_equal(freelog__collect(l->fl, 120), 80);
	stamp(l, 0, idx, 0xa1, 97);
	assert_int_equal(freelog__collect(l->fl, 128), 128);
	expect_next(l, 9, 0xa0, 9);
	expect_next(l, 97, 0xa1, 97);
}

/*
 * The pending frees fill their array, some go out, and the next one taken
 * makes room by moving the rest to the front: it must still come out in
 * its place by stamp, before frees stamped later (a sort once skipped
 * there handed it out after the allocations that followed it).
 */
static void frees_stay_in_order_when_the_pending_move_to_the_front(void **state)
{
	struct logs *l = *state;
	struct hs_free_entry e;

	for (uint64_t i = 0; i < 4096; i++)
		logged(l, 0, 0x1000 + i, 1000 + 8 * i);
	freelog__collect(l->fl, 1000 + 8 * 4096);
	for (uint64_t i = 0; i < 100; i++)
		expect_next(l, UINT64_MAX, 0x1000 + i, 1000 + 8 * i);
	/* Between the 100th and the 101st. */
	logged(l, 1, 0xb0, 1000 + 8 * 100 + 4);
	freelog__collect(l->fl, 1000 + 8 * 4096 + 8);
	expect_next(l, 1000 + 8 * 100, 0x1000 + 100, 1000 + 8 * 100);
	expect_next(l, 1000 + 8 * 100 + 4, 0xb0, 1000 + 8 * 100 + 4);
	for (uint64_t i = 101; i < 4096; i++)
		expect_next(l, UINT64_MAX, 0x1000 + i, 1000 + 8 * i);
	assert_false(freelog__next(l->fl, UINT64_MAX, &e));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(frees_come_out_in_stamp_order_across_cpus,
						setup, teardown),
		cmocka_unit_test_setup_teardown(the_room_is_given_back, setup, teardown),
		cmocka_unit_test_setup_teardown(
			an_unstamped_entry_holds_the_ring_at_the_read_before_its_claim,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			an_entry_claimed_before_the_first_read_holds_the_ring_at_zero,
			setup, teardown),
		cmocka_unit_test_setup_teardown(a_read_with_no_claim_since_moves_the_bound_up,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			frees_stay_in_order_when_the_pending_move_to_the_front,
			setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
