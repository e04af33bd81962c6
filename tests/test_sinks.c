/* SPDX-License-Identifier: BSD-3-Clause */
/* Random kitchen sinks and the greedy baseline (rfx/sinks.h):
 *  - without an active box the fit is the least-squares solution of
 *    [Z 1] (LAPACK dgels, called here), C = INFINITY and C large alike;
 *  - with an active box the solution satisfies the KKT conditions of the
 *    box-constrained problem, gradient computed here from Z = z(X): zero
 *    inside, pointing outwards at the bounds, zero for the intercept, to
 *    1e-8, for the three losses and every activation;
 *  - on a tiny problem the weights equal those of a plain projected
 *    gradient method written here (step 1 / trace of the Hessian bound, run
 *    to a fixed point), for the squared, logistic and squared hinge losses;
 *  - the logistic objective falls below its starting value log 2 at once
 *    and the converged one is the lowest;
 *  - greedy: training error non-increasing in the terms; with one term and
 *    no refinement the term is the exhaustive best of the candidates (each
 *    fitted by least squares here) and the model its least-squares fit;
 *    refinement lowers the one-term error; a target that is one of the
 *    candidates is recovered exactly;
 *  - saved and loaded models predict bitwise alike; q-sparse candidates
 *    stay q-sparse through the refinement;
 *  - bitwise identical results for 1 and 2 threads; every error path. */
#include "internal.h"
#include "rfx/sinks.h"
#include "testlib.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dgels_(const char *trans, const int *m, const int *n, const int *nrhs, double *a,
            const int *lda, double *b, const int *ldb, double *work, const int *lwork, int *info,
            size_t);

/* ---- data and references ------------------------------------------------- */

/* X ~ U(-1, 1)^d, y = sin(2 x0) + 0.5 x1 x2 + 0.1 noise (regression), or its
 * sign flipped with probability 0.1 (labels). */
static void make_data(unsigned long long seed, size_t n, size_t d, int labels, double **X,
                      double **y)
{
    rfx_test_rng r = {seed};
    *X = rfx_test_matrix(&r, n, d, -1.0, 1.0);
    *y = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        const double *x = *X + i * d;
        double v = sin(2.0 * x[0]) + (d > 2 ? 0.5 * x[1] * x[2] : 0.0);
        if (labels) {
            double s = v > 0 ? 1.0 : -1.0;
            (*y)[i] = rfx_test_uniform(&r) < 0.1 ? -s : s;
        } else {
            (*y)[i] = v + 0.1 * rfx_test_normal(&r);
        }
    }
}

static rfx_features *make_map(size_t d, size_t K, uint64_t seed, rfx_activation act)
{
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = K;
    fp.seed = seed;
    fp.length_scale = 0.7;
    fp.activation = act;
    /* N(0, (4 / 0.7)^2) weights: w.x dominates the phase b in [0, 2 pi), so
     * that the saturating and piecewise-linear features are not nearly
     * collinear (the accelerated gradient then converges in a few thousand
     * iterations; its rate is set by the condition number of Zc^T Zc) */
    fp.weight_scale = 4.0;
    if (act != RFX_ACTIVATION_COS) fp.weights = RFX_WEIGHTS_NORMAL;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&fp, d, &f));
    return f;
}

static double *features_of(const rfx_features *f, const double *X, size_t n, size_t d)
{
    size_t K = rfx_features_output_dim(f);
    double *Z = malloc(n * K * sizeof(double));
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, K)));
    return Z;
}

static double loss_d(rfx_sinks_loss loss, double p, double y, double *val)
{
    if (loss == RFX_SINKS_LOSS_LOGISTIC) {
        *val = log1p(exp(-y * p));
        return -y / (1.0 + exp(y * p));
    }
    if (loss == RFX_SINKS_LOSS_SQUARED_HINGE) {
        double h = 1.0 - y * p;
        *val = h > 0 ? 0.5 * h * h : 0.0;
        return h > 0 ? -y * h : 0.0;
    }
    *val = 0.5 * (p - y) * (p - y);
    return p - y;
}

/* the risk at (a, c) and its gradient g (K + 1: weights, then intercept) */
static double risk_grad(const double *Z, const double *y, size_t n, size_t K, const double *a,
                        double c, rfx_sinks_loss loss, double *g)
{
    double R = 0;
    memset(g, 0, (K + 1) * sizeof *g);
    for (size_t i = 0; i < n; i++) {
        double p = c, v;
        for (size_t k = 0; k < K; k++) p += Z[i * K + k] * a[k];
        double dl = loss_d(loss, p, y[i], &v);
        R += v;
        for (size_t k = 0; k < K; k++) g[k] += Z[i * K + k] * dl;
        g[K] += dl;
    }
    for (size_t k = 0; k <= K; k++) g[k] /= (double)n;
    return R / (double)n;
}

/* least squares [Z 1] w = y by dgels; w: K + 1 (weights, intercept) */
static void lsq_reference(const double *Z, const double *y, size_t n, size_t K, double *w)
{
    int m = (int)n, nc = (int)K + 1, one = 1, info = 0, lwork = -1;
    double *A = malloc(n * (K + 1) * sizeof(double)), *b = malloc(n * sizeof(double)), q;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < K; k++) A[k * n + i] = Z[i * K + k];
        A[K * n + i] = 1.0;
        b[i] = y[i];
    }
    dgels_("N", &m, &nc, &one, A, &m, b, &m, &q, &lwork, &info, 1);
    lwork = (int)q;
    double *work = malloc((size_t)lwork * sizeof(double));
    dgels_("N", &m, &nc, &one, A, &m, b, &m, work, &lwork, &info, 1);
    CHECK(info == 0);
    memcpy(w, b, (K + 1) * sizeof(double));
    free(A);
    free(b);
    free(work);
}

static double maxabs(const double *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(a[i]) > m) m = fabs(a[i]);
    return m;
}

/* The KKT conditions at the model's weights, checked entry by entry:
 * returns the worst violation. bound: the box on the model's weights. */
