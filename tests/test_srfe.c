/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse random feature expansions: exact recovery of a target built from
 * the same sparse feature map, agreement of the model with its parts,
 * cross-validated choices, model files, and parameter errors. */
#include "internal.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* y = 0.3 + 6 features of the very map SRFE draws (standardize = 0 keeps
 * the inputs as given): the l1 fits must reproduce the function out of 400
 * candidate features from 300 rows; HTP with 60 terms. */
static void test_recovery(void)
{
    rfx_test_rng r = {1};
    const size_t m = 300, d = 6, N = 400, mt = 200;
    double *X = rfx_test_matrix(&r, m, d, -1.7, 1.7), *Xt = rfx_test_matrix(&r, mt, d, -1.7, 1.7);
    rfx_srfe_params p = rfx_srfe_params_default();
    p.features.n_features = N;
    p.features.weight_scale = 1.0;
    p.features.sparsity = 2;
    p.features.seed = 11;
    p.standardize = 0;
    rfx_features_params fp = p.features;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&fp, d, &f));
    double *Z = malloc(m * N * sizeof *Z), *Zt = malloc(mt * N * sizeof *Zt);
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, m, d), rfx_mat_of(Z, m, N)));
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(Xt, mt, d), rfx_mat_of(Zt, mt, N)));
    const size_t support[6] = {3, 50, 120, 200, 333, 399};
    const double coef[6] = {1.0, -0.7, 0.5, 0.8, -1.2, 0.4};
    double *y = malloc(m * sizeof *y), *yt = malloc(mt * sizeof *yt);
    for (size_t i = 0; i < m; i++) {
        y[i] = 0.3;
        for (size_t k = 0; k < 6; k++) y[i] += coef[k] * Z[i * N + support[k]];
    }
    for (size_t i = 0; i < mt; i++) {
        yt[i] = 0.3;
        for (size_t k = 0; k < 6; k++) yt[i] += coef[k] * Zt[i * N + support[k]];
    }
    for (int method = 0; method < 3; method++) {
        rfx_srfe_params q = p;
        q.method = (rfx_l1_method)method;
        if (method == RFX_L1_METHOD_LASSO) q.lambda = 1e-7;
        if (method == RFX_L1_METHOD_BPDN) q.eta = 1e-6;
        if (method == RFX_L1_METHOD_HTP) q.sparsity = 60;
        rfx_model *mo = NULL;
        rfx_srfe_report rep;
        CHECK_OK(rfx_srfe_fit(&q, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, &rep));
        if (!mo) continue;
        double *pt = malloc(mt * sizeof *pt);
        CHECK_OK(rfx_model_predict(mo, rfx_cmat_of(Xt, mt, d), rfx_mat_of(pt, mt, 1),
                                   rfx_mat_none()));
        double e = rfx_test_rel_error(pt, yt, mt);
        printf("recovery (%s): test relative error %.2e, %zu nonzero\n",
               rfx_l1_method_name(q.method), e, rep.n_nonzero);
        /* the columns are coherent (15 supports shared by 400 features, and
         * sines with random phases overlap the constant), so the sparse
         * representation found need not be the one built; the function is */
        CHECK(e < (method == RFX_L1_METHOD_HTP ? 1e-2 : 1e-3));
        CHECK(rep.n_nonzero <= (method == RFX_L1_METHOD_HTP ? 60 : m));
        rfx_model_info info;
        CHECK_OK(rfx_model_get_info(mo, &info));
        CHECK(info.method == (method == RFX_L1_METHOD_HTP ? RFX_METHOD_HARFE : RFX_METHOD_SRFE));
        /* the model file keeps it bitwise */
        void *buf = NULL;
        size_t len = 0;
        rfx_model *m2 = NULL;
        CHECK_OK(rfx_model_save_buffer(mo, &buf, &len));
        CHECK_OK(rfx_model_load_buffer(buf, len, &m2));
        double *p2 = malloc(mt * sizeof *p2);
        CHECK_OK(rfx_model_predict(m2, rfx_cmat_of(Xt, mt, d), rfx_mat_of(p2, mt, 1),
                                   rfx_mat_none()));
        CHECK(memcmp(pt, p2, mt * sizeof *pt) == 0);
        free(p2);
        rfx_buffer_free(buf);
        rfx_model_free(m2);
        free(pt);
        rfx_model_free(mo);
    }
    free(X);
    free(Xt);
    free(Z);
    free(Zt);
    free(y);
    free(yt);
    rfx_features_free(f);
}

