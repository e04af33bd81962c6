/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Independent input distributions, and Sobol sensitivity indices of any
 * function or fitted model by Monte Carlo: the Saltelli (2010) first-order and Jansen (1999)
 * total estimators on the A / B / AB_i design, optionally the Saltelli
 * (2002) second-order one on the extra BA_i, with percentile bootstrap
 * intervals. The estimators are written out in include/rfx/surrogate.h.
 */
#include "internal.h"
#include "rfx/surrogate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Philox stream keys of this file, distinct from the feature maps' (0) and
 * the fit's subsets (1): ASCII tags. */
#define RFX__STREAM_SAMPLE 0x73616d706c65ULL /* "sample": rfx_marginals_sample */
#define RFX__STREAM_SOBOL 0x736f626f6cULL    /* "sobol": rows of A and B      */
#define RFX__STREAM_BOOT 0x626f6f74ULL       /* "boot": bootstrap resamples   */

/* ------------------------------------------------------------------------ */
/* Marginals                                                                 */
/* ------------------------------------------------------------------------ */

rfx_status rfx_marginals_check(const rfx_marginal *m, size_t d)
{
    if (d == 0) return rfx__error(RFX_EINVAL, "marginals: d must be >= 1, got 0");
    if (!m) return rfx__error(RFX_EINVAL, "marginals is NULL");
    for (size_t j = 0; j < d; ++j) {
        double a = m[j].a, b = m[j].b;
        switch (m[j].kind) {
        case RFX_MARGINAL_UNIFORM:
            if (!isfinite(a) || !isfinite(b))
                return rfx__error(RFX_EINVAL,
                                  "marginals[%zu]: uniform bounds must be finite, got [%g, %g]",
                                  j, a, b);
            if (!(a < b))
                return rfx__error(RFX_EINVAL,
                                  "marginals[%zu]: uniform bounds need a < b, got [%g, %g]", j,
                                  a, b);
            break;
        case RFX_MARGINAL_NORMAL:
        case RFX_MARGINAL_LOGNORMAL:
            if (!isfinite(a))
                return rfx__error(RFX_EINVAL, "marginals[%zu]: %s mean a must be finite, got %g",
                                  j, m[j].kind == RFX_MARGINAL_NORMAL ? "normal" : "lognormal",
                                  a);
            if (!(b > 0) || !isfinite(b))
                return rfx__error(RFX_EINVAL,
                                  "marginals[%zu]: %s standard deviation b must be finite and "
                                  "> 0, got %g",
                                  j, m[j].kind == RFX_MARGINAL_NORMAL ? "normal" : "lognormal",
                                  b);
            break;
        default:
            return rfx__error(RFX_EINVAL, "marginals[%zu].kind: unknown kind %d", j,
                              (int)m[j].kind);
        }
    }
    return RFX_OK;
}

/* One draw from m (checked). */
static double marginal_draw(const rfx_marginal *m, rfx__rng *r)
{
    switch (m->kind) {
    case RFX_MARGINAL_UNIFORM: return m->a + (m->b - m->a) * rfx__rng_uniform(r);
    case RFX_MARGINAL_NORMAL: return m->a + m->b * rfx__rng_normal(r);
    case RFX_MARGINAL_LOGNORMAL: return exp(m->a + m->b * rfx__rng_normal(r));
    }
    return NAN;
}

rfx_status rfx_marginals_sample(const rfx_marginal *m, size_t d, uint64_t seed, rfx_mat X)
{
    RFX__TRY(rfx_marginals_check(m, d));
    RFX__TRY(rfx__check_mat(X, "X"));
    if (X.cols != d)
        return rfx__error(RFX_EDIM, "X has %zu columns, the marginals describe %zu inputs",
                          X.cols, d);
    for (size_t i = 0; i < X.rows; ++i) {
        rfx__rng r;
        double *x = X.data + i * X.stride;
        rfx__rng_init(&r, seed, RFX__STREAM_SAMPLE, (uint64_t)i);
        for (size_t j = 0; j < d; ++j) x[j] = marginal_draw(&m[j], &r);
    }
    return RFX_OK;
}

/* ------------------------------------------------------------------------ */
/* Sobol indices                                                             */
/* ------------------------------------------------------------------------ */

rfx_sobol_params rfx_sobol_params_default(void)
{
    rfx_sobol_params p;
    memset(&p, 0, sizeof p);
    p.n = 10000;
    p.seed = 0;
    p.n_bootstrap = 200;
    p.confidence = 0.95;
    p.batch_rows = 4096;
    p.n_threads = 0;
    p.progress = NULL;
    p.progress_user = NULL;
    p.second_order = 0;
    return p;
}

