/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_core - timings of rfx's core kernels, over the public API only.
 *
 * One mode per run, so that each run's peak RSS is its own:
 *
 *   transform     rfx_features_transform (f64) into a preallocated, touched
 *                 n x D buffer; then into a fresh malloc'ed buffer (its page
 *                 faults counted, as scikit-learn allocates its output); then
 *                 into a fresh buffer advised for huge pages (what numpy does
 *                 with large arrays, so what rfx's Python binding would get).
 *   transform32   the same with rfx_features_transform_f32, and the largest
 *                 |Z32 - Z64| over the matrix.
 *   fit           rfx_ridge_fit, solver PRIMAL, fixed lambda: featurise,
 *                 accumulate Z^T Z in row blocks, solve; n x D never exists.
 *                 Also the RMSE of the fit on the training rows, and the
 *                 same fit split into its public halves (rfx_stats_add,
 *                 rfx_ridge_solve) to show where the time goes, and the
 *                 floor: one threaded DSYRK of the whole n x D Z with the
 *                 BLAS and environment rfx runs with.
 *   fit32         the single-precision fit (rfx_stats_add_f32 + rfx_ridge_solve).
 *   memory        rfx_ridge_fit_source over a source that generates rows in
 *                 blocks, so X is never in memory either; --rows-fit rows.
 *                 Reports the peak RSS (getrusage ru_maxrss).
 *   memory-inmem  the same rows held in memory (n x d doubles) and fitted
 *                 with rfx_ridge_fit.
 *
 * The data, the same formula as bench/peer_sklearn.py (no files needed):
 *
 *   X[i][j] = 2 sin(0.37 (i d + j) + j)    i < n, j < d
 *   y[i]    = sum_j sin(X[i][j])
 *
 * Var(X) is 2, so scikit-learn's gamma='scale', 1 / (d Var X), is 1 / (2 d);
 * that is the default --gamma here and in the peer (0.025 for d = 20).
 * Features: Gaussian kernel, cos-bias form (RBFSampler's), seed --seed.
 *
 * Output: "key value" lines on stdout (bench/run.sh reads them), times in
 * seconds (CLOCK_MONOTONIC, the best of --repeats runs), sizes in bytes.
 * Exit codes: 0 ok, 1 usage, 2 an rfx call failed, 3 mode not available.
 */
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE), a Linux extension */

#include "rfx.h"
#include "helpers.h"

#include <cblas.h>

#include <omp.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct options {
    const char *mode;
    size_t n, d, D, rows_fit, block_rows;
    int threads;
    int repeats; /* 0: 3, or 1 in the memory modes (one 1e6-row pass)     */
    uint64_t seed;
    double gamma; /* 0: 1 / (2 d)                                          */
    double lambda;
} options;

static const char USAGE[] =
    "usage: rfx_bench_core [options]\n"
    "  --mode M        transform | transform32 | fit | fit32 | memory | memory-inmem\n"
    "                  (default transform)\n"
    "  -n N            rows for transform and fit (default 100000)\n"
    "  -d d            input dimension (default 20)\n"
    "  -D D            number of features (default 2048)\n"
    "  --threads T     threads for rfx (default 0: OMP_NUM_THREADS or all cores)\n"
    "  --rows-fit N    rows for the memory modes (default 1000000)\n"
    "  --block-rows B  rows per block of the generating source (default 4096)\n"
    "  --repeats R     timed runs, the best is reported (default 3; 1 in the\n"
    "                  memory modes)\n"
    "  --seed S        feature seed (default 0)\n"
    "  --gamma G       Gaussian kernel exp(-G |x - y|^2) (default 1 / (2 d))\n"
    "  --lambda L      ridge penalty (default 1e-3)\n"
    "Data: X[i][j] = 2 sin(0.37 (i d + j) + j), y[i] = sum_j sin(X[i][j]).\n"
    "Prints \"key value\" lines; exit 0 ok, 1 usage, 2 rfx error, 3 mode not available.\n";

