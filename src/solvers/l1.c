/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sparse linear fits on a dense m x N matrix A (include/rfx/l1.h):
 *
 *   LASSO  min_c (1/2m) |y_c - A_c c|^2 + lambda sum_j w_j |c_j|
 *   BPDN   min_c sum_j w_j |c_j|  s.t.  |y_c - A_c c|_2 <= sigma
 *   HTP    min_c |y_c - A_c c|_2  s.t.  |c|_0 <= s
 *
 * with A_c, y_c the columns and targets centred over the fitted rows when an
 * intercept is fitted (else A, y), and m the number of fitted rows.
 *
 * Why these algorithms.
 *
 * The lasso is solved by cyclic coordinate descent (Friedman, Hastie &
 * Tibshirani, J. Stat. Softw. 33(1), 2010) on a working set: the columns
 * that survive the sequential strong rule (Tibshirani et al., JRSS B 74(2),
 * 2012), gathered once into a contiguous column-major block (A is row-major,
 * so its columns are strided; the working set of a sparse problem has a few
 * hundred columns at most, so the block is small). A full pass g = A_c^T r,
 * one DGEMV over A by fixed column tiles, adds the columns that violate the
 * optimality conditions |g_j| <= lambda m w_j and yields the duality gap
 *
 *   P(c) - D(s r),  D(v) = (1/m) v^T y_c - (1/2m) |v|^2,
 *   s = min(1, lambda m / max_j (|g_j| / w_j)),
 *
 * the certificate we stop on (relative to P(0) = |y_c|^2 / 2m; scikit-learn's
 * cd_fast uses the same gap and scale). Coordinate descent does O(m) work
 * per coordinate update and touches only the working set, where a proximal
 * gradient method (ISTA/FISTA, or SPG) needs two passes over all of A per
 * iteration and converges only sublinearly when m < N. But coordinate
 * descent crawls on ill-conditioned supports, and those are SRFE's normal
 * case (correlated features, lambda small, support near m). So with polish
 * (the default) a short round of coordinate descent only finds a starting
 * point, and an active-set method finishes the working set exactly: the
 * feature-sign search of Lee et al. (NIPS 2006) with an updated Cholesky
 * factor of X_S^T X_S, and a proximal step that exchanges basis columns
 * when the support reaches the rank (lasso_fss below). A long way down in
 * lambda is walked in steps (continuation) so that the strong rule keeps
 * the working set near the support.
 *
 * Basis pursuit denoising is the lasso whose residual norm equals sigma:
 * the Pareto curve of van den Berg & Friedlander (SIAM J. Sci. Comput.
 * 31(2), 2008) traced by lambda instead of their tau = |c|_1. SPGL1 finds
 * the root in tau by Newton's method and solves each subproblem (least
 * squares on the l1 ball) by spectral projected gradient; ADMM would factor
 * I + rho A A^T once. Both are first-order methods whose accuracy stalls
 * near 1e-4..1e-6 on the ill-conditioned, nearly interpolating problems of
 * SRFE (sigma small, support near m). We keep the Pareto root finding but
 * parametrise by lambda, because (i) our lasso solver is fast, warm-starts
 * and certifies its accuracy, and (ii) in u = lambda^2 the curve is exactly
 * piecewise linear: on a piece with fixed support S and signs s,
 *   c_S(lambda) = G^-1 (A_S^T y_c - lambda m (w s)_S),  G = A_S^T A_S,
 *   |r(lambda)|^2 = |r_LS|^2 + u m^2 (w s)_S^T G^-1 (w s)_S,
 * so a secant step in u is exact once both bracket ends lie on the root's
 * piece. We use the Illinois variant of regula falsi (Dowell & Jarratt,
 * BIT 11, 1971), which keeps a bracket and cannot stall at one end.
 *
 * Hard thresholding pursuit (Foucart, SIAM J. Numer. Anal. 49(6), 2011):
 * S = the s largest |c + mu A_c^T r|, then least squares on S, until S
 * repeats; HARFE (Saha, Schaeffer & Tran, 2022) adds a ridge to that least
 * squares, which is our ridge parameter.
 *
 * Thread-count independence: every product with all of A (A^T r) runs in
 * fixed column tiles, each tile a single-threaded DGEMV, and every other
 * loop (coordinate descent, dot products, the small factorisations) runs on
 * the calling thread with BLAS held to one thread.
 */
#include "internal.h"
#include "rfx/l1.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Columns per tile of A^T r (and of the column normalisation): a constant,
 * so the bits never depend on the thread count. 1024 accumulators stay in
 * L1/L2 while the rows stream past. */
#define L1_COL_TILE 1024
/* Coordinate descent sweeps between duality-gap checks on the working set
 * (a check costs one sweep, so this bounds the overhead at 1/L1_GAP_EVERY
 * and the delay in stopping at L1_GAP_EVERY - 1 sweeps). */
#define L1_GAP_EVERY 10

/* ------------------------------------------------------------------------ */
/* Names and defaults                                                        */
/* ------------------------------------------------------------------------ */

const char *rfx_l1_method_name(rfx_l1_method method)
{
    switch (method) {
    case RFX_L1_METHOD_LASSO: return "lasso";
    case RFX_L1_METHOD_BPDN: return "bpdn";
    case RFX_L1_METHOD_HTP: return "htp";
    }
    return "unknown";
}

rfx_status rfx_l1_method_from_name(const char *name, rfx_l1_method *out)
{
    if (!name || !out) return rfx__error(RFX_EINVAL, "l1 method: name or out is NULL");
    static const rfx_l1_method all[] = {RFX_L1_METHOD_LASSO, RFX_L1_METHOD_BPDN,
                                        RFX_L1_METHOD_HTP};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(name, rfx_l1_method_name(all[i])) == 0) {
            *out = all[i];
            return RFX_OK;
        }
    }
    return rfx__error(RFX_EINVAL, "l1 method: unknown name '%s' (lasso, bpdn, htp)", name);
}

rfx_l1_params rfx_l1_params_default(void)
{
    rfx_l1_params p;
    memset(&p, 0, sizeof p);
    p.method = RFX_L1_METHOD_LASSO;
    p.fit_intercept = 0;
    p.weights = NULL;
    p.lambda = 1e-3;
    p.select = RFX_SELECT_NONE;
    p.n_folds = 5;
    p.cv_stop_factor = 0;
    p.lambdas = NULL;
    p.n_lambdas = 100;
    p.lambda_min_ratio = 0;
    p.sigma = 0;
    p.eta = 0;
    p.sigma_tol = 1e-6;
    p.max_root_iter = 100;
    p.sparsity = 0;
    p.step = 0;
    p.ridge = 1e-12;
    p.max_iter = 1000;
    p.tol = 1e-8;
    p.polish = 1;
    p.n_threads = 0;
    p.progress = NULL;
    p.progress_user = NULL;
    p.sample_weight = NULL;
    return p;
}

/* ------------------------------------------------------------------------ */
/* Validation                                                                */
/* ------------------------------------------------------------------------ */

/* What the caller is about to do, for the checks that depend on it. */
enum { NEED_FIT, NEED_PATH, NEED_CV, NEED_LAMBDA_MAX };

static rfx_status check_data(rfx_cmat A, const double *y)
{
    RFX__TRY(rfx__check_cmat(A, "l1: A"));
    if (A.rows == 0 || A.cols == 0)
        return rfx__error(RFX_EDIM, "l1: A is %zu x %zu; it needs at least one row and column",
                          A.rows, A.cols);
    if (A.rows > 2147483647u || A.cols > 2147483647u || A.stride > 2147483647u)
        return rfx__error(RFX_EOVERFLOW, "l1: A (%zu x %zu, stride %zu) exceeds the BLAS range",
                          A.rows, A.cols, A.stride);
    if (!y) return rfx__error(RFX_EINVAL, "l1: y is NULL");
    size_t r, c;
    if (!rfx__all_finite(A, &r, &c))
        return rfx__error(RFX_EPARSE, "l1: A row %zu, column %zu: %g is not finite", r, c,
                          A.data[r * A.stride + c]);
    for (size_t i = 0; i < A.rows; i++)
        if (!isfinite(y[i]))
            return rfx__error(RFX_EPARSE, "l1: y[%zu] = %g is not finite", i, y[i]);
    return RFX_OK;
}

static rfx_status check_params(const rfx_l1_params *p, size_t m, size_t N, int need)
{
    if (!p) return rfx__error(RFX_EINVAL, "l1: params is NULL");
    if ((unsigned)p->method > RFX_L1_METHOD_HTP)
        return rfx__error(RFX_EINVAL, "l1.method: %d is not an rfx_l1_method", (int)p->method);
    const int fit = need == NEED_FIT;
    const rfx_l1_method method = fit ? p->method : RFX_L1_METHOD_LASSO;
    const int lasso_like = method != RFX_L1_METHOD_HTP;
    const int kfold = need == NEED_CV || (fit && method == RFX_L1_METHOD_LASSO &&
                                          p->select == RFX_SELECT_KFOLD);
    const int gcv = fit && method == RFX_L1_METHOD_LASSO && p->select == RFX_SELECT_GCV;
    const int grid = need == NEED_PATH || kfold || gcv;
    if (p->sample_weight) { /* the rows of positive weight are the rows */
        RFX__TRY(rfx__check_weights(p->sample_weight, m, "l1.sample_weight"));
        size_t pos = 0;
        for (size_t i = 0; i < m; i++) pos += p->sample_weight[i] > 0;
        m = pos;
    }
    if (fit && method == RFX_L1_METHOD_LASSO) {
        if ((unsigned)p->select > RFX_SELECT_KFOLD)
            return rfx__error(RFX_EINVAL, "l1.select: %d is not an rfx_select", (int)p->select);
        if (p->select == RFX_SELECT_NONE && !(p->lambda > 0 && isfinite(p->lambda)))
            return rfx__error(RFX_EINVAL, "l1.lambda: must be > 0 and finite, got %g", p->lambda);
    }
    if ((kfold || gcv) &&
        !(p->cv_stop_factor == 0 || (p->cv_stop_factor > 1 && isfinite(p->cv_stop_factor))))
        return rfx__error(RFX_EINVAL, "l1.cv_stop_factor: must be 0 or > 1 and finite, got %g",
                          p->cv_stop_factor);
    if (kfold && (p->n_folds < 2 || p->n_folds > m))
        return rfx__error(RFX_EINVAL, "l1.n_folds: must be in 2..%zu (the rows of positive "
                                      "weight), got %zu", m,
                          p->n_folds);
    if (grid) {
        if (p->n_lambdas == 0) return rfx__error(RFX_EINVAL, "l1.n_lambdas: must be >= 1, got 0");
        if (!p->lambdas && !(p->lambda_min_ratio >= 0 && p->lambda_min_ratio <= 1))
            return rfx__error(RFX_EINVAL, "l1.lambda_min_ratio: must be in [0, 1], got %g",
                              p->lambda_min_ratio);
        for (size_t k = 0; p->lambdas && k < p->n_lambdas; k++)
            if (!(p->lambdas[k] > 0 && isfinite(p->lambdas[k])))
                return rfx__error(RFX_EINVAL, "l1.lambdas[%zu]: must be > 0 and finite, got %g", k,
                                  p->lambdas[k]);
    }
    if (fit && method == RFX_L1_METHOD_BPDN) {
        if (!(p->sigma >= 0 && isfinite(p->sigma)))
            return rfx__error(RFX_EINVAL, "l1.sigma: must be >= 0 and finite, got %g", p->sigma);
        if (!(p->eta >= 0 && isfinite(p->eta)))
            return rfx__error(RFX_EINVAL, "l1.eta: must be >= 0 and finite, got %g", p->eta);
        if (p->sigma > 0 && p->eta > 0)
            return rfx__error(RFX_EINVAL, "l1.sigma, l1.eta: give one of them, not both (sigma = "
                                          "%g, eta = %g)", p->sigma, p->eta);
        if (!(p->sigma_tol > 0 && p->sigma_tol < 1))
            return rfx__error(RFX_EINVAL, "l1.sigma_tol: must be in (0, 1), got %g", p->sigma_tol);
        if (p->max_root_iter == 0)
            return rfx__error(RFX_EINVAL, "l1.max_root_iter: must be >= 1, got 0");
    }
    if (fit && method == RFX_L1_METHOD_HTP) {
        size_t smax = m < N ? m : N;
        if (p->sparsity == 0 || p->sparsity > smax)
            return rfx__error(RFX_EINVAL, "l1.sparsity: must be in 1..min(m, N) = %zu (m the rows "
                                          "of positive weight), got %zu",
                              smax, p->sparsity);
        if (!(p->step >= 0 && isfinite(p->step)))
            return rfx__error(RFX_EINVAL, "l1.step: must be >= 0 and finite, got %g", p->step);
        if (!(p->ridge >= 0 && isfinite(p->ridge)))
            return rfx__error(RFX_EINVAL, "l1.ridge: must be >= 0 and finite, got %g", p->ridge);
    }
    if (lasso_like && p->weights) {
        for (size_t j = 0; j < N; j++)
            if (!(p->weights[j] > 0 && isfinite(p->weights[j])))
                return rfx__error(RFX_EINVAL, "l1.weights[%zu]: must be > 0 and finite, got %g", j,
                                  p->weights[j]);
    }
    if (need != NEED_LAMBDA_MAX) {
        if (p->max_iter == 0) return rfx__error(RFX_EINVAL, "l1.max_iter: must be >= 1, got 0");
        if (lasso_like && !(p->tol > 0 && p->tol < 1))
            return rfx__error(RFX_EINVAL, "l1.tol: must be in (0, 1), got %g", p->tol);
    }
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "l1.n_threads: must be >= 0, got %d", p->n_threads);
    return RFX_OK;
}

