/* SPDX-License-Identifier: MIT */
/*
 * recconv.h - tokscan conversions between `~m#` and `~b#` records.
 * recconv_decode_ops: `~m#TOKEN` (or a bare base64 line) -> `~b#size: ..`;
 * recconv_encode_ops: `~b#size: N, 0x..` -> `~m#TOKEN`. Both write nothing
 * and return a negative hs_err for a malformed record.
 */
#ifndef HEAPSNOOP_RECCONV_H
#define HEAPSNOOP_RECCONV_H

#include "tokscan.h"

extern const struct tokscan_ops recconv_decode_ops;
extern const struct tokscan_ops recconv_encode_ops;

#endif /* HEAPSNOOP_RECCONV_H */
