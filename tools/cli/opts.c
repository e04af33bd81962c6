/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * opts.c - the option parser of the rfx command-line tool and its help:
 * the table-driven walk over argv (one opt_spec table per command serves
 * both the parser and --help), the value parsers of options used by several
 * commands or of general kinds (numbers, whole numbers, lists, seeds,
 * threads, pairs, the CSV delimiter, the kernel settings), and the printing
 * of rfx --help and of each command's help.
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Help                                                                      */
/* ------------------------------------------------------------------------ */

enum { HELP_INDENT = 28, HELP_WIDTH = 79 };

const cli_exit_code_doc cli_exit_codes[] = {
    { RC_OK, "success" },
    { RC_USAGE, "usage error: unknown option, missing argument, bad option value" },
    { RC_DATA, "input data error: CSV/.npy parse error, NaN/Inf, wrong dimensions" },
    { RC_MODEL, "model file error: corrupt, truncated, or written by a newer rfx" },
    { RC_NUMERIC, "numerical failure" },
    { RC_IO, "I/O error: a file cannot be opened, read or written" },
    { RC_INTERNAL, "out of memory, or an internal error" },
    { -1, NULL }
};

const char cli_description[] =
    "Random feature expansions: kernel regression with random Fourier features,\n"
    "with predictive uncertainty, for surrogate models and large data; sparse\n"
    "random feature expansions and polynomial chaos for surrogates from few\n"
    "samples.\n";

const cli_env_doc cli_environment[] = {
    { "OMP_NUM_THREADS", "threads, where --threads is 0 (the default)" },
    { "RFX_ISA", "the instruction-set path of the kernels: generic, avx2 or avx512 "
                 "(default: the best this CPU has; a path above it is capped). "
                 "rfx --version shows the path in use." },
    { NULL, NULL }
};

static void print_exit_codes(FILE *out)
{
    fputs("Exit codes:\n", out);
    for (const cli_exit_code_doc *e = cli_exit_codes; e->text; ++e)
        fprintf(out, "  %d  %s\n", e->code, e->text);
}

/* Print text word-wrapped, continuing from column col, wrapping to indent. */
static void print_wrapped_at(FILE *out, const char *text, size_t col, size_t indent)
{
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, " ");
        if (col > indent && col + 1 + len > HELP_WIDTH) {
            fprintf(out, "\n%*s", (int)indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, len, out);
        col += len;
        p += len;
        while (*p == ' ') p++;
    }
    fputc('\n', out);
}

static void print_wrapped(FILE *out, const char *text, size_t col)
{
    print_wrapped_at(out, text, col, HELP_INDENT);
}

static void print_option(FILE *out, const opt_spec *o)
{
    char left[80];
    int n;
    if (o->short_name && o->long_name)
        n = snprintf(left, sizeof left, "  -%c, --%s", o->short_name, o->long_name);
    else if (o->long_name)
        n = snprintf(left, sizeof left, "  --%s", o->long_name);
    else
        n = snprintf(left, sizeof left, "  -%c", o->short_name);
    if (o->arg && n > 0 && (size_t)n < sizeof left)
        snprintf(left + n, sizeof left - (size_t)n, " %s", o->arg);
    fputs(left, out);
    size_t col = strlen(left);
    if (col + 2 > HELP_INDENT) {
        fputc('\n', out);
        col = 0;
    }
    fprintf(out, "%*s", (int)(HELP_INDENT - col), "");
    print_wrapped(out, o->help, HELP_INDENT);
}

int cli_print_command_help(const command *c)
{
    printf("Usage: %s\n", c->usage);
    if (c->details) printf("\n%s", c->details);
    if (c->details_more) printf("%s", c->details_more);
    printf("\nOptions:\n");
    for (const opt_spec *o = c->opts; o->id != O_END; ++o) print_option(stdout, o);
    opt_spec help = { O_END, 'h', "help", NULL, "print this help and exit" };
    print_option(stdout, &help);
    putchar('\n');
    print_exit_codes(stdout);
    return RC_OK;
}

void cli_print_main_usage(FILE *out)
{
    fprintf(out,
            "Usage: rfx COMMAND [options] [arguments]\n"
            "       rfx --help | --version | help COMMAND\n");
}

