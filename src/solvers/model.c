/* SPDX-License-Identifier: BSD-3-Clause */
/* Fitted models: ownership, accessors and prediction. */
#include "internal.h"

#include <math.h>
#include <string.h>

rfx_status rfx__model_alloc(rfx_method method, rfx_features *f, size_t ny, int with_posterior,
                            rfx_model **out)
{
    const size_t D = f->D;
    size_t dy, dd;
    if (ny == 0) return rfx__error(RFX_EINVAL, "model: no targets");
    RFX__TRY(rfx__mul(D, ny, &dy, "model: weights"));
    RFX__TRY(rfx__mul(D, D, &dd, "model: posterior factor"));
    rfx_model *m = calloc(1, sizeof *m);
    if (!m) return rfx__error(RFX_ENOMEM, "model: cannot allocate");
    m->kind = &rfx__feature_kind;
    m->method = method;
    m->d = f->d;
    m->D = D;
    m->ny = ny;
    m->fit_intercept = 1;
    rfx_status st = rfx__calloc(dy, sizeof(double), (void **)&m->W, "model: weights");
    if (!st) st = rfx__calloc(ny, sizeof(double), (void **)&m->intercept, "model: intercepts");
    if (!st && with_posterior)
        st = rfx__calloc(dd, sizeof(double), (void **)&m->chol, "model: posterior factor");
    if (!st && with_posterior)
        st = rfx__calloc(D, sizeof(double), (void **)&m->zmean, "model: feature means");
    if (st) {
        rfx_model_free(m); /* f is not yet owned */
        return st;
    }
    m->features = f;
    *out = m;
    return RFX_OK;
}

void rfx_model_free(rfx_model *m)
{
    if (!m) return;
    rfx_features_free(m->features);
    free(m->x_mean);
    free(m->x_scale);
    free(m->W);
    free(m->intercept);
    free(m->chol);
    free(m->zmean);
    free(m->classes);
    free(m->input_names);
    free(m->target_name);
    free(m->input_box);
    if (m->kind) m->kind->free_parts(m);
    free(m);
}

const rfx_features *rfx_model_features(const rfx_model *m) { return m ? m->features : NULL; }

rfx_cmat rfx_model_weights(const rfx_model *m)
{
    return m && m->W ? rfx_cmat_of(m->W, m->D, m->ny) : rfx_cmat_none();
}

const double *rfx_model_intercepts(const rfx_model *m) { return m ? m->intercept : NULL; }

rfx_status rfx_model_get_info(const rfx_model *m, rfx_model_info *info)
{
    if (!m || !info) return rfx__error(RFX_EINVAL, "model info: NULL argument");
    memset(info, 0, sizeof *info);
    info->method = m->method;
    info->n_inputs = m->d;
    info->n_targets = m->classes ? 1 : m->ny; /* a classifier predicts one label */
    info->n_train = m->n_train;
    RFX__TRY(m->kind->info(m, info));
    info->target_transform = m->target;
    info->target_lambda = m->target_lambda;
    if (m->target != RFX_TARGET_NONE) info->has_std = 0;
    return RFX_OK;
}

/* One tile of rows: scale, featurise, Yhat = Z W + c, and the posterior
 * variance v = |Zc R^-1|^2 per row (R^T R = A). Cost per row: 2 d D (GEMM)
 * + D cos + 2 D ny, and D^2 (TRSM) with the std. ws: rows x (d + D). */
static void predict_tile(const rfx_model *m, const double *X, size_t ldx, size_t rows,
                         double *yhat, size_t ldy, double *ystd, size_t lds, double add_var,
                         double *ws, double *tws)
{
    const size_t d = m->d, D = m->D, ny = m->ny;
    double *xs = ws, *Z = ws + rows * d;
    const double *xin = X;
    size_t ldin = ldx;
    if (m->x_mean) {
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < d; j++)
                xs[i * d + j] = rfx__standardized(X[i * ldx + j], m->x_mean[j], m->x_scale[j]);
        xin = xs;
        ldin = d;
    }
    rfx__transform_tile_ws(m->features, xin, ldin, rows, Z, D, tws);
    for (size_t i = 0; i < rows; i++)
        for (size_t k = 0; k < ny; k++) yhat[i * ldy + k] = m->intercept[k];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)ny, (int)D, 1.0, Z,
                (int)D, m->W, (int)ny, 1.0, yhat, (int)ldy);
    if (!ystd) return;
    if (m->zmean)
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < D; j++) Z[i * D + j] -= m->zmean[j];
    cblas_dtrsm(CblasRowMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, (int)rows,
                (int)D, 1.0, m->chol, (int)D, Z, (int)D);
    for (size_t i = 0; i < rows; i++) {
        double v = 0;
        for (size_t j = 0; j < D; j++) v += Z[i * D + j] * Z[i * D + j];
        for (size_t k = 0; k < ny; k++) ystd[i * lds + k] = sqrt(v + add_var);
    }
}


