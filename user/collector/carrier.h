/* SPDX-License-Identifier: MIT */
/*
 * carrier.h - how the preload collector forgets the memfd or private file
 * heapsnoop --preload's embedded copy came through (carrier.c).
 */
#ifndef HEAPSNOOP_COLLECTOR_CARRIER_H
#define HEAPSNOOP_COLLECTOR_CARRIER_H

/*
 * Close HEAPSNOOP_PRELOAD_FD's memfd, or remove HEAPSNOOP_PRELOAD_TMP's
 * file and its directory, and blank its name in LD_PRELOAD and both
 * variables' values in place. Nothing when neither is set. Called once,
 * from the collector's constructor (no allocation: the strings are the
 * environment's own).
 */
void carrier__forget(void);

#endif /* HEAPSNOOP_COLLECTOR_CARRIER_H */
