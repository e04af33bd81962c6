/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mergeable sufficient statistics of a linear model on random features.
 * Streaming, cross-validation folds and distributed fits all reduce to
 * "accumulate per part, then add": Z^T Z, Z^T y, sum z, sum y, sum y^2.
 * Targets are accumulated about a shift (the mean of the first rows seen)
 * so that a large common offset in y does not cancel in y^T y.
 */
#include "internal.h"

#include <math.h>
#include <string.h>


rfx_status rfx_stats_create(size_t n_features, size_t n_targets, rfx_stats **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "stats: out is NULL");
    if (n_features == 0) return rfx__error(RFX_EINVAL, "stats: n_features must be >= 1");
    if (n_features > 2147483647u)
        return rfx__error(RFX_EOVERFLOW, "stats: n_features %zu exceeds the BLAS range", n_features);
    size_t dd, dy;
    RFX__TRY(rfx__mul(n_features, n_features, &dd, "stats: D x D"));
    RFX__TRY(rfx__mul(n_features, n_targets, &dy, "stats: D x ny"));
    rfx_stats *s = calloc(1, sizeof *s);
    if (!s) return rfx__error(RFX_ENOMEM, "stats: cannot allocate");
    s->D = n_features;
    s->ny = n_targets;
    rfx_status st = rfx__calloc(dd, sizeof(double), (void **)&s->ztz, "stats: Z^T Z");
    if (!st) st = rfx__calloc(dy, sizeof(double), (void **)&s->zty, "stats: Z^T Y");
    if (!st) st = rfx__calloc(n_features, sizeof(double), (void **)&s->zsum, "stats: sums");
    if (!st) st = rfx__calloc(n_targets, sizeof(double), (void **)&s->ysum, "stats: sums");
    if (!st) st = rfx__calloc(n_targets, sizeof(double), (void **)&s->yy, "stats: sums");
    if (!st) st = rfx__calloc(n_targets, sizeof(double), (void **)&s->shift, "stats: shift");
    if (st) {
        rfx_stats_free(s);
        return st;
    }
    *out = s;
    return RFX_OK;
}

void rfx_stats_free(rfx_stats *s)
{
    if (!s) return;
    free(s->ztz);
    free(s->zty);
    free(s->zsum);
    free(s->ysum);
    free(s->yy);
    free(s->shift);
    free(s);
}

size_t rfx_stats_rows(const rfx_stats *s) { return s ? s->n : 0; }

/* The column tile of the Z^T Z update: a function of D alone (never of the
 * thread count, so the bits do not change with it). Large tiles keep each
 * GEMM near peak; half of D makes three tasks (two SYRK halves and one GEMM,
 * equal work) for D <= 4096, a balanced load on two cores. */
static size_t syrk_tile(size_t D)
{
    size_t t = ((D + 1) / 2 + 63) / 64 * 64;
    if (t < 256) t = 256;
    if (t > 2048) t = 2048;
    return t;
}

/* Tile pair p of the upper triangle (row by row: (0,0), (0,1), .., (1,1),
 * ..) of T x T tiles of side tile over D: its row and column offsets and
 * extents. */
static void tile_pair(size_t p, size_t T, size_t tile, size_t D, size_t *i0, size_t *j0,
                      size_t *ni, size_t *nj)
{
    size_t ti = 0, q = p;
    while (q >= T - ti) {
        q -= T - ti;
        ti++;
    }
    *i0 = ti * tile;
    *j0 = (ti + q) * tile;
    *ni = D - *i0 < tile ? D - *i0 : tile;
    *nj = D - *j0 < tile ? D - *j0 : tile;
}

/* Z^T Z += Z_blk^T Z_blk on the upper triangle, tile pair by tile pair,
 * each by a single-threaded BLAS call. The tiling is fixed, so each element
 * sees the same operations whatever the thread count (a threaded BLAS DSYRK
 * does not promise that: its split moves with the thread count and so do
 * the bits). Cost: rows D^2 flops (half a GEMM). */
