/* SPDX-License-Identifier: BSD-3-Clause */
/* The automatic surrogate: its cross-validated errors against an explicit
 * k-fold comparison written here with the methods' own calls on the same
 * folds, the choice (with and without racing), the final model against a
 * direct fit of the chosen candidate (srfe and harfe: from the first
 * fold's choice), determinism over runs and threads,
 * the transforms y <= 0 rules out, the budget, and the error paths. */
#include "internal.h" /* rfx__pce_set_span_rows: the span of a fold's fit */
#include "rfx.h"
#include "testlib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NR 90
#define DD 2
#define K 3

static double X[NR * DD], Y[NR];

/* y = exp(sin(pi x0) + x1^2 / 2) on [-1, 1]^2: positive, additive in log y */
static void make_data(void)
{
    rfx_test_rng r = {77};
    for (size_t i = 0; i < NR; i++) {
        X[i * DD] = 2 * rfx_test_uniform(&r) - 1;
        X[i * DD + 1] = 2 * rfx_test_uniform(&r) - 1;
        Y[i] = exp(sin(3.141592653589793 * X[i * DD]) + 0.5 * X[i * DD + 1] * X[i * DD + 1]);
    }
}

/* One candidate fitted as rfx_auto_fit documents it: the method's defaults
 * with the seed, PCE by LARS on the automatic basis with inputs uniform on
 * the range of all rows. */
static rfx_status fit_one(rfx_method method, rfx_target_transform t, const double *Xtr,
                          const double *ytr, size_t m, rfx_model **out)
{
    double *z = malloc(m * sizeof *z), lambda = 0;
    rfx_status st = RFX_OK;
    if (t == RFX_TARGET_BOXCOX) st = rfx_target_boxcox_lambda(ytr, m, &lambda);
    if (!st) st = rfx_target_forward(t, lambda, ytr, m, z);
    rfx_cmat Xm = rfx_cmat_of(Xtr, m, DD), Z = rfx_cmat_of(z, m, 1);
    if (!st && (method == RFX_METHOD_BAYES || method == RFX_METHOD_RIDGE)) {
        rfx_fit_params fp = rfx_fit_params_default();
        fp.method = method;
        st = rfx_model_fit(&fp, Xm, Z, out, NULL);
    } else if (!st && (method == RFX_METHOD_SRFE || method == RFX_METHOD_HARFE)) {
        rfx_srfe_params sp = rfx_srfe_params_default();
        if (method == RFX_METHOD_HARFE) sp.method = RFX_L1_METHOD_HTP;
        st = rfx_srfe_fit(&sp, Xm, Z, out, NULL);
    } else if (!st) {
        rfx_marginal mg[DD];
        for (size_t j = 0; j < DD; j++) {
            double lo = INFINITY, hi = -INFINITY;
            for (size_t i = 0; i < NR; i++) {
                lo = fmin(lo, X[i * DD + j]);
                hi = fmax(hi, X[i * DD + j]);
            }
            mg[j] = rfx_marginal_uniform(lo, hi);
        }
        rfx_pce_params pp = rfx_pce_params_default();
        pp.marginals = mg;
        pp.method = RFX_PCE_METHOD_LARS;
        pp.auto_basis = 1;
        pp.degree_min = 1;
        rfx_pce *pce = NULL;
        st = rfx_pce_fit(&pp, Xm, z, &pce);
        if (!st) st = rfx_model_from_pce(pce, out);
        rfx_pce_free(pce);
    }
    if (!st) st = rfx_model_set_target_transform(*out, t, lambda);
    free(z);
    return st;
}

/* Rows i of (X, y) (n x DD, n) with i mod k == f into (Xte, yte), *b of
 * them, the others into (Xtr, ytr), *a of them: fold f of k. */
static void split_fold(const double *Xs, const double *ys, size_t n, size_t k, size_t f,
                       double *Xtr, double *ytr, size_t *a, double *Xte, double *yte, size_t *b)
{
    *a = *b = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % k == f) {
            memcpy(Xte + *b * DD, Xs + i * DD, DD * sizeof *Xs);
            yte[(*b)++] = ys[i];
        } else {
            memcpy(Xtr + *a * DD, Xs + i * DD, DD * sizeof *Xs);
            ytr[(*a)++] = ys[i];
        }
    }
}

