// SPDX-License-Identifier: MIT
/*
 * recustack.c - the `ustack` record: an allocation's registers and stack
 * bytes, kept for unwinding later (heapsnoop --keep-stacks, heapdecode;
 * records.h, docs/OUTPUT.md "Stack bytes kept"), written and parsed.
 *
 * The copy is coded word by word (8 bytes, little-endian as the stack
 * holds them), in the codec's spirit: a stack is mostly zeros, small
 * integers and pointers into a few places (the stack itself, the
 * program, its libraries, the heap), so each word is a LEB128 varint
 * whose low two bits say what it is:
 *
 *   v & 3 == 0   a run of v >> 2 zero words (1 or more)
 *   v & 3 == 1   a small integer: the word is v >> 2, zigzag-decoded
 *   v & 3 == 2   a near value: p = v >> 2, the word is ref[p & 7] plus
 *                p >> 3 zigzag-decoded
 *   v & 3 == 3   a literal: p = v >> 2, the word is p; p == 0: its 8
 *                bytes follow as they are
 *
 * ref[] is the last 8 words coded as near values or literals, the latest
 * first; it starts as the registers (the stack pointer, the call site,
 * the frame pointer, then the others in enum hs_ureg's order), so that a
 * saved stack pointer or a return address near the call site costs a
 * byte or two. The size's last size % 8 bytes follow as they are. Each
 * word is given its shortest form (a tie: a small integer, then a near
 * value, then a literal); the decoder takes any. The coded bytes are
 * base64 (the codec's) in data=.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "heapsnoop/codec.h"
#include "records.h"
#include "records_int.h"

#define NREF 8

/* --- the word coding ----------------------------------------------------- */

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static unsigned int varint_len(uint64_t v)
{
	unsigned int n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* A varint at [*@p, @end): 0, or -EINVAL (cut, or past 64 bits). */
static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;

		if (shift == 63 && (b & 0x7e))
			return -EINVAL;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EINVAL;
}

static void ref_push(uint64_t *ref, uint64_t w)
{
	memmove(ref + 1, ref, (NREF - 1) * sizeof(*ref));
	ref[0] = w;
}

/* The registers as ref[]'s first values: SP, the call site, FP, the rest. */
static void ref_init(uint64_t *ref, const uint64_t *regs, uint32_t nregs)
{
	uint32_t k = 0;

	memset(ref, 0, NREF * sizeof(*ref));
	if (nregs > 1)
		ref[k++] = regs[1];
	if (nregs > 0)
		ref[k++] = regs[0];
	for (uint32_t i = 2; i < nregs && k < NREF; i++)
		ref[k++] = regs[i];
}

/* 2^62: what a varint's payload after the two bits holds. */
#define PAYLOAD_END (1ULL << 62)

/*
 * The coding of @size bytes at @in into @out (at most
 * rec_ustack_code_cap(@size) bytes): its length.
 */
static size_t code_words(const uint8_t *in, uint32_t size, const uint64_t *regs,
			 uint32_t nregs, uint8_t *out)
{
	uint64_t ref[NREF];
	uint8_t *p = out;
	uint32_t nw = size / 8, zeros = 0;

	ref_init(ref, regs, nregs);
	for (uint32_t i = 0; i <= nw; i++) {
		uint64_t w = 0, best_v = 0, zz;
		unsigned int best = 99, len;
		int kind = 0;

		if (i < nw)
			memcpy(&w, in + (size_t)i * 8, 8);
		if (i < nw && !w) {
			zeros++;
			continue;
		}
		if (zeros) {
			p = put_varint(p, (uint64_t)zeros << 2);
			zeros = 0;
		}
		if (i == nw)
			break;
		zz = zigzag((int64_t)w);
		if (zz < PAYLOAD_END) {
			best_v = zz << 2 | 1;
			best = varint_len(best_v);
			kind = 1;
		}
		for (unsigned int k = 0; k < NREF; k++) {
			uint64_t d = zigzag((int64_t)(w - ref[k]));

			if (d >= PAYLOAD_END >> 3)
				continue;
			len = varint_len((d << 3 | k) << 2 | 2);
			if (len < best) {
				best = len;
				best_v = (d << 3 | k) << 2 | 2;
				kind = 2;
			}
		}
		len = w < PAYLOAD_END ? varint_len(w << 2 | 3) : 9;
		if (len < best)
			kind = 3;
		if (kind == 3 && w < PAYLOAD_END) {
			p = put_varint(p, w << 2 | 3);
		} else if (kind == 3) {
			*p++ = 3;
			memcpy(p, &w, 8);
			p += 8;
		} else {
			p = put_varint(p, best_v);
		}
		if (kind >= 2)
			ref_push(ref, w);
	}
	memcpy(p, in + (size_t)nw * 8, size % 8);
	return (size_t)(p - out) + size % 8;
}