static int report_progress(const rfx_l1_params *p, const char *stage, double frac)
{
    return p->progress && p->progress(p->progress_user, stage, frac);
}

static rfx_status cancelled(const char *stage)
{
    return rfx__error(RFX_ECANCELLED, "l1 %s: cancelled by the progress callback", stage);
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                   */
/* ------------------------------------------------------------------------ */

/* out (A.cols) = A^T v, v (A.rows). Fixed column tiles, each a
 * single-threaded DGEMV over all rows. Cost 2 m N flops, 8 m N bytes. */
static void gemv_t(rfx_cmat A, const double *v, double *out, int nt)
{
    const size_t T = (A.cols + L1_COL_TILE - 1) / L1_COL_TILE;
#pragma omp parallel num_threads(nt) if (T > 1)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < T; t++) {
            size_t j0 = t * L1_COL_TILE, nj = A.cols - j0 < L1_COL_TILE ? A.cols - j0 : L1_COL_TILE;
            cblas_dgemv(CblasRowMajor, CblasTrans, (int)A.rows, (int)nj, 1.0, A.data + j0,
                        (int)A.stride, v, 1, 0.0, out + j0, 1);
        }
    }
}

/* The level-1 kernels of coordinate descent, on the calling thread
 * (independent of the BLAS build and its threads): rfx__dot and axpy. */
static void axpy(double alpha, const double *x, double *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] += alpha * x[i];
}

static double soft(double x, double t) { return x > t ? x - t : (x < -t ? x + t : 0.0); }

/* ------------------------------------------------------------------------ */
/* The problem: A, y, the fitted rows and the centring                       */
/* ------------------------------------------------------------------------ */

typedef struct l1_prob {
    rfx_cmat A;          /* m_all x N, all rows                              */
    const double *y;     /* m_all                                             */
    size_t m_all, N;
    size_t m;            /* rows fitted                                      */
    size_t *rows;        /* m fitted row indices, ascending                  */
    int intercept;
    double *mu;          /* N column means over the fitted rows (0 without)   */
    double ybar;         /* mean of y over the fitted rows (0 without)        */
    double *yc;          /* m centred targets                                */
    double yy;           /* |yc|^2                                           */
    const double *w;     /* N penalty weights, NULL = all 1                  */
    int nt;
    double *rfull;       /* m_all: scatter buffer, zero off the fitted rows   */
    /* sample weights (rfx_l1_params.sample_weight): */
    const double *wall;  /* m_all row weights, NULL when none were given      */
    double *sw;          /* m: sqrt(v_k), v_k = m w_k / sum of the fitted
                            rows' weights (so sum v = m); NULL when every v_k
                            is 1 (no weights, or equal ones): the rows and
                            targets of the scaled problem are sw_k (a_k -
                            mu) and sw_k (y_k - ybar)                       */
    size_t *hrows;       /* the held-out rows of a fold, ascending; nh      */
    size_t nh;
} l1_prob;

static double wt(const l1_prob *P, size_t j) { return P->w ? P->w[j] : 1.0; }

static void prob_free(l1_prob *P)
{
    free(P->rows);
    free(P->mu);
    free(P->yc);
    free(P->rfull);
    free(P->sw);
    free(P->hrows);
    memset(P, 0, sizeof *P);
}

/* Set up the fit on the rows i with i mod n_folds != hold (all rows when
 * n_folds == 0); those with i mod n_folds == hold are the held-out rows.
 * With sample weights sw (m_all values, or NULL) the rows of weight 0 are
 * left out of both and i counts the rows of positive weight only; the
 * means are weighted and the fitted rows scaled by sqrt(v_k) (l1_prob). */
static rfx_status prob_init(l1_prob *P, rfx_cmat A, const double *y, size_t n_folds, size_t hold,
                            int intercept, const double *w, const double *sw, int nt)
{
    memset(P, 0, sizeof *P);
    P->A = A;
    P->y = y;
    P->m_all = A.rows;
    P->N = A.cols;
    P->intercept = intercept;
    P->w = w;
    P->nt = nt;
    P->wall = sw;
    size_t m = 0, nh = 0, pos = 0;
    for (size_t i = 0; i < A.rows; i++) {
        if (sw && !(sw[i] > 0)) continue;
        if (n_folds == 0 || pos % n_folds != hold) m++;
        else nh++;
        pos++;
    }
    P->m = m;
    P->nh = nh;
    rfx_status st = rfx__alloc(m, sizeof(size_t), (void **)&P->rows, "l1: row list");
    if (!st) st = rfx__alloc(nh ? nh : 1, sizeof(size_t), (void **)&P->hrows, "l1: row list");
    if (!st) st = rfx__calloc(A.cols, sizeof(double), (void **)&P->mu, "l1: column means");
    if (!st) st = rfx__alloc(m, sizeof(double), (void **)&P->yc, "l1: targets");
    if (!st) st = rfx__calloc(A.rows, sizeof(double), (void **)&P->rfull, "l1: residual");
    if (st) {
        prob_free(P);
        return st;
    }
    pos = 0;
    for (size_t i = 0, k = 0, h = 0; i < A.rows; i++) {
        if (sw && !(sw[i] > 0)) continue;
        if (n_folds == 0 || pos % n_folds != hold) P->rows[k++] = i;
        else P->hrows[h++] = i;
        pos++;
    }
    if (sw) {
        /* v_k = m w_k / W; equal weights are no weights (the unweighted bits) */
        double W = 0;
        int equal = 1;
        for (size_t k = 0; k < m; k++) {
            W += sw[P->rows[k]];
            equal &= sw[P->rows[k]] == sw[P->rows[0]];
        }
        if (!equal) {
            st = rfx__alloc(m, sizeof(double), (void **)&P->sw, "l1: row weights");
            if (st) {
                prob_free(P);
                return st;
            }
            for (size_t k = 0; k < m; k++) P->sw[k] = sqrt((double)m * sw[P->rows[k]] / W);
        }
    }
    if (intercept) {
        double s = 0;
        if (P->sw) {
            /* weighted means: mu = A^T v / m, ybar = y^T v / m */
            for (size_t k = 0; k < m; k++) {
                const double v = P->sw[k] * P->sw[k];
                s += v * y[P->rows[k]];
                P->rfull[P->rows[k]] = v / (double)m;
            }
        } else {
            for (size_t k = 0; k < m; k++) s += y[P->rows[k]];
            /* mu = A^T e / m, e the indicator of the fitted rows */
            for (size_t k = 0; k < m; k++) P->rfull[P->rows[k]] = 1.0 / (double)m;
        }
        P->ybar = s / (double)m;
        gemv_t(A, P->rfull, P->mu, nt);
        for (size_t k = 0; k < m; k++) P->rfull[P->rows[k]] = 0.0;
    }
    P->yy = 0;
    for (size_t k = 0; k < m; k++) {
        P->yc[k] = y[P->rows[k]] - P->ybar;
        if (P->sw) P->yc[k] *= P->sw[k];
        P->yy += P->yc[k] * P->yc[k];
    }
    return RFX_OK;
}

/* g (N) = A_c^T r for a residual r (m) on the fitted rows. With centring,
 * A_c^T r = A^T r - mu (1^T r); with row scales, A_c^T r = A^T (sw r) - mu
 * (sw^T r). One DGEMV over all of A. */
static void prob_At(l1_prob *P, const double *r, double *g)
{
    double s = 0;
    for (size_t k = 0; k < P->m; k++) {
        const double v = P->sw ? P->sw[k] * r[k] : r[k];
        P->rfull[P->rows[k]] = v;
        s += v;
    }
    gemv_t(P->A, P->rfull, g, P->nt);
    if (P->intercept)
        for (size_t j = 0; j < P->N; j++) g[j] -= P->mu[j] * s;
}

/* max_j |g_j| / w_j */
static double max_ratio(const l1_prob *P, const double *g)
{
    double mx = 0;
    for (size_t j = 0; j < P->N; j++) {
        double v = fabs(g[j]) / wt(P, j);
        if (v > mx) mx = v;
    }
    return mx;
}

/* The intercept b = ybar - mu . c (0 without an intercept). */
static double prob_intercept(const l1_prob *P, const double *c)
{
    if (!P->intercept) return 0.0;
    double b = P->ybar;
    for (size_t j = 0; j < P->N; j++)
        if (c[j] != 0) b -= P->mu[j] * c[j];
    return b;
}

/* The duality gap of the lasso at a point with residual r, weighted l1
 * norm l1w and max_j |A_c,j^T r| / w_j = gmax (see the top of the file). */
static double lasso_gap(const l1_prob *P, const double *r, double lam, double l1w, double gmax)
{
    const double m = (double)P->m;
    double rr = rfx__dot(r, r, P->m), ry = rfx__dot(r, P->yc, P->m);
    double s = gmax > lam * m ? lam * m / gmax : 1.0;
    double primal = rr / (2 * m) + lam * l1w;
    double dual = s * ry / m - s * s * rr / (2 * m);
    return primal - dual;
}

/* ------------------------------------------------------------------------ */
/* The lasso: coordinate descent on a working set                            */
/* ------------------------------------------------------------------------ */

