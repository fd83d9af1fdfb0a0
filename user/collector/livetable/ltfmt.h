/* SPDX-License-Identifier: MIT */
/*
 * ltfmt.h - the record lines a dump of a live table is made of, written
 * with async-signal-safe code into an lt_out (livedump.h): the bytes
 * records__write() (user/common/records/, the format's home) writes for
 * the same struct record, which tests/collector/test_livetable.c checks
 * line for line. records/ cannot serve where the collector dumps
 * itself (in _exit, in a fatal signal's handler: no stdio there).
 */
#ifndef HEAPSNOOP_COLLECTOR_LTFMT_H
#define HEAPSNOOP_COLLECTOR_LTFMT_H

#include "heapsnoop/livedump.h"
#include "records.h"

/*
 * @r as one line into @o: REC_DUMP, REC_MAP, REC_LIVE, REC_END_DUMP,
 * REC_EXIT, REC_END_EXIT (the records a dump or an exit section holds).
 * Returns 0, or -EINVAL for another type (nothing written).
 */
int ltfmt__record(struct lt_out *o, const struct record *r);

/*
 * The `frame` record of the thread boundary (livetable.h's
 * LT_CREATOR_FRAME) of process @pid into @o: records__write()'s line
 * for it (kind thread, function "[created by]", no file, line 0).
 */
void ltfmt__creator_frame(struct lt_out *o, int pid);

#endif /* HEAPSNOOP_COLLECTOR_LTFMT_H */
