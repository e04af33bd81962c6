/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the readers' bytes come from: a file or standard input ("-"),
 * either one plain or gzip-compressed (told by its first two bytes, never
 * by its name), and, for an input that cannot seek (a pipe), a spool file
 * that lets it be read more than once.
 *
 * A plain regular file is read through its own FILE, untouched. Anything
 * else (gzip, or a pipe whose first bytes were looked at) is read through
 * a stdio stream of our own (fopencookie) whose read function replays the
 * bytes looked at, copies what it reads to the spool when asked, and
 * inflates gzip members one after another (gzip -c a b > ab is one input,
 * as gzip -d reads it).
 */
#define _GNU_SOURCE /* fopencookie */
#include "internal.h"
#include "io/input.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <zlib.h>

#define ZBUF (1u << 16)

struct rfx__input {
    FILE *fp;           /* what the parsers read                              */
    FILE *base;         /* the file, stdin or the spool                       */
    int base_stdin;     /* base is stdin: never closed                        */
    int seekable;       /* base can go back to its start                      */
    int gzip;
    int want_spool;     /* keep a copy of a pipe's bytes for rewind           */
    FILE *spool;        /* that copy (an unlinked temporary file)             */
    int spool_done;     /* the whole pipe is in the spool: read it instead    */
    long long size;     /* bytes of a regular base, -1 when unknown            */
    unsigned long long raw; /* bytes taken from base in this pass            */
    unsigned char peek[2];
    size_t npeek, ipeek; /* bytes looked at, and how many were replayed       */
    z_stream zs;
    int zinit, zend, zeof;
    unsigned char *zbuf;
    const char *shown;  /* the path as messages show it                        */
};

/* _GNU_SOURCE gives the GNU strerror_r, which returns the text. */
static const char *err_text(int err, char *buf, size_t size) { return strerror_r(err, buf, size); }

/* What went wrong with the compressed data on this thread's last read (the
 * stdio read of the cookie can only fail with an errno): the readers turn
 * it into a data error naming the file. */
static _Thread_local char problem[160];

const char *rfx__input_problem(void)
{
    static _Thread_local char taken[160];
    if (!problem[0]) return NULL;
    memcpy(taken, problem, sizeof taken);
    problem[0] = '\0';
    return taken;
}

/* Bytes of the input as stored: the peeked ones first, then base (copied
 * to the spool when one is kept). 0 at the end; -1 with errno on error. */
static ssize_t raw_read(rfx__input *in, unsigned char *buf, size_t size)
{
    size_t got = 0;
    while (in->ipeek < in->npeek && got < size) buf[got++] = in->peek[in->ipeek++];
    if (got < size) {
        size_t r = fread(buf + got, 1, size - got, in->base);
        if (r == 0 && ferror(in->base)) return -1;
        if (in->spool && r > 0 && fwrite(buf + got, 1, r, in->spool) != r) return -1;
        in->raw += r;
        got += r;
    }
    return (ssize_t)got;
}

/* The cookie's read: raw bytes, or inflated ones. */
static ssize_t cookie_read(void *cookie, char *buf, size_t size)
{
    rfx__input *in = cookie;
    if (!in->gzip) return raw_read(in, (unsigned char *)buf, size);
    in->zs.next_out = (unsigned char *)buf;
    in->zs.avail_out = size > 0x40000000u ? 0x40000000u : (uInt)size;
    while (in->zs.avail_out > 0) {
        if (in->zs.avail_in == 0 && !in->zeof) {
            ssize_t r = raw_read(in, in->zbuf, ZBUF);
            if (r < 0) return -1;
            if (r == 0) in->zeof = 1;
            in->zs.next_in = in->zbuf;
            in->zs.avail_in = (uInt)r;
        }
        if (in->zend) {
            /* after a member: another one, or the end (trailing zeros,
             * as tar pads, end it too) */
            if (in->zs.avail_in == 0) break;
            if (in->zs.next_in[0] == 0) {
                in->zs.avail_in = 0;
                continue;
            }
            if (inflateReset(&in->zs) != Z_OK) {
                errno = EIO;
                return -1;
            }
            in->zend = 0;
        }
        if (in->zs.avail_in == 0 && in->zeof) {
            snprintf(problem, sizeof problem, "gzip data cut short (the input ends inside a "
                     "compressed member, after %llu bytes)", in->raw);
            errno = EILSEQ;
            return -1;
        }
        int z = inflate(&in->zs, Z_NO_FLUSH);
        if (z == Z_STREAM_END) {
            in->zend = 1;
        } else if (z != Z_OK && z != Z_BUF_ERROR) {
            snprintf(problem, sizeof problem, "corrupt gzip data (%s, near byte %llu)",
                     in->zs.msg ? in->zs.msg : "inflate failed", in->raw);
            errno = EILSEQ;
            return -1;
        }
    }
    return (ssize_t)(size - in->zs.avail_out);
}