/* The cross-validated defaults on a benchmark function: the surrogate
 * generalises (a loose bound: the accuracy targets are benchmarked). */
static void test_defaults(void)
{
    rfx_testfn_params tp;
    memset(&tp, 0, sizeof tp);
    rfx_testfn *fn = NULL;
    CHECK_OK(rfx_testfn_create(RFX_TESTFN_ISHIGAMI, &tp, &fn));
    if (!fn) return;
    const size_t m = 300, mt = 500, d = 3;
    double *X = malloc(m * d * sizeof *X), *y = malloc(m * sizeof *y);
    double *Xt = malloc(mt * d * sizeof *Xt), *yt = malloc(mt * sizeof *yt);
    double *pt = malloc(mt * sizeof *pt);
    CHECK_OK(rfx_testfn_sample(fn, 1, rfx_mat_of(X, m, d), y));
    CHECK_OK(rfx_testfn_sample(fn, 2, rfx_mat_of(Xt, mt, d), yt));
    rfx_srfe_params p = rfx_srfe_params_default();
    p.features.n_features = 1000;
    rfx_model *mo = NULL;
    rfx_srfe_report rep;
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, &rep));
    if (mo) {
        CHECK_OK(rfx_model_predict(mo, rfx_cmat_of(Xt, mt, d), rfx_mat_of(pt, mt, 1),
                                   rfx_mat_none()));
        double e = rfx_test_rel_error(pt, yt, mt);
        printf("Ishigami, m = %zu: relative error %.4f (scale %.2g, lambda %.3g, %zu nonzero, "
               "CV MSE %.4g)\n", m, e, rep.weight_scale, rep.lambda, rep.n_nonzero, rep.cv_mse);
        CHECK(e < 0.2);
        /* 3 scales at q = 2, then q = 1, 3, and rounds of 2 widening the grid */
        CHECK(rep.n_candidates == 5 || rep.n_candidates == 7 || rep.n_candidates == 9 ||
              rep.n_candidates == 11);
        CHECK(rep.sparsity >= 1 && rep.sparsity <= 3);
        CHECK(isfinite(rep.cv_mse));
    }
    rfx_model_free(mo);
    /* errors */
    mo = NULL;
    p.n_folds = 1;
    CHECK_STATUS(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "n_folds") != NULL);
    p = rfx_srfe_params_default();
    p.features.sparsity = 5;
    CHECK_STATUS(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "sparsity") != NULL);
    p = rfx_srfe_params_default();
    CHECK_STATUS(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m - 1, 1), &mo, NULL),
                 RFX_EDIM);
    double *sw = malloc(m * sizeof *sw);
    for (size_t i = 0; i < m; i++) sw[i] = 1.0;
    sw[2] = -1.0;
    p.sample_weight = sw;
    CHECK_STATUS(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "srfe.sample_weight[2]") != NULL);
    for (size_t i = 0; i < m; i++) sw[i] = i == 0 ? 1.0 : 0.0;
    CHECK_STATUS(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL),
                 RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "rows of positive weight") != NULL);
    for (size_t i = 0; i < m; i++) sw[i] = i < 4 ? 1.0 : 0.0; /* 4 rows: 5 folds too many */
    p.select = RFX_SELECT_KFOLD;
    CHECK_STATUS(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "srfe.n_folds") != NULL);
    free(sw);
    p = rfx_srfe_params_default();
    X[4] = NAN;
    CHECK_STATUS(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL),
                 RFX_EPARSE);
    CHECK(mo == NULL);
    free(X);
    free(y);
    free(Xt);
    free(yt);
    free(pt);
    rfx_testfn_free(fn);
}

/* The GCV score of the fit with the given scale, q and N (the lasso grid
 * halved for a screen), as rfx_srfe_fit scores a candidate. */
