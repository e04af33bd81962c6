/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/model.h - row-block sources, sufficient statistics, ridge and Bayesian
 * fits, models and their files.
 */
#ifndef RFX_MODEL_H
#define RFX_MODEL_H

#include "rfx/core.h"
#include "rfx/features.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Row-block sources                                                         */
/* ------------------------------------------------------------------------ */

/* A block of rows: x is rows x cols with stride; y is rows x ny with
 * y_stride (NULL and ny == 0 when there are no targets). Owned by the
 * source, valid until its next call. */
typedef struct rfx_block {
    const double *x;
    size_t rows, cols, stride;
    const double *y;
    size_t ny, y_stride;
} rfx_block;

/* Where rows come from. Solvers call next() until *done is set (a call that
 * sets *done returns no rows), and rewind() to start a new pass. Users may
 * implement their own (a database cursor, an MPI shard): fill next, rewind,
 * and optionally destroy (called by rfx_source_free), state. */
typedef struct rfx_source {
    rfx_status (*next)(struct rfx_source *src, rfx_block *out, int *done);
    rfx_status (*rewind)(struct rfx_source *src);
    void (*destroy)(struct rfx_source *src);
    void *state;
} rfx_source;

/* A source over in-memory X (n x d) and Y (n x ny, or rfx_cmat_none()), in
 * blocks of block_rows rows (0 = 4096). X and Y must outlive the source. */
RFX_API rfx_status rfx_source_memory_create(rfx_cmat X, rfx_cmat Y, size_t block_rows,
                                            rfx_source **out);

/* Release a source made by the library (calls destroy, frees the struct). */
RFX_API void rfx_source_free(rfx_source *src);

/* ------------------------------------------------------------------------ */
/* Sufficient statistics                                                     */
/* ------------------------------------------------------------------------ */

/* Mergeable sufficient statistics of a linear model on features Z (n x D)
 * and targets Y (n x ny): n, Z^T Z, Z^T Y, column sums of Z and Y, and the
 * diagonal of Y^T Y. Targets are accumulated about a shift (the mean of the
 * first block) so that large offsets do not cancel. Statistics of disjoint
 * row sets merge exactly (streaming, cross-validation folds, MPI ranks).
 *
 * Rows may carry weights w_i >= 0 (rfx_stats_add_weighted): the sums are
 * then sum w, Z^T W Z, Z^T W Y, the weighted column sums and diag Y^T W Y
 * (W = diag(w)), the count n is that of the rows with w_i > 0, and sum
 * log w_i over those rows is kept for the Bayesian evidence. Weights merge
 * as sums (rfx_stats_merge adds them, rfx_stats_remove subtracts them), so
 * the statistics of a weighted row set are those of its parts; an integer
 * weight k gives the sums of the row repeated k times, and weight 0 those
 * of the row left out. Unweighted rows are rows of weight 1, bit for bit. */
typedef struct rfx_stats rfx_stats;

RFX_API rfx_status rfx_stats_create(size_t n_features, size_t n_targets, rfx_stats **out);
RFX_API void rfx_stats_free(rfx_stats *s);
/* The rows added (those with a positive weight, when weighted). */
RFX_API size_t rfx_stats_rows(const rfx_stats *s);

/* Featurise the rows X (n x d) with f and add them, with targets Y (n x ny).
 * Z^T Z is accumulated by fixed tiles (BLAS SYRK/GEMM, OpenMP over tiles), so
 * results are bitwise identical for any thread count. */
RFX_API rfx_status rfx_stats_add(rfx_stats *s, const rfx_features *f, rfx_cmat X, rfx_cmat Y);

/* The same with a weight per row: w (X.rows values, finite, >= 0, not all
 * zero; NULL = 1 each, which is rfx_stats_add). Row i counts w_i times in
 * every sum: ridge on these statistics minimises sum_i w_i |y_i - z_i^T W
 * - c|^2 + lambda |W|^2 (scikit-learn's Ridge with sample_weight), and the
 * Bayesian fit gives row i the noise variance noise_var / w_i. A bad weight
 * is RFX_EINVAL naming it ("stats: w[3]: ..."). The rows are scaled by
 * sqrt(w_i) before the SYRK: weights of 1 give rfx_stats_add's bits. */
RFX_API rfx_status rfx_stats_add_weighted(rfx_stats *s, const rfx_features *f, rfx_cmat X,
                                          rfx_cmat Y, const double *w);

/* The same from single-precision rows: features in float (the f32
 * transform), each chunk's Z^T Z by SSYRK in float, added into the double
 * accumulators; Z^T Y and the sums in double. About twice as fast; the
 * statistics carry float rounding (relative 1e-6 or so), enough for ridge
 * and Bayesian fits with a regularisation above that level. */
RFX_API rfx_status rfx_stats_add_f32(rfx_stats *s, const rfx_features *f, rfx_cmatf X,
                                     rfx_cmatf Y);

/* Add every row of a source (one pass; rewinds it first). */
RFX_API rfx_status rfx_stats_add_source(rfx_stats *s, const rfx_features *f, rfx_source *src,
                                        rfx_progress_fn progress, void *user);

/* into += other (disjoint rows), or into -= other (other's rows are a subset
 * of into's: leave-fold-out statistics). */
RFX_API rfx_status rfx_stats_merge(rfx_stats *into, const rfx_stats *other);
RFX_API rfx_status rfx_stats_remove(rfx_stats *into, const rfx_stats *other);

/* A deep copy. */
RFX_API rfx_status rfx_stats_copy(const rfx_stats *s, rfx_stats **out);

/* Z^T Z (D x D, full symmetric), Z^T Y (D x ny), and the column sums of Z
 * and Y, copied into caller buffers (any of them NULL to skip). */
RFX_API rfx_status rfx_stats_get(const rfx_stats *s, double *ztz, double *zty, double *zsum,
                                 double *ysum);

/* D and ny, as created (0 for NULL). */
RFX_API size_t rfx_stats_n_features(const rfx_stats *s);
RFX_API size_t rfx_stats_n_targets(const rfx_stats *s);

/* The shift c the target sums are kept about (ny values into shift, which
 * may be NULL): the (weighted) mean of the first rows added, or the shift
 * of the first statistics merged into empty ones. Returns 1 when set, 0
 * while no row has been added (shift then holds zeros). */
