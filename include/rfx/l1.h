/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/l1.h - sparse linear fits on a dense matrix: basis pursuit denoising,
 * the lasso (with its regularisation path and k-fold cross-validation) and
 * hard thresholding pursuit. Part of the public API (rfx.h includes it).
 *
 * A is m x N (rows = samples, columns = features; typically m ~ 1e2..1e4 and
 * N ~ 1e3..1e5), row-major with a stride, y has m values, c has N. The three
 * programs, with r = y - A c - b the residual and b an optional intercept:
 *
 *  BPDN   min |c|_1  s.t.  |r|_2 <= sigma             (SRFE-S: sigma = eta sqrt(m);
 *                                                      Hashemi et al. 2021)
 *  LASSO  min (1 / 2m) |r|_2^2 + lambda |c|_1          (scikit-learn's Lasso with
 *                                                      alpha = lambda)
 *  HTP    min |r|_2  s.t.  c has at most s nonzeros    (Foucart 2011; with a ridge,
 *                                                      HARFE, Saha et al. 2022)
 *
 * Optional penalty weights w > 0 replace |c|_1 by sum_j w_j |c_j| in BPDN and
 * the lasso. With fit_intercept the columns of A and y are centred over the
 * fitted rows (never copied: the centring is folded into the products) and b
 * is the unpenalised intercept ybar - mean(A) . c.
 *
 * Row weights (sample_weight, s_i >= 0): every program is that of the rows
 * scaled by sqrt(v_i), v_i = m s_i / sum_k s_k, m the rows of positive
 * weight, with the means of the centring weighted by s. The lasso is then
 *     min (1 / (2 sum s)) sum_i s_i r_i^2 + lambda |c|_1,
 * scikit-learn's Lasso(alpha = lambda).fit(A, y, sample_weight = s): scaling
 * every weight by one factor changes nothing, an integer weight k is the
 * row repeated k times, and a row of weight 0 is a row left out (also by
 * the folds, which count the rows of positive weight: row i is the i-th of
 * those). lambda_max is max_j |A_c^T S y_c|_j / (sum s w_j). BPDN bounds
 * |r|_v = sqrt(sum_i v_i r_i^2) (eta: the weighted training RMS residual,
 * |r|_v = eta sqrt(m)); HTP minimises sum_i v_i r_i^2 (+ m ridge |c|^2).
 * k-fold scores are the weighted mean squared errors of the held-out rows;
 * GCV is (|r|_v^2 / m) / (1 - df / m)^2, m counting rows. The report's
 * residual_norm is |r|_v. Weights that are all equal (ones included) are no
 * weights, bit for bit. m, in the checks of n_folds and sparsity, counts the
 * rows of positive weight.
 *
 * How they are solved (src/solvers/l1.c says why at length):
 *  - LASSO by cyclic coordinate descent on a working set of columns (strong
 *    rules, Tibshirani et al. 2012), with a full pass A^T r over all columns
 *    (one DGEMV) to add violators of the optimality conditions, stopped by a
 *    duality gap certificate (relative to the objective at c = 0, as
 *    scikit-learn does). With polish (the default) coordinate descent only
 *    finds a start and an active-set method (feature-sign search, Lee et al.
 *    2006, on an updated Cholesky factor) solves the working set exactly:
 *    machine-precision optimality conditions, also on the ill-conditioned,
 *    nearly interpolating problems where coordinate descent crawls.
 *  - BPDN by root finding on the Pareto curve (van den Berg & Friedlander,
 *    SIAM J. Sci. Comput. 31(2), 2008): the BPDN solution is the lasso
 *    solution whose residual norm equals sigma. The curve is followed in u =
 *    lambda^2, where |r|^2 is piecewise linear (exactly linear while the
 *    support and signs stay fixed), by a bracketed secant (Illinois) method,
 *    each step a warm-started, polished lasso solve.
 *  - HTP: S = the s largest |c + mu A^T r|, then least squares on S
 *    (Cholesky of A_S^T A_S + m ridge I), until S repeats (or an iteration
 *    fails to descend).
 *
 * Every product with all of A runs in fixed tiles of rows or columns, each
 * tile by a single-threaded BLAS call, so results are bitwise identical for
 * any n_threads.
 */
/* Outside the guard: rfx.h includes this header at its end, so a program
 * that includes this one first gets rfx.h's types before these
 * declarations (and headers included after it in rfx.h see them). */
#ifndef RFX_L1_H
#define RFX_L1_H

#include "rfx/core.h"
#include "rfx/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which program rfx_l1_fit solves. */
typedef enum rfx_l1_method {
    RFX_L1_METHOD_LASSO = 0, /* min (1/2m)|r|^2 + lambda sum w_j |c_j|        */
    RFX_L1_METHOD_BPDN = 1,  /* min sum w_j |c_j| s.t. |r|_2 <= sigma          */
    RFX_L1_METHOD_HTP = 2    /* min |r|_2 s.t. at most s nonzeros              */
} rfx_l1_method;

