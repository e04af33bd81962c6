/* SPDX-License-Identifier: BSD-3-Clause */
/* Stochastic gradient descent with a kernel in the four strategies of the
 * kernel trick: the weight-space step w <- w - alpha_t l'(w.phi(x_i), y_i)
 * phi(x_i) with the features computed on the fly or cached, and the
 * dual-space step u_i <- u_i - alpha_t l'(sum_j k(x_i, x_j) u_j, y_i) with
 * the kernel values computed on the fly or the Gram matrix cached. The
 * math, the cost table and the conventions are in include/rfx/kernel_sgd.h.
 *
 * Every strategy draws the same index sequence (one Philox stream of the
 * seed) and computes each step's inner product as the same fixed-order sum
 * (rfx__dot), so with the kernel of a feature map the four agree up to the
 * rounding of the kernel values themselves. The caches are built by the
 * threaded, thread-count-independent transforms of the library; the steps
 * run on the calling thread with single-threaded BLAS. */
#include "internal.h"
#include "rfx/kernel_sgd.h"

#include <math.h>
#include <string.h>

/* The Philox stream of the index sequence ("ksgd"). */
#define KSGD_STREAM 0x6b736764ull

/* ------------------------------------------------------------------------ */
/* Names and parameters                                                      */
/* ------------------------------------------------------------------------ */

rfx_kernel_sgd_params rfx_kernel_sgd_params_default(void)
{
    rfx_kernel_sgd_params p;
    memset(&p, 0, sizeof p);
    p.strategy = RFX_SGD_GRAM_CACHED;
    p.loss = RFX_LOSS_LOGISTIC;
    p.alpha = 0.1;
    p.t0 = 0.0;
    p.lambda = 0.0;
    p.n_iter = 0;
    p.seed = 0;
    p.n_threads = 0;
    p.cache_limit = 0;
    p.progress = NULL;
    p.progress_user = NULL;
    return p;
}

static rfx_status check_params(const rfx_kernel_sgd_params *p)
{
    if ((unsigned)p->strategy > RFX_SGD_GRAM_CACHED)
        return rfx__error(RFX_EINVAL, "kernel_sgd.strategy: %d is not an rfx_sgd_strategy",
                          (int)p->strategy);
    if (p->loss != RFX_LOSS_LOGISTIC && p->loss != RFX_LOSS_HINGE &&
        p->loss != RFX_LOSS_SQUARED_HINGE)
        return rfx__error(RFX_EINVAL,
                          "kernel_sgd.loss: %d is not RFX_LOSS_LOGISTIC, RFX_LOSS_HINGE or "
                          "RFX_LOSS_SQUARED_HINGE",
                          (int)p->loss);
    if (!(p->alpha > 0 && isfinite(p->alpha)))
        return rfx__error(RFX_EINVAL, "kernel_sgd.alpha: must be > 0 and finite, got %g", p->alpha);
    if (!(p->t0 >= 0 && isfinite(p->t0)))
        return rfx__error(RFX_EINVAL, "kernel_sgd.t0: must be >= 0 and finite, got %g", p->t0);
    if (!(p->lambda >= 0 && p->alpha * p->lambda < 1))
        return rfx__error(RFX_EINVAL,
                          "kernel_sgd.lambda: must be >= 0 with alpha lambda < 1, got lambda = %g "
                          "(alpha = %g)",
                          p->lambda, p->alpha);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "kernel_sgd.n_threads: must be >= 0, got %d", p->n_threads);
    return RFX_OK;
}

/* ------------------------------------------------------------------------ */
/* The model                                                                 */
/* ------------------------------------------------------------------------ */

