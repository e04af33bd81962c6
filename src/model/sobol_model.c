/*
 * Sobol indices of a fitted model (rfx_sobol_model): the model's
 * predictions for one target as the function of the Monte Carlo estimators
 * of src/surrogate/sobol.c. Here, above the model kinds, so that the
 * estimators stay below them.
 */
#include "internal.h"
#include "rfx/surrogate.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* A fitted model as the function                                            */
/* ------------------------------------------------------------------------ */

typedef struct model_fn {
    const rfx_model *m;
    size_t target, ny, cap; /* cap: rows of buf */
    double *buf;            /* cap x ny predictions (ny > 1 only) */
} model_fn;

static rfx_status model_fn_eval(void *user, rfx_cmat X, double *y)
{
    model_fn *s = user;
    if (s->ny == 1) return rfx_model_predict(s->m, X, rfx_mat_of(y, X.rows, 1), rfx_mat_none());
    if (X.rows > s->cap)
        return rfx__error(RFX_EINTERNAL, "sobol: %zu rows exceed the buffer of %zu", X.rows,
                          s->cap);
    RFX__TRY(rfx_model_predict(s->m, X, rfx_mat_of(s->buf, X.rows, s->ny), rfx_mat_none()));
    for (size_t i = 0; i < X.rows; ++i) y[i] = s->buf[i * s->ny + s->target];
    return RFX_OK;
}

rfx_status rfx_sobol_model(const rfx_model *m, size_t target, const rfx_marginal *marginals,
                           size_t d, const rfx_sobol_params *params, rfx_sobol_result *out)
{
    rfx_model_info info;
    model_fn s;
    rfx_status st;
    if (!m) return rfx__error(RFX_EINVAL, "rfx_sobol_model: m is NULL");
    if (!params) return rfx__error(RFX_EINVAL, "sobol: params is NULL");
    RFX__TRY(rfx_model_get_info(m, &info));
    if (d != info.n_inputs)
        return rfx__error(RFX_EDIM, "sobol: the marginals describe %zu inputs, the model has %zu",
                          d, info.n_inputs);
    if (target >= info.n_targets)
        return rfx__error(RFX_EINVAL, "sobol: target %zu is out of range (the model has %zu)",
                          target, info.n_targets);
    memset(&s, 0, sizeof s);
    s.m = m;
    s.target = target;
    s.ny = info.n_targets;
    if (s.ny > 1) {
        /* the callback gets at most batch_rows rows, and never more than
         * the N (d + 2) of the design */
        size_t rows = 0, cap = params->batch_rows, nbuf = 0;
        if (rfx__mul(params->n, d + 2, &rows, "sobol design rows") == RFX_OK && rows < cap)
            cap = rows;
        s.cap = cap ? cap : 1;
        RFX__TRY(rfx__mul(s.cap, s.ny, &nbuf, "sobol model predictions"));
        RFX__TRY(rfx__alloc(nbuf, sizeof *s.buf, (void **)&s.buf, "sobol model predictions"));
    }
    st = rfx_sobol_estimate(model_fn_eval, &s, marginals, d, params, out);
    free(s.buf);
    return st;
}
