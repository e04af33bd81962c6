/* SPDX-License-Identifier: BSD-3-Clause */
/* The self-supervised projection (rfx_projected_fit, rfx/projection.h):
 *  - theta_i = 0 removes input i: replacing it by noise leaves every
 *    prediction bitwise unchanged; with a given theta the loss is the
 *    surrogate's own score (ridge GCV) or its k-fold CV error, recomputed
 *    here from a kernel PCA and surrogate fits of the public API;
 *  - the search loss is the fast score: with one input theta_0 = 1, and
 *    the loss at theta_0 equals the GCV of ridge regression on the same
 *    random features computed here by its definition (Cholesky solves and
 *    the trace of the hat matrix, no eigendecomposition);
 *  - on y = g(x0 + x1) with six irrelevant inputs and k = 1, the swarm puts
 *    far more weight on x0 and x1 than on the rest; with 27 irrelevant
 *    inputs of 30 their weights end near 0; both models beat the same
 *    surrogate on the raw inputs on fresh points;
 *  - gamma and k chosen by the fit are the ones it uses: fitting again
 *    with them given gives the same model, bit for bit;
 *  - save / load (file and buffer) give bitwise identical predictions;
 *    truncated and corrupted files are refused with RFX_EFORMAT;
 *  - 1, 2 and 3 threads (particles evaluated concurrently) give bitwise
 *    identical models and histories;
 *  - every parameter is validated and every error path is provoked. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "rfx.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* y = sin(2 (x0 + x1)) + (x0 + x1)^2 / 2 on rows of U(-1, 1)^d. */
static void g_data(rfx_test_rng *r, size_t n, size_t d, double **X, double **y)
{
    *X = rfx_test_matrix(r, n, d, -1, 1);
    *y = malloc(n * sizeof **y);
    for (size_t i = 0; i < n; i++) {
        double s = (*X)[i * d] + (*X)[i * d + 1];
        (*y)[i] = sin(2 * s) + 0.5 * s * s;
    }
}

/* y = sin(2 x0) + 2 x1^2 + x2 on rows of U(-1, 1)^d (three active inputs). */
static void sparse_data(rfx_test_rng *r, size_t n, size_t d, double **X, double **y)
{
    *X = rfx_test_matrix(r, n, d, -1, 1);
    *y = malloc(n * sizeof **y);
    for (size_t i = 0; i < n; i++) {
        const double *x = *X + i * d;
        (*y)[i] = sin(2 * x[0]) + 2 * x[1] * x[1] + x[2];
    }
}

static double rel_err(const double *a, const double *b, size_t n)
{
    double se = 0, ss = 0, mu = 0;
    for (size_t i = 0; i < n; i++) mu += b[i];
    mu /= (double)n;
    for (size_t i = 0; i < n; i++) {
        se += (a[i] - b[i]) * (a[i] - b[i]);
        ss += (b[i] - mu) * (b[i] - mu);
    }
    return sqrt(se / ss);
}

static double variance(const double *y, size_t n)
{
    double mu = 0, v = 0;
    for (size_t i = 0; i < n; i++) mu += y[i];
    mu /= (double)n;
    for (size_t i = 0; i < n; i++) v += (y[i] - mu) * (y[i] - mu);
    return v / (double)n;
}

static rfx_model *fit_or_null(const rfx_projected_params *p, const double *X, const double *y,
                              size_t m, size_t d, rfx_projected_report *rep)
{
    rfx_model *mod = NULL;
    CHECK_OK(rfx_projected_fit(p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mod, rep));
    return mod;
}

/* The training scores of the exact kernel PCA a projected fit uses (a
 * fresh object: its fits are those of the fit's own, bit for bit). */
static double *scores_of(const double *X, size_t m, size_t d, const double *theta, size_t k,
                         double gamma)
{
    rfx_kpca_params kp = rfx_kpca_params_default();
    kp.n_components = k;
    kp.gamma = gamma;
    kp.standardize = 1;
    rfx_kpca *o = NULL;
    double *E = malloc(m * k * sizeof *E);
    CHECK_OK(rfx_kpca_create(&kp, rfx_cmat_of(X, m, d), &o));
    if (o) CHECK_OK(rfx_kpca_fit(o, theta));
    rfx_cmat e = rfx_kpca_embedding(o);
    if (e.data) memcpy(E, e.data, m * k * sizeof *E);
    else memset(E, 0, m * k * sizeof *E);
    rfx_kpca_free(o);
    return E;
}

static int in_gamma_grid(double g)
{
    for (int e = 0; e <= 5; e++)
        if (fabs(g - pow(10.0, -2.5 + 0.5 * e)) < 1e-12 * g) return 1;
    return 0;
}

/* The PCE surrogate of a projected fit on the scores E (n x k, k <= 2):
 * degree 3 by LARS, on one thread, with normal marginals of the mean and
 * the standard deviation (divisor n) of each column. */
static rfx_status pce_on_scores(const double *E, size_t n, size_t k, const double *y,
                                rfx_model **out)
{
    rfx_marginal marg[2];
    for (size_t j = 0; j < k; j++) {
        double mu = 0, v = 0;
        for (size_t i = 0; i < n; i++) mu += E[i * k + j];
        mu /= (double)n;
        for (size_t i = 0; i < n; i++) v += (E[i * k + j] - mu) * (E[i * k + j] - mu);
        v = sqrt(v / (double)n);
        marg[j].kind = RFX_MARGINAL_NORMAL;
        marg[j].a = mu;
        marg[j].b = v > 0 ? v : 1.0;
    }
    rfx_pce_params pp = rfx_pce_params_default();
    pp.degree = 3;
    pp.method = RFX_PCE_METHOD_LARS;
    pp.n_threads = 1;
    pp.marginals = marg;
    rfx_pce *pce = NULL;
    rfx_status st = rfx_pce_fit(&pp, rfx_cmat_of(E, n, k), y, &pce);
    if (!st) st = rfx_model_from_pce(pce, out);
    rfx_pce_free(pce);
    return st;
}

/* 5-fold CV (row i in fold i mod 5) of ridge (fp), SRFE (sp) or, with
 * neither, PCE (pce_on_scores) on the scores E (m x k, m <= 60, k <= 2):
 * the relative mean squared error of the held-out rows. With lg, each
 * fold is fitted to log y and its predictions exponentiated. */
static double kfold5(const double *E, size_t m, size_t k, const double *y,
                     const rfx_fit_params *fp, const rfx_srfe_params *sp, int lg)
{
    double Etr[60 * 2], ytr[60], Eva[12 * 2], yva[12], yh[12], sse = 0;
    for (size_t f = 0; f < 5; f++) {
        size_t ntr = 0, nva = 0;
        for (size_t i = 0; i < m; i++) {
            if (i % 5 == f) {
                memcpy(Eva + k * nva, E + k * i, k * sizeof *E);
                yva[nva++] = y[i];
            } else {
                memcpy(Etr + k * ntr, E + k * i, k * sizeof *E);
                ytr[ntr++] = lg ? log(y[i]) : y[i];
            }
        }
        rfx_model *fm = NULL;
        rfx_cmat Xf = rfx_cmat_of(Etr, ntr, k), Yf = rfx_cmat_of(ytr, ntr, 1);
        CHECK_OK(fp   ? rfx_model_fit(fp, Xf, Yf, &fm, NULL)
                 : sp ? rfx_srfe_fit(sp, Xf, Yf, &fm, NULL)
                      : pce_on_scores(Etr, ntr, k, ytr, &fm));
        if (!fm) return NAN;
        CHECK_OK(rfx_model_predict(fm, rfx_cmat_of(Eva, nva, k), rfx_mat_of(yh, nva, 1),
                                   rfx_mat_none()));
        rfx_model_free(fm);
        for (size_t i = 0; i < nva; i++) {
            const double p = lg ? exp(yh[i]) : yh[i];
            sse += (p - yva[i]) * (p - yva[i]);
        }
    }
    return sse / (double)m / variance(y, m);
}

/* (1) theta_2 = 0: input 2 replaced by noise changes nothing, bit for bit;
 * what the model reports about itself; the loss at a given theta is the
 * ridge surrogate's 5-fold CV error at the length scale and penalty its
 * fit on all rows chose (SRFE's: at its weight scale, q, N and lambda). */
