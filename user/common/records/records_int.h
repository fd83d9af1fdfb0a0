/* SPDX-License-Identifier: MIT */
/*
 * records_int.h - what the record lines' three files share (records.c:
 * the table by type; rectoken.c: a stack's tokens and the live record;
 * rectext.c: the frame and jit records; rectree.c: the tree and node
 * records, a live or stack record's node=, numbers read and written by
 * hand; recustack.c: the ustack record). Each writer writes its record's
 * fields after "heapsnoop: " and returns 0 or -EIO; each parser reads them
 * from just past "heapsnoop: KEYWORD " into @r and returns 0 or -EINVAL;
 * each check says whether @r's fields fit the grammar (0, -EINVAL) before
 * anything is written. Not for use outside user/common/records/.
 */
#ifndef HEAPSNOOP_RECORDS_INT_H
#define HEAPSNOOP_RECORDS_INT_H

#include <stdint.h>
#include <stdio.h>

#include "records.h"

/* A decimal number of 32 bits at @p, digits only: the characters taken, or -EINVAL. */
int rec_parse_u32(const char *p, uint32_t *v);

/* " cut=WORD[,WORD]" for @cut's REC_CUT_* bits, nothing for 0. */
int rec_write_cut(FILE *out, uint32_t cut);
/* "cut=WORD[,WORD] " at @p into *@cut: the characters taken (0: none), or -EINVAL. */
int rec_parse_cut(const char *p, uint32_t *cut);
/* A record's token run: as many tokens as its depth= needs. */
int rec_check_tokens(const struct record *r);
/* " depth=N" (when deeper than one token), the tokens, the newline. */
int rec_write_tokens(FILE *out, const struct record *r);
/* "[depth=N ]~m#A[ ~m#B...]" at @p into @r. */
int rec_parse_tokens(const char *p, struct record *r);

int rec_write_live(FILE *out, const struct record *r);
int rec_parse_live(const char *p, struct record *r);

/* A decimal number of 64 bits, digits only; "0x" and hex digits: the characters taken, or -EINVAL. */
int rec_parse_u64(const char *p, uint64_t *v);
int rec_parse_hex(const char *p, uint64_t *v);

int rec_check_tree(const struct record *r);
int rec_write_tree(FILE *out, const struct record *r);
int rec_parse_tree(const char *p, struct record *r);
int rec_check_node(const struct record *r);
int rec_write_node(FILE *out, const struct record *r);
int rec_parse_node(const char *p, struct record *r);
/* " size=N node=ID" (live) or " node=ID" (stack), the newline; and read back. */
int rec_write_ref(FILE *out, const struct record *r);
int rec_parse_ref(const char *p, struct record *r);

int rec_check_frame(const struct record *r);
int rec_write_frame(FILE *out, const struct record *r);
int rec_parse_frame(const char *p, struct record *r);
int rec_check_jit(const struct record *r);
int rec_write_jit(FILE *out, const struct record *r);
int rec_parse_jit(const char *p, struct record *r);

int rec_check_ustack(const struct record *r);
int rec_write_ustack(FILE *out, const struct record *r);
int rec_parse_ustack(const char *p, struct record *r);

#endif
