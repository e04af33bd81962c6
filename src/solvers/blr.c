/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bayesian linear regression on a caller's design matrix with a general
 * Gaussian prior (rfx/blr.h has the model and its formulas).
 *
 * The fit works on the whitened, centred, weight-scaled design
 * Psi_i = sqrt(w_i) R (phi_i - phibar), R the upper Cholesky factor of
 * Sigma0 = R^T R (so L = R^T and psi = L^T phi = R phi), and on
 * yc_i = sqrt(w_i) (y_i - ybar), through the thin singular value
 * decomposition Psi = Q diag(sv) Vt (r = min(n, N) values): the nonzero
 * eigenvalues of C = Psi^T Psi are s_k = sv_k^2, and C's right-hand side
 * Psi^T yc has the coordinates ct_k = sv_k (q_k . yc) on the rows v_k of
 * Vt. Forming C (or the Gram matrix K = Psi Psi^T) would square Psi's
 * condition number, which polynomial bases make large; the SVD keeps the
 * small s_k accurate to rounding relative to sv_1 sv_k rather than sv_1^2.
 *
 * With A = beta C + alpha I, A^-1 = sum_k v_k v_k^T / (beta s_k + alpha) +
 * (I - Vt^T Vt) / alpha, so the posterior mean is m = sum_k beta ct_k /
 * (beta s_k + alpha) v_k, and the variance of f(x*) with psi* = R (phi* -
 * phibar):
 *   r = N   |G phi*c|^2, G = diag(1 / sqrt(beta s + alpha)) Vt R, N x N;
 *   r < N   (|psi*|^2 - |B psi*|^2) / alpha, B = diag(sqrt(beta s / (beta s
 *           + alpha))) Vt, r x N (the matrix inversion lemma of
 *           Rasmussen & Williams eq. 2.12: memory n N, not N^2).
 * Cost O(n N min(n, N)): the primal O(n N^2) for n >= N, the dual O(n^2 N)
 * for n < N.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

/* As bayes.c: the smallest fitted alpha / beta relative to trace(C) / N. */
#define RATIO_MIN 1e-10
/* Sigma0 is symmetric when |a_ij - a_ji| <= SYM_TOL max(|a_ii|, |a_jj|). */
#define SYM_TOL 1e-12
/* Rows per block of a prediction. */
#define PREDICT_ROWS 256

struct rfx_blr {
    size_t N, rank, n_train, iterations;
    int icpt;
    double alpha, beta, logev, gamma, b0, wsum;
    double *w;       /* N posterior mean weights                           */
    double *phimean; /* N weighted column means of Phi (NULL: no intercept) */
    double *R;       /* rank < N: N x N upper factor of Sigma0 (NULL: identity) */
    double *G;       /* rank x N: G (rank N) or B (rank < N)                */
};

rfx_blr_params rfx_blr_params_default(void)
{
    rfx_blr_params p;
    memset(&p, 0, sizeof p);
    p.fit_intercept = 1;
    p.max_iter = 300;
    p.tol = 1e-10;
    return p;
}

rfx_status rfx_blr_params_check(const rfx_blr_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "blr: params is NULL");
    if (!(isfinite(p->noise_var) && p->noise_var >= 0))
        return rfx__error(RFX_EINVAL, "blr.noise_var: must be > 0, or 0 to fit it; got %g",
                          p->noise_var);
    if (!(isfinite(p->prior_var) && p->prior_var >= 0))
        return rfx__error(RFX_EINVAL, "blr.prior_var: must be > 0, or 0 to fit it; got %g",
                          p->prior_var);
    if (p->max_iter == 0) return rfx__error(RFX_EINVAL, "blr.max_iter: must be >= 1");
    if (!(p->tol > 0 && isfinite(p->tol)))
        return rfx__error(RFX_EINVAL, "blr.tol: must be > 0, got %g", p->tol);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "blr.n_threads: must be >= 0, got %d", p->n_threads);
    return RFX_OK;
}

void rfx_blr_free(rfx_blr *m)
{
    if (!m) return;
    free(m->w);
    free(m->phimean);
    free(m->R);
    free(m->G);
    free(m);
}

const double *rfx_blr_coef(const rfx_blr *m) { return m ? m->w : NULL; }