static double kkt_violation(const double *Z, const double *y, size_t n, size_t K,
                            const rfx_model *m, double bound, rfx_sinks_loss loss,
                            size_t *at_bound)
{
    const double *a = rfx_model_weights(m).data, c = rfx_model_intercepts(m)[0];
    double *g = malloc((K + 1) * sizeof(double)), worst = fabs(0.0);
    risk_grad(Z, y, n, K, a, c, loss, g);
    *at_bound = 0;
    worst = fabs(g[K]);
    for (size_t k = 0; k < K; k++) {
        double v;
        CHECK_MSG(fabs(a[k]) <= bound, "weight %zu = %.17g outside the box %.17g", k, a[k], bound);
        if (a[k] == bound) v = g[k] > 0 ? g[k] : 0;        /* must be <= 0 */
        else if (a[k] == -bound) v = g[k] < 0 ? -g[k] : 0; /* must be >= 0 */
        else v = fabs(g[k]);
        if (fabs(a[k]) == bound) (*at_bound)++;
        if (v > worst) worst = v;
    }
    free(g);
    return worst;
}

/* ---- kitchen sinks -------------------------------------------------------- */

static void test_unconstrained_lsq(void)
{
    const size_t n = 400, d = 3, K = 24;
    double *X, *y;
    make_data(11, n, d, 0, &X, &y);
    rfx_features *f = make_map(d, K, 5, RFX_ACTIVATION_COS);
    double *Z = features_of(f, X, n, d), w[25];
    lsq_reference(Z, y, n, K, w);
    const double scale = maxabs(w, K + 1);
    const double Cs[2] = {INFINITY, 1e6};
    for (int t = 0; t < 2; t++) {
        rfx_sinks_params p = rfx_sinks_params_default();
        p.C = Cs[t];
        p.tol = 1e-13;
        p.max_iter = 200000;
        rfx_model *m = NULL;
        rfx_sinks_report rep;
        CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, &rep));
        if (!m) continue;
        const double *a = rfx_model_weights(m).data;
        double err = fabs(rfx_model_intercepts(m)[0] - w[K]);
        for (size_t k = 0; k < K; k++)
            if (fabs(a[k] - w[k]) > err) err = fabs(a[k] - w[k]);
        printf("  C = %g: %zu iterations, %zu restarts, kkt %.2e, max |w - w_lsq| / max |w_lsq|"
               " = %.2e (max |w_lsq| = %.3g)\n", Cs[t], rep.iterations, rep.restarts, rep.kkt,
               err / scale, scale);
        CHECK(rep.converged);
        CHECK(rep.n_at_bound == 0);
        CHECK_NEAR(err / scale, 0.0, 1e-8);
        /* the gradient steps alone took 2479 iterations to this tolerance;
         * the Newton finish takes over after 500 and needs a few */
        CHECK(rep.iterations == 500 && rep.newton_steps >= 1 && rep.newton_steps <= 10);
        /* the model predicts Z a + c */
        rfx_model_info info;
        CHECK_OK(rfx_model_get_info(m, &info));
        CHECK(info.method == RFX_METHOD_SINKS);
        double *yh = malloc(n * sizeof(double)), e2 = 0;
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(yh, n, 1), rfx_mat_none()));
        for (size_t i = 0; i < n; i++) {
            double pr = rfx_model_intercepts(m)[0];
            for (size_t k = 0; k < K; k++) pr += Z[i * K + k] * a[k];
            if (fabs(pr - yh[i]) > e2) e2 = fabs(pr - yh[i]);
        }
        CHECK_NEAR(e2, 0.0, 1e-12);
        /* the objective is the half mean squared residual */
        double R = 0;
        for (size_t i = 0; i < n; i++) R += 0.5 * (yh[i] - y[i]) * (yh[i] - y[i]) / (double)n;
        CHECK_NEAR(rep.objective, R, 1e-12);
        free(yh);
        rfx_model_free(m);
    }
    free(Z);
    free(X);
    free(y);
    rfx_features_free(f);
}

/* An active box, each loss and activation: KKT to 1e-8. */
static void test_kkt_active_box(void)
{
    const size_t n = 300, d = 3, K = 20;
    const rfx_activation acts[6] = {RFX_ACTIVATION_COS,     RFX_ACTIVATION_SIN,
                                    RFX_ACTIVATION_TANH,    RFX_ACTIVATION_SIGMOID,
                                    RFX_ACTIVATION_RELU,    RFX_ACTIVATION_SIGN};
    const rfx_sinks_loss losses[3] = {RFX_SINKS_LOSS_SQUARED, RFX_SINKS_LOSS_LOGISTIC,
                                      RFX_SINKS_LOSS_SQUARED_HINGE};
    for (int li = 0; li < 3; li++) {
        double *X, *y;
        make_data(21 + (unsigned long long)li, n, d, li > 0, &X, &y);
        for (int ai = 0; ai < 6; ai++) {
            rfx_features *f = make_map(d, K, 7 + (uint64_t)ai, acts[ai]);
            double *Z = features_of(f, X, n, d);
            const double s = acts[ai] == RFX_ACTIVATION_COS || acts[ai] == RFX_ACTIVATION_SIN
                                 ? (acts[ai] == RFX_ACTIVATION_COS ? sqrt(2.0 / (double)K) : 1.0)
                                 : 1.0;
            /* a box that binds: half the largest least-squares weight */
            double wl[21];
            lsq_reference(Z, y, n, K, wl);
            rfx_sinks_params p = rfx_sinks_params_default();
            p.loss = losses[li];
            p.C = 0.5 * maxabs(wl, K) * (double)K * s;
            p.tol = 1e-12;
            p.max_iter = 100000;
            const double bound = p.C / ((double)K * s);
            rfx_model *m = NULL;
            rfx_sinks_report rep;
            CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, &rep));
            if (m) {
                size_t nb;
                double v = kkt_violation(Z, y, n, K, m, bound, losses[li], &nb);
                printf("  %-13s %-7s: %5zu iterations, %2zu of %zu weights at the bound, KKT "
                       "violation %.2e, objective %.6f\n",
                       li == 0 ? "squared" : li == 1 ? "logistic" : "squared-hinge",
                       rfx_activation_name(acts[ai]), rep.iterations, nb, K, v, rep.objective);
                CHECK(rep.converged);
                CHECK_NEAR(v, 0.0, 1e-8);
                CHECK(nb == rep.n_at_bound);
                /* only the squared loss (K <= n) has the Newton finish */
                CHECK(li == 0 || rep.newton_steps == 0);
                CHECK(rep.iterations + rep.newton_steps <= (li == 0 ? 600u : 100000u));
                CHECK(nb > 0);
                CHECK(nb < K);
            }
            rfx_model_free(m);
            rfx_features_free(f);
            free(Z);
        }
        free(X);
        free(y);
    }
}

