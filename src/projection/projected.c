/* SPDX-License-Identifier: BSD-3-Clause */
/* The self-supervised projection (include/rfx/projection.h has the
 * algorithm, its source and the loss):
 *  1. screening: each input alone, scored by the fast ridge score below;
 *     the explained fractions give theta_0 (particle 0's start); a second
 *     round of the weak inputs against a residual gives theta_0x;
 *  2. the shape: gamma and k, where not given, by the fast score at
 *     theta_0 over a grid;
 *  3. a particle swarm over theta in [0, 1]^d, each evaluation one exact
 *     kernel PCA fit and one fast score of the k scores (or k-fold CV of
 *     the surrogate itself), particles evaluated concurrently, one worker
 *     (kernel PCA object and buffers) per thread;
 *  4. the surrogate on the scores of the best theta, fitted once, wrapped
 *     in a model that projects raw inputs.
 *
 * Thread-count independence: every evaluation depends only on theta (a
 * worker's kernel PCA fit does not depend on its previous fit, and the
 * score's buffers are overwritten), every value lands in the particle's own
 * slot, kernel PCA and every surrogate fit are bitwise independent of their
 * thread counts, and the BLAS / LAPACK calls of the score run on one
 * thread; so the whole fit is bitwise independent of n_threads. */
#include "internal.h"
#include "rfx/projection.h"

#include <math.h>
#include <string.h>

/* Random streams (the "stream" word of rfx__rng; PSO's streams are keyed
 * by particle index, so large constants keep them apart): theta_0 when
 * screening finds nothing, and the fast score's feature map. */
#define THETA0_STREAM 0x7468657461307830ull
#define SCORE_STREAM 0x73636f72655f7266ull
/* Random features of the default ridge / Bayesian surrogates, fitted once:
 * on the G-function (d = 20, m = 800, the scores of one theta) the ridge
 * surrogate's validation error was 0.098 with 200 features, 0.089 with
 * 500 and 0.087 with 1500. */
#define DEFAULT_FEATURES 1000
/* Features of the default SRFE surrogate: on the G-function (d = 20,
 * m = 800, k = 5 scores) N = 30 m (SRFE's own rule) took 6.8 s of CPU time
 * and reached 0.098, N = 4000 1.6 s and 0.094, N = 1000 0.6 s and 0.094. */
#define DEFAULT_SRFE_FEATURES 4000
/* Threads of the ridge / Bayes / PCE surrogates' fits: on a few scores
 * their parallel regions are too small to pay for a team (a 120 x 1 ridge
 * fit took 0.41 s on two threads, 0.045 s on one); the kernel PCA and the
 * final SRFE fit get n_threads. */
#define SURROGATE_THREADS 1
/* Folds of the cross-validation that scores a given theta for a surrogate
 * without a score of its own (Bayes). */
#define FALLBACK_FOLDS 5
/* The fast score: ridge regression on SCORE_FEATURES random Fourier
 * features (cos-bias form) of the standardised columns, with the length
 * scale sqrt(cols) x SCORE_SCALES[i] and the penalty from a log grid of
 * SCORE_LAMBDAS values, lambda / (trace / D) in [1e-8, 1e4] (noisy
 * one-input screens need the large end); the lowest GCV of all pairs. */
#define SCORE_FEATURES 128
#define TWO_PI 6.28318530717958647693
#define SCORE_LAMBDAS 37
static const double SCORE_SCALES[] = {0.25, 0.5, 1.0, 2.0};
#define N_SCORE_SCALES (sizeof SCORE_SCALES / sizeof SCORE_SCALES[0])
/* The kernel scales tried when gamma is not given (10^-2.5 .. 1 in steps
 * of sqrt(10)), and the largest k tried when n_components is not given. */
static const double GAMMAS[] = {0.0031622776601683794, 0.01, 0.031622776601683794, 0.1,
                                0.31622776601683794, 1.0};
#define N_GAMMAS (sizeof GAMMAS / sizeof GAMMAS[0])
#define AUTO_K_MAX 8
/* The finalists (step 4 of rfx/projection.h): the kernel scales added to
 * the chosen one, and the features of the SRFE surrogate while scoring
 * them (its GCV ranked the G-function's candidates as the validation
 * error did with 1000 features as with 4000, at 0.75 s instead of 1.1 s
 * of CPU time per fit; with 500 the finalists took 3.1 to 3.9 s on 2
 * threads instead of 5.8 s, but their ranking chose k = 4 instead of 8 on
 * several G-function samples, d = 20, m = 800: median validation error
 * 0.106 against 0.072 over 10 seeds). */
static const double FINAL_GAMMAS[] = {0.0031622776601683794, 0.031622776601683794,
                                      0.31622776601683794};
#define N_FINAL_GAMMAS (sizeof FINAL_GAMMAS / sizeof FINAL_GAMMAS[0])
#define FINAL_SRFE_FEATURES 1000

rfx_projected_params rfx_projected_params_default(void)
{
    rfx_projected_params p;
    memset(&p, 0, sizeof p);
    p.n_components = 0;
    p.surrogate = RFX_PROJECTED_AUTO;
    p.fit = NULL;
    p.srfe = NULL;
    p.pce = NULL;
    p.theta = NULL;
    p.n_particles = 10;
    p.iterations = 20;
    p.patience = 5;
    p.n_folds = 0;
    p.gamma = 0.0;
    p.standardize = 1;
    p.seed = 0;
    p.n_threads = 0;
    p.progress = NULL;
    p.progress_user = NULL;
    return p;
}

/* The surrogate's parameters as setup_surrogate and fit_surrogate_k use
 * them (threads replaced, PCE marginals from the scores), checked without
 * the data, the message prefixed as the surrogate's fit errors are. */
static rfx_status check_one_surrogate(const rfx_projected_params *p);

static rfx_status check_surrogate(const rfx_projected_params *p)
{
    if (p->surrogate != RFX_PROJECTED_AUTO) return check_one_surrogate(p);
    /* the automatic choice: each candidate's parameters (ridge, srfe, pce) */
    static const rfx_method CAND[3] = {RFX_METHOD_RIDGE, RFX_METHOD_SRFE, RFX_METHOD_PCE};
    for (size_t i = 0; i < 3; i++) {
        rfx_projected_params q = *p;
        q.surrogate = CAND[i];
        RFX__TRY(check_one_surrogate(&q));
    }
    return RFX_OK;
}

static rfx_status check_one_surrogate(const rfx_projected_params *p)
{
    rfx_status st = RFX_OK;
    if (p->surrogate == RFX_METHOD_SRFE && p->srfe) {
        rfx_srfe_params sp = *p->srfe;
        sp.features.n_threads = SURROGATE_THREADS;
        st = rfx_srfe_params_check(&sp);
    } else if (p->surrogate == RFX_METHOD_PCE && p->pce) {
        rfx_pce_params pp = *p->pce;
        pp.marginals = NULL;
        pp.marginals_from_data = 1;
        pp.n_threads = SURROGATE_THREADS;
        st = rfx_pce_params_check(&pp);
    } else if ((p->surrogate == RFX_METHOD_RIDGE || p->surrogate == RFX_METHOD_BAYES) && p->fit) {
        rfx_fit_params fp = *p->fit;
        fp.method = p->surrogate;
        fp.features.n_threads = SURROGATE_THREADS;
        st = rfx_fit_params_check(&fp);
    }
    if (st) rfx__error_prefix("projected: %s surrogate", rfx_method_name(p->surrogate));
    return st;
}

rfx_status rfx_projected_params_check(const rfx_projected_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "projected: params is NULL");
    if (p->surrogate != RFX_METHOD_RIDGE && p->surrogate != RFX_METHOD_BAYES &&
        p->surrogate != RFX_METHOD_SRFE && p->surrogate != RFX_METHOD_PCE &&
        p->surrogate != RFX_PROJECTED_AUTO)
        return rfx__error(RFX_EINVAL, "projected.surrogate: %d is not one of RFX_METHOD_RIDGE, "
                                      "BAYES, SRFE, PCE or RFX_PROJECTED_AUTO", (int)p->surrogate);
    if (p->n_particles == 0)
        return rfx__error(RFX_EINVAL, "projected.n_particles: must be >= 1, got 0");
    if (p->iterations == 0)
        return rfx__error(RFX_EINVAL, "projected.iterations: must be >= 1, got 0");
    if (p->n_folds == 1)
        return rfx__error(RFX_EINVAL, "projected.n_folds: must be 0 or >= 2, got 1");
    if (!(p->gamma >= 0 && isfinite(p->gamma)))
        return rfx__error(RFX_EINVAL, "projected.gamma: must be > 0 and finite (or 0 to choose), "
                                      "got %g", p->gamma);
    if (p->standardize != 0 && p->standardize != 1)
        return rfx__error(RFX_EINVAL, "projected.standardize: must be 0 or 1, got %d",
                          p->standardize);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "projected.n_threads: must be >= 0, got %d", p->n_threads);
    return check_surrogate(p);
}

