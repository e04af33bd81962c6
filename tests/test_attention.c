/* SPDX-License-Identifier: BSD-3-Clause */
/* Positive random features of the softmax kernel and linear attention
 * (rfx/attention.h):
 *  - E phi(x).phi(y) = exp(x.y): the mean over seeds is within 4 standard
 *    errors of exp(x.y), the standard error from the closed-form variance
 *    of one term (E exp(2 w.z) = exp(2 |z|^2)), for the positive and the
 *    hyperbolic maps, i.i.d. and orthogonal; the features are positive; the
 *    stabilised transform times exp(log_scale) is the plain one; orthogonal
 *    blocks are orthogonal;
 *  - the relative Frobenius error of linear against exact attention falls
 *    with D = 16, 64, 256, 1024 (mean over seeds), with a log-log slope
 *    near -1/2, and orthogonal features beat i.i.d. ones at every D;
 *  - linear attention (causal and not) equals a per-row loop of the same
 *    formula on the transform's features to 1e-12, exact attention a naive
 *    softmax loop to 1e-13;
 *  - inputs whose plain features underflow to zero give finite outputs
 *    inside the range of V (the weights are positive); features that
 *    overflow and rows whose weights all underflow are errors;
 *  - the trigonometric map (Random Feature Attention's) is unbiased for
 *    exp(x.y) and matches its definition; its linear attention matches the
 *    loop, and a negative normaliser is an error;
 *  - gated attention equals its weights summed in a loop, is causal linear
 *    attention for g_t = t / (t + 1) and returns V for g = 0;
 *  - bitwise identical results for 1 and 2 threads; every error path. */
#include "internal.h"
#include "rfx/attention.h"
#include "testlib.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M_PI_VAL 3.14159265358979323846

static double *normal_matrix(rfx_test_rng *r, size_t rows, size_t cols, double s)
{
    double *M = malloc(rows * cols * sizeof(double));
    for (size_t i = 0; i < rows * cols; i++) M[i] = s * rfx_test_normal(r);
    return M;
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static rfx_softmax_features *make_sf(size_t d, size_t D, uint64_t seed, int orth, int hyp)
{
    rfx_softmax_features *sf = NULL;
    if (hyp) CHECK_OK(rfx_softmax_features_create_hyperbolic(d, D, seed, orth, &sf));
    else CHECK_OK(rfx_softmax_features_create(d, D, seed, orth, &sf));
    return sf;
}

/* ---- the kernel estimate --------------------------------------------------- */

static void test_unbiased(void)
{
    const size_t d = 4, D = 64, S = 400;
    const double x[4] = {0.3, -0.2, 0.5, 0.1}, y[4] = {0.4, 0.1, 0.2, -0.3};
    const double xx = dot(x, x, d), yy = dot(y, y, d), xy = dot(x, y, d);
    const double zz = xx + yy + 2 * xy, target = exp(xy);
    /* the variance of one term: positive exp(w.z - (|x|^2 + |y|^2)/2);
     * hyperbolic cosh(w.z) exp(-(|x|^2 + |y|^2)/2), one per frequency */
    const double var_pos = exp(2 * zz - xx - yy) - exp(2 * xy);
    const double var_hyp = exp(-xx - yy) * 0.5 * (1 + exp(2 * zz)) - exp(2 * xy);
    double X[8];
    memcpy(X, x, sizeof x);
    memcpy(X + 4, y, sizeof y);
    for (int hyp = 0; hyp < 2; hyp++) {
        for (int orth = 0; orth < 2; orth++) {
            double mean = 0, Phi[2 * 64];
            int positive = 1;
            for (size_t s = 0; s < S; s++) {
                rfx_softmax_features *sf = make_sf(d, D, 1000 + s, orth, hyp);
                CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(X, 2, d),
                                                        rfx_mat_of(Phi, 2, D), NULL));
                mean += dot(Phi, Phi + D, D) / (double)S;
                for (size_t j = 0; j < 2 * D; j++) positive &= Phi[j] > 0;
                rfx_softmax_features_free(sf);
            }
            /* terms per seed: D (positive) or D/2 frequencies (hyperbolic);
             * orthogonal draws have at most the i.i.d. variance */
            double se = hyp ? sqrt(var_hyp / (double)(S * D / 2)) : sqrt(var_pos / (double)(S * D));
            printf("  %-10s %-10s: mean %.6f, exp(x.y) = %.6f, |diff| = %.2e = %.2f standard "
                   "errors\n", hyp ? "hyperbolic" : "positive", orth ? "orthogonal" : "iid", mean,
                   target, fabs(mean - target), fabs(mean - target) / se);
            CHECK_NEAR(mean, target, 4 * se);
            CHECK(positive);
        }
    }
}

