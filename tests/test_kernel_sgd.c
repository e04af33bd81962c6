/* SPDX-License-Identifier: BSD-3-Clause */
/* SGD with a kernel in the four strategies (rfx/kernel_sgd.h):
 *  - with the kernel of a feature map, k = rfx_kern_features(f), the four
 *    strategies give the same decision values (1e-10 relative), the same w
 *    (strategies 1, 2), the same u (3, 4), and w = Z^T u (the representer
 *    identity), for the logistic and hinge losses;
 *  - strategies 3 and 4 agree with the exact RBF kernel (1e-10);
 *  - a few steps equal a reference written here from the update formulas
 *    (features and kernel values computed independently) for the three
 *    losses, with a decaying step, without and with the L2 penalty;
 *  - the index sequence: range, prefix property, frequencies;
 *  - logistic SGD with a decaying step approaches the batch minimiser
 *    found by Newton's method, the error falling as T grows: of the plain
 *    logistic loss on overlapping classes (where it is finite), and of the
 *    L2-penalised loss on separable classes;
 *  - the cost counters equal their formulas (feature and kernel evaluations,
 *    flops, cache and state bytes);
 *  - bitwise identical results for 1 and 2 threads, progress and
 *    cancellation, every error path. */
#include "internal.h"
#include "rfx/kernel_sgd.h"
#include "testlib.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_ERR(call, status, needle)                                                    \
    do {                                                                                   \
        CHECK_STATUS(call, status);                                                        \
        CHECK_MSG(strstr(rfx_last_error(), needle) != NULL, "message '%s' lacks '%s'",    \
                  rfx_last_error(), needle);                                               \
    } while (0)

/* The lecture's 2-D labels: -1 inside two discs and on an arc, else +1. */
static double lecture_label(const double *x)
{
    double a = hypot(x[0] - 0.25, x[1] - 0.75), b = hypot(x[0] - 0.75, x[1] - 0.75);
    if (a < 0.15 || b < 0.15) return -1.0;
    if (x[1] < 0.4 && hypot(x[0] - 0.5, x[1] - 0.6) < 0.5 && hypot(x[0] - 0.5, x[1] - 0.55) > 0.3)
        return -1.0;
    return 1.0;
}

static double *lecture_labels(const double *X, size_t n)
{
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = lecture_label(X + 2 * i);
    return y;
}

static double max_abs(const double *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
    return m;
}

static double max_diff(const double *a, const double *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

static rfx_features *make_features_structured(size_t d, size_t D, double gamma, uint64_t seed,
                                              rfx_structure structure)
{
    rfx_features_params fp = rfx_features_params_default();
    fp.structure = structure;
    fp.n_features = D;
    fp.gamma = gamma;
    fp.seed = seed;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&fp, d, &f));
    return f;
}

static rfx_features *make_features(size_t d, size_t D, double gamma, uint64_t seed)
{
    return make_features_structured(d, D, gamma, seed, RFX_STRUCTURE_IID);
}

static rfx_kernel_sgd *fit(const rfx_kern *k, const rfx_features *f, rfx_cmat X, const double *y,
                           rfx_sgd_strategy s, rfx_loss loss, size_t T)
{
    rfx_kernel_sgd_params p = rfx_kernel_sgd_params_default();
    p.strategy = s;
    p.loss = loss;
    p.n_iter = T;
    p.seed = 7;
    rfx_kernel_sgd *m = NULL;
    CHECK_OK(rfx_kernel_sgd_fit(k, f, X, y, &p, &m));
    return m;
}

/* ---- the four strategies on the kernel of a feature map ----------------- */

