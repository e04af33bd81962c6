/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one-call fit used by the command line: standardise the inputs, choose
 * the length scale (and the regularisation) automatically, fit.
 *
 * The length scale is chosen on a seeded subset of at most select_rows rows
 * (chosen and ordered by the rows' contents, rfx__rows_order, so that the
 * choice does not depend on the order of the rows) with at most 512 features (the optimum moves little with D, and each
 * candidate costs one D x D eigendecomposition): a log grid over
 * [0.02, 20] sqrt(d) (standardised inputs are O(1) per coordinate, so
 * distances are O(sqrt(d))), then a golden-section refinement around the
 * best grid point. Bayesian fits maximise the log evidence per row; ridge
 * fits minimise GCV.
 *
 * Learned per-input (ARD) length scales reuse that set-up: the same rows,
 * the same reduced D and the same feature seed, so each candidate scale
 * vector has one deterministic score, minimised by the particle swarm of
 * rfx/projection.h over log-scale offsets u (l_i = l0_i exp(u_i)). The
 * swarm's particle 0 starts at u = 0, the starting scales, so the learned
 * scales never score worse than those on the selection rows. Candidates
 * run one after another (each fit is threaded inside), which keeps the
 * results independent of the thread count.
 *
 * Row weights: rows of weight 0 are dropped first (so that they are rows
 * left out, also for the subsets and holdouts, which count rows); weights
 * then all 1 are no weights; other weights go with their rows into the
 * standardisation (weighted moments), the selection subset and every fit.
 */
#include "internal.h"
#include "fit/fit_internal.h"
#include "solvers/classify_internal.h"

#include <math.h>
#include <string.h>

#define SELECT_MAX_FEATURES 512
#define GRID_POINTS 13
#define GOLDEN_STEPS 10
/* the box of the log-scale offsets u_i: l_i from l0_i / 20 (e^-3) to 55 l0_i
 * (e^4, where an input of unit spread barely moves the features) */
#define LEARN_LOWER (-3.0)
#define LEARN_UPPER 4.0

rfx_fit_params rfx_fit_params_default(void)
{
    rfx_fit_params p;
    memset(&p, 0, sizeof p);
    p.method = RFX_METHOD_BAYES;
    p.features = rfx_features_params_default();
    p.features.length_scale = 0.0; /* choose */
    p.standardize = 1;
    p.lambda = -1.0;
    p.noise_var = 0.0;
    p.prior_var = 0.0;
    p.fit_intercept = 1;
    p.select_rows = 4000;
    p.learn_length_scales = 0;
    p.learn_iterations = 30;
    p.learn_particles = 0;
    p.classify = NULL;
    p.classify_folds = 0;
    p.sample_weight = NULL;
    return p;
}

typedef struct problem {
    const rfx_fit_params *p;
    rfx_cmat X, Y;
    const double *w; /* X.rows row weights, or NULL */
} problem;

/* Fit one model on X, Y with D features and the isotropic length scale l,
 * or the d per-input scales ls when not NULL; *score is lower-is-better. */
static rfx_status fit_with(const problem *pb, double l, const double *ls, size_t D,
                           rfx_model **out, double *score)
{
    rfx_features_params fp = pb->p->features;
    fp.length_scale = l;
    fp.length_scales = ls;
    fp.gamma = 0;
    fp.n_features = D;
    rfx_features *f;
    RFX__TRY(rfx_features_create(&fp, pb->X.cols, &f));
    rfx_status st;
    rfx_model *m = NULL;
    if (pb->p->method == RFX_METHOD_BAYES) {
        rfx_bayes_params bp = rfx_bayes_params_default();
        bp.noise_var = pb->p->noise_var;
        bp.prior_var = pb->p->prior_var;
        bp.fit_intercept = pb->p->fit_intercept;
        bp.n_threads = fp.n_threads;
        bp.sample_weight = pb->w;
        if (out) {
            st = rfx_bayes_fit(f, pb->X, pb->Y, &bp, &m);
            if (!st) *score = -m->log_evidence / (double)pb->X.rows;
        } else {
            double logev = 0;
            st = rfx__bayes_log_evidence(f, pb->X, pb->Y, &bp, &logev);
            if (!st) *score = -logev / (double)pb->X.rows;
        }
    } else {
        rfx_ridge_params rp = rfx_ridge_params_default();
        rp.fit_intercept = pb->p->fit_intercept;
        rp.n_threads = fp.n_threads;
        rp.select = RFX_SELECT_GCV;
        rp.sample_weight = pb->w;
        if (pb->p->lambda >= 0) {
            rp.lambdas = &pb->p->lambda;
            rp.n_lambdas = 1;
        }
        st = rfx_ridge_fit(f, pb->X, pb->Y, &rp, &m);
        if (!st) *score = m->gcv;
    }
    rfx_features_free(f);
    if (st) return st;
    if (out) *out = m;
    else rfx_model_free(m);
    return RFX_OK;
}

/* The number of features of the selection fits: at most SELECT_MAX_FEATURES,
 * even for the cos-sin form. */
static size_t selection_features(const rfx_fit_params *p)
{
    const size_t D = p->features.n_features < SELECT_MAX_FEATURES ? p->features.n_features
                                                                  : SELECT_MAX_FEATURES;
    return p->features.form == RFX_FORM_COS_SIN ? D & ~(size_t)1 : D;
}

/* Choose the length scale on (a subset of) the rows; lower score is better. */
static rfx_status choose_length_scale(const problem *pb, double *best_l, double *best_score,
                                      size_t *evals)
{
    const size_t Dsel = selection_features(pb->p);
    const double root = sqrt((double)pb->X.cols), lo = log(0.02 * root), hi = log(20.0 * root);
    const size_t total = GRID_POINTS + GOLDEN_STEPS + 2;
    double ls[GRID_POINTS], sc[GRID_POINTS];
    size_t best = 0;
    *evals = 0;
    for (size_t i = 0; i < GRID_POINTS; i++) {
        ls[i] = lo + (hi - lo) * (double)i / (GRID_POINTS - 1);
        rfx_status st = fit_with(pb, exp(ls[i]), NULL, Dsel, NULL, &sc[i]);
        if (st == RFX_ENUMERIC) {
            sc[i] = INFINITY; /* a candidate may be ill-posed; others decide */
        } else if (st) {
            return st;
        }
        if (!isfinite(sc[i])) sc[i] = INFINITY;
        if (sc[i] < sc[best]) best = i;
        (*evals)++;
        if (rfx__fit_progress(pb->p, "choose length scale", (double)*evals / (double)total))
            return rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    }
    if (!isfinite(sc[best]))
        return rfx__error(RFX_ENUMERIC, "fit: no length scale gave a usable model");
    /* golden-section search on log l in the bracket around the best point */
    double a = ls[best > 0 ? best - 1 : 0], b = ls[best + 1 < GRID_POINTS ? best + 1 : best];
    const double g = 0.6180339887498949;
    double x1 = b - g * (b - a), x2 = a + g * (b - a), f1, f2;
    double bl = ls[best], bs = sc[best];
    RFX__TRY(fit_with(pb, exp(x1), NULL, Dsel, NULL, &f1));
    RFX__TRY(fit_with(pb, exp(x2), NULL, Dsel, NULL, &f2));
    *evals += 2;
    for (int it = 0; it < GOLDEN_STEPS; it++) {
        if (f1 < bs) { bs = f1; bl = x1; }
        if (f2 < bs) { bs = f2; bl = x2; }
        if (f1 < f2) {
            b = x2; x2 = x1; f2 = f1;
            x1 = b - g * (b - a);
            RFX__TRY(fit_with(pb, exp(x1), NULL, Dsel, NULL, &f1));
        } else {
            a = x1; x1 = x2; f1 = f2;
            x2 = a + g * (b - a);
            RFX__TRY(fit_with(pb, exp(x2), NULL, Dsel, NULL, &f2));
        }
        (*evals)++;
        if (rfx__fit_progress(pb->p, "choose length scale", (double)*evals / (double)total))
            return rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    }
    if (f1 < bs) { bs = f1; bl = x1; }
    if (f2 < bs) { bs = f2; bl = x2; }
    *best_l = exp(bl);
    *best_score = bs;
    return RFX_OK;
}

/* The search for per-input scales: the objective at log-scale offsets u. */
typedef struct learn_ctx {
    const problem *pb;
    size_t D;          /* features of each candidate fit                    */
    const double *ls0; /* d starting scales                                 */
    double *ls;        /* d: the candidate's scales (workspace)             */
} learn_ctx;

static rfx_status learn_objective(void *user, const double *u, size_t d, double *value)
{
    learn_ctx *c = user;
    for (size_t i = 0; i < d; i++) c->ls[i] = c->ls0[i] * exp(u[i]);
    rfx_status st = fit_with(c->pb, c->ls0[0], c->ls, c->D, NULL, value);
    if (st == RFX_ENUMERIC) { /* an ill-posed candidate; others decide */
        rfx_clear_error();
        *value = INFINITY;
        return RFX_OK;
    }
    if (!st && !isfinite(*value)) *value = INFINITY;
    return st;
}

