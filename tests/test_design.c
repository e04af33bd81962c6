/* SPDX-License-Identifier: BSD-3-Clause */
/* Space-filling designs: the net and strata properties that define them,
 * closed-form first points, the quantile map, and every error path. (The
 * Sobol and Halton sequences are also compared with scipy.stats.qmc in
 * python/tests/test_design.py.) */
#include "rfx.h"
#include "testlib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double *design(rfx_design_kind kind, size_t n, size_t d, uint64_t seed, int scramble)
{
    double *U = malloc(n * d * sizeof *U);
    CHECK_OK(rfx_design_sample(kind, seed, scramble, rfx_mat_of(U, n, d)));
    return U;
}

/* Every stratum [k/n, (k+1)/n) of column j holds exactly one of the n rows. */
static int one_per_stratum(const double *U, size_t n, size_t d, size_t j)
{
    int ok = 1;
    unsigned char *seen = calloc(n, 1);
    for (size_t i = 0; i < n; i++) {
        double u = U[i * d + j];
        if (!(u > 0.0 && u < 1.0)) ok = 0;
        size_t k = (size_t)(u * (double)n);
        if (k >= n || seen[k]++) ok = 0;
    }
    free(seen);
    return ok;
}

/* The first 2^m points of columns a, b form a (0, m, 2)-net: every box of
 * 2^-e x 2^-(m-e) holds one point. */
static int net_2d(const double *U, size_t m, size_t d, size_t a, size_t b)
{
    size_t n = (size_t)1 << m;
    int ok = 1;
    unsigned char *seen = malloc(n);
    for (size_t e = 0; e <= m; e++) {
        memset(seen, 0, n);
        for (size_t i = 0; i < n; i++) {
            size_t ka = (size_t)(U[i * d + a] * (double)((size_t)1 << e));
            size_t kb = (size_t)(U[i * d + b] * (double)((size_t)1 << (m - e)));
            if (seen[(ka << (m - e)) | kb]++) ok = 0;
        }
    }
    free(seen);
    return ok;
}

static void test_sobol(void)
{
    const size_t d = 64, m = 10, n = (size_t)1 << m;
    const double half_cell = 0x1p-33;
    double *U = design(RFX_DESIGN_SOBOL, n, d, 0, 0);
    /* the first points: the origin's cell, then 1/2 in every coordinate
     * (m_1 = 1 for all), then x_2 = V_1 ^ V_2: 3/4 in dimension 0 (m_2 = 1)
     * and 1/4 in dimension 1 (m_2 = 3) */
    for (size_t j = 0; j < d; j++) {
        CHECK_NEAR(U[j], half_cell, 0.0);
        CHECK_NEAR(U[d + j], 0.5 + half_cell, 0.0);
    }
    CHECK_NEAR(U[2 * d + 0], 0.75 + half_cell, 0.0);
    CHECK_NEAR(U[2 * d + 1], 0.25 + half_cell, 0.0);
    for (size_t j = 0; j < d; j++) CHECK_MSG(one_per_stratum(U, n, d, j), "sobol column %zu", j);
    CHECK(net_2d(U, m, d, 0, 1));
    free(U);

    /* scrambled: still a net, other seeds other points, rows independent of n */
    double *S = design(RFX_DESIGN_SOBOL, n, d, 42, 1), *S2 = design(RFX_DESIGN_SOBOL, n, d, 43, 1);
    double *Sh = design(RFX_DESIGN_SOBOL, 100, d, 42, 1);
    for (size_t j = 0; j < d; j++) CHECK_MSG(one_per_stratum(S, n, d, j), "scrambled column %zu", j);
    CHECK(net_2d(S, m, d, 0, 1));
    CHECK(memcmp(S, S2, n * d * sizeof *S) != 0);
    CHECK(memcmp(S, Sh, 100 * d * sizeof *S) == 0);
    free(S);
    free(S2);
    free(Sh);

    /* the last dimension of the table, and the first beyond it */
    double *W = design(RFX_DESIGN_SOBOL, 256, 1024, 1, 1);
    CHECK(one_per_stratum(W, 256, 1024, 1023));
    free(W);
    double X[1025];
    CHECK_STATUS(rfx_design_sample(RFX_DESIGN_SOBOL, 0, 0, rfx_mat_of(X, 1, 1025)), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "1024") != NULL);
}

/* Radical inverse of n in base p, the unscrambled Halton coordinate. */
static double radical_inverse(size_t n, unsigned p)
{
    double v = 0.0, f = 1.0 / p;
    for (; n; n /= p, f /= p) v += (double)(n % p) * f;
    return v;
}

static void test_halton(void)
{
    const size_t n = 500, d = 6;
    const unsigned primes[6] = {2, 3, 5, 7, 11, 13};
    double *U = design(RFX_DESIGN_HALTON, n, d, 0, 0);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) CHECK_NEAR(U[i * d + j], radical_inverse(i + 1, primes[j]), 1e-15);
    free(U);
    /* scrambled: base-2 column keeps one point per dyadic stratum of 2^k points */
    double *S = design(RFX_DESIGN_HALTON, 512, d, 9, 1);
    CHECK(one_per_stratum(S, 512, d, 0));
    free(S);
}

