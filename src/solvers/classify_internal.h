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

/* The same fit for each of n_lambdas penalties in turn (lambdas[l] > 0;
 * params->lambda is not read), out[l] (and report[l] when report is not
 * NULL) the model of lambdas[l]. The rows are featurised once (cached
 * when they fit) and L-BFGS starts each penalty from the solution of the
 * one before (a warm start: order the lambdas from the largest down); dual
 * CD and SGD start each from 0. On error no model is left. */
rfx_status rfx__classify_fit_path(const rfx_features *f, rfx_cmat X, const uint32_t *y,
                                  const double *classes, size_t C,
                                  const rfx_classify_params *params, const double *lambdas,
                                  size_t n_lambdas, rfx_model **out, rfx_classify_report *report);

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
 * in closed form (solvers/classify_lsq.c), from s, the statistics of all n
 * rows with the targets rfx__classify_targets makes (K = 1 column for two
 * classes, else C), and the scored rows rX (m rows, f's d columns) with
 * class indices ry: lambda is the one of lambdas (n_lambdas > 0) or of an
 * automatic grid (n_lambdas = 0, extended while its best is on an edge)
 * with the fewest exact leave-one-out errors over the scored rows, ties
 * broken by the LOO squared error, then by the larger lambda. The
 * temperature T minimises the mean negative log-likelihood of softmax(s /
 * T) (sigmoid for two classes) over the LOO scores of at most 4000 evenly
 * spaced scored rows at that lambda. *out (when not NULL) receives the
 * model, its noise_var holding T. Cost: one D x D eigendecomposition, and
 * a pass over the m scored rows (two with the grid extended) for Z V (2 m
 * D^2) and 2 m D K flops per lambda. */
rfx_status rfx__classify_lsq_solve(const rfx_features *f, const rfx_stats *s, rfx_cmat rX,
                                   const uint32_t *ry, const double *classes, size_t C,
                                   int intercept, const double *lambdas, size_t n_lambdas,
                                   int n_threads, rfx__lsq_result *res, rfx_model **out);
/* The scored rows of a fit on more rows than this: the RFX__LSQ_LOO_ROWS
 * rows of least content hash (rfx__rows_order, stream 1 of the seed). */
#define RFX__LSQ_LOO_ROWS 20000
/* Y (rows x K) = the +-1 targets of the class indices y: K = 1 (two
 * classes: +1 for class 1) or one column per class. */
void rfx__classify_targets(const uint32_t *y, size_t rows, size_t K, double *Y);
/* Add the rows X with class indices y (C classes) to s (f's D features, K
 * targets as above), ADD_ROWS (4096) rows per rfx_stats_add: the blocks of
 * a row-block source by default, so a streamed fit sums alike. */
rfx_status rfx__classify_lsq_add(rfx_stats *s, const rfx_features *f, rfx_cmat X,
                                 const uint32_t *y, size_t C);
/* Both in one: the statistics of X, every row of X scored; or, when X has
 * fewer rows than f has features (and its features take at most 256 MiB),
 * the same from the n x n Gram matrix of the centred features (the dual
 * form: n^2 D + n^3 flops instead of n D^2 + D^3), equal to rounding. */
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
