/* SPDX-License-Identifier: BSD-3-Clause */
/* Exact Sobol indices of random-feature models (rfx_sobol_model_exact):
 *  - small models (one feature; a few q-sparse features) in d = 2 and 3
 *    against tensor Gauss-Legendre / Gauss-Hermite quadrature of the model
 *    itself (its predictions, rfx_model_predict): mean, variance, S_i, S_Ti
 *    and the second-order S_ik, for cos, sin and cos-sin features, uniform
 *    inputs off 0 and normal inputs, with and without the input scaler;
 *  - dense random Fourier feature ridge models (D = 256) the same way;
 *  - an SRFE surrogate of the Ishigami function against the Monte Carlo
 *    estimator (rfx_sobol_model) and its bootstrap intervals, with the
 *    structure of an order-2 model: sum S_i + sum S_ik = 1, S_Ti = S_i +
 *    sum_k S_ik;
 *  - an additive model (q = 1): S_i = S_Ti, sum S_i = 1;
 *  - the same bits for 1 and 2 threads; every error path. */
#include "internal.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Quadrature of a model                                                     */
/* ------------------------------------------------------------------------ */

/* n nodes and weights (summing to 1) of the Gauss rule of one marginal, by
 * Golub-Welsch: the eigenvalues of the Jacobi matrix of the orthogonal
 * polynomials (Legendre: off-diagonal k / sqrt(4k^2 - 1); probabilists'
 * Hermite: sqrt(k)) and the squared first components of its eigenvectors. */
static void gauss_rule(const rfx_marginal *m, size_t n, double *x, double *w)
{
    double *J = calloc(n * n, sizeof *J), *ev = malloc(n * sizeof *ev);
    int normal = m->kind == RFX_MARGINAL_NORMAL;
    for (size_t k = 1; k < n; k++) {
        double b = normal ? sqrt((double)k) : (double)k / sqrt(4.0 * (double)k * (double)k - 1.0);
        J[(k - 1) * n + k] = J[k * n + k - 1] = b;
    }
    CHECK_OK(rfx__eig_sym(J, n, ev, 1, "jacobi matrix"));
    double c = normal ? m->a : 0.5 * (m->a + m->b), h = normal ? m->b : 0.5 * (m->b - m->a);
    for (size_t k = 0; k < n; k++) {
        x[k] = c + h * ev[k];
        w[k] = J[k * n] * J[k * n];
    }
    free(J);
    free(ev);
}

typedef struct quad {
    double mean, var, first[3], total[3], second[9];
} quad;

/* Moments and indices of the model (d <= 3) by an n^d tensor rule: the
 * conditional means E[f | x_u] are weighted sums over the other
 * coordinates; V_u = sum w (E[f | x_u] - mean)^2, S_Ti from
 * E[(f - E[f | x_~i])^2], S_ik from the closed V_ik - V_i - V_k. */
