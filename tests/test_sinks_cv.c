/* SPDX-License-Identifier: BSD-3-Clause */
/* Kitchen sinks with the box chosen by cross-validation, and the kitchen
 * sinks classifier (rfx/sinks.h):
 *  - the held-out losses of the grid equal those of explicit fold fits
 *    made here by the documented rule (folds by position in the seeded
 *    order of the rows' contents, boxes 4^g times the targets' range and
 *    no box), the chosen
 *    box is their least, and the fit equals rfx_sinks_fit at that box;
 *  - the classifier's decision values equal rfx_sinks_fit on the +-1
 *    targets of each column (two classes: one column; three: one-vs-rest),
 *    its labels are the decisions' argmax, its probabilities the OvR
 *    sigmoids normalised, and its model file round-trips;
 *  - the error paths. */
#include "internal.h"
#include "rfx/sinks.h"
#include "testlib.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* X ~ U(-1, 1)^d and v = sin(2 x0) + 0.5 x1 x2 (d > 2) + 0.1 noise. */
static void make_data(unsigned long long seed, size_t n, size_t d, double **X, double **v)
{
    rfx_test_rng r = {seed};
    *X = rfx_test_matrix(&r, n, d, -1.0, 1.0);
    *v = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        const double *x = *X + i * d;
        (*v)[i] = sin(2.0 * x[0]) + (d > 2 ? 0.5 * x[1] * x[2] : 0.0) + 0.1 * rfx_test_normal(&r);
    }
}

static rfx_features *make_map(size_t d, size_t K, uint64_t seed)
{
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = K;
    fp.seed = seed;
    fp.length_scale = 0.7;
    fp.n_threads = 1;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&fp, d, &f));
    return f;
}

/* The mean held-out loss of box C over the documented folds, for K target
 * columns Y (column k at Y + k n), summed over the columns. */
static double cv_reference(const rfx_features *f, const double *X, size_t n, size_t d,
                           const double *Y, size_t K, const rfx_sinks_params *base, double C)
{
    size_t *perm = malloc(n * sizeof *perm);
    double *Xt = malloc(n * d * sizeof *Xt), *yt = malloc(n * sizeof *yt);
    CHECK_OK(rfx__rows_order(rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), NULL,
                             rfx_features_get_params(f).seed, 0x73696e6bULL, perm));
    double sum = 0;
    for (size_t fold = 0; fold < RFX_SINKS_CV_FOLDS; fold++)
        for (size_t k = 0; k < K; k++) {
            size_t nt = 0;
            for (size_t i = 0; i < n; i++)
                if (i % RFX_SINKS_CV_FOLDS != fold) {
                    memcpy(Xt + nt * d, X + perm[i] * d, d * sizeof *Xt);
                    yt[nt++] = Y[k * n + perm[i]];
                }
            rfx_sinks_params p = *base;
            const rfx_sinks_loss loss = p.loss;
            p.C = C;
            rfx_model *m = NULL;
            CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(Xt, nt, d), yt, &p, &m, NULL));
            for (size_t i = 0; i < n && m; i++) {
                if (i % RFX_SINKS_CV_FOLDS != fold) continue;
                double s, y = Y[k * n + perm[i]];
                CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X + perm[i] * d, 1, d),
                                           rfx_mat_of(&s, 1, 1), rfx_mat_none()));
                if (loss == RFX_SINKS_LOSS_SQUARED) sum += (s - y) * (s - y);
                else if (loss == RFX_SINKS_LOSS_LOGISTIC) sum += log1p(exp(-y * s));
                else sum += 0.5 * pow(fmax(0.0, 1.0 - y * s), 2);
            }
            rfx_model_free(m);
        }
    free(perm);
    free(Xt);
    free(yt);
    return sum / (double)n;
}

