/* SPDX-License-Identifier: MIT */
/*
 * teststop.h - a test build's stops (built with -DHS_TEST_STOPS into
 * build/tests/libheapsnoop_preload_stops.so, never shipped):
 * HEAPSNOOP_TEST_STOP=POINT:NTH stops the thread at the NTH pass of POINT
 * for ever, as if preempted there, after saying "ready PID" on standard
 * output, so that tests/collector/test_death.sh kills the process exactly
 * between two of the collector's stores:
 *   1 an entry's fields written, its seq not yet (an allocation)
 *   2 a realloc's new entry published with its link, the old one live
 *   3 the old one freed, the link not yet cleared
 *   4 a free's entry freed, the block not yet given back
 *   5 a fork child with its table, before its hello to heapsnoop
 */
#ifndef HEAPSNOOP_COLLECTOR_TESTSTOP_H
#define HEAPSNOOP_COLLECTOR_TESTSTOP_H

#ifdef HS_TEST_STOPS
void test_stop(int point);
void test_stop__init(void);
#define TEST_STOP(point) test_stop(point)
#else
#define TEST_STOP(point) do { } while (0)
static inline void test_stop__init(void)
{
}
#endif

#endif /* HEAPSNOOP_COLLECTOR_TESTSTOP_H */
