/* SPDX-License-Identifier: BSD-3-Clause */
/* Exact kernels (rfx/kernels.h): construction, reference counting, point
 * evaluation, and the Matern correlation through the modified Bessel
 * function K_nu. Gram matrices are in gram.c. */
#include "kern_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_LN2
#define M_LN2 0.69314718055994530942
#endif

/* ---- construction ---------------------------------------------------------- */

static rfx_status kern_new(rfx__kern_kind kind, rfx_kern **out, const char *what)
{
    rfx_kern *k;
    RFX__TRY(rfx__calloc(1, sizeof *k, (void **)&k, what));
    atomic_init(&k->refs, 1);
    k->kind = kind;
    k->l = 1.0;
    k->c = 1.0;
    *out = k;
    return RFX_OK;
}

static rfx_kern *kern_ref(const rfx_kern *k)
{
    rfx_kern *m = (rfx_kern *)k; /* the count is the one mutable field */
    atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    return m;
}

void rfx_kern_free(rfx_kern *k)
{
    while (k) {
        if (atomic_fetch_sub_explicit(&k->refs, 1, memory_order_acq_rel) != 1) return;
        rfx_kern *a = k->a, *b = k->b;
        free(k->ls);
        free(k->A);
        rfx_features_free(k->f);
        free(k);
        rfx_kern_free(b);
        k = a; /* the left operand by iteration: long chains of sums */
    }
}

#define KERN_PI 3.14159265358979323846

static int finite_pos(double v) { return v > 0 && isfinite(v); }

rfx_status rfx_kern_shift(rfx_kernel kernel, double nu, double length_scale,
                          const double *length_scales, size_t d, rfx_kern **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "kern_shift: out is NULL");
    rfx__kern_kind kind;
    switch (kernel) {
    case RFX_KERNEL_GAUSSIAN: kind = RFX__KERN_GAUSSIAN; break;
    case RFX_KERNEL_LAPLACIAN: kind = RFX__KERN_LAPLACE_SHIFT; break;
    case RFX_KERNEL_CAUCHY: kind = RFX__KERN_CAUCHY; break;
    case RFX_KERNEL_MATERN: kind = RFX__KERN_MATERN; break;
    case RFX_KERNEL_CUSTOM:
        return rfx__error(RFX_EINVAL, "kern_shift: kernel: the custom kernel is known only through "
                                      "its sampler (features.spectral); rfx has no exact form of it");
    default:
        return rfx__error(RFX_EINVAL, "kern_shift: kernel: unknown kernel %d", (int)kernel);
    }
    if (kind == RFX__KERN_MATERN && !finite_pos(nu))
        return rfx__error(RFX_EINVAL, "kern_shift: nu: Matern smoothness must be > 0, got %g", nu);
    if (length_scales) {
        if (d == 0)
            return rfx__error(RFX_EINVAL, "kern_shift: d must be > 0 with length_scales");
        for (size_t i = 0; i < d; i++)
            if (!finite_pos(length_scales[i]))
                return rfx__error(RFX_EINVAL,
                                  "kern_shift: length_scales[%zu] must be > 0 and finite, got %g",
                                  i, length_scales[i]);
    } else if (!finite_pos(length_scale)) {
        return rfx__error(RFX_EINVAL,
                          "kern_shift: length_scale must be > 0 and finite, got %g", length_scale);
    }
    rfx_kern *k;
    RFX__TRY(kern_new(kind, &k, "kern_shift"));
    k->d = d;
    k->nu = nu;
    if (length_scales) {
        rfx_status st = rfx__alloc(d, sizeof(double), (void **)&k->ls, "kern_shift: length scales");
        if (st) {
            free(k);
            return st;
        }
        memcpy(k->ls, length_scales, d * sizeof(double));
    } else {
        k->l = length_scale;
    }
    *out = k;
    return RFX_OK;
}

