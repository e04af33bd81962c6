/* SPDX-License-Identifier: BSD-3-Clause */
/* Learned per-input (ARD) length scales in rfx_model_fit
 * (learn_length_scales = 1):
 *  - on y = f(x0, x1) + noise with four irrelevant inputs x2..x5, the learned
 *    scales of the irrelevant inputs are far larger than those of x0, x1,
 *    and the error on fresh rows is lower than the isotropic fit's;
 *  - the swarm starts at the isotropic scale, so the selection score never
 *    gets worse; with every row and every feature in the selection, the
 *    starting score equals the isotropic fit's own score and the learned
 *    one the final model's (the same fit, evaluated twice);
 *  - learning from given ARD scales starts from exactly those;
 *  - the model keeps the learned scales through save and load;
 *  - bitwise identical results for 1 and 2 threads; progress and
 *    cancellation; every error path. */
#include "internal.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D_IN 6
#define N_TRAIN 300
#define N_TEST 500

/* The target: a function of x0 and x1 only. */
static double truth(const double *x)
{
    return sin(3.0 * x[0]) + 0.5 * cos(2.0 * x[1]) * x[0] + 0.3 * x[1];
}

static void make_data(rfx_test_rng *r, size_t n, double noise, double **X, double **y)
{
    *X = rfx_test_matrix(r, n, D_IN, -1.0, 1.0);
    *y = malloc(n * sizeof **y);
    for (size_t i = 0; i < n; i++) (*y)[i] = truth(*X + i * D_IN) + noise * rfx_test_normal(r);
}

/* relative L2 error of m on (X, y) */
static double rel_error(const rfx_model *m, const double *X, const double *y, size_t n)
{
    double *p = malloc(n * sizeof *p);
    double num = 0, den = 0;
    if (rfx_model_predict(m, rfx_cmat_of(X, n, D_IN), rfx_mat_of(p, n, 1), rfx_mat_none())) {
        free(p);
        return INFINITY;
    }
    for (size_t i = 0; i < n; i++) {
        num += (p[i] - y[i]) * (p[i] - y[i]);
        den += y[i] * y[i];
    }
    free(p);
    return sqrt(num / den);
}

static rfx_fit_params small_params(rfx_method method)
{
    rfx_fit_params p = rfx_fit_params_default();
    p.method = method;
    p.features.n_features = 128;
    p.features.seed = 7;
    p.learn_iterations = 12;
    p.learn_particles = 10;
    return p;
}

typedef struct progress_log {
    int learn_calls, cancel_at;
} progress_log;

static int on_progress(void *user, const char *stage, double frac)
{
    progress_log *log = user;
    (void)frac;
    if (strcmp(stage, "learn length scales") == 0) {
        log->learn_calls++;
        if (log->cancel_at && log->learn_calls >= log->cancel_at) return 1;
    }
    return 0;
}