/* What depends on the m x d data, after rfx_projected_params_check. */
static rfx_status check_params(const rfx_projected_params *p, size_t m, size_t d)
{
    if (p->n_components > m - 1)
        return rfx__error(RFX_EINVAL, "projected.n_components: must be 0 (choose) or in 1..%zu "
                                      "(training rows - 1), got %zu", m - 1, p->n_components);
    if (p->theta) {
        int any = 0;
        for (size_t j = 0; j < d; j++) {
            if (!(p->theta[j] >= 0 && p->theta[j] <= 1))
                return rfx__error(RFX_EINVAL, "projected.theta[%zu]: must be in [0, 1], got %g",
                                  j, p->theta[j]);
            any |= p->theta[j] > 0;
        }
        if (!any)
            return rfx__error(RFX_EINVAL, "projected.theta: all %zu entries are zero", d);
    }
    if (p->n_folds > m)
        return rfx__error(RFX_EINVAL, "projected.n_folds: must be 0 or in 2..%zu (the rows), "
                                      "got %zu", m, p->n_folds);
    return RFX_OK;
}

/* What one thread needs to evaluate a theta: its own kernel PCA (fitting
 * mutates it) and scratch. */
typedef struct worker {
    rfx_kpca *kp;           /* NULL until the shape (gamma, k) is chosen     */
    double *T;              /* m x kmax standardised columns (fast score)   */
    double *Z;              /* m x SCORE_FEATURES features                  */
    double *C;              /* SCORE_FEATURES^2: Zc^T Zc, then eigenvectors */
    double *zy, *ev, *a;    /* SCORE_FEATURES each: Zc^T yc, eigenvalues,
                               the a_j of fast_score                        */
    double *work;           /* dsyevd's workspace for C                      */
    int *iwork;
    int lwork, liwork;
    rfx_marginal *marg;     /* kmax: PCE marginals of the current scores     */
    double *Ttr, *ytr, *Tva, *yva, *yhat; /* k-fold CV: m x kmax, m, m x kmax,
                                             m, m                            */
    double *wtr, *wva;      /* k-fold CV with weights: m each               */
    rfx_srfe_report srfe_rep; /* the last SRFE surrogate fit's choices       */
} worker;

/* A surrogate as the fit uses it: the method, its parameters (the
 * caller's or the defaults, see sur_for), the score columns it sees and the
 * targets it is fitted to. */
typedef struct sur {
    rfx_method method;      /* ridge, bayes, srfe or pce                     */
    size_t k;               /* score columns                                 */
    const double *y;        /* m targets fitted: ctx.y, or log y (log set)   */
    int log;                /* y is log ctx.y: k-fold CV exponentiates the
                               held-out predictions and compares them with
                               ctx.y                                         */
    rfx_fit_params fit;     /* ridge, bayes                                  */
    rfx_srfe_params srfe;
    rfx_pce_params pce;
} sur;

/* Everything the fit shares; read-only while the workers run. */
typedef struct ctx {
    const rfx_projected_params *p;
    rfx_cmat X;             /* the caller's inputs                           */
    size_t m, d;
    size_t k;               /* components: given, or chosen (choose_shape)   */
    double gamma;           /* kernel scale: given, or chosen                */
    size_t kmax;            /* the largest k considered: columns of the score
                               map and of the workers' buffers              */
    const double *y;        /* m targets, contiguous                         */
    double *yc;             /* m centred targets (scaled by sv)              */
    double yvar;            /* the variance of y (divisor m), or 1 if 0     */
    const double *v;        /* m row weights v_i = m w_i / sum w (sum v =
                               m), or NULL without weights: the weighted
                               means and variances, the fast score's rows
                               scaled by sv = sqrt(v), and the surrogates'
                               sample weights                               */
    double *sv;             /* m: sqrt(v), or NULL                           */
    double *Wf, *bf;        /* SCORE_FEATURES x kmax frequencies, phases     */
    sur s;                  /* the surrogate of the search and the
                               finalists: the caller's, or
                               (RFX_PROJECTED_AUTO) ridge while searching
                               and srfe for the finalists                   */
    worker *w;
    size_t nw;              /* workers: one per thread                       */
    const double *theta0;   /* particle 0's start                            */
    double theta0_loss;
} ctx;

static void worker_free(worker *w)
{
    rfx_kpca_free(w->kp);
    free(w->T);
    free(w->Z);
    free(w->C);
    free(w->zy);
    free(w->ev);
    free(w->a);
    free(w->work);
    free(w->iwork);
    free(w->marg);
    free(w->Ttr);
    free(w->ytr);
    free(w->Tva);
    free(w->yva);
    free(w->yhat);
    free(w->wtr);
    free(w->wva);
}

static void ctx_free(ctx *c)
{
    if (c->w)
        for (size_t i = 0; i < c->nw; i++) worker_free(&c->w[i]);
    free(c->w);
    free(c->yc);
    free(c->sv);
    free(c->Wf);
    free(c->bf);
}

/* The worker of the calling thread: in a team of at most nw threads the
 * thread number; on one worker always that one. */
static worker *my_worker(const ctx *c)
{
#ifdef _OPENMP
    if (c->nw > 1) return &c->w[(size_t)omp_get_thread_num() % c->nw];
#endif
    return &c->w[0];
}

/* ------------------------------------------------------------------------ */
/* The fast score                                                            */
/* ------------------------------------------------------------------------ */

/* Ridge regression of y on random Fourier features of the columns of T
 * (m x cols, row stride ld), scored by generalised cross-validation
 * (Golub, Heath & Wahba 1979): with the centred features Zc (m x D) =
 * U S Q^T, a_j = (Q_j . Zc^T yc)^2 / s_j^2 and f_j = s_j^2 / (s_j^2 +
 * lambda),
 *
 *     RSS(lambda) = |yc|^2 - sum_j a_j f_j (2 - f_j),
 *     GCV(lambda) = (RSS / m) / (1 - df / m)^2,  df = 1 + sum_j f_j,
 *
 * the minimum over the length scales and the penalty grid, divided by the
 * variance of y (a relative mean squared error, 1 = the constant
 * predictor). The columns are standardised first (a constant column
 * becomes zero). Cost per length scale: m D (cols + 1) flops and m D
 * cosines for the features, m D^2 for Zc^T Zc, about 9 D^3 for its
 * eigendecomposition, O(D SCORE_LAMBDAS) for the grid; all on the calling
 * thread. */
/* The centred features of the standardised columns S (m x cols) at
 * length-scale index s into wk->Z, their Gram matrix Zc^T Zc into wk->C
 * and Zc^T yc into wk->zy. */
static void score_features(const ctx *c, worker *wk, const double *S, size_t cols, size_t s,
                           const double *yc)
{
    const size_t m = c->m, D = SCORE_FEATURES, kx = c->kmax;
    double *Z = wk->Z;
    const double inv = 1.0 / (SCORE_SCALES[s] * sqrt((double)cols));
    for (size_t i = 0; i < m; i++) {
        double *z = Z + i * D;
        const double *t = S + i * cols;
        for (size_t j = 0; j < D; j++) {
            double a = 0;
            for (size_t l = 0; l < cols; l++) a += t[l] * c->Wf[j * kx + l];
            z[j] = a * inv;
        }
        rfx__vcos_bias(z, c->bf, sqrt(2.0 / (double)D), D);
    }
    for (size_t j = 0; j < D; j++) wk->zy[j] = 0;
    for (size_t i = 0; i < m; i++) {
        const double vi = c->v ? c->v[i] : 1.0; /* the weighted means */
        for (size_t j = 0; j < D; j++) wk->zy[j] += vi * Z[i * D + j];
    }
    for (size_t j = 0; j < D; j++) wk->zy[j] /= (double)m;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < D; j++) Z[i * D + j] -= wk->zy[j];
    if (c->sv) /* the rows of the weighted problem: scaled by sqrt(v) */
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < D; j++) Z[i * D + j] *= c->sv[i];
    RFX__SERIAL(cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)D, (int)m, 1.0, Z,
                            (int)D, 0.0, wk->C, (int)D))
    RFX__SERIAL(cblas_dgemv(CblasRowMajor, CblasTrans, (int)m, (int)D, 1.0, Z, (int)D, yc, 1,
                            0.0, wk->zy, 1))
}

/* The eigenvectors of wk->C (row j = eigenvector j, ascending) and
 * eigenvalues wk->ev, on one thread. */
static rfx_status score_eig(worker *wk)
{
    /* row-major upper = LAPACK's lower */
    int n = (int)SCORE_FEATURES, info = 0;
    RFX__SERIAL(dsyevd_("V", "L", &n, wk->C, &n, wk->ev, wk->work, &wk->lwork, wk->iwork,
                        &wk->liwork, &info, 1, 1))
    if (info != 0)
        return rfx__error(RFX_ENUMERIC, "projected: fast score: the symmetric eigensolver "
                                        "did not converge (%d)", info);
    return RFX_OK;
}

/* The fast score of the target yc (m centred values of variance yvar > 0)
 * on the columns T (m x cols, row stride ld); with fit not NULL also the
 * fitted values (centred) of the best length scale and penalty. With row
 * weights yc, the fitted values and the features are those of the rows
 * scaled by sqrt(v) (weighted ridge and its GCV), and the columns are
 * standardised by weighted moments. */
