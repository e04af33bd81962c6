/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Positive random features of the softmax kernel exp(x.y) and linear
 * attention (Choromanski et al., "Rethinking Attention with Performers",
 * ICLR 2021). The math and the contracts are in rfx/attention.h.
 *
 * Every parallel loop runs over fixed chunks of rows whose size depends on
 * the row count only; partial sums are added in chunk order and BLAS runs
 * single-threaded inside the loops, so results are bitwise the same for any
 * number of threads.
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* LAPACK QR (Fortran interface, shipped by OpenBLAS) for orthogonal blocks */
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work,
             const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
             const double *tau, double *work, const int *lwork, int *info);

struct rfx_softmax_features {
    size_t d, D, F;   /* inputs, outputs, frequencies (D or D/2)          */
    int hyperbolic;
    int trig;         /* exp(|x|^2/2) [cos Wx; sin Wx] / sqrt(F)           */
    double *W;        /* F x d, row-major                                 */
    double scale;     /* 1 / sqrt(D); trig: 1 / sqrt(F)                   */
    int n_threads;
};

/* Rows per tile of the query / transform loops and per causal chunk. */
#define ATT_TILE 64
/* At most this many key chunks in the non-causal sums. */
#define ATT_MAX_CHUNKS 64
/* Loops with less work than this (flops, roughly) run on the calling
 * thread: a parallel region costs a barrier. The chunks are the same. */
#define ATT_PAR_MIN ((size_t)1 << 18)

/* ---- sampling ------------------------------------------------------------ */

/* Block k of orthogonal rows: Q diag(sign(diag R)) from the QR of a d x d
 * Gaussian matrix (a Haar orthogonal matrix), rows scaled by chi_d draws;
 * rows rows are written to Wb (row-major, d columns). ws: d * d + 2 d +
 * lwork doubles. */
static rfx_status orthogonal_block(size_t d, uint64_t seed, size_t k, size_t rows, double *Wb,
                                   double *ws, int lwork)
{
    int n = (int)d, info = 0;
    double *A = ws, *tau = ws + d * d, *sgn = tau + d, *work = sgn + d;
    rfx__rng r;
    rfx__rng_init(&r, seed, 1, (uint64_t)k);
    for (size_t i = 0; i < d * d; i++) A[i] = rfx__rng_normal(&r); /* column-major */
    RFX__SERIAL(dgeqrf_(&n, &n, A, &n, tau, work, &lwork, &info))
    if (info != 0) return rfx__error(RFX_EINTERNAL, "softmax features: dgeqrf failed (%d)", info);
    for (size_t c = 0; c < d; c++) sgn[c] = A[c * d + c] < 0 ? -1.0 : 1.0;
    RFX__SERIAL(dorgqr_(&n, &n, &n, A, &n, tau, work, &lwork, &info))
    if (info != 0) return rfx__error(RFX_EINTERNAL, "softmax features: dorgqr failed (%d)", info);
    for (size_t i = 0; i < rows; i++) {
        /* |g| for g ~ N(0, I_d): sqrt(chi2_d), chi2_d = 2 Gamma(d/2, 1) */
        double chi = sqrt(2.0 * rfx__rng_gamma(&r, 0.5 * (double)d));
        for (size_t c = 0; c < d; c++) Wb[i * d + c] = chi * A[c * d + i] * sgn[c];
    }
    return RFX_OK;
}