static void test_lhs_random(void)
{
    const size_t n = 1000, d = 7;
    double *L = design(RFX_DESIGN_LHS, n, d, 5, 0), *L2 = design(RFX_DESIGN_LHS, n, d, 5, 1);
    for (size_t j = 0; j < d; j++) CHECK_MSG(one_per_stratum(L, n, d, j), "lhs column %zu", j);
    CHECK(memcmp(L, L2, n * d * sizeof *L) == 0); /* scramble: no effect */
    free(L);
    free(L2);
    /* random: uniform moments within 5 standard errors, rows independent of n */
    double *R = design(RFX_DESIGN_RANDOM, n, d, 5, 0), *Rh = design(RFX_DESIGN_RANDOM, 10, d, 5, 0);
    for (size_t j = 0; j < d; j++) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++) s += R[i * d + j];
        CHECK_NEAR(s / (double)n, 0.5, 5.0 * sqrt(1.0 / 12.0 / (double)n));
    }
    CHECK(memcmp(R, Rh, 10 * d * sizeof *R) == 0);
    free(R);
    free(Rh);
}

/* Integration error of prod_j (1 + (x_j - 1/2)) (exactly 1 over the cube):
 * the low-discrepancy designs beat independent points by far. */
static double integration_error(rfx_design_kind kind, size_t n, size_t d)
{
    double *U = design(kind, n, d, 17, 1), s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double p = 1.0;
        for (size_t j = 0; j < d; j++) p *= 0.5 + U[i * d + j];
        s += p;
    }
    free(U);
    return fabs(s / (double)n - 1.0);
}

static void test_integration(void)
{
    const size_t n = 4096, d = 5;
    double e_random = integration_error(RFX_DESIGN_RANDOM, n, d);
    double e_sobol = integration_error(RFX_DESIGN_SOBOL, n, d);
    double e_halton = integration_error(RFX_DESIGN_HALTON, n, d);
    printf("integration error n = %zu: random %.2e, sobol %.2e, halton %.2e\n", n, e_random,
           e_sobol, e_halton);
    /* the QMC rate ~ (log n)^d / n against the MC rate ~ 0.3 / sqrt(n) */
    CHECK(e_sobol < 5e-4);
    CHECK(e_halton < 1e-3);
}

static void test_quantiles(void)
{
    const rfx_marginal m[3] = {rfx_marginal_uniform(-2.0, 6.0), rfx_marginal_normal(1.0, 3.0),
                               rfx_marginal_lognormal(0.5, 2.0)};
    double U[2 * 3] = {0.25, 0.975, 0.5, 0.5, 0.5, 0.025}, X[2 * 3];
    CHECK_OK(rfx_marginals_quantile(m, 3, rfx_cmat_of(U, 2, 3), rfx_mat_of(X, 2, 3)));
    CHECK_NEAR(X[0], 0.0, 1e-15);
    CHECK_NEAR(X[1], 1.0 + 3.0 * 1.959963984540054, 1e-12);
    CHECK_NEAR(X[2], exp(0.5), 1e-14);
    CHECK_NEAR(X[3], 2.0, 1e-15);
    CHECK_NEAR(X[4], 1.0, 1e-14);
    CHECK_NEAR(X[5], exp(0.5 - 2.0 * 1.959963984540054), 1e-12);
    /* in place */
    CHECK_OK(rfx_marginals_quantile(m, 3, rfx_cmat_of(U, 2, 3), rfx_mat_of(U, 2, 3)));
    CHECK(memcmp(U, X, sizeof X) == 0);
    double bad[3] = {0.5, 1.0, 0.5};
    CHECK_STATUS(rfx_marginals_quantile(m, 3, rfx_cmat_of(bad, 1, 3), rfx_mat_of(X, 1, 3)), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "U(0, 1)") != NULL);
    bad[1] = NAN;
    CHECK_STATUS(rfx_marginals_quantile(m, 3, rfx_cmat_of(bad, 1, 3), rfx_mat_of(X, 1, 3)), RFX_EINVAL);
    CHECK_STATUS(rfx_marginals_quantile(m, 3, rfx_cmat_of(U, 2, 3), rfx_mat_of(X, 1, 3)), RFX_EDIM);
}

static void test_names_and_errors(void)
{
    const char *names[4] = {"random", "lhs", "sobol", "halton"};
    for (int k = 0; k < 4; k++) {
        rfx_design_kind kind;
        CHECK(strcmp(rfx_design_name((rfx_design_kind)k), names[k]) == 0);
        CHECK_OK(rfx_design_from_name(names[k], &kind));
        CHECK((int)kind == k);
    }
    rfx_design_kind kind;
    CHECK_STATUS(rfx_design_from_name("grid", &kind), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "unknown design 'grid'") != NULL);
    double X[4];
    CHECK_STATUS(rfx_design_sample(RFX_DESIGN_LHS, 0, 0, rfx_mat_of(X, 0, 4)), RFX_EINVAL);
    CHECK_STATUS(rfx_design_sample((rfx_design_kind)9, 0, 0, rfx_mat_of(X, 1, 4)), RFX_EINVAL);
    CHECK_STATUS(rfx_design_sample(RFX_DESIGN_SOBOL, 0, 0, (rfx_mat){NULL, 1, 4, 4}), RFX_EINVAL);
}

int main(void)
{
    RFX_TEST_RUN(test_sobol);
    RFX_TEST_RUN(test_halton);
    RFX_TEST_RUN(test_lhs_random);
    RFX_TEST_RUN(test_integration);
    RFX_TEST_RUN(test_quantiles);
    RFX_TEST_RUN(test_names_and_errors);
    return rfx_test_finish("test_design");
}
