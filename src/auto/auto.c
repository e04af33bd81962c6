/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The automatic surrogate (rfx/auto.h): every (method, target transform)
 * candidate by k-fold cross-validation with racing, then the best refitted
 * on all rows.
 */
#include "internal.h"

#include "rfx/auto.h"
#include "rfx/pce.h"
#include "rfx/projection.h"
#include "rfx/srfe.h"

#include <math.h>
#include <string.h>
#include <time.h>

#define DEFAULT_FOLDS 5
#define DEFAULT_RACE 1.5
/* Box-Cox is a default candidate only this far from the log and from none */
#define BOXCOX_APART 0.25
/* With the default methods, projected is a candidate (on the target as it
 * is: it is the costliest, a swarm of kernel PCA fits) when the inputs
 * outnumber the projection's largest default dimension, 8: only then can
 * it reduce them */
#define PROJECTED_MIN_D 9
/* ... and is tried (its first fold fitted after the others') only when
 * the best of the others leaves a first-fold relative error above this:
 * a projection costs tens of fits, and where the plain methods already
 * fit within 10 % it has not been the better choice on the benchmark
 * functions (G-function, wing weight), whereas on Friedman #1 in d = 100,
 * where it wins, they leave 0.28 */
#define PROJECTED_WORTH 0.1
/* the final fit on all rows takes about this multiple of a fold's fit */
#define FINAL_COST 1.3

/* the methods in the order each round fits them: the cheap ones first */
static const rfx_method ORDER[] = {RFX_METHOD_HARFE, RFX_METHOD_RIDGE, RFX_METHOD_BAYES,
                                   RFX_METHOD_PCE,   RFX_METHOD_SRFE,  RFX_METHOD_PROJECTED};
#define N_ORDER (sizeof ORDER / sizeof *ORDER)
#define ALL_METHODS                                                                          \
    (RFX_AUTO_METHOD(RFX_METHOD_RIDGE) | RFX_AUTO_METHOD(RFX_METHOD_BAYES) |                  \
     RFX_AUTO_METHOD(RFX_METHOD_SRFE) | RFX_AUTO_METHOD(RFX_METHOD_HARFE) |                   \
     RFX_AUTO_METHOD(RFX_METHOD_PCE) | RFX_AUTO_METHOD(RFX_METHOD_PROJECTED))
#define ALL_TRANSFORMS                                                                       \
    (RFX_AUTO_TRANSFORM(RFX_TARGET_NONE) | RFX_AUTO_TRANSFORM(RFX_TARGET_LOG) |               \
     RFX_AUTO_TRANSFORM(RFX_TARGET_BOXCOX))

rfx_auto_params rfx_auto_params_default(void)
{
    rfx_auto_params p;
    memset(&p, 0, sizeof p);
    p.n_folds = DEFAULT_FOLDS;
    p.race_factor = DEFAULT_RACE;
    return p;
}

rfx_status rfx_auto_params_check(const rfx_auto_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "auto: params is NULL");
    if (p->methods & ~(unsigned)ALL_METHODS)
        return rfx__error(RFX_EINVAL, "auto.methods: 0x%x holds a method that is not a "
                                      "regression surrogate (ridge, bayes, srfe, harfe, pce, "
                                      "projected)",
                          p->methods);
    if (p->transforms & ~(unsigned)ALL_TRANSFORMS)
        return rfx__error(RFX_EINVAL, "auto.transforms: 0x%x holds an unknown transform",
                          p->transforms);
    if (p->n_folds < 2)
        return rfx__error(RFX_EINVAL, "auto.n_folds: %zu, at least 2 are needed", p->n_folds);
    if (!(p->race_factor > 1))
        return rfx__error(RFX_EINVAL, "auto.race_factor: %g, must be > 1 (INFINITY: no racing)",
                          p->race_factor);
    if (!(p->budget >= 0) || isinf(p->budget))
        return rfx__error(RFX_EINVAL, "auto.budget: %g seconds, must be finite and >= 0 (0: no "
                                      "budget)",
                          p->budget);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "auto.n_threads: %d is negative", p->n_threads);
    return RFX_OK;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- one candidate's fit ------------------------------------------------- */

typedef struct fit_ctx {
    const rfx_auto_params *p;
    const rfx_marginal *marginals; /* d: uniform on the range of all rows */
} fit_ctx;

/* The PCE of the candidates, as rfx fit --method pce: LARS, the automatic
 * basis, degrees from 1 (the marginals are the caller's). */
