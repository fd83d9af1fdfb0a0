// SPDX-License-Identifier: MIT
/*
 * speedscope.c - heapdecode --speedscope (see speedscope.h). The format
 * is speedscope's src/lib/file-format-spec.ts: {"$schema", "shared":
 * {"frames": [{"name", "file"}]}, "profiles": [{"type": "sampled",
 * "name", "unit", "startValue", "endValue", "samples": [[frame index,
 * root first]], "weights": [...]}], "name", "activeProfileIndex",
 * "exporter"}. A frame is a function in a source file (its lines differ
 * from call to call: they would split one function into many boxes); an
 * interpreter's frame is a line of a function ("line" too), as --folded
 * names it: the line that holds the memory is what it is there to show.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "framefmt.h"
#include "htab.h"
#include "records.h"
#include "speedscope.h"
#include "text.h"
#include "version.h"

/* The shared frames: "name\1file\1line" keys (line "" for none), by first use. */
struct frames {
	struct htab *ids;	/* key -> index + 1 */
	char **keys;
	size_t n, cap;
};

static bool key_equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	(void)ctx;
	return !strcmp((const char *)stored, (const char *)probe);
}

static uint64_t key_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* The index of frame @name in @file (NULL: none) at @line (0: any); -ENOMEM. */
static long frame_id(struct frames *fr, const char *name, int name_len, const char *file,
		     int line)
{
	char *key, num[16] = "";
	void *v;
	uint64_t h;

	if (line)
		snprintf(num, sizeof(num), "%d", line);
	if (asprintf(&key, "%.*s\1%s\1%s", name_len, name, file ? file : "", num) < 0)
		return -ENOMEM;
	h = key_hash(key);
	v = htab__find(fr->ids, h, (uintptr_t)key);
	if (v) {
		free(key);
		return (long)(uintptr_t)v - 1;
	}
	if (fr->n == fr->cap) {
		size_t cap = fr->cap ? 2 * fr->cap : 256;
		char **k = realloc(fr->keys, cap * sizeof(*k));

		if (!k) {
			free(key);
			return -ENOMEM;
		}
		fr->keys = k;
		fr->cap = cap;
	}
	fr->keys[fr->n] = key;
	if (htab__add(fr->ids, h, (uintptr_t)key, (void *)(uintptr_t)(fr->n + 1)))
		return -ENOMEM;	/* kept in keys: freed with them */
	return (long)fr->n++;
}

/*
 * Stack @s as frame indices, root first, into @idx (room for every
 * frame and its inlined functions, and a mark); returns how many, or
 * -ENOMEM.
 */
static int stack_frames(struct hd_model *m, struct frames *fr, const struct stack *s, long *idx)
{
	const char *cut = framefmt__cut(s->flags);
	char name[64];
	int n = 0;

	/* An incomplete stack's root is its mark, as in --folded. */
	if (*cut || !s->depth) {
		snprintf(name, sizeof(name), "[%s]", s->depth ? cut : "no stack");
		if ((idx[n++] = frame_id(fr, name, (int)strlen(name), NULL, 0)) < 0)
			return -ENOMEM;
	}
	for (uint32_t k = s->depth; k-- > 0;) {
		struct sym_frame f;
		char unnamed[128];

		hd_model__lookup(m, s->pid, s->frames[k], &f);
		if (f.status == SYM_OK && f.kind) {
			idx[n] = frame_id(fr, f.func, (int)strlen(f.func), f.file, f.line);
		} else if (f.status == SYM_OK) {
			idx[n] = frame_id(fr, f.func, (int)strlen(f.func), f.file, 0);
		} else {
			hd_model__frame_name(&f, s->frames[k], unnamed, sizeof(unnamed));
			idx[n] = frame_id(fr, unnamed, (int)strlen(unnamed), NULL, 0);
		}
		if (idx[n++] < 0)
			return -ENOMEM;
		/* Then what was inlined into it, outermost first. */
		for (int i = f.status == SYM_OK ? f.ninline : 0; i-- > 0;) {
			const char *fn = f.inl[i].func ? f.inl[i].func : "??";

			if ((idx[n++] = frame_id(fr, fn, (int)strlen(fn),
						 f.inl[i].file, 0)) < 0)
				return -ENOMEM;
		}
	}
	return n;
}

#define MAX_FRAMES (1 + REC_MAX_DEPTH * (SYM_MAX_INLINE + 1))

/*
 * One sampled profile: the stacks of @v (with their frame indices in
 * @idx/@nidx) of process @pid whose value has sign @sign (1, or -1 for
 * what shrank: written as its size).
 */