static int learn_progress(void *user, const char *stage, double frac)
{
    (void)stage;
    return rfx__fit_progress(user, "learn length scales", frac);
}

/* Learn d per-input scales from ls0 on the selection rows: ls (d) receives
 * them, *before / *after the objective at ls0 and at ls. */
static rfx_status learn_length_scales(const problem *pb, const double *ls0, double *ls,
                                      double *before, double *after, size_t *evals)
{
    const size_t d = pb->X.cols;
    double *buf = NULL;
    RFX__TRY(rfx__calloc(5 * d, sizeof(double), (void **)&buf, "fit: learned length scales"));
    double *lower = buf, *upper = buf + d, *x0 = buf + 2 * d, *u = buf + 3 * d;
    for (size_t i = 0; i < d; i++) {
        lower[i] = LEARN_LOWER;
        upper[i] = LEARN_UPPER;
    }
    learn_ctx c = {pb, selection_features(pb->p), ls0, buf + 4 * d};
    double start = 0;
    rfx_status st = learn_objective(&c, x0, d, &start); /* x0 = 0: the starting scales */
    rfx_pso_report rep;
    if (!st) {
        rfx_pso_params pp = rfx_pso_params_default();
        pp.n_particles = pb->p->learn_particles;
        pp.max_iter = pb->p->learn_iterations;
        pp.lower = lower;
        pp.upper = upper;
        pp.x0 = x0;
        pp.seed = pb->p->features.seed;
        pp.progress = pb->p->progress ? learn_progress : NULL;
        pp.progress_user = (void *)pb->p;
        st = rfx_pso_minimize(&pp, d, learn_objective, &c, u, NULL, &rep);
    }
    if (!st) {
        for (size_t i = 0; i < d; i++) ls[i] = ls0[i] * exp(u[i]);
        *before = start;
        *after = rep.value;
        *evals = rep.evaluations + 1;
    }
    free(buf);
    return st;
}

/* A seeded subset of ns <= n rows of X and Y, and of the weights w unless
 * NULL (then *wsub is NULL): the first ns rows of rfx__rows_order over the
 * rows' raw values Xraw (the caller's X before standardisation, whose
 * rounding depends on the row order), Y and w, copied from X in that order.
 * The subset and its order are those of the rows' contents, so the same
 * rows in another order give the same selection rows (stream 1 of the
 * seed). */
static rfx_status subset_rows(rfx_cmat Xraw, rfx_cmat X, rfx_cmat Y, const double *w, size_t ns,
                              uint64_t seed, double **Xsub, double **Ysub, double **wsub)
{
    const size_t n = X.rows, d = X.cols;
    size_t *idx = NULL;
    double *xs = NULL, *ys = NULL, *ws = NULL;
    rfx_status st = rfx__alloc(n, sizeof(size_t), (void **)&idx, "fit: subset");
    if (!st) st = rfx__alloc(ns * d, sizeof(double), (void **)&xs, "fit: subset");
    if (!st) st = rfx__alloc(ns * Y.cols, sizeof(double), (void **)&ys, "fit: subset");
    if (!st && w) st = rfx__alloc(ns, sizeof(double), (void **)&ws, "fit: subset");
    if (!st) st = rfx__rows_order(Xraw, Y, w, seed, 1, idx);
    if (st) {
        free(idx);
        free(xs);
        free(ys);
        free(ws);
        return st;
    }
    for (size_t i = 0; i < ns; i++) {
        memcpy(xs + i * d, X.data + idx[i] * X.stride, d * sizeof(double));
        memcpy(ys + i * Y.cols, Y.data + idx[i] * Y.stride, Y.cols * sizeof(double));
        if (w) ws[i] = w[idx[i]];
    }
    free(idx);
    *Xsub = xs;
    *Ysub = ys;
    *wsub = ws;
    return RFX_OK;
}

rfx_status rfx_fit_params_check(const rfx_fit_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "fit: params is NULL");
    if (p->method == RFX_METHOD_PCE)
        return rfx__error(RFX_EINVAL, "fit.method: pce models are fitted by rfx_pce_fit (then "
                                      "rfx_model_from_pce), not rfx_model_fit");
    if (p->method == RFX_METHOD_SINKS || p->method == RFX_METHOD_GREEDY)
        return rfx__error(RFX_EINVAL, "fit.method: %s models are fitted by rfx_%s_fit "
                          "(rfx/sinks.h), not rfx_model_fit", rfx_method_name(p->method),
                          rfx_method_name(p->method));
    if ((unsigned)p->method > RFX_METHOD_CLASSIFY || p->method == RFX_METHOD_PROJECTED)
        return rfx__error(RFX_EINVAL, "fit.method: %d is not a method of rfx_model_fit",
                          (int)p->method);
    if (!isfinite(p->lambda))
        return rfx__error(RFX_EINVAL, "fit.lambda: must be finite, got %g", p->lambda);
    if (p->select_rows < 2)
        return rfx__error(RFX_EINVAL, "fit.select_rows: must be >= 2, got %zu", p->select_rows);
    if (p->learn_length_scales != 0 && p->learn_length_scales != 1)
        return rfx__error(RFX_EINVAL, "fit.learn_length_scales: must be 0 or 1, got %d",
                          p->learn_length_scales);
    if (p->learn_length_scales && p->method != RFX_METHOD_BAYES && p->method != RFX_METHOD_RIDGE)
        return rfx__error(RFX_EINVAL, "fit.learn_length_scales: for the bayes and ridge methods, "
                                      "not %s", rfx_method_name(p->method));
    if (p->learn_length_scales && p->learn_iterations == 0)
        return rfx__error(RFX_EINVAL, "fit.learn_iterations: must be >= 1, got 0");
    if (p->method == RFX_METHOD_CLASSIFY && p->classify && p->classify->sample_weight)
        return rfx__error(RFX_EINVAL, "classify.sample_weight: give the weights of the rows as "
                                      "fit.sample_weight (the fit splits them with the rows)");
    if (p->method == RFX_METHOD_CLASSIFY) {
        if (p->lambda == 0)
            return rfx__error(RFX_EINVAL, "fit.lambda: a classifier needs lambda > 0 (or < 0 to "
                                          "choose it)");
        if (p->classify_folds == 1)
            return rfx__error(RFX_EINVAL,
                              "fit.classify_folds: must be 0 (holdout) or >= 2, got 1");
        rfx_classify_params cp = rfx__fit_classify_settings(p);
        if (p->lambda < 0) cp.lambda = 1.0; /* chosen from the grid */
        RFX__TRY(rfx_classify_params_check(&cp));
    }
    return RFX_OK;
}

/* SRFE / HARFE through the one-call fit: rfx_srfe_fit with its defaults
 * (q = 2 sparse sine features, lasso by CV) and from params the seed,
 * threads, N (0 = automatic), q (when > 0), lambda (when >= 0) and the
 * standardisation. The report's length scale is 1 / weight scale (the
 * weights are N(0, s^2) = N(0, 1 / l^2)), its score the CV mean squared
 * error. */
static rfx_status fit_srfe(const rfx_fit_params *params, rfx_cmat X, rfx_cmat Y, rfx_model **out,
                           rfx_fit_report *report)
{
    rfx_srfe_params sp = rfx_srfe_params_default();
    sp.features.seed = params->features.seed;
    sp.features.n_threads = params->features.n_threads;
    sp.features.n_features = params->features.n_features;
    if (params->features.sparsity > 0) sp.features.sparsity = params->features.sparsity;
    if (params->lambda >= 0) sp.lambda = params->lambda;
    sp.standardize = params->standardize;
    sp.method = params->method == RFX_METHOD_HARFE ? RFX_L1_METHOD_HTP : RFX_L1_METHOD_LASSO;
    sp.progress = params->progress;
    sp.progress_user = params->progress_user;
    sp.sample_weight = params->sample_weight;
    rfx_srfe_report rep;
    rfx_model *m = NULL;
    RFX__TRY(rfx_srfe_fit(&sp, X, Y, &m, &rep));
    if (report) {
        memset(report, 0, sizeof *report);
        report->length_scale = 1.0 / rep.weight_scale;
        report->lambda = rep.lambda;
        report->score = rep.cv_mse;
        report->n_candidates = rep.n_candidates;
        report->learn_score_before = report->learn_score_after = NAN;
    }
    *out = m;
    return RFX_OK;
}

/* ---- the length scales ---------------------------------------------------- */

/* The length scales a fit chose or learned on its selection rows. */
typedef struct scales {
    double l, score;       /* the isotropic scale, and its score (NaN unchosen) */
    size_t evals;
    double *ls0, *ls;      /* learning: d starting and d learned scales      */
    double before, after;  /* the learning's objective at ls0 and at ls      */
    size_t learn_evals;
} scales;

static scales scales_start(const rfx_fit_params *p)
{
    scales sc;
    memset(&sc, 0, sizeof sc);
    sc.l = p->features.length_scale;
    sc.score = sc.before = sc.after = NAN;
    return sc;
}

