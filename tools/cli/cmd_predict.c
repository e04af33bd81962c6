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
#include <string.h>

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
    "label.\n",
    PREDICT_OPTS, cmd_predict
};

/* ------------------------------------------------------------------------ */
/* rfx predict                                                               */
/* ------------------------------------------------------------------------ */

/* rfx predict with a classifier: the column 'label' and, with --proba, one
 * column of probabilities per class named by its label. */
static int predict_classes(const command *c, const rfx_model *model, const char *data_path,
                           rfx_read_params rp, const char *target, int want_proba,
                           const char *out_path)
{
    rfx_classifier_info ci;
    const double *classes;
    size_t C = 0;
    model_rows rows;
    double *out = NULL;
    char **names = NULL, *text = NULL;
    int rc = RC_OK;
    rfx_status st = rfx_model_classifier_info(model, &ci);
    if (st == RFX_OK) st = rfx_model_classes(model, &classes, &C);
    if (st != RFX_OK) return cli_fail(st);
    if (want_proba && ci.loss != RFX_LOSS_LOGISTIC && ci.loss != RFX_LOSS_SQUARED)
        return cli_usage_error(c, "--proba: this classifier has the %s loss, which gives no "
                                  "probabilities (fit with --loss logistic)",
                               rfx_loss_name(ci.loss));
    rc = cli_read_model_rows(data_path, rp, model, target, 0, &rows);
    if (rc != RC_OK) return rc;
    rfx_cmat X = rows.X;
    const size_t w = want_proba ? C + 1 : 1;
    out = calloc(X.rows ? X.rows : 1, w * sizeof *out);
    names = malloc(w * sizeof *names);
    text = malloc(w * 40);
    if (!out || !names || !text) {
        cli_say("out of memory for %zu x %zu predictions", X.rows, w);
        rc = RC_INTERNAL;
        goto done;
    }
    names[0] = text;
    snprintf(text, 40, "label");
    for (size_t k = 0; k + 1 < w; k++) {
        names[k + 1] = text + 40 * (k + 1);
        cli_format_label(classes[k], names[k + 1], 40);
    }
    st = rfx_model_predict(model, X, (rfx_mat){ out, X.rows, 1, w }, rfx_mat_none());
    if (st == RFX_OK && want_proba)
        st = rfx_model_predict_proba(model, X, (rfx_mat){ out + 1, X.rows, C, w });
    if (st != RFX_OK) {
        rc = cli_fail(st);
        goto done;
    }
    rc = cli_write_output(out_path, (rfx_cmat){ out, X.rows, w, w }, (const char *const *)names);
done:
    free(out);
    free(names);
    free(text);
    cli_model_rows_free(&rows);
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
    model_rows rows = { 0 };
    double *out = NULL;
    char **names = NULL;
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
    if (info.method == RFX_METHOD_CLASSIFY) {
        rc = predict_classes(c, model, pos[1], rp, target, want_proba, out_path);
        goto done;
    }
    rc = cli_read_model_rows(pos[1], rp, model, target, 0, &rows);
    if (rc != RC_OK) goto done;
    rfx_cmat X = rows.X;
    size_t ny = info.n_targets, w = want_std ? 2 * ny : ny;
    out = calloc(X.rows ? X.rows : 1, w * sizeof(double));
    names = cli_output_names(ny, want_std);
    if (!out || !names) {
        cli_say("out of memory for %zu x %zu predictions", X.rows, w);
        rc = RC_INTERNAL;
        goto done;
    }
    rfx_mat yhat = { out, X.rows, ny, w };
    rfx_mat ystd = { out + ny, X.rows, ny, w };
    st = rfx_model_predict(model, X, yhat, want_std ? ystd : rfx_mat_none());
    if (st != RFX_OK) {
        rc = cli_fail(st);
        goto done;
    }
    rc = cli_write_output(out_path, (rfx_cmat){ out, X.rows, w, w }, (const char *const *)names);
done:
    free(names);
    free(out);
    cli_model_rows_free(&rows);
    rfx_model_free(model);
    return rc;
}