RFX_API int rfx_stats_shift(const rfx_stats *s, double *shift);

/* Statistics as one vector of doubles, for a transport that sums vectors
 * (MPI_Allreduce: rfx/dist.h; a file per worker; a database column).
 * rfx_stats_pack writes rfx_stats_packed_size(s) = 3 + D (D + 1) / 2 +
 * D ny + D + 2 ny doubles (0 for NULL, or when the count overflows size_t):
 *   n (the rows of positive weight), sum w, sum log w,
 *   Z^T W Z: its upper triangle row by row (i <= j),
 *   Z^T W (Y - c) (D x ny), the column sums of W Z (D),
 *   sum w (y - c) and sum w (y - c)^2 per target (ny each),
 * the target sums about the shift c given (ny finite values; NULL: the
 * statistics' own, rfx_stats_shift), re-expressed exactly as
 * rfx_stats_merge does. Packed vectors about one shift add: the elementwise
 * sum of those of disjoint row sets is the packed statistics of their
 * union. rfx_stats_unpack replaces the contents of s (its D and ny fix the
 * layout) with the packed statistics about shift (NULL: zeros), which
 * becomes its shift when they hold rows; RFX_EINVAL for a count that is
 * not a whole number >= 0, a weight sum that is negative or not finite, or
 * a shift that is not finite. */
RFX_API size_t rfx_stats_packed_size(const rfx_stats *s);
RFX_API rfx_status rfx_stats_pack(const rfx_stats *s, const double *shift, double *buf);
RFX_API rfx_status rfx_stats_unpack(rfx_stats *s, const double *buf, const double *shift);

/* ------------------------------------------------------------------------ */
/* Models                                                                    */
/* ------------------------------------------------------------------------ */

/* A fitted model: an optional input scaler, a feature map, weights (D x ny),
 * intercepts (ny), and for Bayesian models the posterior covariance factor;
 * or (RFX_METHOD_PCE) a polynomial chaos expansion with one target and no
 * feature map (rfx_model_from_pce and rfx_model_pce in rfx/pce.h). Every
 * rfx_model_* function takes both kinds. */
typedef struct rfx_model rfx_model;

typedef enum rfx_method {
    RFX_METHOD_RIDGE = 0,
    RFX_METHOD_BAYES = 1,
    RFX_METHOD_SRFE = 2,  /* sparse random features + l1 (rfx/srfe.h)       */
    RFX_METHOD_HARFE = 3, /* sparse random features + hard thresholding     */
    RFX_METHOD_PCE = 4,   /* a polynomial chaos expansion (rfx/pce.h): no
                             feature map; made by rfx_model_from_pce        */
    RFX_METHOD_PROJECTED = 5, /* a surrogate on a learned kernel PCA of the
                             inputs (rfx/projection.h): rfx_projected_fit   */
    RFX_METHOD_CLASSIFY = 6, /* a classifier on random features
                             (rfx/classify.h): logistic or hinge loss      */
    RFX_METHOD_SINKS = 7, /* random kitchen sinks with |alpha|_inf <= C/K
                             (rfx/sinks.h)                                 */
    RFX_METHOD_GREEDY = 8 /* greedy one-term-at-a-time fit of frequencies
                             and weights (rfx/sinks.h)                     */
} rfx_method;

/* The name of a method ("ridge", "bayes", "srfe", "harfe", "pce",
 * "projected", "classify", "sinks", "greedy"), and the reverse look-up
 * (RFX_EINVAL for an unknown name). */
RFX_API const char *rfx_method_name(rfx_method method);
RFX_API rfx_status rfx_method_from_name(const char *name, rfx_method *out);

/* How the regularisation is chosen when it is not given. */
typedef enum rfx_select {
    RFX_SELECT_NONE = 0,  /* use the given lambda                          */
    RFX_SELECT_GCV = 1,   /* generalised cross-validation (Golub, Heath &
                             Wahba 1979) over the lambda grid               */
    RFX_SELECT_KFOLD = 2  /* k-fold cross-validation over the lambda grid;
                             row i belongs to fold i mod k                   */
} rfx_select;

typedef enum rfx_solver {
    RFX_SOLVER_AUTO = 0,   /* dual when n < D and the rows are in memory    */
    RFX_SOLVER_PRIMAL = 1, /* (Z^T Z + lambda I) w = Z^T y, D x D Cholesky  */
    RFX_SOLVER_DUAL = 2    /* (Z Z^T + lambda I) a = y, w = Z^T a, n x n    */
} rfx_solver;

typedef struct rfx_ridge_params {
    double lambda;         /* penalty lambda |w|^2 >= 0, default 1e-3       */
    int fit_intercept;     /* default 1: unpenalised intercept, by centring */
    rfx_select select;     /* default RFX_SELECT_NONE                        */
    size_t n_folds;        /* for RFX_SELECT_KFOLD, >= 2, default 5          */
    const double *lambdas; /* candidate grid, or NULL for the default grid:
                              40 values, log-spaced, 1e-10..1e2 times
                              trace(Z^T Z)/D                                */
    size_t n_lambdas;
    rfx_solver solver;     /* default RFX_SOLVER_AUTO                        */
    int n_threads;         /* 0 = OpenMP default                             */
    const double *sample_weight; /* rfx_ridge_fit only: a weight per row of X
                              (finite, >= 0, not all zero), or NULL (default)
                              for 1 each; see "Row weights" below. The
                              statistics carry their own weights
                              (rfx_stats_add_weighted), so rfx_ridge_solve
                              and rfx_ridge_fit_source refuse one here   */
} rfx_ridge_params;

RFX_API rfx_ridge_params rfx_ridge_params_default(void);

