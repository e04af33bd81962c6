/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/srfe.h - sparse random feature expansions (SRFE) for surrogate
 * models from few samples (Hashemi, Schaeffer, Shi, Topcu, Tran & Ward,
 * "Generalization bounds for sparse random feature expansions",
 * arXiv:2103.03191, 2021; HARFE: Saha, Schaeffer & Tran 2022). Part of the
 * public API (rfx.h includes it).
 *
 * The model is f(x) = sum_j c_j phi(w_j . x + b_j) + c_0 with q-sparse
 * random w_j (each feature a function of q inputs: an order-q expansion),
 * b_j ~ U(0, 2 pi) (features.form cos-bias, the default; b_j = 0 in the
 * phase-free form, whose sin and tanh features are odd functions; cos-sin
 * is refused), phi = sin by default, and a sparse c:
 *  1. inputs standardised on the training rows (the scaler is stored);
 *  2. the m x N feature matrix A of the training rows, its columns scaled
 *     to unit norm (Algorithm 2 of the talk the project started from);
 *  3. c by an l1 program (rfx/l1.h): the lasso, or basis pursuit denoising
 *     min |c|_1 s.t. |A c - y|_2 <= eta sqrt(m) (SRFE-S) - the same
 *     solution family, the BPDN solution for eta is the lasso solution
 *     whose training RMS residual is eta - or hard thresholding pursuit
 *     with s terms (HARFE); the column scales are folded into the weights.
 * What is not given is chosen by a selection score: by default generalised
 * cross-validation, GCV = (|r|^2 / m) / (1 - df / m)^2 with df the nonzero
 * coefficients plus the intercept (the lasso's degrees of freedom: Zou,
 * Hastie & Tibshirani 2007), which needs one lasso path per candidate on
 * all rows; or k-fold cross-validation (rows i mod k), k + 1 paths. Chosen
 * are the weight scale from a small grid, q, N and the lasso lambda along
 * its path (for SRFE-S the equivalent eta is reported). The candidates
 * are screened with N_s = N/4 features (at most 3000, or N/8 when that is
 * more; at least 1000) and half the lambda grid: the scales at q = 2, then
 * q = 1 and 3 at the best scale (a coordinate search); when the best
 * scale is an end of the grid {0.5, 1, 2}, the grid is widened past it at
 * the best q, two scales a round (4 and 8, then 16 and 32, ...; 0.25 and
 * 0.125 downwards), for up to widen_rounds rounds (default 3: from 1/128
 * to 128) while the outermost scores best; the best pair is
 * then fitted with all N features at its scale and, when the scale is
 * chosen, at 1.5 times it (the best scale grows with N, so a screen with
 * fewer features prefers too small a one); the best score of these and of
 * the screen's fit is kept (N is then chosen from {N_s, N}). The
 * candidates of a stage are fitted concurrently, one per thread (each
 * needs its m x N matrix), and the result is the same for any thread
 * count. A GCV lasso path stops 5 grid points after its score's minimum. On
 * the G-function (d = 20, m = 800) GCV and 5-fold CV chose the same
 * lambda.
 *
 * Row weights (sample_weight, w_i >= 0): the rows of weight 0 are dropped
 * first, and m counts the rows of positive weight everywhere (the default
 * N = 30 m, HTP's default s, the folds, GCV's m). With v_i = m w_i / sum w
 * (relative weights: scaling every weight by one factor changes nothing,
 * and weights that are all equal are no weights, bit for bit) the inputs
 * are standardised by weighted means and standard deviations, the columns
 * of A scaled to unit weighted norm, sum_i v_i a_ij^2 = 1, and the l1
 * program is rfx_l1_fit's with these row weights: the lasso minimises
 * (1 / (2 sum w)) sum_i w_i r_i^2 + lambda |c|_1. GCV is that of the
 * weighted residuals, (sum_i w_i r_i^2 / sum w) / (1 - df / m)^2; k-fold
 * scores are weighted mean squared errors over the held-out rows; eta (and
 * the report's eta) is the weighted training RMS residual. An integer
 * weight k is then the row repeated k times up to the lambda: the
 * repeated rows' unit columns are sqrt(m / sum w) times the weighted ones,
 * so the fit with weights and lambda is the fit of the repeated rows with
 * lambda sqrt(m / sum w) (the same features, scale, q and N given; HTP's
 * ridge maps to ridge m / sum w).
 */
#ifndef RFX_SRFE_H
#define RFX_SRFE_H

#include "rfx/core.h"
#include "rfx/features.h"
#include "rfx/model.h"
#include "rfx/l1.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rfx_srfe_params {
    rfx_features_params features; /* defaults here: sparsity q = 0 (choose
                                     from {1, 2, 3}, see below), activation
                                     sin, weights normal, weight_scale 0
                                     (choose from {0.5, 1, 2},
                                     widened past an end), n_features
                                     N = 0 (choose: 30 m within [1000,
                                     30000], or the screen's N_s when it
                                     scores better), seed 0. A dense map
                                     is sparsity = d.                      */
    rfx_l1_method method;   /* RFX_L1_METHOD_LASSO (default): lambda chosen
                               (see select) unless lambda > 0; RFX_L1_METHOD_BPDN: eta
                               given (> 0), else as LASSO; RFX_L1_METHOD_HTP
                               (HARFE): sparsity s given, or 0 for
                               min(m / 2, N) / 2                           */
    double lambda;          /* lasso penalty (scikit-learn's alpha), or <= 0
                               to choose (see select); default 0        */
    double eta;             /* BPDN: the training RMS residual bound; default 0 */
    size_t sparsity;        /* HTP: s, default 0                            */
    int standardize;        /* default 1                                    */
    rfx_select select;      /* how lambda and the scale are chosen:
                               RFX_SELECT_GCV (default) or RFX_SELECT_KFOLD */
    size_t n_folds;         /* RFX_SELECT_KFOLD: folds, default 5           */
    size_t n_lambdas;       /* grid of the CV path, default 50              */
    double lambda_min_ratio; /* the grid's smallest lambda over lambda_max,
                               in (0, 1); default 1e-3 (with N >> m the best
                               held-out error is often below 1e-2)         */
    rfx_progress_fn progress;
    void *progress_user;
    const double *sample_weight; /* a weight per row of X (finite, >= 0, not
                               all zero), or NULL (default) for 1 each; see
                               "Row weights" below                         */
    size_t widen_rounds;    /* with the weight scale chosen: at most this
                               many rounds widening the grid past an end
                               that scores best (see above), <= 10;
                               default 3, 0: the grid {0.5, 1, 2} alone  */
} rfx_srfe_params;

