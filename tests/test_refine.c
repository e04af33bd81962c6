/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The squared hinge's Newton steps (solvers/classify_polish.c) and the
 * refinement of the least-squares classifier (RFX_LOSS_AUTO) against
 * dense solves: the ridge fits by Cholesky factorisations of the normal
 * equations, the line search by golden section on the objective, the
 * optimum by its gradient and by the L-BFGS squared-hinge classifier.
 */
#include "internal.h"
#include "solvers/classify_internal.h"
#include "testlib.h"

#include <math.h>
#include <string.h>

/* C rings: class k at radius k + U(0, 1), a uniform angle. */
static void rings(rfx_test_rng *r, size_t n, size_t C, double *X, double *y)
{
    for (size_t i = 0; i < n; i++) {
        const size_t k = (size_t)(rfx_test_uniform(r) * (double)C) % C;
        const double rad = (double)k + rfx_test_uniform(r);
        const double a = 6.283185307179586 * rfx_test_uniform(r);
        X[2 * i] = rad * cos(a);
        X[2 * i + 1] = rad * sin(a);
        y[i] = (double)k;
    }
}

/* A problem: standardised rows, their features centred by their mean, the
 * eigendecomposition of Zc^T Zc, the +-1 targets. */
typedef struct problem {
    size_t n, d, D, C, K;
    double mean[2], scale[2]; /* the standardisation                       */
    double *Xs, *Z, *Y, *V, *s, *mu, *classes;
    uint32_t *y;
    rfx_features *f;
} problem;

static void problem_make(problem *p, uint64_t seed, size_t n, size_t C, size_t D, double l)
{
    rfx_test_rng r = {seed};
    memset(p, 0, sizeof *p);
    p->n = n;
    p->d = 2;
    p->D = D;
    p->C = C;
    p->K = C == 2 ? 1 : C;
    double *X = malloc(n * 2 * sizeof *X), *lab = malloc(n * sizeof *lab);
    rings(&r, n, C, X, lab);
    p->Xs = malloc(n * 2 * sizeof *p->Xs);
    rfx__standardize(rfx_cmat_of(X, n, 2), p->mean, p->scale, p->Xs, 2);
    size_t Cf = 0;
    CHECK_OK(rfx__classify_classes(lab, n, 1, "test", &p->classes, &Cf));
    CHECK(Cf == C);
    p->y = malloc(n * sizeof *p->y);
    rfx__classify_index(lab, n, 1, p->classes, C, p->y);
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = D;
    fp.length_scale = l;
    fp.seed = 5;
    CHECK_OK(rfx_features_create(&fp, 2, &p->f));
    p->Z = malloc(n * D * sizeof *p->Z);
    CHECK_OK(rfx_features_transform(p->f, rfx_cmat_of(p->Xs, n, 2), rfx_mat_of(p->Z, n, D)));
    p->mu = calloc(D, sizeof *p->mu);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < D; j++) p->mu[j] += p->Z[i * D + j] / (double)n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < D; j++) p->Z[i * D + j] -= p->mu[j];
    p->V = calloc(D * D, sizeof *p->V);
    for (size_t i = 0; i < n; i++)
        for (size_t a = 0; a < D; a++)
            for (size_t b = 0; b < D; b++) p->V[a * D + b] += p->Z[i * D + a] * p->Z[i * D + b];
    p->s = malloc(D * sizeof *p->s);
    CHECK_OK(rfx__eig_sym(p->V, D, p->s, 1, "test"));
    for (size_t j = 0; j < D; j++) p->s[j] = p->s[j] > 0 ? p->s[j] : 0;
    p->Y = malloc(n * p->K * sizeof *p->Y);
    rfx__classify_targets(p->y, n, p->K, p->Y);
    free(X);
    free(lab);
}

static void problem_free(problem *p)
{
    free(p->Xs);
    free(p->Z);
    free(p->Y);
    free(p->V);
    free(p->s);
    free(p->mu);
    free(p->classes);
    free(p->y);
    rfx_features_free(p->f);
}

/* Column k's score of row i at X ((D + 1) x K). */
static double score(const problem *p, const double *X, size_t i, size_t k)
{
    double v = X[p->D * p->K + k];
    for (size_t j = 0; j < p->D; j++) v += p->Z[i * p->D + j] * X[j * p->K + k];
    return v;
}

