/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ridge regression on random features:
 *   min_W |Y - Z W - 1 c^T|_F^2 + lambda |W|_F^2,
 * with an unpenalised intercept c handled by centring Z and Y.
 * Primal (D x D):  (Zc^T Zc + lambda I) W = Zc^T Yc, from mergeable
 *                  statistics, so rows may stream past memory.
 * Dual (n x n):    (Zc Zc^T + lambda I) A = Yc, W = Zc^T A, when n < D.
 * lambda by generalised cross-validation (Golub, Heath & Wahba,
 * Technometrics 21(2), 1979) in the eigenbasis of the normal matrix, or by
 * k-fold cross-validation from per-fold statistics.
 *
 * Row weights w_i (sample_weight): min sum_i w_i |y_i - z_i^T W - c|^2 +
 * lambda |W|^2, i.e. the unweighted problem on the rows scaled by
 * sqrt(w_i) with the weighted means as centres. Primal: the weighted
 * statistics. Dual: Zc and Yc scaled by sqrt(w_i). GCV is that of the
 * scaled problem with n the number of rows of positive weight,
 *   GCV = n RSS_w / (n - icpt - df)^2,  RSS_w = sum_i w_i r_i^2,
 * (as scikit-learn's RidgeCV rescales by sqrt(sample_weight)), so
 * multiplying every weight by a constant changes neither the choice of
 * lambda relative to the grid (which scales with trace(Z^T W Z)) nor the
 * fit; a row of weight 0 is a row left out. K-fold selection sums the
 * weighted squared errors of the held-out rows.
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

rfx_ridge_params rfx_ridge_params_default(void)
{
    rfx_ridge_params p;
    memset(&p, 0, sizeof p);
    p.lambda = 1e-3;
    p.fit_intercept = 1;
    p.select = RFX_SELECT_NONE;
    p.n_folds = 5;
    p.lambdas = NULL;
    p.n_lambdas = 0;
    p.solver = RFX_SOLVER_AUTO;
    p.n_threads = 0;
    p.sample_weight = NULL;
    return p;
}

static rfx_status check_params(const rfx_ridge_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "ridge: params is NULL");
    if ((unsigned)p->select > RFX_SELECT_KFOLD)
        return rfx__error(RFX_EINVAL, "ridge.select: %d is not an rfx_select", (int)p->select);
    if ((unsigned)p->solver > RFX_SOLVER_DUAL)
        return rfx__error(RFX_EINVAL, "ridge.solver: %d is not an rfx_solver", (int)p->solver);
    if (p->select == RFX_SELECT_NONE && !(p->lambda >= 0 && isfinite(p->lambda)))
        return rfx__error(RFX_EINVAL, "ridge.lambda: must be >= 0 and finite, got %g", p->lambda);
    if (p->select == RFX_SELECT_KFOLD && p->n_folds < 2)
        return rfx__error(RFX_EINVAL, "ridge.n_folds: must be >= 2, got %zu", p->n_folds);
    if (p->lambdas && p->n_lambdas == 0)
        return rfx__error(RFX_EINVAL, "ridge.n_lambdas: 0 with a lambda grid given");
    for (size_t i = 0; p->lambdas && i < p->n_lambdas; i++)
        if (!(p->lambdas[i] >= 0 && isfinite(p->lambdas[i])))
            return rfx__error(RFX_EINVAL, "ridge.lambdas[%zu]: must be >= 0 and finite, got %g", i,
                              p->lambdas[i]);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "ridge.n_threads: must be >= 0, got %d", p->n_threads);
    return RFX_OK;
}

/* The candidate grid: the user's, or 40 values log-spaced over 1e-10..1e2
 * times the mean eigenvalue trace/D (so it scales with the data). */
static rfx_status lambda_grid(const rfx_ridge_params *p, double trace, size_t D, double **out,
                              size_t *count)
{
    size_t n = p->lambdas ? p->n_lambdas : 40;
    double *g;
    RFX__TRY(rfx__alloc(n, sizeof(double), (void **)&g, "ridge: lambda grid"));
    if (p->lambdas) {
        memcpy(g, p->lambdas, n * sizeof *g);
    } else {
        double base = trace > 0 ? trace / (double)D : 1.0;
        for (size_t i = 0; i < n; i++) g[i] = base * pow(10.0, -10.0 + 12.0 * (double)i / (double)(n - 1));
    }
    *out = g;
    *count = n;
    return RFX_OK;
}