static double score_at(const double *X, const double *y, size_t m, size_t d, double scale,
                       size_t q, size_t N, int screen)
{
    rfx_srfe_params p = rfx_srfe_params_default();
    p.features.n_features = N;
    p.features.weight_scale = scale;
    p.features.sparsity = q;
    if (screen) p.n_lambdas = 25;
    rfx_model *mo = NULL;
    rfx_srfe_report rep;
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, &rep));
    const double g = mo ? rep.cv_mse : NAN;
    rfx_model_free(mo);
    return g;
}

/* The documented search with N = 4000 given, replayed with fits at given
 * (scale, q): the screen with the first 1000 features and half the lambda
 * grid, the scales {0.5, 1, 2} at q = 2, then the other q <= d at the best
 * scale; when that scale is an end of the grid, rounds of two scales twice
 * and four times further out at the best q, while the outer one scores
 * best (three rounds at most); then all 4000 features at the best scale s
 * and 1.5 s, the latter kept unless it scores worse. The default fit must
 * choose the same scale and q, with as many screens. Returns the scale. */
static double check_search_by_hand(const char *what, const double *X, const double *y, size_t m,
                                   size_t d)
{
    const size_t Ns = 1000, N = 4000;
    double best_s = 0, best = INFINITY;
    size_t best_q = 0, screens = 0;
    const double grid[3] = {0.5, 1.0, 2.0};
    const size_t q0 = d < 2 ? d : 2, qs[3] = {1, 2, 3};
    for (size_t k = 0; k < 3; k++, screens++) {
        double g = score_at(X, y, m, d, grid[k], q0, Ns, 1);
        if (g < best) {
            best = g;
            best_s = grid[k];
            best_q = q0;
        }
    }
    const double s0 = best_s;
    for (size_t k = 0; k < 3; k++) {
        if (qs[k] == q0 || qs[k] > d) continue;
        double g = score_at(X, y, m, d, s0, qs[k], Ns, 1);
        screens++;
        if (g < best) {
            best = g;
            best_q = qs[k];
        }
    }
    const double step = s0 == 2.0 ? 2.0 : s0 == 0.5 ? 0.5 : 1.0;
    double outer = s0;
    for (size_t round = 0; step != 1.0 && round < 3; round++) {
        const size_t q = best_q;
        for (size_t k = 0; k < 2; k++, screens++) {
            outer *= step;
            double g = score_at(X, y, m, d, outer, q, Ns, 1);
            if (g < best) {
                best = g;
                best_s = outer;
            }
        }
        if (best_s != outer) break;
    }
    const double g1 = score_at(X, y, m, d, best_s, best_q, N, 0);
    const double g2 = score_at(X, y, m, d, 1.5 * best_s, best_q, N, 0);
    const double want = g2 > g1 ? best_s : 1.5 * best_s;
    rfx_srfe_params p = rfx_srfe_params_default();
    p.features.n_features = N;
    rfx_model *mo = NULL;
    rfx_srfe_report rep;
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, &rep));
    printf("%s: by hand %zu screens, scale %g (screen %g), q %zu, GCV %.4g / %.4g; the fit: %zu "
           "screens, scale %g, q %zu, GCV %.4g\n",
           what, screens, want, best_s, best_q, g1, g2, rep.n_candidates, rep.weight_scale,
           rep.sparsity, rep.cv_mse);
    CHECK(rep.n_candidates == screens && rep.n_features == N);
    CHECK(rep.weight_scale == want && rep.sparsity == best_q);
    CHECK(rep.cv_mse == fmin(g1, g2));
    if (mo) CHECK(rfx_model_weights(mo).rows == N);
    rfx_model_free(mo);
    return want;
}

/* A target whose best scale lies far above the grid {0.5, 1, 2}: the sum
 * of sin(6 pi x_j), x uniform on [-1, 1]^2 (a frequency of about 11 per
 * standardised unit). The search widens the grid, and its choice is the
 * replayed search's; its test error is about half that at the grid's end, 2 * 1.5. */