/* What classify_apply writes. */
enum apply_mode { APPLY_SCORES, APPLY_LABELS, APPLY_PROBA };

static rfx_status classify_apply(const rfx_model *m, rfx_cmat X, rfx_mat out, int mode,
                                 const char *what);

rfx_status rfx__model_predict(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Ystd,
                              int noisy)
{
    if (!m) return rfx__error(RFX_EINVAL, "predict: model is NULL");
    if (m->classes) {
        if (Ystd.data)
            return rfx__error(RFX_EINVAL, "predict: a classifier has no predictive standard "
                                          "deviation (rfx_model_predict_proba gives "
                                          "probabilities)");
        return classify_apply(m, X, Yhat, APPLY_LABELS, "predict");
    }
    RFX__TRY(rfx__check_cmat(X, "predict: X"));
    RFX__TRY(rfx__check_mat(Yhat, "predict: Yhat"));
    RFX__TRY(rfx__check_mat(Ystd, "predict: Ystd"));
    if (X.cols != m->d)
        return rfx__error(RFX_EDIM, "predict: the data has %zu columns, the model expects %zu",
                          X.cols, m->d);
    if (Yhat.rows != X.rows || Yhat.cols != m->ny)
        return rfx__error(RFX_EDIM, "predict: Yhat is %zu x %zu, expected %zu x %zu", Yhat.rows,
                          Yhat.cols, X.rows, m->ny);
    int want_std = Ystd.data != NULL;
    if (want_std && m->target != RFX_TARGET_NONE)
        return rfx__error(RFX_EINVAL, "predict: a model of a %s-transformed target gives no "
                                      "predictive standard deviation",
                          rfx_target_transform_name((rfx_target_transform)m->target));
    if (want_std) RFX__TRY(m->kind->check_std(m));
    if (want_std && (Ystd.rows != X.rows || Ystd.cols != m->ny))
        return rfx__error(RFX_EDIM, "predict: Ystd is %zu x %zu, expected %zu x %zu", Ystd.rows,
                          Ystd.cols, X.rows, m->ny);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "predict: X row %zu, column %zu: %g is not finite", r, c,
                          X.data[r * X.stride + c]);
    RFX__TRY(m->kind->predict(m, X, Yhat, Ystd, noisy));
    rfx__target_inverse_mat(m, Yhat);
    return RFX_OK;
}

rfx_status rfx__feature_predict(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Ystd,
                                int noisy)
{
    const int want_std = Ystd.data != NULL;
    /* the intercept's own variance under a flat prior: noise_var / n */
    double add_var = 0;
    /* the intercept's variance: noise_var over the rows' total precision
     * weight, sum w (n_train without weights) */
    const double nw = m->weight_sum > 0 ? m->weight_sum : (double)m->n_train;
    if (m->zmean && nw > 0) add_var += m->noise_var / nw;
    if (noisy) add_var += m->noise_var;

    const size_t n = X.rows, T = RFX__ROW_TILE, tiles = (n + T - 1) / T;
    int nt = rfx__threads(m->features->params.n_threads);
    size_t per; /* per thread: a tile of inputs and features, the transform's workspace */
    const size_t base = T * (m->d + m->D), wl = rfx__transform_ws_len(m->features);
    RFX__TRY(rfx__mul(T, m->d + m->D, &per, "predict: workspace"));
    RFX__TRY(rfx__add(per, wl, &per, "predict: workspace"));
    double *ws;
    RFX__TRY(rfx__alloc((size_t)nt, per * sizeof(double), (void **)&ws, "predict: workspace"));
#pragma omp parallel num_threads(nt) if (tiles > 1)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < tiles; t++) {
            size_t r0 = t * T, rows = n - r0 < T ? n - r0 : T;
    #ifdef _OPENMP
            double *w = ws + (size_t)omp_get_thread_num() * per;
    #else
            double *w = ws;
    #endif
            predict_tile(m, X.data + r0 * X.stride, X.stride, rows, Yhat.data + r0 * Yhat.stride,
                         Yhat.stride, want_std ? Ystd.data + r0 * Ystd.stride : NULL, Ystd.stride,
                         add_var, w, wl ? w + base : NULL);
        }
    }
    free(ws);
    return RFX_OK;
}