/* A whole number >= min (1e6 is accepted). */
static int parse_size(const char *s, double min, size_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= min) || v > 1e15 || v != floor(v)) return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static int parse_options(int argc, char **argv, options *o)
{
    o->mode = "transform";
    o->n = 100000;
    o->d = 20;
    o->D = 2048;
    o->rows_fit = 1000000;
    o->block_rows = 4096;
    o->threads = 0;
    o->repeats = 0;
    o->seed = 0;
    o->gamma = 0;
    o->lambda = 1e-3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(USAGE, stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "rfx_bench_core: %s: unknown option or missing value\n%s", a, USAGE);
            return -1;
        }
        const char *v = argv[++i];
        size_t z = 0;
        double x = 0;
        int bad = 0;
        if (!strcmp(a, "--mode")) o->mode = v;
        else if (!strcmp(a, "-n")) bad = parse_size(v, 1, &o->n);
        else if (!strcmp(a, "-d")) bad = parse_size(v, 1, &o->d);
        else if (!strcmp(a, "-D")) bad = parse_size(v, 1, &o->D);
        else if (!strcmp(a, "--rows-fit")) bad = parse_size(v, 1, &o->rows_fit);
        else if (!strcmp(a, "--block-rows")) bad = parse_size(v, 1, &o->block_rows);
        else if (!strcmp(a, "--threads")) {
            bad = parse_size(v, 0, &z) || z > 4096;
            o->threads = (int)z;
        } else if (!strcmp(a, "--repeats")) {
            bad = parse_size(v, 1, &z) || z > 1000;
            o->repeats = (int)z;
        } else if (!strcmp(a, "--seed")) {
            bad = parse_double(v, &x) || x < 0 || x != floor(x) || x > 9e15;
            o->seed = (uint64_t)x;
        } else if (!strcmp(a, "--gamma")) bad = parse_double(v, &o->gamma) || o->gamma <= 0;
        else if (!strcmp(a, "--lambda")) bad = parse_double(v, &o->lambda) || o->lambda < 0;
        else {
            fprintf(stderr, "rfx_bench_core: unknown option %s\n%s", a, USAGE);
            return -1;
        }
        if (bad) {
            fprintf(stderr, "rfx_bench_core: %s: bad value '%s'\n", a, v);
            return -1;
        }
    }
    static const char *const modes[] = {"transform", "transform32", "fit",
                                        "fit32",     "memory",      "memory-inmem"};
    int known = 0;
    for (size_t k = 0; k < sizeof modes / sizeof *modes; k++) known |= !strcmp(o->mode, modes[k]);
    if (!known) {
        fprintf(stderr, "rfx_bench_core: unknown mode '%s'\n%s", o->mode, USAGE);
        return -1;
    }
    if (o->gamma == 0) o->gamma = 1.0 / (2.0 * (double)o->d);
    if (o->repeats == 0) o->repeats = strncmp(o->mode, "memory", 6) ? 3 : 1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static void check(rfx_status st, const char *what)
{
    if (st == RFX_OK) return;
    fprintf(stderr, "rfx_bench_core: %s: %s: %s\n", what, rfx_strerror(st), rfx_last_error());
    exit(2);
}

static void *xmalloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) {
        fprintf(stderr, "rfx_bench_core: %zu x %zu bytes overflows\n", count, size);
        exit(2);
    }
    size_t bytes = count * size;
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (!p) {
        fprintf(stderr, "rfx_bench_core: cannot allocate %zu bytes\n", bytes);
        exit(2);
    }
    return p;
}

/* The time-stamp counter: reference cycles at the CPU's nominal rate,
 * whatever its clock does (0 where there is none). */
static unsigned long long tsc(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_ia32_rdtsc();
#else
    return 0;
#endif
}

/* The peak resident set size of this process so far, in bytes. */
static double peak_rss_bytes(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return 1024.0 * (double)ru.ru_maxrss; /* Linux: kilobytes */
}

/* Rows i0 .. i0 + rows - 1 of the benchmark data: X (rows x d, contiguous)
 * and y (rows); either may be NULL. The formula is in the file comment. */
static void gen_rows(size_t i0, size_t rows, size_t d, double *X, double *y)
{
    for (size_t r = 0; r < rows; r++) {
        double s = 0;
        for (size_t j = 0; j < d; j++) {
            double x = 2.0 * sin(0.37 * (double)((i0 + r) * d + j) + (double)j);
            if (X) X[r * d + j] = x;
            s += sin(x);
        }
        if (y) y[r] = s;
    }
}

