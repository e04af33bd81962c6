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

/* "%.17g" gives the shortest form that always reads back to the same
 * double; the decimal point is the C locale's ('.') whatever the program's
 * locale, as in the reader (rfx__c_numeric). */
rfx_status rfx_csv_write(const char *path, rfx_cmat M, const char *const *names)
{
    rfx__output o;
    rfx__c_numeric c;
    if (!path) return rfx__error(RFX_EINVAL, "rfx_csv_write: path is NULL");
    RFX__TRY(rfx__check_cmat(M, "rfx_csv_write: M"));
    if (names) {
        for (size_t j = 0; j < M.cols; j++)
            if (!names[j])
                return rfx__error(RFX_EINVAL, "rfx_csv_write: names[%zu] is NULL", j);
    }
    RFX__TRY(rfx__output_open(path, &o));
    rfx__c_numeric_begin(&c);
    if (names) {
        for (size_t j = 0; j < M.cols; j++) {
            if (j) fputc(',', o.fp);
            csv_put_name(o.fp, names[j]);
        }
        fputc('\n', o.fp);
    }
    for (size_t i = 0; i < M.rows && !ferror(o.fp); i++) {
        const double *r = M.data + i * M.stride;
        for (size_t j = 0; j < M.cols; j++) fprintf(o.fp, j ? ",%.17g" : "%.17g", r[j]);
        fputc('\n', o.fp);
    }
    rfx__c_numeric_end(&c);
    return rfx__output_commit(&o);
}

/* ---- .npy ----------------------------------------------------------------- */

/* Version 1.0: magic, version, u16 header length, the header dict padded
 * with spaces and ended by '\n' so that the data starts at a multiple of 64
 * bytes (numpy's alignment), then the values as little-endian float64. */
static void npy_put_header(FILE *fp, size_t rows, size_t cols)
{
    char dict[256];
    unsigned char pre[10];
    int len = snprintf(dict, sizeof dict,
                       "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu, %zu), }", rows,
                       cols);
    size_t total = 10 + (size_t)len + 1; /* + the '\n' */
    size_t pad = (64 - total % 64) % 64, hlen = (size_t)len + pad + 1;
    memcpy(pre, "\x93NUMPY\x01\x00", 8);
    pre[8] = (unsigned char)(hlen & 0xff);
    pre[9] = (unsigned char)(hlen >> 8);
    fwrite(pre, 1, sizeof pre, fp);
    fwrite(dict, 1, (size_t)len, fp);
    for (size_t k = 0; k < pad; k++) fputc(' ', fp);
    fputc('\n', fp);
}

rfx_status rfx_npy_write(const char *path, rfx_cmat M)
{
    enum { CHUNK = 1024 };
    unsigned char buf[CHUNK * 8];
    rfx__output o;
    if (!path) return rfx__error(RFX_EINVAL, "rfx_npy_write: path is NULL");
    RFX__TRY(rfx__check_cmat(M, "rfx_npy_write: M"));
    RFX__TRY(rfx__output_open(path, &o));
    npy_put_header(o.fp, M.rows, M.cols);
    /* Encode byte by byte so the file is little-endian on any host. */
    for (size_t i = 0; i < M.rows && !ferror(o.fp); i++) {
        const double *r = M.data + i * M.stride;
        for (size_t j0 = 0; j0 < M.cols; j0 += CHUNK) {
            size_t m = M.cols - j0 < CHUNK ? M.cols - j0 : CHUNK;
            for (size_t k = 0; k < m; k++) {
                uint64_t bits;
                memcpy(&bits, &r[j0 + k], sizeof bits);
                for (int b = 0; b < 8; b++) buf[8 * k + (size_t)b] = (unsigned char)(bits >> (8 * b));
            }
            fwrite(buf, 8, m, o.fp);
        }
    }
    return rfx__output_commit(&o);
}
