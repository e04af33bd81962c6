/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sparse random feature expansions: q-sparse random features, columns
 * normalised on the training rows, coefficients by an l1 program, the
 * unknowns by k-fold cross-validation. See rfx/srfe.h for the method and
 * its sources.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Candidate weight scales (per standardised input) when none is given. */
static const double SCALE_GRID[] = {0.5, 1.0, 2.0};
#define N_SCALES (sizeof SCALE_GRID / sizeof *SCALE_GRID)

/* The default N: N_PER_ROW features per training row, within [N_MIN, N_MAX]
 * (on the G-function, d = 20, m = 800, the error falls from 0.13 at N = 10 m
 * to 0.08 at 20 m and 0.078 at 30 m, with lambda down to 1e-3 lambda_max). */
#define N_PER_ROW 30
#define N_MIN 1000
#define N_MAX 30000

/* Lasso paths stop once the selection score has been above this multiple of
 * its minimum for 5 grid points (the small-lambda end is the slow one). */
/* Scale screening: the candidates are scored with N / SCREEN_DIV features
 * (at least N_MIN); on the G-function and the SRFE example the screen picked
 * the scale the full fits pick. */
#define SCREEN_DIV 4

#define PATH_STOP_FACTOR 1.5

/* Candidate q when none is given: Q_FIRST first (with the scales), then the
 * others of Q_GRID that are <= d. */
static const size_t Q_GRID[] = {1, 2, 3};
#define N_QS (sizeof Q_GRID / sizeof *Q_GRID)
#define Q_FIRST 2

rfx_srfe_params rfx_srfe_params_default(void)
{
    rfx_srfe_params p;
    memset(&p, 0, sizeof p);
    p.features = rfx_features_params_default();
    p.features.sparsity = 0; /* choose from {1, 2, 3} */
    p.features.activation = RFX_ACTIVATION_SIN;
    p.features.weights = RFX_WEIGHTS_NORMAL;
    p.features.weight_scale = 0.0; /* choose */
    p.features.n_features = 0;     /* 30 m within [1000, 30000] */
    p.method = RFX_L1_METHOD_LASSO;
    p.lambda = 0.0;
    p.eta = 0.0;
    p.sparsity = 0;
    p.standardize = 1;
    p.n_folds = 5;
    p.n_lambdas = 50;
    p.lambda_min_ratio = 1e-3;
    p.select = RFX_SELECT_GCV;
    return p;
}

/* The features as the fit uses them: weight_scale <= 0 and n_features 0
 * stand for the chosen ones, any valid value. */
static rfx_features_params fit_features(const rfx_srfe_params *p)
{
    rfx_features_params fp = p->features;
    if (fp.weight_scale <= 0) fp.weight_scale = 1.0;
    if (fp.n_features == 0) fp.n_features = 1000;
    return fp;
}

rfx_status rfx_srfe_params_check(const rfx_srfe_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "srfe: params is NULL");
    if ((unsigned)p->method > RFX_L1_METHOD_HTP)
        return rfx__error(RFX_EINVAL, "srfe.method: %d is not an rfx_l1_method", (int)p->method);
    if (!isfinite(p->lambda) || !isfinite(p->eta) || p->eta < 0)
        return rfx__error(RFX_EINVAL, "srfe.lambda / srfe.eta: must be finite (eta >= 0)");
    if (p->n_folds < 2)
        return rfx__error(RFX_EINVAL, "srfe.n_folds: must be >= 2, got %zu", p->n_folds);
    if (p->n_lambdas < 1)
        return rfx__error(RFX_EINVAL, "srfe.n_lambdas: must be >= 1");
    if (p->select != RFX_SELECT_GCV && p->select != RFX_SELECT_KFOLD)
        return rfx__error(RFX_EINVAL, "srfe.select: must be RFX_SELECT_GCV or RFX_SELECT_KFOLD, "
                                      "got %d", (int)p->select);
    if (!(p->lambda_min_ratio > 0 && p->lambda_min_ratio < 1))
        return rfx__error(RFX_EINVAL, "srfe.lambda_min_ratio: must be in (0, 1), got %g",
                          p->lambda_min_ratio);
    rfx_features_params fp = fit_features(p);
    RFX__TRY(rfx__features_check_fields(&fp));
    if (fp.form != RFX_FORM_COS_BIAS)
        return rfx__error(RFX_EINVAL, "srfe.features.form: sparse expansions use cos-bias");
    return RFX_OK;
}