/* The most a copy of @size bytes codes to: a literal's 9 bytes a word. */
static size_t code_cap(uint32_t size)
{
	return (size_t)size / 8 * 9 + 8;
}

/* The coding at @in (@len bytes) into @size bytes at @out: 0 or -EINVAL. */
static int decode_words(const uint8_t *in, size_t len, const uint64_t *regs, uint32_t nregs,
			uint8_t *out, uint32_t size)
{
	const uint8_t *p = in, *end = in + len;
	uint32_t nw = size / 8, i = 0;
	uint64_t ref[NREF];

	ref_init(ref, regs, nregs);
	while (i < nw) {
		uint64_t v, w, pl;

		if (get_varint(&p, end, &v))
			return -EINVAL;
		pl = v >> 2;
		switch (v & 3) {
		case 0:
			if (!pl || pl > nw - i)
				return -EINVAL;
			memset(out + (size_t)i * 8, 0, pl * 8);
			i += (uint32_t)pl;
			continue;
		case 1:
			w = (uint64_t)unzigzag(pl);
			break;
		case 2:
			w = ref[pl & 7] + (uint64_t)unzigzag(pl >> 3);
			ref_push(ref, w);
			break;
		default:
			if (!pl) {
				if (end - p < 8)
					return -EINVAL;
				memcpy(&w, p, 8);
				p += 8;
			} else {
				w = pl;
			}
			ref_push(ref, w);
			break;
		}
		memcpy(out + (size_t)i * 8, &w, 8);
		i++;
	}
	if ((size_t)(end - p) != size % 8)
		return -EINVAL;
	memcpy(out + (size_t)nw * 8, p, size % 8);
	return 0;
}

long records__ustack_coded(const uint8_t *bytes, uint32_t size, const uint64_t *regs,
			   uint32_t nregs)
{
	uint8_t *buf = malloc(code_cap(size));
	size_t n;

	if (!buf)
		return -ENOMEM;
	n = code_words(bytes, size, regs, nregs, buf);
	free(buf);
	return (long)n;
}

/* --- the record ------------------------------------------------------------ */

/* Registers an architecture's records carry (include/heapsnoop/arch.h's enum hs_ureg). */
static int arch_nregs(const char *arch)
{
	if (!strcmp(arch, "x86-64"))
		return 8;
	if (!strcmp(arch, "arm64"))
		return 13;
	return -1;
}

int rec_check_ustack(const struct record *r)
{
	const struct rec_ustack *u = &r->us;

	if (arch_nregs(u->arch) != (int)u->nregs || u->version != REC_USTACK_VERSION ||
	    u->size > REC_USTACK_MAX_SIZE || (u->size && !u->bytes) || u->skip > u->size)
		return -EINVAL;
	return 0;
}

int rec_write_ustack(FILE *out, const struct record *r)
{
	const struct rec_ustack *u = &r->us;
	size_t n, cap = code_cap(u->size), tcap;
	uint8_t *buf = malloc(cap);
	char *text = NULL;
	int ret = -EIO, k;

	if (!buf)
		return -EIO;
	n = code_words(u->bytes, u->size, u->regs, u->nregs, buf);
	tcap = (n + 2) / 3 * 4 + 1;
	text = malloc(tcap);
	if (!text || hs_base64_encode(buf, n, text, tcap) < 0)
		goto out;
	if (fprintf(out, "ustack pid=%d ptr=%#" PRIx64 " v=%u arch=%s frames=%u regs=", r->pid,
		    r->ptr, u->version, u->arch, u->frames) < 0)
		goto out;
	for (uint32_t i = 0; i < u->nregs; i++)
		if (fprintf(out, "%s0x%" PRIx64, i ? "," : "", u->regs[i]) < 0)
			goto out;
	k = fprintf(out, " size=%u want=%u skip=%u holes=0x%x data=%s\n", u->size, u->want,
		    u->skip, u->holes, text);
	ret = k < 0 ? -EIO : 0;
out:
	free(text);
	free(buf);
	return ret;
}