/* Plain projected gradient on (a, c) with step 1 / L, L = curv x trace of
 * [Z 1]^T [Z 1] / n (>= its largest eigenvalue), to a fixed point. */
static double pg_reference(const double *Z, const double *y, size_t n, size_t K, double bound,
                           rfx_sinks_loss loss, double *a, double *c)
{
    double L = 1.0; /* the intercept's diagonal entry */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < K; k++) L += Z[i * K + k] * Z[i * K + k] / (double)n;
    if (loss == RFX_SINKS_LOSS_LOGISTIC) L *= 0.25;
    double *g = malloc((K + 1) * sizeof(double)), R = 0;
    memset(a, 0, K * sizeof *a);
    *c = 0;
    for (long it = 0; it < 3000000; it++) {
        R = risk_grad(Z, y, n, K, a, *c, loss, g);
        double change = 0;
        for (size_t k = 0; k < K; k++) {
            double v = a[k] - g[k] / L;
            v = v > bound ? bound : v < -bound ? -bound : v;
            if (fabs(v - a[k]) > change) change = fabs(v - a[k]);
            a[k] = v;
        }
        double cn = *c - g[K] / L;
        if (fabs(cn - *c) > change) change = fabs(cn - *c);
        *c = cn;
        if (change < 1e-16) break;
    }
    free(g);
    return R;
}

static void test_bruteforce_reference(void)
{
    const size_t n = 25, d = 2, K = 5;
    const rfx_sinks_loss losses[3] = {RFX_SINKS_LOSS_SQUARED, RFX_SINKS_LOSS_LOGISTIC,
                                      RFX_SINKS_LOSS_SQUARED_HINGE};
    for (int li = 0; li < 3; li++) {
        double *X, *y;
        make_data(31, n, d, li > 0, &X, &y);
        rfx_features *f = make_map(d, K, 3, RFX_ACTIVATION_COS);
        double *Z = features_of(f, X, n, d), a[5], c;
        rfx_sinks_params p = rfx_sinks_params_default();
        p.loss = losses[li];
        p.C = 1.5;
        p.tol = 1e-13;
        p.max_iter = 100000;
        const double bound = p.C / ((double)K * sqrt(2.0 / (double)K));
        double R = pg_reference(Z, y, n, K, bound, losses[li], a, &c);
        rfx_model *m = NULL;
        rfx_sinks_report rep;
        CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, &rep));
        if (m) {
            const double *w = rfx_model_weights(m).data;
            double err = fabs(rfx_model_intercepts(m)[0] - c);
            size_t nb = 0;
            for (size_t k = 0; k < K; k++) {
                if (fabs(w[k] - a[k]) > err) err = fabs(w[k] - a[k]);
                nb += fabs(a[k]) == bound;
            }
            printf("  loss %d: |w - w_pg|_inf = %.2e, objective %.15f vs %.15f, %zu at the bound"
                   " (%zu FISTA iterations)\n", li, err, rep.objective, R, nb, rep.iterations);
            CHECK_NEAR(err, 0.0, 1e-9);
            CHECK_NEAR(rep.objective, R, 1e-12);
            CHECK(nb > 0 && nb == rep.n_at_bound);
        }
        rfx_model_free(m);
        rfx_features_free(f);
        free(Z);
        free(X);
        free(y);
    }
}

/* More features than rows (the squared loss then works on the rows, not
 * on Z^T Z): the minimiser need not be unique, the minimum is; KKT holds. */
static void test_wide(void)
{
    const size_t n = 15, d = 2, K = 24;
    double *X, *y, a[24], c;
    make_data(35, n, d, 0, &X, &y);
    rfx_features *f = make_map(d, K, 12, RFX_ACTIVATION_COS);
    double *Z = features_of(f, X, n, d);
    rfx_sinks_params p = rfx_sinks_params_default();
    p.C = 2.0;
    p.tol = 1e-12;
    p.max_iter = 200000;
    const double bound = p.C / ((double)K * sqrt(2.0 / (double)K));
    double R = pg_reference(Z, y, n, K, bound, RFX_SINKS_LOSS_SQUARED, a, &c);
    rfx_model *m = NULL;
    rfx_sinks_report rep;
    CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, &rep));
    if (m) {
        size_t nb;
        double v = kkt_violation(Z, y, n, K, m, bound, RFX_SINKS_LOSS_SQUARED, &nb);
        printf("  n = %zu < K = %zu: objective %.15f vs projected gradient %.15f, KKT violation "
               "%.2e, %zu at the bound, %zu iterations\n", n, K, rep.objective, R, v, nb,
               rep.iterations);
        CHECK(rep.converged);
        CHECK_NEAR(rep.objective, R, 1e-11);
        CHECK_NEAR(v, 0.0, 1e-8);
        CHECK(nb > 0);
    }
    rfx_model_free(m);
    rfx_features_free(f);
    free(Z);
    free(X);
    free(y);
}

