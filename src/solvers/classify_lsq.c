/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The least-squares classifier (RFX_LOSS_SQUARED) in closed form, with the
 * exact leave-one-out (LOO) error of every penalty and every class from one
 * eigendecomposition.
 *
 * Targets: Y (n x K), y_ik = +1 when row i has class k (two classes: K = 1,
 * +1 for c_1), else -1. The objective (1/n) sum_ik (y_ik - s_ik)^2 +
 * (lambda/2) |W|_F^2 with free intercepts has the normal equations
 *     (Zc^T Zc + alpha I) W = Zc^T Yc,   alpha = n lambda / 2,
 * Zc, Yc the centred features and targets (scikit-learn's RidgeClassifier
 * with alpha). With Zc^T Zc = V diag(s) V^T and u_i = V^T zc_i, the hat
 * matrix H = 1 1^T / n + Zc (Zc^T Zc + alpha I)^-1 Zc^T has the diagonal
 *     h_ii = 1/n + sum_j u_ij^2 / (s_j + alpha),
 * and the LOO residual of row i is e_ik / (1 - h_ii), e = Y - Yhat (Allen,
 * Technometrics 16(1), 1974: the PRESS residuals of a linear smoother). The
 * LOO scores y_ik - e_ik / (1 - h_ii) then give the LOO class predictions,
 * so the error rate of every alpha costs one pass over the rows: the
 * features again (2 n d D flops), U = Zc V (2 n D^2) and per alpha
 * U diag(1 / (s + alpha)) V^T Zc^T Yc (2 n D K). The statistics Z^T Z
 * and Z^T Y are those of all rows, from rfx_stats (so they also come from a
 * row-block source, or are summed over machines); the pass runs over the
 * scored rows the caller gives. The one-call fit scores every row up to
 * RFX__LSQ_LOO_ROWS rows and beyond that the RFX__LSQ_LOO_ROWS rows of
 * least content hash: each one's LOO residual is still exact (the model
 * left out is the one fitted on all other rows), and the pass costs that
 * of RFX__LSQ_LOO_ROWS rows.
 *
 * Rows are processed in chunks (no n x D matrix is held) and, inside a
 * chunk, tiles of 64 rows whose counts are summed in tile order, so the
 * result is bitwise the same for any thread count.
 */
#include "internal.h"
#include "solvers/classify_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define TILE 64
/* the automatic grid: alpha = (trace / D) 10^e, e = GRID_LO .. GRID_HI in
 * steps of GRID_STEP; extended by GRID_EXTEND points while the best is on
 * an edge, within EDGE_LO .. EDGE_HI */
#define GRID_LO (-6.0)
#define GRID_HI 1.0
#define GRID_STEP 0.5
#define GRID_EXTEND 4
#define EDGE_LO (-12.0)
#define EDGE_HI 4.0
/* rows whose LOO scores calibrate the temperature */
#define CALIB_ROWS 4000
/* rows added to the statistics per call: the blocks of a row-block source
 * (rfx_read_params.block_rows' default), so that a fit in memory and one
 * streamed from a file sum in the same order */
#define ADD_ROWS 4096

typedef struct lsq {
    const rfx_features *f;
    const rfx_stats *st; /* the statistics of all n rows (K +-1 targets)   */
    size_t n, D, K, chunk;
    int intercept, nt;
    double *V;     /* D x D: row j is eigenvector j of Zc^T Zc             */
    double *s;     /* D eigenvalues (clamped at 0)                         */
    double *ct;    /* D x K: V Zc^T Yc                                     */
    double *mu;    /* D feature means (0 without intercept)                */
    double *ybar;  /* K target means (0 without intercept)                 */
    /* the rows whose LOO predictions are scored (all rows, or evenly
     * spaced ones): rn rows rX, labels ry */
    rfx_cmat rX;
    const uint32_t *ry;
    size_t rn;
} lsq;

void rfx__classify_targets(const uint32_t *y, size_t rows, size_t K, double *Y)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t k = 0; k < K; k++)
            Y[i * K + k] = (K == 1 ? y[i] == 1 : y[i] == k) ? 1.0 : -1.0;
}

