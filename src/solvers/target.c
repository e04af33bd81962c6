/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Target transforms (rfx/model.h): z = T(y) for the fit, y = T^-1(f) for
 * the predictions, and the maximum-likelihood Box-Cox lambda (Box & Cox,
 * "An analysis of transformations", JRSS B 26(2), 1964).
 */
#include "internal.h"

#include <math.h>
#include <string.h>

/* |lambda| below this is the log (the Box-Cox family's limit; the
 * difference is below the rounding of (y^lambda - 1) / lambda there) */
#define BOXCOX_LOG_EPS 1e-10

/* the search interval of the ML lambda, its grid step, and the golden
 * section's final width */
#define BOXCOX_LO (-3.0)
#define BOXCOX_HI 3.0
#define BOXCOX_STEP 0.1
#define BOXCOX_TOL 1e-6

static rfx_status check_kind(rfx_target_transform t, double lambda, const char *where)
{
    if ((int)t < RFX_TARGET_NONE || t > RFX_TARGET_BOXCOX)
        return rfx__error(RFX_EINVAL, "%s: unknown target transform %d", where, (int)t);
    if (t == RFX_TARGET_BOXCOX && !isfinite(lambda))
        return rfx__error(RFX_EINVAL, "%s: the Box-Cox lambda %g is not finite", where, lambda);
    return RFX_OK;
}

/* Box-Cox of one value y > 0 given its log */
static double boxcox_of_log(double ly, double lambda)
{
    return fabs(lambda) < BOXCOX_LOG_EPS ? ly : expm1(lambda * ly) / lambda;
}

rfx_status rfx_target_forward(rfx_target_transform t, double lambda, const double *y, size_t n,
                              double *z)
{
    RFX__TRY(check_kind(t, lambda, "target transform"));
    if (n > 0 && (!y || !z)) return rfx__error(RFX_EINVAL, "target transform: NULL array");
    for (size_t i = 0; i < n; i++) {
        const double v = y[i];
        if (!isfinite(v))
            return rfx__error(RFX_EINVAL, "target transform: value %zu is %g (not finite)", i, v);
        if (t != RFX_TARGET_NONE && !(v > 0))
            return rfx__error(RFX_EINVAL,
                              "target transform: value %zu is %g; the %s transform takes "
                              "values > 0 only",
                              i, v, rfx_target_transform_name(t));
        z[i] = t == RFX_TARGET_NONE ? v
             : t == RFX_TARGET_LOG  ? log(v)
                                    : boxcox_of_log(log(v), lambda);
    }
    return RFX_OK;
}

/* T^-1 of one value, without checks */
static double inverse_one(rfx_target_transform t, double lambda, double z)
{
    if (t == RFX_TARGET_NONE) return z;
    if (t == RFX_TARGET_LOG || fabs(lambda) < BOXCOX_LOG_EPS) return exp(z);
    const double base = 1.0 + lambda * z;
    if (!(base > 0)) return lambda > 0 ? 0.0 : INFINITY;
    return pow(base, 1.0 / lambda);
}

rfx_status rfx_target_inverse(rfx_target_transform t, double lambda, const double *z, size_t n,
                              double *y)
{
    RFX__TRY(check_kind(t, lambda, "target inverse"));
    if (n > 0 && (!y || !z)) return rfx__error(RFX_EINVAL, "target inverse: NULL array");
    for (size_t i = 0; i < n; i++) y[i] = inverse_one(t, lambda, z[i]);
    return RFX_OK;
}

/* T^-1 over a matrix in place (the predictions of rfx__model_predict). */
void rfx__target_inverse_mat(const rfx_model *m, rfx_mat Y)
{
    if (m->target == RFX_TARGET_NONE) return;
    for (size_t i = 0; i < Y.rows; i++)
        for (size_t j = 0; j < Y.cols; j++) {
            double *v = &Y.data[i * Y.stride + j];
            *v = inverse_one((rfx_target_transform)m->target, m->target_lambda, *v);
        }
}

/* The profile log-likelihood of lambda over the logs ly (n), up to a
 * constant: -(n/2) log var(z) + (lambda - 1) sum ly. The logs are centred
 * (y over its geometric mean), which changes it by a constant only. With
 * weights w (NULL: 1 each; n the rows of positive weight, W their sum):
 * -(W/2) log var_w(z) + (lambda - 1) sum w ly, the likelihood of the rows
 * repeated by integer weights, the logs centred by their weighted mean. */
static double boxcox_llf(const double *ly, const double *w, size_t n, double W, double lambda)
{
    double mean = 0, ss = 0;
    for (size_t i = 0; i < n; i++) mean += (w ? w[i] : 1.0) * boxcox_of_log(ly[i], lambda);
    mean /= W;
    for (size_t i = 0; i < n; i++) {
        const double e = boxcox_of_log(ly[i], lambda) - mean;
        ss += (w ? w[i] : 1.0) * e * e;
    }
    /* sum w ly = 0 after centring */
    return ss > 0 ? -0.5 * W * log(ss / W) : -INFINITY;
}

