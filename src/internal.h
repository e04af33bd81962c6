/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * internal.h - object layouts and helpers shared inside the library.
 * Nothing here is exported: internal functions carry the rfx__ prefix and
 * hidden visibility (the library is built with -fvisibility=hidden).
 */
#ifndef RFX_INTERNAL_H
#define RFX_INTERNAL_H

#include "rfx.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__GNUC__)
#define RFX__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RFX__PRINTF(a, b)
#endif

/* ---- errors (src/core/error.c) ----------------------------------------- */

/* Record a formatted message for the calling thread and return status. */
rfx_status rfx__error(rfx_status status, const char *fmt, ...) RFX__PRINTF(2, 3);

/* The first failure of a parallel loop (the lowest index, whatever the
 * schedule), with its message captured on the worker thread that saw it:
 * the message is thread-local, so a status carried out of a worker alone
 * would reach the caller with another call's message. Workers call
 * rfx__failure_note(f, i, status) (a no-op for RFX_OK); the caller, after
 * the loop, returns rfx__failure_raise(f), which sets its own message. */
typedef struct rfx__failure {
    size_t index; /* SIZE_MAX: none */
    rfx_status status;
    char msg[1024];
} rfx__failure;
void rfx__failure_init(rfx__failure *f);
void rfx__failure_note(rfx__failure *f, size_t index, rfx_status status);
rfx_status rfx__failure_raise(const rfx__failure *f);

/* Bytes from an input (a CSV cell, a column name, a file name) as text that
 * is safe on a terminal, for messages: at most max bytes of s[0..len),
 * then "..." when cut; tab, line feed and carriage return as \t \n \r,
 * other control bytes (C0, DEL), C1 controls and bytes that are not well
 * formed UTF-8 as \xHH; the rest (printable ASCII and UTF-8) as is. buf
 * holds RFX__QUOTE_SIZE(max) bytes; returns buf. */
#define RFX__QUOTE_SIZE(max) (4 * (size_t)(max) + 4)
const char *rfx__quote(const char *s, size_t len, size_t max, char *buf, size_t size);

/* Prefix the current message with "<prefix>: " (context added on the way up). */
void rfx__error_prefix(const char *fmt, ...) RFX__PRINTF(1, 2);

#define RFX__TRY(expr)                       \
    do {                                     \
        rfx_status rfx__st_ = (expr);        \
        if (rfx__st_ != RFX_OK) return rfx__st_; \
    } while (0)

/* ---- numbers as text (src/core/numeric.c) ------------------------------- */

/* Between begin and end the calling thread parses and prints numbers in the
 * C locale ('.' as the decimal point), whatever the program's locale; end
 * restores the thread's locale. Nothing else changes: no setlocale. */
typedef struct rfx__c_numeric {
    locale_t c, old;
} rfx__c_numeric;
void rfx__c_numeric_begin(rfx__c_numeric *n);
void rfx__c_numeric_end(rfx__c_numeric *n);

/* ---- checked size arithmetic (src/core/mem.c) --------------------------- */

/* *out = a * b, or RFX_EOVERFLOW with a message naming what. */
rfx_status rfx__mul(size_t a, size_t b, size_t *out, const char *what);
rfx_status rfx__mul3(size_t a, size_t b, size_t c, size_t *out, const char *what);
rfx_status rfx__add(size_t a, size_t b, size_t *out, const char *what);

/* Allocate n elements of size bytes, 64-byte aligned, with overflow check;
 * RFX_ENOMEM / RFX_EOVERFLOW with a message naming what. Free with free().
 * On Linux a buffer of 4 MiB or more is 2 MiB aligned and advised for
 * transparent huge pages (first-touch faults per 2 MiB, not per 4 KiB). */
rfx_status rfx__alloc(size_t n, size_t size, void **out, const char *what);
rfx_status rfx__calloc(size_t n, size_t size, void **out, const char *what);

/* Validate a view: data non-NULL when rows*cols > 0, stride >= cols. */
rfx_status rfx__check_cmat(rfx_cmat m, const char *what);
rfx_status rfx__check_mat(rfx_mat m, const char *what);

/* 1 when every entry of the view is finite; else 0 and *row, *col. */
int rfx__all_finite(rfx_cmat m, size_t *row, size_t *col);

/* The first statement of every parallel region of rfx: BLAS calls made in
 * it then run on the calling thread. OpenMP OpenBLAS goes single-threaded
 * by itself inside a team of two or more, but a team of one is not "in
 * parallel" to it; setting this implicit task's ICV covers that case and
 * does not leak out of the region. Each tile then computes the same bits
 * whatever the thread count. */
#ifdef _OPENMP
#define RFX__SERIAL_BLAS() omp_set_num_threads(1)
#else
#define RFX__SERIAL_BLAS() ((void)0)
#endif

/* Run stmt (a BLAS or LAPACK call outside the tile loops) on the calling
 * thread only. LAPACK's blocked factorisations give different bits for
 * different thread counts; rfx's models must not, so the O(D^3) steps run
 * single-threaded (the O(n D^2) accumulation is where the threads go). */