rfx_status rfx__classify_lsq_add(rfx_stats *s, const rfx_features *f, rfx_cmat X,
                                 const uint32_t *y, size_t C)
{
    const size_t K = C == 2 ? 1 : C;
    const size_t B = X.rows < ADD_ROWS ? X.rows : ADD_ROWS;
    double *Y = NULL;
    if (X.rows == 0) return RFX_OK;
    RFX__TRY(rfx__alloc(B * K, sizeof *Y, (void **)&Y, "classify: targets"));
    rfx_status st = RFX_OK;
    for (size_t r0 = 0; r0 < X.rows && !st; r0 += B) {
        const size_t rows = X.rows - r0 < B ? X.rows - r0 : B;
        rfx__classify_targets(y + r0, rows, K, Y);
        st = rfx_stats_add(s, f, (rfx_cmat){X.data + r0 * X.stride, rows, X.cols, X.stride},
                           rfx_cmat_of(Y, rows, K));
    }
    free(Y);
    return st;
}

static size_t chunk_rows(size_t D)
{
    size_t c = ((size_t)1 << 23) / (D ? D : 1);
    if (c > 4096) c = 4096;
    if (c < TILE) c = TILE;
    return c / TILE * TILE;
}

/* The eigendecomposition of the centred statistics and V Zc^T Yc. */
static rfx_status lsq_factor(lsq *q)
{
    const size_t D = q->D, K = q->K;
    double *c = NULL, *yy = NULL;
    rfx_status err = rfx__alloc(D * K, sizeof *c, (void **)&c, "classify: right-hand side");
    if (!err) err = rfx__alloc(K, sizeof *yy, (void **)&yy, "classify");
    if (!err) {
        rfx__stats_normal(q->st, q->intercept, q->V, c, yy, q->mu, q->ybar);
        err = rfx__eig_sym(q->V, D, q->s, q->nt, "classify (least squares)");
    }
    if (!err) {
        for (size_t j = 0; j < D; j++) q->s[j] = q->s[j] > 0 ? q->s[j] : 0.0;
        RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)D, (int)K, (int)D,
                                1.0, q->V, (int)D, c, (int)K, 0.0, q->ct, (int)K))
    }
    free(c);
    free(yy);
    return err;
}

/* Pass 2, over the scored rows q->rX: for each of the G penalties
 * alpha[g], the LOO error count err[g] and the LOO squared error sse[g]
 * (summed over rows and columns); the LOO scores of the rows into calib
 * (G x rn x K) when not NULL. */
