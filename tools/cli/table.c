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

/* Match a table's ncols columns (named by name(table, c) when has_names)
 * to the model's inputs: cols (d) and *tc (the target's column, or
 * SIZE_MAX). RC_OK, or the exit code after a message naming path. */
static int match_columns(const char *path, const rfx_model *m, size_t ncols, int has_names,
                         const char *(*name)(const void *table, size_t c), const void *table,
                         const char *target, int need_target, size_t *cols, size_t *tc)
{
    rfx_model_info info;
    char q[1024];
    rfx_status st = rfx_model_get_info(m, &info);
    if (st != RFX_OK) return cli_fail(st);
    const char **names = malloc((ncols ? ncols : 1) * sizeof *names);
    if (!names) {
        cli_say("out of memory for %zu columns", ncols);
        return RC_INTERNAL;
    }
    for (size_t c = 0; c < ncols; c++) names[c] = name(table, c);
    *tc = SIZE_MAX;
    st = rfx_model_match_columns(m, has_names ? names : NULL, ncols, target, cols, tc);
    free(names);
    if (st != RFX_OK) {
        cli_say("%s: %s", cli_escape(path, q, sizeof q), rfx_last_error());
        return cli_exit_code(st);
    }
    if (need_target && *tc == SIZE_MAX) {
        cli_say("%s: no target column: the file has the model's %zu inputs and no other column",
                cli_escape(path, q, sizeof q), info.n_inputs);
        return RC_DATA;
    }
    return RC_OK;
}

static const char *data_column(const void *table, size_t c) { return rfx_data_name(table, c); }
static const char *reader_column(const void *table, size_t c) { return rfx_reader_name(table, c); }

int cli_match_reader(const char *path, rfx_reader *r, const rfx_model *m, const char *target,
                     size_t *cols, size_t *tc)
{
    return match_columns(path, m, rfx_reader_inputs(r), rfx_reader_has_names(r), reader_column,
                         r, target, 0, cols, tc);
}

rfx_cmat cli_model_inputs(rfx_cmat T, const size_t *cols, size_t d, double *buf)
{
    int in_place = T.cols >= d;
    for (size_t j = 0; j < d && in_place; j++) in_place = cols[j] == j;
    if (in_place) return (rfx_cmat){ T.data, T.rows, d, T.stride };
    for (size_t i = 0; i < T.rows; i++)
        for (size_t j = 0; j < d; j++) buf[i * d + j] = T.data[i * T.stride + cols[j]];
    return (rfx_cmat){ buf, T.rows, d, d };
}

int cli_read_model_rows(const char *path, rfx_read_params rp, const rfx_model *m,
                        const char *target, int need_target, model_rows *out)
{
    rfx_model_info info;
    rfx_data *data = NULL;
    size_t *cols = NULL, tc = SIZE_MAX;
    int rc = RC_OK;
    memset(out, 0, sizeof *out);
    rp.target = NULL; /* every column as read; the model's schema sorts them */
    rfx_status st = rfx_model_get_info(m, &info);
    if (st == RFX_OK) st = rfx_data_read(path, &rp, &data);
    if (st != RFX_OK) return cli_fail(st);
    rfx_cmat T = rfx_data_x(data);
    const size_t n = T.rows, d = info.n_inputs;
    cols = malloc(d * sizeof *cols);
    if (!cols) {
        cli_say("out of memory for %zu columns", T.cols);
        rc = RC_INTERNAL;
        goto done;
    }
    rc = match_columns(path, m, T.cols, rfx_data_has_names(data), data_column, data, target,
                       need_target, cols, &tc);
    if (rc != RC_OK) goto done;
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
        out->X = cli_model_inputs(T, cols, d, out->x);
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
    if (rc != RC_OK) {
        free(out->x);
        free(out->y);
        memset(out, 0, sizeof *out);
    }
    rfx_data_free(data);
    return rc;
}
