/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One ridge fit over all ranks' rows (the README's "Distributed fits"):
 *
 *   mpicc examples/distributed.c -lrfx_dist -lrfx -lm -o distributed
 *   mpirun -np 4 ./distributed
 *
 * Each rank makes its own 5000 rows of y = sin(3 x0) + x1 x2 (in a real
 * fit: reads its own part of the data), every rank builds the same feature
 * map from the same seed, the ranks agree on it, accumulate, and rank 0
 * solves and reports. Exit status 0 when the fit explains the rows, 1 on
 * any error (the same error on every rank).
 */
#include <rfx.h>
#include <rfx/dist.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int check(rfx_status st, const char *what)
{
    if (st) fprintf(stderr, "%s: %s\n", what, rfx_last_error());
    return st != RFX_OK;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const size_t n = 5000, d = 3;
    int rank = 0, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* this rank's rows */
    double *X = malloc(n * d * sizeof *X), *y = malloc(n * sizeof *y);
    unsigned long long s = 1234567ull + (unsigned long long)rank;
    for (size_t i = 0; i < n * d; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        X[i] = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
    }
    for (size_t i = 0; i < n; i++)
        y[i] = sin(3 * X[i * d]) + X[i * d + 1] * X[i * d + 2];

    rfx_dist *dist = NULL;
    rfx_features *f = NULL;
    rfx_stats *stats = NULL;
    rfx_model *model = NULL;
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = 512;
    fp.length_scale = 0.7;
    fp.seed = 42;
    failed = check(rfx_dist_create(MPI_COMM_WORLD, NULL, &dist), "rfx_dist_create") ||
             check(rfx_features_create(&fp, d, &f), "rfx_features_create") ||
             /* the same map everywhere: a rank with another seed fails here */
             check(rfx_dist_agree_features(dist, f), "rfx_dist_agree_features") ||
             check(rfx_stats_create(fp.n_features, 1, &stats), "rfx_stats_create") ||
             check(rfx_stats_add(stats, f, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1)),
                   "rfx_stats_add") ||
             /* one MPI reduction: rank 0 now holds every rank's statistics */
             check(rfx_dist_stats_reduce(dist, stats, 0), "rfx_dist_stats_reduce");
    if (!failed && rank == 0) {
        rfx_ridge_params rp = rfx_ridge_params_default();
        rp.select = RFX_SELECT_GCV;
        failed = check(rfx_ridge_solve(f, stats, &rp, &model), "rfx_ridge_solve");
        double *pred = malloc(n * sizeof *pred), sse = 0, ss = 0, mean = 0;
        if (!failed)
            failed = check(rfx_model_predict(model, rfx_cmat_of(X, n, d), rfx_mat_of(pred, n, 1),
                                             rfx_mat_none()),
                           "rfx_model_predict");
        for (size_t i = 0; i < n; i++) mean += y[i] / (double)n;
        for (size_t i = 0; i < n; i++) {
            sse += (y[i] - pred[i]) * (y[i] - pred[i]);
            ss += (y[i] - mean) * (y[i] - mean);
        }
        if (!failed) {
            printf("%d ranks, %zu rows: R^2 on rank 0's rows %.4f\n", rfx_dist_size(dist),
                   rfx_stats_rows(stats), 1 - sse / ss);
            failed = !(1 - sse / ss > 0.99);
        }
        free(pred);
    }
    rfx_model_free(model);
    rfx_stats_free(stats);
    rfx_features_free(f);
    rfx_dist_free(dist);
    free(X);
    free(y);
    MPI_Finalize();
    return failed;
}