static rfx_status sobol_check(rfx_function_fn fn, const rfx_marginal *marginals, size_t d,
                              const rfx_sobol_params *p, const rfx_sobol_result *out)
{
    if (!fn) return rfx__error(RFX_EINVAL, "sobol: fn (the model callback) is NULL");
    if (!p) return rfx__error(RFX_EINVAL, "sobol: params is NULL");
    if (!out) return rfx__error(RFX_EINVAL, "sobol: out is NULL");
    if (!out->first || !out->total)
        return rfx__error(RFX_EINVAL, "sobol: out->%s is NULL (an array of d values is needed)",
                          out->first ? "total" : "first");
    RFX__TRY(rfx_marginals_check(marginals, d));
    if (p->n < 2) return rfx__error(RFX_EINVAL, "params.n must be >= 2, got %zu", p->n);
    if (!(p->confidence > 0 && p->confidence < 1))
        return rfx__error(RFX_EINVAL, "params.confidence must be in (0, 1), got %g",
                          p->confidence);
    if (p->batch_rows == 0) return rfx__error(RFX_EINVAL, "params.batch_rows must be >= 1");
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "params.n_threads must be >= 0, got %d", p->n_threads);
    if (p->second_order != 0 && p->second_order != 1)
        return rfx__error(RFX_EINVAL, "params.second_order must be 0 or 1, got %d",
                          p->second_order);
    if (p->second_order && !out->second)
        return rfx__error(RFX_EINVAL, "sobol: out->second is NULL (params.second_order needs "
                                      "an array of d x d values)");
    return RFX_OK;
}

/* Fill the design rows of base samples j0 .. j0+k-1 into X (k (d + 2) x d,
 * or k (2 d + 2) x d with second, contiguous): rows [0, k) of A, [k, 2k)
 * of B, then for each i the k rows of AB_i, then (second) for each i the k
 * rows of BA_i. Row j of A and of B comes from the substream j of (seed,
 * SOBOL): the A row's d numbers, then the B row's. */
static void sobol_design_block(const rfx_marginal *m, size_t d, uint64_t seed, int second,
                               size_t j0, size_t k, double *X)
{
    for (size_t jj = 0; jj < k; ++jj) {
        rfx__rng r;
        double *a = X + jj * d, *b = X + (k + jj) * d;
        rfx__rng_init(&r, seed, RFX__STREAM_SOBOL, (uint64_t)(j0 + jj));
        for (size_t t = 0; t < d; ++t) a[t] = marginal_draw(&m[t], &r);
        for (size_t t = 0; t < d; ++t) b[t] = marginal_draw(&m[t], &r);
        for (size_t i = 0; i < d; ++i) {
            double *ab = X + ((2 + i) * k + jj) * d;
            memcpy(ab, a, d * sizeof *ab);
            ab[i] = b[i];
        }
        for (size_t i = 0; second && i < d; ++i) {
            double *ba = X + ((2 + d + i) * k + jj) * d;
            memcpy(ba, b, d * sizeof *ba);
            ba[i] = a[i];
        }
    }
}

/* Which design matrix a row of a block belongs to, for messages. */
static void design_row_name(size_t row, size_t k, size_t d, size_t j0, char *buf, size_t len)
{
    size_t mat = row / k, j = j0 + row % k;
    if (mat == 0)
        snprintf(buf, len, "row %zu of A", j);
    else if (mat == 1)
        snprintf(buf, len, "row %zu of B", j);
    else if (mat < 2 + d)
        snprintf(buf, len, "row %zu of AB_%zu", j, mat - 2);
    else
        snprintf(buf, len, "row %zu of BA_%zu", j, mat - 2 - d);
}

/* A uniform index in [0, n): from 32 random bits (one half of a 64-bit
 * word, the other half kept in *spare) by multiply-shift when n < 2^32,
 * which skews the probabilities by at most n / 2^32 (2e-5 for n = 1e5),
 * nothing next to the bootstrap's own error; from 53 bits otherwise. */
