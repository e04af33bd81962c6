/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/projection.h - the building blocks of a learned projection: a particle
 * swarm optimiser and kernel PCA with an anisotropic Gaussian kernel.
 *
 * The self-supervised projection (a surrogate fitted on a k-dimensional
 * kernel PCA of the inputs, with the kernel's per-input weights theta tuned
 * by a particle swarm to minimise an estimate of the prediction error of a
 * regression on the scores; rfx_projected_fit below) calls the two parts
 * like this:
 *
 *     rfx_kpca *kp;  rfx_kpca_create(&kpca_params, X, &kp);   once per thread
 *     objective(theta):                                          many times
 *         rfx_kpca_fit(kp, theta);              reuses every buffer of kp
 *         score a regression on rfx_kpca_embedding(kp) (m x k)
 *     rfx_pso_minimize(&pso_params, d, objective, user, theta_best, ...);
 *
 * The conventions of rfx.h hold: every fallible call returns an rfx_status
 * with a message in rfx_last_error() naming the bad field; nothing prints
 * or exits; outputs are written only on success; _free(NULL) is a no-op;
 * randomness comes only from explicit seeds through the counter-based
 * generator, and results never depend on the number of threads.
 */
#ifndef RFX_PROJECTION_H
#define RFX_PROJECTION_H

#include "rfx/core.h"
#include "rfx/features.h"
#include "rfx/model.h"
#include "rfx/pce.h"
#include "rfx/srfe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Particle swarm optimisation                                               */
/* ------------------------------------------------------------------------ */

/* Particle swarm optimisation (Kennedy & Eberhart, "Particle swarm
 * optimization", Proc. IEEE ICNN 1995) in the inertia form of Shi &
 * Eberhart ("A modified particle swarm optimizer", IEEE ICEC 1998). Each
 * particle i has a position x_i, a velocity v_i and the best position p_i
 * it has visited; g_i is the best position known to its neighbourhood (the
 * whole swarm, or its two ring neighbours and itself). One iteration moves
 * every particle, per coordinate j, with fresh r1, r2 ~ U(0, 1):
 *
 *     v_ij <- w v_ij + c1 r1 (p_ij - x_ij) + c2 r2 (g_ij - x_ij)
 *     v_ij <- clamp(v_ij, -vmax_j, vmax_j),  vmax_j = v_max (upper_j - lower_j)
 *     x_ij <- x_ij + v_ij
 *
 * and then evaluates all of them (synchronous updates: the attractors p and
 * g move only between iterations). The defaults w = 0.7298, c1 = c2 =
 * 1.49618 are Clerc & Kennedy's constriction ("The particle swarm -
 * explosion, stability, and convergence in a multidimensional complex
 * space", IEEE TEC 6(1), 2002) written in inertia form: chi = 0.7298 and
 * chi * 2.05 = 1.49618, a swarm that converges without a velocity clamp.
 *
 * Boundaries: a coordinate that leaves [lower_j, upper_j] is set to the
 * bound it crossed and its velocity to zero, so every evaluated point lies
 * in the box and a particle may rest on a bound (where a minimum on the
 * boundary is found exactly).
 *
 * Initialisation (Clerc's SPSO 2007): x_ij ~ U(lower_j, upper_j) and
 * v_ij = (U(lower_j, upper_j) - x_ij) / 2, clamped; particle 0 starts at
 * x0 when one is given (e.g. theta_0 of a previous run).
 *
 * Random numbers: particle i in iteration t (t = 0 for the initialisation)
 * draws from its own Philox stream keyed by (seed, i, t), so results are
 * bitwise identical for any n_threads.
 *
 * Cost: n_particles (iterations + 1) objective evaluations and
 * O(n_particles d) arithmetic per iteration besides them. */

/* The function to minimise at x (d values, inside the box). Return RFX_OK
 * and set *value, or any other status to stop the search: rfx_pso_minimize
 * then returns that status (the message names the iteration and particle;
 * rfx calls made by the objective supply the detail). A NaN value counts as
 * +infinity: never a best point. With params.thread_safe set, calls for
 * different particles run concurrently on several threads (each call on a
 * thread of an OpenMP team; x is private to the call). */
typedef rfx_status (*rfx_pso_objective)(void *user, const double *x, size_t d, double *value);

/* Whose best position attracts a particle (Kennedy & Mendes 2002). */
typedef enum rfx_pso_topology {
    RFX_PSO_TOPOLOGY_GLOBAL = 0, /* the best of the whole swarm (gbest)       */
    RFX_PSO_TOPOLOGY_RING = 1    /* the best of particles i-1, i, i+1 (lbest):
                                    slower, less prone to early convergence */
} rfx_pso_topology;