static void test_zero_weight(void)
{
    const size_t m = 60, d = 4, n = 25;
    rfx_test_rng r = {11};
    double *X, *y;
    g_data(&r, m, d, &X, &y);
    double *X2 = malloc(m * d * sizeof *X2), *V = rfx_test_matrix(&r, n, d, -1, 1);
    double *V2 = malloc(n * d * sizeof *V2), *E = NULL;
    memcpy(X2, X, m * d * sizeof *X);
    memcpy(V2, V, n * d * sizeof *V);
    for (size_t i = 0; i < m; i++) X2[i * d + 2] = 5 * rfx_test_normal(&r);
    for (size_t i = 0; i < n; i++) V2[i * d + 2] = 7 * rfx_test_normal(&r) + 3;
    const double theta[4] = {0.9, 0.6, 0.0, 0.3};
    rfx_projected_params p = rfx_projected_params_default();
    p.theta = theta;
    p.n_components = 2;
    p.surrogate = RFX_METHOD_RIDGE;
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    double th[4];
    rep.theta = th;
    rfx_model *a = fit_or_null(&p, X, y, m, d, &rep), *b = fit_or_null(&p, X2, y, m, d, NULL);
    rfx_model *ref = NULL;
    if (!a || !b) goto done;
    CHECK(rep.n_iterations == 0 && rep.evaluations == 1);
    CHECK(memcmp(th, theta, sizeof th) == 0);
    CHECK(rep.loss >= 0 && rep.loss < 1);
    CHECK(isnan(rep.theta0_loss));
    double ya[25], yb[25];
    CHECK_OK(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1), rfx_mat_none()));
    CHECK_OK(rfx_model_predict(b, rfx_cmat_of(V2, n, d), rfx_mat_of(yb, n, 1), rfx_mat_none()));
    CHECK(memcmp(ya, yb, sizeof ya) == 0);

    /* what the model reports about itself; gamma was chosen on the grid */
    rfx_projected_info info;
    CHECK_OK(rfx_model_projected_info(a, &info));
    CHECK(info.n_components == 2 && info.n_inputs == d && info.n_train == m);
    CHECK_MSG(info.standardized == 1 && in_gamma_grid(info.gamma), "gamma %g", info.gamma);
    CHECK(info.surrogate && memcmp(info.theta, theta, sizeof th) == 0);
    CHECK(info.loss == rep.loss);
    rfx_model_info mi;
    CHECK_OK(rfx_model_get_info(a, &mi));
    CHECK(mi.method == RFX_METHOD_PROJECTED && mi.n_inputs == d && mi.n_targets == 1);
    CHECK(mi.n_train == m && mi.standardized == 1 && mi.has_std == 0);
    CHECK(strcmp(rfx_method_name(RFX_METHOD_PROJECTED), "projected") == 0);
    rfx_method meth;
    CHECK_OK(rfx_method_from_name("projected", &meth));
    CHECK(meth == RFX_METHOD_PROJECTED);

    /* the surrogate: the default ridge (1000 features, chosen length scale
     * and lambda) on the same scores; the loss: its 5-fold CV error
     * (relative to var y; row i in fold i mod 5) at that length scale and
     * lambda, not its GCV score */
    E = scores_of(X, m, d, theta, 2, info.gamma);
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_RIDGE;
    fp.features.n_features = 1000;
    rfx_fit_report fr;
    CHECK_OK(rfx_model_fit(&fp, rfx_cmat_of(E, m, 2), rfx_cmat_of(y, m, 1), &ref, &fr));
    if (ref) {
        rfx_fit_params ff = fp;
        ff.features.length_scale = fr.length_scale;
        ff.lambda = fr.lambda;
        const double cv = kfold5(E, m, 2, y, &ff, NULL, 0);
        CHECK_NEAR(rep.loss, cv, 1e-10 * cv);
        printf("  ridge surrogate: 5-fold CV %.4g, GCV %.4g (relative MSE)\n", cv,
               fr.score / variance(y, m));
    }
    /* the SRFE surrogate (4000 features, its choices) at the same theta:
     * its 5-fold CV error at the weight scale, q, N and lambda it chose */
    {
        rfx_projected_params ps = p;
        ps.surrogate = RFX_METHOD_SRFE;
        rfx_projected_report rs;
        memset(&rs, 0, sizeof rs);
        rfx_model *ms = fit_or_null(&ps, X, y, m, d, &rs), *sm = NULL;
        rfx_srfe_params sp = rfx_srfe_params_default();
        sp.features.n_features = 4000;
        sp.widen_rounds = 0;
        rfx_srfe_report sr;
        CHECK_OK(rfx_srfe_fit(&sp, rfx_cmat_of(E, m, 2), rfx_cmat_of(y, m, 1), &sm, &sr));
        if (ms && sm) {
            sp.features.weight_scale = sr.weight_scale;
            sp.features.sparsity = sr.sparsity;
            sp.features.n_features = sr.n_features;
            sp.lambda = sr.lambda;
            const double cv = kfold5(E, m, 2, y, NULL, &sp, 0);
            CHECK_NEAR(rs.loss, cv, 1e-10 * cv);
            printf("  srfe surrogate: 5-fold CV %.4g, GCV %.4g (relative MSE)\n", cv,
                   sr.cv_mse / variance(y, m));
        }
        rfx_model_free(ms);
        rfx_model_free(sm);
    }
    /* the surrogate inside is that model: the same predictions on the scores */
    double yr[60], yi[60];
    if (ref) {
        CHECK_OK(rfx_model_predict(ref, rfx_cmat_of(E, m, 2), rfx_mat_of(yr, m, 1),
                                   rfx_mat_none()));
        CHECK_OK(rfx_model_predict(info.surrogate, rfx_cmat_of(E, m, 2), rfx_mat_of(yi, m, 1),
                                   rfx_mat_none()));
        CHECK(memcmp(yr, yi, sizeof yr) == 0);
    }
done:
    rfx_model_free(a);
    rfx_model_free(b);
    rfx_model_free(ref);
    free(E);
    free(X);
    free(X2);
    free(V);
    free(V2);
    free(y);
}

/* (2) with n_folds = 3 and a given theta the loss is the 3-fold CV error of
 * the surrogate on the scores (row i in fold i mod 3), recomputed here. */
static void test_kfold_loss(void)
{
    const size_t m = 45, d = 3, k = 2, folds = 3;
    rfx_test_rng r = {17};
    double *X, *y;
    g_data(&r, m, d, &X, &y);
    const double theta[3] = {1.0, 0.7, 0.2};
    rfx_fit_params fp = rfx_fit_params_default();
    fp.features.n_features = 40;
    rfx_projected_params p = rfx_projected_params_default();
    p.theta = theta;
    p.n_components = k;
    p.gamma = 0.3;
    p.n_folds = folds;
    p.fit = &fp;
    p.surrogate = RFX_METHOD_RIDGE;
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    rfx_model *mod = fit_or_null(&p, X, y, m, d, &rep);
    double *E = scores_of(X, m, d, theta, k, 0.3);
    double Ttr[45 * 2], ytr[45], Tva[45 * 2], yva[45], yh[45], sse = 0;
    rfx_fit_params f1 = fp;
    f1.method = RFX_METHOD_RIDGE;
    for (size_t f = 0; f < folds; f++) {
        size_t ntr = 0, nva = 0;
        for (size_t i = 0; i < m; i++) {
            if (i % folds == f) {
                memcpy(Tva + nva * k, E + i * k, k * sizeof(double));
                yva[nva++] = y[i];
            } else {
                memcpy(Ttr + ntr * k, E + i * k, k * sizeof(double));
                ytr[ntr++] = y[i];
            }
        }
        rfx_model *fm = NULL;
        CHECK_OK(rfx_model_fit(&f1, rfx_cmat_of(Ttr, ntr, k), rfx_cmat_of(ytr, ntr, 1), &fm,
                               NULL));
        if (fm) CHECK_OK(rfx_model_predict(fm, rfx_cmat_of(Tva, nva, k),
                                           rfx_mat_of(yh, nva, 1), rfx_mat_none()));
        for (size_t i = 0; i < nva; i++) sse += (yh[i] - yva[i]) * (yh[i] - yva[i]);
        rfx_model_free(fm);
    }
    CHECK_NEAR(rep.loss, sse / (double)m / variance(y, m), 1e-12);
    rfx_model_free(mod);
    free(E);
    free(X);
    free(y);
}

/* GCV of ridge regression with an intercept on the centred features Zc
 * (m x D) and centred yc by its definition: w = (Zc^T Zc + lambda I)^-1
 * Zc^T yc by Cholesky, RSS = |yc - Zc w|^2, df = 1 + trace(Zc (Zc^T Zc +
 * lambda I)^-1 Zc^T) from D solves; GCV = (RSS / m) / (1 - df / m)^2. */
static double gcv_direct(const double *Zc, const double *yc, size_t m, size_t D, double lambda)
{
    double *A = malloc(D * D * sizeof *A), *w = malloc(D * sizeof *w);
    double *B = malloc(D * D * sizeof *B);
    for (size_t a = 0; a < D; a++)
        for (size_t b = 0; b < D; b++) {
            double s = 0;
            for (size_t i = 0; i < m; i++) s += Zc[i * D + a] * Zc[i * D + b];
            A[a * D + b] = s + (a == b ? lambda : 0.0);
            B[a * D + b] = s; /* Zc^T Zc: (A^-1 B) has the hat matrix's trace */
        }
    for (size_t a = 0; a < D; a++) {
        double s = 0;
        for (size_t i = 0; i < m; i++) s += Zc[i * D + a] * yc[i];
        w[a] = s;
    }
    double gcv = NAN;
    if (rfx__chol(A, D, 1, "test") == RFX_OK && rfx__chol_solve(A, D, w, 1) == RFX_OK &&
        rfx__chol_solve(A, D, B, D) == RFX_OK) {
        double rss = 0, df = 1;
        for (size_t i = 0; i < m; i++) {
            double f = 0;
            for (size_t a = 0; a < D; a++) f += Zc[i * D + a] * w[a];
            rss += (yc[i] - f) * (yc[i] - f);
        }
        for (size_t a = 0; a < D; a++) df += B[a * D + a];
        gcv = rss / (double)m / ((1 - df / (double)m) * (1 - df / (double)m));
    }
    free(A);
    free(w);
    free(B);
    return gcv;
}

/* (3) the search loss at theta_0 is the fast score: one input (theta_0 =
 * 1), k = 1; the reference builds the same 128 features from the seed's
 * stream and takes the lowest GCV over the four length scales and the
 * 37 penalties. */
