/*
 * rfx.h - random feature expansions: the public C API.
 *
 * rfx approximates shift-invariant kernels k(x, y) = k(x - y) with explicit
 * random Fourier features z(x) such that z(x).z(y) ~ k(x, y) (Rahimi & Recht,
 * "Random Features for Large-Scale Kernel Machines", NIPS 2007), and fits
 * linear models on those features: ridge regression and weight-space Bayesian
 * regression with predictive standard deviations.
 *
 * This header is the manual. Conventions that hold everywhere:
 *
 *  - Every fallible function returns an rfx_status. RFX_OK (0) is success; any
 *    other value is an error, and rfx_last_error() then holds a message that
 *    says what went wrong and where (file, line, column, parameter field).
 *    The message is thread-local: each thread sees its own last error.
 *  - The library never prints, exits, aborts, or touches the locale.
 *  - Outputs are written only on success: on error, *out pointers are left
 *    untouched and output files are not created or replaced.
 *  - Objects come in _create / _free pairs; _free(NULL) is a harmless no-op.
 *  - Matrices are row-major with an explicit stride (elements between the
 *    starts of consecutive rows, >= cols), so C-contiguous numpy arrays and
 *    row blocks of larger arrays pass without copies.
 *  - Randomness comes only from explicit seeds. Feature j depends only on
 *    (seed, j) through a counter-based generator (Philox4x64-10, Salmon et al.
 *    SC'11), so the same seed gives bitwise-identical features and models for
 *    any number of threads.
 *  - n_threads fields: 0 means the OpenMP default (OMP_NUM_THREADS or the
 *    number of cores); results never depend on the value.
 */
#ifndef RFX_H
#define RFX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define RFX_API
#elif defined(__GNUC__)
#define RFX_API __attribute__((visibility("default")))
#else
#define RFX_API
#endif

#define RFX_VERSION_MAJOR 0
#define RFX_VERSION_MINOR 1
#define RFX_VERSION_PATCH 0

