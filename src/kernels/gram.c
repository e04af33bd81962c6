/* SPDX-License-Identifier: BSD-3-Clause */
/* Gram matrices of exact kernels (rfx/kernels.h), in 64 x 64 tiles.
 *
 * A call first "prepares" the kernel tree against the data: every distance
 * leaf gets its own copy of the rows, centred and scaled, U = (X - c) / l
 * (c the column means of X: the kernel is shift-invariant, and centring
 * keeps |u|^2 small against |u_x - u_y|^2 so that the norms expansion loses
 * little), with the squared norms |u|^2; every warp gets its weights f(x)
 * per row. Then each tile is evaluated by one thread, recursively:
 *  - distance leaves: one DGEMM U_I V_J^T, then r2 = |u|^2 + |v|^2 - 2 u.v;
 *    where r2 <= 2^-10 (|u|^2 + |v|^2) the expansion has lost more than
 *    ten bits to cancellation and r2 is recomputed from the rows as given,
 *    sum ((x_k - y_k) / l_k)^2, as rfx_kern_eval does (never negative,
 *    exactly 0 for identical rows, accurate for nearly identical ones);
 *  - inner-product leaves: one DGEMM X_I Y_J^T on the rows as given;
 *  - elementwise leaves: a double loop;
 *  - feature leaves: both tiles' rows transformed, then one DGEMM;
 *  - sum / product: both operands' tiles, combined; scale, exp, warp: the
 *    operand's tile, mapped.
 * Every tile is computed the same way whichever thread takes it (BLAS runs
 * single-threaded inside the loop), so K is bitwise independent of the
 * number of threads. Cost per tile: 2 * 64 * 64 * d flops per GEMM leaf. */
#include "kern_internal.h"

#include <math.h>
#include <string.h>

#define TILE 64
#define TILE2 (TILE * TILE)
/* Recompute r2 from differences below this fraction of |u|^2 + |v|^2. */
#define RECOMPUTE_FRACTION (1.0 / 1024.0)

/* The prepared tree: one node per kernel node. */
typedef struct gnode {
    const rfx_kern *k;
    struct gnode *a, *b;
    double *U, *V;     /* distance leaves: centred scaled rows, nx x d, ny x d */
    double *nu, *nv;   /* their squared norms                                 */
    double *wx, *wy;   /* warp weights per row                                */
    size_t ws;         /* workspace doubles this subtree needs per thread    */
} gnode;

typedef struct gdata {
    rfx_cmat X, Y;
    int sym;           /* Y is X: V, nv, wy alias U, nu, wx                   */
} gdata;

static void gnode_free(gnode *g, int sym)
{
    if (!g) return;
    gnode_free(g->a, sym);
    gnode_free(g->b, sym);
    free(g->U);
    free(g->nu);
    free(g->wx);
    if (!sym) {
        free(g->V);
        free(g->nv);
        free(g->wy);
    }
    free(g);
}

static int is_dist(rfx__kern_kind k)
{
    return k == RFX__KERN_GAUSSIAN || k == RFX__KERN_MATERN || k == RFX__KERN_RBF;
}

/* U = (X - c) / l and its squared row norms. */
static rfx_status scaled_rows(const rfx_kern *k, rfx_cmat X, const double *c, double **U,
                              double **nrm)
{
    size_t n = X.rows, d = X.cols, nd;
    RFX__TRY(rfx__mul(n, d, &nd, "kern gram: scaled rows"));
    RFX__TRY(rfx__alloc(nd, sizeof(double), (void **)U, "kern gram: scaled rows"));
    rfx_status st = rfx__alloc(n, sizeof(double), (void **)nrm, "kern gram: row norms");
    if (st) {
        free(*U);
        *U = NULL;
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        const double *x = X.data + i * X.stride;
        double *u = *U + i * d, s = 0;
        for (size_t j = 0; j < d; j++) {
            double t = x[j] - c[j];
            if (k->kind != RFX__KERN_RBF) t /= k->ls ? k->ls[j] : k->l;
            u[j] = t;
            s += t * t;
        }
        (*nrm)[i] = s;
    }
    return RFX_OK;
}

