/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plot.c - the plots of the rfx command-line tool, by gnuplot through a
 * pipe: whether gnuplot is installed, a PNG written beside its path and
 * renamed over it, the error of kernel-approx against D, the loss
 * history of a projected fit, and Sobol indices as bars.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* 1 when an executable called name is in $PATH. */
int cli_program_in_path(const char *name)
{
    const char *path = getenv("PATH");
    char buf[4096];
    if (!path) path = "/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        if (len > 0 && len + strlen(name) + 2 <= sizeof buf) {
            memcpy(buf, path, len);
            buf[len] = '/';
            strcpy(buf + len + 1, name);
            if (access(buf, X_OK) == 0) return 1;
        }
        path += len;
        if (*path == ':') path++;
    }
    return 0;
}

/* A gnuplot single-quoted string: quotes are doubled. */
static void gnuplot_quote(FILE *gp, const char *s)
{
    fputc('\'', gp);
    for (; *s; ++s) {
        if (*s == '\'') fputc('\'', gp);
        fputc(*s, gp);
    }
    fputc('\'', gp);
}

/* Start a PNG plot of path: gnuplot reading from the returned pipe, its
 * terminal set and its output a temporary file beside path (*tmp, to pass
 * to plot_finish). NULL after saying why, with *rc the exit code. */
static FILE *plot_start(const char *path, char **tmp, int *rc)
{
    size_t len = strlen(path);
    char *t = malloc(len + 8);
    int fd;
    FILE *gp;
    *tmp = NULL;
    if (!t) {
        cli_say("out of memory");
        *rc = RC_INTERNAL;
        return NULL;
    }
    memcpy(t, path, len);
    memcpy(t + len, ".XXXXXX", 8);
    fd = mkstemp(t);
    if (fd < 0) {
        cli_say("%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        free(t);
        *rc = RC_IO;
        return NULL;
    }
    cli_interrupts_track(t);
    fchmod(fd, 0644);
    close(fd);
    signal(SIGPIPE, SIG_IGN); /* a gnuplot that dies early must not kill us */
    gp = popen("gnuplot", "w");
    if (!gp) {
        cli_say("--plot: cannot run gnuplot: %s", strerror(errno));
        unlink(t);
        cli_interrupts_track(NULL);
        free(t);
        *rc = RC_IO;
        return NULL;
    }
    fputs("if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "  set terminal pngcairo size 900,600 enhanced\n"
          "} else {\n"
          "  set terminal png size 900,600\n"
          "}\n"
          "set output ", gp);
    gnuplot_quote(gp, t);
    fputc('\n', gp);
    *tmp = t;
    return gp;
}

/* plot_start, then the plot's title. */
static FILE *plot_start_titled(const char *path, const char *title, char **tmp, int *rc)
{
    FILE *gp = plot_start(path, tmp, rc);
    if (!gp) return NULL;
    fputs("set title ", gp);
    gnuplot_quote(gp, title);
    fputc('\n', gp);
    return gp;
}

/* Close the plot of plot_start and rename its file over path; the exit
 * code. */
static int plot_finish(const char *path, char *tmp, FILE *gp)
{
    struct stat sb;
    int rc = RC_OK;
    fputs("unset output\n", gp);
    int status = pclose(gp);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        cli_say("--plot: gnuplot failed (status %d)", status);
        rc = RC_IO;
    } else if (stat(tmp, &sb) != 0 || sb.st_size == 0) {
        cli_say("--plot: gnuplot wrote nothing to %s", tmp);
        rc = RC_IO;
    } else if (rename(tmp, path) != 0) {
        cli_say("%s: %s", path, strerror(errno));
        rc = RC_IO;
    }
    if (rc != RC_OK) unlink(tmp);
    cli_interrupts_track(NULL);
    free(tmp);
    return rc;
}

/* Plot err against D (log-log) with a 1/sqrt(D) line through the first
 * point, as a PNG written beside path and renamed over it. */
