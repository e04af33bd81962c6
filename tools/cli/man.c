/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * man.c - the manual page rfx(1), written in roff by `rfx help --man` from
 * the tables that --help prints: the command table, each command's synopsis,
 * details and option table, the environment and the exit codes. One source
 * for both, so the page cannot drift from the tool. The build runs it into
 * rfx.1, which make install puts in share/man/man1.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* Text as roff: backslashes and hyphens escaped, a line never starting with
 * a control character ('.' or '\''). Newlines are kept. */
static void roff_span(FILE *out, const char *s, size_t len)
{
    int line_start = 1;
    for (const char *end = s + len; s < end; ++s) {
        if (line_start && (*s == '.' || *s == '\'')) fputs("\\&", out);
        if (*s == '\\')
            fputs("\\e", out);
        else if (*s == '-')
            fputs("\\-", out);
        else
            fputc(*s, out);
        line_start = *s == '\n';
    }
}

static void roff_text(FILE *out, const char *s)
{
    roff_span(out, s, strlen(s));
}

/* Preformatted lines (a synopsis, a command's details) kept as they are;
 * with strip, each line without its leading blanks (a synopsis's lines are
 * indented under "Usage: " in --help). */
static void roff_block(FILE *out, const char *s, int strip)
{
    fputs(".nf\n", out);
    while (*s) {
        size_t len = strcspn(s, "\n");
        size_t skip = strip ? strspn(s, " ") : 0;
        if (skip > len) skip = len;
        roff_span(out, s + skip, len - skip);
        fputc('\n', out);
        s += len;
        if (*s == '\n') s++;
    }
    fputs(".fi\n", out);
}

static void roff_option(FILE *out, const opt_spec *o)
{
    fputs(".TP\n", out);
    if (o->short_name) fprintf(out, "\\fB\\-%c\\fR", o->short_name);
    if (o->short_name && o->long_name) fputs(", ", out);
    if (o->long_name) {
        fputs("\\fB\\-\\-", out);
        roff_text(out, o->long_name);
        fputs("\\fR", out);
    }
    if (o->arg) {
        fputs(" \\fI", out);
        roff_text(out, o->arg);
        fputs("\\fR", out);
    }
    fputc('\n', out);
    roff_text(out, o->help);
    fputc('\n', out);
}

int cli_print_man(FILE *out)
{
    fprintf(out, ".TH RFX 1 \"\" \"rfx %s\" \"User Commands\"\n", rfx_version());
    fputs(".SH NAME\nrfx \\- random feature expansions: regression, classification and "
          "surrogate models\n",
          out);
    fputs(".SH SYNOPSIS\n", out);
    roff_block(out, "rfx COMMAND [options] [arguments]\nrfx --help | --version | help COMMAND\n", 1);
    fputs(".SH DESCRIPTION\n", out);
    roff_text(out, cli_description);
    fputs(".PP\nCommands:\n", out);
    for (size_t i = 0; cli_commands[i]; ++i) {
        fputs(".TP\n\\fB", out);
        roff_text(out, cli_commands[i]->name);
        fputs("\\fR\n", out);
        roff_text(out, cli_commands[i]->summary);
        fputc('\n', out);
    }
    for (size_t i = 0; cli_commands[i]; ++i) {
        const command *c = cli_commands[i];
        fputs(".SH \"RFX ", out);
        for (const char *p = c->name; *p; ++p) fputc(*p >= 'a' && *p <= 'z' ? *p - 32 : *p, out);
        fputs("\"\n", out);
        roff_block(out, c->usage, 1);
        if (c->details) {
            fputs(".PP\n", out);
            roff_block(out, c->details, 0);
        }
        if (c->details_more) roff_block(out, c->details_more, 0);
        fputs(".PP\nOptions:\n", out);
        for (const opt_spec *o = c->opts; o->id != O_END; ++o) roff_option(out, o);
        const opt_spec help = { O_END, 'h', "help", NULL, "print this help and exit" };
        roff_option(out, &help);
    }
    fputs(".SH ENVIRONMENT\n", out);
    for (const cli_env_doc *e = cli_environment; e->name; ++e) {
        fprintf(out, ".TP\n.B %s\n", e->name);
        roff_text(out, e->text);
        fputc('\n', out);
    }
    fputs(".SH \"EXIT STATUS\"\n", out);
    for (const cli_exit_code_doc *e = cli_exit_codes; e->text; ++e) {
        fprintf(out, ".TP\n.B %d\n", e->code);
        roff_text(out, e->text);
        fputc('\n', out);
    }
    fputs(".SH \"SEE ALSO\"\nThe C API: rfx.h and its part headers; the Python package: "
          "pydoc rfx.\n",
          out);
    return ferror(out) ? RC_IO : RC_OK;
}
