/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel ridge regression and Gaussian process regression
 * (rfx/kernels.h):
 *  - KRR: dual coefficients equal a LAPACK dposv solve of (K + lambda I) A
 *    = Y with K built entry by entry, predictions equal k(T, X) A and
 *    scikit-learn's KernelRidge (RBF and polynomial kernels) to 1e-8;
 *  - GP with given variances: mean, latent and noisy standard deviations
 *    and the log marginal likelihood equal the dense formulas (dposv) and
 *    scikit-learn's GaussianProcessRegressor(ConstantKernel * RBF +
 *    WhiteKernel, optimizer=None, normalize_y) to 1e-8;
 *  - fitted variances (both, noise only, amplitude only) maximise the log
 *    marginal likelihood: central differences of the (Cholesky) LML in the
 *    log parameters vanish, perturbed parameters score lower; the reported
 *    LML is the dense formula's at the fitted values; without noise the
 *    fitted amplitude is y^T K^-1 y / n;
 *  - the jitter policy on a singular K (duplicated rows, no noise): the
 *    reported jitter is one of the documented steps and is the one used;
 *    a policy that cannot reach positive definiteness fails;
 *  - the length scale chosen from a grid has the largest LML of the
 *    grid's fits; numerically failing grid values are skipped;
 *  - 1 and 2 threads give bitwise identical fits and predictions;
 *  - every error path. */
#include "internal.h"
#include "testlib.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define PEER RFX_TEST_DATA "/../peer/kernels_sklearn.py"

void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda, double *b,
            const int *ldb, int *info, size_t);

/* ---- helpers -------------------------------------------------------------- */

static void gram_eval(const rfx_kern *k, const double *X, size_t n, const double *Y, size_t m,
                      size_t d, double *K)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++) K[i * m + j] = rfx_kern_eval(k, X + i * d, Y + j * d, d);
}

/* B (n x nrhs, column-major) <- A^-1 B for symmetric positive definite A
 * (n x n, destroyed); returns log det A. */
static double spd_solve(double *A, size_t n, double *B, size_t nrhs)
{
    int nn = (int)n, nr = (int)nrhs, info = 0;
    dposv_("L", &nn, &nr, A, &nn, B, &nn, &info, 1);
    if (info != 0) return NAN;
    double ld = 0;
    for (size_t i = 0; i < n; i++) ld += 2.0 * log(A[i * n + i]);
    return ld;
}

static void write_array(FILE *f, const char *name, const double *A, size_t rows, size_t cols)
{
    fprintf(f, "%s %zu %zu\n", name, rows, cols);
    for (size_t i = 0; i < rows; i++) {
        for (size_t j = 0; j < cols; j++) fprintf(f, "%s%.17g", j ? " " : "", A[i * cols + j]);
        fputc('\n', f);
    }
}

static int run_peer(const char *args, double *out, size_t len)
{
    char cmd[8192 + 512];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", PEER, args);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    size_t got = 0;
    while (got < len && fscanf(p, "%lf", &out[got]) == 1) got++;
    double extra;
    int more = fscanf(p, "%lf", &extra) == 1;
    int rc = pclose(p);
    if (rc != 0 || got != len || more) {
        fprintf(stderr, "peer '%s': status %d, %zu of %zu numbers\n", cmd, rc, got, len);
        return 0;
    }
    return 1;
}

/* max |a - b| / max |b| */
static double rel_err(const double *a, const double *b, size_t len)
{
    double w = 0, s = 0;
    for (size_t i = 0; i < len; i++) {
        double e = fabs(a[i] - b[i]);
        if (!(e <= w)) w = e;
        s = fmax(s, fabs(b[i]));
    }
    return w / s;
}

/* The test problem: y = sin(3 x0) + x1^2 / 2 + 3 + 0.1 noise on [-1, 1]^2. */
static void make_data(size_t n, size_t m, double **X, double **y, double **T, unsigned long long s)
{
    rfx_test_rng r = {s};
    *X = rfx_test_matrix(&r, n, 2, -1, 1);
    *T = rfx_test_matrix(&r, m, 2, -1.2, 1.2);
    *y = malloc(n * sizeof **y);
    for (size_t i = 0; i < n; i++)
        (*y)[i] = sin(3 * (*X)[2 * i]) + 0.5 * (*X)[2 * i + 1] * (*X)[2 * i + 1] + 3.0 +
                  0.1 * rfx_test_normal(&r);
}

/* ---- kernel ridge regression ---------------------------------------------- */

