/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_attention - exact softmax attention against linear attention with
 * positive random features (Performers' FAVOR+), over the public API only:
 * time and relative error against sequence length.
 *
 * For L = 256 .. Lmax (doubling): Q, K (L x d) with N(0, s^2) entries,
 * s = --scale / sqrt(d) (|q| about --scale), V (L x d) with N(0, 1)
 * entries; rfx_attention_exact (O(L^2 d)) and rfx_attention_linear with D
 * orthogonal positive features (O(L D d)), non-causal and causal. Times are
 * the best of --repeats runs (CLOCK_MONOTONIC); the error is
 * |Out_linear - Out_exact|_F / |Out_exact|_F. The feature map is sampled
 * once (its cost is not in the times). Output: a markdown table on stdout,
 * also written to --out.
 *
 * Build (against a build directory's static library):
 *   cc -O2 -fopenmp -Iinclude bench/bench_attention.c BUILD/librfx.a \
 *      -lopenblas -lsleef -lcsv -lz -lm -o bench_attention
 * Usage: bench_attention [--lmax L] [--d d] [--D D] [--scale s]
 *                        [--threads T] [--repeats R] [--out FILE]
 */
#include "rfx.h"
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the data's generator (tests/helpers.h) */
static unsigned long long rng_state = 0x2021ULL;
static double normal01(void) { return rfx_helper_normal(&rng_state); }

static double rel_frob(const double *A, const double *B, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (A[i] - B[i]) * (A[i] - B[i]);
        den += B[i] * B[i];
    }
    return sqrt(num / den);
}

int main(int argc, char **argv)
{
    size_t lmax = 8192, d = 64, D = 256;
    double scale = 1.0;
    int threads = 0, repeats = 3;
    const char *out = NULL;
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!v) {
            fprintf(stderr, "bench_attention: %s needs a value\n", o);
            return 1;
        }
        if (!strcmp(o, "--lmax")) lmax = strtoul(v, NULL, 10);
        else if (!strcmp(o, "--d")) d = strtoul(v, NULL, 10);
        else if (!strcmp(o, "--D")) D = strtoul(v, NULL, 10);
        else if (!strcmp(o, "--scale")) scale = atof(v);
        else if (!strcmp(o, "--threads")) threads = atoi(v);
        else if (!strcmp(o, "--repeats")) repeats = atoi(v);
        else if (!strcmp(o, "--out")) out = v;
        else {
            fprintf(stderr, "bench_attention: unknown option %s\n", o);
            return 1;
        }
        a++;
    }
    if (lmax < 256 || d < 1 || D < 1 || !(scale > 0) || repeats < 1) {
        fprintf(stderr, "bench_attention: bad sizes\n");
        return 1;
    }
    const double s = scale / sqrt((double)d);
    double *Q = malloc(lmax * d * sizeof *Q), *K = malloc(lmax * d * sizeof *K);
    double *V = malloc(lmax * d * sizeof *V), *E = malloc(lmax * d * sizeof *E);
    double *O = malloc(lmax * d * sizeof *O);
    if (!Q || !K || !V || !E || !O) return 2;
    for (size_t i = 0; i < lmax * d; i++) {
        Q[i] = s * normal01();
        K[i] = s * normal01();
        V[i] = normal01();
    }
    rfx_softmax_features *sf;
    if (rfx_softmax_features_create(d, D, 1, 1, &sf)) {
        fprintf(stderr, "bench_attention: %s\n", rfx_last_error());
        return 2;
    }
    char buf[8192];
    size_t len = 0;
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "# Exact against linear attention (rfx %s)\n\n"
                            "d = dv = %zu, D = %zu orthogonal positive features; Q, K entries "
                            "N(0, (%g / sqrt(d))^2) (|q| about %g), V entries N(0, 1); best of "
                            "%d, %d thread(s) (0 = all cores); times in seconds; error = "
                            "|Out_linear - Out_exact|_F / |Out_exact|_F.\n\n"
                            "| L | exact | linear | exact / linear | error | causal exact | "
                            "causal linear | ratio | causal error |\n"
                            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
                            rfx_version(), d, D, scale, scale, repeats, threads);
    fputs(buf, stdout);
    for (size_t L = 256; L <= lmax; L *= 2) {
        rfx_cmat q = rfx_cmat_of(Q, L, d), k = rfx_cmat_of(K, L, d), v = rfx_cmat_of(V, L, d);
        double t[4], err[2];
        for (int causal = 0; causal < 2; causal++) {
            double te = INFINITY, tl = INFINITY;
            for (int r = 0; r < repeats; r++) {
                double t0 = rfx_helper_seconds();
                if (rfx_attention_exact(q, k, v, rfx_mat_of(E, L, d), causal, threads)) goto fail;
                double t1 = rfx_helper_seconds();
                if (rfx_attention_linear(sf, q, k, v, rfx_mat_of(O, L, d), causal, threads))
                    goto fail;
                double t2 = rfx_helper_seconds();
                te = t1 - t0 < te ? t1 - t0 : te;
                tl = t2 - t1 < tl ? t2 - t1 : tl;
            }
            t[2 * causal] = te;
            t[2 * causal + 1] = tl;
            err[causal] = rel_frob(O, E, L * d);
        }
        size_t l0 = len;
        len += (size_t)snprintf(buf + len, sizeof buf - len,
                                "| %zu | %.4f | %.4f | %.1f | %.3f | %.4f | %.4f | %.1f | %.3f |\n",
                                L, t[0], t[1], t[0] / t[1], err[0], t[2], t[3], t[2] / t[3],
                                err[1]);
        fputs(buf + l0, stdout);
        fflush(stdout);
    }
    if (out) {
        FILE *fo = fopen(out, "w");
        if (!fo || fputs(buf, fo) < 0 || fclose(fo) != 0) {
            fprintf(stderr, "bench_attention: cannot write %s\n", out);
            return 2;
        }
    }
    rfx_softmax_features_free(sf);
    free(Q);
    free(K);
    free(V);
    free(E);
    free(O);
    return 0;
fail:
    fprintf(stderr, "bench_attention: %s\n", rfx_last_error());
    return 2;
}
