/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tests/helpers.h - what every test, benchmark and example program and the
 * rfx tool share: a monotonic clock and a small seeded generator
 * (splitmix64, Steele et al. 2014) of uniforms and normals (the tool's
 * built-in data sets). Header-only, so that the benchmarks and the tool use
 * it without the test harness. Not part of the library: the library draws
 * its random numbers from Philox streams of a seed.
 */
#ifndef RFX_TEST_HELPERS_H
#define RFX_TEST_HELPERS_H

#include <math.h>
#include <time.h>

/* Wall-clock seconds on the monotonic clock. */
static inline double rfx_helper_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The next 64 random bits of the state s. */
static inline unsigned long long rfx_helper_bits(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double rfx_helper_uniform(unsigned long long *s)
{
    return (double)(rfx_helper_bits(s) >> 11) * 0x1.0p-53;
}

/* Uniform in (0, 1): never 0, so log() of it is finite. */
static inline double rfx_helper_uniform_open(unsigned long long *s)
{
    return ((double)(rfx_helper_bits(s) >> 11) + 0.5) * 0x1.0p-53;
}

/* Standard normal by Box-Muller from two uniforms. */
static inline double rfx_helper_normal(unsigned long long *s)
{
    double u = rfx_helper_uniform_open(s), v = rfx_helper_uniform_open(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

#endif
