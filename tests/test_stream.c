/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading in row blocks (rfx_reader) and fitting from a source
 * (rfx_model_fit_source): the blocks hold the rows rfx_data_read reads,
 * gzip input reads as plain, errors in later blocks name their line, and
 * a fit from a file read in blocks equals rfx_model_fit on the rows in
 * memory.
 */
#include "internal.h"
#include "testlib.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <zlib.h>

static const char *write_csv(const char *tag, size_t n, size_t d, uint64_t seed, int header,
                             int gzip)
{
    const char *path = rfx_test_tmp(tag);
    rfx__rng r;
    rfx__rng_init(&r, seed, 0, 0);
    char line[4096];
    FILE *fp = gzip ? NULL : fopen(path, "w");
    gzFile gz = gzip ? gzopen(path, "wb") : NULL;
    if (header) {
        size_t k = 0;
        for (size_t j = 0; j < d; j++) k += (size_t)snprintf(line + k, sizeof line - k, "x%zu,", j);
        snprintf(line + k, sizeof line - k, "y\n");
        if (gz) gzputs(gz, line); else fputs(line, fp);
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        double s = 0;
        for (size_t j = 0; j < d; j++) {
            double x = 4.0 * rfx__rng_uniform(&r) - 2.0 + (double)j;
            s += sin(x) * (double)(j + 1);
            k += (size_t)snprintf(line + k, sizeof line - k, "%.17g,", x);
        }
        snprintf(line + k, sizeof line - k, "%.17g\n", s + 0.05 * rfx__rng_normal(&r) + 100.0);
        if (gz) gzputs(gz, line); else fputs(line, fp);
    }
    if (gz) gzclose(gz); else fclose(fp);
    return path;
}

/* Every block, concatenated, is the table rfx_data_read reads. */
static void check_blocks_equal_read(const char *path, size_t block, int gz_name)
{
    rfx_read_params rp = rfx_read_params_default();
    rp.target = "-1";
    rfx_data *data = NULL;
    CHECK_STATUS(rfx_data_read(path, &rp, &data), RFX_OK);
    if (!data) return;
    rfx_cmat X = rfx_data_x(data), Y = rfx_data_y(data);
    rfx_reader_params pp = rfx_reader_params_default();
    pp.block_rows = block;
    rfx_reader *r = NULL;
    CHECK_STATUS(rfx_reader_open(path, &rp, &pp, &r), RFX_OK);
    if (!r) {
        rfx_data_free(data);
        return;
    }
    CHECK(rfx_reader_inputs(r) == X.cols);
    CHECK(rfx_reader_has_target(r));
    CHECK(strcmp(rfx_reader_name(r, 0), rfx_data_name(data, 0)) == 0);
    CHECK(strcmp(rfx_reader_name(r, SIZE_MAX), rfx_data_name(data, SIZE_MAX)) == 0);
    for (int pass = 0; pass < 2; pass++) {
        size_t at = 0, blocks = 0, mismatch = 0;
        for (;;) {
            rfx_cmat bx, by;
            int done = 0;
            CHECK_STATUS(rfx_reader_next(r, &bx, &by, &done), RFX_OK);
            if (done) break;
            CHECK(bx.rows <= block && bx.rows == by.rows);
            for (size_t i = 0; i < bx.rows && at + i < X.rows; i++) {
                mismatch += memcmp(bx.data + i * bx.stride, X.data + (at + i) * X.stride,
                                   X.cols * sizeof(double)) != 0;
                mismatch += by.data[i] != Y.data[at + i];
            }
            at += bx.rows;
            blocks++;
        }
        CHECK_MSG(at == X.rows && mismatch == 0, "%s pass %d: %zu rows of %zu, %zu differ", path,
                  pass, at, X.rows, mismatch);
        CHECK(blocks == (X.rows + block - 1) / block);
        CHECK(rfx_reader_rows(r) == X.rows);
        if (gz_name == 0) CHECK_NEAR(rfx_reader_fraction(r), 1.0, 0.0);
        CHECK_STATUS(rfx_reader_rewind(r), RFX_OK);
    }
    rfx_reader_free(r);
    rfx_data_free(data);
}