static void four_agree(rfx_structure structure)
{
    const size_t n = 64, nt = 40, d = 2, D = 96;
    rfx_test_rng rng = {11};
    double *X = rfx_test_matrix(&rng, n, d, 0, 1), *Xt = rfx_test_matrix(&rng, nt, d, 0, 1);
    double *y = lecture_labels(X, n);
    rfx_features *f = make_features_structured(d, D, 10.0, 3, structure);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_features(f, &k));
    double *Z = malloc(n * D * sizeof *Z);
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, D)));
    const rfx_loss losses[2] = {RFX_LOSS_LOGISTIC, RFX_LOSS_HINGE};
    for (int l = 0; l < 2; l++) {
        rfx_kernel_sgd *m[4];
        double *dec[4];
        for (int s = 0; s < 4; s++) {
            m[s] = fit(k, f, rfx_cmat_of(X, n, d), y, (rfx_sgd_strategy)s, losses[l], 0);
            dec[s] = malloc((n + nt) * sizeof(double));
            if (!m[s]) return;
            CHECK_OK(rfx_kernel_sgd_decision(m[s], rfx_cmat_of(X, n, d), dec[s]));
            CHECK_OK(rfx_kernel_sgd_decision(m[s], rfx_cmat_of(Xt, nt, d), dec[s] + n));
        }
        const double scale = max_abs(dec[3], n + nt);
        CHECK(scale > 0.1);
        double worst = 0;
        for (int s = 0; s < 3; s++) {
            double e = max_diff(dec[s], dec[3], n + nt) / scale;
            worst = fmax(worst, e);
            CHECK_MSG(e <= 1e-10, "loss %d strategy %d: decision differs by %.3g relative", l, s, e);
        }
        /* w of 1 and 2, u of 3 and 4, and w = Z^T u */
        size_t Dw = 0, nu = 0;
        const double *w1 = rfx_kernel_sgd_weights(m[0], &Dw), *w2 = rfx_kernel_sgd_weights(m[1], NULL);
        const double *u3 = rfx_kernel_sgd_dual(m[2], &nu), *u4 = rfx_kernel_sgd_dual(m[3], NULL);
        CHECK(Dw == D && nu == n && w1 && w2 && u3 && u4);
        CHECK(rfx_kernel_sgd_dual(m[0], NULL) == NULL && rfx_kernel_sgd_weights(m[3], NULL) == NULL);
        double ew = max_diff(w1, w2, D) / max_abs(w2, D), eu = max_diff(u3, u4, n) / max_abs(u4, n);
        CHECK_MSG(ew <= 1e-10, "w1 vs w2: %.3g", ew);
        CHECK_MSG(eu <= 1e-10, "u3 vs u4: %.3g", eu);
        double *ztu = calloc(D, sizeof *ztu);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < D; j++) ztu[j] += Z[i * D + j] * u4[i];
        double er = max_diff(ztu, w1, D) / max_abs(w1, D);
        CHECK_MSG(er <= 1e-10, "w vs Z^T u: %.3g", er);
        printf("  %s, %s: decision values agree to %.2e relative (|f| up to %.3g); w to %.1e, u to "
               "%.1e, w = Z^T u to %.1e\n",
               rfx_structure_name(structure), l == 0 ? "logistic" : "hinge", worst, scale, ew, eu, er);
        free(ztu);
        for (int s = 0; s < 4; s++) {
            rfx_kernel_sgd_free(m[s]);
            free(dec[s]);
        }
    }
    free(Z);
    rfx_kern_free(k);
    rfx_features_free(f);
    free(X);
    free(Xt);
    free(y);
}

static void test_four_agree(void)
{
    four_agree(RFX_STRUCTURE_IID);
    four_agree(RFX_STRUCTURE_SORF); /* a map with a transform workspace */
}

/* ---- strategies 3 and 4 with the exact RBF kernel ------------------------ */

static void test_rbf_on_the_fly_vs_gram(void)
{
    const size_t n = 256, nt = 100, d = 2;
    rfx_test_rng rng = {5};
    double *X = rfx_test_matrix(&rng, n, d, 0, 1), *Xt = rfx_test_matrix(&rng, nt, d, 0, 1);
    double *y = lecture_labels(X, n);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(100.0, &k));
    rfx_kernel_sgd *m3 = fit(k, NULL, rfx_cmat_of(X, n, d), y, RFX_SGD_KERNEL_ON_THE_FLY,
                             RFX_LOSS_LOGISTIC, 0);
    rfx_kernel_sgd *m4 = fit(k, NULL, rfx_cmat_of(X, n, d), y, RFX_SGD_GRAM_CACHED,
                             RFX_LOSS_LOGISTIC, 0);
    if (!m3 || !m4) return;
    const double *u3 = rfx_kernel_sgd_dual(m3, NULL), *u4 = rfx_kernel_sgd_dual(m4, NULL);
    double eu = max_diff(u3, u4, n) / max_abs(u4, n);
    double d3[100], d4[100];
    CHECK_OK(rfx_kernel_sgd_decision(m3, rfx_cmat_of(Xt, nt, d), d3));
    CHECK_OK(rfx_kernel_sgd_decision(m4, rfx_cmat_of(Xt, nt, d), d4));
    double ed = max_diff(d3, d4, nt) / max_abs(d4, nt);
    CHECK_MSG(eu <= 1e-10, "u3 vs u4: %.3g", eu);
    CHECK_MSG(ed <= 1e-10, "decision 3 vs 4: %.3g", ed);
    printf("  RBF gamma 100, n %zu, T %zu: u %s (%.2e), decisions to %.2e relative\n", n, 20 * n,
           memcmp(u3, u4, n * sizeof *u3) == 0 ? "bitwise equal" : "equal to rounding", eu, ed);
    rfx_kernel_sgd_free(m3);
    rfx_kernel_sgd_free(m4);
    rfx_kern_free(k);
    free(X);
    free(Xt);
    free(y);
}

/* ---- a few steps against the formulas ------------------------------------ */

static double ref_deriv(rfx_loss loss, double f, double y)
{
    double m = y * f;
    if (loss == RFX_LOSS_LOGISTIC) return -y * exp(-m) / (1.0 + exp(-m)); /* d/df log(1+e^-yf) */
    if (loss == RFX_LOSS_HINGE) return m < 1 ? -y : 0.0;
    return m < 1 ? -2.0 * y * (1.0 - m) : 0.0;
}

