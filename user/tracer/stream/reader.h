/* SPDX-License-Identifier: MIT */
/*
 * reader.h - the BPF side's records in the order they were made: the
 * ring buffer's (libbpf's consumer, each record's position from
 * ringpos.h) with the plain frees of the per-CPU logs (freelog.h) put
 * back between them. Each is handed over with its sequence, the position
 * + 1 a ring buffer record has or a free's stamp: a free and the record
 * after it may share one, the free going first.
 */
#ifndef HEAPSNOOP_READER_H
#define HEAPSNOOP_READER_H

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
 * Read the ring buffer map @ring_fd (@ring_size bytes, no record in it
 * yet) and, if @logs_fd >= 0, the free_logs map @logs_fd of @ncpus logs,
 * handing each record to @fn(@ctx, ...). Returns 0 and *@out, or -errno
 * (mmap's, libbpf's; -ENOMEM).
 */
int reader__open(int ring_fd, size_t ring_size, int logs_fd, unsigned int ncpus,
		  reader_fn fn, void *ctx, struct reader **out);

/*
 * Hand over every record that can be put in order now: the logs first,
 * then the ring up to where no free can still be missing (freelog.h), a
 * record read past that kept for the next call, then the frees that
 * belong before the first record not handed over. Returns the records of
 * the ring handed over, or -EPROTO (a record not where libbpf maps the
 * ring: said on stderr) or @fn's error.
 */
int reader__drain(struct reader *r);

/* A descriptor that polls readable when the programs wake the reader. */
int reader__epoll_fd(const struct reader *r);

/* The ring buffer producer's position now (ringpos__head()). */
uint64_t reader__head(const struct reader *r);

/* The ring's bytes reserved and not yet read, now (ringpos__backlog()). */
uint64_t reader__backlog(const struct reader *r);

/* Frees taken from the per-CPU logs so far; 0 without them. */
uint64_t reader__logged_frees(const struct reader *r);

/*
 * The ring's records not handed over yet, from position @from up to the
 * producer's now, looked at without consuming them (ringpos__peek()):
 * what the record being handled may need of later ones (a code object's
 * death, interp/pycache.h). *@to gets the position looked up to.
 */
int reader__peek(const struct reader *r, uint64_t from,
		 void (*fn)(void *ctx, const void *data, size_t len, uint64_t pos), void *ctx,
		 uint64_t *to);

void reader__free(struct reader *r);

#endif /* HEAPSNOOP_READER_H */
