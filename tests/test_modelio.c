/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Model files: round trips predict bitwise identically (file and buffer),
 * for feature models and polynomial chaos (PCE) models alike, and every
 * kind of damage - truncation, bit flips, a newer version, hostile
 * counts with valid checksums, missing or unknown fields - is refused with a
 * clear status, without crashing, leaking, or writing *out.
 *
 * The hostile files are built by hand from a valid one: patch a field, then
 * recompute both CRCs, so that the checks behind the checksums are reached.
 * The byte offsets and tag numbers used here are the format of rfx.h.
 *
 * Classifiers (tags 50..52) round-trip with their classes, scores and
 * probabilities bitwise, and their loader checks (classes finite and
 * strictly increasing, score columns matching the classes, enums, softmax
 * only with the logistic loss, classifier fields only in classifiers) are
 * provoked; kitchen-sinks and greedy models (methods 7, 8) load as plain
 * feature models; the structure (tag 49) is optional and range-checked.
 */
#include "rfx.h"
#include "testlib.h"

#include <dirent.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define HDR 32

/* tags of format version 1 (rfx.h) */
enum {
    T_METHOD = 1, T_D = 2, T_NF = 3, T_NY = 4, T_N_TRAIN = 5, T_KERNEL = 7, T_LENGTH_SCALE = 11,
    T_LENGTH_SCALES = 13, T_FREQ = 14, T_X_SCALE = 17, T_WEIGHTS = 18, T_LAMBDA = 20,
    T_CHOL = 24, T_CREATOR = 26,
    /* polynomial chaos models */
    T_PCE_KINDS = 31, T_PCE_PARAMS = 32, T_PCE_N_TERMS = 33, T_PCE_ALPHA = 34, T_PCE_COEF = 35,
    T_PCE_DEGREE = 36, T_PCE_METHOD = 37, T_PCE_CAND = 38, T_PCE_LOO = 39,
    /* projected models */
    T_PROJ_K = 40, T_PROJ_GAMMA = 41, T_PROJ_THETA = 42, T_PROJ_ROWS = 43, T_PROJ_ALPHA = 44,
    T_PROJ_ROW_MEANS = 45, T_PROJ_GRAND_MEAN = 46, T_PROJ_LOSS = 47, T_PROJ_SURROGATE = 48,
    /* the feature map's structure; classifiers */
    T_STRUCTURE = 49, T_CLASSES = 50, T_LOSS = 51, T_MULTICLASS = 52, T_TARGET = 53,
    T_TARGET_LAMBDA = 54,
    /* the schema (format version 2) */
    T_INPUT_NAMES = 55, T_TARGET_NAME = 56, T_INPUT_BOX = 57, T_WEIGHT_SUM = 58,
    /* SORF's construction (format version 3) */
    T_STRUCTURE_VERSION = 59
};
enum { E_F64 = 1, E_U64 = 2, E_UTF8 = 4, E_U32 = 5, E_BYTES = 6 }; /* element types */

/* ---- byte helpers ------------------------------------------------------- */

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void putf64(unsigned char *p, double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    put64(p, u);
}

/* Make a patched image valid again: payload size, payload CRC, header CRC. */
static void fix_crcs(unsigned char *b, size_t len)
{
    put64(b + 16, (uint64_t)(len - HDR));
    put32(b + 24, (uint32_t)crc32(crc32(0L, Z_NULL, 0), b + HDR, (uInt)(len - HDR)));
    put32(b + 28, (uint32_t)crc32(crc32(0L, Z_NULL, 0), b, 28));
}

static void fix_header_crc(unsigned char *b)
{
    put32(b + 28, (uint32_t)crc32(crc32(0L, Z_NULL, 0), b, 28));
}

/* Bytes a record occupies: 16-byte header, data padded to 8. */
static size_t record_size(const unsigned char *r)
{
    uint32_t type = get32(r + 4);
    size_t es = type == E_UTF8 || type == E_BYTES ? 1 : type == E_U32 ? 4 : 8;
    size_t bytes = (size_t)get64(r + 8) * es;
    return 16 + bytes + (8 - bytes % 8) % 8;
}

/* The offset of the record with this tag in a valid image, or 0. */
static size_t find_record(const unsigned char *b, size_t len, uint32_t tag)
{
    for (size_t pos = HDR; pos + 16 <= len; pos += record_size(b + pos))
        if (get32(b + pos) == tag) return pos;
    return 0;
}

/* A copy of an image (with room for extra bytes at the end). */
static unsigned char *copy_image(const void *buf, size_t len, size_t extra)
{
    unsigned char *c = malloc(len + extra);
    if (c) memcpy(c, buf, len);
    return c;
}

/* Remove a record, fix the checksums; returns the new length. */
static size_t remove_record(unsigned char *b, size_t len, uint32_t tag)
{
    size_t at = find_record(b, len, tag);
    if (!at) return len;
    size_t n = record_size(b + at);
    memmove(b + at, b + at + n, len - at - n);
    len -= n;
    fix_crcs(b, len);
    return len;
}

/* Drop the last element of an f64 array record (count - 1, data moved up,
 * checksums fixed): the one array no longer matches the sizes. Returns the
 * new length, or len when the record is absent. */
static size_t shrink_record(unsigned char *b, size_t len, uint32_t tag)
{
    size_t at = find_record(b, len, tag);
    if (!at || get64(b + at + 8) == 0) return len;
    size_t end = at + record_size(b + at);
    put64(b + at + 8, get64(b + at + 8) - 1);
    memmove(b + end - 8, b + end, len - end);
    len -= 8;
    fix_crcs(b, len);
    return len;
}

static int contains(const char *s, const char *what) { return strstr(s, what) != NULL; }

static int sentinel_storage;
#define SENTINEL ((rfx_model *)(void *)&sentinel_storage)

/* Loading the image must fail with status want (or any error when want < 0),
 * leave *out untouched, and say msg (when not NULL). Returns the status. */
static rfx_status expect_load_fail(const unsigned char *b, size_t len, int want, const char *msg,
                                   const char *where, int line)
{
    rfx_model *out = SENTINEL;
    rfx_status st = rfx_model_load_buffer(b, len, &out);
    rfx_test_checks++;
    if (st == RFX_OK || (want >= 0 && st != (rfx_status)want) || out != SENTINEL ||
        !contains(rfx_last_error(), "buffer") || (msg && !contains(rfx_last_error(), msg))) {
        rfx_test_fail(__FILE__, line, "%s: status %d (%s), message '%s'", where, (int)st,
                      rfx_strerror(st), rfx_last_error());
        if (st == RFX_OK && out != SENTINEL) rfx_model_free(out);
    }
    return st;
}
#define LOAD_FAILS(b, len, want, msg, where) expect_load_fail(b, len, want, msg, where, __LINE__)

/* ---- data and models ---------------------------------------------------- */

static uint64_t lcg_state = 12345;

static double uniform(void)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg_state >> 11) * (1.0 / 9007199254740992.0);
}

enum { N = 80, NT = 37, DIN = 3 };
static double X[N * DIN], Y[N * 3], XT[NT * DIN];

static void make_data(void)
{
    for (size_t i = 0; i < N * DIN; i++) X[i] = 4.0 * uniform() - 2.0 + 10.0 * (double)(i % DIN);
    for (size_t i = 0; i < NT * DIN; i++) XT[i] = 4.0 * uniform() - 2.0 + 10.0 * (double)(i % DIN);
    for (size_t i = 0; i < N; i++) {
        const double *x = X + i * DIN;
        Y[i * 3 + 0] = sin(x[0]) + 0.5 * x[1] - 0.1 * x[2] + 0.05 * (uniform() - 0.5);
        Y[i * 3 + 1] = cos(x[1]) * x[0];
        Y[i * 3 + 2] = 3.0 - x[2] * 0.01;
    }
}

static rfx_features *make_features(rfx_kernel kernel, rfx_form form, size_t D, uint64_t seed,
                                   const double *ls)
{
    rfx_features_params p = rfx_features_params_default();
    rfx_features *f = NULL;
    p.kernel = kernel;
    p.form = form;
    p.n_features = D;
    p.seed = seed;
    p.nu = 2.5;
    p.length_scale = 3.0;
    p.length_scales = ls;
    CHECK_OK(rfx_features_create(&p, DIN, &f));
    return f;
}

static rfx_model *fit_ridge(rfx_features *f, size_t ny, int intercept)
{
    rfx_ridge_params p = rfx_ridge_params_default();
    rfx_model *m = NULL;
    double *y = malloc(N * ny * sizeof *y);
    for (size_t i = 0; i < N; i++)
        for (size_t k = 0; k < ny; k++) y[i * ny + k] = Y[i * 3 + k];
    p.fit_intercept = intercept;
    p.lambda = 1e-2;
    CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, N, DIN), rfx_cmat_of(y, N, ny), &p, &m));
    free(y);
    rfx_features_free(f);
    return m;
}

static rfx_model *fit_bayes(rfx_features *f, int intercept)
{
    rfx_bayes_params p = rfx_bayes_params_default();
    rfx_model *m = NULL;
    double y[N];
    for (size_t i = 0; i < N; i++) y[i] = Y[i * 3];
    p.fit_intercept = intercept;
    CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, N, DIN), rfx_cmat_of(y, N, 1), &p, &m));
    rfx_features_free(f);
    return m;
}

/* rfx_model_fit with standardisation: a model with an input scaler. */
static rfx_model *fit_standardized(rfx_method method)
{
    rfx_fit_params p = rfx_fit_params_default();
    rfx_model *m = NULL;
    p.method = method;
    p.standardize = 1;
    p.features.n_features = 24;
    p.features.seed = 5;
    p.features.length_scale = 1.5;
    p.lambda = 1e-3;
    rfx_cmat y = {Y, N, 1, 3}; /* the first target column */
    CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, N, DIN), y, &m, NULL));
    return m;
}

/* ---- round trips -------------------------------------------------------- */

static int same_doubles(const double *a, const double *b, size_t n)
{
    return (n == 0) || (a && b && memcmp(a, b, n * sizeof *a) == 0);
}

static void check_same_pce(const rfx_model *a, const rfx_model *b, const char *what);

/* b predicts (and reports) bitwise identically to a. */
static void check_same_model(const rfx_model *a, const rfx_model *b, const char *what)
{
    rfx_model_info ia, ib;
    if (rfx_model_pce(a) || rfx_model_pce(b)) {
        check_same_pce(a, b, what);
        return;
    }
    CHECK_OK(rfx_model_get_info(a, &ia));
    CHECK_OK(rfx_model_get_info(b, &ib));
    CHECK_MSG(ia.method == ib.method && ia.n_inputs == ib.n_inputs &&
                  ia.n_targets == ib.n_targets && ia.n_train == ib.n_train &&
                  ia.standardized == ib.standardized && ia.fit_intercept == ib.fit_intercept &&
                  ia.has_std == ib.has_std && ia.target_transform == ib.target_transform &&
                  same_doubles(&ia.target_lambda, &ib.target_lambda, 1),
              "%s: model info differs", what);
    CHECK_MSG(same_doubles(&ia.lambda, &ib.lambda, 1) &&
                  same_doubles(&ia.noise_var, &ib.noise_var, 1) &&
                  same_doubles(&ia.prior_var, &ib.prior_var, 1) &&
                  same_doubles(&ia.log_evidence, &ib.log_evidence, 1),
              "%s: model scalars differ", what);
    CHECK_MSG(ia.features.kernel == ib.features.kernel && ia.features.form == ib.features.form &&
                  ia.features.n_features == ib.features.n_features &&
                  ia.features.seed == ib.features.seed &&
                  same_doubles(&ia.features.nu, &ib.features.nu, 1) &&
                  same_doubles(&ia.features.length_scale, &ib.features.length_scale, 1) &&
                  (ia.features.length_scales == NULL) == (ib.features.length_scales == NULL),
              "%s: feature parameters differ", what);
    if (ia.features.length_scales && ib.features.length_scales)
        CHECK(same_doubles(ia.features.length_scales, ib.features.length_scales, ia.n_inputs));

    const rfx_features *fa = rfx_model_features(a), *fb = rfx_model_features(b);
    rfx_cmat Wa = rfx_features_frequencies(fa), Wb = rfx_features_frequencies(fb);
    CHECK(Wa.rows == Wb.rows && Wa.cols == Wb.cols);
    CHECK(same_doubles(Wa.data, Wb.data, Wa.rows * Wa.cols));
    CHECK(same_doubles(rfx_features_phases(fa), rfx_features_phases(fb), Wa.rows));
    rfx_cmat Ma = rfx_model_weights(a), Mb = rfx_model_weights(b);
    CHECK(same_doubles(Ma.data, Mb.data, Ma.rows * Ma.cols));
    CHECK(same_doubles(rfx_model_intercepts(a), rfx_model_intercepts(b), ia.n_targets));

    size_t ny = ia.n_targets;
    double *ya = calloc(NT * ny, sizeof *ya), *yb = calloc(NT * ny, sizeof *yb);
    double *sa = calloc(NT * ny, sizeof *sa), *sb = calloc(NT * ny, sizeof *sb);
    rfx_cmat Xt = rfx_cmat_of(XT, NT, DIN);
    if (ia.has_std) {
        CHECK_OK(rfx_model_predict(a, Xt, rfx_mat_of(ya, NT, ny), rfx_mat_of(sa, NT, ny)));
        CHECK_OK(rfx_model_predict(b, Xt, rfx_mat_of(yb, NT, ny), rfx_mat_of(sb, NT, ny)));
        CHECK_MSG(memcmp(sa, sb, NT * ny * sizeof *sa) == 0, "%s: std differs", what);
        CHECK(sa[0] > 0 && isfinite(sa[0]));
        CHECK_OK(rfx_model_predict_latent(a, Xt, rfx_mat_of(ya, NT, ny), rfx_mat_of(sa, NT, ny)));
        CHECK_OK(rfx_model_predict_latent(b, Xt, rfx_mat_of(yb, NT, ny), rfx_mat_of(sb, NT, ny)));
        CHECK_MSG(memcmp(sa, sb, NT * ny * sizeof *sa) == 0, "%s: latent std differs", what);
    } else {
        CHECK_OK(rfx_model_predict(a, Xt, rfx_mat_of(ya, NT, ny), rfx_mat_none()));
        CHECK_OK(rfx_model_predict(b, Xt, rfx_mat_of(yb, NT, ny), rfx_mat_none()));
    }
    CHECK_MSG(memcmp(ya, yb, NT * ny * sizeof *ya) == 0, "%s: predictions differ", what);
    CHECK(isfinite(ya[0]));
    free(ya);
    free(yb);
    free(sa);
    free(sb);
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    unsigned char *b = NULL;
    long n;
    if (!fp) return NULL;
    if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0) {
        b = malloc((size_t)n + 1);
        if (b && fread(b, 1, (size_t)n, fp) != (size_t)n) {
            free(b);
            b = NULL;
        }
        *len = (size_t)n;
    }
    fclose(fp);
    return b;
}