static rfx_status fast_score_y(const ctx *c, worker *wk, const double *T, size_t ld,
                               size_t cols, const double *yc, double yvar, double *fit,
                               double *score)
{
    const size_t m = c->m, D = SCORE_FEATURES;
    double *S = wk->T, *C = wk->C;
    for (size_t l = 0; l < cols; l++) {
        double mu = 0, v = 0;
        for (size_t i = 0; i < m; i++) mu += c->v ? c->v[i] * T[i * ld + l] : T[i * ld + l];
        mu /= (double)m;
        for (size_t i = 0; i < m; i++)
            v += (c->v ? c->v[i] : 1.0) * (T[i * ld + l] - mu) * (T[i * ld + l] - mu);
        const double sd = sqrt(v / (double)m);
        for (size_t i = 0; i < m; i++) S[i * cols + l] = sd > 0 ? (T[i * ld + l] - mu) / sd : 0.0;
    }
    const double yy = yvar * (double)m; /* |yc|^2 */
    double best = INFINITY, best_lambda = 0;
    size_t best_s = 0;
    for (size_t s = 0; s < N_SCORE_SCALES; s++) {
        score_features(c, wk, S, cols, s, yc);
        RFX__TRY(score_eig(wk));
        double tr = 0, top = wk->ev[D - 1];
        for (size_t j = 0; j < D; j++) {
            const double lam = wk->ev[j];
            double u = 0;
            for (size_t l = 0; l < D; l++) u += C[j * D + l] * wk->zy[l];
            /* null directions carry nothing */
            wk->a[j] = lam > 1e-12 * top ? u * u / lam : 0.0;
            if (lam > 0) tr += lam;
        }
        if (!(tr > 0)) continue; /* every feature constant: nothing to fit */
        for (size_t g = 0; g < SCORE_LAMBDAS; g++) {
            const double lambda = tr / (double)D *
                                  pow(10.0, -8.0 + 12.0 * (double)g / (double)(SCORE_LAMBDAS - 1));
            double fitted = 0, df = 1;
            for (size_t j = 0; j < D; j++) {
                const double lam = wk->ev[j] > 0 ? wk->ev[j] : 0.0;
                const double f = lam / (lam + lambda);
                fitted += wk->a[j] * f * (2.0 - f);
                df += f;
            }
            const double rss = yy - fitted > 0 ? yy - fitted : 0.0;
            const double den = 1.0 - df / (double)m;
            if (!(den > 0)) continue;
            const double gcv = rss / (double)m / (den * den);
            if (gcv < best) {
                best = gcv;
                best_s = s;
                best_lambda = lambda;
            }
        }
    }
    *score = best / yvar;
    if (fit) { /* coef = Q diag(1 / (ev + lambda)) Q^T Zc^T yc, fit = Zc coef */
        for (size_t i = 0; i < m; i++) fit[i] = 0.0;
        if (!(best < INFINITY)) return RFX_OK;
        score_features(c, wk, S, cols, best_s, yc);
        RFX__TRY(score_eig(wk));
        double *coef = wk->a;
        for (size_t l = 0; l < D; l++) coef[l] = 0.0;
        for (size_t j = 0; j < D; j++) {
            const double lam = wk->ev[j] > 0 ? wk->ev[j] : 0.0;
            double u = 0;
            for (size_t l = 0; l < D; l++) u += C[j * D + l] * wk->zy[l];
            const double w = u / (lam + best_lambda);
            for (size_t l = 0; l < D; l++) coef[l] += w * C[j * D + l];
        }
        RFX__SERIAL(cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)D, 1.0, wk->Z, (int)D,
                                coef, 1, 0.0, fit, 1))
    }
    return RFX_OK;
}

static rfx_status fast_score(const ctx *c, worker *wk, const double *T, size_t ld, size_t cols,
                             double *score)
{
    return fast_score_y(c, wk, T, ld, cols, c->yc, c->yvar, NULL, score);
}

/* ------------------------------------------------------------------------ */
/* The surrogate                                                             */
/* ------------------------------------------------------------------------ */

/* Fit the surrogate on T (rows x k) and y (rows), with the rows' weights
 * w (rows values, or NULL); *score is its own relative error estimate, or
 * NaN when it has none. light: the SRFE surrogate with FINAL_SRFE_FEATURES
 * features (scoring the finalists). */
static rfx_status fit_surrogate_k(const ctx *c, const sur *su, worker *wk, const double *T,
                                  const double *y, const double *w, size_t rows, size_t k,
                                  int light, int n_threads, rfx_model **out, double *score)
{
    rfx_cmat Tm = rfx_cmat_of(T, rows, k), Ym = rfx_cmat_of(y, rows, 1);
    rfx_status st;
    *score = NAN;
    switch (su->method) {
    case RFX_METHOD_SRFE: {
        rfx_srfe_report rep;
        rfx_srfe_params sp = su->srfe;
        sp.features.n_threads = n_threads;
        if (sp.features.sparsity > k) sp.features.sparsity = k;
        if (light && sp.features.n_features > FINAL_SRFE_FEATURES)
            sp.features.n_features = FINAL_SRFE_FEATURES;
        sp.sample_weight = w;
        st = rfx_srfe_fit(&sp, Tm, Ym, out, &rep);
        if (!st) *score = rep.cv_mse / c->yvar;
        if (!st) wk->srfe_rep = rep;
        break;
    }
    case RFX_METHOD_PCE: {
        /* normal marginals of the scores (a constant, null component gets
         * scale 1: every basis polynomial of it is then constant) */
        double wsum = (double)rows;
        if (w) {
            wsum = 0;
            for (size_t i = 0; i < rows; i++) wsum += w[i];
        }
        for (size_t j = 0; j < k; j++) { /* weighted moments with weights */
            double mu = 0, v = 0;
            for (size_t i = 0; i < rows; i++) mu += w ? w[i] * T[i * k + j] : T[i * k + j];
            mu /= wsum;
            for (size_t i = 0; i < rows; i++)
                v += (w ? w[i] : 1.0) * (T[i * k + j] - mu) * (T[i * k + j] - mu);
            v = sqrt(v / wsum);
            wk->marg[j].kind = RFX_MARGINAL_NORMAL;
            wk->marg[j].a = mu;
            wk->marg[j].b = v > 0 ? v : 1.0;
        }
        rfx_pce_params pp = su->pce;
        pp.marginals = wk->marg;
        pp.sample_weight = w;
        rfx_pce *pce = NULL;
        st = rfx_pce_fit(&pp, Tm, y, &pce);
        if (!st) {
            rfx_pce_info info;
            st = rfx_pce_get_info(pce, &info);
            if (!st) st = rfx_model_from_pce(pce, out);
            if (!st) *score = info.loo_corrected;
        }
        rfx_pce_free(pce);
        break;
    }
    default: { /* ridge, bayes */
        rfx_fit_report rep;
        rfx_fit_params fp = su->fit;
        fp.sample_weight = w;
        st = rfx_model_fit(&fp, Tm, Ym, out, &rep);
        if (!st && su->method == RFX_METHOD_RIDGE) *score = rep.score / c->yvar;
        break;
    }
    }
    if (st) rfx__error_prefix("projected: %s surrogate", rfx_method_name(su->method));
    return st;
}

static rfx_status fit_surrogate(const ctx *c, const sur *su, worker *wk, const double *T,
                                const double *w, size_t rows, int n_threads, rfx_model **out,
                                double *score)
{
    return fit_surrogate_k(c, su, wk, T, su->y, w, rows, su->k, 0, n_threads, out, score);
}

/* Fold f of k-fold CV of the surrogate su on the scores E (m x su->k), row
 * i in fold i mod folds: the squared error of its held-out rows (weighted
 * by v with weights, the fit on its rows' weights; the predictions
 * exponentiated when su is fitted to log y) into *sse. */
static rfx_status fold_sse(const ctx *c, const sur *su, worker *wk, const double *E, size_t folds,
                           size_t f, double *sse)
{
    const size_t m = c->m, k = su->k;
    size_t ntr = 0, nva = 0;
    for (size_t i = 0; i < m; i++) {
        if (i % folds == f) {
            memcpy(wk->Tva + nva * k, E + i * k, k * sizeof(double));
            if (c->v) wk->wva[nva] = c->v[i];
            wk->yva[nva++] = c->y[i];
        } else {
            memcpy(wk->Ttr + ntr * k, E + i * k, k * sizeof(double));
            if (c->v) wk->wtr[ntr] = c->v[i];
            wk->ytr[ntr++] = su->y[i];
        }
    }
    rfx_model *mod = NULL;
    double own;
    RFX__TRY(fit_surrogate_k(c, su, wk, wk->Ttr, wk->ytr, c->v ? wk->wtr : NULL, ntr, k, 0,
                             SURROGATE_THREADS, &mod, &own));
    rfx_status st = rfx_model_predict(mod, rfx_cmat_of(wk->Tva, nva, k),
                                      rfx_mat_of(wk->yhat, nva, 1), rfx_mat_none());
    rfx_model_free(mod);
    if (!st && su->log) st = rfx_target_inverse(RFX_TARGET_LOG, 0, wk->yhat, nva, wk->yhat);
    if (st) {
        rfx__error_prefix("projected: fold %zu", f);
        return st;
    }
    double e = 0;
    for (size_t i = 0; i < nva; i++)
        e += (c->v ? wk->wva[i] : 1.0) * (wk->yhat[i] - wk->yva[i]) * (wk->yhat[i] - wk->yva[i]);
    *sse = e;
    return RFX_OK;
}

