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

/* The eigendecomposition of a least-squares fit's centred normal matrix,
 * Zc^T Zc = V^T diag(s) V over its n rows (row j of V an eigenvector), and
 * the feature means mu it centred by; all NULL when the fit had none (the
 * dual form). Owned by the holder: rfx__lsq_factor_free. */
typedef struct rfx__lsq_factor {
    double *V, *s, *mu;
    size_t rows;
} rfx__lsq_factor;
void rfx__lsq_factor_free(rfx__lsq_factor *k);

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
                                   int n_threads, rfx__lsq_result *res, rfx_model **out,
                                   rfx__lsq_factor *keep);
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
                             rfx__lsq_result *res, rfx_model **out, rfx__lsq_factor *keep);
/* The temperature T > 0 minimising the mean negative log-likelihood of the
 * classes y (m rows) under sigmoid(s / T) (K = 1) or softmax(s / T) of the
 * scores S (m x K); 1 when m = 0. */
double rfx__classify_temperature(const double *S, const uint32_t *y, size_t m, size_t K);

/* The same for the weighted mean of the rows' negative log-likelihoods
 * (w: m weights >= 0 with a positive sum; NULL: rfx__classify_temperature). */
double rfx__classify_temperature_weighted(const double *S, const uint32_t *y, const double *w,
                                          size_t m, size_t K);

/* ---- Newton steps of the squared hinge (solvers/classify_polish.c) ---- */

/* A polish over the n rows of Zc (n x D features centred by the fit's
 * means, kept by the caller) with targets Y (n x K, +-1), the penalty
 * alpha (of the sum of squared margins, as the least-squares fit's), the
 * preconditioner's eigendecomposition V, s of Zc^T Zc over eig_rows rows
 * (rfx__lsq_factor; V NULL: the dual form, see rfx__polish_dim). The
 * iterates X are (D + 1) x K: the weights, then the offsets c of the
 * centred scores S = Zc w + c (n x K). Each function
 * works on the rows r0..r1 and adds its conjugate gradient iterations to
 * *iters. */
typedef struct rfx__polish rfx__polish;
#define RFX__POLISH_TOL 1e-3 /* a solve's relative residual by default: inexact
                                 Newton steps, each still a descent step */
rfx_status rfx__polish_create(const double *Zc, const double *Y, size_t n, size_t D, size_t K,
                              double alpha, int intercept, const double *V, const double *s,
                              size_t eig_rows, int n_threads, rfx__polish **out);
void rfx__polish_free(rfx__polish *p);
/* The relative residual at which a ridge solve stops (<= 0: the default). */
void rfx__polish_set_tol(rfx__polish *p, double tol);
/* A new penalty alpha for the solves that follow. */
void rfx__polish_set_alpha(rfx__polish *p, double alpha);
/* The iterates' leading dimension: D, or n in the dual form (V NULL: the
 * iterate's first n rows are coefficients B over the rows, w = Zc^T B,
 * the Gram matrix Zc Zc^T held, each fit an exact Cholesky solve per
 * column; for n at most D). */
size_t rfx__polish_dim(const rfx__polish *p);
/* X = the least-squares fit on the rows, from X. */
rfx_status rfx__polish_ridge(rfx__polish *p, size_t r0, size_t r1, double *X, size_t *iters);
/* One Newton step of the squared hinge from X, whose scores are S (rows
 * r0..r1); both updated. */
rfx_status rfx__polish_newton(rfx__polish *p, size_t r0, size_t r1, double *X, double *S,
                              size_t *iters);
/* S (rows r0..r1) = the scores of X. */
void rfx__polish_scores(const rfx__polish *p, size_t r0, size_t r1, const double *X, double *S);
/* Column k's squared-hinge objective at X, S on the rows. */
double rfx__polish_objective(const rfx__polish *p, size_t r0, size_t r1, const double *X,
                             const double *S, size_t k);

/* What rfx__classify_refine did. */
typedef struct rfx__refine_report {
    size_t steps;      /* Newton steps kept (0: the least-squares fit stays) */
    size_t holdout;    /* rows held out                                      */
    size_t gained, lost; /* held-out rows the kept steps got right that least
                          squares got wrong, and the reverse                  */
    size_t iterations; /* conjugate gradient iterations in all               */
    int skipped;       /* 1: not tried (no factor, or the features too big)  */
} rfx__refine_report;

/* The one-call fit's refinement of the least-squares classifier m (fitted
 * on the n rows X with class indices y; fac its factor): the rows in the
 * order of their contents (rfx__rows_order with the seed), the last n / 5
 * held out; the
 * least-squares fit on the others at the same lambda (their penalty alpha
 * scaled by their share of the rows; solved to a relative residual of
 * 1e-10, as it starts from m, which has seen the held-out rows; tol: the
 * Newton steps' relative residual, <= 0 for RFX__POLISH_TOL, and that of
 * the held-out least squares too when > 0), then up to 3 Newton
 * steps of the squared hinge, each scored on the held-out rows. The step
 * count with the largest gain over least squares among those McNemar's
 * test finds significant (one-sided, 5 %) is taken on all rows from m; m
 * then has the squared hinge loss and the temperature of that step's
 * held-out scores. With no significant gain m is left as it is. When fac
 * has no eigendecomposition (the least-squares fit's dual form, n <= D),
 * the fits are the dual form's exact solves (rfx__polish_dim). Skipped
 * when Z (n x D) would take more than 512 MiB. */
#define RFX__REFINE_MAX_STEPS 3
#define RFX__REFINE_HOLDOUT 5      /* one row in 5 held out                  */
#define RFX__REFINE_GATE 1.645     /* McNemar's one-sided 5 % point          */
#define RFX__REFINE_STREAM 0x524546u /* the rows' order (rfx__rows_order)    */
rfx_status rfx__classify_refine(rfx_model *m, const rfx__lsq_factor *fac, rfx_cmat X,
                                const uint32_t *y, uint64_t seed, int n_threads, double tol,
                                rfx__refine_report *rep);

#endif /* RFX_CLASSIFY_INTERNAL_H */
