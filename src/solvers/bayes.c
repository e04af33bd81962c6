/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Weight-space Bayesian linear regression on random features (Rasmussen &
 * Williams, "Gaussian Processes for Machine Learning", 2006, section 2.1;
 * Bishop, "Pattern Recognition and Machine Learning", 2006, section 3.5).
 * alpha = 1 / prior_var, beta = 1 / noise_var:
 *   A = beta C + alpha I,  m = beta A^-1 c,
 *   log p(y) = n/2 log beta + D/2 log alpha - 1/2 log|A|
 *              - beta/2 |y - Z m|^2 - alpha/2 |m|^2 - n/2 log(2 pi)   (3.86)
 * with C, c the (centred) normal equations. Unknown variances maximise the
 * evidence by MacKay's fixed point (Bishop 3.91-3.95) in the eigenbasis of
 * C: gamma = sum beta s_i / (beta s_i + alpha), alpha = gamma / |m|^2,
 * beta = (n - gamma) / |y - Z m|^2. With an intercept (flat prior) the
 * centred problem has n - 1 degrees of freedom.
 *
 * Row weights multiply the noise precision: y_i ~ N(z_i.w + b, noise_var /
 * w_i). C, c and |y - Z m|^2 become their weighted forms (the statistics'
 * Z^T W Z, ...), n stays the number of observations - the rows of positive
 * weight - in the beta update and the evidence, and the evidence gains the
 * normalisation of the row variances, + 1/2 sum_i log w_i:
 *   log p(y) = n/2 log beta + 1/2 sum log w_i + D/2 log alpha - 1/2 log|A|
 *              - beta/2 |y - Z m|_W^2 - alpha/2 |m|^2 - n/2 log(2 pi).
 * Scaling every weight by k then fits noise_var k times larger and the
 * same posterior mean; an integer weight is a repeated row for fixed
 * variances (the posterior is the same), not for fitted ones (a repeated
 * row is n more observations). A row of weight 0 is a row left out.
 *
 * Fewer rows than features (n < D, the small samples of surrogate
 * modelling): C = Zc^T Zc (Zc the centred, weight-scaled features) has the
 * same nonzero eigenvalues s_k as the n x n Gram matrix K = Zc Zc^T, and
 * with u_k the eigenvectors of K, c's coordinate on the k-th eigenvector of
 * C is v_k.c = sqrt(s_k) u_k.yc; the other D - n eigenvalues are 0 and c
 * has no part there. The fixed point and the evidence then need only K's
 * eigen-decomposition, O(n^2 D + n^3) in place of O(D^3):
 *   log|A| = sum_k log(beta s_k + alpha) + (D - n) log alpha,
 *   m_k = beta ct_k / (beta s_k + alpha),  |m|^2 = sum m_k^2,
 *   |y - Z m|^2 = yy - 2 sum m_k ct_k + sum s_k m_k^2.
 * rfx_bayes_fit takes the variances from this dual form and factors the
 * D x D posterior precision once, for the model's predictive variance.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

static const double LOG_2PI = 1.837877066409345483560659472811;

/* The smallest fitted alpha / beta (an effective ridge penalty) relative to
 * the mean eigenvalue trace(C) / D: keeps the condition number of the
 * posterior precision below ~1e10 D, where Cholesky is safe; the same floor
 * as the ridge GCV grid. */
#define RATIO_MIN 1e-10

rfx_bayes_params rfx_bayes_params_default(void)
{
    rfx_bayes_params p;
    memset(&p, 0, sizeof p);
    p.noise_var = 0;
    p.prior_var = 0;
    p.fit_intercept = 1;
    p.max_iter = 300;
    p.tol = 1e-8;
    p.n_threads = 0;
    p.sample_weight = NULL;
    return p;
}