/* Build the model shell: copy of f, sizes, bookkeeping. */
static rfx_status new_model(const rfx_features *f, size_t ny, int intercept, size_t n,
                            double lambda, rfx_model **out)
{
    rfx_features *fc;
    RFX__TRY(rfx__features_copy(f, &fc));
    rfx_model *m;
    rfx_status st = rfx__model_alloc(RFX_METHOD_RIDGE, fc, ny, 0, &m);
    if (st) {
        rfx_features_free(fc);
        return st;
    }
    m->fit_intercept = intercept;
    m->n_train = n;
    m->lambda = lambda;
    m->gcv = NAN; /* set when GCV chose lambda */
    *out = m;
    return RFX_OK;
}

/* intercept_k = ybar_k - mu^T W[:, k] */
static void set_intercepts(rfx_model *m, const double *mu, const double *ybar)
{
    for (size_t k = 0; k < m->ny; k++) {
        double v = ybar[k];
        for (size_t j = 0; j < m->D; j++) v -= mu[j] * m->W[j * m->ny + k];
        m->intercept[k] = v;
    }
}

/* W = V diag(1 / (s + lambda)) V^T c from the eigendecomposition (V rows). */
static void eig_weights(const double *V, const double *s, const double *ct, size_t D, size_t ny,
                        double lambda, double *W, double *tmp)
{
    for (size_t i = 0; i < D; i++) {
        double den = s[i] + lambda;
        for (size_t k = 0; k < ny; k++) tmp[i * ny + k] = den > 0 ? ct[i * ny + k] / den : 0.0;
    }
    /* W = V^T-rows... eigenvector i is row i of V: W = V^T tmp */
    RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)D, (int)ny, (int)D, 1.0, V, (int)D, tmp, (int)ny, 0.0, W, (int)ny))
}

/* GCV(lambda) = n RSS / (n_eff - df)^2, summed over targets, with
 * RSS = yy - sum_i ct_i^2 (s_i + 2 lambda) / (s_i + lambda)^2 (the part of
 * y outside the span of Z is in yy and never fitted). */
static double gcv_score(const double *s, const double *ct, const double *yy, size_t D, size_t ny,
                        double n, double n_eff, double lambda)
{
    /* With c_i^2 = ct_i^2 / s_i (the squared coordinates of y on the left
     * singular vectors), |y - yhat|^2 = (|y|^2 - sum c_i^2) + sum c_i^2
     * (lambda / (s_i + lambda))^2: the part of y outside the features' span,
     * which does not depend on lambda, plus the shrinkage, summed without
     * cancellation. Written as |y|^2 - sum c_i^2 (1 - t_i^2) instead, a
     * near-interpolating fit (small lambda, D near n) loses every digit of
     * its residual, and GCV = n rss / dof^2 with both near 0 can come out as
     * exactly 0. Eigenvalues at rounding level (s_i <= D eps s_max) count as
     * outside the span. */
    double smax = 0;
    for (size_t i = 0; i < D; i++) smax = s[i] > smax ? s[i] : smax;
    const double tiny = (double)D * DBL_EPSILON * smax;
    double df = 0, rss = 0;
    for (size_t i = 0; i < D; i++)
        if (s[i] > tiny) df += s[i] / (s[i] + lambda);
    for (size_t k = 0; k < ny; k++) {
        double in_span = 0, shrink = 0;
        for (size_t i = 0; i < D; i++) {
            if (!(s[i] > tiny)) continue;
            double c2 = ct[i * ny + k] * ct[i * ny + k] / s[i], t = lambda / (s[i] + lambda);
            in_span += c2;
            shrink += c2 * t * t;
        }
        double outside = yy[k] - in_span;
        rss += (outside > 0 ? outside : 0) + shrink;
    }
    double dof = n_eff - df;
    if (!(dof > 0)) return INFINITY;
    return n * rss / (dof * dof);
}

