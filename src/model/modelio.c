/*
 * Model files, format version 1 (the layout is documented above
 * rfx_model_save in rfx.h; the record tags are the enum below).
 *
 * Every integer is encoded byte by byte, little-endian, and every double as
 * the little-endian bytes of its IEEE-754 bit pattern, so a file written on
 * one host loads bitwise identically on any other, whatever its byte order.
 *
 * The loader trusts nothing it reads. It checks, in this order: the magic,
 * the version (before the checksums, so that a newer file is refused as
 * newer rather than as corrupt), the header size and checksum, the payload
 * length against the bytes present, the payload checksum, then every record:
 * its tag, element type and count against the bytes that remain, and finally
 * the values: sizes >= 1 whose products do not overflow, enums in range,
 * array counts equal to the shapes the scalars imply, finite numbers. Only
 * then does it allocate, and every allocation is bounded by the bytes of a
 * record that is actually present. Errors free everything; *out is written
 * only on success.
 *
 * A polynomial chaos model (RFX_METHOD_PCE) has no feature map: its file
 * holds the shared fields (method, n_inputs, n_targets, n_train, creator)
 * and the PCE ones (tags 31..39), each required, and nothing else; a
 * feature model's file holds no PCE field. Files written before PCE models
 * existed load as they did.
 *
 * A classifier (RFX_METHOD_CLASSIFY) is a feature model with three more
 * required fields (tags 50..52: classes, loss, multi-class scheme) and as
 * many score columns (n_targets) as its classes imply; the kitchen-sinks
 * and greedy models (methods 7 and 8) are plain feature models, stored as
 * ridge models are. Tag 49, the feature map's structure, is optional in
 * every feature model (files without it have i.i.d. features).
 */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

_Static_assert(sizeof(double) == sizeof(uint64_t), "doubles are stored as 64-bit patterns");

#define HEADER_SIZE 32
#define FORMAT_VERSION 1
#define RECORD_HEADER 16

static const unsigned char MAGIC[8] = {'R', 'F', 'X', 'M', 'O', 'D', 'L', 0x1a};

/* Element types of a record's data. */
enum elem_type {
    ELEM_F64 = 1,  /* IEEE-754 binary64, little-endian bit pattern */
    ELEM_U64 = 2,  /* unsigned 64-bit integer                        */
    ELEM_I64 = 3,  /* signed 64-bit, two's complement (unused in v1) */
    ELEM_UTF8 = 4, /* bytes of a UTF-8 string, no terminator          */
    ELEM_U32 = 5,  /* unsigned 32-bit integer                        */
    ELEM_BYTES = 6 /* raw bytes (a nested model file)                */
};

/* Record tags of version 1. Numbers are part of the format: never reuse or
 * renumber them; new fields take new numbers and a new format version. */
enum tag {
    TAG_METHOD = 1,         /* u64: rfx_method                               */
    TAG_N_INPUTS = 2,       /* u64: d >= 1                                   */
    TAG_N_FEATURES = 3,     /* u64: D >= 1 (even for the cos-sin form)       */
    TAG_N_TARGETS = 4,      /* u64: ny >= 1                                  */
    TAG_N_TRAIN = 5,        /* u64: rows the model was fitted on             */
    TAG_FIT_INTERCEPT = 6,  /* u64: 0 or 1                                   */
    TAG_KERNEL = 7,         /* u64: rfx_kernel                               */
    TAG_FORM = 8,           /* u64: rfx_form                                 */
    TAG_NU = 9,             /* f64: Matern smoothness                        */
    TAG_SEED = 10,          /* u64: the seed the frequencies were drawn with */
    TAG_LENGTH_SCALE = 11,  /* f64: isotropic length scale (0 with ARD)      */
    TAG_ARD = 12,           /* u64: 1 when per-dimension scales were given   */
    TAG_LENGTH_SCALES = 13, /* f64 x d: the length scale of every input      */
    TAG_FREQUENCIES = 14,   /* f64 x F*d: W, row-major; F = D or D/2 by form */
    TAG_PHASES = 15,        /* f64 x F: b                                    */
    TAG_X_MEAN = 16,        /* f64 x d: input scaler (optional, with X_SCALE) */
    TAG_X_SCALE = 17,       /* f64 x d: > 0 (optional, with X_MEAN)          */
    TAG_WEIGHTS = 18,       /* f64 x D*ny: row-major                         */
    TAG_INTERCEPT = 19,     /* f64 x ny                                      */
    TAG_LAMBDA = 20,        /* f64: ridge penalty or noise_var / prior_var   */
    TAG_NOISE_VAR = 21,     /* f64                                           */
    TAG_PRIOR_VAR = 22,     /* f64                                           */
    TAG_LOG_EVIDENCE = 23,  /* f64                                           */
    TAG_CHOL = 24,          /* f64 x D*D: posterior factor R, row-major
                               (Bayesian models only)                        */
    TAG_ZMEAN = 25,         /* f64 x D: training feature means (optional,
                               with CHOL)                                    */
    TAG_CREATOR = 26,       /* utf8: "rfx <version>" that wrote the file
                               (optional; informational, not interpreted)    */
    TAG_ACTIVATION = 27,    /* u64: rfx_activation (optional, default cos)   */
    TAG_SPARSITY = 28,      /* u64: q nonzeros per frequency (optional, 0)   */
    TAG_WEIGHT_DIST = 29,   /* u64: rfx_weights (optional, default kernel)   */
    TAG_WEIGHT_SCALE = 30,  /* f64: > 0 (optional, default 1)                */
    /* polynomial chaos models (method RFX_METHOD_PCE) only, all required:   */
    TAG_PCE_KINDS = 31,     /* u64 x d: rfx_marginal_kind, uniform or normal */
    TAG_PCE_PARAMS = 32,    /* f64 x 2d: (a, b) of each input's marginal     */
    TAG_PCE_N_TERMS = 33,   /* u64: T, the number of terms (may be 0)        */
    TAG_PCE_ALPHA = 34,     /* u32 x T*d: multi-indices, row-major, entries
                               <= RFX_PCE_MAX_DEGREE, no row repeated        */
    TAG_PCE_COEF = 35,      /* f64 x T: coefficients                         */
    TAG_PCE_DEGREE = 36,    /* u64: truncation degree (>= every term's total
                               degree)                                       */
    TAG_PCE_METHOD = 37,    /* u64: rfx_pce_method                           */
    TAG_PCE_CANDIDATES = 38, /* u64: candidate basis size (0: not fitted)    */
    TAG_PCE_LOO = 39,       /* f64 x 3: LOO mse, relative, corrected; each
                               NaN, +inf or >= 0                            */
    /* projected models (method RFX_METHOD_PROJECTED) only, all required; the
       kernel's training rows are n_train (m), the input scaler is x_mean /
       x_scale (optional, both or none):                                     */
    TAG_PROJ_K = 40,        /* u64: k, 1 .. m                                */
    TAG_PROJ_GAMMA = 41,    /* f64: > 0                                      */
    TAG_PROJ_THETA = 42,    /* f64 x d: in [0, 1], not all zero              */
    TAG_PROJ_ROWS = 43,     /* f64 x m*d: the training rows as the kernel
                               sees them (standardised with the scaler)     */
    TAG_PROJ_ALPHA = 44,    /* f64 x m*k: kernel PCA coefficients            */
    TAG_PROJ_ROW_MEANS = 45, /* f64 x m: row means of the Gram matrix         */
    TAG_PROJ_GRAND_MEAN = 46, /* f64: its grand mean                          */
    TAG_PROJ_LOSS = 47,     /* f64: the fit's loss, NaN or >= 0              */
    TAG_PROJ_SURROGATE = 48, /* bytes: the surrogate on the k scores, a whole
                               model file (header and payload) of method
                               ridge, bayes, srfe, harfe or pce, with k
                               inputs and 1 target                          */
    TAG_STRUCTURE = 49,     /* u64: rfx_structure of the feature map
                               (optional, default 0 = iid; feature models)  */
    /* classifiers (method RFX_METHOD_CLASSIFY) only, all required:          */
    TAG_CLASSES = 50,       /* f64 x C: the class labels, finite, strictly
                               increasing, 2 <= C <= RFX_CLASSIFY_MAX_CLASSES;
                               n_targets (the score columns) is 1 for C = 2,
                               else C                                        */
    TAG_LOSS = 51,          /* u64: rfx_loss                                 */
    TAG_MULTICLASS = 52,    /* u64: rfx_multiclass (softmax: logistic loss)  */
    TAG_END                 /* one past the last tag                         */
};

#define F_SCALAR 1u   /* exactly one element                                */
#define F_REQUIRED 2u /* must be present in a feature model                 */
#define F_COMMON 4u   /* also in a PCE model (required there when F_REQUIRED) */
#define F_PCE 8u      /* a PCE model's, required there; never in the others */
#define F_PROJ 16u    /* a projected model's, required there; never elsewhere */
#define F_PROJ_OPT 32u /* optional in a projected model (the input scaler)  */
#define F_CLS 64u     /* a classifier's, required there; never elsewhere     */