/* A prediction (or its standard deviation) that is not finite: finite
 * rows far outside the training scale can overflow the features' argument
 * or the polynomials. RFX_ENUMERIC naming the first such row, so that no
 * caller takes inf or NaN for an answer. */
static rfx_status check_finite_output(rfx_mat M, const char *what)
{
    for (size_t i = 0; M.data && i < M.rows; i++)
        for (size_t j = 0; j < M.cols; j++) {
            double v = M.data[i * M.stride + j];
            if (!isfinite(v))
                return rfx__error(RFX_ENUMERIC,
                                  "predict: row %zu: the %s is %g (the row is far outside the "
                                  "scale of the training rows?)",
                                  i, what, v);
        }
    return RFX_OK;
}

rfx_status rfx_model_predict(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Ystd)
{
    RFX__TRY(rfx__model_predict(m, X, Yhat, Ystd, 1));
    RFX__TRY(check_finite_output(Yhat, "prediction"));
    return check_finite_output(Ystd, "predictive standard deviation");
}

rfx_status rfx_model_predict_latent(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Fstd)
{
    RFX__TRY(rfx__model_predict(m, X, Yhat, Fstd, 0));
    RFX__TRY(check_finite_output(Yhat, "prediction"));
    return check_finite_output(Fstd, "standard deviation");
}

/* ---- classifiers (rfx/classify.h) --------------------------------------- */

static rfx_status check_classifier(const rfx_model *m, const char *what)
{
    if (!m) return rfx__error(RFX_EINVAL, "%s: model is NULL", what);
    if (!m->classes)
        return rfx__error(RFX_EINVAL, "%s: a %s model is not a classifier", what,
                          rfx_method_name(m->method));
    return RFX_OK;
}

rfx_status rfx_model_classes(const rfx_model *m, const double **classes, size_t *n)
{
    RFX__TRY(check_classifier(m, "model classes"));
    if (!classes || !n) return rfx__error(RFX_EINVAL, "model classes: NULL argument");
    *classes = m->classes;
    *n = m->n_classes;
    return RFX_OK;
}

/* 1 when the probabilities are softmax(s / T) of the scores (sigmoid for
 * two classes): the least-squares classifier, and a squared-hinge one
 * refined from it (RFX_LOSS_AUTO), T in noise_var. */
static int tempered(const rfx_model *m)
{
    return m->loss == RFX_LOSS_SQUARED ||
           (m->loss == RFX_LOSS_SQUARED_HINGE && m->noise_var > 0 && isfinite(m->noise_var));
}

rfx_status rfx_model_classifier_info(const rfx_model *m, rfx_classifier_info *info)
{
    RFX__TRY(check_classifier(m, "classifier info"));
    if (!info) return rfx__error(RFX_EINVAL, "classifier info: info is NULL");
    memset(info, 0, sizeof *info);
    info->loss = (rfx_loss)m->loss;
    info->multiclass = (rfx_multiclass)m->multiclass;
    info->n_classes = m->n_classes;
    info->n_columns = m->ny;
    info->lambda = m->lambda;
    info->temperature = tempered(m) ? m->noise_var : 0.0;
    info->probabilities = m->loss == RFX_LOSS_LOGISTIC ||
                          (tempered(m) && m->noise_var > 0 && isfinite(m->noise_var));
    return RFX_OK;
}

/* 1 / (1 + exp(-s)) without overflow. */
static double sigmoid(double s)
{
    if (s >= 0) return 1.0 / (1.0 + exp(-s));
    double e = exp(s);
    return e / (1.0 + e);
}

/* One row's scores s (K values) into its output: the label, the C
 * probabilities, or the scores themselves. */
static void apply_row(const rfx_model *m, const double *s, double *o, int mode)
{
    const size_t K = m->ny, C = m->n_classes;
    if (mode == APPLY_SCORES) {
        for (size_t k = 0; k < K; k++) o[k] = s[k];
    } else if (mode == APPLY_LABELS) {
        size_t best = 0;
        if (K == 1) {
            best = s[0] > 0 ? 1 : 0;
        } else {
            for (size_t k = 1; k < K; k++)
                if (s[k] > s[best]) best = k;
        }
        o[0] = m->classes[best];
    } else if (K == 1) {
        /* a tempered classifier: its scores over the temperature */
        double p = sigmoid(tempered(m) ? s[0] / m->noise_var : s[0]);
        o[0] = 1.0 - p;
        o[1] = p;
    } else if (m->multiclass == RFX_MULTICLASS_SOFTMAX || tempered(m)) {
        const double beta = tempered(m) ? 1.0 / m->noise_var : 1.0;
        double mx = s[0], sum = 0;
        for (size_t k = 1; k < C; k++)
            if (s[k] > mx) mx = s[k];
        for (size_t k = 0; k < C; k++) sum += (o[k] = exp(beta * (s[k] - mx)));
        for (size_t k = 0; k < C; k++) o[k] /= sum;
    } else { /* one-vs-rest: the sigmoids, normalised */
        double sum = 0;
        for (size_t k = 0; k < C; k++) sum += (o[k] = sigmoid(s[k]));
        for (size_t k = 0; k < C; k++) o[k] /= sum;
    }
}