rfx_status rfx_ridge_solve(const rfx_features *f, const rfx_stats *s,
                           const rfx_ridge_params *params, rfx_model **out)
{
    if (!f || !s || !out) return rfx__error(RFX_EINVAL, "ridge: NULL argument");
    RFX__TRY(check_params(params));
    if (params->sample_weight)
        return rfx__error(RFX_EINVAL, "ridge.sample_weight: rfx_ridge_solve takes the weights "
                                      "from the statistics (rfx_stats_add_weighted); leave it NULL");
    if (params->select == RFX_SELECT_KFOLD)
        return rfx__error(RFX_EINVAL,
                          "ridge.select: k-fold selection needs the rows; use rfx_ridge_fit or "
                          "rfx_ridge_fit_source");
    if (s->D != f->D)
        return rfx__error(RFX_EDIM, "ridge: statistics of %zu features, the map has %zu", s->D,
                          f->D);
    if (s->ny == 0) return rfx__error(RFX_EINVAL, "ridge: the statistics have no targets");
    if (s->n == 0) return rfx__error(RFX_EINVAL, "ridge: no rows");
    const size_t D = s->D, ny = s->ny;
    const int icpt = params->fit_intercept != 0;
    double *C = NULL, *c = NULL, *yy = NULL, *mu = NULL, *ybar = NULL, *w = NULL, *tmp = NULL,
           *grid = NULL;
    rfx_model *m = NULL;
    rfx_status st = rfx__alloc(D * D, sizeof(double), (void **)&C, "ridge: normal matrix");
    if (!st) st = rfx__alloc(D * ny, sizeof(double), (void **)&c, "ridge: right-hand side");
    if (!st) st = rfx__alloc(ny, sizeof(double), (void **)&yy, "ridge");
    if (!st) st = rfx__alloc(D, sizeof(double), (void **)&mu, "ridge");
    if (!st) st = rfx__alloc(ny, sizeof(double), (void **)&ybar, "ridge");
    if (st) goto done;
    rfx__stats_normal(s, icpt, C, c, yy, mu, ybar);

    double lambda = params->lambda;
    if (params->select == RFX_SELECT_GCV) {
        double trace = 0;
        size_t ng = 0;
        for (size_t i = 0; i < D; i++) trace += C[i * D + i];
        st = lambda_grid(params, trace, D, &grid, &ng);
        if (!st) st = rfx__alloc(D, sizeof(double), (void **)&w, "ridge: eigenvalues");
        if (!st) st = rfx__alloc(D * ny, sizeof(double), (void **)&tmp, "ridge");
        if (!st) st = rfx__eig_sym(C, D, w, params->n_threads, "ridge (GCV)");
        if (st) goto done;
        /* ct = V c: coordinates of the right-hand side in the eigenbasis */
        RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)D, (int)ny, (int)D, 1.0, C, (int)D, c, (int)ny, 0.0, tmp, (int)ny))
        memcpy(c, tmp, D * ny * sizeof *c);
        double best = INFINITY;
        lambda = grid[0];
        for (size_t g = 0; g < ng; g++) {
            double score = gcv_score(w, c, yy, D, ny, (double)s->n, (double)s->n - icpt, grid[g]);
            if (score < best) {
                best = score;
                lambda = grid[g];
            }
        }
        st = new_model(f, ny, icpt, s->n, lambda, &m);
        if (st) goto done;
        m->gcv = best;
        eig_weights(C, w, c, D, ny, lambda, m->W, tmp);
    } else {
        for (size_t i = 0; i < D; i++) C[i * D + i] += lambda;
        st = rfx__chol(C, D, params->n_threads, "ridge");
        if (!st) st = rfx__chol_solve(C, D, c, ny);
        if (!st) st = new_model(f, ny, icpt, s->n, lambda, &m);
        if (st) goto done;
        memcpy(m->W, c, D * ny * sizeof *c);
    }
    set_intercepts(m, mu, ybar);
    *out = m;
    m = NULL;
done:
    rfx_model_free(m);
    free(C);
    free(c);
    free(yy);
    free(mu);
    free(ybar);
    free(w);
    free(tmp);
    free(grid);
    return st;
}

/* ---- k-fold selection from per-fold statistics ------------------------- */

/* Squared error of (W, intercept) on the rows summarised by v, per target
 * summed: |y - Z w - b|^2 expanded in the statistics (targets shifted). */
