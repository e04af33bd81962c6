/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/kernels.h - exact kernel machines: kernel functions k(x, y) on R^d,
 * their algebra, Gram matrices, kernel ridge regression and Gaussian
 * process regression. Part of the public API (rfx.h includes it).
 *
 * Random features approximate these kernels; the exact machines here are
 * the reference they are measured against, and the method of choice for
 * small data (n up to a few thousand rows: the fits cost O(n^3) time and
 * O(n^2) memory).
 *
 * A kernel is an immutable, reference-counted expression tree: leaves are
 * the kernels below, inner nodes combine them (sum, product, scale, exp,
 * warp). Building a combination takes a reference on its operands, so they
 * may be freed right after; a kernel may be shared between threads.
 *
 * Gram matrices are computed in tiles of 64 x 64 entries, OpenMP over the
 * tiles. Kernels of the Euclidean distance (Gaussian, RBF, Matern) get the
 * squared distances of a tile from the norms expansion
 * |u - v|^2 = |u|^2 + |v|^2 - 2 u.v with one GEMM, u and v the scaled rows
 * centred on the column means of X; where the expansion cancels (below
 * 2^-10 (|u|^2 + |v|^2)) the entry is recomputed from the differences of
 * the rows as given, as rfx_kern_eval does, so no squared distance is
 * negative, identical rows give exactly 0 and nearly identical ones keep
 * their accuracy. Kernels of the inner product (linear, polynomial,
 * sigmoid) take x.y from one GEMM; the others (Laplacian, Cauchy, delta)
 * are evaluated entry by entry.
 * An algebra node combines the tiles of its operands. Every tile is
 * computed by one thread in a fixed order, so K is bitwise the same for any
 * number of threads.
 */
#ifndef RFX_KERNELS_H
#define RFX_KERNELS_H

#include "rfx/core.h"
#include "rfx/features.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Kernels                                                                   */
/* ------------------------------------------------------------------------ */

/* An exact kernel function k(x, y) on R^d; immutable after creation,
 * internally reference-counted, thread-safe to share. */
typedef struct rfx_kern rfx_kern;

/* The shift-invariant kernels of rfx_kernel (rfx.h), exactly the k that
 * random features of that kernel approximate (rfx_features_exact_kernel),
 * with the same length-scale convention: u = x / l, r = |u_x - u_y|_2,
 * t = u_x - u_y, and
 *   GAUSSIAN   exp(-r^2 / 2)
 *   LAPLACIAN  exp(-|t|_1)
 *   CAUCHY     prod_i 1 / (1 + t_i^2)
 *   MATERN     2^(1-nu) / Gamma(nu) (sqrt(2 nu) r)^nu K_nu(sqrt(2 nu) r)
 *              (Rasmussen & Williams 2006, eq. 4.14), 1 at r = 0; closed
 *              forms for nu = 1/2, 3/2, 5/2 (exp(-r), (1 + a) exp(-a) with
 *              a = sqrt(3) r, (1 + a + a^2 / 3) exp(-a) with a = sqrt(5) r),
 *              any other nu > 0 through the modified Bessel function K_nu
 *              (Temme's series for arguments below 2, Steed's continued
 *              fraction above, upward recurrence in the order; Temme, J.
 *              Comput. Phys. 19, 1975), relative accuracy about 1e-14.
 * nu is read for MATERN only (> 0). length_scales: d per-input scales
 * (ARD; each > 0, finite), copied, or NULL for the isotropic
 * length_scale (> 0). d is the input dimension the kernel is tied to: it
 * must be > 0 with length_scales; with NULL, 0 means any dimension.
 * Errors: RFX_EINVAL for an unknown kernel, a bad nu or scale (named),
 * RFX_EINVAL for length_scales with d = 0, RFX_ENOMEM. */
RFX_API rfx_status rfx_kern_shift(rfx_kernel kernel, double nu, double length_scale,
                                  const double *length_scales, size_t d, rfx_kern **out);

