/* SPDX-License-Identifier: BSD-3-Clause */
/* Test functions and Monte Carlo Sobol indices: exact moments and indices
 * against closed forms (published Ishigami values, Si/Ci forms for
 * Friedman #1, brute-force quadrature for the SRFE example) and against
 * large seeded samples; Monte Carlo indices against exact ones (G-function,
 * Ishigami, linear functions), the coverage of the bootstrap intervals,
 * reproducibility, the model adapter, and every error path. */
#include "internal.h"
#include "rfx/surrogate.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

/* the message of the last error contains what */
#define CHECK_ERROR_HAS(what)                                                          \
    CHECK_MSG(strstr(rfx_last_error(), (what)) != NULL, "message '%s' lacks '%s'",   \
              rfx_last_error(), (what))

static rfx_testfn *make_fn(rfx_testfn_kind kind, size_t d)
{
    rfx_testfn_params p = rfx_testfn_params_default();
    rfx_testfn *f = NULL;
    p.d = d;
    CHECK_OK(rfx_testfn_create(kind, &p, &f));
    return f;
}

/* ---- names and parameters ------------------------------------------------ */

static void test_names(void)
{
    rfx_testfn_kind k;
    int n = 0;
    for (; rfx_testfn_name((rfx_testfn_kind)n); ++n) {
        CHECK_OK(rfx_testfn_from_name(rfx_testfn_name((rfx_testfn_kind)n), &k));
        CHECK(k == (rfx_testfn_kind)n);
        CHECK(rfx_testfn_description((rfx_testfn_kind)n) != NULL);
    }
    CHECK(n == 7);
    CHECK(rfx_testfn_description((rfx_testfn_kind)7) == NULL);
    CHECK_OK(rfx_testfn_from_name("sobol-g", &k));
    CHECK(k == RFX_TESTFN_GFUNCTION);
    CHECK(strcmp(rfx_testfn_name(RFX_TESTFN_OTL), "otl") == 0);
    CHECK(strcmp(rfx_testfn_name(RFX_TESTFN_WINGWEIGHT), "wingweight") == 0);
    CHECK_OK(rfx_testfn_from_name("otl-circuit", &k));
    CHECK(k == RFX_TESTFN_OTL);
    CHECK_OK(rfx_testfn_from_name("wing-weight", &k));
    CHECK(k == RFX_TESTFN_WINGWEIGHT);
    CHECK_STATUS(rfx_testfn_from_name("rosenbrock", &k), RFX_EINVAL);
    CHECK_ERROR_HAS("rosenbrock");
    CHECK_ERROR_HAS("ishigami");
    CHECK_ERROR_HAS("wingweight");
    CHECK_STATUS(rfx_testfn_from_name(NULL, &k), RFX_EINVAL);
}

static void test_create_errors(void)
{
    rfx_testfn_params p = rfx_testfn_params_default();
    rfx_testfn *f = (rfx_testfn *)&p; /* must stay untouched on error */
    rfx_testfn *const sentinel = f;
    double a[3] = { 1, -2, 3 }, ab[2] = { 7, NAN };

    p.d = 4;
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_ISHIGAMI, &p, &f), RFX_EINVAL);
    CHECK_ERROR_HAS("params.d");
    p.d = 4;
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_FRIEDMAN1, &p, &f), RFX_EINVAL);
    CHECK_ERROR_HAS("d >= 5");
    p.d = 7;
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_BOREHOLE, &p, &f), RFX_EINVAL);
    p.d = 1;
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_SRFE, &p, &f), RFX_EINVAL);
    p.d = 7;
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_OTL, &p, &f), RFX_EINVAL);
    CHECK_ERROR_HAS("otl has 6 inputs");
    p.d = 9;
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_WINGWEIGHT, &p, &f), RFX_EINVAL);
    CHECK_ERROR_HAS("wingweight has 10 inputs");
    CHECK_STATUS(rfx_testfn_create((rfx_testfn_kind)99, NULL, &f), RFX_EINVAL);
    CHECK_ERROR_HAS("kind");

    p.d = 3;
    p.coeffs = a;
    p.n_coeffs = 2;
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_GFUNCTION, &p, &f), RFX_EINVAL);
    CHECK_ERROR_HAS("params.n_coeffs");
    p.n_coeffs = 3;
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_GFUNCTION, &p, &f), RFX_EINVAL);
    CHECK_ERROR_HAS("params.coeffs[1]");
    p.coeffs = ab;
    p.n_coeffs = 2;
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_ISHIGAMI, &p, &f), RFX_EINVAL);
    CHECK_ERROR_HAS("params.coeffs[1]");
    p.d = 0;
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_FRIEDMAN1, &p, &f), RFX_EINVAL);
    CHECK_ERROR_HAS("takes no coefficients");
    p.coeffs = NULL;
    p.n_coeffs = 3;
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_GFUNCTION, &p, &f), RFX_EINVAL);
    CHECK_ERROR_HAS("params.coeffs is NULL");
    CHECK(f == sentinel);
    CHECK_STATUS(rfx_testfn_create(RFX_TESTFN_GFUNCTION, NULL, NULL), RFX_EINVAL);
    rfx_testfn_free(NULL);
}

static void test_defaults(void)
{
    static const size_t dims[7] = { 20, 3, 10, 8, 10, 6, 10 };
    for (int k = 0; k < 7; ++k) {
        rfx_testfn *f = NULL;
        CHECK_OK(rfx_testfn_create((rfx_testfn_kind)k, NULL, &f));
        CHECK(rfx_testfn_dim(f) == dims[k]);
        CHECK(rfx_testfn_get_kind(f) == (rfx_testfn_kind)k);
        rfx_testfn_free(f);
    }
    /* the talk's coefficients */
    rfx_testfn *g = make_fn(RFX_TESTFN_GFUNCTION, 0);
    size_t n = 0;
    const double *a = rfx_testfn_coeffs(g, &n);
    static const double want[7] = { 1, 2, 5, 10, 20, 100, 5000 };
    CHECK(n == 20);
    for (size_t i = 0; i < 20; ++i) CHECK(a[i] == want[i < 6 ? i : 6]);
    rfx_testfn_free(g);
    rfx_testfn *ish = make_fn(RFX_TESTFN_ISHIGAMI, 0);
    a = rfx_testfn_coeffs(ish, &n);
    CHECK(n == 2 && a[0] == 7 && a[1] == 0.1);
    CHECK(rfx_testfn_marginals(ish)[2].kind == RFX_MARGINAL_UNIFORM);
    CHECK(rfx_testfn_marginals(ish)[2].a == -PI && rfx_testfn_marginals(ish)[2].b == PI);
    rfx_testfn_free(ish);
}

/* ---- exact indices and moments -------------------------------------------- */

/* Structural properties of any index set: 0 <= S_i <= S_Ti <= 1,
 * sum S_i <= 1 <= sum S_Ti. */
static void check_index_rules(const double *S, const double *T, size_t d)
{
    double sS = 0, sT = 0;
    for (size_t i = 0; i < d; ++i) {
        CHECK(S[i] >= -1e-15 && S[i] <= T[i] + 1e-15 && T[i] <= 1 + 1e-15);
        sS += S[i];
        sT += T[i];
    }
    CHECK(sS <= 1 + 1e-12);
    CHECK(sT >= 1 - 1e-12);
}