static const struct field_spec {
    const char *name;
    uint32_t type;
    unsigned flags;
} SPECS[TAG_END] = {
    [TAG_METHOD] = {"method", ELEM_U64, F_SCALAR | F_REQUIRED | F_COMMON},
    [TAG_N_INPUTS] = {"n_inputs", ELEM_U64, F_SCALAR | F_REQUIRED | F_COMMON},
    [TAG_N_FEATURES] = {"n_features", ELEM_U64, F_SCALAR | F_REQUIRED},
    [TAG_N_TARGETS] = {"n_targets", ELEM_U64, F_SCALAR | F_REQUIRED | F_COMMON},
    [TAG_N_TRAIN] = {"n_train", ELEM_U64, F_SCALAR | F_REQUIRED | F_COMMON},
    [TAG_FIT_INTERCEPT] = {"fit_intercept", ELEM_U64, F_SCALAR | F_REQUIRED},
    [TAG_KERNEL] = {"kernel", ELEM_U64, F_SCALAR | F_REQUIRED},
    [TAG_FORM] = {"form", ELEM_U64, F_SCALAR | F_REQUIRED},
    [TAG_NU] = {"nu", ELEM_F64, F_SCALAR | F_REQUIRED},
    [TAG_SEED] = {"seed", ELEM_U64, F_SCALAR | F_REQUIRED},
    [TAG_LENGTH_SCALE] = {"length_scale", ELEM_F64, F_SCALAR | F_REQUIRED},
    [TAG_ARD] = {"ard", ELEM_U64, F_SCALAR | F_REQUIRED},
    [TAG_LENGTH_SCALES] = {"length_scales", ELEM_F64, F_REQUIRED},
    [TAG_FREQUENCIES] = {"frequencies", ELEM_F64, F_REQUIRED},
    [TAG_PHASES] = {"phases", ELEM_F64, F_REQUIRED},
    [TAG_X_MEAN] = {"x_mean", ELEM_F64, F_PROJ_OPT},
    [TAG_X_SCALE] = {"x_scale", ELEM_F64, F_PROJ_OPT},
    [TAG_WEIGHTS] = {"weights", ELEM_F64, F_REQUIRED},
    [TAG_INTERCEPT] = {"intercept", ELEM_F64, F_REQUIRED},
    [TAG_LAMBDA] = {"lambda", ELEM_F64, F_SCALAR | F_REQUIRED},
    [TAG_NOISE_VAR] = {"noise_var", ELEM_F64, F_SCALAR | F_REQUIRED},
    [TAG_PRIOR_VAR] = {"prior_var", ELEM_F64, F_SCALAR | F_REQUIRED},
    [TAG_LOG_EVIDENCE] = {"log_evidence", ELEM_F64, F_SCALAR | F_REQUIRED},
    [TAG_CHOL] = {"chol", ELEM_F64, 0},
    [TAG_ZMEAN] = {"zmean", ELEM_F64, 0},
    [TAG_CREATOR] = {"creator", ELEM_UTF8, F_COMMON},
    [TAG_ACTIVATION] = {"activation", ELEM_U64, F_SCALAR},
    [TAG_SPARSITY] = {"sparsity", ELEM_U64, F_SCALAR},
    [TAG_WEIGHT_DIST] = {"weights_distribution", ELEM_U64, F_SCALAR},
    [TAG_WEIGHT_SCALE] = {"weight_scale", ELEM_F64, F_SCALAR},
    [TAG_PCE_KINDS] = {"pce_marginal_kinds", ELEM_U64, F_PCE},
    [TAG_PCE_PARAMS] = {"pce_marginal_params", ELEM_F64, F_PCE},
    [TAG_PCE_N_TERMS] = {"pce_n_terms", ELEM_U64, F_SCALAR | F_PCE},
    [TAG_PCE_ALPHA] = {"pce_multi_indices", ELEM_U32, F_PCE},
    [TAG_PCE_COEF] = {"pce_coefficients", ELEM_F64, F_PCE},
    [TAG_PCE_DEGREE] = {"pce_degree", ELEM_U64, F_SCALAR | F_PCE},
    [TAG_PCE_METHOD] = {"pce_method", ELEM_U64, F_SCALAR | F_PCE},
    [TAG_PCE_CANDIDATES] = {"pce_n_candidates", ELEM_U64, F_SCALAR | F_PCE},
    [TAG_PCE_LOO] = {"pce_loo", ELEM_F64, F_PCE},
    [TAG_PROJ_K] = {"projected_k", ELEM_U64, F_SCALAR | F_PROJ},
    [TAG_PROJ_GAMMA] = {"projected_gamma", ELEM_F64, F_SCALAR | F_PROJ},
    [TAG_PROJ_THETA] = {"projected_theta", ELEM_F64, F_PROJ},
    [TAG_PROJ_ROWS] = {"projected_rows", ELEM_F64, F_PROJ},
    [TAG_PROJ_ALPHA] = {"projected_alpha", ELEM_F64, F_PROJ},
    [TAG_PROJ_ROW_MEANS] = {"projected_row_means", ELEM_F64, F_PROJ},
    [TAG_PROJ_GRAND_MEAN] = {"projected_grand_mean", ELEM_F64, F_SCALAR | F_PROJ},
    [TAG_PROJ_LOSS] = {"projected_loss", ELEM_F64, F_SCALAR | F_PROJ},
    [TAG_PROJ_SURROGATE] = {"projected_surrogate", ELEM_BYTES, F_PROJ},
    [TAG_STRUCTURE] = {"structure", ELEM_U64, F_SCALAR},
    [TAG_CLASSES] = {"classes", ELEM_F64, F_CLS},
    [TAG_LOSS] = {"loss", ELEM_U64, F_SCALAR | F_CLS},
    [TAG_MULTICLASS] = {"multiclass", ELEM_U64, F_SCALAR | F_CLS},
};

/* ---- little-endian encoding --------------------------------------------- */

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static uint64_t get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The bit pattern of a double (memcpy between equal-sized scalars is the
 * defined way to type-pun in C; it is not a copy of a host struct). */
static uint64_t f64_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double f64_from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* zlib's crc32 takes a uInt length: feed large buffers in pieces. */
static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t n)
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

static uint32_t crc_of(const unsigned char *p, size_t n)
{
    return crc_update((uint32_t)crc32(0L, Z_NULL, 0), p, n);
}

static void encode_header(unsigned char h[HEADER_SIZE], uint64_t payload, uint32_t payload_crc)
{
    memcpy(h, MAGIC, sizeof MAGIC);
    put_le32(h + 8, FORMAT_VERSION);
    put_le32(h + 12, HEADER_SIZE);
    put_le64(h + 16, payload);
    put_le32(h + 24, payload_crc);
    put_le32(h + 28, crc_of(h, 28));
}

/* ---- writing ------------------------------------------------------------ */

/* Where payload bytes go: nowhere (measuring the size), a memory buffer
 * sized by a measuring pass, or a file. Bytes are staged so that a file gets
 * large writes and the CRC large updates; the first write error sticks. */
typedef struct sink {
    unsigned char *mem; /* memory mode: the payload area of the buffer       */
    FILE *fp;           /* file mode                                         */
    uint64_t total;     /* payload bytes so far                              */
    uint32_t crc;       /* CRC-32 of the payload so far                      */
    int err;            /* errno of the first failed write, or 0             */
    size_t staged;
    unsigned char stage[16384];
} sink;

static void sink_init(sink *s, unsigned char *mem, FILE *fp)
{
    s->mem = mem;
    s->fp = fp;
    s->total = 0;
    s->crc = (uint32_t)crc32(0L, Z_NULL, 0);
    s->err = 0;
    s->staged = 0;
}

static void sink_flush(sink *s)
{
    size_t n = s->staged;
    s->staged = 0;
    if (n == 0 || s->err) return;
    s->crc = crc_update(s->crc, s->stage, n);
    if (s->mem) memcpy(s->mem + s->total, s->stage, n);
    if (s->fp && fwrite(s->stage, 1, n, s->fp) != n) s->err = errno ? errno : EIO;
    s->total += n;
}

static void sink_put(sink *s, const unsigned char *p, size_t n)
{
    while (n > 0) {
        size_t k = sizeof s->stage - s->staged;
        if (k > n) k = n;
        memcpy(s->stage + s->staged, p, k);
        s->staged += k;
        p += k;
        n -= k;
        if (s->staged == sizeof s->stage) sink_flush(s);
    }
}

static void put_record_header(sink *s, uint32_t tag, uint32_t type, uint64_t count)
{
    unsigned char h[RECORD_HEADER];
    put_le32(h, tag);
    put_le32(h + 4, type);
    put_le64(h + 8, count);
    sink_put(s, h, sizeof h);
}

