/* SPDX-License-Identifier: BSD-3-Clause */
/* Classification on random features (rfx/classify.h):
 *  - binary logistic regression by L-BFGS equals Newton's method written
 *    here on the same features (1e-6), and scikit-learn's
 *    LogisticRegression(C = 1 / (n lambda)) on the same feature matrix
 *    (1e-5 on the coefficients);
 *  - softmax equals scikit-learn's multinomial LogisticRegression;
 *  - hinge by dual coordinate descent has LinearSVC(loss="hinge")'s primal
 *    objective, the squared hinge LinearSVC's default (1e-6 relative);
 *    with an intercept, dual CD on the squared hinge equals L-BFGS, and on
 *    the hinge its intercept minimises the objective along b;
 *  - SGD comes within 1e-2 of the batch objective;
 *  - class weights equal duplicated rows; "balanced" is n / (C n_k);
 *  - sample weights equal repeated rows, weights of 1 no weights (bits),
 *    weight 0 a row left out;
 *  - probabilities: one-vs-rest normalised sigmoids, softmax, binary;
 *  - cached and uncached features, 1 and 2 threads, a source in blocks:
 *    bitwise the same models;
 *  - rfx_model_fit chooses a length scale on a separable 2-D problem and
 *    classifies held-out points (> 0.95);
 *  - the squared loss: the closed-form LOO error and squared error of each
 *    lambda equal n explicit refits, the grid's choice equals the
 *    brute-force argmin, the closed form equals L-BFGS, probabilities are
 *    softmax(s / T) with T at the minimum of the calibration NLL, and the
 *    one-call fit's length scale matches a brute-force scan;
 *  - every error path. */
#include "internal.h"
#include "solvers/classify_internal.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define PEER RFX_TEST_DATA "/../peer/classify_sklearn.py"

static int peer_missing = 0;

/* ---- data, features, references ---------------------------------------- */

static rfx_features *make_features(size_t d, size_t D, double l, uint64_t seed)
{
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = D;
    fp.length_scale = l;
    fp.seed = seed;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&fp, d, &f));
    return f;
}

/* n rows in [-2, 2]^2 (and d - 2 noise inputs), labels lab[k] for C
 * classes by the angle and radius of (x0, x1), with a fraction flip of
 * labels changed at random. */
static void make_data(rfx_test_rng *r, size_t n, size_t d, size_t C, const double *lab,
                      double flip, double **Xo, double **yo)
{
    double *X = rfx_test_matrix(r, n, d, -2, 2), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        double a = atan2(X[i * d + 1], X[i * d]) + 3.14159265358979 + 0.5 * X[i * d] * X[i * d];
        size_t k = (size_t)(a / 6.3 * (double)C) % C;
        if (C == 2) k = X[i * d] * X[i * d] + X[i * d + 1] > 1.0;
        if (rfx_test_uniform(r) < flip) k = (k + 1) % C;
        y[i] = lab[k];
    }
    *Xo = X;
    *yo = y;
}

static double *features_of(const rfx_features *f, const double *X, size_t n)
{
    size_t D = rfx_features_output_dim(f), d = rfx_features_input_dim(f);
    double *Z = malloc(n * D * sizeof *Z);
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, D)));
    return Z;
}

static size_t class_index(double v, const double *classes, size_t C)
{
    for (size_t k = 0; k < C; k++)
        if (classes[k] == v) return k;
    return C;
}

/* J(W, b) written out: (1/n) sum_i c_i loss_i + lambda/2 |W|^2. */
static double objective(const double *Z, size_t n, size_t D, const double *y,
                        const double *classes, size_t C, const double *W, const double *b,
                        double lambda, rfx_loss loss, int softmax, const double *cw)
{
    size_t K = C == 2 ? 1 : C;
    double sum = 0, pen = 0;
    for (size_t i = 0; i < n; i++) {
        size_t yi = class_index(y[i], classes, C);
        double s[64], li = 0;
        for (size_t k = 0; k < K; k++) {
            s[k] = b ? b[k] : 0;
            for (size_t j = 0; j < D; j++) s[k] += Z[i * D + j] * W[j * K + k];
        }
        if (softmax && K > 1) {
            double mx = s[0], se = 0;
            for (size_t k = 1; k < K; k++) mx = s[k] > mx ? s[k] : mx;
            for (size_t k = 0; k < K; k++) se += exp(s[k] - mx);
            li = mx + log(se) - s[yi];
        } else {
            for (size_t k = 0; k < K; k++) {
                double t = ((K == 1 ? yi == 1 : yi == k) ? 1.0 : -1.0) * s[k];
                if (loss == RFX_LOSS_LOGISTIC) li += t > 0 ? log1p(exp(-t)) : -t + log1p(exp(t));
                else if (loss == RFX_LOSS_HINGE) li += t < 1 ? 1 - t : 0;
                else li += t < 1 ? (1 - t) * (1 - t) : 0;
            }
        }
        sum += (cw ? cw[yi] : 1.0) * li;
    }
    for (size_t j = 0; j < D * K; j++) pen += W[j] * W[j];
    return sum / (double)n + 0.5 * lambda * pen;
}

static double max_abs_diff(const double *a, const double *b, size_t len)
{
    double m = 0;
    for (size_t i = 0; i < len; i++) {
        double e = fabs(a[i] - b[i]);
        if (!(e <= m)) m = e;
    }
    return m;
}

static int same_bits(const double *a, const double *b, size_t len)
{
    return memcmp(a, b, len * sizeof *a) == 0;
}

/* Run the peer on Z (n x D) with labels y: reads len numbers. 1 on success,
 * 0 when scikit-learn is missing (noted once), -1 on failure. */
static int run_peer(const char *kind, const double *Z, size_t n, size_t D, const double *y,
                    double C, double *out, size_t len)
{
    const char *path = rfx_test_tmp("classify_peer.txt");
    FILE *fp = fopen(path, "w");
    if (!fp) return -1;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < D; j++) fprintf(fp, "%.17g ", Z[i * D + j]);
        fprintf(fp, "%.17g\n", y[i]);
    }
    fclose(fp);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s %s %.17g", PEER, kind, path, C);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t got = 0;
    while (got < len && fscanf(p, "%lf", &out[got]) == 1) got++;
    double extra;
    int more = fscanf(p, "%lf", &extra) == 1;
    int rc = pclose(p);
    remove(path);
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
        if (!peer_missing) printf("scikit-learn is not installed: peer checks skipped\n");
        peer_missing = 1;
        return 0;
    }
    if (rc != 0 || got != len || more) {
        fprintf(stderr, "peer '%s': status %d, %zu of %zu numbers\n", cmd, rc, got, len);
        return -1;
    }
    return 1;
}

static rfx_classify_params tight(rfx_loss loss, rfx_optimizer opt, double lambda)
{
    rfx_classify_params p = rfx_classify_params_default();
    p.loss = loss;
    p.optimizer = opt;
    p.lambda = lambda;
    p.tol = 1e-11;
    p.max_iter = 100000;
    return p;
}

/* ---- binary logistic: Newton and scikit-learn ---------------------------- */

/* Newton's method on (w, b) with the Hessian (1/n) sum p(1-p) [z;1][z;1]^T +
 * lambda diag(1, .., 1, 0), halving the step until the objective falls. */
static void newton_logistic(const double *Z, size_t n, size_t D, const double *t01,
                            double lambda, double *theta)
{
    const size_t P = D + 1;
    double *H = malloc(P * P * sizeof *H), *g = malloc(P * sizeof *g), *th = malloc(P * sizeof *th);
    memset(theta, 0, P * sizeof *theta);
    for (int it = 0; it < 50; it++) {
        memset(H, 0, P * P * sizeof *H);
        memset(g, 0, P * sizeof *g);
        double f0 = 0;
        for (size_t i = 0; i < n; i++) {
            double s = theta[D];
            for (size_t j = 0; j < D; j++) s += Z[i * D + j] * theta[j];
            double p = 1 / (1 + exp(-s)), w = p * (1 - p), r = p - t01[i];
            f0 += s > 0 ? log1p(exp(-s)) + (1 - t01[i]) * s : log1p(exp(s)) - t01[i] * s;
            for (size_t a = 0; a < P; a++) {
                double za = a < D ? Z[i * D + a] : 1.0;
                g[a] += r * za / (double)n;
                for (size_t c = 0; c < P; c++) {
                    double zc = c < D ? Z[i * D + c] : 1.0;
                    H[a * P + c] += w * za * zc / (double)n;
                }
            }
        }
        f0 /= (double)n;
        for (size_t j = 0; j < D; j++) {
            g[j] += lambda * theta[j];
            H[j * P + j] += lambda;
            f0 += 0.5 * lambda * theta[j] * theta[j];
        }
        CHECK_OK(rfx__chol(H, P, 1, "newton"));
        CHECK_OK(rfx__chol_solve(H, P, g, 1));
        for (double step = 1; step > 1e-8; step /= 2) {
            for (size_t a = 0; a < P; a++) th[a] = theta[a] - step * g[a];
            double f1 = 0;
            for (size_t i = 0; i < n; i++) {
                double s = th[D];
                for (size_t j = 0; j < D; j++) s += Z[i * D + j] * th[j];
                f1 += s > 0 ? log1p(exp(-s)) + (1 - t01[i]) * s : log1p(exp(s)) - t01[i] * s;
            }
            f1 /= (double)n;
            for (size_t j = 0; j < D; j++) f1 += 0.5 * lambda * th[j] * th[j];
            if (f1 <= f0) break;
        }
        memcpy(theta, th, P * sizeof *theta);
    }
    free(H);
    free(g);
    free(th);
}

static void test_binary_logistic(void)
{
    rfx_test_rng r = {11};
    const size_t n = 300, d = 2, D = 40;
    const double lab[2] = {3.0, 7.0}, lambda = 1e-2;
    double *X, *y;
    make_data(&r, n, d, 2, lab, 0.1, &X, &y);
    rfx_features *f = make_features(d, D, 0.7, 5);
    double *Z = features_of(f, X, n);
    rfx_classify_params p = tight(RFX_LOSS_LOGISTIC, RFX_OPTIMIZER_LBFGS, lambda);
    p.tol = 1e-12;
    rfx_model *m = NULL;
    rfx_classify_report rep;
    CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, &rep));
    if (!m) return;
    CHECK(rep.converged && rep.optimizer == RFX_OPTIMIZER_LBFGS && rep.n_classes == 2);
    CHECK(rep.cached && rep.passes >= rep.iterations + 1);
    rfx_cmat W = rfx_model_weights(m);
    const double *b = rfx_model_intercepts(m);
    CHECK(W.rows == D && W.cols == 1);
    /* Newton on the same features */
    double *t01 = malloc(n * sizeof *t01), *theta = malloc((D + 1) * sizeof *theta);
    for (size_t i = 0; i < n; i++) t01[i] = y[i] == 7.0;
    newton_logistic(Z, n, D, t01, lambda, theta);
    double dw = max_abs_diff(W.data, theta, D), db = fabs(b[0] - theta[D]);
    printf("binary logistic: |w - w_newton|_inf = %.3g, |b - b_newton| = %.3g, %zu iterations\n",
           dw, db, rep.iterations);
    CHECK_NEAR(dw, 0, 1e-6);
    CHECK_NEAR(db, 0, 1e-6);
    const double cl[2] = {3, 7};
    double J = objective(Z, n, D, y, cl, 2, W.data, b, lambda, RFX_LOSS_LOGISTIC, 0, NULL);
    CHECK_NEAR(rep.objective, J, 1e-12 * J);
    CHECK(rep.grad_norm <= 1e-11);
    /* scikit-learn: C = 1 / (n lambda) */
    double sk[41];
    int ok = run_peer("logistic", Z, n, D, y, 1.0 / ((double)n * lambda), sk, D + 1);
    CHECK(ok >= 0);
    if (ok == 1) {
        double ds = max_abs_diff(W.data, sk, D);
        printf("binary logistic: |w - w_sklearn|_inf = %.3g, |b - b_sklearn| = %.3g\n", ds,
               fabs(b[0] - sk[D]));
        CHECK_NEAR(ds, 0, 1e-5);
        CHECK_NEAR(b[0], sk[D], 1e-5);
    }
    /* predictions: the larger label where the score is positive */
    double *S = malloc(n * sizeof *S), *L = malloc(n * sizeof *L);
    CHECK_OK(rfx_model_decision(m, rfx_cmat_of(X, n, d), rfx_mat_of(S, n, 1)));
    CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(L, n, 1), rfx_mat_none()));
    int labels_ok = 1;
    for (size_t i = 0; i < n; i++) {
        double s = b[0];
        for (size_t j = 0; j < D; j++) s += Z[i * D + j] * W.data[j];
        labels_ok &= fabs(S[i] - s) <= 1e-12 && L[i] == (S[i] > 0 ? 7.0 : 3.0);
    }
    CHECK(labels_ok);
    rfx_model_info info;
    CHECK_OK(rfx_model_get_info(m, &info));
    CHECK(info.method == RFX_METHOD_CLASSIFY && info.n_targets == 1 && info.n_train == n);
    const double *cls;
    size_t nc;
    CHECK_OK(rfx_model_classes(m, &cls, &nc));
    CHECK(nc == 2 && cls[0] == 3.0 && cls[1] == 7.0);
    rfx_classifier_info ci;
    CHECK_OK(rfx_model_classifier_info(m, &ci));
    CHECK(ci.loss == RFX_LOSS_LOGISTIC && ci.n_classes == 2 && ci.n_columns == 1 &&
          ci.lambda == lambda);
    free(S);
    free(L);
    free(t01);
    free(theta);
    rfx_model_free(m);
    rfx_features_free(f);
    free(Z);
    free(X);
    free(y);
}

