/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one-call fit of a classifier (rfx_model_fit with
 * RFX_METHOD_CLASSIFY), and its choices that a fit from a row-block source
 * (fit/fit.c) shares: the length scale and lambda on the selection rows,
 * the temperature of the probabilities.
 *
 * Rows are taken by their contents, never their positions
 * (rfx__rows_order, stream 1 of the feature seed): the selection rows are
 * the first select_rows of that order; the least-squares classifier
 * scores its leave-one-out errors on every row up to RFX__LSQ_LOO_ROWS,
 * beyond that on the first RFX__LSQ_LOO_ROWS of the order. A fit from a
 * source keeps the same rows in a bounded heap as they pass, so it makes
 * the same choices.
 */
#include "internal.h"
#include "fit/fit_internal.h"
#include "solvers/classify_internal.h"

#include <math.h>
#include <string.h>

/* The selection of a classifier's length scale and lambda for the losses
 * other than the closed-form squared one: with standardised inputs, the
 * candidate scales are sqrt(d) x 0.05 x 2^i, i = 0..8 (0.05 to 12.8 times
 * sqrt(d)), and the candidate penalties 1e-1, 1e-2, .., 1e-5. Each scale's
 * penalties are one path, fitted with at most 256 features on the
 * training part of the selection rows (shuffled by the seed before the
 * folds are made) from the largest penalty down, each fit starting from
 * the one before (L-BFGS; tolerance at least 1e-4, at most 100
 * iterations), and scored on the rest: the mean log-loss -log p(true
 * class) for the logistic loss, the error rate for the hinge losses, ties
 * of the error rate broken by the mean loss of the validation rows (the
 * margins' hinge or squared hinge, summed over one-vs-rest columns). The
 * scales are independent, so they are fitted side by side, one thread
 * each (the same bits as one after another). The best is the first in the
 * order largest scale, then largest penalty, first (smoother first); when
 * its penalty is on the edge of the grid, the best scale's path is
 * extended by a decade beyond it, up to CLS_EXTEND times per side. */
#define CLS_SELECT_FEATURES 256
#define CLS_GRID 9
#define CLS_EXTEND 2
static const double CLS_LAMBDAS[] = {1e-1, 1e-2, 1e-3, 1e-4, 1e-5};
#define CLS_N_LAMBDAS (sizeof CLS_LAMBDAS / sizeof *CLS_LAMBDAS)
#define CLS_MAX_LAMBDAS (CLS_N_LAMBDAS + 2 * CLS_EXTEND)

/* One thread's workspaces. */
typedef struct cls_work {
    double *wtr, *wva;  /* ns each (with weights)                      */
    double *Xtr, *Xva;  /* ns x d each                                 */
    uint32_t *ytr, *yva; /* ns each                                    */
    double *P;          /* ns x C (probabilities or scores)            */
    double *L;          /* ns predicted labels                         */
} cls_work;

typedef struct cls_select {
    rfx_cmat X;              /* selection rows (standardised)              */
    const uint32_t *y;       /* their classes                              */
    const double *w;         /* their weights, or NULL                     */
    const double *classes;
    size_t C, folds;
    rfx_classify_params cp;  /* the selection fits' settings               */
} cls_select;

/* The validation scores of the path lambdas[0..nl-1] at the features fp
 * (lower is better): score[l], and for the hinge losses a second score
 * for ties in second[l] (else 0). */
