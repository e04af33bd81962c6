/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_eval.c - rfx eval: its options and help, the errors of predictions
 * (RMSE, MAE, R^2, relative L2, and the accuracy of rounded class labels),
 * and for a classifier the accuracy, per-class precision and recall, and
 * the confusion matrix.
 */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_eval(const command *c, int argc, char **argv);

static const opt_spec EVAL_OPTS[] = {
    { O_TARGET, 0, "target", "COL",
      "the target column of DATA: a header name, a 0-based index, or -1 for the last column "
      "(default: the column of the model's target name, else the last column)" },
    { O_CLASSES, 0, "classes", NULL,
      "targets are integer class labels: also print the accuracy of the predictions "
      "rounded to the nearest label" },
    { O_PRED, 0, "pred", "PRED.csv",
      "compare the first column of PRED.csv (from rfx predict) instead of a model's predictions" },
    { O_TRUTH, 0, "truth", "DATA", "with --pred: the file holding the true targets" },
    OPT_FORMAT,
    OPT_REPORT_OUTPUT,
    OPT_DELIMITER,
    OPT_NO_HEADER,
    { O_END, 0, NULL, NULL, NULL }
};

/* rfx eval: its synopsis, help text and options (main.c lists it). */
const command cli_eval_command = {
    "eval", "rfx eval MODEL DATA [--target COL] [--classes]\n"
            "       rfx eval --pred PRED.csv --truth DATA [--target COL] [--classes]",
    "score predictions against known targets",
    "Print the RMSE, the MAE, R^2 and the relative L2 error\n"
    "|f - y|_2 / |y - mean(y)|_2 of the predictions f against the targets y, one\n"
    "'name value' pair per line. For a classifier: the rows, the accuracy and the\n"
    "number of classes as such pairs, then a table of each class's precision,\n"
    "recall and support, and the confusion matrix (rows: true class, columns:\n"
    "predicted class), headed by the class labels.\n"
    "\n"
    "DATA's columns are matched to the model's inputs as rfx predict does: by name\n"
    "when both have names, else by position; DATA must hold the target column too.\n"
    "\n"
    "--format json prints one object: {\"rows\", \"rmse\", \"mae\", \"r2\",\n"
    "\"rel_l2\"} (and \"classes\", \"accuracy\" with --classes); for a classifier\n"
    "{\"rows\", \"accuracy\", \"classes\": [labels], \"per_class\": [{\"label\",\n"
    "\"precision\", \"recall\", \"support\"}], \"confusion\": [[counts]]} (rows: true\n"
    "class). A number that is not defined (R^2 of a constant target, the precision\n"
    "of a class never predicted) is null.\n",
    EVAL_OPTS, cmd_eval, NULL
};

/* ------------------------------------------------------------------------ */
/* rfx eval                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct metrics {
    double rmse, mae, r2, rel_l2;
} metrics;

/* Errors of predictions f (n, stride fs) against targets y (n, stride ys). */
static metrics metrics_compute(const double *f, size_t fs, const double *y, size_t ys, size_t n)
{
    double mean = 0, sse = 0, sae = 0, sst = 0;
    metrics m;
    for (size_t i = 0; i < n; ++i) mean += y[i * ys];
    mean /= (double)n;
    for (size_t i = 0; i < n; ++i) {
        double r = f[i * fs] - y[i * ys], t = y[i * ys] - mean;
        sse += r * r;
        sae += fabs(r);
        sst += t * t;
    }
    m.rmse = sqrt(sse / (double)n);
    m.mae = sae / (double)n;
    m.r2 = sst > 0 ? 1.0 - sse / sst : NAN;
    m.rel_l2 = sst > 0 ? sqrt(sse / sst) : NAN;
    return m;
}

/* Accuracy of f rounded to the nearest of the labels found in y. */
static int class_accuracy(const double *f, size_t fs, const double *y, size_t ys, size_t n,
                          double *accuracy, size_t *n_classes)
{
    double *labels = NULL;
    size_t k = 0, correct = 0;
    for (size_t i = 0; i < n; ++i) {
        double t = y[i * ys];
        if (t != floor(t)) {
            cli_say("--classes: the target %.17g in row %zu is not an integer class label", t,
                    i + 1);
            return RC_DATA;
        }
    }
    if (rfx_classes_find(y, n, ys, &labels, &k)) {
        cli_say("%s", rfx_last_error());
        return RC_INTERNAL;
    }
    for (size_t i = 0; i < n; ++i) {
        /* the first label >= f, then the nearer of it and its predecessor */
        size_t lo = 0, hi = k;
        double p = f[i * fs];
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (labels[mid] < p) lo = mid + 1; else hi = mid;
        }
        size_t best = lo == k ? k - 1 : lo;
        if (lo > 0 && lo < k && p - labels[lo - 1] <= labels[lo] - p) best = lo - 1;
        correct += labels[best] == y[i * ys];
    }
    *accuracy = (double)correct / (double)n;
    *n_classes = k;
    rfx_buffer_free(labels);
    return RC_OK;
}