static double fold_error(const rfx_stats *v, const double *W, const double *b)
{
    const size_t D = v->D, ny = v->ny;
    double err = 0;
    for (size_t k = 0; k < ny; k++) {
        double bs = b[k] - v->shift[k]; /* y - s - z.w - (b - s) */
        double wzty = 0, wzs = 0, quad = 0;
        for (size_t i = 0; i < D; i++) {
            double wi = W[i * ny + k];
            wzty += wi * v->zty[i * ny + k];
            wzs += wi * v->zsum[i];
            /* (Z^T Z w)_i from the upper triangle */
            double acc = v->ztz[i * D + i] * wi;
            for (size_t j = i + 1; j < D; j++) acc += 2.0 * v->ztz[i * D + j] * W[j * ny + k];
            quad += wi * acc;
        }
        double e = v->yy[k] - 2.0 * wzty - 2.0 * bs * v->ysum[k] + quad + 2.0 * bs * wzs +
                   v->wsum * bs * bs;
        err += e > 0 ? e : 0;
    }
    return err;
}

/* Accumulate every row of src into per-fold statistics (row i -> fold i mod
 * k): each featurised chunk is split into k strided views, no copies. wt:
 * the weight of every row by its index in the source (in-memory rows), or
 * NULL. */
static rfx_status accumulate_folds(const rfx_features *f, rfx_source *src, const double *wt,
                                   size_t k, size_t ny, int n_threads, rfx_stats **folds)
{
    const size_t D = f->D, B = rfx__chunk_rows(D) >= k ? rfx__chunk_rows(D) / k * k : k;
    double *Z = NULL;
    size_t g = 0; /* global row index */
    RFX__TRY(rfx__alloc(B * D, sizeof(double), (void **)&Z, "ridge: feature block"));
    rfx_status st = src->rewind(src);
    while (!st) {
        rfx_block b;
        int done = 0;
        memset(&b, 0, sizeof b);
        st = src->next(src, &b, &done);
        if (st || done) break;
        if (b.ny != ny || b.cols != f->d) {
            st = rfx__error(RFX_EDIM, "source block is %zu x (%zu + %zu targets), expected %zu + %zu",
                            b.rows, b.cols, b.ny, f->d, ny);
            break;
        }
        rfx_cmat X = {b.x, b.rows, b.cols, b.stride}, Y = {b.y, b.rows, b.ny, b.y_stride};
        size_t r, c;
        if (!rfx__all_finite(X, &r, &c) || !rfx__all_finite(Y, &r, &c)) {
            st = rfx__error(RFX_EPARSE, "row %zu, column %zu: value is not finite", g + r, c);
            break;
        }
        for (size_t r0 = 0; r0 < b.rows && !st; r0 += B) {
            size_t rows = b.rows - r0 < B ? b.rows - r0 : B;
            st = rfx_features_transform(f, (rfx_cmat){X.data + r0 * X.stride, rows, X.cols, X.stride},
                                        rfx_mat_of(Z, rows, D));
            for (size_t fo = 0; fo < k && !st; fo++) {
                size_t i0 = (fo + k - (g + r0) % k) % k;
                if (i0 >= rows) continue;
                size_t cnt = (rows - i0 + k - 1) / k;
                st = rfx__stats_add_zw(folds[fo], Z + i0 * D, k * D, cnt,
                                       Y.data + (r0 + i0) * Y.stride, k * Y.stride,
                                       wt ? wt + g + r0 + i0 : NULL, k, n_threads);
            }
        }
        g += b.rows;
    }
    free(Z);
    return st;
}

/* rfx_ridge_fit_source with weights wt by row index (NULL: none; only
 * with k-fold selection: rfx_ridge_fit accumulates the other weighted
 * fits itself). */