static rfx_status check_params(const rfx_bayes_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "bayes: params is NULL");
    if (!isfinite(p->noise_var))
        return rfx__error(RFX_EINVAL, "bayes.noise_var: must be finite, got %g", p->noise_var);
    if (!isfinite(p->prior_var))
        return rfx__error(RFX_EINVAL, "bayes.prior_var: must be finite, got %g", p->prior_var);
    if (p->max_iter == 0) return rfx__error(RFX_EINVAL, "bayes.max_iter: must be >= 1");
    if (!(p->tol > 0 && isfinite(p->tol)))
        return rfx__error(RFX_EINVAL, "bayes.tol: must be > 0, got %g", p->tol);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "bayes.n_threads: must be >= 0, got %d", p->n_threads);
    return RFX_OK;
}

size_t rfx__evidence_fixed_point(const double *s, const double *ct, size_t D, double yy,
                                 double n_eff, int fit_alpha, int fit_beta, size_t max_iter,
                                 double tol, double ratio_min, double *alpha, double *beta)
{
    size_t done = 0;
    double a = *alpha, b = *beta;
    const double var_y = yy / (n_eff > 1 ? n_eff : 1);
    const double floor_noise = 1e-12 * (var_y > 0 ? var_y : 1.0);
    for (size_t it = 0; it < max_iter; it++) {
        double gamma = 0, mm = 0, fit = 0;
        for (size_t i = 0; i < D; i++) {
            double si = s[i] > 0 ? s[i] : 0;
            double den = b * si + a;
            double mi = b * ct[i] / den; /* posterior mean, eigen coordinates */
            gamma += b * si / den;
            mm += mi * mi;
            fit += mi * (2.0 * ct[i] - si * mi); /* 2 m.c - m^T C m */
        }
        double rss = yy - fit;
        if (rss < floor_noise * n_eff) rss = floor_noise * n_eff;
        double a_new = a, b_new = b;
        if (fit_alpha) a_new = mm > 0 ? gamma / mm : a * 10.0;
        if (fit_beta) b_new = n_eff > gamma ? (n_eff - gamma) / rss : b;
        if (!(a_new > 0) || !isfinite(a_new)) a_new = a;
        if (!(b_new > 0) || !isfinite(b_new)) b_new = b;
        if (b_new > 1.0 / floor_noise) b_new = 1.0 / floor_noise;
        /* keep A = beta C + alpha I well conditioned: alpha / beta (the ridge
         * penalty it amounts to) at least ratio_min (noise-free data would
         * otherwise drive the noise variance to zero) */
        if (a_new < ratio_min * b_new) {
            if (fit_beta) b_new = a_new / ratio_min;
            else a_new = ratio_min * b_new;
        }
        double change = fabs(log(a_new / a)) + fabs(log(b_new / b));
        a = a_new;
        b = b_new;
        done = it + 1;
        if (change < tol) break;
    }
    *alpha = a;
    *beta = b;
    return done;
}

double rfx__eigen_log_evidence(const double *s, const double *ct, size_t n_s, size_t D,
                               double n_eff, double yy, double a, double b)
{
    double mm = 0, mc = 0, mcm = 0, logdet = (double)(D - n_s) * log(a);
    for (size_t k = 0; k < n_s; k++) {
        double sk = s[k] > 0 ? s[k] : 0;
        double den = b * sk + a, mk = b * ct[k] / den;
        mm += mk * mk;
        mc += mk * ct[k];
        mcm += sk * mk * mk;
        logdet += log(den);
    }
    double rss = yy - 2.0 * mc + mcm;
    if (rss < 0) rss = 0;
    return 0.5 * n_eff * log(b) + 0.5 * (double)D * log(a) - 0.5 * logdet - 0.5 * b * rss -
           0.5 * a * mm - 0.5 * n_eff * LOG_2PI;
}

/* The dual form (n rows < D features, see the top of the file): the fitted
 * variances as 1/alpha, 1/beta (each left as given when params fixes it)
 * and the log evidence at them, from the n x n Gram matrix of the centred,
 * weight-scaled features. X, y (stride ldy), w: the rows as rfx_bayes_fit
 * takes them, already checked. */
