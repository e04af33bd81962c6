/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * classify_internal.h - classifier functions shared by the fit
 * (solvers/classify.c), the one-call fit (model/fit.c) and the tests.
 * Hidden like everything rfx__.
 */
#ifndef RFX_CLASSIFY_INTERNAL_H
#define RFX_CLASSIFY_INTERNAL_H

#include "internal.h"

/* The sorted distinct values of labels[i * stride], i < n: *classes (C
 * values, allocated with rfx__alloc) and *C. RFX_EPARSE names the row of a
 * NaN / Inf label, RFX_EINVAL fewer than 2 or more than
 * RFX_CLASSIFY_MAX_CLASSES classes; what prefixes the messages. */
rfx_status rfx__classify_classes(const double *labels, size_t n, size_t stride, const char *what,
                                 double **classes, size_t *C);

/* idx[i] = the position of labels[i * stride] in the sorted classes (each
 * label must be one of them). */
void rfx__classify_index(const double *labels, size_t n, size_t stride, const double *classes,
                         size_t C, uint32_t *idx);

/* rfx_classify_fit on class indices y[i] in 0..C-1 with the C classes
 * given (copied into the model; a class may have no rows here, as in a
 * cross-validation fold). Checks params, X and y. */
rfx_status rfx__classify_fit_indexed(const rfx_features *f, rfx_cmat X, const uint32_t *y,
                                     const double *classes, size_t C,
                                     const rfx_classify_params *params, rfx_model **out,
                                     rfx_classify_report *report);

/* An empty classifier: a copy of f, K = 1 (C = 2) or C score columns
 * (zeroed), the C classes copied; the caller sets the weights, loss and
 * the rest. */
rfx_status rfx__classify_model_new(const rfx_features *f, const double *classes, size_t C,
                                   rfx_model **out);

/* What rfx__classify_lsq chose. */
typedef struct rfx__lsq_result {
    double lambda;      /* the chosen lambda (of the mean loss; alpha = n lambda / 2) */
    double error;       /* its LOO error rate                                 */
    double mse;         /* its LOO squared error per row, summed over columns */
    double temperature; /* T of the probabilities, fitted on LOO scores       */
    size_t n_lambdas;   /* the penalties scored                               */
} rfx__lsq_result;

/* The least-squares classifier (RFX_LOSS_SQUARED, one-vs-rest +-1 targets)
 * of X (n x d, in memory) and class indices y, in closed form
 * (solvers/classify_lsq.c): lambda is the one of lambdas (n_lambdas > 0) or
 * of an automatic grid (n_lambdas = 0, extended while its best is on an
 * edge) with the fewest exact leave-one-out errors, ties broken by the LOO
 * squared error, then by the larger lambda. The temperature T minimises
 * the mean negative log-likelihood of softmax(s / T) (sigmoid for two
 * classes) over the LOO scores of at most 4000 evenly spaced rows at that
 * lambda. *out (when not NULL) receives the model, its noise_var holding
 * T. The LOO errors are those of all rows, or beyond 20000 rows of 20000
 * evenly spaced ones. Cost: one pass over the rows for Z^T Z (2 n d D +
 * n D^2 flops), one D x D eigendecomposition, and a pass over the m =
 * min(n, 20000) scored rows (two with the grid extended) for Z V (2 m D^2)
 * and 2 m D K flops per lambda. */
rfx_status rfx__classify_lsq(const rfx_features *f, rfx_cmat X, const uint32_t *y,
                             const double *classes, size_t C, int intercept,
                             const double *lambdas, size_t n_lambdas, int n_threads,
                             rfx__lsq_result *res, rfx_model **out);

/* The temperature T > 0 minimising the mean negative log-likelihood of the
 * classes y (m rows) under sigmoid(s / T) (K = 1) or softmax(s / T) of the
 * scores S (m x K); 1 when m = 0. */
double rfx__classify_temperature(const double *S, const uint32_t *y, size_t m, size_t K);

/* The same for the weighted mean of the rows' negative log-likelihoods
 * (w: m weights >= 0 with a positive sum; NULL: rfx__classify_temperature). */
double rfx__classify_temperature_weighted(const double *S, const uint32_t *y, const double *w,
                                          size_t m, size_t K);

#endif /* RFX_CLASSIFY_INTERNAL_H */