static void test_krr(void)
{
    const size_t n = 80, m = 30, d = 2, ny = 2;
    double *X, *y, *T;
    make_data(n, m, &X, &y, &T, 21);
    double *Y = malloc(n * ny * sizeof *Y);
    for (size_t i = 0; i < n; i++) {
        Y[i * ny] = y[i];
        Y[i * ny + 1] = cos(2 * X[i * d]) - X[i * d + 1];
    }
    char path[4096];
    snprintf(path, sizeof path, "%s", rfx_test_tmp("krr_sklearn.txt"));
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    write_array(f, "X", X, n, d);
    write_array(f, "Y", Y, n, ny);
    write_array(f, "T", T, m, d);
    fclose(f);
    const double lambda = 1e-2;
    for (int q = 0; q < 2; q++) {
        rfx_kern *k;
        const char *spec;
        if (q == 0) {
            CHECK_OK(rfx_kern_rbf(0.8, &k));
            spec = "rbf:0.8";
        } else {
            CHECK_OK(rfx_kern_polynomial(0.5, 1.0, 4, &k));
            spec = "poly:0.5:1.0:4";
        }
        rfx_krr *model;
        CHECK_OK(rfx_krr_fit(k, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), lambda, 0, &model));
        rfx_kern_free(k); /* the model holds it */
        /* the closed form: (K + lambda I) A = Y by dposv */
        double *K = malloc(n * n * sizeof *K), *B = malloc(n * ny * sizeof *B);
        rfx_kern *k2;
        if (q == 0)
            CHECK_OK(rfx_kern_rbf(0.8, &k2));
        else
            CHECK_OK(rfx_kern_polynomial(0.5, 1.0, 4, &k2));
        gram_eval(k2, X, n, X, n, d, K);
        for (size_t i = 0; i < n; i++) K[i * n + i] += lambda;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < ny; j++) B[j * n + i] = Y[i * ny + j];
        CHECK(isfinite(spd_solve(K, n, B, ny)));
        rfx_cmat A = rfx_krr_dual_coef(model);
        CHECK(A.rows == n && A.cols == ny);
        double *Ar = malloc(n * ny * sizeof *Ar);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < ny; j++) Ar[i * ny + j] = B[j * n + i];
        double e_coef = rel_err(A.data, Ar, n * ny);
        CHECK_MSG(e_coef <= 1e-9, "%s: dual coefficients vs dposv %.3g", spec, e_coef);
        /* predictions: k(T, X) A, scikit-learn, and thread independence */
        double *P = malloc(m * ny * sizeof *P), *P1 = malloc(m * ny * sizeof *P1),
               *R = malloc(m * ny * sizeof *R), *Kt = malloc(m * n * sizeof *Kt);
        CHECK_OK(rfx_krr_predict(model, rfx_cmat_of(T, m, d), rfx_mat_of(P, m, ny)));
        gram_eval(k2, T, m, X, n, d, Kt);
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < ny; j++) {
                double s = 0;
                for (size_t l = 0; l < n; l++) s += Kt[i * n + l] * Ar[l * ny + j];
                R[i * ny + j] = s;
            }
        double e_pred = rel_err(P, R, m * ny);
        CHECK_MSG(e_pred <= 1e-9, "%s: predictions vs k(T, X) A %.3g", spec, e_pred);
        char args[8192];
        snprintf(args, sizeof args, "krr %s %.17g %s", path, lambda, spec);
        int ok = run_peer(args, R, m * ny);
        CHECK_MSG(ok, "scikit-learn KernelRidge run failed (%s)", spec);
        double e_sk = ok ? rel_err(P, R, m * ny) : NAN;
        CHECK_MSG(e_sk <= 1e-8, "%s: predictions vs scikit-learn %.3g", spec, e_sk);
        printf("krr %-16s coef vs dposv %.3g, predictions vs k(T,X)A %.3g, vs scikit-learn "
               "%.3g\n", spec, e_coef, e_pred, e_sk);
        rfx_krr *m1;
        CHECK_OK(rfx_krr_fit(k2, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), lambda, 1, &m1));
        CHECK_OK(rfx_krr_predict(m1, rfx_cmat_of(T, m, d), rfx_mat_of(P1, m, ny)));
        rfx_krr *m2;
        CHECK_OK(rfx_krr_fit(k2, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), lambda, 2, &m2));
        CHECK_OK(rfx_krr_predict(m2, rfx_cmat_of(T, m, d), rfx_mat_of(P, m, ny)));
        CHECK(memcmp(P, P1, m * ny * sizeof *P) == 0);
        CHECK(memcmp(rfx_krr_dual_coef(m1).data, rfx_krr_dual_coef(m2).data,
                     n * ny * sizeof(double)) == 0);
        rfx_krr_free(m1);
        rfx_krr_free(m2);
        rfx_kern_free(k2);
        rfx_krr_free(model);
        free(K);
        free(B);
        free(Ar);
        free(P);
        free(P1);
        free(R);
        free(Kt);
    }
    remove(path);
    free(X);
    free(y);
    free(T);
    free(Y);
}

/* Weighted kernel ridge: the coefficients solve the normal equations of
 * min sum w_i (y_i - f(x_i))^2 + lambda |f|^2, (W K + lambda I) A = W Y;
 * weights of 1 are no weights (bits); a weight of 0 is a row left out. */
