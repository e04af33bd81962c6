/* The self-supervised projection (rfx_projected_fit, rfx/projection.h):
 *  - theta_i = 0 removes input i: replacing it by noise leaves every
 *    prediction bitwise unchanged;
 *  - on y = g(x0 + x1) with six irrelevant inputs and k = 1, the swarm puts
 *    far more weight on x0 and x1 than on the rest, and the model's error
 *    on fresh points is compared with the same surrogate on the raw inputs;
 *  - save / load (file and buffer) give bitwise identical predictions;
 *    truncated and corrupted files are refused with RFX_EFORMAT;
 *  - 1 and 2 threads give bitwise identical models;
 *  - every parameter is validated. */
#define _POSIX_C_SOURCE 200809L
#include "rfx.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* y = sin(2 (x0 + x1)) + (x0 + x1)^2 / 2 on rows of U(-1, 1)^d. */
static void g_data(rfx_test_rng *r, size_t n, size_t d, double **X, double **y)
{
    *X = rfx_test_matrix(r, n, d, -1, 1);
    *y = malloc(n * sizeof **y);
    for (size_t i = 0; i < n; i++) {
        double s = (*X)[i * d] + (*X)[i * d + 1];
        (*y)[i] = sin(2 * s) + 0.5 * s * s;
    }
}

static double rel_err(const double *a, const double *b, size_t n)
{
    double se = 0, ss = 0, mu = 0;
    for (size_t i = 0; i < n; i++) mu += b[i];
    mu /= (double)n;
    for (size_t i = 0; i < n; i++) {
        se += (a[i] - b[i]) * (a[i] - b[i]);
        ss += (b[i] - mu) * (b[i] - mu);
    }
    return sqrt(se / ss);
}

static rfx_model *fit_or_null(const rfx_projected_params *p, const double *X, const double *y,
                              size_t m, size_t d, rfx_projected_report *rep)
{
    rfx_model *mod = NULL;
    CHECK_OK(rfx_projected_fit(p, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &mod, rep));
    return mod;
}

/* (1) theta_2 = 0: input 2 replaced by noise changes nothing, bit for bit;
 * and what the model reports about itself. */
static void test_zero_weight(void)
{
    const size_t m = 60, d = 4, n = 25;
    rfx_test_rng r = {11};
    double *X, *y;
    g_data(&r, m, d, &X, &y);
    double *X2 = malloc(m * d * sizeof *X2), *V = rfx_test_matrix(&r, n, d, -1, 1);
    double *V2 = malloc(n * d * sizeof *V2);
    memcpy(X2, X, m * d * sizeof *X);
    memcpy(V2, V, n * d * sizeof *V);
    for (size_t i = 0; i < m; i++) X2[i * d + 2] = 5 * rfx_test_normal(&r);
    for (size_t i = 0; i < n; i++) V2[i * d + 2] = 7 * rfx_test_normal(&r) + 3;
    const double theta[4] = {0.9, 0.6, 0.0, 0.3};
    rfx_projected_params p = rfx_projected_params_default();
    p.theta = theta;
    p.n_components = 2;
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    double th[4];
    rep.theta = th;
    rfx_model *a = fit_or_null(&p, X, y, m, d, &rep), *b = fit_or_null(&p, X2, y, m, d, NULL);
    if (!a || !b) goto done;
    CHECK(rep.n_iterations == 0 && rep.evaluations == 1);
    CHECK(memcmp(th, theta, sizeof th) == 0);
    CHECK(rep.loss >= 0 && rep.loss < 1);
    CHECK(isnan(rep.theta0_loss));
    double ya[25], yb[25];
    CHECK_OK(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1), rfx_mat_none()));
    CHECK_OK(rfx_model_predict(b, rfx_cmat_of(V2, n, d), rfx_mat_of(yb, n, 1), rfx_mat_none()));
    CHECK(memcmp(ya, yb, sizeof ya) == 0);

    /* what the model reports about itself */
    rfx_projected_info info;
    CHECK_OK(rfx_model_projected_info(a, &info));
    CHECK(info.n_components == 2 && info.n_inputs == d && info.n_train == m);
    CHECK(info.standardized == 1 && fabs(info.gamma - 1.0 / d) < 1e-15);
    CHECK(info.surrogate && memcmp(info.theta, theta, sizeof th) == 0);
    CHECK(info.loss == rep.loss);
    rfx_model_info mi;
    CHECK_OK(rfx_model_get_info(a, &mi));
    CHECK(mi.method == RFX_METHOD_PROJECTED && mi.n_inputs == d && mi.n_targets == 1);
    CHECK(mi.n_train == m && mi.standardized == 1 && mi.has_std == 0);
    CHECK(strcmp(rfx_method_name(RFX_METHOD_PROJECTED), "projected") == 0);
    rfx_method meth;
    CHECK_OK(rfx_method_from_name("projected", &meth));
    CHECK(meth == RFX_METHOD_PROJECTED);