/* Sums of X and y, printed by both sides to show they made the same data. */
static void print_checksums(const double *X, const double *y, size_t n, size_t d)
{
    double sx = 0, sy = 0, syy = 0;
    for (size_t i = 0; i < n * d; i++) sx += X[i];
    for (size_t i = 0; i < n; i++) sy += y[i];
    for (size_t i = 0; i < n; i++) syy += (y[i] - sy / (double)n) * (y[i] - sy / (double)n);
    printf("data_sum_x %.15g\ndata_sum_y %.15g\ndata_y_std %.6g\n", sx, sy, sqrt(syy / (double)n));
}

static rfx_features *make_features(const options *o)
{
    rfx_features_params p = rfx_features_params_default();
    p.kernel = RFX_KERNEL_GAUSSIAN;
    p.form = RFX_FORM_COS_BIAS;
    p.n_features = o->D;
    p.seed = o->seed;
    p.gamma = o->gamma;
    p.n_threads = o->threads;
    rfx_features *f;
    check(rfx_features_create(&p, o->d, &f), "rfx_features_create");
    return f;
}

static rfx_ridge_params ridge_params(const options *o)
{
    rfx_ridge_params p = rfx_ridge_params_default();
    p.lambda = o->lambda;
    p.fit_intercept = 1; /* as scikit-learn's Ridge */
    p.select = RFX_SELECT_NONE;
    p.solver = RFX_SOLVER_PRIMAL;
    p.n_threads = o->threads;
    return p;
}

/* Root mean squared error of model m on rows i0 .. i0 + rows - 1. */
static double rmse_rows(const rfx_model *m, size_t i0, size_t rows, size_t d)
{
    double *X = xmalloc(rows * d, sizeof *X), *y = xmalloc(rows, sizeof *y),
           *p = xmalloc(rows, sizeof *p);
    gen_rows(i0, rows, d, X, y);
    check(rfx_model_predict(m, rfx_cmat_of(X, rows, d), rfx_mat_of(p, rows, 1), rfx_mat_none()),
          "rfx_model_predict");
    double s = 0;
    for (size_t i = 0; i < rows; i++) s += (p[i] - y[i]) * (p[i] - y[i]);
    free(X);
    free(y);
    free(p);
    return sqrt(s / (double)rows);
}

/* ------------------------------------------------------------------------ */
/* Modes                                                                     */
/* ------------------------------------------------------------------------ */

/* An n x D buffer of `size`-byte elements, untouched: its pages fault in on
 * first write, as with numpy's np.empty. With huge = 1 it is aligned to 2 MiB
 * and advised for transparent huge pages, as numpy (>= 1.20, Linux) does with
 * arrays of 4 MiB and more. */