/* scikit-learn's rbf_kernel: exp(-gamma |x - y|^2), gamma > 0 (the
 * GAUSSIAN kernel with l = 1 / sqrt(2 gamma)). Any d. RFX_EINVAL for a
 * gamma that is not > 0 and finite. */
RFX_API rfx_status rfx_kern_rbf(double gamma, rfx_kern **out);

/* scikit-learn's laplacian_kernel: exp(-gamma |x - y|_1), gamma > 0 (the
 * LAPLACIAN kernel with l = 1 / gamma). Any d. */
RFX_API rfx_status rfx_kern_laplacian(double gamma, rfx_kern **out);

/* scikit-learn's polynomial_kernel: (gamma x.y + coef0)^degree, with
 * gamma > 0 and coef0 finite; degree 0 is the constant 1. Any d. With
 * coef0 >= 0 it is positive semi-definite (a polynomial with non-negative
 * coefficients in x.y: Schur's product theorem); coef0 < 0, which
 * scikit-learn also takes, is not in general (degree 1 with coef0 < 0 gives
 * a negative k(0, 0)), like the sigmoid kernel below. */
RFX_API rfx_status rfx_kern_polynomial(double gamma, double coef0, unsigned degree,
                                       rfx_kern **out);

/* scikit-learn's sigmoid_kernel: tanh(gamma x.y + coef0), gamma > 0 and
 * coef0 finite. NOT positive semi-definite in general (its Gram matrices
 * can have negative eigenvalues for any gamma and coef0: Lin & Lin 2003),
 * so kernel ridge with it may need a larger lambda and a Gaussian process
 * with it may fail (RFX_ENUMERIC). Any d. */
RFX_API rfx_status rfx_kern_sigmoid(double gamma, double coef0, rfx_kern **out);

/* The linear kernel x.y. Any d. */
RFX_API rfx_status rfx_kern_linear(rfx_kern **out);

/* The Kronecker delta: 1 when x == y in every coordinate, else 0 (white
 * noise as a kernel). Any d. */
RFX_API rfx_status rfx_kern_delta(rfx_kern **out);

/* The arc-cosine kernel of order n (Cho & Saul, "Kernel Methods for Deep
 * Learning", NIPS 2009): the kernel of the features
 *   sqrt(2 / D) step(w.x + b) (w.x + b)^n,  w ~ N(0, sigma^2 I), b ~ N(0, bias^2)
 * (order 1: ReLU features, order 0: step features), with x' = (sigma x, bias):
 *   k_n(x, y) = |x'|^n |y'|^n J_n(theta) / pi,  cos theta = x'.y' / (|x'| |y'|),
 *   J_0 = pi - theta,  J_1 = sin theta + (pi - theta) cos theta,
 *   J_2 = 3 sin theta cos theta + (pi - theta) (1 + 2 cos^2 theta).
 * order 0, 1 or 2; sigma > 0; bias >= 0 (0: no bias). Positive definite.
 * Any d. RFX_EINVAL naming a bad argument. For order 1 and bias 0 these are
 * the phase-free relu features (rfx_form) with weights N(0, sigma^2 I)
 * times sqrt(2/D): that map's scale is 1. */
RFX_API rfx_status rfx_kern_arccos(unsigned order, double sigma, double bias, rfx_kern **out);

/* The bilinear kernel x^T A y of a symmetric positive semi-definite d x d A
 * (row-major, copied): the linear kernel in the metric A (a Mahalanobis
 * inner product). RFX_EINVAL when A is not symmetric (to 1e-12 of its
 * largest entry) or has an eigenvalue below -1e-12 times its largest,
 * naming the eigenvalue; tied to d. */
RFX_API rfx_status rfx_kern_bilinear(const double *A, size_t d, rfx_kern **out);

