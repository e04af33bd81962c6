/* SPDX-License-Identifier: BSD-3-Clause */
/* Ridge and Bayesian regression on random features, checked against the
 * normal equations (LAPACK residuals), the dual form, brute-force GCV and
 * k-fold selection, and an exact GP with the finite-feature kernel; row
 * weights against repeated rows, dropped rows and no weights. */
#include "internal.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* y = sin(3 x0) + x1^2 - x2 + noise, columns ny copies with offsets */
static void make_data(rfx_test_rng *r, size_t n, size_t d, size_t ny, double offset, double **X,
                      double **Y)
{
    *X = rfx_test_matrix(r, n, d, -1, 1);
    *Y = malloc(n * ny * sizeof **Y);
    for (size_t i = 0; i < n; i++) {
        const double *x = *X + i * d;
        double f = sin(3 * x[0]) + (d > 1 ? x[1] * x[1] : 0) - (d > 2 ? x[2] : 0);
        for (size_t k = 0; k < ny; k++)
            (*Y)[i * ny + k] = offset + (double)k * f + f + 0.05 * rfx_test_normal(r);
    }
}

static rfx_features *make_features(size_t D, size_t d, uint64_t seed, rfx_form form)
{
    rfx_features_params p = rfx_features_params_default();
    p.n_features = D;
    p.seed = seed;
    p.form = form;
    p.length_scale = 0.7;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&p, d, &f));
    return f;
}

static double *features_of(const rfx_features *f, const double *X, size_t n)
{
    size_t d = rfx_features_input_dim(f), D = rfx_features_output_dim(f);
    double *Z = malloc(n * D * sizeof *Z);
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, D)));
    return Z;
}

/* The weights satisfy (Zc^T Zc + lambda I) w = Zc^T yc to LAPACK accuracy:
 * |residual| <= 1e-12 |A| |w| (a backward-stable solve gives O(eps)). */
static void test_normal_equations(void)
{
    rfx_test_rng r = {1};
    const size_t n = 700, d = 3, D = 200, ny = 2;
    double *X, *Y;
    make_data(&r, n, d, ny, 3.0, &X, &Y);
    rfx_features *f = make_features(D, d, 5, RFX_FORM_COS_BIAS);
    double *Z = features_of(f, X, n);
    for (int icpt = 0; icpt < 2; icpt++) {
        rfx_ridge_params p = rfx_ridge_params_default();
        p.lambda = 1e-2;
        p.fit_intercept = icpt;
        p.solver = RFX_SOLVER_PRIMAL;
        rfx_model *m = NULL;
        CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &m));
        if (!m) continue;
        const double *W = rfx_model_weights(m).data;
        /* centre explicitly, form A and the residual */
        double *mu = calloc(D, sizeof *mu), ybar[2] = {0, 0};
        if (icpt) {
            for (size_t i = 0; i < n; i++) {
                for (size_t j = 0; j < D; j++) mu[j] += Z[i * D + j] / (double)n;
                for (size_t k = 0; k < ny; k++) ybar[k] += Y[i * ny + k] / (double)n;
            }
        }
        double res = 0, anorm = 0, wnorm = 0;
        for (size_t k = 0; k < ny; k++) {
            for (size_t a = 0; a < D; a++) {
                double lhs = p.lambda * W[a * ny + k], rhs = 0, rowsum = p.lambda;
                for (size_t i = 0; i < n; i++) {
                    double za = Z[i * D + a] - mu[a];
                    rhs += za * (Y[i * ny + k] - ybar[k]);
                }
                for (size_t b = 0; b < D; b++) {
                    double g = 0;
                    for (size_t i = 0; i < n; i++)
                        g += (Z[i * D + a] - mu[a]) * (Z[i * D + b] - mu[b]);
                    lhs += g * W[b * ny + k];
                    rowsum += fabs(g);
                }
                res = fmax(res, fabs(lhs - rhs));
                anorm = fmax(anorm, rowsum);
                wnorm = fmax(wnorm, fabs(W[a * ny + k]));
            }
        }
        double rel = res / (anorm * wnorm);
        printf("normal equations (intercept %d): |r| / (|A| |w|) = %.3g\n", icpt, rel);
        CHECK(rel < 1e-12);
        /* the intercept makes the mean residual zero */
        if (icpt) {
            double *P = malloc(n * ny * sizeof *P);
            CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(P, n, ny),
                                       rfx_mat_none()));
            for (size_t k = 0; k < ny; k++) {
                double s = 0;
                for (size_t i = 0; i < n; i++) s += Y[i * ny + k] - P[i * ny + k];
                CHECK_NEAR(s / (double)n, 0.0, 1e-10);
            }
            free(P);
        }
        free(mu);
        rfx_model_free(m);
    }
    free(Z);
    free(X);
    free(Y);
    rfx_features_free(f);
}

/* Primal and dual forms give the same weights and intercepts. */
static void test_primal_dual(void)
{
    rfx_test_rng r = {2};
    const size_t n = 150, d = 3, D = 300, ny = 2;
    double *X, *Y;
    make_data(&r, n, d, ny, -2.0, &X, &Y);
    for (int form = 0; form < 2; form++) {
        rfx_features *f = make_features(D, d, 3, (rfx_form)form);
        for (int gcv = 0; gcv < 2; gcv++) {
            rfx_ridge_params p = rfx_ridge_params_default();
            p.lambda = 1e-3;
            if (gcv) p.select = RFX_SELECT_GCV;
            rfx_model *mp = NULL, *md = NULL;
            p.solver = RFX_SOLVER_PRIMAL;
            CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &mp));
            p.solver = RFX_SOLVER_DUAL;
            CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &md));
            if (!mp || !md) continue;
            rfx_model_info ip, id;
            rfx_model_get_info(mp, &ip);
            rfx_model_get_info(md, &id);
            CHECK_NEAR(ip.lambda / id.lambda, 1.0, 1e-12);
            double dw = rfx_test_max_rel_diff(rfx_model_weights(md).data, rfx_model_weights(mp).data, D * ny);
            double db = rfx_test_max_rel_diff(rfx_model_intercepts(md), rfx_model_intercepts(mp), ny);
            printf("primal vs dual (form %d, gcv %d, lambda %.3g): weights %.3g, intercepts %.3g\n",
                   form, gcv, ip.lambda, dw, db);
            CHECK(dw < 1e-8);
            CHECK(db < 1e-8);
            rfx_model_free(mp);
            rfx_model_free(md);
        }
        rfx_features_free(f);
    }
    free(X);
    free(Y);
}

/* Streaming with any block size gives the one-block answer (to 1e-10). */
static void test_streaming(void)
{
    rfx_test_rng r = {3};
    const size_t n = 3000, d = 4, D = 256, ny = 1;
    double *X, *Y;
    make_data(&r, n, d, ny, 1e6, &X, &Y); /* a large offset: the target shift at work */
    rfx_features *f = make_features(D, d, 1, RFX_FORM_COS_SIN);
    rfx_ridge_params p = rfx_ridge_params_default();
    p.lambda = 1e-2;
    rfx_model *ref = NULL;
    rfx_source *src = NULL;
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), n, &src));
    CHECK_OK(rfx_ridge_fit_source(f, src, &p, &ref));
    rfx_source_free(src);
    const size_t blocks[] = {1, 7, 64, 1000, 2999};
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
        rfx_model *m = NULL;
        CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), blocks[b],
                                          &src));
        CHECK_OK(rfx_ridge_fit_source(f, src, &p, &m));
        rfx_source_free(src);
        if (!m || !ref) continue;
        double dw = rfx_test_max_rel_diff(rfx_model_weights(m).data, rfx_model_weights(ref).data, D);
        double db = rfx_test_max_rel_diff(rfx_model_intercepts(m), rfx_model_intercepts(ref), 1);
        printf("streaming, blocks of %zu rows: weights %.3g, intercept %.3g\n", blocks[b], dw, db);
        CHECK(dw < 1e-10);
        CHECK(db < 1e-10);
        rfx_model_free(m);
    }
    /* and the fit is good despite the 1e6 offset */
    double *P = malloc(n * sizeof *P), rss = 0, tss = 0, ym = 0;
    CHECK_OK(rfx_model_predict(ref, rfx_cmat_of(X, n, d), rfx_mat_of(P, n, 1), rfx_mat_none()));
    for (size_t i = 0; i < n; i++) ym += Y[i] / (double)n;
    for (size_t i = 0; i < n; i++) {
        rss += (Y[i] - P[i]) * (Y[i] - P[i]);
        tss += (Y[i] - ym) * (Y[i] - ym);
    }
    printf("offset 1e6: R^2 = %.6f\n", 1 - rss / tss);
    CHECK(1 - rss / tss > 0.99);
    free(P);
    rfx_model_free(ref);
    rfx_features_free(f);
    free(X);
    free(Y);
}