struct rfx_kernel_sgd {
    rfx_kernel_sgd_params params; /* n_iter resolved to T; progress cleared  */
    size_t n, d;
    /* weight space (strategies 1-2) */
    rfx_features *f;              /* owned copy; threads set to n_threads   */
    size_t D;
    double *w;                    /* D                                      */
    size_t ws_len;                /* the map's transform workspace (doubles) */
    /* dual space (strategies 3-4) */
    rfx_kern *k;                  /* held                                   */
    double *u;                    /* n                                      */
    size_t n_sv;                  /* rows with u_j != 0                     */
    double *sv_x;                 /* n_sv x d, those rows                    */
    double *sv_u;                 /* n_sv, their coefficients               */
    /* what the fit did */
    size_t feature_evals, kernel_evals;
    double flops;
    size_t cache_bytes, state_bytes;
};

void rfx_kernel_sgd_free(rfx_kernel_sgd *m)
{
    if (!m) return;
    rfx_features_free(m->f);
    free(m->w);
    rfx_kern_free(m->k);
    free(m->u);
    free(m->sv_x);
    free(m->sv_u);
    free(m);
}

/* ------------------------------------------------------------------------ */
/* The step                                                                  */
/* ------------------------------------------------------------------------ */

/* l'(f; y), the derivative of the loss in the decision value f. The
 * logistic form -y / (1 + exp(y f)) is stable: exp overflows to +inf for
 * large margins and the quotient goes to -0. */
static double loss_deriv(rfx_loss loss, double f, double y)
{
    const double margin = y * f;
    switch (loss) {
    case RFX_LOSS_HINGE:
        return margin < 1.0 ? -y : 0.0;
    case RFX_LOSS_SQUARED_HINGE:
        return margin < 1.0 ? -2.0 * y * (1.0 - margin) : 0.0;
    default:
        return -y / (1.0 + exp(margin));
    }
}

/* u <- c u (the shrinking of the L2 penalty; zeros stay zero). */
static void scale(double *u, size_t n, double c)
{
    for (size_t j = 0; j < n; j++) u[j] *= c;
}

/* alpha_t: constant, or alpha / (1 + t / t0). */
static double step_size(const rfx_kernel_sgd_params *p, size_t t)
{
    if (p->t0 > 0) return p->alpha / (1.0 + (double)t / p->t0);
    return p->alpha;
}

/* The next row index: floor(n v), v the next uniform of the stream. */
static size_t next_index(rfx__rng *r, size_t n)
{
    size_t i = (size_t)(rfx__rng_uniform(r) * (double)n);
    return i < n ? i : n - 1;
}

rfx_status rfx_kernel_sgd_indices(uint64_t seed, size_t n, size_t T, size_t *idx)
{
    if (n == 0) return rfx__error(RFX_EINVAL, "kernel_sgd indices: n must be >= 1, got 0");
    if (!idx && T > 0) return rfx__error(RFX_EINVAL, "kernel_sgd indices: idx is NULL");
    rfx__rng rng;
    rfx__rng_init(&rng, seed, KSGD_STREAM, 0);
    for (size_t t = 0; t < T; t++) idx[t] = next_index(&rng, n);
    return RFX_OK;
}

/* Everything a run of the steps reads and writes. */
typedef struct sgd_run {
    const rfx_kernel_sgd_params *p;
    size_t n, d, T;
    const double *X;   /* training rows, row stride ldx                    */
    size_t ldx;
    const double *y;
    /* weight space */
    const rfx_features *f;
    size_t D;
    double *w;         /* D                                                */
    double *z;         /* D: phi(x_i) (on the fly)                         */
    double *ws;        /* the map's transform workspace (on the fly), or NULL */
    const double *Z;   /* n x D cache, or NULL                             */
    /* dual space */
    const rfx_kern *k;
    double *u;         /* n                                                */
    double *krow;      /* n: kernel row (on the fly), zero off the support */
    size_t *sup;       /* rows with u_j != 0, in the order they joined     */
    unsigned char *listed; /* n flags: row j is on sup                     */
    size_t n_sup;
    const double *G;   /* n x n Gram cache, or NULL                        */
    size_t kernel_evals;
} sgd_run;

static int report(const rfx_kernel_sgd_params *p, const char *stage, double fraction)
{
    return p->progress && p->progress(p->progress_user, stage, fraction);
}

/* A decision value that is not finite: a kernel value overflowed (or, from
 * rfx_kern_eval, could not be computed). */