/* Why a search stopped. */
typedef enum rfx_pso_stop {
    RFX_PSO_STOP_MAX_ITER = 0,  /* max_iter iterations done                  */
    RFX_PSO_STOP_STAGNATION = 1 /* patience iterations without improvement   */
} rfx_pso_stop;

typedef struct rfx_pso_params {
    size_t n_particles;    /* swarm size >= 1; 0 (default) = 10 +
                              floor(2 sqrt(d)), SPSO 2007's rule: 14 for
                              d = 5, 18 for d = 20                           */
    size_t max_iter;       /* iterations after the initial evaluation >= 1,
                              default 200                                    */
    double inertia;        /* w in [0, 1], default 0.7298                    */
    double c1;             /* cognitive weight >= 0, default 1.49618        */
    double c2;             /* social weight >= 0, default 1.49618; c1 + c2
                              must be > 0                                   */
    const double *lower;   /* d lower bounds (required, finite)              */
    const double *upper;   /* d upper bounds (required, finite, > lower)    */
    double v_max;          /* velocity clamp as a fraction of each box
                              width, in (0, 1]; default 0.5                 */
    const double *x0;      /* optional: d values in the box, the start of
                              particle 0; default NULL                       */
    uint64_t seed;         /* default 0                                      */
    rfx_pso_topology topology; /* default RFX_PSO_TOPOLOGY_GLOBAL           */
    size_t patience;       /* stop after this many consecutive iterations in
                              which the best value did not drop by more
                              than tol; 0 (default) = never, run max_iter   */
    double tol;            /* >= 0, in the objective's units; default 0
                              (any decrease counts)                          */
    int thread_safe;       /* 1: the objective may be called concurrently
                              for different particles; default 0 (all calls
                              on the calling thread)                        */
    int n_threads;         /* threads for concurrent evaluations (with
                              thread_safe); 0 = OpenMP default              */
    rfx_progress_fn progress; /* optional: stage "pso", called on the calling
                              thread after the initialisation and after each
                              iteration with iteration / max_iter; non-zero
                              stops with RFX_ECANCELLED                     */
    void *progress_user;
} rfx_pso_params;

/* The defaults documented in the struct (lower and upper NULL: they must be
 * set). */
RFX_API rfx_pso_params rfx_pso_params_default(void);

/* What a search did. */
typedef struct rfx_pso_report {
    double value;          /* the best value found (at x_best)               */
    size_t iterations;     /* iterations done, 1..max_iter                   */
    size_t evaluations;    /* objective calls: n_particles (iterations + 1)  */
    size_t n_particles;    /* the swarm size used                            */
    rfx_pso_stop stop;     /* why it stopped                                 */
} rfx_pso_report;

/* Minimise objective over the box [lower, upper] (d >= 1 dimensions).
 * x_best (d values) receives the best point; history, when not NULL, holds
 * at least max_iter + 1 values and receives the best value after the
 * initialisation (history[0]) and after each iteration t
 * (history[t], t = 1..iterations; the rest is left alone); report may be
 * NULL. Nothing is written unless the search succeeds. Errors: RFX_EINVAL
 * (a bad field, named), RFX_ECANCELLED (progress), RFX_ENUMERIC (the
 * objective never returned a value below +infinity), any status of the
 * objective, RFX_ENOMEM. */
RFX_API rfx_status rfx_pso_minimize(const rfx_pso_params *params, size_t d,
                                    rfx_pso_objective objective, void *user, double *x_best,
                                    double *history, rfx_pso_report *report);

/* ------------------------------------------------------------------------ */
/* Kernel PCA with an anisotropic Gaussian kernel                            */
/* ------------------------------------------------------------------------ */