static rfx_status cls_score_path(const cls_select *cs, cls_work *wk,
                                 const rfx_features_params *fp, const double *lambdas, size_t nl,
                                 double *score, double *second)
{
    const size_t ns = cs->X.rows, d = cs->X.cols, C = cs->C;
    const size_t k = cs->folds >= 2 ? cs->folds : 1;
    rfx_features *f = NULL;
    rfx_model *models[CLS_MAX_LAMBDAS] = {NULL};
    double total[CLS_MAX_LAMBDAS] = {0}, total2[CLS_MAX_LAMBDAS] = {0};
    double counted = 0; /* the validation rows' weight */
    RFX__TRY(rfx_features_create(fp, d, &f));
    rfx_classify_params cp = cs->cp;
    rfx_status st = RFX_OK;
    for (size_t fold = 0; fold < k && !st; fold++) {
        size_t ntr = 0, nva = 0;
        for (size_t i = 0; i < ns; i++) {
            int val = cs->folds >= 2 ? i % cs->folds == fold : i % 4 == 3;
            double *dst = val ? wk->Xva + nva * d : wk->Xtr + ntr * d;
            memcpy(dst, cs->X.data + i * cs->X.stride, d * sizeof(double));
            if (val) {
                if (cs->w) wk->wva[nva] = cs->w[i];
                wk->yva[nva++] = cs->y[i];
            } else {
                if (cs->w) wk->wtr[ntr] = cs->w[i];
                wk->ytr[ntr++] = cs->y[i];
            }
        }
        if (nva == 0 || ntr < 2) continue;
        cp.sample_weight = cs->w ? wk->wtr : NULL;
        st = rfx__classify_fit_path(f, rfx_cmat_of(wk->Xtr, ntr, d), wk->ytr, cs->classes, C, &cp,
                                    lambdas, nl, models, NULL);
        if (st) break;
        rfx_cmat V = rfx_cmat_of(wk->Xva, nva, d);
        for (size_t l = 0; l < nl && !st; l++) {
            const rfx_model *m = models[l];
            if (cp.loss == RFX_LOSS_LOGISTIC) {
                st = rfx_model_predict_proba(m, V, rfx_mat_of(wk->P, nva, C));
                for (size_t i = 0; i < nva && !st; i++) {
                    double pt = wk->P[i * C + wk->yva[i]];
                    total[l] += (cs->w ? wk->wva[i] : 1.0) * -log(pt > 1e-300 ? pt : 1e-300);
                }
            } else {
                const size_t K = C == 2 ? 1 : C;
                st = rfx_model_predict(m, V, rfx_mat_of(wk->L, nva, 1), rfx_mat_none());
                if (!st) st = rfx_model_decision(m, V, rfx_mat_of(wk->P, nva, K));
                for (size_t i = 0; i < nva && !st; i++) {
                    const double wi = cs->w ? wk->wva[i] : 1.0;
                    total[l] += wi * (wk->L[i] != cs->classes[wk->yva[i]]);
                    for (size_t j = 0; j < K; j++) {
                        int pos = K == 1 ? wk->yva[i] == 1 : wk->yva[i] == j;
                        double h = 1.0 - (pos ? 1.0 : -1.0) * wk->P[i * K + j];
                        if (h > 0) total2[l] += wi * (cp.loss == RFX_LOSS_HINGE ? h : h * h);
                    }
                }
            }
        }
        for (size_t i = 0; i < nva; i++) counted += cs->w ? wk->wva[i] : 1.0;
        for (size_t l = 0; l < nl; l++) {
            rfx_model_free(models[l]);
            models[l] = NULL;
        }
    }
    rfx_features_free(f);
    if (st) return st;
    for (size_t l = 0; l < nl; l++) {
        score[l] = counted > 0 ? total[l] / counted : INFINITY;
        second[l] = counted > 0 ? total2[l] / counted : INFINITY;
    }
    return RFX_OK;
}

/* cls_score_path, an ill-posed candidate (RFX_ENUMERIC) scoring INFINITY:
 * the others decide. */
static rfx_status cls_path(const cls_select *cs, cls_work *wk, const rfx_features_params *fp,
                           const double *lambdas, size_t nl, double *score, double *second)
{
    rfx_status st = cls_score_path(cs, wk, fp, lambdas, nl, score, second);
    if (st == RFX_ENUMERIC) {
        rfx_clear_error();
        for (size_t l = 0; l < nl; l++) score[l] = second[l] = INFINITY;
        st = RFX_OK;
    }
    return st;
}

static rfx_status cls_work_alloc(cls_work *wk, size_t ns, size_t d, size_t C, int weighted)
{
    memset(wk, 0, sizeof *wk);
    double *ws = NULL;
    RFX__TRY(rfx__alloc(ns * (2 * d + C + 1), sizeof *ws, (void **)&ws, "fit: selection"));
    wk->Xtr = ws;
    wk->Xva = ws + ns * d;
    wk->P = ws + 2 * ns * d;
    wk->L = ws + ns * (2 * d + C);
    rfx_status st = rfx__alloc(2 * ns, sizeof *wk->ytr, (void **)&wk->ytr, "fit: selection");
    if (!st) wk->yva = wk->ytr + ns;
    if (!st && weighted) {
        st = rfx__alloc(2 * ns, sizeof *wk->wtr, (void **)&wk->wtr, "fit: selection");
        if (!st) wk->wva = wk->wtr + ns;
    }
    return st;
}