/* The explicit k-fold error of a candidate on folds i mod K. */
static double explicit_cv(rfx_method method, rfx_target_transform t)
{
    double Xtr[NR * DD], ytr[NR], Xte[NR * DD], yte[NR], pred[NR];
    double ybar = 0, sse = 0, sst = 0;
    for (size_t i = 0; i < NR; i++) ybar += Y[i] / NR;
    for (size_t i = 0; i < NR; i++) sst += (Y[i] - ybar) * (Y[i] - ybar);
    for (size_t f = 0; f < K; f++) {
        size_t a, b;
        split_fold(X, Y, NR, K, f, Xtr, ytr, &a, Xte, yte, &b);
        rfx_model *m = NULL;
        CHECK_OK(fit_one(method, t, Xtr, ytr, a, &m));
        if (!m) return NAN;
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(Xte, b, DD), rfx_mat_of(pred, b, 1),
                                   rfx_mat_none()));
        for (size_t i = 0; i < b; i++) sse += (pred[i] - yte[i]) * (pred[i] - yte[i]);
        rfx_model_free(m);
    }
    return sqrt(sse / sst);
}

static size_t FOLDS[NR];

static rfx_auto_params small_params(void)
{
    rfx_auto_params p = rfx_auto_params_default();
    p.methods = RFX_AUTO_METHOD(RFX_METHOD_RIDGE) | RFX_AUTO_METHOD(RFX_METHOD_HARFE) |
                RFX_AUTO_METHOD(RFX_METHOD_PCE);
    p.transforms = RFX_AUTO_TRANSFORM(RFX_TARGET_NONE) | RFX_AUTO_TRANSFORM(RFX_TARGET_LOG);
    p.n_folds = K;
    for (size_t i = 0; i < NR; i++) FOLDS[i] = i % K;
    p.folds = FOLDS;
    return p;
}

static void test_against_explicit_cv(void)
{
    rfx_auto_params p = small_params();
    p.race_factor = INFINITY;
    rfx_auto_report rep;
    rfx_model *m = NULL;
    CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), Y, &m, &rep));
    if (!m) return;
    CHECK(rep.n_candidates == 6 && rep.compared_folds == K);
    size_t best = 0;
    double best_err = INFINITY;
    for (size_t j = 0; j < rep.n_candidates; j++) {
        const rfx_auto_candidate *c = &rep.candidates[j];
        CHECK(c->outcome == RFX_AUTO_RAN_ALL && c->folds == K && c->status == RFX_OK);
        const double e = explicit_cv(c->method, c->transform);
        CHECK_NEAR(c->cv_error, e, 1e-12 * e);
        if (e < best_err) {
            best_err = e;
            best = j;
        }
    }
    CHECK(rep.chosen == best);
    /* the final model is the chosen candidate fitted on all rows */
    rfx_model *direct = NULL;
    const rfx_auto_candidate *w = &rep.candidates[rep.chosen];
    CHECK_OK(fit_one(w->method, w->transform, X, Y, NR, &direct));
    if (direct) {
        double a[NR], b[NR];
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, NR, DD), rfx_mat_of(a, NR, 1),
                                   rfx_mat_none()));
        CHECK_OK(rfx_model_predict(direct, rfx_cmat_of(X, NR, DD), rfx_mat_of(b, NR, 1),
                                   rfx_mat_none()));
        CHECK(memcmp(a, b, sizeof a) == 0);
        rfx_model_free(direct);
    }
    /* the log is the better transform for this function */
    CHECK(w->transform == RFX_TARGET_LOG);
    /* racing picks the same, with fewer fits */
    rfx_auto_report raced;
    rfx_model *m2 = NULL;
    p.race_factor = 1.5;
    CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), Y, &m2, &raced));
    CHECK(raced.chosen == rep.chosen);
    size_t fits = 0;
    for (size_t j = 0; j < raced.n_candidates; j++) fits += raced.candidates[j].folds;
    CHECK(fits < rep.n_candidates * K);
    rfx_model_free(m2);
    rfx_model_free(m);
}

/* srfe and harfe chosen: the final model is not a new search on all rows
 * but starts from the first fold's choice - its q, and the full map at its
 * weight scale s and at 1.5 s, the latter kept unless its GCV score is
 * worse. Replayed here with the methods' own calls, for each on its own. */
