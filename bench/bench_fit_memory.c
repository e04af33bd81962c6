/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_fit_memory DATA METHOD D: the in-memory fit that rfx fit streams,
 * for bench/stream.sh to compare with: rfx_data_read, then rfx_model_fit
 * with the command line's defaults (standardised inputs, the length scale
 * chosen on 4000 rows; classify: the least-squares classifier). Prints one line: rows, the seconds of the read and
 * of the fit, and the peak resident memory in MiB.
 */
#include <rfx.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "helpers.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_fit_memory DATA ridge|bayes|classify D\n");
        return 1;
    }
    rfx_read_params rp = rfx_read_params_default();
    rp.target = "-1";
    rfx_fit_params fp = rfx_fit_params_default();
    if (rfx_method_from_name(argv[2], &fp.method) != RFX_OK) {
        fprintf(stderr, "bench_fit_memory: %s\n", rfx_last_error());
        return 1;
    }
    fp.features.n_features = (size_t)strtoull(argv[3], NULL, 10);
    rfx_classify_params cp = rfx_classify_params_default();
    cp.loss = RFX_LOSS_SQUARED; /* rfx fit's default */
    fp.classify = &cp;
    rfx_data *data = NULL;
    rfx_model *m = NULL;
    double t0 = rfx_helper_seconds();
    rfx_status st = rfx_data_read(argv[1], &rp, &data);
    double t1 = rfx_helper_seconds();
    if (!st) st = rfx_model_fit(&fp, rfx_data_x(data), rfx_data_y(data), &m, NULL);
    double t2 = rfx_helper_seconds();
    if (st) {
        fprintf(stderr, "bench_fit_memory: %s\n", rfx_last_error());
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("rows %zu read_s %.3f fit_s %.3f rss_mib %.1f\n", rfx_data_x(data).rows, t1 - t0,
           t2 - t1, (double)ru.ru_maxrss / 1024.0);
    rfx_model_free(m);
    rfx_data_free(data);
    return 0;
}