static rfx_status lsq_loo(const lsq *q, const double *alpha, size_t G, double *err, double *sse,
                          double *calib)
{
    const size_t D = q->D, K = q->K, T = (q->chunk + TILE - 1) / TILE;
    double *A = NULL, *inv = NULL, *Z = NULL, *acc = NULL, *ws = NULL;
    size_t per = TILE * (D + 2 * K + 1);
    rfx_status st = rfx__alloc(G * D * K, sizeof *A, (void **)&A, "classify: LOO");
    if (!st) st = rfx__alloc(G * D, sizeof *inv, (void **)&inv, "classify: LOO");
    if (!st) st = rfx__alloc(q->chunk * D, sizeof *Z, (void **)&Z, "classify: features");
    if (!st) st = rfx__calloc(2 * T * G, sizeof *acc, (void **)&acc, "classify: LOO");
    if (!st) st = rfx__alloc((size_t)q->nt * per, sizeof *ws, (void **)&ws, "classify: LOO");
    if (st) goto done;
    /* A_g = diag(1 / (s + alpha_g)) ct: the weights in the eigenbasis */
    for (size_t g = 0; g < G; g++)
        for (size_t j = 0; j < D; j++) {
            inv[g * D + j] = 1.0 / (q->s[j] + alpha[g]);
            for (size_t k = 0; k < K; k++) A[(g * D + j) * K + k] = q->ct[j * K + k] * inv[g * D + j];
        }
    for (size_t g = 0; g < G; g++) err[g] = sse[g] = 0;
    const double h0 = q->intercept ? 1.0 / (double)q->n : 0.0;
    for (size_t r0 = 0; r0 < q->rn && !st; r0 += q->chunk) {
        const size_t rows = q->rn - r0 < q->chunk ? q->rn - r0 : q->chunk;
        const size_t tiles = (rows + TILE - 1) / TILE;
        rfx_cmat Xc = {q->rX.data + r0 * q->rX.stride, rows, q->rX.cols, q->rX.stride};
        if ((st = rfx_features_transform(q->f, Xc, rfx_mat_of(Z, rows, D)))) break;
        memset(acc, 0, 2 * T * G * sizeof *acc);
#pragma omp parallel num_threads(q->nt) if (tiles > 1)
        {
            RFX__SERIAL_BLAS();
#ifdef _OPENMP
            double *w = ws + (size_t)omp_get_thread_num() * per;
#else
            double *w = ws;
#endif
            double *U = w, *S = w + TILE * D, *Yt = S + TILE * K, *h = Yt + TILE * K;
#pragma omp for schedule(static)
            for (size_t t = 0; t < tiles; t++) {
                const size_t i0 = t * TILE, nr = rows - i0 < TILE ? rows - i0 : TILE;
                double *Zt = Z + i0 * D;
                if (q->intercept)
                    for (size_t i = 0; i < nr; i++)
                        for (size_t j = 0; j < D; j++) Zt[i * D + j] -= q->mu[j];
                /* U = Zc V^T (nr x D): 2 nr D^2 flops */
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nr, (int)D, (int)D, 1.0,
                            Zt, (int)D, q->V, (int)D, 0.0, U, (int)D);
                rfx__classify_targets(q->ry + r0 + i0, nr, K, Yt);
                for (size_t g = 0; g < G; g++) {
                    const double *ig = inv + g * D;
                    for (size_t i = 0; i < nr; i++) {
                        double v = h0;
                        for (size_t j = 0; j < D; j++) v += U[i * D + j] * U[i * D + j] * ig[j];
                        h[i] = v;
                    }
                    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nr, (int)K, (int)D,
                                1.0, U, (int)D, A + g * D * K, (int)K, 0.0, S, (int)K);
                    double e_count = 0, e_sq = 0;
                    for (size_t i = 0; i < nr; i++) {
                        double den = 1.0 - h[i];
                        if (!(den > 1e-12)) den = 1e-12;
                        size_t best = 0;
                        for (size_t k = 0; k < K; k++) {
                            double y = Yt[i * K + k], e = (y - q->ybar[k] - S[i * K + k]) / den;
                            e_sq += e * e;
                            S[i * K + k] = y - e; /* the LOO score */
                            if (S[i * K + k] > S[i * K + best]) best = k;
                        }
                        const uint32_t c = q->ry[r0 + i0 + i];
                        const size_t pred = K == 1 ? S[i * K] > 0 : best;
                        e_count += pred != c;
                        const size_t row = r0 + i0 + i;
                        if (calib) memcpy(calib + (g * q->rn + row) * K, S + i * K, K * sizeof *S);
                    }
                    acc[(t * G + g) * 2] = e_count;
                    acc[(t * G + g) * 2 + 1] = e_sq;
                }
            }
        }
        for (size_t t = 0; t < tiles; t++)
            for (size_t g = 0; g < G; g++) {
                err[g] += acc[(t * G + g) * 2];
                sse[g] += acc[(t * G + g) * 2 + 1];
            }
    }
done:
    free(A);
    free(inv);
    free(Z);
    free(acc);
    free(ws);
    return st;
}

/* The mean negative log-likelihood of the labels y (m rows, weights w or
 * NULL for 1 each: the weighted mean) under probabilities from the scores S
 * (m x K) at inverse temperature beta: sigmoid(beta s) for K = 1,
 * softmax(beta s) otherwise. */
static double calib_nll(const double *S, const uint32_t *y, const double *w, size_t m, size_t K,
                        double beta)
{
    double total = 0, wsum = (double)m;
    if (w) {
        wsum = 0;
        for (size_t i = 0; i < m; i++) wsum += w[i];
    }
    for (size_t i = 0; i < m; i++) {
        const double *s = S + i * K;
        if (K == 1) {
            double t = (y[i] == 1 ? 1.0 : -1.0) * beta * s[0]; /* log(1 + exp(-t)) */
            total += (w ? w[i] : 1.0) * (t > 0 ? log1p(exp(-t)) : -t + log1p(exp(t)));
        } else {
            double mx = s[0], sum = 0;
            for (size_t k = 1; k < K; k++) mx = s[k] > mx ? s[k] : mx;
            for (size_t k = 0; k < K; k++) sum += exp(beta * (s[k] - mx));
            total += (w ? w[i] : 1.0) * (log(sum) - beta * (s[y[i]] - mx));
        }
    }
    return total / wsum;
}

