/* SPDX-License-Identifier: BSD-3-Clause */
/* Polynomial chaos: orthonormality by Gauss quadrature (nodes and weights
 * from textbook formulas, not from the library's recurrence), exact
 * recovery of polynomials, Sobol indices against the closed forms of the
 * Ishigami and Sobol G functions, LARS support recovery, leave-one-out
 * against brute-force refits, degree selection, determinism across thread
 * counts, and every error path. */
#include "internal.h"
#include "rfx/pce.h"
#include "rfx/surrogate.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

static rfx_marginal uni(double a, double b)
{
    rfx_marginal m;
    m.kind = RFX_MARGINAL_UNIFORM;
    m.a = a;
    m.b = b;
    return m;
}

static rfx_marginal nrm(double mu, double s)
{
    rfx_marginal m;
    m.kind = RFX_MARGINAL_NORMAL;
    m.a = mu;
    m.b = s;
    return m;
}

/* n x d draws from the marginals */
static double *sample(rfx_test_rng *r, const rfx_marginal *mg, size_t n, size_t d)
{
    double *X = malloc(n * d * sizeof *X);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++)
            X[i * d + j] = mg[j].kind == RFX_MARGINAL_UNIFORM
                               ? mg[j].a + (mg[j].b - mg[j].a) * rfx_test_uniform(r)
                               : mg[j].a + mg[j].b * rfx_test_normal(r);
    return X;
}

/* ---- independent polynomial formulas ------------------------------------ */

static double binom(int n, int k)
{
    double c = 1;
    for (int i = 1; i <= k; i++) c = c * (n - k + i) / i;
    return c;
}

static double fact(int n)
{
    double f = 1;
    for (int i = 2; i <= n; i++) f *= i;
    return f;
}

/* Legendre P_n by its explicit sum: 2^-n sum_k (-1)^k C(n,k) C(2n-2k,n) t^(n-2k) */
static double legendre_sum(int n, double t)
{
    double s = 0;
    for (int k = 0; 2 * k <= n; k++)
        s += (k % 2 ? -1 : 1) * binom(n, k) * binom(2 * n - 2 * k, n) * pow(t, n - 2 * k);
    return s / pow(2, n);
}

/* probabilists' Hermite by its explicit sum: n! sum_m (-1)^m t^(n-2m) / (m! (n-2m)! 2^m) */
static double hermite_sum(int n, double t)
{
    double s = 0;
    for (int m = 0; 2 * m <= n; m++)
        s += (m % 2 ? -1 : 1) * pow(t, n - 2 * m) / (fact(m) * fact(n - 2 * m) * pow(2, m));
    return s * fact(n);
}

/* the orthonormal polynomial of degree n of marginal m at x, from the sums */
static double psi_ref(const rfx_marginal *m, int n, double x)
{
    if (m->kind == RFX_MARGINAL_UNIFORM) {
        double t = (2 * x - m->a - m->b) / (m->b - m->a);
        return sqrt(2.0 * n + 1) * legendre_sum(n, t);
    }
    return hermite_sum(n, (x - m->a) / m->b) / sqrt(fact(n));
}

/* Gauss-Legendre for U(-1, 1) (weights summing to 1): Newton on P_N from
 * the Chebyshev-like guesses, w = 1 / ((1 - t^2) P_N'(t)^2). */
static void gauss_legendre(int N, double *t, double *w)
{
    for (int i = 0; i < N; i++) {
        double z = cos(PI * (i + 0.75) / (N + 0.5)), dp = 0;
        for (int it = 0; it < 100; it++) {
            double p0 = 1, p1 = z;
            for (int k = 1; k < N; k++) {
                double p2 = ((2 * k + 1) * z * p1 - k * p0) / (k + 1);
                p0 = p1;
                p1 = p2;
            }
            dp = N * (z * p1 - p0) / (z * z - 1);
            double dz = p1 / dp;
            z -= dz;
            if (fabs(dz) < 1e-16) break;
        }
        t[i] = z;
        w[i] = 1.0 / ((1 - z * z) * dp * dp);
    }
}

/* Gauss-Hermite for N(0, 1): nodes = eigenvalues of the Jacobi matrix
 * (off-diagonal sqrt(k)), polished by Newton on He_N; weights
 * N! / (N He_{N-1}(t))^2. */
static void gauss_hermite(int N, double *t, double *w)
{
    double *J = calloc((size_t)N * N, sizeof *J);
    for (int k = 1; k < N; k++) J[k * N + k - 1] = J[(k - 1) * N + k] = sqrt((double)k);
    CHECK_OK(rfx__eig_sym(J, (size_t)N, t, 1, "gauss-hermite"));
    free(J);
    for (int i = 0; i < N; i++) {
        double z = t[i], hm1 = 0;
        for (int it = 0; it < 20; it++) {
            double h0 = 1, h1 = z;
            for (int k = 1; k < N; k++) {
                double h2 = z * h1 - k * h0;
                h0 = h1;
                h1 = h2;
            }
            hm1 = h0;
            double dz = h1 / (N * h0);
            z -= dz;
            if (fabs(dz) < 1e-15 * (1 + fabs(z))) break;
        }
        double h0 = 1, h1 = z;
        for (int k = 1; k < N - 1; k++) {
            double h2 = z * h1 - k * h0;
            h0 = h1;
            h1 = h2;
        }
        hm1 = N > 1 ? h1 : 1;
        t[i] = z;
        w[i] = fact(N) / ((double)N * N * hm1 * hm1);
    }
}

/* <psi_a, psi_b> = delta_ab to 1e-12 for a, b <= 20 under four marginals,
 * and the library's psi agrees with the explicit sums at low degree. */
static void test_orthonormality(void)
{
    enum { P = 20, N = 24 };
    double t[N], w[N], psi[N][P + 1];
    rfx_marginal ms[4] = {uni(-1, 1), uni(2, 5), nrm(0, 1), nrm(1, 3)};
    for (int im = 0; im < 4; im++) {
        const rfx_marginal *m = &ms[im];
        if (m->kind == RFX_MARGINAL_UNIFORM)
            gauss_legendre(N, t, w);
        else
            gauss_hermite(N, t, w);
        double wsum = 0;
        for (int i = 0; i < N; i++) {
            double x = m->kind == RFX_MARGINAL_UNIFORM ? (m->a + m->b) / 2 + (m->b - m->a) / 2 * t[i]
                                                       : m->a + m->b * t[i];
            CHECK_OK(rfx_pce_basis_1d(m, P, x, psi[i]));
            wsum += w[i];
            for (int k = 0; k <= 6; k++) {
                double ref = psi_ref(m, k, x);
                CHECK_NEAR(psi[i][k], ref, 1e-12 * fmax(1, fabs(ref)));
            }
        }
        CHECK_NEAR(wsum, 1.0, 1e-13);
        double worst = 0;
        for (int a = 0; a <= P; a++)
            for (int b = 0; b <= a; b++) {
                double s = 0;
                for (int i = 0; i < N; i++) s += w[i] * psi[i][a] * psi[i][b];
                worst = fmax(worst, fabs(s - (a == b)));
            }
        CHECK_MSG(worst <= 1e-12, "marginal %d: max |<psi_a, psi_b> - delta| = %.3g", im, worst);
    }
}

/* ---- exact recovery ------------------------------------------------------ */

/* a deterministic "random" coefficient for a multi-index */
static double coef_of(const unsigned *a, size_t d)
{
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < d; i++) h = (h ^ a[i]) * 1099511628211ULL;
    rfx_test_rng r = {h};
    return 2 * rfx_test_uniform(&r) - 1;
}

static double poly_value(const rfx_marginal *mg, size_t d, const unsigned *alphas, size_t P,
                         const double *x)
{
    double s = 0;
    for (size_t k = 0; k < P; k++) {
        double v = coef_of(alphas + k * d, d);
        for (size_t i = 0; i < d; i++) v *= psi_ref(&mg[i], (int)alphas[k * d + i], x[i]);
        s += v;
    }
    return s;
}

/* every multi-index of total degree <= p in d = 3, graded */
static size_t all_indices(unsigned p, unsigned *out)
{
    size_t P = 0;
    for (unsigned k = 0; k <= p; k++)
        for (unsigned a = k + 1; a-- > 0;)
            for (unsigned b = k - a + 1; b-- > 0;) {
                out[P * 3] = a;
                out[P * 3 + 1] = b;
                out[P * 3 + 2] = k - a - b;
                P++;
            }
    return P;
}

/* A random polynomial of total degree 4 in d = 3 (mixed marginals) is
 * recovered exactly by a degree-4 PCE: coefficients to 1e-10, predictions
 * at new points to 1e-10; the terms come in graded order. */
static void test_exact_polynomial(void)
{
    const size_t d = 3, n = 120, nt = 50;
    rfx_marginal mg[3] = {uni(-1, 2), nrm(0.5, 2), uni(0, 1)};
    unsigned truth[35 * 3];
    size_t P = all_indices(4, truth);
    CHECK(P == 35);
    rfx_test_rng r = {11};
    double *X = sample(&r, mg, n, d), *Xt = sample(&r, mg, nt, d);
    double *y = malloc(n * sizeof *y), *yt = malloc(nt * sizeof *yt), *yp = malloc(nt * sizeof *yp);
    for (size_t i = 0; i < n; i++) y[i] = poly_value(mg, d, truth, P, X + i * d);
    for (size_t i = 0; i < nt; i++) yt[i] = poly_value(mg, d, truth, P, Xt + i * d);

    for (int method = 0; method < 2; method++) {
        rfx_pce_params p = rfx_pce_params_default();
        p.marginals = mg;
        p.degree = 4;
        p.method = method ? RFX_PCE_METHOD_LARS : RFX_PCE_METHOD_LSQ;
        rfx_pce *pce = NULL;
        CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &pce));
        if (!pce) continue;
        CHECK(rfx_pce_n_terms(pce) == P);
        double worst = 0;
        for (size_t k = 0; k < rfx_pce_n_terms(pce); k++) {
            unsigned a[3];
            double c;
            CHECK_OK(rfx_pce_term(pce, k, &c, a));
            if (method == 0) CHECK(memcmp(a, truth + 3 * k, sizeof a) == 0);
            worst = fmax(worst, fabs(c - coef_of(a, d)));
        }
        CHECK_MSG(worst <= 1e-10, "method %d: max coefficient error %.3g", method, worst);
        CHECK_OK(rfx_pce_predict(pce, rfx_cmat_of(Xt, nt, d), yp));
        worst = 0;
        for (size_t i = 0; i < nt; i++) worst = fmax(worst, fabs(yp[i] - yt[i]) / fmax(1, fabs(yt[i])));
        CHECK_MSG(worst <= 1e-10, "method %d: max prediction error %.3g", method, worst);
        rfx_pce_info info;
        CHECK_OK(rfx_pce_get_info(pce, &info));
        CHECK(info.dim == 3 && info.degree == 4 && info.n_terms == P && info.n_candidates == P);
        CHECK(info.n_train == n);
        CHECK(info.loo_relative < 1e-20);
        /* moments from the coefficients */
        double mean = 0, var = 0, m2, v2;
        for (size_t k = 0; k < P; k++) {
            double c = coef_of(truth + 3 * k, d);
            if (k == 0)
                mean = c;
            else
                var += c * c;
        }
        CHECK_OK(rfx_pce_moments(pce, &m2, &v2));
        CHECK_NEAR(m2, mean, 1e-10);
        CHECK_NEAR(v2, var, 1e-10);
        CHECK_NEAR(info.mean, mean, 1e-10);
        rfx_pce_free(pce);
    }
    /* the same terms through rfx_pce_create evaluate the same polynomial */
    double coefs[35];
    for (size_t k = 0; k < P; k++) coefs[k] = coef_of(truth + 3 * k, d);
    rfx_pce *c = NULL;
    CHECK_OK(rfx_pce_create(d, mg, P, truth, coefs, &c));
    CHECK_OK(rfx_pce_predict(c, rfx_cmat_of(Xt, nt, d), yp));
    for (size_t i = 0; i < nt; i++) CHECK_NEAR(yp[i], yt[i], 1e-11 * fmax(1, fabs(yt[i])));
    /* a strided view predicts the same */
    double *Xs = malloc(nt * 5 * sizeof *Xs), *ys = malloc(nt * sizeof *ys);
    for (size_t i = 0; i < nt; i++)
        for (size_t j = 0; j < 5; j++) Xs[i * 5 + j] = j < 3 ? Xt[i * 3 + j] : NAN;
    rfx_cmat V = {Xs, nt, 3, 5};
    CHECK_OK(rfx_pce_predict(c, V, ys));
    CHECK(memcmp(ys, yp, nt * sizeof *ys) == 0);
    rfx_pce_info info;
    CHECK_OK(rfx_pce_get_info(c, &info));
    CHECK(info.n_train == 0 && isnan(info.loo_mse) && info.degree == 4);
    rfx_pce_free(c);
    free(Xs);
    free(ys);
    free(X);
    free(Xt);
    free(y);
    free(yt);
    free(yp);
}

