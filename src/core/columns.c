/* The one input standardisation of the library (ridge and Bayes fits,
 * kernel PCA, SRFE): column means and population standard deviations. */
#include "internal.h"

#include <math.h>

void rfx__standardize(rfx_cmat X, double *mean, double *scale, double *Xs, size_t ldxs)
{
    const size_t n = X.rows, d = X.cols;
    for (size_t j = 0; j < d; j++) mean[j] = scale[j] = 0.0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) mean[j] += X.data[i * X.stride + j];
    for (size_t j = 0; j < d; j++) mean[j] /= (double)n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) {
            double v = X.data[i * X.stride + j] - mean[j];
            scale[j] += v * v;
        }
    for (size_t j = 0; j < d; j++) {
        scale[j] = sqrt(scale[j] / (double)n);
        if (!(scale[j] > 0)) scale[j] = 1.0; /* a constant column stays constant */
    }
    if (Xs)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < d; j++)
                Xs[i * ldxs + j] = (X.data[i * X.stride + j] - mean[j]) / scale[j];
}
