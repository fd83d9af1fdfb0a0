/* SPDX-License-Identifier: MIT */
#ifndef HEAPSNOOP_VERSION
#define HEAPSNOOP_VERSION "0.1.0"
#endif
