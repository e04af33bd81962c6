/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_structured - the structured feature maps against the dense one,
 * over the public API only.
 *
 * For each structure (iid: the dense fused GEMM + cos transform; sorf and
 * fastfood: fast Walsh-Hadamard transforms, O(D log d) per row; orthogonal
 * and halton, which transform densely like iid) it reports:
 *
 *   create      rfx_features_create (sampling; ORF's QR per block)
 *   transform   rfx_features_transform of n x d rows into a preallocated,
 *               touched n x D buffer, the best of --repeats runs (taken
 *               in turns over the structures: a shared machine's busy
 *               spells then spread over all of them)
 *   speedup     the iid transform time over this one
 *   error       |K - Z Z^T|_F / |K|_F over the first --rows-error rows
 *               (K the exact Gaussian kernel), the mean over --seeds seeds
 *
 * The data (no files needed), as bench_core.c:
 *
 *   X[i][j] = 2 sin(0.37 (i d + j) + j)    i < n, j < d
 *
 * Var(X) is 2, so the length scale is l = sqrt(2 d) (scikit-learn's
 * gamma = 'scale', 1 / (d Var X)). Gaussian kernel, cos-bias form.
 *
 * Output: a markdown table on stdout, and to --out FILE when given. Times in
 * seconds (CLOCK_MONOTONIC). Exit codes: 0 ok, 1 usage, 2 an rfx call
 * failed.
 */
#include "rfx.h"
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct options {
    size_t n, d, D, rows_error;
    int threads, repeats, seeds;
    const char *out;
} options;

static const char USAGE[] =
    "usage: rfx_bench_structured [options]\n"
    "  -n N              rows to transform (default 20000)\n"
    "  -d d              input dimension (default 784)\n"
    "  -D D              number of features (default 4096)\n"
    "  --threads T       threads (default 0: OMP_NUM_THREADS or all cores)\n"
    "  --repeats R       timed transforms, the best is reported (default 5)\n"
    "  --rows-error M    rows of the kernel approximation error (default 500)\n"
    "  --seeds S         seeds the error is averaged over (default 3)\n"
    "  --out FILE        also write the table to FILE\n";

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v == 0) return 1;
    *out = (size_t)v;
    return 0;
}

static int parse_options(int argc, char **argv, options *o)
{
    o->n = 20000;
    o->d = 784;
    o->D = 4096;
    o->rows_error = 500;
    o->threads = 0;
    o->repeats = 5;
    o->seeds = 3;
    o->out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(USAGE, stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "rfx_bench_structured: %s needs a value\n%s", a, USAGE);
            return 1;
        }
        const char *v = argv[++i];
        size_t t = 0;
        int bad = 0;
        if (strcmp(a, "-n") == 0) bad = parse_size(v, &o->n);
        else if (strcmp(a, "-d") == 0) bad = parse_size(v, &o->d);
        else if (strcmp(a, "-D") == 0) bad = parse_size(v, &o->D);
        else if (strcmp(a, "--rows-error") == 0) bad = parse_size(v, &o->rows_error);
        else if (strcmp(a, "--threads") == 0) {
            char *end;
            long x = strtol(v, &end, 10);
            bad = *end != '\0' || x < 0 || x > 4096;
            o->threads = (int)x;
        } else if (strcmp(a, "--repeats") == 0) {
            bad = parse_size(v, &t) || t > 1000;
            o->repeats = (int)t;
        } else if (strcmp(a, "--seeds") == 0) {
            bad = parse_size(v, &t) || t > 1000;
            o->seeds = (int)t;
        } else if (strcmp(a, "--out") == 0) {
            o->out = v;
        } else {
            fprintf(stderr, "rfx_bench_structured: unknown option %s\n%s", a, USAGE);
            return 1;
        }
        if (bad) {
            fprintf(stderr, "rfx_bench_structured: bad value '%s' for %s\n", v, a);
            return 1;
        }
    }
    return 0;
}

static int fail(const char *what)
{
    fprintf(stderr, "rfx_bench_structured: %s: %s\n", what, rfx_last_error());
    return 2;
}

typedef struct result {
    rfx_structure s;
    double create, transform, error;
} result;