/* ---- Sobol indices ------------------------------------------------------- */

static double ishigami(const double *x)
{
    const double a = 7, b = 0.1;
    double s = sin(x[1]);
    return sin(x[0]) + a * s * s + b * pow(x[2], 4) * sin(x[0]);
}

/* Ishigami (a = 7, b = 0.1, x ~ U(-pi, pi)^3): with
 * V = a^2/8 + b pi^4/5 + b^2 pi^8/18 + 1/2, V1 = (1 + b pi^4/5)^2 / 2,
 * V2 = a^2/8, V13 = b^2 pi^8 (1/18 - 1/50), a degree-12 LARS PCE on 1500
 * points gives every first and total index to 1e-2 (in fact ~1e-4). */
static void test_ishigami(void)
{
    /* the second-order indices of this fit are off by 1.7e-6 at most
     * (S_13; S_12 and S_23 by 1e-10), as are the first-order ones: the
     * truncation error of degree 12 (LARS keeps the same terms on every
     * instruction-set path; rounding moves the indices by ~1e-12). 1e-5
     * leaves room for another BLAS, and a sum that lost any of the main
     * terms of S_13, (1|3|5, 0, 2|4), whose shares are 2e-3 to 0.14 of
     * the variance, would fail it */
    const double ISHIGAMI_S2_TOL = 1e-5;
    const double a = 7, b = 0.1, pi4 = pow(PI, 4), pi8 = pow(PI, 8);
    double V = a * a / 8 + b * pi4 / 5 + b * b * pi8 / 18 + 0.5;
    double V1 = 0.5 * pow(1 + b * pi4 / 5, 2), V2 = a * a / 8, V13 = b * b * pi8 * (1.0 / 18 - 1.0 / 50);
    double S[3] = {V1 / V, V2 / V, 0}, ST[3] = {(V1 + V13) / V, V2 / V, V13 / V};
    CHECK_NEAR(S[0], 0.3139, 1e-4);
    CHECK_NEAR(ST[2], 0.2437, 1e-4);

    const size_t n = 1500, d = 3;
    rfx_marginal mg[3] = {uni(-PI, PI), uni(-PI, PI), uni(-PI, PI)};
    rfx_test_rng r = {2024};
    double *X = sample(&r, mg, n, d), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = ishigami(X + i * d);
    rfx_pce_params p = rfx_pce_params_default();
    p.marginals = mg;
    p.degree = 12;
    p.method = RFX_PCE_METHOD_LARS;
    rfx_pce *pce = NULL;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &pce));
    if (pce) {
        double first[3], total[3], mean, var, err = 0;
        CHECK_OK(rfx_pce_sobol(pce, first, total));
        CHECK_OK(rfx_pce_moments(pce, &mean, &var));
        for (int i = 0; i < 3; i++) {
            CHECK_NEAR(first[i], S[i], 1e-2);
            CHECK_NEAR(total[i], ST[i], 1e-2);
            err = fmax(err, fmax(fabs(first[i] - S[i]), fabs(total[i] - ST[i])));
        }
        CHECK_NEAR(mean, a / 2, 1e-2);
        CHECK_NEAR(var, V, 1e-2 * V);
        /* second order: S_13 = V13 / V, S_12 = S_23 = 0 */
        double s2[9], ex2[9] = {S[0], 0, V13 / V, 0, S[1], 0, V13 / V, 0, S[2]}, err2 = 0;
        CHECK_OK(rfx_pce_sobol_second(pce, s2));
        for (int i = 0; i < 9; i++) err2 = fmax(err2, fabs(s2[i] - ex2[i]));
        CHECK_MSG(err2 <= ISHIGAMI_S2_TOL, "max |S_ij error| %.2e", err2);
        for (int i = 0; i < 3; i++) CHECK(s2[i * 3 + i] == first[i]);
        printf("ishigami: S_13 = %.6f (exact %.6f), S_12 = %.1e, S_23 = %.1e, max |S_ij "
               "error| = %.2e\n",
               s2[2], V13 / V, s2[1], s2[5], err2);
        rfx_pce_info info;
        CHECK_OK(rfx_pce_get_info(pce, &info));
        printf("ishigami: n = %zu, degree 12 LARS: %zu of %zu terms, max |Sobol error| = %.2e, "
               "mean error %.2e, variance rel. error %.2e, corrected LOO %.2e\n",
               n, info.n_terms, info.n_candidates, err, fabs(mean - a / 2), fabs(var - V) / V,
               info.loo_corrected);
        rfx_pce_free(pce);
    }
    free(X);
    free(y);
}

/* Sobol' G function g(x) = prod_i (|4 x_i - 2| + a_i) / (1 + a_i) on U(0,1)^20
 * with a = (1, 2, 5, 10, 20, 100, 5000, ...): V_i = 1 / (3 (1 + a_i)^2),
 * S_i = V_i / (prod_j (1 + V_j) - 1), ST_i = V_i prod_{j != i} (1 + V_j) /
 * (prod_j (1 + V_j) - 1). The kink at x_i = 1/2 makes the Legendre
 * coefficients decay slowly (like k^-3/2), so a high degree is needed and
 * only a sparse basis affords it: degree 12 with q = 0.4 (1381 candidates),
 * LARS on 1000 points. Errors of 3e-3..6e-3 over seeds; 1e-3 takes about
 * 2000 points, degree 16, q = 0.5 and pairs only (about 15 s). */
static void test_gfunction(void)
{
    enum { D = 20 };
    const size_t n = 1000;
    double av[D], Vi[D], prodv = 1, S[D], ST[D];
    const double head[6] = {1, 2, 5, 10, 20, 100};
    for (int i = 0; i < D; i++) {
        av[i] = i < 6 ? head[i] : 5000;
        Vi[i] = 1.0 / (3 * (1 + av[i]) * (1 + av[i]));
        prodv *= 1 + Vi[i];
    }
    for (int i = 0; i < D; i++) {
        S[i] = Vi[i] / (prodv - 1);
        ST[i] = Vi[i] * prodv / (1 + Vi[i]) / (prodv - 1);
    }
    rfx_marginal mg[D];
    for (int i = 0; i < D; i++) mg[i] = uni(0, 1);
    rfx_test_rng r = {77};
    double *X = sample(&r, mg, n, D), *y = malloc(n * sizeof *y);
    for (size_t k = 0; k < n; k++) {
        double g = 1;
        for (int i = 0; i < D; i++) g *= (fabs(4 * X[k * D + i] - 2) + av[i]) / (1 + av[i]);
        y[k] = g;
    }
    rfx_pce_params p = rfx_pce_params_default();
    p.marginals = mg;
    p.degree = 12;
    p.q_norm = 0.4;
    p.method = RFX_PCE_METHOD_LARS;
    rfx_pce *pce = NULL;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, D), y, &pce));
    if (pce) {
        double first[D], total[D], err = 0;
        CHECK_OK(rfx_pce_sobol(pce, first, total));
        for (int i = 0; i < D; i++) {
            CHECK_NEAR(first[i], S[i], 1e-2);
            CHECK_NEAR(total[i], ST[i], 1e-2);
            err = fmax(err, fmax(fabs(first[i] - S[i]), fabs(total[i] - ST[i])));
        }
        rfx_pce_info info;
        CHECK_OK(rfx_pce_get_info(pce, &info));
        printf("G function d = 20: n = %zu, degree 12, q 0.4, LARS: %zu of %zu terms, "
               "S_1..4 = %.4f %.4f %.4f %.4f (exact %.4f %.4f %.4f %.4f), max |S_i, ST_i error| "
               "= %.2e, corrected LOO %.2e\n",
               n, info.n_terms, info.n_candidates, first[0], first[1], first[2], first[3], S[0],
               S[1], S[2], S[3], err, info.loo_corrected);
        rfx_pce_free(pce);
    }
    free(X);
    free(y);
}

/* ---- LARS ---------------------------------------------------------------- */

/* A sparse polynomial (6 of the 126 degree-4 terms in d = 5) plus noise of
 * standard deviation 0.01: LARS keeps every true term, with coefficients
 * within 0.01, and few others. */
static void test_lars_support(void)
{
    enum { D = 5, T = 6 };
    const size_t n = 150;
    const unsigned terms[T][D] = {{0, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {0, 2, 0, 0, 0},
                                  {1, 0, 1, 0, 0}, {0, 0, 0, 3, 1}, {0, 0, 0, 0, 2}};
    const double c[T] = {1.5, 2.0, -1.0, 0.8, 0.5, -0.6};
    rfx_marginal mg[D] = {uni(0, 1), nrm(0, 1), uni(-2, 2), uni(0, 3), nrm(1, 0.5)};
    rfx_test_rng r = {5};
    double *X = sample(&r, mg, n, D), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < T; k++) {
            double v = c[k];
            for (int j = 0; j < D; j++) v *= psi_ref(&mg[j], (int)terms[k][j], X[i * D + j]);
            s += v;
        }
        y[i] = s + 0.01 * rfx_test_normal(&r);
    }
    rfx_pce_params p = rfx_pce_params_default();
    p.marginals = mg;
    p.degree = 4;
    p.method = RFX_PCE_METHOD_LARS;
    rfx_pce *pce = NULL;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, D), y, &pce));
    if (pce) {
        size_t nt = rfx_pce_n_terms(pce);
        int found[T] = {0};
        for (size_t k = 0; k < nt; k++) {
            unsigned a[D];
            double ck;
            CHECK_OK(rfx_pce_term(pce, k, &ck, a));
            for (int t = 0; t < T; t++)
                if (memcmp(a, terms[t], sizeof a) == 0) {
                    found[t] = 1;
                    CHECK_NEAR(ck, c[t], 1e-2);
                }
        }
        for (int t = 0; t < T; t++) CHECK_MSG(found[t], "true term %d not selected", t);
        CHECK_MSG(nt <= 30, "LARS kept %zu terms of 126", nt);
        rfx_pce_info info;
        CHECK_OK(rfx_pce_get_info(pce, &info));
        CHECK(info.n_candidates == 126 && info.method == RFX_PCE_METHOD_LARS);
        /* the LOO error is about the noise variance */
        CHECK(info.loo_mse > 0.5e-4 && info.loo_mse < 3e-4);
        rfx_pce_free(pce);
    }
    free(X);
    free(y);
}

/* ---- leave-one-out ------------------------------------------------------- */

/* The hat-matrix LOO error equals n refits without one point each (1e-8),
 * for least squares on a total-degree basis and on the basis LARS chose;
 * the corrected error is relative * n / (n - P) * (1 + tr((Psi^T Psi)^-1)). */
