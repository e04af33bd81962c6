/* SPDX-License-Identifier: BSD-3-Clause */
/* l1 solvers (rfx/l1.h) checked against their optimality conditions:
 *  - lasso: (1/m) A_j^T r = lambda w_j sign(c_j) on the support, |.| <= lambda
 *    w_j off it (KKT), for plain, weighted, intercept and unpolished fits;
 *  - BPDN: |r| = sigma and A^T r / |A^T r|_inf a subgradient of |c|_1;
 *  - recovery of a k-sparse vector from Gaussian measurements (BPDN, HTP);
 *  - the path (monotone support growth, KKT at every point) and k-fold CV
 *    (a lambda with small error on fresh data);
 *  - bitwise identical results for 1 and 2 threads; every error path. */
#include "internal.h"
#include "rfx/l1.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A (m x N) with N(0, 1/m) entries: unit column norms in expectation. */
static double *gaussian(rfx_test_rng *r, size_t m, size_t N)
{
    double *A = malloc(m * N * sizeof *A);
    double s = 1.0 / sqrt((double)m);
    for (size_t i = 0; i < m * N; i++) A[i] = s * rfx_test_normal(r);
    return A;
}

/* A k-sparse vector: supports spread by a stride, values +-(1 + U(0,1)). */
static double *sparse_vec(rfx_test_rng *r, size_t N, size_t k)
{
    double *c = calloc(N, sizeof *c);
    for (size_t t = 0; t < k; t++) {
        size_t j = (t * 37 + 5) % N;
        double v = 1 + rfx_test_uniform(r);
        c[j] = rfx_test_uniform(r) < 0.5 ? -v : v;
    }
    return c;
}

/* y = A c + b + noise sd */
static double *targets(rfx_test_rng *r, const double *A, size_t m, size_t N, const double *c,
                       double b, double sd)
{
    double *y = malloc(m * sizeof *y);
    for (size_t i = 0; i < m; i++) {
        double s = b;
        for (size_t j = 0; j < N; j++) s += A[i * N + j] * c[j];
        y[i] = s + sd * rfx_test_normal(r);
    }
    return y;
}

/* r = y - A c - b (naive loops, independent of the library) */
static double *residual(const double *A, size_t m, size_t N, const double *y, const double *c,
                        double b)
{
    double *r = malloc(m * sizeof *r);
    for (size_t i = 0; i < m; i++) {
        double s = 0;
        for (size_t j = 0; j < N; j++) s += A[i * N + j] * c[j];
        r[i] = y[i] - s - b;
    }
    return r;
}

static double norm2(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i] * v[i];
    return sqrt(s);
}

/* g_j = (1/m) A_c,j^T r (centred columns when intercept; r sums to 0 then) */
static double *correlations(const double *A, size_t m, size_t N, const double *r, int intercept)
{
    double *g = calloc(N, sizeof *g);
    double rs = 0;
    for (size_t i = 0; i < m; i++) rs += r[i];
    for (size_t j = 0; j < N; j++) {
        double s = 0, mu = 0;
        for (size_t i = 0; i < m; i++) {
            s += A[i * N + j] * r[i];
            mu += A[i * N + j];
        }
        g[j] = (s - (intercept ? mu / (double)m * rs : 0.0)) / (double)m;
    }
    return g;
}

/* The largest violation of the lasso KKT conditions, relative to lambda w_j:
 * |g_j - lambda w_j sign(c_j)| on the support, max(0, |g_j| - lambda w_j)
 * off it. */
static double kkt_violation(const double *A, size_t m, size_t N, const double *y,
                            const double *c, double b, double lam, const double *w, int intercept)
{
    double *r = residual(A, m, N, y, c, b);
    double *g = correlations(A, m, N, r, intercept);
    double worst = 0;
    for (size_t j = 0; j < N; j++) {
        double t = lam * (w ? w[j] : 1.0), v;
        if (c[j] != 0)
            v = fabs(g[j] - t * (c[j] > 0 ? 1 : -1)) / t;
        else
            v = fmax(0.0, fabs(g[j]) - t) / t;
        if (v > worst) worst = v;
    }
    free(r);
    free(g);
    return worst;
}

static size_t nnz(const double *c, size_t N)
{
    size_t k = 0;
    for (size_t j = 0; j < N; j++) k += c[j] != 0;
    return k;
}

static double rel_err(const double *a, const double *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return sqrt(num / den);
}

/* ---- lasso -------------------------------------------------------------- */