static void test_transform(void)
{
    const size_t n = 90, d = 6, D = 40;
    rfx_test_rng r = {5};
    double *X = normal_matrix(&r, n, d, 0.8);
    for (int hyp = 0; hyp < 2; hyp++) {
        rfx_softmax_features *sf = make_sf(d, D, 9, 1, hyp);
        double *P = malloc(n * D * sizeof(double)), *Ps = malloc(n * D * sizeof(double));
        double ls[90], err = 0, top = 0;
        CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(X, n, d), rfx_mat_of(P, n, D),
                                                NULL));
        CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(X, n, d), rfx_mat_of(Ps, n, D),
                                                ls));
        rfx_cmat W = rfx_softmax_features_frequencies(sf);
        CHECK(W.rows == (hyp ? D / 2 : D) && W.cols == d);
        for (size_t i = 0; i < n; i++) {
            double mx = 0, h = 0.5 * dot(X + i * d, X + i * d, d);
            for (size_t j = 0; j < D; j++) {
                /* the definition, entry by entry */
                size_t f = hyp && j >= D / 2 ? j - D / 2 : j;
                double sgn = hyp && j >= D / 2 ? -1.0 : 1.0;
                double ref = exp(sgn * dot(W.data + f * d, X + i * d, d) - h) / sqrt((double)D);
                double e = fabs(P[i * D + j] - ref) / ref;
                if (e > err) err = e;
                e = fabs(Ps[i * D + j] * exp(ls[i]) - ref) / ref;
                if (e > err) err = e;
                if (Ps[i * D + j] > mx) mx = Ps[i * D + j];
                CHECK(P[i * D + j] > 0 && Ps[i * D + j] > 0);
            }
            if (fabs(mx * sqrt((double)D) - 1) > top) top = fabs(mx * sqrt((double)D) - 1);
        }
        printf("  %s: max relative error against the definition %.2e; stabilised rows peak at "
               "1/sqrt(D) within %.1e\n", hyp ? "hyperbolic" : "positive", err, top);
        CHECK_NEAR(err, 0.0, 1e-13);
        CHECK_NEAR(top, 0.0, 1e-15);
        free(P);
        free(Ps);
        rfx_softmax_features_free(sf);
    }
    /* orthogonal blocks: rows within a block orthogonal, lengths chi_d */
    rfx_softmax_features *sf = make_sf(d, 2 * d + 3, 4, 1, 0);
    rfx_cmat W = rfx_softmax_features_frequencies(sf);
    double worst = 0;
    for (size_t i = 0; i < W.rows; i++)
        for (size_t j = i + 1; j < W.rows; j++)
            if (i / d == j / d) {
                double c = dot(W.data + i * d, W.data + j * d, d) /
                           sqrt(dot(W.data + i * d, W.data + i * d, d) *
                                dot(W.data + j * d, W.data + j * d, d));
                if (fabs(c) > worst) worst = fabs(c);
            }
    printf("  orthogonal blocks: largest |cos| between rows of a block %.2e\n", worst);
    CHECK_NEAR(worst, 0.0, 1e-13);
    rfx_softmax_features_free(sf);
    free(X);
}

/* ---- accuracy of attention ------------------------------------------------- */

static double rel_frob(const double *A, const double *B, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (A[i] - B[i]) * (A[i] - B[i]);
        den += B[i] * B[i];
    }
    return sqrt(num / den);
}

static void test_error_vs_D(void)
{
    const size_t L = 128, d = 16, dv = 8, S = 50;
    const size_t Ds[4] = {16, 64, 256, 1024};
    rfx_test_rng r = {17};
    /* entries N(0, 0.15^2): |q|, |k| about 0.6, where the variance of the
     * estimate, which grows like exp(|q + k|^2), lets the 1/sqrt(D) regime
     * start at D = 16 */
    const double s = 0.3 / pow((double)d, 0.25);
    double *Q = normal_matrix(&r, L, d, s), *K = normal_matrix(&r, L, d, s);
    double *V = normal_matrix(&r, L, dv, 1.0), *E = malloc(L * dv * sizeof(double));
    double *O = malloc(L * dv * sizeof(double));
    CHECK_OK(rfx_attention_exact(rfx_cmat_of(Q, L, d), rfx_cmat_of(K, L, d),
                                 rfx_cmat_of(V, L, dv), rfx_mat_of(E, L, dv), 0, 0));
    double err[2][4];
    for (int orth = 0; orth < 2; orth++) {
        for (int k = 0; k < 4; k++) {
            double sum = 0;
            for (size_t seed = 0; seed < S; seed++) {
                rfx_softmax_features *sf = make_sf(d, Ds[k], 100 + seed, orth, 0);
                CHECK_OK(rfx_attention_linear(sf, rfx_cmat_of(Q, L, d), rfx_cmat_of(K, L, d),
                                              rfx_cmat_of(V, L, dv), rfx_mat_of(O, L, dv), 0, 0));
                sum += rel_frob(O, E, L * dv);
                rfx_softmax_features_free(sf);
            }
            err[orth][k] = sum / (double)S;
        }
        /* least-squares slope of log err against log D */
        double mx = 0, my = 0, sxy = 0, sxx = 0;
        for (int k = 0; k < 4; k++) {
            mx += log((double)Ds[k]) / 4;
            my += log(err[orth][k]) / 4;
        }
        for (int k = 0; k < 4; k++) {
            sxy += (log((double)Ds[k]) - mx) * (log(err[orth][k]) - my);
            sxx += (log((double)Ds[k]) - mx) * (log((double)Ds[k]) - mx);
        }
        double slope = sxy / sxx;
        printf("  %-10s relative error at D = 16, 64, 256, 1024: %.4f %.4f %.4f %.4f; "
               "log-log slope %.3f\n", orth ? "orthogonal" : "iid", err[orth][0], err[orth][1],
               err[orth][2], err[orth][3], slope);
        for (int k = 1; k < 4; k++) CHECK(err[orth][k] < err[orth][k - 1]);
        CHECK(slope > -0.6 && slope < -0.4);
    }
    for (int k = 0; k < 4; k++)
        CHECK_MSG(err[1][k] < err[0][k], "orthogonal %g >= iid %g at D = %zu", err[1][k],
                  err[0][k], Ds[k]);
    free(Q);
    free(K);
    free(V);
    free(E);
    free(O);
}

/* ---- against per-row loops ------------------------------------------------- */

/* Out_i = sum_j w_ij v_j / sum_j w_ij, w_ij = phi(q_i).phi(k_j), j <= i
 * when causal, from the transform's (unstabilised) features. */
