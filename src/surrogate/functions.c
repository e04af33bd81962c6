/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark functions of surrogate modelling and sensitivity analysis, with
 * their input distributions and exact moments and Sobol indices. The
 * formulas and their sources are in include/rfx/surrogate.h, above
 * rfx_testfn_kind; the derivations that are not textbook are beside the
 * code that uses them.
 */
#include "internal.h"
#include "rfx/surrogate.h"

#include <math.h>
#include <string.h>

#define RFX__PI 3.14159265358979323846264338327950288

struct rfx_testfn {
    rfx_testfn_kind kind;
    size_t d;
    double *coeffs;   /* GFUNCTION: d a_i; ISHIGAMI: (a, b); else NULL */
    size_t n_coeffs;
    rfx_marginal *marginals; /* d */
};

typedef struct testfn_info {
    const char *name;
    const char *description;
    size_t d_default, d_min, d_max;
} testfn_info;

static const testfn_info INFO[] = {
    { "gfunction",
      "Sobol' G-function prod_i (|4 x_i - 2| + a_i)/(1 + a_i) on U[0,1]^d; "
      "a = (1, 2, 5, 10, 20, 100, 5000, ...)",
      20, 1, SIZE_MAX },
    { "ishigami",
      "Ishigami sin x0 + 7 sin^2 x1 + 0.1 x2^4 sin x0 on U[-pi,pi]^3",
      3, 3, 3 },
    { "friedman1",
      "Friedman #1 10 sin(pi x0 x1) + 20 (x2 - 0.5)^2 + 10 x3 + 5 x4 on U[0,1]^d, d >= 5",
      10, 5, SIZE_MAX },
    { "borehole",
      "borehole water flow (rw, r, Tu, Hu, Tl, Hl, L, Kw), normal/lognormal/uniform inputs; "
      "no analytic indices",
      8, 8, 8 },
    { "srfe",
      "(1/d) sum_i exp(-x_i^2)/(1 + x_{i+1}^2) on U[-1,1]^d, d >= 2 (after Hashemi et al. 2021)",
      10, 2, SIZE_MAX },
    { "otl",
      "OTL push-pull circuit mid-point voltage (Rb1, Rb2, Rf, Rc1, Rc2, beta), uniform inputs; "
      "no analytic indices",
      6, 6, 6 },
    { "wingweight",
      "light aircraft wing weight (Sw, Wfw, A, Lambda in degrees, q, lambda, tc, Nz, Wdg, Wp), "
      "uniform inputs; no analytic indices",
      10, 10, 10 },
};

#define N_KINDS (sizeof INFO / sizeof INFO[0])

static int kind_valid(rfx_testfn_kind kind)
{
    return (unsigned)kind < N_KINDS;
}

const char *rfx_testfn_name(rfx_testfn_kind kind)
{
    return kind_valid(kind) ? INFO[kind].name : NULL;
}

const char *rfx_testfn_description(rfx_testfn_kind kind)
{
    return kind_valid(kind) ? INFO[kind].description : NULL;
}

rfx_status rfx_testfn_from_name(const char *name, rfx_testfn_kind *out)
{
    if (!out) return rfx__error(RFX_EINVAL, "rfx_testfn_from_name: out is NULL");
    if (!name) return rfx__error(RFX_EINVAL, "rfx_testfn_from_name: name is NULL");
    for (size_t k = 0; k < N_KINDS; ++k)
        if (strcmp(name, INFO[k].name) == 0) {
            *out = (rfx_testfn_kind)k;
            return RFX_OK;
        }
    static const struct {
        const char *name;
        rfx_testfn_kind kind;
    } ALIASES[] = {
        { "g-function", RFX_TESTFN_GFUNCTION },
        { "sobol-g", RFX_TESTFN_GFUNCTION },
        { "otl-circuit", RFX_TESTFN_OTL },
        { "wing-weight", RFX_TESTFN_WINGWEIGHT },
    };
    for (size_t k = 0; k < sizeof ALIASES / sizeof ALIASES[0]; ++k)
        if (strcmp(name, ALIASES[k].name) == 0) {
            *out = ALIASES[k].kind;
            return RFX_OK;
        }
    return rfx__error(RFX_EINVAL,
                      "unknown test function '%.64s' (gfunction, ishigami, friedman1, borehole, "
                      "srfe, otl or wingweight)", name);
}