static void test_lasso_kkt(void)
{
    rfx_test_rng rng = {11};
    const size_t m = 200, N = 500;
    double *A = gaussian(&rng, m, N), *c0 = sparse_vec(&rng, N, 20);
    double *y = targets(&rng, A, m, N, c0, 0.0, 0.1);
    double *c = malloc(N * sizeof *c), *w = malloc(N * sizeof *w);
    for (size_t j = 0; j < N; j++) w[j] = 0.5 + rfx_test_uniform(&rng);
    rfx_cmat Am = rfx_cmat_of(A, m, N);

    rfx_l1_params p = rfx_l1_params_default();
    double lmax;
    CHECK_OK(rfx_l1_lambda_max(&p, Am, y, &lmax));
    {
        double *z = calloc(N, sizeof *z);
        double *r = residual(A, m, N, y, z, 0), *g = correlations(A, m, N, r, 0), mx = 0;
        for (size_t j = 0; j < N; j++) mx = fmax(mx, fabs(g[j]));
        CHECK_NEAR(lmax, mx, 1e-12 * mx);
        free(z);
        free(r);
        free(g);
    }
    /* plain, weighted, with intercept, and without polishing (tight tol) */
    for (int variant = 0; variant < 4; variant++) {
        p = rfx_l1_params_default();
        p.lambda = 0.05 * lmax;
        if (variant == 1) p.weights = w;
        if (variant == 2) p.fit_intercept = 1;
        if (variant == 3) {
            p.polish = 0;
            p.tol = 1e-14;
        }
        rfx_l1_report rep;
        double b = 0;
        CHECK_OK(rfx_l1_fit(&p, Am, y, c, &b, &rep));
        double kkt = kkt_violation(A, m, N, y, c, b, p.lambda, p.weights, p.fit_intercept);
        printf("lasso variant %d: nnz %zu, sweeps %zu, passes %zu, gap %.3g, polished %d, "
               "KKT violation %.3g\n", variant, rep.n_nonzero, rep.iterations, rep.passes,
               rep.duality_gap, rep.polished, kkt);
        CHECK_MSG(kkt <= 1e-6, "lasso variant %d: KKT violation %.3g", variant, kkt);
        CHECK(rep.converged);
        CHECK(rep.constraint_met);
        CHECK(rep.duality_gap <= p.tol);
        CHECK(variant == 3 ? !rep.polished : rep.polished);
        CHECK(rep.n_nonzero == nnz(c, N));
        CHECK(rep.n_nonzero > 5 && rep.n_nonzero < m);
        double *r = residual(A, m, N, y, c, b);
        CHECK_NEAR(rep.residual_norm, norm2(r, m), 1e-10 * norm2(y, m));
        double l1 = 0;
        for (size_t j = 0; j < N; j++) l1 += fabs(c[j]);
        CHECK_NEAR(rep.l1_norm, l1, 1e-12 * l1);
        CHECK_NEAR(rep.lambda, p.lambda, 0);
        CHECK(isnan(rep.cv_mse));
        if (variant == 2) {
            double rs = 0;
            for (size_t i = 0; i < m; i++) rs += r[i];
            CHECK_NEAR(rs, 0, 1e-10 * norm2(y, m));
            CHECK_NEAR(rep.intercept, b, 0);
        } else {
            CHECK(b == 0 && rep.intercept == 0);
        }
        free(r);
    }
    /* lambda >= lambda_max gives exactly 0 */
    p = rfx_l1_params_default();
    p.lambda = lmax * 1.0000001;
    rfx_l1_report rep;
    CHECK_OK(rfx_l1_fit(&p, Am, y, c, NULL, &rep));
    CHECK(nnz(c, N) == 0 && rep.converged);
    p.lambda = lmax * 0.98;
    CHECK_OK(rfx_l1_fit(&p, Am, y, c, NULL, &rep));
    CHECK(nnz(c, N) >= 1);
    /* a strided view (A inside a wider array) gives the same answer */
    {
        size_t ld = N + 3;
        double *Aw = malloc(m * ld * sizeof *Aw), *c2 = malloc(N * sizeof *c2);
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < ld; j++) Aw[i * ld + j] = j < N ? A[i * N + j] : NAN;
        rfx_cmat V = {Aw, m, N, ld};
        p.lambda = 0.05 * lmax;
        CHECK_OK(rfx_l1_fit(&p, Am, y, c, NULL, NULL));
        CHECK_OK(rfx_l1_fit(&p, V, y, c2, NULL, NULL));
        /* the BLAS may take other kernels for another leading dimension:
         * equal to the solver's tolerance, not bitwise */
        double dc = 0, cmax = 0;
        for (size_t j = 0; j < N; j++) {
            dc = fmax(dc, fabs(c[j] - c2[j]));
            cmax = fmax(cmax, fabs(c[j]));
        }
        CHECK_MSG(dc <= 1e-8 * cmax, "strided view: coefficients differ by %.3g", dc);
        free(Aw);
        free(c2);
    }
    free(A);
    free(c0);
    free(y);
    free(c);
    free(w);
}

/* Small lambda with m << N: the lasso nears interpolation, its support
 * reaches the rank of A (m, or m - 1 when centred), where coordinate descent
 * crawls; the exact active-set solve (with its proximal basis exchange)
 * must still reach the KKT conditions. */
static void test_lasso_interpolating(void)
{
    rfx_test_rng rng = {13};
    const size_t m = 40, N = 300;
    double *A = gaussian(&rng, m, N), *c0 = sparse_vec(&rng, N, 30);
    double *y = targets(&rng, A, m, N, c0, 1.0, 0.5);
    double *c = malloc(N * sizeof *c);
    rfx_cmat Am = rfx_cmat_of(A, m, N);
    for (int intercept = 0; intercept < 2; intercept++) {
        rfx_l1_params p = rfx_l1_params_default();
        p.fit_intercept = intercept;
        double lmax, b = 0;
        CHECK_OK(rfx_l1_lambda_max(&p, Am, y, &lmax));
        for (int e = 3; e <= 6; e++) {
            p.lambda = lmax * pow(10.0, -e);
            rfx_l1_report rep;
            CHECK_OK(rfx_l1_fit(&p, Am, y, c, &b, &rep));
            double kkt = kkt_violation(A, m, N, y, c, b, p.lambda, NULL, intercept);
            printf("interpolating: intercept %d, lambda = 1e-%d lambda_max: nnz %zu (rank %zu), "
                   "sweeps %zu, polished %d, KKT violation %.3g\n", intercept, e, rep.n_nonzero,
                   m - (size_t)intercept, rep.iterations, rep.polished, kkt);
            CHECK_MSG(kkt <= 1e-6, "interpolating %d 1e-%d: KKT violation %.3g", intercept, e, kkt);
            CHECK(rep.converged && rep.polished);
            CHECK(rep.n_nonzero <= m - (size_t)intercept);
        }
    }
    free(A);
    free(c0);
    free(y);
    free(c);
}

/* ---- BPDN --------------------------------------------------------------- */

