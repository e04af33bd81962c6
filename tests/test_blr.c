/* SPDX-License-Identifier: BSD-3-Clause */
/* Bayesian linear regression on a design matrix (rfx/blr.h): against the
 * exact Gaussian process of its covariance (general prior, n > N and
 * n < N), fitted variances at the evidence's maximum, the
 * flat-prior intercept against a wide Gaussian one, weights against
 * repeated rows, least squares on raw inputs, and bad input. */
#include "internal.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A basis of a scalar x in [-2.5, 2.5]: (x / 2.5)^k and cos(j x), N columns. */
static double *basis(const double *x, size_t n, size_t N)
{
    double *P = malloc(n * N * sizeof *P);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < N; j++)
            P[i * N + j] =
                j % 2 ? cos((double)(j + 1) * x[i]) : pow(x[i] / 2.5, (double)(j / 2));
    return P;
}

static double target(double x) { return sin(2.0 * x) + 0.3 * x * x; }

/* A symmetric positive definite N x N prior shape: exp(-|i - j| / 3) + I/2. */
static double *prior_shape(size_t N)
{
    double *S = malloc(N * N * sizeof *S);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++)
            S[i * N + j] = exp(-fabs((double)i - (double)j) / 3.0) + (i == j ? 0.5 : 0.0);
    return S;
}

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-300); }

/* Fixed variances, no intercept, a general prior: the posterior mean and
 * variance and the evidence are the GP's with k(x, x') = s2 phi^T S phi'. */
static void test_against_gp(size_t n, size_t N)
{
    rfx_test_rng r = {41 + n};
    const size_t nt = 17;
    double *x = rfx_test_matrix(&r, n, 1, -2, 2), *xt = rfx_test_matrix(&r, nt, 1, -2.5, 2.5);
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = target(x[i]) + 0.1 * rfx_test_normal(&r);
    double *P = basis(x, n, N), *Pt = basis(xt, nt, N), *S = prior_shape(N);
    const double s2 = 1.7, sn = 0.02;
    rfx_blr_params p = rfx_blr_params_default();
    p.fit_intercept = 0;
    p.prior_cov = S;
    p.prior_var = s2;
    p.noise_var = sn;
    rfx_blr *m = NULL;
    CHECK_OK(rfx_blr_fit(&p, rfx_cmat_of(P, n, N), y, &m));
    double *mean = malloc(nt * sizeof *mean), *sd = malloc(nt * sizeof *sd);
    double *sdy = malloc(nt * sizeof *sdy);
    CHECK_OK(rfx_blr_predict(m, rfx_cmat_of(Pt, nt, N), mean, sd, 0));
    CHECK_OK(rfx_blr_predict(m, rfx_cmat_of(Pt, nt, N), mean, sdy, 1));
    /* the GP: kernel s2 phi^T S phi' */
    double *SP = malloc(n * N * sizeof *SP), *SPt = malloc(nt * N * sizeof *SPt);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < N; j++) {
            double a = 0;
            for (size_t k = 0; k < N; k++) a += S[j * N + k] * P[i * N + k];
            SP[i * N + j] = s2 * a;
        }
    for (size_t i = 0; i < nt; i++)
        for (size_t j = 0; j < N; j++) {
            double a = 0;
            for (size_t k = 0; k < N; k++) a += S[j * N + k] * Pt[i * N + k];
            SPt[i * N + j] = s2 * a;
        }
    double *K = malloc(n * n * sizeof *K), *Ks = malloc(n * nt * sizeof *Ks);
    double *al = malloc(n * sizeof *al);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            double a = 0;
            for (size_t k = 0; k < N; k++) a += P[i * N + k] * SP[j * N + k];
            K[i * n + j] = a + (i == j ? sn : 0.0);
        }
        for (size_t t = 0; t < nt; t++) {
            double a = 0;
            for (size_t k = 0; k < N; k++) a += P[i * N + k] * SPt[t * N + k];
            Ks[i * nt + t] = a;
        }
        al[i] = y[i];
    }
    CHECK_OK(rfx__chol(K, n, 1, "test K"));
    CHECK_OK(rfx__chol_solve(K, n, al, 1));
    double *V = malloc(n * nt * sizeof *V);
    memcpy(V, Ks, n * nt * sizeof *V);
    CHECK_OK(rfx__chol_solve(K, n, V, nt));
    double wm = 0, wv = 0, wy = 0;
    for (size_t t = 0; t < nt; t++) {
        double gm = 0, gv = 0;
        for (size_t k = 0; k < N; k++) gv += Pt[t * N + k] * SPt[t * N + k];
        for (size_t i = 0; i < n; i++) {
            gm += Ks[i * nt + t] * al[i];
            gv -= Ks[i * nt + t] * V[i * nt + t];
        }
        wm = fmax(wm, fabs(mean[t] - gm) / fmax(fabs(gm), 1e-2));
        wv = fmax(wv, rel(sd[t] * sd[t], gv));
        wy = fmax(wy, rel(sdy[t] * sdy[t], gv + sn));
    }
    double yKy = 0;
    for (size_t i = 0; i < n; i++) yKy += y[i] * al[i];
    double lml = -0.5 * yKy - 0.5 * rfx__chol_logdet(K, n) - 0.5 * (double)n * log(6.283185307179586);
    rfx_blr_info info;
    CHECK_OK(rfx_blr_get_info(m, &info));
    printf("blr (n %zu, N %zu) vs GP: mean %.3g, variance %.3g, noisy %.3g; evidence %.12g "
           "vs %.12g\n", n, N, wm, wv, wy, info.log_evidence, lml);
    CHECK(info.rank == (n < N ? n : N));
    CHECK(wm < 1e-10);
    CHECK(wv < 1e-10);
    CHECK(wy < 1e-10);
    CHECK_NEAR(info.log_evidence, lml, 1e-8 * fabs(lml));
    CHECK(info.noise_var == sn && info.prior_var == s2);
    rfx_blr_free(m);
    free(x);
    free(xt);
    free(y);
    free(P);
    free(Pt);
    free(S);
    free(SP);
    free(SPt);
    free(K);
    free(Ks);
    free(al);
    free(V);
    free(mean);
    free(sd);
    free(sdy);
}

