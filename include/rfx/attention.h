/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/attention.h - random features for the softmax kernel and
 * linear-time attention: positive features (Choromanski et al.,
 * "Rethinking Attention with Performers", ICLR 2021: FAVOR+), and the
 * trigonometric features of Random Feature Attention (Peng et al., ICLR
 * 2021) with its gated recurrent form. Part of the public API (rfx.h
 * includes it).
 *
 * The softmax kernel SM(x, y) = exp(x.y) on R^d is, for w ~ N(0, I),
 *
 *     exp(x.y) = E_w[ exp(w.x - |x|^2/2) exp(w.y - |y|^2/2) ]
 *              = E_w[ exp(-(|x|^2 + |y|^2)/2) cosh(w.(x + y)) ],
 *
 * (E exp(w.z) = exp(|z|^2 / 2)), so with D draws the positive features
 *
 *     phi(x) = exp(w_j.x - |x|^2/2)_{j=1..D} / sqrt(D)
 *
 * give phi(x).phi(y) -> exp(x.y), an unbiased estimate whose terms are all
 * positive (unlike sin / cos features, whose estimate of exp(x.y) can be
 * negative and makes the attention normaliser unstable). The hyperbolic
 * variant uses F = D/2 draws and phi(x) = exp(-|x|^2/2) [exp(w_j.x);
 * exp(-w_j.x)] / sqrt(D), also positive, with lower variance for small
 * |x + y|. Orthogonal draws (blocks of d directions of a Haar orthogonal
 * matrix, each row scaled by an independent chi_d draw so that it has the
 * length law of a Gaussian vector) keep the estimate unbiased and lower its
 * variance (Performers, Theorem 2).
 *
 * Scaling: the attention of transformers is softmax(Q K^T / sqrt(d)). The
 * functions here compute softmax(Q K^T) with the inputs as given: pass
 * Q / d^(1/4) and K / d^(1/4) for the usual convention. The variance of
 * the estimate grows like exp(|x + y|^2), so keep |q|, |k| moderate.
 */
#ifndef RFX_ATTENTION_H
#define RFX_ATTENTION_H

#include "rfx/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A sampled positive feature map of the softmax kernel: d inputs, D
 * outputs, frequencies W (F x d; F = D, or D/2 for the hyperbolic map). */
typedef struct rfx_softmax_features rfx_softmax_features;

/* Sample the positive map phi(x) = exp(W x - |x|^2/2) / sqrt(D) for inputs
 * of dimension d (d >= 1, D >= 1). orthogonal = 0: the rows of W are
 * independent N(0, I) draws, row j from the counter-based stream (seed, j);
 * orthogonal = 1: W is made of blocks of d rows (the last block cut short),
 * block k the rows of Q diag(sign(diag R)) from the QR factorisation of a
 * d x d Gaussian matrix of the stream (seed, k) (LAPACK dgeqrf / dorgqr;
 * a Haar-distributed orthogonal matrix), row i scaled by an independent
 * chi_d draw. Cost: F d normal draws, and F d^2 flops for the orthogonal
 * blocks. Errors: RFX_EINVAL (d or D zero, out NULL), RFX_EOVERFLOW (F x d,
 * or d beyond the LAPACK integer range for orthogonal blocks), RFX_ENOMEM. */
RFX_API rfx_status rfx_softmax_features_create(size_t d, size_t D, uint64_t seed, int orthogonal,
                                               rfx_softmax_features **out);

/* The hyperbolic map phi(x) = exp(-|x|^2/2) [exp(W x); exp(-W x)] / sqrt(D)
 * with F = D/2 frequencies drawn as above (D even; RFX_EINVAL otherwise):
 * columns 0..F-1 hold exp(w_j.x), columns F..D-1 exp(-w_j.x). */
RFX_API rfx_status rfx_softmax_features_create_hyperbolic(size_t d, size_t D, uint64_t seed,
                                                          int orthogonal,
                                                          rfx_softmax_features **out);