static void test_krr_weighted(void)
{
    const size_t n = 60, m = 20, d = 2;
    double *X, *y, *T;
    make_data(n, m, &X, &y, &T, 31);
    double w[60], ones[60], wz[60], K[60 * 60];
    for (size_t i = 0; i < n; i++) {
        w[i] = 0.25 + (double)(i % 4);
        ones[i] = 1.0;
        wz[i] = i == 7 ? 0.0 : 1.0;
    }
    const double lambda = 0.05;
    rfx_kern *k;
    CHECK_OK(rfx_kern_rbf(0.8, &k));
    rfx_krr *mw = NULL, *m1 = NULL, *m0 = NULL, *mz = NULL, *md = NULL;
    rfx_cmat Xc = rfx_cmat_of(X, n, d), Yc = rfx_cmat_of(y, n, 1);
    CHECK_OK(rfx_krr_fit_weighted(k, Xc, Yc, lambda, w, 0, &mw));
    gram_eval(k, X, n, X, n, d, K);
    if (mw) {
        const double *A = rfx_krr_dual_coef(mw).data;
        double worst = 0, scale = 0;
        for (size_t i = 0; i < n; i++) {
            double r = lambda * A[i] - w[i] * y[i];
            for (size_t j = 0; j < n; j++) r += w[i] * K[i * n + j] * A[j];
            worst = fmax(worst, fabs(r));
            scale = fmax(scale, fabs(w[i] * y[i]));
        }
        CHECK_MSG(worst <= 1e-10 * scale, "weighted krr: normal equations off by %.3g", worst);
        printf("weighted krr: normal equations residual %.3g (of %.3g)\n", worst, scale);
    }
    /* weights of 1: the plain fit, bit for bit */
    CHECK_OK(rfx_krr_fit_weighted(k, Xc, Yc, lambda, ones, 0, &m1));
    CHECK_OK(rfx_krr_fit(k, Xc, Yc, lambda, 0, &m0));
    if (m1 && m0)
        CHECK(memcmp(rfx_krr_dual_coef(m1).data, rfx_krr_dual_coef(m0).data, n * sizeof(double)) ==
              0);
    /* a zero weight: coefficient 0, and the others those of the fit without the row */
    double Xd[59 * 2], yd[59];
    for (size_t i = 0, r = 0; i < n; i++) {
        if (i == 7) continue;
        Xd[r * d] = X[i * d];
        Xd[r * d + 1] = X[i * d + 1];
        yd[r++] = y[i];
    }
    CHECK_OK(rfx_krr_fit_weighted(k, Xc, Yc, lambda, wz, 0, &mz));
    CHECK_OK(rfx_krr_fit(k, rfx_cmat_of(Xd, n - 1, d), rfx_cmat_of(yd, n - 1, 1), lambda, 0, &md));
    if (mz && md) {
        const double *Az = rfx_krr_dual_coef(mz).data, *Ad = rfx_krr_dual_coef(md).data;
        double e = 0;
        for (size_t i = 0, r = 0; i < n; i++) {
            if (i == 7) {
                CHECK(Az[i] == 0.0);
                continue;
            }
            e = fmax(e, fabs(Az[i] - Ad[r++]));
        }
        CHECK_MSG(e <= 1e-10, "weight 0 vs the row dropped: %.3g", e);
    }
    /* bad weights, named */
    double bad[60];
    memcpy(bad, w, sizeof bad);
    bad[3] = -1;
    rfx_krr *none = NULL;
    CHECK_STATUS(rfx_krr_fit_weighted(k, Xc, Yc, lambda, bad, 0, &none), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "krr_fit.sample_weight[3]") != NULL && none == NULL);
    CHECK_STATUS(rfx_krr_fit_weighted(k, Xc, Yc, 0.0, wz, 0, &none), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "needs lambda > 0") != NULL);
    rfx_krr_free(mw);
    rfx_krr_free(m1);
    rfx_krr_free(m0);
    rfx_krr_free(mz);
    rfx_krr_free(md);
    rfx_kern_free(k);
    free(X);
    free(y);
    free(T);
}

static void test_krr_errors(void)
{
    double X[8] = {0, 1, 2, 3, 4, 5, 6, 7}, Y[4] = {1, 2, 3, 4}, P[4];
    rfx_kern *k, *zero;
    rfx_krr *m = NULL;
    CHECK_OK(rfx_kern_rbf(0.5, &k));
    rfx_cmat Xv = rfx_cmat_of(X, 4, 2), Yv = rfx_cmat_of(Y, 4, 1);
    CHECK_STATUS(rfx_krr_fit(k, Xv, Yv, 0.1, 0, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_krr_fit(NULL, Xv, Yv, 0.1, 0, &m), RFX_EINVAL);
    CHECK_STATUS(rfx_krr_fit(k, Xv, Yv, -0.1, 0, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "lambda") != NULL);
    CHECK_STATUS(rfx_krr_fit(k, Xv, Yv, NAN, 0, &m), RFX_EINVAL);
    CHECK_STATUS(rfx_krr_fit(k, Xv, Yv, 0.1, -1, &m), RFX_EINVAL);
    CHECK_STATUS(rfx_krr_fit(k, rfx_cmat_of(X, 0, 2), rfx_cmat_of(Y, 0, 1), 0.1, 0, &m),
                 RFX_EINVAL);
    CHECK_STATUS(rfx_krr_fit(k, Xv, rfx_cmat_of(Y, 3, 1), 0.1, 0, &m), RFX_EDIM);
    CHECK_STATUS(rfx_krr_fit(k, Xv, rfx_cmat_of(Y, 4, 0), 0.1, 0, &m), RFX_EDIM);
    CHECK_STATUS(rfx_krr_fit(k, Xv, rfx_cmat_of(NULL, 4, 1), 0.1, 0, &m), RFX_EINVAL);
    double Yn[4] = {1, 2, NAN, 4}, Xn[8] = {0, 1, 2, 3, 4, INFINITY, 6, 7};
    CHECK_STATUS(rfx_krr_fit(k, Xv, rfx_cmat_of(Yn, 4, 1), 0.1, 0, &m), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "row 2") != NULL);
    CHECK_STATUS(rfx_krr_fit(k, rfx_cmat_of(Xn, 4, 2), Yv, 0.1, 0, &m), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "row 2, column 1") != NULL);
    /* K + lambda I = 0: not positive definite */
    CHECK_OK(rfx_kern_scale(0.0, k, &zero));
    CHECK_STATUS(rfx_krr_fit(zero, Xv, Yv, 0.0, 0, &m), RFX_ENUMERIC);
    rfx_kern_free(zero);
    /* a kernel tied to another d */
    double ls[3] = {1, 1, 1};
    rfx_kern *ard;
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 0, ls, 3, &ard));
    CHECK_STATUS(rfx_krr_fit(ard, Xv, Yv, 0.1, 0, &m), RFX_EDIM);
    rfx_kern_free(ard);
    CHECK(m == NULL);
    /* predict */
    CHECK_OK(rfx_krr_fit(k, Xv, Yv, 0.1, 0, &m));
    CHECK_STATUS(rfx_krr_predict(NULL, Xv, rfx_mat_of(P, 4, 1)), RFX_EINVAL);
    CHECK_STATUS(rfx_krr_predict(m, rfx_cmat_of(X, 2, 4), rfx_mat_of(P, 2, 1)), RFX_EDIM);
    CHECK_STATUS(rfx_krr_predict(m, Xv, rfx_mat_of(P, 3, 1)), RFX_EDIM);
    CHECK_STATUS(rfx_krr_predict(m, Xv, rfx_mat_of(P, 2, 2)), RFX_EDIM);
    CHECK_STATUS(rfx_krr_predict(m, Xv, rfx_mat_of(NULL, 4, 1)), RFX_EINVAL);
    P[0] = -9;
    CHECK_STATUS(rfx_krr_predict(m, rfx_cmat_of(Xn, 4, 2), rfx_mat_of(P, 4, 1)), RFX_EPARSE);
    CHECK(P[0] == -9);
    CHECK_OK(rfx_krr_predict(m, rfx_cmat_of(X, 0, 2), rfx_mat_of(P, 0, 1)));
    CHECK(rfx_krr_dual_coef(NULL).data == NULL);
    rfx_krr_free(m);
    rfx_krr_free(NULL);
    rfx_kern_free(k);
}