static int print_eval(const cli_report *r, const double *f, size_t fs, const double *y,
                      size_t ys, size_t n, int classes)
{
    metrics m = metrics_compute(f, fs, y, ys, n);
    double acc = NAN;
    size_t k = 0;
    if (classes) {
        int rc = class_accuracy(f, fs, y, ys, n, &acc, &k);
        if (rc != RC_OK) return rc;
    }
    FILE *out = r->fp;
    if (r->json) {
        json_writer w;
        json_begin(&w, out);
        json_size(&w, "rows", n);
        json_num(&w, "rmse", m.rmse);
        json_num(&w, "mae", m.mae);
        json_num(&w, "r2", m.r2);
        json_num(&w, "rel_l2", m.rel_l2);
        if (classes) {
            json_size(&w, "classes", k);
            json_num(&w, "accuracy", acc);
        }
        json_end(&w);
        return RC_OK;
    }
    fprintf(out, "%-9s %zu\n", "rows", n);
    fprintf(out, "%-9s %.6g\n", "RMSE", m.rmse);
    fprintf(out, "%-9s %.6g\n", "MAE", m.mae);
    fprintf(out, "%-9s %.6g\n", "R^2", m.r2);
    fprintf(out, "%-9s %.6g\n", "rel_L2", m.rel_l2);
    if (classes) {
        fprintf(out, "%-9s %zu\n", "classes", k);
        fprintf(out, "%-9s %.6g\n", "accuracy", acc);
    }
    return RC_OK;
}

/* The model at model_path, its predictions of the rows of data_path
 * (matched to its inputs by cli_read_model_rows) and their targets; for a
 * classifier *classes (malloc'd) and *n_classes receive its classes (NULL
 * and 0 otherwise). */
static int eval_predict(const char *model_path, const char *data_path, rfx_read_params rp,
                        const char *target, model_rows *rows, double **out, double **classes,
                        size_t *n_classes)
{
    rfx_model *model = NULL;
    rfx_model_info info;
    char q[1024];
    int rc = RC_OK;
    double *f = NULL;
    rfx_status st = rfx_model_load(model_path, &model);
    if (st == RFX_OK) st = rfx_model_get_info(model, &info);
    if (st != RFX_OK) {
        rfx_model_free(model);
        return cli_fail(st);
    }
    *classes = NULL;
    *n_classes = 0;
    if (info.n_targets != 1) {
        cli_say("%s: the model predicts %zu targets; eval compares one",
                cli_escape(model_path, q, sizeof q), info.n_targets);
        rfx_model_free(model);
        return RC_DATA;
    }
    rc = cli_read_model_rows(data_path, rp, model, target, 1, rows);
    if (rc != RC_OK) {
        rfx_model_free(model);
        return rc;
    }
    const size_t n = rows->X.rows;
    if (!(f = malloc((n ? n : 1) * sizeof *f))) {
        rfx_model_free(model);
        cli_say("out of memory for %zu predictions", n);
        return RC_INTERNAL;
    }
    st = rfx_model_predict(model, rows->X, rfx_mat_of(f, n, 1), rfx_mat_none());
    if (st == RFX_OK && info.method == RFX_METHOD_CLASSIFY) {
        const double *c;
        size_t C = 0;
        st = rfx_model_classes(model, &c, &C);
        if (st == RFX_OK && !(*classes = malloc(C * sizeof **classes))) {
            rfx_model_free(model);
            free(f);
            cli_say("out of memory for %zu classes", C);
            return RC_INTERNAL;
        }
        if (st == RFX_OK) {
            memcpy(*classes, c, C * sizeof *c);
            *n_classes = C;
        }
    }
    rfx_model_free(model);
    if (st != RFX_OK) {
        free(f);
        return cli_fail(st);
    }
    *out = f;
    return RC_OK;
}

/* The classification report as JSON: rows, accuracy, the K labels, each
 * class's precision (null when never predicted), recall (null without
 * support) and support, and the K x K confusion matrix (rows true). */
