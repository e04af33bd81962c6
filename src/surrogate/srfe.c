/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sparse random feature expansions: q-sparse random features, columns
 * normalised on the training rows, coefficients by an l1 program, the
 * unknowns by k-fold cross-validation. See rfx/srfe.h for the method and
 * its sources.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Candidate weight scales (per standardised input) when none is given. */
static const double SCALE_GRID[] = {0.5, 1.0, 2.0};
#define N_SCALES (sizeof SCALE_GRID / sizeof *SCALE_GRID)

/* The default N: N_PER_ROW features per training row, within [N_MIN, N_MAX]
 * (on the G-function, d = 20, m = 800, the error falls from 0.13 at N = 10 m
 * to 0.08 at 20 m and 0.078 at 30 m, with lambda down to 1e-3 lambda_max). */
#define N_PER_ROW 30
#define N_MIN 1000
#define N_MAX 30000

/* GCV lasso paths stop once the selection score has been above its minimum (by
 * more than this factor, which only absorbs rounding) for 5 grid points in a
 * row: the small-lambda end is the slow one, and there, with N > m, GCV
 * can fall again as the fit nears interpolation, where the fits are the
 * worst (on the G-function, d = 20, m = 800, one seed's GCV had its lowest
 * value near 1e-3 lambda_max, with a test error of 0.110, and 0.106 at its
 * first minimum). */
#define PATH_STOP_FACTOR (1.0 + 1e-6)
/* k-fold paths stop later: each fold's path stops on its own held-out
 * error, which is noisy, and the mean over the folds ends where the first
 * fold stops. */
#define KFOLD_STOP_FACTOR 1.5

/* Scale screening: the candidates are scored with N / SCREEN_DIV features,
 * at most SCREEN_MAX unless that is below N / (2 SCREEN_DIV), and at least
 * N_MIN. On the G-function (N = 24000) 3000 features picked the q and the
 * scale that 6000 did, in 2/3 of the time; the screen's fits are kept when
 * they score best, so at small N (borehole, m = 200: N = 6000) the screen
 * keeps N / 4. */
#define SCREEN_DIV 4
#define SCREEN_MAX 3000

/* With the scale chosen, the full map is fitted at the screen's scale and
 * at FULL_SCALE_UP times it, and the better score is kept: the best scale
 * grows with N, so a screen with fewer features prefers too small a scale
 * (on the G-function the screens chose 2 on every seed; with N = 24000,
 * scale 3 had a test error of 0.088 against 0.097 at 2, median of 10
 * seeds, and GCV told them apart; on the SRFE example and borehole, whose
 * best scale is the screen's, GCV keeps it). */
#define FULL_SCALE_UP RFX__SRFE_SCALE_UP

/* A chosen scale at an end of SCALE_GRID widens the grid past that end: up
 * to widen_rounds rounds (default WIDEN_ROUNDS) of WIDEN_PER_ROUND scales,
 * each WIDEN_STEP times further out than the last, while the outermost
 * scores best (by default from 2 up to 128, from 0.5 down to 1/128). The
 * log of the G-function, a sum of terms with a kink, wants fast features:
 * with q = 1 and N = 24000 (m = 800, two seeds) GCV and the test error
 * both fell from scale 3 (0.027) to 20-30 (0.009) and rose beyond. */
#define WIDEN_STEP 2.0
#define WIDEN_ROUNDS 3
#define WIDEN_ROUNDS_MAX 10
#define WIDEN_PER_ROUND 2
_Static_assert(WIDEN_PER_ROUND <= 3, "a widening round fits in the batch of the stages");

/* Candidate q when none is given: Q_FIRST first (with the scales), then the
 * others of Q_GRID that are <= d. */
static const size_t Q_GRID[] = {1, 2, 3};
#define N_QS (sizeof Q_GRID / sizeof *Q_GRID)
#define Q_FIRST 2