static void test_fast_score(void)
{
    const size_t m = 70, d = 1, D = 128, L = 37;
    rfx_test_rng r = {23};
    double *X = rfx_test_matrix(&r, m, d, -1, 1), *y = malloc(m * sizeof *y);
    for (size_t i = 0; i < m; i++) y[i] = sin(3 * X[i]) + 0.2 * rfx_test_normal(&r);
    rfx_projected_params p = rfx_projected_params_default();
    p.n_components = 1;
    p.gamma = 0.5;
    p.n_particles = 1;
    p.iterations = 1;
    p.seed = 77;
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    double hist[2];
    rep.history = hist;
    rfx_model *mod = fit_or_null(&p, X, y, m, d, &rep);
    const double one = 1.0;
    double *E = scores_of(X, m, d, &one, 1, 0.5);
    /* the standardised scores, the centred target, the features' draws */
    double mu = 0, v = 0, ym = 0;
    for (size_t i = 0; i < m; i++) mu += E[i];
    mu /= (double)m;
    for (size_t i = 0; i < m; i++) v += (E[i] - mu) * (E[i] - mu);
    const double sd = sqrt(v / (double)m);
    for (size_t i = 0; i < m; i++) ym += y[i];
    ym /= (double)m;
    double *yc = malloc(m * sizeof *yc), *Z = malloc(m * D * sizeof *Z);
    double W[128], b[128];
    for (size_t i = 0; i < m; i++) yc[i] = y[i] - ym;
    for (size_t j = 0; j < D; j++) {
        rfx__rng g;
        rfx__rng_init(&g, 77, 0x73636f72655f7266ull, j);
        b[j] = 6.28318530717958647693 * rfx__rng_uniform(&g);
        W[j] = rfx__rng_normal(&g);
    }
    double best = INFINITY;
    const double scales[4] = {0.25, 0.5, 1.0, 2.0};
    for (int s = 0; s < 4; s++) {
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < D; j++)
                Z[i * D + j] = sqrt(2.0 / D) * cos((E[i] - mu) / sd * W[j] / scales[s] + b[j]);
        double tr = 0;
        for (size_t j = 0; j < D; j++) {
            double c = 0;
            for (size_t i = 0; i < m; i++) c += Z[i * D + j];
            c /= (double)m;
            for (size_t i = 0; i < m; i++) Z[i * D + j] -= c;
            for (size_t i = 0; i < m; i++) tr += Z[i * D + j] * Z[i * D + j];
        }
        for (size_t g = 0; g < L; g++) {
            double lambda = tr / D * pow(10.0, -8.0 + 12.0 * (double)g / (double)(L - 1));
            double gcv = gcv_direct(Z, yc, m, D, lambda);
            if (gcv < best) best = gcv;
        }
    }
    best /= variance(y, m);
    printf("  loss at theta_0 %.10f, GCV by its definition %.10f\n", rep.theta0_loss, best);
    CHECK(mod != NULL);
    /* the smallest penalties leave Z^T Z + lambda I ill-conditioned: the
     * two computations agree to about 1e-7 there, far below the score's
     * variation */
    CHECK_NEAR(rep.theta0_loss, best, 1e-6 * best);
    CHECK(hist[0] == rep.theta0_loss); /* one particle: the initial best */
    rfx_model_free(mod);
    free(E);
    free(yc);
    free(Z);
    free(X);
    free(y);
}

/* (4) y = g(x0 + x1), d = 8, k = 1: the learned theta and the error. */
static void test_learns_relevant_inputs(void)
{
    const size_t m = 120, d = 8, n = 400;
    rfx_test_rng r = {5};
    double *X, *y, *V, *yv;
    g_data(&r, m, d, &X, &y);
    g_data(&r, n, d, &V, &yv);
    rfx_projected_params p = rfx_projected_params_default();
    p.n_components = 1;
    p.n_particles = 8;
    p.iterations = 8;
    p.seed = 3;
    p.surrogate = RFX_METHOD_RIDGE; /* the loss is then the search's */
    double th[8], hist[9];
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    rep.theta = th;
    rep.history = hist;
    rfx_model *mod = fit_or_null(&p, X, y, m, d, &rep);
    rfx_model *raw = NULL;
    if (!mod) goto done;
    CHECK(rep.n_iterations >= 1 && rep.n_iterations <= 8);
    CHECK(rep.evaluations == 8 * (rep.n_iterations + 1));
    for (size_t t = 1; t <= rep.n_iterations; t++) CHECK(hist[t] <= hist[t - 1]);
    CHECK(hist[rep.n_iterations] == rep.loss);
    CHECK(rep.theta0_loss >= hist[0]);
    double rel = (th[0] + th[1]) / 2, irr = 0;
    for (size_t j = 2; j < d; j++) irr += th[j] / (double)(d - 2);
    printf("  theta:");
    for (size_t j = 0; j < d; j++) printf(" %.3f", th[j]);
    printf("\n  loss %.4f (theta_0 %.4f), %zu iterations\n", rep.loss, rep.theta0_loss,
           rep.n_iterations);
    CHECK_MSG(rel > 2 * irr, "relevant mean %g, irrelevant mean %g", rel, irr);
    double *yh = malloc(n * sizeof *yh);
    CHECK_OK(rfx_model_predict(mod, rfx_cmat_of(V, n, d), rfx_mat_of(yh, n, 1), rfx_mat_none()));
    double e_proj = rel_err(yh, yv, n);
    /* the same surrogate (ridge, 1000 features, automatic) on the raw inputs */
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_RIDGE;
    fp.features.n_features = 1000;
    CHECK_OK(rfx_model_fit(&fp, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &raw, NULL));
    double e_raw = NAN;
    if (raw) {
        CHECK_OK(rfx_model_predict(raw, rfx_cmat_of(V, n, d), rfx_mat_of(yh, n, 1),
                                   rfx_mat_none()));
        e_raw = rel_err(yh, yv, n);
    }
    printf("  validation relative L2 error: projected %.4f, raw ridge %.4f\n", e_proj, e_raw);
    CHECK_MSG(e_proj < e_raw, "projected %g, raw %g", e_proj, e_raw);
    free(yh);
done:
    rfx_model_free(mod);
    rfx_model_free(raw);
    free(X);
    free(y);
    free(V);
    free(yv);
}

/* (5) three active inputs of 30 (screening starts the irrelevant ones at
 * or near 0 and the swarm keeps them small), gamma and k chosen, against
 * the ridge surrogate on the raw inputs. */
static void test_irrelevant_inputs(void)
{
    const size_t m = 150, d = 30, n = 500;
    rfx_test_rng r = {41};
    double *X, *y, *V, *yv;
    sparse_data(&r, m, d, &X, &y);
    sparse_data(&r, n, d, &V, &yv);
    rfx_projected_params p = rfx_projected_params_default(); /* 10 particles, 20 iterations */
    p.seed = 5;
    double th[30];
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    rep.theta = th;
    rfx_model *mod = fit_or_null(&p, X, y, m, d, &rep), *raw = NULL;
    double *yh = malloc(n * sizeof *yh);
    if (!mod) goto done;
    rfx_projected_info info;
    CHECK_OK(rfx_model_projected_info(mod, &info));
    double irr_max = 0, irr_mean = 0;
    for (size_t j = 3; j < d; j++) {
        irr_max = fmax(irr_max, th[j]);
        irr_mean += th[j] / (double)(d - 3);
    }
    printf("  k %zu, gamma %g; theta of x0..x2: %.3f %.3f %.3f; of the 27 others: mean %.4f, "
           "max %.4f\n", info.n_components, info.gamma, th[0], th[1], th[2], irr_mean, irr_max);
    CHECK(info.n_components >= 1 && info.n_components <= 8 && in_gamma_grid(info.gamma));
    CHECK_MSG(fmin(th[0], fmin(th[1], th[2])) > 10 * irr_mean, "relevant %g %g %g, mean %g",
              th[0], th[1], th[2], irr_mean);
    CHECK_MSG(irr_mean < 0.05, "irrelevant mean %g", irr_mean);
    CHECK_OK(rfx_model_predict(mod, rfx_cmat_of(V, n, d), rfx_mat_of(yh, n, 1), rfx_mat_none()));
    double e_proj = rel_err(yh, yv, n);
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_RIDGE;
    fp.features.n_features = 1000;
    CHECK_OK(rfx_model_fit(&fp, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &raw, NULL));
    double e_raw = NAN;
    if (raw) {
        CHECK_OK(rfx_model_predict(raw, rfx_cmat_of(V, n, d), rfx_mat_of(yh, n, 1),
                                   rfx_mat_none()));
        e_raw = rel_err(yh, yv, n);
    }
    printf("  validation relative L2 error: projected %.4f, raw ridge %.4f\n", e_proj, e_raw);
    CHECK_MSG(e_proj < 0.5 * e_raw, "projected %g, raw %g", e_proj, e_raw);
done:
    free(yh);
    rfx_model_free(mod);
    rfx_model_free(raw);
    free(X);
    free(y);
    free(V);
    free(yv);
}

/* Model bytes of a fit (NULL on failure; free with rfx_buffer_free). */
static void *bytes_of(const rfx_model *m, size_t *len)
{
    void *buf = NULL;
    *len = 0;
    if (m) CHECK_OK(rfx_model_save_buffer(m, &buf, len));
    return buf;
}

/* (6) the chosen shape is the one used: the same fit with gamma and k
 * given as chosen is the same model, bit for bit, with the same history. */
static void test_shape(void)
{
    const size_t m = 80, d = 5;
    rfx_test_rng r = {29};
    double *X, *y, h1[5], h2[5];
    sparse_data(&r, m, d, &X, &y);
    rfx_projected_params p = rfx_projected_params_default();
    p.n_particles = 4;
    p.iterations = 4;
    p.patience = 0;
    p.seed = 8;
    rfx_projected_report r1, r2;
    memset(&r1, 0, sizeof r1);
    memset(&r2, 0, sizeof r2);
    r1.history = h1;
    r2.history = h2;
    rfx_model *a = fit_or_null(&p, X, y, m, d, &r1), *b = NULL;
    rfx_projected_info info;
    if (a && rfx_model_projected_info(a, &info) == RFX_OK) {
        printf("  chosen: k %zu, gamma %g\n", info.n_components, info.gamma);
        p.n_components = info.n_components;
        p.gamma = info.gamma;
        b = fit_or_null(&p, X, y, m, d, &r2);
    }
    size_t la, lb;
    void *ba = bytes_of(a, &la), *bb = bytes_of(b, &lb);
    CHECK(ba && bb && la == lb && memcmp(ba, bb, la) == 0);
    CHECK(memcmp(h1, h2, sizeof h1) == 0 && r1.theta0_loss == r2.theta0_loss);
    rfx_buffer_free(ba);
    rfx_buffer_free(bb);
    rfx_model_free(a);
    rfx_model_free(b);
    free(X);
    free(y);
}