static rfx_status not_finite(size_t t, size_t i, double f)
{
    return rfx__error(RFX_ENUMERIC,
                      "kernel_sgd: step %zu: the decision value of row %zu is %g (a kernel value "
                      "overflowed or could not be computed)",
                      t, i, f);
}

/* T steps of one strategy. Runs on the calling thread; BLAS (the feature
 * map's GEMM for d > 64) single-threaded. */
static rfx_status run_steps(sgd_run *s)
{
    const rfx_kernel_sgd_params *p = s->p;
    const size_t n = s->n, T = s->T, D = s->D;
    const size_t every = T / 100 > 0 ? T / 100 : 1;
    const int shrink = p->lambda > 0;
    rfx__rng rng;
    rfx__rng_init(&rng, p->seed, KSGD_STREAM, 0);
    for (size_t t = 0; t < T; t++) {
        if (t % every == 0 && report(p, "sgd", (double)t / (double)T))
            return rfx__error(RFX_ECANCELLED, "kernel_sgd: cancelled at step %zu of %zu", t, T);
        const size_t i = next_index(&rng, n);
        const double *xi = s->X + i * s->ldx;
        const double a = step_size(p, t);
        switch (p->strategy) {
        case RFX_SGD_FEATURES_ON_THE_FLY:
        case RFX_SGD_FEATURES_CACHED: {
            const double *zi = s->Z ? s->Z + i * D : s->z;
            if (!s->Z) rfx__transform_tile_ws(s->f, xi, s->ldx, 1, s->z, D, s->ws);
            const double f = rfx__dot(s->w, zi, D);
            if (!isfinite(f)) return not_finite(t, i, f);
            const double g = a * loss_deriv(p->loss, f, s->y[i]);
            if (shrink) {
                const double c = 1.0 - a * p->lambda;
                for (size_t j = 0; j < D; j++) s->w[j] = c * s->w[j] - g * zi[j];
            } else if (g != 0.0) {
                for (size_t j = 0; j < D; j++) s->w[j] -= g * zi[j];
            }
            break;
        }
        case RFX_SGD_KERNEL_ON_THE_FLY: {
            for (size_t q = 0; q < s->n_sup; q++) {
                const size_t j = s->sup[q];
                s->krow[j] = rfx_kern_eval(s->k, xi, s->X + j * s->ldx, s->d);
            }
            s->kernel_evals += s->n_sup;
            const double f = rfx__dot(s->krow, s->u, n);
            if (!isfinite(f)) return not_finite(t, i, f);
            const double g = a * loss_deriv(p->loss, f, s->y[i]);
            if (shrink) scale(s->u, n, 1.0 - a * p->lambda);
            if (g != 0.0) {
                s->u[i] -= g;
                /* a row stays on the list once moved (u_i returning to
                   exactly 0 only costs its kernel values) */
                if (!s->listed[i] && s->u[i] != 0.0) {
                    s->listed[i] = 1;
                    s->sup[s->n_sup++] = i;
                }
            }
            break;
        }
        case RFX_SGD_GRAM_CACHED: {
            const double f = rfx__dot(s->G + i * n, s->u, n);
            if (!isfinite(f)) return not_finite(t, i, f);
            const double g = a * loss_deriv(p->loss, f, s->y[i]);
            if (shrink) scale(s->u, n, 1.0 - a * p->lambda);
            s->u[i] -= g;
            break;
        }
        }
    }
    if (report(p, "sgd", 1.0))
        return rfx__error(RFX_ECANCELLED, "kernel_sgd: cancelled at step %zu of %zu", T, T);
    return RFX_OK;
}

/* ------------------------------------------------------------------------ */
/* Fit                                                                       */
/* ------------------------------------------------------------------------ */

/* A reference to k that the model owns: c k with c = 1 shares k's
 * definition (the kernel objects are reference-counted) and evaluates to
 * exactly k's values. */
static rfx_status hold_kernel(const rfx_kern *k, rfx_kern **out)
{
    return rfx_kern_scale(1.0, k, out);
}

