/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel ridge regression (rfx/kernels.h): (K + lambda I) A = Y by
 * Cholesky, f(x) = k(x, X) A. */
#include "kern_internal.h"

#include <math.h>
#include <string.h>

struct rfx_krr {
    rfx_kern *k;      /* referenced                                    */
    size_t n, d, ny;
    double *X;        /* n x d training rows                           */
    double *A;        /* n x ny dual coefficients                      */
    double lambda;
    int n_threads;
};

void rfx_krr_free(rfx_krr *m)
{
    if (!m) return;
    rfx_kern_free(m->k);
    free(m->X);
    free(m->A);
    free(m);
}

rfx_status rfx_krr_fit(const rfx_kern *k, rfx_cmat X, rfx_cmat Y, double lambda, int n_threads,
                       rfx_krr **out)
{
    return rfx_krr_fit_weighted(k, X, Y, lambda, NULL, n_threads, out);
}

/* Weighted rows enter as the system of rows scaled by s_i = sqrt(w_i):
 * (S K S + lambda I) B = S Y, A = S B. Without weights S = I and no
 * scaling is done, so the bits are those of the plain fit. */
rfx_status rfx_krr_fit_weighted(const rfx_kern *k, rfx_cmat X, rfx_cmat Y, double lambda,
                                const double *w, int n_threads, rfx_krr **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "krr_fit: out is NULL");
    if (!k) return rfx__error(RFX_EINVAL, "krr_fit: kernel is NULL");
    if (!(lambda >= 0 && isfinite(lambda)))
        return rfx__error(RFX_EINVAL, "krr_fit: lambda must be >= 0 and finite, got %g", lambda);
    RFX__TRY(rfx__kern_check_threads(n_threads, "krr_fit"));
    RFX__TRY(rfx__check_cmat(X, "krr_fit: X"));
    RFX__TRY(rfx__check_cmat(Y, "krr_fit: Y"));
    if (X.rows == 0) return rfx__error(RFX_EINVAL, "krr_fit: X has no rows");
    if (Y.rows != X.rows)
        return rfx__error(RFX_EDIM, "krr_fit: Y has %zu rows, X %zu", Y.rows, X.rows);
    if (Y.cols == 0) return rfx__error(RFX_EDIM, "krr_fit: Y has no columns");
    if (w) RFX__TRY(rfx__check_weights(w, X.rows, "krr_fit.sample_weight"));
    if (w && lambda == 0)
        for (size_t i = 0; i < X.rows; i++)
            if (w[i] == 0)
                return rfx__error(RFX_EINVAL, "krr_fit.sample_weight[%zu]: a zero weight needs "
                                  "lambda > 0", i);
    size_t r, c;
    if (!rfx__all_finite(Y, &r, &c))
        return rfx__error(RFX_EPARSE, "krr_fit: Y row %zu, column %zu is not finite", r, c);
    const size_t n = X.rows, d = X.cols, ny = Y.cols;
    size_t nn, nd, nyy;
    RFX__TRY(rfx__mul(n, n, &nn, "krr_fit: Gram matrix"));
    RFX__TRY(rfx__mul(n, d, &nd, "krr_fit: training rows"));
    RFX__TRY(rfx__mul(n, ny, &nyy, "krr_fit: coefficients"));
    int nn_int;
    RFX__TRY(rfx__lapack_int(n, &nn_int, "krr_fit"));
    rfx_krr *m;
    RFX__TRY(rfx__calloc(1, sizeof *m, (void **)&m, "krr_fit"));
    double *K = NULL;
    rfx_status st = rfx__alloc(nn, sizeof(double), (void **)&K, "krr_fit: Gram matrix");
    if (!st) st = rfx__alloc(nd, sizeof(double), (void **)&m->X, "krr_fit: training rows");
    if (!st) st = rfx__alloc(nyy, sizeof(double), (void **)&m->A, "krr_fit: coefficients");
    if (!st) {
        st = rfx_kern_gram_sym(k, X, rfx_mat_of(K, n, n), n_threads);
        if (st) rfx__error_prefix("krr_fit");
    }
    if (!st && w)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) K[i * n + j] *= sqrt(w[i]) * sqrt(w[j]);
    if (!st) {
        for (size_t i = 0; i < n; i++) K[i * n + i] += lambda;
        st = rfx__chol(K, n, n_threads, "krr_fit: K + lambda I");
    }
    if (!st) {
        for (size_t i = 0; i < n; i++) {
            memcpy(m->X + i * d, X.data + i * X.stride, d * sizeof(double));
            memcpy(m->A + i * ny, Y.data + i * Y.stride, ny * sizeof(double));
            if (w)
                for (size_t j = 0; j < ny; j++) m->A[i * ny + j] *= sqrt(w[i]);
        }
        st = rfx__chol_solve(K, n, m->A, ny);
    }
    if (!st && w)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < ny; j++) m->A[i * ny + j] *= sqrt(w[i]);
    free(K);
    if (st) {
        rfx_krr_free(m);
        return st;
    }
    m->k = (rfx_kern *)k;
    atomic_fetch_add_explicit(&m->k->refs, 1, memory_order_relaxed);
    m->n = n;
    m->d = d;
    m->ny = ny;
    m->lambda = lambda;
    m->n_threads = n_threads;
    *out = m;
    return RFX_OK;
}

