/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Feature models as rfx_model objects: ridge, Bayes, SRFE, HARFE,
 * classifiers, kitchen sinks and greedy models, a feature map with weights
 * and intercepts (and for Bayes a posterior, for classifiers the classes).
 * Their kind: free, standard deviations, info, and their records in model
 * files; the prediction itself is rfx__feature_predict (model.c).
 *
 * Their file holds the feature map (tags 1..15, 27..30 and 49, the
 * structure, optional: files without it have i.i.d. features; 59, the
 * construction of a SORF map, optional: files without it have version 1,
 * the SORF of rfx 0.2 and earlier), the input
 * scaler (optional), weights, intercepts and penalties, the posterior of a
 * Bayesian model (chol, optional zmean) and no PCE or projected field. A
 * classifier (RFX_METHOD_CLASSIFY) has three more required fields (tags
 * 50..52: classes, loss, multi-class scheme) and as many score columns
 * (n_targets) as its classes imply; the kitchen-sinks and greedy models are
 * stored as ridge models are.
 */
#include "core/records.h"

#include <math.h>
#include <stdio.h>

/* the generic fields are all it owns */
static void feature_free_parts(rfx_model *m) { (void)m; }

static rfx_status feature_check_std(const rfx_model *m)
{
    if (m->chol) return RFX_OK;
    return rfx__error(RFX_EINVAL,
                      "predict: standard deviations need a Bayesian model (this one is %s)",
                      rfx_method_name(m->method));
}

static rfx_status feature_info(const rfx_model *m, rfx_model_info *info)
{
    info->features = m->features->params;
    info->standardized = m->x_mean != NULL;
    info->fit_intercept = m->fit_intercept;
    info->has_std = m->chol != NULL;
    info->lambda = m->lambda;
    info->noise_var = m->noise_var;
    info->prior_var = m->prior_var;
    info->log_evidence = m->log_evidence;
    return RFX_OK;
}

/* A feature model's records, in tag order but for the structure. */
static rfx_status feature_save(rfx__sink *s, const rfx_model *m, const unsigned char *nested,
                               size_t len)
{
    (void)nested; /* no nested model */
    (void)len;
    if (!m->features || !m->W || !m->intercept)
        return rfx__error(RFX_EINTERNAL, "the model is incomplete");
    const rfx_features *f = m->features;
    const rfx_features_params *p = &f->params;
    rfx__put_u64(s, RFX__TAG_METHOD, (uint64_t)m->method);
    rfx__put_u64(s, RFX__TAG_N_INPUTS, m->d);
    rfx__put_u64(s, RFX__TAG_N_FEATURES, m->D);
    rfx__put_u64(s, RFX__TAG_N_TARGETS, m->ny);
    rfx__put_u64(s, RFX__TAG_N_TRAIN, m->n_train);
    rfx__put_u64(s, RFX__TAG_FIT_INTERCEPT, m->fit_intercept ? 1 : 0);
    rfx__put_u64(s, RFX__TAG_KERNEL, (uint64_t)p->kernel);
    rfx__put_u64(s, RFX__TAG_FORM, (uint64_t)p->form);
    rfx__put_f64(s, RFX__TAG_NU, p->nu);
    rfx__put_u64(s, RFX__TAG_SEED, p->seed);
    rfx__put_f64(s, RFX__TAG_LENGTH_SCALE, f->ard ? 0.0 : f->ls[0]);
    rfx__put_u64(s, RFX__TAG_ARD, f->ard ? 1 : 0);
    rfx__put_f64s(s, RFX__TAG_LENGTH_SCALES, f->ls, f->d);
    rfx__put_f64s(s, RFX__TAG_FREQUENCIES, f->W, f->F * f->d);
    rfx__put_f64s(s, RFX__TAG_PHASES, f->b, f->F);
    rfx__put_u64(s, RFX__TAG_ACTIVATION, (uint64_t)p->activation);
    rfx__put_u64(s, RFX__TAG_SPARSITY, p->sparsity);
    rfx__put_u64(s, RFX__TAG_WEIGHT_DIST, (uint64_t)p->weights);
    rfx__put_f64(s, RFX__TAG_WEIGHT_SCALE, p->weight_scale);
    /* only for structured maps: files of i.i.d. maps stay readable by
       builds that predate the tag */
    if (p->structure != RFX_STRUCTURE_IID)
        rfx__put_u64(s, RFX__TAG_STRUCTURE, (uint64_t)p->structure);
    /* only for SORF's second construction: files of the first stay
     * readable by rfx 0.2 */
    if (p->structure == RFX_STRUCTURE_SORF && p->structure_version >= 2)
        rfx__put_u64(s, RFX__TAG_STRUCTURE_VERSION, (uint64_t)p->structure_version);
    if (m->x_mean && m->x_scale) {
        rfx__put_f64s(s, RFX__TAG_X_MEAN, m->x_mean, m->d);
        rfx__put_f64s(s, RFX__TAG_X_SCALE, m->x_scale, m->d);
    }
    rfx__put_f64s(s, RFX__TAG_WEIGHTS, m->W, m->D * m->ny);
    rfx__put_f64s(s, RFX__TAG_INTERCEPT, m->intercept, m->ny);
    rfx__put_f64(s, RFX__TAG_LAMBDA, m->lambda);
    rfx__put_f64(s, RFX__TAG_NOISE_VAR, m->noise_var);
    rfx__put_f64(s, RFX__TAG_PRIOR_VAR, m->prior_var);
    rfx__put_f64(s, RFX__TAG_LOG_EVIDENCE, m->log_evidence);
    if (m->chol) {
        rfx__put_f64s(s, RFX__TAG_CHOL, m->chol, m->D * m->D);
        if (m->zmean) rfx__put_f64s(s, RFX__TAG_ZMEAN, m->zmean, m->D);
    }
    if (m->classes) {
        rfx__put_f64s(s, RFX__TAG_CLASSES, m->classes, m->n_classes);
        rfx__put_u64(s, RFX__TAG_LOSS, (uint64_t)m->loss);
        rfx__put_u64(s, RFX__TAG_MULTICLASS, (uint64_t)m->multiclass);
    }
    return RFX_OK;
}