double rfx__classify_temperature(const double *S, const uint32_t *y, size_t m, size_t K)
{
    return rfx__classify_temperature_weighted(S, y, NULL, m, K);
}

double rfx__classify_temperature_weighted(const double *S, const uint32_t *y, const double *w,
                                          size_t m, size_t K)
{
    /* the NLL is convex in beta = 1 / T (a log-sum-exp of functions linear
     * in beta), so golden section on log beta over [1e-3, 1e3] finds it */
    if (m == 0) return 1.0;
    double a = log(1e-3), b = log(1e3);
    const double g = 0.6180339887498949;
    double x1 = b - g * (b - a), x2 = a + g * (b - a);
    double f1 = calib_nll(S, y, w, m, K, exp(x1)), f2 = calib_nll(S, y, w, m, K, exp(x2));
    for (int it = 0; it < 60; it++) {
        if (f1 <= f2) {
            b = x2; x2 = x1; f2 = f1;
            x1 = b - g * (b - a);
            f1 = calib_nll(S, y, w, m, K, exp(x1));
        } else {
            a = x1; x1 = x2; f1 = f2;
            x2 = a + g * (b - a);
            f2 = calib_nll(S, y, w, m, K, exp(x2));
        }
    }
    return 1.0 / exp(0.5 * (a + b));
}

/* better: fewer errors, then smaller squared error */
static int lsq_better(double e1, double s1, double e2, double s2)
{
    return e1 < e2 || (e1 == e2 && s1 < s2);
}

/* The leave-one-out errors of G penalties: err[g] and sse[g] for alpha[g]. */
typedef rfx_status (*loo_fn)(void *ctx, const double *alpha, size_t G, double *err, double *sse);

/* The penalty alpha = n lambda / 2: the best of the n_lambdas given ones,
 * or of the automatic grid base 10^e (e from GRID_HI down to GRID_LO),
 * extended while its best is on an edge; its LOO error count and squared
 * error into *err and *sse, the penalties scored into *scored. */
static rfx_status lsq_grid(loo_fn loo, void *ctx, double base, double n, const double *lambdas,
                           size_t n_lambdas, double *alpha, double *best_err, double *best_sse,
                           size_t *scored)
{
    const size_t cap = (size_t)((EDGE_HI - EDGE_LO) / GRID_STEP) + 2 + n_lambdas;
    double *grid = NULL, *err = NULL, *sse = NULL;
    rfx_status st = rfx__alloc(cap, sizeof *grid, (void **)&grid, "classify: grid");
    if (!st) st = rfx__alloc(cap, sizeof *err, (void **)&err, "classify: grid");
    if (!st) st = rfx__alloc(cap, sizeof *sse, (void **)&sse, "classify: grid");
    if (st) goto done;
    /* the grid in decreasing alpha (smoother first): on a full tie the
     * smoother model wins */
    size_t G = 0;
    double elo = GRID_HI, ehi = GRID_HI; /* exponents of the automatic grid */
    if (n_lambdas) {
        for (size_t g = 0; g < n_lambdas; g++) grid[G++] = 0.5 * n * lambdas[g];
    } else {
        for (double e = GRID_HI; e >= GRID_LO - 1e-9; e -= GRID_STEP) grid[G++] = base * pow(10, e);
        elo = GRID_HI - GRID_STEP * (double)(G - 1);
    }
    if ((st = loo(ctx, grid, G, err, sse))) goto done;
    size_t best = 0;
    for (size_t g = 1; g < G; g++)
        if (lsq_better(err[g], sse[g], err[best], sse[best])) best = g;
    /* extend an automatic grid whose best is on its edge */
    while (!n_lambdas) {
        size_t add = 0, at = G;
        double e0;
        if (best == 0 && ehi + GRID_STEP <= EDGE_HI + 1e-9) {
            /* larger alpha: shift the grid right to keep decreasing order */
            for (add = 0; add < GRID_EXTEND && ehi + GRID_STEP <= EDGE_HI + 1e-9; add++)
                ehi += GRID_STEP;
            memmove(grid + add, grid, G * sizeof *grid);
            memmove(err + add, err, G * sizeof *err);
            memmove(sse + add, sse, G * sizeof *sse);
            for (size_t g = 0; g < add; g++) grid[g] = base * pow(10, ehi - GRID_STEP * (double)g);
            at = 0;
            best += add;
        } else if (best == G - 1 && elo - GRID_STEP >= EDGE_LO - 1e-9) {
            e0 = elo;
            for (add = 0; add < GRID_EXTEND && elo - GRID_STEP >= EDGE_LO - 1e-9; add++)
                elo -= GRID_STEP;
            for (size_t g = 0; g < add; g++) grid[G + g] = base * pow(10, e0 - GRID_STEP * (g + 1.0));
        }
        if (!add) break;
        if ((st = loo(ctx, grid + at, add, err + at, sse + at))) goto done;
        G += add;
        best = 0;
        for (size_t g = 1; g < G; g++)
            if (lsq_better(err[g], sse[g], err[best], sse[best])) best = g;
    }
    *alpha = grid[best];
    *best_err = err[best];
    *best_sse = sse[best];
    *scored = G;
done:
    free(grid);
    free(err);
    free(sse);
    return st;
}