/* Ridge regression from statistics (primal): min |Y - Z W - 1 c^T|^2 +
 * lambda |W|^2. Selection by GCV uses one eigendecomposition of the centred
 * Z^T Z; RFX_SELECT_KFOLD needs per-fold statistics and is only available
 * through rfx_ridge_fit_source / rfx_ridge_fit.
 *
 * Row weights (weighted statistics, or sample_weight in rfx_ridge_fit):
 * min sum_i w_i |y_i - z_i^T W - c|^2 + lambda |W|^2, scikit-learn's Ridge
 * with sample_weight, the intercept by the weighted means. GCV is that of
 * the rows scaled by sqrt(w_i), n RSS_w / (n - df - 1)^2 (without
 * intercept n - df), with n the number of rows of positive weight: the
 * choice does not change when all weights are scaled by one factor, and a
 * row of weight 0 is a row left out. K-fold selection scores the weighted
 * squared error of the held-out rows. The dual form (n < D) takes the
 * weights too: Z and Y centred by the weighted means and scaled by
 * sqrt(w_i), the same minimiser and the same GCV. */
RFX_API rfx_status rfx_ridge_solve(const rfx_features *f, const rfx_stats *s,
                                   const rfx_ridge_params *params, rfx_model **out);

/* Ridge regression by streaming a source: accumulate (one pass, or one
 * accumulator per fold for k-fold selection), then solve. */
RFX_API rfx_status rfx_ridge_fit_source(const rfx_features *f, rfx_source *src,
                                        const rfx_ridge_params *params, rfx_model **out);

/* Ridge regression on in-memory rows X (n x d), Y (n x ny); chooses the dual
 * form when params->solver allows it and n < D. */
RFX_API rfx_status rfx_ridge_fit(const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                                 const rfx_ridge_params *params, rfx_model **out);

/* Weight-space Bayesian linear regression (Rasmussen & Williams 2006, 2.1):
 * prior w ~ N(0, prior_var I), noise N(0, noise_var); posterior precision
 * A = Z^T Z / noise_var + I / prior_var, mean A^-1 Z^T y / noise_var;
 * predictive variance of f(x*) is z*^T A^-1 z* (plus noise_var for y*).
 * Variances <= 0 are fitted by maximising the log marginal likelihood
 * (evidence), with MacKay's fixed-point updates in the eigenbasis of Z^T Z. */
typedef struct rfx_bayes_params {
    double noise_var;  /* sigma_n^2 > 0, or <= 0 to fit; default 0 (fit)    */
    double prior_var;  /* sigma_p^2 > 0, or <= 0 to fit; default 0 (fit)    */
    int fit_intercept; /* default 1: flat prior on the intercept (centring)  */
    size_t max_iter;   /* evidence iterations, default 300                   */
    double tol;        /* relative change of the variances, default 1e-8    */
    int n_threads;
    const double *sample_weight; /* rfx_bayes_fit only: a weight per row of X
                          (finite, >= 0, not all zero): the noise variance of
                          row i is noise_var / w_i. NULL (default): 1 each.
                          rfx_bayes_solve takes the statistics' weights
                          (rfx_stats_add_weighted) and refuses one here   */
} rfx_bayes_params;

RFX_API rfx_bayes_params rfx_bayes_params_default(void);

/* The Bayesian posterior from statistics (one target column).
 *
 * With weighted rows the noise precision of row i is w_i / noise_var: A =
 * Z^T W Z / noise_var + I / prior_var, mean A^-1 Z^T W y / noise_var. The
 * evidence is that of those row variances: n (the rows of positive weight)
 * enters it and the noise update as the number of observations, and it
 * gains 1/2 sum_i log w_i. An integer weight k is the row repeated k times
 * for given variances; fitted variances differ (k repeats are k
 * observations, one weighted row is one more precise observation). The
 * predictive standard deviation of a model with intercept adds the
 * intercept's variance as noise_var / sum w (the model keeps sum w, and
 * its file too: tag 58). */
RFX_API rfx_status rfx_bayes_solve(const rfx_features *f, const rfx_stats *s,
                                   const rfx_bayes_params *params, rfx_model **out);

/* The same from in-memory rows. */
RFX_API rfx_status rfx_bayes_fit(const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                                 const rfx_bayes_params *params, rfx_model **out);

struct rfx_classify_params; /* rfx/classify.h */

/* The whole fit in one call, as the command line does it: optional input
 * standardisation, a feature map, and a method, with the length scale and the
 * regularisation chosen automatically when not given. */
typedef struct rfx_fit_params {
    rfx_method method;         /* default RFX_METHOD_BAYES                   */
    rfx_features_params features; /* kernel, form, D, seed; length_scale <= 0
                                     means "choose" (the default here)       */
    int standardize;           /* default 1: x -> (x - mean) / std per column */
    double lambda;             /* ridge: < 0 means choose by GCV (default -1) */
    double noise_var, prior_var; /* bayes: <= 0 means fit (default 0)       */
    int fit_intercept;         /* default 1                                   */
    size_t select_rows;        /* rows used to choose the length scale, a
                                  seeded subset when n is larger, chosen by
                                  the rows' contents (a hash of each row's
                                  values and targets), so that the same rows
                                  in another order give the same subset;
                                  default 4000                              */
    rfx_progress_fn progress;  /* optional                                   */
    void *progress_user;
    int learn_length_scales;   /* 1: learn one length scale per input (ARD),
                                  see below; bayes and ridge only. Default 0 */
    size_t learn_iterations;   /* particle swarm iterations >= 1, default 30 */
    size_t learn_particles;    /* swarm size; 0 (default) = rfx_pso_params'
                                  default, 10 + floor(2 sqrt(d))            */
    /* RFX_METHOD_CLASSIFY (Y holds the class labels; see below):           */
    const struct rfx_classify_params *classify; /* loss, multi-class scheme,
                                  optimizer, class weights and optimizer
                                  settings (rfx/classify.h); NULL (default)
                                  = rfx_classify_params_default() with the
                                  loss RFX_LOSS_AUTO: the least-squares
                                  classifier, refined where held-out rows
                                  gain (rfx fit --task classify's default) */
    size_t classify_folds;     /* how the length scale and lambda are chosen:
                                  k >= 2 folds (row i in fold i mod k), or 0
                                  (default) one holdout, rows i mod 4 == 3,
                                  i counting the shuffled selection rows   */
    const double *sample_weight; /* a weight per row of X (finite, >= 0, not
                                  all zero), or NULL (default) for 1 each;
                                  see "Row weights" below                  */
} rfx_fit_params;

RFX_API rfx_fit_params rfx_fit_params_default(void);