static void *fresh_buffer(size_t n, size_t D, size_t size, int huge)
{
    if (!huge) return xmalloc(n * D, size);
    void *p = NULL;
    size_t bytes = n * D * size;
    if (posix_memalign(&p, (size_t)1 << 21, bytes)) {
        fprintf(stderr, "rfx_bench_core: cannot allocate %zu bytes\n", bytes);
        exit(2);
    }
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

/* Write bytes of buf once with nt threads (0: the OpenMP default), the way
 * a transform writes its output: the memory-bandwidth floor. */
static void write_floor(void *buf, size_t bytes, int nt)
{
    unsigned char *p = buf;
    const size_t chunk = (size_t)1 << 20, chunks = (bytes + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) num_threads(nt > 0 ? nt : omp_get_max_threads())
    for (size_t c = 0; c < chunks; c++) {
        size_t len = bytes - c * chunk < chunk ? bytes - c * chunk : chunk;
        memset(p + c * chunk, (int)(c & 0x7f), len);
    }
}

static int bench_transform(const options *o, int f32)
{
    const size_t n = o->n, d = o->d, D = o->D;
    const char *tag = f32 ? "transform_f32" : "transform_f64";
    double *X = xmalloc(n * d, sizeof *X), *y = xmalloc(n, sizeof *y);
    gen_rows(0, n, d, X, y);
    print_checksums(X, y, n, d);
    float *X32 = NULL;
    if (f32) {
        X32 = xmalloc(n * d, sizeof *X32);
        for (size_t i = 0; i < n * d; i++) X32[i] = (float)X[i];
    }
    rfx_features *f = make_features(o);
    const size_t esize = f32 ? sizeof(float) : sizeof(double);

    /* 1. into a preallocated, touched buffer */
    void *Z = xmalloc(n * D, esize);
    memset(Z, 0, n * D * esize);
    double best = INFINITY, best_ticks = INFINITY;
    for (int r = 0; r < o->repeats; r++) {
        double t0 = rfx_helper_seconds();
        unsigned long long c0 = tsc();
        if (f32)
            check(rfx_features_transform_f32(f, rfx_cmatf_of(X32, n, d), rfx_matf_of(Z, n, D)),
                  "rfx_features_transform_f32");
        else
            check(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, D)),
                  "rfx_features_transform");
        double ticks = (double)(tsc() - c0);
        double t = rfx_helper_seconds() - t0;
        if (t < best) best = t;
        if (ticks < best_ticks) best_ticks = ticks;
    }
    printf("%s_seconds %.6f\n", tag, best);
    /* cycles per feature on each core: the time-stamp counter's ticks of the
     * best run times the threads, over the n D features */
    if (best_ticks > 0 && isfinite(best_ticks)) {
        printf("%s_tsc_ghz %.4f\n", tag, best_ticks / best * 1e-9);
        printf("%s_cycles_per_feature %.3f\n", tag,
               best_ticks * (double)o->threads / ((double)n * (double)D));
    }

    /* 2. accuracy of f32: against f64 features of the f64 inputs (what a user
     * with f64 data loses) and of the rounded inputs (the kernel alone),
     * computed in row blocks so that no second n x D matrix is needed */
    if (f32) {
        const size_t B = 4096;
        double *Zb = xmalloc(B * D, sizeof *Zb), *Xr = xmalloc(B * d, sizeof *Xr);
        double err = 0, err_same = 0, zmax = 0;
        for (size_t i0 = 0; i0 < n; i0 += B) {
            size_t rows = n - i0 < B ? n - i0 : B;
            const float *Zr = (const float *)Z + i0 * D;
            check(rfx_features_transform(f, rfx_cmat_of(X + i0 * d, rows, d),
                                         rfx_mat_of(Zb, rows, D)),
                  "rfx_features_transform");
            for (size_t k = 0; k < rows * D; k++) {
                double e = fabs((double)Zr[k] - Zb[k]);
                if (e > err) err = e;
                if (fabs(Zb[k]) > zmax) zmax = fabs(Zb[k]);
            }
            for (size_t k = 0; k < rows * d; k++) Xr[k] = (double)X32[i0 * d + k];
            check(rfx_features_transform(f, rfx_cmat_of(Xr, rows, d), rfx_mat_of(Zb, rows, D)),
                  "rfx_features_transform");
            for (size_t k = 0; k < rows * D; k++) {
                double e = fabs((double)Zr[k] - Zb[k]);
                if (e > err_same) err_same = e;
            }
        }
        printf("transform_f32_max_abs_err %.3e\n", err);
        printf("transform_f32_max_abs_err_same_input %.3e\n", err_same);
        printf("feature_max_abs %.6g\n", zmax); /* sqrt(2 / D) */
        free(Zb);
        free(Xr);
    }
    /* the physical floor: writing the n x D output once, same threads
     * (after the accuracy check, which reads Z) */
    best = INFINITY;
    for (int r = 0; r < o->repeats; r++) {
        double t0 = rfx_helper_seconds();
        write_floor(Z, n * D * esize, o->threads);
        double t = rfx_helper_seconds() - t0;
        if (t < best) best = t;
    }
    printf("%s_write_floor_seconds %.6f\n", tag, best);
    free(Z);

    /* 3. into fresh buffers: plain malloc, then huge-page advised */
    for (int huge = 0; huge < 2; huge++) {
        best = INFINITY;
        for (int r = 0; r < o->repeats; r++) {
            double t0 = rfx_helper_seconds();
            void *Zf = fresh_buffer(n, D, esize, huge);
            if (f32)
                check(rfx_features_transform_f32(f, rfx_cmatf_of(X32, n, d), rfx_matf_of(Zf, n, D)),
                      "rfx_features_transform_f32");
            else
                check(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Zf, n, D)),
                      "rfx_features_transform");
            double t = rfx_helper_seconds() - t0;
            free(Zf);
            if (t < best) best = t;
        }
        printf("%s_fresh%s_seconds %.6f\n", tag, huge ? "_hugepage" : "", best);
    }
    printf("%s_peak_rss_bytes %.0f\n", tag, peak_rss_bytes());
    rfx_features_free(f);
    free(X32);
    free(X);
    free(y);
    return 0;
}