static void test_gfunction_exact(void)
{
    double S[20], T[20], mean, var;
    rfx_testfn *g = make_fn(RFX_TESTFN_GFUNCTION, 0);
    CHECK_OK(rfx_testfn_sobol(g, S, T));
    CHECK_OK(rfx_testfn_moments(g, &mean, &var));
    check_index_rules(S, T, 20);
    /* the product formula, written out */
    double Vi[20], P = 1;
    const double *a = rfx_testfn_coeffs(g, NULL);
    for (size_t i = 0; i < 20; ++i) {
        Vi[i] = 1.0 / (3.0 * (1 + a[i]) * (1 + a[i]));
        P *= 1 + Vi[i];
    }
    CHECK_NEAR(mean, 1.0, 0);
    CHECK_NEAR(var, P - 1, 1e-15);
    for (size_t i = 0; i < 20; ++i) {
        double rest = 1;
        for (size_t j = 0; j < 20; ++j)
            if (j != i) rest *= 1 + Vi[j];
        CHECK_NEAR(S[i], Vi[i] / (P - 1), 1e-14);
        CHECK_NEAR(T[i], Vi[i] * rest / (P - 1), 1e-14);
    }
    /* the important inputs come first */
    for (size_t i = 0; i + 1 < 20; ++i) CHECK(S[i] >= S[i + 1]);
    rfx_testfn_free(g);

    /* a = (0, 0): V_i = 1/3, V = 7/9, S_i = 3/7, S_Ti = 4/7 */
    double zero[2] = { 0, 0 }, S2[2], T2[2];
    rfx_testfn_params p = rfx_testfn_params_default();
    p.d = 2;
    p.coeffs = zero;
    p.n_coeffs = 2;
    CHECK_OK(rfx_testfn_create(RFX_TESTFN_GFUNCTION, &p, &g));
    CHECK_OK(rfx_testfn_sobol(g, S2, T2));
    CHECK_OK(rfx_testfn_moments(g, NULL, &var));
    CHECK_NEAR(var, 7.0 / 9.0, 1e-15);
    CHECK_NEAR(S2[0], 3.0 / 7.0, 1e-15);
    CHECK_NEAR(T2[1], 4.0 / 7.0, 1e-15);
    rfx_testfn_free(g);

    /* d = 1: all variance is x_0's */
    g = make_fn(RFX_TESTFN_GFUNCTION, 1);
    CHECK_OK(rfx_testfn_sobol(g, S2, T2));
    CHECK_NEAR(S2[0], 1.0, 1e-15);
    CHECK_NEAR(T2[0], 1.0, 1e-15);
    rfx_testfn_free(g);
}

static void test_ishigami_exact(void)
{
    /* published values (Saltelli et al. 2008; Sobol' & Levitan 1999) */
    static const double S_ref[3] = { 0.3139, 0.4424, 0.0 }, T_ref[3] = { 0.5576, 0.4424, 0.2437 };
    double S[3], T[3], mean, var;
    rfx_testfn *f = make_fn(RFX_TESTFN_ISHIGAMI, 0);
    CHECK_OK(rfx_testfn_sobol(f, S, T));
    CHECK_OK(rfx_testfn_moments(f, &mean, &var));
    for (int i = 0; i < 3; ++i) {
        CHECK_NEAR(S[i], S_ref[i], 1e-4);
        CHECK_NEAR(T[i], T_ref[i], 1e-4);
    }
    CHECK_NEAR(mean, 3.5, 1e-15);
    /* V = a^2/8 + b pi^4/5 + b^2 pi^8/18 + 1/2 */
    CHECK_NEAR(var, 49.0 / 8 + 0.1 * pow(PI, 4) / 5 + 0.01 * pow(PI, 8) / 18 + 0.5, 1e-12);
    check_index_rules(S, T, 3);
    rfx_testfn_free(f);
}

/* Friedman #1 in closed form through Si and Ci (values to 30 digits from
 * their power series, evaluated in 60-digit decimal arithmetic):
 *   E h = 10 Cin(pi)/pi, E h^2 = 100 (1/2 - Si(2 pi)/(4 pi)),
 *   V_0 = (100/pi) (2 Si(pi) - Si(2 pi) - 4/pi) - (E h)^2. */
static void test_friedman_exact(void)
{
    const double si_pi = 1.85193705198246617036105337016, si_2pi = 1.41815157613262845024578016230,
                 cin_pi = 1.64827763870450754875983847621;
    double Eh = 10 * cin_pi / PI, Vh = 100 * (0.5 - si_2pi / (4 * PI)) - Eh * Eh;
    double V0 = 100 / PI * (2 * si_pi - si_2pi - 4 / PI) - Eh * Eh;
    double V = Vh + 20.0 / 9 + 25.0 / 3 + 25.0 / 12;
    double S[10], T[10], mean, var;
    rfx_testfn *f = make_fn(RFX_TESTFN_FRIEDMAN1, 0);
    CHECK_OK(rfx_testfn_sobol(f, S, T));
    CHECK_OK(rfx_testfn_moments(f, &mean, &var));
    CHECK_NEAR(mean, Eh + 5.0 / 3 + 7.5, 1e-13);
    CHECK_NEAR(mean, 14.4132973424198571, 1e-13);
    CHECK_NEAR(var, V, 1e-12);
    CHECK_NEAR(var, 23.8264637713810018, 1e-12);
    CHECK_NEAR(S[0], V0 / V, 1e-13);
    CHECK_NEAR(S[1], V0 / V, 1e-13);
    CHECK_NEAR(T[0], (Vh - V0) / V, 1e-13);
    CHECK_NEAR(S[2], 20.0 / 9 / V, 1e-14);
    CHECK_NEAR(S[3], 25.0 / 3 / V, 1e-14);
    CHECK_NEAR(S[4], 25.0 / 12 / V, 1e-14);
    for (int i = 2; i < 10; ++i) CHECK(S[i] == T[i]);
    for (int i = 5; i < 10; ++i) CHECK(S[i] == 0);
    check_index_rules(S, T, 10);
    rfx_testfn_free(f);
}

/* Only pairwise interactions: sum S + (sum S_T - sum S) / 2 = 1. */
static void check_pairwise_identity(rfx_testfn_kind kind, size_t d)
{
    double *S = malloc(2 * d * sizeof *S), *T = S + d, sS = 0, sT = 0;
    rfx_testfn *f = make_fn(kind, d);
    CHECK_OK(rfx_testfn_sobol(f, S, T));
    for (size_t i = 0; i < d; ++i) {
        sS += S[i];
        sT += T[i];
    }
    CHECK_NEAR(sS + 0.5 * (sT - sS), 1.0, 1e-13);
    check_index_rules(S, T, d);
    rfx_testfn_free(f);
    free(S);
}

/* int_0^1 g by composite Simpson with m (even) intervals */
static double simpson01(double (*g)(double), int m)
{
    double h = 1.0 / m, s = g(0) + g(1);
    for (int k = 1; k < m; ++k) s += (k % 2 ? 4 : 2) * g(k * h);
    return s * h / 3;
}
static double srfe_p(double t) { return exp(-t * t); }
static double srfe_q(double t) { return 1 / (1 + t * t); }

/* The SRFE example for d = 3 against brute-force 3-D Simpson quadrature of
 * f and f^2 over [-1, 1]^3 (by symmetry [0, 1]^3), and of the first-order
 * variances Var E[f | x_k] by 1-D Simpson over x_k of 2-D Simpson inner
 * means. */
static void test_srfe_exact(void)
{
    enum { M = 120 };
    const size_t d = 3;
    double w[M + 1], x[M + 1], h = 1.0 / M;
    for (int k = 0; k <= M; ++k) {
        x[k] = k * h;
        w[k] = (k == 0 || k == M ? 1 : k % 2 ? 4 : 2) * h / 3;
    }
    double s1 = 0, s2 = 0, cond[3][M + 1];
    memset(cond, 0, sizeof cond);
    for (int i = 0; i <= M; ++i)
        for (int j = 0; j <= M; ++j)
            for (int k = 0; k <= M; ++k) {
                double f = (exp(-x[i] * x[i]) / (1 + x[j] * x[j]) +
                            exp(-x[j] * x[j]) / (1 + x[k] * x[k])) / 3.0;
                double ww = w[i] * w[j] * w[k];
                s1 += ww * f;
                s2 += ww * f * f;
                cond[0][i] += w[j] * w[k] * f;
                cond[1][j] += w[i] * w[k] * f;
                cond[2][k] += w[i] * w[j] * f;
            }
    double var = s2 - s1 * s1, mean, v, S[3], T[3];
    rfx_testfn *f = make_fn(RFX_TESTFN_SRFE, d);
    CHECK_OK(rfx_testfn_moments(f, &mean, &v));
    CHECK_OK(rfx_testfn_sobol(f, S, T));
    CHECK_NEAR(mean, s1, 1e-10);
    CHECK_NEAR(v, var, 1e-10);
    for (size_t k = 0; k < d; ++k) {
        double c2 = 0;
        for (int t = 0; t <= M; ++t) c2 += w[t] * cond[k][t] * cond[k][t];
        CHECK_NEAR(S[k], (c2 - s1 * s1) / var, 1e-8);
    }
    rfx_testfn_free(f);

    /* d = 10 moments from the 1-D integrals, written out independently */
    double P = simpson01(srfe_p, 20000), Q = simpson01(srfe_q, 20000);
    f = make_fn(RFX_TESTFN_SRFE, 0);
    CHECK_OK(rfx_testfn_moments(f, &mean, NULL));
    CHECK_NEAR(mean, 9.0 / 10.0 * P * Q, 1e-13);
    CHECK_NEAR(Q, PI / 4, 1e-14);
    rfx_testfn_free(f);
}