/* Statistics merge exactly and removal undoes a merge. */
static void test_stats_merge(void)
{
    rfx_test_rng r = {4};
    const size_t n = 500, d = 2, D = 64;
    double *X, *Y;
    make_data(&r, n, d, 1, 50.0, &X, &Y);
    rfx_features *f = make_features(D, d, 2, RFX_FORM_COS_BIAS);
    rfx_stats *all = NULL, *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(rfx_stats_create(D, 1, &all));
    CHECK_OK(rfx_stats_create(D, 1, &a));
    CHECK_OK(rfx_stats_create(D, 1, &b));
    CHECK_OK(rfx_stats_add(all, f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1)));
    CHECK_OK(rfx_stats_add(a, f, rfx_cmat_of(X, 200, d), rfx_cmat_of(Y, 200, 1)));
    CHECK_OK(rfx_stats_add(b, f, rfx_cmat_of(X + 200 * d, 300, d), rfx_cmat_of(Y + 200, 300, 1)));
    CHECK_OK(rfx_stats_copy(a, &c));
    CHECK_OK(rfx_stats_merge(c, b));
    CHECK(rfx_stats_rows(c) == n);
    double *g1 = malloc(D * D * sizeof *g1), *g2 = malloc(D * D * sizeof *g2);
    double t1[64], t2[64], z1[64], z2[64], y1, y2;
    CHECK_OK(rfx_stats_get(all, g1, t1, z1, &y1));
    CHECK_OK(rfx_stats_get(c, g2, t2, z2, &y2));
    CHECK(rfx_test_max_rel_diff(g2, g1, D * D) < 1e-13);
    CHECK(rfx_test_max_rel_diff(t2, t1, D) < 1e-12);
    CHECK(rfx_test_max_rel_diff(z2, z1, D) < 1e-13);
    CHECK_NEAR(y2 / y1, 1.0, 1e-13);
    CHECK_OK(rfx_stats_remove(c, b));
    CHECK_OK(rfx_stats_get(a, g1, t1, z1, &y1));
    CHECK_OK(rfx_stats_get(c, g2, t2, z2, &y2));
    CHECK(rfx_test_max_rel_diff(g2, g1, D * D) < 1e-12);
    CHECK(rfx_test_max_rel_diff(t2, t1, D) < 1e-10);
    CHECK_STATUS(rfx_stats_remove(a, all), RFX_EINVAL);
    rfx_stats *other = NULL;
    CHECK_OK(rfx_stats_create(D + 1, 1, &other));
    CHECK_STATUS(rfx_stats_merge(a, other), RFX_EDIM);
    rfx_stats_free(other);
    free(g1);
    free(g2);
    rfx_stats_free(all);
    rfx_stats_free(a);
    rfx_stats_free(b);
    rfx_stats_free(c);
    rfx_features_free(f);
    free(X);
    free(Y);
}

/* Packed statistics: a round trip keeps every bit (about the statistics'
 * own shift), packed vectors of two parts about one shift add to the
 * packed union (as rfx_stats_merge), weights and the evidence's sum log w
 * included; the error paths. */
static void test_stats_pack(void)
{
    rfx_test_rng r = {41};
    const size_t n = 300, d = 2, D = 24, ny = 2;
    double *X, *Y;
    make_data(&r, n, d, ny, 1e3, &X, &Y);
    double *w = malloc(n * sizeof *w);
    for (size_t i = 0; i < n; i++) w[i] = i % 7 == 3 ? 0.0 : 0.5 + rfx_test_uniform(&r);
    rfx_features *f = make_features(D, d, 5, RFX_FORM_COS_BIAS);
    rfx_stats *all = NULL, *a = NULL, *b = NULL, *u = NULL;
    CHECK_OK(rfx_stats_create(D, ny, &all));
    CHECK_OK(rfx_stats_create(D, ny, &a));
    CHECK_OK(rfx_stats_create(D, ny, &b));
    CHECK_OK(rfx_stats_create(D, ny, &u));
    CHECK(rfx_stats_n_features(a) == D && rfx_stats_n_targets(a) == ny);
    CHECK(rfx_stats_n_features(NULL) == 0 && rfx_stats_packed_size(NULL) == 0);
    double sh[2] = {7, 7};
    CHECK(rfx_stats_shift(a, sh) == 0 && sh[0] == 0 && sh[1] == 0);
    CHECK_OK(rfx_stats_add_weighted(all, f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), w));
    CHECK_OK(rfx_stats_add_weighted(a, f, rfx_cmat_of(X, 120, d), rfx_cmat_of(Y, 120, ny), w));
    CHECK_OK(rfx_stats_add_weighted(b, f, rfx_cmat_of(X + 120 * d, n - 120, d),
                                    rfx_cmat_of(Y + 120 * ny, n - 120, ny), w + 120));
    const size_t L = rfx_stats_packed_size(a);
    CHECK(L == 3 + D * (D + 1) / 2 + D * ny + D + 2 * ny);
    double *pa = malloc(L * sizeof *pa), *pb = malloc(L * sizeof *pb), *pu = malloc(L * sizeof *pu);
    /* a round trip about the own shift is exact */
    double sa[2], sb[2];
    CHECK(rfx_stats_shift(a, sa) == 1 && rfx_stats_shift(b, sb) == 1 && sa[0] != sb[0]);
    CHECK_OK(rfx_stats_pack(a, NULL, pa));
    CHECK_OK(rfx_stats_unpack(u, pa, sa));
    CHECK_OK(rfx_stats_pack(u, NULL, pb));
    CHECK(memcmp(pa, pb, L * sizeof *pa) == 0);
    CHECK(rfx_stats_rows(u) == rfx_stats_rows(a));
    /* about a's shift, a + b is the union */
    CHECK_OK(rfx_stats_pack(b, sa, pb));
    for (size_t i = 0; i < L; i++) pu[i] = pa[i] + pb[i];
    CHECK_OK(rfx_stats_unpack(u, pu, sa));
    CHECK(rfx_stats_rows(u) == rfx_stats_rows(all));
    double *g1 = malloc(D * D * sizeof *g1), *g2 = malloc(D * D * sizeof *g2);
    double t1[48], t2[48], z1[24], z2[24], y1[2], y2[2];
    CHECK_OK(rfx_stats_get(all, g1, t1, z1, y1));
    CHECK_OK(rfx_stats_get(u, g2, t2, z2, y2));
    CHECK(rfx_test_max_rel_diff(g2, g1, D * D) < 1e-13);
    CHECK(rfx_test_max_rel_diff(t2, t1, D * ny) < 1e-12);
    CHECK(rfx_test_max_rel_diff(z2, z1, D) < 1e-13);
    CHECK(rfx_test_max_rel_diff(y2, y1, ny) < 1e-12);
    /* the Bayesian evidence sees the weights (sum w, sum log w) */
    rfx_bayes_params bp = rfx_bayes_params_default();
    bp.noise_var = 0.01;
    bp.prior_var = 1.0;
    rfx_model *m1 = NULL, *m2 = NULL;
    rfx_stats *one = NULL;
    CHECK_OK(rfx_stats_create(D, 1, &one));
    CHECK_OK(rfx_stats_add_weighted(one, f, rfx_cmat_of(X, n, d), (rfx_cmat){Y, n, 1, ny}, w));
    CHECK_OK(rfx_bayes_solve(f, one, &bp, &m1));
    rfx_stats *oa = NULL, *ob = NULL;
    CHECK_OK(rfx_stats_create(D, 1, &oa));
    CHECK_OK(rfx_stats_create(D, 1, &ob));
    CHECK_OK(rfx_stats_add_weighted(oa, f, rfx_cmat_of(X, 50, d), (rfx_cmat){Y, 50, 1, ny}, w));
    CHECK_OK(rfx_stats_add_weighted(ob, f, rfx_cmat_of(X + 50 * d, n - 50, d),
                                    (rfx_cmat){Y + 50 * ny, n - 50, 1, ny}, w + 50));
    double c0 = 123.0;
    const size_t L1 = rfx_stats_packed_size(oa);
    double *qa = malloc(L1 * sizeof *qa), *qb = malloc(L1 * sizeof *qb);
    CHECK_OK(rfx_stats_pack(oa, &c0, qa));
    CHECK_OK(rfx_stats_pack(ob, &c0, qb));
    for (size_t i = 0; i < L1; i++) qa[i] += qb[i];
    CHECK_OK(rfx_stats_unpack(oa, qa, &c0));
    CHECK_OK(rfx_bayes_solve(f, oa, &bp, &m2));
    rfx_model_info i1, i2;
    CHECK_OK(rfx_model_get_info(m1, &i1));
    CHECK_OK(rfx_model_get_info(m2, &i2));
    CHECK(fabs(i1.log_evidence - i2.log_evidence) < 1e-9 * fabs(i1.log_evidence));
    CHECK(rfx_test_max_rel_diff(rfx_model_weights(m2).data, rfx_model_weights(m1).data, D) < 1e-9);
    /* errors */
    double bad = NAN;
    CHECK_STATUS(rfx_stats_pack(a, NULL, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_stats_pack(NULL, NULL, pa), RFX_EINVAL);
    CHECK_STATUS(rfx_stats_pack(oa, &bad, qa), RFX_EINVAL);
    CHECK_STATUS(rfx_stats_unpack(oa, qa, &bad), RFX_EINVAL);
    qa[0] = 2.5;
    CHECK_STATUS(rfx_stats_unpack(oa, qa, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "row count") != NULL);
    qa[0] = 3;
    qa[1] = -1;
    CHECK_STATUS(rfx_stats_unpack(oa, qa, NULL), RFX_EINVAL);
    /* rfx_set_error: the message and the status */
    CHECK(rfx_set_error(RFX_EIO, "disk on fire") == RFX_EIO);
    CHECK(strcmp(rfx_last_error(), "disk on fire") == 0);
    CHECK(rfx_set_error(RFX_EINVAL, rfx_last_error() + 5) == RFX_EINVAL);
    CHECK(strcmp(rfx_last_error(), "on fire") == 0);
    CHECK(rfx_set_error(RFX_OK, NULL) == RFX_OK && rfx_last_error()[0] == '\0');
    rfx_model_free(m1);
    rfx_model_free(m2);
    rfx_stats_free(one);
    rfx_stats_free(oa);
    rfx_stats_free(ob);
    free(qa);
    free(qb);
    free(g1);
    free(g2);
    free(pa);
    free(pb);
    free(pu);
    rfx_stats_free(all);
    rfx_stats_free(a);
    rfx_stats_free(b);
    rfx_stats_free(u);
    rfx_features_free(f);
    free(w);
    free(X);
    free(Y);
}

