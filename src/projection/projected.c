/* The self-supervised projection (include/rfx/projection.h has the
 * algorithm, its source and the loss): a particle swarm over the kernel
 * PCA weights theta, each evaluation one exact kernel PCA fit on the
 * reused object and one surrogate fit on the k scores; then the surrogate
 * on the scores of the best theta, wrapped in a model that projects raw
 * inputs.
 *
 * Thread-count independence: the swarm evaluates on the calling thread in
 * particle order; kernel PCA and every surrogate fit are bitwise
 * independent of their thread counts, so the whole fit is too. */
#include "internal.h"
#include "rfx/projection.h"

#include <math.h>
#include <string.h>

/* The key of theta_0's random stream (PSO's streams are keyed by particle
 * index, so a large constant keeps them apart). */
#define THETA0_STREAM 0x7468657461307830ull
/* Random features of the default surrogates: a few scores need far fewer
 * than the raw inputs, and every swarm evaluation refits them. */
#define DEFAULT_FEATURES 200
#define DEFAULT_SRFE_FEATURES 1000
/* Threads of the surrogates' fits: on a few scores their parallel regions
 * are too small to pay for a team (a 120 x 1 ridge fit took 0.41 s on two
 * threads, 0.045 s on one); the kernel PCA gets n_threads. */
#define SURROGATE_THREADS 1
/* Folds of the fallback cross-validation (a surrogate without a score). */
#define FALLBACK_FOLDS 5

rfx_projected_params rfx_projected_params_default(void)
{
    rfx_projected_params p;
    memset(&p, 0, sizeof p);
    p.n_components = 2;
    p.surrogate = RFX_METHOD_RIDGE;
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

static rfx_status check_params(const rfx_projected_params *p, size_t m, size_t d)
{
    if (p->n_components == 0 || p->n_components > m - 1)
        return rfx__error(RFX_EINVAL, "projected.n_components: must be in 1..%zu (training rows "
                                      "- 1), got %zu", m - 1, p->n_components);
    if (p->surrogate != RFX_METHOD_RIDGE && p->surrogate != RFX_METHOD_BAYES &&
        p->surrogate != RFX_METHOD_SRFE && p->surrogate != RFX_METHOD_PCE)
        return rfx__error(RFX_EINVAL, "projected.surrogate: %d is not one of RFX_METHOD_RIDGE, "
                                      "BAYES, SRFE, PCE", (int)p->surrogate);
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
    if (p->n_particles == 0)
        return rfx__error(RFX_EINVAL, "projected.n_particles: must be >= 1, got 0");
    if (p->iterations == 0)
        return rfx__error(RFX_EINVAL, "projected.iterations: must be >= 1, got 0");
    if (p->n_folds == 1 || p->n_folds > m)
        return rfx__error(RFX_EINVAL, "projected.n_folds: must be 0 or in 2..%zu (the rows), "
                                      "got %zu", m, p->n_folds);
    if (!(p->gamma >= 0 && isfinite(p->gamma)))
        return rfx__error(RFX_EINVAL, "projected.gamma: must be > 0 and finite (or 0 for 1 / d), "
                                      "got %g", p->gamma);
    if (p->standardize != 0 && p->standardize != 1)
        return rfx__error(RFX_EINVAL, "projected.standardize: must be 0 or 1, got %d",
                          p->standardize);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "projected.n_threads: must be >= 0, got %d", p->n_threads);
    return RFX_OK;
}

/* Everything an evaluation needs, allocated once. */
typedef struct ctx {
    const rfx_projected_params *p;
    rfx_kpca *kp;
    size_t m, d, k;
    const double *y;        /* m targets, contiguous                         */
    double yvar;            /* the variance of y (divisor m), or 1 if 0     */
    rfx_fit_params fit;     /* the surrogates' parameters, threads set       */
    rfx_srfe_params srfe;
    rfx_pce_params pce;
    rfx_marginal *marg;     /* k: PCE marginals of the current scores        */
    double *Ttr, *ytr, *Tva, *yva, *yhat; /* k-fold CV: m x k, m, m x k, m, m */
    const double *theta0;   /* particle 0's start                            */
    double theta0_loss;
    size_t evals;
} ctx;

static void ctx_free(ctx *c)
{
    rfx_kpca_free(c->kp);
    free(c->marg);
    free(c->Ttr);
    free(c->ytr);
    free(c->Tva);
    free(c->yva);
    free(c->yhat);
}