typedef struct l1_lasso {
    l1_prob *P;
    size_t cap, ns;      /* working-set columns allocated, in use            */
    size_t *idx;         /* ns column indices of A                           */
    size_t *pos;         /* N: position in the working set, or SIZE_MAX      */
    double *X;           /* cap x m: column k (centred A[rows, idx[k]]) at
                            X + k m                                          */
    double *nrm2;        /* cap: |X_k|^2                                     */
    double *r;           /* m: yc - X c                                      */
    double *g;           /* N: A_c^T r of the last full pass                 */
    double *g0;          /* N: A_c^T yc                                      */
    size_t *scratch;     /* N: columns to add                                */
    double lam_max;
    size_t sweeps, passes; /* totals, for the report                         */
} l1_lasso;

static void lasso_free(l1_lasso *L)
{
    free(L->idx);
    free(L->pos);
    free(L->X);
    free(L->nrm2);
    free(L->r);
    free(L->g);
    free(L->g0);
    free(L->scratch);
    memset(L, 0, sizeof *L);
}

/* A solver at c = 0: r = yc, g = g0 = A_c^T yc, lam_max. */
static rfx_status lasso_init(l1_lasso *L, l1_prob *P)
{
    memset(L, 0, sizeof *L);
    L->P = P;
    const size_t N = P->N, m = P->m;
    rfx_status st = rfx__alloc(N, sizeof(size_t), (void **)&L->pos, "l1: working set");
    if (!st) st = rfx__alloc(N, sizeof(size_t), (void **)&L->idx, "l1: working set");
    if (!st) st = rfx__alloc(N, sizeof(size_t), (void **)&L->scratch, "l1: working set");
    if (!st) st = rfx__alloc(m, sizeof(double), (void **)&L->r, "l1: residual");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&L->g, "l1: correlations");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&L->g0, "l1: correlations");
    if (st) {
        lasso_free(L);
        return st;
    }
    for (size_t j = 0; j < N; j++) L->pos[j] = SIZE_MAX;
    memcpy(L->r, P->yc, m * sizeof *L->r);
    prob_At(P, L->r, L->g0);
    L->passes++;
    memcpy(L->g, L->g0, N * sizeof *L->g);
    L->lam_max = max_ratio(P, L->g0) / (double)m;
    return RFX_OK;
}

/* Append columns cols[0..n) (not yet in the set) to the working set:
 * gathered row by row, so A is read along its rows. */
static rfx_status lasso_add(l1_lasso *L, const size_t *cols, size_t n)
{
    if (n == 0) return RFX_OK;
    l1_prob *P = L->P;
    const size_t m = P->m;
    if (L->ns + n > L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 64;
        if (cap < L->ns + n) cap = L->ns + n;
        if (cap > P->N) cap = P->N;
        size_t cnt;
        RFX__TRY(rfx__mul(cap, m, &cnt, "l1: working set"));
        double *X, *nrm2;
        RFX__TRY(rfx__alloc(cnt, sizeof(double), (void **)&X, "l1: working set"));
        rfx_status st = rfx__alloc(cap, sizeof(double), (void **)&nrm2, "l1: working set");
        if (st) {
            free(X);
            return st;
        }
        if (L->ns) {
            memcpy(X, L->X, L->ns * m * sizeof *X);
            memcpy(nrm2, L->nrm2, L->ns * sizeof *nrm2);
        }
        free(L->X);
        free(L->nrm2);
        L->X = X;
        L->nrm2 = nrm2;
        L->cap = cap;
    }
    double *X = L->X + L->ns * m;
    for (size_t k = 0; k < m; k++) {
        const double *a = P->A.data + P->rows[k] * P->A.stride;
        for (size_t t = 0; t < n; t++) X[t * m + k] = a[cols[t]] - P->mu[cols[t]];
        if (P->sw)
            for (size_t t = 0; t < n; t++) X[t * m + k] *= P->sw[k];
    }
    for (size_t t = 0; t < n; t++) {
        L->nrm2[L->ns + t] = rfx__dot(X + t * m, X + t * m, m);
        L->idx[L->ns + t] = cols[t];
        L->pos[cols[t]] = L->ns + t;
    }
    L->ns += n;
    return RFX_OK;
}

/* One cyclic sweep over the working set. Per coordinate (Friedman et al.
 * 2010, eq. 5 with the weights): rho = X_k^T r + |X_k|^2 c_j,
 * c_j <- S(rho, lambda m w_j) / |X_k|^2, r -= dc X_k. Cost <= 4 m per
 * column. Returns max |dc|; *cmax = max |c_j| over the set. */
static double cd_sweep(l1_lasso *L, double lam, double *c, double *cmax)
{
    const l1_prob *P = L->P;
    const size_t m = P->m;
    double dmax = 0, cm = 0;
    for (size_t k = 0; k < L->ns; k++) {
        const double nk = L->nrm2[k];
        if (nk == 0) continue; /* a constant column: never in the model */
        const size_t j = L->idx[k];
        const double *x = L->X + k * m;
        const double cj = c[j];
        double rho = rfx__dot(x, L->r, m) + nk * cj;
        double cn = soft(rho, lam * (double)m * wt(P, j)) / nk;
        if (cn != cj) {
            axpy(-(cn - cj), x, L->r, m);
            c[j] = cn;
            double d = fabs(cn - cj);
            if (d > dmax) dmax = d;
        }
        if (fabs(cn) > cm) cm = fabs(cn);
    }
    *cmax = cm;
    return dmax;
}

/* sum_j w_j |c_j| over the working set (c is zero outside it). */
static double lasso_l1w(const l1_lasso *L, const double *c)
{
    double s = 0;
    for (size_t k = 0; k < L->ns; k++) {
        size_t j = L->idx[k];
        s += wt(L->P, j) * fabs(c[j]);
    }
    return s;
}

/* The duality gap of the problem restricted to the working set. Cost m ns. */
static double lasso_gap_ws(const l1_lasso *L, double lam, const double *c)
{
    const l1_prob *P = L->P;
    double gmax = 0;
    for (size_t k = 0; k < L->ns; k++) {
        double v = fabs(rfx__dot(L->X + k * P->m, L->r, P->m)) / wt(P, L->idx[k]);
        if (v > gmax) gmax = v;
    }
    return lasso_gap(P, L->r, lam, lasso_l1w(L, c), gmax);
}

/* Coordinate descent sweeps over the working set, at most limit of them:
 * until the restricted gap is at most tol_abs or the iterates stop moving.
 * Returns the sweeps done. */
static size_t lasso_cd(l1_lasso *L, double lam, double *c, double tol_abs, double tol_rel,
                       size_t limit)
{
    size_t done = 0, since = 0;
    while (done < limit) {
        double cmax;
        double dmax = cd_sweep(L, lam, c, &cmax);
        done++;
        since++;
        /* a fixed point in floating point: solved to rounding */
        if (dmax <= 4 * DBL_EPSILON * cmax) break;
        if (dmax <= tol_rel * cmax || since >= L1_GAP_EVERY) {
            since = 0;
            if (lasso_gap_ws(L, lam, c) <= tol_abs) break;
        }
    }
    L->sweeps += done;
    return done;
}

typedef struct l1_key {
    double v;  /* |u_j| */
    size_t j;
} l1_key;

/* Larger |u| first; ties by the smaller index (deterministic). */
static int key_cmp(const void *a, const void *b)
{
    const l1_key *x = a, *y = b;
    if (x->v != y->v) return x->v > y->v ? -1 : 1;
    return x->j < y->j ? -1 : (x->j > y->j);
}

#define L1_FSS_SLACK (1024 * DBL_EPSILON) /* rounding of the m-term dot products */
#define L1_PROX 1.4901161193847656e-08      /* sqrt(DBL_EPSILON): proximal weight */

/* ---- the exact solve: a Cholesky factor of X_S^T X_S kept up to date ---- */

typedef struct l1_fss {
    size_t ld;       /* leading dimension of R (its capacity)                 */
    size_t ns;       /* |S|                                                   */
    size_t *S;       /* working-set positions of the support, in R's order    */
    double *th;      /* signs theta                                           */
    double *xty;     /* X_k^T yc per member                                   */
    double *R;       /* ns x ns upper triangular, row-major, R^T R = X_S^T X_S */
    int fact;        /* R is valid (else the next solve factors afresh)       */
} l1_fss;

/* Factor X_S^T X_S + delta I afresh into R: m ns^2 + ns^3 / 3 flops.
 * Returns RFX_ENUMERIC (no message) when it is not positive definite. */
static rfx_status fss_factor(const l1_lasso *L, l1_fss *F, double *Xp, double delta)
{
    const size_t m = L->P->m, n = F->ns, ld = F->ld;
    for (size_t t = 0; t < n; t++) memcpy(Xp + t * m, L->X + F->S[t] * m, m * sizeof *Xp);
    int nn = (int)n, lda = (int)ld, info = 0;
    RFX__SERIAL(cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, nn, (int)m, 1.0, Xp,
                            (int)m, 0.0, F->R, lda))
    for (size_t t = 0; t < n; t++) F->R[t * ld + t] += delta;
    /* row-major upper = column-major lower: dpotrf "L" gives R^T R */
    RFX__SERIAL(dpotrf_("L", &nn, F->R, &lda, &info, 1))
    for (size_t i = 1; i < n; i++) memset(F->R + i * ld, 0, i * sizeof *F->R);
    if (info != 0) return RFX_ENUMERIC;
    return RFX_OK;
}

/* Append working-set column k to S (sign th): R grows by a row and column,
 * R^T v = X_S^T x_k, diagonal sqrt(|x_k|^2 - |v|^2): m ns + ns^2 flops.
 * A column (nearly) in the span of S leaves R invalid. */
static void fss_append(const l1_lasso *L, l1_fss *F, size_t k, double th, double *v)
{
    const size_t m = L->P->m, n = F->ns, ld = F->ld;
    const double *x = L->X + k * m;
    F->S[n] = k;
    F->th[n] = th;
    F->xty[n] = rfx__dot(x, L->P->yc, m);
    F->ns = n + 1;
    if (!F->fact) return;
    double vv = 0;
    for (size_t t = 0; t < n; t++) {
        double a = rfx__dot(L->X + F->S[t] * m, x, m);
        for (size_t q = 0; q < t; q++) a -= F->R[q * ld + t] * v[q];
        v[t] = a / F->R[t * ld + t];
        vv += v[t] * v[t];
    }
    double d2 = L->nrm2[k] - vv;
    if (!(d2 > L1_FSS_SLACK * L->nrm2[k])) {
        F->fact = 0;
        return;
    }
    for (size_t t = 0; t < n; t++) F->R[t * ld + n] = v[t];
    memset(F->R + n * ld, 0, n * sizeof *F->R);
    F->R[n * ld + n] = sqrt(d2);
}

/* Remove member i of S: delete column i of R and restore the triangle by
 * Givens rotations of rows i.., n - 1 (Golub & Van Loan, 12.5): O(ns^2). */