static void quad_model(const rfx_model *m, const rfx_marginal *mg, size_t d, size_t n, quad *q)
{
    size_t G = 1;
    for (size_t k = 0; k < d; k++) G *= n;
    double *nodes = malloc(d * n * sizeof *nodes), *wts = malloc(d * n * sizeof *wts);
    double *X = malloc(G * d * sizeof *X), *F = malloc(G * sizeof *F), *W = malloc(G * sizeof *W);
    double *cond = malloc(G * sizeof *cond), *csum = malloc(G * sizeof *csum);
    double Vc[8] = {0};
    for (size_t k = 0; k < d; k++) gauss_rule(&mg[k], n, nodes + k * n, wts + k * n);
    for (size_t g = 0; g < G; g++) {
        size_t r = g;
        W[g] = 1.0;
        for (size_t k = 0; k < d; k++) {
            X[g * d + k] = nodes[k * n + r % n];
            W[g] *= wts[k * n + r % n];
            r /= n;
        }
    }
    CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, G, d), rfx_mat_of(F, G, 1), rfx_mat_none()));
    memset(q, 0, sizeof *q);
    for (size_t g = 0; g < G; g++) q->mean += W[g] * F[g];
    for (size_t g = 0; g < G; g++) q->var += W[g] * (F[g] - q->mean) * (F[g] - q->mean);
    for (unsigned u = 1; u < (1u << d); u++) {
        memset(cond, 0, G * sizeof *cond);
        memset(csum, 0, G * sizeof *csum);
        for (size_t g = 0; g < G; g++) {
            size_t r = g, cell = 0, mult = 1;
            for (size_t k = 0; k < d; k++, r /= n)
                if (u & (1u << k)) {
                    cell += (r % n) * mult;
                    mult *= n;
                }
            cond[cell] += W[g] * F[g];
            csum[cell] += W[g];
        }
        for (size_t c = 0; c < G; c++)
            if (csum[c] > 0) {
                double e = cond[c] / csum[c] - q->mean;
                Vc[u] += csum[c] * e * e;
                cond[c] /= csum[c];
            }
        for (size_t i = 0; i < d; i++) {
            if (u != ((1u << d) - 1) - (1u << i)) continue;
            double T = 0.0; /* E[Var(f | x_~i)] */
            for (size_t g = 0; g < G; g++) {
                size_t r = g, cell = 0, mult = 1;
                for (size_t k = 0; k < d; k++, r /= n)
                    if (u & (1u << k)) {
                        cell += (r % n) * mult;
                        mult *= n;
                    }
                T += W[g] * (F[g] - cond[cell]) * (F[g] - cond[cell]);
            }
            q->total[i] = T / q->var;
        }
    }
    for (size_t i = 0; i < d; i++) {
        q->first[i] = Vc[1u << i] / q->var;
        q->second[i * d + i] = q->first[i];
        for (size_t k = 0; k < d; k++)
            if (k != i)
                q->second[i * d + k] =
                    (Vc[(1u << i) | (1u << k)] - Vc[1u << i] - Vc[1u << k]) / q->var;
    }
    if (d == 1) q->total[0] = 1.0;
    free(nodes);
    free(wts);
    free(X);
    free(F);
    free(W);
    free(cond);
    free(csum);
}

/* The exact results against the quadrature: mean and variance relative,
 * the indices (fractions of the variance) absolute; returns the largest
 * discrepancy seen (relative for the moments). */