/* Fit the surrogate on T (rows x k) and y (rows); *score is its own
 * relative error estimate, or NaN when it has none. */
static rfx_status fit_surrogate(ctx *c, const double *T, const double *y, size_t rows,
                                rfx_model **out, double *score)
{
    const size_t k = c->k;
    rfx_cmat Tm = rfx_cmat_of(T, rows, k), Ym = rfx_cmat_of(y, rows, 1);
    rfx_status st;
    *score = NAN;
    switch (c->p->surrogate) {
    case RFX_METHOD_SRFE: {
        rfx_srfe_report rep;
        st = rfx_srfe_fit(&c->srfe, Tm, Ym, out, &rep);
        if (!st) *score = rep.cv_mse / c->yvar;
        break;
    }
    case RFX_METHOD_PCE: {
        /* normal marginals of the scores (a constant, null component gets
         * scale 1: every basis polynomial of it is then constant) */
        for (size_t j = 0; j < k; j++) {
            double mu = 0, v = 0;
            for (size_t i = 0; i < rows; i++) mu += T[i * k + j];
            mu /= (double)rows;
            for (size_t i = 0; i < rows; i++) v += (T[i * k + j] - mu) * (T[i * k + j] - mu);
            v = sqrt(v / (double)rows);
            c->marg[j].kind = RFX_MARGINAL_NORMAL;
            c->marg[j].a = mu;
            c->marg[j].b = v > 0 ? v : 1.0;
        }
        c->pce.marginals = c->marg;
        rfx_pce *pce = NULL;
        st = rfx_pce_fit(&c->pce, Tm, y, &pce);
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
        st = rfx_model_fit(&c->fit, Tm, Ym, out, &rep);
        if (!st && c->p->surrogate == RFX_METHOD_RIDGE) *score = rep.score / c->yvar;
        break;
    }
    }
    if (st) rfx__error_prefix("projected: %s surrogate", rfx_method_name(c->p->surrogate));
    return st;
}

/* k-fold CV of the surrogate on the scores E (m x k): row i in fold
 * i mod folds; the relative mean squared error of the held-out rows. */
static rfx_status kfold_loss(ctx *c, const double *E, size_t folds, double *loss)
{
    const size_t m = c->m, k = c->k;
    double sse = 0;
    for (size_t f = 0; f < folds; f++) {
        size_t ntr = 0, nva = 0;
        for (size_t i = 0; i < m; i++) {
            if (i % folds == f) {
                memcpy(c->Tva + nva * k, E + i * k, k * sizeof(double));
                c->yva[nva++] = c->y[i];
            } else {
                memcpy(c->Ttr + ntr * k, E + i * k, k * sizeof(double));
                c->ytr[ntr++] = c->y[i];
            }
        }
        rfx_model *mod = NULL;
        double own;
        RFX__TRY(fit_surrogate(c, c->Ttr, c->ytr, ntr, &mod, &own));
        rfx_status st = rfx_model_predict(mod, rfx_cmat_of(c->Tva, nva, k),
                                          rfx_mat_of(c->yhat, nva, 1), rfx_mat_none());
        rfx_model_free(mod);
        if (st) {
            rfx__error_prefix("projected: fold %zu", f);
            return st;
        }
        for (size_t i = 0; i < nva; i++) sse += (c->yhat[i] - c->yva[i]) * (c->yhat[i] - c->yva[i]);
    }
    *loss = sse / (double)m / c->yvar;
    return RFX_OK;
}

/* The loss of the current kernel PCA fit. */
static rfx_status loss_of_fit(ctx *c, double *loss)
{
    const double *E = rfx_kpca_embedding(c->kp).data;
    if (c->p->n_folds >= 2) return kfold_loss(c, E, c->p->n_folds, loss);
    rfx_model *mod = NULL;
    double score;
    RFX__TRY(fit_surrogate(c, E, c->y, c->m, &mod, &score));
    rfx_model_free(mod);
    if (isnan(score)) {
        size_t folds = c->m < FALLBACK_FOLDS ? c->m : FALLBACK_FOLDS;
        return kfold_loss(c, E, folds, loss);
    }
    *loss = score;
    return RFX_OK;
}

/* L(theta): +infinity where the projection or the surrogate is degenerate
 * (all weights zero, a zero centred kernel, a rank-deficient fit), so the
 * swarm moves on; other errors stop the search. */