static void fss_remove(l1_fss *F, size_t i)
{
    const size_t n = F->ns, ld = F->ld;
    memmove(F->S + i, F->S + i + 1, (n - 1 - i) * sizeof *F->S);
    memmove(F->th + i, F->th + i + 1, (n - 1 - i) * sizeof *F->th);
    memmove(F->xty + i, F->xty + i + 1, (n - 1 - i) * sizeof *F->xty);
    F->ns = n - 1;
    if (!F->fact) return;
    double *R = F->R;
    for (size_t r = 0; r < n; r++)
        memmove(R + r * ld + i, R + r * ld + i + 1, (n - 1 - i) * sizeof *R);
    for (size_t j = i; j + 1 < n; j++) {
        double a = R[j * ld + j], b = R[(j + 1) * ld + j], h = hypot(a, b);
        double cs = a / h, sn = b / h;
        for (size_t q = j; q + 1 < n; q++) {
            double x = R[j * ld + q], y = R[(j + 1) * ld + q];
            R[j * ld + q] = cs * x + sn * y;
            R[(j + 1) * ld + q] = -sn * x + cs * y;
        }
        R[(j + 1) * ld + j] = 0;
    }
}

/* x <- (R^T R)^-1 x by two triangular solves: 2 ns^2 flops. */
static void fss_solve(const l1_fss *F, double *x)
{
    const size_t n = F->ns, ld = F->ld;
    const double *R = F->R;
    for (size_t t = 0; t < n; t++) {
        double a = x[t];
        for (size_t q = 0; q < t; q++) a -= R[q * ld + t] * x[q];
        x[t] = a / R[t * ld + t];
    }
    for (size_t t = n; t-- > 0;) {
        double a = x[t];
        for (size_t q = t + 1; q < n; q++) a -= R[t * ld + q] * x[q];
        x[t] = a / R[t * ld + t];
    }
}

/* The exact solve on the working set W: the feature-sign search of Lee,
 * Battle, Raina & Ng (NIPS 2006, Algorithm 1), an active-set method, warm
 * started from coordinate descent's point. With S the nonzeros and theta
 * their signs,
 *   (1) x_hat = G^-1 (X_S^T yc - lambda m (w theta)_S), G = X_S^T X_S: the
 *       minimiser of the objective on theta's orthant (G's Cholesky factor
 *       is updated as S gains and loses members, O(m |S| + |S|^2) a step);
 *   (2) line search from x to x_hat over x_hat and the points where a
 *       coordinate crosses zero (the objective is exactly piecewise
 *       quadratic along the segment); crossed coordinates leave S;
 *   (3) repeat (1)-(2) until a full step, then activate the zero
 *       coordinates of W that violate |X_k^T r| <= lambda m w_k (theta_k
 *       their signs; all at once, one at a time after a batch that failed)
 *       and go to (1); stop when none does.
 * Every step lowers the objective and no sign pattern repeats, so it ends
 * in finitely many steps at the exact restricted solution (to rounding:
 * violations below L1_FSS_SLACK relative are taken as met). *ok = 0 when
 * max_steps run out, and also *singular = 1 when G is singular (dependent
 * columns) or the support would have to grow past the rank of X (m, or
 * m - 1 when centred: lambda so small that the fit interpolates); then
 * coordinate descent alone goes on. x and r are the best point reached
 * either way. */
static rfx_status lasso_fss(l1_lasso *L, double lam, double *c, size_t max_steps, size_t *steps,
                            int *ok, int *singular)
{
    l1_prob *P = L->P;
    /* the rank of the (centred) columns is at most m (m - 1) */
    const size_t rank = P->intercept ? P->m - 1 : P->m, m = P->m, nw = L->ns;
    /* room for one column past the rank (see the proximal step below) */
    const size_t cap = nw < rank + 1 ? nw : rank + 1;
    const double lm = lam * (double)m;
    *ok = 0;
    *singular = 0;
    *steps = 0;
    if (nw == 0 || cap == 0) {
        *ok = 1;
        return RFX_OK;
    }
    l1_fss F;
    memset(&F, 0, sizeof F);
    F.ld = cap;
    double *Xp = NULL, *xh = NULL, *d = NULL, *Xd = NULL, *tc = NULL, *gsign = NULL, *v = NULL;
    l1_key *keys = NULL;
    rfx_status st = rfx__alloc(cap, sizeof(size_t), (void **)&F.S, "l1 exact solve");
    if (!st) st = rfx__alloc(cap, sizeof(double), (void **)&F.th, "l1 exact solve");
    if (!st) st = rfx__alloc(cap, sizeof(double), (void **)&F.xty, "l1 exact solve");
    if (!st) st = rfx__alloc(cap * cap, sizeof(double), (void **)&F.R, "l1 exact solve");
    if (!st) st = rfx__alloc(cap * m, sizeof(double), (void **)&Xp, "l1 exact solve");
    if (!st) st = rfx__alloc(cap, sizeof(double), (void **)&xh, "l1 exact solve");
    if (!st) st = rfx__alloc(cap, sizeof(double), (void **)&d, "l1 exact solve");
    if (!st) st = rfx__alloc(cap, sizeof(double), (void **)&v, "l1 exact solve");
    if (!st) st = rfx__alloc(cap + 1, sizeof(double), (void **)&tc, "l1 exact solve");
    if (!st) st = rfx__alloc(m, sizeof(double), (void **)&Xd, "l1 exact solve");
    if (!st) st = rfx__alloc(nw, sizeof(l1_key), (void **)&keys, "l1 exact solve");
    if (!st) st = rfx__alloc(nw, sizeof(double), (void **)&gsign, "l1 exact solve");
    if (st) goto done;
    /* S = the nonzeros; more than the rank (coordinate descent far from a
     * small-lambda solution) are cut to the largest (any start will do: the
     * search converges from anywhere, and fastest from near) */
    size_t nz = 0;
    for (size_t k = 0; k < nw; k++)
        if (c[L->idx[k]] != 0) L->scratch[nz++] = k;
    if (nz > rank) {
        for (size_t t = 0; t < nz; t++) {
            keys[t].v = fabs(c[L->idx[L->scratch[t]]]);
            keys[t].j = L->scratch[t];
        }
        qsort(keys, nz, sizeof *keys, key_cmp);
        for (size_t t = rank; t < nz; t++) {
            size_t k = keys[t].j, j = L->idx[k];
            axpy(c[j], L->X + k * m, L->r, m);
            c[j] = 0;
        }
    }
    for (size_t k = 0; k < nw; k++) {
        double x = c[L->idx[k]];
        if (x != 0) fss_append(L, &F, k, x > 0 ? 1.0 : -1.0, v); /* no R yet */
    }
    /* nact: members just activated (the last nact of S, at 0); single:
     * activate one at a time (after a batch that went all the wrong way) */
    int need_solve = F.ns > 0, prox_full = 0, single = 0;
    size_t nact = 0;
    while (*steps < max_steps) {
        double best_t = 0, best_f = 0;
        int prox = 0;
        const size_t ns = F.ns;
        if (need_solve) {
            (*steps)++;
            /* G is singular past the rank (or with dependent columns): then
             * a proximal step, x_hat = argmin of theta's quadratic +
             * (delta / 2m) |x - x_now|^2, delta = L1_PROX mean(diag G). It
             * still descends; along the null space of X_S it moves far, so
             * the line search stops at the first coordinate to reach zero,
             * which leaves S: a basis exchange, as in the simplex method. */
            prox = ns > rank;
            if (!prox && !F.fact) {
                st = fss_factor(L, &F, Xp, 0.0);
                if (st == RFX_ENUMERIC) {
                    st = RFX_OK;
                    prox = 1;
                } else if (st) {
                    goto done;
                } else {
                    F.fact = 1;
                }
            }
            double delta = 0;
            if (prox) {
                double tr = 0;
                for (size_t t = 0; t < ns; t++) tr += L->nrm2[F.S[t]];
                delta = L1_PROX * tr / (double)ns;
                F.fact = 0; /* R holds the proximal factor for this solve only */
                st = fss_factor(L, &F, Xp, delta);
                if (st == RFX_ENUMERIC) { /* hopeless: coordinate descent alone */
                    st = RFX_OK;
                    *singular = 1;
                    goto done;
                }
                if (st) goto done;
            }
            for (size_t t = 0; t < ns; t++)
                xh[t] = F.xty[t] - lm * wt(P, L->idx[F.S[t]]) * F.th[t] +
                        delta * c[L->idx[F.S[t]]];
            fss_solve(&F, xh);
            /* activated members that x_hat takes against their sign: along
             * the segment the objective is not theta's quadratic there, so
             * drop them (they stay 0) and solve again; a batch that loses
             * all its members is retried one at a time */
            if (nact > 1) {
                size_t drop = 0;
                for (size_t t = ns; t-- > ns - nact;) {
                    if (!(xh[t] * F.th[t] > 0)) {
                        fss_remove(&F, t);
                        drop++;
                    }
                }
                if (drop) {
                    nact -= drop;
                    if (nact == 0) {
                        single = 1;
                        need_solve = 0;
                    }
                    continue;
                }
            }
            const int wrong = nact == 1 && xh[ns - 1] * F.th[ns - 1] <= 0;
            /* the segment x + t d, t in [0, 1]: smooth part
             * (1/2m)(|r|^2 - 2 t r.Xd + t^2 |Xd|^2), l1 part sum w |x + t d| */
            memset(Xd, 0, m * sizeof *Xd);
            for (size_t t = 0; t < ns; t++) {
                d[t] = xh[t] - c[L->idx[F.S[t]]];
                axpy(d[t], L->X + F.S[t] * m, Xd, m);
            }
            /* crossings: members of S that x_hat takes through zero */
            size_t nc = 0;
            double t_first = 1.0;
            for (size_t t = 0; t < ns; t++) {
                double x = c[L->idx[F.S[t]]];
                if (d[t] != 0 && x != 0) {
                    double z = -x / d[t];
                    if (z > 0 && z < 1) {
                        tc[nc++] = z;
                        if (z < t_first) t_first = z;
                    }
                }
            }
            if (nc == 0 && !wrong) {
                /* x_hat is on theta's orthant, where the objective is the
                 * quadratic it minimises: a full step descends (comparing
                 * objective values could not see differences below
                 * sqrt(eps) in x) */
                best_t = 1.0;
            } else {
                tc[nc++] = 1.0;
                const double rr = rfx__dot(L->r, L->r, m), rx = rfx__dot(L->r, Xd, m),
                             xx = rfx__dot(Xd, Xd, m);
                double f0 = rr / (2.0 * m);
                for (size_t t = 0; t < ns; t++)
                    f0 += lam * wt(P, L->idx[F.S[t]]) * fabs(c[L->idx[F.S[t]]]);
                for (size_t q = 0; q < nc; q++) {
                    double z = tc[q], f = (rr - 2 * z * rx + z * z * xx) / (2.0 * m);
                    for (size_t t = 0; t < ns; t++)
                        f += lam * wt(P, L->idx[F.S[t]]) * fabs(c[L->idx[F.S[t]]] + z * d[t]);
                    if (f < f0 && (best_t == 0 || f < best_f)) {
                        best_t = z;
                        best_f = f;
                    }
                }
                if (best_t == 0) {
                    /* no candidate is lower to rounding. After an activation
                     * that heads the wrong way, the violation was rounding:
                     * done. Else the first crossing descends (the objective
                     * is theta's quadratic up to it). */
                    if (wrong) {
                        *ok = 1;
                        goto done;
                    }
                    best_t = t_first;
                }
            }
        }
        nact = 0;
        if (need_solve) {
            single = 0;
            axpy(-best_t, Xd, L->r, m);
            for (size_t t = 0; t < ns; t++) {
                size_t j = L->idx[F.S[t]];
                double x = c[j], val = best_t == 1.0 ? xh[t] : x + best_t * d[t];
                /* the member(s) whose crossing point this is become 0 */
                if (best_t < 1.0 && x != 0 && d[t] != 0 && -x / d[t] == best_t) val = 0;
                c[j] = val;
            }
            for (size_t t = ns; t-- > 0;) {
                double x = c[L->idx[F.S[t]]];
                if (x == 0) fss_remove(&F, t);
                else F.th[t] = x > 0 ? 1.0 : -1.0;
            }
            /* full proximal steps that never reach a crossing: the columns
             * are dependent, not just too many */
            if (prox && best_t == 1.0) {
                if (++prox_full > 3) {
                    *singular = 1;
                    goto done;
                }
            } else {
                prox_full = 0;
            }
            /* a proximal step is not the orthant's minimiser: solve again */
            need_solve = best_t < 1.0 || prox;
            if (need_solve) continue;
        }
        /* activation: the zero coordinates of W that violate
         * |X_k^T r| <= lambda m w_k, largest first */
        size_t na = 0;
        for (size_t k = 0; k < nw; k++) {
            if (L->nrm2[k] == 0 || c[L->idx[k]] != 0) continue;
            double gk = rfx__dot(L->X + k * m, L->r, m), t = lm * wt(P, L->idx[k]);
            double vio = (fabs(gk) - t) / t;
            if (vio > L1_FSS_SLACK) {
                keys[na].v = vio;
                keys[na].j = k;
                gsign[k] = gk > 0 ? 1.0 : -1.0;
                na++;
            }
        }
        if (na == 0) {
            *ok = 1;
            goto done;
        }
        if (F.ns >= cap) { /* past the rank already: give up */
            *singular = 1;
            goto done;
        }
        qsort(keys, na, sizeof *keys, key_cmp);
        size_t take = single ? 1 : na;
        if (take > cap - F.ns) take = cap - F.ns;
        for (size_t q = 0; q < take; q++) fss_append(L, &F, keys[q].j, gsign[keys[q].j], v);
        nact = take;
        need_solve = 1;
    }
done:
    free(F.S);
    free(F.th);
    free(F.xty);
    free(F.R);
    free(Xp);
    free(xh);
    free(d);
    free(v);
    free(tc);
    free(Xd);
    free(keys);
    free(gsign);
    return st;
}