/* ---- softmax against scikit-learn's multinomial --------------------------- */

static void test_softmax(void)
{
    rfx_test_rng r = {12};
    const size_t n = 240, d = 2, D = 24, C = 3;
    const double lab[3] = {-2.0, 0.0, 3.0}, lambda = 5e-3;
    double *X, *y;
    make_data(&r, n, d, C, lab, 0.05, &X, &y);
    rfx_features *f = make_features(d, D, 0.8, 6);
    double *Z = features_of(f, X, n);
    rfx_classify_params p = tight(RFX_LOSS_LOGISTIC, RFX_OPTIMIZER_AUTO, lambda);
    p.multiclass = RFX_MULTICLASS_SOFTMAX;
    p.tol = 1e-12;
    rfx_model *m = NULL;
    rfx_classify_report rep;
    CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, &rep));
    if (!m) return;
    CHECK(rep.converged && rep.optimizer == RFX_OPTIMIZER_LBFGS);
    rfx_cmat W = rfx_model_weights(m);
    const double *b = rfx_model_intercepts(m);
    CHECK(W.rows == D && W.cols == C);
    double J = objective(Z, n, D, y, lab, C, W.data, b, lambda, RFX_LOSS_LOGISTIC, 1, NULL);
    CHECK_NEAR(rep.objective, J, 1e-12 * J);
    double sk[3 * 24 + 3];
    int ok = run_peer("softmax", Z, n, D, y, 1.0 / ((double)n * lambda), sk, C * D + C);
    CHECK(ok >= 0);
    if (ok == 1) {
        double dw = 0, bm = 0, sm = 0;
        for (size_t k = 0; k < C; k++)
            for (size_t j = 0; j < D; j++) {
                double e = fabs(W.data[j * C + k] - sk[k * D + j]);
                dw = e > dw ? e : dw;
            }
        /* the intercepts are defined up to a common shift */
        for (size_t k = 0; k < C; k++) {
            bm += b[k] / (double)C;
            sm += sk[C * D + k] / (double)C;
        }
        double db = 0;
        for (size_t k = 0; k < C; k++) {
            double e = fabs((b[k] - bm) - (sk[C * D + k] - sm));
            db = e > db ? e : db;
        }
        printf("softmax: |W - W_sklearn|_inf = %.3g, centred intercepts %.3g\n", dw, db);
        CHECK_NEAR(dw, 0, 1e-5);
        CHECK_NEAR(db, 0, 1e-5);
    }
    /* probabilities: the softmax of the scores */
    double *S = malloc(n * C * sizeof *S), *P = malloc(n * C * sizeof *P);
    CHECK_OK(rfx_model_decision(m, rfx_cmat_of(X, n, d), rfx_mat_of(S, n, C)));
    CHECK_OK(rfx_model_predict_proba(m, rfx_cmat_of(X, n, d), rfx_mat_of(P, n, C)));
    double err = 0;
    for (size_t i = 0; i < n; i++) {
        double se = 0;
        for (size_t k = 0; k < C; k++) se += exp(S[i * C + k]);
        for (size_t k = 0; k < C; k++) {
            double e = fabs(P[i * C + k] - exp(S[i * C + k]) / se);
            err = e > err ? e : err;
        }
    }
    CHECK_NEAR(err, 0, 1e-14);
    free(S);
    free(P);
    rfx_model_free(m);
    rfx_features_free(f);
    free(Z);
    free(X);
    free(y);
}

/* ---- hinge losses: dual coordinate descent ------------------------------- */

static void test_hinge(void)
{

    rfx_test_rng r = {13};
    const size_t n = 200, d = 2, D = 30;
    const double lab[2] = {0, 1}, lambda = 1e-2, cl[2] = {0, 1};
    double *X, *y;
    make_data(&r, n, d, 2, lab, 0.1, &X, &y);
    rfx_features *f = make_features(d, D, 0.8, 7);
    double *Z = features_of(f, X, n);
    const char *kind[2] = {"hinge", "sqhinge"};
    const rfx_loss losses[2] = {RFX_LOSS_HINGE, RFX_LOSS_SQUARED_HINGE};
    for (int h = 0; h < 2; h++) {
        rfx_classify_params p = tight(losses[h], RFX_OPTIMIZER_DUAL_CD, lambda);
        p.fit_intercept = 0;
        p.tol = 1e-10;
        rfx_model *m = NULL;
        rfx_classify_report rep;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, &rep));
        if (!m) continue;
        CHECK(rep.converged && rep.optimizer == RFX_OPTIMIZER_DUAL_CD);
        rfx_cmat W = rfx_model_weights(m);
        CHECK(rfx_model_intercepts(m)[0] == 0);
        double J = objective(Z, n, D, y, cl, 2, W.data, NULL, lambda, losses[h], 0, NULL);
        CHECK_NEAR(rep.objective, J, 1e-12 * J);
        double sk[30];
        int ok = run_peer(kind[h], Z, n, D, y, 1.0 / ((double)n * lambda), sk, D);
        CHECK(ok >= 0);
        if (ok == 1) {
            double Js = objective(Z, n, D, y, cl, 2, sk, NULL, lambda, losses[h], 0, NULL);
            printf("%s: J = %.12g, LinearSVC's J = %.12g, relative difference %.3g\n", kind[h],
                   J, Js, fabs(J - Js) / Js);
            CHECK_NEAR(J, Js, 1e-6 * Js);
        }
        rfx_model_free(m);
    }
    /* squared hinge with an intercept: dual CD with the intercept search
     * equals L-BFGS (both minimise the same smooth objective) */
    {
        rfx_classify_params p = tight(RFX_LOSS_SQUARED_HINGE, RFX_OPTIMIZER_DUAL_CD, lambda);
        p.tol = 1e-10;
        rfx_model *a = NULL, *b = NULL;
        rfx_classify_report ra, rb;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &a, &ra));
        p.optimizer = RFX_OPTIMIZER_LBFGS;
        p.tol = 1e-12;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &b, &rb));
        if (a && b) {
            double dw = max_abs_diff(rfx_model_weights(a).data, rfx_model_weights(b).data, D);
            double db = fabs(rfx_model_intercepts(a)[0] - rfx_model_intercepts(b)[0]);
            printf("squared hinge with intercept: dual CD vs L-BFGS |dw| = %.3g, |db| = %.3g, "
                   "J %.12g vs %.12g\n", dw, db, ra.objective, rb.objective);
            CHECK_NEAR(dw, 0, 1e-6);
            CHECK_NEAR(db, 0, 1e-6);
            CHECK_NEAR(ra.objective, rb.objective, 1e-9 * rb.objective);
        }
        rfx_model_free(a);
        rfx_model_free(b);
    }
    /* hinge with an intercept: b minimises J along b (one-sided changes
     * are >= 0), and J is no larger than at the intercept-free optimum */
    {
        rfx_classify_params p = tight(RFX_LOSS_HINGE, RFX_OPTIMIZER_AUTO, lambda);
        p.tol = 1e-10;
        rfx_model *m = NULL, *m0 = NULL;
        rfx_classify_report rep, rep0;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, &rep));
        p.fit_intercept = 0;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &m0, &rep0));
        if (m && m0) {
            CHECK(rep.optimizer == RFX_OPTIMIZER_DUAL_CD && rep.converged);
            const double *W = rfx_model_weights(m).data, b = rfx_model_intercepts(m)[0];
            double J = objective(Z, n, D, y, cl, 2, W, &b, lambda, RFX_LOSS_HINGE, 0, NULL);
            double worst = INFINITY;
            for (double h = 1e-3; h >= 1e-7; h /= 10) {
                double bp = b + h, bm = b - h;
                double Jp = objective(Z, n, D, y, cl, 2, W, &bp, lambda, RFX_LOSS_HINGE, 0, NULL);
                double Jm = objective(Z, n, D, y, cl, 2, W, &bm, lambda, RFX_LOSS_HINGE, 0, NULL);
                double lo = Jp - J < Jm - J ? Jp - J : Jm - J;
                worst = lo < worst ? lo : worst;
            }
            printf("hinge with intercept: b = %.6g, J = %.10g (without: %.10g), worst one-sided "
                   "change %.3g\n", b, J, rep0.objective, worst);
            CHECK(worst >= -1e-12);
            CHECK(J <= rep0.objective + 1e-12);
            CHECK_NEAR(rep.objective, J, 1e-12 * J);
        }
        rfx_model_free(m);
        rfx_model_free(m0);
    }
    rfx_features_free(f);
    free(Z);
    free(X);
    free(y);
}

/* ---- SGD ------------------------------------------------------------------ */

static void test_sgd(void)
{
    rfx_test_rng r = {14};
    const size_t n = 2000, d = 2, D = 64;
    const double lab2[2] = {0, 1}, lab3[3] = {1, 2, 3};
    struct { rfx_loss loss; int softmax; size_t C; } cases[3] = {
        {RFX_LOSS_LOGISTIC, 0, 2}, {RFX_LOSS_LOGISTIC, 1, 3}, {RFX_LOSS_HINGE, 0, 2}};
    rfx_features *f = make_features(d, D, 0.8, 8);
    for (int c = 0; c < 3; c++) {
        double *X, *y;
        make_data(&r, n, d, cases[c].C, cases[c].C == 2 ? lab2 : lab3, 0.05, &X, &y);
        rfx_classify_params p = rfx_classify_params_default();
        p.loss = cases[c].loss;
        p.multiclass = cases[c].softmax ? RFX_MULTICLASS_SOFTMAX : RFX_MULTICLASS_OVR;
        p.lambda = 1e-3;
        p.tol = 1e-9;
        rfx_model *mb = NULL, *ms = NULL;
        rfx_classify_report rb, rs;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &mb, &rb));
        p.optimizer = RFX_OPTIMIZER_SGD;
        p.epochs = 30;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &ms, &rs));
        if (mb && ms) {
            double rel = (rs.objective - rb.objective) / rb.objective;
            printf("SGD %s%s: J = %.6g, batch (%s) J = %.6g, relative excess %.3g\n",
                   rfx_loss_name(p.loss), cases[c].softmax ? " softmax" : "", rs.objective,
                   rfx_optimizer_name(rb.optimizer), rb.objective, rel);
            CHECK(rs.optimizer == RFX_OPTIMIZER_SGD && rs.iterations == 30 && !rs.converged);
            CHECK(rel >= -1e-9 && rel <= 1e-2);
        }
        rfx_model_free(mb);
        rfx_model_free(ms);
        free(X);
        free(y);
    }
    rfx_features_free(f);
}

/* ---- class weights --------------------------------------------------------- */