/* |K - Z Z^T|_F / |K|_F over the m x m Gram matrix. */
static double approx_error(const double *Z, const double *K, size_t m, size_t D)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < m; j++) {
            double s = 0;
            for (size_t k = 0; k < D; k++) s += Z[i * D + k] * Z[j * D + k];
            double e = s - K[i * m + j];
            num += e * e;
            den += K[i * m + j] * K[i * m + j];
        }
    }
    return sqrt(num / den);
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o)) return 1;
    const size_t n = o.n, d = o.d, D = o.D;
    const size_t m = o.rows_error < n ? o.rows_error : n;
    double *X = malloc(n * d * sizeof *X), *Z = malloc(n * D * sizeof *Z);
    double *K = malloc(m * m * sizeof *K);
    if (!X || !Z || !K) {
        fprintf(stderr, "rfx_bench_structured: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) X[i * d + j] = 2.0 * sin(0.37 * (double)(i * d + j) + (double)j);
    memset(Z, 0, n * D * sizeof *Z);

    /* one map per structure (seed 1000) for the timings; the repeats go
     * round all structures in turn, so that a busy spell of a shared
     * machine does not fall on one structure's runs only */
    result res[5];
    rfx_features *maps[5] = {NULL, NULL, NULL, NULL, NULL};
    const rfx_structure order[5] = {RFX_STRUCTURE_IID, RFX_STRUCTURE_SORF,
                                    RFX_STRUCTURE_FASTFOOD, RFX_STRUCTURE_ORTHOGONAL,
                                    RFX_STRUCTURE_HALTON};
    for (int k = 0; k < 5; k++) {
        res[k].s = order[k];
        res[k].create = INFINITY;
        res[k].transform = INFINITY;
        res[k].error = 0;
    }
    for (int s = 0; s < o.seeds; s++) {
        for (int k = 0; k < 5; k++) {
            rfx_features_params p = rfx_features_params_default();
            p.n_features = D;
            p.length_scale = sqrt(2.0 * (double)d);
            p.n_threads = o.threads;
            p.structure = order[k];
            p.seed = (uint64_t)(1000 + s);
            rfx_features *f;
            double t0 = rfx_helper_seconds();
            if (rfx_features_create(&p, d, &f)) return fail("rfx_features_create");
            double t1 = rfx_helper_seconds() - t0;
            if (t1 < res[k].create) res[k].create = t1;
            if (s == 0 && k == 0 &&
                rfx_features_exact_kernel(f, rfx_cmat_of(X, m, d), rfx_cmat_of(X, m, d),
                                          rfx_mat_of(K, m, m)))
                return fail("rfx_features_exact_kernel");
            if (rfx_features_transform(f, rfx_cmat_of(X, m, d), rfx_mat_of(Z, m, D)))
                return fail("rfx_features_transform");
            res[k].error += approx_error(Z, K, m, D) / o.seeds;
            if (s == 0) maps[k] = f;
            else rfx_features_free(f);
        }
    }
    for (int rep = 0; rep < o.repeats; rep++) {
        for (int k = 0; k < 5; k++) {
            double a = rfx_helper_seconds();
            if (rfx_features_transform(maps[k], rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, D)))
                return fail("rfx_features_transform");
            double b = rfx_helper_seconds() - a;
            if (b < res[k].transform) res[k].transform = b;
        }
    }
    for (int k = 0; k < 5; k++) rfx_features_free(maps[k]);

    char table[4096];
    size_t len = 0;
    len += (size_t)snprintf(table + len, sizeof table - len,
                            "Structured feature maps, gaussian kernel, cos-bias form: n = %zu, "
                            "d = %zu, D = %zu, l = sqrt(2 d), %d thread(s) (0 = all), best of "
                            "%d transforms; error |K - ZZ^T|_F / |K|_F on %zu rows, mean of %d "
                            "seeds.\n\n"
                            "| structure | create (s) | transform (s) | speed-up vs iid | error |\n"
                            "|---|---:|---:|---:|---:|\n",
                            n, d, D, o.threads, o.repeats, m, o.seeds);
    for (int k = 0; k < 5; k++) {
        len += (size_t)snprintf(table + len, sizeof table - len,
                                "| %s | %.3f | %.3f | %.2f | %.4f |\n",
                                rfx_structure_name(res[k].s), res[k].create, res[k].transform,
                                res[0].transform / res[k].transform, res[k].error);
    }
    fputs(table, stdout);
    printf("speedup_sorf %.2f\nspeedup_fastfood %.2f\n", res[0].transform / res[1].transform,
           res[0].transform / res[2].transform);
    if (o.out) {
        FILE *fp = fopen(o.out, "w");
        if (!fp || fputs(table, fp) < 0 || fclose(fp) != 0) {
            fprintf(stderr, "rfx_bench_structured: cannot write %s\n", o.out);
            return 2;
        }
    }
    free(X);
    free(Z);
    free(K);
    return 0;
}