/* k-fold CV of the surrogate su on the scores E (m x su->k): row i in fold
 * i mod folds; the relative mean squared error of the held-out rows of y
 * (weighted by v with weights, each fold's fit on its rows' weights).
 * spread: the folds side by side on the workers, one thread each (outside
 * any parallel region only); else one after another on wk. The folds' sums
 * add in fold order either way, so the value is the same. */
static rfx_status kfold_loss(const ctx *c, const sur *su, worker *wk, const double *E,
                             size_t folds, int spread, double *loss)
{
    double *sse = NULL;
    RFX__TRY(rfx__calloc(folds, sizeof *sse, (void **)&sse, "projected: folds"));
    const int nt = spread && c->nw > 1 ? (int)c->nw : 1;
    rfx__failure fail;
    rfx__failure_init(&fail);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
    for (size_t f = 0; f < folds; f++) {
        if (nt > 1) RFX__SERIAL_BLAS();
        rfx__failure_note(&fail, f,
                          fold_sse(c, su, nt > 1 ? my_worker(c) : wk, E, folds, f, &sse[f]));
    }
    double total = 0;
    for (size_t f = 0; f < folds; f++) total += sse[f];
    free(sse);
    RFX__TRY(rfx__failure_raise(&fail));
    *loss = total / (double)c->m / c->yvar;
    return RFX_OK;
}

/* The search loss of the worker's current kernel PCA fit: the fast score,
 * or k-fold CV of the surrogate with n_folds >= 2. */
static rfx_status loss_of_fit(const ctx *c, worker *wk, double *loss)
{
    const double *E = rfx_kpca_embedding(wk->kp).data;
    if (c->p->n_folds >= 2) return kfold_loss(c, &c->s, wk, E, c->p->n_folds, 0, loss);
    return fast_score(c, wk, E, c->k, c->k, loss);
}

/* L(theta): +infinity where the projection or the surrogate is degenerate
 * (all weights zero, a zero centred kernel, a rank-deficient fit), so the
 * swarm moves on; other errors stop the search. Called concurrently for
 * different particles, each thread on its own worker. */
static rfx_status objective(void *user, const double *theta, size_t d, double *value)
{
    ctx *c = user;
    worker *wk = my_worker(c);
    int any = 0;
    for (size_t j = 0; j < d; j++) any |= theta[j] > 0;
    double v = INFINITY;
    if (any) {
        rfx_status st = rfx_kpca_fit(wk->kp, theta);
        if (!st) st = loss_of_fit(c, wk, &v);
        if (st == RFX_ENUMERIC) v = INFINITY;
        else if (st) return st;
    }
    if (c->theta0 && memcmp(theta, c->theta0, d * sizeof *theta) == 0) {
#pragma omp critical
        if (isnan(c->theta0_loss)) c->theta0_loss = v;
    }
    *value = v;
    return RFX_OK;
}

/* ------------------------------------------------------------------------ */
/* Set-up                                                                    */
/* ------------------------------------------------------------------------ */

/* The surrogate method on k scores, fitted to y (log: y is log of the
 * targets), with the caller's parameters or the defaults; SRFE's sparsity
 * at most k. */
static sur sur_for(const ctx *c, rfx_method method, size_t k, const double *y, int log)
{
    const rfx_projected_params *p = c->p;
    sur s;
    memset(&s, 0, sizeof s);
    s.method = method;
    s.k = k;
    s.y = y;
    s.log = log;
    if (p->fit) {
        s.fit = *p->fit;
    } else {
        s.fit = rfx_fit_params_default();
        s.fit.features.n_features = DEFAULT_FEATURES;
    }
    s.fit.method = method == RFX_METHOD_BAYES ? RFX_METHOD_BAYES : RFX_METHOD_RIDGE;
    s.fit.features.n_threads = SURROGATE_THREADS;
    if (p->srfe) {
        s.srfe = *p->srfe;
    } else {
        s.srfe = rfx_srfe_params_default();
        s.srfe.features.n_features = DEFAULT_SRFE_FEATURES;
        /* the scale grid alone: on the G-function the widening took the
         * projected fit from 22-24 s to 30-36 s (seed 1001) for errors
         * that moved both ways on 5 seeds */
        s.srfe.widen_rounds = 0;
    }
    if (s.srfe.features.sparsity > k) s.srfe.features.sparsity = k;
    if (p->pce) {
        s.pce = *p->pce;
    } else {
        s.pce = rfx_pce_params_default();
        s.pce.degree = 3;
        s.pce.method = RFX_PCE_METHOD_LARS;
    }
    s.pce.n_threads = SURROGATE_THREADS;
    return s;
}

/* c->s for its method on the current k scores, fitted to y. */
static void setup_surrogate(ctx *c)
{
    c->s = sur_for(c, c->s.method, c->k, c->y, 0);
}

static rfx_status check_data(rfx_cmat X, rfx_cmat Y)
{
    RFX__TRY(rfx__check_cmat(X, "projected: X"));
    RFX__TRY(rfx__check_cmat(Y, "projected: Y"));
    if (X.rows < 3 || X.cols == 0)
        return rfx__error(RFX_EDIM, "projected: X is %zu x %zu; it needs at least 3 rows and 1 "
                                    "column", X.rows, X.cols);
    if (X.cols > 2147483647u)
        return rfx__error(RFX_EDIM, "projected: X has %zu columns, more than 2147483647", X.cols);
    if (X.rows > 2147483647u) /* the m x m kernel and BLAS's int sizes */
        return rfx__error(RFX_EOVERFLOW, "projected: X has %zu rows, more than 2147483647",
                          X.rows);
    if (Y.rows != X.rows || Y.cols != 1)
        return rfx__error(RFX_EDIM, "projected: Y is %zu x %zu, expected %zu x 1", Y.rows, Y.cols,
                          X.rows);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "projected: X row %zu, column %zu: %g is not finite", r, c,
                          X.data[r * X.stride + c]);
    if (!rfx__all_finite(Y, &r, &c))
        return rfx__error(RFX_EPARSE, "projected: Y row %zu: %g is not finite", r,
                          Y.data[r * Y.stride]);
    return RFX_OK;
}

/* A worker's scratch (its kernel PCA comes with the shape). */
static rfx_status worker_init(const ctx *c, worker *w)
{
    const size_t m = c->m, D = SCORE_FEATURES;
    size_t mk, mD;
    RFX__TRY(rfx__mul(m, c->kmax, &mk, "projected: scores m x k"));
    RFX__TRY(rfx__mul(m, D, &mD, "projected: score features"));
    RFX__TRY(rfx__alloc(mk, sizeof(double), (void **)&w->T, "projected: score columns"));
    RFX__TRY(rfx__alloc(mD, sizeof(double), (void **)&w->Z, "projected: score features"));
    RFX__TRY(rfx__alloc(D * D, sizeof(double), (void **)&w->C, "projected: score features"));
    RFX__TRY(rfx__alloc(D, sizeof(double), (void **)&w->zy, "projected: score features"));
    RFX__TRY(rfx__alloc(D, sizeof(double), (void **)&w->ev, "projected: score features"));
    RFX__TRY(rfx__alloc(D, sizeof(double), (void **)&w->a, "projected: score features"));
    int n = (int)D, info = 0, lwork = -1, liwork = -1, iq = 0;
    double q = 0;
    dsyevd_("V", "L", &n, w->C, &n, w->ev, &q, &lwork, &iq, &liwork, &info, 1, 1);
    if (info != 0)
        return rfx__error(RFX_EINTERNAL, "projected: dsyevd workspace query failed (%d)", info);
    w->lwork = (int)q;
    w->liwork = iq;
    RFX__TRY(rfx__alloc((size_t)w->lwork, sizeof(double), (void **)&w->work,
                        "projected: eigensolver"));
    RFX__TRY(rfx__alloc((size_t)w->liwork, sizeof(int), (void **)&w->iwork,
                        "projected: eigensolver"));
    RFX__TRY(rfx__alloc(c->kmax, sizeof *w->marg, (void **)&w->marg, "projected: marginals"));
    RFX__TRY(rfx__alloc(mk, sizeof(double), (void **)&w->Ttr, "projected: folds"));
    RFX__TRY(rfx__alloc(mk, sizeof(double), (void **)&w->Tva, "projected: folds"));
    RFX__TRY(rfx__alloc(m, sizeof(double), (void **)&w->ytr, "projected: folds"));
    RFX__TRY(rfx__alloc(m, sizeof(double), (void **)&w->yva, "projected: folds"));
    RFX__TRY(rfx__alloc(m, sizeof(double), (void **)&w->yhat, "projected: folds"));
    if (c->v) {
        RFX__TRY(rfx__alloc(m, sizeof(double), (void **)&w->wtr, "projected: folds"));
        RFX__TRY(rfx__alloc(m, sizeof(double), (void **)&w->wva, "projected: folds"));
    }
    return RFX_OK;
}

/* The largest number of workers any stage can use. */
static size_t useful_workers(const rfx_projected_params *p, size_t d)
{
    size_t most = p->n_particles;
    if (d > most) most = d;
    if (N_GAMMAS > most) most = N_GAMMAS;
    size_t nt = (size_t)rfx__threads(p->n_threads);
    return nt < most ? nt : most;
}