static void test_class_weights(void)
{
    rfx_test_rng r = {15};
    const size_t n = 150, d = 2, D = 20;
    const double lab[2] = {-1, 1}, lambda = 2e-2;
    double *X, *y;
    make_data(&r, n, d, 2, lab, 0.1, &X, &y);
    rfx_features *f = make_features(d, D, 0.9, 9);
    /* weight 2 on class 1 == every class-1 row twice, with lambda n / n' */
    size_t n1 = 0;
    for (size_t i = 0; i < n; i++) n1 += y[i] == 1;
    const size_t n2 = n + n1;
    double *X2 = malloc(n2 * d * sizeof *X2), *y2 = malloc(n2 * sizeof *y2);
    memcpy(X2, X, n * d * sizeof *X);
    memcpy(y2, y, n * sizeof *y);
    for (size_t i = 0, k = n; i < n; i++)
        if (y[i] == 1) {
            memcpy(X2 + k * d, X + i * d, d * sizeof *X);
            y2[k++] = 1;
        }
    const rfx_loss losses[2] = {RFX_LOSS_LOGISTIC, RFX_LOSS_SQUARED_HINGE};
    for (int h = 0; h < 2; h++) {
        const double w[2] = {1, 2};
        rfx_classify_params p = tight(losses[h], RFX_OPTIMIZER_LBFGS, lambda);
        p.tol = 1e-12;
        p.class_weights = w;
        p.n_class_weights = 2;
        rfx_model *a = NULL, *b = NULL;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &a, NULL));
        p.class_weights = NULL;
        p.n_class_weights = 0;
        p.lambda = lambda * (double)n / (double)n2;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X2, n2, d), y2, &p, &b, NULL));
        if (a && b) {
            double dw = max_abs_diff(rfx_model_weights(a).data, rfx_model_weights(b).data, D);
            double db = fabs(rfx_model_intercepts(a)[0] - rfx_model_intercepts(b)[0]);
            printf("class weight 2 vs duplicated rows (%s): |dw| = %.3g, |db| = %.3g\n",
                   rfx_loss_name(losses[h]), dw, db);
            CHECK_NEAR(dw, 0, 1e-7);
            CHECK_NEAR(db, 0, 1e-7);
        }
        rfx_model_free(a);
        rfx_model_free(b);
    }
    /* balanced: n / (C n_k), bitwise the same as giving those weights */
    {
        const double wb[2] = {(double)n / (2.0 * (double)(n - n1)), (double)n / (2.0 * (double)n1)};
        rfx_classify_params p = rfx_classify_params_default();
        p.balanced = 1;
        rfx_model *a = NULL, *b = NULL;
        rfx_classify_report ra, rb;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &a, &ra));
        p.balanced = 0;
        p.class_weights = wb;
        p.n_class_weights = 2;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &b, &rb));
        if (a && b) {
            CHECK(same_bits(rfx_model_weights(a).data, rfx_model_weights(b).data, D));
            CHECK(same_bits(rfx_model_intercepts(a), rfx_model_intercepts(b), 1));
            double *Z = features_of(f, X, n);
            const double cl[2] = {-1, 1};
            double J = objective(Z, n, D, y, cl, 2, rfx_model_weights(a).data,
                                 rfx_model_intercepts(a), p.lambda, RFX_LOSS_LOGISTIC, 0, wb);
            CHECK_NEAR(ra.objective, J, 1e-12 * J);
            printf("balanced weights %.6g, %.6g (n1 = %zu of %zu): objective %.9g\n", wb[0], wb[1],
                   n1, n, J);
            free(Z);
        }
        rfx_model_free(a);
        rfx_model_free(b);
    }
    free(X2);
    free(y2);
    rfx_features_free(f);
    free(X);
    free(y);
}

/* ---- probabilities ------------------------------------------------------- */

static void test_proba(void)
{
    rfx_test_rng r = {16};
    const size_t n = 300, d = 2, D = 32, C = 4;
    const double lab[4] = {10, 20, 30, 40};
    double *X, *y;
    make_data(&r, n, d, C, lab, 0.05, &X, &y);
    rfx_features *f = make_features(d, D, 0.8, 10);
    rfx_classify_params p = rfx_classify_params_default();
    p.lambda = 1e-3;
    rfx_model *m = NULL;
    CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, NULL));
    if (m) {
        double *S = malloc(n * C * sizeof *S), *P = malloc(n * C * sizeof *P);
        double *L = malloc(n * sizeof *L);
        CHECK_OK(rfx_model_decision(m, rfx_cmat_of(X, n, d), rfx_mat_of(S, n, C)));
        CHECK_OK(rfx_model_predict_proba(m, rfx_cmat_of(X, n, d), rfx_mat_of(P, n, C)));
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(L, n, 1), rfx_mat_none()));
        double sum_err = 0, err = 0;
        size_t correct = 0;
        int argmax_ok = 1;
        for (size_t i = 0; i < n; i++) {
            double sum = 0, ss = 0;
            size_t best = 0;
            for (size_t k = 0; k < C; k++) {
                sum += P[i * C + k];
                ss += 1 / (1 + exp(-S[i * C + k]));
                if (S[i * C + k] > S[i * C + best]) best = k;
            }
            sum_err = fabs(sum - 1) > sum_err ? fabs(sum - 1) : sum_err;
            for (size_t k = 0; k < C; k++) {
                double e = fabs(P[i * C + k] - 1 / (1 + exp(-S[i * C + k])) / ss);
                err = e > err ? e : err;
            }
            argmax_ok &= L[i] == lab[best];
            correct += L[i] == y[i];
        }
        printf("one-vs-rest: |sum P - 1| <= %.3g, |P - sigmoid / sum| <= %.3g, training "
               "accuracy %.3f\n", sum_err, err, (double)correct / (double)n);
        CHECK_NEAR(sum_err, 0, 1e-14);
        CHECK_NEAR(err, 0, 1e-14);
        CHECK(argmax_ok);
        CHECK((double)correct / (double)n > 0.6);
        free(S);
        free(P);
        free(L);
    }
    rfx_model_free(m);
    /* binary: (1 - p, p) */
    {
        const double lab2[2] = {0, 5};
        double *X2, *y2;
        make_data(&r, n, d, 2, lab2, 0.05, &X2, &y2);
        rfx_model *m2 = NULL;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X2, n, d), y2, &p, &m2, NULL));
        if (m2) {
            double *S = malloc(n * sizeof *S), *P = malloc(2 * n * sizeof *P), err = 0;
            CHECK_OK(rfx_model_decision(m2, rfx_cmat_of(X2, n, d), rfx_mat_of(S, n, 1)));
            CHECK_OK(rfx_model_predict_proba(m2, rfx_cmat_of(X2, n, d), rfx_mat_of(P, n, 2)));
            for (size_t i = 0; i < n; i++) {
                double q = 1 / (1 + exp(-S[i]));
                err = fmax(err, fmax(fabs(P[2 * i + 1] - q), fabs(P[2 * i] - (1 - q))));
            }
            CHECK_NEAR(err, 0, 1e-15);
            free(S);
            free(P);
        }
        rfx_model_free(m2);
        free(X2);
        free(y2);
    }
    rfx_features_free(f);
    free(X);
    free(y);
}

/* ---- bitwise: cache, threads, sources ------------------------------------ */

static int same_model(const rfx_model *a, const rfx_model *b)
{
    if (!a || !b) return 0;
    rfx_cmat Wa = rfx_model_weights(a), Wb = rfx_model_weights(b);
    return Wa.rows == Wb.rows && Wa.cols == Wb.cols &&
           same_bits(Wa.data, Wb.data, Wa.rows * Wa.cols) &&
           same_bits(rfx_model_intercepts(a), rfx_model_intercepts(b), Wa.cols);
}

static void test_bitwise(void)
{
    rfx_test_rng r = {17};
    /* D = 4096: chunks of 2048 rows, so n = 2200 makes two */
    const size_t n = 2200, d = 2, D = 4096;
    const double lab[3] = {0, 1, 2};
    double *X, *y;
    make_data(&r, n, d, 3, lab, 0.05, &X, &y);
    rfx_features *f = make_features(d, D, 0.8, 11);
    struct { rfx_loss loss; rfx_multiclass mc; rfx_optimizer opt; } cases[4] = {
        {RFX_LOSS_LOGISTIC, RFX_MULTICLASS_SOFTMAX, RFX_OPTIMIZER_LBFGS},
        {RFX_LOSS_SQUARED_HINGE, RFX_MULTICLASS_OVR, RFX_OPTIMIZER_LBFGS},
        {RFX_LOSS_LOGISTIC, RFX_MULTICLASS_OVR, RFX_OPTIMIZER_SGD},
        {RFX_LOSS_HINGE, RFX_MULTICLASS_OVR, RFX_OPTIMIZER_DUAL_CD}};
    for (int c = 0; c < 4; c++) {
        rfx_classify_params p = rfx_classify_params_default();
        p.loss = cases[c].loss;
        p.multiclass = cases[c].mc;
        p.optimizer = cases[c].opt;
        p.lambda = 1e-3;
        p.tol = 1e-4;
        p.max_iter = 8;
        p.epochs = 2;
        p.n_threads = 1;
        rfx_model *a = NULL, *b = NULL, *u = NULL;
        rfx_classify_report ra, rb, ru;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &a, &ra));
        p.n_threads = 2;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &b, &rb));
        CHECK_MSG(same_model(a, b), "%s / %s: 1 and 2 threads differ", rfx_loss_name(p.loss),
                  rfx_optimizer_name(p.optimizer));
        CHECK(ra.objective == rb.objective && ra.iterations == rb.iterations);
        if (cases[c].opt != RFX_OPTIMIZER_DUAL_CD) {
            p.cache_bytes = 0;
            CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &u, &ru));
            CHECK(ra.cached && !ru.cached);
            CHECK_MSG(same_model(a, u), "%s / %s: cached and uncached differ",
                      rfx_loss_name(p.loss), rfx_optimizer_name(p.optimizer));
            CHECK(ra.objective == ru.objective && ra.passes == ru.passes);
        }
        printf("bitwise %s / %s / %s: %zu iterations, %zu passes, J = %.9g\n",
               rfx_loss_name(p.loss), rfx_multiclass_name(p.multiclass),
               rfx_optimizer_name(p.optimizer), ra.iterations, ra.passes, ra.objective);
        /* decisions and probabilities on 1 and 2 threads */
        if (a && c == 0) {
            double *P1 = malloc(n * 3 * sizeof *P1), *P2 = malloc(n * 3 * sizeof *P2);
            rfx_features_set_threads((rfx_features *)rfx_model_features(a), 1);
            CHECK_OK(rfx_model_predict_proba(a, rfx_cmat_of(X, n, d), rfx_mat_of(P1, n, 3)));
            rfx_features_set_threads((rfx_features *)rfx_model_features(a), 2);
            CHECK_OK(rfx_model_predict_proba(a, rfx_cmat_of(X, n, d), rfx_mat_of(P2, n, 3)));
            CHECK(same_bits(P1, P2, n * 3));
            free(P1);
            free(P2);
        }
        rfx_model_free(a);
        rfx_model_free(b);
        rfx_model_free(u);
    }
    rfx_features_free(f);
    free(X);
    free(y);
}

/* A source that can change its rows after the first pass. */
typedef struct wobble {
    rfx_source *inner;
    int passes, mode; /* mode 1: a new label from pass 2; 2: fewer rows */
    double y[512];
} wobble;

static rfx_status wobble_next(rfx_source *src, rfx_block *out, int *done)
{
    wobble *w = src->state;
    RFX__TRY(w->inner->next(w->inner, out, done));
    if (!*done && w->passes >= 2 && w->mode == 1 && out->rows <= 512) {
        for (size_t i = 0; i < out->rows; i++) w->y[i] = out->y[i * out->y_stride];
        w->y[out->rows / 2] = 99.0;
        out->y = w->y;
        out->y_stride = 1;
    }
    if (!*done && w->passes >= 2 && w->mode == 2 && out->rows > 1) out->rows -= 1;
    return RFX_OK;
}

static rfx_status wobble_rewind(rfx_source *src)
{
    wobble *w = src->state;
    w->passes++;
    return w->inner->rewind(w->inner);
}

static void test_source(void)
{
    rfx_test_rng r = {18};
    const size_t n = 1000, d = 2, D = 96;
    const double lab[3] = {0, 1, 2};
    double *X, *y;
    make_data(&r, n, d, 3, lab, 0.05, &X, &y);
    rfx_features *f = make_features(d, D, 0.8, 12);
    rfx_source *src = NULL;
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), 300, &src));
    for (int opt = 0; opt < 2 && src; opt++) {
        rfx_classify_params p = rfx_classify_params_default();
        p.multiclass = RFX_MULTICLASS_SOFTMAX;
        p.lambda = 1e-3;
        p.optimizer = opt ? RFX_OPTIMIZER_SGD : RFX_OPTIMIZER_LBFGS;
        p.tol = 1e-10;
        p.epochs = 5;
        rfx_model *a = NULL, *b = NULL, *mem = NULL;
        rfx_classify_report ra, rb, rm;
        CHECK_OK(rfx_classify_fit_source(f, src, &p, &a, &ra));
        p.cache_bytes = 0;
        CHECK_OK(rfx_classify_fit_source(f, src, &p, &b, &rb));
        CHECK(ra.cached && !rb.cached);
        CHECK_MSG(same_model(a, b), "source %s: cached and uncached differ",
                  rfx_optimizer_name(p.optimizer));
        CHECK(ra.objective == rb.objective);
        CHECK(rb.passes == ra.passes - 1); /* the cache fill is one pass more */
        p.cache_bytes = (size_t)1 << 30;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &mem, &rm));
        if (a && mem) {
            if (opt == 0) { /* the same optimum by other tiles */
                double dw = max_abs_diff(rfx_model_weights(a).data, rfx_model_weights(mem).data,
                                         D * 3);
                printf("source L-BFGS vs in memory: |dW| = %.3g, J %.12g vs %.12g\n", dw,
                       ra.objective, rm.objective);
                CHECK_NEAR(dw, 0, 1e-6);
                CHECK_NEAR(ra.objective, rm.objective, 1e-10 * rm.objective);
            } else {
                printf("source SGD: J = %.6g, in memory %.6g\n", ra.objective, rm.objective);
                CHECK_NEAR(ra.objective, rm.objective, 2e-2 * rm.objective);
            }
        }
        rfx_model_free(a);
        rfx_model_free(b);
        rfx_model_free(mem);
    }
    /* a source that changes between passes */
    for (int mode = 1; mode <= 2 && src; mode++) {
        wobble w;
        memset(&w, 0, sizeof w);
        w.inner = src;
        w.mode = mode;
        rfx_source ws = {wobble_next, wobble_rewind, NULL, &w};
        rfx_classify_params p = rfx_classify_params_default();
        p.cache_bytes = 0;
        rfx_model *m = NULL;
        CHECK_STATUS(rfx_classify_fit_source(f, &ws, &p, &m, NULL), RFX_EINVAL);
        CHECK(strstr(rfx_last_error(), mode == 1 ? "not seen in the first pass" : "first pass"));
        CHECK(m == NULL);
    }
    rfx_source_free(src);
    /* targets of two columns */
    double *Y2 = malloc(2 * n * sizeof *Y2);
    for (size_t i = 0; i < n; i++) Y2[2 * i] = Y2[2 * i + 1] = y[i];
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, n, d), rfx_cmat_of(Y2, n, 2), 0, &src));
    rfx_classify_params p = rfx_classify_params_default();
    rfx_model *m = NULL;
    CHECK_STATUS(rfx_classify_fit_source(f, src, &p, &m, NULL), RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "target columns") != NULL);
    rfx_source_free(src);
    free(Y2);
    rfx_features_free(f);
    free(X);
    free(y);
}

