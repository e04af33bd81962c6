/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_info.c - rfx info: its help, and the description of a model file:
 * random feature models, classifiers, polynomial chaos expansions (terms,
 * moments, Sobol indices) and projected models with their surrogate.
 */
#include "cli.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static int cmd_info(const command *c, int argc, char **argv);

static const opt_spec INFO_OPTS[] = {
    OPT_FORMAT,
    OPT_REPORT_OUTPUT,
    { O_END, 0, NULL, NULL, NULL }
};

/* rfx info: its synopsis, help text and options (main.c lists it). */
const command cli_info_command = {
    "info", "rfx info MODEL", "describe a model file",
    "Print what a model file holds: method, kernel, dimensions, length scale(s),\n"
    "regularisation, evidence, and the file size. For a polynomial chaos model:\n"
    "the input marginals, degree, terms kept of the candidates, leave-one-out\n"
    "errors, mean and variance, the largest terms with their multi-indices, and\n"
    "the first-order and total Sobol indices from the coefficients. For a projected\n"
    "model: the kernel PCA (k, gamma, standardisation), theta, the loss, and the\n"
    "surrogate on the k scores as its own method is described. For a classifier\n"
    "also: the loss, the multi-class scheme, the classes and the score columns.\n"
    "\n"
    "--format json prints one object: \"file\", \"file_size\", \"method\", \"inputs\",\n"
    "\"targets\", \"rows_trained\", \"input_names\" (a list, or null), \"target_name\",\n"
    "\"input_box\" ([[lo, hi] per input], or null),\n"
    "\"target_transform\" (and \"target_lambda\" for boxcox), then by kind: a feature\n"
    "model's \"kernel\", \"nu\" (matern), \"form\", \"structure\" (and\n"
    "\"structure_version\" for sorf), \"activation\",\n"
    "\"sparsity\", \"weights\", \"weight_scale\", \"features\", \"seed\", \"length_scale\"\n"
    "or \"length_scales\", \"lambda\", for bayes \"noise_variance\", \"prior_variance\",\n"
    "\"log_evidence\", then \"standardized\", \"intercept\", \"predictive_std\", and for a\n"
    "classifier \"loss\", \"multiclass\", \"classes\", \"score_columns\",\n"
    "\"probabilities\"; a PCE's \"marginals\" [{\"kind\", \"a\", \"b\"}], \"degree\",\n"
    "\"pce_method\", \"candidates\", \"loo_mse\", \"loo_relative\", \"loo_corrected\",\n"
    "\"mean\", \"variance\", \"sobol_first\", \"sobol_total\" and every term\n"
    "[{\"coefficient\", \"multi_index\"}]; a projected model's \"components\", \"gamma\",\n"
    "\"standardized\", \"theta\", \"loss\" and \"surrogate\", an object of the same\n"
    "shape. Numbers that are not finite are null.\n",
    INFO_OPTS, cmd_info, NULL
};

/* ------------------------------------------------------------------------ */
/* rfx info                                                                  */
/* ------------------------------------------------------------------------ */

static const char *yes_no(int v) { return v ? "yes" : "no"; }