/* The variance of c->y (weighted by v, divisor m; 1 when it is 0) and the
 * fast score's centred target yc (scaled by sv). */
static void target_moments(ctx *c)
{
    const size_t m = c->m;
    const double *y = c->y, *v = c->v;
    double mu = 0, var = 0;
    for (size_t i = 0; i < m; i++) mu += v ? v[i] * y[i] : y[i];
    mu /= (double)m;
    for (size_t i = 0; i < m; i++) var += (v ? v[i] : 1.0) * (y[i] - mu) * (y[i] - mu);
    var /= (double)m;
    c->yvar = var > 0 ? var : 1.0;
    for (size_t i = 0; i < m; i++)
        c->yc[i] = var > 0 ? (y[i] - mu) * (c->sv ? c->sv[i] : 1.0) : 0.0;
}

static rfx_status ctx_init(ctx *c, const rfx_projected_params *p, rfx_cmat X, rfx_cmat Y,
                           double *y, const double *v)
{
    const size_t m = X.rows, d = X.cols, D = SCORE_FEATURES;
    memset(c, 0, sizeof *c);
    c->p = p;
    c->X = X;
    c->m = m;
    c->d = d;
    c->k = p->n_components;
    c->gamma = p->gamma;
    c->kmax = p->n_components ? p->n_components : (m - 1 < AUTO_K_MAX ? m - 1 : AUTO_K_MAX);
    c->theta0_loss = NAN;
    c->s.method = p->surrogate == RFX_PROJECTED_AUTO ? RFX_METHOD_RIDGE : p->surrogate;
    for (size_t i = 0; i < m; i++) y[i] = Y.data[i * Y.stride];
    c->y = y;
    c->v = v;
    if (v) {
        RFX__TRY(rfx__alloc(m, sizeof(double), (void **)&c->sv, "projected: weights"));
        for (size_t i = 0; i < m; i++) c->sv[i] = sqrt(v[i]);
    }
    RFX__TRY(rfx__alloc(m, sizeof(double), (void **)&c->yc, "projected: targets"));
    target_moments(c);
    size_t Dk;
    RFX__TRY(rfx__mul(D, c->kmax, &Dk, "projected: score frequencies"));
    RFX__TRY(rfx__alloc(Dk, sizeof(double), (void **)&c->Wf, "projected: score frequencies"));
    RFX__TRY(rfx__alloc(D, sizeof(double), (void **)&c->bf, "projected: score phases"));
    rfx__rng r;
    for (size_t j = 0; j < D; j++) {
        rfx__rng_init(&r, p->seed, SCORE_STREAM, j);
        c->bf[j] = TWO_PI * rfx__rng_uniform(&r);
        for (size_t l = 0; l < c->kmax; l++) c->Wf[j * c->kmax + l] = rfx__rng_normal(&r);
    }
    c->nw = useful_workers(p, d);
    if (c->nw < 1) c->nw = 1;
    RFX__TRY(rfx__calloc(c->nw, sizeof *c->w, (void **)&c->w, "projected: workers"));
    for (size_t i = 0; i < c->nw; i++) RFX__TRY(worker_init(c, &c->w[i]));
    return RFX_OK;
}

/* A kernel PCA of the training rows with scale gamma and k components; on
 * one thread when the workers run in parallel. */
static rfx_status kpca_make(const ctx *c, double gamma, size_t k, rfx_kpca **out)
{
    rfx_kpca_params kpp = rfx_kpca_params_default();
    kpp.n_components = k;
    kpp.method = RFX_KPCA_METHOD_EXACT;
    kpp.gamma = gamma;
    kpp.standardize = c->p->standardize;
    kpp.n_threads = c->nw > 1 ? 1 : c->p->n_threads;
    rfx_status st = rfx_kpca_create(&kpp, c->X, out);
    if (st) rfx__error_prefix("projected");
    return st;
}

/* ------------------------------------------------------------------------ */
/* Screening, the shape and the swarm                                        */
/* ------------------------------------------------------------------------ */

/* The first non-OK status of n slots (in slot order), or RFX_OK. */
/* theta_0 from the inputs one at a time: r_i = max(0, 1 - S_i), S_i the
 * fast score of input i alone, is the fraction of the variance of y that
 * input i explains by itself. An input whose effect is below the score's
 * resolution (about the GCV's penalty for a few degrees of freedom, 1-2%
 * of the variance at m = 800) gets r_i = 0 there, so a second round
 * scores each such input against the residual of a joint fast fit of the
 * (up to kmax) strongest inputs, where a weak effect is a larger share:
 * r_i = max(0, 1 - S'_i) var(residual) / var(y). theta_0,i = sqrt(r_i /
 * max_j r_j). When no input explains anything, theta_0 ~ U[0, 1]^d. The
 * score standardises the column, so the raw column serves for either view
 * of the kernel. Inputs in parallel over the workers, each result in its
 * own slot. */
static rfx_status screen(ctx *c, double *theta0, double *theta0x)
{
    const size_t d = c->d, m = c->m;
    const int nt = (int)c->nw;
    rfx__failure fail;
    double *J = NULL, *res = NULL;
    size_t *order = NULL;
    rfx__failure_init(&fail);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
    for (size_t i = 0; i < d; i++) {
        RFX__SERIAL_BLAS();
        double s = INFINITY;
        rfx__failure_note(&fail, i, fast_score(c, my_worker(c), c->X.data + i, c->X.stride, 1, &s));
        theta0[i] = s;
    }
    rfx_status st = rfx__failure_raise(&fail);
    double top = 0;
    size_t na = 0;
    for (size_t i = 0; i < d && !st; i++) {
        double r = 1.0 - theta0[i];
        theta0[i] = r > 0 ? r : 0.0;
        if (theta0[i] > top) top = theta0[i];
        na += theta0[i] > 0;
    }
    if (!st) memcpy(theta0x, theta0, d * sizeof *theta0);
    if (!st && top > 0 && na < d) { /* the second round, into theta0x */
        const size_t kk = na < c->kmax ? na : c->kmax;
        size_t mk;
        st = rfx__mul(m, kk, &mk, "projected: screening");
        if (!st) st = rfx__alloc(mk, sizeof *J, (void **)&J, "projected: screening");
        if (!st) st = rfx__alloc(2 * m, sizeof *res, (void **)&res, "projected: screening");
        if (!st) st = rfx__alloc(d, sizeof *order, (void **)&order, "projected: screening");
        if (!st) {
            /* the kk strongest inputs, strongest first (ties: lower index) */
            for (size_t i = 0; i < d; i++) order[i] = i;
            for (size_t a = 0; a < kk; a++)
                for (size_t b = a + 1; b < d; b++)
                    if (theta0[order[b]] > theta0[order[a]]) {
                        size_t t = order[a];
                        order[a] = order[b];
                        order[b] = t;
                    }
            for (size_t i = 0; i < m; i++)
                for (size_t a = 0; a < kk; a++)
                    J[i * kk + a] = c->X.data[i * c->X.stride + order[a]];
            double joint;
            st = fast_score_y(c, &c->w[0], J, kk, kk, c->yc, c->yvar, res + m, &joint);
        }
        double vres = 0;
        if (!st) {
            for (size_t i = 0; i < m; i++) {
                res[i] = c->yc[i] - res[m + i];
                vres += res[i] * res[i];
            }
            vres /= (double)m;
        }
        if (!st && vres > 0) {
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
            for (size_t i = 0; i < d; i++) {
                if (theta0[i] > 0) continue;
                RFX__SERIAL_BLAS();
                double s = INFINITY;
                rfx__failure_note(&fail, i,
                                  fast_score_y(c, my_worker(c), c->X.data + i, c->X.stride, 1,
                                               res, vres, NULL, &s));
                const double r = (1.0 - s) * vres / c->yvar;
                theta0x[i] = r > 0 ? r : 0.0;
            }
            st = rfx__failure_raise(&fail);
        }
    }
    free(J);
    free(res);
    free(order);
    if (st) return st;
    if (top > 0) {
        /* theta0x by its own largest: a weak input's share of the residual
         * can pass the strongest input's share of y (on targets that the
         * inputs barely explain) */
        double topx = top;
        for (size_t i = 0; i < d; i++)
            if (theta0x[i] > topx) topx = theta0x[i];
        for (size_t i = 0; i < d; i++) {
            theta0[i] = sqrt(theta0[i] / top);
            theta0x[i] = sqrt(theta0x[i] / topx);
        }
    } else {
        rfx__rng r;
        rfx__rng_init(&r, c->p->seed, THETA0_STREAM, 0);
        for (size_t i = 0; i < d; i++) theta0[i] = theta0x[i] = rfx__rng_uniform(&r);
    }
    return RFX_OK;
}

/* The kernel scale and the number of components, where not given: the
 * pair of lowest fast score at theta (theta_0 or the given theta) over
 * gamma in GAMMAS and k = 1..kmax. One kernel PCA with kmax components
 * per gamma serves every k (the first k components of a fit with more are
 * those of a fit with k). Gammas in parallel over the workers; ties go to
 * the smaller gamma, then the smaller k. */