/* Records of a feature model -> model. All shape checks come before the
 * first allocation. */
static rfx_status feature_load(const rfx__record *rec, const char *name, rfx__load_nested nested,
                               rfx_model **out)
{
    size_t d = 0, D = 0, ny = 0, F = 0, fd = 0, dd = 0, dy = 0;
    uint64_t method = rfx__rec_u64(&rec[RFX__TAG_METHOD]), kernel = 0, form = 0, intercept = 0,
             ard = 0;
    rfx_status st;
    (void)nested; /* no nested model */

    for (int t = 1; t < RFX__TAG_END; t++) {
        if ((rfx__field_specs[t].flags & RFX__F_REQUIRED) && !rec[t].present)
            return rfx__corrupt(name, "missing field '%s' (corrupt file)",
                                rfx__field_specs[t].name);
        if ((rfx__field_specs[t].flags & (RFX__F_PCE | RFX__F_PCE_OPT | RFX__F_PROJ)) &&
            rec[t].present)
            return rfx__corrupt(name, "a %s model with field '%s' of a %s model (corrupt file)",
                                rfx_method_name((rfx_method)method), rfx__field_specs[t].name,
                                (rfx__field_specs[t].flags & (RFX__F_PCE | RFX__F_PCE_OPT)) ? "pce"
                                                                              : "projected");
        if ((rfx__field_specs[t].flags & RFX__F_CLS) &&
            rec[t].present != (method == RFX_METHOD_CLASSIFY))
            return rfx__corrupt(name, "a %s model %s field '%s' (corrupt file)",
                                rfx_method_name((rfx_method)method),
                                rec[t].present ? "with the classifier's" : "without",
                                rfx__field_specs[t].name);
    }
    RFX__TRY(rfx__rec_dim(rec, RFX__TAG_N_INPUTS, name, &d));
    RFX__TRY(rfx__rec_dim(rec, RFX__TAG_N_FEATURES, name, &D));
    RFX__TRY(rfx__rec_dim(rec, RFX__TAG_N_TARGETS, name, &ny));
    RFX__TRY(rfx__rec_enum(rec, RFX__TAG_FIT_INTERCEPT, 1, name, &intercept));
    RFX__TRY(rfx__rec_enum(rec, RFX__TAG_KERNEL, RFX_KERNEL_CUSTOM, name, &kernel));
    RFX__TRY(rfx__rec_enum(rec, RFX__TAG_FORM, RFX_FORM_PHASE_FREE, name, &form));
    RFX__TRY(rfx__rec_enum(rec, RFX__TAG_ARD, 1, name, &ard));
    uint64_t activation = RFX_ACTIVATION_COS, sparsity = 0, wdist = RFX_WEIGHTS_KERNEL;
    uint64_t structure = RFX_STRUCTURE_IID, loss = 0, multiclass = 0;
    size_t n_classes = 0;
    double weight_scale = 1.0;
    uint64_t structure_version = 1;
    if (rec[RFX__TAG_STRUCTURE].present)
        RFX__TRY(rfx__rec_enum(rec, RFX__TAG_STRUCTURE, RFX_STRUCTURE_HALTON, name, &structure));
    if (rec[RFX__TAG_STRUCTURE_VERSION].present) {
        RFX__TRY(rfx__rec_enum(rec, RFX__TAG_STRUCTURE_VERSION, 2, name, &structure_version));
        if (structure != RFX_STRUCTURE_SORF || structure_version < 2)
            return rfx__corrupt(name, "field 'structure_version' = %llu with structure %s "
                                "(corrupt file)", (unsigned long long)structure_version,
                                rfx_structure_name((rfx_structure)structure));
    }
    if (method == RFX_METHOD_CLASSIFY) {
        RFX__TRY(rfx__rec_enum(rec, RFX__TAG_LOSS, RFX_LOSS_SQUARED, name, &loss));
        RFX__TRY(
            rfx__rec_enum(rec, RFX__TAG_MULTICLASS, RFX_MULTICLASS_SOFTMAX, name, &multiclass));
        if (multiclass == RFX_MULTICLASS_SOFTMAX && loss != RFX_LOSS_LOGISTIC)
            return rfx__corrupt(name,
                                "field 'multiclass' is softmax with the %s loss; softmax takes "
                                "the logistic loss (corrupt file)",
                                rfx_loss_name((rfx_loss)loss));
        uint64_t c64 = rec[RFX__TAG_CLASSES].count;
        if (c64 < 2 || c64 > RFX_CLASSIFY_MAX_CLASSES)
            return rfx__corrupt(name, "field 'classes' has %llu values, expected 2 .. %d (corrupt "
                                "file)", (unsigned long long)c64, RFX_CLASSIFY_MAX_CLASSES);
        n_classes = (size_t)c64;
        for (size_t k = 0; k < n_classes; k++) {
            double v = rfx__f64_from_bits(rfx__get_le64(rec[RFX__TAG_CLASSES].data + 8 * k));
            double u =
                k ? rfx__f64_from_bits(rfx__get_le64(rec[RFX__TAG_CLASSES].data + 8 * (k - 1))) : 0;
            if (!isfinite(v) || (k > 0 && !(v > u)))
                return rfx__corrupt(name, "field 'classes'[%zu] = %g, expected a finite number "
                                    "%s (corrupt file)", k, v,
                                    k ? "above the previous class" : "");
        }
        if (ny != (n_classes == 2 ? 1 : n_classes))
            return rfx__corrupt(name,
                                "field 'n_targets' = %zu, expected %zu score columns for %zu "
                                "classes (corrupt file)",
                                ny, n_classes == 2 ? (size_t)1 : n_classes, n_classes);
    }
    if (rec[RFX__TAG_ACTIVATION].present)
        RFX__TRY(rfx__rec_enum(rec, RFX__TAG_ACTIVATION, RFX_ACTIVATION_SIGN, name, &activation));
    if (rec[RFX__TAG_WEIGHT_DIST].present)
        RFX__TRY(rfx__rec_enum(rec, RFX__TAG_WEIGHT_DIST, RFX_WEIGHTS_UNIFORM, name, &wdist));
    if (rec[RFX__TAG_SPARSITY].present) sparsity = rfx__rec_u64(&rec[RFX__TAG_SPARSITY]);
    if (rec[RFX__TAG_WEIGHT_SCALE].present)
        weight_scale = rfx__rec_f64(&rec[RFX__TAG_WEIGHT_SCALE]);
    uint64_t n_train = rfx__rec_u64(&rec[RFX__TAG_N_TRAIN]);
    if (n_train > SIZE_MAX)
        return rfx__corrupt(name, "field 'n_train' = %llu exceeds size_t",
                            (unsigned long long)n_train);
    if (form == RFX_FORM_COS_SIN && D % 2 != 0)
        return rfx__corrupt(name, "field 'n_features' = %zu is odd; the cos-sin form needs it even "
                            "(corrupt file)", D);
    double nu = rfx__rec_f64(&rec[RFX__TAG_NU]);
    if (kernel == RFX_KERNEL_MATERN && !(isfinite(nu) && nu > 0))
        return rfx__corrupt(
            name, "field 'nu' = %g, expected a positive finite number (corrupt file)", nu);
    double length_scale = rfx__rec_f64(&rec[RFX__TAG_LENGTH_SCALE]);
    if (!ard && !(isfinite(length_scale) && length_scale > 0))
        return rfx__corrupt(name, "field 'length_scale' = %g, expected a positive finite number "
                            "(corrupt file)", length_scale);
    RFX__TRY(rfx__rec_check_scalar(rec, RFX__TAG_LAMBDA, name));
    RFX__TRY(rfx__rec_check_scalar(rec, RFX__TAG_NOISE_VAR, name));
    RFX__TRY(rfx__rec_check_scalar(rec, RFX__TAG_PRIOR_VAR, name));

    /* shapes: the products the arrays imply, overflow-checked */
    F = form == RFX_FORM_COS_SIN ? D / 2 : D;
    RFX__TRY(rfx__rec_mul(F, d, &fd, "frequencies F x d", name));
    RFX__TRY(rfx__rec_mul(D, D, &dd, "posterior factor D x D", name));
    RFX__TRY(rfx__rec_mul(D, ny, &dy, "weights D x ny", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_LENGTH_SCALES, d, "d", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_FREQUENCIES, fd, "F x d", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_PHASES, F, "F", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_WEIGHTS, dy, "D x ny", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_INTERCEPT, ny, "ny", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_CHOL, dd, "D x D", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_ZMEAN, D, "D", name));
    RFX__TRY(rfx__rec_check_scaler(rec, d, name));
    int posterior = rec[RFX__TAG_CHOL].present;
    if (posterior != (method == RFX_METHOD_BAYES))
        return rfx__corrupt(name, "a %s model %s field 'chol' (corrupt file)",
                            rfx_method_name((rfx_method)method), posterior ? "with" : "without");
    if (rec[RFX__TAG_ZMEAN].present && !posterior)
        return rfx__corrupt(name, "field 'zmean' without 'chol' (corrupt file)");

    /* values: decode the feature map into temporaries (it copies them) */
    double *ls = NULL, *W = NULL, *b = NULL, *x_mean = NULL, *x_scale = NULL;
    rfx_features *f = NULL;
    rfx_model *m = NULL;
    rfx_features_params p = rfx_features_params_default();
    st = rfx__rec_decode_new(&rec[RFX__TAG_LENGTH_SCALES], &ls, "model: length scales");
    if (!st) st = rfx__rec_decode_new(&rec[RFX__TAG_FREQUENCIES], &W, "model: frequencies");
    if (!st) st = rfx__rec_decode_new(&rec[RFX__TAG_PHASES], &b, "model: phases");
    if (!st && rec[RFX__TAG_X_MEAN].present)
        st = rfx__rec_decode_new(&rec[RFX__TAG_X_MEAN], &x_mean, "model: input means");
    if (!st && rec[RFX__TAG_X_SCALE].present)
        st = rfx__rec_decode_new(&rec[RFX__TAG_X_SCALE], &x_scale, "model: input scales");
    if (st) {
        rfx__error_prefix("%s", name);
        goto done;
    }
    if ((st = rfx__rec_check_values(ls, d, 1, RFX__TAG_LENGTH_SCALES, name))) goto done;
    if ((st = rfx__rec_check_values(W, fd, 0, RFX__TAG_FREQUENCIES, name))) goto done;
    if ((st = rfx__rec_check_values(b, F, 0, RFX__TAG_PHASES, name))) goto done;
    for (size_t j = 0; form == RFX_FORM_PHASE_FREE && j < F; j++) {
        if (b[j] != 0.0) {
            st = rfx__corrupt(name, "field 'phases'[%zu] = %g in the phase-free form, whose "
                              "phases are 0 (corrupt file)", j, b[j]);
            goto done;
        }
    }
    if (x_mean && (st = rfx__rec_check_values(x_mean, d, 0, RFX__TAG_X_MEAN, name))) goto done;
    if (x_scale && (st = rfx__rec_check_values(x_scale, d, 1, RFX__TAG_X_SCALE, name))) goto done;
    if (!ard) {
        for (size_t i = 0; i < d; i++) {
            if (ls[i] != length_scale) {
                st = rfx__corrupt(name,
                                  "field 'length_scales'[%zu] = %g differs from the isotropic "
                                  "length_scale %g (corrupt file)",
                                  i, ls[i], length_scale);
                goto done;
            }
        }
    }

    p.kernel = (rfx_kernel)kernel;
    p.nu = nu;
    p.form = (rfx_form)form;
    p.n_features = D;
    p.seed = rfx__rec_u64(&rec[RFX__TAG_SEED]);
    p.length_scale = ls[0];
    p.activation = (rfx_activation)activation;
    p.weights = (rfx_weights)wdist;
    p.weight_scale = weight_scale;
    if (sparsity > d) {
        st = rfx__corrupt(name, "field 'sparsity' = %llu exceeds the %zu inputs (corrupt file)",
                          (unsigned long long)sparsity, d);
        goto done;
    }
    p.sparsity = (size_t)sparsity;
    p.structure = (rfx_structure)structure;
    p.structure_version = (unsigned)structure_version;
    /* RFX_EINVAL: a parameter no valid writer produces */
    st = rfx__rec_failure(rfx__features_from_arrays(&p, d, ls, (int)ard, W, b, &f), name);
    if (st) goto done;
    st = rfx__model_alloc((rfx_method)method, f, ny, posterior, &m);
    if (st) {
        rfx_features_free(f); /* not owned by m on failure */
        rfx__error_prefix("%s", name);
        goto done;
    }
    rfx__rec_decode_f64s(&rec[RFX__TAG_WEIGHTS], m->W);
    rfx__rec_decode_f64s(&rec[RFX__TAG_INTERCEPT], m->intercept);
    if ((st = rfx__rec_check_values(m->W, dy, 0, RFX__TAG_WEIGHTS, name))) goto done;
    if ((st = rfx__rec_check_values(m->intercept, ny, 0, RFX__TAG_INTERCEPT, name))) goto done;
    if (posterior) {
        rfx__rec_decode_f64s(&rec[RFX__TAG_CHOL], m->chol);
        if ((st = rfx__rec_check_values(m->chol, dd, 0, RFX__TAG_CHOL, name))) goto done;
        /* prediction divides by the diagonal of R */
        for (size_t i = 0; i < D; i++) {
            if (!(m->chol[i * D + i] > 0)) {
                st = rfx__corrupt(name, "field 'chol': diagonal entry %zu is %g, not positive "
                                  "(corrupt file)", i, m->chol[i * D + i]);
                goto done;
            }
        }
        if (rec[RFX__TAG_ZMEAN].present) {
            rfx__rec_decode_f64s(&rec[RFX__TAG_ZMEAN], m->zmean);
            if ((st = rfx__rec_check_values(m->zmean, D, 0, RFX__TAG_ZMEAN, name))) goto done;
        } else {
            free(m->zmean);
            m->zmean = NULL;
        }
    }
    m->n_train = (size_t)n_train;
    m->fit_intercept = (int)intercept;
    m->lambda = rfx__rec_f64(&rec[RFX__TAG_LAMBDA]);
    m->noise_var = rfx__rec_f64(&rec[RFX__TAG_NOISE_VAR]);
    m->prior_var = rfx__rec_f64(&rec[RFX__TAG_PRIOR_VAR]);
    m->log_evidence = rfx__rec_f64(&rec[RFX__TAG_LOG_EVIDENCE]);
    m->x_mean = x_mean;
    m->x_scale = x_scale;
    x_mean = x_scale = NULL;
    if (method == RFX_METHOD_CLASSIFY) {
        st = rfx__alloc(n_classes, sizeof(double), (void **)&m->classes, "model: classes");
        if (st) {
            rfx__error_prefix("%s", name);
            goto done;
        }
        rfx__rec_decode_f64s(&rec[RFX__TAG_CLASSES], m->classes);
        m->n_classes = n_classes;
        m->loss = (int)loss;
        m->multiclass = (int)multiclass;
    }
    *out = m;
    m = NULL;

done:
    rfx_model_free(m);
    free(ls);
    free(W);
    free(b);
    free(x_mean);
    free(x_scale);
    return st;
}

const rfx__model_kind rfx__feature_kind = {feature_free_parts, feature_check_std,
                                           rfx__feature_predict, feature_info, feature_save,
                                           feature_load};