static void json_classification(FILE *out, const double *labels, size_t K, const size_t *cm,
                                size_t n, size_t correct)
{
    json_writer w;
    json_begin(&w, out);
    json_size(&w, "rows", n);
    json_num(&w, "accuracy", n ? (double)correct / (double)n : NAN);
    json_nums(&w, "classes", labels, K);
    json_open(&w, "per_class", '[');
    for (size_t k = 0; k < K; k++) {
        size_t pred = 0, sup = 0;
        for (size_t j = 0; j < K; j++) {
            pred += cm[j * K + k];
            sup += cm[k * K + j];
        }
        json_open(&w, NULL, '{');
        json_num(&w, "label", labels[k]);
        json_num(&w, "precision", pred ? (double)cm[k * K + k] / (double)pred : NAN);
        json_num(&w, "recall", sup ? (double)cm[k * K + k] / (double)sup : NAN);
        json_size(&w, "support", sup);
        json_close(&w, '}');
    }
    json_close(&w, ']');
    json_open(&w, "confusion", '[');
    for (size_t a = 0; a < K; a++) {
        json_open(&w, NULL, '[');
        for (size_t b = 0; b < K; b++) json_size(&w, NULL, cm[a * K + b]);
        json_close(&w, ']');
    }
    json_close(&w, ']');
    json_end(&w);
}

/* A classifier's predicted labels f against the true labels y (n rows):
 * the accuracy, per class precision, recall and support, and the confusion
 * matrix (rows true, columns predicted) over the model's classes and any
 * other label found in y (never predicted). */
static int print_classification(const cli_report *r, const double *f, const double *y,
                                 size_t ys, size_t n, const double *mclasses, size_t mC)
{
    FILE *out = r->fp;
    size_t K = 0, *cm = NULL;
    double *labels = malloc((n + mC ? n + mC : 1) * sizeof *labels);
    if (!labels) {
        cli_say("out of memory for %zu labels", n + mC);
        return RC_INTERNAL;
    }
    for (size_t k = 0; k < mC; k++) labels[K++] = mclasses[k];
    for (size_t i = 0; i < n; i++) labels[K++] = y[i * ys];
    qsort(labels, K, sizeof *labels, cli_compare_doubles);
    size_t u = 0;
    for (size_t i = 0; i < K; i++)
        if (u == 0 || labels[i] != labels[u - 1]) labels[u++] = labels[i];
    K = u;
    if (K > 1000) {
        cli_say("%zu distinct labels: too many for a confusion matrix (is the target a class "
                "label?)", K);
        free(labels);
        return RC_DATA;
    }
    cm = calloc(K * K, sizeof *cm);
    if (!cm) {
        free(labels);
        cli_say("out of memory for a %zu x %zu confusion matrix", K, K);
        return RC_INTERNAL;
    }
    size_t correct = 0;
    for (size_t i = 0; i < n; i++) {
        double t = y[i * ys];
        size_t a = (size_t)((const double *)bsearch(&t, labels, K, sizeof t, cli_compare_doubles) -
                            labels);
        size_t b = (size_t)((const double *)bsearch(&f[i], labels, K, sizeof t,
                                                    cli_compare_doubles) - labels);
        cm[a * K + b]++;
        correct += a == b;
    }
    if (r->json) {
        json_classification(out, labels, K, cm, n, correct);
        free(cm);
        free(labels);
        return RC_OK;
    }
    char lab[40];
    int w = 10;
    for (size_t k = 0; k < K; k++) {
        cli_format_label(labels[k], lab, sizeof lab);
        if ((int)strlen(lab) + 1 > w) w = (int)strlen(lab) + 1;
    }
    fprintf(out, "%-9s %zu\n", "rows", n);
    fprintf(out, "%-9s %.6g\n", "accuracy", n ? (double)correct / (double)n : NAN);
    fprintf(out, "%-9s %zu\n", "classes", K);
    fprintf(out, "\n%-*s %-10s %-10s %s\n", w, "class", "precision", "recall", "support");
    for (size_t k = 0; k < K; k++) {
        size_t pred = 0, sup = 0;
        for (size_t j = 0; j < K; j++) {
            pred += cm[j * K + k];
            sup += cm[k * K + j];
        }
        cli_format_label(labels[k], lab, sizeof lab);
        fprintf(out, "%-*s ", w, lab);
        if (pred) fprintf(out, "%-10.6g ", (double)cm[k * K + k] / (double)pred);
        else fprintf(out, "%-10s ", "-");
        if (sup) fprintf(out, "%-10.6g ", (double)cm[k * K + k] / (double)sup);
        else fprintf(out, "%-10s ", "-");
        fprintf(out, "%zu\n", sup);
    }
    fprintf(out, "\nconfusion (rows: true class, columns: predicted class)\n%-*s", w, "true\\pred");
    for (size_t k = 0; k < K; k++) {
        cli_format_label(labels[k], lab, sizeof lab);
        fprintf(out, " %-*s", w, lab);
    }
    fputc('\n', out);
    for (size_t a = 0; a < K; a++) {
        cli_format_label(labels[a], lab, sizeof lab);
        fprintf(out, "%-*s", w, lab);
        for (size_t b = 0; b < K; b++) fprintf(out, " %-*zu", w, cm[a * K + b]);
        fputc('\n', out);
    }
    free(cm);
    free(labels);
    return RC_OK;
}