/* The ridge fit of column k on the rows r0..r1 where act(i) (all when act
 * is NULL: y s < 1 at S otherwise), by Cholesky: into column k of X. */
static void dense_fit(const problem *p, size_t r0, size_t r1, const double *S, double alpha,
                      int intercept, size_t k, double *X)
{
    const size_t D = p->D, K = p->K, m = intercept ? D + 1 : D;
    double *A = calloc(m * m, sizeof *A), *b = calloc(m, sizeof *b), *z = malloc(m * sizeof *z);
    for (size_t i = r0; i < r1; i++) {
        const double y = p->Y[i * K + k];
        if (S && !(y * S[i * K + k] < 1)) continue;
        for (size_t j = 0; j < D; j++) z[j] = p->Z[i * D + j];
        if (intercept) z[D] = 1.0;
        for (size_t a = 0; a < m; a++) {
            b[a] += z[a] * y;
            for (size_t c = 0; c < m; c++) A[a * m + c] += z[a] * z[c];
        }
    }
    for (size_t j = 0; j < D; j++) A[j * m + j] += alpha;
    CHECK_OK(rfx__chol(A, m, 1, "test"));
    CHECK_OK(rfx__chol_solve(A, m, b, 1));
    for (size_t j = 0; j < D; j++) X[j * K + k] = b[j];
    X[D * K + k] = intercept ? b[D] : 0.0;
    free(A);
    free(b);
    free(z);
}

/* Column k's squared-hinge objective at X on the rows r0..r1. */
static double objective(const problem *p, size_t r0, size_t r1, double alpha, const double *X,
                        size_t k)
{
    double v = 0;
    for (size_t j = 0; j < p->D; j++) v += alpha * X[j * p->K + k] * X[j * p->K + k];
    for (size_t i = r0; i < r1; i++) {
        const double m = 1.0 - p->Y[i * p->K + k] * score(p, X, i, k);
        if (m > 0) v += m * m;
    }
    return v;
}

/* One Newton step of every column from X (in place): the ridge fit on the
 * rows of margin < 1, then the step length by golden section on [0, 1]. */
static void dense_newton(const problem *p, size_t r0, size_t r1, double alpha, int intercept,
                         double *X)
{
    const size_t D = p->D, K = p->K, w = (D + 1) * K;
    double *S = malloc(p->n * K * sizeof *S), *Xn = malloc(w * sizeof *Xn);
    double *Xt = malloc(w * sizeof *Xt);
    for (size_t i = r0; i < r1; i++)
        for (size_t k = 0; k < K; k++) S[i * K + k] = score(p, X, i, k);
    memcpy(Xn, X, w * sizeof *Xn);
    for (size_t k = 0; k < K; k++) dense_fit(p, r0, r1, S, alpha, intercept, k, Xn);
    for (size_t k = 0; k < K; k++) {
        const double g = 0.6180339887498949;
        double a = 0, b = 1;
        memcpy(Xt, X, w * sizeof *Xt);
        for (int it = 0; it < 200 && b - a > 1e-15; it++) {
            const double t1 = b - g * (b - a), t2 = a + g * (b - a);
            for (size_t j = 0; j <= D; j++) Xt[j * K + k] = X[j * K + k] + t1 * (Xn[j * K + k] - X[j * K + k]);
            const double f1 = objective(p, r0, r1, alpha, Xt, k);
            for (size_t j = 0; j <= D; j++) Xt[j * K + k] = X[j * K + k] + t2 * (Xn[j * K + k] - X[j * K + k]);
            const double f2 = objective(p, r0, r1, alpha, Xt, k);
            if (f1 <= f2) b = t2;
            else a = t1;
        }
        const double t = 0.5 * (a + b);
        for (size_t j = 0; j <= D; j++) X[j * K + k] += t * (Xn[j * K + k] - X[j * K + k]);
    }
    free(S);
    free(Xn);
    free(Xt);
}

/* The masked ridge solve by conjugate gradients equals the Cholesky solve
 * of the normal equations, with and without the free offset. */
