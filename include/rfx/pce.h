/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/pce.h - polynomial chaos expansions (PCE): the baseline surrogate.
 *
 * A PCE writes a model output as a finite sum of multivariate polynomials
 * that are orthonormal under the input distribution (Xiu & Karniadakis 2002;
 * Sudret 2008, "Global sensitivity analysis using polynomial chaos
 * expansions"):
 *
 *     f(x) ~ sum_k c_k psi_{a_k}(x),    psi_a(x) = prod_i psi^(i)_{a_i}(t_i),
 *
 * over multi-indices a_k in N^d, where t_i is x_i mapped to the standard
 * variable of its marginal and psi^(i)_n the degree-n orthonormal polynomial
 * of that standard variable:
 *
 *   UNIFORM on [a, b]:   t = (2 x - a - b) / (b - a) ~ U(-1, 1),
 *                        psi_n(t) = sqrt(2 n + 1) P_n(t)   (Legendre);
 *   NORMAL N(mu, s^2):   t = (x - mu) / s ~ N(0, 1),
 *                        psi_n(t) = He_n(t) / sqrt(n!)     (probabilists'
 *                        Hermite);
 *   LOGNORMAL, log x ~ N(mu, s^2): t = (log x - mu) / s ~ N(0, 1), the
 *                        Hermite polynomials of t; x must be > 0.
 *
 * Both have positive leading coefficients, as OpenTURNS' factories do, so
 * coefficients can be compared term by term. Inputs are independent.
 * Because E[psi_a psi_b] = delta_ab, the moments and the Sobol indices of
 * the expansion follow from its coefficients alone:
 *
 *     mean = c_0 (the coefficient of a = 0),  variance = sum_{a != 0} c_a^2,
 *     S_i  = sum over a with a_i > 0 and a_j = 0 (j != i) of c_a^2 / variance,
 *     ST_i = sum over a with a_i > 0 of c_a^2 / variance,
 *     S_ij = sum over a with a_i > 0, a_j > 0 and a_k = 0 (k != i, j) of
 *            c_a^2 / variance   (i != j: the second-order index).
 *
 * Candidate bases: all a with |a|_q = (sum_i a_i^q)^(1/q) <= p, where p is
 * the degree and q in (0, 1] the hyperbolic truncation (Blatman & Sudret
 * 2011): q = 1 is the total-degree basis with C(d + p, p) terms; smaller q
 * drops high-order interactions. Terms are ordered by total degree, and
 * within one total degree lexicographically from the largest first
 * component, as OpenTURNS' LinearEnumerateFunction orders them: for d = 2,
 * (0,0) (1,0) (0,1) (2,0) (1,1) (0,2) ...
 *
 * Fitting (rfx_pce_fit):
 *   LSQ   ordinary least squares on the whole candidate basis, by a
 *         Householder QR of the n x P design matrix (LAPACK dgeqrf), not by
 *         the normal equations, which square its condition number: random
 *         Hermite designs of degree 10..12 in d = 3 have condition numbers
 *         of 1e4..1e6 (Legendre ones about 1e2), so Cholesky would lose up
 *         to 12 digits where QR loses 6 at most, and no ridge is needed.
 *   LARS  least-angle regression (Efron et al. 2004, the LAR variant) over
 *         the candidates, the constant always in; each model on the path is
 *         refitted by least squares on its terms ("hybrid LARS") and scored
 *         by the corrected leave-one-out error; the best one is kept
 *         (Blatman & Sudret 2011, J. Comput. Phys. 230, 2345-2367;
 *         OpenTURNS' LARS + CorrectedLeaveOneOut).
 * The leave-one-out residuals of a least-squares fit come from one fit:
 * e_i = r_i / (1 - h_i), h_i the diagonal of the hat matrix. With the
 * sample variance s_y^2 of y (divisor n - 1):
 *     loo_mse       = (1/n) sum e_i^2
 *     loo_relative  = loo_mse / s_y^2
 *     loo_corrected = loo_relative * n / (n - P) * (1 + tr((Psi^T Psi)^-1))
 * (Chapelle, Vapnik & Bengio, Machine Learning 48, 2002; Blatman & Sudret
 * 2011), P the number of terms. With a degree range the degree of least
 * loo_corrected is chosen.
 *
 * Row weights (sample_weight, w_i >= 0): the rows of weight 0 are dropped
 * first (n then counts the rows of positive weight, also for the automatic
 * basis and the marginals from the data); with v_i = n w_i / sum w
 * (relative weights: scaling them all changes nothing, and equal weights
 * are no weights, bit for bit) every fit is that of the rows of Psi and y
 * scaled by sqrt(v_i): weighted least squares, min sum_i w_i (y_i -
 * f(x_i))^2, whose coefficients are those of the rows repeated by integer
 * weights. LARS runs on the scaled rows, its constant column sqrt(v). The
 * leave-one-out residuals are those of the weighted fit, e_i = r_i / (1 -
 * h_i) with the weighted leverages h_i = w_i psi_i^T (Psi^T W Psi)^-1
 * psi_i, averaged with the weights: loo_mse = sum_i w_i e_i^2 / sum w,
 * s_y^2 the weighted variance (sum_i v_i (y_i - ybar_w)^2 / (n - 1)) and
 * tr((Psi^T V Psi)^-1) in the correction. Each weighted row is one
 * observation, left out whole: the LOO errors, and so LARS's model and the
 * degree they choose, differ from those of rows repeated (where one copy
 * is left out at a time).
 *
 * Conventions are those of rfx.h: every fallible call returns rfx_status,
 * rfx_last_error() names the bad field, _free(NULL) is a no-op, outputs are
 * written only on success.
 */
#ifndef RFX_PCE_H
#define RFX_PCE_H

#include "rfx/core.h"
#include "rfx/model.h"
#include "rfx/surrogate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Input marginals                                                           */
/* ------------------------------------------------------------------------ */

/* rfx_marginal (the input distributions) comes from rfx/surrogate.h, which
 * rfx.h includes; PCE takes the UNIFORM, NORMAL and LOGNORMAL kinds. */

/* ------------------------------------------------------------------------ */
/* Fitting                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum rfx_pce_method {
    RFX_PCE_METHOD_LSQ = 0, /* least squares on every candidate term         */
    RFX_PCE_METHOD_LARS = 1 /* sparse: LARS path, corrected leave-one-out    */
} rfx_pce_method;

/* The largest degree of one variable in a multi-index. */
#define RFX_PCE_MAX_DEGREE 1000u

typedef struct rfx_pce_params {
    const rfx_marginal *marginals; /* d input marginals (required); copied   */
    size_t degree;          /* p >= 1, the maximal total degree; default 3   */
    size_t degree_min;      /* 0 (default): fit degree p only. Else every
                               degree in degree_min..degree is fitted and the
                               one of least corrected LOO error is kept (the
                               sweep stops at the first degree with more
                               terms than rows for LSQ, or whose design
                               matrix is rank deficient)                    */
    double q_norm;          /* hyperbolic truncation q in (0, 1]; default 1 */
    size_t max_interaction; /* at most this many variables per term;
                               0 (default) = no limit                       */
    const unsigned *basis;  /* optional: an explicit candidate basis of
                               basis_terms multi-indices (basis_terms x d,
                               row-major, entries <= RFX_PCE_MAX_DEGREE, no
                               repeats; LARS needs the zero index among
                               them). Replaces degree, degree_min, q_norm and
                               max_interaction, which are then not read.
                               Default NULL                                  */
    size_t basis_terms;     /* rows of basis                                  */
    rfx_pce_method method;  /* default RFX_PCE_METHOD_LSQ                    */
    size_t max_candidates;  /* refuse candidate bases larger than this
                               (the design matrix takes 8 n P bytes);
                               default 50000                                 */
    double lars_error_factor; /* LARS stops once the corrected LOO error
                                 exceeds this multiple of the best so far
                                 (OpenTURNS' MaximumErrorFactor); >= 1,
                                 default 2; INFINITY walks the whole path   */
    size_t lars_max_terms;  /* LARS: at most this many terms (with the
                               constant); 0 (default) = up to n - 1         */
    int n_threads;          /* design matrix, LARS correlations and predict;
                               0 = OpenMP default. Results do not depend on
                               it                                            */
    int auto_basis;         /* 1: choose the candidate basis (degree is then
                               not read), as rfx fit --method pce does: the
                               largest total degree P <= 10 whose C(d + P, P)
                               terms are at most 10000 (at least degree_min),
                               or beyond 10 up to 20 while they are at most
                               min(2 n, 10000) (d <= 3 at n = 500); a degree
                               above 10 is kept only when its corrected LOO
                               error is below half the best of the lower
                               ones, and the sweep stops after two that are
                               not (noisy data then stop where the sweep to
                               10 does); up to degree 10 the sweep stops
                               after two degrees in a row whose corrected
                               LOO error is above twice the best; and for
                               d >= 3, q_norm
                               1 and no
                               max_interaction, also the pairwise basis
                               (terms of at most two inputs) of the largest
                               degree P2 <= 10 with 1 + d P2 + C(d, 2)
                               C(P2, 2) <= min(4 n, 10000) terms, when P2 >
                               P (swept the same way); and with LARS, when
                               the total-degree sweep kept a degree below
                               P (its basis outgrew the rows), the
                               hyperbolic basis q = 0.5 (sum_i sqrt(a_i) <=
                               sqrt(Ph)) of the largest degree Ph <= 10
                               with at most min(4 n, 10000) terms (swept
                               the same way); the
                               fit of lower corrected leave-one-out
                               error is kept. Then the screened fit: the
                               same choice on the inputs whose total Sobol
                               index in that fit is at least a tenth of its
                               relative corrected LOO error, when that
                               leaves some out and the fewer inputs reach a
                               higher degree; kept when its corrected LOO
                               error is lower (rfx_pce_info.n_screened).
                               Default 0                                   */
    int marginals_from_data; /* 1 with marginals NULL: the marginals from
                               the rows (of positive weight). First every
                               input uniform on its training [min, max] (a
                               constant column: [x - 1/2, x + 1/2]). Then
                               each column's family of greatest likelihood
                               among uniform on the range, normal (mean, sd)
                               and, for a column > 0, lognormal (mean, sd of
                               log x), a later one only when its
                               log-likelihood is larger by more than log n,
                               and a normal one (of x or of log x) only when
                               the skewness there is within 3 sqrt(6 / n)
                               of 0;
                               when some input is then not uniform, that fit
                               too, and the one of lower corrected LOO error
                               is kept (a tie: uniform). A kept fit with
                               normal or lognormal inputs records its rows'
                               range (its span) and is continued linearly
                               beyond it, in t, as rfx_pce_predict continues
                               a uniform input. Default 0                  */
    const double *sample_weight; /* a weight per row of X (finite, >= 0, not
                               all zero), or NULL (default) for 1 each; see
                               "Row weights" above                         */
} rfx_pce_params;

/* The defaults documented in the struct (marginals NULL: they must be set). */
RFX_API rfx_pce_params rfx_pce_params_default(void);

/* RFX_OK when the parameters are valid for rfx_pce_fit whatever the data,
 * else RFX_EINVAL with a message naming the field ("pce.degree: ..."): the
 * check rfx_pce_fit makes first, for use before any data is read. With
 * auto_basis (and no basis) the degree is not read, and degree_min must be
 * at most RFX_PCE_MAX_DEGREE. What depends on the d inputs is checked by
 * the fit: each of the d marginals, max_interaction <= d, the entries of a
 * basis and the size of the candidate basis. RFX_EINVAL for NULL, and for
 * marginals NULL without marginals_from_data. */
RFX_API rfx_status rfx_pce_params_check(const rfx_pce_params *p);

/* A fitted (or assembled) expansion: marginals, multi-indices and
 * coefficients. Self-contained: it does not refer to the params or data. */
typedef struct rfx_pce rfx_pce;

/* Fit a PCE to X (n x d, d = the number of marginals, finite) and y (n
 * finite values). Every parameter is validated, the message naming the
 * field; the errors of rfx_pce_params_check come first, before the data is
 * looked at. Errors: RFX_EINVAL (bad params, n too small: LSQ needs n >= P,
 * LARS n >= 2), RFX_EDIM, RFX_EPARSE (non-finite data), RFX_EOVERFLOW
 * (C(d + p, p) overflows size_t), RFX_ENUMERIC (LSQ design matrix of
 * deficient rank, e.g. repeated points), RFX_ENOMEM.
 * Cost: LSQ 2 n P^2 flops (QR) per degree, P the candidates; LARS per step
 * k of its path 2 n P flops (the correlations of the candidates, threaded)
 * and about 6 n k for the hybrid refit and the direction. Memory: the n x P
 * design matrix, plus n x (path length) for LARS. */
RFX_API rfx_status rfx_pce_fit(const rfx_pce_params *params, rfx_cmat X, const double *y,
                               rfx_pce **out);

/* An expansion from given terms: d marginals, n_terms multi-indices alpha
 * (n_terms x d, row-major, entries <= RFX_PCE_MAX_DEGREE, no repeats) and
 * their coefficients; all copied. For expansions computed elsewhere (e.g.
 * OpenTURNS) and for loading saved ones. n_terms may be 0 (f = 0). */
RFX_API rfx_status rfx_pce_create(size_t d, const rfx_marginal *marginals, size_t n_terms,
                                  const unsigned *alpha, const double *coef, rfx_pce **out);

RFX_API void rfx_pce_free(rfx_pce *pce);

/* y[i] = f(X_i) for the n rows of X (n x d; any stride). Cost n (d p +
 * sum of the terms' active variables). Beyond the support [a, b] of a
 * uniform marginal the polynomials are trusted only a little way: up to
 * |t| = 1 + 1 / (2 p_i^2) in the standard variable t, p_i the input's
 * largest degree in the expansion, where a polynomial of degree p_i is at
 * most cosh(1) ~ 1.54 times its largest value on [-1, 1] (the Chebyshev
 * bound |P(t)| <= |T_p(t)| max |P|). Farther out the expansion continues
 * linearly: a point x is given f(c) + sum_i (x_i - c_i) df/dx_i(c), c the
 * point clamped to those edges (the tangent plane there), instead of the
 * polynomials' own growth, of order |t|^p, which turns a sample's extreme
 * rows into large errors. A normal or lognormal input is continued the same
 * way, linearly in t, beyond the training range when the expansion was
 * fitted with marginals_from_data and kept those families; otherwise its
 * polynomials are used everywhere. A lognormal input's x must be > 0
 * (RFX_EINVAL names the row and column). */
RFX_API rfx_status rfx_pce_predict(const rfx_pce *pce, rfx_cmat X, double *y);

/* ------------------------------------------------------------------------ */
/* Inspection, moments and sensitivity                                       */
/* ------------------------------------------------------------------------ */

typedef struct rfx_pce_info {
    size_t dim;           /* d                                               */
    size_t degree;        /* fit: the truncation degree p of the candidate
                             basis (the chosen one with a degree range);
                             explicit basis or rfx_pce_create: the largest
                             total degree among the terms                   */
    size_t n_terms;       /* terms kept                                      */
    size_t n_candidates;  /* candidate basis size at the chosen degree (0
                             for rfx_pce_create)                             */
    size_t n_train;       /* rows fitted (0 for rfx_pce_create)              */
    rfx_pce_method method;
    double loo_mse;       /* see the header comment; NaN when not fitted, */
    double loo_relative;  /* +INFINITY when a point has leverage 1 (e.g.    */
    double loo_corrected; /* n == P)                                         */
    double mean, variance; /* as rfx_pce_moments                             */
    /* the fit's candidate basis: the degree range of the sweep (degree_min
       0: one degree, degree_max; with auto_basis the sweep may stop before
       degree_max), the hyperbolic truncation and the interaction
       limit (0: none). For an expansion not fitted in this process
       (rfx_pce_create, a model file): 0, degree, 1, 0 */
    size_t degree_min, degree_max;
    double q_norm;
    size_t max_interaction;
    size_t n_screened;    /* the automatic basis: inputs left out by the
                             screening (see auto_basis), whose terms are
                             all zero; 0 otherwise and for an expansion not
                             fitted in this process                          */
} rfx_pce_info;

RFX_API rfx_status rfx_pce_get_info(const rfx_pce *pce, rfx_pce_info *info);

/* The number of terms. */
RFX_API size_t rfx_pce_n_terms(const rfx_pce *pce);

/* Term k: its coefficient (if coef != NULL) and multi-index (d values into
 * alpha, if alpha != NULL). Terms are in candidate order (see above).
 * RFX_EINVAL when k >= the number of terms. */
RFX_API rfx_status rfx_pce_term(const rfx_pce *pce, size_t k, double *coef, unsigned *alpha);

/* The marginals (d values, owned by pce). */
RFX_API const rfx_marginal *rfx_pce_marginals(const rfx_pce *pce);

/* The mean c_0 and variance sum_{a != 0} c_a^2 of the expansion under the
 * input distribution (either pointer may be NULL). */
RFX_API rfx_status rfx_pce_moments(const rfx_pce *pce, double *mean, double *variance);

/* First-order and total Sobol indices (d values each; either may be NULL)
 * from the coefficients (see the header comment). A constant expansion
 * (variance 0) gives zeros. */
RFX_API rfx_status rfx_pce_sobol(const rfx_pce *pce, double *first, double *total);

/* Second-order Sobol indices from the coefficients (see the header
 * comment; Sudret 2008): second (d x d, row-major, required)
 * gets S_ij off the diagonal, symmetric, and S_i on it (bitwise the first
 * of rfx_pce_sobol), the layout of rfx_sobol_model_exact's second. A
 * constant expansion (variance 0) gives zeros. RFX_EINVAL for pce or second
 * NULL. */
RFX_API rfx_status rfx_pce_sobol_second(const rfx_pce *pce, double *second);

/* psi[n] = the orthonormal polynomial of degree n of marginal m at x, for
 * n = 0..degree (degree + 1 values): the univariate basis, by its
 * three-term recurrence. */
RFX_API rfx_status rfx_pce_basis_1d(const rfx_marginal *m, size_t degree, double x, double *psi);

/* ------------------------------------------------------------------------ */
/* Expansions as models                                                      */
/* ------------------------------------------------------------------------ */

/* These two live here rather than in rfx.h because they name rfx_pce.
 *
 * A model (method RFX_METHOD_PCE, one target, no feature map) holding a
 * copy of pce, its fit report included: it predicts, saves and loads like
 * any rfx_model (rfx_model_predict, rfx_model_save, rfx_sobol_model, the
 * rfx command line). Predictive standard deviations are RFX_EINVAL;
 * rfx_model_features is NULL and rfx_model_weights empty. */
RFX_API rfx_status rfx_model_from_pce(const rfx_pce *pce, rfx_model **out);

/* The expansion of a PCE model (owned by m), or NULL for any other model. */
RFX_API const rfx_pce *rfx_model_pce(const rfx_model *m);

#ifdef __cplusplus
}
#endif

#endif /* RFX_PCE_H */