static void test_loo_bruteforce(void)
{
    const size_t n = 30, d = 2;
    rfx_marginal mg[2] = {uni(-1, 1), nrm(0, 1)};
    rfx_test_rng r = {9};
    double *X = sample(&r, mg, n, d), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = exp(0.7 * X[i * d]) * cos(X[i * d + 1]) + 0.1 * rfx_test_normal(&r);
    double *Xm = malloc(n * d * sizeof *Xm), *ym = malloc(n * sizeof *ym);

    for (int variant = 0; variant < 2; variant++) {
        rfx_pce_params p = rfx_pce_params_default();
        p.marginals = mg;
        p.degree = variant == 0 ? 3 : 5;
        p.method = variant == 0 ? RFX_PCE_METHOD_LSQ : RFX_PCE_METHOD_LARS;
        rfx_pce *pce = NULL;
        CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &pce));
        if (!pce) continue;
        rfx_pce_info info;
        CHECK_OK(rfx_pce_get_info(pce, &info));
        /* refit on the terms of the model, leaving each point out */
        size_t P = info.n_terms;
        unsigned *basis = malloc(P * d * sizeof *basis);
        double *coef = malloc(P * sizeof *coef);
        for (size_t k = 0; k < P; k++) CHECK_OK(rfx_pce_term(pce, k, &coef[k], basis + k * d));
        rfx_pce_params pb = rfx_pce_params_default();
        pb.marginals = mg;
        pb.basis = basis;
        pb.basis_terms = P;
        rfx_pce *full = NULL;
        CHECK_OK(rfx_pce_fit(&pb, rfx_cmat_of(X, n, d), y, &full));
        for (size_t k = 0; full && k < P; k++) {
            double ck;
            CHECK_OK(rfx_pce_term(full, k, &ck, NULL));
            CHECK_NEAR(ck, coef[k], 1e-12 * fmax(1, fabs(coef[k])));
        }
        double sse = 0;
        for (size_t i = 0; i < n; i++) {
            size_t m = 0;
            for (size_t j = 0; j < n; j++)
                if (j != i) {
                    memcpy(Xm + m * d, X + j * d, d * sizeof *X);
                    ym[m++] = y[j];
                }
            rfx_pce *loo = NULL;
            double pred = NAN;
            CHECK_OK(rfx_pce_fit(&pb, rfx_cmat_of(Xm, n - 1, d), ym, &loo));
            CHECK_OK(rfx_pce_predict(loo, rfx_cmat_of(X + i * d, 1, d), &pred));
            sse += (y[i] - pred) * (y[i] - pred);
            rfx_pce_free(loo);
        }
        double mse = sse / (double)n;
        CHECK_NEAR(info.loo_mse, mse, 1e-8 * mse);
        /* relative and corrected forms */
        double ybar = 0, yv = 0;
        for (size_t i = 0; i < n; i++) ybar += y[i] / (double)n;
        for (size_t i = 0; i < n; i++) yv += (y[i] - ybar) * (y[i] - ybar) / (double)(n - 1);
        CHECK_NEAR(info.loo_relative, mse / yv, 1e-8 * mse / yv);
        /* tr((Psi^T Psi)^-1) by Cholesky of the Gram matrix */
        double *G = calloc(P * P, sizeof *G), *Inv = calloc(P * P, sizeof *Inv);
        for (size_t i = 0; i < n; i++) {
            double psi[2][8], row[64];
            for (size_t j = 0; j < d; j++) CHECK_OK(rfx_pce_basis_1d(&mg[j], 7, X[i * d + j], psi[j]));
            for (size_t k = 0; k < P; k++) row[k] = psi[0][basis[k * d]] * psi[1][basis[k * d + 1]];
            for (size_t k = 0; k < P; k++)
                for (size_t l = 0; l < P; l++) G[k * P + l] += row[k] * row[l];
        }
        for (size_t k = 0; k < P; k++) Inv[k * P + k] = 1;
        CHECK_OK(rfx__chol(G, P, 1, "gram"));
        CHECK_OK(rfx__chol_solve(G, P, Inv, P));
        double tr = 0;
        for (size_t k = 0; k < P; k++) tr += Inv[k * P + k];
        double corr = mse / yv * (double)n / (double)(n - P) * (1 + tr);
        CHECK_NEAR(info.loo_corrected, corr, 1e-8 * corr);
        free(G);
        free(Inv);
        free(basis);
        free(coef);
        rfx_pce_free(full);
        rfx_pce_free(pce);
    }
    free(X);
    free(y);
    free(Xm);
    free(ym);
}

/* ---- degree selection, bases, determinism -------------------------------- */

/* Data from a cubic plus a little noise: the corrected LOO error picks
 * degree 3 from 1..7 for least squares. LARS on a larger candidate set may
 * keep a spurious term that lowers its (selection-biased) LOO error a
 * little, so for LARS the sweep must return the best of the single-degree
 * fits, holding the 7 true terms. */
static void test_degree_selection(void)
{
    const size_t n = 200, d = 2;
    rfx_marginal mg[2] = {uni(0, 1), uni(0, 1)};
    const unsigned true_terms[7][2] = {{0, 0}, {1, 0}, {0, 1}, {2, 0}, {1, 1}, {0, 2}, {3, 0}};
    rfx_test_rng r = {3};
    double *X = sample(&r, mg, n, d), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        double u = X[i * d], v = X[i * d + 1];
        y[i] = 1 + 2 * u - 3 * u * v + 4 * u * u * u - v * v + 0.01 * rfx_test_normal(&r);
    }
    for (int method = 0; method < 2; method++) {
        rfx_pce_params p = rfx_pce_params_default();
        p.marginals = mg;
        p.method = method ? RFX_PCE_METHOD_LARS : RFX_PCE_METHOD_LSQ;
        double best = INFINITY;
        size_t best_deg = 0;
        for (size_t deg = 1; deg <= 7; deg++) {
            rfx_pce *one = NULL;
            rfx_pce_info info;
            p.degree = deg;
            CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &one));
            if (one && rfx_pce_get_info(one, &info) == RFX_OK && info.loo_corrected < best) {
                best = info.loo_corrected;
                best_deg = deg;
            }
            rfx_pce_free(one);
        }
        p.degree = 7;
        p.degree_min = 1;
        rfx_pce *pce = NULL;
        CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &pce));
        rfx_pce_info info;
        if (pce && rfx_pce_get_info(pce, &info) == RFX_OK) {
            CHECK_MSG(info.degree == best_deg, "method %d chose degree %zu, best single fit %zu",
                      method, info.degree, best_deg);
            CHECK_NEAR(info.loo_corrected, best, 1e-12 * best);
            if (method == 0) CHECK(info.degree == 3 && info.n_terms == 10);
            for (int t = 0; t < 7; t++) {
                int found = 0;
                for (size_t k = 0; k < info.n_terms; k++) {
                    unsigned a[2];
                    CHECK_OK(rfx_pce_term(pce, k, NULL, a));
                    found |= a[0] == true_terms[t][0] && a[1] == true_terms[t][1];
                }
                CHECK_MSG(found, "method %d: true term %d missing", method, t);
            }
        }
        rfx_pce_free(pce);
    }
    /* least squares stops at the first degree with more terms than rows */
    rfx_pce_params p = rfx_pce_params_default();
    p.marginals = mg;
    p.degree = 30;
    p.degree_min = 2;
    rfx_pce *pce = NULL;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, 40, d), y, &pce));
    rfx_pce_info info;
    if (pce && rfx_pce_get_info(pce, &info) == RFX_OK) CHECK(info.degree <= 7);
    rfx_pce_free(pce);
    free(X);
    free(y);
}

/* Hyperbolic and interaction-limited bases hold exactly the multi-indices
 * of their definition, in graded order. */
static void test_basis_sets(void)
{
    enum { D = 4 };
    const size_t n = 400;
    rfx_marginal mg[D] = {uni(0, 1), uni(0, 1), nrm(0, 1), uni(-1, 1)};
    rfx_test_rng r = {8};
    double *X = sample(&r, mg, n, D), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = sin(X[i * D]) + X[i * D + 1] * X[i * D + 2];
    const double qs[3] = {1.0, 0.6, 0.4};
    for (int iq = 0; iq < 3; iq++)
        for (size_t maxint = 0; maxint <= 2; maxint++) {
            const unsigned p = 5;
            rfx_pce_params pp = rfx_pce_params_default();
            pp.marginals = mg;
            pp.degree = p;
            pp.q_norm = qs[iq];
            pp.max_interaction = maxint;
            /* brute force: all a in [0, p]^4 */
            size_t want = 0;
            for (unsigned k = 0; k < 6 * 6 * 6 * 6; k++) {
                unsigned a[D] = {k % 6, k / 6 % 6, k / 36 % 6, k / 216};
                double s = 0;
                size_t nz = 0;
                for (int j = 0; j < D; j++) {
                    s += pow(a[j], qs[iq]);
                    nz += a[j] > 0;
                }
                if (s <= pow(p, qs[iq]) * (1 + 1e-9) && (maxint == 0 || nz <= maxint)) want++;
            }
            rfx_pce *pce = NULL;
            CHECK_OK(rfx_pce_fit(&pp, rfx_cmat_of(X, n, D), y, &pce));
            if (!pce) continue;
            CHECK_MSG(rfx_pce_n_terms(pce) == want, "q %g, maxint %zu: %zu terms, want %zu",
                      qs[iq], maxint, rfx_pce_n_terms(pce), want);
            unsigned prev[D] = {0}, prevdeg = 0;
            for (size_t k = 0; k < rfx_pce_n_terms(pce); k++) {
                unsigned a[D], deg = 0;
                double s = 0;
                size_t nz = 0;
                CHECK_OK(rfx_pce_term(pce, k, NULL, a));
                for (int j = 0; j < D; j++) {
                    deg += a[j];
                    s += pow(a[j], qs[iq]);
                    nz += a[j] > 0;
                }
                CHECK(s <= pow(p, qs[iq]) * (1 + 1e-9));
                CHECK(maxint == 0 || nz <= maxint);
                /* graded, then lexicographically decreasing within a degree */
                if (k > 0) {
                    CHECK(deg >= prevdeg);
                    if (deg == prevdeg) CHECK(memcmp(a, prev, sizeof a) != 0);
                    if (deg == prevdeg) {
                        int j = 0;
                        while (a[j] == prev[j]) j++;
                        CHECK(a[j] < prev[j]);
                    }
                }
                memcpy(prev, a, sizeof a);
                prevdeg = deg;
            }
            rfx_pce_free(pce);
        }
    free(X);
    free(y);
}

/* The same fit with 1 and 2 threads gives the same bits. */
static void test_threads(void)
{
    enum { D = 6 };
    const size_t n = 300;
    rfx_marginal mg[D];
    for (int i = 0; i < D; i++) mg[i] = i % 2 ? nrm(0, 1) : uni(-1, 1);
    rfx_test_rng r = {4};
    double *X = sample(&r, mg, n, D), *y = malloc(n * sizeof *y), *p1 = malloc(n * sizeof *p1),
           *p2 = malloc(n * sizeof *p2);
    for (size_t i = 0; i < n; i++) y[i] = exp(0.3 * X[i * D]) + X[i * D + 1] * X[i * D + 3] + 0.1 * X[i * D + 5];
    for (int method = 0; method < 2; method++) {
        rfx_pce *a = NULL, *b = NULL;
        rfx_pce_params p = rfx_pce_params_default();
        p.marginals = mg;
        p.degree = method ? 5 : 3;
        p.method = method ? RFX_PCE_METHOD_LARS : RFX_PCE_METHOD_LSQ;
        p.n_threads = 1;
        CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, D), y, &a));
        p.n_threads = 2;
        CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, D), y, &b));
        if (!a || !b) continue;
        CHECK(rfx_pce_n_terms(a) == rfx_pce_n_terms(b));
        for (size_t k = 0; k < rfx_pce_n_terms(a) && k < rfx_pce_n_terms(b); k++) {
            double ca, cb;
            unsigned aa[D], ab[D];
            CHECK_OK(rfx_pce_term(a, k, &ca, aa));
            CHECK_OK(rfx_pce_term(b, k, &cb, ab));
            CHECK(memcmp(&ca, &cb, sizeof ca) == 0 && memcmp(aa, ab, sizeof aa) == 0);
        }
        CHECK_OK(rfx_pce_predict(a, rfx_cmat_of(X, n, D), p1));
        CHECK_OK(rfx_pce_predict(b, rfx_cmat_of(X, n, D), p2));
        CHECK(memcmp(p1, p2, n * sizeof *p1) == 0);
        rfx_pce_free(a);
        rfx_pce_free(b);
    }
    free(X);
    free(y);
    free(p1);
    free(p2);
}

