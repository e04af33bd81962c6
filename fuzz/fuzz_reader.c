/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_reader.c - libFuzzer target: the reader in row blocks (rfx_reader)
 * against the whole-table reader (rfx_data_read) on the same bytes. The
 * first input byte chooses the block size and a cut; the rest is the file.
 * Whenever rfx_data_read accepts the file, the blocks must hold its rows,
 * in order, bit for bit: read whole, in two byte ranges cut anywhere
 * (every row once; or the documented refusal of a quoted line break),
 * after a rewind, and gzip-compressed. Whenever it
 * refuses, the reader must refuse too (at open or in a later block), with
 * the same status. A broken promise aborts.
 */
#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The rows of [begin, end) of path in blocks, appended to *rows / count:
 * RFX_OK or the status that stopped the reading. */
static rfx_status read_blocks(const char *path, size_t block, uint64_t begin, uint64_t end,
                              int rewind, double **rows, size_t *count, size_t *width)
{
    rfx_reader_params pp = rfx_reader_params_default();
    pp.block_rows = block;
    pp.byte_begin = begin;
    pp.byte_end = end;
    rfx_reader *r = NULL;
    rfx_status st = rfx_reader_open(path, NULL, &pp, &r);
    for (int pass = 0; st == RFX_OK && pass <= rewind; pass++) {
        if (pass) st = rfx_reader_rewind(r);
        size_t got = 0;
        while (st == RFX_OK) {
            rfx_cmat X, Y;
            int done = 0;
            st = rfx_reader_next(r, &X, &Y, &done);
            if (st || done) break;
            if (X.rows > block || X.cols != rfx_reader_inputs(r)) abort();
            *width = X.cols;
            if (pass == rewind) {
                double *p = realloc(*rows, (*count + X.rows) * X.cols * sizeof *p + 1);
                if (!p) abort();
                *rows = p;
                for (size_t i = 0; i < X.rows; i++)
                    memcpy(p + (*count + i) * X.cols, X.data + i * X.stride,
                           X.cols * sizeof *p);
                *count += X.rows;
            }
            got += X.rows;
        }
    }
    rfx_reader_free(r);
    return st;
}

static void same(const rfx_data *data, const double *rows, size_t count, size_t width)
{
    rfx_cmat A = rfx_data_x(data);
    if (count != A.rows || (count && width != A.cols)) abort();
    for (size_t i = 0; i < count; i++)
        if (memcmp(rows + i * width, A.data + i * A.stride, width * sizeof *rows) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const size_t block = 1 + data[0] % 7;
    data++;
    size--;
    if (size >= 6 && memcmp(data, "\x93NUMPY", 6) == 0) return 0; /* fuzz_npy's */
    const char *path = fuzz_file_with(data, size);
    rfx_data *whole = NULL;
    const rfx_status want = rfx_data_read(path, NULL, &whole);
    double *rows = NULL;
    size_t count = 0, width = 0;
    /* whole, after a rewind */
    rfx_status st = read_blocks(path, block, 0, UINT64_MAX, 1, &rows, &count, &width);
    if ((st == RFX_OK) != (want == RFX_OK)) abort();
    if (want == RFX_OK) {
        same(whole, rows, count, width);
        /* two byte ranges, cut where the input's length says */
        const uint64_t cut = size ? (uint64_t)(block * 977) % (size + 1) : 0;
        count = 0;
        rfx_status a = read_blocks(path, block, 0, cut, 0, &rows, &count, &width);
        rfx_status b = a ? a : read_blocks(path, block, cut, UINT64_MAX, 0, &rows, &count, &width);
        if (b == RFX_OK) same(whole, rows, count, width);
        else if (b != RFX_EPARSE || !strstr(rfx_last_error(), "spans lines")) abort();
        /* gzip-compressed: the same rows */
        uLongf zlen = compressBound((uLong)size) + 32;
        unsigned char *z = malloc(zlen);
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (!z || deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) abort();
        zs.next_in = (unsigned char *)data;
        zs.avail_in = (uInt)size;
        zs.next_out = z;
        zs.avail_out = (uInt)zlen;
        if (deflate(&zs, Z_FINISH) != Z_STREAM_END) abort();
        const size_t zsize = zlen - zs.avail_out;
        deflateEnd(&zs);
        const char *zpath = fuzz_file_with(z, zsize);
        free(z);
        count = 0;
        if (read_blocks(zpath, block, 0, UINT64_MAX, 1, &rows, &count, &width) != RFX_OK) abort();
        same(whole, rows, count, width);
    }
    free(rows);
    rfx_data_free(whole);
    return 0;
}