/* path NULL: without the file lines (the surrogate of a projected model). */
static void print_model_info(FILE *out, const char *path, const rfx_model_info *in, long long file_size)
{
    char q[1024];
    const rfx_features_params *f = &in->features;
    if (path) {
        fprintf(out, "%-16s %s\n", "file", cli_escape(path, q, sizeof q));
        fprintf(out, "%-16s %lld bytes\n", "file size", file_size);
    }
    fprintf(out, "%-16s %s\n", "method", rfx_method_name(in->method));
    fprintf(out, "%-16s %s\n", "kernel", rfx_kernel_name(f->kernel));
    if (f->kernel == RFX_KERNEL_MATERN) fprintf(out, "%-16s %g\n", "nu", f->nu);
    fprintf(out, "%-16s %s\n", "form", rfx_form_name(f->form));
    if (f->structure == RFX_STRUCTURE_SORF)
        fprintf(out, "%-16s sorf, construction %u%s\n", "structure", f->structure_version,
                f->structure_version == 1 ? " (rfx 0.2)" : "");
    else if (f->structure != RFX_STRUCTURE_IID)
        fprintf(out, "%-16s %s\n", "structure", rfx_structure_name(f->structure));
    fprintf(out, "%-16s %s\n", "activation", rfx_activation_name(f->activation));
    if (f->sparsity > 0) fprintf(out, "%-16s q = %zu inputs per feature\n", "sparsity", f->sparsity);
    if (f->weights != RFX_WEIGHTS_KERNEL)
        fprintf(out, "%-16s %s, scale %g\n", "weights", rfx_weights_name(f->weights), f->weight_scale);
    fprintf(out, "%-16s %zu\n", "inputs d", in->n_inputs);
    fprintf(out, "%-16s %zu\n", "features D", f->n_features);
    fprintf(out, "%-16s %zu\n", "targets", in->n_targets);
    fprintf(out, "%-16s %zu\n", "rows trained", in->n_train);
    fprintf(out, "%-16s %llu\n", "seed", (unsigned long long)f->seed);
    if (f->length_scales) {
        fprintf(out, "%-16s", "length scales");
        for (size_t j = 0; j < in->n_inputs; ++j) fprintf(out, " %.6g", f->length_scales[j]);
        fputc('\n', out);
    } else {
        fprintf(out, "%-16s %.6g\n", "length scale", f->length_scale);
    }
    fprintf(out, "%-16s %.6g\n", "lambda", in->lambda);
    if (in->method == RFX_METHOD_BAYES) {
        fprintf(out, "%-16s %.6g\n", "noise variance", in->noise_var);
        fprintf(out, "%-16s %.6g\n", "prior variance", in->prior_var);
        fprintf(out, "%-16s %.6g\n", "log evidence", in->log_evidence);
    }
    fprintf(out, "%-16s %s\n", "standardized", yes_no(in->standardized));
    fprintf(out, "%-16s %s\n", "intercept", yes_no(in->fit_intercept));
    fprintf(out, "%-16s %s\n", "predictive std", yes_no(in->has_std));
}

/* rfx info of a classifier, after the feature model's lines: the loss, the
 * multi-class scheme, the classes and the score columns. */
static int print_classifier_info(FILE *out, const rfx_model *m)
{
    rfx_classifier_info ci;
    const double *classes;
    size_t C = 0;
    rfx_status st = rfx_model_classifier_info(m, &ci);
    if (st == RFX_OK) st = rfx_model_classes(m, &classes, &C);
    if (st != RFX_OK) return cli_fail(st);
    fprintf(out, "%-16s %s\n", "loss", rfx_loss_name(ci.loss));
    if (C > 2)
        fprintf(out, "%-16s %s\n", "multiclass",
               ci.multiclass == RFX_MULTICLASS_SOFTMAX ? "softmax" : "ovr (one-vs-rest)");
    fprintf(out, "%-16s %zu: ", "classes", C);
    cli_print_label_list(out, classes, C, 50);
    fputc('\n', out);
    fprintf(out, "%-16s %zu\n", "score columns", ci.n_columns);
    fprintf(out, "%-16s %s\n", "probabilities", yes_no(ci.probabilities));
    if (ci.temperature > 0) fprintf(out, "%-16s %.6g\n", "temperature", ci.temperature);
    return RC_OK;
}

/* A multi-index as "(a_0,...,a_d-1)", or for many inputs its nonzero
 * entries "{i:a_i, ...}" ("{}" for the constant). */
