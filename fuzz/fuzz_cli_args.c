/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_cli_args.c - libFuzzer target: the option parser of the rfx tool
 * (tools/cli/opts.c) with each command's option table. The input is an
 * argv, one argument per line: a command name, then its arguments (an
 * unknown name: the arguments go to every command's table). The options
 * are walked with cli_opt_next and each value goes to the value parser the
 * commands use for that option (or, for the options only one command
 * parses itself, to every general parser); the command itself never runs.
 * Built with the tool's sources, main.c's main renamed (fuzz/CMakeLists.txt).
 */
#include "fuzz_util.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_ARGS = 64, MAX_SIZES = 16 };

static void parse_value(const opt_iter *it, int id, const char *v, rfx_read_params *rp,
                        kernel_opts *ko, rfx_features_params *fp)
{
    double a = 0, b = 0;
    size_t n = 0, sizes[MAX_SIZES];
    uint64_t seed;
    int threads;
    switch (id) {
    case O_SEED: (void)cli_parse_seed(it, v, &seed); break;
    case O_THREADS: (void)cli_parse_threads(it, v, &threads); break;
    case O_KERNEL: (void)cli_parse_kernel(it, v, &fp->kernel); break;
    case O_FORM: (void)cli_parse_form(it, v, &fp->form); break;
    case O_STRUCTURE: (void)cli_parse_structure(it, v, &fp->structure); break;
    case O_NU: ko->have_nu = !cli_parse_nu(it, v, &fp->nu); break;
    case O_GAMMA: ko->have_gamma = !cli_parse_positive(it, v, &ko->gamma); break;
    case O_LENGTH_SCALE:
        ko->have_length_scale = !cli_parse_positive(it, v, &fp->length_scale);
        break;
    case O_DELIMITER:
    case O_NO_HEADER: (void)cli_parse_read_option(it, id, v, rp); break;
    case O_LAMBDA: (void)cli_parse_nonnegative(it, v, &a); break;
    case O_FEATURES: (void)cli_parse_size_list(it, v, 1, sizes, MAX_SIZES, &n); break;
    default:
        if (!v) break;
        (void)cli_parse_positive(it, v, &a);
        (void)cli_parse_nonnegative(it, v, &a);
        (void)cli_parse_size(it, v, 1, &n);
        (void)cli_parse_pair(it, v, &a, &b);
        break;
    }
}

static void parse_argv(const command *c, int argc, char **argv)
{
    rfx_read_params rp = rfx_read_params_default();
    rfx_features_params fp = rfx_features_params_default();
    kernel_opts ko;
    memset(&ko, 0, sizeof ko);
    opt_iter it = cli_opt_begin(c, argc, argv);
    const char *v;
    int id;
    while ((id = cli_opt_next(&it, &v)) != OPT_DONE) {
        if (id == OPT_ERROR) return;
        if (id == OPT_HELP) {
            (void)cli_print_command_help(c);
            return;
        }
        if (id != OPT_POSITIONAL) parse_value(&it, id, v, &rp, &ko, &fp);
    }
    (void)cli_kernel_opts_apply(c, &ko, &fp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *argv[MAX_ARGS + 1];
    int argc = 0;
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    /* one argument per line; a NUL ends the input as it ends a C string */
    for (char *p = text; argc < MAX_ARGS;) {
        argv[argc++] = p;
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }
    argv[argc] = NULL;
    const command *c = NULL;
    for (size_t i = 0; cli_commands[i]; ++i)
        if (strcmp(cli_commands[i]->name, argv[0]) == 0) c = cli_commands[i];
    if (c)
        parse_argv(c, argc - 1, argv + 1);
    else
        for (size_t i = 0; cli_commands[i]; ++i) parse_argv(cli_commands[i], argc - 1, argv + 1);
    free(text);
    return 0;
}