static void test_reader_blocks(void)
{
    const char *plain = write_csv("plain.csv", 1000, 3, 11, 1, 0);
    check_blocks_equal_read(plain, 1, 0);
    check_blocks_equal_read(plain, 7, 0);
    check_blocks_equal_read(plain, 1000, 0);
    check_blocks_equal_read(plain, 4096, 0);
    const char *gz = write_csv("plain.csv.gz", 1000, 3, 11, 1, 1);
    check_blocks_equal_read(gz, 64, 1);
    /* the gzip file reads as the plain one, by content */
    rfx_data *a = NULL, *b = NULL;
    CHECK_STATUS(rfx_data_read(plain, NULL, &a), RFX_OK);
    CHECK_STATUS(rfx_data_read(gz, NULL, &b), RFX_OK);
    if (a && b) {
        CHECK(rfx_data_x(a).rows == 1000 && rfx_data_x(b).rows == 1000);
        CHECK(memcmp(rfx_data_x(a).data, rfx_data_x(b).data, 1000 * 4 * sizeof(double)) == 0);
    }
    rfx_data_free(a);
    rfx_data_free(b);
    /* old Mac line ends: one line of many records, still blocks of at
     * most block_rows */
    const char *cr = rfx_test_tmp("cr.csv");
    FILE *fcr = fopen(cr, "w");
    fputs("a,b,y\r", fcr);
    for (int i = 0; i < 25; i++) fprintf(fcr, "%d,%d,%d\r", i, 2 * i, 3 * i);
    fclose(fcr);
    check_blocks_equal_read(cr, 4, 0);
    /* a first byte of 0x93 (a .npy file's) that is not one, gzip-compressed:
     * the bytes go back, and it reads as the plain file does */
    const char *odd = rfx_test_tmp("odd93.csv");
    FILE *fo = fopen(odd, "wb");
    fputs("\x93name,y\n1,2\n3,4\n", fo);
    fclose(fo);
    gzFile go = gzopen(rfx_test_tmp("odd93.csv.gz"), "wb");
    gzputs(go, "\x93name,y\n1,2\n3,4\n");
    gzclose(go);
    rfx_data *p1 = NULL, *p2 = NULL;
    CHECK_STATUS(rfx_data_read(odd, NULL, &p1), RFX_OK);
    CHECK_STATUS(rfx_data_read(rfx_test_tmp("odd93.csv.gz"), NULL, &p2), RFX_OK);
    if (p1 && p2) {
        CHECK(rfx_data_x(p2).rows == 2 && rfx_data_x(p2).data[2] == 3.0);
        CHECK(strcmp(rfx_data_name(p1, 0), rfx_data_name(p2, 0)) == 0);
    }
    rfx_data_free(p1);
    rfx_data_free(p2);
    /* a .npy file in blocks */
    const char *npy = rfx_test_tmp("table.npy");
    double M[5 * 3];
    for (int i = 0; i < 15; i++) M[i] = 0.5 * i - 3;
    CHECK_STATUS(rfx_npy_write(npy, rfx_cmat_of(M, 5, 3)), RFX_OK);
    check_blocks_equal_read(npy, 2, 0);
}

/* An error in a later block names the file's line and column, when that
 * block is read; the first block came out whole. */
static void test_reader_errors(void)
{
    const char *path = rfx_test_tmp("late.csv");
    FILE *fp = fopen(path, "w");
    fputs("a,b\n", fp);
    for (int i = 0; i < 10; i++) fprintf(fp, "%d,%d\n", i, 2 * i);
    fputs("3,oops\n", fp);
    fclose(fp);
    rfx_reader_params pp = rfx_reader_params_default();
    pp.block_rows = 4;
    rfx_reader *r = NULL;
    CHECK_STATUS(rfx_reader_open(path, NULL, &pp, &r), RFX_OK);
    rfx_cmat X, Y;
    int done = 0;
    rfx_status st = RFX_OK;
    size_t rows = 0;
    while (r && (st = rfx_reader_next(r, &X, &Y, &done)) == RFX_OK && !done) rows += X.rows;
    CHECK(st == RFX_EPARSE);
    CHECK(rows == 8);
    CHECK_MSG(strstr(rfx_last_error(), "late.csv:12:2: 'oops' is not a number") != NULL, "%s",
              rfx_last_error());
    rfx_reader_free(r);

    /* a gzip member cut short */
    const char *gz = write_csv("cut.csv.gz", 2000, 2, 3, 1, 1);
    fp = fopen(gz, "r+b");
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fclose(fp);
    CHECK(truncate(gz, size / 2) == 0);
    rfx_data *data = NULL;
    CHECK_STATUS(rfx_data_read(gz, NULL, &data), RFX_EPARSE);
    CHECK_MSG(strstr(rfx_last_error(), "cut.csv.gz:") != NULL &&
                  strstr(rfx_last_error(), "gzip data cut short") != NULL,
              "%s", rfx_last_error());
    rfx_data_free(data);
    /* a pipe not opened rewindable cannot rewind; header-only fails at open */
    const char *h = rfx_test_tmp("headonly.csv");
    fp = fopen(h, "w");
    fputs("a,b\n", fp);
    fclose(fp);
    CHECK_STATUS(rfx_reader_open(h, NULL, NULL, &r), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "header only") != NULL);
}

/* Byte ranges that cover a file give every row once, in order, whatever
 * the cuts; skip_rows and max_rows move the ends by rows; messages keep
 * the file's line numbers. */
