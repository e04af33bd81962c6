/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/features.h - random Fourier feature maps: kernels, forms, activations,
 * structures; sampling and the fused transform.
 */
#ifndef RFX_FEATURES_H
#define RFX_FEATURES_H

#include "rfx/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Random Fourier features                                                   */
/* ------------------------------------------------------------------------ */

/* Shift-invariant kernels and their spectral densities (Bochner's theorem).
 * With scaled inputs u = x / l (l the length scale, or one per dimension)
 * and r = |u_x - u_y|_2, t = u_x - u_y:
 *
 *  GAUSSIAN   k = exp(-r^2 / 2)              w ~ N(0, I) / l
 *  LAPLACIAN  k = exp(-|t|_1)                w_i ~ Cauchy(0, 1) / l_i
 *  CAUCHY     k = prod_i 1 / (1 + t_i^2)     w_i ~ Laplace(0, 1) / l_i
 *  MATERN     k = 2^(1-nu)/Gamma(nu) (sqrt(2 nu) r)^nu K_nu(sqrt(2 nu) r)
 *             w ~ multivariate Student-t, 2 nu degrees of freedom, / l;
 *             closed forms for nu = 1/2, 3/2, 5/2 (exp(-r) for nu = 1/2).
 *
 *  CUSTOM     k = E_p cos(w.t)               w ~ p / l, p the user's
 *             density, drawn by rfx_features_params.spectral (below).
 *             rfx does not know k: the exact kernels
 *             (rfx_features_exact_kernel, rfx_kern_shift, ...) refuse it;
 *             the structures other than IID, sparsity and the NORMAL /
 *             UNIFORM weights too.
 *             Model files store W as for every map (format version 3); a
 *             loaded map has no sampler (spectral NULL) and transforms as
 *             the saved one did.
 *
 * scikit-learn's gamma: rbf_kernel is exp(-gamma |x-y|^2), i.e. GAUSSIAN with
 * l = 1 / sqrt(2 gamma); laplacian_kernel is exp(-gamma |x-y|_1), i.e.
 * LAPLACIAN with l = 1 / gamma. Setting gamma > 0 in rfx_features_params uses
 * that meaning (GAUSSIAN and LAPLACIAN only). */
typedef enum rfx_kernel {
    RFX_KERNEL_GAUSSIAN = 0,
    RFX_KERNEL_LAPLACIAN = 1,
    RFX_KERNEL_CAUCHY = 2,
    RFX_KERNEL_MATERN = 3,
    RFX_KERNEL_CUSTOM = 4
} rfx_kernel;

/* The feature forms. The first two, both with E[z(x).z(y)] = k(x, y):
 *  COS_BIAS    z_j(x) = sqrt(2/D) cos(w_j.x + b_j), b_j ~ U(0, 2 pi),
 *              j = 0..D-1: D frequencies, D outputs.
 *  COS_SIN     z(x) = sqrt(2/D) [cos(w_1.x) .. cos(w_F.x), sin(w_1.x) ..
 *              sin(w_F.x)], F = D/2 frequencies, D outputs (D even): the
 *              cosines in columns 0..F-1, the sines in columns F..D-1.
 *              Lower variance than COS_BIAS at equal D (Sutherland &
 *              Schneider 2015).
 *  PHASE_FREE  z_j(x) = phi(w_j.x), b_j = 0: the kitchen-sink feature
 *              tanh(w^T x) of Rahimi & Recht without a phase, for the
 *              activations other than cos (rfx_activation), in the COS_BIAS
 *              layout (D frequencies, D outputs) and the activation's scale
 *              (1). cos(w.x) alone is refused (RFX_EINVAL): it is not
 *              shift-invariant, E cos(w.x) cos(w.y) = (k(x - y) + k(x +
 *              y)) / 2. The frequencies are those of the COS_BIAS map of the
 *              same parameters and seed, bit for bit (the phase is drawn and
 *              dropped); only b differs. With sin, tanh and sign the
 *              features are odd, z(-x) = -z(x) exactly. With weights
 *              N(0, s^2 I) (RFX_WEIGHTS_NORMAL, weight_scale s, length
 *              scale 1; s / l for a length scale l) the relu features have
 *              the arc-cosine kernel of order 1 and bias 0
 *              (rfx_kern_arccos(1, s, 0)) up to the factor 2 / D: k_1(x, y)
 *              = (2 / D) E[z(x).z(y)], while the sqrt(2/D) scaling of
 *              rfx_kern_arccos's features is not applied (the scale is 1);
 *              the sign features have E[z(x).z(y)] = D (1 - 2 theta / pi),
 *              theta the angle of x and y. */
