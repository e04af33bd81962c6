/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Polynomial chaos models as rfx_model objects: their kind (what the model
 * object calls for a PCE model: free, standard deviations, predict, info,
 * and its records in model files), and the public rfx_model_from_pce /
 * rfx_model_pce.
 *
 * A PCE model (RFX_METHOD_PCE) has no feature map: its file holds the
 * shared fields (method, n_inputs, n_targets, n_train, creator) and the
 * PCE ones (tags 31..39), each required, and nothing else; a feature
 * model's file holds no PCE field.
 */
#include "core/records.h"

#include <math.h>
#include <stdio.h>
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

/* A PCE model's records: the shared fields, then the expansion. */
static rfx_status pce_save(rfx__sink *s, const rfx_model *m, const unsigned char *nested,
                           size_t len)
{
    (void)nested; /* no nested model */
    (void)len;
    if (!m->pce) return rfx__error(RFX_EINTERNAL, "the model is incomplete");
    const rfx_pce *pce = m->pce;
    const rfx_marginal *mg = rfx_pce_marginals(pce);
    const unsigned *alpha;
    const double *coef;
    rfx_pce_info info;
    rfx_pce_get_info(pce, &info); /* cannot fail: pce is not NULL */
    rfx__pce_arrays(pce, &alpha, &coef);
    rfx__put_u64(s, RFX__TAG_METHOD, (uint64_t)m->method);
    rfx__put_u64(s, RFX__TAG_N_INPUTS, m->d);
    rfx__put_u64(s, RFX__TAG_N_TARGETS, m->ny);
    rfx__put_u64(s, RFX__TAG_N_TRAIN, m->n_train);
    rfx__put_record_header(s, RFX__TAG_PCE_KINDS, RFX__ELEM_U64, m->d);
    for (size_t i = 0; i < m->d; i++) rfx__put_elem64(s, (uint64_t)mg[i].kind);
    rfx__put_record_header(s, RFX__TAG_PCE_PARAMS, RFX__ELEM_F64, 2 * (uint64_t)m->d);
    for (size_t i = 0; i < m->d; i++) {
        rfx__put_elem64(s, rfx__f64_bits(mg[i].a));
        rfx__put_elem64(s, rfx__f64_bits(mg[i].b));
    }
    rfx__put_u64(s, RFX__TAG_PCE_N_TERMS, info.n_terms);
    rfx__put_u32s(s, RFX__TAG_PCE_ALPHA, alpha, info.n_terms * m->d);
    rfx__put_f64s(s, RFX__TAG_PCE_COEF, coef, info.n_terms);
    rfx__put_u64(s, RFX__TAG_PCE_DEGREE, info.degree);
    rfx__put_u64(s, RFX__TAG_PCE_METHOD, (uint64_t)info.method);
    rfx__put_u64(s, RFX__TAG_PCE_CANDIDATES, info.n_candidates);
    const double loo[3] = {info.loo_mse, info.loo_relative, info.loo_corrected};
    rfx__put_f64s(s, RFX__TAG_PCE_LOO, loo, 3);
    if (rfx__pce_span(pce)) rfx__put_f64s(s, RFX__TAG_PCE_SPAN, rfx__pce_span(pce), 2 * m->d);
    return RFX_OK;
}

/* Records of a PCE model -> model: which fields, then counts and scalars,
 * then (allocations bounded by the records) the arrays; rfx_pce_create
 * checks the marginals' parameters and repeated multi-indices. */