static rfx_status fit_source(const rfx_features *f, rfx_source *src, const double *wt,
                             const rfx_ridge_params *params, rfx_model **out)
{
    /* the number of targets: peek at the first block */
    rfx_block b0;
    int done = 0;
    memset(&b0, 0, sizeof b0);
    RFX__TRY(src->rewind(src));
    RFX__TRY(src->next(src, &b0, &done));
    if (done) return rfx__error(RFX_EINVAL, "ridge: the source has no rows");
    const size_t ny = b0.ny, D = f->D;
    if (ny == 0) return rfx__error(RFX_EINVAL, "ridge: the source has no targets");
    rfx_ridge_params solve = *params; /* the weights are in the statistics */
    solve.sample_weight = NULL;
    if (params->select != RFX_SELECT_KFOLD) {
        rfx_stats *s;
        RFX__TRY(rfx_stats_create(D, ny, &s));
        rfx_status st = rfx_stats_add_source(s, f, src, NULL, NULL);
        if (!st) st = rfx_ridge_solve(f, s, &solve, out);
        rfx_stats_free(s);
        return st;
    }

    const size_t k = params->n_folds;
    const int icpt = params->fit_intercept != 0;
    rfx_stats **folds = calloc(k, sizeof *folds), *train = NULL, *total = NULL;
    double *C = NULL, *c = NULL, *yy = NULL, *mu = NULL, *ybar = NULL, *w = NULL, *tmp = NULL,
           *W = NULL, *b = NULL, *grid = NULL, *err = NULL;
    size_t ng = 0;
    rfx_status st = folds ? RFX_OK : rfx__error(RFX_ENOMEM, "ridge: folds");
    for (size_t i = 0; i < k && !st; i++) st = rfx_stats_create(D, ny, &folds[i]);
    if (!st) st = accumulate_folds(f, src, wt, k, ny, params->n_threads, folds);
    if (!st) st = rfx_stats_create(D, ny, &total);
    for (size_t i = 0; i < k && !st; i++) st = rfx_stats_merge(total, folds[i]);
    if (!st && total->n < k)
        st = rfx__error(RFX_EINVAL, "ridge: %zu rows are too few for %zu folds", total->n, k);
    if (!st) st = rfx__alloc(D * D, sizeof(double), (void **)&C, "ridge: normal matrix");
    if (!st) st = rfx__alloc(D * ny, sizeof(double), (void **)&c, "ridge");
    if (!st) st = rfx__alloc(D * ny, sizeof(double), (void **)&tmp, "ridge");
    if (!st) st = rfx__alloc(D * ny, sizeof(double), (void **)&W, "ridge");
    if (!st) st = rfx__alloc(ny, sizeof(double), (void **)&b, "ridge");
    if (!st) st = rfx__alloc(ny, sizeof(double), (void **)&yy, "ridge");
    if (!st) st = rfx__alloc(ny, sizeof(double), (void **)&ybar, "ridge");
    if (!st) st = rfx__alloc(D, sizeof(double), (void **)&mu, "ridge");
    if (!st) st = rfx__alloc(D, sizeof(double), (void **)&w, "ridge");
    if (!st) {
        rfx__stats_normal(total, icpt, C, c, yy, mu, ybar);
        double trace = 0;
        for (size_t i = 0; i < D; i++) trace += C[i * D + i];
        st = lambda_grid(params, trace, D, &grid, &ng);
    }
    if (!st) st = rfx__calloc(ng, sizeof(double), (void **)&err, "ridge: errors");
    for (size_t fo = 0; fo < k && !st; fo++) {
        rfx_stats_free(train);
        train = NULL;
        st = rfx_stats_copy(total, &train);
        if (!st) st = rfx_stats_remove(train, folds[fo]);
        if (st) break;
        rfx__stats_normal(train, icpt, C, c, yy, mu, ybar);
        st = rfx__eig_sym(C, D, w, params->n_threads, "ridge (k-fold)");
        if (st) break;
        RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)D, (int)ny, (int)D, 1.0, C, (int)D, c, (int)ny, 0.0, tmp, (int)ny))
        memcpy(c, tmp, D * ny * sizeof *c);
        for (size_t g = 0; g < ng; g++) {
            eig_weights(C, w, c, D, ny, grid[g], W, tmp);
            for (size_t t = 0; t < ny; t++) {
                double v = ybar[t];
                for (size_t j = 0; j < D; j++) v -= mu[j] * W[j * ny + t];
                b[t] = v;
            }
            err[g] += fold_error(folds[fo], W, b);
        }
    }
    if (!st) {
        size_t best = 0;
        for (size_t g = 1; g < ng; g++)
            if (err[g] < err[best]) best = g;
        rfx_ridge_params p = solve;
        p.select = RFX_SELECT_NONE;
        p.lambda = grid[best];
        st = rfx_ridge_solve(f, total, &p, out);
    }
    for (size_t i = 0; folds && i < k; i++) rfx_stats_free(folds[i]);
    free(folds);
    rfx_stats_free(train);
    rfx_stats_free(total);
    free(C);
    free(c);
    free(yy);
    free(mu);
    free(ybar);
    free(w);
    free(tmp);
    free(W);
    free(b);
    free(grid);
    free(err);
    return st;
}