rfx_testfn_params rfx_testfn_params_default(void)
{
    rfx_testfn_params p;
    p.d = 0;
    p.coeffs = NULL;
    p.n_coeffs = 0;
    return p;
}

/* The G-function coefficients of the talk's experiment (Herold, appliedAI
 * seminar 2022): a few important inputs, then 5000 (nearly inert). */
static double gfunction_default_coeff(size_t i)
{
    static const double head[6] = { 1, 2, 5, 10, 20, 100 };
    return i < 6 ? head[i] : 5000.0;
}

static rfx_status testfn_check_params(rfx_testfn_kind kind, const rfx_testfn_params *p,
                                      size_t *d_out)
{
    const testfn_info *in = &INFO[kind];
    size_t d = p->d ? p->d : in->d_default;
    if (d < in->d_min || d > in->d_max) {
        if (in->d_min == in->d_max)
            return rfx__error(RFX_EINVAL, "params.d: %s has %zu inputs, got %zu", in->name,
                              in->d_min, d);
        return rfx__error(RFX_EINVAL, "params.d: %s needs d >= %zu, got %zu", in->name,
                          in->d_min, d);
    }
    if (!p->coeffs && p->n_coeffs != 0)
        return rfx__error(RFX_EINVAL, "params.coeffs is NULL but params.n_coeffs is %zu",
                          p->n_coeffs);
    if (p->coeffs) {
        switch (kind) {
        case RFX_TESTFN_GFUNCTION:
            if (p->n_coeffs != d)
                return rfx__error(RFX_EINVAL,
                                  "params.n_coeffs: gfunction takes d = %zu coefficients a_i, "
                                  "got %zu", d, p->n_coeffs);
            for (size_t i = 0; i < d; ++i)
                if (!(p->coeffs[i] >= 0) || !isfinite(p->coeffs[i]))
                    return rfx__error(RFX_EINVAL,
                                      "params.coeffs[%zu]: gfunction needs finite a_i >= 0, "
                                      "got %g", i, p->coeffs[i]);
            break;
        case RFX_TESTFN_ISHIGAMI:
            if (p->n_coeffs != 2)
                return rfx__error(RFX_EINVAL,
                                  "params.n_coeffs: ishigami takes 2 coefficients (a, b), got %zu",
                                  p->n_coeffs);
            for (size_t i = 0; i < 2; ++i)
                if (!isfinite(p->coeffs[i]))
                    return rfx__error(RFX_EINVAL, "params.coeffs[%zu]: ishigami's %s is %g",
                                      i, i ? "b" : "a", p->coeffs[i]);
            break;
        default:
            return rfx__error(RFX_EINVAL, "params.coeffs: %s takes no coefficients", in->name);
        }
    }
    *d_out = d;
    return RFX_OK;
}

