/* SPDX-License-Identifier: BSD-3-Clause */
/* Dense symmetric linear algebra over LAPACK (OpenBLAS ships the Fortran
 * LAPACK; calling it directly keeps one BLAS and one thread runtime). A
 * symmetric matrix is its own transpose, so a row-major array is passed to
 * the column-major routines as is; "L" there is the upper triangle here. */
#include "internal.h"

#include <math.h>
#include <string.h>

rfx_status rfx__chol(double *A, size_t n, int n_threads, const char *what)
{
    int nn, info = 0;
    RFX__TRY(rfx__lapack_int(n, &nn, what));
    (void)n_threads;
    RFX__SERIAL(dpotrf_("L", &nn, A, &nn, &info, 1))
    if (info < 0) return rfx__error(RFX_EINTERNAL, "%s: dpotrf argument %d invalid", what, -info);
    if (info > 0)
        return rfx__error(RFX_ENUMERIC,
                          "%s: matrix is not positive definite (leading minor %d); increase the "
                          "regularisation", what, info);
    for (size_t i = 1; i < n; i++) memset(A + i * n, 0, i * sizeof *A);
    return RFX_OK;
}

rfx_status rfx__chol_solve(const double *R, size_t n, double *B, size_t nrhs)
{
    int nn, nr, info = 0;
    RFX__TRY(rfx__lapack_int(n, &nn, "cholesky solve"));
    RFX__TRY(rfx__lapack_int(nrhs, &nr, "cholesky solve"));
    if (nrhs == 1) {
        RFX__SERIAL(dpotrs_("L", &nn, &nr, R, &nn, B, &nn, &info, 1))
    } else {
        double *T;
        RFX__TRY(rfx__alloc(n * nrhs, sizeof(double), (void **)&T, "cholesky solve"));
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < nrhs; k++) T[k * n + i] = B[i * nrhs + k];
        RFX__SERIAL(dpotrs_("L", &nn, &nr, R, &nn, T, &nn, &info, 1))
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < nrhs; k++) B[i * nrhs + k] = T[k * n + i];
        free(T);
    }
    if (info != 0) return rfx__error(RFX_EINTERNAL, "dpotrs failed (info %d)", info);
    return RFX_OK;
}

rfx_status rfx__eig_sym(double *A, size_t n, double *w, int n_threads, const char *what)
{
    int nn, info = 0, lwork = -1, liwork = -1, iq;
    double q;
    RFX__TRY(rfx__lapack_int(n, &nn, what));
    dsyevd_("V", "L", &nn, A, &nn, w, &q, &lwork, &iq, &liwork, &info, 1, 1);
    if (info != 0) return rfx__error(RFX_EINTERNAL, "%s: dsyevd workspace query failed", what);
    lwork = (int)q;
    liwork = iq;
    double *work;
    int *iwork;
    RFX__TRY(rfx__alloc((size_t)lwork, sizeof(double), (void **)&work, what));
    rfx_status st = rfx__alloc((size_t)liwork, sizeof(int), (void **)&iwork, what);
    if (st) {
        free(work);
        return st;
    }
    (void)n_threads;
    RFX__SERIAL(dsyevd_("V", "L", &nn, A, &nn, w, work, &lwork, iwork, &liwork, &info, 1, 1))
    free(work);
    free(iwork);
    if (info != 0)
        return rfx__error(RFX_ENUMERIC, "%s: the symmetric eigensolver did not converge (%d)", what,
                          info);
    return RFX_OK;
}

rfx_status rfx__svd_thin(double *A, size_t n, size_t N, double *sv, double *U, double *Vt,
                         const char *what)
{
    /* A row-major n x N is column-major A^T (N x n) = P S Q^T, so A = Q S P^T:
     * LAPACK's left vectors P (N x r, column-major) are the rows of Vt and
     * its Q^T (r x n, column-major) the columns of U */
    const size_t r = n < N ? n : N;
    int nn, NN, rr, info = 0, lwork = -1;
    double q;
    RFX__TRY(rfx__lapack_int(n, &nn, what));
    RFX__TRY(rfx__lapack_int(N, &NN, what));
    rr = (int)r;
    int *iwork;
    RFX__TRY(rfx__alloc(8 * r, sizeof(int), (void **)&iwork, what));
    dgesdd_("S", &NN, &nn, A, &NN, sv, Vt, &NN, U, &rr, &q, &lwork, iwork, &info, 1);
    if (info != 0) {
        free(iwork);
        return rfx__error(RFX_EINTERNAL, "%s: dgesdd workspace query failed", what);
    }
    lwork = (int)q;
    double *work;
    rfx_status st = rfx__alloc((size_t)lwork, sizeof(double), (void **)&work, what);
    if (st) {
        free(iwork);
        return st;
    }
    RFX__SERIAL(dgesdd_("S", &NN, &nn, A, &NN, sv, Vt, &NN, U, &rr, work, &lwork, iwork, &info, 1))
    free(work);
    free(iwork);
    if (info != 0)
        return rfx__error(RFX_ENUMERIC, "%s: the singular value decomposition did not converge (%d)",
                          what, info);
    return RFX_OK;
}

double rfx__chol_logdet(const double *R, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += log(R[i * n + i]);
    return 2.0 * s;
}

/* Eight partial sums in a fixed order (see internal.h); the compiler keeps
 * them in four two-lane registers, enough independent additions to keep
 * the loads busy. With four sums the adder's latency was the limit: on
 * rows of 160 and 800 values in cache (the lasso's and LARS's dot
 * products) they took 1.3 to 1.5 times as long. */
double rfx__dot(const double *a, const double *b, size_t n)
{
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) s[l] += a[i + l] * b[i + l];
    for (; i < n; i++) s[0] += a[i] * b[i];
    return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}