static rfx_status choose_shape(ctx *c, const double *theta)
{
    if (c->k > 0 && c->gamma > 0) return RFX_OK;
    const size_t ng = c->gamma > 0 ? 1 : N_GAMMAS, nk = c->kmax;
    const size_t k0 = c->k > 0 ? c->k : 1; /* the ks tried: k0..kmax */
    const int nt = (int)c->nw;
    double *loss = NULL;
    rfx__failure fail;
    rfx__failure_init(&fail);
    RFX__TRY(rfx__alloc(ng * nk, sizeof *loss, (void **)&loss, "projected: shapes"));
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
    for (size_t g = 0; g < ng; g++) {
        RFX__SERIAL_BLAS();
        const double gamma = c->gamma > 0 ? c->gamma : GAMMAS[g];
        double *l = loss + g * nk;
        for (size_t k = 0; k < nk; k++) l[k] = INFINITY;
        rfx_kpca *kp = NULL;
        rfx_status s = kpca_make(c, gamma, nk, &kp);
        if (!s) s = rfx_kpca_fit(kp, theta);
        for (size_t k = k0; k <= nk && !s; k++)
            s = fast_score(c, my_worker(c), rfx_kpca_embedding(kp).data, nk, k, &l[k - 1]);
        rfx_kpca_free(kp);
        rfx__failure_note(&fail, g, s == RFX_ENUMERIC ? RFX_OK : s);
    }
    rfx_status st = rfx__failure_raise(&fail);
    size_t bg = 0, bk = k0 - 1;
    for (size_t g = 0; g < ng && !st; g++)
        for (size_t k = k0 - 1; k < nk; k++)
            if (loss[g * nk + k] < loss[bg * nk + bk]) {
                bg = g;
                bk = k;
            }
    if (!st && !(loss[bg * nk + bk] < INFINITY))
        st = rfx__error(RFX_ENUMERIC, "projected: no kernel scale gives a finite loss at %s: the "
                                      "centred kernel is zero", c->p->theta ? "the given theta"
                                                                             : "theta_0");
    if (!st) {
        if (!(c->gamma > 0)) c->gamma = GAMMAS[bg];
        c->k = bk + 1;
    }
    free(loss);
    return st;
}

/* The swarm over [0, 1]^d from theta_0, particles on the workers. */
static rfx_status search(ctx *c, double *theta, double *theta0, double *history,
                         rfx_pso_report *rep)
{
    const rfx_projected_params *p = c->p;
    const size_t d = c->d;
    double *lo = NULL, *hi = NULL;
    c->theta0 = theta0;
    RFX__TRY(rfx__alloc(d, sizeof(double), (void **)&lo, "projected: bounds"));
    rfx_status st = rfx__alloc(d, sizeof(double), (void **)&hi, "projected: bounds");
    if (!st) {
        for (size_t j = 0; j < d; j++) {
            lo[j] = 0.0;
            hi[j] = 1.0;
        }
        rfx_pso_params pp = rfx_pso_params_default();
        pp.n_particles = p->n_particles;
        pp.max_iter = p->iterations;
        pp.lower = lo;
        pp.upper = hi;
        pp.x0 = theta0;
        pp.seed = p->seed;
        pp.patience = p->patience;
        pp.thread_safe = 1;
        pp.n_threads = (int)(c->nw < p->n_particles ? c->nw : p->n_particles);
        pp.progress = p->progress;
        pp.progress_user = p->progress_user;
        st = rfx_pso_minimize(&pp, d, objective, c, theta, history, rep);
        if (st) rfx__error_prefix("projected");
    }
    free(lo);
    free(hi);
    return st;
}

/* Step 4, the finalists: the swarm's theta, theta_0 and theta_0x (the
 * distinct ones), each with the
 * chosen (gamma, k), the other kernel scales of FINAL_GAMMAS (when gamma is
 * not given) and k = kmax (when k is not given), scored by the surrogate's
 * own estimate of its prediction error (ridge GCV, SRFE GCV with
 * FINAL_SRFE_FEATURES features, PCE corrected leave-one-out). The lowest
 * wins, ties to the earlier candidate (the swarm's own first); theta,
 * c->gamma and c->k are set to it. One kernel PCA per (theta, gamma) with
 * the largest k tried, in parallel over the workers, each score in its
 * own slot. *n counts the candidates scored. */
static rfx_status finalists(ctx *c, double *theta, const double *theta0,
                            const double *theta0x, size_t *n)
{
    const size_t d = c->d, m = c->m;
    const int nt = (int)c->nw;
    const double *thetas[3] = {theta, theta0, theta0x};
    size_t nth = 1;
    for (size_t t = 1; t < 3; t++) { /* distinct ones only */
        int dup = 0;
        for (size_t u = 0; u < nth; u++) dup |= memcmp(thetas[u], thetas[t], d * sizeof *theta) == 0;
        if (!dup) thetas[nth++] = thetas[t];
    }
    double gammas[1 + N_FINAL_GAMMAS];
    size_t ng = 0, ks[2], nk = 0;
    gammas[ng++] = c->gamma;
    if (!(c->p->gamma > 0))
        for (size_t g = 0; g < N_FINAL_GAMMAS; g++)
            if (FINAL_GAMMAS[g] != c->gamma) gammas[ng++] = FINAL_GAMMAS[g];
    ks[nk++] = c->k;
    if (c->p->n_components == 0 && c->kmax != c->k) ks[nk++] = c->kmax;
    const size_t kbig = nk > 1 ? c->kmax : c->k, pairs = nth * ng;
    const int automatic = c->p->surrogate == RFX_PROJECTED_AUTO;
    double score[3 * (1 + N_FINAL_GAMMAS) * 2];
    rfx__failure fail;
    rfx__failure_init(&fail);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
    for (size_t q = 0; q < pairs; q++) {
        RFX__SERIAL_BLAS();
        const double *th = thetas[q / ng];
        worker *wk = my_worker(c);
        rfx_kpca *kp = NULL;
        for (size_t j = 0; j < nk; j++) score[q * nk + j] = INFINITY;
        rfx_status s = kpca_make(c, gammas[q % ng], kbig, &kp);
        if (!s) s = rfx_kpca_fit(kp, th);
        for (size_t j = 0; j < nk && !s; j++) {
            const double *E = rfx_kpca_embedding(kp).data;
            const size_t k = ks[j];
            for (size_t i = 0; i < m; i++)
                memcpy(wk->Ttr + i * k, E + i * kbig, k * sizeof(double));
            rfx_model *mod = NULL;
            double own = NAN;
            s = fit_surrogate_k(c, &c->s, wk, wk->Ttr, c->y, c->v, m, k, 1, 1, &mod, &own);
            rfx_model_free(mod);
            if (!s && !isnan(own)) score[q * nk + j] = own;
        }
        rfx_kpca_free(kp);
        /* a degenerate candidate loses; for the automatic surrogate, so
         * does one SRFE cannot fit (too few rows: ridge or pce may still) */
        const int loses = s == RFX_ENUMERIC ||
                          (automatic && s != RFX_ENOMEM && s != RFX_ECANCELLED);
        if (loses) rfx_clear_error();
        rfx__failure_note(&fail, q, loses ? RFX_OK : s);
    }
    RFX__TRY(rfx__failure_raise(&fail));
    size_t best = 0;
    for (size_t i = 1; i < pairs * nk; i++)
        if (score[i] < score[best]) best = i;
    *n = pairs * nk;
    if (!(score[best] < INFINITY)) return RFX_OK; /* keep the swarm's choice */
    const size_t q = best / nk;
    if (q / ng > 0) memcpy(theta, thetas[q / ng], d * sizeof *theta);
    c->gamma = gammas[q % ng];
    c->k = ks[best % nk];
    return RFX_OK;
}

/* The own estimate of the ridge and SRFE surrogates just fitted on the
 * scores of kp (fitted: the model; SRFE's choices in wk->srfe_rep):
 * K-fold CV (FALLBACK_FOLDS, row i in fold i mod K) at the
 * hyperparameters that fit chose (ridge: length scale and penalty; SRFE:
 * weight scale, q, N and lambda). Their selection scores are no estimates
 * where the fits come near interpolation, as they do on noise-free
 * targets: on an Ishigami sample (m = 500, 1000 features of the
 * standardised inputs at the length scale ridge chose, lambda 1e-10 near
 * its choice) ridge's GCV was 7e-8 of the variance of y, the exact
 * leave-one-out error 3.7e-4 and the validation error 1.4e-4; on the
 * scores of one projection of that sample ridge's GCV said 6e-7 and SRFE's
 * 2.3e-3 where their validation errors were 0.04 and 0.008. */
/* The folds of an own estimate: FALLBACK_FOLDS, at most the rows. */
static size_t own_folds(const ctx *c)
{
    return FALLBACK_FOLDS < c->m ? FALLBACK_FOLDS : c->m;
}

static rfx_status own_kfold(const ctx *c, const sur *su, worker *wk, const rfx_kpca *kp,
                            const rfx_model *fitted, int spread, double *score)
{
    sur t = *su;
    if (su->method == RFX_METHOD_SRFE) {
        const rfx_srfe_report r = wk->srfe_rep;
        t.srfe.features.weight_scale = r.weight_scale;
        t.srfe.features.sparsity = r.sparsity;
        t.srfe.features.n_features = r.n_features;
        t.srfe.lambda = r.lambda;
        t.srfe.n_folds = 2; /* unused with everything given; checked against the rows */
    } else {
        rfx_model_info mi;
        RFX__TRY(rfx_model_get_info(fitted, &mi));
        t.fit.features.length_scale = mi.features.length_scale;
        t.fit.features.gamma = 0;
        t.fit.lambda = mi.lambda;
    }
    return kfold_loss(c, &t, wk, rfx_kpca_embedding(kp).data, own_folds(c), spread, score);
}