rfx_status rfx_blr_get_info(const rfx_blr *m, rfx_blr_info *info)
{
    if (!m || !info) return rfx__error(RFX_EINVAL, "blr: NULL argument");
    memset(info, 0, sizeof *info);
    info->n_features = m->N;
    info->n_train = m->n_train;
    info->fit_intercept = m->icpt;
    info->rank = m->rank;
    info->iterations = m->iterations;
    info->noise_var = 1.0 / m->beta;
    info->prior_var = 1.0 / m->alpha;
    info->log_evidence = m->logev;
    info->effective_params = m->gamma;
    info->intercept = m->b0;
    return RFX_OK;
}

/* Sigma0's upper Cholesky factor into R (N x N), or RFX_EINVAL naming
 * prior_cov. */
static rfx_status prior_factor(const double *S, size_t N, int nt, double *R)
{
    for (size_t i = 0; i < N; i++) {
        for (size_t j = 0; j < N; j++) {
            double a = S[i * N + j];
            if (!isfinite(a))
                return rfx__error(RFX_EINVAL, "blr.prior_cov[%zu][%zu]: not finite (%g)", i, j, a);
            double scale = fmax(fabs(S[i * N + i]), fabs(S[j * N + j]));
            if (j > i && fabs(a - S[j * N + i]) > SYM_TOL * scale)
                return rfx__error(RFX_EINVAL,
                                  "blr.prior_cov: not symmetric: [%zu][%zu] = %.17g, "
                                  "[%zu][%zu] = %.17g",
                                  i, j, a, j, i, S[j * N + i]);
        }
    }
    memcpy(R, S, N * N * sizeof *R);
    rfx_status st = rfx__chol(R, N, nt, "blr.prior_cov");
    if (st == RFX_ENUMERIC)
        return rfx__error(RFX_EINVAL, "blr.prior_cov: not positive definite (its Cholesky "
                                      "factorisation fails)");
    return st;
}