/* The library version as "MAJOR.MINOR.PATCH". */
RFX_API const char *rfx_version(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum rfx_status {
    RFX_OK = 0,
    RFX_EINVAL = 1,      /* an argument or parameter field is invalid        */
    RFX_ENOMEM = 2,      /* an allocation failed                             */
    RFX_EOVERFLOW = 3,   /* a size computation would overflow size_t         */
    RFX_EDIM = 4,        /* matrix dimensions do not match                   */
    RFX_EIO = 5,         /* a file could not be opened, read or written      */
    RFX_EPARSE = 6,      /* input data is malformed (CSV, .npy, NaN/Inf)     */
    RFX_EFORMAT = 7,     /* a model file or buffer is corrupt or truncated   */
    RFX_EVERSION = 8,    /* a model file is newer than this library          */
    RFX_ENUMERIC = 9,    /* a numerical failure (matrix not positive definite) */
    RFX_ECANCELLED = 10, /* a progress callback asked to stop                */
    RFX_EINTERNAL = 11   /* an internal invariant failed (a bug: report it)  */
} rfx_status;

/* A static, constant description of a status code (never NULL). */
RFX_API const char *rfx_strerror(rfx_status status);

/* The detailed message of the last error raised on the calling thread, or ""
 * when none. The string is valid until the next rfx call on this thread. */
RFX_API const char *rfx_last_error(void);

/* Forget the last error of the calling thread. */
RFX_API void rfx_clear_error(void);

/* ------------------------------------------------------------------------ */
/* Instruction sets                                                          */
/* ------------------------------------------------------------------------ */

/* Instruction-set paths. The vector kernels (the fused feature transform,
 * vector cos / sincos, the fast Walsh-Hadamard transform of SORF and
 * Fastfood) are compiled once per path and chosen at run time:
 *  GENERIC  portable C (libm's cos and sin, the BLAS for W x);
 *  AVX2     256-bit vectors with FMA;
 *  AVX512   512-bit vectors (AVX-512F) for the fused transform and vector
 *           math; the Walsh-Hadamard transform runs its AVX2 code.
 * The active path is the best the CPU has, unless the environment variable
 * RFX_ISA ("generic", "avx2", "avx512"; read once, at the first call that
 * needs it) or rfx_isa_set asks for a lower one. A request above what the
 * CPU has is capped at the CPU's best: rfx_isa_active tells what runs.
 * An unknown RFX_ISA value is ignored by the library; the rfx tool and the
 * Python package refuse it with a message (rfx_isa_from_name).
 *
 * Reproducibility contract. For a given path and BLAS build:
 *  - every call gives bitwise the same result for any thread count (rows
 *    are cut into tiles of a fixed size, whatever the threads, and every
 *    reduction runs in a fixed order);
 *  - where rfx computes a product itself (the fused cos transform of
 *    d <= 64 inputs, the Walsh-Hadamard transforms of SORF and Fastfood,
 *    the vector cos / sincos), a row's features do not depend on the other
 *    rows of the call, nor on where the row falls in its tile.
 * Where rfx hands a product to the BLAS (maps of d > 64 inputs, activations
 * other than cos, single precision, Gram matrices, the solvers), the BLAS
 * may round a row differently in a product of another shape (its edge
 * kernels differ from its full ones): a row transformed alone and inside a
 * larger batch agree to rounding, not bitwise. Across paths results agree
 * to rounding, not bitwise. */
typedef enum rfx_isa {
    RFX_ISA_GENERIC = 0,
    RFX_ISA_AVX2 = 1,
    RFX_ISA_AVX512 = 2
} rfx_isa;

/* The path the kernels run now, and the best this CPU supports. */
RFX_API rfx_isa rfx_isa_active(void);
RFX_API rfx_isa rfx_isa_native(void);
/* Run the kernels on this path, capped at rfx_isa_native(); overrides
 * RFX_ISA. RFX_EINVAL for a value outside the enum. Process-wide: calls
 * running on other threads finish on the path they started with or switch
 * between row tiles, so set it before starting work. */
RFX_API rfx_status rfx_isa_set(rfx_isa isa);
/* "generic", "avx2", "avx512", and the reverse look-up (RFX_EINVAL for an
 * unknown name, with the accepted names in rfx_last_error()). */
RFX_API const char *rfx_isa_name(rfx_isa isa);
RFX_API rfx_status rfx_isa_from_name(const char *name, rfx_isa *out);

/* ------------------------------------------------------------------------ */
/* Matrix views                                                              */
/* ------------------------------------------------------------------------ */

/* A row-major view: element (i, j) is data[i * stride + j]; stride >= cols.
 * Views never own their data. */
typedef struct rfx_mat {
    double *data;
    size_t rows, cols, stride;
} rfx_mat;

typedef struct rfx_cmat {
    const double *data;
    size_t rows, cols, stride;
} rfx_cmat;

typedef struct rfx_matf {
    float *data;
    size_t rows, cols, stride;
} rfx_matf;

typedef struct rfx_cmatf {
    const float *data;
    size_t rows, cols, stride;
} rfx_cmatf;

/* Contiguous views (stride == cols). */
static inline rfx_mat rfx_mat_of(double *data, size_t rows, size_t cols)
{
    rfx_mat m;
    m.data = data; m.rows = rows; m.cols = cols; m.stride = cols;
    return m;
}
static inline rfx_cmat rfx_cmat_of(const double *data, size_t rows, size_t cols)
{
    rfx_cmat m;
    m.data = data; m.rows = rows; m.cols = cols; m.stride = cols;
    return m;
}
static inline rfx_matf rfx_matf_of(float *data, size_t rows, size_t cols)
{
    rfx_matf m;
    m.data = data; m.rows = rows; m.cols = cols; m.stride = cols;
    return m;
}
static inline rfx_cmatf rfx_cmatf_of(const float *data, size_t rows, size_t cols)
{
    rfx_cmatf m;
    m.data = data; m.rows = rows; m.cols = cols; m.stride = cols;
    return m;
}
/* A read-only view of a mutable one. */
static inline rfx_cmat rfx_cmat_from(rfx_mat m)
{
    rfx_cmat c;
    c.data = m.data; c.rows = m.rows; c.cols = m.cols; c.stride = m.stride;
    return c;
}
/* The empty view: passed where an optional matrix is not wanted. */
static inline rfx_mat rfx_mat_none(void)
{
    rfx_mat m;
    m.data = NULL; m.rows = 0; m.cols = 0; m.stride = 0;
    return m;
}
static inline rfx_cmat rfx_cmat_none(void)
{
    rfx_cmat m;
    m.data = NULL; m.rows = 0; m.cols = 0; m.stride = 0;
    return m;
}

/* Progress and cancellation: called from the calling thread with the name of
 * the current stage and the fraction done in [0, 1]. Return non-zero to stop;
 * the running call then returns RFX_ECANCELLED. */
typedef int (*rfx_progress_fn)(void *user, const char *stage, double fraction);

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
 * scikit-learn's gamma: rbf_kernel is exp(-gamma |x-y|^2), i.e. GAUSSIAN with
 * l = 1 / sqrt(2 gamma); laplacian_kernel is exp(-gamma |x-y|_1), i.e.
 * LAPLACIAN with l = 1 / gamma. Setting gamma > 0 in rfx_features_params uses
 * that meaning (GAUSSIAN and LAPLACIAN only). */
typedef enum rfx_kernel {
    RFX_KERNEL_GAUSSIAN = 0,
    RFX_KERNEL_LAPLACIAN = 1,
    RFX_KERNEL_CAUCHY = 2,
    RFX_KERNEL_MATERN = 3
} rfx_kernel;

/* The two feature forms, both with E[z(x).z(y)] = k(x, y):
 *  COS_BIAS  z_j(x) = sqrt(2/D) cos(w_j.x + b_j), b_j ~ U(0, 2 pi),
 *            j = 0..D-1: D frequencies, D outputs.
 *  COS_SIN   z(x) = sqrt(2/D) [cos(w_1.x) .. cos(w_F.x), sin(w_1.x) ..
 *            sin(w_F.x)], F = D/2 frequencies, D outputs (D even): the
 *            cosines in columns 0..F-1, the sines in columns F..D-1. Lower
 *            variance than COS_BIAS at equal D (Sutherland & Schneider 2015). */
typedef enum rfx_form {
    RFX_FORM_COS_BIAS = 0,
    RFX_FORM_COS_SIN = 1
} rfx_form;

/* The name of a kernel ("gaussian", ...) or form ("cos-bias", "cos-sin"), and
 * the reverse look-up (RFX_EINVAL for an unknown name). */
RFX_API const char *rfx_kernel_name(rfx_kernel kernel);
RFX_API const char *rfx_form_name(rfx_form form);
RFX_API rfx_status rfx_kernel_from_name(const char *name, rfx_kernel *out);
RFX_API rfx_status rfx_form_from_name(const char *name, rfx_form *out);

/* The nonlinearity phi of a feature phi(w.x + b) (random kitchen sinks,
 * Rahimi & Recht 2008; sparse random features, Hashemi et al. 2021). COS is
 * the random Fourier feature of the kernel (with the two forms above); the
 * others use the phase b ~ U(0, 2 pi), the COS_BIAS layout, and scale 1. */
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
 * field). Every structure takes both forms and all activations, and W
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
 *              of d' rows sqrt(d') H D1 H D2 H D3 / l, H the normalised
 *              Walsh-Hadamard matrix of order d' = the next power of two
 *              >= max(d, 16) (inputs zero-padded), Di random sign
 *              diagonals. Transforms apply three fast Walsh-Hadamard
 *              transforms per block: O(D log d') per row instead of
 *              O(D d) (when d' >= 32; smaller maps use the dense product
 *              with the same W). Rows have the fixed norm sqrt(d') / l, so
 *              the estimate is of the kernel of frequencies uniform on that
 *              sphere, k (1 - z^4 / (4 (d' + 2)) + O(z^6 / d'^2)): biased
 *              by -1.5% at z = 1 for d' = 16, -0.4% for d' = 64, with much
 *              lower variance (error 0.25-0.3 x in the cos-sin form, 0.07 x
 *              at z ~ 0.5; 0.84-0.89 x cos-bias). GAUSSIAN only.
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
 *              base 2). Each point is uniform, so estimates are unbiased,
 *              and the set is stratified: error 0.74-0.88 x in the cos-bias
 *              form (0.4-0.6 x at z ~ 0.5), 0.87-0.99 x in the cos-sin
 *              form. All kernels; d <= 100000. Creation O(D d).
 *
 * Model files keep the structure; a SORF or FASTFOOD map is rebuilt from
 * its seed when loaded and must reproduce the stored W bit for bit. */
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

/* The sampled frequencies W (F x d, F = D for COS_BIAS, D/2 for COS_SIN) and
 * phases b (F values, all zero for COS_SIN); both owned by f. */
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
 * dense cosine features of a kernel (RFX_EINVAL otherwise). */
RFX_API rfx_status rfx_features_exact_kernel(const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                                             rfx_mat K);

/* ------------------------------------------------------------------------ */
/* Row-block sources                                                         */
/* ------------------------------------------------------------------------ */

/* A block of rows: x is rows x cols with stride; y is rows x ny with
 * y_stride (NULL and ny == 0 when there are no targets). Owned by the
 * source, valid until its next call. */
typedef struct rfx_block {
    const double *x;
    size_t rows, cols, stride;
    const double *y;
    size_t ny, y_stride;
} rfx_block;

/* Where rows come from. Solvers call next() until *done is set (a call that
 * sets *done returns no rows), and rewind() to start a new pass. Users may
 * implement their own (a database cursor, an MPI shard): fill next, rewind,
 * and optionally destroy (called by rfx_source_free), state. */
typedef struct rfx_source {
    rfx_status (*next)(struct rfx_source *src, rfx_block *out, int *done);
    rfx_status (*rewind)(struct rfx_source *src);
    void (*destroy)(struct rfx_source *src);
    void *state;
} rfx_source;

/* A source over in-memory X (n x d) and Y (n x ny, or rfx_cmat_none()), in
 * blocks of block_rows rows (0 = 4096). X and Y must outlive the source. */
RFX_API rfx_status rfx_source_memory_create(rfx_cmat X, rfx_cmat Y, size_t block_rows,
                                            rfx_source **out);

/* Release a source made by the library (calls destroy, frees the struct). */
RFX_API void rfx_source_free(rfx_source *src);

/* ------------------------------------------------------------------------ */
/* Sufficient statistics                                                     */
/* ------------------------------------------------------------------------ */

/* Mergeable sufficient statistics of a linear model on features Z (n x D)
 * and targets Y (n x ny): n, Z^T Z, Z^T Y, column sums of Z and Y, and the
 * diagonal of Y^T Y. Targets are accumulated about a shift (the mean of the
 * first block) so that large offsets do not cancel. Statistics of disjoint
 * row sets merge exactly (streaming, cross-validation folds, MPI ranks). */
typedef struct rfx_stats rfx_stats;

RFX_API rfx_status rfx_stats_create(size_t n_features, size_t n_targets, rfx_stats **out);
RFX_API void rfx_stats_free(rfx_stats *s);
RFX_API size_t rfx_stats_rows(const rfx_stats *s);

/* Featurise the rows X (n x d) with f and add them, with targets Y (n x ny).
 * Z^T Z is accumulated by fixed tiles (BLAS SYRK/GEMM, OpenMP over tiles), so
 * results are bitwise identical for any thread count. */
RFX_API rfx_status rfx_stats_add(rfx_stats *s, const rfx_features *f, rfx_cmat X, rfx_cmat Y);

/* The same from single-precision rows: features in float (the f32
 * transform), each chunk's Z^T Z by SSYRK in float, added into the double
 * accumulators; Z^T Y and the sums in double. About twice as fast; the
 * statistics carry float rounding (relative 1e-6 or so), enough for ridge
 * and Bayesian fits with a regularisation above that level. */
RFX_API rfx_status rfx_stats_add_f32(rfx_stats *s, const rfx_features *f, rfx_cmatf X,
                                     rfx_cmatf Y);

/* Add every row of a source (one pass; rewinds it first). */
RFX_API rfx_status rfx_stats_add_source(rfx_stats *s, const rfx_features *f, rfx_source *src,
                                        rfx_progress_fn progress, void *user);

/* into += other (disjoint rows), or into -= other (other's rows are a subset
 * of into's: leave-fold-out statistics). */
RFX_API rfx_status rfx_stats_merge(rfx_stats *into, const rfx_stats *other);
RFX_API rfx_status rfx_stats_remove(rfx_stats *into, const rfx_stats *other);

/* A deep copy. */
RFX_API rfx_status rfx_stats_copy(const rfx_stats *s, rfx_stats **out);

/* Z^T Z (D x D, full symmetric), Z^T Y (D x ny), and the column sums of Z
 * and Y, copied into caller buffers (any of them NULL to skip). */
RFX_API rfx_status rfx_stats_get(const rfx_stats *s, double *ztz, double *zty, double *zsum,
                                 double *ysum);

/* ------------------------------------------------------------------------ */
/* Models                                                                    */
/* ------------------------------------------------------------------------ */

/* A fitted model: an optional input scaler, a feature map, weights (D x ny),
 * intercepts (ny), and for Bayesian models the posterior covariance factor;
 * or (RFX_METHOD_PCE) a polynomial chaos expansion with one target and no
 * feature map (rfx_model_from_pce and rfx_model_pce in rfx/pce.h). Every
 * rfx_model_* function takes both kinds. */
typedef struct rfx_model rfx_model;

typedef enum rfx_method {
    RFX_METHOD_RIDGE = 0,
    RFX_METHOD_BAYES = 1,
    RFX_METHOD_SRFE = 2,  /* sparse random features + l1 (rfx/srfe.h)       */
    RFX_METHOD_HARFE = 3, /* sparse random features + hard thresholding     */
    RFX_METHOD_PCE = 4,   /* a polynomial chaos expansion (rfx/pce.h): no
                             feature map; made by rfx_model_from_pce        */
    RFX_METHOD_PROJECTED = 5, /* a surrogate on a learned kernel PCA of the
                             inputs (rfx/projection.h): rfx_projected_fit   */
    RFX_METHOD_CLASSIFY = 6, /* a classifier on random features
                             (rfx/classify.h): logistic or hinge loss      */
    RFX_METHOD_SINKS = 7, /* random kitchen sinks with |alpha|_inf <= C/K
                             (rfx/sinks.h)                                 */
    RFX_METHOD_GREEDY = 8 /* greedy one-term-at-a-time fit of frequencies
                             and weights (rfx/sinks.h)                     */
} rfx_method;

/* The name of a method ("ridge", "bayes", "srfe", "harfe", "pce",
 * "projected", "classify", "sinks", "greedy"), and the reverse look-up
 * (RFX_EINVAL for an unknown name). */
RFX_API const char *rfx_method_name(rfx_method method);
RFX_API rfx_status rfx_method_from_name(const char *name, rfx_method *out);

/* How the regularisation is chosen when it is not given. */
typedef enum rfx_select {
    RFX_SELECT_NONE = 0,  /* use the given lambda                          */
    RFX_SELECT_GCV = 1,   /* generalised cross-validation (Golub, Heath &
                             Wahba 1979) over the lambda grid               */
    RFX_SELECT_KFOLD = 2  /* k-fold cross-validation over the lambda grid;
                             row i belongs to fold i mod k                   */
} rfx_select;

typedef enum rfx_solver {
    RFX_SOLVER_AUTO = 0,   /* dual when n < D and the rows are in memory    */
    RFX_SOLVER_PRIMAL = 1, /* (Z^T Z + lambda I) w = Z^T y, D x D Cholesky  */
    RFX_SOLVER_DUAL = 2    /* (Z Z^T + lambda I) a = y, w = Z^T a, n x n    */
} rfx_solver;

typedef struct rfx_ridge_params {
    double lambda;         /* penalty lambda |w|^2 >= 0, default 1e-3       */
    int fit_intercept;     /* default 1: unpenalised intercept, by centring */
    rfx_select select;     /* default RFX_SELECT_NONE                        */
    size_t n_folds;        /* for RFX_SELECT_KFOLD, >= 2, default 5          */
    const double *lambdas; /* candidate grid, or NULL for the default grid:
                              40 values, log-spaced, 1e-10..1e2 times
                              trace(Z^T Z)/D                                */
    size_t n_lambdas;
    rfx_solver solver;     /* default RFX_SOLVER_AUTO                        */
    int n_threads;         /* 0 = OpenMP default                             */
} rfx_ridge_params;

RFX_API rfx_ridge_params rfx_ridge_params_default(void);

/* Ridge regression from statistics (primal): min |Y - Z W - 1 c^T|^2 +
 * lambda |W|^2. Selection by GCV uses one eigendecomposition of the centred
 * Z^T Z; RFX_SELECT_KFOLD needs per-fold statistics and is only available
 * through rfx_ridge_fit_source / rfx_ridge_fit. */
RFX_API rfx_status rfx_ridge_solve(const rfx_features *f, const rfx_stats *s,
                                   const rfx_ridge_params *params, rfx_model **out);

/* Ridge regression by streaming a source: accumulate (one pass, or one
 * accumulator per fold for k-fold selection), then solve. */
RFX_API rfx_status rfx_ridge_fit_source(const rfx_features *f, rfx_source *src,
                                        const rfx_ridge_params *params, rfx_model **out);

/* Ridge regression on in-memory rows X (n x d), Y (n x ny); chooses the dual
 * form when params->solver allows it and n < D. */
RFX_API rfx_status rfx_ridge_fit(const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                                 const rfx_ridge_params *params, rfx_model **out);

/* Weight-space Bayesian linear regression (Rasmussen & Williams 2006, 2.1):
 * prior w ~ N(0, prior_var I), noise N(0, noise_var); posterior precision
 * A = Z^T Z / noise_var + I / prior_var, mean A^-1 Z^T y / noise_var;
 * predictive variance of f(x*) is z*^T A^-1 z* (plus noise_var for y*).
 * Variances <= 0 are fitted by maximising the log marginal likelihood
 * (evidence), with MacKay's fixed-point updates in the eigenbasis of Z^T Z. */
typedef struct rfx_bayes_params {
    double noise_var;  /* sigma_n^2 > 0, or <= 0 to fit; default 0 (fit)    */
    double prior_var;  /* sigma_p^2 > 0, or <= 0 to fit; default 0 (fit)    */
    int fit_intercept; /* default 1: flat prior on the intercept (centring)  */
    size_t max_iter;   /* evidence iterations, default 300                   */
    double tol;        /* relative change of the variances, default 1e-8    */
    int n_threads;
} rfx_bayes_params;

RFX_API rfx_bayes_params rfx_bayes_params_default(void);

/* The Bayesian posterior from statistics (one target column). */
RFX_API rfx_status rfx_bayes_solve(const rfx_features *f, const rfx_stats *s,
                                   const rfx_bayes_params *params, rfx_model **out);

/* The same from in-memory rows. */
RFX_API rfx_status rfx_bayes_fit(const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                                 const rfx_bayes_params *params, rfx_model **out);

struct rfx_classify_params; /* rfx/classify.h */

/* The whole fit in one call, as the command line does it: optional input
 * standardisation, a feature map, and a method, with the length scale and the
 * regularisation chosen automatically when not given. */
typedef struct rfx_fit_params {
    rfx_method method;         /* default RFX_METHOD_BAYES                   */
    rfx_features_params features; /* kernel, form, D, seed; length_scale <= 0
                                     means "choose" (the default here)       */
    int standardize;           /* default 1: x -> (x - mean) / std per column */
    double lambda;             /* ridge: < 0 means choose by GCV (default -1) */
    double noise_var, prior_var; /* bayes: <= 0 means fit (default 0)       */
    int fit_intercept;         /* default 1                                   */
    size_t select_rows;        /* rows used to choose the length scale, a
                                  seeded subset when n is larger; default 4000 */
    rfx_progress_fn progress;  /* optional                                   */
    void *progress_user;
    int learn_length_scales;   /* 1: learn one length scale per input (ARD),
                                  see below; bayes and ridge only. Default 0 */
    size_t learn_iterations;   /* particle swarm iterations >= 1, default 30 */
    size_t learn_particles;    /* swarm size; 0 (default) = rfx_pso_params'
                                  default, 10 + floor(2 sqrt(d))            */
    /* RFX_METHOD_CLASSIFY (Y holds the class labels; see below):           */
    const struct rfx_classify_params *classify; /* loss, multi-class scheme,
                                  optimizer, class weights and optimizer
                                  settings (rfx/classify.h); NULL (default)
                                  = rfx_classify_params_default()           */
    size_t classify_folds;     /* how the length scale and lambda are chosen:
                                  k >= 2 folds (row i in fold i mod k), or 0
                                  (default) one holdout, rows i mod 4 == 3,
                                  i counting the shuffled selection rows   */
} rfx_fit_params;

RFX_API rfx_fit_params rfx_fit_params_default(void);

/* What an automatic fit chose. */
typedef struct rfx_fit_report {
    double length_scale;  /* isotropic length scale, in standardised units  */
    double lambda;        /* ridge penalty (or noise_var / prior_var)       */
    double noise_var, prior_var; /* Bayesian variances (0 for ridge)         */
    double score;         /* log evidence per row (bayes) or the GCV score
                             (ridge); NaN when a given lambda was used   */
    size_t n_candidates;  /* length scales tried                            */
    double learn_score_before; /* with learn_length_scales: the selection   */
    double learn_score_after;  /* score (the meaning and sign of score) on
                                  the selection rows and features at the
                                  starting scales and at the learned ones;
                                  never worse after. NaN without learning   */
    size_t learn_evaluations;  /* candidate scale vectors tried (0 without) */
} rfx_fit_report;

/* Fit X (n x d), Y (n x ny; one column for RFX_METHOD_BAYES). report may be
 * NULL.
 *
 * Learned length scales (learn_length_scales = 1): after the isotropic
 * choice (or from the scales given in features: length_scale, gamma or
 * length_scales), the d per-input scales l_i = l0_i exp(u_i) are tuned
 * with u in the box [-3, 4]^d by rfx_pso_minimize (rfx/projection.h;
 * particle 0 starts at u = 0, the others at random, seed features.seed)
 * on the same selection rows and the same at most 512 features as the
 * isotropic choice, with the feature seed fixed so that the objective is
 * deterministic. The objective is minus the log evidence per row (bayes,
 * the variances re-fitted for each candidate) or the GCV score (ridge). A
 * large l_i switches input i off. The final model is fitted on all rows
 * with all features at the learned scales; rfx_model_get_info gives them
 * (features.length_scales), and model files keep them. The candidates are
 * evaluated one after another (each fit threaded as usual), so results do
 * not depend on the number of threads. Cost: learn_particles x
 * (learn_iterations + 1) + 1 fits on the selection rows.
 *
 * RFX_METHOD_SRFE / RFX_METHOD_HARFE go to rfx_srfe_fit (rfx/srfe.h)
 * with its defaults and from params: the seed, threads, n_features (0 =
 * automatic), features.sparsity (when > 0), lambda (when >= 0) and
 * standardize; the report then has length_scale = 1 / weight scale, lambda
 * the lasso penalty, score the cross-validated mean squared error.
 * RFX_METHOD_PCE is not fitted here (RFX_EINVAL): rfx_pce_fit, then
 * rfx_model_from_pce (rfx/pce.h); nor are RFX_METHOD_PROJECTED
 * (rfx_projected_fit), RFX_METHOD_SINKS and RFX_METHOD_GREEDY (rfx/sinks.h).
 *
 * RFX_METHOD_CLASSIFY fits a classifier (rfx/classify.h) with the settings
 * of params->classify (or its defaults); Y (n x 1) holds the labels, any
 * finite values with at least two distinct. fit_intercept, the threads of
 * features and, when >= 0, lambda (then > 0) replace those of the classify
 * settings. Inputs are standardised (unless standardize = 0); when the
 * length scale is not given (length_scale <= 0, no gamma or ARD scales)
 * and / or lambda < 0, they are chosen on the selection rows (select_rows,
 * a seeded subset as above) by the validation score over a small grid:
 * scales sqrt(d) x 0.05 x 2^i, i = 0..8, and penalties 1e-1, 1e-2, ..,
 * 1e-5, each candidate fitted with at most 256 features (tolerance at least
 * 1e-4, at most 100 iterations) on the training part and scored on the
 * rest - one holdout (rows i mod 4 == 3 of the selection rows) or
 * classify_folds folds (row i in fold i mod k), the selection rows taken
 * in a seeded random order (all rows when n <= select_rows, so that rows
 * sorted by class still give folds of every class). The score is the mean
 * log-loss -log p(true class) for the logistic loss and the error rate
 * for the hinge losses (ties broken by the mean validation hinge or
 * squared hinge loss); candidates run from the largest scale and penalty
 * down and a full tie keeps the earlier one. The model is then fitted on all
 * rows with all features. The report has the length scale, lambda, the
 * best validation score (NaN when nothing was chosen) and the number of
 * candidates; the variances are 0. Cost: up to 45 x (1 or k) fits on the
 * selection rows, then one on all rows. Errors as rfx_classify_fit, and
 * RFX_EDIM when Y has more than one column, RFX_EINVAL for lambda = 0 or
 * classify_folds = 1. */
RFX_API rfx_status rfx_model_fit(const rfx_fit_params *params, rfx_cmat X, rfx_cmat Y,
                                 rfx_model **out, rfx_fit_report *report);

RFX_API void rfx_model_free(rfx_model *m);

/* Predictions for X (n x d): Yhat (n x ny) and, for Bayesian models, Ystd
 * (n x ny), the predictive standard deviation of the noisy target y*
 * (sqrt(z*^T A^-1 z* + noise_var)). Pass rfx_mat_none() for Ystd when not
 * wanted; asking it of any other model (ridge, srfe, harfe, pce,
 * classify, ...) is RFX_EINVAL. A classifier (RFX_METHOD_CLASSIFY) writes
 * the predicted class label of each row into Yhat (n x 1); its scores and
 * probabilities come from rfx_model_decision and rfx_model_predict_proba
 * (rfx/classify.h). */
RFX_API rfx_status rfx_model_predict(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Ystd);

/* The same with the standard deviation of the latent f(x*) (no noise). */
RFX_API rfx_status rfx_model_predict_latent(const rfx_model *m, rfx_cmat X, rfx_mat Yhat,
                                            rfx_mat Fstd);

/* For a PCE model: method, n_inputs, n_targets = 1 and n_train are set,
 * everything else (features included) is zero; rfx_pce_get_info on
 * rfx_model_pce(m) has the rest. A classifier has n_targets = 1 (one
 * predicted label per row) and lambda its penalty; rfx_model_classes and
 * rfx_model_classifier_info (rfx/classify.h) have its classes, loss and
 * score columns. */
typedef struct rfx_model_info {
    rfx_method method;
    rfx_features_params features; /* length_scales points into the model     */
    size_t n_inputs;          /* d                                           */
    size_t n_targets;         /* ny                                          */
    size_t n_train;           /* rows the model was fitted on                */
    int standardized;         /* inputs standardised by a stored scaler      */
    int fit_intercept;
    int has_std;              /* predictive std available                    */
    double lambda;            /* ridge penalty, or noise_var / prior_var     */
    double noise_var, prior_var;
    double log_evidence;      /* Bayesian log marginal likelihood, else 0     */
} rfx_model_info;

RFX_API rfx_status rfx_model_get_info(const rfx_model *m, rfx_model_info *info);

/* The feature map of the model (owned by m; NULL for a PCE model). */
RFX_API const rfx_features *rfx_model_features(const rfx_model *m);

/* Weights W (D x ny) and intercepts (ny), owned by m; for a classifier D x
 * K and K, its score columns (K = 1 for two classes, else C). A PCE model
 * has neither (rfx_cmat_none() and NULL): its coefficients belong to its
 * multi-indices, rfx_pce_term(rfx_model_pce(m), k, ...). */
RFX_API rfx_cmat rfx_model_weights(const rfx_model *m);
RFX_API const double *rfx_model_intercepts(const rfx_model *m);

/* Model files. The format (version 1), all integers little-endian:
 *
 *   offset 0   8 bytes  magic "RFXMODL\x1a"
 *          8   u32      format version (1)
 *         12   u32      header size in bytes (32)
 *         16   u64      payload size P in bytes
 *         24   u32      CRC-32 (zlib) of the payload
 *         28   u32      CRC-32 of bytes 0..27
 *         32   P bytes  payload: a sequence of records, each
 *                         u32 tag, u32 element type, u64 count, data
 *                       element types: 1 f64 (the IEEE-754 bit pattern),
 *                       2 u64, 3 i64, 4 UTF-8 bytes, 5 u32, 6 raw
 *                       bytes (count = bytes); data zero-padded to a
 *                       multiple of 8 bytes.
 *
 * Bytes 0..15 (magic, version, header size) keep their meaning in every
 * future version. Version 1 tags, each at most once, in any order (u64 unless
 * marked; scalars have count 1; F = D for COS_BIAS, D/2 for COS_SIN; arrays
 * row-major):
 *    1 method        2 d             3 D             4 ny
 *    5 n_train       6 fit_intercept 7 kernel        8 form
 *    9 nu (f64)     10 seed         11 length_scale (f64, 0 with ARD)
 *   12 ard (0/1)    13 length scales (d f64)   14 frequencies W (F x d f64)
 *   15 phases b (F f64)   16 x_mean, 17 x_scale (d f64 each, both or none)
 *   18 weights (D x ny f64)   19 intercepts (ny f64)   20 lambda (f64)
 *   21 noise_var, 22 prior_var, 23 log_evidence (f64)
 *   24 posterior factor R (D x D f64; Bayesian models only)
 *   25 training feature means (D f64, optional, with 24)
 *   26 creator ("rfx <version>", UTF-8, informational)
 *   27 activation   28 sparsity q   29 weight distribution
 *   30 weight scale (f64)           (27..30 optional: cos, 0, kernel, 1)
 * A polynomial chaos model (method 4) has no feature map: it holds tags 1,
 * 2, 4 (= 1), 5, optionally 26, and all of
 *   31 marginal kinds (d u64: 0 uniform, 1 normal)
 *   32 marginal parameters (d x 2 f64: a, b of each input)
 *   33 number of terms T            34 multi-indices (T x d u32)
 *   35 coefficients (T f64)         36 degree   37 PCE method (rfx_pce_method)
 *   38 candidate terms              39 LOO errors (3 f64: mse, relative,
 *                                      corrected; NaN when not fitted)
 * and no other; feature models hold none of 31..39.
 * A projected model (method 5, rfx/projection.h) has no feature map of its
 * own: it holds tags 1, 2, 4 (= 1), 5 (m, the kernel's training rows,
 * 2..2^31 - 1), optionally 26 and 16, 17 (the kernel's input scaler, both
 * or none), and all of
 *   40 k (1..m)                     41 gamma (f64, > 0)
 *   42 theta (d f64 in [0, 1], not all zero)
 *   43 the training rows as the kernel sees them (m x d f64, scaled)
 *   44 kernel PCA coefficients (m x k f64)
 *   45 row means of the Gram matrix (m f64)   46 its grand mean (f64)
 *   47 the fit's loss (f64, NaN or >= 0)
 *   48 the surrogate on the k scores (element type 6): a whole model file,
 *      header and payload, of method 0..4 with k inputs and 1
 *      target, checked like a file of its own; never itself projected
 * and no other; other models hold none of 40..48.
 * Every feature model (methods 0..3 and 6..8) may hold
 *   49 structure of the feature map (rfx_structure, 0..4; absent means
 *      0, iid, and is how iid maps are written)
 * A classifier (method 6, rfx/classify.h) is a feature model whose
 * n_targets (tag 4) is its number of score columns K - 1 for two classes,
 * else C - with weights D x K and K intercepts, and which holds all of
 *   50 classes (C f64: finite, strictly increasing, 2 <= C <= 65536)
 *   51 loss (rfx_loss, 0..2)
 *   52 multi-class scheme (rfx_multiclass, 0..1; softmax only with the
 *      logistic loss)
 * and no other model holds any of 50..52. Kitchen-sinks (method 7) and
 * greedy (method 8) models are feature models stored as ridge models are
 * (no posterior).
 * Unknown tags, missing required tags and duplicates make a file corrupt.
 *
 * The loader checks the magic, refuses a newer version by name, verifies
 * both CRCs, and checks every count against the bytes that remain and
 * against the shapes the sizes imply before it allocates. Errors are
 * RFX_EFORMAT (RFX_EVERSION for a newer file, RFX_EIO when the file cannot
 * be read or written) with a message naming the file, or "buffer". The
 * weights and frequencies are stored, not re-derived from the seed, so a
 * loaded model predicts bitwise identically to the saved one. Saving writes
 * a temporary file beside path (path.tmp.XXXXXX), syncs it and renames it
 * over path, so path is never left half-written. */
RFX_API rfx_status rfx_model_save(const rfx_model *m, const char *path);
RFX_API rfx_status rfx_model_load(const char *path, rfx_model **out);

/* The same to and from memory. *buf is allocated with malloc; release it
 * with rfx_buffer_free. */
RFX_API rfx_status rfx_model_save_buffer(const rfx_model *m, void **buf, size_t *len);
RFX_API rfx_status rfx_model_load_buffer(const void *buf, size_t len, rfx_model **out);
RFX_API void rfx_buffer_free(void *buf);

/* ------------------------------------------------------------------------ */
/* Data input and output                                                     */
/* ------------------------------------------------------------------------ */

/* A table of numbers read from CSV or .npy: inputs X (n x d) and, when a
 * target column was named, Y (n x 1). */
typedef struct rfx_data rfx_data;

typedef struct rfx_read_params {
    const char *target;  /* target column: a header name, or a 0-based index
                            as text ("3"), or "-1" for the last column; NULL
                            for no target (all columns are inputs)          */
    char delimiter;      /* CSV field separator, default ','                */
    int has_header;      /* CSV: 1 = first row names the columns, 0 = none,
                            -1 = detect (default): a first row with a cell
                            that is not a number is a header                 */
    char comment;        /* CSV: lines starting with it are skipped,
                            default '#'; 0 for none                         */
} rfx_read_params;

RFX_API rfx_read_params rfx_read_params_default(void);

/* Read a CSV file or a .npy file (float64 or float32, C order, 1-D or 2-D;
 * chosen by the magic bytes). Errors name the file, line and column: ragged
 * rows, cells that are not numbers, NaN or Inf, an empty file, zero rows or
 * columns, an unknown target column. */
RFX_API rfx_status rfx_data_read(const char *path, const rfx_read_params *params,
                                 rfx_data **out);
RFX_API void rfx_data_free(rfx_data *data);

RFX_API rfx_cmat rfx_data_x(const rfx_data *data);
RFX_API rfx_cmat rfx_data_y(const rfx_data *data);  /* rfx_cmat_none() if none */
/* The name of input column j (j < d), or of the target when j == SIZE_MAX;
 * "x<j>" style names when the file had no header. */
RFX_API const char *rfx_data_name(const rfx_data *data, size_t j);

/* Write M as CSV (with a header line when names is not NULL: M.cols names)
 * with 17 significant digits, or as a float64 .npy file. Both go through a
 * temporary file and a rename. */
RFX_API rfx_status rfx_csv_write(const char *path, rfx_cmat M, const char *const *names);
RFX_API rfx_status rfx_npy_write(const char *path, rfx_cmat M);

#ifdef __cplusplus
}
#endif

/* The surrogate-modelling parts, one header each (included here so that
 * rfx.h stays the one include a program needs). */
#include "rfx/surrogate.h"
#include "rfx/l1.h"
#include "rfx/pce.h"
#include "rfx/srfe.h"
#include "rfx/projection.h"
#include "rfx/kernels.h"
#include "rfx/classify.h"
#include "rfx/sinks.h"
#include "rfx/attention.h"
#include "rfx/kernel_sgd.h"
#include "rfx/nystroem.h"

#endif /* RFX_H */
