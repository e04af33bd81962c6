/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Newton steps of the squared hinge from the least-squares classifier
 * (the refinement of the one-call fit's default classifier, fit_classify.c).
 *
 * Column k of the one-vs-rest targets (y_ik = +-1) has the objective
 *     P_k(w, c) = sum_i max(0, 1 - y_ik s_ik)^2 + alpha |w|^2,
 *     s_ik = zc_i^T w + c,
 * with the least-squares classifier's penalty alpha = n lambda / 2, the
 * features centred by their mean over all rows (zc = z - mu) and c the
 * free offset of the centred scores (the model's intercept is c - mu^T w).
 * The least-squares objective is the same with (y - s)^2 on every row.
 *
 * Newton's method for P_k (Keerthi and DeCoste, "A modified finite Newton
 * method for fast solution of large scale linear SVMs", JMLR 6, 2005):
 * with A the rows of margin y s < 1, the Newton point is the ridge fit on
 * A alone with targets y_A,
 *     [Zc_A^T Zc_A + alpha I   Zc_A^T 1] [w]   [Zc_A^T y_A]
 *     [1^T Zc_A                |A|     ] [c] = [1^T y_A   ],
 * and an exact line search on the piecewise quadratic P_k along the way to
 * it gives the next iterate. The ridge fits of all columns are solved
 * together by conjugate gradients preconditioned by the eigendecomposition
 * Zc^T Zc = V^T diag(s) V of the least-squares fit: for column k,
 * M_k = V^T diag(rho_k s + alpha) V for w and |A_k| for c, rho_k the share
 * of rows in A_k (Zc_A^T Zc_A is about rho_k Zc^T Zc when the rows of A
 * are spread like the others). Warm-started from the current iterate, a
 * solve takes a few iterations. With fewer rows than features (the
 * least-squares fit's dual form, which has no such eigendecomposition)
 * the fits are exact solves on the n x n Gram matrix instead (the dual
 * part below).
 *
 * Every product over the rows runs in a fixed number of row blocks (a
 * function of the row count alone) whose partial sums are added in block
 * order, each block one BLAS call on one thread, so the result is bitwise
 * the same for any thread count.
 */
#include "solvers/classify_internal.h"

#include <math.h>
#include <string.h>

#define BLOCKS 16         /* row blocks of a product over the rows       */
#define BLOCK_MIN 64      /* rows per block at least                     */
#define SLICE 64          /* eigenvectors per slice of the preconditioner */
#define CG_MAX_ITER 200
#define LINE_STEPS 60     /* bisections of the line search               */

static size_t n_blocks(size_t rows);
static size_t block_start(size_t r0, size_t rows, size_t nb, size_t b);

struct rfx__polish {
    const double *Z, *Y; /* n x D centred features, n x K targets       */
    size_t n, D, K;
    double alpha;
    int intercept, nt;
    const double *V, *s; /* the preconditioner's eigenvectors (rows), values */
    double eig_rows;     /* the rows of Zc^T Zc's eigendecomposition     */
    double tol;          /* relative residual of a ridge solve           */
    double *Kc;          /* the dual form (V NULL): Zc Zc^T, n x n       */
    /* workspaces */
    double *T;           /* n x K                                         */
    double *part;        /* BLOCKS x (D + 1) x K                          */
    double *U;           /* D x K                                         */
};

rfx_status rfx__polish_create(const double *Zc, const double *Y, size_t n, size_t D, size_t K,
                              double alpha, int intercept, const double *V, const double *s,
                              size_t eig_rows, int n_threads, rfx__polish **out)
{
    rfx__polish *p = NULL;
    *out = NULL;
    RFX__TRY(rfx__calloc(1, sizeof *p, (void **)&p, "classify (polish)"));
    p->Z = Zc;
    p->Y = Y;
    p->n = n;
    p->D = D;
    p->K = K;
    p->alpha = alpha;
    p->intercept = intercept;
    p->nt = rfx__threads(n_threads);
    p->V = V;
    p->s = s;
    p->eig_rows = (double)eig_rows;
    p->tol = RFX__POLISH_TOL;
    rfx_status st = rfx__alloc(n * K + 1, sizeof *p->T, (void **)&p->T, "classify (polish)");
    /* the primal form's conjugate gradients: block sums, preconditioner */
    if (!st && V)
        st = rfx__alloc(BLOCKS * (D + 1) * K, sizeof *p->part, (void **)&p->part,
                        "classify (polish)");
    if (!st && V) st = rfx__alloc(D * K, sizeof *p->U, (void **)&p->U, "classify (polish)");
    if (!st && !V) {
        /* the dual form: Kc = Zc Zc^T on the row blocks, each block's rows
         * one BLAS call */
        st = rfx__alloc(n * n + 1, sizeof *p->Kc, (void **)&p->Kc, "classify (polish): Gram");
        if (!st) {
            const size_t nb = n_blocks(n);
#pragma omp parallel for num_threads(p->nt) schedule(static) if (nb > 1)
            for (size_t b = 0; b < nb; b++) {
                RFX__SERIAL_BLAS();
                const size_t a = block_start(0, n, nb, b), e = block_start(0, n, nb, b + 1);
                if (e > a)
                    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)(e - a), (int)n,
                                (int)D, 1.0, Zc + a * D, (int)D, Zc, (int)D, 0.0, p->Kc + a * n,
                                (int)n);
            }
        }
    }
    if (st) {
        rfx__polish_free(p);
        return st;
    }
    *out = p;
    return RFX_OK;
}

void rfx__polish_set_tol(rfx__polish *p, double tol)
{
    p->tol = tol > 0 ? tol : RFX__POLISH_TOL;
}

void rfx__polish_set_alpha(rfx__polish *p, double alpha)
{
    p->alpha = alpha;
}

size_t rfx__polish_dim(const rfx__polish *p)
{
    return p->Kc ? p->n : p->D;
}

void rfx__polish_free(rfx__polish *p)
{
    if (!p) return;
    free(p->Kc);
    free(p->T);
    free(p->part);
    free(p->U);
    free(p);
}

/* The blocks of rows [r0, r1): their count, and block b's start. */
static size_t n_blocks(size_t rows)
{
    size_t b = rows / BLOCK_MIN;
    if (b > BLOCKS) b = BLOCKS;
    return b ? b : 1;
}

static size_t block_start(size_t r0, size_t rows, size_t nb, size_t b)
{
    return r0 + rows * b / nb;
}

/* S (rows r0..r1 of an n x K array) = A X_w + 1 x_c^T, A n x m (row-major),
 * X (m + 1) x K: its last row the offsets. */
static void row_scores(const rfx__polish *p, const double *A, size_t m, size_t r0, size_t r1,
                       const double *X, double *S)
{
    const size_t K = p->K, rows = r1 - r0, nb = n_blocks(rows);
#pragma omp parallel for num_threads(p->nt) schedule(static) if (nb > 1)
    for (size_t b = 0; b < nb; b++) {
        RFX__SERIAL_BLAS();
        const size_t a = block_start(r0, rows, nb, b), e = block_start(r0, rows, nb, b + 1);
        if (e == a) continue;
        for (size_t i = a; i < e; i++) memcpy(S + i * K, X + m * K, K * sizeof *S);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(e - a), (int)K, (int)m, 1.0,
                    A + a * m, (int)m, X, (int)K, 1.0, S + a * K, (int)K);
    }
}