static size_t draw_index(rfx__rng *r, size_t n, uint64_t *spare, int *have)
{
    if ((uint64_t)n >= ((uint64_t)1 << 32)) {
        size_t j = (size_t)(rfx__rng_uniform(r) * (double)n);
        return j < n ? j : n - 1;
    }
    uint32_t u;
    if (*have) {
        u = (uint32_t)(*spare >> 32);
        *have = 0;
    } else {
        *spare = rfx__rng_u64(r);
        u = (uint32_t)*spare;
        *have = 1;
    }
    return (size_t)(((uint64_t)u * (uint64_t)n) >> 32);
}

/* The number of estimators: S_i and S_Ti, and with second order S_ik for
 * i < k. */
static size_t sobol_n_estimators(size_t d, int second)
{
    return 2 * d + (second ? d * (d - 1) / 2 : 0);
}

/* The estimators over N base samples, the j-th taken as idx(j): the
 * identity for the point estimate, or N draws with replacement from r for
 * a bootstrap resample (the same draw serves A, B and every AB_i and BA_i,
 * keeping the rows paired). Outputs are centred at c. est gets S_1..S_d,
 * then S_T1..S_Td, then when fBA is not NULL S_ik for i < k in row-major
 * order (S_12, S_13, .., S_23, ..); *mean and *var (may be NULL) of the 2N
 * outputs of A and B. The first-order and total sums are the same
 * operations with or without fBA, so their bits do not depend on it. Cost
 * N (2 d + 4) flops, N (d^2 + d + 6) with fBA. */
static void sobol_estimators(const double *fA, const double *fB, const double *fAB,
                             const double *fBA, size_t n, size_t d, double c, rfx__rng *r,
                             double *est, double *mean, double *var)
{
    double s1 = 0.0, s2 = 0.0, sab = 0.0, V;
    double *first = est, *total = est + d, *pair = est + 2 * d;
    size_t ne = sobol_n_estimators(d, fBA != NULL);
    uint64_t spare = 0;
    int have = 0;
    for (size_t i = 0; i < ne; ++i) est[i] = 0.0;
    for (size_t t = 0; t < n; ++t) {
        size_t j = r ? draw_index(r, n, &spare, &have) : t;
        double a = fA[j] - c, b = fB[j] - c;
        const double *ab = fAB + j * d;
        s1 += a + b;
        s2 += a * a + b * b;
        for (size_t i = 0; i < d; ++i) {
            double x = ab[i] - c, e = a - x;
            first[i] += b * (x - a);
            total[i] += e * e;
        }
        if (fBA) {
            /* sum of f(BA_i) f(AB_k) over i < k, and of f(A) f(B) once */
            const double *ba = fBA + j * d;
            double *q = pair;
            sab += a * b;
            for (size_t i = 0; i < d; ++i) {
                double y = ba[i] - c;
                for (size_t k = i + 1; k < d; ++k) *q++ += y * (ab[k] - c);
            }
        }
    }
    double m = s1 / (2.0 * (double)n);
    V = s2 / (2.0 * (double)n) - m * m;
    for (size_t i = 0; i < d; ++i) {
        first[i] = V > 0 ? first[i] / (double)n / V : NAN;
        total[i] = V > 0 ? total[i] / (2.0 * (double)n) / V : NAN;
    }
    if (fBA) {
        double *q = pair;
        for (size_t i = 0; i < d; ++i)
            for (size_t k = i + 1; k < d; ++k, ++q)
                *q = V > 0 ? (*q - sab) / (double)n / V - first[i] - first[k] : NAN;
    }
    if (mean) *mean = m + c;
    if (var) *var = V;
}

static int compare_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    /* NaN last */
    if (isnan(a)) return isnan(b) ? 0 : 1;
    if (isnan(b)) return -1;
    return (a > b) - (a < b);
}

/* The q-quantile of sorted v (n finite values first), linear interpolation
 * between order statistics (Hyndman & Fan type 7); NaN when none. */
static double quantile_sorted(const double *v, size_t n, double q)
{
    if (n == 0) return NAN;
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n) return v[n - 1];
    return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

static rfx_status report_progress(const rfx_sobol_params *p, const char *stage, double fraction)
{
    if (p->progress && p->progress(p->progress_user, stage, fraction))
        return rfx__error(RFX_ECANCELLED, "sobol: cancelled by the progress callback (%s)",
                          stage);
    return RFX_OK;
}

/* Evaluate the whole design into fA (N), fB (N), fAB (N x d, row j holds
 * f(AB_0)_j .. f(AB_{d-1})_j) and, when not NULL, fBA (N x d, likewise for
 * the BA_i). */