static void test_ridge(void)
{
    problem p;
    problem_make(&p, 3, 400, 4, 48, 0.5);
    const size_t w = (p.D + 1) * p.K, r1 = 320;
    double *X = calloc(w, sizeof *X), *R = calloc(w, sizeof *R);
    for (int icpt = 0; icpt < 2; icpt++) {
        const double alpha = 0.05;
        rfx__polish *pol = NULL;
        CHECK_OK(rfx__polish_create(p.Z, p.Y, p.n, p.D, p.K, alpha, icpt, p.V, p.s, p.n, 2, &pol));
        if (!pol) break;
        rfx__polish_set_tol(pol, 1e-13);
        size_t its = 0;
        memset(X, 0, w * sizeof *X);
        CHECK_OK(rfx__polish_ridge(pol, 0, r1, X, &its));
        for (size_t k = 0; k < p.K; k++) dense_fit(&p, 0, r1, NULL, alpha, icpt, k, R);
        const double gap = rfx_test_max_rel_diff(X, R, w);
        printf("ridge by PCG (offset %d): %zu iterations, %.3g from Cholesky\n", icpt, its, gap);
        CHECK_MSG(gap < 1e-9, "offset %d: %.3g", icpt, gap);
        CHECK(its > 0 && its < 200 * 1);
        rfx__polish_free(pol);
    }
    free(X);
    free(R);
    problem_free(&p);
}

/* A Newton step equals the dense one; the steps never raise the
 * objective, and reach its optimum: a zero gradient, and the minimiser
 * that L-BFGS finds for the squared-hinge classifier at the same penalty
 * (its lambda = 2 alpha / n). */
static void test_newton(void)
{
    problem p;
    problem_make(&p, 4, 500, 3, 40, 0.6);
    const size_t n = p.n, D = p.D, K = p.K, w = (D + 1) * K;
    const double alpha = 0.02;
    double *X = calloc(w, sizeof *X), *R = calloc(w, sizeof *R), *S = malloc(n * K * sizeof *S);
    rfx__polish *pol = NULL;
    CHECK_OK(rfx__polish_create(p.Z, p.Y, n, D, K, alpha, 1, p.V, p.s, n, 2, &pol));
    if (!pol) goto out;
    rfx__polish_set_tol(pol, 1e-13);
    size_t its = 0;
    CHECK_OK(rfx__polish_ridge(pol, 0, n, X, &its));
    memcpy(R, X, w * sizeof *R);
    rfx__polish_scores(pol, 0, n, X, S);
    CHECK_OK(rfx__polish_newton(pol, 0, n, X, S, &its));
    dense_newton(&p, 0, n, alpha, 1, R);
    const double gap = rfx_test_max_rel_diff(X, R, w);
    CHECK_MSG(gap < 1e-7, "one Newton step: %.3g from the dense one", gap);
    /* the scores kept are those of the new iterate */
    double sg = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < K; k++) sg = fmax(sg, fabs(S[i * K + k] - score(&p, X, i, k)));
    CHECK_MSG(sg < 1e-10, "scores %.3g from the iterate's", sg);
    double prev[8];
    for (size_t k = 0; k < K; k++) prev[k] = objective(&p, 0, n, alpha, X, k);
    int steps = 1;
    for (; steps < 30; steps++) {
        CHECK_OK(rfx__polish_newton(pol, 0, n, X, S, &its));
        for (size_t k = 0; k < K; k++) {
            const double o = objective(&p, 0, n, alpha, X, k);
            CHECK_MSG(o <= prev[k] * (1 + 1e-13), "step %d, column %zu: %.17g after %.17g", steps,
                      k, o, prev[k]);
            CHECK_NEAR(o, rfx__polish_objective(pol, 0, n, X, S, k), 1e-10 * o);
            prev[k] = o;
        }
    }
    /* the gradient: 2 (sum_A (s - y) [zc; 1] + alpha [w; 0]) */
    double gmax = 0, scale = 0;
    for (size_t k = 0; k < K; k++) {
        double g[64] = {0};
        for (size_t i = 0; i < n; i++) {
            const double y = p.Y[i * K + k], s = score(&p, X, i, k);
            if (!(y * s < 1)) continue;
            for (size_t j = 0; j < D; j++) g[j] += (s - y) * p.Z[i * D + j];
            g[D] += s - y;
        }
        for (size_t j = 0; j < D; j++) g[j] += alpha * X[j * K + k];
        for (size_t j = 0; j <= D; j++) gmax = fmax(gmax, fabs(g[j]));
        for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(p.Z[i * D]));
    }
    printf("Newton steps of the squared hinge: 30 steps, %zu CG iterations, |gradient| %.3g\n",
           its, gmax);
    CHECK_MSG(gmax < 1e-9 * (double)n * scale, "gradient %.3g", gmax);
    /* L-BFGS on the same features (uncentred: the intercept absorbs mu) */
    rfx_classify_params cp = rfx_classify_params_default();
    cp.loss = RFX_LOSS_SQUARED_HINGE;
    cp.optimizer = RFX_OPTIMIZER_LBFGS;
    cp.lambda = 2 * alpha / (double)n;
    cp.tol = 1e-12;
    cp.max_iter = 100000;
    rfx_model *m = NULL;
    CHECK_OK(rfx__classify_fit_indexed(p.f, rfx_cmat_of(p.Xs, n, 2), p.y, p.classes, p.C, &cp, &m,
                                       NULL));
    if (m) {
        double *Sm = malloc(n * K * sizeof *Sm), dmax = 0, smax = 0;
        CHECK_OK(rfx_model_decision(m, rfx_cmat_of(p.Xs, n, 2), rfx_mat_of(Sm, n, K)));
        for (size_t i = 0; i < n * K; i++) {
            dmax = fmax(dmax, fabs(Sm[i] - S[i]));
            smax = fmax(smax, fabs(S[i]));
        }
        printf("  scores %.3g from L-BFGS's (largest %.3g)\n", dmax, smax);
        CHECK_MSG(dmax < 1e-6 * smax, "scores %.3g from L-BFGS's", dmax);
        free(Sm);
        rfx_model_free(m);
    }