/* "lasso", "bpdn", "htp", and the reverse look-up (RFX_EINVAL for an unknown
 * name). */
RFX_API const char *rfx_l1_method_name(rfx_l1_method method);
RFX_API rfx_status rfx_l1_method_from_name(const char *name, rfx_l1_method *out);

typedef struct rfx_l1_params {
    rfx_l1_method method;    /* default RFX_L1_METHOD_LASSO                    */
    int fit_intercept;       /* default 0 (the programs as written above); 1:
                                unpenalised intercept by centring             */
    const double *weights;   /* N penalty weights w_j > 0 (LASSO, BPDN), or NULL
                                for all 1 (the default)                       */

    /* LASSO */
    double lambda;           /* > 0, default 1e-3; unused when selecting       */
    rfx_select select;       /* RFX_SELECT_NONE (default): use lambda;
                                RFX_SELECT_KFOLD: choose lambda from the grid
                                by k-fold cross-validation (row i is in fold
                                i mod n_folds; least mean held-out MSE);
                                RFX_SELECT_GCV: one path on all rows, scored by
                                generalised cross-validation with the lasso's
                                degrees of freedom, the number of nonzeros
                                (an unbiased estimate: Zou, Hastie &
                                Tibshirani, Ann. Statist. 35, 2007):
                                GCV = (|r|^2 / m) / (1 - df / m)^2, df the
                                nonzeros plus the intercept. k times cheaper
                                than k-fold CV, and close to it when df << m.
                                The GCV walk always stops at the rise past its
                                minimum (cv_stop_factor, 1.5 when that is 0):
                                near interpolation (N > m, small lambda) GCV
                                falls again though the fits are the worst  */
    size_t n_folds;          /* >= 2 and <= m, default 5                        */
    double cv_stop_factor;   /* k-fold CV and GCV: 0 (default) walks the whole
                                grid; f > 1: a path stops once its score (a
                                fold's held-out MSE, or GCV) has been above f
                                times its smallest for 5
                                grid points in a row (the small-lambda end,
                                near interpolation, is the slowest and the
                                least useful); grid points some fold did not
                                reach get cv_mse = INFINITY and are never
                                chosen                                        */
    const double *lambdas;   /* the grid for paths and cross-validation (values
                                > 0, best in decreasing order: each solve warm
                                starts from the previous one), or NULL for the
                                default grid: n_lambdas values log-spaced from
                                lambda_max = max_j |A^T y|_j / (m w_j) (the
                                smallest lambda with c = 0) down to
                                lambda_min_ratio * lambda_max              */
    size_t n_lambdas;        /* grid length (of lambdas when given), default 100 */
    double lambda_min_ratio; /* in (0, 1], or 0 (default) for glmnet's choice:
                                1e-2 when m < N (small lambdas approach
                                interpolation: slow and useless fits), 1e-4
                                otherwise (scikit-learn's eps is 1e-3)      */

    /* BPDN: the bound is sigma when sigma > 0, else eta sqrt(m) (m = rows
     * fitted). Both 0 is basis pursuit, approximated by a residual of at most
     * sigma_tol |y|. Setting both > 0 is RFX_EINVAL. */
    double sigma;            /* >= 0, default 0                                  */
    double eta;              /* >= 0, default 0 (the SRFE-S stability parameter) */
    double sigma_tol;        /* in (0, 1): the root search stops when
                                |r|_2 is within sigma (1 +- sigma_tol); default 1e-6 */
    size_t max_root_iter;    /* lasso solves of the root search, default 100     */

    /* HTP */
    size_t sparsity;         /* s, 1 <= s <= min(m, N); required (default 0)     */
    double step;             /* mu > 0, or 0 (default): mu = N / |A_c|_F^2, the
                                inverse mean squared column norm, which is 1 on
                                column-normalised A (Foucart's setting)        */
    double ridge;            /* >= 0: least squares on S minimises
                                (1/m)|r|^2 + ridge |c_S|^2 (HARFE's ridge), so
                                A_S^T A_S + m ridge I is factored; default 1e-12,
                                which only keeps the Cholesky factorisation
                                defined when columns of A_S are dependent      */

    /* all methods */
    size_t max_iter;         /* LASSO/BPDN: coordinate descent sweeps plus
                                active-set steps per lasso solve; HTP:
                                iterations. Default 1000 (scikit-learn's)     */
    double tol;              /* LASSO/BPDN: stop when the duality gap is at most
                                tol (1/2m)|y_c|^2 (the objective at c = 0, as
                                scikit-learn's tol); default 1e-8              */
    int polish;              /* LASSO/BPDN: finish each lasso solve with the
                                exact active-set method; default 1. 0 gives
                                plain coordinate descent to tol (slow on
                                ill-conditioned problems)                      */
    int n_threads;           /* 0 = OpenMP default; results never depend on it  */
    rfx_progress_fn progress; /* optional: stages "lasso path", "cross-validation",
                                "bpdn", "htp"                                  */
    void *progress_user;
    const double *sample_weight; /* m row weights (finite, >= 0, not all zero),
                                or NULL (default) for 1 each; see "Row
                                weights" above                               */
} rfx_l1_params;