/* Rows of X per chunk of predictions: k(X_chunk, X_train) about 8 MiB. */
static size_t chunk_rows(size_t n)
{
    size_t r = ((size_t)1 << 20) / (n ? n : 1);
    r = (r / 64) * 64;
    return r < 64 ? 64 : r;
}

rfx_status rfx_krr_predict(const rfx_krr *m, rfx_cmat X, rfx_mat Yhat)
{
    if (!m) return rfx__error(RFX_EINVAL, "krr_predict: model is NULL");
    RFX__TRY(rfx__check_cmat(X, "krr_predict: X"));
    RFX__TRY(rfx__check_mat(Yhat, "krr_predict: Yhat"));
    if (X.cols != m->d)
        return rfx__error(RFX_EDIM, "krr_predict: X has %zu columns, the model was fitted on %zu",
                          X.cols, m->d);
    if (Yhat.rows != X.rows || Yhat.cols != m->ny)
        return rfx__error(RFX_EDIM, "krr_predict: Yhat is %zu x %zu, expected %zu x %zu",
                          Yhat.rows, Yhat.cols, X.rows, m->ny);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "krr_predict: X row %zu, column %zu is not finite", r, c);
    if (X.rows == 0) return RFX_OK;
    const size_t n = m->n, rows = X.rows < chunk_rows(n) ? X.rows : chunk_rows(n);
    double *Kc, *P;
    size_t mny;
    RFX__TRY(rfx__mul(X.rows, m->ny, &mny, "krr_predict: predictions"));
    size_t wsz;
    RFX__TRY(rfx__add(rows * n, mny, &wsz, "krr_predict: workspace"));
    RFX__TRY(rfx__alloc(wsz, sizeof(double), (void **)&Kc, "krr_predict: workspace"));
    P = Kc + rows * n;
    rfx_cmat Xt = rfx_cmat_of(m->X, n, m->d);
    rfx_status st = RFX_OK;
    for (size_t r0 = 0; r0 < X.rows && !st; r0 += rows) {
        size_t nr = X.rows - r0 < rows ? X.rows - r0 : rows;
        rfx_cmat Xc = {X.data + r0 * X.stride, nr, X.cols, X.stride};
        st = rfx_kern_gram(m->k, Xc, Xt, rfx_mat_of(Kc, nr, n), m->n_threads);
        if (st) {
            rfx__error_prefix("krr_predict");
            break;
        }
        RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nr, (int)m->ny,
                                (int)n, 1.0, Kc, (int)n, m->A, (int)m->ny, 0.0,
                                P + r0 * m->ny, (int)m->ny))
    }
    if (!st)
        for (size_t i = 0; i < X.rows; i++)
            memcpy(Yhat.data + i * Yhat.stride, P + i * m->ny, m->ny * sizeof(double));
    free(Kc);
    return st;
}

rfx_cmat rfx_krr_dual_coef(const rfx_krr *m)
{
    if (!m) return rfx_cmat_none();
    return rfx_cmat_of(m->A, m->n, m->ny);
}
