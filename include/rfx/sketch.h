/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/sketch.h - feature maps of kernels that are not shift-invariant:
 * dot-product kernels (Tensor Sketch, random Maclaurin features) and the
 * chi-squared kernels of histograms (additive and skewed chi2), the maps of
 * scikit-learn's kernel_approximation module. Included by rfx.h.
 *
 * One object, rfx_sketch, holds any of the four maps; params.kind chooses.
 * Every map z satisfies z(x).z(y) ~ k(x, y) for the kernel k below
 * (exactly in expectation over the seed for the random ones):
 *
 *  TENSOR         k = (gamma <x, y> + coef0)^degree         (polynomial)
 *      Tensor Sketch (Pham & Pagh, "Fast and scalable polynomial kernels
 *      via explicit feature maps", KDD 2013), scikit-learn's
 *      PolynomialCountSketch. u = [sqrt(gamma) x, sqrt(coef0)] (the last
 *      entry only when coef0 != 0), d' its length. `degree` count sketches
 *      C_t(u)[k] = sum_{j: h_t(j) = k} s_t(j) u_j, t = 1..degree, with
 *      hashes h_t: [d'] -> [D] and signs s_t: [d'] -> {-1, 1} drawn from
 *      (seed, t); z(x) = C_1(u) * C_2(u) * ... * C_degree(u), the circular
 *      convolution of the sketches (length D). E[z(x).z(y)] = <u_x, u_y>^degree.
 *      Cost per row: when D is a power of two >= 256, degree complex FFTs
 *      of length D and one inverse, O(degree D log D); otherwise the
 *      convolutions directly, each sketch having at most d' nonzeros:
 *      O((degree - 1) D d').
 *
 *  MACLAURIN      k = f(<x, y>) = sum_n a_n <x, y>^n, a_n >= 0
 *      Random Maclaurin features (Kar & Karnick, "Random feature maps for
 *      dot product kernels", AISTATS 2012), for
 *        DOT_KERNEL_POLYNOMIAL   f(t) = (gamma t + coef0)^degree,
 *                                a_n = C(degree, n) gamma^n coef0^(degree-n)
 *        DOT_KERNEL_EXPONENTIAL  f(t) = exp(gamma t), a_n = gamma^n / n!
 *      (gamma > 0, coef0 >= 0). Feature j draws an order N_j with
 *      P(N = n) = 1 / p^(n+1), p = 2 (N_j <= 62), and N_j Rademacher
 *      vectors w_1 .. w_N in {-1, 1}^d, all from (seed, j), and is
 *        z_j(x) = sqrt(a_N p^(N+1) / D) prod_{i=1..N} <w_i, x>
 *      (the empty product is 1): E[z(x).z(y)] = f(<x, y>). Features whose
 *      a_N is 0 (N > degree) are 0. Cost per row: O(D d E[N]) = O(D d).
 *
 *  ADDITIVE_CHI2  k = sum_i 2 x_i y_i / (x_i + y_i)   (0 when both are 0), x >= 0
 *      The sampled map of Vempati, Vedaldi, Zisserman & Jawahar
 *      ("Generalized RBF feature maps for efficient detection", BMVC
 *      2010), scikit-learn's AdditiveChi2Sampler: deterministic, with
 *      steps n = sample_steps and interval L = sample_interval, the
 *      d (2 n - 1) columns
 *        [ sqrt(L x) | c_1 cos(1 L log x) | c_1 sin(1 L log x) | ... ]
 *      in blocks of d (block 0, then the cos and sin blocks of j = 1 ..
 *      n-1), c_j = sqrt(2 L x / cosh(pi j L)), each entry 0 where x_i = 0.
 *      Then z(x).z(y) = sum_i sqrt(x_i y_i) L [1 + 2 sum_{j<n}
 *      sech(pi j L) cos(j L log(x_i / y_i))], the rectangle rule of
 *      2 x y / (x + y) = sqrt(x y) int sech(pi t) e^(i t log(x / y)) dt;
 *      its error is a fraction of sum_i sqrt(x_i y_i) set by (n, L). The
 *      default L is scikit-learn's: 0.8, 0.5, 0.4 for n = 1, 2, 3; give
 *      L > 0 for n > 3. n_components and seed are not used.
 *
 *  SKEWED_CHI2    k = prod_i 2 sqrt(x_i + c) sqrt(y_i + c) / (x_i + y_i + 2 c),  x > -c
 *      Random Fourier features of the skewed chi2 kernel (Li, Ionescu &
 *      Sminchisescu, "Random Fourier approximations for skewed
 *      multiplicative histogram kernels", DAGM 2010), scikit-learn's
 *      SkewedChi2Sampler, c = skewedness > 0:
 *        z_j(x) = sqrt(2 / D) cos(sum_i log(x_i + c) W_ji + b_j),
 *      W_ji = log(tan(pi u / 2)) / pi (u ~ U(0, 1): the hyperbolic secant
 *      density, the kernel's spectrum in log(x + c)), b_j ~ U(0, 2 pi),
 *      drawn from (seed, j). Cost per row: O(D d).
 *
 * Reproducibility: the random maps depend only on (params, d); feature j
 * (Maclaurin, skewed chi2) or sketch t (Tensor Sketch) only on (seed, j)
 * or (seed, t). A row's features depend only on that row: transforms are
 * bitwise independent of the thread count and of the other rows.
 */
#ifndef RFX_SKETCH_H
#define RFX_SKETCH_H

#include "rfx/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rfx_sketch_kind {
    RFX_SKETCH_TENSOR = 0,
    RFX_SKETCH_MACLAURIN = 1,
    RFX_SKETCH_ADDITIVE_CHI2 = 2,
    RFX_SKETCH_SKEWED_CHI2 = 3
} rfx_sketch_kind;

/* The dot-product kernels of the random Maclaurin features. */
typedef enum rfx_dot_kernel {
    RFX_DOT_KERNEL_POLYNOMIAL = 0,
    RFX_DOT_KERNEL_EXPONENTIAL = 1
} rfx_dot_kernel;

typedef struct rfx_sketch_params {
    rfx_sketch_kind kind;       /* TENSOR                                     */
    size_t n_components;        /* D >= 1 (TENSOR, MACLAURIN, SKEWED_CHI2); 100 */
    double gamma;               /* > 0 (TENSOR, MACLAURIN); 1                  */
    double coef0;               /* >= 0 (TENSOR, MACLAURIN polynomial); 0      */
    int degree;                 /* >= 1 (TENSOR, MACLAURIN polynomial); 2      */
    rfx_dot_kernel dot_kernel;  /* MACLAURIN; POLYNOMIAL                      */
    double skewedness;          /* c > 0 (SKEWED_CHI2); 1                     */
    int sample_steps;           /* n >= 1 (ADDITIVE_CHI2); 2                  */
    double sample_interval;     /* L > 0, or 0 for the default of n <= 3; 0    */
    uint64_t seed;              /* 0                                          */
    int n_threads;              /* >= 0, 0 = OpenMP default; 0                */
} rfx_sketch_params;

RFX_API rfx_sketch_params rfx_sketch_params_default(void);

typedef struct rfx_sketch rfx_sketch;

/* Sample the map of p for inputs of d >= 1 columns.
 * Errors: RFX_EINVAL for NULL p or out, or a parameter field out of its
 * range above (the message names the field); RFX_EDIM for d = 0;
 * RFX_EOVERFLOW when the output width overflows; RFX_ENOMEM. */
RFX_API rfx_status rfx_sketch_create(const rfx_sketch_params *p, size_t d, rfx_sketch **out);

RFX_API void rfx_sketch_free(rfx_sketch *s);

/* Z = z(X): X is n x d, Z is n x rfx_sketch_n_features(s) (caller-
 * allocated, any strides). Errors: RFX_EINVAL for NULL s or bad views;
 * RFX_EDIM for wrong shapes; RFX_EPARSE for a non-finite entry of X, a
 * negative one (ADDITIVE_CHI2) or one at or below -skewedness
 * (SKEWED_CHI2), naming its row and column; RFX_ENOMEM. */
RFX_API rfx_status rfx_sketch_transform(const rfx_sketch *s, rfx_cmat X, rfx_mat Z);

/* The output width: D, or d (2 sample_steps - 1) for ADDITIVE_CHI2. */
RFX_API size_t rfx_sketch_n_features(const rfx_sketch *s);

/* The input dimension d. */
RFX_API size_t rfx_sketch_input_dim(const rfx_sketch *s);

/* The parameters (sample_interval resolved to the value used). */
RFX_API rfx_sketch_params rfx_sketch_get_params(const rfx_sketch *s);

/* K[a][b] = k(X[a], Y[b]), the kernel the map approximates, computed
 * exactly (X n x d, Y m x d, K n x m). The input checks of
 * rfx_sketch_transform, for X and Y. */
RFX_API rfx_status rfx_sketch_exact_kernel(const rfx_sketch *s, rfx_cmat X, rfx_cmat Y,
                                           rfx_mat K);

/* The name of a kind ("tensor", "maclaurin", "additive-chi2",
 * "skewed-chi2") or dot kernel ("polynomial", "exponential"), and the
 * reverse look-ups (RFX_EINVAL for an unknown name). */
RFX_API const char *rfx_sketch_kind_name(rfx_sketch_kind kind);
RFX_API rfx_status rfx_sketch_kind_from_name(const char *name, rfx_sketch_kind *out);
RFX_API const char *rfx_dot_kernel_name(rfx_dot_kernel kernel);
RFX_API rfx_status rfx_dot_kernel_from_name(const char *name, rfx_dot_kernel *out);

#ifdef __cplusplus
}
#endif

#endif /* RFX_SKETCH_H */