/* S (rows r0..r1) = Zc X_w + 1 x_c^T, X (D + 1) x K. */
static void scores(const rfx__polish *p, size_t r0, size_t r1, const double *X, double *S)
{
    row_scores(p, p->Z, p->D, r0, r1, X, S);
}

/* G ((D + 1) x K) = [Zc^T T; 1^T T] over rows r0..r1 of T (n x K), the
 * blocks summed in order. */
static void gather(const rfx__polish *p, size_t r0, size_t r1, const double *T, double *G)
{
    const size_t D = p->D, K = p->K, rows = r1 - r0, nb = n_blocks(rows), w = (D + 1) * K;
#pragma omp parallel for num_threads(p->nt) schedule(static) if (nb > 1)
    for (size_t b = 0; b < nb; b++) {
        RFX__SERIAL_BLAS();
        const size_t a = block_start(r0, rows, nb, b), e = block_start(r0, rows, nb, b + 1);
        double *g = p->part + b * w;
        memset(g, 0, w * sizeof *g);
        if (e == a) continue;
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)D, (int)K, (int)(e - a), 1.0,
                    p->Z + a * D, (int)D, T + a * K, (int)K, 0.0, g, (int)K);
        for (size_t i = a; i < e; i++)
            for (size_t k = 0; k < K; k++) g[D * K + k] += T[i * K + k];
    }
    memcpy(G, p->part, w * sizeof *G);
    for (size_t b = 1; b < nb; b++)
        for (size_t j = 0; j < w; j++) G[j] += p->part[b * w + j];
}

/* Q = H X: the masked normal matrices of every column (mask M, n x K of
 * 0 / 1, over rows r0..r1) times X, both (D + 1) x K. */
