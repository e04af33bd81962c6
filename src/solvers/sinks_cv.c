/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx_sinks_fit, with the box given or chosen by cross-validation, and the
 * kitchen sinks classifier of any number of classes (rfx/sinks.h). Both
 * call the fit of a given box (sinks.c) once per fold, box and column; the
 * classifier's
 * model is an rfx classifier (RFX_METHOD_CLASSIFY, one-vs-rest), so its
 * decision values, probabilities and files are those of rfx/classify.h.
 */
#include "internal.h"
#include "solvers/classify_internal.h"

#include <math.h>
#include <string.h>

/* The boxes tried: RANGE_STEPS ratios 4^g times the range of the targets
 * (2 for labels +-1), then no box. */
#define RANGE_STEPS (RFX_SINKS_CV_GRID - 1)

/* The stream of the folds' row order (rfx__rows_order): "sink". */
#define FOLD_STREAM 0x73696e6bULL

/* The held-out loss of the decision value p for the target y, as the fit
 * measures it (the squared loss without its factor 1/2: the squared error). */
static double held_out_loss(rfx_sinks_loss loss, double p, double y)
{
    switch (loss) {
    case RFX_SINKS_LOSS_LOGISTIC: {
        double m = -y * p;
        return (m > 0 ? m : 0.0) + log1p(exp(-fabs(m)));
    }
    case RFX_SINKS_LOSS_SQUARED_HINGE: {
        double h = 1.0 - y * p;
        return h > 0 ? 0.5 * h * h : 0.0;
    }
    case RFX_SINKS_LOSS_SQUARED:
        break;
    }
    return (p - y) * (p - y);
}

/* The fits of one box: K target columns Y (column k at Y + k n), each by
 * rfx_sinks_fit on the same map. W (D x K, row-major) and c (K) get the
 * weights and intercepts; rep sums the reports (iterations, restarts,
 * Newton steps, weights at the bound; the largest KKT residual and
 * Lipschitz constant; converged when every column did; the objectives'
 * mean). */
static rfx_status fit_columns(const rfx_features *f, rfx_cmat X, const double *Y, size_t K,
                              const rfx_sinks_params *p, double *W, double *c,
                              rfx_sinks_report *rep)
{
    const size_t n = X.rows, D = f->D;
    memset(rep, 0, sizeof *rep);
    rep->converged = 1;
    for (size_t k = 0; k < K; k++) {
        rfx_model *m = NULL;
        rfx_sinks_report r;
        RFX__TRY(rfx__sinks_fit_box(f, X, Y + k * n, p, &m, &r));
        for (size_t j = 0; j < D; j++) W[j * K + k] = m->W[j];
        c[k] = m->intercept[0];
        rfx_model_free(m);
        rep->iterations += r.iterations;
        rep->restarts += r.restarts;
        rep->newton_steps += r.newton_steps;
        rep->n_at_bound += r.n_at_bound;
        rep->objective += r.objective / (double)K;
        rep->kkt = fmax(rep->kkt, r.kkt);
        rep->lipschitz = fmax(rep->lipschitz, r.lipschitz);
        rep->converged = rep->converged && r.converged;
    }
    return RFX_OK;
}

/* Decision values S (rows x K) of the weights W, c on X. */
static rfx_status decide(const rfx_features *f, rfx_cmat X, const double *W, const double *c,
                         size_t K, double *Z, double *S)
{
    RFX__TRY(rfx_features_transform(f, X, rfx_mat_of(Z, X.rows, f->D)));
    for (size_t i = 0; i < X.rows; i++)
        for (size_t k = 0; k < K; k++) {
            double s = c[k];
            for (size_t j = 0; j < f->D; j++) s += Z[i * f->D + j] * W[j * K + k];
            S[i * K + k] = s;
        }
    return RFX_OK;
}

/* The box of least cross-validated loss over RFX_SINKS_CV_GRID boxes and
 * RFX_SINKS_CV_FOLDS folds for the K target columns Y (summed over the
 * columns); report gets the grid and the losses. Row perm[i] is in fold
 * i mod folds, perm the rows in the seeded order of their contents
 * (rfx__rows_order of X and the first column of Y, the map's seed). */