static rfx_pce_params pce_params(const rfx_auto_params *p, const double *w)
{
    rfx_pce_params pp = rfx_pce_params_default();
    pp.method = RFX_PCE_METHOD_LARS;
    pp.auto_basis = 1;
    pp.degree_min = 1;
    pp.n_threads = p->n_threads;
    pp.sample_weight = w;
    return pp;
}

/* Where srfe and harfe start on all rows: the weight scale and q their fit
 * on the first fold chose. */
typedef struct srfe_start {
    double scale;
    size_t q;
} srfe_start;

/* srfe or harfe (sp: the defaults) from a fold's choice: at the start's q,
 * with the full map at its scale s and at RFX__SRFE_SCALE_UP s, the latter
 * kept unless it scores worse - the last stage of rfx_srfe_fit's search,
 * without the screens that led the fold's fit to s. The two fits run side
 * by side on two threads (each gives the same bits on any thread count). */
static rfx_status srfe_from_start(const rfx_srfe_params *sp, const srfe_start *start, rfx_cmat X,
                                  rfx_cmat Z, rfx_model **out)
{
    rfx_model *m[2] = {NULL, NULL};
    rfx_srfe_report r[2];
    const int nt = rfx__threads(sp->features.n_threads), tn = nt > 1 ? 2 : 1;
    rfx__failure fail;
    rfx__failure_init(&fail);
#pragma omp parallel for num_threads(tn) schedule(static, 1) if (tn > 1)
    for (int k = 0; k < 2; k++) {
        RFX__SERIAL_BLAS();
        rfx_srfe_params q = *sp;
        q.features.sparsity = start->q;
        q.features.weight_scale = start->scale * (k ? RFX__SRFE_SCALE_UP : 1.0);
        q.features.n_threads = tn > 1 ? 1 : nt;
        rfx__failure_note(&fail, (size_t)k, rfx_srfe_fit(&q, X, Z, &m[k], &r[k]));
    }
    rfx_status st = rfx__failure_raise(&fail);
    if (st) {
        rfx_model_free(m[0]);
        rfx_model_free(m[1]);
        return st;
    }
    const int k = r[1].cv_mse > r[0].cv_mse ? 0 : 1;
    rfx_model_free(m[1 - k]);
    *out = m[k];
    return RFX_OK;
}

/* Fit method to X (m x d) and z (m), with the rows' weights w (m values, or
 * NULL): each method with its own defaults; srfe and harfe from start when
 * it is not NULL, and their choice in *chose when that is not NULL. */
static rfx_status fit_method(const fit_ctx *c, rfx_method method, rfx_cmat X, const double *z,
                             const double *w, const srfe_start *start, srfe_start *chose,
                             rfx_model **out)
{
    const rfx_auto_params *p = c->p;
    rfx_cmat Z = rfx_cmat_of(z, X.rows, 1);
    switch (method) {
    case RFX_METHOD_RIDGE:
    case RFX_METHOD_BAYES: {
        rfx_fit_params fp = rfx_fit_params_default();
        fp.method = method;
        fp.features.seed = p->seed;
        fp.features.n_threads = p->n_threads;
        fp.sample_weight = w;
        return rfx_model_fit(&fp, X, Z, out, NULL);
    }
    case RFX_METHOD_SRFE:
    case RFX_METHOD_HARFE: {
        rfx_srfe_params sp = rfx_srfe_params_default();
        sp.features.seed = p->seed;
        sp.features.n_threads = p->n_threads;
        if (method == RFX_METHOD_HARFE) sp.method = RFX_L1_METHOD_HTP;
        sp.sample_weight = w;
        if (start) return srfe_from_start(&sp, start, X, Z, out);
        rfx_srfe_report rep;
        RFX__TRY(rfx_srfe_fit(&sp, X, Z, out, &rep));
        if (chose) *chose = (srfe_start){rep.weight_scale, rep.sparsity};
        return RFX_OK;
    }
    case RFX_METHOD_PCE: {
        rfx_pce_params pp = pce_params(p, w);
        pp.marginals = c->marginals;
        rfx_pce *pce = NULL;
        RFX__TRY(rfx_pce_fit(&pp, X, z, &pce));
        /* marginals fitted to the data: continued beyond the rows' range,
         * as rfx_pce_fit's marginals_from_data fit continues them */
        int other = 0;
        for (size_t j = 0; j < X.cols; j++) other |= c->marginals[j].kind != RFX_MARGINAL_UNIFORM;
        rfx_status st = other ? rfx__pce_set_span_rows(pce, X) : RFX_OK;
        if (!st) st = rfx_model_from_pce(pce, out);
        rfx_pce_free(pce);
        return st;
    }
    case RFX_METHOD_PROJECTED: {
        rfx_projected_params pp = rfx_projected_params_default();
        pp.seed = p->seed;
        pp.n_threads = p->n_threads;
        pp.sample_weight = w;
        return rfx_projected_fit(&pp, X, Z, out, NULL);
    }
    default:
        return rfx__error(RFX_EINTERNAL, "auto: method %d is not a candidate", (int)method);
    }
}