out:
    rfx__polish_free(pol);
    free(X);
    free(R);
    free(S);
    problem_free(&p);
}

/* The refinement's choice, recomputed: the rows in the order of their
 * contents, the last fifth held out; least squares on the others at the
 * same lambda, three dense Newton steps scored on the held-out rows,
 * McNemar's test; then the steps on all rows from the least-squares
 * model, and the temperature of the held-out scores. Five rings, n rows,
 * D features; lambda chosen (NULL) or given. With n < D the least-squares
 * fit and the refinement take the dual form; the recomputation stays in
 * the primal one. */
static void refine_case(uint64_t seed, size_t n, size_t D, double l, const double *lambda)
{
    problem p;
    problem_make(&p, seed, n, 5, D, l);
    const size_t K = p.K, w = (D + 1) * K;
    rfx__lsq_result res;
    rfx_model *m = NULL;
    rfx__lsq_factor fac;
    CHECK_OK(rfx__classify_lsq(p.f, rfx_cmat_of(p.Xs, n, 2), p.y, p.classes, p.C, 1, lambda,
                               lambda ? 1 : 0, 2, &res, &m, &fac));
    CHECK(n < D ? fac.V == NULL : fac.V != NULL);
    if (!m) {
        CHECK(0);
        rfx_model_free(m);
        rfx__lsq_factor_free(&fac);
        problem_free(&p);
        return;
    }
    /* least squares in centred coordinates (the problem's mu is fac's to rounding) */
    double *X0 = malloc(w * sizeof *X0), *Xt = malloc(w * sizeof *Xt);
    memcpy(X0, m->W, D * K * sizeof *X0);
    for (size_t k = 0; k < K; k++) {
        double c = m->intercept[k];
        for (size_t j = 0; j < D; j++) c += p.mu[j] * m->W[j * K + k];
        X0[D * K + k] = c;
    }
    rfx_model *copy = NULL; /* the least-squares model, through a buffer */
    void *cbuf = NULL;
    size_t clen = 0;
    CHECK_OK(rfx_model_save_buffer(m, &cbuf, &clen));
    CHECK_OK(rfx_model_load_buffer(cbuf, clen, &copy));
    rfx_buffer_free(cbuf);
    rfx__refine_report rep;
    CHECK_OK(rfx__classify_refine(m, &fac, rfx_cmat_of(p.Xs, n, 2), p.y, 9, 2, 1e-13, &rep));
    /* the explicit computation on the rows reordered */
    size_t *order = malloc(n * sizeof *order);
    double *yd = malloc(n * sizeof *yd);
    for (size_t i = 0; i < n; i++) yd[i] = (double)p.y[i];
    CHECK_OK(rfx__rows_order(rfx_cmat_of(p.Xs, n, 2), rfx_cmat_of(yd, n, 1), NULL, 9,
                             RFX__REFINE_STREAM, order));
    problem q = p; /* the same problem, its rows in that order */
    q.Z = malloc(n * D * sizeof *q.Z);
    q.Y = malloc(n * K * sizeof *q.Y);
    q.y = malloc(n * sizeof *q.y);
    for (size_t i = 0; i < n; i++) {
        memcpy(q.Z + i * D, p.Z + order[i] * D, D * sizeof *q.Z);
        memcpy(q.Y + i * K, p.Y + order[i] * K, K * sizeof *q.Y);
        q.y[i] = p.y[order[i]];
    }
    const size_t nh = n / RFX__REFINE_HOLDOUT, nt = n - nh;
    const double alpha = 0.5 * (double)n * res.lambda, at = alpha * (double)nt / (double)n;
    for (size_t k = 0; k < K; k++) dense_fit(&q, 0, nt, NULL, at, 1, k, Xt);
    static int ok[RFX__REFINE_MAX_STEPS + 1][1000];
    double *SH = malloc((RFX__REFINE_MAX_STEPS + 1) * nh * K * sizeof *SH);
    for (int j = 0; j <= RFX__REFINE_MAX_STEPS; j++) {
        if (j) dense_newton(&q, 0, nt, at, 1, Xt);
        for (size_t i = 0; i < nh; i++) {
            size_t best = 0;
            for (size_t k = 0; k < K; k++) {
                SH[((size_t)j * nh + i) * K + k] = score(&q, Xt, nt + i, k);
                if (SH[((size_t)j * nh + i) * K + k] > SH[((size_t)j * nh + i) * K + best])
                    best = k;
            }
            ok[j][i] = best == q.y[nt + i];
        }
    }
    int steps = 0;
    size_t gained = 0, lost = 0;
    double best_gain = 0;
    for (int j = 1; j <= RFX__REFINE_MAX_STEPS; j++) {
        size_t b = 0, c = 0;
        for (size_t i = 0; i < nh; i++) {
            b += ok[j][i] && !ok[0][i];
            c += !ok[j][i] && ok[0][i];
        }
        const double gain = (double)b - (double)c;
        if (gain > RFX__REFINE_GATE * sqrt((double)(b + c)) && gain > best_gain) {
            steps = j;
            best_gain = gain;
            gained = b;
            lost = c;
        }
    }
    printf("refinement (%s form, n %zu, D %zu): %zu steps (%zu gained, %zu lost on %zu "
           "held-out rows, %zu CG iterations); recomputed: %d steps (%zu gained, %zu lost)\n",
           n < D ? "dual" : "primal", n, D, rep.steps, rep.gained, rep.lost, rep.holdout,
           rep.iterations, steps, gained, lost);
    CHECK(rep.holdout == nh && !rep.skipped);
    CHECK(rep.steps == (size_t)steps && rep.gained == gained && rep.lost == lost);
    /* these problems gain: least squares is masked between the rings */
    CHECK(steps > 0);
    for (int j = 0; j < steps; j++) dense_newton(&q, 0, n, alpha, 1, X0);
    double *Wd = malloc(D * K * sizeof *Wd), bd[8];
    memcpy(Wd, X0, D * K * sizeof *Wd);
    for (size_t k = 0; k < K; k++) {
        bd[k] = X0[D * K + k];
        for (size_t j = 0; j < D; j++) bd[k] -= p.mu[j] * X0[j * K + k];
    }
    const double gw = rfx_test_max_rel_diff(m->W, Wd, D * K), gb = rfx_test_max_rel_diff(m->intercept, bd, K);
    const double T = rfx__classify_temperature(SH + (size_t)steps * nh * K, q.y + nt, nh, K);
    printf("  weights %.3g, intercepts %.3g from the dense steps; temperature %.6g (%.6g)\n", gw,
           gb, m->noise_var, T);
    CHECK_MSG(gw < 1e-7 && gb < 1e-7, "weights %.3g, intercepts %.3g", gw, gb);
    CHECK_NEAR(m->noise_var, T, 1e-6 * T);
    CHECK(m->loss == RFX_LOSS_SQUARED_HINGE);
    /* probabilities: softmax of the scores over the temperature */
    rfx_classifier_info ci;
    CHECK_OK(rfx_model_classifier_info(m, &ci));
    CHECK(ci.probabilities && ci.temperature == m->noise_var);
    double Pr[5], Sc[5];
    CHECK_OK(rfx_model_predict_proba(m, rfx_cmat_of(p.Xs, 1, 2), rfx_mat_of(Pr, 1, 5)));
    CHECK_OK(rfx_model_decision(m, rfx_cmat_of(p.Xs, 1, 2), rfx_mat_of(Sc, 1, 5)));
    double z = 0;
    for (size_t k = 0; k < 5; k++) z += exp((Sc[k] - Sc[0]) / m->noise_var);
    for (size_t k = 0; k < 5; k++) CHECK_NEAR(Pr[k], exp((Sc[k] - Sc[0]) / m->noise_var) / z, 1e-14);
    /* on fresh rows the refined model beats least squares */
    {
        rfx_test_rng r = {99};
        const size_t nf = 4000;
        double *Xf = malloc(nf * 2 * sizeof *Xf), *lf = malloc(nf * sizeof *lf);
        double *Pm = malloc(nf * sizeof *Pm), *Pc = malloc(nf * sizeof *Pc);
        rings(&r, nf, 5, Xf, lf);
        for (size_t i = 0; i < nf; i++)
            for (size_t j = 0; j < 2; j++)
                Xf[i * 2 + j] = (Xf[i * 2 + j] - p.mean[j]) / p.scale[j];
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(Xf, nf, 2), rfx_mat_of(Pm, nf, 1), rfx_mat_none()));
        CHECK_OK(rfx_model_predict(copy, rfx_cmat_of(Xf, nf, 2), rfx_mat_of(Pc, nf, 1), rfx_mat_none()));
        size_t em = 0, ec = 0;
        for (size_t i = 0; i < nf; i++) {
            em += Pm[i] != lf[i];
            ec += Pc[i] != lf[i];
        }
        printf("  fresh rows: error %.4f refined, %.4f least squares\n", (double)em / nf,
               (double)ec / nf);
        CHECK(em < ec);
        free(Xf);
        free(lf);
        free(Pm);
        free(Pc);
    }
    free(Wd);
    free(SH);
    free(order);
    free(yd);
    free(q.Z);
    free(q.Y);
    free(q.y);
    free(X0);
    free(Xt);
    rfx_model_free(copy);
    rfx_model_free(m);
    rfx__lsq_factor_free(&fac);
    problem_free(&p);
}