/* "NAME=" then a number of 32 bits (decimal, or hex with @hex) at @p: taken, or -EINVAL. */
static int field_u32(const char *p, const char *name, bool hex, uint32_t *v)
{
	size_t n = strlen(name);
	uint64_t x;
	int k;

	if (strncmp(p, name, n) || p[n] != '=')
		return -EINVAL;
	k = hex ? rec_parse_hex(p + n + 1, &x) : rec_parse_u64(p + n + 1, &x);
	if (k < 0 || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return (int)n + 1 + k;
}

/* Fields in order, each followed by one space (the last by the end of the data). */
int rec_parse_ustack(const char *p, struct record *r)
{
	struct rec_ustack *u = &r->us;
	uint64_t ptr;
	uint32_t pid;
	size_t a;
	int k, nregs;

	if ((k = field_u32(p, "pid", false, &pid)) < 0 || pid > INT32_MAX || p[k] != ' ')
		return -EINVAL;
	r->pid = (int)pid;
	p += k + 1;
	if (strncmp(p, "ptr=", 4) || (k = rec_parse_hex(p + 4, &ptr)) < 0 || p[4 + k] != ' ')
		return -EINVAL;
	r->ptr = ptr;
	p += 4 + k + 1;
	if ((k = field_u32(p, "v", false, &u->version)) < 0 || p[k] != ' ')
		return -EINVAL;
	p += k + 1;
	if (strncmp(p, "arch=", 5))
		return -EINVAL;
	p += 5;
	a = strcspn(p, " ");
	if (a >= sizeof(u->arch) || p[a] != ' ')
		return -EINVAL;
	memcpy(u->arch, p, a);
	u->arch[a] = '\0';
	p += a + 1;
	if ((k = field_u32(p, "frames", false, &u->frames)) < 0 || p[k] != ' ' ||
	    strncmp(p + k + 1, "regs=", 5))
		return -EINVAL;
	p += k + 1 + 5;
	/* An architecture not known: its registers read all the same, up to the most there can be. */
	nregs = arch_nregs(u->arch);
	for (u->nregs = 0;;) {
		if (u->nregs == REC_USTACK_MAX_REGS || (k = rec_parse_hex(p, &u->regs[u->nregs])) < 0)
			return -EINVAL;
		u->nregs++;
		p += k;
		if (*p++ != ',')
			break;
	}
	if (p[-1] != ' ' || (nregs >= 0 && u->nregs != (uint32_t)nregs))
		return -EINVAL;
	if ((k = field_u32(p, "size", false, &u->size)) < 0 || p[k] != ' ' ||
	    u->size > REC_USTACK_MAX_SIZE)
		return -EINVAL;
	p += k + 1;
	if ((k = field_u32(p, "want", false, &u->want)) < 0 || p[k] != ' ')
		return -EINVAL;
	p += k + 1;
	if ((k = field_u32(p, "skip", false, &u->skip)) < 0 || p[k] != ' ' || u->skip > u->size)
		return -EINVAL;
	p += k + 1;
	if ((k = field_u32(p, "holes", true, &u->holes)) < 0 || p[k] != ' ')
		return -EINVAL;
	p += k + 1;
	if (strncmp(p, "data=", 5))
		return -EINVAL;
	p += 5;
	u->data = p;
	while (hs_is_base64_char((unsigned char)*p))
		p++;
	u->data_len = (size_t)(p - u->data);
	/* The end of the line (a newline kept, or trailing blanks: not). */
	if (*p && *p != '\n')
		return -EINVAL;
	return 0;
}

int records__ustack_bytes(const struct record *r, uint8_t *out, size_t cap)
{
	const struct rec_ustack *u = &r->us;
	size_t bcap = u->data_len / 4 * 3 + 3;
	uint8_t *buf;
	int n, err;

	if (r->type != REC_USTACK || u->size > cap)
		return -ENOSPC;
	/* More text than the longest coding of the size: not one (refused before any allocation). */
	if (bcap > code_cap(u->size) + 3)
		return -EINVAL;
	buf = malloc(bcap);
	if (!buf)
		return -ENOMEM;
	n = hs_base64_decode(u->data, u->data_len, buf, bcap);
	err = n < 0 ? -EINVAL : decode_words(buf, (size_t)n, u->regs, u->nregs, out, u->size);
	free(buf);
	return err;
}
