/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Random kitchen sinks (Rahimi & Recht, NIPS 2008): the weights of K random
 * nonlinearities by box-constrained empirical risk minimisation, and the
 * greedy baseline of the paper's comparison (one term at a time, the
 * frequencies optimised). The math and the contracts are in rfx/sinks.h.
 *
 * Determinism: every sum over rows runs over fixed tiles of rows (their
 * size depends on n only), each tile's partial result computed by one
 * thread with single-threaded BLAS, the partials added in tile order.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

/* ---- shared: fixed row tiles for reductions ----------------------------- */

/* At most this many reduction tiles (partial buffers: tiles x width). */
#define MAX_RED_TILES 64
#define MIN_RED_ROWS 256
/* Loops with less work than this (in flops, roughly) run on the calling
 * thread: a parallel region costs a barrier, which on a busy machine can
 * cost more than the work. The tiles are the same either way. */
#define PAR_MIN_WORK ((size_t)1 << 18)
/* the squared loss's gram form: accelerated gradient steps before the
 * projected Newton finish, and the finish's step budget */
#define NEWTON_AFTER 500
#define NEWTON_STEPS 100

typedef struct tiling {
    size_t n, rows, count; /* rows per tile, number of tiles                 */
} tiling;

static tiling tiling_of(size_t n)
{
    tiling t;
    t.n = n;
    t.rows = (n + MAX_RED_TILES - 1) / MAX_RED_TILES;
    if (t.rows < MIN_RED_ROWS) t.rows = MIN_RED_ROWS;
    t.count = (n + t.rows - 1) / t.rows;
    return t;
}

static size_t tile_len(const tiling *t, size_t k)
{
    size_t r0 = k * t->rows;
    return t->n - r0 < t->rows ? t->n - r0 : t->rows;
}

/* Z = z(X) (n x D, contiguous) with the map's tile kernel, OpenMP over tiles
 * of RFX__ROW_TILE rows; each row's features do not depend on the tiling. */
static void featurise(const rfx_features *f, rfx_cmat X, double *Z, int nt)
{
    const size_t n = X.rows, T = RFX__ROW_TILE, tiles = (n + T - 1) / T, D = f->D;
#pragma omp parallel num_threads(nt) if (tiles > 1 && n * D * f->d >= PAR_MIN_WORK)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < tiles; t++) {
            size_t r0 = t * T, rows = n - r0 < T ? n - r0 : T;
            rfx__transform_tile(f, X.data + r0 * X.stride, X.stride, rows, Z + r0 * D, D);
        }
    }
}

/* ======================================================================== */
/* Kitchen sinks: FISTA with restart on the box                              */
/* ======================================================================== */

rfx_sinks_params rfx_sinks_params_default(void)
{
    rfx_sinks_params p;
    memset(&p, 0, sizeof p);
    p.loss = RFX_SINKS_LOSS_SQUARED;
    p.C = 0.0; /* chosen by cross-validation (sinks_cv.c) */
    p.fit_intercept = 1;
    p.max_iter = 5000;
    p.tol = 1e-6;
    p.n_threads = 0;
    return p;
}

static const char *loss_name(rfx_sinks_loss l)
{
    switch (l) {
    case RFX_SINKS_LOSS_SQUARED: return "squared";
    case RFX_SINKS_LOSS_LOGISTIC: return "logistic";
    case RFX_SINKS_LOSS_SQUARED_HINGE: return "squared hinge";
    }
    return "unknown";
}

/* The problem in one of two forms, both in the centred variables (alpha,
 * c'), c' = c + mu.alpha:
 *  rows (any loss): Zc = Z - 1 mu^T (n x K) in memory; u = Zc alpha (n
 *        values), the risk and its gradient by a pass over the rows;
 *  gram (squared loss, K <= n): the centred normal equations G = Zc^T Zc
 *        (K x K), b = Zc^T (y - ybar), yy = |y - ybar|^2 from rfx_stats;
 *        u = G alpha (K values), R = (yy - 2 b.alpha + alpha.u) / (2n)
 *        with c' = ybar exactly, gradient (u - b) / n. Cost K^2 instead
 *        of n K per product, and Z is never stored. */
typedef struct sinks {
    int gram;
    size_t n, K, ulen;    /* ulen: n (rows) or K (gram)                     */
    rfx_sinks_loss loss;
    int nt;
    /* rows */
    const double *Z;      /* n x K                                           */
    const double *y;
    tiling tl;
    double *part;         /* tiles x (K + 2) partial sums                     */
    /* gram */
    const double *G, *b;  /* K x K, K                                        */
    double yy;
    tiling kl;            /* row tiles of G                                  */
} sinks;

/* loss(p, y) and its derivative in p */
static double loss_eval(rfx_sinks_loss loss, double p, double y, double *dl)
{
    switch (loss) {
    case RFX_SINKS_LOSS_LOGISTIC: {
        double m = -y * p; /* log(1 + e^m), stably; derivative -y sigma(m) */
        double e = exp(-fabs(m));
        *dl = m > 0 ? -y / (1.0 + e) : -y * e / (1.0 + e);
        return (m > 0 ? m : 0.0) + log1p(e);
    }
    case RFX_SINKS_LOSS_SQUARED_HINGE: {
        double h = 1.0 - y * p;
        if (h <= 0) {
            *dl = 0.0;
            return 0.0;
        }
        *dl = -y * h;
        return 0.5 * h * h;
    }
    case RFX_SINKS_LOSS_SQUARED:
        break;
    }
    double r = p - y;
    *dl = r;
    return 0.5 * r * r;
}

/* u = Zc a (rows) or G a (gram): every entry of u is one row's product,
 * computed by one thread; no reduction across tiles. */
static void sinks_matvec(const sinks *s, const double *a, double *u)
{
    const double *A = s->gram ? s->G : s->Z;
    const tiling *tl = s->gram ? &s->kl : &s->tl;
#pragma omp parallel num_threads(s->nt) if (tl->count > 1 && tl->n * s->K >= PAR_MIN_WORK)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < tl->count; t++) {
            size_t r0 = t * tl->rows, rows = tile_len(tl, t);
            cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)rows, (int)s->K, 1.0, A + r0 * s->K,
                        (int)s->K, a, 1, 0.0, u + r0, 1);
        }
    }
}

/* The risk R at (a, c) with u its product (above) and, when g is not NULL,
 * the gradient g (K + 1 values: weights, intercept). rows: dl (n values)
 * gets loss'(p_i), the tiles' partial sums are added in tile order. */
static double sinks_eval(sinks *s, const double *a, const double *u, double c, double *dl,
                         double *g)
{
    const size_t K = s->K;
    if (s->gram) {
        double ba = 0, au = 0;
        for (size_t k = 0; k < K; k++) {
            ba += s->b[k] * a[k];
            au += a[k] * u[k];
        }
        if (g) {
            for (size_t k = 0; k < K; k++) g[k] = (u[k] - s->b[k]) / (double)s->n;
            g[K] = 0.0; /* c' = ybar is exact */
        }
        double R = (s->yy - 2.0 * ba + au) / (2.0 * (double)s->n);
        return R > 0 ? R : 0.0;
    }
    const tiling *tl = &s->tl;
    const size_t w = K + 2;
#pragma omp parallel num_threads(s->nt) if (tl->count > 1 && s->n * K >= PAR_MIN_WORK)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < tl->count; t++) {
            size_t r0 = t * tl->rows, rows = tile_len(tl, t);
            double *pt = s->part + t * w, lsum = 0, dsum = 0;
            for (size_t i = r0; i < r0 + rows; i++) {
                lsum += loss_eval(s->loss, u[i] + c, s->y[i], &dl[i]);
                dsum += dl[i];
            }
            pt[K] = dsum;
            pt[K + 1] = lsum;
            if (g)
                cblas_dgemv(CblasRowMajor, CblasTrans, (int)rows, (int)K, 1.0, s->Z + r0 * K,
                            (int)K, dl + r0, 1, 0.0, pt, 1);
        }
    }
    const double inv = 1.0 / (double)s->n;
    double risk = 0;
    if (g) memset(g, 0, (K + 1) * sizeof *g);
    for (size_t t = 0; t < tl->count; t++) {
        const double *pt = s->part + t * w;
        risk += pt[K + 1];
        if (g)
            for (size_t k = 0; k <= K; k++) g[k] += pt[k];
    }
    if (g)
        for (size_t k = 0; k <= K; k++) g[k] *= inv;
    return risk * inv;
}