static rfx_status kern_gamma(rfx__kern_kind kind, double gamma, const char *what, rfx_kern **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "%s: out is NULL", what);
    if (!finite_pos(gamma))
        return rfx__error(RFX_EINVAL, "%s: gamma must be > 0 and finite, got %g", what, gamma);
    rfx_kern *k;
    RFX__TRY(kern_new(kind, &k, what));
    k->gamma = gamma;
    *out = k;
    return RFX_OK;
}

rfx_status rfx_kern_rbf(double gamma, rfx_kern **out)
{
    return kern_gamma(RFX__KERN_RBF, gamma, "kern_rbf", out);
}

rfx_status rfx_kern_laplacian(double gamma, rfx_kern **out)
{
    return kern_gamma(RFX__KERN_LAPLACE_GAMMA, gamma, "kern_laplacian", out);
}

rfx_status rfx_kern_polynomial(double gamma, double coef0, unsigned degree, rfx_kern **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "kern_polynomial: out is NULL");
    if (!isfinite(coef0))
        return rfx__error(RFX_EINVAL, "kern_polynomial: coef0 must be finite, got %g", coef0);
    RFX__TRY(kern_gamma(RFX__KERN_POLYNOMIAL, gamma, "kern_polynomial", out));
    (*out)->coef0 = coef0;
    (*out)->degree = degree;
    return RFX_OK;
}

rfx_status rfx_kern_sigmoid(double gamma, double coef0, rfx_kern **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "kern_sigmoid: out is NULL");
    if (!isfinite(coef0))
        return rfx__error(RFX_EINVAL, "kern_sigmoid: coef0 must be finite, got %g", coef0);
    RFX__TRY(kern_gamma(RFX__KERN_SIGMOID, gamma, "kern_sigmoid", out));
    (*out)->coef0 = coef0;
    return RFX_OK;
}

rfx_status rfx_kern_linear(rfx_kern **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "kern_linear: out is NULL");
    return kern_new(RFX__KERN_LINEAR, out, "kern_linear");
}

rfx_status rfx_kern_delta(rfx_kern **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "kern_delta: out is NULL");
    return kern_new(RFX__KERN_DELTA, out, "kern_delta");
}

rfx_status rfx_kern_arccos(unsigned order, double sigma, double bias, rfx_kern **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "kern_arccos: out is NULL");
    if (order > 2) return rfx__error(RFX_EINVAL, "kern_arccos: order must be 0, 1 or 2, got %u", order);
    if (!finite_pos(sigma))
        return rfx__error(RFX_EINVAL, "kern_arccos: sigma must be > 0 and finite, got %g", sigma);
    if (!(bias >= 0 && isfinite(bias)))
        return rfx__error(RFX_EINVAL, "kern_arccos: bias must be >= 0 and finite, got %g", bias);
    rfx_kern *k;
    RFX__TRY(kern_new(RFX__KERN_ARCCOS, &k, "kern_arccos"));
    k->degree = order;
    k->gamma = sigma * sigma;
    k->coef0 = bias * bias;
    *out = k;
    return RFX_OK;
}

rfx_status rfx_kern_bilinear(const double *A, size_t d, rfx_kern **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "kern_bilinear: out is NULL");
    if (!A || d == 0) return rfx__error(RFX_EINVAL, "kern_bilinear: A is NULL or d is 0");
    size_t dd;
    RFX__TRY(rfx__mul(d, d, &dd, "kern_bilinear: d x d"));
    double amax = 0;
    for (size_t i = 0; i < dd; i++) {
        if (!isfinite(A[i]))
            return rfx__error(RFX_EINVAL, "kern_bilinear: A(%zu, %zu) = %g is not finite", i / d,
                              i % d, A[i]);
        amax = fmax(amax, fabs(A[i]));
    }
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < i; j++)
            if (fabs(A[i * d + j] - A[j * d + i]) > 1e-12 * amax)
                return rfx__error(RFX_EINVAL, "kern_bilinear: A is not symmetric: A(%zu, %zu) = %g, "
                                  "A(%zu, %zu) = %g", i, j, A[i * d + j], j, i, A[j * d + i]);
    double *E = NULL, *w = NULL;
    rfx_status st = rfx__alloc(dd, sizeof *E, (void **)&E, "kern_bilinear: workspace");
    if (!st) st = rfx__alloc(d, sizeof *w, (void **)&w, "kern_bilinear: workspace");
    if (!st) {
        memcpy(E, A, dd * sizeof *E);
        st = rfx__eig_sym(E, d, w, 1, "kern_bilinear");
    }
    if (!st && w[0] < -1e-12 * fmax(fabs(w[d - 1]), amax))
        st = rfx__error(RFX_EINVAL, "kern_bilinear: A is not positive semi-definite: its least "
                        "eigenvalue is %g (largest %g)", w[0], w[d - 1]);
    free(w);
    rfx_kern *k = NULL;
    if (!st) st = kern_new(RFX__KERN_BILINEAR, &k, "kern_bilinear");
    if (!st) {
        memcpy(E, A, dd * sizeof *E); /* the workspace becomes the kernel's copy */
        k->A = E;
        k->d = d;
        *out = k;
        return RFX_OK;
    }
    free(E);
    return st;
}