typedef struct l1_solve {
    double tol_abs;   /* gap goal: tol P(0)                                    */
    double tol_final; /* gap goal of the final answer (<= tol_abs)            */
    double tol_rel;   /* relative change that triggers a gap check           */
    size_t max_iter;  /* sweeps (and exact-solve steps) per solve             */
    int polish;
    /* results */
    double gap;       /* absolute duality gap                                */
    int converged;    /* gap <= tol_abs                                       */
    int polished;     /* the working set was solved exactly                   */
} l1_solve;

/* Coordinate descent sweeps before each exact solve on the working set:
 * enough to find most of the support from a cold start; from a warm start
 * the sweeps stop earlier, on the gap. Along a path the exact solve does
 * the rest faster than more sweeps would: 20 took 8% less time than 50 on
 * SRFE's G-function paths (d = 20, m = 800), with the same solutions. */
#define L1_CD_ROUND 20

/* Solve the lasso at lam, warm-starting from c (zero outside the working
 * set; L->r and L->g belong to c, the solution at lam_prev). Rounds of:
 * coordinate descent on the working set (then the exact solve, with
 * polish), one full pass g = A_c^T r for the duality gap, and the columns
 * violating |g_j| <= lambda m w_j added to the set; until the gap is at
 * most tol_final, nothing violates, or the budget of max_iter is spent. */
static rfx_status lasso_solve_at(l1_lasso *L, double lam, double lam_prev, double *c,
                                 l1_solve *o)
{
    l1_prob *P = L->P;
    o->gap = 0;
    o->converged = 1;
    o->polished = 0;
    if (lam >= L->lam_max) { /* c = 0 satisfies |A_c^T yc| <= lambda m w exactly */
        for (size_t k = 0; k < L->ns; k++) c[L->idx[k]] = 0;
        memcpy(L->r, P->yc, P->m * sizeof *L->r);
        memcpy(L->g, L->g0, P->N * sizeof *L->g);
        o->polished = 1;
        return RFX_OK;
    }
    /* sequential strong rule: columns with |g_j| > (2 lam - lam_prev) m w_j;
     * for a long step down (lam < lam_prev / 2) it would take every column,
     * so then only the present violators, |g_j| > lam m w_j (the full passes
     * add the rest) */
    const double thr0 = fmax(2 * lam - lam_prev, lam) * (double)P->m, thr = lam * (double)P->m;
    size_t na = 0;
    for (size_t j = 0; j < P->N; j++)
        if (L->pos[j] == SIZE_MAX && (c[j] != 0 || fabs(L->g[j]) > thr0 * wt(P, j)))
            L->scratch[na++] = j;
    RFX__TRY(lasso_add(L, L->scratch, na));
    size_t budget = o->max_iter;
    int exact = o->polish;
    double gap = INFINITY;
    for (;;) {
        /* with an exact solve to follow, a short round of coordinate
         * descent to tol; without, coordinate descent to tol_final */
        const int cd_only = !exact;
        size_t lim = cd_only || budget <= L1_CD_ROUND ? budget : L1_CD_ROUND;
        budget -= lasso_cd(L, lam, c, cd_only ? o->tol_final : o->tol_abs, o->tol_rel, lim);
        o->polished = 0;
        if (exact) {
            size_t steps;
            int ok, singular;
            RFX__TRY(lasso_fss(L, lam, c, budget, &steps, &ok, &singular));
            budget -= steps;
            L->sweeps += steps;
            o->polished = ok;
            if (singular) exact = 0; /* coordinate descent alone from here */
        }
        prob_At(P, L->r, L->g);
        L->passes++;
        gap = lasso_gap(P, L->r, lam, lasso_l1w(L, c), max_ratio(P, L->g));
        size_t nv = 0;
        for (size_t j = 0; j < P->N; j++)
            if (L->pos[j] == SIZE_MAX && fabs(L->g[j]) > thr * wt(P, j)) L->scratch[nv++] = j;
        if (budget == 0) break;
        /* within tol; with polish, also exact (no violators left) */
        if (gap <= o->tol_final && !(o->polished && nv > 0)) break;
        /* nothing to add and the working set solved: exactly, or by
         * coordinate descent as far as it goes */
        if (nv == 0 && (o->polished || cd_only)) break;
        RFX__TRY(lasso_add(L, L->scratch, nv));
    }
    o->gap = gap;
    o->converged = gap <= o->tol_abs;
    return RFX_OK;
}

/* Continuation: a solve far below the last lambda first walks down to it
 * in steps of this ratio (ten per decade), each a short coordinate descent
 * round from the previous point. The strong rule then keeps the working set
 * near the support (from c = 0 straight to a small lambda it would take
 * every correlated column), and the final solve starts close. */
#define L1_STEP_RATIO 0.7943282347242815 /* 10^(-1/10) */

static rfx_status lasso_solve(l1_lasso *L, double lam, double lam_prev, double *c, l1_solve *o)
{
    if (lam_prev > L->lam_max) lam_prev = L->lam_max;
    if (lam < lam_prev * L1_STEP_RATIO && lam < L->lam_max) {
        l1_solve q = *o;
        q.polish = 0;
        q.max_iter = L1_CD_ROUND;
        q.tol_final = q.tol_abs;
        for (double l = lam_prev * L1_STEP_RATIO; l > lam / L1_STEP_RATIO; l *= L1_STEP_RATIO) {
            RFX__TRY(lasso_solve_at(L, l, lam_prev, c, &q));
            lam_prev = l;
        }
    }
    return lasso_solve_at(L, lam, lam_prev, c, o);
}

/* The default grid: n values log-spaced from lam_max down to ratio lam_max;
 * ratio 0 is glmnet's choice (Friedman et al. 2010): 1e-2 when m < N (the
 * lasso nears interpolation at small lambda, where fits are slow and
 * useless), 1e-4 otherwise. */
static void make_grid(const rfx_l1_params *p, size_t m, size_t N, double lam_max, double *out)
{
    size_t n = p->n_lambdas;
    if (p->lambdas) {
        memcpy(out, p->lambdas, n * sizeof *out);
        return;
    }
    double ratio = p->lambda_min_ratio > 0 ? p->lambda_min_ratio : (m < N ? 1e-2 : 1e-4);
    for (size_t k = 0; k < n; k++)
        out[k] = n == 1 ? lam_max : lam_max * pow(ratio, (double)k / (double)(n - 1));
}

static void solve_opts(const rfx_l1_params *p, const l1_prob *P, int polish, l1_solve *o)
{
    memset(o, 0, sizeof *o);
    o->tol_abs = p->tol * P->yy / (2.0 * (double)P->m);
    o->tol_final = o->tol_abs;
    o->tol_rel = p->tol;
    o->max_iter = p->max_iter;
    o->polish = polish;
}

/* Fill a report from a lasso state at c. */
static void lasso_report(const l1_lasso *L, const double *c, const l1_solve *o, double lam,
                         rfx_l1_report *rep)
{
    const l1_prob *P = L->P;
    size_t nnz = 0;
    double l1 = 0;
    for (size_t k = 0; k < L->ns; k++) {
        double v = c[L->idx[k]];
        if (v != 0) {
            nnz++;
            l1 += fabs(v);
        }
    }
    double p0 = P->yy / (2.0 * (double)P->m);
    rep->iterations = L->sweeps;
    rep->passes = L->passes;
    rep->lambda = lam;
    rep->residual_norm = sqrt(rfx__dot(L->r, L->r, P->m));
    rep->l1_norm = l1;
    rep->duality_gap = p0 > 0 ? o->gap / p0 : 0.0;
    rep->n_nonzero = nnz;
    rep->converged = o->converged;
    rep->polished = o->polished;
}

static void report_init(rfx_l1_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->lambda = NAN;
    rep->sigma = NAN;
    rep->duality_gap = NAN;
    rep->cv_mse = NAN;
    rep->constraint_met = 1;
}

/* The lasso path over grid[0..n) on problem P: coefficients into C rows
 * (when C.data), intercepts (when not NULL); held-out errors into mse
 * (when not NULL; P's held-out rows) . */
/* The early stop of a cross-validation path (rfx_l1_params.cv_stop_factor):
 * this many grid points in a row above factor times the fold's best. */
#define L1_CV_PATIENCE 5

/* The lasso path over grid[0..n): optionally the coefficients (rows of C),
 * intercepts, the held-out MSE of P's held-out rows (mse), and the GCV score on
 * the fitted rows (gcv, with cbest receiving the coefficients of its
 * smallest value). With p->cv_stop_factor the walk stops once the score
 * (mse, else gcv) has risen past its minimum (the rest are INFINITY). */