static int write_file(const char *path, const void *b, size_t len)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return 0;
    int ok = fwrite(b, 1, len, fp) == len;
    return fclose(fp) == 0 && ok;
}

/* Temporary files "<name>.tmp.*" left beside path. */
static int leftover_temps(const char *path)
{
    char dir[4096], prefix[4096];
    const char *slash = strrchr(path, '/');
    int found = 0;
    if (!slash) return 0;
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    snprintf(prefix, sizeof prefix, "%s.tmp.", slash + 1);
    DIR *dp = opendir(dir);
    if (!dp) return 0;
    for (struct dirent *e; (e = readdir(dp));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) found++;
    closedir(dp);
    return found;
}

/* Buffer and file round trips; returns the buffer image (caller frees). */
static unsigned char *round_trip(const rfx_model *m, const char *tag, size_t *len_out)
{
    void *buf = NULL, *buf2 = NULL;
    size_t len = 0, len2 = 0, flen = 0;
    rfx_model *m2 = NULL, *m3 = NULL;
    char path[4096], what[128];
    snprintf(path, sizeof path, "%s", rfx_test_tmp(tag));

    snprintf(what, sizeof what, "%s (buffer)", tag);
    CHECK_OK(rfx_model_save_buffer(m, &buf, &len));
    CHECK(len > HDR && len % 8 == 0);
    CHECK_OK(rfx_model_load_buffer(buf, len, &m2));
    if (m2) {
        check_same_model(m, m2, what);
        /* re-saving the loaded model reproduces the image byte for byte */
        CHECK_OK(rfx_model_save_buffer(m2, &buf2, &len2));
        CHECK(len2 == len && buf2 && memcmp(buf, buf2, len) == 0);
        rfx_buffer_free(buf2);
        rfx_model_free(m2);
    }

    snprintf(what, sizeof what, "%s (file)", tag);
    CHECK_OK(rfx_model_save(m, path));
    CHECK(leftover_temps(path) == 0);
    unsigned char *fb = read_file(path, &flen);
    CHECK(fb && flen == len && memcmp(fb, buf, len) == 0); /* the same bytes either way */
    free(fb);
    CHECK_OK(rfx_model_load(path, &m3));
    if (m3) {
        check_same_model(m, m3, what);
        rfx_model_free(m3);
    }
    remove(path);
    *len_out = len;
    return buf;
}

/* ---- damage ------------------------------------------------------------- */

/* Every prefix of an image is refused as truncated. */
static void check_truncation(const unsigned char *img, size_t len, const char *tag)
{
    for (size_t n = 0; n < len; n += (n < 4 * HDR ? 1 : 1 + n / 64))
        LOAD_FAILS(img, n, RFX_EFORMAT, "truncated", tag);
    LOAD_FAILS(img, len - 1, RFX_EFORMAT, "truncated", tag);

    /* and as files: the message names the file */
    const size_t cuts[] = {0, 5, 8, 31, HDR, HDR + 17, len / 2, len - 1};
    char path[4096];
    snprintf(path, sizeof path, "%s", rfx_test_tmp("modelio_cut.rfx"));
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        rfx_model *out = SENTINEL;
        CHECK(write_file(path, img, cuts[i]));
        CHECK_STATUS(rfx_model_load(path, &out), RFX_EFORMAT);
        CHECK(out == SENTINEL);
        CHECK(contains(rfx_last_error(), path) && contains(rfx_last_error(), "truncated"));
    }
    remove(path);
}

/* Every single-bit flip (of every byte_step-th payload byte; all header
 * bytes) is refused: the CRCs, or the version check, catch it. */
static void check_bit_flips(const unsigned char *img, size_t len, size_t byte_step,
                            const char *tag)
{
    unsigned char *b = copy_image(img, len, 0);
    size_t flips = 0;
    for (size_t i = 0; i < len; i += (i < HDR ? 1 : byte_step)) {
        for (int bit = 0; bit < 8; bit++) {
            b[i] ^= (unsigned char)(1u << bit);
            rfx_status st = LOAD_FAILS(b, len, -1, NULL, tag);
            CHECK(st == RFX_EFORMAT || st == RFX_EVERSION);
            b[i] ^= (unsigned char)(1u << bit);
            flips++;
        }
    }
    CHECK(flips >= 8 * HDR);
    CHECK(memcmp(b, img, len) == 0);
    free(b);
}

static void check_header_damage(const unsigned char *img, size_t len)
{
    unsigned char *b = copy_image(img, len, 64);
    char path[4096];

    /* a newer version, with a valid header checksum */
    put32(b + 8, 6);
    fix_header_crc(b);
    LOAD_FAILS(b, len, RFX_EVERSION, "model format version 6 is newer than this library", "v6");
    CHECK(contains(rfx_last_error(), "(5); upgrade rfx"));
    snprintf(path, sizeof path, "%s", rfx_test_tmp("modelio_v2.rfx"));
    CHECK(write_file(path, b, len));
    {
        rfx_model *out = SENTINEL;
        CHECK_STATUS(rfx_model_load(path, &out), RFX_EVERSION);
        CHECK(out == SENTINEL && contains(rfx_last_error(), path));
    }
    remove(path);
    memcpy(b, img, len);

    /* not a model at all */
    b[0] = 'X';
    LOAD_FAILS(b, len, RFX_EFORMAT, "not an rfx model file", "magic");
    LOAD_FAILS((const unsigned char *)"hello, world\n", 13, RFX_EFORMAT, "not an rfx model file",
               "text");
    memcpy(b, img, len);

    /* header fields changed without fixing the header CRC */
    put64(b + 16, (uint64_t)(len - HDR - 8));
    LOAD_FAILS(b, len, RFX_EFORMAT, "checksum mismatch", "header crc");
    memcpy(b, img, len);

    /* header size other than 32, checksum valid */
    put32(b + 12, 40);
    fix_header_crc(b);
    LOAD_FAILS(b, len, RFX_EFORMAT, "header size", "header size");
    memcpy(b, img, len);

    /* a payload byte changed, CRC not fixed */
    b[len - 3] ^= 0x40;
    LOAD_FAILS(b, len, RFX_EFORMAT, "payload checksum mismatch", "payload crc");
    memcpy(b, img, len);

    /* trailing bytes, header unchanged */
    memset(b + len, 0, 8);
    LOAD_FAILS(b, len + 8, RFX_EFORMAT, "trailing", "trailing");
    snprintf(path, sizeof path, "%s", rfx_test_tmp("modelio_trailing.rfx"));
    CHECK(write_file(path, b, len + 8));
    {
        rfx_model *out = SENTINEL;
        CHECK_STATUS(rfx_model_load(path, &out), RFX_EFORMAT);
        CHECK(out == SENTINEL && contains(rfx_last_error(), "trailing"));
    }
    remove(path);

    /* only a header, valid checksums: the first required field is missing */
    fix_crcs(b, HDR);
    LOAD_FAILS(b, HDR, RFX_EFORMAT, "missing field 'method'", "empty payload");
    free(b);
}

/* Patch a u64 scalar record's value; fix the CRCs. */
static void patch_u64(unsigned char *b, size_t len, uint32_t tag, uint64_t v)
{
    size_t at = find_record(b, len, tag);
    CHECK(at > 0);
    if (at) put64(b + at + 16, v);
    fix_crcs(b, len);
}

static void patch_f64(unsigned char *b, size_t len, uint32_t tag, size_t index, double v)
{
    size_t at = find_record(b, len, tag);
    CHECK(at > 0);
    if (at) putf64(b + at + 16 + 8 * index, v);
    fix_crcs(b, len);
}

/* Damage behind valid checksums: the semantic checks must hold. */
static void check_hostile(const unsigned char *img, size_t len, int bayes, int cos_sin)
{
    unsigned char *b = copy_image(img, len, 64);
    size_t at, n;

    /* D = 2^62: shape products overflow or exceed the data; no allocation */
    patch_u64(b, len, T_NF, (uint64_t)1 << 62);
    rfx_status st = LOAD_FAILS(b, len, -1, "n_features", "D = 2^62");
    CHECK(st == RFX_EFORMAT || st == RFX_EOVERFLOW);
    memcpy(b, img, len);
    patch_u64(b, len, T_D, (uint64_t)1 << 40);
    LOAD_FAILS(b, len, RFX_EFORMAT, "n_inputs", "d = 2^40");
    memcpy(b, img, len);
    patch_u64(b, len, T_NY, 0);
    LOAD_FAILS(b, len, RFX_EFORMAT, "n_targets", "ny = 0");
    memcpy(b, img, len);
    /* a consistent lie: D one larger, every array now one row short */
    patch_u64(b, len, T_NF, get64(b + find_record(b, len, T_NF) + 16) + (cos_sin ? 2 : 1));
    LOAD_FAILS(b, len, RFX_EFORMAT, "expected", "D + 1");
    memcpy(b, img, len);

    /* hostile record counts: huge, and one whose byte count wraps to 0 */
    const uint64_t counts[] = {(uint64_t)1 << 62, (uint64_t)1 << 61, UINT64_MAX,
                               ((uint64_t)1 << 61) + 1};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        at = find_record(b, len, T_FREQ);
        put64(b + at + 8, counts[i]);
        fix_crcs(b, len);
        LOAD_FAILS(b, len, RFX_EFORMAT, "frequencies", "count");
        memcpy(b, img, len);
    }
    /* a count smaller than the data: the records after it misalign */
    at = find_record(b, len, T_FREQ);
    put64(b + at + 8, get64(b + at + 8) - 1);
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, NULL, "count - 1");
    memcpy(b, img, len);

    /* enums, flags and values out of range */
    patch_u64(b, len, T_KERNEL, 9);
    LOAD_FAILS(b, len, RFX_EFORMAT, "kernel", "kernel 9");
    memcpy(b, img, len);
    patch_u64(b, len, T_METHOD, 9);
    LOAD_FAILS(b, len, RFX_EFORMAT, "field 'method' = 9, expected 0 .. 8", "method 9");
    memcpy(b, img, len);
    patch_u64(b, len, T_METHOD, bayes ? 0 : 1); /* ridge with a posterior, or bayes without */
    LOAD_FAILS(b, len, RFX_EFORMAT, "chol", "method swapped");
    memcpy(b, img, len);
    patch_f64(b, len, T_LENGTH_SCALES, 0, 0.0);
    LOAD_FAILS(b, len, RFX_EFORMAT, "length_scales", "length scale 0");
    memcpy(b, img, len);
    patch_f64(b, len, T_LENGTH_SCALES, 0, INFINITY);
    LOAD_FAILS(b, len, RFX_EFORMAT, "length_scales", "length scale inf");
    memcpy(b, img, len);
    patch_f64(b, len, T_FREQ, 1, NAN);
    LOAD_FAILS(b, len, RFX_EFORMAT, "frequencies", "NaN frequency");
    memcpy(b, img, len);
    patch_f64(b, len, T_WEIGHTS, 0, -INFINITY);
    LOAD_FAILS(b, len, RFX_EFORMAT, "weights", "inf weight");
    memcpy(b, img, len);
    if (cos_sin) {
        patch_u64(b, len, T_NF, 31);
        LOAD_FAILS(b, len, RFX_EFORMAT, "odd", "odd D for cos-sin");
        memcpy(b, img, len);
    }
    if (bayes) {
        patch_f64(b, len, T_CHOL, 0, 0.0); /* R[0][0] */
        LOAD_FAILS(b, len, RFX_EFORMAT, "chol", "zero pivot");
        memcpy(b, img, len);
        n = remove_record(b, len, T_CHOL);
        LOAD_FAILS(b, n, RFX_EFORMAT, "chol", "no chol");
        memcpy(b, img, len);
    }

    /* one array a value short, every other field intact */
    static const struct { uint32_t tag; const char *name; } arrays[] = {
        {13, "length_scales"}, {14, "frequencies"}, {15, "phases"}, {16, "x_mean"},
        {17, "x_scale"}, {18, "weights"}, {19, "intercept"}, {24, "chol"}, {25, "zmean"}};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) {
        n = shrink_record(b, len, arrays[i].tag);
        if (n < len) LOAD_FAILS(b, n, RFX_EFORMAT, arrays[i].name, "array one short");
        memcpy(b, img, len);
    }

    /* record structure: type, scalar count, padding, duplicates, unknowns */
    at = find_record(b, len, T_METHOD);
    put32(b + at + 4, 1);
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, "element type", "method as f64");
    memcpy(b, img, len);
    put64(b + at + 8, 2);
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, "expected 1", "two methods");
    memcpy(b, img, len);
    at = find_record(b, len, T_CREATOR);
    CHECK(at > 0 && get64(b + at + 8) % 8 != 0);
    b[at + 16 + get64(b + at + 8)] = 'x';
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, "padding", "padding");
    memcpy(b, img, len);
    at = find_record(b, len, T_METHOD);
    memcpy(b + len, b + at, 24); /* the method record again */
    fix_crcs(b, len + 24);
    LOAD_FAILS(b, len + 24, RFX_EFORMAT, "twice", "duplicate");
    memcpy(b, img, len);
    put32(b + len, 99);
    put32(b + len + 4, 2);
    put64(b + len + 8, 1);
    put64(b + len + 16, 0);
    fix_crcs(b, len + 24);
    LOAD_FAILS(b, len + 24, RFX_EFORMAT, "unknown record tag 99", "unknown tag");
    memcpy(b, img, len);
    put32(b + len, 18);
    put32(b + len + 4, 1);
    put64(b + len + 8, 0);
    fix_crcs(b, len + 8); /* half a record header */
    LOAD_FAILS(b, len + 8, RFX_EFORMAT, "record header", "short record");
    memcpy(b, img, len);

    /* required fields missing */
    n = remove_record(b, len, T_WEIGHTS);
    LOAD_FAILS(b, n, RFX_EFORMAT, "missing field 'weights'", "no weights");
    memcpy(b, img, len);
    n = remove_record(b, len, T_LENGTH_SCALE);
    LOAD_FAILS(b, n, RFX_EFORMAT, "missing field 'length_scale'", "no length_scale");
    memcpy(b, img, len);

    /* the creator string is optional */
    n = remove_record(b, len, T_CREATOR);
    rfx_model *m = NULL;
    CHECK_OK(rfx_model_load_buffer(b, n, &m));
    rfx_model_free(m);
    free(b);
}

