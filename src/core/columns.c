/* SPDX-License-Identifier: BSD-3-Clause */
/* The one input standardisation of the library (ridge and Bayes fits,
 * kernel PCA, SRFE): column means and population standard deviations,
 * weighted or not; and the one check of row weights. */
#include "internal.h"

#include <math.h>

/* Columns whose largest magnitude lies in [SAFE_LO, SAFE_HI] are summed as
 * they are: their squares can neither overflow nor underflow. Others are
 * summed divided by that magnitude (in [-1, 1]) and scaled back, so every
 * finite column gets a finite mean and a positive finite scale. */
#define SAFE_LO RFX__SAFE_LO
#define SAFE_HI RFX__SAFE_HI

void rfx__standardize_weighted(rfx_cmat X, const double *w, double *mean, double *scale,
                               double *Xs, size_t ldxs)
{
    const size_t n = X.rows, d = X.cols;
    /* the weights' sum; without weights n, so every product by a weight
     * below is by 1.0 and the sums keep the bits of the unweighted ones */
    double wsum = 0;
    if (w)
        for (size_t i = 0; i < n; i++) wsum += w[i];
    else
        wsum = (double)n;
    for (size_t j = 0; j < d; j++) mean[j] = scale[j] = 0.0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) mean[j] += (w ? w[i] : 1.0) * X.data[i * X.stride + j];
    for (size_t j = 0; j < d; j++) mean[j] /= wsum;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) {
            double v = X.data[i * X.stride + j] - mean[j];
            scale[j] += (w ? w[i] : 1.0) * v * v;
        }
    for (size_t j = 0; j < d; j++) {
        double top = 0;
        for (size_t i = 0; i < n; i++) top = fmax(top, fabs(X.data[i * X.stride + j]));
        if (top > 0 && (top < SAFE_LO || top > SAFE_HI)) {
            /* the same sums on x / top, then scaled back */
            double m = 0, s2 = 0;
            for (size_t i = 0; i < n; i++) m += (w ? w[i] : 1.0) * (X.data[i * X.stride + j] / top);
            m /= wsum;
            for (size_t i = 0; i < n; i++) {
                double v = X.data[i * X.stride + j] / top - m;
                s2 += (w ? w[i] : 1.0) * v * v;
            }
            mean[j] = m * top;
            scale[j] = sqrt(s2 / wsum) * top;
        } else {
            scale[j] = sqrt(scale[j] / wsum);
        }
        if (!(scale[j] > 0)) scale[j] = 1.0; /* a constant column stays constant */
    }
    if (Xs)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < d; j++)
                Xs[i * ldxs + j] = rfx__standardized(X.data[i * X.stride + j], mean[j], scale[j]);
}

rfx_status rfx__check_weights(const double *w, size_t n, const char *what)
{
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(isfinite(w[i]) && w[i] >= 0))
            return rfx__error(RFX_EINVAL, "%s[%zu]: must be >= 0 and finite, got %g", what, i,
                              w[i]);
        any |= w[i] > 0;
    }
    if (!any && n > 0)
        return rfx__error(RFX_EINVAL, "%s: all %zu weights are zero", what, n);
    return RFX_OK;
}

void rfx__standardize(rfx_cmat X, double *mean, double *scale, double *Xs, size_t ldxs)
{
    rfx__standardize_weighted(X, NULL, mean, scale, Xs, ldxs);
}