static void check_ranges(const char *path, size_t n, const uint64_t *cuts, size_t k)
{
    rfx_data *all = NULL;
    CHECK_STATUS(rfx_data_read(path, NULL, &all), RFX_OK);
    if (!all) return;
    rfx_cmat A = rfx_data_x(all);
    CHECK(A.rows == n);
    size_t at = 0, bad = 0;
    for (size_t r = 0; r + 1 < k; r++) {
        rfx_reader_params pp = rfx_reader_params_default();
        pp.block_rows = 5;
        pp.byte_begin = cuts[r];
        pp.byte_end = cuts[r + 1];
        rfx_reader *rd = NULL;
        CHECK_STATUS(rfx_reader_open(path, NULL, &pp, &rd), RFX_OK);
        const size_t base = at;
        for (int pass = 0; rd && pass < 2; pass++) {
            size_t got = 0;
            for (;;) {
                rfx_cmat X, Y;
                int done = 0;
                if (rfx_reader_next(rd, &X, &Y, &done) != RFX_OK || done) break;
                for (size_t i = 0; i < X.rows; i++)
                    bad += base + got + i >= n ||
                           memcmp(X.data + i * X.stride, A.data + (base + got + i) * A.stride,
                                  A.cols * sizeof(double)) != 0;
                got += X.rows;
            }
            if (pass == 0) at += got;
            if (pass == 0) CHECK_STATUS(rfx_reader_rewind(rd), RFX_OK);
        }
        rfx_reader_free(rd);
    }
    CHECK_MSG(at == n && bad == 0, "%s: the ranges gave %zu rows of %zu, %zu differ", path, at, n,
              bad);
    /* rows [7, 7 + 11) by skip and max, from the second range on */
    rfx_reader_params pp = rfx_reader_params_default();
    pp.block_rows = 4;
    pp.skip_rows = 7;
    pp.max_rows = 11;
    rfx_reader *rd = NULL;
    CHECK_STATUS(rfx_reader_open(path, NULL, &pp, &rd), RFX_OK);
    size_t got = 0;
    bad = 0;
    for (;;) {
        rfx_cmat X, Y;
        int done = 0;
        if (!rd || rfx_reader_next(rd, &X, &Y, &done) != RFX_OK || done) break;
        for (size_t i = 0; i < X.rows; i++)
            bad += memcmp(X.data + i * X.stride, A.data + (7 + got + i) * A.stride,
                          A.cols * sizeof(double)) != 0;
        got += X.rows;
    }
    CHECK_MSG(got == 11 && bad == 0, "skip 7 max 11: %zu rows, %zu differ", got, bad);
    rfx_reader_free(rd);
    rfx_data_free(all);
}

static void test_reader_ranges(void)
{
    const char *csv = write_csv("ranges.csv", 200, 2, 9, 1, 0);
    FILE *fp = fopen(csv, "rb");
    fseek(fp, 0, SEEK_END);
    const uint64_t size = (uint64_t)ftell(fp);
    fclose(fp);
    uint64_t cuts[8] = {0, 1, 10, size / 3, size / 3 + 1, size / 2, size - 3, UINT64_MAX};
    check_ranges(csv, 200, cuts, 8);
    uint64_t two[3] = {0, size / 2, size};
    check_ranges(csv, 200, two, 3);
    const char *npy = rfx_test_tmp("ranges.npy");
    double M[30 * 3];
    for (int i = 0; i < 90; i++) M[i] = 0.25 * i;
    CHECK_STATUS(rfx_npy_write(npy, rfx_cmat_of(M, 30, 3)), RFX_OK);
    uint64_t ncuts[5] = {0, 200, 201, 700, UINT64_MAX};
    check_ranges(npy, 30, ncuts, 5);
    /* a bad cell in a range is named by its line in the file */
    const char *bad = rfx_test_tmp("rangebad.csv");
    fp = fopen(bad, "w");
    fputs("a,b\n", fp);
    for (int i = 0; i < 50; i++) fprintf(fp, "%d,%d\n", i, i);
    fputs("1,x\n", fp);
    fclose(fp);
    rfx_reader_params pp = rfx_reader_params_default();
    pp.byte_begin = 100;
    rfx_reader *rd = NULL;
    CHECK_STATUS(rfx_reader_open(bad, NULL, &pp, &rd), RFX_EPARSE);
    CHECK_MSG(strstr(rfx_last_error(), "rangebad.csv:52:2:") != NULL, "%s", rfx_last_error());
    /* a gzip file cannot be cut */
    const char *gz = write_csv("ranges.csv.gz", 20, 2, 9, 1, 1);
    pp.byte_begin = 10;
    CHECK_STATUS(rfx_reader_open(gz, NULL, &pp, &rd), RFX_EINVAL);
}

/* rfx_model_fit_source on a file read in blocks against rfx_model_fit on
 * the same rows in memory: the same scaler and length scale (bit for
 * bit), the same predictions to rounding. */