/* The largest eigenvalue of Zc^T Zc / n by 50 power iterations from a fixed
 * pseudo-random start (a lower estimate; backtracking corrects it). rows:
 * the squared loss at y = 0 and c = 0 has loss' = u = Zc v, so the gradient
 * is Zc^T Zc v / n. zeros: n zeros; v, g: K + 1 values; u, dl: ulen. */
static double sinks_power(const sinks *s, const double *zeros, double *v, double *u, double *g,
                          double *dl)
{
    rfx__rng r;
    rfx__rng_init(&r, 0x53494e4b53ull, 0, 0); /* a fixed start, not a user seed */
    const size_t K = s->K;
    sinks sq = *s;
    sq.loss = RFX_SINKS_LOSS_SQUARED;
    sq.y = zeros;
    double nv = 0, lam = 0;
    for (size_t k = 0; k < K; k++) {
        v[k] = rfx__rng_normal(&r);
        nv += v[k] * v[k];
    }
    nv = sqrt(nv);
    for (size_t k = 0; k < K; k++) v[k] /= nv;
    for (int it = 0; it < 50; it++) {
        sinks_matvec(&sq, v, u);
        if (sq.gram)
            for (size_t k = 0; k < K; k++) g[k] = u[k] / (double)s->n;
        else
            sinks_eval(&sq, v, u, 0.0, dl, g);
        double num = 0, ng = 0;
        for (size_t k = 0; k < K; k++) {
            num += v[k] * g[k];
            ng += g[k] * g[k];
        }
        lam = num;
        ng = sqrt(ng);
        if (!(ng > 0)) break;
        for (size_t k = 0; k < K; k++) v[k] = g[k] / ng;
    }
    return lam;
}

/* The box projection of one weight. */
static double clip(double a, double bound)
{
    return a > bound ? bound : a < -bound ? -bound : a;
}

/* max_k |x_k - P(x_k - g_k)| over the weights, and |g_c| for the intercept */
static double kkt_residual(const double *a, const double *g, size_t K, double bound, int icpt)
{
    double r = icpt ? fabs(g[K]) : 0.0;
    for (size_t k = 0; k < K; k++) {
        double e = fabs(a[k] - clip(a[k] - g[k], bound));
        if (e > r) r = e;
    }
    return r;
}

/* The gram form's finish: projected Newton steps on the box QP
 * min (yy - 2 b.a + a.G a) / (2n), |a_k| <= bound (Bertsekas, SIAM J.
 * Control Optim. 1982). A weight within eps of a bound whose gradient
 * pushes it outward is held at that bound (eps the current KKT residual,
 * at most bound / 10: Bertsekas' epsilon-active set); the others take the
 * damped Newton step (G_FF / n + mu I) d = -g_F (Cholesky; mu relative to
 * the largest diagonal entry, from 1e-8, times 10 after a step cut below
 * 1/4, divided by 10 after a full step: Levenberg-Marquardt, which keeps
 * the steps of an ill-conditioned G inside the box; a further jitter when
 * the block is singular), cut back to the box and halved until the Armijo
 * condition holds. At most max_steps steps; x, u (= G x) and g are
 * updated; *steps counts the steps, *kkt is the residual at the end. */
static rfx_status box_newton(sinks *s, double *x, double *u, double *g, double bound,
                             double goal, size_t max_steps, size_t *steps, double *kkt,
                             double *F)
{
    const size_t K = s->K;
    const double inv = 1.0 / (double)s->n;
    double *H = NULL, *d = NULL, *xn = NULL, *un = NULL, *e = NULL;
    size_t *idx = NULL;
    int nf_int;
    rfx_status st = rfx__alloc(K * K, sizeof *H, (void **)&H, "sinks: Newton system");
    if (!st) st = rfx__alloc(K, sizeof *d, (void **)&d, "sinks: Newton workspace");
    if (!st) st = rfx__alloc(K + 1, sizeof *xn, (void **)&xn, "sinks: Newton workspace");
    if (!st) st = rfx__alloc(K, sizeof *un, (void **)&un, "sinks: Newton workspace");
    if (!st) st = rfx__alloc(K, sizeof *e, (void **)&e, "sinks: Newton workspace");
    if (!st) st = rfx__alloc(K, sizeof *idx, (void **)&idx, "sinks: Newton workspace");
    if (!st) st = rfx__lapack_int(K, &nf_int, "sinks: Newton system");
    if (st) goto done;
    *F = sinks_eval(s, x, u, 0.0, NULL, g);
    *kkt = kkt_residual(x, g, K, bound, 0);
    double mu = 1e-8; /* Levenberg-Marquardt damping, relative to max diag */
    for (*steps = 0; *steps < max_steps && *kkt > goal;) {
        /* the epsilon-active set: near a bound and pushed out of the box */
        const double eps = *kkt < 0.1 * bound ? *kkt : 0.1 * bound;
        size_t nf = 0;
        for (size_t k = 0; k < K; k++) {
            int held = (x[k] <= -bound + eps && g[k] > 0) || (x[k] >= bound - eps && g[k] < 0);
            if (!held) idx[nf++] = k;
        }
        if (nf == 0) break; /* every weight held: the residual is 0 already */
        double top = 0;
        for (size_t p = 0; p < nf; p++) {
            const double *Gr = s->G + idx[p] * K;
            for (size_t q = 0; q < nf; q++) H[p * nf + q] = Gr[idx[q]] * inv;
            if (H[p * nf + p] > top) top = H[p * nf + p];
        }
        int n = (int)nf, one = 1, info = 1;
        for (size_t p = 0; p < nf; p++) H[p * nf + p] += mu * top;
        for (int j = 0; j < 6 && info != 0; j++) {
            if (j > 0) { /* singular: rebuild with a jitter on the diagonal */
                const double jit = top * (mu + pow(10.0, -14.0 + 2.0 * j));
                for (size_t p = 0; p < nf; p++) {
                    const double *Gr = s->G + idx[p] * K;
                    for (size_t q = 0; q < nf; q++) H[p * nf + q] = Gr[idx[q]] * inv;
                    H[p * nf + p] += jit;
                }
            }
            RFX__SERIAL(dpotrf_("L", &n, H, &n, &info, 1))
        }
        if (info != 0) break; /* not even with a jitter: leave it to the caller */
        for (size_t p = 0; p < nf; p++) d[p] = -g[idx[p]];
        RFX__SERIAL(dpotrs_("L", &n, &one, H, &n, d, &n, &info, 1))
        if (info != 0) break;
        /* the projected line search */
        int moved = 0;
        double tt = 0; /* the step taken */
        for (double t = 1.0; t > 1e-10; t *= 0.5) {
            tt = t;
            double gd = 0;
            memcpy(xn, x, (K + 1) * sizeof *x);
            for (size_t k = 0; k < K; k++) /* the held weights go to their bound */
                if ((x[k] <= -bound + eps && g[k] > 0) || (x[k] >= bound - eps && g[k] < 0)) {
                    xn[k] = g[k] > 0 ? -bound : bound;
                    gd += g[k] * (xn[k] - x[k]);
                }
            for (size_t p = 0; p < nf; p++) {
                size_t k = idx[p];
                xn[k] = clip(x[k] + t * d[p], bound);
                gd += g[k] * (xn[k] - x[k]);
            }
            /* Armijo on the exact change of the quadratic, g.e + e.G e / 2n
             * for the step e: its terms are of the step's size, where the
             * risk's own formula (yy - 2 b.a + a.G a) / 2n cancels down to
             * rounding noise near the optimum and rejects good steps */
            for (size_t k = 0; k < K; k++) e[k] = xn[k] - x[k];
            sinks_matvec(s, e, un);
            double eGe = 0;
            for (size_t k = 0; k < K; k++) eGe += e[k] * un[k];
            if (gd + 0.5 * eGe * inv <= 1e-4 * gd) {
                sinks_matvec(s, xn, un);
                memcpy(x, xn, (K + 1) * sizeof *x);
                memcpy(u, un, K * sizeof *u);
                moved = 1;
                break;
            }
        }
        (*steps)++;
        *F = sinks_eval(s, x, u, 0.0, NULL, g);
        *kkt = kkt_residual(x, g, K, bound, 0);
        if (!moved) break;
        if (tt < 0.25) mu = mu * 10 < 1.0 ? mu * 10 : 1.0;
        else if (tt == 1.0) mu = mu / 10 > 1e-14 ? mu / 10 : 1e-14;
    }
    (void)nf_int;
done:
    free(H);
    free(d);
    free(xn);
    free(un);
    free(e);
    free(idx);
    return st;
}