/* ---- Gaussian processes ------------------------------------------------------ */

/* The dense reference: C = s2 K + noise I (K from rfx_kern_eval), with y
 * standardised or not; mean, latent and noisy std at T, and the LML. */
static void gp_reference(const rfx_kern *k, const double *X, const double *y, size_t n,
                         const double *T, size_t m, size_t d, double s2, double noise,
                         int normalize, double *mean, double *sl, double *sn, double *lml)
{
    double mu = 0, sd = 1;
    if (normalize) {
        double v = 0;
        for (size_t i = 0; i < n; i++) mu += y[i];
        mu /= (double)n;
        for (size_t i = 0; i < n; i++) v += (y[i] - mu) * (y[i] - mu);
        sd = sqrt(v / (double)n);
    }
    double *C = malloc(n * n * sizeof *C), *a = malloc(n * sizeof *a), *ys = malloc(n * sizeof *ys);
    double *Ks = malloc(m * n * sizeof *Ks), *W = malloc(m * n * sizeof *W);
    gram_eval(k, X, n, X, n, d, C);
    for (size_t i = 0; i < n * n; i++) C[i] *= s2;
    for (size_t i = 0; i < n; i++) C[i * n + i] += noise;
    double *C2 = malloc(n * n * sizeof *C2);
    memcpy(C2, C, n * n * sizeof *C);
    for (size_t i = 0; i < n; i++) ys[i] = a[i] = (y[i] - mu) / sd;
    double ld = spd_solve(C, n, a, 1);
    double q = 0;
    for (size_t i = 0; i < n; i++) q += ys[i] * a[i];
    *lml = -0.5 * q - 0.5 * ld - 0.5 * (double)n * log(2 * M_PI);
    gram_eval(k, T, m, X, n, d, Ks);
    for (size_t i = 0; i < m * n; i++) Ks[i] *= s2;
    memcpy(W, Ks, m * n * sizeof *W); /* column-major n x m: column j = k(X, t_j) */
    spd_solve(C2, n, W, m);
    for (size_t j = 0; j < m; j++) {
        double s = 0, v = 0;
        for (size_t i = 0; i < n; i++) {
            s += Ks[j * n + i] * a[i];
            v += Ks[j * n + i] * W[j * n + i];
        }
        double kk = s2 * rfx_kern_eval(k, T + j * d, T + j * d, d);
        double var = kk - v;
        if (var < 0) var = 0;
        mean[j] = s * sd + mu;
        sl[j] = sqrt(var) * sd;
        sn[j] = sqrt(var + noise) * sd;
    }
    free(C);
    free(C2);
    free(a);
    free(ys);
    free(Ks);
    free(W);
}