static rfx_status warp_weights(const rfx_kern *k, rfx_cmat X, double **w, const char *which)
{
    RFX__TRY(rfx__alloc(X.rows, sizeof(double), (void **)w, "kern gram: warp weights"));
    for (size_t i = 0; i < X.rows; i++) {
        double v = k->w(k->user, X.data + i * X.stride, X.cols);
        if (!isfinite(v)) {
            free(*w);
            *w = NULL;
            return rfx__error(RFX_EINVAL,
                              "kern gram: the warp function returned %g for %s row %zu (must be "
                              "finite)", v, which, i);
        }
        (*w)[i] = v;
    }
    return RFX_OK;
}

static rfx_status prepare(const rfx_kern *k, const gdata *g, gnode **out)
{
    gnode *n;
    RFX__TRY(rfx__calloc(1, sizeof *n, (void **)&n, "kern gram"));
    n->k = k;
    rfx_status st = RFX_OK;
    if (is_dist(k->kind)) {
        size_t d = g->X.cols;
        double *c;
        st = rfx__calloc(d, sizeof(double), (void **)&c, "kern gram: centre");
        if (!st) {
            for (size_t i = 0; i < g->X.rows; i++)
                for (size_t j = 0; j < d; j++) c[j] += g->X.data[i * g->X.stride + j];
            if (g->X.rows)
                for (size_t j = 0; j < d; j++) c[j] /= (double)g->X.rows;
            st = scaled_rows(k, g->X, c, &n->U, &n->nu);
            if (!st) {
                if (g->sym) {
                    n->V = n->U;
                    n->nv = n->nu;
                } else {
                    st = scaled_rows(k, g->Y, c, &n->V, &n->nv);
                }
            }
            free(c);
        }
    } else if (k->kind == RFX__KERN_FEATURES) {
        size_t w;
        st = rfx__mul(2 * TILE, k->f->D, &w, "kern gram: feature workspace");
        n->ws = w;
    } else if (k->kind == RFX__KERN_SUM || k->kind == RFX__KERN_PRODUCT) {
        st = prepare(k->a, g, &n->a);
        if (!st) st = prepare(k->b, g, &n->b);
        if (!st) {
            size_t wb = n->b->ws + TILE2;
            n->ws = n->a->ws > wb ? n->a->ws : wb;
        }
    } else if (k->kind == RFX__KERN_SCALE || k->kind == RFX__KERN_EXP ||
               k->kind == RFX__KERN_WARP) {
        st = prepare(k->a, g, &n->a);
        if (!st) n->ws = n->a->ws;
        if (!st && k->kind == RFX__KERN_WARP) {
            st = warp_weights(k, g->X, &n->wx, "X");
            if (!st) {
                if (g->sym)
                    n->wy = n->wx;
                else
                    st = warp_weights(k, g->Y, &n->wy, "Y");
            }
        }
    }
    if (st) {
        gnode_free(n, g->sym);
        return st;
    }
    *out = n;
    return RFX_OK;
}

/* The tile K(i0 .. i0+ni, j0 .. j0+nj) into out (row stride ldo), with ws
 * (g->ws doubles) as scratch. Runs on the calling thread. */