static void syrk_tiled(double *C, size_t D, const double *Z, size_t ldz, size_t rows, int nt)
{
    const size_t tile = syrk_tile(D);
    const size_t T = (D + tile - 1) / tile, pairs = T * (T + 1) / 2;
#pragma omp parallel num_threads(nt) if (pairs > 1)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(dynamic, 1)
        for (size_t p = 0; p < pairs; p++) {
            size_t i0, j0, ni, nj;
            tile_pair(p, T, tile, D, &i0, &j0, &ni, &nj);
            if (i0 == j0)
                cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)ni, (int)rows, 1.0, Z + i0,
                            (int)ldz, 1.0, C + i0 * D + i0, (int)D);
            else
                cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)ni, (int)nj, (int)rows,
                            1.0, Z + i0, (int)ldz, Z + j0, (int)ldz, 1.0, C + i0 * D + j0, (int)D);
        }
    }
}

rfx_status rfx__stats_add_z(rfx_stats *s, const double *Z, size_t ldz, size_t rows,
                            const double *Y, size_t ldy, int n_threads)
{
    return rfx__stats_add_zw(s, Z, ldz, rows, Y, ldy, NULL, 0, n_threads);
}

/* Weighted rows enter as rows scaled by r_i = sqrt(w_i): (r z)^T (r z) =
 * w z z^T and (r z)^T (r (y - shift)) = w z (y - shift), so one SYRK and
 * one GEMM serve as in the unweighted case, and r = 1 changes no bit. */
rfx_status rfx__stats_add_zw(rfx_stats *s, const double *Z, size_t ldz, size_t rows,
                             const double *Y, size_t ldy, const double *wt, size_t ldw,
                             int n_threads)
{
    const size_t D = s->D, ny = s->ny;
    if (rows == 0) return RFX_OK;
    if (ldz > 2147483647u || rows > 2147483647u)
        return rfx__error(RFX_EOVERFLOW, "stats: block exceeds the BLAS integer range");
    /* [r Yc, r] (rows x (ny + 1)): one GEMM gives Z^T W Yc and the column sums */
    const size_t w = ny + 1;
    double *yc = NULL, *acc = NULL, *Zs = NULL;
    RFX__TRY(rfx__alloc(rows * w, sizeof(double), (void **)&yc, "stats: targets"));
    rfx_status st = rfx__alloc(D * w, sizeof(double), (void **)&acc, "stats: Z^T Y block");
    if (!st && wt) st = rfx__alloc(rows * D, sizeof(double), (void **)&Zs, "stats: weighted rows");
    if (st) {
        free(yc);
        free(acc);
        return st;
    }
    if (ny > 0 && !s->shift_set) {
        /* the (weighted) mean of the first block; a block of zero weights
         * takes the plain mean (any shift is exact, this one is small) */
        double ws = 0;
        for (size_t i = 0; i < rows; i++) ws += wt ? wt[i * ldw] : 1.0;
        for (size_t k = 0; k < ny; k++) {
            double m = 0;
            if (ws > 0) {
                for (size_t i = 0; i < rows; i++) m += (wt ? wt[i * ldw] : 1.0) * Y[i * ldy + k];
                s->shift[k] = m / ws;
            } else {
                for (size_t i = 0; i < rows; i++) m += Y[i * ldy + k];
                s->shift[k] = m / (double)rows;
            }
        }
        s->shift_set = 1;
    }
    size_t counted = rows;
    double wsum = (double)rows, logw = 0;
    if (wt) {
        counted = 0;
        wsum = 0;
        for (size_t i = 0; i < rows; i++) {
            const double wi = wt[i * ldw], r = sqrt(wi);
            wsum += wi;
            if (wi > 0) {
                counted++;
                logw += log(wi);
            }
            for (size_t j = 0; j < D; j++) Zs[i * D + j] = r * Z[i * ldz + j];
        }
        Z = Zs;
        ldz = D;
    }
    for (size_t i = 0; i < rows; i++) {
        const double wi = wt ? wt[i * ldw] : 1.0, r = wt ? sqrt(wi) : 1.0;
        for (size_t k = 0; k < ny; k++) {
            double v = Y[i * ldy + k] - s->shift[k];
            yc[i * w + k] = r * v;
            s->ysum[k] += wi * v;
            s->yy[k] += wi * v * v;
        }
        yc[i * w + ny] = r;
    }
    int nt = rfx__threads(n_threads);
    syrk_tiled(s->ztz, D, Z, ldz, rows, nt);
    /* Z^T [Yc 1]: D x (ny + 1), by fixed row tiles of Z^T (thread-count
     * independent); cost 2 rows D (ny + 1) flops */
    const size_t tile = 512, T = (D + tile - 1) / tile;
#pragma omp parallel num_threads(nt) if (T > 1)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < T; t++) {
            size_t j0 = t * tile, nj = D - j0 < tile ? D - j0 : tile;
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)nj, (int)w, (int)rows, 1.0,
                        Z + j0, (int)ldz, yc, (int)w, 0.0, acc + j0 * w, (int)w);
        }
    }
    for (size_t j = 0; j < D; j++) {
        for (size_t k = 0; k < ny; k++) s->zty[j * ny + k] += acc[j * w + k];
        s->zsum[j] += acc[j * w + ny];
    }
    free(acc);
    free(Zs);
    s->n += counted;
    s->wsum += wsum;
    s->logw += logw;
    free(yc);
    return RFX_OK;
}