/* kind: 0 positive, 1 hyperbolic, 2 trigonometric */
static rfx_status softmax_create(size_t d, size_t D, uint64_t seed, int orthogonal, int kind,
                                 rfx_softmax_features **out)
{
    const int hyp = kind != 0; /* two features per frequency */
    const char *name = kind == 1   ? "softmax features (hyperbolic)"
                       : kind == 2 ? "softmax features (trigonometric)"
                                   : "softmax features";
    if (!out) return rfx__error(RFX_EINVAL, "%s: out is NULL", name);
    if (d == 0) return rfx__error(RFX_EINVAL, "%s: the input dimension d must be >= 1", name);
    if (D == 0) return rfx__error(RFX_EINVAL, "%s: the number of features D must be >= 1", name);
    if (hyp && D % 2 != 0)
        return rfx__error(RFX_EINVAL, "%s: D must be even (D/2 frequencies), got %zu", name, D);
    const size_t F = hyp ? D / 2 : D;
    size_t cells;
    RFX__TRY(rfx__mul3(F, d, sizeof(double), &cells, "softmax features: F x d frequencies"));
    int di;
    RFX__TRY(rfx__lapack_int(D, &di, "softmax features: D"));
    if (orthogonal) {
        RFX__TRY(rfx__lapack_int(d, &di, "softmax features: orthogonal blocks of d"));
        RFX__TRY(rfx__mul3(d, d, sizeof(double), &cells, "softmax features: d x d blocks"));
    }
    rfx_softmax_features *sf = calloc(1, sizeof *sf);
    if (!sf) return rfx__error(RFX_ENOMEM, "%s: cannot allocate", name);
    sf->d = d;
    sf->D = D;
    sf->F = F;
    sf->hyperbolic = kind == 1;
    sf->trig = kind == 2;
    sf->scale = 1.0 / sqrt((double)(kind == 2 ? F : D));
    rfx_status st = rfx__alloc(F * d, sizeof(double), (void **)&sf->W, "softmax features: W");
    if (st) {
        free(sf);
        return st;
    }
    if (!orthogonal) {
        for (size_t j = 0; j < F; j++) {
            rfx__rng r;
            rfx__rng_init(&r, seed, 0, (uint64_t)j);
            for (size_t c = 0; c < d; c++) sf->W[j * d + c] = rfx__rng_normal(&r);
        }
    } else {
        int n = (int)d, lwork = -1, info = 0;
        double q = 0, q2 = 0, tau0 = 0;
        dgeqrf_(&n, &n, sf->W, &n, &tau0, &q, &lwork, &info); /* workspace queries */
        dorgqr_(&n, &n, &n, sf->W, &n, &tau0, &q2, &lwork, &info);
        lwork = (int)(q > q2 ? q : q2);
        if (lwork < n) lwork = n;
        double *ws = NULL;
        st = rfx__alloc(d * d + 2 * d + (size_t)lwork, sizeof(double), (void **)&ws,
                        "softmax features: QR workspace");
        for (size_t k = 0; !st && k * d < F; k++) {
            size_t rows = F - k * d < d ? F - k * d : d;
            st = orthogonal_block(d, seed, k, rows, sf->W + k * d * d, ws, lwork);
        }
        free(ws);
        if (st) {
            rfx_softmax_features_free(sf);
            return st;
        }
    }
    *out = sf;
    return RFX_OK;
}

rfx_status rfx_softmax_features_create(size_t d, size_t D, uint64_t seed, int orthogonal,
                                       rfx_softmax_features **out)
{
    return softmax_create(d, D, seed, orthogonal, 0, out);
}

rfx_status rfx_softmax_features_create_hyperbolic(size_t d, size_t D, uint64_t seed,
                                                  int orthogonal, rfx_softmax_features **out)
{
    return softmax_create(d, D, seed, orthogonal, 1, out);
}

rfx_status rfx_softmax_features_create_trig(size_t d, size_t D, uint64_t seed, int orthogonal,
                                            rfx_softmax_features **out)
{
    return softmax_create(d, D, seed, orthogonal, 2, out);
}

void rfx_softmax_features_free(rfx_softmax_features *sf)
{
    if (!sf) return;
    free(sf->W);
    free(sf);
}

size_t rfx_softmax_features_input_dim(const rfx_softmax_features *sf) { return sf ? sf->d : 0; }
size_t rfx_softmax_features_output_dim(const rfx_softmax_features *sf) { return sf ? sf->D : 0; }

rfx_cmat rfx_softmax_features_frequencies(const rfx_softmax_features *sf)
{
    return sf ? rfx_cmat_of(sf->W, sf->F, sf->d) : rfx_cmat_none();
}

void rfx_softmax_features_set_threads(rfx_softmax_features *sf, int n_threads)
{
    if (sf && n_threads >= 0) sf->n_threads = n_threads;
}