done:
    rfx_model_free(a);
    rfx_model_free(b);
    free(X);
    free(X2);
    free(V);
    free(V2);
    free(y);
}

/* (2) y = g(x0 + x1), d = 8, k = 1: the learned theta and the error. */
static void test_learns_relevant_inputs(void)
{
    const size_t m = 120, d = 8, n = 400;
    rfx_test_rng r = {5};
    double *X, *y, *V, *yv;
    g_data(&r, m, d, &X, &y);
    g_data(&r, n, d, &V, &yv);
    rfx_projected_params p = rfx_projected_params_default();
    p.n_components = 1;
    p.n_particles = 8;
    p.iterations = 8;
    p.seed = 3;
    p.n_threads = 1; /* (thread independence: test_threads) */
    double th[8], hist[9];
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    rep.theta = th;
    rep.history = hist;
    rfx_model *mod = fit_or_null(&p, X, y, m, d, &rep);
    rfx_model *raw = NULL;
    if (!mod) goto done;
    CHECK(rep.n_iterations >= 1 && rep.n_iterations <= 8);
    CHECK(rep.evaluations == 8 * (rep.n_iterations + 1));
    for (size_t t = 1; t <= rep.n_iterations; t++) CHECK(hist[t] <= hist[t - 1]);
    CHECK(hist[rep.n_iterations] == rep.loss);
    CHECK(rep.theta0_loss >= hist[0]);
    double rel = (th[0] + th[1]) / 2, irr = 0;
    for (size_t j = 2; j < d; j++) irr += th[j] / (double)(d - 2);
    printf("  theta:");
    for (size_t j = 0; j < d; j++) printf(" %.3f", th[j]);
    printf("\n  loss %.4f (theta_0 %.4f), %zu iterations\n", rep.loss, rep.theta0_loss,
           rep.n_iterations);
    CHECK_MSG(rel > 2 * irr, "relevant mean %g, irrelevant mean %g", rel, irr);
    double *yh = malloc(n * sizeof *yh);
    CHECK_OK(rfx_model_predict(mod, rfx_cmat_of(V, n, d), rfx_mat_of(yh, n, 1), rfx_mat_none()));
    double e_proj = rel_err(yh, yv, n);
    /* the same surrogate (ridge, 200 features, automatic) on the raw inputs */
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_RIDGE;
    fp.features.n_features = 200;
    CHECK_OK(rfx_model_fit(&fp, rfx_cmat_of(X, m, d), rfx_cmat_of(y, m, 1), &raw, NULL));
    double e_raw = NAN;
    if (raw) {
        CHECK_OK(rfx_model_predict(raw, rfx_cmat_of(V, n, d), rfx_mat_of(yh, n, 1),
                                   rfx_mat_none()));
        e_raw = rel_err(yh, yv, n);
    }
    printf("  validation relative L2 error: projected %.4f, raw ridge %.4f\n", e_proj, e_raw);
    CHECK_MSG(e_proj < e_raw, "projected %g, raw %g", e_proj, e_raw);
    free(yh);
done:
    rfx_model_free(mod);
    rfx_model_free(raw);
    free(X);
    free(y);
    free(V);
    free(yv);
}