/* Fitted variances: the fixed point is a maximum of the evidence over the
 * two variances, with and without intercept, prior shape and weights, for
 * n > N and n < N. */
static void test_fitted_variances(size_t n, size_t N)
{
    rfx_test_rng r = {5};
    double *x = rfx_test_matrix(&r, n, 1, -2, 2);
    double *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
    size_t zeros = 0;
    for (size_t i = 0; i < n; i++) {
        y[i] = 3.0 + target(x[i]) + 0.05 * rfx_test_normal(&r);
        w[i] = i % 6 == 2 ? 0.0 : 0.5 + (double)(i % 3);
        zeros += w[i] == 0;
    }
    double *P = basis(x, n, N), *S = prior_shape(N);
    for (int c = 0; c < 8; c++) {
        rfx_blr_params p = rfx_blr_params_default();
        p.fit_intercept = c & 1;
        if (c & 2) p.prior_cov = S;
        if (c & 4) p.sample_weight = w;
        rfx_blr *a = NULL;
        CHECK_OK(rfx_blr_fit(&p, rfx_cmat_of(P, n, N), y, &a));
        rfx_blr_info ia;
        CHECK_OK(rfx_blr_get_info(a, &ia));
        printf("blr fitted variances (n %zu, N %zu, intercept %d, prior shape %d, weights %d): "
               "noise %.6g, prior %.6g, evidence %.10g, gamma %.4g\n", n, N, c & 1, (c >> 1) & 1,
               (c >> 2) & 1, ia.noise_var, ia.prior_var, ia.log_evidence, ia.effective_params);
        CHECK(ia.n_train == (c & 4 ? n - zeros : n));
        CHECK(ia.effective_params > 0 && ia.effective_params <= (double)(n < N ? n : N));
        for (int da = -1; da <= 1; da++) {
            for (int db = -1; db <= 1; db++) {
                if (!da && !db) continue;
                rfx_blr_params q = p;
                q.noise_var = ia.noise_var * (1 + 0.03 * da);
                q.prior_var = ia.prior_var * (1 + 0.03 * db);
                rfx_blr *e = NULL;
                rfx_blr_info ie;
                CHECK_OK(rfx_blr_fit(&q, rfx_cmat_of(P, n, N), y, &e));
                CHECK_OK(rfx_blr_get_info(e, &ie));
                CHECK_MSG(ie.log_evidence < ia.log_evidence + 1e-9,
                          "case %d (%d, %d): %.12g above the fixed point's %.12g", c, da, db,
                          ie.log_evidence, ia.log_evidence);
                rfx_blr_free(e);
            }
        }
        rfx_blr_free(a);
    }
    free(x);
    free(y);
    free(w);
    free(P);
    free(S);
}

