/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Space-filling designs in the unit cube (random, Latin hypercube, Sobol,
 * Halton; rfx/surrogate.h describes each) and their map to the input
 * distribution by the marginals' quantiles.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "joe_kuo.h"

#define RFX__STREAM_DESIGN 0x64657369676eULL /* "design": random and LHS    */
#define RFX__STREAM_SCRAMBLE 0x736372616dULL /* "scram": Sobol scrambles     */

enum { SOBOL_BITS = 32 };

/* The 32 direction numbers V_k = m_k 2^(32-k), k = 1 .. 32, of Sobol
 * dimension j: m_1 .. m_s from Joe & Kuo, then the recurrence of the
 * primitive polynomial x^s + a_1 x^(s-1) + .. + a_(s-1) x + 1 (Bratley &
 * Fox, ACM TOMS 14, 1988):
 *   m_k = 2 a_1 m_(k-1) ^ 4 a_2 m_(k-2) ^ .. ^ 2^s m_(k-s) ^ m_(k-s). */
static void sobol_directions(size_t j, uint32_t V[SOBOL_BITS])
{
    uint64_t m[SOBOL_BITS + 1];
    if (j == 0) {
        for (int k = 1; k <= SOBOL_BITS; k++) m[k] = 1;
    } else {
        unsigned poly = JK_POLY[j];
        int s = 0;
        while ((poly >> (s + 1)) != 0) s++;
        for (int k = 1; k <= s && k <= SOBOL_BITS; k++) m[k] = JK_M[j][k - 1];
        for (int k = s + 1; k <= SOBOL_BITS; k++) {
            uint64_t v = m[k - s] ^ (m[k - s] << s);
            for (int i = 1; i < s; i++)
                if ((poly >> (s - i)) & 1u) v ^= m[k - i] << i;
            m[k] = v;
        }
    }
    for (int k = 1; k <= SOBOL_BITS; k++) V[k - 1] = (uint32_t)(m[k] << (SOBOL_BITS - k));
}

/* Parity of the set bits of x. */
static uint32_t parity32(uint32_t x)
{
    x ^= x >> 16;
    x ^= x >> 8;
    x ^= x >> 4;
    x ^= x >> 2;
    x ^= x >> 1;
    return x & 1u;
}

/* The linear matrix scramble of V (Matousek 1998): V' = L V over GF(2),
 * bits numbered from the most significant, with L lower triangular, unit
 * diagonal and random bits below it: output bit p is bit p of v plus a
 * random combination of the more significant bits. A nonsingular L maps a
 * (t, m, s)-net to one. */
static void sobol_scramble(rfx__rng *r, uint32_t V[SOBOL_BITS])
{
    uint32_t L[SOBOL_BITS];
    for (int p = 0; p < SOBOL_BITS; p++) {
        uint32_t diag = 1u << (SOBOL_BITS - 1 - p);
        uint32_t above = p == 0 ? 0u : ~((diag << 1) - 1u); /* bits more significant */
        L[p] = diag | ((uint32_t)rfx__rng_u64(r) & above);
    }
    for (int k = 0; k < SOBOL_BITS; k++) {
        uint32_t v = 0;
        for (int p = 0; p < SOBOL_BITS; p++)
            v |= parity32(L[p] & V[k]) << (SOBOL_BITS - 1 - p);
        V[k] = v;
    }
}

static rfx_status sobol_design(uint64_t seed, int scramble, rfx_mat U)
{
    const size_t n = U.rows, d = U.cols;
    if (d > JK_DIMS)
        return rfx__error(RFX_EINVAL, "design: sobol has direction numbers for d <= %d, got d = %zu",
                          JK_DIMS, d);
    if ((uint64_t)n > ((uint64_t)1 << SOBOL_BITS))
        return rfx__error(RFX_EINVAL, "design: sobol gives at most 2^%d points, got n = %zu",
                          SOBOL_BITS, n);
    for (size_t j = 0; j < d; j++) {
        uint32_t V[SOBOL_BITS], shift = 0;
        sobol_directions(j, V);
        if (scramble) {
            rfx__rng r;
            rfx__rng_init(&r, seed, RFX__STREAM_SCRAMBLE, (uint64_t)j);
            sobol_scramble(&r, V);
            shift = (uint32_t)rfx__rng_u64(&r);
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t g = (uint64_t)i ^ ((uint64_t)i >> 1); /* Gray code of i */
            uint32_t x = shift;
            for (int k = 0; g; k++, g >>= 1)
                if (g & 1u) x ^= V[k];
            U.data[i * U.stride + j] = ((double)x + 0.5) * 0x1p-32;
        }
    }
    return RFX_OK;
}