/* An isotropic length scale that disagrees with the per-input list. */
static void check_isotropic_mismatch(const unsigned char *img, size_t len)
{
    unsigned char *b = copy_image(img, len, 0);
    patch_f64(b, len, T_LENGTH_SCALE, 0, 2.0);
    LOAD_FAILS(b, len, RFX_EFORMAT, "length_scale", "isotropic mismatch");
    free(b);
}

static void check_scaler_pair(const unsigned char *img, size_t len)
{
    unsigned char *b = copy_image(img, len, 0);
    size_t n = remove_record(b, len, T_X_SCALE);
    CHECK(n < len);
    LOAD_FAILS(b, n, RFX_EFORMAT, "x_mean", "x_mean without x_scale");
    memcpy(b, img, len);
    patch_f64(b, len, T_X_SCALE, 1, 0.0);
    LOAD_FAILS(b, len, RFX_EFORMAT, "x_scale", "x_scale 0");
    free(b);
}

static void check_io_errors(const rfx_model *ridge, const rfx_model *bayes)
{
    char path[4096], dirpath[4096];
    rfx_model *out = SENTINEL;
    void *buf = SENTINEL;
    size_t len = 7;

    /* saving into a directory that does not exist */
    snprintf(path, sizeof path, "%s/model.rfx", rfx_test_tmp("modelio_no_such_dir"));
    CHECK_STATUS(rfx_model_save(ridge, path), RFX_EIO);
    CHECK(contains(rfx_last_error(), path));
    CHECK(access(path, F_OK) != 0);

    /* a failure after the temporary file exists (the rename onto a
     * directory) removes it */
    snprintf(dirpath, sizeof dirpath, "%s", rfx_test_tmp("modelio_dir"));
    rmdir(dirpath);
    CHECK(mkdir(dirpath, 0755) == 0);
    CHECK_STATUS(rfx_model_save(ridge, dirpath), RFX_EIO);
    CHECK(contains(rfx_last_error(), dirpath));
    CHECK(leftover_temps(dirpath) == 0);
    rmdir(dirpath);

    /* loading what is not there, or not a file */
    CHECK_STATUS(rfx_model_load(path, &out), RFX_EIO);
    CHECK(out == SENTINEL && contains(rfx_last_error(), path));
    snprintf(dirpath, sizeof dirpath, "%s", rfx_test_tmp("x"));
    *strrchr(dirpath, '/') = '\0';
    CHECK_STATUS(rfx_model_load(dirpath, &out), RFX_EIO);
    CHECK(out == SENTINEL);

    /* NULL arguments */
    CHECK_STATUS(rfx_model_save(NULL, path), RFX_EINVAL);
    CHECK_STATUS(rfx_model_save(ridge, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_model_save_buffer(ridge, NULL, &len), RFX_EINVAL);
    CHECK_STATUS(rfx_model_save_buffer(NULL, &buf, &len), RFX_EINVAL);
    CHECK(buf == SENTINEL && len == 7);
    CHECK_STATUS(rfx_model_load(NULL, &out), RFX_EINVAL);
    CHECK_STATUS(rfx_model_load(path, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_model_load_buffer(NULL, 10, &out), RFX_EINVAL);
    CHECK_STATUS(rfx_model_load_buffer(NULL, 0, &out), RFX_EFORMAT);
    CHECK(out == SENTINEL);

    /* saving over an existing model replaces it whole */
    snprintf(path, sizeof path, "%s", rfx_test_tmp("modelio_replace.rfx"));
    CHECK_OK(rfx_model_save(ridge, path));
    CHECK_OK(rfx_model_save(bayes, path));
    CHECK(leftover_temps(path) == 0);
    rfx_model *m = NULL;
    CHECK_OK(rfx_model_load(path, &m));
    if (m) {
        check_same_model(bayes, m, "replaced");
        rfx_model_free(m);
    }
    remove(path);
}

/* ---- polynomial chaos models ------------------------------------------- */

/* A fitted PCE of the first target: LARS over degrees 1..5 with uniform
 * marginals on the columns' ranges, or least squares of degree 3 with
 * normal marginals. */
static rfx_pce *fit_pce(int lars)
{
    rfx_pce_params p = rfx_pce_params_default();
    rfx_marginal mg[DIN];
    double y[N];
    rfx_pce *pce = NULL;
    for (size_t j = 0; j < DIN; j++)
        mg[j] = lars ? rfx_marginal_uniform(-2.0 + 10.0 * (double)j, 2.0 + 10.0 * (double)j)
                     : rfx_marginal_normal(10.0 * (double)j, 1.5);
    for (size_t i = 0; i < N; i++) y[i] = Y[i * 3];
    p.marginals = mg;
    p.method = lars ? RFX_PCE_METHOD_LARS : RFX_PCE_METHOD_LSQ;
    p.degree = lars ? 5 : 3;
    p.degree_min = lars ? 1 : 0;
    CHECK_OK(rfx_pce_fit(&p, rfx_cmat_of(X, N, DIN), y, &pce));
    return pce;
}

/* An assembled PCE: 5 terms (so 15 multi-index entries: the u32 record
 * is padded), mixed marginals; or none at all (n_terms 0). */
static rfx_pce *make_pce(size_t n_terms)
{
    static const unsigned alpha[5 * DIN] = {0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 0, 3, 0, 1, 1};
    static const double coef[5] = {1.5, -0.25, 0.75, 1e-3, 2.0};
    rfx_marginal mg[DIN] = {rfx_marginal_uniform(-1, 1), rfx_marginal_normal(0.5, 2.0),
                            rfx_marginal_uniform(0, 3)};
    rfx_pce *pce = NULL;
    CHECK_OK(rfx_pce_create(DIN, mg, n_terms, alpha, coef, &pce));
    return pce;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Two PCE models hold the same expansion and fit report, and predict
 * bitwise identically (and as rfx_pce_predict of the expansion). */
static void check_same_pce(const rfx_model *a, const rfx_model *b, const char *what)
{
    rfx_model_info ia, ib;
    rfx_pce_info ja, jb;
    CHECK_OK(rfx_model_get_info(a, &ia));
    CHECK_OK(rfx_model_get_info(b, &ib));
    CHECK_MSG(ia.method == RFX_METHOD_PCE && ib.method == RFX_METHOD_PCE &&
                  ia.n_inputs == ib.n_inputs && ia.n_targets == 1 && ib.n_targets == 1 &&
                  ia.n_train == ib.n_train && !ib.has_std && !ib.standardized,
              "%s: model info differs", what);
    const rfx_pce *pa = rfx_model_pce(a), *pb = rfx_model_pce(b);
    CHECK_MSG(pa && pb && pa != pb, "%s: not two PCE models", what);
    if (!pa || !pb) return;
    CHECK_OK(rfx_pce_get_info(pa, &ja));
    CHECK_OK(rfx_pce_get_info(pb, &jb));
    CHECK_MSG(ja.dim == jb.dim && ja.degree == jb.degree && ja.n_terms == jb.n_terms &&
                  ja.n_candidates == jb.n_candidates && ja.n_train == jb.n_train &&
                  ja.method == jb.method && ja.n_train == ia.n_train,
              "%s: pce info differs", what);
    CHECK_MSG(same_bits(ja.loo_mse, jb.loo_mse) && same_bits(ja.loo_relative, jb.loo_relative) &&
                  same_bits(ja.loo_corrected, jb.loo_corrected) && same_bits(ja.mean, jb.mean) &&
                  same_bits(ja.variance, jb.variance),
              "%s: pce errors or moments differ", what);
    const rfx_marginal *ma = rfx_pce_marginals(pa), *mb = rfx_pce_marginals(pb);
    for (size_t i = 0; i < ja.dim; i++)
        CHECK_MSG(ma[i].kind == mb[i].kind && same_bits(ma[i].a, mb[i].a) &&
                      same_bits(ma[i].b, mb[i].b),
                  "%s: marginal %zu differs", what, i);
    for (size_t k = 0; k < ja.n_terms && ja.n_terms == jb.n_terms; k++) {
        unsigned aa[DIN] = {0}, ab[DIN] = {0};
        double ca = 0, cb = 1;
        CHECK_OK(rfx_pce_term(pa, k, &ca, aa));
        CHECK_OK(rfx_pce_term(pb, k, &cb, ab));
        CHECK_MSG(same_bits(ca, cb) && memcmp(aa, ab, sizeof aa) == 0, "%s: term %zu differs",
                  what, k);
    }
    double ya[NT], yb[NT], yp[NT];
    rfx_cmat Xt = rfx_cmat_of(XT, NT, DIN);
    CHECK_OK(rfx_model_predict(a, Xt, rfx_mat_of(ya, NT, 1), rfx_mat_none()));
    CHECK_OK(rfx_model_predict(b, Xt, rfx_mat_of(yb, NT, 1), rfx_mat_none()));
    CHECK_OK(rfx_pce_predict(pa, Xt, yp));
    CHECK_MSG(memcmp(ya, yb, sizeof ya) == 0 && memcmp(ya, yp, sizeof ya) == 0,
              "%s: predictions differ", what);
    CHECK(isfinite(ya[0]));
}

/* An rfx_function_fn: the expansion's own predictions. */
static rfx_status pce_fn(void *user, rfx_cmat Xb, double *y)
{
    return rfx_pce_predict(user, Xb, y);
}

/* The generic model API on a PCE model m made from pce. */
static void check_pce_model_api(const rfx_model *m, const rfx_pce *pce, const rfx_model *ridge)
{
    rfx_model_info info;
    rfx_pce_info pi;
    rfx_model *out = SENTINEL;
    CHECK_STATUS(rfx_model_from_pce(NULL, &out), RFX_EINVAL);
    CHECK_STATUS(rfx_model_from_pce(pce, NULL), RFX_EINVAL);
    CHECK(out == SENTINEL);
    CHECK(rfx_model_pce(NULL) == NULL && rfx_model_pce(ridge) == NULL);
    CHECK(rfx_model_pce(m) != NULL && rfx_model_pce(m) != pce); /* a copy */

    CHECK_OK(rfx_pce_get_info(pce, &pi));
    CHECK_OK(rfx_model_get_info(m, &info));
    CHECK(info.method == RFX_METHOD_PCE && strcmp(rfx_method_name(info.method), "pce") == 0);
    CHECK(info.n_inputs == DIN && info.n_targets == 1 && info.n_train == pi.n_train);
    CHECK(info.features.n_features == 0 && info.features.length_scales == NULL);
    CHECK(!info.has_std && !info.standardized && info.lambda == 0);
    CHECK(rfx_model_features(m) == NULL);
    rfx_cmat W = rfx_model_weights(m);
    CHECK(W.data == NULL && W.rows == 0 && W.cols == 0);
    CHECK(rfx_model_intercepts(m) == NULL);
    rfx_method mt = RFX_METHOD_RIDGE;
    CHECK_OK(rfx_method_from_name("pce", &mt));
    CHECK(mt == RFX_METHOD_PCE);
    CHECK_STATUS(rfx_method_from_name("polynomial", &mt), RFX_EINVAL);
    CHECK(contains(rfx_last_error(), "pce"));

    /* predictions: rfx_pce_predict's, into contiguous and strided outputs */
    double y[NT], yp[NT], ys[NT * 3], sd[NT];
    rfx_cmat Xt = rfx_cmat_of(XT, NT, DIN);
    CHECK_OK(rfx_pce_predict(pce, Xt, yp));
    CHECK_OK(rfx_model_predict(m, Xt, rfx_mat_of(y, NT, 1), rfx_mat_none()));
    CHECK(memcmp(y, yp, sizeof y) == 0);
    rfx_mat strided = {ys, NT, 1, 3};
    for (size_t i = 0; i < NT * 3; i++) ys[i] = -7.0;
    CHECK_OK(rfx_model_predict_latent(m, Xt, strided, rfx_mat_none()));
    for (size_t i = 0; i < NT; i++) {
        CHECK(same_bits(ys[3 * i], yp[i]));
        CHECK(ys[3 * i + 1] == -7.0 && ys[3 * i + 2] == -7.0);
    }
    CHECK_OK(rfx_model_predict(m, rfx_cmat_of(XT, 0, DIN), rfx_mat_of(y, 0, 1), rfx_mat_none()));

    /* no standard deviations; bad shapes and values; outputs untouched */
    for (size_t i = 0; i < NT; i++) y[i] = -7.0;
    CHECK_STATUS(rfx_model_predict(m, Xt, rfx_mat_of(y, NT, 1), rfx_mat_of(sd, NT, 1)),
                 RFX_EINVAL);
    CHECK(contains(rfx_last_error(), "standard deviation"));
    CHECK_STATUS(rfx_model_predict_latent(m, Xt, rfx_mat_of(y, NT, 1), rfx_mat_of(sd, NT, 1)),
                 RFX_EINVAL);
    CHECK_STATUS(rfx_model_predict(m, rfx_cmat_of(XT, NT / 2, 2), rfx_mat_of(y, NT / 2, 1),
                                   rfx_mat_none()),
                 RFX_EDIM);
    CHECK_STATUS(rfx_model_predict(m, Xt, rfx_mat_of(y, NT - 1, 1), rfx_mat_none()), RFX_EDIM);
    double bad[2 * DIN] = {0, 0, 0, 0, NAN, 0};
    CHECK_STATUS(rfx_model_predict(m, rfx_cmat_of(bad, 2, DIN), rfx_mat_of(y, 2, 1),
                                   rfx_mat_none()),
                 RFX_EPARSE);
    for (size_t i = 0; i < NT; i++) CHECK(y[i] == -7.0);

    /* Monte Carlo Sobol indices of the model: bitwise those of the
     * expansion's own predictions through a callback (the same design),
     * and near the exact ones of its coefficients (Sudret 2008; the
     * estimators' errors are about 1 / sqrt(N), larger for normal inputs
     * of the cubic, heavy-tailed output of fit_pce(0)) */
    double first[DIN], total[DIN], f2[DIN], t2[DIN], f3[DIN], t3[DIN];
    CHECK_OK(rfx_pce_sobol(pce, first, total));
    rfx_sobol_params sp = rfx_sobol_params_default();
    sp.n = 20000;
    sp.n_bootstrap = 0;
    rfx_sobol_result res = {f2, t2, NULL, NULL, NULL, NULL, 0, 0, 0, NULL, NULL, NULL};
    rfx_sobol_result ref = {f3, t3, NULL, NULL, NULL, NULL, 0, 0, 0, NULL, NULL, NULL};
    CHECK_OK(rfx_sobol_model(m, 0, rfx_pce_marginals(pce), DIN, &sp, &res));
    CHECK_OK(rfx_sobol_estimate(pce_fn, (void *)pce, rfx_pce_marginals(pce), DIN, &sp, &ref));
    CHECK(memcmp(f2, f3, sizeof f2) == 0 && memcmp(t2, t3, sizeof t2) == 0);
    for (size_t i = 0; i < DIN; i++) {
        CHECK_NEAR(f2[i], first[i], 0.06);
        CHECK_NEAR(t2[i], total[i], 0.06);
    }
    double mean = 0, var = 0;
    CHECK_OK(rfx_pce_moments(pce, &mean, &var));
    CHECK_NEAR(res.mean, mean, 0.05 * sqrt(var));
    CHECK_STATUS(rfx_sobol_model(m, 1, rfx_pce_marginals(pce), DIN, &sp, &res), RFX_EINVAL);
}

static void patch_u32_entry(unsigned char *b, size_t len, uint32_t tag, size_t index, uint32_t v)
{
    size_t at = find_record(b, len, tag);
    CHECK(at > 0);
    if (at) put32(b + at + 16 + 4 * index, v);
    fix_crcs(b, len);
}

static void patch_u64_entry(unsigned char *b, size_t len, uint32_t tag, size_t index, uint64_t v)
{
    size_t at = find_record(b, len, tag);
    CHECK(at > 0);
    if (at) put64(b + at + 16 + 8 * index, v);
    fix_crcs(b, len);
}

/* Damage to a PCE model's fields behind valid checksums. img holds d = DIN
 * inputs and at least 2 terms. */
static void check_pce_hostile(const unsigned char *img, size_t len)
{
    unsigned char *b = copy_image(img, len, 64);
    size_t at, n;
    uint64_t T = get64(img + find_record(img, len, T_PCE_N_TERMS) + 16);
    uint64_t deg = get64(img + find_record(img, len, T_PCE_DEGREE) + 16);
    CHECK(T >= 2);

    /* every PCE field, and the shared ones, are required */
    static const struct { uint32_t tag; const char *name; } fields[] = {
        {T_D, "n_inputs"}, {T_NY, "n_targets"}, {T_N_TRAIN, "n_train"},
        {T_PCE_KINDS, "pce_marginal_kinds"}, {T_PCE_PARAMS, "pce_marginal_params"},
        {T_PCE_N_TERMS, "pce_n_terms"}, {T_PCE_ALPHA, "pce_multi_indices"},
        {T_PCE_COEF, "pce_coefficients"}, {T_PCE_DEGREE, "pce_degree"},
        {T_PCE_METHOD, "pce_method"}, {T_PCE_CAND, "pce_n_candidates"}, {T_PCE_LOO, "pce_loo"}};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        char msg[96];
        snprintf(msg, sizeof msg, "a pce model without field '%s'", fields[i].name);
        n = remove_record(b, len, fields[i].tag);
        CHECK(n < len);
        LOAD_FAILS(b, n, RFX_EFORMAT, msg, "pce field missing");
        memcpy(b, img, len);
    }
    /* the creator is optional */
    n = remove_record(b, len, T_CREATOR);
    rfx_model *m = NULL;
    CHECK_OK(rfx_model_load_buffer(b, n, &m));
    rfx_model_free(m);
    memcpy(b, img, len);
    /* a field of a feature map: a lambda record appended */
    put32(b + len, T_LAMBDA);
    put32(b + len + 4, E_F64);
    put64(b + len + 8, 1);
    putf64(b + len + 16, 0.5);
    fix_crcs(b, len + 24);
    LOAD_FAILS(b, len + 24, RFX_EFORMAT, "a pce model with field 'lambda'", "pce + lambda");
    memcpy(b, img, len);
    /* the method changed: a ridge model without its feature map */
    patch_u64(b, len, T_METHOD, 0);
    LOAD_FAILS(b, len, RFX_EFORMAT, "missing field 'n_features'", "pce as ridge");
    memcpy(b, img, len);

    /* sizes and counts */
    patch_u64(b, len, T_NY, 2);
    LOAD_FAILS(b, len, RFX_EFORMAT, "n_targets", "pce ny = 2");
    memcpy(b, img, len);
    patch_u64(b, len, T_D, (uint64_t)1 << 40);
    LOAD_FAILS(b, len, RFX_EFORMAT, "n_inputs", "pce d = 2^40");
    memcpy(b, img, len);
    patch_u64(b, len, T_D, 2147483647u); /* T x d far beyond the data */
    LOAD_FAILS(b, len, RFX_EFORMAT, "expected", "pce d = 2^31 - 1");
    memcpy(b, img, len);
    const uint64_t counts[] = {(uint64_t)1 << 62, UINT64_MAX, T + 1, T - 1};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        patch_u64(b, len, T_PCE_N_TERMS, counts[i]);
        LOAD_FAILS(b, len, RFX_EFORMAT, "pce_n_terms", "pce n_terms");
        memcpy(b, img, len);
    }
    const uint64_t rcounts[] = {(uint64_t)1 << 62, ((uint64_t)1 << 62) + 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof rcounts / sizeof *rcounts; i++) {
        at = find_record(b, len, T_PCE_ALPHA);
        put64(b + at + 8, rcounts[i]);
        fix_crcs(b, len);
        LOAD_FAILS(b, len, RFX_EFORMAT, "pce_multi_indices", "pce alpha count");
        memcpy(b, img, len);
    }
    /* two multi-index entries fewer (same padding): the count is wrong */
    at = find_record(b, len, T_PCE_ALPHA);
    {
        size_t end = at + record_size(b + at);
        put64(b + at + 8, get64(b + at + 8) - 2);
        memmove(b + end - 8, b + end, len - end);
        fix_crcs(b, len - 8);
        LOAD_FAILS(b, len - 8, RFX_EFORMAT, "pce_multi_indices", "pce alpha two short");
        memcpy(b, img, len);
    }
    static const struct { uint32_t tag; const char *name; } arrays[] = {
        {T_PCE_KINDS, "pce_marginal_kinds"}, {T_PCE_PARAMS, "pce_marginal_params"},
        {T_PCE_COEF, "pce_coefficients"}, {T_PCE_LOO, "pce_loo"}};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) {
        n = shrink_record(b, len, arrays[i].tag);
        CHECK(n < len);
        LOAD_FAILS(b, n, RFX_EFORMAT, arrays[i].name, "pce array one short");
        memcpy(b, img, len);
    }
    /* the multi-indices as u64: a wrong element type */
    at = find_record(b, len, T_PCE_ALPHA);
    put32(b + at + 4, E_U64);
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, "element type", "pce alpha as u64");
    memcpy(b, img, len);

    /* values */
    patch_u32_entry(b, len, T_PCE_ALPHA, 1, 1001); /* RFX_PCE_MAX_DEGREE + 1 */
    LOAD_FAILS(b, len, RFX_EFORMAT, "RFX_PCE_MAX_DEGREE", "pce alpha 1001");
    memcpy(b, img, len);
    patch_u32_entry(b, len, T_PCE_ALPHA, 0, UINT32_MAX);
    LOAD_FAILS(b, len, RFX_EFORMAT, "RFX_PCE_MAX_DEGREE", "pce alpha 2^32 - 1");
    memcpy(b, img, len);
    patch_u64(b, len, T_PCE_DEGREE, 1001);
    LOAD_FAILS(b, len, RFX_EFORMAT, "pce_degree", "pce degree 1001");
    memcpy(b, img, len);
    patch_u64(b, len, T_PCE_DEGREE, UINT64_MAX);
    LOAD_FAILS(b, len, RFX_EFORMAT, "pce_degree", "pce degree 2^64 - 1");
    memcpy(b, img, len);
    if (deg > 0) {
        patch_u64(b, len, T_PCE_DEGREE, deg - 1);
        LOAD_FAILS(b, len, RFX_EFORMAT, "pce_degree", "pce degree below its terms");
        memcpy(b, img, len);
    }
    patch_u64_entry(b, len, T_PCE_KINDS, 0, 2); /* lognormal: version 5 files only */
    LOAD_FAILS(b, len, RFX_EFORMAT, "is lognormal in a version", "pce kind 2");
    memcpy(b, img, len);
    patch_u64_entry(b, len, T_PCE_KINDS, 0, 3);
    LOAD_FAILS(b, len, RFX_EFORMAT, "pce_marginal_kinds", "pce kind 3");
    memcpy(b, img, len);
    patch_u64_entry(b, len, T_PCE_KINDS, DIN - 1, (uint64_t)1 << 63);
    LOAD_FAILS(b, len, RFX_EFORMAT, "pce_marginal_kinds", "pce kind 2^63");
    memcpy(b, img, len);
    /* a marginal with b = a (uniform) or b = 0 (normal), then a NaN */
    at = find_record(b, len, T_PCE_PARAMS);
    memcpy(b + at + 16 + 8, b + at + 16, 8);
    put64(b + at + 16 + 24, 0);
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, "marginal", "pce degenerate marginal");
    memcpy(b, img, len);
    patch_f64(b, len, T_PCE_PARAMS, 3, NAN);
    LOAD_FAILS(b, len, RFX_EFORMAT, "marginal", "pce NaN marginal");
    memcpy(b, img, len);
    patch_f64(b, len, T_PCE_COEF, T - 1, INFINITY);
    LOAD_FAILS(b, len, RFX_EFORMAT, "pce_coefficients", "pce inf coefficient");
    memcpy(b, img, len);
    patch_f64(b, len, T_PCE_LOO, 2, -1.0);
    LOAD_FAILS(b, len, RFX_EFORMAT, "pce_loo", "pce negative LOO");
    memcpy(b, img, len);
    patch_u64(b, len, T_PCE_METHOD, 2);
    LOAD_FAILS(b, len, RFX_EFORMAT, "pce_method", "pce method 2");
    memcpy(b, img, len);
    /* term 1 repeats term 0's multi-index */
    at = find_record(b, len, T_PCE_ALPHA);
    memcpy(b + at + 16 + 4 * DIN, b + at + 16, 4 * DIN);
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, "repeat", "pce repeated term");
    memcpy(b, img, len);
    /* padding of an odd u32 count */
    at = find_record(b, len, T_PCE_ALPHA);
    if (get64(b + at + 8) % 2 == 1) {
        b[at + 16 + 4 * get64(b + at + 8)] = 1;
        fix_crcs(b, len);
        LOAD_FAILS(b, len, RFX_EFORMAT, "padding", "pce alpha padding");
        memcpy(b, img, len);
    }
    /* NaN LOO errors (an assembled expansion's) load */
    patch_f64(b, len, T_PCE_LOO, 0, NAN);
    m = NULL;
    CHECK_OK(rfx_model_load_buffer(b, len, &m));
    rfx_model_free(m);
    free(b);
}