static void test_gp_given(void)
{
    const size_t n = 60, m = 25, d = 2;
    double *X, *y, *T;
    make_data(n, m, &X, &y, &T, 31);
    char path[4096];
    snprintf(path, sizeof path, "%s", rfx_test_tmp("gp_sklearn.txt"));
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    write_array(f, "X", X, n, d);
    write_array(f, "Y", y, n, 1);
    write_array(f, "T", T, m, d);
    fclose(f);
    const double s2 = 1.7, l = 0.6, noise = 0.05;
    rfx_kern *k;
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, l, NULL, 0, &k));
    double mean[25], sl[25], sn[25], rm[25], rl[25], rn[25], rlml, sk[51];
    for (int norm = 0; norm < 2; norm++) {
        rfx_gp_params p = rfx_gp_params_default();
        p.amplitude = s2;
        p.noise_var = noise;
        p.normalize_y = norm;
        rfx_gp *gp;
        CHECK_OK(rfx_gp_fit(k, rfx_cmat_of(X, n, d), y, &p, &gp));
        CHECK_OK(rfx_gp_predict(gp, rfx_cmat_of(T, m, d), mean, sl, sn));
        gp_reference(k, X, y, n, T, m, d, s2, noise, norm, rm, rl, rn, &rlml);
        double lml = rfx_gp_log_marginal_likelihood(gp);
        rfx_gp_info info;
        CHECK_OK(rfx_gp_get_info(gp, &info));
        CHECK(info.jitter == 0 && info.amplitude == s2 && info.noise_var == noise);
        CHECK(info.n_train == n && info.log_marginal_likelihood == lml);
        double e[4] = {rel_err(mean, rm, m), rel_err(sl, rl, m), rel_err(sn, rn, m),
                       fabs(lml - rlml) / fabs(rlml)};
        for (int q = 0; q < 4; q++) CHECK_MSG(e[q] <= 1e-10, "normalize %d, quantity %d: %.3g",
                                             norm, q, e[q]);
        char args[8192];
        snprintf(args, sizeof args, "gp %s %.17g %.17g %.17g %d", path, s2, l, noise, norm);
        int ok = run_peer(args, sk, 2 * m + 1);
        CHECK_MSG(ok, "scikit-learn GaussianProcessRegressor run failed");
        double es[3] = {NAN, NAN, NAN};
        if (ok) {
            es[0] = rel_err(mean, sk, m);
            es[1] = rel_err(sn, sk + m, m);
            es[2] = fabs(lml - sk[2 * m]) / fabs(sk[2 * m]);
        }
        for (int q = 0; q < 3; q++)
            CHECK_MSG(es[q] <= 1e-8, "normalize %d: vs scikit-learn, quantity %d: %.3g", norm, q,
                      es[q]);
        printf("gp normalize_y=%d: vs dense formulas mean %.2g std %.2g/%.2g lml %.2g; vs "
               "scikit-learn mean %.2g std %.2g lml %.2g (lml %.6f)\n",
               norm, e[0], e[1], e[2], e[3], es[0], es[1], es[2], lml);
        /* thread independence */
        rfx_gp *g1, *g2;
        double m1[25], m2[25], s1[25], s2b[25];
        p.amplitude = -1;
        p.noise_var = 0; /* fitted: the search as well */
        p.n_threads = 1;
        CHECK_OK(rfx_gp_fit(k, rfx_cmat_of(X, n, d), y, &p, &g1));
        p.n_threads = 2;
        CHECK_OK(rfx_gp_fit(k, rfx_cmat_of(X, n, d), y, &p, &g2));
        CHECK_OK(rfx_gp_predict(g1, rfx_cmat_of(T, m, d), m1, s1, NULL));
        CHECK_OK(rfx_gp_predict(g2, rfx_cmat_of(T, m, d), m2, s2b, NULL));
        CHECK(memcmp(m1, m2, sizeof m1) == 0 && memcmp(s1, s2b, sizeof s1) == 0);
        CHECK(rfx_gp_log_marginal_likelihood(g1) == rfx_gp_log_marginal_likelihood(g2));
        rfx_gp_free(g1);
        rfx_gp_free(g2);
        rfx_gp_free(gp);
    }
    rfx_kern_free(k);
    remove(path);
    free(X);
    free(y);
    free(T);
}

/* The LML of a fit with given (s2, noise). */
static double lml_at(const rfx_kern *k, const double *X, const double *y, size_t n, size_t d,
                     double s2, double noise)
{
    rfx_gp_params p = rfx_gp_params_default();
    p.amplitude = s2;
    p.noise_var = noise;
    p.noise_free = noise == 0;
    rfx_gp *gp;
    if (rfx_gp_fit(k, rfx_cmat_of(X, n, d), y, &p, &gp) != RFX_OK) return NAN;
    double v = rfx_gp_log_marginal_likelihood(gp);
    rfx_gp_free(gp);
    return v;
}