static void naive_linear(const rfx_softmax_features *sf, const double *Q, size_t Lq,
                         const double *K, size_t Lk, const double *V, size_t dv, int causal,
                         double *Out)
{
    const size_t d = rfx_softmax_features_input_dim(sf), D = rfx_softmax_features_output_dim(sf);
    double *PQ = malloc(Lq * D * sizeof(double)), *PK = malloc(Lk * D * sizeof(double));
    CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(Q, Lq, d), rfx_mat_of(PQ, Lq, D),
                                            NULL));
    CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(K, Lk, d), rfx_mat_of(PK, Lk, D),
                                            NULL));
    for (size_t i = 0; i < Lq; i++) {
        double den = 0;
        for (size_t c = 0; c < dv; c++) Out[i * dv + c] = 0;
        for (size_t j = 0; j < (causal ? i + 1 : Lk); j++) {
            double w = dot(PQ + i * D, PK + j * D, D);
            den += w;
            for (size_t c = 0; c < dv; c++) Out[i * dv + c] += w * V[j * dv + c];
        }
        for (size_t c = 0; c < dv; c++) Out[i * dv + c] /= den;
    }
    free(PQ);
    free(PK);
}

static void naive_exact(const double *Q, size_t Lq, const double *K, size_t Lk, size_t d,
                        const double *V, size_t dv, int causal, double *Out)
{
    double *s = malloc(Lk * sizeof(double));
    for (size_t i = 0; i < Lq; i++) {
        size_t len = causal ? i + 1 : Lk;
        double m = -INFINITY, sum = 0;
        for (size_t j = 0; j < len; j++) {
            s[j] = dot(Q + i * d, K + j * d, d);
            if (s[j] > m) m = s[j];
        }
        for (size_t j = 0; j < len; j++) sum += exp(s[j] - m);
        for (size_t c = 0; c < dv; c++) {
            double o = 0;
            for (size_t j = 0; j < len; j++) o += exp(s[j] - m) / sum * V[j * dv + c];
            Out[i * dv + c] = o;
        }
    }
    free(s);
}

static double rel_max(const double *A, const double *B, size_t n)
{
    double e = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        if (fabs(A[i] - B[i]) > e) e = fabs(A[i] - B[i]);
        if (fabs(B[i]) > m) m = fabs(B[i]);
    }
    return e / m;
}

static void test_against_loops(void)
{
    const size_t L = 150, Lq = 70, d = 8, dv = 5, D = 32;
    rfx_test_rng r = {23};
    double *Q = normal_matrix(&r, L, d, 0.5), *K = normal_matrix(&r, L, d, 0.5);
    double *V = normal_matrix(&r, L, dv, 1.0);
    /* a few keys and queries with larger exponents: the running maximum of
     * the causal sums changes along the sequence */
    for (size_t j = 0; j < d; j++) {
        K[100 * d + j] *= 4;
        K[30 * d + j] *= 3;
        Q[120 * d + j] *= 4;
    }
    double *A = malloc(L * dv * sizeof(double)), *B = malloc(L * dv * sizeof(double));
    for (int hyp = 0; hyp < 2; hyp++) {
        rfx_softmax_features *sf = make_sf(d, D, 3, hyp, hyp);
        for (int causal = 0; causal < 2; causal++) {
            CHECK_OK(rfx_attention_linear(sf, rfx_cmat_of(Q, L, d), rfx_cmat_of(K, L, d),
                                          rfx_cmat_of(V, L, dv), rfx_mat_of(A, L, dv), causal, 0));
            naive_linear(sf, Q, L, K, L, V, dv, causal, B);
            double e = rel_max(A, B, L * dv);
            printf("  linear %s, %s: max |diff| / max |Out| = %.2e\n",
                   hyp ? "hyperbolic orthogonal" : "positive iid",
                   causal ? "causal" : "non-causal", e);
            CHECK_NEAR(e, 0.0, 1e-12);
        }
        /* fewer queries than keys */
        CHECK_OK(rfx_attention_linear(sf, rfx_cmat_of(Q, Lq, d), rfx_cmat_of(K, L, d),
                                      rfx_cmat_of(V, L, dv), rfx_mat_of(A, Lq, dv), 0, 0));
        naive_linear(sf, Q, Lq, K, L, V, dv, 0, B);
        CHECK_NEAR(rel_max(A, B, Lq * dv), 0.0, 1e-12);
        rfx_softmax_features_free(sf);
    }
    for (int causal = 0; causal < 2; causal++) {
        CHECK_OK(rfx_attention_exact(rfx_cmat_of(Q, L, d), rfx_cmat_of(K, L, d),
                                     rfx_cmat_of(V, L, dv), rfx_mat_of(A, L, dv), causal, 0));
        naive_exact(Q, L, K, L, d, V, dv, causal, B);
        double e = rel_max(A, B, L * dv);
        printf("  exact %s: max |diff| / max |Out| = %.2e\n", causal ? "causal" : "non-causal",
               e);
        CHECK_NEAR(e, 0.0, 1e-13);
    }
    CHECK_OK(rfx_attention_exact(rfx_cmat_of(Q, Lq, d), rfx_cmat_of(K, L, d),
                                 rfx_cmat_of(V, L, dv), rfx_mat_of(A, Lq, dv), 0, 0));
    naive_exact(Q, Lq, K, L, d, V, dv, 0, B);
    CHECK_NEAR(rel_max(A, B, Lq * dv), 0.0, 1e-13);
    /* strided views: a column block of wider arrays */
    double *Qw = malloc(L * (d + 3) * sizeof(double)), *Ow = malloc(L * (dv + 2) * sizeof(double));
    for (size_t i = 0; i < L; i++) memcpy(Qw + i * (d + 3), Q + i * d, d * sizeof(double));
    rfx_cmat Qv = {Qw, L, d, d + 3};
    rfx_mat Ov = {Ow, L, dv, dv + 2};
    rfx_softmax_features *sf = make_sf(d, D, 3, 0, 0);
    CHECK_OK(rfx_attention_linear(sf, Qv, rfx_cmat_of(K, L, d), rfx_cmat_of(V, L, dv), Ov, 1, 0));
    naive_linear(sf, Q, L, K, L, V, dv, 1, B);
    double e = 0;
    for (size_t i = 0; i < L; i++)
        for (size_t c = 0; c < dv; c++)
            if (fabs(Ow[i * (dv + 2) + c] - B[i * dv + c]) > e)
                e = fabs(Ow[i * (dv + 2) + c] - B[i * dv + c]);
    CHECK_NEAR(e, 0.0, 1e-12);
    rfx_softmax_features_free(sf);
    free(Qw);
    free(Ow);
    free(Q);
    free(K);
    free(V);
    free(A);
    free(B);
}