static void put_u64(sink *s, uint32_t tag, uint64_t v)
{
    unsigned char b[8];
    put_record_header(s, tag, ELEM_U64, 1);
    put_le64(b, v);
    sink_put(s, b, sizeof b);
}

/* One 8-byte element after its record header, encoded straight into the
 * stage: large arrays (D x D) dominate. */
static void put_elem64(sink *s, uint64_t v)
{
    if (sizeof s->stage - s->staged < 8) sink_flush(s);
    put_le64(s->stage + s->staged, v);
    s->staged += 8;
}

static void put_f64s(sink *s, uint32_t tag, const double *v, size_t n)
{
    put_record_header(s, tag, ELEM_F64, n);
    for (size_t i = 0; i < n; i++) put_elem64(s, f64_bits(v[i]));
}

static void put_u32s(sink *s, uint32_t tag, const unsigned *v, size_t n)
{
    static const unsigned char zeros[4] = {0};
    put_record_header(s, tag, ELEM_U32, n);
    for (size_t i = 0; i < n; i++) {
        if (sizeof s->stage - s->staged < 4) sink_flush(s);
        put_le32(s->stage + s->staged, (uint32_t)v[i]);
        s->staged += 4;
    }
    sink_put(s, zeros, 4 * (n % 2));
}

static void put_f64(sink *s, uint32_t tag, double v) { put_f64s(s, tag, &v, 1); }

static void put_utf8(sink *s, uint32_t tag, const char *str)
{
    static const unsigned char zeros[8] = {0};
    size_t n = strlen(str);
    put_record_header(s, tag, ELEM_UTF8, n);
    sink_put(s, (const unsigned char *)str, n);
    sink_put(s, zeros, (8 - n % 8) % 8);
}

/* A PCE model's payload: the shared fields, then the expansion. */
static void write_pce_payload(sink *s, const rfx_model *m)
{
    const rfx_pce *pce = m->pce;
    const rfx_marginal *mg = rfx_pce_marginals(pce);
    const unsigned *alpha;
    const double *coef;
    rfx_pce_info info;
    char creator[64];
    rfx_pce_get_info(pce, &info); /* cannot fail: pce is not NULL */
    rfx__pce_arrays(pce, &alpha, &coef);
    put_u64(s, TAG_METHOD, (uint64_t)m->method);
    put_u64(s, TAG_N_INPUTS, m->d);
    put_u64(s, TAG_N_TARGETS, m->ny);
    put_u64(s, TAG_N_TRAIN, m->n_train);
    put_record_header(s, TAG_PCE_KINDS, ELEM_U64, m->d);
    for (size_t i = 0; i < m->d; i++) put_elem64(s, (uint64_t)mg[i].kind);
    put_record_header(s, TAG_PCE_PARAMS, ELEM_F64, 2 * (uint64_t)m->d);
    for (size_t i = 0; i < m->d; i++) {
        put_elem64(s, f64_bits(mg[i].a));
        put_elem64(s, f64_bits(mg[i].b));
    }
    put_u64(s, TAG_PCE_N_TERMS, info.n_terms);
    put_u32s(s, TAG_PCE_ALPHA, alpha, info.n_terms * m->d);
    put_f64s(s, TAG_PCE_COEF, coef, info.n_terms);
    put_u64(s, TAG_PCE_DEGREE, info.degree);
    put_u64(s, TAG_PCE_METHOD, (uint64_t)info.method);
    put_u64(s, TAG_PCE_CANDIDATES, info.n_candidates);
    const double loo[3] = {info.loo_mse, info.loo_relative, info.loo_corrected};
    put_f64s(s, TAG_PCE_LOO, loo, 3);
    snprintf(creator, sizeof creator, "rfx %s", rfx_version());
    put_utf8(s, TAG_CREATOR, creator);
    sink_flush(s);
}

/* A projected model's payload: the shared fields, the scaler, the kernel
 * PCA and the surrogate's file (nested, len bytes). */
static void write_projected_payload(sink *s, const rfx_model *m, const unsigned char *nested,
                                    size_t len)
{
    static const unsigned char zeros[8] = {0};
    rfx__kpca_arrays a;
    char creator[64];
    rfx__kpca_get_arrays(m->kpca, &a); /* cannot fail: a fitted exact kernel PCA */
    put_u64(s, TAG_METHOD, (uint64_t)m->method);
    put_u64(s, TAG_N_INPUTS, m->d);
    put_u64(s, TAG_N_TARGETS, m->ny);
    put_u64(s, TAG_N_TRAIN, a.m);
    if (a.x_mean) {
        put_f64s(s, TAG_X_MEAN, a.x_mean, a.d);
        put_f64s(s, TAG_X_SCALE, a.x_scale, a.d);
    }
    put_u64(s, TAG_PROJ_K, a.k);
    put_f64(s, TAG_PROJ_GAMMA, a.gamma);
    put_f64s(s, TAG_PROJ_THETA, a.theta, a.d);
    put_f64s(s, TAG_PROJ_ROWS, a.X, a.m * a.d);
    put_f64s(s, TAG_PROJ_ALPHA, a.alpha, a.m * a.k);
    put_f64s(s, TAG_PROJ_ROW_MEANS, a.row_mean, a.m);
    put_f64(s, TAG_PROJ_GRAND_MEAN, a.grand);
    put_f64(s, TAG_PROJ_LOSS, m->proj_loss);
    put_record_header(s, TAG_PROJ_SURROGATE, ELEM_BYTES, len);
    sink_put(s, nested, len);
    sink_put(s, zeros, (8 - len % 8) % 8);
    snprintf(creator, sizeof creator, "rfx %s", rfx_version());
    put_utf8(s, TAG_CREATOR, creator);
    sink_flush(s);
}

/* The payload: every field of the model, in tag order (nested: the
 * surrogate's file of a projected model). */
static void write_payload(sink *s, const rfx_model *m, const unsigned char *nested, size_t len)
{
    if (m->pce) {
        write_pce_payload(s, m);
        return;
    }
    if (m->inner) {
        write_projected_payload(s, m, nested, len);
        return;
    }
    const rfx_features *f = m->features;
    const rfx_features_params *p = &f->params;
    char creator[64];
    put_u64(s, TAG_METHOD, (uint64_t)m->method);
    put_u64(s, TAG_N_INPUTS, m->d);
    put_u64(s, TAG_N_FEATURES, m->D);
    put_u64(s, TAG_N_TARGETS, m->ny);
    put_u64(s, TAG_N_TRAIN, m->n_train);
    put_u64(s, TAG_FIT_INTERCEPT, m->fit_intercept ? 1 : 0);
    put_u64(s, TAG_KERNEL, (uint64_t)p->kernel);
    put_u64(s, TAG_FORM, (uint64_t)p->form);
    put_f64(s, TAG_NU, p->nu);
    put_u64(s, TAG_SEED, p->seed);
    put_f64(s, TAG_LENGTH_SCALE, f->ard ? 0.0 : f->ls[0]);
    put_u64(s, TAG_ARD, f->ard ? 1 : 0);
    put_f64s(s, TAG_LENGTH_SCALES, f->ls, f->d);
    put_f64s(s, TAG_FREQUENCIES, f->W, f->F * f->d);
    put_f64s(s, TAG_PHASES, f->b, f->F);
    put_u64(s, TAG_ACTIVATION, (uint64_t)p->activation);
    put_u64(s, TAG_SPARSITY, p->sparsity);
    put_u64(s, TAG_WEIGHT_DIST, (uint64_t)p->weights);
    put_f64(s, TAG_WEIGHT_SCALE, p->weight_scale);
    /* only for structured maps: files of i.i.d. maps stay readable by
       builds that predate the tag */
    if (p->structure != RFX_STRUCTURE_IID) put_u64(s, TAG_STRUCTURE, (uint64_t)p->structure);
    if (m->x_mean && m->x_scale) {
        put_f64s(s, TAG_X_MEAN, m->x_mean, m->d);
        put_f64s(s, TAG_X_SCALE, m->x_scale, m->d);
    }
    put_f64s(s, TAG_WEIGHTS, m->W, m->D * m->ny);
    put_f64s(s, TAG_INTERCEPT, m->intercept, m->ny);
    put_f64(s, TAG_LAMBDA, m->lambda);
    put_f64(s, TAG_NOISE_VAR, m->noise_var);
    put_f64(s, TAG_PRIOR_VAR, m->prior_var);
    put_f64(s, TAG_LOG_EVIDENCE, m->log_evidence);
    if (m->chol) {
        put_f64s(s, TAG_CHOL, m->chol, m->D * m->D);
        if (m->zmean) put_f64s(s, TAG_ZMEAN, m->zmean, m->D);
    }
    if (m->classes) {
        put_f64s(s, TAG_CLASSES, m->classes, m->n_classes);
        put_u64(s, TAG_LOSS, (uint64_t)m->loss);
        put_u64(s, TAG_MULTICLASS, (uint64_t)m->multiclass);
    }
    snprintf(creator, sizeof creator, "rfx %s", rfx_version());
    put_utf8(s, TAG_CREATOR, creator);
    sink_flush(s);
}