/* ---- one shard of a fit over workers ------------------------------------ */

/* A sum over one worker: the values stay; it records the calls and can
 * fail at a given call, or see a local failure. */
typedef struct one_worker {
    size_t calls, fail_at, first_n;
    rfx_status seen;
} one_worker;

static rfx_status one_sum(void *user, double *v, size_t n, rfx_status local)
{
    one_worker *w = user;
    (void)v;
    if (w->calls++ == 0) w->first_n = n;
    if (local) {
        w->seen = local;
        return local;
    }
    if (w->fail_at && w->calls == w->fail_at) return rfx_set_error(RFX_EIO, "the network failed");
    return RFX_OK;
}

static void test_shard(void)
{
    rfx_test_rng r = {77};
    const size_t n = 600, d = 2, D = 64;
    const double lab[3] = {-1, 0.5, 4};
    double *X, *y;
    make_data(&r, n, d, 3, lab, 0.05, &X, &y);
    rfx_features *f = make_features(d, D, 0.8, 3);
    rfx_source *src = NULL;
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), 250, &src));
    /* one worker is rfx_classify_fit_source, bit for bit, cached or not */
    for (int cached = 0; cached < 2; cached++) {
        rfx_classify_params p = rfx_classify_params_default();
        p.multiclass = RFX_MULTICLASS_SOFTMAX;
        p.balanced = 1;
        p.lambda = 1e-3;
        p.cache_bytes = cached ? (size_t)1 << 30 : 0;
        rfx_model *a = NULL, *b = NULL;
        rfx_classify_report ra, rb;
        CHECK_OK(rfx_classify_fit_source(f, src, &p, &a, &ra));
        one_worker w = {0, 0, 0, RFX_OK};
        rfx_classify_shard sh = {lab, 3, one_sum, &w};
        CHECK_OK(rfx_classify_fit_shard(f, src, &p, &sh, &b, &rb));
        CHECK_MSG(same_model(a, b), "one shard differs from the source fit (cached %d)", cached);
        CHECK(ra.objective == rb.objective && ra.iterations == rb.iterations);
        CHECK(w.first_n == 4 && w.calls == 1 + rb.passes - (cached ? 2 : 1));
        size_t C = 0;
        const double *cl = NULL;
        CHECK_OK(rfx_model_classes(b, &cl, &C));
        CHECK(C == 3 && cl[2] == 4);
        rfx_model_free(a);
        rfx_model_free(b);
    }
    rfx_classify_params p = rfx_classify_params_default();
    rfx_model *m = NULL;
    /* a class the shard's rows lack is still a class of the model */
    const double more[4] = {-1, 0.5, 4, 9};
    one_worker w = {0, 0, 0, RFX_OK};
    rfx_classify_shard sh = {more, 4, one_sum, &w};
    CHECK_OK(rfx_classify_fit_shard(f, src, &p, &sh, &m, NULL));
    CHECK(rfx_model_weights(m).cols == 4);
    rfx_model_free(m);
    m = NULL;
    /* local failures go into the first sum: a label not among the classes */
    const double two[2] = {-1, 0.5};
    w = (one_worker){0, 0, 0, RFX_OK};
    sh = (rfx_classify_shard){two, 2, one_sum, &w};
    CHECK_STATUS(rfx_classify_fit_shard(f, src, &p, &sh, &m, NULL), RFX_EINVAL);
    CHECK(w.calls == 1 && w.seen == RFX_EINVAL && m == NULL);
    CHECK(strstr(rfx_last_error(), "has the label 4, not one of the 2 classes given") != NULL);
    /* ... classes out of order, the hinge loss, SGD */
    const double bad[3] = {0.5, -1, 4};
    w = (one_worker){0, 0, 0, RFX_OK};
    sh = (rfx_classify_shard){bad, 3, one_sum, &w};
    CHECK_STATUS(rfx_classify_fit_shard(f, src, &p, &sh, &m, NULL), RFX_EINVAL);
    CHECK(w.calls == 1 && strstr(rfx_last_error(), "classes[1]") != NULL);
    sh = (rfx_classify_shard){lab, 3, one_sum, &w};
    p.optimizer = RFX_OPTIMIZER_SGD;
    CHECK_STATUS(rfx_classify_fit_shard(f, src, &p, &sh, &m, NULL), RFX_EINVAL);
    p = rfx_classify_params_default();
    p.loss = RFX_LOSS_HINGE;
    CHECK_STATUS(rfx_classify_fit_shard(f, src, &p, &sh, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "not hinge") != NULL);
    /* a sum that fails in the iterations fails the fit */
    p = rfx_classify_params_default();
    w = (one_worker){0, 5, 0, RFX_OK};
    CHECK_STATUS(rfx_classify_fit_shard(f, src, &p, &sh, &m, NULL), RFX_EIO);
    CHECK(w.calls == 5 && m == NULL);
    /* no shard, no sum */
    CHECK_STATUS(rfx_classify_fit_shard(f, src, &p, NULL, &m, NULL), RFX_EINVAL);
    rfx_source_free(src);
    /* an empty shard: too few rows in all (with one worker) */
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, 0, d), rfx_cmat_of(y, 0, 1), 0, &src));
    w = (one_worker){0, 0, 0, RFX_OK};
    CHECK_STATUS(rfx_classify_fit_shard(f, src, &p, &sh, &m, NULL), RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "0 rows in all") != NULL);
    rfx_source_free(src);
    rfx_features_free(f);
    free(X);
    free(y);
}

/* ---- the one-call fit ------------------------------------------------------ */

/* Two classes in 2-D: inside the unit disc, and a ring 1.3 < |x| < 2 */
static void ring_data(rfx_test_rng *r, size_t n, double *X, double *y)
{
    for (size_t i = 0; i < n; i++) {
        int k = i % 2;
        double rad = k ? 1.3 + 0.7 * rfx_test_uniform(r) : sqrt(rfx_test_uniform(r));
        double a = 6.283185307179586 * rfx_test_uniform(r);
        X[2 * i] = 5 + 3 * rad * cos(a); /* unscaled: the fit standardises */
        X[2 * i + 1] = -1 + rad * sin(a);
        y[i] = k ? 2.5 : -4;
    }
}

/* A path of penalties (rfx__classify_fit_path): L-BFGS started from the
 * solution of the penalty before reaches the same optimum as a fit from 0
 * (the objective is strictly convex) in fewer iterations in all; dual CD
 * starts each penalty from 0, so its path is the cold fits bit for bit. */
static void test_fit_path(void)
{
    rfx_test_rng r = {23};
    const size_t n = 300, d = 3, D = 96;
    const double lab[3] = {0, 1, 2}, lambdas[4] = {1e-1, 1e-2, 1e-3, 1e-4};
    double *X, *y;
    make_data(&r, n, d, 3, lab, 0.05, &X, &y);
    rfx_features *f = make_features(d, D, 0.8, 29);
    uint32_t yi[300];
    for (size_t i = 0; i < n; i++) yi[i] = (uint32_t)y[i];
    for (int h = 0; h < 2; h++) {
        rfx_classify_params cp = rfx_classify_params_default();
        cp.loss = h ? RFX_LOSS_HINGE : RFX_LOSS_LOGISTIC;
        cp.tol = 1e-10;
        cp.max_iter = 5000;
        rfx_model *path[4] = {NULL};
        rfx_classify_report rp[4];
        CHECK_OK(rfx__classify_fit_path(f, rfx_cmat_of(X, n, d), yi, lab, 3, &cp, lambdas, 4, path,
                                        rp));
        size_t warm = 0, cold = 0;
        for (size_t l = 0; l < 4; l++) {
            rfx_classify_params c1 = cp;
            c1.lambda = lambdas[l];
            rfx_model *m = NULL;
            rfx_classify_report rc;
            CHECK_OK(rfx__classify_fit_indexed(f, rfx_cmat_of(X, n, d), yi, lab, 3, &c1, &m, &rc));
            if (!m || !path[l]) continue;
            rfx_cmat Wp = rfx_model_weights(path[l]), Wc = rfx_model_weights(m);
            double dw = 0, wmax = 0;
            for (size_t i = 0; i < Wc.rows * Wc.cols; i++) {
                dw = fmax(dw, fabs(Wp.data[i] - Wc.data[i]));
                wmax = fmax(wmax, fabs(Wc.data[i]));
            }
            if (h) {
                CHECK_MSG(same_model(path[l], m), "hinge path, lambda %g: not the cold fit's bits",
                          lambdas[l]);
            } else {
                CHECK(rp[l].converged && rc.converged);
                CHECK_MSG(dw <= 1e-6 * wmax, "logistic path, lambda %g: |dW| = %.3g of %.3g",
                          lambdas[l], dw, wmax);
            }
            CHECK(path[l]->lambda == lambdas[l]);
            warm += rp[l].iterations;
            cold += rc.iterations;
            rfx_model_free(m);
            rfx_model_free(path[l]);
        }
        printf("path (%s): %zu iterations from the previous solution, %zu from 0\n",
               rfx_loss_name(cp.loss), warm, cold);
        if (!h) CHECK(warm < cold);
    }
    /* bad lambdas */
    rfx_classify_params cp = rfx_classify_params_default();
    rfx_model *m[2] = {NULL, NULL};
    const double bad[2] = {1e-2, 0.0};
    CHECK_STATUS(rfx__classify_fit_path(f, rfx_cmat_of(X, n, d), yi, lab, 3, &cp, bad, 2, m, NULL),
                 RFX_EINVAL);
    CHECK(m[0] == NULL && m[1] == NULL);
    rfx_features_free(f);
    free(X);
    free(y);
}