/* The model's intercepts and fields, once W is set. */
static void lsq_finish_model(rfx_model *mod, const double *mu, const double *ybar, size_t D,
                             size_t K, int intercept, const rfx__lsq_result *res, size_t n)
{
    for (size_t k = 0; k < K; k++) {
        double v = ybar[k];
        for (size_t j = 0; j < D; j++) v -= mu[j] * mod->W[j * K + k];
        mod->intercept[k] = intercept ? v : 0.0;
    }
    mod->loss = RFX_LOSS_SQUARED;
    mod->multiclass = RFX_MULTICLASS_OVR;
    mod->lambda = res->lambda;
    mod->noise_var = res->temperature;
    mod->n_train = n;
    mod->fit_intercept = intercept;
}

static rfx_status primal_loo(void *ctx, const double *alpha, size_t G, double *err, double *sse)
{
    return lsq_loo(ctx, alpha, G, err, sse, NULL);
}

/* ---- the dual form, n < D ---------------------------------------------- */

/* With fewer rows than features the same classifier comes from the n x n
 * centred Gram matrix Kc = Zc Zc^T = U^T diag(e) U (row j of U an
 * eigenvector): Zc (Zc^T Zc + alpha I)^-1 Zc^T = Kc (Kc + alpha I)^-1, so
 *     h_ii = 1/n + sum_j U_ji^2 e_j / (e_j + alpha),
 *     Yhat = 1 ybar^T + U^T diag(e / (e + alpha)) U Yc,
 *     W = Zc^T U^T diag(1 / (e + alpha)) U Yc,
 * and trace(Kc) = trace(Zc^T Zc) sets the same grid. Cost: n^2 D for Kc
 * and n^3 for its eigendecomposition instead of n D^2 and D^3, then n^2 K
 * per penalty. The LOO errors are summed over the rows in order, so they
 * agree with the primal form's to rounding. */
#define DUAL_MAX_BYTES ((size_t)256 << 20) /* Z (n x D) in memory at most */

typedef struct lsq_dual {
    size_t n, K;
    const uint32_t *y;
    double h0;
    double *U, *U2, *e, *P, *ybar; /* n x n, n x n, n, n x K (U Yc), K     */
    double *g, *h, *B;             /* workspaces: n, n, n x K               */
} lsq_dual;

/* The LOO error count and squared error at one alpha; the LOO scores of
 * every row into S (n x K) when not NULL. */
static void dual_loo_one(lsq_dual *q, double alpha, double *err, double *sse, double *S)
{
    const size_t n = q->n, K = q->K;
    for (size_t j = 0; j < n; j++) q->g[j] = q->e[j] / (q->e[j] + alpha);
    for (size_t j = 0; j < n; j++)
        for (size_t k = 0; k < K; k++) q->B[j * K + k] = q->g[j] * q->P[j * K + k];
    double *F = S ? S : q->B + n * K; /* fitted, centred: U^T diag(g) U Yc */
    RFX__SERIAL(cblas_dgemv(CblasRowMajor, CblasTrans, (int)n, (int)n, 1.0, q->U2, (int)n, q->g,
                            1, 0.0, q->h, 1);
                cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)n, (int)K, (int)n, 1.0,
                            q->U, (int)n, q->B, (int)K, 0.0, F, (int)K))
    double count = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        double den = 1.0 - (q->h0 + q->h[i]);
        if (!(den > 1e-12)) den = 1e-12;
        size_t best = 0;
        for (size_t k = 0; k < K; k++) {
            const double t = (K == 1 ? q->y[i] == 1 : q->y[i] == k) ? 1.0 : -1.0;
            const double r = (t - q->ybar[k] - F[i * K + k]) / den;
            sq += r * r;
            F[i * K + k] = t - r; /* the LOO score */
            if (F[i * K + k] > F[i * K + best]) best = k;
        }
        const size_t pred = K == 1 ? F[i * K] > 0 : best;
        count += pred != q->y[i];
    }
    *err = count;
    *sse = sq;
}