static void hessian(rfx__polish *p, size_t r0, size_t r1, const double *M, const double *X,
                    double *Q)
{
    const size_t D = p->D, K = p->K;
    scores(p, r0, r1, X, p->T);
    for (size_t i = r0 * K; i < r1 * K; i++) p->T[i] *= M[i];
    gather(p, r0, r1, p->T, Q);
    for (size_t j = 0; j < D * K; j++) Q[j] += p->alpha * X[j];
    if (!p->intercept)
        for (size_t k = 0; k < K; k++) Q[D * K + k] = 0;
}

/* Zp = M^-1 R (both (D + 1) x K; cnt: K active counts, rho: the same
 * over the eigendecomposition's rows). */
static void precondition(rfx__polish *p, const double *rho, const double *cnt, const double *R,
                         double *Zp)
{
    const size_t D = p->D, K = p->K, ns = (D + SLICE - 1) / SLICE;
    double *U = p->U;
    /* U = V R_w, then scaled, then Zp_w = V^T U; each by slices of rows of
     * the result, one BLAS call each */
#pragma omp parallel for num_threads(p->nt) schedule(static) if (ns > 1)
    for (size_t b = 0; b < ns; b++) {
        RFX__SERIAL_BLAS();
        const size_t a = b * SLICE, e = a + SLICE < D ? a + SLICE : D;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(e - a), (int)K, (int)D, 1.0,
                    p->V + a * D, (int)D, R, (int)K, 0.0, U + a * K, (int)K);
        for (size_t j = a; j < e; j++)
            for (size_t k = 0; k < K; k++)
                U[j * K + k] /= rho[k] * p->s[j] + p->alpha;
    }
#pragma omp parallel for num_threads(p->nt) schedule(static) if (ns > 1)
    for (size_t b = 0; b < ns; b++) {
        RFX__SERIAL_BLAS();
        const size_t a = b * SLICE, e = a + SLICE < D ? a + SLICE : D;
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(e - a), (int)K, (int)D, 1.0,
                    p->V + a, (int)D, U, (int)K, 0.0, Zp + a * K, (int)K);
    }
    for (size_t k = 0; k < K; k++)
        Zp[D * K + k] = p->intercept && cnt[k] > 0 ? R[D * K + k] / cnt[k] : 0.0;
}

static double col_dot(const double *a, const double *b, size_t rows, size_t K, size_t k)
{
    double v = 0;
    for (size_t j = 0; j < rows; j++) v += a[j * K + k] * b[j * K + k];
    return v;
}

/* Solve the masked ridge systems H X = B (rows r0..r1, mask M) by block
 * PCG from X; the iterations into *iters. */
static rfx_status ridge_solve(rfx__polish *p, size_t r0, size_t r1, const double *M,
                              const double *B, double *X, size_t *iters)
{
    const size_t D = p->D, K = p->K, w = (D + 1) * K;
    double *R = NULL, *Zp = NULL, *P = NULL, *Q = NULL, *rz = NULL, *cnt = NULL, *rho = NULL;
    double *bn = NULL;
    unsigned char *done = NULL;
    rfx_status st = rfx__alloc(4 * w, sizeof *R, (void **)&R, "classify (polish)");
    if (!st) st = rfx__alloc(4 * K, sizeof *rz, (void **)&rz, "classify (polish)");
    if (!st) st = rfx__calloc(K, 1, (void **)&done, "classify (polish)");
    if (st) goto out;
    Zp = R + w;
    P = R + 2 * w;
    Q = R + 3 * w;
    cnt = rz + K;
    rho = rz + 2 * K;
    bn = rz + 3 * K;
    for (size_t k = 0; k < K; k++) {
        double c = 0;
        for (size_t i = r0; i < r1; i++) c += M[i * K + k];
        cnt[k] = c;
        rho[k] = c / p->eig_rows;
        bn[k] = sqrt(col_dot(B, B, D + 1, K, k));
    }
    hessian(p, r0, r1, M, X, Q);
    for (size_t j = 0; j < w; j++) R[j] = B[j] - Q[j];
    precondition(p, rho, cnt, R, Zp);
    memcpy(P, Zp, w * sizeof *P);
    for (size_t k = 0; k < K; k++) rz[k] = col_dot(R, Zp, D + 1, K, k);
    size_t it = 0;
    for (;; it++) {
        size_t open = 0;
        for (size_t k = 0; k < K; k++) {
            if (!done[k] && !(sqrt(col_dot(R, R, D + 1, K, k)) > p->tol * bn[k])) done[k] = 1;
            if (done[k])
                for (size_t j = 0; j <= D; j++) P[j * K + k] = 0;
            open += !done[k];
        }
        if (!open || it == CG_MAX_ITER) break;
        hessian(p, r0, r1, M, P, Q);
        for (size_t k = 0; k < K; k++) {
            if (done[k]) continue;
            const double pq = col_dot(P, Q, D + 1, K, k);
            if (!(pq > 0)) { /* no curvature left: converged to rounding */
                done[k] = 1;
                continue;
            }
            const double a = rz[k] / pq;
            for (size_t j = 0; j <= D; j++) {
                X[j * K + k] += a * P[j * K + k];
                R[j * K + k] -= a * Q[j * K + k];
            }
        }
        precondition(p, rho, cnt, R, Zp);
        for (size_t k = 0; k < K; k++) {
            if (done[k]) continue;
            const double r2 = col_dot(R, Zp, D + 1, K, k), beta = rz[k] > 0 ? r2 / rz[k] : 0;
            rz[k] = r2;
            for (size_t j = 0; j <= D; j++) P[j * K + k] = Zp[j * K + k] + beta * P[j * K + k];
        }
    }
    *iters += it;
    for (size_t j = 0; j < w; j++)
        if (!isfinite(X[j])) {
            st = rfx__error(RFX_ENUMERIC, "classify (polish): the Newton system diverged");
            break;
        }
out:
    free(R);
    free(rz);
    free(done);
    return st;
}