static rfx_status dual_evidence(const rfx_features *f, rfx_cmat X, const double *y, size_t ldy,
                                const double *w, const rfx_bayes_params *params,
                                double *alpha, double *beta, double *logev)
{
    const size_t n = X.rows, D = f->D;
    const int icpt = params->fit_intercept != 0;
    double *Z = NULL, *K = NULL, *yc = NULL, *ev = NULL, *ct = NULL;
    rfx_status st = rfx__alloc(n * D, sizeof(double), (void **)&Z, "bayes: features");
    if (!st) st = rfx__alloc(n * n, sizeof(double), (void **)&K, "bayes: Gram matrix");
    if (!st) st = rfx__alloc(n, sizeof(double), (void **)&yc, "bayes");
    if (!st) st = rfx__alloc(n, sizeof(double), (void **)&ev, "bayes");
    if (!st) st = rfx__alloc(n, sizeof(double), (void **)&ct, "bayes");
    if (!st) st = rfx_features_transform(f, X, rfx_mat_of(Z, n, D));
    if (st) goto done;

    double wsum = 0, ybar = 0, logw = 0;
    size_t npos = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        wsum += wi;
        ybar += wi * y[i * ldy];
        if (wi > 0) {
            npos++;
            if (w) logw += log(wi);
        }
    }
    ybar = icpt ? ybar / wsum : 0.0;
    if (icpt) {
        /* the weighted column means, subtracted from every row */
        double *mu = NULL;
        st = rfx__calloc(D, sizeof(double), (void **)&mu, "bayes");
        if (st) goto done;
        for (size_t i = 0; i < n; i++) {
            double wi = w ? w[i] : 1.0;
            for (size_t j = 0; j < D; j++) mu[j] += wi * Z[i * D + j];
        }
        for (size_t j = 0; j < D; j++) mu[j] /= wsum;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < D; j++) Z[i * D + j] -= mu[j];
        free(mu);
    }
    double yy = 0;
    for (size_t i = 0; i < n; i++) {
        double r = w ? sqrt(w[i]) : 1.0;
        yc[i] = r * (y[i * ldy] - ybar);
        yy += yc[i] * yc[i];
        if (w)
            for (size_t j = 0; j < D; j++) Z[i * D + j] *= r;
    }
    RFX__SERIAL(cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)n, (int)D, 1.0, Z,
                            (int)D, 0.0, K, (int)n))
    double trace = 0;
    for (size_t i = 0; i < n; i++) {
        trace += K[i * n + i];
        for (size_t j = i + 1; j < n; j++) K[j * n + i] = K[i * n + j];
    }
    st = rfx__eig_sym(K, n, ev, params->n_threads, "bayes (evidence, dual form)");
    if (st) goto done;
    for (size_t k = 0; k < n; k++) {
        double sk = ev[k] > 0 ? ev[k] : 0;
        ct[k] = sqrt(sk) * rfx__dot(K + k * n, yc, n);
    }
    const double n_eff = (double)npos - icpt;
    double a = params->prior_var > 0 ? 1.0 / params->prior_var : 0;
    double b = params->noise_var > 0 ? 1.0 / params->noise_var : 0;
    double var_y = yy / n_eff;
    if (!(var_y > 0)) var_y = 1.0;
    if (a == 0) a = 1.0 / var_y;
    if (b == 0) b = 10.0 / var_y;
    (void)rfx__evidence_fixed_point(ev, ct, n, yy, n_eff, params->prior_var <= 0, params->noise_var <= 0,
                         params->max_iter, params->tol, RATIO_MIN * trace / (double)D, &a, &b);
    *alpha = a;
    *beta = b;
    *logev = rfx__eigen_log_evidence(ev, ct, n, D, n_eff, yy, a, b) + 0.5 * logw;
done:
    free(Z);
    free(K);
    free(yc);
    free(ev);
    free(ct);
    return st;
}

/* rfx_bayes_solve, with the variances (alpha, beta) found already when ab is
 * not NULL. */