static rfx_status dual_loo(void *ctx, const double *alpha, size_t G, double *err, double *sse)
{
    for (size_t g = 0; g < G; g++) dual_loo_one(ctx, alpha[g], &err[g], &sse[g], NULL);
    return RFX_OK;
}

static rfx_status lsq_dual_fit(const rfx_features *f, rfx_cmat X, const uint32_t *y,
                               const double *classes, size_t C, int intercept,
                               const double *lambdas, size_t n_lambdas, int n_threads,
                               rfx__lsq_result *res, rfx_model **out)
{
    const size_t n = X.rows, D = f->D, K = C == 2 ? 1 : C;
    lsq_dual q;
    memset(&q, 0, sizeof q);
    q.n = n;
    q.K = K;
    q.y = y;
    q.h0 = intercept ? 1.0 / (double)n : 0.0;
    double *Z = NULL, *mu = NULL, *Yc = NULL, *S = NULL, *Q = NULL;
    uint32_t *yc = NULL;
    rfx_model *mod = NULL;
    rfx_status st = rfx__alloc(n * D, sizeof *Z, (void **)&Z, "classify (dual): features");
    if (!st) st = rfx__alloc(n * n, sizeof *q.U, (void **)&q.U, "classify (dual): Gram matrix");
    if (!st) st = rfx__alloc(n * n, sizeof *q.U2, (void **)&q.U2, "classify (dual)");
    if (!st) st = rfx__alloc(3 * n, sizeof *q.e, (void **)&q.e, "classify (dual)");
    if (!st) st = rfx__alloc(4 * n * K, sizeof *q.P, (void **)&q.P, "classify (dual)");
    if (!st) st = rfx__calloc(D, sizeof *mu, (void **)&mu, "classify (dual)");
    if (!st) st = rfx__calloc(K, sizeof *q.ybar, (void **)&q.ybar, "classify (dual)");
    if (!st) st = rfx__alloc(n * K, sizeof *Yc, (void **)&Yc, "classify (dual)");
    if (!st) st = rfx__alloc(n, sizeof *yc, (void **)&yc, "classify (dual): calibration");
    if (!st) st = rfx_features_transform(f, X, rfx_mat_of(Z, n, D));
    if (st) goto done;
    q.g = q.e + n;
    q.h = q.e + 2 * n;
    q.B = q.P + n * K; /* B, then F (n x K), then S's room */
    S = q.P + 3 * n * K;
    rfx__classify_targets(y, n, K, Yc);
    if (intercept) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < D; j++) mu[j] += Z[i * D + j];
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < K; k++) q.ybar[k] += Yc[i * K + k];
        for (size_t j = 0; j < D; j++) mu[j] /= (double)n;
        for (size_t k = 0; k < K; k++) q.ybar[k] /= (double)n;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < D; j++) Z[i * D + j] -= mu[j];
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < K; k++) Yc[i * K + k] -= q.ybar[k];
    RFX__SERIAL(cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)n, (int)D, 1.0, Z,
                            (int)D, 0.0, q.U, (int)n))
    double trace = 0;
    for (size_t i = 0; i < n; i++) {
        trace += q.U[i * n + i];
        for (size_t j = i + 1; j < n; j++) q.U[j * n + i] = q.U[i * n + j];
    }
    if ((st = rfx__eig_sym(q.U, n, q.e, n_threads, "classify (least squares, dual)"))) goto done;
    for (size_t j = 0; j < n; j++) q.e[j] = q.e[j] > 0 ? q.e[j] : 0.0;
    for (size_t j = 0; j < n * n; j++) q.U2[j] = q.U[j] * q.U[j];
    RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)K, (int)n, 1.0,
                            q.U, (int)n, Yc, (int)K, 0.0, q.P, (int)K))
    const double base = trace > 0 ? trace / (double)D : 1.0;
    double alpha, best_err, best_sse;
    size_t G;
    if ((st = lsq_grid(dual_loo, &q, base, (double)n, lambdas, n_lambdas, &alpha, &best_err,
                       &best_sse, &G)))
        goto done;
    /* the calibration rows' LOO scores: every cstep-th row, as the primal
     * form takes them from its scored rows */
    double e1, s1;
    dual_loo_one(&q, alpha, &e1, &s1, S);
    const size_t cstep = (n + CALIB_ROWS - 1) / CALIB_ROWS, mc = (n + cstep - 1) / cstep;
    for (size_t i = 0; i < mc; i++) {
        memmove(S + i * K, S + i * cstep * K, K * sizeof *S);
        yc[i] = y[i * cstep];
    }
    res->lambda = 2.0 * alpha / (double)n;
    res->error = best_err / (double)n;
    res->mse = best_sse / (double)n;
    res->n_lambdas = G;
    res->temperature = rfx__classify_temperature(S, yc, mc, K);
    if (!out) goto done;
    /* Q = U^T diag(1 / (e + alpha)) U Yc, W = Zc^T Q */
    Q = q.B;
    for (size_t j = 0; j < n; j++)
        for (size_t k = 0; k < K; k++) S[j * K + k] = q.P[j * K + k] / (q.e[j] + alpha);
    if ((st = rfx__classify_model_new(f, classes, C, &mod))) goto done;
    RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)n, (int)K, (int)n, 1.0,
                            q.U, (int)n, S, (int)K, 0.0, Q, (int)K);
                cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)D, (int)K, (int)n, 1.0,
                            Z, (int)D, Q, (int)K, 0.0, mod->W, (int)K))
    lsq_finish_model(mod, mu, q.ybar, D, K, intercept, res, n);
    *out = mod;
    mod = NULL;