static rfx_status check_savable(const rfx_model *m, const char *where)
{
    if (!m) return rfx__error(RFX_EINVAL, "%s: model is NULL", where);
    if (m->method == RFX_METHOD_PCE          ? !m->pce
        : m->method == RFX_METHOD_PROJECTED ? (!m->kpca || !m->inner)
                                            : (!m->features || !m->W || !m->intercept))
        return rfx__error(RFX_EINTERNAL, "%s: the model is incomplete", where);
    return RFX_OK;
}

/* The surrogate of a projected model as a model file in memory (NULL for
 * other models). */
static rfx_status nested_bytes(const rfx_model *m, const char *where, void **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    if (!m->inner) return RFX_OK;
    rfx_status st = rfx_model_save_buffer(m->inner, buf, len);
    if (st) rfx__error_prefix("%s: the projected model's surrogate", where);
    return st;
}

rfx_status rfx_model_save_buffer(const rfx_model *m, void **buf, size_t *len)
{
    RFX__TRY(check_savable(m, "save model to buffer"));
    if (!buf || !len) return rfx__error(RFX_EINVAL, "save model to buffer: buf or len is NULL");
    sink s;
    void *nb;
    size_t nl;
    RFX__TRY(nested_bytes(m, "save model to buffer", &nb, &nl));
    sink_init(&s, NULL, NULL);
    write_payload(&s, m, nb, nl); /* measure */
    if (s.total > SIZE_MAX - HEADER_SIZE) {
        free(nb);
        return rfx__error(RFX_EOVERFLOW, "save model to buffer: %llu bytes overflow size_t",
                          (unsigned long long)s.total);
    }
    size_t total = HEADER_SIZE + (size_t)s.total;
    unsigned char *b = malloc(total);
    if (!b) {
        free(nb);
        return rfx__error(RFX_ENOMEM, "save model to buffer: cannot allocate %zu bytes", total);
    }
    sink_init(&s, b + HEADER_SIZE, NULL);
    write_payload(&s, m, nb, nl);
    free(nb);
    encode_header(b, s.total, s.crc);
    *buf = b;
    *len = total;
    return RFX_OK;
}

/* Through rfx__output (src/core/output.c): a temporary file beside path,
 * made durable and renamed over it, so readers see the old file or the new
 * one, never half of one; a device or FIFO written directly. A measuring
 * pass gives the payload's size and CRC first, so the header goes first and
 * the file is written in one sequential pass (no seek: a pipe will do). */
rfx_status rfx_model_save(const rfx_model *m, const char *path)
{
    unsigned char hdr[HEADER_SIZE] = {0};
    sink sk, *s = &sk;
    void *nb = NULL;
    size_t nl = 0;
    rfx__output out;
    RFX__TRY(check_savable(m, "save model"));
    if (!path || !*path) return rfx__error(RFX_EINVAL, "save model: path is NULL or empty");
    RFX__TRY(nested_bytes(m, path, &nb, &nl));
    sink_init(s, NULL, NULL);
    write_payload(s, m, nb, nl); /* measure: size and CRC */
    encode_header(hdr, s->total, s->crc);
    const uint64_t total = s->total;
    const uint32_t crc = s->crc;
    rfx_status st = rfx__output_open(path, &out);
    if (st) {
        free(nb);
        return st;
    }
    int e = 0;
    if (fwrite(hdr, 1, sizeof hdr, out.fp) != sizeof hdr) e = errno ? errno : EIO;
    if (!e) {
        sink_init(s, NULL, out.fp);
        write_payload(s, m, nb, nl);
        e = s->err;
        if (!e && (s->total != total || s->crc != crc)) e = EIO; /* cannot happen */
    }
    free(nb);
    if (e) {
        char buf[128];
        if (strerror_r(e, buf, sizeof buf) != 0) snprintf(buf, sizeof buf, "error %d", e);
        rfx__output_abort(&out);
        return rfx__error(RFX_EIO, "%s: cannot write the model: %s", path, buf);
    }
    return rfx__output_commit(&out);
}

/* ---- reading ------------------------------------------------------------ */

/* RFX_EFORMAT with the file name (or "buffer") in front. */
static rfx_status corrupt(const char *name, const char *fmt, ...) RFX__PRINTF(2, 3);

static rfx_status corrupt(const char *name, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rfx__error(RFX_EFORMAT, "%s: %s", name, what);
}

/* The fixed header: magic, version, header size, header CRC. n is the number
 * of header bytes available (< HEADER_SIZE for a short file). */
static rfx_status parse_header(const unsigned char *h, size_t n, const char *name,
                               uint64_t *payload, uint32_t *payload_crc)
{
    size_t k = n < sizeof MAGIC ? n : sizeof MAGIC;
    if (k > 0 && memcmp(h, MAGIC, k) != 0) return corrupt(name, "not an rfx model file (bad magic)");
    if (n < HEADER_SIZE)
        return corrupt(name, "truncated: %zu bytes, shorter than the %d-byte header", n,
                       HEADER_SIZE);
    uint32_t version = get_le32(h + 8);
    if (version > FORMAT_VERSION)
        return rfx__error(RFX_EVERSION,
                          "%s: model format version %lu is newer than this library supports "
                          "(%d); upgrade rfx", name, (unsigned long)version, FORMAT_VERSION);
    if (version == 0) return corrupt(name, "format version 0 is invalid (corrupt file)");
    if (get_le32(h + 12) != HEADER_SIZE)
        return corrupt(name, "header size %lu, expected %d (corrupt file)",
                       (unsigned long)get_le32(h + 12), HEADER_SIZE);
    if (get_le32(h + 28) != crc_of(h, 28))
        return corrupt(name, "header checksum mismatch (corrupt file)");
    *payload = get_le64(h + 16);
    *payload_crc = get_le32(h + 24);
    return RFX_OK;
}

/* The payload size the header announces against the bytes present. */
static rfx_status check_length(uint64_t payload, uint64_t present, const char *name)
{
    if (payload > present)
        return corrupt(name, "truncated: the header announces %llu payload bytes, %llu present",
                       (unsigned long long)payload, (unsigned long long)present);
    if (payload < present)
        return corrupt(name, "%llu trailing bytes after the %llu-byte payload (corrupt file)",
                       (unsigned long long)(present - payload), (unsigned long long)payload);
    return RFX_OK;
}

typedef struct record {
    const unsigned char *data;
    uint64_t count;
    int present;
} record;

/* Split the payload into records, one per tag. Each count is checked against
 * the bytes that remain by division, so no product can wrap. */
static rfx_status parse_records(const unsigned char *p, size_t n, const char *name,
                                record rec[TAG_END])
{
    size_t pos = 0;
    memset(rec, 0, TAG_END * sizeof *rec);
    while (pos < n) {
        if (n - pos < RECORD_HEADER)
            return corrupt(name, "payload offset %zu: a record header needs %d bytes, %zu remain "
                           "(corrupt file)", pos, RECORD_HEADER, n - pos);
        uint32_t tag = get_le32(p + pos), type = get_le32(p + pos + 4);
        uint64_t count = get_le64(p + pos + 8);
        size_t at = pos;
        pos += RECORD_HEADER;
        if (tag == 0 || tag >= TAG_END)
            return corrupt(name, "payload offset %zu: unknown record tag %lu (corrupt file)", at,
                           (unsigned long)tag);
        const struct field_spec *spec = &SPECS[tag];
        if (rec[tag].present)
            return corrupt(name, "field '%s' appears twice (corrupt file)", spec->name);
        if (type != spec->type)
            return corrupt(name, "field '%s' has element type %lu, expected %lu (corrupt file)",
                           spec->name, (unsigned long)type, (unsigned long)spec->type);
        if ((spec->flags & F_SCALAR) && count != 1)
            return corrupt(name, "field '%s' has %llu values, expected 1 (corrupt file)",
                           spec->name, (unsigned long long)count);
        size_t esize = type == ELEM_UTF8 || type == ELEM_BYTES ? 1 : type == ELEM_U32 ? 4 : 8,
               remain = n - pos;
        if (count > remain / esize)
            return corrupt(name, "field '%s' claims %llu values, only %zu bytes remain "
                           "(corrupt or truncated file)", spec->name, (unsigned long long)count,
                           remain);
        size_t bytes = (size_t)count * esize, pad = (8 - bytes % 8) % 8;
        if (pad > remain - bytes)
            return corrupt(name, "field '%s': padding runs past the payload (corrupt file)",
                           spec->name);
        for (size_t i = 0; i < pad; i++)
            if (p[pos + bytes + i] != 0)
                return corrupt(name, "field '%s': non-zero padding (corrupt file)", spec->name);
        rec[tag].data = p + pos;
        rec[tag].count = count;
        rec[tag].present = 1;
        pos += bytes + pad;
    }
    return RFX_OK;
}

