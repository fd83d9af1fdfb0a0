// SPDX-License-Identifier: MIT
/*
 * test_jitdump.c - unit tests of the jitdump reader (user/tracer/maps/
 * jitdump.c, jitdumpfile.c) and its merge with the perf map (jitnames.c)
 * on files built here by hand in perf's format (tools/perf/util/
 * jitdump.h): a good file's names and lines, a file read at every length
 * it passes through while written (never a torn record), the newest code
 * winning (LOAD over LOAD, MOVE), a truncated header, the other byte
 * order, other versions, garbage and hostile lengths; the file found by
 * this process's own executable mapping of it, as it grows; and the perf
 * map and the jitdump merged, the one read later winning.
 */
#include <byteswap.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "maps/jitdump.h"
#include "maps/jitdumpfile.h"
#include "maps/jitnames.h"

struct buf {
	uint8_t b[1 << 16];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void u32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void u64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void header(struct buf *b, uint32_t magic, uint32_t version, uint32_t size)
{
	u32(b, magic);
	u32(b, version);
	u32(b, size);
	u32(b, 62);		/* EM_X86_64 */
	u32(b, 0);
	u32(b, 1234);		/* pid */
	u64(b, 1);		/* timestamp */
	u64(b, 0);		/* flags */
	for (uint32_t i = 40; i < size; i++)
		put(b, "", 1);
}

/* A record's prefix; its total_size set by rec_end(). */
static size_t rec_begin(struct buf *b, uint32_t id)
{
	size_t at = b->n;

	u32(b, id);
	u32(b, 0);
	u64(b, 2);
	return at;
}

static void rec_end(struct buf *b, size_t at)
{
	uint32_t total = (uint32_t)(b->n - at);

	memcpy(b->b + at + 4, &total, 4);
}

static void load(struct buf *b, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	size_t at = rec_begin(b, 0);

	u32(b, 1234);
	u32(b, 1234);
	u64(b, addr);
	u64(b, addr);
	u64(b, size);
	u64(b, index);
	put(b, name, strlen(name) + 1);
	for (uint64_t i = 0; i < size; i++)
		put(b, "\xcc", 1);	/* the code's bytes */
	rec_end(b, at);
}

struct entry {
	uint64_t off;		/* into the code */
	int32_t line;
	const char *file;	/* "\xff": the previous one's */
};

/* DEBUG_INFO for code at @code: entries as V8 writes them, at off + 0x40. */
static void debug(struct buf *b, uint64_t code, const struct entry *e, size_t n)
{
	size_t at = rec_begin(b, 2);

	u64(b, code);
	u64(b, n);
	for (size_t i = 0; i < n; i++) {
		u64(b, code + e[i].off + JIT_DUMP_ELF_TEXT_OFFSET);
		u32(b, (uint32_t)e[i].line);
		u32(b, 0);
		put(b, e[i].file, strlen(e[i].file) + 1);
	}
	rec_end(b, at);
}

static void move(struct buf *b, uint64_t index, uint64_t from, uint64_t to, uint64_t size)
{
	size_t at = rec_begin(b, 1);

	u32(b, 1234);
	u32(b, 1234);
	u64(b, to);
	u64(b, from);
	u64(b, to);
	u64(b, size);
	u64(b, index);
	rec_end(b, at);
}

/* The good file: two functions, the second with lines, then an unknown record. */
static size_t good(struct buf *b, size_t *ends, size_t *nends)
{
	static const struct entry e[] = {
		{ 0x10, 7, "/srv/a.js" }, { 0x20, 8, "\xff" }, { 0x30, 8, "/srv/b.js" },
	};
	size_t at;

	header(b, JIT_DUMP_MAGIC, 1, 40);
	ends[(*nends)++] = b->n;
	load(b, 0x7f0000001000, 0x80, 1, "JS:*outer /srv/a.js:1:1");
	ends[(*nends)++] = b->n;
	debug(b, 0x7f0000002000, e, 3);
	load(b, 0x7f0000002000, 0x40, 2, "JS:*leaf /srv/a.js:5:14");
	ends[(*nends)++] = b->n;
	at = rec_begin(b, 4);	/* UNWINDING_INFO: skipped */
	u64(b, 0);
	rec_end(b, at);
	ends[(*nends)++] = b->n;
	return b->n;
}

static const char *name_at(const struct jit_dump *jd, uint64_t addr)
{
	static struct jit_code c;

	return jit_dump__find(jd, addr, &c) ? NULL : c.name;
}

static void names_and_lines(void **state)
{
	struct jit_dump *jd = jit_dump__new();
	static struct buf b;
	struct jit_dump_stats st;
	struct jit_code c;
	size_t ends[8], n = 0;

	(void)state;
	b.n = 0;
	good(&b, ends, &n);
	assert_int_equal(jit_dump__feed(jd, b.b, b.n), 2);
	assert_string_equal(name_at(jd, 0x7f0000001000), "JS:*outer /srv/a.js:1:1");
	assert_string_equal(name_at(jd, 0x7f000000107f), "JS:*outer /srv/a.js:1:1");
	assert_null(name_at(jd, 0x7f0000001080));
	/* No debug info: the whole code, no line. */
	assert_int_equal(jit_dump__find(jd, 0x7f0000001040, &c), 0);
	assert_true(c.lstart == 0x7f0000001000 && c.lend == 0x7f0000001080);
	assert_null(c.file);
	/* Before the first entry: the piece up to it, no line. */
	assert_int_equal(jit_dump__find(jd, 0x7f0000002008, &c), 0);
	assert_true(c.lstart == 0x7f0000002000 && c.lend == 0x7f0000002010);
	assert_null(c.file);
	assert_int_equal(c.line, 0);
	/* Each entry's piece: its file (the repeated marker: the one before) and line. */
	assert_int_equal(jit_dump__find(jd, 0x7f0000002010, &c), 0);
	assert_true(c.lstart == 0x7f0000002010 && c.lend == 0x7f0000002020);
	assert_string_equal(c.file, "/srv/a.js");
	assert_int_equal(c.line, 7);
	assert_int_equal(c.lidx, 1);
	assert_int_equal(jit_dump__find(jd, 0x7f000000201f + 1, &c), 0);
	assert_string_equal(c.file, "/srv/a.js");
	assert_int_equal(c.line, 8);
	assert_int_equal(jit_dump__find(jd, 0x7f000000203f, &c), 0);
	assert_true(c.lstart == 0x7f0000002030 && c.lend == 0x7f0000002040);
	assert_string_equal(c.file, "/srv/b.js");
	assert_string_equal(c.name, "JS:*leaf /srv/a.js:5:14");
	jit_dump__stats(jd, &st);
	assert_int_equal(st.state, JIT_DUMP_OK);
	assert_int_equal(st.loads, 2);
	assert_int_equal(st.debug, 1);
	assert_int_equal(st.lines, 3);
	assert_int_equal(st.bad, 0);
	assert_int_equal(st.bytes, b.n);
	assert_string_equal(jit_dump__why(jd), "");
	jit_dump__free(jd);
}

/* Read at every length the file passes through: only whole records, then all. */
static void grows(void **state)
{
	static struct buf b;
	size_t ends[8], n = 0;
	struct jit_dump *jd = jit_dump__new(), *fresh;

	(void)state;
	b.n = 0;
	good(&b, ends, &n);
	for (size_t len = 0; len <= b.n; len++) {
		int whole = 0;

		for (size_t i = 1; i < n; i++)
			whole += ends[i] <= len && i < 3;
		/* The same reader fed as the file grows, and a fresh one at this length. */
		assert_true(jit_dump__feed(jd, b.b, len) >= 0);
		assert_int_equal(jit_dump__count(jd), whole);
		fresh = jit_dump__new();
		assert_int_equal(jit_dump__feed(fresh, b.b, len), whole);
		if (len < 40)
			assert_non_null(strstr(jit_dump__why(fresh), "not whole"));
		jit_dump__free(fresh);
	}
	assert_non_null(name_at(jd, 0x7f0000002030));
	/* Made shorter: another content, read again from its start. */
	assert_int_equal(jit_dump__feed(jd, b.b, ends[2]), 2);
	{
		struct jit_dump_stats st;

		jit_dump__stats(jd, &st);
		assert_int_equal(st.resets, 1);
	}
	jit_dump__free(jd);
}

/* A range made again is the newest code's; a MOVE carries name and lines. */
static void newest_and_moves(void **state)
{
	static const struct entry e[] = { { 0, 3, "/m.js" }, { 0x8, 4, "\xff" } };
	static struct buf b;
	struct jit_dump *jd = jit_dump__new();
	struct jit_dump_stats st;
	struct jit_code c;

	(void)state;
	b.n = 0;
	header(&b, JIT_DUMP_MAGIC, 1, 48);	/* a longer header: its size says */
	load(&b, 0x10000, 0x100, 1, "old");
	load(&b, 0x10080, 0x10, 2, "new");
	debug(&b, 0x20000, e, 2);
	load(&b, 0x20000, 0x10, 3, "moved");
	move(&b, 3, 0x20000, 0x30000, 0x10);
	move(&b, 99, 0x20000, 0x40000, 0x10);	/* no such code: skipped */
	assert_int_equal(jit_dump__feed(jd, b.b, b.n), 4);
	assert_string_equal(name_at(jd, 0x10010), "old");
	assert_string_equal(name_at(jd, 0x10088), "new");
	assert_string_equal(name_at(jd, 0x10090), "old");
	assert_int_equal(jit_dump__find(jd, 0x3000c, &c), 0);
	assert_string_equal(c.name, "moved");
	assert_int_equal(c.line, 4);
	assert_true(c.lstart == 0x30008 && c.lend == 0x30010);
	assert_string_equal(name_at(jd, 0x20000), "moved");
	assert_null(name_at(jd, 0x40000));
	jit_dump__stats(jd, &st);
	assert_int_equal(st.moves, 1);
	assert_int_equal(st.bad, 1);
	jit_dump__free(jd);
}

static void refused(const void *data, size_t len, enum jit_dump_state state, const char *why)
{
	struct jit_dump *jd = jit_dump__new();
	struct jit_dump_stats st;

	assert_int_equal(jit_dump__feed(jd, data, len), -EPROTO);
	jit_dump__stats(jd, &st);
	assert_int_equal(st.state, state);
	assert_non_null(strstr(jit_dump__why(jd), why));
	assert_int_equal(jit_dump__count(jd), 0);
	/* Said once, read no further: the same again. */
	assert_int_equal(jit_dump__feed(jd, data, len), -EPROTO);
	jit_dump__free(jd);
}

/* Truncated, the other byte order, other versions, not a jitdump. */
static void refusals(void **state)
{
	static struct buf b;
	size_t ends[8], n = 0;
	struct jit_dump *jd = jit_dump__new();
	struct jit_dump_stats st;
	uint32_t v;

	(void)state;
	b.n = 0;
	good(&b, ends, &n);
	/* A header that says it is longer than the file: waited for. */
	memcpy(b.b + 8, &(uint32_t){ 4000 }, 4);
	assert_int_equal(jit_dump__feed(jd, b.b, 100), 0);
	jit_dump__stats(jd, &st);
	assert_int_equal(st.state, JIT_DUMP_WAIT);
	jit_dump__free(jd);
	memcpy(b.b + 8, &(uint32_t){ 8000 }, 4);
	refused(b.b, b.n, JIT_DUMP_CORRUPT, "header says it is 8000 bytes");
	memcpy(b.b + 8, &(uint32_t){ 39 }, 4);
	refused(b.b, b.n, JIT_DUMP_CORRUPT, "header says it is 39 bytes");
	memcpy(b.b + 8, &(uint32_t){ 40 }, 4);
	/* The other byte order: every field swapped, the magic first. */
	v = bswap_32(JIT_DUMP_MAGIC);
	memcpy(b.b, &v, 4);
	refused(b.b, b.n, JIT_DUMP_FOREIGN, "other byte order");
	v = JIT_DUMP_MAGIC;
	memcpy(b.b, &v, 4);
	memcpy(b.b + 4, &(uint32_t){ 2 }, 4);
	refused(b.b, b.n, JIT_DUMP_BAD_VERSION, "version is 2");
	refused("\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0\0\0\0\0\0\0\0\0"
		"\0\0\0\0\0\0\0\0", 40, JIT_DUMP_NOT_JITDUMP, "not a jitdump");
	refused("7f0000001000 40 JS:*leaf /srv/a.js:5:14\n", 40, JIT_DUMP_NOT_JITDUMP,
		"magic 0x30306637");
}

/* Lengths that lie: skipped or refused, never read past; what came before stays. */
static void hostile(void **state)
{
	static struct buf b;
	struct jit_dump *jd = jit_dump__new();
	struct jit_dump_stats st;
	size_t at;

	(void)state;
	b.n = 0;
	header(&b, JIT_DUMP_MAGIC, 1, 40);
	load(&b, 0x1000, 0x10, 1, "kept");
	/* A code size past its record. */
	at = rec_begin(&b, 0);
	u32(&b, 1);
	u32(&b, 1);
	u64(&b, 0x5000);
	u64(&b, 0x5000);
	u64(&b, 0x1000000);
	u64(&b, 5);
	put(&b, "x", 2);
	rec_end(&b, at);
	/* A name with no NUL: cut at its record (a code size of 1). */
	at = rec_begin(&b, 0);
	u32(&b, 1);
	u32(&b, 1);
	u64(&b, 0x6000);
	u64(&b, 0x6000);
	u64(&b, 1);
	u64(&b, 6);
	put(&b, "abc\xcc", 4);
	rec_end(&b, at);
	/* An empty range, a range over user space, a range that wraps. */
	load(&b, 0x7000, 0, 7, "empty");
	load(&b, 0x4000000000000000ULL, 0x10, 8, "kernel");
	load(&b, 0xfffffffffffffff0ULL, 0x20, 9, "wraps");
	/* DEBUG_INFO: more entries than fit; a file name with no NUL; one not followed by its LOAD. */
	at = rec_begin(&b, 2);
	u64(&b, 0x8000);
	u64(&b, 1000000);
	rec_end(&b, at);
	at = rec_begin(&b, 2);
	u64(&b, 0x8000);
	u64(&b, 1);
	u64(&b, 0x8040);
	u32(&b, 1);
	u32(&b, 0);
	put(&b, "abc", 3);
	rec_end(&b, at);
	debug(&b, 0x9000, (const struct entry[]){ { 0, 1, "f" } }, 1);
	load(&b, 0xa000, 0x10, 10, "after");
	/* A file name that is not text (node 20 has written freed bytes there): no lines. */
	debug(&b, 0xc000, (const struct entry[]){ { 0, 18, "Q\xb8\xff:" } }, 1);
	load(&b, 0xc000, 0x10, 12, "no lines");
	/* Short records of each kind. */
	at = rec_begin(&b, 0);
	rec_end(&b, at);
	at = rec_begin(&b, 1);
	rec_end(&b, at);
	at = rec_begin(&b, 2);
	rec_end(&b, at);
	assert_int_equal(jit_dump__feed(jd, b.b, b.n), 4);
	assert_string_equal(name_at(jd, 0x1000), "kept");
	{
		struct jit_code c;

		assert_int_equal(jit_dump__find(jd, 0xc008, &c), 0);
		assert_null(c.file);
		assert_int_equal(c.line, 0);
		assert_true(c.lstart == 0xc000 && c.lend == 0xc010);
	}
	assert_string_equal(name_at(jd, 0x6000), "abc");
	assert_string_equal(name_at(jd, 0xa000), "after");
	assert_null(name_at(jd, 0x5000));
	assert_null(name_at(jd, 0x8000));
	jit_dump__stats(jd, &st);
	assert_int_equal(st.bad, 11);
	assert_int_equal(st.state, JIT_DUMP_OK);
	/* A record shorter than its own prefix: nothing past it can be framed. */
	at = rec_begin(&b, 0);
	memcpy(b.b + at + 4, &(uint32_t){ 15 }, 4);
	load(&b, 0xb000, 0x10, 11, "unread");
	assert_int_equal(jit_dump__feed(jd, b.b, b.n), -EPROTO);
	assert_non_null(strstr(jit_dump__why(jd), "says it is 15 bytes"));
	assert_string_equal(name_at(jd, 0x1000), "kept");
	assert_null(name_at(jd, 0xb000));
	jit_dump__free(jd);
}

/* The file this process maps executable, as node does: found, read as it grows. */
static void found_by_mapping(void **state)
{
	char dir[] = "/tmp/test_jitdump.XXXXXX", path[96];
	static struct buf b;
	size_t ends[8], n = 0;
	struct jit_dump_file *f = jit_dump_file__new(getpid());
	struct jit_dump_file *g = jit_dump_file__new(getpid());
	struct jit_code c;
	void *m;
	int fd;

	(void)state;
	b.n = 0;
	good(&b, ends, &n);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	/* Mapped readable only: not how a jitdump is marked, not found. */
	assert_int_equal(write(fd, b.b, ends[1] + 10), (ssize_t)(ends[1] + 10));
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(jit_dump_file__refresh(g, 0), -ENOENT);
	munmap(m, 4096);
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(m != MAP_FAILED);
	/* The first record and part of the second: the first alone. */
	assert_int_equal(jit_dump_file__refresh(f, 0), 1);
	assert_true(jit_dump_file__found(f));
	assert_int_equal(jit_dump__find(jit_dump_file__dump(f), 0x7f0000002010, &c), -ENOENT);
	/* The rest written: read from where it stopped; the mapping gone, the file kept open. */
	assert_int_equal(write(fd, b.b + ends[1] + 10, b.n - ends[1] - 10),
			 (ssize_t)(b.n - ends[1] - 10));
	munmap(m, 4096);
	unlink(path);
	assert_int_equal(jit_dump_file__refresh(f, 0), 1);
	assert_int_equal(jit_dump__find(jit_dump_file__dump(f), 0x7f0000002010, &c), 0);
	assert_int_equal(c.line, 7);
	assert_int_equal(jit_dump_file__refresh(f, 0), 0);
	close(fd);
	rmdir(dir);
	jit_dump_file__free(f);
	jit_dump_file__free(g);
}

static int kept_names(const struct jit_name *e, void *ctx)
{
	int *k = ctx;

	(*k)++;
	return e->name ? 0 : -1;
}

/*
 * Both files of one process: an address is named by the definition read
 * later (the perf map's newer line over the jitdump's older code), a
 * name kept once, an address neither names yet named at the dump.
 */
static void merged_with_perf_map(void **state)
{
	char dir[] = "/tmp/test_jitdump.XXXXXX", path[96], pm[64];
	static struct buf b;
	struct mapset *ms = mapset__new(getpid());
	struct jit_names *j = jit_names__new(getpid());
	struct mapping anon = { .start = 0x7f0000000000, .end = 0x7f0000100000,
				.build_id = "-", .path = MAPPING_ANON_PATH, .flags = MAPPING_ANON };
	uint64_t fr[2];
	struct perf_map_entry e;
	struct jit_names_stats st;
	int kept = 0, fd;
	FILE *map;
	void *m;

	(void)state;
	assert_int_equal(mapset__add(ms, &anon), 0);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, getpid());
	snprintf(pm, sizeof(pm), "/tmp/perf-%d.map", getpid());
	b.n = 0;
	header(&b, JIT_DUMP_MAGIC, 1, 40);
	debug(&b, 0x7f0000002000, (const struct entry[]){ { 0, 12, "/srv/a.js" } }, 1);
	load(&b, 0x7f0000002000, 0x40, 1, "JS:*leaf /srv/a.js:5:14");
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.b, b.n), (ssize_t)b.n);
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(m != MAP_FAILED);
	map = fopen(pm, "w");
	assert_non_null(map);
	fprintf(map, "7f0000001000 40 JS:*outer /srv/a.js:1:1\n");
	fclose(map);
	/* One read of both: the jitdump's leaf with its line, the map's outer. */
	fr[0] = 0x7f0000002011;
	fr[1] = 0x7f0000001011;
	assert_int_equal(jit_names__note(j, ms, fr, 2, kept_names, &kept), 2);
	assert_int_equal(kept, 2);
	assert_int_equal(jit_names__find(j, fr[0], &e), 0);
	assert_string_equal(e.name, "JS:*leaf /srv/a.js:5:14");
	/* The same again: kept once. */
	assert_int_equal(jit_names__note(j, ms, fr, 2, kept_names, &kept), 2);
	assert_int_equal(kept, 2);
	/* The leaf's range made again, named by the perf map read after: it wins. */
	map = fopen(pm, "a");
	assert_non_null(map);
	fprintf(map, "7f0000002000 40 JS:*other /srv/a.js:9:1\n");
	fclose(map);
	fr[0] = 0x7f0000003001;	/* named by neither: both read again */
	assert_int_equal(jit_names__note(j, ms, fr, 1, kept_names, &kept), 1);
	assert_int_equal(jit_names__find(j, 0x7f0000002011, &e), 0);
	assert_string_equal(e.name, "JS:*other /srv/a.js:9:1");
	jit_names__stats(j, &st);
	assert_int_equal(st.pending, 1);
	/* The jitdump gains the code at the unnamed address: named at the dump. */
	b.n = 0;
	load(&b, 0x7f0000003000, 0x10, 2, "JS:*late /srv/a.js:20:1");
	assert_int_equal(write(fd, b.b, b.n), (ssize_t)b.n);
	assert_int_equal(jit_names__retry(j, kept_names, &kept), 1);
	assert_int_equal(kept, 3);
	assert_int_equal(jit_names__find(j, 0x7f0000003001, &e), 0);
	assert_string_equal(e.name, "JS:*late /srv/a.js:20:1");
	jit_names__stats(j, &st);
	assert_int_equal(st.pending, 0);
	assert_true(st.dump_found);
	assert_int_equal(st.named, 5);
	assert_int_equal(st.frames, 5);
	munmap(m, 4096);
	close(fd);
	unlink(path);
	unlink(pm);
	rmdir(dir);
	jit_names__free(j);
	mapset__free(ms);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_and_lines),
		cmocka_unit_test(grows),
		cmocka_unit_test(newest_and_moves),
		cmocka_unit_test(refusals),
		cmocka_unit_test(hostile),
		cmocka_unit_test(found_by_mapping),
		cmocka_unit_test(merged_with_perf_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
