/* SPDX-License-Identifier: MIT */
/*
 * textout.h - what heapdecode's text reports write alike (--report,
 * --stats, --growth, -s): a number, signed when a baseline was subtracted
 * ("+5", "-3"); a frame as framefmt.h shows it, named through the model;
 * the line that says a sampled dump's values are estimates.
 */
#ifndef HEAPDECODE_TEXTOUT_H
#define HEAPDECODE_TEXTOUT_H

#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

/*
 * @v as text in @buf (32 bytes): a count or bytes, or with a baseline
 * subtracted a signed difference. Returns @buf.
 */
const char *hd_textout__num(const struct hd_model *m, uint64_t v, char *buf);

/* Frame @k of a stack of @pid, return address @addr, each line after @indent. */
void hd_textout__frame(struct hd_model *m, const char *indent, uint32_t pid, uint32_t k,
		       uint64_t addr, FILE *out);

/* With a sampled dump, the line that says the values are estimates; else nothing. */
void hd_textout__estimated(const struct hd_model *m, FILE *out);

#endif /* HEAPDECODE_TEXTOUT_H */
