/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report.c - how the rfx command-line tool reports: library statuses mapped
 * to exit codes, the "rfx: <message>" lines of errors and usage errors,
 * progress and timing on a terminal, the output helpers (CSV on stdout,
 * column names, file extensions), class labels as text, and the handlers of
 * SIGINT, SIGTERM and SIGHUP that remove temporary files.
 */
#include "cli.h"
#include "helpers.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Exit codes and messages                                                   */
/* ------------------------------------------------------------------------ */

/* The one place where library statuses become exit codes. */
int cli_exit_code(rfx_status st)
{
    switch (st) {
    case RFX_OK: return RC_OK;
    case RFX_EINVAL: return RC_USAGE; /* a parameter from an option is bad */
    case RFX_EDIM:
    case RFX_EPARSE: return RC_DATA;
    case RFX_EFORMAT:
    case RFX_EVERSION: return RC_MODEL;
    case RFX_ENUMERIC: return RC_NUMERIC;
    case RFX_EIO: return RC_IO;
    case RFX_ENOMEM:
    case RFX_EOVERFLOW:
    case RFX_ECANCELLED:
    case RFX_EINTERNAL: return RC_INTERNAL;
    }
    return RC_INTERNAL;
}

/* The length of the well-formed UTF-8 sequence at s (2..4 bytes, not a C1
 * control, no overlong form, no surrogate, at most U+10FFFF), or 0. */
static size_t utf8_length(const unsigned char *s)
{
    size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (n == 0 || s[0] > 0xf4) return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) return 0; /* C1 controls */
    if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) return 0;
    if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))) return 0;
    return n;
}

const char *cli_escape(const char *s, char *buf, size_t size)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t used = 0;
    if (size == 0) return buf;
    while (*p && used + 5 < size) {
        size_t n = *p >= 0x80 ? utf8_length(p) : (*p >= 0x20 && *p != 0x7f);
        if (n == 0) {
            used += (size_t)snprintf(buf + used, size - used, "\\x%02x", *p);
            p++;
            continue;
        }
        if (used + n + 1 >= size) break;
        memcpy(buf + used, p, n);
        used += n;
        p += n;
    }
    buf[used] = '\0';
    return buf;
}

/* fmt with its arguments, every byte a terminal could act on escaped. */
static void say_escaped(const char *fmt, va_list ap)
{
    char text[4096], safe[4 * sizeof text];
    vsnprintf(text, sizeof text, fmt, ap);
    fputs(cli_escape(text, safe, sizeof safe), stderr);
}

