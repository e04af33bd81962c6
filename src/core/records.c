/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The record layer of model files (records.h): the field table of format
 * version 1, the record writer (a sink that stages bytes and keeps the
 * payload's CRC) and the record reader with the checks every kind's loader
 * uses. The loader trusts nothing it reads: a record's tag, element type
 * and count are checked against the bytes that remain before its values
 * are read, and every allocation is bounded by a record that is present.
 */
#include "core/records.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <zlib.h>

const rfx__field_spec rfx__field_specs[RFX__TAG_END] = {
    [RFX__TAG_METHOD] = {"method", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_REQUIRED | RFX__F_COMMON},
    [RFX__TAG_N_INPUTS] = {"n_inputs", RFX__ELEM_U64,
                           RFX__F_SCALAR | RFX__F_REQUIRED | RFX__F_COMMON},
    [RFX__TAG_N_FEATURES] = {"n_features", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_N_TARGETS] = {"n_targets", RFX__ELEM_U64,
                            RFX__F_SCALAR | RFX__F_REQUIRED | RFX__F_COMMON},
    [RFX__TAG_N_TRAIN] = {"n_train", RFX__ELEM_U64,
                          RFX__F_SCALAR | RFX__F_REQUIRED | RFX__F_COMMON},
    [RFX__TAG_FIT_INTERCEPT] = {"fit_intercept", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_KERNEL] = {"kernel", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_FORM] = {"form", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_NU] = {"nu", RFX__ELEM_F64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_SEED] = {"seed", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_LENGTH_SCALE] = {"length_scale", RFX__ELEM_F64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_ARD] = {"ard", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_LENGTH_SCALES] = {"length_scales", RFX__ELEM_F64, RFX__F_REQUIRED},
    [RFX__TAG_FREQUENCIES] = {"frequencies", RFX__ELEM_F64, RFX__F_REQUIRED},
    [RFX__TAG_PHASES] = {"phases", RFX__ELEM_F64, RFX__F_REQUIRED},
    [RFX__TAG_X_MEAN] = {"x_mean", RFX__ELEM_F64, RFX__F_PROJ_OPT},
    [RFX__TAG_X_SCALE] = {"x_scale", RFX__ELEM_F64, RFX__F_PROJ_OPT},
    [RFX__TAG_WEIGHTS] = {"weights", RFX__ELEM_F64, RFX__F_REQUIRED},
    [RFX__TAG_INTERCEPT] = {"intercept", RFX__ELEM_F64, RFX__F_REQUIRED},
    [RFX__TAG_LAMBDA] = {"lambda", RFX__ELEM_F64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_NOISE_VAR] = {"noise_var", RFX__ELEM_F64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_PRIOR_VAR] = {"prior_var", RFX__ELEM_F64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_LOG_EVIDENCE] = {"log_evidence", RFX__ELEM_F64, RFX__F_SCALAR | RFX__F_REQUIRED},
    [RFX__TAG_CHOL] = {"chol", RFX__ELEM_F64, 0},
    [RFX__TAG_ZMEAN] = {"zmean", RFX__ELEM_F64, 0},
    [RFX__TAG_CREATOR] = {"creator", RFX__ELEM_UTF8, RFX__F_COMMON},
    [RFX__TAG_ACTIVATION] = {"activation", RFX__ELEM_U64, RFX__F_SCALAR},
    [RFX__TAG_SPARSITY] = {"sparsity", RFX__ELEM_U64, RFX__F_SCALAR},
    [RFX__TAG_WEIGHT_DIST] = {"weights_distribution", RFX__ELEM_U64, RFX__F_SCALAR},
    [RFX__TAG_WEIGHT_SCALE] = {"weight_scale", RFX__ELEM_F64, RFX__F_SCALAR},
    [RFX__TAG_PCE_KINDS] = {"pce_marginal_kinds", RFX__ELEM_U64, RFX__F_PCE},
    [RFX__TAG_PCE_PARAMS] = {"pce_marginal_params", RFX__ELEM_F64, RFX__F_PCE},
    [RFX__TAG_PCE_N_TERMS] = {"pce_n_terms", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_PCE},
    [RFX__TAG_PCE_ALPHA] = {"pce_multi_indices", RFX__ELEM_U32, RFX__F_PCE},
    [RFX__TAG_PCE_COEF] = {"pce_coefficients", RFX__ELEM_F64, RFX__F_PCE},
    [RFX__TAG_PCE_DEGREE] = {"pce_degree", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_PCE},
    [RFX__TAG_PCE_METHOD] = {"pce_method", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_PCE},
    [RFX__TAG_PCE_CANDIDATES] = {"pce_n_candidates", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_PCE},
    [RFX__TAG_PCE_LOO] = {"pce_loo", RFX__ELEM_F64, RFX__F_PCE},
    [RFX__TAG_PROJ_K] = {"projected_k", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_PROJ},
    [RFX__TAG_PROJ_GAMMA] = {"projected_gamma", RFX__ELEM_F64, RFX__F_SCALAR | RFX__F_PROJ},
    [RFX__TAG_PROJ_THETA] = {"projected_theta", RFX__ELEM_F64, RFX__F_PROJ},
    [RFX__TAG_PROJ_ROWS] = {"projected_rows", RFX__ELEM_F64, RFX__F_PROJ},
    [RFX__TAG_PROJ_ALPHA] = {"projected_alpha", RFX__ELEM_F64, RFX__F_PROJ},
    [RFX__TAG_PROJ_ROW_MEANS] = {"projected_row_means", RFX__ELEM_F64, RFX__F_PROJ},
    [RFX__TAG_PROJ_GRAND_MEAN] = {"projected_grand_mean", RFX__ELEM_F64,
                                  RFX__F_SCALAR | RFX__F_PROJ},
    [RFX__TAG_PROJ_LOSS] = {"projected_loss", RFX__ELEM_F64, RFX__F_SCALAR | RFX__F_PROJ},
    [RFX__TAG_PROJ_SURROGATE] = {"projected_surrogate", RFX__ELEM_BYTES, RFX__F_PROJ},
    [RFX__TAG_STRUCTURE] = {"structure", RFX__ELEM_U64, RFX__F_SCALAR},
    [RFX__TAG_CLASSES] = {"classes", RFX__ELEM_F64, RFX__F_CLS},
    [RFX__TAG_LOSS] = {"loss", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_CLS},
    [RFX__TAG_MULTICLASS] = {"multiclass", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_CLS},
    [RFX__TAG_TARGET] = {"target_transform", RFX__ELEM_U64, RFX__F_SCALAR | RFX__F_COMMON},
    [RFX__TAG_TARGET_LAMBDA] = {"target_lambda", RFX__ELEM_F64, RFX__F_SCALAR | RFX__F_COMMON},
    [RFX__TAG_INPUT_NAMES] = {"input_names", RFX__ELEM_BYTES, RFX__F_COMMON},
    [RFX__TAG_TARGET_NAME] = {"target_name", RFX__ELEM_UTF8, RFX__F_COMMON},
    [RFX__TAG_INPUT_BOX] = {"input_box", RFX__ELEM_F64, RFX__F_COMMON},
    [RFX__TAG_WEIGHT_SUM] = {"weight_sum", RFX__ELEM_F64, RFX__F_SCALAR | RFX__F_COMMON},
    [RFX__TAG_STRUCTURE_VERSION] = {"structure_version", RFX__ELEM_U64, RFX__F_SCALAR},
    [RFX__TAG_PCE_SPAN] = {"pce_span", RFX__ELEM_F64, RFX__F_PCE_OPT},
};

/* zlib's crc32 takes a uInt length: feed large buffers in pieces. */
uint32_t rfx__crc_update(uint32_t crc, const unsigned char *p, size_t n)
{
    uLong c = crc;
    while (n > 0) {
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)c;
}

uint32_t rfx__crc_of(const unsigned char *p, size_t n)
{
    return rfx__crc_update((uint32_t)crc32(0L, Z_NULL, 0), p, n);
}

void rfx__sink_init(rfx__sink *s, unsigned char *mem, FILE *fp)
{
    s->mem = mem;
    s->fp = fp;
    s->total = 0;
    s->crc = (uint32_t)crc32(0L, Z_NULL, 0);
    s->err = 0;
    s->staged = 0;
}

void rfx__sink_flush(rfx__sink *s)
{
    size_t n = s->staged;
    s->staged = 0;
    if (n == 0 || s->err) return;
    s->crc = rfx__crc_update(s->crc, s->stage, n);
    if (s->mem) memcpy(s->mem + s->total, s->stage, n);
    if (s->fp && fwrite(s->stage, 1, n, s->fp) != n) s->err = errno ? errno : EIO;
    s->total += n;
}

void rfx__sink_put(rfx__sink *s, const unsigned char *p, size_t n)
{
    while (n > 0) {
        size_t k = sizeof s->stage - s->staged;
        if (k > n) k = n;
        memcpy(s->stage + s->staged, p, k);
        s->staged += k;
        p += k;
        n -= k;
        if (s->staged == sizeof s->stage) rfx__sink_flush(s);
    }
}

void rfx__put_record_header(rfx__sink *s, uint32_t tag, uint32_t type, uint64_t count)
{
    unsigned char h[RFX__RECORD_HEADER];
    rfx__put_le32(h, tag);
    rfx__put_le32(h + 4, type);
    rfx__put_le64(h + 8, count);
    rfx__sink_put(s, h, sizeof h);
}

void rfx__put_u64(rfx__sink *s, uint32_t tag, uint64_t v)
{
    unsigned char b[8];
    rfx__put_record_header(s, tag, RFX__ELEM_U64, 1);
    rfx__put_le64(b, v);
    rfx__sink_put(s, b, sizeof b);
}

/* One 8-byte element after its record header, encoded straight into the
 * stage: large arrays (D x D) dominate. */
void rfx__put_elem64(rfx__sink *s, uint64_t v)
{
    if (sizeof s->stage - s->staged < 8) rfx__sink_flush(s);
    rfx__put_le64(s->stage + s->staged, v);
    s->staged += 8;
}

void rfx__put_f64s(rfx__sink *s, uint32_t tag, const double *v, size_t n)
{
    rfx__put_record_header(s, tag, RFX__ELEM_F64, n);
    for (size_t i = 0; i < n; i++) rfx__put_elem64(s, rfx__f64_bits(v[i]));
}

void rfx__put_u32s(rfx__sink *s, uint32_t tag, const unsigned *v, size_t n)
{
    static const unsigned char zeros[4] = {0};
    rfx__put_record_header(s, tag, RFX__ELEM_U32, n);
    for (size_t i = 0; i < n; i++) {
        if (sizeof s->stage - s->staged < 4) rfx__sink_flush(s);
        rfx__put_le32(s->stage + s->staged, (uint32_t)v[i]);
        s->staged += 4;
    }
    rfx__sink_put(s, zeros, 4 * (n % 2));
}

void rfx__put_f64(rfx__sink *s, uint32_t tag, double v) { rfx__put_f64s(s, tag, &v, 1); }

void rfx__put_utf8(rfx__sink *s, uint32_t tag, const char *str)
{
    static const unsigned char zeros[8] = {0};
    size_t n = strlen(str);
    rfx__put_record_header(s, tag, RFX__ELEM_UTF8, n);
    rfx__sink_put(s, (const unsigned char *)str, n);
    rfx__sink_put(s, zeros, (8 - n % 8) % 8);
}

/* RFX_EFORMAT with the file name (or "buffer") in front. */

rfx_status rfx__corrupt(const char *name, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rfx__error(RFX_EFORMAT, "%s: %s", name, what);
}

/* Split the payload into records, one per tag. Each count is checked against
 * the bytes that remain by division, so no product can wrap. */
rfx_status rfx__parse_records(const unsigned char *p, size_t n, const char *name,
                                rfx__record rec[RFX__TAG_END])
{
    size_t pos = 0;
    memset(rec, 0, RFX__TAG_END * sizeof *rec);
    while (pos < n) {
        if (n - pos < RFX__RECORD_HEADER)
            return rfx__corrupt(name,
                                "payload offset %zu: a record header needs %d bytes, %zu remain "
                                "(corrupt file)",
                                pos, RFX__RECORD_HEADER, n - pos);
        uint32_t tag = rfx__get_le32(p + pos), type = rfx__get_le32(p + pos + 4);
        uint64_t count = rfx__get_le64(p + pos + 8);
        size_t at = pos;
        pos += RFX__RECORD_HEADER;
        if (tag == 0 || tag >= RFX__TAG_END)
            return rfx__corrupt(name, "payload offset %zu: unknown record tag %lu (corrupt file)",
                                at, (unsigned long)tag);
        const rfx__field_spec *spec = &rfx__field_specs[tag];
        if (rec[tag].present)
            return rfx__corrupt(name, "field '%s' appears twice (corrupt file)", spec->name);
        if (type != spec->type)
            return rfx__corrupt(name,
                                "field '%s' has element type %lu, expected %lu (corrupt file)",
                                spec->name, (unsigned long)type, (unsigned long)spec->type);
        if ((spec->flags & RFX__F_SCALAR) && count != 1)
            return rfx__corrupt(name, "field '%s' has %llu values, expected 1 (corrupt file)",
                                spec->name, (unsigned long long)count);
        size_t esize = type == RFX__ELEM_UTF8 || type == RFX__ELEM_BYTES ? 1
                       : type == RFX__ELEM_U32                           ? 4
                                                                         : 8,
               remain = n - pos;
        if (count > remain / esize)
            return rfx__corrupt(name,
                                "field '%s' claims %llu values, only %zu bytes remain "
                                "(corrupt or truncated file)",
                                spec->name, (unsigned long long)count, remain);
        size_t bytes = (size_t)count * esize, pad = (8 - bytes % 8) % 8;
        if (pad > remain - bytes)
            return rfx__corrupt(name, "field '%s': padding runs past the payload (corrupt file)",
                                spec->name);
        for (size_t i = 0; i < pad; i++)
            if (p[pos + bytes + i] != 0)
                return rfx__corrupt(name, "field '%s': non-zero padding (corrupt file)",
                                    spec->name);
        rec[tag].data = p + pos;
        rec[tag].count = count;
        rec[tag].present = 1;
        pos += bytes + pad;
    }
    return RFX_OK;
}

uint64_t rfx__rec_u64(const rfx__record *r) { return rfx__get_le64(r->data); }
double rfx__rec_f64(const rfx__record *r) { return rfx__f64_from_bits(rfx__get_le64(r->data)); }

void rfx__rec_decode_f64s(const rfx__record *r, double *out)
{
    for (uint64_t i = 0; i < r->count; i++)
        out[i] = rfx__f64_from_bits(rfx__get_le64(r->data + 8 * i));
}

/* A size field: >= 1 and within the int range that BLAS and LAPACK take
 * (prediction passes d, D and ny to them). */
rfx_status rfx__rec_dim(const rfx__record *rec, int tag, const char *name, size_t *out)
{
    uint64_t v = rfx__rec_u64(&rec[tag]);
    if (v < 1 || v > 2147483647u)
        return rfx__corrupt(name, "field '%s' = %llu, expected 1 .. 2147483647 (corrupt file)",
                            rfx__field_specs[tag].name, (unsigned long long)v);
    *out = (size_t)v;
    return RFX_OK;
}

rfx_status rfx__rec_enum(const rfx__record *rec, int tag, uint64_t max, const char *name,
                           uint64_t *out)
{
    uint64_t v = rfx__rec_u64(&rec[tag]);
    if (v > max)
        return rfx__corrupt(name, "field '%s' = %llu, expected 0 .. %llu (corrupt file)",
                            rfx__field_specs[tag].name, (unsigned long long)v,
                            (unsigned long long)max);
    *out = v;
    return RFX_OK;
}

/* An array field must have exactly the count its shape implies. */
rfx_status rfx__rec_check_count(const rfx__record *rec, int tag, size_t expected, const char *shape,
                                const char *name)
{
    if (rec[tag].present && rec[tag].count != expected)
        return rfx__corrupt(name, "field '%s' has %llu values, expected %s = %zu (corrupt file)",
                            rfx__field_specs[tag].name, (unsigned long long)rec[tag].count, shape,
                            expected);
    return RFX_OK;
}

/* The optional input scaler: both of x_mean and x_scale with d values, or
 * neither. */
rfx_status rfx__rec_check_scaler(const rfx__record *rec, size_t d, const char *name)
{
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_X_MEAN, d, "d", name));
    RFX__TRY(rfx__rec_check_count(rec, RFX__TAG_X_SCALE, d, "d", name));
    if (rec[RFX__TAG_X_MEAN].present != rec[RFX__TAG_X_SCALE].present)
        return rfx__corrupt(name, "field '%s' without '%s' (corrupt file)",
                            rec[RFX__TAG_X_MEAN].present ? "x_mean" : "x_scale",
                            rec[RFX__TAG_X_MEAN].present ? "x_scale" : "x_mean");
    return RFX_OK;
}