static rfx_status solve_with(const rfx_features *f, const rfx_stats *s,
                             const rfx_bayes_params *params, const double *ab, rfx_model **out)
{
    RFX__TRY(check_params(params));
    if (params->sample_weight)
        return rfx__error(RFX_EINVAL, "bayes.sample_weight: rfx_bayes_solve takes the weights "
                                      "from the statistics (rfx_stats_add_weighted); leave it NULL");
    if (s->D != f->D)
        return rfx__error(RFX_EDIM, "bayes: statistics of %zu features, the map has %zu", s->D,
                          f->D);
    if (s->ny != 1)
        return rfx__error(RFX_EINVAL, "bayes: one target column is supported, got %zu", s->ny);
    if (s->n < 2) return rfx__error(RFX_EINVAL, "bayes: at least 2 rows are needed, got %zu", s->n);
    const size_t D = s->D;
    const int icpt = params->fit_intercept != 0;
    const double n_eff = (double)s->n - icpt;
    double *C = NULL, *c = NULL, *mu = NULL, *w = NULL, *ct = NULL, yy, ybar;
    rfx_features *fc = NULL;
    rfx_model *m = NULL;
    rfx_status st = rfx__alloc(D * D, sizeof(double), (void **)&C, "bayes: normal matrix");
    if (!st) st = rfx__alloc(D, sizeof(double), (void **)&c, "bayes");
    if (!st) st = rfx__alloc(D, sizeof(double), (void **)&mu, "bayes");
    if (!st) st = rfx__alloc(D, sizeof(double), (void **)&w, "bayes");
    if (!st) st = rfx__alloc(D, sizeof(double), (void **)&ct, "bayes");
    if (st) goto done;
    rfx__stats_normal(s, icpt, C, c, &yy, mu, &ybar);

    double alpha = params->prior_var > 0 ? 1.0 / params->prior_var : 0;
    double beta = params->noise_var > 0 ? 1.0 / params->noise_var : 0;
    if ((alpha == 0 || beta == 0) && ab) {
        alpha = ab[0];
        beta = ab[1];
    } else if (alpha == 0 || beta == 0) {
        double var_y = yy / n_eff;
        if (!(var_y > 0)) var_y = 1.0;
        /* start: signal variance var(y) (|z|^2 ~ 1), noise 10% of it */
        if (alpha == 0) alpha = 1.0 / var_y;
        if (beta == 0) beta = 10.0 / var_y;
        double trace = 0;
        for (size_t i = 0; i < D; i++) trace += C[i * D + i];
        st = rfx__eig_sym(C, D, w, params->n_threads, "bayes (evidence)");
        if (st) goto done;
        RFX__SERIAL(cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)D, (int)D, 1.0, C, (int)D, c, 1, 0.0, ct, 1))
        (void)rfx__evidence_fixed_point(w, ct, D, yy, n_eff, params->prior_var <= 0, params->noise_var <= 0,
                             params->max_iter, params->tol, RATIO_MIN * trace / (double)D,
                             &alpha, &beta);
        rfx__stats_normal(s, icpt, C, c, &yy, mu, &ybar); /* C was overwritten */
    }
    /* A = beta C + alpha I = R^T R; m = beta A^-1 c */
    for (size_t i = 0; i < D * D; i++) C[i] *= beta;
    for (size_t i = 0; i < D; i++) C[i * D + i] += alpha;
    st = rfx__chol(C, D, params->n_threads, "bayes: posterior precision");
    if (st) goto done;
    for (size_t i = 0; i < D; i++) ct[i] = beta * c[i];
    st = rfx__chol_solve(C, D, ct, 1);
    if (st) goto done;

    double mm = 0, mc = 0;
    for (size_t i = 0; i < D; i++) {
        mm += ct[i] * ct[i];
        mc += ct[i] * c[i];
    }
    /* |y - Z m|^2 = yy - 2 m.c + m^T C m, and m^T C m = (m.(A m) - alpha |m|^2)/beta
     * = (beta m.c - alpha |m|^2) / beta since A m = beta c */
    double mCm = (beta * mc - alpha * mm) / beta;
    double rss = yy - 2.0 * mc + mCm;
    if (rss < 0) rss = 0;
    double logdet = rfx__chol_logdet(C, D);
    double logev = 0.5 * n_eff * log(beta) + 0.5 * (double)D * log(alpha) - 0.5 * logdet -
                   0.5 * beta * rss - 0.5 * alpha * mm - 0.5 * n_eff * LOG_2PI;
    if (s->logw != 0) logev += 0.5 * s->logw; /* weighted rows: their variances' share */

    st = rfx__features_copy(f, &fc);
    if (!st) st = rfx__model_alloc(RFX_METHOD_BAYES, fc, 1, 1, &m);
    if (st) goto done;
    fc = NULL;
    m->fit_intercept = icpt;
    m->n_train = s->n;
    if (s->wsum != (double)s->n) m->weight_sum = s->wsum; /* weighted rows */
    m->noise_var = 1.0 / beta;
    m->prior_var = 1.0 / alpha;
    m->lambda = alpha / beta;
    m->log_evidence = logev;
    memcpy(m->W, ct, D * sizeof *ct);
    memcpy(m->chol, C, D * D * sizeof *C);
    if (icpt) {
        memcpy(m->zmean, mu, D * sizeof *mu);
    } else {
        free(m->zmean);
        m->zmean = NULL;
    }
    double b0 = ybar;
    for (size_t j = 0; j < D; j++) b0 -= mu[j] * ct[j];
    m->intercept[0] = b0;
    *out = m;
    m = NULL;