static void print_multi_index(FILE *out, const unsigned *a, size_t d)
{
    enum { FULL_MAX_INPUTS = 16 };
    if (d <= FULL_MAX_INPUTS) {
        for (size_t i = 0; i < d; i++) fprintf(out, "%s%u", i ? "," : "(", a[i]);
        fputc(')', out);
        return;
    }
    int first = 1;
    fputc('{', out);
    for (size_t i = 0; i < d; i++) {
        if (!a[i]) continue;
        fprintf(out, "%sx%zu:%u", first ? "" : ", ", i, a[i]);
        first = 0;
    }
    fputc('}', out);
}

/* A term and its |coefficient|, sorted by decreasing magnitude (ties in
 * term order). */
typedef struct term_ref {
    double magnitude;
    size_t k;
} term_ref;

static int by_magnitude(const void *pa, const void *pb)
{
    const term_ref *a = pa, *b = pb;
    if (a->magnitude != b->magnitude) return a->magnitude < b->magnitude ? 1 : -1;
    return (a->k > b->k) - (a->k < b->k);
}

/* rfx info of a PCE model: the expansion, its fit, its largest terms, and
 * its moments and Sobol indices from the coefficients. path NULL: without
 * the file lines (the surrogate of a projected model). */
static int print_pce_info(FILE *out, const char *path, const rfx_model *m, long long file_size)
{
    char q[1024];
    enum { SHOW_TERMS = 10 };
    const rfx_pce *pce = rfx_model_pce(m);
    rfx_pce_info in;
    rfx_status st = rfx_pce_get_info(pce, &in);
    if (st != RFX_OK) return cli_fail(st);
    const size_t d = in.dim, T = in.n_terms;
    const rfx_marginal *mg = rfx_pce_marginals(pce);
    if (T > 0 && d > SIZE_MAX / sizeof(unsigned) / T) {
        cli_say("%s: %zu terms of %zu inputs do not fit in memory", path, T, d);
        return RC_INTERNAL;
    }
    double *coef = malloc((T ? T : 1) * sizeof *coef), *sob = malloc(2 * d * sizeof *sob);
    unsigned *alpha = malloc((T ? T : 1) * d * sizeof *alpha);
    term_ref *order = malloc((T ? T : 1) * sizeof *order);
    if (!coef || !sob || !alpha || !order) {
        free(coef);
        free(sob);
        free(alpha);
        free(order);
        cli_say("out of memory for %zu terms", T);
        return RC_INTERNAL;
    }
    for (size_t k = 0; k < T && st == RFX_OK; k++) {
        st = rfx_pce_term(pce, k, &coef[k], alpha + k * d);
        order[k].magnitude = fabs(coef[k]);
        order[k].k = k;
    }
    if (st == RFX_OK) st = rfx_pce_sobol(pce, sob, sob + d);
    if (st != RFX_OK) {
        free(coef);
        free(sob);
        free(alpha);
        free(order);
        return cli_fail(st);
    }
    if (path) {
        fprintf(out, "%-16s %s\n", "file", cli_escape(path, q, sizeof q));
        fprintf(out, "%-16s %lld bytes\n", "file size", file_size);
    }
    fprintf(out, "%-16s %s\n", "method", "pce");
    fprintf(out, "%-16s %zu\n", "inputs d", d);
    fprintf(out, "%-16s %d\n", "targets", 1);
    fprintf(out, "%-16s %zu\n", "rows trained", in.n_train);
    int same = 1;
    for (size_t j = 1; j < d; j++)
        same = same && mg[j].kind == mg[0].kind && mg[j].a == mg[0].a && mg[j].b == mg[0].b;
    for (size_t j = 0; j < (same ? 1 : d); j++) {
        char who[32];
        if (same)
            snprintf(who, sizeof who, "every input");
        else
            snprintf(who, sizeof who, "x%zu", j);
        if (mg[j].kind == RFX_MARGINAL_NORMAL)
            fprintf(out, "%-16s normal N(%.6g, %.6g^2), %s (Hermite)\n", j ? "" : "marginals",
                   mg[j].a, mg[j].b, who);
        else if (mg[j].kind == RFX_MARGINAL_LOGNORMAL)
            fprintf(out, "%-16s lognormal, log x ~ N(%.6g, %.6g^2), %s (Hermite in log x)\n",
                    j ? "" : "marginals", mg[j].a, mg[j].b, who);
        else
            fprintf(out, "%-16s uniform [%.6g, %.6g], %s (Legendre)\n", j ? "" : "marginals",
                   mg[j].a, mg[j].b, who);
    }
    fprintf(out, "%-16s %zu\n", "degree", in.degree);
    const char *fitted_by = in.method == RFX_PCE_METHOD_LARS ? "lars" : "lsq";
    fprintf(out, "%-16s %s\n", "pce method", in.n_train == 0 ? "none (assembled)" : fitted_by);
    fprintf(out, "%-16s %zu of %zu candidates\n", "terms", T, in.n_candidates);
    fprintf(out, "%-16s %.6g\n", "LOO mse", in.loo_mse);
    fprintf(out, "%-16s %.6g\n", "LOO relative", in.loo_relative);
    fprintf(out, "%-16s %.6g\n", "LOO corrected", in.loo_corrected);
    fprintf(out, "%-16s %.6g\n", "mean", in.mean);
    fprintf(out, "%-16s %.6g\n", "variance", in.variance);
    qsort(order, T, sizeof *order, by_magnitude);
    size_t show = T < SHOW_TERMS ? T : SHOW_TERMS;
    fprintf(out, "%-16s %zu of %zu, by |coefficient|: coefficient multi-index\n", "largest terms",
           show, T);
    for (size_t r = 0; r < show; r++) {
        fprintf(out, "%-16s %13.6g  ", "", coef[order[r].k]);
        print_multi_index(out, alpha + order[r].k * d, d);
        fputc('\n', out);
    }
    rfx_model_info mi;
    const int transformed = rfx_model_get_info(m, &mi) == RFX_OK &&
                            mi.target_transform != RFX_TARGET_NONE;
    fprintf(out, "%-16s from the coefficients, inputs x0..x%zu%s%s\n", "Sobol indices", d - 1,
           path ? "" : " (the scores)",
           transformed ? "; of the transformed target T(y) (rfx sobol gives those of y)" : "");
    for (int t = 0; t < 2; t++) {
        fprintf(out, "%-16s", t ? "Sobol total" : "Sobol first");
        for (size_t j = 0; j < d; j++) fprintf(out, " %.4f", sob[t * d + j]);
        fputc('\n', out);
    }
    free(coef);
    free(sob);
    free(alpha);
    free(order);
    return RC_OK;
}