/* A feature model's file: PCE fields are foreign to it, and a method
 * patched to pce asks for them. */
static void check_feature_file_vs_pce(const unsigned char *img, size_t len)
{
    unsigned char *b = copy_image(img, len, 64);
    for (size_t pos = HDR; pos + 16 <= len; pos += record_size(b + pos))
        CHECK(get32(b + pos) <= 30 || get32(b + pos) == T_STRUCTURE); /* no pce field */
    patch_u64(b, len, T_METHOD, 4);
    LOAD_FAILS(b, len, RFX_EFORMAT, "a pce model without field 'pce_marginal_kinds'",
               "ridge as pce");
    memcpy(b, img, len);
    put32(b + len, T_PCE_DEGREE);
    put32(b + len + 4, E_U64);
    put64(b + len + 8, 1);
    put64(b + len + 16, 3);
    fix_crcs(b, len + 24);
    LOAD_FAILS(b, len + 24, RFX_EFORMAT, "a ridge model with field 'pce_degree'", "ridge + pce");
    free(b);
}

static void check_pce_models(const rfx_model *ridge)
{
    size_t len;
    unsigned char *img;
    const char *names[] = {"modelio_pce_lars.rfx", "modelio_pce_lsq.rfx",
                           "modelio_pce_made.rfx", "modelio_pce_empty.rfx"};
    for (int k = 0; k < 4; k++) {
        rfx_pce *pce = k < 2 ? fit_pce(k == 0) : make_pce(k == 2 ? 5 : 0);
        rfx_model *m = NULL;
        if (!pce) continue;
        CHECK_OK(rfx_model_from_pce(pce, &m));
        if (!m) {
            rfx_pce_free(pce);
            continue;
        }
        if (k < 3) check_pce_model_api(m, pce, ridge);
        rfx_pce_free(pce); /* the model holds its own copy */
        img = round_trip(m, names[k], &len);
        if (k == 0) {
            check_truncation(img, len, "pce truncated");
            check_bit_flips(img, len, 3, "pce bit flip");
            check_header_damage(img, len);
        }
        if (k < 3) check_pce_hostile(img, len);
        rfx_buffer_free(img);
        rfx_model_free(m);
    }
}