static void test_borehole_no_analytic(void)
{
    double S[8], T[8], mean = 42;
    rfx_testfn *f = make_fn(RFX_TESTFN_BOREHOLE, 0);
    CHECK_STATUS(rfx_testfn_sobol(f, S, T), RFX_EINVAL);
    CHECK_ERROR_HAS("no analytic Sobol indices for borehole");
    CHECK_STATUS(rfx_testfn_moments(f, &mean, NULL), RFX_EINVAL);
    CHECK(mean == 42);
    /* the standard nominal point gives about 72.9 m^3/yr (Morris et al.) */
    const double x[8] = { 0.10, 25050, 89335, 1050, 89.55, 760, 1400, 10950 };
    double y = 0;
    CHECK_OK(rfx_testfn_eval(f, rfx_cmat_of(x, 1, 8), &y));
    double lr = log(25050 / 0.10);
    double want = 2 * PI * 89335 * (1050 - 760) /
                  (lr * (1 + 2 * 1400 * 89335 / (lr * 0.01 * 10950) + 89335 / 89.55));
    CHECK_NEAR(y, want, 1e-12 * want);
    /* outside the domain */
    double bad[8];
    memcpy(bad, x, sizeof bad);
    bad[0] = -0.1;
    y = -1;
    CHECK_STATUS(rfx_testfn_eval(f, rfx_cmat_of(bad, 1, 8), &y), RFX_EINVAL);
    CHECK_ERROR_HAS("rw > 0");
    CHECK(y == -1);
    rfx_testfn_free(f);
}

/* The OTL circuit and the wing weight function (Surjanovic & Bingham's
 * Virtual Library of Simulation Experiments): their uniform boxes, values
 * at the centre and two corners of the box, no analytic moments or
 * indices, the domain, and samples inside the box. The reference values
 * were computed with mpmath at 40 digits from the published formulas:
 *   OTL: Vb1 = 12 Rb2 / (Rb1 + Rb2), B = beta (Rc2 + 9),
 *     Vm = (Vb1 + 0.74) B / (B + Rf) + 11.35 Rf / (B + Rf)
 *          + 0.74 Rf B / ((B + Rf) Rc1);
 *   wing weight: 0.036 Sw^0.758 Wfw^0.0035 (A / cos^2 L)^0.6 q^0.006
 *     lambda^0.04 (100 tc / cos L)^-0.3 (Nz Wdg)^0.49 + Sw Wp, L in
 *     degrees. */
static void check_box_values(rfx_testfn_kind kind, size_t d, const double *lo,
                             const double *hi, const double want[3])
{
    rfx_testfn *f = make_fn(kind, 0);
    const rfx_marginal *m = rfx_testfn_marginals(f);
    double X[3 * 10], y[3] = { 0, 0, 0 }, S[10], mean = 42;
    CHECK(rfx_testfn_dim(f) == d && d <= 10);
    for (size_t j = 0; j < d; ++j) {
        CHECK(m[j].kind == RFX_MARGINAL_UNIFORM);
        CHECK_MSG(m[j].a == lo[j] && m[j].b == hi[j], "%s input %zu: U[%g, %g]",
                  rfx_testfn_name(kind), j, m[j].a, m[j].b);
        X[j] = 0.5 * (lo[j] + hi[j]);
        X[d + j] = lo[j];
        X[2 * d + j] = hi[j];
    }
    CHECK_OK(rfx_testfn_eval(f, rfx_cmat_of(X, 3, d), y));
    for (int i = 0; i < 3; ++i)
        CHECK_MSG(fabs(y[i] - want[i]) <= 1e-12 * fabs(want[i]), "%s point %d: %.17g, want %.17g",
                  rfx_testfn_name(kind), i, y[i], want[i]);
    CHECK_STATUS(rfx_testfn_sobol(f, S, NULL), RFX_EINVAL);
    CHECK_ERROR_HAS("no analytic Sobol indices for");
    CHECK_ERROR_HAS(rfx_testfn_name(kind));
    CHECK_STATUS(rfx_testfn_moments(f, &mean, NULL), RFX_EINVAL);
    CHECK_ERROR_HAS("no analytic mean and variance");
    CHECK(mean == 42);

    /* a seeded sample lies in the box, with finite values; reproducible */
    enum { N = 400 };
    double *Xs = malloc(N * d * sizeof *Xs), ys[N], ys2[N];
    CHECK_OK(rfx_testfn_sample(f, 11, rfx_mat_of(Xs, N, d), ys));
    int inside = 1;
    for (size_t i = 0; i < N; ++i) {
        for (size_t j = 0; j < d; ++j) inside &= Xs[i * d + j] >= lo[j] && Xs[i * d + j] <= hi[j];
        inside &= isfinite(ys[i]) && ys[i] > 0;
    }
    CHECK(inside);
    CHECK_OK(rfx_testfn_eval(f, rfx_cmat_of(Xs, N, d), ys2));
    CHECK(memcmp(ys, ys2, sizeof ys) == 0);
    free(Xs);
    rfx_testfn_free(f);
}

static void test_otl_wingweight(void)
{
    static const double otl_lo[6] = { 50, 25, 0.5, 1.2, 0.25, 50 };
    static const double otl_hi[6] = { 150, 70, 3, 2.5, 1.2, 300 };
    static const double otl_want[3] = { 5.3106169421883297206, 5.055138588912886969,
                                        5.4519642062149407889 };
    static const double ww_lo[10] = { 150, 220, 6, -10, 16, 0.5, 0.08, 2.5, 1700, 0.025 };
    static const double ww_hi[10] = { 200, 300, 10, 10, 45, 1, 0.18, 6, 2500, 0.08 };
    static const double ww_want[3] = { 267.62469257043568497, 158.2824504586482927,
                                       409.33182691439054828 };
    check_box_values(RFX_TESTFN_OTL, 6, otl_lo, otl_hi, otl_want);
    check_box_values(RFX_TESTFN_WINGWEIGHT, 10, ww_lo, ww_hi, ww_want);

    /* outside the domain: y untouched, the row named */
    rfx_testfn *otl = make_fn(RFX_TESTFN_OTL, 0);
    double x[2 * 10], y[2] = { -1, -1 };
    memcpy(x, otl_lo, sizeof otl_lo);
    memcpy(x + 6, otl_hi, sizeof otl_hi);
    x[6 + 3] = 0; /* Rc1 = 0 */
    CHECK_STATUS(rfx_testfn_eval(otl, rfx_cmat_of(x, 2, 6), y), RFX_EINVAL);
    CHECK_ERROR_HAS("X row 1: otl is not finite");
    CHECK(y[0] == -1 && y[1] == -1);
    rfx_testfn_free(otl);

    rfx_testfn *ww = make_fn(RFX_TESTFN_WINGWEIGHT, 0);
    memcpy(x, ww_lo, sizeof ww_lo);
    memcpy(x + 10, ww_hi, sizeof ww_hi);
    x[10 + 3] = 120; /* cos Lambda < 0 */
    CHECK_STATUS(rfx_testfn_eval(ww, rfx_cmat_of(x, 2, 10), y), RFX_EINVAL);
    CHECK_ERROR_HAS("X row 1: wingweight needs");
    x[10 + 3] = 10;
    x[6] = -0.1; /* tc < 0 */
    CHECK_STATUS(rfx_testfn_eval(ww, rfx_cmat_of(x, 2, 10), y), RFX_EINVAL);
    CHECK_ERROR_HAS("X row 0: wingweight needs");
    CHECK(y[0] == -1 && y[1] == -1);
    x[6] = 0.1;
    CHECK_OK(rfx_testfn_eval(ww, rfx_cmat_of(x, 2, 10), y));
    CHECK(y[0] > 0 && y[1] > 0);
    rfx_testfn_free(ww);
}