/* A candidate of the automatic surrogate: a surrogate on the scores of a
 * projection, its model and its estimate of the relative error of y. */
typedef struct auto_cand {
    sur s;
    const rfx_kpca *kp;
    int swarm;              /* kp is the swarm's own projection              */
    size_t slot;            /* its place in the report's scores: 3 log + i   */
    rfx_model *model;       /* NULL: not fitted                              */
    double score;           /* NaN: could not be fitted                      */
} auto_cand;

/* Fit a candidate on all rows and estimate its error, on the calling
 * thread and its worker wk: ridge and SRFE K-fold CV at their chosen
 * hyperparameters (own_kfold), PCE corrected leave-one-out, or K-fold CV
 * when fitted to log y (its LOO is of log y). A candidate that cannot be
 * fitted keeps a NaN score; only RFX_ENOMEM and RFX_ECANCELLED are
 * errors. */
static rfx_status auto_cand_run(const ctx *c, auto_cand *a, worker *wk)
{
    const double *E = rfx_kpca_embedding(a->kp).data;
    rfx_model *mod = NULL;
    double s = NAN;
    rfx_status st = fit_surrogate(c, &a->s, wk, E, c->v, c->m, SURROGATE_THREADS, &mod, &s);
    if (!st && a->s.method != RFX_METHOD_PCE) st = own_kfold(c, &a->s, wk, a->kp, mod, 0, &s);
    else if (!st && a->s.log) st = kfold_loss(c, &a->s, wk, E, own_folds(c), 0, &s);
    if (!st && a->s.log) st = rfx_model_set_target_transform(mod, RFX_TARGET_LOG, 0);
    if (st || !(s >= 0)) {
        rfx_model_free(mod);
        if (st == RFX_ENOMEM || st == RFX_ECANCELLED) return st;
        rfx_clear_error(); /* a candidate that cannot fit these scores */
        return RFX_OK;
    }
    a->model = mod;
    a->score = s;
    return RFX_OK;
}

/* The automatic surrogate: ridge, srfe and pce on the scores of the
 * finalists' projection kp_f (k_f columns), and ridge and pce on those of
 * the swarm's kp_s (k_s; NULL when it is the same projection), each
 * fitted to y and, with logy (m values, or NULL), to log y; the
 * candidates side by side on the workers, one thread each (each fit is
 * the same on any number: on one G-function sample, d = 20, m = 800, this
 * took 4.8 s on 2 threads where ridge and pce side by side, then srfe on
 * both threads with its folds side by side, took 5.5 s). The least error
 * estimate of each projection, ties to the earlier (y before log y;
 * ridge, srfe, pce); the swarm's projection wins ties.
 * *best (NULL when nothing could be fitted), its estimate *own (or
 * infinity), *swarm whether it is on kp_s, scores[6] the estimates on its
 * projection (ridge, srfe, pce fitted to y, then to log y; NaN: not fitted). */
static rfx_status auto_surrogate(const ctx *c, const rfx_kpca *kp_f, size_t k_f,
                                 const rfx_kpca *kp_s, size_t k_s, const double *logy,
                                 rfx_model **best, double *own, int *swarm, double scores[6])
{
    static const rfx_method CAND[3] = {RFX_METHOD_RIDGE, RFX_METHOD_SRFE, RFX_METHOD_PCE};
    auto_cand a[12];
    size_t n = 0;
    for (int sw = 0; sw < 2; sw++) {
        if (sw && !kp_s) break;
        for (int lg = 0; lg < 2; lg++) {
            if (lg && !logy) continue;
            for (size_t i = 0; i < 3; i++) {
                if (sw && CAND[i] == RFX_METHOD_SRFE) continue;
                a[n].s = sur_for(c, CAND[i], sw ? k_s : k_f, lg ? logy : c->y, lg);
                a[n].kp = sw ? kp_s : kp_f;
                a[n].swarm = sw;
                a[n].slot = 3 * (size_t)lg + i;
                a[n].model = NULL;
                a[n].score = NAN;
                n++;
            }
        }
    }
    /* the costliest first: srfe, then ridge (1000 features, its length
     * scale searched), then pce */
    static const rfx_method COST[3] = {RFX_METHOD_SRFE, RFX_METHOD_RIDGE, RFX_METHOD_PCE};
    size_t order[12], no = 0;
    for (size_t pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < n; i++)
            if (a[i].s.method == COST[pass]) order[no++] = i;
    const int nt = (int)c->nw;
    rfx__failure fail;
    rfx__failure_init(&fail);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
    for (size_t j = 0; j < n; j++) {
        if (nt > 1) RFX__SERIAL_BLAS();
        rfx__failure_note(&fail, order[j], auto_cand_run(c, &a[order[j]], my_worker(c)));
    }
    rfx_status st = rfx__failure_raise(&fail);
    size_t bf = n, bs = n; /* the least of each projection */
    for (size_t i = 0; i < n && !st; i++) {
        if (!a[i].model) continue;
        size_t *b = a[i].swarm ? &bs : &bf;
        if (*b == n || a[i].score < a[*b].score) *b = i;
    }
    size_t b = bs < n && (bf == n || a[bs].score <= a[bf].score) ? bs : bf;
    *best = NULL;
    *own = INFINITY;
    *swarm = 0;
    for (size_t j = 0; j < 6; j++) scores[j] = NAN;
    if (!st && b < n) {
        *best = a[b].model;
        *own = a[b].score;
        *swarm = a[b].swarm;
        a[b].model = NULL;
        for (size_t i = 0; i < n; i++)
            if (a[i].swarm == *swarm) scores[a[i].slot] = a[i].score;
    }
    for (size_t i = 0; i < n; i++) rfx_model_free(a[i].model);
    return st;
}

/* The model around the fitted projection (copied into a transform-only
 * kernel PCA) and the surrogate (owned on success). */
static rfx_status make_model(const ctx *c, rfx_kpca *fitted, rfx_model *inner, double loss,
                             rfx_model **out)
{
    rfx__kpca_arrays a;
    rfx_kpca *kp = NULL;
    RFX__TRY(rfx__kpca_get_arrays(fitted, &a));
    RFX__TRY(rfx__kpca_from_arrays(&a, c->p->n_threads, &kp));
    rfx_status st = rfx__projected_model(kp, inner, c->d, c->m, loss, "projected", out);
    if (st) rfx_kpca_free(kp);
    return st;
}

/* The loss at a given theta (no search): the surrogate's own estimate
 * (ridge and SRFE: K-fold CV at their chosen hyperparameters, see
 * own_kfold; PCE corrected leave-one-out) from the final fit, else k-fold
 * CV (n_folds, or FALLBACK_FOLDS for the Bayesian surrogate). */
static rfx_status given_theta_loss(ctx *c, worker *wk, const rfx_model *fitted, double own,
                                   double *loss)
{
    if (c->p->n_folds < 2 &&
        (c->s.method == RFX_METHOD_RIDGE || c->s.method == RFX_METHOD_SRFE))
        return own_kfold(c, &c->s, wk, wk->kp, fitted, 1, loss);
    if (c->p->n_folds < 2 && !isnan(own)) {
        *loss = own;
        return RFX_OK;
    }
    const size_t folds = c->p->n_folds >= 2 ? c->p->n_folds : own_folds(c);
    return kfold_loss(c, &c->s, wk, rfx_kpca_embedding(wk->kp).data, folds, 1, loss);
}

/* With sample weights: check them and, when some are 0, fit the rows of
 * positive weight alone (copies of their X, Y and weights) and set *done,
 * so that a row of weight 0 is a row left out for every step. */
static rfx_status fit_positive_rows(const rfx_projected_params *params, rfx_cmat X, rfx_cmat Y,
                                    rfx_model **out, rfx_projected_report *report, int *done)
{
    const double *w = params->sample_weight;
    const size_t n = X.rows, d = X.cols;
    *done = 0;
    RFX__TRY(check_data(X, Y));
    RFX__TRY(rfx__check_weights(w, n, "projected.sample_weight"));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) m += w[i] > 0;
    if (m == n) return RFX_OK;
    if (m < 3)
        return rfx__error(RFX_EDIM, "projected: at least 3 rows of positive weight are needed, "
                                    "got %zu", m);
    double *Xp = NULL, *Yp = NULL, *wp = NULL;
    rfx_status st = rfx__alloc(m * d, sizeof *Xp, (void **)&Xp, "projected: weighted rows");
    if (!st) st = rfx__alloc(m, sizeof *Yp, (void **)&Yp, "projected: weighted rows");
    if (!st) st = rfx__alloc(m, sizeof *wp, (void **)&wp, "projected: weighted rows");
    if (!st) {
        for (size_t i = 0, k = 0; i < n; i++) {
            if (!(w[i] > 0)) continue;
            memcpy(Xp + k * d, X.data + i * X.stride, d * sizeof *Xp);
            Yp[k] = Y.data[i * Y.stride];
            wp[k++] = w[i];
        }
        rfx_projected_params p = *params;
        p.sample_weight = wp;
        st = rfx_projected_fit(&p, rfx_cmat_of(Xp, m, d), rfx_cmat_of(Yp, m, 1), out, report);
        *done = 1;
    }
    free(Xp);
    free(Yp);
    free(wp);
    return st;
}