/* Sobol indices of an assembled expansion: hand-computed shares. */
static void test_sobol_assembled(void)
{
    rfx_marginal mg[3] = {uni(0, 1), nrm(0, 1), uni(0, 1)};
    const unsigned a[5 * 3] = {0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 1, 0, 0, 0, 3};
    const double c[5] = {5, 1, 2, 1, 0};
    rfx_pce *pce = NULL;
    CHECK_OK(rfx_pce_create(3, mg, 5, a, c, &pce));
    double first[3], total[3], mean, var;
    CHECK_OK(rfx_pce_sobol(pce, first, total));
    CHECK_OK(rfx_pce_moments(pce, &mean, &var));
    CHECK_NEAR(mean, 5, 0);
    CHECK_NEAR(var, 6, 1e-15);
    CHECK_NEAR(first[0], 1.0 / 6, 1e-15);
    CHECK_NEAR(first[1], 4.0 / 6, 1e-15);
    CHECK_NEAR(first[2], 0, 0);
    CHECK_NEAR(total[0], 2.0 / 6, 1e-15);
    CHECK_NEAR(total[1], 5.0 / 6, 1e-15);
    CHECK_NEAR(total[2], 0, 0);
    CHECK_OK(rfx_pce_sobol(pce, NULL, total));
    CHECK_OK(rfx_pce_moments(pce, NULL, NULL));
    rfx_pce_free(pce);
    /* a constant: zero indices */
    CHECK_OK(rfx_pce_create(3, mg, 1, a, c, &pce));
    CHECK_OK(rfx_pce_sobol(pce, first, total));
    CHECK(first[0] == 0 && total[1] == 0);
    double s2[9];
    for (int i = 0; i < 9; i++) s2[i] = 42;
    CHECK_OK(rfx_pce_sobol_second(pce, s2));
    for (int i = 0; i < 9; i++) CHECK(s2[i] == 0);
    rfx_pce_free(pce);
    /* no terms at all */
    CHECK_OK(rfx_pce_create(3, mg, 0, NULL, NULL, &pce));
    double yv = 1, x[3] = {0.5, 0, 0.5};
    CHECK_OK(rfx_pce_predict(pce, rfx_cmat_of(x, 1, 3), &yv));
    CHECK(yv == 0 && rfx_pce_n_terms(pce) == 0);
    rfx_pce_free(pce);
    rfx_pce_free(NULL);
}

/* Second-order indices of an assembled expansion: variance 1 + 4 + 1 + 9 +
 * 0.25 + 2.25 = 17.5; the pairs {0, 1}, {1, 2}, {0, 2} hold 1, 9 and 0.25 of
 * it, the three-input term (1, 1, 1) none of the S_ij, and the diagonal is
 * S_i: 1, 4, 0 (of 17.5). */
static void test_sobol_second(void)
{
    rfx_marginal mg[3] = {uni(0, 1), nrm(0, 1), uni(-2, 5)};
    const unsigned a[7 * 3] = {0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 1, 0,
                               0, 1, 1, 2, 0, 1, 1, 1, 1};
    const double c[7] = {5, 1, -2, 1, 3, 0.5, -1.5};
    const double V = 17.5;
    const double ex[9] = {1 / V, 1 / V, 0.25 / V, 1 / V, 4 / V, 9 / V, 0.25 / V, 9 / V, 0};
    rfx_pce *pce = NULL;
    double s2[9], first[3], total[3], err = 0;
    CHECK_OK(rfx_pce_create(3, mg, 7, a, c, &pce));
    CHECK_OK(rfx_pce_sobol_second(pce, s2));
    CHECK_OK(rfx_pce_sobol(pce, first, total));
    for (int i = 0; i < 9; i++) {
        CHECK_NEAR(s2[i], ex[i], 1e-14);
        err = fmax(err, fabs(s2[i] - ex[i]));
    }
    for (int i = 0; i < 3; i++) {
        CHECK(s2[i * 3 + i] == first[i]); /* bitwise */
        for (int j = 0; j < 3; j++) CHECK(s2[i * 3 + j] == s2[j * 3 + i]);
    }
    /* S_i + S_ij + S_123 = 1, and S_Ti = S_i + sum_j S_ij + S_123 */
    double sum = 0;
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++) sum += s2[i * 3 + j];
    CHECK_NEAR(sum + 2.25 / V, 1, 1e-14);
    CHECK_NEAR(total[1], s2[3] + s2[4] + s2[5] + 2.25 / V, 1e-14);
    printf("assembled PCE: max |S_ij - exact| = %.1e\n", err);
    CHECK_STATUS(rfx_pce_sobol_second(pce, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "second is NULL") != NULL);
    CHECK_STATUS(rfx_pce_sobol_second(NULL, s2), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "pce is NULL") != NULL);
    rfx_pce_free(pce);
}

/* ---- errors -------------------------------------------------------------- */

#define CHECK_ERR(call, status, field)                                                   \
    do {                                                                                 \
        CHECK_STATUS(call, status);                                                      \
        CHECK_MSG(strstr(rfx_last_error(), field) != NULL, "message '%s' lacks '%s'",     \
                  rfx_last_error(), field);                                              \
    } while (0)

static void test_errors(void)
{
    enum { D = 3 };
    const size_t n = 40;
    rfx_marginal mg[D] = {uni(0, 1), nrm(0, 1), uni(-1, 1)};
    rfx_test_rng r = {6};
    double *X = sample(&r, mg, n, D), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = X[i * D] + X[i * D + 1];
    rfx_cmat Xv = rfx_cmat_of(X, n, D);
    rfx_pce *sentinel = (rfx_pce *)&r, *out = sentinel;
    rfx_pce_params p;

#define FRESH() (p = rfx_pce_params_default(), p.marginals = mg, out = sentinel)
    FRESH();
    CHECK_ERR(rfx_pce_fit(NULL, Xv, y, &out), RFX_EINVAL, "params");
    double sw[40];
    for (size_t i = 0; i < n; i++) sw[i] = 1.0;
    sw[5] = INFINITY;
    p.sample_weight = sw;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.sample_weight[5]");
    for (size_t i = 0; i < n; i++) sw[i] = 0.0;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "all 40 weights are zero");
    sw[7] = 1.0; /* one row of positive weight */
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EDIM, "at least 2");
    CHECK(out == sentinel);
    FRESH();
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, NULL), RFX_EINVAL, "out");
    CHECK_ERR(rfx_pce_fit(&p, Xv, NULL, &out), RFX_EINVAL, "y");
    p.marginals = NULL;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.marginals");
    rfx_marginal bad[D] = {uni(0, 1), nrm(0, 1), uni(-1, 1)};
    p.marginals = bad;
    bad[1].kind = (rfx_marginal_kind)7;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.marginals[1].kind");
    bad[1] = rfx_marginal_lognormal(0, 1); /* valid, but column 1 has values <= 0 */
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EPARSE, "lognormal marginal (x > 0)");
    bad[1] = rfx_marginal_lognormal(0, 0);
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.marginals[1]: a lognormal");
    bad[1] = nrm(0, 0);
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.marginals[1]");
    bad[1] = nrm(NAN, 1);
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.marginals[1]");
    bad[1] = nrm(0, 1);
    bad[2] = uni(1, 1);
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.marginals[2]");
    bad[2] = uni(-INFINITY, 1);
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.marginals[2]");
    FRESH();
    p.degree = 0;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.degree");
    p.degree = RFX_PCE_MAX_DEGREE + 1;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.degree");
    p.degree = 3;
    p.degree_min = 4;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.degree_min");
    FRESH();
    p.q_norm = 0;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.q_norm");
    p.q_norm = 1.5;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.q_norm");
    p.q_norm = NAN;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.q_norm");
    FRESH();
    p.max_interaction = 4;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.max_interaction");
    FRESH();
    p.method = (rfx_pce_method)5;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.method");
    FRESH();
    p.max_candidates = 0;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.max_candidates");
    FRESH();
    p.lars_error_factor = 0.5;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.lars_error_factor");
    p.lars_error_factor = NAN;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.lars_error_factor");
    FRESH();
    p.n_threads = -1;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.n_threads");
    /* explicit bases */
    unsigned basis[4 * D] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0};
    FRESH();
    p.basis_terms = 4;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.basis_terms");
    p.basis = basis;
    p.basis_terms = 0;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.basis_terms");
    p.basis_terms = 4;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "repeat");
    basis[9] = RFX_PCE_MAX_DEGREE + 1;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.basis[3][0]");
    basis[9] = 2;
    p.max_candidates = 3;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "pce.basis_terms");
    p.max_candidates = 100;
    p.basis = basis + D; /* no constant */
    p.basis_terms = 3;
    p.method = RFX_PCE_METHOD_LARS;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "constant");
    p.method = RFX_PCE_METHOD_LSQ;
    CHECK_OK(rfx_pce_fit(&p, Xv, y, &out)); /* least squares does not need it */
    if (out != sentinel) rfx_pce_free(out);
    /* term counts: C(d + p, p) over max_candidates, overflowing size_t, and
     * a hyperbolic set over the cap found while enumerating */
    {
        enum { DB = 2000 };
        rfx_marginal *many = malloc(DB * sizeof *many);
        double *Xb = calloc(2 * DB, sizeof *Xb), yb[2] = {0, 1};
        for (int i = 0; i < DB; i++) many[i] = uni(-1, 1);
        FRESH();
        p.marginals = many;
        p.degree = 1000;
        CHECK_ERR(rfx_pce_fit(&p, rfx_cmat_of(Xb, 2, DB), yb, &out), RFX_EOVERFLOW, "pce.degree");
        p.degree = 3; /* C(2003, 3) = 1.3e9 */
        CHECK_ERR(rfx_pce_fit(&p, rfx_cmat_of(Xb, 2, DB), yb, &out), RFX_EINVAL,
                  "pce.max_candidates");
        p.q_norm = 0.7;
        p.degree = 6;
        CHECK_ERR(rfx_pce_fit(&p, rfx_cmat_of(Xb, 2, DB), yb, &out), RFX_EINVAL,
                  "pce.max_candidates");
        free(many);
        free(Xb);
    }
    /* data */
    FRESH();
    p.degree = 5; /* 56 terms > 40 rows */
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EINVAL, "fewer than the 56 terms");
    p.method = RFX_PCE_METHOD_LARS; /* fine for LARS */
    CHECK_OK(rfx_pce_fit(&p, Xv, y, &out));
    if (out != sentinel) rfx_pce_free(out);
    /* exactly as many rows as terms: interpolation, an infinite LOO error */
    FRESH();
    p.degree = 3; /* 20 terms */
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, 20, D), y, &out));
    if (out != sentinel) {
        rfx_pce_info info;
        double yp20[20];
        CHECK_OK(rfx_pce_get_info(out, &info));
        CHECK(info.n_terms == 20 && isinf(info.loo_mse) && isinf(info.loo_corrected));
        CHECK_OK(rfx_pce_predict(out, rfx_cmat_of(X, 20, D), yp20));
        for (int i = 0; i < 20; i++) CHECK_NEAR(yp20[i], y[i], 1e-8);
        rfx_pce_free(out);
    }
    FRESH();
    CHECK_ERR(rfx_pce_fit(&p, rfx_cmat_of(X, 1, D), y, &out), RFX_EDIM, "rows");
    CHECK_ERR(rfx_pce_fit(&p, rfx_cmat_of(X, n, 0), y, &out), RFX_EDIM, "columns");
    double keep = X[7 * D + 2];
    X[7 * D + 2] = NAN;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EPARSE, "row 7, column 2");
    X[7 * D + 2] = keep;
    keep = y[11];
    y[11] = INFINITY;
    CHECK_ERR(rfx_pce_fit(&p, Xv, y, &out), RFX_EPARSE, "y[11]");
    y[11] = keep;
    rfx_cmat badstride = {X, n, D, 2};
    CHECK_ERR(rfx_pce_fit(&p, badstride, y, &out), RFX_EINVAL, "stride");
    /* repeated points: 40 rows but 4 distinct, degree 2 has 10 terms */
    double *Xr = malloc(n * D * sizeof *Xr);
    for (size_t i = 0; i < n; i++) memcpy(Xr + i * D, X + (i % 4) * D, D * sizeof *X);
    p.degree = 2;
    CHECK_ERR(rfx_pce_fit(&p, rfx_cmat_of(Xr, n, D), y, &out), RFX_ENUMERIC, "rank deficient");
    CHECK(out == sentinel);
    /* a degree sweep stops before the first degree the points cannot resolve */
    p.degree_min = 1;
    p.degree = 3;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(Xr, n, D), y, &out));
    if (out != sentinel) {
        rfx_pce_info info;
        CHECK_OK(rfx_pce_get_info(out, &info));
        CHECK(info.degree == 1 && info.n_terms == 4);
        rfx_pce_free(out);
    }
    free(Xr);
    FRESH();

    /* create, predict, term, basis */
    unsigned al[2 * D] = {0, 0, 0, 0, 0, 0};
    double cf[2] = {1, 2};
    CHECK_ERR(rfx_pce_create(D, mg, 2, al, cf, &out), RFX_EINVAL, "repeat");
    al[4] = 1;
    cf[1] = NAN;
    CHECK_ERR(rfx_pce_create(D, mg, 2, al, cf, &out), RFX_EINVAL, "coef[1]");
    cf[1] = 2;
    CHECK_ERR(rfx_pce_create(D, mg, 2, NULL, cf, &out), RFX_EINVAL, "alpha");
    CHECK_ERR(rfx_pce_create(D, mg, 2, al, NULL, &out), RFX_EINVAL, "coef");
    CHECK_ERR(rfx_pce_create(0, mg, 2, al, cf, &out), RFX_EINVAL, "d");
    CHECK_ERR(rfx_pce_create(D, NULL, 2, al, cf, &out), RFX_EINVAL, "marginals");
    CHECK_ERR(rfx_pce_create(D, mg, 2, al, cf, NULL), RFX_EINVAL, "out");
    al[5] = RFX_PCE_MAX_DEGREE + 1;
    CHECK_ERR(rfx_pce_create(D, mg, 2, al, cf, &out), RFX_EINVAL, "alpha[1][2]");
    al[5] = 0;
    CHECK(out == sentinel);
    rfx_pce *pce = NULL;
    CHECK_OK(rfx_pce_create(D, mg, 2, al, cf, &pce));
    double yp[4];
    CHECK_ERR(rfx_pce_predict(pce, rfx_cmat_of(X, 2, D - 1), yp), RFX_EDIM, "columns");
    CHECK_ERR(rfx_pce_predict(pce, Xv, NULL), RFX_EINVAL, "y");
    CHECK_ERR(rfx_pce_predict(NULL, Xv, yp), RFX_EINVAL, "pce");
    CHECK_OK(rfx_pce_predict(pce, rfx_cmat_of(NULL, 0, D), NULL));
    CHECK_ERR(rfx_pce_term(pce, 2, cf, al), RFX_EINVAL, "term 2");
    CHECK_ERR(rfx_pce_term(NULL, 0, cf, al), RFX_EINVAL, "pce");
    CHECK_ERR(rfx_pce_sobol(NULL, yp, yp), RFX_EINVAL, "pce");
    CHECK_ERR(rfx_pce_moments(NULL, yp, yp), RFX_EINVAL, "pce");
    rfx_pce_info info;
    CHECK_ERR(rfx_pce_get_info(pce, NULL), RFX_EINVAL, "NULL");
    CHECK_OK(rfx_pce_get_info(pce, &info));
    CHECK(rfx_pce_n_terms(NULL) == 0 && rfx_pce_marginals(NULL) == NULL);
    CHECK(rfx_pce_marginals(pce)[1].kind == RFX_MARGINAL_NORMAL);
    rfx_pce_free(pce);
    double psi[4];
    CHECK_ERR(rfx_pce_basis_1d(NULL, 3, 0.0, psi), RFX_EINVAL, "marginal");
    CHECK_ERR(rfx_pce_basis_1d(&mg[0], 3, 0.0, NULL), RFX_EINVAL, "psi");
    CHECK_ERR(rfx_pce_basis_1d(&mg[0], RFX_PCE_MAX_DEGREE + 1, 0.0, psi), RFX_EINVAL, "degree");
    rfx_marginal m0 = uni(2, 1);
    CHECK_ERR(rfx_pce_basis_1d(&m0, 3, 0.0, psi), RFX_EINVAL, "marginal");