static void cls_work_free(cls_work *wk)
{
    free(wk->Xtr);
    free(wk->ytr);
    free(wk->wtr);
}

/* The least-squares classifier (loss RFX_LOSS_SQUARED, no class weights):
 * every lambda of a length scale is scored at once by its exact
 * leave-one-out error (rfx__classify_lsq: one eigendecomposition per
 * length scale), so a candidate length scale costs about one fit. The
 * length scale is searched on the selection rows with at most 256
 * features, on log2 l - log2 sqrt(d) = t:
 *   - t = -1, 0, 1;
 *   - while the best is the lowest (highest) t tried, the next two
 *     doublings beyond it, within LSQ_K_LO .. LSQ_K_HI;
 *   - then LSQ_REFINE rounds of bisection: the best t +- 1/2, then the
 *     best +- 1/4, +- 1/8 (a final step of 9 % in l).
 * A scale is better when its best lambda makes fewer LOO errors, then a
 * smaller LOO squared error; on a full tie the one tried first stays. The
 * scales of a step are independent, so they are fitted side by side, one
 * thread each: each fit gives the same bits on one thread as on many, so
 * the choice does not depend on the thread count. The final fit chooses
 * lambda again, by LOO on all rows at the full D, and calibrates the
 * probabilities' temperature. */
#define LSQ_SELECT_FEATURES 256
#define LSQ_K_LO (-8)
#define LSQ_K_HI 5
#define LSQ_REFINE 3
#define LSQ_THREADED_ROWS 1024
/* at most 3 + 2 (K_HI - K_LO) + 2 LSQ_REFINE scales are tried */
#define LSQ_MAX_TRIED (3 + 2 * (LSQ_K_HI - LSQ_K_LO) + 2 * LSQ_REFINE)

typedef struct lsq_select {
    const rfx_fit_params *p;
    rfx_cmat X;
    const uint32_t *y;
    const double *classes;
    size_t C, candidates;
    rfx_features_params fp;
    const double *lambdas; /* the given lambda, or NULL to choose */
    /* the scales tried, in order: t, LOO error rate, LOO squared error */
    double t[LSQ_MAX_TRIED], e[LSQ_MAX_TRIED], q[LSQ_MAX_TRIED];
    size_t n_tried;
} lsq_select;

/* One scale's fit on nt threads: the LOO error rate and squared error of
 * its best lambda into *err, *mse, and the lambdas scored into *scored. */
static rfx_status lsq_at(const lsq_select *ls, double l, int nt, double *err, double *mse,
                         size_t *scored)
{
    rfx_features_params sp = ls->fp;
    sp.length_scale = l;
    sp.gamma = 0;
    sp.length_scales = NULL;
    sp.n_threads = nt;
    rfx_features *f = NULL;
    RFX__TRY(rfx_features_create(&sp, ls->X.cols, &f));
    rfx__lsq_result r;
    rfx_status st = rfx__classify_lsq(f, ls->X, ls->y, ls->classes, ls->C, ls->p->fit_intercept,
                                      ls->lambdas, ls->lambdas ? 1 : 0, nt, &r, NULL, NULL);
    rfx_features_free(f);
    *scored = 0;
    if (st == RFX_ENUMERIC) { /* an ill-posed candidate; others decide */
        rfx_clear_error();
        *err = *mse = INFINITY;
        st = RFX_OK;
    } else if (!st) {
        *err = r.error;
        *mse = r.mse;
        *scored = r.n_lambdas;
    }
    return st;
}

static int lsq_less(double e1, double s1, double e2, double s2)
{
    return e1 < e2 || (e1 == e2 && s1 < s2);
}

/* Try the scales t[0..count-1] (count <= 2) side by side; append them to
 * the tried ones. */