int cli_print_main_help(void)
{
    cli_print_main_usage(stdout);
    printf("\n%s\nCommands:\n", cli_description);
    for (size_t i = 0; cli_commands[i]; ++i)
        printf("  %-15s %s\n", cli_commands[i]->name, cli_commands[i]->summary);
    printf("\nRun 'rfx help COMMAND' or 'rfx COMMAND --help' for its options,\n"
           "'rfx help --man' for the manual page (roff).\n"
           "Example:\n"
           "  rfx fit train.csv --target y -o model.rfx\n"
           "  rfx predict model.rfx test.csv --std -o pred.csv\n"
           "  rfx eval model.rfx test.csv --target y\n\n"
           "Environment:\n");
    for (const cli_env_doc *e = cli_environment; e->name; ++e) {
        int n = printf("  %-16s ", e->name);
        print_wrapped_at(stdout, e->text, n > 0 ? (size_t)n : 0, 19);
    }
    putchar('\n');
    print_exit_codes(stdout);
    return RC_OK;
}

/* ------------------------------------------------------------------------ */
/* Option parsing                                                            */
/* ------------------------------------------------------------------------ */

opt_iter cli_opt_begin(const command *c, int argc, char **argv)
{
    opt_iter it;
    memset(&it, 0, sizeof it);
    it.cmd = c;
    it.argc = argc;
    it.argv = argv;
    return it;
}