/* Single-precision statistics agree with the double ones to float rounding
 * and give nearly the same predictions. */
static void test_stats_f32(void)
{
    rfx_test_rng r = {13};
    const size_t n = 5000, d = 3, D = 300;
    double *X, *Y;
    make_data(&r, n, d, 1, 2.0, &X, &Y);
    float *Xf = malloc(n * d * sizeof *Xf), *Yf = malloc(n * sizeof *Yf);
    for (size_t i = 0; i < n * d; i++) Xf[i] = (float)X[i];
    for (size_t i = 0; i < n; i++) Yf[i] = (float)Y[i];
    rfx_features *f = make_features(D, d, 3, RFX_FORM_COS_BIAS);
    rfx_stats *s64 = NULL, *s32 = NULL;
    CHECK_OK(rfx_stats_create(D, 1, &s64));
    CHECK_OK(rfx_stats_create(D, 1, &s32));
    CHECK_OK(rfx_stats_add(s64, f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1)));
    CHECK_OK(rfx_stats_add_f32(s32, f, rfx_cmatf_of(Xf, n, d), rfx_cmatf_of(Yf, n, 1)));
    double *g1 = malloc(D * D * sizeof *g1), *g2 = malloc(D * D * sizeof *g2);
    CHECK_OK(rfx_stats_get(s64, g1, NULL, NULL, NULL));
    CHECK_OK(rfx_stats_get(s32, g2, NULL, NULL, NULL));
    double dg = rfx_test_max_rel_diff(g2, g1, D * D);
    rfx_ridge_params p = rfx_ridge_params_default();
    p.lambda = 1e-2;
    rfx_model *m64 = NULL, *m32 = NULL;
    CHECK_OK(rfx_ridge_solve(f, s64, &p, &m64));
    CHECK_OK(rfx_ridge_solve(f, s32, &p, &m32));
    double *P64 = malloc(n * sizeof *P64), *P32 = malloc(n * sizeof *P32), dp = 0, sy = 0;
    CHECK_OK(rfx_model_predict(m64, rfx_cmat_of(X, n, d), rfx_mat_of(P64, n, 1), rfx_mat_none()));
    CHECK_OK(rfx_model_predict(m32, rfx_cmat_of(X, n, d), rfx_mat_of(P32, n, 1), rfx_mat_none()));
    for (size_t i = 0; i < n; i++) {
        dp = fmax(dp, fabs(P64[i] - P32[i]));
        sy = fmax(sy, fabs(P64[i]));
    }
    printf("float32 statistics: Z^T Z relative %.3g, predictions relative %.3g\n", dg, dp / sy);
    CHECK(dg < 1e-5);
    CHECK(dp / sy < 1e-3);
    CHECK_STATUS(rfx_stats_add_f32(s32, f, rfx_cmatf_of(Xf, n, d - 1), rfx_cmatf_of(Yf, n, 1)),
                 RFX_EDIM);
    Xf[5] = NAN;
    CHECK_STATUS(rfx_stats_add_f32(s32, f, rfx_cmatf_of(Xf, n, d), rfx_cmatf_of(Yf, n, 1)),
                 RFX_EPARSE);
    free(g1);
    free(g2);
    free(P64);
    free(P32);
    free(Xf);
    free(Yf);
    rfx_model_free(m64);
    rfx_model_free(m32);
    rfx_stats_free(s64);
    rfx_stats_free(s32);
    rfx_features_free(f);
    free(X);
    free(Y);
}

/* Solve a small dense SPD system by Cholesky (test-local reference). */
static void dense_solve(double *A, double *b, size_t n, size_t nrhs)
{
    CHECK_OK(rfx__chol(A, n, 0, "test"));
    CHECK_OK(rfx__chol_solve(A, n, b, nrhs));
}

/* GCV picks the grid value a brute-force computation (explicit hat matrix)
 * picks; k-fold picks what explicit refits on each fold pick. */
static void test_selection(void)
{
    rfx_test_rng r = {6};
    const size_t n = 120, d = 2, D = 40;
    double *X, *Y;
    make_data(&r, n, d, 1, 0.5, &X, &Y);
    rfx_features *f = make_features(D, d, 4, RFX_FORM_COS_BIAS);
    double *Z = features_of(f, X, n);
    const double grid[6] = {1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0};
    /* brute-force GCV with intercept: centred Z, hat = Zc (Zc'Zc + l)^-1 Zc' */
    double mu[40] = {0}, ybar = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < D; j++) mu[j] += Z[i * D + j] / (double)n;
        ybar += Y[i] / (double)n;
    }
    double best_gcv = INFINITY, best_cv = INFINITY;
    size_t arg_gcv = 0, arg_cv = 0;
    double *A = malloc(D * D * sizeof *A), *B = malloc(D * n * sizeof *B);
    for (size_t g = 0; g < 6; g++) {
        /* B = (Zc'Zc + l)^-1 Zc' (D x n), hat trace and residuals */
        for (size_t a = 0; a < D; a++) {
            for (size_t b = 0; b < D; b++) {
                double s = a == b ? grid[g] : 0;
                for (size_t i = 0; i < n; i++) s += (Z[i * D + a] - mu[a]) * (Z[i * D + b] - mu[b]);
                A[a * D + b] = s;
            }
        }
        double *Bt = malloc(D * n * sizeof *Bt);
        for (size_t a = 0; a < D; a++)
            for (size_t i = 0; i < n; i++) Bt[a * n + i] = Z[i * D + a] - mu[a];
        dense_solve(A, Bt, D, n);
        double tr = 0, rss = 0;
        for (size_t i = 0; i < n; i++) {
            double fi = ybar;
            for (size_t j = 0; j < n; j++) {
                double h = 0;
                for (size_t a = 0; a < D; a++) h += (Z[i * D + a] - mu[a]) * Bt[a * n + j];
                fi += h * (Y[j] - ybar);
                if (i == j) tr += h;
            }
            rss += (Y[i] - fi) * (Y[i] - fi);
        }
        double gcv = (double)n * rss / pow((double)n - 1 - tr, 2);
        if (gcv < best_gcv) {
            best_gcv = gcv;
            arg_gcv = g;
        }
        free(Bt);
        /* brute-force 3-fold CV, fold = i mod 3, by refitting */
        double cv = 0;
        for (size_t fo = 0; fo < 3; fo++) {
            size_t nt = 0;
            double *Xt = malloc(n * d * sizeof *Xt), *Yt = malloc(n * sizeof *Yt);
            for (size_t i = 0; i < n; i++) {
                if (i % 3 == fo) continue;
                memcpy(Xt + nt * d, X + i * d, d * sizeof *Xt);
                Yt[nt++] = Y[i];
            }
            rfx_ridge_params p = rfx_ridge_params_default();
            p.lambda = grid[g];
            p.solver = RFX_SOLVER_PRIMAL;
            rfx_model *m = NULL;
            CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(Xt, nt, d), rfx_cmat_of(Yt, nt, 1), &p, &m));
            for (size_t i = fo; i < n; i += 3) {
                double pi;
                CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X + i * d, 1, d), rfx_mat_of(&pi, 1, 1),
                                           rfx_mat_none()));
                cv += (Y[i] - pi) * (Y[i] - pi);
            }
            rfx_model_free(m);
            free(Xt);
            free(Yt);
        }
        if (cv < best_cv) {
            best_cv = cv;
            arg_cv = g;
        }
    }
    rfx_ridge_params p = rfx_ridge_params_default();
    p.lambdas = grid;
    p.n_lambdas = 6;
    p.select = RFX_SELECT_GCV;
    p.solver = RFX_SOLVER_PRIMAL;
    rfx_model *m = NULL;
    CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &m));
    rfx_model_info info;
    CHECK_OK(rfx_model_get_info(m, &info));
    printf("GCV: rfx lambda %g, brute force %g (GCV %.6g vs %.6g)\n", info.lambda, grid[arg_gcv],
           m->gcv, best_gcv);
    CHECK(info.lambda == grid[arg_gcv]);
    CHECK_NEAR(m->gcv / best_gcv, 1.0, 1e-8);
    rfx_model_free(m);
    p.select = RFX_SELECT_KFOLD;
    p.n_folds = 3;
    CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &m));
    CHECK_OK(rfx_model_get_info(m, &info));
    printf("3-fold CV: rfx lambda %g, brute force %g\n", info.lambda, grid[arg_cv]);
    CHECK(info.lambda == grid[arg_cv]);
    rfx_model_free(m);
    free(A);
    free(B);
    free(Z);
    rfx_features_free(f);
    /* near interpolation (D > n, lambda tiny): GCV = n rss / dof^2 must not
     * collapse to 0 when rss is computed by subtracting nearly equal terms;
     * it is at least the training mean squared error */
    {
        const size_t n2 = 60, D2 = 200;
        rfx_features *f2 = make_features(D2, d, 4, RFX_FORM_COS_BIAS);
        const double tiny_grid[1] = {1e-10};
        rfx_ridge_params q = rfx_ridge_params_default();
        q.lambdas = tiny_grid;
        q.n_lambdas = 1;
        q.select = RFX_SELECT_GCV;
        rfx_model *m2 = NULL;
        CHECK_OK(rfx_ridge_fit(f2, rfx_cmat_of(X, n2, d), rfx_cmat_of(Y, n2, 1), &q, &m2));
        double *P = malloc(n2 * sizeof *P), mse = 0;
        if (m2) {
            CHECK_OK(rfx_model_predict(m2, rfx_cmat_of(X, n2, d), rfx_mat_of(P, n2, 1),
                                       rfx_mat_none()));
            for (size_t i = 0; i < n2; i++) mse += (Y[i] - P[i]) * (Y[i] - P[i]) / (double)n2;
            printf("near interpolation: GCV %.4g, training MSE %.3g\n", m2->gcv, mse);
            CHECK(m2->gcv > 0 && m2->gcv >= mse);
        }
        free(P);
        rfx_model_free(m2);
        rfx_features_free(f2);
    }
    free(X);
    free(Y);
}