typedef enum rfx_form {
    RFX_FORM_COS_BIAS = 0,
    RFX_FORM_COS_SIN = 1,
    RFX_FORM_PHASE_FREE = 2
} rfx_form;

/* The name of a kernel ("gaussian", ..., "custom") or form ("cos-bias",
 * "cos-sin", "phase-free"), and the reverse look-up (RFX_EINVAL for an
 * unknown name). */
RFX_API const char *rfx_kernel_name(rfx_kernel kernel);
RFX_API const char *rfx_form_name(rfx_form form);
RFX_API rfx_status rfx_kernel_from_name(const char *name, rfx_kernel *out);
RFX_API rfx_status rfx_form_from_name(const char *name, rfx_form *out);

/* The nonlinearity phi of a feature phi(w.x + b) (random kitchen sinks,
 * Rahimi & Recht 2008; sparse random features, Hashemi et al. 2021). COS is
 * the random Fourier feature of the kernel (with the forms COS_BIAS and
 * COS_SIN above); the others have scale 1 and the COS_BIAS layout, with the
 * phase b ~ U(0, 2 pi) in the COS_BIAS form and b = 0 in the PHASE_FREE
 * form (COS_SIN is refused). */
typedef enum rfx_activation {
    RFX_ACTIVATION_COS = 0,
    RFX_ACTIVATION_SIN = 1,
    RFX_ACTIVATION_TANH = 2,
    RFX_ACTIVATION_SIGMOID = 3,
    RFX_ACTIVATION_RELU = 4,
    RFX_ACTIVATION_SIGN = 5   /* sign(w.x + b) in {-1, 0, 1}                  */
} rfx_activation;

/* Where the nonzero weights come from: the kernel's spectral density (with
 * its length scales), or N(0, s^2) / U(-s, s) with s = weight_scale. */
typedef enum rfx_weights {
    RFX_WEIGHTS_KERNEL = 0,
    RFX_WEIGHTS_NORMAL = 1,
    RFX_WEIGHTS_UNIFORM = 2
} rfx_weights;