static void test_logistic_decrease(void)
{
    const size_t n = 300, d = 3, K = 32;
    double *X, *y;
    make_data(41, n, d, 1, &X, &y);
    rfx_features *f = make_map(d, K, 9, RFX_ACTIVATION_COS);
    const size_t iters[5] = {1, 3, 10, 30, 100000};
    double obj[5];
    for (int t = 0; t < 5; t++) {
        rfx_sinks_params p = rfx_sinks_params_default();
        p.loss = RFX_SINKS_LOSS_LOGISTIC;
        p.C = 20;
        p.tol = 1e-12;
        p.fit_intercept = 0; /* start: alpha = 0, risk log 2 */
        p.max_iter = iters[t];
        rfx_model *m = NULL;
        rfx_sinks_report rep;
        CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, &rep));
        obj[t] = rep.objective;
        CHECK(rep.iterations <= iters[t]);
        if (t == 4) CHECK(rep.converged);
        if (m) CHECK(rfx_model_intercepts(m)[0] == 0.0);
        rfx_model_free(m);
    }
    printf("  logistic risk after 1, 3, 10, 30 iterations and at convergence: %.6f %.6f %.6f "
           "%.6f %.9f (log 2 = %.6f)\n", obj[0], obj[1], obj[2], obj[3], obj[4], log(2.0));
    for (int t = 0; t < 5; t++) CHECK(obj[t] < log(2.0));
    for (int t = 0; t < 4; t++) CHECK(obj[4] <= obj[t] + 1e-15);
    rfx_features_free(f);
    free(X);
    free(y);
}

/* ---- greedy --------------------------------------------------------------- */

static double unscaled_phi(rfx_activation a, double u)
{
    switch (a) {
    case RFX_ACTIVATION_SIN: return sin(u);
    case RFX_ACTIVATION_TANH: return tanh(u);
    case RFX_ACTIVATION_SIGMOID: return 1.0 / (1.0 + exp(-u));
    case RFX_ACTIVATION_RELU: return u > 0 ? u : 0;
    case RFX_ACTIVATION_SIGN: return u > 0 ? 1 : u < 0 ? -1 : 0;
    default: return cos(u);
    }
}

static void test_greedy_monotone(void)
{
    const size_t n = 500, d = 3, K = 25;
    double *X, *y, path[25];
    make_data(51, n, d, 0, &X, &y);
    const rfx_activation acts[3] = {RFX_ACTIVATION_TANH, RFX_ACTIVATION_COS,
                                    RFX_ACTIVATION_RELU};
    for (int ai = 0; ai < 3; ai++) {
        rfx_greedy_params gp = rfx_greedy_params_default();
        gp.n_terms = K;
        gp.n_candidates = 16;
        gp.refine_steps = 3;
        gp.features.activation = acts[ai];
        gp.features.weights = RFX_WEIGHTS_NORMAL;
        gp.features.weight_scale = 1.5;
        gp.features.seed = 4;
        rfx_model *m = NULL;
        rfx_greedy_report rep;
        CHECK_OK(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &m, &rep, path));
        if (!m) continue;
        double var = 0, mean = 0;
        for (size_t i = 0; i < n; i++) mean += y[i] / (double)n;
        for (size_t i = 0; i < n; i++) var += (y[i] - mean) * (y[i] - mean) / (double)n;
        printf("  %-7s training MSE after 1, 5, 25 terms: %.5f %.5f %.5f (variance %.5f)\n",
               rfx_activation_name(acts[ai]), path[0], path[4], path[K - 1], var);
        for (size_t k = 1; k < K; k++)
            CHECK_MSG(path[k] <= path[k - 1] * (1 + 1e-12), "mse rises at term %zu: %g > %g",
                      k, path[k], path[k - 1]);
        CHECK(path[0] < var);
        CHECK(path[K - 1] < 0.2 * var);
        CHECK(rep.n_terms == K);
        CHECK_NEAR(rep.train_mse, path[K - 1], 0.0);
        /* the model predicts the fit whose error the path reports */
        double *yh = malloc(n * sizeof(double)), e2 = 0;
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(yh, n, 1), rfx_mat_none()));
        for (size_t i = 0; i < n; i++) e2 += (yh[i] - y[i]) * (yh[i] - y[i]) / (double)n;
        CHECK_NEAR(e2, path[K - 1], 1e-10);
        rfx_model_info info;
        CHECK_OK(rfx_model_get_info(m, &info));
        CHECK(info.method == RFX_METHOD_GREEDY);
        CHECK(rfx_features_output_dim(rfx_model_features(m)) == K);
        free(yh);
        rfx_model_free(m);
    }
    free(X);
    free(y);
}

/* K = 1, no refinement: the exhaustive best of the M candidates. */
static void test_greedy_one_term(void)
{
    const size_t n = 200, d = 2, M = 12;
    double *X, *y;
    make_data(61, n, d, 0, &X, &y);
    for (int icpt = 0; icpt < 2; icpt++) {
        rfx_greedy_params gp = rfx_greedy_params_default();
        gp.n_terms = 1;
        gp.n_candidates = M;
        gp.refine_steps = 0;
        gp.fit_intercept = icpt;
        gp.features.activation = RFX_ACTIVATION_SIGMOID;
        gp.features.weights = RFX_WEIGHTS_UNIFORM;
        gp.features.weight_scale = 3.0;
        gp.features.seed = 77;
        /* the candidates: step 0's map has the seed itself */
        rfx_features_params fp = gp.features;
        fp.n_features = M;
        rfx_features *cf = NULL;
        CHECK_OK(rfx_features_create(&fp, d, &cf));
        rfx_cmat Wc = rfx_features_frequencies(cf);
        const double *bc = rfx_features_phases(cf);
        double best = INFINITY, bw[2] = {0, 0};
        size_t bj = 0;
        for (size_t j = 0; j < M; j++) { /* least squares on [phi, 1] */
            double s11 = 0, s1 = 0, s0 = (double)n, r1 = 0, r0 = 0, beta, gamma;
            for (size_t i = 0; i < n; i++) {
                double u = bc[j];
                for (size_t l = 0; l < d; l++) u += Wc.data[j * d + l] * X[i * d + l];
                double ph = unscaled_phi(fp.activation, u);
                s11 += ph * ph;
                s1 += ph;
                r1 += ph * y[i];
                r0 += y[i];
            }
            if (icpt) {
                double det = s11 * s0 - s1 * s1;
                beta = (r1 * s0 - s1 * r0) / det;
                gamma = (s11 * r0 - s1 * r1) / det;
            } else {
                beta = r1 / s11;
                gamma = 0;
            }
            double sse = 0;
            for (size_t i = 0; i < n; i++) {
                double u = bc[j];
                for (size_t l = 0; l < d; l++) u += Wc.data[j * d + l] * X[i * d + l];
                double e = y[i] - beta * unscaled_phi(fp.activation, u) - gamma;
                sse += e * e;
            }
            if (sse < best) {
                best = sse;
                bj = j;
                bw[0] = beta;
                bw[1] = gamma;
            }
        }
        double path[1];
        rfx_model *m = NULL;
        CHECK_OK(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &m, NULL, path));
        if (m) {
            rfx_cmat Wm = rfx_model_features(m) ? rfx_features_frequencies(rfx_model_features(m))
                                                : rfx_cmat_none();
            CHECK(Wm.rows == 1);
            int same = memcmp(Wm.data, Wc.data + bj * d, d * sizeof(double)) == 0 &&
                       rfx_features_phases(rfx_model_features(m))[0] == bc[bj];
            CHECK_MSG(same, "the chosen term is not candidate %zu, the exhaustive best", bj);
            printf("  intercept %d: candidate %zu of %zu, MSE %.12f vs exhaustive %.12f, "
                   "beta %.10f vs %.10f\n", icpt, bj, M, path[0], best / (double)n,
                   rfx_model_weights(m).data[0], bw[0]);
            CHECK_NEAR(path[0], best / (double)n, 1e-12);
            /* sigmoid features have scale 1: the weight is beta itself */
            CHECK_NEAR(rfx_model_weights(m).data[0], bw[0], 1e-9 * fabs(bw[0]));
            CHECK_NEAR(rfx_model_intercepts(m)[0], bw[1], 1e-9 * (1 + fabs(bw[1])));
        }
        rfx_model_free(m);
        /* refinement only lowers the one-term error */
        gp.refine_steps = 10;
        double path2[1];
        CHECK_OK(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &m, NULL, path2));
        printf("  refined: MSE %.12f (unrefined %.12f)\n", path2[0], path[0]);
        CHECK(path2[0] < path[0]);
        rfx_model_free(m);
        rfx_features_free(cf);
    }
    free(X);
    free(y);
}

