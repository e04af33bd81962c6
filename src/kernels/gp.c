/* SPDX-License-Identifier: BSD-3-Clause */
/* Gaussian process regression (rfx/kernels.h): the posterior of
 * f ~ GP(0, s2 k) under Gaussian noise, with the variances s2 and noise
 * optionally fitted by maximising the log marginal likelihood in the
 * eigenbasis of K, and the Cholesky factor of C = s2 K + noise I (with the
 * jitter policy) for the posterior. The formulas are in the header. */
#include "kern_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

struct rfx_gp {
    rfx_kern *k;       /* referenced                                       */
    size_t n, d;
    double *X;         /* n x d training rows                              */
    double *R;         /* n x n upper Cholesky factor of C (+ jitter)      */
    double *alpha;     /* n: C^-1 y (standardised y with normalize_y)      */
    double s2, noise, jitter, lml, y_mean, y_std;
    int n_threads;
};

rfx_gp_params rfx_gp_params_default(void)
{
    rfx_gp_params p;
    p.noise_var = 0.0;
    p.amplitude = 0.0;
    p.noise_free = 0;
    p.normalize_y = 1;
    p.ratio_min = 1e-8;
    p.ratio_max = 1e2;
    p.jitter_initial = 1e-10;
    p.jitter_factor = 10.0;
    p.jitter_max = 1e-4;
    p.n_threads = 0;
    return p;
}

void rfx_gp_free(rfx_gp *gp)
{
    if (!gp) return;
    rfx_kern_free(gp->k);
    free(gp->X);
    free(gp->R);
    free(gp->alpha);
    free(gp);
}

static rfx_status check_params(const rfx_gp_params *p)
{
    if (!isfinite(p->noise_var))
        return rfx__error(RFX_EINVAL, "gp_params.noise_var must be finite, got %g", p->noise_var);
    if (!isfinite(p->amplitude))
        return rfx__error(RFX_EINVAL, "gp_params.amplitude must be finite, got %g", p->amplitude);
    if (p->noise_free != 0 && p->noise_free != 1)
        return rfx__error(RFX_EINVAL, "gp_params.noise_free must be 0 or 1, got %d",
                          p->noise_free);
    if (p->normalize_y != 0 && p->normalize_y != 1)
        return rfx__error(RFX_EINVAL, "gp_params.normalize_y must be 0 or 1, got %d",
                          p->normalize_y);
    if (!(p->ratio_min > 0 && isfinite(p->ratio_min)))
        return rfx__error(RFX_EINVAL, "gp_params.ratio_min must be > 0 and finite, got %g",
                          p->ratio_min);
    if (!(p->ratio_max > p->ratio_min && isfinite(p->ratio_max)))
        return rfx__error(RFX_EINVAL,
                          "gp_params.ratio_max must be finite and > ratio_min (%g), got %g",
                          p->ratio_min, p->ratio_max);
    if (!(p->jitter_initial > 0 && isfinite(p->jitter_initial)))
        return rfx__error(RFX_EINVAL, "gp_params.jitter_initial must be > 0 and finite, got %g",
                          p->jitter_initial);
    if (!(p->jitter_factor > 1 && isfinite(p->jitter_factor)))
        return rfx__error(RFX_EINVAL, "gp_params.jitter_factor must be > 1 and finite, got %g",
                          p->jitter_factor);
    if (!(p->jitter_max >= p->jitter_initial && isfinite(p->jitter_max)))
        return rfx__error(RFX_EINVAL,
                          "gp_params.jitter_max must be finite and >= jitter_initial (%g), got %g",
                          p->jitter_initial, p->jitter_max);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "gp_params.n_threads must be >= 0, got %d", p->n_threads);
    return RFX_OK;
}

/* ---- Cholesky with the jitter policy ------------------------------------ */

/* R = chol(s2 K + (noise + j) I) with the smallest j of the policy that
 * makes it numerically positive definite: dpotrf succeeds and every pivot
 * R_ii^2 > n eps max(diag). *jitter = j. */