/* The kernel z(x).z(y) of a feature map (any activation, structure or
 * sparsity): the kernel that random features realise, for comparing them
 * with the exact kernel. The map is copied (f may be freed after). Tied to
 * d = rfx_features_input_dim(f). Gram matrices cost one transform of each
 * tile's rows (2 d D flops per row) and a GEMM (2 D flops per entry).
 * RFX_EINVAL for a NULL f. */
RFX_API rfx_status rfx_kern_features(const rfx_features *f, rfx_kern **out);

/* Algebra: k = a + b, k = a b (both positive semi-definite when a and b
 * are: the Schur product theorem), k = c a with c >= 0 finite, k = exp(a)
 * (positive semi-definite when a is: a limit of sums of products), and the
 * warp k(x, y) = f(x) a(x, y) f(y) = D K D (positive semi-definite when a
 * is) with f a function the caller supplies; f must be thread-safe (Gram
 * matrices call it from several threads), return the same value for the
 * same x, and outlive the kernel; user is passed through. The operands
 * are referenced, not copied. The input dimension of a sum or product is
 * that of the operand tied to one (0 when neither is); operands tied to
 * different dimensions are RFX_EDIM. RFX_EINVAL for a NULL operand or f, a
 * negative or non-finite c. */
RFX_API rfx_status rfx_kern_sum(const rfx_kern *a, const rfx_kern *b, rfx_kern **out);
RFX_API rfx_status rfx_kern_product(const rfx_kern *a, const rfx_kern *b, rfx_kern **out);
RFX_API rfx_status rfx_kern_scale(double c, const rfx_kern *a, rfx_kern **out);
RFX_API rfx_status rfx_kern_exp(const rfx_kern *a, rfx_kern **out);
typedef double (*rfx_kern_weight_fn)(void *user, const double *x, size_t d);
RFX_API rfx_status rfx_kern_warp(const rfx_kern *a, rfx_kern_weight_fn f, void *user,
                                 rfx_kern **out);

/* Drop a reference; NULL is a no-op. Operands may be freed right after
 * building a combination: the combination keeps them alive. */
RFX_API void rfx_kern_free(rfx_kern *k);

/* The input dimension d a kernel is tied to (ARD length scales, a feature
 * map), or 0 when it takes any d (also for NULL). */
RFX_API size_t rfx_kern_input_dim(const rfx_kern *k);

/* k(x, y) for two points of dimension d, O(d) (a feature kernel: O(d D)).
 * The value the Gram matrices hold up to rounding (they compute distances
 * and inner products by GEMM). NaN when k, x or y is NULL, d is 0 or does
 * not match the kernel's input dimension, or (feature kernels) a workspace
 * of 2 D doubles cannot be allocated: the only way this function reports
 * errors. Non-finite inputs give a NaN or meaningless value. A Matern
 * kernel of general nu costs O(nu) more (the recurrence in the order). */
RFX_API double rfx_kern_eval(const rfx_kern *k, const double *x, const double *y, size_t d);

/* K = k(X, Y): K(i, j) = k(X_i, Y_j), K is X.rows x Y.rows (caller-
 * allocated, any stride, must not overlap X or Y); X and Y have the same
 * number d >= 1 of columns (matching the kernel's input dimension when it
 * is tied to one); zero rows are allowed (nothing is written). Blocked in
 * 64 x 64 tiles, OpenMP over the tiles, bitwise the same for any n_threads
 * (0 = default, >= 0). Squared distances by |x|^2 + |y|^2 - 2 x.y through
 * GEMM, never negative, exactly 0 for identical rows (see the top of this
 * header). Cost: 2 d flops per entry and GEMM leaf plus the kernel's
 * elementwise work (a Matern kernel of general nu: a Bessel function per
 * entry, some 100 ns); workspace: a scaled copy of X and Y per distance
 * leaf, 2 x 64 x D doubles per thread for a feature leaf, a 64 x 64 tile
 * per thread and level of algebra.
 * Errors: RFX_EINVAL (NULL kernel, bad views, n_threads < 0), RFX_EDIM
 * (column counts, shape of K), RFX_EPARSE (a NaN or Inf in X or Y, with its row and
 * column), RFX_EINVAL (a warp's f returned a value that is not finite),
 * RFX_ENOMEM. */