/* y = 2 phi_j(x) + 0.5 for candidate j of step 0: recovered exactly. */
static void test_greedy_recovery(void)
{
    const size_t n = 300, d = 3, M = 8, j = 5;
    const rfx_activation acts[3] = {RFX_ACTIVATION_COS, RFX_ACTIVATION_TANH,
                                    RFX_ACTIVATION_SIGN};
    for (int ai = 0; ai < 3; ai++) {
        rfx_test_rng r = {71};
        double *X = rfx_test_matrix(&r, n, d, -1.0, 1.0), *y = malloc(n * sizeof(double));
        double *Xt = rfx_test_matrix(&r, 50, d, -1.0, 1.0);
        rfx_greedy_params gp = rfx_greedy_params_default();
        gp.n_terms = 3;
        gp.n_candidates = M;
        gp.refine_steps = 5;
        gp.features.activation = acts[ai];
        gp.features.seed = 123;
        gp.features.length_scale = 0.5;
        rfx_features_params fp = gp.features;
        fp.n_features = M;
        rfx_features *cf = NULL;
        CHECK_OK(rfx_features_create(&fp, d, &cf));
        const double *w = rfx_features_frequencies(cf).data + j * d, b = rfx_features_phases(cf)[j];
        for (size_t i = 0; i < n; i++) {
            double u = b;
            for (size_t l = 0; l < d; l++) u += w[l] * X[i * d + l];
            y[i] = 2.0 * unscaled_phi(acts[ai], u) + 0.5;
        }
        double path[3];
        rfx_model *m = NULL;
        CHECK_OK(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &m, NULL, path));
        if (m) {
            double yt[50], e = 0;
            CHECK_OK(rfx_model_predict(m, rfx_cmat_of(Xt, 50, d), rfx_mat_of(yt, 50, 1),
                                       rfx_mat_none()));
            for (size_t i = 0; i < 50; i++) {
                double u = b;
                for (size_t l = 0; l < d; l++) u += w[l] * Xt[i * d + l];
                double tr = 2.0 * unscaled_phi(acts[ai], u) + 0.5;
                if (fabs(yt[i] - tr) > e) e = fabs(yt[i] - tr);
            }
            printf("  %-4s: training MSE %.2e %.2e %.2e, max error on new points %.2e\n",
                   rfx_activation_name(acts[ai]), path[0], path[1], path[2], e);
            CHECK_NEAR(path[0], 0.0, 1e-24);
            CHECK_NEAR(e, 0.0, 1e-9);
        }
        rfx_model_free(m);
        rfx_features_free(cf);
        free(X);
        free(Xt);
        free(y);
    }
}

/* Model files keep the chosen frequencies: a loaded model predicts bitwise
 * like the fitted one. A q-sparse candidate distribution stays q-sparse
 * through the refinement. */
static void test_model_files(void)
{
    const size_t n = 200, d = 3, K = 10;
    double *X, *y;
    make_data(95, n, d, 0, &X, &y);
    rfx_features *f = make_map(d, 16, 3, RFX_ACTIVATION_TANH);
    rfx_sinks_params sp = rfx_sinks_params_default();
    rfx_greedy_params gp = rfx_greedy_params_default();
    gp.n_terms = K;
    gp.n_candidates = 8;
    gp.features.activation = RFX_ACTIVATION_RELU;
    gp.features.weights = RFX_WEIGHTS_NORMAL;
    gp.features.sparsity = 2;
    rfx_model *m[2] = {NULL, NULL};
    CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, n, d), y, &sp, &m[0], NULL));
    CHECK_OK(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &m[1], NULL, NULL));
    for (int t = 0; t < 2 && m[0] && m[1]; t++) {
        void *buf = NULL;
        size_t len = 0;
        rfx_model *back = NULL;
        double a[200], b[200];
        CHECK_OK(rfx_model_save_buffer(m[t], &buf, &len));
        CHECK_OK(rfx_model_load_buffer(buf, len, &back));
        if (back) {
            rfx_model_info info;
            CHECK_OK(rfx_model_get_info(back, &info));
            CHECK(info.method == (t ? RFX_METHOD_GREEDY : RFX_METHOD_SINKS));
            CHECK_OK(rfx_model_predict(m[t], rfx_cmat_of(X, n, d), rfx_mat_of(a, n, 1),
                                       rfx_mat_none()));
            CHECK_OK(rfx_model_predict(back, rfx_cmat_of(X, n, d), rfx_mat_of(b, n, 1),
                                       rfx_mat_none()));
            CHECK(memcmp(a, b, sizeof a) == 0);
        }
        rfx_model_free(back);
        rfx_buffer_free(buf);
    }
    if (m[1]) {
        rfx_cmat W = rfx_features_frequencies(rfx_model_features(m[1]));
        int sparse = W.rows == K;
        for (size_t k = 0; k < W.rows; k++) {
            size_t nz = 0;
            for (size_t l = 0; l < d; l++) nz += W.data[k * d + l] != 0.0;
            sparse &= nz <= 2;
        }
        CHECK(sparse);
    }
    rfx_model_free(m[0]);
    rfx_model_free(m[1]);
    rfx_features_free(f);
    free(X);
    free(y);
}