/* The single-precision twin of syrk_tiled: Cf = Zf^T Zf (upper, zeroed
 * first) for one chunk, by the same fixed tiles. SSYRK/SGEMM run at twice
 * the flop rate of their double versions; the caller adds Cf into the
 * double accumulator, so rounding does not build up across chunks. */
static void ssyrk_tiled(float *Cf, size_t D, const float *Z, size_t ldz, size_t rows, int nt)
{
    const size_t tile = syrk_tile(D);
    const size_t T = (D + tile - 1) / tile, pairs = T * (T + 1) / 2;
#pragma omp parallel num_threads(nt) if (pairs > 1)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(dynamic, 1)
        for (size_t p = 0; p < pairs; p++) {
            size_t i0, j0, ni, nj;
            tile_pair(p, T, tile, D, &i0, &j0, &ni, &nj);
            if (i0 == j0)
                cblas_ssyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)ni, (int)rows, 1.0f,
                            Z + i0, (int)ldz, 0.0f, Cf + i0 * D + i0, (int)D);
            else
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)ni, (int)nj, (int)rows,
                            1.0f, Z + i0, (int)ldz, Z + j0, (int)ldz, 0.0f, Cf + i0 * D + j0,
                            (int)D);
        }
    }
}

static rfx_status check_rows(const rfx_stats *s, const rfx_features *f, rfx_cmat X, rfx_cmat Y)
{
    if (!s || !f) return rfx__error(RFX_EINVAL, "stats: NULL argument");
    RFX__TRY(rfx__check_cmat(X, "X"));
    RFX__TRY(rfx__check_cmat(Y, "Y"));
    if (f->D != s->D)
        return rfx__error(RFX_EDIM, "stats: the features have %zu outputs, the statistics %zu",
                          f->D, s->D);
    if (X.cols != f->d)
        return rfx__error(RFX_EDIM, "X has %zu columns, the features expect %zu", X.cols, f->d);
    if (s->ny > 0 && (Y.rows != X.rows || Y.cols != s->ny))
        return rfx__error(RFX_EDIM, "Y is %zu x %zu, expected %zu x %zu", Y.rows, Y.cols, X.rows,
                          s->ny);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "X row %zu, column %zu: %g is not finite", r, c,
                          X.data[r * X.stride + c]);
    if (s->ny > 0 && !rfx__all_finite(Y, &r, &c))
        return rfx__error(RFX_EPARSE, "Y row %zu, column %zu: %g is not finite", r, c,
                          Y.data[r * Y.stride + c]);
    return RFX_OK;
}

/* The feature block of rfx_stats_add: rows of D features, grown to the
 * largest chunk asked for (at most rfx__chunk_rows(D) rows), so that a
 * source's blocks reuse one buffer rather than each allocating (and
 * faulting in) its own. */