/* Large inputs: the plain features underflow to rows of zeros (the naive
 * formula would give 0 / 0), the stabilised ones keep every output finite
 * and a convex combination of the rows of V. Then the two failures: plain
 * features that overflow, and a row whose weights all underflow. */
static void test_large_inputs(void)
{
    const size_t L = 200, d = 16, dv = 3, D = 64;
    rfx_test_rng r = {31};
    double *Q = normal_matrix(&r, L, d, 15.0), *K = normal_matrix(&r, L, d, 15.0);
    double *V = normal_matrix(&r, L, dv, 1.0), *O = malloc(L * dv * sizeof(double));
    double *P = malloc(L * D * sizeof(double)), ls[200];
    rfx_softmax_features *sf = make_sf(d, D, 8, 0, 0);
    CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(Q, L, d), rfx_mat_of(P, L, D), NULL));
    size_t zero_rows = 0;
    for (size_t i = 0; i < L; i++) {
        double m = 0;
        for (size_t j = 0; j < D; j++) m = P[i * D + j] > m ? P[i * D + j] : m;
        zero_rows += m == 0;
    }
    CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(Q, L, d), rfx_mat_of(P, L, D), ls));
    int ok = 1;
    for (size_t i = 0; i < L * D; i++) ok &= isfinite(P[i]) && P[i] >= 0;
    CHECK(ok);
    printf("  |q| about 60: %zu of %zu rows of plain features underflow to zero; stabilised "
           "all finite\n", zero_rows, L);
    CHECK(zero_rows >= L * 9 / 10);
    double vmin[3], vmax[3];
    for (size_t c = 0; c < dv; c++) {
        vmin[c] = INFINITY;
        vmax[c] = -INFINITY;
        for (size_t j = 0; j < L; j++) {
            if (V[j * dv + c] < vmin[c]) vmin[c] = V[j * dv + c];
            if (V[j * dv + c] > vmax[c]) vmax[c] = V[j * dv + c];
        }
    }
    for (int causal = 0; causal < 2; causal++) {
        CHECK_OK(rfx_attention_linear(sf, rfx_cmat_of(Q, L, d), rfx_cmat_of(K, L, d),
                                      rfx_cmat_of(V, L, dv), rfx_mat_of(O, L, dv), causal, 0));
        int inside = 1;
        for (size_t i = 0; i < L; i++)
            for (size_t c = 0; c < dv; c++) {
                double o = O[i * dv + c];
                inside &= isfinite(o) && o >= vmin[c] - 1e-12 && o <= vmax[c] + 1e-12;
            }
        CHECK_MSG(inside, "%s outputs not finite or outside the range of V",
                  causal ? "causal" : "non-causal");
        CHECK_OK(rfx_attention_exact(rfx_cmat_of(Q, L, d), rfx_cmat_of(K, L, d),
                                     rfx_cmat_of(V, L, dv), rfx_mat_of(O, L, dv), causal, 0));
        inside = 1;
        for (size_t i = 0; i < L * dv; i++) inside &= isfinite(O[i]);
        CHECK(inside);
    }
    rfx_softmax_features_free(sf);

    /* overflow: d = 2000, x = w_0, whose exponent |w_0|^2 / 2 is about 1000 */
    const size_t dd = 2000;
    sf = make_sf(dd, 4, 2, 0, 0);
    double x[2000], Px[4], lx;
    memcpy(x, rfx_softmax_features_frequencies(sf).data, dd * sizeof(double));
    CHECK_STATUS(rfx_softmax_features_transform(sf, rfx_cmat_of(x, 1, dd), rfx_mat_of(Px, 1, 4),
                                                NULL), RFX_ENUMERIC);
    CHECK(strstr(rfx_last_error(), "row 0") != NULL);
    CHECK(strstr(rfx_last_error(), "log_scale") != NULL);
    CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(x, 1, dd), rfx_mat_of(Px, 1, 4), &lx));
    CHECK_NEAR(lx, 0.5 * dot(x, x, dd), 1e-9 * lx);
    rfx_softmax_features_free(sf);

    /* d = 1, D = 2: the query q = c lives on the column of the larger w, the
     * key k = -c on the other; with |w0 - w1| c > 745 the product underflows */
    sf = make_sf(1, 2, 5, 0, 0);
    const double *w = rfx_softmax_features_frequencies(sf).data;
    double c = w[0] > w[1] ? 2000.0 : -2000.0, q = c, k = -c, v = 1.0, o;
    for (int causal = 0; causal < 2; causal++) {
        CHECK_STATUS(rfx_attention_linear(sf, rfx_cmat_of(&q, 1, 1), rfx_cmat_of(&k, 1, 1),
                                          rfx_cmat_of(&v, 1, 1), rfx_mat_of(&o, 1, 1), causal, 0),
                     RFX_ENUMERIC);
        CHECK(strstr(rfx_last_error(), "row 0") != NULL);
        CHECK_OK(rfx_attention_exact(rfx_cmat_of(&q, 1, 1), rfx_cmat_of(&k, 1, 1),
                                     rfx_cmat_of(&v, 1, 1), rfx_mat_of(&o, 1, 1), causal, 0));
        CHECK(o == 1.0);
    }
    rfx_softmax_features_free(sf);
    free(Q);
    free(K);
    free(V);
    free(O);
    free(P);
}

