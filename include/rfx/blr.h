/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/blr.h - Bayesian linear regression on a design matrix the caller
 * forms: any basis (1, x, x^2, ... of raw inputs, splines, random features
 * of any map, the raw inputs themselves), with a general Gaussian prior on
 * the weights. Part of the public API (rfx.h includes it).
 *
 * The model (Rasmussen & Williams, "Gaussian Processes for Machine
 * Learning", 2006, section 2.1; Bishop, "Pattern Recognition and Machine
 * Learning", 2006, section 3.3): for the n x N design Phi (row i is
 * phi(x_i)),
 *
 *     y = b + Phi w + e,   e ~ N(0, sigma^2 I),   w ~ N(0, s^2 Sigma0),
 *
 * with a flat prior on the intercept b when fit_intercept is set (the
 * columns of Phi and y are centred; the model has n - 1 degrees of freedom)
 * and no intercept otherwise (put a column of ones in Phi to give the
 * constant a Gaussian prior instead). Sigma0 (N x N, symmetric positive
 * definite) is the prior's shape, the identity by default; s^2 its scale.
 * With alpha = 1 / s^2, beta = 1 / sigma^2 and Sigma0 = L L^T, the weights
 * are w = L v with v ~ N(0, s^2 I) on the whitened design Psi = Phi L:
 *
 *     A = beta Psi^T Psi + alpha I,     E[v | y] = beta A^-1 Psi^T y,
 *     var f(x*) = psi*^T A^-1 psi* (+ sigma^2 / n with an intercept),
 *     log p(y) = n/2 log beta + N/2 log alpha - 1/2 log|A|
 *                - beta/2 |y - Psi m|^2 - alpha/2 |m|^2 - n/2 log(2 pi),
 *
 * which is the Gaussian process of covariance k(x, x') = s^2 phi(x)^T
 * Sigma0 phi(x') + sigma^2 delta. A variance given as 0 is fitted by
 * maximising log p(y) with MacKay's fixed point (Bishop 3.91-3.95).
 *
 * The fit takes the singular value decomposition of the whitened design
 * (never Phi^T Phi, which squares the condition number of a polynomial
 * basis): O(n N min(n, N)), which is the primal cost O(n N^2) when n >= N
 * and the dual (Gram-matrix) cost O(n^2 N) when n < N. The model keeps an
 * N x N factor of the posterior covariance when n >= N, and an n x N one
 * otherwise (the matrix inversion lemma, Rasmussen & Williams eq. 2.12), so
 * a basis far wider than the data costs memory n N, not N^2.
 *
 * Row weights (sample_weight, w_i >= 0) multiply the noise precision of
 * their rows, y_i ~ N(f(x_i), sigma^2 / w_i), as in rfx_bayes_fit; a row
 * of weight 0 is a row left out, and n counts the rows of positive weight.
 *
 * The conventions of rfx.h hold: statuses and rfx_last_error(), nothing
 * written on failure, results bitwise the same for any thread count.
 */
#ifndef RFX_BLR_H
#define RFX_BLR_H

#include "rfx/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rfx_blr_params {
    double noise_var;         /* sigma^2 > 0, or 0 (default): fitted         */
    double prior_var;         /* s^2 > 0, or 0 (default): fitted             */
    const double *prior_cov;  /* Sigma0, N x N row-major, symmetric positive
                                 definite; NULL (default): the identity     */
    int fit_intercept;        /* 1 (default): a flat prior on an intercept  */
    size_t max_iter;          /* fixed-point iterations >= 1, default 300    */
    double tol;               /* > 0, on |d log alpha| + |d log beta|,
                                 default 1e-10                               */
    int n_threads;            /* 0 = OpenMP default                          */
    const double *sample_weight; /* n weights (finite, >= 0, not all zero),
                                 or NULL (default) for 1 each              */
} rfx_blr_params;

RFX_API rfx_blr_params rfx_blr_params_default(void);

/* RFX_OK when the parameters are valid whatever the data, else RFX_EINVAL
 * naming the field ("blr.noise_var: ..."). */
RFX_API rfx_status rfx_blr_params_check(const rfx_blr_params *p);

typedef struct rfx_blr rfx_blr;

/* Fit the design Phi (n x N, finite, n >= 2, N >= 1) and the targets y (n
 * finite values). Errors: RFX_EINVAL (a field, named; prior_cov not
 * symmetric positive definite), RFX_EDIM,
 * RFX_EPARSE (a non-finite entry, its row and column named), RFX_ENUMERIC,
 * RFX_ENOMEM. */
RFX_API rfx_status rfx_blr_fit(const rfx_blr_params *params, rfx_cmat Phi, const double *y,
                               rfx_blr **out);

RFX_API void rfx_blr_free(rfx_blr *m);

/* The posterior mean of f at the rows of Phi (m x N) into mean (m values),
 * and when std is not NULL its standard deviation (m values): of the latent
 * f (with_noise 0) or of a new observation y (with_noise 1: sigma^2
 * added). Errors: RFX_EINVAL, RFX_EDIM (N), RFX_EPARSE. */
RFX_API rfx_status rfx_blr_predict(const rfx_blr *m, rfx_cmat Phi, double *mean, double *std,
                                   int with_noise);

typedef struct rfx_blr_info {
    size_t n_features;     /* N                                              */
    size_t n_train;        /* rows of positive weight                        */
    int fit_intercept;
    size_t rank;           /* min(n, N): the singular values used            */
    size_t iterations;     /* fixed-point iterations (0: both variances
                              given)                                         */
    double noise_var;      /* sigma^2 (fitted or given)                      */
    double prior_var;      /* s^2 (fitted or given)                          */
    double log_evidence;   /* log p(y) at them                               */
    double effective_params; /* gamma = sum beta s_k / (beta s_k + alpha):
                              the well-determined weights (Bishop 3.91)     */
    double intercept;      /* b (0 without intercept)                        */
} rfx_blr_info;

RFX_API rfx_status rfx_blr_get_info(const rfx_blr *m, rfx_blr_info *info);

/* The posterior mean of the weights w (N values, in the units of Phi's
 * columns), owned by m. */
RFX_API const double *rfx_blr_coef(const rfx_blr *m);

#ifdef __cplusplus
}
#endif

#endif /* RFX_BLR_H */