/* ---- the feature kernel --------------------------------------------------- */

/* The exponents of rows rows of X (stride ldx) into A (rows x D, stride
 * lda): w_j.x - |x|^2/2, and for the hyperbolic map -w_j.x - |x|^2/2 in
 * columns F..D-1; mx (rows values, may be NULL) gets each row's largest.
 * The trigonometric map's features are exp(|x|^2/2) times cos and sin: A
 * gets [cos Wx, sin Wx] and mx the row's exponent |x|^2/2 (row_finish
 * applies it). Cost 2 rows d F (one GEMM) + rows D. */
static void exponents(const rfx_softmax_features *sf, const double *X, size_t ldx, size_t rows,
                      double *A, size_t lda, double *mx)
{
    const size_t d = sf->d, F = sf->F, D = sf->D;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)F, (int)d, 1.0, X,
                (int)ldx, sf->W, (int)d, 0.0, A, (int)lda);
    for (size_t i = 0; i < rows; i++) {
        const double *x = X + i * ldx;
        double *a = A + i * lda, h = 0;
        for (size_t c = 0; c < d; c++) h += x[c] * x[c];
        h *= 0.5;
        if (sf->trig) {
            for (size_t j = 0; j < F; j++) {
                const double t = a[j];
                a[j] = cos(t);
                a[F + j] = sin(t);
            }
            if (mx) mx[i] = h;
            continue;
        }
        if (sf->hyperbolic)
            for (size_t j = 0; j < F; j++) a[F + j] = -a[j];
        double m = -INFINITY;
        for (size_t j = 0; j < D; j++) {
            a[j] -= h;
            if (a[j] > m) m = a[j];
        }
        if (mx) mx[i] = m;
    }
}

/* One row a (D values from exponents, row exponent m) into its features
 * divided by exp(shift): s exp(a_j - shift), or for the trigonometric map
 * s exp(m - shift) a_j. */
static void row_finish(const rfx_softmax_features *sf, double *a, double m, double shift)
{
    const size_t D = sf->D;
    if (sf->trig) {
        const double f = sf->scale * exp(m - shift);
        for (size_t j = 0; j < D; j++) a[j] *= f;
        return;
    }
    for (size_t j = 0; j < D; j++) a[j] = sf->scale * exp(a[j] - shift);
}

static rfx_status check_rows(rfx_cmat M, const char *what)
{
    size_t r, c;
    if (!rfx__all_finite(M, &r, &c))
        return rfx__error(RFX_EPARSE, "%s row %zu, column %zu: %g is not finite", what, r, c,
                          M.data[r * M.stride + c]);
    return RFX_OK;
}

rfx_status rfx_softmax_features_transform(const rfx_softmax_features *sf, rfx_cmat X,
                                          rfx_mat Phi, double *log_scale)
{
    if (!sf) return rfx__error(RFX_EINVAL, "softmax transform: sf is NULL");
    RFX__TRY(rfx__check_cmat(X, "softmax transform: X"));
    RFX__TRY(rfx__check_mat(Phi, "softmax transform: Phi"));
    if (X.cols != sf->d)
        return rfx__error(RFX_EDIM, "softmax transform: X has %zu columns, the map expects %zu",
                          X.cols, sf->d);
    if (Phi.rows != X.rows || Phi.cols != sf->D)
        return rfx__error(RFX_EDIM, "softmax transform: Phi is %zu x %zu, expected %zu x %zu",
                          Phi.rows, Phi.cols, X.rows, sf->D);
    int tmp;
    RFX__TRY(rfx__lapack_int(X.stride, &tmp, "softmax transform: X stride"));
    RFX__TRY(rfx__lapack_int(Phi.stride, &tmp, "softmax transform: Phi stride"));
    RFX__TRY(check_rows(X, "softmax transform: X"));
    const size_t n = X.rows, T = ATT_TILE, tiles = (n + T - 1) / T;
    const int nt = rfx__threads(sf->n_threads);
    size_t bad = SIZE_MAX;
#pragma omp parallel num_threads(nt) if (tiles > 1 && n * sf->D * sf->d >= ATT_PAR_MIN)
    {
        RFX__SERIAL_BLAS();
        double mx[ATT_TILE];
#pragma omp for schedule(static) reduction(min : bad)
        for (size_t t = 0; t < tiles; t++) {
            size_t r0 = t * T, rows = n - r0 < T ? n - r0 : T;
            double *P = Phi.data + r0 * Phi.stride;
            exponents(sf, X.data + r0 * X.stride, X.stride, rows, P, Phi.stride, mx);
            for (size_t i = 0; i < rows; i++) {
                double *p = P + i * Phi.stride;
                if (log_scale) {
                    log_scale[r0 + i] = mx[i];
                    row_finish(sf, p, mx[i], mx[i]);
                } else {
                    row_finish(sf, p, mx[i], 0.0);
                    if (!(mx[i] + log(sf->scale) < log(DBL_MAX)) && r0 + i < bad) bad = r0 + i;
                    for (size_t j = 0; j < sf->D; j++)
                        if (!isfinite(p[j]) && r0 + i < bad) bad = r0 + i;
                }
            }
        }
    }
    if (bad != SIZE_MAX)
        return rfx__error(RFX_ENUMERIC,
                          "softmax transform: row %zu: exp overflows (an exponent above 709); "
                          "pass log_scale for the stabilised features", bad);
    return RFX_OK;
}