static uint64_t rec_u64(const record *r) { return get_le64(r->data); }
static double rec_f64(const record *r) { return f64_from_bits(get_le64(r->data)); }

static void decode_f64s(const record *r, double *out)
{
    for (uint64_t i = 0; i < r->count; i++) out[i] = f64_from_bits(get_le64(r->data + 8 * i));
}

/* A size field: >= 1 and within the int range that BLAS and LAPACK take
 * (prediction passes d, D and ny to them). */
static rfx_status get_dim(const record *rec, int tag, const char *name, size_t *out)
{
    uint64_t v = rec_u64(&rec[tag]);
    if (v < 1 || v > 2147483647u)
        return corrupt(name, "field '%s' = %llu, expected 1 .. 2147483647 (corrupt file)",
                       SPECS[tag].name, (unsigned long long)v);
    *out = (size_t)v;
    return RFX_OK;
}

static rfx_status get_enum(const record *rec, int tag, uint64_t max, const char *name,
                           uint64_t *out)
{
    uint64_t v = rec_u64(&rec[tag]);
    if (v > max)
        return corrupt(name, "field '%s' = %llu, expected 0 .. %llu (corrupt file)",
                       SPECS[tag].name, (unsigned long long)v, (unsigned long long)max);
    *out = v;
    return RFX_OK;
}

/* An array field must have exactly the count its shape implies. */
static rfx_status check_count(const record *rec, int tag, size_t expected, const char *shape,
                              const char *name)
{
    if (rec[tag].present && rec[tag].count != expected)
        return corrupt(name, "field '%s' has %llu values, expected %s = %zu (corrupt file)",
                       SPECS[tag].name, (unsigned long long)rec[tag].count, shape, expected);
    return RFX_OK;
}

/* The optional input scaler: both of x_mean and x_scale with d values, or
 * neither. */
static rfx_status check_scaler(const record *rec, size_t d, const char *name)
{
    RFX__TRY(check_count(rec, TAG_X_MEAN, d, "d", name));
    RFX__TRY(check_count(rec, TAG_X_SCALE, d, "d", name));
    if (rec[TAG_X_MEAN].present != rec[TAG_X_SCALE].present)
        return corrupt(name, "field '%s' without '%s' (corrupt file)",
                       rec[TAG_X_MEAN].present ? "x_mean" : "x_scale",
                       rec[TAG_X_MEAN].present ? "x_scale" : "x_mean");
    return RFX_OK;
}

/* Every value finite (and > 0 when positive is set). */
static rfx_status check_values(const double *v, size_t n, int positive, int tag, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i]) || (positive && !(v[i] > 0)))
            return corrupt(name, "field '%s'[%zu] = %g, expected a %s number (corrupt file)",
                           SPECS[tag].name, i, v[i], positive ? "positive finite" : "finite");
    }
    return RFX_OK;
}

static rfx_status check_scalar(const record *rec, int tag, const char *name)
{
    double v = rec_f64(&rec[tag]);
    if (!(isfinite(v) && v >= 0))
        return corrupt(name, "field '%s' = %g, expected a finite number >= 0 (corrupt file)",
                       SPECS[tag].name, v);
    return RFX_OK;
}

/* Decode an f64 record into a fresh array (bounded by the record's bytes). */
static rfx_status decode_new(const record *r, double **out, const char *what)
{
    double *v;
    RFX__TRY(rfx__alloc((size_t)r->count, sizeof(double), (void **)&v, what));
    decode_f64s(r, v);
    *out = v;
    return RFX_OK;
}

/* Records of a PCE model -> model: which fields, then counts and scalars,
 * then (allocations bounded by the records) the arrays; rfx_pce_create
 * checks the marginals' parameters and repeated multi-indices. */
static rfx_status build_pce_model(const record *rec, const char *name, rfx_model **out)
{
    size_t d = 0, ny = 0, n_terms = 0, td = 0;
    uint64_t n_train, degree, pce_method = 0, n_cand;
    rfx_status st;

    for (int t = 1; t < TAG_END; t++) {
        unsigned fl = SPECS[t].flags;
        if (!rec[t].present && ((fl & F_PCE) || ((fl & F_COMMON) && (fl & F_REQUIRED))))
            return corrupt(name, "a pce model without field '%s' (corrupt file)",
                           SPECS[t].name);
    }
    for (int t = 1; t < TAG_END; t++)
        if (rec[t].present && !(SPECS[t].flags & (F_PCE | F_COMMON)))
            return corrupt(name, "a pce model with field '%s' of a feature map model (corrupt "
                           "file)", SPECS[t].name);
    RFX__TRY(get_dim(rec, TAG_N_INPUTS, name, &d));
    RFX__TRY(get_dim(rec, TAG_N_TARGETS, name, &ny));
    if (ny != 1)
        return corrupt(name, "field 'n_targets' = %zu; a pce model has 1 (corrupt file)", ny);
    n_train = rec_u64(&rec[TAG_N_TRAIN]);
    n_cand = rec_u64(&rec[TAG_PCE_CANDIDATES]);
    if (n_train > SIZE_MAX || n_cand > SIZE_MAX)
        return corrupt(name, "field '%s' = %llu exceeds size_t (corrupt file)",
                       n_train > SIZE_MAX ? "n_train" : "pce_n_candidates",
                       (unsigned long long)(n_train > SIZE_MAX ? n_train : n_cand));
    RFX__TRY(get_enum(rec, TAG_PCE_METHOD, RFX_PCE_METHOD_LARS, name, &pce_method));
    degree = rec_u64(&rec[TAG_PCE_DEGREE]);

    /* shapes: T from its field, bounded by the coefficients present */
    uint64_t t64 = rec_u64(&rec[TAG_PCE_N_TERMS]);
    if (t64 != rec[TAG_PCE_COEF].count)
        return corrupt(name, "field 'pce_n_terms' = %llu, but 'pce_coefficients' has %llu "
                       "values (corrupt file)", (unsigned long long)t64,
                       (unsigned long long)rec[TAG_PCE_COEF].count);
    n_terms = (size_t)t64;
    if (d > 0 && n_terms > SIZE_MAX / d)
        return corrupt(name, "fields 'pce_n_terms' x 'n_inputs' = %zu x %zu overflow size_t "
                       "(corrupt file)", n_terms, d);
    td = n_terms * d;
    RFX__TRY(check_count(rec, TAG_PCE_KINDS, d, "d", name));
    RFX__TRY(check_count(rec, TAG_PCE_PARAMS, 2 * d, "2 d", name));
    RFX__TRY(check_count(rec, TAG_PCE_ALPHA, td, "T x d", name));
    RFX__TRY(check_count(rec, TAG_PCE_LOO, 3, "3", name));
    for (size_t i = 0; i < d; i++) {
        uint64_t k = get_le64(rec[TAG_PCE_KINDS].data + 8 * i);
        if (k != RFX_MARGINAL_UNIFORM && k != RFX_MARGINAL_NORMAL)
            return corrupt(name, "field 'pce_marginal_kinds'[%zu] = %llu, expected %d (uniform) "
                           "or %d (normal) (corrupt file)", i, (unsigned long long)k,
                           RFX_MARGINAL_UNIFORM, RFX_MARGINAL_NORMAL);
    }
    double loo[3];
    decode_f64s(&rec[TAG_PCE_LOO], loo);
    for (int i = 0; i < 3; i++)
        if (!(isnan(loo[i]) || loo[i] >= 0))
            return corrupt(name, "field 'pce_loo'[%d] = %g, expected NaN or a number >= 0 "
                           "(corrupt file)", i, loo[i]);
    /* values, all within the present records */
    uint64_t maxdeg = 0;
    for (size_t k = 0; k < n_terms; k++) {
        uint64_t tot = 0;
        for (size_t i = 0; i < d; i++) {
            uint32_t a = get_le32(rec[TAG_PCE_ALPHA].data + 4 * (k * d + i));
            if (a > RFX_PCE_MAX_DEGREE)
                return corrupt(name, "field 'pce_multi_indices': term %zu, input %zu has degree "
                               "%lu, more than RFX_PCE_MAX_DEGREE = %u (corrupt file)", k, i,
                               (unsigned long)a, RFX_PCE_MAX_DEGREE);
            tot += a;
        }
        if (tot > maxdeg) maxdeg = tot;
    }
    if (degree < maxdeg || (degree > maxdeg && degree > RFX_PCE_MAX_DEGREE))
        return corrupt(name, "field 'pce_degree' = %llu, expected %llu (the largest total degree "
                       "of the terms) .. %u (corrupt file)", (unsigned long long)degree,
                       (unsigned long long)maxdeg,
                       maxdeg > RFX_PCE_MAX_DEGREE ? (unsigned)maxdeg : RFX_PCE_MAX_DEGREE);

    rfx_marginal *mg = NULL;
    unsigned *alpha = NULL;
    double *coef = NULL;
    rfx_pce *pce = NULL;
    st = rfx__alloc(d, sizeof *mg, (void **)&mg, "model: marginals");
    if (!st) st = rfx__alloc(td, sizeof *alpha, (void **)&alpha, "model: multi-indices");
    if (!st) st = decode_new(&rec[TAG_PCE_COEF], &coef, "model: coefficients");
    if (st) {
        rfx__error_prefix("%s", name);
        goto done;
    }
    for (size_t i = 0; i < d; i++) {
        mg[i].kind = (rfx_marginal_kind)get_le64(rec[TAG_PCE_KINDS].data + 8 * i);
        mg[i].a = f64_from_bits(get_le64(rec[TAG_PCE_PARAMS].data + 16 * i));
        mg[i].b = f64_from_bits(get_le64(rec[TAG_PCE_PARAMS].data + 16 * i + 8));
    }
    for (size_t j = 0; j < td; j++) alpha[j] = get_le32(rec[TAG_PCE_ALPHA].data + 4 * j);
    if ((st = check_values(coef, n_terms, 0, TAG_PCE_COEF, name))) goto done;
    st = rfx_pce_create(d, mg, n_terms, alpha, coef, &pce);
    if (st == RFX_EINVAL) { /* bad marginal parameters, a repeated multi-index */
        char why[512];
        snprintf(why, sizeof why, "%s", rfx_last_error());
        st = corrupt(name, "%s (corrupt file)", why);
        goto done;
    }
    if (st) {
        rfx__error_prefix("%s", name);
        goto done;
    }
    rfx_pce_info info;
    memset(&info, 0, sizeof info);
    info.degree = (size_t)degree;
    info.method = (rfx_pce_method)pce_method;
    info.n_train = (size_t)n_train;
    info.n_candidates = (size_t)n_cand;
    info.loo_mse = loo[0];
    info.loo_relative = loo[1];
    info.loo_corrected = loo[2];
    rfx__pce_set_report(pce, &info);
    st = rfx_model_from_pce(pce, out);
    if (st) rfx__error_prefix("%s", name);

done:
    rfx_pce_free(pce);
    free(mg);
    free(alpha);
    free(coef);
    return st;
}