static void test_refine(void)
{
    refine_case(11, 1000, 48, 0.45, NULL);
}

static void test_refine_dual(void)
{
    /* a given lambda: at the small ones LOO chooses, least squares
     * interpolates the rows (every margin 1) and no step changes a label */
    const double lambda = 1e-3;
    refine_case(12, 400, 600, 0.65, &lambda);
}

/* rfx_model_fit with RFX_LOSS_AUTO: the least-squares fit of
 * RFX_LOSS_SQUARED, then rfx__classify_refine (bit for bit, on 1 and 2
 * threads); where no step gains, the squared-loss model itself. */
static void test_model_fit_auto(void)
{
    for (int gains = 1; gains >= 0; gains--) {
        rfx_test_rng r = {gains ? 21u : 22u};
        const size_t n = 1000, C = gains ? 5 : 2;
        double *X = malloc(n * 2 * sizeof *X), *y = malloc(n * sizeof *y);
        rings(&r, n, C, X, y);
        rfx_classify_params cs = rfx_classify_params_default(), ca = cs;
        cs.loss = RFX_LOSS_SQUARED;
        ca.loss = RFX_LOSS_AUTO;
        rfx_fit_params p = rfx_fit_params_default();
        p.method = RFX_METHOD_CLASSIFY;
        p.features.n_features = 48;
        p.classify = &cs;
        rfx_model *ms = NULL, *ma = NULL;
        rfx_fit_report rs, ra;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, 2), rfx_cmat_of(y, n, 1), &ms, &rs));
        p.classify = &ca;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, n, 2), rfx_cmat_of(y, n, 1), &ma, &ra));
        CHECK(rs.refine_holdout == 0 && rs.refine_steps == 0);
        CHECK(ra.length_scale == rs.length_scale && ra.lambda == rs.lambda);
        CHECK(ra.refine_holdout == n / 5);
        printf("rfx_model_fit, loss auto, %zu classes: %zu steps (%zu gained, %zu lost)\n", C,
               ra.refine_steps, ra.refine_gained, ra.refine_lost);
        if (ms && ma) {
            rfx_classifier_info ci;
            CHECK_OK(rfx_model_classifier_info(ma, &ci));
            if (gains) {
                CHECK(ra.refine_steps > 0 && ci.loss == RFX_LOSS_SQUARED_HINGE);
                /* the same as refining the squared-loss model by hand */
                double mean[2], scale[2], *Xs = malloc(n * 2 * sizeof *Xs), *classes = NULL;
                size_t Cf = 0;
                uint32_t *yi = malloc(n * sizeof *yi);
                rfx__standardize(rfx_cmat_of(X, n, 2), mean, scale, Xs, 2);
                CHECK_OK(rfx__classify_classes(y, n, 1, "test", &classes, &Cf));
                rfx__classify_index(y, n, 1, classes, Cf, yi);
                rfx_features_params fp = p.features;
                fp.length_scale = rs.length_scale;
                rfx_features *f = NULL;
                rfx_model *mh = NULL;
                rfx__lsq_result lr;
                rfx__lsq_factor fac;
                CHECK_OK(rfx_features_create(&fp, 2, &f));
                CHECK_OK(rfx__classify_lsq(f, rfx_cmat_of(Xs, n, 2), yi, classes, Cf, 1, NULL, 0,
                                           0, &lr, &mh, &fac));
                rfx__refine_report rr;
                if (mh)
                    CHECK_OK(rfx__classify_refine(mh, &fac, rfx_cmat_of(Xs, n, 2), yi,
                                                  p.features.seed, 0, 0, &rr));
                if (mh) {
                    CHECK(memcmp(mh->W, ma->W, 48 * 5 * sizeof(double)) == 0);
                    CHECK(memcmp(mh->intercept, ma->intercept, 5 * sizeof(double)) == 0);
                    CHECK(mh->noise_var == ma->noise_var);
                    CHECK(rr.steps == ra.refine_steps && rr.gained == ra.refine_gained);
                }
                rfx_model_free(mh);
                rfx__lsq_factor_free(&fac);
                rfx_features_free(f);
                free(Xs);
                free(yi);
                free(classes);
            } else {
                CHECK(ra.refine_steps == 0 && ci.loss == RFX_LOSS_SQUARED);
                CHECK(memcmp(ms->W, ma->W, ms->D * ms->ny * sizeof(double)) == 0);
                CHECK(memcmp(ms->intercept, ma->intercept, ms->ny * sizeof(double)) == 0);
                CHECK(ms->noise_var == ma->noise_var);
            }
            /* the same bits on one thread; and through a model file */
            rfx_fit_params q = p;
            q.features.n_threads = 1;
            rfx_model *m1 = NULL;
            CHECK_OK(rfx_model_fit(&q, rfx_cmat_of(X, n, 2), rfx_cmat_of(y, n, 1), &m1, NULL));
            if (m1) {
                CHECK(memcmp(m1->W, ma->W, ma->D * ma->ny * sizeof(double)) == 0);
                CHECK(m1->noise_var == ma->noise_var);
            }
            rfx_model_free(m1);
            void *buf = NULL;
            size_t len = 0;
            rfx_model *back = NULL;
            CHECK_OK(rfx_model_save_buffer(ma, &buf, &len));
            CHECK_OK(rfx_model_load_buffer(buf, len, &back));
            if (back) {
                double P1[5], P2[5];
                const size_t K = ma->ny == 1 ? 2 : ma->ny;
                CHECK_OK(rfx_model_predict_proba(ma, rfx_cmat_of(X, 1, 2), rfx_mat_of(P1, 1, K)));
                CHECK_OK(rfx_model_predict_proba(back, rfx_cmat_of(X, 1, 2), rfx_mat_of(P2, 1, K)));
                CHECK(memcmp(P1, P2, K * sizeof *P1) == 0);
            }
            rfx_model_free(back);
            rfx_buffer_free(buf);
        }
        /* rfx_classify_fit takes a loss, not auto */
        rfx_classify_params bad = rfx_classify_params_default();
        bad.loss = RFX_LOSS_AUTO;
        CHECK_STATUS(rfx_classify_params_check(&bad), RFX_EINVAL);
        rfx_model_free(ms);
        rfx_model_free(ma);
        free(X);
        free(y);
    }
}

int main(void)
{
    RFX_TEST_RUN(test_ridge);
    RFX_TEST_RUN(test_newton);
    RFX_TEST_RUN(test_refine);
    RFX_TEST_RUN(test_refine_dual);
    RFX_TEST_RUN(test_model_fit_auto);
    return rfx_test_finish("test_refine");
}
