/*
 * Projected models as rfx_model objects: their kind (what the model object
 * calls for a kernel PCA projection with a surrogate on its scores: free,
 * standard deviations, predict, info).
 */
#include "internal.h"

static void projected_free_parts(rfx_model *m)
{
    rfx_kpca_free(m->kpca);
    rfx_model_free(m->inner);
}

/* the surrogate's posterior */
static rfx_status projected_check_std(const rfx_model *m)
{
    if (m->inner->chol) return RFX_OK;
    return rfx__error(RFX_EINVAL,
                      "predict: standard deviations need a Bayesian model (this one is %s over %s)",
                      rfx_method_name(m->method), rfx_method_name(m->inner->method));
}

/* A projected model: the k kernel PCA scores of the rows (n x k), then the
 * surrogate's prediction on them. */
static rfx_status projected_predict(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Ystd,
                                    int noisy)
{
    const size_t k = m->inner->d;
    double *T;
    if (X.rows == 0) return RFX_OK;
    RFX__TRY(rfx__alloc(X.rows, k * sizeof(double), (void **)&T, "predict: scores"));
    rfx_status st = rfx_kpca_transform(m->kpca, X, rfx_mat_of(T, X.rows, k));
    if (!st) st = rfx__model_predict(m->inner, rfx_cmat_of(T, X.rows, k), Yhat, Ystd, noisy);
    free(T);
    return st;
}


/* the surrogate's details: rfx_model_projected_info */
static rfx_status projected_info(const rfx_model *m, rfx_model_info *info)
{
    rfx_model_info in;
    rfx__kpca_arrays a;
    RFX__TRY(rfx_model_get_info(m->inner, &in));
    RFX__TRY(rfx__kpca_get_arrays(m->kpca, &a));
    info->standardized = a.x_mean != NULL;
    info->has_std = in.has_std;
    return RFX_OK;
}

const rfx__model_kind rfx__projected_kind = {projected_free_parts, projected_check_std,
                                             projected_predict, projected_info};