/* rfx info of a projected model: the kernel PCA, theta, the loss, then the
 * surrogate on the scores as rfx info describes a model of its method. */
static int print_projected_info(FILE *out, const char *path, const rfx_model *m, long long file_size)
{
    char q[1024];
    rfx_projected_info in;
    rfx_model_info sin;
    rfx_status st = rfx_model_projected_info(m, &in);
    if (st == RFX_OK) st = rfx_model_get_info(in.surrogate, &sin);
    if (st != RFX_OK) return cli_fail(st);
    fprintf(out, "%-16s %s\n", "file", cli_escape(path, q, sizeof q));
    fprintf(out, "%-16s %lld bytes\n", "file size", file_size);
    fprintf(out, "%-16s %s\n", "method", "projected");
    fprintf(out, "%-16s %zu\n", "inputs d", in.n_inputs);
    fprintf(out, "%-16s %d\n", "targets", 1);
    fprintf(out, "%-16s %zu\n", "rows trained", in.n_train);
    fprintf(out, "%-16s %zu\n", "components k", in.n_components);
    fprintf(out, "%-16s %.6g\n", "gamma", in.gamma);
    fprintf(out, "%-16s %s\n", "standardized", yes_no(in.standardized));
    fprintf(out, "%-16s", "theta");
    for (size_t j = 0; j < in.n_inputs; j++) fprintf(out, " %.6g", in.theta[j]);
    fputc('\n', out);
    fprintf(out, "%-16s %.6g\n", "loss", in.loss);
    char tr[64] = "";
    if (sin.target_transform == RFX_TARGET_BOXCOX)
        snprintf(tr, sizeof tr, " of boxcox(y), lambda %.6g", sin.target_lambda);
    else if (sin.target_transform != RFX_TARGET_NONE)
        snprintf(tr, sizeof tr, " of %s(y)",
                 rfx_target_transform_name((rfx_target_transform)sin.target_transform));
    fprintf(out, "%-16s %s%s, on the %zu scores%s:\n", "surrogate", rfx_method_name(sin.method),
            tr, in.n_components, tr[0] ? " (predicts y)" : "");
    if (rfx_model_pce(in.surrogate)) return print_pce_info(out, NULL, in.surrogate, file_size);
    print_model_info(out, NULL, &sin, file_size);
    return RC_OK;
}

