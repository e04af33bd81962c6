/* SPDX-License-Identifier: BSD-3-Clause */
/* Nystroem features (Williams & Seeger 2001): z(x) = k(x, L) N with N the
 * pseudo-inverse square root of K_LL = k(L, L). The math, the cutoff and
 * the costs are in include/rfx/nystroem.h.
 *
 * Thread-count independence: K_LL and the kernel blocks of a transform come
 * from rfx_kern_gram(_sym), bitwise independent of the thread count; the
 * eigensolver runs on one thread; the products k(X, L) N run in fixed tiles
 * of rows, each a single-threaded DGEMM. */
#include "internal.h"
#include "kernels/kern_internal.h"
#include "rfx/nystroem.h"

#include <math.h>
#include <stdlib.h>
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

/* m rows of 0..n-1 drawn uniformly without replacement, in the order drawn
 * (a partial Fisher-Yates shuffle: position a takes a uniform pick of the
 * rows not yet drawn), from (seed, substream). */
static rfx_status uniform_rows(size_t n, size_t m, uint64_t seed, uint64_t substream, size_t *idx)
{
    size_t *perm;
    RFX__TRY(rfx__alloc(n, sizeof(size_t), (void **)&perm, "nystroem: row permutation"));
    for (size_t i = 0; i < n; i++) perm[i] = i;
    rfx__rng r;
    rfx__rng_init(&r, seed, NYSTROEM_STREAM, substream);
    for (size_t a = 0; a < m; a++) {
        size_t span = n - a, j = a + (size_t)(rfx__rng_uniform(&r) * (double)span);
        if (j >= n) j = n - 1;
        size_t t = perm[a];
        perm[a] = perm[j];
        perm[j] = t;
        idx[a] = perm[a];
    }
    free(perm);
    return RFX_OK;
}

/* The map of the rows idx (m of them) of X; takes idx (freed on error). */
static rfx_status fit_rows(const rfx_kern *k, rfx_cmat X, size_t *idx, size_t m, int n_threads,
                           rfx_nystroem **out)
{
    const size_t d = X.cols;
    double *L;
    rfx_status st = rfx__alloc(m * d, sizeof(double), (void **)&L, "nystroem: landmarks");
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

rfx_nystroem_params rfx_nystroem_params_default(void)
{
    rfx_nystroem_params p;
    memset(&p, 0, sizeof p);
    p.n_components = 100;
    p.landmarks = RFX_LANDMARKS_UNIFORM;
    p.seed = 0;
    p.n_threads = 0;
    p.lambda = 1e-3;
    p.kmeans_iterations = 10;
    return p;
}

rfx_status rfx_nystroem_params_check(const rfx_nystroem_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "nystroem: params is NULL");
    if (p->landmarks != RFX_LANDMARKS_UNIFORM && p->landmarks != RFX_LANDMARKS_KMEANS &&
        p->landmarks != RFX_LANDMARKS_LEVERAGE)
        return rfx__error(RFX_EINVAL, "nystroem: landmarks: unknown strategy %d", (int)p->landmarks);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "nystroem: n_threads must be >= 0, got %d", p->n_threads);
    if (!(p->lambda > 0 && isfinite(p->lambda)))
        return rfx__error(RFX_EINVAL, "nystroem: lambda must be > 0 and finite, got %g", p->lambda);
    return RFX_OK;
}

/* ---- ridge leverage scores ------------------------------------------------ */

/* Approximate ridge leverage scores l_i = [K (K + n lam I)^-1]_ii of the n
 * rows (Alaoui & Mahoney, "Fast randomized kernel ridge regression with
 * statistical guarantees", NIPS 2015), lam = lambda times the mean k(x, x),
 * by the regularised Nystroem estimate of Musco & Musco ("Recursive
 * sampling for the Nystroem method", NIPS 2017) on s uniform rows S:
 *   l_i ~ (k(x_i, x_i) - k_iS (K_SS + n lam I)^-1 k_Si) / (n lam),
 * an upper bound of l_i for any S, exact when S holds every row. One pass
 * of kernel rows: O(n s d + n s^2). The sum of the l_i is the effective
 * dimension d_eff = tr K (K + n lam I)^-1 (over-estimated by the bound). */