static void test_model_fit(void)
{
    rfx_test_rng r = {19};
    const size_t n = 400, nt = 400;
    double *X = malloc(2 * n * sizeof *X), *y = malloc(n * sizeof *y);
    double *Xt = malloc(2 * nt * sizeof *Xt), *yt = malloc(nt * sizeof *yt);
    double *L = malloc(nt * sizeof *L);
    ring_data(&r, n, X, y);
    ring_data(&r, nt, Xt, yt);
    for (int h = 0; h < 2; h++) {
        rfx_classify_params cp = rfx_classify_params_default();
        cp.loss = h ? RFX_LOSS_HINGE : RFX_LOSS_LOGISTIC;
        rfx_fit_params p = rfx_fit_params_default();
        p.method = RFX_METHOD_CLASSIFY;
        p.features.n_features = 256;
        p.classify = &cp;
        p.classify_folds = h ? 2 : 0;
        rfx_model *m = NULL;
        rfx_fit_report rep;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, 2), rfx_cmat_of(y, n, 1), &m, &rep));
        if (!m) continue;
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(Xt, nt, 2), rfx_mat_of(L, nt, 1),
                                   rfx_mat_none()));
        size_t correct = 0;
        for (size_t i = 0; i < nt; i++) correct += L[i] == yt[i];
        double acc = (double)correct / (double)nt;
        printf("rfx_model_fit %s: length scale %.4g, lambda %g, validation score %.4g over %zu "
               "candidates; held-out accuracy %.4f\n", rfx_loss_name(cp.loss), rep.length_scale,
               rep.lambda, rep.score, rep.n_candidates, acc);
        CHECK(acc > 0.95);
        /* rows alternate between the classes: the folds still hold both */
        CHECK(rep.score < (h ? 0.05 : 0.2));
        /* 9 scales x 5 penalties, and the best scale's path extended by a
         * decade at a time (up to two per side) while its best is on an edge */
        CHECK(rep.n_candidates == 45 || rep.n_candidates == 51 || rep.n_candidates == 58);
        CHECK(rep.lambda >= 1e-7 && rep.lambda <= 10);
        rfx_model_info info;
        CHECK_OK(rfx_model_get_info(m, &info));
        CHECK(info.standardized && info.method == RFX_METHOD_CLASSIFY);
        rfx_model_free(m);
    }
    /* a given length scale and lambda: nothing chosen. Without classify
     * settings the fit is the default classifier (RFX_LOSS_AUTO: least
     * squares, whose one lambda is scored by its LOO error, then refined),
     * the same model as with the loss given; the logistic loss scores
     * nothing */
    for (int given = 0; given < 3; given++) {
        rfx_classify_params cp = rfx_classify_params_default();
        cp.loss = given == 1 ? RFX_LOSS_AUTO : RFX_LOSS_LOGISTIC;
        rfx_fit_params p = rfx_fit_params_default();
        p.method = RFX_METHOD_CLASSIFY;
        p.features.n_features = 128;
        p.features.length_scale = 0.5;
        p.lambda = 1e-3;
        p.classify = given ? &cp : NULL;
        rfx_model *m = NULL;
        rfx_fit_report rep;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, 2), rfx_cmat_of(y, n, 1), &m, &rep));
        CHECK(rep.length_scale == 0.5 && rep.lambda == 1e-3);
        if (given == 2) {
            CHECK(rep.n_candidates == 0 && isnan(rep.score));
        } else {
            CHECK(rep.n_candidates == 1 && rep.score >= 0 && rep.score < 0.1);
            CHECK(rep.refine_holdout == n / RFX__REFINE_HOLDOUT);
        }
        if (m && given < 2) {
            static double scores[2][8];
            rfx_mat S = rfx_mat_of(scores[given], 8, 1);
            CHECK_OK(rfx_model_decision(m, rfx_cmat_of(Xt, 8, 2), S));
            if (given == 1)
                CHECK(memcmp(scores[0], scores[1], sizeof scores[0]) == 0);
        }
        rfx_model_free(m);
    }
    free(X);
    free(y);
    free(Xt);
    free(yt);
    free(L);
}

/* ---- the least-squares classifier: closed-form leave-one-out ------------- */

/* The LOO error count and squared error of the squared-loss classifier at
 * penalty lambda, by n explicit refits on n - 1 rows each (alpha = n lambda
 * / 2 held fixed, so a refit takes lambda n / (n - 1)). */
static void loo_by_refits(const rfx_features *f, const double *X, size_t n, size_t d,
                          const uint32_t *y, const double *classes, size_t C, int icpt,
                          double lambda, double *err, double *sse)
{
    const size_t K = C == 2 ? 1 : C;
    double *Xi = malloc((n - 1) * d * sizeof *Xi), s[8];
    uint32_t *yi = malloc((n - 1) * sizeof *yi);
    *err = *sse = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t r = 0, j = 0; r < n; r++) {
            if (r == i) continue;
            memcpy(Xi + j * d, X + r * d, d * sizeof *Xi);
            yi[j++] = y[r];
        }
        double li = lambda * (double)n / (double)(n - 1);
        rfx__lsq_result res;
        rfx_model *m = NULL;
        CHECK_OK(rfx__classify_lsq(f, rfx_cmat_of(Xi, n - 1, d), yi, classes, C, icpt, &li, 1, 1,
                                   &res, &m, NULL));
        if (!m) break;
        CHECK_OK(rfx_model_decision(m, rfx_cmat_of(X + i * d, 1, d), rfx_mat_of(s, 1, K)));
        size_t best = 0;
        for (size_t k = 0; k < K; k++) {
            double t = (K == 1 ? y[i] == 1 : y[i] == k) ? 1.0 : -1.0;
            *sse += (t - s[k]) * (t - s[k]);
            if (s[k] > s[best]) best = k;
        }
        *err += (K == 1 ? s[0] > 0 : best) != y[i];
        rfx_model_free(m);
    }
    free(Xi);
    free(yi);
}

/* With fewer rows than features the closed form runs on the n x n Gram
 * matrix (the dual): its LOO errors equal n explicit refits, and its
 * choice, scores and temperature equal the primal form's on the same
 * rows (rfx__classify_lsq_solve from the statistics). */
static void test_squared_dual(void)
{
    rfx_test_rng r = {31};
    const double lab3[3] = {-1, 2, 7}, lab2[2] = {0, 1};
    for (int two = 0; two < 2; two++) {
        const size_t n = 40, d = 3, C = two ? 2 : 3, K = two ? 1 : C, D = 96;
        double *X, *yl, *classes;
        size_t Cf;
        make_data(&r, n, d, C, two ? lab2 : lab3, 0.1, &X, &yl);
        CHECK_OK(rfx__classify_classes(yl, n, 1, "test", &classes, &Cf));
        uint32_t y[40];
        rfx__classify_index(yl, n, 1, classes, C, y);
        rfx_features *f = make_features(d, D, 1.0, 9);
        for (int icpt = 1; icpt >= 0; icpt--) {
            /* one lambda against refits (each on n - 1 < D rows: dual too) */
            const double lam = 1e-2;
            rfx__lsq_result rd, rp;
            double bf_err, bf_sse;
            CHECK_OK(rfx__classify_lsq(f, rfx_cmat_of(X, n, d), y, classes, C, icpt, &lam, 1, 1,
                                       &rd, NULL, NULL));
            loo_by_refits(f, X, n, d, y, classes, C, icpt, lam, &bf_err, &bf_sse);
            CHECK_NEAR(rd.error * (double)n, bf_err, 1e-9);
            CHECK_NEAR(rd.mse * (double)n, bf_sse, 1e-7 * bf_sse);
            /* the automatic grid: dual against primal */
            rfx_model *md = NULL, *mp = NULL;
            rfx_stats *st = NULL;
            CHECK_OK(rfx__classify_lsq(f, rfx_cmat_of(X, n, d), y, classes, C, icpt, NULL, 0, 1,
                                       &rd, &md, NULL));
            CHECK_OK(rfx_stats_create(D, K, &st));
            CHECK_OK(rfx__classify_lsq_add(st, f, rfx_cmat_of(X, n, d), y, C));
            CHECK_OK(rfx__classify_lsq_solve(f, st, rfx_cmat_of(X, n, d), y, classes, C, icpt,
                                             NULL, 0, 1, &rp, &mp, NULL));
            CHECK_MSG(fabs(rd.lambda - rp.lambda) <= 1e-12 * rp.lambda && rd.error == rp.error &&
                          rd.n_lambdas == rp.n_lambdas,
                      "dual lambda %.17g error %g (%zu), primal %.17g %g (%zu)", rd.lambda,
                      rd.error, rd.n_lambdas, rp.lambda, rp.error, rp.n_lambdas);
            CHECK_NEAR(rd.mse, rp.mse, 1e-8 * rp.mse);
            CHECK_NEAR(rd.temperature, rp.temperature, 1e-6 * rp.temperature);
            if (md && mp) {
                double Sd[40 * 3], Sp[40 * 3], top = 0, gap = 0;
                CHECK_OK(rfx_model_decision(md, rfx_cmat_of(X, n, d), rfx_mat_of(Sd, n, K)));
                CHECK_OK(rfx_model_decision(mp, rfx_cmat_of(X, n, d), rfx_mat_of(Sp, n, K)));
                for (size_t i = 0; i < n * K; i++) {
                    top = fmax(top, fabs(Sp[i]));
                    gap = fmax(gap, fabs(Sd[i] - Sp[i]));
                }
                CHECK_MSG(gap <= 1e-7 * top, "dual scores %.3g from the primal's (lambda %g)",
                          gap / top, rd.lambda);
            }
            rfx_model_free(md);
            rfx_model_free(mp);
            rfx_stats_free(st);
        }
        rfx_features_free(f);
        free(X);
        free(yl);
        free(classes);
    }
}

static void test_squared_loo(void)
{
    rfx_test_rng r = {23};
    const double lab3[3] = {-1, 2, 7}, lab2[2] = {0, 1};
    for (int two = 0; two < 2; two++) {
        const size_t n = 40, d = 3, C = two ? 2 : 3, K = two ? 1 : C, D = 24;
        double *X, *yl;
        make_data(&r, n, d, C, two ? lab2 : lab3, 0.1, &X, &yl);
        double *classes;
        size_t Cf;
        CHECK_OK(rfx__classify_classes(yl, n, 1, "test", &classes, &Cf));
        CHECK(Cf == C);
        uint32_t y[40];
        rfx__classify_index(yl, n, 1, classes, C, y);
        rfx_features *f = make_features(d, D, 1.0, 5);
        const double lambdas[6] = {1.0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5};
        double bf_err[6], bf_sse[6];
        for (int icpt = 1; icpt >= 0; icpt--) {
            for (size_t g = 0; g < 6; g++) {
                /* the closed form of one lambda against n explicit refits */
                rfx__lsq_result res;
                CHECK_OK(rfx__classify_lsq(f, rfx_cmat_of(X, n, d), y, classes, C, icpt,
                                           &lambdas[g], 1, 1, &res, NULL, NULL));
                loo_by_refits(f, X, n, d, y, classes, C, icpt, lambdas[g], &bf_err[g], &bf_sse[g]);
                CHECK_NEAR(res.error * (double)n, bf_err[g], 1e-9);
                CHECK_NEAR(res.mse * (double)n, bf_sse[g], 1e-7 * bf_sse[g]);
                CHECK(res.lambda == lambdas[g] && res.n_lambdas == 1);
                CHECK(res.temperature > 0);
            }
            /* the grid's choice is the brute-force argmin: fewest errors, then
             * the smallest squared error */
            rfx__lsq_result res;
            CHECK_OK(rfx__classify_lsq(f, rfx_cmat_of(X, n, d), y, classes, C, icpt, lambdas, 6,
                                       1, &res, NULL, NULL));
            size_t best = 0;
            for (size_t g = 1; g < 6; g++)
                if (bf_err[g] < bf_err[best] ||
                    (bf_err[g] == bf_err[best] && bf_sse[g] < bf_sse[best]))
                    best = g;
            CHECK(res.lambda == lambdas[best] && res.n_lambdas == 6);
        }
        /* the closed form minimises the squared-loss objective: L-BFGS agrees */
        rfx_model *mc = NULL, *mb = NULL;
        rfx__lsq_result res;
        const double lam = 1e-3;
        CHECK_OK(rfx__classify_lsq(f, rfx_cmat_of(X, n, d), y, classes, C, 1, &lam, 1, 1, &res,
                                   &mc, NULL));
        rfx_classify_params cp = tight(RFX_LOSS_SQUARED, RFX_OPTIMIZER_LBFGS, lam);
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), yl, &cp, &mb, NULL));
        if (mc && mb) {
            for (size_t j = 0; j < D * K; j++) CHECK_NEAR(mc->W[j], mb->W[j], 1e-6);
            for (size_t k = 0; k < K; k++) CHECK_NEAR(mc->intercept[k], mb->intercept[k], 1e-6);
            /* probabilities: softmax (sigmoid) of the scores over the temperature */
            double S[8], P[8];
            CHECK_OK(rfx_model_decision(mc, rfx_cmat_of(X, 1, d), rfx_mat_of(S, 1, K)));
            CHECK_OK(rfx_model_predict_proba(mc, rfx_cmat_of(X, 1, d), rfx_mat_of(P, 1, C)));
            const double T = mc->noise_var;
            if (K == 1) {
                CHECK_NEAR(P[1], 1.0 / (1.0 + exp(-S[0] / T)), 1e-12);
            } else {
                double sum = 0;
                for (size_t k = 0; k < C; k++) sum += exp(S[k] / T);
                for (size_t k = 0; k < C; k++) CHECK_NEAR(P[k], exp(S[k] / T) / sum, 1e-12);
            }
            /* an L-BFGS model has no calibrated temperature */
            CHECK_STATUS(rfx_model_predict_proba(mb, rfx_cmat_of(X, 1, d), rfx_mat_of(P, 1, C)),
                         RFX_EINVAL);
        }
        rfx_model_free(mc);
        rfx_model_free(mb);
        rfx_features_free(f);
        free(classes);
        free(X);
        free(yl);
    }
}

/* The temperature minimises the calibration rows' negative log-likelihood:
 * its derivative in 1 / T vanishes there (checked by a central difference). */