#ifdef _OPENMP
#define RFX__SERIAL(stmt)                  \
    _Pragma("omp parallel num_threads(1)") \
    {                                      \
        omp_set_num_threads(1);            \
        stmt;                              \
    }
#else
#define RFX__SERIAL(stmt) stmt;
#endif

/* The number of threads to use for a requested count (0 = default). */
int rfx__threads(int requested);
/* Rows per chunk when featurising into a workspace (src/core/mem.c): a
 * function of the feature count alone, never of the thread count. */
size_t rfx__chunk_rows(size_t D);

/* The one output path of the library's writers (src/core/output.c): a
 * regular file through a temporary file beside it, fsync and rename,
 * keeping its mode (a new file: 0666 less the umask); a symbolic link's
 * target in its place; a device, FIFO or socket directly, every write
 * error reported. Messages name the path as given. Write to fp between
 * open and commit; abort drops the temporary file (and frees the names). */
typedef struct rfx__output {
    const char *shown; /* the path as given, for messages */
    char *target;      /* the file written: the path, or a link's target */
    char *tmp;         /* the temporary file, NULL when written directly */
    FILE *fp;
    int direct;        /* 1: not a regular file, no rename */
    int slot;          /* tmp's entry in the table of rfx_temporaries_remove, or -1 */
} rfx__output;
rfx_status rfx__output_open(const char *path, rfx__output *o);
rfx_status rfx__output_commit(rfx__output *o);
void rfx__output_abort(rfx__output *o);

/* The column spec names among a table's n columns (names: n names, or
 * NULL when the table has none): a name (an exact match wins over an index:
 * a column named "3" over column 3), or a 0-based index as text, negative
 * counting from the end ("-1" = the last). FOUND sets *col; AMBIGUOUS
 * (two columns have that name) sets *col and *other to the first two;
 * RANGE is an index outside 0..n-1 (-n..-1); MISSING is neither a name nor
 * an index (src/core/colnames.c). */
typedef enum rfx__column_found {
    RFX__COLUMN_FOUND,
    RFX__COLUMN_AMBIGUOUS,
    RFX__COLUMN_RANGE,
    RFX__COLUMN_MISSING
} rfx__column_found;
rfx__column_found rfx__column_find(const char *const *names, size_t n, const char *spec,
                                   size_t *col, size_t *other);
/* "a, b, c" (n names, each quoted as rfx__quote does, 40 bytes at most)
 * into buf (size >= 8), cut short with ", ..." when it would not fit. */
void rfx__list_names(char *buf, size_t size, const char *const *names, size_t n);

/* Column means and population standard deviations of X (n >= 1 finite
 * rows): mean[j] = sum_i x_ij / n and scale[j] = sqrt(sum_i (x_ij -
 * mean[j])^2 / n), or 1 for a constant column, every sum in row order; a
 * column whose magnitudes reach past 1e100 or stay below 1e-100 is summed
 * divided by its largest magnitude, so that no square overflows or
 * underflows: every finite column gets a finite mean and a positive finite
 * scale. Then, when Xs is not NULL, Xs (n x d, row stride ldxs; may be X
 * itself) = (X - mean) / scale. The one standardisation of the fits
 * (src/core/columns.c). */
void rfx__standardize(rfx_cmat X, double *mean, double *scale, double *Xs, size_t ldxs);

/* The same with row weights w (n values >= 0, positive sum; NULL = 1 each):
 * weighted means and standard deviations, sum_i w_i x_ij / sum_i w_i and
 * sqrt(sum_i w_i (x_ij - mean_j)^2 / sum_i w_i) (as scikit-learn's
 * StandardScaler with sample_weight). With w NULL, rfx__standardize's bits. */
/* ---- exact sums (src/core/xsum.c) -------------------------------------- */

/* A long accumulator: the exact sum of any doubles, whatever their order or
 * the parts they were summed in (parts add digit by digit, then
 * rfx__xsum_normalize). 70 signed 64-bit words of 32-bit digits. */
#define RFX__XSUM_DIGITS 70
typedef struct rfx__xsum {
    int64_t digit[RFX__XSUM_DIGITS];
    uint32_t adds;
} rfx__xsum;
void rfx__xsum_init(rfx__xsum *a);
void rfx__xsum_add(rfx__xsum *a, double x);
void rfx__xsum_normalize(rfx__xsum *a);
/* The sum as a double (normalises a): a function of the exact sum alone. */
double rfx__xsum_value(rfx__xsum *a);

/* Columns whose largest magnitude lies in [RFX__SAFE_LO, RFX__SAFE_HI] are
 * summed as they are by the standardisation; others divided by it. */
#define RFX__SAFE_LO 1e-100
#define RFX__SAFE_HI 1e100
void rfx__standardize_weighted(rfx_cmat X, const double *w, double *mean, double *scale,
                               double *Xs, size_t ldxs);

/* RFX_OK when the n row weights w are finite, >= 0 and not all zero, else
 * RFX_EINVAL naming the first bad one as "what[i]" ("ridge.sample_weight[3]:
 * must be >= 0 and finite, got -1") or "what: all N weights are zero" (src/core/columns.c). */
