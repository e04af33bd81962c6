/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/nystroem.h - Nystroem features: a data-dependent feature map of any
 * kernel (Williams & Seeger, "Using the Nystroem method to speed up kernel
 * machines", NIPS 2001). Included by rfx.h (after rfx/kernels.h, whose
 * rfx_kern it uses).
 *
 * Given m landmark rows L (sampled from the data, or given) and a kernel
 * k, let K_LL = k(L, L) = Q diag(lambda) Q^T (eigendecomposition, lambda
 * the m eigenvalues). The map is
 *
 *     z(x) = k(x, L) N,   N = Q diag(s) Q^T,
 *     s_j = 1 / sqrt(lambda_j)  when lambda_j > cutoff,  else 0,
 *     cutoff = 1e-12 max(lambda_max, 0) (relative; RFX_NYSTROEM_RCOND)
 *
 * so N is the pseudo-inverse square root of K_LL (symmetric, m x m) and
 *
 *     z(x).z(y) = k(x, L) K_LL^+ k(L, y),
 *
 * the Nystroem approximation of k(x, y), with K_LL^+ the pseudo-inverse
 * that drops eigenvalues at or below the cutoff (negative eigenvalues of an
 * indefinite kernel, and rounding-level ones of a singular K_LL). On the
 * landmarks it reproduces the kernel: z(l_a).z(l_b) = k(l_a, l_b) up to the
 * dropped part. The layout is scikit-learn's Nystroem (its normalization_
 * is U S^(-1/2) V from an SVD of K_LL, the same N when K_LL is positive
 * definite above scikit-learn's floor of 1e-12; scikit-learn clamps the
 * small singular values up to 1e-12 where rfx drops them): m output
 * columns, one per landmark; the rank of K_LL above the cutoff is the
 * number of independent ones.
 *
 * Costs: fit O(m^2 d) kernel work (the m x m Gram matrix, threaded) and
 * O(m^3) for the eigendecomposition (LAPACK dsyevd, one thread) and N;
 * memory O(m^2 + m d). A transform of n rows: O(n m d) kernel work plus
 * 2 n m^2 flops, threaded over row tiles, bitwise independent of the
 * thread count.
 */
#ifndef RFX_NYSTROEM_H
#define RFX_NYSTROEM_H

#include "rfx/core.h"
#include "rfx/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The relative eigenvalue cutoff: eigenvalues of K_LL at or below
 * RFX_NYSTROEM_RCOND * max(lambda_max, 0) are dropped. */
#define RFX_NYSTROEM_RCOND 1e-12

/* A fitted Nystroem map: the kernel (referenced), the landmarks (copied)
 * and N. */
typedef struct rfx_nystroem rfx_nystroem;

/* Fit on data X (n x d): n_components = m landmark rows drawn uniformly
 * without replacement (a partial Fisher-Yates shuffle of 0..n-1 driven by
 * the counter-based stream of seed: landmark a is row idx[a], a = 0..m-1,
 * in the order drawn; the choice depends only on (seed, n, m)). Then as
 * rfx_nystroem_fit_landmarks. n_threads: for the Gram matrix and the
 * transforms, 0 = OpenMP default.
 *
 * Errors: RFX_EINVAL for NULL k or out, n_components 0 or above n, a
 * negative n_threads; RFX_EDIM when X has no rows or columns, or k has
 * another input dimension; RFX_EPARSE for a non-finite entry of X (row and
 * column); RFX_EOVERFLOW when m^2 overflows or m exceeds the LAPACK
 * integer range; RFX_ENOMEM; RFX_ENUMERIC when K_LL has an entry that is
 * not finite (the kernel overflowed), the eigensolver fails, or K_LL has
 * no eigenvalue above the cutoff (all landmarks null). */
RFX_API rfx_status rfx_nystroem_fit(const rfx_kern *k, rfx_cmat X, size_t n_components,
                                    uint64_t seed, int n_threads, rfx_nystroem **out);

/* How the landmarks are chosen:
 *   UNIFORM   rows drawn uniformly without replacement (as rfx_nystroem_fit).
 *   KMEANS    the centres of k-means on X (k-means++ seeding, Arthur &
 *             Vassilvitskii 2007, then Lloyd's iterations; Zhang, Tsang &
 *             Kwok, ICML 2008), in the Euclidean distance of the inputs as
 *             given (standardise them first, as the kernel sees them). Not
 *             rows of X: rfx_nystroem_landmark_indices gives NULL.
 *   LEVERAGE  rows drawn without replacement with probabilities proportional
 *             to their ridge leverage scores [K (K + n lam I)^-1]_ii
 *             (Alaoui & Mahoney, NIPS 2015), estimated from s = max(512, 2m)
 *             uniform rows by the regularised Nystroem bound of Musco &
 *             Musco (NIPS 2017); lam = lambda times the mean k(x, x). Rows
 *             the others miss (outliers, small clusters) get landmarks.
 * Extra cost over UNIFORM: KMEANS O(n m d) per iteration; LEVERAGE
 * O(n s (d + s)). */