static rfx_status sobol_evaluate(rfx_function_fn fn, void *user, const rfx_marginal *m, size_t d,
                                 const rfx_sobol_params *p, double *fA, double *fB, double *fAB,
                                 double *fBA)
{
    size_t per = fBA ? 2 * d + 2 : d + 2; /* design rows per base sample */
    size_t n = p->n, k = p->batch_rows / per, rows_max = 0, nX = 0;
    double *X = NULL, *y = NULL;
    rfx_status st;
    if (k == 0) k = 1;
    if (k > n) k = n;
    RFX__TRY(rfx__mul(k, per, &rows_max, "sobol design block rows"));
    RFX__TRY(rfx__mul(rows_max, d, &nX, "sobol design block"));
    st = rfx__alloc(nX, sizeof *X, (void **)&X, "sobol design block");
    if (st == RFX_OK) st = rfx__alloc(rows_max, sizeof *y, (void **)&y, "sobol block outputs");
    for (size_t j0 = 0; st == RFX_OK && j0 < n; j0 += k) {
        size_t kb = n - j0 < k ? n - j0 : k, rows = kb * per;
        sobol_design_block(m, d, p->seed, fBA != NULL, j0, kb, X);
        for (size_t off = 0; off < rows; off += p->batch_rows) {
            size_t len = rows - off < p->batch_rows ? rows - off : p->batch_rows;
            char what[96];
            rfx_clear_error();
            st = fn(user, rfx_cmat_of(X + off * d, len, d), y + off);
            if (st != RFX_OK) {
                char last[96];
                design_row_name(off, kb, d, j0, what, sizeof what);
                design_row_name(off + len - 1, kb, d, j0, last, sizeof last);
                if (rfx_last_error()[0] == '\0')
                    rfx__error(st, "the model callback failed with status %d (%s)", (int)st,
                               rfx_strerror(st));
                rfx__error_prefix("sobol: evaluating %s .. %s", what, last);
                break;
            }
            for (size_t t = off; t < off + len; ++t)
                if (!isfinite(y[t])) {
                    design_row_name(t, kb, d, j0, what, sizeof what);
                    st = rfx__error(RFX_ENUMERIC, "sobol: the model returned %g at %s", y[t],
                                    what);
                    break;
                }
            if (st != RFX_OK) break;
        }
        if (st != RFX_OK) break;
        memcpy(fA + j0, y, kb * sizeof *y);
        memcpy(fB + j0, y + kb, kb * sizeof *y);
        for (size_t i = 0; i < d; ++i) {
            const double *yi = y + (2 + i) * kb;
            for (size_t jj = 0; jj < kb; ++jj) fAB[(j0 + jj) * d + i] = yi[jj];
        }
        for (size_t i = 0; fBA && i < d; ++i) {
            const double *yi = y + (2 + d + i) * kb;
            for (size_t jj = 0; jj < kb; ++jj) fBA[(j0 + jj) * d + i] = yi[jj];
        }
        st = report_progress(p, "sobol: evaluating", (double)(j0 + kb) / (double)n);
    }
    free(y);
    free(X);
    return st;
}

/* B bootstrap replicates of the ne estimators (sobol_n_estimators) into
 * reps (B x ne). One
 * parallel region over the resamples, each drawn from its own substream
 * into its own row, so the bits do not depend on the threads or the
 * schedule. Progress is reported by the calling thread (thread 0 of the
 * team) from a shared count of finished resamples; a cancellation stops
 * every thread at its next resample. Small jobs (under ~2^20 flops) run on
 * the calling thread alone: a team costs more than it saves there. */
static rfx_status sobol_bootstrap(const double *fA, const double *fB, const double *fAB,
                                  const double *fBA, size_t d, double c,
                                  const rfx_sobol_params *p, double *reps)
{
    size_t B = p->n_bootstrap, n = p->n, done = 0, ne = sobol_n_estimators(d, fBA != NULL);
    int nt = rfx__threads(p->n_threads), stop = 0;
    double work = (double)B * (double)n * (double)(ne + 4);
    if (work < 1048576.0) nt = 1;
    if ((size_t)nt > B) nt = (int)B;
#pragma omp parallel num_threads(nt)
    {
#pragma omp for schedule(dynamic, 1)
        for (long long b = 0; b < (long long)B; ++b) {
            int halt;
#pragma omp atomic read
            halt = stop;
            if (!halt) {
                rfx__rng r;
                rfx__rng_init(&r, p->seed, RFX__STREAM_BOOT, (uint64_t)b);
                sobol_estimators(fA, fB, fAB, fBA, n, d, c, &r, reps + (size_t)b * ne, NULL,
                                 NULL);
            }
            size_t finished;
#pragma omp atomic capture
            finished = ++done;
#ifdef _OPENMP
            int caller = omp_get_thread_num() == 0;
#else
            int caller = 1;
#endif
            if (caller && !halt && p->progress &&
                p->progress(p->progress_user, "sobol: bootstrap", (double)finished / (double)B)) {
#pragma omp atomic write
                stop = 1;
            }
        }
    }
    if (stop)
        return rfx__error(RFX_ECANCELLED,
                          "sobol: cancelled by the progress callback (sobol: bootstrap)");
    return report_progress(p, "sobol: bootstrap", 1.0);
}