/* Fit (method, transform) to rows X, y with weights w (or NULL); the model
 * predicts y. start, chose: fit_method's. */
static rfx_status fit_candidate(const fit_ctx *c, rfx_method method, rfx_target_transform t,
                                rfx_cmat X, const double *y, const double *w, double *z,
                                const srfe_start *start, srfe_start *chose, rfx_model **out)
{
    double lambda = 0;
    if (t == RFX_TARGET_BOXCOX)
        RFX__TRY(rfx_target_boxcox_lambda_weighted(y, w, X.rows, &lambda));
    RFX__TRY(rfx_target_forward(t, lambda, y, X.rows, z));
    rfx_model *m = NULL;
    RFX__TRY(fit_method(c, method, X, z, w, start, chose, &m));
    rfx_status st = rfx_model_set_target_transform(m, t, lambda);
    if (st) {
        rfx_model_free(m);
        return st;
    }
    *out = m;
    return RFX_OK;
}

/* ---- the cross-validation ------------------------------------------------ */

typedef struct cand {
    rfx_auto_candidate pub;
    double *sse;        /* per fold: sum of squared held-out errors        */
    double last_seconds;
    srfe_start start;   /* srfe, harfe: the choice of the first fold's fit */
    int active;
    int deferred;       /* the default projected candidate: fold 0 waits   */
    /* concurrent_round's outcome for this round */
    rfx_status round_status;
    double round_seconds;
    char round_message[512];
} cand;

/* A rough order of the methods' costs, for the first round's schedule. */
static double cost_rank(rfx_method m)
{
    switch (m) {
    case RFX_METHOD_PROJECTED: return 5;
    case RFX_METHOD_SRFE: return 4;
    case RFX_METHOD_BAYES: return 3;
    case RFX_METHOD_PCE: return 2;
    case RFX_METHOD_RIDGE: return 1;
    default: return 0;
    }
}

/* The active candidates of a round fitted side by side on conc threads,
 * one thread each (OpenMP dynamic schedule, the costliest first: their
 * last round's time, or the method's rank in the first): candidate j's
 * targets in zc + j n, its held-out predictions in pc + j n, its status,
 * message and time in round_*. Each fit gives the same bits on one thread
 * as on many, so the results are those of the fits one after another. */
static rfx_status concurrent_round(const fit_ctx *ctx, cand *cs, size_t nc, int conc, rfx_cmat Xtr,
                                   const double *ytr, const double *wtr, rfx_cmat Xte, double *zc,
                                   double *pc, size_t n)
{
    size_t list[RFX_AUTO_MAX_CANDIDATES], nl = 0;
    double key[RFX_AUTO_MAX_CANDIDATES];
    for (size_t j = 0; j < nc; j++) {
        if (!cs[j].active) continue;
        key[j] = cs[j].pub.folds > 0 ? cs[j].last_seconds : cost_rank(cs[j].pub.method);
        size_t at = nl++;
        while (at > 0 && key[list[at - 1]] < key[j]) { /* descending, stable */
            list[at] = list[at - 1];
            at--;
        }
        list[at] = j;
    }
    rfx_auto_params one = *ctx->p;
    one.n_threads = 1;
    const fit_ctx c1 = {&one, ctx->marginals};
#pragma omp parallel for num_threads(conc) schedule(dynamic, 1) if (nl > 1)
    for (size_t q = 0; q < nl; q++) {
        cand *c = &cs[list[q]];
        const size_t j = list[q];
        const double t1 = now_seconds();
        rfx_model *m = NULL;
        rfx_status fs = fit_candidate(&c1, c->pub.method, c->pub.transform, Xtr, ytr, wtr,
                                      zc + j * n, NULL, c->pub.folds == 0 ? &c->start : NULL,
                                      &m);
        if (!fs)
            fs = rfx_model_predict(m, Xte, rfx_mat_of(pc + j * n, Xte.rows, 1), rfx_mat_none());
        rfx_model_free(m);
        c->round_status = fs;
        c->round_message[0] = '\0';
        if (fs) {
            snprintf(c->round_message, sizeof c->round_message, "%s", rfx_last_error());
            rfx_clear_error();
        }
        c->round_seconds = now_seconds() - t1;
    }
    return RFX_OK;
}