rfx_status rfx__sinks_check(const rfx_features *f, rfx_cmat X, const double *y,
                            const rfx_sinks_params *p, rfx_model **out)
{
    if (!f) return rfx__error(RFX_EINVAL, "sinks: f is NULL");
    if (!p) return rfx__error(RFX_EINVAL, "sinks: params is NULL");
    if (!out) return rfx__error(RFX_EINVAL, "sinks: out is NULL");
    if (!y) return rfx__error(RFX_EINVAL, "sinks: y is NULL");
    if ((unsigned)p->loss > RFX_SINKS_LOSS_SQUARED_HINGE)
        return rfx__error(RFX_EINVAL, "sinks params.loss: %d is not an rfx_sinks_loss",
                          (int)p->loss);
    if (!(p->C >= 0) || isnan(p->C))
        return rfx__error(RFX_EINVAL, "sinks params.C: must be > 0 (INFINITY for no box) or 0 "
                          "(chosen by cross-validation), got %g", p->C);
    if (p->max_iter == 0) return rfx__error(RFX_EINVAL, "sinks params.max_iter: must be >= 1");
    if (!(p->tol > 0 && isfinite(p->tol)))
        return rfx__error(RFX_EINVAL, "sinks params.tol: must be > 0 and finite, got %g", p->tol);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "sinks params.n_threads: must be >= 0, got %d",
                          p->n_threads);
    RFX__TRY(rfx__check_cmat(X, "sinks: X"));
    if (X.rows == 0) return rfx__error(RFX_EDIM, "sinks: X has no rows");
    if (X.cols != f->d)
        return rfx__error(RFX_EDIM, "sinks: X has %zu columns, the feature map expects %zu",
                          X.cols, f->d);
    int tmp;
    RFX__TRY(rfx__lapack_int(f->D, &tmp, "sinks: the number of features"));
    size_t nk;
    RFX__TRY(rfx__mul3(X.rows, f->D, sizeof(double), &nk, "sinks: the n x K feature matrix"));
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "sinks: X row %zu, column %zu: %g is not finite", r, c,
                          X.data[r * X.stride + c]);
    for (size_t i = 0; i < X.rows; i++) {
        if (!isfinite(y[i]))
            return rfx__error(RFX_EPARSE, "sinks: y[%zu] = %g is not finite", i, y[i]);
        if (p->loss != RFX_SINKS_LOSS_SQUARED && y[i] != 1.0 && y[i] != -1.0)
            return rfx__error(RFX_EINVAL,
                              "sinks: y[%zu] = %g; the %s loss takes labels +1 and -1", i, y[i],
                              loss_name(p->loss));
    }
    return RFX_OK;
}

/* rows form: Zc = z(X) - 1 mu^T in memory (mu the column means by tiles,
 * added in order; zero without intercept). */
static rfx_status sinks_rows(sinks *s, const rfx_features *f, rfx_cmat X, int icpt, double *mu,
                             double **Z)
{
    const size_t n = s->n, K = s->K;
    RFX__TRY(rfx__alloc(n * K, sizeof(double), (void **)Z, "sinks: the n x K feature matrix"));
    featurise(f, X, *Z, s->nt);
    s->Z = *Z;
    if (!icpt) return RFX_OK;
    double *ones = NULL, *zeros = NULL, *g = NULL;
    rfx_status st = rfx__alloc(n, 2 * sizeof(double), (void **)&ones, "sinks: workspace");
    if (!st) st = rfx__alloc(K + 1, sizeof(double), (void **)&g, "sinks: workspace");
    if (!st) {
        sinks o = *s;
        zeros = ones + n;
        for (size_t i = 0; i < n; i++) {
            ones[i] = 1.0;
            zeros[i] = 0.0;
        }
        o.loss = RFX_SINKS_LOSS_SQUARED;
        o.y = zeros;                       /* loss' = u - 0 = 1 */
        sinks_eval(&o, NULL, ones, 0.0, ones, g); /* dl overwrites ones with ones */
        memcpy(mu, g, K * sizeof *mu);
        double *Zm = *Z;
#pragma omp parallel for num_threads(s->nt) schedule(static) if (n * K >= PAR_MIN_WORK)
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < K; k++) Zm[i * K + k] -= mu[k];
    }
    free(ones);
    free(g);
    return st;
}

/* gram form: the centred normal equations from rfx_stats (Z^T Z by fixed
 * tiles), kept as sums (G and b are n times the averages); fc is a copy of
 * the map, its threads set for the pass. */
static rfx_status sinks_gram(sinks *s, rfx_features *fc, int n_threads, rfx_cmat X,
                             const double *y, int icpt, double *mu, double *ybar, double **G,
                             double **b)
{
    const size_t K = s->K;
    rfx_stats *st = NULL;
    int keep = fc->params.n_threads;
    fc->params.n_threads = n_threads;
    rfx_status r = rfx_stats_create(K, 1, &st);
    if (!r) r = rfx_stats_add(st, fc, X, rfx_cmat_of(y, X.rows, 1));
    fc->params.n_threads = keep;
    if (!r) r = rfx__alloc(K * K, sizeof(double), (void **)G, "sinks: the K x K Gram matrix");
    if (!r) r = rfx__alloc(K, sizeof(double), (void **)b, "sinks: workspace");
    if (!r) {
        rfx__stats_normal(st, icpt, *G, *b, &s->yy, mu, ybar);
        s->G = *G;
        s->b = *b;
    }
    rfx_stats_free(st);
    return r;
}