/* The model's schema, when it has one: its input names in order (escaped:
 * they come from a file), and its target's name. */
static void print_schema(FILE *out, const rfx_model *m, size_t d)
{
    char q[1024];
    if (!rfx_model_input_name(m, 0)) {
        fprintf(out, "%-16s none (inputs are taken by position)\n", "input names");
        return;
    }
    fprintf(out, "%-16s", "input names");
    for (size_t j = 0; j < d; j++)
        fprintf(out, "%s%s", j ? ", " : " ", cli_escape(rfx_model_input_name(m, j), q, sizeof q));
    fputc('\n', out);
    if (rfx_model_target_name(m))
        fprintf(out, "%-16s %s\n", "target name", cli_escape(rfx_model_target_name(m), q, sizeof q));
}

/* The training box, when the model has one: [lo, hi] per input. */
static void print_box(FILE *out, const rfx_model *m, size_t d)
{
    const double *lo, *hi;
    if (!rfx_model_input_box(m, &lo, &hi)) return;
    fprintf(out, "%-16s", "input box");
    for (size_t j = 0; j < d; j++) fprintf(out, " [%.6g, %.6g]", lo[j], hi[j]);
    fputc('\n', out);
}

/* ---- --format json ------------------------------------------------------- */

/* The model's members as JSON (see the help for the shape); nested: the
 * surrogate of a projected model. RC_OK or the exit code. */