static void test_final_from_first_fold(void)
{
    const rfx_method methods[2] = {RFX_METHOD_SRFE, RFX_METHOD_HARFE};
    for (int k = 0; k < 2; k++) {
        rfx_auto_params p = small_params();
        p.methods = RFX_AUTO_METHOD(methods[k]);
        p.transforms = RFX_AUTO_TRANSFORM(RFX_TARGET_LOG);
        rfx_auto_report rep;
        rfx_model *m = NULL;
        CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), Y, &m, &rep));
        if (!m) return;
        CHECK(rep.n_candidates == 1 && rep.chosen == 0 &&
              rep.candidates[0].method == methods[k]);
        /* the first fold's fit, as the cross-validation made it */
        double Xtr[NR * DD], ytr[NR], Xte[NR * DD], yte[NR], z[NR], a[NR], b[NR];
        size_t na, nb;
        split_fold(X, Y, NR, K, 0, Xtr, ytr, &na, Xte, yte, &nb);
        for (size_t i = 0; i < na; i++) z[i] = log(ytr[i]);
        rfx_srfe_params sp = rfx_srfe_params_default();
        if (methods[k] == RFX_METHOD_HARFE) sp.method = RFX_L1_METHOD_HTP;
        rfx_srfe_report fold0, full[2];
        rfx_model *f0 = NULL, *fm[2] = {NULL, NULL};
        CHECK_OK(rfx_srfe_fit(&sp, rfx_cmat_of(Xtr, na, DD), rfx_cmat_of(z, na, 1), &f0, &fold0));
        rfx_model_free(f0);
        /* all rows at its q, its scale and 1.5 times it */
        for (size_t i = 0; i < NR; i++) z[i] = log(Y[i]);
        for (int u = 0; u < 2; u++) {
            rfx_srfe_params q = sp;
            q.features.sparsity = fold0.sparsity;
            q.features.weight_scale = fold0.weight_scale * (u ? 1.5 : 1.0);
            CHECK_OK(rfx_srfe_fit(&q, rfx_cmat_of(X, NR, DD), rfx_cmat_of(z, NR, 1), &fm[u],
                                  &full[u]));
        }
        const int u = full[1].cv_mse > full[0].cv_mse ? 0 : 1;
        if (fm[u]) {
            CHECK_OK(rfx_model_set_target_transform(fm[u], RFX_TARGET_LOG, 0));
            CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, NR, DD), rfx_mat_of(a, NR, 1),
                                       rfx_mat_none()));
            CHECK_OK(rfx_model_predict(fm[u], rfx_cmat_of(X, NR, DD), rfx_mat_of(b, NR, 1),
                                       rfx_mat_none()));
            printf("%s: first fold's scale %g, q %zu; all rows: GCV %.4g at %g, %.4g at %g\n",
                   k ? "harfe" : "srfe", fold0.weight_scale, fold0.sparsity, full[0].cv_mse,
                   fold0.weight_scale, full[1].cv_mse, 1.5 * fold0.weight_scale);
            CHECK(memcmp(a, b, sizeof a) == 0);
        }
        rfx_model_free(fm[0]);
        rfx_model_free(fm[1]);
        rfx_model_free(m);
    }
}

static void test_determinism(void)
{
    rfx_auto_params p = small_params();
    p.folds = NULL; /* seeded folds */
    p.seed = 5;
    double pred[2][NR];
    rfx_auto_report rep[2];
    for (int run = 0; run < 2; run++) {
        p.n_threads = run + 1;
        rfx_model *m = NULL;
        CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), Y, &m, &rep[run]));
        if (!m) return;
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, NR, DD), rfx_mat_of(pred[run], NR, 1),
                                   rfx_mat_none()));
        rfx_model_free(m);
    }
    CHECK(memcmp(pred[0], pred[1], sizeof pred[0]) == 0);
    CHECK(rep[0].chosen == rep[1].chosen && rep[0].n_candidates == rep[1].n_candidates);
    for (size_t j = 0; j < rep[0].n_candidates; j++)
        CHECK(rep[0].candidates[j].cv_error == rep[1].candidates[j].cv_error ||
              (isnan(rep[0].candidates[j].cv_error) && isnan(rep[1].candidates[j].cv_error)));
    /* the choice alone (out NULL): the same comparison, no final fit */
    rfx_auto_report only;
    CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), Y, NULL, &only));
    CHECK(only.chosen == rep[0].chosen && only.n_candidates == rep[0].n_candidates &&
          only.seconds_final == 0.0);
    for (size_t j = 0; j < only.n_candidates; j++)
        CHECK(memcmp(&only.candidates[j].cv_error, &rep[0].candidates[j].cv_error,
                     sizeof(double)) == 0);
    CHECK_STATUS(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), Y, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "out and report are both NULL") != NULL);
}