/* Bayesian regression equals an exact GP with kernel s2p Z Z^T and noise
 * s2n: predictive mean and variance to 1e-8 relative, and the log evidence
 * equals the GP log marginal likelihood. */
static void test_bayes_gp(void)
{
    rfx_test_rng r = {7};
    const size_t n = 80, d = 2, D = 120, nt = 25;
    double *X, *Y, *Xt = rfx_test_matrix(&r, nt, d, -1.2, 1.2);
    make_data(&r, n, d, 1, 0.0, &X, &Y);
    rfx_features *f = make_features(D, d, 8, RFX_FORM_COS_SIN);
    const double s2n = 0.01, s2p = 2.0;
    rfx_bayes_params bp = rfx_bayes_params_default();
    bp.noise_var = s2n;
    bp.prior_var = s2p;
    bp.fit_intercept = 0;
    rfx_model *m = NULL;
    CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &bp, &m));
    double *mean = malloc(nt * sizeof *mean), *sd = malloc(nt * sizeof *sd);
    double *sdy = malloc(nt * sizeof *sdy);
    CHECK_OK(rfx_model_predict_latent(m, rfx_cmat_of(Xt, nt, d), rfx_mat_of(mean, nt, 1),
                                      rfx_mat_of(sd, nt, 1)));
    CHECK_OK(rfx_model_predict(m, rfx_cmat_of(Xt, nt, d), rfx_mat_of(mean, nt, 1),
                               rfx_mat_of(sdy, nt, 1)));
    /* the GP: K = s2p Z Z^T + s2n I, mean k*^T K^-1 y, var k** - k*^T K^-1 k* */
    double *Z = features_of(f, X, n), *Zt = features_of(f, Xt, nt);
    double *K = malloc(n * n * sizeof *K), *Ks = malloc(n * nt * sizeof *Ks);
    double *alpha = malloc(n * sizeof *alpha);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t k = 0; k < D; k++) s += Z[i * D + k] * Z[j * D + k];
            K[i * n + j] = s2p * s + (i == j ? s2n : 0);
        }
        for (size_t t = 0; t < nt; t++) {
            double s = 0;
            for (size_t k = 0; k < D; k++) s += Z[i * D + k] * Zt[t * D + k];
            Ks[i * nt + t] = s2p * s;
        }
        alpha[i] = Y[i];
    }
    double *Kcopy = malloc(n * n * sizeof *Kcopy), *V = malloc(n * nt * sizeof *V);
    memcpy(Kcopy, K, n * n * sizeof *K);
    memcpy(V, Ks, n * nt * sizeof *V);
    dense_solve(Kcopy, alpha, n, 1);
    double logdet = rfx__chol_logdet(Kcopy, n); /* Kcopy holds the factor */
    CHECK_OK(rfx__chol_solve(Kcopy, n, V, nt));
    double worst_m = 0, worst_v = 0, worst_y = 0;
    for (size_t t = 0; t < nt; t++) {
        double gm = 0, gv = 0;
        for (size_t k = 0; k < D; k++) gv += s2p * Zt[t * D + k] * Zt[t * D + k];
        for (size_t i = 0; i < n; i++) {
            gm += Ks[i * nt + t] * alpha[i];
            gv -= Ks[i * nt + t] * V[i * nt + t];
        }
        worst_m = fmax(worst_m, fabs(mean[t] - gm) / fmax(fabs(gm), 1e-3));
        worst_v = fmax(worst_v, fabs(sd[t] * sd[t] - gv) / gv);
        worst_y = fmax(worst_y, fabs(sdy[t] * sdy[t] - (gv + s2n)) / (gv + s2n));
    }
    double yKy = 0;
    for (size_t i = 0; i < n; i++) yKy += Y[i] * alpha[i];
    double gp_lml = -0.5 * yKy - 0.5 * logdet - 0.5 * (double)n * log(6.283185307179586);
    rfx_model_info info;
    CHECK_OK(rfx_model_get_info(m, &info));
    printf("Bayes vs exact GP: mean %.3g, variance %.3g, noisy variance %.3g (relative); "
           "log evidence %.10g vs %.10g\n", worst_m, worst_v, worst_y, info.log_evidence, gp_lml);
    CHECK(worst_m < 1e-8);
    CHECK(worst_v < 1e-8);
    CHECK(worst_y < 1e-8);
    CHECK_NEAR(info.log_evidence, gp_lml, 1e-8 * fabs(gp_lml));
    rfx_model_free(m);

    /* fitted variances maximise the evidence: any nearby pair is lower */
    bp.noise_var = 0;
    bp.prior_var = 0;
    CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &bp, &m));
    CHECK_OK(rfx_model_get_info(m, &info));
    printf("evidence maximum: noise %.5g, prior %.5g, log evidence %.8g\n", info.noise_var,
           info.prior_var, info.log_evidence);
    for (int a = -1; a <= 1; a++) {
        for (int b = -1; b <= 1; b++) {
            if (!a && !b) continue;
            rfx_bayes_params q = bp;
            q.noise_var = info.noise_var * (1 + 0.05 * a);
            q.prior_var = info.prior_var * (1 + 0.05 * b);
            rfx_model *m2 = NULL;
            rfx_model_info i2;
            CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &q, &m2));
            CHECK_OK(rfx_model_get_info(m2, &i2));
            CHECK_MSG(i2.log_evidence < info.log_evidence + 1e-9,
                      "(%d, %d): %.10g above the optimum %.10g", a, b, i2.log_evidence,
                      info.log_evidence);
            rfx_model_free(m2);
        }
    }
    /* the posterior mean is the ridge solution with lambda = s2n / s2p */
    rfx_ridge_params rp = rfx_ridge_params_default();
    rp.lambda = info.noise_var / info.prior_var;
    rp.solver = RFX_SOLVER_PRIMAL;
    rp.fit_intercept = 0;
    rfx_model *mr = NULL;
    CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &rp, &mr));
    CHECK(rfx_test_max_rel_diff(rfx_model_weights(m).data, rfx_model_weights(mr).data, D) < 1e-8);
    /* std asked of a ridge model is refused */
    CHECK_STATUS(rfx_model_predict(mr, rfx_cmat_of(Xt, nt, d), rfx_mat_of(mean, nt, 1),
                                   rfx_mat_of(sd, nt, 1)),
                 RFX_EINVAL);
    rfx_model_free(mr);
    rfx_model_free(m);
    free(Z);
    free(Zt);
    free(K);
    free(Ks);
    free(alpha);
    free(Kcopy);
    free(V);
    free(mean);
    free(sd);
    free(sdy);
    free(X);
    free(Y);
    free(Xt);
    rfx_features_free(f);
}

/* The same seed gives bitwise-identical statistics and models with 1 and 2
 * threads. */
static void test_reproducible(void)
{
    rfx_test_rng r = {9};
    const size_t n = 2500, d = 5, D = 700;
    double *X, *Y;
    make_data(&r, n, d, 1, 1.0, &X, &Y);
    rfx_model *m[2] = {NULL, NULL}, *b[2] = {NULL, NULL};
    for (int t = 0; t < 2; t++) {
        rfx_features_params p = rfx_features_params_default();
        p.n_features = D;
        p.seed = 77;
        p.n_threads = t + 1;
        rfx_features *f = NULL;
        CHECK_OK(rfx_features_create(&p, d, &f));
        rfx_ridge_params rp = rfx_ridge_params_default();
        rp.n_threads = t + 1;
        rp.select = RFX_SELECT_GCV;
        CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &rp, &m[t]));
        rfx_bayes_params bp = rfx_bayes_params_default();
        bp.n_threads = t + 1;
        CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &bp, &b[t]));
        rfx_features_free(f);
    }
    if (m[0] && m[1] && b[0] && b[1]) {
        CHECK(memcmp(m[0]->W, m[1]->W, D * sizeof(double)) == 0);
        CHECK(memcmp(m[0]->intercept, m[1]->intercept, sizeof(double)) == 0);
        CHECK(memcmp(b[0]->W, b[1]->W, D * sizeof(double)) == 0);
        CHECK(memcmp(b[0]->chol, b[1]->chol, D * D * sizeof(double)) == 0);
        CHECK(b[0]->noise_var == b[1]->noise_var);
    }
    for (int t = 0; t < 2; t++) {
        rfx_model_free(m[t]);
        rfx_model_free(b[t]);
    }
    free(X);
    free(Y);
}