static int cancel_now(void *user, const char *stage, double fraction)
{
    (void)user;
    (void)stage;
    (void)fraction;
    return 1;
}
/* A small searched model (surrogate given) for the file and thread tests:
 * particles x (iterations + 1) evaluations; a ridge or Bayesian surrogate
 * on 50 features (the default 200 would cost more and test nothing more). */
static rfx_model *small_model(rfx_method surrogate, int n_threads, double *X, double *y,
                              size_t m, size_t d, size_t particles, size_t iterations,
                              double *hist)
{
    rfx_projected_params p = rfx_projected_params_default();
    rfx_fit_params fp = rfx_fit_params_default();
    fp.features.n_features = 50;
    p.fit = &fp;
    p.n_components = 2;
    p.surrogate = surrogate;
    p.n_particles = particles;
    p.iterations = iterations;
    p.patience = 0;
    p.seed = 9;
    p.n_threads = n_threads;
    rfx_projected_report rep;
    memset(&rep, 0, sizeof rep);
    rep.history = hist;
    return fit_or_null(&p, X, y, m, d, &rep);
}

/* (3) save / load round trips and refused files. */
static void test_files(void)
{
    const size_t m = 50, d = 3, n = 30;
    rfx_test_rng r = {21};
    double *X, *y, *V, *yv, hist[2];
    g_data(&r, m, d, &X, &y);
    g_data(&r, n, d, &V, &yv);
    const rfx_method kinds[3] = {RFX_METHOD_RIDGE, RFX_METHOD_BAYES, RFX_METHOD_PCE};
    for (int t = 0; t < 3; t++) {
        rfx_model *a = small_model(kinds[t], 1, X, y, m, d, 2, 1, hist), *b = NULL, *c = NULL;
        if (!a) continue;
        const char *path = rfx_test_tmp("projected.rfx");
        CHECK_OK(rfx_model_save(a, path));
        CHECK_OK(rfx_model_load(path, &b));
        void *buf = NULL;
        size_t len = 0;
        CHECK_OK(rfx_model_save_buffer(a, &buf, &len));
        CHECK_OK(rfx_model_load_buffer(buf, len, &c));
        double ya[30], yb[30], yc[30], sa[30], sb[30];
        CHECK_OK(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1), rfx_mat_none()));
        if (b) CHECK_OK(rfx_model_predict(b, rfx_cmat_of(V, n, d), rfx_mat_of(yb, n, 1),
                                          rfx_mat_none()));
        if (c) CHECK_OK(rfx_model_predict(c, rfx_cmat_of(V, n, d), rfx_mat_of(yc, n, 1),
                                          rfx_mat_none()));
        CHECK(b && memcmp(ya, yb, sizeof ya) == 0);
        CHECK(c && memcmp(ya, yc, sizeof ya) == 0);
        rfx_projected_info ia, ib;
        CHECK_OK(rfx_model_projected_info(a, &ia));
        if (b) {
            CHECK_OK(rfx_model_projected_info(b, &ib));
            CHECK(ib.n_components == 2 && ib.gamma == ia.gamma && ib.loss == ia.loss);
            CHECK(memcmp(ia.theta, ib.theta, d * sizeof(double)) == 0);
            rfx_model_info mi;
            CHECK_OK(rfx_model_get_info(ib.surrogate, &mi));
            CHECK(mi.method == kinds[t] && mi.n_inputs == 2);
        }
        /* std only over a Bayesian surrogate */
        if (kinds[t] == RFX_METHOD_BAYES) {
            CHECK_OK(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1),
                                       rfx_mat_of(sa, n, 1)));
            if (b) CHECK_OK(rfx_model_predict(b, rfx_cmat_of(V, n, d), rfx_mat_of(yb, n, 1),
                                              rfx_mat_of(sb, n, 1)));
            CHECK(b && memcmp(sa, sb, sizeof sa) == 0);
            for (size_t i = 0; i < n; i++) CHECK(sa[i] > 0);
        } else {
            CHECK_STATUS(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1),
                                           rfx_mat_of(sa, n, 1)), RFX_EINVAL);
        }
        /* every truncation is refused */
        rfx_model *z = NULL;
        unsigned char *bytes = buf;
        for (size_t cut = 0; cut < len; cut += 1 + len / 97) {
            CHECK_STATUS(rfx_model_load_buffer(bytes, cut, &z), RFX_EFORMAT);
            CHECK(z == NULL);
        }
        /* a flipped payload byte: the checksum */
        bytes[len / 2] ^= 0x40;
        CHECK_STATUS(rfx_model_load_buffer(bytes, len, &z), RFX_EFORMAT);
        bytes[len / 2] ^= 0x40;
        rfx_buffer_free(buf);
        rfx_model_free(a);
        rfx_model_free(b);
        rfx_model_free(c);
    }
    free(X);
    free(y);
    free(V);
    free(yv);
}