static void line_step(const rfx__polish *p, size_t r0, size_t r1, size_t dim, size_t k, double wd,
                      double dd, const double *Xn, const double *Q, double *X, double *S);

/* ---- the dual form: fewer rows than features ---------------------------- */

/* With the iterate w = Zc^T B (B: n x K coefficients over the rows, zero
 * outside the rows worked on) the scores are Kc B + c, |w|^2 = B^T Kc B,
 * and the ridge fit of column k on the rows A is
 *     (Kc_AA + alpha I) beta = y_A - c 1,   c = 1^T M y_A / 1^T M 1,
 * M = (Kc_AA + alpha I)^-1 (the offset that makes 1^T beta = 0, the
 * residuals alpha beta summing to 0), solved by a Cholesky factorisation
 * per column: exact, for n at most D. */

/* S (rows r0..r1) = Kc B + c, X (n + 1) x K. */
static void dual_scores(const rfx__polish *p, size_t r0, size_t r1, const double *X, double *S)
{
    row_scores(p, p->Kc, p->n, r0, r1, X, S);
}

/* The ridge fits of every column on all the rows r0..r1 into X (zeroed):
 * one matrix for all columns, so one factorisation, solved for [Y 1]. */
static rfx_status dual_fit_all(const rfx__polish *p, size_t r0, size_t r1, double *X)
{
    const size_t n = p->n, K = p->K, m = r1 - r0, R = K + 1;
    if (m == 0) return RFX_OK;
    double *G = NULL, *Bt = NULL;
    rfx_status st = rfx__alloc(m * m, sizeof *G, (void **)&G, "classify (polish)");
    if (!st) st = rfx__alloc(m * R, sizeof *Bt, (void **)&Bt, "classify (polish)");
    if (!st) {
        for (size_t a = 0; a < m; a++) {
            memcpy(G + a * m, p->Kc + (r0 + a) * n + r0, m * sizeof *G);
            G[a * m + a] += p->alpha;
            memcpy(Bt + a * R, p->Y + (r0 + a) * K, K * sizeof *Bt);
            Bt[a * R + K] = 1.0;
        }
        st = rfx__chol(G, m, p->nt, "classify (polish, dual)");
    }
    if (!st) st = rfx__chol_solve(G, m, Bt, R);
    if (!st) {
        double s1 = 0;
        for (size_t a = 0; a < m; a++) s1 += Bt[a * R + K];
        for (size_t k = 0; k < K; k++) {
            double sy = 0;
            for (size_t a = 0; a < m; a++) sy += Bt[a * R + k];
            const double c = p->intercept && s1 > 0 ? sy / s1 : 0.0;
            for (size_t a = 0; a < m; a++) X[(r0 + a) * K + k] = Bt[a * R + k] - c * Bt[a * R + K];
            X[n * K + k] = c;
        }
    }
    free(G);
    free(Bt);
    return st;
}

/* X = the ridge fits of every column on the rows r0..r1 of margin y s < 1
 * at S, or on all of them (S NULL). */