static void test_gp_fitted(void)
{
    const size_t n = 60, m = 5, d = 2;
    double *X, *y, *T;
    make_data(n, m, &X, &y, &T, 41);
    rfx_kern *k;
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 2.5, 0.5, NULL, 0, &k));
    /* modes: both fitted; noise only (s2 = 2); amplitude only (noise 0.02) */
    for (int mode = 0; mode < 3; mode++) {
        rfx_gp_params p = rfx_gp_params_default();
        if (mode == 1) p.amplitude = 2.0;
        if (mode == 2) p.noise_var = 0.02;
        rfx_gp *gp;
        CHECK_OK(rfx_gp_fit(k, rfx_cmat_of(X, n, d), y, &p, &gp));
        rfx_gp_info info;
        CHECK_OK(rfx_gp_get_info(gp, &info));
        double L = info.log_marginal_likelihood, s2 = info.amplitude, nz = info.noise_var;
        CHECK(info.jitter == 0);
        if (mode == 1) CHECK(s2 == 2.0);
        if (mode == 2) CHECK(nz == 0.02);
        /* the reported LML is the dense formula's */
        double rm[5], rl[5], rn[5], rlml;
        gp_reference(k, X, y, n, T, m, d, s2, nz, 1, rm, rl, rn, &rlml);
        CHECK_NEAR(L, rlml, 1e-10 * fabs(rlml));
        /* gradient in (log s2, log noise) by central differences */
        const double h = 1e-4;
        double g[2], worst_drop = INFINITY;
        for (int a = 0; a < 2; a++) {
            if ((mode == 1 && a == 0) || (mode == 2 && a == 1)) {
                g[a] = 0;
                continue;
            }
            double up = lml_at(k, X, y, n, d, a == 0 ? s2 * exp(h) : s2, a == 1 ? nz * exp(h) : nz);
            double dn = lml_at(k, X, y, n, d, a == 0 ? s2 * exp(-h) : s2,
                               a == 1 ? nz * exp(-h) : nz);
            g[a] = (up - dn) / (2 * h);
            CHECK_MSG(fabs(g[a]) <= 1e-5 * (double)n, "mode %d: dLML/dlog(param %d) = %.3g",
                      mode, a, g[a]);
        }
        /* perturbed parameters score lower */
        for (int a = -1; a <= 1; a++)
            for (int b = -1; b <= 1; b++) {
                if ((a == 0 && b == 0) || (mode == 1 && a != 0) || (mode == 2 && b != 0)) continue;
                double v = lml_at(k, X, y, n, d, s2 * exp(0.05 * a), nz * exp(0.05 * b));
                CHECK_MSG(v < L, "mode %d: LML %.12g at (%d, %d) above the fit's %.12g", mode, v,
                          a, b, L);
                worst_drop = fmin(worst_drop, L - v);
            }
        printf("gp fitted mode %d: s2 %.6g noise %.6g lml %.8f, gradient (%.2g, %.2g), smallest "
               "drop at +-5%% %.3g\n", mode, s2, nz, L, g[0], g[1], worst_drop);
        rfx_gp_free(gp);
    }
    /* no noise, amplitude fitted: s2 = y^T K^-1 y / n (standardised y) */
    {
        rfx_gp_params p = rfx_gp_params_default();
        p.noise_free = 1;
        p.noise_var = 5; /* ignored */
        rfx_kern *k1;
        CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 0.5, 0.3, NULL, 0, &k1));
        rfx_gp *gp;
        CHECK_OK(rfx_gp_fit(k1, rfx_cmat_of(X, n, d), y, &p, &gp));
        rfx_gp_info info;
        CHECK_OK(rfx_gp_get_info(gp, &info));
        double *K = malloc(n * n * sizeof *K), *a = malloc(n * sizeof *a);
        double *ys = malloc(n * sizeof *ys);
        gram_eval(k1, X, n, X, n, d, K);
        for (size_t i = 0; i < n; i++) ys[i] = a[i] = (y[i] - info.y_mean) / info.y_std;
        spd_solve(K, n, a, 1);
        double q = 0;
        for (size_t i = 0; i < n; i++) q += ys[i] * a[i];
        CHECK(info.jitter == 0 && info.noise_var == 0);
        CHECK_NEAR(info.amplitude, q / (double)n, 1e-10 * q / (double)n);
        double up = lml_at(k1, X, y, n, d, info.amplitude * 1.01, 0),
               dn = lml_at(k1, X, y, n, d, info.amplitude / 1.01, 0);
        CHECK(up < info.log_marginal_likelihood && dn < info.log_marginal_likelihood);
        printf("gp noise-free: fitted s2 %.10g, y^T K^-1 y / n %.10g\n", info.amplitude,
               q / (double)n);
        free(K);
        free(a);
        free(ys);
        rfx_gp_free(gp);
        rfx_kern_free(k1);
    }
    rfx_kern_free(k);
    free(X);
    free(y);
    free(T);
}

static void test_gp_jitter(void)
{
    const size_t n = 40, m = 6, d = 2;
    double *X, *y, *T;
    make_data(n, m, &X, &y, &T, 51);
    /* rows 5, 17 and 30 coincide: K is singular */
    memcpy(X + 17 * d, X + 5 * d, d * sizeof *X);
    memcpy(X + 30 * d, X + 5 * d, d * sizeof *X);
    rfx_kern *k;
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 0.5, 0.4, NULL, 0, &k));
    rfx_gp_params p = rfx_gp_params_default();
    p.amplitude = 1.3;
    p.noise_free = 1;
    rfx_gp *gp;
    CHECK_OK(rfx_gp_fit(k, rfx_cmat_of(X, n, d), y, &p, &gp));
    rfx_gp_info info;
    CHECK_OK(rfx_gp_get_info(gp, &info));
    /* mean diag C = s2 (unit diagonal); the jitter is s2 x 1e-10 x 10^j */
    double rel = info.jitter / 1.3, e = log10(rel);
    CHECK(info.jitter > 0);
    CHECK_MSG(e >= -10 - 1e-9 && e <= -4 + 1e-9 && fabs(e - round(e)) < 1e-9,
              "relative jitter %.3g is not one of 1e-10 .. 1e-4", rel);
    /* the jitter is the one used: the LML is that of s2 K + jitter I */
    double rm[6], rl[6], rn[6], rlml, mean[6], sl[6], sn[6];
    gp_reference(k, X, y, n, T, m, d, 1.3, info.jitter, 1, rm, rl, rn, &rlml);
    CHECK_NEAR(info.log_marginal_likelihood, rlml, 1e-8 * fabs(rlml));
    CHECK_OK(rfx_gp_predict(gp, rfx_cmat_of(T, m, d), mean, sl, sn));
    CHECK(rel_err(mean, rm, m) <= 1e-6);
    for (size_t i = 0; i < m; i++) CHECK(sl[i] == sn[i]); /* no noise */
    printf("gp jitter: duplicated rows, no noise: relative jitter %.3g, lml %.6f\n", rel,
           info.log_marginal_likelihood);
    rfx_gp_free(gp);
    /* amplitude fitted without noise takes the same path */
    p.amplitude = 0;
    CHECK_OK(rfx_gp_fit(k, rfx_cmat_of(X, n, d), y, &p, &gp));
    CHECK_OK(rfx_gp_get_info(gp, &info));
    CHECK(info.jitter > 0 && info.amplitude > 0);
    rfx_gp_free(gp);
    /* a policy that stops short of positive definiteness */
    p.amplitude = 1.3;
    p.jitter_initial = 1e-18;
    p.jitter_max = 1e-17;
    CHECK_STATUS(rfx_gp_fit(k, rfx_cmat_of(X, n, d), y, &p, &gp), RFX_ENUMERIC);
    CHECK(strstr(rfx_last_error(), "jitter") != NULL);
    rfx_gp_free(NULL);
    rfx_kern_free(k);
    free(X);
    free(y);
    free(T);
}