RFX_API rfx_status rfx_kern_gram(const rfx_kern *k, rfx_cmat X, rfx_cmat Y, rfx_mat K,
                                 int n_threads);

/* K = k(X, X), n x n, exactly symmetric: the tiles on and above the
 * diagonal are computed and mirrored; distance kernels get exactly 0
 * squared distance on the diagonal (so k(x, x) is exactly 1 for the
 * shift-invariant ones). About half the cost of rfx_kern_gram. Errors as
 * there. */
RFX_API rfx_status rfx_kern_gram_sym(const rfx_kern *k, rfx_cmat X, rfx_mat K, int n_threads);

/* diag[i] = k(X_i, X_i) for the n rows of X (n values; written only on
 * success). O(n d) (a feature kernel: O(n d D)). Errors as rfx_kern_gram,
 * RFX_EINVAL for a NULL diag or a value that is not finite. */
RFX_API rfx_status rfx_kern_diag(const rfx_kern *k, rfx_cmat X, double *diag);

/* ------------------------------------------------------------------------ */
/* Kernel ridge regression                                                   */
/* ------------------------------------------------------------------------ */

/* Kernel ridge regression (Saunders, Gammerman & Vovk, ICML 1998): the
 * dual coefficients A (n x ny) solve (K + lambda I) A = Y with K = k(X, X),
 * by Cholesky; predictions are f(x) = k(x, X) A. No intercept (centre Y
 * first if wanted): scikit-learn's KernelRidge(alpha=lambda). Holds a copy
 * of the training rows X and a reference to k. */
typedef struct rfx_krr rfx_krr;

/* Fit on X (n x d) and Y (n x ny), lambda >= 0 (0 needs K positive
 * definite). Cost O(n^2 d) for K and n^3 / 3 for the factorisation (which
 * runs on one thread so that the result does not depend on n_threads; the
 * Gram matrix is threaded); memory n^2 doubles.
 * Errors: RFX_EINVAL (NULL k or out, lambda < 0 or not finite, no rows),
 * RFX_EDIM (Y.rows != X.rows, d not the kernel's), RFX_EPARSE (NaN or Inf
 * in X or Y), RFX_ENUMERIC (K + lambda I not positive definite),
 * RFX_EOVERFLOW, RFX_ENOMEM. */
RFX_API rfx_status rfx_krr_fit(const rfx_kern *k, rfx_cmat X, rfx_cmat Y, double lambda,
                               int n_threads, rfx_krr **out);

/* The same with row weights w (n values, finite, >= 0, not all zero; NULL:
 * rfx_krr_fit, bit for bit): min sum_i w_i |y_i - f(x_i)|^2 + lambda
 * |f|^2_H, whose coefficients are A = S (S K S + lambda I)^-1 S Y with S =
 * diag(sqrt(w)), as scikit-learn's KernelRidge(alpha=lambda) fits with
 * sample_weight. A row of weight 0 gets coefficient 0 (it is left out);
 * with lambda = 0 every weight must be > 0. Errors as rfx_krr_fit, and
 * RFX_EINVAL naming the first bad weight ("krr_fit.sample_weight[i]"). */
RFX_API rfx_status rfx_krr_fit_weighted(const rfx_kern *k, rfx_cmat X, rfx_cmat Y, double lambda,
                                        const double *w, int n_threads, rfx_krr **out);

/* Yhat (m x ny) = k(X, X_train) A for X (m x d). Cost O(m n (d + ny)).
 * Errors: RFX_EINVAL, RFX_EDIM, RFX_EPARSE as rfx_kern_gram. */
RFX_API rfx_status rfx_krr_predict(const rfx_krr *m, rfx_cmat X, rfx_mat Yhat);

