/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/core.h - the base of the public C API: version, errors, instruction
 * sets, matrix views, progress callbacks. Every other rfx header includes
 * it; rfx.h includes them all.
 *
 * rfx: random feature expansions.
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
 *  - The library never prints, exits, aborts, or touches the locale: text
 *    files hold numbers with '.' whatever the program's LC_NUMERIC (a read
 *    or write switches its own thread to the C locale with uselocale, and
 *    back; it never calls setlocale).
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
 *  - Threads: an object passed as a const pointer is only read, so any
 *    number of threads may use it at once (one rfx_features transforming,
 *    one rfx_model predicting, saving or describing itself, from every
 *    thread: the results are those of a serial run, bitwise). A call that
 *    takes a non-const pointer (rfx_stats_add, a _free, a fit's *out) needs
 *    the object to itself. Distinct objects never share state; the one
 *    process-wide setting is the instruction-set path (rfx_isa_set), read
 *    atomically. Callbacks (progress, row sources) run on the thread that
 *    made the call.
 */
#ifndef RFX_CORE_H
#define RFX_CORE_H

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
#define RFX_VERSION_MINOR 2
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

/* Set the calling thread's message (copied; cut at 1023 bytes; NULL is "")
 * and return status: for code that reports through rfx's error model, such
 * as a row source's next() (rfx/model.h) or a library layered on rfx. */
RFX_API rfx_status rfx_set_error(rfx_status status, const char *message);

/* ------------------------------------------------------------------------ */
/* Interrupted writes                                                        */
/* ------------------------------------------------------------------------ */

/* Remove the temporary files of the writes in progress. rfx_model_save,
 * rfx_csv_write and rfx_npy_write write a regular file as PATH.tmp.PID.N
 * beside it and rename that over PATH at the end; a program killed in
 * between would leave the temporary file. This call is async-signal-safe:
 * a program's handler of SIGINT, SIGTERM or SIGHUP calls it and then ends
 * the program (the library installs no handler; the rfx tool does this).
 * A write that goes on after its temporary file was removed fails with
 * RFX_EIO, and the old PATH stays. Up to 16 writes at once are tracked,
 * with temporary names shorter than 4096 bytes. */
RFX_API void rfx_temporaries_remove(void);

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

#ifdef __cplusplus
}
#endif

#endif /* RFX_CORE_H */