/* The box's grid, its losses against the reference, the choice, and the fit. */
static void check_cv(const rfx_sinks_report *rep, const rfx_features *f, const double *X,
                     size_t n, size_t d, const double *Y, size_t K,
                     const rfx_sinks_params *base, double range)
{
    CHECK(rep->n_cv == RFX_SINKS_CV_GRID);
    size_t best = 0;
    double worst = 0;
    for (size_t g = 0; g < RFX_SINKS_CV_GRID; g++) {
        double want = g + 1 < RFX_SINKS_CV_GRID ? range * pow(4.0, (double)g) : INFINITY;
        CHECK(rep->cv_C[g] == want);
        double ref = cv_reference(f, X, n, d, Y, K, base, rep->cv_C[g]);
        worst = fmax(worst, fabs(rep->cv_loss[g] - ref) / ref);
        if (rep->cv_loss[g] < rep->cv_loss[best]) best = g;
    }
    printf("  cross-validated losses against explicit fold fits: max relative diff %.2e; "
           "chosen C = %g\n", worst, rep->C);
    CHECK(worst < 1e-10);
    CHECK(rep->C == rep->cv_C[best]);
}

static void test_regression_cv(void)
{
    const size_t n = 60, d = 3, K = 16;
    double *X, *y;
    make_data(11, n, d, &X, &y);
    rfx_features *f = make_map(d, K, 7);
    rfx_sinks_params p = rfx_sinks_params_default();
    CHECK(p.C == 0);
    p.n_threads = 1;
    rfx_sinks_report rep;
    rfx_model *m = NULL, *m2 = NULL;
    CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, &rep));
    double lo = y[0], hi = y[0];
    for (size_t i = 1; i < n; i++) {
        lo = fmin(lo, y[i]);
        hi = fmax(hi, y[i]);
    }
    check_cv(&rep, f, X, n, d, y, 1, &p, hi - lo);
    /* the fit at the chosen box, given */
    rfx_sinks_params q = p;
    q.C = rep.C;
    rfx_sinks_report rep2;
    CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, n, d), y, &q, &m2, &rep2));
    CHECK(rep2.n_cv == 0 && rep2.C == rep.C);
    double a[60], b[60];
    CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(a, n, 1), rfx_mat_none()));
    CHECK_OK(rfx_model_predict(m2, rfx_cmat_of(X, n, d), rfx_mat_of(b, n, 1), rfx_mat_none()));
    CHECK(memcmp(a, b, sizeof a) == 0);
    /* the folds follow the rows' contents: the rows reversed give the same
     * table, bit for bit */
    double *Xr = malloc(n * d * sizeof *Xr), *yr = malloc(n * sizeof *yr);
    for (size_t i = 0; i < n; i++) {
        memcpy(Xr + i * d, X + (n - 1 - i) * d, d * sizeof *Xr);
        yr[i] = y[n - 1 - i];
    }
    rfx_sinks_report rep3;
    rfx_model *m3 = NULL;
    CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(Xr, n, d), yr, &p, &m3, &rep3));
    CHECK(memcmp(rep3.cv_loss, rep.cv_loss, sizeof rep.cv_loss) == 0 && rep3.C == rep.C);
    rfx_model_free(m3);
    free(Xr);
    free(yr);
    /* too few rows to cross-validate */
    rfx_model_free(m);
    m = NULL;
    CHECK_STATUS(rfx_sinks_fit(f, rfx_cmat_of(X, 9, d), y, &p, &m, NULL), RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "at least 10 rows") != NULL);
    CHECK(m == NULL);
    rfx_model_free(m2);
    rfx_features_free(f);
    free(X);
    free(y);
}

/* Labels of three classes (v's terciles: 10, 20, 30), or two (20 and 30). */
static void make_labels(const double *v, size_t n, int three, double *labels)
{
    for (size_t i = 0; i < n; i++)
        labels[i] = three ? (v[i] < -0.3 ? 10.0 : v[i] < 0.3 ? 20.0 : 30.0)
                          : (v[i] < 0 ? 20.0 : 30.0);
}

