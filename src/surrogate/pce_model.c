/*
 * Polynomial chaos models as rfx_model objects: their kind (what the model
 * object calls for a PCE model: free, standard deviations, predict, info),
 * and the public rfx_model_from_pce / rfx_model_pce.
 */
#include "internal.h"

#include <string.h>

static void pce_free_parts(rfx_model *m) { rfx_pce_free(m->pce); }

static rfx_status pce_check_std(const rfx_model *m)
{
    (void)m;
    return rfx__error(RFX_EINVAL, "predict: a polynomial chaos (pce) model has no predictive "
                                  "standard deviation");
}

/* Yhat (n x 1, any stride) of a PCE model; rfx_pce_predict writes a
 * contiguous vector. */
static rfx_status predict_pce(const rfx_model *m, rfx_cmat X, rfx_mat Yhat)
{
    if (Yhat.stride == 1 || X.rows <= 1) return rfx_pce_predict(m->pce, X, Yhat.data);
    double *y;
    RFX__TRY(rfx__alloc(X.rows, sizeof *y, (void **)&y, "predict: workspace"));
    rfx_status st = rfx_pce_predict(m->pce, X, y);
    if (!st)
        for (size_t i = 0; i < X.rows; i++) Yhat.data[i * Yhat.stride] = y[i];
    free(y);
    return st;
}

static rfx_status pce_predict(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Ystd,
                               int noisy)
{
    (void)Ystd; /* refused by pce_check_std */
    (void)noisy;
    return predict_pce(m, X, Yhat);
}

/* no feature map, scaler or penalty */
static rfx_status pce_info(const rfx_model *m, rfx_model_info *info)
{
    (void)m;
    (void)info;
    return RFX_OK;
}

const rfx__model_kind rfx__pce_kind = {pce_free_parts, pce_check_std, pce_predict, pce_info};

/* A PCE model: the expansion (copied, with its fit report), d inputs, one
 * target; no feature map, weights or intercepts. */
rfx_status rfx_model_from_pce(const rfx_pce *pce, rfx_model **out)
{
    rfx_pce_info info;
    if (!pce) return rfx__error(RFX_EINVAL, "model_from_pce: pce is NULL");
    if (!out) return rfx__error(RFX_EINVAL, "model_from_pce: out is NULL");
    RFX__TRY(rfx_pce_get_info(pce, &info));
    if (info.dim < 1 || info.dim > 2147483647u) /* the range model files take */
        return rfx__error(RFX_EINVAL, "model_from_pce: %zu inputs, expected 1 .. 2147483647",
                          info.dim);
    rfx_model *m = calloc(1, sizeof *m);
    if (!m) return rfx__error(RFX_ENOMEM, "model_from_pce: cannot allocate");
    rfx_status st = rfx__pce_copy(pce, &m->pce);
    if (st) {
        free(m);
        return st;
    }
    m->kind = &rfx__pce_kind;
    m->method = RFX_METHOD_PCE;
    m->d = info.dim;
    m->D = 0;
    m->ny = 1;
    m->n_train = info.n_train;
    m->fit_intercept = 0; /* the constant is the term of multi-index 0 */
    *out = m;
    return RFX_OK;
}

const rfx_pce *rfx_model_pce(const rfx_model *m)
{
    return m && m->method == RFX_METHOD_PCE ? m->pce : NULL;
}