rfx_status rfx__check_weights(const double *w, size_t n, const char *what);

/* One standardised value, (x - mean) / scale, finite for every finite x
 * once mean and scale come from rfx__standardize: when x - mean overflows
 * (x and mean huge and of opposite signs), x / scale - mean / scale, whose
 * terms then have one sign and cannot cancel. */
static inline double rfx__standardized(double x, double mean, double scale)
{
    const double v = x - mean;
    return isfinite(v) ? v / scale : x / scale - mean / scale;
}

/* ---- counter-based random numbers (src/core/rng.c) ---------------------- */

/* A stream of random numbers depending only on (seed, stream, substream):
 * Philox4x64-10 with key (seed, stream) and counter (substream, i, 0, 0). */
typedef struct rfx__rng {
    uint64_t key[2];
    uint64_t ctr[4];
    uint64_t buf[4];
    int pos;           /* next unused word of buf; 4 = empty */
    int have_normal;   /* Box-Muller returns two normals */
    double normal;
} rfx__rng;

/* The public face of a stream (rfx_rng in rfx/features.h). */
struct rfx_rng {
    rfx__rng state;
};

void rfx__rng_init(rfx__rng *r, uint64_t seed, uint64_t stream, uint64_t substream);
uint64_t rfx__rng_u64(rfx__rng *r);
double rfx__rng_uniform(rfx__rng *r);      /* in (0, 1), 53 bits, never 0 or 1 */
double rfx__rng_normal(rfx__rng *r);       /* N(0, 1), Box-Muller               */
double rfx__rng_gamma(rfx__rng *r, double shape); /* Gamma(shape, 1), Marsaglia-Tsang */
/* A uniform shuffle of perm[0 .. n-1] in place (Fisher-Yates from the end:
 * position i - 1 swaps with floor(u i), i = n .. 2), one uniform per step. */
void rfx__rng_shuffle(rfx__rng *r, size_t *perm, size_t n);

/* A seeded random order of the n rows of X (n x d), with their targets Y
 * (n x ny, or ny == 0) and weights w (NULL: 1 each) that depends on the rows'
 * contents and not on their positions: order[0..n) receives the row indices
 * sorted by a 64-bit hash of (seed, stream, the bits of the row's values
 * and targets; -0 counts as 0), rows of equal hash by their values, targets
 * and weights. The same rows in any order give the same sequence of rows
 * (identical rows are interchangeable), so subsets, holdouts and folds
 * taken by position in it do not depend on the order of the data; nor, as
 * the weights only break ties, on a common factor of the weights. Cost: n (d + ny + 1) hash steps and a sort of n
 * keys. RFX_ENOMEM when its n keys cannot be allocated (src/core/rng.c). */
/* The key of one row in that order (its ny targets y_stride apart), and the
 * comparison of two rows' values that breaks ties (-1, 0, 1). */
uint64_t rfx__row_key(uint64_t seed, uint64_t stream, const double *x, size_t d, const double *y,
                      size_t ny, size_t y_stride);
int rfx__row_compare(const double *xa, const double *ya, double wa, const double *xb,
                     const double *yb, double wb, size_t d, size_t ny, size_t y_stride);
rfx_status rfx__rows_order(rfx_cmat X, rfx_cmat Y, const double *w, uint64_t seed,
                           uint64_t stream, size_t *order);

/* ---- vectorised math (src/core/vmath*.c) -------------------------------- */

/* y[i] = s * cos(x[i] + b[i]) in place over n values (b may be NULL). */
void rfx__vcos_bias(double *x, const double *b, double s, size_t n);
/* c[i] = s * cos(x[i]); s_out[i] = s * sin(x[i]); c may alias x. */
void rfx__vsincos(const double *x, double *c, double *s_out, double s, size_t n);
void rfx__vcos_bias_f32(float *x, const float *b, float s, size_t n);
void rfx__vsincos_f32(const float *x, float *c, float *s_out, float s, size_t n);
/* The fused feature kernels (fused_kernel.h), double and single precision,
 * on the active path. WT (d x ldw) and b (ldw) 64-byte aligned, zero-padded
 * past F, ldw a multiple of 64. */
void rfx__fused_features(const double *X, size_t ldx, size_t rows, size_t d, const double *WT,
                        size_t ldw, const double *b, size_t F, double s, int paired, double *Z,
                        size_t ldz);
void rfx__fused_features_f32(const float *X, size_t ldx, size_t rows, size_t d, const float *WT,
                            size_t ldw, const float *b, size_t F, float s, int paired, float *Z,
                            size_t ldz);

/* ---- feature maps ------------------------------------------------------- */