static double compare(const rfx_model *m, const rfx_marginal *mg, size_t d, size_t n,
                      double tol, const char *what)
{
    quad q;
    double mean = NAN, var = NAN, first[3], total[3], second[9];
    CHECK_OK(rfx_sobol_model_exact(m, mg, d, &mean, &var, first, total, second));
    quad_model(m, mg, d, n, &q);
    double scale = fabs(q.mean) > sqrt(q.var) ? fabs(q.mean) : sqrt(q.var);
    double err = fabs(mean - q.mean) / scale, e;
    CHECK_NEAR(mean, q.mean, tol * scale);
    CHECK_NEAR(var, q.var, tol * q.var);
    e = fabs(var - q.var) / q.var;
    err = e > err ? e : err;
    for (size_t i = 0; i < d; i++) {
        CHECK_NEAR(first[i], q.first[i], tol);
        CHECK_NEAR(total[i], q.total[i], tol);
        e = fabs(first[i] - q.first[i]) > fabs(total[i] - q.total[i])
                ? fabs(first[i] - q.first[i])
                : fabs(total[i] - q.total[i]);
        err = e > err ? e : err;
        for (size_t k = 0; k < d; k++) {
            CHECK_NEAR(second[i * d + k], q.second[i * d + k], tol);
            e = fabs(second[i * d + k] - q.second[i * d + k]);
            err = e > err ? e : err;
        }
    }
    printf("%-44s mean %.6g var %.6g S_0 %.4f S_T0 %.4f: max discrepancy %.2e\n", what, mean, var,
           first[0], total[0], err);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Models with given weights                                                 */
/* ------------------------------------------------------------------------ */

/* A model over a fresh feature map with weights W (D values), intercept c0
 * and, when x_mean is not NULL, the scaler (x_mean, x_scale). */
static rfx_model *make_model(const rfx_features_params *fp, size_t d, const double *W, double c0,
                             const double *x_mean, const double *x_scale)
{
    rfx_features *f = NULL;
    rfx_model *m = NULL;
    CHECK_OK(rfx_features_create(fp, d, &f));
    if (!f) return NULL;
    CHECK_OK(rfx__model_alloc(RFX_METHOD_RIDGE, f, 1, 0, &m));
    if (!m) {
        rfx_features_free(f);
        return NULL;
    }
    memcpy(m->W, W, fp->n_features * sizeof *W);
    m->intercept[0] = c0;
    if (x_mean) {
        m->x_mean = malloc(d * sizeof *m->x_mean);
        m->x_scale = malloc(d * sizeof *m->x_scale);
        memcpy(m->x_mean, x_mean, d * sizeof *x_mean);
        memcpy(m->x_scale, x_scale, d * sizeof *x_scale);
    }
    return m;
}

/* One feature in d = 2 and d = 3; a few 2-sparse features in d = 3 (pairs
 * sharing one input, two, or none). */
static void test_small_models(void)
{
    const double xm[3] = {0.2, -0.1, 2.7}, xs[3] = {0.9, 1.3, 0.6};
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = 1;
    fp.length_scale = 0.8;
    fp.seed = 3;
    {
        const rfx_marginal mg[2] = {rfx_marginal_uniform(-1.0, 2.0),
                                    rfx_marginal_uniform(0.5, 3.0)};
        const double W[1] = {1.3};
        rfx_model *m = make_model(&fp, 2, W, 0.4, NULL, NULL);
        if (m) compare(m, mg, 2, 64, 1e-10, "one cos feature, d = 2, uniform");
        rfx_model_free(m);
    }
    {
        const rfx_marginal mg[3] = {rfx_marginal_uniform(-1.0, 1.0),
                                    rfx_marginal_normal(0.3, 0.8),
                                    rfx_marginal_uniform(2.0, 3.5)};
        const double W[1] = {-2.1};
        fp.activation = RFX_ACTIVATION_SIN;
        fp.weights = RFX_WEIGHTS_NORMAL;
        fp.weight_scale = 1.4;
        rfx_model *m = make_model(&fp, 3, W, 1.5, xm, xs);
        if (m) compare(m, mg, 3, 48, 1e-10, "one sin feature, d = 3, scaled, mixed");
        rfx_model_free(m);
    }
    {
        const rfx_marginal mg[3] = {rfx_marginal_normal(-0.5, 0.6), rfx_marginal_normal(1.0, 0.4),
                                    rfx_marginal_normal(2.5, 0.9)};
        const double W[2] = {0.7, -1.1};
        fp = rfx_features_params_default();
        fp.form = RFX_FORM_COS_SIN;
        fp.n_features = 2;
        fp.length_scale = 0.9;
        fp.seed = 5;
        rfx_model *m = make_model(&fp, 3, W, -0.2, xm, xs);
        if (m) compare(m, mg, 3, 48, 1e-10, "one cos-sin pair, d = 3, scaled, normal");
        rfx_model_free(m);
    }
    {
        /* 5 features on the supports {0,1}, {0,2}, {1,2}, {0,1}, {0,2}:
         * every kind of overlap */
        const rfx_marginal mg[3] = {rfx_marginal_uniform(-2.0, -0.5),
                                    rfx_marginal_normal(0.5, 0.7),
                                    rfx_marginal_uniform(1.0, 4.0)};
        const double W[5] = {0.9, -0.6, 1.2, 0.4, -0.8};
        fp = rfx_features_params_default();
        fp.n_features = 5;
        fp.sparsity = 2;
        fp.activation = RFX_ACTIVATION_SIN;
        fp.weights = RFX_WEIGHTS_NORMAL;
        fp.seed = 9;
        rfx_model *m = make_model(&fp, 3, W, 0.0, NULL, NULL);
        if (m) compare(m, mg, 3, 48, 1e-10, "five 2-sparse sin features, d = 3");
        rfx_model_free(m);
        m = make_model(&fp, 3, W, 0.0, xm, xs);
        if (m) compare(m, mg, 3, 48, 1e-10, "five 2-sparse sin features, d = 3, scaled");
        rfx_model_free(m);
    }
}

/* A smooth target on the input distribution. */
static double target(const double *x)
{
    return sin(x[0]) + 0.8 * x[1] * x[1] * cos(x[2]) + 0.3 * x[0] * x[2];
}

/* Dense ridge models (D = 256, gaussian kernel) fitted on rows drawn from
 * the marginals, against the 40^3 Gauss rule. */
static void test_dense_models(void)
{
    const size_t n = 400, d = 3;
    const rfx_marginal mg[3] = {rfx_marginal_uniform(-3.0, 3.0), rfx_marginal_uniform(0.0, 2.0),
                                rfx_marginal_normal(1.0, 0.5)};
    double *X = malloc(n * d * sizeof *X), *y = malloc(n * sizeof *y);
    CHECK_OK(rfx_marginals_sample(mg, d, 42, rfx_mat_of(X, n, d)));
    for (size_t i = 0; i < n; i++) y[i] = target(X + i * d);
    for (int variant = 0; variant < 3; variant++) {
        rfx_fit_params p = rfx_fit_params_default();
        p.method = RFX_METHOD_RIDGE;
        p.features.n_features = 256;
        p.features.length_scale = variant == 1 ? 2.5 : 1.2;
        p.features.seed = 7;
        p.features.form = variant == 2 ? RFX_FORM_COS_SIN : RFX_FORM_COS_BIAS;
        p.standardize = variant != 1;
        p.lambda = 1e-4;
        rfx_model *m = NULL;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &m, NULL));
        const char *what[3] = {"dense RFF D = 256, standardized", "dense RFF D = 256, raw inputs",
                               "dense RFF D = 256 (cos-sin), standardized"};
        if (m) compare(m, mg, d, 40, 1e-10, what[variant]);
        rfx_model_free(m);
    }
    free(X);
    free(y);
}

