/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the one-call fit (fit/fit.c) and its classifier (fit/fit_classify.c)
 * share: the progress call, the input scaler and the classifier's
 * settings.
 */
#include "internal.h"
#include "fit/fit_internal.h"

#include <math.h>
#include <string.h>

int rfx__fit_progress(const rfx_fit_params *p, const char *stage, double frac)
{
    return p->progress && p->progress(p->progress_user, stage, frac);
}

/* The input scaler: per column mean and standard deviation (1 for a
 * constant column), weighted by w unless NULL, and Xs (n x d) = (X - mean)
 * / scale. */
rfx_status rfx__fit_standardize(rfx_cmat X, const double *w, double **mean_out,
                                double **scale_out, double **Xs_out)
{
    const size_t n = X.rows, d = X.cols;
    double *mean = NULL, *scale = NULL, *Xs = NULL;
    size_t nd;
    rfx_status st = rfx__mul(n, d, &nd, "fit: standardised inputs");
    if (!st) st = rfx__calloc(d, sizeof(double), (void **)&mean, "fit: scaler");
    if (!st) st = rfx__calloc(d, sizeof(double), (void **)&scale, "fit: scaler");
    if (!st) st = rfx__alloc(nd, sizeof(double), (void **)&Xs, "fit: standardised inputs");
    if (st) {
        free(mean);
        free(scale);
        free(Xs);
        return st;
    }
    rfx__standardize_weighted(X, w, mean, scale, Xs, d);
    *mean_out = mean;
    *scale_out = scale;
    *Xs_out = Xs;
    return RFX_OK;
}

rfx_classify_params rfx__fit_classify_given(const rfx_fit_params *p)
{
    if (p->classify) return *p->classify;
    rfx_classify_params cp = rfx_classify_params_default();
    cp.loss = RFX_LOSS_AUTO;
    return cp;
}

/* The classifier's settings as the fit uses them: those of p->classify (or
 * the defaults) with the fit's intercept, threads and (when given) lambda;
 * no progress of its own. */
rfx_classify_params rfx__fit_classify_settings(const rfx_fit_params *p)
{
    rfx_classify_params cp = rfx__fit_classify_given(p);
    cp.fit_intercept = p->fit_intercept;
    cp.n_threads = p->features.n_threads;
    cp.progress = NULL;
    cp.progress_user = NULL;
    cp.sample_weight = p->sample_weight; /* each fit sets those of its rows */
    if (!(p->lambda < 0)) cp.lambda = p->lambda;
    if (cp.loss == RFX_LOSS_AUTO) cp.loss = RFX_LOSS_SQUARED; /* then refined */
    return cp;
}