/* ---- projected models ---------------------------------------------------- */

/* A projected model (k = 2, ridge surrogate, theta given: no swarm) of the
 * first target. */
static rfx_model *fit_projected(void)
{
    static const double theta[DIN] = {1.0, 0.5, 0.25};
    rfx_projected_params p = rfx_projected_params_default();
    rfx_fit_params fp = rfx_fit_params_default();
    rfx_cmat Xm = rfx_cmat_of(X, N, DIN), Ym = {Y, N, 1, 3};
    rfx_model *m = NULL;
    fp.features.n_features = 24;
    p.fit = &fp;
    p.theta = theta;
    p.n_components = 2;
    p.n_threads = 1;
    CHECK_OK(rfx_projected_fit(&p, Xm, Ym, &m, NULL));
    return m;
}

/* b (len bytes, room for len + extra) with the surrogate record's bytes
 * replaced by the n bytes of nested; the CRCs fixed. Returns the new length,
 * or 0 when it does not fit. */
static size_t replace_nested(unsigned char *b, size_t len, size_t extra, const void *nested,
                             size_t n)
{
    size_t at = find_record(b, len, T_PROJ_SURROGATE);
    CHECK(at > 0);
    if (!at) return 0;
    size_t old = record_size(b + at), now = 16 + n + (8 - n % 8) % 8;
    if (len - old + now > len + extra) return 0;
    memmove(b + at + now, b + at + old, len - at - old);
    put64(b + at + 8, n);
    memcpy(b + at + 16, nested, n);
    memset(b + at + 16 + n, 0, now - 16 - n);
    len = len - old + now;
    fix_crcs(b, len);
    return len;
}

/* Hostile projected files, built by patching a saved one behind valid
 * checksums: each is refused with RFX_EFORMAT naming the field. */
static void check_projected_hostile(const rfx_model *ridge3)
{
    rfx_model *pm = fit_projected(), *m = NULL;
    void *img = NULL, *rimg = NULL;
    size_t len = 0, rlen = 0;
    if (!pm) return;
    CHECK_OK(rfx_model_save_buffer(pm, &img, &len));
    CHECK_OK(rfx_model_save_buffer(ridge3, &rimg, &rlen));
    if (!img || !rimg) goto out;
    /* the saved image loads and predicts bitwise as the model */
    CHECK_OK(rfx_model_load_buffer(img, len, &m));
    if (m) {
        double a[NT], c[NT];
        CHECK_OK(rfx_model_predict(pm, rfx_cmat_of(XT, NT, DIN), rfx_mat_of(a, NT, 1),
                                   rfx_mat_none()));
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(XT, NT, DIN), rfx_mat_of(c, NT, 1),
                                   rfx_mat_none()));
        CHECK(memcmp(a, c, sizeof a) == 0);
        rfx_model_free(m);
    }
    const size_t extra = len + rlen + 64;
    unsigned char *b = copy_image(img, len, extra);
    const unsigned char *I = img;
    CHECK(b != NULL);
    if (!b) goto out;
    CHECK(get64(I + find_record(I, len, T_PROJ_K) + 16) == 2);
    CHECK(get64(I + find_record(I, len, T_N_TRAIN) + 16) == N);

    /* k = 0, k > m, k = 2^64 - 1 */
    const uint64_t ks[] = {0, N + 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        patch_u64(b, len, T_PROJ_K, ks[i]);
        LOAD_FAILS(b, len, RFX_EFORMAT, "projected_k", "projected k");
        memcpy(b, img, len);
    }
    /* k = 3 <= m: then alpha's count (m x 2) no longer matches */
    patch_u64(b, len, T_PROJ_K, 3);
    LOAD_FAILS(b, len, RFX_EFORMAT, "projected_alpha", "projected k = 3");
    memcpy(b, img, len);
    /* theta outside [0, 1], NaN, all zero */
    const double bad_theta[] = {-0.25, 1.5, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_theta / sizeof *bad_theta; i++) {
        patch_f64(b, len, T_PROJ_THETA, i % DIN, bad_theta[i]);
        LOAD_FAILS(b, len, RFX_EFORMAT, "projected_theta", "projected theta out of [0, 1]");
        memcpy(b, img, len);
    }
    for (size_t j = 0; j < DIN; j++) patch_f64(b, len, T_PROJ_THETA, j, 0.0);
    LOAD_FAILS(b, len, RFX_EFORMAT, "all 3 entries are zero", "projected theta all zero");
    memcpy(b, img, len);
    /* gamma, grand mean, loss */
    patch_f64(b, len, T_PROJ_GAMMA, 0, 0.0);
    LOAD_FAILS(b, len, RFX_EFORMAT, "projected_gamma", "projected gamma 0");
    memcpy(b, img, len);
    patch_f64(b, len, T_PROJ_GRAND_MEAN, 0, NAN);
    LOAD_FAILS(b, len, RFX_EFORMAT, "projected_grand_mean", "projected grand mean NaN");
    memcpy(b, img, len);
    patch_f64(b, len, T_PROJ_LOSS, 0, -1.0);
    LOAD_FAILS(b, len, RFX_EFORMAT, "projected_loss", "projected loss < 0");
    memcpy(b, img, len);
    /* counts: m and d at their largest (m d ~ 2^62 elements, far beyond the
     * data), n_train below 2, record counts whose byte sizes overflow */
    patch_u64(b, len, T_N_TRAIN, 2147483647u);
    patch_u64(b, len, T_D, 2147483647u);
    LOAD_FAILS(b, len, RFX_EFORMAT, "expected", "projected m, d = 2^31 - 1");
    memcpy(b, img, len);
    patch_u64(b, len, T_N_TRAIN, (uint64_t)1 << 40);
    LOAD_FAILS(b, len, RFX_EFORMAT, "n_train", "projected m = 2^40");
    memcpy(b, img, len);
    patch_u64(b, len, T_N_TRAIN, 1);
    LOAD_FAILS(b, len, RFX_EFORMAT, "n_train", "projected m = 1");
    memcpy(b, img, len);
    static const uint32_t counted[] = {T_PROJ_ROWS, T_PROJ_ALPHA, T_PROJ_SURROGATE};
    const uint64_t huge[] = {(uint64_t)1 << 61, ((uint64_t)1 << 62) + 1, UINT64_MAX};
    for (size_t t = 0; t < sizeof counted / sizeof *counted; t++) {
        for (size_t i = 0; i < sizeof huge / sizeof *huge; i++) {
            size_t at = find_record(b, len, counted[t]);
            CHECK(at > 0);
            put64(b + at + 8, huge[i]);
            fix_crcs(b, len);
            LOAD_FAILS(b, len, RFX_EFORMAT, NULL, "projected record count");
            memcpy(b, img, len);
        }
    }
    static const struct { uint32_t tag; const char *name; } arrays[] = {
        {T_PROJ_THETA, "projected_theta"}, {T_PROJ_ROWS, "projected_rows"},
        {T_PROJ_ALPHA, "projected_alpha"}, {T_PROJ_ROW_MEANS, "projected_row_means"}};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) {
        size_t n = shrink_record(b, len, arrays[i].tag);
        CHECK(n < len);
        LOAD_FAILS(b, n, RFX_EFORMAT, arrays[i].name, "projected array one short");
        memcpy(b, img, len);
    }
    /* every projected field is required */
    for (uint32_t tag = T_PROJ_K; tag <= T_PROJ_SURROGATE; tag++) {
        size_t n = remove_record(b, len, tag);
        CHECK(n < len);
        LOAD_FAILS(b, n, RFX_EFORMAT, "a projected model without field", "projected field gone");
        memcpy(b, img, len);
    }
    /* a field of another kind of model */
    put32(b + len, T_LAMBDA);
    put32(b + len + 4, E_F64);
    put64(b + len + 8, 1);
    putf64(b + len + 16, 0.5);
    fix_crcs(b, len + 24);
    LOAD_FAILS(b, len + 24, RFX_EFORMAT, "a projected model with field 'lambda'",
               "projected + lambda");
    memcpy(b, img, len);

    /* the nested surrogate: a projected model itself */
    size_t n = replace_nested(b, len, extra, img, len);
    CHECK(n > 0);
    if (n) LOAD_FAILS(b, n, RFX_EFORMAT, "a projected model inside a projected model",
                      "projected in projected");
    memcpy(b, img, len);
    /* ... a model with 3 inputs, not k = 2 */
    n = replace_nested(b, len, extra, rimg, rlen);
    CHECK(n > 0);
    if (n) LOAD_FAILS(b, n, RFX_EFORMAT, "expected projected_k = 2", "surrogate with 3 inputs");
    memcpy(b, img, len);
    /* ... its own payload damaged (its CRC no longer matches), cut short,
     * or its magic gone */
    {
        size_t at = find_record(b, len, T_PROJ_SURROGATE);
        size_t nl = (size_t)get64(b + at + 8);
        b[at + 16 + HDR + (nl - HDR) / 2] ^= 0x10;
        fix_crcs(b, len);
        LOAD_FAILS(b, len, RFX_EFORMAT, "projected_surrogate", "surrogate bit flip");
        memcpy(b, img, len);
        n = replace_nested(b, len, extra, I + at + 16, nl - 8);
        CHECK(n > 0);
        if (n) LOAD_FAILS(b, n, RFX_EFORMAT, "projected_surrogate", "surrogate cut short");
        memcpy(b, img, len);
        n = replace_nested(b, len, extra, I + at + 16, 20);
        if (n) LOAD_FAILS(b, n, RFX_EFORMAT, "projected_surrogate", "surrogate of 20 bytes");
        memcpy(b, img, len);
        b[at + 16] = 'X';
        fix_crcs(b, len);
        LOAD_FAILS(b, len, RFX_EFORMAT, "projected_surrogate", "surrogate without magic");
        memcpy(b, img, len);
    }
    /* the surrogate record as f64: a wrong element type */
    {
        size_t at = find_record(b, len, T_PROJ_SURROGATE);
        uint64_t nl = get64(b + at + 8);
        put32(b + at + 4, E_F64);
        put64(b + at + 8, (nl + 7) / 8);
        fix_crcs(b, len);
        LOAD_FAILS(b, len, RFX_EFORMAT, "element type", "surrogate as f64");
        memcpy(b, img, len);
    }
    /* a truncated projected file */
    for (size_t cut = 1; cut < len; cut += len / 17 + 1)
        LOAD_FAILS(b, len - cut, -1, NULL, "projected truncated");
    free(b);
out:
    rfx_buffer_free(img);
    rfx_buffer_free(rimg);
    rfx_model_free(pm);
}

/* ---- classifiers, kitchen sinks, greedy, structure ----------------------- */

/* Three classes by the first input (labels 1.5, 4, 9), or two (its sign:
 * -1, 2). */
static void class_labels(size_t C, double *y)
{
    for (size_t i = 0; i < N; i++) {
        double t = X[i * DIN];
        y[i] = C == 2 ? (t > 0 ? 2.0 : -1.0) : t < -0.7 ? 1.5 : t < 0.7 ? 4.0 : 9.0;
    }
}

static rfx_model *fit_classifier(size_t C, rfx_loss loss, rfx_multiclass mc)
{
    double y[N];
    class_labels(C, y);
    rfx_features *f = make_features(RFX_KERNEL_GAUSSIAN, RFX_FORM_COS_BIAS, 24, 21, NULL);
    rfx_classify_params p = rfx_classify_params_default();
    p.loss = loss;
    p.multiclass = mc;
    p.lambda = 1e-2;
    rfx_model *m = NULL;
    CHECK_OK(rfx_classify_fit(f, rfx_cmat_of(X, N, DIN), y, &p, &m, NULL));
    rfx_features_free(f);
    return m;
}