/* f = cos(w0 x0 + w1 x1 + b) on U[-1,1]^2 with w1 = 1e-8: x1's indices are
 * about w1^2 = 1e-16. With c = (1 - sinc^2 w1) and e = sinc(2 w1) -
 * sinc^2 w1 (two-term series: w^2/3 - 2w^4/45 and -w^2/3 + 4w^4/45):
 *   E Var(f | x0) = (c + cos(2b) sinc(2 w0) e) / 2
 *   Var E[f | x1] = sinc^2(w0) (c + cos(2b) e) / 2
 * Computed as 1 - Var E[f | x0] / V, S_T1 would be rounding noise. */
static void test_tiny_index(void)
{
    const double w0 = 1.7, w1 = 1e-8, b = 0.4;
    const rfx_marginal mg[2] = {rfx_marginal_uniform(-1, 1), rfx_marginal_uniform(-1, 1)};
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = 1;
    const double W[1] = {1.0};
    rfx_model *m = make_model(&fp, 2, W, 0.0, NULL, NULL);
    if (!m) return;
    m->features->W[0] = w0; /* the frequencies and phase set by hand */
    m->features->W[1] = w1;
    m->features->b[0] = b;
    m->W[0] = 1.0 / m->features->scale;
    double var, first[2], total[2];
    CHECK_OK(rfx_sobol_model_exact(m, mg, 2, NULL, &var, first, total, NULL));
    double w2 = w1 * w1, c = w2 / 3 - 2 * w2 * w2 / 45, e = -w2 / 3 + 4 * w2 * w2 / 45;
    double s0 = sin(w0) / w0, s20 = sin(2 * w0) / (2 * w0), s1 = sin(w1) / w1;
    double s21 = sin(2 * w1) / (2 * w1);
    double V = 0.5 + 0.5 * cos(2 * b) * s20 * s21 - cos(b) * cos(b) * s0 * s0 * s1 * s1;
    double T1 = 0.5 * (c + cos(2 * b) * s20 * e) / V, S1 = 0.5 * s0 * s0 * (c + cos(2 * b) * e) / V;
    printf("tiny index: S_1 %.10e (closed form %.10e), S_T1 %.10e (%.10e), 1 - S_0 = %.3e\n",
           first[1], S1, total[1], T1, 1.0 - first[0]);
    CHECK_NEAR(var, V, 1e-14 * V);
    CHECK_NEAR(total[1], T1, 1e-10 * T1);
    CHECK_NEAR(first[1], S1, 1e-10 * S1);
    rfx_model_free(m);
}