/* J_n(theta) of the arc-cosine kernel (Cho & Saul 2009, eq. 6). */
static double arccos_j(unsigned n, double c)
{
    double t = acos(c), s = sqrt(fmax(0.0, 1.0 - c * c));
    switch (n) {
    case 0: return KERN_PI - t;
    case 1: return s + (KERN_PI - t) * c;
    default: return 3.0 * s * c + (KERN_PI - t) * (1.0 + 2.0 * c * c);
    }
}

rfx_status rfx_kern_features(const rfx_features *f, rfx_kern **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "kern_features: out is NULL");
    if (!f) return rfx__error(RFX_EINVAL, "kern_features: features is NULL");
    rfx_kern *k;
    RFX__TRY(kern_new(RFX__KERN_FEATURES, &k, "kern_features"));
    rfx_status st = rfx__features_copy(f, &k->f);
    if (st) {
        free(k);
        rfx__error_prefix("kern_features");
        return st;
    }
    k->d = f->d;
    *out = k;
    return RFX_OK;
}

static rfx_status kern_binary(rfx__kern_kind kind, const rfx_kern *a, const rfx_kern *b,
                              const char *what, rfx_kern **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "%s: out is NULL", what);
    if (!a || !b) return rfx__error(RFX_EINVAL, "%s: operand %s is NULL", what, a ? "b" : "a");
    if (a->d && b->d && a->d != b->d)
        return rfx__error(RFX_EDIM,
                          "%s: the operands are tied to different input dimensions (%zu and %zu)",
                          what, a->d, b->d);
    rfx_kern *k;
    RFX__TRY(kern_new(kind, &k, what));
    k->d = a->d ? a->d : b->d;
    k->a = kern_ref(a);
    k->b = kern_ref(b);
    *out = k;
    return RFX_OK;
}

rfx_status rfx_kern_sum(const rfx_kern *a, const rfx_kern *b, rfx_kern **out)
{
    return kern_binary(RFX__KERN_SUM, a, b, "kern_sum", out);
}

rfx_status rfx_kern_product(const rfx_kern *a, const rfx_kern *b, rfx_kern **out)
{
    return kern_binary(RFX__KERN_PRODUCT, a, b, "kern_product", out);
}

static rfx_status kern_unary(rfx__kern_kind kind, const rfx_kern *a, const char *what,
                             rfx_kern **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "%s: out is NULL", what);
    if (!a) return rfx__error(RFX_EINVAL, "%s: operand is NULL", what);
    rfx_kern *k;
    RFX__TRY(kern_new(kind, &k, what));
    k->d = a->d;
    k->a = kern_ref(a);
    *out = k;
    return RFX_OK;
}

rfx_status rfx_kern_scale(double c, const rfx_kern *a, rfx_kern **out)
{
    if (!(c >= 0 && isfinite(c)))
        return rfx__error(RFX_EINVAL, "kern_scale: c must be >= 0 and finite, got %g", c);
    RFX__TRY(kern_unary(RFX__KERN_SCALE, a, "kern_scale", out));
    (*out)->c = c;
    return RFX_OK;
}