static void test_reference_steps(void)
{
    const size_t n = 10, d = 3, D = 16, T = 9;
    const double alpha = 0.3, t0 = 2.0, gamma = 0.7;
    rfx_test_rng rng = {21};
    double *X = rfx_test_matrix(&rng, n, d, -1, 1);
    double y[10];
    for (size_t i = 0; i < n; i++) y[i] = X[i * d] + 0.3 * X[i * d + 1] > 0 ? 1.0 : -1.0;
    rfx_features *f = make_features(d, D, 0.5, 9);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(gamma, &k));
    double *Z = malloc(n * D * sizeof *Z), K[100];
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, D)));
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double r2 = 0;
            for (size_t c = 0; c < d; c++) r2 += (X[i * d + c] - X[j * d + c]) * (X[i * d + c] - X[j * d + c]);
            K[i * n + j] = exp(-gamma * r2);
        }
    size_t idx[9];
    CHECK_OK(rfx_kernel_sgd_indices(13, n, T, idx));
    const rfx_loss losses[3] = {RFX_LOSS_LOGISTIC, RFX_LOSS_HINGE, RFX_LOSS_SQUARED_HINGE};
    for (int l = 0; l < 6; l++) {
        const rfx_loss loss = losses[l % 3];
        const double lambda = l < 3 ? 0.0 : 0.4;
        double w[16] = {0}, u[10] = {0};
        for (size_t t = 0; t < T; t++) {
            const size_t i = idx[t];
            const double a = alpha / (1.0 + (double)t / t0);
            double fw = 0, fu = 0;
            for (size_t j = 0; j < D; j++) fw += w[j] * Z[i * D + j];
            for (size_t j = 0; j < n; j++) fu += K[i * n + j] * u[j];
            double gw = a * ref_deriv(loss, fw, y[i]), gu = a * ref_deriv(loss, fu, y[i]);
            /* a step on l + (lambda / 2) |w|^2, with w = sum_j u_j phi(x_j) */
            for (size_t j = 0; j < D; j++) w[j] -= a * lambda * w[j] + gw * Z[i * D + j];
            for (size_t j = 0; j < n; j++) u[j] -= a * lambda * u[j];
            u[i] -= gu;
        }
        for (int s = 0; s < 4; s++) {
            rfx_kernel_sgd_params p = rfx_kernel_sgd_params_default();
            p.strategy = (rfx_sgd_strategy)s;
            p.loss = loss;
            p.lambda = lambda;
            p.alpha = alpha;
            p.t0 = t0;
            p.n_iter = T;
            p.seed = 13;
            rfx_kernel_sgd *m = NULL;
            CHECK_OK(rfx_kernel_sgd_fit(k, f, rfx_cmat_of(X, n, d), y, &p, &m));
            if (!m) continue;
            if (s < 2) {
                const double *mw = rfx_kernel_sgd_weights(m, NULL);
                CHECK_MSG(max_diff(mw, w, D) <= 1e-13 * fmax(1, max_abs(w, D)),
                          "loss %d strategy %d: w differs from the reference by %.3g", l, s,
                          max_diff(mw, w, D));
            } else {
                const double *mu = rfx_kernel_sgd_dual(m, NULL);
                CHECK_MSG(max_diff(mu, u, n) <= 1e-13 * fmax(1, max_abs(u, n)),
                          "loss %d strategy %d: u differs from the reference by %.3g", l, s,
                          max_diff(mu, u, n));
                /* decision = sum_j u_j k(x_j, x) on the training rows */
                double dec[10];
                CHECK_OK(rfx_kernel_sgd_decision(m, rfx_cmat_of(X, n, d), dec));
                for (size_t i = 0; i < n; i++) {
                    double s_ = 0;
                    for (size_t j = 0; j < n; j++) s_ += K[i * n + j] * u[j];
                    CHECK_NEAR(dec[i], s_, 1e-12);
                }
            }
            rfx_kernel_sgd_free(m);
        }
        CHECK(max_abs(w, D) > 0 && max_abs(u, n) > 0);
    }
    free(Z);
    free(X);
    rfx_kern_free(k);
    rfx_features_free(f);
}

static void test_indices(void)
{
    const size_t n = 5, T = 50000;
    size_t *a = malloc(T * sizeof *a), b[10], c[10];
    CHECK_OK(rfx_kernel_sgd_indices(3, n, T, a));
    CHECK_OK(rfx_kernel_sgd_indices(3, n, 10, b));
    CHECK_OK(rfx_kernel_sgd_indices(4, n, 10, c));
    CHECK(memcmp(a, b, sizeof b) == 0);
    CHECK(memcmp(b, c, sizeof b) != 0);
    size_t count[5] = {0};
    int in_range = 1;
    for (size_t t = 0; t < T; t++) {
        if (a[t] >= n) in_range = 0;
        else count[a[t]]++;
    }
    CHECK(in_range);
    /* each count is Binomial(T, 1/5): mean 10000, sd 89 */
    for (size_t i = 0; i < n; i++)
        CHECK_MSG(fabs((double)count[i] - 10000.0) < 5 * 89.5, "row %zu drawn %zu times", i,
                  count[i]);
    CHECK_OK(rfx_kernel_sgd_indices(3, 1, 10, b));
    for (int t = 0; t < 10; t++) CHECK(b[t] == 0);
    CHECK_OK(rfx_kernel_sgd_indices(3, 1, 0, NULL));
    free(a);
}

/* ---- convergence toward the minimiser of the logistic loss ---------------- */

/* Newton's method on J(w) = (1/n) sum log(1 + exp(-y_i w.x_i)) +
 * (lambda / 2) |w|^2, w in R^3. */
