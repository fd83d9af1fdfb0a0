/* SPDX-License-Identifier: MIT */
/*
 * tokscan.h - a streaming filter that copies text and replaces each
 * "<lead-in><token>" in it (`~m#...` or `~b#...`) by a conversion of the
 * token, in constant memory whatever the line length.
 *
 * A token is the longest run of ops->is_tok_char characters after the lead-in,
 * at most ops->max_len of them. A token that does not convert is copied
 * unchanged and reported on stderr with its file and line number.
 */
#ifndef HEAPSNOOP_TOKSCAN_H
#define HEAPSNOOP_TOKSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct tokscan_ops {
	const char *leadin;		/* exactly 3 characters, e.g. "~m#" */
	const char *what;		/* for messages, e.g. "~m# token" */
	int (*is_tok_char)(int c);
	size_t max_len;			/* longest token worth converting */
	/*
	 * Write the replacement of tok[0..len) to @out. Returns how many of
	 * the @len characters it replaced (the rest are copied after it), or a
	 * negative hs_err, in which case it must have written nothing.
	 */
	int (*convert)(void *ctx, const char *tok, size_t len, FILE *out);
	bool bare_lines;		/* a line that is only a token counts */
};

struct tokscan;

/*
 * Output goes to @out; with @report, each malformed token is said on
 * standard error (msg.h) with its input's name and line.
 * Returns NULL on allocation failure (errno set).
 */
struct tokscan *tokscan__new(const struct tokscan_ops *ops, void *ctx, FILE *out, bool report);
void tokscan__free(struct tokscan *ts);
/* Start a new input: resets the line count and names it in messages. */
void tokscan__begin(struct tokscan *ts, const char *name);
/* Feed @len bytes of the current input. */
void tokscan__feed(struct tokscan *ts, const char *buf, size_t len);
/* End of the current input (a last line without '\n' is finished). */
void tokscan__end(struct tokscan *ts);
/* Tokens converted and tokens left unchanged as malformed, all inputs. */
unsigned long tokscan__converted(const struct tokscan *ts);
unsigned long tokscan__malformed(const struct tokscan *ts);

#endif /* HEAPSNOOP_TOKSCAN_H */