static rfx_status factor_jitter(const double *K, size_t n, double s2, double noise,
                                const rfx_gp_params *p, double *R, double *jitter)
{
    double mean = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        double c = s2 * K[i * n + i] + noise;
        mean += c;
        if (c > mx) mx = c;
    }
    mean /= (double)n;
    if (!(mean > 0))
        return rfx__error(RFX_ENUMERIC,
                          "gp_fit: the mean diagonal of s2 K + noise I is %g (must be > 0)", mean);
    double rel = 0;
    for (int attempt = 0;; attempt++) {
        double j = rel * mean;
        for (size_t i = 0; i < n; i++) {
            for (size_t c = 0; c < n; c++) R[i * n + c] = s2 * K[i * n + c];
            R[i * n + i] += noise + j;
        }
        rfx_status st = rfx__chol(R, n, 1, "gp_fit: s2 K + noise I");
        if (st == RFX_OK) {
            double tol = (double)n * DBL_EPSILON * (mx + j), mn = INFINITY;
            for (size_t i = 0; i < n; i++) {
                double r2 = R[i * n + i] * R[i * n + i];
                if (r2 < mn) mn = r2;
            }
            if (mn > tol) {
                rfx_clear_error();
                *jitter = j;
                return RFX_OK;
            }
        } else if (st != RFX_ENUMERIC) {
            return st;
        }
        rel = attempt == 0 ? p->jitter_initial : rel * p->jitter_factor;
        if (rel > p->jitter_max * (1.0 + 1e-9))
            return rfx__error(RFX_ENUMERIC,
                              "gp_fit: s2 K + noise I is not numerically positive definite, "
                              "even with a jitter of %g x its mean diagonal (gp_params.jitter_max)"
                              "; give a larger noise_var", p->jitter_max);
    }
}

/* ---- the search over the variances in the eigenbasis -------------------- */

typedef enum fit_mode { FIT_BOTH, FIT_NOISE, FIT_S2 } fit_mode;

typedef struct search {
    const double *lam; /* eigenvalues of K, clamped at 0                   */
    const double *c2;  /* squared coordinates of y in the eigenbasis        */
    size_t n;
    fit_mode mode;
    double mdk;        /* mean(diag K)                                      */
    double s2, noise;  /* the given one (modes NOISE, S2)                   */
} search;

static double lml_eig(const search *s, double s2, double noise)
{
    double q = 0, ld = 0;
    for (size_t i = 0; i < s->n; i++) {
        double e = s2 * s->lam[i] + noise;
        q += s->c2[i] / e;
        ld += log(e);
    }
    return -0.5 * q - 0.5 * ld - 0.5 * (double)s->n * log(2.0 * M_PI);
}

/* (s2, noise) at t = log(ratio / mean(diag K)), ratio = noise / s2. */
static void search_point(const search *s, double t, double *s2, double *noise)
{
    double r = exp(t) * s->mdk;
    switch (s->mode) {
    case FIT_BOTH: {
        double q = 0;
        for (size_t i = 0; i < s->n; i++) q += s->c2[i] / (s->lam[i] + r);
        *s2 = q / (double)s->n;
        *noise = r * *s2;
        return;
    }
    case FIT_NOISE:
        *s2 = s->s2;
        *noise = r * s->s2;
        return;
    case FIT_S2:
        *s2 = s->noise / r;
        *noise = s->noise;
        return;
    }
}

static double search_value(const search *s, double t)
{
    double s2, noise;
    search_point(s, t, &s2, &noise);
    return lml_eig(s, s2, noise);
}

/* Maximise over t in [lo, hi]: a grid of 8 points per decade, then
 * golden-section search in the grid cell pair around the best point, to an
 * interval of 1e-10. Returns the best t seen. */
