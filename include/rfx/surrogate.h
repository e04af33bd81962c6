/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/surrogate.h - benchmark functions of surrogate modelling with their
 * exact moments and Sobol indices, and Monte Carlo Sobol sensitivity
 * indices of any model.
 *
 * The conventions of rfx.h hold here too: every fallible call returns an
 * rfx_status with a message in rfx_last_error() naming the bad argument or
 * field; nothing prints or exits; randomness comes only from explicit seeds
 * through the counter-based generator (Philox4x64-10), so results depend on
 * the seed and never on block sizes or thread counts.
 *
 * Sobol indices (Sobol' 1993; Saltelli et al., "Global Sensitivity
 * Analysis: The Primer", Wiley 2008). For independent inputs x_1..x_d and
 * Y = f(x) with variance V, the first-order index of x_i is
 *     S_i  = Var(E[Y | x_i]) / V                (the effect of x_i alone)
 * and the total index is
 *     S_Ti = E[Var(Y | x_~i)] / V               (x_i with all interactions)
 * so 0 <= S_i <= S_Ti <= 1, sum_i S_i <= 1 and sum_i S_Ti >= 1, with
 * equalities exactly when f is additive.
 */
#ifndef RFX_SURROGATE_H
#define RFX_SURROGATE_H

#include "rfx/core.h"
#include "rfx/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Independent input distributions                                           */
/* ------------------------------------------------------------------------ */

/* The distribution of one input. */
#ifndef RFX_MARGINAL_DEFINED
#define RFX_MARGINAL_DEFINED
typedef enum rfx_marginal_kind {
    RFX_MARGINAL_UNIFORM = 0,  /* U[a, b], a < b, both finite                */
    RFX_MARGINAL_NORMAL = 1,   /* N(a, b^2): mean a, standard deviation b > 0 */
    RFX_MARGINAL_LOGNORMAL = 2 /* log x ~ N(a, b^2), b > 0                   */
} rfx_marginal_kind;

typedef struct rfx_marginal {
    rfx_marginal_kind kind;
    double a, b;
} rfx_marginal;
#endif

static inline rfx_marginal rfx_marginal_uniform(double lo, double hi)
{
    rfx_marginal m;
    m.kind = RFX_MARGINAL_UNIFORM; m.a = lo; m.b = hi;
    return m;
}
static inline rfx_marginal rfx_marginal_normal(double mean, double sd)
{
    rfx_marginal m;
    m.kind = RFX_MARGINAL_NORMAL; m.a = mean; m.b = sd;
    return m;
}
static inline rfx_marginal rfx_marginal_lognormal(double mu, double sigma)
{
    rfx_marginal m;
    m.kind = RFX_MARGINAL_LOGNORMAL; m.a = mu; m.b = sigma;
    return m;
}

/* Check d marginals: the message names the first bad one
 * ("marginals[3]: uniform bounds need a < b, got [2, 1]"). */
RFX_API rfx_status rfx_marginals_check(const rfx_marginal *marginals, size_t d);

/* Fill X (n x d, any stride) with independent draws: X(i, j) from
 * marginals[j]. Row i depends only on (seed, i), so the first k rows of a
 * larger sample are the sample of k rows. Normals by Box-Muller from 53-bit
 * uniforms in (0, 1). */
RFX_API rfx_status rfx_marginals_sample(const rfx_marginal *marginals, size_t d, uint64_t seed,
                                        rfx_mat X);

/* ------------------------------------------------------------------------ */
/* Designs: where to run an expensive simulation                             */
/* ------------------------------------------------------------------------ */

/* Space-filling designs of n points in the unit cube (0, 1)^d, for the
 * training runs of a surrogate:
 *   RANDOM  independent uniforms (Philox); row i depends only on (seed, i).
 *   LHS     Latin hypercube (McKay, Beckman & Conover, Technometrics 1979):
 *           in each column every stratum [k/n, (k+1)/n) holds one point, at
 *           a uniform place inside it; the strata of each column in a random
 *           order. Depends on n as a whole.
 *   SOBOL   the Sobol sequence (Sobol' 1967) with the direction numbers of
 *           Joe & Kuo (2008, new-joe-kuo-6.21201) for d <= 1024, in Gray-code
 *           order (Antonov & Saleev 1979), 32 bits: the first 2^m points are
 *           a (t, m, d)-net (every 1-D stratum of width 2^-m holds one
 *           point). Scrambled: a random linear matrix scramble and digital
 *           shift per coordinate (Matousek 1998), which keeps the net
 *           property; unscrambled: the first point is the origin's cell.
 *           Each value is the midpoint of its 2^-32 cell, so none is 0 or 1.
 *           Row i depends only on (seed, i); n <= 2^32.
 *   HALTON  the Halton sequence (points 1 .. n, bases the first d primes),
 *           scrambled by random digit permutations (Owen-type), else the
 *           radical inverse. Row i depends on (seed, i) and the digit count
 *           of n.
 * scramble: 0 for the plain sequence (SOBOL, HALTON; ignored by RANDOM and
 * LHS, which are random by nature). A sample of a distribution: the
 * quantiles of a design, rfx_marginals_quantile. */
typedef enum rfx_design_kind {
    RFX_DESIGN_RANDOM = 0,
    RFX_DESIGN_LHS = 1,
    RFX_DESIGN_SOBOL = 2,
    RFX_DESIGN_HALTON = 3
} rfx_design_kind;

RFX_API const char *rfx_design_name(rfx_design_kind kind);
/* "random", "lhs", "sobol", "halton" */
RFX_API rfx_status rfx_design_from_name(const char *name, rfx_design_kind *out);

/* Fill U (n x d, any stride, n = U.rows, d = U.cols >= 1) with the design.
 * RFX_EINVAL for SOBOL with d > 1024 or n > 2^32, naming the limit. */
RFX_API rfx_status rfx_design_sample(rfx_design_kind kind, uint64_t seed, int scramble, rfx_mat U);

/* X(i, j) = the U(i, j) quantile of marginals[j] (U and X n x d; X may be
 * U): a design or any uniforms mapped to the input distribution. U must
 * lie in (0, 1): anything else is RFX_EINVAL, naming the entry. */
RFX_API rfx_status rfx_marginals_quantile(const rfx_marginal *marginals, size_t d, rfx_cmat U,
                                          rfx_mat X);

/* ------------------------------------------------------------------------ */
/* Test functions                                                            */
/* ------------------------------------------------------------------------ */

/* Benchmark functions with known input distributions. x_0..x_{d-1} are the
 * inputs (0-based); "exact" below means closed forms, or 1-D Gauss-Legendre
 * quadrature of smooth integrands that is exact to rounding (~1e-15).
 *
 * GFUNCTION  Sobol' G-function on U[0,1]^d (Saltelli & Sobol' 1995):
 *              g(x) = prod_i (|4 x_i - 2| + a_i) / (1 + a_i),  a_i >= 0.
 *            Default d = 20, a = (1, 2, 5, 10, 20, 100, 5000, ..., 5000)
 *            (the coefficients of the appliedAI talk's experiment; for
 *            d < 6 the first d of them). Exact: mean 1, V_i = 1 / (3 (1 +
 *            a_i)^2), V = prod_i (1 + V_i) - 1, S_i = V_i / V,
 *            S_Ti = V_i prod_{j != i} (1 + V_j) / V.
 * ISHIGAMI   Ishigami & Homma (1990) on U[-pi, pi]^3:
 *              f = sin x_0 + a sin^2 x_1 + b x_2^4 sin x_0,
 *            default a = 7, b = 0.1. Exact (Sobol' & Levitan 1999): mean
 *            a/2, V_0 = (1 + b pi^4/5)^2 / 2, V_1 = a^2/8, V_2 = 0,
 *            V_02 = 8 b^2 pi^8 / 225, V = a^2/8 + b pi^4/5 + b^2 pi^8/18
 *            + 1/2; S_T0 = (V_0 + V_02)/V, S_T1 = V_1/V, S_T2 = V_02/V.
 *            a = 7, b = 0.1: S = (0.3139, 0.4424, 0), S_T = (0.5576,
 *            0.4424, 0.2437).
 * FRIEDMAN1  Friedman (1991) #1 on U[0,1]^d, d >= 5 (default 10, as
 *            scikit-learn's make_friedman1; x_5.. are inert), no noise:
 *              f = 10 sin(pi x_0 x_1) + 20 (x_2 - 1/2)^2 + 10 x_3 + 5 x_4.
 *            Exact: the last three terms are additive with variances 20/9,
 *            25/3, 25/12; for h = 10 sin(pi x_0 x_1), E[h | x_0 = t] =
 *            10 (1 - cos(pi t)) / (pi t), so E h, E h^2 and V_0 = V_1 are
 *            1-D integrals (closed forms in Si and Ci), V_01 = Var h - 2 V_0.
 *            Mean 14.41329734241986, V = 23.82646377138100.
 * BOREHOLE   Water flow through a borehole (Harper & Gupta 1983; Morris et
 *            al. 1993), d = 8: x = (rw, r, Tu, Hu, Tl, Hl, L, Kw),
 *              f = 2 pi Tu (Hu - Hl) / (ln(r/rw) (1 + 2 L Tu /
 *                  (ln(r/rw) rw^2 Kw) + Tu / Tl))   [m^3/yr],
 *            rw ~ N(0.10, 0.0161812), r ~ lognormal(7.71, 1.0056),
 *            Tu ~ U[63070, 115600], Hu ~ U[990, 1110], Tl ~ U[63.1, 116],
 *            Hl ~ U[700, 820], L ~ U[1120, 1680], Kw ~ U[9855, 12045].
 *            No analytic moments or indices (RFX_EINVAL): estimate them
 *            with rfx_sobol_estimate. rw <= 0 (probability 3e-10 per draw)
 *            is outside the domain and makes evaluation fail.
 * SRFE       The order-2 example after Hashemi et al. (2021, arXiv
 *            2103.03191), as specified for rfx, d >= 2 (default 10):
 *              f = (1/d) sum_{i=0}^{d-2} exp(-x_i^2) / (1 + x_{i+1}^2)
 *            on U[-1,1]^d (the input distribution is rfx's choice; the
 *            paper's text was not checked). Each term is p(x_i) q(x_{i+1})
 *            with E p = sqrt(pi)/2 erf(1), E p^2 = sqrt(pi/8) erf(sqrt 2),
 *            E q = pi/4, E q^2 = 1/4 + pi/8 and E[p q] (1-D quadrature), so
 *            the ANOVA terms are exact: first order in x_k from the two
 *            terms holding x_k, second order (1/d^2) Var p Var q per pair.
 * OTL        The mid-point voltage of an output transformerless push-pull
 *            circuit (Ben-Ari & Steinberg 2007; Surjanovic & Bingham's
 *            Virtual Library of Simulation Experiments), d = 6:
 *            x = (Rb1, Rb2, Rf, Rc1, Rc2, beta), with
 *              Vb1 = 12 Rb2 / (Rb1 + Rb2),  B = beta (Rc2 + 9),
 *              f = (Vb1 + 0.74) B / (B + Rf) + 11.35 Rf / (B + Rf)
 *                  + 0.74 Rf B / ((B + Rf) Rc1)   [volts],
 *            Rb1 ~ U[50, 150], Rb2 ~ U[25, 70], Rf ~ U[0.5, 3],
 *            Rc1 ~ U[1.2, 2.5], Rc2 ~ U[0.25, 1.2] (resistances in
 *            kOhm), beta ~ U[50, 300] (current gain). No analytic moments
 *            or indices (RFX_EINVAL). Inputs where a denominator vanishes
 *            are outside the domain.
 * WINGWEIGHT The weight of a light aircraft's wing (Forrester, Sobester &
 *            Keane 2008; Surjanovic & Bingham), d = 10:
 *            x = (Sw, Wfw, A, Lambda, q, lambda, tc, Nz, Wdg, Wp),
 *              f = 0.036 Sw^0.758 Wfw^0.0035 (A / cos^2 Lambda)^0.6
 *                  q^0.006 lambda^0.04 (100 tc / cos Lambda)^-0.3
 *                  (Nz Wdg)^0.49 + Sw Wp   [lb],
 *            Sw ~ U[150, 200], Wfw ~ U[220, 300], A ~ U[6, 10],
 *            Lambda ~ U[-10, 10] (the sweep angle, in DEGREES: converted
 *            to radians inside), q ~ U[16, 45], lambda ~ U[0.5, 1],
 *            tc ~ U[0.08, 0.18], Nz ~ U[2.5, 6], Wdg ~ U[1700, 2500],
 *            Wp ~ U[0.025, 0.08]. No analytic moments or indices
 *            (RFX_EINVAL). The domain is where the powers are real: Sw,
 *            Wfw, A, q, lambda, tc and Nz Wdg > 0, and cos Lambda > 0. */
typedef enum rfx_testfn_kind {
    RFX_TESTFN_GFUNCTION = 0,
    RFX_TESTFN_ISHIGAMI = 1,
    RFX_TESTFN_FRIEDMAN1 = 2,
    RFX_TESTFN_BOREHOLE = 3,
    RFX_TESTFN_SRFE = 4,
    RFX_TESTFN_OTL = 5,
    RFX_TESTFN_WINGWEIGHT = 6
} rfx_testfn_kind;

/* The name of a kind ("gfunction", "ishigami", "friedman1", "borehole",
 * "srfe", "otl", "wingweight"), or NULL for a value that is not a kind: the
 * kinds are 0, 1, ... up to the first NULL. */
RFX_API const char *rfx_testfn_name(rfx_testfn_kind kind);

/* A one-line description of a kind (formula and inputs), or NULL. */
RFX_API const char *rfx_testfn_description(rfx_testfn_kind kind);

/* The kind of a name (also "g-function" and "sobol-g", "otl-circuit" and
 * "wing-weight"); RFX_EINVAL for an unknown name, with the list of names in
 * the message. */
RFX_API rfx_status rfx_testfn_from_name(const char *name, rfx_testfn_kind *out);

typedef struct rfx_testfn_params {
    size_t d;             /* inputs; 0 (default) = the kind's default       */
    const double *coeffs; /* NULL (default) for the documented defaults, or
                             GFUNCTION: d values a_i >= 0;
                             ISHIGAMI: 2 values (a, b). Copied at create. */
    size_t n_coeffs;      /* entries in coeffs                             */
} rfx_testfn_params;

RFX_API rfx_testfn_params rfx_testfn_params_default(void);

/* A test function with its dimension and coefficients. */
typedef struct rfx_testfn rfx_testfn;

/* Make a test function; params may be NULL for the defaults. Dimensions
 * outside the kind's range and coefficients of the wrong count or value
 * are RFX_EINVAL naming the field. */
RFX_API rfx_status rfx_testfn_create(rfx_testfn_kind kind, const rfx_testfn_params *params,
                                     rfx_testfn **out);
RFX_API void rfx_testfn_free(rfx_testfn *f);

/* The kind (f not NULL) and the number of inputs d (0 for NULL). */
RFX_API rfx_testfn_kind rfx_testfn_get_kind(const rfx_testfn *f);
RFX_API size_t rfx_testfn_dim(const rfx_testfn *f);

/* The coefficients in use (d a_i for GFUNCTION, (a, b) for ISHIGAMI; NULL
 * and *n = 0 for the others); owned by f. n may be NULL. */
RFX_API const double *rfx_testfn_coeffs(const rfx_testfn *f, size_t *n);

/* The input distribution: d marginals, owned by f. */
RFX_API const rfx_marginal *rfx_testfn_marginals(const rfx_testfn *f);

/* y[i] = f(row i of X); X is n x d. Non-finite inputs, and inputs outside
 * the domain (borehole: rw <= 0, r <= 0, or a non-finite value; otl and
 * wingweight: as above rfx_testfn_kind, or a non-finite value), are
 * RFX_EINVAL naming the row; y is then left untouched. */
RFX_API rfx_status rfx_testfn_eval(const rfx_testfn *f, rfx_cmat X, double *y);

/* Draw X (n x d) from the input distribution (rfx_marginals_sample with the
 * same seed) and evaluate y (n values). X and y may have been written when
 * the evaluation fails (borehole's rw <= 0). */
RFX_API rfx_status rfx_testfn_sample(const rfx_testfn *f, uint64_t seed, rfx_mat X, double *y);

/* Exact mean and variance of f under its input distribution (either output
 * may be NULL). RFX_EINVAL for BOREHOLE, OTL and WINGWEIGHT. */
RFX_API rfx_status rfx_testfn_moments(const rfx_testfn *f, double *mean, double *variance);

/* Exact first-order and total Sobol indices, d values each (either may be
 * NULL). RFX_EINVAL "no analytic Sobol indices for borehole" (likewise otl
 * and wingweight). */
RFX_API rfx_status rfx_testfn_sobol(const rfx_testfn *f, double *first, double *total);

/* ------------------------------------------------------------------------ */
/* Sobol indices by Monte Carlo                                              */
/* ------------------------------------------------------------------------ */

/* A model to analyse: y[i] = f(row i of X) for X (n x d, any stride). Return
 * RFX_OK, or an error status that stops the analysis: rfx_sobol_estimate
 * then returns that status, with the message left in rfx_last_error() (a
 * generic one naming the rows when the callback left none). Called from
 * the calling thread only, with at most batch_rows rows at a time. */
typedef rfx_status (*rfx_function_fn)(void *user, rfx_cmat X, double *y);

/* An rfx_function_fn evaluating a test function: pass the rfx_testfn as
 * user. */
RFX_API rfx_status rfx_testfn_function(void *user, rfx_cmat X, double *y);

typedef struct rfx_sobol_params {
    size_t n;              /* base samples N >= 2; the model is evaluated
                              N (d + 2) times, N (2 d + 2) with
                              second_order; default 10000                  */
    uint64_t seed;         /* default 0                                    */
    size_t n_bootstrap;    /* resamples for the confidence intervals,
                              default 200; 0 = no intervals (NaN bounds)   */
    double confidence;     /* interval level in (0, 1), default 0.95       */
    size_t batch_rows;     /* at most this many rows per model call
                              (bounds the input buffer); default 4096      */
    int n_threads;         /* bootstrap threads; 0 = OpenMP default        */
    rfx_progress_fn progress; /* optional: stages "sobol: evaluating" and
                                 "sobol: bootstrap"                         */
    void *progress_user;
    int second_order;      /* 1: also the second-order indices S_ij (into
                              out->second), at N d more evaluations;
                              default 0                                    */
} rfx_sobol_params;

RFX_API rfx_sobol_params rfx_sobol_params_default(void);

/* Results. The caller points first and total (required) and the interval
 * bounds (optional, NULL to skip) at arrays of d doubles; with
 * params.second_order, second (then required) and its bounds (optional) at
 * arrays of d x d doubles, which are not read otherwise. The call fills
 * them and the scalars, and writes nothing on failure. */
typedef struct rfx_sobol_result {
    double *first, *total;       /* S_i, S_Ti estimates                     */
    double *first_lo, *first_hi; /* bootstrap percentile interval of S_i    */
    double *total_lo, *total_hi; /* ... of S_Ti                             */
    double mean, variance;       /* of the output, from the 2N points of A
                                    and B                                   */
    size_t n_evaluations;        /* N (d + 2), N (2 d + 2) with second order */
    double *second;              /* d x d row-major, symmetric: S_ij off the
                                    diagonal, S_i on it (the layout of
                                    rfx_sobol_model_exact's second)         */
    double *second_lo, *second_hi; /* ... its bootstrap percentile interval
                                      (first_lo / first_hi on the diagonal) */
} rfx_sobol_result;

/* Estimate Sobol indices of fn under independent inputs with the given d
 * marginals. Design (Saltelli et al., "Variance based sensitivity analysis
 * of model output", Comput. Phys. Commun. 181, 2010): two independent N x d
 * samples A and B, and AB_i = A with column i taken from B. With outputs
 * centred at the mean of f(A) and f(B), and V their variance:
 *     S_i  = (1/N) sum_j f(B)_j (f(AB_i)_j - f(A)_j) / V       (Saltelli 2010)
 *     S_Ti = (1/2N) sum_j (f(A)_j - f(AB_i)_j)^2 / V          (Jansen 1999)
 * With second_order, also BA_i = B with column i taken from A. BA_i and
 * AB_k (i != k) share exactly inputs i and k, so the mean of the products
 * of their outputs estimates E[E(f | x_i, x_k)^2] (Saltelli, "Making best
 * use of model evaluations to compute sensitivity indices", Comput. Phys.
 * Commun. 145, 2002), and with the first-order estimates above
 *     S_ik = (1/N) sum_j (f(BA_i)_j f(AB_k)_j - f(A)_j f(B)_j) / V
 *            - S_i - S_k                           (i < k; SALib's form),
 * the pure interaction: the closed index V^c_ik / V less S_i and S_k.
 * Asking for it leaves the first-order and total estimates and their
 * intervals bitwise as they are without it.
 * Estimates carry Monte Carlo error of order 1/sqrt(N) and may fall
 * slightly outside [0, 1] (S_ik slightly below 0). Intervals: the
 * percentile bootstrap over the N base rows (each resample recomputes V
 * and every index), resample b drawn from (seed, b); OpenMP over
 * resamples. Row j of A and B depends only on (seed, j): results are
 * identical for every batch_rows and n_threads. Memory: N (d + 2) outputs
 * (N (2 d + 2) with second order), 2 d n_bootstrap replicates (2 d +
 * d (d - 1) / 2 per resample with second order), and an input buffer of
 * max(batch_rows, d + 2) rows (2 d + 2 with second order). A constant
 * output (V = 0) is RFX_ENUMERIC, a non-finite output RFX_ENUMERIC naming
 * the row (of A, B, AB_i or BA_i). */
RFX_API rfx_status rfx_sobol_estimate(rfx_function_fn fn, void *user,
                                      const rfx_marginal *marginals, size_t d,
                                      const rfx_sobol_params *params, rfx_sobol_result *out);

/* The same for target column `target` of a fitted model (its predictions,
 * rfx_model_predict): marginals describe the model's d inputs in the units
 * of the data it was fitted on (RFX_EDIM when d differs). */
RFX_API rfx_status rfx_sobol_model(const rfx_model *m, size_t target,
                                   const rfx_marginal *marginals, size_t d,
                                   const rfx_sobol_params *params, rfx_sobol_result *out);

/* ------------------------------------------------------------------------ */
/* Exact Sobol indices of random-feature models                              */
/* ------------------------------------------------------------------------ */

/* The mean, variance and Sobol indices of a random-feature model in closed
 * form (no sampling; exact up to rounding), for independent uniform or
 * normal inputs in the units of the data the model was fitted on.
 *
 * The model. One target; cos or sin features (RFX_ACTIVATION_COS / _SIN)
 * in the cos-bias form, cos features in the cos-sin form, or sin features
 * in the phase-free form (b = 0); dense or q-sparse frequencies,
 * any kernel, length scales or weight distribution; with or without the
 * stored scaler (x_std = (x - x_mean) / x_scale). Folding the scaler into
 * the frequencies, v_j = w_j / x_scale, and centring the inputs,
 * y = x - mu (mu_k = (a + b)/2 for U[a, b], a for N(a, b^2)), makes it
 *     f(x) = c0 + Re sum_j a_j exp(i v_j . y)
 * with complex amplitudes a_j (c s e^{i theta_j} for c s cos(w.x_std + b),
 * -i c s e^{i theta_j} for sin, (c - i c') s e^{i theta_j} for the cos-sin
 * pair of weights c, c'; s the features' scale, theta_j the phase at mu).
 * Each centred input has a real characteristic function rho_k:
 * sin(h t)/(h t), h = (b - a)/2, for U[a, b]; exp(-b^2 t^2 / 2) for
 * N(a, b^2).
 *
 * The formulas. By independence E exp(i v.y) = prod_k rho_k(v_k), so
 *     E f = c0 + sum_j Re(a_j) prod_k rho_k(v_jk),
 * and each exp(i v.y) = prod_k (rho_k(v_k) + [exp(i v_k y_k) - rho_k(v_k)])
 * is its own ANOVA (Hoeffding-Sobol) decomposition (Sobol', "Sensitivity
 * estimates for nonlinear mathematical models", Math. Model. Comput. Exp.
 * 1, 1993). With C_k(s, t) = rho_k(s + t) - rho_k(s) rho_k(t), the
 * covariance of exp(i s y_k) and exp(i t y_k), the variance of the ANOVA
 * term of a set of inputs u is
 *     V_u = 1/2 sum_{j,l} Re[ a_j a_l        P_u(v_j,  v_l)
 *                           + a_j conj(a_l)  P_u(v_j, -v_l) ],
 *     P_u(s, t) = prod_{k in u} C_k(s_k, t_k) prod_{k not in u} rho_k(s_k) rho_k(t_k),
 * and summing over sets gives, with the same double sum and in place of
 * P_u:
 *     V   = Var f             prod_k rho_k(s_k + t_k) - prod_k rho_k(s_k) rho_k(t_k)
 *     V_i = Var E[f | x_i]    P_{i}
 *     T_i = E Var(f | x_~i)   C_i(s_i, t_i) prod_{k != i} rho_k(s_k + t_k)
 *     V_ik (pure interaction) P_{i,k}
 * and S_i = V_i / V, S_Ti = T_i / V, S_ik = V_ik / V (the definitions of
 * the header's top; Saltelli et al., Comput. Phys. Commun. 181, 2010). T_i
 * is computed as that expectation, never as 1 - Var E[f | x_~i] / V,
 * whose rounding error (~1e-16) swamps a small total index; V is a
 * telescoped sum of the C_k, never a difference of two sums. A pair
 * contributes to V_i, T_i and V_ik only when both v_j and v_l involve the
 * inputs, and to V only when they share one: for q-sparse maps most pairs
 * are skipped at the cost of a merge of the two supports.
 *
 * The cost: n (n + 1) / 2 pairs of the n features with nonzero weight
 * (SRFE models keep few), O(shared inputs) each, O(shared inputs^2) with
 * second; no libm call per pair for uniform inputs, two exponentials per
 * shared normal input. OpenMP over fixed blocks of pairs, so the result
 * does not depend on the thread count. Measured on one x86-64 core: an
 * SRFE model with 790 nonzero of 8000 2-sparse features in d = 20, 13 ms;
 * a dense model of 2048 frequencies in d = 20, 1.5 s (uniform inputs) or
 * 0.7 s (normal), 1.3 to 1.8 times that with second.
 *
 * Outputs (any may be NULL; written only on success): mean, variance, first
 * and total (d values: S_i, S_Ti), second (d x d row-major: S_ik off the
 * diagonal, symmetric; S_i on it). A model of zero variance (all weights
 * zero) has mean c0, variance 0 and all indices 0.
 *
 * Errors: model NULL (RFX_EINVAL); bad marginals (rfx_marginals_check's
 * message); d different from the model's inputs (RFX_EDIM); and, each
 * RFX_EINVAL naming the reason, so that a caller can fall back to
 * rfx_sobol_model: lognormal marginals (no closed-form characteristic
 * function), models of several targets, models without a feature map
 * (polynomial chaos: rfx_pce_sobol has its exact indices), activations
 * other than cos and sin. RFX_ENUMERIC when a weight, phase or scaled
 * frequency is not finite, or the moments overflow. */
RFX_API rfx_status rfx_sobol_model_exact(const rfx_model *model, const rfx_marginal *marginals,
                                         size_t d, double *mean, double *variance,
                                         double *first, double *total, double *second);

#ifdef __cplusplus
}
#endif

#endif /* RFX_SURROGATE_H */