static void test_bpdn_kkt(void)
{
    rfx_test_rng rng = {23};
    const size_t m = 100, N = 400;
    double *A = gaussian(&rng, m, N), *c0 = sparse_vec(&rng, N, 15);
    double *y = targets(&rng, A, m, N, c0, 0.0, 0.3);
    double *c = malloc(N * sizeof *c);
    rfx_cmat Am = rfx_cmat_of(A, m, N);
    double ynorm = norm2(y, m);
    for (int variant = 0; variant < 3; variant++) {
        rfx_l1_params p = rfx_l1_params_default();
        p.method = RFX_L1_METHOD_BPDN;
        double sigma = 0.1 * ynorm;
        if (variant == 1) {
            p.eta = 0.1 * ynorm / sqrt((double)m); /* the same bound through eta */
        } else {
            p.sigma = sigma;
        }
        if (variant == 2) p.fit_intercept = 1;
        rfx_l1_report rep;
        double b = 0;
        CHECK_OK(rfx_l1_fit(&p, Am, y, c, &b, &rep));
        double *r = residual(A, m, N, y, c, b);
        double rn = norm2(r, m);
        double *g = correlations(A, m, N, r, p.fit_intercept);
        double gmax = 0;
        for (size_t j = 0; j < N; j++) gmax = fmax(gmax, fabs(g[j]));
        /* subgradient: g / |g|_inf = sign(c_j) on the support */
        double worst = 0;
        for (size_t j = 0; j < N; j++)
            if (c[j] != 0) worst = fmax(worst, fabs(g[j] / gmax - (c[j] > 0 ? 1 : -1)));
        printf("bpdn variant %d: |r| / sigma - 1 = %.3g, nnz %zu, root steps %zu, sweeps %zu, "
               "passes %zu, subgradient violation %.3g\n", variant, rn / sigma - 1, rep.n_nonzero,
               rep.root_iter, rep.iterations, rep.passes, worst);
        CHECK_MSG(fabs(rn / sigma - 1) <= p.sigma_tol, "bpdn %d: |r| = %.17g, sigma = %.17g",
                  variant, rn, sigma);
        CHECK_MSG(worst <= 1e-6, "bpdn %d: subgradient violation %.3g", variant, worst);
        CHECK(rep.converged && rep.constraint_met);
        CHECK_NEAR(rep.sigma, sigma, 1e-12 * sigma);
        CHECK_NEAR(rep.residual_norm, rn, 1e-9 * rn);
        CHECK_NEAR(rep.lambda, gmax, 1e-8 * gmax);
        CHECK(rep.n_nonzero == nnz(c, N) && rep.n_nonzero > 0);
        /* it is the lasso solution at the multiplier */
        rfx_l1_params q = rfx_l1_params_default();
        q.lambda = rep.lambda;
        q.fit_intercept = p.fit_intercept;
        double *cl = malloc(N * sizeof *cl), bl = 0;
        CHECK_OK(rfx_l1_fit(&q, Am, y, cl, &bl, NULL));
        CHECK_MSG(rel_err(c, cl, N) <= 1e-6, "bpdn %d vs lasso: %.3g", variant, rel_err(c, cl, N));
        free(cl);
        free(r);
        free(g);
    }
    /* y already within sigma: c = 0 */
    rfx_l1_params p = rfx_l1_params_default();
    p.method = RFX_L1_METHOD_BPDN;
    p.sigma = 1.01 * ynorm;
    rfx_l1_report rep;
    CHECK_OK(rfx_l1_fit(&p, Am, y, c, NULL, &rep));
    CHECK(nnz(c, N) == 0 && rep.converged && rep.constraint_met);
    CHECK_NEAR(rep.residual_norm, ynorm, 1e-12 * ynorm);
    free(A);
    free(c0);
    free(y);
    free(c);
}

/* sigma below the least-squares residual (m > N: A has full column rank, so
 * |r| >= |r_LS| > 0): infeasible, and the report says so. */
static void test_bpdn_infeasible(void)
{
    rfx_test_rng rng = {29};
    const size_t m = 60, N = 20;
    double *A = gaussian(&rng, m, N), *c0 = sparse_vec(&rng, N, 5);
    double *y = targets(&rng, A, m, N, c0, 0.0, 0.5);
    double *c = malloc(N * sizeof *c);
    rfx_l1_params p = rfx_l1_params_default();
    p.method = RFX_L1_METHOD_BPDN;
    p.sigma = 1e-3;
    p.max_root_iter = 60;
    rfx_l1_report rep;
    CHECK_OK(rfx_l1_fit(&p, rfx_cmat_of(A, m, N), y, c, NULL, &rep));
    printf("bpdn infeasible: |r| = %.3g, sigma = %.3g, root steps %zu\n", rep.residual_norm,
           p.sigma, rep.root_iter);
    CHECK(!rep.converged && !rep.constraint_met);
    CHECK(rep.residual_norm > p.sigma);
    free(A);
    free(c0);
    free(y);
    free(c);
}

/* ---- recovery ----------------------------------------------------------- */

static void test_recovery(void)
{
    rfx_test_rng rng = {7};
    const size_t m = 100, N = 400, k = 10;
    double *A = gaussian(&rng, m, N), *c0 = sparse_vec(&rng, N, k);
    double *y = targets(&rng, A, m, N, c0, 0.0, 0.0);
    double *c = malloc(N * sizeof *c);
    rfx_cmat Am = rfx_cmat_of(A, m, N);
    rfx_l1_report rep;

    rfx_l1_params p = rfx_l1_params_default();
    p.method = RFX_L1_METHOD_BPDN;
    p.sigma = 1e-9 * norm2(y, m);
    CHECK_OK(rfx_l1_fit(&p, Am, y, c, NULL, &rep));
    double e = rel_err(c, c0, N);
    printf("recovery bpdn: rel err %.3g, nnz %zu, root steps %zu, sweeps %zu, polished %d\n", e,
           rep.n_nonzero, rep.root_iter, rep.iterations, rep.polished);
    CHECK_MSG(e <= 1e-6, "bpdn recovery: relative error %.3g", e);
    CHECK(rep.converged && rep.constraint_met);

    /* basis pursuit (sigma = 0) */
    p.sigma = 0;
    CHECK_OK(rfx_l1_fit(&p, Am, y, c, NULL, &rep));
    e = rel_err(c, c0, N);
    printf("recovery bp (sigma = 0): rel err %.3g, |r| / |y| = %.3g\n", e,
           rep.residual_norm / norm2(y, m));
    CHECK_MSG(e <= 1e-5, "bp recovery: relative error %.3g", e);
    CHECK(rep.residual_norm <= p.sigma_tol * norm2(y, m));

    p = rfx_l1_params_default();
    p.method = RFX_L1_METHOD_HTP;
    p.sparsity = k;
    CHECK_OK(rfx_l1_fit(&p, Am, y, c, NULL, &rep));
    e = rel_err(c, c0, N);
    printf("recovery htp: rel err %.3g, iterations %zu\n", e, rep.iterations);
    CHECK_MSG(e <= 1e-6, "htp recovery: relative error %.3g", e);
    CHECK(rep.converged && rep.n_nonzero == k);
    CHECK(isnan(rep.lambda) && isnan(rep.duality_gap));

    /* HTP on raw (unnormalised) columns with an offset: the default step
     * adapts, the intercept is recovered */
    double *A2 = malloc(m * N * sizeof *A2);
    for (size_t i = 0; i < m * N; i++) A2[i] = 7.0 * A[i];
    double *y2 = malloc(m * sizeof *y2);
    for (size_t i = 0; i < m; i++) y2[i] = 7.0 * y[i] + 5.0;
    p.fit_intercept = 1;
    double b = 0;
    CHECK_OK(rfx_l1_fit(&p, rfx_cmat_of(A2, m, N), y2, c, &b, &rep));
    e = rel_err(c, c0, N);
    printf("recovery htp (scaled, intercept): rel err %.3g, intercept %.12g\n", e, b);
    CHECK(e <= 1e-6);
    CHECK_NEAR(b, 5.0, 1e-6);
    free(A2);
    free(y2);
    free(A);
    free(c0);
    free(y);
    free(c);
}