static int cancel_now(void *user, const char *stage, double fraction)
{
    (void)user;
    (void)stage;
    (void)fraction;
    return 1;
}

/* A small searched model (surrogate given) for the file and thread tests:
 * particles x (iterations + 1) evaluations; a ridge or Bayesian surrogate
 * on 50 features (the default 1000 would cost more and test nothing more). */
static rfx_model *small_model(rfx_method surrogate, int n_threads, double *X, double *y,
                              size_t m, size_t d, size_t particles, size_t iterations,
                              double *hist)
{
    rfx_projected_params p = rfx_projected_params_default();
    rfx_fit_params fp = rfx_fit_params_default();
    fp.features.n_features = 50;
    p.fit = &fp;
    p.n_components = 2;
    p.surrogate = surrogate;
    p.n_particles = particles;
    p.iterations = iterations;
    p.patience = 0;
    p.seed = 9;
    p.n_threads = n_threads;
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    rep.history = hist;
    return fit_or_null(&p, X, y, m, d, &rep);
}

/* (7) save / load round trips and refused files. */
static void test_files(void)
{
    const size_t m = 50, d = 3, n = 30;
    rfx_test_rng r = {21};
    double *X, *y, *V, *yv, hist[2];
    g_data(&r, m, d, &X, &y);
    g_data(&r, n, d, &V, &yv);
    const rfx_method kinds[4] = {RFX_METHOD_RIDGE, RFX_METHOD_BAYES, RFX_METHOD_PCE,
                                 RFX_METHOD_SRFE};
    for (int t = 0; t < 4; t++) {
        rfx_model *a = small_model(kinds[t], 1, X, y, m, d, 2, 1, hist), *b = NULL, *c = NULL;
        if (!a) continue;
        const char *path = rfx_test_tmp("projected.rfx");
        CHECK_OK(rfx_model_save(a, path));
        CHECK_OK(rfx_model_load(path, &b));
        void *buf = NULL;
        size_t len = 0;
        CHECK_OK(rfx_model_save_buffer(a, &buf, &len));
        CHECK_OK(rfx_model_load_buffer(buf, len, &c));
        double ya[30], yb[30], yc[30], sa[30], sb[30];
        CHECK_OK(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1), rfx_mat_none()));
        if (b) CHECK_OK(rfx_model_predict(b, rfx_cmat_of(V, n, d), rfx_mat_of(yb, n, 1),
                                          rfx_mat_none()));
        if (c) CHECK_OK(rfx_model_predict(c, rfx_cmat_of(V, n, d), rfx_mat_of(yc, n, 1),
                                          rfx_mat_none()));
        CHECK(b && memcmp(ya, yb, sizeof ya) == 0);
        CHECK(c && memcmp(ya, yc, sizeof ya) == 0);
        rfx_projected_info ia, ib;
        CHECK_OK(rfx_model_projected_info(a, &ia));
        if (b) {
            CHECK_OK(rfx_model_projected_info(b, &ib));
            CHECK(ib.n_components == 2 && ib.gamma == ia.gamma && ib.loss == ia.loss);
            CHECK(memcmp(ia.theta, ib.theta, d * sizeof(double)) == 0);
            rfx_model_info mi;
            CHECK_OK(rfx_model_get_info(ib.surrogate, &mi));
            CHECK(mi.method == kinds[t] && mi.n_inputs == 2);
        }
        /* std only over a Bayesian surrogate */
        if (kinds[t] == RFX_METHOD_BAYES) {
            CHECK_OK(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1),
                                       rfx_mat_of(sa, n, 1)));
            if (b) CHECK_OK(rfx_model_predict(b, rfx_cmat_of(V, n, d), rfx_mat_of(yb, n, 1),
                                              rfx_mat_of(sb, n, 1)));
            CHECK(b && memcmp(sa, sb, sizeof sa) == 0);
            for (size_t i = 0; i < n; i++) CHECK(sa[i] > 0);
        } else {
            CHECK_STATUS(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1),
                                           rfx_mat_of(sa, n, 1)), RFX_EINVAL);
        }
        /* every truncation is refused */
        rfx_model *z = NULL;
        unsigned char *bytes = buf;
        for (size_t cut = 0; cut < len; cut += 1 + len / 97) {
            CHECK_STATUS(rfx_model_load_buffer(bytes, cut, &z), RFX_EFORMAT);
            CHECK(z == NULL);
        }
        /* a flipped payload byte: the checksum */
        bytes[len / 2] ^= 0x40;
        CHECK_STATUS(rfx_model_load_buffer(bytes, len, &z), RFX_EFORMAT);
        bytes[len / 2] ^= 0x40;
        rfx_buffer_free(buf);
        rfx_model_free(a);
        rfx_model_free(b);
        rfx_model_free(c);
    }
    free(X);
    free(y);
    free(V);
    free(yv);
}

/* (8) the whole fit on 1, 2 and 3 threads (particles evaluated
 * concurrently, 5 particles: teams of 2 and 3 share them unevenly):
 * identical history and model; also with the shape chosen and k-fold
 * search losses. */
static void test_threads(void)
{
    const size_t m = 70, d = 4, n = 20;
    rfx_test_rng r = {33};
    double *X, *y, *V, *yv, h[3][4];
    g_data(&r, m, d, &X, &y);
    g_data(&r, n, d, &V, &yv);
    rfx_model *mods[3] = {NULL, NULL, NULL};
    for (int t = 0; t < 3; t++) mods[t] = small_model(RFX_METHOD_RIDGE, t + 1, X, y, m, d, 5, 3,
                                                      h[t]);
    void *b0 = NULL;
    size_t l0 = 0;
    b0 = bytes_of(mods[0], &l0);
    double y0[20], yt[20];
    if (mods[0]) CHECK_OK(rfx_model_predict(mods[0], rfx_cmat_of(V, n, d), rfx_mat_of(y0, n, 1),
                                            rfx_mat_none()));
    for (int t = 1; t < 3; t++) {
        size_t lt;
        void *bt = bytes_of(mods[t], &lt);
        CHECK_MSG(b0 && bt && l0 == lt && memcmp(b0, bt, l0) == 0, "%d threads", t + 1);
        CHECK_MSG(memcmp(h[0], h[t], sizeof h[0]) == 0, "%d threads: history", t + 1);
        if (mods[t]) {
            CHECK_OK(rfx_model_predict(mods[t], rfx_cmat_of(V, n, d), rfx_mat_of(yt, n, 1),
                                       rfx_mat_none()));
            CHECK(memcmp(y0, yt, sizeof y0) == 0);
        }
        rfx_buffer_free(bt);
    }
    rfx_buffer_free(b0);
    for (int t = 0; t < 3; t++) rfx_model_free(mods[t]);
    /* k and gamma chosen, 3-fold CV of a Bayesian surrogate as the loss */
    rfx_fit_params fp = rfx_fit_params_default();
    fp.features.n_features = 30;
    rfx_projected_params p = rfx_projected_params_default();
    p.surrogate = RFX_METHOD_BAYES;
    p.fit = &fp;
    p.n_folds = 3;
    p.n_particles = 3;
    p.iterations = 2;
    p.patience = 0;
    rfx_model *a = NULL, *b = NULL;
    p.n_threads = 1;
    a = fit_or_null(&p, X, y, m, d, NULL);
    p.n_threads = 2;
    b = fit_or_null(&p, X, y, m, d, NULL);
    size_t la, lb;
    void *ba = bytes_of(a, &la), *bb = bytes_of(b, &lb);
    CHECK(ba && bb && la == lb && memcmp(ba, bb, la) == 0);
    rfx_buffer_free(ba);
    rfx_buffer_free(bb);
    rfx_model_free(a);
    rfx_model_free(b);
    free(X);
    free(y);
    free(V);
    free(yv);
}

