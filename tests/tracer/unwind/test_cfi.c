// SPDX-License-Identifier: MIT
/*
 * test_cfi.c - unit tests of what the unwinder lets go of in a long run
 * (an -a agent): the CFI cache's trims (user/unwind/cfi.c,
 * cfi_cache__trim()), on this test's own executable as /proc/self/maps
 * names it: a rule looked up before a trim is the same after it (libdw's
 * CFI begun again); a module not used over a whole interval is closed at
 * the next trim and opened again at its next use; a trim is due after
 * CFI_TRIM_MISSES misses, not before. And an ended process's stack tails
 * (tails.c, tails__forget()), on a memfd standing for the BPF map: its
 * threads' tails gone, another process's kept.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "maps/buildid.h"
#include "maps/procmaps.h"
#include "unwind/cfi.h"
#include "unwind/procsrc.h"
#include "unwind/tails.h"
#include "unwind/unwind.h"

static struct buildid_cache *bc;

/* This test's own code: its executable's mapping of own_text() and its file offset. */
static const struct mapping *own_text(struct mapset **pm, uint64_t *off)
{
	const struct mapping *m;

	if (!bc)
		bc = buildid_cache__new();
	assert_non_null(bc);
	assert_int_equal(proc_maps__load(getpid(), bc, pm), 0);
	m = mapset__find(*pm, (uint64_t)(uintptr_t)&own_text);
	assert_non_null(m);
	*off = (uint64_t)(uintptr_t)&own_text - m->start + m->offset;
	return m;
}

static void test_rule_survives_trim(void **state)
{
	struct cfi_cache *c = cfi_cache__new(&proc_cfi_src);
	struct cfi_rule before, after;
	struct cfi_module *mod;
	struct cfi_stats st;
	struct mapset *pm;
	uint64_t off;
	const struct mapping *m = own_text(&pm, &off);

	(void)state;
	assert_non_null(c);
	mod = cfi_cache__module(c, getpid(), m);
	assert_non_null(mod);
	/* Inside the function, past its first instruction: its FDE's row. */
	assert_int_equal(cfi_cache__rule(c, mod, off + 4, &before), 0);
	assert_int_equal(cfi_cache__trim(c), 0);
	/* Used in the last interval: kept, its CFI begun again. */
	assert_ptr_equal(cfi_cache__module(c, getpid(), m), mod);
	/* Another address of the same function misses the rule cache: libdw reads it again. */
	assert_int_equal(cfi_cache__rule(c, mod, off + 5, &after), 0);
	assert_int_equal(before.cfa_reg, after.cfa_reg);
	assert_int_equal(cfi_cache__rule(c, mod, off + 4, &after), 0);
	assert_memory_equal(&before, &after, sizeof(before));
	cfi_cache__stats(c, &st);
	assert_int_equal(st.trims, 1);
	assert_int_equal(st.closed, 0);
	cfi_cache__free(c);
	mapset__free(pm);
}

static void test_unused_module_closed(void **state)
{
	struct cfi_cache *c = cfi_cache__new(&proc_cfi_src);
	struct cfi_rule r;
	struct cfi_module *mod;
	struct cfi_stats st;
	struct mapset *pm;
	uint64_t off;
	const struct mapping *m = own_text(&pm, &off);

	(void)state;
	mod = cfi_cache__module(c, getpid(), m);
	assert_non_null(mod);
	assert_int_equal(cfi_cache__trim(c), 0);	/* used before it: kept */
	assert_int_equal(cfi_cache__trim(c), 0);	/* not used since: closed */
	cfi_cache__stats(c, &st);
	assert_int_equal(st.closed, 1);
	assert_int_equal(st.modules, 1);
	/* Its next use opens it again, a module of its own id. */
	mod = cfi_cache__module(c, getpid(), m);
	assert_non_null(mod);
	assert_int_equal(cfi_cache__rule(c, mod, off + 4, &r), 0);
	cfi_cache__stats(c, &st);
	assert_int_equal(st.modules, 2);
	cfi_cache__free(c);
	mapset__free(pm);
}

static void test_trim_due(void **state)
{
	struct cfi_cache *c = cfi_cache__new(&proc_cfi_src);
	struct cfi_module *mod;
	struct cfi_rule r;
	struct mapset *pm;
	uint64_t off, misses = 0;
	const struct mapping *m = own_text(&pm, &off);
	struct cfi_stats st;

	(void)state;
	mod = cfi_cache__module(c, getpid(), m);
	assert_false(cfi_cache__trim_due(c));
	(void)off;
	/* Distinct offsets: each one a miss of the rule cache, until a trim is due. */
	for (uint64_t i = 0; !cfi_cache__trim_due(c) && i < 65536; i++) {
		cfi_cache__rule(c, mod, i, &r);
		cfi_cache__stats(c, &st);
		misses = st.misses;
	}
	assert_true(cfi_cache__trim_due(c));
	assert_int_equal(misses, 16384);	/* cfi.c's CFI_TRIM_MISSES */
	assert_int_equal(cfi_cache__trim(c), 0);
	assert_false(cfi_cache__trim_due(c));
	cfi_cache__free(c);
	mapset__free(pm);
}

static uint64_t ring_head;

static uint64_t head(void *ctx)
{
	(void)ctx;
	return ring_head;
}

/* A tail for thread @tid of @pid, starting at @start (what tails__give() keeps). */
static const struct unwind_tail *give(struct tails *ts, pid_t pid, pid_t tid, uint64_t start)
{
	struct unwind_tail *t = calloc(1, sizeof(*t));
	const struct unwind_tail *found;
	uint64_t id;

	assert_non_null(t);
	t->start = start;
	assert_true(tails__give(ts, pid, tid, t));
	id = t->id;
	found = tails__find(ts, pid, tid, id);
	assert_ptr_equal(found, t);
	tails__unpin(ts, found);
	return found;
}

static void test_tails_forgotten(void **state)
{
	size_t size = (HS_TAIL_SLOTS * sizeof(struct hs_tail) + 4095) & ~(size_t)4095;
	int fd = memfd_create("tails", MFD_CLOEXEC);
	const struct unwind_tail *kept;
	struct tails_stats st;
	struct tails *ts;
	uint64_t id_a1, id_a2, id_b;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	assert_int_equal(tails__open(fd, head, NULL, &ts), 0);
	id_a1 = give(ts, 1000, 1000, 0x7000)->id;
	id_a2 = give(ts, 1000, 1001, 0x8000)->id;
	id_b = give(ts, 2000, 2000, 0x9000)->id;
	tails__forget(ts, 1000);
	tails__stats(ts, &st);
	assert_int_equal(st.forgotten, 2);
	assert_null(tails__find(ts, 1000, 1000, id_a1));
	assert_null(tails__find(ts, 1000, 1001, id_a2));
	/* Another process's tail stays, found (and pinned) as before. */
	kept = tails__find(ts, 2000, 2000, id_b);
	assert_non_null(kept);
	tails__unpin(ts, kept);
	tails__free(ts);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_survives_trim),
		cmocka_unit_test(test_unused_module_closed),
		cmocka_unit_test(test_trim_due),
		cmocka_unit_test(test_tails_forgotten),
	};

	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	buildid_cache__free(bc);
	return rc;
}