static void newton_logistic(const double *X, const double *y, size_t n, double lambda, double w[3])
{
    w[0] = w[1] = w[2] = 0;
    for (int it = 0; it < 50; it++) {
        double g[3] = {lambda * w[0], lambda * w[1], lambda * w[2]};
        double H[9] = {lambda, 0, 0, 0, lambda, 0, 0, 0, lambda};
        for (size_t i = 0; i < n; i++) {
            const double *x = X + 3 * i;
            double m = y[i] * (w[0] * x[0] + w[1] * x[1] + w[2] * x[2]);
            double s = 1.0 / (1.0 + exp(m)); /* sigma(-m) */
            for (int a = 0; a < 3; a++) {
                g[a] -= y[i] * s * x[a] / (double)n;
                for (int b = 0; b < 3; b++) H[a * 3 + b] += s * (1 - s) * x[a] * x[b] / (double)n;
            }
        }
        /* solve H dw = g by Cramer's rule (3 x 3) */
        double det = H[0] * (H[4] * H[8] - H[5] * H[7]) - H[1] * (H[3] * H[8] - H[5] * H[6]) +
                     H[2] * (H[3] * H[7] - H[4] * H[6]);
        double dw[3];
        for (int c = 0; c < 3; c++) {
            double M[9];
            memcpy(M, H, sizeof M);
            for (int r = 0; r < 3; r++) M[r * 3 + c] = g[r];
            dw[c] = (M[0] * (M[4] * M[8] - M[5] * M[7]) - M[1] * (M[3] * M[8] - M[5] * M[6]) +
                     M[2] * (M[3] * M[7] - M[4] * M[6])) / det;
        }
        for (int a = 0; a < 3; a++) w[a] -= dw[a];
    }
}

/* SGD with the step alpha / (1 + t / t0) on a linear model with intercept,
 * x = (1, a, b), through the linear kernel: the decision values on the
 * training rows against those of the batch minimiser (Newton), as the mean
 * over 3 seeds of max_i |f_T(x_i) - f*(x_i)| / max |f*|, for T = 2e3 .. 2e6.
 * The error must fall with T and end small. */
static void converges(const double *X, const double *y, size_t n, double lambda, double alpha,
                      double t0, const char *what)
{
    double w[3], fstar[64], dec[64];
    newton_logistic(X, y, n, lambda, w);
    for (size_t i = 0; i < n; i++) fstar[i] = w[0] + w[1] * X[3 * i + 1] + w[2] * X[3 * i + 2];
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_linear(&k));
    double err[4] = {0};
    const size_t Ts[4] = {2000, 20000, 200000, 2000000};
    for (int r = 0; r < 4; r++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            rfx_kernel_sgd_params p = rfx_kernel_sgd_params_default();
            p.strategy = RFX_SGD_GRAM_CACHED;
            p.alpha = alpha;
            p.t0 = t0;
            p.lambda = lambda;
            p.n_iter = Ts[r];
            p.seed = seed;
            rfx_kernel_sgd *m = NULL;
            CHECK_OK(rfx_kernel_sgd_fit(k, NULL, rfx_cmat_of(X, n, 3), y, &p, &m));
            if (!m) return;
            CHECK_OK(rfx_kernel_sgd_decision(m, rfx_cmat_of(X, n, 3), dec));
            err[r] += max_diff(dec, fstar, n) / max_abs(fstar, n) / 3.0;
            rfx_kernel_sgd_free(m);
        }
    printf("  %s, lambda %g: w* = (%.3f, %.3f, %.3f); SGD error %.2e, %.2e, %.2e, %.2e at "
           "T = 2e3 .. 2e6\n",
           what, lambda, w[0], w[1], w[2], err[0], err[1], err[2], err[3]);
    for (int r = 1; r < 4; r++) CHECK_MSG(err[r] < err[r - 1], "%s: error grew at T[%d]", what, r);
    CHECK_MSG(err[3] < 0.01 && err[3] < err[0] / 5, "%s: final error %.3g", what, err[3]);
    rfx_kern_free(k);
}

static void test_converges_to_batch(void)
{
    const size_t n = 24;
    rfx_test_rng rng = {8};
    double X[72], y[24], ys[24];
    for (size_t i = 0; i < n; i++) {
        double a = 2 * rfx_test_uniform(&rng) - 1, b = 2 * rfx_test_uniform(&rng) - 1;
        X[3 * i] = 1;
        X[3 * i + 1] = a;
        X[3 * i + 2] = b;
        /* overlapping classes (a noisy line): the unregularised logistic
           loss has a finite minimiser */
        y[i] = a - 0.5 * b + 0.8 * rfx_test_normal(&rng) > 0.2 ? 1.0 : -1.0;
        /* separable classes: only the penalised loss has one */
        ys[i] = a - 0.5 * b > 0.2 ? 1.0 : -1.0;
    }
    converges(X, y, n, 0.0, 1.0, 100.0, "overlapping classes");
    converges(X, ys, n, 0.05, 1.0, 100.0, "separable classes");
}

/* ---- cost counters -------------------------------------------------------- */