/* (9) every parameter and error path. */
static void test_errors(void)
{
    const size_t m = 20, d = 3;
    rfx_test_rng r = {4};
    double *X, *y;
    g_data(&r, m, d, &X, &y);
    rfx_cmat Xm = rfx_cmat_of(X, m, d), Ym = rfx_cmat_of(y, m, 1);
    rfx_model *mod = NULL;
    rfx_projected_params p = rfx_projected_params_default();
    p.iterations = 1;
    p.n_particles = 2;
#define BAD(field, value, status)                                                     \
    do {                                                                              \
        rfx_projected_params q_ = p;                                                  \
        q_.field = value;                                                             \
        CHECK_STATUS(rfx_projected_fit(&q_, Xm, Ym, &mod, NULL), status);             \
        CHECK(mod == NULL);                                                           \
        CHECK_MSG(strstr(rfx_last_error(), #field) != NULL, "message: %s", rfx_last_error()); \
    } while (0)
    BAD(n_components, m, RFX_EINVAL);
    BAD(n_components, (size_t)-1, RFX_EINVAL);
    BAD(surrogate, RFX_METHOD_HARFE, RFX_EINVAL);
    BAD(surrogate, (rfx_method)77, RFX_EINVAL);
    BAD(n_particles, 0, RFX_EINVAL);
    BAD(iterations, 0, RFX_EINVAL);
    BAD(n_folds, 1, RFX_EINVAL);
    BAD(n_folds, m + 1, RFX_EINVAL);
    BAD(gamma, -1.0, RFX_EINVAL);
    BAD(gamma, NAN, RFX_EINVAL);
    BAD(gamma, INFINITY, RFX_EINVAL);
    BAD(standardize, 2, RFX_EINVAL);
    BAD(n_threads, -1, RFX_EINVAL);
    const double zero[3] = {0, 0, 0}, big[3] = {0.5, 1.5, 0.5}, nan3[3] = {0.5, NAN, 0.5};
    BAD(theta, zero, RFX_EINVAL);
    BAD(theta, big, RFX_EINVAL);
    BAD(theta, nan3, RFX_EINVAL);
#undef BAD
    CHECK_STATUS(rfx_projected_fit(NULL, Xm, Ym, &mod, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_projected_fit(&p, Xm, Ym, NULL, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_projected_fit(&p, rfx_cmat_of(X, 2, d), rfx_cmat_of(y, 2, 1), &mod, NULL),
                 RFX_EDIM);
    CHECK_STATUS(rfx_projected_fit(&p, rfx_cmat_of(X, m, 0), Ym, &mod, NULL), RFX_EDIM);
    CHECK_STATUS(rfx_projected_fit(&p, Xm, rfx_cmat_of(y, m - 1, 1), &mod, NULL), RFX_EDIM);
    CHECK_STATUS(rfx_projected_fit(&p, Xm, rfx_cmat_of(X, m, 2), &mod, NULL), RFX_EDIM);
    rfx_cmat bad = Xm;
    bad.stride = 1;
    CHECK_STATUS(rfx_projected_fit(&p, bad, Ym, &mod, NULL), RFX_EINVAL);
    /* more rows than LAPACK's int: refused before a row is read */
    bad = Xm;
    bad.rows = (size_t)1 << 31;
    CHECK_STATUS(rfx_projected_fit(&p, bad, Ym, &mod, NULL), RFX_EOVERFLOW);
    CHECK(strstr(rfx_last_error(), "rows") != NULL);
    double keep = X[7];
    X[7] = NAN;
    CHECK_STATUS(rfx_projected_fit(&p, Xm, Ym, &mod, NULL), RFX_EPARSE);
    X[7] = keep;
    keep = y[3];
    y[3] = INFINITY;
    CHECK_STATUS(rfx_projected_fit(&p, Xm, Ym, &mod, NULL), RFX_EPARSE);
    y[3] = keep;
    CHECK(mod == NULL);
    /* identical rows: every kernel is constant, no scale gives a loss */
    double *C = malloc(m * d * sizeof *C);
    for (size_t i = 0; i < m * d; i++) C[i] = 0.25;
    CHECK_STATUS(rfx_projected_fit(&p, rfx_cmat_of(C, m, d), Ym, &mod, NULL), RFX_ENUMERIC);
    CHECK_MSG(strstr(rfx_last_error(), "kernel scale") != NULL, "%s", rfx_last_error());
    /* ... also with gamma given (no grid): the swarm finds no finite loss */
    rfx_projected_params q = p;
    q.gamma = 0.5;
    q.n_components = 1;
    CHECK_STATUS(rfx_projected_fit(&q, rfx_cmat_of(C, m, d), Ym, &mod, NULL), RFX_ENUMERIC);
    CHECK_MSG(strstr(rfx_last_error(), "pso") != NULL, "%s", rfx_last_error());
    /* ... and with a given theta and gamma */
    const double th1[3] = {1, 1, 1};
    q.theta = th1;
    CHECK_STATUS(rfx_projected_fit(&q, rfx_cmat_of(C, m, d), Ym, &mod, NULL), RFX_ENUMERIC);
    CHECK_MSG(strstr(rfx_last_error(), "given theta") != NULL, "%s", rfx_last_error());
    CHECK(mod == NULL);
    free(C);
    /* a bad surrogate parameter is the surrogate's error, prefixed */
    rfx_srfe_params sp = rfx_srfe_params_default();
    sp.n_lambdas = 0;
    p.surrogate = RFX_METHOD_SRFE;
    p.srfe = &sp;
    CHECK_STATUS(rfx_projected_fit(&p, Xm, Ym, &mod, NULL), RFX_EINVAL);
    CHECK_MSG(strstr(rfx_last_error(), "srfe surrogate") != NULL, "%s", rfx_last_error());
    CHECK(mod == NULL);
    /* ... also inside the k-fold search, where it stops the swarm */
    rfx_fit_params fp = rfx_fit_params_default();
    fp.features.n_features = 0;
    q = rfx_projected_params_default();
    q.surrogate = RFX_METHOD_RIDGE;
    q.fit = &fp;
    q.n_folds = 2;
    q.n_particles = 2;
    q.iterations = 1;
    CHECK_STATUS(rfx_projected_fit(&q, Xm, Ym, &mod, NULL), RFX_EINVAL);
    CHECK_MSG(strstr(rfx_last_error(), "ridge surrogate") != NULL &&
                  strstr(rfx_last_error(), "pso") != NULL, "%s", rfx_last_error());
    CHECK(mod == NULL);
    /* info of another model, NULLs */
    rfx_projected_info info;
    CHECK_STATUS(rfx_model_projected_info(NULL, &info), RFX_EINVAL);
    fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_RIDGE;
    fp.features.n_features = 20;
    rfx_model *rm = NULL;
    CHECK_OK(rfx_model_fit(&fp, Xm, Ym, &rm, NULL));
    CHECK_STATUS(rfx_model_projected_info(rm, &info), RFX_EINVAL);
    CHECK_STATUS(rfx_model_projected_info(rm, NULL), RFX_EINVAL);
    rfx_model_free(rm);
    /* cancellation through the progress callback */
    p = rfx_projected_params_default();
    p.iterations = 2;
    p.n_particles = 2;
    p.progress = cancel_now;
    CHECK_STATUS(rfx_projected_fit(&p, Xm, Ym, &mod, NULL), RFX_ECANCELLED);
    CHECK(mod == NULL);
    /* the defaults */
    p = rfx_projected_params_default();
    CHECK(p.n_components == 0 && p.gamma == 0 && p.surrogate == RFX_PROJECTED_AUTO);
    CHECK(p.n_particles == 10 && p.iterations == 20 && p.patience == 5 && p.n_folds == 0);
    CHECK(p.standardize == 1 && p.seed == 0 && p.n_threads == 0 && !p.theta && !p.progress);
    free(X);
    free(y);
}

/* (9b) rfx_projected_params_check: the defaults pass, each bad field is
 * named, the surrogate in use has its parameters checked as its fit sees
 * them (threads and method replaced, PCE marginals from the scores), the
 * message prefixed; what depends on the data (k <= m - 1, theta's d values,
 * n_folds <= m) is left to the fit; and rfx_projected_fit makes the same
 * check first, before it looks at the data. */
static void test_params_check(void)
{
    rfx_projected_params p = rfx_projected_params_default();
    CHECK_OK(rfx_projected_params_check(&p));
    CHECK_STATUS(rfx_projected_params_check(NULL), RFX_EINVAL);
    CHECK_MSG(strstr(rfx_last_error(), "projected: params is NULL") != NULL, "%s",
              rfx_last_error());
#define BAD(field, value, text)                                                        \
    do {                                                                               \
        rfx_projected_params q_ = rfx_projected_params_default();                      \
        q_.field = value;                                                              \
        CHECK_STATUS(rfx_projected_params_check(&q_), RFX_EINVAL);                     \
        CHECK_MSG(strstr(rfx_last_error(), text) != NULL, "message '%s' lacks '%s'",   \
                  rfx_last_error(), text);                                             \
    } while (0)
    BAD(surrogate, RFX_METHOD_HARFE, "projected.surrogate");
    BAD(n_particles, 0, "projected.n_particles");
    BAD(iterations, 0, "projected.iterations");
    BAD(n_folds, 1, "projected.n_folds: must be 0 or >= 2, got 1");
    BAD(gamma, NAN, "projected.gamma");
    BAD(gamma, -1.0, "projected.gamma");
    BAD(standardize, 2, "projected.standardize");
    BAD(n_threads, -1, "projected.n_threads");
#undef BAD
    /* the data's part */
    const double zero[3] = {0, 0, 0};
    p.n_components = 1000;
    p.n_folds = 1000;
    p.theta = zero;
    CHECK_OK(rfx_projected_params_check(&p));
    /* the surrogate in use, as its fit sees it */
    rfx_srfe_params sp = rfx_srfe_params_default();
    rfx_pce_params pp = rfx_pce_params_default();
    rfx_fit_params fp = rfx_fit_params_default();
    sp.n_lambdas = 0;
    pp.degree = 0;
    fp.lambda = NAN;
    p = rfx_projected_params_default();
    p.srfe = &sp;
    p.pce = &pp;
    p.fit = &fp;
    p.surrogate = RFX_METHOD_SRFE;
    CHECK_STATUS(rfx_projected_params_check(&p), RFX_EINVAL);
    CHECK_MSG(strstr(rfx_last_error(), "projected: srfe surrogate: srfe.n_lambdas") != NULL, "%s",
              rfx_last_error());
    p.surrogate = RFX_METHOD_PCE;
    CHECK_STATUS(rfx_projected_params_check(&p), RFX_EINVAL);
    CHECK_MSG(strstr(rfx_last_error(), "projected: pce surrogate: pce.degree") != NULL, "%s",
              rfx_last_error());
    p.surrogate = RFX_METHOD_BAYES;
    CHECK_STATUS(rfx_projected_params_check(&p), RFX_EINVAL);
    CHECK_MSG(strstr(rfx_last_error(), "projected: bayes surrogate: fit.lambda") != NULL, "%s",
              rfx_last_error());
    /* only the surrogate in use; threads, the method and the PCE marginals
     * are the fit's */
    sp = rfx_srfe_params_default();
    sp.features.n_threads = -1;
    pp = rfx_pce_params_default(); /* marginals NULL */
    pp.n_threads = -1;
    fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_PCE;
    fp.features.n_threads = -1;
    for (int s = 0; s < 4; s++) {
        const rfx_method m[4] = {RFX_METHOD_RIDGE, RFX_METHOD_BAYES, RFX_METHOD_SRFE,
                                 RFX_METHOD_PCE};
        p.surrogate = m[s];
        CHECK_OK(rfx_projected_params_check(&p));
    }
    /* the fit's first check: the same message, whatever the data */
    p = rfx_projected_params_default();
    p.gamma = INFINITY;
    char msg[256];
    rfx_model *mod = NULL;
    CHECK_STATUS(rfx_projected_params_check(&p), RFX_EINVAL);
    snprintf(msg, sizeof msg, "%s", rfx_last_error());
    CHECK_STATUS(rfx_projected_fit(&p, rfx_cmat_of(NULL, 0, 0), rfx_cmat_of(NULL, 0, 0), &mod,
                                   NULL), RFX_EINVAL);
    CHECK_MSG(strcmp(rfx_last_error(), msg) == 0, "'%s' is not '%s'", rfx_last_error(), msg);
    CHECK(mod == NULL);
}

/* (10) The finalists (step 4 of rfx/projection.h): with the PCE surrogate the returned model's
 * corrected LOO error (report.loss) is the lowest of the candidates that
 * share its theta: every (gamma, k) of {its gamma, 10^-2.5, 10^-1.5,
 * 10^-0.5} x {its k, 8}, refitted with that theta given, scores at least as
 * much; the swarm's own loss is reported apart. The ridge surrogate has no
 * finalists. */
static void test_finalists(void)
{
    const size_t m = 150, d = 6;
    rfx_test_rng r = {17};
    double *X, *y;
    sparse_data(&r, m, d, &X, &y);
    rfx_projected_params p = rfx_projected_params_default();
    p.surrogate = RFX_METHOD_PCE;
    p.n_particles = 4;
    p.iterations = 2;
    p.seed = 2;
    double th[6], hist[3];
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    rep.theta = th;
    rep.history = hist;
    rfx_model *mod = fit_or_null(&p, X, y, m, d, &rep);
    rfx_projected_info info;
    if (!mod) goto done;
    CHECK_OK(rfx_model_projected_info(mod, &info));
    CHECK(rep.search_loss == hist[rep.n_iterations]);
    CHECK(info.loss == rep.loss);
    /* three distinct thetas (the swarm's, theta_0 and the second screening
     * round's, which admits some of the inactive inputs here) x 3 or 4
     * scales x 2 k */
    CHECK(rep.finalists == 18 || rep.finalists == 24);
    const double gammas[4] = {info.gamma, 0.0031622776601683794, 0.031622776601683794,
                              0.31622776601683794};
    const size_t ks[2] = {info.n_components, 8};
    double worst_gap = INFINITY;
    for (size_t g = 0; g < 4; g++)
        for (size_t j = 0; j < 2; j++) {
            if ((g > 0 && gammas[g] == gammas[0]) || (j > 0 && ks[j] == ks[0])) continue;
            rfx_projected_params q = p;
            q.theta = th;
            q.gamma = gammas[g];
            q.n_components = ks[j];
            rfx_projected_report rq;
            memset(&rq, 0, sizeof rq);
            rfx_model *mq = fit_or_null(&q, X, y, m, d, &rq);
            if (!mq) continue;
            CHECK_MSG(rq.loss >= rep.loss * (1 - 1e-9), "gamma %g, k %zu: %.10g < %.10g",
                      gammas[g], ks[j], rq.loss, rep.loss);
            if (g == 0 && j == 0) /* the winner itself, refitted: the same loss */
                CHECK_NEAR(rq.loss, rep.loss, 1e-12 * rep.loss);
            else if (rq.loss - rep.loss < worst_gap)
                worst_gap = rq.loss - rep.loss;
            CHECK(rq.finalists == 0 && isnan(rq.search_loss));
            rfx_model_free(mq);
        }
    printf("  pce: %zu finalists, loss %.5g (swarm %.5g), gamma %g, k %zu; the closest other "
           "candidate is %.3g above\n", rep.finalists, rep.loss, rep.search_loss, info.gamma,
           info.n_components, worst_gap);
    CHECK(worst_gap >= 0 && worst_gap < INFINITY);
    rfx_model_free(mod);
    /* ridge: no finalists, the loss is the swarm's */
    p.surrogate = RFX_METHOD_RIDGE;
    memset(&rep, 0, sizeof rep);
    rep.history = hist;
    mod = fit_or_null(&p, X, y, m, d, &rep);
    if (mod) {
        CHECK(rep.finalists == 0);
        CHECK(rep.loss == rep.search_loss && rep.loss == hist[rep.n_iterations]);
    }
    rfx_model_free(mod);
done:
    free(X);
    free(y);
}

/* The default surrogate: ridge, srfe and pce each fitted to the final
 * scores; their own scores are those of fits with that surrogate alone,
 * the least is chosen, and the model is that fit, bit for bit. */
static void test_auto_surrogate(void)
{
    const size_t m = 60, d = 4, n = 25;
    rfx_test_rng r = {23};
    double *X, *y;
    g_data(&r, m, d, &X, &y);
    double *V = rfx_test_matrix(&r, n, d, -1, 1);
    const double theta[4] = {0.9, 0.6, 0.1, 0.3};
    rfx_projected_params p = rfx_projected_params_default();
    CHECK(p.surrogate == RFX_PROJECTED_AUTO);
    p.theta = theta;
    p.n_components = 2;
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    rfx_model *a = fit_or_null(&p, X, y, m, d, &rep);
    const rfx_method cand[3] = {RFX_METHOD_RIDGE, RFX_METHOD_SRFE, RFX_METHOD_PCE};
    double loss[3], best = INFINITY, ya[25], yb[25];
    size_t bi = 0;
    for (size_t i = 0; a && i < 3; i++) {
        rfx_projected_params q = p;
        q.surrogate = cand[i];
        rfx_projected_report r1;
        memset(&r1, 0, sizeof r1);
        rfx_model *b = fit_or_null(&q, X, y, m, d, &r1);
        loss[i] = r1.loss;
        CHECK_MSG(rep.surrogate_scores[i] == loss[i], "%s: %.17g in the auto fit, %.17g alone",
                  rfx_method_name(cand[i]), rep.surrogate_scores[i], loss[i]);
        if (loss[i] < best) {
            best = loss[i];
            bi = i;
            if (b) {
                CHECK_OK(rfx_model_predict(b, rfx_cmat_of(V, n, d), rfx_mat_of(yb, n, 1),
                                           rfx_mat_none()));
            }
        }
        rfx_model_free(b);
    }
    if (a) {
        CHECK(rep.loss == best);
        CHECK_OK(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1),
                                   rfx_mat_none()));
        CHECK(memcmp(ya, yb, sizeof ya) == 0);
        rfx_projected_info info;
        rfx_model_info si;
        CHECK_OK(rfx_model_projected_info(a, &info));
        CHECK_OK(rfx_model_get_info(info.surrogate, &si));
        CHECK(si.method == cand[bi]);
        printf("  own scores: ridge %.4g, srfe %.4g, pce %.4g; chose %s\n", loss[0], loss[1],
               loss[2], rfx_method_name(si.method));
    }
    rfx_model_free(a);
    free(X);
    free(y);
    free(V);
}

/* The default surrogate after a search: SRFE's GCV ranks the finalists
 * (the same choice as the SRFE surrogate's fit), then ridge, srfe and pce
 * are fitted on that projection, and ridge and pce on the swarm's own (the
 * ridge surrogate's fit, which has no finalists); the least own estimate
 * of the five wins, ties to the swarm's projection. Each of the five,
 * refitted with its theta, gamma and k given, has that estimate as its
 * loss, and the winner predicts as the automatic fit, bit for bit. */
static void test_auto_finalists(void)
{
    const size_t m = 60, d = 4, n = 25;
    rfx_test_rng r = {29};
    double *X, *y;
    g_data(&r, m, d, &X, &y);
    double *V = rfx_test_matrix(&r, n, d, -1, 1);
    rfx_projected_params p = rfx_projected_params_default();
    p.n_particles = 4;
    p.iterations = 3;
    p.seed = 5;
    double th_a[4], th_f[4], th_s[4];
    rfx_projected_report ra, rf, rs;
    memset(&ra, 0, sizeof ra);
    memset(&rf, 0, sizeof rf);
    memset(&rs, 0, sizeof rs);
    ra.theta = th_a;
    rf.theta = th_f;
    rs.theta = th_s;
    rfx_model *a = fit_or_null(&p, X, y, m, d, &ra);
    rfx_projected_params q = p;
    q.surrogate = RFX_METHOD_SRFE;
    rfx_model *f = fit_or_null(&q, X, y, m, d, &rf);
    q.surrogate = RFX_METHOD_RIDGE;
    rfx_model *sw = fit_or_null(&q, X, y, m, d, &rs);
    if (!a || !f || !sw) goto out;
    CHECK(ra.finalists > 0 && ra.finalists == rf.finalists && rs.finalists == 0);
    rfx_projected_info ia, iff, is;
    CHECK_OK(rfx_model_projected_info(a, &ia));
    CHECK_OK(rfx_model_projected_info(f, &iff));
    CHECK_OK(rfx_model_projected_info(sw, &is));
    /* the five candidates: the swarm's projection first, without srfe */
    const rfx_method cand[3] = {RFX_METHOD_RIDGE, RFX_METHOD_SRFE, RFX_METHOD_PCE};
    const double *thetas[2] = {th_s, th_f};
    const double gammas[2] = {is.gamma, iff.gamma};
    const size_t ks[2] = {is.n_components, iff.n_components};
    double best = INFINITY, yb[25], ya[25], lb = NAN;
    size_t bj = 0, bi = 0;
    for (size_t j = 0; j < 2; j++) {
        for (size_t i = 0; i < 3; i += 1 + (j == 0)) {
            rfx_projected_params g = p;
            g.surrogate = cand[i];
            g.theta = thetas[j];
            g.gamma = gammas[j];
            g.n_components = ks[j];
            rfx_projected_report rg;
            memset(&rg, 0, sizeof rg);
            rfx_model *b = fit_or_null(&g, X, y, m, d, &rg);
            if (b && rg.loss < best) {
                best = rg.loss;
                bj = j;
                bi = i;
                lb = rg.loss;
                CHECK_OK(rfx_model_predict(b, rfx_cmat_of(V, n, d), rfx_mat_of(yb, n, 1),
                                           rfx_mat_none()));
            }
            rfx_model_free(b);
        }
    }
    CHECK_MSG(ra.loss == lb, "the automatic fit's loss %.17g, the least of the five %.17g",
              ra.loss, lb);
    CHECK(ia.gamma == gammas[bj] && ia.n_components == ks[bj]);
    CHECK(memcmp(ia.theta, thetas[bj], d * sizeof(double)) == 0);
    CHECK(memcmp(th_a, thetas[bj], d * sizeof(double)) == 0);
    CHECK_OK(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1), rfx_mat_none()));
    CHECK(memcmp(ya, yb, sizeof ya) == 0);
    printf("  the swarm's projection (gamma %g, k %zu) and the finalists' (gamma %g, k %zu): "
           "%s on the %s one, own estimate %.4g\n", is.gamma, is.n_components, iff.gamma,
           iff.n_components, rfx_method_name(cand[bi]), bj ? "finalists'" : "swarm's", best);
out:
    rfx_model_free(a);
    rfx_model_free(f);
    rfx_model_free(sw);
    free(X);
    free(y);
    free(V);
}