static rfx_status lasso_path(const rfx_l1_params *p, l1_prob *P, const double *grid, size_t n,
                             int polish, rfx_mat C, double *intercepts, double *mse,
                             double *gcv, double *cbest, const char *stage, double frac0,
                             double frac1)
{
    double mse_min = INFINITY;
    size_t above = 0;
    l1_lasso L;
    double *c = NULL;
    RFX__TRY(lasso_init(&L, P));
    rfx_status st = rfx__calloc(P->N, sizeof(double), (void **)&c, "l1: coefficients");
    if (st) {
        lasso_free(&L);
        return st;
    }
    l1_solve o;
    solve_opts(p, P, polish, &o);
    double lam_prev = L.lam_max;
    for (size_t t = 0; t < n && !st; t++) {
        st = lasso_solve(&L, grid[t], lam_prev, c, &o);
        if (st) break;
        lam_prev = grid[t];
        double b = prob_intercept(P, c);
        if (C.data) memcpy(C.data + t * C.stride, c, P->N * sizeof *c);
        if (intercepts) intercepts[t] = b;
        if (mse) {
            /* held-out rows: prediction b + sum over the support */
            size_t nz = 0;
            for (size_t k = 0; k < L.ns; k++)
                if (c[L.idx[k]] != 0) L.scratch[nz++] = L.idx[k];
            double s = 0, wsum = 0;
            for (size_t h = 0; h < P->nh; h++) {
                const size_t i = P->hrows[h];
                const double *a = P->A.data + i * P->A.stride;
                double f = b;
                for (size_t q = 0; q < nz; q++) f += a[L.scratch[q]] * c[L.scratch[q]];
                /* weighted: the weighted mean over the held-out rows */
                s += (P->wall ? P->wall[i] : 1.0) * (P->y[i] - f) * (P->y[i] - f);
                wsum += P->wall ? P->wall[i] : 1.0;
            }
            mse[t] = P->nh ? s / wsum : 0.0;
        }
        if (gcv) {
            /* GCV with the lasso's degrees of freedom, the nonzeros (Zou,
             * Hastie & Tibshirani 2007), plus the intercept */
            size_t df = P->intercept ? 1 : 0;
            for (size_t k = 0; k < L.ns; k++) df += c[L.idx[k]] != 0;
            double rss = rfx__dot(L.r, L.r, P->m), slack = 1.0 - (double)df / (double)P->m;
            gcv[t] = df < P->m ? rss / (double)P->m / (slack * slack) : INFINITY;
            if (cbest && gcv[t] < mse_min) memcpy(cbest, c, P->N * sizeof *c);
        }
        double score = mse ? mse[t] : (gcv ? gcv[t] : NAN);
        if (score < mse_min) mse_min = score;
        above = p->cv_stop_factor > 0 && score > p->cv_stop_factor * mse_min ? above + 1 : 0;
        if (above >= L1_CV_PATIENCE) { /* the score is past its minimum: stop */
            for (size_t u = t + 1; u < n; u++) {
                if (mse) mse[u] = INFINITY;
                if (gcv) gcv[u] = INFINITY;
            }
            break;
        }
        if (report_progress(p, stage, frac0 + (frac1 - frac0) * (double)(t + 1) / (double)n))
            st = cancelled(stage);
    }
    free(c);
    lasso_free(&L);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Public lasso entry points                                                 */
/* ------------------------------------------------------------------------ */

rfx_status rfx_l1_lambda_max(const rfx_l1_params *params, rfx_cmat A, const double *y, double *out)
{
    RFX__TRY(check_data(A, y));
    RFX__TRY(check_params(params, A.rows, A.cols, NEED_LAMBDA_MAX));
    if (!out) return rfx__error(RFX_EINVAL, "l1 lambda_max: out is NULL");
    l1_prob P;
    RFX__TRY(prob_init(&P, A, y, 0, 0, params->fit_intercept, params->weights,
                       params->sample_weight, rfx__threads(params->n_threads)));
    double *g;
    rfx_status st = rfx__alloc(P.N, sizeof(double), (void **)&g, "l1: correlations");
    if (!st) {
        prob_At(&P, P.yc, g);
        *out = max_ratio(&P, g) / (double)P.m;
        free(g);
    }
    prob_free(&P);
    return st;
}

rfx_status rfx_l1_path(const rfx_l1_params *params, rfx_cmat A, const double *y, double *lambdas,
                       rfx_mat C, double *intercepts)
{
    RFX__TRY(check_data(A, y));
    RFX__TRY(check_params(params, A.rows, A.cols, NEED_PATH));
    RFX__TRY(rfx__check_mat(C, "l1 path: C"));
    const size_t n = params->n_lambdas;
    if (!lambdas) return rfx__error(RFX_EINVAL, "l1 path: lambdas is NULL");
    if (C.rows != n || C.cols != A.cols)
        return rfx__error(RFX_EDIM, "l1 path: C is %zu x %zu, expected n_lambdas x N = %zu x %zu",
                          C.rows, C.cols, n, A.cols);
    if (params->fit_intercept && !intercepts)
        return rfx__error(RFX_EINVAL, "l1 path: intercepts is NULL with fit_intercept");
    l1_prob P;
    RFX__TRY(prob_init(&P, A, y, 0, 0, params->fit_intercept, params->weights,
                       params->sample_weight, rfx__threads(params->n_threads)));
    double *grid = NULL, *Cw = NULL, *bw = NULL;
    size_t cnt = 0;
    rfx_status st = rfx__mul(n, A.cols, &cnt, "l1 path: C");
    if (!st) st = rfx__alloc(n, sizeof(double), (void **)&grid, "l1 path: grid");
    if (!st) st = rfx__alloc(cnt, sizeof(double), (void **)&Cw, "l1 path: coefficients");
    if (!st) st = rfx__alloc(n, sizeof(double), (void **)&bw, "l1 path: intercepts");
    if (!st) {
        double *g = Cw; /* A_c^T yc for lambda_max, before Cw is used */
        prob_At(&P, P.yc, g);
        make_grid(params, P.m, P.N, max_ratio(&P, g) / (double)P.m, grid);
        st = lasso_path(params, &P, grid, n, params->polish, rfx_mat_of(Cw, n, A.cols), bw, NULL,
                        NULL, NULL, "lasso path", 0.0, 1.0);
    }
    if (!st) { /* outputs only on success */
        memcpy(lambdas, grid, n * sizeof *grid);
        for (size_t t = 0; t < n; t++)
            memcpy(C.data + t * C.stride, Cw + t * A.cols, A.cols * sizeof *Cw);
        if (intercepts) memcpy(intercepts, bw, n * sizeof *bw);
    }
    free(grid);
    free(Cw);
    free(bw);
    prob_free(&P);
    return st;
}

/* The cross-validation curve: grid (n) and mean held-out MSE (n). */
/* The folds of a cross-validation on nt threads, one fold per thread at a
 * time, each path single-threaded: a fold's numbers do not depend on which
 * thread ran it, and cv sums the folds in their order, so the curve is the
 * serial one bit for bit. Progress is reported (by whichever thread) as
 * folds finish; a cancellation stops the paths still running. Errors raised
 * on a worker are re-raised on the calling thread with their message. */
typedef struct l1_cv_share {
    const rfx_l1_params *user; /* the caller's params (its progress callback) */
    int cancel;                /* set once the callback asked to stop         */
} l1_cv_share;

static int cv_cancel_check(void *user, const char *stage, double frac)
{
    (void)stage;
    (void)frac;
    const l1_cv_share *sh = user;
    int c;
#pragma omp atomic read
    c = sh->cancel;
    return c;
}

static rfx_status cv_folds_parallel(const rfx_l1_params *p, rfx_cmat A, const double *y,
                                    const double *grid, double *cv, int nt)
{
    const size_t n = p->n_lambdas, k = p->n_folds;
    double *mse = NULL;
    RFX__TRY(rfx__alloc(n * k, sizeof(double), (void **)&mse, "l1 cv: fold errors"));
    l1_cv_share sh = { p, 0 };
    rfx_l1_params q = *p; /* the workers' copy: cancellation only */
    q.progress = cv_cancel_check;
    q.progress_user = &sh;
    rfx_status st = RFX_OK;
    char msg[512] = "";
    size_t done = 0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (size_t f = 0; f < k; f++) {
        RFX__SERIAL_BLAS();
        int skip;
#pragma omp atomic read
        skip = sh.cancel;
        if (skip) continue;
        l1_prob P;
        rfx_status s = prob_init(&P, A, y, k, f, q.fit_intercept, q.weights, q.sample_weight, 1);
        if (!s) {
            s = lasso_path(&q, &P, grid, n, q.polish, rfx_mat_none(), NULL, mse + f * n, NULL,
                           NULL, "cross-validation", 0.0, 1.0);
            prob_free(&P);
        }
#pragma omp critical
        {
            if (s && !st) {
                st = s;
                snprintf(msg, sizeof msg, "%s", rfx_last_error());
            }
            if (s) sh.cancel = 1;
            done++;
            if (!s && !sh.cancel && p->progress &&
                p->progress(p->progress_user, "cross-validation", (double)done / (double)k)) {
                sh.cancel = 1;
                if (!st) {
                    st = RFX_ECANCELLED;
                    snprintf(msg, sizeof msg, "l1: cross-validation cancelled by the progress "
                                              "callback");
                }
            }
        }
    }
    if (!st && sh.cancel) {
        st = RFX_ECANCELLED;
        snprintf(msg, sizeof msg, "l1: cross-validation cancelled by the progress callback");
    }
    for (size_t f = 0; f < k && !st; f++)
        for (size_t t = 0; t < n; t++) cv[t] += mse[f * n + t] / (double)k;
    free(mse);
    if (st) return rfx__error(st, "%s", msg);
    return RFX_OK;
}

static rfx_status cv_curve(const rfx_l1_params *p, rfx_cmat A, const double *y, double *grid,
                           double *cv)
{
    const size_t n = p->n_lambdas, k = p->n_folds;
    const int nt = rfx__threads(p->n_threads);
    double *mse = NULL;
    RFX__TRY(rfx__alloc(n, sizeof(double), (void **)&mse, "l1 cv: errors"));
    l1_prob P;
    rfx_status st = prob_init(&P, A, y, 0, 0, p->fit_intercept, p->weights, p->sample_weight, nt);
    if (st) {
        free(mse);
        return st;
    }
    double *g = NULL;
    st = rfx__alloc(P.N, sizeof(double), (void **)&g, "l1 cv: correlations");
    if (!st) {
        prob_At(&P, P.yc, g);
        make_grid(p, P.m, P.N, max_ratio(&P, g) / (double)P.m, grid);
        free(g);
    }
    prob_free(&P);
    for (size_t t = 0; t < n; t++) cv[t] = 0;
    if (nt <= 1) {
        for (size_t f = 0; f < k && !st; f++) {
            st = prob_init(&P, A, y, k, f, p->fit_intercept, p->weights, p->sample_weight, nt);
            if (st) break;
            st = lasso_path(p, &P, grid, n, p->polish, rfx_mat_none(), NULL, mse, NULL, NULL,
                            "cross-validation", (double)f / (double)k,
                            (double)(f + 1) / (double)k);
            prob_free(&P);
            for (size_t t = 0; t < n && !st; t++) cv[t] += mse[t] / (double)k;
        }
        free(mse);
        return st;
    }
    free(mse);
    return cv_folds_parallel(p, A, y, grid, cv, nt);
}

static size_t argmin(const double *v, size_t n)
{
    size_t b = 0;
    for (size_t t = 1; t < n; t++)
        if (v[t] < v[b]) b = t;
    return b;
}

rfx_status rfx_l1_cv(const rfx_l1_params *params, rfx_cmat A, const double *y, double *lambdas,
                     double *cv_mse, size_t *best)
{
    RFX__TRY(check_data(A, y));
    RFX__TRY(check_params(params, A.rows, A.cols, NEED_CV));
    if (!lambdas || !cv_mse) return rfx__error(RFX_EINVAL, "l1 cv: lambdas or cv_mse is NULL");
    const size_t n = params->n_lambdas;
    double *grid = NULL, *cv = NULL;
    rfx_status st = rfx__alloc(n, sizeof(double), (void **)&grid, "l1 cv: grid");
    if (!st) st = rfx__alloc(n, sizeof(double), (void **)&cv, "l1 cv: errors");
    if (!st) st = cv_curve(params, A, y, grid, cv);
    if (!st) {
        memcpy(lambdas, grid, n * sizeof *grid);
        memcpy(cv_mse, cv, n * sizeof *cv);
        if (best) *best = argmin(cv, n);
    }
    free(grid);
    free(cv);
    return st;
}

/* Start L from the coefficients c instead of 0: their columns join the
 * working set, the residual and the correlations follow. */
static rfx_status lasso_warm(l1_lasso *L, const double *c)
{
    l1_prob *P = L->P;
    size_t nz = 0;
    for (size_t j = 0; j < P->N; j++)
        if (c[j] != 0 && L->pos[j] == SIZE_MAX) L->scratch[nz++] = j;
    RFX__TRY(lasso_add(L, L->scratch, nz));
    for (size_t k = 0; k < L->ns; k++) {
        double cj = c[L->idx[k]];
        if (cj != 0) axpy(-cj, L->X + k * P->m, L->r, P->m);
    }
    prob_At(P, L->r, L->g);
    L->passes++;
    return RFX_OK;
}

/* RFX_SELECT_GCV: the path on all rows over the grid, scored by
 * GCV(lambda) = (|r|^2 / m) / (1 - df / m)^2 with df the nonzeros plus the
 * intercept; c receives the coefficients at the smallest score. The walk
 * always stops once the score has risen past its minimum (cv_stop_factor,
 * or L1_GCV_STOP when that is 0): with N > m the lasso nears interpolation
 * at small lambda, where |r|^2 and (1 - df / m)^2 both go to 0 and GCV
 * falls again though the fits are the worst (Zou et al. derive df for
 * df < m only). */
#define L1_GCV_STOP 1.5

static rfx_status gcv_select(const rfx_l1_params *p, rfx_cmat A, const double *y, double *c,
                             double *lam, double *score)
{
    const size_t n = p->n_lambdas;
    const int nt = rfx__threads(p->n_threads);
    double *grid = NULL, *gcv = NULL, *g = NULL;
    rfx_status st = rfx__alloc(n, sizeof(double), (void **)&grid, "l1 gcv: grid");
    if (!st) st = rfx__alloc(n, sizeof(double), (void **)&gcv, "l1 gcv: scores");
    if (!st) st = rfx__alloc(A.cols, sizeof(double), (void **)&g, "l1 gcv: correlations");
    l1_prob P;
    if (!st) st = prob_init(&P, A, y, 0, 0, p->fit_intercept, p->weights, p->sample_weight, nt);
    if (!st) {
        prob_At(&P, P.yc, g);
        make_grid(p, P.m, P.N, max_ratio(&P, g) / (double)P.m, grid);
        for (size_t j = 0; j < P.N; j++) c[j] = 0;
        rfx_l1_params q = *p;
        if (q.cv_stop_factor == 0) q.cv_stop_factor = L1_GCV_STOP;
        st = lasso_path(&q, &P, grid, n, q.polish, rfx_mat_none(), NULL, NULL, gcv, c,
                        "gcv path", 0.0, 1.0);
        prob_free(&P);
    }
    if (!st) {
        size_t b = argmin(gcv, n);
        *lam = grid[b];
        *score = gcv[b];
    }
    free(grid);
    free(gcv);
    free(g);
    return st;
}

/* LASSO at one lambda (or the CV choice). */
static rfx_status fit_lasso(const rfx_l1_params *p, rfx_cmat A, const double *y, double *c,
                            rfx_l1_report *rep)
{
    const int nt = rfx__threads(p->n_threads);
    double lam = p->lambda, cvm = NAN;
    double *grid = NULL, *cv = NULL;
    size_t nsteps = 0;
    rfx_status st = RFX_OK;
    if (p->select == RFX_SELECT_KFOLD) {
        const size_t n = p->n_lambdas;
        st = rfx__alloc(n, sizeof(double), (void **)&grid, "l1 cv: grid");
        if (!st) st = rfx__alloc(n, sizeof(double), (void **)&cv, "l1 cv: errors");
        if (!st) st = cv_curve(p, A, y, grid, cv);
        if (st) {
            free(grid);
            free(cv);
            return st;
        }
        size_t b = argmin(cv, n);
        lam = grid[b];
        cvm = cv[b];
        nsteps = b; /* warm starts along grid[0..b) before the final solve */
    } else if (p->select == RFX_SELECT_GCV) {
        st = gcv_select(p, A, y, c, &lam, &cvm);
        if (st) return st;
    }
    l1_prob P;
    l1_lasso L;
    st = prob_init(&P, A, y, 0, 0, p->fit_intercept, p->weights, p->sample_weight, nt);
    if (!st) {
        st = lasso_init(&L, &P);
        if (st) prob_free(&P);
    }
    if (st) {
        free(grid);
        free(cv);
        return st;
    }
    l1_solve o;
    double lam_prev = L.lam_max;
    solve_opts(p, &P, p->polish, &o);
    for (size_t t = 0; t < nsteps && !st; t++) {
        st = lasso_solve(&L, grid[t], lam_prev, c, &o);
        lam_prev = grid[t];
    }
    if (!st && p->select == RFX_SELECT_GCV) {
        /* c holds the path's solution at lam: the final solve confirms it
         * from there (the strong rule keeps its support) */
        st = lasso_warm(&L, c);
        lam_prev = lam;
    }
    if (!st) {
        o.polish = p->polish;
        st = lasso_solve(&L, lam, lam_prev, c, &o);
    }
    if (!st) {
        lasso_report(&L, c, &o, lam, rep);
        rep->intercept = prob_intercept(&P, c);
        rep->cv_mse = cvm;
    }
    lasso_free(&L);
    prob_free(&P);
    free(grid);
    free(cv);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Basis pursuit denoising                                                   */
/* ------------------------------------------------------------------------ */

/* A root step lowers lambda by at most this factor below the smallest
 * lambda known to leave |r| > sigma: every lasso solve then warm-starts
 * from a nearby solution (coordinate descent started far from a small-lambda
 * solution is slow and wanders through dense iterates). */
#define L1_BPDN_MAX_DROP 10.0

/* Root of h(u) = |r(sqrt u)|^2 - sigma_t^2 in u = lambda^2 (see the top of
 * the file) by the Illinois method on a bracket [u_lo, u_hi]: u_hi =
 * lam_max^2 (c = 0, h = |yc|^2 - sigma_t^2 > 0), u_lo = 0 with h = -sigma_t^2
 * (the residual reaches 0 as lambda -> 0 when A_c has full row rank; when it
 * does not and sigma is below the least-squares residual, the bracket
 * collapses onto 0 and the report says the constraint is not met).
 *
 * Each step solves the lasso to the user's tol, which bounds the residual
 * error: the lasso objective is (1/m)-strongly convex in A_c c, so
 * |r - r*| <= delta = sqrt(2 m gap). Only when [|r| - delta, |r| + delta]
 * meets the acceptance window [lo, hi] and delta is not already below
 * sigma_tol sigma_t / 4 is the step solved again to that accuracy. */
static rfx_status fit_bpdn(const rfx_l1_params *p, rfx_cmat A, const double *y, double *c,
                           rfx_l1_report *rep)
{
    const int nt = rfx__threads(p->n_threads);
    l1_prob P;
    l1_lasso L;
    RFX__TRY(prob_init(&P, A, y, 0, 0, p->fit_intercept, p->weights, p->sample_weight, nt));
    rfx_status st = lasso_init(&L, &P);
    if (st) {
        prob_free(&P);
        return st;
    }
    double *cf = NULL; /* the best feasible point: the lo end of the bracket */
    st = rfx__calloc(P.N, sizeof(double), (void **)&cf, "l1 bpdn: coefficients");
    if (st) goto done;
    const double m = (double)P.m, t = p->sigma_tol, ynorm = sqrt(P.yy);
    const double sigma = p->sigma > 0 ? p->sigma : p->eta * sqrt(m);
    /* accept |r| in [lo, hi]; basis pursuit (sigma = 0) as |r| <= t |yc| */
    const double lo = sigma > 0 ? sigma * (1 - t) : 0.0;
    const double hi = sigma > 0 ? sigma * (1 + t) : t * ynorm;
    const double sig_t = sigma > 0 ? sigma : 0.5 * hi;
    const double delta_ok = 0.25 * t * sig_t;
    rep->sigma = sigma;
    l1_solve o, o_fine;
    solve_opts(p, &P, p->polish, &o);
    o_fine = o;
    o_fine.tol_final = fmin(o.tol_abs, delta_ok * delta_ok / (2.0 * m));
    if (ynorm <= hi) { /* c = 0 already fits within sigma */
        o.gap = 0;
        o.converged = 1;
        o.polished = 1;
        lasso_report(&L, c, &o, L.lam_max, rep);
        rep->constraint_met = 1;
        rep->intercept = prob_intercept(&P, c);
        goto done;
    }
    double u_lo = 0, h_lo = -sig_t * sig_t;
    double u_hi = L.lam_max * L.lam_max, h_hi = P.yy - sig_t * sig_t;
    double lam_prev = L.lam_max, lam = L.lam_max;
    double phi = ynorm, phi_f = NAN, lam_f = NAN, gap_f = NAN;
    int side = 0, have_f = 0, found = 0, pol_f = 0;
    size_t it;
    l1_solve *last = &o;
    for (it = 0; it < p->max_root_iter; it++) {
        double u = (u_lo * h_hi - u_hi * h_lo) / (h_hi - h_lo);
        if (!(u > u_lo && u < u_hi)) u = 0.5 * (u_lo + u_hi);
        const double u_min = u_hi / (L1_BPDN_MAX_DROP * L1_BPDN_MAX_DROP);
        if (u < u_min) u = u_min;
        lam = sqrt(u);
        last = &o;
        st = lasso_solve(&L, lam, lam_prev, c, &o);
        if (st) goto done;
        lam_prev = lam;
        phi = sqrt(rfx__dot(L.r, L.r, P.m));
        double delta = sqrt(2.0 * m * o.gap);
        if (delta > delta_ok && phi + delta >= lo && phi - delta <= hi) {
            last = &o_fine;
            st = lasso_solve(&L, lam, lam, c, &o_fine);
            if (st) goto done;
            phi = sqrt(rfx__dot(L.r, L.r, P.m));
        }
        if (report_progress(p, "bpdn", (double)(it + 1) / (double)p->max_root_iter)) {
            st = cancelled("bpdn");
            goto done;
        }
        if (phi >= lo && phi <= hi) {
            found = 1;
            it++;
            break;
        }
        double h = phi * phi - sig_t * sig_t;
        if (h > 0) {
            u_hi = u;
            h_hi = h;
            if (side == 1) h_lo *= 0.5;
            side = 1;
        } else {
            u_lo = u;
            h_lo = h;
            if (side == -1) h_hi *= 0.5;
            side = -1;
            memcpy(cf, c, P.N * sizeof *cf);
            have_f = 1;
            phi_f = phi;
            lam_f = lam;
            gap_f = last->gap;
            pol_f = last->polished;
        }
        if (u_hi - u_lo <= DBL_EPSILON * u_hi) {
            it++;
            break;
        }
    }
    /* the BPDN multiplier: max_j |A_c,j^T r| / (m w_j), the lasso lambda
     * whose solution this is (L.g belongs to the last solve) */
    lasso_report(&L, c, last, max_ratio(&P, L.g) / m, rep);
    rep->root_iter = it;
    if (found) {
        rep->converged = last->converged;
        rep->constraint_met = 1;
    } else if (have_f) { /* the feasible end of the bracket */
        memcpy(c, cf, P.N * sizeof *c);
        size_t nnz = 0;
        double l1 = 0;
        for (size_t j = 0; j < P.N; j++)
            if (c[j] != 0) {
                nnz++;
                l1 += fabs(c[j]);
            }
        rep->n_nonzero = nnz;
        rep->l1_norm = l1;
        rep->residual_norm = phi_f;
        rep->lambda = lam_f;
        rep->duality_gap = P.yy > 0 ? gap_f / (P.yy / (2 * m)) : 0.0;
        rep->polished = pol_f;
        rep->converged = 0;
        rep->constraint_met = 1;
    } else {
        rep->converged = 0;
        rep->constraint_met = phi <= hi;
    }
    rep->intercept = prob_intercept(&P, c);
done:
    free(cf);
    lasso_free(&L);
    prob_free(&P);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Hard thresholding pursuit                                                 */
/* ------------------------------------------------------------------------ */

static int size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : (x > y);
}

/* |A_c|_F^2 over the fitted rows = sum_rows v |a|^2 - m |mu|^2 (v = 1
 * without row scales; one pass over A on the calling thread; once per
 * fit). */
static double frob2(const l1_prob *P)
{
    double s = 0;
    for (size_t k = 0; k < P->m; k++) {
        const double *a = P->A.data + P->rows[k] * P->A.stride;
        const double aa = rfx__dot(a, a, P->N);
        s += P->sw ? P->sw[k] * P->sw[k] * aa : aa;
    }
    if (P->intercept) s -= (double)P->m * rfx__dot(P->mu, P->mu, P->N);
    return s > 0 ? s : 0.0;
}

static rfx_status fit_htp(const rfx_l1_params *p, rfx_cmat A, const double *y, double *c,
                          rfx_l1_report *rep)
{
    const int nt = rfx__threads(p->n_threads);
    l1_prob P;
    RFX__TRY(prob_init(&P, A, y, 0, 0, p->fit_intercept, NULL, p->sample_weight, nt));
    const size_t m = P.m, N = P.N, s = p->sparsity;
    double *r = NULL, *g = NULL, *X = NULL, *G = NULL, *b = NULL, *cp = NULL, *rp = NULL;
    l1_key *keys = NULL;
    size_t *S = NULL, *S_old = NULL;
    size_t ms, ss;
    rfx_status st = rfx__mul(m, s, &ms, "l1 htp: A_S");
    if (!st) st = rfx__mul(s, s, &ss, "l1 htp: Gram matrix");
    if (!st) st = rfx__alloc(m, sizeof(double), (void **)&r, "l1 htp: residual");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&g, "l1 htp: correlations");
    if (!st) st = rfx__alloc(ms, sizeof(double), (void **)&X, "l1 htp: A_S");
    if (!st) st = rfx__alloc(ss, sizeof(double), (void **)&G, "l1 htp: Gram matrix");
    if (!st) st = rfx__alloc(s, sizeof(double), (void **)&b, "l1 htp: coefficients");
    if (!st) st = rfx__alloc(N, sizeof(l1_key), (void **)&keys, "l1 htp: ordering");
    if (!st) st = rfx__alloc(s, sizeof(size_t), (void **)&S, "l1 htp: support");
    if (!st) st = rfx__alloc(s, sizeof(size_t), (void **)&S_old, "l1 htp: support");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&cp, "l1 htp: coefficients");
    if (!st) st = rfx__alloc(m, sizeof(double), (void **)&rp, "l1 htp: residual");
    if (st) goto done;
    double mu_step = p->step;
    if (mu_step == 0) {
        double f2 = frob2(&P);
        mu_step = f2 > 0 ? (double)N / f2 : 1.0;
    }
    memset(c, 0, N * sizeof *c);
    memcpy(r, P.yc, m * sizeof *r);
    int converged = P.yy == 0;
    size_t it = 0, passes = 0;
    /* HARFE's objective |r|^2 + m ridge |c|^2 of the current iterate */
    double J = P.yy;
    while (it < p->max_iter && !converged) {
        prob_At(&P, r, g);
        passes++;
        for (size_t j = 0; j < N; j++) {
            keys[j].v = fabs(c[j] + mu_step * g[j]);
            keys[j].j = j;
        }
        qsort(keys, N, sizeof *keys, key_cmp);
        for (size_t q = 0; q < s; q++) S[q] = keys[q].j;
        qsort(S, s, sizeof *S, size_cmp);
        if (it > 0 && memcmp(S, S_old, s * sizeof *S) == 0) {
            converged = 1;
            break;
        }
        it++;
        /* least squares on S: (X^T X + m ridge I) b = X^T yc */
        for (size_t k = 0; k < m; k++) {
            const double *a = P.A.data + P.rows[k] * P.A.stride;
            for (size_t q = 0; q < s; q++) X[q * m + k] = a[S[q]] - P.mu[S[q]];
            if (P.sw)
                for (size_t q = 0; q < s; q++) X[q * m + k] *= P.sw[k];
        }
        RFX__SERIAL(cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)s, (int)m, 1.0, X,
                                (int)m, 0.0, G, (int)s))
        for (size_t i = 0; i < s; i++) {
            G[i * s + i] += (double)m * p->ridge;
            for (size_t j = 0; j < i; j++) G[i * s + j] = G[j * s + i];
            b[i] = rfx__dot(X + i * m, P.yc, m);
        }
        st = rfx__chol(G, s, 1, "l1 htp: A_S^T A_S + m ridge I");
        if (st) {
            if (st == RFX_ENUMERIC)
                rfx__error_prefix("l1.ridge = %g is too small for these columns", p->ridge);
            goto done;
        }
        st = rfx__chol_solve(G, s, b, 1);
        if (st) goto done;
        memcpy(cp, c, N * sizeof *c);
        memcpy(rp, r, m * sizeof *r);
        memset(c, 0, N * sizeof *c);
        for (size_t q = 0; q < s; q++) c[S[q]] = b[q];
        memcpy(r, P.yc, m * sizeof *r);
        RFX__SERIAL(cblas_dgemv(CblasRowMajor, CblasTrans, (int)s, (int)m, -1.0, X, (int)m, b, 1,
                                1.0, r, 1))
        /* HTP need not descend when A is far from the restricted isometry
         * of its theory (noise, s above the true sparsity): it may cycle
         * between supports. Stop at the first step that does not lower the
         * objective and keep the better iterate. */
        double Jn = rfx__dot(r, r, m) + (double)m * p->ridge * rfx__dot(b, b, s);
        if (!(Jn < J)) {
            memcpy(c, cp, N * sizeof *c);
            memcpy(r, rp, m * sizeof *r);
            break;
        }
        J = Jn;
        size_t *tmp = S_old;
        S_old = S;
        S = tmp;
        if (report_progress(p, "htp", (double)it / (double)p->max_iter)) {
            st = cancelled("htp");
            goto done;
        }
    }
    size_t nnz = 0;
    double l1 = 0;
    for (size_t j = 0; j < N; j++)
        if (c[j] != 0) {
            nnz++;
            l1 += fabs(c[j]);
        }
    rep->iterations = it;
    rep->passes = passes;
    rep->residual_norm = sqrt(rfx__dot(r, r, m));
    rep->l1_norm = l1;
    rep->n_nonzero = nnz;
    rep->converged = converged;
    rep->constraint_met = 1;
    rep->intercept = prob_intercept(&P, c);