#undef FRESH
    free(X);
    free(y);
}

/* rfx_pce_params_check: the defaults with marginals (or marginals_from_data)
 * pass, each bad field is named; what needs d (each marginal,
 * max_interaction <= d) is left to the fit; with auto_basis the degree is
 * not read; and rfx_pce_fit makes the same check first, before it looks at
 * the data. */
static void test_params_check(void)
{
    rfx_marginal mg[2] = {uni(0, 1), nrm(0, 1)};
    rfx_pce_params p = rfx_pce_params_default();
    CHECK_ERR(rfx_pce_params_check(&p), RFX_EINVAL, "pce.marginals: NULL");
    p.marginals_from_data = 1;
    CHECK_OK(rfx_pce_params_check(&p));
    p.marginals_from_data = 0;
    p.marginals = mg;
    CHECK_OK(rfx_pce_params_check(&p));
    CHECK_ERR(rfx_pce_params_check(NULL), RFX_EINVAL, "pce: params is NULL");
#define BAD(field, value, text)                                                           \
    do {                                                                                  \
        rfx_pce_params q_ = rfx_pce_params_default();                                     \
        q_.marginals = mg;                                                                \
        q_.field = value;                                                                 \
        CHECK_ERR(rfx_pce_params_check(&q_), RFX_EINVAL, text);                           \
    } while (0)
    BAD(method, (rfx_pce_method)5, "pce.method");
    BAD(max_candidates, 0, "pce.max_candidates");
    BAD(lars_error_factor, 0.5, "pce.lars_error_factor");
    BAD(lars_error_factor, NAN, "pce.lars_error_factor");
    BAD(n_threads, -1, "pce.n_threads");
    BAD(degree, 0, "pce.degree: must be >= 1");
    BAD(degree, RFX_PCE_MAX_DEGREE + 1, "pce.degree: 1001 exceeds RFX_PCE_MAX_DEGREE");
    BAD(degree_min, 4, "pce.degree_min: 4 exceeds pce.degree = 3");
    BAD(q_norm, 1.5, "pce.q_norm");
    BAD(q_norm, NAN, "pce.q_norm");
    BAD(basis_terms, 4, "pce.basis_terms: 4 without a basis");
#undef BAD
    const unsigned basis[3 * 2] = {0, 0, 1, 0, 0, 1};
    p = rfx_pce_params_default();
    p.marginals = mg;
    p.basis = basis;
    CHECK_ERR(rfx_pce_params_check(&p), RFX_EINVAL, "pce.basis_terms: 0 with a basis given");
    p.basis_terms = 3;
    p.degree = 0; /* not read with a basis */
    CHECK_OK(rfx_pce_params_check(&p));
    p.max_candidates = 2;
    CHECK_ERR(rfx_pce_params_check(&p), RFX_EINVAL, "pce.basis_terms: 3 exceeds");
    /* auto_basis: the degree is not read, degree_min is */
    p = rfx_pce_params_default();
    p.marginals_from_data = 1;
    p.auto_basis = 1;
    p.degree = 0;
    p.degree_min = 4;
    CHECK_OK(rfx_pce_params_check(&p));
    p.degree_min = RFX_PCE_MAX_DEGREE + 1;
    CHECK_ERR(rfx_pce_params_check(&p), RFX_EINVAL, "pce.degree_min: 1001 exceeds");
    /* the data's part */
    rfx_marginal bad[2] = {uni(1, 1), nrm(0, -1)};
    p = rfx_pce_params_default();
    p.marginals = bad;
    p.max_interaction = 5;
    CHECK_OK(rfx_pce_params_check(&p));
    double X[10 * 2], y[10];
    for (int i = 0; i < 10; i++) {
        X[2 * i] = 0.1 * i;
        X[2 * i + 1] = 0.05 * i * i;
        y[i] = X[2 * i];
    }
    rfx_pce *out = NULL;
    CHECK_ERR(rfx_pce_fit(&p, rfx_cmat_of(X, 10, 2), y, &out), RFX_EINVAL, "pce.marginals[0]");
    p.marginals = mg;
    CHECK_ERR(rfx_pce_fit(&p, rfx_cmat_of(X, 10, 2), y, &out), RFX_EINVAL,
              "pce.max_interaction: 5 exceeds the 2 inputs");
    CHECK(out == NULL);
    /* the fit's first check: the same message, whatever the data */
    p = rfx_pce_params_default();
    p.marginals = mg;
    p.q_norm = 0;
    char msg[256];
    CHECK_STATUS(rfx_pce_params_check(&p), RFX_EINVAL);
    snprintf(msg, sizeof msg, "%s", rfx_last_error());
    CHECK_STATUS(rfx_pce_fit(&p, rfx_cmat_of(NULL, 0, 0), NULL, &out), RFX_EINVAL);
    CHECK_MSG(strcmp(rfx_last_error(), msg) == 0, "'%s' is not '%s'", rfx_last_error(), msg);
    p = rfx_pce_params_default();
    p.marginals_from_data = 1;
    p.auto_basis = 1;
    p.degree_min = RFX_PCE_MAX_DEGREE + 1;
    CHECK_STATUS(rfx_pce_params_check(&p), RFX_EINVAL);
    snprintf(msg, sizeof msg, "%s", rfx_last_error());
    CHECK_STATUS(rfx_pce_fit(&p, rfx_cmat_of(X, 10, 2), y, &out), RFX_EINVAL);
    CHECK_MSG(strcmp(rfx_last_error(), msg) == 0, "'%s' is not '%s'", rfx_last_error(), msg);
    CHECK(out == NULL);
}

/* mg[j] = uniform on column j's [min, max] over the n rows of X (n x d). */
static void column_ranges(const double *X, size_t n, size_t d, rfx_marginal *mg)
{
    for (size_t j = 0; j < d; j++) {
        double lo = X[j], hi = X[j];
        for (size_t i = 1; i < n; i++) {
            lo = fmin(lo, X[i * d + j]);
            hi = fmax(hi, X[i * d + j]);
        }
        mg[j] = uni(lo, hi);
    }
}

/* The automatic basis and the marginals from the data (rfx_pce_params
 * auto_basis, marginals_from_data) are exactly the better of the two fits
 * they stand for: total degree 7 (the largest with C(8 + P, P) <= 10000 at
 * d = 8) and the pairwise basis of degree 9 (the largest with 1 + 8 P + 28
 * C(P, 2) <= 4 n = 1200), on uniform marginals over each column's range;
 * and the info names the chosen basis. */
static void test_auto_basis(void)
{
    const size_t n = 300, d = 8;
    rfx_test_rng r = {77};
    double *X = malloc(n * d * sizeof *X), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < d; j++) X[i * d + j] = 2 + 3 * rfx_test_uniform(&r);
        double s = 0; /* x_{j+1} drawn before it is read */
        for (size_t j = 0; j < d; j++) s += sin(X[i * d + j]) * (j < 3 ? X[i * d + j + 1] : 0.3);
        y[i] = s;
    }
    X[5 * d + 2] = 5.0; /* column ranges from the data */
    rfx_marginal mg[8];
    column_ranges(X, n, d, mg);
    rfx_pce_params p = rfx_pce_params_default();
    p.method = RFX_PCE_METHOD_LARS;
    p.degree_min = 1;
    rfx_pce *a = NULL, *b = NULL, *c = NULL;
    p.marginals = mg;
    p.degree = 7;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &a));
    p.degree = 9;
    p.max_interaction = 2;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &b));
    p.marginals = NULL;
    p.marginals_from_data = 1;
    p.auto_basis = 1;
    p.degree = 1234; /* not read */
    p.max_interaction = 0;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &c));
    if (a && b && c) {
        rfx_pce_info ia, ib, ic;
        CHECK_OK(rfx_pce_get_info(a, &ia));
        CHECK_OK(rfx_pce_get_info(b, &ib));
        CHECK_OK(rfx_pce_get_info(c, &ic));
        const rfx_pce *best = ib.loo_corrected < ia.loo_corrected ? b : a;
        const rfx_pce_info *ib_ = ib.loo_corrected < ia.loo_corrected ? &ib : &ia;
        printf("auto basis: total degree 7 LOO %.3g, pairwise degree 9 LOO %.3g, chose %s\n",
               ia.loo_corrected, ib.loo_corrected, best == b ? "pairwise" : "total");
        CHECK(ic.n_terms == ib_->n_terms && ic.loo_corrected == ib_->loo_corrected);
        CHECK(ic.degree_max == (best == b ? 9u : 7u) && ic.degree_min == 1);
        CHECK(ic.max_interaction == (best == b ? 2u : 0u) && ic.q_norm == 1.0);
        CHECK(ic.n_screened == 0);
        for (size_t k = 0; k < ic.n_terms && k < ib_->n_terms; k++) {
            double c1 = 0, c2 = 1;
            CHECK_OK(rfx_pce_term(c, k, &c1, NULL));
            CHECK_OK(rfx_pce_term(best, k, &c2, NULL));
            CHECK(c1 == c2);
        }
        const rfx_marginal *m = rfx_pce_marginals(c);
        for (size_t j = 0; j < d; j++) CHECK(m[j].a == mg[j].a && m[j].b == mg[j].b);
    }
    /* a constant column gets [x - 1/2, x + 1/2]; NULL marginals without the
     * flag stay an error */
    for (size_t i = 0; i < n; i++) X[i * d + 4] = 1.5;
    rfx_pce_free(c);
    c = NULL;
    p.auto_basis = 0;
    p.degree = 2;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &c));
    if (c) CHECK(rfx_pce_marginals(c)[4].a == 1.0 && rfx_pce_marginals(c)[4].b == 2.0);
    p.marginals_from_data = 0;
    rfx_pce *e = NULL;
    CHECK_STATUS(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &e), RFX_EINVAL);
    CHECK(e == NULL);
    rfx_pce_free(a);
    rfx_pce_free(b);
    rfx_pce_free(c);
    free(X);
    free(y);
}