/* The score of a candidate over folds 0..nf-1: sqrt(sse / sst) */
static double score_of(const cand *c, const double *sst, size_t nf)
{
    double a = 0, b = 0;
    for (size_t f = 0; f < nf; f++) {
        a += c->sse[f];
        b += sst[f];
    }
    return b > 0 ? sqrt(a / b) : (a > 0 ? INFINITY : 0.0);
}

static rfx_status check_data(rfx_cmat X, const double *y, size_t k)
{
    RFX__TRY(rfx__check_cmat(X, "auto: X"));
    if (!y) return rfx__error(RFX_EINVAL, "auto: y is NULL");
    if (X.cols == 0) return rfx__error(RFX_EINVAL, "auto: X has no columns");
    size_t need;
    RFX__TRY(rfx__mul(2, k, &need, "auto: rows"));
    if (X.rows < need)
        return rfx__error(RFX_EDIM, "auto: %zu rows for %zu folds; at least %zu are needed",
                          X.rows, k, need);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "auto: X row %zu, column %zu is not finite", r, c);
    for (size_t i = 0; i < X.rows; i++)
        if (!isfinite(y[i])) return rfx__error(RFX_EPARSE, "auto: y row %zu is not finite", i);
    return RFX_OK;
}

/* Given folds: each in 0..k-1, every fold with rows held out and rows to
 * fit (count: k scratch values). */
static rfx_status check_folds(const size_t *folds, size_t n, size_t k, size_t *count)
{
    memset(count, 0, k * sizeof *count);
    for (size_t i = 0; i < n; i++) {
        if (folds[i] >= k)
            return rfx__error(RFX_EINVAL, "auto.folds: row %zu is in fold %zu, expected 0 .. %zu",
                              i, folds[i], k - 1);
        count[folds[i]]++;
    }
    for (size_t f = 0; f < k; f++)
        if (count[f] == 0 || count[f] == n)
            return rfx__error(RFX_EINVAL, "auto.folds: fold %zu holds %zu of the %zu rows", f,
                              count[f], n);
    return RFX_OK;
}

/* The candidates the parameters and the data allow, in fitting order. */
static rfx_status make_candidates(const rfx_auto_params *p, const double *y, const double *w,
                                  size_t n, size_t d, cand *cs, size_t *nc)
{
    const unsigned methods = p->methods ? p->methods : RFX_AUTO_DEFAULT_METHODS;
    unsigned transforms = p->transforms ? p->transforms : ALL_TRANSFORMS;
    int positive = 1;
    for (size_t i = 0; i < n; i++) positive &= y[i] > 0;
    double lambda = 0;
    if (!positive) {
        transforms &= RFX_AUTO_TRANSFORM(RFX_TARGET_NONE);
        if (!transforms)
            return rfx__error(RFX_EINVAL, "auto.transforms: the log and Box-Cox take y > 0, and "
                                          "the targets hold values <= 0");
    } else if (transforms & RFX_AUTO_TRANSFORM(RFX_TARGET_BOXCOX)) {
        rfx_status st = rfx_target_boxcox_lambda_weighted(y, w, n, &lambda);
        if (st == RFX_OK && !p->transforms &&
            (fabs(lambda) < BOXCOX_APART || fabs(lambda - 1) < BOXCOX_APART))
            transforms &= ~RFX_AUTO_TRANSFORM(RFX_TARGET_BOXCOX);
        if (st) { /* all y equal */
            rfx_clear_error();
            transforms &= ~RFX_AUTO_TRANSFORM(RFX_TARGET_BOXCOX);
            if (!transforms) transforms = RFX_AUTO_TRANSFORM(RFX_TARGET_NONE);
        }
    }
    *nc = 0;
    for (int t = RFX_TARGET_NONE; t <= RFX_TARGET_BOXCOX; t++) {
        if (!(transforms & RFX_AUTO_TRANSFORM(t))) continue;
        for (size_t i = 0; i < N_ORDER; i++) {
            if (!(methods & RFX_AUTO_METHOD(ORDER[i]))) continue;
            cand *c = &cs[(*nc)++];
            memset(c, 0, sizeof *c);
            c->pub.method = ORDER[i];
            c->pub.transform = (rfx_target_transform)t;
            c->pub.lambda = t == RFX_TARGET_BOXCOX ? lambda : 0.0;
            c->pub.cv_error = NAN;
            c->active = 1;
        }
    }
    if (!p->methods && d >= PROJECTED_MIN_D) {
        cand *c = &cs[(*nc)++];
        memset(c, 0, sizeof *c);
        c->pub.method = RFX_METHOD_PROJECTED;
        c->pub.transform = RFX_TARGET_NONE;
        c->pub.cv_error = NAN;
        c->deferred = 1; /* active once the others' first fold says so */
    }
    return RFX_OK;
}