/* ---- attention ------------------------------------------------------------ */

static rfx_status check_attention(rfx_cmat Q, rfx_cmat K, rfx_cmat V, rfx_mat Out, int causal,
                                  int n_threads, size_t d, const char *where)
{
    RFX__TRY(rfx__check_cmat(Q, where));
    RFX__TRY(rfx__check_cmat(K, where));
    RFX__TRY(rfx__check_cmat(V, where));
    RFX__TRY(rfx__check_mat(Out, where));
    if (n_threads < 0)
        return rfx__error(RFX_EINVAL, "%s: n_threads must be >= 0, got %d", where, n_threads);
    if (Q.cols != d || K.cols != d)
        return rfx__error(RFX_EDIM, "%s: Q has %zu columns and K %zu, expected d = %zu", where,
                          Q.cols, K.cols, d);
    if (K.rows == 0) return rfx__error(RFX_EDIM, "%s: K has no rows (no keys)", where);
    if (V.rows != K.rows)
        return rfx__error(RFX_EDIM, "%s: V has %zu rows, K has %zu", where, V.rows, K.rows);
    if (V.cols == 0) return rfx__error(RFX_EDIM, "%s: V has no columns", where);
    if (Out.rows != Q.rows || Out.cols != V.cols)
        return rfx__error(RFX_EDIM, "%s: Out is %zu x %zu, expected %zu x %zu", where, Out.rows,
                          Out.cols, Q.rows, V.cols);
    if (causal && Q.rows != K.rows)
        return rfx__error(RFX_EDIM, "%s: causal attention needs as many queries as keys (%zu "
                                    "and %zu)", where, Q.rows, K.rows);
    int tmp;
    RFX__TRY(rfx__lapack_int(Q.stride, &tmp, where));
    RFX__TRY(rfx__lapack_int(K.stride, &tmp, where));
    RFX__TRY(rfx__lapack_int(V.stride, &tmp, where));
    RFX__TRY(rfx__lapack_int(Out.stride, &tmp, where));
    RFX__TRY(rfx__lapack_int(K.rows, &tmp, where));
    RFX__TRY(rfx__lapack_int(V.cols + 1, &tmp, where));
    char what[96];
    snprintf(what, sizeof what, "%s: Q", where);
    RFX__TRY(check_rows(Q, what));
    snprintf(what, sizeof what, "%s: K", where);
    RFX__TRY(check_rows(K, what));
    snprintf(what, sizeof what, "%s: V", where);
    RFX__TRY(check_rows(V, what));
    return RFX_OK;
}