/* ---- threads -------------------------------------------------------------- */

static void test_threads(void)
{
    /* large enough that every parallel loop runs on a team (the loops of
     * less than 2^18 flops stay on the calling thread): the squared loss
     * on Z^T Z (K = 64, and K = 600 for the product by the Gram matrix),
     * the logistic loss on the rows; the greedy fit */
    const size_t n = 5000, ng = 20000, d = 4, G = 20;
    const size_t Ks[3] = {64, 64, 600}, ns[3] = {5000, 5000, 1000};
    double *X, *y, *Xl, *yl, *Xg, *yg; /* X and Xl: the same rows (one seed) */
    make_data(81, n, d, 0, &X, &y);
    make_data(81, n, d, 1, &Xl, &yl);
    make_data(82, ng, d, 0, &Xg, &yg);
    for (int c = 0; c < 3; c++) {
        rfx_features *f = make_map(d, Ks[c], 2, RFX_ACTIVATION_COS);
        rfx_model *m[2] = {NULL, NULL};
        rfx_sinks_report rep[2];
        for (int t = 0; t < 2; t++) {
            rfx_sinks_params p = rfx_sinks_params_default();
            p.C = 2.0;
            p.n_threads = t + 1;
            p.max_iter = 300;
            if (c == 1) p.loss = RFX_SINKS_LOSS_LOGISTIC;
            CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, ns[c], d), c == 1 ? yl : y, &p, &m[t],
                                   &rep[t]));
        }
        if (m[0] && m[1]) {
            CHECK(memcmp(rfx_model_weights(m[0]).data, rfx_model_weights(m[1]).data,
                         Ks[c] * sizeof(double)) == 0);
            CHECK(rfx_model_intercepts(m[0])[0] == rfx_model_intercepts(m[1])[0]);
            CHECK(rep[0].iterations == rep[1].iterations);
            CHECK(rep[0].objective == rep[1].objective);
        }
        rfx_model_free(m[0]);
        rfx_model_free(m[1]);
        rfx_features_free(f);
    }
    rfx_model *g[2] = {NULL, NULL};
    double path[2][20];
    for (int t = 0; t < 2; t++) {
        rfx_greedy_params gp = rfx_greedy_params_default();
        gp.n_terms = G;
        gp.n_candidates = 16;
        gp.features.activation = RFX_ACTIVATION_TANH;
        gp.features.weights = RFX_WEIGHTS_NORMAL;
        gp.n_threads = t + 1;
        CHECK_OK(rfx_greedy_fit(rfx_cmat_of(Xg, ng, d), yg, &gp, &g[t], NULL, path[t]));
    }
    if (g[0] && g[1]) {
        CHECK(memcmp(rfx_model_weights(g[0]).data, rfx_model_weights(g[1]).data,
                     G * sizeof(double)) == 0);
        CHECK(memcmp(rfx_features_frequencies(rfx_model_features(g[0])).data,
                     rfx_features_frequencies(rfx_model_features(g[1])).data,
                     G * d * sizeof(double)) == 0);
        CHECK(memcmp(path[0], path[1], sizeof path[0]) == 0);
    }
    rfx_model_free(g[0]);
    rfx_model_free(g[1]);
    free(X);
    free(y);
    free(Xl);
    free(yl);
    free(Xg);
    free(yg);
}

/* ---- errors --------------------------------------------------------------- */