/* The q-quantiles alpha and 1 - alpha of estimator e over the B replicates
 * (B x ne) into ci[0], ci[1]; NaN without replicates. col: B scratch. */
static void bootstrap_interval(const double *reps, size_t B, size_t ne, size_t e, double alpha,
                               double *col, double *ci)
{
    size_t nfin = 0;
    ci[0] = ci[1] = NAN;
    if (B == 0) return;
    for (size_t b = 0; b < B; ++b) col[b] = reps[b * ne + e];
    qsort(col, B, sizeof *col, compare_double);
    while (nfin < B && !isnan(col[nfin])) nfin++;
    ci[0] = quantile_sorted(col, nfin, alpha);
    ci[1] = quantile_sorted(col, nfin, 1.0 - alpha);
}

rfx_status rfx_sobol_estimate(rfx_function_fn fn, void *user, const rfx_marginal *marginals,
                              size_t d, const rfx_sobol_params *params, rfx_sobol_result *out)
{
    size_t n, nf = 0, nrep = 0, nci = 0, B, ne;
    double *f = NULL, *fA, *fB, *fAB, *fBA = NULL, *est = NULL, *reps = NULL, *col = NULL;
    double *ci = NULL;
    double mean = 0.0, var = 0.0, c = 0.0;
    int second;
    rfx_status st;

    RFX__TRY(sobol_check(fn, marginals, d, params, out));
    n = params->n;
    B = params->n_bootstrap;
    second = params->second_order;
    if (second) RFX__TRY(rfx__mul(d, d, &nci, "sobol second-order indices (d x d)"));
    ne = sobol_n_estimators(d, second);
    RFX__TRY(rfx__mul(n, second ? 2 * d + 2 : d + 2, &nf,
                      "sobol model outputs (N (d + 2), N (2 d + 2) with second order)"));
    RFX__TRY(rfx__mul(B, ne, &nrep, "sobol bootstrap replicates"));
    st = rfx__alloc(nf, sizeof *f, (void **)&f, "sobol model outputs");
    if (st == RFX_OK) st = rfx__alloc(ne, sizeof *est, (void **)&est, "sobol estimates");
    /* the interval bounds of every estimator, lo then hi */
    if (st == RFX_OK) st = rfx__alloc(2 * ne, sizeof *ci, (void **)&ci, "sobol intervals");
    if (st == RFX_OK && B > 0)
        st = rfx__alloc(nrep, sizeof *reps, (void **)&reps, "sobol bootstrap replicates");
    if (st == RFX_OK && B > 0)
        st = rfx__alloc(B, sizeof *col, (void **)&col, "sobol bootstrap column");
    if (st != RFX_OK) goto done;
    fA = f;
    fB = f + n;
    fAB = f + 2 * n;
    if (second) fBA = f + (2 + d) * n;

    st = sobol_evaluate(fn, user, marginals, d, params, fA, fB, fAB, fBA);
    if (st != RFX_OK) goto done;

    /* centre at the mean of f(A) and f(B): the first-order products then
     * carry no mean^2 term to cancel */
    for (size_t j = 0; j < n; ++j) c += fA[j] + fB[j];
    c /= 2.0 * (double)n;
    sobol_estimators(fA, fB, fAB, fBA, n, d, c, NULL, est, &mean, &var);
    if (!(var > 0)) {
        st = rfx__error(RFX_ENUMERIC,
                        "sobol: the model output is constant over the %zu points of A and B "
                        "(variance 0): Sobol indices are undefined", 2 * n);
        goto done;
    }

    if (B > 0) {
        st = sobol_bootstrap(fA, fB, fAB, fBA, d, c, params, reps);
        if (st != RFX_OK) goto done;
    }
    {
        double alpha = 0.5 * (1.0 - params->confidence), pair[2];
        for (size_t e = 0; e < ne; ++e) {
            bootstrap_interval(reps, B, ne, e, alpha, col, pair);
            ci[e] = pair[0];
            ci[ne + e] = pair[1];
        }
    }

    /* outputs, only now that nothing can fail */
    {
        double *lo[2] = { out->first_lo, out->total_lo }, *hi[2] = { out->first_hi, out->total_hi };
        for (size_t e = 0; e < 2 * d; ++e) {
            size_t which = e / d, i = e % d;
            if (lo[which]) lo[which][i] = ci[e];
            if (hi[which]) hi[which][i] = ci[ne + e];
        }
        memcpy(out->first, est, d * sizeof *est);
        memcpy(out->total, est + d, d * sizeof *est);
        if (second) {
            /* the pairs i < k of est, mirrored; S_i and its interval on the
             * diagonal */
            double *v[3] = { out->second, out->second_lo, out->second_hi };
            const double *src[3] = { est, ci, ci + ne };
            for (int w = 0; w < 3; ++w) {
                size_t e = 2 * d;
                if (!v[w]) continue;
                for (size_t i = 0; i < d; ++i) {
                    v[w][i * d + i] = src[w][i];
                    for (size_t k = i + 1; k < d; ++k, ++e)
                        v[w][i * d + k] = v[w][k * d + i] = src[w][e];
                }
            }
        }
        out->mean = mean;
        out->variance = var;
        out->n_evaluations = nf;
    }

done:
    free(col);
    free(reps);
    free(ci);
    free(est);
    free(f);
    return st;
}