rfx_status rfx_kern_exp(const rfx_kern *a, rfx_kern **out)
{
    return kern_unary(RFX__KERN_EXP, a, "kern_exp", out);
}

rfx_status rfx_kern_warp(const rfx_kern *a, rfx_kern_weight_fn f, void *user, rfx_kern **out)
{
    if (!f) return rfx__error(RFX_EINVAL, "kern_warp: f is NULL");
    RFX__TRY(kern_unary(RFX__KERN_WARP, a, "kern_warp", out));
    (*out)->w = f;
    (*out)->user = user;
    return RFX_OK;
}

size_t rfx_kern_input_dim(const rfx_kern *k) { return k ? k->d : 0; }

rfx_status rfx__kern_check_threads(int n_threads, const char *what)
{
    if (n_threads < 0)
        return rfx__error(RFX_EINVAL, "%s: n_threads must be >= 0 (0 = default), got %d", what,
                          n_threads);
    return RFX_OK;
}

/* ---- values of the leaves ---------------------------------------------------- */

double rfx__kern_of_r2(const rfx_kern *k, double r2)
{
    switch (k->kind) {
    case RFX__KERN_GAUSSIAN: return exp(-0.5 * r2);
    case RFX__KERN_RBF: return exp(-k->gamma * r2);
    case RFX__KERN_MATERN: return rfx__matern(k->nu, sqrt(r2));
    default: return NAN;
    }
}

/* (gamma x.y + coef0)^degree and tanh(gamma x.y + coef0) in scikit-learn's
 * order of operations (K *= gamma; K += coef0; K **= degree). */
double rfx__kern_of_dot(const rfx_kern *k, double dot)
{
    switch (k->kind) {
    case RFX__KERN_LINEAR: return dot;
    case RFX__KERN_POLYNOMIAL: return pow(dot * k->gamma + k->coef0, (double)k->degree);
    case RFX__KERN_SIGMOID: return tanh(dot * k->gamma + k->coef0);
    default: return NAN;
    }
}

/* The order of operations of rfx_features_exact_kernel: t = (x - y) / l. */
double rfx__kern_elementwise(const rfx_kern *k, const double *x, const double *y, size_t d)
{
    switch (k->kind) {
    case RFX__KERN_LAPLACE_SHIFT: {
        double r1 = 0;
        for (size_t i = 0; i < d; i++) r1 += fabs((x[i] - y[i]) / (k->ls ? k->ls[i] : k->l));
        return exp(-r1);
    }
    case RFX__KERN_LAPLACE_GAMMA: {
        double r1 = 0;
        for (size_t i = 0; i < d; i++) r1 += fabs(x[i] - y[i]);
        return exp(-k->gamma * r1);
    }
    case RFX__KERN_CAUCHY: {
        double v = 1;
        for (size_t i = 0; i < d; i++) {
            double t = (x[i] - y[i]) / (k->ls ? k->ls[i] : k->l);
            v /= 1.0 + t * t;
        }
        return v;
    }
    case RFX__KERN_DELTA:
        for (size_t i = 0; i < d; i++)
            if (x[i] != y[i]) return 0.0;
        return 1.0;
    case RFX__KERN_ARCCOS: {
        /* x' = (sigma x, bias): its norms and inner product */
        double xx = 0, yy = 0, xy = 0;
        for (size_t i = 0; i < d; i++) {
            xx += x[i] * x[i];
            yy += y[i] * y[i];
            xy += x[i] * y[i];
        }
        double nx = sqrt(k->gamma * xx + k->coef0), ny = sqrt(k->gamma * yy + k->coef0);
        if (nx == 0 || ny == 0) return k->degree == 0 ? 0.5 : 0.0; /* theta = pi / 2 */
        double c = (k->gamma * xy + k->coef0) / (nx * ny);
        c = c > 1 ? 1 : c < -1 ? -1 : c;
        double scale = k->degree == 0 ? 1.0 : k->degree == 1 ? nx * ny : nx * nx * ny * ny;
        return scale * arccos_j(k->degree, c) / KERN_PI;
    }
    case RFX__KERN_BILINEAR: {
        double s = 0;
        for (size_t i = 0; i < d; i++) {
            double t = 0;
            for (size_t j = 0; j < d; j++) t += k->A[i * d + j] * y[j];
            s += x[i] * t;
        }
        return s;
    }
    default: return NAN;
    }
}