/* Kernel principal component analysis (Schoelkopf, Smola & Mueller,
 * "Nonlinear component analysis as a kernel eigenvalue problem", Neural
 * Computation 10(5), 1998) of the m training rows X (m x d) with
 *
 *     k_theta(x, y) = exp(-gamma sum_i theta_i (x_i - y_i)^2),
 *
 * theta in [0, 1]^d weighting each input (theta_i = 0 removes input i; the
 * projection then does not depend on it at all) and gamma > 0 an overall
 * scale. With K the m x m Gram matrix, its row means r_i and grand mean g,
 * the centred Gram matrix (the kernel of the features minus their mean) is
 *
 *     Kc = H K H,  H = I - 1 1^T / m,   Kc_ij = K_ij - r_i - r_j + g.
 *
 * Its top k eigenpairs (lambda_j, v_j), lambda_1 >= .. >= lambda_k, |v_j| = 1,
 * define the components: the training scores are v_j sqrt(lambda_j), the
 * explained variance ratios lambda_j / trace(Kc), and a new point x has the
 * scores
 *
 *     t_j(x) = sum_i kc(x, X_i) alpha_ij,  alpha_j = v_j / sqrt(lambda_j),
 *     kc(x, X_i) = k(x, X_i) - r_i - kbar(x) + g,  kbar(x) = mean_i k(x, X_i),
 *
 * so that the scores of a training row equal its training scores. The
 * eigenvalues are those of Kc (not divided by m), as scikit-learn's
 * KernelPCA.eigenvalues_. Signs: each component is oriented so that its
 * training score of largest magnitude is positive. Components with
 * lambda_j <= null_tol trace(Kc) are null (Kc has rank m - 1 at most): their
 * eigenvalue is reported (clipped at 0) and their scores are 0.
 *
 * Scaling: the kernel compares raw differences, so inputs on different
 * scales weight differently. Standardise the inputs first (the standardize
 * flag does it with the training means and standard deviations, divisor m,
 * and applies the same map to transformed points), or choose gamma for the
 * data: for d standardised inputs sum_i theta_i (x_i - y_i)^2 is about
 * 2 sum_i theta_i on average, so gamma near 1 / d keeps the kernel away from
 * the identity. For inputs in [0, 1] gamma = 1 is a sensible start.
 *
 * Methods:
 *  EXACT            K is built in full (m x m); the top k eigenpairs of Kc
 *                   by LAPACK dsyevr (relatively robust representations,
 *                   only the wanted eigenvectors). Cost per fit: m^2 q
 *                   (3/2 flops) + m^2 / 2 exponentials for K (q the inputs
 *                   with theta_i > 0), 4/3 m^3 flops for the tridiagonal
 *                   reduction (the dominant term: about 40 ms at m = 800 on
 *                   one core), O(m k) + 2 m^2 k for the k eigenvectors.
 *                   Memory 8 m^2 bytes (K) plus O(m (d + k)). Transform of n
 *                   points: n m q (3/2 flops) + n m exponentials + 2 n m k.
 *  RANDOM_FEATURES  k_theta is the Gaussian kernel exp(-|u - u'|^2 / 2) of
 *                   u_i = sqrt(2 gamma theta_i) x_i, so one random Fourier
 *                   map z (rfx_features, unit length scale, n_features D,
 *                   seed, form) drawn at create serves every theta: the
 *                   same frequencies are used for all theta (smooth in
 *                   theta; theta_i = 0 zeroes input i exactly). Then linear
 *                   PCA of the centred features Zc (rows z_i - mu): the
 *                   eigenvalues of C = Zc^T Zc (D x D) approximate those of
 *                   Kc; the scores of x are (z(x) - mu) . V_j with V_j the
 *                   unit eigenvectors of C.
 *                   With D <= m (primal form) C is accumulated over row
 *                   chunks about a shift; cost per fit: twice the
 *                   featurisation of the m rows (2 m d D flops + m D
 *                   cosines each), m D^2 for C, 4/3 D^3 for the
 *                   eigensolver, 2 m D k for the scores; memory O(D^2 +
 *                   D rows-per-chunk + m (d + k)), never m x m.
 *                   With D > m (dual form) the eigenpairs (lambda_j, u_j)
 *                   of Zc Zc^T (m x m) give V_j = Zc^T u_j / sqrt(lambda_j)
 *                   and the scores u_j sqrt(lambda_j); cost one
 *                   featurisation, m^2 D for Zc Zc^T, 4/3 m^3 for the
 *                   eigensolver, 2 m D k; memory 8 m (m + D) bytes.
 *
 * Reuse: rfx_kpca_create copies X (standardised if asked), allocates every
 * buffer and (RANDOM_FEATURES) draws the feature map once; each
 * rfx_kpca_fit with a new theta then reuses them (it allocates only small
 * per-chunk blocks with random features, nothing of size m^2, m D or D^2).
 * A failed fit leaves the previous fit in place. Fitting mutates the
 * object: use one object per thread when fitting concurrently; transforms
 * of a fitted object may run concurrently. Transforms allocate their own
 * blocks (n_threads x 64 x m doubles exact; a chunk of rows x D with random
 * features). Threads: the Gram matrix, the centring, the features and
 * transforms run on n_threads; the eigensolver on one thread (its blocked
 * reductions would give different bits for different thread counts). */

typedef enum rfx_kpca_method {
    RFX_KPCA_METHOD_EXACT = 0,          /* the m x m Gram matrix             */
    RFX_KPCA_METHOD_RANDOM_FEATURES = 1 /* random Fourier features, D x D    */
} rfx_kpca_method;