typedef struct block_buf {
    double *Z;
    size_t rows;
} block_buf;

static rfx_status block_buf_reserve(block_buf *b, size_t rows, size_t D)
{
    if (rows <= b->rows) return RFX_OK;
    free(b->Z);
    b->Z = NULL;
    b->rows = 0;
    RFX__TRY(rfx__alloc(rows * D, sizeof(double), (void **)&b->Z, "stats: feature block"));
    b->rows = rows;
    return RFX_OK;
}

/* rfx_stats_add_weighted after its checks, in chunks of rfx__chunk_rows(D)
 * rows featurised into buf */
static rfx_status add_rows(rfx_stats *s, const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                           const double *w, block_buf *buf)
{
    const size_t n = X.rows, D = s->D, B = rfx__chunk_rows(D);
    RFX__TRY(block_buf_reserve(buf, n < B ? n : B, D));
    rfx_status st = RFX_OK;
    for (size_t r0 = 0; r0 < n && !st; r0 += B) {
        size_t rows = n - r0 < B ? n - r0 : B;
        st = rfx_features_transform(f, (rfx_cmat){X.data + r0 * X.stride, rows, X.cols, X.stride},
                                    rfx_mat_of(buf->Z, rows, D));
        if (!st)
            st = rfx__stats_add_zw(s, buf->Z, D, rows, s->ny ? Y.data + r0 * Y.stride : NULL,
                                   Y.stride, w ? w + r0 : NULL, 1, f->params.n_threads);
    }
    return st;
}

rfx_status rfx_stats_add_weighted(rfx_stats *s, const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                                  const double *w)
{
    RFX__TRY(check_rows(s, f, X, Y));
    if (w) RFX__TRY(rfx__check_weights(w, X.rows, "stats: w"));
    block_buf buf = {NULL, 0};
    rfx_status st = add_rows(s, f, X, Y, w, &buf);
    free(buf.Z);
    return st;
}

rfx_status rfx_stats_add(rfx_stats *s, const rfx_features *f, rfx_cmat X, rfx_cmat Y)
{
    return rfx_stats_add_weighted(s, f, X, Y, NULL);
}

