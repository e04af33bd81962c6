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
    "also: the loss, the multi-class scheme, the classes and the score columns.\n",
    INFO_OPTS, cmd_info
};

/* ------------------------------------------------------------------------ */
/* rfx info                                                                  */
/* ------------------------------------------------------------------------ */

static const char *yes_no(int v) { return v ? "yes" : "no"; }

/* path NULL: without the file lines (the surrogate of a projected model). */
static void print_model_info(const char *path, const rfx_model_info *in, long long file_size)
{
    char q[1024];
    const rfx_features_params *f = &in->features;
    if (path) {
        printf("%-16s %s\n", "file", cli_escape(path, q, sizeof q));
        printf("%-16s %lld bytes\n", "file size", file_size);
    }
    printf("%-16s %s\n", "method", rfx_method_name(in->method));
    printf("%-16s %s\n", "kernel", rfx_kernel_name(f->kernel));
    if (f->kernel == RFX_KERNEL_MATERN) printf("%-16s %g\n", "nu", f->nu);
    printf("%-16s %s\n", "form", rfx_form_name(f->form));
    if (f->structure != RFX_STRUCTURE_IID)
        printf("%-16s %s\n", "structure", rfx_structure_name(f->structure));
    printf("%-16s %s\n", "activation", rfx_activation_name(f->activation));
    if (f->sparsity > 0) printf("%-16s q = %zu inputs per feature\n", "sparsity", f->sparsity);
    if (f->weights != RFX_WEIGHTS_KERNEL)
        printf("%-16s %s, scale %g\n", "weights", rfx_weights_name(f->weights), f->weight_scale);
    printf("%-16s %zu\n", "inputs d", in->n_inputs);
    printf("%-16s %zu\n", "features D", f->n_features);
    printf("%-16s %zu\n", "targets", in->n_targets);
    printf("%-16s %zu\n", "rows trained", in->n_train);
    printf("%-16s %llu\n", "seed", (unsigned long long)f->seed);
    if (f->length_scales) {
        printf("%-16s", "length scales");
        for (size_t j = 0; j < in->n_inputs; ++j) printf(" %.6g", f->length_scales[j]);
        putchar('\n');
    } else {
        printf("%-16s %.6g\n", "length scale", f->length_scale);
    }
    printf("%-16s %.6g\n", "lambda", in->lambda);
    if (in->method == RFX_METHOD_BAYES) {
        printf("%-16s %.6g\n", "noise variance", in->noise_var);
        printf("%-16s %.6g\n", "prior variance", in->prior_var);
        printf("%-16s %.6g\n", "log evidence", in->log_evidence);
    }
    printf("%-16s %s\n", "standardized", yes_no(in->standardized));
    printf("%-16s %s\n", "intercept", yes_no(in->fit_intercept));
    printf("%-16s %s\n", "predictive std", yes_no(in->has_std));
}

/* rfx info of a classifier, after the feature model's lines: the loss, the
 * multi-class scheme, the classes and the score columns. */
static int print_classifier_info(const rfx_model *m)
{
    rfx_classifier_info ci;
    const double *classes;
    size_t C = 0;
    rfx_status st = rfx_model_classifier_info(m, &ci);
    if (st == RFX_OK) st = rfx_model_classes(m, &classes, &C);
    if (st != RFX_OK) return cli_fail(st);
    printf("%-16s %s\n", "loss", rfx_loss_name(ci.loss));
    if (C > 2)
        printf("%-16s %s\n", "multiclass",
               ci.multiclass == RFX_MULTICLASS_SOFTMAX ? "softmax" : "ovr (one-vs-rest)");
    printf("%-16s %zu: ", "classes", C);
    cli_print_label_list(stdout, classes, C, 50);
    putchar('\n');
    printf("%-16s %zu\n", "score columns", ci.n_columns);
    printf("%-16s %s\n", "probabilities", yes_no(ci.loss == RFX_LOSS_LOGISTIC));
    return RC_OK;
}

/* A multi-index as "(a_0,...,a_d-1)", or for many inputs its nonzero
 * entries "{i:a_i, ...}" ("{}" for the constant). */
