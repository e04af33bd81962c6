/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_predict.c - rfx predict: its options and help, reading a model's
 * inputs (with or without the target column), and the predictions of a
 * model (with standard deviations) or of a classifier (labels, with class
 * probabilities) as CSV, .npy or on stdout.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

static int cmd_predict(const command *c, int argc, char **argv);

static const opt_spec PREDICT_OPTS[] = {
    { O_OUTPUT, 'o', "output", "OUT",
      "write the predictions to OUT (.csv, or .npy by extension); '-' or absent: stdout" },
    { O_STD, 0, "std", NULL,
      "add a column 'std', the predictive standard deviation (Bayesian models)" },
    { O_PROBA, 0, "proba", NULL,
      "classifiers with the squared or logistic loss: after the column 'label', one column of "
      "probabilities per class, named by its label" },
    { O_TARGET, 0, "target", "COL",
      "the target column, dropped from DATA: a header name, a 0-based index, or -1 for the "
      "last column (default: the column of the model's target name; without names, the last "
      "column when DATA has one column more than the model's inputs)" },
    OPT_DELIMITER,
    OPT_NO_HEADER,
    { O_END, 0, NULL, NULL, NULL }
};

/* rfx predict: its synopsis, help text and options (main.c lists it). */
const command cli_predict_command = {
    "predict", "rfx predict MODEL DATA [-o OUT.csv] [--std | --proba] [--target COL]",
    "predict with a model",
    "Predict the target for every row of DATA. The output has a header line and\n"
    "one column 'prediction' (and 'std' with --std). DATA holds the model's input\n"
    "columns, or those and the target column, which is then dropped. When the model\n"
    "and DATA both name their columns (rfx fit on a CSV file with a header), the\n"
    "inputs are found by name in any order, and a missing or unexpected column is\n"
    "an error naming it; otherwise they are taken by position. A classifier\n"
    "writes the column 'label', the predicted class, and with --proba (squared or\n"
    "logistic loss) one column of probabilities per class, headed by the class\n"
    "label.\n"
    "\n"
    "DATA is read and predicted a block of rows at a time, so memory does not grow\n"
    "with it; it may be '-' (standard input) and gzip-compressed. OUT is written\n"
    "whole or not at all (a temporary file renamed at the end); on standard output\n"
    "the rows go as they are predicted, and an error in a later block stops them\n"
    "with a non-zero exit.\n",
    PREDICT_OPTS, cmd_predict, NULL
};

/* ------------------------------------------------------------------------ */
/* rfx predict                                                               */
/* ------------------------------------------------------------------------ */

/* Where the predictions go, a block at a time: a file (CSV or .npy by its
 * name, through rfx_writer: nothing is there until every row is written)
 * or standard output (CSV, as the rows come). */
typedef struct sink {
    rfx_writer *w; /* NULL: standard output */
} sink;

static int sink_open(sink *k, const char *out_path, size_t w, const char *const *names)
{
    memset(k, 0, sizeof *k);
    if (out_path && strcmp(out_path, "-") != 0) {
        rfx_status st = rfx_writer_open(out_path, w, names, &k->w);
        return st == RFX_OK ? RC_OK : cli_fail(st);
    }
    for (size_t j = 0; j < w; ++j) printf(j ? ",%s" : "%s", names[j]);
    putchar('\n');
    return RC_OK;
}

static int sink_write(sink *k, rfx_cmat M)
{
    if (k->w) {
        rfx_status st = rfx_writer_write(k->w, M);
        return st == RFX_OK ? RC_OK : cli_fail(st);
    }
    for (size_t i = 0; i < M.rows; ++i) {
        const double *row = M.data + i * M.stride;
        for (size_t j = 0; j < M.cols; ++j) printf(j ? ",%.17g" : "%.17g", row[j]);
        putchar('\n');
    }
    if (ferror(stdout)) {
        cli_say("cannot write to standard output: %s", strerror(errno));
        return RC_IO;
    }
    return RC_OK;
}

/* rc: how the rows went; the file is kept only when all went well. */
static int sink_close(sink *k, int rc)
{
    if (k->w) {
        if (rc != RC_OK) {
            rfx_writer_abort(k->w);
            return rc;
        }
        rfx_status st = rfx_writer_close(k->w);
        return st == RFX_OK ? RC_OK : cli_fail(st);
    }
    if (fflush(stdout) != 0 && rc == RC_OK) {
        cli_say("cannot write to standard output: %s", strerror(errno));
        return RC_IO;
    }
    return rc;
}

/* The output's columns: 'prediction' (and 'std'), or for a classifier
 * 'label' (and one column of probabilities per class, named by its
 * label). One malloc block. */
static char **output_names(const rfx_model *model, const rfx_model_info *info, int want_std,
                           int want_proba, size_t *w)
{
    if (info->method != RFX_METHOD_CLASSIFY) {
        *w = want_std ? 2 * info->n_targets : info->n_targets;
        return cli_output_names(info->n_targets, want_std);
    }
    const double *classes = NULL;
    size_t C = 0;
    if (rfx_model_classes(model, &classes, &C) != RFX_OK) return NULL;
    *w = want_proba ? C + 1 : 1;
    char **names = malloc(*w * (sizeof *names + 40));
    if (!names) return NULL;
    char *text = (char *)(names + *w);
    for (size_t k = 0; k < *w; k++) names[k] = text + 40 * k;
    snprintf(names[0], 40, "label");
    for (size_t k = 0; k + 1 < *w; k++) cli_format_label(classes[k], names[k + 1], 40);
    return names;
}

/* Predict every row of DATA, read a block of rows at a time: memory holds
 * one block and its predictions, whatever the rows. */
