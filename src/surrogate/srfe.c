/*
 * Sparse random feature expansions: q-sparse random features, columns
 * normalised on the training rows, coefficients by an l1 program, the
 * unknowns by k-fold cross-validation. See rfx/srfe.h for the method and
 * its sources.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

/* Candidate weight scales (per standardised input) when none is given. */
static const double SCALE_GRID[] = {0.5, 1.0, 2.0};
#define N_SCALES (sizeof SCALE_GRID / sizeof *SCALE_GRID)

rfx_srfe_params rfx_srfe_params_default(void)
{
    rfx_srfe_params p;
    memset(&p, 0, sizeof p);
    p.features = rfx_features_params_default();
    p.features.sparsity = 2;
    p.features.activation = RFX_ACTIVATION_SIN;
    p.features.weights = RFX_WEIGHTS_NORMAL;
    p.features.weight_scale = 0.0; /* choose */
    p.features.n_features = 0;     /* 10 m within [1000, 20000] */
    p.method = RFX_L1_METHOD_LASSO;
    p.lambda = 0.0;
    p.eta = 0.0;
    p.sparsity = 0;
    p.standardize = 1;
    p.n_folds = 5;
    p.n_lambdas = 50;
    return p;
}

static rfx_status check_params(const rfx_srfe_params *p, size_t m, size_t d)
{
    if (!p) return rfx__error(RFX_EINVAL, "srfe: params is NULL");
    if ((unsigned)p->method > RFX_L1_METHOD_HTP)
        return rfx__error(RFX_EINVAL, "srfe.method: %d is not an rfx_l1_method", (int)p->method);
    if (!isfinite(p->lambda) || !isfinite(p->eta) || p->eta < 0)
        return rfx__error(RFX_EINVAL, "srfe.lambda / srfe.eta: must be finite (eta >= 0)");
    if (p->n_folds < 2 || p->n_folds > m)
        return rfx__error(RFX_EINVAL, "srfe.n_folds: must be in [2, %zu rows], got %zu", m,
                          p->n_folds);
    if (p->n_lambdas < 1)
        return rfx__error(RFX_EINVAL, "srfe.n_lambdas: must be >= 1");
    rfx_features_params fp = p->features;
    if (fp.weight_scale <= 0) fp.weight_scale = 1.0;
    if (fp.n_features == 0) fp.n_features = 1000;
    RFX__TRY(rfx__features_check(&fp, d));
    if (fp.form != RFX_FORM_COS_BIAS)
        return rfx__error(RFX_EINVAL, "srfe.features.form: sparse expansions use cos-bias");
    return RFX_OK;
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

rfx_status rfx_srfe_fit(const rfx_srfe_params *params, rfx_cmat X, rfx_cmat Y, rfx_model **out,
                        rfx_srfe_report *report)
{
    if (!out) return rfx__error(RFX_EINVAL, "srfe: out is NULL");
    RFX__TRY(rfx__check_cmat(X, "srfe: X"));
    RFX__TRY(rfx__check_cmat(Y, "srfe: Y"));
    const size_t m = X.rows, d = X.cols;
    if (m < 2 || d == 0) return rfx__error(RFX_EINVAL, "srfe: X is %zu x %zu", m, d);
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
    if (N == 0) N = m * 10 < 1000 ? 1000 : (m * 10 > 20000 ? 20000 : m * 10);
    const int htp = p->method == RFX_L1_METHOD_HTP;
    const int choose_lambda = !htp && !(p->method == RFX_L1_METHOD_BPDN && p->eta > 0) &&
                              !(p->lambda > 0);
    const size_t n_scales = p->features.weight_scale > 0 ? 1 : N_SCALES;
    const int need_cv = n_scales > 1 || choose_lambda;

    double *mean = NULL, *scale = NULL, *Xs = NULL, *y = NULL, *A = NULL, *cs = NULL, *c = NULL;
    double *lams = NULL, *mse = NULL;
    rfx_features *f = NULL;
    rfx_model *model = NULL;
    rfx_status st = rfx__alloc(m * d, sizeof(double), (void **)&Xs, "srfe: inputs");
    if (!st) st = rfx__calloc(d, sizeof(double), (void **)&mean, "srfe: scaler");
    if (!st) st = rfx__alloc(d, sizeof(double), (void **)&scale, "srfe: scaler");
    if (!st) st = rfx__alloc(m, sizeof(double), (void **)&y, "srfe: targets");
    if (!st) st = rfx__alloc(m * N, sizeof(double), (void **)&A, "srfe: feature matrix");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&cs, "srfe: column scales");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&c, "srfe: coefficients");
    if (!st) st = rfx__alloc(p->n_lambdas, sizeof(double), (void **)&lams, "srfe: lambdas");
    if (!st) st = rfx__alloc(p->n_lambdas, sizeof(double), (void **)&mse, "srfe: CV errors");
    if (st) goto done;
    for (size_t i = 0; i < m; i++) y[i] = Y.data[i * Y.stride];
    for (size_t j = 0; j < d; j++) {
        double s = 0, s2 = 0;
        for (size_t i = 0; i < m; i++) s += X.data[i * X.stride + j];
        mean[j] = p->standardize ? s / (double)m : 0.0;
        for (size_t i = 0; i < m; i++) {
            double v = X.data[i * X.stride + j] - mean[j];
            s2 += v * v;
        }
        scale[j] = p->standardize && s2 > 0 ? sqrt(s2 / (double)m) : 1.0;
        for (size_t i = 0; i < m; i++) Xs[i * d + j] = (X.data[i * X.stride + j] - mean[j]) / scale[j];
    }
    rfx_cmat Xv = rfx_cmat_of(Xs, m, d);

    rfx_l1_params lp = rfx_l1_params_default();
    lp.fit_intercept = 1;
    lp.n_threads = p->features.n_threads;
    lp.n_folds = p->n_folds;
    lp.n_lambdas = p->n_lambdas;
    size_t s_htp = p->sparsity ? p->sparsity : (m / 2 < N ? m / 2 : N) / 2;
    if (s_htp < 1) s_htp = 1;

    double best_scale = p->features.weight_scale > 0 ? p->features.weight_scale : 1.0;
    double best_lambda = p->lambda, best_mse = NAN;
    for (size_t k = 0; need_cv && k < n_scales; k++) {
        rfx_features_params fp = p->features;
        fp.n_features = N;
        fp.weight_scale = n_scales > 1 ? SCALE_GRID[k] : p->features.weight_scale;
        rfx_features_free(f);
        f = NULL;
        st = rfx_features_create(&fp, d, &f);
        if (!st) st = design(f, Xv, A, cs);
        if (st) goto done;
        double cand_mse, cand_lambda = p->lambda;
        if (htp) {
            lp.method = RFX_L1_METHOD_HTP;
            lp.sparsity = s_htp;
            st = htp_cv(&lp, A, y, m, N, p->n_folds, &cand_mse);
        } else {
            size_t best = 0, n_l = p->n_lambdas;
            lp.method = RFX_L1_METHOD_LASSO;
            if (!choose_lambda) { /* the given lambda, CV for the scale only */
                lp.lambdas = &p->lambda;
                n_l = lp.n_lambdas = 1;
            }
            st = rfx_l1_cv(&lp, rfx_cmat_of(A, m, N), y, lams, mse, &best);
            (void)n_l;
            cand_mse = st ? NAN : mse[best];
            if (!st && choose_lambda) cand_lambda = lams[best];
            lp.lambdas = NULL;
            lp.n_lambdas = p->n_lambdas;
        }
        if (st) goto done;
        if (isnan(best_mse) || cand_mse < best_mse) {
            best_mse = cand_mse;
            best_scale = fp.weight_scale;
            best_lambda = cand_lambda;
        }
        if (p->progress && p->progress(p->progress_user, "srfe cross-validation",
                                       (double)(k + 1) / (double)n_scales)) {
            st = rfx__error(RFX_ECANCELLED, "srfe: cancelled by the progress callback");
            goto done;
        }
    }

    /* the final fit on every row */
    {
        rfx_features_params fp = p->features;
        fp.n_features = N;
        fp.weight_scale = best_scale;
        rfx_features_free(f);
        f = NULL;
        st = rfx_features_create(&fp, d, &f);
        if (!st) st = design(f, Xv, A, cs);
        if (st) goto done;
    }
    rfx_l1_report rep;
    double b0 = 0;
    if (htp) {
        lp.method = RFX_L1_METHOD_HTP;
        lp.sparsity = s_htp;
    } else if (p->method == RFX_L1_METHOD_BPDN && p->eta > 0) {
        lp.method = RFX_L1_METHOD_BPDN;
        lp.eta = p->eta;
    } else {
        lp.method = RFX_L1_METHOD_LASSO;
        lp.lambda = best_lambda;
    }
    st = rfx_l1_fit(&lp, rfx_cmat_of(A, m, N), y, c, &b0, &rep);
    if (st) goto done;
    st = rfx__model_alloc(htp ? RFX_METHOD_HARFE : RFX_METHOD_SRFE, f, 1, 0, &model);
    if (st) goto done;
    f = NULL; /* owned by the model */
    for (size_t j = 0; j < N; j++) model->W[j] = cs[j] > 0 ? c[j] / cs[j] : 0.0;
    model->intercept[0] = b0;
    model->fit_intercept = 1;
    model->n_train = m;
    model->lambda = htp ? NAN : rep.lambda;
    if (model->lambda != model->lambda) model->lambda = 0; /* files want finite values */
    if (p->standardize) {
        model->x_mean = mean;
        model->x_scale = scale;
        mean = scale = NULL;
    }
    if (report) {
        memset(report, 0, sizeof *report);
        report->n_features = N;
        report->weight_scale = best_scale;
        report->lambda = htp ? NAN : rep.lambda;
        report->eta = rep.residual_norm / sqrt((double)m);
        report->cv_mse = need_cv ? best_mse : NAN;
        report->n_nonzero = rep.n_nonzero;
        report->n_candidates = need_cv ? n_scales : 0;
    }
    *out = model;
    model = NULL;
done:
    rfx_model_free(model);
    rfx_features_free(f);
    free(mean);
    free(scale);
    free(Xs);
    free(y);
    free(A);
    free(cs);
    free(c);
    free(lams);
    free(mse);
    return st;
}