rfx_srfe_params rfx_srfe_params_default(void)
{
    rfx_srfe_params p;
    memset(&p, 0, sizeof p);
    p.features = rfx_features_params_default();
    p.features.sparsity = 0; /* choose from {1, 2, 3} */
    p.features.activation = RFX_ACTIVATION_SIN;
    p.features.weights = RFX_WEIGHTS_NORMAL;
    p.features.weight_scale = 0.0; /* choose */
    p.features.n_features = 0;     /* 30 m within [1000, 30000] */
    p.method = RFX_L1_METHOD_LASSO;
    p.lambda = 0.0;
    p.eta = 0.0;
    p.sparsity = 0;
    p.standardize = 1;
    p.n_folds = 5;
    p.n_lambdas = 50;
    p.lambda_min_ratio = 1e-3;
    p.select = RFX_SELECT_GCV;
    p.widen_rounds = WIDEN_ROUNDS;
    return p;
}

/* The features as the fit uses them: weight_scale <= 0 and n_features 0
 * stand for the chosen ones, any valid value. */
static rfx_features_params fit_features(const rfx_srfe_params *p)
{
    rfx_features_params fp = p->features;
    if (fp.weight_scale <= 0) fp.weight_scale = 1.0;
    if (fp.n_features == 0) fp.n_features = 1000;
    return fp;
}

rfx_status rfx_srfe_params_check(const rfx_srfe_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "srfe: params is NULL");
    if ((unsigned)p->method > RFX_L1_METHOD_HTP)
        return rfx__error(RFX_EINVAL, "srfe.method: %d is not an rfx_l1_method", (int)p->method);
    if (!isfinite(p->lambda) || !isfinite(p->eta) || p->eta < 0)
        return rfx__error(RFX_EINVAL, "srfe.lambda / srfe.eta: must be finite (eta >= 0)");
    if (p->n_folds < 2)
        return rfx__error(RFX_EINVAL, "srfe.n_folds: must be >= 2, got %zu", p->n_folds);
    if (p->n_lambdas < 1)
        return rfx__error(RFX_EINVAL, "srfe.n_lambdas: must be >= 1");
    if (p->select != RFX_SELECT_GCV && p->select != RFX_SELECT_KFOLD)
        return rfx__error(RFX_EINVAL, "srfe.select: must be RFX_SELECT_GCV or RFX_SELECT_KFOLD, "
                                      "got %d", (int)p->select);
    if (!(p->lambda_min_ratio > 0 && p->lambda_min_ratio < 1))
        return rfx__error(RFX_EINVAL, "srfe.lambda_min_ratio: must be in (0, 1), got %g",
                          p->lambda_min_ratio);
    if (p->widen_rounds > WIDEN_ROUNDS_MAX)
        return rfx__error(RFX_EINVAL, "srfe.widen_rounds: must be at most %d, got %zu",
                          WIDEN_ROUNDS_MAX, p->widen_rounds);
    rfx_features_params fp = fit_features(p);
    RFX__TRY(rfx__features_check_fields(&fp));
    if (fp.form == RFX_FORM_COS_SIN)
        return rfx__error(RFX_EINVAL, "srfe.features.form: sparse expansions use cos-bias or "
                                      "phase-free (one nonlinearity per column), not cos-sin");
    return RFX_OK;
}

/* What depends on the m x d data, after rfx_srfe_params_check. */
static rfx_status check_params(const rfx_srfe_params *p, size_t m, size_t d)
{
    if (p->select == RFX_SELECT_KFOLD && p->n_folds > m)
        return rfx__error(RFX_EINVAL, "srfe.n_folds: must be in [2, %zu rows], got %zu", m,
                          p->n_folds);
    rfx_features_params fp = fit_features(p);
    return rfx__features_check(&fp, d);
}

/* A = phi(X W^T + b) (m x N) with unit-norm columns; scales their norms.
 * With row weights sv (m values sqrt(v_i), sum v = m; NULL: none) the norms
 * are the weighted ones, sqrt(sum_i v_i a_ij^2): the rows are scaled by
 * sv, normalised, and scaled back. */
static rfx_status design(const rfx_features *f, rfx_cmat X, const double *sv, double *A,
                         double *scales)
{
    const size_t m = X.rows, N = f->D;
    RFX__TRY(rfx_features_transform(f, X, rfx_mat_of(A, m, N)));
    if (sv)
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < N; j++) A[i * N + j] *= sv[i];
    RFX__TRY(rfx_l1_normalize_columns(rfx_mat_of(A, m, N), scales, f->params.n_threads));
    if (sv)
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < N; j++) A[i * N + j] /= sv[i];
    return RFX_OK;
}

/* k-fold CV mean squared error of HTP with sparsity s on A (rows i mod k);
 * with lp->sample_weight (m values) the weighted mean, each fold's fit on
 * its rows' weights. */
