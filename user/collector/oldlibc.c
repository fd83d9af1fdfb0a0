// SPDX-License-Identifier: MIT
/*
 * oldlibc.c - the one symbol the preload collector takes from the C
 * library at a version newer than the oldest it supports: log(), which
 * glibc 2.29 gave a new version (GLIBC_2.29, without the SVID error
 * handling). Linked with -Wl,--wrap=log, every call goes to its first
 * version, which every glibc still exports and which computes the same
 * values for the finite positive arguments the sampler's table passes
 * (sampling.c). Why a sysroot for everything else: docs/COLLECTOR.md
 * ("Old C libraries").
 */
#if defined(__x86_64__)
__asm__(".symver hs_log_first, log@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver hs_log_first, log@GLIBC_2.17");
#endif

double hs_log_first(double x);
double __wrap_log(double x);

double __wrap_log(double x)
{
	return hs_log_first(x);
}