/* On the selection rows sub: choose the isotropic length scale (choose),
 * then learn per-input scales (params->learn_length_scales) from it or
 * from the user's map. */
static rfx_status select_scales(const problem *sub, int choose, scales *sc)
{
    const rfx_fit_params *params = sub->p;
    const size_t d = sub->X.cols;
    if (choose) RFX__TRY(choose_length_scale(sub, &sc->l, &sc->score, &sc->evals));
    if (!params->learn_length_scales) return RFX_OK;
    RFX__TRY(rfx__alloc(d, sizeof(double), (void **)&sc->ls0, "fit: length scales"));
    RFX__TRY(rfx__alloc(d, sizeof(double), (void **)&sc->ls, "fit: length scales"));
    if (choose) {
        for (size_t j = 0; j < d; j++) sc->ls0[j] = sc->l;
    } else {
        /* start from the user's scales (isotropic, gamma or ARD) as the
         * feature map resolves them */
        rfx_features *f0 = NULL;
        RFX__TRY(rfx_features_create(&params->features, d, &f0));
        memcpy(sc->ls0, f0->ls, d * sizeof(double));
        rfx_features_free(f0);
        sc->l = sc->ls0[0];
    }
    return learn_length_scales(sub, sc->ls0, sc->ls, &sc->before, &sc->after, &sc->learn_evals);
}

/* What the fit chose, in the report's signs (higher is better for bayes). */
static void fill_report(rfx_fit_report *report, const rfx_fit_params *params, const rfx_model *m,
                        double l, double score, const scales *sc)
{
    const int bayes = params->method == RFX_METHOD_BAYES;
    memset(report, 0, sizeof *report);
    report->length_scale = l;
    report->lambda = m->lambda;
    report->noise_var = m->noise_var;
    report->prior_var = m->prior_var;
    report->score = bayes ? -score : score;
    report->n_candidates = sc->evals;
    report->learn_score_before = bayes ? -sc->before : sc->before;
    report->learn_score_after = bayes ? -sc->after : sc->after;
    report->learn_evaluations = sc->learn_evals;
}

/* With sample weights: check them and, when some are 0, fit the rows of
 * positive weight alone (copies of their X, Y and weights) and set *done. A
 * row of weight 0 is then a row left out for every step of the fit (the
 * subsets and holdouts count rows). */
static rfx_status fit_positive_rows(const rfx_fit_params *params, rfx_cmat X, rfx_cmat Y,
                                    rfx_model **out, rfx_fit_report *report, int *done)
{
    const double *w = params->sample_weight;
    const size_t n = X.rows, d = X.cols, ny = Y.cols;
    *done = 0;
    RFX__TRY(rfx__check_cmat(X, "fit: X"));
    RFX__TRY(rfx__check_cmat(Y, "fit: Y"));
    if (Y.rows != n || ny == 0) return RFX_OK; /* the fit reports the shapes */
    RFX__TRY(rfx__check_weights(w, n, "fit.sample_weight"));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) m += w[i] > 0;
    if (m == n) return RFX_OK;
    if (m < 2)
        return rfx__error(RFX_EDIM, "fit: at least 2 rows of positive weight are needed, got %zu",
                          m);
    double *Xp = NULL, *Yp = NULL, *wp = NULL;
    rfx_status st = rfx__alloc(m * d, sizeof *Xp, (void **)&Xp, "fit: weighted rows");
    if (!st) st = rfx__alloc(m * ny, sizeof *Yp, (void **)&Yp, "fit: weighted rows");
    if (!st) st = rfx__alloc(m, sizeof *wp, (void **)&wp, "fit: weighted rows");
    if (!st) {
        for (size_t i = 0, k = 0; i < n; i++) {
            if (!(w[i] > 0)) continue;
            memcpy(Xp + k * d, X.data + i * X.stride, d * sizeof *Xp);
            memcpy(Yp + k * ny, Y.data + i * Y.stride, ny * sizeof *Yp);
            wp[k++] = w[i];
        }
        rfx_fit_params p = *params;
        p.sample_weight = wp;
        st = rfx_model_fit(&p, rfx_cmat_of(Xp, m, d), rfx_cmat_of(Yp, m, ny), out, report);
        *done = 1;
    }
    free(Xp);
    free(Yp);
    free(wp);
    return st;
}

rfx_status rfx_model_fit(const rfx_fit_params *params, rfx_cmat X, rfx_cmat Y, rfx_model **out,
                         rfx_fit_report *report)
{
    if (!out) return rfx__error(RFX_EINVAL, "fit: out is NULL");
    RFX__TRY(rfx_fit_params_check(params));
    /* too little data, whatever the method: a data error (RFX_EDIM) */
    if (X.rows < 2) return rfx__error(RFX_EDIM, "fit: at least 2 rows are needed, got %zu", X.rows);
    if (params->method == RFX_METHOD_SRFE || params->method == RFX_METHOD_HARFE)
        return fit_srfe(params, X, Y, out, report);
    rfx_fit_params unit;
    if (params->sample_weight) {
        int done = 0;
        rfx_status st = fit_positive_rows(params, X, Y, out, report, &done);
        if (st || done) return st;
        /* weights all 1 (those of weight 0 dropped above) are no weights:
         * the objective is the same, and the least-squares classifier keeps
         * its closed form */
        size_t i = 0;
        while (i < X.rows && params->sample_weight[i] == 1.0) i++;
        if (i == X.rows) {
            unit = *params;
            unit.sample_weight = NULL;
            params = &unit;
        }
    }
    if (params->method == RFX_METHOD_CLASSIFY) return rfx__fit_classify(params, X, Y, out, report);
    RFX__TRY(rfx__check_cmat(X, "fit: X"));
    RFX__TRY(rfx__check_cmat(Y, "fit: Y"));
    const size_t n = X.rows, d = X.cols;
    if (d == 0) return rfx__error(RFX_EINVAL, "fit: X has no columns");
    if (Y.rows != n || Y.cols == 0)
        return rfx__error(RFX_EDIM, "fit: Y is %zu x %zu for %zu rows of X", Y.rows, Y.cols, n);
    if (params->method == RFX_METHOD_BAYES && Y.cols != 1)
        return rfx__error(RFX_EINVAL, "fit: the Bayesian method takes one target, got %zu",
                          Y.cols);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "fit: X row %zu, column %zu: %g is not finite", r, c,
                          X.data[r * X.stride + c]);
    if (!rfx__all_finite(Y, &r, &c))
        return rfx__error(RFX_EPARSE, "fit: Y row %zu, column %zu: %g is not finite", r, c,
                          Y.data[r * Y.stride + c]);
    const rfx_features_params *fp = &params->features;
    int choose = fp->length_scales == NULL && fp->gamma == 0 && fp->length_scale <= 0;
    {
        rfx_features_params chk = *fp;
        if (choose) chk.length_scale = 1.0;
        RFX__TRY(rfx__features_check(&chk, d));
    }

    const double *w = params->sample_weight;
    double *mean = NULL, *scale = NULL, *Xs = NULL, *Xsub = NULL, *Ysub = NULL, *wsub = NULL;
    rfx_model *m = NULL;
    rfx_status st = RFX_OK;
    rfx_cmat Xw = X;
    if (params->standardize) {
        st = rfx__fit_standardize(X, w, &mean, &scale, &Xs);
        if (st) goto done;
        Xw = rfx_cmat_of(Xs, n, d);
    }

    const int learn = params->learn_length_scales;
    scales sc = scales_start(params);
    problem sub = {params, Xw, Y, w};
    if (choose || learn) {
        size_t ns = params->select_rows;
        if (n > ns) {
            st = subset_rows(X, Xw, Y, w, ns, fp->seed, &Xsub, &Ysub, &wsub);
            if (st) goto done;
            sub.X = rfx_cmat_of(Xsub, ns, d);
            sub.Y = rfx_cmat_of(Ysub, ns, Y.cols);
            sub.w = wsub;
        }
    }
    st = select_scales(&sub, choose, &sc);
    if (st) goto done;
    double l = sc.l, score = sc.score;
    if (rfx__fit_progress(params, "fit", 0.0)) {
        st = rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
        goto done;
    }
    if (choose || learn) {
        problem all = {params, Xw, Y, w};
        st = fit_with(&all, learn ? sc.ls0[0] : l, sc.ls, fp->n_features, &m, &score);
    } else {
        /* the user's map as given (isotropic, ARD or gamma) */
        rfx_features *f = NULL;
        st = rfx_features_create(fp, d, &f);
        if (!st && params->method == RFX_METHOD_BAYES) {
            rfx_bayes_params bp = rfx_bayes_params_default();
            bp.noise_var = params->noise_var;
            bp.prior_var = params->prior_var;
            bp.fit_intercept = params->fit_intercept;
            bp.n_threads = fp->n_threads;
            bp.sample_weight = w;
            st = rfx_bayes_fit(f, Xw, Y, &bp, &m);
            if (!st) score = -m->log_evidence / (double)n;
        } else if (!st) {
            rfx_ridge_params rp = rfx_ridge_params_default();
            rp.fit_intercept = params->fit_intercept;
            rp.n_threads = fp->n_threads;
            rp.sample_weight = w;
            if (params->lambda >= 0) rp.lambda = params->lambda;
            else rp.select = RFX_SELECT_GCV;
            st = rfx_ridge_fit(f, Xw, Y, &rp, &m);
            if (!st) score = m->gcv;
        }
        rfx_features_free(f);
        if (!st) l = m->features->ls[0];
    }
    if (st) goto done;
    if (rfx__fit_progress(params, "fit", 1.0)) {
        st = rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
        goto done;
    }
    if (params->standardize) {
        m->x_mean = mean;
        m->x_scale = scale;
        mean = scale = NULL;
    }
    if (report) fill_report(report, params, m, l, score, &sc);
    *out = m;
    m = NULL;
