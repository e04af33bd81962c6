/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi.c - rfx fit --distributed: one fit by every process of an MPI job
 * (mpirun -np K rfx fit DATA --distributed ...). Each rank reads its own
 * rows: its byte range of one file (the file cut in K equal byte ranges,
 * each row going to the range where its line starts), or its own file when
 * DATA holds %d (the rank). In --deterministic mode the ranks' rows are
 * first counted and the ranges moved to whole chunks of --chunk-rows rows,
 * so that rfx_dist's chunk tree gives the same model for any K. Then
 * rfx_dist_model_fit_source: the feature map from the shared seed, exact
 * column sums, the selection rows gathered, the statistics added; every
 * rank holds the model, rank 0 writes it. Built only with MPI.
 */
#include "cli.h"

#ifdef RFX_HAVE_MPI

#include <rfx/dist.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct cli_mpi {
    rfx_dist *d;
    int rank, size, mpi_started;
    int deterministic;
    size_t chunk_rows;
    uint64_t rows;   /* all ranks' rows                                      */
    rfx_status failed; /* how the fit failed                                   */
    char path[4096]; /* this rank's file                                     */
};

int cli_mpi_begin(int deterministic, size_t chunk_rows, double timeout, cli_mpi **out)
{
    int inited = 0;
    MPI_Initialized(&inited);
    cli_mpi *c = calloc(1, sizeof *c);
    if (!c) {
        cli_say("out of memory");
        return RC_INTERNAL;
    }
    if (!inited) {
        int provided = 0;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            cli_say("--distributed: MPI did not start (run rfx under mpirun)");
            free(c);
            return RC_IO;
        }
        c->mpi_started = 1;
    }
    rfx_dist_params dp = rfx_dist_params_default();
    dp.deterministic = deterministic;
    if (chunk_rows) dp.chunk_rows = chunk_rows;
    if (timeout != 0) dp.timeout_seconds = timeout;
    rfx_status st = rfx_dist_create(MPI_COMM_WORLD, &dp, &c->d);
    if (st) {
        int rc = cli_fail(st);
        if (c->mpi_started) MPI_Finalize();
        free(c);
        return rc;
    }
    c->rank = rfx_dist_rank(c->d);
    c->size = rfx_dist_size(c->d);
    c->deterministic = deterministic;
    c->chunk_rows = dp.chunk_rows;
    *out = c;
    return RC_OK;
}

int cli_mpi_rank(const cli_mpi *c) { return c->rank; }
uint64_t cli_mpi_rows(const cli_mpi *c) { return c->rows; }

/* DATA with one %d (and no other %): this rank's own file. */
static int own_file(const char *pattern, int rank, char *out, size_t size)
{
    const char *p = strstr(pattern, "%d");
    if (!p || strchr(p + 2, '%') || memchr(pattern, '%', (size_t)(p - pattern))) return 0;
    snprintf(out, size, "%.*s%d%s", (int)(p - pattern), pattern, rank, p + 2);
    return 1;
}

/* The rows of this rank's byte range of path: the counting pass of the
 * deterministic mode. */
static int count_rows(const char *path, const rfx_read_params *rp, const rfx_reader_params *pp,
                      uint64_t *rows)
{
    rfx_reader *r = NULL;
    rfx_status st = rfx_reader_open(path, rp, pp, &r);
    *rows = 0;
    while (st == RFX_OK) {
        rfx_cmat X, Y;
        int done = 0;
        st = rfx_reader_next(r, &X, &Y, &done);
        if (done) break;
        *rows += X.rows;
    }
    rfx_reader_free(r);
    return st == RFX_OK ? RC_OK : cli_fail(st);
}