static int is_wspace(rfx_sgd_strategy s)
{
    return s == RFX_SGD_FEATURES_ON_THE_FLY || s == RFX_SGD_FEATURES_CACHED;
}

/* Checks that read nothing but sizes: the operands the strategy needs, T,
 * and the size of the cache (against size_t and cache_limit). */
static rfx_status check_sizes(const rfx_kern *k, const rfx_features *f, rfx_cmat X,
                              const rfx_kernel_sgd_params *p, size_t *T, size_t *cache_bytes)
{
    const size_t n = X.rows, d = X.cols;
    const char *name = rfx_sgd_strategy_name(p->strategy);
    if (is_wspace(p->strategy)) {
        if (!f)
            return rfx__error(RFX_EINVAL,
                              "kernel_sgd: the %s strategy needs a feature map f, got NULL", name);
        if (rfx_features_input_dim(f) != d)
            return rfx__error(RFX_EDIM, "kernel_sgd: X has %zu columns, the feature map expects %zu",
                              d, rfx_features_input_dim(f));
        if (X.stride > 2147483647u)
            return rfx__error(RFX_EOVERFLOW,
                              "kernel_sgd: the stride of X exceeds the BLAS integer range");
    } else {
        if (!k)
            return rfx__error(RFX_EINVAL, "kernel_sgd: the %s strategy needs a kernel k, got NULL",
                              name);
        size_t kd = rfx_kern_input_dim(k);
        if (kd != 0 && kd != d)
            return rfx__error(RFX_EDIM, "kernel_sgd: X has %zu columns, the kernel expects %zu", d,
                              kd);
    }
    *T = p->n_iter;
    if (*T == 0) RFX__TRY(rfx__mul(20, n, T, "kernel_sgd: n_iter = 20 n"));
    *cache_bytes = 0;
    const char *what = NULL;
    if (p->strategy == RFX_SGD_FEATURES_CACHED) {
        what = "the feature cache (n x D doubles)";
        RFX__TRY(rfx__mul3(n, rfx_features_output_dim(f), sizeof(double), cache_bytes,
                           "kernel_sgd: the feature cache (n x D doubles)"));
    } else if (p->strategy == RFX_SGD_GRAM_CACHED) {
        what = "the Gram matrix (n x n doubles)";
        RFX__TRY(rfx__mul3(n, n, sizeof(double), cache_bytes,
                           "kernel_sgd: the Gram matrix (n x n doubles)"));
    }
    if (what && p->cache_limit > 0 && *cache_bytes > p->cache_limit)
        return rfx__error(RFX_ENOMEM, "kernel_sgd: %s needs %zu bytes, more than cache_limit = %zu",
                          what, *cache_bytes, p->cache_limit);
    return RFX_OK;
}

/* The support of u (rows with u_j != 0) copied into the model. */
static rfx_status keep_support(rfx_kernel_sgd *m, rfx_cmat X)
{
    size_t s = 0;
    for (size_t j = 0; j < m->n; j++) s += m->u[j] != 0.0;
    size_t cells;
    RFX__TRY(rfx__mul(s, m->d, &cells, "kernel_sgd: support rows"));
    RFX__TRY(rfx__alloc(cells, sizeof(double), (void **)&m->sv_x, "kernel_sgd: support rows"));
    RFX__TRY(rfx__alloc(s, sizeof(double), (void **)&m->sv_u, "kernel_sgd: support coefficients"));
    size_t q = 0;
    for (size_t j = 0; j < m->n; j++)
        if (m->u[j] != 0.0) {
            memcpy(m->sv_x + q * m->d, X.data + j * X.stride, m->d * sizeof(double));
            m->sv_u[q++] = m->u[j];
        }
    m->n_sv = s;
    return RFX_OK;
}