static void test_threads(void)
{
    const size_t L = 700, d = 12, dv = 6, D = 128;
    rfx_test_rng r = {41};
    double *Q = normal_matrix(&r, L, d, 0.5), *K = normal_matrix(&r, L, d, 0.5);
    double *V = normal_matrix(&r, L, dv, 1.0);
    double *O[2], *P[2];
    rfx_softmax_features *sf = make_sf(d, D, 6, 1, 0);
    for (int variant = 0; variant < 3; variant++) {
        for (int t = 0; t < 2; t++) {
            O[t] = malloc(L * dv * sizeof(double));
            if (variant < 2)
                CHECK_OK(rfx_attention_linear(sf, rfx_cmat_of(Q, L, d), rfx_cmat_of(K, L, d),
                                              rfx_cmat_of(V, L, dv), rfx_mat_of(O[t], L, dv),
                                              variant, t + 1));
            else
                CHECK_OK(rfx_attention_exact(rfx_cmat_of(Q, L, d), rfx_cmat_of(K, L, d),
                                             rfx_cmat_of(V, L, dv), rfx_mat_of(O[t], L, dv), 1,
                                             t + 1));
        }
        CHECK(memcmp(O[0], O[1], L * dv * sizeof(double)) == 0);
        free(O[0]);
        free(O[1]);
    }
    for (int t = 0; t < 2; t++) {
        P[t] = malloc(L * D * sizeof(double));
        rfx_softmax_features_set_threads(sf, t + 1);
        CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(Q, L, d), rfx_mat_of(P[t], L, D),
                                                NULL));
    }
    CHECK(memcmp(P[0], P[1], L * D * sizeof(double)) == 0);
    free(P[0]);
    free(P[1]);
    rfx_softmax_features_free(sf);
    free(Q);
    free(K);
    free(V);
}

/* ---- errors ---------------------------------------------------------------- */