/* "rfx: <message>" on stderr. */
void cli_say(const char *fmt, ...)
{
    va_list ap;
    fputs("rfx: ", stderr);
    va_start(ap, fmt);
    say_escaped(fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Report a library failure and return its exit code. */
int cli_fail(rfx_status st)
{
    const char *m = rfx_last_error();
    cli_say("%s", (m && m[0]) ? m : rfx_strerror(st));
    return cli_exit_code(st);
}

/* "rfx: <message>" and a pointer to the help; returns RC_USAGE. */
int cli_usage_error(const command *c, const char *fmt, ...)
{
    va_list ap;
    fputs("rfx: ", stderr);
    va_start(ap, fmt);
    say_escaped(fmt, ap);
    va_end(ap);
    if (c)
        fprintf(stderr, "\nTry 'rfx %s --help'.\n", c->name);
    else
        fputs("\nTry 'rfx --help'.\n", stderr);
    return RC_USAGE;
}

/* "rfx: <option>: <message>" and the help pointer; returns RC_USAGE. */
int cli_value_error(const opt_iter *it, const char *fmt, ...)
{
    va_list ap;
    char q[4 * sizeof it->name];
    fprintf(stderr, "rfx: %s: ", cli_escape(it->name, q, sizeof q));
    va_start(ap, fmt);
    say_escaped(fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'rfx %s --help'.\n", it->cmd->name);
    return RC_USAGE;
}

/* ------------------------------------------------------------------------ */
/* Interrupts                                                                */
/* ------------------------------------------------------------------------ */

/* The temporary file of a plot (plot.c), listed for the handler: set is 1
 * while path holds a name. Names that do not fit are not listed. */
static volatile sig_atomic_t plot_tmp_set;
static char plot_tmp[4096];

void cli_interrupts_track(const char *tmp)
{
    plot_tmp_set = 0;
    if (tmp && strlen(tmp) < sizeof plot_tmp) {
        memcpy(plot_tmp, tmp, strlen(tmp) + 1);
        atomic_signal_fence(memory_order_seq_cst); /* the name before the flag */
        plot_tmp_set = 1;
    }
}

/* Async-signal-safe: unlink the temporary files, then die of the signal
 * (SA_RESETHAND restored its default action), so that the parent sees
 * 128 + signo from a shell. */
static void on_interrupt(int signo)
{
    rfx_temporaries_remove();
    if (plot_tmp_set) unlink(plot_tmp);
    raise(signo);
}

void cli_interrupts_catch(void)
{
    static const int SIGNALS[] = { SIGINT, SIGTERM, SIGHUP };
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < sizeof SIGNALS / sizeof SIGNALS[0]; k++) {
        /* an ignored signal stays ignored (nohup, background jobs of sh) */
        if (sigaction(SIGNALS[k], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(SIGNALS[k], &sa, NULL);
    }
}

/* ------------------------------------------------------------------------ */
/* Progress on a terminal                                                    */
/* ------------------------------------------------------------------------ */

double cli_now_seconds(void) { return rfx_helper_seconds(); }

/* rfx_progress_fn: "\r<stage> NN%" on stderr when something changed; as
 * lines (p->lines, stderr not a terminal) "rfx: progress: <stage> NN%" for
 * a new stage, a new tenth of the work, or every 10 s. */
int cli_progress_show(void *user, const char *stage, double fraction)
{
    enum { LINE_SECONDS = 10 };
    progress_state *p = user;
    int pct = fraction <= 0 ? 0 : fraction >= 1 ? 100 : (int)(100.0 * fraction);
    if (!stage) stage = "";
    const int same_stage = p->shown && strncmp(p->stage, stage, sizeof p->stage - 1) == 0;
    if (same_stage && pct == p->percent) return 0;
    if (p->lines) {
        const double now = cli_now_seconds();
        if (same_stage && pct / 10 == p->percent / 10 && now - p->last_line < LINE_SECONDS)
            return 0;
        p->last_line = now;
    }
    snprintf(p->stage, sizeof p->stage, "%s", stage);
    p->percent = pct;
    p->shown = 1;
    if (p->lines) {
        char q[256];
        fprintf(stderr, "rfx: progress: %s %d%%\n", cli_escape(p->stage, q, sizeof q), pct);
    } else {
        fprintf(stderr, "\r%-28s %3d%%", p->stage, pct);
    }
    fflush(stderr);
    return 0;
}

/* Progress of a pass over rows: the rows so far, their rate and, when the
 * fraction done is known (fraction >= 0), the percentage and the time
 * left. On a terminal at most 4 updates a second; as lines, one per 10 s
 * within a stage. */
void cli_progress_rows(progress_state *p, const char *stage, uint64_t rows, double seconds,
                       double fraction)
{
    const double now = cli_now_seconds();
    const int same_stage = p->shown && strncmp(p->stage, stage, sizeof p->stage - 1) == 0;
    if (same_stage && now - p->last_line < (p->lines ? 10.0 : 0.25)) return;
    p->last_line = now;
    snprintf(p->stage, sizeof p->stage, "%s", stage);
    p->shown = 1;
    const double rate = seconds > 0 ? (double)rows / seconds : 0;
    char left[64] = "";
    if (fraction > 0 && fraction <= 1 && seconds > 0.5) {
        const double eta = seconds * (1 - fraction) / fraction;
        snprintf(left, sizeof left, "  %3d%%  %.0f s left", (int)(100 * fraction), eta);
    }
    char q[256];
    if (p->lines)
        fprintf(stderr, "rfx: progress: %s %llu rows, %.3g rows/s%s\n",
                cli_escape(p->stage, q, sizeof q), (unsigned long long)rows, rate, left);
    else
        fprintf(stderr, "\r%-20s %12llu rows  %9.3g rows/s%s   ", p->stage, (unsigned long long)rows,
                rate, left);
    fflush(stderr);
}

void cli_progress_end(const progress_state *p)
{
    if (p->shown && !p->lines) fputc('\n', stderr);
}

/* ------------------------------------------------------------------------ */
/* Output helpers                                                            */
/* ------------------------------------------------------------------------ */

/* Column names "prediction" (and "std"), or "prediction_j" (and "std_j") for
 * several targets: one malloc block (pointers, then the strings). */
char **cli_output_names(size_t ny, int with_std)
{
    enum { NAME_MAX_LEN = 40 };
    size_t w = with_std ? 2 * ny : ny;
    if (ny == 0 || ny > SIZE_MAX / 2 / (sizeof(char *) + NAME_MAX_LEN)) return NULL;
    char **names = malloc(w * (sizeof(char *) + NAME_MAX_LEN));
    if (!names) return NULL;
    char *text = (char *)(names + w);
    for (size_t j = 0; j < w; ++j) {
        const char *base = j < ny ? "prediction" : "std";
        names[j] = text + j * NAME_MAX_LEN;
        if (ny == 1)
            snprintf(names[j], NAME_MAX_LEN, "%s", base);
        else
            snprintf(names[j], NAME_MAX_LEN, "%s_%zu", base, j % ny);
    }
    return names;
}

/* M as CSV on stdout, 17 significant digits (what rfx_csv_write writes). */
int cli_write_csv_stdout(rfx_cmat M, const char *const *names)
{
    for (size_t j = 0; j < M.cols; ++j) printf(j ? ",%s" : "%s", names[j]);
    putchar('\n');
    for (size_t i = 0; i < M.rows; ++i) {
        const double *row = M.data + i * M.stride;
        for (size_t j = 0; j < M.cols; ++j) printf(j ? ",%.17g" : "%.17g", row[j]);
        putchar('\n');
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_say("cannot write to standard output: %s", strerror(errno));
        return RC_IO;
    }
    return RC_OK;
}

int cli_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* ------------------------------------------------------------------------ */
/* Class labels                                                              */
/* ------------------------------------------------------------------------ */

/* A class label as text: the shortest of %.15g, %.16g, %.17g that reads
 * back as the same number. */
void cli_format_label(double v, char *buf, size_t size)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* At most max labels of a list, then "... (N in all)". */
void cli_print_label_list(FILE *out, const double *v, size_t n, size_t max)
{
    char b[40];
    for (size_t k = 0; k < n && k < max; k++) {
        cli_format_label(v[k], b, sizeof b);
        fprintf(out, "%s%s", k ? " " : "", b);
    }
    if (n > max) fprintf(out, " ... (%zu in all)", n);
}

int cli_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cli_check_output(const command *c, const char *out, const char *const *inputs, size_t n_in)
{
    struct stat so, si;
    if (!out) return RC_OK;
    if (!out[0]) return cli_usage_error(c, "-o: the output path is empty");
    if (strcmp(out, "-") == 0) return RC_OK;
    int exists = stat(out, &so) == 0;
    for (size_t k = 0; exists && k < n_in; k++)
        if (inputs[k] && stat(inputs[k], &si) == 0 && si.st_dev == so.st_dev &&
            si.st_ino == so.st_ino && S_ISREG(so.st_mode))
            return cli_usage_error(c, "-o %s is the input file %s: it would be overwritten", out,
                                   inputs[k]);
    if (exists && !S_ISDIR(so.st_mode)) {
        if (access(out, W_OK) != 0) {
            cli_say("%s: cannot write: %s", out, strerror(errno));
            return RC_IO;
        }
        if (!S_ISREG(so.st_mode)) return RC_OK; /* a device or FIFO: written in place */
    }
    if (exists && S_ISDIR(so.st_mode)) {
        cli_say("%s: is a directory", out);
        return RC_IO;
    }
    /* a new or replaced regular file: its folder must take a new file */
    size_t len = strlen(out);
    char *dir = malloc(len + 2);
    if (!dir) {
        cli_say("out of memory");
        return RC_INTERNAL;
    }
    memcpy(dir, out, len + 1);
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    int rc = RC_OK;
    if (access(dir, W_OK | X_OK) != 0) {
        cli_say("%s: cannot write into %s: %s", out, dir, strerror(errno));
        rc = RC_IO;
    }
    free(dir);
    return rc;
}

int cli_write_output(const char *out_path, rfx_cmat M, const char *const *names)
{
    rfx_status st;
    if (!out_path || strcmp(out_path, "-") == 0) return cli_write_csv_stdout(M, names);
    if (cli_ends_with(out_path, ".npy")) st = rfx_npy_write(out_path, M);
    else st = rfx_csv_write(out_path, M, names);
    return st == RFX_OK ? RC_OK : cli_fail(st);
}