static void test_candidates(void)
{
    /* y <= 0: no log, no Box-Cox */
    double yz[NR];
    for (size_t i = 0; i < NR; i++) yz[i] = log(Y[i]);
    rfx_auto_params p = small_params();
    p.transforms = 0;
    rfx_auto_report rep;
    rfx_model *m = NULL;
    CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), yz, &m, &rep));
    CHECK(rep.n_candidates == 3);
    for (size_t j = 0; j < rep.n_candidates; j++)
        CHECK(rep.candidates[j].transform == RFX_TARGET_NONE);
    rfx_model_free(m);
    m = NULL;
    /* only the log asked for, with values <= 0: refused by name */
    p.transforms = RFX_AUTO_TRANSFORM(RFX_TARGET_LOG);
    CHECK_STATUS(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), yz, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "auto.transforms") != NULL && m == NULL);
    /* Box-Cox asked for: a candidate with the lambda of all rows */
    p.transforms = RFX_AUTO_TRANSFORM(RFX_TARGET_BOXCOX);
    CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), Y, &m, &rep));
    double lam = NAN;
    CHECK_OK(rfx_target_boxcox_lambda(Y, NR, &lam));
    CHECK(rep.n_candidates == 3 && rep.candidates[0].lambda == lam);
    rfx_model_info info;
    if (m) {
        CHECK_OK(rfx_model_get_info(m, &info));
        CHECK(info.target_transform == RFX_TARGET_BOXCOX && info.target_lambda == lam);
    }
    rfx_model_free(m);
    m = NULL;
    /* a budget too small for a second fit: the first candidate alone */
    p = small_params();
    p.budget = 1e-9;
    CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), Y, &m, &rep));
    CHECK(rep.chosen == 0 && rep.candidates[0].folds == 1);
    for (size_t j = 1; j < rep.n_candidates; j++)
        CHECK(rep.candidates[j].outcome == RFX_AUTO_BUDGET && rep.candidates[j].folds == 0);
    rfx_model_free(m);
}

/* Row weights: weight 0 is the row left out (given folds lose it too),
 * bit for bit, through every candidate's weighted fit and the weighted
 * score; equal weights are no weights. */
static void test_weights(void)
{
    rfx_auto_params p = small_params();
    p.race_factor = INFINITY;
    static double w[NR], Xp[NR * DD], yp[NR], wp[NR];
    static size_t fp[NR];
    size_t np = 0;
    for (size_t i = 0; i < NR; i++) {
        w[i] = i % 7 == 3 ? 0.0 : 0.5 + (double)(i % 3);
        if (w[i] > 0) {
            memcpy(Xp + np * DD, X + i * DD, DD * sizeof *X);
            yp[np] = Y[i];
            wp[np] = w[i];
            fp[np++] = FOLDS[i];
        }
    }
    rfx_auto_report ra, rb;
    rfx_model *a = NULL, *b = NULL;
    p.sample_weight = w;
    CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), Y, &a, &ra));
    rfx_auto_params q = p;
    q.sample_weight = wp;
    q.folds = fp;
    CHECK_OK(rfx_auto_fit(&q, rfx_cmat_of(Xp, np, DD), yp, &b, &rb));
    CHECK(ra.chosen == rb.chosen && ra.n_candidates == rb.n_candidates);
    for (size_t j = 0; j < ra.n_candidates; j++)
        CHECK(memcmp(&ra.candidates[j].cv_error, &rb.candidates[j].cv_error, sizeof(double)) ==
              0);
    double pa[10], pb[10];
    CHECK_OK(rfx_model_predict(a, rfx_cmat_of(X, 10, DD), rfx_mat_of(pa, 10, 1), rfx_mat_none()));
    CHECK_OK(rfx_model_predict(b, rfx_cmat_of(X, 10, DD), rfx_mat_of(pb, 10, 1), rfx_mat_none()));
    CHECK(memcmp(pa, pb, sizeof pa) == 0);
    rfx_model_free(a);
    rfx_model_free(b);
    /* equal weights: no weights */
    for (size_t i = 0; i < NR; i++) w[i] = 2.5;
    a = b = NULL;
    CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), Y, &a, &ra));
    p.sample_weight = NULL;
    CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(X, NR, DD), Y, &b, &rb));
    CHECK_OK(rfx_model_predict(a, rfx_cmat_of(X, 10, DD), rfx_mat_of(pa, 10, 1), rfx_mat_none()));
    CHECK_OK(rfx_model_predict(b, rfx_cmat_of(X, 10, DD), rfx_mat_of(pb, 10, 1), rfx_mat_none()));
    CHECK(memcmp(pa, pb, sizeof pa) == 0);
    rfx_model_free(a);
    rfx_model_free(b);
}