/* RFX_OK when the parameters are valid for rfx_model_fit whatever the
 * data, else RFX_EINVAL with a message naming the field ("fit.lambda:
 * ..."; "classify.loss: ..." for the classifier's settings as the fit uses
 * them: its fit_intercept and threads replace those of params->classify,
 * and its lambda when one is given): the check rfx_model_fit makes before
 * it looks at the data, for use before any data is read. The feature map's
 * parameters, which depend on the number of inputs, are checked by the
 * fit. RFX_EINVAL for NULL. */
RFX_API rfx_status rfx_fit_params_check(const rfx_fit_params *p);

/* What an automatic fit chose. */
typedef struct rfx_fit_report {
    double length_scale;  /* isotropic length scale, in standardised units  */
    double lambda;        /* ridge penalty (or noise_var / prior_var)       */
    double noise_var, prior_var; /* Bayesian variances (0 for ridge)         */
    double score;         /* log evidence per row (bayes) or the GCV score
                             (ridge); NaN when a given lambda was used   */
    size_t n_candidates;  /* length scales tried                            */
    double learn_score_before; /* with learn_length_scales: the selection   */
    double learn_score_after;  /* score (the meaning and sign of score) on
                                  the selection rows and features at the
                                  starting scales and at the learned ones;
                                  never worse after. NaN without learning   */
    size_t learn_evaluations;  /* candidate scale vectors tried (0 without) */
    /* a classifier of RFX_LOSS_AUTO (rfx/classify.h): */
    size_t refine_holdout; /* rows held out to decide (0: not tried)       */
    size_t refine_steps;   /* Newton steps of the squared hinge kept (0:
                              the least-squares classifier stays)          */
    size_t refine_gained, refine_lost; /* held-out rows the kept steps got
                              right that least squares got wrong, and the
                              reverse (0 and 0 with no step kept)          */
} rfx_fit_report;

/* Fit X (n x d), Y (n x ny; one column for RFX_METHOD_BAYES). report may be
 * NULL.
 *
 * Learned length scales (learn_length_scales = 1): after the isotropic
 * choice (or from the scales given in features: length_scale, gamma or
 * length_scales), the d per-input scales l_i = l0_i exp(u_i) are tuned
 * with u in the box [-3, 4]^d by rfx_pso_minimize (rfx/projection.h;
 * particle 0 starts at u = 0, the others at random, seed features.seed)
 * on the same selection rows and the same at most 512 features as the
 * isotropic choice, with the feature seed fixed so that the objective is
 * deterministic. The objective is minus the log evidence per row (bayes,
 * the variances re-fitted for each candidate) or the GCV score (ridge). A
 * large l_i switches input i off. The final model is fitted on all rows
 * with all features at the learned scales; rfx_model_get_info gives them
 * (features.length_scales), and model files keep them. The candidates are
 * evaluated one after another (each fit threaded as usual), so results do
 * not depend on the number of threads. Cost: learn_particles x
 * (learn_iterations + 1) + 1 fits on the selection rows.
 *
 * RFX_METHOD_SRFE / RFX_METHOD_HARFE go to rfx_srfe_fit (rfx/srfe.h)
 * with its defaults and from params: the seed, threads, n_features (0 =
 * automatic), features.sparsity (when > 0), lambda (when >= 0),
 * standardize and sample_weight; the report then has length_scale = 1 /
 * weight scale, lambda
 * the lasso penalty, score the cross-validated mean squared error.
 * RFX_METHOD_PCE is not fitted here (RFX_EINVAL): rfx_pce_fit, then
 * rfx_model_from_pce (rfx/pce.h); nor are RFX_METHOD_PROJECTED
 * (rfx_projected_fit), RFX_METHOD_SINKS and RFX_METHOD_GREEDY (rfx/sinks.h).
 *
 * RFX_METHOD_CLASSIFY fits a classifier (rfx/classify.h) with the settings
 * of params->classify (without them, the default classifier RFX_LOSS_AUTO:
 * least squares with the length scale and lambda by exact leave-one-out,
 * refined where held-out rows gain; see RFX_LOSS_SQUARED and RFX_LOSS_AUTO
 * there; the selection described next is that of the other losses); Y (n x 1) holds the labels, any
 * finite values with at least two distinct. fit_intercept, the threads of
 * features and, when >= 0, lambda (then > 0) replace those of the classify
 * settings. Inputs are standardised (unless standardize = 0); when the
 * length scale is not given (length_scale <= 0, no gamma or ARD scales)
 * and / or lambda < 0, they are chosen on the selection rows (select_rows,
 * a seeded subset as above) by the validation score over a grid: scales
 * sqrt(d) x 0.05 x 2^i, i = 0..8, and penalties 1e-1, 1e-2, .., 1e-5, each
 * scale's penalties fitted as one path from the largest down, each fit
 * starting from the one before (L-BFGS), with at most 256 features
 * (tolerance at least 1e-4, at most 100 iterations) on the training part
 * and scored on the rest - one holdout (rows i mod 4 == 3 of the selection rows) or
 * classify_folds folds (row i in fold i mod k), the selection rows taken
 * in a seeded random order of their contents (all rows when n <=
 * select_rows, so that rows sorted by class still give folds of every
 * class): the order of a hash of each row's values and label, so the
 * holdout, the folds and the choice do not depend on the order of the rows
 * (identical rows are interchangeable). The score is the mean
 * log-loss -log p(true class) for the logistic loss and the error rate
 * for the hinge losses (ties broken by the mean validation hinge or
 * squared hinge loss); candidates run from the largest scale and penalty
 * down and a full tie keeps the earlier one. While the best penalty is the
 * largest or the smallest of its scale's path, that path is fitted again
 * extended by a decade beyond it (at most twice per side: 1e-7 to 10). The
 * scales are fitted two at a time, one thread each, with the same bits as
 * one after another. The model is then fitted on all rows with all
 * features. The report has the length scale, lambda, the best validation
 * score (NaN when nothing was chosen) and the number of candidates; the
 * variances are 0. Cost: 9 paths of 5 fits, and at most four longer
 * paths of the best scale (6 to 9 fits), each x (1 or k) on the selection
 * rows, then one fit on all rows. Errors as rfx_classify_fit, and
 * RFX_EDIM when Y has more than one column, RFX_EINVAL for lambda = 0 or
 * classify_folds = 1.
 *
 * Row weights (sample_weight): the rows of weight 0 are dropped first, so
 * a row of weight 0 is exactly a row left out; when the others are all 1,
 * the fit is the unweighted one (the same objective). The standardisation uses
 * weighted means and standard deviations; the selection subset, the
 * selection fits and the final fit carry the weights of their rows (ridge
 * and Bayes as rfx_ridge_fit and rfx_bayes_fit with sample_weight; the
 * classifier as rfx_classify_fit with sample_weight, its holdout or fold
 * scores weighted means over the validation rows). The least-squares
 * classifier then goes the way it goes with class weights: L-BFGS, lambda
 * chosen on the holdout, the temperature fitted on weighted rows. SRFE and
 * HARFE pass the weights to rfx_srfe_fit (rfx/srfe.h: "Row weights"). A
 * weight array of the wrong values is RFX_EINVAL naming
 * fit.sample_weight[i] (srfe.sample_weight[i] for SRFE and HARFE). */