static void test_errors(void)
{
    const size_t L = 10, d = 3, dv = 2, D = 8;
    rfx_test_rng r = {51};
    double *Q = normal_matrix(&r, L, d, 0.5), *K = normal_matrix(&r, L, d, 0.5);
    double *V = normal_matrix(&r, L, dv, 1.0), O[20], P[80];
    rfx_softmax_features *sf = NULL, *const sentinel = (rfx_softmax_features *)&sf;
    sf = sentinel;
    CHECK_STATUS(rfx_softmax_features_create(0, D, 1, 0, &sf), RFX_EINVAL);
    CHECK_STATUS(rfx_softmax_features_create(d, 0, 1, 0, &sf), RFX_EINVAL);
    CHECK_STATUS(rfx_softmax_features_create(d, D, 1, 0, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_softmax_features_create_hyperbolic(d, 7, 1, 0, &sf), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "even") != NULL);
    CHECK_STATUS(rfx_softmax_features_create(4, SIZE_MAX / 2, 1, 0, &sf), RFX_EOVERFLOW);
    CHECK_STATUS(rfx_softmax_features_create(1, (size_t)1 << 31, 1, 0, &sf), RFX_EOVERFLOW);
    CHECK_STATUS(rfx_softmax_features_create((size_t)1 << 31, 1, 1, 1, &sf), RFX_EOVERFLOW);
    CHECK(sf == sentinel);
    rfx_softmax_features_free(NULL);
    CHECK(rfx_softmax_features_input_dim(NULL) == 0);
    CHECK(rfx_softmax_features_output_dim(NULL) == 0);
    CHECK(rfx_softmax_features_frequencies(NULL).data == NULL);
    rfx_softmax_features_set_threads(NULL, 2);
    sf = make_sf(d, D, 1, 0, 0);
    CHECK(rfx_softmax_features_input_dim(sf) == d && rfx_softmax_features_output_dim(sf) == D);

    rfx_cmat Qv = rfx_cmat_of(Q, L, d), Kv = rfx_cmat_of(K, L, d), Vv = rfx_cmat_of(V, L, dv);
    rfx_mat Ov = rfx_mat_of(O, L, dv);
    /* transform */
    CHECK_STATUS(rfx_softmax_features_transform(NULL, Qv, rfx_mat_of(P, L, D), NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_softmax_features_transform(sf, rfx_cmat_of(Q, 5, 2), rfx_mat_of(P, 5, D),
                                                NULL), RFX_EDIM);
    CHECK_STATUS(rfx_softmax_features_transform(sf, Qv, rfx_mat_of(P, L - 1, D), NULL), RFX_EDIM);
    CHECK_STATUS(rfx_softmax_features_transform(sf, Qv, rfx_mat_of(P, 5, 16), NULL), RFX_EDIM);
    rfx_cmat bad = Qv;
    bad.stride = 2;
    CHECK_STATUS(rfx_softmax_features_transform(sf, bad, rfx_mat_of(P, L, D), NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_softmax_features_transform(sf, rfx_cmat_of(NULL, L, d), rfx_mat_of(P, L, D),
                                                NULL), RFX_EINVAL);
    Q[2 * d + 1] = NAN;
    CHECK_STATUS(rfx_softmax_features_transform(sf, Qv, rfx_mat_of(P, L, D), NULL), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "row 2, column 1") != NULL);
    /* attention: NaN in each input, named */
    CHECK_STATUS(rfx_attention_linear(sf, Qv, Kv, Vv, Ov, 0, 0), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), ": Q row 2, column 1") != NULL);
    CHECK_STATUS(rfx_attention_exact(Qv, Kv, Vv, Ov, 0, 0), RFX_EPARSE);
    Q[2 * d + 1] = 0.1;
    K[4 * d] = INFINITY;
    CHECK_STATUS(rfx_attention_linear(sf, Qv, Kv, Vv, Ov, 1, 0), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), ": K row 4, column 0") != NULL);
    K[4 * d] = 0.1;
    V[3] = -INFINITY;
    CHECK_STATUS(rfx_attention_linear(sf, Qv, Kv, Vv, Ov, 0, 0), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), ": V row 1, column 1") != NULL);
    CHECK_STATUS(rfx_attention_exact(Qv, Kv, Vv, Ov, 1, 0), RFX_EPARSE);
    V[3] = 0.2;
    /* shapes and arguments */
    for (int exact = 0; exact < 2; exact++) {
#define ATT(q, k, v, o, c, t)                                                     \
    (exact ? rfx_attention_exact(q, k, v, o, c, t) : rfx_attention_linear(sf, q, k, v, o, c, t))
        CHECK_STATUS(ATT(rfx_cmat_of(Q, L, 2), rfx_cmat_of(K, L, 2), Vv, Ov, 0, 0),
                     exact ? RFX_OK : RFX_EDIM); /* d = 2: only the map objects */
        CHECK_STATUS(ATT(Qv, rfx_cmat_of(K, 5, 2), rfx_cmat_of(V, 5, dv), Ov, 0, 0), RFX_EDIM);
        CHECK_STATUS(ATT(Qv, rfx_cmat_of(K, 0, d), rfx_cmat_of(V, 0, dv), Ov, 0, 0), RFX_EDIM);
        CHECK(strstr(rfx_last_error(), "no keys") != NULL);
        CHECK_STATUS(ATT(Qv, Kv, rfx_cmat_of(V, L - 1, dv), Ov, 0, 0), RFX_EDIM);
        CHECK_STATUS(ATT(Qv, Kv, rfx_cmat_of(V, L, 0), rfx_mat_of(O, L, 0), 0, 0), RFX_EDIM);
        CHECK_STATUS(ATT(Qv, Kv, Vv, rfx_mat_of(O, L, 1), 0, 0), RFX_EDIM);
        CHECK_STATUS(ATT(Qv, Kv, Vv, rfx_mat_of(O, L - 2, dv), 0, 0), RFX_EDIM);
        CHECK_STATUS(ATT(rfx_cmat_of(Q, 4, d), Kv, Vv, rfx_mat_of(O, 4, dv), 1, 0), RFX_EDIM);
        CHECK(strstr(rfx_last_error(), "causal") != NULL);
        CHECK_STATUS(ATT(rfx_cmat_of(Q, 4, d), Kv, Vv, rfx_mat_of(O, 4, dv), 0, 0), RFX_OK);
        CHECK_STATUS(ATT(rfx_cmat_of(Q, 0, d), Kv, Vv, rfx_mat_of(O, 0, dv), 0, 0), RFX_OK);
        CHECK_STATUS(ATT(Qv, Kv, Vv, Ov, 0, -1), RFX_EINVAL);
        CHECK(strstr(rfx_last_error(), "n_threads") != NULL);
        CHECK_STATUS(ATT(rfx_cmat_of(NULL, L, d), Kv, Vv, Ov, 0, 0), RFX_EINVAL);
        rfx_mat bo = Ov;
        bo.stride = 1;
        CHECK_STATUS(ATT(Qv, Kv, Vv, bo, 0, 0), RFX_EINVAL);
#undef ATT
    }
    CHECK_STATUS(rfx_attention_linear(NULL, Qv, Kv, Vv, Ov, 0, 0), RFX_EINVAL);
    CHECK_STATUS(rfx_attention_exact(rfx_cmat_of(Q, L, 0), rfx_cmat_of(K, L, 0), Vv, Ov, 0, 0),
                 RFX_EDIM);
    rfx_softmax_features_free(sf);
    free(Q);
    free(K);
    free(V);
}

/* ---- trigonometric features and gated attention --------------------------- */

/* The trigonometric map: E phi(x).phi(y) = exp(x.y) within 4 standard
 * errors (one term per frequency: exp((|x|^2 + |y|^2)/2) cos(w.(x - y)),
 * whose variance is exp(|x|^2 + |y|^2) ((1 + exp(-2 |z|^2)) / 2 -
 * exp(-|z|^2)), z = x - y); the transform against its definition, plain and
 * stabilised. */