typedef struct rfx_kpca_params {
    size_t n_components;   /* k >= 1, at most m (and D for RANDOM_FEATURES);
                              default 2                                      */
    rfx_kpca_method method; /* default RFX_KPCA_METHOD_EXACT                 */
    double gamma;          /* overall kernel scale > 0, default 1            */
    int standardize;       /* 1: standardise the inputs with the training
                              means and standard deviations (a constant
                              column is only centred); default 0             */
    double null_tol;       /* in [0, 1): components with eigenvalue <=
                              null_tol trace(Kc) are null; default 1e-12     */
    size_t n_features;     /* D for RANDOM_FEATURES (even for COS_SIN);
                              default 1024                                   */
    rfx_form form;         /* RANDOM_FEATURES: COS_BIAS or COS_SIN (the
                              default; PHASE_FREE is RFX_EINVAL: these are
                              the kernel's cosine features)                  */
    uint64_t seed;         /* RANDOM_FEATURES: default 0                     */
    int n_threads;         /* 0 = OpenMP default; results do not depend on it */
} rfx_kpca_params;

/* The defaults documented in the struct. */
RFX_API rfx_kpca_params rfx_kpca_params_default(void);

/* Kernel PCA bound to its training rows; fitted by rfx_kpca_fit. */
typedef struct rfx_kpca rfx_kpca;

/* Bind X (m x d, m >= 2, finite; copied) and allocate every buffer. The
 * object is not fitted yet. Errors: RFX_EINVAL (a field, named; k > m),
 * RFX_EDIM (no columns or fewer than 2 rows), RFX_EPARSE (a NaN or
 * infinite entry, named by row and column), RFX_EOVERFLOW (m beyond the
 * LAPACK integer range), RFX_ENOMEM. */
RFX_API rfx_status rfx_kpca_create(const rfx_kpca_params *params, rfx_cmat X, rfx_kpca **out);

RFX_API void rfx_kpca_free(rfx_kpca *kp);

/* Fit the components for theta (d values in [0, 1], not all zero).
 * Errors: RFX_EINVAL (theta NULL, an entry outside [0, 1] or NaN, all
 * zero), RFX_ENUMERIC (the centred kernel is zero: the training rows agree
 * on every input with theta_i > 0; or the eigensolver failed). On error the
 * previous fit, if any, is kept. */
RFX_API rfx_status rfx_kpca_fit(rfx_kpca *kp, const double *theta);

/* Scores of new points: X (n x d, finite), T (n x k). RFX_EINVAL before
 * the first fit. Rows are processed in fixed tiles: bitwise identical for
 * any n_threads. */
RFX_API rfx_status rfx_kpca_transform(const rfx_kpca *kp, rfx_cmat X, rfx_mat T);

/* The training scores (m x k, row i = the scores of X_i), owned by kp and
 * overwritten by the next successful fit; rfx_cmat_none() before the first
 * fit. */
RFX_API rfx_cmat rfx_kpca_embedding(const rfx_kpca *kp);

/* The fitted eigenvalues lambda_1..lambda_k (descending, >= 0) and the
 * explained variance ratios lambda_j / trace(Kc), k values each (either may
 * be NULL). RFX_EINVAL before the first fit. */
RFX_API rfx_status rfx_kpca_eigenvalues(const rfx_kpca *kp, double *eigenvalues,
                                        double *ratios);

typedef struct rfx_kpca_info {
    rfx_kpca_method method;
    size_t n_train;        /* m                                              */
    size_t dim;            /* d                                              */
    size_t n_components;   /* k                                              */
    size_t n_features;     /* D (RANDOM_FEATURES), else 0                    */
    int fitted;            /* a fit has succeeded                            */
    size_t n_null;         /* null components of the current fit             */
    double total_variance; /* trace(Kc) (or of C) of the current fit         */
} rfx_kpca_info;

RFX_API rfx_status rfx_kpca_get_info(const rfx_kpca *kp, rfx_kpca_info *info);

/* The theta of the current fit (d values). RFX_EINVAL before the first
 * fit. */
RFX_API rfx_status rfx_kpca_theta(const rfx_kpca *kp, double *theta);

/* ------------------------------------------------------------------------ */
/* The self-supervised projection                                            */
/* ------------------------------------------------------------------------ */