static void test_gp_length_scale(void)
{
    const size_t n = 50, m = 3, d = 2;
    double *X, *y, *T;
    make_data(n, m, &X, &y, &T, 61);
    const double grid[8] = {0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4};
    for (int q = 0; q < 2; q++) {
        rfx_kernel kind = q ? RFX_KERNEL_MATERN : RFX_KERNEL_GAUSSIAN;
        double nu = 1.5, l = -1, best = -INFINITY, best_l = 0;
        rfx_gp *gp;
        CHECK_OK(rfx_gp_fit_length_scale(kind, nu, grid, 8, rfx_cmat_of(X, n, d), y, NULL, &gp,
                                         &l));
        /* every grid value fitted on its own: the chosen one has the largest LML */
        for (int i = 0; i < 8; i++) {
            rfx_kern *k;
            rfx_gp *g;
            CHECK_OK(rfx_kern_shift(kind, nu, grid[i], NULL, 0, &k));
            CHECK_OK(rfx_gp_fit(k, rfx_cmat_of(X, n, d), y, NULL, &g));
            double v = rfx_gp_log_marginal_likelihood(g);
            if (v > best) {
                best = v;
                best_l = grid[i];
            }
            rfx_gp_free(g);
            rfx_kern_free(k);
        }
        CHECK(l == best_l);
        CHECK(rfx_gp_log_marginal_likelihood(gp) == best);
        CHECK(best_l > grid[0] && best_l < grid[7]); /* an interior choice */
        printf("gp length scale (%s): chose %g, lml %.6f\n", q ? "matern 1.5" : "gaussian", l,
               best);
        rfx_gp_free(gp);
    }
    /* numerical failures are skipped: with no jitter and noise 0 the long
     * length scale is singular, the short one is not */
    rfx_gp_params p = rfx_gp_params_default();
    p.noise_free = 1;
    p.amplitude = 1;
    p.jitter_initial = p.jitter_max = 1e-17;
    const double two[2] = {1000, 0.01};
    double l = 0;
    rfx_gp *gp = NULL;
    CHECK_OK(rfx_gp_fit_length_scale(RFX_KERNEL_GAUSSIAN, 0, two, 2, rfx_cmat_of(X, n, d), y, &p,
                                     &gp, &l));
    CHECK(l == 0.01);
    rfx_gp_free(gp);
    gp = NULL;
    CHECK_STATUS(rfx_gp_fit_length_scale(RFX_KERNEL_GAUSSIAN, 0, two, 1, rfx_cmat_of(X, n, d), y,
                                         &p, &gp, &l), RFX_ENUMERIC);
    CHECK(strstr(rfx_last_error(), "length scale 1000") != NULL);
    /* errors */
    const double badg[3] = {0.1, 0.2, -1};
    CHECK_STATUS(rfx_gp_fit_length_scale(RFX_KERNEL_GAUSSIAN, 0, NULL, 3, rfx_cmat_of(X, n, d), y,
                                         NULL, &gp, &l), RFX_EINVAL);
    CHECK_STATUS(rfx_gp_fit_length_scale(RFX_KERNEL_GAUSSIAN, 0, grid, 0, rfx_cmat_of(X, n, d), y,
                                         NULL, &gp, &l), RFX_EINVAL);
    CHECK_STATUS(rfx_gp_fit_length_scale(RFX_KERNEL_GAUSSIAN, 0, badg, 3, rfx_cmat_of(X, n, d), y,
                                         NULL, &gp, &l), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "grid[2]") != NULL);
    CHECK_STATUS(rfx_gp_fit_length_scale(RFX_KERNEL_MATERN, -1, grid, 3, rfx_cmat_of(X, n, d), y,
                                         NULL, &gp, &l), RFX_EINVAL);
    CHECK_STATUS(rfx_gp_fit_length_scale(RFX_KERNEL_GAUSSIAN, 0, grid, 3, rfx_cmat_of(X, n, d),
                                         NULL, NULL, &gp, &l), RFX_EINVAL);
    CHECK_STATUS(rfx_gp_fit_length_scale(RFX_KERNEL_GAUSSIAN, 0, grid, 3, rfx_cmat_of(X, n, d), y,
                                         NULL, NULL, &l), RFX_EINVAL);
    CHECK(gp == NULL && l == 0.01);
    free(X);
    free(y);
    free(T);
}