/* Screening (auto_basis): y = 10 sin(pi x0 x1) + 20 (x2 - 1/2)^2 in d = 12
 * uniform inputs, n = 300. The first fit is the better of total degree 5
 * (the largest with C(12 + P, P) <= 10000) and the pairwise degree 6 (1 +
 * 12 P + 66 C(P, 2) <= 4 n); the inputs kept are those whose total Sobol
 * index there is at least a tenth of its relative corrected LOO error,
 * x0..x2 here; the automatic fit is then exactly the automatic fit on those
 * three columns (its terms zero in the other nine), its corrected LOO error
 * is lower, and held out it is far closer to the function. */
static double screened_fn(const double *x)
{
    return 10 * sin(PI * x[0] * x[1]) + 20 * (x[2] - 0.5) * (x[2] - 0.5);
}

static void test_screening(void)
{
    enum { n = 300, nt = 1000, d = 12, k = 3 };
    rfx_test_rng r = {404};
    double *X = malloc(n * d * sizeof *X), *y = malloc(n * sizeof *y), *Xk = malloc(n * k * sizeof *Xk);
    double *Xt = malloc(nt * d * sizeof *Xt), *yt = malloc(nt * sizeof *yt), *yp = malloc(nt * sizeof *yp);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < d; j++) X[i * d + j] = rfx_test_uniform(&r);
        y[i] = screened_fn(X + i * d);
        for (size_t j = 0; j < k; j++) Xk[i * k + j] = X[i * d + j];
    }
    for (size_t i = 0; i < nt; i++) { /* inside the training range */
        for (size_t j = 0; j < d; j++) Xt[i * d + j] = 0.05 + 0.9 * rfx_test_uniform(&r);
        yt[i] = screened_fn(Xt + i * d);
    }
    rfx_marginal mg[d];
    column_ranges(X, n, d, mg);
    rfx_pce_params p = rfx_pce_params_default();
    p.method = RFX_PCE_METHOD_LARS;
    p.degree_min = 1;
    p.marginals = mg;
    rfx_pce *a = NULL, *b = NULL, *sub = NULL, *c = NULL;
    p.degree = 5;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &a));
    p.degree = 6;
    p.max_interaction = 2;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &b));
    p.max_interaction = 0;
    p.auto_basis = 1;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(Xk, n, k), y, &sub)); /* marginals mg[0..2] */
    p.marginals = NULL;
    p.marginals_from_data = 1;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &c));
    if (a && b && sub && c) {
        rfx_pce_info ia, ib, is, ic;
        CHECK_OK(rfx_pce_get_info(a, &ia));
        CHECK_OK(rfx_pce_get_info(b, &ib));
        CHECK_OK(rfx_pce_get_info(sub, &is));
        CHECK_OK(rfx_pce_get_info(c, &ic));
        const rfx_pce *first = ib.loo_corrected < ia.loo_corrected ? b : a;
        const double loo1 = fmin(ia.loo_corrected, ib.loo_corrected), tau = loo1 / 10;
        double total[d];
        CHECK_OK(rfx_pce_sobol(first, NULL, total));
        for (size_t j = 0; j < d; j++)
            CHECK_MSG((total[j] >= tau) == (j < k), "x%zu: total %.3g, threshold %.3g", j,
                      total[j], tau);
        printf("screening: first fit LOO %.3g (threshold %.3g), screened LOO %.3g, %zu inputs "
               "left out, degree %zu\n", loo1, tau, ic.loo_corrected, ic.n_screened, ic.degree);
        CHECK(ic.n_screened == d - k && is.n_screened == 0);
        CHECK(ic.loo_corrected == is.loo_corrected && ic.loo_corrected < loo1);
        CHECK(ic.n_terms == is.n_terms && ic.degree == is.degree && ic.dim == d);
        for (size_t t = 0; t < ic.n_terms && t < is.n_terms; t++) {
            double c1 = 0, c2 = 1;
            unsigned a1[d], a2[k];
            CHECK_OK(rfx_pce_term(c, t, &c1, a1));
            CHECK_OK(rfx_pce_term(sub, t, &c2, a2));
            CHECK(c1 == c2);
            for (size_t j = 0; j < d; j++) CHECK(a1[j] == (j < k ? a2[j] : 0u));
        }
        /* held out: the screened fit against the first */
        double err[2];
        for (int m = 0; m < 2; m++) {
            CHECK_OK(rfx_pce_predict(m ? first : c, rfx_cmat_of(Xt, nt, d), yp));
            double e = 0, v = 0, mean = 0;
            for (size_t i = 0; i < nt; i++) mean += yt[i] / nt;
            for (size_t i = 0; i < nt; i++) {
                e += (yp[i] - yt[i]) * (yp[i] - yt[i]);
                v += (yt[i] - mean) * (yt[i] - mean);
            }
            err[m] = sqrt(e / v);
        }
        printf("screening: held-out error %.3g (first fit %.3g)\n", err[0], err[1]);
        CHECK(err[0] < 1e-3 && err[0] < 0.01 * err[1]);
    }
    /* the screening is part of the automatic basis only */
    rfx_pce_free(c);
    c = NULL;
    p.auto_basis = 0;
    p.degree = 5;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &c));
    if (c && a) {
        rfx_pce_info ia, ic;
        CHECK_OK(rfx_pce_get_info(a, &ia));
        CHECK_OK(rfx_pce_get_info(c, &ic));
        CHECK(ic.n_screened == 0 && ic.loo_corrected == ia.loo_corrected);
    }
    rfx_pce_free(a);
    rfx_pce_free(b);
    rfx_pce_free(sub);
    rfx_pce_free(c);
    free(X);
    free(y);
    free(Xk);
    free(Xt);
    free(yt);
    free(yp);
}

/* The relative error |f - y| / |y - mean y| of pce's predictions f over the
 * nt rows of Xt (nt x d) against yt; yp receives the predictions. */
static double held_out_error(const rfx_pce *pce, const double *Xt, const double *yt, size_t nt,
                             size_t d, double *yp)
{
    CHECK_OK(rfx_pce_predict(pce, rfx_cmat_of(Xt, nt, d), yp));
    return rfx_test_rel_error(yp, yt, nt);
}

/* The automatic basis past degree 10 (d = 3, n = 500: up to degree 16,
 * C(19, 3) = 969 <= 2 n terms), each degree above 10 taken only when its
 * corrected LOO error halves the best: on Ishigami without noise the fit
 * goes past 10 and its held-out error falls far below the degree-10 fit's;
 * with noise (sd 0.5) it stops where the degree-10 sweep stops, bit for
 * bit the same model. */
/* Fit params p (LARS, degree_min 1) with the automatic basis and with the
 * plain sweep of degrees 1..10, check that both keep the same model, term
 * by term, and give the automatic fit's info in *info (may be NULL). */
static void auto_is_sweep(rfx_pce_params *p, rfx_cmat X, const double *y, const char *label,
                          rfx_pce_info *info)
{
    rfx_pce *a = NULL, *b = NULL;
    p->auto_basis = 1;
    CHECK_OK(rfx_pce_fit(p, X, y, &a));
    p->auto_basis = 0;
    p->degree = 10;
    CHECK_OK(rfx_pce_fit(p, X, y, &b));
    if (a && b) {
        rfx_pce_info ia, ib;
        CHECK_OK(rfx_pce_get_info(a, &ia));
        CHECK_OK(rfx_pce_get_info(b, &ib));
        printf("%s: automatic degree %zu of 1..%zu, sweep to 10 degree %zu, %zu terms\n", label,
               ia.degree, ia.degree_max, ib.degree, ib.n_terms);
        CHECK(ia.degree == ib.degree && ia.n_terms == ib.n_terms &&
              ia.loo_corrected == ib.loo_corrected);
        for (size_t k = 0; k < ia.n_terms && k < ib.n_terms; k++) {
            double c1 = 0, c2 = 1;
            CHECK_OK(rfx_pce_term(a, k, &c1, NULL));
            CHECK_OK(rfx_pce_term(b, k, &c2, NULL));
            CHECK(c1 == c2);
        }
        if (info) *info = ia;
    }
    rfx_pce_free(a);
    rfx_pce_free(b);
}

static void test_auto_high_degree(void)
{
    const size_t n = 500, nt = 2000, d = 3;
    rfx_test_rng r = {91};
    double *X = malloc(n * d * sizeof *X), *y = malloc(n * sizeof *y), *yn = malloc(n * sizeof *yn);
    double *Xt = malloc(nt * d * sizeof *Xt), *yt = malloc(nt * sizeof *yt), *yp = malloc(nt * sizeof *yp);
    const double pi = 3.141592653589793;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < d; j++) X[i * d + j] = -pi + 2 * pi * rfx_test_uniform(&r);
        y[i] = ishigami(X + i * d);
        yn[i] = y[i] + 0.5 * rfx_test_normal(&r);
    }
    for (size_t i = 0; i < nt; i++) { /* inside the training range: no extrapolation */
        for (size_t j = 0; j < d; j++) Xt[i * d + j] = -3.0 + 6.0 * rfx_test_uniform(&r);
        yt[i] = ishigami(Xt + i * d);
    }
    rfx_pce_params p = rfx_pce_params_default();
    p.method = RFX_PCE_METHOD_LARS;
    p.degree_min = 1;
    p.marginals_from_data = 1;
    double err[2];
    for (int k = 0; k < 2; k++) {
        rfx_pce *pce = NULL;
        p.auto_basis = k == 0;
        p.degree = 10;
        CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &pce));
        err[k] = INFINITY;
        if (!pce) continue;
        rfx_pce_info info;
        CHECK_OK(rfx_pce_get_info(pce, &info));
        err[k] = held_out_error(pce, Xt, yt, nt, d, yp);
        printf("ishigami, %s: degree %zu of 1..%zu, %zu terms, held-out error %.3g\n",
               k == 0 ? "automatic basis" : "degrees 1..10", info.degree, info.degree_max,
               info.n_terms, err[k]);
        if (k == 0) CHECK(info.degree > 10 && info.degree_max == 16);
        rfx_pce_free(pce);
    }
    CHECK(err[0] < 0.1 * err[1]);
    /* noise: the same model as the sweep to 10 */
    auto_is_sweep(&p, rfx_cmat_of(X, n, d), yn, "ishigami + noise", NULL);
    free(X);
    free(y);
    free(yn);
    free(Xt);
    free(yt);
    free(yp);
}

/* The hyperbolic basis of the automatic choice. On the OTL circuit (d = 6,
 * n = 200) the total-degree sweep keeps a degree below its cap of 10 (the
 * basis outgrew the rows), so the q = 0.5 basis up to degree 10 (231 terms
 * at 10, the largest within 4 n and 10) is swept too; its corrected LOO
 * error is the lower and the automatic fit is the sweep of that basis over
 * degrees 1..10, term by term, with a lower
 * held-out error than the total-degree sweep's. Where the total-degree
 * sweep reaches its cap (Ishigami above, the sweep-patience cases) the
 * hyperbolic basis is not tried: those tests see the sweep's model. */