/* A surrogate on a learned k-dimensional projection of the inputs
 * (Algorithm 1 of Herold, "Random feature expansion for surrogate
 * modelling", appliedAI seminar, 2022): exact kernel PCA with the kernel
 * k_theta above (the inputs standardised first by default) maps x to k
 * scores t(x); a surrogate f (ridge or Bayesian random features, SRFE or
 * PCE) is fitted on (t(X_i), y_i); the input weights theta in [0, 1]^d are
 * chosen by a particle swarm (rfx_pso_minimize) minimising a loss L(theta)
 * of a regression on the scores. The result is an rfx_model of method
 * RFX_METHOD_PROJECTED: rfx_model_predict projects the raw inputs and
 * predicts with the surrogate; it saves, loads and works with
 * rfx_sobol_model like any other model.
 *
 * The fit, in five steps:
 *  1. Screening (theta_0): each input alone is scored by the fast score
 *     below, S_i; r_i = max(0, 1 - S_i) is the fraction of the variance of
 *     y that input i explains by itself, and theta_0,i = sqrt(r_i /
 *     max_j r_j) (theta_0 ~ U[0, 1]^d, as in the algorithm, when no input
 *     explains anything). Particle 0 starts at theta_0, the others
 *     uniformly in the box. Inputs with no effect of their own start at 0,
 *     which the swarm can still raise. A second round scores each input
 *     with r_i = 0 against the residual of a joint fast fit of the (up to
 *     8) strongest, where a weak effect is a larger share: r_i = max(0,
 *     1 - S'_i) var(residual) / var(y), and theta_0x,i = sqrt(r_i /
 *     max_j r_j) over both rounds' r. The result, theta_0x, is only a
 *     finalist (step 4): it finds weak inputs (x4 of the G-function, 0.6%
 *     of the variance, below the one-input score's resolution), but also
 *     admits some inputs that do nothing.
 *  2. The shape: where gamma is 0 and / or n_components is 0, the pair
 *     (gamma, k) of lowest fast score at theta_0 (or at the given theta)
 *     over gamma in {10^-2.5, 10^-2, .., 10^0} and k = 1..min(8, m - 1):
 *     one kernel PCA with 8 components per gamma (the first k components
 *     of a fit are those of a fit with k), ties to the smaller gamma, then
 *     the smaller k. Small gamma makes the leading components nearly linear
 *     in the weighted inputs, larger gamma adds higher modes of the
 *     dominant inputs.
 *  3. The swarm over theta with that shape (skipped when theta is given):
 *     n_particles (iterations + 1) evaluations of L, each one kernel PCA
 *     fit and one loss, particles evaluated concurrently on up to
 *     n_threads threads, each with its own kernel PCA object.
 *  4. The finalists (the SRFE, PCE and automatic surrogates, n_folds =
 *     0; the automatic one ranks them as SRFE does): the swarm's
 *     theta, theta_0 and theta_0x (the distinct ones), each with the
 *     chosen (gamma, k), with the other scales 10^-2.5, 10^-1.5, 10^-0.5
 *     (when gamma is not given) and with k = 8 (when k is not given): up
 *     to 3 x 4 x 2 = 24 candidates, each
 *     one kernel PCA and one surrogate fit (SRFE with 1000 features),
 *     scored by the surrogate's own estimate of its prediction error (SRFE
 *     GCV, PCE corrected leave-one-out); the lowest wins. The fast score
 *     is a proxy for a dense random-feature ridge and misranks what the
 *     other surrogates do well: on the G-function (d = 20, m = 800) it
 *     chose gamma = 10^-0.5 and k = 6 (and dropped x4), where SRFE on the
 *     scores gave a validation error of 0.133; its own GCV then chose
 *     theta_0x, gamma = 10^-1.5, k = 8: 0.081 (0.074 on a second training
 *     sample, where the swarm's choice gave 0.133). The ridge surrogate's
 *     GCV misranked the
 *     candidates (it chose one 30% worse on validation), and the Bayesian
 *     one has no score of its own: both keep the swarm's choice.
 *  5. The surrogate fitted once on the scores of the chosen candidate.
 *
 * The loss L(theta) is a relative mean squared error (divided by the
 * variance of y, divisor m; 0 is perfect, 1 is the constant predictor):
 *  n_folds = 0  the fast score: ridge regression on 128 random Fourier
 *               features (cos-bias, fixed frequencies from the seed) of the
 *               standardised scores, with the length scale sqrt(k) x
 *               {0.25, 0.5, 1, 2} and the penalty lambda on a log grid of
 *               37 values, lambda / (trace(Zc^T Zc) / 128) in [1e-8, 1e4],
 *               each scored by generalised cross-validation (Golub, Heath &
 *               Wahba 1979) from one eigendecomposition of the 128 x 128
 *               Gram matrix of the features per length scale; the lowest
 *               GCV. It stands in for every surrogate: refitting the ridge
 *               surrogate itself (200 features, its length scale chosen) at
 *               each evaluation made a search on the G-function (d = 20,
 *               m = 800, 210 evaluations) take 32 s of CPU time, the fast
 *               score about 8 s, and an SRFE surrogate costs more still;
 *  n_folds >= 2 k-fold cross-validation of the surrogate itself (row i in
 *               fold i mod n_folds) on the projected rows: slower, and
 *               honest about the surrogate used. The projection is fitted
 *               on all rows: it does not see y, so no target information
 *               leaks into the held-out folds.
 * report.loss and the model's loss are L at the chosen theta after a
 * search (the last history value, report.search_loss), or after the
 * finalists the final surrogate's own estimate (as for a given theta, next);
 * with a given theta there is no search
 * and the loss is the surrogate's own estimate of its prediction error:
 * for ridge and SRFE 5-fold CV (row i in fold i mod 5, the folds side by
 * side on the threads) at the hyperparameters their fit on all rows chose
 * (ridge: length scale and penalty; SRFE: weight scale, q, N and lambda),
 * PCE corrected leave-one-out (rfx_pce_info.loo_corrected), and 5-fold CV
 * for the Bayesian surrogate, or n_folds-fold CV when n_folds >= 2. The
 * selection scores of ridge and SRFE (GCV) are far too optimistic near
 * interpolation: on the scores of one Ishigami projection (m = 500) ridge's
 * GCV said 6e-7 and SRFE's 2.3e-3 where their validation errors were 0.04
 * and 0.008.
 *
 * Cost: one evaluation is one kernel PCA fit (about 4/3 m^3 flops for
 * LAPACK's tridiagonal reduction, the dominant term, see rfx_kpca_params)
 * plus the fast score (4 x (m 128 (k + 1) + m 128^2 + 9 x 128^3) flops);
 * screening costs d fast scores of one column, the shape 6 kernel PCA fits
 * and up to 48 fast scores. On the G-function (d = 20, m = 800, 10
 * particles, at most 20 iterations, patience 5) whole fits with the ridge
 * surrogate took 6.8 s (9 iterations) to 10 s (20 iterations) of CPU time,
 * about 60% of it in LAPACK's tridiagonal reductions; the SRFE surrogate's
 * finalists (up to 24 SRFE fits of about 0.65 s) add 10 to 13 s of CPU
 * time, run in parallel over the threads. The automatic surrogate's
 * default fits of one G-function sample (seed 1004, 2 threads, 15.8 s):
 * screening and the shape 0.4 s, the swarm 4.5 s, the finalists 6.1 s, its
 * candidates (below) 4.8 s.
 *
 * Thread-count independence: each evaluation depends only on theta (a
 * kernel PCA fit does not depend on the object's previous fit, and the fast
 * score runs its BLAS and LAPACK calls on one thread), each value lands in
 * its particle's slot, and kernel PCA and every surrogate fit are bitwise
 * independent of their thread counts: the model is bitwise identical for
 * any n_threads.
 *
 * The surrogate on the scores: RFX_METHOD_RIDGE / RFX_METHOD_BAYES through
 * rfx_model_fit (params fit, or its defaults with 1000 features:
 * standardised scores, length scale and penalty chosen automatically) on
 * one thread; RFX_METHOD_SRFE through rfx_srfe_fit (params srfe, or its
 * defaults with 4000 features and the scale grid alone, widen_rounds 0;
 * its sparsity at most k) on n_threads;
 * RFX_METHOD_PCE through rfx_pce_fit (params pce, or degree 3 with LARS)
 * with normal marginals N(mean_j, sd_j) of the training scores of each
 * component (any marginals given in pce are replaced: the scores'
 * distribution changes with theta), on one thread. */