static double maximise(const search *s, double lo, double hi)
{
    const double per = 8.0 / log(10.0);
    size_t g = (size_t)ceil((hi - lo) * per);
    if (g < 2) g = 2;
    double h = (hi - lo) / (double)g, bt = lo, bv = -INFINITY;
    size_t bi = 0;
    for (size_t i = 0; i <= g; i++) {
        double t = i == g ? hi : lo + (double)i * h, v = search_value(s, t);
        if (v > bv) {
            bv = v;
            bt = t;
            bi = i;
        }
    }
    double a = bi == 0 ? lo : lo + (double)(bi - 1) * h;
    double b = bi == g ? hi : lo + (double)(bi + 1) * h;
    const double ig = 0.5 * (sqrt(5.0) - 1.0);
    double x1 = b - ig * (b - a), x2 = a + ig * (b - a);
    double f1 = search_value(s, x1), f2 = search_value(s, x2);
    for (int it = 0; it < 200 && b - a > 1e-10; it++) {
        if (f1 >= f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - ig * (b - a);
            f1 = search_value(s, x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + ig * (b - a);
            f2 = search_value(s, x2);
        }
        if (f1 > bv) {
            bv = f1;
            bt = x1;
        }
        if (f2 > bv) {
            bv = f2;
            bt = x2;
        }
    }
    return bt;
}

/* Fit the variances the parameters leave open, from the eigendecomposition
 * of K (E: workspace of n x n). */
static rfx_status fit_variances(const double *K, size_t n, const double *y,
                                const rfx_gp_params *p, double *E, double *s2, double *noise)
{
    int fit_s2 = !(p->amplitude > 0), fit_noise = !(p->noise_var > 0);
    double mdk = 0, yy = 0;
    for (size_t i = 0; i < n; i++) {
        mdk += K[i * n + i];
        yy += y[i] * y[i];
    }
    mdk /= (double)n;
    if (fit_s2 && !(yy > 0))
        return rfx__error(RFX_EINVAL,
                          "gp_fit: the targets are all %s, so the amplitude cannot be fitted; "
                          "give gp_params.amplitude", p->normalize_y ? "equal" : "zero");
    if (!(mdk > 0))
        return rfx__error(RFX_ENUMERIC,
                          "gp_fit: the mean diagonal of K is %g, so variances cannot be fitted",
                          mdk);
    double *w;
    RFX__TRY(rfx__alloc(2 * n, sizeof(double), (void **)&w, "gp_fit: eigenvalues"));
    double *c2 = w + n;
    memcpy(E, K, n * n * sizeof(double));
    rfx_status st = rfx__eig_sym(E, n, w, 1, "gp_fit: eigendecomposition of K");
    if (st) {
        free(w);
        return st;
    }
    for (size_t k = 0; k < n; k++) {
        double c = 0;
        for (size_t i = 0; i < n; i++) c += E[k * n + i] * y[i];
        c2[k] = c * c;
        if (w[k] < 0) w[k] = 0;
    }
    search s = {w, c2, n, fit_s2 ? (fit_noise ? FIT_BOTH : FIT_S2) : FIT_NOISE, mdk,
                p->amplitude, p->noise_var};
    double t = maximise(&s, log(p->ratio_min), log(p->ratio_max));
    search_point(&s, t, s2, noise);
    free(w);
    if (!(*s2 > 0 && isfinite(*s2) && *noise > 0 && isfinite(*noise)))
        return rfx__error(RFX_ENUMERIC, "gp_fit: the fitted variances are not finite (s2 %g, "
                                        "noise %g)", *s2, *noise);
    return RFX_OK;
}

rfx_status rfx_gp_fit(const rfx_kern *k, rfx_cmat X, const double *y,
                      const rfx_gp_params *params, rfx_gp **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "gp_fit: out is NULL");
    if (!k) return rfx__error(RFX_EINVAL, "gp_fit: kernel is NULL");
    rfx_gp_params p = params ? *params : rfx_gp_params_default();
    RFX__TRY(check_params(&p));
    RFX__TRY(rfx__check_cmat(X, "gp_fit: X"));
    if (X.rows == 0) return rfx__error(RFX_EINVAL, "gp_fit: X has no rows");
    if (!y) return rfx__error(RFX_EINVAL, "gp_fit: y is NULL");
    const size_t n = X.rows, d = X.cols;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(y[i])) return rfx__error(RFX_EPARSE, "gp_fit: y[%zu] is not finite", i);
    size_t nn, nd;
    int ni;
    RFX__TRY(rfx__mul(n, n, &nn, "gp_fit: Gram matrix"));
    RFX__TRY(rfx__mul(n, d, &nd, "gp_fit: training rows"));
    RFX__TRY(rfx__lapack_int(n, &ni, "gp_fit"));

    rfx_gp *gp;
    RFX__TRY(rfx__calloc(1, sizeof *gp, (void **)&gp, "gp_fit"));
    double *K = NULL;
    rfx_status st = rfx__alloc(nn, sizeof(double), (void **)&K, "gp_fit: Gram matrix");
    if (!st) st = rfx__alloc(nn, sizeof(double), (void **)&gp->R, "gp_fit: Cholesky factor");
    if (!st) st = rfx__alloc(nd, sizeof(double), (void **)&gp->X, "gp_fit: training rows");
    if (!st) st = rfx__alloc(n, sizeof(double), (void **)&gp->alpha, "gp_fit: alpha");
    if (!st) {
        st = rfx_kern_gram_sym(k, X, rfx_mat_of(K, n, n), p.n_threads);
        if (st) rfx__error_prefix("gp_fit");
    }
    if (st) goto fail;

    /* the targets, standardised as scikit-learn's normalize_y */
    double *ys = gp->alpha;
    gp->y_mean = 0;
    gp->y_std = 1;
    if (p.normalize_y) {
        double m = 0, v = 0;
        for (size_t i = 0; i < n; i++) m += y[i];
        m /= (double)n;
        for (size_t i = 0; i < n; i++) v += (y[i] - m) * (y[i] - m);
        double sd = sqrt(v / (double)n);
        if (sd < 10.0 * DBL_EPSILON) sd = 1.0;
        gp->y_mean = m;
        gp->y_std = sd;
    }
    for (size_t i = 0; i < n; i++) ys[i] = (y[i] - gp->y_mean) / gp->y_std;
    double yy = 0;
    for (size_t i = 0; i < n; i++) yy += ys[i] * ys[i];

    int fit_s2 = !(p.amplitude > 0), fit_noise = !p.noise_free && !(p.noise_var > 0);
    double s2 = p.amplitude, noise = p.noise_free ? 0.0 : p.noise_var, jitter = 0;
    if (fit_s2 && p.noise_free) {
        /* s2 = y^T K^-1 y / n in closed form: factor K itself */
        if (!(yy > 0)) {
            st = rfx__error(RFX_EINVAL,
                            "gp_fit: the targets are all %s, so the amplitude cannot be fitted; "
                            "give gp_params.amplitude", p.normalize_y ? "equal" : "zero");
            goto fail;
        }
        double jk;
        st = factor_jitter(K, n, 1.0, 0.0, &p, gp->R, &jk);
        if (st) goto fail;
        double *t = K; /* K is no longer needed */
        memcpy(t, ys, n * sizeof(double));
        st = rfx__chol_solve(gp->R, n, t, 1);
        if (st) goto fail;
        double q = 0;
        for (size_t i = 0; i < n; i++) q += ys[i] * t[i];
        s2 = q / (double)n;
        if (!(s2 > 0 && isfinite(s2))) {
            st = rfx__error(RFX_ENUMERIC, "gp_fit: the fitted amplitude is %g", s2);
            goto fail;
        }
        /* chol(s2 (K + jk I)) = sqrt(s2) chol(K + jk I) */
        double rs = sqrt(s2);
        for (size_t i = 0; i < nn; i++) gp->R[i] *= rs;
        jitter = s2 * jk;
    } else {
        if (fit_s2 || fit_noise) {
            /* the eigendecomposition uses R as its workspace */
            st = fit_variances(K, n, ys, &p, gp->R, &s2, &noise);
            if (st) goto fail;
        }
        st = factor_jitter(K, n, s2, noise, &p, gp->R, &jitter);
        if (st) goto fail;
    }
    st = rfx__chol_solve(gp->R, n, ys, 1); /* ys (= alpha) <- C^-1 y */
    if (st) goto fail;
    free(K);
    K = NULL;
    {
        /* y^T alpha from the standardised targets again */
        double q = 0;
        for (size_t i = 0; i < n; i++) q += (y[i] - gp->y_mean) / gp->y_std * gp->alpha[i];
        gp->lml = -0.5 * q - 0.5 * rfx__chol_logdet(gp->R, n) - 0.5 * (double)n * log(2.0 * M_PI);
    }
    for (size_t i = 0; i < n; i++) memcpy(gp->X + i * d, X.data + i * X.stride, d * sizeof(double));
    gp->k = (rfx_kern *)k;
    atomic_fetch_add_explicit(&gp->k->refs, 1, memory_order_relaxed);
    gp->n = n;
    gp->d = d;
    gp->s2 = s2;
    gp->noise = noise;
    gp->jitter = jitter;
    gp->n_threads = p.n_threads;
    *out = gp;
    return RFX_OK;