static int bench_fit(const options *o)
{
    const size_t n = o->n, d = o->d;
    double *X = xmalloc(n * d, sizeof *X), *y = xmalloc(n, sizeof *y);
    gen_rows(0, n, d, X, y);
    print_checksums(X, y, n, d);
    rfx_features *f = make_features(o);
    rfx_ridge_params p = ridge_params(o);
    rfx_model *m = NULL;
    double best = INFINITY;
    for (int r = 0; r < o->repeats; r++) {
        rfx_model_free(m);
        double t0 = rfx_helper_seconds();
        check(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &p, &m),
              "rfx_ridge_fit");
        double t = rfx_helper_seconds() - t0;
        if (t < best) best = t;
    }
    printf("fit_f64_seconds %.6f\n", best);
    printf("fit_f64_peak_rss_bytes %.0f\n", peak_rss_bytes());
    printf("fit_rmse_train %.6g\n", rmse_rows(m, 0, n, d));

    /* where the time goes: the same fit as its two public halves */
    double best_acc = INFINITY, best_solve = INFINITY;
    for (int r = 0; r < o->repeats; r++) {
        rfx_stats *s;
        rfx_model *m2;
        double t0 = rfx_helper_seconds();
        check(rfx_stats_create(o->D, 1, &s), "rfx_stats_create");
        check(rfx_stats_add(s, f, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1)), "rfx_stats_add");
        double t1 = rfx_helper_seconds();
        check(rfx_ridge_solve(f, s, &p, &m2), "rfx_ridge_solve");
        double t2 = rfx_helper_seconds();
        rfx_model_free(m2);
        rfx_stats_free(s);
        if (t1 - t0 < best_acc) best_acc = t1 - t0;
        if (t2 - t1 < best_solve) best_solve = t2 - t1;
    }
    printf("fit_f64_accumulate_seconds %.6f\n", best_acc);
    printf("fit_f64_solve_seconds %.6f\n", best_solve);

    /* the floor in this process, with rfx's own BLAS and environment: one
     * threaded DSYRK Z^T Z of the whole n x D feature matrix (which the
     * fit never holds); the peer measures the same with numpy's BLAS */
    double *Z = xmalloc(n * o->D, sizeof *Z), *C = xmalloc(o->D * o->D, sizeof *C);
    check(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, o->D)),
          "rfx_features_transform");
    double best_syrk = INFINITY;
    for (int r = 0; r < o->repeats; r++) {
        double t0 = rfx_helper_seconds();
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)o->D, (int)n, 1.0, Z, (int)o->D,
                    0.0, C, (int)o->D);
        double t = rfx_helper_seconds() - t0;
        if (t < best_syrk) best_syrk = t;
    }
    printf("fit_f64_dsyrk_floor_seconds %.6f\n", best_syrk);
    free(Z);
    free(C);
    rfx_model_free(m);
    rfx_features_free(f);
    free(X);
    free(y);
    return 0;
}

/* The single-precision fit: f32 rows, f32 features and SSYRK blocks
 * accumulated into double statistics (rfx_stats_add_f32), then the same
 * double solve. Timed exactly as bench_fit; the RMSE shows the accuracy. */
static int bench_fit32(const options *o)
{
    const size_t n = o->n, d = o->d;
    double *X = xmalloc(n * d, sizeof *X), *y = xmalloc(n, sizeof *y);
    gen_rows(0, n, d, X, y);
    print_checksums(X, y, n, d);
    float *X32 = xmalloc(n * d, sizeof *X32), *y32 = xmalloc(n, sizeof *y32);
    for (size_t k = 0; k < n * d; k++) X32[k] = (float)X[k];
    for (size_t k = 0; k < n; k++) y32[k] = (float)y[k];
    rfx_features *f = make_features(o);
    rfx_ridge_params p = ridge_params(o);
    rfx_model *m = NULL;
    double best = INFINITY;
    for (int r = 0; r < o->repeats; r++) {
        rfx_stats *s;
        rfx_model_free(m);
        m = NULL;
        double t0 = rfx_helper_seconds();
        check(rfx_stats_create(o->D, 1, &s), "rfx_stats_create");
        check(rfx_stats_add_f32(s, f, rfx_cmatf_of(X32, n, d), rfx_cmatf_of(y32, n, 1)),
              "rfx_stats_add_f32");
        check(rfx_ridge_solve(f, s, &p, &m), "rfx_ridge_solve");
        double t = rfx_helper_seconds() - t0;
        rfx_stats_free(s);
        if (t < best) best = t;
    }
    printf("fit_f32_seconds %.6f\n", best);
    printf("fit_f32_peak_rss_bytes %.0f\n", peak_rss_bytes());
    printf("fit32_rmse_train %.6g\n", rmse_rows(m, 0, n, d));
    rfx_model_free(m);
    rfx_features_free(f);
    free(X32);
    free(y32);
    free(X);
    free(y);
    return 0;
}