static int json_model(json_writer *w, const rfx_model *m)
{
    rfx_model_info in;
    rfx_status st = rfx_model_get_info(m, &in);
    if (st != RFX_OK) return cli_fail(st);
    const size_t d = in.n_inputs;
    json_str(w, "method", rfx_method_name(in.method));
    json_size(w, "inputs", d);
    json_size(w, "targets", in.n_targets);
    json_size(w, "rows_trained", in.n_train);
    if (rfx_model_input_name(m, 0)) {
        json_open(w, "input_names", '[');
        for (size_t j = 0; j < d; j++) json_str(w, NULL, rfx_model_input_name(m, j));
        json_close(w, ']');
    } else {
        json_str(w, "input_names", NULL);
    }
    json_str(w, "target_name", rfx_model_target_name(m));
    const double *blo, *bhi;
    if (rfx_model_input_box(m, &blo, &bhi)) {
        json_open(w, "input_box", '[');
        for (size_t j = 0; j < d; j++) {
            json_open(w, NULL, '[');
            json_num(w, NULL, blo[j]);
            json_num(w, NULL, bhi[j]);
            json_close(w, ']');
        }
        json_close(w, ']');
    } else {
        json_str(w, "input_box", NULL);
    }
    json_str(w, "target_transform",
             rfx_target_transform_name((rfx_target_transform)in.target_transform));
    if (in.target_transform == RFX_TARGET_BOXCOX) json_num(w, "target_lambda", in.target_lambda);
    const rfx_pce *pce = rfx_model_pce(m);
    if (pce) {
        rfx_pce_info pi;
        if ((st = rfx_pce_get_info(pce, &pi)) != RFX_OK) return cli_fail(st);
        const rfx_marginal *mg = rfx_pce_marginals(pce);
        double *sob = malloc(2 * d * sizeof *sob);
        unsigned *alpha = malloc(d * sizeof *alpha);
        if (!sob || !alpha || (st = rfx_pce_sobol(pce, sob, sob + d)) != RFX_OK) {
            free(sob);
            free(alpha);
            if (st != RFX_OK) return cli_fail(st);
            cli_say("out of memory for %zu inputs", d);
            return RC_INTERNAL;
        }
        json_open(w, "marginals", '[');
        for (size_t j = 0; j < d; j++) {
            json_open(w, NULL, '{');
            json_str(w, "kind", mg[j].kind == RFX_MARGINAL_NORMAL ? "normal" : "uniform");
            json_num(w, "a", mg[j].a);
            json_num(w, "b", mg[j].b);
            json_close(w, '}');
        }
        json_close(w, ']');
        json_size(w, "degree", pi.degree);
        json_str(w, "pce_method", pi.n_train == 0 ? "none"
                                  : pi.method == RFX_PCE_METHOD_LARS ? "lars" : "lsq");
        json_size(w, "candidates", pi.n_candidates);
        json_num(w, "loo_mse", pi.loo_mse);
        json_num(w, "loo_relative", pi.loo_relative);
        json_num(w, "loo_corrected", pi.loo_corrected);
        json_num(w, "mean", pi.mean);
        json_num(w, "variance", pi.variance);
        json_nums(w, "sobol_first", sob, d);
        json_nums(w, "sobol_total", sob + d, d);
        json_open(w, "terms", '[');
        for (size_t k = 0; k < pi.n_terms && st == RFX_OK; k++) {
            double c = 0;
            if ((st = rfx_pce_term(pce, k, &c, alpha)) != RFX_OK) break;
            json_open(w, NULL, '{');
            json_num(w, "coefficient", c);
            json_open(w, "multi_index", '[');
            for (size_t j = 0; j < d; j++) json_size(w, NULL, alpha[j]);
            json_close(w, ']');
            json_close(w, '}');
        }
        json_close(w, ']');
        free(sob);
        free(alpha);
        return st == RFX_OK ? RC_OK : cli_fail(st);
    }
    if (in.method == RFX_METHOD_PROJECTED) {
        rfx_projected_info pi;
        if ((st = rfx_model_projected_info(m, &pi)) != RFX_OK) return cli_fail(st);
        json_size(w, "components", pi.n_components);
        json_num(w, "gamma", pi.gamma);
        json_bool(w, "standardized", pi.standardized);
        json_nums(w, "theta", pi.theta, d);
        json_num(w, "loss", pi.loss);
        json_open(w, "surrogate", '{');
        int rc = json_model(w, pi.surrogate);
        json_close(w, '}');
        return rc;
    }
    const rfx_features_params *f = &in.features;
    json_str(w, "kernel", rfx_kernel_name(f->kernel));
    if (f->kernel == RFX_KERNEL_MATERN) json_num(w, "nu", f->nu);
    json_str(w, "form", rfx_form_name(f->form));
    json_str(w, "structure", rfx_structure_name(f->structure));
    if (f->structure == RFX_STRUCTURE_SORF) json_size(w, "structure_version", f->structure_version);
    json_str(w, "activation", rfx_activation_name(f->activation));
    json_size(w, "sparsity", f->sparsity);
    json_str(w, "weights", rfx_weights_name(f->weights));
    json_num(w, "weight_scale", f->weight_scale);
    json_size(w, "features", f->n_features);
    json_size(w, "seed", (size_t)f->seed);
    if (f->length_scales) json_nums(w, "length_scales", f->length_scales, d);
    else json_num(w, "length_scale", f->length_scale);
    json_num(w, "lambda", in.lambda);
    if (in.method == RFX_METHOD_BAYES) {
        json_num(w, "noise_variance", in.noise_var);
        json_num(w, "prior_variance", in.prior_var);
        json_num(w, "log_evidence", in.log_evidence);
    }
    json_bool(w, "standardized", in.standardized);
    json_bool(w, "intercept", in.fit_intercept);
    json_bool(w, "predictive_std", in.has_std);
    if (in.method == RFX_METHOD_CLASSIFY) {
        rfx_classifier_info ci;
        const double *classes;
        size_t C = 0;
        st = rfx_model_classifier_info(m, &ci);
        if (st == RFX_OK) st = rfx_model_classes(m, &classes, &C);
        if (st != RFX_OK) return cli_fail(st);
        json_str(w, "loss", rfx_loss_name(ci.loss));
        json_str(w, "multiclass", ci.multiclass == RFX_MULTICLASS_SOFTMAX ? "softmax" : "ovr");
        json_nums(w, "classes", classes, C);
        json_size(w, "score_columns", ci.n_columns);
        json_bool(w, "probabilities", ci.probabilities);
    }
    return RC_OK;
}