/* ---- point evaluation ---------------------------------------------------------- */

static double eval_features(const rfx_features *f, const double *x, const double *y, size_t d)
{
    size_t D = f->D;
    double *z;
    if (rfx__alloc(2 * D, sizeof(double), (void **)&z, "kern_eval")) {
        rfx_clear_error();
        return NAN;
    }
    rfx__transform_tile(f, x, d, 1, z, D);
    rfx__transform_tile(f, y, d, 1, z + D, D);
    double s = 0;
    for (size_t j = 0; j < D; j++) s += z[j] * z[D + j];
    free(z);
    return s;
}

static double eval_node(const rfx_kern *k, const double *x, const double *y, size_t d)
{
    switch (k->kind) {
    case RFX__KERN_GAUSSIAN:
    case RFX__KERN_MATERN:
    case RFX__KERN_RBF: return rfx__kern_of_r2(k, rfx__kern_r2(k, x, y, d));
    case RFX__KERN_LINEAR:
    case RFX__KERN_POLYNOMIAL:
    case RFX__KERN_SIGMOID: {
        double s = 0;
        for (size_t i = 0; i < d; i++) s += x[i] * y[i];
        return rfx__kern_of_dot(k, s);
    }
    case RFX__KERN_LAPLACE_SHIFT:
    case RFX__KERN_LAPLACE_GAMMA:
    case RFX__KERN_CAUCHY:
    case RFX__KERN_DELTA:
    case RFX__KERN_ARCCOS:
    case RFX__KERN_BILINEAR: return rfx__kern_elementwise(k, x, y, d);
    case RFX__KERN_FEATURES: return eval_features(k->f, x, y, d);
    case RFX__KERN_SUM: return eval_node(k->a, x, y, d) + eval_node(k->b, x, y, d);
    case RFX__KERN_PRODUCT: return eval_node(k->a, x, y, d) * eval_node(k->b, x, y, d);
    case RFX__KERN_SCALE: return k->c * eval_node(k->a, x, y, d);
    case RFX__KERN_EXP: return exp(eval_node(k->a, x, y, d));
    case RFX__KERN_WARP: {
        double fx = k->w(k->user, x, d), fy = k->w(k->user, y, d);
        return fx * eval_node(k->a, x, y, d) * fy;
    }
    }
    return NAN;
}

double rfx_kern_eval(const rfx_kern *k, const double *x, const double *y, size_t d)
{
    if (!k || !x || !y || d == 0 || (k->d && k->d != d)) return NAN;
    return eval_node(k, x, y, d);
}

/* ---- the modified Bessel function K_nu and the Matern correlation ------------ */

/* Taylor coefficients of 1 / Gamma(1 + z) about 0 (Abramowitz & Stegun
 * 6.1.34, shifted by one), enough for |z| <= 1/2 to double precision. */
static const double rgam_coef[] = {
    1.0,
    0.57721566490153286061,
    -0.65587807152025388108,
    -0.042002635034095235529,
    0.1665386113822914895,
    -0.042197734555544336748,
    -0.0096219715278769735621,
    0.0072189432466630995424,
    -0.0011651675918590651121,
    -0.00021524167411495097282,
    0.00012805028238811618615,
    -0.000020134854780788238656,
    -1.2504934821426706573e-6,
    1.1330272319816958824e-6,
    -2.0563384169776071035e-7,
    6.1160951044814158179e-9,
    5.0020076444692229301e-9,
    -1.1812745704870201446e-9,
    1.0434267116911005105e-10,
    7.782263439905071254e-12,
    -3.6968056186422057082e-12,
    5.100370287454475979e-13,
    -2.0583260535665067832e-14,
    -5.3481225394230179824e-15,
    1.2267786282382607902e-15,
    -1.1812593016974587695e-16,
};
#define RGAM_N (sizeof rgam_coef / sizeof rgam_coef[0])

