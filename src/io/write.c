/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writing matrices as CSV or .npy, and bytes (a report, a JSON document).
 *
 * Both writers go through rfx__output (src/core/output.c): a temporary
 * file beside a regular destination, fsync'd and renamed over it (a reader
 * never sees a half-written file; on any error the destination is left as
 * it was), its mode kept; a symbolic link's target; a device or FIFO
 * written directly.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ---- bytes ---------------------------------------------------------------- */

rfx_status rfx_write_file(const char *path, const void *data, size_t len)
{
    rfx__output o;
    if (!path) return rfx__error(RFX_EINVAL, "rfx_write_file: path is NULL");
    if (!data && len > 0) return rfx__error(RFX_EINVAL, "rfx_write_file: data is NULL");
    RFX__TRY(rfx__output_open(path, &o));
    if (len > 0) fwrite(data, 1, len, o.fp);
    return rfx__output_commit(&o);
}

/* ---- CSV ------------------------------------------------------------------ */

/* A name is quoted when reading it back would otherwise change it: it holds
 * the delimiter, a quote or a line break, has spaces at an end (the CSV
 * parser trims them), is empty, or starts with the comment character. */
static int csv_needs_quotes(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || s[0] == '#' || s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' ||
        s[len - 1] == '\t')
        return 1;
    return strpbrk(s, ",\"\r\n") != NULL;
}