static rfx_status htp_cv(const rfx_l1_params *lp, const double *A, const double *y, size_t m,
                         size_t N, size_t k, double *mse)
{
    const double *w = lp->sample_weight;
    rfx_l1_params fp = *lp;
    double *At = NULL, *yt = NULL, *c = NULL, *wt = NULL, err = 0, wsum = 0;
    rfx_status st = rfx__alloc(m * N, sizeof(double), (void **)&At, "srfe: fold matrix");
    if (!st) st = rfx__alloc(m, sizeof(double), (void **)&yt, "srfe: fold targets");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&c, "srfe: coefficients");
    if (!st && w) st = rfx__alloc(m, sizeof(double), (void **)&wt, "srfe: fold weights");
    fp.sample_weight = wt;
    for (size_t fo = 0; fo < k && !st; fo++) {
        size_t mt = 0;
        for (size_t i = 0; i < m; i++) {
            if (i % k == fo) continue;
            memcpy(At + mt * N, A + i * N, N * sizeof *A);
            if (w) wt[mt] = w[i];
            yt[mt++] = y[i];
        }
        double b = 0;
        st = rfx_l1_fit(&fp, rfx_cmat_of(At, mt, N), yt, c, &b, NULL);
        for (size_t i = fo; i < m && !st; i += k) {
            double p = b;
            for (size_t j = 0; j < N; j++) p += A[i * N + j] * c[j];
            err += (w ? w[i] : 1.0) * (y[i] - p) * (y[i] - p);
            wsum += w ? w[i] : 1.0;
        }
    }
    free(At);
    free(yt);
    free(c);
    free(wt);
    if (!st) *mse = w ? err / wsum : err / (double)m;
    return st;
}

/* The selection score of a fit on all m rows: GCV with df = the nonzeros
 * plus the intercept (for HTP its s least-squares terms). */
static double gcv_score(const rfx_l1_report *rep, size_t m)
{
    double slack = 1.0 - (double)(rep->n_nonzero + 1) / (double)m;
    if (!(slack > 0)) return INFINITY;
    double r = rep->residual_norm;
    return r * r / (double)m / (slack * slack);
}

/* One candidate weight scale: the coefficients c and intercept *b0 on the
 * design A (m x N, unit columns), the lasso lambda used, and the selection
 * score (GCV or k-fold MSE; NaN when nothing is to be compared). */
static rfx_status fit_candidate(const rfx_srfe_params *p, rfx_l1_params lp, const double *A,
                                const double *y, size_t m, size_t N, size_t s_htp, int scored,
                                double *c, double *b0, rfx_l1_report *rep, double *score)
{
    const rfx_cmat Am = rfx_cmat_of(A, m, N);
    const int kfold = p->select == RFX_SELECT_KFOLD;
    *score = NAN;
    if (p->method == RFX_L1_METHOD_HTP) {
        lp.method = RFX_L1_METHOD_HTP;
        lp.sparsity = s_htp;
        if (scored && kfold) RFX__TRY(htp_cv(&lp, A, y, m, N, p->n_folds, score));
        RFX__TRY(rfx_l1_fit(&lp, Am, y, c, b0, rep));
        if (scored && !kfold) *score = gcv_score(rep, m);
        return RFX_OK;
    }
    if (p->method == RFX_L1_METHOD_BPDN && p->eta > 0) {
        lp.method = RFX_L1_METHOD_BPDN;
        lp.eta = p->eta;
        RFX__TRY(rfx_l1_fit(&lp, Am, y, c, b0, rep));
        if (scored) *score = gcv_score(rep, m); /* eta fixes the residual: GCV ranks sparsity */
        return RFX_OK;
    }
    lp.method = RFX_L1_METHOD_LASSO;
    if (p->lambda > 0) { /* the given lambda */
        lp.lambda = p->lambda;
        lp.select = RFX_SELECT_NONE;
        RFX__TRY(rfx_l1_fit(&lp, Am, y, c, b0, rep));
        if (scored && kfold) {
            double lam, mse;
            size_t best;
            lp.lambdas = &p->lambda;
            lp.n_lambdas = 1;
            RFX__TRY(rfx_l1_cv(&lp, Am, y, &lam, &mse, &best));
            *score = mse;
        } else if (scored) {
            *score = gcv_score(rep, m);
        }
        return RFX_OK;
    }
    lp.select = kfold ? RFX_SELECT_KFOLD : RFX_SELECT_GCV;
    RFX__TRY(rfx_l1_fit(&lp, Am, y, c, b0, rep));
    *score = rep->cv_mse;
    return RFX_OK;
}

