/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/kernel_sgd.h - stochastic gradient descent with a kernel, in the four
 * ways of the kernel trick. Included by rfx.h (after rfx/kernels.h and
 * rfx/classify.h, whose rfx_kern and rfx_loss it uses).
 *
 * A linear classifier f(x) = w.phi(x) on a feature map phi with
 * phi(x).phi(y) = k(x, y) is trained by SGD on the objective
 *
 *     J(w) = (1/n) sum_i l(f(x_i), y_i) + (lambda / 2) |w|^2,
 *
 * labels y_i = +-1, no intercept, lambda = 0 by default (the lecture's
 * unregularised SGD). One step picks a row i = i_t and updates, in the
 * weight space,
 *
 *     w <- (1 - alpha_t lambda) w - alpha_t l'(w.phi(x_i), y_i) phi(x_i)  (w)
 *
 * or, writing w = sum_j u_j phi(x_j) (the representer form, u = 0 at the
 * start), in the dual space (NORMA, Kivinen, Smola & Williamson, "Online
 * learning with kernels", IEEE Trans. Signal Processing 52, 2004)
 *
 *     g = alpha_t l'(sum_j k(x_i, x_j) u_j, y_i),
 *     u <- (1 - alpha_t lambda) u,   u_i <- u_i - g                      (u)
 *
 * The two are the same iteration: from the same start and the same index
 * sequence they give the same model up to rounding, with predictions
 * f(x) = w.phi(x) = sum_j u_j k(x_j, x). Each can cache its work or not;
 * the four strategies (the lecture notes "Kernels and the kernel trick" of
 * Cornell's CS4787, C. De Sa) trade time against memory as follows, for n
 * rows of dimension d, a feature map of dimension D and T steps, with a
 * feature map costing Theta(d D) per row and a kernel value Theta(d):
 *
 *   strategy                  time              memory beyond the rows
 *   FEATURES_ON_THE_FLY  (w)  O(d D T)          O(D)    w, one phi(x)
 *   FEATURES_CACHED      (w)  O(n d D + D T)    O(n D)  Z = phi(X), w
 *   KERNEL_ON_THE_FLY    (u)  O(n d T)          O(n)    u, one kernel row
 *   GRAM_CACHED          (u)  O(n^2 d + n T)    O(n^2)  G = k(X, X), u
 *
 * The weight-space strategies need a feature map (rfx_features: random
 * features, which realise the kernel rfx_kern_features(f) exactly); the
 * dual-space ones need only the kernel (rfx_kern: any kernel, including
 * the RBF kernel whose feature map is infinite-dimensional). With
 * k = rfx_kern_features(f) all four give the same decision values up to
 * rounding.
 *
 * The index sequence: i_t = floor(n v_t), t = 0..T-1, where v_t is the
 * t-th uniform in (0, 1) of the counter-based stream (Philox4x64-10) of
 * the seed, so it depends only on (seed, t) and n, never on the strategy
 * or the thread count. Rows are drawn with replacement, as in the lecture.
 *
 * Losses (rfx_loss of rfx/classify.h), with m = f(x) y the margin:
 *   RFX_LOSS_LOGISTIC       l = log(1 + exp(-m)),   l' = -y / (1 + exp(m))
 *   RFX_LOSS_HINGE          l = max(0, 1 - m),      l' = -y if m < 1, else 0
 *                           (a subgradient: the perceptron-like SVM step)
 *   RFX_LOSS_SQUARED_HINGE  l = max(0, 1 - m)^2,    l' = -2 y max(0, 1 - m)
 * l' is the derivative in f. With the hinge losses rows with margin >= 1
 * leave u_i unchanged, so u stays sparse (support vectors), and
 * KERNEL_ON_THE_FLY evaluates the kernel only against rows with u_j != 0.
 */
#ifndef RFX_KERNEL_SGD_H
#define RFX_KERNEL_SGD_H

#include "rfx/core.h"
#include "rfx/features.h"
#include "rfx/classify.h"
#include "rfx/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The four strategies of the table above. */
typedef enum rfx_sgd_strategy {
    RFX_SGD_FEATURES_ON_THE_FLY = 0, /* w-space, phi(x_i) recomputed every step */
    RFX_SGD_FEATURES_CACHED = 1,     /* w-space, Z = phi(X) computed once         */
    RFX_SGD_KERNEL_ON_THE_FLY = 2,   /* u-space, k(x_i, x_j) computed every step  */
    RFX_SGD_GRAM_CACHED = 3          /* u-space, G = k(X, X) computed once        */
} rfx_sgd_strategy;

/* The name of a strategy ("features-on-the-fly", "features-cached",
 * "kernel-on-the-fly", "gram-cached"), and the reverse look-up (RFX_EINVAL
 * for an unknown name). */
RFX_API const char *rfx_sgd_strategy_name(rfx_sgd_strategy s);
RFX_API rfx_status rfx_sgd_strategy_from_name(const char *name, rfx_sgd_strategy *out);

typedef struct rfx_kernel_sgd_params {
    rfx_sgd_strategy strategy; /* default RFX_SGD_GRAM_CACHED                    */
    rfx_loss loss;          /* RFX_LOSS_LOGISTIC (default), RFX_LOSS_HINGE or
                               RFX_LOSS_SQUARED_HINGE                          */
    double alpha;           /* step size > 0, default 0.1                      */
    double t0;              /* 0 (default): constant step alpha_t = alpha, as
                               in the lecture; > 0: alpha_t = alpha / (1 + t/t0),
                               t = 0, 1, ...                                   */
    double lambda;          /* the L2 penalty >= 0, default 0; alpha lambda
                               must be < 1 (each step shrinks w or u by
                               1 - alpha_t lambda > 0)                         */
    size_t n_iter;          /* T, the number of steps; 0 (default) = 20 n       */
    uint64_t seed;          /* the index sequence; default 0                   */
    int n_threads;          /* for the caches (Z, G) and for decision values;
                               0 = OpenMP default. The SGD loop itself is
                               sequential; results never depend on the value */
    size_t cache_limit;     /* the most bytes the cache (Z or G) may take;
                               0 (default) = no limit but the allocator's.
                               A larger cache is RFX_ENOMEM, before anything
                               is allocated                                   */
    rfx_progress_fn progress; /* optional: stages "cache" and "sgd"          */
    void *progress_user;
} rfx_kernel_sgd_params;

/* The defaults documented in the struct. */
RFX_API rfx_kernel_sgd_params rfx_kernel_sgd_params_default(void);

/* The index sequence a fit with this seed visits on n rows: idx[t] = i_t,
 * t = 0..T-1 (caller-allocated, T values). The first T indices of a
 * longer sequence are the sequence of length T. O(T). RFX_EINVAL when n is
 * 0 or idx is NULL with T > 0. */
RFX_API rfx_status rfx_kernel_sgd_indices(uint64_t seed, size_t n, size_t T, size_t *idx);

/* A trained model: w and a copy of the feature map (strategies 1-2), or u,
 * a reference to the kernel and a copy of the training rows with u_j != 0
 * (strategies 3-4: the "support vectors" that predictions need). */
typedef struct rfx_kernel_sgd rfx_kernel_sgd;

/* Train on X (n x d, n >= 1) with labels y (n values, each exactly +1 or
 * -1). The weight-space strategies need f (input dimension d; k may be
 * NULL and is not used); the dual-space strategies need k (input dimension
 * d or any; f may be NULL and is not used). f and k are copied or
 * referenced internally: they may be freed right after the call.
 *
 * Cost: see the table above and rfx_kernel_sgd_cost. The caches are built
 * threaded (rfx_features_transform, rfx_kern_gram_sym) and are bitwise
 * independent of n_threads; the steps then run on the calling thread.
 *
 * Errors: RFX_EINVAL for a NULL out or params, a bad field (named), a
 * missing f or k for the strategy, a label that is not +-1 (its index);
 * RFX_EDIM when f or k has another input dimension than X, or X has no
 * rows or columns; RFX_EPARSE for a NaN or infinite entry of X (its row
 * and column); RFX_EOVERFLOW when T = 20 n or the size of the cache
 * overflows; RFX_ENOMEM when the cache (naming "the Gram matrix" or "the
 * feature cache") exceeds cache_limit or cannot be allocated;
 * RFX_ENUMERIC when a step's decision value is not finite (a kernel value
 * overflowed, e.g. exp of a large kernel; the message names the step and
 * the row); RFX_ECANCELLED when the progress callback asks to stop. */
RFX_API rfx_status rfx_kernel_sgd_fit(const rfx_kern *k, const rfx_features *f, rfx_cmat X,
                                      const double *y, const rfx_kernel_sgd_params *params,
                                      rfx_kernel_sgd **out);

RFX_API void rfx_kernel_sgd_free(rfx_kernel_sgd *m);

/* Decision values out[r] = f(X_r) for X (rows x d): w.phi(x) for the
 * weight-space models (the feature map applied in row chunks, threaded),
 * sum_j u_j k(x_j, x) over the rows with u_j != 0 for the dual ones (kernel
 * blocks by rfx_kern_gram, threaded). Each value is a fixed-order sum:
 * bitwise independent of the thread count. Cost O(rows d D) or
 * O(rows s d), s the number of rows with u_j != 0. RFX_EINVAL for NULL
 * arguments, RFX_EDIM for a wrong column count, RFX_EPARSE for a
 * non-finite entry. */
RFX_API rfx_status rfx_kernel_sgd_decision(const rfx_kernel_sgd *m, rfx_cmat X, double *out);

/* Labels: +1 where the decision value is > 0, else -1. Errors as above. */
RFX_API rfx_status rfx_kernel_sgd_predict(const rfx_kernel_sgd *m, rfx_cmat X, double *labels);

/* The weights w (D values, owned by m) of a weight-space model, and D in
 * *dim (when not NULL); NULL and 0 for a dual-space model. */
RFX_API const double *rfx_kernel_sgd_weights(const rfx_kernel_sgd *m, size_t *dim);

/* The dual coefficients u (n values, one per training row, owned by m) of
 * a dual-space model, and n in *n (when not NULL); NULL and 0 for a
 * weight-space model (which never forms u: it would cost O(n) memory). */
RFX_API const double *rfx_kernel_sgd_dual(const rfx_kernel_sgd *m, size_t *n);

/* What a fit did. Counts are of the work actually done:
 *  feature_evals  rows mapped through phi: T (FEATURES_ON_THE_FLY), n
 *                 (FEATURES_CACHED), else 0;
 *  kernel_evals   kernel values: n (n + 1) / 2 (GRAM_CACHED: the upper
 *                 triangle of the symmetric G), the sum over the steps of
 *                 the number of rows j with u_j != 0 before the step
 *                 (KERNEL_ON_THE_FLY: at most n T; about n T - n^2 for the
 *                 logistic loss, whose steps never leave u_i at 0), else 0;
 *  flops          the lecture's cost model: 2 d D per feature evaluation,
 *                 2 d per kernel value, and per step 4 D (w-space: the dot
 *                 product and the update) or 2 n (u-space: the dot product
 *                 with u), below; with lambda > 0 the shrinking adds D or n
 *                 per step (T D or T n more):
 *                   FEATURES_ON_THE_FLY  T (2 d D + 4 D)
 *                   FEATURES_CACHED      2 n d D + 4 D T
 *                   KERNEL_ON_THE_FLY    2 d kernel_evals + 2 n T
 *                   GRAM_CACHED          d n (n + 1) + 2 n T
 *                 (a kernel made by rfx_kern_features costs 2 d D + D per
 *                 value rather than 2 d: the count then understates it);
 *  cache_bytes    8 n D (Z) or 8 n^2 (G), else 0;
 *  state_bytes    the other memory of the steps, in the order of the
 *                 strategies: 16 D (w and one phi(x); plus the
 *                 transform workspace of a structured map, SORF or
 *                 FASTFOOD); 8 D (w);
 *                 (16 + sizeof(size_t) + 1) n (u, one kernel row, the list
 *                 of rows with u_j != 0 and a flag per row); 8 n (u). */
typedef struct rfx_kernel_sgd_info {
    rfx_sgd_strategy strategy;
    rfx_loss loss;
    size_t n_train;         /* n                                              */
    size_t n_inputs;        /* d                                              */
    size_t n_features;      /* D (weight-space models), else 0                */
    size_t n_iter;          /* T, the steps taken                             */
    size_t n_support;       /* dual-space models: rows with u_j != 0, else 0  */
    size_t feature_evals;
    size_t kernel_evals;
    double flops;
    size_t cache_bytes;
    size_t state_bytes;
} rfx_kernel_sgd_info;

/* Fill *info (RFX_EINVAL when m or info is NULL). */
RFX_API rfx_status rfx_kernel_sgd_get_info(const rfx_kernel_sgd *m, rfx_kernel_sgd_info *info);

/* The cost of the fit in the lecture's terms: *flops as in
 * rfx_kernel_sgd_info, *bytes = cache_bytes + state_bytes, the memory the
 * fit used beyond the training rows. Either pointer may be NULL; RFX_EINVAL
 * when m is NULL. */
RFX_API rfx_status rfx_kernel_sgd_cost(const rfx_kernel_sgd *m, double *flops, size_t *bytes);

#ifdef __cplusplus
}
#endif

#endif /* RFX_KERNEL_SGD_H */