rfx_status rfx_ridge_fit_source(const rfx_features *f, rfx_source *src,
                                const rfx_ridge_params *params, rfx_model **out)
{
    if (!f || !src || !out || !src->next || !src->rewind)
        return rfx__error(RFX_EINVAL, "ridge: NULL argument or invalid source");
    RFX__TRY(check_params(params));
    if (params->sample_weight)
        return rfx__error(RFX_EINVAL, "ridge.sample_weight: a source's rows carry no weights; "
                                      "use rfx_ridge_fit, or rfx_stats_add_weighted and "
                                      "rfx_ridge_solve");
    return fit_source(f, src, NULL, params, out);
}

/* ---- dual form --------------------------------------------------------- */

/* With weights w (NULL: none), the rows of Zc and Yc are scaled by
 * sqrt(w_i) about the weighted means: K = Zc W Zc^T, W = Zc^T W^(1/2) A,
 * and GCV counts the rows of positive weight (see the top of the file). */
static rfx_status ridge_dual(const rfx_features *f, rfx_cmat X, rfx_cmat Y, const double *wt,
                             const rfx_ridge_params *p, rfx_model **out)
{
    const size_t n = X.rows, D = f->D, ny = Y.cols;
    size_t n_pos = n; /* rows of positive weight */
    double wsum = (double)n;
    if (wt) {
        n_pos = 0;
        wsum = 0;
        for (size_t i = 0; i < n; i++) {
            n_pos += wt[i] > 0;
            wsum += wt[i];
        }
    }
    const int icpt = p->fit_intercept != 0;
    double *Z = NULL, *K = NULL, *A = NULL, *mu = NULL, *ybar = NULL, *w = NULL, *ut = NULL,
           *grid = NULL;
    rfx_model *m = NULL;
    rfx_status st = rfx__alloc(n * D, sizeof(double), (void **)&Z, "ridge (dual): features");
    if (!st) st = rfx__alloc(n * n, sizeof(double), (void **)&K, "ridge (dual): Gram matrix");
    if (!st) st = rfx__alloc(n * ny, sizeof(double), (void **)&A, "ridge (dual)");
    if (!st) st = rfx__calloc(D, sizeof(double), (void **)&mu, "ridge (dual)");
    if (!st) st = rfx__calloc(ny, sizeof(double), (void **)&ybar, "ridge (dual)");
    if (!st) st = rfx_features_transform(f, X, rfx_mat_of(Z, n, D));
    if (st) goto done;
    if (icpt) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < D; j++) mu[j] += (wt ? wt[i] : 1.0) * Z[i * D + j];
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < ny; k++) ybar[k] += (wt ? wt[i] : 1.0) * Y.data[i * Y.stride + k];
        for (size_t j = 0; j < D; j++) mu[j] /= wsum;
        for (size_t k = 0; k < ny; k++) ybar[k] /= wsum;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < D; j++) Z[i * D + j] -= mu[j];
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < ny; k++) A[i * ny + k] = Y.data[i * Y.stride + k] - ybar[k];
    if (wt)
        for (size_t i = 0; i < n; i++) {
            const double r = sqrt(wt[i]);
            for (size_t j = 0; j < D; j++) Z[i * D + j] *= r;
            for (size_t k = 0; k < ny; k++) A[i * ny + k] *= r;
        }
    RFX__SERIAL(cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)n, (int)D, 1.0, Z, (int)D, 0.0, K, (int)n))
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) K[j * n + i] = K[i * n + j];

    double lambda = p->lambda, best = NAN;
    if (p->select == RFX_SELECT_GCV) {
        /* K = U S U^T; residual r = lambda (K + lambda)^-1 y, so
         * RSS = sum (lambda ut_i / (s_i + lambda))^2 and df = sum s/(s+lambda) */
        double trace = 0;
        size_t ng;
        for (size_t i = 0; i < n; i++) trace += K[i * n + i];
        st = lambda_grid(p, trace, D, &grid, &ng); /* the primal grid: same trace, same D */
        if (!st) st = rfx__alloc(n, sizeof(double), (void **)&w, "ridge (dual)");
        if (!st) st = rfx__alloc(n * ny, sizeof(double), (void **)&ut, "ridge (dual)");
        if (!st) st = rfx__eig_sym(K, n, w, p->n_threads, "ridge (dual, GCV)");
        if (st) goto done;
        RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)ny, (int)n, 1.0, K, (int)n, A, (int)ny, 0.0, ut, (int)ny))
        best = INFINITY;
        lambda = grid[0];
        for (size_t g = 0; g < ng; g++) {
            double lam = grid[g], df = 0, rss = 0;
            for (size_t i = 0; i < n; i++) {
                double si = w[i] > 0 ? w[i] : 0;
                df += si / (si + lam);
                for (size_t k = 0; k < ny; k++) {
                    double r = lam * ut[i * ny + k] / (si + lam);
                    rss += r * r;
                }
            }
            double dof = (double)n_pos - icpt - df;
            double score = dof > 0 ? (double)n_pos * rss / (dof * dof) : INFINITY;
            if (score < best) {
                best = score;
                lambda = lam;
            }
        }
        /* A = U diag(1/(s + lambda)) ut */
        for (size_t i = 0; i < n; i++) {
            double si = w[i] > 0 ? w[i] : 0;
            for (size_t k = 0; k < ny; k++) ut[i * ny + k] /= si + lambda;
        }
        RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)n, (int)ny, (int)n, 1.0, K, (int)n, ut, (int)ny, 0.0, A, (int)ny))
    } else {
        for (size_t i = 0; i < n; i++) K[i * n + i] += lambda;
        st = rfx__chol(K, n, p->n_threads, "ridge (dual)");
        if (!st) st = rfx__chol_solve(K, n, A, ny);
        if (st) goto done;
    }
    st = new_model(f, ny, icpt, n_pos, lambda, &m);
    if (st) goto done;
    m->gcv = best;
    RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)D, (int)ny, (int)n, 1.0, Z, (int)D, A, (int)ny, 0.0, m->W, (int)ny))
    set_intercepts(m, mu, ybar);
    *out = m;
    m = NULL;
