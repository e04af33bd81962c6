/* Nystroem features (Williams & Seeger 2001): z(x) = k(x, L) N with N the
 * pseudo-inverse square root of K_LL = k(L, L). The math, the cutoff and
 * the costs are in include/rfx/nystroem.h.
 *
 * Thread-count independence: K_LL and the kernel blocks of a transform come
 * from rfx_kern_gram(_sym), bitwise independent of the thread count; the
 * eigensolver runs on one thread; the products k(X, L) N run in fixed tiles
 * of rows, each a single-threaded DGEMM. */
#include "internal.h"
#include "rfx/nystroem.h"

#include <math.h>
#include <string.h>

/* The Philox stream of the landmark draw ("nys"). */
#define NYSTROEM_STREAM 0x6e7973ull

/* Rows per tile of the products k(X, L) N. */
#define NYSTROEM_TILE 64

struct rfx_nystroem {
    rfx_kern *k;        /* held                                             */
    size_t m, d;
    double *L;          /* m x d landmarks                                  */
    size_t *idx;        /* m source rows, or NULL                           */
    double *N;          /* m x m normalisation                              */
    double *lambda;     /* m eigenvalues of K_LL, ascending                 */
    size_t rank;        /* eigenvalues above the cutoff                     */
    int n_threads;
};

void rfx_nystroem_free(rfx_nystroem *ny)
{
    if (!ny) return;
    rfx_kern_free(ny->k);
    free(ny->L);
    free(ny->idx);
    free(ny->N);
    free(ny->lambda);
    free(ny);
}

/* Checks of a kernel against a data matrix (rows >= min_rows, finite). */
static rfx_status check_input(const rfx_kern *k, rfx_cmat X, const char *what)
{
    if (!k) return rfx__error(RFX_EINVAL, "nystroem: kernel is NULL");
    RFX__TRY(rfx__check_cmat(X, what));
    if (X.rows == 0 || X.cols == 0)
        return rfx__error(RFX_EDIM, "%s is %zu x %zu; it needs a row and a column", what, X.rows,
                          X.cols);
    size_t kd = rfx_kern_input_dim(k);
    if (kd != 0 && kd != X.cols)
        return rfx__error(RFX_EDIM, "%s has %zu columns, the kernel expects %zu", what, X.cols, kd);
    return RFX_OK;
}

static rfx_status check_finite(rfx_cmat X, const char *what)
{
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "%s row %zu, column %zu: %g is not finite", what, r, c,
                          X.data[r * X.stride + c]);
    return RFX_OK;
}

/* K_LL, its eigenpairs and N = Q diag(s) Q^T, as B^T B with the kept rows
 * B_j = lambda_j^(-1/4) q_j (rows of the eigenvector matrix). */
static rfx_status build(rfx_nystroem *ny)
{
    const size_t m = ny->m;
    double *K;
    RFX__TRY(rfx__alloc(m * m, sizeof(double), (void **)&K, "nystroem: K_LL"));
    rfx_status st = rfx_kern_gram_sym(ny->k, rfx_cmat_of(ny->L, m, ny->d), rfx_mat_of(K, m, m),
                                      ny->n_threads);
    size_t r, c;
    if (!st && !rfx__all_finite(rfx_cmat_of(K, m, m), &r, &c))
        st = rfx__error(RFX_ENUMERIC, "nystroem: K_LL(%zu, %zu) = %g is not finite (the kernel "
                                      "overflowed)", r, c, K[r * m + c]);
    if (!st) st = rfx__eig_sym(K, m, ny->lambda, 1, "nystroem: eigendecomposition of K_LL");
    if (st) {
        free(K);
        return st;
    }
    const double top = ny->lambda[m - 1] > 0 ? ny->lambda[m - 1] : 0.0;
    const double cutoff = RFX_NYSTROEM_RCOND * top;
    size_t first = m; /* the kept eigenvalues are a suffix (ascending order) */
    while (first > 0 && ny->lambda[first - 1] > cutoff) first--;
    ny->rank = m - first;
    if (ny->rank == 0) {
        free(K);
        return rfx__error(RFX_ENUMERIC,
                          "nystroem: K_LL has no eigenvalue above the cutoff (largest %g)",
                          ny->lambda[m - 1]);
    }
    double *B = K + first * m;
    for (size_t j = 0; j < ny->rank; j++) {
        const double s = 1.0 / sqrt(sqrt(ny->lambda[first + j]));
        for (size_t a = 0; a < m; a++) B[j * m + a] *= s;
    }
    const int mm = (int)m, rk = (int)ny->rank;
    RFX__SERIAL(cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, mm, rk, 1.0, B, mm, 0.0, ny->N,
                            mm))
    for (size_t a = 0; a < m; a++)
        for (size_t b = 0; b < a; b++) ny->N[a * m + b] = ny->N[b * m + a];
    free(K);
    return RFX_OK;
}