/* Classes, classifier info, scores and probabilities bitwise equal. */
static void check_same_classifier(const rfx_model *a, const rfx_model *b, const char *what)
{
    const double *ca, *cb;
    size_t na = 0, nb = 0;
    rfx_classifier_info ia, ib;
    CHECK_OK(rfx_model_classes(a, &ca, &na));
    CHECK_OK(rfx_model_classes(b, &cb, &nb));
    CHECK_MSG(na == nb && na > 0 && same_doubles(ca, cb, na), "%s: classes differ", what);
    CHECK_OK(rfx_model_classifier_info(a, &ia));
    CHECK_OK(rfx_model_classifier_info(b, &ib));
    CHECK_MSG(ia.loss == ib.loss && ia.multiclass == ib.multiclass &&
                  ia.n_classes == ib.n_classes && ia.n_columns == ib.n_columns &&
                  same_doubles(&ia.lambda, &ib.lambda, 1),
              "%s: classifier info differs", what);
    const size_t K = ia.n_columns, C = ia.n_classes;
    CHECK(same_doubles(rfx_model_intercepts(a), rfx_model_intercepts(b), K));
    double *sa = calloc(NT * C, sizeof *sa), *sb = calloc(NT * C, sizeof *sb);
    rfx_cmat Xt = rfx_cmat_of(XT, NT, DIN);
    CHECK_OK(rfx_model_decision(a, Xt, rfx_mat_of(sa, NT, K)));
    CHECK_OK(rfx_model_decision(b, Xt, rfx_mat_of(sb, NT, K)));
    CHECK_MSG(same_doubles(sa, sb, NT * K), "%s: scores differ", what);
    if (ia.loss == RFX_LOSS_LOGISTIC) {
        CHECK_OK(rfx_model_predict_proba(a, Xt, rfx_mat_of(sa, NT, C)));
        CHECK_OK(rfx_model_predict_proba(b, Xt, rfx_mat_of(sb, NT, C)));
        CHECK_MSG(same_doubles(sa, sb, NT * C), "%s: probabilities differ", what);
    }
    free(sa);
    free(sb);
}

/* The target transform (tags 53, 54): none is written as no record (a
 * model keeps its bytes), Box-Cox predicts (1 + lambda f)^(1/lambda) of
 * the untransformed prediction f and is read back exactly, and every
 * inconsistent pair of records is refused by name. m: ridge, one target. */
static void check_target_transform(rfx_model *m)
{
    void *plain = NULL, *again = NULL;
    size_t plen = 0, alen = 0, len = 0;
    CHECK_OK(rfx_model_save_buffer(m, &plain, &plen));
    CHECK(find_record(plain, plen, T_TARGET) == 0 && find_record(plain, plen, T_TARGET_LAMBDA) == 0);
    double *f = malloc(N * sizeof *f), *g = malloc(N * sizeof *g), *h = malloc(N * sizeof *h);
    rfx_cmat XX = rfx_cmat_of(X, N, DIN);
    CHECK_OK(rfx_model_predict(m, XX, rfx_mat_of(f, N, 1), rfx_mat_none()));
    const double lam = 0.37;
    CHECK_OK(rfx_model_set_target_transform(m, RFX_TARGET_BOXCOX, lam));
    CHECK_OK(rfx_model_predict(m, XX, rfx_mat_of(g, N, 1), rfx_mat_none()));
    for (size_t i = 0; i < N; i++) {
        const double base = 1 + lam * f[i], want = base > 0 ? pow(base, 1 / lam) : 0.0;
        CHECK_NEAR(g[i], want, 1e-13 * (1 + fabs(want)));
    }
    unsigned char *img = round_trip(m, "modelio_boxcox.rfx", &len);
    rfx_model *back = NULL;
    CHECK_OK(rfx_model_load_buffer(img, len, &back));
    if (back) {
        rfx_model_info info;
        CHECK_OK(rfx_model_get_info(back, &info));
        CHECK(info.target_transform == RFX_TARGET_BOXCOX && info.target_lambda == lam &&
              !info.has_std);
        CHECK_OK(rfx_model_predict(back, XX, rfx_mat_of(h, N, 1), rfx_mat_none()));
        CHECK(same_doubles(g, h, N));
        rfx_model_free(back);
    }
    /* damaged pairs */
    unsigned char *b = copy_image(img, len, 64);
    size_t n = remove_record(b, len, T_TARGET_LAMBDA);
    LOAD_FAILS(b, n, RFX_EFORMAT, "missing for the boxcox transform", "no lambda");
    memcpy(b, img, len);
    n = remove_record(b, len, T_TARGET);
    LOAD_FAILS(b, n, RFX_EFORMAT, "'target_lambda' without 'target_transform'", "no transform");
    const uint64_t bad_kind[2] = {0, 3};
    const char *bad_msg[2] = {"= 0", "expected 0 .. 2"};
    for (int k = 0; k < 2; k++) {
        memcpy(b, img, len);
        size_t at = find_record(b, len, T_TARGET);
        put64(b + at + 16, bad_kind[k]);
        fix_crcs(b, len);
        LOAD_FAILS(b, len, RFX_EFORMAT, bad_msg[k], "bad transform");
    }
    memcpy(b, img, len);
    putf64(b + find_record(b, len, T_TARGET_LAMBDA) + 16, NAN);
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, "not finite", "NaN lambda");
    free(b);
    rfx_buffer_free(img);
    /* the log: no lambda record; predictions exp(f) */
    CHECK_OK(rfx_model_set_target_transform(m, RFX_TARGET_LOG, 5.0));
    CHECK_OK(rfx_model_predict(m, XX, rfx_mat_of(g, N, 1), rfx_mat_none()));
    for (size_t i = 0; i < N; i++) CHECK_NEAR(g[i], exp(f[i]), 1e-14 * exp(f[i]));
    img = round_trip(m, "modelio_log.rfx", &len);
    CHECK(find_record(img, len, T_TARGET) != 0 && find_record(img, len, T_TARGET_LAMBDA) == 0);
    rfx_buffer_free(img);
    /* back to none: the bytes of the model that never had one */
    CHECK_OK(rfx_model_set_target_transform(m, RFX_TARGET_NONE, 0));
    CHECK_OK(rfx_model_save_buffer(m, &again, &alen));
    CHECK(alen == plen && memcmp(again, plain, plen) == 0);
    CHECK_STATUS(rfx_model_set_target_transform(m, (rfx_target_transform)7, 0), RFX_EINVAL);
    CHECK_STATUS(rfx_model_set_target_transform(m, RFX_TARGET_BOXCOX, INFINITY), RFX_EINVAL);
    rfx_buffer_free(again);
    rfx_buffer_free(plain);
    free(f);
    free(g);
    free(h);
}

/* Names (tags 55, 56): set, kept through files (version 2), a model
 * without them written as version 1 byte for byte as before, and hostile
 * name records refused. */
static void check_names(rfx_model *m)
{
    void *plain = NULL, *named = NULL;
    size_t plen = 0, nlen = 0;
    const char *in[DIN] = {"pressure", "temp\xc3\xa9rature", "x 3"};
    CHECK_OK(rfx_model_save_buffer(m, &plain, &plen));
    CHECK(get32((unsigned char *)plain + 8) == 1);
    CHECK(rfx_model_input_name(m, 0) == NULL && rfx_model_target_name(m) == NULL);
    /* refused names leave the model as it was */
    const char *dup[DIN] = {"a", "b", "a"}, *empty[DIN] = {"a", "", "c"};
    CHECK_STATUS(rfx_model_set_names(m, dup, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "inputs 0 and 2 are both named 'a'") != NULL);
    CHECK_STATUS(rfx_model_set_names(m, empty, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "input name 1 is empty") != NULL);
    CHECK_STATUS(rfx_model_set_names(m, in, "x 3"), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "the target is named 'x 3', as input 2") != NULL);
    CHECK(rfx_model_input_name(m, 0) == NULL);
    CHECK_OK(rfx_model_set_names(m, in, "yield"));
    CHECK(strcmp(rfx_model_input_name(m, 1), in[1]) == 0 && rfx_model_input_name(m, 3) == NULL);
    CHECK(strcmp(rfx_model_target_name(m), "yield") == 0);
    size_t len = 0;
    unsigned char *img = round_trip(m, "modelio_names.rfx", &len);
    CHECK(get32(img + 8) == 2);
    rfx_model *back = NULL;
    CHECK_OK(rfx_model_load_buffer(img, len, &back));
    if (back) {
        for (size_t j = 0; j < DIN; j++) CHECK(strcmp(rfx_model_input_name(back, j), in[j]) == 0);
        CHECK(strcmp(rfx_model_target_name(back), "yield") == 0);
        rfx_model_free(back);
    }
    /* hostile name records */
    unsigned char *b = copy_image(img, len, 64);
    size_t at = find_record(b, len, T_INPUT_NAMES), n;
    CHECK(strlen(in[0]) + strlen(in[1]) + strlen(in[2]) + 3 == 26);
    CHECK(at != 0 && get64(b + at + 8) == strlen(in[0]) + strlen(in[1]) + strlen(in[2]) + 3);
    b[at + 16 + strlen(in[0])] = 'x'; /* two names run together: one short */
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, "does not hold 3 names", "names run together");
    memcpy(b, img, len);
    {
        /* the same 26 bytes, naming "x 3" twice */
        const char twice_names[26] = "x 3\0abcdefghijklmnopq\0x 3";
        memcpy(b, img, len);
        memcpy(b + at + 16, twice_names, sizeof twice_names);
        fix_crcs(b, len);
        LOAD_FAILS(b, len, RFX_EFORMAT, "inputs 0 and 2 are both named 'x 3'", "names twice");
    }
    memcpy(b, img, len);
    n = remove_record(b, len, T_INPUT_NAMES);
    LOAD_FAILS(b, n, RFX_EFORMAT, "'target_name' without 'input_names'", "target name alone");
    /* a version 1 file may not hold names */
    memcpy(b, img, len);
    put32(b + 8, 1);
    fix_header_crc(b);
    LOAD_FAILS(b, len, RFX_EFORMAT, "field 'input_names' in a version 1 file", "v1 with names");
    free(b);
    rfx_buffer_free(img);
    /* names removed: the bytes of the model that never had them */
    CHECK_OK(rfx_model_set_names(m, NULL, NULL));
    CHECK_OK(rfx_model_save_buffer(m, &named, &nlen));
    CHECK(nlen == plen && memcmp(named, plain, plen) == 0);
    rfx_buffer_free(named);
    rfx_buffer_free(plain);
}

/* The input box (tag 57): set, kept (version 2), removed (version 1
 * again), and refused when a range is not finite lo <= hi. */
static void check_input_box(rfx_model *m)
{
    const double lo[DIN] = {-1.5, 0.0, -1e300}, hi[DIN] = {2.0, 0.0, 1e300};
    const double bad_hi[DIN] = {2.0, -1.0, 1.0}, inf_hi[DIN] = {2.0, 1.0, INFINITY};
    const double *glo = NULL, *ghi = NULL;
    CHECK(rfx_model_input_box(m, &glo, &ghi) == 0);
    CHECK_STATUS(rfx_model_set_input_box(m, lo, bad_hi), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "input 1 has [0, -1]") != NULL);
    CHECK_STATUS(rfx_model_set_input_box(m, lo, inf_hi), RFX_EINVAL);
    CHECK_STATUS(rfx_model_set_input_box(m, lo, NULL), RFX_EINVAL);
    CHECK(rfx_model_input_box(m, NULL, NULL) == 0);
    CHECK_OK(rfx_model_set_input_box(m, lo, hi));
    CHECK(rfx_model_input_box(m, &glo, &ghi) == 1 && same_doubles(glo, lo, DIN) &&
          same_doubles(ghi, hi, DIN));
    size_t len = 0;
    unsigned char *img = round_trip(m, "modelio_box.rfx", &len);
    CHECK(get32(img + 8) == 2);
    rfx_model *back = NULL;
    CHECK_OK(rfx_model_load_buffer(img, len, &back));
    if (back) {
        CHECK(rfx_model_input_box(back, &glo, &ghi) == 1 && same_doubles(glo, lo, DIN) &&
              same_doubles(ghi, hi, DIN));
        rfx_model_free(back);
    }
    unsigned char *b = copy_image(img, len, 64);
    size_t at = find_record(b, len, T_INPUT_BOX);
    CHECK(at != 0 && get64(b + at + 8) == 2 * DIN);
    putf64(b + at + 16 + 8 * (DIN + 1), -0.5); /* hi of input 1 below its lo */
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, "field 'input_box': input 1 has [0, -0.5]", "box lo > hi");
    memcpy(b, img, len);
    putf64(b + at + 16, NAN);
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, "not finite", "box NaN");
    memcpy(b, img, len);
    put32(b + 8, 1);
    fix_header_crc(b);
    LOAD_FAILS(b, len, RFX_EFORMAT, "field 'input_box' in a version 1 file", "v1 with a box");
    free(b);
    rfx_buffer_free(img);
    CHECK_OK(rfx_model_set_input_box(m, NULL, NULL));
    CHECK(rfx_model_input_box(m, NULL, NULL) == 0);
    void *plain = NULL;
    size_t plen = 0;
    CHECK_OK(rfx_model_save_buffer(m, &plain, &plen));
    CHECK(get32((unsigned char *)plain + 8) == 1);
    rfx_buffer_free(plain);
}

/* A Bayesian model with intercept fitted on weighted rows keeps sum w (tag
 * 58, version 2): its std after loading is bitwise the same; the field is
 * refused when not finite > 0, or in a model that does not use it. */