static rfx_status lsq_try(lsq_select *ls, const double *t, size_t count)
{
    const double root = sqrt((double)ls->X.cols);
    size_t scored[2] = {0, 0};
    double *e = ls->e + ls->n_tried, *q = ls->q + ls->n_tried;
    if (count == 1 || rfx__threads(ls->fp.n_threads) == 1) {
        /* a scale alone: on the threads when its rows are enough to pay
         * for them (on fewer, one thread is faster) */
        const int nt = ls->X.rows >= LSQ_THREADED_ROWS ? ls->fp.n_threads : 1;
        for (size_t j = 0; j < count; j++)
            RFX__TRY(lsq_at(ls, root * exp2(t[j]), nt, &e[j], &q[j], &scored[j]));
    } else {
        rfx__failure fail;
        rfx__failure_init(&fail);
#pragma omp parallel for num_threads(2) schedule(static, 1)
        for (size_t j = 0; j < count; j++) {
            RFX__SERIAL_BLAS();
            rfx__failure_note(&fail, j, lsq_at(ls, root * exp2(t[j]), 1, &e[j], &q[j], &scored[j]));
        }
        RFX__TRY(rfx__failure_raise(&fail));
    }
    for (size_t j = 0; j < count; j++) {
        ls->t[ls->n_tried++] = t[j];
        ls->candidates += scored[j];
    }
    /* the tried scales against a typical search of about 11 */
    const double tried = (double)ls->n_tried;
    if (rfx__fit_progress(ls->p, "choose length scale", tried / (tried < 11 ? 11 : tried + 1)))
        return rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    return RFX_OK;
}

/* The index of the best scale tried (the first on a full tie). */
static size_t lsq_best(const lsq_select *ls)
{
    size_t b = 0;
    for (size_t i = 1; i < ls->n_tried; i++)
        if (lsq_less(ls->e[i], ls->q[i], ls->e[b], ls->q[b])) b = i;
    return b;
}

/* Choose the length scale (see above) into *best_l. */
static rfx_status lsq_length_scale(lsq_select *ls, double *best_l)
{
    const double start[3] = {-1, 0, 1};
    double lo = -1, hi = 1; /* the range of t tried */
    ls->n_tried = 0;
    RFX__TRY(lsq_try(ls, start, 2));
    RFX__TRY(lsq_try(ls, start + 2, 1));
    for (;;) {
        const double bt = ls->t[lsq_best(ls)];
        double next[2];
        size_t count = 0;
        if (bt == lo && lo > LSQ_K_LO) {
            for (; count < 2 && lo > LSQ_K_LO; count++) next[count] = --lo;
        } else if (bt == hi && hi < LSQ_K_HI) {
            for (; count < 2 && hi < LSQ_K_HI; count++) next[count] = ++hi;
        } else {
            break;
        }
        RFX__TRY(lsq_try(ls, next, count));
    }
    size_t b = lsq_best(ls);
    if (!isfinite(ls->e[b]))
        return rfx__error(RFX_ENUMERIC, "fit: no length scale gave a usable classifier");
    for (int r = 1; r <= LSQ_REFINE; r++) {
        const double h = ldexp(1.0, -r), bt = ls->t[b];
        double next[2];
        size_t count = 0;
        if (bt - h >= lo) next[count++] = bt - h;
        if (bt + h <= hi) next[count++] = bt + h;
        RFX__TRY(lsq_try(ls, next, count));
        b = lsq_best(ls);
    }
    *best_l = sqrt((double)ls->X.cols) * exp2(ls->t[b]);
    if (rfx__fit_progress(ls->p, "choose length scale", 1.0))
        return rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    return RFX_OK;
}

int rfx__fit_classify_closed(const rfx_classify_params *cp, int weighted)
{
    return cp->loss == RFX_LOSS_SQUARED && !cp->class_weights && !cp->balanced && !weighted &&
           cp->optimizer == RFX_OPTIMIZER_AUTO;
}

int rfx__fit_classify_refines(const rfx_fit_params *p, int weighted)
{
    if (rfx__fit_classify_given(p).loss != RFX_LOSS_AUTO) return 0;
    const rfx_classify_params cp = rfx__fit_classify_settings(p);
    return rfx__fit_classify_closed(&cp, weighted);
}