/* The one-call fit chooses a sensible length scale and fits well. */
static void test_auto_fit(void)
{
    rfx_test_rng r = {10};
    const size_t n = 1500, d = 3, nt = 500;
    double *X, *Y, *Xt, *Yt;
    make_data(&r, n, d, 1, 100.0, &X, &Y);
    make_data(&r, nt, d, 1, 100.0, &Xt, &Yt);
    for (size_t i = 0; i < n * d; i++) X[i] = 1000 + 50 * X[i]; /* unscaled inputs */
    for (size_t i = 0; i < nt * d; i++) Xt[i] = 1000 + 50 * Xt[i];
    for (int method = 0; method < 2; method++) {
        rfx_fit_params p = rfx_fit_params_default();
        p.method = (rfx_method)method;
        p.features.n_features = 512;
        rfx_model *m = NULL;
        rfx_fit_report rep;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &m, &rep));
        if (!m) continue;
        double *P = malloc(nt * sizeof *P), rss = 0, tss = 0, ym = 0;
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(Xt, nt, d), rfx_mat_of(P, nt, 1),
                                   rfx_mat_none()));
        for (size_t i = 0; i < nt; i++) ym += Yt[i] / (double)nt;
        for (size_t i = 0; i < nt; i++) {
            rss += (Yt[i] - P[i]) * (Yt[i] - P[i]);
            tss += (Yt[i] - ym) * (Yt[i] - ym);
        }
        /* the noise is 0.05: R^2 near 1 - 0.0025 / var(f) */
        printf("auto %s: length scale %.3g, lambda %.3g, %zu candidates, test R^2 %.5f\n",
               rfx_method_name(p.method), rep.length_scale, rep.lambda, rep.n_candidates,
               1 - rss / tss);
        CHECK(1 - rss / tss > 0.99);
        free(P);
        rfx_model_free(m);
    }
    free(X);
    free(Y);
    free(Xt);
    free(Yt);
}

/* A ridge model on q-sparse sine features survives the model buffer with
 * its map (activation, sparsity, weight distribution) bitwise. */
static void test_sparse_model_roundtrip(void)
{
    rfx_test_rng r = {14};
    const size_t n = 300, d = 5;
    double *X, *Y;
    make_data(&r, n, d, 1, 0, &X, &Y);
    rfx_features_params p = rfx_features_params_default();
    p.n_features = 60;
    p.sparsity = 2;
    p.activation = RFX_ACTIVATION_SIN;
    p.weights = RFX_WEIGHTS_UNIFORM;
    p.weight_scale = 3.0;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&p, d, &f));
    rfx_ridge_params rp = rfx_ridge_params_default();
    rfx_model *m = NULL, *m2 = NULL;
    CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &rp, &m));
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(rfx_model_save_buffer(m, &buf, &len));
    CHECK_OK(rfx_model_load_buffer(buf, len, &m2));
    if (m && m2) {
        double P1[300], P2[300];
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(P1, n, 1), rfx_mat_none()));
        CHECK_OK(rfx_model_predict(m2, rfx_cmat_of(X, n, d), rfx_mat_of(P2, n, 1), rfx_mat_none()));
        CHECK(memcmp(P1, P2, sizeof P1) == 0);
        rfx_model_info info;
        CHECK_OK(rfx_model_get_info(m2, &info));
        CHECK(info.features.activation == RFX_ACTIVATION_SIN);
        CHECK(info.features.sparsity == 2);
        CHECK(info.features.weights == RFX_WEIGHTS_UNIFORM);
        CHECK(info.features.weight_scale == 3.0);
    }
    rfx_buffer_free(buf);
    rfx_model_free(m);
    rfx_model_free(m2);
    rfx_features_free(f);
    free(X);
    free(Y);
}

/* Noise-free targets: the evidence drives the noise variance down, and the
 * fit must still factor its posterior (the penalty floor) and interpolate. */
static void test_bayes_noise_free(void)
{
    rfx_test_rng r = {15};
    const size_t n = 200, d = 3;
    double *X = rfx_test_matrix(&r, n, d, -1, 1), *Y = malloc(n * sizeof *Y);
    for (size_t i = 0; i < n; i++) Y[i] = sin(X[i * d]) + X[i * d + 1] * X[i * d + 1];
    rfx_fit_params p = rfx_fit_params_default();
    p.features.n_features = 256;
    rfx_model *m = NULL;
    rfx_fit_report rep;
    CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &m, &rep));
    if (m) {
        double *P = malloc(n * sizeof *P), err = 0;
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(P, n, 1), rfx_mat_none()));
        for (size_t i = 0; i < n; i++) err = fmax(err, fabs(P[i] - Y[i]));
        printf("noise-free Bayes: noise variance %.3g, max training error %.3g\n", rep.noise_var,
               err);
        CHECK(err < 1e-3);
        free(P);
    }
    rfx_model_free(m);
    free(X);
    free(Y);
}

/* Bad input and bad parameters: clear errors, nothing written. */
static void test_errors(void)
{
    rfx_test_rng r = {12};
    const size_t n = 50, d = 2;
    double *X, *Y;
    make_data(&r, n, d, 1, 0, &X, &Y);
    rfx_features *f = make_features(32, d, 1, RFX_FORM_COS_BIAS);
    rfx_model *m = NULL;
    rfx_ridge_params p = rfx_ridge_params_default();
    p.lambda = -1;
    CHECK_STATUS(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "lambda") != NULL);
    p = rfx_ridge_params_default();
    p.select = RFX_SELECT_KFOLD;
    p.n_folds = 1;
    CHECK_STATUS(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "n_folds") != NULL);
    p = rfx_ridge_params_default();
    CHECK_STATUS(rfx_ridge_fit(f, rfx_cmat_of(X, n, 1), rfx_cmat_of(Y, n, 1), &p, &m), RFX_EDIM);
    CHECK_STATUS(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n - 1, 1), &p, &m), RFX_EDIM);
    X[7 * d + 1] = NAN;
    CHECK_STATUS(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &m), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "row 7") != NULL);
    X[7 * d + 1] = 0.5;
    Y[3] = INFINITY;
    rfx_bayes_params bp = rfx_bayes_params_default();
    CHECK_STATUS(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &bp, &m), RFX_EPARSE);
    Y[3] = 0.5;
    bp.tol = 0;
    CHECK_STATUS(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &bp, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "tol") != NULL);
    CHECK(m == NULL);
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_BAYES;
    CHECK_STATUS(rfx_model_fit(&fp, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n / 2, 2), &m, NULL),
                 RFX_EDIM);
    fp.features.n_features = 0;
    CHECK_STATUS(rfx_model_fit(&fp, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &m, NULL),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "n_features") != NULL);
    /* predict with the wrong number of columns */
    p = rfx_ridge_params_default();
    CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &m));
    double out[50];
    CHECK_STATUS(rfx_model_predict(m, rfx_cmat_of(X, 25, 1), rfx_mat_of(out, 25, 1), rfx_mat_none()),
                 RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "columns") != NULL);
    CHECK_STATUS(rfx_model_predict(m, rfx_cmat_of(X, 25, d), rfx_mat_of(out, 24, 1), rfx_mat_none()),
                 RFX_EDIM);
    rfx_model_free(m);
    rfx_model_free(NULL);
    rfx_stats_free(NULL);
    rfx_source_free(NULL);
    rfx_features_free(f);
    free(X);
    free(Y);
}

/* Standardisation never overflows or underflows: inputs scaled by 1e200 or
 * 1e-170 (squares far out of range) give the model of the unscaled inputs,
 * predictions equal to rounding, and the model saves and loads (its
 * scaler is finite and positive). */
