/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_sobol.c - rfx sobol: its options and help, and the Sobol indices of a
 * model: Monte Carlo estimates with bootstrap intervals under given input
 * distributions, beside the exact indices of a benchmark function, of a
 * polynomial chaos model or of a sine / cosine feature model.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_sobol(const command *c, int argc, char **argv);

static const opt_spec SOBOL_OPTS[] = {
    { O_LIKE, 0, "like", "FUNCTION",
      "inputs distributed as those of a benchmark function (rfx sample --list), whose "
      "exact indices are printed beside the estimates" },
    { O_UNIFORM, 0, "uniform", "[NAME=]A,B",
      "input NAME (a name of the model's inputs, or a 0-based index) uniform on [A, B]; "
      "without NAME=, every input not given its own; repeatable" },
    { O_NORMAL, 0, "normal", "[NAME=]MU,SD", "input NAME (or every other input) normal "
      "N(MU, SD^2), SD > 0; repeatable" },
    { O_LOGNORMAL, 0, "lognormal", "[NAME=]MU,SIGMA", "input NAME (or every other input) "
      "lognormal, log x ~ N(MU, SIGMA^2), SIGMA > 0; repeatable" },
    { O_SECOND_ORDER, 0, "second-order", NULL,
      "also the second-order indices S_ij of every pair (Monte Carlo: N d more "
      "evaluations, with intervals; a PCE model's from its coefficients)" },
    { O_PLOT, 0, "plot", "OUT.png",
      "also draw the first-order and total indices as bars with their intervals (needs "
      "gnuplot)" },
    { O_POINTS, 'n', "samples", "N", "base samples N >= 2 (default 10000; N (d + 2) predictions)" },
    { O_SEED, 0, "seed", "S", "random seed of the design (default 0)" },
    { O_BOOTSTRAP, 0, "bootstrap", "B", "bootstrap resamples for the intervals (default 200)" },
    OPT_FORMAT,
    OPT_REPORT_OUTPUT,
    { O_END, 0, NULL, NULL, NULL }
};

/* rfx sobol: its synopsis, help text and options (main.c lists it). */
const command cli_sobol_command = {
    "sobol", "rfx sobol MODEL (--like FUNCTION | --uniform [NAME=]A,B | --normal [NAME=]MU,SD\n"
             "                 ...) [-n N] [--seed S] [--bootstrap B] [--plot OUT.png]\n"
             "       rfx sobol PCE_MODEL",
    "Sobol sensitivity indices of a model",
    "Estimate the first-order and total Sobol indices of the model's prediction by\n"
    "Monte Carlo (Saltelli 2010 first order, Jansen 1999 total) with 95% bootstrap\n"
    "intervals, for independent inputs distributed as given. One line per input:\n"
    "index, first order [interval], total [interval], and with --like the exact\n"
    "indices of that function when it has them.\n"
    "\n"
    "A polynomial chaos model (rfx fit --method pce) has exact indices of its own,\n"
    "from its coefficients under its input marginals (Sudret 2008): without\n"
    "--like or --uniform they are printed alone (input, first, total); with them,\n"
    "as the columns pce_first and pce_total beside the Monte Carlo estimates.\n"
    "Inputs are labelled by the model's input names when it has them, else x0, x1..\n"
    "Each input may have its own distribution: --uniform NAME=A,B or --normal\n"
    "NAME=MU,SD, NAME an input's name or 0-based index (repeat the option); one\n"
    "without NAME= sets every input not named. A PCE model's own marginals are the\n"
    "default of the inputs not given one; for other models fitted by rfx fit (or\n"
    "saved from Python), uniform on the range of the training rows. --second-order\n"
    "adds S_ij of every pair\n"
    "(text: a table after the first; JSON: \"second_order\": [{\"inputs\": [a, b],\n"
    "\"index\", \"lo\", \"hi\"}], lo and hi for Monte Carlo).\n"
    "\n"
    "--format json prints one object: \"model\", \"source\" (\"monte carlo\" or \"pce\"),\n"
    "\"mean\", \"variance\", for Monte Carlo \"evaluations\" and \"confidence\", and\n"
    "\"inputs\": one object per input with \"name\", \"first\", \"total\", for Monte Carlo\n"
    "\"first_lo\", \"first_hi\", \"total_lo\", \"total_hi\", and when available\n"
    "\"pce_first\", \"pce_total\", \"model_first\", \"model_total\", \"exact_first\",\n"
    "\"exact_total\".\n",
    SOBOL_OPTS, cmd_sobol, NULL
};