static const opt_spec *opt_find_long(const opt_spec *specs, const char *name, size_t len)
{
    for (const opt_spec *o = specs; o->id != O_END; ++o)
        if (o->long_name && strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
            return o;
    return NULL;
}

static const opt_spec *opt_find_short(const opt_spec *specs, char ch)
{
    for (const opt_spec *o = specs; o->id != O_END; ++o)
        if (o->short_name == ch) return o;
    return NULL;
}

/* The next option id (its value in *value), OPT_POSITIONAL (the argument in
 * *value), OPT_HELP, OPT_DONE, or OPT_ERROR after printing a message. */
int cli_opt_next(opt_iter *it, const char **value)
{
    while (it->next < it->argc) {
        const char *a = it->argv[it->next++];
        const opt_spec *o;
        const char *inline_value = NULL;
        *value = NULL;
        if (it->only_positional || a[0] != '-' || a[1] == '\0') {
            *value = a;
            return OPT_POSITIONAL;
        }
        if (strcmp(a, "--") == 0) {
            it->only_positional = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) return OPT_HELP;
        if (a[1] == '-') {
            const char *name = a + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = opt_find_long(it->cmd->opts, name, len);
            if (eq) inline_value = eq + 1;
        } else {
            o = opt_find_short(it->cmd->opts, a[1]);
            if (a[2] != '\0') inline_value = a + 2;
        }
        if (!o || (inline_value && !o->arg && a[1] != '-')) {
            cli_usage_error(it->cmd, "unknown option '%s'", a);
            return OPT_ERROR;
        }
        if (o->long_name)
            snprintf(it->name, sizeof it->name, "--%s", o->long_name);
        else
            snprintf(it->name, sizeof it->name, "-%c", o->short_name);
        if (!o->arg) {
            if (inline_value) {
                cli_usage_error(it->cmd, "option %s takes no value", it->name);
                return OPT_ERROR;
            }
            return o->id;
        }
        if (inline_value) {
            *value = inline_value;
        } else if (it->next < it->argc) {
            *value = it->argv[it->next++];
        } else {
            cli_usage_error(it->cmd, "option %s needs a value (%s)", it->name, o->arg);
            return OPT_ERROR;
        }
        return o->id;
    }
    return OPT_DONE;
}

/* The value parsers return 0, or RC_USAGE after printing why. Those of the
 * options of rfx fit alone are in cmd_fit.c. */

static int parse_double(const opt_iter *it, const char *s, double *out)
{
    char *end;
    double v = 0.0;
    if (s[0] == '\0' || isspace((unsigned char)s[0]))
        return cli_value_error(it, "'%s' is not a number", s);
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0') return cli_value_error(it, "'%s' is not a number", s);
    if (errno == ERANGE || !isfinite(v))
        return cli_value_error(it, "'%s' is not a finite number in range", s);
    *out = v;
    return 0;
}

int cli_parse_positive(const opt_iter *it, const char *s, double *out)
{
    double v = 0.0;
    if (parse_double(it, s, &v)) return RC_USAGE;
    if (!(v > 0)) return cli_value_error(it, "must be > 0, got %s", s);
    *out = v;
    return 0;
}

int cli_parse_nonnegative(const opt_iter *it, const char *s, double *out)
{
    double v = 0.0;
    if (parse_double(it, s, &v)) return RC_USAGE;
    if (!(v >= 0)) return cli_value_error(it, "must be >= 0, got %s", s);
    *out = v;
    return 0;
}

/* A whole number in [min, max] from the digits at *p; *p moves past them. */
static int parse_whole(const opt_iter *it, const char *s, const char **p, unsigned long long min,
                       unsigned long long max, unsigned long long *out)
{
    char *end;
    unsigned long long v;
    if (!isdigit((unsigned char)**p)) return cli_value_error(it, "'%s' is not a whole number", s);
    errno = 0;
    v = strtoull(*p, &end, 10);
    if (errno == ERANGE || v > max)
        return cli_value_error(it, "%.*s is too large (at most %llu)", (int)(end - *p), *p, max);
    if (v < min) return cli_value_error(it, "must be >= %llu, got %llu", min, v);
    *p = end;
    *out = v;
    return 0;
}

int cli_parse_size(const opt_iter *it, const char *s, size_t min, size_t *out)
{
    const char *p = s;
    unsigned long long v = 0;
    if (parse_whole(it, s, &p, min, SIZE_MAX, &v)) return RC_USAGE;
    if (*p != '\0') return cli_value_error(it, "'%s' is not a whole number", s);
    *out = (size_t)v;
    return 0;
}

int cli_parse_bytes(const opt_iter *it, const char *s, size_t *out)
{
    static const char UNITS[] = "KMGT";
    const char *p = s;
    unsigned long long v = 0;
    if (strcmp(s, "none") == 0) {
        *out = 0;
        return 0;
    }
    if (parse_whole(it, s, &p, 1, SIZE_MAX, &v)) return RC_USAGE;
    if (*p) {
        const char *u = strchr(UNITS, *p);
        if (!u || !(p[1] == '\0' || strcmp(p + 1, "iB") == 0 || strcmp(p + 1, "B") == 0))
            return cli_value_error(it, "'%s' is not a size: a whole number of bytes, with K, M, "
                                       "G or T (powers of 1024), or none", s);
        for (const char *k = UNITS; k <= u; k++) {
            if (v > SIZE_MAX / 1024) return cli_value_error(it, "'%s' is too large", s);
            v *= 1024;
        }
    }
    *out = (size_t)v;
    return 0;
}

int cli_parse_seed(const opt_iter *it, const char *s, uint64_t *out)
{
    const char *p = s;
    unsigned long long v = 0;
    if (parse_whole(it, s, &p, 0, UINT64_MAX, &v)) return RC_USAGE;
    if (*p != '\0') return cli_value_error(it, "'%s' is not a whole number", s);
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_threads(const opt_iter *it, const char *s, int *out)
{
    const char *p = s;
    unsigned long long v = 0;
    if (parse_whole(it, s, &p, 0, CLI_MAX_THREADS, &v)) return RC_USAGE;
    if (*p != '\0') return cli_value_error(it, "'%s' is not a whole number >= 0", s);
    *out = (int)v;
    return 0;
}

/* "10,100,1000": up to cap values, each >= min. */
int cli_parse_size_list(const opt_iter *it, const char *s, size_t min, size_t *vals, size_t cap,
                        size_t *n)
{
    const char *p = s;
    size_t k = 0;
    for (;;) {
        unsigned long long v = 0;
        if (parse_whole(it, s, &p, min, SIZE_MAX, &v)) return RC_USAGE;
        if (k == cap) return cli_value_error(it, "more than %zu values", cap);
        vals[k++] = (size_t)v;
        if (*p == '\0') break;
        if (*p != ',' || !isdigit((unsigned char)p[1]))
            return cli_value_error(it, "'%s' is not a comma-separated list of whole numbers", s);
        p++;
    }
    *n = k;
    return 0;
}

int cli_parse_kernel(const opt_iter *it, const char *s, rfx_kernel *out)
{
    if (rfx_kernel_from_name(s, out) == RFX_OK) {
        if (*out != RFX_KERNEL_CUSTOM) return 0;
        return cli_value_error(it, "the custom kernel takes a sampler of its spectral density, "
                               "which the C API (rfx_features_params.spectral) and Python "
                               "(spectral_sampler) give; here: gaussian, laplacian, cauchy or "
                               "matern");
    }
    rfx_clear_error();
    return cli_value_error(it, "unknown kernel '%s' (gaussian, laplacian, cauchy or matern)", s);
}

int cli_parse_form(const opt_iter *it, const char *s, rfx_form *out)
{
    if (rfx_form_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return cli_value_error(it, "unknown feature form '%s' (cos-bias, cos-sin or phase-free)", s);
}

int cli_parse_structure(const opt_iter *it, const char *s, rfx_structure *out)
{
    if (rfx_structure_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return cli_value_error(it, "unknown structure '%s' (iid, orthogonal, sorf, fastfood or halton)",
                           s);
}

/* "A,B": two finite numbers. */
int cli_parse_pair(const opt_iter *it, const char *s, double *a, double *b)
{
    char *end = NULL;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end != ',' || isspace((unsigned char)s[0]))
        return cli_value_error(it, "expected two numbers A,B, got '%s'", s);
    const char *t = end + 1;
    double y = strtod(t, &end);
    if (end == t || *end != '\0' || isspace((unsigned char)t[0]))
        return cli_value_error(it, "expected two numbers A,B, got '%s'", s);
    if (errno == ERANGE || !isfinite(x) || !isfinite(y))
        return cli_value_error(it, "'%s': the numbers must be finite and in range", s);
    *a = x;
    *b = y;
    return 0;
}

/* The Matern smoothness values with closed-form kernels. */
int cli_parse_nu(const opt_iter *it, const char *s, double *out)
{
    double v = 0.0;
    if (parse_double(it, s, &v)) return RC_USAGE;
    if (v != 0.5 && v != 1.5 && v != 2.5)
        return cli_value_error(it, "must be 0.5, 1.5 or 2.5, got %s", s);
    *out = v;
    return 0;
}

static int parse_delimiter(const opt_iter *it, const char *s, char *out)
{
    if (strcmp(s, "tab") == 0 || strcmp(s, "\\t") == 0 || strcmp(s, "\t") == 0) {
        *out = '\t';
        return 0;
    }
    if (s[0] == '\0' || s[1] != '\0')
        return cli_value_error(it, "must be one character or 'tab', got '%s'", s);
    if (strchr("\"\r\n.+-eE", s[0]) || isdigit((unsigned char)s[0]))
        return cli_value_error(it, "'%c' cannot separate numbers", s[0]);
    *out = s[0];
    return 0;
}

/* The options shared by commands that read data files. */
int cli_parse_read_option(const opt_iter *it, int id, const char *v, rfx_read_params *rp)
{
    if (id == O_DELIMITER) return parse_delimiter(it, v, &rp->delimiter);
    rp->has_header = 0; /* O_NO_HEADER */
    return 0;
}

/* Check the kernel options against each other and fold --gamma into the
 * length scale (scikit-learn's meaning; see rfx_kernel in rfx.h). */
int cli_kernel_opts_apply(const command *c, const kernel_opts *k, rfx_features_params *fp)
{
    if (k->have_nu && fp->kernel != RFX_KERNEL_MATERN)
        return cli_usage_error(c, "--nu applies to --kernel matern only");
    if (k->have_gamma && k->have_length_scale)
        return cli_usage_error(c, "give --gamma or --length-scale, not both");
    if (k->have_gamma) {
        if (fp->kernel == RFX_KERNEL_GAUSSIAN)
            fp->length_scale = 1.0 / sqrt(2.0 * k->gamma);
        else if (fp->kernel == RFX_KERNEL_LAPLACIAN)
            fp->length_scale = 1.0 / k->gamma;
        else
            return cli_usage_error(c, "--gamma applies to the gaussian and laplacian kernels; "
                                      "use --length-scale");
        fp->gamma = 0.0;
    }
    return 0;
}