static void test_gp_errors(void)
{
    double X[8] = {0, 1, 2, 3, 4, 5, 6, 7}, y[4] = {1, 2, 3, 5}, mean[4], sd[4];
    rfx_kern *k;
    CHECK_OK(rfx_kern_rbf(0.5, &k));
    rfx_gp *gp = NULL;
    rfx_cmat Xv = rfx_cmat_of(X, 4, 2);
    CHECK_STATUS(rfx_gp_fit(k, Xv, y, NULL, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_gp_fit(NULL, Xv, y, NULL, &gp), RFX_EINVAL);
    CHECK_STATUS(rfx_gp_fit(k, Xv, NULL, NULL, &gp), RFX_EINVAL);
    CHECK_STATUS(rfx_gp_fit(k, rfx_cmat_of(X, 0, 2), y, NULL, &gp), RFX_EINVAL);
    CHECK_STATUS(rfx_gp_fit(k, rfx_cmat_of(NULL, 4, 2), y, NULL, &gp), RFX_EINVAL);
    double yn[4] = {1, NAN, 3, 4}, Xn[8] = {0, 1, 2, 3, NAN, 5, 6, 7};
    CHECK_STATUS(rfx_gp_fit(k, Xv, yn, NULL, &gp), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "y[1]") != NULL);
    CHECK_STATUS(rfx_gp_fit(k, rfx_cmat_of(Xn, 4, 2), y, NULL, &gp), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "row 2, column 0") != NULL);
    /* parameter fields */
    struct {
        const char *field;
        rfx_gp_params p;
    } bad[11];
    for (int i = 0; i < 11; i++) bad[i].p = rfx_gp_params_default();
    bad[0].field = "noise_var"; bad[0].p.noise_var = NAN;
    bad[1].field = "amplitude"; bad[1].p.amplitude = INFINITY;
    bad[2].field = "normalize_y"; bad[2].p.normalize_y = 2;
    bad[3].field = "ratio_min"; bad[3].p.ratio_min = 0;
    bad[4].field = "ratio_max"; bad[4].p.ratio_max = 1e-9;
    bad[5].field = "jitter_initial"; bad[5].p.jitter_initial = 0;
    bad[6].field = "jitter_factor"; bad[6].p.jitter_factor = 1;
    bad[7].field = "jitter_max"; bad[7].p.jitter_max = 1e-12;
    bad[8].field = "n_threads"; bad[8].p.n_threads = -1;
    bad[9].field = "ratio_max"; bad[9].p.ratio_max = INFINITY;
    bad[10].field = "noise_free"; bad[10].p.noise_free = 2;
    for (int i = 0; i < 11; i++) {
        CHECK_STATUS(rfx_gp_fit(k, Xv, y, &bad[i].p, &gp), RFX_EINVAL);
        CHECK_MSG(strstr(rfx_last_error(), bad[i].field) != NULL, "message '%s' lacks %s",
                  rfx_last_error(), bad[i].field);
    }
    /* constant targets: the amplitude cannot be fitted */
    double yc[4] = {2, 2, 2, 2};
    CHECK_STATUS(rfx_gp_fit(k, Xv, yc, NULL, &gp), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "amplitude") != NULL);
    rfx_gp_params p = rfx_gp_params_default();
    p.noise_free = 1;
    CHECK_STATUS(rfx_gp_fit(k, Xv, yc, &p, &gp), RFX_EINVAL);
    p.normalize_y = 0;
    double y0[4] = {0, 0, 0, 0};
    CHECK_STATUS(rfx_gp_fit(k, Xv, y0, &p, &gp), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "zero") != NULL);
    /* ... but with the amplitude given it is fine: the mean is the constant */
    p = rfx_gp_params_default();
    p.amplitude = 1;
    CHECK_OK(rfx_gp_fit(k, Xv, yc, &p, &gp));
    CHECK_OK(rfx_gp_predict(gp, Xv, mean, NULL, NULL));
    CHECK_NEAR(mean[2], 2.0, 1e-12);
    rfx_gp_free(gp);
    gp = NULL;
    /* a zero kernel: nothing to fit variances on */
    rfx_kern *zero;
    CHECK_OK(rfx_kern_scale(0, k, &zero));
    CHECK_STATUS(rfx_gp_fit(zero, Xv, y, NULL, &gp), RFX_ENUMERIC);
    CHECK(strstr(rfx_last_error(), "diagonal") != NULL);
    p = rfx_gp_params_default();
    p.amplitude = 1;
    p.noise_free = 1;
    CHECK_STATUS(rfx_gp_fit(zero, Xv, y, &p, &gp), RFX_ENUMERIC);
    rfx_kern_free(zero);
    /* a kernel tied to another d */
    double ls[3] = {1, 1, 1};
    rfx_kern *ard;
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 0, ls, 3, &ard));
    CHECK_STATUS(rfx_gp_fit(ard, Xv, y, NULL, &gp), RFX_EDIM);
    rfx_kern_free(ard);
    CHECK(gp == NULL);
    /* predict, info */
    CHECK_OK(rfx_gp_fit(k, Xv, y, NULL, &gp));
    CHECK_STATUS(rfx_gp_predict(NULL, Xv, mean, sd, sd), RFX_EINVAL);
    CHECK_STATUS(rfx_gp_predict(gp, Xv, NULL, sd, sd), RFX_EINVAL);
    CHECK_STATUS(rfx_gp_predict(gp, rfx_cmat_of(X, 2, 4), mean, sd, sd), RFX_EDIM);
    CHECK_STATUS(rfx_gp_predict(gp, rfx_cmat_of(NULL, 2, 2), mean, sd, sd), RFX_EINVAL);
    mean[0] = -9;
    CHECK_STATUS(rfx_gp_predict(gp, rfx_cmat_of(Xn, 4, 2), mean, sd, NULL), RFX_EPARSE);
    CHECK(mean[0] == -9);
    CHECK_OK(rfx_gp_predict(gp, rfx_cmat_of(X, 0, 2), mean, NULL, NULL));
    rfx_gp_info info;
    CHECK_STATUS(rfx_gp_get_info(NULL, &info), RFX_EINVAL);
    CHECK_STATUS(rfx_gp_get_info(gp, NULL), RFX_EINVAL);
    CHECK(isnan(rfx_gp_log_marginal_likelihood(NULL)));
    rfx_gp_free(gp);
    rfx_kern_free(k);
}

int main(void)
{
    RFX_TEST_RUN(test_krr);
    RFX_TEST_RUN(test_krr_errors);
    RFX_TEST_RUN(test_krr_weighted);
    RFX_TEST_RUN(test_gp_given);
    RFX_TEST_RUN(test_gp_fitted);
    RFX_TEST_RUN(test_gp_jitter);
    RFX_TEST_RUN(test_gp_length_scale);
    RFX_TEST_RUN(test_gp_errors);
    return rfx_test_finish("test_gp");
}