rfx_status rfx_testfn_create(rfx_testfn_kind kind, const rfx_testfn_params *params,
                             rfx_testfn **out)
{
    rfx_testfn_params defaults = rfx_testfn_params_default();
    const rfx_testfn_params *p = params ? params : &defaults;
    rfx_testfn *f = NULL;
    size_t d = 0;
    rfx_status st;

    if (!out) return rfx__error(RFX_EINVAL, "rfx_testfn_create: out is NULL");
    if (!kind_valid(kind))
        return rfx__error(RFX_EINVAL, "rfx_testfn_create: unknown kind %d", (int)kind);
    RFX__TRY(testfn_check_params(kind, p, &d));

    st = rfx__calloc(1, sizeof *f, (void **)&f, "test function");
    if (st != RFX_OK) return st;
    f->kind = kind;
    f->d = d;
    st = rfx__alloc(d, sizeof *f->marginals, (void **)&f->marginals, "test function marginals");
    if (st == RFX_OK && (kind == RFX_TESTFN_GFUNCTION || kind == RFX_TESTFN_ISHIGAMI)) {
        f->n_coeffs = kind == RFX_TESTFN_GFUNCTION ? d : 2;
        st = rfx__alloc(f->n_coeffs, sizeof *f->coeffs, (void **)&f->coeffs,
                        "test function coefficients");
    }
    if (st != RFX_OK) {
        rfx_testfn_free(f);
        return st;
    }

    switch (kind) {
    case RFX_TESTFN_GFUNCTION:
        for (size_t i = 0; i < d; ++i) {
            f->coeffs[i] = p->coeffs ? p->coeffs[i] : gfunction_default_coeff(i);
            f->marginals[i] = rfx_marginal_uniform(0.0, 1.0);
        }
        break;
    case RFX_TESTFN_ISHIGAMI:
        f->coeffs[0] = p->coeffs ? p->coeffs[0] : 7.0;
        f->coeffs[1] = p->coeffs ? p->coeffs[1] : 0.1;
        for (size_t i = 0; i < 3; ++i) f->marginals[i] = rfx_marginal_uniform(-RFX__PI, RFX__PI);
        break;
    case RFX_TESTFN_FRIEDMAN1:
        for (size_t i = 0; i < d; ++i) f->marginals[i] = rfx_marginal_uniform(0.0, 1.0);
        break;
    case RFX_TESTFN_BOREHOLE:
        /* Morris, Mitchell & Ylvisaker, Technometrics 35(3), 1993 */
        f->marginals[0] = rfx_marginal_normal(0.10, 0.0161812);   /* rw, m       */
        f->marginals[1] = rfx_marginal_lognormal(7.71, 1.0056);   /* r, m        */
        f->marginals[2] = rfx_marginal_uniform(63070.0, 115600.0); /* Tu, m^2/yr */
        f->marginals[3] = rfx_marginal_uniform(990.0, 1110.0);    /* Hu, m       */
        f->marginals[4] = rfx_marginal_uniform(63.1, 116.0);      /* Tl, m^2/yr  */
        f->marginals[5] = rfx_marginal_uniform(700.0, 820.0);     /* Hl, m       */
        f->marginals[6] = rfx_marginal_uniform(1120.0, 1680.0);   /* L, m        */
        f->marginals[7] = rfx_marginal_uniform(9855.0, 12045.0);  /* Kw, m/yr    */
        break;
    case RFX_TESTFN_SRFE:
        for (size_t i = 0; i < d; ++i) f->marginals[i] = rfx_marginal_uniform(-1.0, 1.0);
        break;
    case RFX_TESTFN_OTL:
        /* Ben-Ari & Steinberg, Quality Engineering 19(4), 2007 */
        f->marginals[0] = rfx_marginal_uniform(50.0, 150.0); /* Rb1, kOhm */
        f->marginals[1] = rfx_marginal_uniform(25.0, 70.0);  /* Rb2, kOhm */
        f->marginals[2] = rfx_marginal_uniform(0.5, 3.0);    /* Rf, kOhm  */
        f->marginals[3] = rfx_marginal_uniform(1.2, 2.5);    /* Rc1, kOhm */
        f->marginals[4] = rfx_marginal_uniform(0.25, 1.2);   /* Rc2, kOhm */
        f->marginals[5] = rfx_marginal_uniform(50.0, 300.0); /* beta      */
        break;
    case RFX_TESTFN_WINGWEIGHT:
        /* Forrester, Sobester & Keane, "Engineering Design via Surrogate
         * Modelling", Wiley 2008 */
        f->marginals[0] = rfx_marginal_uniform(150.0, 200.0);   /* Sw, ft^2         */
        f->marginals[1] = rfx_marginal_uniform(220.0, 300.0);   /* Wfw, lb          */
        f->marginals[2] = rfx_marginal_uniform(6.0, 10.0);      /* A                */
        f->marginals[3] = rfx_marginal_uniform(-10.0, 10.0);    /* Lambda, degrees  */
        f->marginals[4] = rfx_marginal_uniform(16.0, 45.0);     /* q, lb/ft^2       */
        f->marginals[5] = rfx_marginal_uniform(0.5, 1.0);       /* lambda (taper)   */
        f->marginals[6] = rfx_marginal_uniform(0.08, 0.18);     /* tc               */
        f->marginals[7] = rfx_marginal_uniform(2.5, 6.0);       /* Nz               */
        f->marginals[8] = rfx_marginal_uniform(1700.0, 2500.0); /* Wdg, lb          */
        f->marginals[9] = rfx_marginal_uniform(0.025, 0.08);    /* Wp, lb/ft^2      */
        break;
    }
    *out = f;
    return RFX_OK;
}

