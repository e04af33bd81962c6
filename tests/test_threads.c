/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_threads.c - one model, many callers: 8 pthreads predict with the same
 * model at once (ridge, Bayesian with std, polynomial chaos, a classifier's
 * labels and probabilities), and every thread's results are bitwise those of
 * a serial call. The model is const in rfx_model_predict, so concurrent
 * predictions must neither race nor differ; the ThreadSanitizer build
 * (make build-tsan, RFX_TSAN) runs this test to show that they do not race.
 */
#include "rfx.h"
#include "testlib.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { N_TRAIN = 160, N_TEST = 300, DIN = 3, N_THREADS = 8, N_REPEAT = 3 };

/* What a thread computes: labels or predictions, and std or probabilities. */
typedef enum { OUT_PREDICT, OUT_PROBA } out_kind;

typedef struct job {
    const rfx_model *m;
    out_kind kind;
    const double *X;
    size_t cols2;             /* columns of the second output (0: none)  */
    double *y, *s;            /* this thread's outputs                   */
    pthread_barrier_t *start; /* all threads predict at the same moment  */
    rfx_status status;
} job;

static rfx_status predict(const rfx_model *m, out_kind kind, const double *X, double *y,
                          double *s, size_t cols2)
{
    rfx_cmat Xm = rfx_cmat_of(X, N_TEST, DIN);
    if (kind == OUT_PROBA) return rfx_model_predict_proba(m, Xm, rfx_mat_of(s, N_TEST, cols2));
    return rfx_model_predict(m, Xm, rfx_mat_of(y, N_TEST, 1),
                             cols2 ? rfx_mat_of(s, N_TEST, cols2) : rfx_mat_none());
}

static void *run_job(void *arg)
{
    job *j = arg;
    pthread_barrier_wait(j->start);
    j->status = RFX_OK;
    for (int r = 0; r < N_REPEAT && j->status == RFX_OK; ++r)
        j->status = predict(j->m, j->kind, j->X, j->y, j->s, j->cols2);
    return NULL;
}

/* 8 threads at once against one serial call: statuses OK, bits equal. */
static void check_concurrent(const char *what, const rfx_model *m, out_kind kind, const double *X,
                             size_t cols2)
{
    size_t ny = N_TEST, ns = N_TEST * (cols2 ? cols2 : 1);
    double *ref_y = calloc(ny, sizeof(double)), *ref_s = calloc(ns, sizeof(double));
    double *y = calloc(N_THREADS * ny, sizeof(double)), *s = calloc(N_THREADS * ns, sizeof(double));
    CHECK(ref_y && ref_s && y && s);
    if (!ref_y || !ref_s || !y || !s) goto done;
    CHECK_OK(predict(m, kind, X, ref_y, ref_s, cols2));

    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, N_THREADS);
    pthread_t tid[N_THREADS];
    job jobs[N_THREADS];
    for (int t = 0; t < N_THREADS; ++t) {
        jobs[t] = (job){ m, kind, X, cols2, y + (size_t)t * ny, s + (size_t)t * ns, &start, RFX_OK };
        CHECK(pthread_create(&tid[t], NULL, run_job, &jobs[t]) == 0);
    }
    for (int t = 0; t < N_THREADS; ++t) pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&start);
    for (int t = 0; t < N_THREADS; ++t) {
        CHECK_MSG(jobs[t].status == RFX_OK, "%s, thread %d: %s", what, t,
                  rfx_strerror(jobs[t].status));
        if (kind == OUT_PREDICT)
            CHECK_MSG(memcmp(y + (size_t)t * ny, ref_y, ny * sizeof(double)) == 0,
                      "%s, thread %d: predictions differ from the serial ones", what, t);
        if (cols2)
            CHECK_MSG(memcmp(s + (size_t)t * ns, ref_s, ns * sizeof(double)) == 0,
                      "%s, thread %d: %s differ from the serial ones", what, t,
                      kind == OUT_PROBA ? "probabilities" : "standard deviations");
    }
done:
    free(ref_y);
    free(ref_s);
    free(y);
    free(s);
}

static double X[N_TRAIN * DIN], Y[N_TRAIN], LABELS[N_TRAIN], XT[N_TEST * DIN];

static void make_data(void)
{
    rfx_test_rng r = { 11 };
    for (size_t i = 0; i < N_TRAIN * DIN; ++i) X[i] = 2.0 * rfx_test_uniform(&r) - 1.0;
    for (size_t i = 0; i < N_TEST * DIN; ++i) XT[i] = 2.0 * rfx_test_uniform(&r) - 1.0;
    for (size_t i = 0; i < N_TRAIN; ++i) {
        const double *x = X + i * DIN;
        Y[i] = x[0] * x[0] - x[1] + 0.5 * x[1] * x[2];
        LABELS[i] = (double)((x[0] > 0) + (x[1] > 0.3));
    }
}

static rfx_model *fit(rfx_method method, const double *y)
{
    rfx_fit_params p = rfx_fit_params_default();
    p.method = method;
    p.features.n_features = 64;
    p.features.seed = 5;
    p.features.length_scale = 1.0;
    if (method == RFX_METHOD_BAYES) {
        p.noise_var = 0.01;
        p.prior_var = 1.0;
    } else {
        p.lambda = method == RFX_METHOD_CLASSIFY ? 0.01 : 1e-3;
    }
    rfx_model *m = NULL;
    CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, N_TRAIN, DIN), rfx_cmat_of(y, N_TRAIN, 1), &m, NULL));
    return m;
}

static void test_feature_models(void)
{
    rfx_model *ridge = fit(RFX_METHOD_RIDGE, Y), *bayes = fit(RFX_METHOD_BAYES, Y);
    rfx_model *cls = fit(RFX_METHOD_CLASSIFY, LABELS);
    if (ridge) check_concurrent("ridge", ridge, OUT_PREDICT, XT, 0);
    if (bayes) check_concurrent("bayes with std", bayes, OUT_PREDICT, XT, 1);
    if (cls) {
        check_concurrent("classifier labels", cls, OUT_PREDICT, XT, 0);
        check_concurrent("classifier probabilities", cls, OUT_PROBA, XT, 3);
    }
    rfx_model_free(ridge);
    rfx_model_free(bayes);
    rfx_model_free(cls);
}

static void test_pce_model(void)
{
    rfx_pce_params p = rfx_pce_params_default();
    p.marginals_from_data = 1;
    p.degree = 3;
    rfx_pce *pce = NULL;
    rfx_model *m = NULL;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, N_TRAIN, DIN), Y, &pce));
    if (pce) CHECK_OK(rfx_model_from_pce(pce, &m));
    if (m) check_concurrent("pce", m, OUT_PREDICT, XT, 0);
    rfx_model_free(m);
    rfx_pce_free(pce);
}

int main(void)
{
    make_data();
    RFX_TEST_RUN(test_feature_models);
    RFX_TEST_RUN(test_pce_model);
    return rfx_test_finish("test_threads");
}