static void test_costs(void)
{
    const size_t n = 40, d = 3, D = 32, T = 300;
    rfx_test_rng rng = {2};
    double *X = rfx_test_matrix(&rng, n, d, 0, 1);
    double y[40];
    for (size_t i = 0; i < n; i++) y[i] = X[i * d] > 0.5 ? 1.0 : -1.0;
    rfx_features *f = make_features(d, D, 1.0, 1);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(2.0, &k));
    /* the kernel values of the on-the-fly strategy: before step t, the rows
       already visited (logistic steps never leave u_i at 0) */
    size_t idx[300], expect3 = 0, seen = 0;
    unsigned char vis[40] = {0};
    CHECK_OK(rfx_kernel_sgd_indices(7, n, T, idx));
    for (size_t t = 0; t < T; t++) {
        expect3 += seen;
        if (!vis[idx[t]]) {
            vis[idx[t]] = 1;
            seen++;
        }
    }
    const double nd = (double)n, dd = (double)d, Dd = (double)D, Td = (double)T;
    const double flops[4] = {Td * (2 * dd * Dd + 4 * Dd), 2 * nd * dd * Dd + 4 * Dd * Td,
                             2 * dd * (double)expect3 + 2 * nd * Td, dd * nd * (nd + 1) + 2 * nd * Td};
    const size_t fe[4] = {T, n, 0, 0}, ke[4] = {0, 0, expect3, n * (n + 1) / 2};
    const size_t cache[4] = {0, 8 * n * D, 0, 8 * n * n};
    const size_t state[4] = {16 * D, 8 * D, n * (16 + sizeof(size_t) + 1), 8 * n};
    for (int s = 0; s < 4; s++) {
        rfx_kernel_sgd *m = fit(k, f, rfx_cmat_of(X, n, d), y, (rfx_sgd_strategy)s,
                                RFX_LOSS_LOGISTIC, T);
        if (!m) return;
        rfx_kernel_sgd_info info;
        CHECK_OK(rfx_kernel_sgd_get_info(m, &info));
        CHECK(info.strategy == (rfx_sgd_strategy)s && info.loss == RFX_LOSS_LOGISTIC);
        CHECK(info.n_train == n && info.n_inputs == d && info.n_iter == T);
        CHECK(info.n_features == (s < 2 ? D : 0));
        CHECK_MSG(info.feature_evals == fe[s], "strategy %d: %zu feature evaluations, expected %zu",
                  s, info.feature_evals, fe[s]);
        CHECK_MSG(info.kernel_evals == ke[s], "strategy %d: %zu kernel values, expected %zu", s,
                  info.kernel_evals, ke[s]);
        CHECK_NEAR(info.flops, flops[s], 1e-12 * flops[s]);
        CHECK(info.cache_bytes == cache[s]);
        CHECK(info.state_bytes == state[s]);
        double fl;
        size_t bytes;
        CHECK_OK(rfx_kernel_sgd_cost(m, &fl, &bytes));
        CHECK(fl == info.flops && bytes == cache[s] + state[s]);
        CHECK_OK(rfx_kernel_sgd_cost(m, NULL, NULL));
        if (s >= 2) CHECK(info.n_support == seen);
        printf("  %-20s T = %zu: %6zu feature evals, %6zu kernel values, %.3g flops, %zu + %zu "
               "bytes\n",
               rfx_sgd_strategy_name((rfx_sgd_strategy)s), T, info.feature_evals,
               info.kernel_evals, info.flops, info.cache_bytes, info.state_bytes);
        rfx_kernel_sgd_free(m);
    }
    /* the penalty's shrinking: T D or T n more */
    for (int s = 0; s < 4; s += 3) {
        rfx_kernel_sgd_params p = rfx_kernel_sgd_params_default();
        p.strategy = (rfx_sgd_strategy)s;
        p.n_iter = T;
        p.seed = 7;
        p.lambda = 0.5;
        rfx_kernel_sgd *ml = NULL;
        CHECK_OK(rfx_kernel_sgd_fit(k, f, rfx_cmat_of(X, n, d), y, &p, &ml));
        double fl = 0;
        CHECK_OK(rfx_kernel_sgd_cost(ml, &fl, NULL));
        double expect = flops[s] + Td * (s == 0 ? Dd : nd);
        CHECK_NEAR(fl, expect, 1e-12 * expect);
        rfx_kernel_sgd_free(ml);
    }
    /* T = 20 n by default */
    rfx_kernel_sgd *m = fit(k, f, rfx_cmat_of(X, n, d), y, RFX_SGD_GRAM_CACHED, RFX_LOSS_LOGISTIC, 0);
    rfx_kernel_sgd_info info;
    CHECK_OK(rfx_kernel_sgd_get_info(m, &info));
    CHECK(info.n_iter == 20 * n);
    rfx_kernel_sgd_free(m);
    /* hinge on the fly: kernel values only against the support */
    m = fit(k, f, rfx_cmat_of(X, n, d), y, RFX_SGD_KERNEL_ON_THE_FLY, RFX_LOSS_HINGE, T);
    CHECK_OK(rfx_kernel_sgd_get_info(m, &info));
    const double *u = rfx_kernel_sgd_dual(m, NULL);
    size_t nz = 0;
    for (size_t i = 0; i < n; i++) nz += u[i] != 0;
    CHECK(info.n_support == nz && nz > 0);
    CHECK(info.kernel_evals <= nz * T && info.kernel_evals < expect3);
    printf("  hinge on the fly: %zu support rows, %zu kernel values (logistic: %zu)\n", nz,
           info.kernel_evals, expect3);
    rfx_kernel_sgd_free(m);
    rfx_kern_free(k);
    rfx_features_free(f);
    free(X);
}

/* ---- threads, progress, names ------------------------------------------- */