/* Latin hypercube: column j is (pi_j(i) + u_ij) / n, pi_j a uniformly
 * random permutation (Fisher-Yates from (seed, column j)). */
static rfx_status lhs_design(uint64_t seed, rfx_mat U)
{
    const size_t n = U.rows, d = U.cols;
    size_t *perm;
    RFX__TRY(rfx__alloc(n, sizeof *perm, (void **)&perm, "design: lhs permutation"));
    for (size_t j = 0; j < d; j++) {
        rfx__rng r;
        rfx__rng_init(&r, seed, RFX__STREAM_DESIGN, ((uint64_t)1 << 63) | (uint64_t)j);
        for (size_t i = 0; i < n; i++) perm[i] = i;
        rfx__rng_shuffle(&r, perm, n);
        for (size_t i = 0; i < n; i++)
            U.data[i * U.stride + j] = ((double)perm[i] + rfx__rng_uniform(&r)) / (double)n;
    }
    free(perm);
    return RFX_OK;
}

static rfx_status halton_design(uint64_t seed, int scramble, rfx_mat U)
{
    const size_t n = U.rows, d = U.cols;
    rfx__halton h;
    double *u;
    RFX__TRY(rfx__alloc(n, sizeof *u, (void **)&u, "design: halton"));
    rfx_status st = rfx__halton_init(&h, d, n);
    if (st) {
        free(u);
        return st;
    }
    for (size_t j = 0; j < d; j++) {
        rfx__halton_coord(&h, seed, scramble, j, u);
        for (size_t i = 0; i < n; i++) U.data[i * U.stride + j] = u[i];
    }
    rfx__halton_free(&h);
    free(u);
    return RFX_OK;
}

rfx_status rfx_design_sample(rfx_design_kind kind, uint64_t seed, int scramble, rfx_mat U)
{
    RFX__TRY(rfx__check_mat(U, "design: U"));
    if (U.rows == 0 || U.cols == 0)
        return rfx__error(RFX_EINVAL, "design: U is %zu x %zu, needs at least one row and column",
                          U.rows, U.cols);
    switch (kind) {
    case RFX_DESIGN_RANDOM:
        for (size_t i = 0; i < U.rows; i++) {
            rfx__rng r;
            rfx__rng_init(&r, seed, RFX__STREAM_DESIGN, (uint64_t)i);
            for (size_t j = 0; j < U.cols; j++) U.data[i * U.stride + j] = rfx__rng_uniform(&r);
        }
        return RFX_OK;
    case RFX_DESIGN_LHS: return lhs_design(seed, U);
    case RFX_DESIGN_SOBOL: return sobol_design(seed, scramble, U);
    case RFX_DESIGN_HALTON: return halton_design(seed, scramble, U);
    }
    return rfx__error(RFX_EINVAL, "design: unknown kind %d", (int)kind);
}

rfx_status rfx_marginals_quantile(const rfx_marginal *m, size_t d, rfx_cmat U, rfx_mat X)
{
    RFX__TRY(rfx_marginals_check(m, d));
    RFX__TRY(rfx__check_cmat(U, "U"));
    RFX__TRY(rfx__check_mat(X, "X"));
    if (U.cols != d || X.cols != d || X.rows != U.rows)
        return rfx__error(RFX_EDIM, "quantiles: U is %zu x %zu and X %zu x %zu, the marginals "
                          "describe %zu inputs", U.rows, U.cols, X.rows, X.cols, d);
    for (size_t i = 0; i < U.rows; i++)
        for (size_t j = 0; j < d; j++) {
            double u = U.data[i * U.stride + j];
            if (!(u > 0.0 && u < 1.0))
                return rfx__error(RFX_EINVAL, "quantiles: U(%zu, %zu) = %g is not in (0, 1)", i, j,
                                  u);
        }
    for (size_t i = 0; i < U.rows; i++)
        for (size_t j = 0; j < d; j++) {
            double u = U.data[i * U.stride + j], *x = &X.data[i * X.stride + j];
            switch (m[j].kind) {
            case RFX_MARGINAL_UNIFORM: *x = m[j].a + (m[j].b - m[j].a) * u; break;
            case RFX_MARGINAL_NORMAL: *x = m[j].a + m[j].b * rfx__norm_quantile(u); break;
            case RFX_MARGINAL_LOGNORMAL: *x = exp(m[j].a + m[j].b * rfx__norm_quantile(u)); break;
            }
        }
    return RFX_OK;
}