/* The stabilised features of a chunk of keys and their sums.
 * P (rows x D): scale exp(a_j - m_j) per row j (its own maximum m_j), mk:
 * the m_j; returns the chunk maximum mc. When S is not NULL:
 * S = sum_j exp(m_j - mc) P_j [v_j, 1] (D x (dv + 1)), through E (rows x
 * (dv + 1)), the rows [v_j, 1] scaled by exp(m_j - mc). */
static double key_chunk(const rfx_softmax_features *sf, rfx_cmat K, rfx_cmat V, size_t r0,
                        size_t rows, double *P, double *mk, double *S, double *E)
{
    const size_t D = sf->D, dv = V.cols, w = dv + 1;
    exponents(sf, K.data + r0 * K.stride, K.stride, rows, P, D, mk);
    double mc = -INFINITY;
    for (size_t i = 0; i < rows; i++) {
        row_finish(sf, P + i * D, mk[i], mk[i]);
        if (mk[i] > mc) mc = mk[i];
    }
    if (!S) return mc;
    for (size_t i = 0; i < rows; i++) {
        double e = exp(mk[i] - mc);
        const double *v = V.data + (r0 + i) * V.stride;
        for (size_t c = 0; c < dv; c++) E[i * w + c] = e * v[c];
        E[i * w + dv] = e;
    }
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)D, (int)w, (int)rows, 1.0, P,
                (int)D, E, (int)w, 0.0, S, (int)w);
    return mc;
}