static rfx_status objective(void *user, const double *theta, size_t d, double *value)
{
    ctx *c = user;
    int any = 0;
    c->evals++;
    for (size_t j = 0; j < d; j++) any |= theta[j] > 0;
    double v = INFINITY;
    if (any) {
        rfx_status st = rfx_kpca_fit(c->kp, theta);
        if (!st) st = loss_of_fit(c, &v);
        if (st == RFX_ENUMERIC) v = INFINITY;
        else if (st) return st;
    }
    if (c->theta0 && isnan(c->theta0_loss) && memcmp(theta, c->theta0, d * sizeof *theta) == 0)
        c->theta0_loss = v;
    *value = v;
    return RFX_OK;
}

/* The parameter sets of the surrogates: the caller's or the defaults, on
 * one thread; SRFE's sparsity at most k. */
static void setup_surrogate(ctx *c)
{
    const rfx_projected_params *p = c->p;
    if (p->fit) {
        c->fit = *p->fit;
    } else {
        c->fit = rfx_fit_params_default();
        c->fit.features.n_features = DEFAULT_FEATURES;
    }
    c->fit.method = p->surrogate == RFX_METHOD_BAYES ? RFX_METHOD_BAYES : RFX_METHOD_RIDGE;
    c->fit.features.n_threads = SURROGATE_THREADS;
    if (p->srfe) {
        c->srfe = *p->srfe;
    } else {
        c->srfe = rfx_srfe_params_default();
        c->srfe.features.n_features = DEFAULT_SRFE_FEATURES;
    }
    c->srfe.features.n_threads = SURROGATE_THREADS;
    if (c->srfe.features.sparsity > c->k) c->srfe.features.sparsity = c->k;
    if (p->pce) {
        c->pce = *p->pce;
    } else {
        c->pce = rfx_pce_params_default();
        c->pce.degree = 3;
        c->pce.method = RFX_PCE_METHOD_LARS;
    }
    c->pce.n_threads = SURROGATE_THREADS;
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

static rfx_status ctx_init(ctx *c, const rfx_projected_params *p, rfx_cmat X, rfx_cmat Y,
                           double *y)
{
    const size_t m = X.rows, d = X.cols, k = p->n_components;
    size_t mk;
    memset(c, 0, sizeof *c);
    c->p = p;
    c->m = m;
    c->d = d;
    c->k = k;
    c->theta0_loss = NAN;
    for (size_t i = 0; i < m; i++) y[i] = Y.data[i * Y.stride];
    c->y = y;
    double mu = 0, v = 0;
    for (size_t i = 0; i < m; i++) mu += y[i];
    mu /= (double)m;
    for (size_t i = 0; i < m; i++) v += (y[i] - mu) * (y[i] - mu);
    v /= (double)m;
    c->yvar = v > 0 ? v : 1.0;
    setup_surrogate(c);
    rfx_kpca_params kpp = rfx_kpca_params_default();
    kpp.n_components = k;
    kpp.method = RFX_KPCA_METHOD_EXACT;
    kpp.gamma = p->gamma > 0 ? p->gamma : 1.0 / (double)d;
    kpp.standardize = p->standardize;
    kpp.n_threads = p->n_threads;
    rfx_status st = rfx_kpca_create(&kpp, X, &c->kp);
    if (st) {
        rfx__error_prefix("projected");
        return st;
    }
    RFX__TRY(rfx__mul(m, k, &mk, "projected: scores m x k"));
    RFX__TRY(rfx__alloc(k, sizeof *c->marg, (void **)&c->marg, "projected: marginals"));
    RFX__TRY(rfx__alloc(mk, sizeof(double), (void **)&c->Ttr, "projected: folds"));
    RFX__TRY(rfx__alloc(mk, sizeof(double), (void **)&c->Tva, "projected: folds"));
    RFX__TRY(rfx__alloc(m, sizeof(double), (void **)&c->ytr, "projected: folds"));
    RFX__TRY(rfx__alloc(m, sizeof(double), (void **)&c->yva, "projected: folds"));
    RFX__TRY(rfx__alloc(m, sizeof(double), (void **)&c->yhat, "projected: folds"));
    return RFX_OK;
}

/* The swarm over [0, 1]^d from theta_0 ~ U[0, 1]^d. */
static rfx_status search(ctx *c, double *theta, double *theta0, double *history,
                         rfx_pso_report *rep)
{
    const rfx_projected_params *p = c->p;
    const size_t d = c->d;
    double *lo = NULL, *hi = NULL;
    rfx__rng r;
    rfx__rng_init(&r, p->seed, THETA0_STREAM, 0);
    for (size_t j = 0; j < d; j++) theta0[j] = rfx__rng_uniform(&r);
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
        pp.thread_safe = 0;
        pp.progress = p->progress;
        pp.progress_user = p->progress_user;
        st = rfx_pso_minimize(&pp, d, objective, c, theta, history, rep);
        if (st) rfx__error_prefix("projected");
    }
    free(lo);
    free(hi);
    return st;
}