/* How the frequencies of a dense kernel map are drawn (sparsity 0 or d and
 * weights RFX_WEIGHTS_KERNEL; anything else is RFX_EINVAL naming the
 * field). Every structure takes every form and all activations (the
 * phase-free form with the frequencies of its cos-bias map), and W
 * (F x d) is always materialised (rfx_features_frequencies, exact kernels,
 * model files). Structured blocks depend only on (seed, block index), so
 * the W of F frequencies is the first F rows of the W of more. Below,
 * z = |x - y| / l, and "error" is the measured |K - Z Z^T|_F / |K|_F
 * relative to IID at equal D (d = 16..64, D = 2d..8d, z ~ 1).
 *
 *  IID         independent draws from the spectral density (default).
 *  ORTHOGONAL  orthogonal random features (Yu, Suresh, Choromanski,
 *              Holtmann-Rice & Kumar, "Orthogonal Random Features", NIPS
 *              2016): blocks of d rows S Q / l, Q a Haar-distributed
 *              orthogonal matrix (LAPACK's QR of a Gaussian d x d matrix,
 *              Q diag(sign diag R)), S_ii independent draws of the radial
 *              law |w|: chi_d (GAUSSIAN), chi_d sqrt(2 nu / chi2_{2 nu})
 *              (MATERN). Every row has the law of an i.i.d. frequency
 *              (unbiased) and the rows of a block are orthogonal: error
 *              0.3-0.4 x in the cos-sin form, 0.83-0.88 x in the cos-bias
 *              form (whose phase noise it does not reduce). GAUSSIAN and
 *              MATERN. Creation O(D d^2), one QR per block, threaded.
 *  SORF        structured orthogonal random features (same paper): blocks
 *              of d' rows S H D1 H D2 H D3 / l, H the normalised
 *              Walsh-Hadamard matrix of order d' (inputs zero-padded), Di
 *              random sign diagonals, and S a diagonal of draws of the
 *              radial law |w| in d' dimensions (chi_d' for GAUSSIAN,
 *              chi_d' sqrt(2 nu / chi2_{2 nu}) for MATERN), stratified
 *              within the block: s_i = Q((pi_i + u_i) / d'), Q the
 *              quantile of chi_d', pi a random permutation, u_i ~ U(0, 1),
 *              so each s_i has exactly the radial law while the block's
 *              norms cover it evenly. d' is the next power of two >= d for
 *              d >= 16, else 64: the d columns of a block are then
 *              orthogonal, and a row restricted to them is close to a draw
 *              of the spectral density (with d' = 16 at d = 3 it is not:
 *              the sign products take few values). Transforms apply three
 *              fast Walsh-Hadamard transforms per block: O(D log d') per
 *              row instead of O(D d) when d >= 17 (smaller maps use the
 *              dense product with the same W, O(D d)). Error at d = 16..64
 *              0.30-0.35 x in the cos-sin form, 0.82-0.90 x cos-bias; at d
 *              = 2..8, D = 1000, z up to 4 (bench/sorf_small_d.py, median
 *              over 10 seeds) 0.61-1.0 x for GAUSSIAN, 0.75-1.02 x for
 *              MATERN, where single seeds reach 1.1-1.7 x. GAUSSIAN and
 *              MATERN.
 *              Maps made by rfx 0.2 and earlier (structure_version 1)
 *              had no S (rows of the fixed norm sqrt(d') / l) and d' =
 *              the next power of two >= max(d, 16): they estimate the
 *              kernel of frequencies uniform on that sphere, k (1 - z^4 /
 *              (4 (d' + 2)) + O(z^6 / d'^2)), biased by -1.5% at z = 1 for
 *              d' = 16 and by more at larger z (median error 1.1-1.8 x
 *              iid's at d = 2..16 with z up to 4). GAUSSIAN only.
 *  FASTFOOD    Le, Sarlos & Smola, "Fastfood - Approximating Kernel
 *              Expansions in Loglinear Time", ICML 2013: blocks
 *              S H G P H B / l, H the unnormalised Walsh-Hadamard matrix of
 *              order d' = the next power of two >= d, B random signs, P a
 *              random permutation, G a Gaussian diagonal, S_ii = s_i /
 *              (sqrt(d') |G|) with s_i a draw of the radial law in d'
 *              dimensions: every row is exactly a draw of the spectral
 *              density (unbiased). Two fast transforms per block,
 *              O(D log d') per row (when d' >= 32). The rows of a block
 *              share G: error 1.1-1.4 x, the price of the speed.
 *              GAUSSIAN and MATERN.
 *  HALTON      quasi-Monte Carlo (Avron, Sindhwani, Yang & Mahoney,
 *              "Quasi-Monte Carlo Feature Maps for Shift-Invariant
 *              Kernels", JMLR 2016): frequency j is point j + 1 of the
 *              Halton sequence, its digits scrambled by random
 *              permutations from the seed (one per dimension and digit
 *              position), mapped through inverse CDFs: the normal quantile
 *              (GAUSSIAN), tan(pi (u - 1/2)) (LAPLACIAN), the Laplace
 *              quantile (CAUCHY), normal coordinates over
 *              sqrt(chi2_{2 nu} / (2 nu)) with chi2 from one more
 *              coordinate by the inverse regularised gamma function
 *              (MATERN). The phase b_j is a coordinate too (the first, in
 *              base 2; drawn and set to 0 in the phase-free form, whose
 *              frequencies are then the cos-bias map's). Each point is
 *              uniform, so estimates are unbiased, and the set is
 *              stratified: error 0.74-0.88 x in the cos-bias form (0.4-0.6
 *              x at z ~ 0.5), 0.87-0.99 x in the cos-sin form. All
 *              kernels; d <= 100000. Creation O(D d).
 *
 * Model files keep the structure (and SORF's structure_version); a SORF or
 * FASTFOOD map is rebuilt from its seed when loaded and must reproduce the
 * stored W bit for bit. */