static void test_classify(int three, rfx_sinks_loss loss)
{
    const size_t n = 80, d = 3, D = 16, C = three ? 3 : 2, K = three ? 3 : 1;
    double *X, *v, labels[80], Y[3 * 80];
    make_data(23 + (unsigned)three, n, d, &X, &v);
    make_labels(v, n, three, labels);
    const double classes[3] = {three ? 10.0 : 20.0, three ? 20.0 : 30.0, 30.0};
    for (size_t k = 0; k < K; k++)
        for (size_t i = 0; i < n; i++)
            Y[k * n + i] = labels[i] == classes[K == 1 ? 1 : k] ? 1.0 : -1.0;
    rfx_features *f = make_map(d, D, 5);
    rfx_sinks_params p = rfx_sinks_params_default();
    p.loss = loss;
    p.n_threads = 1;
    p.max_iter = 20000;
    rfx_sinks_report rep;
    rfx_model *m = NULL;
    CHECK_OK(rfx_sinks_classify(f, rfx_cmat_of(X, n, d), labels, &p, &m, &rep));
    if (!m) goto out;
    check_cv(&rep, f, X, n, d, Y, K, &p, 2.0);
    rfx_classifier_info ci;
    CHECK_OK(rfx_model_classifier_info(m, &ci));
    CHECK(ci.n_classes == C && ci.n_columns == K && ci.multiclass == RFX_MULTICLASS_OVR);
    CHECK(ci.loss == (loss == RFX_SINKS_LOSS_LOGISTIC ? RFX_LOSS_LOGISTIC
                                                      : RFX_LOSS_SQUARED_HINGE));
    const double *mc;
    size_t nc;
    CHECK_OK(rfx_model_classes(m, &mc, &nc));
    CHECK(nc == C && memcmp(mc, classes, C * sizeof *mc) == 0);
    double S[3 * 80], s[80], lab[80];
    CHECK_OK(rfx_model_decision(m, rfx_cmat_of(X, n, d), rfx_mat_of(S, n, K)));
    /* each column is rfx_sinks_fit on its +-1 targets at the chosen box */
    double worst = 0;
    for (size_t k = 0; k < K; k++) {
        rfx_sinks_params q = p;
        q.C = rep.C;
        rfx_model *mk = NULL;
        CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, n, d), Y + k * n, &q, &mk, NULL));
        CHECK_OK(rfx_model_predict(mk, rfx_cmat_of(X, n, d), rfx_mat_of(s, n, 1),
                                   rfx_mat_none()));
        for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(S[i * K + k] - s[i]));
        rfx_model_free(mk);
    }
    printf("  %zu classes, %s loss: decisions against per-column fits, max |diff| %.2e\n", C,
           loss == RFX_SINKS_LOSS_LOGISTIC ? "logistic" : "squared hinge", worst);
    CHECK(worst < 1e-12);
    /* labels: the argmax (the sign for two classes) */
    CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(lab, n, 1), rfx_mat_none()));
    size_t right = 0;
    for (size_t i = 0; i < n; i++) {
        size_t b = 0;
        if (K == 1) b = S[i] > 0;
        else
            for (size_t k = 1; k < K; k++)
                if (S[i * K + k] > S[i * K + b]) b = k;
        CHECK(lab[i] == classes[b]);
        right += lab[i] == labels[i];
    }
    printf("  training accuracy %.3f\n", (double)right / (double)n);
    CHECK(right > n / 2);
    /* probabilities: sigmoid (two classes), else the OvR sigmoids normalised */
    if (loss == RFX_SINKS_LOSS_LOGISTIC) {
        double P[3 * 80];
        CHECK_OK(rfx_model_predict_proba(m, rfx_cmat_of(X, n, d), rfx_mat_of(P, n, C)));
        double err = 0;
        for (size_t i = 0; i < n; i++) {
            double want[3], tot = 0;
            if (K == 1) {
                want[1] = 1.0 / (1.0 + exp(-S[i]));
                want[0] = 1.0 - want[1];
            } else {
                for (size_t k = 0; k < C; k++) tot += want[k] = 1.0 / (1.0 + exp(-S[i * K + k]));
                for (size_t k = 0; k < C; k++) want[k] /= tot;
            }
            for (size_t k = 0; k < C; k++) err = fmax(err, fabs(P[i * C + k] - want[k]));
        }
        printf("  probabilities against the closed form: max |diff| %.2e\n", err);
        CHECK(err < 1e-14);
    }
    /* the model file */
    void *buf = NULL;
    size_t len = 0;
    rfx_model *back = NULL;
    double S2[3 * 80];
    CHECK_OK(rfx_model_save_buffer(m, &buf, &len));
    CHECK_OK(rfx_model_load_buffer(buf, len, &back));
    CHECK_OK(rfx_model_decision(back, rfx_cmat_of(X, n, d), rfx_mat_of(S2, n, K)));
    CHECK(memcmp(S, S2, n * K * sizeof *S) == 0);
    rfx_buffer_free(buf);
    rfx_model_free(back);
    rfx_model_free(m);