rfx_status rfx_blr_fit(const rfx_blr_params *params, rfx_cmat Phi, const double *y,
                       rfx_blr **out)
{
    RFX__TRY(rfx_blr_params_check(params));
    if (!out || !y) return rfx__error(RFX_EINVAL, "blr: NULL argument");
    RFX__TRY(rfx__check_cmat(Phi, "blr: Phi"));
    const size_t n = Phi.rows, N = Phi.cols;
    if (N == 0) return rfx__error(RFX_EDIM, "blr: Phi has no columns");
    if (n < 2) return rfx__error(RFX_EDIM, "blr: at least 2 rows are needed, got %zu", n);
    size_t bad_r = 0, bad_c = 0;
    if (!rfx__all_finite(Phi, &bad_r, &bad_c))
        return rfx__error(RFX_EPARSE, "blr: Phi[%zu][%zu] is not finite (%g)", bad_r, bad_c,
                          Phi.data[bad_r * Phi.stride + bad_c]);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(y[i])) return rfx__error(RFX_EPARSE, "blr: y[%zu] is not finite (%g)", i, y[i]);
    const double *wt = params->sample_weight;
    if (wt) RFX__TRY(rfx__check_weights(wt, n, "blr.sample_weight"));
    const int icpt = params->fit_intercept != 0;
    double wsum = 0, ybar = 0;
    size_t npos = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = wt ? wt[i] : 1.0;
        wsum += wi;
        ybar += wi * y[i];
        npos += wi > 0;
    }
    const double n_eff = (double)npos - icpt;
    if (!(n_eff >= 1))
        return rfx__error(RFX_EINVAL, "blr: %zu rows of positive weight leave no degree of "
                                      "freedom%s", npos, icpt ? " besides the intercept" : "");
    ybar = icpt ? ybar / wsum : 0.0;
    const int nt = params->n_threads;
    const size_t r = n < N ? n : N; /* the rank of the SVD */

    rfx_blr *m = calloc(1, sizeof *m);
    double *Psi = NULL, *yc = NULL, *E = NULL, *Vt = NULL, *s = NULL, *ct = NULL, *v = NULL;
    double *R = NULL;
    rfx_status st = m ? RFX_OK : rfx__error(RFX_ENOMEM, "blr: cannot allocate the model");
    if (!st) st = rfx__alloc(n * N, sizeof(double), (void **)&Psi, "blr: design");
    if (!st) st = rfx__alloc(n, sizeof(double), (void **)&yc, "blr");
    if (!st) st = rfx__alloc(n * r, sizeof(double), (void **)&E, "blr: left singular vectors");
    if (!st) st = rfx__alloc(r * N, sizeof(double), (void **)&Vt, "blr: right singular vectors");
    if (!st) st = rfx__alloc(r, sizeof(double), (void **)&s, "blr");
    if (!st) st = rfx__alloc(r, sizeof(double), (void **)&ct, "blr");
    if (!st) st = rfx__calloc(N, sizeof(double), (void **)&v, "blr");
    if (!st) st = rfx__calloc(N, sizeof(double), (void **)&m->w, "blr: weights");
    if (!st && icpt) st = rfx__calloc(N, sizeof(double), (void **)&m->phimean, "blr");
    if (!st && params->prior_cov) {
        st = rfx__alloc(N * N, sizeof(double), (void **)&R, "blr: prior factor");
        if (!st) st = prior_factor(params->prior_cov, N, nt, R);
    }
    if (st) goto done;

    /* Psi = sqrt(w) (Phi - phibar) R^T, yc = sqrt(w) (y - ybar) */
    if (icpt) {
        for (size_t i = 0; i < n; i++) {
            double wi = wt ? wt[i] : 1.0;
            for (size_t j = 0; j < N; j++) m->phimean[j] += wi * Phi.data[i * Phi.stride + j];
        }
        for (size_t j = 0; j < N; j++) m->phimean[j] /= wsum;
    }
    double yy = 0;
    for (size_t i = 0; i < n; i++) {
        double sw = wt ? sqrt(wt[i]) : 1.0;
        for (size_t j = 0; j < N; j++)
            Psi[i * N + j] = sw * (Phi.data[i * Phi.stride + j] - (icpt ? m->phimean[j] : 0.0));
        yc[i] = sw * (y[i] - ybar);
        yy += yc[i] * yc[i];
    }
    if (R)
        RFX__SERIAL(cblas_dtrmm(CblasRowMajor, CblasRight, CblasUpper, CblasTrans, CblasNonUnit,
                                (int)n, (int)N, 1.0, R, (int)N, Psi, (int)N))

    /* Psi = Q diag(sv) Vt: s_k = sv_k^2 are the nonzero eigenvalues of C =
     * Psi^T Psi (and of K = Psi Psi^T) without squaring Psi's condition
     * number, and ct_k = sv_k (q_k . yc) is C's right-hand side in that basis */
    double trace = 0;
    for (size_t i = 0; i < n * N; i++) trace += Psi[i] * Psi[i];
    st = rfx__svd_thin(Psi, n, N, s, E, Vt, "blr");
    if (st) goto done;
    for (size_t k = 0; k < r; k++) {
        double acc = 0;
        for (size_t i = 0; i < n; i++) acc += E[i * r + k] * yc[i];
        ct[k] = s[k] * acc;
        s[k] *= s[k];
    }
    double a = params->prior_var > 0 ? 1.0 / params->prior_var : 0;
    double b = params->noise_var > 0 ? 1.0 / params->noise_var : 0;
    if (a == 0 || b == 0) {
        double var_y = yy / n_eff;
        if (!(var_y > 0)) var_y = 1.0;
        if (a == 0) a = 1.0 / var_y;
        if (b == 0) b = 10.0 / var_y;
        m->iterations = rfx__evidence_fixed_point(s, ct, r, yy, n_eff, params->prior_var <= 0,
                                  params->noise_var <= 0, params->max_iter, params->tol,
                                  RATIO_MIN * trace / (double)N, &a, &b);
    }
    double logw = 0;
    if (wt)
        for (size_t i = 0; i < n; i++)
            if (wt[i] > 0) logw += log(wt[i]);
    m->logev = rfx__eigen_log_evidence(s, ct, r, N, n_eff, yy, a, b) + 0.5 * logw;
    m->gamma = 0;
    for (size_t k = 0; k < r; k++) m->gamma += b * s[k] / (b * s[k] + a);

    /* the posterior mean v = sum_k beta ct_k / (beta s_k + alpha) v_k (whitened)
     * and the variance factor: full rank, G = diag(1 / sqrt(beta s + alpha)) Vt R;
     * else B = diag(sqrt(beta s / (beta s + alpha))) Vt, var = (|psi|^2 -
     * |B psi|^2) / alpha */
    const int full = r == N;
    st = rfx__alloc(r * N, sizeof(double), (void **)&m->G, "blr: posterior factor");
    if (st) goto done;
    for (size_t k = 0; k < r; k++) {
        const double den = b * s[k] + a, c = b * ct[k] / den;
        const double g = full ? 1.0 / sqrt(den) : sqrt(b * s[k] / den);
        for (size_t j = 0; j < N; j++) {
            v[j] += c * Vt[k * N + j];
            m->G[k * N + j] = g * Vt[k * N + j];
        }
    }
    if (full && R) /* G <- G R */
        RFX__SERIAL(cblas_dtrmm(CblasRowMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit,
                                (int)N, (int)N, 1.0, R, (int)N, m->G, (int)N))
    /* w = L v = R^T v */
    if (R) {
        for (size_t j = 0; j < N; j++) {
            double acc = 0;
            for (size_t i = 0; i <= j; i++) acc += R[i * N + j] * v[i];
            m->w[j] = acc;
        }
    } else {
        memcpy(m->w, v, N * sizeof *v);
    }
    if (!full) { /* predictions whiten with R */
        m->R = R;
        R = NULL;
    }
    double b0 = ybar;
    if (icpt)
        for (size_t j = 0; j < N; j++) b0 -= m->phimean[j] * m->w[j];
    m->b0 = b0;
    m->N = N;
    m->rank = r;
    m->n_train = npos;
    m->icpt = icpt;
    m->alpha = a;
    m->beta = b;
    m->wsum = wsum;
    *out = m;
    m = NULL;