done:
    rfx_features_free(fc);
    rfx_model_free(m);
    free(C);
    free(c);
    free(mu);
    free(w);
    free(ct);
    return st;
}

rfx_status rfx_bayes_solve(const rfx_features *f, const rfx_stats *s,
                           const rfx_bayes_params *params, rfx_model **out)
{
    if (!f || !s || !out) return rfx__error(RFX_EINVAL, "bayes: NULL argument");
    return solve_with(f, s, params, NULL, out);
}

rfx_status rfx_bayes_fit(const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                         const rfx_bayes_params *params, rfx_model **out)
{
    if (!f || !out) return rfx__error(RFX_EINVAL, "bayes: NULL argument");
    RFX__TRY(check_params(params));
    if (Y.cols != 1 || Y.rows != X.rows)
        return rfx__error(RFX_EDIM, "bayes: Y must be %zu x 1, got %zu x %zu", X.rows, Y.rows,
                          Y.cols);
    rfx_bayes_params solve = *params; /* the weights go into the statistics */
    solve.sample_weight = NULL;
    if (params->sample_weight) {
        RFX__TRY(rfx__check_cmat(X, "bayes: X"));
        RFX__TRY(rfx__check_weights(params->sample_weight, X.rows, "bayes.sample_weight"));
    }
    double ab[2], logev;
    const double *dual = NULL;
    if (X.rows < f->D && (params->prior_var <= 0 || params->noise_var <= 0) && X.rows >= 2) {
        RFX__TRY(rfx__check_cmat(X, "bayes: X"));
        RFX__TRY(rfx__check_cmat(Y, "bayes: Y"));
        RFX__TRY(dual_evidence(f, X, Y.data, Y.stride, params->sample_weight, params, &ab[0],
                               &ab[1], &logev));
        dual = ab;
    }
    rfx_stats *s;
    RFX__TRY(rfx_stats_create(f->D, 1, &s));
    rfx_status st = rfx_stats_add_weighted(s, f, X, Y, params->sample_weight);
    if (!st) st = solve_with(f, s, &solve, dual, out);
    rfx_stats_free(s);
    return st;
}

rfx_status rfx__bayes_log_evidence(const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                                   const rfx_bayes_params *params, double *logev)
{
    if (X.rows < f->D && X.rows >= 2 && Y.cols == 1 && Y.rows == X.rows) {
        RFX__TRY(check_params(params));
        RFX__TRY(rfx__check_cmat(X, "bayes: X"));
        RFX__TRY(rfx__check_cmat(Y, "bayes: Y"));
        if (params->sample_weight)
            RFX__TRY(rfx__check_weights(params->sample_weight, X.rows, "bayes.sample_weight"));
        double a, b;
        return dual_evidence(f, X, Y.data, Y.stride, params->sample_weight, params, &a, &b,
                             logev);
    }
    rfx_model *m;
    RFX__TRY(rfx_bayes_fit(f, X, Y, params, &m));
    *logev = m->log_evidence;
    rfx_model_free(m);
    return RFX_OK;
}