struct rfx_features {
    rfx_features_params params; /* length_scales -> ls below, gamma -> 0     */
    size_t d;                   /* input dimension                           */
    size_t D;                   /* output columns                            */
    size_t F;                   /* frequencies: D (COS_BIAS) or D/2 (COS_SIN) */
    double *ls;                 /* d length scales (all equal if isotropic)  */
    int ard;                    /* per-dimension scales were given           */
    double *W;                  /* F x d frequencies, row-major               */
    double *b;                  /* F phases                                   */
    float *W32, *b32;           /* single-precision copies                   */
    double *WT, *bp;            /* W transposed (d x ldw) and b (ldw), zero-
                                   padded: the fused kernel's layout          */
    float *WT32, *bp32;         /* the same in single precision              */
    size_t ldw;                 /* F rounded up to a multiple of 64          */
    double scale;               /* sqrt(2 / D)                               */
    /* SORF and FASTFOOD (src/features/structured.c): the O(F log d) map, in
       n_blocks blocks of dp frequencies; fdiag NULL for other structures   */
    size_t dp;                  /* d' = block size, a power of two >= d     */
    unsigned dp_log2;           /* log2 d'                                  */
    size_t n_blocks;            /* ceil(F / d')                             */
    double *fdiag;              /* n_blocks x RFX__FAST_SLOTS x d' diagonals:
                                   SORF D3/(l d'), D2, D1, S/sqrt(d') (S
                                   unset in version 1); FASTFOOD B/l, G, S
                                   (the fourth unset)                       */
    uint32_t *fperm;            /* FASTFOOD: n_blocks x d' permutations     */
    int sorf_radial;            /* SORF version 2: rows scaled by S         */
    int fast;                   /* transforms use the fast map (else W)     */
};

/* Diagonals per block of the fast structured maps (fdiag). */
#define RFX__FAST_SLOTS 4

/* Random streams (the "stream" word of rfx__rng) of the feature samplers:
 * i.i.d. rows and all phases 0, and one per structure (substream = block,
 * or 64 x coordinate + digit for the Halton scrambling). */
#define RFX__STREAM_ORF 1
#define RFX__STREAM_SORF 2
#define RFX__STREAM_FASTFOOD 3
#define RFX__STREAM_HALTON 4

/* Scrambled Halton points (src/features/qmc.c): coordinate c (base the
 * c-th prime) of the points 1 .. n, each in (0, 1), the digits permuted
 * at random (Owen-type, one permutation per coordinate and digit, from
 * (seed, RFX__STREAM_HALTON)) or, without scramble, the radical inverse
 * (plus half its last step). The generator holds the primes and the
 * workspace of n points; one thread at a time. */
typedef struct rfx__halton_ws {
    uint32_t *swap; /* largest prime: the identity between uses            */
    uint32_t *hit;  /* n + 1: positions a partial shuffle moved             */
    uint32_t *tab;  /* 2 n + 64: the permutation values digit by digit      */
} rfx__halton_ws;
typedef struct rfx__halton {
    size_t dims, n;
    uint32_t *primes; /* dims                                               */
    rfx__halton_ws ws;
} rfx__halton;
rfx_status rfx__halton_init(rfx__halton *h, size_t dims, size_t n);
void rfx__halton_coord(rfx__halton *h, uint64_t seed, int scramble, size_t c, double *u);
void rfx__halton_free(rfx__halton *h);

/* Rows per group of the fast structured transform (one vector of doubles
 * per element: the rows are interleaved). */
#define RFX__FAST_ROWS 4

/* Structured maps (src/features/structured.c, qmc.c). _check validates the
 * structure against the other fields (called by rfx__features_check);
 * _sample fills W, b (and the fast state) of an allocated map whose ls are
 * set; _fast_init builds the SORF / FASTFOOD state from (seed, d, F, ls)
 * and writes W as the map of the unit vectors; _halton_sample fills W, b
 * from scrambled Halton points. */
rfx_status rfx__structure_check(const rfx_features_params *p, size_t d);
/* The construction of p's structure that p asks for: structure_version, or
 * the newest when it is 0 (unchecked: see rfx__structure_check). */
unsigned rfx__structure_version(const rfx_features_params *p);
rfx_status rfx__structured_sample(rfx_features *f);
rfx_status rfx__structured_fast_init(rfx_features *f);
rfx_status rfx__halton_sample(rfx_features *f);
/* Z[r][0 .. F-1] = W x_r for rows rows of X by the fast transform (no
 * activation), on the active instruction-set path (AVX2 code for AVX2 and
 * AVX-512); ws: rfx__structured_ws_len(f) doubles, 64-byte aligned. Each
 * row's bits do not depend on the other rows. */
void rfx__structured_project(const rfx_features *f, const double *X, size_t ldx, size_t rows,
                             double *Z, size_t ldz, double *ws);
size_t rfx__structured_ws_len(const rfx_features *f);

/* Inverse distribution functions (src/features/qmc.c): the standard normal
 * quantile (Wichura's AS 241, ~1e-16 relative; -inf / +inf at 0 / 1), the
 * regularised incomplete gamma functions P(a, x), Q(a, x) = 1 - P, and x
 * with P(a, x) = u (Halley's method; NaN outside a > 0, u in [0, 1]). */
double rfx__norm_quantile(double u);
double rfx__gamma_p(double a, double x);
double rfx__gamma_q(double a, double x);
double rfx__gamma_p_inv(double a, double u);