static void test_errors(void)
{
    rfx_auto_params p = small_params();
    rfx_model *m = NULL;
    rfx_cmat Xm = rfx_cmat_of(X, NR, DD);
    double sw[NR];
    for (size_t i = 0; i < NR; i++) sw[i] = 1.0;
    sw[9] = -2.0;
    p.sample_weight = sw;
    CHECK_STATUS(rfx_auto_fit(&p, Xm, Y, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "auto.sample_weight[9]") != NULL && m == NULL);
    for (size_t i = 0; i < NR; i++) sw[i] = i < 3 ? 1.0 : 0.0; /* 3 rows: fewer than 2 per fold */
    CHECK_STATUS(rfx_auto_fit(&p, Xm, Y, &m, NULL), RFX_EDIM);
    CHECK(m == NULL);
    p = small_params();
    p.n_folds = 1;
    CHECK_STATUS(rfx_auto_params_check(&p), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "auto.n_folds") != NULL);
    p = small_params();
    p.race_factor = 1.0;
    CHECK_STATUS(rfx_auto_fit(&p, Xm, Y, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "auto.race_factor") != NULL);
    p = small_params();
    p.budget = -1;
    CHECK_STATUS(rfx_auto_params_check(&p), RFX_EINVAL);
    p = small_params();
    p.methods |= RFX_AUTO_METHOD(RFX_METHOD_CLASSIFY);
    CHECK_STATUS(rfx_auto_params_check(&p), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "auto.methods") != NULL);
    p = small_params();
    p.transforms = 1u << 5;
    CHECK_STATUS(rfx_auto_params_check(&p), RFX_EINVAL);
    CHECK_STATUS(rfx_auto_params_check(NULL), RFX_EINVAL);
    /* folds out of range, or a fold that holds nothing */
    p = small_params();
    size_t bad[NR];
    for (size_t i = 0; i < NR; i++) bad[i] = i % K;
    bad[4] = K;
    p.folds = bad;
    CHECK_STATUS(rfx_auto_fit(&p, Xm, Y, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "row 4") != NULL);
    for (size_t i = 0; i < NR; i++) bad[i] = i % 2;
    CHECK_STATUS(rfx_auto_fit(&p, Xm, Y, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "fold 2 holds 0") != NULL);
    /* data */
    p = small_params();
    p.folds = NULL;
    CHECK_STATUS(rfx_auto_fit(&p, rfx_cmat_of(X, 5, DD), Y, &m, NULL), RFX_EDIM);
    double yn[NR];
    memcpy(yn, Y, sizeof yn);
    yn[7] = NAN;
    CHECK_STATUS(rfx_auto_fit(&p, Xm, yn, &m, NULL), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "row 7") != NULL);
    CHECK_STATUS(rfx_auto_fit(&p, Xm, NULL, &m, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_auto_fit(&p, Xm, Y, NULL, NULL), RFX_EINVAL);
    CHECK(m == NULL);
}

/* The default methods: projected joins (on the target as it is) from 9
 * inputs on; and the candidates of a round fitted side by side on two
 * threads give the report of the fits one after another on one thread,
 * bit for bit. */