rfx_status rfx_attention_linear(const rfx_softmax_features *sf, rfx_cmat Q, rfx_cmat K,
                                rfx_cmat V, rfx_mat Out, int causal, int n_threads)
{
    static const char *where = "linear attention";
    if (!sf) return rfx__error(RFX_EINVAL, "%s: sf is NULL", where);
    RFX__TRY(check_attention(Q, K, V, Out, causal, n_threads, sf->d, where));
    const size_t Lq = Q.rows, Lk = K.rows, D = sf->D, dv = V.cols, w = dv + 1;
    const int nt = rfx__threads(n_threads);
    if (Lq == 0) return RFX_OK;
    /* key chunks: 64 rows when causal, else at most ATT_MAX_CHUNKS chunks */
    size_t crow = ATT_TILE;
    if (!causal && (Lk + ATT_MAX_CHUNKS - 1) / ATT_MAX_CHUNKS > crow)
        crow = (Lk + ATT_MAX_CHUNKS - 1) / ATT_MAX_CHUNKS;
    const size_t nch = (Lk + crow - 1) / crow;
    size_t sz, per, qrows = ATT_TILE;
    RFX__TRY(rfx__mul3(nch, D, w, &sz, "linear attention: chunk sums"));
    RFX__TRY(rfx__mul(sz, sizeof(double), &per, "linear attention: chunk sums"));
    /* per thread: key features and exponent maxima (crow x D, crow), E
     * (crow x w); query features (64 x D), maxima, the block A (64 x 64),
     * the running maxima, and T (64 x w) */
    size_t a1, a2, a3, ws_per;
    RFX__TRY(rfx__mul(crow, D + w + 1, &a1, "linear attention: workspace"));
    RFX__TRY(rfx__mul(qrows, D + w + 2 + ATT_TILE, &a2, "linear attention: workspace"));
    RFX__TRY(rfx__add(a1, a2, &a3, "linear attention: workspace"));
    ws_per = a3;
    size_t ws_all;
    RFX__TRY(rfx__mul3(ws_per, (size_t)nt, sizeof(double), &ws_all, "linear attention: workspace"));
    double *S = NULL, *acc = NULL, *mch = NULL, *ws = NULL;
    rfx_status st = rfx__alloc(sz, sizeof(double), (void **)&S, "linear attention: chunk sums");
    if (!st) st = rfx__calloc(D * w, sizeof(double), (void **)&acc, "linear attention: sums");
    if (!st) st = rfx__alloc(nch, 2 * sizeof(double), (void **)&mch, "linear attention: maxima");
    if (!st) st = rfx__alloc(ws_per * (size_t)nt, sizeof(double), (void **)&ws,
                             "linear attention: workspace");
    if (st) goto done;

    /* 1. the sums of each key chunk, with the chunk's maximum exponent */
#pragma omp parallel num_threads(nt) if (nch > 1 && Lk * D * (sf->d + w) >= ATT_PAR_MIN)
    {
        RFX__SERIAL_BLAS();
#ifdef _OPENMP
        double *tw = ws + (size_t)omp_get_thread_num() * ws_per;
#else
        double *tw = ws;
#endif
        double *P = tw, *mk = P + crow * D, *E = mk + crow;
#pragma omp for schedule(static)
        for (size_t c = 0; c < nch; c++) {
            size_t r0 = c * crow, rows = Lk - r0 < crow ? Lk - r0 : crow;
            mch[c] = key_chunk(sf, K, V, r0, rows, P, mk, S + c * D * w, E);
        }
    }
    /* 2. in chunk order: the running sum at a common scale exp(-M); causal
     * keeps each chunk's exclusive prefix (its own scale in mch[nch + c]) */
    double M = -INFINITY;
    for (size_t c = 0; c < nch; c++) {
        double Mn = mch[c] > M ? mch[c] : M, fa = exp(M - Mn), fs = exp(mch[c] - Mn);
        double *Sc = S + c * D * w;
        for (size_t k = 0; k < D * w; k++) {
            double prev = acc[k];
            acc[k] = prev * fa + Sc[k] * fs;
            if (causal) Sc[k] = prev;
        }
        mch[nch + c] = M;
        M = Mn;
    }
    /* 3. the queries, by tiles of 64 rows (the causal chunks) */
    const size_t tiles = (Lq + qrows - 1) / qrows;
    size_t bad = SIZE_MAX;
#pragma omp parallel num_threads(nt) if (tiles > 1 && Lq * D * (sf->d + w) >= ATT_PAR_MIN)
    {
        RFX__SERIAL_BLAS();
#ifdef _OPENMP
        double *tw = ws + (size_t)omp_get_thread_num() * ws_per;
#else
        double *tw = ws;
#endif
        double *P = tw, *mk = P + crow * D, *PQ = mk + crow + crow * w, *mq = PQ + qrows * D;
        double *A = mq + qrows, *Mi = A + qrows * ATT_TILE, *T = Mi + qrows;
#pragma omp for schedule(static) reduction(min : bad)
        for (size_t t = 0; t < tiles; t++) {
            size_t r0 = t * qrows, rows = Lq - r0 < qrows ? Lq - r0 : qrows;
            exponents(sf, Q.data + r0 * Q.stride, Q.stride, rows, PQ, D, mq);
            for (size_t i = 0; i < rows; i++) row_finish(sf, PQ + i * D, mq[i], mq[i]);
            /* the earlier keys' part: T = phi(Q_t) S (prefix or total) */
            const double *Sp = causal ? S + t * D * w : acc;
            double Mp = causal ? mch[nch + t] : M;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)w, (int)D, 1.0,
                        PQ, (int)D, Sp, (int)w, 0.0, T, (int)w);
            if (causal) {
                /* the chunk's own keys, j <= i, at the running maximum M_i */
                key_chunk(sf, K, V, r0, rows, P, mk, NULL, NULL);
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)rows,
                            (int)D, 1.0, PQ, (int)D, P, (int)D, 0.0, A, (int)ATT_TILE);
                double run = Mp;
                for (size_t i = 0; i < rows; i++) {
                    if (mk[i] > run) run = mk[i];
                    Mi[i] = run;
                }
                /* rescale to M_i, mask j > i, then T += A [V_c 1] */
                for (size_t i = 0; i < rows; i++) {
                    double f = exp(Mp - Mi[i]), *Ti = T + i * w, *Ai = A + i * ATT_TILE;
                    double rs = 0;
                    for (size_t c = 0; c < w; c++) Ti[c] *= f; /* 0 for the first chunk */
                    for (size_t j = 0; j <= i; j++) {
                        Ai[j] *= exp(mk[j] - Mi[i]);
                        rs += Ai[j];
                    }
                    for (size_t j = i + 1; j < rows; j++) Ai[j] = 0.0;
                    Ti[dv] += rs;
                }
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)dv,
                            (int)rows, 1.0, A, (int)ATT_TILE, V.data + r0 * V.stride,
                            (int)V.stride, 1.0, T, (int)w);
            }
            for (size_t i = 0; i < rows; i++) {
                const double *Ti = T + i * w;
                double *o = Out.data + (r0 + i) * Out.stride;
                if (!(Ti[dv] > 0) || !isfinite(Ti[dv])) {
                    if (r0 + i < bad) bad = r0 + i;
                    continue;
                }
                double inv = 1.0 / Ti[dv];
                for (size_t c = 0; c < dv; c++) o[c] = Ti[c] * inv;
            }
        }
    }
    if (bad != SIZE_MAX)
        st = sf->trig ? rfx__error(RFX_ENUMERIC,
                                   "%s: row %zu: the estimated normaliser is not positive (the "
                                   "trigonometric features' estimate can be negative; use more "
                                   "features, smaller inputs or the positive features)",
                                   where, bad)
                      : rfx__error(RFX_ENUMERIC,
                                   "%s: row %zu: every attention weight underflowed (the inputs "
                                   "are too large for the random features; scale Q and K down)",
                                   where, bad);