static void test_widening(void)
{
    const size_t m = 200, mt = 400, d = 2;
    double X[200 * 2], y[200], Xt[400 * 2], yt[400], pt[400];
    rfx_test_rng r = {11};
    for (size_t i = 0; i < m + mt; i++) {
        double *x = i < m ? X + i * d : Xt + (i - m) * d;
        double v = 0;
        for (size_t j = 0; j < d; j++) {
            x[j] = 2 * rfx_test_uniform(&r) - 1;
            v += sin(6 * 3.141592653589793 * x[j]);
        }
        if (i < m) y[i] = v;
        else yt[i - m] = v;
    }
    double s = check_search_by_hand("widening", X, y, m, d);
    CHECK(s >= 6.0);
    double e[2];
    for (int k = 0; k < 2; k++) {
        rfx_srfe_params p = rfx_srfe_params_default();
        p.features.n_features = 4000;
        if (k) p.features.weight_scale = 3.0;
        rfx_model *mo = NULL;
        CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL));
        if (!mo) return;
        CHECK_OK(rfx_model_predict(mo, rfx_cmat_of(Xt, mt, d), rfx_mat_of(pt, mt, 1),
                                   rfx_mat_none()));
        e[k] = rfx_test_rel_error(pt, yt, mt);
        rfx_model_free(mo);
    }
    printf("widening: test error %.4f at the chosen scale %g, %.4f at scale 3\n", e[0], s, e[1]);
    CHECK(e[0] < 0.6 * e[1]);
    /* widen_rounds 0: the grid alone, 3 scales at q = 2 and q = 1 */
    rfx_srfe_params p = rfx_srfe_params_default();
    p.features.n_features = 4000;
    p.widen_rounds = 0;
    rfx_srfe_report rep;
    rfx_model *mo = NULL;
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, &rep));
    rfx_model_free(mo);
    CHECK(rep.n_candidates == 4 && (rep.weight_scale == 2.0 || rep.weight_scale == 3.0));
}

/* The default selection is GCV along one lasso path: the model equals the
 * documented composition (standardise, sparse sine features, unit columns,
 * rfx_l1_fit with RFX_SELECT_GCV) and its score is GCV's formula. */