/* ------------------------------------------------------------------------ */
/* An SRFE surrogate against Monte Carlo                                     */
/* ------------------------------------------------------------------------ */

static void test_srfe_ishigami(void)
{
    rfx_testfn *fn = NULL;
    CHECK_OK(rfx_testfn_create(RFX_TESTFN_ISHIGAMI, NULL, &fn));
    if (!fn) return;
    const size_t m = 300, d = 3;
    const rfx_marginal *mg = rfx_testfn_marginals(fn);
    double *X = malloc(m * d * sizeof *X), *y = malloc(m * sizeof *y);
    CHECK_OK(rfx_testfn_sample(fn, 1, rfx_mat_of(X, m, d), y));
    rfx_srfe_params p = rfx_srfe_params_default();
    p.features.n_features = 500;
    p.features.weight_scale = 2.0; /* given: no cross-validation */
    p.lambda = 1e-3;
    rfx_model *mo = NULL;
    rfx_srfe_report rep;
    CHECK_OK(rfx_srfe_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mo, &rep));
    if (mo) {
        double mean, var, first[3], total[3], second[9], S[3], T[3], flo[3], fhi[3], tlo[3],
            thi[3];
        CHECK_OK(rfx_sobol_model_exact(mo, mg, d, &mean, &var, first, total, second));
        rfx_sobol_params sp = rfx_sobol_params_default();
        sp.n = 16000;
        sp.seed = 11;
        sp.confidence = 0.999;
        rfx_sobol_result r = {S, T, flo, fhi, tlo, thi, 0, 0, 0, NULL, NULL, NULL};
        CHECK_OK(rfx_sobol_model(mo, 0, mg, d, &sp, &r));
        printf("SRFE Ishigami (%zu nonzero of %zu): exact mean %.5f var %.5f, MC %.5f %.5f\n",
               rep.n_nonzero, rep.n_features, mean, var, r.mean, r.variance);
        double sum_first = 0, sum_all = 0;
        for (size_t i = 0; i < d; i++) {
            printf("  x%zu: S %.4f in MC [%.4f, %.4f]   S_T %.4f in MC [%.4f, %.4f]\n", i,
                   first[i], flo[i], fhi[i], total[i], tlo[i], thi[i]);
            CHECK(first[i] >= flo[i] && first[i] <= fhi[i]);
            CHECK(total[i] >= tlo[i] && total[i] <= thi[i]);
            CHECK(first[i] >= -1e-12 && first[i] <= total[i] + 1e-12);
            sum_first += first[i];
            /* an order-2 model: S_Ti = S_i + sum_k S_ik */
            double t = 0;
            for (size_t k = 0; k < d; k++) t += second[i * d + k];
            CHECK_NEAR(total[i], t, 1e-12);
            for (size_t k = i; k < d; k++) sum_all += second[i * d + k];
        }
        CHECK(sum_first <= 1.0);
        CHECK_NEAR(sum_all, 1.0, 1e-12);
        CHECK_NEAR(mean, r.mean, 4.0 * sqrt(var / (2.0 * (double)sp.n)));
        CHECK_NEAR(var / r.variance, 1.0, 0.05);
    }
    rfx_model_free(mo);
    free(X);
    free(y);
    rfx_testfn_free(fn);
}

/* ------------------------------------------------------------------------ */
/* Structure, threads, degenerate models                                     */
/* ------------------------------------------------------------------------ */