/* HTP with noise: the result is least squares on its support. */
static void test_htp_ls(void)
{
    rfx_test_rng rng = {31};
    const size_t m = 80, N = 200, s = 12;
    double *A = gaussian(&rng, m, N), *c0 = sparse_vec(&rng, N, 8);
    double *y = targets(&rng, A, m, N, c0, 0.0, 0.05);
    double *c = malloc(N * sizeof *c);
    rfx_l1_params p = rfx_l1_params_default();
    p.method = RFX_L1_METHOD_HTP;
    p.sparsity = s;
    rfx_l1_report rep;
    CHECK_OK(rfx_l1_fit(&p, rfx_cmat_of(A, m, N), y, c, NULL, &rep));
    CHECK(rep.n_nonzero == s);
    double *r = residual(A, m, N, y, c, 0), *g = correlations(A, m, N, r, 0);
    double worst = 0, gmax = 0;
    for (size_t j = 0; j < N; j++) {
        gmax = fmax(gmax, fabs(g[j]));
        if (c[j] != 0) worst = fmax(worst, fabs(g[j]));
    }
    printf("htp least squares: max |A_S^T r| / max |A^T r| = %.3g, iterations %zu\n",
           worst / gmax, rep.iterations);
    CHECK(worst <= 1e-8 * gmax);
    CHECK_NEAR(rep.residual_norm, norm2(r, m), 1e-10);
    free(r);
    free(g);
    free(A);
    free(c0);
    free(y);
    free(c);
}

/* ---- path and cross-validation ------------------------------------------ */

static void test_path(void)
{
    rfx_test_rng rng = {41};
    const size_t m = 150, N = 600, n = 30;
    double *A = gaussian(&rng, m, N), *c0 = sparse_vec(&rng, N, 25);
    double *y = targets(&rng, A, m, N, c0, 2.0, 0.1);
    double *C = malloc(n * N * sizeof *C), lam[30], b[30];
    rfx_l1_params p = rfx_l1_params_default();
    p.n_lambdas = n;
    p.lambda_min_ratio = 1e-2;
    p.fit_intercept = 1;
    rfx_cmat Am = rfx_cmat_of(A, m, N);
    CHECK_OK(rfx_l1_path(&p, Am, y, lam, rfx_mat_of(C, n, N), b));
    double lmax;
    CHECK_OK(rfx_l1_lambda_max(&p, Am, y, &lmax));
    CHECK_NEAR(lam[0], lmax, 0);
    CHECK_NEAR(lam[n - 1], 1e-2 * lmax, 1e-12 * lmax);
    CHECK(nnz(C, N) == 0);
    size_t drops = 0, prev = 0;
    double worst = 0;
    for (size_t t = 0; t < n; t++) {
        if (t > 0) CHECK_NEAR(lam[t] / lam[t - 1], pow(1e-2, 1.0 / (double)(n - 1)), 1e-12);
        size_t k = nnz(C + t * N, N);
        if (k < prev) drops++;
        prev = k;
        worst = fmax(worst, kkt_violation(A, m, N, y, C + t * N, b[t], lam[t], NULL, 1));
    }
    printf("path: nnz %zu -> %zu, %zu decreases, worst KKT violation %.3g\n", nnz(C, N), prev,
           drops, worst);
    CHECK(prev > 25);
    CHECK(drops <= n / 5);
    CHECK(worst <= 1e-6);
    /* a user grid, and the fit at one of its points equals the path's */
    double grid[3] = {0.5 * lmax, 0.1 * lmax, 0.02 * lmax};
    p.lambdas = grid;
    p.n_lambdas = 3;
    CHECK_OK(rfx_l1_path(&p, Am, y, lam, rfx_mat_of(C, 3, N), b));
    CHECK(memcmp(lam, grid, sizeof grid) == 0);
    double *c = malloc(N * sizeof *c), bc;
    rfx_l1_params q = rfx_l1_params_default();
    q.fit_intercept = 1;
    q.lambda = grid[2];
    CHECK_OK(rfx_l1_fit(&q, Am, y, c, &bc, NULL));
    CHECK(rel_err(c, C + 2 * N, N) <= 1e-9);
    CHECK_NEAR(bc, b[2], 1e-9);
    free(c);
    free(A);
    free(c0);
    free(y);
    free(C);
}

static void test_cv(void)
{
    rfx_test_rng rng = {53};
    const size_t m = 200, N = 500, mt = 400;
    const double sd = 0.05;
    double *A = gaussian(&rng, m + mt, N), *c0 = sparse_vec(&rng, N, 15);
    double *yall = targets(&rng, A, m + mt, N, c0, 1.0, sd);
    rfx_cmat Am = rfx_cmat_of(A, m, N);
    rfx_l1_params p = rfx_l1_params_default();
    p.select = RFX_SELECT_KFOLD;
    p.n_lambdas = 40;
    p.fit_intercept = 1;
    double lam[40], cv[40];
    size_t best;
    CHECK_OK(rfx_l1_cv(&p, Am, yall, lam, cv, &best));
    double *c = malloc(N * sizeof *c), b;
    rfx_l1_report rep;
    CHECK_OK(rfx_l1_fit(&p, Am, yall, c, &b, &rep));
    CHECK_NEAR(rep.lambda, lam[best], 0);
    CHECK_NEAR(rep.cv_mse, cv[best], 0);
    CHECK(best > 0 && best < p.n_lambdas - 1);
    for (size_t t = 0; t < p.n_lambdas; t++) CHECK(cv[t] >= cv[best]);
    /* error on fresh rows near the noise level; far below Var(y) */
    double *yt = yall + m, mse = 0, var = 0, mean = 0;
    for (size_t i = 0; i < mt; i++) mean += yt[i] / (double)mt;
    for (size_t i = 0; i < mt; i++) {
        double f = b;
        for (size_t j = 0; j < N; j++) f += A[(m + i) * N + j] * c[j];
        mse += (yt[i] - f) * (yt[i] - f) / (double)mt;
        var += (yt[i] - mean) * (yt[i] - mean) / (double)mt;
    }
    printf("cv: lambda %.4g (index %zu of %zu), cv mse %.4g, test mse %.4g, noise %.4g, var(y) "
           "%.4g, nnz %zu\n", rep.lambda, best, p.n_lambdas, rep.cv_mse, mse, sd * sd, var,
           rep.n_nonzero);
    CHECK(mse < 2.0 * sd * sd);
    CHECK(mse < 0.1 * var);
    CHECK(rep.cv_mse < 3.0 * sd * sd);
    /* the extremes of the grid are worse on fresh data: check lambda_max */
    CHECK(cv[0] > 10 * cv[best]);
    free(c);
    free(A);
    free(c0);
    free(yall);
}