/* Scores of a classifier tile by tile (OpenMP over tiles of 64 rows, the
 * same tiles and BLAS calls as any prediction), each row turned into its
 * output by apply_row. */
static rfx_status classify_apply(const rfx_model *m, rfx_cmat X, rfx_mat out, int mode,
                                 const char *what)
{
    const size_t K = m->ny, C = m->n_classes;
    const size_t width = mode == APPLY_SCORES ? K : mode == APPLY_LABELS ? 1 : C;
    RFX__TRY(rfx__check_cmat(X, what));
    RFX__TRY(rfx__check_mat(out, what));
    if (X.cols != m->d)
        return rfx__error(RFX_EDIM, "%s: the data has %zu columns, the model expects %zu", what,
                          X.cols, m->d);
    if (out.rows != X.rows || out.cols != width)
        return rfx__error(RFX_EDIM, "%s: the output is %zu x %zu, expected %zu x %zu", what,
                          out.rows, out.cols, X.rows, width);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "%s: X row %zu, column %zu: %g is not finite", what, r, c,
                          X.data[r * X.stride + c]);
    const size_t n = X.rows, T = RFX__ROW_TILE, tiles = (n + T - 1) / T;
    if (n == 0) return RFX_OK;
    int nt = rfx__threads(m->features->params.n_threads);
    size_t per; /* per thread: inputs, features, scores, the transform's workspace */
    const size_t base = T * (m->d + m->D + K), wl = rfx__transform_ws_len(m->features);
    RFX__TRY(rfx__mul(T, m->d + m->D + K, &per, "predict: workspace"));
    RFX__TRY(rfx__add(per, wl, &per, "predict: workspace"));
    double *ws;
    /* small jobs stay on the calling thread: the bits are the same */
    const int par = tiles > 1 && n * m->D * (m->d + K + 16) >= ((size_t)1 << 20);
    RFX__TRY(rfx__alloc((size_t)nt, per * sizeof(double), (void **)&ws, "predict: workspace"));
#pragma omp parallel num_threads(nt) if (par)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < tiles; t++) {
            size_t r0 = t * T, rows = n - r0 < T ? n - r0 : T;
#ifdef _OPENMP
            double *w = ws + (size_t)omp_get_thread_num() * per;
#else
            double *w = ws;
#endif
            double *S = w + T * (m->d + m->D);
            predict_tile(m, X.data + r0 * X.stride, X.stride, rows, S, K, NULL, 0, 0.0, w,
                         wl ? w + base : NULL);
            for (size_t i = 0; i < rows; i++)
                apply_row(m, S + i * K, out.data + (r0 + i) * out.stride, mode);
        }
    }
    free(ws);
    return RFX_OK;
}

rfx_status rfx_model_decision(const rfx_model *m, rfx_cmat X, rfx_mat scores)
{
    RFX__TRY(check_classifier(m, "decision"));
    return classify_apply(m, X, scores, APPLY_SCORES, "decision");
}

rfx_status rfx_model_predict_proba(const rfx_model *m, rfx_cmat X, rfx_mat P)
{
    RFX__TRY(check_classifier(m, "predict_proba"));
    if (m->loss != RFX_LOSS_LOGISTIC && m->loss != RFX_LOSS_SQUARED && !tempered(m))
        return rfx__error(RFX_EINVAL, "predict_proba: probabilities need the logistic or squared "
                          "loss, or a calibrated temperature; this classifier has the %s loss "
                          "and none (use rfx_model_decision)",
                          rfx_loss_name((rfx_loss)m->loss));
    if (m->loss == RFX_LOSS_SQUARED && !(m->noise_var > 0 && isfinite(m->noise_var)))
        return rfx__error(RFX_EINVAL, "predict_proba: this squared-loss classifier has no "
                          "calibrated temperature (the one-call fit gives one)");
    return classify_apply(m, X, P, APPLY_PROBA, "predict_proba");
}
