/* SPDX-License-Identifier: BSD-3-Clause */
/* Target transforms: the log and Box-Cox against their formulas, the
 * inverse and its ends, the maximum-likelihood Box-Cox lambda against a
 * brute-force search of the profile likelihood written out here (with the
 * Jacobian term on the raw values), its scale invariance, the names, and
 * the error paths. Model files with transforms are tested in
 * test_modelio. */
#include "rfx.h"
#include "testlib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_names(void)
{
    rfx_target_transform t;
    CHECK(strcmp(rfx_target_transform_name(RFX_TARGET_NONE), "none") == 0);
    CHECK(strcmp(rfx_target_transform_name(RFX_TARGET_LOG), "log") == 0);
    CHECK(strcmp(rfx_target_transform_name(RFX_TARGET_BOXCOX), "boxcox") == 0);
    CHECK_OK(rfx_target_transform_from_name("box-cox", &t));
    CHECK(t == RFX_TARGET_BOXCOX);
    CHECK_OK(rfx_target_transform_from_name("log", &t));
    CHECK(t == RFX_TARGET_LOG);
    CHECK_STATUS(rfx_target_transform_from_name("sqrt", &t), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "none, log or boxcox") != NULL);
}

static void test_formulas(void)
{
    const double y[5] = {0.01, 0.5, 1.0, 3.0, 1e6};
    double z[5], back[5];
    CHECK_OK(rfx_target_forward(RFX_TARGET_LOG, 0, y, 5, z));
    for (int i = 0; i < 5; i++) CHECK(z[i] == log(y[i]));
    CHECK_OK(rfx_target_inverse(RFX_TARGET_LOG, 0, z, 5, back));
    for (int i = 0; i < 5; i++) CHECK_NEAR(back[i], y[i], 1e-15 * y[i]);
    /* lambda 1/2: 2 (sqrt y - 1); lambda -1: 1 - 1/y; lambda 2: (y^2 - 1) / 2 */
    const double lams[3] = {0.5, -1.0, 2.0};
    for (int k = 0; k < 3; k++) {
        CHECK_OK(rfx_target_forward(RFX_TARGET_BOXCOX, lams[k], y, 5, z));
        for (int i = 0; i < 5; i++) {
            const double want = k == 0 ? 2 * (sqrt(y[i]) - 1)
                              : k == 1 ? 1 - 1 / y[i]
                                       : (y[i] * y[i] - 1) / 2;
            CHECK_NEAR(z[i], want, 1e-14 * (1 + fabs(want)));
        }
        CHECK_OK(rfx_target_inverse(RFX_TARGET_BOXCOX, lams[k], z, 5, back));
        for (int i = 0; i < 5; i++) CHECK_NEAR(back[i], y[i], 1e-10 * y[i]);
    }
    /* lambda -> 0 is the log */
    CHECK_OK(rfx_target_forward(RFX_TARGET_BOXCOX, 1e-12, y, 5, z));
    for (int i = 0; i < 5; i++) CHECK_NEAR(z[i], log(y[i]), 1e-10);
    /* in place, and none is the identity */
    double w[5];
    memcpy(w, y, sizeof w);
    CHECK_OK(rfx_target_forward(RFX_TARGET_BOXCOX, 0.5, w, 5, w));
    for (int i = 0; i < 5; i++) CHECK_NEAR(w[i], 2 * (sqrt(y[i]) - 1), 1e-12 * (1 + fabs(w[i])));
    CHECK_OK(rfx_target_forward(RFX_TARGET_NONE, 0, y, 5, z));
    CHECK(memcmp(z, y, sizeof z) == 0);
    /* the inverse outside the range: 1 + lambda z <= 0 */
    const double zo = -3.0;
    double yo;
    CHECK_OK(rfx_target_inverse(RFX_TARGET_BOXCOX, 0.5, &zo, 1, &yo));
    CHECK(yo == 0.0);
    const double zi = 2.0;
    CHECK_OK(rfx_target_inverse(RFX_TARGET_BOXCOX, -1.0, &zi, 1, &yo));
    CHECK(isinf(yo) && yo > 0);
}