/* GCV selection equals the GCV curve computed here from the path, and the
 * early stop of CV and GCV paths changes nothing before it stops. */
static void test_gcv(void)
{
    rfx_test_rng rng = {59};
    const size_t m = 200, N = 500, n = 40, mt = 400;
    const double sd = 0.05;
    double *A = gaussian(&rng, m + mt, N), *c0 = sparse_vec(&rng, N, 15);
    double *y = targets(&rng, A, m + mt, N, c0, 1.0, sd);
    rfx_cmat Am = rfx_cmat_of(A, m, N);
    double *C = malloc(n * N * sizeof *C), lam[40], b[40], gcv[40];
    rfx_l1_params p = rfx_l1_params_default();
    p.n_lambdas = n;
    p.lambda_min_ratio = 1e-4;
    p.fit_intercept = 1;
    CHECK_OK(rfx_l1_path(&p, Am, y, lam, rfx_mat_of(C, n, N), b));
    /* the GCV walk: the smallest score until it has been above 1.5 times
     * the smallest for 5 grid points in a row */
    size_t tb = 0, above = 0, walked = n;
    for (size_t t = 0; t < n; t++) {
        double *r = residual(A, m, N, y, C + t * N, b[t]);
        double rr = norm2(r, m), df = (double)nnz(C + t * N, N) + 1;
        gcv[t] = df < (double)m ? rr * rr / (double)m / ((1 - df / m) * (1 - df / m)) : INFINITY;
        free(r);
        if (gcv[t] < gcv[tb]) tb = t;
        above = gcv[t] > 1.5 * gcv[tb] ? above + 1 : 0;
        if (above == 5 && walked == n) walked = t + 1;
    }
    size_t tmin = 0; /* the whole curve's minimum: near interpolation */
    for (size_t t = 0; t < n; t++)
        if (gcv[t] < gcv[tmin]) tmin = t;
    tb = 0;
    for (size_t t = 0; t < walked; t++)
        if (gcv[t] < gcv[tb]) tb = t;
    printf("gcv: walked %zu of %zu; the whole curve's minimum is at %zu (nnz %zu of m = %zu)\n",
           walked, n, tmin, nnz(C + tmin * N, N), m);
    CHECK(walked < n && tmin >= walked); /* the walk stopped before the artefact */
    double *c = malloc(N * sizeof *c), bc;
    rfx_l1_report rep;
    p.select = RFX_SELECT_GCV;
    CHECK_OK(rfx_l1_fit(&p, Am, y, c, &bc, &rep));
    printf("gcv: chose index %zu of %zu (lambda %.4g, nnz %zu), gcv %.6g (here %.6g)\n", tb, n,
           rep.lambda, rep.n_nonzero, rep.cv_mse, gcv[tb]);
    CHECK(tb > 0 && tb < n - 1);
    CHECK_NEAR(rep.lambda, lam[tb], 0);
    CHECK(fabs(rep.cv_mse - gcv[tb]) <= 1e-9 * gcv[tb]);
    CHECK(rel_err(c, C + tb * N, N) <= 1e-9);
    CHECK_NEAR(bc, b[tb], 1e-9);
    CHECK(kkt_violation(A, m, N, y, c, bc, rep.lambda, NULL, 1) <= 1e-9);
    /* GCV estimates the prediction error: fresh rows near the noise level */
    double mse = 0;
    for (size_t i = m; i < m + mt; i++) {
        double f = bc;
        for (size_t j = 0; j < N; j++) f += A[i * N + j] * c[j];
        mse += (y[i] - f) * (y[i] - f) / (double)mt;
    }
    printf("gcv: test mse %.4g, noise %.4g\n", mse, sd * sd);
    CHECK(mse < 2.0 * sd * sd);
    /* cv_stop_factor 0 means 1.5 for GCV */
    double *c2 = malloc(N * sizeof *c2), b2;
    rfx_l1_report rep2;
    p.cv_stop_factor = 1.5;
    CHECK_OK(rfx_l1_fit(&p, Am, y, c2, &b2, &rep2));
    CHECK(rep2.lambda == rep.lambda && memcmp(c, c2, N * sizeof *c) == 0 && b2 == bc);
    double l1[40], l2[40], e1[40], e2[40];
    size_t best1, best2, n_inf = 0;
    p.select = RFX_SELECT_KFOLD;
    p.cv_stop_factor = 0;
    CHECK_OK(rfx_l1_cv(&p, Am, y, l1, e1, &best1));
    p.cv_stop_factor = 1.5;
    CHECK_OK(rfx_l1_cv(&p, Am, y, l2, e2, &best2));
    for (size_t t = 0; t < n; t++) {
        if (isinf(e2[t])) n_inf++;
        else CHECK(e2[t] == e1[t]);
    }
    printf("cv with early stop: %zu of %zu grid points not reached; best %zu (full %zu)\n",
           n_inf, n, best2, best1);
    CHECK(best1 == best2);
    CHECK(n_inf > 0 && isinf(e2[n - 1]));
    /* validation */
    p.cv_stop_factor = 0.5;
    CHECK_STATUS(rfx_l1_cv(&p, Am, y, l2, e2, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "l1.cv_stop_factor") != NULL);
    free(A);
    free(c0);
    free(y);
    free(C);
    free(c);
    free(c2);
}

/* ---- column normalisation ----------------------------------------------- */