done:
    free(r);
    free(g);
    free(X);
    free(G);
    free(b);
    free(keys);
    free(S);
    free(S_old);
    free(cp);
    free(rp);
    prob_free(&P);
    return st;
}

/* ------------------------------------------------------------------------ */
/* rfx_l1_fit                                                                */
/* ------------------------------------------------------------------------ */

rfx_status rfx_l1_fit(const rfx_l1_params *params, rfx_cmat A, const double *y, double *c,
                      double *intercept, rfx_l1_report *report)
{
    RFX__TRY(check_data(A, y));
    RFX__TRY(check_params(params, A.rows, A.cols, NEED_FIT));
    if (!c) return rfx__error(RFX_EINVAL, "l1 fit: c is NULL");
    if (params->fit_intercept && !intercept)
        return rfx__error(RFX_EINVAL, "l1 fit: intercept is NULL with fit_intercept");
    double *cw;
    RFX__TRY(rfx__calloc(A.cols, sizeof(double), (void **)&cw, "l1 fit: coefficients"));
    rfx_l1_report rep;
    report_init(&rep);
    rfx_status st;
    switch (params->method) {
    case RFX_L1_METHOD_LASSO: st = fit_lasso(params, A, y, cw, &rep); break;
    case RFX_L1_METHOD_BPDN: st = fit_bpdn(params, A, y, cw, &rep); break;
    default: st = fit_htp(params, A, y, cw, &rep); break;
    }
    if (!st) {
        memcpy(c, cw, A.cols * sizeof *cw);
        if (intercept) *intercept = rep.intercept;
        if (report) *report = rep;
    }
    free(cw);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Column normalisation                                                      */
/* ------------------------------------------------------------------------ */

rfx_status rfx_l1_normalize_columns(rfx_mat A, double *scales, int n_threads)
{
    RFX__TRY(rfx__check_mat(A, "l1 normalize: A"));
    if (!scales) return rfx__error(RFX_EINVAL, "l1 normalize: scales is NULL");
    if (n_threads < 0)
        return rfx__error(RFX_EINVAL, "l1 normalize: n_threads must be >= 0, got %d", n_threads);
    size_t r, c;
    if (!rfx__all_finite(rfx_cmat_from(A), &r, &c))
        return rfx__error(RFX_EPARSE, "l1 normalize: A row %zu, column %zu: %g is not finite", r,
                          c, A.data[r * A.stride + c]);
    const size_t T = (A.cols + L1_COL_TILE - 1) / L1_COL_TILE;
    const int nt = rfx__threads(n_threads);
    /* per column: the largest |a|, then sum (a / amax)^2 (no overflow), in
     * row order: the same bits for any thread count */
#pragma omp parallel for num_threads(nt) schedule(static) if (T > 1)
    for (size_t t = 0; t < T; t++) {
        size_t j0 = t * L1_COL_TILE, nj = A.cols - j0 < L1_COL_TILE ? A.cols - j0 : L1_COL_TILE;
        double *amax = scales + j0;
        for (size_t j = 0; j < nj; j++) amax[j] = 0;
        for (size_t i = 0; i < A.rows; i++) {
            const double *a = A.data + i * A.stride + j0;
            for (size_t j = 0; j < nj; j++)
                if (fabs(a[j]) > amax[j]) amax[j] = fabs(a[j]);
        }
        double acc[L1_COL_TILE];
        for (size_t j = 0; j < nj; j++) acc[j] = 0;
        for (size_t i = 0; i < A.rows; i++) {
            const double *a = A.data + i * A.stride + j0;
            for (size_t j = 0; j < nj; j++)
                if (amax[j] > 0) {
                    double v = a[j] / amax[j];
                    acc[j] += v * v;
                }
        }
        for (size_t j = 0; j < nj; j++) amax[j] = amax[j] > 0 ? amax[j] * sqrt(acc[j]) : 1.0;
        for (size_t i = 0; i < A.rows; i++) {
            double *a = A.data + i * A.stride + j0;
            for (size_t j = 0; j < nj; j++) a[j] /= amax[j];
        }
    }
    return RFX_OK;
}