/* Screening's second round on a target the inputs barely explain: a weak
 * input's share of the residual can pass the strongest input's share of
 * y, and theta_0x (a finalist) must still lie in [0, 1]^d. The data of
 * scikit-learn's estimator check of sample weights (numpy's
 * RandomState(0).uniform(size=(30, 3)), y = i mod 3): with seeds 4, 17 and
 * 25 of these 30, theta_0x once reached 1.57, 1.44 and 1.88 and the fit
 * failed. */
static void test_screening_bounds(void)
{
    const size_t m = 30, d = 3;
    static const double X[90] = {
    0.54881350392732475, 0.71518936637241948, 0.60276337607164387, 0.54488318299689686,
    0.42365479933890471, 0.64589411306665612, 0.43758721126269251, 0.89177300078207977,
    0.96366276050102928, 0.38344151882577771, 0.79172503808266459, 0.52889491975290448,
    0.56804456109393231, 0.92559663829266103, 0.071036058197886942, 0.087129299701540708,
    0.020218397440325719, 0.832619845547938, 0.77815675094985048, 0.87001214824681916,
    0.978618342232764, 0.7991585642167236, 0.46147936225293185, 0.78052917628645546,
    0.11827442586893322, 0.63992102132752382, 0.1433532874090464, 0.94466891704958389,
    0.52184832175007168, 0.41466193999052359, 0.26455561210462697, 0.77423368943421667,
    0.45615033221654855, 0.56843394886864851, 0.018789800436355142, 0.61763549707587706,
    0.61209572272242141, 0.61693399687475692, 0.94374807851462417, 0.68182029910348341,
    0.35950790057378601, 0.43703195379934145, 0.69763119592726486, 0.060225471629269833,
    0.66676671544566768, 0.67063786961815941, 0.2103825610738409, 0.12892629765485331,
    0.31542835092418386, 0.36371077094262261, 0.57019677041787964, 0.43860151346232035,
    0.98837383805922618, 0.10204481074802807, 0.20887675609483469, 0.16130951788499626,
    0.65310832546539843, 0.25329160253978211, 0.46631077285630629, 0.24442559200160274,
    0.15896958364551972, 0.11037514116430513, 0.65632958946527342, 0.1381829513486138,
    0.1965823616800535, 0.36872517066096411, 0.8209932298479351, 0.09710127579306127,
    0.8379449074988039, 0.096098407893963067, 0.97645946501339576, 0.46865120164770158,
    0.97676108819033713, 0.60484551974504597, 0.73926357939830167, 0.039187792254320675,
    0.28280696257640958, 0.12019656121316891, 0.29614019752214493, 0.11872771895424405,
    0.31798317939397602, 0.41426299451466997, 0.064147496348784361, 0.69247211937001985,
    0.56660145420657515, 0.26538949093944542, 0.52324805346669967, 0.093940510758441675,
    0.57594649555617927, 0.92929619757621407};
    double y[30], th[3];
    for (size_t i = 0; i < m; i++) y[i] = (double)(i % 3);
    size_t ok = 0;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        rfx_projected_params p = rfx_projected_params_default();
        p.surrogate = RFX_METHOD_PCE;
        p.n_components = 2;
        p.gamma = 0.1;
        p.n_particles = 2;
        p.iterations = 1;
        p.seed = seed;
        rfx_projected_report rep;
        memset(&rep, 0, sizeof rep);
        rep.theta = th;
        rfx_model *mod = NULL;
        rfx_status st = rfx_projected_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mod,
                                          &rep);
        CHECK_MSG(st == RFX_OK, "seed %llu: %s", (unsigned long long)seed, rfx_last_error());
        if (st == RFX_OK) {
            ok++;
            CHECK(rep.finalists > 0);
            for (size_t j = 0; j < d; j++) CHECK(th[j] >= 0 && th[j] <= 1);
        }
        rfx_model_free(mod);
    }
    printf("  %zu of 30 seeds fitted\n", ok);
}