done:
    rfx_model_free(mod);
    free(Z);
    free(q.U);
    free(q.U2);
    free(q.e);
    free(q.P);
    free(mu);
    free(q.ybar);
    free(Yc);
    free(yc);
    return st;
}

rfx_status rfx__classify_lsq(const rfx_features *f, rfx_cmat X, const uint32_t *y,
                             const double *classes, size_t C, int intercept,
                             const double *lambdas, size_t n_lambdas, int n_threads,
                             rfx__lsq_result *res, rfx_model **out, rfx__lsq_factor *keep)
{
    if (keep) memset(keep, 0, sizeof *keep);
    if (X.rows < f->D && X.rows >= 2 && X.rows <= RFX__LSQ_LOO_ROWS &&
        X.rows <= DUAL_MAX_BYTES / sizeof(double) / f->D)
        return lsq_dual_fit(f, X, y, classes, C, intercept, lambdas, n_lambdas, n_threads, res,
                            out);
    rfx_stats *s = NULL;
    RFX__TRY(rfx_stats_create(f->D, C == 2 ? 1 : C, &s));
    rfx_status st = rfx__classify_lsq_add(s, f, X, y, C);
    if (!st)
        st = rfx__classify_lsq_solve(f, s, X, y, classes, C, intercept, lambdas, n_lambdas,
                                     n_threads, res, out, keep);
    rfx_stats_free(s);
    return st;
}