rfx_status rfx__sinks_fit_box(const rfx_features *f, rfx_cmat X, const double *y,
                              const rfx_sinks_params *params, rfx_model **out,
                              rfx_sinks_report *report)
{
    RFX__TRY(rfx__sinks_check(f, X, y, params, out));
    if (params->C == 0)
        return rfx__error(RFX_EINTERNAL, "sinks: a fit of a given box was asked for box 0");
    const rfx_sinks_params *p = params;
    const size_t n = X.rows, K = f->D;
    const int icpt = p->fit_intercept != 0;
    const int nt = rfx__threads(p->n_threads);
    const double bound = isinf(p->C) ? INFINITY : p->C / ((double)K * f->scale);
    const double curv = p->loss == RFX_SINKS_LOSS_LOGISTIC ? 0.25 : 1.0;

    sinks s;
    memset(&s, 0, sizeof s);
    s.gram = p->loss == RFX_SINKS_LOSS_SQUARED && K <= n;
    s.n = n;
    s.K = K;
    s.ulen = s.gram ? K : n;
    s.loss = p->loss;
    s.nt = nt;
    s.y = y;
    s.tl = tiling_of(n);
    s.kl = tiling_of(K);

    double *Z = NULL, *G = NULL, *b = NULL, *mu = NULL, *vec = NULL, *nvec = NULL, *part = NULL;
    double ybar = 0;
    rfx_features *fc = NULL;
    rfx_model *m = NULL;
    rfx_status st = rfx__calloc(K, sizeof(double), (void **)&mu, "sinks: feature means");
    /* weight-space vectors: x, x_new, y (the momentum point), g_y, g_x, v */
    if (!st) st = rfx__calloc(6 * (K + 1), sizeof(double), (void **)&vec, "sinks: workspace");
    /* product vectors u_x, u_new, u_y (ulen each); rows: dl, zeros (n each) */
    size_t nv = 0;
    if (!st) st = rfx__mul(s.ulen, 3, &nv, "sinks: workspace");
    if (!st && !s.gram) st = rfx__add(nv, 2 * n, &nv, "sinks: workspace");
    if (!st) st = rfx__calloc(nv, sizeof(double), (void **)&nvec, "sinks: workspace");
    if (!st && !s.gram)
        st = rfx__alloc(s.tl.count, (K + 2) * sizeof(double), (void **)&part, "sinks: workspace");
    s.part = part;
    if (!st) st = rfx__features_copy(f, &fc);
    if (!st) st = s.gram ? sinks_gram(&s, fc, p->n_threads, X, y, icpt, mu, &ybar, &G, &b)
                         : sinks_rows(&s, f, X, icpt, mu, &Z);
    if (st) goto done;

    double *x = vec, *xn = vec + (K + 1), *yv = vec + 2 * (K + 1), *gy = vec + 3 * (K + 1);
    double *gx = vec + 4 * (K + 1), *v = vec + 5 * (K + 1);
    const size_t ul = s.ulen;
    double *ux = nvec, *un = nvec + ul, *uy = nvec + 2 * ul;
    double *dl = s.gram ? NULL : nvec + 3 * ul;
    const double *zeros = s.gram ? NULL : nvec + 3 * ul + n; /* stays zero */

    double lam = sinks_power(&s, zeros, v, un, gx, dl);
    double L = curv * (icpt && !s.gram && lam < 1.0 ? 1.0 : lam);
    if (!(L > 0) || !isfinite(L)) L = curv;

    /* start: alpha = 0, c' = 0 (the gram form has c' = ybar apart) */
    memset(x, 0, (K + 1) * sizeof *x);
    memset(ux, 0, ul * sizeof *ux);
    double Fx = sinks_eval(&s, x, ux, x[K], dl, gx);
    if (!icpt) gx[K] = 0.0;
    const double kkt0 = kkt_residual(x, gx, K, bound, icpt);
    const double goal = p->tol * (kkt0 > 1.0 ? kkt0 : 1.0);
    double kkt = kkt0, Fy = Fx, tmom = 1.0;
    memcpy(yv, x, (K + 1) * sizeof *x);
    memcpy(gy, gx, (K + 1) * sizeof *gx);
    memcpy(uy, ux, ul * sizeof *ux);
    size_t it = 0, restarts = 0;
    int converged = kkt0 <= goal;

    /* the gram form hands over to projected Newton after NEWTON_AFTER steps */
    const size_t budget = s.gram && p->max_iter > NEWTON_AFTER ? NEWTON_AFTER : p->max_iter;
    size_t newton = 0;
    while (!converged && it < budget) {
        it++;
        double Fn = 0;
        for (int bt = 0; bt < 64; bt++) { /* backtracking on L */
            double dd = 0, gd = 0;
            for (size_t k = 0; k < K; k++) {
                xn[k] = clip(yv[k] - gy[k] / L, bound);
                double e = xn[k] - yv[k];
                dd += e * e;
                gd += gy[k] * e;
            }
            xn[K] = icpt && !s.gram ? yv[K] - gy[K] / L : 0.0;
            double ec = xn[K] - yv[K];
            dd += ec * ec;
            gd += gy[K] * ec;
            sinks_matvec(&s, xn, un);
            Fn = sinks_eval(&s, xn, un, xn[K], dl, NULL);
            if (dd == 0) break;
            if (s.gram) { /* the quadratic's exact upper bound: d.G d / n <= L |d|^2 */
                double dgd = 0;
                for (size_t k = 0; k < K; k++) dgd += (xn[k] - yv[k]) * (un[k] - uy[k]);
                if (dgd <= L * dd * (double)n * (1.0 + 1e-12)) break;
            } else if (Fn <= Fy + gd + 0.5 * L * dd + 1e-13 * fabs(Fy)) {
                break;
            }
            L *= 2.0;
        }
        /* the gradient mapping at y: a small step means x_new is nearly
         * stationary; confirm with the KKT residual at x_new */
        double step = 0, dot = 0;
        for (size_t k = 0; k <= K; k++) {
            double e = fabs(xn[k] - yv[k]);
            if (e > step) step = e;
            dot += (yv[k] - xn[k]) * (xn[k] - x[k]);
        }
        if (L * step <= goal) {
            sinks_eval(&s, xn, un, xn[K], dl, gx);
            if (!icpt) gx[K] = 0.0;
            kkt = kkt_residual(xn, gx, K, bound, icpt);
            if (kkt <= goal) {
                memcpy(x, xn, (K + 1) * sizeof *x);
                memcpy(ux, un, ul * sizeof *ux);
                Fx = Fn;
                converged = 1;
                break;
            }
        }
        double mom;
        if (dot > 0) { /* momentum points uphill: restart */
            tmom = 1.0;
            mom = 0.0;
            restarts++;
        } else {
            double tn = 0.5 * (1.0 + sqrt(1.0 + 4.0 * tmom * tmom));
            mom = (tmom - 1.0) / tn;
            tmom = tn;
        }
        for (size_t k = 0; k <= K; k++) {
            double xk = xn[k];
            yv[k] = xk + mom * (xk - x[k]);
            x[k] = xk;
        }
        for (size_t i = 0; i < ul; i++) {
            double ui = un[i];
            uy[i] = ui + mom * (ui - ux[i]);
            ux[i] = ui;
        }
        Fx = Fn;
        Fy = sinks_eval(&s, yv, uy, yv[K], dl, gy);
        if (!icpt) gy[K] = 0.0;
    }
    if (!converged) { /* the KKT residual of the last iterate */
        Fx = sinks_eval(&s, x, ux, x[K], dl, gx);
        if (!icpt) gx[K] = 0.0;
        kkt = kkt_residual(x, gx, K, bound, icpt);
    }
    if (!converged && s.gram && p->max_iter > it) {
        size_t left = p->max_iter - it;
        st = box_newton(&s, x, ux, gx, bound, goal, left < NEWTON_STEPS ? left : NEWTON_STEPS,
                        &newton, &kkt, &Fx);
        if (st) goto done;
        converged = kkt <= goal;
    }

    st = rfx__model_alloc(RFX_METHOD_SINKS, fc, 1, 0, &m);
    if (st) goto done;
    fc = NULL;
    double cint = icpt ? (s.gram ? ybar : x[K]) : 0.0;
    size_t at_bound = 0;
    for (size_t k = 0; k < K; k++) {
        m->W[k] = x[k];
        if (icpt) cint -= mu[k] * x[k];
        if (fabs(x[k]) == bound) at_bound++;
    }
    m->intercept[0] = cint;
    m->fit_intercept = icpt;
    m->n_train = n;
    if (report) {
        memset(report, 0, sizeof *report);
        report->iterations = it;
        report->newton_steps = newton;
        report->restarts = restarts;
        report->objective = Fx;
        report->kkt = kkt;
        report->lipschitz = L;
        report->n_at_bound = at_bound;
        report->converged = converged;
        report->C = p->C;
    }
    *out = m;
    m = NULL;
done:
    rfx_model_free(m);
    rfx_features_free(fc);
    free(Z);
    free(G);
    free(b);
    free(mu);
    free(vec);
    free(nvec);
    free(part);
    return st;
}