typedef enum rfx_landmarks {
    RFX_LANDMARKS_UNIFORM = 0,
    RFX_LANDMARKS_KMEANS = 1,
    RFX_LANDMARKS_LEVERAGE = 2
} rfx_landmarks;

typedef struct rfx_nystroem_params {
    size_t n_components;       /* m landmarks, <= n; 0: the size rule
                                  m = ceil(d_eff ln n), d_eff the sum of the
                                  estimated leverage scores (an upper bound
                                  of the effective dimension at lambda; the
                                  O(d_eff log n) of leverage sampling's
                                  guarantee), at most n. Default 100      */
    rfx_landmarks landmarks;   /* default RFX_LANDMARKS_UNIFORM              */
    uint64_t seed;             /* default 0                                  */
    int n_threads;             /* 0 = OpenMP default                         */
    double lambda;             /* LEVERAGE and the size rule: the ridge,
                                  relative to the mean k(x, x); default 1e-3 */
    size_t kmeans_iterations;  /* KMEANS: Lloyd iterations at most; default 10 */
} rfx_nystroem_params;

RFX_API rfx_nystroem_params rfx_nystroem_params_default(void);
/* RFX_EINVAL naming the bad field. */
RFX_API rfx_status rfx_nystroem_params_check(const rfx_nystroem_params *p);

/* Fit on data X (n x d) with the landmarks p asks for. The errors of
 * rfx_nystroem_fit, and of rfx_nystroem_params_check. With UNIFORM and the
 * same n_components and seed, the map of rfx_nystroem_fit, bit for bit.
 * Each strategy depends only on (seed, X, p), never on the thread count. */
RFX_API rfx_status rfx_nystroem_fit_params(const rfx_kern *k, rfx_cmat X,
                                           const rfx_nystroem_params *p, rfx_nystroem **out);

/* Fit with the given landmarks L (m x d, m >= 1; all of them used, in
 * order). The errors of rfx_nystroem_fit, with L for X. */
RFX_API rfx_status rfx_nystroem_fit_landmarks(const rfx_kern *k, rfx_cmat L, int n_threads,
                                              rfx_nystroem **out);

RFX_API void rfx_nystroem_free(rfx_nystroem *ny);

/* Z = z(X): X is n x d, Z is n x m (caller-allocated; any strides).
 * Errors: RFX_EINVAL for NULL ny or bad views, RFX_EDIM for wrong shapes,
 * RFX_EPARSE for a non-finite entry of X, RFX_EOVERFLOW for a stride of Z
 * beyond the BLAS integer range, RFX_ENOMEM. */
RFX_API rfx_status rfx_nystroem_transform(const rfx_nystroem *ny, rfx_cmat X, rfx_mat Z);

/* The landmarks (m x d, owned by ny). */
RFX_API rfx_cmat rfx_nystroem_landmarks(const rfx_nystroem *ny);

/* The rows of X the landmarks were drawn from (m indices, owned by ny), or
 * NULL for rfx_nystroem_fit_landmarks. */
RFX_API const size_t *rfx_nystroem_landmark_indices(const rfx_nystroem *ny);

/* m, the number of landmarks. */
RFX_API size_t rfx_nystroem_n_components(const rfx_nystroem *ny);

/* The output dimension of z (the columns of Z): m. */
RFX_API size_t rfx_nystroem_output_dim(const rfx_nystroem *ny);

/* The input dimension d. */
RFX_API size_t rfx_nystroem_input_dim(const rfx_nystroem *ny);

/* The rank kept: the number of eigenvalues of K_LL above the cutoff. */
RFX_API size_t rfx_nystroem_rank(const rfx_nystroem *ny);

/* The normalisation N (m x m, symmetric, owned by ny): Z = k(X, L) N. */
RFX_API rfx_cmat rfx_nystroem_normalization(const rfx_nystroem *ny);

/* The eigenvalues of K_LL, ascending (m values, owned by ny). */
RFX_API const double *rfx_nystroem_eigenvalues(const rfx_nystroem *ny);

#ifdef __cplusplus
}
#endif

#endif /* RFX_NYSTROEM_H */