done:
    rfx_blr_free(m);
    free(Psi);
    free(yc);
    free(E);
    free(Vt);
    free(s);
    free(ct);
    free(v);
    free(R);
    return st;
}

rfx_status rfx_blr_predict(const rfx_blr *m, rfx_cmat Phi, double *mean, double *std,
                           int with_noise)
{
    if (!m || !mean) return rfx__error(RFX_EINVAL, "blr predict: NULL argument");
    RFX__TRY(rfx__check_cmat(Phi, "blr predict: Phi"));
    const size_t N = m->N, rows = Phi.rows;
    if (Phi.cols != N)
        return rfx__error(RFX_EDIM, "blr predict: Phi has %zu columns, the model %zu", Phi.cols, N);
    size_t bad_r = 0, bad_c = 0;
    if (!rfx__all_finite(Phi, &bad_r, &bad_c))
        return rfx__error(RFX_EPARSE, "blr predict: Phi[%zu][%zu] is not finite (%g)", bad_r,
                          bad_c, Phi.data[bad_r * Phi.stride + bad_c]);
    const size_t gr = m->rank; /* rows of G */
    const int full = gr == N;
    double *U = NULL, *T = NULL;
    if (std) {
        RFX__TRY(rfx__alloc(PREDICT_ROWS * N, sizeof(double), (void **)&U, "blr predict"));
        rfx_status st = rfx__alloc(PREDICT_ROWS * gr, sizeof(double), (void **)&T, "blr predict");
        if (st) {
            free(U);
            return st;
        }
    }
    const double noise = 1.0 / m->beta;
    const double shared = (m->icpt ? noise / m->wsum : 0.0) + (with_noise ? noise : 0.0);
    for (size_t r0 = 0; r0 < rows; r0 += PREDICT_ROWS) {
        const size_t nr = rows - r0 < PREDICT_ROWS ? rows - r0 : PREDICT_ROWS;
        for (size_t i = 0; i < nr; i++)
            mean[r0 + i] = rfx__dot(Phi.data + (r0 + i) * Phi.stride, m->w, N) + m->b0;
        if (!std) continue;
        for (size_t i = 0; i < nr; i++)
            for (size_t j = 0; j < N; j++)
                U[i * N + j] = Phi.data[(r0 + i) * Phi.stride + j] - (m->phimean ? m->phimean[j] : 0);
        if (!full && m->R) /* psi = R u */
            RFX__SERIAL(cblas_dtrmm(CblasRowMajor, CblasRight, CblasUpper, CblasTrans,
                                    CblasNonUnit, (int)nr, (int)N, 1.0, m->R, (int)N, U, (int)N))
        RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nr, (int)gr, (int)N,
                                1.0, U, (int)N, m->G, (int)N, 0.0, T, (int)gr))
        for (size_t i = 0; i < nr; i++) {
            double tt = rfx__dot(T + i * gr, T + i * gr, gr), var;
            if (!full) {
                var = (rfx__dot(U + i * N, U + i * N, N) - tt) / m->alpha;
                if (var < 0) var = 0;
            } else {
                var = tt;
            }
            std[r0 + i] = sqrt(var + shared);
        }
    }
    free(U);
    free(T);
    return RFX_OK;
}