int rfx__fit_classify_uses_selection(const rfx_fit_params *p, const rfx_classify_params *cp,
                                     int weighted)
{
    const rfx_features_params *fp = &p->features;
    const int choose = fp->length_scales == NULL && fp->gamma == 0 && fp->length_scale <= 0;
    if (choose) return 1;
    if (rfx__fit_classify_closed(cp, weighted)) return 0;
    return p->lambda < 0 || cp->loss == RFX_LOSS_SQUARED;
}

rfx_status rfx__fit_classify_choose(const rfx_fit_params *params, rfx_cmat X, const uint32_t *y,
                                    const double *w, const double *classes, size_t C,
                                    rfx__cls_choice *out)
{
    const rfx_features_params *fp = &params->features;
    const int choose = fp->length_scales == NULL && fp->gamma == 0 && fp->length_scale <= 0;
    const int choose_lambda = params->lambda < 0;
    const size_t ns = X.rows, d = X.cols;
    rfx_classify_params cp = rfx__fit_classify_settings(params);
    out->length_scale = fp->length_scale;
    out->lambda = cp.lambda;
    out->score = NAN;
    out->evals = 0;
    memset(&out->refine, 0, sizeof out->refine);
    out->refine.skipped = 1;
    if (rfx__fit_classify_closed(&cp, w != NULL)) {
        if (!choose) return RFX_OK;
        lsq_select ls;
        memset(&ls, 0, sizeof ls);
        ls.p = params;
        ls.classes = classes;
        ls.C = C;
        ls.fp = *fp;
        ls.lambdas = choose_lambda ? NULL : &cp.lambda;
        ls.X = X;
        ls.y = y;
        ls.fp.n_features = fp->n_features < LSQ_SELECT_FEATURES ? fp->n_features
                                                                : LSQ_SELECT_FEATURES;
        if (ls.fp.form == RFX_FORM_COS_SIN) ls.fp.n_features &= ~(size_t)1;
        RFX__TRY(lsq_length_scale(&ls, &out->length_scale));
        out->evals = ls.candidates;
        return RFX_OK;
    }
    if (!choose && !choose_lambda) return RFX_OK;
    cls_select cs;
    memset(&cs, 0, sizeof cs);
    cs.X = X;
    cs.y = y;
    cs.w = w;
    cs.classes = classes;
    cs.C = C;
    cs.folds = params->classify_folds;
    cs.cp = cp;
    if (cs.cp.tol < 1e-4) cs.cp.tol = 1e-4;
    if (cs.cp.max_iter > 100) cs.cp.max_iter = 100;
    const size_t nl = choose ? CLS_GRID : 1;
    const int conc = nl > 1 && rfx__threads(fp->n_threads) > 1 ? 2 : 1;
    cls_work wk[2];
    memset(wk, 0, sizeof wk);
    rfx_status st = RFX_OK;
    for (int t = 0; t < conc && !st; t++) st = cls_work_alloc(&wk[t], ns, d, C, w != NULL);
    rfx_features_params sp[CLS_GRID];
    const double root = sqrt((double)d);
    for (size_t a = 0; a < nl; a++) {
        sp[a] = *fp;
        sp[a].n_features = fp->n_features < CLS_SELECT_FEATURES ? fp->n_features
                                                                : CLS_SELECT_FEATURES;
        if (sp[a].form == RFX_FORM_COS_SIN) sp[a].n_features &= ~(size_t)1;
        if (choose) {
            sp[a].length_scale = root * 0.05 * ldexp(1.0, (int)a);
            sp[a].gamma = 0;
            sp[a].length_scales = NULL;
        }
    }
    /* the grid: each scale's path, CLS_GRID scales two at a time */
    double grid[CLS_N_LAMBDAS];
    const size_t nlam = choose_lambda ? CLS_N_LAMBDAS : 1;
    for (size_t b = 0; b < nlam; b++) grid[b] = choose_lambda ? CLS_LAMBDAS[b] : cp.lambda;
    double sc[CLS_GRID][CLS_MAX_LAMBDAS], sc2[CLS_GRID][CLS_MAX_LAMBDAS];
    for (size_t a0 = 0; a0 < nl && !st; a0 += (size_t)conc) {
        const size_t a1 = a0 + (size_t)conc < nl ? a0 + (size_t)conc : nl;
        if (a1 - a0 == 1) {
            st = cls_path(&cs, &wk[0], &sp[a0], grid, nlam, sc[a0], sc2[a0]);
        } else {
            rfx__failure fail;
            rfx__failure_init(&fail);
#pragma omp parallel for num_threads(2) schedule(static, 1)
            for (size_t a = a0; a < a1; a++) {
                RFX__SERIAL_BLAS();
                cls_select one = cs;
                one.cp.n_threads = 1;
                rfx_features_params p1 = sp[a];
                p1.n_threads = 1;
                rfx__failure_note(&fail, a,
                                  cls_path(&one, &wk[a - a0], &p1, grid, nlam, sc[a], sc2[a]));
            }
            st = rfx__failure_raise(&fail);
        }
        out->evals += (a1 - a0) * nlam;
        if (!st && rfx__fit_progress(params, "choose length scale", (double)a1 / (double)nl))
            st = rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
    }
    /* the best (see above); then the best scale's path extended while its
     * penalty is on an edge */
    double ext[CLS_MAX_LAMBDAS];
    size_t ba = 0, bb = 0, below = 0, above = 0;
    memcpy(ext, grid, nlam * sizeof *grid);
    double best = INFINITY, best2 = INFINITY;
    for (size_t a = nl; a-- > 0 && !st;)
        for (size_t b = 0; b < nlam; b++)
            if (sc[a][b] < best || (sc[a][b] == best && sc2[a][b] < best2)) {
                best = sc[a][b];
                best2 = sc2[a][b];
                ba = a;
                bb = b;
            }
    if (!st && isfinite(best) && choose_lambda) {
        /* the best scale's own path, extended */
        double esc[CLS_MAX_LAMBDAS], esc2[CLS_MAX_LAMBDAS];
        size_t en = nlam, eb = bb;
        memcpy(esc, sc[ba], nlam * sizeof *esc);
        memcpy(esc2, sc2[ba], nlam * sizeof *esc2);
        for (;;) {
            int down = eb == en - 1 && below < CLS_EXTEND;
            int up = eb == 0 && above < CLS_EXTEND && !down;
            if (!down && !up) break;
            if (down) {
                ext[en] = ext[en - 1] / 10;
                below++;
            } else {
                memmove(ext + 1, ext, en * sizeof *ext);
                ext[0] *= 10;
                above++;
            }
            en++;
            st = cls_path(&cs, &wk[0], &sp[ba], ext, en, esc, esc2);
            if (st) break;
            out->evals += en;
            double eb1 = INFINITY, eb2 = INFINITY;
            for (size_t b = 0; b < en; b++)
                if (esc[b] < eb1 || (esc[b] == eb1 && esc2[b] < eb2)) {
                    eb1 = esc[b];
                    eb2 = esc2[b];
                    eb = b;
                }
            best = eb1;
        }
        if (!st) {
            out->lambda = ext[eb];
            if (choose) out->length_scale = sp[ba].length_scale;
        }
    } else if (!st && isfinite(best)) {
        out->lambda = grid[bb];
        if (choose) out->length_scale = sp[ba].length_scale;
    }
    if (!st && !isfinite(best))
        st = rfx__error(RFX_ENUMERIC, "fit: no length scale and lambda gave a usable classifier");
    out->score = best;
    for (int t = 0; t < 2; t++) cls_work_free(&wk[t]);
    return st;
}