static rfx_status load_payload(const unsigned char *p, size_t n, uint32_t crc, const char *name,
                               int nested, rfx_model **out);

/* Decode an f64 array record whose count was checked; every value finite,
 * or (positive) > 0 and finite. */
static rfx_status decode_checked(const record *rec, int tag, int positive, const char *name,
                                 double **out)
{
    rfx_status st = decode_new(&rec[tag], out, "model: projection");
    if (st) {
        rfx__error_prefix("%s", name);
        return st;
    }
    return check_values(*out, (size_t)rec[tag].count, positive, tag, name);
}

/* Records of a projected model -> model: which fields, the sizes and the
 * counts they imply (overflow-checked), the scalars, then (allocations
 * bounded by the records) the arrays, and last the nested surrogate, loaded
 * as a file of its own that may not itself be projected. */
static rfx_status build_projected_model(const record *rec, const char *name, rfx_model **out)
{
    size_t d = 0, ny = 0, md, mk;
    rfx_status st;
    for (int t = 1; t < TAG_END; t++) {
        unsigned fl = SPECS[t].flags;
        if (!rec[t].present && ((fl & F_PROJ) || ((fl & F_COMMON) && (fl & F_REQUIRED))))
            return corrupt(name, "a projected model without field '%s' (corrupt file)",
                           SPECS[t].name);
        if (rec[t].present && !(fl & (F_PROJ | F_PROJ_OPT | F_COMMON)))
            return corrupt(name, "a projected model with field '%s' of another kind of model "
                           "(corrupt file)", SPECS[t].name);
    }
    RFX__TRY(get_dim(rec, TAG_N_INPUTS, name, &d));
    RFX__TRY(get_dim(rec, TAG_N_TARGETS, name, &ny));
    if (ny != 1)
        return corrupt(name, "field 'n_targets' = %zu; a projected model has 1 (corrupt file)",
                       ny);
    uint64_t m64 = rec_u64(&rec[TAG_N_TRAIN]), k64 = rec_u64(&rec[TAG_PROJ_K]);
    if (m64 < 2 || m64 > 2147483647u)
        return corrupt(name, "field 'n_train' = %llu, expected 2 .. 2147483647 for a projected "
                       "model (corrupt file)", (unsigned long long)m64);
    if (k64 < 1 || k64 > m64)
        return corrupt(name, "field 'projected_k' = %llu, expected 1 .. n_train = %llu (corrupt "
                       "file)", (unsigned long long)k64, (unsigned long long)m64);
    const size_t m = (size_t)m64, k = (size_t)k64;
    st = rfx__mul(m, d, &md, "projected rows m x d");
    if (!st) st = rfx__mul(m, k, &mk, "projected alpha m x k");
    if (st) {
        rfx__error_prefix("%s", name);
        return st;
    }
    RFX__TRY(check_count(rec, TAG_PROJ_THETA, d, "d", name));
    RFX__TRY(check_count(rec, TAG_PROJ_ROWS, md, "m x d", name));
    RFX__TRY(check_count(rec, TAG_PROJ_ALPHA, mk, "m x k", name));
    RFX__TRY(check_count(rec, TAG_PROJ_ROW_MEANS, m, "m", name));
    RFX__TRY(check_scaler(rec, d, name));
    const double gamma = rec_f64(&rec[TAG_PROJ_GAMMA]), grand = rec_f64(&rec[TAG_PROJ_GRAND_MEAN]);
    const double loss = rec_f64(&rec[TAG_PROJ_LOSS]);
    if (!(isfinite(gamma) && gamma > 0))
        return corrupt(name, "field 'projected_gamma' = %g, expected a positive finite number "
                       "(corrupt file)", gamma);
    if (!isfinite(grand))
        return corrupt(name, "field 'projected_grand_mean' = %g, expected a finite number "
                       "(corrupt file)", grand);
    if (!(isnan(loss) || loss >= 0))
        return corrupt(name, "field 'projected_loss' = %g, expected NaN or a number >= 0 "
                       "(corrupt file)", loss);

    double *theta = NULL, *rows = NULL, *alpha = NULL, *rmean = NULL, *xm = NULL, *xs = NULL;
    rfx_model *inner = NULL, *mod = NULL;
    rfx_kpca *kp = NULL;
    char nname[600];
    if ((st = decode_checked(rec, TAG_PROJ_THETA, 0, name, &theta))) goto done;
    int any = 0;
    for (size_t j = 0; j < d; j++) {
        if (!(theta[j] >= 0 && theta[j] <= 1)) {
            st = corrupt(name, "field 'projected_theta'[%zu] = %g, expected a value in [0, 1] "
                         "(corrupt file)", j, theta[j]);
            goto done;
        }
        any |= theta[j] > 0;
    }
    if (!any) {
        st = corrupt(name, "field 'projected_theta': all %zu entries are zero (corrupt file)", d);
        goto done;
    }
    if ((st = decode_checked(rec, TAG_PROJ_ROWS, 0, name, &rows))) goto done;
    if ((st = decode_checked(rec, TAG_PROJ_ALPHA, 0, name, &alpha))) goto done;
    if ((st = decode_checked(rec, TAG_PROJ_ROW_MEANS, 0, name, &rmean))) goto done;
    if (rec[TAG_X_MEAN].present) {
        if ((st = decode_checked(rec, TAG_X_MEAN, 0, name, &xm))) goto done;
        if ((st = decode_checked(rec, TAG_X_SCALE, 1, name, &xs))) goto done;
    }
    /* the surrogate: a model file of its own inside the record */
    snprintf(nname, sizeof nname, "%s: field 'projected_surrogate'", name);
    {
        const record *r = &rec[TAG_PROJ_SURROGATE];
        uint64_t payload;
        uint32_t crc;
        if ((st = parse_header(r->data, (size_t)r->count, nname, &payload, &crc))) goto done;
        if ((st = check_length(payload, r->count - HEADER_SIZE, nname))) goto done;
        st = load_payload(r->data + HEADER_SIZE, (size_t)payload, crc, nname, 1, &inner);
        if (st) goto done;
    }
    if (inner->d != k || inner->ny != 1) {
        st = corrupt(name, "field 'projected_surrogate': a model with %zu inputs and %zu targets, "
                     "expected projected_k = %zu and 1 (corrupt file)", inner->d, inner->ny, k);
        goto done;
    }
    rfx__kpca_arrays a;
    a.m = m;
    a.d = d;
    a.k = k;
    a.gamma = gamma;
    a.X = rows;
    a.x_mean = xm;
    a.x_scale = xs;
    a.theta = theta;
    a.row_mean = rmean;
    a.grand = grand;
    a.alpha = alpha;
    st = rfx__kpca_from_arrays(&a, 0, &kp);
    if (st == RFX_EINVAL) {
        char why[512];
        snprintf(why, sizeof why, "%s", rfx_last_error());
        st = corrupt(name, "%s (corrupt file)", why);
        goto done;
    }
    if (st) {
        rfx__error_prefix("%s", name);
        goto done;
    }
    mod = calloc(1, sizeof *mod);
    if (!mod) {
        st = rfx__error(RFX_ENOMEM, "%s: cannot allocate the model", name);
        goto done;
    }
    mod->kind = &rfx__projected_kind;
    mod->method = RFX_METHOD_PROJECTED;
    mod->d = d;
    mod->D = 0;
    mod->ny = 1;
    mod->n_train = m;
    mod->fit_intercept = 0;
    mod->kpca = kp;
    mod->inner = inner;
    mod->proj_loss = loss;
    kp = NULL;
    inner = NULL;
    *out = mod;

done:
    rfx_kpca_free(kp);
    rfx_model_free(inner);
    free(theta);
    free(rows);
    free(alpha);
    free(rmean);
    free(xm);
    free(xs);
    return st;
}