/* The dual coefficients A (n x ny), owned by m (rfx_cmat_none() for NULL). */
RFX_API rfx_cmat rfx_krr_dual_coef(const rfx_krr *m);

/* Release a model (and its reference to the kernel); NULL is a no-op. */
RFX_API void rfx_krr_free(rfx_krr *m);

/* ------------------------------------------------------------------------ */
/* Gaussian process regression                                               */
/* ------------------------------------------------------------------------ */

/* Gaussian process regression (Rasmussen & Williams 2006, Algorithm 2.1)
 * with prior f ~ GP(0, s2 k) and Gaussian noise of variance noise_var:
 * C = s2 K + noise_var I, alpha = C^-1 y, mean f(x*) = s2 k(x*, X) alpha,
 * latent variance s2 k(x*, x*) - s2^2 k(x*, X) C^-1 k(X, x*), noisy
 * variance latent + noise_var, and
 *   log p(y) = -y^T alpha / 2 - log det C / 2 - n log(2 pi) / 2.
 * With normalize_y, y is standardised first (mean, population standard
 * deviation; a zero deviation counts as 1) and predictions are mapped back,
 * as scikit-learn's GaussianProcessRegressor(normalize_y=True); the log
 * marginal likelihood is then that of the standardised targets.
 *
 * Fitting the variances (noise_var or amplitude <= 0): maximise log p(y)
 * over them with one eigendecomposition K = U diag(l) U^T. With
 * c = U^T y, log p(y) = -sum c_i^2 / (s2 l_i + noise) / 2
 * - sum log(s2 l_i + noise) / 2 - n log(2 pi) / 2 costs O(n) per
 * evaluation. The search runs over the ratio r = noise / s2: both fitted,
 * the best s2 for a fixed r is sum c_i^2 / (l_i + r) / n in closed form and
 * this profile is maximised over log r; one fitted, the other is held and
 * the fitted one follows from r. The search is a grid of 8 points per
 * decade of r / mean(diag K) in [ratio_min, ratio_max], refined by
 * golden-section search to 1e-10 in log r (a maximum at the range's end
 * stays there). Eigenvalues below 0 (rounding) count as 0 in the search.
 * Then C is factorised by Cholesky and the reported log p(y) is from that
 * factor.
 *
 * Without noise (noise_free = 1: interpolation, C = s2 K) a fitted s2 is
 * y^T K^-1 y / n in closed form (K with its jitter) and no
 * eigendecomposition is needed.
 *
 * Jitter: C is accepted when its Cholesky factorisation succeeds with every
 * pivot R_ii^2 > n eps max(diag C) (eps the double precision epsilon). When
 * it is not (no noise or a tiny one with a singular K, e.g. duplicated
 * rows),
 * jitter j = jitter_initial x mean(diag C) is added to the diagonal of C
 * and the factorisation retried, j multiplied by jitter_factor after each
 * failure, up to jitter_max x mean(diag C); beyond that the fit fails with
 * RFX_ENUMERIC. The defaults try 1e-10, 1e-9, ..., 1e-4 x mean(diag C).
 * The jitter enters alpha, the posterior variances and log p(y) (as
 * scikit-learn's alpha does) but not the noisy variance's noise term;
 * rfx_gp_get_info reports it. */
typedef struct rfx_gp rfx_gp;

typedef struct rfx_gp_params {
    double noise_var;      /* > 0 given, <= 0 fitted (default 0)             */
    double amplitude;      /* s2, the signal variance multiplier of k: > 0
                              given, <= 0 fitted (default 0)                */
    int noise_free;        /* 1: no noise at all, noise_var is ignored
                              (interpolation of exact data, relying on the
                              jitter when K is singular); default 0        */
    int normalize_y;       /* default 1                                      */
    double ratio_min;      /* the search range of noise / (s2 mean(diag K))
                              when fitting; 0 < ratio_min < ratio_max,
                              defaults 1e-8 and 1e2                          */
    double ratio_max;
    double jitter_initial; /* first jitter, relative to mean(diag C): 1e-10 */
    double jitter_factor;  /* growth per retry, > 1: 10                      */
    double jitter_max;     /* largest relative jitter tried: 1e-4           */
    int n_threads;         /* for the Gram matrices; 0 = OpenMP default     */
} rfx_gp_params;