static rfx_status dual_fit(const rfx__polish *p, size_t r0, size_t r1, const double *S, double *X)
{
    const size_t n = p->n, K = p->K;
    memset(X, 0, (n + 1) * K * sizeof *X);
    if (!S) return dual_fit_all(p, r0, r1, X);
    rfx__failure fail;
    rfx__failure_init(&fail);
#pragma omp parallel for num_threads(p->nt) schedule(dynamic, 1) if (K > 1)
    for (size_t k = 0; k < K; k++) {
        RFX__SERIAL_BLAS();
        size_t m = 0, *A = NULL;
        double *G = NULL, *Bt = NULL;
        rfx_status st = rfx__alloc(r1 - r0 + 1, sizeof *A, (void **)&A, "classify (polish)");
        for (size_t i = r0; i < r1 && !st; i++)
            if (!S || p->Y[i * K + k] * S[i * K + k] < 1) A[m++] = i;
        if (!st) st = rfx__alloc(m * m + 1, sizeof *G, (void **)&G, "classify (polish)");
        if (!st) st = rfx__alloc(2 * m + 1, sizeof *Bt, (void **)&Bt, "classify (polish)");
        if (!st && m > 0) {
            /* G = Kc_AA + alpha I; Bt = [y_A 1] then M [y_A 1] */
            for (size_t a = 0; a < m; a++) {
                for (size_t b = 0; b < m; b++) G[a * m + b] = p->Kc[A[a] * n + A[b]];
                G[a * m + a] += p->alpha;
                Bt[a * 2] = p->Y[A[a] * K + k];
                Bt[a * 2 + 1] = 1.0;
            }
            st = rfx__chol(G, m, 1, "classify (polish, dual)");
            if (!st) st = rfx__chol_solve(G, m, Bt, 2);
            if (!st) {
                double sy = 0, s1 = 0;
                for (size_t a = 0; a < m; a++) {
                    sy += Bt[a * 2];
                    s1 += Bt[a * 2 + 1];
                }
                const double c = p->intercept && s1 > 0 ? sy / s1 : 0.0;
                for (size_t a = 0; a < m; a++) X[A[a] * K + k] = Bt[a * 2] - c * Bt[a * 2 + 1];
                X[n * K + k] = c;
            }
        }
        rfx__failure_note(&fail, k, st);
        free(A);
        free(G);
        free(Bt);
    }
    return rfx__failure_raise(&fail);
}

static rfx_status dual_newton(rfx__polish *p, size_t r0, size_t r1, double *X, double *S)
{
    const size_t n = p->n, K = p->K, w = (n + 1) * K;
    double *Xn = NULL, *Dl = NULL, *G = NULL;
    rfx_status st = rfx__alloc(w, sizeof *Xn, (void **)&Xn, "classify (polish)");
    if (!st) st = rfx__alloc(w, sizeof *Dl, (void **)&Dl, "classify (polish)");
    if (!st) st = rfx__alloc(n * K + 1, sizeof *G, (void **)&G, "classify (polish)");
    if (!st) st = dual_fit(p, r0, r1, S, Xn);
    if (st) goto out;
    /* the step's coefficients (no offset) and G = Kc D on the rows: the
     * change of the scores, and with it B^T Kc D and D^T Kc D */
    for (size_t j = 0; j < w; j++) Dl[j] = Xn[j] - X[j];
    for (size_t k = 0; k < K; k++) Dl[n * K + k] = 0;
    dual_scores(p, r0, r1, Dl, G);
    for (size_t k = 0; k < K; k++) {
        double wd = 0, dd = 0;
        for (size_t i = r0; i < r1; i++) {
            wd += X[i * K + k] * G[i * K + k];
            dd += Dl[i * K + k] * G[i * K + k];
        }
        const double dc = Xn[n * K + k] - X[n * K + k];
        for (size_t i = r0; i < r1; i++) G[i * K + k] += dc; /* Q */
        line_step(p, r0, r1, n, k, wd, dd, Xn, G, X, S);
    }
out:
    free(Xn);
    free(Dl);
    free(G);
    return st;
}

rfx_status rfx__polish_ridge(rfx__polish *p, size_t r0, size_t r1, double *X, size_t *iters)
{
    const size_t D = p->D, K = p->K;
    if (p->Kc) return dual_fit(p, r0, r1, NULL, X);
    double *M = NULL, *B = NULL;
    rfx_status st = rfx__alloc(p->n * K, sizeof *M, (void **)&M, "classify (polish)");
    if (!st) st = rfx__alloc((D + 1) * K, sizeof *B, (void **)&B, "classify (polish)");
    if (!st) {
        for (size_t i = 0; i < p->n * K; i++) M[i] = 1.0;
        memcpy(p->T + r0 * K, p->Y + r0 * K, (r1 - r0) * K * sizeof *p->T);
        gather(p, r0, r1, p->T, B);
        if (!p->intercept)
            for (size_t k = 0; k < K; k++) B[D * K + k] = 0;
        st = ridge_solve(p, r0, r1, M, B, X, iters);
    }
    free(M);
    free(B);
    return st;
}

/* The derivative of P_k / 2 along the step at t: column k of S (scores)
 * and Q (their change over the step), rows r0..r1. */
