/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Projected models as rfx_model objects: their kind (what the model object
 * calls for a kernel PCA projection with a surrogate on its scores: free,
 * standard deviations, predict, info, and its records in model files).
 *
 * A projected model's file (RFX_METHOD_PROJECTED) holds the shared fields,
 * the optional input scaler, the kernel PCA (tags 40..47) and the
 * surrogate on the k scores as a whole model file of its own (tag 48), of
 * method ridge, bayes, srfe, harfe or pce; all required.
 */
#include "core/records.h"

#include <math.h>
#include <stdio.h>

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

/* The model object around a transform-only kernel PCA and the surrogate
 * on its scores (both owned on success only). */
rfx_status rfx__projected_model(rfx_kpca *kp, rfx_model *inner, size_t d, size_t n_train,
                                double loss, const char *what, rfx_model **out)
{
    rfx_model *m = calloc(1, sizeof *m);
    if (!m) return rfx__error(RFX_ENOMEM, "%s: cannot allocate the model", what);
    m->kind = &rfx__projected_kind;
    m->method = RFX_METHOD_PROJECTED;
    m->d = d;
    m->D = 0;
    m->ny = 1;
    m->n_train = n_train;
    m->fit_intercept = 0;
    m->kpca = kp;
    m->inner = inner;
    m->proj_loss = loss;
    *out = m;
    return RFX_OK;
}

/* A projected model's records: the shared fields, the scaler, the kernel
 * PCA and the surrogate's file (nested, len bytes). */
static rfx_status projected_save(rfx__sink *s, const rfx_model *m, const unsigned char *nested,
                                 size_t len)
{
    rfx__kpca_arrays a;
    if (!m->kpca || !m->inner) return rfx__error(RFX_EINTERNAL, "the model is incomplete");
    rfx__kpca_get_arrays(m->kpca, &a); /* cannot fail: a fitted exact kernel PCA */
    rfx__put_u64(s, RFX__TAG_METHOD, (uint64_t)m->method);
    rfx__put_u64(s, RFX__TAG_N_INPUTS, m->d);
    rfx__put_u64(s, RFX__TAG_N_TARGETS, m->ny);
    rfx__put_u64(s, RFX__TAG_N_TRAIN, a.m);
    if (a.x_mean) {
        rfx__put_f64s(s, RFX__TAG_X_MEAN, a.x_mean, a.d);
        rfx__put_f64s(s, RFX__TAG_X_SCALE, a.x_scale, a.d);
    }
    rfx__put_u64(s, RFX__TAG_PROJ_K, a.k);
    rfx__put_f64(s, RFX__TAG_PROJ_GAMMA, a.gamma);
    rfx__put_f64s(s, RFX__TAG_PROJ_THETA, a.theta, a.d);
    rfx__put_f64s(s, RFX__TAG_PROJ_ROWS, a.X, a.m * a.d);
    rfx__put_f64s(s, RFX__TAG_PROJ_ALPHA, a.alpha, a.m * a.k);
    rfx__put_f64s(s, RFX__TAG_PROJ_ROW_MEANS, a.row_mean, a.m);
    rfx__put_f64(s, RFX__TAG_PROJ_GRAND_MEAN, a.grand);
    rfx__put_f64(s, RFX__TAG_PROJ_LOSS, m->proj_loss);
    rfx__put_bytes(s, RFX__TAG_PROJ_SURROGATE, nested, len);
    return RFX_OK;
}

/* Decode an f64 array record whose count was checked; every value finite,
 * or (positive) > 0 and finite. */
static rfx_status decode_checked(const rfx__record *rec, int tag, int positive, const char *name,
                                 double **out)
{
    rfx_status st = rfx__rec_decode_new(&rec[tag], out, "model: projection");
    if (st) {
        rfx__error_prefix("%s", name);
        return st;
    }
    return rfx__rec_check_values(*out, (size_t)rec[tag].count, positive, tag, name);
}

/* Records of a projected model -> model: which fields, the sizes and the
 * counts they imply (overflow-checked), the scalars, then (allocations
 * bounded by the records) the arrays, and last the nested surrogate, loaded
 * as a file of its own that may not itself be projected. */