done:
    free(S);
    free(acc);
    free(mch);
    free(ws);
    return st;
}

rfx_status rfx_attention_gated(const rfx_softmax_features *sf, rfx_cmat Q, rfx_cmat K,
                               rfx_cmat V, const double *gates, rfx_mat Out, int n_threads)
{
    static const char *where = "gated attention";
    if (!sf) return rfx__error(RFX_EINVAL, "%s: sf is NULL", where);
    RFX__TRY(check_attention(Q, K, V, Out, 1, n_threads, sf->d, where));
    const size_t L = Q.rows, D = sf->D, dv = V.cols, w = dv + 1;
    if (L > 0 && !gates) return rfx__error(RFX_EINVAL, "%s: gates is NULL", where);
    for (size_t t = 0; t < L; t++)
        if (!(gates[t] >= 0 && gates[t] <= 1))
            return rfx__error(RFX_EINVAL, "%s: gates[%zu] must be in [0, 1], got %g", where, t,
                              gates[t]);
    if (L == 0) return RFX_OK;
    double *S = NULL, *PK = NULL, *PQ = NULL, *mk = NULL, *mq = NULL;
    rfx_status st = rfx__calloc(D * w, sizeof(double), (void **)&S, "gated attention: sums");
    if (!st) st = rfx__alloc(ATT_TILE * D, sizeof(double), (void **)&PK, "gated attention");
    if (!st) st = rfx__alloc(ATT_TILE * D, sizeof(double), (void **)&PQ, "gated attention");
    if (!st) st = rfx__alloc(ATT_TILE, sizeof(double), (void **)&mk, "gated attention");
    if (!st) st = rfx__alloc(ATT_TILE, sizeof(double), (void **)&mq, "gated attention");
    if (st) goto done;
    double M = -INFINITY; /* S holds the sums times exp(-M) */
    size_t bad = SIZE_MAX;
    for (size_t r0 = 0; r0 < L; r0 += ATT_TILE) {
        const size_t rows = L - r0 < ATT_TILE ? L - r0 : ATT_TILE;
        RFX__SERIAL(exponents(sf, K.data + r0 * K.stride, K.stride, rows, PK, D, mk))
        RFX__SERIAL(exponents(sf, Q.data + r0 * Q.stride, Q.stride, rows, PQ, D, mq))
        for (size_t i = 0; i < rows; i++) {
            row_finish(sf, PK + i * D, mk[i], mk[i]);
            row_finish(sf, PQ + i * D, mq[i], mq[i]);
        }
        for (size_t i = 0; i < rows; i++) {
            const size_t t = r0 + i;
            const double g = gates[t], Mn = mk[i] > M ? mk[i] : M;
            const double fa = g * exp(M - Mn), fb = (1.0 - g) * exp(mk[i] - Mn);
            const double *v = V.data + t * V.stride, *pk = PK + i * D, *pq = PQ + i * D;
            for (size_t j = 0; j < D; j++) {
                double *Sj = S + j * w, b = fb * pk[j];
                for (size_t c = 0; c < dv; c++) Sj[c] = fa * Sj[c] + b * v[c];
                Sj[dv] = fa * Sj[dv] + b;
            }
            M = Mn;
            double *o = Out.data + t * Out.stride, den = 0;
            for (size_t c = 0; c < dv; c++) o[c] = 0;
            for (size_t j = 0; j < D; j++) {
                const double *Sj = S + j * w;
                for (size_t c = 0; c < dv; c++) o[c] += pq[j] * Sj[c];
                den += pq[j] * Sj[dv];
            }
            if (!(den > 0) || !isfinite(den)) {
                if (t < bad) bad = t;
                continue;
            }
            for (size_t c = 0; c < dv; c++) o[c] /= den;
        }
    }
    if (bad != SIZE_MAX)
        st = rfx__error(RFX_ENUMERIC,
                        "%s: row %zu: the estimated normaliser is not positive (%s)", where, bad,
                        sf->trig ? "the trigonometric features' estimate can be negative; use "
                                   "more features, smaller inputs or the positive features"
                                 : "every weight underflowed; scale Q and K down");
done:
    free(S);
    free(PK);
    free(PQ);
    free(mk);
    free(mq);
    return st;
}