typedef enum rfx_structure {
    RFX_STRUCTURE_IID = 0,
    RFX_STRUCTURE_ORTHOGONAL = 1,
    RFX_STRUCTURE_SORF = 2,
    RFX_STRUCTURE_FASTFOOD = 3,
    RFX_STRUCTURE_HALTON = 4
} rfx_structure;

/* The name of a structure ("iid", "orthogonal", "sorf", "fastfood",
 * "halton"; "unknown" otherwise), and the reverse look-up (RFX_EINVAL for
 * an unknown name). */
RFX_API const char *rfx_structure_name(rfx_structure s);
RFX_API rfx_status rfx_structure_from_name(const char *name, rfx_structure *out);

/* A user's spectral density (RFX_KERNEL_CUSTOM). The sampler draws
 * frequency j (j = 0 .. F-1, in order, on the thread that calls
 * rfx_features_create) from rng, the stream that frequency j of an i.i.d.
 * map draws from (Philox4x64-10 keyed by (seed, j), after the draw of the
 * phase b_j): so w_j depends only on (seed, j) when the sampler draws only
 * from rng, and a sampler that fills w with d rfx_rng_normal draws gives
 * bitwise the frequencies of the GAUSSIAN kernel. It writes one draw of p,
 * for unit length scales, into w (d values); rfx divides coordinate i by
 * l_i. It returns RFX_OK, or an error status, which rfx_features_create
 * returns with the sampler's message (rfx_set_error; "the sampler failed"
 * when it set none) after "features.spectral: frequency j: ". A value
 * that is not finite is RFX_ENUMERIC naming j and the coordinate. The map
 * keeps spectral and spectral_user in its parameters but never calls the
 * sampler after rfx_features_create. */
typedef struct rfx_rng rfx_rng;
typedef rfx_status (*rfx_spectral_fn)(void *user, rfx_rng *rng, size_t j, size_t d, double *w);

/* Draws from the stream: 64 random bits; a uniform in (0, 1), never 0 or
 * 1 (53 bits); a standard normal (Box-Muller, two per pair of uniforms);
 * Gamma(shape, 1) (Marsaglia & Tsang; NaN unless shape > 0 and finite);
 * and n uniforms or normals into out. */
RFX_API uint64_t rfx_rng_u64(rfx_rng *rng);
RFX_API double rfx_rng_uniform(rfx_rng *rng);
RFX_API double rfx_rng_normal(rfx_rng *rng);
RFX_API double rfx_rng_gamma(rfx_rng *rng, double shape);
RFX_API void rfx_rng_fill_uniform(rfx_rng *rng, double *out, size_t n);
RFX_API void rfx_rng_fill_normal(rfx_rng *rng, double *out, size_t n);

/* One draw (d values) of the spectral density of a built-in kernel at unit
 * length scale, the one rfx_features_create samples for RFX_WEIGHTS_KERNEL:
 * gaussian N(0, I); laplacian Cauchy(0, 1) per coordinate; cauchy Laplace(0,
 * 1) per coordinate; matern the multivariate t with 2 nu degrees of freedom.
 * RFX_EINVAL for another kernel or nu <= 0. */