void rfx_testfn_free(rfx_testfn *f)
{
    if (!f) return;
    free(f->coeffs);
    free(f->marginals);
    free(f);
}

rfx_testfn_kind rfx_testfn_get_kind(const rfx_testfn *f) { return f->kind; }

size_t rfx_testfn_dim(const rfx_testfn *f) { return f ? f->d : 0; }

const double *rfx_testfn_coeffs(const rfx_testfn *f, size_t *n)
{
    if (n) *n = f ? f->n_coeffs : 0;
    return f ? f->coeffs : NULL;
}

const rfx_marginal *rfx_testfn_marginals(const rfx_testfn *f) { return f ? f->marginals : NULL; }

/* ------------------------------------------------------------------------ */
/* Evaluation                                                                */
/* ------------------------------------------------------------------------ */

static double eval_gfunction(const double *a, const double *x, size_t d)
{
    double g = 1.0;
    for (size_t i = 0; i < d; ++i) g *= (fabs(4.0 * x[i] - 2.0) + a[i]) / (1.0 + a[i]);
    return g;
}

static double eval_ishigami(const double *c, const double *x)
{
    double s0 = sin(x[0]), s1 = sin(x[1]), x2 = x[2] * x[2];
    return s0 + c[0] * s1 * s1 + c[1] * x2 * x2 * s0;
}

static double eval_friedman1(const double *x)
{
    double t = x[2] - 0.5;
    return 10.0 * sin(RFX__PI * x[0] * x[1]) + 20.0 * t * t + 10.0 * x[3] + 5.0 * x[4];
}

static double eval_borehole(const double *x)
{
    double rw = x[0], r = x[1], Tu = x[2], Hu = x[3], Tl = x[4], Hl = x[5], L = x[6],
           Kw = x[7];
    double lr = log(r / rw);
    return 2.0 * RFX__PI * Tu * (Hu - Hl) /
           (lr * (1.0 + 2.0 * L * Tu / (lr * rw * rw * Kw) + Tu / Tl));
}

/* x = (Rb1, Rb2, Rf, Rc1, Rc2, beta); the formula is in rfx/surrogate.h */
static double eval_otl(const double *x)
{
    double Rb1 = x[0], Rb2 = x[1], Rf = x[2], Rc1 = x[3], Rc2 = x[4], beta = x[5];
    double Vb1 = 12.0 * Rb2 / (Rb1 + Rb2);
    double B = beta * (Rc2 + 9.0), den = B + Rf;
    return (Vb1 + 0.74) * B / den + 11.35 * Rf / den + 0.74 * Rf * B / (den * Rc1);
}

/* x = (Sw, Wfw, A, Lambda, q, lambda, tc, Nz, Wdg, Wp), Lambda in degrees */
static double eval_wingweight(const double *x)
{
    double Sw = x[0], Wfw = x[1], A = x[2], q = x[4], taper = x[5], tc = x[6], Nz = x[7],
           Wdg = x[8], Wp = x[9];
    double c = cos(x[3] * (RFX__PI / 180.0));
    return 0.036 * pow(Sw, 0.758) * pow(Wfw, 0.0035) * pow(A / (c * c), 0.6) * pow(q, 0.006) *
               pow(taper, 0.04) * pow(100.0 * tc / c, -0.3) * pow(Nz * Wdg, 0.49) +
           Sw * Wp;
}

/* The wing weight's powers are real: Sw, Wfw, A, q, lambda, tc, Nz Wdg > 0
 * and cos Lambda > 0. */
static int wingweight_in_domain(const double *x)
{
    return x[0] > 0 && x[1] > 0 && x[2] > 0 && x[4] > 0 && x[5] > 0 && x[6] > 0 &&
           x[7] * x[8] > 0 && cos(x[3] * (RFX__PI / 180.0)) > 0;
}

static double eval_srfe(const double *x, size_t d)
{
    double s = 0.0;
    for (size_t i = 0; i + 1 < d; ++i) s += exp(-x[i] * x[i]) / (1.0 + x[i + 1] * x[i + 1]);
    return s / (double)d;
}