fail:
    free(K);
    rfx_gp_free(gp);
    return st;
}

/* Rows per chunk of predictions: k(X_chunk, X_train) about 8 MiB. */
static size_t chunk_rows(size_t n)
{
    size_t r = ((size_t)1 << 20) / (n ? n : 1);
    r = (r / 64) * 64;
    return r < 64 ? 64 : r;
}

rfx_status rfx_gp_predict(const rfx_gp *gp, rfx_cmat X, double *mean, double *std_latent,
                          double *std_noisy)
{
    if (!gp) return rfx__error(RFX_EINVAL, "gp_predict: gp is NULL");
    if (!mean) return rfx__error(RFX_EINVAL, "gp_predict: mean is NULL");
    RFX__TRY(rfx__check_cmat(X, "gp_predict: X"));
    if (X.cols != gp->d)
        return rfx__error(RFX_EDIM, "gp_predict: X has %zu columns, the model was fitted on %zu",
                          X.cols, gp->d);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "gp_predict: X row %zu, column %zu is not finite", r, c);
    if (X.rows == 0) return RFX_OK;
    const size_t n = gp->n, m = X.rows, rows = m < chunk_rows(n) ? m : chunk_rows(n);
    const int want_std = std_latent || std_noisy;
    /* workspace: the chunk's cross-covariances, its k(x, x), and the three
     * outputs (written to the caller's arrays only on success) */
    size_t wsz;
    RFX__TRY(rfx__mul(rows, n, &wsz, "gp_predict: workspace"));
    RFX__TRY(rfx__add(wsz, rows + 3 * m, &wsz, "gp_predict: workspace"));
    double *Kc;
    RFX__TRY(rfx__alloc(wsz, sizeof(double), (void **)&Kc, "gp_predict: workspace"));
    double *kd = Kc + rows * n, *pm = kd + rows, *pl = pm + m, *pn = pl + m;
    rfx_cmat Xt = rfx_cmat_of(gp->X, n, gp->d);
    int nt = rfx__threads(gp->n_threads);
    rfx_status st = RFX_OK;
    for (size_t r0 = 0; r0 < m && !st; r0 += rows) {
        size_t nr = m - r0 < rows ? m - r0 : rows;
        rfx_cmat Xc = {X.data + r0 * X.stride, nr, X.cols, X.stride};
        st = rfx_kern_gram(gp->k, Xc, Xt, rfx_mat_of(Kc, nr, n), gp->n_threads);
        if (!st && want_std) st = rfx_kern_diag(gp->k, Xc, kd);
        if (st) {
            rfx__error_prefix("gp_predict");
            break;
        }
        const size_t tiles = (nr + 63) / 64;
#pragma omp parallel num_threads(nt) if (tiles > 1)
        {
            RFX__SERIAL_BLAS();
#pragma omp for schedule(dynamic, 1)
            for (size_t t = 0; t < tiles; t++) {
                size_t i0 = t * 64, ti = nr - i0 < 64 ? nr - i0 : 64;
                double *Kt = Kc + i0 * n;
                for (size_t i = 0; i < ti; i++) {
                    double *row = Kt + i * n, s = 0;
                    for (size_t j = 0; j < n; j++) {
                        row[j] *= gp->s2;
                        s += row[j] * gp->alpha[j];
                    }
                    pm[r0 + i0 + i] = s * gp->y_std + gp->y_mean;
                }
                if (want_std) {
                    /* V = Kt R^-1, i.e. v = R^-T k* per row */
                    cblas_dtrsm(CblasRowMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit,
                                (int)ti, (int)n, 1.0, gp->R, (int)n, Kt, (int)n);
                    for (size_t i = 0; i < ti; i++) {
                        const double *v = Kt + i * n;
                        double q = 0;
                        for (size_t j = 0; j < n; j++) q += v[j] * v[j];
                        double var = gp->s2 * kd[i0 + i] - q;
                        if (var < 0) var = 0;
                        pl[r0 + i0 + i] = sqrt(var) * gp->y_std;
                        pn[r0 + i0 + i] = sqrt(var + gp->noise) * gp->y_std;
                    }
                }
            }
        }
    }
    if (!st) {
        memcpy(mean, pm, m * sizeof(double));
        if (std_latent) memcpy(std_latent, pl, m * sizeof(double));
        if (std_noisy) memcpy(std_noisy, pn, m * sizeof(double));
    }
    free(Kc);
    return st;
}