/* The flat prior on the intercept is the limit of a wide Gaussian prior on
 * a column of ones (fixed variances: the posterior mean and latent std). */
static void test_intercept(void)
{
    rfx_test_rng r = {9};
    const size_t n = 30, N = 7, nt = 6;
    double *x = rfx_test_matrix(&r, n, 1, -1, 1), *xt = rfx_test_matrix(&r, nt, 1, -1, 1);
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = 5.0 + target(x[i]) + 0.05 * rfx_test_normal(&r);
    double *P = basis(x, n, N), *Pt = basis(xt, nt, N);
    /* basis column 0 is x^0 = 1: give it a wide prior, the others unit */
    double S[49] = {0};
    for (size_t j = 0; j < N; j++) S[j * N + j] = j == 0 ? 1e8 : 1.0;
    double *P1 = malloc(n * (N - 1) * sizeof *P1), *Pt1 = malloc(nt * (N - 1) * sizeof *Pt1);
    for (size_t i = 0; i < n; i++) memcpy(P1 + i * (N - 1), P + i * N + 1, (N - 1) * sizeof *P);
    for (size_t i = 0; i < nt; i++) memcpy(Pt1 + i * (N - 1), Pt + i * N + 1, (N - 1) * sizeof *P);
    rfx_blr_params p = rfx_blr_params_default();
    p.noise_var = 0.01;
    p.prior_var = 2.0;
    rfx_blr *flat = NULL, *wide = NULL;
    CHECK_OK(rfx_blr_fit(&p, rfx_cmat_of(P1, n, N - 1), y, &flat));
    p.fit_intercept = 0;
    p.prior_cov = S;
    CHECK_OK(rfx_blr_fit(&p, rfx_cmat_of(P, n, N), y, &wide));
    double m1[6], m2[6], s1[6], s2[6], dm = 0, ds = 0;
    CHECK_OK(rfx_blr_predict(flat, rfx_cmat_of(Pt1, nt, N - 1), m1, s1, 0));
    CHECK_OK(rfx_blr_predict(wide, rfx_cmat_of(Pt, nt, N), m2, s2, 0));
    for (size_t t = 0; t < nt; t++) {
        dm = fmax(dm, rel(m1[t], m2[t]));
        ds = fmax(ds, rel(s1[t], s2[t]));
    }
    printf("blr flat intercept vs prior variance 2e8 on a ones column: mean %.3g, std %.3g\n", dm,
           ds);
    CHECK(dm < 1e-7);
    CHECK(ds < 1e-6);
    rfx_blr_free(flat);
    rfx_blr_free(wide);
    free(x);
    free(xt);
    free(y);
    free(P);
    free(Pt);
    free(P1);
    free(Pt1);
}

/* Integer weights at fixed variances are repeated rows; raw inputs with
 * little noise give back the linear model's weights. */