/* The sizes m landmarks imply: m within LAPACK's int, m^2 within size_t. */
static rfx_status check_m(size_t m)
{
    int tmp;
    size_t cells;
    RFX__TRY(rfx__lapack_int(m, &tmp, "nystroem: n_components"));
    return rfx__mul(m, m, &cells, "nystroem: K_LL (m x m)");
}

static rfx_status fit(const rfx_kern *k, rfx_cmat L, size_t *idx, int n_threads,
                      rfx_nystroem **out)
{
    const size_t m = L.rows, d = L.cols, cells = m * m;
    rfx_nystroem *ny = calloc(1, sizeof *ny);
    if (!ny) return rfx__error(RFX_ENOMEM, "nystroem: cannot allocate");
    ny->m = m;
    ny->d = d;
    ny->n_threads = n_threads;
    rfx_status st = rfx_kern_scale(1.0, k, &ny->k); /* a held reference: exactly k */
    if (!st) st = rfx__alloc(m * d, sizeof(double), (void **)&ny->L, "nystroem: landmarks");
    if (!st) st = rfx__alloc(cells, sizeof(double), (void **)&ny->N, "nystroem: normalisation");
    if (!st) st = rfx__alloc(m, sizeof(double), (void **)&ny->lambda, "nystroem: eigenvalues");
    if (!st) {
        for (size_t a = 0; a < m; a++)
            memcpy(ny->L + a * d, L.data + a * L.stride, d * sizeof(double));
        st = build(ny);
    }
    if (st) {
        rfx_nystroem_free(ny);
        return st;
    }
    ny->idx = idx;
    *out = ny;
    return RFX_OK;
}

rfx_status rfx_nystroem_fit_landmarks(const rfx_kern *k, rfx_cmat L, int n_threads,
                                      rfx_nystroem **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "nystroem: out is NULL");
    RFX__TRY(check_input(k, L, "nystroem: L"));
    if (n_threads < 0)
        return rfx__error(RFX_EINVAL, "nystroem: n_threads must be >= 0, got %d", n_threads);
    RFX__TRY(check_m(L.rows));
    RFX__TRY(check_finite(L, "nystroem: L"));
    return fit(k, L, NULL, n_threads, out);
}

rfx_status rfx_nystroem_fit(const rfx_kern *k, rfx_cmat X, size_t n_components, uint64_t seed,
                            int n_threads, rfx_nystroem **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "nystroem: out is NULL");
    RFX__TRY(check_input(k, X, "nystroem: X"));
    const size_t n = X.rows, d = X.cols, m = n_components;
    if (m == 0 || m > n)
        return rfx__error(RFX_EINVAL, "nystroem: n_components must be in 1..%zu (the rows of X), "
                                      "got %zu", n, m);
    if (n_threads < 0)
        return rfx__error(RFX_EINVAL, "nystroem: n_threads must be >= 0, got %d", n_threads);
    RFX__TRY(check_m(m));
    RFX__TRY(check_finite(X, "nystroem: X"));
    /* a partial Fisher-Yates shuffle: position a takes a uniform pick of
       the rows not yet drawn */
    size_t *perm, *idx;
    double *L;
    RFX__TRY(rfx__alloc(n, sizeof(size_t), (void **)&perm, "nystroem: row permutation"));
    rfx_status st = rfx__alloc(m, sizeof(size_t), (void **)&idx, "nystroem: landmark rows");
    if (st) {
        free(perm);
        return st;
    }
    for (size_t i = 0; i < n; i++) perm[i] = i;
    rfx__rng r;
    rfx__rng_init(&r, seed, NYSTROEM_STREAM, 0);
    for (size_t a = 0; a < m; a++) {
        size_t span = n - a, j = a + (size_t)(rfx__rng_uniform(&r) * (double)span);
        if (j >= n) j = n - 1;
        size_t t = perm[a];
        perm[a] = perm[j];
        perm[j] = t;
        idx[a] = perm[a];
    }
    free(perm);
    st = rfx__alloc(m * d, sizeof(double), (void **)&L, "nystroem: landmarks");
    if (st) {
        free(idx);
        return st;
    }
    for (size_t a = 0; a < m; a++)
        memcpy(L + a * d, X.data + idx[a] * X.stride, d * sizeof(double));
    st = fit(k, rfx_cmat_of(L, m, d), idx, n_threads, out);
    free(L);
    if (st) free(idx);
    return st;
}