/* Rows of fold f (held == 1) or the other folds (held == 0) into X_out,
 * y_out, and their weights into w_out when w is not NULL. */
static size_t take_rows(rfx_cmat X, const double *y, const double *w, const size_t *fold,
                        size_t f, int held, double *Xo, double *yo, double *wo)
{
    size_t k = 0;
    for (size_t i = 0; i < X.rows; i++) {
        if ((fold[i] == f) != held) continue;
        memcpy(Xo + k * X.cols, X.data + i * X.stride, X.cols * sizeof *Xo);
        if (w) wo[k] = w[i];
        yo[k++] = y[i];
    }
    return k;
}

/* With sample weights: check them; when some are 0, or all are equal, fit
 * the rows of positive weight alone (copies of their X, y, weights and
 * given folds) without weights when they are equal, and set *done. */
static rfx_status fit_positive_rows(const rfx_auto_params *params, rfx_cmat X, const double *y,
                                    rfx_model **out, rfx_auto_report *report, int *done)
{
    const double *w = params->sample_weight;
    const size_t n = X.rows, d = X.cols;
    *done = 0;
    RFX__TRY(rfx__check_cmat(X, "auto: X"));
    if (!y) return rfx__error(RFX_EINVAL, "auto: y is NULL");
    RFX__TRY(rfx__check_weights(w, n, "auto.sample_weight"));
    size_t m = 0;
    int equal = 1;
    double first = -1;
    for (size_t i = 0; i < n; i++)
        if (w[i] > 0) {
            if (first < 0) first = w[i];
            equal &= w[i] == first;
            m++;
        }
    if (m == n && !equal) return RFX_OK;
    double *Xp = NULL, *yp = NULL, *wp = NULL;
    size_t *fp = NULL;
    rfx_status st = rfx__alloc(m * (d ? d : 1), sizeof *Xp, (void **)&Xp, "auto: weighted rows");
    if (!st) st = rfx__alloc(m, sizeof *yp, (void **)&yp, "auto: weighted rows");
    if (!st) st = rfx__alloc(m, sizeof *wp, (void **)&wp, "auto: weighted rows");
    if (!st && params->folds) st = rfx__alloc(m, sizeof *fp, (void **)&fp, "auto: weighted rows");
    if (!st) {
        for (size_t i = 0, k = 0; i < n; i++) {
            if (!(w[i] > 0)) continue;
            memcpy(Xp + k * d, X.data + i * X.stride, d * sizeof *Xp);
            if (fp) fp[k] = params->folds[i];
            yp[k] = y[i];
            wp[k++] = w[i];
        }
        rfx_auto_params p = *params;
        p.sample_weight = equal ? NULL : wp;
        p.folds = fp;
        st = rfx_auto_fit(&p, rfx_cmat_of(Xp, m, d), yp, out, report);
        *done = 1;
    }
    free(Xp);
    free(yp);
    free(wp);
    free(fp);
    return st;
}