static int cookie_close(void *cookie)
{
    (void)cookie; /* the input owns its state */
    return 0;
}

/* Start a pass: base at its start, nothing replayed or inflated yet, and
 * fp made (base itself for a plain seekable file). */
static rfx_status start_pass(rfx__input *in)
{
    char eb[128];
    in->raw = 0;
    in->ipeek = 0;
    in->zend = in->zeof = 0;
    in->zs.avail_in = 0;
    if (in->gzip && in->zinit && inflateReset(&in->zs) != Z_OK)
        return rfx__error(RFX_ENOMEM, "%s: cannot restart the decompressor", in->shown);
    if (in->seekable) {
        in->npeek = 0; /* the peeked bytes are read again from base */
        if (fseek(in->base, 0, SEEK_SET) != 0)
            return rfx__error(RFX_EIO, "%s: cannot go back to the start: %s", in->shown,
                              err_text(errno, eb, sizeof eb));
        if (!in->gzip) {
            in->fp = in->base;
            return RFX_OK;
        }
    }
    cookie_io_functions_t io = { cookie_read, NULL, NULL, cookie_close };
    in->fp = fopencookie(in, "r", io);
    if (!in->fp) return rfx__error(RFX_ENOMEM, "%s: cannot open a stream", in->shown);
    return RFX_OK;
}

/* A spool file in TMPDIR (or /tmp), unlinked at once: it goes away with
 * its last descriptor, whatever happens to the process. */
static rfx_status open_spool(rfx__input *in)
{
    const char *dir = getenv("TMPDIR");
    char path[4096], eb[128];
    if (!dir || !*dir) dir = "/tmp";
    if ((size_t)snprintf(path, sizeof path, "%s/rfx-spool-XXXXXX", dir) >= sizeof path)
        return rfx__error(RFX_EIO, "%s: TMPDIR is too long for a spool file", in->shown);
    int fd = mkstemp(path);
    if (fd < 0)
        return rfx__error(RFX_EIO, "%s: cannot create a spool file in %s (to read the input "
                          "twice): %s", in->shown, dir, err_text(errno, eb, sizeof eb));
    unlink(path);
    in->spool = fdopen(fd, "w+b");
    if (!in->spool) {
        close(fd);
        return rfx__error(RFX_ENOMEM, "%s: cannot open the spool file", in->shown);
    }
    return RFX_OK;
}