static void tile(const gnode *g, const gdata *gd, size_t i0, size_t ni, size_t j0, size_t nj,
                 double *out, size_t ldo, double *ws)
{
    const rfx_kern *k = g->k;
    const size_t d = gd->X.cols;
    switch (k->kind) {
    case RFX__KERN_GAUSSIAN:
    case RFX__KERN_MATERN:
    case RFX__KERN_RBF: {
        const double *U = g->U + i0 * d, *V = g->V + j0 * d;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)ni, (int)nj, (int)d, 1.0, U,
                    (int)d, V, (int)d, 0.0, out, (int)ldo);
        for (size_t i = 0; i < ni; i++) {
            double *o = out + i * ldo, nx = g->nu[i0 + i];
            const double *x = gd->X.data + (i0 + i) * gd->X.stride;
            for (size_t j = 0; j < nj; j++) {
                double s = nx + g->nv[j0 + j];
                double r2 = s - 2.0 * o[j];
                if (r2 <= RECOMPUTE_FRACTION * s)
                    r2 = rfx__kern_r2(k, x, gd->Y.data + (j0 + j) * gd->Y.stride, d);
                o[j] = rfx__kern_of_r2(k, r2);
            }
        }
        return;
    }
    case RFX__KERN_LINEAR:
    case RFX__KERN_POLYNOMIAL:
    case RFX__KERN_SIGMOID:
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)ni, (int)nj, (int)d, 1.0,
                    gd->X.data + i0 * gd->X.stride, (int)gd->X.stride,
                    gd->Y.data + j0 * gd->Y.stride, (int)gd->Y.stride, 0.0, out, (int)ldo);
        if (k->kind != RFX__KERN_LINEAR)
            for (size_t i = 0; i < ni; i++)
                for (size_t j = 0; j < nj; j++)
                    out[i * ldo + j] = rfx__kern_of_dot(k, out[i * ldo + j]);
        return;
    case RFX__KERN_LAPLACE_SHIFT:
    case RFX__KERN_LAPLACE_GAMMA:
    case RFX__KERN_CAUCHY:
    case RFX__KERN_DELTA:
    case RFX__KERN_ARCCOS:
    case RFX__KERN_BILINEAR:
        for (size_t i = 0; i < ni; i++) {
            const double *x = gd->X.data + (i0 + i) * gd->X.stride;
            for (size_t j = 0; j < nj; j++)
                out[i * ldo + j] =
                    rfx__kern_elementwise(k, x, gd->Y.data + (j0 + j) * gd->Y.stride, d);
        }
        return;
    case RFX__KERN_FEATURES: {
        size_t D = k->f->D;
        double *zx = ws, *zy = ws + TILE * D;
        rfx__transform_tile(k->f, gd->X.data + i0 * gd->X.stride, gd->X.stride, ni, zx, D);
        rfx__transform_tile(k->f, gd->Y.data + j0 * gd->Y.stride, gd->Y.stride, nj, zy, D);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)ni, (int)nj, (int)D, 1.0, zx,
                    (int)D, zy, (int)D, 0.0, out, (int)ldo);
        return;
    }
    case RFX__KERN_SUM:
    case RFX__KERN_PRODUCT: {
        tile(g->a, gd, i0, ni, j0, nj, out, ldo, ws);
        tile(g->b, gd, i0, ni, j0, nj, ws, TILE, ws + TILE2);
        for (size_t i = 0; i < ni; i++)
            for (size_t j = 0; j < nj; j++) {
                if (k->kind == RFX__KERN_SUM)
                    out[i * ldo + j] = out[i * ldo + j] + ws[i * TILE + j];
                else
                    out[i * ldo + j] = out[i * ldo + j] * ws[i * TILE + j];
            }
        return;
    }
    case RFX__KERN_SCALE:
    case RFX__KERN_EXP:
    case RFX__KERN_WARP:
        tile(g->a, gd, i0, ni, j0, nj, out, ldo, ws);
        for (size_t i = 0; i < ni; i++)
            for (size_t j = 0; j < nj; j++) {
                double *o = out + i * ldo + j;
                if (k->kind == RFX__KERN_SCALE)
                    *o = k->c * *o;
                else if (k->kind == RFX__KERN_EXP)
                    *o = exp(*o);
                else
                    *o = g->wx[i0 + i] * *o * g->wy[j0 + j];
            }
        return;
    }
}