/* Records -> model. All shape checks come before the first allocation.
 * nested: the surrogate of a projected model, of method ridge .. pce. */
static rfx_status build_model(const record *rec, const char *name, int nested, rfx_model **out)
{
    size_t d = 0, D = 0, ny = 0, F = 0, fd = 0, dd = 0, dy = 0;
    uint64_t method = 0, kernel = 0, form = 0, intercept = 0, ard = 0;
    rfx_status st;

    if (!rec[TAG_METHOD].present) return corrupt(name, "missing field 'method' (corrupt file)");
    RFX__TRY(get_enum(rec, TAG_METHOD, RFX_METHOD_GREEDY, name, &method));
    if (nested && method == RFX_METHOD_PROJECTED)
        return corrupt(name, "a projected model inside a projected model (corrupt file)");
    if (nested && method > RFX_METHOD_PCE)
        return corrupt(name, "a %s model as the surrogate of a projected model, which takes "
                       "ridge, bayes, srfe, harfe or pce (corrupt file)",
                       rfx_method_name((rfx_method)method));
    if (method == RFX_METHOD_PCE) return build_pce_model(rec, name, out);
    if (method == RFX_METHOD_PROJECTED) return build_projected_model(rec, name, out);
    for (int t = 1; t < TAG_END; t++) {
        if ((SPECS[t].flags & F_REQUIRED) && !rec[t].present)
            return corrupt(name, "missing field '%s' (corrupt file)", SPECS[t].name);
        if ((SPECS[t].flags & (F_PCE | F_PROJ)) && rec[t].present)
            return corrupt(name, "a %s model with field '%s' of a %s model (corrupt file)",
                           rfx_method_name((rfx_method)method), SPECS[t].name,
                           (SPECS[t].flags & F_PCE) ? "pce" : "projected");
        if ((SPECS[t].flags & F_CLS) && rec[t].present != (method == RFX_METHOD_CLASSIFY))
            return corrupt(name, "a %s model %s field '%s' (corrupt file)",
                           rfx_method_name((rfx_method)method),
                           rec[t].present ? "with the classifier's" : "without", SPECS[t].name);
    }
    RFX__TRY(get_dim(rec, TAG_N_INPUTS, name, &d));
    RFX__TRY(get_dim(rec, TAG_N_FEATURES, name, &D));
    RFX__TRY(get_dim(rec, TAG_N_TARGETS, name, &ny));
    RFX__TRY(get_enum(rec, TAG_FIT_INTERCEPT, 1, name, &intercept));
    RFX__TRY(get_enum(rec, TAG_KERNEL, RFX_KERNEL_MATERN, name, &kernel));
    RFX__TRY(get_enum(rec, TAG_FORM, RFX_FORM_COS_SIN, name, &form));
    RFX__TRY(get_enum(rec, TAG_ARD, 1, name, &ard));
    uint64_t activation = RFX_ACTIVATION_COS, sparsity = 0, wdist = RFX_WEIGHTS_KERNEL;
    uint64_t structure = RFX_STRUCTURE_IID, loss = 0, multiclass = 0;
    size_t n_classes = 0;
    double weight_scale = 1.0;
    if (rec[TAG_STRUCTURE].present)
        RFX__TRY(get_enum(rec, TAG_STRUCTURE, RFX_STRUCTURE_HALTON, name, &structure));
    if (method == RFX_METHOD_CLASSIFY) {
        RFX__TRY(get_enum(rec, TAG_LOSS, RFX_LOSS_SQUARED, name, &loss));
        RFX__TRY(get_enum(rec, TAG_MULTICLASS, RFX_MULTICLASS_SOFTMAX, name, &multiclass));
        if (multiclass == RFX_MULTICLASS_SOFTMAX && loss != RFX_LOSS_LOGISTIC)
            return corrupt(name, "field 'multiclass' is softmax with the %s loss; softmax takes "
                           "the logistic loss (corrupt file)", rfx_loss_name((rfx_loss)loss));
        uint64_t c64 = rec[TAG_CLASSES].count;
        if (c64 < 2 || c64 > RFX_CLASSIFY_MAX_CLASSES)
            return corrupt(name, "field 'classes' has %llu values, expected 2 .. %d (corrupt "
                           "file)", (unsigned long long)c64, RFX_CLASSIFY_MAX_CLASSES);
        n_classes = (size_t)c64;
        for (size_t k = 0; k < n_classes; k++) {
            double v = f64_from_bits(get_le64(rec[TAG_CLASSES].data + 8 * k));
            double u = k ? f64_from_bits(get_le64(rec[TAG_CLASSES].data + 8 * (k - 1))) : 0;
            if (!isfinite(v) || (k > 0 && !(v > u)))
                return corrupt(name, "field 'classes'[%zu] = %g, expected a finite number "
                               "%s (corrupt file)", k, v,
                               k ? "above the previous class" : "");
        }
        if (ny != (n_classes == 2 ? 1 : n_classes))
            return corrupt(name, "field 'n_targets' = %zu, expected %zu score columns for %zu "
                           "classes (corrupt file)", ny, n_classes == 2 ? (size_t)1 : n_classes,
                           n_classes);
    }
    if (rec[TAG_ACTIVATION].present)
        RFX__TRY(get_enum(rec, TAG_ACTIVATION, RFX_ACTIVATION_SIGN, name, &activation));
    if (rec[TAG_WEIGHT_DIST].present)
        RFX__TRY(get_enum(rec, TAG_WEIGHT_DIST, RFX_WEIGHTS_UNIFORM, name, &wdist));
    if (rec[TAG_SPARSITY].present) sparsity = rec_u64(&rec[TAG_SPARSITY]);
    if (rec[TAG_WEIGHT_SCALE].present) weight_scale = rec_f64(&rec[TAG_WEIGHT_SCALE]);
    uint64_t n_train = rec_u64(&rec[TAG_N_TRAIN]);
    if (n_train > SIZE_MAX)
        return corrupt(name, "field 'n_train' = %llu exceeds size_t", (unsigned long long)n_train);
    if (form == RFX_FORM_COS_SIN && D % 2 != 0)
        return corrupt(name, "field 'n_features' = %zu is odd; the cos-sin form needs it even "
                       "(corrupt file)", D);
    double nu = rec_f64(&rec[TAG_NU]);
    if (kernel == RFX_KERNEL_MATERN && !(isfinite(nu) && nu > 0))
        return corrupt(name, "field 'nu' = %g, expected a positive finite number (corrupt file)",
                       nu);
    double length_scale = rec_f64(&rec[TAG_LENGTH_SCALE]);
    if (!ard && !(isfinite(length_scale) && length_scale > 0))
        return corrupt(name, "field 'length_scale' = %g, expected a positive finite number "
                       "(corrupt file)", length_scale);
    RFX__TRY(check_scalar(rec, TAG_LAMBDA, name));
    RFX__TRY(check_scalar(rec, TAG_NOISE_VAR, name));
    RFX__TRY(check_scalar(rec, TAG_PRIOR_VAR, name));

    /* shapes: the products the arrays imply, overflow-checked */
    F = form == RFX_FORM_COS_SIN ? D / 2 : D;
    st = rfx__mul(F, d, &fd, "frequencies F x d");
    if (!st) st = rfx__mul(D, D, &dd, "posterior factor D x D");
    if (!st) st = rfx__mul(D, ny, &dy, "weights D x ny");
    if (st) {
        rfx__error_prefix("%s", name);
        return st;
    }
    RFX__TRY(check_count(rec, TAG_LENGTH_SCALES, d, "d", name));
    RFX__TRY(check_count(rec, TAG_FREQUENCIES, fd, "F x d", name));
    RFX__TRY(check_count(rec, TAG_PHASES, F, "F", name));
    RFX__TRY(check_count(rec, TAG_WEIGHTS, dy, "D x ny", name));
    RFX__TRY(check_count(rec, TAG_INTERCEPT, ny, "ny", name));
    RFX__TRY(check_count(rec, TAG_CHOL, dd, "D x D", name));
    RFX__TRY(check_count(rec, TAG_ZMEAN, D, "D", name));
    RFX__TRY(check_scaler(rec, d, name));
    int posterior = rec[TAG_CHOL].present;
    if (posterior != (method == RFX_METHOD_BAYES))
        return corrupt(name, "a %s model %s field 'chol' (corrupt file)",
                       rfx_method_name((rfx_method)method), posterior ? "with" : "without");
    if (rec[TAG_ZMEAN].present && !posterior)
        return corrupt(name, "field 'zmean' without 'chol' (corrupt file)");

    /* values: decode the feature map into temporaries (it copies them) */
    double *ls = NULL, *W = NULL, *b = NULL, *x_mean = NULL, *x_scale = NULL;
    rfx_features *f = NULL;
    rfx_model *m = NULL;
    rfx_features_params p = rfx_features_params_default();
    st = decode_new(&rec[TAG_LENGTH_SCALES], &ls, "model: length scales");
    if (!st) st = decode_new(&rec[TAG_FREQUENCIES], &W, "model: frequencies");
    if (!st) st = decode_new(&rec[TAG_PHASES], &b, "model: phases");
    if (!st && rec[TAG_X_MEAN].present)
        st = decode_new(&rec[TAG_X_MEAN], &x_mean, "model: input means");
    if (!st && rec[TAG_X_SCALE].present)
        st = decode_new(&rec[TAG_X_SCALE], &x_scale, "model: input scales");
    if (st) {
        rfx__error_prefix("%s", name);
        goto done;
    }
    if ((st = check_values(ls, d, 1, TAG_LENGTH_SCALES, name))) goto done;
    if ((st = check_values(W, fd, 0, TAG_FREQUENCIES, name))) goto done;
    if ((st = check_values(b, F, 0, TAG_PHASES, name))) goto done;
    if (x_mean && (st = check_values(x_mean, d, 0, TAG_X_MEAN, name))) goto done;
    if (x_scale && (st = check_values(x_scale, d, 1, TAG_X_SCALE, name))) goto done;
    if (!ard) {
        for (size_t i = 0; i < d; i++) {
            if (ls[i] != length_scale) {
                st = corrupt(name, "field 'length_scales'[%zu] = %g differs from the isotropic "
                             "length_scale %g (corrupt file)", i, ls[i], length_scale);
                goto done;
            }
        }
    }

    p.kernel = (rfx_kernel)kernel;
    p.nu = nu;
    p.form = (rfx_form)form;
    p.n_features = D;
    p.seed = rec_u64(&rec[TAG_SEED]);
    p.length_scale = ls[0];
    p.activation = (rfx_activation)activation;
    p.weights = (rfx_weights)wdist;
    p.weight_scale = weight_scale;
    if (sparsity > d) {
        st = corrupt(name, "field 'sparsity' = %llu exceeds the %zu inputs (corrupt file)",
                     (unsigned long long)sparsity, d);
        goto done;
    }
    p.sparsity = (size_t)sparsity;
    p.structure = (rfx_structure)structure;
    st = rfx__features_from_arrays(&p, d, ls, (int)ard, W, b, &f);
    if (st == RFX_EINVAL) { /* a parameter no valid writer produces */
        char why[512];
        snprintf(why, sizeof why, "%s", rfx_last_error());
        st = corrupt(name, "%s (corrupt file)", why);
        goto done;
    }
    if (!st) {
        st = rfx__model_alloc((rfx_method)method, f, ny, posterior, &m);
        if (st) rfx_features_free(f); /* not owned by m on failure */
    }
    if (st) {
        rfx__error_prefix("%s", name);
        goto done;
    }
    decode_f64s(&rec[TAG_WEIGHTS], m->W);
    decode_f64s(&rec[TAG_INTERCEPT], m->intercept);
    if ((st = check_values(m->W, dy, 0, TAG_WEIGHTS, name))) goto done;
    if ((st = check_values(m->intercept, ny, 0, TAG_INTERCEPT, name))) goto done;
    if (posterior) {
        decode_f64s(&rec[TAG_CHOL], m->chol);
        if ((st = check_values(m->chol, dd, 0, TAG_CHOL, name))) goto done;
        /* prediction divides by the diagonal of R */
        for (size_t i = 0; i < D; i++) {
            if (!(m->chol[i * D + i] > 0)) {
                st = corrupt(name, "field 'chol': diagonal entry %zu is %g, not positive "
                             "(corrupt file)", i, m->chol[i * D + i]);
                goto done;
            }
        }
        if (rec[TAG_ZMEAN].present) {
            decode_f64s(&rec[TAG_ZMEAN], m->zmean);
            if ((st = check_values(m->zmean, D, 0, TAG_ZMEAN, name))) goto done;
        } else {
            free(m->zmean);
            m->zmean = NULL;
        }
    }
    m->n_train = (size_t)n_train;
    m->fit_intercept = (int)intercept;
    m->lambda = rec_f64(&rec[TAG_LAMBDA]);
    m->noise_var = rec_f64(&rec[TAG_NOISE_VAR]);
    m->prior_var = rec_f64(&rec[TAG_PRIOR_VAR]);
    m->log_evidence = rec_f64(&rec[TAG_LOG_EVIDENCE]);
    m->x_mean = x_mean;
    m->x_scale = x_scale;
    x_mean = x_scale = NULL;
    if (method == RFX_METHOD_CLASSIFY) {
        st = rfx__alloc(n_classes, sizeof(double), (void **)&m->classes, "model: classes");
        if (st) {
            rfx__error_prefix("%s", name);
            goto done;
        }
        decode_f64s(&rec[TAG_CLASSES], m->classes);
        m->n_classes = n_classes;
        m->loss = (int)loss;
        m->multiclass = (int)multiclass;
    }
    *out = m;
    m = NULL;

done:
    rfx_model_free(m);
    free(ls);
    free(W);
    free(b);
    free(x_mean);
    free(x_scale);
    return st;
}