/* q = 1: every feature a function of one input, the model additive. */
static void test_additive(void)
{
    const size_t d = 4, D = 40;
    const rfx_marginal mg[4] = {rfx_marginal_uniform(-1, 1), rfx_marginal_normal(2, 0.3),
                                rfx_marginal_uniform(0, 5), rfx_marginal_normal(-1, 2)};
    rfx_test_rng r = {17};
    double W[40];
    for (size_t j = 0; j < D; j++) W[j] = rfx_test_normal(&r);
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = D;
    fp.sparsity = 1;
    rfx_model *m = make_model(&fp, d, W, 0.0, NULL, NULL);
    if (!m) return;
    double first[4], total[4], second[16], s = 0;
    CHECK_OK(rfx_sobol_model_exact(m, mg, d, NULL, NULL, first, total, second));
    for (size_t i = 0; i < d; i++) {
        CHECK_NEAR(first[i], total[i], 1e-14);
        s += first[i];
        for (size_t k = 0; k < d; k++)
            if (k != i) CHECK(second[i * d + k] == 0.0);
    }
    CHECK_NEAR(s, 1.0, 1e-13);
    rfx_model_free(m);
}

/* The same bits for one and two threads (a model large enough to run a
 * team of two). */
static void test_threads(void)
{
    const size_t d = 3, D = 768;
    const rfx_marginal mg[3] = {rfx_marginal_uniform(-1, 1), rfx_marginal_normal(0, 1),
                                rfx_marginal_uniform(2, 3)};
    rfx_test_rng r = {23};
    double *W = malloc(D * sizeof *W);
    for (size_t j = 0; j < D; j++) W[j] = rfx_test_normal(&r);
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = D;
    rfx_model *m = make_model(&fp, d, W, 0.0, NULL, NULL);
#ifdef _OPENMP
    if (m) {
        double r1[2 + 6 + 9], r2[2 + 6 + 9];
        omp_set_num_threads(1);
        CHECK_OK(rfx_sobol_model_exact(m, mg, d, r1, r1 + 1, r1 + 2, r1 + 5, r1 + 8));
        omp_set_num_threads(2);
        CHECK_OK(rfx_sobol_model_exact(m, mg, d, r2, r2 + 1, r2 + 2, r2 + 5, r2 + 8));
        CHECK(memcmp(r1, r2, sizeof r1) == 0);
    }
#endif
    rfx_model_free(m);
    free(W);
}

/* Zero weights: a constant model. */
static void test_constant(void)
{
    const rfx_marginal mg[2] = {rfx_marginal_uniform(0, 1), rfx_marginal_uniform(0, 1)};
    const double W[3] = {0, 0, 0};
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = 3;
    rfx_model *m = make_model(&fp, 2, W, 2.5, NULL, NULL);
    if (!m) return;
    double mean = 0, var = 1, first[2] = {1, 1}, total[2] = {1, 1}, second[4] = {1, 1, 1, 1};
    CHECK_OK(rfx_sobol_model_exact(m, mg, 2, &mean, &var, first, total, second));
    CHECK(mean == 2.5 && var == 0.0);
    for (size_t i = 0; i < 2; i++) CHECK(first[i] == 0.0 && total[i] == 0.0);
    for (size_t i = 0; i < 4; i++) CHECK(second[i] == 0.0);
    rfx_model_free(m);
}