/* ---- evaluation and sampling ----------------------------------------------- */

static void test_eval_values(void)
{
    /* G-function at x = 1/2 (|4x - 2| = 0): prod a_i / (1 + a_i) */
    rfx_testfn *g = make_fn(RFX_TESTFN_GFUNCTION, 3);
    double x[3] = { 0.5, 0.5, 0.5 }, y = 0;
    CHECK_OK(rfx_testfn_eval(g, rfx_cmat_of(x, 1, 3), &y));
    CHECK_NEAR(y, (1.0 / 2) * (2.0 / 3) * (5.0 / 6), 1e-15);
    /* Ishigami at (pi/2, pi/2, 1): 1 + 7 + 0.1 */
    rfx_testfn *ish = make_fn(RFX_TESTFN_ISHIGAMI, 0);
    double xi[3] = { PI / 2, PI / 2, 1 };
    CHECK_OK(rfx_testfn_eval(ish, rfx_cmat_of(xi, 1, 3), &y));
    CHECK_NEAR(y, 8.1, 1e-14);
    /* Friedman at (1, 1/2, 1/2, 1, 1, ...): 10 + 0 + 10 + 5 */
    rfx_testfn *fr = make_fn(RFX_TESTFN_FRIEDMAN1, 6);
    double xf[6] = { 1, 0.5, 0.5, 1, 1, 123 };
    CHECK_OK(rfx_testfn_eval(fr, rfx_cmat_of(xf, 1, 6), &y));
    CHECK_NEAR(y, 25, 1e-13);
    /* SRFE at 0: (d - 1) / d */
    rfx_testfn *sr = make_fn(RFX_TESTFN_SRFE, 4);
    double xs[4] = { 0, 0, 0, 0 };
    CHECK_OK(rfx_testfn_eval(sr, rfx_cmat_of(xs, 1, 4), &y));
    CHECK_NEAR(y, 0.75, 1e-15);
    /* strided rows and the callback form */
    double Xs[2 * 5] = { 0.5, 0.5, 0.5, -7, -7, 0.25, 0.75, 0.5, -7, -7 }, ys[2];
    rfx_cmat V = { Xs, 2, 3, 5 };
    CHECK_OK(rfx_testfn_function(g, V, ys));
    CHECK_NEAR(ys[0], 5.0 / 18, 1e-15);
    CHECK_NEAR(ys[1], (2.0 / 2) * (3.0 / 3) * (5.0 / 6), 1e-15);

    /* errors: columns, non-finite input, NULL y; y untouched */
    y = -1;
    CHECK_STATUS(rfx_testfn_eval(g, rfx_cmat_of(x, 1, 2), &y), RFX_EDIM);
    CHECK_ERROR_HAS("columns");
    x[1] = NAN;
    CHECK_STATUS(rfx_testfn_eval(g, rfx_cmat_of(x, 1, 3), &y), RFX_EINVAL);
    CHECK_ERROR_HAS("row 0, column 1");
    CHECK(y == -1);
    x[1] = 0.5;
    CHECK_STATUS(rfx_testfn_eval(g, rfx_cmat_of(x, 1, 3), NULL), RFX_EINVAL);
    CHECK_OK(rfx_testfn_eval(g, rfx_cmat_of(NULL, 0, 3), NULL));
    rfx_testfn_free(g);
    rfx_testfn_free(ish);
    rfx_testfn_free(fr);
    rfx_testfn_free(sr);
}

static void test_sample_reproducible(void)
{
    enum { N = 500 };
    rfx_testfn *f = make_fn(RFX_TESTFN_BOREHOLE, 0);
    const rfx_marginal *m = rfx_testfn_marginals(f);
    double *X1 = malloc(N * 8 * sizeof *X1), *X2 = malloc(N * 8 * sizeof *X2);
    double y1[N], y2[N];
    CHECK_OK(rfx_testfn_sample(f, 7, rfx_mat_of(X1, N, 8), y1));
    CHECK_OK(rfx_testfn_sample(f, 7, rfx_mat_of(X2, N, 8), y2));
    CHECK(memcmp(X1, X2, N * 8 * sizeof *X1) == 0 && memcmp(y1, y2, sizeof y1) == 0);
    /* the first k rows of a larger sample are the sample of k rows */
    CHECK_OK(rfx_testfn_sample(f, 7, rfx_mat_of(X2, 17, 8), y2));
    CHECK(memcmp(X1, X2, 17 * 8 * sizeof *X1) == 0 && memcmp(y1, y2, 17 * sizeof *y1) == 0);
    CHECK_OK(rfx_testfn_sample(f, 8, rfx_mat_of(X2, N, 8), y2));
    CHECK(memcmp(X1, X2, N * 8 * sizeof *X1) != 0);
    /* uniform inputs inside their bounds, y positive */
    int inside = 1;
    for (size_t i = 0; i < N; ++i) {
        for (size_t j = 2; j < 8; ++j)
            inside &= X1[i * 8 + j] >= m[j].a && X1[i * 8 + j] <= m[j].b;
        inside &= X1[i * 8 + 1] > 0 && y1[i] > 0;
    }
    CHECK(inside);
    /* errors */
    CHECK_STATUS(rfx_testfn_sample(f, 7, rfx_mat_of(X1, N, 7), y1), RFX_EDIM);
    CHECK_STATUS(rfx_testfn_sample(f, 7, rfx_mat_of(X1, N, 8), NULL), RFX_EINVAL);
    rfx_testfn_free(f);
    free(X1);
    free(X2);
}

/* The exact mean and variance against a seeded sample of n: the mean within
 * 4 standard errors sqrt(var / n), the variance within 4 standard errors
 * sqrt((m4 - var^2) / n) of the sample variance (m4 the fourth central
 * moment of the sample). */
static void check_moments_mc(rfx_testfn_kind kind, size_t n, uint64_t seed)
{
    rfx_testfn *f = make_fn(kind, 0);
    size_t d = rfx_testfn_dim(f);
    double *X = malloc(n * d * sizeof *X), *y = malloc(n * sizeof *y), mean, var;
    CHECK_OK(rfx_testfn_sample(f, seed, rfx_mat_of(X, n, d), y));
    CHECK_OK(rfx_testfn_moments(f, &mean, &var));
    double m = 0, m2 = 0, m4 = 0;
    for (size_t i = 0; i < n; ++i) m += y[i];
    m /= (double)n;
    for (size_t i = 0; i < n; ++i) {
        double e = (y[i] - m) * (y[i] - m);
        m2 += e;
        m4 += e * e;
    }
    m2 /= (double)n;
    m4 /= (double)n;
    double se_mean = sqrt(var / (double)n), se_var = sqrt((m4 - m2 * m2) / (double)n);
    CHECK_MSG(fabs(m - mean) <= 4 * se_mean, "%s: sample mean %.6g, exact %.6g, se %.3g",
              rfx_testfn_name(kind), m, mean, se_mean);
    CHECK_MSG(fabs(m2 - var) <= 4 * se_var, "%s: sample variance %.6g, exact %.6g, se %.3g",
              rfx_testfn_name(kind), m2, var, se_var);
    rfx_testfn_free(f);
    free(X);
    free(y);
}

/* ---- marginals --------------------------------------------------------- */