static int cmd_eval(const command *c, int argc, char **argv)
{
    rfx_read_params rp = rfx_read_params_default();
    const char *pos[2] = { NULL, NULL }, *pred_path = NULL, *truth_path = NULL, *out_path = NULL;
    int classes = 0, n_pos = 0, json = 0;
    opt_iter it = cli_opt_begin(c, argc, argv);
    const char *v;
    int id;

    rp.target = NULL; /* the model's target name, else the last column */
    while ((id = cli_opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return cli_print_command_help(c);
        case OPT_POSITIONAL:
            if (n_pos == 2) return cli_usage_error(c, "unexpected argument '%s'", v);
            pos[n_pos++] = v;
            break;
        case O_TARGET: rp.target = v; break;
        case O_CLASSES: classes = 1; break;
        case O_PRED: pred_path = v; break;
        case O_TRUTH: truth_path = v; break;
        case O_FORMAT: bad = cli_parse_format(&it, v, &json); break;
        case O_OUTPUT: out_path = v; break;
        case O_DELIMITER:
        case O_NO_HEADER: bad = cli_parse_read_option(&it, id, v, &rp); break;
        default: return cli_usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    int compare_files = pred_path || truth_path;
    if (compare_files && (!pred_path || !truth_path))
        return cli_usage_error(c, "--pred and --truth go together");
    if (compare_files && n_pos > 0)
        return cli_usage_error(c, "with --pred and --truth, no MODEL or DATA ('%s')", pos[0]);
    if (!compare_files && n_pos < 2)
        return cli_usage_error(c, n_pos ? "missing DATA" : "missing MODEL and DATA");
    const char *inputs[2] = { pos[0], pos[1] };
    if (compare_files) {
        inputs[0] = pred_path;
        inputs[1] = truth_path;
    }
    int checked = cli_check_output(c, out_path, inputs, 2);
    if (checked != RC_OK) return checked;

    rfx_data *truth = NULL, *pred = NULL;
    model_rows rows = { 0 };
    double *f = NULL, *mclasses = NULL;
    size_t mC = 0;
    const double *fp, *y;
    size_t fs = 1, ys = 1, n;
    int rc;
    if (compare_files) {
        if (!rp.target) rp.target = "-1";
        rfx_status st = rfx_data_read(truth_path, &rp, &truth);
        if (st != RFX_OK) return cli_fail(st);
        rfx_cmat Y = rfx_data_y(truth);
        rfx_read_params pp = rfx_read_params_default(); /* as rfx predict writes it */
        st = rfx_data_read(pred_path, &pp, &pred);
        if (st != RFX_OK) {
            rc = cli_fail(st);
            goto done;
        }
        rfx_cmat P = rfx_data_x(pred);
        if (P.rows != Y.rows) {
            char q1[1024], q2[1024];
            cli_say("%s has %zu rows but %s has %zu", cli_escape(pred_path, q1, sizeof q1), P.rows,
                    cli_escape(truth_path, q2, sizeof q2), Y.rows);
            rc = RC_DATA;
            goto done;
        }
        fp = P.data;
        fs = P.stride;
        y = Y.data;
        ys = Y.stride;
        n = Y.rows;
    } else {
        rc = eval_predict(pos[0], pos[1], rp, rp.target, &rows, &f, &mclasses, &mC);
        if (rc != RC_OK) goto done;
        fp = f;
        y = rows.y;
        n = rows.X.rows;
    }
    cli_report report;
    rc = cli_report_open(&report, out_path, json);
    if (rc != RC_OK) goto done;
    if (mC > 0)
        rc = print_classification(&report, fp, y, ys, n, mclasses, mC);
    else
        rc = print_eval(&report, fp, fs, y, ys, n, classes);
    rc = cli_report_close(&report, rc);
done:
    free(f);
    free(mclasses);
    cli_model_rows_free(&rows);
    rfx_data_free(pred);
    rfx_data_free(truth);
    return rc;
}
