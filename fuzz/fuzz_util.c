/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_util.c - the input file and the model exercise shared by the fuzz
 * targets (fuzz_util.h).
 */
#define _GNU_SOURCE
#include "fuzz_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

static void fuzz_die(const char *what)
{
    fprintf(stderr, "fuzz harness: %s\n", what);
    abort();
}

const char *fuzz_file_with(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("rfx_fuzz_input", 0);
        if (fd < 0) fuzz_die("memfd_create failed");
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0) fuzz_die("ftruncate failed");
    size_t done = 0;
    while (done < size) {
        ssize_t k = pwrite(fd, data + done, size - done, (off_t)done);
        if (k <= 0) fuzz_die("pwrite failed");
        done += (size_t)k;
    }
    return path;
}

void fuzz_read_data(const char *path, const rfx_read_params *p)
{
    rfx_data *data = NULL;
    if (rfx_data_read(path, p, &data) != RFX_OK) return;
    rfx_cmat X = rfx_data_x(data), Y = rfx_data_y(data);
    volatile double sink = 0;
    for (size_t i = 0; i < X.rows; ++i)
        for (size_t j = 0; j < X.cols; ++j) sink += X.data[i * X.stride + j];
    for (size_t i = 0; i < Y.rows; ++i) sink += Y.data[i * Y.stride];
    for (size_t j = 0; j < X.cols; ++j) sink += (double)strlen(rfx_data_name(data, j));
    if (Y.data) sink += (double)strlen(rfx_data_name(data, SIZE_MAX));
    (void)sink;
    rfx_data_free(data);
}

/* The header of a model file (rfx/model.h, above rfx_model_save). */
enum { HEADER = 32 };

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
    return v;
}

/* Make the header of the model file b[0..size) match its bytes. */
static void fix_header(uint8_t *b, size_t size)
{
    put_le(b + 16, size - HEADER, 8);
    put_le(b + 24, crc32(crc32(0L, Z_NULL, 0), b + HEADER, (uInt)(size - HEADER)), 4);
    put_le(b + 28, crc32(crc32(0L, Z_NULL, 0), b, 28), 4);
}

/* The record of a projected model's surrogate (tag 48, raw bytes) holds a
 * whole model file: make its header right too, before the outer CRC. */
enum { RECORD = 16, TAG_SURROGATE = 48, ELEM_BYTES = 6 };

static void fix_nested(uint8_t *b, size_t size)
{
    size_t at = HEADER;
    while (size - at >= RECORD) {
        uint64_t tag = get_le(b + at, 4), type = get_le(b + at + 4, 4), count = get_le(b + at + 8, 8);
        /* element sizes: f64, u64, i64 8 bytes; UTF-8 and raw bytes 1; u32 4 */
        uint64_t elem = type >= 1 && type <= 3 ? 8 : type == 5 ? 4 : type == 4 || type == ELEM_BYTES ? 1 : 0;
        if (elem == 0 || count > (size - at - RECORD) / elem) return;
        uint64_t bytes = count * elem;
        if (tag == TAG_SURROGATE && type == ELEM_BYTES && bytes >= HEADER &&
            memcmp(b + at + RECORD, "RFXMODL\x1a", 8) == 0)
            fix_header(b + at + RECORD, (size_t)bytes);
        at += RECORD + (size_t)((bytes + 7) / 8 * 8);
        if (at > size) return;
    }
}

int fuzz_model_fix_header(const uint8_t *data, size_t size, uint8_t **copy)
{
    *copy = NULL;
    if (size < HEADER || memcmp(data, "RFXMODL\x1a", 8) != 0) return 0;
    uint8_t *b = malloc(size);
    if (!b) fuzz_die("out of memory");
    memcpy(b, data, size);
    fix_nested(b, size);
    fix_header(b, size);
    *copy = b;
    return 1;
}

/* Larger widths are valid but make each input slow; the loader's own checks
 * on them still run. */
enum { MAX_WIDTH = 4096, ROWS = 3 };

static void check_finite(const double *v, size_t n, const char *what)
{
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(v[i])) fuzz_die(what);
}

void fuzz_exercise_model(const rfx_model *m)
{
    rfx_model_info info;
    if (rfx_model_get_info(m, &info) != RFX_OK) fuzz_die("rfx_model_get_info failed on a loaded model");
    if (info.n_inputs == 0 || info.n_targets == 0) fuzz_die("a loaded model has no inputs or targets");

    void *buf = NULL;
    size_t len = 0;
    if (rfx_model_save_buffer(m, &buf, &len) == RFX_OK) {
        rfx_model *again = NULL;
        if (rfx_model_load_buffer(buf, len, &again) != RFX_OK)
            fuzz_die("a loaded model, saved again, does not load");
        rfx_model_free(again);
        rfx_buffer_free(buf);
    }

    size_t d = info.n_inputs, ny = info.n_targets;
    if (d > MAX_WIDTH || ny > MAX_WIDTH) return;
    double *X = malloc(ROWS * d * sizeof *X);
    double *Y = malloc(ROWS * ny * sizeof *Y);
    double *S = malloc(ROWS * ny * sizeof *S);
    if (!X || !Y || !S) fuzz_die("out of memory");
    for (size_t i = 0; i < ROWS * d; ++i) X[i] = (double)((int)(i % 7) - 3) * 0.25;
    rfx_cmat Xm = rfx_cmat_of(X, ROWS, d);
    rfx_mat Std = info.has_std ? rfx_mat_of(S, ROWS, ny) : rfx_mat_none();
    /* A prediction that comes out non-finite is RFX_ENUMERIC, never a result. */
    if (rfx_model_predict(m, Xm, rfx_mat_of(Y, ROWS, ny), Std) == RFX_OK) {
        check_finite(Y, ROWS * ny, "rfx_model_predict gave a non-finite prediction");
        if (info.has_std) check_finite(S, ROWS * ny, "rfx_model_predict gave a non-finite std");
    }
    if (info.has_std)
        (void)rfx_model_predict_latent(m, Xm, rfx_mat_of(Y, ROWS, ny), rfx_mat_of(S, ROWS, ny));

    rfx_classifier_info ci;
    if (info.method == RFX_METHOD_CLASSIFY) {
        if (rfx_model_classifier_info(m, &ci) != RFX_OK) fuzz_die("a loaded classifier has no info");
        const double *classes = NULL;
        size_t nc = 0;
        if (rfx_model_classes(m, &classes, &nc) != RFX_OK || nc != ci.n_classes)
            fuzz_die("a loaded classifier's classes disagree with its info");
        if (nc <= MAX_WIDTH) {
            double *P = malloc(ROWS * nc * sizeof *P);
            if (!P) fuzz_die("out of memory");
            (void)rfx_model_predict_proba(m, Xm, rfx_mat_of(P, ROWS, nc));
            (void)rfx_model_decision(m, Xm, rfx_mat_of(P, ROWS, ci.n_columns));
            free(P);
        }
    }
    rfx_pce_info pi;
    if (info.method == RFX_METHOD_PCE && rfx_pce_get_info(rfx_model_pce(m), &pi) != RFX_OK)
        fuzz_die("a loaded PCE model has no PCE info");
    rfx_projected_info qi;
    if (info.method == RFX_METHOD_PROJECTED && rfx_model_projected_info(m, &qi) != RFX_OK)
        fuzz_die("a loaded projected model has no projected info");
    free(X);
    free(Y);
    free(S);
}