/* The maximiser over the values y[i] with w[i] > 0 (all with w NULL). */
static rfx_status boxcox_lambda(const double *y, const double *w, size_t n, double *lambda)
{
    if (!y || !lambda) return rfx__error(RFX_EINVAL, "Box-Cox lambda: NULL argument");
    size_t m = n;
    if (w) {
        RFX__TRY(rfx__check_weights(w, n, "Box-Cox lambda: w"));
        m = 0;
        for (size_t i = 0; i < n; i++) m += w[i] > 0;
    }
    if (m < 2)
        return rfx__error(RFX_EINVAL, "Box-Cox lambda: at least 2 values%s, got %zu",
                          w ? " of positive weight" : "", m);
    double *ly, *wp = NULL;
    RFX__TRY(rfx__alloc(m, sizeof *ly, (void **)&ly, "Box-Cox lambda: logs"));
    if (w && rfx__alloc(m, sizeof *wp, (void **)&wp, "Box-Cox lambda: weights")) {
        free(ly);
        return RFX_ENOMEM;
    }
    double mean = 0, W = w ? 0.0 : (double)n;
    for (size_t i = 0, k = 0; i < n; i++) {
        if (w && !(w[i] > 0)) continue; /* a row left out */
        if (!isfinite(y[i]) || !(y[i] > 0)) {
            const double v = y[i];
            free(ly);
            free(wp);
            return rfx__error(RFX_EINVAL,
                              "Box-Cox lambda: value %zu is %g; Box-Cox takes finite values "
                              "> 0 only",
                              i, v);
        }
        ly[k] = log(y[i]);
        if (w) {
            wp[k] = w[i];
            W += w[i];
        }
        mean += (w ? w[i] : 1.0) * ly[k++];
    }
    mean /= W;
    double spread = 0;
    for (size_t i = 0; i < m; i++) {
        ly[i] -= mean;
        spread = fmax(spread, fabs(ly[i]));
    }
    if (!(spread > 0)) {
        free(ly);
        free(wp);
        return rfx__error(RFX_EINVAL, "Box-Cox lambda: all %zu values are equal", m);
    }
    /* the grid's best point, then golden section on its two neighbouring
     * cells (the likelihood is smooth; a grid first guards against a
     * second, lower maximum) */
    const size_t G = (size_t)lround((BOXCOX_HI - BOXCOX_LO) / BOXCOX_STEP);
    size_t best = 0;
    double fbest = -INFINITY;
    for (size_t k = 0; k <= G; k++) {
        const double f = boxcox_llf(ly, wp, m, W, BOXCOX_LO + BOXCOX_STEP * (double)k);
        if (f > fbest) {
            fbest = f;
            best = k;
        }
    }
    double a = BOXCOX_LO + BOXCOX_STEP * (double)(best > 0 ? best - 1 : 0);
    double b = BOXCOX_LO + BOXCOX_STEP * (double)(best < G ? best + 1 : G);
    const double r = 0.6180339887498949;
    double c = b - r * (b - a), e = a + r * (b - a);
    double fc = boxcox_llf(ly, wp, m, W, c), fe = boxcox_llf(ly, wp, m, W, e);
    while (b - a > BOXCOX_TOL) {
        if (fc >= fe) {
            b = e;
            e = c;
            fe = fc;
            c = b - r * (b - a);
            fc = boxcox_llf(ly, wp, m, W, c);
        } else {
            a = c;
            c = e;
            fc = fe;
            e = a + r * (b - a);
            fe = boxcox_llf(ly, wp, m, W, e);
        }
    }
    const double mid = 0.5 * (a + b);
    /* the grid point wins when the section ends lower (an end of [-3, 3]) */
    *lambda = boxcox_llf(ly, wp, m, W, mid) >= fbest ? mid
                                                     : BOXCOX_LO + BOXCOX_STEP * (double)best;
    free(ly);
    free(wp);
    return RFX_OK;
}

rfx_status rfx_target_boxcox_lambda(const double *y, size_t n, double *lambda)
{
    return boxcox_lambda(y, NULL, n, lambda);
}

rfx_status rfx_target_boxcox_lambda_weighted(const double *y, const double *w, size_t n,
                                             double *lambda)
{
    return boxcox_lambda(y, w, n, lambda);
}

rfx_status rfx_model_set_target_transform(rfx_model *m, rfx_target_transform t, double lambda)
{
    if (!m) return rfx__error(RFX_EINVAL, "target transform: model is NULL");
    RFX__TRY(check_kind(t, lambda, "target transform"));
    if (t != RFX_TARGET_NONE && (m->classes || m->ny != 1))
        return rfx__error(RFX_EINVAL, "target transform: a %s has no target to transform back",
                          m->classes ? "classifier" : "model of several targets");
    m->target = (int)t;
    m->target_lambda = t == RFX_TARGET_BOXCOX ? lambda : 0.0;
    return RFX_OK;
}