/* What depends on the m x d data, after rfx_srfe_params_check. */
static rfx_status check_params(const rfx_srfe_params *p, size_t m, size_t d)
{
    if (p->n_folds > m)
        return rfx__error(RFX_EINVAL, "srfe.n_folds: must be in [2, %zu rows], got %zu", m,
                          p->n_folds);
    rfx_features_params fp = fit_features(p);
    return rfx__features_check(&fp, d);
}

/* A = phi(X W^T + b) (m x N) with unit-norm columns; scales their norms. */
static rfx_status design(const rfx_features *f, rfx_cmat X, double *A, double *scales)
{
    const size_t m = X.rows, N = f->D;
    RFX__TRY(rfx_features_transform(f, X, rfx_mat_of(A, m, N)));
    return rfx_l1_normalize_columns(rfx_mat_of(A, m, N), scales, f->params.n_threads);
}

/* k-fold CV mean squared error of HTP with sparsity s on A (rows i mod k). */
static rfx_status htp_cv(const rfx_l1_params *lp, const double *A, const double *y, size_t m,
                         size_t N, size_t k, double *mse)
{
    double *At = NULL, *yt = NULL, *c = NULL, err = 0;
    rfx_status st = rfx__alloc(m * N, sizeof(double), (void **)&At, "srfe: fold matrix");
    if (!st) st = rfx__alloc(m, sizeof(double), (void **)&yt, "srfe: fold targets");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&c, "srfe: coefficients");
    for (size_t fo = 0; fo < k && !st; fo++) {
        size_t mt = 0;
        for (size_t i = 0; i < m; i++) {
            if (i % k == fo) continue;
            memcpy(At + mt * N, A + i * N, N * sizeof *A);
            yt[mt++] = y[i];
        }
        double b = 0;
        st = rfx_l1_fit(lp, rfx_cmat_of(At, mt, N), yt, c, &b, NULL);
        for (size_t i = fo; i < m && !st; i += k) {
            double p = b;
            for (size_t j = 0; j < N; j++) p += A[i * N + j] * c[j];
            err += (y[i] - p) * (y[i] - p);
        }
    }
    free(At);
    free(yt);
    free(c);
    if (!st) *mse = err / (double)m;
    return st;
}

/* The selection score of a fit on all m rows: GCV with df = the nonzeros
 * plus the intercept (for HTP its s least-squares terms). */
static double gcv_score(const rfx_l1_report *rep, size_t m)
{
    double slack = 1.0 - (double)(rep->n_nonzero + 1) / (double)m;
    if (!(slack > 0)) return INFINITY;
    double r = rep->residual_norm;
    return r * r / (double)m / (slack * slack);
}

/* One candidate weight scale: the coefficients c and intercept *b0 on the
 * design A (m x N, unit columns), the lasso lambda used, and the selection
 * score (GCV or k-fold MSE; NaN when nothing is to be compared). */
static rfx_status fit_candidate(const rfx_srfe_params *p, rfx_l1_params lp, const double *A,
                                const double *y, size_t m, size_t N, size_t s_htp, int scored,
                                double *c, double *b0, rfx_l1_report *rep, double *score)
{
    const rfx_cmat Am = rfx_cmat_of(A, m, N);
    const int kfold = p->select == RFX_SELECT_KFOLD;
    *score = NAN;
    if (p->method == RFX_L1_METHOD_HTP) {
        lp.method = RFX_L1_METHOD_HTP;
        lp.sparsity = s_htp;
        if (scored && kfold) RFX__TRY(htp_cv(&lp, A, y, m, N, p->n_folds, score));
        RFX__TRY(rfx_l1_fit(&lp, Am, y, c, b0, rep));
        if (scored && !kfold) *score = gcv_score(rep, m);
        return RFX_OK;
    }
    if (p->method == RFX_L1_METHOD_BPDN && p->eta > 0) {
        lp.method = RFX_L1_METHOD_BPDN;
        lp.eta = p->eta;
        RFX__TRY(rfx_l1_fit(&lp, Am, y, c, b0, rep));
        if (scored) *score = gcv_score(rep, m); /* eta fixes the residual: GCV ranks sparsity */
        return RFX_OK;
    }
    lp.method = RFX_L1_METHOD_LASSO;
    if (p->lambda > 0) { /* the given lambda */
        lp.lambda = p->lambda;
        lp.select = RFX_SELECT_NONE;
        RFX__TRY(rfx_l1_fit(&lp, Am, y, c, b0, rep));
        if (scored && kfold) {
            double lam, mse;
            size_t best;
            lp.lambdas = &p->lambda;
            lp.n_lambdas = 1;
            RFX__TRY(rfx_l1_cv(&lp, Am, y, &lam, &mse, &best));
            *score = mse;
        } else if (scored) {
            *score = gcv_score(rep, m);
        }
        return RFX_OK;
    }
    lp.select = kfold ? RFX_SELECT_KFOLD : RFX_SELECT_GCV;
    RFX__TRY(rfx_l1_fit(&lp, Am, y, c, b0, rep));
    *score = rep->cv_mse;
    return RFX_OK;
}