static void test_extreme_scales(void)
{
    const size_t n = 120, d = 2;
    rfx_test_rng r = {91};
    double *X = rfx_test_matrix(&r, n, d, -1.0, 2.0), *y = malloc(n * sizeof *y);
    double *Xs = malloc(n * d * sizeof *Xs), *p0 = malloc(n * sizeof *p0), *p1 = malloc(n * sizeof *p1);
    for (size_t i = 0; i < n; i++) y[i] = sin(2 * X[i * d]) + X[i * d + 1];
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_RIDGE;
    fp.features.n_features = 64;
    fp.features.length_scale = 1.0;
    fp.features.seed = 3;
    fp.lambda = 1e-3;
    rfx_model *m0 = NULL;
    CHECK_OK(rfx_model_fit(&fp, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &m0, NULL));
    if (m0) CHECK_OK(rfx_model_predict(m0, rfx_cmat_of(X, n, d), rfx_mat_of(p0, n, 1), rfx_mat_none()));
    const double scales[3] = {1e200, 1e-170, 3e-320};
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < n * d; i++) Xs[i] = X[i] * scales[k];
        rfx_model *m1 = NULL, *m2 = NULL;
        CHECK_OK(rfx_model_fit(&fp, rfx_cmat_of(Xs, n, d), rfx_cmat_of(y, n, 1), &m1, NULL));
        if (!m0 || !m1) continue;
        CHECK_OK(rfx_model_predict(m1, rfx_cmat_of(Xs, n, d), rfx_mat_of(p1, n, 1), rfx_mat_none()));
        double worst = 0;
        for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(p1[i] - p0[i]));
        /* 3e-320 is subnormal: the inputs themselves keep only a few digits */
        CHECK_MSG(worst < (k < 2 ? 1e-8 : 0.1), "scale %g: predictions differ by %.3g", scales[k], worst);
        void *buf = NULL;
        size_t len = 0;
        CHECK_OK(rfx_model_save_buffer(m1, &buf, &len));
        CHECK_OK(rfx_model_load_buffer(buf, len, &m2));
        rfx_buffer_free(buf);
        rfx_model_free(m1);
        rfx_model_free(m2);
    }
    /* a column spanning -1.7e308 .. 1.7e308 with its mean far from its
     * middle, so that x - mean overflows for the rows at one end: the same
     * model as for the column before the affine map */
    {
        double *Xk = malloc(n * d * sizeof *Xk), *Xb = malloc(n * d * sizeof *Xb);
        for (size_t i = 0; i < n; i++) {
            const double t = X[i * d], u = t * t * t; /* in [-1, 8], mean 1.25 */
            Xk[i * d] = u;
            Xb[i * d] = (u - 3.5) * (1.7e308 / 4.5);
            Xk[i * d + 1] = Xb[i * d + 1] = X[i * d + 1];
        }
        rfx_model *mk = NULL, *mb = NULL;
        CHECK_OK(rfx_model_fit(&fp, rfx_cmat_of(Xk, n, d), rfx_cmat_of(y, n, 1), &mk, NULL));
        CHECK_OK(rfx_model_fit(&fp, rfx_cmat_of(Xb, n, d), rfx_cmat_of(y, n, 1), &mb, NULL));
        if (mk && mb) {
            CHECK_OK(rfx_model_predict(mk, rfx_cmat_of(Xk, n, d), rfx_mat_of(p0, n, 1),
                                       rfx_mat_none()));
            CHECK_OK(rfx_model_predict(mb, rfx_cmat_of(Xb, n, d), rfx_mat_of(p1, n, 1),
                                       rfx_mat_none()));
            double worst = 0;
            for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(p1[i] - p0[i]));
            CHECK_MSG(worst < 1e-8, "a column spanning the double range: predictions differ "
                      "by %.3g", worst);
        }
        rfx_model_free(mk);
        rfx_model_free(mb);
        free(Xk);
        free(Xb);
    }
    /* a finite row far outside the training scale gives no inf or NaN for
     * an answer: a numerical error naming the row */
    if (m0) {
        double far[4] = {0.5, 0.5, 1.7e308, -1.7e308}, out[2];
        CHECK_STATUS(rfx_model_predict(m0, rfx_cmat_of(far, 2, d), rfx_mat_of(out, 2, 1),
                                       rfx_mat_none()),
                     RFX_ENUMERIC);
        CHECK_MSG(strstr(rfx_last_error(), "row 1: the prediction is") != NULL, "%s",
                  rfx_last_error());
    }
    rfx_model_free(m0);
    free(X);
    free(Xs);
    free(y);
    free(p0);
    free(p1);
}

/* ---- row weights ---------------------------------------------------------- */

/* Rows repeated by integer weights: Xr, Yr hold row i w[i] times. */
static size_t repeat_rows(const double *X, const double *Y, const double *w, size_t n, size_t d,
                          size_t ny, double **Xr, double **Yr)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) m += (size_t)w[i];
    *Xr = malloc(m * d * sizeof **Xr);
    *Yr = malloc(m * ny * sizeof **Yr);
    for (size_t i = 0, k = 0; i < n; i++)
        for (size_t c = 0; c < (size_t)w[i]; c++, k++) {
            memcpy(*Xr + k * d, X + i * d, d * sizeof **Xr);
            memcpy(*Yr + k * ny, Y + i * ny, ny * sizeof **Yr);
        }
    return m;
}

/* The rows of positive weight, in order. */
static size_t keep_rows(const double *X, const double *Y, const double *w, size_t n, size_t d,
                        size_t ny, double **Xk, double **Yk)
{
    size_t m = 0;
    *Xk = malloc(n * d * sizeof **Xk);
    *Yk = malloc(n * ny * sizeof **Yk);
    for (size_t i = 0; i < n; i++) {
        if (!(w[i] > 0)) continue;
        memcpy(*Xk + m * d, X + i * d, d * sizeof **Xk);
        memcpy(*Yk + m * ny, Y + i * ny, ny * sizeof **Yk);
        m++;
    }
    return m;
}

static double model_diff(const rfx_model *a, const rfx_model *b)
{
    const rfx_cmat W = rfx_model_weights(b);
    double dw = rfx_test_max_rel_diff(rfx_model_weights(a).data, W.data, W.rows * W.cols);
    double db = rfx_test_max_rel_diff(rfx_model_intercepts(a), rfx_model_intercepts(b), W.cols);
    return dw > db ? dw : db;
}

static int same_bits(const rfx_model *a, const rfx_model *b)
{
    const rfx_cmat W = rfx_model_weights(b);
    return memcmp(rfx_model_weights(a).data, W.data, W.rows * W.cols * sizeof(double)) == 0 &&
           memcmp(rfx_model_intercepts(a), rfx_model_intercepts(b), W.cols * sizeof(double)) == 0;
}

/* Weighted ridge: integer weights are repeated rows (primal and dual, to
 * 1e-10), weights of 1 are no weights (bit for bit, every solver and
 * selection), weight 0 is a row left out (GCV too, since n counts the rows
 * of positive weight), GCV chooses the same model when every weight is
 * scaled, and primal and dual agree with weights. */
static void test_weighted_ridge(void)
{
    rfx_test_rng r = {21};
    const size_t n = 90, d = 3, D = 120, ny = 2;
    double *X, *Y, w[90], ones[90], wz[90], w7[90];
    make_data(&r, n, d, ny, 3.0, &X, &Y);
    for (size_t i = 0; i < n; i++) {
        w[i] = (double)(1 + (i * 7) % 3);
        ones[i] = 1.0;
        wz[i] = i % 5 == 2 ? 0.0 : w[i];
        w7[i] = 7.0 * w[i];
    }
    rfx_features *f = make_features(D, d, 5, RFX_FORM_COS_BIAS);
    double *Xr, *Yr, *Xk, *Yk;
    const size_t nr = repeat_rows(X, Y, w, n, d, ny, &Xr, &Yr);
    const size_t nk = keep_rows(X, Y, wz, n, d, ny, &Xk, &Yk);
    for (int solver = RFX_SOLVER_PRIMAL; solver <= RFX_SOLVER_DUAL; solver++) {
        rfx_ridge_params p = rfx_ridge_params_default();
        p.lambda = 1e-2;
        p.solver = (rfx_solver)solver;
        rfx_model *mw = NULL, *mr = NULL, *m1 = NULL, *m0 = NULL, *mz = NULL, *mk = NULL;
        p.sample_weight = w;
        CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &mw));
        p.sample_weight = NULL;
        p.solver = RFX_SOLVER_PRIMAL; /* nr > D: the repeated rows in the primal form */
        CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(Xr, nr, d), rfx_cmat_of(Yr, nr, ny), &p, &mr));
        double dr = model_diff(mw, mr);
        printf("weighted ridge (%s) vs repeated rows: %.3g\n", solver == 1 ? "primal" : "dual", dr);
        CHECK(dr < 1e-10);
        /* weights of 1, weights of 0: fixed lambda and GCV */
        for (int gcv = 0; gcv < 2; gcv++) {
            p.solver = (rfx_solver)solver;
            p.select = gcv ? RFX_SELECT_GCV : RFX_SELECT_NONE;
            p.sample_weight = ones;
            CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &m1));
            p.sample_weight = NULL;
            CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &m0));
            CHECK(m1 && m0 && same_bits(m1, m0));
            p.sample_weight = wz;
            CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &mz));
            p.sample_weight = w;
            for (size_t i = 0, k = 0; i < n; i++) /* the kept rows' weights */
                if (wz[i] > 0) ones[k++] = wz[i];
            p.sample_weight = ones;
            CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(Xk, nk, d), rfx_cmat_of(Yk, nk, ny), &p, &mk));
            for (size_t i = 0; i < n; i++) ones[i] = 1.0;
            rfx_model_info iz, ik;
            rfx_model_get_info(mz, &iz);
            rfx_model_get_info(mk, &ik);
            double dz = model_diff(mz, mk);
            printf("  weight 0 vs rows dropped (gcv %d): %.3g, lambda %.6g / %.6g\n", gcv, dz,
                   iz.lambda, ik.lambda);
            CHECK(dz < 1e-10);
            CHECK_NEAR(iz.lambda / ik.lambda, 1.0, 1e-12);
            CHECK(iz.n_train == nk);
            rfx_model_free(m1);
            rfx_model_free(m0);
            rfx_model_free(mz);
            rfx_model_free(mk);
            m1 = m0 = mz = mk = NULL;
        }
        rfx_model_free(mw);
        rfx_model_free(mr);
    }
    /* GCV: primal and dual agree with weights; scaling the weights by 7
     * scales the grid and the chosen lambda by 7 and leaves the model */
    {
        rfx_ridge_params p = rfx_ridge_params_default();
        p.select = RFX_SELECT_GCV;
        p.sample_weight = w;
        rfx_model *mp = NULL, *md = NULL, *m7 = NULL;
        p.solver = RFX_SOLVER_PRIMAL;
        CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &mp));
        p.solver = RFX_SOLVER_DUAL;
        CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &md));
        p.sample_weight = w7;
        p.solver = RFX_SOLVER_PRIMAL;
        CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &m7));
        rfx_model_info ip, id, i7;
        rfx_model_get_info(mp, &ip);
        rfx_model_get_info(md, &id);
        rfx_model_get_info(m7, &i7);
        double dpd = model_diff(md, mp), d7 = model_diff(m7, mp);
        printf("weighted GCV: primal vs dual %.3g, weights x 7 %.3g (lambda %.4g, %.4g)\n", dpd, d7,
               ip.lambda, i7.lambda);
        CHECK_NEAR(ip.lambda / id.lambda, 1.0, 1e-12);
        CHECK_NEAR(i7.lambda / ip.lambda, 7.0, 1e-10);
        CHECK(dpd < 1e-8);
        CHECK(d7 < 1e-8);
        rfx_model_free(mp);
        rfx_model_free(md);
        rfx_model_free(m7);
    }
    /* k-fold: weights of 1 are no weights, bit for bit */
    {
        rfx_ridge_params p = rfx_ridge_params_default();
        p.select = RFX_SELECT_KFOLD;
        rfx_model *m1 = NULL, *m0 = NULL;
        p.sample_weight = ones;
        CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &m1));
        p.sample_weight = NULL;
        CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &m0));
        CHECK(m1 && m0 && same_bits(m1, m0));
        p.sample_weight = w; /* and weighted k-fold runs and chooses from the grid */
        rfx_model_free(m1);
        m1 = NULL;
        CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), &p, &m1));
        rfx_model_free(m1);
        rfx_model_free(m0);
    }
    /* weighted statistics merge: two halves are the whole */
    {
        rfx_stats *all = NULL, *a = NULL, *b = NULL;
        CHECK_OK(rfx_stats_create(D, ny, &all));
        CHECK_OK(rfx_stats_create(D, ny, &a));
        CHECK_OK(rfx_stats_create(D, ny, &b));
        CHECK_OK(rfx_stats_add_weighted(all, f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny), wz));
        CHECK_OK(rfx_stats_add_weighted(a, f, rfx_cmat_of(X, 40, d), rfx_cmat_of(Y, 40, ny), wz));
        CHECK_OK(rfx_stats_add_weighted(b, f, rfx_cmat_of(X + 40 * d, n - 40, d),
                                        rfx_cmat_of(Y + 40 * ny, n - 40, ny), wz + 40));
        CHECK_OK(rfx_stats_merge(a, b));
        CHECK(rfx_stats_rows(a) == nk && rfx_stats_rows(all) == nk);
        rfx_ridge_params p = rfx_ridge_params_default();
        p.select = RFX_SELECT_GCV;
        rfx_model *m1 = NULL, *m2 = NULL;
        CHECK_OK(rfx_ridge_solve(f, all, &p, &m1));
        CHECK_OK(rfx_ridge_solve(f, a, &p, &m2));
        double dm = model_diff(m2, m1);
        printf("weighted statistics merged: %.3g\n", dm);
        CHECK(dm < 1e-10);
        rfx_model_free(m1);
        rfx_model_free(m2);
        rfx_stats_free(all);
        rfx_stats_free(a);
        rfx_stats_free(b);
    }
    free(Xr);
    free(Yr);
    free(Xk);
    free(Yk);
    rfx_features_free(f);
    free(X);
    free(Y);
}