/* (4) the whole fit on 1 and 2 threads: identical history and model. */
static void test_threads(void)
{
    const size_t m = 70, d = 4, n = 20;
    rfx_test_rng r = {33};
    double *X, *y, *V, *yv, h1[4], h2[4];
    g_data(&r, m, d, &X, &y);
    g_data(&r, n, d, &V, &yv);
    rfx_model *a = small_model(RFX_METHOD_RIDGE, 1, X, y, m, d, 4, 3, h1);
    rfx_model *b = small_model(RFX_METHOD_RIDGE, 2, X, y, m, d, 4, 3, h2);
    if (a && b) {
        CHECK(memcmp(h1, h2, sizeof h1) == 0);
        void *ba, *bb;
        size_t la, lb;
        CHECK_OK(rfx_model_save_buffer(a, &ba, &la));
        CHECK_OK(rfx_model_save_buffer(b, &bb, &lb));
        CHECK(la == lb && memcmp(ba, bb, la) == 0);
        rfx_buffer_free(ba);
        rfx_buffer_free(bb);
        double ya[20], yb[20];
        CHECK_OK(rfx_model_predict(a, rfx_cmat_of(V, n, d), rfx_mat_of(ya, n, 1), rfx_mat_none()));
        CHECK_OK(rfx_model_predict(b, rfx_cmat_of(V, n, d), rfx_mat_of(yb, n, 1), rfx_mat_none()));
        CHECK(memcmp(ya, yb, sizeof ya) == 0);
    }
    rfx_model_free(a);
    rfx_model_free(b);
    free(X);
    free(y);
    free(V);
    free(yv);
}