rfx_status rfx__nystroem_leverage(const rfx_kern *k, rfx_cmat X, double lambda, size_t s,
                                  uint64_t seed, int n_threads, double *scores)
{
    const size_t n = X.rows, d = X.cols, tile = 256;
    if (s > n) s = n;
    size_t *idx = NULL;
    double *L = NULL, *C = NULL, *Kx = NULL, *V = NULL, *diag = NULL;
    rfx_status st = rfx__alloc(s, sizeof *idx, (void **)&idx, "nystroem: leverage");
    if (!st) st = rfx__alloc(s * d, sizeof *L, (void **)&L, "nystroem: leverage");
    if (!st) st = rfx__alloc(s * s, sizeof *C, (void **)&C, "nystroem: leverage");
    if (!st) st = rfx__alloc(tile * s, sizeof *Kx, (void **)&Kx, "nystroem: leverage");
    if (!st) st = rfx__alloc(tile * s, sizeof *V, (void **)&V, "nystroem: leverage");
    if (!st) st = rfx__alloc(n, sizeof *diag, (void **)&diag, "nystroem: leverage");
    if (!st) st = uniform_rows(n, s, seed, 1, idx);
    if (!st) st = rfx_kern_diag(k, X, diag);
    double mean = 0;
    for (size_t i = 0; !st && i < n; i++) mean += diag[i];
    const double nlam = (double)n * lambda * (mean > 0 ? mean / (double)n : 1.0);
    if (!st) {
        for (size_t a = 0; a < s; a++) memcpy(L + a * d, X.data + idx[a] * X.stride, d * sizeof *L);
        st = rfx_kern_gram_sym(k, rfx_cmat_of(L, s, d), rfx_mat_of(C, s, s), n_threads);
    }
    if (!st) {
        for (size_t a = 0; a < s; a++) C[a * s + a] += nlam;
        st = rfx__chol(C, s, 1, "nystroem: leverage scores (K_SS + n lambda I)");
    }
    for (size_t r0 = 0; !st && r0 < n; r0 += tile) {
        size_t nr = n - r0 < tile ? n - r0 : tile;
        rfx_cmat Xt = {X.data + r0 * X.stride, nr, d, X.stride};
        st = rfx_kern_gram(k, Xt, rfx_cmat_of(L, s, d), rfx_mat_of(Kx, nr, s), n_threads);
        if (st) break;
        memcpy(V, Kx, nr * s * sizeof *V);
        for (size_t i = 0; i < nr && !st; i++) st = rfx__chol_solve(C, s, V + i * s, 1);
        for (size_t i = 0; i < nr && !st; i++) {
            double r = diag[r0 + i] - rfx__dot(Kx + i * s, V + i * s, s);
            scores[r0 + i] = (r > 0 ? r : 0.0) / nlam;
        }
    }
    free(idx);
    free(L);
    free(C);
    free(Kx);
    free(V);
    free(diag);
    return st;
}

/* The keys the comparison below reads (qsort takes no context; set only
 * around one sort, which runs on the calling thread). */
static _Thread_local const double *sort_keys;

/* Decreasing key, then increasing row: a total order, so the result does
 * not depend on the sort's algorithm. */