static rfx_status check_input(const rfx_kern *k, rfx_cmat X, const char *what)
{
    RFX__TRY(rfx__check_cmat(X, what));
    if (X.cols == 0) return rfx__error(RFX_EDIM, "%s has no columns", what);
    if (k->d && X.cols != k->d)
        return rfx__error(RFX_EDIM, "%s has %zu columns, the kernel takes d = %zu", what, X.cols,
                          k->d);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "%s row %zu, column %zu is not finite", what, r, c);
    return RFX_OK;
}

static rfx_status gram_run(const rfx_kern *k, rfx_cmat X, rfx_cmat Y, int sym, rfx_mat K,
                           int n_threads)
{
    const size_t nx = X.rows, ny = Y.rows;
    if (nx == 0 || ny == 0) return RFX_OK;
    gdata gd = {X, Y, sym};
    gnode *g;
    RFX__TRY(prepare(k, &gd, &g));
    const size_t tx = (nx + TILE - 1) / TILE, ty = (ny + TILE - 1) / TILE;
    size_t count;
    rfx_status st = sym ? rfx__mul(tx, tx + 1, &count, "kern gram: tiles")
                        : rfx__mul(tx, ty, &count, "kern gram: tiles");
    if (sym) count /= 2;
    int nt = rfx__threads(n_threads);
    if ((size_t)nt > count) nt = (int)count;
    double *ws = NULL;
    size_t *pairs = NULL;
    if (!st && g->ws) st = rfx__alloc((size_t)nt, g->ws * sizeof(double), (void **)&ws,
                                      "kern gram: workspace");
    if (!st && sym) {
        st = rfx__alloc(count, 2 * sizeof(size_t), (void **)&pairs, "kern gram: tile list");
        if (!st) {
            size_t t = 0;
            for (size_t ti = 0; ti < tx; ti++)
                for (size_t tj = ti; tj < tx; tj++) {
                    pairs[2 * t] = ti;
                    pairs[2 * t + 1] = tj;
                    t++;
                }
        }
    }
    if (st) {
        free(ws);
        gnode_free(g, sym);
        return st;
    }
#pragma omp parallel num_threads(nt)
    {
        RFX__SERIAL_BLAS();
#ifdef _OPENMP
        double *w = ws ? ws + (size_t)omp_get_thread_num() * g->ws : NULL;
#else
        double *w = ws;
#endif
#pragma omp for schedule(dynamic, 1)
        for (size_t t = 0; t < count; t++) {
            size_t ti = sym ? pairs[2 * t] : t / ty, tj = sym ? pairs[2 * t + 1] : t % ty;
            size_t i0 = ti * TILE, j0 = tj * TILE;
            size_t ni = nx - i0 < TILE ? nx - i0 : TILE, nj = ny - j0 < TILE ? ny - j0 : TILE;
            double *o = K.data + i0 * K.stride + j0;
            tile(g, &gd, i0, ni, j0, nj, o, K.stride, w);
            if (sym) {
                /* mirror: the lower triangle of a diagonal tile from its upper
                 * one, an off-diagonal tile into its transposed place */
                for (size_t i = 0; i < ni; i++)
                    for (size_t j = (ti == tj ? i + 1 : 0); j < nj; j++)
                        K.data[(j0 + j) * K.stride + i0 + i] = o[i * K.stride + j];
            }
        }
    }
    free(ws);
    free(pairs);
    gnode_free(g, sym);
    return RFX_OK;
}

