/*
 * Writing matrices as CSV or .npy.
 *
 * Both writers go through a temporary file beside the destination
 * (path + ".tmp.XXXXXX", mkstemp), flush and fsync it, and rename it over
 * the destination: a reader never sees a half-written file, and on any
 * error the destination is left as it was and the temporary file removed.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* A file being written: the stream on the temporary file, and both names. */
typedef struct out_file {
    const char *path;
    char *tmp;
    FILE *fp;
} out_file;

static const char *errno_text(int err, char *buf, size_t size)
{
    if (strerror_r(err, buf, size) != 0) snprintf(buf, size, "error %d", err);
    return buf;
}

static rfx_status io_error(const char *path, const char *what, int err)
{
    char buf[128];
    return rfx__error(RFX_EIO, "%s: cannot %s: %s", path, what,
                      errno_text(err ? err : EIO, buf, sizeof buf));
}

/* Drop the temporary file after an error (errors here change nothing). */
static void out_abort(out_file *o)
{
    if (o->fp) fclose(o->fp);
    if (o->tmp) {
        remove(o->tmp);
        free(o->tmp);
    }
    o->fp = NULL;
    o->tmp = NULL;
}

static rfx_status out_open(const char *path, out_file *o)
{
    size_t len = strlen(path);
    struct stat sb;
    mode_t mode;
    int fd;
    o->path = path;
    o->fp = NULL;
    o->tmp = malloc(len + sizeof ".tmp.XXXXXX");
    if (!o->tmp) return rfx__error(RFX_ENOMEM, "%s: cannot allocate a file name", path);
    memcpy(o->tmp, path, len);
    memcpy(o->tmp + len, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    fd = mkstemp(o->tmp);
    if (fd < 0) {
        rfx_status st = io_error(path, "create a temporary file beside it", errno);
        free(o->tmp);
        o->tmp = NULL;
        return st;
    }
    /* mkstemp creates the file 0600. Keep the mode of a file we replace;
     * a new file gets 0644, the usual mode of a new file (reading the umask
     * would mean setting it, a process-wide change). */
    mode = stat(path, &sb) == 0 ? (sb.st_mode & 07777) : 0644;
    if (fchmod(fd, mode) != 0) {
        rfx_status st = io_error(path, "set the mode of the temporary file", errno);
        close(fd);
        out_abort(o);
        return st;
    }
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        rfx_status st = io_error(path, "open the temporary file", errno);
        close(fd);
        out_abort(o);
        return st;
    }
    return RFX_OK;
}

/* Flush everything to the disk, then put the file in place. */
static rfx_status out_commit(out_file *o)
{
    int err;
    if (ferror(o->fp) || fflush(o->fp) != 0 || fsync(fileno(o->fp)) != 0) {
        err = errno;
        out_abort(o);
        return io_error(o->path, "write", err);
    }
    err = fclose(o->fp);
    o->fp = NULL;
    if (err != 0) {
        err = errno;
        out_abort(o);
        return io_error(o->path, "write", err);
    }
    if (rename(o->tmp, o->path) != 0) {
        err = errno;
        out_abort(o);
        return io_error(o->path, "rename the temporary file to it", err);
    }
    free(o->tmp);
    o->tmp = NULL;
    return RFX_OK;
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
 * double; the decimal point is the C locale's, as in the reader. */
rfx_status rfx_csv_write(const char *path, rfx_cmat M, const char *const *names)
{
    out_file o;
    if (!path) return rfx__error(RFX_EINVAL, "rfx_csv_write: path is NULL");
    RFX__TRY(rfx__check_cmat(M, "rfx_csv_write: M"));
    if (names) {
        for (size_t j = 0; j < M.cols; j++)
            if (!names[j])
                return rfx__error(RFX_EINVAL, "rfx_csv_write: names[%zu] is NULL", j);
    }
    RFX__TRY(out_open(path, &o));
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
    return out_commit(&o);
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
    out_file o;
    if (!path) return rfx__error(RFX_EINVAL, "rfx_npy_write: path is NULL");
    RFX__TRY(rfx__check_cmat(M, "rfx_npy_write: M"));
    RFX__TRY(out_open(path, &o));
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
    return out_commit(&o);
}