/* ======================================================================== */
/* The greedy baseline: orthogonal greedy over random candidates            */
/* ======================================================================== */

#define GREEDY_SEED_STEP 0x9E3779B97F4A7C15ull
#define GREEDY_DEPENDENT 1e-10

rfx_greedy_params rfx_greedy_params_default(void)
{
    rfx_greedy_params p;
    memset(&p, 0, sizeof p);
    p.features = rfx_features_params_default();
    p.n_terms = 32;
    p.n_candidates = 64;
    p.refine_steps = 5;
    p.fit_intercept = 1;
    p.n_threads = 0;
    p.update = RFX_GREEDY_ORTHOGONAL;
    return p;
}

/* phi(u) and phi'(u) of the unscaled activation */
static double act_eval(rfx_activation a, double u, double *der)
{
    switch (a) {
    case RFX_ACTIVATION_SIN:
        *der = cos(u);
        return sin(u);
    case RFX_ACTIVATION_TANH: {
        double t = tanh(u);
        *der = 1.0 - t * t;
        return t;
    }
    case RFX_ACTIVATION_SIGMOID: {
        double s = 1.0 / (1.0 + exp(-u));
        *der = s * (1.0 - s);
        return s;
    }
    case RFX_ACTIVATION_RELU:
        *der = u > 0 ? 1.0 : 0.0;
        return u > 0 ? u : 0.0;
    case RFX_ACTIVATION_SIGN:
        *der = 0.0;
        return u > 0 ? 1.0 : u < 0 ? -1.0 : 0.0;
    case RFX_ACTIVATION_COS:
        break;
    }
    *der = -sin(u);
    return cos(u);
}

/* out[j] = Q_j . v for the m rows Q_j (length n, row stride n) of Q, by
 * fixed row tiles added in order. part: tiles x m. */
static void tiled_dots(const double *Q, size_t m, const double *v, double *out,
                       const tiling *tl, double *part, int nt)
{
    if (m == 0) return;
#pragma omp parallel num_threads(nt) if (tl->count > 1 && m * tl->n >= PAR_MIN_WORK)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < tl->count; t++) {
            size_t r0 = t * tl->rows, rows = tile_len(tl, t);
            cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)rows, 1.0, Q + r0, (int)tl->n,
                        v + r0, 1, 0.0, part + t * m, 1);
        }
    }
    memset(out, 0, m * sizeof *out);
    for (size_t t = 0; t < tl->count; t++)
        for (size_t j = 0; j < m; j++) out[j] += part[t * m + j];
}

/* v -= Q^T c over the m rows of Q (rows are independent: no reduction). */
static void tiled_subtract(const double *Q, size_t m, const double *c, double *v,
                           const tiling *tl, int nt)
{
    if (m == 0) return;
#pragma omp parallel num_threads(nt) if (tl->count > 1 && m * tl->n >= PAR_MIN_WORK)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < tl->count; t++) {
            size_t r0 = t * tl->rows, rows = tile_len(tl, t);
            cblas_dgemv(CblasRowMajor, CblasTrans, (int)m, (int)rows, -1.0, Q + r0, (int)tl->n,
                        c, 1, 1.0, v + r0, 1);
        }
    }
}

/* Solve (A + lam diag(A)) x = rhs for a small symmetric positive
 * semi-definite A (P x P) by Cholesky; 0 when the damped matrix is not
 * positive definite. ws: P x P. */
static int damped_solve(const double *A, size_t P, double lam, const double *rhs, double *x,
                        double *ws)
{
    for (size_t i = 0; i < P; i++)
        for (size_t j = 0; j < P; j++) ws[i * P + j] = A[i * P + j] * (i == j ? 1.0 + lam : 1.0);
    for (size_t j = 0; j < P; j++) { /* lower Cholesky in place */
        double s = ws[j * P + j];
        for (size_t k = 0; k < j; k++) s -= ws[j * P + k] * ws[j * P + k];
        if (!(s > 0)) return 0;
        double ljj = sqrt(s);
        ws[j * P + j] = ljj;
        for (size_t i = j + 1; i < P; i++) {
            double t = ws[i * P + j];
            for (size_t k = 0; k < j; k++) t -= ws[i * P + k] * ws[j * P + k];
            ws[i * P + j] = t / ljj;
        }
    }
    for (size_t i = 0; i < P; i++) {
        double t = rhs[i];
        for (size_t k = 0; k < i; k++) t -= ws[i * P + k] * x[k];
        x[i] = t / ws[i * P + i];
    }
    for (size_t i = P; i-- > 0;) {
        double t = x[i];
        for (size_t k = i + 1; k < P; k++) t -= ws[k * P + i] * x[k];
        x[i] = t / ws[i * P + i];
    }
    return 1;
}

/* The state of one greedy fit. */
typedef struct greedy {
    rfx_cmat X;
    size_t n, d;
    rfx_activation act;
    int icpt, nt;
    int phase;    /* 1: b is refined (cos-bias); 0: b = 0 (phase-free)  */
    tiling tl;
    double *part; /* tiles x width partial sums (width >= 3 M, (P+1)^2)  */
    double *jac;  /* threads x (d + 3): one Jacobian row per thread       */
    size_t K;     /* the terms                                           */
} greedy;

/* The squared residual |r - beta phi(X w + b) - gamma|^2 over the support
 * sup (q indices) of w, and, when A is not NULL, the Gauss-Newton normal
 * equations A = J^T J (P x P), g = J^T e, P = q + phase + 1 + icpt,
 * parameters ordered (w_sup, b, beta, gamma), b only with a phase (else
 * b = 0). Tile partials added in order. */