rfx_status rfx_attention_exact(rfx_cmat Q, rfx_cmat K, rfx_cmat V, rfx_mat Out, int causal,
                               int n_threads)
{
    static const char *where = "exact attention";
    RFX__TRY(check_attention(Q, K, V, Out, causal, n_threads, Q.cols, where));
    if (Q.cols == 0) return rfx__error(RFX_EDIM, "%s: Q and K have no columns", where);
    const size_t Lq = Q.rows, Lk = K.rows, dv = V.cols, T = ATT_TILE;
    const size_t tiles = (Lq + T - 1) / T;
    const int nt = rfx__threads(n_threads);
    if (Lq == 0) return RFX_OK;
    size_t per, all;
    RFX__TRY(rfx__mul(T, Lk, &per, "exact attention: score tiles"));
    RFX__TRY(rfx__mul3(per, (size_t)nt, sizeof(double), &all, "exact attention: score tiles"));
    double *ws;
    RFX__TRY(rfx__alloc(per * (size_t)nt, sizeof(double), (void **)&ws,
                        "exact attention: score tiles"));
#pragma omp parallel num_threads(nt) if (tiles > 1 && Lq * Lk * (Q.cols + dv) >= ATT_PAR_MIN)
    {
        RFX__SERIAL_BLAS();
#ifdef _OPENMP
        double *Sc = ws + (size_t)omp_get_thread_num() * per;
#else
        double *Sc = ws;
#endif
#pragma omp for schedule(static)
        for (size_t t = 0; t < tiles; t++) {
            size_t r0 = t * T, rows = Lq - r0 < T ? Lq - r0 : T;
            /* keys beyond the last row of the tile are masked anyway */
            size_t kn = causal ? r0 + rows : Lk;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)kn,
                        (int)Q.cols, 1.0, Q.data + r0 * Q.stride, (int)Q.stride, K.data,
                        (int)K.stride, 0.0, Sc, (int)Lk);
            for (size_t i = 0; i < rows; i++) {
                double *s = Sc + i * Lk, m = -INFINITY, sum = 0;
                size_t len = causal ? r0 + i + 1 : Lk;
                for (size_t j = 0; j < len; j++)
                    if (s[j] > m) m = s[j];
                for (size_t j = 0; j < len; j++) {
                    s[j] = exp(s[j] - m);
                    sum += s[j];
                }
                double inv = 1.0 / sum;
                for (size_t j = 0; j < len; j++) s[j] *= inv;
                for (size_t j = len; j < kn; j++) s[j] = 0.0;
            }
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)dv, (int)kn,
                        1.0, Sc, (int)Lk, V.data, (int)V.stride, 0.0,
                        Out.data + r0 * Out.stride, (int)Out.stride);
        }
    }
    free(ws);
    return RFX_OK;
}