static void test_threads(void)
{
    const size_t n = 300, d = 2;
    rfx_test_rng rng = {31};
    double *X = rfx_test_matrix(&rng, n, d, 0, 1);
    double *y = lecture_labels(X, n);
    rfx_features *f = make_features(d, 200, 20.0, 4);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(20.0, &k));
    for (int s = 1; s < 4; s += 2) {
        rfx_kernel_sgd *m[2];
        double *dec[2];
        for (int r = 0; r < 2; r++) {
            rfx_kernel_sgd_params p = rfx_kernel_sgd_params_default();
            p.strategy = (rfx_sgd_strategy)s;
            p.n_iter = 2000;
            p.n_threads = r + 1;
            CHECK_OK(rfx_kernel_sgd_fit(k, f, rfx_cmat_of(X, n, d), y, &p, &m[r]));
            dec[r] = malloc(n * sizeof(double));
            CHECK_OK(rfx_kernel_sgd_decision(m[r], rfx_cmat_of(X, n, d), dec[r]));
        }
        CHECK(memcmp(dec[0], dec[1], n * sizeof(double)) == 0);
        if (s == 1)
            CHECK(memcmp(rfx_kernel_sgd_weights(m[0], NULL), rfx_kernel_sgd_weights(m[1], NULL),
                         200 * sizeof(double)) == 0);
        else
            CHECK(memcmp(rfx_kernel_sgd_dual(m[0], NULL), rfx_kernel_sgd_dual(m[1], NULL),
                         n * sizeof(double)) == 0);
        /* labels: the sign of the decision values */
        double lab[300];
        CHECK_OK(rfx_kernel_sgd_predict(m[0], rfx_cmat_of(X, n, d), lab));
        size_t agree = 0, correct = 0;
        for (size_t i = 0; i < n; i++) {
            agree += lab[i] == (dec[0][i] > 0 ? 1.0 : -1.0);
            correct += lab[i] == y[i];
        }
        CHECK(agree == n);
        CHECK_MSG(correct > 0.8 * n, "training accuracy %zu / %zu", correct, n);
        for (int r = 0; r < 2; r++) {
            rfx_kernel_sgd_free(m[r]);
            free(dec[r]);
        }
    }
    rfx_kern_free(k);
    rfx_features_free(f);
    free(X);
    free(y);
}

typedef struct progress_log {
    int calls, cache_calls, stop_at;
    double last;
    int monotone;
} progress_log;

static int on_progress(void *user, const char *stage, double fraction)
{
    progress_log *g = user;
    g->calls++;
    if (strcmp(stage, "cache") == 0) g->cache_calls++;
    else {
        if (fraction < g->last) g->monotone = 0;
        g->last = fraction;
    }
    return g->stop_at > 0 && g->calls >= g->stop_at;
}

static void test_progress_and_names(void)
{
    const size_t n = 30, d = 2;
    rfx_test_rng rng = {4};
    double *X = rfx_test_matrix(&rng, n, d, 0, 1);
    double *y = lecture_labels(X, n);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(5.0, &k));
    rfx_kernel_sgd_params p = rfx_kernel_sgd_params_default();
    progress_log g = {0, 0, 0, 0.0, 1};
    p.progress = on_progress;
    p.progress_user = &g;
    rfx_kernel_sgd *m = NULL;
    CHECK_OK(rfx_kernel_sgd_fit(k, NULL, rfx_cmat_of(X, n, d), y, &p, &m));
    CHECK_MSG(g.cache_calls == 2 && g.monotone && g.last == 1.0 && g.calls > 50,
              "progress: %d calls, %d of the cache, monotone %d, last %g", g.calls, g.cache_calls,
              g.monotone, g.last);
    rfx_kernel_sgd_free(m);
    progress_log h = {0, 0, 10, 0.0, 1};
    p.progress_user = &h;
    m = (rfx_kernel_sgd *)&h;
    CHECK_ERR(rfx_kernel_sgd_fit(k, NULL, rfx_cmat_of(X, n, d), y, &p, &m), RFX_ECANCELLED,
              "cancelled");
    CHECK(m == (rfx_kernel_sgd *)&h);
    for (int s = 0; s < 4; s++) {
        rfx_sgd_strategy back;
        CHECK_OK(rfx_sgd_strategy_from_name(rfx_sgd_strategy_name((rfx_sgd_strategy)s), &back));
        CHECK(back == (rfx_sgd_strategy)s);
    }
    CHECK(strcmp(rfx_sgd_strategy_name(RFX_SGD_GRAM_CACHED), "gram-cached") == 0);
    CHECK(strcmp(rfx_sgd_strategy_name((rfx_sgd_strategy)9), "unknown") == 0);
    rfx_sgd_strategy back;
    CHECK_ERR(rfx_sgd_strategy_from_name("gram", &back), RFX_EINVAL, "'gram'");
    CHECK_ERR(rfx_sgd_strategy_from_name(NULL, &back), RFX_EINVAL, "NULL");
    rfx_kernel_sgd_params q = rfx_kernel_sgd_params_default();
    CHECK(q.strategy == RFX_SGD_GRAM_CACHED && q.loss == RFX_LOSS_LOGISTIC && q.alpha == 0.1 &&
          q.t0 == 0 && q.lambda == 0 && q.n_iter == 0 && q.n_threads == 0 && q.cache_limit == 0 && !q.progress);
    rfx_kern_free(k);
    free(X);
    free(y);
}

/* ---- errors ---------------------------------------------------------------- */