static rfx_status choose_box(const rfx_features *f, rfx_cmat X, const double *Y, size_t K,
                             const rfx_sinks_params *base, rfx_sinks_report *report)
{
    const size_t n = X.rows, d = X.cols, D = f->D, folds = RFX_SINKS_CV_FOLDS;
    if (n < 2 * folds)
        return rfx__error(RFX_EDIM, "sinks: choosing the box by %zu-fold cross-validation needs "
                          "at least %zu rows, got %zu (set params.C)", folds, 2 * folds, n);
    double lo = Y[0], hi = Y[0];
    for (size_t i = 1; i < n * K; i++) {
        lo = fmin(lo, Y[i]);
        hi = fmax(hi, Y[i]);
    }
    const double range = hi > lo ? hi - lo : 1.0;
    for (int g = 0; g < RANGE_STEPS; g++) report->cv_C[g] = range * pow(4.0, g);
    report->cv_C[RANGE_STEPS] = INFINITY;
    report->n_cv = RFX_SINKS_CV_GRID;

    size_t *perm = NULL, nd, nD;
    double *Xt = NULL, *Yt = NULL, *Yv = NULL, *W = NULL, *c = NULL, *Z = NULL, *S = NULL;
    rfx_status st = rfx__mul(n, d > D ? d : D, &nd, "sinks: the cross-validation folds");
    if (!st) st = rfx__mul(n, K, &nD, "sinks: the cross-validation folds");
    if (!st) st = rfx__alloc(n, sizeof *perm, (void **)&perm, "sinks: the folds");
    if (!st) st = rfx__alloc(n * d, sizeof *Xt, (void **)&Xt, "sinks: the folds");
    if (!st) st = rfx__alloc(nD, sizeof *Yt, (void **)&Yt, "sinks: the folds");
    if (!st) st = rfx__alloc(nD, sizeof *Yv, (void **)&Yv, "sinks: the folds");
    if (!st) st = rfx__mul(D, K, &nD, "sinks: the weights");
    if (!st) st = rfx__alloc(nD, sizeof *W, (void **)&W, "sinks: the weights");
    if (!st) st = rfx__alloc(K, sizeof *c, (void **)&c, "sinks: the intercepts");
    if (!st) st = rfx__alloc(nd, sizeof *Z, (void **)&Z, "sinks: the held-out features");
    if (!st) st = rfx__alloc(n * K, sizeof *S, (void **)&S, "sinks: the held-out scores");
    if (st) goto done;
    if ((st = rfx__rows_order(X, rfx_cmat_of(Y, n, 1), NULL, f->params.seed, FOLD_STREAM, perm)))
        goto done;
    for (size_t g = 0; g < RFX_SINKS_CV_GRID && !st; g++) {
        double sum = 0;
        for (size_t fold = 0; fold < folds && !st; fold++) {
            size_t nt = n - (n - fold + folds - 1) / folds, a = 0, b = 0;
            for (size_t i = 0; i < n; i++) { /* the training rows, then the fold's */
                size_t r = perm[i];
                if (i % folds == fold) {
                    memcpy(Xt + (nt + b) * d, X.data + r * X.stride, d * sizeof *Xt);
                    for (size_t k = 0; k < K; k++) Yv[k * (n - nt) + b] = Y[k * n + r];
                    b++;
                } else {
                    memcpy(Xt + a * d, X.data + r * X.stride, d * sizeof *Xt);
                    for (size_t k = 0; k < K; k++) Yt[k * nt + a] = Y[k * n + r];
                    a++;
                }
            }
            rfx_sinks_params p = *base;
            p.C = report->cv_C[g];
            rfx_sinks_report r;
            st = fit_columns(f, rfx_cmat_of(Xt, nt, d), Yt, K, &p, W, c, &r);
            if (!st) st = decide(f, rfx_cmat_of(Xt + nt * d, n - nt, d), W, c, K, Z, S);
            for (size_t i = 0; i < n - nt && !st; i++)
                for (size_t k = 0; k < K; k++)
                    sum += held_out_loss(base->loss, S[i * K + k], Yv[k * (n - nt) + i]);
        }
        report->cv_loss[g] = sum / (double)n;
    }
    if (st) rfx__error_prefix("sinks: cross-validating the box");
done:
    free(perm);
    free(Xt);
    free(Yt);
    free(Yv);
    free(W);
    free(c);
    free(Z);
    free(S);
    return st;
}

/* The least cross-validated loss's box (a tie keeps the smaller one). */
static double best_box(const rfx_sinks_report *r)
{
    size_t b = 0;
    for (size_t g = 1; g < r->n_cv; g++)
        if (r->cv_loss[g] < r->cv_loss[b]) b = g;
    return r->cv_C[b];
}