static void test_default_candidates(void)
{
    enum { N9 = 60 };
    double X9[N9 * 9], y9[N9];
    for (size_t i = 0; i < N9; i++) {
        for (size_t j = 0; j < 9; j++) X9[i * 9 + j] = X[(i * 9 + j) % (NR * DD)];
        y9[i] = Y[i];
    }
    for (size_t d = 8; d <= 9; d++) {
        rfx_auto_params p = rfx_auto_params_default();
        p.transforms = RFX_AUTO_TRANSFORM(RFX_TARGET_NONE);
        p.n_folds = 2;
        p.race_factor = INFINITY;
        rfx_auto_report r1, r2;
        p.n_threads = 1;
        CHECK_OK(rfx_auto_fit(&p, (rfx_cmat){X9, N9, d, 9}, y9, NULL, &r1));
        p.n_threads = 2;
        CHECK_OK(rfx_auto_fit(&p, (rfx_cmat){X9, N9, d, 9}, y9, NULL, &r2));
        size_t proj = 0;
        for (size_t j = 0; j < r1.n_candidates; j++) {
            proj += r1.candidates[j].method == RFX_METHOD_PROJECTED;
            CHECK(r1.candidates[j].method == r2.candidates[j].method);
            CHECK_MSG(memcmp(&r1.candidates[j].cv_error, &r2.candidates[j].cv_error,
                             sizeof(double)) == 0,
                      "d = %zu, candidate %zu: %.17g on one thread, %.17g on two", d, j,
                      r1.candidates[j].cv_error, r2.candidates[j].cv_error);
        }
        printf("  d = %zu: %zu default candidates, projected %zu; one thread and two agree\n", d,
               r1.n_candidates, proj);
        CHECK(r1.n_candidates == (d >= 9 ? 5u : 4u) && r2.n_candidates == r1.n_candidates);
        CHECK(proj == (d >= 9));
        CHECK(r1.chosen == r2.chosen);
    }
    /* projected is tried only when the others' best first-fold relative
     * error exceeds 0.1: not for a smooth target they fit, yes for one
     * that is noise to them */
    double yl[N9], yn[N9];
    uint64_t s = 99;
    for (size_t i = 0; i < N9; i++) {
        yl[i] = 0.0;
        for (size_t j = 0; j < 9; j++) yl[i] += (double)(j + 1) * X9[i * 9 + j];
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        yn[i] = (double)(s >> 11) / 9007199254740992.0;
    }
    for (int noise = 0; noise < 2; noise++) {
        rfx_auto_params p = rfx_auto_params_default();
        p.transforms = RFX_AUTO_TRANSFORM(RFX_TARGET_NONE);
        p.n_folds = 2;
        p.race_factor = INFINITY;
        p.n_threads = 1;
        rfx_auto_report r;
        CHECK_OK(rfx_auto_fit(&p, (rfx_cmat){X9, N9, 9, 9}, noise ? yn : yl, NULL, &r));
        double best0 = INFINITY;
        const rfx_auto_candidate *pj = NULL;
        for (size_t j = 0; j < r.n_candidates; j++) {
            if (r.candidates[j].method == RFX_METHOD_PROJECTED) pj = &r.candidates[j];
            else best0 = fmin(best0, r.candidates[j].cv_error);
        }
        CHECK(pj != NULL);
        if (!pj) continue;
        printf("  %s target: the others' best CV error %.3g; projected %s (%zu folds)\n",
               noise ? "noise" : "linear", best0,
               pj->outcome == RFX_AUTO_NOT_NEEDED ? "not needed" : "tried", pj->folds);
        if (noise) CHECK(best0 > 0.1 && pj->folds == 2 && pj->outcome == RFX_AUTO_RAN_ALL);
        else CHECK(best0 < 0.1 && pj->folds == 0 && pj->outcome == RFX_AUTO_NOT_NEEDED);
    }
}

/* PCE candidates on an input far from uniform (x1 lognormal, log x1 ~
 * N(1, 0.8^2)): the marginals are those rfx_pce_fit keeps from all rows
 * on y (here x1 lognormal: its fit has the lower corrected LOO error),
 * each fold's PCE is fitted on them and continued beyond its training
 * rows' range; the CV error equals that explicit comparison and the final
 * model is that PCE on all rows. */