/* One candidate map: its parameters in, its fit out. */
typedef struct srfe_cand {
    rfx_features_params fp; /* the map (n_threads set by the batch)        */
    size_t n_lambdas;       /* of the lasso path                           */
    rfx_features *f;        /* the fitted candidate: map, coefficients,    */
    double *c, *cs, b0;     /* column scales, intercept, report and score  */
    rfx_l1_report rep;
    double score;
} srfe_cand;

static void cand_free(srfe_cand *k)
{
    rfx_features_free(k->f);
    free(k->c);
    free(k->cs);
    k->f = NULL;
    k->c = k->cs = NULL;
}

/* Fit one candidate on Xv (m x d, standardised): its own feature matrix,
 * allocated here and freed on return, and nt threads. sv: the rows' sqrt(v)
 * (sum v = m), or NULL; lp carries the weights themselves. */
static rfx_status cand_fit(const rfx_srfe_params *p, rfx_l1_params lp, rfx_cmat Xv,
                           const double *y, const double *sv, size_t s_htp, int nt,
                           srfe_cand *k)
{
    const size_t m = Xv.rows, N = k->fp.n_features;
    double *A = NULL;
    rfx_features_params fp = k->fp;
    fp.n_threads = nt;
    lp.n_threads = nt;
    lp.n_lambdas = k->n_lambdas;
    rfx_status st = rfx__mul(m, N, &(size_t){0}, "srfe: feature matrix");
    if (!st) st = rfx__alloc(m * N, sizeof(double), (void **)&A, "srfe: feature matrix");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&k->cs, "srfe: column scales");
    if (!st) st = rfx__alloc(N, sizeof(double), (void **)&k->c, "srfe: coefficients");
    if (!st) st = rfx_features_create(&fp, Xv.cols, &k->f);
    if (!st) st = design(k->f, Xv, sv, A, k->cs);
    if (!st)
        st = fit_candidate(p, lp, A, y, m, N, s_htp, 1, k->c, &k->b0, &k->rep, &k->score);
    free(A);
    if (st) cand_free(k);
    return st;
}

/* Fit the candidates k[0..n): concurrently, one per thread, each on one
 * thread (a lasso path is mostly serial work, so this is where two threads
 * halve the time; it also leaves no thread spinning between the path's
 * parallel passes), or a lone candidate with all nt threads. Each fit
 * gives the same bits on any thread, so the result is the thread count's
 * no matter how the candidates are spread. */
static rfx_status cand_batch(const rfx_srfe_params *p, const rfx_l1_params *lp, rfx_cmat Xv,
                             const double *y, const double *sv, size_t s_htp, int nt,
                             srfe_cand *k, size_t n)
{
    if (n == 1 || nt <= 1) {
        for (size_t i = 0; i < n; i++) RFX__TRY(cand_fit(p, *lp, Xv, y, sv, s_htp, nt, k + i));
        return RFX_OK;
    }
    rfx__failure fail;
    rfx__failure_init(&fail);
    const int tn = (size_t)nt < n ? nt : (int)n;
#pragma omp parallel for num_threads(tn) schedule(dynamic, 1)
    for (size_t i = 0; i < n; i++) {
        RFX__SERIAL_BLAS();
        rfx__failure_note(&fail, i, cand_fit(p, *lp, Xv, y, sv, s_htp, 1, k + i));
    }
    rfx_status st = rfx__failure_raise(&fail);
    if (st)
        for (size_t i = 0; i < n; i++) cand_free(k + i);
    return st;
}

