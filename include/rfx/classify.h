/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/classify.h - classification on random features: linear classifiers
 * on z(x), i.e. approximate kernel machines (kernel logistic regression,
 * kernel SVMs) at linear cost (Rahimi & Recht 2007). Part of the public
 * API (rfx.h includes it).
 *
 * Labels are any finite doubles; the classes are their sorted distinct
 * values c_0 < c_1 < ... < c_{C-1}, C >= 2. With features z_i = z(x_i)
 * (D values) the model holds weights W (D x K) and intercepts b (K):
 *  - two classes: K = 1 column, score s = z.w + b, y = +1 for c_1 and -1
 *    for c_0; the prediction is c_1 when s > 0, else c_0 (scikit-learn's
 *    convention: the larger label is the positive class);
 *  - C > 2 classes: K = C columns, scores s_k = z.w_k + b_k, prediction the
 *    class of the largest score (the first on ties), either
 *      one-vs-rest (OVR): C binary problems, class k against the others,
 *        y_ik = +1 when row i has class k, else -1; or
 *      softmax (multinomial logistic regression): p_k = exp(s_k) /
 *        sum_j exp(s_j), loss -log p_{y_i} (logistic loss only).
 *    For two classes both schemes are the one-column binary model.
 *
 * The objective, per binary column (OVR: the sum over the columns) or for
 * the softmax model:
 *
 *     J(W, b) = (1/n) sum_i c_{y_i} loss_i + (lambda/2) |W|_F^2
 *
 * with the intercepts unpenalised and c_k the weight of class k (1, given,
 * or "balanced": c_k = n / (C n_k), scikit-learn's class_weight=
 * "balanced", n_k the rows of class k). Row weights s_i (sample_weight,
 * rfx_classify_fit only) multiply the loss of each row on top of the class
 * weights: J = (1/n) sum_i s_i c_{y_i} loss_i + (lambda/2) |W|_F^2 with n
 * the number of rows of positive weight (a row of weight 0 is a row left
 * out), and "balanced" counts n_k and n as sums of the rows' weights.
 * scikit-learn's LogisticRegression(C).fit(Z, y, sample_weight=s) is then
 * lambda = 1 / (C n) as below. With the margin t = y s:
 *   LOGISTIC        loss = log(1 + exp(-t)), evaluated as log1p(exp(-|t|))
 *                   + max(-t, 0) (never overflows); softmax: log-sum-exp
 *                   shifted by the largest score
 *   HINGE           loss = max(0, 1 - t)                  (the L1-SVM)
 *   SQUARED_HINGE   loss = max(0, 1 - t)^2                (the L2-SVM)
 *   SQUARED         loss = (1 - t)^2 = (y - s)^2          (least squares:
 *                   scikit-learn's RidgeClassifier(alpha = n lambda / 2)
 *                   on the same features; one-vs-rest only). rfx_model_fit
 *                   solves it in closed form and chooses lambda by the
 *                   exact leave-one-out error of every lambda at once (one
 *                   D x D eigendecomposition), and its probabilities are
 *                   softmax(s / T) (two classes: sigmoid(s / T)) with the
 *                   temperature T fitted on leave-one-out scores
 *   AUTO            (rfx_model_fit only; the `rfx fit --task classify`
 *                   default) the least-squares classifier of SQUARED,
 *                   then up to 3 Newton steps of the squared hinge at the
 *                   same lambda (Keerthi & DeCoste, JMLR 6, 2005), kept
 *                   only when they gain significantly on held-out rows:
 *                   the fit without a fifth of the rows (in the seeded
 *                   order of their contents) is scored on that fifth after
 *                   0, 1, 2 and 3 steps, and the step count with the
 *                   largest gain over least squares among those McNemar's
 *                   test finds significant (one-sided 5 %: b - c >
 *                   1.645 sqrt(b + c), b rows gained, c lost) is taken on
 *                   all rows. The model then has the SQUARED_HINGE loss
 *                   and the temperature of that step's held-out scores
 *                   (rfx_fit_report.refine_*); else it is the SQUARED one.
 *                   Least squares pulls every score to +-1, so rows far on
 *                   the right side pull the boundary; the hinge's steps
 *                   let them go, which pays on large sets with many
 *                   classes. With fewer rows than features the steps are
 *                   exact solves in the dual form (n x n Gram matrix).
 *                   Rows whose features would take more than 512 MiB
 *                   (n D doubles), more than 20000 rows (the most a fit
 *                   from a source holds), and a distributed fit are not
 *                   refined.
 * scikit-learn's LogisticRegression(C) and LinearSVC(C) minimise
 * C sum loss + |w|^2 / 2, the same minimiser as lambda = 1 / (C n) (their
 * intercept aside: LinearSVC penalises it, here it is free).
 *
 * Optimizers:
 *   LBFGS    limited-memory BFGS (Nocedal & Wright, Numerical Optimization,
 *            2nd ed., Algorithm 7.5, memory 10) with a line search for the
 *            strong Wolfe conditions (c1 = 1e-4, c2 = 0.9; their
 *            Algorithms 3.5 and 3.6 with cubic interpolation); one
 *            objective and gradient evaluation is one pass over the rows.
 *            Stops when |grad J|_inf <= tol max(1, |grad J at 0|_inf).
 *            For the logistic, softmax, squared hinge and squared
 *            losses (the hinge loss is not differentiable).
 *   DUAL_CD  dual coordinate descent (Hsieh, Chang, Lin, Keerthi &
 *            Sundararajan, "A dual coordinate descent method for large-
 *            scale linear SVM", ICML 2008, Algorithm 1 without shrinking)
 *            for the hinge and squared hinge losses: with C_i = c_{y_i} /
 *            (n lambda) the dual min_a a^T Q a / 2 - sum_i e_i a_i, Q_ij =
 *            y_i y_j z_i.z_j (+ 1 / (2 C_i) on the diagonal for the squared
 *            hinge), 0 <= a_i <= C_i (hinge) or a_i >= 0, is minimised one
 *            a_i at a time in a seeded random order per epoch, keeping
 *            w = sum_i a_i y_i z_i; an epoch ends the solve when the
 *            projected gradients span at most tol. Each column (OVR) is
 *            solved on its own, the columns in parallel. The unpenalised
 *            intercept b enters as margins e_i = 1 - y_i b: the optimal
 *            value V(b) is convex with derivative -lambda sum_i a_i y_i,
 *            whose root is bracketed (b = +-1, 2, 4, ..) and then found by
 *            regula falsi with the Illinois modification, each solve
 *            warm-started and only as exact as the bracket is narrow
 *            (span max(tol, width / 100)), until the bracket is narrower
 *            than 1e-12 max(1, |b|) or |dJ/db| <= tol mean(c_i); a last
 *            solve to tol follows. Without intercept e_i = 1. max_iter
 *            bounds the epochs of each column over all its solves.
 *            Needs the n x D features cached (cache_bytes).
 *   SGD      averaged stochastic gradient descent (Polyak & Juditsky 1992;
 *            the schedule of Bottou, "Stochastic gradient descent tricks",
 *            2012): mini-batches of batch_size rows in a seeded random
 *            order (a permutation of all rows per epoch; from a source,
 *            of each block's rows), the step
 *                eta_t = eta_0 / (1 + lambda eta_0 t)^(3/4),  t = 0, 1, ...
 *            on the mini-batch gradient (the hinge's subgradient -y z for
 *            margins < 1), and the model the running average of the
 *            iterates from the second epoch on (of all of them with one
 *            epoch). eta_0 = learning_rate, or when 0 the inverse of a
 *            curvature bound: 1 / (k (1 + max_i |z_i|^2)) over the first
 *            mini-batch, k = 1/4 (logistic), 1/2 (softmax), 2 (squared
 *            hinge), 1 (hinge). Runs exactly `epochs` epochs.
 *   AUTO     LBFGS for the logistic, softmax, squared hinge and squared
 *            losses (rfx_model_fit: the closed form for the squared loss
 *            without class weights);
 *            for the hinge loss DUAL_CD when the features are cached,
 *            else SGD.
 *
 * Features: the n x D matrix Z is cached in memory when 8 n D bytes fit in
 * cache_bytes, else recomputed in blocks on every pass (each L-BFGS
 * evaluation, each SGD epoch). Passes run over fixed blocks of rows (all
 * rows in memory, or the rows of a source block, split into chunks of
 * 64 floor(c / 64) rows, c = min(4096, max(64, 2^23 / D)), at most 64 MiB
 * of features):
 * the features of each tile of 64 rows, the scores of each tile, the loss
 * of each tile and then the sum over the tiles in order, and Z^T R by
 * fixed slices of 64 features - so results are bitwise the same for any
 * n_threads, and with or without the cache. SGD featurises each row on
 * its own (a row's features then do not depend on its batch), in
 * parallel over the rows of a window, and updates on the calling thread.
 */
#ifndef RFX_CLASSIFY_H
#define RFX_CLASSIFY_H

#include "rfx/core.h"
#include "rfx/features.h"
#include "rfx/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The loss of a classifier (see the top of this header). */
typedef enum rfx_loss {
    RFX_LOSS_LOGISTIC = 0,     /* log(1 + exp(-t))                          */
    RFX_LOSS_HINGE = 1,        /* max(0, 1 - t)                             */
    RFX_LOSS_SQUARED_HINGE = 2, /* max(0, 1 - t)^2                          */
    RFX_LOSS_SQUARED = 3,      /* (1 - t)^2 = (y - s)^2: least squares      */
    RFX_LOSS_AUTO = 4          /* rfx_model_fit: least squares, refined by
                                  the squared hinge where held-out rows
                                  show a gain (see above)                  */
} rfx_loss;

/* How more than two classes are handled. */
typedef enum rfx_multiclass {
    RFX_MULTICLASS_OVR = 0,    /* one-vs-rest: C binary columns             */
    RFX_MULTICLASS_SOFTMAX = 1 /* multinomial logistic: logistic loss only  */
} rfx_multiclass;

typedef enum rfx_optimizer {
    RFX_OPTIMIZER_AUTO = 0,
    RFX_OPTIMIZER_LBFGS = 1,
    RFX_OPTIMIZER_DUAL_CD = 2,
    RFX_OPTIMIZER_SGD = 3
} rfx_optimizer;

/* Names ("logistic", "hinge", "squared-hinge", "squared"; "ovr", "softmax"; "auto",
 * "lbfgs", "dual-cd", "sgd") and the reverse look-ups (RFX_EINVAL for an
 * unknown name, listing the known ones). */
RFX_API const char *rfx_loss_name(rfx_loss loss);
RFX_API rfx_status rfx_loss_from_name(const char *name, rfx_loss *out);
RFX_API const char *rfx_multiclass_name(rfx_multiclass mc);
RFX_API rfx_status rfx_multiclass_from_name(const char *name, rfx_multiclass *out);
RFX_API const char *rfx_optimizer_name(rfx_optimizer opt);
RFX_API rfx_status rfx_optimizer_from_name(const char *name, rfx_optimizer *out);

/* At most this many classes (distinct labels). */
#define RFX_CLASSIFY_MAX_CLASSES 65536

/* The classes of n labels labels[i * stride]: their distinct values,
 * sorted increasing, in *classes (allocated; release it with
 * rfx_buffer_free; NULL when n is 0) and their count in *k. Any count is
 * returned: a fit refuses fewer than 2 classes or more than
 * RFX_CLASSIFY_MAX_CLASSES. The fits find their classes with it. Errors:
 * RFX_EINVAL for NULL arguments; RFX_EPARSE for a NaN / Inf label (its row
 * named); RFX_ENOMEM. */
RFX_API rfx_status rfx_classes_find(const double *labels, size_t n, size_t stride,
                                    double **classes, size_t *k);

/* Per-class weights from label:weight pairs (as rfx_classify_params's
 * class_weights): weights[k] (C values) is the weight of the pair whose
 * label is classes[k] (C sorted classes, as rfx_classes_find gives), 1 for
 * a class no pair names. Errors, RFX_EINVAL, with weights untouched: NULL
 * arguments; "pair J: the label must be finite and the weight a finite
 * number >= 0"; "label L is given twice"; a label not among the classes,
 * "L is not a label of the target 'TARGET' (its classes: c1 c2 ...)" (at
 * most 20 classes listed, then "... (C in all)"; without "'TARGET'" when
 * target is NULL). */
RFX_API rfx_status rfx_class_weights_map(const double *classes, size_t C, const double *labels,
                                         const double *label_weights, size_t n_pairs,
                                         const char *target, double *weights);

typedef struct rfx_classify_params {
    rfx_loss loss;             /* default RFX_LOSS_LOGISTIC (rfx fit's default
                                  is RFX_LOSS_AUTO)                        */
    rfx_multiclass multiclass; /* default RFX_MULTICLASS_OVR                  */
    rfx_optimizer optimizer;   /* default RFX_OPTIMIZER_AUTO                  */
    double lambda;             /* penalty (lambda/2)|W|^2, > 0; default 1e-4  */
    int fit_intercept;         /* default 1: unpenalised intercepts           */
    const double *class_weights; /* n_class_weights = C weights >= 0 (not all
                                  zero), aligned with the sorted classes, or
                                  NULL (default) for 1 each               */
    size_t n_class_weights;
    int balanced;              /* 1: c_k = n / (C n_k); default 0. Not with
                                  class_weights                             */
    size_t max_iter;           /* L-BFGS iterations; dual CD epochs of each
                                  column; >= 1, default 1000                */
    double tol;                /* > 0, default 1e-6 (see the optimizers)    */
    size_t epochs;             /* SGD epochs >= 1, default 10               */
    size_t batch_size;         /* SGD mini-batch rows >= 1, default 16      */
    double learning_rate;      /* SGD eta_0 > 0, or 0 (default): automatic  */
    uint64_t seed;             /* order of dual CD and SGD; default 0       */
    size_t cache_bytes;        /* cache Z when 8 n D bytes fit; 0 = never;
                                  default 1 GiB                             */
    int n_threads;             /* 0 = OpenMP default; results never depend
                                  on it                                     */
    rfx_progress_fn progress;  /* optional, stage "classify": per L-BFGS
                                  iteration, dual CD solve or SGD epoch    */
    void *progress_user;
    const double *sample_weight; /* rfx_classify_fit only: a weight per row of
                                  X (finite, >= 0, not all zero) multiplying
                                  its loss (see the top), or NULL (default)
                                  for 1 each. L-BFGS and dual CD take them;
                                  SGD (given or resolved from AUTO) and
                                  rfx_classify_fit_source refuse them
                                  (RFX_EINVAL naming classify.sample_weight) */
} rfx_classify_params;

/* The defaults documented in the struct. */
RFX_API rfx_classify_params rfx_classify_params_default(void);

/* RFX_OK when every field is valid and the combination exists (softmax
 * with the logistic loss, L-BFGS not on the hinge loss, dual CD not on the
 * logistic loss, sample weights not with SGD), else RFX_EINVAL with a
 * message naming the field
 * ("classify.lambda: ..."): the check the fits make first, for use before
 * any data is read. RFX_EINVAL for NULL. */
RFX_API rfx_status rfx_classify_params_check(const rfx_classify_params *p);

/* What a fit did. */
typedef struct rfx_classify_report {
    rfx_optimizer optimizer; /* the optimizer that ran (AUTO resolved)     */
    size_t n_classes;        /* C                                            */
    size_t iterations;       /* L-BFGS iterations; dual CD epochs (the most
                                of any column, over all its solves); SGD
                                epochs                                      */
    size_t passes;           /* passes over all rows computing the loss:
                                L-BFGS evaluations, SGD epochs, the final
                                evaluation of dual CD and SGD; from a
                                source also the first pass and the cache
                                fill (dual CD epochs are in iterations)    */
    double objective;        /* J(W, b) at the returned model              */
    double grad_norm;        /* |grad J|_inf there (for the hinge loss a
                                subgradient, with loss'(1) = 0)            */
    int converged;           /* the stopping rule was met (L-BFGS, dual CD;
                                always 0 for SGD, which runs its epochs)    */
    int cached;              /* the features were cached                     */
} rfx_classify_report;

/* Fit a classifier on the rows X (n x d, n >= 2, f's d columns) with
 * labels[i] the label of row i (n finite values, at least two distinct).
 * The model (RFX_METHOD_CLASSIFY) holds a copy of f; rfx_model_predict
 * gives labels, rfx_model_decision the scores, rfx_model_predict_proba the
 * class probabilities (logistic loss). report may be NULL.
 *
 * Cost: featurising, 2 n d D flops per pass (once with the cache); per
 * L-BFGS evaluation 4 n D K flops; per dual CD epoch 4 n D per column; per
 * SGD epoch 4 n D K plus the averaging, 2 D K per mini-batch. Memory: the
 * cache (8 n D bytes) or a chunk of features (at most 64 MiB), and
 * 2 x 10 + 8 L-BFGS vectors of (D + 1) K values.
 *
 * Not meeting the tolerance within max_iter is not an error (converged is
 * 0). Errors: RFX_EINVAL for NULL arguments, a bad field (named), fewer
 * than two classes, more than RFX_CLASSIFY_MAX_CLASSES, class weights of
 * the wrong count or sign, a combination that does not exist (softmax with
 * a hinge loss, L-BFGS on the hinge loss, dual CD on the logistic loss or
 * without the cache); RFX_EDIM when X has not f's d columns or fewer than 2
 * rows; RFX_EPARSE for NaN / Inf in X or in the labels (the row named);
 * RFX_ENUMERIC when the objective becomes non-finite or the intercept
 * cannot be bracketed; RFX_ECANCELLED from the progress callback;
 * RFX_EOVERFLOW / RFX_ENOMEM for sizes. */
RFX_API rfx_status rfx_classify_fit(const rfx_features *f, rfx_cmat X, const double *labels,
                                    const rfx_classify_params *params, rfx_model **out,
                                    rfx_classify_report *report);

/* The same from a source whose blocks carry one target column, the labels
 * (blocks with ny != 1 are RFX_EDIM). A first pass finds the classes, the
 * class counts and n; when the features fit in cache_bytes a second pass
 * caches them (with the labels), else every pass rewinds and reads the
 * source again, which must then give the same rows in the same blocks
 * (another row count, or a label not seen in the first pass, is
 * RFX_EINVAL). Optimizers: LBFGS (a pass per evaluation), SGD (a pass per
 * epoch, each block's rows in a seeded random order) or, cached, DUAL_CD;
 * AUTO as above. Results depend on the blocks the source gives (they fix
 * the tiles), not on the thread count. */
RFX_API rfx_status rfx_classify_fit_source(const rfx_features *f, rfx_source *src,
                                           const rfx_classify_params *params, rfx_model **out,
                                           rfx_classify_report *report);

/* One fit over rows spread across workers (MPI ranks: rfx/dist.h's
 * rfx_dist_classify_fit does all of this; or any other transport). Every
 * worker calls rfx_classify_fit_shard with its own source (blocks as
 * rfx_classify_fit_source's; it may give no rows) and the same f, params
 * and classes. The logistic and squared hinge objectives above are sums
 * over the rows, and so are their gradients: each worker computes its
 * rows' part, sum() adds the parts, and every worker then runs the same
 * L-BFGS iterations on the same numbers and ends with the same model. The
 * class counts and the row count n (the mean's 1/n, "balanced" weights)
 * are summed first.
 *
 * sum(user, values, n, local) is called on the calling thread at the same
 * points on every worker: once with the C class counts and the row count
 * (C + 1 values), then once per L-BFGS evaluation with the rows' part of J
 * and of its gradient (1 + D K [+ K] values). It must replace values[0..n)
 * by their sum over the workers, the same bits on every worker (a
 * reduction to one worker and a broadcast; an allreduce may round
 * differently on different workers, and their iterations would then part),
 * and return RFX_OK; or, when some worker's local status is a failure
 * (its message in rfx_last_error), or the transport fails, return a
 * failure on every worker (n may then differ between workers). A worker
 * that fails on its own passes its status to its next sum instead of
 * returning, so that no worker is left waiting.
 *
 * classes: the C sorted distinct labels of all workers' rows (2 <= C <=
 * RFX_CLASSIFY_MAX_CLASSES); a label outside them is RFX_EINVAL. L-BFGS
 * only (optimizer AUTO or LBFGS, loss not hinge); no sample weights; the
 * progress callback is not called (the sums see every evaluation). Each
 * worker caches its own rows' features when they fit in cache_bytes. */
typedef rfx_status (*rfx_sum_fn)(void *user, double *values, size_t n, rfx_status local);

typedef struct rfx_classify_shard {
    const double *classes; /* C sorted distinct labels of all the rows      */
    size_t n_classes;      /* C                                             */
    rfx_sum_fn sum;        /* the sum over workers                           */
    void *user;            /* passed to sum                                  */
} rfx_classify_shard;

RFX_API rfx_status rfx_classify_fit_shard(const rfx_features *f, rfx_source *src,
                                          const rfx_classify_params *params,
                                          const rfx_classify_shard *shard, rfx_model **out,
                                          rfx_classify_report *report);

/* The classes of a classifier: *classes points to the C sorted labels
 * (owned by m), *n = C. RFX_EINVAL for NULL arguments or a model of
 * another method. */
RFX_API rfx_status rfx_model_classes(const rfx_model *m, const double **classes, size_t *n);

/* What a classifier is. */
typedef struct rfx_classifier_info {
    rfx_loss loss;
    rfx_multiclass multiclass;
    size_t n_classes;     /* C                                              */
    size_t n_columns;     /* K: 1 for two classes, else C                   */
    double lambda;        /* the penalty it was fitted with                 */
    double temperature;   /* T of its probabilities softmax(s / T) (sigmoid
                             for two classes): a least-squares classifier,
                             or a squared-hinge one refined from it
                             (RFX_LOSS_AUTO); 0 for the others             */
    int probabilities;    /* 1 when rfx_model_predict_proba answers: the
                             logistic loss, or a temperature > 0          */
} rfx_classifier_info;

/* RFX_EINVAL for NULL arguments or a model of another method. */
RFX_API rfx_status rfx_model_classifier_info(const rfx_model *m, rfx_classifier_info *info);

/* The scores S = z(X) W + b of a classifier for X (n x d): n x 1 for two
 * classes (> 0 means c_1), n x C otherwise. OpenMP over tiles of 64 rows,
 * bitwise independent of the thread count. Errors: RFX_EINVAL (NULL, not a
 * classifier), RFX_EDIM (shapes), RFX_EPARSE (NaN / Inf in X). */
RFX_API rfx_status rfx_model_decision(const rfx_model *m, rfx_cmat X, rfx_mat scores);

/* Class probabilities P (n x C, rows summing to 1, columns in the order of
 * the classes) of a logistic classifier: two classes (1 - p, p) with
 * p = 1 / (1 + exp(-s)); softmax exp(s_k - max s) / sum_j exp(s_j - max s);
 * one-vs-rest the C sigmoids divided by their sum (as scikit-learn's
 * OvR predict_proba). A squared-loss classifier from rfx_model_fit: the
 * same with the scores divided by its temperature T (sigmoid(s / T) for two
 * classes, else the softmax of s / T); T is kept in the model file's
 * noise_var field. RFX_EINVAL for a hinge-loss model (no probabilities) or
 * a squared-loss model without a temperature (from rfx_classify_fit), else
 * errors as rfx_model_decision. */
RFX_API rfx_status rfx_model_predict_proba(const rfx_model *m, rfx_cmat X, rfx_mat P);

#ifdef __cplusplus
}
#endif

#endif /* RFX_CLASSIFY_H */