static double testfn_value(const rfx_testfn *f, const double *x)
{
    switch (f->kind) {
    case RFX_TESTFN_GFUNCTION: return eval_gfunction(f->coeffs, x, f->d);
    case RFX_TESTFN_ISHIGAMI: return eval_ishigami(f->coeffs, x);
    case RFX_TESTFN_FRIEDMAN1: return eval_friedman1(x);
    case RFX_TESTFN_BOREHOLE: return eval_borehole(x);
    case RFX_TESTFN_SRFE: return eval_srfe(x, f->d);
    case RFX_TESTFN_OTL: return eval_otl(x);
    case RFX_TESTFN_WINGWEIGHT: return eval_wingweight(x);
    }
    return NAN;
}

rfx_status rfx_testfn_eval(const rfx_testfn *f, rfx_cmat X, double *y)
{
    size_t row = 0, col = 0;
    if (!f) return rfx__error(RFX_EINVAL, "rfx_testfn_eval: f is NULL");
    RFX__TRY(rfx__check_cmat(X, "X"));
    if (X.cols != f->d)
        return rfx__error(RFX_EDIM, "X has %zu columns, %s has %zu inputs", X.cols,
                          INFO[f->kind].name, f->d);
    if (X.rows == 0) return RFX_OK;
    if (!y) return rfx__error(RFX_EINVAL, "rfx_testfn_eval: y is NULL");
    if (!rfx__all_finite(X, &row, &col))
        return rfx__error(RFX_EINVAL, "X row %zu, column %zu: %g is not finite", row, col,
                          X.data[row * X.stride + col]);
    /* the domain first, so that y is untouched on error */
    if (f->kind == RFX_TESTFN_BOREHOLE) {
        for (size_t i = 0; i < X.rows; ++i) {
            const double *x = X.data + i * X.stride;
            if (!(x[0] > 0) || !(x[1] > 0))
                return rfx__error(RFX_EINVAL,
                                  "X row %zu: borehole needs rw > 0 and r > 0, got rw = %g, "
                                  "r = %g", i, x[0], x[1]);
            if (!isfinite(eval_borehole(x)))
                return rfx__error(RFX_EINVAL,
                                  "X row %zu: borehole is not finite at these inputs "
                                  "(r = rw, Tl = 0 or Kw = 0?)", i);
        }
    } else if (f->kind == RFX_TESTFN_OTL) {
        for (size_t i = 0; i < X.rows; ++i)
            if (!isfinite(eval_otl(X.data + i * X.stride)))
                return rfx__error(RFX_EINVAL,
                                  "X row %zu: otl is not finite at these inputs "
                                  "(Rb1 + Rb2 = 0, Rc1 = 0 or beta (Rc2 + 9) + Rf = 0?)", i);
    } else if (f->kind == RFX_TESTFN_WINGWEIGHT) {
        for (size_t i = 0; i < X.rows; ++i) {
            const double *x = X.data + i * X.stride;
            if (!wingweight_in_domain(x))
                return rfx__error(RFX_EINVAL,
                                  "X row %zu: wingweight needs Sw, Wfw, A, q, lambda, tc and "
                                  "Nz Wdg > 0 and cos Lambda > 0 (Lambda in degrees)", i);
            if (!isfinite(eval_wingweight(x)))
                return rfx__error(RFX_EINVAL, "X row %zu: wingweight is not finite at these "
                                              "inputs", i);
        }
    }
    for (size_t i = 0; i < X.rows; ++i) y[i] = testfn_value(f, X.data + i * X.stride);
    return RFX_OK;
}

rfx_status rfx_testfn_sample(const rfx_testfn *f, uint64_t seed, rfx_mat X, double *y)
{
    if (!f) return rfx__error(RFX_EINVAL, "rfx_testfn_sample: f is NULL");
    RFX__TRY(rfx__check_mat(X, "X"));
    if (X.cols != f->d)
        return rfx__error(RFX_EDIM, "X has %zu columns, %s has %zu inputs", X.cols,
                          INFO[f->kind].name, f->d);
    if (X.rows > 0 && !y) return rfx__error(RFX_EINVAL, "rfx_testfn_sample: y is NULL");
    RFX__TRY(rfx_marginals_sample(f->marginals, f->d, seed, X));
    return rfx_testfn_eval(f, rfx_cmat_from(X), y);
}

rfx_status rfx_testfn_function(void *user, rfx_cmat X, double *y)
{
    return rfx_testfn_eval((const rfx_testfn *)user, X, y);
}