static rfx_status fit_wspace(rfx_kernel_sgd *m, sgd_run *run, rfx_cmat X)
{
    const rfx_kernel_sgd_params *p = run->p; /* the caller's: the model keeps no callback */
    double *Z = NULL;
    RFX__TRY(rfx__calloc(m->D, sizeof(double), (void **)&m->w, "kernel_sgd: weights"));
    run->f = m->f;
    run->D = m->D;
    run->w = m->w;
    rfx_status st = RFX_OK;
    if (p->strategy == RFX_SGD_FEATURES_ON_THE_FLY) {
        st = rfx__alloc(m->D, sizeof(double), (void **)&run->z, "kernel_sgd: feature vector");
        /* the structured maps' workspace, once (NULL when none is needed) */
        m->ws_len = rfx__transform_ws_len(m->f);
        if (!st && m->ws_len)
            st = rfx__alloc(m->ws_len, sizeof(double), (void **)&run->ws,
                            "kernel_sgd: transform workspace");
    } else {
        st = rfx__alloc(m->n * m->D, sizeof(double), (void **)&Z,
                        "kernel_sgd: the feature cache (n x D doubles)");
        if (!st && report(p, "cache", 0.0))
            st = rfx__error(RFX_ECANCELLED, "kernel_sgd: cancelled before the feature cache");
        if (!st) st = rfx_features_transform(m->f, X, rfx_mat_of(Z, m->n, m->D));
        if (!st && report(p, "cache", 1.0))
            st = rfx__error(RFX_ECANCELLED, "kernel_sgd: cancelled after the feature cache");
        run->Z = Z;
    }
    if (!st) RFX__SERIAL(st = run_steps(run))
    free(run->z);
    free(run->ws);
    free(Z);
    return st;
}

static rfx_status fit_uspace(rfx_kernel_sgd *m, sgd_run *run, rfx_cmat X)
{
    const rfx_kernel_sgd_params *p = run->p; /* the caller's: the model keeps no callback */
    const size_t n = m->n;
    double *G = NULL;
    RFX__TRY(rfx__calloc(n, sizeof(double), (void **)&m->u, "kernel_sgd: dual coefficients"));
    run->k = m->k;
    run->u = m->u;
    rfx_status st = RFX_OK;
    if (p->strategy == RFX_SGD_KERNEL_ON_THE_FLY) {
        st = rfx__calloc(n, sizeof(double), (void **)&run->krow, "kernel_sgd: kernel row");
        if (!st) st = rfx__alloc(n, sizeof(size_t), (void **)&run->sup, "kernel_sgd: support list");
        if (!st) st = rfx__calloc(n, 1, (void **)&run->listed, "kernel_sgd: support flags");
    } else {
        st = rfx__alloc(n * n, sizeof(double), (void **)&G,
                        "kernel_sgd: the Gram matrix (n x n doubles)");
        if (!st && report(p, "cache", 0.0))
            st = rfx__error(RFX_ECANCELLED, "kernel_sgd: cancelled before the Gram matrix");
        if (!st) st = rfx_kern_gram_sym(m->k, X, rfx_mat_of(G, n, n), p->n_threads);
        if (!st && report(p, "cache", 1.0))
            st = rfx__error(RFX_ECANCELLED, "kernel_sgd: cancelled after the Gram matrix");
        run->G = G;
    }
    if (!st) RFX__SERIAL(st = run_steps(run))
    if (!st) st = keep_support(m, X);
    free(run->krow);
    free(run->sup);
    free(run->listed);
    free(G);
    return st;
}

