/* SPDX-License-Identifier: MIT */
/*
 * reader.h - the BPF side's records in the order they were made: the
 * ring buffer's, read in place (ring.h), with the plain frees of the
 * per-CPU logs (freelog.h) put back between them. Each is handed over
 * with its sequence, the position + 1 a ring buffer record has or a
 * free's stamp: a free and the record after it may share one, the free
 * going first.
 *
 * Ahead of its turn, each ring record may be looked at (reader_ahead_fn):
 * what the loop hands to other threads (an allocation's stack to unwind,
 * user/tracer/unwind/pool.h) starts there, while the records before it
 * are handled. A record is given back to the producer only once handed
 * over, so what was looked at stays where it lies until then.
 */
#ifndef HEAPSNOOP_READER_H
#define HEAPSNOOP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct reader;

/*
 * One record: @data (@len bytes: a struct hs_event and what follows it,
 * heapsnoop/event.h; a free from a log is HS_EVENT_FREE_SIZE bytes) of
 * sequence @seq. A negative return stops the reading and is returned by
 * reader__drain().
 */
typedef int (*reader_fn)(void *ctx, const void *data, size_t len, uint64_t seq);

/*
 * A ring record of sequence @seq looked at before its turn: true if it
 * was taken (its handing over, later, finds what was started for it);
 * false to stop looking ahead here (no room for more, or a record whose
 * turn must come first: it is then handed over without a look ahead, and
 * the looking goes on after it).
 */
typedef bool (*reader_ahead_fn)(void *ctx, const void *data, size_t len, uint64_t seq);

/*
 * How far the loop is behind: called with the ring's backlog (bytes not
 * given back yet) at each drain's start, every READER_FLOW_EVERY records
 * handed over, and at its end.
 */
typedef void (*reader_flow_fn)(void *ctx, uint64_t backlog);

#define READER_FLOW_EVERY 64

struct reader_opts {
	reader_fn fn;			/* each record, in order */
	reader_ahead_fn ahead;		/* NULL: none looked at ahead */
	reader_flow_fn flow;		/* NULL: not told */
	void *ctx;			/* of the three */
};

/*
 * Read the ring buffer map @ring_fd (@ring_size bytes, no record in it
 * yet) and, if @logs_fd >= 0, the free_logs map @logs_fd of @ncpus logs.
 * Returns 0 and *@out, or -errno (mmap's; -ENOMEM).
 */
int reader__open(int ring_fd, size_t ring_size, int logs_fd, unsigned int ncpus,
		 const struct reader_opts *opts, struct reader **out);

/*
 * Hand over every record that can be put in order now: the logs first,
 * then the ring up to where no free can still be missing (freelog.h) or
 * a record still being written, the records after the next ones looked
 * at ahead as far as @ahead takes them, then the frees that belong
 * before the first record not handed over. Returns the records of the
 * ring handed over, or -EPROTO (a record the ring's stream cannot hold:
 * said on stderr) or the handler's error.
 */
int reader__drain(struct reader *r);

/* A descriptor that polls readable when the programs wake the reader. */
int reader__poll_fd(const struct reader *r);

/* The ring buffer producer's position now (ring__head()). */
uint64_t reader__head(const struct reader *r);

/* The ring's bytes reserved and not yet handed over, now (ring__backlog()). */
uint64_t reader__backlog(const struct reader *r);

/* Frees taken from the per-CPU logs so far; 0 without them. */
uint64_t reader__logged_frees(const struct reader *r);

/*
 * The ring's records not handed over yet, from position @from up to the
 * producer's now, looked at without handing them over (ring__peek()):
 * what the record being handled may need of later ones (a code object's
 * death, interp/python/pycache.h). *@to gets the position looked up to.
 */
int reader__peek(const struct reader *r, uint64_t from,
		 void (*fn)(void *ctx, const void *data, size_t len, uint64_t pos), void *ctx,
		 uint64_t *to);

void reader__free(struct reader *r);

#endif /* HEAPSNOOP_READER_H */