static void test_learns_relevance(rfx_method method, const double *X, const double *y,
                                  const double *Xt, const double *yt)
{
    const char *name = rfx_method_name(method);
    rfx_cmat Xc = rfx_cmat_of(X, N_TRAIN, D_IN), Yc = rfx_cmat_of(y, N_TRAIN, 1);
    rfx_fit_params p = small_params(method);
    rfx_model *iso = NULL, *ard = NULL;
    rfx_fit_report ri, ra;
    CHECK_OK(rfx_model_fit(&p, Xc, Yc, &iso, &ri));
    CHECK(isnan(ri.learn_score_before) && isnan(ri.learn_score_after));
    CHECK(ri.learn_evaluations == 0);
    progress_log log = {0, 0};
    p.learn_length_scales = 1;
    p.progress = on_progress;
    p.progress_user = &log;
    CHECK_OK(rfx_model_fit(&p, Xc, Yc, &ard, &ra));
    if (!iso || !ard) {
        rfx_model_free(iso);
        rfx_model_free(ard);
        return;
    }
    /* one evaluation at the start, then the swarm: particles x (iterations + 1) */
    CHECK(ra.learn_evaluations == 10 * (12 + 1) + 1);
    CHECK(log.learn_calls == 12 + 1);
    /* the same isotropic choice first */
    CHECK(ra.length_scale == ri.length_scale);
    CHECK(ra.n_candidates == ri.n_candidates);
    /* n <= select_rows and D <= 512: the selection problem is the whole fit,
     * so the starting score is the isotropic model's score and the learned
     * score the final model's */
    CHECK_MSG(ra.learn_score_before == ri.score, "%s: before %.17g, isotropic %.17g", name,
              ra.learn_score_before, ri.score);
    CHECK_MSG(ra.learn_score_after == ra.score, "%s: after %.17g, final %.17g", name,
              ra.learn_score_after, ra.score);
    /* never worse than the start (higher evidence, lower GCV) */
    if (method == RFX_METHOD_BAYES)
        CHECK(ra.learn_score_after >= ra.learn_score_before);
    else
        CHECK(ra.learn_score_after <= ra.learn_score_before);

    rfx_model_info info;
    CHECK_OK(rfx_model_get_info(ard, &info));
    CHECK(info.features.length_scales != NULL);
    if (info.features.length_scales) {
        const double *ls = info.features.length_scales;
        double rel_max = fmax(ls[0], ls[1]), irr_min = INFINITY;
        for (int j = 2; j < D_IN; j++) irr_min = fmin(irr_min, ls[j]);
        printf("%s: learned scales", name);
        for (int j = 0; j < D_IN; j++) printf(" %.3g", ls[j]);
        printf(" (isotropic %.3g); min irrelevant / max relevant = %.3g\n", ri.length_scale,
               irr_min / rel_max);
        CHECK_MSG(irr_min > 3.0 * rel_max, "%s: irrelevant scales not much larger (%g vs %g)",
                  name, irr_min, rel_max);
        /* every scale inside the documented box around the isotropic one */
        for (int j = 0; j < D_IN; j++)
            CHECK(ls[j] >= ri.length_scale * exp(-3.0) * (1 - 1e-12) &&
                  ls[j] <= ri.length_scale * exp(4.0) * (1 + 1e-12));
    }
    double ei = rel_error(iso, Xt, yt, N_TEST), ea = rel_error(ard, Xt, yt, N_TEST);
    printf("%s: validation relative L2 error isotropic %.4f, learned %.4f (ratio %.2f); "
           "score %.5g -> %.5g\n",
           name, ei, ea, ei / ea, ra.learn_score_before, ra.learn_score_after);
    CHECK_MSG(ea < 0.7 * ei, "%s: learned %g not clearly below isotropic %g", name, ea, ei);

    /* the learned scales survive save and load; predictions are bitwise equal */
    void *buf = NULL;
    size_t len = 0;
    rfx_model *back = NULL;
    CHECK_OK(rfx_model_save_buffer(ard, &buf, &len));
    CHECK_OK(rfx_model_load_buffer(buf, len, &back));
    rfx_buffer_free(buf);
    if (back) {
        rfx_model_info bi;
        CHECK_OK(rfx_model_get_info(back, &bi));
        CHECK(bi.features.length_scales != NULL &&
              memcmp(bi.features.length_scales, info.features.length_scales,
                     D_IN * sizeof(double)) == 0);
        double p1[N_TEST], p2[N_TEST];
        CHECK_OK(rfx_model_predict(ard, rfx_cmat_of(Xt, N_TEST, D_IN), rfx_mat_of(p1, N_TEST, 1),
                                   rfx_mat_none()));
        CHECK_OK(rfx_model_predict(back, rfx_cmat_of(Xt, N_TEST, D_IN),
                                   rfx_mat_of(p2, N_TEST, 1), rfx_mat_none()));
        CHECK(memcmp(p1, p2, sizeof p1) == 0);
    }
    rfx_model_free(back);
    rfx_model_free(iso);
    rfx_model_free(ard);
}

/* Learning from given ARD scales starts there: the starting score is that
 * of a plain fit with those scales. */
static void test_from_given_scales(const double *X, const double *y)
{
    rfx_cmat Xc = rfx_cmat_of(X, N_TRAIN, D_IN), Yc = rfx_cmat_of(y, N_TRAIN, 1);
    const double given[D_IN] = {0.8, 1.1, 3.0, 2.0, 5.0, 1.5};
    rfx_fit_params p = small_params(RFX_METHOD_BAYES);
    p.features.length_scales = given;
    p.learn_iterations = 3;
    p.learn_particles = 4;
    rfx_model *plain = NULL, *learned = NULL;
    rfx_fit_report rp, rl;
    CHECK_OK(rfx_model_fit(&p, Xc, Yc, &plain, &rp));
    p.learn_length_scales = 1;
    CHECK_OK(rfx_model_fit(&p, Xc, Yc, &learned, &rl));
    CHECK(rl.n_candidates == 0 && rl.learn_evaluations == 4 * 4 + 1);
    CHECK_MSG(rl.learn_score_before == rp.score, "before %.17g, plain %.17g",
              rl.learn_score_before, rp.score);
    CHECK(rl.learn_score_after >= rl.learn_score_before && rl.learn_score_after == rl.score);
    rfx_model_free(plain);
    rfx_model_free(learned);
}