/* The automatic surrogate on the fewest rows (m = 3 .. 6): the search, the
 * finalists and the five candidates' 5-fold CV (at most m folds) fit; a
 * candidate that cannot fit so few rows loses instead of failing the fit. */
static void test_auto_few_rows(void)
{
    rfx_test_rng r = {43};
    for (size_t m = 3; m <= 6; m++) {
        double *X, *y;
        g_data(&r, m, 3, &X, &y);
        rfx_projected_params p = rfx_projected_params_default();
        p.n_particles = 2;
        p.iterations = 1;
        rfx_projected_report rep;
        memset(&rep, 0, sizeof rep);
        rfx_model *mod = NULL;
        CHECK_MSG(rfx_projected_fit(&p, rfx_cmat_of(X, m, 3), rfx_cmat_of(y, m, 1), &mod, &rep) ==
                      RFX_OK,
                  "m = %zu: %s", m, rfx_last_error());
        if (mod) {
            double lo = INFINITY;
            for (size_t i = 0; i < 3; i++) {
                if (rep.surrogate_scores[i] < lo) lo = rep.surrogate_scores[i];
                if (rep.surrogate_log_scores[i] < lo) lo = rep.surrogate_log_scores[i];
            }
            CHECK(rep.finalists > 0 && rep.loss == lo);
        }
        rfx_model_free(mod);
        free(X);
        free(y);
    }
}

/* The automatic surrogate's candidates fitted to log y (y > 0): each
 * one's estimate is the 5-fold CV error of y with the predictions
 * exponentiated (ridge and SRFE at the hyperparameters of their fit to log
 * y on all rows, PCE refitted in each fold), the least of the six wins,
 * and the model predicts exp of the chosen fit, also after a round trip
 * through a model file. y = exp(x0 + x1 / 2) is linear in the inputs under
 * the log. With one y <= 0 no log candidate is tried. */