/* Row weights (sample_weight, w_i >= 0): the rows of weight 0 are dropped
 * first (m then counts the rows of positive weight: folds, n_components,
 * the kernel's training rows). With v_i = m w_i / sum w (relative weights:
 * equal weights are no weights, bit for bit) the weights enter everything
 * that looks at y: the variance of y (weighted, divisor m) that makes the
 * losses relative; the fast score, a weighted ridge on the rows scaled by
 * sqrt(v_i) with the weighted GCV and the score columns standardised by
 * weighted moments (screening, the shape and the swarm's loss); k-fold CV,
 * the weighted mean squared error of the held-out rows, each fold's
 * surrogate fitted with its rows' weights; the surrogates, fitted with
 * sample weights v (rfx_model_fit, rfx_srfe_fit, rfx_pce_fit, the PCE
 * marginals from the weighted moments of the scores), and their own error
 * estimates (weighted GCV, weighted corrected leave-one-out), which rank
 * the finalists and the automatic surrogate. The kernel PCA is not
 * weighted: the projection describes the inputs as they were sampled (it
 * never sees y), and the weights say how much each target value counts in
 * the loss. So an integer weight k is not the row repeated k times (the
 * repeated rows would change the kernel PCA and its m), but a row of
 * weight 0 is a row left out. */