rfx_status rfx__classify_lsq_solve(const rfx_features *f, const rfx_stats *s, rfx_cmat rX,
                                   const uint32_t *ry, const double *classes, size_t C,
                                   int intercept, const double *lambdas, size_t n_lambdas,
                                   int n_threads, rfx__lsq_result *res, rfx_model **out,
                                   rfx__lsq_factor *keep)
{
    if (keep) memset(keep, 0, sizeof *keep);
    const size_t n = rfx_stats_rows(s), D = f->D, K = C == 2 ? 1 : C, d = rX.cols;
    if (rfx_stats_n_features(s) != D || rfx_stats_n_targets(s) != K)
        return rfx__error(RFX_EINTERNAL, "classify: statistics of %zu features and %zu targets "
                          "for %zu and %zu", rfx_stats_n_features(s), rfx_stats_n_targets(s), D,
                          K);
    if (n < 2) return rfx__error(RFX_EDIM, "classify: at least 2 rows are needed, got %zu", n);
    lsq q;
    memset(&q, 0, sizeof q);
    q.f = f;
    q.st = s;
    q.n = n;
    q.D = D;
    q.K = K;
    q.intercept = intercept;
    q.nt = rfx__threads(n_threads);
    q.chunk = chunk_rows(D);
    q.rX = rX;
    q.ry = ry;
    q.rn = rX.rows;
    /* the calibration rows: every cstep-th scored row */
    const size_t ne = rX.rows;
    const size_t cstep = (ne + CALIB_ROWS - 1) / CALIB_ROWS, mc = ne ? (ne + cstep - 1) / cstep : 0;
    double *calib = NULL, *tmp = NULL, *Xcal = NULL;
    uint32_t *yc = NULL;
    rfx_model *mod = NULL;
    rfx_status st = rfx__alloc(D * D, sizeof *q.V, (void **)&q.V, "classify: normal matrix");
    if (!st) st = rfx__alloc(D, sizeof *q.s, (void **)&q.s, "classify: eigenvalues");
    if (!st) st = rfx__alloc(D * K, sizeof *q.ct, (void **)&q.ct, "classify");
    if (!st) st = rfx__alloc(D, sizeof *q.mu, (void **)&q.mu, "classify");
    if (!st) st = rfx__alloc(K, sizeof *q.ybar, (void **)&q.ybar, "classify");
    if (!st) st = rfx__alloc(mc + 1, sizeof *yc, (void **)&yc, "classify: calibration");
    if (!st) st = rfx__alloc(mc * d + 1, sizeof *Xcal, (void **)&Xcal, "classify: calibration");
    if (!st) st = lsq_factor(&q);
    if (st) goto done;
    double trace = 0;
    for (size_t j = 0; j < D; j++) trace += q.s[j];
    const double base = trace > 0 ? trace / (double)D : 1.0;
    double alpha, best_err, best_sse;
    size_t G;
    if ((st = lsq_grid(primal_loo, &q, base, (double)n, lambdas, n_lambdas, &alpha, &best_err,
                       &best_sse, &G)))
        goto done;
    /* the chosen alpha once more, keeping the calibration rows' LOO scores */
    if ((st = rfx__alloc(mc * K + 1, sizeof *calib, (void **)&calib, "classify: calibration")))
        goto done;
    double e1, s1;
    for (size_t i = 0; i < mc; i++) {
        memcpy(Xcal + i * d, q.rX.data + i * cstep * q.rX.stride, d * sizeof *Xcal);
        yc[i] = q.ry[i * cstep];
    }
    const double scored = (double)q.rn;
    q.rX = rfx_cmat_of(Xcal, mc, d);
    q.ry = yc;
    q.rn = mc;
    if ((st = lsq_loo(&q, &alpha, 1, &e1, &s1, calib))) goto done;
    res->lambda = 2.0 * alpha / (double)n;
    res->error = scored > 0 ? best_err / scored : NAN;
    res->mse = scored > 0 ? best_sse / scored : NAN;
    res->n_lambdas = G;
    res->temperature = rfx__classify_temperature(calib, yc, mc, K);
    if (!out) goto done;
    /* W = V^T diag(1 / (s + alpha)) ct, intercept = ybar - mu^T W */
    if ((st = rfx__alloc(D * K, sizeof *tmp, (void **)&tmp, "classify: weights"))) goto done;
    for (size_t j = 0; j < D; j++)
        for (size_t k = 0; k < K; k++) tmp[j * K + k] = q.ct[j * K + k] / (q.s[j] + alpha);
    if ((st = rfx__classify_model_new(f, classes, C, &mod))) goto done;
    RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)D, (int)K, (int)D, 1.0,
                            q.V, (int)D, tmp, (int)K, 0.0, mod->W, (int)K))
    lsq_finish_model(mod, q.mu, q.ybar, D, K, intercept, res, n);
    *out = mod;
    mod = NULL;
    if (keep) {
        keep->V = q.V;
        keep->s = q.s;
        keep->mu = q.mu;
        keep->rows = n;
        q.V = q.s = q.mu = NULL;
    }
done:
    rfx_model_free(mod);
    free(q.V);
    free(q.s);
    free(q.ct);
    free(q.mu);
    free(q.ybar);
    free(calib);
    free(yc);
    free(Xcal);
    free(tmp);
    return st;
}

void rfx__lsq_factor_free(rfx__lsq_factor *k)
{
    if (!k) return;
    free(k->V);
    free(k->s);
    free(k->mu);
    memset(k, 0, sizeof *k);
}