/* ------------------------------------------------------------------------ */
/* Exact moments and indices                                                 */
/* ------------------------------------------------------------------------ */

enum { GL_NODES = 48 };

/* Gauss-Legendre nodes and weights on [0, 1] (Newton's method on P_n from
 * the Chebyshev-like guesses cos(pi (k - 1/4) / (n + 1/2)); Davis &
 * Rabinowitz, "Methods of Numerical Integration", 2.7). n = 48 integrates
 * polynomials of degree 95 exactly, and the smooth (entire) integrands
 * below to rounding. */
static void gauss_legendre01(double *x, double *w, size_t n)
{
    for (size_t k = 0; k < (n + 1) / 2; ++k) {
        double z = cos(RFX__PI * ((double)k + 0.75) / ((double)n + 0.5)), dp = 1.0;
        for (int it = 0; it < 100; ++it) {
            double p0 = 1.0, p1 = z;
            for (size_t j = 2; j <= n; ++j) {
                double p2 = ((2.0 * (double)j - 1.0) * z * p1 - ((double)j - 1.0) * p0) /
                            (double)j;
                p0 = p1;
                p1 = p2;
            }
            dp = (double)n * (z * p1 - p0) / (z * z - 1.0);
            double dz = p1 / dp;
            z -= dz;
            if (fabs(dz) < 1e-16) break;
        }
        double wk = 2.0 / ((1.0 - z * z) * dp * dp);
        /* map [-1, 1] to [0, 1] */
        x[k] = 0.5 * (1.0 - z);
        x[n - 1 - k] = 0.5 * (1.0 + z);
        w[k] = w[n - 1 - k] = 0.5 * wk;
    }
}

/* The integral over [0, 1] of fn by n-point Gauss-Legendre. */
static double integrate01(double (*fn)(double), size_t n)
{
    double x[GL_NODES], w[GL_NODES], s = 0.0;
    gauss_legendre01(x, w, n);
    for (size_t k = 0; k < n; ++k) s += w[k] * fn(x[k]);
    return s;
}

/* (1 - cos(pi t)) / (pi t), by its Taylor series near 0 where the quotient
 * cancels. */
static double friedman_mean_sin(double t)
{
    double u = RFX__PI * t;
    if (fabs(u) < 1e-3) return u / 2.0 - u * u * u / 24.0;
    return (1.0 - cos(u)) / u;
}
static double friedman_mean_sin_sq(double t)
{
    double m = friedman_mean_sin(t);
    return m * m;
}
/* sin(2 pi t) / (2 pi t) = E_x[cos(2 pi x t)] for x ~ U[0, 1] */
static double friedman_sinc2pi(double t)
{
    double u = 2.0 * RFX__PI * t;
    if (fabs(u) < 1e-4) return 1.0 - u * u / 6.0;
    return sin(u) / u;
}

/* Friedman #1 in terms of h = 10 sin(pi x0 x1):
 *   E h         = 10 int_0^1 (1 - cos(pi t)) / (pi t) dt = 10 Cin(pi) / pi
 *   E h^2       = 100 (1/2 - (1/2) int_0^1 sin(2 pi t)/(2 pi t) dt)
 *               = 100 (1/2 - Si(2 pi) / (4 pi))
 *   V_0 = V_1   = 100 int_0^1 ((1 - cos(pi t)) / (pi t))^2 dt - (E h)^2
 *               = (100/pi) (2 Si(pi) - Si(2 pi) - 4/pi) - (E h)^2
 *   V_01        = Var h - 2 V_0
 * and the additive rest: 20 (x2 - 1/2)^2 has mean 5/3 and variance 20/9,
 * 10 x3 mean 5 and variance 25/3, 5 x4 mean 5/2 and variance 25/12. */
static void friedman_parts(double *Eh, double *Vh, double *V0)
{
    double m = 10.0 * integrate01(friedman_mean_sin, GL_NODES);
    double m2 = 100.0 * (0.5 - 0.5 * integrate01(friedman_sinc2pi, GL_NODES));
    *Eh = m;
    *Vh = m2 - m * m;
    *V0 = 100.0 * integrate01(friedman_mean_sin_sq, GL_NODES) - m * m;
}

static double srfe_pq(double t) { return exp(-t * t) / (1.0 + t * t); }