RFX_API rfx_srfe_params rfx_srfe_params_default(void);

/* RFX_OK when the parameters are valid for rfx_srfe_fit whatever the data,
 * else RFX_EINVAL with a message naming the field ("srfe.lambda_min_ratio:
 * ..."; "features.activation: ..." for the feature map's fields, with
 * weight_scale <= 0 and n_features 0 standing for the chosen ones): the
 * check rfx_srfe_fit makes first, for use before any data is read. What
 * depends on the data is checked by the fit: n_folds at most m (with
 * k-fold selection), and the feature map against the d inputs
 * (length_scales, sparsity q <= d, the structure). RFX_EINVAL for NULL. */
RFX_API rfx_status rfx_srfe_params_check(const rfx_srfe_params *p);

/* What the fit chose and did. */
typedef struct rfx_srfe_report {
    size_t n_features;      /* N used                                        */
    double weight_scale;    /* the weight scale used (chosen or given)       */
    double lambda;          /* the lasso lambda (chosen or given; the BPDN
                               multiplier; NaN for HTP)                      */
    double eta;             /* training RMS residual |y - f|_2 / sqrt(m)     */
    double cv_mse;          /* the chosen candidate's selection score: GCV or
                               the k-fold mean squared error (both estimate
                               the prediction MSE)                           */
    size_t n_nonzero;       /* nonzero coefficients                          */
    size_t n_candidates;    /* (weight scale, q) pairs screened              */
    size_t sparsity;        /* the q used (chosen or given)                  */
} rfx_srfe_report;

/* Fit X (m x d), Y (m x 1). The model (method RFX_METHOD_SRFE, or
 * RFX_METHOD_HARFE for HTP) predicts with rfx_model_predict and saves like
 * any other. report may be NULL. The errors of rfx_srfe_params_check come
 * first, before the data is looked at. */
RFX_API rfx_status rfx_srfe_fit(const rfx_srfe_params *params, rfx_cmat X, rfx_cmat Y,
                                rfx_model **out, rfx_srfe_report *report);

#ifdef __cplusplus
}
#endif

#endif /* RFX_SRFE_H */
