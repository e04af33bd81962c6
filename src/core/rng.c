/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counter-based random numbers: Philox4x64-10 (Salmon, Moraes, Dror & Shaw,
 * "Parallel random numbers: as easy as 1, 2, 3", SC'11) from Random123.
 * A stream is keyed by (seed, stream) and counts (substream, i): the j-th
 * feature's numbers depend only on (seed, j), never on thread or block order.
 */
#include "internal.h"

#include <math.h>
#include <Random123/philox.h>

void rfx__rng_init(rfx__rng *r, uint64_t seed, uint64_t stream, uint64_t substream)
{
    r->key[0] = seed;
    r->key[1] = stream;
    r->ctr[0] = substream;
    r->ctr[1] = 0;
    r->ctr[2] = 0;
    r->ctr[3] = 0;
    r->pos = 4;
    r->have_normal = 0;
    r->normal = 0.0;
}

uint64_t rfx__rng_u64(rfx__rng *r)
{
    if (r->pos == 4) {
        philox4x64_ctr_t c = {{r->ctr[0], r->ctr[1], r->ctr[2], r->ctr[3]}};
        philox4x64_key_t k = {{r->key[0], r->key[1]}};
        philox4x64_ctr_t out = philox4x64(c, k);
        for (int i = 0; i < 4; i++) r->buf[i] = out.v[i];
        r->ctr[1]++;
        r->pos = 0;
    }
    return r->buf[r->pos++];
}

double rfx__rng_uniform(rfx__rng *r)
{
    /* the top 53 bits, offset by half a step: in (0, 1), never 0 or 1 */
    return ((double)(rfx__rng_u64(r) >> 11) + 0.5) * 0x1.0p-53;
}

double rfx__rng_normal(rfx__rng *r)
{
    if (r->have_normal) {
        r->have_normal = 0;
        return r->normal;
    }
    double u1 = rfx__rng_uniform(r), u2 = rfx__rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1));
    double t = 6.283185307179586476925 * u2;
    r->normal = rad * sin(t);
    r->have_normal = 1;
    return rad * cos(t);
}

/* Marsaglia & Tsang, "A simple method for generating gamma variables",
 * ACM TOMS 26(3), 2000; shape < 1 by the boost Gamma(a) = Gamma(a+1) U^(1/a). */
double rfx__rng_gamma(rfx__rng *r, double shape)
{
    if (shape < 1.0) {
        double g = rfx__rng_gamma(r, shape + 1.0);
        return g * pow(rfx__rng_uniform(r), 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = rfx__rng_normal(r);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        double u = rfx__rng_uniform(r);
        if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
        if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v;
    }
}

void rfx__rng_shuffle(rfx__rng *r, size_t *perm, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t t = (size_t)(rfx__rng_uniform(r) * (double)i);
        if (t >= i) t = i - 1;
        size_t tmp = perm[i - 1];
        perm[i - 1] = perm[t];
        perm[t] = tmp;
    }
}