static double gn_system(greedy *G, const size_t *sup, size_t q, const double *theta,
                        const double *r, double *A, double *g)
{
    const size_t ph = (size_t)G->phase, P = q + ph + 1 + (size_t)G->icpt;
    const size_t width = A ? P * P + P + 1 : 1;
    const tiling *tl = &G->tl;
#pragma omp parallel num_threads(G->nt) if (tl->count > 1 && tl->n * P * P >= PAR_MIN_WORK)
    {
#ifdef _OPENMP
        double *jac = G->jac + (size_t)omp_get_thread_num() * P;
#else
        double *jac = G->jac;
#endif
#pragma omp for schedule(static)
        for (size_t t = 0; t < tl->count; t++) {
            size_t r0 = t * tl->rows, rows = tile_len(tl, t);
            double *pt = G->part + t * width;
            memset(pt, 0, width * sizeof *pt);
            for (size_t i = r0; i < r0 + rows; i++) {
                const double *xi = G->X.data + i * G->X.stride;
                double u = ph ? theta[q] : 0.0;
                for (size_t k = 0; k < q; k++) u += theta[k] * xi[sup[k]];
                double der, phi = act_eval(G->act, u, &der);
                double e = r[i] - theta[q + ph] * phi - (G->icpt ? theta[q + ph + 1] : 0.0);
                pt[width - 1] += e * e;
                if (!A) continue;
                double bd = theta[q + ph] * der;
                for (size_t k = 0; k < q; k++) jac[k] = bd * xi[sup[k]];
                if (ph) jac[q] = bd;
                jac[q + ph] = phi;
                if (G->icpt) jac[q + ph + 1] = 1.0;
                for (size_t a = 0; a < P; a++) {
                    pt[P * P + a] += jac[a] * e;
                    for (size_t b = a; b < P; b++) pt[a * P + b] += jac[a] * jac[b];
                }
            }
        }
    }
    double E = 0;
    if (A) {
        memset(A, 0, P * P * sizeof *A);
        memset(g, 0, P * sizeof *g);
    }
    for (size_t t = 0; t < tl->count; t++) {
        const double *pt = G->part + t * width;
        E += pt[width - 1];
        if (!A) continue;
        for (size_t a = 0; a < P; a++) {
            g[a] += pt[P * P + a];
            for (size_t b = a; b < P; b++) A[a * P + b] += pt[a * P + b];
        }
    }
    if (A)
        for (size_t a = 0; a < P; a++)
            for (size_t b = 0; b < a; b++) A[a * P + b] = A[b * P + a];
    return E;
}

/* Refine (w, b) of a chosen term against the residual r by damped
 * Gauss-Newton (Levenberg-Marquardt): steps that lower the squared residual
 * are kept. w (d values, its zeros stay zero), b in place; without a phase
 * (G->phase 0) b stays 0 and only w moves. */
static rfx_status greedy_refine(greedy *G, size_t steps, const double *r, double *w, double *b,
                                double beta, double gamma)
{
    const size_t d = G->d;
    size_t q = 0;
    for (size_t k = 0; k < d; k++) q += w[k] != 0.0;
    const size_t ph = (size_t)G->phase, P = q + ph + 1 + (size_t)G->icpt;
    size_t *sup = NULL;
    double *buf = NULL;
    rfx_status st = rfx__alloc(q + 1, sizeof *sup, (void **)&sup, "greedy: workspace");
    size_t cells = 0;
    if (!st) st = rfx__mul(P, 2 * P + 4, &cells, "greedy: workspace");
    if (!st) st = rfx__alloc(cells, sizeof(double), (void **)&buf, "greedy: workspace");
    if (st) {
        free(sup);
        return st;
    }
    /* buf: A (P x P), ws (P x P), theta, trial, g, step (P each) */
    double *A = buf, *ws = A + P * P, *th = ws + P * P, *tr = th + P, *g = tr + P, *dx = g + P;
    size_t j = 0;
    for (size_t k = 0; k < d; k++)
        if (w[k] != 0.0) {
            sup[j] = k;
            th[j++] = w[k];
        }
    if (ph) th[q] = *b;
    th[q + ph] = beta;
    if (G->icpt) th[q + ph + 1] = gamma;
    double lam = 1e-3;
    double E = gn_system(G, sup, q, th, r, A, g);
    for (size_t s = 0; s < steps && isfinite(E); s++) {
        int kept = 0;
        for (int tries = 0; tries < 12 && !kept; tries++) {
            if (damped_solve(A, P, lam, g, dx, ws)) {
                for (size_t k = 0; k < P; k++) tr[k] = th[k] + dx[k];
                double Et = gn_system(G, sup, q, tr, r, NULL, NULL);
                if (Et < E) {
                    memcpy(th, tr, P * sizeof *th);
                    E = gn_system(G, sup, q, th, r, A, g);
                    lam = lam / 3.0 > 1e-12 ? lam / 3.0 : 1e-12;
                    kept = 1;
                    break;
                }
            }
            lam *= 4.0;
        }
        if (!kept) break;
    }
    for (size_t k = 0; k < q; k++) w[sup[k]] = th[k];
    if (ph) *b = th[q];
    free(sup);
    free(buf);
    return RFX_OK;
}

static rfx_status greedy_check(rfx_cmat X, const double *y, const rfx_greedy_params *p,
                               rfx_model **out)
{
    if (!p) return rfx__error(RFX_EINVAL, "greedy: params is NULL");
    if (!y) return rfx__error(RFX_EINVAL, "greedy: y is NULL");
    if (!out) return rfx__error(RFX_EINVAL, "greedy: out is NULL");
    if (p->n_terms == 0) return rfx__error(RFX_EINVAL, "greedy params.n_terms: must be >= 1");
    if (p->n_candidates == 0)
        return rfx__error(RFX_EINVAL, "greedy params.n_candidates: must be >= 1");
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "greedy params.n_threads: must be >= 0, got %d",
                          p->n_threads);
    if (p->update != RFX_GREEDY_ORTHOGONAL && p->update != RFX_GREEDY_RELAXED)
        return rfx__error(RFX_EINVAL, "greedy params.update: RFX_GREEDY_ORTHOGONAL or "
                                      "RFX_GREEDY_RELAXED, got %d", (int)p->update);
    if (p->features.form == RFX_FORM_COS_SIN)
        return rfx__error(RFX_EINVAL, "greedy params.features.form: must be cos-bias or "
                                      "phase-free (a term is one nonlinearity phi(w.x + b)), "
                                      "not cos-sin");
    int tmp;
    RFX__TRY(rfx__lapack_int(p->n_candidates, &tmp, "greedy params.n_candidates"));
    RFX__TRY(rfx__lapack_int(p->n_terms, &tmp, "greedy params.n_terms"));
    RFX__TRY(rfx__check_cmat(X, "greedy: X"));
    if (X.rows == 0) return rfx__error(RFX_EDIM, "greedy: X has no rows");
    if (X.cols == 0) return rfx__error(RFX_EDIM, "greedy: X has no columns");
    rfx_features_params fp = p->features;
    fp.n_features = p->n_candidates;
    fp.n_threads = 0;
    rfx_status st = rfx__features_check(&fp, X.cols);
    if (st) {
        rfx__error_prefix("greedy params");
        return st;
    }
    RFX__TRY(rfx__lapack_int(X.rows, &tmp, "greedy: the rows of X"));
    RFX__TRY(rfx__lapack_int(X.cols, &tmp, "greedy: the columns of X"));
    size_t cells;
    RFX__TRY(rfx__mul3(p->n_terms + (p->fit_intercept != 0), X.rows, sizeof(double), &cells,
                       "greedy: the orthogonal basis"));
    RFX__TRY(rfx__mul3(p->n_candidates, X.rows, sizeof(double), &cells,
                       "greedy: the candidate features"));
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "greedy: X row %zu, column %zu: %g is not finite", r, c,
                          X.data[r * X.stride + c]);
    for (size_t i = 0; i < X.rows; i++)
        if (!isfinite(y[i]))
            return rfx__error(RFX_EPARSE, "greedy: y[%zu] = %g is not finite", i, y[i]);
    return RFX_OK;
}