/* (5) every parameter. */
static void test_errors(void)
{
    const size_t m = 20, d = 3;
    rfx_test_rng r = {4};
    double *X, *y;
    g_data(&r, m, d, &X, &y);
    rfx_cmat Xm = rfx_cmat_of(X, m, d), Ym = rfx_cmat_of(y, m, 1);
    rfx_model *mod = NULL;
    rfx_projected_params p = rfx_projected_params_default();
    p.iterations = 1;
    p.n_particles = 2;
#define BAD(field, value, status)                                                     \
    do {                                                                              \
        rfx_projected_params q_ = p;                                                  \
        q_.field = value;                                                             \
        CHECK_STATUS(rfx_projected_fit(&q_, Xm, Ym, &mod, NULL), status);             \
        CHECK(mod == NULL);                                                           \
        CHECK_MSG(strstr(rfx_last_error(), #field) != NULL, "message: %s", rfx_last_error()); \
    } while (0)
    BAD(n_components, 0, RFX_EINVAL);
    BAD(n_components, m, RFX_EINVAL);
    BAD(surrogate, RFX_METHOD_HARFE, RFX_EINVAL);
    BAD(surrogate, (rfx_method)77, RFX_EINVAL);
    BAD(n_particles, 0, RFX_EINVAL);
    BAD(iterations, 0, RFX_EINVAL);
    BAD(n_folds, 1, RFX_EINVAL);
    BAD(n_folds, m + 1, RFX_EINVAL);
    BAD(gamma, -1.0, RFX_EINVAL);
    BAD(gamma, NAN, RFX_EINVAL);
    BAD(gamma, INFINITY, RFX_EINVAL);
    BAD(standardize, 2, RFX_EINVAL);
    BAD(n_threads, -1, RFX_EINVAL);
    const double zero[3] = {0, 0, 0}, big[3] = {0.5, 1.5, 0.5}, nan3[3] = {0.5, NAN, 0.5};
    BAD(theta, zero, RFX_EINVAL);
    BAD(theta, big, RFX_EINVAL);
    BAD(theta, nan3, RFX_EINVAL);
#undef BAD
    CHECK_STATUS(rfx_projected_fit(NULL, Xm, Ym, &mod, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_projected_fit(&p, Xm, Ym, NULL, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_projected_fit(&p, rfx_cmat_of(X, 2, d), rfx_cmat_of(y, 2, 1), &mod, NULL),
                 RFX_EDIM);
    CHECK_STATUS(rfx_projected_fit(&p, Xm, rfx_cmat_of(y, m - 1, 1), &mod, NULL), RFX_EDIM);
    CHECK_STATUS(rfx_projected_fit(&p, Xm, rfx_cmat_of(X, m, 2), &mod, NULL), RFX_EDIM);
    double keep = X[7];
    X[7] = NAN;
    CHECK_STATUS(rfx_projected_fit(&p, Xm, Ym, &mod, NULL), RFX_EPARSE);
    X[7] = keep;
    keep = y[3];
    y[3] = INFINITY;
    CHECK_STATUS(rfx_projected_fit(&p, Xm, Ym, &mod, NULL), RFX_EPARSE);
    y[3] = keep;
    /* a bad surrogate parameter is the surrogate's error, prefixed */
    rfx_srfe_params sp = rfx_srfe_params_default();
    sp.n_lambdas = 0;
    p.surrogate = RFX_METHOD_SRFE;
    p.srfe = &sp;
    CHECK_STATUS(rfx_projected_fit(&p, Xm, Ym, &mod, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "srfe surrogate") != NULL);
    CHECK(mod == NULL);
    /* info of another model, NULLs */
    rfx_projected_info info;
    CHECK_STATUS(rfx_model_projected_info(NULL, &info), RFX_EINVAL);
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_RIDGE;
    fp.features.n_features = 20;
    rfx_model *rm = NULL;
    CHECK_OK(rfx_model_fit(&fp, Xm, Ym, &rm, NULL));
    CHECK_STATUS(rfx_model_projected_info(rm, &info), RFX_EINVAL);
    rfx_model_free(rm);
    /* cancellation through the progress callback */
    p = rfx_projected_params_default();
    p.iterations = 2;
    p.n_particles = 2;
    p.progress = cancel_now;
    CHECK_STATUS(rfx_projected_fit(&p, Xm, Ym, &mod, NULL), RFX_ECANCELLED);
    CHECK(mod == NULL);
    free(X);
    free(y);
}

int main(void)
{
    RFX_TEST_RUN(test_zero_weight);
    RFX_TEST_RUN(test_learns_relevant_inputs);
    RFX_TEST_RUN(test_files);
    RFX_TEST_RUN(test_threads);
    RFX_TEST_RUN(test_errors);
    return rfx_test_finish("test_projected");
}
