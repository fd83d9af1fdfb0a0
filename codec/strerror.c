// SPDX-License-Identifier: MIT
/* strerror.c - text for the codec's error codes (include/heapsnoop/codec.h). */
#include "heapsnoop/codec.h"

static const char *const msgs[HS__ERR_MAX] = {
	[HS_OK] = "success",
	[HS_EDEPTH] = "more than 31 frames",
	[HS_ERANGE] = "value does not fit in 63 bits",
	[HS_ENOSPC] = "output buffer too small",
	[HS_EBASE64] = "not valid base64",
	[HS_ESHORT] = "blob shorter than 3 bytes",
	[HS_ETRAILER] = "length trailer does not match the blob length",
	[HS_ETRUNC] = "bitstream ends inside a field",
	[HS_EDELTA0] = "delta in frame 0",
	[HS_EDELTAREF] = "delta refers to a frame before frame 0",
	[HS_EOVERFLOW] = "delta takes a frame outside 0..2^63-1",
	[HS_EPADDING] = "non-zero bits or extra bytes after the record",
	[HS_ESYNTAX] = "not of the form 'size: N, 0x.. 0x..'",
	[HS_ETOOLONG] = "token longer than any valid record",
	[HS_ECONT] = "continuation token not of size 0, or short of 31 frames before the last",
	[HS_EDEPTHSUM] = "the tokens' frames do not add up to the record's depth=",
	[HS_ERECORD] = "heapsnoop record with malformed fields",
	[HS_ENODE] = "node= names no node of its process's tree record before it",
	[HS_ETREE] = "node record that does not fit its tree record (its level, the tree's count, over 1024 frames)",
};

const char *hs_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= HS__ERR_MAX || !msgs[err])
		return "unknown error";
	return msgs[err];
}