/* The surrogate of a projected fit chosen at the end among ridge, srfe and
 * pce by their own estimates of the relative error (ridge and SRFE 5-fold
 * CV at their chosen hyperparameters, PCE corrected leave-one-out; see the
 * loss above): the swarm searches with the fast score, SRFE's GCV ranks
 * the finalists (step 4), the three are fitted on the scores of the
 * finalists' projection and, when it differs, ridge and pce on those of
 * the swarm's own (srfe there is what the finalists ranked below theirs).
 * Where every y > 0, each of these is also fitted to log y and predicts
 * exp of its fit (rfx_model_set_target_transform on the surrogate), scored
 * by 5-fold CV of y with the held-out predictions exponentiated (ridge and
 * SRFE at the hyperparameters of their fit to log y, PCE refitted per
 * fold: its leave-one-out error is of log y). The least estimate wins,
 * ties to the swarm's projection, then to y before log y. The candidates
 * are fitted side by side on the threads, one thread each.
 *
 * Over the 10 training seeds of bench/surrogate_seeds.py (AVX-512 machine,
 * 2 threads) the median / worst validation errors and median times, with
 * the candidates on y only and with log y added: G-function 0.082 / 0.129
 * in 12.8 s and 0.072 / 0.129 in 14.1 s (8 of 10 seeds better, 2 the same),
 * borehole 0.0090 / 0.014 and 0.0086 / 0.017, OTL 0.0064 / 0.0088 and
 * 0.0058 / 0.0088, wing weight 0.022 / 0.038 and 0.021 / 0.038; Ishigami
 * (y < 0 there) and Friedman #1 unchanged (0.043 / 0.089, 4.4 s instead of
 * 5.3 s with the candidates side by side; 0.027 / 0.072 in 7.2 s). Before
 * the candidates were scored by 5-fold CV (the three on the swarm's
 * projection by GCV and corrected LOO): G-function 0.133 / 0.157, borehole
 * 0.010 / 0.042, OTL 0.0078 / 0.162, wing weight 0.035 / 0.073, Ishigami
 * 0.039 / 0.104. The default of rfx_projected_params.surrogate (the value
 * is RFX_METHOD_PROJECTED, which is never a surrogate). */
#define RFX_PROJECTED_AUTO RFX_METHOD_PROJECTED

typedef struct rfx_projected_params {
    size_t n_components;    /* k, at most m - 1 (the rank of the centred
                               kernel), or 0 (default): chosen with gamma,
                               see step 2                                   */
    rfx_method surrogate;   /* RFX_PROJECTED_AUTO (default: chosen, see
                               above), RFX_METHOD_RIDGE, RFX_METHOD_BAYES,
                               RFX_METHOD_SRFE or RFX_METHOD_PCE            */
    const rfx_fit_params *fit;   /* ridge / bayes: NULL (default) = the
                                    defaults with 1000 features; its method
                                    is replaced by surrogate                */
    const rfx_srfe_params *srfe; /* srfe: NULL (default) = the defaults with
                                    4000 features, widen_rounds 0           */
    const rfx_pce_params *pce;   /* pce: NULL (default) = degree 3, LARS    */
    const double *theta;    /* optional: d values in [0, 1], not all zero:
                               use this theta and do not search; default
                               NULL                                          */
    size_t n_particles;     /* swarm size >= 1; default 10                   */
    size_t iterations;      /* swarm iterations >= 1; default 20             */
    size_t patience;        /* stop after this many iterations without a
                               better loss; 0 = never; default 5             */
    size_t n_folds;         /* 0 (default): the fast score; else k-fold CV
                               of the surrogate, n_folds >= 2, at most m    */
    double gamma;           /* kernel scale > 0, or 0 (default): chosen,
                               see step 2                                   */
    int standardize;        /* 1 (default): standardise the inputs for the
                               kernel (means and sds of the training rows,
                               stored in the model); 0: raw inputs          */
    uint64_t seed;          /* the swarm and the fast score's features
                               (and theta_0 when screening finds nothing);
                               default 0                                     */
    int n_threads;          /* concurrent evaluations, kernel PCA, the SRFE
                               surrogate; 0 = OpenMP default                */
    rfx_progress_fn progress; /* optional: stage "pso" after each iteration;
                               non-zero stops with RFX_ECANCELLED           */
    void *progress_user;
    const double *sample_weight; /* a weight per row of X (finite, >= 0, not
                               all zero), or NULL (default) for 1 each; see
                               "Row weights" above                         */
} rfx_projected_params;