/* Weighted Bayes: for given variances an integer weight is a repeated row
 * (mean, intercept and predictive std to 1e-10); with fitted variances
 * weights of 1 are no weights (bits), weight 0 is a row left out, and
 * weights scaled by k fit noise_var k times larger with the same mean. */
static void test_weighted_bayes(void)
{
    rfx_test_rng r = {22};
    const size_t n = 120, d = 2, D = 64;
    double *X, *Y, w[120], ones[120], wz[120], wk[120], w5[120];
    make_data(&r, n, d, 1, -1.0, &X, &Y);
    for (size_t i = 0; i < n; i++) {
        w[i] = (double)(1 + (i * 5) % 3);
        ones[i] = 1.0;
        wz[i] = i % 4 == 1 ? 0.0 : w[i];
        w5[i] = 5.0 * w[i];
    }
    rfx_features *f = make_features(D, d, 6, RFX_FORM_COS_BIAS);
    double *Xr, *Yr, *Xk, *Yk;
    const size_t nr = repeat_rows(X, Y, w, n, d, 1, &Xr, &Yr);
    const size_t nk = keep_rows(X, Y, wz, n, d, 1, &Xk, &Yk);
    for (size_t i = 0, k = 0; i < n; i++)
        if (wz[i] > 0) wk[k++] = wz[i];
    rfx_bayes_params p = rfx_bayes_params_default();
    p.noise_var = 0.01;
    p.prior_var = 0.5;
    /* with and without intercept: the mean and the std of the latent f,
     * whose intercept share is noise_var / sum w (see rfx_bayes_solve) */
    for (int icpt = 0; icpt < 2; icpt++) {
        rfx_model *mw = NULL, *mr = NULL;
        p.fit_intercept = icpt;
        p.sample_weight = w;
        CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &mw));
        p.sample_weight = NULL;
        CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(Xr, nr, d), rfx_cmat_of(Yr, nr, 1), &p, &mr));
        double m1[40], m2[40], s1[40], s2[40];
        CHECK_OK(rfx_model_predict_latent(mw, rfx_cmat_of(X, 40, d), rfx_mat_of(m1, 40, 1),
                                          rfx_mat_of(s1, 40, 1)));
        CHECK_OK(rfx_model_predict_latent(mr, rfx_cmat_of(X, 40, d), rfx_mat_of(m2, 40, 1),
                                          rfx_mat_of(s2, 40, 1)));
        double dm = model_diff(mw, mr), ds = rfx_test_max_rel_diff(s1, s2, 40);
        printf("weighted bayes vs repeated rows (given variances, intercept %d): mean %.3g, "
               "latent std %.3g\n", icpt, dm, ds);
        CHECK(dm < 1e-10);
        CHECK(ds < 1e-10);
        if (icpt) { /* sum w goes through the model file: the same std after loading */
            void *buf = NULL;
            size_t len = 0;
            rfx_model *back = NULL;
            CHECK_OK(rfx_model_save_buffer(mw, &buf, &len));
            CHECK_OK(rfx_model_load_buffer(buf, len, &back));
            if (back) {
                double s3[40];
                CHECK_OK(rfx_model_predict_latent(back, rfx_cmat_of(X, 40, d),
                                                  rfx_mat_of(m1, 40, 1), rfx_mat_of(s3, 40, 1)));
                CHECK(memcmp(s1, s3, sizeof s3) == 0);
            }
            rfx_model_free(back);
            rfx_buffer_free(buf);
        }
        rfx_model_free(mw);
        rfx_model_free(mr);
    }
    p.fit_intercept = 1;
    /* fitted variances */
    p = rfx_bayes_params_default();
    rfx_model *a = NULL, *b = NULL, *c = NULL, *e = NULL;
    rfx_model_info ia, ib;
    p.sample_weight = ones;
    CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &a));
    p.sample_weight = NULL;
    CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &b));
    rfx_model_get_info(a, &ia);
    rfx_model_get_info(b, &ib);
    CHECK(same_bits(a, b) && ia.noise_var == ib.noise_var && ia.log_evidence == ib.log_evidence);
    p.sample_weight = wz;
    CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &c));
    p.sample_weight = wk;
    CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(Xk, nk, d), rfx_cmat_of(Yk, nk, 1), &p, &e));
    rfx_model_get_info(c, &ia);
    rfx_model_get_info(e, &ib);
    printf("weighted bayes, weight 0 vs rows dropped: %.3g, noise %.6g / %.6g, evidence %.10g / "
           "%.10g\n", model_diff(c, e), ia.noise_var, ib.noise_var, ia.log_evidence,
           ib.log_evidence);
    CHECK(model_diff(c, e) < 1e-9);
    CHECK_NEAR(ia.noise_var / ib.noise_var, 1.0, 1e-9);
    CHECK_NEAR(ia.log_evidence - ib.log_evidence, 0.0, 1e-8 * fabs(ib.log_evidence));
    CHECK(ia.n_train == nk);
    rfx_model_free(a);
    rfx_model_free(b);
    rfx_model_free(c);
    rfx_model_free(e);
    /* weights x 5: noise_var x 5, the same posterior mean */
    a = b = NULL;
    p.sample_weight = w;
    CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &a));
    p.sample_weight = w5;
    CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &b));
    rfx_model_get_info(a, &ia);
    rfx_model_get_info(b, &ib);
    printf("weighted bayes, weights x 5: mean %.3g, noise ratio %.12g, prior ratio %.12g\n",
           model_diff(b, a), ib.noise_var / ia.noise_var, ib.prior_var / ia.prior_var);
    CHECK(model_diff(b, a) < 1e-7);
    CHECK_NEAR(ib.noise_var / ia.noise_var, 5.0, 5e-7);
    CHECK_NEAR(ib.prior_var / ia.prior_var, 1.0, 1e-7);
    rfx_model_free(a);
    rfx_model_free(b);
    free(Xr);
    free(Yr);
    free(Xk);
    free(Yk);
    rfx_features_free(f);
    free(X);
    free(Y);
}