static void test_errors(void)
{
    const double y[3] = {1.0, 0.0, 2.0};
    double z[3], lam;
    CHECK_STATUS(rfx_target_forward(RFX_TARGET_LOG, 0, y, 3, z), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "value 1 is 0") != NULL);
    CHECK_OK(rfx_target_forward(RFX_TARGET_NONE, 0, y, 3, z));
    const double yn[2] = {1.0, NAN};
    CHECK_STATUS(rfx_target_forward(RFX_TARGET_NONE, 0, yn, 2, z), RFX_EINVAL);
    CHECK_STATUS(rfx_target_forward((rfx_target_transform)3, 0, y, 3, z), RFX_EINVAL);
    CHECK_STATUS(rfx_target_forward(RFX_TARGET_BOXCOX, NAN, y, 3, z), RFX_EINVAL);
    /* weighted lambda: a value of weight 0 is left out (even <= 0); bad
     * weights and too few positive ones are named */
    const double yw[4] = {1.0, 2.0, -1.0, 3.0}, ww[4] = {1.0, 2.0, 0.0, 1.0};
    const double yk[4] = {1.0, 2.0, 2.0, 3.0};
    double lw = NAN, lk = NAN;
    CHECK_OK(rfx_target_boxcox_lambda_weighted(yw, ww, 4, &lw));
    CHECK_OK(rfx_target_boxcox_lambda(yk, 4, &lk)); /* weight 2 = the value twice */
    CHECK(fabs(lw - lk) < 1e-9);
    const double wbad[4] = {1.0, -1.0, 1.0, 1.0}, wone[4] = {0.0, 0.0, 0.0, 1.0};
    CHECK_STATUS(rfx_target_boxcox_lambda_weighted(yk, wbad, 4, &lam), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "Box-Cox lambda: w[1]") != NULL);
    CHECK_STATUS(rfx_target_boxcox_lambda_weighted(yk, wone, 4, &lam), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "of positive weight") != NULL);
    CHECK_STATUS(rfx_target_boxcox_lambda(y, 3, &lam), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "value 1") != NULL);
    const double same[3] = {2.0, 2.0, 2.0};
    CHECK_STATUS(rfx_target_boxcox_lambda(same, 3, &lam), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "equal") != NULL);
    CHECK_STATUS(rfx_target_boxcox_lambda(same, 1, &lam), RFX_EINVAL);
}

/* The profile log-likelihood on the raw values, written out: z_i = (y_i^l
 * - 1) / l, -(n/2) log(mean (z - zbar)^2) + (l - 1) sum log y_i. */
static double llf(const double *y, size_t n, double l)
{
    double mean = 0, ss = 0, sl = 0;
    for (size_t i = 0; i < n; i++) mean += (pow(y[i], l) - 1) / l;
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        const double e = (pow(y[i], l) - 1) / l - mean;
        ss += e * e;
        sl += log(y[i]);
    }
    return -0.5 * (double)n * log(ss / (double)n) + (l - 1) * sl;
}

static void test_lambda(void)
{
    rfx_test_rng r = {2024};
    const size_t n = 400;
    double *y = malloc(n * sizeof *y), *cy = malloc(n * sizeof *cy);
    /* three shapes: lognormal (lambda near 0), square of a normal (near
     * 1/2), and a left-skewed one (lambda > 1) */
    for (int shape = 0; shape < 3; shape++) {
        for (size_t i = 0; i < n; i++) {
            const double g = rfx_test_normal(&r);
            y[i] = shape == 0 ? exp(0.8 * g) : shape == 1 ? pow(3 + 0.6 * g, 2) : 10 - exp(0.5 * g);
        }
        double lam = NAN;
        CHECK_OK(rfx_target_boxcox_lambda(y, n, &lam));
        /* brute force: the best of a 1e-4 grid over [-3, 3], skipping 0 */
        double best = -3, fbest = -INFINITY;
        for (int k = 0; k <= 60000; k++) {
            const double l = -3 + 1e-4 * k;
            if (fabs(l) < 1e-9) continue;
            const double f = llf(y, n, l);
            if (f > fbest) {
                fbest = f;
                best = l;
            }
        }
        CHECK_NEAR(lam, best, 2e-4);
        CHECK(llf(y, n, lam) >= fbest - 1e-6 * fabs(fbest));
        /* scale-free */
        for (size_t i = 0; i < n; i++) cy[i] = 1000 * y[i];
        double lam2 = NAN;
        CHECK_OK(rfx_target_boxcox_lambda(cy, n, &lam2));
        CHECK_NEAR(lam2, lam, 1e-6);
        if (shape == 0) CHECK(fabs(lam) < 0.3);
        if (shape == 1) CHECK(fabs(lam - 0.5) < 0.3);
        if (shape == 2) CHECK(lam > 1.5);
    }
    free(y);
    free(cy);
}

int main(void)
{
    test_names();
    test_formulas();
    test_errors();
    test_lambda();
    return rfx_test_finish("test_target");
}