/* The payload after the header: checksum, records, model. */
static rfx_status load_payload(const unsigned char *p, size_t n, uint32_t crc, const char *name,
                               int nested, rfx_model **out)
{
    record rec[TAG_END];
    if (crc_of(p, n) != crc) return corrupt(name, "payload checksum mismatch (corrupt file)");
    RFX__TRY(parse_records(p, n, name, rec));
    return build_model(rec, name, nested, out);
}

rfx_status rfx_model_load_buffer(const void *buf, size_t len, rfx_model **out)
{
    const unsigned char *b = buf;
    uint64_t payload;
    uint32_t crc;
    if (!out) return rfx__error(RFX_EINVAL, "load model from buffer: out is NULL");
    if (!buf && len > 0) return rfx__error(RFX_EINVAL, "load model from buffer: buf is NULL");
    RFX__TRY(parse_header(b, len, "buffer", &payload, &crc));
    RFX__TRY(check_length(payload, len - HEADER_SIZE, "buffer"));
    return load_payload(b + HEADER_SIZE, (size_t)payload, crc, "buffer", 0, out);
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
            return corrupt(path, "truncated: the header announces %zu payload bytes, %zu present",
                           n, have);
        }
        have += got;
    }
    if (fgetc(fp) != EOF) {
        free(b);
        return corrupt(path, "trailing bytes after the %zu-byte payload (corrupt file)", n);
    }
    *out = b;
    return RFX_OK;
}

rfx_status rfx_model_load(const char *path, rfx_model **out)
{
    unsigned char hdr[HEADER_SIZE], *payload = NULL;
    uint64_t n;
    uint32_t crc;
    struct stat sb;
    rfx_status st;
    if (!path || !out) return rfx__error(RFX_EINVAL, "load model: path or out is NULL");
    FILE *fp = fopen(path, "rb");
    if (!fp) return rfx__error(RFX_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fileno(fp), &sb) != 0) {
        st = rfx__error(RFX_EIO, "%s: cannot stat: %s", path, strerror(errno));
        goto done;
    }
    if (S_ISDIR(sb.st_mode)) {
        st = rfx__error(RFX_EIO, "%s: is a directory, not a model file", path);
        goto done;
    }
    size_t got = fread(hdr, 1, sizeof hdr, fp);
    if (got < sizeof hdr && ferror(fp)) {
        st = rfx__error(RFX_EIO, "%s: read error: %s", path, strerror(errno));
        goto done;
    }
    if ((st = parse_header(hdr, got, path, &n, &crc))) goto done;
    int regular = S_ISREG(sb.st_mode);
    uint64_t size = sb.st_size > HEADER_SIZE ? (uint64_t)sb.st_size : HEADER_SIZE;
    if (regular && (st = check_length(n, size - HEADER_SIZE, path))) goto done;
    if (n > SIZE_MAX) {
        st = corrupt(path, "the header announces %llu payload bytes, more than size_t holds",
                     (unsigned long long)n);
        goto done;
    }
    if ((st = read_payload(fp, (size_t)n, regular, path, &payload))) goto done;
    st = load_payload(payload, (size_t)n, crc, path, 0, out);

done:
    free(payload);
    fclose(fp);
    return st;
}