static int by_key_desc(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    if (sort_keys[a] != sort_keys[b]) return sort_keys[a] > sort_keys[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* m rows drawn without replacement with probabilities proportional to w
 * (Efraimidis & Spirakis 2006: the m largest keys log(u_i) / w_i), in
 * decreasing key order. */
static rfx_status weighted_rows(const double *w, size_t n, size_t m, uint64_t seed, size_t *idx)
{
    double *key;
    size_t *order;
    RFX__TRY(rfx__alloc(n, sizeof *key, (void **)&key, "nystroem: sampling keys"));
    rfx_status st = rfx__alloc(n, sizeof *order, (void **)&order, "nystroem: sampling keys");
    if (st) {
        free(key);
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        rfx__rng r;
        rfx__rng_init(&r, seed, NYSTROEM_STREAM, 2 + (uint64_t)i);
        double u = rfx__rng_uniform(&r);
        key[i] = w[i] > 0 ? log(u) / w[i] : -INFINITY;
        order[i] = i;
    }
    /* the m largest keys (ties by the lower row): one sort, O(n log n),
     * where a selection by repeated maxima cost O(n m) */
    sort_keys = key;
    qsort(order, n, sizeof *order, by_key_desc);
    sort_keys = NULL;
    memcpy(idx, order, m * sizeof *idx);
    free(key);
    free(order);
    return RFX_OK;
}

/* ---- k-means landmarks ------------------------------------------------------ */

static double sq_dist(const double *a, const double *b, size_t d)
{
    double s = 0;
    for (size_t j = 0; j < d; j++) {
        double t = a[j] - b[j];
        s += t * t;
    }
    return s;
}

/* m centres of X by k-means++ seeding (Arthur & Vassilvitskii 2007) and
 * Lloyd's iterations (Zhang, Tsang & Kwok, "Improved Nystroem low-rank
 * approximation and error analysis", ICML 2008: the k-means centres as
 * landmarks), in the Euclidean distance of the inputs as given. The
 * assignment runs in parallel over rows (each row's nearest centre, ties
 * to the lower index); the centres are sums in row order: the same bits
 * for any thread count. An empty cluster keeps its centre. */
static rfx_status kmeans_centres(rfx_cmat X, size_t m, size_t iterations, uint64_t seed,
                                 int n_threads, double *L)
{
    const size_t n = X.rows, d = X.cols;
    double *dmin = NULL, *sum = NULL;
    size_t *assign = NULL, *count = NULL;
    rfx_status st = rfx__alloc(n, sizeof *dmin, (void **)&dmin, "nystroem: k-means");
    if (!st) st = rfx__alloc(n, sizeof *assign, (void **)&assign, "nystroem: k-means");
    if (!st) st = rfx__alloc(m * d, sizeof *sum, (void **)&sum, "nystroem: k-means");
    if (!st) st = rfx__alloc(m, sizeof *count, (void **)&count, "nystroem: k-means");
    if (st) goto done;
    rfx__rng r;
    rfx__rng_init(&r, seed, NYSTROEM_STREAM, ((uint64_t)1 << 62));
    size_t first = (size_t)(rfx__rng_uniform(&r) * (double)n);
    if (first >= n) first = n - 1;
    memcpy(L, X.data + first * X.stride, d * sizeof *L);
    for (size_t i = 0; i < n; i++) dmin[i] = sq_dist(X.data + i * X.stride, L, d);
    for (size_t c = 1; c < m; c++) {
        double total = 0;
        for (size_t i = 0; i < n; i++) total += dmin[i];
        size_t pick = n - 1;
        if (total > 0) {
            double t = rfx__rng_uniform(&r) * total, acc = 0;
            for (size_t i = 0; i < n; i++) {
                acc += dmin[i];
                if (acc >= t && dmin[i] > 0) {
                    pick = i;
                    break;
                }
            }
        } else {
            pick = (size_t)(rfx__rng_uniform(&r) * (double)n) % n; /* all points chosen */
        }
        memcpy(L + c * d, X.data + pick * X.stride, d * sizeof *L);
        for (size_t i = 0; i < n; i++) {
            double t = sq_dist(X.data + i * X.stride, L + c * d, d);
            if (t < dmin[i]) dmin[i] = t;
        }
    }
    const int nt = rfx__threads(n_threads);
    for (size_t it = 0; it < iterations; it++) {
        size_t changed = 0;
#pragma omp parallel for num_threads(nt) schedule(static) reduction(+ : changed) if (n * m * d > 100000)
        for (size_t i = 0; i < n; i++) {
            const double *x = X.data + i * X.stride;
            size_t best = 0;
            double bd = sq_dist(x, L, d);
            for (size_t c = 1; c < m; c++) {
                double t = sq_dist(x, L + c * d, d);
                if (t < bd) {
                    bd = t;
                    best = c;
                }
            }
            if (it == 0 || assign[i] != best) changed++;
            assign[i] = best;
        }
        if (changed == 0) break;
        memset(sum, 0, m * d * sizeof *sum);
        memset(count, 0, m * sizeof *count);
        for (size_t i = 0; i < n; i++) {
            const double *x = X.data + i * X.stride;
            for (size_t j = 0; j < d; j++) sum[assign[i] * d + j] += x[j];
            count[assign[i]]++;
        }
        for (size_t c = 0; c < m; c++)
            if (count[c])
                for (size_t j = 0; j < d; j++) L[c * d + j] = sum[c * d + j] / (double)count[c];
    }
done:
    free(dmin);
    free(assign);
    free(sum);
    free(count);
    return st;
}

rfx_status rfx_nystroem_fit_params(const rfx_kern *k, rfx_cmat X, const rfx_nystroem_params *p,
                                   rfx_nystroem **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "nystroem: out is NULL");
    RFX__TRY(rfx_nystroem_params_check(p));
    RFX__TRY(check_input(k, X, "nystroem: X"));
    const size_t n = X.rows, d = X.cols;
    size_t m = p->n_components;
    if (m > n)
        return rfx__error(RFX_EINVAL, "nystroem: n_components must be in 0..%zu (the rows of X; "
                                      "0: the size rule), got %zu", n, m);
    if (m > 0) RFX__TRY(check_m(m));
    RFX__TRY(check_finite(X, "nystroem: X"));
    double *scores = NULL;
    rfx_status st = RFX_OK;
    if (m == 0 || p->landmarks == RFX_LANDMARKS_LEVERAGE) {
        /* the scores from max(512, 2 m) uniform rows */
        size_t s = m == 0 ? 512 : (2 * m > 512 ? 2 * m : 512);
        RFX__TRY(rfx__alloc(n, sizeof *scores, (void **)&scores, "nystroem: leverage scores"));
        st = rfx__nystroem_leverage(k, X, p->lambda, s, p->seed, p->n_threads, scores);
        if (!st && m == 0) {
            /* the size rule: m = d_eff ln n, d_eff the sum of the scores */
            double deff = 0;
            for (size_t i = 0; i < n; i++) deff += scores[i];
            double want = ceil(deff * log((double)(n > 2 ? n : 2)));
            m = want < 1 ? 1 : want > (double)n ? n : (size_t)want;
        }
    }
    if (!st) st = check_m(m);
    if (st) {
        free(scores);
        return st;
    }
    if (p->landmarks == RFX_LANDMARKS_KMEANS) {
        free(scores);
        double *L;
        RFX__TRY(rfx__alloc(m * d, sizeof *L, (void **)&L, "nystroem: k-means centres"));
        st = kmeans_centres(X, m, p->kmeans_iterations, p->seed, p->n_threads, L);
        if (!st) st = fit(k, rfx_cmat_of(L, m, d), NULL, p->n_threads, out);
        free(L);
        return st;
    }
    size_t *idx;
    st = rfx__alloc(m, sizeof(size_t), (void **)&idx, "nystroem: landmark rows");
    if (!st)
        st = p->landmarks == RFX_LANDMARKS_LEVERAGE ? weighted_rows(scores, n, m, p->seed, idx)
                                                    : uniform_rows(n, m, p->seed, 0, idx);
    free(scores);
    if (st) {
        free(idx);
        return st;
    }
    return fit_rows(k, X, idx, m, p->n_threads, out);
}

rfx_status rfx_nystroem_fit(const rfx_kern *k, rfx_cmat X, size_t n_components, uint64_t seed,
                            int n_threads, rfx_nystroem **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "nystroem: out is NULL");
    RFX__TRY(check_input(k, X, "nystroem: X"));
    if (n_components == 0 || n_components > X.rows)
        return rfx__error(RFX_EINVAL, "nystroem: n_components must be in 1..%zu (the rows of X), "
                                      "got %zu", X.rows, n_components);
    if (n_threads < 0)
        return rfx__error(RFX_EINVAL, "nystroem: n_threads must be >= 0, got %d", n_threads);
    rfx_nystroem_params p = rfx_nystroem_params_default();
    p.n_components = n_components;
    p.seed = seed;
    p.n_threads = n_threads;
    return rfx_nystroem_fit_params(k, X, &p, out);
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