static void print_multi_index(const unsigned *a, size_t d)
{
    enum { FULL_MAX_INPUTS = 16 };
    if (d <= FULL_MAX_INPUTS) {
        for (size_t i = 0; i < d; i++) printf("%s%u", i ? "," : "(", a[i]);
        putchar(')');
        return;
    }
    int first = 1;
    putchar('{');
    for (size_t i = 0; i < d; i++) {
        if (!a[i]) continue;
        printf("%sx%zu:%u", first ? "" : ", ", i, a[i]);
        first = 0;
    }
    putchar('}');
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
static int print_pce_info(const char *path, const rfx_model *m, long long file_size)
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
        printf("%-16s %s\n", "file", cli_escape(path, q, sizeof q));
        printf("%-16s %lld bytes\n", "file size", file_size);
    }
    printf("%-16s %s\n", "method", "pce");
    printf("%-16s %zu\n", "inputs d", d);
    printf("%-16s %d\n", "targets", 1);
    printf("%-16s %zu\n", "rows trained", in.n_train);
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
            printf("%-16s normal N(%.6g, %.6g^2), %s (Hermite)\n", j ? "" : "marginals",
                   mg[j].a, mg[j].b, who);
        else
            printf("%-16s uniform [%.6g, %.6g], %s (Legendre)\n", j ? "" : "marginals",
                   mg[j].a, mg[j].b, who);
    }
    printf("%-16s %zu\n", "degree", in.degree);
    const char *fitted_by = in.method == RFX_PCE_METHOD_LARS ? "lars" : "lsq";
    printf("%-16s %s\n", "pce method", in.n_train == 0 ? "none (assembled)" : fitted_by);
    printf("%-16s %zu of %zu candidates\n", "terms", T, in.n_candidates);
    printf("%-16s %.6g\n", "LOO mse", in.loo_mse);
    printf("%-16s %.6g\n", "LOO relative", in.loo_relative);
    printf("%-16s %.6g\n", "LOO corrected", in.loo_corrected);
    printf("%-16s %.6g\n", "mean", in.mean);
    printf("%-16s %.6g\n", "variance", in.variance);
    qsort(order, T, sizeof *order, by_magnitude);
    size_t show = T < SHOW_TERMS ? T : SHOW_TERMS;
    printf("%-16s %zu of %zu, by |coefficient|: coefficient multi-index\n", "largest terms",
           show, T);
    for (size_t r = 0; r < show; r++) {
        printf("%-16s %13.6g  ", "", coef[order[r].k]);
        print_multi_index(alpha + order[r].k * d, d);
        putchar('\n');
    }
    rfx_model_info mi;
    const int transformed = rfx_model_get_info(m, &mi) == RFX_OK &&
                            mi.target_transform != RFX_TARGET_NONE;
    printf("%-16s from the coefficients, inputs x0..x%zu%s%s\n", "Sobol indices", d - 1,
           path ? "" : " (the scores)",
           transformed ? "; of the transformed target T(y) (rfx sobol gives those of y)" : "");
    for (int t = 0; t < 2; t++) {
        printf("%-16s", t ? "Sobol total" : "Sobol first");
        for (size_t j = 0; j < d; j++) printf(" %.4f", sob[t * d + j]);
        putchar('\n');
    }
    free(coef);
    free(sob);
    free(alpha);
    free(order);
    return RC_OK;
}

/* rfx info of a projected model: the kernel PCA, theta, the loss, then the
 * surrogate on the scores as rfx info describes a model of its method. */
static int print_projected_info(const char *path, const rfx_model *m, long long file_size)
{
    char q[1024];
    rfx_projected_info in;
    rfx_model_info sin;
    rfx_status st = rfx_model_projected_info(m, &in);
    if (st == RFX_OK) st = rfx_model_get_info(in.surrogate, &sin);
    if (st != RFX_OK) return cli_fail(st);
    printf("%-16s %s\n", "file", cli_escape(path, q, sizeof q));
    printf("%-16s %lld bytes\n", "file size", file_size);
    printf("%-16s %s\n", "method", "projected");
    printf("%-16s %zu\n", "inputs d", in.n_inputs);
    printf("%-16s %d\n", "targets", 1);
    printf("%-16s %zu\n", "rows trained", in.n_train);
    printf("%-16s %zu\n", "components k", in.n_components);
    printf("%-16s %.6g\n", "gamma", in.gamma);
    printf("%-16s %s\n", "standardized", yes_no(in.standardized));
    printf("%-16s", "theta");
    for (size_t j = 0; j < in.n_inputs; j++) printf(" %.6g", in.theta[j]);
    putchar('\n');
    printf("%-16s %.6g\n", "loss", in.loss);
    printf("%-16s %s, on the %zu scores:\n", "surrogate", rfx_method_name(sin.method),
           in.n_components);
    if (rfx_model_pce(in.surrogate)) return print_pce_info(NULL, in.surrogate, file_size);
    print_model_info(NULL, &sin, file_size);
    return RC_OK;
}

/* The model's schema, when it has one: its input names in order (escaped:
 * they come from a file), and its target's name. */
static void print_schema(const rfx_model *m, size_t d)
{
    char q[1024];
    if (!rfx_model_input_name(m, 0)) {
        printf("%-16s none (inputs are taken by position)\n", "input names");
        return;
    }
    printf("%-16s", "input names");
    for (size_t j = 0; j < d; j++)
        printf("%s%s", j ? ", " : " ", cli_escape(rfx_model_input_name(m, j), q, sizeof q));
    putchar('\n');
    if (rfx_model_target_name(m))
        printf("%-16s %s\n", "target name", cli_escape(rfx_model_target_name(m), q, sizeof q));
}

static int cmd_info(const command *c, int argc, char **argv)
{
    const char *path = NULL, *v;
    opt_iter it = cli_opt_begin(c, argc, argv);
    int id;

    while ((id = cli_opt_next(&it, &v)) != OPT_DONE) {
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return cli_print_command_help(c);
        case OPT_POSITIONAL:
            if (path) return cli_usage_error(c, "unexpected argument '%s' (one MODEL)", v);
            path = v;
            break;
        default: return cli_usage_error(c, "internal: unhandled option %s", it.name);
        }
    }
    if (!path) return cli_usage_error(c, "missing MODEL");

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
    if (rfx_model_pce(model))
        rc = print_pce_info(path, model, size);
    else if (info.method == RFX_METHOD_PROJECTED)
        rc = print_projected_info(path, model, size);
    else
        print_model_info(path, &info, size);
    if (rc == RC_OK && info.method == RFX_METHOD_CLASSIFY) rc = print_classifier_info(model);
    if (rc == RC_OK && info.target_transform == RFX_TARGET_BOXCOX)
        printf("%-16s boxcox, lambda %.6g (fitted to T(y), predicts y)\n", "target transform",
               info.target_lambda);
    else if (rc == RC_OK && info.target_transform != RFX_TARGET_NONE)
        printf("%-16s %s (fitted to T(y), predicts y)\n", "target transform",
               rfx_target_transform_name((rfx_target_transform)info.target_transform));
    if (rc == RC_OK) print_schema(model, info.n_inputs);
    rfx_model_free(model);
    return rc;
}