/* Build a feature map around given W (F x d) and b (F), copying them (used
 * by the model loader): params must already be valid for d. For the SORF
 * and FASTFOOD structures the fast transform is rebuilt from (seed, d, D,
 * ls) and W must equal its frequencies bit for bit, else RFX_EINVAL ("the
 * frequencies do not match the structured map of the seed"); the other
 * structures take W as given. */
rfx_status rfx__features_from_arrays(const rfx_features_params *params, size_t d,
                                     const double *ls, int ard, const double *W,
                                     const double *b, rfx_features **out);

/* Featurise rows rows of X (row stride ldx) into Z (row stride ldz) on the
 * calling thread: GEMM into cache-sized column chunks of Z, then cos in
 * place. The building block of every parallel loop over row tiles. */
void rfx__transform_tile(const rfx_features *f, const double *X, size_t ldx, size_t rows,
                         double *Z, size_t ldz);

/* The same with a caller's workspace of rfx__transform_ws_len(f) doubles
 * (64-byte aligned; 0 = none needed, ws may then be NULL), for the fast
 * structured maps: allocate one per thread outside the tile loop.
 * rfx__transform_tile allocates it per call instead (and falls back to the
 * dense product with the same W if that fails). */
void rfx__transform_tile_ws(const rfx_features *f, const double *X, size_t ldx, size_t rows,
                            double *Z, size_t ldz, double *ws);
size_t rfx__transform_ws_len(const rfx_features *f);

/* Rows per tile of the parallel loops over rows. */
#define RFX__ROW_TILE 64

/* Validate feature parameters for input dimension d: the fields alone
 * (rfx__features_check_fields, which needs no d), then the length scales,
 * the sparsity, n_features x d and the structure against d. */
rfx_status rfx__features_check(const rfx_features_params *p, size_t d);
rfx_status rfx__features_check_fields(const rfx_features_params *p);

/* ---- statistics --------------------------------------------------------- */

struct rfx_stats {
    size_t D, ny;
    size_t n;       /* rows with a positive weight (all rows, unweighted)   */
    double wsum;    /* sum of the weights (n, unweighted)                   */
    double logw;    /* sum of log w over the rows with w > 0 (0 unweighted) */
    double *ztz;    /* D x D, upper triangle valid (row-major: i <= j):
                       sum w z z^T                                          */
    double *zty;    /* D x ny: sum w z (y - shift)                          */
    double *zsum;   /* D: sum w z                                           */
    double *ysum;   /* ny: sum w (y - shift)                                */
    double *yy;     /* ny: sum w (y - shift)^2                              */
    double *shift;  /* ny target shift                                      */
    int shift_set;
};

/* Add featurised rows: Z (rows x D, row stride ldz) and targets Y (rows x ny,
 * row stride ldy; NULL when ny == 0). Z^T Z by fixed tiles, OpenMP over
 * tiles: bitwise identical for any thread count. */
rfx_status rfx__stats_add_z(rfx_stats *s, const double *Z, size_t ldz, size_t rows,
                            const double *Y, size_t ldy, int n_threads);

/* The same with row weights w[i * ldw] (>= 0 and finite, checked by the
 * caller; w NULL: rfx__stats_add_z, bit for bit). Z^T W Z is the SYRK of
 * the rows scaled by sqrt(w_i), so weights of 1 give the unweighted bits. */
rfx_status rfx__stats_add_zw(rfx_stats *s, const double *Z, size_t ldz, size_t rows,
                             const double *Y, size_t ldy, const double *w, size_t ldw,
                             int n_threads);

/* MacKay's evidence iteration in the eigenbasis of C = Zc^T Zc (s: D
 * eigenvalues, ct: c = Zc^T yc in that basis; or the n_s nonzero ones of
 * the dual K = Zc Zc^T with ct_k = sqrt(s_k) u_k.yc, the rest contributing
 * nothing): updates *alpha (1 / prior variance) and / or *beta (1 / noise
 * variance), those flagged free, until |d log alpha| + |d log beta| < tol;
 * alpha / beta is kept >= ratio_min; returns the iterations made
 * (src/solvers/bayes.c). */
size_t rfx__evidence_fixed_point(const double *s, const double *ct, size_t D, double yy,
                                 double n_eff, int fit_alpha, int fit_beta, size_t max_iter,
                                 double tol, double ratio_min, double *alpha, double *beta);
/* The log evidence of weight-space Bayesian regression at alpha = a, beta =
 * b from n_s eigenvalues s of C (D x D; the other D - n_s are 0) and ct:
 * n_eff/2 log b + D/2 log a - 1/2 log|b C + a I| - b/2 rss - a/2 |m|^2 -
 * n_eff/2 log(2 pi), without the weights' term. */
double rfx__eigen_log_evidence(const double *s, const double *ct, size_t n_s, size_t D,
                               double n_eff, double yy, double a, double b);

/* The log evidence of rfx_bayes_fit on X, Y (one column) without the
 * model: by the n x n dual form when X has fewer rows than f has features
 * (src/solvers/bayes.c), else the fit's. */