done:
    rfx_model_free(m);
    free(mean);
    free(scale);
    free(Xs);
    free(Xsub);
    free(Ysub);
    free(wsub);
    free(sc.ls0);
    free(sc.ls);
    return st;
}

/* ---- from a row-block source ------------------------------------------- */

/*
 * rfx_model_fit's steps, each one pass over the rows, so that memory holds
 * D^2 statistics, a block and the selection subset, never the rows:
 *   1. the rows, the column sums and largest magnitudes (and checks), and
 *      the selection rows: those of least rfx__row_key, the subset that
 *      subset_rows takes, kept in a bounded heap as they come;
 *   2. (standardising) the squared deviations from the means;
 *   3. (only for a column whose magnitude leaves [RFX__SAFE_LO, RFX__SAFE_HI]) its
 *      sums on x / top, as rfx__standardize_weighted makes them;
 *   4. the statistics of the standardised rows, then the solve.
 * The sums run over the rows in order, as rfx__standardize_weighted's, so
 * the scaler has the bits of the in-memory fit, the subset is the same,
 * and so is the chosen length scale. In parts (rfx_model_fit_parts) the
 * sums are exact instead, and the parts' selection candidates are merged.
 *
 * A classifier (RFX_METHOD_CLASSIFY) also finds its classes in pass 1 (in
 * parts, the union of every part's) and keeps in its heap the rows that
 * rfx__fit_classify takes: the selection rows, and for the least-squares
 * classifier the rows that score its leave-one-out errors (every row up to
 * RFX__LSQ_LOO_ROWS, else that many of least key). Then the least-squares
 * classifier fits the rows it holds when it holds them all (as
 * rfx__fit_classify does: the dual form when n < D), else adds the
 * statistics of its +-1 targets in pass 4 and solves in closed form; any other loss runs its optimizer over the standardised
 * source (rfx_classify_fit_source; in parts rfx_classify_fit_shard with
 * parts->sum), a pass per evaluation or epoch unless its features fit in
 * its cache.
 */

typedef struct src_fit {
    const rfx_fit_params *p;
    rfx_source *src;
    size_t d, ny;
    uint64_t n;            /* rows (pass 1)                                    */
    double *sum, *top, *ss, *msum; /* column sums (d each)                      */
    double *mean, *scale;
    unsigned char *unsafe; /* columns summed divided by their magnitude       */
    /* the selection: the rows of least rfx__row_key, kept as they come in a
     * max-heap of at most cap records [key bits, part, row, x (d), y (ny)] */
    size_t cap, cand_n, rec;
    double *cand;
    uint64_t seed;
    size_t ns;             /* the selection rows, in xsub, ysub                 */
    double *xsub, *ysub;
    /* a classifier: its classes (pass 1: the labels seen, sorted), the
     * selection rows' class indices, the scored rows of the least-squares
     * classifier (nloo, standardised, in xloo and yloo) */
    int classify, closed;
    double *classes;
    size_t C, classes_cap;
    uint32_t *ysel, *yloo;
    size_t nloo;
    double *xloo;
    int onehot;            /* std_next gives the +-1 targets, not the labels    */
    uint64_t std_row;      /* std_next's rows given in this pass                */
    double *yt;            /* a block's targets                                 */
    uint32_t *yi;          /* a block's class indices                           */
    size_t yt_rows;
    double *xs;            /* a standardised block                              */
    size_t xs_rows;
    const rfx_features *f; /* pass 4: the map and its statistics                */
    rfx_stats *stats;
    /* a fit in parts (rfx_model_fit_parts): exact column sums, global rows */
    const rfx_fit_parts *parts;
    rfx__xsum *xs_sum, *xs_dev; /* d accumulators each                           */
    uint64_t first_row, total; /* this part's first global row, and all rows    */
    rfx_source std;        /* the source standardised, for parts->stats        */
    int shared_failure;    /* a part's call failed: every part knows           */
} src_fit;

/* A part's call: its failure is every part's (the caller's functions agree
 * on it), so the fit does not report it with parts->fail. */
#define PART_CALL(sf, call)            \
    do {                               \
        rfx_status st_ = (call);       \
        if (st_) {                     \
            (sf)->shared_failure = 1;  \
            return st_;                \
        }                              \
    } while (0)

/* ---- the selection rows: those of least key, whatever the order --------- */

static uint64_t cand_key(const double *r)
{
    uint64_t k;
    memcpy(&k, r, sizeof k);
    return k;
}

/* -1, 0, 1: record a before b in the selection's order (key, then values). */
static int cand_cmp(const src_fit *sf, const double *a, const double *b)
{
    const uint64_t ka = cand_key(a), kb = cand_key(b);
    if (ka != kb) return ka < kb ? -1 : 1;
    return rfx__row_compare(a + 3, a + 3 + sf->d, 1.0, b + 3, b + 3 + sf->d, 1.0, sf->d, sf->ny,
                            1);
}

static void cand_swap(const src_fit *sf, double *a, double *b)
{
    for (size_t k = 0; k < sf->rec; k++) {
        const double t = a[k];
        a[k] = b[k];
        b[k] = t;
    }
}

static void cand_sift_down(src_fit *sf, size_t i)
{
    for (;;) {
        size_t big = i, l = 2 * i + 1, r = l + 1;
        double *c = sf->cand;
        if (l < sf->cand_n && cand_cmp(sf, c + l * sf->rec, c + big * sf->rec) > 0) big = l;
        if (r < sf->cand_n && cand_cmp(sf, c + r * sf->rec, c + big * sf->rec) > 0) big = r;
        if (big == i) return;
        cand_swap(sf, c + i * sf->rec, c + big * sf->rec);
        i = big;
    }
}

/* Offer one row (local index row) to the selection: kept while it is among
 * the cap least. */
static void cand_offer(src_fit *sf, const double *x, const double *y, size_t y_stride,
                       uint64_t row)
{
    double *r = sf->cand + sf->cand_n * sf->rec; /* the scratch record past the heap */
    const uint64_t key = rfx__row_key(sf->seed, 1, x, sf->d, y, sf->ny, y_stride);
    memcpy(r, &key, sizeof key);
    r[1] = sf->parts ? (double)sf->parts->part : 0.0;
    r[2] = (double)row;
    memcpy(r + 3, x, sf->d * sizeof(double));
    for (size_t k = 0; k < sf->ny; k++) r[3 + sf->d + k] = y[k * y_stride];
    if (sf->cand_n < sf->cap) {
        size_t i = sf->cand_n++;
        while (i > 0) { /* sift up */
            size_t up = (i - 1) / 2;
            double *a = sf->cand + i * sf->rec, *b = sf->cand + up * sf->rec;
            if (cand_cmp(sf, a, b) <= 0) break;
            cand_swap(sf, a, b);
            i = up;
        }
    } else if (cand_cmp(sf, r, sf->cand) < 0) {
        memcpy(sf->cand, r, sf->rec * sizeof(double));
        cand_sift_down(sf, 0);
    }
}

static const src_fit *g_sort_sf; /* qsort's context: set and used on one thread */

static int cand_order(const void *a, const void *b) { return cand_cmp(g_sort_sf, a, b); }
static int row_order(const void *a, const void *b)
{
    const double *x = a, *y = b; /* [key, part, row, ...]: by part, then row */
    if (x[1] != y[1]) return x[1] < y[1] ? -1 : 1;
    return x[2] < y[2] ? -1 : x[2] > y[2];
}

/* m records' rows, raw, into new arrays *x (m x d) and *y (m x ny). */
static rfx_status cand_copy(const src_fit *sf, const double *recs, size_t m, double **x,
                            double **y)
{
    RFX__TRY(rfx__alloc(m * sf->d + 1, sizeof(double), (void **)x, "fit: subset"));
    RFX__TRY(rfx__alloc(m * sf->ny + 1, sizeof(double), (void **)y, "fit: subset"));
    for (size_t i = 0; i < m; i++) {
        memcpy(*x + i * sf->d, recs + i * sf->rec + 3, sf->d * sizeof(double));
        memcpy(*y + i * sf->ny, recs + i * sf->rec + 3 + sf->d, sf->ny * sizeof(double));
    }
    return RFX_OK;
}