RFX_API rfx_status rfx_model_fit(const rfx_fit_params *params, rfx_cmat X, rfx_cmat Y,
                                 rfx_model **out, rfx_fit_report *report);

/* rfx_model_fit from a row-block source (a file too large for memory, read
 * by rfx_reader_source; standard input; a database cursor), for
 * RFX_METHOD_RIDGE, RFX_METHOD_BAYES and RFX_METHOD_CLASSIFY: memory
 * O(D^2 + block + select_rows d), never the rows. The source is rewound for each pass: the
 * column means and the selection rows; the scales (when standardising);
 * the statistics; and one more when a column's magnitude is beyond 1e100
 * or below 1e-100. The
 * scaler and the selection rows are those of rfx_model_fit on the same
 * rows in the same order, bit for bit, so the length scale is the same;
 * the model agrees with rfx_model_fit's to rounding (bit for bit for ridge
 * with blocks of 4096 rows, as rfx_ridge_fit cuts them, when n >= D; for
 * n < D rfx_model_fit solves the dual, this the primal). The other methods
 * keep every row (RFX_EINVAL naming the method); sample_weight must be
 * NULL (the blocks carry no weights). A source that gives other rows on a
 * later pass is RFX_EDIM.
 *
 * A classifier (blocks with one target column, the labels) finds its
 * classes in the first pass, and keeps the rows rfx_model_fit takes: the
 * select_rows selection rows and, for the least-squares classifier (squared
 * loss, optimizer AUTO, no class weights), the rows that score its
 * leave-one-out errors (every row up to 20000, else the 20000 of least
 * content hash: memory 20000 (d + 4) doubles more). Holding every row
 * (n <= 20000), that classifier fits them as rfx_model_fit does (the n x
 * n dual form when n < D) with no statistics pass; else it adds the
 * statistics of its +-1 targets in the statistics pass and solves in
 * closed form. Its model is rfx_model_fit's bit for bit (beyond 20000
 * rows, from blocks of 4096 rows). Other losses run rfx_classify_fit_source over the standardised
 * rows (a pass per L-BFGS evaluation or SGD epoch unless the features fit
 * in classify->cache_bytes). Labels of fewer than 2 or more than
 * RFX_CLASSIFY_MAX_CLASSES classes are RFX_EDIM, as is a label a later
 * pass gives that the first did not. */
RFX_API rfx_status rfx_model_fit_source(const rfx_fit_params *params, rfx_source *src,
                                        rfx_model **out, rfx_fit_report *report);

/* One fit whose rows are split into parts (processes, machines), each
 * holding its own rows in src: rfx_dist_model_fit_source (rfx/dist.h) makes
 * the calls over MPI; a user's own transport may too. Every part calls
 * rfx_model_fit_parts with the same params, and the fit calls the part's
 * functions below in the same order on every part; each must return once
 * every part has made the same call, with the result of all parts:
 *   offsets: this part's rows -> the global index of its first row (the
 *            parts' rows in part order are the global rows) and all rows;
 *   gather:  n doubles from every part, into all (n_parts n, in part
 *            order: part k's at k n);
 *   sum_exact: n 64-bit integers added over every part, in place (the
 *            digits of exact column sums: the scaler is then the same
 *            whatever the split);
 *   max:     n doubles, the largest over every part, in place;
 *   stats:   accumulate src's rows (standardised, first_row their global
 *            index) into the empty s with the map f, and add every part's:
 *            each part's s ends with the statistics of all rows.
 *   sum:     (a classifier fitted by an optimizer only, else may be NULL)
 *            rfx_classify_shard's sum (rfx/classify.h): n doubles added
 *            over every part, the same bits on every part, or a failure
 *            on every part when some part's local status is one.
 *   fail:    (optional) called when this part's fit fails on its own (its
 *            rows cannot be read, a value is not finite), so that the
 *            other parts, waiting in one of the calls above, fail too.
 * Every part then solves and returns the same model (the scaler, the
 * selection rows and the length scale as a single fit on all rows would
 * choose them, the sums exact; the statistics as stats adds them). A part
 * may hold no rows. n_inputs and n_targets: the columns every part's
 * blocks have. */
typedef struct rfx_fit_parts {
    size_t n_parts, part; /* how many parts, and which this is (0-based)    */
    size_t n_inputs, n_targets;
    rfx_status (*offsets)(void *user, uint64_t rows, uint64_t *first_row, uint64_t *total_rows);
    rfx_status (*gather)(void *user, const double *mine, size_t n, double *all);
    rfx_status (*sum_exact)(void *user, int64_t *v, size_t n);
    rfx_status (*max)(void *user, double *v, size_t n);
    rfx_status (*stats)(void *user, rfx_stats *s, const rfx_features *f, rfx_source *src,
                        uint64_t first_row);
    rfx_status (*sum)(void *user, double *values, size_t n, rfx_status local);
    void (*fail)(void *user, rfx_status status);
    void *user;
} rfx_fit_parts;

RFX_API rfx_status rfx_model_fit_parts(const rfx_fit_params *params, rfx_source *src,
                                       const rfx_fit_parts *parts, rfx_model **out,
                                       rfx_fit_report *report);

RFX_API void rfx_model_free(rfx_model *m);