static double line_slope(const rfx__polish *p, size_t r0, size_t r1, const double *S,
                         const double *Q, size_t k, double wd, double dd, double t)
{
    const size_t K = p->K;
    double v = p->alpha * (wd + t * dd);
    for (size_t i = r0; i < r1; i++) {
        const double y = p->Y[i * K + k], q = Q[i * K + k];
        const double m = 1.0 - y * (S[i * K + k] + t * q);
        if (m > 0) v -= m * y * q;
    }
    return v;
}

/* Column k of X ((dim + 1) x K) moved toward Xn by the step t in [0, 1]
 * that minimises the squared-hinge objective (convex and piecewise
 * quadratic along the way: its slope by bisection when t = 1 overshoots);
 * the scores S by t Q, Q their change over the whole step; wd = w^T d and
 * dd = d^T d of the weights' step d. */
static void line_step(const rfx__polish *p, size_t r0, size_t r1, size_t dim, size_t k, double wd,
                      double dd, const double *Xn, const double *Q, double *X, double *S)
{
    const size_t K = p->K;
    double t = 1.0;
    if (line_slope(p, r0, r1, S, Q, k, wd, dd, 1.0) > 0) {
        double lo = 0, hi = 1;
        for (int b = 0; b < LINE_STEPS; b++) {
            const double mid = 0.5 * (lo + hi);
            if (line_slope(p, r0, r1, S, Q, k, wd, dd, mid) > 0)
                hi = mid;
            else
                lo = mid;
        }
        t = 0.5 * (lo + hi);
    }
    for (size_t j = 0; j <= dim; j++) X[j * K + k] += t * (Xn[j * K + k] - X[j * K + k]);
    for (size_t i = r0; i < r1; i++) S[i * K + k] += t * Q[i * K + k];
}

rfx_status rfx__polish_newton(rfx__polish *p, size_t r0, size_t r1, double *X, double *S,
                              size_t *iters)
{
    if (p->Kc) return dual_newton(p, r0, r1, X, S);
    const size_t D = p->D, K = p->K, n = p->n, w = (D + 1) * K;
    double *M = NULL, *B = NULL, *Xn = NULL, *Q = NULL;
    rfx_status st = rfx__calloc(n * K, sizeof *M, (void **)&M, "classify (polish)");
    if (!st) st = rfx__alloc(2 * w, sizeof *B, (void **)&B, "classify (polish)");
    if (!st) st = rfx__alloc(n * K + 1, sizeof *Q, (void **)&Q, "classify (polish)");
    if (st) goto out;
    Xn = B + w;
    /* the active rows and the Newton point's right-hand side */
    memset(p->T, 0, n * K * sizeof *p->T);
    for (size_t i = r0; i < r1; i++)
        for (size_t k = 0; k < K; k++) {
            const double y = p->Y[i * K + k];
            if (y * S[i * K + k] < 1) {
                M[i * K + k] = 1.0;
                p->T[i * K + k] = y;
            }
        }
    gather(p, r0, r1, p->T, B);
    if (!p->intercept)
        for (size_t k = 0; k < K; k++) B[D * K + k] = 0;
    memcpy(Xn, X, w * sizeof *Xn);
    if ((st = ridge_solve(p, r0, r1, M, B, Xn, iters))) goto out;
    /* the step X -> Xn, its change of the scores Q, and per column the
     * exact minimiser over [0, 1] of the convex piecewise quadratic */
    scores(p, r0, r1, Xn, Q);
    for (size_t i = r0 * K; i < r1 * K; i++) Q[i] -= S[i];
    for (size_t k = 0; k < K; k++) {
        double wd = 0, dd = 0;
        for (size_t j = 0; j < D; j++) {
            const double dj = Xn[j * K + k] - X[j * K + k];
            wd += X[j * K + k] * dj;
            dd += dj * dj;
        }
        line_step(p, r0, r1, D, k, wd, dd, Xn, Q, X, S);
    }
out:
    free(M);
    free(B);
    free(Q);
    return st;
}

void rfx__polish_scores(const rfx__polish *p, size_t r0, size_t r1, const double *X, double *S)
{
    if (p->Kc)
        dual_scores(p, r0, r1, X, S);
    else
        scores(p, r0, r1, X, S);
}

double rfx__polish_objective(const rfx__polish *p, size_t r0, size_t r1, const double *X,
                             const double *S, size_t k)
{
    const size_t D = p->D, K = p->K;
    double v = 0;
    if (p->Kc) { /* |w|^2 = B^T Kc B */
        for (size_t a = 0; a < p->n; a++)
            for (size_t b = 0; b < p->n; b++)
                v += p->alpha * X[a * K + k] * p->Kc[a * p->n + b] * X[b * K + k];
    } else {
        for (size_t j = 0; j < D; j++) v += p->alpha * X[j * K + k] * X[j * K + k];
    }
    for (size_t i = r0; i < r1; i++) {
        const double m = 1.0 - p->Y[i * K + k] * S[i * K + k];
        if (m > 0) v += m * m;
    }
    return v;
}