/* The selection from n candidate records, raw into xsub and ysub:
 * rfx_model_fit's (all rows in order when there are at most cap, else the
 * cap of least key in key order); a classifier's, rfx__fit_classify's (the
 * first select_rows in key order; the least-squares classifier's scored
 * rows, all in order or the cap of least key, into xloo and ysub's
 * successor yloo once the classes are known). */
static rfx_status cand_finish(src_fit *sf, double *recs, size_t n)
{
    const int all_rows = sf->total <= sf->cap;
    const size_t rb = sf->rec * sizeof(double);
    g_sort_sf = sf;
    qsort(recs, n, rb, cand_order);
    g_sort_sf = NULL;
    if (!sf->classify) {
        if (all_rows) qsort(recs, n, rb, row_order);
        sf->ns = all_rows || n < sf->cap ? n : sf->cap;
        return cand_copy(sf, recs, sf->ns, &sf->xsub, &sf->ysub);
    }
    sf->ns = n < sf->p->select_rows ? n : sf->p->select_rows;
    RFX__TRY(cand_copy(sf, recs, sf->ns, &sf->xsub, &sf->ysub));
    if (!sf->closed) return RFX_OK;
    sf->nloo = all_rows || n < sf->cap ? n : sf->cap;
    if (all_rows) qsort(recs, n, rb, row_order);
    double *labels = NULL;
    rfx_status st = cand_copy(sf, recs, sf->nloo, &sf->xloo, &labels);
    if (!st) st = rfx__alloc(sf->nloo + 1, sizeof *sf->yloo, (void **)&sf->yloo, "fit: LOO rows");
    if (!st) rfx__classify_index(labels, sf->nloo, 1, sf->classes, sf->C, sf->yloo);
    free(labels);
    return st;
}

/* The selection rows, once every part's rows were offered. */
static rfx_status select_rows(src_fit *sf)
{
    const rfx_fit_parts *parts = sf->parts;
    if (!parts) return cand_finish(sf, sf->cand, sf->cand_n);
    /* every part's candidates: [count, cap records] each, then all merged */
    const size_t each = 1 + sf->cap * sf->rec, K = parts->n_parts;
    double *mine = NULL, *all = NULL, *recs = NULL;
    rfx_status st = rfx__calloc(each, sizeof(double), (void **)&mine, "fit: selection");
    if (!st) st = rfx__alloc(K * each, sizeof(double), (void **)&all, "fit: selection");
    if (!st) st = rfx__alloc(K * sf->cap * sf->rec + 1, sizeof(double), (void **)&recs,
                             "fit: selection");
    if (!st) {
        mine[0] = (double)sf->cand_n;
        memcpy(mine + 1, sf->cand, sf->cand_n * sf->rec * sizeof(double));
        st = parts->gather(parts->user, mine, each, all);
        sf->shared_failure = st != RFX_OK;
    }
    size_t n = 0;
    for (size_t k = 0; k < K && !st; k++) {
        const double *p = all + k * each;
        const size_t c = (size_t)p[0];
        if (c > sf->cap) {
            st = rfx__error(RFX_EINTERNAL, "fit: part %zu gave %zu selection rows", k, c);
            break;
        }
        memcpy(recs + n * sf->rec, p + 1, c * sf->rec * sizeof(double));
        n += c;
    }
    if (!st) st = cand_finish(sf, recs, n);
    free(mine);
    free(all);
    free(recs);
    return st;
}

typedef rfx_status (*block_fn)(src_fit *sf, rfx_cmat X, rfx_cmat Y, uint64_t row0);

/* One pass: rewind, and every block to fn with the index of its first row.
 * The first pass finds d and the targets; every block must agree. */
static rfx_status source_pass(src_fit *sf, block_fn fn, const char *stage, int first)
{
    rfx_source *src = sf->src;
    uint64_t row0 = 0;
    if (rfx__fit_progress(sf->p, stage, 0.0))
        return rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    RFX__TRY(src->rewind(src));
    for (;;) {
        rfx_block b;
        int done = 0;
        memset(&b, 0, sizeof b);
        RFX__TRY(src->next(src, &b, &done));
        if (done) break;
        if (first && row0 == 0 && !sf->parts) {
            sf->d = b.cols;
            sf->ny = b.ny;
        }
        if (b.cols != sf->d || b.ny != sf->ny)
            return rfx__error(RFX_EDIM, "fit: source rows from %llu have %zu columns and %zu "
                              "targets, the first %zu and %zu", (unsigned long long)row0, b.cols,
                              b.ny, sf->d, sf->ny);
        rfx_cmat X = {b.x, b.rows, b.cols, b.stride}, Y = {b.y, b.rows, b.ny, b.y_stride};
        rfx_status st = fn(sf, X, Y, row0);
        if (st) return st;
        row0 += b.rows;
        if (rfx__fit_progress(sf->p, stage, -1.0))
            return rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    }
    if (!first && row0 != sf->n)
        return rfx__error(RFX_EDIM, "fit: the source gave %llu rows, then %llu (it must give the "
                          "same rows on every pass)", (unsigned long long)sf->n,
                          (unsigned long long)row0);
    sf->n = row0;
    return RFX_OK;
}

/* The column sums and the scaler, once d and the targets are known. */
static rfx_status alloc_sums(src_fit *sf)
{
    if (sf->sum) return RFX_OK;
    if (sf->d == 0) return rfx__error(RFX_EINVAL, "fit: the source's rows have no columns");
    if (sf->ny == 0) return rfx__error(RFX_EINVAL, "fit: the source has no targets");
    if (sf->p->method == RFX_METHOD_BAYES && sf->ny != 1)
        return rfx__error(RFX_EINVAL, "fit: the Bayesian method takes one target, got %zu",
                          sf->ny);
    RFX__TRY(rfx__calloc(6 * sf->d, sizeof(double), (void **)&sf->sum, "fit: column sums"));
    sf->top = sf->sum + sf->d;
    sf->ss = sf->sum + 2 * sf->d;
    sf->msum = sf->sum + 3 * sf->d;
    sf->mean = sf->sum + 4 * sf->d;
    sf->scale = sf->sum + 5 * sf->d;
    if (sf->parts) {
        RFX__TRY(rfx__calloc(2 * sf->d, sizeof *sf->xs_sum, (void **)&sf->xs_sum, "fit: sums"));
        sf->xs_dev = sf->xs_sum + sf->d;
    }
    if (sf->classify && sf->ny != 1)
        return rfx__error(RFX_EDIM, "fit: a classifier takes one column of labels, the source has "
                          "%zu target columns", sf->ny);
    if (sf->cap) {
        sf->rec = 3 + sf->d + sf->ny;
        RFX__TRY(rfx__alloc((sf->cap + 1) * sf->rec, sizeof(double), (void **)&sf->cand,
                            "fit: selection rows"));
    }
    return RFX_OK;
}

/* ---- a classifier's classes --------------------------------------------- */