/* The same fit with 1 and 2 threads: bitwise equal scales, weights, report. */
static void test_threads(const double *X, const double *y)
{
    rfx_cmat Xc = rfx_cmat_of(X, N_TRAIN, D_IN), Yc = rfx_cmat_of(y, N_TRAIN, 1);
    rfx_model *m[2] = {NULL, NULL};
    rfx_fit_report r[2];
    for (int t = 0; t < 2; t++) {
        rfx_fit_params p = small_params(RFX_METHOD_BAYES);
        p.learn_length_scales = 1;
        p.learn_iterations = 4;
        p.learn_particles = 6;
        p.features.n_threads = t + 1;
        CHECK_OK(rfx_model_fit(&p, Xc, Yc, &m[t], &r[t]));
    }
    if (m[0] && m[1]) {
        rfx_model_info a, b;
        CHECK_OK(rfx_model_get_info(m[0], &a));
        CHECK_OK(rfx_model_get_info(m[1], &b));
        CHECK(memcmp(a.features.length_scales, b.features.length_scales, D_IN * sizeof(double)) ==
              0);
        rfx_cmat wa = rfx_model_weights(m[0]), wb = rfx_model_weights(m[1]);
        CHECK(wa.rows == wb.rows && memcmp(wa.data, wb.data, wa.rows * sizeof(double)) == 0);
        CHECK(r[0].learn_score_after == r[1].learn_score_after);
        CHECK(r[0].score == r[1].score);
    }
    rfx_model_free(m[0]);
    rfx_model_free(m[1]);
}

static void test_errors(const double *X, const double *y)
{
    rfx_cmat Xc = rfx_cmat_of(X, N_TRAIN, D_IN), Yc = rfx_cmat_of(y, N_TRAIN, 1);
    rfx_model *sentinel = (rfx_model *)&sentinel, *m = sentinel;
#define BAD(setup, needle)                                                                   \
    do {                                                                                     \
        rfx_fit_params p = small_params(RFX_METHOD_BAYES);                                   \
        p.learn_length_scales = 1;                                                           \
        setup;                                                                               \
        CHECK_STATUS(rfx_model_fit(&p, Xc, Yc, &m, NULL), RFX_EINVAL);                       \
        CHECK_MSG(strstr(rfx_last_error(), needle) != NULL, "message '%s' lacks '%s'",       \
                  rfx_last_error(), needle);                                                 \
        CHECK(m == sentinel);                                                                \
    } while (0)
    BAD(p.learn_length_scales = 2, "fit.learn_length_scales: must be 0 or 1, got 2");
    BAD(p.learn_length_scales = -1, "fit.learn_length_scales");
    BAD(p.method = RFX_METHOD_SRFE, "fit.learn_length_scales: for the bayes and ridge methods");
    BAD(p.method = RFX_METHOD_HARFE, "not harfe");
    BAD(p.learn_iterations = 0, "fit.learn_iterations: must be >= 1");
#undef BAD
    /* learn_iterations = 0 is fine when nothing is learned */
    {
        rfx_fit_params p = small_params(RFX_METHOD_RIDGE);
        p.learn_iterations = 0;
        rfx_model *ok = NULL;
        CHECK_OK(rfx_model_fit(&p, Xc, Yc, &ok, NULL));
        rfx_model_free(ok);
    }
    /* cancellation from inside the swarm */
    {
        rfx_fit_params p = small_params(RFX_METHOD_BAYES);
        progress_log log = {0, 3};
        p.learn_length_scales = 1;
        p.progress = on_progress;
        p.progress_user = &log;
        CHECK_STATUS(rfx_model_fit(&p, Xc, Yc, &m, NULL), RFX_ECANCELLED);
        CHECK(m == sentinel);
        CHECK(log.learn_calls == 3);
    }
}

int main(void)
{
    rfx_test_rng r = {2024};
    double *X, *y, *Xt, *yt;
    make_data(&r, N_TRAIN, 0.05, &X, &y);
    make_data(&r, N_TEST, 0.0, &Xt, &yt);
    test_learns_relevance(RFX_METHOD_BAYES, X, y, Xt, yt);
    test_learns_relevance(RFX_METHOD_RIDGE, X, y, Xt, yt);
    test_from_given_scales(X, y);
    test_threads(X, y);
    test_errors(X, y);
    free(X);
    free(y);
    free(Xt);
    free(yt);
    return rfx_test_finish("test_ard");
}