/* ---- the refinement of the one-call fit's least-squares classifier ---- */

/* Z in memory at most (n x D doubles); beyond, no refinement */
#define REFINE_MAX_BYTES ((size_t)512 << 20)
#define REFINE_MAX_STEPS RFX__REFINE_MAX_STEPS
#define REFINE_HOLDOUT RFX__REFINE_HOLDOUT
#define REFINE_GATE RFX__REFINE_GATE
#define REFINE_STREAM RFX__REFINE_STREAM
#define RIDGE_TOL 1e-10   /* the held-out comparison's least squares     */

/* The class of row i's scores s (K columns). */
static size_t predicted(const double *s, size_t K)
{
    if (K == 1) return s[0] > 0;
    size_t best = 0;
    for (size_t k = 1; k < K; k++)
        if (s[k] > s[best]) best = k;
    return best;
}

rfx_status rfx__classify_refine(rfx_model *m, const rfx__lsq_factor *fac, rfx_cmat X,
                                const uint32_t *y, uint64_t seed, int n_threads, double tol,
                                rfx__refine_report *rep)
{
    const size_t n = X.rows, d = X.cols, D = m->D, K = m->ny;
    const size_t nh = n / REFINE_HOLDOUT, nt = n - nh;
    const int dual = fac->V == NULL;
    memset(rep, 0, sizeof *rep);
    rep->holdout = nh;
    if (nh == 0 || n > REFINE_MAX_BYTES / sizeof(double) / (D ? D : 1) || (dual && n > D)) {
        rep->skipped = 1;
        return RFX_OK;
    }
    double *Xo = NULL, *Z = NULL, *Y = NULL, *X0 = NULL, *Xt = NULL, *S = NULL, *SH = NULL;
    double *mu = NULL;
    uint32_t *yo = NULL;
    size_t *order = NULL;
    unsigned char *ok = NULL;
    rfx__polish *p = NULL;
    rfx_status st = rfx__alloc(n * d, sizeof *Xo, (void **)&Xo, "classify (refine): rows");
    if (!st) st = rfx__alloc(n * D, sizeof *Z, (void **)&Z, "classify (refine): features");
    if (!st) st = rfx__alloc(n * K, sizeof *Y, (void **)&Y, "classify (refine)");
    if (!st) st = rfx__calloc(D, sizeof *mu, (void **)&mu, "classify (refine)");
    if (!st) st = rfx__alloc(n * K, sizeof *S, (void **)&S, "classify (refine)");
    if (!st)
        st = rfx__alloc((REFINE_MAX_STEPS + 1) * nh * K, sizeof *SH, (void **)&SH,
                        "classify (refine)");
    if (!st) st = rfx__alloc(n, sizeof *yo, (void **)&yo, "classify (refine)");
    if (!st) st = rfx__alloc((REFINE_MAX_STEPS + 1) * nh, 1, (void **)&ok, "classify (refine)");
    if (!st) st = rfx__alloc(n, sizeof *order, (void **)&order, "classify (refine)");
    if (st) goto done;
    /* the rows in the seeded order of their contents (so the same rows in
     * any order give the same model): the first nt fit, the last nh are
     * held out */
    for (size_t i = 0; i < n; i++) S[i] = (double)y[i];
    if ((st = rfx__rows_order(X, rfx_cmat_of(S, n, 1), NULL, seed, REFINE_STREAM, order)))
        goto done;
    for (size_t i = 0; i < n; i++) {
        const size_t r = order[i];
        memcpy(Xo + i * d, X.data + r * X.stride, d * sizeof *Xo);
        yo[i] = y[r];
    }
    if ((st = rfx_features_transform(m->features, rfx_cmat_of(Xo, n, d), rfx_mat_of(Z, n, D))))
        goto done;
    free(Xo);
    Xo = NULL;
    /* centred by the least-squares fit's means (the dual form: the rows'
     * own; none without an intercept) */
    if (!dual) {
        memcpy(mu, fac->mu, D * sizeof *mu);
    } else if (m->fit_intercept) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < D; j++) mu[j] += Z[i * D + j];
        for (size_t j = 0; j < D; j++) mu[j] /= (double)n;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < D; j++) Z[i * D + j] -= mu[j];
    rfx__classify_targets(yo, n, K, Y);
    const double alpha = 0.5 * (double)n * m->lambda;
    if ((st = rfx__polish_create(Z, Y, n, D, K, alpha, m->fit_intercept, fac->V, fac->s,
                                 fac->rows, n_threads, &p)))
        goto done;
    rfx__polish_set_tol(p, tol);
    const size_t dim = rfx__polish_dim(p), w = (dim + 1) * K;
    if ((st = rfx__alloc(2 * w, sizeof *X0, (void **)&X0, "classify (refine)"))) goto done;
    Xt = X0 + w;
    /* the least-squares fit on all rows: the model's, in centred
     * coordinates (the dual form: solved again, exactly) */
    if (dual) {
        if ((st = rfx__polish_ridge(p, 0, n, X0, &rep->iterations))) goto done;
    } else {
        memcpy(X0, m->W, D * K * sizeof *X0);
        for (size_t k = 0; k < K; k++) {
            double c = m->intercept[k];
            for (size_t j = 0; j < D; j++) c += mu[j] * m->W[j * K + k];
            X0[D * K + k] = c;
        }
    }
    /* least squares on the first nt rows (their penalty scaled by their
     * share), from the fit on all, which has seen the held-out rows: solved
     * tightly, so that none of them leaks into the comparison; then its
     * Newton steps, which see the nt rows alone, each scored on the
     * held-out rows */
    rfx__polish_set_alpha(p, alpha * (double)nt / (double)n);
    memcpy(Xt, X0, w * sizeof *Xt);
    rfx__polish_set_tol(p, tol > 0 ? tol : RIDGE_TOL);
    if ((st = rfx__polish_ridge(p, 0, nt, Xt, &rep->iterations))) goto done;
    rfx__polish_set_tol(p, tol);
    rfx__polish_scores(p, 0, n, Xt, S);
    for (int j = 0;; j++) {
        memcpy(SH + (size_t)j * nh * K, S + nt * K, nh * K * sizeof *S);
        for (size_t i = 0; i < nh; i++)
            ok[(size_t)j * nh + i] = predicted(S + (nt + i) * K, K) == yo[nt + i];
        if (j == REFINE_MAX_STEPS) break;
        if (j == 0) {
            /* a step gains at most the rows least squares gets wrong
             * (b <= errors, c >= 0): with too few, none can pass */
            size_t errors = 0;
            for (size_t i = 0; i < nh; i++) errors += !ok[i];
            if (!((double)errors > REFINE_GATE * sqrt((double)errors))) goto done;
        }
        if ((st = rfx__polish_newton(p, 0, nt, Xt, S, &rep->iterations))) goto done;
        rfx__polish_scores(p, nt, n, Xt, S);
    }
    /* the step count: the largest gain over least squares on the held-out
     * rows among those significant by McNemar's test (rows one gets right
     * and the other wrong: b gained, c lost, b - c > z sqrt(b + c)) */
    size_t best = 0;
    double best_gain = 0;
    for (size_t j = 1; j <= REFINE_MAX_STEPS; j++) {
        size_t b = 0, c = 0;
        for (size_t i = 0; i < nh; i++) {
            b += ok[j * nh + i] && !ok[i];
            c += !ok[j * nh + i] && ok[i];
        }
        const double gain = (double)b - (double)c;
        if (gain > REFINE_GATE * sqrt((double)(b + c)) && gain > best_gain) {
            best = j;
            best_gain = gain;
            rep->gained = b;
            rep->lost = c;
        }
    }
    rep->steps = best;
    if (!best) goto done;
    /* the steps on all rows, and the temperature of the held-out scores */
    rfx__polish_set_alpha(p, alpha);
    rfx__polish_scores(p, 0, n, X0, S);
    for (size_t j = 0; j < best && !st; j++)
        st = rfx__polish_newton(p, 0, n, X0, S, &rep->iterations);
    if (st) goto done;
    if (dual) /* w = Zc^T B */
        RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)D, (int)K, (int)n,
                                1.0, Z, (int)D, X0, (int)K, 0.0, m->W, (int)K))
    else
        memcpy(m->W, X0, D * K * sizeof *X0);
    for (size_t k = 0; k < K; k++) {
        double b = X0[dim * K + k];
        for (size_t j = 0; j < D; j++) b -= mu[j] * m->W[j * K + k];
        m->intercept[k] = m->fit_intercept ? b : 0.0;
    }
    m->loss = RFX_LOSS_SQUARED_HINGE;
    m->noise_var = rfx__classify_temperature(SH + best * nh * K, yo + nt, nh, K);
done:
    rfx__polish_free(p);
    free(Xo);
    free(Z);
    free(Y);
    free(mu);
    free(X0);
    free(S);
    free(SH);
    free(yo);
    free(order);
    free(ok);
    return st;
}