/* ------------------------------------------------------------------------ */
/* A fitted model as the function                                            */
/* ------------------------------------------------------------------------ */

typedef struct model_fn {
    const rfx_model *m;
    size_t target, ny, cap; /* cap: rows of buf */
    double *buf;            /* cap x ny predictions (ny > 1 only) */
} model_fn;

static rfx_status model_fn_eval(void *user, rfx_cmat X, double *y)
{
    model_fn *s = user;
    if (s->ny == 1) return rfx_model_predict(s->m, X, rfx_mat_of(y, X.rows, 1), rfx_mat_none());
    if (X.rows > s->cap)
        return rfx__error(RFX_EINTERNAL, "sobol: %zu rows exceed the buffer of %zu", X.rows,
                          s->cap);
    RFX__TRY(rfx_model_predict(s->m, X, rfx_mat_of(s->buf, X.rows, s->ny), rfx_mat_none()));
    for (size_t i = 0; i < X.rows; ++i) y[i] = s->buf[i * s->ny + s->target];
    return RFX_OK;
}

rfx_status rfx_sobol_model(const rfx_model *m, size_t target, const rfx_marginal *marginals,
                           size_t d, const rfx_sobol_params *params, rfx_sobol_result *out)
{
    rfx_model_info info;
    model_fn s;
    rfx_status st;
    if (!m) return rfx__error(RFX_EINVAL, "rfx_sobol_model: m is NULL");
    if (!params) return rfx__error(RFX_EINVAL, "sobol: params is NULL");
    RFX__TRY(rfx_model_get_info(m, &info));
    if (d != info.n_inputs)
        return rfx__error(RFX_EDIM, "sobol: the marginals describe %zu inputs, the model has %zu",
                          d, info.n_inputs);
    if (target >= info.n_targets)
        return rfx__error(RFX_EINVAL, "sobol: target %zu is out of range (the model has %zu)",
                          target, info.n_targets);
    memset(&s, 0, sizeof s);
    s.m = m;
    s.target = target;
    s.ny = info.n_targets;
    if (s.ny > 1) {
        /* the callback gets at most batch_rows rows, and never more than
         * the N (d + 2) of the design, N (2 d + 2) with second order */
        size_t rows = 0, cap = params->batch_rows, nbuf = 0;
        size_t per = params->second_order ? 2 * d + 2 : d + 2;
        if (rfx__mul(params->n, per, &rows, "sobol design rows") == RFX_OK && rows < cap)
            cap = rows;
        s.cap = cap ? cap : 1;
        RFX__TRY(rfx__mul(s.cap, s.ny, &nbuf, "sobol model predictions"));
        RFX__TRY(rfx__alloc(nbuf, sizeof *s.buf, (void **)&s.buf, "sobol model predictions"));
    }
    st = rfx_sobol_estimate(model_fn_eval, &s, marginals, d, params, out);
    free(s.buf);
    return st;
}