/* The SRFE example f = (1/d) sum_{i=0}^{d-2} p(x_i) q(x_{i+1}) with
 * p = exp(-x^2), q = 1/(1 + x^2), x ~ U[-1, 1] (both even, so the moments
 * are integrals over [0, 1]):
 *   P = E p = sqrt(pi)/2 erf(1),  E p^2 = sqrt(pi/8) erf(sqrt 2),
 *   Q = E q = pi/4,               E q^2 = 1/4 + pi/8,
 *   C = Cov(p(x), q(x)) = int_0^1 exp(-t^2)/(1 + t^2) dt - P Q.
 * Writing p = P + p~, q = Q + q~, term i is
 *   P Q + Q p~(x_i) + P q~(x_{i+1}) + p~(x_i) q~(x_{i+1}),
 * so the ANOVA components are: first order in x_k,
 *   (1/d) (Q p~(x_k) [k <= d-2] + P q~(x_k) [k >= 1]),
 * with variance V_k = (Q^2 vp [k <= d-2] + P^2 vq [k >= 1]
 *                      + 2 P Q C [1 <= k <= d-2]) / d^2,
 * and second order (1/d) p~(x_i) q~(x_{i+1}) per pair, variance
 * vp vq / d^2; all components are orthogonal. */
typedef struct srfe_moments {
    double P, Q, vp, vq, C;
} srfe_moments;

static srfe_moments srfe_parts(void)
{
    srfe_moments s;
    s.P = 0.5 * sqrt(RFX__PI) * erf(1.0);
    s.Q = 0.25 * RFX__PI;
    s.vp = sqrt(RFX__PI / 8.0) * erf(sqrt(2.0)) - s.P * s.P;
    s.vq = 0.25 + RFX__PI / 8.0 - s.Q * s.Q;
    s.C = integrate01(srfe_pq, GL_NODES) - s.P * s.Q;
    return s;
}

static double srfe_first_var(const srfe_moments *s, size_t k, size_t d)
{
    double v = 0.0, dd = (double)d * (double)d;
    int left = k <= d - 2, right = k >= 1;
    if (left) v += s->Q * s->Q * s->vp;
    if (right) v += s->P * s->P * s->vq;
    if (left && right) v += 2.0 * s->P * s->Q * s->C;
    return v / dd;
}

/* Ishigami (Sobol' & Levitan 1999; Saltelli et al. 2008, 4.4):
 * partial variances V_0, V_1, V_02 and the total V. */
static void ishigami_parts(const double *c, double *V0, double *V1, double *V02, double *V)
{
    double a = c[0], b = c[1], pi4 = pow(RFX__PI, 4), pi8 = pi4 * pi4;
    double t = 1.0 + b * pi4 / 5.0;
    *V0 = 0.5 * t * t;
    *V1 = a * a / 8.0;
    *V02 = 8.0 * b * b * pi8 / 225.0;
    *V = *V0 + *V1 + *V02;
}

rfx_status rfx_testfn_moments(const rfx_testfn *f, double *mean, double *variance)
{
    double m = 0.0, v = 0.0;
    if (!f) return rfx__error(RFX_EINVAL, "rfx_testfn_moments: f is NULL");
    switch (f->kind) {
    case RFX_TESTFN_GFUNCTION: {
        double prod = 1.0;
        for (size_t i = 0; i < f->d; ++i) {
            double a1 = 1.0 + f->coeffs[i];
            prod *= 1.0 + 1.0 / (3.0 * a1 * a1);
        }
        m = 1.0;
        v = prod - 1.0;
        break;
    }
    case RFX_TESTFN_ISHIGAMI: {
        double V0, V1, V02;
        ishigami_parts(f->coeffs, &V0, &V1, &V02, &v);
        m = 0.5 * f->coeffs[0];
        break;
    }
    case RFX_TESTFN_FRIEDMAN1: {
        double Eh, Vh, V0;
        friedman_parts(&Eh, &Vh, &V0);
        m = Eh + 5.0 / 3.0 + 5.0 + 2.5;
        v = Vh + 20.0 / 9.0 + 25.0 / 3.0 + 25.0 / 12.0;
        break;
    }
    case RFX_TESTFN_BOREHOLE:
    case RFX_TESTFN_OTL:
    case RFX_TESTFN_WINGWEIGHT:
        return rfx__error(RFX_EINVAL, "no analytic mean and variance for %s "
                                      "(estimate them from a sample)", INFO[f->kind].name);
    case RFX_TESTFN_SRFE: {
        srfe_moments s = srfe_parts();
        double dd = (double)f->d * (double)f->d;
        m = (double)(f->d - 1) * s.P * s.Q / (double)f->d;
        for (size_t k = 0; k < f->d; ++k) v += srfe_first_var(&s, k, f->d);
        v += (double)(f->d - 1) * s.vp * s.vq / dd;
        break;
    }
    }
    if (mean) *mean = m;
    if (variance) *variance = v;
    return RFX_OK;
}