static void write_profile(struct hd_model *m, bool counts, FILE *out, struct stack **v,
			  long *const *idx, const int *nidx, size_t n, uint32_t pid, int sign,
			  bool first)
{
	bool diff = hd_model__is_diff(m);
	uint64_t total = 0;
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		int64_t w = (int64_t)(counts ? v[i]->live_count : v[i]->live_bytes) * sign;

		if (v[i]->pid == pid && w > 0)
			total += (uint64_t)w;
	}
	fprintf(out, "%s\n  {\"type\": \"sampled\", \"name\": \"pid %u%s%s\", \"unit\": \"%s\", "
		"\"startValue\": 0, \"endValue\": %" PRIu64 ", \"samples\": [", first ? "" : ",",
		pid, diff ? (sign > 0 ? ": grew" : ": shrank") : "", counts ? " (allocations)" : "",
		counts ? "none" : "bytes", total);
	for (size_t i = 0; i < n; i++) {
		int64_t w = (int64_t)(counts ? v[i]->live_count : v[i]->live_bytes) * sign;

		if (v[i]->pid != pid || w <= 0)
			continue;
		fprintf(out, "%s[", any ? ", " : "");
		for (int k = 0; k < nidx[i]; k++)
			fprintf(out, "%s%ld", k ? ", " : "", idx[i][k]);
		fputc(']', out);
		any = true;
	}
	fputs("], \"weights\": [", out);
	any = false;
	for (size_t i = 0; i < n; i++) {
		int64_t w = (int64_t)(counts ? v[i]->live_count : v[i]->live_bytes) * sign;

		if (v[i]->pid == pid && w > 0) {
			fprintf(out, "%s%" PRId64, any ? ", " : "", w);
			any = true;
		}
	}
	fputs("]}", out);
}

static void write_frames(const struct frames *fr, FILE *out)
{
	fputs("{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
	      " \"shared\": {\"frames\": [", out);
	for (size_t i = 0; i < fr->n; i++) {
		char *sep = strchr(fr->keys[i], '\1'), *lsep = strchr(sep + 1, '\1');

		*sep = *lsep = '\0';
		fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
		json_string(out, fr->keys[i]);
		if (sep[1]) {
			fputs(", \"file\": ", out);
			json_string(out, sep + 1);
		}
		if (lsep[1])
			fprintf(out, ", \"line\": %s", lsep + 1);
		fputc('}', out);
		*sep = *lsep = '\1';
	}
	fputs("]},\n \"profiles\": [", out);
}

/* Each process's profile (two with a baseline), by pid: @v is sorted so. */
static void write_profiles(struct hd_model *m, bool counts, FILE *out, struct stack **v,
			   long *const *idx, const int *nidx, size_t n)
{
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && v[end]->pid == v[i]->pid; end++)
			;
		write_profile(m, counts, out, v + i, idx + i, nidx + i, end - i, v[i]->pid, 1, !i);
		if (hd_model__is_diff(m))
			write_profile(m, counts, out, v + i, idx + i, nidx + i, end - i, v[i]->pid, -1,
				      false);
	}
}

/* By pid, then biggest (signed: with --base) first. */
static int by_pid_bytes(const void *a, const void *b)
{
	const struct stack *x = *(struct stack *const *)a, *y = *(struct stack *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->live_bytes != y->live_bytes)
		return (int64_t)x->live_bytes < (int64_t)y->live_bytes ? 1 : -1;
	return 0;
}

int hd_speedscope__write(struct hd_model *m, bool counts, const char *name, FILE *out)
{
	struct frames fr = { .ids = htab__new(256, key_equal, NULL) };
	size_t n = 0;
	struct stack **v = fr.ids ? hd_model__live_stacks(m, &n) : NULL;
	long **idx = v ? calloc(n ? n : 1, sizeof(*idx)) : NULL;
	long *buf = malloc(MAX_FRAMES * sizeof(*buf));
	int *nidx = idx && buf ? calloc(n ? n : 1, sizeof(*nidx)) : NULL;
	int err = nidx ? 0 : -ENOMEM;

	if (v)
		qsort(v, n, sizeof(*v), by_pid_bytes);
	/* Each stack's frames, symbolized once. */
	for (size_t i = 0; !err && i < n; i++) {
		nidx[i] = stack_frames(m, &fr, v[i], buf);
		idx[i] = nidx[i] >= 0 ? malloc((size_t)(nidx[i] ? nidx[i] : 1) * sizeof(*buf)) : NULL;
		if (!idx[i])
			err = -ENOMEM;
		else
			memcpy(idx[i], buf, (size_t)nidx[i] * sizeof(*buf));
	}
	if (!err) {
		write_frames(&fr, out);
		write_profiles(m, counts, out, v, idx, nidx, n);
		fputs("],\n \"name\": ", out);
		json_string(out, name);
		fprintf(out, ", \"activeProfileIndex\": 0, \"exporter\": \"heapdecode@%s\"}\n",
			HEAPSNOOP_VERSION);
	}
	for (size_t i = 0; i < fr.n; i++)
		free(fr.keys[i]);
	free(fr.keys);
	htab__free(fr.ids);
	free(v);
	for (size_t i = 0; idx && i < n; i++)
		free(idx[i]);
	free(idx);
	free(nidx);
	free(buf);
	return err;
}