static void test_normalize(void)
{
    rfx_test_rng rng = {61};
    const size_t m = 50, N = 1500; /* two column tiles */
    double *A = rfx_test_matrix(&rng, m, N, -3, 5), *A0 = malloc(m * N * sizeof *A0);
    for (size_t i = 0; i < m; i++) A[i * N + 7] = 0; /* a zero column */
    A[3 * N + 9] = 1e200;                             /* no overflow */
    memcpy(A0, A, m * N * sizeof *A);
    double *sc = malloc(N * sizeof *sc);
    CHECK_OK(rfx_l1_normalize_columns(rfx_mat_of(A, m, N), sc, 0));
    double worst = 0;
    for (size_t j = 0; j < N; j++) {
        if (j == 7) continue;
        double s = 0, s0 = 0;
        for (size_t i = 0; i < m; i++) {
            s += A[i * N + j] * A[i * N + j];
            if (j != 9) s0 += A0[i * N + j] * A0[i * N + j];
        }
        worst = fmax(worst, fabs(sqrt(s) - 1));
        if (j != 9) CHECK_NEAR(sc[j], sqrt(s0), 1e-12 * sqrt(s0));
        for (size_t i = 0; i < m; i += 17) CHECK_NEAR(A[i * N + j] * sc[j], A0[i * N + j],
                                                      1e-13 * fabs(A0[i * N + j]));
    }
    CHECK(worst <= 1e-14);
    CHECK(sc[7] == 1.0);
    CHECK_NEAR(sc[9], 1e200, 1e186);
    for (size_t i = 0; i < m; i++) CHECK(A[i * N + 7] == 0);
    /* fitting on normalised columns and mapping back predicts the same */
    rfx_test_rng r2 = {62};
    double *B = gaussian(&r2, 100, 300), *B0 = malloc(100 * 300 * sizeof *B0);
    for (size_t i = 0; i < 100; i++)
        for (size_t j = 0; j < 300; j++) B[i * 300 + j] *= 1 + (double)(j % 7);
    memcpy(B0, B, sizeof(double) * 100 * 300);
    double *c0 = sparse_vec(&r2, 300, 8), *y = targets(&r2, B, 100, 300, c0, 0, 0);
    double *c = malloc(300 * sizeof *c);
    CHECK_OK(rfx_l1_normalize_columns(rfx_mat_of(B, 100, 300), sc, 1));
    rfx_l1_params p = rfx_l1_params_default();
    p.method = RFX_L1_METHOD_HTP;
    p.sparsity = 8;
    CHECK_OK(rfx_l1_fit(&p, rfx_cmat_of(B, 100, 300), y, c, NULL, NULL));
    for (size_t j = 0; j < 300; j++) c[j] /= sc[j];
    CHECK(rel_err(c, c0, 300) <= 1e-8);
    free(B);
    free(B0);
    free(c0);
    free(y);
    free(c);
    free(A);
    free(A0);
    free(sc);
}

/* ---- threads ------------------------------------------------------------ */

static void test_threads(void)
{
    rfx_test_rng rng = {71};
    const size_t m = 120, N = 2500; /* three column tiles */
    double *A = gaussian(&rng, m, N), *c0 = sparse_vec(&rng, N, 12);
    double *y = targets(&rng, A, m, N, c0, 0.5, 0.05);
    double *c1 = malloc(N * sizeof *c1), *c2 = malloc(N * sizeof *c2);
    rfx_cmat Am = rfx_cmat_of(A, m, N);
    for (int method = 0; method < 3; method++) {
        rfx_l1_params p = rfx_l1_params_default();
        p.method = (rfx_l1_method)method;
        p.fit_intercept = 1;
        p.lambda = 0.01;
        p.sigma = 0.5;
        p.sparsity = 12;
        double b1, b2;
        rfx_l1_report r1, r2;
        p.n_threads = 1;
        CHECK_OK(rfx_l1_fit(&p, Am, y, c1, &b1, &r1));
        p.n_threads = 2;
        CHECK_OK(rfx_l1_fit(&p, Am, y, c2, &b2, &r2));
        CHECK_MSG(memcmp(c1, c2, N * sizeof *c1) == 0 && b1 == b2,
                  "%s: results differ between 1 and 2 threads", rfx_l1_method_name(p.method));
        CHECK(r1.iterations == r2.iterations && r1.passes == r2.passes);
    }
    /* cross-validation too */
    rfx_l1_params p = rfx_l1_params_default();
    p.n_lambdas = 10;
    double l1[10], l2[10], e1[10], e2[10];
    p.n_threads = 1;
    CHECK_OK(rfx_l1_cv(&p, Am, y, l1, e1, NULL));
    p.n_threads = 2;
    CHECK_OK(rfx_l1_cv(&p, Am, y, l2, e2, NULL));
    CHECK(memcmp(l1, l2, sizeof l1) == 0 && memcmp(e1, e2, sizeof e1) == 0);
    free(A);
    free(c0);
    free(y);
    free(c1);
    free(c2);
}

/* ---- errors ------------------------------------------------------------- */

static int cancel_at;
static int count_calls;
static int progress_cb(void *user, const char *stage, double frac)
{
    (void)user;
    (void)stage;
    CHECK(frac >= 0 && frac <= 1);
    return ++count_calls >= cancel_at;
}

#define CHECK_ERR(call, status, needle)                                                    \
    do {                                                                                   \
        CHECK_STATUS(call, status);                                                        \
        CHECK_MSG(strstr(rfx_last_error(), needle) != NULL, "message '%s' lacks '%s'",    \
                  rfx_last_error(), needle);                                               \
    } while (0)