/* ------------------------------------------------------------------------ */
/* rfx sobol                                                                 */
/* ------------------------------------------------------------------------ */

/* How input j is labelled: its name (escaped) when the model has names,
 * else x<j>. */
static const char *input_label(const rfx_model *m, size_t j, char *buf, size_t size)
{
    const char *name = rfx_model_input_name(m, j);
    if (name) return cli_escape(name, buf, size);
    snprintf(buf, size, "x%zu", j);
    return buf;
}

/* The width of the input column: the longest label, at least 6. */
static int label_width(const rfx_model *m, size_t d)
{
    char b[256];
    size_t w = 6;
    for (size_t j = 0; j < d; j++) {
        size_t len = strlen(input_label(m, j, b, sizeof b));
        if (len > w) w = len;
    }
    return (int)w;
}

/* The second-order indices S_ij, i < j, as text rows (after the table)
 * or as the JSON array "second_order"; lo and hi NULL without intervals. */
static void print_second(FILE *out, json_writer *jw, const rfx_model *m, size_t d,
                         const double *S, const double *lo, const double *hi)
{
    char a[256], b[256];
    if (jw) {
        json_open(jw, "second_order", '[');
        for (size_t i = 0; i < d; i++)
            for (size_t j = i + 1; j < d; j++) {
                json_open(jw, NULL, '{');
                json_open(jw, "inputs", '[');
                json_str(jw, NULL, input_label(m, i, a, sizeof a));
                json_str(jw, NULL, input_label(m, j, b, sizeof b));
                json_close(jw, ']');
                json_num(jw, "index", S[i * d + j]);
                if (lo) {
                    json_num(jw, "lo", lo[i * d + j]);
                    json_num(jw, "hi", hi[i * d + j]);
                }
                json_close(jw, '}');
            }
        json_close(jw, ']');
        return;
    }
    const int w = label_width(m, d);
    fprintf(out, "\n# second order: S_ij of each pair%s\n", lo ? ", with its interval" : "");
    fprintf(out, "%-*s %-*s %9s%s\n", w, "input", w, "input", "second", lo ? "        lo        hi" : "");
    for (size_t i = 0; i < d; i++)
        for (size_t j = i + 1; j < d; j++) {
            fprintf(out, "%-*s %-*s %9.4f", w, input_label(m, i, a, sizeof a), w,
                    input_label(m, j, b, sizeof b), S[i * d + j]);
            if (lo) fprintf(out, " %9.4f %9.4f", lo[i * d + j], hi[i * d + j]);
            fputc('\n', out);
        }
}

/* --plot: the bars of the indices, labelled as the rows are. */
static int plot_indices(const char *path, const rfx_model *m, size_t d, const double *first,
                        const double *first_lo, const double *first_hi, const double *total,
                        const double *total_lo, const double *total_hi, const char *title)
{
    char **labels = malloc((d ? d : 1) * sizeof *labels);
    char *text = malloc((d ? d : 1) * 256);
    if (!labels || !text) {
        free(labels);
        free(text);
        cli_say("out of memory");
        return RC_INTERNAL;
    }
    for (size_t j = 0; j < d; j++) labels[j] = (char *)input_label(m, j, text + 256 * j, 256);
    int rc = cli_plot_sobol(path, (const char *const *)labels, d, first, first_lo, first_hi,
                            total, total_lo, total_hi, title);
    free(labels);
    free(text);
    return rc;
}