static void test_trig_features(void)
{
    const size_t d = 4, D = 64, F = 32, S = 400;
    const double x[4] = {0.3, -0.2, 0.5, 0.1}, y[4] = {0.4, 0.1, 0.2, -0.3};
    const double xx = dot(x, x, d), yy = dot(y, y, d), xy = dot(x, y, d);
    const double zz = xx + yy - 2 * xy, target = exp(xy);
    const double var = exp(xx + yy) * (0.5 * (1 + exp(-2 * zz)) - exp(-zz));
    double X[8], Phi[2 * 64];
    memcpy(X, x, sizeof x);
    memcpy(X + 4, y, sizeof y);
    for (int orth = 0; orth < 2; orth++) {
        double mean = 0;
        for (size_t s = 0; s < S; s++) {
            rfx_softmax_features *sf = NULL;
            CHECK_OK(rfx_softmax_features_create_trig(d, D, 2000 + s, orth, &sf));
            CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(X, 2, d),
                                                    rfx_mat_of(Phi, 2, D), NULL));
            mean += dot(Phi, Phi + D, D) / (double)S;
            rfx_softmax_features_free(sf);
        }
        double se = sqrt(var / (double)(S * F));
        printf("  trigonometric %-10s: mean %.6f, exp(x.y) = %.6f, %.2f standard errors\n",
               orth ? "orthogonal" : "iid", mean, target, fabs(mean - target) / se);
        CHECK_NEAR(mean, target, 4 * se);
    }
    /* the definition, plain and stabilised (log_scale = |x|^2/2) */
    rfx_test_rng r = {15};
    const size_t n = 50, dd = 5, DD = 30;
    double *Xn = normal_matrix(&r, n, dd, 0.9), *P = malloc(n * DD * sizeof(double));
    double *Ps = malloc(n * DD * sizeof(double)), ls[50], err = 0;
    rfx_softmax_features *sf = NULL;
    CHECK_OK(rfx_softmax_features_create_trig(dd, DD, 3, 1, &sf));
    CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(Xn, n, dd), rfx_mat_of(P, n, DD),
                                            NULL));
    CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(Xn, n, dd), rfx_mat_of(Ps, n, DD),
                                            ls));
    rfx_cmat W = rfx_softmax_features_frequencies(sf);
    CHECK(W.rows == DD / 2 && W.cols == dd);
    for (size_t i = 0; i < n; i++) {
        double h = 0.5 * dot(Xn + i * dd, Xn + i * dd, dd);
        CHECK_NEAR(ls[i], h, 1e-15 * h);
        for (size_t j = 0; j < DD; j++) {
            size_t f = j % (DD / 2);
            double t = dot(W.data + f * dd, Xn + i * dd, dd);
            double ref = exp(h) * (j < DD / 2 ? cos(t) : sin(t)) / sqrt((double)(DD / 2));
            err = fmax(err, fabs(P[i * DD + j] - ref) / (exp(h) / sqrt((double)(DD / 2))));
            err = fmax(err, fabs(Ps[i * DD + j] * exp(ls[i]) - ref) /
                                (exp(h) / sqrt((double)(DD / 2))));
        }
    }
    printf("  trigonometric transform: max error against the definition %.2e\n", err);
    CHECK_NEAR(err, 0.0, 1e-13);
    rfx_softmax_features *odd = NULL;
    CHECK_STATUS(rfx_softmax_features_create_trig(dd, 31, 3, 0, &odd), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "trigonometric") != NULL);
    rfx_softmax_features_free(sf);
    free(Xn);
    free(P);
    free(Ps);
}

/* The gated recurrence against its weights summed in a loop,
 *   out_t = sum_j a_tj v_j / sum_j a_tj,
 *   a_tj = phi(q_t).phi(k_j) (1 - g_j) prod_{j < l <= t} g_l,
 * on the transform's features. */
static void naive_gated(const rfx_softmax_features *sf, const double *Q, const double *K,
                        const double *V, const double *g, size_t L, size_t dv, double *Out)
{
    const size_t d = rfx_softmax_features_input_dim(sf), D = rfx_softmax_features_output_dim(sf);
    double *PQ = malloc(L * D * sizeof(double)), *PK = malloc(L * D * sizeof(double));
    CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(Q, L, d), rfx_mat_of(PQ, L, D), NULL));
    CHECK_OK(rfx_softmax_features_transform(sf, rfx_cmat_of(K, L, d), rfx_mat_of(PK, L, D), NULL));
    for (size_t t = 0; t < L; t++) {
        double den = 0;
        for (size_t c = 0; c < dv; c++) Out[t * dv + c] = 0;
        for (size_t j = 0; j <= t; j++) {
            double a = dot(PQ + t * D, PK + j * D, D) * (1 - g[j]);
            for (size_t l = j + 1; l <= t; l++) a *= g[l];
            den += a;
            for (size_t c = 0; c < dv; c++) Out[t * dv + c] += a * V[j * dv + c];
        }
        for (size_t c = 0; c < dv; c++) Out[t * dv + c] /= den;
    }
    free(PQ);
    free(PK);
}