/* The trigonometric map phi(x) = exp(|x|^2/2) [cos(W x); sin(W x)] /
 * sqrt(F) with F = D/2 frequencies drawn as above (D even): E phi(x).phi(y)
 * = exp((|x|^2 + |y|^2)/2) E cos(w.(x - y)) = exp(x.y), the softmax
 * kernel's estimate through the Gaussian kernel's random Fourier features.
 * For queries and keys of one norm r (e.g. l2-normalised and scaled by
 * 1 / sigma) the factor exp(r^2/2) cancels in the attention, and this is
 * Random Feature Attention (Peng et al., "Random Feature Attention", ICLR
 * 2021), sigma its temperature. Unlike the positive maps, its estimate of a
 * weight can be negative, so a row's normaliser can come out <= 0 (then
 * RFX_ENUMERIC): bench/results/attention_norms.md measures both against the
 * input norm. Columns 0..F-1 hold the cosines, F..D-1 the sines; the
 * transform's log_scale is |x|^2/2. */
RFX_API rfx_status rfx_softmax_features_create_trig(size_t d, size_t D, uint64_t seed,
                                                    int orthogonal, rfx_softmax_features **out);

RFX_API void rfx_softmax_features_free(rfx_softmax_features *sf);

RFX_API size_t rfx_softmax_features_input_dim(const rfx_softmax_features *sf);  /* d */
RFX_API size_t rfx_softmax_features_output_dim(const rfx_softmax_features *sf); /* D */

/* The frequencies W (F x d), owned by sf. */
RFX_API rfx_cmat rfx_softmax_features_frequencies(const rfx_softmax_features *sf);

/* Threads used by transforms of this map (0, the default, = OpenMP's). */
RFX_API void rfx_softmax_features_set_threads(rfx_softmax_features *sf, int n_threads);

/* Phi = phi(X) for the rows of X (n x d); Phi is n x D (caller-allocated,
 * any strides).
 *
 * log_scale NULL: the features as defined. Their exponent w.x - |x|^2/2
 * is at most |w|^2/2, so they overflow only when |w|^2 > 1418 (about d >
 * 1300 for Gaussian w; then RFX_ENUMERIC, naming the row, and Phi holds
 * unspecified values), but a row underflows to zeros once |x|^2/2 - w_j.x
 * > 745 for every j (|x| of 40 or so). log_scale non-NULL (n values): the
 * stabilised features, row i divided by exp(m_i) with m_i the row's largest
 * exponent, so that Phi's largest entry in each row is 1 / sqrt(D) and
 * phi(x_i) = exp(log_scale[i]) Phi_i, log_scale[i] = m_i; never overflows,
 * never a row of zeros.
 *
 * Cost: 2 n d F flops (one GEMM per tile of 64 rows) and n D exponentials;
 * OpenMP over the tiles, the same bits for any thread count. Errors:
 * RFX_EINVAL (NULL sf, bad views), RFX_EDIM (X not n x d, Phi not n x D),
 * RFX_EPARSE (NaN / Inf in X, row and column named), RFX_ENUMERIC. */
RFX_API rfx_status rfx_softmax_features_transform(const rfx_softmax_features *sf, rfx_cmat X,
                                                  rfx_mat Phi, double *log_scale);