static void csv_put_name(FILE *fp, const char *s)
{
    if (!csv_needs_quotes(s)) {
        fputs(s, fp);
        return;
    }
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"') fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

/* ---- tables, a block of rows at a time --------------------------------- */

/*
 * CSV: "%.17g" gives the shortest form that always reads back to the same
 * double; the decimal point is the C locale's ('.') whatever the program's
 * locale, as in the reader (rfx__c_numeric).
 *
 * .npy, version 1.0: magic, version, u16 header length, the header dict
 * padded with spaces and ended by '\n' so that the data starts at a
 * multiple of 64 bytes (numpy's alignment), then the values as
 * little-endian float64. Streamed, the row count is known at the end: the
 * header is written with room for a 20-digit count and written again, of
 * the same length, when the writer closes.
 */

struct rfx_writer {
    rfx__output o;
    int npy;
    size_t cols;
    uint64_t rows, known;
};

#define NPY_HEADER_LEN 128 /* 10 + dict + padding + '\n': room for any shape */

static void npy_put_header(FILE *fp, uint64_t rows, size_t cols)
{
    char dict[NPY_HEADER_LEN];
    unsigned char pre[10];
    int len = snprintf(dict, sizeof dict,
                       "{'descr': '<f8', 'fortran_order': False, 'shape': (%llu, %zu), }",
                       (unsigned long long)rows, cols);
    size_t hlen = NPY_HEADER_LEN - 10; /* dict, spaces, '\n' */
    memcpy(pre, "\x93NUMPY\x01\x00", 8);
    pre[8] = (unsigned char)(hlen & 0xff);
    pre[9] = (unsigned char)(hlen >> 8);
    fwrite(pre, 1, sizeof pre, fp);
    fwrite(dict, 1, (size_t)len, fp);
    for (size_t k = (size_t)len; k + 1 < hlen; k++) fputc(' ', fp);
    fputc('\n', fp);
}

/* known_rows: a .npy header's row count when known at the start (it may
 * then go to a device or FIFO), else UINT64_MAX (written at the end). */
static rfx_status writer_open(const char *path, size_t cols, const char *const *names, int npy,
                              uint64_t known_rows, rfx_writer **out)
{
    if (!path || !out) return rfx__error(RFX_EINVAL, "rfx_writer_open: NULL argument");
    if (cols == 0 || cols > ((size_t)1 << 40))
        return rfx__error(RFX_EINVAL, "rfx_writer_open: cols must be in 1 .. 2^40, got %zu", cols);
    if (names)
        for (size_t j = 0; j < cols; j++)
            if (!names[j]) return rfx__error(RFX_EINVAL, "rfx_writer_open: names[%zu] is NULL", j);
    rfx_writer *w = calloc(1, sizeof *w);
    if (!w) return rfx__error(RFX_ENOMEM, "writer: cannot allocate");
    w->npy = npy;
    w->cols = cols;
    rfx_status st = rfx__output_open(path, &w->o);
    if (st) {
        free(w);
        return st;
    }
    w->known = known_rows;
    if (npy && w->o.direct && known_rows == UINT64_MAX) {
        rfx__output_abort(&w->o);
        free(w);
        return rfx__error(RFX_EINVAL, "%s: a .npy file must be a regular file (its header is "
                          "written again at the end); write CSV to a device or pipe", path);
    }
    if (npy) {
        npy_put_header(w->o.fp, known_rows == UINT64_MAX ? 0 : known_rows, cols);
    } else if (names) {
        for (size_t j = 0; j < cols; j++) {
            if (j) fputc(',', w->o.fp);
            csv_put_name(w->o.fp, names[j]);
        }
        fputc('\n', w->o.fp);
    }
    *out = w;
    return RFX_OK;
}

rfx_status rfx_writer_open(const char *path, size_t cols, const char *const *names,
                           rfx_writer **out)
{
    const size_t len = path ? strlen(path) : 0;
    const int npy = len >= 4 && strcmp(path + len - 4, ".npy") == 0;
    return writer_open(path, cols, names, npy, UINT64_MAX, out);
}

rfx_status rfx_writer_write(rfx_writer *w, rfx_cmat M)
{
    enum { CHUNK = 1024 };
    if (!w) return rfx__error(RFX_EINVAL, "rfx_writer_write: NULL writer");
    RFX__TRY(rfx__check_cmat(M, "rfx_writer_write: M"));
    if (M.rows > 0 && M.cols != w->cols)
        return rfx__error(RFX_EDIM, "rfx_writer_write: M has %zu columns, the table %zu", M.cols,
                          w->cols);
    FILE *fp = w->o.fp;
    if (w->npy) {
        /* byte by byte, so the file is little-endian on any host */
        unsigned char buf[CHUNK * 8];
        for (size_t i = 0; i < M.rows && !ferror(fp); i++) {
            const double *r = M.data + i * M.stride;
            for (size_t j0 = 0; j0 < M.cols; j0 += CHUNK) {
                size_t m = M.cols - j0 < CHUNK ? M.cols - j0 : CHUNK;
                for (size_t k = 0; k < m; k++) {
                    uint64_t bits;
                    memcpy(&bits, &r[j0 + k], sizeof bits);
                    for (int b = 0; b < 8; b++)
                        buf[8 * k + (size_t)b] = (unsigned char)(bits >> (8 * b));
                }
                fwrite(buf, 8, m, fp);
            }
        }
    } else {
        rfx__c_numeric c;
        rfx__c_numeric_begin(&c);
        for (size_t i = 0; i < M.rows && !ferror(fp); i++) {
            const double *r = M.data + i * M.stride;
            for (size_t j = 0; j < M.cols; j++) fprintf(fp, j ? ",%.17g" : "%.17g", r[j]);
            fputc('\n', fp);
        }
        rfx__c_numeric_end(&c);
    }
    w->rows += M.rows;
    return RFX_OK;
}

rfx_status rfx_writer_close(rfx_writer *w)
{
    if (!w) return rfx__error(RFX_EINVAL, "rfx_writer_close: NULL writer");
    rfx_status st = RFX_OK;
    if (w->npy && w->known != UINT64_MAX && w->known != w->rows)
        st = rfx__error(RFX_EINTERNAL, "%s: %llu rows written for a header of %llu", w->o.shown,
                        (unsigned long long)w->rows, (unsigned long long)w->known);
    else if (w->npy && w->known == UINT64_MAX && !ferror(w->o.fp)) {
        if (fseek(w->o.fp, 0, SEEK_SET) != 0)
            st = rfx__error(RFX_EIO, "%s: cannot go back to the header", w->o.shown);
        else
            npy_put_header(w->o.fp, w->rows, w->cols);
    }
    if (st) rfx__output_abort(&w->o);
    else st = rfx__output_commit(&w->o);
    free(w);
    return st;
}

void rfx_writer_abort(rfx_writer *w)
{
    if (!w) return;
    rfx__output_abort(&w->o);
    free(w);
}

/* A whole matrix through a writer. */
static rfx_status write_table(const char *path, rfx_cmat M, const char *const *names, int npy,
                              const char *what)
{
    rfx_writer *w = NULL;
    if (!path) return rfx__error(RFX_EINVAL, "%s: path is NULL", what);
    RFX__TRY(rfx__check_cmat(M, what));
    RFX__TRY(writer_open(path, M.cols ? M.cols : 1, names, npy, M.rows, &w));
    rfx_status st = rfx_writer_write(w, M);
    if (st) {
        rfx_writer_abort(w);
        return st;
    }
    return rfx_writer_close(w);
}

rfx_status rfx_csv_write(const char *path, rfx_cmat M, const char *const *names)
{
    return write_table(path, M, names, 0, "rfx_csv_write: M");
}

rfx_status rfx_npy_write(const char *path, rfx_cmat M)
{
    return write_table(path, M, NULL, 1, "rfx_npy_write: M");
}