/* The relaxed update of term k (rfx/sinks.h): ph (n) holds phi_k at the
 * rows; fr the fit f (n) and the centred targets yc (n, after it); rc the
 * coefficients (K) and the terms' means (K, after them). With phc = ph
 * centred (with an intercept), keep in [0, 1] and g minimise
 * |yc - keep f - g phc|^2; then f <- keep f + g phc, the earlier
 * coefficients times keep, rc[k] = g, and rr = yc - f. A term constant over
 * the rows adds nothing (counted in *n_dep). */
static void greedy_relaxed_step(const greedy *G, size_t k, double *ph, double *fr, double *rr,
                                double *rc, size_t *n_dep)
{
    const size_t n = G->n, K = G->K;
    double *f = fr, *yc = fr + n, sums[5], mean = 0;
    if (G->icpt) {
        for (size_t i = 0; i < n; i++) mean += ph[i];
        mean /= (double)n;
        for (size_t i = 0; i < n; i++) ph[i] -= mean;
    }
    rc[K + k] = mean;
    tiled_dots(f, 1, f, sums, &G->tl, G->part, G->nt);
    tiled_dots(f, 1, ph, sums + 1, &G->tl, G->part, G->nt);
    tiled_dots(ph, 1, ph, sums + 2, &G->tl, G->part, G->nt);
    tiled_dots(f, 1, yc, sums + 3, &G->tl, G->part, G->nt);
    tiled_dots(ph, 1, yc, sums + 4, &G->tl, G->part, G->nt);
    const double ff = sums[0], fp = sums[1], pp = sums[2], fy = sums[3], py = sums[4];
    double keep = 1.0, g = 0.0;
    if (!(pp > 0)) { /* constant: the fit only rescales */
        (*n_dep)++;
        keep = ff > 0 ? fy / ff : 1.0;
    } else if (!(ff > 0)) { /* the first term */
        g = py / pp;
    } else {
        const double det = ff * pp - fp * fp;
        keep = det > 1e-14 * ff * pp ? (fy * pp - py * fp) / det : fy / ff;
    }
    if (keep < 0) keep = 0;
    if (keep > 1) keep = 1;
    if (pp > 0 && ff > 0) g = (py - keep * fp) / pp;
    for (size_t i = 0; i < n; i++) {
        f[i] = keep * f[i] + g * ph[i];
        rr[i] = yc[i] - f[i];
    }
    for (size_t j = 0; j < k; j++) rc[j] *= keep;
    rc[k] = g;
}

