/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exact sums of doubles: a long fixed-point accumulator (Kulisch's idea)
 * of 32-bit digits held in 64-bit words, from 2^-1088 (below the smallest
 * subnormal) to past 2^1024. A double adds into at most three digits,
 * without rounding, so the sum of any set of doubles, in any order and cut
 * into any parts (whose accumulators add word by word), is the same
 * integer, and rfx__xsum_value turns it into the same double. The
 * distributed fits use it for the column sums of the standardisation, so
 * the scaler does not depend on how the rows are split among processes.
 */
#include "internal.h"

#include <string.h>

#define LOW_EXP (-1088) /* digit 0 weighs 2^-1088 */
#define MASK32 0xffffffffull
/* adds before the words may carry 2^31 each: normalise well before */
#define ADDS_BEFORE_CARRY (1u << 30)

void rfx__xsum_init(rfx__xsum *a) { memset(a, 0, sizeof *a); }

void rfx__xsum_normalize(rfx__xsum *a)
{
    for (size_t k = 0; k + 1 < RFX__XSUM_DIGITS; k++) {
        const int64_t low = (int64_t)((uint64_t)a->digit[k] & MASK32);
        const int64_t carry = (a->digit[k] - low) / 4294967296LL; /* exact: a multiple */
        a->digit[k] = low;
        a->digit[k + 1] += carry;
    }
    a->adds = 0;
}

void rfx__xsum_add(rfx__xsum *a, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    const int neg = (int)(bits >> 63);
    const int e = (int)((bits >> 52) & 0x7ff);
    uint64_t m = bits & ((1ull << 52) - 1);
    if (e == 0x7ff) return; /* not finite: the callers checked */
    if (e) m |= 1ull << 52;
    if (m == 0) return;
    /* x = m 2^(q), q = e - 1075 (normal) or -1074 (subnormal) */
    const int q = (e ? e : 1) - 1075, p = q - LOW_EXP;
    const size_t k = (size_t)p / 32;
    const unsigned sh = (unsigned)p % 32;
    const uint64_t d0 = (m & (MASK32 >> sh)) << sh;
    const uint64_t rest = sh ? m >> (32 - sh) : m >> 32;
    const int64_t v0 = (int64_t)d0, v1 = (int64_t)(rest & MASK32), v2 = (int64_t)(rest >> 32);
    if (neg) {
        a->digit[k] -= v0;
        a->digit[k + 1] -= v1;
        a->digit[k + 2] -= v2;
    } else {
        a->digit[k] += v0;
        a->digit[k + 1] += v1;
        a->digit[k + 2] += v2;
    }
    if (++a->adds >= ADDS_BEFORE_CARRY) rfx__xsum_normalize(a);
}

double rfx__xsum_value(rfx__xsum *a)
{
    rfx__xsum_normalize(a);
    /* normalised, a negative sum has a negative top word over digits in
     * [0, 2^32) (two's complement, in effect): take its magnitude */
    rfx__xsum m = *a;
    const int neg = m.digit[RFX__XSUM_DIGITS - 1] < 0;
    if (neg) {
        for (size_t k = 0; k < RFX__XSUM_DIGITS; k++) m.digit[k] = -m.digit[k];
        rfx__xsum_normalize(&m);
    }
    /* from the top digit down: the same digits give the same double */
    double v = 0;
    for (size_t k = RFX__XSUM_DIGITS; k-- > 0;)
        if (m.digit[k]) v += ldexp((double)m.digit[k], (int)(32 * k) + LOW_EXP);
    return neg ? -v : v;
}
