/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/sinks.h - random kitchen sinks and the greedy baseline they replace.
 * Part of the public API (rfx.h includes it).
 *
 * Random kitchen sinks (Rahimi & Recht, "Weighted Sums of Random Kitchen
 * Sinks: Replacing minimization with randomization in learning", NIPS
 * 2008): draw K nonlinearities phi(x; w_k) = phi(w_k.x + b_k) at random
 * from a distribution pi (an rfx_features map: any activation, any weight
 * distribution) and fit only their weights,
 *
 *     min_{alpha, c}  R(alpha, c) = (1/n) sum_i loss(alpha.phi(x_i) + c, y_i)
 *     subject to      |alpha_k| <= C / K   for every k.
 *
 * The box is the paper's hypothesis set: for a target
 * f(x) = int alpha(w) phi(x; w) dw with sup_w |alpha(w)| / pi(w) <= C and
 * |phi| <= 1, some weights in the box are within O(C / sqrt(K)) of f in
 * L2 (the paper's Lemma 1), and the excess risk of the fit is
 * O(L C (1/sqrt(n) + 1/sqrt(K))) for an L-Lipschitz loss (its Theorem 1).
 * This is the price of replacing the minimisation over the w_k, which is
 * what the greedy algorithms below do, by randomisation.
 *
 * The greedy baseline (the paper's comparison): fit one term at a time,
 * choosing each w_k (Jones 1992; Barron 1993) - here among M random
 * candidates, refined by Gauss-Newton - and refit all coefficients by least
 * squares after each step (the orthogonal greedy algorithm).
 */
#ifndef RFX_SINKS_H
#define RFX_SINKS_H

#include "rfx/core.h"
#include "rfx/features.h"
#include "rfx/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The loss of a kitchen-sinks fit, with p = alpha.phi(x) + c the decision
 * value. All three have Lipschitz gradients (curvature at most 1, 1/4, 1),
 * which the accelerated gradient method needs; the plain hinge has none.
 *  SQUARED        (1/2) (p - y)^2                       (regression)
 *  LOGISTIC       log(1 + exp(-y p)), y in {-1, +1}     (classification)
 *  SQUARED_HINGE  (1/2) max(0, 1 - y p)^2, y in {-1, +1} (the L2-SVM loss) */
typedef enum rfx_sinks_loss {
    RFX_SINKS_LOSS_SQUARED = 0,
    RFX_SINKS_LOSS_LOGISTIC = 1,
    RFX_SINKS_LOSS_SQUARED_HINGE = 2
} rfx_sinks_loss;

/* The box chosen by cross-validation (params.C = 0): RFX_SINKS_CV_FOLDS
 * folds (row i of a seeded order of the rows' contents, the map's seed, in
 * fold i mod 5, so the folds do not depend on the rows' order), and
 * RFX_SINKS_CV_GRID boxes: r, 4 r, 16 r, 64 r, 256 r and
 * INFINITY (no box), r the range max(y) - min(y) of the targets (2 for
 * labels +-1). The box of least mean held-out loss is kept (the squared
 * error for the squared loss, else the fit's loss; a tie keeps the smaller
 * box), and the fit on all rows made with it: 31 fits in all. */
#define RFX_SINKS_CV_FOLDS 5
#define RFX_SINKS_CV_GRID 6

typedef struct rfx_sinks_params {
    rfx_sinks_loss loss;  /* default RFX_SINKS_LOSS_SQUARED                  */
    double C;             /* the box: |alpha_k| s <= C / K, with s the map's
                             column scale (sqrt(2/K) for cos features, else
                             1), i.e. the weights of the unscaled
                             nonlinearities phi(w_k.x + b_k) are at most C/K
                             in magnitude, and with |phi| <= 1 the fitted
                             function minus its intercept is at most C in
                             magnitude. > 0; INFINITY for no box; 0 (the
                             default): chosen by cross-validation (above),
                             which needs at least 10 rows                    */
    int fit_intercept;    /* default 1: a free intercept c (outside the box) */
    size_t max_iter;      /* iterations in all, default 5000: accelerated
                             gradient steps, and for the squared loss with
                             K <= n projected Newton steps after the first
                             500 (at most 100 of them)                     */
    double tol;           /* stop when the KKT residual (below) is at most
                             tol x max(1, its value at the start); default
                             1e-6                                            */
    int n_threads;        /* 0 = OpenMP default                              */
} rfx_sinks_params;

/* The defaults documented in the struct. */
RFX_API rfx_sinks_params rfx_sinks_params_default(void);

/* What a kitchen-sinks fit did. */
typedef struct rfx_sinks_report {
    size_t iterations;   /* accelerated gradient iterations run            */
    size_t restarts;     /* momentum restarts                               */
    double objective;    /* R(alpha, c) at the solution                     */
    double kkt;          /* max_k |alpha_k - P(alpha_k - g_k)| (and |g_c|
                            for the intercept), P the projection onto the
                            box and g the gradient of R: 0 exactly at the
                            optimum                                         */
    double lipschitz;    /* the final step size is 1 / lipschitz            */
    size_t n_at_bound;   /* weights with |alpha_k| s = C / K                */
    int converged;       /* kkt reached the tolerance                       */
    size_t newton_steps; /* projected Newton steps of the squared loss's
                            gram form (0 when the gradient steps sufficed)  */
    double C;            /* the box of the fit (params.C, or the one chosen) */
    size_t n_cv;         /* boxes cross-validated: RFX_SINKS_CV_GRID when
                            params.C was 0, else 0                          */
    double cv_C[RFX_SINKS_CV_GRID];    /* those boxes, ascending            */
    double cv_loss[RFX_SINKS_CV_GRID]; /* their mean held-out loss per row  */
} rfx_sinks_report;

/* Fit random kitchen sinks on the rows X (n x d) and targets y (n values;
 * +1 / -1 labels for the classification losses) with the feature map f
 * (d inputs, K = its output columns). The model (RFX_METHOD_SINKS, holding
 * a copy of f) predicts the decision value alpha.z(x) + c with
 * rfx_model_predict; report may be NULL.
 *
 * Method: the features are centred by their column means mu (the
 * intercept becomes c' = c + mu.alpha, an exact change of variables that
 * decouples it from alpha), and (alpha, c') is found by FISTA (Beck &
 * Teboulle, SIAM J. Imaging Sci. 2009) with the projection onto the box,
 * adaptive restart of the momentum when it points uphill (O'Donoghue &
 * Candes, Found. Comput. Math. 2015), and step 1/L: L starts at the
 * curvature bound of the loss times the largest eigenvalue of Zc^T Zc / n
 * (and 1, the intercept's), estimated by 50 power iterations from a fixed
 * start, and is doubled whenever the quadratic upper bound fails at a step
 * (backtracking), so the estimate need not be exact. Without a box (C =
 * INFINITY) this is plain accelerated gradient descent on the empirical
 * risk, whose minimiser need not be unique.
 *  - logistic and squared hinge losses, and the squared loss with K > n:
 *    Zc = z(X) - 1 mu^T (n x K) is computed once and kept in memory (8 n K
 *    bytes); each iteration costs about 4 n K flops (two matrix-vector
 *    products over fixed tiles of rows).
 *  - the squared loss with K <= n: the risk is the quadratic
 *    (|y - ybar|^2 - 2 b.alpha + alpha.G alpha) / (2n) with G = Zc^T Zc
 *    and b = Zc^T (y - ybar), accumulated once by rfx_stats (n K^2 flops,
 *    streamed: Z is never held, 8 K^2 bytes); c' = ybar exactly; each
 *    iteration costs 2 K^2 flops, and the backtracking test is the exact
 *    d.G d / n <= L |d|^2.
 * All reductions run over fixed tiles added in order: bitwise identical
 * results for any thread count. Reaching the tolerance takes
 * O(sqrt(L / mu) log(1/tol)) iterations for a problem of strong
 * convexity mu (linear convergence with restarts), O(tol^(-1/2)) without;
 * nearly collinear features (saturated tanh or sigmoid, ReLU with the
 * phases in [0, 2 pi), many cosines of one length scale) make mu tiny and
 * the gradient steps slow. The squared loss's gram form therefore hands
 * over after 500 of them to projected Newton steps (Bertsekas, SIAM J.
 * Control Optim. 1982): the weights at (or within the KKT residual of) a
 * bound whose gradient pushes them out are held there, the others take a
 * damped Newton step of the quadratic (a Cholesky factorisation of their
 * block of G plus a Levenberg-Marquardt term, about |free|^3 / 3 flops),
 * cut back to the box with an Armijo line search. On Friedman #1 (n =
 * 10^4, cosines of one length scale, bench/bench_sinks.c) K = 256 then
 * reaches tol = 1e-6 in 12 Newton steps where 5000 gradient steps did not;
 * at K = 512 and 1024 neither reaches it within the budget, and the test
 * error stays 2 to 5% above that of the GCV ridge on the same features.
 *
 * Not reaching the tolerance within max_iter is not an error: the model of
 * the last iterate is returned and report->converged is 0.
 *
 * Errors: RFX_EINVAL for NULL arguments, a bad field of params (named),
 * or a label other than +1 / -1 with a classification loss; RFX_EDIM when X
 * has no rows or not f's d columns; RFX_EPARSE when X or y has NaN / Inf
 * (row and column named); RFX_EOVERFLOW when n x K doubles exceed the
 * address space, RFX_ENOMEM when Z (or G) cannot be allocated. */
RFX_API rfx_status rfx_sinks_fit(const rfx_features *f, rfx_cmat X, const double *y,
                                 const rfx_sinks_params *params, rfx_model **out,
                                 rfx_sinks_report *report);

/* Kitchen sinks for C >= 2 classes (labels: any finite values, n of
 * them): one fit of rfx_sinks_fit per column of +-1 targets on the map f,
 * one column (+1 for the larger class) for two classes, else one per class
 * (one-vs-rest), all with one box: params.C, or, when it is 0, the box of
 * least cross-validated loss summed over the columns (as above, 31 fits
 * per column). params.loss is logistic or squared hinge. The model is a
 * classifier (RFX_METHOD_CLASSIFY, rfx/classify.h: loss logistic or
 * squared hinge, one-vs-rest, lambda 0): rfx_model_decision gives the
 * decision values alpha_k.z(x) + c_k, rfx_model_predict the labels, and a
 * logistic one rfx_model_predict_proba. The report, when not NULL, sums
 * the columns' iterations, restarts, Newton steps and weights at the
 * bound, holds their largest KKT residual and step constant, their mean
 * objective, converged when all did, the box and the cross-validation.
 * Errors: those of rfx_sinks_fit, and RFX_EINVAL for the squared loss or
 * fewer than 2 classes (RFX_EPARSE naming the row of a NaN / Inf label). */
RFX_API rfx_status rfx_sinks_classify(const rfx_features *f, rfx_cmat X, const double *labels,
                                      const rfx_sinks_params *params, rfx_model **out,
                                      rfx_sinks_report *report);

/* The greedy baseline: f_K(x) = c + sum_{k=1..K} beta_k phi(w_k.x + b_k),
 * built one term at a time for the squared loss. At step k (residual r of
 * the fit so far, orthogonal to the constant and the terms chosen):
 *  1. M candidates (w, b) are drawn: the M features of the map
 *     rfx_features_create(&params.features with n_features = M and
 *     seed = features.seed + k * 0x9E3779B97F4A7C15 (mod 2^64)), k = 0..K-1;
 *  2. the candidate with the largest decrease of the squared residual,
 *     (r.phi)^2 / |phi - mean(phi)|^2 (the best multiple of the candidate
 *     and a constant added to the fit; |phi|^2 without the intercept), is
 *     chosen - Barron's relaxed greedy step restricted to the candidates;
 *  3. its (w, b) are refined by refine_steps Levenberg-Marquardt damped
 *     Gauss-Newton steps on |r - beta phi(w.x + b) - gamma|^2 over (w, b,
 *     beta, gamma), w over its nonzero coordinates only (a q-sparse w
 *     stays q-sparse), a step kept only when it lowers the residual; in
 *     the phase-free form b stays 0 and the steps are over (w, beta,
 *     gamma); nothing to refine for the sign activation (zero
 *     derivative);
 *  4. all k coefficients and the intercept are refitted by least squares:
 *     the new column is orthogonalised against the previous ones
 *     (modified Gram-Schmidt, twice), the orthogonal greedy algorithm
 *     (Barron, Cohen, Dahmen & DeVore, Ann. Statist. 2008). A column in
 *     the span of the previous ones (relative norm after projection below
 *     1e-10) is kept with coefficient 0.
 * The training mean squared error is therefore non-increasing in k. */
/* How the greedy fit adds a term (step 4 above):
 *  ORTHOGONAL  all coefficients refitted by least squares (the orthogonal
 *              greedy algorithm, the default);
 *  RELAXED     the convex update of Jones (Ann. Statist. 1992) and Barron
 *              (IEEE Trans. Inf. Theory 1993): f_k = (1 - a) f_{k-1} +
 *              g phi_k with a in [0, 1] and g chosen by least squares on the
 *              centred targets (the earlier terms keep their ratios, all
 *              scaled by 1 - a). For a target in the closed convex hull of
 *              the dictionary (scaled), the relaxed greedy algorithm's error
 *              is O(1/sqrt(K)); candidates drawn at random only approximate
 *              the step's best term. The training error is still
 *              non-increasing in k (a = 0, g = 0 is a candidate). */
typedef enum rfx_greedy_update {
    RFX_GREEDY_ORTHOGONAL = 0,
    RFX_GREEDY_RELAXED = 1
} rfx_greedy_update;

typedef struct rfx_greedy_params {
    rfx_features_params features; /* the candidates' distribution: activation,
                                     weights / weight_scale or kernel and
                                     length scale(s), sparsity, seed (defaults
                                     of rfx_features_params_default); the form
                                     cos-bias or phase-free (b = 0, kept 0);
                                     n_features, n_threads are not read     */
    size_t n_terms;       /* K >= 1, default 32                               */
    size_t n_candidates;  /* M >= 1 per step, default 64                      */
    size_t refine_steps;  /* Gauss-Newton steps per term, default 5; 0 keeps
                             the chosen candidate as drawn                   */
    int fit_intercept;    /* default 1                                        */
    int n_threads;        /* 0 = OpenMP default                               */
    rfx_greedy_update update; /* default RFX_GREEDY_ORTHOGONAL                */
} rfx_greedy_params;

/* The defaults documented in the struct. */
RFX_API rfx_greedy_params rfx_greedy_params_default(void);

typedef struct rfx_greedy_report {
    size_t n_terms;       /* K                                               */
    size_t n_dependent;   /* terms kept with coefficient 0 (in the span)     */
    double train_mse;     /* (1/n) |y - f_K(X)|^2                            */
} rfx_greedy_report;

/* Fit the greedy expansion to X (n x d), y (n values). The model
 * (RFX_METHOD_GREEDY) holds a feature map of the K chosen, refined
 * frequencies and phases (activation and scale of params.features, K
 * output columns; its other parameters as given, seed included, but its
 * frequencies are the refined ones, not those the seed draws) and predicts
 * f_K. mse_path, when not NULL, receives K values: the training mean
 * squared error after each term. report may be NULL.
 *
 * Cost per step: M n (2 q + c) to score the candidates (OpenMP over
 * candidates, each scored by one thread), refine_steps n (q + 3)^2 for
 * Gauss-Newton, 4 n k for the orthogonalisation; in all O(K n (M q + K))
 * time and n (K + 1) doubles for the orthogonal basis. Every reduction runs
 * in a fixed order, so results are bitwise the same for any thread count.
 *
 * Errors: RFX_EINVAL for NULL arguments or a bad field (named; the form
 * cos-sin is refused: a term is one nonlinearity phi(w.x + b)); RFX_EDIM
 * when X has no rows; RFX_EPARSE for NaN / Inf in X or y; RFX_EOVERFLOW /
 * RFX_ENOMEM when the basis does not fit. */
RFX_API rfx_status rfx_greedy_fit(rfx_cmat X, const double *y, const rfx_greedy_params *params,
                                  rfx_model **out, rfx_greedy_report *report, double *mse_path);

#ifdef __cplusplus
}
#endif

#endif /* RFX_SINKS_H */