static void test_errors(void)
{
    rfx_test_rng rng = {83};
    const size_t m = 20, N = 30;
    double *A = gaussian(&rng, m, N), *c0 = sparse_vec(&rng, N, 3);
    double *y = targets(&rng, A, m, N, c0, 0, 0.1);
    double c[30], b = 42, lam[5], cv[5], C[5 * 30];
    rfx_cmat Am = rfx_cmat_of(A, m, N);
    rfx_l1_params p;

#define FIT_ERR(setup, status, needle)                                         \
    do {                                                                       \
        p = rfx_l1_params_default();                                           \
        setup;                                                                 \
        for (size_t j_ = 0; j_ < N; j_++) c[j_] = 99;                          \
        b = 42;                                                                \
        CHECK_ERR(rfx_l1_fit(&p, Am, y, c, &b, NULL), status, needle);         \
        CHECK(c[0] == 99 && c[N - 1] == 99 && b == 42);                        \
    } while (0)

    CHECK_ERR(rfx_l1_fit(NULL, Am, y, c, &b, NULL), RFX_EINVAL, "params");
    FIT_ERR(p.method = (rfx_l1_method)7, RFX_EINVAL, "l1.method");
    FIT_ERR(p.lambda = -1, RFX_EINVAL, "l1.lambda");
    FIT_ERR(p.lambda = 0, RFX_EINVAL, "l1.lambda");
    FIT_ERR(p.lambda = NAN, RFX_EINVAL, "l1.lambda");
    FIT_ERR((p.select = RFX_SELECT_GCV, p.cv_stop_factor = 1), RFX_EINVAL, "l1.cv_stop_factor");
    FIT_ERR(p.select = (rfx_select)9, RFX_EINVAL, "l1.select");
    FIT_ERR((p.select = RFX_SELECT_KFOLD, p.n_folds = 1), RFX_EINVAL, "l1.n_folds");
    FIT_ERR((p.select = RFX_SELECT_KFOLD, p.n_folds = m + 1), RFX_EINVAL, "l1.n_folds");
    FIT_ERR((p.select = RFX_SELECT_KFOLD, p.n_lambdas = 0), RFX_EINVAL, "l1.n_lambdas");
    FIT_ERR((p.select = RFX_SELECT_KFOLD, p.lambda_min_ratio = -0.1), RFX_EINVAL,
            "l1.lambda_min_ratio");
    FIT_ERR((p.select = RFX_SELECT_KFOLD, p.lambda_min_ratio = 1.5), RFX_EINVAL,
            "l1.lambda_min_ratio");
    double badgrid[2] = {1.0, -0.5};
    FIT_ERR((p.select = RFX_SELECT_KFOLD, p.lambdas = badgrid, p.n_lambdas = 2), RFX_EINVAL,
            "l1.lambdas[1]");
    FIT_ERR((p.method = RFX_L1_METHOD_BPDN, p.sigma = -1), RFX_EINVAL, "l1.sigma");
    FIT_ERR((p.method = RFX_L1_METHOD_BPDN, p.sigma = NAN), RFX_EINVAL, "l1.sigma");
    FIT_ERR((p.method = RFX_L1_METHOD_BPDN, p.eta = -0.1), RFX_EINVAL, "l1.eta");
    FIT_ERR((p.method = RFX_L1_METHOD_BPDN, p.eta = INFINITY), RFX_EINVAL, "l1.eta");
    FIT_ERR((p.method = RFX_L1_METHOD_BPDN, p.eta = 0.1, p.sigma = 1), RFX_EINVAL, "not both");
    FIT_ERR((p.method = RFX_L1_METHOD_BPDN, p.sigma_tol = 0), RFX_EINVAL, "l1.sigma_tol");
    FIT_ERR((p.method = RFX_L1_METHOD_BPDN, p.sigma_tol = 1), RFX_EINVAL, "l1.sigma_tol");
    FIT_ERR((p.method = RFX_L1_METHOD_BPDN, p.max_root_iter = 0), RFX_EINVAL,
            "l1.max_root_iter");
    FIT_ERR((p.method = RFX_L1_METHOD_HTP, p.sparsity = 0), RFX_EINVAL, "l1.sparsity");
    FIT_ERR((p.method = RFX_L1_METHOD_HTP, p.sparsity = m + 1), RFX_EINVAL, "l1.sparsity");
    FIT_ERR((p.method = RFX_L1_METHOD_HTP, p.sparsity = 3, p.step = -1), RFX_EINVAL, "l1.step");
    FIT_ERR((p.method = RFX_L1_METHOD_HTP, p.sparsity = 3, p.ridge = -1), RFX_EINVAL,
            "l1.ridge");
    double w[30];
    for (size_t j = 0; j < N; j++) w[j] = 1;
    w[17] = 0;
    FIT_ERR(p.weights = w, RFX_EINVAL, "l1.weights[17]");
    double sw[20];
    for (size_t i = 0; i < m; i++) sw[i] = 1;
    sw[3] = -1;
    FIT_ERR(p.sample_weight = sw, RFX_EINVAL, "l1.sample_weight[3]");
    sw[3] = NAN;
    FIT_ERR(p.sample_weight = sw, RFX_EINVAL, "l1.sample_weight[3]");
    for (size_t i = 0; i < m; i++) sw[i] = 0;
    FIT_ERR(p.sample_weight = sw, RFX_EINVAL, "all 20 weights are zero");
    for (size_t i = 0; i < m; i++) sw[i] = i < 4 ? 1.0 : 0.0; /* 4 rows of positive weight */
    FIT_ERR((p.sample_weight = sw, p.select = RFX_SELECT_KFOLD, p.n_folds = 5), RFX_EINVAL,
            "l1.n_folds: must be in 2..4 (the rows of positive weight)");
    FIT_ERR((p.sample_weight = sw, p.method = RFX_L1_METHOD_HTP, p.sparsity = 5), RFX_EINVAL,
            "l1.sparsity: must be in 1..min(m, N) = 4");
    FIT_ERR(p.max_iter = 0, RFX_EINVAL, "l1.max_iter");
    FIT_ERR(p.tol = 0, RFX_EINVAL, "l1.tol");
    FIT_ERR(p.tol = 1, RFX_EINVAL, "l1.tol");
    FIT_ERR(p.n_threads = -1, RFX_EINVAL, "l1.n_threads");

    /* data */
    p = rfx_l1_params_default();
    CHECK_ERR(rfx_l1_fit(&p, rfx_cmat_of(NULL, m, N), y, c, NULL, NULL), RFX_EINVAL, "NULL");
    CHECK_ERR(rfx_l1_fit(&p, rfx_cmat_of(A, 0, N), y, c, NULL, NULL), RFX_EDIM, "0 x 30");
    rfx_cmat bad = {A, m, N, N - 1};
    CHECK_ERR(rfx_l1_fit(&p, bad, y, c, NULL, NULL), RFX_EINVAL, "stride");
    CHECK_ERR(rfx_l1_fit(&p, Am, NULL, c, NULL, NULL), RFX_EINVAL, "y is NULL");
    CHECK_ERR(rfx_l1_fit(&p, Am, y, NULL, NULL, NULL), RFX_EINVAL, "c is NULL");
    p.fit_intercept = 1;
    CHECK_ERR(rfx_l1_fit(&p, Am, y, c, NULL, NULL), RFX_EINVAL, "intercept");
    p.fit_intercept = 0;
    double keep = A[5 * N + 4];
    A[5 * N + 4] = NAN;
    CHECK_ERR(rfx_l1_fit(&p, Am, y, c, NULL, NULL), RFX_EPARSE, "A row 5, column 4");
    A[5 * N + 4] = keep;
    keep = y[3];
    y[3] = INFINITY;
    CHECK_ERR(rfx_l1_fit(&p, Am, y, c, NULL, NULL), RFX_EPARSE, "y[3]");
    y[3] = keep;

    /* path, cv, lambda_max */
    p = rfx_l1_params_default();
    p.n_lambdas = 5;
    CHECK_ERR(rfx_l1_path(&p, Am, y, lam, rfx_mat_of(C, 4, N), NULL), RFX_EDIM, "C is 4 x 30");
    CHECK_ERR(rfx_l1_path(&p, Am, y, lam, rfx_mat_of(C, 5, N - 1), NULL), RFX_EDIM, "n_lambdas");
    CHECK_ERR(rfx_l1_path(&p, Am, y, NULL, rfx_mat_of(C, 5, N), NULL), RFX_EINVAL, "lambdas");
    p.fit_intercept = 1;
    CHECK_ERR(rfx_l1_path(&p, Am, y, lam, rfx_mat_of(C, 5, N), NULL), RFX_EINVAL, "intercepts");
    p.fit_intercept = 0;
    p.method = RFX_L1_METHOD_HTP; /* ignored by the path */
    CHECK_OK(rfx_l1_path(&p, Am, y, lam, rfx_mat_of(C, 5, N), NULL));
    CHECK_ERR(rfx_l1_cv(&p, Am, y, NULL, cv, NULL), RFX_EINVAL, "lambdas");
    p.n_folds = 1;
    CHECK_ERR(rfx_l1_cv(&p, Am, y, lam, cv, NULL), RFX_EINVAL, "l1.n_folds");
    p.n_folds = 5;
    CHECK_ERR(rfx_l1_lambda_max(&p, Am, y, NULL), RFX_EINVAL, "out");
    CHECK_ERR(rfx_l1_lambda_max(NULL, Am, y, lam), RFX_EINVAL, "params");

    /* method names */
    rfx_l1_method meth;
    CHECK_OK(rfx_l1_method_from_name("bpdn", &meth));
    CHECK(meth == RFX_L1_METHOD_BPDN);
    CHECK(strcmp(rfx_l1_method_name(RFX_L1_METHOD_HTP), "htp") == 0);
    CHECK_ERR(rfx_l1_method_from_name("omp", &meth), RFX_EINVAL, "'omp'");

    /* normalisation */
    double sc[30];
    CHECK_ERR(rfx_l1_normalize_columns(rfx_mat_of(A, m, N), NULL, 0), RFX_EINVAL, "scales");
    CHECK_ERR(rfx_l1_normalize_columns(rfx_mat_of(A, m, N), sc, -2), RFX_EINVAL, "n_threads");
    keep = A[2 * N + 2];
    A[2 * N + 2] = NAN;
    CHECK_ERR(rfx_l1_normalize_columns(rfx_mat_of(A, m, N), sc, 0), RFX_EPARSE, "row 2");
    A[2 * N + 2] = keep;

    /* HTP with ridge 0 on two equal columns: singular */
    double *D = malloc(m * N * sizeof *D);
    memcpy(D, A, m * N * sizeof *D);
    for (size_t i = 0; i < m; i++) D[i * N + 1] = D[i * N + 0];
    double *yd = malloc(m * sizeof *yd);
    for (size_t i = 0; i < m; i++) yd[i] = 3 * D[i * N + 0];
    p = rfx_l1_params_default();
    p.method = RFX_L1_METHOD_HTP;
    p.sparsity = 2;
    p.ridge = 0;
    CHECK_ERR(rfx_l1_fit(&p, rfx_cmat_of(D, m, N), yd, c, NULL, NULL), RFX_ENUMERIC, "l1.ridge");
    p.ridge = 1e-12; /* the default: defined */
    CHECK_OK(rfx_l1_fit(&p, rfx_cmat_of(D, m, N), yd, c, NULL, NULL));
    CHECK_NEAR(c[0] + c[1], 3.0, 1e-6);
    free(D);
    free(yd);

    /* cancellation through the progress callback, for each stage */
    for (int method = 0; method < 4; method++) {
        p = rfx_l1_params_default();
        p.progress = progress_cb;
        p.method = method == 3 ? RFX_L1_METHOD_LASSO : (rfx_l1_method)method;
        if (method == 3) p.select = RFX_SELECT_KFOLD;
        p.lambda = 0.01;
        p.sigma = 0.01;
        p.sparsity = 3;
        p.n_lambdas = 5;
        count_calls = 0;
        cancel_at = 1000000;
        CHECK_OK(rfx_l1_fit(&p, Am, y, c, NULL, NULL));
        int calls = count_calls;
        if (method == 0) {
            CHECK(calls == 0); /* one lambda: no stages */
            continue;
        }
        CHECK(calls >= 1);
        count_calls = 0;
        cancel_at = 1;
        for (size_t j = 0; j < N; j++) c[j] = 99;
        CHECK_STATUS(rfx_l1_fit(&p, Am, y, c, NULL, NULL), RFX_ECANCELLED);
        CHECK(c[0] == 99);
    }
    free(A);
    free(c0);
    free(y);
}

int main(void)
{
    RFX_TEST_RUN(test_lasso_kkt);
    RFX_TEST_RUN(test_lasso_interpolating);
    RFX_TEST_RUN(test_bpdn_kkt);
    RFX_TEST_RUN(test_bpdn_infeasible);
    RFX_TEST_RUN(test_recovery);
    RFX_TEST_RUN(test_htp_ls);
    RFX_TEST_RUN(test_path);
    RFX_TEST_RUN(test_cv);
    RFX_TEST_RUN(test_gcv);
    RFX_TEST_RUN(test_normalize);
    RFX_TEST_RUN(test_threads);
    RFX_TEST_RUN(test_errors);
    return rfx_test_finish("test_l1");
}