static void test_marginals(void)
{
    enum { N = 100000 };
    rfx_marginal m[3] = { rfx_marginal_uniform(-2, 3), rfx_marginal_normal(2, 3),
                          rfx_marginal_lognormal(0.5, 0.25) };
    double *X = malloc(N * 3 * sizeof *X);
    CHECK_OK(rfx_marginals_sample(m, 3, 11, rfx_mat_of(X, N, 3)));
    /* means of x0, x1 and log x2, within 4 standard errors */
    double s[3] = { 0, 0, 0 }, lo = 1e300, hi = -1e300;
    for (size_t i = 0; i < N; ++i) {
        s[0] += X[3 * i];
        s[1] += X[3 * i + 1];
        s[2] += log(X[3 * i + 2]);
        lo = fmin(lo, X[3 * i]);
        hi = fmax(hi, X[3 * i]);
    }
    CHECK_NEAR(s[0] / N, 0.5, 4 * 5 / sqrt(12.0 * N));
    CHECK_NEAR(s[1] / N, 2.0, 4 * 3 / sqrt((double)N));
    CHECK_NEAR(s[2] / N, 0.5, 4 * 0.25 / sqrt((double)N));
    CHECK(lo >= -2 && hi <= 3 && lo < -1.99 && hi > 2.99);
    free(X);

    /* every bad field is named */
    double Y[3];
    rfx_marginal bad;
    bad = rfx_marginal_uniform(1, 1);
    CHECK_STATUS(rfx_marginals_check(&bad, 1), RFX_EINVAL);
    CHECK_ERROR_HAS("marginals[0]");
    CHECK_ERROR_HAS("a < b");
    rfx_marginal two[2] = { rfx_marginal_uniform(0, 1), rfx_marginal_uniform(NAN, 1) };
    CHECK_STATUS(rfx_marginals_check(two, 2), RFX_EINVAL);
    CHECK_ERROR_HAS("marginals[1]");
    CHECK_ERROR_HAS("finite");
    two[1] = rfx_marginal_uniform(0, INFINITY);
    CHECK_STATUS(rfx_marginals_check(two, 2), RFX_EINVAL);
    two[1] = rfx_marginal_normal(0, 0);
    CHECK_STATUS(rfx_marginals_check(two, 2), RFX_EINVAL);
    CHECK_ERROR_HAS("standard deviation");
    two[1] = rfx_marginal_lognormal(NAN, 1);
    CHECK_STATUS(rfx_marginals_check(two, 2), RFX_EINVAL);
    CHECK_ERROR_HAS("mean");
    two[1].kind = (rfx_marginal_kind)7;
    CHECK_STATUS(rfx_marginals_check(two, 2), RFX_EINVAL);
    CHECK_ERROR_HAS("marginals[1].kind");
    CHECK_STATUS(rfx_marginals_check(two, 0), RFX_EINVAL);
    CHECK_STATUS(rfx_marginals_check(NULL, 2), RFX_EINVAL);
    CHECK_STATUS(rfx_marginals_sample(m, 3, 0, rfx_mat_of(Y, 1, 2)), RFX_EDIM);
}

/* ---- Monte Carlo Sobol indices ------------------------------------------- */

typedef struct sobol_out {
    double S[20], T[20], Slo[20], Shi[20], Tlo[20], Thi[20];
    rfx_sobol_result r;
} sobol_out;

static void sobol_out_init(sobol_out *o)
{
    memset(o, 0, sizeof *o);
    o->r.first = o->S;
    o->r.total = o->T;
    o->r.first_lo = o->Slo;
    o->r.first_hi = o->Shi;
    o->r.total_lo = o->Tlo;
    o->r.total_hi = o->Thi;
}

/* Monte Carlo against exact indices. Criterion (the intervals are 99%
 * percentile bootstrap intervals): every exact index lies within its
 * interval widened by half its width on each side, at least 90% of them
 * within the interval itself, and every estimate within tol of the exact
 * value. */
static void check_sobol_mc(rfx_testfn_kind kind, size_t n, uint64_t seed, double tol)
{
    sobol_out o;
    rfx_sobol_params p = rfx_sobol_params_default();
    rfx_testfn *f = make_fn(kind, 0);
    size_t d = rfx_testfn_dim(f), inside = 0;
    double S[20], T[20], mean, var;
    CHECK_OK(rfx_testfn_sobol(f, S, T));
    CHECK_OK(rfx_testfn_moments(f, &mean, &var));
    sobol_out_init(&o);
    p.n = n;
    p.seed = seed;
    p.confidence = 0.99;
    CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), d, &p, &o.r));
    CHECK(o.r.n_evaluations == n * (d + 2));
    for (size_t i = 0; i < d; ++i) {
        const double est[2] = { o.S[i], o.T[i] }, ex[2] = { S[i], T[i] };
        const double lo[2] = { o.Slo[i], o.Tlo[i] }, hi[2] = { o.Shi[i], o.Thi[i] };
        for (int e = 0; e < 2; ++e) {
            double w = hi[e] - lo[e];
            CHECK(lo[e] <= est[e] + 1e-12 && est[e] <= hi[e] + 1e-12);
            CHECK_MSG(ex[e] >= lo[e] - 0.5 * w && ex[e] <= hi[e] + 0.5 * w,
                      "%s %s[%zu]: exact %.5g outside the widened interval [%.5g, %.5g]",
                      rfx_testfn_name(kind), e ? "S_T" : "S", i, ex[e], lo[e], hi[e]);
            CHECK_MSG(fabs(est[e] - ex[e]) <= tol, "%s %s[%zu]: estimate %.5g, exact %.5g",
                      rfx_testfn_name(kind), e ? "S_T" : "S", i, est[e], ex[e]);
            inside += ex[e] >= lo[e] && ex[e] <= hi[e];
        }
    }
    CHECK_MSG((double)inside >= 0.9 * (double)(2 * d), "%s: %zu of %zu exact indices inside",
              rfx_testfn_name(kind), inside, 2 * d);
    /* mean and variance of the 2N outputs of A and B */
    CHECK_NEAR(o.r.mean, mean, 5 * sqrt(var / (2.0 * (double)n)));
    CHECK_NEAR(o.r.variance, var, 0.05 * var);
    rfx_testfn_free(f);
}

/* Coverage of the 95% intervals: over 24 independent Ishigami runs with
 * small N, the fraction of the 144 intervals that hold the exact index is
 * close to 0.95 (binomial sd 0.018; the bootstrap is approximate, so
 * require >= 0.85). */
static void test_sobol_coverage(void)
{
    enum { RUNS = 24 };
    rfx_testfn *f = make_fn(RFX_TESTFN_ISHIGAMI, 0);
    double S[3], T[3];
    size_t hit = 0, total = 0;
    CHECK_OK(rfx_testfn_sobol(f, S, T));
    for (int run = 0; run < RUNS; ++run) {
        sobol_out o;
        rfx_sobol_params p = rfx_sobol_params_default();
        sobol_out_init(&o);
        p.n = 2000;
        p.seed = 1000 + (uint64_t)run;
        CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), 3, &p,
                                    &o.r));
        for (int i = 0; i < 3; ++i) {
            hit += S[i] >= o.Slo[i] && S[i] <= o.Shi[i];
            hit += T[i] >= o.Tlo[i] && T[i] <= o.Thi[i];
            total += 2;
        }
    }
    CHECK_MSG((double)hit >= 0.85 * (double)total, "coverage %zu / %zu", hit, total);
    rfx_testfn_free(f);
}

/* f = sum_i c_i x_i with independent x_i: S_i = S_Ti = c_i^2 var_i / sum. */
typedef struct linear_fn {
    const double *c;
    size_t d;
    size_t calls, max_rows;
} linear_fn;

static rfx_status linear_eval(void *user, rfx_cmat X, double *y)
{
    linear_fn *l = user;
    l->calls++;
    if (X.rows > l->max_rows) l->max_rows = X.rows;
    for (size_t i = 0; i < X.rows; ++i) {
        double s = 0;
        for (size_t j = 0; j < l->d; ++j) s += l->c[j] * X.data[i * X.stride + j];
        y[i] = s;
    }
    return RFX_OK;
}