static int cmd_sobol(const command *c, int argc, char **argv)
{
    const char *model_path = NULL, *like = NULL, *out_path = NULL;
    int have_uniform = 0, mc_options = 0, json = 0;
    cli_dist specs[CLI_MAX_DISTS];
    size_t n_specs = 0;
    const char *plot_path = NULL;
    rfx_sobol_params sp = rfx_sobol_params_default();
    opt_iter it = cli_opt_begin(c, argc, argv);
    const char *v;
    int id;

    while ((id = cli_opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return cli_print_command_help(c);
        case OPT_POSITIONAL:
            if (model_path) return cli_usage_error(c, "unexpected argument '%s' (one MODEL)", v);
            model_path = v;
            break;
        case O_LIKE: like = v; break;
        case O_UNIFORM:
        case O_NORMAL:
        case O_LOGNORMAL:
            if (n_specs == CLI_MAX_DISTS)
                return cli_usage_error(c, "more than %d --uniform and --normal", CLI_MAX_DISTS);
            bad = cli_parse_dist(&it, v, cli_dist_kind(id), &specs[n_specs++]);
            have_uniform = 1;
            break;
        case O_PLOT: plot_path = v; break;
        case O_SECOND_ORDER: sp.second_order = 1; break;
        case O_POINTS: bad = cli_parse_size(&it, v, 2, &sp.n); mc_options = 1; break;
        case O_SEED: bad = cli_parse_seed(&it, v, &sp.seed); mc_options = 1; break;
        case O_BOOTSTRAP: bad = cli_parse_size(&it, v, 0, &sp.n_bootstrap); mc_options = 1; break;
        case O_FORMAT: bad = cli_parse_format(&it, v, &json); break;
        case O_OUTPUT: out_path = v; break;
        default: return cli_usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    if (!model_path) return cli_usage_error(c, "missing MODEL");
    int checked = cli_check_output(c, out_path, &model_path, 1);
    if (checked == RC_OK) checked = cli_check_output(c, plot_path, &model_path, 1);
    if (checked != RC_OK) return checked;
    if (plot_path && !cli_program_in_path("gnuplot")) {
        cli_say("--plot: gnuplot is not installed (not found in PATH); install it or leave out "
                "--plot");
        return RC_IO;
    }
    if (like && have_uniform)
        return cli_usage_error(c, "give the input distribution once: --like FUNCTION or "
                                  "--uniform A,B");

    rfx_model *m = NULL;
    rfx_testfn *fn = NULL;
    rfx_marginal *marg = NULL, *box_marg = NULL;
    double *buf = NULL, *exact = NULL, *pce_idx = NULL, *second = NULL;
    int rc = RC_OK, have_exact = 0;
    rfx_status st = rfx_model_load(model_path, &m);
    if (st != RFX_OK) return cli_fail(st);
    rfx_model_info info;
    rfx_model_get_info(m, &info);
    const size_t d = info.n_inputs;
    char q[1024], lab[256];
    const int w = label_width(m, d);
    cli_report report = { 0 };
    FILE *out = stdout;
    /* a PCE of a transformed target: its coefficients give the indices of
     * T(y), not of y; Monte Carlo under the expansion's marginals instead */
    const rfx_pce *pce_t = rfx_model_pce(m);
    const rfx_pce *pce = info.target_transform == RFX_TARGET_NONE ? pce_t : NULL;
    const int has_box = rfx_model_input_box(m, NULL, NULL);
    const int mc = like || have_uniform || (pce_t && !pce) || (!pce_t && has_box); /* Monte Carlo */
    if (!mc && !pce) {
        rc = cli_usage_error(c, "give the input distribution: --like FUNCTION or --uniform A,B "
                                "(the model has no training box to default to)");
        goto done;
    }
    if (!mc && mc_options) {
        rc = cli_usage_error(c, "-n, --seed and --bootstrap set the Monte Carlo estimate: give "
                                "--like FUNCTION or --uniform A,B too");
        goto done;
    }
    if (like) {
        rfx_testfn_kind kind;
        rfx_testfn_params tp = rfx_testfn_params_default();
        tp.d = d;
        if (rfx_testfn_from_name(like, &kind) != RFX_OK) {
            rc = cli_usage_error(c, "%s", rfx_last_error());
            goto done;
        }
        if ((st = rfx_testfn_create(kind, &tp, &fn)) != RFX_OK) {
            /* a function that cannot take the model's inputs: a data mismatch */
            cli_say("the model has %zu inputs: %s", d, rfx_last_error());
            rc = st == RFX_EINVAL ? RC_DATA : cli_fail(st);
            goto done;
        }
        if (rfx_testfn_dim(fn) != d) {
            cli_say("%s has %zu inputs, the model %zu", like, rfx_testfn_dim(fn), d);
            rc = RC_DATA;
            goto done;
        }
    }
    if (!(marg = malloc(2 * d * sizeof *marg)) || !(buf = malloc(8 * d * sizeof *buf)) ||
        !(exact = malloc(2 * d * sizeof *exact)) || !(pce_idx = malloc(2 * d * sizeof *pce_idx))) {
        cli_say("out of memory");
        rc = RC_INTERNAL;
        goto done;
    }
    /* the default of inputs given no distribution: a PCE's own marginals,
     * else uniform on the model's training box */
    const double *blo = NULL, *bhi = NULL;
    if (pce_t) {
        memcpy(box_marg = marg + d, rfx_pce_marginals(pce_t), d * sizeof *marg);
    } else if (rfx_model_input_box(m, &blo, &bhi)) {
        box_marg = marg + d;
        cli_box_marginals(blo, bhi, d, box_marg);
    }
    if (sp.second_order) {
        enum { MAX_SECOND_INPUTS = 4096 };
        if (d > MAX_SECOND_INPUTS || !(second = malloc(3 * d * d * sizeof *second))) {
            cli_say("--second-order: no memory for 3 x %zu x %zu indices", d, d);
            rc = RC_INTERNAL;
            goto done;
        }
        if (!mc && (st = rfx_pce_sobol_second(pce, second)) != RFX_OK) {
            rc = cli_fail(st);
            goto done;
        }
    }
    if (fn) have_exact = rfx_testfn_sobol(fn, exact, exact + d) == RFX_OK;
    if (pce && (st = rfx_pce_sobol(pce, pce_idx, pce_idx + d)) != RFX_OK) {
        rc = cli_fail(st);
        goto done;
    }
    if ((rc = cli_report_open(&report, out_path, json)) != RC_OK) goto done;
    out = report.fp;
    if (!mc) { /* the expansion's own indices only */
        double mean = 0, var = 0;
        rfx_pce_moments(pce, &mean, &var);
        if (plot_path &&
            (rc = plot_indices(plot_path, m, d, pce_idx, NULL, NULL, pce_idx + d, NULL, NULL,
                               "Sobol indices from the polynomial chaos coefficients")) != RC_OK)
            goto done;
        if (json) {
            json_writer jw;
            json_begin(&jw, out);
            json_str(&jw, "model", cli_escape(model_path, q, sizeof q));
            json_str(&jw, "source", "pce");
            json_num(&jw, "mean", mean);
            json_num(&jw, "variance", var);
            json_open(&jw, "inputs", '[');
            for (size_t j = 0; j < d; j++) {
                json_open(&jw, NULL, '{');
                json_str(&jw, "name", input_label(m, j, lab, sizeof lab));
                json_num(&jw, "first", pce_idx[j]);
                json_num(&jw, "total", pce_idx[d + j]);
                json_close(&jw, '}');
            }
            json_close(&jw, ']');
            if (second) print_second(out, &jw, m, d, second, NULL, NULL);
            json_end(&jw);
            goto done;
        }
        fprintf(out, "# Sobol indices of %s from its polynomial chaos coefficients (exact for the "
               "expansion under its input marginals): output mean %.6g, variance %.6g\n",
               cli_escape(model_path, q, sizeof q), mean, var);
        fprintf(out, "%-*s %9s %9s\n", w, "input", "first", "total");
        for (size_t j = 0; j < d; j++)
            fprintf(out, "%-*s %9.4f %9.4f\n", w, input_label(m, j, lab, sizeof lab), pce_idx[j],
                   pce_idx[d + j]);
        if (second) print_second(out, NULL, m, d, second, NULL, NULL);
        goto done;
    }
    if (fn)
        memcpy(marg, rfx_testfn_marginals(fn), d * sizeof *marg);
    else {
        const char **names = malloc((d ? d : 1) * sizeof *names);
        if (!names) {
            cli_say("out of memory");
            rc = RC_INTERNAL;
            goto done;
        }
        for (size_t j = 0; j < d; j++) names[j] = rfx_model_input_name(m, j);
        rc = cli_resolve_dists(c, rfx_model_input_name(m, 0) ? names : NULL, d, specs, n_specs,
                               box_marg, marg);
        free(names);
        if (rc != RC_OK) goto done;
    }
    rfx_sobol_result res = { 0 };
    res.first = buf;
    res.total = buf + d;
    res.first_lo = buf + 2 * d;
    res.first_hi = buf + 3 * d;
    res.total_lo = buf + 4 * d;
    res.total_hi = buf + 5 * d;
    if (sp.second_order) {
        res.second = second;
        res.second_lo = second + d * d;
        res.second_hi = second + 2 * d * d;
    }
    if ((st = rfx_sobol_model(m, 0, marg, d, &sp, &res)) != RFX_OK) {
        rc = cli_fail(st);
        goto done;
    }
    if (plot_path) {
        char title[160];
        snprintf(title, sizeof title, "Sobol indices, Monte Carlo (N = %zu), %g%% bootstrap intervals",
                 sp.n, 100 * sp.confidence);
        rc = plot_indices(plot_path, m, d, res.first, res.first_lo, res.first_hi, res.total,
                          res.total_lo, res.total_hi, title);
        if (rc != RC_OK) goto done;
    }
    /* sine / cosine feature models also have closed-form indices */
    double *rf = buf + 6 * d, rf_mean = 0, rf_var = 0;
    const int have_rf =
        !pce && rfx_sobol_model_exact(m, marg, d, &rf_mean, &rf_var, rf, rf + d, NULL) == RFX_OK;
    if (json) {
        json_writer jw;
        json_begin(&jw, out);
        json_str(&jw, "model", cli_escape(model_path, q, sizeof q));
        json_str(&jw, "source", "monte carlo");
        json_size(&jw, "evaluations", res.n_evaluations);
        json_num(&jw, "mean", res.mean);
        json_num(&jw, "variance", res.variance);
        json_num(&jw, "confidence", sp.confidence);
        json_open(&jw, "inputs", '[');
        for (size_t j = 0; j < d; j++) {
            json_open(&jw, NULL, '{');
            json_str(&jw, "name", input_label(m, j, lab, sizeof lab));
            json_num(&jw, "first", res.first[j]);
            json_num(&jw, "first_lo", res.first_lo[j]);
            json_num(&jw, "first_hi", res.first_hi[j]);
            json_num(&jw, "total", res.total[j]);
            json_num(&jw, "total_lo", res.total_lo[j]);
            json_num(&jw, "total_hi", res.total_hi[j]);
            if (pce) {
                json_num(&jw, "pce_first", pce_idx[j]);
                json_num(&jw, "pce_total", pce_idx[d + j]);
            }
            if (have_rf) {
                json_num(&jw, "model_first", rf[j]);
                json_num(&jw, "model_total", rf[d + j]);
            }
            if (have_exact) {
                json_num(&jw, "exact_first", exact[j]);
                json_num(&jw, "exact_total", exact[d + j]);
            }
            json_close(&jw, '}');
        }
        json_close(&jw, ']');
        if (second) print_second(out, &jw, m, d, second, res.second_lo, res.second_hi);
        json_end(&jw);
        goto done;
    }
    fprintf(out, "# Sobol indices of %s: %zu model evaluations, output mean %.6g, variance %.6g\n",
           cli_escape(model_path, q, sizeof q), res.n_evaluations, res.mean, res.variance);
    if (have_rf)
        fprintf(out, "# model_first, model_total: the model's indices in closed form (its mean %.6g, "
               "variance %.6g); the Monte Carlo columns estimate the same numbers\n",
               rf_mean, rf_var);
    fprintf(out, "# intervals: %g%% bootstrap percentile (lo, hi)\n", 100 * sp.confidence);
    if (pce)
        fprintf(out, "# pce_first, pce_total: from the polynomial chaos coefficients, under the "
               "model's own input marginals\n");
    fprintf(out, "%-*s %9s %9s %9s %9s %9s %9s%s%s%s\n", w, "input", "first", "lo", "hi", "total", "lo",
           "hi", pce ? "  pce_first  pce_total" : "",
           have_rf ? "  model_first  model_total" : "",
           have_exact ? "  exact_first  exact_total" : "");
    for (size_t j = 0; j < d; j++) {
        fprintf(out, "%-*s %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f", w, input_label(m, j, lab, sizeof lab),
               res.first[j], res.first_lo[j],
               res.first_hi[j], res.total[j], res.total_lo[j], res.total_hi[j]);
        if (pce) fprintf(out, "  %9.4f  %9.4f", pce_idx[j], pce_idx[d + j]);
        if (have_rf) fprintf(out, "  %11.4f  %11.4f", rf[j], rf[d + j]);
        if (have_exact) fprintf(out, "  %11.4f  %11.4f", exact[j], exact[d + j]);
        fputc('\n', out);
    }
    if (second) print_second(out, NULL, m, d, second, res.second_lo, res.second_hi);
done:
    if (report.fp) rc = cli_report_close(&report, rc);
    free(marg);
    free(buf);
    free(exact);
    free(pce_idx);
    free(second);
    rfx_testfn_free(fn);
    rfx_model_free(m);
    return rc;
}