rfx_status rfx_stats_add_f32(rfx_stats *s, const rfx_features *f, rfx_cmatf X, rfx_cmatf Y)
{
    if (!s || !f) return rfx__error(RFX_EINVAL, "stats: NULL argument");
    if (X.stride < X.cols || Y.stride < Y.cols || (!X.data && X.rows && X.cols) ||
        (!Y.data && Y.rows && Y.cols))
        return rfx__error(RFX_EINVAL, "stats: invalid X or Y view (NULL data or stride < cols)");
    if (f->D != s->D)
        return rfx__error(RFX_EDIM, "stats: the features have %zu outputs, the statistics %zu",
                          f->D, s->D);
    if (X.cols != f->d)
        return rfx__error(RFX_EDIM, "X has %zu columns, the features expect %zu", X.cols, f->d);
    if (s->ny > 0 && (Y.rows != X.rows || Y.cols != s->ny))
        return rfx__error(RFX_EDIM, "Y is %zu x %zu, expected %zu x %zu", Y.rows, Y.cols, X.rows,
                          s->ny);
    for (size_t i = 0; i < X.rows; i++) {
        for (size_t j = 0; j < X.cols; j++)
            if (!isfinite(X.data[i * X.stride + j]))
                return rfx__error(RFX_EPARSE, "X row %zu, column %zu is not finite", i, j);
        for (size_t j = 0; j < s->ny; j++)
            if (!isfinite(Y.data[i * Y.stride + j]))
                return rfx__error(RFX_EPARSE, "Y row %zu, column %zu is not finite", i, j);
    }
    const size_t n = X.rows, D = s->D, ny = s->ny, B = rfx__chunk_rows(D);
    const size_t rows_max = n < B ? n : B;
    int nt = rfx__threads(f->params.n_threads);
    float *Z = NULL, *Cf = NULL;
    double *Yd = NULL;
    rfx_status st = rfx__alloc(rows_max * D, sizeof(float), (void **)&Z, "stats: feature block");
    if (!st) st = rfx__alloc(D * D, sizeof(float), (void **)&Cf, "stats: Z^T Z block");
    if (!st && ny) st = rfx__alloc(rows_max * ny, sizeof(double), (void **)&Yd, "stats: targets");
    for (size_t r0 = 0; r0 < n && !st; r0 += B) {
        size_t rows = n - r0 < B ? n - r0 : B;
        st = rfx_features_transform_f32(f, (rfx_cmatf){X.data + r0 * X.stride, rows, X.cols,
                                                       X.stride},
                                        rfx_matf_of(Z, rows, D));
        if (st) break;
        ssyrk_tiled(Cf, D, Z, D, rows, nt);
        for (size_t i = 0; i < D; i++)
            for (size_t j = i; j < D; j++) s->ztz[i * D + j] += (double)Cf[i * D + j];
        if (ny) {
            if (!s->shift_set) {
                for (size_t k = 0; k < ny; k++) {
                    double m = 0;
                    for (size_t i = 0; i < rows; i++) m += Y.data[(r0 + i) * Y.stride + k];
                    s->shift[k] = m / (double)rows;
                }
                s->shift_set = 1;
            }
            for (size_t i = 0; i < rows; i++)
                for (size_t k = 0; k < ny; k++) {
                    double v = (double)Y.data[(r0 + i) * Y.stride + k] - s->shift[k];
                    Yd[i * ny + k] = v;
                    s->ysum[k] += v;
                    s->yy[k] += v * v;
                }
        }
        for (size_t i = 0; i < rows; i++) {
            const float *z = Z + i * D;
            for (size_t j = 0; j < D; j++) {
                s->zsum[j] += (double)z[j];
                for (size_t k = 0; k < ny; k++) s->zty[j * ny + k] += (double)z[j] * Yd[i * ny + k];
            }
        }
        s->n += rows;
        s->wsum += (double)rows;
    }
    free(Z);
    free(Cf);
    free(Yd);
    return st;
}

rfx_status rfx_stats_add_source(rfx_stats *s, const rfx_features *f, rfx_source *src,
                                rfx_progress_fn progress, void *user)
{
    if (!src || !src->next || !src->rewind) return rfx__error(RFX_EINVAL, "stats: invalid source");
    RFX__TRY(src->rewind(src));
    size_t blocks = 0;
    block_buf buf = {NULL, 0};
    rfx_status st = RFX_OK;
    for (;;) {
        rfx_block b;
        int done = 0;
        memset(&b, 0, sizeof b);
        if ((st = src->next(src, &b, &done)) || done) break;
        if (b.ny != s->ny) {
            st = rfx__error(RFX_EDIM, "source block has %zu targets, the statistics %zu", b.ny,
                            s->ny);
            break;
        }
        rfx_cmat X = {b.x, b.rows, b.cols, b.stride};
        rfx_cmat Y = {b.y, b.rows, b.ny, b.y_stride};
        st = check_rows(s, f, X, Y);
        if (!st) st = add_rows(s, f, X, Y, NULL, &buf);
        if (st) {
            rfx__error_prefix("source block %zu (rows from %zu)", blocks, s->n);
            break;
        }
        blocks++;
        if (progress && progress(user, "accumulate", -1.0)) {
            st = rfx__error(RFX_ECANCELLED, "stats: cancelled by the progress callback");
            break;
        }
    }
    free(buf.Z);
    return st;
}

static rfx_status check_pair(const rfx_stats *a, const rfx_stats *b)
{
    if (!a || !b) return rfx__error(RFX_EINVAL, "stats: NULL argument");
    if (a->D != b->D || a->ny != b->ny)
        return rfx__error(RFX_EDIM, "stats: cannot combine D=%zu, ny=%zu with D=%zu, ny=%zu", a->D,
                          a->ny, b->D, b->ny);
    return RFX_OK;
}

/* into +/-= other, re-expressing other's target sums about into's shift:
 * sum w (y - s1) = sum w (y - s2) + W2 (s2 - s1), W2 the sum of other's
 * weights (its rows, unweighted), and likewise for z y, y^2. The weights
 * merge as sums: W, the rows with positive weight and sum log w add. */