rfx_status rfx__bayes_log_evidence(const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                                   const rfx_bayes_params *params, double *logev);

/* Centred (or raw, without intercept) normal equations from statistics:
 * C = Z^T W Z - W mu mu^T (D x D, full symmetric), c = Z^T W (y - ybar)
 * (D x ny), yy = |y - ybar|_W^2 per target, mu = weighted column means of
 * Z, ybar = weighted target means (in original units), W the sum of the
 * weights (n unweighted). Without intercept mu and ybar are zero and C, c,
 * yy are the raw sums. Arrays are caller-allocated. */
void rfx__stats_normal(const rfx_stats *s, int intercept, double *C, double *c, double *yy,
                       double *mu, double *ybar);

/* ---- models ------------------------------------------------------------- */

/* The record layer of model files (src/core/records.h). */
typedef struct rfx__sink rfx__sink;
typedef struct rfx__record rfx__record;

/* A whole model file of len bytes inside a record (the surrogate of a
 * projected model) read as a model: the container's reader
 * (src/model/modelio.c), passed down to the kinds that nest models. */
typedef rfx_status (*rfx__load_nested)(const unsigned char *file, size_t len, const char *name,
                                       rfx_model **out);

/* What a kind of model does, defined next to its algorithm: the feature
 * models (ridge, Bayes, SRFE, HARFE, classifiers, sinks, greedy) in
 * src/solvers/feature_model.c, PCE models in src/surrogate/pce_model.c,
 * projected models in src/projection/projected_model.c. The model object
 * (src/solvers/model.c) calls through it, so it depends on no kind above
 * it; the model file's container (src/model/modelio.c) holds the one table
 * from a file's method to its kind and calls save and load. */
typedef struct rfx__model_kind {
    /* free what the kind owns (the generic fields are freed by the caller) */
    void (*free_parts)(rfx_model *m);
    /* RFX_OK when the kind gives predictive standard deviations, else
     * RFX_EINVAL with a message saying why */
    rfx_status (*check_std)(const rfx_model *m);
    /* Yhat (and Ystd unless its data is NULL) of rows X, checked by the
     * caller for shapes and finite values; noisy: add the noise variance */
    rfx_status (*predict)(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Ystd,
                          int noisy);
    /* the kind's fields of rfx_model_info after the generic ones */
    rfx_status (*info)(const rfx_model *m, rfx_model_info *info);
    /* Write the kind's records, method first, in the order of its format
     * (the container adds the creator record after them). nested: the
     * bytes of the model file of m->inner (len), NULL without one.
     * RFX_EINTERNAL when the model lacks a part of its file (nothing
     * written). */
    rfx_status (*save)(rfx__sink *s, const rfx_model *m, const unsigned char *nested,
                       size_t len);
    /* Check the records of a file of this kind (rec[tag] for every tag,
     * present or not) and build the model: which fields, then counts and
     * scalars, and only then (allocations bounded by the records) the
     * arrays. name: the file, for messages (RFX_EFORMAT "NAME: ... (corrupt
     * file)"); nested reads a model file inside a record. */
    rfx_status (*load)(const rfx__record *rec, const char *name, rfx__load_nested nested,
                       rfx_model **out);
} rfx__model_kind;
extern const rfx__model_kind rfx__feature_kind;
extern const rfx__model_kind rfx__pce_kind;
extern const rfx__model_kind rfx__projected_kind;

/* The feature models' prediction (src/solvers/model.c), the predict of
 * rfx__feature_kind: rows already checked. */
rfx_status rfx__feature_predict(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Ystd,
                                int noisy);

/* Predictions of any model, on the calling layer's side of the kinds: the
 * checks and the dispatch of rfx_model_predict (noisy 1) and
 * rfx_model_predict_latent (noisy 0). */
rfx_status rfx__model_predict(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Ystd,
                              int noisy);

/* y = T^-1(Y) in place for a model with a target transform
 * (src/solvers/target.c); nothing for RFX_TARGET_NONE. */
void rfx__target_inverse_mat(const rfx_model *m, rfx_mat Y);