/* The defaults documented in the struct (both variances fitted). */
RFX_API rfx_gp_params rfx_gp_params_default(void);

/* Fit on X (n x d) and y (n values); params NULL means the defaults. Holds
 * a copy of X and a reference to k. Cost O(n^2 d) for K, n^3 / 3 for the
 * Cholesky factor, and about 4 to 9 n^3 flops more for the
 * eigendecomposition when a variance is fitted (LAPACK dsyevd; not with
 * noise_free); memory 2 n^2 doubles. The dense
 * factorisations run on one thread (results do not depend on n_threads).
 * Errors: RFX_EINVAL (NULL arguments, no rows, a bad params field, named;
 * constant y when s2 is fitted), RFX_EDIM (d not the kernel's), RFX_EPARSE
 * (NaN or Inf in X or y), RFX_ENUMERIC (not positive definite within the
 * jitter policy; a kernel whose mean diagonal is not > 0 when variances
 * are fitted), RFX_EOVERFLOW, RFX_ENOMEM. */
RFX_API rfx_status rfx_gp_fit(const rfx_kern *k, rfx_cmat X, const double *y,
                              const rfx_gp_params *params, rfx_gp **out);

/* For the m rows of X: the posterior mean, and the standard deviations of
 * the latent f(x*) and of the noisy y* (each an array of m values; the std
 * arrays may be NULL). Cost O(m n d) + O(m n^2) for the deviations.
 * Errors: RFX_EINVAL (NULL gp or mean), RFX_EDIM, RFX_EPARSE. */
RFX_API rfx_status rfx_gp_predict(const rfx_gp *gp, rfx_cmat X, double *mean,
                                  double *std_latent, double *std_noisy);

/* log p(y) of the fit (of the standardised y with normalize_y), NaN for
 * NULL. */
RFX_API double rfx_gp_log_marginal_likelihood(const rfx_gp *gp);

typedef struct rfx_gp_info {
    double noise_var;      /* used (given or fitted), in standardised units
                              with normalize_y                              */
    double amplitude;      /* s2 used                                         */
    double jitter;         /* absolute jitter added to diag C (0 when none)  */
    double log_marginal_likelihood;
    double y_mean, y_std;  /* the standardisation (0 and 1 without)          */
    size_t n_train;
} rfx_gp_info;

/* What the fit used and found. RFX_EINVAL for NULL arguments. */
RFX_API rfx_status rfx_gp_get_info(const rfx_gp *gp, rfx_gp_info *info);

/* A GP with the isotropic shift-invariant kernel of rfx_kern_shift (kernel,
 * nu) whose length scale is chosen from grid (n_grid values, each > 0 and
 * finite) by the log marginal likelihood: one rfx_gp_fit per value (with
 * params, so variances left open are fitted for each), the fit with the
 * largest LML kept (the first on ties); *length_scale (may be NULL) gets
 * its length scale. Fits that fail numerically (RFX_ENUMERIC) are skipped;
 * when all do, that is the error. Cost: n_grid fits. Errors as
 * rfx_gp_fit and rfx_kern_shift, RFX_EINVAL for a NULL or empty grid or a
 * bad value in it (named). */
RFX_API rfx_status rfx_gp_fit_length_scale(rfx_kernel kernel, double nu, const double *grid,
                                           size_t n_grid, rfx_cmat X, const double *y,
                                           const rfx_gp_params *params, rfx_gp **out,
                                           double *length_scale);

/* Release a GP (and its reference to the kernel); NULL is a no-op. */
RFX_API void rfx_gp_free(rfx_gp *gp);

#ifdef __cplusplus
}
#endif

#endif /* RFX_KERNELS_H */