rfx_status rfx__input_open(const char *real, const char *shown, int rewindable,
                           rfx__input **out)
{
    problem[0] = '\0';
    char eb[128];
    rfx__input *in = calloc(1, sizeof *in);
    if (!in) return rfx__error(RFX_ENOMEM, "%s: cannot allocate a reader", shown);
    in->shown = shown;
    in->size = -1;
    in->want_spool = rewindable;
    if (strcmp(real, "-") == 0) {
        in->base = stdin;
        in->base_stdin = 1;
    } else {
        in->base = fopen(real, "rb");
        if (!in->base) {
            rfx_status st = rfx__error(RFX_EIO, "%s: cannot open: %s", shown,
                                       err_text(errno, eb, sizeof eb));
            free(in);
            return st;
        }
    }
    struct stat sb;
    if (fstat(fileno(in->base), &sb) == 0 && S_ISREG(sb.st_mode)) {
        in->size = (long long)sb.st_size;
        in->seekable = ftello(in->base) >= 0 && fseek(in->base, 0, SEEK_CUR) == 0;
        if (in->base_stdin && ftello(in->base) != 0) in->seekable = 0; /* read from before */
    }
    in->npeek = fread(in->peek, 1, 2, in->base);
    if (in->npeek < 2 && ferror(in->base)) {
        rfx_status st = rfx__error(RFX_EIO, "%s: cannot read: %s", shown,
                                   err_text(errno ? errno : EIO, eb, sizeof eb));
        rfx__input_close(in);
        return st;
    }
    in->raw = in->npeek;
    in->gzip = in->npeek == 2 && in->peek[0] == 0x1f && in->peek[1] == 0x8b;
    rfx_status st = RFX_OK;
    if (in->gzip) {
        in->zbuf = malloc(ZBUF);
        if (!in->zbuf) st = rfx__error(RFX_ENOMEM, "%s: cannot allocate a buffer", shown);
        /* 15 + 32: a gzip or zlib header, told apart by zlib */
        if (!st && inflateInit2(&in->zs, 15 + 32) != Z_OK)
            st = rfx__error(RFX_ENOMEM, "%s: cannot start the decompressor", shown);
        if (!st) in->zinit = 1;
    }
    if (!st && !in->seekable && rewindable) {
        st = open_spool(in);
        /* the peeked bytes are the spool's first */
        if (!st && in->npeek && fwrite(in->peek, 1, in->npeek, in->spool) != in->npeek)
            st = rfx__error(RFX_EIO, "%s: cannot write the spool file", shown);
    }
    if (!st) {
        if (in->seekable) {
            st = start_pass(in);
        } else {
            cookie_io_functions_t io = { cookie_read, NULL, NULL, cookie_close };
            in->fp = fopencookie(in, "r", io);
            if (!in->fp) st = rfx__error(RFX_ENOMEM, "%s: cannot open a stream", shown);
        }
    }
    if (st) {
        rfx__input_close(in);
        return st;
    }
    *out = in;
    return RFX_OK;
}

rfx_status rfx__input_rewind(rfx__input *in)
{
    char eb[128];
    if (in->fp && in->fp != in->base) fclose(in->fp);
    in->fp = NULL;
    if (!in->seekable) {
        if (!in->spool)
            return rfx__error(RFX_EINVAL, "%s: cannot read this input twice (a pipe; open it "
                              "as rewindable to spool it)", in->shown);
        /* the rest of the pipe to the spool, then the spool is the input */
        if (!in->spool_done) {
            unsigned char buf[1 << 14];
            ssize_t r;
            in->npeek = in->ipeek = 0;
            while ((r = raw_read(in, buf, sizeof buf)) > 0) {
            }
            if (r < 0 || fflush(in->spool) != 0)
                return rfx__error(RFX_EIO, "%s: cannot copy the input to the spool file: %s",
                                  in->shown, err_text(errno ? errno : EIO, eb, sizeof eb));
            if (!in->base_stdin) fclose(in->base);
            in->base = in->spool;
            in->spool = NULL;
            in->base_stdin = 0;
            in->spool_done = 1;
            in->seekable = 1;
        }
    }
    return start_pass(in);
}

FILE *rfx__input_stream(const rfx__input *in) { return in->fp; }

double rfx__input_fraction(const rfx__input *in)
{
    if (in->size <= 0) return -1.0;
    long long at = in->fp == in->base ? (long long)ftello(in->base) : (long long)in->raw;
    if (at < 0) return -1.0;
    double f = (double)at / (double)in->size;
    return f > 1.0 ? 1.0 : f;
}

int rfx__input_is_regular(const rfx__input *in) { return in->fp == in->base && in->seekable; }

void rfx__input_close(rfx__input *in)
{
    if (!in) return;
    if (in->fp && in->fp != in->base) fclose(in->fp);
    if (in->base && !in->base_stdin) fclose(in->base);
    if (in->spool) fclose(in->spool);
    if (in->zinit) inflateEnd(&in->zs);
    free(in->zbuf);
    free(in);
}
