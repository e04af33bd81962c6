/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/auto.h - the automatic surrogate: the regression methods, each on
 * the target as it is and under the log and Box-Cox transforms, compared
 * by k-fold cross-validation, and the best refitted on all rows. Part of
 * the public API (rfx.h includes it).
 *
 * The candidates are (method, transform) pairs. Every candidate is fitted
 * with its own defaults (its automatic choices of scales, penalties,
 * degrees: rfx_model_fit, rfx_srfe_fit, rfx_pce_fit, rfx_projected_fit) on
 * the training part of each fold and predicts the held-out rows, back in
 * the units of y. Its score is the relative cross-validated error
 *   sqrt(sum (f_i - y_i)^2 / sum (y_i - mean y)^2)
 * over the held-out rows of the folds it ran. The folds are rows in a
 * seeded random order of their contents, row perm[i] in fold i mod k: the
 * order of a seeded hash of each row's values and target, so the same rows
 * in another order make the same folds (identical rows are
 * interchangeable).
 *
 * The final fit on all rows is the chosen candidate's own fit, except for
 * srfe and harfe, which start from what their fit on the first fold
 * chose: at its q, the full feature map at its weight scale s and at 1.5 s,
 * the latter kept unless its selection score is worse (the last stage of
 * rfx_srfe_fit's search, without the screens that found s; on the
 * G-function, d = 20, m = 800, the final fit took 1.5 s instead of 2.7 s
 * and gave the same model).
 *
 * Racing: after each round of folds, a candidate whose score over the
 * folds done is more than race_factor times the best one's stops there
 * (it cannot plausibly win; race_factor = INFINITY runs every candidate
 * on every fold). The chosen candidate is the one of least score over the
 * folds that every remaining candidate ran; when racing leaves one
 * candidate, it is chosen without running the other folds. With a time
 * budget, no fold
 * starts when the elapsed time plus that candidate's last fold time plus
 * the final fit would pass the budget: the choice then depends on the
 * machine's speed, which without a budget (the default) it does not - the
 * result depends only on the data, the parameters and the seed.
 *
 * Threads: without a budget, the candidates of a round are fitted side by
 * side, one thread each (the costliest first), on n_threads threads; each
 * fit gives the same bits on one thread as on many, so the result is that
 * of the fits one after another. With a budget they run one after another
 * (the budget's cut depends on the order), each on n_threads threads.
 *
 * Box-Cox and the log take y > 0 only; with any y <= 0 they are not
 * candidates. By default Box-Cox is a candidate only when its maximum-
 * likelihood lambda on all targets is at least 0.25 from 0 (the log) and
 * from 1 (no transform); asked for in transforms, it always is. Its lambda
 * is estimated on the training part of each fold, and on all rows for the
 * final model.
 *
 * Row weights (sample_weight, w_i >= 0): the rows of weight 0 are dropped
 * first (n and the folds count the rows of positive weight; given folds
 * lose those rows too), and weights that are all equal are no weights, bit
 * for bit. Every candidate is fitted with the weights of its rows
 * (rfx_model_fit, rfx_srfe_fit, rfx_pce_fit, rfx_projected_fit, each with
 * its own meaning of them), Box-Cox's lambda is the weighted maximum-
 * likelihood one (rfx_target_boxcox_lambda_weighted), and the score is
 * weighted: sqrt(sum w_i (f_i - y_i)^2 / sum w_i (y_i - ybar_w)^2) over the
 * held-out rows. Scaling every weight by one factor changes nothing.
 */
#ifndef RFX_AUTO_H
#define RFX_AUTO_H

#include "rfx/core.h"
#include "rfx/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Candidate sets are bit masks: bit (1u << rfx_method) for a method, bit
 * (1u << rfx_target_transform) for a transform. */
#define RFX_AUTO_METHOD(m) (1u << (m))
#define RFX_AUTO_TRANSFORM(t) (1u << (t))

/* The default methods: bayes, srfe, harfe, pce under each transform (ridge
 * is bayes' point estimate); and with d >= 9 inputs also projected on the
 * target as it is (a projection onto its largest default dimension, 8,
 * reduces only more inputs; it costs tens of fits, so it is not tried
 * under the transforms, ask for them in methods; and its first fold is fitted
 * after the others', only when their best relative error there exceeds 0.1,
 * else its outcome is RFX_AUTO_NOT_NEEDED). */
#define RFX_AUTO_DEFAULT_METHODS                                                              \
    (RFX_AUTO_METHOD(RFX_METHOD_BAYES) | RFX_AUTO_METHOD(RFX_METHOD_SRFE) |                   \
     RFX_AUTO_METHOD(RFX_METHOD_HARFE) | RFX_AUTO_METHOD(RFX_METHOD_PCE))

typedef struct rfx_auto_params {
    unsigned methods;      /* candidate methods: ridge, bayes, srfe, harfe,
                              pce, projected; 0 (default) =
                              RFX_AUTO_DEFAULT_METHODS, and projected (no
                              transform) when d >= 9                       */
    unsigned transforms;   /* candidate transforms; 0 (default) = none, log
                              and Box-Cox as described above               */
    size_t n_folds;        /* k >= 2, default 5                            */
    double race_factor;    /* > 1, default 1.5; INFINITY: no racing        */
    double budget;         /* seconds of wall time for the whole fit, > 0;
                              0 (default): no budget                        */
    uint64_t seed;         /* the folds and every candidate's seed; 0       */
    const size_t *folds;   /* optional: row i's fold, n values in 0..k-1,
                              every fold used; NULL (default): the rows in
                              a random order of seed, row perm[i] in fold
                              i mod k                                      */
    int n_threads;         /* threads of each fit; 0 = OpenMP default      */
    rfx_progress_fn progress; /* optional: stage "auto", fraction of the
                              candidate fits planned                        */
    void *progress_user;
    const double *sample_weight; /* a weight per row (finite, >= 0, not all
                              zero), or NULL (default) for 1 each; see "Row
                              weights" above                               */
} rfx_auto_params;

RFX_API rfx_auto_params rfx_auto_params_default(void);

/* RFX_OK when the parameters are valid whatever the data, else RFX_EINVAL
 * naming the field ("auto.n_folds: ..."). */
RFX_API rfx_status rfx_auto_params_check(const rfx_auto_params *p);

#define RFX_AUTO_MAX_CANDIDATES 18

/* How a candidate ended. */
typedef enum rfx_auto_outcome {
    RFX_AUTO_RAN_ALL = 0,  /* every fold                                   */
    RFX_AUTO_RACED = 1,    /* stopped: far behind the best                 */
    RFX_AUTO_BUDGET = 2,   /* stopped: the time budget                     */
    RFX_AUTO_FAILED = 3,   /* a fit or prediction failed (status)          */
    RFX_AUTO_ALONE = 4,    /* the last one left by racing: chosen, its
                              other folds not run                         */
    RFX_AUTO_NOT_NEEDED = 5 /* the default projected candidate, not tried:
                              the others' best first-fold relative error
                              was at most 0.1                             */
} rfx_auto_outcome;

typedef struct rfx_auto_candidate {
    rfx_method method;
    rfx_target_transform transform;
    double lambda;         /* Box-Cox lambda on all rows (0 otherwise)     */
    size_t folds;          /* folds run                                    */
    double cv_error;       /* the score over those folds; NaN with none    */
    double seconds;        /* wall time of its folds                       */
    rfx_auto_outcome outcome;
    rfx_status status;     /* RFX_OK, or why it failed                     */
} rfx_auto_candidate;

typedef struct rfx_auto_report {
    size_t n_candidates;
    rfx_auto_candidate candidates[RFX_AUTO_MAX_CANDIDATES];
    size_t chosen;         /* index of the refitted candidate              */
    size_t compared_folds; /* the folds the choice compared                */
    double seconds_cv;     /* wall time of the cross-validation            */
    double seconds_final;  /* and of the final fit                         */
} rfx_auto_report;

/* Fit X (n x d, finite) and y (n finite values), n >= 2 k. The model
 * predicts y (with the chosen transform undone) and saves like any other.
 * report may be NULL; or out may be NULL, and then only the comparison
 * runs, with no final fit on all rows: report says what was chosen
 * (seconds_final 0), for a caller that fits the winner its own way. Errors: RFX_EINVAL (parameters, no candidate left),
 * RFX_EDIM, RFX_EPARSE (non-finite data); when every candidate fails, the
 * first failure's status and message. */
RFX_API rfx_status rfx_auto_fit(const rfx_auto_params *params, rfx_cmat X, const double *y,
                                rfx_model **out, rfx_auto_report *report);

#ifdef __cplusplus
}
#endif

#endif /* RFX_AUTO_H */
