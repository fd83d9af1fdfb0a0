/* SPDX-License-Identifier: MIT */
/* libexitcall.h - the sizes that libexitcall.so's malloc acts on. */
#ifndef LIBEXITCALL_H
#define LIBEXITCALL_H

#define EXITCALL_DIE 1234567
#define EXITCALL_HOLD 7654321

extern int exitcall_inside_fd, exitcall_release_fd;

#endif