struct rfx_model {
    const rfx__model_kind *kind; /* what the model is: rfx__feature_kind, ...   */
    rfx_method method;
    rfx_features *features; /* owned                                        */
    size_t d, D, ny;
    size_t n_train;
    int fit_intercept;
    /* input scaler: x_std = (x - x_mean) / x_scale (NULL when absent)       */
    double *x_mean, *x_scale; /* d each                                     */
    double *W;              /* D x ny weights, row-major                    */
    double *intercept;      /* ny                                           */
    double lambda;
    double gcv;             /* GCV score of the chosen lambda (not saved)   */
    /* Bayesian posterior (method == RFX_METHOD_BAYES, ny == 1):             */
    double noise_var, prior_var, log_evidence;
    double *chol;           /* D x D upper-triangular R with R^T R = A, the
                               posterior precision (row-major; the lower part
                               is zero); NULL for ridge                      */
    double *zmean;          /* D feature means of the training rows (Bayes
                               with intercept: predictive variance is of the
                               centred features); NULL otherwise            */
    rfx_pce *pce;           /* owned; method == RFX_METHOD_PCE only, and then
                               features, W, intercept are NULL, D = 0,
                               ny = 1                                       */
    /* method == RFX_METHOD_PROJECTED only (and then features, W, intercept
       and pce are NULL, D = 0, ny = 1):                                     */
    rfx_kpca *kpca;         /* owned: the fitted projection (transform only,
                               rfx__kpca_from_arrays)                        */
    rfx_model *inner;       /* owned: the surrogate on the k scores          */
    double proj_loss;       /* the fit's loss (NaN when unknown)             */
    /* method == RFX_METHOD_CLASSIFY only (rfx/classify.h): W holds K = ny
       score columns, K = 1 for two classes, else C; predictions are labels */
    size_t n_classes;       /* C >= 2, 0 for other models                    */
    double *classes;        /* owned: C strictly increasing labels, or NULL  */
    int loss;               /* rfx_loss                                      */
    int multiclass;         /* rfx_multiclass                                */
    /* any regression model: it predicts T^-1 of the kind's prediction
       (rfx_model_set_target_transform; applied by rfx__model_predict)      */
    int target;             /* rfx_target_transform, RFX_TARGET_NONE = 0     */
    double target_lambda;   /* Box-Cox lambda                               */
    /* any model: its schema (rfx_model_set_names; src/solvers/schema.c)    */
    char **input_names;     /* owned, one block: d pointers, then the texts;
                               NULL without names                           */
    char *target_name;      /* owned; NULL without one                       */
    double *input_box;      /* owned: lo (d), then hi (d), the training rows'
                               range of each input; NULL when unknown       */
    double weight_sum;      /* a Bayesian model fitted on weighted rows: sum
                               w, the intercept's precision / noise
                               precision; 0 unweighted (then n_train)       */
};

/* Model names (src/solvers/schema.c): the checks of rfx_model_set_names
 * (d input names, an optional target name), and the copy of checked names
 * into m (m->d of them), replacing any it had. */
rfx_status rfx__model_names_check(const char *const *input, size_t d, const char *target);
rfx_status rfx__model_names_copy(rfx_model *m, const char *const *input, const char *target);
/* The check of rfx_model_set_input_box: finite lo[j] <= hi[j], j < d. */
rfx_status rfx__model_box_check(const double *lo, const double *hi, size_t d);

/* PCE internals for the models (src/surrogate/pce.c): a deep copy with the
 * fit report; the report's fields (degree, method, n_train, n_candidates,
 * the LOO errors) set from info (the other fields are not read); the terms'
 * arrays (n_terms x d multi-indices, n_terms coefficients; owned by pce). */
/* Uniform marginals over each column's range in X (n >= 1 finite rows; a
 * constant column x gets [x - 1/2, x + 1/2]): what marginals_from_data
 * gives (src/surrogate/pce.c). */
void rfx__range_marginals(rfx_cmat X, rfx_marginal *mg);
/* Each column's marginal of greatest likelihood (n >= 1 finite rows): uniform
 * on its range as above, normal at its mean and standard deviation, or,
 * when every value is > 0, lognormal at those of its log, in this order, a
 * later one kept only when its log-likelihood exceeds the one before by
 * more than log n, and a normal one (of x or log x) only when the skewness
 * there is within 3 sqrt(6 / n) of 0; a constant column, or fewer than 3
 * rows, stays uniform.
 * What marginals_from_data proposes besides the uniform ranges. */
void rfx__data_marginals(rfx_cmat X, rfx_marginal *mg);
rfx_status rfx__pce_copy(const rfx_pce *pce, rfx_pce **out);
void rfx__pce_set_report(rfx_pce *pce, const rfx_pce_info *info);
void rfx__pce_arrays(const rfx_pce *pce, const unsigned **alpha, const double **coef);
/* The span of a PCE (2d values: each input's training range, lo then hi),
 * beyond which its normal and lognormal inputs are continued linearly as
 * rfx_pce_predict continues uniform ones: NULL when it has none (given
 * marginals); _set_span copies 2d values (finite, lo <= hi: the caller's
 * check). */
const double *rfx__pce_span(const rfx_pce *pce);
rfx_status rfx__pce_set_span(rfx_pce *pce, const double *span);
/* The span of the n >= 1 rows of X (d columns), each column's min and max. */
rfx_status rfx__pce_set_span_rows(rfx_pce *pce, rfx_cmat X);

/* Kernel PCA internals for projected models (src/projection/kpca.c): the
 * arrays an exact fit's transform needs, and a transform-only object built
 * from them (copied; its transforms are those of the object the arrays came
 * from, bit for bit). */
typedef struct rfx__kpca_arrays {
    size_t m, d, k;
    double gamma;
    const double *X;        /* m x d training rows as the kernel sees them
                               (standardised when x_mean is set)            */
    const double *x_mean;   /* d, or NULL: no standardisation               */
    const double *x_scale;  /* d (> 0), or NULL with x_mean                 */
    const double *theta;    /* d, in [0, 1], not all zero                    */
    const double *row_mean; /* m: the row means r_i of K                    */
    double grand;           /* g, the grand mean of K                        */
    const double *alpha;    /* m x k                                         */
} rfx__kpca_arrays;