rfx_status rfx_kern_gram(const rfx_kern *k, rfx_cmat X, rfx_cmat Y, rfx_mat K, int n_threads)
{
    if (!k) return rfx__error(RFX_EINVAL, "kern_gram: kernel is NULL");
    RFX__TRY(rfx__kern_check_threads(n_threads, "kern_gram"));
    RFX__TRY(check_input(k, X, "kern_gram: X"));
    RFX__TRY(check_input(k, Y, "kern_gram: Y"));
    if (X.cols != Y.cols)
        return rfx__error(RFX_EDIM, "kern_gram: X has %zu columns and Y %zu", X.cols, Y.cols);
    RFX__TRY(rfx__check_mat(K, "kern_gram: K"));
    if (K.rows != X.rows || K.cols != Y.rows)
        return rfx__error(RFX_EDIM, "kern_gram: K is %zu x %zu, expected %zu x %zu", K.rows,
                          K.cols, X.rows, Y.rows);
    return gram_run(k, X, Y, 0, K, n_threads);
}

rfx_status rfx_kern_gram_sym(const rfx_kern *k, rfx_cmat X, rfx_mat K, int n_threads)
{
    if (!k) return rfx__error(RFX_EINVAL, "kern_gram_sym: kernel is NULL");
    RFX__TRY(rfx__kern_check_threads(n_threads, "kern_gram_sym"));
    RFX__TRY(check_input(k, X, "kern_gram_sym: X"));
    RFX__TRY(rfx__check_mat(K, "kern_gram_sym: K"));
    if (K.rows != X.rows || K.cols != X.rows)
        return rfx__error(RFX_EDIM, "kern_gram_sym: K is %zu x %zu, expected %zu x %zu", K.rows,
                          K.cols, X.rows, X.rows);
    return gram_run(k, X, X, 1, K, n_threads);
}

/* k(x, x) of one row; z: a workspace of D doubles for a feature leaf. */
static double diag_node(const rfx_kern *k, const double *x, size_t d, double *z)
{
    switch (k->kind) {
    case RFX__KERN_FEATURES: {
        size_t D = k->f->D;
        rfx__transform_tile(k->f, x, d, 1, z, D);
        double s = 0;
        for (size_t j = 0; j < D; j++) s += z[j] * z[j];
        return s;
    }
    case RFX__KERN_SUM: return diag_node(k->a, x, d, z) + diag_node(k->b, x, d, z);
    case RFX__KERN_PRODUCT: return diag_node(k->a, x, d, z) * diag_node(k->b, x, d, z);
    case RFX__KERN_SCALE: return k->c * diag_node(k->a, x, d, z);
    case RFX__KERN_EXP: return exp(diag_node(k->a, x, d, z));
    case RFX__KERN_WARP: {
        double f = k->w(k->user, x, d);
        return f * diag_node(k->a, x, d, z) * f;
    }
    default: return rfx_kern_eval(k, x, x, d);
    }
}

static size_t max_features_dim(const rfx_kern *k)
{
    if (!k) return 0;
    if (k->kind == RFX__KERN_FEATURES) return k->f->D;
    size_t a = max_features_dim(k->a), b = max_features_dim(k->b);
    return a > b ? a : b;
}

rfx_status rfx_kern_diag(const rfx_kern *k, rfx_cmat X, double *diag)
{
    if (!k) return rfx__error(RFX_EINVAL, "kern_diag: kernel is NULL");
    RFX__TRY(check_input(k, X, "kern_diag: X"));
    if (!diag) return rfx__error(RFX_EINVAL, "kern_diag: diag is NULL");
    if (X.rows == 0) return RFX_OK;
    size_t D = max_features_dim(k);
    double *buf;
    RFX__TRY(rfx__alloc(X.rows + D, sizeof(double), (void **)&buf, "kern_diag: workspace"));
    for (size_t i = 0; i < X.rows; i++) {
        double v = diag_node(k, X.data + i * X.stride, X.cols, buf + X.rows);
        if (!isfinite(v)) {
            free(buf);
            return rfx__error(RFX_EINVAL, "kern_diag: k(x, x) of row %zu is not finite (%g)", i,
                              v);
        }
        buf[i] = v;
    }
    memcpy(diag, buf, X.rows * sizeof(double));
    free(buf);
    return RFX_OK;
}