static int cmd_info(const command *c, int argc, char **argv)
{
    const char *path = NULL, *v, *out_path = NULL;
    opt_iter it = cli_opt_begin(c, argc, argv);
    int id, json = 0;

    while ((id = cli_opt_next(&it, &v)) != OPT_DONE) {
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return cli_print_command_help(c);
        case OPT_POSITIONAL:
            if (path) return cli_usage_error(c, "unexpected argument '%s' (one MODEL)", v);
            path = v;
            break;
        case O_FORMAT:
            if (cli_parse_format(&it, v, &json)) return RC_USAGE;
            break;
        case O_OUTPUT: out_path = v; break;
        default: return cli_usage_error(c, "internal: unhandled option %s", it.name);
        }
    }
    if (!path) return cli_usage_error(c, "missing MODEL");
    int checked = cli_check_output(c, out_path, &path, 1);
    if (checked != RC_OK) return checked;

    rfx_model *model = NULL;
    rfx_model_info info;
    struct stat sb;
    int rc = RC_OK;
    rfx_status st = rfx_model_load(path, &model);
    if (st == RFX_OK) st = rfx_model_get_info(model, &info);
    if (st != RFX_OK) {
        rfx_model_free(model);
        return cli_fail(st);
    }
    long long size = stat(path, &sb) == 0 ? (long long)sb.st_size : -1LL;
    cli_report report;
    rc = cli_report_open(&report, out_path, json);
    if (rc != RC_OK) {
        rfx_model_free(model);
        return rc;
    }
    FILE *out = report.fp;
    if (json) {
        json_writer w;
        char q[1024];
        json_begin(&w, out);
        json_str(&w, "file", cli_escape(path, q, sizeof q));
        json_num(&w, "file_size", (double)size);
        rc = json_model(&w, model);
        json_end(&w);
    } else {
        if (rfx_model_pce(model))
            rc = print_pce_info(out, path, model, size);
        else if (info.method == RFX_METHOD_PROJECTED)
            rc = print_projected_info(out, path, model, size);
        else
            print_model_info(out, path, &info, size);
        if (rc == RC_OK && info.method == RFX_METHOD_CLASSIFY)
            rc = print_classifier_info(out, model);
        if (rc == RC_OK && info.target_transform == RFX_TARGET_BOXCOX)
            fprintf(out, "%-16s boxcox, lambda %.6g (fitted to T(y), predicts y)\n",
                    "target transform", info.target_lambda);
        else if (rc == RC_OK && info.target_transform != RFX_TARGET_NONE)
            fprintf(out, "%-16s %s (fitted to T(y), predicts y)\n", "target transform",
                    rfx_target_transform_name((rfx_target_transform)info.target_transform));
        if (rc == RC_OK) print_schema(out, model, info.n_inputs);
        if (rc == RC_OK) print_box(out, model, info.n_inputs);
    }
    rfx_model_free(model);
    return cli_report_close(&report, rc);
}