static void test_auto_log(void)
{
    const size_t m = 60, d = 4, n = 25;
    rfx_test_rng r = {47};
    double *X = rfx_test_matrix(&r, m, d, -1, 1), *V = rfx_test_matrix(&r, n, d, -1, 1);
    double y[60], ly[60], ya[25], yb[25], yc[25];
    for (size_t i = 0; i < m; i++) {
        ly[i] = X[i * d] + 0.5 * X[i * d + 1];
        y[i] = exp(ly[i]);
    }
    const double theta[4] = {0.9, 0.6, 0.1, 0.3};
    rfx_projected_params p = rfx_projected_params_default();
    p.theta = theta;
    p.n_components = 2;
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    rfx_model *a = fit_or_null(&p, X, y, m, d, &rep), *ref = NULL, *b = NULL;
    double *E = NULL;
    void *buf = NULL;
    if (!a) goto out;
    rfx_projected_info info;
    rfx_model_info si;
    CHECK_OK(rfx_model_projected_info(a, &info));
    CHECK_OK(rfx_model_get_info(info.surrogate, &si));
    E = scores_of(X, m, d, theta, 2, info.gamma);
    /* ridge on log y: 1000 features, its length scale and lambda */
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_RIDGE;
    fp.features.n_features = 1000;
    rfx_fit_report fr;
    CHECK_OK(rfx_model_fit(&fp, rfx_cmat_of(E, m, 2), rfx_cmat_of(ly, m, 1), &ref, &fr));
    fp.features.length_scale = fr.length_scale;
    fp.lambda = fr.lambda;
    const double cv_ridge = kfold5(E, m, 2, y, &fp, NULL, 1);
    CHECK_NEAR(rep.surrogate_log_scores[0], cv_ridge, 1e-10 * cv_ridge);
    /* SRFE on log y: 4000 features, its weight scale, q, N and lambda */
    rfx_srfe_params sp = rfx_srfe_params_default();
    sp.features.n_features = 4000;
    sp.widen_rounds = 0;
    rfx_srfe_report sr;
    rfx_model *sm = NULL;
    CHECK_OK(rfx_srfe_fit(&sp, rfx_cmat_of(E, m, 2), rfx_cmat_of(ly, m, 1), &sm, &sr));
    rfx_model_free(sm);
    sp.features.weight_scale = sr.weight_scale;
    sp.features.sparsity = sr.sparsity;
    sp.features.n_features = sr.n_features;
    sp.lambda = sr.lambda;
    const double cv_srfe = kfold5(E, m, 2, y, NULL, &sp, 1);
    CHECK_NEAR(rep.surrogate_log_scores[1], cv_srfe, 1e-10 * cv_srfe);
    const double cv_pce = kfold5(E, m, 2, y, NULL, NULL, 1);
    CHECK_NEAR(rep.surrogate_log_scores[2], cv_pce, 1e-10 * cv_pce);
    /* the least of the six; here one fitted to log y */
    double lo = INFINITY;
    size_t li = 0;
    for (size_t i = 0; i < 6; i++) {
        const double s = i < 3 ? rep.surrogate_scores[i] : rep.surrogate_log_scores[i - 3];
        if (s < lo) {
            lo = s;
            li = i;
        }
    }
    CHECK(rep.loss == lo);
    CHECK_MSG(li >= 3 && si.target_transform == RFX_TARGET_LOG,
              "chose candidate %zu (transform %d)", li, si.target_transform);
    const rfx_method cand[3] = {RFX_METHOD_RIDGE, RFX_METHOD_SRFE, RFX_METHOD_PCE};
    CHECK(si.method == (li >= 3 ? cand[li - 3] : cand[li]));
    /* the model predicts exp of its fit to log y on all rows (ridge, or
     * PCE refitted here), on the scores of new points; the file keeps that */
    CHECK_OK(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1), rfx_mat_none()));
    rfx_model *fit = NULL;
    if (li == 5) CHECK_OK(pce_on_scores(E, m, 2, ly, &fit));
    if (li == 3 || fit) {
        rfx_kpca_params kq = rfx_kpca_params_default();
        kq.n_components = 2;
        kq.gamma = info.gamma;
        kq.standardize = 1;
        rfx_kpca *o = NULL;
        double Ev[25 * 2];
        CHECK_OK(rfx_kpca_create(&kq, rfx_cmat_of(X, m, d), &o));
        if (o) CHECK_OK(rfx_kpca_fit(o, theta));
        if (o) CHECK_OK(rfx_kpca_transform(o, rfx_cmat_of(V, n, d), rfx_mat_of(Ev, n, 2)));
        rfx_kpca_free(o);
        CHECK_OK(rfx_model_predict(li == 3 ? ref : fit, rfx_cmat_of(Ev, n, 2),
                                   rfx_mat_of(yc, n, 1), rfx_mat_none()));
        for (size_t i = 0; i < n; i++) CHECK_NEAR(ya[i], exp(yc[i]), 1e-12 * ya[i]);
    }
    rfx_model_free(fit);
    size_t len = 0;
    buf = bytes_of(a, &len);
    if (buf) CHECK_OK(rfx_model_load_buffer(buf, len, &b));
    if (b) {
        CHECK_OK(rfx_model_predict(b, rfx_cmat_of(V, n, d), rfx_mat_of(yb, n, 1),
                                   rfx_mat_none()));
        CHECK(memcmp(ya, yb, sizeof ya) == 0);
        rfx_projected_info ib;
        rfx_model_info sb;
        CHECK_OK(rfx_model_projected_info(b, &ib));
        CHECK_OK(rfx_model_get_info(ib.surrogate, &sb));
        CHECK(sb.target_transform == RFX_TARGET_LOG);
    }
    printf("  fitted to y: ridge %.3g, srfe %.3g, pce %.3g; to log y: %.3g, %.3g, %.3g; chose %s "
           "of log y\n", rep.surrogate_scores[0], rep.surrogate_scores[1], rep.surrogate_scores[2],
           cv_ridge, cv_srfe, cv_pce, rfx_method_name(si.method));
    /* with row weights: a row of weight 0 is the row left out, bit for bit,
     * log candidates included */
    {
        double w[60], Xp[60 * 4], yp[60], wp[60], pa[25], pb[25];
        size_t mp = 0;
        for (size_t i = 0; i < m; i++) {
            w[i] = i % 7 == 3 ? 0.0 : 0.5 + (double)(i % 3);
            if (w[i] > 0) {
                memcpy(Xp + mp * d, X + i * d, d * sizeof *X);
                yp[mp] = y[i];
                wp[mp++] = w[i];
            }
        }
        rfx_projected_params pw = p;
        rfx_projected_report r1, r2;
        memset(&r1, 0, sizeof r1);
        memset(&r2, 0, sizeof r2);
        pw.sample_weight = w;
        rfx_model *c1 = fit_or_null(&pw, X, y, m, d, &r1);
        pw.sample_weight = wp;
        rfx_model *c2 = fit_or_null(&pw, Xp, yp, mp, d, &r2);
        if (c1 && c2) {
            CHECK_OK(rfx_model_predict(c1, rfx_cmat_of(V, n, d), rfx_mat_of(pa, n, 1),
                                       rfx_mat_none()));
            CHECK_OK(rfx_model_predict(c2, rfx_cmat_of(V, n, d), rfx_mat_of(pb, n, 1),
                                       rfx_mat_none()));
            CHECK(memcmp(pa, pb, sizeof pa) == 0);
            CHECK(memcmp(r1.surrogate_log_scores, r2.surrogate_log_scores,
                         sizeof r1.surrogate_log_scores) == 0);
            CHECK(!isnan(r1.surrogate_log_scores[0]) && r1.loss == r2.loss);
        }
        rfx_model_free(c1);
        rfx_model_free(c2);
    }
    /* one y <= 0: no log candidate */
    {
        rfx_model *c = NULL;
        rfx_projected_report r2;
        memset(&r2, 0, sizeof r2);
        y[7] = 0;
        c = fit_or_null(&p, X, y, m, d, &r2);
        if (c) {
            CHECK_OK(rfx_model_projected_info(c, &info));
            CHECK_OK(rfx_model_get_info(info.surrogate, &si));
            CHECK(si.target_transform == RFX_TARGET_NONE);
            for (size_t i = 0; i < 3; i++) CHECK(isnan(r2.surrogate_log_scores[i]));
        }
        rfx_model_free(c);
    }
out:
    rfx_model_free(a);
    rfx_model_free(b);
    rfx_model_free(ref);
    rfx_buffer_free(buf);
    free(E);
    free(X);
    free(V);
}

/* Row weights (rfx/projection.h): a row of weight 0 is the row left out,
 * bit for bit, through screening, the shape, the swarm and the finalists
 * (PCE surrogate, 2-fold CV loss too); equal weights are no weights. */
static void test_sample_weights(void)
{
    const size_t m = 50, d = 3;
    rfx_test_rng r = {17};
    double *X, *y;
    sparse_data(&r, m, d, &X, &y);
    double *w = malloc(m * sizeof *w), *Xp = malloc(m * d * sizeof *Xp);
    double *yp = malloc(m * sizeof *yp), *wp = malloc(m * sizeof *wp);
    size_t mp = 0;
    for (size_t i = 0; i < m; i++) {
        w[i] = i % 6 == 4 ? 0.0 : 0.5 + (double)(i % 3);
        if (w[i] > 0) {
            memcpy(Xp + mp * d, X + i * d, d * sizeof *X);
            yp[mp] = y[i];
            wp[mp++] = w[i];
        }
    }
    for (int folds = 0; folds <= 2; folds += 2) {
        rfx_projected_params p = rfx_projected_params_default();
        p.surrogate = RFX_METHOD_PCE;
        p.n_particles = 3;
        p.iterations = 2;
        p.n_folds = (size_t)folds;
        p.sample_weight = w;
        rfx_model *a = NULL, *b = NULL;
        rfx_projected_report ra, rb;
        memset(&ra, 0, sizeof ra);
        memset(&rb, 0, sizeof rb);
        CHECK_OK(rfx_projected_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &a, &ra));
        p.sample_weight = wp;
        CHECK_OK(rfx_projected_fit(&p, rfx_cmat_of(Xp, mp, d), rfx_cmat_of(yp, mp, 1), &b, &rb));
        double pa[10], pb[10];
        if (a && b) {
            CHECK_OK(rfx_model_predict(a, rfx_cmat_of(X, 10, d), rfx_mat_of(pa, 10, 1),
                                       rfx_mat_none()));
            CHECK_OK(rfx_model_predict(b, rfx_cmat_of(X, 10, d), rfx_mat_of(pb, 10, 1),
                                       rfx_mat_none()));
            CHECK(memcmp(pa, pb, sizeof pa) == 0);
            CHECK(memcmp(&ra.loss, &rb.loss, sizeof(double)) == 0);
        }
        rfx_model_free(a);
        rfx_model_free(b);
    }
    /* equal weights: no weights */
    for (size_t i = 0; i < m; i++) w[i] = 3.0;
    rfx_projected_params p = rfx_projected_params_default();
    p.surrogate = RFX_METHOD_RIDGE;
    p.n_particles = 3;
    p.iterations = 1;
    p.sample_weight = w;
    rfx_model *a = NULL, *b = NULL;
    CHECK_OK(rfx_projected_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &a, NULL));
    p.sample_weight = NULL;
    CHECK_OK(rfx_projected_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &b, NULL));
    if (a && b) {
        double pa[10], pb[10];
        CHECK_OK(rfx_model_predict(a, rfx_cmat_of(X, 10, d), rfx_mat_of(pa, 10, 1),
                                   rfx_mat_none()));
        CHECK_OK(rfx_model_predict(b, rfx_cmat_of(X, 10, d), rfx_mat_of(pb, 10, 1),
                                   rfx_mat_none()));
        CHECK(memcmp(pa, pb, sizeof pa) == 0);
    }
    rfx_model_free(a);
    rfx_model_free(b);
    w[3] = -1.0;
    p.sample_weight = w;
    a = NULL;
    CHECK_STATUS(rfx_projected_fit(&p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &a, NULL),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "projected.sample_weight[3]") != NULL && a == NULL);
    free(X);
    free(y);
    free(w);
    free(Xp);
    free(yp);
    free(wp);
}

int main(void)
{
    RFX_TEST_RUN(test_sample_weights);
    RFX_TEST_RUN(test_zero_weight);
    RFX_TEST_RUN(test_kfold_loss);
    RFX_TEST_RUN(test_fast_score);
    RFX_TEST_RUN(test_learns_relevant_inputs);
    RFX_TEST_RUN(test_irrelevant_inputs);
    RFX_TEST_RUN(test_shape);
    RFX_TEST_RUN(test_files);
    RFX_TEST_RUN(test_threads);
    RFX_TEST_RUN(test_errors);
    RFX_TEST_RUN(test_params_check);
    RFX_TEST_RUN(test_finalists);
    RFX_TEST_RUN(test_auto_finalists);
    RFX_TEST_RUN(test_screening_bounds);
    RFX_TEST_RUN(test_auto_few_rows);
    RFX_TEST_RUN(test_auto_surrogate);
    RFX_TEST_RUN(test_auto_log);
    return rfx_test_finish("test_projected");
}