int cli_mpi_open(cli_mpi *c, const char *path, const rfx_read_params *rp, int show,
                  cli_stream **out)
{
    rfx_reader_params pp = rfx_reader_params_default();
    char q[1024];
    int rc = RC_OK;
    rfx_status st = RFX_OK;
    if (own_file(path, c->rank, c->path, sizeof c->path)) {
        /* its own file: all of it (deterministic: the library checks that
         * the files' rows fall on whole chunks) */
    } else {
        struct stat sb;
        snprintf(c->path, sizeof c->path, "%s", path);
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            cli_say("%s: --distributed reads a regular file, cut among the ranks (or one file "
                    "per rank: DATA with %%d for the rank)", cli_escape(path, q, sizeof q));
            rc = RC_IO;
        } else {
            const uint64_t size = (uint64_t)sb.st_size, K = (uint64_t)c->size;
            pp.byte_begin = size / K * (uint64_t)c->rank + size % K * (uint64_t)c->rank / K;
            pp.byte_end = c->rank + 1 == c->size
                              ? UINT64_MAX
                              : size / K * (uint64_t)(c->rank + 1) +
                                    size % K * (uint64_t)(c->rank + 1) / K;
        }
        if (rc == RC_OK && c->deterministic) {
            /* whole chunks: rank r takes the global rows from the first chunk
             * boundary at or after its first row to the one after its last */
            uint64_t mine = 0, first = 0, total = 0;
            rc = count_rows(c->path, rp, &pp, &mine);
            /* every rank takes part in the offsets, so that none waits */
            st = rfx_dist_row_offsets(c->d, rc == RC_OK ? mine : 0, &first, &total);
            if (rc == RC_OK && st != RFX_OK) rc = cli_fail(st);
            if (rc == RC_OK) {
                const uint64_t ch = c->chunk_rows;
                uint64_t a = (first + ch - 1) / ch * ch, b = (first + mine + ch - 1) / ch * ch;
                if (a > total) a = total;
                if (b > total) b = total;
                pp.skip_rows = a - first;
                pp.max_rows = b > a ? b - a : 0;
                pp.byte_end = UINT64_MAX;
            }
        }
    }
    if (rc == RC_OK) rc = cli_stream_open(c->path, rp, &pp, 1, show && c->rank == 0, out);
    /* the others wait in the fit's first call: fail it with them (this rank
     * said why above) */
    if (rc != RC_OK) rfx_dist_agree(c->d, "DATA (readable)", "no", 2);
    return rc;
}

int cli_mpi_fit(cli_mpi *c, const rfx_fit_params *fp, cli_stream *s, rfx_model **m,
                 rfx_fit_report *report)
{
    rfx_reader *r = cli_stream_reader(s);
    /* the columns, by name and count, are the same on every rank */
    size_t len = 0;
    const size_t d = rfx_reader_inputs(r);
    for (size_t j = 0; j < d; j++) len += strlen(rfx_reader_name(r, j)) + 1;
    len += strlen(rfx_reader_name(r, SIZE_MAX)) + 1;
    char *cols = malloc(len + 1), *p = cols;
    if (!cols) {
        cli_say("out of memory");
        rfx_dist_agree(c->d, "DATA (readable)", "no", 2);
        return RC_INTERNAL;
    }
    for (size_t j = 0; j <= d; j++) {
        const char *name = rfx_reader_name(r, j < d ? j : SIZE_MAX);
        size_t k = strlen(name);
        memcpy(p, name, k + 1);
        p += k + 1;
    }
    rfx_status st = rfx_dist_agree(c->d, "DATA (readable)", "yes", 3);
    if (!st) st = rfx_dist_agree(c->d, "columns", cols, len);
    free(cols);
    if (!st)
        st = rfx_dist_model_fit_source(c->d, fp, cli_stream_source(s), d, 1, m, report);
    uint64_t first = 0;
    if (!st) st = rfx_dist_row_offsets(c->d, cli_stream_rows(s), &first, &c->rows);
    if (st) {
        c->failed = st;
        return cli_fail(st);
    }
    /* the training box: each input's range over every rank's rows */
    double *box = malloc(2 * d * sizeof *box);
    if (!box) return RC_OK; /* the model stands without it */
    const double *lo, *hi;
    const int have = cli_stream_box(s, &lo, &hi) && cli_stream_rows(s) > 0;
    for (size_t j = 0; j < d; j++) {
        box[j] = have ? lo[j] : INFINITY;
        box[d + j] = have ? -hi[j] : INFINITY; /* the max as a min */
    }
    if (MPI_Allreduce(MPI_IN_PLACE, box, (int)(2 * d), MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD) ==
        MPI_SUCCESS) {
        for (size_t j = 0; j < d; j++) box[d + j] = -box[d + j];
        rfx_model_set_input_box(*m, box, box + d);
    }
    free(box);
    return RC_OK;
}

int cli_mpi_end(cli_mpi *c, int rc)
{
    const int abort_job = c->failed == RFX_EIO; /* a rank that does not answer */
    rfx_dist_free(c->d);
    if (abort_job) MPI_Abort(MPI_COMM_WORLD, rc ? rc : RC_IO); /* the others may be stuck */
    if (c->mpi_started) MPI_Finalize();
    free(c);
    return rc;
}

#endif /* RFX_HAVE_MPI */