static void test_selection(void)
{
    rfx_testfn *fn = NULL;
    CHECK_OK(rfx_testfn_create(RFX_TESTFN_ISHIGAMI, NULL, &fn));
    if (!fn) return;
    const size_t m = 200, d = 3, N = 1200;
    double *X = malloc(m * d * sizeof *X), *y = malloc(m * sizeof *y);
    double *Xs = malloc(m * d * sizeof *Xs), *A = malloc(m * N * sizeof *A);
    double *cs = malloc(N * sizeof *cs), *c = malloc(N * sizeof *c), *f = malloc(m * sizeof *f);
    CHECK_OK(rfx_testfn_sample(fn, 3, rfx_mat_of(X, m, d), y));
    rfx_srfe_params p = rfx_srfe_params_default();
    p.features.n_features = N;
    p.features.weight_scale = 1.0;
    p.features.sparsity = 2;
    p.features.seed = 7;
    rfx_model *mo = NULL;
    rfx_srfe_report rep;
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, &rep));
    if (!mo) return;
    /* the composition, by hand */
    for (size_t j = 0; j < d; j++) {
        double mu = 0, v = 0;
        for (size_t i = 0; i < m; i++) mu += X[i * d + j] / (double)m;
        for (size_t i = 0; i < m; i++) v += (X[i * d + j] - mu) * (X[i * d + j] - mu) / (double)m;
        for (size_t i = 0; i < m; i++) Xs[i * d + j] = (X[i * d + j] - mu) / sqrt(v);
    }
    rfx_features_params fp = p.features;
    rfx_features *fe = NULL;
    CHECK_OK(rfx_features_create(&fp, d, &fe));
    CHECK_OK(rfx_features_transform(fe, rfx_cmat_of(Xs, m, d), rfx_mat_of(A, m, N)));
    CHECK_OK(rfx_l1_normalize_columns(rfx_mat_of(A, m, N), cs, 0));
    rfx_l1_params lp = rfx_l1_params_default();
    lp.fit_intercept = 1;
    lp.select = RFX_SELECT_GCV;
    lp.n_lambdas = p.n_lambdas;
    lp.lambda_min_ratio = p.lambda_min_ratio;
    lp.cv_stop_factor = 1.5;
    double b;
    rfx_l1_report lr;
    CHECK_OK(rfx_l1_fit(&lp, rfx_cmat_of(A, m, N), y, c, &b, &lr));
    rfx_cmat W = rfx_model_weights(mo);
    double worst = 0, wmax = 0; /* the scaler may round differently here */
    for (size_t j = 0; j < N; j++) {
        worst = fmax(worst, fabs(W.data[j * W.stride] - c[j] / cs[j]));
        wmax = fmax(wmax, fabs(c[j] / cs[j]));
    }
    worst /= wmax;
    printf("selection: model vs composition max |dw| / max |w| %.3g, lambda %.4g vs %.4g, nnz %zu\n", worst,
           rep.lambda, lr.lambda, rep.n_nonzero);
    CHECK(worst <= 1e-9);
    CHECK(fabs(rep.lambda - lr.lambda) <= 1e-12 * lr.lambda && rep.n_nonzero == lr.n_nonzero);
    CHECK(fabs(rfx_model_intercepts(mo)[0] - b) <= 1e-9 * fabs(b) + 1e-12);
    /* the score is GCV of the training residual */
    CHECK_OK(rfx_model_predict(mo, rfx_cmat_of(X, m, d), rfx_mat_of(f, m, 1), rfx_mat_none()));
    double rss = 0;
    for (size_t i = 0; i < m; i++) rss += (y[i] - f[i]) * (y[i] - f[i]);
    double slack = 1.0 - (double)(rep.n_nonzero + 1) / (double)m;
    double gcv = rss / (double)m / (slack * slack);
    printf("selection: GCV %.6g, by hand %.6g\n", rep.cv_mse, gcv);
    CHECK(fabs(rep.cv_mse - gcv) <= 1e-8 * gcv);
    rfx_model_free(mo);
    mo = NULL;
    /* k-fold selection too; the scale screen with several candidates */
    p.select = RFX_SELECT_KFOLD;
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, &rep));
    CHECK(isfinite(rep.cv_mse) && rep.n_candidates == 1);
    rfx_model_free(mo);
    mo = NULL;
    /* the screen and the full stage, by hand (screen_by_hand) */
    check_search_by_hand("Ishigami", X, y, m, d);
    /* N chosen: without a given N the screen's fit is kept when it scores
     * better than the full map (m = 200: N = 6000, screened with 1500) */
    p = rfx_srfe_params_default();
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, &rep));
    printf("selection: automatic N = %zu (of 1500, 6000), q %zu, GCV %.4g\n", rep.n_features,
           rep.sparsity, rep.cv_mse);
    CHECK(rep.n_features == 1500 || rep.n_features == 6000);
    if (mo) CHECK(rfx_model_weights(mo).rows == rep.n_features);
    rfx_model_free(mo);
    mo = NULL;
    /* errors */
    p = rfx_srfe_params_default();
    p.select = RFX_SELECT_NONE;
    CHECK_STATUS(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "srfe.select") != NULL);
    p = rfx_srfe_params_default();
    p.lambda_min_ratio = 1.0;
    CHECK_STATUS(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "srfe.lambda_min_ratio") != NULL);
    CHECK(mo == NULL);
    rfx_features_free(fe);
    rfx_testfn_free(fn);
    free(X);
    free(y);
    free(Xs);
    free(A);
    free(cs);
    free(c);
    free(f);
}

#define EXPECT_ERR(call, status, text)                                                   \
    do {                                                                                  \
        CHECK_STATUS(call, status);                                                       \
        CHECK_MSG(strstr(rfx_last_error(), text) != NULL, "message '%s' lacks '%s'",      \
                  rfx_last_error(), text);                                                \
    } while (0)

/* rfx_srfe_params_check: the defaults pass, each bad field is named; what
 * depends on the data (q <= d, n_folds <= m) is left to the fit; and
 * rfx_srfe_fit makes the same check first, before it looks at the data. */