/* rfx_model_fit with weights: weight 0 is a row left out bit for bit (the
 * zeros are dropped before anything else, the length scale and lambda
 * chosen on the rest); integer weights are repeated rows for a given
 * length scale and lambda, standardisation included (weighted moments);
 * weights of 1 are no weights; and the errors name the field. */
static void test_weighted_model_fit(void)
{
    rfx_test_rng r = {23};
    const size_t n = 150, d = 3;
    double *X, *Y, w[150], wz[150], ones[150], wk[150];
    make_data(&r, n, d, 1, 2.0, &X, &Y);
    for (size_t i = 0; i < n; i++) {
        X[i * d + 1] *= 10.0; /* unequal scales: the standardisation matters */
        w[i] = (double)(1 + (i * 11) % 3);
        wz[i] = i % 6 == 0 ? 0.0 : w[i];
        ones[i] = 1.0;
    }
    double *Xr, *Yr, *Xk, *Yk;
    const size_t nr = repeat_rows(X, Y, w, n, d, 1, &Xr, &Yr);
    const size_t nk = keep_rows(X, Y, wz, n, d, 1, &Xk, &Yk);
    for (size_t i = 0, k = 0; i < n; i++)
        if (wz[i] > 0) wk[k++] = wz[i];
    for (int method = RFX_METHOD_RIDGE; method <= RFX_METHOD_BAYES; method++) {
        rfx_fit_params p = rfx_fit_params_default();
        p.method = (rfx_method)method;
        p.features.n_features = 96;
        rfx_model *a = NULL, *b = NULL;
        p.sample_weight = wz; /* automatic: length scale and lambda chosen */
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &a, NULL));
        p.sample_weight = wk;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(Xk, nk, d), rfx_cmat_of(Yk, nk, 1), &b, NULL));
        CHECK(a && b && same_bits(a, b));
        rfx_model_free(a);
        rfx_model_free(b);
        a = b = NULL;
        p.sample_weight = ones;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &a, NULL));
        p.sample_weight = NULL;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &b, NULL));
        CHECK(a && b && same_bits(a, b));
        rfx_model_free(a);
        rfx_model_free(b);
        a = b = NULL;
        /* given scale and lambda (ridge) or variances (Bayes) */
        p.features.length_scale = 0.8;
        p.lambda = 1e-2;
        p.noise_var = 0.01;
        p.prior_var = 1.0;
        p.sample_weight = w;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &a, NULL));
        p.sample_weight = NULL;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(Xr, nr, d), rfx_cmat_of(Yr, nr, 1), &b, NULL));
        double pa[30], pb[30];
        CHECK_OK(rfx_model_predict(a, rfx_cmat_of(X, 30, d), rfx_mat_of(pa, 30, 1), rfx_mat_none()));
        CHECK_OK(rfx_model_predict(b, rfx_cmat_of(X, 30, d), rfx_mat_of(pb, 30, 1), rfx_mat_none()));
        double dp = rfx_test_max_rel_diff(pa, pb, 30);
        printf("rfx_model_fit (%s) weighted vs repeated rows: predictions %.3g\n",
               rfx_method_name((rfx_method)method), dp);
        CHECK(dp < 1e-10);
        rfx_model_free(a);
        rfx_model_free(b);
    }
    /* errors, each naming its field */
    rfx_fit_params p = rfx_fit_params_default();
    rfx_model *m = NULL;
    double bad[150];
    memcpy(bad, w, sizeof bad);
    bad[17] = -1.0;
    p.sample_weight = bad;
    CHECK_STATUS(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &m, NULL),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "fit.sample_weight[17]") != NULL);
    bad[17] = NAN;
    CHECK_STATUS(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &m, NULL),
                 RFX_EINVAL);
    memset(bad, 0, sizeof bad);
    CHECK_STATUS(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &m, NULL),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "all 150 weights are zero") != NULL);
    bad[3] = 1.0; /* one row of positive weight: too few */
    CHECK_STATUS(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &m, NULL),
                 RFX_EDIM);
    p.method = RFX_METHOD_SRFE; /* SRFE takes weights (rfx_srfe_fit checks them) */
    p.sample_weight = w;
    CHECK_OK(rfx_fit_params_check(&p));
    CHECK(m == NULL);
    rfx_features *f = make_features(32, d, 1, RFX_FORM_COS_BIAS);
    rfx_ridge_params rp = rfx_ridge_params_default();
    rp.sample_weight = bad;
    bad[3] = -2.0;
    CHECK_STATUS(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &rp, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "ridge.sample_weight[3]") != NULL);
    rfx_stats *s = NULL;
    CHECK_OK(rfx_stats_create(32, 1, &s));
    CHECK_STATUS(rfx_stats_add_weighted(s, f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), bad),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "stats: w[3]") != NULL);
    CHECK(rfx_stats_rows(s) == 0);
    CHECK_OK(rfx_stats_add_weighted(s, f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), w));
    rp.sample_weight = w; /* the statistics carry the weights */
    CHECK_STATUS(rfx_ridge_solve(f, s, &rp, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "ridge.sample_weight") != NULL);
    rfx_source *src = NULL;
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), 0, &src));
    CHECK_STATUS(rfx_ridge_fit_source(f, src, &rp, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "ridge.sample_weight") != NULL);
    rfx_bayes_params bp = rfx_bayes_params_default();
    bp.sample_weight = w;
    CHECK_STATUS(rfx_bayes_solve(f, s, &bp, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "bayes.sample_weight") != NULL);
    bp.sample_weight = bad;
    CHECK_STATUS(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &bp, &m), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "bayes.sample_weight[3]") != NULL);
    CHECK(m == NULL);
    rfx_source_free(src);
    rfx_stats_free(s);
    rfx_features_free(f);
    free(Xr);
    free(Yr);
    free(Xk);
    free(Yk);
    free(X);
    free(Y);
}

/* Fewer rows than features: rfx_bayes_fit fits the variances by the n x n
 * dual form; rfx_bayes_solve from the same rows' statistics by the D x D
 * eigen-decomposition. The two fixed points, evidences and posterior means
 * agree to rounding, with and without intercept, with weights (zeros
 * included) and with one variance given; rfx__bayes_log_evidence is the
 * fit's evidence. */
static void test_bayes_dual(void)
{
    rfx_test_rng r = {31};
    const size_t n = 60, d = 3, D = 150;
    double *X, *Y, w[60];
    make_data(&r, n, d, 1, 2.0, &X, &Y);
    for (size_t i = 0; i < n; i++) w[i] = i % 7 == 3 ? 0.0 : 0.5 + (double)(i % 4);
    rfx_features *f = make_features(D, d, 12, RFX_FORM_COS_BIAS);
    for (int c = 0; c < 6; c++) {
        rfx_bayes_params p = rfx_bayes_params_default();
        p.fit_intercept = c % 2;
        if (c >= 2 && c < 4) p.sample_weight = w;
        if (c >= 4) p.noise_var = 0.004;
        rfx_model *dual = NULL, *primal = NULL;
        CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p, &dual));
        rfx_stats *s = NULL;
        CHECK_OK(rfx_stats_create(D, 1, &s));
        CHECK_OK(rfx_stats_add_weighted(s, f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1),
                                        p.sample_weight));
        rfx_bayes_params q = p;
        q.sample_weight = NULL;
        CHECK_OK(rfx_bayes_solve(f, s, &q, &primal));
        double logev = 0;
        CHECK_OK(rfx__bayes_log_evidence(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), &p,
                                         &logev));
        rfx_model_info a, b;
        CHECK_OK(rfx_model_get_info(dual, &a));
        CHECK_OK(rfx_model_get_info(primal, &b));
        printf("bayes dual vs primal (case %d): noise %.10g / %.10g, prior %.10g / %.10g, "
               "evidence %.12g / %.12g / %.12g, mean %.3g\n", c, a.noise_var, b.noise_var,
               a.prior_var, b.prior_var, a.log_evidence, b.log_evidence, logev,
               model_diff(dual, primal));
        CHECK_NEAR(a.noise_var / b.noise_var, 1.0, 1e-6);
        CHECK_NEAR(a.prior_var / b.prior_var, 1.0, 1e-6);
        CHECK_NEAR(a.log_evidence, b.log_evidence, 1e-8 * fabs(b.log_evidence) + 1e-10);
        CHECK_NEAR(logev, a.log_evidence, 1e-8 * fabs(a.log_evidence) + 1e-10);
        CHECK(model_diff(dual, primal) < 1e-8);
        if (c >= 4) CHECK(a.noise_var == 0.004);
        rfx_stats_free(s);
        rfx_model_free(dual);
        rfx_model_free(primal);
    }
    free(X);
    free(Y);
    rfx_features_free(f);
}

int main(void)
{
    test_extreme_scales();
    test_normal_equations();
    test_primal_dual();
    test_streaming();
    test_stats_merge();
    test_stats_pack();
    test_stats_f32();
    test_selection();
    test_bayes_gp();
    test_reproducible();
    test_auto_fit();
    test_sparse_model_roundtrip();
    test_bayes_noise_free();
    test_errors();
    test_weighted_ridge();
    test_weighted_bayes();
    test_bayes_dual();
    test_weighted_model_fit();
    return rfx_test_finish("test_solvers");
}