static void test_sobol_linear(void)
{
    enum { D = 4 };
    const double c[D] = { 1.0, -2.0, 0.5, 3.0 };
    const rfx_marginal m[D] = { rfx_marginal_uniform(0, 2), rfx_marginal_normal(5, 0.5),
                                rfx_marginal_lognormal(0, 0.5), rfx_marginal_uniform(-1, -0.5) };
    double var[D] = { 4.0 / 12, 0.25, (exp(0.25) - 1) * exp(0.25), 0.25 / 12 }, V = 0, mu;
    for (int i = 0; i < D; ++i) V += c[i] * c[i] * var[i];
    mu = c[0] * 1 + c[1] * 5 + c[2] * exp(0.125) + c[3] * -0.75;
    linear_fn l = { c, D, 0, 0 };
    sobol_out o;
    rfx_sobol_params p = rfx_sobol_params_default();
    sobol_out_init(&o);
    p.n = 20000;
    p.seed = 3;
    p.batch_rows = 1000;
    CHECK_OK(rfx_sobol_estimate(linear_eval, &l, m, D, &p, &o.r));
    CHECK(l.max_rows <= 1000);
    CHECK(l.calls >= 20000 * (D + 2) / 1000);
    for (int i = 0; i < D; ++i) {
        double ex = c[i] * c[i] * var[i] / V;
        CHECK_NEAR(o.S[i], ex, 0.03);
        CHECK_NEAR(o.T[i], ex, 0.03);
        CHECK(o.Slo[i] <= ex + 0.01 && ex - 0.01 <= o.Shi[i]);
        CHECK(o.Tlo[i] <= ex + 0.01 && ex - 0.01 <= o.Thi[i]);
    }
    CHECK_NEAR(o.r.mean, mu, 5 * sqrt(V / 40000));
    CHECK_NEAR(o.r.variance, V, 0.05 * V);
}

/* The same numbers for any batch size and thread count; intervals NaN
 * without bootstrap. */
static void test_sobol_reproducible(void)
{
    rfx_testfn *f = make_fn(RFX_TESTFN_SRFE, 5);
    sobol_out a, b;
    rfx_sobol_params p = rfx_sobol_params_default();
    p.n = 3000;
    p.seed = 9;
    p.n_bootstrap = 50;
    p.n_threads = 1;
    sobol_out_init(&a);
    sobol_out_init(&b);
    CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), 5, &p, &a.r));
    p.batch_rows = 7;
    p.n_threads = 3;
    CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), 5, &p, &b.r));
    CHECK(memcmp(a.S, b.S, sizeof a.S) == 0 && memcmp(a.T, b.T, sizeof a.T) == 0);
    CHECK(memcmp(a.Slo, b.Slo, sizeof a.Slo) == 0 && memcmp(a.Thi, b.Thi, sizeof a.Thi) == 0);
    CHECK(a.r.mean == b.r.mean && a.r.variance == b.r.variance);
    p.seed = 10;
    CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), 5, &p, &b.r));
    CHECK(memcmp(a.S, b.S, 5 * sizeof *a.S) != 0);
    /* no bootstrap: NaN bounds; NULL bounds are skipped */
    p.n_bootstrap = 0;
    b.r.first_hi = NULL;
    b.r.total_lo = NULL;
    CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), 5, &p, &b.r));
    CHECK(isnan(b.Slo[0]) && isnan(b.Thi[4]));
    /* the SRFE example's exact indices, loosely */
    double S[5], T[5];
    CHECK_OK(rfx_testfn_sobol(f, S, T));
    for (int i = 0; i < 5; ++i) {
        CHECK_NEAR(a.S[i], S[i], 0.05);
        CHECK_NEAR(a.T[i], T[i], 0.05);
    }
    rfx_testfn_free(f);
}

/* ---- second-order indices ------------------------------------------------ */

typedef struct sobol2_out {
    sobol_out o;
    double S2[64], S2lo[64], S2hi[64];
} sobol2_out;

static void sobol2_out_init(sobol2_out *o)
{
    memset(o, 0, sizeof *o);
    sobol_out_init(&o->o);
    o->o.r.second = o->S2;
    o->o.r.second_lo = o->S2lo;
    o->o.r.second_hi = o->S2hi;
}

/* Monte Carlo S_ik (i < k) against exact ones ex (d x d): each estimate
 * within 4 bootstrap standard errors of the exact value, the standard
 * error read from the 99% percentile interval as its half-width / 2.576,
 * and each interval holding the exact value. Returns the largest error in
 * standard errors. */
static double check_second(const sobol2_out *o, const double *ex, size_t d, const char *what)
{
    double worst = 0;
    for (size_t i = 0; i < d; ++i)
        for (size_t k = i + 1; k < d; ++k) {
            size_t e = i * d + k;
            double lo = o->S2lo[e], hi = o->S2hi[e], se = (hi - lo) / (2 * 2.5758);
            double z = fabs(o->S2[e] - ex[e]) / se;
            CHECK(o->S2[k * d + i] == o->S2[e] && o->S2lo[k * d + i] == lo &&
                  o->S2hi[k * d + i] == hi);
            CHECK_MSG(z <= 4, "%s S_%zu%zu: estimate %.5f, exact %.5f, se %.2e", what, i + 1,
                      k + 1, o->S2[e], ex[e], se);
            CHECK_MSG(lo <= ex[e] && ex[e] <= hi, "%s S_%zu%zu: exact %.5f outside [%.5f, %.5f]",
                      what, i + 1, k + 1, ex[e], lo, hi);
            printf("%s: S_%zu%zu = %.5f [%.5f, %.5f], exact %.5f, error %.1e = %.2f se\n", what,
                   i + 1, k + 1, o->S2[e], lo, hi, ex[e], o->S2[e] - ex[e], z);
            worst = fmax(worst, z);
        }
    for (size_t i = 0; i < d; ++i) {
        CHECK(o->S2[i * d + i] == o->o.S[i]);
        CHECK(o->S2lo[i * d + i] == o->o.Slo[i] && o->S2hi[i * d + i] == o->o.Shi[i]);
    }
    return worst;
}

/* Ishigami, f = sin x1 + a sin^2 x2 + b x3^4 sin x1 on U[-pi, pi]^3: E[f |
 * x1, x3] = a/2 + sin x1 (1 + b x3^4), whose variance is 1/2 + b pi^4/5 +
 * b^2 pi^8/18 (E x^4 = pi^4/5, E x^8 = pi^8/9), less V1 = (1 + b pi^4/5)^2
 * / 2 (and V3 = 0) leaves V13 = b^2 pi^8 (1/18 - 1/50) = 8 b^2 pi^8 / 225;
 * x2 enters alone, so V12 = V23 = 0. V = a^2/8 + b pi^4/5 + b^2 pi^8/18 +
 * 1/2. The G function's ANOVA terms are products: V_ik = V_i V_k, V_i = 1 /
 * (3 (1 + a_i)^2). Second order leaves the first-order and total
 * estimates and intervals bitwise as without it; the design's extra rows
 * do not depend on batch_rows or threads either. */