rfx_status rfx_srfe_fit(const rfx_srfe_params *params, rfx_cmat X, rfx_cmat Y, rfx_model **out,
                        rfx_srfe_report *report)
{
    if (!out) return rfx__error(RFX_EINVAL, "srfe: out is NULL");
    RFX__TRY(rfx_srfe_params_check(params));
    RFX__TRY(rfx__check_cmat(X, "srfe: X"));
    RFX__TRY(rfx__check_cmat(Y, "srfe: Y"));
    const size_t m = X.rows, d = X.cols;
    if (d == 0) return rfx__error(RFX_EINVAL, "srfe: X is %zu x %zu", m, d);
    if (m < 2) return rfx__error(RFX_EDIM, "srfe: at least 2 rows are needed, got %zu", m);
    if (Y.rows != m || Y.cols != 1)
        return rfx__error(RFX_EDIM, "srfe: Y must be %zu x 1, got %zu x %zu", m, Y.rows, Y.cols);
    RFX__TRY(check_params(params, m, d));
    size_t r, cc;
    if (!rfx__all_finite(X, &r, &cc))
        return rfx__error(RFX_EPARSE, "srfe: X row %zu, column %zu is not finite", r, cc);
    if (!rfx__all_finite(Y, &r, &cc))
        return rfx__error(RFX_EPARSE, "srfe: Y row %zu is not finite", r);

    const rfx_srfe_params *p = params;
    size_t N = p->features.n_features;
    if (N == 0) N = m * N_PER_ROW < N_MIN ? N_MIN : (m * N_PER_ROW > N_MAX ? N_MAX : m * N_PER_ROW);
    const int htp = p->method == RFX_L1_METHOD_HTP;
    const size_t n_scales = p->features.weight_scale > 0 ? 1 : N_SCALES;

    double *mean = NULL, *scale = NULL, *Xs = NULL, *y = NULL, *A = NULL;
    double *cs = NULL, *c = NULL, *best_cs = NULL, *best_c = NULL;
    rfx_features *f = NULL, *best_f = NULL;
    rfx_model *model = NULL;
    rfx_status st = rfx__alloc(m * d, sizeof(double), (void **)&Xs, "srfe: inputs");
    if (!st) st = rfx__calloc(d, sizeof(double), (void **)&mean, "srfe: scaler");
    if (!st) st = rfx__alloc(d, sizeof(double), (void **)&scale, "srfe: scaler");
    if (!st) st = rfx__alloc(m, sizeof(double), (void **)&y, "srfe: targets");
    if (!st) st = rfx__alloc(m * N, sizeof(double), (void **)&A, "srfe: feature matrix");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&cs, "srfe: column scales");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&c, "srfe: coefficients");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&best_cs, "srfe: column scales");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&best_c, "srfe: coefficients");
    if (st) goto done;
    for (size_t i = 0; i < m; i++) y[i] = Y.data[i * Y.stride];
    if (p->standardize) {
        rfx__standardize(X, mean, scale, Xs, d);
    } else {
        for (size_t j = 0; j < d; j++) {
            mean[j] = 0.0;
            scale[j] = 1.0;
        }
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < d; j++) Xs[i * d + j] = X.data[i * X.stride + j];
    }
    rfx_cmat Xv = rfx_cmat_of(Xs, m, d);

    rfx_l1_params lp = rfx_l1_params_default();
    lp.fit_intercept = 1;
    lp.n_threads = p->features.n_threads;
    lp.n_folds = p->n_folds;
    lp.n_lambdas = p->n_lambdas;
    lp.lambda_min_ratio = p->lambda_min_ratio;
    lp.cv_stop_factor = PATH_STOP_FACTOR;
    size_t s_htp = p->sparsity ? p->sparsity : (m / 2 < N ? m / 2 : N) / 2;
    if (s_htp < 1) s_htp = 1;

    double best_score = NAN, best_scale = 0, best_b0 = 0;
    size_t best_q = p->features.sparsity, best_N = N;
    rfx_l1_report best_rep;
    memset(&best_rep, 0, sizeof best_rep);
    /* The candidates (weight scale, q) are scored on the first N_screen
     * features (row j of a map is drawn from its own stream, so these are
     * the first rows of the full map): first the scales at q = 2, then the
     * other q at the best scale (a coordinate search: 5 screens instead of
     * 9). The best candidate is then fitted with all N features, and N is
     * the better of N_screen and N by the same score. */
    const int choose_q = p->features.sparsity == 0;
    size_t q_grid[N_QS], n_qs = 0;
    if (choose_q) {
        q_grid[n_qs++] = d < Q_FIRST ? d : Q_FIRST;
        for (size_t i = 0; i < N_QS; i++)
            if (Q_GRID[i] <= d && Q_GRID[i] != q_grid[0]) q_grid[n_qs++] = Q_GRID[i];
    } else {
        q_grid[n_qs++] = p->features.sparsity;
    }
    const size_t n_screens = n_scales + n_qs - 1;
    size_t N_screen = n_screens > 1 ? N / SCREEN_DIV : N;
    if (N_screen < N_MIN) N_screen = N < N_MIN ? N : N_MIN;
    const size_t n_fits = N_screen < N ? n_screens + 1 : n_screens;
    for (size_t k = 0; k < n_fits; k++) {
        const int final = N_screen < N && k == n_screens;
        rfx_features_params fp = p->features;
        fp.n_features = final ? N : N_screen;
        if (final) {
            fp.weight_scale = best_scale;
            fp.sparsity = best_q;
        } else if (k < n_scales) {
            fp.weight_scale = n_scales > 1 ? SCALE_GRID[k] : p->features.weight_scale;
            fp.sparsity = q_grid[0];
        } else {
            fp.weight_scale = best_scale;
            fp.sparsity = q_grid[k - n_scales + 1];
        }
        st = rfx_features_create(&fp, d, &f);
        if (!st) st = design(f, Xv, A, cs);
        double b0 = 0, score;
        rfx_l1_report rep;
        rfx_l1_params lpk = lp;
        if (N_screen < N && !final) lpk.n_lambdas = (p->n_lambdas + 1) / 2; /* a coarser screen */
        if (!st) st = fit_candidate(p, lpk, A, y, m, fp.n_features, s_htp, 1, c, &b0, &rep, &score);
        if (st) goto done;
        /* the full map replaces the screen unless it scores worse (never
         * with a given N: then the full map is what was asked for) */
        const int keep = k == 0 || score < best_score ||
                         (final && (p->features.n_features > 0 || !(score > best_score)));
        if (keep) {
            rfx_features *t = best_f;
            best_f = f;
            f = t;
            double *u = best_c;
            best_c = c;
            c = u;
            u = best_cs;
            best_cs = cs;
            cs = u;
            best_b0 = b0;
            best_rep = rep;
            best_score = score;
            best_scale = fp.weight_scale;
            best_q = fp.sparsity;
            best_N = fp.n_features;
        }
        rfx_features_free(f);
        f = NULL;
        if (p->progress && p->progress(p->progress_user, "srfe candidates",
                                       (double)(k + 1) / (double)n_fits)) {
            st = rfx__error(RFX_ECANCELLED, "srfe: cancelled by the progress callback");
            goto done;
        }
    }
    N = best_N;

    st = rfx__model_alloc(htp ? RFX_METHOD_HARFE : RFX_METHOD_SRFE, best_f, 1, 0, &model);
    if (st) goto done;
    best_f = NULL; /* owned by the model */
    for (size_t j = 0; j < N; j++) model->W[j] = best_cs[j] > 0 ? best_c[j] / best_cs[j] : 0.0;
    model->intercept[0] = best_b0;
    model->fit_intercept = 1;
    model->n_train = m;
    model->lambda = htp ? 0.0 : best_rep.lambda;
    if (!isfinite(model->lambda)) model->lambda = 0; /* files want finite values */
    if (p->standardize) {
        model->x_mean = mean;
        model->x_scale = scale;
        mean = scale = NULL;
    }
    if (report) {
        memset(report, 0, sizeof *report);
        report->n_features = N;
        report->weight_scale = best_scale;
        report->lambda = htp ? NAN : best_rep.lambda;
        report->eta = best_rep.residual_norm / sqrt((double)m);
        report->cv_mse = best_score;
        report->n_nonzero = best_rep.n_nonzero;
        report->n_candidates = n_screens;
        report->sparsity = best_q;
    }
    *out = model;
    model = NULL;
done:
    rfx_model_free(model);
    rfx_features_free(f);
    rfx_features_free(best_f);
    free(mean);
    free(scale);
    free(Xs);
    free(y);
    free(A);
    free(cs);
    free(c);
    free(best_cs);
    free(best_c);
    return st;
}