/* For |mu| <= 1/2: g1 = (1/Gamma(1-mu) - 1/Gamma(1+mu)) / (2 mu) (its limit
 * -gamma_Euler at 0) and g2 = (1/Gamma(1-mu) + 1/Gamma(1+mu)) / 2, from the
 * odd and even parts of the series (no cancellation near mu = 0). */
static void temme_gammas(double mu, double *g1, double *g2)
{
    double m2 = mu * mu, odd = 0, even = 0;
    for (size_t i = RGAM_N; i-- > 0;) {
        if (i & 1)
            odd = odd * m2 + rgam_coef[i];
        else
            even = even * m2 + rgam_coef[i];
    }
    *g1 = -odd;
    *g2 = even;
}

#define BESSEL_MAX_ITER 100000

/* log K_mu(x) and the ratio K_{mu+1}(x) / K_mu(x) for |mu| <= 1/2, x > 0.
 * x < 2: Temme's series (N. M. Temme, "On the numerical evaluation of the
 * modified Bessel function of the third kind", J. Comput. Phys. 19, 1975):
 * with c_k = (x^2/4)^k / k!, K_mu = sum c_k f_k and
 * K_{mu+1} = (2/x) sum c_k (p_k - k f_k), where
 *   f_0 = (pi mu / sin(pi mu)) [g1 cosh(s) + g2 log(2/x) sinh(s)/s],
 *   s = mu log(2/x), p_0 = (x/2)^-mu Gamma(1+mu) / 2,
 *   q_0 = (x/2)^mu Gamma(1-mu) / 2,
 *   f_k = (k f_{k-1} + p_{k-1} + q_{k-1}) / (k^2 - mu^2),
 *   p_k = p_{k-1} / (k - mu), q_k = q_{k-1} / (k + mu).
 * x >= 2: Steed's algorithm for the continued fraction CF2 of Temme's
 * paper, K_mu = sqrt(pi / (2x)) e^-x / S with S the sum of the series its
 * convergents give, and K_{mu+1} / K_mu = (mu + x + 1/2 - h) / x. */
static void bessel_k_mu(double mu, double x, double *log_k, double *ratio)
{
    const double eps = DBL_EPSILON;
    if (x < 2) {
        double x2 = 0.5 * x, pimu = M_PI * mu;
        double fact = pimu == 0 ? 1.0 : pimu / sin(pimu);
        double dl = -log(x2), s = mu * dl;
        double fact2 = s == 0 ? 1.0 : sinh(s) / s;
        double g1, g2;
        temme_gammas(mu, &g1, &g2);
        double gpl = g2 - mu * g1; /* 1 / Gamma(1 + mu) */
        double gmi = g2 + mu * g1; /* 1 / Gamma(1 - mu) */
        double ff = fact * (g1 * cosh(s) + g2 * fact2 * dl);
        double es = exp(s);
        double p = 0.5 * es / gpl, q = 0.5 / (es * gmi);
        double c = 1, d2 = x2 * x2, sum = ff, sum1 = p;
        for (int i = 1; i < BESSEL_MAX_ITER; i++) {
            double di = (double)i;
            ff = (di * ff + p + q) / (di * di - mu * mu);
            c *= d2 / di;
            p /= di - mu;
            q /= di + mu;
            double del = c * ff;
            sum += del;
            sum1 += c * (p - di * ff);
            if (fabs(del) < fabs(sum) * eps) break;
        }
        *log_k = log(sum);
        *ratio = sum1 / sum * (2.0 / x);
    } else {
        double b = 2.0 * (1.0 + x), dd = 1.0 / b, h = dd, delh = dd;
        double q1 = 0, q2 = 1, a1 = 0.25 - mu * mu, q = a1, c = a1, a = -a1;
        double s = 1.0 + q * delh;
        for (int i = 2; i < BESSEL_MAX_ITER; i++) {
            double di = (double)i;
            a -= 2.0 * (di - 1.0);
            c = -a * c / di;
            double qn = (q1 - b * q2) / a;
            q1 = q2;
            q2 = qn;
            q += c * qn;
            b += 2.0;
            dd = 1.0 / (b + a * dd);
            delh = (b * dd - 1.0) * delh;
            h += delh;
            double dels = q * delh;
            s += dels;
            if (fabs(dels) < fabs(s) * eps) break;
        }
        h *= a1;
        *log_k = 0.5 * log(M_PI / (2.0 * x)) - x - log(s);
        *ratio = (mu + x + 0.5 - h) / x;
    }
}