static rfx_status projected_load(const rfx__record *rec, const char *name,
                                 rfx__load_nested nested, rfx_model **out)
{
    size_t d = 0, ny = 0, md, mk;
    rfx_status st;
    for (int t = 1; t < RFX__TAG_END; t++) {
        unsigned fl = rfx__field_specs[t].flags;
        if (!rec[t].present &&
            ((fl & RFX__F_PROJ) || ((fl & RFX__F_COMMON) && (fl & RFX__F_REQUIRED))))
            return rfx__corrupt(name, "a projected model without field '%s' (corrupt file)",
                                rfx__field_specs[t].name);
        if (rec[t].present && !(fl & (RFX__F_PROJ | RFX__F_PROJ_OPT | RFX__F_COMMON)))
            return rfx__corrupt(name, "a projected model with field '%s' of another kind of model "
                                "(corrupt file)", rfx__field_specs[t].name);
    }
    RFX__TRY(rfx__rec_dim(rec, RFX__TAG_N_INPUTS, name, &d));
    RFX__TRY(rfx__rec_dim(rec, RFX__TAG_N_TARGETS, name, &ny));
    if (ny != 1)
        return rfx__corrupt(name, "field 'n_targets' = %zu; a projected model has 1 (corrupt file)",
                            ny);
    uint64_t m64 = rfx__rec_u64(&rec[RFX__TAG_N_TRAIN]), k64 = rfx__rec_u64(&rec[RFX__TAG_PROJ_K]);
    if (m64 < 2 || m64 > 2147483647u)
        return rfx__corrupt(name,
                            "field 'n_train' = %llu, expected 2 .. 2147483647 for a projected "
                            "model (corrupt file)",
                            (unsigned long long)m64);
    if (k64 < 1 || k64 > m64)
        return rfx__corrupt(name,
                            "field 'projected_k' = %llu, expected 1 .. n_train = %llu (corrupt "
                            "file)",
                            (unsigned long long)k64, (unsigned long long)m64);
    const size_t m = (size_t)m64, k = (size_t)k64;
    RFX__TRY(rfx__rec_mul(m, d, &md, "projected rows m x d", name));
    RFX__TRY(rfx__rec_mul(m, k, &mk, "projected alpha m x k", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_PROJ_THETA, d, "d", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_PROJ_ROWS, md, "m x d", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_PROJ_ALPHA, mk, "m x k", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_PROJ_ROW_MEANS, m, "m", name));
    RFX__TRY(rfx__rec_check_scaler(rec, d, name));
    const double gamma = rfx__rec_f64(&rec[RFX__TAG_PROJ_GAMMA]),
                 grand = rfx__rec_f64(&rec[RFX__TAG_PROJ_GRAND_MEAN]);
    const double loss = rfx__rec_f64(&rec[RFX__TAG_PROJ_LOSS]);
    if (!(isfinite(gamma) && gamma > 0))
        return rfx__corrupt(name, "field 'projected_gamma' = %g, expected a positive finite number "
                            "(corrupt file)", gamma);
    if (!isfinite(grand))
        return rfx__corrupt(name, "field 'projected_grand_mean' = %g, expected a finite number "
                            "(corrupt file)", grand);
    if (!(isnan(loss) || loss >= 0))
        return rfx__corrupt(name, "field 'projected_loss' = %g, expected NaN or a number >= 0 "
                            "(corrupt file)", loss);

    double *theta = NULL, *rows = NULL, *alpha = NULL, *rmean = NULL, *xm = NULL, *xs = NULL;
    rfx_model *inner = NULL;
    rfx_kpca *kp = NULL;
    char nname[600];
    if ((st = decode_checked(rec, RFX__TAG_PROJ_THETA, 0, name, &theta))) goto done;
    int any = 0;
    for (size_t j = 0; j < d; j++) {
        if (!(theta[j] >= 0 && theta[j] <= 1)) {
            st = rfx__corrupt(name, "field 'projected_theta'[%zu] = %g, expected a value in [0, 1] "
                              "(corrupt file)", j, theta[j]);
            goto done;
        }
        any |= theta[j] > 0;
    }
    if (!any) {
        st = rfx__corrupt(name, "field 'projected_theta': all %zu entries are zero (corrupt file)",
                          d);
        goto done;
    }
    if ((st = decode_checked(rec, RFX__TAG_PROJ_ROWS, 0, name, &rows))) goto done;
    if ((st = decode_checked(rec, RFX__TAG_PROJ_ALPHA, 0, name, &alpha))) goto done;
    if ((st = decode_checked(rec, RFX__TAG_PROJ_ROW_MEANS, 0, name, &rmean))) goto done;
    if (rec[RFX__TAG_X_MEAN].present) {
        if ((st = decode_checked(rec, RFX__TAG_X_MEAN, 0, name, &xm))) goto done;
        if ((st = decode_checked(rec, RFX__TAG_X_SCALE, 1, name, &xs))) goto done;
    }
    /* the surrogate: a model file of its own inside the record */
    snprintf(nname, sizeof nname, "%s: field 'projected_surrogate'", name);
    st = nested(rec[RFX__TAG_PROJ_SURROGATE].data, (size_t)rec[RFX__TAG_PROJ_SURROGATE].count,
                nname, &inner);
    if (st) goto done;
    if (inner->d != k || inner->ny != 1) {
        st = rfx__corrupt(name,
                          "field 'projected_surrogate': a model with %zu inputs and %zu targets, "
                          "expected projected_k = %zu and 1 (corrupt file)",
                          inner->d, inner->ny, k);
        goto done;
    }
    rfx__kpca_arrays a;
    a.m = m;
    a.d = d;
    a.k = k;
    a.gamma = gamma;
    a.X = rows;
    a.x_mean = xm;
    a.x_scale = xs;
    a.theta = theta;
    a.row_mean = rmean;
    a.grand = grand;
    a.alpha = alpha;
    if ((st = rfx__rec_failure(rfx__kpca_from_arrays(&a, 0, &kp), name))) goto done;
    if ((st = rfx__projected_model(kp, inner, d, m, loss, name, out))) goto done;
    kp = NULL;
    inner = NULL;

done:
    rfx_kpca_free(kp);
    rfx_model_free(inner);
    free(theta);
    free(rows);
    free(alpha);
    free(rmean);
    free(xm);
    free(xs);
    return st;
}

const rfx__model_kind rfx__projected_kind = {projected_free_parts, projected_check_std,
                                             projected_predict,    projected_info,
                                             projected_save,       projected_load};