/* Pass 1: the label v (of row row) among the sorted labels seen. */
static rfx_status class_offer(src_fit *sf, double v, uint64_t row)
{
    size_t lo = 0, hi = sf->C;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (sf->classes[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    if (lo < sf->C && sf->classes[lo] == v) return RFX_OK;
    if (sf->C >= RFX_CLASSIFY_MAX_CLASSES)
        return rfx__error(RFX_EDIM, "fit: row %llu: more than %d distinct labels (are these "
                          "class labels?)", (unsigned long long)row, RFX_CLASSIFY_MAX_CLASSES);
    if (sf->C == sf->classes_cap) {
        const size_t cap = sf->classes_cap ? 2 * sf->classes_cap : 16;
        double *grown = realloc(sf->classes, cap * sizeof *grown);
        if (!grown) return rfx__error(RFX_ENOMEM, "fit: cannot allocate %zu classes", cap);
        sf->classes = grown;
        sf->classes_cap = cap;
    }
    memmove(sf->classes + lo + 1, sf->classes + lo, (sf->C - lo) * sizeof *sf->classes);
    sf->classes[lo] = v;
    sf->C++;
    return RFX_OK;
}

static int double_order(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* After pass 1: every part's classes merged (in parts), and at least two. */
static rfx_status finish_classes(src_fit *sf)
{
    const rfx_fit_parts *parts = sf->parts;
    if (parts) {
        double most = (double)sf->C;
        PART_CALL(sf, parts->max(parts->user, &most, 1));
        const size_t each = 1 + (size_t)most, K = parts->n_parts;
        double *mine = NULL, *all = NULL, *merged = NULL;
        rfx_status st = rfx__calloc(each, sizeof *mine, (void **)&mine, "fit: classes");
        if (!st) st = rfx__alloc(K * each, sizeof *all, (void **)&all, "fit: classes");
        if (!st) st = rfx__alloc(K * each, sizeof *merged, (void **)&merged, "fit: classes");
        if (!st) {
            mine[0] = (double)sf->C;
            if (sf->C) memcpy(mine + 1, sf->classes, sf->C * sizeof *mine);
            st = parts->gather(parts->user, mine, each, all);
            sf->shared_failure = st != RFX_OK;
        }
        size_t m = 0;
        for (size_t k = 0; k < K && !st; k++) {
            const size_t c = (size_t)all[k * each];
            memcpy(merged + m, all + k * each + 1, c * sizeof *merged);
            m += c;
        }
        if (!st) {
            qsort(merged, m, sizeof *merged, double_order);
            size_t u = 0;
            for (size_t i = 0; i < m; i++)
                if (u == 0 || merged[i] != merged[u - 1]) merged[u++] = merged[i];
            free(sf->classes);
            sf->classes = merged;
            sf->C = sf->classes_cap = u;
            merged = NULL;
        }
        free(mine);
        free(all);
        free(merged);
        RFX__TRY(st);
    }
    if (sf->C > RFX_CLASSIFY_MAX_CLASSES) {
        sf->shared_failure = 1;
        return rfx__error(RFX_EDIM, "fit: %zu distinct labels, more than the %d classes "
                          "allowed (are these class labels?)", sf->C, RFX_CLASSIFY_MAX_CLASSES);
    }
    if (sf->C < 2) {
        sf->shared_failure = 1;
        return rfx__error(RFX_EDIM, "fit: every one of the %llu rows has the label %g; "
                          "classification needs at least 2 classes",
                          (unsigned long long)sf->total, sf->C ? sf->classes[0] : 0.0);
    }
    return RFX_OK;
}

/* The class indices of a block's labels (stride apart) into sf->yi, and
 * with onehot their +-1 targets into sf->yt; a label not seen in pass 1 is
 * RFX_EINVAL. */
static rfx_status block_classes(src_fit *sf, const double *labels, size_t stride, size_t rows,
                                uint64_t row0, int onehot)
{
    const size_t K = sf->C == 2 ? 1 : sf->C;
    if (rows > sf->yt_rows) {
        free(sf->yt);
        free(sf->yi);
        sf->yt = NULL;
        sf->yi = NULL;
        sf->yt_rows = 0;
        RFX__TRY(rfx__alloc(rows * K, sizeof *sf->yt, (void **)&sf->yt, "fit: block targets"));
        RFX__TRY(rfx__alloc(rows, sizeof *sf->yi, (void **)&sf->yi, "fit: block targets"));
        sf->yt_rows = rows;
    }
    for (size_t i = 0; i < rows; i++) {
        const double v = labels[i * stride];
        size_t lo = 0, hi = sf->C;
        while (lo < hi) {
            const size_t mid = lo + (hi - lo) / 2;
            if (sf->classes[mid] < v) lo = mid + 1;
            else hi = mid;
        }
        if (lo == sf->C || sf->classes[lo] != v)
            return rfx__error(RFX_EINVAL, "fit: source row %llu has the label %g, not seen in the "
                              "first pass (the source must give the same rows on every pass)",
                              (unsigned long long)(row0 + i), v);
        sf->yi[i] = (uint32_t)lo;
    }
    if (onehot) rfx__classify_targets(sf->yi, rows, K, sf->yt);
    return RFX_OK;
}

static rfx_status pass_sums(src_fit *sf, rfx_cmat X, rfx_cmat Y, uint64_t row0)
{
    RFX__TRY(alloc_sums(sf));
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "fit: X row %llu, column %zu: %g is not finite",
                          (unsigned long long)(row0 + r), c, X.data[r * X.stride + c]);
    if (!rfx__all_finite(Y, &r, &c))
        return rfx__error(RFX_EPARSE, "fit: Y row %llu, column %zu: %g is not finite",
                          (unsigned long long)(row0 + r), c, Y.data[r * Y.stride + c]);
    for (size_t i = 0; i < X.rows; i++)
        for (size_t j = 0; j < sf->d; j++) {
            const double v = X.data[i * X.stride + j];
            if (sf->parts) rfx__xsum_add(&sf->xs_sum[j], v);
            else sf->sum[j] += 1.0 * v;
            sf->top[j] = fmax(sf->top[j], fabs(v));
        }
    if (sf->classify)
        for (size_t i = 0; i < X.rows; i++)
            RFX__TRY(class_offer(sf, Y.data[i * Y.stride], row0 + i));
    if (sf->cap)
        for (size_t i = 0; i < X.rows; i++)
            cand_offer(sf, X.data + i * X.stride, Y.data + i * Y.stride, 1, row0 + i);
    return RFX_OK;
}

static rfx_status pass_deviations(src_fit *sf, rfx_cmat X, rfx_cmat Y, uint64_t row0)
{
    if (sf->p->standardize)
        for (size_t i = 0; i < X.rows; i++)
            for (size_t j = 0; j < sf->d; j++) {
                const double x = X.data[i * X.stride + j];
                if (sf->unsafe[j]) {
                    if (sf->parts) rfx__xsum_add(&sf->xs_sum[j], x / sf->top[j]);
                    else sf->msum[j] += 1.0 * (x / sf->top[j]);
                } else {
                    const double v = x - sf->mean[j];
                    if (sf->parts) rfx__xsum_add(&sf->xs_dev[j], v * v);
                    else sf->ss[j] += 1.0 * v * v;
                }
            }
    (void)Y;
    (void)row0;
    return RFX_OK;
}

static rfx_status pass_unsafe(src_fit *sf, rfx_cmat X, rfx_cmat Y, uint64_t row0)
{
    (void)Y;
    (void)row0;
    for (size_t i = 0; i < X.rows; i++)
        for (size_t j = 0; j < sf->d; j++)
            if (sf->unsafe[j]) {
                const double v = X.data[i * X.stride + j] / sf->top[j] - sf->mean[j];
                if (sf->parts) rfx__xsum_add(&sf->xs_dev[j], v * v);
                else sf->ss[j] += 1.0 * v * v;
            }
    return RFX_OK;
}

/* A block standardised into sf->xs (or X itself without a scaler). */
static rfx_status standardized_block(src_fit *sf, rfx_cmat X, rfx_cmat *out)
{
    if (!sf->p->standardize) {
        *out = X;
        return RFX_OK;
    }
    if (X.rows > sf->xs_rows) {
        free(sf->xs);
        sf->xs = NULL;
        RFX__TRY(rfx__alloc(X.rows * sf->d, sizeof(double), (void **)&sf->xs, "fit: block"));
        sf->xs_rows = X.rows;
    }
    for (size_t i = 0; i < X.rows; i++)
        for (size_t j = 0; j < sf->d; j++)
            sf->xs[i * sf->d + j] =
                rfx__standardized(X.data[i * X.stride + j], sf->mean[j], sf->scale[j]);
    *out = rfx_cmat_of(sf->xs, X.rows, sf->d);
    return RFX_OK;
}

/* Parts: the exact sums of d accumulators over every part, as doubles. */
static rfx_status reduce_exact(src_fit *sf, rfx__xsum *acc, double *out)
{
    const rfx_fit_parts *parts = sf->parts;
    const size_t w = RFX__XSUM_DIGITS;
    int64_t *words = NULL;
    RFX__TRY(rfx__alloc(sf->d * w, sizeof *words, (void **)&words, "fit: sums"));
    for (size_t j = 0; j < sf->d; j++) {
        rfx__xsum_normalize(&acc[j]);
        memcpy(words + j * w, acc[j].digit, w * sizeof *words);
    }
    rfx_status st = parts->sum_exact(parts->user, words, sf->d * w);
    sf->shared_failure = st != RFX_OK;
    for (size_t j = 0; j < sf->d && !st; j++) {
        memcpy(acc[j].digit, words + j * w, w * sizeof *words);
        out[j] = rfx__xsum_value(&acc[j]);
    }
    free(words);
    return st;
}

/* Parts, after pass 1: where this part's rows go, all rows, the column
 * sums and magnitudes of all parts. */
static rfx_status reduce_sums(src_fit *sf)
{
    const rfx_fit_parts *parts = sf->parts;
    PART_CALL(sf, parts->offsets(parts->user, sf->n, &sf->first_row, &sf->total));
    RFX__TRY(reduce_exact(sf, sf->xs_sum, sf->sum));
    PART_CALL(sf, parts->max(parts->user, sf->top, sf->d));
    return RFX_OK;
}

static rfx_status std_next(rfx_source *src, rfx_block *out, int *done)
{
    src_fit *sf = src->state;
    RFX__TRY(sf->src->next(sf->src, out, done));
    if (*done) return RFX_OK;
    if (out->cols != sf->d || out->ny != sf->ny)
        return rfx__error(RFX_EDIM, "fit: a source block has %zu columns and %zu targets, the "
                          "first %zu and %zu", out->cols, out->ny, sf->d, sf->ny);
    rfx_cmat Xs;
    RFX__TRY(standardized_block(sf, (rfx_cmat){out->x, out->rows, out->cols, out->stride}, &Xs));
    out->x = Xs.data;
    out->stride = Xs.stride;
    sf->std_row += out->rows;
    if (sf->onehot) {
        RFX__TRY(block_classes(sf, out->y, out->y_stride, out->rows, sf->std_row, 1));
        out->y = sf->yt;
        out->ny = sf->C == 2 ? 1 : sf->C;
        out->y_stride = out->ny;
    }
    return RFX_OK;
}

static rfx_status std_rewind(rfx_source *src)
{
    src_fit *sf = src->state;
    sf->std_row = 0;
    return sf->src->rewind(sf->src);
}

static rfx_status pass_stats(src_fit *sf, rfx_cmat X, rfx_cmat Y, uint64_t row0)
{
    rfx_cmat Xs;
    RFX__TRY(standardized_block(sf, X, &Xs));
    if (sf->onehot) {
        RFX__TRY(block_classes(sf, Y.data, Y.stride, Y.rows, row0, 1));
        Y = rfx_cmat_of(sf->yt, Y.rows, sf->C == 2 ? 1 : sf->C);
    }
    rfx_status st = rfx_stats_add(sf->stats, sf->f, Xs, Y);
    if (st) rfx__error_prefix("source rows from %llu", (unsigned long long)row0);
    return st;
}

static void src_fit_free(src_fit *sf)
{
    free(sf->xs_sum);
    free(sf->sum);
    free(sf->unsafe);
    free(sf->cand);
    free(sf->xsub);
    free(sf->ysub);
    free(sf->xs);
    free(sf->classes);
    free(sf->ysel);
    free(sf->yloo);
    free(sf->xloo);
    free(sf->yt);
    free(sf->yi);
    rfx_stats_free(sf->stats);
}

/* The scaler from the sums, as rfx__standardize_weighted ends. */
static void finish_scaler(src_fit *sf)
{
    const double n = (double)sf->total;
    for (size_t j = 0; j < sf->d; j++) {
        if (sf->unsafe[j]) {
            sf->scale[j] = sqrt(sf->ss[j] / n) * sf->top[j];
            sf->mean[j] *= sf->top[j];
        } else {
            sf->scale[j] = sqrt(sf->ss[j] / n);
        }
        if (!(sf->scale[j] > 0)) sf->scale[j] = 1.0;
    }
}

/* The model on the statistics of all rows: as fit_with (chosen scales,
 * lambda as a grid of one) or as the user's map (lambda as given). */
static rfx_status solve_stats(const rfx_fit_params *p, const rfx_features *f, const rfx_stats *s,
                              int chosen, rfx_model **m, double *score)
{
    if (p->method == RFX_METHOD_BAYES) {
        rfx_bayes_params bp = rfx_bayes_params_default();
        bp.noise_var = p->noise_var;
        bp.prior_var = p->prior_var;
        bp.fit_intercept = p->fit_intercept;
        bp.n_threads = p->features.n_threads;
        RFX__TRY(rfx_bayes_solve(f, s, &bp, m));
        *score = -(*m)->log_evidence / (double)rfx_stats_rows(s);
        return RFX_OK;
    }
    rfx_ridge_params rp = rfx_ridge_params_default();
    rp.fit_intercept = p->fit_intercept;
    rp.n_threads = p->features.n_threads;
    if (p->lambda >= 0 && chosen) {
        rp.select = RFX_SELECT_GCV;
        rp.lambdas = &p->lambda;
        rp.n_lambdas = 1;
    } else if (p->lambda >= 0) {
        rp.lambda = p->lambda;
    } else {
        rp.select = RFX_SELECT_GCV;
    }
    RFX__TRY(rfx_ridge_solve(f, s, &rp, m));
    *score = (*m)->gcv;
    return RFX_OK;
}

/* Pass 4: the statistics of the standardised rows with the map f into
 * sf->stats (in parts, every part's, added by parts->stats). */
static rfx_status stats_pass(src_fit *sf, const rfx_features *f)
{
    const rfx_fit_parts *parts = sf->parts;
    if (!parts) {
        sf->f = f;
        return source_pass(sf, pass_stats, "read: statistics", 0);
    }
    if (rfx__fit_progress(sf->p, "read: statistics", 0.0))
        return rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    rfx_status st = parts->stats(parts->user, sf->stats, f, &sf->std, sf->first_row);
    sf->shared_failure = st != RFX_OK;
    return st;
}

/* Passes 1 to 3: the rows, the classes, the selection rows (when sf->cap)
 * and the scaler; the selection (and scored) rows standardised. */
static rfx_status source_prepare(const rfx_fit_params *params, src_fit *sf, int choose)
{
    const rfx_features_params *fp = &params->features;
    const rfx_fit_parts *parts = sf->parts;
    sf->std.next = std_next; /* the source standardised, for the later passes */
    sf->std.rewind = std_rewind;
    sf->std.destroy = NULL;
    sf->std.state = sf;
    RFX__TRY(source_pass(sf, pass_sums, "read: columns", 1));
    RFX__TRY(alloc_sums(sf)); /* a part without rows */
    const size_t d = sf->d;
    sf->total = sf->n;
    if (parts) RFX__TRY(reduce_sums(sf));
    if (sf->total < 2)
        return rfx__error(RFX_EDIM, "fit: at least 2 rows are needed, got %llu",
                          (unsigned long long)sf->total);
    if (sf->classify) RFX__TRY(finish_classes(sf));
    {
        rfx_features_params chk = *fp;
        if (choose) chk.length_scale = 1.0;
        RFX__TRY(rfx__features_check(&chk, d));
    }
    RFX__TRY(rfx__calloc(d, 1, (void **)&sf->unsafe, "fit: scaler"));
    int any_unsafe = 0;
    for (size_t j = 0; j < d; j++) {
        sf->unsafe[j] = params->standardize && sf->top[j] > 0 &&
                        (sf->top[j] < RFX__SAFE_LO || sf->top[j] > RFX__SAFE_HI);
        any_unsafe |= sf->unsafe[j];
        sf->mean[j] = sf->sum[j] / (double)sf->total;
        if (sf->unsafe[j] && parts) rfx__xsum_init(&sf->xs_sum[j]); /* pass 2: x / top */
    }
    if (sf->cap) RFX__TRY(select_rows(sf));
    if (params->standardize) RFX__TRY(source_pass(sf, pass_deviations, "read: scales", 0));
    if (any_unsafe) {
        if (parts) RFX__TRY(reduce_exact(sf, sf->xs_sum, sf->msum));
        for (size_t j = 0; j < d; j++)
            if (sf->unsafe[j]) sf->mean[j] = sf->msum[j] / (double)sf->total, sf->ss[j] = 0;
        RFX__TRY(source_pass(sf, pass_unsafe, "read: scales", 0));
    }
    if (parts && params->standardize) RFX__TRY(reduce_exact(sf, sf->xs_dev, sf->ss));
    if (params->standardize) finish_scaler(sf);
    if (params->standardize) {
        for (size_t i = 0; i < sf->ns * d; i++)
            sf->xsub[i] = rfx__standardized(sf->xsub[i], sf->mean[i % d], sf->scale[i % d]);
        for (size_t i = 0; i < sf->nloo * d; i++)
            sf->xloo[i] = rfx__standardized(sf->xloo[i], sf->mean[i % d], sf->scale[i % d]);
    }
    return RFX_OK;
}

/* The scaler, into the model. */
static rfx_status keep_scaler(const src_fit *sf, rfx_model *m)
{
    if (!sf->p->standardize) return RFX_OK;
    RFX__TRY(rfx__alloc(sf->d, sizeof(double), (void **)&m->x_mean, "fit: scaler"));
    RFX__TRY(rfx__alloc(sf->d, sizeof(double), (void **)&m->x_scale, "fit: scaler"));
    memcpy(m->x_mean, sf->mean, sf->d * sizeof(double));
    memcpy(m->x_scale, sf->scale, sf->d * sizeof(double));
    return RFX_OK;
}

static rfx_status fit_source(const rfx_fit_params *params, src_fit *sf, rfx_model **out,
                             rfx_fit_report *report)
{
    const rfx_features_params *fp = &params->features;
    const int choose = fp->length_scales == NULL && fp->gamma == 0 && fp->length_scale <= 0;
    const int learn = params->learn_length_scales;
    if (choose || learn) {
        sf->cap = params->select_rows;
        sf->seed = fp->seed;
    }
    RFX__TRY(source_prepare(params, sf, choose));
    const size_t d = sf->d;
    scales sc = scales_start(params);
    rfx_model *m = NULL;
    rfx_features *f = NULL;
    rfx_status st = RFX_OK;
    if (choose || learn) {
        problem sub = {params, rfx_cmat_of(sf->xsub, sf->ns, d),
                       rfx_cmat_of(sf->ysub, sf->ns, sf->ny), NULL};
        st = select_scales(&sub, choose, &sc);
    }
    if (!st && rfx__fit_progress(params, "fit", 0.0))
        st = rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    if (!st) {
        rfx_features_params fq = *fp;
        if (choose || learn) {
            fq.length_scale = learn ? sc.ls0[0] : sc.l;
            fq.length_scales = sc.ls;
            fq.gamma = 0;
        }
        st = rfx_features_create(&fq, d, &f);
    }
    if (!st) st = rfx_stats_create(fp->n_features, sf->ny, &sf->stats);
    if (!st) st = stats_pass(sf, f);
    double score = NAN;
    if (!st) st = solve_stats(params, f, sf->stats, choose || learn, &m, &score);
    rfx_features_free(f);
    if (!st && rfx__fit_progress(params, "fit", 1.0))
        st = rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    if (!st) st = keep_scaler(sf, m);
    if (!st) {
        const double l = choose || learn ? sc.l : m->features->ls[0];
        if (report) fill_report(report, params, m, l, score, &sc);
        *out = m;
        m = NULL;
    }
    rfx_model_free(m);
    free(sc.ls0);
    free(sc.ls);
    return st;
}

/* A classifier from the source (see the top of this part). */
static rfx_status fit_source_classify(const rfx_fit_params *params, src_fit *sf, rfx_model **out,
                                      rfx_fit_report *report)
{
    const rfx_features_params *fp = &params->features;
    const int choose = fp->length_scales == NULL && fp->gamma == 0 && fp->length_scale <= 0;
    const rfx_fit_parts *parts = sf->parts;
    rfx_classify_params cp = rfx__fit_classify_settings(params);
    sf->classify = 1;
    sf->closed = rfx__fit_classify_closed(&cp, 0);
    /* the heap holds the selection rows when they are used, and the
     * least-squares classifier's scored rows */
    sf->cap = rfx__fit_classify_uses_selection(params, &cp, 0) ? params->select_rows : 0;
    if (sf->closed && sf->cap < RFX__LSQ_LOO_ROWS) sf->cap = RFX__LSQ_LOO_ROWS;
    sf->seed = fp->seed;
    RFX__TRY(source_prepare(params, sf, choose));
    const size_t d = sf->d, C = sf->C;
    RFX__TRY(rfx__alloc(sf->ns + 1, sizeof *sf->ysel, (void **)&sf->ysel, "fit: selection"));
    rfx__classify_index(sf->ysub, sf->ns, 1, sf->classes, C, sf->ysel);
    const rfx_cmat Xsel = rfx_cmat_of(sf->xsub, sf->ns, d);
    rfx__cls_choice ch;
    RFX__TRY(rfx__fit_classify_choose(params, Xsel, sf->ysel, NULL, sf->classes, C, &ch));
    if (rfx__fit_progress(params, "fit", 0.0))
        return rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    rfx_features_params ff = *fp;
    if (choose) {
        ff.length_scale = ch.length_scale;
        ff.gamma = 0;
    }
    rfx_features *f = NULL;
    rfx_model *m = NULL;
    RFX__TRY(rfx_features_create(&ff, d, &f));
    rfx_status st = RFX_OK;
    const int given = params->lambda >= 0;
    rfx__lsq_result lr;
    rfx__lsq_factor fac = {0};
    /* refined on one machine only: in parts, no part holds every row */
    const int refines = !parts && rfx__fit_classify_refines(params, 0);
    if (sf->closed && sf->nloo == sf->total) {
        /* every row is a scored row, held: rfx__fit_classify's own call
         * (the dual form when n < D), no pass more */
        st = rfx__classify_lsq(f, rfx_cmat_of(sf->xloo, sf->nloo, d), sf->yloo, sf->classes, C,
                               params->fit_intercept, given ? &cp.lambda : NULL, given ? 1 : 0,
                               fp->n_threads, &lr, &m, refines ? &fac : NULL);
        if (!st) {
            ch.score = lr.error;
            ch.evals += lr.n_lambdas;
        }
        if (!st && refines)
            st = rfx__classify_refine(m, &fac, rfx_cmat_of(sf->xloo, sf->nloo, d), sf->yloo,
                                      fp->seed, fp->n_threads, 0, &ch.refine);
        rfx__lsq_factor_free(&fac);
    } else if (sf->closed) {
        /* the statistics of the +-1 targets, then lambda by the exact LOO
         * errors of the scored rows */
        st = rfx_stats_create(fp->n_features, C == 2 ? 1 : C, &sf->stats);
        sf->onehot = 1;
        if (!st) st = stats_pass(sf, f);
        sf->onehot = 0;
        if (!st)
            st = rfx__classify_lsq_solve(f, sf->stats, rfx_cmat_of(sf->xloo, sf->nloo, d),
                                         sf->yloo, sf->classes, C, params->fit_intercept,
                                         given ? &cp.lambda : NULL, given ? 1 : 0, fp->n_threads,
                                         &lr, &m, NULL);
        if (!st) {
            ch.score = lr.error;
            ch.evals += lr.n_lambdas;
        }
    } else {
        /* the optimizer over the standardised rows */
        cp.lambda = ch.lambda;
        if (parts && !parts->sum) {
            st = rfx__error(RFX_EINVAL, "fit: a classifier of the %s loss in parts needs "
                            "parts->sum", rfx_loss_name(cp.loss));
            sf->shared_failure = 1;
        } else if (parts) {
            rfx_classify_shard shard = {sf->classes, C, parts->sum, parts->user};
            st = rfx_classify_fit_shard(f, &sf->std, &cp, &shard, &m, NULL);
            sf->shared_failure = st != RFX_OK;
        } else {
            st = rfx_classify_fit_source(f, &sf->std, &cp, &m, NULL);
        }
        if (!st && m->loss == RFX_LOSS_SQUARED)
            st = rfx__fit_classify_temperature(m, Xsel, sf->ysel, NULL);
    }
    rfx_features_free(f);
    if (!st && rfx__fit_progress(params, "fit", 1.0))
        st = rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    if (!st) st = keep_scaler(sf, m);
    if (!st) {
        if (report) rfx__fit_classify_report(report, m, &ch);
        *out = m;
        m = NULL;
    }
    rfx_model_free(m);
    return st;
}

rfx_status rfx_model_fit_source(const rfx_fit_params *params, rfx_source *src, rfx_model **out,
                                rfx_fit_report *report)
{
    if (!out) return rfx__error(RFX_EINVAL, "fit: out is NULL");
    if (!src || !src->next || !src->rewind) return rfx__error(RFX_EINVAL, "fit: invalid source");
    RFX__TRY(rfx_fit_params_check(params));
    if (params->method != RFX_METHOD_RIDGE && params->method != RFX_METHOD_BAYES &&
        params->method != RFX_METHOD_CLASSIFY)
        return rfx__error(RFX_EINVAL, "fit: from a source, the methods ridge, bayes and classify "
                          "(%s keeps every row in memory: rfx_model_fit)",
                          rfx_method_name(params->method));
    if (params->sample_weight)
        return rfx__error(RFX_EINVAL, "fit.sample_weight: a source's rows carry no weights");
    src_fit sf;
    memset(&sf, 0, sizeof sf);
    sf.p = params;
    sf.src = src;
    rfx_status st = params->method == RFX_METHOD_CLASSIFY
                        ? fit_source_classify(params, &sf, out, report)
                        : fit_source(params, &sf, out, report);
    src_fit_free(&sf);
    return st;
}

rfx_status rfx_model_fit_parts(const rfx_fit_params *params, rfx_source *src,
                               const rfx_fit_parts *parts, rfx_model **out,
                               rfx_fit_report *report)
{
    if (!out) return rfx__error(RFX_EINVAL, "fit: out is NULL");
    if (!src || !src->next || !src->rewind) return rfx__error(RFX_EINVAL, "fit: invalid source");
    if (!parts || !parts->offsets || !parts->gather || !parts->sum_exact || !parts->max ||
        !parts->stats)
        return rfx__error(RFX_EINVAL, "fit: parts must set every call");
    if (parts->n_parts == 0 || parts->part >= parts->n_parts)
        return rfx__error(RFX_EINVAL, "fit: parts->part %zu of %zu parts", parts->part,
                          parts->n_parts);
    RFX__TRY(rfx_fit_params_check(params));
    if (params->method != RFX_METHOD_RIDGE && params->method != RFX_METHOD_BAYES &&
        params->method != RFX_METHOD_CLASSIFY)
        return rfx__error(RFX_EINVAL, "fit: in parts, the methods ridge, bayes and classify (%s "
                          "keeps every row in memory)", rfx_method_name(params->method));
    if (params->sample_weight)
        return rfx__error(RFX_EINVAL, "fit.sample_weight: a source's rows carry no weights");
    if (parts->n_inputs == 0 || parts->n_targets == 0)
        return rfx__error(RFX_EINVAL, "fit: parts->n_inputs and n_targets must be >= 1");
    src_fit sf;
    memset(&sf, 0, sizeof sf);
    sf.p = params;
    sf.src = src;
    sf.parts = parts;
    sf.d = parts->n_inputs;
    sf.ny = parts->n_targets;
    rfx_status st = params->method == RFX_METHOD_CLASSIFY
                        ? fit_source_classify(params, &sf, out, report)
                        : fit_source(params, &sf, out, report);
    if (st && !sf.shared_failure && parts->fail) {
        /* this part alone failed (its rows): the others hear of it */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", rfx_last_error());
        parts->fail(parts->user, st);
        rfx__error(st, "%s", msg);
    }
    src_fit_free(&sf);
    return st;
}