double rfx_gp_log_marginal_likelihood(const rfx_gp *gp) { return gp ? gp->lml : NAN; }

rfx_status rfx_gp_get_info(const rfx_gp *gp, rfx_gp_info *info)
{
    if (!gp) return rfx__error(RFX_EINVAL, "gp_get_info: gp is NULL");
    if (!info) return rfx__error(RFX_EINVAL, "gp_get_info: info is NULL");
    info->noise_var = gp->noise;
    info->amplitude = gp->s2;
    info->jitter = gp->jitter;
    info->log_marginal_likelihood = gp->lml;
    info->y_mean = gp->y_mean;
    info->y_std = gp->y_std;
    info->n_train = gp->n;
    return RFX_OK;
}

rfx_status rfx_gp_fit_length_scale(rfx_kernel kernel, double nu, const double *grid,
                                   size_t n_grid, rfx_cmat X, const double *y,
                                   const rfx_gp_params *params, rfx_gp **out,
                                   double *length_scale)
{
    if (!out) return rfx__error(RFX_EINVAL, "gp_fit_length_scale: out is NULL");
    if (!grid || n_grid == 0)
        return rfx__error(RFX_EINVAL, "gp_fit_length_scale: the grid is empty");
    for (size_t i = 0; i < n_grid; i++)
        if (!(grid[i] > 0 && isfinite(grid[i])))
            return rfx__error(RFX_EINVAL,
                              "gp_fit_length_scale: grid[%zu] must be > 0 and finite, got %g", i,
                              grid[i]);
    rfx_gp *best = NULL;
    double best_l = 0;
    rfx_status last = RFX_OK;
    for (size_t i = 0; i < n_grid; i++) {
        rfx_kern *k;
        rfx_status st = rfx_kern_shift(kernel, nu, grid[i], NULL, 0, &k);
        if (st) {
            rfx_gp_free(best);
            return st;
        }
        rfx_gp *gp;
        st = rfx_gp_fit(k, X, y, params, &gp);
        rfx_kern_free(k);
        if (st == RFX_ENUMERIC) {
            rfx__error_prefix("gp_fit_length_scale: length scale %g", grid[i]);
            last = st;
            continue;
        }
        if (st) {
            rfx_gp_free(best);
            return st;
        }
        if (!best || gp->lml > best->lml) {
            rfx_gp_free(best);
            best = gp;
            best_l = grid[i];
        } else {
            rfx_gp_free(gp);
        }
    }
    if (!best) return last; /* every fit failed numerically: its message stands */
    rfx_clear_error();
    if (length_scale) *length_scale = best_l;
    *out = best;
    return RFX_OK;
}