static void fit_pair(rfx_method method, size_t n, size_t D, double given_l, int standardize,
                     double tol)
{
    const char *path = write_csv("fit.csv", n, 3, 5 + n, 1, 0);
    rfx_read_params rp = rfx_read_params_default();
    rp.target = "y";
    rfx_data *data = NULL;
    CHECK_STATUS(rfx_data_read(path, &rp, &data), RFX_OK);
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = method;
    fp.features.n_features = D;
    fp.features.seed = 3;
    fp.features.length_scale = given_l;
    fp.standardize = standardize;
    fp.select_rows = 500;
    rfx_model *m1 = NULL, *m2 = NULL;
    rfx_fit_report r1, r2;
    CHECK_STATUS(rfx_model_fit(&fp, rfx_data_x(data), rfx_data_y(data), &m1, &r1), RFX_OK);
    rfx_reader *rd = NULL;
    rfx_source *src = NULL;
    CHECK_STATUS(rfx_reader_open(path, &rp, NULL, &rd), RFX_OK);
    CHECK_STATUS(rfx_reader_source(rd, &src), RFX_OK);
    CHECK_STATUS(rfx_model_fit_source(&fp, src, &m2, &r2), RFX_OK);
    if (m1 && m2) {
        CHECK_MSG(r1.length_scale == r2.length_scale, "length scale %.17g vs %.17g",
                  r1.length_scale, r2.length_scale);
        CHECK(r1.n_candidates == r2.n_candidates);
        if (standardize) {
            CHECK(memcmp(m1->x_mean, m2->x_mean, 3 * sizeof(double)) == 0);
            CHECK(memcmp(m1->x_scale, m2->x_scale, 3 * sizeof(double)) == 0);
        }
        rfx_cmat X = rfx_data_x(data);
        double *p1 = malloc(n * sizeof *p1), *p2 = malloc(n * sizeof *p2), *s1 = NULL, *s2 = NULL;
        if (method == RFX_METHOD_BAYES) {
            s1 = malloc(n * sizeof *s1);
            s2 = malloc(n * sizeof *s2);
        }
        rfx_mat S1 = s1 ? rfx_mat_of(s1, n, 1) : rfx_mat_none();
        rfx_mat S2 = s2 ? rfx_mat_of(s2, n, 1) : rfx_mat_none();
        CHECK_STATUS(rfx_model_predict(m1, X, rfx_mat_of(p1, n, 1), S1), RFX_OK);
        CHECK_STATUS(rfx_model_predict(m2, X, rfx_mat_of(p2, n, 1), S2), RFX_OK);
        double worst = 0, worst_s = 0;
        for (size_t i = 0; i < n; i++) {
            worst = fmax(worst, fabs(p1[i] - p2[i]) / (fabs(p1[i]) + 1e-300));
            if (s1) worst_s = fmax(worst_s, fabs(s1[i] - s2[i]) / s1[i]);
        }
        CHECK_MSG(worst <= tol && worst_s <= 1e3 * tol,
                  "method %d n %zu D %zu: predictions differ by %.3g (std %.3g) relative", method,
                  n, D, worst, worst_s);
        free(p1);
        free(p2);
        free(s1);
        free(s2);
    }
    rfx_model_free(m1);
    rfx_model_free(m2);
    rfx_source_free(src);
    rfx_reader_free(rd);
    rfx_data_free(data);
}

static void test_fit_source(void)
{
    /* ridge, blocks of 4096 as rfx_ridge_fit cuts them: the same bits */
    fit_pair(RFX_METHOD_RIDGE, 9000, 64, 0.0, 1, 0.0);
    fit_pair(RFX_METHOD_RIDGE, 300, 32, 0.0, 1, 1e-9);
    fit_pair(RFX_METHOD_BAYES, 6000, 64, 0.0, 1, 1e-9);
    fit_pair(RFX_METHOD_BAYES, 2000, 48, 1.3, 0, 1e-9); /* no scaler: two passes */
    /* methods that keep every row say so */
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_SRFE;
    double X[4] = {0, 1, 2, 3}, Y[2] = {1, 2};
    rfx_source *src = NULL;
    rfx_model *m = NULL;
    CHECK_STATUS(rfx_source_memory_create(rfx_cmat_of(X, 2, 2), rfx_cmat_of(Y, 2, 1), 0, &src),
                 RFX_OK);
    CHECK_STATUS(rfx_model_fit_source(&fp, src, &m, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "srfe keeps every row in memory") != NULL);
    rfx_source_free(src);
}

/* ---- a classifier from a source ---------------------------------------- */

/* n rows of d inputs and a label -1, 2 or 7 (a noisy threshold of a smooth
 * function), rows in the order of the seed's draws; reversed when asked. */
static const char *write_labels(const char *tag, size_t n, size_t d, uint64_t seed, int reversed)
{
    const char *path = rfx_test_tmp(tag);
    double *rows = malloc(n * (d + 1) * sizeof *rows);
    rfx__rng r;
    rfx__rng_init(&r, seed, 0, 0);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t j = 0; j < d; j++) {
            double x = 4.0 * rfx__rng_uniform(&r) - 2.0;
            rows[i * (d + 1) + j] = x;
            s += sin(1.5 * x) * (double)(j + 1);
        }
        s += 0.3 * rfx__rng_normal(&r);
        rows[i * (d + 1) + d] = s < -0.5 ? -1 : s < 1.0 ? 2 : 7;
    }
    FILE *fp = fopen(path, "w");
    for (size_t j = 0; j < d; j++) fprintf(fp, "x%zu,", j);
    fprintf(fp, "y\n");
    for (size_t k = 0; k < n; k++) {
        const size_t i = reversed ? n - 1 - k : k;
        for (size_t j = 0; j < d; j++) fprintf(fp, "%.17g,", rows[i * (d + 1) + j]);
        fprintf(fp, "%g\n", rows[i * (d + 1) + d]);
    }
    fclose(fp);
    free(rows);
    return path;
}

/* The largest difference of two models' scores on X, relative to the
 * largest score. */
static double score_gap(const rfx_model *a, const rfx_model *b, rfx_cmat X, size_t K)
{
    double *s1 = malloc(X.rows * K * sizeof *s1), *s2 = malloc(X.rows * K * sizeof *s2);
    CHECK_STATUS(rfx_model_decision(a, X, rfx_mat_of(s1, X.rows, K)), RFX_OK);
    CHECK_STATUS(rfx_model_decision(b, X, rfx_mat_of(s2, X.rows, K)), RFX_OK);
    double gap = 0, top = 0;
    for (size_t i = 0; i < X.rows * K; i++) {
        gap = fmax(gap, fabs(s1[i] - s2[i]));
        top = fmax(top, fabs(s1[i]));
    }
    free(s1);
    free(s2);
    return gap / top;
}

/* rfx_model_fit and rfx_model_fit_source on the same file: the same
 * choices (length scale, lambda, candidates, validation score), the
 * scores to tol relative (0: bit for bit); and the file with its rows
 * reversed makes the same choices. */