rfx_status rfx_sinks_fit(const rfx_features *f, rfx_cmat X, const double *y,
                         const rfx_sinks_params *params, rfx_model **out,
                         rfx_sinks_report *report)
{
    RFX__TRY(rfx__sinks_check(f, X, y, params, out));
    if (params->C != 0) return rfx__sinks_fit_box(f, X, y, params, out, report);
    rfx_sinks_report cv;
    memset(&cv, 0, sizeof cv);
    RFX__TRY(choose_box(f, X, y, 1, params, &cv));
    rfx_sinks_params p = *params;
    p.C = best_box(&cv);
    RFX__TRY(rfx__sinks_fit_box(f, X, y, &p, out, report));
    if (report) {
        report->n_cv = cv.n_cv;
        memcpy(report->cv_C, cv.cv_C, sizeof cv.cv_C);
        memcpy(report->cv_loss, cv.cv_loss, sizeof cv.cv_loss);
    }
    return RFX_OK;
}

rfx_status rfx_sinks_classify(const rfx_features *f, rfx_cmat X, const double *labels,
                              const rfx_sinks_params *params, rfx_model **out,
                              rfx_sinks_report *report)
{
    if (!f) return rfx__error(RFX_EINVAL, "sinks_classify: f is NULL");
    if (!params) return rfx__error(RFX_EINVAL, "sinks_classify: params is NULL");
    if (!out) return rfx__error(RFX_EINVAL, "sinks_classify: out is NULL");
    if (params->loss == RFX_SINKS_LOSS_SQUARED)
        return rfx__error(RFX_EINVAL, "sinks_classify params.loss: the squared loss is for "
                          "regression; take logistic or squared hinge");
    RFX__TRY(rfx__check_cmat(X, "sinks_classify: X"));
    if (X.rows < 2)
        return rfx__error(RFX_EDIM, "sinks_classify: X has %zu rows, at least 2 are needed",
                          X.rows);
    if (!labels) return rfx__error(RFX_EINVAL, "sinks_classify: labels is NULL");
    const size_t n = X.rows, D = f->D;
    double *classes = NULL, *Y = NULL, *W = NULL, *c = NULL;
    uint32_t *idx = NULL;
    size_t C = 0, K, nK, DK;
    rfx_model *m = NULL;
    rfx_sinks_report rep;
    memset(&rep, 0, sizeof rep);
    RFX__TRY(rfx__classify_classes(labels, n, 1, "sinks_classify: labels", &classes, &C));
    K = C == 2 ? 1 : C;
    rfx_status st = rfx__mul(n, K, &nK, "sinks_classify: the targets");
    if (!st) st = rfx__mul(D, K, &DK, "sinks_classify: the weights");
    if (!st) st = rfx__alloc(n, sizeof *idx, (void **)&idx, "sinks_classify: the labels");
    if (!st) st = rfx__alloc(nK, sizeof *Y, (void **)&Y, "sinks_classify: the targets");
    if (!st) st = rfx__alloc(DK, sizeof *W, (void **)&W, "sinks_classify: the weights");
    if (!st) st = rfx__alloc(K, sizeof *c, (void **)&c, "sinks_classify: the intercepts");
    if (st) goto done;
    rfx__classify_index(labels, n, 1, classes, C, idx);
    for (size_t k = 0; k < K; k++) /* column k: +1 for class k (class 1 when K = 1) */
        for (size_t i = 0; i < n; i++)
            Y[k * n + i] = idx[i] == (K == 1 ? 1u : (uint32_t)k) ? 1.0 : -1.0;
    rfx_sinks_params p = *params;
    if (p.C == 0) {
        if ((st = choose_box(f, X, Y, K, params, &rep))) goto done;
        p.C = best_box(&rep);
    }
    rfx_sinks_report fitted;
    if ((st = fit_columns(f, X, Y, K, &p, W, c, &fitted))) goto done;
    if ((st = rfx__classify_model_new(f, classes, C, &m))) goto done;
    memcpy(m->W, W, DK * sizeof *W);
    memcpy(m->intercept, c, K * sizeof *c);
    m->loss = p.loss == RFX_SINKS_LOSS_LOGISTIC ? (int)RFX_LOSS_LOGISTIC
                                                : (int)RFX_LOSS_SQUARED_HINGE;
    m->multiclass = RFX_MULTICLASS_OVR;
    m->lambda = 0.0;
    m->n_train = n;
    m->fit_intercept = p.fit_intercept != 0;
    if (report) {
        fitted.C = p.C;
        fitted.n_cv = rep.n_cv;
        memcpy(fitted.cv_C, rep.cv_C, sizeof rep.cv_C);
        memcpy(fitted.cv_loss, rep.cv_loss, sizeof rep.cv_loss);
        *report = fitted;
    }
    *out = m;
done:
    free(classes);
    free(idx);
    free(Y);
    free(W);
    free(c);
    return st;
}