int cli_plot_errors(const char *path, const size_t *Ds, const double *err, size_t m,
                    const char *title)
{
    char *tmp;
    int rc;
    FILE *gp = plot_start_titled(path, title, &tmp, &rc);
    if (!gp) return rc;
    fputs("set logscale xy\nset grid\nset key top right\n"
          "set xlabel 'D (number of random features)'\n"
          "set ylabel '|K - Z Z^T|_F / |K|_F'\n"
          "$err << EOD\n", gp);
    for (size_t i = 0; i < m; ++i) fprintf(gp, "%zu %.17g\n", Ds[i], err[i]);
    fprintf(gp, "EOD\nc = %.17g\n", err[0] * sqrt((double)Ds[0]));
    fputs("plot $err using 1:2 with linespoints lw 2 pt 7 title 'relative error', \\\n"
          "     c / sqrt(x) with lines dt 2 lw 2 title 'c / sqrt(D)'\n", gp);
    return plot_finish(path, tmp, gp);
}

/* Plot the best loss of a projected fit against the swarm iteration
 * (history[0..n], iteration 0 the initial swarm) as a PNG, as cli_plot_errors
 * does. A log scale when every loss is positive. */
int cli_plot_history(const char *path, const double *history, size_t n, const char *title)
{
    char *tmp;
    int rc, positive = 1;
    FILE *gp = plot_start_titled(path, title, &tmp, &rc);
    if (!gp) return rc;
    for (size_t t = 0; t <= n; ++t) positive = positive && history[t] > 0 && isfinite(history[t]);
    fprintf(gp, "%sset grid\nset key top right\n"
                "set xlabel 'particle swarm iteration (0: the initial swarm)'\n"
                "set ylabel 'best loss (relative MSE)'\n"
                "$loss << EOD\n", positive ? "set logscale y\n" : "");
    for (size_t t = 0; t <= n; ++t)
        if (isfinite(history[t])) fprintf(gp, "%zu %.17g\n", t, history[t]);
    fputs("EOD\n"
          "plot $loss using 1:2 with linespoints lw 2 pt 7 title 'best loss'\n", gp);
    return plot_finish(path, tmp, gp);
}

/* A gnuplot data-block string: double-quoted, with its double quotes and
 * backslashes made single quotes and slashes (a label, not data). */
static void gnuplot_label(FILE *gp, const char *s)
{
    fputc('"', gp);
    for (; *s; ++s) fputc(*s == '"' ? '\'' : *s == '\\' ? '/' : *s, gp);
    fputc('"', gp);
}

/* Bars of the first-order and total Sobol indices of d inputs, side by
 * side per input, with error bars from lo to hi when given (NULL: none),
 * as a PNG written beside path and renamed over it. */
int cli_plot_sobol(const char *path, const char *const *labels, size_t d, const double *first,
                   const double *first_lo, const double *first_hi, const double *total,
                   const double *total_lo, const double *total_hi, const char *title)
{
    char *tmp;
    int rc;
    FILE *gp = plot_start_titled(path, title, &tmp, &rc);
    if (!gp) return rc;
    fputs("set style data histograms\n"
          "set style histogram errorbars gap 2 lw 1.5\n"
          "set style fill solid 0.6 border -1\n"
          "set boxwidth 0.9\n"
          "set grid ytics\nset key top right\n"
          "set yrange [0:*]\n"
          "set ylabel 'Sobol index'\n", gp);
    if (d > 8) fputs("set xtics rotate by -45\n", gp);
    fputs("$s << EOD\n", gp);
    for (size_t j = 0; j < d; ++j) {
        gnuplot_label(gp, labels[j]);
        fprintf(gp, " %.17g %.17g %.17g %.17g %.17g %.17g\n", first[j],
                first_lo ? first_lo[j] : first[j], first_hi ? first_hi[j] : first[j], total[j],
                total_lo ? total_lo[j] : total[j], total_hi ? total_hi[j] : total[j]);
    }
    fputs("EOD\n"
          "plot $s using 2:3:4:xtic(1) title 'first order', \\\n"
          "     '' using 5:6:7 title 'total'\n", gp);
    return plot_finish(path, tmp, gp);
}