static void test_hyperbolic_basis(void)
{
    const size_t n = 200, nt = 2000;
    rfx_testfn *f = NULL;
    CHECK_OK(rfx_testfn_create(RFX_TESTFN_OTL, NULL, &f));
    if (!f) return;
    const size_t d = rfx_testfn_dim(f);
    double *X = malloc(n * d * sizeof *X), *y = malloc(n * sizeof *y);
    double *Xt = malloc(nt * d * sizeof *Xt), *yt = malloc(nt * sizeof *yt);
    double *yp = malloc(nt * sizeof *yp);
    CHECK_OK(rfx_testfn_sample(f, 31, (rfx_mat){X, n, d, d}, y));
    CHECK_OK(rfx_testfn_sample(f, 32, (rfx_mat){Xt, nt, d, d}, yt));
    rfx_marginal mg[6];
    column_ranges(X, n, d, mg);
    rfx_pce_params p = rfx_pce_params_default();
    p.method = RFX_PCE_METHOD_LARS;
    p.degree_min = 1;
    rfx_pce *fit[3] = {NULL, NULL, NULL}; /* automatic, hyperbolic, total degree 1..10 */
    p.marginals_from_data = 1;
    p.auto_basis = 1;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &fit[0]));
    p.marginals_from_data = 0;
    p.marginals = mg;
    p.auto_basis = 0;
    p.q_norm = 0.5;
    p.degree = 10;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &fit[1]));
    p.q_norm = 1.0;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &fit[2]));
    if (fit[0] && fit[1] && fit[2]) {
        rfx_pce_info in[3];
        double err[3];
        for (int k = 0; k < 3; k++) {
            CHECK_OK(rfx_pce_get_info(fit[k], &in[k]));
            err[k] = held_out_error(fit[k], Xt, yt, nt, d, yp);
        }
        printf("hyperbolic basis: automatic q %g degree %zu of 1..%zu, %zu of %zu terms, LOO "
               "%.3g, held-out %.3g; q 0.5 degrees 1..10 LOO %.3g; total degree %zu of 1..10 "
               "LOO %.3g, held-out %.3g\n",
               in[0].q_norm, in[0].degree, in[0].degree_max, in[0].n_terms, in[0].n_candidates,
               in[0].loo_corrected, err[0], in[1].loo_corrected, in[2].degree,
               in[2].loo_corrected, err[2]);
        CHECK(in[0].q_norm == 0.5 && in[0].degree_max == 10 && in[0].degree_min == 1);
        CHECK(in[0].degree == in[1].degree && in[0].n_candidates == in[1].n_candidates);
        CHECK(in[0].n_screened == 0 && in[2].degree < 10);
        CHECK(in[0].n_terms == in[1].n_terms && in[0].loo_corrected == in[1].loo_corrected);
        for (size_t k = 0; k < in[0].n_terms && k < in[1].n_terms; k++) {
            double c1 = 0, c2 = 1;
            CHECK_OK(rfx_pce_term(fit[0], k, &c1, NULL));
            CHECK_OK(rfx_pce_term(fit[1], k, &c2, NULL));
            CHECK(c1 == c2);
        }
        CHECK(in[1].loo_corrected < in[2].loo_corrected);
        CHECK(err[0] < 0.8 * err[2]);
    }
    for (int k = 0; k < 3; k++) rfx_pce_free(fit[k]);
    rfx_testfn_free(f);
    free(X);
    free(y);
    free(Xt);
    free(yt);
    free(yp);
}

/* Row weights: least squares at a given degree is that of the rows
 * repeated by integer weights; a row of weight 0 is the row left out, bit
 * for bit (LARS, degrees 1..4 chosen by the weighted corrected LOO). */
static void test_weights(void)
{
    enum { D = 2 };
    const size_t n = 60;
    rfx_marginal mg[D] = {uni(-1, 1), uni(-1, 1)};
    rfx_test_rng r = {31};
    double *X = sample(&r, mg, n, D), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
    double *Xr = malloc(3 * n * D * sizeof *Xr), *yr = malloc(3 * n * sizeof *yr);
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        y[i] = exp(X[i * D]) * cos(2 * X[i * D + 1]);
        w[i] = (double)(1 + i % 3);
        for (size_t k = 0; k < (size_t)w[i]; k++, nr++) {
            memcpy(Xr + nr * D, X + i * D, D * sizeof *X);
            yr[nr] = y[i];
        }
    }
    rfx_pce_params p = rfx_pce_params_default();
    p.marginals = mg;
    p.degree = 4;
    p.sample_weight = w;
    rfx_pce *a = NULL, *b = NULL;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, D), y, &a));
    rfx_pce_params q = p;
    q.sample_weight = NULL;
    CHECK_OK(rfx_pce_fit(&q, rfx_cmat_of(Xr, nr, D), yr, &b));
    CHECK(rfx_pce_n_terms(a) == rfx_pce_n_terms(b));
    for (size_t k = 0; k < rfx_pce_n_terms(a); k++) {
        double ca, cb;
        CHECK_OK(rfx_pce_term(a, k, &ca, NULL));
        CHECK_OK(rfx_pce_term(b, k, &cb, NULL));
        CHECK_NEAR(ca, cb, 1e-12);
    }
    rfx_pce_free(a);
    rfx_pce_free(b);
    /* weight 0 = the row left out: LARS over degrees 1..4 */
    double *Xp = malloc(n * D * sizeof *Xp), *yp = malloc(n * sizeof *yp);
    double *wp = malloc(n * sizeof *wp);
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        w[i] = i % 6 == 1 ? 0.0 : 0.25 + (double)(i % 5);
        if (w[i] > 0) {
            memcpy(Xp + np * D, X + i * D, D * sizeof *X);
            yp[np] = y[i];
            wp[np++] = w[i];
        }
    }
    p.method = RFX_PCE_METHOD_LARS;
    p.degree_min = 1;
    a = b = NULL;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, D), y, &a));
    p.sample_weight = wp;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(Xp, np, D), yp, &b));
    rfx_pce_info ia, ib;
    CHECK_OK(rfx_pce_get_info(a, &ia));
    CHECK_OK(rfx_pce_get_info(b, &ib));
    CHECK(ia.n_terms == ib.n_terms && ia.degree == ib.degree && ia.n_train == np);
    CHECK(memcmp(&ia.loo_corrected, &ib.loo_corrected, sizeof(double)) == 0);
    for (size_t k = 0; k < ia.n_terms; k++) {
        double ca, cb;
        CHECK_OK(rfx_pce_term(a, k, &ca, NULL));
        CHECK_OK(rfx_pce_term(b, k, &cb, NULL));
        CHECK(memcmp(&ca, &cb, sizeof ca) == 0);
    }
    rfx_pce_free(a);
    rfx_pce_free(b);
    free(X);
    free(y);
    free(w);
    free(Xr);
    free(yr);
    free(Xp);
    free(yp);
    free(wp);
}

/* Beyond a uniform marginal's support plus the margin 1 / (2 p^2) in t (p
 * the input's largest degree) the expansion continues linearly
 * (rfx_pce_predict): f(c) + sum_i (x_i - c_i) df/dx_i(c) with c clamped to
 * that edge, against the closed forms of the Legendre and Hermite
 * polynomials and their derivatives; inside the edge, and along a normal
 * marginal, the polynomial. */
static double legendre_on_02(unsigned n, double x, double *slope)
{
    const double t = x - 1.0; /* U(0, 2): t = (2x - 0 - 2) / 2, dt/dx = 1 */
    double p, dp;
    switch (n) {
    case 0: p = 1; dp = 0; break;
    case 1: p = t; dp = 1; break;
    case 2: p = (3 * t * t - 1) / 2; dp = 3 * t; break;
    default: p = (5 * t * t * t - 3 * t) / 2; dp = (15 * t * t - 3) / 2; break;
    }
    *slope = sqrt(2.0 * n + 1.0) * dp;
    return sqrt(2.0 * n + 1.0) * p;
}

static double hermite_n105(unsigned n, double x)
{
    const double u = (x - 1.0) / 0.5; /* N(1, 0.5^2), orthonormal He_n / sqrt(n!) */
    return n == 0 ? 1.0 : n == 1 ? u : (u * u - 1.0) / sqrt(2.0);
}

static void test_linear_continuation(void)
{
    const rfx_marginal mg[2] = {rfx_marginal_uniform(0.0, 2.0), rfx_marginal_normal(1.0, 0.5)};
    const unsigned a[5 * 2] = {0, 0, 3, 0, 1, 1, 2, 0, 0, 2};
    const double c[5] = {0.7, -1.3, 0.8, 0.45, -0.6};
    rfx_pce *pce = NULL;
    CHECK_OK(rfx_pce_create(2, mg, 5, a, c, &pce));
    if (!pce) return;
    /* input 0 has degree 3 at most: the edge is t = +-(1 + 1/18), x = 2 + 1/18
     * and -1/18 (t = x - 1) */
    const double lo = -1.0 / 18.0, hi = 2.0 + 1.0 / 18.0;
    const double X[8 * 2] = {0.3,  1.2, 1.9, -0.4, 2.7,  0.9,  -0.4, 1.6,
                             3.5,  5.0, -1.0, -2.0, 2.03, 0.7, -0.05, 0.2};
    double y[8], worst = 0;
    CHECK_OK(rfx_pce_predict(pce, rfx_cmat_of(X, 8, 2), y));
    for (size_t r = 0; r < 8; r++) {
        const double x0 = X[2 * r], x1 = X[2 * r + 1];
        const double c0 = x0 < lo ? lo : x0 > hi ? hi : x0;
        double f = 0, g = 0;
        for (size_t k = 0; k < 5; k++) {
            double s, p = legendre_on_02(a[2 * k], c0, &s), h = hermite_n105(a[2 * k + 1], x1);
            f += c[k] * p * h;
            g += c[k] * s * h;
        }
        const double want = f + (x0 - c0) * g;
        worst = fmax(worst, fabs(y[r] - want) / fmax(1.0, fabs(want)));
    }
    printf("  linear continuation against the closed forms: max relative diff %.2e\n", worst);
    CHECK(worst < 1e-13);
    /* the continuation is C^1 at the edge: one step inside and outside agree
     * with the slope to second order */
    const double h = 1e-6, at[3 * 2] = {hi - h, 0.4, hi, 0.4, hi + h, 0.4};
    double v[3];
    CHECK_OK(rfx_pce_predict(pce, rfx_cmat_of(at, 3, 2), v));
    CHECK(fabs((v[2] - v[1]) - (v[1] - v[0])) < 1e-9);
    rfx_pce_free(pce);
}

/* Lognormal inputs and marginals from the data.
 * - A lognormal input is the normal one of log x: the same fit, term by
 *   term, and the same predictions (Hermite polynomials in (log x - mu) /
 *   sigma); x <= 0 is outside its support, at the fit and at predict.
 * - rfx__data_marginals keeps uniform columns uniform and gives a normal
 *   column its mean and standard deviation, a lognormal one those of its
 *   log (the maximum-likelihood estimates, recomputed here); an
 *   exponential column, likelier as lognormal but skewed there, stays
 *   uniform.
 * - marginals_from_data keeps the fit of lower corrected LOO error of the
 *   two explicit fits (uniform on the ranges; the fitted families), and a
 *   kept family fit is continued linearly in t beyond its rows' range:
 *   three points past the edge lie on one line in t through the edge's
 *   value. The model file keeps the span and the lognormal kind. */
