/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stream.c - DATA read in row blocks: rfx fit with --method ridge or bayes
 * and rfx predict hold a block of rows at a time, never the table. The
 * reader (rfx_reader) is wrapped as a row-block source that keeps the
 * range of each input over its first pass, for the model's training box,
 * and shows the rows read, their rate and the time left.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cli_stream {
    rfx_source src;     /* next / rewind over the reader's source             */
    rfx_reader *r;
    rfx_source *inner;  /* rfx_reader_source of r                             */
    int show;
    progress_state prog;
    char stage[48];     /* the pass, as the fit names it                       */
    double t_pass;      /* when the pass began                                 */
    int pass;
    uint64_t whole;     /* rows of the first whole pass (the time left of a pipe) */
    double *lo, *hi;    /* each input's range over the first pass              */
    int box;            /* lo and hi hold a whole pass                         */
};

static void track_box(cli_stream *s, rfx_cmat X)
{
    for (size_t i = 0; i < X.rows; i++) {
        const double *x = X.data + i * X.stride;
        const int first = rfx_reader_rows(s->r) == X.rows && i == 0;
        for (size_t j = 0; j < X.cols; j++) {
            if (first || x[j] < s->lo[j]) s->lo[j] = x[j];
            if (first || x[j] > s->hi[j]) s->hi[j] = x[j];
        }
    }
}

/* The pass's rows so far; at its end (last) always, so that its total
 * and rate show. */
static void tick(cli_stream *s, int last)
{
    if (!s->show) return;
    const uint64_t rows = rfx_reader_rows(s->r);
    double f = rfx_reader_fraction(s->r);
    if (f < 0 && s->whole) f = (double)rows / (double)s->whole;
    if (last) s->prog.last_line = -1e300;
    cli_progress_rows(&s->prog, s->stage[0] ? s->stage : "read", rows,
                      cli_now_seconds() - s->t_pass, last ? -1.0 : f);
}

void cli_stream_tick(cli_stream *s) { tick(s, 0); }

static rfx_status stream_next(rfx_source *src, rfx_block *out, int *done)
{
    cli_stream *s = src->state;
    rfx_status st = s->inner->next(s->inner, out, done); /* the reader's own source */
    if (st) return st;
    if (*done) {
        if (s->pass == 0) {
            s->box = 1;
            s->whole = rfx_reader_rows(s->r);
        }
        tick(s, 1);
        return RFX_OK;
    }
    if (s->pass == 0) track_box(s, (rfx_cmat){ out->x, out->rows, out->cols, out->stride });
    tick(s, 0);
    return RFX_OK;
}

static rfx_status stream_rewind(rfx_source *src)
{
    cli_stream *s = src->state;
    if (rfx_reader_rows(s->r) > 0 || s->box) s->pass++;
    s->t_pass = cli_now_seconds();
    return rfx_reader_rewind(s->r);
}

int cli_stream_open(const char *path, const rfx_read_params *rp, const rfx_reader_params *range,
                    int rewindable, int show, cli_stream **out)
{
    cli_stream *s = calloc(1, sizeof *s);
    if (!s) {
        cli_say("out of memory");
        return RC_INTERNAL;
    }
    rfx_reader_params pp = range ? *range : rfx_reader_params_default();
    pp.rewindable = rewindable;
    rfx_status st = rfx_reader_open(path, rp, &pp, &s->r);
    if (st == RFX_OK) st = rfx_reader_source(s->r, &s->inner);
    if (st) {
        rfx_reader_free(s->r);
        free(s);
        return cli_fail(st);
    }
    const size_t d = rfx_reader_inputs(s->r);
    s->lo = malloc(2 * d * sizeof *s->lo);
    if (!s->lo) {
        cli_stream_free(s);
        cli_say("out of memory for %zu columns", d);
        return RC_INTERNAL;
    }
    s->hi = s->lo + d;
    s->show = show;
    s->prog.lines = show && !isatty(STDERR_FILENO);
    s->t_pass = cli_now_seconds();
    s->src.next = stream_next;
    s->src.rewind = stream_rewind;
    s->src.state = s;
    *out = s;
    return RC_OK;
}

void cli_stream_free(cli_stream *s)
{
    if (!s) return;
    rfx_source_free(s->inner);
    rfx_reader_free(s->r);
    free(s->lo);
    free(s);
}

rfx_reader *cli_stream_reader(cli_stream *s) { return s->r; }
rfx_source *cli_stream_source(cli_stream *s) { return &s->src; }
uint64_t cli_stream_rows(const cli_stream *s) { return s->whole; }

int cli_stream_box(const cli_stream *s, const double **lo, const double **hi)
{
    *lo = s->lo;
    *hi = s->hi;
    return s->box;
}

int cli_stream_fit_progress(void *user, const char *stage, double fraction)
{
    cli_stream *s = user;
    if (!s->show) return 0;
    if (strncmp(stage, "read: ", 6) == 0) {
        if (s->prog.shown && !s->prog.lines && strcmp(s->stage, stage) != 0) {
            fputc('\n', stderr); /* the last pass's line stays */
            s->prog.shown = 0;
        }
        snprintf(s->stage, sizeof s->stage, "%s", stage);
        return 0;
    }
    if (s->prog.shown && !s->prog.lines && strcmp(s->prog.stage, stage) != 0) {
        fputc('\n', stderr); /* the rows' line stays */
        s->prog.shown = 0;
    }
    return cli_progress_show(&s->prog, stage, fraction);
}

void cli_stream_end(cli_stream *s) { cli_progress_end(&s->prog); }