/* A source that generates the benchmark rows block by block (X is never in
 * memory), like a database cursor would deliver them. */
typedef struct gen_state {
    size_t n, d, block, next_row;
    double *x, *y; /* one block */
} gen_state;

static rfx_status gen_next(rfx_source *src, rfx_block *out, int *done)
{
    gen_state *g = src->state;
    if (g->next_row >= g->n) {
        *done = 1;
        return RFX_OK;
    }
    size_t rows = g->n - g->next_row < g->block ? g->n - g->next_row : g->block;
    gen_rows(g->next_row, rows, g->d, g->x, g->y);
    g->next_row += rows;
    out->x = g->x;
    out->rows = rows;
    out->cols = g->d;
    out->stride = g->d;
    out->y = g->y;
    out->ny = 1;
    out->y_stride = 1;
    *done = 0;
    return RFX_OK;
}

static rfx_status gen_rewind(rfx_source *src)
{
    ((gen_state *)src->state)->next_row = 0;
    return RFX_OK;
}

static int bench_memory(const options *o, int in_memory)
{
    const size_t n = o->rows_fit, d = o->d;
    const char *tag = in_memory ? "memory_inmem" : "memory_stream";
    rfx_features *f = make_features(o);
    rfx_ridge_params p = ridge_params(o);
    double *X = NULL, *y = NULL;
    gen_state g = {n, d, o->block_rows, 0, NULL, NULL};
    rfx_source src = {gen_next, gen_rewind, NULL, &g};
    if (in_memory) {
        X = xmalloc(n * d, sizeof *X);
        y = xmalloc(n, sizeof *y);
        gen_rows(0, n, d, X, y);
    } else {
        g.x = xmalloc(g.block * d, sizeof *g.x);
        g.y = xmalloc(g.block, sizeof *g.y);
    }
    printf("%s_rows %zu\n", tag, n);
    printf("%s_rss_before_bytes %.0f\n", tag, peak_rss_bytes());
    rfx_model *m = NULL;
    double best = INFINITY;
    for (int r = 0; r < o->repeats; r++) {
        rfx_model_free(m);
        double t0 = rfx_helper_seconds();
        if (in_memory)
            check(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &p, &m),
                  "rfx_ridge_fit");
        else
            check(rfx_ridge_fit_source(f, &src, &p, &m), "rfx_ridge_fit_source");
        double t = rfx_helper_seconds() - t0;
        if (t < best) best = t;
    }
    printf("%s_seconds %.6f\n", tag, best);
    printf("%s_peak_rss_bytes %.0f\n", tag, peak_rss_bytes());
    /* a sanity check of the model on (at most) its first 10000 rows */
    printf("%s_rmse_train_head %.6g\n", tag, rmse_rows(m, 0, n < 10000 ? n : 10000, d));
    rfx_model_free(m);
    rfx_features_free(f);
    free(X);
    free(y);
    free(g.x);
    free(g.y);
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o)) return 1;
    printf("rfx_version %s\n", rfx_version());
    printf("isa %s\nisa_native %s\n", rfx_isa_name(rfx_isa_active()),
           rfx_isa_name(rfx_isa_native()));
    printf("mode %s\nn %zu\nd %zu\nD %zu\nthreads %d\nrepeats %d\nseed %llu\ngamma %.17g\n"
           "lambda %.17g\n",
           o.mode, o.n, o.d, o.D, o.threads, o.repeats, (unsigned long long)o.seed, o.gamma,
           o.lambda);
    fflush(stdout);
    int rc;
    if (!strcmp(o.mode, "transform")) rc = bench_transform(&o, 0);
    else if (!strcmp(o.mode, "transform32")) rc = bench_transform(&o, 1);
    else if (!strcmp(o.mode, "fit")) rc = bench_fit(&o);
    else if (!strcmp(o.mode, "fit32")) rc = bench_fit32(&o);
    else if (!strcmp(o.mode, "memory")) rc = bench_memory(&o, 0);
    else rc = bench_memory(&o, 1); /* memory-inmem */
    fflush(stdout);
    return rc;
}