static void classify_pair(size_t n, rfx_loss loss, double given_l, double tol)
{
    const size_t d = 3;
    const char *path = write_labels("classify.csv", n, d, 40 + n, 0);
    rfx_read_params rp = rfx_read_params_default();
    rp.target = "y";
    rfx_data *data = NULL;
    CHECK_STATUS(rfx_data_read(path, &rp, &data), RFX_OK);
    if (!data) return;
    rfx_classify_params cp = rfx_classify_params_default();
    cp.loss = loss;
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_CLASSIFY;
    fp.classify = &cp;
    fp.features.n_features = 64;
    fp.features.seed = 6;
    fp.select_rows = 900;
    if (given_l > 0) { /* nothing chosen: no selection rows drawn */
        fp.features.length_scale = given_l;
        fp.lambda = 1e-3;
    }
    rfx_model *m1 = NULL, *m2 = NULL, *m3 = NULL;
    rfx_fit_report r1, r2, r3;
    CHECK_STATUS(rfx_model_fit(&fp, rfx_data_x(data), rfx_data_y(data), &m1, &r1), RFX_OK);
    for (int reversed = 0; reversed < 2; reversed++) {
        const char *file = reversed ? write_labels("classify_rev.csv", n, d, 40 + n, 1) : path;
        rfx_reader *rd = NULL;
        rfx_source *src = NULL;
        CHECK_STATUS(rfx_reader_open(file, &rp, NULL, &rd), RFX_OK);
        CHECK_STATUS(rfx_reader_source(rd, &src), RFX_OK);
        CHECK_STATUS(rfx_model_fit_source(&fp, src, reversed ? &m3 : &m2, reversed ? &r3 : &r2),
                     RFX_OK);
        rfx_source_free(src);
        rfx_reader_free(rd);
    }
    if (m1 && m2 && m3) {
        const double *c1, *c2;
        size_t C1, C2;
        CHECK_STATUS(rfx_model_classes(m1, &c1, &C1), RFX_OK);
        CHECK_STATUS(rfx_model_classes(m2, &c2, &C2), RFX_OK);
        CHECK(C1 == 3 && C2 == 3 && memcmp(c1, c2, 3 * sizeof *c1) == 0);
        CHECK_MSG(r1.length_scale == r2.length_scale && r1.lambda == r2.lambda &&
                      r1.n_candidates == r2.n_candidates,
                  "%s, n %zu: length scale %.17g / %.17g, lambda %.17g / %.17g, candidates %zu "
                  "/ %zu", rfx_loss_name(loss), n, r1.length_scale, r2.length_scale, r1.lambda,
                  r2.lambda, r1.n_candidates, r2.n_candidates);
        CHECK(r1.score == r2.score || (isnan(r1.score) && isnan(r2.score)));
        CHECK_MSG(r1.refine_holdout == r2.refine_holdout && r1.refine_steps == r2.refine_steps &&
                      r1.refine_gained == r2.refine_gained && r1.refine_lost == r2.refine_lost,
                  "refinement: %zu / %zu held out, %zu / %zu steps", r1.refine_holdout,
                  r2.refine_holdout, r1.refine_steps, r2.refine_steps);
        CHECK(loss != RFX_LOSS_AUTO || r1.refine_holdout == n / 5);
        CHECK(memcmp(m1->x_mean, m2->x_mean, d * sizeof(double)) == 0);
        CHECK(memcmp(m1->x_scale, m2->x_scale, d * sizeof(double)) == 0);
        /* the order of the rows changes no choice */
        /* (lambda is the same point of a grid scaled by trace(Z^T Z) / D,
         * whose sum rounds by the order) */
        CHECK_MSG(r3.length_scale == r2.length_scale &&
                      fabs(r3.lambda - r2.lambda) <= 1e-12 * r2.lambda,
                  "reversed: l %.17g / %.17g, lambda %.17g / %.17g, score %.17g / %.17g", r3.length_scale, r2.length_scale, r3.lambda, r2.lambda, r3.score, r2.score);
        const double gap = score_gap(m1, m2, rfx_data_x(data), 3);
        CHECK_MSG(tol ? gap <= tol : gap == 0, "%s, n %zu: scores differ by %.3g relative",
                  rfx_loss_name(loss), n, gap);
        printf("classify from a file, %s loss, %zu rows: length scale %.4g, lambda %.3g, %zu "
               "candidates, %zu refining steps; scores %.3g from the in-memory fit\n",
               rfx_loss_name(loss), n, r2.length_scale, r2.lambda, r2.n_candidates,
               r2.refine_steps, gap);
        /* the probabilities' temperature too */
        double P1[9], P2[9];
        rfx_cmat X3 = {rfx_data_x(data).data, 3, d, rfx_data_x(data).stride};
        CHECK_STATUS(rfx_model_predict_proba(m1, X3, rfx_mat_of(P1, 3, 3)), RFX_OK);
        CHECK_STATUS(rfx_model_predict_proba(m2, X3, rfx_mat_of(P2, 3, 3)), RFX_OK);
        for (size_t i = 0; i < 9; i++) CHECK_NEAR(P1[i], P2[i], tol ? 1e3 * tol : 0.0);
    }
    rfx_model_free(m1);
    rfx_model_free(m2);
    rfx_model_free(m3);
    rfx_data_free(data);
}