/* The work done and the memory used, in the terms of the header. */
static void account(rfx_kernel_sgd *m, size_t cache_bytes, size_t kernel_evals_run)
{
    const double n = (double)m->n, d = (double)m->d, D = (double)m->D, T = (double)m->params.n_iter;
    switch (m->params.strategy) {
    case RFX_SGD_FEATURES_ON_THE_FLY:
        m->feature_evals = m->params.n_iter;
        m->flops = T * (2.0 * d * D + 4.0 * D);
        m->state_bytes = (2 * m->D + m->ws_len) * sizeof(double);
        break;
    case RFX_SGD_FEATURES_CACHED:
        m->feature_evals = m->n;
        m->flops = 2.0 * n * d * D + 4.0 * D * T;
        m->state_bytes = m->D * sizeof(double);
        break;
    case RFX_SGD_KERNEL_ON_THE_FLY:
        m->kernel_evals = kernel_evals_run;
        m->flops = 2.0 * d * (double)kernel_evals_run + 2.0 * n * T;
        m->state_bytes = m->n * (2 * sizeof(double) + sizeof(size_t) + 1);
        break;
    case RFX_SGD_GRAM_CACHED:
        /* n (n + 1) / 2 without overflow: the n x n cache fitted in size_t */
        m->kernel_evals = m->n % 2 ? m->n * ((m->n + 1) / 2) : (m->n / 2) * (m->n + 1);
        m->flops = d * n * (n + 1.0) + 2.0 * n * T;
        m->state_bytes = m->n * sizeof(double);
        break;
    }
    if (m->params.lambda > 0) m->flops += T * (m->D ? D : n);
    m->cache_bytes = cache_bytes;
}

rfx_status rfx_kernel_sgd_fit(const rfx_kern *k, const rfx_features *f, rfx_cmat X,
                              const double *y, const rfx_kernel_sgd_params *params,
                              rfx_kernel_sgd **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "kernel_sgd: out is NULL");
    if (!params) return rfx__error(RFX_EINVAL, "kernel_sgd: params is NULL");
    RFX__TRY(check_params(params));
    RFX__TRY(rfx__check_cmat(X, "kernel_sgd: X"));
    if (X.rows == 0 || X.cols == 0)
        return rfx__error(RFX_EDIM, "kernel_sgd: X is %zu x %zu; it needs a row and a column",
                          X.rows, X.cols);
    if (!y) return rfx__error(RFX_EINVAL, "kernel_sgd: y is NULL");
    size_t T = 0, cache_bytes = 0;
    RFX__TRY(check_sizes(k, f, X, params, &T, &cache_bytes));
    const size_t n = X.rows, d = X.cols;
    for (size_t i = 0; i < n; i++)
        if (y[i] != 1.0 && y[i] != -1.0)
            return rfx__error(RFX_EINVAL, "kernel_sgd: y[%zu] = %g; labels must be +1 or -1", i,
                              y[i]);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "kernel_sgd: X row %zu, column %zu: %g is not finite", r, c,
                          X.data[r * X.stride + c]);

    rfx_kernel_sgd *m = calloc(1, sizeof *m);
    if (!m) return rfx__error(RFX_ENOMEM, "kernel_sgd: cannot allocate the model");
    m->params = *params;
    m->params.n_iter = T;
    m->params.progress = NULL;
    m->params.progress_user = NULL;
    m->n = n;
    m->d = d;
    sgd_run run;
    memset(&run, 0, sizeof run);
    run.p = params;
    run.n = n;
    run.d = d;
    run.T = T;
    run.X = X.data;
    run.ldx = X.stride;
    run.y = y;
    rfx_status st;
    if (is_wspace(params->strategy)) {
        st = rfx__features_copy(f, &m->f);
        if (!st) {
            rfx_features_set_threads(m->f, params->n_threads);
            m->D = rfx_features_output_dim(m->f);
            st = fit_wspace(m, &run, X);
        }
    } else {
        st = hold_kernel(k, &m->k);
        if (!st) st = fit_uspace(m, &run, X);
    }
    if (st) {
        rfx_kernel_sgd_free(m);
        return st;
    }
    account(m, cache_bytes, run.kernel_evals);
    *out = m;
    return RFX_OK;
}

/* ------------------------------------------------------------------------ */
/* Prediction and accessors                                                  */
/* ------------------------------------------------------------------------ */