static void test_errors(void)
{
    const size_t n = 20, d = 2;
    rfx_test_rng rng = {9};
    double *X = rfx_test_matrix(&rng, n, d, 0, 1);
    double *y = lecture_labels(X, n);
    rfx_features *f = make_features(d, 16, 1.0, 1), *f3 = make_features(3, 16, 1.0, 1);
    rfx_kern *k = NULL, *k3 = NULL;
    CHECK_OK(rfx_kern_rbf(1.0, &k));
    double ls[3] = {1, 1, 1};
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 1, ls, 3, &k3));
    rfx_cmat Xv = rfx_cmat_of(X, n, d);
    rfx_kernel_sgd *sentinel = (rfx_kernel_sgd *)&rng, *m = sentinel;
    rfx_kernel_sgd_params p = rfx_kernel_sgd_params_default();

    CHECK_ERR(rfx_kernel_sgd_fit(k, f, Xv, y, &p, NULL), RFX_EINVAL, "out");
    CHECK_ERR(rfx_kernel_sgd_fit(k, f, Xv, y, NULL, &m), RFX_EINVAL, "params");
    CHECK_ERR(rfx_kernel_sgd_fit(k, f, Xv, NULL, &p, &m), RFX_EINVAL, "y is NULL");
#define BAD_FIELD(field, value, status, needle)                                                \
    do {                                                                                       \
        rfx_kernel_sgd_params q = rfx_kernel_sgd_params_default();                             \
        q.field = value;                                                                       \
        CHECK_ERR(rfx_kernel_sgd_fit(k, f, Xv, y, &q, &m), status, needle);                    \
    } while (0)
    BAD_FIELD(strategy, (rfx_sgd_strategy)4, RFX_EINVAL, "kernel_sgd.strategy");
    BAD_FIELD(loss, (rfx_loss)7, RFX_EINVAL, "kernel_sgd.loss");
    BAD_FIELD(alpha, 0.0, RFX_EINVAL, "kernel_sgd.alpha");
    BAD_FIELD(alpha, NAN, RFX_EINVAL, "kernel_sgd.alpha");
    BAD_FIELD(alpha, INFINITY, RFX_EINVAL, "kernel_sgd.alpha");
    BAD_FIELD(t0, -1.0, RFX_EINVAL, "kernel_sgd.t0");
    BAD_FIELD(t0, NAN, RFX_EINVAL, "kernel_sgd.t0");
    BAD_FIELD(n_threads, -1, RFX_EINVAL, "kernel_sgd.n_threads");
    BAD_FIELD(lambda, -0.1, RFX_EINVAL, "kernel_sgd.lambda");
    BAD_FIELD(lambda, NAN, RFX_EINVAL, "kernel_sgd.lambda");
    BAD_FIELD(lambda, 10.0, RFX_EINVAL, "alpha lambda < 1"); /* alpha 0.1 */
    /* the operand each strategy needs */
    for (int s = 0; s < 4; s++) {
        rfx_kernel_sgd_params q = rfx_kernel_sgd_params_default();
        q.strategy = (rfx_sgd_strategy)s;
        if (s < 2) {
            CHECK_ERR(rfx_kernel_sgd_fit(k, NULL, Xv, y, &q, &m), RFX_EINVAL, "feature map f");
            CHECK_ERR(rfx_kernel_sgd_fit(k, f3, Xv, y, &q, &m), RFX_EDIM, "feature map expects 3");
        } else {
            CHECK_ERR(rfx_kernel_sgd_fit(NULL, f, Xv, y, &q, &m), RFX_EINVAL, "kernel k");
            CHECK_ERR(rfx_kernel_sgd_fit(k3, f, Xv, y, &q, &m), RFX_EDIM, "kernel expects 3");
        }
    }
    /* data */
    CHECK_ERR(rfx_kernel_sgd_fit(k, f, rfx_cmat_of(X, 0, d), y, &p, &m), RFX_EDIM, "0 x 2");
    rfx_cmat bad = {X, n, d, 1};
    CHECK_ERR(rfx_kernel_sgd_fit(k, f, bad, y, &p, &m), RFX_EINVAL, "X");
    double yb[20];
    memcpy(yb, y, sizeof yb);
    yb[5] = 0.0;
    CHECK_ERR(rfx_kernel_sgd_fit(k, f, Xv, yb, &p, &m), RFX_EINVAL, "y[5]");
    yb[5] = 2.0;
    CHECK_ERR(rfx_kernel_sgd_fit(k, f, Xv, yb, &p, &m), RFX_EINVAL, "+1 or -1");
    yb[5] = NAN;
    CHECK_ERR(rfx_kernel_sgd_fit(k, f, Xv, yb, &p, &m), RFX_EINVAL, "y[5]");
    double Xb[40];
    memcpy(Xb, X, sizeof Xb);
    Xb[7] = NAN;
    CHECK_ERR(rfx_kernel_sgd_fit(k, f, rfx_cmat_of(Xb, n, d), y, &p, &m), RFX_EPARSE,
              "row 3, column 1");
    Xb[7] = INFINITY;
    {
        rfx_kernel_sgd_params q = rfx_kernel_sgd_params_default();
        q.strategy = RFX_SGD_FEATURES_ON_THE_FLY;
        CHECK_ERR(rfx_kernel_sgd_fit(k, f, rfx_cmat_of(Xb, n, d), y, &q, &m), RFX_EPARSE,
                  "not finite");
    }
    /* sizes: the cache limit, and views too large for size_t (never read) */
    {
        rfx_kernel_sgd_params q = rfx_kernel_sgd_params_default();
        q.cache_limit = 8 * n * n - 1;
        CHECK_ERR(rfx_kernel_sgd_fit(k, f, Xv, y, &q, &m), RFX_ENOMEM, "the Gram matrix");
        q.cache_limit = 8 * n * n;
        CHECK_OK(rfx_kernel_sgd_fit(k, f, Xv, y, &q, &m));
        rfx_kernel_sgd_free(m);
        m = sentinel;
        q.strategy = RFX_SGD_FEATURES_CACHED;
        q.cache_limit = 8 * n * 16 - 1;
        CHECK_ERR(rfx_kernel_sgd_fit(k, f, Xv, y, &q, &m), RFX_ENOMEM, "the feature cache");
        q.strategy = RFX_SGD_GRAM_CACHED;
        q.cache_limit = 0;
        q.n_iter = 1;
        rfx_cmat huge = {X, (size_t)1 << 31, 1, 1};
        CHECK_ERR(rfx_kernel_sgd_fit(k, f, huge, y, &q, &m), RFX_EOVERFLOW, "Gram matrix");
        q.n_iter = 0;
        q.strategy = RFX_SGD_KERNEL_ON_THE_FLY;
        rfx_cmat huger = {X, SIZE_MAX / 10, 1, 1};
        CHECK_ERR(rfx_kernel_sgd_fit(k, f, huger, y, &q, &m), RFX_EOVERFLOW, "n_iter = 20 n");
    }
    /* a kernel that overflows: exp(1000 x.y) */
    {
        rfx_kern *lin = NULL, *big = NULL, *over = NULL;
        CHECK_OK(rfx_kern_linear(&lin));
        CHECK_OK(rfx_kern_scale(1000.0, lin, &big));
        CHECK_OK(rfx_kern_exp(big, &over));
        rfx_kernel_sgd_params q = rfx_kernel_sgd_params_default();
        q.strategy = RFX_SGD_KERNEL_ON_THE_FLY;
        CHECK_ERR(rfx_kernel_sgd_fit(over, NULL, Xv, y, &q, &m), RFX_ENUMERIC, "step 1");
        q.strategy = RFX_SGD_GRAM_CACHED;
        CHECK_ERR(rfx_kernel_sgd_fit(over, NULL, Xv, y, &q, &m), RFX_ENUMERIC, "overflowed");
        rfx_kern_free(lin);
        rfx_kern_free(big);
        rfx_kern_free(over);
    }
    CHECK(m == sentinel);

    /* prediction and accessors */
    CHECK_OK(rfx_kernel_sgd_fit(k, NULL, Xv, y, &p, &m));
    double out[20];
    CHECK_ERR(rfx_kernel_sgd_decision(NULL, Xv, out), RFX_EINVAL, "model");
    CHECK_ERR(rfx_kernel_sgd_decision(m, Xv, NULL), RFX_EINVAL, "out");
    CHECK_ERR(rfx_kernel_sgd_decision(m, rfx_cmat_of(X, 10, 4), out), RFX_EDIM, "4 columns");
    CHECK_ERR(rfx_kernel_sgd_decision(m, rfx_cmat_of(Xb, n, d), out), RFX_EPARSE, "row 3");
    CHECK_ERR(rfx_kernel_sgd_decision(m, bad, out), RFX_EINVAL, "X");
    CHECK_ERR(rfx_kernel_sgd_predict(m, rfx_cmat_of(X, 10, 4), out), RFX_EDIM, "4 columns");
    CHECK_OK(rfx_kernel_sgd_decision(m, rfx_cmat_of(X, 0, d), out));
    rfx_kernel_sgd_info info;
    CHECK_ERR(rfx_kernel_sgd_get_info(NULL, &info), RFX_EINVAL, "model");
    CHECK_ERR(rfx_kernel_sgd_get_info(m, NULL), RFX_EINVAL, "info");
    CHECK_ERR(rfx_kernel_sgd_cost(NULL, NULL, NULL), RFX_EINVAL, "model");
    size_t dim = 9;
    CHECK(rfx_kernel_sgd_weights(NULL, &dim) == NULL && dim == 0);
    dim = 9;
    CHECK(rfx_kernel_sgd_dual(NULL, &dim) == NULL && dim == 0);
    CHECK_ERR(rfx_kernel_sgd_indices(1, 0, 5, (size_t *)out), RFX_EINVAL, "n must be");
    CHECK_ERR(rfx_kernel_sgd_indices(1, 5, 5, NULL), RFX_EINVAL, "idx");
    rfx_kernel_sgd_free(m);
    rfx_kernel_sgd_free(NULL);

    rfx_kern_free(k);
    rfx_kern_free(k3);
    rfx_features_free(f);
    rfx_features_free(f3);
    free(X);
    free(y);
}

int main(void)
{
    RFX_TEST_RUN(test_four_agree);
    RFX_TEST_RUN(test_rbf_on_the_fly_vs_gram);
    RFX_TEST_RUN(test_reference_steps);
    RFX_TEST_RUN(test_indices);
    RFX_TEST_RUN(test_converges_to_batch);
    RFX_TEST_RUN(test_costs);
    RFX_TEST_RUN(test_threads);
    RFX_TEST_RUN(test_progress_and_names);
    RFX_TEST_RUN(test_errors);
    return rfx_test_finish("test_kernel_sgd");
}