static rfx_status pce_load(const rfx__record *rec, const char *name, rfx__load_nested nested,
                           rfx_model **out)
{
    size_t d = 0, ny = 0, n_terms = 0, td = 0;
    uint64_t n_train, degree, pce_method = 0, n_cand;
    rfx_status st;
    (void)nested; /* no nested model */

    for (int t = 1; t < RFX__TAG_END; t++) {
        unsigned fl = rfx__field_specs[t].flags;
        if (!rec[t].present &&
            ((fl & RFX__F_PCE) || ((fl & RFX__F_COMMON) && (fl & RFX__F_REQUIRED))))
            return rfx__corrupt(name, "a pce model without field '%s' (corrupt file)",
                                rfx__field_specs[t].name);
    }
    for (int t = 1; t < RFX__TAG_END; t++)
        if (rec[t].present &&
            !(rfx__field_specs[t].flags & (RFX__F_PCE | RFX__F_PCE_OPT | RFX__F_COMMON)))
            return rfx__corrupt(name, "a pce model with field '%s' of a feature map model (corrupt "
                                "file)", rfx__field_specs[t].name);
    RFX__TRY(rfx__rec_dim(rec, RFX__TAG_N_INPUTS, name, &d));
    RFX__TRY(rfx__rec_dim(rec, RFX__TAG_N_TARGETS, name, &ny));
    if (ny != 1)
        return rfx__corrupt(name, "field 'n_targets' = %zu; a pce model has 1 (corrupt file)", ny);
    n_train = rfx__rec_u64(&rec[RFX__TAG_N_TRAIN]);
    n_cand = rfx__rec_u64(&rec[RFX__TAG_PCE_CANDIDATES]);
    if (n_train > SIZE_MAX || n_cand > SIZE_MAX)
        return rfx__corrupt(name, "field '%s' = %llu exceeds size_t (corrupt file)",
                            n_train > SIZE_MAX ? "n_train" : "pce_n_candidates",
                            (unsigned long long)(n_train > SIZE_MAX ? n_train : n_cand));
    RFX__TRY(rfx__rec_enum(rec, RFX__TAG_PCE_METHOD, RFX_PCE_METHOD_LARS, name, &pce_method));
    degree = rfx__rec_u64(&rec[RFX__TAG_PCE_DEGREE]);

    /* shapes: T from its field, bounded by the coefficients present */
    uint64_t t64 = rfx__rec_u64(&rec[RFX__TAG_PCE_N_TERMS]);
    if (t64 != rec[RFX__TAG_PCE_COEF].count)
        return rfx__corrupt(name, "field 'pce_n_terms' = %llu, but 'pce_coefficients' has %llu "
                            "values (corrupt file)", (unsigned long long)t64,
                            (unsigned long long)rec[RFX__TAG_PCE_COEF].count);
    n_terms = (size_t)t64;
    if (d > 0 && n_terms > SIZE_MAX / d)
        return rfx__corrupt(name, "fields 'pce_n_terms' x 'n_inputs' = %zu x %zu overflow size_t "
                            "(corrupt file)", n_terms, d);
    td = n_terms * d;
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_PCE_KINDS, d, "d", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_PCE_PARAMS, 2 * d, "2 d", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_PCE_ALPHA, td, "T x d", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_PCE_LOO, 3, "3", name));
    for (size_t i = 0; i < d; i++) {
        uint64_t k = rfx__get_le64(rec[RFX__TAG_PCE_KINDS].data + 8 * i);
        if (k != RFX_MARGINAL_UNIFORM && k != RFX_MARGINAL_NORMAL && k != RFX_MARGINAL_LOGNORMAL)
            return rfx__corrupt(name,
                                "field 'pce_marginal_kinds'[%zu] = %llu, expected %d (uniform), "
                                "%d (normal) or %d (lognormal) (corrupt file)",
                                i, (unsigned long long)k, RFX_MARGINAL_UNIFORM,
                                RFX_MARGINAL_NORMAL, RFX_MARGINAL_LOGNORMAL);
    }
    double loo[3];
    rfx__rec_decode_f64s(&rec[RFX__TAG_PCE_LOO], loo);
    for (int i = 0; i < 3; i++)
        if (!(isnan(loo[i]) || loo[i] >= 0))
            return rfx__corrupt(name, "field 'pce_loo'[%d] = %g, expected NaN or a number >= 0 "
                                "(corrupt file)", i, loo[i]);
    /* values, all within the present records */
    uint64_t maxdeg = 0;
    for (size_t k = 0; k < n_terms; k++) {
        uint64_t tot = 0;
        for (size_t i = 0; i < d; i++) {
            uint32_t a = rfx__get_le32(rec[RFX__TAG_PCE_ALPHA].data + 4 * (k * d + i));
            if (a > RFX_PCE_MAX_DEGREE)
                return rfx__corrupt(name,
                                    "field 'pce_multi_indices': term %zu, input %zu has degree "
                                    "%lu, more than RFX_PCE_MAX_DEGREE = %u (corrupt file)",
                                    k, i, (unsigned long)a, RFX_PCE_MAX_DEGREE);
            tot += a;
        }
        if (tot > maxdeg) maxdeg = tot;
    }
    if (degree < maxdeg || (degree > maxdeg && degree > RFX_PCE_MAX_DEGREE))
        return rfx__corrupt(name,
                            "field 'pce_degree' = %llu, expected %llu (the largest total degree "
                            "of the terms) .. %u (corrupt file)",
                            (unsigned long long)degree, (unsigned long long)maxdeg,
                            maxdeg > RFX_PCE_MAX_DEGREE ? (unsigned)maxdeg : RFX_PCE_MAX_DEGREE);

    rfx_marginal *mg = NULL;
    unsigned *alpha = NULL;
    double *coef = NULL;
    rfx_pce *pce = NULL;
    st = rfx__alloc(d, sizeof *mg, (void **)&mg, "model: marginals");
    if (!st) st = rfx__alloc(td, sizeof *alpha, (void **)&alpha, "model: multi-indices");
    if (!st) st = rfx__rec_decode_new(&rec[RFX__TAG_PCE_COEF], &coef, "model: coefficients");
    if (st) {
        rfx__error_prefix("%s", name);
        goto done;
    }
    for (size_t i = 0; i < d; i++) {
        mg[i].kind = (rfx_marginal_kind)rfx__get_le64(rec[RFX__TAG_PCE_KINDS].data + 8 * i);
        mg[i].a = rfx__f64_from_bits(rfx__get_le64(rec[RFX__TAG_PCE_PARAMS].data + 16 * i));
        mg[i].b = rfx__f64_from_bits(rfx__get_le64(rec[RFX__TAG_PCE_PARAMS].data + 16 * i + 8));
    }
    for (size_t j = 0; j < td; j++) alpha[j] = rfx__get_le32(rec[RFX__TAG_PCE_ALPHA].data + 4 * j);
    if ((st = rfx__rec_check_values(coef, n_terms, 0, RFX__TAG_PCE_COEF, name))) goto done;
    /* RFX_EINVAL: bad marginal parameters, a repeated multi-index */
    if ((st = rfx__rec_failure(rfx_pce_create(d, mg, n_terms, alpha, coef, &pce), name)))
        goto done;
    rfx_pce_info info;
    memset(&info, 0, sizeof info);
    info.degree = (size_t)degree;
    info.method = (rfx_pce_method)pce_method;
    info.n_train = (size_t)n_train;
    info.n_candidates = (size_t)n_cand;
    info.loo_mse = loo[0];
    info.loo_relative = loo[1];
    info.loo_corrected = loo[2];
    rfx__pce_set_report(pce, &info);
    if (rec[RFX__TAG_PCE_SPAN].present) { /* the training range (optional) */
        const rfx__record *r = &rec[RFX__TAG_PCE_SPAN];
        double *span = NULL;
        if (r->count != 2 * (uint64_t)d) {
            st = rfx__corrupt(name, "field 'pce_span' has %llu values, expected %zu (corrupt "
                              "file)", (unsigned long long)r->count, 2 * d);
            goto done;
        }
        if ((st = rfx__alloc(2 * d, sizeof *span, (void **)&span, "model: span"))) goto done;
        rfx__rec_decode_f64s(r, span);
        st = rfx__model_box_check(span, span + d, d);
        if (st) {
            char why[512];
            snprintf(why, sizeof why, "%s", rfx_last_error() + strlen("model input box: "));
            st = rfx__corrupt(name, "field 'pce_span': %s (corrupt file)", why);
        }
        if (!st) st = rfx__pce_set_span(pce, span);
        free(span);
        if (st) goto done;
    }
    st = rfx_model_from_pce(pce, out);
    if (st) rfx__error_prefix("%s", name);

done:
    rfx_pce_free(pce);
    free(mg);
    free(alpha);
    free(coef);
    return st;
}

const rfx__model_kind rfx__pce_kind = {pce_free_parts, pce_check_std, pce_predict,
                                       pce_info,       pce_save,      pce_load};

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

