/* SPDX-License-Identifier: BSD-3-Clause */
/* The C side of tests/peer/l1_sklearn.py: reads A and y from .npy files
 * (public API only), runs an l1 fit and writes plain text with 17 digits.
 *
 *   l1_peer_driver lasso A.npy y.npy lambda fit_intercept out.txt
 *       N lines of coefficients, then the intercept
 *   l1_peer_driver cv A.npy y.npy n_lambdas lambda_min_ratio n_folds fit_intercept out.txt
 *       one line "lambda cv_mse" per grid point, then "best <index>"
 *   l1_peer_driver bpdn A.npy y.npy sigma fit_intercept out.txt
 *       N lines of coefficients, the intercept, then "residual <|r|>"
 * lasso and cv take an optional last argument w.npy: the row weights
 * (sample_weight, m x 1).
 * Exit status 0 on success, 1 with a message on stderr otherwise. */
#include "rfx.h"
#include "rfx/l1.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what)
{
    fprintf(stderr, "l1_peer_driver: %s: %s\n", what, rfx_last_error());
    return 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: l1_peer_driver lasso A.npy y.npy lambda fit_intercept out.txt [w.npy]\n"
                    "       l1_peer_driver cv A.npy y.npy n_lambdas ratio n_folds fit_intercept "
                    "out.txt [w.npy]\n"
                    "       l1_peer_driver bpdn A.npy y.npy sigma fit_intercept out.txt\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage();
    const char *mode = argv[1];
    int is_lasso = strcmp(mode, "lasso") == 0, is_cv = strcmp(mode, "cv") == 0,
        is_bpdn = strcmp(mode, "bpdn") == 0;
    if (!((is_lasso || is_bpdn) && argc == 7) && !(is_lasso && argc == 8) &&
        !(is_cv && (argc == 9 || argc == 10)))
        return usage();
    const char *wpath = is_lasso && argc == 8 ? argv[7] : (is_cv && argc == 10 ? argv[9] : NULL);
    rfx_read_params rp = rfx_read_params_default();
    rfx_data *da = NULL, *dy = NULL, *dw = NULL;
    if (rfx_data_read(argv[2], &rp, &da)) return fail(argv[2]);
    if (rfx_data_read(argv[3], &rp, &dy)) return fail(argv[3]);
    if (wpath && rfx_data_read(wpath, &rp, &dw)) return fail(wpath);
    rfx_cmat A = rfx_data_x(da), Y = rfx_data_x(dy);
    if (Y.rows != A.rows || Y.cols != 1) {
        fprintf(stderr, "l1_peer_driver: y is %zu x %zu, expected %zu x 1\n", Y.rows, Y.cols,
                A.rows);
        return 1;
    }
    double *y = malloc(A.rows * sizeof *y), *c = malloc(A.cols * sizeof *c);
    double *w = dw ? malloc(A.rows * sizeof *w) : NULL;
    for (size_t i = 0; i < A.rows; i++) y[i] = Y.data[i * Y.stride];
    rfx_l1_params p = rfx_l1_params_default();
    if (dw) {
        rfx_cmat Wm = rfx_data_x(dw);
        if (Wm.rows != A.rows || Wm.cols != 1) {
            fprintf(stderr, "l1_peer_driver: w is %zu x %zu, expected %zu x 1\n", Wm.rows,
                    Wm.cols, A.rows);
            return 1;
        }
        for (size_t i = 0; i < A.rows; i++) w[i] = Wm.data[i * Wm.stride];
        p.sample_weight = w;
    }
    FILE *out = NULL;
    int rc = 0;
    if (is_lasso || is_bpdn) {
        if (is_lasso) {
            p.lambda = atof(argv[4]);
        } else {
            p.method = RFX_L1_METHOD_BPDN;
            p.sigma = atof(argv[4]);
        }
        p.fit_intercept = atoi(argv[5]);
        double b = 0;
        rfx_l1_report rep;
        if (rfx_l1_fit(&p, A, y, c, &b, &rep)) {
            rc = fail("fit");
            goto done;
        }
        out = fopen(argv[6], "w");
        if (!out) {
            rc = 1;
            goto done;
        }
        for (size_t j = 0; j < A.cols; j++) fprintf(out, "%.17g\n", c[j]);
        fprintf(out, "%.17g\n", b);
        if (is_bpdn) fprintf(out, "residual %.17g\n", rep.residual_norm);
    } else {
        p.n_lambdas = (size_t)atol(argv[4]);
        p.lambda_min_ratio = atof(argv[5]);
        p.n_folds = (size_t)atol(argv[6]);
        p.fit_intercept = atoi(argv[7]);
        size_t n = p.n_lambdas, best = 0;
        double *lam = malloc((n ? n : 1) * sizeof *lam), *mse = malloc((n ? n : 1) * sizeof *mse);
        if (rfx_l1_cv(&p, A, y, lam, mse, &best)) {
            rc = fail("cv");
        } else if ((out = fopen(argv[8], "w")) != NULL) {
            for (size_t t = 0; t < n; t++) fprintf(out, "%.17g %.17g\n", lam[t], mse[t]);
            fprintf(out, "best %zu\n", best);
        } else {
            rc = 1;
        }
        free(lam);
        free(mse);
    }
done:
    if (out && fclose(out) != 0) rc = 1;
    free(y);
    free(c);
    free(w);
    rfx_data_free(da);
    rfx_data_free(dy);
    rfx_data_free(dw);
    return rc;
}