static void combine(rfx_stats *into, const rfx_stats *o, double sign)
{
    const size_t D = into->D, ny = into->ny;
    if (!into->shift_set && o->shift_set) {
        memcpy(into->shift, o->shift, ny * sizeof *into->shift);
        into->shift_set = 1;
    }
    for (size_t i = 0; i < D; i++)
        for (size_t j = i; j < D; j++) into->ztz[i * D + j] += sign * o->ztz[i * D + j];
    for (size_t k = 0; k < ny; k++) {
        double delta = o->shift[k] - into->shift[k];
        double ys = o->ysum[k] + o->wsum * delta;
        double yy = o->yy[k] + 2.0 * delta * o->ysum[k] + o->wsum * delta * delta;
        for (size_t j = 0; j < D; j++)
            into->zty[j * ny + k] += sign * (o->zty[j * ny + k] + delta * o->zsum[j]);
        into->ysum[k] += sign * ys;
        into->yy[k] += sign * yy;
    }
    for (size_t j = 0; j < D; j++) into->zsum[j] += sign * o->zsum[j];
}

rfx_status rfx_stats_merge(rfx_stats *into, const rfx_stats *other)
{
    RFX__TRY(check_pair(into, other));
    combine(into, other, 1.0);
    into->n += other->n;
    into->wsum += other->wsum;
    into->logw += other->logw;
    return RFX_OK;
}

rfx_status rfx_stats_remove(rfx_stats *into, const rfx_stats *other)
{
    RFX__TRY(check_pair(into, other));
    if (other->n > into->n)
        return rfx__error(RFX_EINVAL, "stats: cannot remove %zu rows from %zu", other->n, into->n);
    combine(into, other, -1.0);
    into->n -= other->n;
    into->wsum -= other->wsum;
    into->logw -= other->logw;
    return RFX_OK;
}

rfx_status rfx_stats_copy(const rfx_stats *s, rfx_stats **out)
{
    if (!s || !out) return rfx__error(RFX_EINVAL, "stats copy: NULL argument");
    rfx_stats *c;
    RFX__TRY(rfx_stats_create(s->D, s->ny, &c));
    memcpy(c->ztz, s->ztz, s->D * s->D * sizeof *c->ztz);
    memcpy(c->zty, s->zty, s->D * s->ny * sizeof *c->zty);
    memcpy(c->zsum, s->zsum, s->D * sizeof *c->zsum);
    memcpy(c->ysum, s->ysum, s->ny * sizeof *c->ysum);
    memcpy(c->yy, s->yy, s->ny * sizeof *c->yy);
    memcpy(c->shift, s->shift, s->ny * sizeof *c->shift);
    c->shift_set = s->shift_set;
    c->n = s->n;
    c->wsum = s->wsum;
    c->logw = s->logw;
    *out = c;
    return RFX_OK;
}

rfx_status rfx_stats_get(const rfx_stats *s, double *ztz, double *zty, double *zsum, double *ysum)
{
    if (!s) return rfx__error(RFX_EINVAL, "stats get: NULL statistics");
    const size_t D = s->D, ny = s->ny;
    if (ztz) {
        for (size_t i = 0; i < D; i++)
            for (size_t j = i; j < D; j++) ztz[i * D + j] = ztz[j * D + i] = s->ztz[i * D + j];
    }
    for (size_t k = 0; k < ny; k++) {
        if (zty)
            for (size_t j = 0; j < D; j++)
                zty[j * ny + k] = s->zty[j * ny + k] + s->shift[k] * s->zsum[j];
        if (ysum) ysum[k] = s->ysum[k] + s->wsum * s->shift[k];
    }
    if (zsum) memcpy(zsum, s->zsum, D * sizeof *zsum);
    return RFX_OK;
}

size_t rfx_stats_n_features(const rfx_stats *s) { return s ? s->D : 0; }

size_t rfx_stats_n_targets(const rfx_stats *s) { return s ? s->ny : 0; }

