/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_sinks - accuracy against fit time of random kitchen sinks and the
 * greedy fit they replace (Rahimi & Recht, NIPS 2008, whose figures plot
 * test error against training time for random features and AdaBoost-style
 * greedy fitting), over the public API only.
 *
 * Data: Friedman #1 (Friedman 1991), x ~ U(0, 1)^10,
 *     y = 10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5 + e, e ~ N(0, 1)
 * (five inputs are noise), n training and n_test test rows made here from
 * a fixed seed. The error is the relative test error |yhat - y| / |y - ybar|
 * (the noise alone gives about 1 / 4.9 = 0.20).
 *
 * For each K (number of nonlinearities), three fits on the same K:
 *   sinks   rfx_sinks_fit: K random cos features of the Gaussian kernel
 *           (length scale --length-scale), squared loss, the box
 *           |alpha_k| <= C / K (--C), default tolerance;
 *   ridge   rfx_ridge_fit on the same features, penalty chosen by GCV
 *           (the unconstrained fit with its usual regulariser);
 *   greedy  rfx_greedy_fit: K terms, each the best of --candidates draws
 *           from the same distribution, refined by --refine Gauss-Newton
 *           steps, all coefficients refitted by least squares after each.
 * Times are wall-clock seconds of the fit call (CLOCK_MONOTONIC), features
 * included. Output: a markdown table on stdout, also written to --out.
 *
 * Build (against a build directory's static library):
 *   cc -O2 -fopenmp -Iinclude bench/bench_sinks.c BUILD/librfx.a \
 *      -lopenblas -lsleef -lcsv -lz -lm -o bench_sinks
 * Usage: bench_sinks [--n N] [--n-test N] [--kmax K] [--C C]
 *                    [--length-scale L] [--candidates M] [--refine S]
 *                    [--threads T] [--out FILE]
 */
#include "rfx.h"
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the data's generator (tests/helpers.h) */
static unsigned long long rng_state = 0x2008ULL;
static double uniform01(void) { return rfx_helper_uniform_open(&rng_state); }
static double normal01(void) { return rfx_helper_normal(&rng_state); }

static void friedman1(size_t n, double *X, double *y)
{
    const double pi = 3.141592653589793;
    for (size_t i = 0; i < n; i++) {
        double *x = X + i * 10;
        for (int j = 0; j < 10; j++) x[j] = uniform01();
        y[i] = 10 * sin(pi * x[0] * x[1]) + 20 * (x[2] - 0.5) * (x[2] - 0.5) + 10 * x[3] +
               5 * x[4] + normal01();
    }
}

static double rel_error(const rfx_model *m, const double *X, const double *y, size_t n)
{
    double *yh = malloc(n * sizeof *yh), num = 0, den = 0, mean = 0;
    if (!yh || rfx_model_predict(m, rfx_cmat_of(X, n, 10), rfx_mat_of(yh, n, 1), rfx_mat_none())) {
        free(yh);
        return NAN;
    }
    for (size_t i = 0; i < n; i++) mean += y[i] / (double)n;
    for (size_t i = 0; i < n; i++) {
        num += (yh[i] - y[i]) * (yh[i] - y[i]);
        den += (y[i] - mean) * (y[i] - mean);
    }
    free(yh);
    return sqrt(num / den);
}

static int fail(const char *what)
{
    fprintf(stderr, "bench_sinks: %s: %s\n", what, rfx_last_error());
    return 2;
}

int main(int argc, char **argv)
{
    size_t n = 10000, n_test = 5000, kmax = 1024, M = 32, refine = 3;
    double C = 30.0, ls = 0.6;
    int threads = 0;
    const char *out = NULL;
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!v) {
            fprintf(stderr, "bench_sinks: %s needs a value\n", o);
            return 1;
        }
        if (!strcmp(o, "--n")) n = strtoul(v, NULL, 10);
        else if (!strcmp(o, "--n-test")) n_test = strtoul(v, NULL, 10);
        else if (!strcmp(o, "--kmax")) kmax = strtoul(v, NULL, 10);
        else if (!strcmp(o, "--C")) C = atof(v);
        else if (!strcmp(o, "--length-scale")) ls = atof(v);
        else if (!strcmp(o, "--candidates")) M = strtoul(v, NULL, 10);
        else if (!strcmp(o, "--refine")) refine = strtoul(v, NULL, 10);
        else if (!strcmp(o, "--threads")) threads = atoi(v);
        else if (!strcmp(o, "--out")) out = v;
        else {
            fprintf(stderr, "bench_sinks: unknown option %s\n", o);
            return 1;
        }
        a++;
    }
    if (n < 10 || n_test < 10 || kmax < 16 || M < 1 || !(C > 0) || !(ls > 0)) {
        fprintf(stderr, "bench_sinks: bad sizes\n");
        return 1;
    }
    double *X = malloc(n * 10 * sizeof *X), *y = malloc(n * sizeof *y);
    double *Xt = malloc(n_test * 10 * sizeof *Xt), *yt = malloc(n_test * sizeof *yt);
    if (!X || !y || !Xt || !yt) return 2;
    friedman1(n, X, y);
    friedman1(n_test, Xt, yt);

    char buf[16384];
    size_t len = 0;
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "# Random kitchen sinks against greedy fitting (rfx %s)\n\n"
                            "Friedman #1, d = 10, noise sd 1; %zu training, %zu test rows. "
                            "Relative test error |yhat - y| / |y - mean y| (noise alone: about "
                            "0.20); fit times in seconds, %d thread(s) (0 = all cores).\n"
                            "sinks: cos features of the Gaussian kernel, length scale %g, "
                            "squared loss, box C = %g (|alpha_k| <= C/K on the unscaled "
                            "cosines); ridge: the same features, penalty by GCV; greedy: best "
                            "of %zu candidates from the same distribution per term, %zu "
                            "Gauss-Newton refinement steps, all coefficients refitted; relaxed: "
                            "the same terms' search with the convex update f_k = (1 - a) "
                            "f_{k-1} + g phi_k (Jones 1992, Barron 1993).\n\n"
                            "| K | sinks error | sinks time | iterations (+ Newton) | at bound | ridge error "
                            "| ridge time | greedy error | greedy time | relaxed error | relaxed "
                            "time |\n"
                            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                            "| ---: |\n",
                            rfx_version(), n, n_test, threads, ls, C, M, refine);
    fputs(buf, stdout);
    for (size_t K = 16; K <= kmax; K *= 2) {
        rfx_features_params fp = rfx_features_params_default();
        fp.n_features = K;
        fp.length_scale = ls;
        fp.seed = 1;
        fp.n_threads = threads;
        rfx_features *f;
        if (rfx_features_create(&fp, 10, &f)) return fail("features");

        rfx_sinks_params sp = rfx_sinks_params_default();
        sp.C = C;
        sp.n_threads = threads;
        rfx_sinks_report rep;
        rfx_model *ms, *mr, *mg;
        double t0 = rfx_helper_seconds();
        if (rfx_sinks_fit(f, rfx_cmat_of(X, n, 10), y, &sp, &ms, &rep)) return fail("sinks");
        double ts = rfx_helper_seconds() - t0;

        rfx_ridge_params rp = rfx_ridge_params_default();
        rp.select = RFX_SELECT_GCV;
        rp.n_threads = threads;
        t0 = rfx_helper_seconds();
        if (rfx_ridge_fit(f, rfx_cmat_of(X, n, 10), rfx_cmat_of(y, n, 1), &rp, &mr))
            return fail("ridge");
        double tr = rfx_helper_seconds() - t0;

        rfx_greedy_params gp = rfx_greedy_params_default();
        gp.features = fp;
        gp.n_terms = K;
        gp.n_candidates = M;
        gp.refine_steps = refine;
        gp.n_threads = threads;
        t0 = rfx_helper_seconds();
        if (rfx_greedy_fit(rfx_cmat_of(X, n, 10), y, &gp, &mg, NULL, NULL)) return fail("greedy");
        double tg = rfx_helper_seconds() - t0;
        rfx_model *mx;
        gp.update = RFX_GREEDY_RELAXED;
        t0 = rfx_helper_seconds();
        if (rfx_greedy_fit(rfx_cmat_of(X, n, 10), y, &gp, &mx, NULL, NULL))
            return fail("relaxed greedy");
        double tx = rfx_helper_seconds() - t0;

        size_t l0 = len;
        len += (size_t)snprintf(buf + len, sizeof buf - len,
                                "| %zu | %.4f | %.3f | %zu + %zu%s | %zu | %.4f | %.3f | %.4f | %.3f "
                                "| %.4f | %.3f |\n",
                                K, rel_error(ms, Xt, yt, n_test), ts, rep.iterations,
                                rep.newton_steps, rep.converged ? "" : " (not converged)", rep.n_at_bound,
                                rel_error(mr, Xt, yt, n_test), tr,
                                rel_error(mg, Xt, yt, n_test), tg, rel_error(mx, Xt, yt, n_test),
                                tx);
        fputs(buf + l0, stdout);
        fflush(stdout);
        rfx_model_free(ms);
        rfx_model_free(mr);
        rfx_model_free(mg);
        rfx_model_free(mx);
        rfx_features_free(f);
    }
    if (out) {
        FILE *fo = fopen(out, "w");
        if (!fo || fputs(buf, fo) < 0 || fclose(fo) != 0) {
            fprintf(stderr, "bench_sinks: cannot write %s\n", out);
            return 2;
        }
    }
    free(X);
    free(y);
    free(Xt);
    free(yt);
    return 0;
}