done:
    rfx_model_free(m);
    free(Z);
    free(K);
    free(A);
    free(mu);
    free(ybar);
    free(w);
    free(ut);
    free(grid);
    return st;
}

rfx_status rfx_ridge_fit(const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                         const rfx_ridge_params *params, rfx_model **out)
{
    if (!f || !out) return rfx__error(RFX_EINVAL, "ridge: NULL argument");
    RFX__TRY(check_params(params));
    RFX__TRY(rfx__check_cmat(X, "ridge: X"));
    RFX__TRY(rfx__check_cmat(Y, "ridge: Y"));
    if (X.cols != f->d)
        return rfx__error(RFX_EDIM, "ridge: X has %zu columns, the features expect %zu", X.cols,
                          f->d);
    if (Y.rows != X.rows || Y.cols == 0)
        return rfx__error(RFX_EDIM, "ridge: Y is %zu x %zu for %zu rows of X", Y.rows, Y.cols,
                          X.rows);
    if (X.rows == 0) return rfx__error(RFX_EINVAL, "ridge: no rows");
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "ridge: X row %zu, column %zu is not finite", r, c);
    if (!rfx__all_finite(Y, &r, &c))
        return rfx__error(RFX_EPARSE, "ridge: Y row %zu, column %zu is not finite", r, c);
    const double *wt = params->sample_weight;
    if (wt) RFX__TRY(rfx__check_weights(wt, X.rows, "ridge.sample_weight"));
    int dual = params->solver == RFX_SOLVER_DUAL ||
               (params->solver == RFX_SOLVER_AUTO && X.rows < f->D);
    if (dual && params->select == RFX_SELECT_KFOLD) dual = 0;
    if (dual) return ridge_dual(f, X, Y, wt, params, out);
    rfx_status st;
    if (wt && params->select != RFX_SELECT_KFOLD) {
        rfx_ridge_params solve = *params;
        rfx_stats *s;
        solve.sample_weight = NULL;
        RFX__TRY(rfx_stats_create(f->D, Y.cols, &s));
        st = rfx_stats_add_weighted(s, f, X, Y, wt);
        if (!st) st = rfx_ridge_solve(f, s, &solve, out);
        rfx_stats_free(s);
        return st;
    }
    rfx_source *src;
    RFX__TRY(rfx_source_memory_create(X, Y, 0, &src));
    st = fit_source(f, src, wt, params, out);
    rfx_source_free(src);
    return st;
}