/* Predictions for X (n x d): Yhat (n x ny) and, for Bayesian models, Ystd
 * (n x ny), the predictive standard deviation of the noisy target y*
 * (sqrt(z*^T A^-1 z* + noise_var)). Pass rfx_mat_none() for Ystd when not
 * wanted; asking it of any other model (ridge, srfe, harfe, pce,
 * classify, ...) is RFX_EINVAL. A classifier (RFX_METHOD_CLASSIFY) writes
 * the predicted class label of each row into Yhat (n x 1); its scores and
 * probabilities come from rfx_model_decision and rfx_model_predict_proba
 * (rfx/classify.h). A prediction or standard deviation that comes out inf
 * or NaN (a finite row far outside the training scale) is RFX_ENUMERIC
 * naming the first such row, never a result. */
RFX_API rfx_status rfx_model_predict(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Ystd);

/* The same with the standard deviation of the latent f(x*) (no noise). */
RFX_API rfx_status rfx_model_predict_latent(const rfx_model *m, rfx_cmat X, rfx_mat Yhat,
                                            rfx_mat Fstd);

/* For a PCE model: method, n_inputs, n_targets = 1 and n_train are set,
 * everything else (features included) is zero; rfx_pce_get_info on
 * rfx_model_pce(m) has the rest. A classifier has n_targets = 1 (one
 * predicted label per row) and lambda its penalty; rfx_model_classes and
 * rfx_model_classifier_info (rfx/classify.h) have its classes, loss and
 * score columns. */
typedef struct rfx_model_info {
    rfx_method method;
    rfx_features_params features; /* length_scales points into the model     */
    size_t n_inputs;          /* d                                           */
    size_t n_targets;         /* ny                                          */
    size_t n_train;           /* rows the model was fitted on                */
    int standardized;         /* inputs standardised by a stored scaler      */
    int fit_intercept;
    int has_std;              /* predictive std available                    */
    double lambda;            /* ridge penalty, or noise_var / prior_var     */
    double noise_var, prior_var;
    double log_evidence;      /* Bayesian log marginal likelihood, else 0     */
    int target_transform;     /* rfx_target_transform the model predicts
                                 through (RFX_TARGET_NONE for most)          */
    double target_lambda;     /* its Box-Cox lambda (0 otherwise)            */
} rfx_model_info;

RFX_API rfx_status rfx_model_get_info(const rfx_model *m, rfx_model_info *info);

/* Target transforms. A model may be fitted to z = T(y) instead of y and
 * then predict y = T^-1(f(x)): the median of y when the error of z is
 * symmetric, not its mean. A product-form target (the Sobol G-function)
 * becomes additive under the log, and low-order surrogates fit it far
 * better (rfx_surrogate_fit chooses the transform by cross-validation).
 *   RFX_TARGET_NONE    z = y
 *   RFX_TARGET_LOG     z = log y, y > 0
 *   RFX_TARGET_BOXCOX  z = (y^lambda - 1) / lambda, log y at lambda = 0,
 *                      y > 0 (Box & Cox, JRSS B 26, 1964)
 * The inverse of Box-Cox is (1 + lambda z)^(1/lambda) where 1 + lambda z >
 * 0; below, it is 0 for lambda > 0 and +inf for lambda < 0 (a prediction
 * the model cannot make: rfx_model_predict then fails with RFX_ENUMERIC
 * naming the row). */
typedef enum rfx_target_transform {
    RFX_TARGET_NONE = 0,
    RFX_TARGET_LOG = 1,
    RFX_TARGET_BOXCOX = 2
} rfx_target_transform;

/* "none", "log", "boxcox", and the reverse look-up (also "box-cox"). */
RFX_API const char *rfx_target_transform_name(rfx_target_transform t);
RFX_API rfx_status rfx_target_transform_from_name(const char *name, rfx_target_transform *out);

/* The maximum-likelihood Box-Cox lambda of n >= 2 positive values, not all
 * equal: the maximiser in [-3, 3] of the profile log-likelihood
 *   -(n/2) log(var z(lambda)) + (lambda - 1) sum log y_i
 * (a grid of step 0.1, then golden section in the best cell; scale-free:
 * y and c y give the same lambda). RFX_EINVAL for a value <= 0 or not
 * finite, naming it. */
RFX_API rfx_status rfx_target_boxcox_lambda(const double *y, size_t n, double *lambda);

/* The same with a weight per value, w (n values, finite, >= 0, not all
 * zero; NULL: rfx_target_boxcox_lambda, bit for bit): the maximiser of the
 * weighted profile log-likelihood -(W/2) log(var_w z(lambda)) + (lambda -
 * 1) sum w_i log y_i (W = sum w, var_w the weighted variance), the
 * likelihood of the values repeated by integer weights; scaling every
 * weight by one factor changes nothing, and a value of weight 0 is left
 * out (it may be <= 0). RFX_EINVAL naming "Box-Cox lambda: w[i]" for a bad
 * weight, and fewer than 2 values of positive weight. */
RFX_API rfx_status rfx_target_boxcox_lambda_weighted(const double *y, const double *w, size_t n,
                                                     double *lambda);

/* z = T(y) (RFX_EINVAL, naming the value, for y outside T's domain) and y
 * = T^-1(z), elementwise; z and y may be the same array. */
RFX_API rfx_status rfx_target_forward(rfx_target_transform t, double lambda, const double *y,
                                      size_t n, double *z);
RFX_API rfx_status rfx_target_inverse(rfx_target_transform t, double lambda, const double *z,
                                      size_t n, double *y);

/* Make m, fitted to z = T(y), predict y = T^-1(f(x)). Regression models
 * with one target only (RFX_EINVAL for a classifier or ny > 1). The model
 * then gives no predictive standard deviation, and its closed-form Sobol
 * indices (rfx_sobol_model_exact) are refused: those of y need Monte Carlo
 * (rfx_sobol_model). Saved with the model (tags 53 and 54). */
RFX_API rfx_status rfx_model_set_target_transform(rfx_model *m, rfx_target_transform t,
                                                  double lambda);

/* The feature map of the model (owned by m; NULL for a PCE model). */
RFX_API const rfx_features *rfx_model_features(const rfx_model *m);