/* The arrays of a fitted exact kernel PCA (pointers into kp). */
rfx_status rfx__kpca_get_arrays(const rfx_kpca *kp, rfx__kpca_arrays *a);
/* A fitted, transform-only kernel PCA from arrays (checked: RFX_EINVAL
 * names a bad value). */
rfx_status rfx__kpca_from_arrays(const rfx__kpca_arrays *a, int n_threads, rfx_kpca **out);

/* A projected model around a transform-only kernel PCA (d inputs, n_train
 * rows) and the surrogate on its scores, both owned on success only
 * (src/projection/projected_model.c); what prefixes an allocation
 * failure's message. */
rfx_status rfx__projected_model(rfx_kpca *kp, rfx_model *inner, size_t d, size_t n_train,
                                double loss, const char *what, rfx_model **out);

/* An empty model with the given sizes (arrays allocated, zeroed); takes
 * ownership of f on success only. */
rfx_status rfx__model_alloc(rfx_method method, rfx_features *f, size_t ny, int with_posterior,
                            rfx_model **out);

/* ---- BLAS / LAPACK (Fortran LAPACK called directly: OpenBLAS ships it) --- */

#include <cblas.h>

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda,
             double *b, const int *ldb, int *info, size_t);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
             double *w, double *work, const int *lwork, int *iwork, const int *liwork,
             int *info, size_t, size_t);
void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s,
             double *u, const int *ldu, double *vt, const int *ldvt, double *work,
             const int *lwork, int *iwork, int *info, size_t);
void dtrtrs_(const char *uplo, const char *trans, const char *diag, const int *n,
             const int *nrhs, const double *a, const int *lda, double *b, const int *ldb,
             int *info, size_t, size_t, size_t);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work,
             const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
             const double *tau, double *work, const int *lwork, int *info);

/* Dense helpers over LAPACK (src/core/linalg.c). Matrices row-major.
 * rfx__chol: A (n x n symmetric, full) -> upper R with R^T R = A in place,
 * lower part zeroed; RFX_ENUMERIC naming what when not positive definite.
 * rfx__chol_solve: B (n x nrhs, row-major) <- A^-1 B given R.
 * rfx__eig_sym: A -> eigenvectors in place (row k of A is eigenvector k),
 * w ascending eigenvalues. n_threads: the BLAS threads LAPACK may use. */
rfx_status rfx__chol(double *A, size_t n, int n_threads, const char *what);
rfx_status rfx__chol_solve(const double *R, size_t n, double *B, size_t nrhs);
rfx_status rfx__eig_sym(double *A, size_t n, double *w, int n_threads, const char *what);
/* The thin SVD A = U diag(sv) Vt of the row-major n x N matrix A
 * (destroyed), r = min(n, N): sv the r singular values, descending; U
 * (n x r, row-major: column k is the k-th left vector); Vt (r x N,
 * row-major: row k is the k-th right vector). LAPACK dgesdd on one
 * thread. */
rfx_status rfx__svd_thin(double *A, size_t n, size_t N, double *sv, double *U, double *Vt,
                         const char *what);
/* log det A = 2 sum log R_ii */
double rfx__chol_logdet(const double *R, size_t n);
/* sum_i a[i] b[i] in one fixed order, rfx's own (no BLAS): eight partial
 * sums s_k over i = k mod 8 (up to the last multiple of 8), combined as
 * ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7)), the tail added to
 * s0. The same bits for the same inputs on any thread or machine
 * of one instruction set (the compiler may use vector registers but not
 * reassociate). 2 n flops (src/core/linalg.c). */
double rfx__dot(const double *a, const double *b, size_t n);
/* A deep copy of a feature map (structure and fast transform included). */
rfx_status rfx__features_copy(const rfx_features *f, rfx_features **out);

/* Kitchen sinks (src/solvers/sinks.c): the checks of rfx_sinks_fit's
 * arguments (params->C may be 0), and the fit of a given box (C > 0 or
 * INFINITY), which rfx_sinks_fit (src/solvers/sinks_cv.c, where a box of 0
 * is chosen by cross-validation) calls. */
rfx_status rfx__sinks_check(const rfx_features *f, rfx_cmat X, const double *y,
                            const rfx_sinks_params *p, rfx_model **out);
rfx_status rfx__sinks_fit_box(const rfx_features *f, rfx_cmat X, const double *y,
                              const rfx_sinks_params *params, rfx_model **out,
                              rfx_sinks_report *report);

/* SRFE and HARFE (src/surrogate/srfe.c) fit the full feature map at the
 * screened weight scale s and at this times s, and keep the latter unless
 * it scores worse; the automatic surrogate's final fit does the same from
 * a fold's choice (src/auto/auto.c). */
#define RFX__SRFE_SCALE_UP 1.5

/* int-sized LAPACK dimension check. */
rfx_status rfx__lapack_int(size_t n, int *out, const char *what);

#endif /* RFX_INTERNAL_H */
