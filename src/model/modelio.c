/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Model files, format version 1: the container (the layout is documented
 * above rfx_model_save in rfx.h). A 32-byte header (magic, version, header
 * size, payload size, payload CRC, header CRC) and a payload of records
 * (src/core/records.h). Which records a model has is its kind's business:
 * KINDS below maps a file's method to the rfx__model_kind that writes and
 * reads them (src/solvers/feature_model.c, src/surrogate/pce_model.c,
 * src/projection/projected_model.c). This file adds the creator record,
 * the nested model files (the surrogate of a projected model), and the
 * file and buffer I/O.
 *
 * The loader trusts nothing it reads. It checks, in this order: the magic,
 * the version (before the checksums, so that a newer file is refused as
 * newer rather than as corrupt), the header size and checksum, the payload
 * length against the bytes present, the payload checksum, then every record:
 * its tag, element type and count against the bytes that remain, and finally
 * (the kind's load) the values: sizes >= 1 whose products do not overflow,
 * enums in range, array counts equal to the shapes the scalars imply, finite
 * numbers. Only then does it allocate, and every allocation is bounded by
 * the bytes of a record that is actually present. Errors free everything;
 * *out is written only on success.
 */
#include "core/records.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER_SIZE 32
#define FORMAT_VERSION 5 /* the newest this library reads and writes */
#define PATH_SHOWN 160   /* bytes of a path quoted in messages */

static const unsigned char MAGIC[8] = {'R', 'F', 'X', 'M', 'O', 'D', 'L', 0x1a};

/* The kind of each method's models: a file's method picks its reader, and
 * the methods a file may hold are this table's rows. */
static const rfx__model_kind *const KINDS[] = {
    [RFX_METHOD_RIDGE] = &rfx__feature_kind,    [RFX_METHOD_BAYES] = &rfx__feature_kind,
    [RFX_METHOD_SRFE] = &rfx__feature_kind,     [RFX_METHOD_HARFE] = &rfx__feature_kind,
    [RFX_METHOD_PCE] = &rfx__pce_kind,          [RFX_METHOD_PROJECTED] = &rfx__projected_kind,
    [RFX_METHOD_CLASSIFY] = &rfx__feature_kind, [RFX_METHOD_SINKS] = &rfx__feature_kind,
    [RFX_METHOD_GREEDY] = &rfx__feature_kind,
};
#define N_KINDS (sizeof KINDS / sizeof *KINDS)

/* Whether m's feature map needs format version 3: a SORF map of the
 * second construction (tag 59), which rfx 0.2 would rebuild as the first
 * and refuse as corrupt, or a custom kernel (kernel 4), which it would call
 * corrupt; version 3 makes it refuse the file as newer. */
static int needs_v3(const rfx_model *m)
{
    const rfx_features *f = m->features;
    if (!f) return 0;
    if (f->params.kernel == RFX_KERNEL_CUSTOM) return 1;
    return f->params.structure == RFX_STRUCTURE_SORF && f->params.structure_version >= 2;
}

/* Whether m's feature map needs format version 4: the phase-free form
 * (form 2), which a version 3 reader would call corrupt; version 4 makes it
 * refuse the file as newer. */
static int needs_v4(const rfx_model *m)
{
    return m->features && m->features->params.form == RFX_FORM_PHASE_FREE;
}

/* Whether m is a polynomial chaos model of version 5: a lognormal input or
 * a span (tag 60), which a version 4 reader would call corrupt. */
static int needs_v5(const rfx_model *m)
{
    if (!m->pce) return 0;
    if (rfx__pce_span(m->pce)) return 1;
    const rfx_marginal *mg = rfx_pce_marginals(m->pce);
    for (size_t j = 0; j < m->d; j++)
        if (mg[j].kind == RFX_MARGINAL_LOGNORMAL) return 1;
    return 0;
}

/* The oldest version that holds m: 5 for a model of needs_v5, 4 for a map
 * of needs_v4, 3 for one of needs_v3, 2 for a model with names, a box or a
 * weight sum (tags 55..58), else 1, so that a file without them is read by
 * older versions too. */
static uint32_t version_of(const rfx_model *m)
{
    if (needs_v5(m)) return 5;
    if (needs_v4(m)) return 4;
    if (needs_v3(m)) return 3;
    return m->input_names || m->input_box || m->weight_sum > 0 ? 2 : 1;
}

static void encode_header(unsigned char h[HEADER_SIZE], uint32_t version, uint64_t payload,
                          uint32_t payload_crc)
{
    memcpy(h, MAGIC, sizeof MAGIC);
    rfx__put_le32(h + 8, version);
    rfx__put_le32(h + 12, HEADER_SIZE);
    rfx__put_le64(h + 16, payload);
    rfx__put_le32(h + 24, payload_crc);
    rfx__put_le32(h + 28, rfx__crc_of(h, 28));
}

/* ---- writing ------------------------------------------------------------ */

/* The input names (tag 55): the d names with their NUL bytes, which the
 * names block holds one after another. */
static void put_names(rfx__sink *s, const rfx_model *m)
{
    const char *first = m->input_names[0], *last = m->input_names[m->d - 1];
    size_t len = (size_t)(last + strlen(last) + 1 - first);
    rfx__put_bytes(s, RFX__TAG_INPUT_NAMES, (const unsigned char *)first, len);
    if (m->target_name) rfx__put_utf8(s, RFX__TAG_TARGET_NAME, m->target_name);
}

/* The payload: the kind's records (nested: the surrogate's file of a
 * projected model), the target transform, the names, then the creator. */
static rfx_status write_payload(rfx__sink *s, const rfx_model *m, const unsigned char *nested,
                                size_t len)
{
    char creator[64];
    RFX__TRY(m->kind->save(s, m, nested, len));
    if (m->target != RFX_TARGET_NONE) { /* none is written as no record */
        rfx__put_u64(s, RFX__TAG_TARGET, (uint64_t)m->target);
        if (m->target == RFX_TARGET_BOXCOX)
            rfx__put_f64(s, RFX__TAG_TARGET_LAMBDA, m->target_lambda);
    }
    if (m->input_names) put_names(s, m);
    if (m->input_box) rfx__put_f64s(s, RFX__TAG_INPUT_BOX, m->input_box, 2 * m->d);
    if (m->weight_sum > 0) rfx__put_f64(s, RFX__TAG_WEIGHT_SUM, m->weight_sum);
    snprintf(creator, sizeof creator, "rfx %s", rfx_version());
    rfx__put_utf8(s, RFX__TAG_CREATOR, creator);
    rfx__sink_flush(s);
    return RFX_OK;
}

static rfx_status model_bytes(const rfx_model *m, int validate, unsigned char **buf,
                              size_t *len);

/* The surrogate of a projected model as a model file in memory (NULL for
 * other models); the outer file's validation covers it. */
static rfx_status nested_bytes(const rfx_model *m, unsigned char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    if (!m->inner) return RFX_OK;
    rfx_status st = model_bytes(m->inner, 0, buf, len);
    if (st) rfx__error_prefix("the projected model's surrogate");
    return st;
}

/* What the loader says of the bytes the writer made: rfx never writes a
 * file it will not read. A refusal is a value the model should not hold
 * (a weight or scale that is not finite): RFX_ENUMERIC with the loader's
 * reason. */
static rfx_status validate(const unsigned char *b, size_t len)
{
    rfx_model *back = NULL;
    if (rfx_model_load_buffer(b, len, &back) == RFX_OK) {
        rfx_model_free(back);
        return RFX_OK;
    }
    char why[768];
    const char *msg = rfx_last_error();
    snprintf(why, sizeof why, "%s", strncmp(msg, "buffer: ", 8) == 0 ? msg + 8 : msg);
    return rfx__error(RFX_ENUMERIC, "the model would not load back (%s); nothing was written",
                      why);
}

/* The whole file in memory: a measuring pass (size and CRC), the header,
 * the payload, then (validate) the loader's checks of the result. */
static rfx_status model_bytes(const rfx_model *m, int validate_it, unsigned char **buf,
                              size_t *len)
{
    rfx__sink s;
    unsigned char *nb;
    size_t nl;
    if (!m->kind) return rfx__error(RFX_EINTERNAL, "the model is incomplete");
    RFX__TRY(nested_bytes(m, &nb, &nl));
    rfx__sink_init(&s, NULL, NULL);
    rfx_status st = write_payload(&s, m, nb, nl); /* measure */
    if (!st && s.total > SIZE_MAX - HEADER_SIZE)
        st = rfx__error(RFX_EOVERFLOW, "%llu bytes overflow size_t",
                        (unsigned long long)s.total);
    size_t total = st ? 0 : HEADER_SIZE + (size_t)s.total;
    unsigned char *b = st ? NULL : malloc(total);
    if (!st && !b) st = rfx__error(RFX_ENOMEM, "cannot allocate %zu bytes", total);
    if (st) {
        free(nb);
        return st;
    }
    rfx__sink_init(&s, b + HEADER_SIZE, NULL);
    (void)write_payload(&s, m, nb, nl); /* cannot fail: the measuring pass did not */
    free(nb);
    encode_header(b, version_of(m), s.total, s.crc);
    if (validate_it && (st = validate(b, total))) {
        free(b);
        return st;
    }
    *buf = b;
    *len = total;
    return RFX_OK;
}

rfx_status rfx_model_save_buffer(const rfx_model *m, void **buf, size_t *len)
{
    unsigned char *b;
    size_t n;
    if (!m) return rfx__error(RFX_EINVAL, "save model to buffer: model is NULL");
    if (!buf || !len) return rfx__error(RFX_EINVAL, "save model to buffer: buf or len is NULL");
    rfx_status st = model_bytes(m, 1, &b, &n);
    if (st) {
        rfx__error_prefix("save model to buffer");
        return st;
    }
    *buf = b;
    *len = n;
    return RFX_OK;
}

/* Through rfx__output (src/core/output.c): a temporary file beside path,
 * made durable and renamed over it, so readers see the old file or the new
 * one, never half of one; a device or FIFO written directly. The bytes are
 * made and checked in memory first, so nothing is opened for a model the
 * loader would refuse. */
rfx_status rfx_model_save(const rfx_model *m, const char *path)
{
    unsigned char *b = NULL;
    size_t n = 0;
    rfx__output out;
    char q[RFX__QUOTE_SIZE(PATH_SHOWN)];
    if (!m) return rfx__error(RFX_EINVAL, "save model: model is NULL");
    if (!path || !*path) return rfx__error(RFX_EINVAL, "save model: path is NULL or empty");
    const char *shown = rfx__quote(path, strlen(path), PATH_SHOWN, q, sizeof q);
    rfx_status st = model_bytes(m, 1, &b, &n);
    if (st) {
        rfx__error_prefix("%s: save model", shown);
        return st;
    }
    st = rfx__output_open(path, &out);
    if (st) {
        free(b);
        return st;
    }
    int e = fwrite(b, 1, n, out.fp) == n ? 0 : (errno ? errno : EIO);
    free(b);
    if (e) {
        char buf[128];
        if (strerror_r(e, buf, sizeof buf) != 0) snprintf(buf, sizeof buf, "error %d", e);
        rfx__output_abort(&out);
        return rfx__error(RFX_EIO, "%s: cannot write the model: %s", shown, buf);
    }
    return rfx__output_commit(&out);
}

/* ---- reading ------------------------------------------------------------ */

/* The fixed header: magic, version, header size, header CRC. n is the number
 * of header bytes available (< HEADER_SIZE for a short file). */
static rfx_status parse_header(const unsigned char *h, size_t n, const char *name,
                               uint32_t *version_out, uint64_t *payload, uint32_t *payload_crc)
{
    size_t k = n < sizeof MAGIC ? n : sizeof MAGIC;
    if (k > 0 && memcmp(h, MAGIC, k) != 0)
        return rfx__corrupt(name, "not an rfx model file (bad magic)");
    if (n < HEADER_SIZE)
        return rfx__corrupt(name, "truncated: %zu bytes, shorter than the %d-byte header", n,
                            HEADER_SIZE);
    uint32_t version = rfx__get_le32(h + 8);
    if (version > FORMAT_VERSION)
        return rfx__error(RFX_EVERSION,
                          "%s: model format version %lu is newer than this library supports "
                          "(%d); upgrade rfx", name, (unsigned long)version, FORMAT_VERSION);
    if (version == 0) return rfx__corrupt(name, "format version 0 is invalid (corrupt file)");
    if (rfx__get_le32(h + 12) != HEADER_SIZE)
        return rfx__corrupt(name, "header size %lu, expected %d (corrupt file)",
                            (unsigned long)rfx__get_le32(h + 12), HEADER_SIZE);
    if (rfx__get_le32(h + 28) != rfx__crc_of(h, 28))
        return rfx__corrupt(name, "header checksum mismatch (corrupt file)");
    *version_out = version;
    *payload = rfx__get_le64(h + 16);
    *payload_crc = rfx__get_le32(h + 24);
    return RFX_OK;
}

/* The payload size the header announces against the bytes present. */
static rfx_status check_length(uint64_t payload, uint64_t present, const char *name)
{
    if (payload > present)
        return rfx__corrupt(name,
                            "truncated: the header announces %llu payload bytes, %llu present",
                            (unsigned long long)payload, (unsigned long long)present);
    if (payload < present)
        return rfx__corrupt(name, "%llu trailing bytes after the %llu-byte payload (corrupt file)",
                            (unsigned long long)(present - payload), (unsigned long long)payload);
    return RFX_OK;
}

static rfx_status load_payload(const unsigned char *p, size_t n, uint32_t version, uint32_t crc,
                               const char *name, int nested, rfx_model **out);

/* A whole model file inside a record (the surrogate of a projected model),
 * which may not itself hold a projected model: the kinds' rfx__load_nested. */
static rfx_status load_nested(const unsigned char *file, size_t len, const char *name,
                              rfx_model **out)
{
    uint64_t payload = 0;
    uint32_t crc = 0, version = 0;
    RFX__TRY(parse_header(file, len, name, &version, &payload, &crc));
    RFX__TRY(check_length(payload, len - HEADER_SIZE, name));
    return load_payload(file + HEADER_SIZE, (size_t)payload, version, crc, name, 1, out);
}

/* The target transform of any regression model (tags 53 and 54, both
 * optional): set on the model its kind built. */
static rfx_status load_target(const rfx__record *rec, const char *name, rfx_model *m)
{
    const rfx__record *t = &rec[RFX__TAG_TARGET], *l = &rec[RFX__TAG_TARGET_LAMBDA];
    if (!t->present) {
        if (l->present)
            return rfx__corrupt(name, "field 'target_lambda' without 'target_transform' "
                                      "(corrupt file)");
        return RFX_OK;
    }
    uint64_t v = 0;
    RFX__TRY(rfx__rec_enum(rec, RFX__TAG_TARGET, RFX_TARGET_BOXCOX, name, &v));
    if (v == RFX_TARGET_NONE)
        return rfx__corrupt(name, "field 'target_transform' = 0 (none is written as no field; "
                                  "corrupt file)");
    if (m->classes || m->ny != 1)
        return rfx__corrupt(name, "a target transform on a %s model (corrupt file)",
                            m->classes ? "classifier" : "multi-target");
    if ((v == RFX_TARGET_BOXCOX) != l->present)
        return rfx__corrupt(name, "field 'target_lambda' %s (corrupt file)",
                            l->present ? "with a transform other than boxcox"
                                       : "missing for the boxcox transform");
    double lambda = l->present ? rfx__rec_f64(l) : 0.0;
    if (!isfinite(lambda))
        return rfx__corrupt(name, "field 'target_lambda' = %g is not finite (corrupt file)",
                            lambda);
    m->target = (int)v;
    m->target_lambda = lambda;
    return RFX_OK;
}

/* The names (tags 55 and 56, both optional, version 2 on, never in a
 * nested model): d names each ended by a NUL byte, as rfx_model_set_names
 * takes them. */
static rfx_status load_names(const rfx__record *rec, const char *name, uint32_t version,
                             int nested, rfx_model *m)
{
    const rfx__record *r = &rec[RFX__TAG_INPUT_NAMES], *t = &rec[RFX__TAG_TARGET_NAME];
    if (!r->present && !t->present) return RFX_OK;
    if (version < 2)
        return rfx__corrupt(name, "field '%s' in a version %lu file, which has no names "
                            "(corrupt file)", rfx__field_specs[r->present ? RFX__TAG_INPUT_NAMES
                                                                          : RFX__TAG_TARGET_NAME].name,
                            (unsigned long)version);
    if (nested) return rfx__corrupt(name, "names in a projected model's surrogate (corrupt file)");
    if (!r->present) return rfx__corrupt(name, "field 'target_name' without 'input_names' "
                                               "(corrupt file)");
    const char *p = (const char *)r->data, *end = p + r->count;
    char *tname = NULL;
    const char **v = malloc(m->d * sizeof *v);
    if (!v) return rfx__error(RFX_ENOMEM, "%s: cannot allocate %zu names", name, m->d);
    size_t j = 0;
    while (p < end && j < m->d) {
        const char *z = memchr(p, '\0', (size_t)(end - p));
        if (!z) break;
        v[j++] = p;
        p = z + 1;
    }
    rfx_status st = RFX_OK;
    if (j < m->d || p != end)
        st = rfx__corrupt(name, "field 'input_names' does not hold %zu names, each ended by a "
                          "NUL byte (corrupt file)", m->d);
    if (!st && t->present) {
        if (memchr(t->data, '\0', t->count))
            st = rfx__corrupt(name, "field 'target_name' holds a NUL byte (corrupt file)");
        else if (!(tname = malloc(t->count + 1)))
            st = rfx__error(RFX_ENOMEM, "%s: cannot allocate a name", name);
        else {
            memcpy(tname, t->data, t->count);
            tname[t->count] = '\0';
        }
    }
    if (!st && rfx__model_names_check(v, m->d, tname) != RFX_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", rfx_last_error() + strlen("model names: "));
        st = rfx__corrupt(name, "%s (corrupt file)", why);
    }
    if (!st) st = rfx__model_names_copy(m, v, tname);
    free(v);
    free(tname);
    return st;
}

/* The input box (tag 57, optional, version 2 on, never nested): 2d finite
 * values, each lower end <= its upper end. */
static rfx_status load_box(const rfx__record *rec, const char *name, uint32_t version, int nested,
                           rfx_model *m)
{
    const rfx__record *r = &rec[RFX__TAG_INPUT_BOX];
    if (!r->present) return RFX_OK;
    if (version < 2)
        return rfx__corrupt(name, "field 'input_box' in a version %lu file (corrupt file)",
                            (unsigned long)version);
    if (nested) return rfx__corrupt(name, "an input box in a projected model's surrogate "
                                          "(corrupt file)");
    if (r->count != 2 * (uint64_t)m->d)
        return rfx__corrupt(name, "field 'input_box' has %llu values, expected %zu (corrupt file)",
                            (unsigned long long)r->count, 2 * m->d);
    double *box = malloc(2 * m->d * sizeof *box);
    if (!box) return rfx__error(RFX_ENOMEM, "%s: cannot allocate %zu values", name, 2 * m->d);
    rfx__rec_decode_f64s(r, box);
    if (rfx__model_box_check(box, box + m->d, m->d) != RFX_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", rfx_last_error() + strlen("model input box: "));
        free(box);
        return rfx__corrupt(name, "field 'input_box': %s (corrupt file)", why);
    }
    m->input_box = box;
    return RFX_OK;
}

/* The weight sum (tag 58, optional, version 2 on): only a Bayesian model
 * with intercept (the feature means) uses it; finite and > 0. */
static rfx_status load_weight_sum(const rfx__record *rec, const char *name, uint32_t version,
                                  rfx_model *m)
{
    const rfx__record *r = &rec[RFX__TAG_WEIGHT_SUM];
    if (!r->present) return RFX_OK;
    if (version < 2)
        return rfx__corrupt(name, "field 'weight_sum' in a version %lu file (corrupt file)",
                            (unsigned long)version);
    if (m->method != RFX_METHOD_BAYES || !m->zmean)
        return rfx__corrupt(name, "field 'weight_sum' in a model other than a Bayesian one with "
                                  "intercept (corrupt file)");
    const double v = rfx__rec_f64(r);
    if (!isfinite(v) || !(v > 0))
        return rfx__corrupt(name, "field 'weight_sum' = %g is not finite and > 0 (corrupt file)",
                            v);
    m->weight_sum = v;
    return RFX_OK;
}

/* Records -> model: the method picks the kind, which checks and reads the
 * rest. nested: the surrogate of a projected model, of method ridge ..
 * pce. */
static rfx_status build_model(const rfx__record *rec, const char *name, uint32_t version,
                              int nested, rfx_model **out)
{
    uint64_t method = 0;
    if (!rec[RFX__TAG_METHOD].present)
        return rfx__corrupt(name, "missing field 'method' (corrupt file)");
    RFX__TRY(rfx__rec_enum(rec, RFX__TAG_METHOD, N_KINDS - 1, name, &method));
    if (nested && method == RFX_METHOD_PROJECTED)
        return rfx__corrupt(name, "a projected model inside a projected model (corrupt file)");
    if (nested && method > RFX_METHOD_PCE)
        return rfx__corrupt(name, "a %s model as the surrogate of a projected model, which takes "
                            "ridge, bayes, srfe, harfe or pce (corrupt file)",
                            rfx_method_name((rfx_method)method));
    if (rec[RFX__TAG_PCE_SPAN].present && version < 5)
        return rfx__corrupt(name, "field 'pce_span' in a version %lu file (corrupt file)",
                            (unsigned long)version);
    if (rec[RFX__TAG_PCE_KINDS].present && version < 5)
        for (uint64_t j = 0; j < rec[RFX__TAG_PCE_KINDS].count; j++)
            if (rfx__get_le64(rec[RFX__TAG_PCE_KINDS].data + 8 * j) == RFX_MARGINAL_LOGNORMAL)
                return rfx__corrupt(name, "field 'pce_marginal_kinds'[%llu] is lognormal in a "
                                    "version %lu file (corrupt file)", (unsigned long long)j,
                                    (unsigned long)version);
    if (rec[RFX__TAG_STRUCTURE_VERSION].present && version < 3)
        return rfx__corrupt(name, "field 'structure_version' in a version %lu file (corrupt file)",
                            (unsigned long)version);
    if (rec[RFX__TAG_KERNEL].present && rec[RFX__TAG_KERNEL].count == 1 &&
        rfx__rec_u64(&rec[RFX__TAG_KERNEL]) == RFX_KERNEL_CUSTOM && version < 3)
        return rfx__corrupt(name, "the custom kernel in a version %lu file (corrupt file)",
                            (unsigned long)version);
    if (rec[RFX__TAG_FORM].present && rec[RFX__TAG_FORM].count == 1 &&
        rfx__rec_u64(&rec[RFX__TAG_FORM]) == RFX_FORM_PHASE_FREE && version < 4)
        return rfx__corrupt(name, "the phase-free form in a version %lu file (corrupt file)",
                            (unsigned long)version);
    rfx_model *m = NULL;
    RFX__TRY(KINDS[method]->load(rec, name, load_nested, &m));
    rfx_status st = load_target(rec, name, m);
    if (!st) st = load_names(rec, name, version, nested, m);
    if (!st) st = load_box(rec, name, version, nested, m);
    if (!st) st = load_weight_sum(rec, name, version, m);
    if (st) {
        rfx_model_free(m);
        return st;
    }
    *out = m;
    return RFX_OK;
}

/* The payload after the header: checksum, records, model. */
static rfx_status load_payload(const unsigned char *p, size_t n, uint32_t version, uint32_t crc,
                               const char *name, int nested, rfx_model **out)
{
    rfx__record rec[RFX__TAG_END];
    if (rfx__crc_of(p, n) != crc)
        return rfx__corrupt(name, "payload checksum mismatch (corrupt file)");
    RFX__TRY(rfx__parse_records(p, n, name, rec));
    return build_model(rec, name, version, nested, out);
}

rfx_status rfx_model_load_buffer(const void *buf, size_t len, rfx_model **out)
{
    const unsigned char *b = buf;
    uint64_t payload;
    uint32_t crc, version;
    if (!out) return rfx__error(RFX_EINVAL, "load model from buffer: out is NULL");
    if (!buf && len > 0) return rfx__error(RFX_EINVAL, "load model from buffer: buf is NULL");
    RFX__TRY(parse_header(b, len, "buffer", &version, &payload, &crc));
    RFX__TRY(check_length(payload, len - HEADER_SIZE, "buffer"));
    return load_payload(b + HEADER_SIZE, (size_t)payload, version, crc, "buffer", 0, out);
}

/* Read exactly n payload bytes. For a regular file n was already checked
 * against its size; for a pipe or device the buffer grows as bytes arrive,
 * so a hostile header cannot make us allocate more than is really there. */
static rfx_status read_payload(FILE *fp, size_t n, int regular, const char *path,
                               unsigned char **out)
{
    size_t cap = regular || n < ((size_t)1 << 20) ? n : ((size_t)1 << 20), have = 0;
    unsigned char *b = malloc(cap ? cap : 1);
    if (!b) return rfx__error(RFX_ENOMEM, "%s: cannot allocate %zu bytes", path, cap);
    while (have < n) {
        if (have == cap) {
            size_t ncap = cap > n / 2 ? n : 2 * cap;
            unsigned char *nb = realloc(b, ncap);
            if (!nb) {
                free(b);
                return rfx__error(RFX_ENOMEM, "%s: cannot allocate %zu bytes", path, ncap);
            }
            b = nb;
            cap = ncap;
        }
        size_t got = fread(b + have, 1, cap - have, fp);
        if (got == 0) {
            int e = errno;
            int err = ferror(fp);
            free(b);
            if (err) return rfx__error(RFX_EIO, "%s: read error: %s", path, strerror(e));
            return rfx__corrupt(
                path, "truncated: the header announces %zu payload bytes, %zu present", n, have);
        }
        have += got;
    }
    if (fgetc(fp) != EOF) {
        free(b);
        return rfx__corrupt(path, "trailing bytes after the %zu-byte payload (corrupt file)", n);
    }
    *out = b;
    return RFX_OK;
}

rfx_status rfx_model_load(const char *path, rfx_model **out)
{
    unsigned char hdr[HEADER_SIZE], *payload = NULL;
    uint64_t n;
    uint32_t crc, version;
    struct stat sb;
    rfx_status st;
    char q[RFX__QUOTE_SIZE(PATH_SHOWN)];
    if (!path || !out) return rfx__error(RFX_EINVAL, "load model: path or out is NULL");
    const char *name = rfx__quote(path, strlen(path), PATH_SHOWN, q, sizeof q);
    FILE *fp = fopen(path, "rb");
    if (!fp) return rfx__error(RFX_EIO, "%s: cannot open: %s", name, strerror(errno));
    if (fstat(fileno(fp), &sb) != 0) {
        st = rfx__error(RFX_EIO, "%s: cannot stat: %s", name, strerror(errno));
        goto done;
    }
    if (S_ISDIR(sb.st_mode)) {
        st = rfx__error(RFX_EIO, "%s: is a directory, not a model file", name);
        goto done;
    }
    size_t got = fread(hdr, 1, sizeof hdr, fp);
    if (got < sizeof hdr && ferror(fp)) {
        st = rfx__error(RFX_EIO, "%s: read error: %s", name, strerror(errno));
        goto done;
    }
    if ((st = parse_header(hdr, got, name, &version, &n, &crc))) goto done;
    int regular = S_ISREG(sb.st_mode);
    uint64_t size = sb.st_size > HEADER_SIZE ? (uint64_t)sb.st_size : HEADER_SIZE;
    if (regular && (st = check_length(n, size - HEADER_SIZE, name))) goto done;
    if (n > SIZE_MAX) {
        st = rfx__corrupt(name, "the header announces %llu payload bytes, more than size_t holds",
                          (unsigned long long)n);
        goto done;
    }
    if ((st = read_payload(fp, (size_t)n, regular, name, &payload))) goto done;
    st = load_payload(payload, (size_t)n, version, crc, name, 0, out);

done:
    free(payload);
    fclose(fp);
    return st;
}