rfx_status rfx_auto_fit(const rfx_auto_params *params, rfx_cmat X, const double *y,
                        rfx_model **out, rfx_auto_report *report)
{
    if (!out && !report)
        return rfx__error(RFX_EINVAL, "auto: out and report are both NULL (nothing to give)");
    RFX__TRY(rfx_auto_params_check(params));
    if (params->sample_weight) {
        int done = 0;
        rfx_status st = fit_positive_rows(params, X, y, out, report, &done);
        if (st || done) return st;
    }
    const rfx_auto_params *p = params;
    const double *w = p->sample_weight; /* positive and not all equal here */
    const size_t k = p->n_folds;
    RFX__TRY(check_data(X, y, k));
    const size_t n = X.rows, d = X.cols;
    const double t0 = now_seconds();

    cand cs[RFX_AUTO_MAX_CANDIDATES];
    size_t nc = 0;
    RFX__TRY(make_candidates(p, y, w, n, d, cs, &nc));

    size_t *perm = NULL, *fold = NULL;
    double *Xtr = NULL, *ytr = NULL, *ztr = NULL, *Xte = NULL, *yte = NULL, *pred = NULL;
    double *sst = NULL, *sse = NULL, *wtr = NULL, *wte = NULL, *zc = NULL;
    rfx_marginal *marg = NULL;
    rfx_model *model = NULL;
    rfx_status st = rfx__alloc(n, sizeof *perm, (void **)&perm, "auto: folds");
    if (!st) st = rfx__alloc(n, sizeof *fold, (void **)&fold, "auto: folds");
    if (!st) st = rfx__alloc(n * d, sizeof *Xtr, (void **)&Xtr, "auto: training rows");
    if (!st) st = rfx__alloc(n, sizeof *ytr, (void **)&ytr, "auto: training targets");
    if (!st) st = rfx__alloc(n, sizeof *ztr, (void **)&ztr, "auto: transformed targets");
    if (!st) st = rfx__alloc(n * d, sizeof *Xte, (void **)&Xte, "auto: held-out rows");
    if (!st) st = rfx__alloc(n, sizeof *yte, (void **)&yte, "auto: held-out targets");
    if (!st) st = rfx__alloc(n, sizeof *pred, (void **)&pred, "auto: predictions");
    if (!st) st = rfx__calloc(k, sizeof *sst, (void **)&sst, "auto: fold variances");
    if (!st) st = rfx__calloc(nc * k, sizeof *sse, (void **)&sse, "auto: fold errors");
    if (!st) st = rfx__alloc(d, sizeof *marg, (void **)&marg, "auto: marginals");
    if (!st && w) st = rfx__alloc(n, sizeof *wtr, (void **)&wtr, "auto: training weights");
    if (!st && w) st = rfx__alloc(n, sizeof *wte, (void **)&wte, "auto: held-out weights");
    /* concurrent candidates: without a budget (whose choices depend on the
     * order of the fits), the candidates of a round run side by side, one
     * thread each, each with its own targets and predictions */
    const int conc = p->budget > 0 ? 1 : rfx__threads(p->n_threads);
    if (!st && conc > 1) st = rfx__alloc(2 * nc * n, sizeof *zc, (void **)&zc, "auto: candidates");
    if (st) goto done;
    for (size_t j = 0; j < nc; j++) cs[j].sse = sse + j * k;

    /* the folds: rows in a seeded random order of their contents (a hash
     * of each row's values and target: rfx__rows_order), row
     * perm[i] in fold i mod k; the same rows in another order make the
     * same folds */
    if (p->folds) {
        st = check_folds(p->folds, n, k, perm);
        if (st) goto done;
        memcpy(fold, p->folds, n * sizeof *fold);
    } else {
        st = rfx__rows_order(X, rfx_cmat_of(y, n, 1), w, p->seed, 0x6175746fULL /* "auto" */,
                             perm);
        if (st) goto done;
        for (size_t i = 0; i < n; i++) fold[perm[i]] = i % k;
    }
    /* the held-out rows' spread about the mean of all targets (weighted) */
    double ybar = 0, wsum = 0;
    for (size_t i = 0; i < n; i++) {
        ybar += (w ? w[i] : 1.0) * y[i];
        wsum += w ? w[i] : 1.0;
    }
    ybar /= wsum;
    for (size_t i = 0; i < n; i++)
        sst[fold[i]] += (w ? w[i] : 1.0) * (y[i] - ybar) * (y[i] - ybar);
    /* PCE's marginals, from all rows (the inputs' distribution, which the
     * held-out rows belong to): those rfx_pce_fit keeps from the data on
     * the untransformed target (uniform on each input's range unless a
     * normal or lognormal family fits an input better and the fit with
     * the families has the lower corrected LOO error) */
    rfx__data_marginals(X, marg);
    {
        int other = 0, pce = 0;
        for (size_t j = 0; j < d; j++) other |= marg[j].kind != RFX_MARGINAL_UNIFORM;
        for (size_t j = 0; j < nc; j++) pce |= cs[j].pub.method == RFX_METHOD_PCE;
        rfx__range_marginals(X, marg);
        if (other && pce) {
            rfx_pce_params pp = pce_params(p, w);
            pp.marginals_from_data = 1;
            rfx_pce *pc = NULL;
            st = rfx_pce_fit(&pp, X, y, &pc);
            if (st) goto done;
            memcpy(marg, rfx_pce_marginals(pc), d * sizeof *marg);
            rfx_pce_free(pc);
        }
    }
    const fit_ctx ctx = {p, marg};

    rfx_status first_failure = RFX_OK;
    char first_message[512] = "";
    size_t rounds = 0, planned = nc * k, done_fits = 0;
    for (size_t f = 0; f < k; f++) {
        const size_t mtr = take_rows(X, y, w, fold, f, 0, Xtr, ytr, wtr);
        const size_t mte = take_rows(X, y, w, fold, f, 1, Xte, yte, wte);
        size_t ran = 0;
        if (conc > 1) {
            st = concurrent_round(&ctx, cs, nc, conc, rfx_cmat_of(Xtr, mtr, d), ytr, wtr,
                                  rfx_cmat_of(Xte, mte, d), zc, zc + nc * n, n);
            if (st) goto done;
        }
        for (size_t j = 0; j < nc; j++) {
            cand *c = &cs[j];
            if (!c->active) continue;
            if (p->budget > 0) {
                /* the best so far must still be refitted on all rows; a
                 * candidate not yet run is expected to take the mean time
                 * of those that ran (and one always runs) */
                double best_t = 0, best_s = INFINITY, sum_t = 0;
                size_t n_run = 0;
                for (size_t i = 0; i < nc; i++)
                    if (cs[i].pub.folds > 0 && cs[i].pub.outcome != RFX_AUTO_FAILED) {
                        const double s = score_of(&cs[i], sst, cs[i].pub.folds);
                        sum_t += cs[i].last_seconds;
                        n_run++;
                        if (s < best_s) {
                            best_s = s;
                            best_t = cs[i].last_seconds;
                        }
                    }
                const double est = c->pub.folds > 0 ? c->last_seconds
                                 : n_run > 0        ? sum_t / (double)n_run
                                                    : 0.0;
                if (n_run > 0 && now_seconds() - t0 + est + FINAL_COST * best_t > p->budget) {
                    c->active = 0;
                    c->pub.outcome = RFX_AUTO_BUDGET;
                    continue;
                }
            }
            const double t1 = now_seconds();
            rfx_status fs;
            const double *pj = pred;
            if (conc > 1) { /* run by concurrent_round: its outcome */
                fs = c->round_status;
                pj = zc + nc * n + (size_t)(c - cs) * n;
                if (fs) rfx__error(fs, "%s", c->round_message);
            } else {
                fs = fit_candidate(&ctx, c->pub.method, c->pub.transform,
                                   rfx_cmat_of(Xtr, mtr, d), ytr, wtr, ztr, NULL,
                                   c->pub.folds == 0 ? &c->start : NULL, &model);
                if (!fs)
                    fs = rfx_model_predict(model, rfx_cmat_of(Xte, mte, d),
                                           rfx_mat_of(pred, mte, 1), rfx_mat_none());
                rfx_model_free(model);
                model = NULL;
            }
            if (fs == RFX_ENOMEM || fs == RFX_ECANCELLED) {
                st = fs;
                goto done;
            }
            c->last_seconds = conc > 1 ? c->round_seconds : now_seconds() - t1;
            c->pub.seconds += c->last_seconds;
            if (fs) {
                if (!first_failure) {
                    first_failure = fs;
                    snprintf(first_message, sizeof first_message, "%s", rfx_last_error());
                }
                rfx_clear_error();
                c->active = 0;
                c->pub.outcome = RFX_AUTO_FAILED;
                c->pub.status = fs;
                continue;
            }
            double e = 0;
            for (size_t i = 0; i < mte; i++)
                e += (w ? wte[i] : 1.0) * (pj[i] - yte[i]) * (pj[i] - yte[i]);
            c->sse[f] = e;
            c->pub.folds = f + 1;
            ran++;
            done_fits++;
            if (p->progress && p->progress(p->progress_user, "auto",
                                           (double)done_fits / (double)planned)) {
                st = rfx__error(RFX_ECANCELLED, "auto: cancelled by the progress callback");
                goto done;
            }
        }
        /* the deferred candidate: its first fold when the others' best
         * leaves more than PROJECTED_WORTH, fitted with every thread */
        for (size_t j = 0; f == 0 && j < nc; j++) {
            cand *c = &cs[j];
            if (!c->deferred) continue;
            c->deferred = 0;
            double best0 = INFINITY;
            for (size_t i = 0; i < nc; i++)
                if (cs[i].active && cs[i].pub.folds == 1)
                    best0 = fmin(best0, score_of(&cs[i], sst, 1));
            if (ran > 0 && !(best0 > PROJECTED_WORTH)) {
                c->pub.outcome = RFX_AUTO_NOT_NEEDED;
                continue;
            }
            const double t1 = now_seconds();
            rfx_status fs = fit_candidate(&ctx, c->pub.method, c->pub.transform,
                                          rfx_cmat_of(Xtr, mtr, d), ytr, wtr, ztr, NULL, NULL,
                                          &model);
            if (!fs)
                fs = rfx_model_predict(model, rfx_cmat_of(Xte, mte, d), rfx_mat_of(pred, mte, 1),
                                       rfx_mat_none());
            rfx_model_free(model);
            model = NULL;
            if (fs == RFX_ENOMEM || fs == RFX_ECANCELLED) {
                st = fs;
                goto done;
            }
            c->last_seconds = now_seconds() - t1;
            c->pub.seconds += c->last_seconds;
            if (fs) {
                if (!first_failure) {
                    first_failure = fs;
                    snprintf(first_message, sizeof first_message, "%s", rfx_last_error());
                }
                rfx_clear_error();
                c->pub.outcome = RFX_AUTO_FAILED;
                c->pub.status = fs;
                continue;
            }
            double e = 0;
            for (size_t i = 0; i < mte; i++)
                e += (w ? wte[i] : 1.0) * (pred[i] - yte[i]) * (pred[i] - yte[i]);
            c->sse[0] = e;
            c->pub.folds = 1;
            c->active = 1;
            ran++;
            done_fits++;
        }
        if (ran == 0) break;
        rounds = f + 1;
        /* racing over this round's folds */
        double best = INFINITY;
        for (size_t j = 0; j < nc; j++)
            if (cs[j].active && cs[j].pub.folds == rounds)
                best = fmin(best, score_of(&cs[j], sst, rounds));
        for (size_t j = 0; j < nc; j++) {
            cand *c = &cs[j];
            if (!c->active) continue;
            if (c->pub.folds == rounds && score_of(c, sst, rounds) > p->race_factor * best) {
                c->active = 0;
                c->pub.outcome = RFX_AUTO_RACED;
            }
        }
        /* one candidate left (none stopped by the budget, which could
         * still be compared): it is the choice, and more folds would only
         * refine its score */
        size_t left = 0, cut = 0;
        for (size_t j = 0; j < nc; j++) {
            left += cs[j].active;
            cut += cs[j].pub.outcome == RFX_AUTO_BUDGET;
        }
        if (left == 1 && cut == 0) {
            for (size_t j = 0; j < nc; j++)
                if (cs[j].active && cs[j].pub.folds < k) cs[j].pub.outcome = RFX_AUTO_ALONE;
            break;
        }
        planned = done_fits;
        for (size_t j = 0; j < nc; j++)
            if (cs[j].active) planned += k - rounds;
    }
    /* the choice: least score over the folds every remaining (not raced,
     * not failed) candidate ran */
    size_t common = SIZE_MAX;
    for (size_t j = 0; j < nc; j++) {
        const rfx_auto_candidate *c = &cs[j].pub;
        if (c->folds > 0) cs[j].pub.cv_error = score_of(&cs[j], sst, c->folds);
        if (c->folds > 0 && c->outcome != RFX_AUTO_RACED && c->outcome != RFX_AUTO_FAILED &&
            c->folds < common)
            common = c->folds;
    }
    if (common == SIZE_MAX) {
        if (first_failure) {
            st = rfx__error(first_failure, "%s", first_message);
        } else {
            st = rfx__error(RFX_EINVAL, "auto: no candidate finished a fold within the budget "
                                        "of %g s",
                            p->budget);
        }
        goto done;
    }
    size_t chosen = SIZE_MAX;
    double best = INFINITY;
    for (size_t j = 0; j < nc; j++) {
        const rfx_auto_candidate *c = &cs[j].pub;
        if (c->folds < common || c->outcome == RFX_AUTO_RACED || c->outcome == RFX_AUTO_FAILED)
            continue;
        const double s = score_of(&cs[j], sst, common);
        if (chosen == SIZE_MAX || s < best) {
            best = s;
            chosen = j;
        }
    }
    const double t_cv = now_seconds();
    /* the final fit on all rows (none when only the choice is wanted) */
    if (out) {
        for (size_t i = 0; i < n; i++) memcpy(Xtr + i * d, X.data + i * X.stride, d * sizeof *Xtr);
        /* srfe and harfe from the first fold's choice of scale and q */
        const rfx_method mc = cs[chosen].pub.method;
        const int from_fold = mc == RFX_METHOD_SRFE || mc == RFX_METHOD_HARFE;
        st = fit_candidate(&ctx, mc, cs[chosen].pub.transform, rfx_cmat_of(Xtr, n, d), y, w,
                           ztr, from_fold ? &cs[chosen].start : NULL, NULL, &model);
        if (st) goto done;
    }
    if (report) {
        memset(report, 0, sizeof *report);
        report->n_candidates = nc;
        for (size_t j = 0; j < nc; j++) report->candidates[j] = cs[j].pub;
        report->chosen = chosen;
        report->compared_folds = common;
        report->seconds_cv = t_cv - t0;
        report->seconds_final = out ? now_seconds() - t_cv : 0.0;
    }
    if (out) *out = model;
    model = NULL;
done:
    rfx_model_free(model);
    free(perm);
    free(fold);
    free(Xtr);
    free(ytr);
    free(ztr);
    free(Xte);
    free(yte);
    free(pred);
    free(sst);
    free(sse);
    free(marg);
    free(wtr);
    free(wte);
    free(zc);
    return st;
}