static void test_gated(void)
{
    const size_t L = 140, d = 6, dv = 4, D = 256;
    rfx_test_rng r = {61};
    double *Q = normal_matrix(&r, L, d, 0.3), *K = normal_matrix(&r, L, d, 0.3);
    double *V = normal_matrix(&r, L, dv, 1.0);
    double *A = malloc(L * dv * sizeof(double)), *B = malloc(L * dv * sizeof(double));
    double g[140], run[140], zero[140];
    for (size_t t = 0; t < L; t++) {
        g[t] = 0.6 + 0.39 * rfx_test_uniform(&r);
        run[t] = (double)t / (double)(t + 1);
        zero[t] = 0.0;
    }
    for (int kind = 0; kind < 3; kind++) {
        /* the positive maps: a key with a larger exponent, so that the
         * running maximum changes (the trigonometric estimate of that key's
         * weight, exp(|k|^2/2) times a cosine, would swamp the others with
         * either sign: it keeps the small keys) */
        for (size_t j = 0; j < d; j++) K[77 * d + j] *= kind == 0 ? 5.0 : kind == 2 ? 0.2 : 1.0;
        rfx_softmax_features *sf = NULL;
        if (kind == 2) CHECK_OK(rfx_softmax_features_create_trig(d, D, 8, 1, &sf));
        else sf = make_sf(d, D, 8, 1, kind);
        const char *name = kind == 2 ? "trigonometric" : kind ? "hyperbolic" : "positive";
        rfx_cmat Qm = rfx_cmat_of(Q, L, d), Km = rfx_cmat_of(K, L, d), Vm = rfx_cmat_of(V, L, dv);
        CHECK_OK(rfx_attention_gated(sf, Qm, Km, Vm, g, rfx_mat_of(A, L, dv), 0));
        naive_gated(sf, Q, K, V, g, L, dv, B);
        double e1 = rel_max(A, B, L * dv);
        /* g_t = t / (t + 1): the causal linear attention */
        CHECK_OK(rfx_attention_gated(sf, Qm, Km, Vm, run, rfx_mat_of(A, L, dv), 0));
        CHECK_OK(rfx_attention_linear(sf, Qm, Km, Vm, rfx_mat_of(B, L, dv), 1, 0));
        double e2 = rel_max(A, B, L * dv);
        /* g = 0: each row is its own key's value */
        CHECK_OK(rfx_attention_gated(sf, Qm, Km, Vm, zero, rfx_mat_of(A, L, dv), 0));
        double e3 = rel_max(A, V, L * dv);
        printf("  gated, %s: against the loop %.2e, g = t/(t+1) against causal linear %.2e, "
               "g = 0 against V %.2e\n", name, e1, e2, e3);
        CHECK_NEAR(e1, 0.0, 1e-12);
        CHECK_NEAR(e2, 0.0, 1e-12);
        CHECK_NEAR(e3, 0.0, 1e-12);
        /* errors */
        g[5] = 1.5;
        CHECK_STATUS(rfx_attention_gated(sf, Qm, Km, Vm, g, rfx_mat_of(A, L, dv), 0), RFX_EINVAL);
        CHECK(strstr(rfx_last_error(), "gates[5]") != NULL);
        g[5] = 0.7;
        CHECK_STATUS(rfx_attention_gated(sf, Qm, Km, Vm, NULL, rfx_mat_of(A, L, dv), 0),
                     RFX_EINVAL);
        CHECK_STATUS(rfx_attention_gated(sf, Qm, rfx_cmat_of(K, L - 1, d), rfx_cmat_of(V, L - 1, dv),
                                         g, rfx_mat_of(A, L, dv), 0),
                     RFX_EDIM);
        rfx_softmax_features_free(sf);
    }
    free(Q);
    free(K);
    free(V);
    free(A);
    free(B);
}

/* Trigonometric linear attention equals its loop (causal and not); with a
 * normaliser that comes out negative it is an error naming the row. */
static void test_trig_attention(void)
{
    const size_t L = 100, d = 8, dv = 3, D = 512;
    rfx_test_rng r = {71};
    double *Q = normal_matrix(&r, L, d, 0.25), *K = normal_matrix(&r, L, d, 0.25);
    double *V = normal_matrix(&r, L, dv, 1.0);
    double *A = malloc(L * dv * sizeof(double)), *B = malloc(L * dv * sizeof(double));
    rfx_softmax_features *sf = NULL;
    CHECK_OK(rfx_softmax_features_create_trig(d, D, 5, 1, &sf));
    for (int causal = 0; causal < 2; causal++) {
        CHECK_OK(rfx_attention_linear(sf, rfx_cmat_of(Q, L, d), rfx_cmat_of(K, L, d),
                                      rfx_cmat_of(V, L, dv), rfx_mat_of(A, L, dv), causal, 0));
        naive_linear(sf, Q, L, K, L, V, dv, causal, B);
        double e = rel_max(A, B, L * dv);
        printf("  trigonometric linear attention, %s: against the loop %.2e\n",
               causal ? "causal" : "non-causal", e);
        CHECK_NEAR(e, 0.0, 1e-12);
    }
    rfx_softmax_features_free(sf);
    /* two features, keys that make the estimate negative: cos(w.(q - k)) < 0 */
    CHECK_OK(rfx_softmax_features_create_trig(1, 2, 1, 0, &sf));
    const double w = rfx_softmax_features_frequencies(sf).data[0];
    double q1[1] = {0.0}, k1[1] = {M_PI_VAL / w}, v1[1] = {1.0}, o1[1];
    CHECK_STATUS(rfx_attention_linear(sf, rfx_cmat_of(q1, 1, 1), rfx_cmat_of(k1, 1, 1),
                                      rfx_cmat_of(v1, 1, 1), rfx_mat_of(o1, 1, 1), 0, 0),
                 RFX_ENUMERIC);
    CHECK(strstr(rfx_last_error(), "normaliser is not positive") != NULL);
    rfx_softmax_features_free(sf);
    free(Q);
    free(K);
    free(V);
    free(A);
    free(B);
}

int main(void)
{
    RFX_TEST_RUN(test_unbiased);
    RFX_TEST_RUN(test_transform);
    RFX_TEST_RUN(test_trig_features);
    RFX_TEST_RUN(test_gated);
    RFX_TEST_RUN(test_trig_attention);
    RFX_TEST_RUN(test_error_vs_D);
    RFX_TEST_RUN(test_against_loops);
    RFX_TEST_RUN(test_large_inputs);
    RFX_TEST_RUN(test_threads);
    RFX_TEST_RUN(test_errors);
    return rfx_test_finish("test_attention");
}
