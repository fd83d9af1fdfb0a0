/* SPDX-License-Identifier: MIT */
/*
 * massif.h - heapdecode --massif: the heap over time of one process (the
 * one with the highest peak) as a valgrind massif file, for ms_print and
 * massif-visualizer: a snapshot per `sample` record, and at the peak a
 * detailed snapshot whose tree holds each stack's bytes at the peak
 * (exact: heapsnoop's at-peak values), callers under callees as massif
 * writes them. Format: valgrind's massif/ms_print sources (heap_tree
 * lines "nCHILDREN: BYTES ADDR: FUNCTION (FILE:LINE)", one space a level).
 */
#ifndef HEAPSNOOP_MASSIF_H
#define HEAPSNOOP_MASSIF_H

#include <stdio.h>

#include "model/model.h"

/* Write it to @out. Returns 0, -ENOENT (no whole-run records), -ENOMEM, -EIO. */
int hd_massif__write(struct hd_model *m, FILE *out);

#endif /* HEAPSNOOP_MASSIF_H */
