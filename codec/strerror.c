// SPDX-License-Identifier: MIT
/*
 * strerror.c - text for the codec's error codes (include/heapsnoop/codec.h)
 * and, below HS_ERR_BASE, the C library's for errno values: one error space.
 */
#include <string.h>

#include "heapsnoop/codec.h"

#define MSG(code) [(code) - HS_ERR_BASE]

static const char *const msgs[HS__ERR_MAX - HS_ERR_BASE] = {
	MSG(HS_EDEPTH) = "more than 31 frames",
	MSG(HS_ERANGE) = "value does not fit in 63 bits",
	MSG(HS_ENOSPC) = "output buffer too small",
	MSG(HS_EBASE64) = "not valid base64",
	MSG(HS_ESHORT) = "blob shorter than 3 bytes",
	MSG(HS_ETRAILER) = "length trailer does not match the blob length",
	MSG(HS_ETRUNC) = "bitstream ends inside a field",
	MSG(HS_EDELTA0) = "delta in frame 0",
	MSG(HS_EDELTAREF) = "delta refers to a frame before frame 0",
	MSG(HS_EOVERFLOW) = "delta takes a frame outside 0..2^63-1",
	MSG(HS_EPADDING) = "non-zero bits or extra bytes after the record",
	MSG(HS_ESYNTAX) = "not of the form 'size: N, 0x.. 0x..'",
	MSG(HS_ETOOLONG) = "token longer than any valid record",
	MSG(HS_ECONT) = "continuation token not of size 0, or short of 31 frames before the last",
	MSG(HS_EDEPTHSUM) = "the tokens' frames do not add up to the record's depth=",
	MSG(HS_ERECORD) = "heapsnoop record with malformed fields",
	MSG(HS_ENODE) = "node= names no node of its process's tree record before it",
	MSG(HS_ETREE) = "node record that does not fit its tree record (its level, the tree's count, over 1024 frames)",
};

const char *hs_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == 0)
		return "success";
	if (err < HS_ERR_BASE)
		return strerror(err);
	if (err >= HS__ERR_MAX || !msgs[err - HS_ERR_BASE])
		return "unknown error";
	return msgs[err - HS_ERR_BASE];
}