static void test_fit_source_classify(void)
{
    /* the least-squares classifier: every row scored, blocks of 4096 as
     * the fit in memory adds them: the same bits */
    classify_pair(6000, RFX_LOSS_SQUARED, 0.0, 0.0);
    /* beyond 20000 rows: the 20000 of least key scored */
    classify_pair(26000, RFX_LOSS_SQUARED, 0.0, 0.0);
    /* refined (RFX_LOSS_AUTO): every row held, the same refinement */
    classify_pair(6000, RFX_LOSS_AUTO, 0.0, 0.0);
    /* the logistic loss: holdout choice on the selection rows, L-BFGS
     * over the source (cached) */
    classify_pair(5000, RFX_LOSS_LOGISTIC, 0.0, 1e-9);
    /* a given length scale and lambda: the logistic fit draws no selection
     * rows, in memory or from the file */
    classify_pair(5000, RFX_LOSS_LOGISTIC, 0.8, 1e-9);
    /* a label the first pass did not see, and one class */
    double X[8] = {0, 1, 2, 3, 4, 5, 6, 7}, Y[4] = {1, 1, 1, 1};
    rfx_fit_params fp = rfx_fit_params_default();
    fp.method = RFX_METHOD_CLASSIFY;
    rfx_source *src = NULL;
    rfx_model *m = NULL;
    CHECK_STATUS(rfx_source_memory_create(rfx_cmat_of(X, 4, 2), rfx_cmat_of(Y, 4, 1), 0, &src),
                 RFX_OK);
    CHECK_STATUS(rfx_model_fit_source(&fp, src, &m, NULL), RFX_EDIM);
    CHECK_MSG(strstr(rfx_last_error(), "every one of the 4 rows has the label 1") != NULL, "%s",
              rfx_last_error());
    rfx_source_free(src);
}

/* ---- a fit in parts, the parts on threads ------------------------------ */

/* The parts' calls over shared memory and a barrier: each part puts its
 * values in its slot, part 0 combines them in part order, every part takes
 * the result. */
enum { MAX_PARTS = 4 };
typedef struct team {
    pthread_barrier_t bar;
    size_t k;
    void *slot[MAX_PARTS];
    uint64_t rows[MAX_PARTS];
    rfx_stats *mine[MAX_PARTS], *total;
} team;

typedef struct member {
    team *t;
    size_t id;
    rfx_cmat X, Y;
    rfx_fit_params fp;
    rfx_model *m;
    rfx_status st;
    char msg[256];
} member;

static rfx_status t_offsets(void *user, uint64_t rows, uint64_t *first, uint64_t *total)
{
    member *me = user;
    team *t = me->t;
    t->rows[me->id] = rows;
    pthread_barrier_wait(&t->bar);
    *first = *total = 0;
    for (size_t i = 0; i < t->k; i++) {
        if (i < me->id) *first += t->rows[i];
        *total += t->rows[i];
    }
    pthread_barrier_wait(&t->bar);
    return RFX_OK;
}

/* op 1: int64 sum, 2: double max */
static rfx_status t_reduce(member *me, void *v, size_t n, int op)
{
    team *t = me->t;
    t->slot[me->id] = v;
    pthread_barrier_wait(&t->bar);
    if (me->id == 0)
        for (size_t i = 1; i < t->k; i++)
            for (size_t j = 0; j < n; j++) {
                if (op == 1) ((int64_t *)v)[j] += ((int64_t *)t->slot[i])[j];
                else ((double *)v)[j] = fmax(((double *)v)[j], ((double *)t->slot[i])[j]);
            }
    pthread_barrier_wait(&t->bar);
    if (me->id != 0) memcpy(v, t->slot[0], n * (op == 1 ? sizeof(int64_t) : sizeof(double)));
    pthread_barrier_wait(&t->bar);
    return RFX_OK;
}

static rfx_status t_gather(void *user, const double *mine, size_t n, double *all)
{
    member *me = user;
    team *t = me->t;
    t->slot[me->id] = (void *)mine;
    pthread_barrier_wait(&t->bar);
    for (size_t i = 0; i < t->k; i++) memcpy(all + i * n, t->slot[i], n * sizeof(double));
    pthread_barrier_wait(&t->bar);
    return RFX_OK;
}
static rfx_status t_sum_exact(void *u, int64_t *v, size_t n) { return t_reduce(u, v, n, 1); }
static rfx_status t_max(void *u, double *v, size_t n) { return t_reduce(u, v, n, 2); }

static rfx_status t_stats(void *user, rfx_stats *s, const rfx_features *f, rfx_source *src,
                          uint64_t first_row)
{
    member *me = user;
    team *t = me->t;
    (void)first_row;
    rfx_stats *mine = NULL;
    const size_t ny = rfx_stats_n_targets(s);
    rfx_status st = rfx_stats_create(rfx_features_output_dim(f), ny, &mine);
    if (!st) st = rfx_stats_add_source(mine, f, src, NULL, NULL);
    t->mine[me->id] = mine;
    pthread_barrier_wait(&t->bar);
    if (me->id == 0) {
        rfx_stats_create(rfx_features_output_dim(f), ny, &t->total);
        for (size_t i = 0; i < t->k; i++) rfx_stats_merge(t->total, t->mine[i]);
    }
    pthread_barrier_wait(&t->bar);
    if (!st) st = rfx_stats_merge(s, t->total);
    pthread_barrier_wait(&t->bar);
    rfx_stats_free(mine);
    if (me->id == 0) rfx_stats_free(t->total);
    return st;
}