rfx_status rfx_nystroem_transform(const rfx_nystroem *ny, rfx_cmat X, rfx_mat Z)
{
    if (!ny) return rfx__error(RFX_EINVAL, "nystroem transform: ny is NULL");
    RFX__TRY(rfx__check_cmat(X, "nystroem transform: X"));
    RFX__TRY(rfx__check_mat(Z, "nystroem transform: Z"));
    const size_t n = X.rows, m = ny->m;
    if (X.cols != ny->d)
        return rfx__error(RFX_EDIM, "nystroem transform: X has %zu columns, the map expects %zu",
                          X.cols, ny->d);
    if (Z.rows != n || Z.cols != m)
        return rfx__error(RFX_EDIM, "nystroem transform: Z is %zu x %zu, expected %zu x %zu",
                          Z.rows, Z.cols, n, m);
    if (Z.stride > 2147483647u)
        return rfx__error(RFX_EOVERFLOW,
                          "nystroem transform: the stride of Z exceeds the BLAS integer range");
    RFX__TRY(check_finite(X, "nystroem transform: X"));
    if (n == 0) return RFX_OK;
    /* chunks of whole tiles, about 8 MiB of kernel values each */
    size_t B = rfx__chunk_rows(m);
    B -= B % NYSTROEM_TILE;
    const size_t chunk = n < B ? n : B;
    double *Kx;
    RFX__TRY(rfx__alloc(chunk * m, sizeof(double), (void **)&Kx, "nystroem transform: k(X, L)"));
    const int nt = rfx__threads(ny->n_threads), mm = (int)m;
    rfx_status st = RFX_OK;
    for (size_t r0 = 0; r0 < n && !st; r0 += chunk) {
        const size_t nr = n - r0 < chunk ? n - r0 : chunk;
        rfx_cmat Xc = {X.data + r0 * X.stride, nr, X.cols, X.stride};
        st = rfx_kern_gram(ny->k, Xc, rfx_cmat_of(ny->L, m, ny->d), rfx_mat_of(Kx, nr, m),
                           ny->n_threads);
        if (st) break;
        const size_t tiles = (nr + NYSTROEM_TILE - 1) / NYSTROEM_TILE;
        double *Zc = Z.data + r0 * Z.stride;
#pragma omp parallel num_threads(nt) if (tiles > 1)
        {
            RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
            for (size_t t = 0; t < tiles; t++) {
                const size_t a0 = t * NYSTROEM_TILE;
                const int rows = (int)(nr - a0 < NYSTROEM_TILE ? nr - a0 : NYSTROEM_TILE);
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, mm, mm, 1.0,
                            Kx + a0 * m, mm, ny->N, mm, 0.0, Zc + a0 * Z.stride, (int)Z.stride);
            }
        }
    }
    free(Kx);
    return st;
}

rfx_cmat rfx_nystroem_landmarks(const rfx_nystroem *ny)
{
    if (!ny) return rfx_cmat_none();
    return rfx_cmat_of(ny->L, ny->m, ny->d);
}

const size_t *rfx_nystroem_landmark_indices(const rfx_nystroem *ny)
{
    return ny ? ny->idx : NULL;
}

size_t rfx_nystroem_n_components(const rfx_nystroem *ny)
{
    return ny ? ny->m : 0;
}

size_t rfx_nystroem_output_dim(const rfx_nystroem *ny)
{
    return ny ? ny->m : 0;
}

size_t rfx_nystroem_input_dim(const rfx_nystroem *ny)
{
    return ny ? ny->d : 0;
}

size_t rfx_nystroem_rank(const rfx_nystroem *ny)
{
    return ny ? ny->rank : 0;
}

rfx_cmat rfx_nystroem_normalization(const rfx_nystroem *ny)
{
    if (!ny) return rfx_cmat_none();
    return rfx_cmat_of(ny->N, ny->m, ny->m);
}

const double *rfx_nystroem_eigenvalues(const rfx_nystroem *ny)
{
    return ny ? ny->lambda : NULL;
}
