/* SPDX-License-Identifier: BSD-3-Clause */
/* quickstart.c - the C API in one page: features, a Bayesian fit with
 * predictive standard deviations, a model file, and the error model.
 * Build: cc quickstart.c $(pkg-config --cflags --libs rfx) -lm -o quickstart
 * (-lm for its own sin), or find_package(rfx) and rfx::rfx in CMake. */
#include <rfx.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                            \
    do {                                                                       \
        rfx_status st_ = (call);                                               \
        if (st_ != RFX_OK) {                                                   \
            fprintf(stderr, "%s: %s\n", rfx_strerror(st_), rfx_last_error());  \
            return 1;                                                          \
        }                                                                      \
    } while (0)

int main(void)
{
    /* data: y = sin(3 x0) + x1^2 on [-1, 1]^2 plus noise of sd ~0.05 */
    enum { N = 2000, D_IN = 2 };
    static double X[N * D_IN], y[N];
    for (int i = 0; i < N; i++) {
        X[2 * i] = 2.0 * ((i * 7919) % N) / N - 1.0;
        X[2 * i + 1] = 2.0 * ((i * 104729) % N) / N - 1.0;
        y[i] = sin(3 * X[2 * i]) + X[2 * i + 1] * X[2 * i + 1] + 0.07 * sin(12.9898 * i * i);
    }

    /* 1. random Fourier features of a Gaussian kernel, D = 512 */
    rfx_features_params fp = rfx_features_params_default();
    fp.kernel = RFX_KERNEL_GAUSSIAN;
    fp.n_features = 512;
    fp.length_scale = 0.5;
    fp.seed = 42;
    rfx_features *f;
    CHECK(rfx_features_create(&fp, D_IN, &f));

    /* 2. Bayesian regression: noise and prior variances by the evidence */
    rfx_bayes_params bp = rfx_bayes_params_default();
    rfx_model *m;
    CHECK(rfx_bayes_fit(f, rfx_cmat_of(X, N, D_IN), rfx_cmat_of(y, N, 1), &bp, &m));

    /* 3. predict with standard deviations at a new point */
    double x[2] = {0.3, -0.5}, mean, sd;
    CHECK(rfx_model_predict(m, rfx_cmat_of(x, 1, 2), rfx_mat_of(&mean, 1, 1),
                            rfx_mat_of(&sd, 1, 1)));
    printf("f(0.3, -0.5) = %.4f +- %.4f (true %.4f)\n", mean, sd, sin(0.9) + 0.25);

    /* 4. save, load, predict again: bitwise the same */
    CHECK(rfx_model_save(m, "quickstart.rfx"));
    rfx_model *m2;
    CHECK(rfx_model_load("quickstart.rfx", &m2));
    double mean2;
    CHECK(rfx_model_predict(m2, rfx_cmat_of(x, 1, 2), rfx_mat_of(&mean2, 1, 1), rfx_mat_none()));
    printf("reloaded: %s\n", mean2 == mean ? "identical" : "DIFFERENT");

    /* 5. errors are statuses with a message, never a crash */
    double wrong[3] = {1, 2, 3};
    rfx_status st = rfx_model_predict(m, rfx_cmat_of(wrong, 1, 3), rfx_mat_of(&mean, 1, 1),
                                      rfx_mat_none());
    printf("wrong width: %s: %s\n", rfx_strerror(st), rfx_last_error());

    rfx_model_free(m2);
    rfx_model_free(m);
    rfx_features_free(f);
    remove("quickstart.rfx");
    return mean2 == mean && fabs(mean - (sin(0.9) + 0.25)) < 0.05 ? 0 : 1;
}
