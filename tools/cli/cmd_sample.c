/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_sample.c - rfx sample: its options and help, the list of benchmark
 * functions, and a sample of one of them as CSV, .npy or on stdout.
 */
#include "cli.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_sample(const command *c, int argc, char **argv);

static const opt_spec SAMPLE_OPTS[] = {
    { O_POINTS, 'n', "rows", "N", "number of rows to draw, >= 1 (required)" },
    { O_DIM, 'd', "dim", "D",
      "number of inputs (default: the function's, see --list; ishigami has 3, borehole "
      "8, otl 6 and wingweight 10)" },
    { O_SEED, 0, "seed", "S", "random seed of the inputs (default 0)" },
    { O_DESIGN, 0, "design", "KIND",
      "where the inputs go: random (independent draws, the default), lhs (Latin "
      "hypercube), sobol or halton (scrambled low-discrepancy sequences; sobol for up "
      "to 1024 inputs, best with N a power of 2), mapped to each input's distribution "
      "by its quantiles" },
    { O_NO_SCRAMBLE, 0, "no-scramble", NULL,
      "sobol and halton: the plain sequence (the seed is then unused)" },
    { O_OUTPUT, 'o', "output", "OUT",
      "write the sample to OUT (.csv, or .npy by extension); '-' or absent: stdout" },
    { O_LIST, 0, "list", NULL, "list the functions with their inputs and exit" },
    { O_END, 0, NULL, NULL, NULL }
};

/* rfx sample: its synopsis, help text and options (main.c lists it). */
const command cli_sample_command = {
    "sample", "rfx sample FUNCTION -n N [-d D] [--seed S] [--design KIND] [-o OUT.csv]\n"
              "       rfx sample --list",
    "draw a sample of a benchmark function (G-function, Ishigami, ...)",
    "Draw N rows of inputs from the input distribution of a benchmark function of\n"
    "surrogate modelling and evaluate it: gfunction, ishigami, friedman1, borehole,\n"
    "srfe, otl (the OTL circuit) or wingweight (the wing weight function).\n"
    "rfx sample --list describes them; rfx/surrogate.h has the formulas.\n"
    "The output has a header line and the columns x0 .. x<d-1>, y. With the\n"
    "random and sobol designs row i depends only on the seed and i, so the first k\n"
    "rows of a larger sample are the sample of k rows; a Latin hypercube depends\n"
    "on N as a whole.\n",
    SAMPLE_OPTS, cmd_sample, NULL
};

/* ------------------------------------------------------------------------ */
/* rfx sample                                                                */
/* ------------------------------------------------------------------------ */

/* One line per test function: name, default inputs, description. */
static int print_testfn_list(void)
{
    for (int k = 0; rfx_testfn_name((rfx_testfn_kind)k); ++k) {
        rfx_testfn *f = NULL;
        rfx_status st = rfx_testfn_create((rfx_testfn_kind)k, NULL, &f);
        if (st != RFX_OK) return cli_fail(st);
        printf("%-10s d = %-3zu %s\n", rfx_testfn_name((rfx_testfn_kind)k), rfx_testfn_dim(f),
               rfx_testfn_description((rfx_testfn_kind)k));
        rfx_testfn_free(f);
    }
    return RC_OK;
}

/* Column names x0 .. x<d-1>, y: one malloc block (pointers, then text). */
static char **sample_names(size_t d)
{
    enum { NAME_LEN = 24 };
    size_t w = d + 1;
    if (w == 0 || w > SIZE_MAX / (sizeof(char *) + NAME_LEN)) return NULL;
    char **names = malloc(w * (sizeof(char *) + NAME_LEN));
    if (!names) return NULL;
    char *text = (char *)(names + w);
    for (size_t j = 0; j < w; ++j) {
        names[j] = text + j * NAME_LEN;
        if (j < d)
            snprintf(names[j], NAME_LEN, "x%zu", j);
        else
            snprintf(names[j], NAME_LEN, "y");
    }
    return names;
}

static int cmd_sample(const command *c, int argc, char **argv)
{
    rfx_testfn_params tp = rfx_testfn_params_default();
    const char *name = NULL, *out_path = NULL;
    size_t n = 0;
    uint64_t seed = 0;
    int list = 0, scramble = 1, have_design = 0;
    rfx_design_kind design = RFX_DESIGN_RANDOM;
    opt_iter it = cli_opt_begin(c, argc, argv);
    const char *v;
    int id;

    while ((id = cli_opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return cli_print_command_help(c);
        case OPT_POSITIONAL:
            if (name) return cli_usage_error(c, "unexpected argument '%s' (one FUNCTION)", v);
            name = v;
            break;
        case O_POINTS: bad = cli_parse_size(&it, v, 1, &n); break;
        case O_DIM: bad = cli_parse_size(&it, v, 1, &tp.d); break;
        case O_SEED: bad = cli_parse_seed(&it, v, &seed); break;
        case O_OUTPUT: out_path = v; break;
        case O_LIST: list = 1; break;
        case O_DESIGN:
            if (rfx_design_from_name(v, &design) != RFX_OK)
                return cli_usage_error(c, "--design: %s", rfx_last_error());
            have_design = 1;
            break;
        case O_NO_SCRAMBLE: scramble = 0; break;
        default: return cli_usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    if (list) return print_testfn_list();
    if (!name) return cli_usage_error(c, "missing FUNCTION (rfx sample --list shows them)");
    rfx_testfn_kind kind;
    if (rfx_testfn_from_name(name, &kind) != RFX_OK)
        return cli_usage_error(c, "%s", rfx_last_error());
    if (n == 0) return cli_usage_error(c, "missing -n N, the number of rows");
    if (!scramble && (!have_design || design == RFX_DESIGN_RANDOM || design == RFX_DESIGN_LHS))
        return cli_usage_error(c, "--no-scramble applies to --design sobol or halton");
    int checked = cli_check_output(c, out_path, NULL, 0);
    if (checked != RC_OK) return checked;

    rfx_testfn *f = NULL;
    double *M = NULL, *y = NULL;
    char **names = NULL;
    int rc = RC_OK;
    rfx_status st = rfx_testfn_create(kind, &tp, &f);
    if (st != RFX_OK) return cli_fail(st);
    size_t d = rfx_testfn_dim(f), w = d + 1;
    if (n > SIZE_MAX / sizeof(double) / w || !(M = malloc(n * w * sizeof *M)) ||
        !(y = malloc(n * sizeof *y)) || !(names = sample_names(d))) {
        cli_say("out of memory for %zu x %zu values", n, w);
        rc = RC_INTERNAL;
        goto done;
    }
    rfx_mat X = { M, n, d, w };
    if (design == RFX_DESIGN_RANDOM) {
        st = rfx_testfn_sample(f, seed, X, y);
    } else {
        st = rfx_design_sample(design, seed, scramble, X);
        if (st == RFX_OK)
            st = rfx_marginals_quantile(rfx_testfn_marginals(f), d, rfx_cmat_from(X), X);
        if (st == RFX_OK) st = rfx_testfn_eval(f, rfx_cmat_from(X), y);
    }
    if (st != RFX_OK) {
        rc = cli_fail(st);
        goto done;
    }
    for (size_t i = 0; i < n; ++i) M[i * w + d] = y[i];
    rc = cli_write_output(out_path, rfx_cmat_of(M, n, w), (const char *const *)names);
done:
    free(names);
    free(y);
    free(M);
    rfx_testfn_free(f);
    return rc;
}