/* The defaults documented in the struct. */
RFX_API rfx_l1_params rfx_l1_params_default(void);

/* What a fit did. */
typedef struct rfx_l1_report {
    size_t iterations;     /* LASSO/BPDN: coordinate descent sweeps over the
                              working set plus active-set steps, summed over
                              every lasso solve; HTP: iterations               */
    size_t passes;         /* products A^T r with all of A (DGEMV passes)      */
    size_t root_iter;      /* BPDN: lasso solves of the root search; else 0    */
    double lambda;         /* LASSO: the lambda used or chosen; BPDN: the
                              multiplier at the solution, max_j |A^T r|_j /
                              (m w_j) (the lasso lambda with the same
                              solution); HTP: NaN                              */
    double sigma;          /* BPDN: the bound used (sigma, or eta sqrt(m));
                              else NaN                                         */
    double residual_norm;  /* |y - A c - b|_2 over the fitted rows              */
    double l1_norm;        /* |c|_1 (unweighted)                               */
    double duality_gap;    /* LASSO/BPDN: the final lasso's duality gap over
                              (1/2m)|y_c|^2; HTP: NaN                          */
    double intercept;      /* b (0 without fit_intercept)                       */
    double cv_mse;         /* RFX_SELECT_KFOLD: mean held-out mean squared error
                              at the chosen lambda; RFX_SELECT_GCV: its GCV
                              score (the same estimate); else NaN            */
    size_t n_nonzero;      /* nonzeros of c                                    */
    int converged;         /* LASSO: duality gap <= tol; BPDN: that and the
                              residual within sigma (1 +- sigma_tol); HTP: the
                              support repeated (0 when an iteration failed to
                              lower |r|^2 + m ridge |c|^2, as HTP may cycle
                              far from its theory's conditions: the better
                              iterate is returned)                             */
    int constraint_met;    /* BPDN: |r|_2 <= sigma (1 + sigma_tol) (when the
                              root search fails it returns its best feasible
                              point if it has one); LASSO/HTP: 1               */
    int polished;          /* LASSO/BPDN: the active-set method solved the
                              final lasso exactly (to rounding)                */
} rfx_l1_report;

/* Fit A (m x N) and y (m) with the method of params: c (N) receives the
 * coefficients; *intercept the intercept (may be NULL when fit_intercept is
 * 0); report (may be NULL) what happened. Every field of params is
 * validated, and A and y must be finite; messages name the bad field or
 * entry. Not converging within max_iter is not an error: the report says so
 * (converged, constraint_met) and c is the last iterate (BPDN: the best
 * feasible one found, if any). */
RFX_API rfx_status rfx_l1_fit(const rfx_l1_params *params, rfx_cmat A, const double *y, double *c,
                              double *intercept, rfx_l1_report *report);

/* lambda_max = max_j |A_c^T y_c|_j / (m w_j): the smallest lambda whose lasso
 * solution is c = 0 (A_c, y_c centred when fit_intercept). */
RFX_API rfx_status rfx_l1_lambda_max(const rfx_l1_params *params, rfx_cmat A, const double *y,
                                     double *out);

/* The lasso regularisation path over the grid (params->lambdas, or the
 * default grid of params->n_lambdas values), with warm starts: lambdas
 * (n_lambdas values) receives the grid, row k of C (n_lambdas x N) the
 * coefficients at lambdas[k], intercepts[k] (NULL allowed when fit_intercept
 * is 0) the intercept. params->method, select and the BPDN and HTP fields
 * are ignored. */
RFX_API rfx_status rfx_l1_path(const rfx_l1_params *params, rfx_cmat A, const double *y,
                               double *lambdas, rfx_mat C, double *intercepts);

/* k-fold cross-validation of the lasso over the grid: fold f holds out the
 * rows i with i mod n_folds == f and fits the path on the others (grid from
 * all rows, as scikit-learn's LassoCV). lambdas (n_lambdas) receives the
 * grid, cv_mse (n_lambdas) the held-out mean squared error averaged over
 * folds, *best (may be NULL) the index of the smallest. */
RFX_API rfx_status rfx_l1_cv(const rfx_l1_params *params, rfx_cmat A, const double *y,
                             double *lambdas, double *cv_mse, size_t *best);

/* Scale each column of A (m x N) to unit l2 norm in place and write the
 * original norms to scales (N). A column of zeros is left as it is, with
 * scale 1. Coefficients c' fitted on the scaled A give c_j = c'_j / scales_j
 * on the original columns. A must be finite. */
RFX_API rfx_status rfx_l1_normalize_columns(rfx_mat A, double *scales, int n_threads);

#ifdef __cplusplus
}
#endif

#endif /* RFX_L1_H */