static void test_temperature(void)
{
    rfx_test_rng r = {29};
    const size_t m = 200, K = 4;
    double S[800];
    uint32_t y[200];
    for (size_t i = 0; i < m; i++) {
        y[i] = (uint32_t)(rfx_test_uniform(&r) * K) % K;
        for (size_t k = 0; k < K; k++)
            S[i * K + k] = (k == y[i] ? 0.6 : -0.2) + 3.0 * (rfx_test_uniform(&r) - 0.5);
    }
    const double T = rfx__classify_temperature(S, y, m, K), b = 1.0 / T, h = 1e-4 * b;
    double nll[2];
    for (int s = 0; s < 2; s++) {
        double beta = s ? b + h : b - h, total = 0;
        for (size_t i = 0; i < m; i++) {
            double sum = 0;
            for (size_t k = 0; k < K; k++) sum += exp(beta * S[i * K + k]);
            total += log(sum) - beta * S[i * K + y[i]];
        }
        nll[s] = total / (double)m;
    }
    CHECK(T > 1e-2 && T < 1e2);
    CHECK_NEAR((nll[1] - nll[0]) / (2 * h), 0.0, 1e-6);
}

/* rfx_model_fit with the squared loss: the length scale found by doublings
 * and bisection matches the best of a brute-force scan of 161 scales (the same
 * rows, features and LOO choice of lambda at each): the same LOO error,
 * the squared error within the search's resolution. */
static void test_squared_model_fit(void)
{
    rfx_test_rng r = {31};
    const size_t n = 300, d = 2, D = 64;
    double *X = malloc(d * n * sizeof *X), *y = malloc(n * sizeof *y);
    ring_data(&r, n, X, y);
    rfx_classify_params cp = rfx_classify_params_default();
    cp.loss = RFX_LOSS_SQUARED;
    rfx_fit_params p = rfx_fit_params_default();
    p.method = RFX_METHOD_CLASSIFY;
    p.features.n_features = D;
    p.classify = &cp;
    rfx_model *m = NULL;
    rfx_fit_report rep;
    CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &m, &rep));
    /* brute force on the standardised rows */
    double mean[2], scale[2], *Xs = malloc(d * n * sizeof *Xs), *classes;
    size_t C;
    uint32_t *yi = malloc(n * sizeof *yi);
    rfx__standardize(rfx_cmat_of(X, n, d), mean, scale, Xs, d);
    CHECK_OK(rfx__classify_classes(y, n, 1, "test", &classes, &C));
    rfx__classify_index(y, n, 1, classes, C, yi);
    double be = INFINITY, bq = INFINITY, bl = 0, ce = NAN, cq = NAN;
    for (int k = -80; k <= 81; k++) {
        rfx_features_params fp = p.features;
        fp.length_scale = k <= 80 ? sqrt((double)d) * pow(2.0, k / 16.0) : rep.length_scale;
        rfx_features *f = NULL;
        CHECK_OK(rfx_features_create(&fp, d, &f));
        rfx__lsq_result res;
        CHECK_OK(rfx__classify_lsq(f, rfx_cmat_of(Xs, n, d), yi, classes, C, 1, NULL, 0, 1, &res,
                                   NULL, NULL));
        rfx_features_free(f);
        if (k == 81) {
            ce = res.error;
            cq = res.mse;
        } else if (res.error < be || (res.error == be && res.mse < bq)) {
            be = res.error;
            bq = res.mse;
            bl = fp.length_scale;
        }
    }
    printf("squared loss: chosen length scale %.4g (LOO error %.4f, mse %.5f, lambda %g, %zu "
           "candidates); brute force %.4g (LOO error %.4f, mse %.5f)\n", rep.length_scale, ce,
           cq, rep.lambda, rep.n_candidates, bl, be, bq);
    CHECK(ce == be);
    /* three bisection rounds stop at steps of 1/8 of a doubling: the best
     * scale may lie 1/16 of a doubling (0.043 in log l) from a tried one */
    CHECK(cq <= bq * 1.03);
    CHECK(fabs(log(rep.length_scale / bl)) < 0.25);
    CHECK(rep.score == ce);
    rfx_classifier_info ci;
    if (m) {
        CHECK_OK(rfx_model_classifier_info(m, &ci));
        CHECK(ci.loss == RFX_LOSS_SQUARED && ci.lambda == rep.lambda);
        /* the file keeps the loss and the temperature */
        void *buf = NULL;
        size_t len = 0;
        rfx_model *back = NULL;
        CHECK_OK(rfx_model_save_buffer(m, &buf, &len));
        CHECK_OK(rfx_model_load_buffer(buf, len, &back));
        double P1[2], P2[2];
        CHECK_OK(rfx_model_predict_proba(m, rfx_cmat_of(X, 1, d), rfx_mat_of(P1, 1, 2)));
        if (back) {
            CHECK_OK(rfx_model_classifier_info(back, &ci));
            CHECK(ci.loss == RFX_LOSS_SQUARED);
            CHECK_OK(rfx_model_predict_proba(back, rfx_cmat_of(X, 1, d), rfx_mat_of(P2, 1, 2)));
            CHECK(P1[0] == P2[0] && P1[1] == P2[1]);
        }
        rfx_model_free(back);
        rfx_buffer_free(buf);
    }
    /* the scales of a search step are fitted side by side: the choice and
     * the model are the same bits on 1 and 2 threads */
    for (int nt = 1; nt <= 2; nt++) {
        rfx_fit_params q = p;
        q.features.n_threads = nt;
        rfx_model *mt = NULL;
        rfx_fit_report rt;
        CHECK_OK(rfx_model_fit(&q, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &mt, &rt));
        CHECK_MSG(rt.length_scale == rep.length_scale && rt.lambda == rep.lambda &&
                      rt.n_candidates == rep.n_candidates && same_model(m, mt),
                  "%d thread(s): length scale %.17g, lambda %.17g against %.17g, %.17g", nt,
                  rt.length_scale, rt.lambda, rep.length_scale, rep.lambda);
        rfx_model_free(mt);
    }
    rfx_model_free(m);
    free(X);
    free(y);
    free(Xs);
    free(yi);
    free(classes);
}

/* ---- errors ---------------------------------------------------------------- */

static int stop_now(void *user, const char *stage, double frac)
{
    (void)user;
    (void)stage;
    return frac > 0;
}

#define EXPECT_ERR(call, status, text)                                                   \
    do {                                                                                  \
        CHECK_STATUS(call, status);                                                       \
        CHECK_MSG(strstr(rfx_last_error(), text) != NULL, "message '%s' lacks '%s'",      \
                  rfx_last_error(), text);                                                \
    } while (0)

static void test_errors(void)
{
    rfx_test_rng r = {20};
    const size_t n = 40, d = 2;
    const double lab[2] = {0, 1};
    double *X, *y;
    make_data(&r, n, d, 2, lab, 0, &X, &y);
    rfx_features *f = make_features(d, 16, 1, 1);
    rfx_cmat Xc = rfx_cmat_of(X, n, d);
    rfx_model *m = NULL;
    rfx_classify_params p = rfx_classify_params_default();

    EXPECT_ERR(rfx_classify_fit(NULL, Xc, y, &p, &m, NULL), RFX_EINVAL, "f is NULL");
    EXPECT_ERR(rfx_classify_fit(f, Xc, y, &p, NULL, NULL), RFX_EINVAL, "out is NULL");
    EXPECT_ERR(rfx_classify_fit(f, Xc, y, NULL, &m, NULL), RFX_EINVAL, "params is NULL");
    EXPECT_ERR(rfx_classify_fit(f, Xc, NULL, &p, &m, NULL), RFX_EINVAL, "labels is NULL");
    EXPECT_ERR(rfx_classify_fit(f, rfx_cmat_of(X, n / 2, 1), y, &p, &m, NULL), RFX_EDIM,
               "columns");
    EXPECT_ERR(rfx_classify_fit(f, rfx_cmat_of(X, 1, d), y, &p, &m, NULL), RFX_EDIM,
               "at least 2");
    /* labels */
    double *yy = malloc(n * sizeof *yy);
    for (size_t i = 0; i < n; i++) yy[i] = 4;
    EXPECT_ERR(rfx_classify_fit(f, Xc, yy, &p, &m, NULL), RFX_EINVAL, "at least 2 classes");
    memcpy(yy, y, n * sizeof *yy);
    yy[7] = NAN;
    EXPECT_ERR(rfx_classify_fit(f, Xc, yy, &p, &m, NULL), RFX_EPARSE, "row 7");
    yy[7] = INFINITY;
    EXPECT_ERR(rfx_classify_fit(f, Xc, yy, &p, &m, NULL), RFX_EPARSE, "not a finite label");
    free(yy);
    double *Xn = malloc(n * d * sizeof *Xn);
    memcpy(Xn, X, n * d * sizeof *Xn);
    Xn[5 * d + 1] = NAN;
    EXPECT_ERR(rfx_classify_fit(f, rfx_cmat_of(Xn, n, d), y, &p, &m, NULL), RFX_EPARSE,
               "row 5, column 1");
    free(Xn);
    {
        const size_t big = RFX_CLASSIFY_MAX_CLASSES + 1;
        double *Xb = calloc(big * d, sizeof *Xb), *yb = malloc(big * sizeof *yb);
        for (size_t i = 0; i < big; i++) yb[i] = (double)i;
        EXPECT_ERR(rfx_classify_fit(f, rfx_cmat_of(Xb, big, d), yb, &p, &m, NULL), RFX_EINVAL,
                   "distinct labels");
        free(Xb);
        free(yb);
    }
    /* fields */
#define BAD_FIELD(stmt, text)                                                            \
    do {                                                                                  \
        rfx_classify_params q = rfx_classify_params_default();                            \
        stmt;                                                                             \
        EXPECT_ERR(rfx_classify_fit(f, Xc, y, &q, &m, NULL), RFX_EINVAL, text);          \
    } while (0)
    BAD_FIELD(q.loss = (rfx_loss)4, "classify.loss");
    BAD_FIELD(q.multiclass = (rfx_multiclass)2, "classify.multiclass");
    BAD_FIELD(q.optimizer = (rfx_optimizer)4, "classify.optimizer");
    BAD_FIELD(q.lambda = 0, "classify.lambda");
    BAD_FIELD(q.lambda = NAN, "classify.lambda");
    BAD_FIELD(q.fit_intercept = 2, "classify.fit_intercept");
    BAD_FIELD(q.balanced = 3, "classify.balanced");
    BAD_FIELD(q.max_iter = 0, "classify.max_iter");
    BAD_FIELD(q.tol = 0, "classify.tol");
    BAD_FIELD(q.epochs = 0, "classify.epochs");
    BAD_FIELD(q.batch_size = 0, "classify.batch_size");
    BAD_FIELD(q.learning_rate = -1, "classify.learning_rate");
    BAD_FIELD(q.n_threads = -1, "classify.n_threads");
    BAD_FIELD((q.loss = RFX_LOSS_HINGE, q.multiclass = RFX_MULTICLASS_SOFTMAX),
              "softmax takes the logistic loss");
    BAD_FIELD((q.loss = RFX_LOSS_HINGE, q.optimizer = RFX_OPTIMIZER_LBFGS),
              "lbfgs needs a differentiable loss");
    BAD_FIELD(q.optimizer = RFX_OPTIMIZER_DUAL_CD, "dual-cd is for the hinge");
    BAD_FIELD((q.loss = RFX_LOSS_HINGE, q.optimizer = RFX_OPTIMIZER_DUAL_CD, q.cache_bytes = 0),
              "dual-cd needs the");
    const double w3[3] = {1, 1, 1}, wneg[2] = {1, -1}, wzero[2] = {0, 0};
    BAD_FIELD((q.class_weights = w3, q.n_class_weights = 3), "3 weights for 2 classes");
    BAD_FIELD((q.class_weights = wneg, q.n_class_weights = 2), "class_weights[1]");
    BAD_FIELD((q.class_weights = wzero, q.n_class_weights = 2), "all 2 weights are zero");
    BAD_FIELD((q.class_weights = w3, q.n_class_weights = 2, q.balanced = 1), "not both");
    BAD_FIELD(q.n_class_weights = 2, "NULL with n_class_weights");
    /* cancelled */
    {
        rfx_classify_params q = rfx_classify_params_default();
        q.progress = stop_now;
        EXPECT_ERR(rfx_classify_fit(f, Xc, y, &q, &m, NULL), RFX_ECANCELLED, "cancelled");
        CHECK(m == NULL);
    }
    /* sources */
    EXPECT_ERR(rfx_classify_fit_source(f, NULL, &p, &m, NULL), RFX_EINVAL, "src is NULL");
    /* names */
    rfx_loss l;
    rfx_multiclass mc;
    rfx_optimizer o;
    CHECK_OK(rfx_loss_from_name("squared-hinge", &l));
    CHECK(l == RFX_LOSS_SQUARED_HINGE && strcmp(rfx_loss_name(l), "squared-hinge") == 0);
    CHECK_OK(rfx_multiclass_from_name("softmax", &mc));
    CHECK(mc == RFX_MULTICLASS_SOFTMAX && strcmp(rfx_multiclass_name(mc), "softmax") == 0);
    CHECK_OK(rfx_optimizer_from_name("dual-cd", &o));
    CHECK(o == RFX_OPTIMIZER_DUAL_CD && strcmp(rfx_optimizer_name(o), "dual-cd") == 0);
    EXPECT_ERR(rfx_loss_from_name("square", &l), RFX_EINVAL,
               "logistic, hinge, squared-hinge, squared or auto");
    CHECK_OK(rfx_loss_from_name("auto", &l));
    CHECK(l == RFX_LOSS_AUTO && strcmp(rfx_loss_name(l), "auto") == 0);
    EXPECT_ERR(rfx_multiclass_from_name("ova", &mc), RFX_EINVAL, "ovr or softmax");
    EXPECT_ERR(rfx_optimizer_from_name("adam", &o), RFX_EINVAL, "auto, lbfgs, dual-cd or sgd");
    EXPECT_ERR(rfx_loss_from_name(NULL, &l), RFX_EINVAL, "NULL");
    CHECK(strcmp(rfx_loss_name((rfx_loss)9), "unknown") == 0);

    /* the model's functions */
    rfx_classify_params hp = rfx_classify_params_default();
    hp.loss = RFX_LOSS_HINGE;
    rfx_model *hm = NULL, *rm = NULL;
    CHECK_OK(rfx_classify_fit(f, Xc, y, &hp, &hm, NULL));
    double P[80], S[40];
    EXPECT_ERR(rfx_model_predict_proba(hm, Xc, rfx_mat_of(P, n, 2)), RFX_EINVAL,
               "the hinge loss");
    EXPECT_ERR(rfx_model_decision(hm, Xc, rfx_mat_of(S, n, 2)), RFX_EDIM, "expected 40 x 1");
    EXPECT_ERR(rfx_model_decision(hm, rfx_cmat_of(X, n, 1), rfx_mat_of(S, n, 1)), RFX_EDIM,
               "columns");
    EXPECT_ERR(rfx_model_predict(hm, Xc, rfx_mat_of(S, n, 1), rfx_mat_of(P, n, 1)), RFX_EINVAL,
               "no predictive standard deviation");
    EXPECT_ERR(rfx_model_predict(hm, Xc, rfx_mat_of(P, n, 2), rfx_mat_none()), RFX_EDIM,
               "expected 40 x 1");
    double Xbad[4] = {0, NAN, 1, 1};
    EXPECT_ERR(rfx_model_decision(hm, rfx_cmat_of(Xbad, 2, 2), rfx_mat_of(S, 2, 1)), RFX_EPARSE,
               "row 0, column 1");
    EXPECT_ERR(rfx_model_decision(NULL, Xc, rfx_mat_of(S, n, 1)), RFX_EINVAL, "model is NULL");
    rfx_ridge_params rp = rfx_ridge_params_default();
    CHECK_OK(rfx_ridge_fit(f, Xc, rfx_cmat_of(y, n, 1), &rp, &rm));
    const double *cls;
    size_t nc;
    rfx_classifier_info ci;
    EXPECT_ERR(rfx_model_classes(rm, &cls, &nc), RFX_EINVAL, "not a classifier");
    EXPECT_ERR(rfx_model_classes(hm, NULL, &nc), RFX_EINVAL, "NULL");
    EXPECT_ERR(rfx_model_classifier_info(rm, &ci), RFX_EINVAL, "not a classifier");
    EXPECT_ERR(rfx_model_classifier_info(hm, NULL), RFX_EINVAL, "info is NULL");
    EXPECT_ERR(rfx_model_decision(rm, Xc, rfx_mat_of(S, n, 1)), RFX_EINVAL, "not a classifier");
    EXPECT_ERR(rfx_model_predict_proba(rm, Xc, rfx_mat_of(P, n, 2)), RFX_EINVAL,
               "not a classifier");
    rfx_model_free(hm);
    rfx_model_free(rm);

    /* rfx_model_fit */
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_CLASSIFY;
    fp.features.n_features = 16;
    fp.classify_folds = 1;
    EXPECT_ERR(rfx_model_fit(&fp, Xc, rfx_cmat_of(y, n, 1), &m, NULL), RFX_EINVAL,
               "fit.classify_folds");
    fp.classify_folds = 0;
    fp.lambda = 0;
    EXPECT_ERR(rfx_model_fit(&fp, Xc, rfx_cmat_of(y, n, 1), &m, NULL), RFX_EINVAL, "fit.lambda");
    fp.lambda = -1;
    double Y2[80];
    EXPECT_ERR(rfx_model_fit(&fp, Xc, rfx_cmat_of(Y2, n, 2), &m, NULL), RFX_EDIM,
               "one column of labels");
    for (size_t i = 0; i < n; i++) Y2[i] = 1;
    EXPECT_ERR(rfx_model_fit(&fp, Xc, rfx_cmat_of(Y2, n, 1), &m, NULL), RFX_EINVAL,
               "at least 2 classes");
    Y2[3] = NAN;
    EXPECT_ERR(rfx_model_fit(&fp, Xc, rfx_cmat_of(Y2, n, 1), &m, NULL), RFX_EPARSE, "row 3");
    fp.method = RFX_METHOD_SINKS;
    EXPECT_ERR(rfx_model_fit(&fp, Xc, rfx_cmat_of(y, n, 1), &m, NULL), RFX_EINVAL,
               "rfx_sinks_fit");
    fp.method = RFX_METHOD_CLASSIFY;
    fp.progress = stop_now;
    EXPECT_ERR(rfx_model_fit(&fp, Xc, rfx_cmat_of(y, n, 1), &m, NULL), RFX_ECANCELLED,
               "cancelled");
    CHECK(m == NULL);
    rfx_features_free(f);
    free(X);
    free(y);
}