/* The model around the fitted projection (copied into a transform-only
 * kernel PCA) and the surrogate (owned on success). */
static rfx_status make_model(ctx *c, rfx_model *inner, double loss, rfx_model **out)
{
    rfx__kpca_arrays a;
    rfx_kpca *kp = NULL;
    RFX__TRY(rfx__kpca_get_arrays(c->kp, &a));
    RFX__TRY(rfx__kpca_from_arrays(&a, c->p->n_threads, &kp));
    rfx_model *m = calloc(1, sizeof *m);
    if (!m) {
        rfx_kpca_free(kp);
        return rfx__error(RFX_ENOMEM, "projected: cannot allocate the model");
    }
    m->method = RFX_METHOD_PROJECTED;
    m->d = c->d;
    m->D = 0;
    m->ny = 1;
    m->n_train = c->m;
    m->fit_intercept = 0;
    m->kpca = kp;
    m->inner = inner;
    m->proj_loss = loss;
    *out = m;
    return RFX_OK;
}

rfx_status rfx_projected_fit(const rfx_projected_params *params, rfx_cmat X, rfx_cmat Y,
                             rfx_model **out, rfx_projected_report *report)
{
    if (!params) return rfx__error(RFX_EINVAL, "projected: params is NULL");
    if (!out) return rfx__error(RFX_EINVAL, "projected: out is NULL");
    RFX__TRY(check_data(X, Y));
    RFX__TRY(check_params(params, X.rows, X.cols));
    const size_t m = X.rows, d = X.cols;
    ctx c;
    double *y = NULL, *theta = NULL, *theta0 = NULL, *hist = NULL;
    rfx_model *inner = NULL;
    rfx_pso_report rep;
    memset(&rep, 0, sizeof rep);
    memset(&c, 0, sizeof c);
    rfx_status st = rfx__alloc(m, sizeof(double), (void **)&y, "projected: targets");
    if (!st) st = rfx__alloc(d, sizeof(double), (void **)&theta, "projected: theta");
    if (!st) st = rfx__alloc(d, sizeof(double), (void **)&theta0, "projected: theta");
    if (!st) st = rfx__alloc(params->iterations + 1, sizeof(double), (void **)&hist,
                             "projected: history");
    if (!st) st = ctx_init(&c, params, X, Y, y);
    if (st) goto done;

    double loss;
    if (params->theta) {
        memcpy(theta, params->theta, d * sizeof(double));
        if ((st = objective(&c, theta, d, &loss))) goto done;
        if (!isfinite(loss)) {
            st = rfx__error(RFX_ENUMERIC, "projected: the given theta gives no finite loss: the "
                                          "centred kernel is zero or the surrogate's fit is "
                                          "degenerate");
            goto done;
        }
    } else {
        if ((st = search(&c, theta, theta0, hist, &rep))) goto done;
        loss = rep.value;
    }
    /* the surrogate on the scores of all rows for the chosen theta */
    double own;
    if ((st = rfx_kpca_fit(c.kp, theta))) goto done;
    if ((st = fit_surrogate(&c, rfx_kpca_embedding(c.kp).data, c.y, m, &inner, &own))) goto done;
    if ((st = make_model(&c, inner, loss, out))) goto done;
    inner = NULL;
    if (report) {
        if (report->theta) memcpy(report->theta, theta, d * sizeof(double));
        if (report->history && !params->theta)
            memcpy(report->history, hist, (rep.iterations + 1) * sizeof(double));
        report->n_iterations = params->theta ? 0 : rep.iterations;
        report->evaluations = c.evals;
        report->loss = loss;
        report->theta0_loss = params->theta ? NAN : c.theta0_loss;
    }

done:
    rfx_model_free(inner);
    ctx_free(&c);
    free(y);
    free(theta);
    free(theta0);
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
