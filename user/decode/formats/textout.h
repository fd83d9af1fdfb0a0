/* SPDX-License-Identifier: MIT */
/*
 * textout.h - what heapdecode's text reports write alike (--report,
 * --stats, --growth, -s): a number, signed when a baseline was subtracted
 * ("+5", "-3"); a frame as framefmt.h shows it, named through the model;
 * the line that says a sampled dump's values are estimates.
 */
#ifndef HEAPDECODE_TEXTOUT_H
#define HEAPDECODE_TEXTOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

/*
 * @v as text in @buf (32 bytes): a count or bytes, or with a baseline
 * subtracted a signed difference. Returns @buf.
 */
const char *hd_textout__num(const struct hd_model *m, uint64_t v, char *buf);

/*
 * @v bytes as text in @buf (32 bytes): "512 bytes", "4.0 KiB" (text.h's
 * text_size), signed with a baseline subtracted.
 */
const char *hd_textout__size(const struct hd_model *m, uint64_t v, char *buf);

/*
 * The same with the exact bytes after it where they are not shown,
 * "10.5 KiB (10752 bytes)", as a total line gives them; @buf 64 bytes.
 */
const char *hd_textout__size_exact(const struct hd_model *m, uint64_t v, char *buf);

/* The model's naming of a frame as holders.h's holders_lookup_fn (@ctx the model). */
bool hd_textout__lookup(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f);

/*
 * Stack @s's frames as stackview.h shows them (@full: every frame), each
 * line after @indent.
 */
void hd_textout__stack(struct hd_model *m, const char *indent, const struct stack *s,
		       bool full, FILE *out);

/* Frame @k of a stack of @pid, return address @addr, each line after @indent. */
void hd_textout__frame(struct hd_model *m, const char *indent, uint32_t pid, uint32_t k,
		       uint64_t addr, FILE *out);

/*
 * Why @m's live values are estimates, a phrase ("a sample by bytes, one
 * per 4096 bytes on average", "12 of its blocks recorded as samples while
 * the tracer shed load (shed=)", or both) into @buf of @size bytes; false
 * (@buf "") when they are not.
 */
bool hd_textout__why_estimated(const struct hd_model *m, char *buf, size_t size);

/*
 * With estimated live values, the line that says so, why, and the
 * total's margin; else nothing.
 */
void hd_textout__estimated(const struct hd_model *m, FILE *out);

/* " (estimated, +-N bytes at 95%)" into @buf (64 bytes), or "" when exact. */
const char *hd_textout__est_mark(const struct hd_model *m, char *buf);

#endif /* HEAPDECODE_TEXTOUT_H */