rfx_status rfx_srfe_fit(const rfx_srfe_params *params, rfx_cmat X, rfx_cmat Y, rfx_model **out,
                        rfx_srfe_report *report)
{
    if (!out) return rfx__error(RFX_EINVAL, "srfe: out is NULL");
    RFX__TRY(rfx_srfe_params_check(params));
    RFX__TRY(rfx__check_cmat(X, "srfe: X"));
    RFX__TRY(rfx__check_cmat(Y, "srfe: Y"));
    const size_t n_all = X.rows, d = X.cols;
    if (d == 0) return rfx__error(RFX_EINVAL, "srfe: X is %zu x %zu", n_all, d);
    if (n_all < 2) return rfx__error(RFX_EDIM, "srfe: at least 2 rows are needed, got %zu", n_all);
    if (Y.rows != n_all || Y.cols != 1)
        return rfx__error(RFX_EDIM, "srfe: Y must be %zu x 1, got %zu x %zu", n_all, Y.rows,
                          Y.cols);
    const double *w0 = params->sample_weight;
    size_t m = n_all;
    if (w0) {
        RFX__TRY(rfx__check_weights(w0, n_all, "srfe.sample_weight"));
        m = 0;
        for (size_t i = 0; i < n_all; i++) m += w0[i] > 0;
        if (m < 2)
            return rfx__error(RFX_EDIM, "srfe: at least 2 rows of positive weight are needed, "
                                        "got %zu", m);
    }
    RFX__TRY(check_params(params, m, d));
    size_t r, cc;
    if (!rfx__all_finite(X, &r, &cc))
        return rfx__error(RFX_EPARSE, "srfe: X row %zu, column %zu is not finite", r, cc);
    if (!rfx__all_finite(Y, &r, &cc))
        return rfx__error(RFX_EPARSE, "srfe: Y row %zu is not finite", r);

    const rfx_srfe_params *p = params;
    size_t N = p->features.n_features;
    if (N == 0) N = m * N_PER_ROW < N_MIN ? N_MIN : (m * N_PER_ROW > N_MAX ? N_MAX : m * N_PER_ROW);
    const int htp = p->method == RFX_L1_METHOD_HTP;
    const size_t n_scales = p->features.weight_scale > 0 ? 1 : N_SCALES;
    const int nt = rfx__threads(p->features.n_threads);

    double *mean = NULL, *scale = NULL, *Xs = NULL, *y = NULL, *Xp = NULL, *w = NULL, *sv = NULL;
    srfe_cand best, batch[N_SCALES > N_QS ? N_SCALES : N_QS];
    memset(&best, 0, sizeof best);
    memset(batch, 0, sizeof batch);
    size_t nb = 0;
    rfx_model *model = NULL;
    rfx_status st = rfx__alloc(m * d, sizeof(double), (void **)&Xs, "srfe: inputs");
    if (!st) st = rfx__calloc(d, sizeof(double), (void **)&mean, "srfe: scaler");
    if (!st) st = rfx__alloc(d, sizeof(double), (void **)&scale, "srfe: scaler");
    if (!st) st = rfx__alloc(m, sizeof(double), (void **)&y, "srfe: targets");
    if (st) goto done;
    if (w0) {
        /* the rows of positive weight; equal weights are no weights */
        int equal = 1;
        double first = -1;
        for (size_t i = 0; i < n_all; i++)
            if (w0[i] > 0) {
                if (first < 0) first = w0[i];
                equal &= w0[i] == first;
            }
        if (m < n_all) {
            st = rfx__alloc(m * d, sizeof(double), (void **)&Xp, "srfe: weighted rows");
            if (st) goto done;
            for (size_t i = 0, k = 0; i < n_all; i++)
                if (w0[i] > 0) memcpy(Xp + (k++) * d, X.data + i * X.stride, d * sizeof *Xp);
            X = rfx_cmat_of(Xp, m, d);
        }
        if (!equal) {
            st = rfx__alloc(m, sizeof(double), (void **)&w, "srfe: weights");
            if (!st) st = rfx__alloc(m, sizeof(double), (void **)&sv, "srfe: weights");
            if (st) goto done;
            double W = 0;
            for (size_t i = 0, k = 0; i < n_all; i++)
                if (w0[i] > 0) W += (w[k++] = w0[i]);
            for (size_t k = 0; k < m; k++) sv[k] = sqrt((double)m * w[k] / W);
        }
    }
    for (size_t i = 0, k = 0; i < n_all; i++)
        if (!w0 || w0[i] > 0) y[k++] = Y.data[i * Y.stride];
    if (p->standardize) {
        rfx__standardize_weighted(X, w, mean, scale, Xs, d);
    } else {
        for (size_t j = 0; j < d; j++) {
            mean[j] = 0.0;
            scale[j] = 1.0;
        }
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < d; j++) Xs[i * d + j] = X.data[i * X.stride + j];
    }
    rfx_cmat Xv = rfx_cmat_of(Xs, m, d);

    rfx_l1_params lp = rfx_l1_params_default();
    lp.fit_intercept = 1;
    lp.n_folds = p->n_folds <= m ? p->n_folds : m; /* used by k-fold selection only */
    lp.lambda_min_ratio = p->lambda_min_ratio;
    lp.cv_stop_factor = p->select == RFX_SELECT_KFOLD ? KFOLD_STOP_FACTOR : PATH_STOP_FACTOR;
    lp.sample_weight = w;
    size_t s_htp = p->sparsity ? p->sparsity : (m / 2 < N ? m / 2 : N) / 2;
    if (s_htp < 1) s_htp = 1;

    /* The candidates (weight scale, q) are scored on the first N_screen
     * features (row j of a map is drawn from its own stream, so these are
     * the first rows of the full map), in stages whose candidates are
     * fitted concurrently: first the scales at q = 2, then the other q at
     * the best scale (a coordinate search: 5 screens instead of 9). When
     * the best scale is at an end of the grid, the grid is widened past
     * that end, WIDEN_STEP and WIDEN_STEP^2 times further per round, while
     * the outer one of a round scores best. The best candidate is then
     * fitted with all N features, at its scale and (when the scale is
     * chosen) FULL_SCALE_UP times it, and N is the better of N_screen and
     * N by the same score. */
    const int choose_q = p->features.sparsity == 0;
    size_t q_grid[N_QS], n_qs = 0;
    if (choose_q) {
        q_grid[n_qs++] = d < Q_FIRST ? d : Q_FIRST;
        for (size_t i = 0; i < N_QS; i++)
            if (Q_GRID[i] <= d && Q_GRID[i] != q_grid[0]) q_grid[n_qs++] = Q_GRID[i];
    } else {
        q_grid[n_qs++] = p->features.sparsity;
    }
    const size_t n_grid = n_scales + n_qs - 1;
    size_t N_screen = N / SCREEN_DIV;
    if (N_screen > SCREEN_MAX)
        N_screen = N / (2 * SCREEN_DIV) > SCREEN_MAX ? N / (2 * SCREEN_DIV) : SCREEN_MAX;
    if (n_grid <= 1) N_screen = N;
    if (N_screen < N_MIN) N_screen = N < N_MIN ? N : N_MIN;
    const int final = N_screen < N;
    /* with the scale chosen, the full map is also fitted at FULL_SCALE_UP
     * times the screen's scale */
    const int up = final && n_scales > 1;
    const size_t n_full = final ? 1 + (size_t)up : 0;
    /* the fits planned for the progress: the widening's as many as it may
     * take, the rounds it does not take dropped as it stops */
    const size_t rounds = n_scales > 1 ? p->widen_rounds : 0;
    size_t n_fits = n_grid + n_full + rounds * WIDEN_PER_ROUND;
    size_t done_fits = 0, n_screens = 0, widened = 0;
    double outer = 0, step = 1; /* the widening: the last scale tried, the factor */
    enum { STAGE_SCALES, STAGE_QS, STAGE_WIDEN, STAGE_FULL, STAGE_DONE } stage = STAGE_SCALES;
    while (stage != STAGE_DONE) {
        nb = 0;
        const int full = stage == STAGE_FULL;
        if (stage == STAGE_SCALES) {
            for (size_t k = 0; k < n_scales; k++) {
                batch[nb].fp = p->features;
                batch[nb].fp.weight_scale = n_scales > 1 ? SCALE_GRID[k] : p->features.weight_scale;
                batch[nb++].fp.sparsity = q_grid[0];
            }
        } else if (stage == STAGE_QS) {
            for (size_t k = 1; k < n_qs; k++) {
                batch[nb].fp = p->features;
                batch[nb].fp.weight_scale = best.fp.weight_scale;
                batch[nb++].fp.sparsity = q_grid[k];
            }
        } else if (stage == STAGE_WIDEN) {
            for (size_t k = 0; k < WIDEN_PER_ROUND; k++) {
                outer *= step;
                batch[nb].fp = p->features;
                batch[nb].fp.weight_scale = outer;
                batch[nb++].fp.sparsity = best.fp.sparsity;
            }
        } else {
            for (size_t k = 0; k < 1 + (size_t)up; k++) {
                batch[nb].fp = p->features;
                batch[nb].fp.weight_scale = best.fp.weight_scale * (k ? FULL_SCALE_UP : 1.0);
                batch[nb++].fp.sparsity = best.fp.sparsity;
            }
        }
        for (size_t k = 0; k < nb; k++) {
            batch[k].fp.n_features = full || !final ? N : N_screen;
            /* a coarser screen */
            batch[k].n_lambdas = final && !full ? (p->n_lambdas + 1) / 2 : p->n_lambdas;
        }
        if (nb > 0) { /* none in the q stage with q given */
            st = cand_batch(p, &lp, Xv, y, sv, s_htp, nt, batch, nb);
            if (st) goto done;
        }
        /* the full map replaces the screen unless it scores worse (never
         * with a given N: then the full map is what was asked for) */
        const int forced = full && p->features.n_features > 0;
        for (size_t k = 0; k < nb; k++) {
            const double sk = batch[k].score;
            const int keep = full && k == 0 ? forced || !(sk > best.score)
                                            : best.f == NULL || sk < best.score ||
                                                  (forced && !(sk > best.score));
            if (keep) {
                srfe_cand t = best;
                best = batch[k];
                batch[k] = t;
            }
            cand_free(batch + k);
        }
        done_fits += nb;
        if (!full) n_screens += nb;
        nb = 0;
        /* the next stage */
        if (stage == STAGE_SCALES) {
            stage = STAGE_QS;
            if (n_scales > 1) {
                /* an end of the grid: widen past it (after the q stage) */
                outer = best.fp.weight_scale;
                step = outer == SCALE_GRID[N_SCALES - 1] ? WIDEN_STEP
                     : outer == SCALE_GRID[0]            ? 1.0 / WIDEN_STEP
                                                         : 1.0;
            }
        } else if (stage == STAGE_QS || stage == STAGE_WIDEN) {
            /* another round while the outer scale scores best */
            if (stage == STAGE_WIDEN) widened++;
            const int more = step != 1.0 && widened < rounds &&
                             (stage == STAGE_QS || best.fp.weight_scale == outer);
            if (more) {
                stage = STAGE_WIDEN;
            } else {
                n_fits -= (rounds - widened) * WIDEN_PER_ROUND;
                stage = final ? STAGE_FULL : STAGE_DONE;
            }
        } else {
            stage = STAGE_DONE;
        }
        if (p->progress &&
            p->progress(p->progress_user, "srfe candidates",
                        (double)done_fits / (double)n_fits)) {
            st = rfx__error(RFX_ECANCELLED, "srfe: cancelled by the progress callback");
            goto done;
        }
    }
    N = best.fp.n_features;

    st = rfx__model_alloc(htp ? RFX_METHOD_HARFE : RFX_METHOD_SRFE, best.f, 1, 0, &model);
    if (st) goto done;
    best.f = NULL; /* owned by the model */
    for (size_t j = 0; j < N; j++) model->W[j] = best.cs[j] > 0 ? best.c[j] / best.cs[j] : 0.0;
    model->intercept[0] = best.b0;
    model->fit_intercept = 1;
    model->n_train = m;
    model->lambda = htp ? 0.0 : best.rep.lambda;
    if (!isfinite(model->lambda)) model->lambda = 0; /* files want finite values */
    if (p->standardize) {
        model->x_mean = mean;
        model->x_scale = scale;
        mean = scale = NULL;
    }
    if (report) {
        memset(report, 0, sizeof *report);
        report->n_features = N;
        report->weight_scale = best.fp.weight_scale;
        report->lambda = htp ? NAN : best.rep.lambda;
        report->eta = best.rep.residual_norm / sqrt((double)m);
        report->cv_mse = best.score;
        report->n_nonzero = best.rep.n_nonzero;
        report->n_candidates = n_screens;
        report->sparsity = best.fp.sparsity;
    }
    *out = model;
    model = NULL;
done:
    rfx_model_free(model);
    for (size_t k = 0; k < nb; k++) cand_free(batch + k);
    cand_free(&best);
    free(mean);
    free(scale);
    free(Xs);
    free(y);
    free(Xp);
    free(w);
    free(sv);
    return st;
}