int rfx_stats_shift(const rfx_stats *s, double *shift)
{
    if (!s) return 0;
    if (shift) memcpy(shift, s->shift, s->ny * sizeof *shift);
    return s->shift_set;
}

/* The packed layout: 3 + D (D + 1) / 2 + D ny + D + 2 ny doubles. */
size_t rfx_stats_packed_size(const rfx_stats *s)
{
    if (!s) return 0;
    const size_t D = s->D, ny = s->ny;
    /* D <= 2^31 - 1 (rfx_stats_create): D (D + 1) / 2 fits a 64-bit size_t;
     * every step is checked for narrower ones (0 on overflow) */
    const size_t a = D % 2 ? D : D / 2, b = D % 2 ? (D + 1) / 2 : D + 1;
    if (b > SIZE_MAX / a || (ny && D > SIZE_MAX / ny)) return 0;
    const size_t tri = a * b, dy = D * ny;
    if (dy > SIZE_MAX - tri || ny > (SIZE_MAX - tri - dy - D - 3) / 2) return 0;
    return tri + dy + D + 2 * ny + 3;
}

/* Re-expressed about the shift c: sum w z (y - c) = sum w z (y - s) +
 * (s - c) sum w z, and likewise for sum w (y - c) and sum w (y - c)^2, as
 * combine() does when it merges. */
rfx_status rfx_stats_pack(const rfx_stats *s, const double *shift, double *buf)
{
    if (!s || !buf) return rfx__error(RFX_EINVAL, "stats pack: NULL argument");
    const size_t D = s->D, ny = s->ny;
    if (shift)
        for (size_t k = 0; k < ny; k++)
            if (!isfinite(shift[k]))
                return rfx__error(RFX_EINVAL, "stats pack: shift[%zu] is not finite", k);
    double *p = buf;
    *p++ = (double)s->n;
    *p++ = s->wsum;
    *p++ = s->logw;
    for (size_t i = 0; i < D; i++) {
        memcpy(p, s->ztz + i * D + i, (D - i) * sizeof *p);
        p += D - i;
    }
    double *zty = p, *zsum = p + D * ny, *ysum = zsum + D, *yy = ysum + ny;
    memcpy(zsum, s->zsum, D * sizeof *zsum);
    for (size_t k = 0; k < ny; k++) {
        const double delta = shift ? s->shift[k] - shift[k] : 0.0;
        for (size_t j = 0; j < D; j++)
            zty[j * ny + k] = s->zty[j * ny + k] + delta * s->zsum[j];
        ysum[k] = s->ysum[k] + s->wsum * delta;
        yy[k] = s->yy[k] + 2.0 * delta * s->ysum[k] + s->wsum * delta * delta;
    }
    return RFX_OK;
}

rfx_status rfx_stats_unpack(rfx_stats *s, const double *buf, const double *shift)
{
    if (!s || !buf) return rfx__error(RFX_EINVAL, "stats unpack: NULL argument");
    const size_t D = s->D, ny = s->ny;
    const double n = buf[0];
    /* the count is a whole number of rows; 2^64 is the first double past
     * every size_t */
    if (!(n >= 0) || n != floor(n) || n >= 18446744073709551616.0)
        return rfx__error(RFX_EINVAL, "stats unpack: the row count %g is not a whole number >= 0",
                          n);
    if (!isfinite(buf[1]) || buf[1] < 0)
        return rfx__error(RFX_EINVAL, "stats unpack: the weight sum %g is not finite and >= 0",
                          buf[1]);
    if (shift)
        for (size_t k = 0; k < ny; k++)
            if (!isfinite(shift[k]))
                return rfx__error(RFX_EINVAL, "stats unpack: shift[%zu] is not finite", k);
    s->n = (size_t)n;
    s->wsum = buf[1];
    s->logw = buf[2];
    const double *p = buf + 3;
    for (size_t i = 0; i < D; i++) {
        memcpy(s->ztz + i * D + i, p, (D - i) * sizeof *p);
        p += D - i;
    }
    memcpy(s->zty, p, D * ny * sizeof *p);
    p += D * ny;
    memcpy(s->zsum, p, D * sizeof *p);
    p += D;
    memcpy(s->ysum, p, ny * sizeof *p);
    memcpy(s->yy, p + ny, ny * sizeof *p);
    for (size_t k = 0; k < ny; k++) s->shift[k] = shift ? shift[k] : 0.0;
    s->shift_set = s->n > 0;
    return RFX_OK;
}