rfx_status rfx__fit_classify_temperature(rfx_model *m, rfx_cmat X, const uint32_t *y,
                                         const double *w)
{
    const size_t ns = X.rows, K = m->ny;
    double *S = NULL;
    RFX__TRY(rfx__alloc(ns * K + 1, sizeof *S, (void **)&S, "fit: calibration"));
    /* scores of the standardised rows: the scaler is not set yet */
    rfx_status st = rfx_model_decision(m, X, rfx_mat_of(S, ns, K));
    if (!st) m->noise_var = rfx__classify_temperature_weighted(S, y, w, ns, K);
    free(S);
    return st;
}

void rfx__fit_classify_report(rfx_fit_report *report, const rfx_model *m,
                              const rfx__cls_choice *ch)
{
    memset(report, 0, sizeof *report);
    report->length_scale = m->features->ls[0];
    report->lambda = m->lambda;
    report->score = ch->score;
    report->n_candidates = ch->evals;
    report->learn_score_before = report->learn_score_after = NAN;
    if (!ch->refine.skipped) {
        report->refine_holdout = ch->refine.holdout;
        report->refine_steps = ch->refine.steps;
        report->refine_gained = ch->refine.gained;
        report->refine_lost = ch->refine.lost;
    }
}

/* rfx_model_fit with RFX_METHOD_CLASSIFY: Y (n x 1) holds the labels. */
rfx_status rfx__fit_classify(const rfx_fit_params *params, rfx_cmat X, rfx_cmat Y,
                             rfx_model **out, rfx_fit_report *report)
{
    RFX__TRY(rfx__check_cmat(X, "fit: X"));
    RFX__TRY(rfx__check_cmat(Y, "fit: Y"));
    const size_t n = X.rows, d = X.cols;
    if (d == 0) return rfx__error(RFX_EINVAL, "fit: X has no columns");
    if (Y.rows != n || Y.cols != 1)
        return rfx__error(RFX_EDIM, "fit: a classifier takes one column of labels, Y is %zu x %zu "
                          "for %zu rows of X", Y.rows, Y.cols, n);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "fit: X row %zu, column %zu: %g is not finite", r, c,
                          X.data[r * X.stride + c]);
    const rfx_features_params *fp = &params->features;
    const int choose = fp->length_scales == NULL && fp->gamma == 0 && fp->length_scale <= 0;
    {
        rfx_features_params chk = *fp;
        if (choose) chk.length_scale = 1.0;
        RFX__TRY(rfx__features_check(&chk, d));
    }
    rfx_classify_params cp = rfx__fit_classify_settings(params);
    const double *sw = params->sample_weight; /* all > 0 here (rfx_model_fit) */
    const int closed = rfx__fit_classify_closed(&cp, sw != NULL);

    double *classes = NULL, *mean = NULL, *scale = NULL, *Xs = NULL, *Xsub = NULL, *wsub = NULL;
    double *Xe = NULL;
    uint32_t *y = NULL, *ysub = NULL, *ye = NULL;
    size_t *order = NULL, C = 0;
    rfx_model *m = NULL;
    rfx_features *f = NULL;
    rfx_stats *stats = NULL;
    rfx__lsq_factor fac = {0};
    rfx__cls_choice ch;
    rfx_status st = rfx__classify_classes(Y.data, n, Y.stride, "fit: Y", &classes, &C);
    if (st) return st;
    if (!st) st = rfx__alloc(n, sizeof *y, (void **)&y, "fit: labels");
    if (st) goto done;
    rfx__classify_index(Y.data, n, Y.stride, classes, C, y);
    rfx_cmat Xw = X;
    if (params->standardize) {
        if ((st = rfx__fit_standardize(X, sw, &mean, &scale, &Xs))) goto done;
        Xw = rfx_cmat_of(Xs, n, d);
    }
    /* the rows in a seeded order of their contents: the selection rows are
     * its first select_rows, so that folds of rows sorted or cycling by
     * class still hold every class, and the same rows in another order make
     * the same choices */
    const int uses = rfx__fit_classify_uses_selection(params, &cp, sw != NULL);
    const size_t ns = !uses ? 0 : n > params->select_rows ? params->select_rows : n;
    if (uses || (closed && n > RFX__LSQ_LOO_ROWS)) {
        if ((st = rfx__alloc(n, sizeof *order, (void **)&order, "fit: row order"))) goto done;
        if ((st = rfx__rows_order(X, Y, sw, fp->seed, 1, order))) goto done;
    }
    if ((st = rfx__alloc(ns * d + 1, sizeof *Xsub, (void **)&Xsub, "fit: selection"))) goto done;
    if ((st = rfx__alloc(ns + 1, sizeof *ysub, (void **)&ysub, "fit: selection"))) goto done;
    if (sw && (st = rfx__alloc(ns + 1, sizeof *wsub, (void **)&wsub, "fit: selection")))
        goto done;
    for (size_t i = 0; i < ns; i++) {
        memcpy(Xsub + i * d, Xw.data + order[i] * Xw.stride, d * sizeof *Xsub);
        ysub[i] = y[order[i]];
        if (sw) wsub[i] = sw[order[i]];
    }
    const rfx_cmat Xsel = rfx_cmat_of(Xsub, ns, d);
    if ((st = rfx__fit_classify_choose(params, Xsel, ysub, wsub, classes, C, &ch))) goto done;
    if (rfx__fit_progress(params, "fit", 0.0)) {
        st = rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
        goto done;
    }
    rfx_features_params ff = *fp;
    if (choose) {
        ff.length_scale = ch.length_scale;
        ff.gamma = 0;
    }
    if ((st = rfx_features_create(&ff, d, &f))) goto done;
    if (closed) {
        /* the least-squares classifier: lambda by the exact LOO errors of
         * every row, or of the first RFX__LSQ_LOO_ROWS of the order */
        rfx_cmat Xl = Xw;
        const uint32_t *yl = y;
        if (n > RFX__LSQ_LOO_ROWS) {
            const size_t ne = RFX__LSQ_LOO_ROWS;
            if ((st = rfx__alloc(ne * d, sizeof *Xe, (void **)&Xe, "fit: LOO rows"))) goto done;
            if ((st = rfx__alloc(ne, sizeof *ye, (void **)&ye, "fit: LOO rows"))) goto done;
            for (size_t i = 0; i < ne; i++) {
                memcpy(Xe + i * d, Xw.data + order[i] * Xw.stride, d * sizeof *Xe);
                ye[i] = y[order[i]];
            }
            Xl = rfx_cmat_of(Xe, ne, d);
            yl = ye;
        }
        rfx__lsq_result lr;
        const int given = params->lambda >= 0;
        /* refined when every row is a scored row, as a fit from a source
         * can (it holds those rows alone) */
        const int refine = rfx__fit_classify_refines(params, sw != NULL) && n <= RFX__LSQ_LOO_ROWS;
        if (n <= RFX__LSQ_LOO_ROWS) {
            /* every row scored; the dual form when n < D */
            st = rfx__classify_lsq(f, Xw, y, classes, C, params->fit_intercept,
                                   given ? &cp.lambda : NULL, given ? 1 : 0, fp->n_threads, &lr,
                                   &m, refine ? &fac : NULL);
        } else {
            st = rfx_stats_create(f->D, C == 2 ? 1 : C, &stats);
            if (!st) st = rfx__classify_lsq_add(stats, f, Xw, y, C);
            if (!st)
                st = rfx__classify_lsq_solve(f, stats, Xl, yl, classes, C, params->fit_intercept,
                                             given ? &cp.lambda : NULL, given ? 1 : 0,
                                             fp->n_threads, &lr, &m, NULL);
        }
        if (st) goto done;
        ch.score = lr.error;
        ch.evals += lr.n_lambdas;
        if (refine &&
            (st = rfx__classify_refine(m, &fac, Xw, y, fp->seed, fp->n_threads, 0, &ch.refine)))
            goto done;
    } else {
        cp.lambda = ch.lambda;
        if ((st = rfx__classify_fit_indexed(f, Xw, y, classes, C, &cp, &m, NULL))) goto done;
        if (m->loss == RFX_LOSS_SQUARED &&
            (st = rfx__fit_classify_temperature(m, Xsel, ysub, wsub)))
            goto done;
    }
    if (rfx__fit_progress(params, "fit", 1.0)) {
        st = rfx__error(RFX_ECANCELLED, "fit: cancelled by the progress callback");
        goto done;
    }
    if (params->standardize) {
        m->x_mean = mean;
        m->x_scale = scale;
        mean = scale = NULL;
    }
    if (report) rfx__fit_classify_report(report, m, &ch);
    *out = m;
    m = NULL;
done:
    rfx_model_free(m);
    rfx_features_free(f);
    rfx_stats_free(stats);
    rfx__lsq_factor_free(&fac);
    free(classes);
    free(mean);
    free(scale);
    free(Xs);
    free(Xsub);
    free(wsub);
    free(Xe);
    free(y);
    free(ysub);
    free(ye);
    free(order);
    return st;
}