RFX_API rfx_status rfx_spectral_draw(rfx_kernel kernel, double nu, rfx_rng *rng, size_t d,
                                     double *w);

/* Feature maps of sums and products of shift-invariant kernels (Bochner:
 * the spectral density of a sum is the mixture of the terms' densities,
 * that of a product their convolution, the density of a sum of independent
 * draws). A term is a built-in kernel with its own length scale:
 * k_i(x - y) = kernel((x - y) / length_scale). With product = 0 the map's
 * kernel is the weighted mean sum_i weight_i k_i / sum_i weight_i (weights
 * >= 0, not all 0; multiply the features by sqrt(sum weights) for the sum
 * itself): frequency j is term i's draw with probability weight_i / sum.
 * With product = 1 it is prod_i k_i (weights unused): frequency j is the
 * sum of one draw of each term. Use it as the sampler of RFX_KERNEL_CUSTOM
 * with the map's length_scale 1:
 *     p.kernel = RFX_KERNEL_CUSTOM; p.length_scale = 1;
 *     p.spectral = rfx_spectral_combined; p.spectral_user = &combination; */
typedef struct rfx_spectral_term {
    rfx_kernel kernel;     /* gaussian, laplacian, cauchy or matern          */
    double nu;             /* matern's smoothness > 0                        */
    double length_scale;   /* > 0                                            */
    double weight;         /* the sum's weight >= 0                          */
} rfx_spectral_term;

typedef struct rfx_spectral_combination {
    int product;           /* 0: the weighted mean of the terms; 1: their
                              product                                      */
    size_t n_terms;        /* >= 1                                           */
    const rfx_spectral_term *terms;
} rfx_spectral_combination;

/* RFX_OK when c is valid, else RFX_EINVAL naming the term's field. */
RFX_API rfx_status rfx_spectral_combination_check(const rfx_spectral_combination *c);

/* The rfx_spectral_fn of a combination (user: a const
 * rfx_spectral_combination *, checked at each call). */
RFX_API rfx_status rfx_spectral_combined(void *user, rfx_rng *rng, size_t j, size_t d,
                                         double *w);

RFX_API const char *rfx_activation_name(rfx_activation a);
RFX_API rfx_status rfx_activation_from_name(const char *name, rfx_activation *out);
RFX_API const char *rfx_weights_name(rfx_weights w);
RFX_API rfx_status rfx_weights_from_name(const char *name, rfx_weights *out);

typedef struct rfx_features_params {
    rfx_kernel kernel;      /* default RFX_KERNEL_GAUSSIAN                    */
    double nu;              /* Matern smoothness > 0, default 1.5             */
    rfx_form form;          /* default RFX_FORM_COS_BIAS                      */
    size_t n_features;      /* D, the number of output columns; default 1024  */
    uint64_t seed;          /* default 0                                      */
    double length_scale;    /* isotropic l > 0, default 1                     */
    const double *length_scales; /* d per-dimension scales (ARD), or NULL;
                                    copied at create; overrides length_scale */
    double gamma;           /* > 0: scikit-learn's gamma (see rfx_kernel);
                               overrides length_scale; default 0 (unused)     */
    int n_threads;          /* for transform; 0 = OpenMP default            */
    rfx_activation activation; /* default RFX_ACTIVATION_COS                 */
    size_t sparsity;        /* q: nonzero coordinates per frequency, 0 (the
                               default) = all d. With 0 < q < d each w_j has
                               exactly q nonzeros: when the C(d, q) supports
                               fit in the F frequencies they are enumerated
                               in order (frequency j gets support j mod
                               C(d, q)), else each is drawn uniformly.
                               Features are then order-q functions.          */
    rfx_weights weights;    /* default RFX_WEIGHTS_KERNEL                     */
    double weight_scale;    /* s for NORMAL / UNIFORM weights, default 1     */
    rfx_structure structure; /* default RFX_STRUCTURE_IID                    */
    unsigned structure_version; /* the construction of a SORF map: 0 (the
                               default) = the newest, 2 (radial scaling,
                               d' = 64 below d = 16); 1 = that of rfx 0.2
                               and earlier (fixed row norms, d' >= 16).
                               Maps report the one used
                               (rfx_features_get_params), so that saved
                               parameters rebuild the same map. Other
                               structures have one construction: ignored,
                               reported as 0.                               */
    rfx_spectral_fn spectral; /* the sampler of RFX_KERNEL_CUSTOM (required
                               then, refused with the other kernels);
                               default NULL                                 */
    void *spectral_user;    /* passed to spectral as user; default NULL     */
} rfx_features_params;