static void test_weights_and_raw_inputs(void)
{
    rfx_test_rng r = {13};
    const size_t n = 50, d = 4;
    double *X = rfx_test_matrix(&r, n, d, -1, 1), y[50], w[50];
    const double beta[4] = {1.5, -2.0, 0.25, 0.0};
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        y[i] = 0.7;
        for (size_t j = 0; j < d; j++) y[i] += beta[j] * X[i * d + j];
        y[i] += 1e-3 * rfx_test_normal(&r);
        w[i] = (double)(1 + i % 3);
        nr += (size_t)w[i];
    }
    double *Xr = malloc(nr * d * sizeof *Xr), *yr = malloc(nr * sizeof *yr);
    for (size_t i = 0, k = 0; i < n; i++)
        for (int t = 0; t < (int)w[i]; t++, k++) {
            memcpy(Xr + k * d, X + i * d, d * sizeof *X);
            yr[k] = y[i];
        }
    rfx_blr_params p = rfx_blr_params_default();
    p.noise_var = 0.5;
    p.prior_var = 3.0;
    p.sample_weight = w;
    rfx_blr *a = NULL, *b = NULL;
    CHECK_OK(rfx_blr_fit(&p, rfx_cmat_of(X, n, d), y, &a));
    p.sample_weight = NULL;
    CHECK_OK(rfx_blr_fit(&p, rfx_cmat_of(Xr, nr, d), yr, &b));
    double m1[50], m2[50], s1[50], s2[50], dm = 0, ds = 0;
    CHECK_OK(rfx_blr_predict(a, rfx_cmat_of(X, n, d), m1, s1, 1));
    CHECK_OK(rfx_blr_predict(b, rfx_cmat_of(X, n, d), m2, s2, 1));
    for (size_t i = 0; i < n; i++) {
        dm = fmax(dm, rel(m1[i], m2[i]));
        ds = fmax(ds, rel(s1[i], s2[i]));
    }
    printf("blr weights vs repeated rows: mean %.3g, std %.3g\n", dm, ds);
    CHECK(dm < 1e-9);
    CHECK(ds < 1e-9);
    rfx_blr_free(a);
    rfx_blr_free(b);
    /* fitted variances on raw x: the weights and intercept of the linear model */
    p = rfx_blr_params_default();
    CHECK_OK(rfx_blr_fit(&p, rfx_cmat_of(X, n, d), y, &a));
    rfx_blr_info info;
    CHECK_OK(rfx_blr_get_info(a, &info));
    const double *c = rfx_blr_coef(a);
    printf("blr on raw x: w = %.5f %.5f %.5f %.5f, b = %.5f, noise sd %.3g\n", c[0], c[1], c[2],
           c[3], info.intercept, sqrt(info.noise_var));
    for (size_t j = 0; j < d; j++) CHECK_NEAR(c[j], beta[j], 2e-3);
    CHECK_NEAR(info.intercept, 0.7, 2e-3);
    CHECK(sqrt(info.noise_var) > 5e-4 && sqrt(info.noise_var) < 2e-3);
    rfx_blr_free(a);
    free(X);
    free(Xr);
    free(yr);
}

static void test_errors(void)
{
    double P[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13}, y[4] = {1, 2, 3, 4};
    double bad_S[9] = {1, 0.5, 0, 0.5, 1, 0, 0, 0, -1}, asym[9] = {1, 0.5, 0, 0.4, 1, 0, 0, 0, 1};
    rfx_blr_params p = rfx_blr_params_default();
    rfx_blr *m = NULL;
    p.prior_cov = bad_S;
    CHECK_STATUS(rfx_blr_fit(&p, rfx_cmat_of(P, 4, 3), y, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "blr.prior_cov: not positive definite") != NULL);
    p.prior_cov = asym;
    CHECK_STATUS(rfx_blr_fit(&p, rfx_cmat_of(P, 4, 3), y, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "blr.prior_cov: not symmetric") != NULL);
    p = rfx_blr_params_default();
    p.noise_var = -1;
    CHECK_STATUS(rfx_blr_fit(&p, rfx_cmat_of(P, 4, 3), y, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "blr.noise_var") != NULL);
    p = rfx_blr_params_default();
    P[7] = NAN;
    CHECK_STATUS(rfx_blr_fit(&p, rfx_cmat_of(P, 4, 3), y, &m), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "Phi[2][1]") != NULL);
    P[7] = 8;
    y[3] = INFINITY;
    CHECK_STATUS(rfx_blr_fit(&p, rfx_cmat_of(P, 4, 3), y, &m), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "y[3]") != NULL);
    y[3] = 4;
    CHECK_STATUS(rfx_blr_fit(&p, rfx_cmat_of(P, 1, 3), y, &m), RFX_EDIM);
    CHECK(m == NULL);
    CHECK_OK(rfx_blr_fit(&p, rfx_cmat_of(P, 4, 3), y, &m));
    double mean[4];
    CHECK_STATUS(rfx_blr_predict(m, rfx_cmat_of(P, 3, 4), mean, NULL, 0), RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "4 columns, the model 3") != NULL);
    rfx_blr_free(m);
    rfx_blr_free(NULL);
}

int main(void)
{
    test_against_gp(40, 12);
    test_against_gp(40, 24);
    test_against_gp(15, 30);
    test_fitted_variances(40, 24);
    test_fitted_variances(15, 24);
    test_intercept();
    test_weights_and_raw_inputs();
    test_errors();
    return rfx_test_finish("test_blr");
}