static void test_params_check(void)
{
    rfx_srfe_params p = rfx_srfe_params_default();
    CHECK_OK(rfx_srfe_params_check(&p));
    p.method = RFX_L1_METHOD_HTP;
    p.features.weight_scale = 2.0;
    p.features.n_features = 500;
    CHECK_OK(rfx_srfe_params_check(&p));
    EXPECT_ERR(rfx_srfe_params_check(NULL), RFX_EINVAL, "srfe: params is NULL");
#define BAD(field, value, text)                                                           \
    do {                                                                                  \
        rfx_srfe_params q_ = rfx_srfe_params_default();                                   \
        q_.field = value;                                                                 \
        EXPECT_ERR(rfx_srfe_params_check(&q_), RFX_EINVAL, text);                         \
    } while (0)
    BAD(method, (rfx_l1_method)9, "srfe.method");
    BAD(lambda, NAN, "srfe.lambda");
    BAD(eta, -1.0, "srfe.eta");
    BAD(n_folds, 1, "srfe.n_folds: must be >= 2, got 1");
    BAD(widen_rounds, 11, "srfe.widen_rounds: must be at most 10, got 11");
    BAD(n_lambdas, 0, "srfe.n_lambdas");
    BAD(select, RFX_SELECT_NONE, "srfe.select");
    BAD(lambda_min_ratio, 1.0, "srfe.lambda_min_ratio");
    BAD(features.activation, (rfx_activation)99, "features.activation");
    BAD(features.n_threads, -1, "features.n_threads");
    BAD(features.weight_scale, NAN, "features.weight_scale");
    BAD(features.kernel, (rfx_kernel)99, "features.kernel");
#undef BAD
    p = rfx_srfe_params_default();
    p.features.form = RFX_FORM_COS_SIN;
    p.features.activation = RFX_ACTIVATION_COS;
    EXPECT_ERR(rfx_srfe_params_check(&p), RFX_EINVAL, "srfe.features.form");
    /* the data's part */
    p = rfx_srfe_params_default();
    p.features.sparsity = 50;
    p.n_folds = 1000;
    p.select = RFX_SELECT_KFOLD;
    CHECK_OK(rfx_srfe_params_check(&p));
    const size_t m = 20, d = 3;
    double X[20 * 3] = {0}, y[20] = {0};
    rfx_model *mo = NULL;
    EXPECT_ERR(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL),
               RFX_EINVAL, "srfe.n_folds: must be in [2, 20 rows], got 1000");
    /* with GCV the folds are unused, so not checked against the rows */
    p.select = RFX_SELECT_GCV;
    EXPECT_ERR(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL),
               RFX_EINVAL, "features.sparsity");
    p.n_folds = 5;
    EXPECT_ERR(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, NULL),
               RFX_EINVAL, "features.sparsity");
    CHECK(mo == NULL);
    /* the fit's first check: the same message, whatever the data */
    p = rfx_srfe_params_default();
    p.lambda_min_ratio = 0;
    char msg[256];
    CHECK_STATUS(rfx_srfe_params_check(&p), RFX_EINVAL);
    snprintf(msg, sizeof msg, "%s", rfx_last_error());
    CHECK_STATUS(rfx_srfe_fit(&p, rfx_cmat_of(NULL, 0, 0), rfx_cmat_of(NULL, 0, 0), &mo, NULL),
                 RFX_EINVAL);
    CHECK_MSG(strcmp(rfx_last_error(), msg) == 0, "'%s' is not '%s'", rfx_last_error(), msg);
    CHECK(mo == NULL);
    /* four rows, GCV selection: fitted (the default 5 folds are more than
     * the rows, and unused), finite predictions */
    double X4[4 * 2] = {0.1, 0.9, 0.4, 0.2, 0.8, 0.5, 0.3, 0.7}, y4[4] = {1.0, 0.2, 0.7, 0.4}, p4[4];
    p = rfx_srfe_params_default();
    p.features.n_features = 50;
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X4, 4, 2), rfx_cmat_of(y4, 4, 1), &mo, NULL));
    if (mo) {
        CHECK_OK(rfx_model_predict(mo, rfx_cmat_of(X4, 4, 2), rfx_mat_of(p4, 4, 1), rfx_mat_none()));
        for (size_t i = 0; i < 4; i++) CHECK(isfinite(p4[i]));
    }
    rfx_model_free(mo);
}