/* Weights W (D x ny) and intercepts (ny), owned by m; for a classifier D x
 * K and K, its score columns (K = 1 for two classes, else C). A PCE model
 * has neither (rfx_cmat_none() and NULL): its coefficients belong to its
 * multi-indices, rfx_pce_term(rfx_model_pce(m), k, ...). */
RFX_API rfx_cmat rfx_model_weights(const rfx_model *m);
RFX_API const double *rfx_model_intercepts(const rfx_model *m);

/* The model's schema: the names of its d inputs and of its target, when
 * the data it was fitted on named its columns (rfx fit sets them from the
 * CSV header). Model files keep them (tags 55 and 56, format version 2);
 * a model without them (fitted on unnamed data, or read from an older file)
 * has none, and its inputs are matched by position.
 *
 * rfx_model_set_names sets d input names (input_names[0..d-1]) and an
 * optional target name (NULL for none); input_names NULL removes both.
 * Each name is 1..RFX_MODEL_MAX_NAME bytes, the input names are distinct
 * and the target's differs from them: RFX_EINVAL naming the first that is
 * not. A classifier's target is its label column. The names are copied. */
#define RFX_MODEL_MAX_NAME 4096
RFX_API rfx_status rfx_model_set_names(rfx_model *m, const char *const *input_names,
                                       const char *target_name);

/* The name of input j (NULL without names, or for j >= d) and of the
 * target (NULL without one); owned by m. */
RFX_API const char *rfx_model_input_name(const rfx_model *m, size_t j);
RFX_API const char *rfx_model_target_name(const rfx_model *m);

/* The range of each input in the training rows (rfx fit and the Python
 * estimators set it): lo[j] <= hi[j], finite, d each; both NULL removes it.
 * It is the default input distribution of the Sobol indices of a model
 * fitted on data (rfx sobol, uniform on the box). Kept in model files (tag
 * 57, format version 2). rfx_model_input_box gives 1 and the arrays
 * (owned by m) when the model has a box, else 0. RFX_EINVAL naming the
 * input for a bad range. */
RFX_API rfx_status rfx_model_set_input_box(rfx_model *m, const double *lo, const double *hi);
RFX_API int rfx_model_input_box(const rfx_model *m, const double **lo, const double **hi);

/* Give a model of random features (any method but pce and projected) the
 * input scaler x -> (x - mean) / scale (d values each, finite, scale > 0),
 * replacing any it has: for a map fitted to inputs standardised by the
 * caller (rfx fit's kitchen sinks and greedy fits do this), so that the
 * model takes raw inputs. Saved with the model (tags 16 and 17). mean and
 * scale both NULL remove it. RFX_EINVAL naming the input for a bad value,
 * or for a model without a feature map. */
RFX_API rfx_status rfx_model_set_scaler(rfx_model *m, const double *mean, const double *scale);

/* Which columns of a table (n_cols columns; names: their n_cols names, or
 * NULL when the table has none) are the model's inputs: cols[j] (d
 * entries) is the table column of input j, and *target_col that of the
 * target, or SIZE_MAX when the table has no target column. target is the
 * target column as in rfx_read_params (a name, a 0-based index as text,
 * "-1" for the last), or NULL to take the model's target name.
 *
 * By name, when both the model and the table have names: every input is
 * found by its name, in any order; the target is the column target names,
 * or without it the column of the model's target name if there is one;
 * any other column is unexpected. By position otherwise: n_cols == d
 * columns are the inputs in order (no target); n_cols == d + 1 are the
 * inputs and the target column (target, or the last). Errors, with a
 * message naming the column: RFX_EDIM for a missing input, an unexpected
 * column or a count that is neither d nor d + 1; RFX_EPARSE for a name
 * that two columns share or a target that is not a column. */
RFX_API rfx_status rfx_model_match_columns(const rfx_model *m, const char *const *names,
                                           size_t n_cols, const char *target, size_t *cols,
                                           size_t *target_col);