/* rfx_classes_find: the sorted distinct labels, any count, strided; the
 * row of a non-finite label named. */
static void test_classes_find(void)
{
    const double y[12] = {7, -1, 0, 7, 1, 0, 7, 1, 0.5, 0, -1, 1}; /* column 0 of 6 x 2 */
    double *c = NULL;
    size_t k = 0;
    CHECK_OK(rfx_classes_find(y, 12, 1, &c, &k));
    CHECK(k == 5 && c[0] == -1 && c[1] == 0 && c[2] == 0.5 && c[3] == 1 && c[4] == 7);
    rfx_buffer_free(c);
    CHECK_OK(rfx_classes_find(y, 6, 2, &c, &k)); /* 7 0 1 7 0.5 -1 */
    CHECK(k == 5 && c[0] == -1 && c[1] == 0 && c[2] == 0.5 && c[3] == 1 && c[4] == 7);
    rfx_buffer_free(c);
    CHECK_OK(rfx_classes_find(y, 1, 1, &c, &k)); /* one class is a result, not an error */
    CHECK(k == 1 && c[0] == 7);
    rfx_buffer_free(c);
    c = (double *)y;
    CHECK_OK(rfx_classes_find(NULL, 0, 1, &c, &k));
    CHECK(k == 0 && c == NULL);

    const double bad[3] = {0, NAN, 1};
    EXPECT_ERR(rfx_classes_find(bad, 3, 1, &c, &k), RFX_EPARSE, "row 1: nan is not a finite");
    EXPECT_ERR(rfx_classes_find(y, 3, 1, NULL, &k), RFX_EINVAL, "NULL");
    EXPECT_ERR(rfx_classes_find(y, 3, 1, &c, NULL), RFX_EINVAL, "NULL");
    EXPECT_ERR(rfx_classes_find(NULL, 3, 1, &c, &k), RFX_EINVAL, "labels is NULL");
}

/* rfx_class_weights_map: pairs placed on the sorted classes, 1 elsewhere;
 * the refusals name the pair or the label, and leave the weights alone. */
static void test_class_weights_map(void)
{
    const double classes[3] = {0, 1, 7};
    const double l[2] = {7, 0}, w[2] = {2.5, 0.5};
    double cw[3] = {-1, -1, -1};
    CHECK_OK(rfx_class_weights_map(classes, 3, l, w, 2, "cls", cw));
    CHECK(cw[0] == 0.5 && cw[1] == 1 && cw[2] == 2.5);
    CHECK_OK(rfx_class_weights_map(classes, 3, NULL, NULL, 0, NULL, cw));
    CHECK(cw[0] == 1 && cw[1] == 1 && cw[2] == 1);

    const double l5[1] = {5}, w1[1] = {1};
    cw[0] = -1;
    CHECK_STATUS(rfx_class_weights_map(classes, 3, l5, w1, 1, "cls", cw), RFX_EINVAL);
    CHECK(strcmp(rfx_last_error(), "5 is not a label of the target 'cls' (its classes: 0 1 7)") ==
          0);
    CHECK(cw[0] == -1);
    CHECK_STATUS(rfx_class_weights_map(classes, 3, l5, w1, 1, NULL, cw), RFX_EINVAL);
    CHECK(strcmp(rfx_last_error(), "5 is not a label of the target (its classes: 0 1 7)") == 0);
    const double l01[1] = {0.1};
    EXPECT_ERR(rfx_class_weights_map(classes, 3, l01, w1, 1, "y", cw), RFX_EINVAL,
               "0.1 is not a label of the target 'y'");
    /* at most 20 classes listed */
    double many[25];
    for (int i = 0; i < 25; i++) many[i] = i;
    EXPECT_ERR(rfx_class_weights_map(many, 25, l01, w1, 1, "y", cw), RFX_EINVAL,
               "(its classes: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 ... (25 in all))");

    const double ltwice[3] = {0, 7, 0}, wtwice[3] = {1, 2, 3};
    EXPECT_ERR(rfx_class_weights_map(classes, 3, ltwice, wtwice, 3, "cls", cw), RFX_EINVAL,
               "label 0 is given twice");
    const double wneg[2] = {1, -1};
    EXPECT_ERR(rfx_class_weights_map(classes, 3, l, wneg, 2, "cls", cw), RFX_EINVAL,
               "pair 2: the label must be finite and the weight a finite number >= 0");
    const double lnan[1] = {NAN};
    EXPECT_ERR(rfx_class_weights_map(classes, 3, lnan, w1, 1, "cls", cw), RFX_EINVAL, "pair 1");
    EXPECT_ERR(rfx_class_weights_map(NULL, 3, l, w, 2, "cls", cw), RFX_EINVAL, "NULL");
    EXPECT_ERR(rfx_class_weights_map(classes, 3, l, w, 2, "cls", NULL), RFX_EINVAL, "NULL");
    EXPECT_ERR(rfx_class_weights_map(classes, 3, NULL, w, 2, "cls", cw), RFX_EINVAL, "NULL");
    CHECK(cw[0] == -1);
}

/* rfx_fit_params_check and rfx_classify_params_check: the field named, and
 * rfx_model_fit refuses bad parameters before it looks at the data (here
 * rows it could not read: a NULL view, or NaN). */