/* log K_nu(x): nu = mu + n with |mu| <= 1/2, then the recurrence
 * K_{m+1} = K_{m-1} + (2m / x) K_m upward, stable in that direction, as a
 * product of ratios rho_m = K_{m+1} / K_m = 1 / rho_{m-1} + 2m / x
 * (rescaled so that it cannot overflow). */
double rfx__bessel_k_log(double nu, double x)
{
    double n = floor(nu + 0.5), mu = nu - n;
    double lk, rho;
    bessel_k_mu(mu, x, &lk, &rho);
    double prod = 1.0;
    for (double m = 1; m <= n; m++) {
        prod *= rho;
        if (prod > 1e200) {
            lk += log(prod);
            prod = 1.0;
        }
        rho = 1.0 / rho + 2.0 * (mu + m) / x;
    }
    return lk + log(prod);
}

/* log of the Matern correlation at x = sqrt(2 nu) r > 0:
 * (1 - nu) log 2 - log Gamma(nu) + nu log x + log K_nu(x). With
 * nu = mu + n and K_nu = K_mu prod_{i<n} rho_i, each ratio is normalised
 * by its small-x size, rho^_i = rho_i x / (2 (mu + i + 1)), whose product
 * over i is (x / 2)^n Gamma(mu + 1) / Gamma(nu + 1) times K_nu / K_mu, so
 *   log k = (1 - mu) log 2 + log nu + mu log x + log K_mu
 *           - log Gamma(1 + mu) + sum log rho^_i:
 * the large terms n log x and log Gamma(nu) that would cancel near x = 0
 * never appear (rounding then stays at eps |log x|, not eps nu |log x|). */
static double matern_log(double nu, double x)
{
    double n = floor(nu + 0.5), mu = nu - n;
    double lk, rho;
    bessel_k_mu(mu, x, &lk, &rho);
    double acc = (1.0 - mu) * M_LN2 + log(nu) + mu * log(x) + lk - lgamma(1.0 + mu);
    double prod = 1.0;
    for (double m = 1; m <= n; m++) {
        prod *= rho * x / (2.0 * (mu + m));
        if (prod > 1e200 || prod < 1e-200) {
            acc += log(prod);
            prod = 1.0;
        }
        rho = 1.0 / rho + 2.0 * (mu + m) / x;
    }
    return acc + log(prod);
}

double rfx__matern(double nu, double r)
{
    if (r == 0) return 1.0;
    if (nu == 0.5) return exp(-r);
    if (nu == 1.5) {
        double a = sqrt(3.0) * r;
        return (1.0 + a) * exp(-a);
    }
    if (nu == 2.5) {
        double a = sqrt(5.0) * r;
        return (1.0 + a + a * a / 3.0) * exp(-a);
    }
    double x = sqrt(2.0 * nu) * r;
    if (!(x < INFINITY)) return x == INFINITY ? 0.0 : NAN;
    /* For nu >= 1/2 and x < 1e-150, 1 - k is below 1e-150 (it behaves like
     * x^(2 min(nu, 1)) up to logarithms): the recurrence's 2m / x would be
     * needlessly large. */
    if (nu >= 0.5 && x < 1e-150) return 1.0;
    /* k <= 1: near r = 0 the rounding of the logarithms (about eps |log x|)
     * could otherwise lift it above */
    double k = exp(matern_log(nu, x));
    return k < 1.0 ? k : 1.0;
}