static void test_errors(void)
{
    const size_t n = 20, d = 2, K = 8;
    double *X, *y;
    make_data(91, n, d, 0, &X, &y);
    rfx_features *f = make_map(d, K, 1, RFX_ACTIVATION_COS);
    rfx_cmat Xv = rfx_cmat_of(X, n, d);
    rfx_sinks_params p = rfx_sinks_params_default(), q;
    rfx_model *m = NULL;
    rfx_model *const sentinel = (rfx_model *)&m;
    m = sentinel;

    CHECK_STATUS(rfx_sinks_fit(NULL, Xv, y, &p, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "f is NULL") != NULL);
    CHECK_STATUS(rfx_sinks_fit(f, Xv, NULL, &p, &m, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, NULL, &m, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &p, NULL, NULL), RFX_EINVAL);
    q = p;
    q.loss = (rfx_sinks_loss)7;
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &q, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "loss") != NULL);
    q = p;
    q.C = -1;
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &q, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "params.C") != NULL);
    q.C = NAN;
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &q, &m, NULL), RFX_EINVAL);
    q.C = -INFINITY;
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &q, &m, NULL), RFX_EINVAL);
    q = p;
    q.max_iter = 0;
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &q, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "max_iter") != NULL);
    q = p;
    q.tol = 0;
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &q, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "tol") != NULL);
    q.tol = NAN;
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &q, &m, NULL), RFX_EINVAL);
    q = p;
    q.n_threads = -1;
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &q, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "n_threads") != NULL);
    CHECK_STATUS(rfx_sinks_fit(f, rfx_cmat_of(X, 0, d), y, &p, &m, NULL), RFX_EDIM);
    CHECK_STATUS(rfx_sinks_fit(f, rfx_cmat_of(X, n / 2, 1), y, &p, &m, NULL), RFX_EDIM);
    CHECK_STATUS(rfx_sinks_fit(f, rfx_cmat_of(NULL, n, d), y, &p, &m, NULL), RFX_EINVAL);
    rfx_cmat bad = Xv;
    bad.stride = 1;
    CHECK_STATUS(rfx_sinks_fit(f, bad, y, &p, &m, NULL), RFX_EINVAL);
    double keep = X[3 * d + 1];
    X[3 * d + 1] = NAN;
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &p, &m, NULL), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "row 3, column 1") != NULL);
    X[3 * d + 1] = keep;
    keep = y[4];
    y[4] = INFINITY;
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &p, &m, NULL), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "y[4]") != NULL);
    y[4] = keep;
    q = p;
    q.loss = RFX_SINKS_LOSS_LOGISTIC; /* y is real-valued: not labels */
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &q, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "labels") != NULL);
    q.loss = RFX_SINKS_LOSS_SQUARED_HINGE;
    CHECK_STATUS(rfx_sinks_fit(f, Xv, y, &q, &m, NULL), RFX_EINVAL);
    /* n x K overflows before any row is read */
    rfx_cmat huge = rfx_cmat_of(X, SIZE_MAX / 4, 1);
    rfx_features *f1 = make_map(1, K, 1, RFX_ACTIVATION_COS);
    CHECK_STATUS(rfx_sinks_fit(f1, huge, y, &p, &m, NULL), RFX_EOVERFLOW);
    CHECK(m == sentinel); /* never written on error */
    /* not converging is not an error */
    q = p;
    q.max_iter = 1;
    q.tol = 1e-15;
    rfx_sinks_report rep;
    CHECK_OK(rfx_sinks_fit(f, Xv, y, &q, &m, &rep));
    CHECK(rep.converged == 0 && rep.iterations == 1);
    rfx_model_free(m);
    m = sentinel;

    /* greedy */
    rfx_greedy_params gp = rfx_greedy_params_default(), gq;
    gp.n_terms = 3;
    gp.n_candidates = 4;
    CHECK_STATUS(rfx_greedy_fit(Xv, y, NULL, &m, NULL, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_greedy_fit(Xv, NULL, &gp, &m, NULL, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_greedy_fit(Xv, y, &gp, NULL, NULL, NULL), RFX_EINVAL);
    gq = gp;
    gq.n_terms = 0;
    CHECK_STATUS(rfx_greedy_fit(Xv, y, &gq, &m, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "n_terms") != NULL);
    gq = gp;
    gq.n_candidates = 0;
    CHECK_STATUS(rfx_greedy_fit(Xv, y, &gq, &m, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "n_candidates") != NULL);
    gq = gp;
    gq.n_threads = -2;
    CHECK_STATUS(rfx_greedy_fit(Xv, y, &gq, &m, NULL, NULL), RFX_EINVAL);
    gq = gp;
    gq.features.form = RFX_FORM_COS_SIN;
    CHECK_STATUS(rfx_greedy_fit(Xv, y, &gq, &m, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "form") != NULL);
    gq = gp;
    gq.features.weight_scale = -1;
    gq.features.weights = RFX_WEIGHTS_NORMAL;
    CHECK_STATUS(rfx_greedy_fit(Xv, y, &gq, &m, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "greedy params") != NULL);
    CHECK(strstr(rfx_last_error(), "weight_scale") != NULL);
    gq = gp;
    gq.features.activation = (rfx_activation)99;
    CHECK_STATUS(rfx_greedy_fit(Xv, y, &gq, &m, NULL, NULL), RFX_EINVAL);
    gq = gp;
    gq.n_candidates = (size_t)1 << 40;
    CHECK_STATUS(rfx_greedy_fit(Xv, y, &gq, &m, NULL, NULL), RFX_EOVERFLOW);
    CHECK_STATUS(rfx_greedy_fit(rfx_cmat_of(X, 0, d), y, &gp, &m, NULL, NULL), RFX_EDIM);
    CHECK_STATUS(rfx_greedy_fit(rfx_cmat_of(X, n, 0), y, &gp, &m, NULL, NULL), RFX_EDIM);
    CHECK_STATUS(rfx_greedy_fit(rfx_cmat_of(NULL, n, d), y, &gp, &m, NULL, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_greedy_fit(rfx_cmat_of(X, (size_t)1 << 32, 1), y, &gp, &m, NULL, NULL),
                 RFX_EOVERFLOW); /* rows beyond the BLAS integer range */
    gq = gp;
    gq.n_terms = 2147483000;
    CHECK_STATUS(rfx_greedy_fit(rfx_cmat_of(X, 2147483000, 1), y, &gq, &m, NULL, NULL),
                 RFX_EOVERFLOW); /* the basis: n (K + 1) doubles */
    X[5] = -INFINITY;
    CHECK_STATUS(rfx_greedy_fit(Xv, y, &gp, &m, NULL, NULL), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "row 2, column 1") != NULL);
    X[5] = 0.25;
    y[7] = NAN;
    CHECK_STATUS(rfx_greedy_fit(Xv, y, &gp, &m, NULL, NULL), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "y[7]") != NULL);
    CHECK(m == sentinel);

    rfx_features_free(f);
    rfx_features_free(f1);
    free(X);
    free(y);
}

/* rfx_model_set_scaler: a model fitted to standardised inputs, given the
 * scaler, predicts raw inputs as the unscaled model predicts standardised
 * ones (to rounding), keeps it through a model file, and drops it again;
 * bad scalers and a model without a feature map are refused. */