/* Row weights: a row of weight 0 is the row left out (bit for bit), and
 * integer weights are the rows repeated with lambda scaled by sqrt(m / sum
 * w) (rfx/srfe.h, "Row weights"), for the weighted standardisation, the
 * unit weighted column norms and the weighted lasso together. */
static void test_weights(void)
{
    rfx_test_rng r = {21};
    const size_t m = 80, d = 3, N = 300;
    double *X = rfx_test_matrix(&r, m, d, -1, 1), *y = malloc(m * sizeof *y);
    double *w = malloc(m * sizeof *w), *Xr = malloc(3 * m * d * sizeof *Xr);
    double *yr = malloc(3 * m * sizeof *yr), *Xp = malloc(m * d * sizeof *Xp);
    double *yp = malloc(m * sizeof *yp), *wp = malloc(m * sizeof *wp);
    double pa[20], pb[20];
    size_t mr = 0, mp = 0;
    double W = 0;
    for (size_t i = 0; i < m; i++) {
        y[i] = sin(2 * X[i * d]) + X[i * d + 1] * X[i * d + 2];
        w[i] = (double)(1 + i % 3);
        W += w[i];
        for (int k = 0; k < (int)w[i]; k++, mr++) {
            memcpy(Xr + mr * d, X + i * d, d * sizeof *X);
            yr[mr] = y[i];
        }
    }
    rfx_srfe_params p = rfx_srfe_params_default();
    p.features.n_features = N;
    p.features.weight_scale = 1.0;
    p.features.sparsity = 2;
    p.features.seed = 4;
    p.lambda = 1e-3;
    p.sample_weight = w;
    rfx_model *a = NULL, *b = NULL;
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &a, NULL));
    rfx_srfe_params q = p;
    q.sample_weight = NULL;
    q.lambda = p.lambda * sqrt((double)m / W);
    CHECK_OK(rfx_srfe_fit(&q, rfx_cmat_of(Xr, mr, d), rfx_cmat_of(yr, mr, 1), &b, NULL));
    CHECK_OK(rfx_model_predict(a, rfx_cmat_of(X, 20, d), rfx_mat_of(pa, 20, 1), rfx_mat_none()));
    CHECK_OK(rfx_model_predict(b, rfx_cmat_of(X, 20, d), rfx_mat_of(pb, 20, 1), rfx_mat_none()));
    for (size_t i = 0; i < 20; i++) CHECK_NEAR(pa[i], pb[i], 1e-8);
    rfx_model_free(a);
    rfx_model_free(b);
    /* weight 0: left out, bit for bit (k-fold selection: the folds count
     * the rows of positive weight) */
    for (size_t i = 0; i < m; i++) {
        w[i] = i % 5 == 2 ? 0.0 : 0.5 + (double)(i % 4);
        if (w[i] > 0) {
            memcpy(Xp + mp * d, X + i * d, d * sizeof *X);
            yp[mp] = y[i];
            wp[mp++] = w[i];
        }
    }
    p = rfx_srfe_params_default();
    p.features.n_features = N;
    p.features.seed = 4;
    p.select = RFX_SELECT_KFOLD;
    p.sample_weight = w;
    a = b = NULL;
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &a, NULL));
    p.sample_weight = wp;
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(Xp, mp, d), rfx_cmat_of(yp, mp, 1), &b, NULL));
    CHECK_OK(rfx_model_predict(a, rfx_cmat_of(X, 20, d), rfx_mat_of(pa, 20, 1), rfx_mat_none()));
    CHECK_OK(rfx_model_predict(b, rfx_cmat_of(X, 20, d), rfx_mat_of(pb, 20, 1), rfx_mat_none()));
    CHECK(memcmp(pa, pb, sizeof pa) == 0);
    rfx_model_free(a);
    rfx_model_free(b);
    free(X);
    free(y);
    free(w);
    free(Xr);
    free(yr);
    free(Xp);
    free(yp);
    free(wp);
}

int main(void)
{
    test_weights();
    test_recovery();
    test_defaults();
    test_selection();
    test_widening();
    test_params_check();
    return rfx_test_finish("test_srfe");
}