static void test_errors(void)
{
    const rfx_marginal mg[3] = {rfx_marginal_uniform(-1, 1), rfx_marginal_normal(0, 1),
                                rfx_marginal_uniform(2, 3)};
    const double W[4] = {1, -1, 0.5, 2};
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = 4;
    rfx_model *m = make_model(&fp, 3, W, 0.0, NULL, NULL);
    if (!m) return;
    double mean = -7, first[3] = {-7, -7, -7};
#define UNTOUCHED() CHECK(mean == -7 && first[0] == -7 && first[2] == -7)
    CHECK_STATUS(rfx_sobol_model_exact(NULL, mg, 3, &mean, NULL, first, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "model is NULL") != NULL);
    CHECK_STATUS(rfx_sobol_model_exact(m, NULL, 3, &mean, NULL, first, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "marginals") != NULL);
    CHECK_STATUS(rfx_sobol_model_exact(m, mg, 0, &mean, NULL, first, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "d must be >= 1") != NULL);
    CHECK_STATUS(rfx_sobol_model_exact(m, mg, 2, &mean, NULL, first, NULL, NULL), RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "the model has 3") != NULL);
    rfx_marginal bad[3] = {mg[0], rfx_marginal_uniform(1, 1), mg[2]};
    CHECK_STATUS(rfx_sobol_model_exact(m, bad, 3, &mean, NULL, first, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "marginals[1]") != NULL);
    bad[1] = rfx_marginal_normal(0, -1);
    CHECK_STATUS(rfx_sobol_model_exact(m, bad, 3, &mean, NULL, first, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "marginals[1]") != NULL);
    bad[1] = mg[1];
    bad[2] = rfx_marginal_lognormal(0, 1);
    CHECK_STATUS(rfx_sobol_model_exact(m, bad, 3, &mean, NULL, first, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "marginals[2]: lognormal") != NULL);
    UNTOUCHED();

    /* activations other than cos and sin */
    rfx_features *f = m->features;
    rfx_activation act = f->params.activation;
    f->params.activation = RFX_ACTIVATION_TANH;
    CHECK_STATUS(rfx_sobol_model_exact(m, mg, 3, &mean, NULL, first, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "features.activation") != NULL &&
          strstr(rfx_last_error(), "tanh") != NULL);
    f->params.activation = RFX_ACTIVATION_RELU;
    CHECK_STATUS(rfx_sobol_model_exact(m, mg, 3, &mean, NULL, first, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "relu") != NULL);
    f->params.activation = act;
    /* a model without a feature map (a polynomial chaos model's layout) */
    m->features = NULL;
    CHECK_STATUS(rfx_sobol_model_exact(m, mg, 3, &mean, NULL, first, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "no feature map") != NULL);
    m->features = f;
    /* non-finite weights */
    m->W[2] = NAN;
    CHECK_STATUS(rfx_sobol_model_exact(m, mg, 3, &mean, NULL, first, NULL, NULL), RFX_ENUMERIC);
    CHECK(strstr(rfx_last_error(), "feature 2") != NULL);
    m->W[2] = W[2];
    /* a scaler of zero width makes the frequencies infinite */
    m->x_mean = calloc(3, sizeof *m->x_mean);
    m->x_scale = malloc(3 * sizeof *m->x_scale);
    m->x_scale[0] = m->x_scale[1] = 1.0;
    m->x_scale[2] = 0.0;
    CHECK_STATUS(rfx_sobol_model_exact(m, mg, 3, &mean, NULL, first, NULL, NULL), RFX_ENUMERIC);
    CHECK(strstr(rfx_last_error(), "input 2") != NULL);
    UNTOUCHED();
    /* every output may be NULL */
    m->x_scale[2] = 1.0;
    CHECK_OK(rfx_sobol_model_exact(m, mg, 3, NULL, NULL, NULL, NULL, NULL));
    rfx_model_free(m);

    /* two targets */
    rfx_features *f2 = NULL;
    rfx_model *m2 = NULL;
    CHECK_OK(rfx_features_create(&fp, 3, &f2));
    if (f2) CHECK_OK(rfx__model_alloc(RFX_METHOD_RIDGE, f2, 2, 0, &m2));
    if (m2) {
        CHECK_STATUS(rfx_sobol_model_exact(m2, mg, 3, &mean, NULL, first, NULL, NULL),
                     RFX_EINVAL);
        CHECK(strstr(rfx_last_error(), "2 targets") != NULL);
        UNTOUCHED();
    }
    rfx_model_free(m2);
#undef UNTOUCHED
}

int main(void)
{
    test_small_models();
    test_dense_models();
    test_tiny_index();
    test_srfe_ishigami();
    test_additive();
    test_threads();
    test_constant();
    test_errors();
    return rfx_test_finish("test_sobol_rf");
}