rfx_status rfx_kernel_sgd_decision(const rfx_kernel_sgd *m, rfx_cmat X, double *out)
{
    if (!m) return rfx__error(RFX_EINVAL, "kernel_sgd decision: model is NULL");
    if (!out) return rfx__error(RFX_EINVAL, "kernel_sgd decision: out is NULL");
    RFX__TRY(rfx__check_cmat(X, "kernel_sgd decision: X"));
    if (X.cols != m->d)
        return rfx__error(RFX_EDIM, "kernel_sgd decision: X has %zu columns, the model expects %zu",
                          X.cols, m->d);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "kernel_sgd decision: X row %zu, column %zu: %g is not finite",
                          r, c, X.data[r * X.stride + c]);
    const size_t rows = X.rows;
    if (rows == 0) return RFX_OK;
    if (!m->f && m->n_sv == 0) {
        for (size_t i = 0; i < rows; i++) out[i] = 0.0;
        return RFX_OK;
    }
    /* the block of features (rows x D) or kernel values (rows x n_sv) */
    const size_t width = m->f ? m->D : m->n_sv, B = rfx__chunk_rows(width);
    const size_t chunk = rows < B ? rows : B;
    double *buf;
    RFX__TRY(rfx__alloc(chunk * width, sizeof(double), (void **)&buf, "kernel_sgd decision: block"));
    rfx_status st = RFX_OK;
    for (size_t r0 = 0; r0 < rows && !st; r0 += chunk) {
        const size_t nr = rows - r0 < chunk ? rows - r0 : chunk;
        rfx_cmat Xc = {X.data + r0 * X.stride, nr, X.cols, X.stride};
        if (m->f) {
            st = rfx_features_transform(m->f, Xc, rfx_mat_of(buf, nr, width));
            for (size_t i = 0; !st && i < nr; i++)
                out[r0 + i] = rfx__dot(buf + i * width, m->w, width);
        } else {
            st = rfx_kern_gram(m->k, Xc, rfx_cmat_of(m->sv_x, m->n_sv, m->d),
                               rfx_mat_of(buf, nr, width), m->params.n_threads);
            for (size_t i = 0; !st && i < nr; i++)
                out[r0 + i] = rfx__dot(buf + i * width, m->sv_u, width);
        }
    }
    free(buf);
    return st;
}

rfx_status rfx_kernel_sgd_predict(const rfx_kernel_sgd *m, rfx_cmat X, double *labels)
{
    RFX__TRY(rfx_kernel_sgd_decision(m, X, labels));
    for (size_t i = 0; i < X.rows; i++) labels[i] = labels[i] > 0 ? 1.0 : -1.0;
    return RFX_OK;
}

const double *rfx_kernel_sgd_weights(const rfx_kernel_sgd *m, size_t *dim)
{
    const int w = m && m->w;
    if (dim) *dim = w ? m->D : 0;
    return w ? m->w : NULL;
}

const double *rfx_kernel_sgd_dual(const rfx_kernel_sgd *m, size_t *n)
{
    const int u = m && m->u;
    if (n) *n = u ? m->n : 0;
    return u ? m->u : NULL;
}

rfx_status rfx_kernel_sgd_get_info(const rfx_kernel_sgd *m, rfx_kernel_sgd_info *info)
{
    if (!m) return rfx__error(RFX_EINVAL, "kernel_sgd info: model is NULL");
    if (!info) return rfx__error(RFX_EINVAL, "kernel_sgd info: info is NULL");
    memset(info, 0, sizeof *info);
    info->strategy = m->params.strategy;
    info->loss = m->params.loss;
    info->n_train = m->n;
    info->n_inputs = m->d;
    info->n_features = m->D;
    info->n_iter = m->params.n_iter;
    info->n_support = m->n_sv;
    info->feature_evals = m->feature_evals;
    info->kernel_evals = m->kernel_evals;
    info->flops = m->flops;
    info->cache_bytes = m->cache_bytes;
    info->state_bytes = m->state_bytes;
    return RFX_OK;
}

rfx_status rfx_kernel_sgd_cost(const rfx_kernel_sgd *m, double *flops, size_t *bytes)
{
    if (!m) return rfx__error(RFX_EINVAL, "kernel_sgd cost: model is NULL");
    if (flops) *flops = m->flops;
    if (bytes) *bytes = m->cache_bytes + m->state_bytes;
    return RFX_OK;
}