rfx_status rfx_projected_fit(const rfx_projected_params *params, rfx_cmat X, rfx_cmat Y,
                             rfx_model **out, rfx_projected_report *report)
{
    if (!out) return rfx__error(RFX_EINVAL, "projected: out is NULL");
    RFX__TRY(rfx_projected_params_check(params));
    if (params->sample_weight) {
        int done = 0;
        rfx_status st = fit_positive_rows(params, X, Y, out, report, &done);
        if (st || done) return st;
    }
    RFX__TRY(check_data(X, Y));
    RFX__TRY(check_params(params, X.rows, X.cols));
    const size_t m = X.rows, d = X.cols;
    ctx c;
    double *y = NULL, *theta = NULL, *theta0 = NULL, *theta0x = NULL, *theta_s = NULL;
    double *hist = NULL, *v = NULL, *logy = NULL;
    rfx_model *inner = NULL;
    rfx_kpca *kp_s = NULL; /* the automatic surrogate: see below */
    rfx_pso_report rep;
    memset(&rep, 0, sizeof rep);
    memset(&c, 0, sizeof c);
    rfx_status st = rfx__alloc(m, sizeof(double), (void **)&y, "projected: targets");
    if (!st) st = rfx__alloc(d, sizeof(double), (void **)&theta, "projected: theta");
    if (!st) st = rfx__alloc(d, sizeof(double), (void **)&theta0, "projected: theta");
    if (!st) st = rfx__alloc(d, sizeof(double), (void **)&theta0x, "projected: theta");
    if (!st) st = rfx__alloc(d, sizeof(double), (void **)&theta_s, "projected: theta");
    if (!st) st = rfx__alloc(params->iterations + 1, sizeof(double), (void **)&hist,
                             "projected: history");
    if (!st && params->sample_weight) { /* positive here; equal ones are no weights */
        const double *w = params->sample_weight;
        int equal = 1;
        double W = 0;
        for (size_t i = 0; i < m; i++) {
            W += w[i];
            equal &= w[i] == w[0];
        }
        if (!equal) {
            st = rfx__alloc(m, sizeof(double), (void **)&v, "projected: weights");
            if (!st)
                for (size_t i = 0; i < m; i++) v[i] = (double)m * w[i] / W;
        }
    }
    if (!st) st = ctx_init(&c, params, X, Y, y, v);
    if (st) goto done;

    /* theta_0, then gamma and k where not given, then one kernel PCA per
     * worker of that shape */
    if (params->theta) memcpy(theta, params->theta, d * sizeof(double));
    else if ((st = screen(&c, theta0, theta0x))) goto done;
    if ((st = choose_shape(&c, params->theta ? theta : theta0))) goto done;
    setup_surrogate(&c);
    for (size_t i = 0; i < c.nw; i++)
        if ((st = kpca_make(&c, c.gamma, c.k, &c.w[i].kp))) goto done;

    double loss = NAN, search_loss = NAN, own;
    size_t evals = 1, n_final = 0;
    /* the automatic surrogate: the swarm's own projection (theta_s, g_s,
     * k_s), kept when the finalists moved away from it (kp_s fitted) */
    const int automatic = params->surrogate == RFX_PROJECTED_AUTO;
    const size_t k_s = c.k; /* the search keeps the shape */
    const double g_s = c.gamma;
    if (!params->theta) {
        if ((st = search(&c, theta, theta0, hist, &rep))) goto done;
        loss = search_loss = rep.value;
        evals = rep.evaluations;
        /* the finalists, for the surrogates whose own score ranked them
         * as the validation error did (not ridge's GCV: on the G-function
         * it preferred a candidate 30% worse on validation); the automatic
         * surrogate ranks them by SRFE's GCV, then compares its three
         * candidates on their projection with ridge and pce on the swarm's
         * (srfe there is what the finalists ranked below theirs) */
        if (params->n_folds < 2 &&
            (params->surrogate == RFX_METHOD_SRFE || params->surrogate == RFX_METHOD_PCE ||
             automatic)) {
            if (automatic) {
                c.s.method = RFX_METHOD_SRFE;
                memcpy(theta_s, theta, d * sizeof(double));
            }
            if ((st = finalists(&c, theta, theta0, theta0x, &n_final))) goto done;
            setup_surrogate(&c);
            if (automatic && (c.k != k_s || c.gamma != g_s ||
                              memcmp(theta, theta_s, d * sizeof(double)) != 0)) {
                if ((st = kpca_make(&c, g_s, k_s, &kp_s))) goto done;
                if ((st = rfx_kpca_fit(kp_s, theta_s))) goto done;
            }
            if (c.k != k_s || c.gamma != g_s) {
                rfx_kpca_free(c.w[0].kp);
                c.w[0].kp = NULL;
                if ((st = kpca_make(&c, c.gamma, c.k, &c.w[0].kp))) goto done;
            }
        }
    }
    /* the surrogate on the scores of all rows for the chosen theta */
    worker *w0 = &c.w[0];
    st = rfx_kpca_fit(w0->kp, theta);
    if (st == RFX_ENUMERIC && params->theta)
        rfx__error_prefix("projected: the given theta");
    if (st) goto done;
    if (automatic) {
        /* the log candidates where y > 0 (m positive-weight rows here) */
        int positive = 1;
        for (size_t i = 0; i < m; i++) positive &= y[i] > 0;
        if (positive && (st = rfx__alloc(m, sizeof(double), (void **)&logy, "projected: log y")))
            goto done;
        if (logy)
            for (size_t i = 0; i < m; i++) logy[i] = log(y[i]);
        double scores[6];
        int swarm = 0;
        if ((st = auto_surrogate(&c, w0->kp, c.k, kp_s, k_s, logy, &inner, &own, &swarm, scores)))
            goto done;
        if (swarm) {
            memcpy(theta, theta_s, d * sizeof(double));
            rfx_kpca *t = w0->kp;
            w0->kp = kp_s;
            kp_s = t;
            c.k = k_s;
        }
        if (report) {
            memcpy(report->surrogate_scores, scores, 3 * sizeof(double));
            memcpy(report->surrogate_log_scores, scores + 3, 3 * sizeof(double));
        }
        if (!inner) {
            st = rfx__error(RFX_ENUMERIC, "projected: no surrogate (ridge, srfe, pce) could be "
                                          "fitted to the scores");
            goto done;
        }
        loss = own; /* the chosen surrogate's own estimate */
    } else if ((st = fit_surrogate(&c, &c.s, w0, rfx_kpca_embedding(w0->kp).data, c.v, m,
                                   params->n_threads, &inner, &own))) {
        goto done;
    }
    if (params->theta && params->surrogate != RFX_PROJECTED_AUTO &&
        (st = given_theta_loss(&c, w0, inner, own, &loss)))
        goto done;
    if (n_final > 0) { /* the surrogate's own estimate decided */
        if (!automatic && c.s.method == RFX_METHOD_SRFE &&
            (st = own_kfold(&c, &c.s, w0, w0->kp, inner, 1, &own)))
            goto done;
        loss = own;
    }
    if ((st = make_model(&c, w0->kp, inner, loss, out))) goto done;
    inner = NULL;
    if (report) {
        if (report->theta) memcpy(report->theta, theta, d * sizeof(double));
        if (report->history && !params->theta)
            memcpy(report->history, hist, (rep.iterations + 1) * sizeof(double));
        report->n_iterations = params->theta ? 0 : rep.iterations;
        report->evaluations = evals;
        report->loss = loss;
        report->search_loss = search_loss;
        report->finalists = n_final;
        report->theta0_loss = params->theta ? NAN : c.theta0_loss;
    }

done:
    rfx_model_free(inner);
    ctx_free(&c);
    free(y);
    free(v);
    free(theta);
    free(theta0);
    free(theta0x);
    free(theta_s);
    free(logy);
    rfx_kpca_free(kp_s);
    free(hist);
    return st;
}

rfx_status rfx_model_projected_info(const rfx_model *m, rfx_projected_info *info)
{
    rfx__kpca_arrays a;
    if (!m) return rfx__error(RFX_EINVAL, "projected info: model is NULL");
    if (!info) return rfx__error(RFX_EINVAL, "projected info: info is NULL");
    if (m->method != RFX_METHOD_PROJECTED || !m->kpca || !m->inner)
        return rfx__error(RFX_EINVAL, "projected info: the model is %s, not projected",
                          rfx_method_name(m->method));
    RFX__TRY(rfx__kpca_get_arrays(m->kpca, &a));
    info->n_components = a.k;
    info->n_inputs = a.d;
    info->n_train = a.m;
    info->gamma = a.gamma;
    info->standardized = a.x_mean != NULL;
    info->loss = m->proj_loss;
    info->theta = a.theta;
    info->surrogate = m->inner;
    return RFX_OK;
}