static void test_lognormal_inputs(void)
{
    const size_t n = 240, d = 3;
    rfx_test_rng r = {91};
    double *X = malloc(n * d * sizeof *X), *L = malloc(n * d * sizeof *L);
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        double u = rfx_test_uniform(&r), z = rfx_test_normal(&r), w = rfx_test_normal(&r);
        X[i * d + 0] = 2 + 3 * u;              /* uniform on [2, 5]        */
        X[i * d + 1] = 1.5 + 0.4 * z;          /* normal N(1.5, 0.4^2)     */
        X[i * d + 2] = exp(7.0 + 1.0 * w);     /* lognormal (7, 1)         */
        double lx = log(X[i * d + 2] / 0.1);
        y[i] = X[i * d + 0] * X[i * d + 1] + lx * (1 + 0.2 * X[i * d + 0]) + 0.05 * lx * lx;
        for (size_t j = 0; j < d; j++) L[i * d + j] = X[i * d + j];
        L[i * d + 2] = log(X[i * d + 2]);
    }
    /* the lognormal input is the normal one of log x */
    const rfx_marginal ml[3] = {uni(2, 5), nrm(1.5, 0.4), rfx_marginal_lognormal(7.0, 1.0)};
    const rfx_marginal mn[3] = {uni(2, 5), nrm(1.5, 0.4), nrm(7.0, 1.0)};
    rfx_pce_params p = rfx_pce_params_default();
    p.method = RFX_PCE_METHOD_LARS;
    p.degree = 3;
    rfx_pce *a = NULL, *b = NULL;
    p.marginals = ml;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &a));
    p.marginals = mn;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(L, n, d), y, &b));
    if (a && b) {
        CHECK(rfx_pce_n_terms(a) == rfx_pce_n_terms(b));
        double worst = 0;
        for (size_t k = 0; k < rfx_pce_n_terms(a) && k < rfx_pce_n_terms(b); k++) {
            double c1, c2;
            unsigned a1[3], a2[3];
            CHECK_OK(rfx_pce_term(a, k, &c1, a1));
            CHECK_OK(rfx_pce_term(b, k, &c2, a2));
            CHECK(memcmp(a1, a2, sizeof a1) == 0);
            worst = fmax(worst, fabs(c1 - c2) / (1 + fabs(c2)));
        }
        CHECK(worst < 1e-10);
        double pa[8], pb[8];
        CHECK_OK(rfx_pce_predict(a, rfx_cmat_of(X, 8, d), pa));
        CHECK_OK(rfx_pce_predict(b, rfx_cmat_of(L, 8, d), pb));
        for (int i = 0; i < 8; i++) CHECK_NEAR(pa[i], pb[i], 1e-10 * (1 + fabs(pb[i])));
        double bad[3] = {3, 1.5, 0.0}, v;
        CHECK_STATUS(rfx_pce_predict(a, rfx_cmat_of(bad, 1, d), &v), RFX_EPARSE);
        CHECK(strstr(rfx_last_error(), "lognormal") != NULL);
        double psi[4], psn[4];
        CHECK_OK(rfx_pce_basis_1d(&ml[2], 3, 500.0, psi));
        CHECK_OK(rfx_pce_basis_1d(&mn[2], 3, log(500.0), psn));
        for (int k = 0; k < 4; k++) CHECK_NEAR(psi[k], psn[k], 1e-12 * (1 + fabs(psn[k])));
        CHECK_STATUS(rfx_pce_basis_1d(&ml[2], 3, -1.0, psi), RFX_EINVAL);
    }
    rfx_pce_free(a);
    rfx_pce_free(b);
    a = b = NULL;
    {
        double keep = X[7 * d + 2];
        X[7 * d + 2] = -1.0;
        p.marginals = ml;
        CHECK_STATUS(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &a), RFX_EPARSE);
        CHECK(a == NULL);
        X[7 * d + 2] = keep;
    }

    /* the families fitted to the columns */
    rfx_marginal fam[3], box[3];
    rfx__data_marginals(rfx_cmat_of(X, n, d), fam);
    rfx__range_marginals(rfx_cmat_of(X, n, d), box);
    CHECK(fam[0].kind == RFX_MARGINAL_UNIFORM && fam[0].a == box[0].a && fam[0].b == box[0].b);
    CHECK(fam[1].kind == RFX_MARGINAL_NORMAL && fam[2].kind == RFX_MARGINAL_LOGNORMAL);
    double m1 = 0, s1 = 0, m2 = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) {
        m1 += X[i * d + 1] / (double)n;
        m2 += L[i * d + 2] / (double)n;
    }
    for (size_t i = 0; i < n; i++) {
        s1 += (X[i * d + 1] - m1) * (X[i * d + 1] - m1) / (double)n;
        s2 += (L[i * d + 2] - m2) * (L[i * d + 2] - m2) / (double)n;
    }
    CHECK_NEAR(fam[1].a, m1, 1e-12);
    CHECK_NEAR(fam[1].b, sqrt(s1), 1e-12);
    CHECK_NEAR(fam[2].a, m2, 1e-12);
    CHECK_NEAR(fam[2].b, sqrt(s2), 1e-12);
    {
        /* an exponential column: likelier as lognormal than as uniform,
         * but log x is skewed (-1.14), so it stays uniform; its log is
         * then normal enough */
        double *E = malloc(n * sizeof *E);
        rfx_marginal fe;
        for (size_t i = 0; i < n; i++) E[i] = -log(1.0 - rfx_test_uniform(&r));
        rfx__data_marginals(rfx_cmat_of(E, n, 1), &fe);
        CHECK(fe.kind == RFX_MARGINAL_UNIFORM);
        for (size_t i = 0; i < n; i++) E[i] = exp(X[i * d + 1]); /* lognormal (1.5, 0.4) */
        rfx__data_marginals(rfx_cmat_of(E, n, 1), &fe);
        CHECK(fe.kind == RFX_MARGINAL_LOGNORMAL);
        free(E);
    }

    /* marginals_from_data: the explicit fit of lower corrected LOO error */
    rfx_pce *u = NULL, *f = NULL, *c = NULL;
    p.method = RFX_PCE_METHOD_LARS;
    p.degree_min = 1;
    p.auto_basis = 1;
    p.marginals = box;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &u));
    p.marginals = fam;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &f));
    p.marginals = NULL;
    p.marginals_from_data = 1;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &c));
    if (u && f && c) {
        rfx_pce_info iu, iff, ic;
        CHECK_OK(rfx_pce_get_info(u, &iu));
        CHECK_OK(rfx_pce_get_info(f, &iff));
        CHECK_OK(rfx_pce_get_info(c, &ic));
        printf("marginals from data: uniform LOO %.3g, fitted families LOO %.3g\n",
               iu.loo_corrected, iff.loo_corrected);
        const int fams = iff.loo_corrected < iu.loo_corrected;
        CHECK(fams); /* the lognormal input is far from uniform here */
        const rfx_pce *best = fams ? f : u;
        CHECK(ic.loo_corrected == (fams ? iff : iu).loo_corrected);
        CHECK(rfx_pce_marginals(c)[2].kind == (fams ? RFX_MARGINAL_LOGNORMAL
                                                    : RFX_MARGINAL_UNIFORM));
        double pc[8], pbst[8];
        CHECK_OK(rfx_pce_predict(c, rfx_cmat_of(X, 8, d), pc));
        CHECK_OK(rfx_pce_predict(best, rfx_cmat_of(X, 8, d), pbst));
        for (int i = 0; i < 8; i++) CHECK(pc[i] == pbst[i]); /* inside the rows' range */
        CHECK(rfx__pce_span(c) != NULL && rfx__pce_span(f) == NULL);
        /* past the largest x2: linear in t = (log x2 - mu) / sigma */
        const double *span = rfx__pce_span(c);
        double hi = span[d + 2], pt[4 * 3], v[4], t[4];
        for (int q = 0; q < 4; q++) {
            pt[q * 3 + 0] = 3.0;
            pt[q * 3 + 1] = 1.2;
            pt[q * 3 + 2] = hi * exp(0.5 * q); /* q = 0: the edge itself */
            t[q] = (log(pt[q * 3 + 2]) - fam[2].a) / fam[2].b;
        }
        CHECK_OK(rfx_pce_predict(c, rfx_cmat_of(pt, 4, d), v));
        double v0;
        CHECK_OK(rfx_pce_predict(f, rfx_cmat_of(pt, 1, d), &v0)); /* the polynomial at the edge */
        CHECK_NEAR(v[0], v0, 1e-12 * (1 + fabs(v0)));
        double slope = (v[1] - v[0]) / (t[1] - t[0]);
        for (int q = 2; q < 4; q++)
            CHECK_NEAR(v[q], v[0] + slope * (t[q] - t[0]), 1e-9 * (1 + fabs(v[q])));
        double vf[4];
        CHECK_OK(rfx_pce_predict(f, rfx_cmat_of(pt, 4, d), vf));
        CHECK(fabs(vf[3] - v[3]) > 1e-6); /* the polynomial itself goes on curving */
        /* the model file keeps the span and the kind (version 5) */
        rfx_model *mod = NULL, *back = NULL;
        void *buf = NULL;
        size_t len = 0;
        CHECK_OK(rfx_model_from_pce(c, &mod));
        if (mod) CHECK_OK(rfx_model_save_buffer(mod, &buf, &len));
        if (buf) {
            CHECK(((unsigned char *)buf)[8] == 5);
            CHECK_OK(rfx_model_load_buffer(buf, len, &back));
        }
        if (back) {
            double w[4];
            CHECK_OK(rfx_model_predict(back, rfx_cmat_of(pt, 4, d), rfx_mat_of(w, 4, 1), rfx_mat_of(NULL, 0, 0)));
            for (int q = 0; q < 4; q++) CHECK(w[q] == v[q]);
        }
        rfx_buffer_free(buf);
        rfx_model_free(mod);
        rfx_model_free(back);
    }
    rfx_pce_free(u);
    rfx_pce_free(f);
    rfx_pce_free(c);
    /* uniform columns alone: one fit, no span, as before */
    for (size_t i = 0; i < n; i++) X[i * d + 1] = 1 + rfx_test_uniform(&r), X[i * d + 2] = 2 + rfx_test_uniform(&r);
    rfx__data_marginals(rfx_cmat_of(X, n, d), fam);
    for (size_t j = 0; j < d; j++) CHECK(fam[j].kind == RFX_MARGINAL_UNIFORM);
    c = NULL;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &c));
    if (c) CHECK(rfx__pce_span(c) == NULL);
    rfx_pce_free(c);
    free(X);
    free(L);
    free(y);
}

/* The automatic sweep's early stop. On noisy data from a smooth function
 * in d = 6 (degrees 1..10, no pairwise basis, nothing screened) the
 * corrected LOO error is least at a low degree and grows fast beyond it,
 * so the sweep ends two degrees after it rises past twice the best; on a
 * Legendre polynomial of degree 6 in one input (plus a linear term in
 * another, d = 2), the error is flat over degrees 1 to 5, which must not
 * end the sweep. Both give the model of the full sweep 1..10, term by
 * term. */
static void test_sweep_patience(void)
{
    const size_t n = 200, d = 6;
    rfx_test_rng r = {2718};
    double *X = malloc(n * d * sizeof *X), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        double *x = X + i * d;
        for (size_t j = 0; j < d; j++) x[j] = rfx_test_uniform(&r);
        y[i] = exp(0.8 * x[0]) * sin(2 * x[1]) + x[2] * x[3] + 0.3 * x[4] + 0.2 * x[5] * x[5] +
               0.02 * rfx_test_normal(&r);
    }
    rfx_pce_params p = rfx_pce_params_default();
    p.method = RFX_PCE_METHOD_LARS;
    p.degree_min = 1;
    p.marginals_from_data = 1;
    rfx_pce_info ia;
    memset(&ia, 0, sizeof ia);
    auto_is_sweep(&p, rfx_cmat_of(X, n, d), y, "sweep patience", &ia);
    CHECK(ia.degree_max == 10 && ia.n_screened == 0);
    CHECK(ia.degree + 3 < 10); /* the stop can come before degree 10 */
    /* a plateau: y = P6(x0) + 0.3 x1 on [-1, 1]^2 */
    const size_t d2 = 2;
    for (size_t i = 0; i < n; i++) {
        double *x = X + i * d2, t;
        for (size_t j = 0; j < d2; j++) x[j] = 2 * rfx_test_uniform(&r) - 1;
        t = x[0] * x[0];
        y[i] = (((231 * t - 315) * t + 105) * t - 5) / 16 + 0.3 * x[1] +
               0.001 * rfx_test_normal(&r);
    }
    memset(&ia, 0, sizeof ia);
    p.degree_min = 1;
    auto_is_sweep(&p, rfx_cmat_of(X, n, d2), y, "sweep over a plateau", &ia);
    CHECK(ia.degree >= 6 && ia.loo_corrected < 1e-3);
    free(X);
    free(y);
}

int main(void)
{
    test_lognormal_inputs();
    test_weights();
    test_linear_continuation();
    test_auto_basis();
    test_screening();
    test_auto_high_degree();
    test_hyperbolic_basis();
    test_sweep_patience();
    test_orthonormality();
    test_exact_polynomial();
    test_sobol_assembled();
    test_sobol_second();
    test_basis_sets();
    test_loo_bruteforce();
    test_degree_selection();
    test_lars_support();
    test_threads();
    test_errors();
    test_params_check();
    test_ishigami();
    test_gfunction();
    return rfx_test_finish("test_pce");
}