void rfx__stats_normal(const rfx_stats *s, int intercept, double *C, double *c, double *yy,
                       double *mu, double *ybar)
{
    const size_t D = s->D, ny = s->ny;
    const double n = s->wsum; /* the number of rows, unweighted */
    for (size_t j = 0; j < D; j++) mu[j] = intercept && n > 0 ? s->zsum[j] / n : 0.0;
    for (size_t i = 0; i < D; i++) {
        for (size_t j = i; j < D; j++) {
            double v = s->ztz[i * D + j] - n * mu[i] * mu[j];
            C[i * D + j] = C[j * D + i] = v;
        }
    }
    for (size_t k = 0; k < ny; k++) {
        double m = n > 0 ? s->ysum[k] / n : 0.0; /* mean of y - shift */
        if (intercept) {
            ybar[k] = s->shift[k] + m;
            for (size_t j = 0; j < D; j++) c[j * ny + k] = s->zty[j * ny + k] - n * mu[j] * m;
            yy[k] = s->yy[k] - n * m * m;
            if (yy[k] < 0) yy[k] = 0;
        } else {
            double sh = s->shift[k];
            ybar[k] = 0.0;
            for (size_t j = 0; j < D; j++) c[j * ny + k] = s->zty[j * ny + k] + sh * s->zsum[j];
            yy[k] = s->yy[k] + 2.0 * sh * s->ysum[k] + n * sh * sh;
        }
    }
}

/* ---- the in-memory source --------------------------------------------- */

typedef struct memory_state {
    rfx_cmat X, Y;
    size_t block, pos;
} memory_state;

static rfx_status memory_next(rfx_source *src, rfx_block *out, int *done)
{
    memory_state *m = src->state;
    if (m->pos >= m->X.rows) {
        *done = 1;
        return RFX_OK;
    }
    size_t rows = m->X.rows - m->pos < m->block ? m->X.rows - m->pos : m->block;
    out->x = m->X.data + m->pos * m->X.stride;
    out->rows = rows;
    out->cols = m->X.cols;
    out->stride = m->X.stride;
    out->ny = m->Y.data ? m->Y.cols : 0;
    out->y = m->Y.data ? m->Y.data + m->pos * m->Y.stride : NULL;
    out->y_stride = m->Y.stride;
    m->pos += rows;
    *done = 0;
    return RFX_OK;
}

static rfx_status memory_rewind(rfx_source *src)
{
    ((memory_state *)src->state)->pos = 0;
    return RFX_OK;
}

static void memory_destroy(rfx_source *src) { free(src->state); }

rfx_status rfx_source_memory_create(rfx_cmat X, rfx_cmat Y, size_t block_rows, rfx_source **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "memory source: out is NULL");
    RFX__TRY(rfx__check_cmat(X, "memory source: X"));
    RFX__TRY(rfx__check_cmat(Y, "memory source: Y"));
    if (Y.data && Y.rows != X.rows)
        return rfx__error(RFX_EDIM, "memory source: X has %zu rows, Y %zu", X.rows, Y.rows);
    rfx_source *src = calloc(1, sizeof *src);
    memory_state *m = calloc(1, sizeof *m);
    if (!src || !m) {
        free(src);
        free(m);
        return rfx__error(RFX_ENOMEM, "memory source: cannot allocate");
    }
    m->X = X;
    m->Y = Y;
    m->block = block_rows ? block_rows : 4096;
    src->next = memory_next;
    src->rewind = memory_rewind;
    src->destroy = memory_destroy;
    src->state = m;
    *out = src;
    return RFX_OK;
}

void rfx_source_free(rfx_source *src)
{
    if (!src) return;
    if (src->destroy) src->destroy(src);
    free(src);
}
