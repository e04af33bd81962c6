/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - main() of rfx, the command-line tool: fit random feature models
 * (regression and classification), polynomial chaos expansions and
 * surrogates on a learned kernel PCA projection to CSV or .npy files,
 * predict (with standard deviations or class probabilities), evaluate,
 * describe model files, compute Sobol indices, and measure how well random
 * features approximate a kernel matrix.
 *
 * It uses only the public API of include/rfx.h, as LIBLINEAR's train.c uses
 * linear.h. Each subcommand is one file cmd_*.c: its synopsis and help text,
 * its options, described once in a table that serves both the parser and
 * --help, and its cmd_* function. opts.c parses options and prints help,
 * report.c holds messages, exit codes, progress and output, plot.c the
 * plots by gnuplot; cli.h declares what they share. This file holds main()
 * and the table of the commands.
 *
 * Exit codes (also printed by --help):
 *   0  success
 *   1  usage error: unknown option, missing argument, bad option value
 *   2  input data error: CSV/.npy parse error, NaN/Inf, wrong dimensions
 *   3  model file error: corrupt, truncated, or written by a newer rfx
 *   4  numerical failure
 *   5  I/O error: a file cannot be opened, read or written
 *   6  out of memory, or an internal error
 * Every error is one line on stderr, "rfx: <message>", where the message is
 * rfx_last_error() for library failures. SIGINT, SIGTERM and SIGHUP remove
 * the temporary file of an output being written, then end rfx with the
 * signal's default action (status 128 + signo in a shell).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Commands                                                                  */
/* ------------------------------------------------------------------------ */

/* The commands, in the order rfx --help lists them. */
const command *const cli_commands[] = {
    &cli_fit_command, &cli_predict_command, &cli_eval_command, &cli_info_command,
    &cli_kernel_approx_command, &cli_sobol_command, &cli_sample_command, &cli_blr_command,
    &cli_kernel_sgd_command, &cli_pso_command, NULL
};

static const command *command_find(const char *name)
{
    for (size_t i = 0; cli_commands[i]; ++i)
        if (strcmp(cli_commands[i]->name, name) == 0) return cli_commands[i];
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* main                                                                      */
/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    const command *c;
    if (argc < 2) {
        cli_say("missing COMMAND");
        cli_print_main_usage(stderr);
        fputs("Try 'rfx --help'.\n", stderr);
        return RC_USAGE;
    }
    const char *isa_env = getenv("RFX_ISA");
    rfx_isa isa;
    if (isa_env && isa_env[0] && rfx_isa_from_name(isa_env, &isa) != RFX_OK)
        return cli_usage_error(NULL, "RFX_ISA: %s", rfx_last_error());
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) return cli_print_main_help();
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("rfx %s\n", rfx_version());
        printf("instruction set %s (this CPU: %s)\n", rfx_isa_name(rfx_isa_active()),
               rfx_isa_name(rfx_isa_native()));
        return RC_OK;
    }
    if (strcmp(argv[1], "help") == 0) {
        if (argc < 3) return cli_print_main_help();
        if (argc > 3) return cli_usage_error(NULL, "help takes one COMMAND");
        if (strcmp(argv[2], "--man") == 0) return cli_print_man(stdout);
        c = command_find(argv[2]);
        if (!c) return cli_usage_error(NULL, "unknown command '%s'", argv[2]);
        return cli_print_command_help(c);
    }
    cli_interrupts_catch();
    c = command_find(argv[1]);
    if (!c) {
        if (argv[1][0] == '-') return cli_usage_error(NULL, "unknown option '%s'", argv[1]);
        return cli_usage_error(NULL, "unknown command '%s'", argv[1]);
    }
    return c->run(c, argc - 2, argv + 2);
}