/* Model files. The format (version 5; version 1 files are version 2 files
 * without tags 55 to 58, version 2 files version 3 files without tag 59 and
 * the custom kernel, version 3 files version 4 files without the
 * phase-free form, version 4 files version 5 files without tag 60 and the
 * lognormal marginal), all integers little-endian:
 *
 *   offset 0   8 bytes  magic "RFXMODL\x1a"
 *          8   u32      format version (1 to 5: see below)
 *         12   u32      header size in bytes (32)
 *         16   u64      payload size P in bytes
 *         24   u32      CRC-32 (zlib) of the payload
 *         28   u32      CRC-32 of bytes 0..27
 *         32   P bytes  payload: a sequence of records, each
 *                         u32 tag, u32 element type, u64 count, data
 *                       element types: 1 f64 (the IEEE-754 bit pattern),
 *                       2 u64, 3 i64, 4 UTF-8 bytes, 5 u32, 6 raw
 *                       bytes (count = bytes); data zero-padded to a
 *                       multiple of 8 bytes.
 *
 * Bytes 0..15 (magic, version, header size) keep their meaning in every
 * future version. Tags, each at most once, in any order (u64 unless
 * marked; scalars have count 1; F = D for COS_BIAS and PHASE_FREE, D/2 for
 * COS_SIN; arrays row-major):
 *    1 method        2 d             3 D             4 ny
 *    5 n_train       6 fit_intercept 7 kernel        8 form
 *    9 nu (f64)     10 seed         11 length_scale (f64, 0 with ARD)
 *   12 ard (0/1)    13 length scales (d f64)   14 frequencies W (F x d f64)
 *   15 phases b (F f64)   16 x_mean, 17 x_scale (d f64 each, both or none)
 *   18 weights (D x ny f64)   19 intercepts (ny f64)   20 lambda (f64)
 *   21 noise_var, 22 prior_var, 23 log_evidence (f64)
 *   24 posterior factor R (D x D f64; Bayesian models only)
 *   25 training feature means (D f64, optional, with 24)
 *   26 creator ("rfx <version>", UTF-8, informational)
 *   27 activation   28 sparsity q   29 weight distribution
 *   30 weight scale (f64)           (27..30 optional: cos, 0, kernel, 1)
 * A polynomial chaos model (method 4) has no feature map: it holds tags 1,
 * 2, 4 (= 1), 5, optionally 26, and all of
 *   31 marginal kinds (d u64: 0 uniform, 1 normal, 2 lognormal in a
 *      version 5 file only)
 *   32 marginal parameters (d x 2 f64: a, b of each input)
 *   33 number of terms T            34 multi-indices (T x d u32)
 *   35 coefficients (T f64)         36 degree   37 PCE method (rfx_pce_method)
 *   38 candidate terms              39 LOO errors (3 f64: mse, relative,
 *                                      corrected; NaN when not fitted)
 * and, in a version 5 file only, optionally
 *   60 span (2d f64: each input's training range, the d lower ends, then
 *      the d upper ends; finite, lower <= upper), beyond which normal and
 *      lognormal inputs are continued linearly (rfx_pce_predict)
 * and no other; feature models hold none of 31..39 and 60.
 * A projected model (method 5, rfx/projection.h) has no feature map of its
 * own: it holds tags 1, 2, 4 (= 1), 5 (m, the kernel's training rows,
 * 2..2^31 - 1), optionally 26 and 16, 17 (the kernel's input scaler, both
 * or none), and all of
 *   40 k (1..m)                     41 gamma (f64, > 0)
 *   42 theta (d f64 in [0, 1], not all zero)
 *   43 the training rows as the kernel sees them (m x d f64, scaled)
 *   44 kernel PCA coefficients (m x k f64)
 *   45 row means of the Gram matrix (m f64)   46 its grand mean (f64)
 *   47 the fit's loss (f64, NaN or >= 0)
 *   48 the surrogate on the k scores (element type 6): a whole model file,
 *      header and payload, of method 0..4 with k inputs and 1
 *      target, checked like a file of its own; never itself projected
 * and no other; other models hold none of 40..48.
 * Every feature model (methods 0..3 and 6..8) may hold
 *   49 structure of the feature map (rfx_structure, 0..4; absent means
 *      0, iid, and is how iid maps are written)
 *   59 the SORF construction (rfx_features_params.structure_version: 2;
 *      with tag 49 = SORF only, in a version 3 or 4 file only; absent
 *      means 1, rfx 0.2's, whose map the loader rebuilds)
 * Tag 7, the kernel, is 4 (RFX_KERNEL_CUSTOM, a user's spectral density)
 * in a version 3 or 4 file only; such a model keeps its frequencies W (tag
 * 14) as every feature model does, and predicts without the sampler.
 * Tag 8, the form, is 2 (RFX_FORM_PHASE_FREE) in a version 4 file only,
 * with phases (tag 15) all 0.
 * A classifier (method 6, rfx/classify.h) is a feature model whose
 * n_targets (tag 4) is its number of score columns K - 1 for two classes,
 * else C - with weights D x K and K intercepts, and which holds all of
 *   50 classes (C f64: finite, strictly increasing, 2 <= C <= 65536)
 *   51 loss (rfx_loss, 0..2)
 *   52 multi-class scheme (rfx_multiclass, 0..1; softmax only with the
 *      logistic loss)
 * and no other model holds any of 50..52. Any regression model (not a
 * classifier) may hold
 *   53 target transform (rfx_target_transform, 1..2; absent means none,
 *      and is how none is written)
 *   54 its Box-Cox lambda (f64, finite; with 53 = 2 only, and then
 *      required).
 * Any model may hold, in a version 2 to 5 file only (and never the
 * surrogate inside a projected model):
 *   55 input names (element type 6): d names, each followed by a NUL
 *      byte, each 1..RFX_MODEL_MAX_NAME bytes, no two equal
 *   56 target name (UTF-8, 1..RFX_MODEL_MAX_NAME bytes, no NUL, none of
 *      the input names; with 55 only)
 *   57 input box (2d f64: the d lower ends, then the d upper ends; finite,
 *      lower <= upper)
 *   58 weight sum (f64, finite, > 0; a Bayesian model with intercept fitted
 *      on weighted rows only: the intercept's variance is noise_var / it).
 * A polynomial chaos model with a lognormal input or a span is written as
 * version 5; a model with a phase-free map as version 4; else one with a
 * custom kernel or a SORF map of construction 2 as version 3; else one
 * with names, a box or a weight sum as version 2, one without as version
 * 1, which older readers take too.
 * Kitchen-sinks (method 7) and
 * greedy (method 8) models are feature models stored as ridge models are
 * (no posterior).
 * Unknown tags, missing required tags and duplicates make a file corrupt.
 *
 * The loader checks the magic, refuses a newer version by name, verifies
 * both CRCs, and checks every count against the bytes that remain and
 * against the shapes the sizes imply before it allocates. Errors are
 * RFX_EFORMAT (RFX_EVERSION for a newer file, RFX_EIO when the file cannot
 * be read or written) with a message naming the file, or "buffer" (the
 * path's control bytes escaped as \xHH). The
 * weights and frequencies are stored, not re-derived from the seed, so a
 * loaded model predicts bitwise identically to the saved one. Saving a
 * regular file writes a temporary file beside it (path.tmp.PID.N), syncs
 * it and renames it over path, so path is never left half-written; the
 * file keeps its mode (a new one: 0666 less the umask), a symbolic link
 * keeps its link, and a device or FIFO (/dev/null, a pipe) is written in
 * place with its write errors reported. Saving (to a file or a buffer)
 * first makes the whole file in memory and runs the loader's checks on
 * it, so rfx never writes a file it would refuse: a model the loader
 * would not take (a weight, scale or variance that is not finite) is
 * RFX_ENUMERIC with the loader's reason, and nothing is written. The
 * memory needed is the file's size plus a loaded copy of the model. */
RFX_API rfx_status rfx_model_save(const rfx_model *m, const char *path);
RFX_API rfx_status rfx_model_load(const char *path, rfx_model **out);

/* The same to and from memory. *buf is allocated with malloc; release it
 * with rfx_buffer_free. */
RFX_API rfx_status rfx_model_save_buffer(const rfx_model *m, void **buf, size_t *len);
RFX_API rfx_status rfx_model_load_buffer(const void *buf, size_t len, rfx_model **out);
RFX_API void rfx_buffer_free(void *buf);

#ifdef __cplusplus
}
#endif

#endif /* RFX_MODEL_H */