/* rfx_classify_shard's sum: part 0 adds every part's values in part order */
static rfx_status t_sum(void *user, double *v, size_t n, rfx_status local)
{
    member *me = user;
    team *t = me->t;
    t->slot[me->id] = v;
    t->rows[me->id] = local != RFX_OK;
    pthread_barrier_wait(&t->bar);
    int failed = 0;
    for (size_t i = 0; i < t->k; i++) failed |= t->rows[i] != 0;
    if (me->id == 0 && !failed)
        for (size_t i = 1; i < t->k; i++)
            for (size_t j = 0; j < n; j++) v[j] += ((double *)t->slot[i])[j];
    pthread_barrier_wait(&t->bar);
    if (me->id != 0 && !failed) memcpy(v, t->slot[0], n * sizeof(double));
    pthread_barrier_wait(&t->bar);
    return failed ? RFX_EINVAL : RFX_OK;
}

static void *t_run(void *arg)
{
    member *me = arg;
    rfx_fit_parts parts = {me->t->k, me->id, me->X.cols, 1, t_offsets, t_gather, t_sum_exact,
                           t_max, t_stats, t_sum, NULL, me};
    rfx_source *src = NULL;
    me->st = rfx_source_memory_create(me->X, me->Y, 1000, &src);
    if (!me->st) me->st = rfx_model_fit_parts(&me->fp, src, &parts, &me->m, NULL);
    if (me->st) snprintf(me->msg, sizeof me->msg, "%s", rfx_last_error());
    rfx_source_free(src);
    return NULL;
}

/* rows split at cuts among k parts; the models of every part */
static void fit_in_parts(rfx_cmat X, rfx_cmat Y, const rfx_fit_params *fp, size_t k,
                         const size_t *cuts, rfx_model **models)
{
    team t;
    member mem[MAX_PARTS];
    pthread_t th[MAX_PARTS];
    memset(&t, 0, sizeof t);
    t.k = k;
    pthread_barrier_init(&t.bar, NULL, (unsigned)k);
    for (size_t i = 0; i < k; i++) {
        memset(&mem[i], 0, sizeof mem[i]);
        mem[i].t = &t;
        mem[i].id = i;
        mem[i].fp = *fp;
        mem[i].X = (rfx_cmat){X.data + cuts[i] * X.stride, cuts[i + 1] - cuts[i], X.cols, X.stride};
        mem[i].Y = (rfx_cmat){Y.data + cuts[i] * Y.stride, cuts[i + 1] - cuts[i], 1, Y.stride};
        pthread_create(&th[i], NULL, t_run, &mem[i]);
    }
    for (size_t i = 0; i < k; i++) {
        pthread_join(th[i], NULL);
        CHECK_MSG(mem[i].st == RFX_OK, "part %zu of %zu: %s", i, k, mem[i].msg);
        models[i] = mem[i].m;
    }
    pthread_barrier_destroy(&t.bar);
}

/* The same model from 1, 2, 3 or 4 parts (an empty part among them): the
 * scaler bit for bit (exact sums), the length scale too (the same selection
 * rows), the predictions to rounding; and the single fit's to 1e-12. */
static void test_fit_parts(void)
{
    const size_t n = 6000, d = 3;
    const char *path = write_csv("parts.csv", n, d, 21, 1, 0);
    rfx_read_params rp = rfx_read_params_default();
    rp.target = "y";
    rfx_data *data = NULL;
    CHECK_STATUS(rfx_data_read(path, &rp, &data), RFX_OK);
    if (!data) return;
    rfx_cmat X = rfx_data_x(data), Y = rfx_data_y(data);
    for (int method = 0; method < 2; method++) {
        rfx_fit_params fp = rfx_fit_params_default();
        fp.method = method ? RFX_METHOD_BAYES : RFX_METHOD_RIDGE;
        fp.features.n_features = 64;
        fp.features.seed = 4;
        fp.select_rows = 700;
        /* a GCV-chosen ridge penalty here is ~1e-11, where 1e-16 in the
         * scaler moves the predictions by 1e-9: a given one keeps the
         * solve well posed */
        if (!method) fp.lambda = 1e-3;
        if (method) { /* the same for the evidence's fitted variances */
            fp.noise_var = 0.01;
            fp.prior_var = 1.0;
        }
        rfx_model *one = NULL;
        rfx_fit_report r1;
        CHECK_STATUS(rfx_model_fit(&fp, X, Y, &one, &r1), RFX_OK);
        double *p0 = malloc(n * sizeof *p0), *p = malloc(n * sizeof *p);
        CHECK_STATUS(rfx_model_predict(one, X, rfx_mat_of(p0, n, 1), rfx_mat_none()), RFX_OK);
        const size_t splits[4][5] = {{0, n}, {0, 2500, n}, {0, 1, 3000, n}, {0, 0, 1700, 4000, n}};
        rfx_model *first = NULL;
        for (size_t k = 1; k <= 4; k++) {
            rfx_model *models[MAX_PARTS] = {NULL};
            fit_in_parts(X, Y, &fp, k, splits[k - 1], models);
            for (size_t i = 0; i < k && models[i]; i++) {
                rfx_model *m = models[i];
                CHECK(m->features->ls[0] == one->features->ls[0]);
                if (!first) first = m, models[i] = NULL;
                else {
                    CHECK(memcmp(m->x_mean, first->x_mean, d * sizeof(double)) == 0);
                    CHECK(memcmp(m->x_scale, first->x_scale, d * sizeof(double)) == 0);
                }
                CHECK_STATUS(rfx_model_predict(m, X, rfx_mat_of(p, n, 1), rfx_mat_none()), RFX_OK);
                double worst = 0;
                for (size_t r = 0; r < n; r++)
                    worst = fmax(worst, fabs(p[r] - p0[r]) / fabs(p0[r]));
                CHECK_MSG(worst < 1e-12, "method %d, %zu parts, part %zu: %.3g from the single fit",
                          method, k, i, worst);
            }
            for (size_t i = 0; i < k; i++) rfx_model_free(models[i]);
        }
        for (size_t j = 0; first && j < d; j++) {
            /* exact sums against rounded ones: a few units in the last place */
            CHECK_NEAR(first->x_mean[j], one->x_mean[j], 1e-14 * one->x_scale[j]);
            CHECK_NEAR(first->x_scale[j], one->x_scale[j], 1e-14 * one->x_scale[j]);
        }
        rfx_model_free(first);
        rfx_model_free(one);
        free(p0);
        free(p);
    }
    rfx_data_free(data);
}