static int predict_rows(const rfx_model *model, const rfx_model_info *info, const char *data_path,
                        rfx_read_params rp, const char *target, int want_std, int want_proba,
                        const char *out_path)
{
    const int classify = info->method == RFX_METHOD_CLASSIFY;
    const size_t d = info->n_inputs, ny = info->n_targets;
    cli_stream *s = NULL;
    size_t *cols = NULL, tc = SIZE_MAX, w = 0;
    double *xbuf = NULL, *out = NULL;
    char **names = NULL;
    sink k;
    int rc, opened = 0;
    rp.target = NULL; /* every column as read; the model's schema sorts them */
    rc = cli_stream_open(data_path, &rp, NULL, 0, isatty(STDERR_FILENO), &s);
    if (rc != RC_OK) return rc;
    rfx_reader *r = cli_stream_reader(s);
    const size_t block = rfx_reader_params_default().block_rows;
    cols = malloc(d * sizeof *cols);
    names = output_names(model, info, want_std, want_proba, &w);
    xbuf = malloc(block * d * sizeof *xbuf);
    out = malloc(block * (w ? w : 1) * sizeof *out);
    if (!cols || !names || !xbuf || !out) {
        cli_say("out of memory for a block of %zu rows", block);
        rc = RC_INTERNAL;
        goto done;
    }
    rc = cli_match_reader(data_path, r, model, target, cols, &tc);
    if (rc == RC_OK) rc = sink_open(&k, out_path, w, (const char *const *)names);
    opened = rc == RC_OK;
    while (rc == RC_OK) {
        rfx_cmat T, unused;
        int done = 0;
        rfx_status st = rfx_reader_next(r, &T, &unused, &done);
        if (st != RFX_OK) {
            rc = cli_fail(st);
            break;
        }
        if (done) break;
        rfx_cmat X = cli_model_inputs(T, cols, d, xbuf);
        if (classify) {
            st = rfx_model_predict(model, X, (rfx_mat){ out, X.rows, 1, w }, rfx_mat_none());
            if (st == RFX_OK && want_proba)
                st = rfx_model_predict_proba(model, X, (rfx_mat){ out + 1, X.rows, w - 1, w });
        } else {
            rfx_mat yhat = { out, X.rows, ny, w }, ystd = { out + ny, X.rows, ny, w };
            st = rfx_model_predict(model, X, yhat, want_std ? ystd : rfx_mat_none());
        }
        if (st != RFX_OK) {
            cli_say("%s: rows from %llu: %s", data_path,
                    (unsigned long long)(rfx_reader_rows(r) - X.rows + 1), rfx_last_error());
            rc = cli_exit_code(st);
            break;
        }
        rc = sink_write(&k, (rfx_cmat){ out, X.rows, w, w });
        cli_stream_tick(s);
    }
    if (opened) rc = sink_close(&k, rc);
    cli_stream_end(s);
done:
    free(cols);
    free(names);
    free(xbuf);
    free(out);
    cli_stream_free(s);
    return rc;
}

static int cmd_predict(const command *c, int argc, char **argv)
{
    rfx_read_params rp = rfx_read_params_default();
    const char *pos[2] = { NULL, NULL }, *out_path = NULL, *target = NULL;
    int want_std = 0, want_proba = 0, n_pos = 0;
    opt_iter it = cli_opt_begin(c, argc, argv);
    const char *v;
    int id;

    while ((id = cli_opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return cli_print_command_help(c);
        case OPT_POSITIONAL:
            if (n_pos == 2) return cli_usage_error(c, "unexpected argument '%s'", v);
            pos[n_pos++] = v;
            break;
        case O_OUTPUT: out_path = v; break;
        case O_STD: want_std = 1; break;
        case O_PROBA: want_proba = 1; break;
        case O_TARGET: target = v; break;
        case O_DELIMITER:
        case O_NO_HEADER: bad = cli_parse_read_option(&it, id, v, &rp); break;
        default: return cli_usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    if (n_pos < 2) return cli_usage_error(c, n_pos ? "missing DATA" : "missing MODEL and DATA");
    int checked = cli_check_output(c, out_path, pos, 2);
    if (checked != RC_OK) return checked;

    rfx_model *model = NULL;
    rfx_model_info info;
    rfx_status st;
    int rc = RC_OK;

    st = rfx_model_load(pos[0], &model);
    if (st == RFX_OK) st = rfx_model_get_info(model, &info);
    if (st != RFX_OK) {
        rc = cli_fail(st);
        goto done;
    }
    if (want_std && info.method == RFX_METHOD_CLASSIFY) {
        rc = cli_usage_error(c, "--std: a classifier has no predictive standard deviation (--proba "
                                "gives class probabilities)");
        goto done;
    }
    if (want_std && !info.has_std) {
        rc = cli_usage_error(c, "--std: this %s model has no predictive standard deviation "
                                "(fit with --method bayes)", rfx_method_name(info.method));
        goto done;
    }
    if (want_proba && info.method != RFX_METHOD_CLASSIFY) {
        rc = cli_usage_error(c, "--proba: this %s model is not a classifier (fit with --task "
                                "classify)", rfx_method_name(info.method));
        goto done;
    }
    if (want_proba) {
        rfx_classifier_info ci;
        st = rfx_model_classifier_info(model, &ci);
        if (st != RFX_OK) {
            rc = cli_fail(st);
            goto done;
        }
        if (!ci.probabilities) {
            rc = cli_usage_error(c, "--proba: this classifier has the %s loss, which gives no "
                                    "probabilities (fit with --loss logistic)",
                                 rfx_loss_name(ci.loss));
            goto done;
        }
    }
    rc = predict_rows(model, &info, pos[1], rp, target, want_std, want_proba, out_path);
done:
    rfx_model_free(model);
    return rc;
}