/* Every value finite (and > 0 when positive is set). */
rfx_status rfx__rec_check_values(const double *v, size_t n, int positive, int tag, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i]) || (positive && !(v[i] > 0)))
            return rfx__corrupt(name, "field '%s'[%zu] = %g, expected a %s number (corrupt file)",
                                rfx__field_specs[tag].name, i, v[i],
                                positive ? "positive finite" : "finite");
    }
    return RFX_OK;
}

rfx_status rfx__rec_check_scalar(const rfx__record *rec, int tag, const char *name)
{
    double v = rfx__rec_f64(&rec[tag]);
    if (!(isfinite(v) && v >= 0))
        return rfx__corrupt(name, "field '%s' = %g, expected a finite number >= 0 (corrupt file)",
                            rfx__field_specs[tag].name, v);
    return RFX_OK;
}

/* Decode an f64 record into a fresh array (bounded by the record's bytes). */
rfx_status rfx__rec_decode_new(const rfx__record *r, double **out, const char *what)
{
    double *v;
    RFX__TRY(rfx__alloc((size_t)r->count, sizeof(double), (void **)&v, what));
    rfx__rec_decode_f64s(r, v);
    *out = v;
    return RFX_OK;
}
void rfx__put_bytes(rfx__sink *s, uint32_t tag, const unsigned char *p, size_t n)
{
    static const unsigned char zeros[8] = {0};
    rfx__put_record_header(s, tag, RFX__ELEM_BYTES, n);
    rfx__sink_put(s, p, n);
    rfx__sink_put(s, zeros, (8 - n % 8) % 8);
}

rfx_status rfx__rec_mul(size_t a, size_t b, size_t *out, const char *what, const char *name)
{
    rfx_status st = rfx__mul(a, b, out, what);
    if (st) rfx__error_prefix("%s", name);
    return st;
}

rfx_status rfx__rec_failure(rfx_status st, const char *name)
{
    if (st == RFX_EINVAL) {
        char why[512];
        snprintf(why, sizeof why, "%s", rfx_last_error());
        return rfx__corrupt(name, "%s (corrupt file)", why);
    }
    if (st) rfx__error_prefix("%s", name);
    return st;
}