/* A classifier in 1 to 4 parts (an empty part among them): the classes
 * are the union of the parts' (a part may lack a class), the choices those
 * of the single fit (the same selection and scored rows), the scores to
 * rounding (the least-squares classifier's statistics; its chosen lambda,
 * about 1e-9, amplifies it) or to the optimizer's tolerance (logistic,
 * over parts->sum). */
static void test_classify_parts(void)
{
    const size_t n = 6000, d = 3;
    const char *path = write_labels("classify_parts.csv", n, d, 77, 0);
    rfx_read_params rp = rfx_read_params_default();
    rp.target = "y";
    rfx_data *data = NULL;
    CHECK_STATUS(rfx_data_read(path, &rp, &data), RFX_OK);
    if (!data) return;
    /* sorted by label, so that the first part holds one class only */
    rfx_cmat X0 = rfx_data_x(data), Y0 = rfx_data_y(data);
    double *X = malloc(n * d * sizeof *X), *Y = malloc(n * sizeof *Y);
    size_t at = 0;
    const double labels[3] = {-1, 2, 7};
    for (size_t c = 0; c < 3; c++)
        for (size_t i = 0; i < n; i++)
            if (Y0.data[i * Y0.stride] == labels[c]) {
                memcpy(X + at * d, X0.data + i * X0.stride, d * sizeof *X);
                Y[at++] = labels[c];
            }
    CHECK(at == n);
    rfx_cmat Xs = rfx_cmat_of(X, n, d), Ys = rfx_cmat_of(Y, n, 1);
    for (int logistic = 0; logistic < 2; logistic++) {
        rfx_classify_params cp = rfx_classify_params_default();
        cp.loss = logistic ? RFX_LOSS_LOGISTIC : RFX_LOSS_SQUARED;
        rfx_fit_params fp = rfx_fit_params_default();
        fp.method = RFX_METHOD_CLASSIFY;
        fp.classify = &cp;
        fp.features.n_features = 64;
        fp.features.seed = 8;
        fp.select_rows = 700;
        rfx_model *one = NULL;
        rfx_fit_report r1;
        CHECK_STATUS(rfx_model_fit(&fp, Xs, Ys, &one, &r1), RFX_OK);
        const size_t splits[4][5] = {{0, n}, {0, 1000, n}, {0, 1, 3000, n}, {0, 0, 1700, 4000, n}};
        for (size_t k = 1; k <= 4 && one; k++) {
            rfx_model *models[MAX_PARTS] = {NULL};
            fit_in_parts(Xs, Ys, &fp, k, splits[k - 1], models);
            for (size_t i = 0; i < k && models[i]; i++) {
                const double *classes;
                size_t C;
                CHECK_STATUS(rfx_model_classes(models[i], &classes, &C), RFX_OK);
                CHECK(C == 3 && memcmp(classes, labels, sizeof labels) == 0);
                CHECK(models[i]->features->ls[0] == one->features->ls[0]);
                CHECK_MSG(fabs(models[i]->lambda - one->lambda) <= 1e-12 * one->lambda, "lambda %.17g / %.17g", models[i]->lambda, one->lambda);
                const double gap = score_gap(one, models[i], Xs, 3);
                CHECK_MSG(gap < (logistic ? 1e-4 : 1e-8), "%s, %zu parts, part %zu: scores "
                          "%.3g from the single fit", logistic ? "logistic" : "squared", k, i,
                          gap);
                if (i == 0)
                    printf("classify in %zu parts, %s loss: scores %.3g from the single fit\n", k,
                           logistic ? "logistic" : "squared", gap);
            }
            for (size_t i = 0; i < k; i++) rfx_model_free(models[i]);
        }
        rfx_model_free(one);
    }
    free(X);
    free(Y);
    rfx_data_free(data);
}

int main(void)
{
    RFX_TEST_RUN(test_reader_blocks);
    RFX_TEST_RUN(test_reader_errors);
    RFX_TEST_RUN(test_reader_ranges);
    RFX_TEST_RUN(test_fit_source);
    RFX_TEST_RUN(test_fit_parts);
    RFX_TEST_RUN(test_fit_source_classify);
    RFX_TEST_RUN(test_classify_parts);
    return rfx_test_finish("test_stream");
}