static void test_params_check(void)
{
    rfx_fit_params p = rfx_fit_params_default();
    CHECK_OK(rfx_fit_params_check(&p));
    p.method = RFX_METHOD_CLASSIFY;
    CHECK_OK(rfx_fit_params_check(&p));
    EXPECT_ERR(rfx_fit_params_check(NULL), RFX_EINVAL, "params is NULL");

    rfx_classify_params cp = rfx_classify_params_default();
    CHECK_OK(rfx_classify_params_check(&cp));
    cp.loss = RFX_LOSS_HINGE;
    cp.optimizer = RFX_OPTIMIZER_LBFGS;
    EXPECT_ERR(rfx_classify_params_check(&cp), RFX_EINVAL, "classify.optimizer: lbfgs");
    p.classify = &cp;
    EXPECT_ERR(rfx_fit_params_check(&p), RFX_EINVAL, "classify.optimizer: lbfgs");
    cp.optimizer = RFX_OPTIMIZER_DUAL_CD;
    CHECK_OK(rfx_fit_params_check(&p));
    cp.lambda = 0; /* the fit chooses lambda (p.lambda < 0): not read */
    CHECK_OK(rfx_fit_params_check(&p));
    cp.fit_intercept = 7; /* replaced by the fit's */
    CHECK_OK(rfx_fit_params_check(&p));
    EXPECT_ERR(rfx_classify_params_check(&cp), RFX_EINVAL, "classify.lambda");
    EXPECT_ERR(rfx_classify_params_check(NULL), RFX_EINVAL, "params is NULL");
    cp = rfx_classify_params_default();
    cp.multiclass = RFX_MULTICLASS_SOFTMAX;
    cp.loss = RFX_LOSS_SQUARED_HINGE;
    EXPECT_ERR(rfx_fit_params_check(&p), RFX_EINVAL, "classify.multiclass: softmax");
    cp = rfx_classify_params_default();
    p.lambda = 0;
    EXPECT_ERR(rfx_fit_params_check(&p), RFX_EINVAL, "fit.lambda: a classifier needs lambda > 0");
    p.lambda = -1;
    p.classify_folds = 1;
    EXPECT_ERR(rfx_fit_params_check(&p), RFX_EINVAL, "fit.classify_folds");
    p.classify_folds = 0;
    p.select_rows = 1;
    EXPECT_ERR(rfx_fit_params_check(&p), RFX_EINVAL, "fit.select_rows");
    p.select_rows = 4000;
    p.method = RFX_METHOD_PCE;
    EXPECT_ERR(rfx_fit_params_check(&p), RFX_EINVAL, "fit.method: pce models");
    p.method = RFX_METHOD_RIDGE;
    p.lambda = NAN;
    EXPECT_ERR(rfx_fit_params_check(&p), RFX_EINVAL, "fit.lambda: must be finite");

    /* the fit: the parameters' message, not the data's */
    double X[8], y[4];
    for (int i = 0; i < 8; i++) X[i] = NAN;
    for (int i = 0; i < 4; i++) y[i] = i % 2;
    rfx_model *m = NULL;
    EXPECT_ERR(rfx_model_fit(&p, rfx_cmat_of(X, 4, 2), rfx_cmat_of(y, 4, 1), &m, NULL),
               RFX_EINVAL, "fit.lambda: must be finite");
    EXPECT_ERR(rfx_model_fit(&p, rfx_cmat_of(NULL, 4, 2), rfx_cmat_of(y, 4, 1), &m, NULL),
               RFX_EINVAL, "fit.lambda: must be finite");
    p.method = RFX_METHOD_CLASSIFY;
    p.lambda = 0;
    EXPECT_ERR(rfx_model_fit(&p, rfx_cmat_of(NULL, 4, 2), rfx_cmat_of(y, 4, 1), &m, NULL),
               RFX_EINVAL, "fit.lambda: a classifier needs lambda > 0");
    p.lambda = -1;
    cp.optimizer = RFX_OPTIMIZER_DUAL_CD; /* with the logistic loss */
    EXPECT_ERR(rfx_model_fit(&p, rfx_cmat_of(X, 4, 2), rfx_cmat_of(y, 4, 1), &m, NULL),
               RFX_EINVAL, "classify.optimizer");
    CHECK(m == NULL);
}

/* ---- row weights ---------------------------------------------------------- */

/* Sample weights: integer weights are repeated rows with lambda n / n'
 * (L-BFGS: logistic, squared hinge, squared, softmax; dual CD: squared
 * hinge), weights of 1 are no weights bit for bit (L-BFGS and dual CD),
 * weight 0 is a row left out (to the optimizer's tolerance; rfx_model_fit
 * drops the rows, so there bit for bit, choices included), "balanced"
 * counts weights, and the combinations without weights are refused. */
static void test_sample_weights(void)
{
    rfx_test_rng r = {31};
    const size_t n = 150, d = 2, D = 24;
    const double lab3[3] = {0, 1, 2}, lab2[2] = {-1, 1}, lambda = 2e-2;
    double w[150], ones[150], wz[150], wk[150];
    for (size_t i = 0; i < n; i++) {
        w[i] = (double)(1 + (i * 7) % 3);
        ones[i] = 1.0;
        wz[i] = i % 5 == 3 ? 0.0 : w[i];
    }
    rfx_features *f = make_features(d, D, 0.9, 12);
    struct { rfx_loss loss; rfx_optimizer opt; int softmax; size_t C; } cases[] = {
        {RFX_LOSS_LOGISTIC, RFX_OPTIMIZER_LBFGS, 0, 2},
        {RFX_LOSS_SQUARED_HINGE, RFX_OPTIMIZER_LBFGS, 0, 2},
        {RFX_LOSS_SQUARED, RFX_OPTIMIZER_LBFGS, 0, 3},
        {RFX_LOSS_LOGISTIC, RFX_OPTIMIZER_LBFGS, 1, 3},
        {RFX_LOSS_SQUARED_HINGE, RFX_OPTIMIZER_DUAL_CD, 0, 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const size_t C = cases[c].C, K = C == 2 ? 1 : C;
        double *X, *y;
        make_data(&r, n, d, C, C == 2 ? lab2 : lab3, 0.1, &X, &y);
        /* the rows repeated by their weights, and the rows of weight > 0 */
        size_t n2 = 0, nk = 0;
        for (size_t i = 0; i < n; i++) n2 += (size_t)w[i];
        double *X2 = malloc(n2 * d * sizeof *X2), *y2 = malloc(n2 * sizeof *y2);
        double *Xk = malloc(n * d * sizeof *Xk), *yk = malloc(n * sizeof *yk);
        for (size_t i = 0, k = 0; i < n; i++) {
            for (size_t t = 0; t < (size_t)w[i]; t++, k++) {
                memcpy(X2 + k * d, X + i * d, d * sizeof *X);
                y2[k] = y[i];
            }
            if (wz[i] > 0) {
                memcpy(Xk + nk * d, X + i * d, d * sizeof *X);
                yk[nk] = y[i];
                wk[nk++] = wz[i];
            }
        }
        rfx_classify_params p = tight(cases[c].loss, cases[c].opt, lambda);
        p.tol = cases[c].opt == RFX_OPTIMIZER_DUAL_CD ? 1e-10 : 1e-12;
        if (cases[c].softmax) p.multiclass = RFX_MULTICLASS_SOFTMAX;
        rfx_model *a = NULL, *b = NULL, *e = NULL, *g = NULL;
        p.sample_weight = w;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &a, NULL));
        p.sample_weight = NULL;
        p.lambda = lambda * (double)n / (double)n2;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X2, n2, d), y2, &p, &b, NULL));
        p.lambda = lambda;
        double dw = 1, db = 1;
        if (a && b) {
            dw = max_abs_diff(rfx_model_weights(a).data, rfx_model_weights(b).data, D * K);
            db = max_abs_diff(rfx_model_intercepts(a), rfx_model_intercepts(b), K);
        }
        printf("sample weights vs repeated rows (%s%s, %s, C = %zu): |dw| = %.3g, |db| = %.3g\n",
               rfx_loss_name(cases[c].loss), cases[c].softmax ? " softmax" : "",
               rfx_optimizer_name(cases[c].opt), C, dw, db);
        CHECK(dw < 1e-7 && db < 1e-7);
        rfx_model_free(a);
        rfx_model_free(b);
        a = b = NULL;
        /* weights of 1: the unweighted bits */
        p.sample_weight = ones;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &a, NULL));
        p.sample_weight = NULL;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &b, NULL));
        CHECK(a && b && same_model(a, b));
        /* weight 0: the row left out */
        p.sample_weight = wz;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &e, NULL));
        p.sample_weight = wk;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(Xk, nk, d), yk, &p, &g, NULL));
        if (e && g) {
            dw = max_abs_diff(rfx_model_weights(e).data, rfx_model_weights(g).data, D * K);
            db = max_abs_diff(rfx_model_intercepts(e), rfx_model_intercepts(g), K);
            printf("  weight 0 vs rows dropped: |dw| = %.3g, |db| = %.3g\n", dw, db);
            CHECK(dw < 1e-7 && db < 1e-7);
            rfx_model_info ie;
            rfx_model_get_info(e, &ie);
            CHECK(ie.n_train == nk);
        }
        rfx_model_free(a);
        rfx_model_free(b);
        rfx_model_free(e);
        rfx_model_free(g);
        free(X2);
        free(y2);
        free(Xk);
        free(yk);
        free(X);
        free(y);
    }
    /* balanced with weights: c_k = W / (C W_k), the sums of the weights */
    {
        double *X, *y;
        make_data(&r, n, d, 2, lab2, 0.1, &X, &y);
        double W0 = 0, W1 = 0;
        for (size_t i = 0; i < n; i++) *(y[i] == 1 ? &W1 : &W0) += w[i];
        const double cw[2] = {(W0 + W1) / (2 * W0), (W0 + W1) / (2 * W1)};
        rfx_classify_params p = rfx_classify_params_default();
        p.sample_weight = w;
        p.balanced = 1;
        rfx_model *a = NULL, *b = NULL;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &a, NULL));
        p.balanced = 0;
        p.class_weights = cw;
        p.n_class_weights = 2;
        CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &b, NULL));
        CHECK(a && b && same_model(a, b));
        rfx_model_free(a);
        rfx_model_free(b);
        /* rfx_model_fit: the rows of weight 0 dropped, every choice included */
        rfx_classify_params cp = rfx_classify_params_default();
        for (int sq = 0; sq < 2; sq++) {
            cp.loss = sq ? RFX_LOSS_SQUARED : RFX_LOSS_LOGISTIC;
            rfx_fit_params fp = rfx_fit_params_default();
            fp.method = RFX_METHOD_CLASSIFY;
            fp.classify = &cp;
            fp.features.n_features = 32;
            size_t nk = 0;
            double *Xk = malloc(n * d * sizeof *Xk), *yk = malloc(n * sizeof *yk);
            for (size_t i = 0; i < n; i++)
                if (wz[i] > 0) {
                    memcpy(Xk + nk * d, X + i * d, d * sizeof *X);
                    yk[nk] = y[i];
                    wk[nk++] = wz[i];
                }
            a = b = NULL;
            fp.sample_weight = wz;
            CHECK_OK(rfx_model_fit(&fp, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &a, NULL));
            fp.sample_weight = wk;
            CHECK_OK(rfx_model_fit(&fp, rfx_cmat_of(Xk, nk, d), rfx_cmat_of(yk, nk, 1), &b, NULL));
            CHECK(a && b && same_model(a, b));
            rfx_model_free(a);
            rfx_model_free(b);
            free(Xk);
            free(yk);
        }
        free(X);
        free(y);
    }
    /* refused: SGD, a source, the weights inside the fit's classify settings */
    {
        double *X, *y;
        make_data(&r, n, d, 2, lab2, 0.1, &X, &y);
        rfx_classify_params p = rfx_classify_params_default();
        rfx_model *m = NULL;
        p.sample_weight = w;
        p.optimizer = RFX_OPTIMIZER_SGD;
        EXPECT_ERR(rfx_classify_params_check(&p), RFX_EINVAL, "classify.sample_weight");
        p.optimizer = RFX_OPTIMIZER_AUTO;
        p.loss = RFX_LOSS_HINGE;
        p.cache_bytes = 0; /* auto resolves to sgd */
        EXPECT_ERR(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, NULL), RFX_EINVAL,
                   "classify.sample_weight");
        p.cache_bytes = (size_t)1 << 30;
        p.loss = RFX_LOSS_LOGISTIC;
        double bad[150];
        memcpy(bad, w, sizeof bad);
        bad[5] = -1;
        p.sample_weight = bad;
        EXPECT_ERR(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, NULL), RFX_EINVAL,
                   "classify.sample_weight[5]: must be >= 0");
        memset(bad, 0, sizeof bad);
        EXPECT_ERR(rfx_classify_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, NULL), RFX_EINVAL,
                   "classify.sample_weight: all 150 weights are zero");
        p.sample_weight = w;
        rfx_source *src = NULL;
        CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), 0, &src));
        EXPECT_ERR(rfx_classify_fit_source(f, src, &p, &m, NULL), RFX_EINVAL,
                   "classify.sample_weight");
        rfx_source_free(src);
        rfx_fit_params fp = rfx_fit_params_default();
        fp.method = RFX_METHOD_CLASSIFY;
        fp.classify = &p;
        EXPECT_ERR(rfx_fit_params_check(&fp), RFX_EINVAL, "classify.sample_weight");
        CHECK(m == NULL);
        free(X);
        free(y);
    }
    rfx_features_free(f);
}

int main(void)
{
    RFX_TEST_RUN(test_binary_logistic);
    RFX_TEST_RUN(test_softmax);
    RFX_TEST_RUN(test_hinge);
    RFX_TEST_RUN(test_sgd);
    RFX_TEST_RUN(test_class_weights);
    RFX_TEST_RUN(test_proba);
    RFX_TEST_RUN(test_bitwise);
    RFX_TEST_RUN(test_source);
    RFX_TEST_RUN(test_shard);
    RFX_TEST_RUN(test_fit_path);
    RFX_TEST_RUN(test_model_fit);
    RFX_TEST_RUN(test_squared_loo);
    RFX_TEST_RUN(test_squared_dual);
    RFX_TEST_RUN(test_temperature);
    RFX_TEST_RUN(test_squared_model_fit);
    RFX_TEST_RUN(test_errors);
    RFX_TEST_RUN(test_classes_find);
    RFX_TEST_RUN(test_class_weights_map);
    RFX_TEST_RUN(test_params_check);
    RFX_TEST_RUN(test_sample_weights);
    return rfx_test_finish("test_classify");
}