rfx_status rfx_testfn_sobol(const rfx_testfn *f, double *first, double *total)
{
    size_t d;
    double *S = NULL, *T = NULL;
    rfx_status st;
    if (!f) return rfx__error(RFX_EINVAL, "rfx_testfn_sobol: f is NULL");
    if (f->kind == RFX_TESTFN_BOREHOLE || f->kind == RFX_TESTFN_OTL ||
        f->kind == RFX_TESTFN_WINGWEIGHT)
        return rfx__error(RFX_EINVAL, "no analytic Sobol indices for %s "
                                      "(estimate them with rfx_sobol_estimate)",
                          INFO[f->kind].name);
    d = f->d;
    st = rfx__alloc(2 * d, sizeof *S, (void **)&S, "Sobol indices");
    if (st != RFX_OK) return st;
    T = S + d;

    switch (f->kind) {
    case RFX_TESTFN_GFUNCTION: {
        /* S_Ti = V_i prod_{j != i} (1 + V_j) / V = V_i (P / (1 + V_i)) / V */
        double P = 1.0, V;
        for (size_t i = 0; i < d; ++i) {
            double a1 = 1.0 + f->coeffs[i];
            S[i] = 1.0 / (3.0 * a1 * a1);
            P *= 1.0 + S[i];
        }
        V = P - 1.0;
        for (size_t i = 0; i < d; ++i) {
            T[i] = S[i] * (P / (1.0 + S[i])) / V;
            S[i] /= V;
        }
        break;
    }
    case RFX_TESTFN_ISHIGAMI: {
        double V0, V1, V02, V;
        ishigami_parts(f->coeffs, &V0, &V1, &V02, &V); /* V0 > 0 or V02 > 0 */
        S[0] = V0 / V; S[1] = V1 / V; S[2] = 0.0;
        T[0] = (V0 + V02) / V; T[1] = V1 / V; T[2] = V02 / V;
        break;
    }
    case RFX_TESTFN_FRIEDMAN1: {
        double Eh, Vh, V0, V;
        friedman_parts(&Eh, &Vh, &V0);
        V = Vh + 20.0 / 9.0 + 25.0 / 3.0 + 25.0 / 12.0;
        for (size_t i = 0; i < d; ++i) S[i] = T[i] = 0.0;
        S[0] = S[1] = V0 / V;
        T[0] = T[1] = (Vh - V0) / V; /* V_0 + V_01 = Vh - V_1 */
        S[2] = T[2] = (20.0 / 9.0) / V;
        S[3] = T[3] = (25.0 / 3.0) / V;
        S[4] = T[4] = (25.0 / 12.0) / V;
        break;
    }
    case RFX_TESTFN_SRFE: {
        srfe_moments s = srfe_parts();
        double V = 0.0, pair = s.vp * s.vq / ((double)d * (double)d);
        for (size_t k = 0; k < d; ++k) {
            S[k] = srfe_first_var(&s, k, d);
            V += S[k];
        }
        V += (double)(d - 1) * pair;
        for (size_t k = 0; k < d; ++k) {
            double pairs = (double)((k >= 1) + (k <= d - 2));
            T[k] = (S[k] + pairs * pair) / V;
            S[k] /= V;
        }
        break;
    }
    case RFX_TESTFN_BOREHOLE:
    case RFX_TESTFN_OTL:
    case RFX_TESTFN_WINGWEIGHT:
        break;
    }
    if (first) memcpy(first, S, d * sizeof *first);
    if (total) memcpy(total, T, d * sizeof *total);
    free(S);
    return RFX_OK;
}