static void check_weight_sum(const rfx_model *ridge)
{
    rfx_bayes_params p = rfx_bayes_params_default();
    double y[N], w[N], s1[N], s2[N], m1[N];
    for (size_t i = 0; i < N; i++) {
        y[i] = Y[i * 3];
        w[i] = 0.5 + (double)(i % 3); /* sum w != n */
    }
    p.sample_weight = w;
    rfx_features *f = make_features(RFX_KERNEL_GAUSSIAN, RFX_FORM_COS_BIAS, 24, 5, NULL);
    rfx_model *m = NULL, *back = NULL;
    CHECK_OK(rfx_bayes_fit(f, rfx_cmat_of(X, N, DIN), rfx_cmat_of(y, N, 1), &p, &m));
    rfx_features_free(f);
    if (!m) return;
    size_t len = 0;
    unsigned char *img = round_trip(m, "modelio_weight_sum.rfx", &len);
    CHECK(get32(img + 8) == 2 && find_record(img, len, T_WEIGHT_SUM) != 0);
    CHECK_OK(rfx_model_load_buffer(img, len, &back));
    if (back) {
        CHECK_OK(rfx_model_predict_latent(m, rfx_cmat_of(X, N, DIN), rfx_mat_of(m1, N, 1),
                                          rfx_mat_of(s1, N, 1)));
        CHECK_OK(rfx_model_predict_latent(back, rfx_cmat_of(X, N, DIN), rfx_mat_of(m1, N, 1),
                                          rfx_mat_of(s2, N, 1)));
        CHECK(same_doubles(s1, s2, N));
        rfx_model_free(back);
    }
    unsigned char *b = copy_image(img, len, 64);
    size_t at = find_record(b, len, T_WEIGHT_SUM);
    putf64(b + at + 16, -1.0);
    fix_crcs(b, len);
    LOAD_FAILS(b, len, RFX_EFORMAT, "field 'weight_sum' = -1 is not finite and > 0", "sum w < 0");
    free(b);
    rfx_buffer_free(img);
    /* a ridge model holds no weight sum */
    void *rb = NULL;
    size_t rlen = 0;
    CHECK_OK(rfx_model_save_buffer(ridge, &rb, &rlen));
    unsigned char *r2 = copy_image(rb, rlen, 64);
    put32(r2 + 8, 2);
    fix_header_crc(r2);
    put32(r2 + rlen, T_WEIGHT_SUM);
    put32(r2 + rlen + 4, E_F64);
    put64(r2 + rlen + 8, 1);
    putf64(r2 + rlen + 16, 3.0);
    put64(r2 + 16, rlen + 24 - HDR);
    fix_crcs(r2, rlen + 24);
    LOAD_FAILS(r2, rlen + 24, RFX_EFORMAT, "field 'weight_sum' in a model other than a Bayesian",
               "ridge with sum w");
    free(r2);
    rfx_buffer_free(rb);
    rfx_model_free(m);
}

/* Columns of a table to a model's inputs: by name in any order, with or
 * without the target; by position; and each way it can fail. */
static void check_match_columns(rfx_model *m)
{
    const char *in[DIN] = {"a", "b", "c"};
    size_t cols[DIN], tc = 0;
    /* no names: by position */
    const char *t4[4] = {"c", "y", "a", "b"};
    CHECK_OK(rfx_model_match_columns(m, t4, 3, NULL, cols, &tc));
    CHECK(cols[0] == 0 && cols[1] == 1 && cols[2] == 2 && tc == SIZE_MAX);
    CHECK_OK(rfx_model_match_columns(m, NULL, 4, NULL, cols, &tc));
    CHECK(cols[0] == 0 && cols[2] == 2 && tc == 3);
    CHECK_OK(rfx_model_match_columns(m, NULL, 4, "1", cols, &tc));
    CHECK(cols[0] == 0 && cols[1] == 2 && cols[2] == 3 && tc == 1);
    CHECK_STATUS(rfx_model_match_columns(m, NULL, 5, NULL, cols, &tc), RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "the table has 5 columns; the model takes 3 inputs") != NULL);
    /* by name, reordered, the target found by its name */
    CHECK_OK(rfx_model_set_names(m, in, "y"));
    CHECK_OK(rfx_model_match_columns(m, t4, 4, NULL, cols, &tc));
    CHECK(cols[0] == 2 && cols[1] == 3 && cols[2] == 0 && tc == 1);
    CHECK_OK(rfx_model_match_columns(m, (const char *[]){"b", "c", "a"}, 3, NULL, cols, &tc));
    CHECK(cols[0] == 2 && cols[1] == 0 && cols[2] == 1 && tc == SIZE_MAX);
    /* a table without names still goes by position */
    CHECK_OK(rfx_model_match_columns(m, NULL, 3, NULL, cols, &tc));
    CHECK(cols[0] == 0 && cols[2] == 2 && tc == SIZE_MAX);
    /* the target given by another name */
    CHECK_OK(rfx_model_match_columns(m, (const char *[]){"c", "out", "a", "b"}, 4, "out", cols,
                                     &tc));
    CHECK(cols[0] == 2 && tc == 1);
    /* a renamed input, an unexpected column, a repeated name, a target that is an input */
    CHECK_STATUS(rfx_model_match_columns(m, (const char *[]){"a", "B", "c"}, 3, NULL, cols, &tc),
                 RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "the model's input 'b' is not a column (columns: a, B, c)"));
    CHECK_STATUS(rfx_model_match_columns(m, (const char *[]){"a", "b", "c", "z"}, 4, NULL, cols,
                                         &tc),
                 RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "unexpected column 'z' (column 3): the model's inputs are a, "
                                   "b, c and its target is 'y'"));
    CHECK_STATUS(rfx_model_match_columns(m, (const char *[]){"a", "b", "c", "b"}, 4, NULL, cols,
                                         &tc),
                 RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "column name 'b' appears twice (columns 1 and 3)"));
    CHECK_STATUS(rfx_model_match_columns(m, t4, 4, "a", cols, &tc), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "target column 'a' is the model's input 0"));
    CHECK_STATUS(rfx_model_match_columns(m, t4, 4, "q", cols, &tc), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "target column 'q' not found (columns: c, y, a, b)"));
    /* control bytes of a column name are escaped in the message */
    CHECK_STATUS(rfx_model_match_columns(m, (const char *[]){"a", "b", "c", "\x1b[2J"}, 4, NULL,
                                         cols, &tc),
                 RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "unexpected column '\\x1b[2J'") != NULL);
    CHECK_OK(rfx_model_set_names(m, NULL, NULL));
}

/* Save runs the loader's checks: a model holding a value its file may not
 * hold is refused with the loader's reason, and no file appears (an old
 * one stays as it was). */
static void check_save_validates(rfx_model *m)
{
    char path[4096];
    void *buf = SENTINEL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s", rfx_test_tmp("modelio_invalid.rfx"));
    CHECK_OK(rfx_model_save(m, path));
    size_t before = 0;
    unsigned char *old = read_file(path, &before);
    rfx_cmat W = rfx_model_weights(m);
    double *w = (double *)W.data, keep = w[1];
    w[1] = NAN;
    CHECK_STATUS(rfx_model_save(m, path), RFX_ENUMERIC);
    CHECK(strstr(rfx_last_error(), "would not load back") != NULL &&
          strstr(rfx_last_error(), "weights") != NULL &&
          strstr(rfx_last_error(), "nothing was written") != NULL);
    CHECK(!leftover_temps(path));
    size_t after = 0;
    unsigned char *now = read_file(path, &after);
    CHECK(old && now && after == before && memcmp(old, now, before) == 0);
    CHECK_STATUS(rfx_model_save_buffer(m, &buf, &len), RFX_ENUMERIC);
    CHECK(buf == SENTINEL);
    w[1] = keep;
    CHECK_OK(rfx_model_save(m, path));
    free(old);
    free(now);
    remove(path);
}

/* Append a record of n f64 values v (room for it must exist). */
static size_t append_f64s(unsigned char *b, size_t len, uint32_t tag, const double *v, size_t n)
{
    put32(b + len, tag);
    put32(b + len + 4, E_F64);
    put64(b + len + 8, n);
    for (size_t i = 0; i < n; i++) putf64(b + len + 16 + 8 * i, v[i]);
    len += 16 + 8 * n;
    fix_crcs(b, len);
    return len;
}

static void check_classifier_hostile(const unsigned char *img, size_t len, size_t C, int softmax)
{
    unsigned char *b = copy_image(img, len, 64);
    /* every classifier field is required */
    const uint32_t tags[3] = {T_CLASSES, T_LOSS, T_MULTICLASS};
    const char *names[3] = {"'classes'", "'loss'", "'multiclass'"};
    for (int t = 0; t < 3; t++) {
        size_t n = remove_record(b, len, tags[t]);
        CHECK(n < len);
        char msg[64];
        snprintf(msg, sizeof msg, "a classify model without field %s", names[t]);
        LOAD_FAILS(b, n, RFX_EFORMAT, msg, "classifier field gone");
        memcpy(b, img, len);
    }
    /* classes: fewer than the score columns imply, or below 2 */
    size_t n = shrink_record(b, len, T_CLASSES);
    LOAD_FAILS(b, n, RFX_EFORMAT, C == 2 ? "field 'classes' has 1 values, expected 2 .. 65536"
                                          : "expected 1 score columns for 2 classes",
               "classes shrunk");
    memcpy(b, img, len);
    /* not increasing, not finite */
    size_t at = find_record(b, len, T_CLASSES);
    double c0;
    memcpy(&c0, (uint64_t[1]){get64(b + at + 16)}, sizeof c0);
    patch_f64(b, len, T_CLASSES, 1, c0);
    LOAD_FAILS(b, len, RFX_EFORMAT, "field 'classes'[1]", "classes repeated");
    memcpy(b, img, len);
    patch_f64(b, len, T_CLASSES, 1, c0 - 1);
    LOAD_FAILS(b, len, RFX_EFORMAT, "above the previous class", "classes decreasing");
    memcpy(b, img, len);
    patch_f64(b, len, T_CLASSES, 0, NAN);
    LOAD_FAILS(b, len, RFX_EFORMAT, "field 'classes'[0] = nan", "class NaN");
    memcpy(b, img, len);
    patch_f64(b, len, T_CLASSES, C - 1, INFINITY);
    LOAD_FAILS(b, len, RFX_EFORMAT, "expected a finite number", "class inf");
    memcpy(b, img, len);
    /* enums */
    patch_u64(b, len, T_LOSS, 4);
    LOAD_FAILS(b, len, RFX_EFORMAT, "field 'loss' = 4, expected 0 .. 3", "loss 4");
    memcpy(b, img, len);
    patch_u64(b, len, T_MULTICLASS, 2);
    LOAD_FAILS(b, len, RFX_EFORMAT, "field 'multiclass' = 2, expected 0 .. 1", "multiclass 2");
    memcpy(b, img, len);
    if (softmax) {
        patch_u64(b, len, T_LOSS, 1);
        LOAD_FAILS(b, len, RFX_EFORMAT, "softmax takes the logistic loss", "softmax hinge");
        memcpy(b, img, len);
    }
    /* score columns other than the classes imply */
    patch_u64(b, len, T_NY, C == 2 ? 2 : 1);
    LOAD_FAILS(b, len, RFX_EFORMAT, "field 'n_targets'", "classifier n_targets");
    memcpy(b, img, len);
    /* another method with the classifier's fields */
    patch_u64(b, len, T_METHOD, 0);
    LOAD_FAILS(b, len, RFX_EFORMAT, "a ridge model with the classifier's field 'classes'",
               "ridge with classes");
    memcpy(b, img, len);
    free(b);
}

static void check_classifiers(const rfx_model *ridge)
{
    struct { size_t C; rfx_loss loss; rfx_multiclass mc; const char *tag; } cases[3] = {
        {2, RFX_LOSS_LOGISTIC, RFX_MULTICLASS_OVR, "modelio_cls_binary.rfx"},
        {3, RFX_LOSS_LOGISTIC, RFX_MULTICLASS_SOFTMAX, "modelio_cls_softmax.rfx"},
        {3, RFX_LOSS_HINGE, RFX_MULTICLASS_OVR, "modelio_cls_hinge.rfx"}};
    for (int c = 0; c < 3; c++) {
        rfx_model *m = fit_classifier(cases[c].C, cases[c].loss, cases[c].mc);
        if (!m) continue;
        size_t len = 0;
        unsigned char *img = round_trip(m, cases[c].tag, &len);
        rfx_model *m2 = NULL;
        CHECK_OK(rfx_model_load_buffer(img, len, &m2));
        if (m2) check_same_classifier(m, m2, cases[c].tag);
        rfx_model_free(m2);
        check_classifier_hostile(img, len, cases[c].C, cases[c].mc == RFX_MULTICLASS_SOFTMAX);
        if (c == 0) check_truncation(img, len, "classifier truncated");
        rfx_buffer_free(img);
        rfx_model_free(m);
    }
    /* a standardised classifier from the one-call fit */
    {
        double y[N];
        class_labels(3, y);
        rfx_fit_params p = rfx_fit_params_default();
        p.method = RFX_METHOD_CLASSIFY;
        p.features.n_features = 16;
        p.features.length_scale = 1.0;
        p.lambda = 1e-2;
        rfx_model *m = NULL, *m2 = NULL;
        CHECK_OK(rfx_model_fit(&p, rfx_cmat_of(X, N, DIN), rfx_cmat_of(y, N, 1), &m, NULL));
        if (m) {
            size_t len = 0;
            unsigned char *img = round_trip(m, "modelio_cls_std.rfx", &len);
            CHECK_OK(rfx_model_load_buffer(img, len, &m2));
            if (m2) check_same_classifier(m, m2, "standardised classifier");
            check_scaler_pair(img, len);
            rfx_model_free(m2);
            rfx_buffer_free(img);
        }
        rfx_model_free(m);
    }
    /* a ridge model turned into a classifier lacks the classifier's fields;
     * with them appended it loads (two classes, one column) */
    void *rb = NULL;
    size_t rlen = 0;
    CHECK_OK(rfx_model_save_buffer(ridge, &rb, &rlen));
    if (!rb) return;
    unsigned char *b = copy_image(rb, rlen, 128);
    patch_u64(b, rlen, T_METHOD, RFX_METHOD_CLASSIFY);
    LOAD_FAILS(b, rlen, RFX_EFORMAT, "a classify model without field 'classes'",
               "classifier without classes");
    const double cls[2] = {0, 1}, one = 0;
    size_t n = append_f64s(b, rlen, T_CLASSES, cls, 2);
    put32(b + n, T_LOSS);
    put32(b + n + 4, E_U64);
    put64(b + n + 8, 1);
    put64(b + n + 16, 0);
    put32(b + n + 24, T_MULTICLASS);
    put32(b + n + 28, E_U64);
    put64(b + n + 32, 1);
    put64(b + n + 40, 0);
    n += 48;
    fix_crcs(b, n);
    rfx_model *m = NULL;
    CHECK_OK(rfx_model_load_buffer(b, n, &m));
    if (m) {
        const double *c;
        size_t k = 0;
        CHECK_OK(rfx_model_classes(m, &c, &k));
        CHECK(k == 2 && c[1] == 1);
        rfx_model_free(m);
    }
    /* classes in a ridge model */
    memcpy(b, rb, rlen);
    n = append_f64s(b, rlen, T_CLASSES, &one, 1);
    LOAD_FAILS(b, n, RFX_EFORMAT, "a ridge model with the classifier's field 'classes'",
               "ridge + classes");
    free(b);
    rfx_buffer_free(rb);
}