static void test_sobol_second(void)
{
    const double a = 7, b = 0.1, pi4 = pow(PI, 4), pi8 = pow(PI, 8);
    const double V = a * a / 8 + b * pi4 / 5 + b * b * pi8 / 18 + 0.5, V13 = 8 * b * b * pi8 / 225;
    double ex[9] = { 0 }, worst;
    rfx_testfn *f = make_fn(RFX_TESTFN_ISHIGAMI, 0);
    rfx_sobol_params p = rfx_sobol_params_default();
    sobol2_out o, q;
    ex[2] = ex[6] = V13 / V;
    CHECK_NEAR(ex[2], 0.24368, 1e-5); /* S_T3, all of it interaction with x1 */
    p.n = 100000;
    p.seed = 21;
    p.confidence = 0.99;
    p.second_order = 1;
    sobol2_out_init(&o);
    CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), 3, &p, &o.o.r));
    CHECK(o.o.r.n_evaluations == 100000 * 8);
    worst = check_second(&o, ex, 3, "ishigami");
    printf("ishigami second order, N = 100000: worst error %.2f bootstrap se\n", worst);

    /* without second order: the same first-order and total bits */
    p.second_order = 0;
    sobol_out_init(&q.o);
    CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), 3, &p, &q.o.r));
    CHECK(memcmp(q.o.S, o.o.S, 3 * sizeof *q.o.S) == 0 && memcmp(q.o.T, o.o.T, 3 * sizeof *q.o.T) == 0);
    CHECK(memcmp(q.o.Slo, o.o.Slo, 3 * sizeof *q.o.Slo) == 0 &&
          memcmp(q.o.Thi, o.o.Thi, 3 * sizeof *q.o.Thi) == 0);
    CHECK(q.o.r.mean == o.o.r.mean && q.o.r.variance == o.o.r.variance);
    CHECK(q.o.r.n_evaluations == 100000 * 5);

    /* the same bits for any batch size and thread count */
    p.second_order = 1;
    p.n = 3000;
    p.n_bootstrap = 40;
    p.n_threads = 1;
    sobol2_out_init(&o);
    CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), 3, &p, &o.o.r));
    p.batch_rows = 5;
    p.n_threads = 3;
    sobol2_out_init(&q);
    CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), 3, &p, &q.o.r));
    CHECK(memcmp(o.S2, q.S2, sizeof o.S2) == 0 && memcmp(o.S2lo, q.S2lo, sizeof o.S2lo) == 0 &&
          memcmp(o.S2hi, q.S2hi, sizeof o.S2hi) == 0);
    /* no bootstrap: NaN bounds, NULL bounds skipped */
    p.n_bootstrap = 0;
    q.o.r.second_lo = NULL;
    CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), 3, &p, &q.o.r));
    CHECK(isnan(q.S2hi[1]) && isnan(q.S2hi[0]) && q.S2[1] == o.S2[1]);
    rfx_testfn_free(f);

    /* G function, d = 4 */
    const double ag[4] = { 0, 0.5, 3, 9 };
    double Vi[4], Vg = 1, exg[16] = { 0 };
    rfx_testfn_params gp = rfx_testfn_params_default();
    gp.d = 4;
    gp.coeffs = ag;
    gp.n_coeffs = 4;
    CHECK_OK(rfx_testfn_create(RFX_TESTFN_GFUNCTION, &gp, &f));
    for (int i = 0; i < 4; ++i) {
        Vi[i] = 1.0 / (3 * (1 + ag[i]) * (1 + ag[i]));
        Vg *= 1 + Vi[i];
    }
    Vg -= 1;
    for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 4; ++k)
            if (i != k) exg[i * 4 + k] = Vi[i] * Vi[k] / Vg;
    p = rfx_sobol_params_default();
    p.n = 100000;
    p.seed = 22;
    p.confidence = 0.99;
    p.second_order = 1;
    sobol2_out_init(&o);
    CHECK_OK(rfx_sobol_estimate(rfx_testfn_function, f, rfx_testfn_marginals(f), 4, &p, &o.o.r));
    worst = check_second(&o, exg, 4, "G function");
    printf("G function second order, N = 100000: worst error %.2f bootstrap se\n", worst);
    rfx_testfn_free(f);
}

/* ---- errors from the callback, the progress callback and parameters ---- */

typedef struct failing_fn {
    size_t calls, fail_at;
    rfx_status status;
    int set_message;
    int nan_at_call; /* 0 = never */
} failing_fn;

static rfx_status failing_eval(void *user, rfx_cmat X, double *y)
{
    failing_fn *s = user;
    s->calls++;
    if (s->calls == s->fail_at) {
        if (s->set_message) return rfx__error(s->status, "simulator crashed on its input deck");
        return s->status;
    }
    for (size_t i = 0; i < X.rows; ++i) y[i] = X.data[i * X.stride] + 2 * X.data[i * X.stride + 1];
    if ((int)s->calls == s->nan_at_call) y[X.rows / 2] = NAN;
    return RFX_OK;
}

/* x0 + x1, and NaN at the at-th row of all calls */
typedef struct nan_row_fn {
    size_t seen, at;
} nan_row_fn;

static rfx_status nan_row_eval(void *user, rfx_cmat X, double *y)
{
    nan_row_fn *s = user;
    for (size_t i = 0; i < X.rows; ++i, ++s->seen)
        y[i] = s->seen == s->at ? NAN : X.data[i * X.stride] + X.data[i * X.stride + 1];
    return RFX_OK;
}

static void test_sobol_callback_errors(void)
{
    const rfx_marginal m[2] = { rfx_marginal_uniform(0, 1), rfx_marginal_uniform(0, 1) };
    rfx_sobol_params p = rfx_sobol_params_default();
    sobol_out o;
    failing_fn s = { 0, 3, RFX_EIO, 1, 0 };
    p.n = 1000;
    p.batch_rows = 100;
    sobol_out_init(&o);
    o.S[0] = 42;
    o.r.mean = 42;
    CHECK_STATUS(rfx_sobol_estimate(failing_eval, &s, m, 2, &p, &o.r), RFX_EIO);
    CHECK_ERROR_HAS("simulator crashed on its input deck");
    CHECK_ERROR_HAS("sobol: evaluating");
    CHECK(s.calls == 3); /* stopped at once */
    CHECK(o.S[0] == 42 && o.r.mean == 42);

    /* a callback that leaves no message gets a generic one */
    failing_fn q = { 0, 2, RFX_ENUMERIC, 0, 0 };
    CHECK_STATUS(rfx_sobol_estimate(failing_eval, &q, m, 2, &p, &o.r), RFX_ENUMERIC);
    CHECK_ERROR_HAS("the model callback failed with status 9");

    /* non-finite outputs */
    failing_fn z = { 0, 0, RFX_OK, 0, 4 };
    CHECK_STATUS(rfx_sobol_estimate(failing_eval, &z, m, 2, &p, &o.r), RFX_ENUMERIC);
    CHECK_ERROR_HAS("returned nan");
    CHECK(o.S[0] == 42);

    /* with second order the rows of BA_i are named; nothing is written */
    double S2[4] = { 42, 42, 42, 42 };
    nan_row_fn ba = { 0, 5005 };
    p.second_order = 1;
    p.batch_rows = 6000; /* one block: A, B, AB_0, AB_1, BA_0, BA_1 */
    o.r.second = S2;
    CHECK_STATUS(rfx_sobol_estimate(nan_row_eval, &ba, m, 2, &p, &o.r), RFX_ENUMERIC);
    CHECK_ERROR_HAS("row 5 of BA_1");
    CHECK(o.S[0] == 42 && S2[1] == 42);
    p.batch_rows = 1000; /* blocks of 166 base rows, 996 design rows */
    failing_fn first = { 0, 1, RFX_EIO, 1, 0 };
    CHECK_STATUS(rfx_sobol_estimate(failing_eval, &first, m, 2, &p, &o.r), RFX_EIO);
    CHECK_ERROR_HAS("row 0 of A .. row 165 of BA_1");
}

static rfx_status constant_eval(void *user, rfx_cmat X, double *y)
{
    (void)user;
    for (size_t i = 0; i < X.rows; ++i) y[i] = 3.0;
    return RFX_OK;
}

typedef struct progress_log {
    int calls, stop_after, monotone, saw_bootstrap;
    double last;
} progress_log;

static int progress_cb(void *user, const char *stage, double fraction)
{
    progress_log *l = user;
    int boot = strcmp(stage, "sobol: bootstrap") == 0;
    if (boot && !l->saw_bootstrap) l->last = 0;
    l->saw_bootstrap |= boot;
    if (fraction < l->last || fraction > 1) l->monotone = 0;
    l->last = fraction;
    return ++l->calls == l->stop_after;
}