out:
    rfx_features_free(f);
    free(X);
    free(v);
}

static void test_classify_binary_logistic(void) { test_classify(0, RFX_SINKS_LOSS_LOGISTIC); }
static void test_classify_three_logistic(void) { test_classify(1, RFX_SINKS_LOSS_LOGISTIC); }
static void test_classify_three_hinge(void) { test_classify(1, RFX_SINKS_LOSS_SQUARED_HINGE); }

static void test_classify_errors(void)
{
    const size_t n = 30, d = 2;
    double *X, *v, labels[30];
    make_data(31, n, d, &X, &v);
    make_labels(v, n, 1, labels);
    rfx_features *f = make_map(d, 8, 1);
    rfx_sinks_params p = rfx_sinks_params_default();
    p.loss = RFX_SINKS_LOSS_LOGISTIC;
    p.C = 4;
    p.n_threads = 1;
    rfx_model *m = NULL;
    rfx_cmat Xv = rfx_cmat_of(X, n, d);
    CHECK_STATUS(rfx_sinks_classify(NULL, Xv, labels, &p, &m, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_sinks_classify(f, Xv, NULL, &p, &m, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_sinks_classify(f, Xv, labels, NULL, &m, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_sinks_classify(f, Xv, labels, &p, NULL, NULL), RFX_EINVAL);
    rfx_sinks_params q = p;
    q.loss = RFX_SINKS_LOSS_SQUARED;
    CHECK_STATUS(rfx_sinks_classify(f, Xv, labels, &q, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "params.loss") != NULL);
    q = p;
    q.C = -2;
    CHECK_STATUS(rfx_sinks_classify(f, Xv, labels, &q, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "params.C") != NULL);
    double one[30];
    for (size_t i = 0; i < n; i++) one[i] = 4.0;
    CHECK_STATUS(rfx_sinks_classify(f, Xv, one, &p, &m, NULL), RFX_EINVAL);
    double keep = labels[6];
    labels[6] = NAN;
    CHECK_STATUS(rfx_sinks_classify(f, Xv, labels, &p, &m, NULL), RFX_EPARSE);
    labels[6] = keep;
    keep = X[5 * d];
    X[5 * d] = INFINITY;
    CHECK_STATUS(rfx_sinks_classify(f, Xv, labels, &p, &m, NULL), RFX_EPARSE);
    X[5 * d] = keep;
    CHECK_STATUS(rfx_sinks_classify(f, rfx_cmat_of(X, 1, d), labels, &p, &m, NULL), RFX_EDIM);
    CHECK_STATUS(rfx_sinks_classify(f, rfx_cmat_of(X, n, 1), labels, &p, &m, NULL), RFX_EDIM);
    CHECK(m == NULL);
    q = p;
    q.C = 0; /* cross-validation needs 10 rows */
    CHECK_STATUS(rfx_sinks_classify(f, rfx_cmat_of(X, 8, d), labels, &q, &m, NULL), RFX_EDIM);
    CHECK(m == NULL);
    rfx_features_free(f);
    free(X);
    free(v);
}

int main(void)
{
    RFX_TEST_RUN(test_regression_cv);
    RFX_TEST_RUN(test_classify_binary_logistic);
    RFX_TEST_RUN(test_classify_three_logistic);
    RFX_TEST_RUN(test_classify_three_hinge);
    RFX_TEST_RUN(test_classify_errors);
    return rfx_test_finish("test_sinks_cv");
}