static void test_pce_marginals(void)
{
    enum { N = 120, F = 4 };
    double Xl[N * DD], yl[N], Xtr[N * DD], ytr[N], Xte[N * DD], pred[N], yte[N];
    size_t folds[N];
    rfx_test_rng r = {5};
    for (size_t i = 0; i < N; i++) {
        Xl[i * DD] = 2 * rfx_test_uniform(&r) - 1;
        Xl[i * DD + 1] = exp(1.0 + 0.8 * rfx_test_normal(&r));
        const double l = log(Xl[i * DD + 1]);
        yl[i] = sin(2 * Xl[i * DD]) + l + 0.3 * l * l * Xl[i * DD];
        folds[i] = i % F;
    }
    rfx_pce_params pp = rfx_pce_params_default();
    pp.marginals_from_data = 1;
    pp.method = RFX_PCE_METHOD_LARS;
    pp.auto_basis = 1;
    pp.degree_min = 1;
    rfx_pce *all = NULL;
    CHECK_OK(rfx_pce_fit(&pp, rfx_cmat_of(Xl, N, DD), yl, &all));
    if (!all) return;
    rfx_marginal mg[DD];
    for (size_t j = 0; j < DD; j++) mg[j] = rfx_pce_marginals(all)[j];
    CHECK(mg[0].kind == RFX_MARGINAL_UNIFORM && mg[1].kind == RFX_MARGINAL_LOGNORMAL);
    rfx_pce_free(all);
    /* the explicit comparison on the same folds */
    double ybar = 0, sse = 0, sst = 0;
    for (size_t i = 0; i < N; i++) ybar += yl[i] / N;
    for (size_t i = 0; i < N; i++) sst += (yl[i] - ybar) * (yl[i] - ybar);
    pp.marginals_from_data = 0;
    pp.marginals = mg;
    int continued = 0;
    for (size_t f = 0; f < F; f++) {
        size_t a, b;
        split_fold(Xl, yl, N, F, f, Xtr, ytr, &a, Xte, yte, &b);
        rfx_pce *pce = NULL;
        CHECK_OK(rfx_pce_fit(&pp, rfx_cmat_of(Xtr, a, DD), ytr, &pce));
        if (!pce) return;
        CHECK_OK(rfx__pce_set_span_rows(pce, rfx_cmat_of(Xtr, a, DD)));
        const double *span = rfx__pce_span(pce);
        for (size_t i = 0; i < b; i++)
            continued |= Xte[i * DD + 1] > span[DD + 1] || Xte[i * DD + 1] < span[1];
        CHECK_OK(rfx_pce_predict(pce, rfx_cmat_of(Xte, b, DD), pred));
        for (size_t i = 0; i < b; i++) sse += (pred[i] - yte[i]) * (pred[i] - yte[i]);
        rfx_pce_free(pce);
    }
    CHECK(continued); /* some held-out x1 lies beyond its fold's training range */
    const double e = sqrt(sse / sst);
    rfx_auto_params p = rfx_auto_params_default();
    p.methods = RFX_AUTO_METHOD(RFX_METHOD_PCE) | RFX_AUTO_METHOD(RFX_METHOD_HARFE);
    p.transforms = RFX_AUTO_TRANSFORM(RFX_TARGET_NONE);
    p.n_folds = F;
    p.folds = folds;
    p.race_factor = INFINITY;
    rfx_auto_report rep;
    rfx_model *m = NULL;
    CHECK_OK(rfx_auto_fit(&p, rfx_cmat_of(Xl, N, DD), yl, &m, &rep));
    if (!m) return;
    CHECK(rep.n_candidates == 2);
    const rfx_auto_candidate *c = NULL;
    for (size_t j = 0; j < rep.n_candidates; j++)
        if (rep.candidates[j].method == RFX_METHOD_PCE) c = &rep.candidates[j];
    CHECK(c != NULL && rep.candidates[rep.chosen].method == RFX_METHOD_PCE);
    if (!c) return;
    CHECK(c->folds == F);
    CHECK_NEAR(c->cv_error, e, 1e-12 * e);
    printf("auto, pce on a lognormal input: CV error %.4g (explicit %.4g)\n", c->cv_error, e);
    const rfx_pce *fin = rfx_model_pce(m);
    CHECK(fin != NULL);
    if (fin) {
        const rfx_marginal *fm = rfx_pce_marginals(fin);
        for (size_t j = 0; j < DD; j++)
            CHECK(fm[j].kind == mg[j].kind && fm[j].a == mg[j].a && fm[j].b == mg[j].b);
        CHECK(rfx__pce_span(fin) != NULL);
    }
    rfx_model_free(m);
}

int main(void)
{
    make_data();
    RFX_TEST_RUN(test_against_explicit_cv);
    RFX_TEST_RUN(test_final_from_first_fold);
    RFX_TEST_RUN(test_determinism);
    RFX_TEST_RUN(test_candidates);
    RFX_TEST_RUN(test_default_candidates);
    RFX_TEST_RUN(test_weights);
    RFX_TEST_RUN(test_errors);
    RFX_TEST_RUN(test_pce_marginals);
    return rfx_test_finish("test_auto");
}