/* The defaults documented in the struct. */
RFX_API rfx_features_params rfx_features_params_default(void);

/* A sampled feature map: frequencies W (F x d), phases b (F), scale. */
typedef struct rfx_features rfx_features;

/* Sample a feature map for inputs of dimension d. Every field is validated;
 * the message names the bad field. */
RFX_API rfx_status rfx_features_create(const rfx_features_params *params, size_t d,
                                       rfx_features **out);
RFX_API void rfx_features_free(rfx_features *f);

/* A copy of the parameters the map was made with (length_scales points into
 * the map and lives as long as it does; gamma is converted to length_scale). */
RFX_API rfx_features_params rfx_features_get_params(const rfx_features *f);
RFX_API size_t rfx_features_input_dim(const rfx_features *f);  /* d */
RFX_API size_t rfx_features_output_dim(const rfx_features *f); /* D */

/* The sampled frequencies W (F x d, F = D for COS_BIAS and PHASE_FREE, D/2
 * for COS_SIN) and phases b (F values, all zero for COS_SIN and
 * PHASE_FREE); both owned by f. */
RFX_API rfx_cmat rfx_features_frequencies(const rfx_features *f);
RFX_API const double *rfx_features_phases(const rfx_features *f);

/* Set the number of threads used by transforms of this map. */
RFX_API void rfx_features_set_threads(rfx_features *f, int n_threads);

/* Z = z(X): X is n x d, Z is n x D (caller-allocated; any strides). OpenMP
 * over tiles of 64 rows. For d <= 64 one fused kernel computes each w.x + b
 * by fused multiply-adds in registers and its cos (or sin and cos) there
 * too, and writes each feature once; for larger d a BLAS GEMM fills a
 * cache-sized block of Z and the vectorised cos runs over it in place. No
 * temporary larger than a tile. Cost 2 n d D flops + n D cosines. The
 * vector cos is accurate to a few ulp (arguments beyond 1e5 in magnitude
 * take a slower exact path); NaN inputs give NaN features. SORF and
 * FASTFOOD maps with blocks of d' >= 32 (rfx_structure) skip the GEMM: fast
 * Walsh-Hadamard transforms, O(D log d') per row, then the same vectorised
 * cos; results equal the dense product with rfx_features_frequencies to
 * rounding. */
RFX_API rfx_status rfx_features_transform(const rfx_features *f, rfx_cmat X, rfx_mat Z);

/* The same in single precision (SGEMM, float cos): about twice the speed,
 * with absolute errors of order 1e-6 * |w.x + b| in each feature. */
RFX_API rfx_status rfx_features_transform_f32(const rfx_features *f, rfx_cmatf X, rfx_matf Z);

/* The exact kernel that f approximates: K(i, j) = k(X_i, Y_j), K is
 * X.rows x Y.rows. For verification and for small problems; defined for the
 * dense cosine features of a kernel (RFX_EINVAL otherwise, and for
 * RFX_KERNEL_CUSTOM, whose kernel rfx does not know). */
RFX_API rfx_status rfx_features_exact_kernel(const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                                             rfx_mat K);

#ifdef __cplusplus
}
#endif

#endif /* RFX_FEATURES_H */