/* Linear attention with the random features (FAVOR+):
 *
 *     Out = diag(phi(Q) phi(K)^T 1)^-1 phi(Q) (phi(K)^T V),
 *
 * row i of Out a weighted mean of the rows of V with weights
 * phi(q_i).phi(k_j) > 0, an estimate of the softmax weights exp(q_i.k_j) /
 * sum_l exp(q_i.k_l). Q is Lq x d, K is Lk x d, V is Lk x dv, Out Lq x dv
 * (any strides; Out must not overlap the inputs). causal = 1 (Lq = Lk):
 * row i only attends to keys j <= i, by prefix sums.
 *
 * The L x L matrix is never formed. Non-causal: S = phi(K)^T [V 1]
 * (D x (dv + 1)) by chunks of keys (fixed per Lk, partial sums added in
 * order), then each query row's phi(q) S. Causal: chunks of 64 rows; the
 * sums of the chunks before a chunk (an exclusive prefix, added in order)
 * give the earlier keys' part, a masked 64 x 64 block phi(Q_c) phi(K_c)^T
 * the chunk's own. Cost O((Lq + Lk) D (d + dv)) plus, causal, 64 L D;
 * memory 8 D (dv + 1) bytes per chunk of keys for the sums and a few tiles
 * of D values per thread. OpenMP over chunks: the same bits for any
 * n_threads (0 = OpenMP default).
 *
 * Stabilisation: each query's features are divided by exp(its largest
 * exponent), which cancels between numerator and denominator of its row.
 * Each key's features are divided by exp(M) where M is the largest
 * exponent of all keys (non-causal) or of the keys so far (causal: a
 * running maximum per row, the sums rescaled when it grows, as the online
 * softmax does), a factor common to numerator and denominator. Large
 * inputs, whose plain features underflow to rows of zeros (0 / 0), therefore
 * give finite outputs, but keys whose exponents lie more than about 745
 * below M underflow to zero weight. A row whose weights all
 * underflow has no defined output: RFX_ENUMERIC naming it (Out then holds
 * unspecified values).
 *
 * Errors: RFX_EINVAL (NULL sf, bad views, n_threads < 0), RFX_EDIM (shapes;
 * no keys; dv = 0; causal with Lq != Lk), RFX_EPARSE (NaN / Inf in Q, K or
 * V), RFX_EOVERFLOW / RFX_ENOMEM (workspace), RFX_ENUMERIC (above). */
RFX_API rfx_status rfx_attention_linear(const rfx_softmax_features *sf, rfx_cmat Q, rfx_cmat K,
                                        rfx_cmat V, rfx_mat Out, int causal, int n_threads);

/* Gated causal attention (Random Feature Attention's recurrent form, Peng
 * et al. 2021, section 3.2): with one gate g_t in [0, 1] per position (Lq =
 * Lk = L),
 *
 *     S_t = g_t S_{t-1} + (1 - g_t) phi(k_t) v_t^T,
 *     z_t = g_t z_{t-1} + (1 - g_t) phi(k_t),
 *     out_t = phi(q_t)^T S_t / phi(q_t)^T z_t,
 *
 * so that key j's weight at t is its feature estimate of exp(q_t.k_j)
 * times (1 - g_j) prod_{j < l <= t} g_l: the gates forget the past (g = 0
 * attends to the current key alone; g_t = t / (t + 1) is ungated causal
 * attention). Sequential over t, O(L D (d + dv)) time and O(D dv) memory;
 * stabilised as rfx_attention_linear (a running maximum of the keys'
 * exponents). Errors: those of rfx_attention_linear, and RFX_EINVAL for a
 * gate outside [0, 1] (named) or NULL gates with L > 0; RFX_ENUMERIC
 * naming the first row whose normaliser is not positive (Out then holds
 * unspecified values in that row). */
RFX_API rfx_status rfx_attention_gated(const rfx_softmax_features *sf, rfx_cmat Q, rfx_cmat K,
                                       rfx_cmat V, const double *gates, rfx_mat Out,
                                       int n_threads);

/* Exact attention, Out = softmax(Q K^T) V row by row (keys j <= i only when
 * causal), each row's softmax stabilised by its largest score: O(Lq Lk d +
 * Lq Lk dv) time, a tile of 64 x Lk scores per thread (one GEMM per tile),
 * the same bits for any n_threads. Shapes and errors as
 * rfx_attention_linear (without the numerical failure: the largest weight
 * of each row is 1). */
RFX_API rfx_status rfx_attention_exact(rfx_cmat Q, rfx_cmat K, rfx_cmat V, rfx_mat Out,
                                       int causal, int n_threads);

#ifdef __cplusplus
}
#endif

#endif /* RFX_ATTENTION_H */
