/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * table.c - the rows a model reads from DATA (rfx predict and rfx eval):
 * the file is read once, then its columns are matched to the model's
 * inputs by rfx_model_match_columns (by name when both have names, in any
 * order; by position otherwise), and the target column, when there is one,
 * is taken apart.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

void cli_model_rows_free(model_rows *r)
{
    free(r->x);
    free(r->y);
    rfx_data_free(r->data);
    memset(r, 0, sizeof *r);
}

int cli_read_model_rows(const char *path, rfx_read_params rp, const rfx_model *m,
                        const char *target, int need_target, model_rows *out)
{
    rfx_model_info info;
    rfx_data *data = NULL;
    size_t *cols = NULL, tc = SIZE_MAX;
    const char **names = NULL;
    char q[1024];
    int rc = RC_OK;
    memset(out, 0, sizeof *out);
    rp.target = NULL; /* every column as read; the model's schema sorts them */
    rfx_status st = rfx_model_get_info(m, &info);
    if (st == RFX_OK) st = rfx_data_read(path, &rp, &data);
    if (st != RFX_OK) return cli_fail(st);
    rfx_cmat T = rfx_data_x(data);
    const size_t n = T.rows, d = info.n_inputs;
    cols = malloc(d * sizeof *cols);
    names = malloc((T.cols ? T.cols : 1) * sizeof *names);
    if (!cols || !names) {
        cli_say("out of memory for %zu columns", T.cols);
        rc = RC_INTERNAL;
        goto done;
    }
    for (size_t c = 0; c < T.cols; c++) names[c] = rfx_data_name(data, c);
    st = rfx_model_match_columns(m, rfx_data_has_names(data) ? names : NULL, T.cols, target, cols,
                                 &tc);
    if (st != RFX_OK) {
        cli_say("%s: %s", cli_escape(path, q, sizeof q), rfx_last_error());
        rc = cli_exit_code(st);
        goto done;
    }
    if (need_target && tc == SIZE_MAX) {
        cli_say("%s: no target column: the file has the model's %zu inputs and no other column",
                cli_escape(path, q, sizeof q), d);
        rc = RC_DATA;
        goto done;
    }
    int in_place = tc == SIZE_MAX;
    for (size_t j = 0; j < d && in_place; j++) in_place = cols[j] == j;
    if (in_place) {
        out->X = T;
    } else {
        const size_t cells = n * d; /* no overflow: fewer than the table's cells */
        out->x = malloc((cells ? cells : 1) * sizeof *out->x);
        if (!out->x) {
            cli_say("out of memory for %zu x %zu inputs", n, d);
            rc = RC_INTERNAL;
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < d; j++) out->x[i * d + j] = T.data[i * T.stride + cols[j]];
        out->X = (rfx_cmat){ out->x, n, d, d };
    }
    if (tc != SIZE_MAX) {
        out->y = malloc((n ? n : 1) * sizeof *out->y);
        if (!out->y) {
            cli_say("out of memory for %zu targets", n);
            rc = RC_INTERNAL;
            goto done;
        }
        for (size_t i = 0; i < n; i++) out->y[i] = T.data[i * T.stride + tc];
        out->target_name = rfx_data_name(data, tc);
    }
    out->data = data;
    data = NULL;
done:
    free(cols);
    free(names);
    if (rc != RC_OK) {
        free(out->x);
        free(out->y);
        memset(out, 0, sizeof *out);
    }
    rfx_data_free(data);
    return rc;
}