static void test_scaler(void)
{
    const size_t n = 120, d = 3, K = 40;
    double *X, *y;
    make_data(17, n, d, 0, &X, &y);
    double mean[3] = {0.5, -2.0, 10.0}, scale[3] = {2.0, 0.25, 30.0};
    double *Xraw = malloc(n * d * sizeof *Xraw), a[120], b[120], c[120];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) Xraw[i * d + j] = mean[j] + scale[j] * X[i * d + j];
    rfx_features *f = make_map(d, K, 5, RFX_ACTIVATION_COS);
    rfx_sinks_params p = rfx_sinks_params_default();
    rfx_model *m = NULL;
    CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, n, d), y, &p, &m, NULL));
    CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(a, n, 1), rfx_mat_none()));
    CHECK_OK(rfx_model_set_scaler(m, mean, scale));
    CHECK_OK(rfx_model_predict(m, rfx_cmat_of(Xraw, n, d), rfx_mat_of(b, n, 1), rfx_mat_none()));
    double worst = 0;
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(a[i] - b[i]));
    printf("  scaler: raw inputs against standardised ones, max |diff| %.2e\n", worst);
    CHECK(worst < 1e-12);
    rfx_model_info info;
    CHECK_OK(rfx_model_get_info(m, &info));
    CHECK(info.standardized);
    void *buf = NULL;
    size_t len = 0;
    rfx_model *back = NULL;
    CHECK_OK(rfx_model_save_buffer(m, &buf, &len));
    CHECK_OK(rfx_model_load_buffer(buf, len, &back));
    CHECK_OK(rfx_model_predict(back, rfx_cmat_of(Xraw, n, d), rfx_mat_of(c, n, 1), rfx_mat_none()));
    CHECK(memcmp(b, c, sizeof c) == 0);
    rfx_buffer_free(buf);
    rfx_model_free(back);
    double bad[3] = {1.0, 0.0, 1.0};
    CHECK_STATUS(rfx_model_set_scaler(m, mean, bad), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "input 1: the scale must be finite and > 0") != NULL);
    bad[1] = NAN;
    CHECK_STATUS(rfx_model_set_scaler(m, bad, scale), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "input 1: the mean") != NULL);
    CHECK_STATUS(rfx_model_set_scaler(m, mean, NULL), RFX_EINVAL);
    CHECK_OK(rfx_model_set_scaler(m, NULL, NULL));
    CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(c, n, 1), rfx_mat_none()));
    CHECK(memcmp(a, c, sizeof c) == 0);
    CHECK_STATUS(rfx_model_set_scaler(NULL, mean, scale), RFX_EINVAL);
    rfx_model_free(m);
    rfx_features_free(f);
    free(X);
    free(Xraw);
    free(y);
}

/* The relaxed (convex) greedy update: the training error is non-increasing,
 * the model predicts the fit the path reports (the kept coefficients and
 * the intercept from the terms' means), one term is the orthogonal fit's
 * term, and more terms fit better; with and without intercept. */
static void test_greedy_relaxed(void)
{
    const size_t n = 400, d = 3, K = 40;
    double *X, *y, path[40], opath[1], rpath1[1];
    make_data(77, n, d, 0, &X, &y);
    for (int icpt = 0; icpt < 2; icpt++) {
        rfx_greedy_params gp = rfx_greedy_params_default();
        gp.n_terms = K;
        gp.n_candidates = 32;
        gp.features.length_scale = 0.8;
        gp.features.seed = 6;
        gp.fit_intercept = icpt;
        gp.update = RFX_GREEDY_RELAXED;
        rfx_model *m = NULL;
        CHECK_OK(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &m, NULL, path));
        if (!m) continue;
        for (size_t k = 1; k < K; k++)
            CHECK_MSG(path[k] <= path[k - 1] * (1 + 1e-12), "relaxed: mse rises at term %zu", k);
        double *yh = malloc(n * sizeof(double)), e2 = 0;
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(yh, n, 1), rfx_mat_none()));
        for (size_t i = 0; i < n; i++) e2 += (yh[i] - y[i]) * (yh[i] - y[i]) / (double)n;
        printf("  relaxed greedy (intercept %d): training MSE after 1, 10, 40 terms %.5f %.5f "
               "%.5f; the model's %.5f\n", icpt, path[0], path[9], path[K - 1], e2);
        CHECK_NEAR(e2, path[K - 1], 1e-10 * (1 + path[K - 1]));
        CHECK(path[K - 1] < path[9]);
        CHECK(path[K - 1] < 0.0125); /* the noise's variance is 0.01 */
        free(yh);
        rfx_model_free(m);
        /* one term: the orthogonal fit's */
        rfx_model *a = NULL, *b = NULL;
        gp.n_terms = 1;
        CHECK_OK(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &a, NULL, rpath1));
        gp.update = RFX_GREEDY_ORTHOGONAL;
        CHECK_OK(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &b, NULL, opath));
        CHECK_NEAR(rpath1[0], opath[0], 1e-12 * opath[0]);
        if (a && b) {
            double pa[50], pb[50];
            CHECK_OK(rfx_model_predict(a, rfx_cmat_of(X, 50, d), rfx_mat_of(pa, 50, 1),
                                       rfx_mat_none()));
            CHECK_OK(rfx_model_predict(b, rfx_cmat_of(X, 50, d), rfx_mat_of(pb, 50, 1),
                                       rfx_mat_none()));
            double worst = 0;
            for (size_t i = 0; i < 50; i++) worst = fmax(worst, fabs(pa[i] - pb[i]));
            CHECK(worst < 1e-10);
        }
        rfx_model_free(a);
        rfx_model_free(b);
    }
    rfx_greedy_params gp = rfx_greedy_params_default();
    gp.update = (rfx_greedy_update)7;
    rfx_model *m = NULL;
    CHECK_STATUS(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &m, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "greedy params.update") != NULL);
    free(X);
    free(y);
}

int main(void)
{
    RFX_TEST_RUN(test_unconstrained_lsq);
    RFX_TEST_RUN(test_kkt_active_box);
    RFX_TEST_RUN(test_bruteforce_reference);
    RFX_TEST_RUN(test_wide);
    RFX_TEST_RUN(test_logistic_decrease);
    RFX_TEST_RUN(test_greedy_monotone);
    RFX_TEST_RUN(test_greedy_relaxed);
    RFX_TEST_RUN(test_greedy_one_term);
    RFX_TEST_RUN(test_greedy_recovery);
    RFX_TEST_RUN(test_model_files);
    RFX_TEST_RUN(test_scaler);
    RFX_TEST_RUN(test_threads);
    RFX_TEST_RUN(test_errors);
    return rfx_test_finish("test_sinks");
}