static void test_sobol_progress_and_params(void)
{
    const rfx_marginal m[2] = { rfx_marginal_uniform(0, 1), rfx_marginal_uniform(0, 1) };
    const double c[2] = { 1, 1 };
    linear_fn l = { c, 2, 0, 0 };
    rfx_sobol_params p = rfx_sobol_params_default();
    sobol_out o;
    progress_log log = { 0, 0, 1, 0, 0 };
    sobol_out_init(&o);
    p.n = 1000;
    p.batch_rows = 500;
    p.progress = progress_cb;
    p.progress_user = &log;
    CHECK_OK(rfx_sobol_estimate(linear_eval, &l, m, 2, &p, &o.r));
    CHECK(log.calls >= 8 && log.monotone && log.saw_bootstrap && log.last == 1.0);
    progress_log stop = { 0, 2, 1, 0, 0 };
    p.progress_user = &stop;
    o.S[0] = 42;
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, &p, &o.r), RFX_ECANCELLED);
    CHECK(o.S[0] == 42);
    p.progress = NULL;

    CHECK_STATUS(rfx_sobol_estimate(constant_eval, NULL, m, 2, &p, &o.r), RFX_ENUMERIC);
    CHECK_ERROR_HAS("constant");

    /* every parameter is validated, naming the field */
    rfx_sobol_params bad = p;
    bad.n = 0;
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, &bad, &o.r), RFX_EINVAL);
    CHECK_ERROR_HAS("params.n");
    bad.n = 1;
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, &bad, &o.r), RFX_EINVAL);
    bad = p;
    bad.confidence = 1.0;
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, &bad, &o.r), RFX_EINVAL);
    CHECK_ERROR_HAS("params.confidence");
    bad.confidence = NAN;
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, &bad, &o.r), RFX_EINVAL);
    bad = p;
    bad.batch_rows = 0;
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, &bad, &o.r), RFX_EINVAL);
    CHECK_ERROR_HAS("params.batch_rows");
    bad = p;
    bad.n_threads = -1;
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, &bad, &o.r), RFX_EINVAL);
    CHECK_ERROR_HAS("params.n_threads");
    bad = p;
    bad.second_order = 2;
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, &bad, &o.r), RFX_EINVAL);
    CHECK_ERROR_HAS("params.second_order");
    bad.second_order = 1; /* o.r.second is NULL */
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, &bad, &o.r), RFX_EINVAL);
    CHECK_ERROR_HAS("out->second");
    CHECK_STATUS(rfx_sobol_estimate(NULL, &l, m, 2, &p, &o.r), RFX_EINVAL);
    CHECK_ERROR_HAS("fn");
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, NULL, &o.r), RFX_EINVAL);
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, &p, NULL), RFX_EINVAL);
    rfx_sobol_result r = o.r;
    r.total = NULL;
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 2, &p, &r), RFX_EINVAL);
    CHECK_ERROR_HAS("out->total");
    rfx_marginal mb[2] = { rfx_marginal_uniform(0, 1), rfx_marginal_uniform(2, NAN) };
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, mb, 2, &p, &o.r), RFX_EINVAL);
    CHECK_ERROR_HAS("marginals[1]");
    mb[1] = rfx_marginal_uniform(2, 1);
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, mb, 2, &p, &o.r), RFX_EINVAL);
    CHECK_ERROR_HAS("a < b");
    CHECK_STATUS(rfx_sobol_estimate(linear_eval, &l, m, 0, &p, &o.r), RFX_EINVAL);
    CHECK_ERROR_HAS("d must be >= 1");
}

/* ---- the model adapter ------------------------------------------------- */

typedef struct predict_fn {
    const rfx_model *m;
    size_t ny, target;
} predict_fn;

static rfx_status predict_eval(void *user, rfx_cmat X, double *y)
{
    predict_fn *s = user;
    double *buf = malloc(X.rows * s->ny * sizeof *buf + 8);
    rfx_status st = rfx_model_predict(s->m, X, rfx_mat_of(buf, X.rows, s->ny), rfx_mat_none());
    for (size_t i = 0; st == RFX_OK && i < X.rows; ++i) y[i] = buf[i * s->ny + s->target];
    free(buf);
    return st;
}

static void test_sobol_model(void)
{
    enum { N = 600, D = 3, NY = 2 };
    rfx_test_rng rng = { 5 };
    double *X = rfx_test_matrix(&rng, N, D, 0, 1), Y[N * NY];
    /* target 0: x0 + 2 x1 (x2 inert); target 1: sin(3 x2) */
    for (size_t i = 0; i < N; ++i) {
        Y[i * NY] = X[i * D] + 2 * X[i * D + 1];
        Y[i * NY + 1] = sin(3 * X[i * D + 2]);
    }
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = 200;
    fp.length_scale = 1.0;
    fp.seed = 1;
    rfx_features *feat = NULL;
    rfx_model *model = NULL;
    rfx_ridge_params rp = rfx_ridge_params_default();
    rp.lambda = 1e-6;
    CHECK_OK(rfx_features_create(&fp, D, &feat));
    CHECK_OK(rfx_ridge_fit(feat, rfx_cmat_of(X, N, D), rfx_cmat_of(Y, N, NY), &rp, &model));

    const rfx_marginal m[D] = { rfx_marginal_uniform(0, 1), rfx_marginal_uniform(0, 1),
                                rfx_marginal_uniform(0, 1) };
    rfx_sobol_params p = rfx_sobol_params_default();
    sobol_out a, b;
    p.n = 2000;
    p.n_bootstrap = 20;
    p.batch_rows = 999;
    for (size_t t = 0; t < NY; ++t) {
        predict_fn s = { model, NY, t };
        sobol_out_init(&a);
        sobol_out_init(&b);
        CHECK_OK(rfx_sobol_model(model, t, m, D, &p, &a.r));
        CHECK_OK(rfx_sobol_estimate(predict_eval, &s, m, D, &p, &b.r));
        CHECK(memcmp(a.S, b.S, D * sizeof *a.S) == 0 && memcmp(a.T, b.T, D * sizeof *a.T) == 0);
        CHECK(a.r.variance == b.r.variance);
    }
    /* second order, with batch_rows between N (d + 2) and N (2 d + 2): the
     * adapter's buffer holds the larger blocks */
    p.n = 150;
    p.second_order = 1;
    for (size_t t = 0; t < NY; ++t) {
        predict_fn s = { model, NY, t };
        double S2a[D * D], S2b[D * D];
        sobol_out_init(&a);
        sobol_out_init(&b);
        a.r.second = S2a;
        b.r.second = S2b;
        CHECK_OK(rfx_sobol_model(model, t, m, D, &p, &a.r));
        CHECK_OK(rfx_sobol_estimate(predict_eval, &s, m, D, &p, &b.r));
        CHECK(memcmp(S2a, S2b, sizeof S2a) == 0 && a.r.n_evaluations == 150 * (2 * D + 2));
    }
    p.n = 2000;
    p.second_order = 0;
    /* target 0 ~ x0 + 2 x1: S = (0.2, 0.8, 0) */
    sobol_out_init(&a);
    CHECK_OK(rfx_sobol_model(model, 0, m, D, &p, &a.r));
    CHECK_NEAR(a.S[0], 0.2, 0.05);
    CHECK_NEAR(a.S[1], 0.8, 0.05);
    CHECK_NEAR(a.T[2], 0.0, 0.02);

    CHECK_STATUS(rfx_sobol_model(model, 0, m, 2, &p, &a.r), RFX_EDIM);
    CHECK_ERROR_HAS("the model has 3");
    CHECK_STATUS(rfx_sobol_model(model, 2, m, D, &p, &a.r), RFX_EINVAL);
    CHECK_ERROR_HAS("target 2");
    CHECK_STATUS(rfx_sobol_model(NULL, 0, m, D, &p, &a.r), RFX_EINVAL);
    rfx_model_free(model);
    rfx_features_free(feat);
    free(X);
}

int main(void)
{
    test_names();
    test_create_errors();
    test_defaults();
    test_gfunction_exact();
    test_ishigami_exact();
    test_friedman_exact();
    check_pairwise_identity(RFX_TESTFN_ISHIGAMI, 3);
    check_pairwise_identity(RFX_TESTFN_FRIEDMAN1, 7);
    check_pairwise_identity(RFX_TESTFN_SRFE, 10);
    check_pairwise_identity(RFX_TESTFN_SRFE, 2);
    test_srfe_exact();
    test_borehole_no_analytic();
    test_otl_wingweight();
    test_eval_values();
    test_sample_reproducible();
    check_moments_mc(RFX_TESTFN_GFUNCTION, 200000, 1);
    check_moments_mc(RFX_TESTFN_ISHIGAMI, 200000, 2);
    check_moments_mc(RFX_TESTFN_FRIEDMAN1, 200000, 3);
    check_moments_mc(RFX_TESTFN_SRFE, 200000, 4);
    test_marginals();
    check_sobol_mc(RFX_TESTFN_ISHIGAMI, 50000, 1, 0.03);
    check_sobol_mc(RFX_TESTFN_GFUNCTION, 20000, 2, 0.03);
    test_sobol_coverage();
    test_sobol_linear();
    test_sobol_reproducible();
    test_sobol_second();
    test_sobol_callback_errors();
    test_sobol_progress_and_params();
    test_sobol_model();
    return rfx_test_finish("test_surrogate_functions");
}