/* Methods 7 and 8 are plain feature models: a ridge image with the method
 * changed loads and predicts as the ridge model; real fits round-trip. */
static void check_sinks_greedy(const rfx_model *ridge)
{
    void *rb = NULL;
    size_t rlen = 0;
    CHECK_OK(rfx_model_save_buffer(ridge, &rb, &rlen));
    if (!rb) return;
    for (uint64_t method = RFX_METHOD_SINKS; method <= RFX_METHOD_GREEDY; method++) {
        unsigned char *b = copy_image(rb, rlen, 0);
        patch_u64(b, rlen, T_METHOD, method);
        rfx_model *m = NULL;
        CHECK_OK(rfx_model_load_buffer(b, rlen, &m));
        if (m) {
            rfx_model_info info;
            CHECK_OK(rfx_model_get_info(m, &info));
            CHECK(info.method == (rfx_method)method);
            double ya[NT], yb[NT];
            CHECK_OK(rfx_model_predict(ridge, rfx_cmat_of(XT, NT, DIN), rfx_mat_of(ya, NT, 1),
                                       rfx_mat_none()));
            CHECK_OK(rfx_model_predict(m, rfx_cmat_of(XT, NT, DIN), rfx_mat_of(yb, NT, 1),
                                       rfx_mat_none()));
            CHECK(same_doubles(ya, yb, NT));
            rfx_model_free(m);
        }
        /* with a posterior factor, as ridge */
        free(b);
    }
    rfx_buffer_free(rb);
    double y[N];
    for (size_t i = 0; i < N; i++) y[i] = Y[i * 3];
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = 16;
    fp.activation = RFX_ACTIVATION_TANH;
    fp.weights = RFX_WEIGHTS_NORMAL;
    fp.weight_scale = 0.5;
    rfx_features *f = NULL;
    rfx_model *ms = NULL, *mg = NULL;
    CHECK_OK(rfx_features_create(&fp, DIN, &f));
    rfx_sinks_params sp = rfx_sinks_params_default();
    sp.max_iter = 200;
    CHECK_OK(rfx_sinks_fit(f, rfx_cmat_of(X, N, DIN), y, &sp, &ms, NULL));
    rfx_greedy_params gp = rfx_greedy_params_default();
    gp.features.activation = RFX_ACTIVATION_TANH;
    gp.features.weights = RFX_WEIGHTS_NORMAL;
    gp.n_terms = 4;
    gp.n_candidates = 8;
    CHECK_OK(rfx_greedy_fit(rfx_cmat_of(X, N, DIN), y, &gp, &mg, NULL, NULL));
    size_t len;
    if (ms) rfx_buffer_free(round_trip(ms, "modelio_sinks.rfx", &len));
    if (mg) rfx_buffer_free(round_trip(mg, "modelio_greedy.rfx", &len));
    rfx_model_free(ms);
    rfx_model_free(mg);
    rfx_features_free(f);
}

/* Tag 49: absent for i.i.d. maps (files stay readable by builds without
 * the tag), written for structured ones, range-checked; a structured map
 * keeps its structure through a file. */
static void check_structure(const unsigned char *img, size_t len)
{
    CHECK(find_record(img, len, T_STRUCTURE) == 0);
    rfx_features_params fp = rfx_features_params_default();
    fp.structure = RFX_STRUCTURE_ORTHOGONAL;
    fp.n_features = 12;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&fp, DIN, &f));
    if (!f) return;
    rfx_model *r = fit_ridge(f, 1, 1);
    if (!r) return;
    void *buf = NULL;
    size_t bl = 0;
    rfx_model *r2 = NULL;
    CHECK_OK(rfx_model_save_buffer(r, &buf, &bl));
    CHECK_OK(rfx_model_load_buffer(buf, bl, &r2));
    if (r2) {
        rfx_model_info info;
        CHECK_OK(rfx_model_get_info(r2, &info));
        CHECK(info.features.structure == RFX_STRUCTURE_ORTHOGONAL);
        check_same_model(r, r2, "orthogonal features");
    }
    rfx_model_free(r2);
    if (buf) {
        unsigned char *b = copy_image(buf, bl, 0);
        size_t at = find_record(b, bl, T_STRUCTURE);
        CHECK(at > 0 && get64(b + at + 16) == RFX_STRUCTURE_ORTHOGONAL);
        patch_u64(b, bl, T_STRUCTURE, 5);
        LOAD_FAILS(b, bl, RFX_EFORMAT, "field 'structure' = 5, expected 0 .. 4", "structure 5");
        memcpy(b, buf, bl);
        size_t n = remove_record(b, bl, T_STRUCTURE);
        CHECK(n < bl);
        rfx_model *m = NULL;
        CHECK_OK(rfx_model_load_buffer(b, n, &m)); /* the stored W, taken as i.i.d. */
        if (m) {
            rfx_model_info info;
            CHECK_OK(rfx_model_get_info(m, &info));
            CHECK(info.features.structure == RFX_STRUCTURE_IID);
            check_same_model(r, m, "orthogonal features read as i.i.d.");
            rfx_model_free(m);
        }
        free(b);
    }
    rfx_buffer_free(buf);
    rfx_model_free(r);
}

/* SORF's two constructions: a map of the second (the default) is saved
 * with tag 59 = 2 in a version 3 file and loads back bitwise; a map of the
 * first (structure_version 1, what rfx 0.2 made) is saved without tag 59,
 * in a version 1 file as rfx 0.2 wrote it, and loads back as the first,
 * with its W. Without tag 59 the second's W does not match the first's
 * rebuilt map (refused), tag 59 in a version 2 file, with another
 * structure or with a value other than 2 is corrupt. */
static void check_sorf_versions(void)
{
    for (unsigned v = 1; v <= 2; v++) {
        rfx_features_params fp = rfx_features_params_default();
        fp.structure = RFX_STRUCTURE_SORF;
        fp.structure_version = v;
        fp.n_features = 40;
        fp.seed = 4;
        rfx_features *f = NULL;
        CHECK_OK(rfx_features_create(&fp, DIN, &f));
        if (!f) return;
        CHECK(rfx_features_get_params(f).structure_version == v);
        rfx_model *r = fit_ridge(f, 1, 1);
        if (!r) return;
        void *buf = NULL;
        size_t bl = 0;
        rfx_model *r2 = NULL;
        CHECK_OK(rfx_model_save_buffer(r, &buf, &bl));
        if (!buf) continue;
        unsigned char *b = copy_image(buf, bl, 64);
        CHECK(get32(b + 8) == (v == 2 ? 3u : 1u));
        size_t at = find_record(b, bl, T_STRUCTURE_VERSION);
        CHECK(v == 2 ? at > 0 && get64(b + at + 16) == 2 : at == 0);
        CHECK_OK(rfx_model_load_buffer(b, bl, &r2));
        if (r2) {
            rfx_model_info info;
            CHECK_OK(rfx_model_get_info(r2, &info));
            CHECK(info.features.structure == RFX_STRUCTURE_SORF);
            CHECK(info.features.structure_version == v);
            check_same_model(r, r2, v == 2 ? "sorf version 2" : "sorf version 1");
        }
        rfx_model_free(r2);
        if (v == 2) {
            size_t n = remove_record(b, bl, T_STRUCTURE_VERSION);
            LOAD_FAILS(b, n, RFX_EFORMAT, "do not match the structured map of the seed",
                       "sorf 2 read as 1");
            memcpy(b, buf, bl);
            patch_u64(b, bl, T_STRUCTURE_VERSION, 1);
            LOAD_FAILS(b, bl, RFX_EFORMAT, "field 'structure_version' = 1 with structure sorf",
                       "structure_version 1");
            patch_u64(b, bl, T_STRUCTURE_VERSION, 3);
            LOAD_FAILS(b, bl, RFX_EFORMAT, "field 'structure_version' = 3, expected", "version 3");
            memcpy(b, buf, bl);
            patch_u64(b, bl, T_STRUCTURE, RFX_STRUCTURE_FASTFOOD);
            LOAD_FAILS(b, bl, RFX_EFORMAT, "with structure fastfood", "fastfood with 59");
            memcpy(b, buf, bl);
            put32(b + 8, 2);
            fix_header_crc(b);
            LOAD_FAILS(b, bl, RFX_EFORMAT, "field 'structure_version' in a version 2 file",
                       "59 in version 2");
        }
        free(b);
        rfx_buffer_free(buf);
        rfx_model_free(r);
    }
}

int main(void)
{
    size_t len;
    unsigned char *img;
    const double ard[DIN] = {2.0, 0.7, 5.0};
    make_data();

    /* ridge, one target, isotropic gaussian, cos-bias */
    rfx_model *ridge = fit_ridge(make_features(RFX_KERNEL_GAUSSIAN, RFX_FORM_COS_BIAS, 48, 11,
                                               NULL), 1, 1);
    /* bayes, matern cos-sin with intercept (posterior factor + feature means) */
    rfx_model *bayes = fit_bayes(make_features(RFX_KERNEL_MATERN, RFX_FORM_COS_SIN, 40, 3, NULL),
                                 1);
    if (!ridge || !bayes) return rfx_test_finish("test_modelio");

    img = round_trip(ridge, "modelio_ridge.rfx", &len);
    check_truncation(img, len, "ridge truncated");
    check_bit_flips(img, len, 1, "ridge bit flip");
    check_header_damage(img, len);
    check_hostile(img, len, 0, 0);
    check_isotropic_mismatch(img, len);
    rfx_buffer_free(img);

    img = round_trip(bayes, "modelio_bayes.rfx", &len);
    check_truncation(img, len, "bayes truncated");
    check_bit_flips(img, len, 13, "bayes bit flip");
    check_hostile(img, len, 1, 1);
    rfx_buffer_free(img);

    /* three targets, laplacian cos-sin with ARD length scales, no intercept */
    rfx_model *m3 = fit_ridge(make_features(RFX_KERNEL_LAPLACIAN, RFX_FORM_COS_SIN, 32, 7, ard), 3,
                              0);
    if (m3) {
        rfx_model_info info;
        CHECK_OK(rfx_model_get_info(m3, &info));
        CHECK(info.n_targets == 3 && info.features.length_scales != NULL);
        img = round_trip(m3, "modelio_ridge3.rfx", &len);
        check_hostile(img, len, 0, 1);
        rfx_buffer_free(img);
        rfx_model_free(m3);
    }

    /* bayes without intercept (no feature means), cauchy cos-bias */
    rfx_model *b0 = fit_bayes(make_features(RFX_KERNEL_CAUCHY, RFX_FORM_COS_BIAS, 20, 9, NULL), 0);
    if (b0) {
        img = round_trip(b0, "modelio_bayes0.rfx", &len);
        rfx_buffer_free(img);
        rfx_model_free(b0);
    }

    /* models with an input scaler, from the one-call fit */
    for (int k = 0; k < 2; k++) {
        rfx_model *ms = fit_standardized(k ? RFX_METHOD_BAYES : RFX_METHOD_RIDGE);
        if (!ms) continue;
        rfx_model_info info;
        CHECK_OK(rfx_model_get_info(ms, &info));
        CHECK(info.standardized);
        img = round_trip(ms, k ? "modelio_std_bayes.rfx" : "modelio_std_ridge.rfx", &len);
        check_scaler_pair(img, len);
        check_hostile(img, len, k, 0);
        rfx_buffer_free(img);
        rfx_model_free(ms);
    }

    img = round_trip(ridge, "modelio_ridge_again.rfx", &len);
    check_feature_file_vs_pce(img, len);
    rfx_buffer_free(img);
    check_pce_models(ridge);
    check_projected_hostile(ridge);
    img = round_trip(ridge, "modelio_ridge_structure.rfx", &len);
    check_structure(img, len);
    check_sorf_versions();
    rfx_buffer_free(img);
    check_classifiers(ridge);
    check_sinks_greedy(ridge);
    check_target_transform(ridge);
    check_names(ridge);
    check_input_box(ridge);
    check_weight_sum(ridge);
    check_match_columns(ridge);
    check_save_validates(ridge);
    /* several targets, or a Bayesian model's std, take no transform */
    rfx_model *m3t = fit_ridge(make_features(RFX_KERNEL_GAUSSIAN, RFX_FORM_COS_BIAS, 16, 5, NULL),
                               3, 1);
    if (m3t) CHECK_STATUS(rfx_model_set_target_transform(m3t, RFX_TARGET_LOG, 0), RFX_EINVAL);
    rfx_model_free(m3t);
    CHECK_OK(rfx_model_set_target_transform(bayes, RFX_TARGET_LOG, 0));
    {
        double yh[N], ys[N];
        CHECK_STATUS(rfx_model_predict(bayes, rfx_cmat_of(X, N, DIN), rfx_mat_of(yh, N, 1),
                                       rfx_mat_of(ys, N, 1)),
                     RFX_EINVAL);
        CHECK(strstr(rfx_last_error(), "log-transformed") != NULL);
    }
    CHECK_OK(rfx_model_set_target_transform(bayes, RFX_TARGET_NONE, 0));

    check_io_errors(ridge, bayes);
    rfx_model_free(ridge);
    rfx_model_free(bayes);
    return rfx_test_finish("test_modelio");
}