rfx_status rfx_greedy_fit(rfx_cmat X, const double *y, const rfx_greedy_params *params,
                          rfx_model **out, rfx_greedy_report *report, double *mse_path)
{
    RFX__TRY(greedy_check(X, y, params, out));
    const rfx_greedy_params *p = params;
    const size_t n = X.rows, d = X.cols, K = p->n_terms, M = p->n_candidates;
    const int icpt = p->fit_intercept != 0;
    const size_t ncol = K + (size_t)icpt; /* columns: [1], phi_1 .. phi_K    */
    const int nt = rfx__threads(p->n_threads);
    greedy G;
    G.X = X;
    G.n = n;
    G.d = d;
    G.act = p->features.activation;
    G.icpt = icpt;
    G.phase = p->features.form == RFX_FORM_COS_BIAS;
    G.nt = nt;
    G.tl = tiling_of(n);
    G.part = NULL;
    G.jac = NULL;
    G.K = K;
    const size_t P = d + 3;
    size_t qn, zn, width = 3 * M, rn;
    if (width < ncol) width = ncol;
    RFX__TRY(rfx__mul(ncol, n, &qn, "greedy: the orthogonal basis"));
    RFX__TRY(rfx__mul(n, M, &zn, "greedy: the candidate features"));
    RFX__TRY(rfx__mul(ncol, ncol, &rn, "greedy: the triangular factor"));
    size_t pw;
    RFX__TRY(rfx__mul(P, P, &pw, "greedy: the Gauss-Newton system"));
    RFX__TRY(rfx__add(pw, P + 1, &pw, "greedy: the Gauss-Newton system"));
    if (pw > width) width = pw;

    double *Q = NULL, *Zc = NULL, *R = NULL, *t = NULL, *rr = NULL, *v = NULL, *ph = NULL;
    double *W = NULL, *bv = NULL, *coef = NULL, *sc = NULL, *cc = NULL, *ls = NULL;
    double *mpath = NULL, *fr = NULL, *rc = NULL; /* relaxed: fit, yc; coefficients, means */
    long *bidx = NULL;
    rfx_features *cf = NULL, *mf = NULL;
    rfx_model *m = NULL;
    int ard = 0;
    size_t nb = 0, n_dep = 0;
    rfx_status st = rfx__alloc(qn, sizeof(double), (void **)&Q, "greedy: the orthogonal basis");
    if (!st) st = rfx__alloc(zn, sizeof(double), (void **)&Zc, "greedy: candidate features");
    if (!st) st = rfx__calloc(rn, sizeof(double), (void **)&R, "greedy: triangular factor");
    if (!st) st = rfx__calloc(ncol, sizeof(double), (void **)&t, "greedy: workspace");
    if (!st) st = rfx__alloc(n, 3 * sizeof(double), (void **)&rr, "greedy: workspace");
    if (!st) st = rfx__alloc(K, d * sizeof(double), (void **)&W, "greedy: frequencies");
    if (!st) st = rfx__alloc(K, sizeof(double), (void **)&bv, "greedy: phases");
    if (!st) st = rfx__calloc(ncol, sizeof(double), (void **)&coef, "greedy: coefficients");
    if (!st) st = rfx__alloc(M, 3 * sizeof(double), (void **)&sc, "greedy: scores");
    if (!st) st = rfx__alloc(ncol, 2 * sizeof(double), (void **)&cc, "greedy: workspace");
    if (!st) st = rfx__alloc(ncol, sizeof(long), (void **)&bidx, "greedy: workspace");
    size_t pcells = 0;
    if (!st) st = rfx__mul(G.tl.count, width, &pcells, "greedy: workspace");
    if (!st) st = rfx__alloc(pcells, sizeof(double), (void **)&G.part, "greedy: workspace");
    if (!st) st = rfx__alloc(d, sizeof(double), (void **)&ls, "greedy: length scales");
    if (!st) st = rfx__alloc((size_t)nt, P * sizeof(double), (void **)&G.jac, "greedy: workspace");
    if (!st) st = rfx__alloc(K, sizeof(double), (void **)&mpath, "greedy: workspace");
    const int relaxed = p->update == RFX_GREEDY_RELAXED;
    if (!st && relaxed) st = rfx__calloc(2 * n, sizeof(double), (void **)&fr, "greedy: the fit");
    if (!st && relaxed) st = rfx__calloc(K, 2 * sizeof(double), (void **)&rc, "greedy: workspace");
    if (st) goto done;
    v = rr + n;
    ph = rr + 2 * n;
    memcpy(rr, y, n * sizeof *rr);

    if (icpt) { /* the constant column: q_0 = 1 / sqrt(n), R_00 = sqrt(n) */
        const double s0 = 1.0 / sqrt((double)n);
        for (size_t i = 0; i < n; i++) Q[i] = s0;
        tiled_dots(Q, 1, rr, t, &G.tl, G.part, nt);
        R[0] = sqrt((double)n);
        for (size_t i = 0; i < n; i++) rr[i] -= s0 * t[0];
        bidx[0] = 0;
        nb = 1;
    }
    if (relaxed) memcpy(fr + n, rr, n * sizeof *fr); /* yc: y minus its mean (icpt) */

    for (size_t k = 0; k < K; k++) {
        /* 1. candidates: the features of step k's map */
        rfx_features_params fp = p->features;
        fp.n_features = M;
        fp.n_threads = p->n_threads;
        fp.seed = p->features.seed + (uint64_t)k * GREEDY_SEED_STEP;
        st = rfx_features_create(&fp, d, &cf);
        if (st) goto done;
        if (k == 0) {
            memcpy(ls, cf->ls, d * sizeof *ls);
            ard = cf->ard;
        }
        featurise(cf, X, Zc, nt);
        /* 2. scores (r.z)^2 / |z - mean z|^2: tile partials of r.z, sum z, z.z */
        const tiling *tl = &G.tl;
#pragma omp parallel for num_threads(nt) schedule(static) if (tl->count > 1 && n * M >= PAR_MIN_WORK)
        for (size_t tt = 0; tt < tl->count; tt++) {
            size_t r0 = tt * tl->rows, rows = tile_len(tl, tt);
            double *pt = G.part + tt * 3 * M;
            memset(pt, 0, 3 * M * sizeof *pt);
            for (size_t i = r0; i < r0 + rows; i++) {
                const double *z = Zc + i * M, ri = rr[i];
                for (size_t j = 0; j < M; j++) {
                    pt[j] += ri * z[j];
                    pt[M + j] += z[j];
                    pt[2 * M + j] += z[j] * z[j];
                }
            }
        }
        memset(sc, 0, 3 * M * sizeof *sc);
        for (size_t tt = 0; tt < tl->count; tt++)
            for (size_t j = 0; j < 3 * M; j++) sc[j] += G.part[tt * 3 * M + j];
        size_t best = 0;
        double best_score = -1;
        for (size_t j = 0; j < M; j++) {
            double den = sc[2 * M + j] - (icpt ? sc[M + j] * sc[M + j] / (double)n : 0.0);
            double s = den > 1e-12 * sc[2 * M + j] && den > 0 ? sc[j] * sc[j] / den : 0.0;
            if (s > best_score) {
                best_score = s;
                best = j;
            }
        }
        double *w = W + k * d;
        memcpy(w, cf->W + best * d, d * sizeof *w);
        bv[k] = cf->b[best];
        /* 3. refinement, from the best multiple (and constant) of the term */
        if (p->refine_steps > 0 && G.act != RFX_ACTIVATION_SIGN) {
            const double scl = cf->scale; /* z = scl phi */
            double den = sc[2 * M + best] - (icpt ? sc[M + best] * sc[M + best] / (double)n : 0);
            if (den > 0) {
                double beta = scl * sc[best] / den; /* per unscaled phi */
                double gamma = icpt ? -beta * sc[M + best] / scl / (double)n : 0.0;
                st = greedy_refine(&G, p->refine_steps, rr, w, &bv[k], beta, gamma);
                if (st) goto done;
            }
        }
        rfx_features_free(cf);
        cf = NULL;
        /* 4. the new column, orthogonalised twice against the basis */
        for (size_t i = 0; i < n; i++) {
            const double *xi = X.data + i * X.stride;
            double u = bv[k], der;
            for (size_t l = 0; l < d; l++) u += w[l] * xi[l];
            ph[i] = act_eval(G.act, u, &der);
        }
        if (relaxed) {
            greedy_relaxed_step(&G, k, ph, fr, rr, rc, &n_dep);
            double e2r;
            tiled_dots(rr, 1, rr, &e2r, &G.tl, G.part, nt);
            mpath[k] = e2r / (double)n;
            continue;
        }
        memcpy(v, ph, n * sizeof *v);
        const size_t col = k + (size_t)icpt;
        for (int pass = 0; pass < 2; pass++) {
            tiled_dots(Q, nb, v, cc, &G.tl, G.part, nt);
            tiled_subtract(Q, nb, cc, v, &G.tl, nt);
            for (size_t j = 0; j < nb; j++) R[j * ncol + col] += cc[j];
        }
        double nn[2];
        tiled_dots(v, 1, v, nn, &G.tl, G.part, nt);
        tiled_dots(ph, 1, ph, nn + 1, &G.tl, G.part, nt);
        double rho = sqrt(nn[0]), nphi = sqrt(nn[1]);
        if (!(rho > GREEDY_DEPENDENT * nphi) || !(rho > 0)) {
            bidx[col] = -1;
            n_dep++;
        } else {
            double *qv = Q + nb * n;
            for (size_t i = 0; i < n; i++) qv[i] = v[i] / rho;
            R[nb * ncol + col] = rho;
            tiled_dots(qv, 1, rr, t + nb, &G.tl, G.part, nt);
            for (size_t i = 0; i < n; i++) rr[i] -= qv[i] * t[nb];
            bidx[col] = (long)nb;
            nb++;
        }
        double e2;
        tiled_dots(rr, 1, rr, &e2, &G.tl, G.part, nt);
        mpath[k] = e2 / (double)n;
    }

    /* coefficients: the relaxed ones as kept, the intercept from the means;
     * else back substitution over the independent columns */
    if (relaxed) {
        double b0 = 0;
        if (icpt) {
            for (size_t i = 0; i < n; i++) b0 += y[i];
            b0 /= (double)n;
            for (size_t k = 0; k < K; k++) b0 -= rc[k] * rc[K + k];
        }
        if (icpt) coef[0] = b0;
        for (size_t k = 0; k < K; k++) coef[k + (size_t)icpt] = rc[k];
    }
    for (size_t c = ncol; c-- > 0 && !relaxed;) {
        if (bidx[c] < 0) {
            coef[c] = 0.0;
            continue;
        }
        size_t bi = (size_t)bidx[c];
        double s = t[bi];
        for (size_t c2 = c + 1; c2 < ncol; c2++)
            if (bidx[c2] >= 0) s -= R[bi * ncol + c2] * coef[c2];
        coef[c] = s / R[bi * ncol + c];
    }

    {
        rfx_features_params fp = p->features;
        fp.n_features = K;
        fp.n_threads = p->n_threads;
        fp.length_scales = NULL;
        fp.gamma = 0.0;
        st = rfx__features_from_arrays(&fp, d, ls, ard, W, bv, &mf);
        if (st) goto done;
    }
    st = rfx__model_alloc(RFX_METHOD_GREEDY, mf, 1, 0, &m);
    if (st) goto done;
    for (size_t k = 0; k < K; k++) m->W[k] = coef[k + (size_t)icpt] / mf->scale;
    mf = NULL; /* owned by the model */
    m->intercept[0] = icpt ? coef[0] : 0.0;
    m->fit_intercept = icpt;
    m->n_train = n;
    if (report) {
        memset(report, 0, sizeof *report);
        report->n_terms = K;
        report->n_dependent = n_dep;
        report->train_mse = mpath[K - 1];
    }
    if (mse_path) memcpy(mse_path, mpath, K * sizeof *mse_path);
    *out = m;
    m = NULL;
done:
    rfx_model_free(m);
    rfx_features_free(cf);
    rfx_features_free(mf);
    free(Q);
    free(Zc);
    free(R);
    free(t);
    free(rr);
    free(W);
    free(bv);
    free(coef);
    free(sc);
    free(cc);
    free(bidx);
    free(G.part);
    free(G.jac);
    free(ls);
    free(mpath);
    free(fr);
    free(rc);
    return st;
}