/* The defaults documented in the struct. */
RFX_API rfx_projected_params rfx_projected_params_default(void);

/* RFX_OK when the parameters are valid for rfx_projected_fit whatever the
 * data, else RFX_EINVAL with a message naming the field ("projected.gamma:
 * ..."): the check rfx_projected_fit makes first, for use before any data
 * is read. It includes the parameters of the surrogate in use (fit for
 * ridge and bayes, srfe, pce, when given) as that surrogate's fit sees them
 * (its threads and method replaced, the PCE marginals those of the scores)
 * by rfx_fit_params_check, rfx_srfe_params_check or rfx_pce_params_check,
 * the message prefixed "projected: srfe surrogate: ". What depends on the
 * data is checked by the fit: n_components <= m - 1, theta's d values,
 * n_folds <= m, and the surrogate's parameters against the k scores.
 * RFX_EINVAL for NULL. */
RFX_API rfx_status rfx_projected_params_check(const rfx_projected_params *p);

/* What a fit did. The caller points theta (d values) and history
 * (iterations + 1 values) at its own buffers, or leaves them NULL; the
 * other fields are written by the fit. */
typedef struct rfx_projected_report {
    double *theta;          /* in: a buffer of d, or NULL; out: theta used   */
    double *history;        /* in: a buffer of iterations + 1, or NULL; out:
                               the best loss after the swarm's start
                               (history[0]) and after each iteration t
                               (history[t], t = 1..n_iterations)            */
    size_t n_iterations;    /* iterations done (0 with a given theta)        */
    size_t evaluations;     /* the swarm's loss evaluations, n_particles x
                               (n_iterations + 1) (1 with a given theta);
                               screening and the shape not counted          */
    double loss;            /* the loss of the returned model (see above)    */
    double theta0_loss;     /* the search loss at theta_0 (NaN with a given
                               theta)                                        */
    double search_loss;     /* the swarm's best search loss, history[
                               n_iterations] (NaN with a given theta)        */
    size_t finalists;       /* candidates scored in step 4 (0: none)         */
    double surrogate_scores[3]; /* RFX_PROJECTED_AUTO: the own relative error
                               estimates of ridge, srfe and pce on the
                               chosen projection's scores (NaN: could not
                               be fitted);
                               the chosen surrogate is the model's         */
    double surrogate_log_scores[3]; /* RFX_PROJECTED_AUTO: the same three
                               fitted to log y, by K-fold CV of y (NaN:
                               not tried, some y <= 0, or could not be
                               fitted); when one of them is chosen the
                               surrogate predicts exp of its fit
                               (rfx_model_get_info of
                               rfx_projected_info.surrogate says
                               target_transform RFX_TARGET_LOG)            */
} rfx_projected_report;

/* Fit X (m x d, m >= 3, finite) and Y (m x 1, finite). Every parameter is
 * validated, the message naming the field; the errors of
 * rfx_projected_params_check come first, before the data is looked at. On
 * success *out is a model of
 * method RFX_METHOD_PROJECTED and report (may be NULL) is filled. Errors:
 * RFX_EINVAL (a field), RFX_EDIM, RFX_EPARSE (a non-finite entry),
 * RFX_EOVERFLOW (more than 2^31 - 1 rows), RFX_ENUMERIC (no theta gave a
 * finite loss; no kernel scale gave a finite loss at theta_0; the given
 * theta's kernel is constant), RFX_ECANCELLED, errors of the surrogate's
 * fit, RFX_ENOMEM. */
RFX_API rfx_status rfx_projected_fit(const rfx_projected_params *params, rfx_cmat X,
                                     rfx_cmat Y, rfx_model **out, rfx_projected_report *report);

/* What a projected model holds. */
typedef struct rfx_projected_info {
    size_t n_components;    /* k                                             */
    size_t n_inputs;        /* d                                             */
    size_t n_train;         /* m, the kernel's training rows                 */
    double gamma;
    int standardized;       /* the kernel sees standardised inputs           */
    double loss;            /* the fit's loss (NaN when unknown)             */
    const double *theta;    /* d weights, owned by the model                 */
    const rfx_model *surrogate; /* the model on the k scores, owned by the
                                   model                                     */
} rfx_projected_info;

/* RFX_EINVAL unless m is a projected model. */
RFX_API rfx_status rfx_model_projected_info(const rfx_model *m, rfx_projected_info *info);

#ifdef __cplusplus
}
#endif

#endif /* RFX_PROJECTION_H */
