/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * records.h - the record layer of model files (src/core/records.c): the
 * field tags of format version 1 with their element types, the writer of
 * records into a payload (a sink), and the reader that splits a payload
 * into records and decodes and checks their values. The container (magic,
 * version, header, CRCs, file and buffer I/O) is src/model/modelio.c; each
 * model kind writes and reads its own records with these functions (see
 * rfx__model_kind in internal.h).
 *
 * A payload is a sequence of records, each a 16-byte header (tag u32,
 * element type u32, count u64) and count elements, padded with zeros to a
 * multiple of 8 bytes. Every integer is encoded byte by byte, little-endian,
 * and every double as the little-endian bytes of its IEEE-754 bit pattern,
 * so a file written on one host loads bitwise identically on any other.
 */
#ifndef RFX_RECORDS_H
#define RFX_RECORDS_H

#include "internal.h"

#include <string.h>

_Static_assert(sizeof(double) == sizeof(uint64_t), "doubles are stored as 64-bit patterns");

#define RFX__RECORD_HEADER 16

/* Element types of a record's data. */
enum rfx__elem_type {
    RFX__ELEM_F64 = 1,  /* IEEE-754 binary64, little-endian bit pattern */
    RFX__ELEM_U64 = 2,  /* unsigned 64-bit integer                        */
    RFX__ELEM_I64 = 3,  /* signed 64-bit, two's complement (unused in v1) */
    RFX__ELEM_UTF8 = 4, /* bytes of a UTF-8 string, no terminator          */
    RFX__ELEM_U32 = 5,  /* unsigned 32-bit integer                        */
    RFX__ELEM_BYTES = 6 /* raw bytes (a nested model file)                */
};

/* Record tags. Numbers are part of the format: never reuse or renumber
 * them; new fields take new numbers (tags 55 and 56 came with version 2). */
enum rfx__tag {
    RFX__TAG_METHOD = 1,    /* u64: rfx_method                               */
    RFX__TAG_N_INPUTS = 2,  /* u64: d >= 1                                   */
    RFX__TAG_N_FEATURES = 3,     /* u64: D >= 1 (even for the cos-sin form)       */
    RFX__TAG_N_TARGETS = 4, /* u64: ny >= 1                                  */
    RFX__TAG_N_TRAIN = 5,   /* u64: rows the model was fitted on             */
    RFX__TAG_FIT_INTERCEPT = 6,  /* u64: 0 or 1                                   */
    RFX__TAG_KERNEL = 7,    /* u64: rfx_kernel                               */
    RFX__TAG_FORM = 8,      /* u64: rfx_form                                 */
    RFX__TAG_NU = 9,        /* f64: Matern smoothness                        */
    RFX__TAG_SEED = 10,     /* u64: the seed the frequencies were drawn with */
    RFX__TAG_LENGTH_SCALE = 11,  /* f64: isotropic length scale (0 with ARD)      */
    RFX__TAG_ARD = 12,      /* u64: 1 when per-dimension scales were given   */
    RFX__TAG_LENGTH_SCALES = 13, /* f64 x d: the length scale of every input      */
    RFX__TAG_FREQUENCIES = 14,   /* f64 x F*d: W, row-major; F = D or D/2 by form */
    RFX__TAG_PHASES = 15,   /* f64 x F: b                                    */
    RFX__TAG_X_MEAN = 16,   /* f64 x d: input scaler (optional, with X_SCALE) */
    RFX__TAG_X_SCALE = 17,  /* f64 x d: > 0 (optional, with X_MEAN)          */
    RFX__TAG_WEIGHTS = 18,  /* f64 x D*ny: row-major                         */
    RFX__TAG_INTERCEPT = 19,     /* f64 x ny                                      */
    RFX__TAG_LAMBDA = 20,   /* f64: ridge penalty or noise_var / prior_var   */
    RFX__TAG_NOISE_VAR = 21,     /* f64                                           */
    RFX__TAG_PRIOR_VAR = 22,     /* f64                                           */
    RFX__TAG_LOG_EVIDENCE = 23,  /* f64                                           */
    RFX__TAG_CHOL = 24,     /* f64 x D*D: posterior factor R, row-major
                               (Bayesian models only)                        */
    RFX__TAG_ZMEAN = 25,    /* f64 x D: training feature means (optional,
                               with CHOL)                                    */
    RFX__TAG_CREATOR = 26,  /* utf8: "rfx <version>" that wrote the file
                               (optional; informational, not interpreted)    */
    RFX__TAG_ACTIVATION = 27,    /* u64: rfx_activation (optional, default cos)   */
    RFX__TAG_SPARSITY = 28, /* u64: q nonzeros per frequency (optional, 0)   */
    RFX__TAG_WEIGHT_DIST = 29,   /* u64: rfx_weights (optional, default kernel)   */
    RFX__TAG_WEIGHT_SCALE = 30,  /* f64: > 0 (optional, default 1)                */
    /* polynomial chaos models (method RFX_METHOD_PCE) only, all required:   */
    RFX__TAG_PCE_KINDS = 31,     /* u64 x d: rfx_marginal_kind, uniform or normal */
    RFX__TAG_PCE_PARAMS = 32,    /* f64 x 2d: (a, b) of each input's marginal     */
    RFX__TAG_PCE_N_TERMS = 33,   /* u64: T, the number of terms (may be 0)        */
    RFX__TAG_PCE_ALPHA = 34,     /* u32 x T*d: multi-indices, row-major, entries
                               <= RFX_PCE_MAX_DEGREE, no row repeated        */
    RFX__TAG_PCE_COEF = 35, /* f64 x T: coefficients                         */
    RFX__TAG_PCE_DEGREE = 36,    /* u64: truncation degree (>= every term's total
                               degree)                                       */
    RFX__TAG_PCE_METHOD = 37,    /* u64: rfx_pce_method                           */
    RFX__TAG_PCE_CANDIDATES = 38, /* u64: candidate basis size (0: not fitted)    */
    RFX__TAG_PCE_LOO = 39,  /* f64 x 3: LOO mse, relative, corrected; each
                               NaN, +inf or >= 0                            */
    /* projected models (method RFX_METHOD_PROJECTED) only, all required; the
       kernel's training rows are n_train (m), the input scaler is x_mean /
       x_scale (optional, both or none):                                     */
    RFX__TAG_PROJ_K = 40,   /* u64: k, 1 .. m                                */
    RFX__TAG_PROJ_GAMMA = 41,    /* f64: > 0                                      */
    RFX__TAG_PROJ_THETA = 42,    /* f64 x d: in [0, 1], not all zero              */
    RFX__TAG_PROJ_ROWS = 43,     /* f64 x m*d: the training rows as the kernel
                               sees them (standardised with the scaler)     */
    RFX__TAG_PROJ_ALPHA = 44,    /* f64 x m*k: kernel PCA coefficients            */
    RFX__TAG_PROJ_ROW_MEANS = 45, /* f64 x m: row means of the Gram matrix         */
    RFX__TAG_PROJ_GRAND_MEAN = 46, /* f64: its grand mean                          */
    RFX__TAG_PROJ_LOSS = 47,     /* f64: the fit's loss, NaN or >= 0              */
    RFX__TAG_PROJ_SURROGATE = 48, /* bytes: the surrogate on the k scores, a whole
                               model file (header and payload) of method
                               ridge, bayes, srfe, harfe or pce, with k
                               inputs and 1 target                          */
    RFX__TAG_STRUCTURE = 49,     /* u64: rfx_structure of the feature map
                               (optional, default 0 = iid; feature models)  */
    /* classifiers (method RFX_METHOD_CLASSIFY) only, all required:          */
    RFX__TAG_CLASSES = 50,  /* f64 x C: the class labels, finite, strictly
                               increasing, 2 <= C <= RFX_CLASSIFY_MAX_CLASSES;
                               n_targets (the score columns) is 1 for C = 2,
                               else C                                        */
    RFX__TAG_LOSS = 51,     /* u64: rfx_loss                                 */
    RFX__TAG_MULTICLASS = 52,    /* u64: rfx_multiclass (softmax: logistic loss)  */
    /* any regression model, optional:                                       */
    RFX__TAG_TARGET = 53,   /* u64: rfx_target_transform, 1..2 (absent: none) */
    RFX__TAG_TARGET_LAMBDA = 54, /* f64: Box-Cox lambda, finite (with 53 = 2 only) */
    /* any model, optional, format version 2 and later; never in a nested
       model (the surrogate of a projected model):                          */
    RFX__TAG_INPUT_NAMES = 55,  /* bytes: the d input names, each followed by a
                               NUL byte; each 1..RFX_MODEL_MAX_NAME bytes,
                               no two equal                                 */
    RFX__TAG_TARGET_NAME = 56,  /* utf8: the target's name, 1..RFX_MODEL_MAX_NAME
                               bytes, no NUL (with 55 only)                  */
    RFX__TAG_INPUT_BOX = 57,    /* f64 x 2d: the training range of each input,
                               lo (d) then hi (d), finite, lo <= hi          */
    RFX__TAG_WEIGHT_SUM = 58,   /* f64: sum of the row weights of a Bayesian
                               model with intercept fitted on weighted rows,
                               finite, > 0 (version 2; absent: unweighted)  */
    /* feature models, optional, format version 3 and later:                 */
    RFX__TAG_STRUCTURE_VERSION = 59, /* u64: the construction of a SORF map, 2
                               (absent: 1, the only one of rfx 0.2 and
                               earlier); only with structure sorf           */
    /* polynomial chaos models, optional, format version 5 and later:      */
    RFX__TAG_PCE_SPAN = 60,     /* f64 x 2d: the training range of each input,
                               lo (d) then hi (d), finite, lo <= hi; beyond
                               it a normal or lognormal input is continued
                               linearly (fits with marginals from the data) */
    RFX__TAG_END            /* one past the last tag                         */
};

#define RFX__F_SCALAR 1u   /* exactly one element                                */
#define RFX__F_REQUIRED 2u /* must be present in a feature model                 */
#define RFX__F_COMMON 4u   /* also in a PCE model (required there when RFX__F_REQUIRED) */
#define RFX__F_PCE 8u /* a PCE model's, required there; never in the others */
#define RFX__F_PROJ 16u    /* a projected model's, required there; never elsewhere */
#define RFX__F_PROJ_OPT 32u /* optional in a projected model (the input scaler)  */
#define RFX__F_CLS 64u     /* a classifier's, required there; never elsewhere     */
#define RFX__F_PCE_OPT 128u /* optional in a PCE model; never elsewhere          */
/* The field table: every tag's name (in messages), element type and flags
 * (which kinds of model hold it). */
typedef struct rfx__field_spec {
    const char *name;
    uint32_t type;
    unsigned flags;
} rfx__field_spec;
extern const rfx__field_spec rfx__field_specs[RFX__TAG_END];

/* ---- little-endian encoding --------------------------------------------- */

static inline void rfx__put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline void rfx__put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t rfx__get_le32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static inline uint64_t rfx__get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The bit pattern of a double (memcpy between equal-sized scalars is the
 * defined way to type-pun in C; it is not a copy of a host struct). */
static inline uint64_t rfx__f64_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline double rfx__f64_from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* CRC-32 (zlib's) of n bytes, fed in pieces that fit its uInt length:
 * _update continues crc, _of starts afresh. */
uint32_t rfx__crc_update(uint32_t crc, const unsigned char *p, size_t n);
uint32_t rfx__crc_of(const unsigned char *p, size_t n);

/* ---- writing ------------------------------------------------------------ */

/* Where payload bytes go: nowhere (measuring the size), a memory buffer
 * sized by a measuring pass, or a file. Bytes are staged so that a file gets
 * large writes and the CRC large updates; the first write error sticks. */
struct rfx__sink {
    unsigned char *mem; /* memory mode: the payload area of the buffer       */
    FILE *fp;           /* file mode                                         */
    uint64_t total;     /* payload bytes so far                              */
    uint32_t crc;       /* CRC-32 of the payload so far                      */
    int err;            /* errno of the first failed write, or 0             */
    size_t staged;
    unsigned char stage[16384];
};

void rfx__sink_init(rfx__sink *s, unsigned char *mem, FILE *fp);
/* Pass the staged bytes on (total and crc count them from then on). */
void rfx__sink_flush(rfx__sink *s);
void rfx__sink_put(rfx__sink *s, const unsigned char *p, size_t n);

/* Records: a header alone (its elements follow by rfx__put_elem64), or a
 * whole record of one u64, one f64, n f64, n u32 (padded), a string
 * (no terminator, padded) or n raw bytes (padded). */
void rfx__put_record_header(rfx__sink *s, uint32_t tag, uint32_t type, uint64_t count);
void rfx__put_elem64(rfx__sink *s, uint64_t v);
void rfx__put_u64(rfx__sink *s, uint32_t tag, uint64_t v);
void rfx__put_f64(rfx__sink *s, uint32_t tag, double v);
void rfx__put_f64s(rfx__sink *s, uint32_t tag, const double *v, size_t n);
void rfx__put_u32s(rfx__sink *s, uint32_t tag, const unsigned *v, size_t n);
void rfx__put_utf8(rfx__sink *s, uint32_t tag, const char *str);
void rfx__put_bytes(rfx__sink *s, uint32_t tag, const unsigned char *p, size_t n);

/* ---- reading ------------------------------------------------------------ */

/* One record of a payload: its data (inside the payload), element count,
 * and whether it was present. */
struct rfx__record {
    const unsigned char *data;
    uint64_t count;
    int present;
};

/* RFX_EFORMAT with the file name (or "buffer") in front: "NAME: message". */
rfx_status rfx__corrupt(const char *name, const char *fmt, ...) RFX__PRINTF(2, 3);

/* Split a payload of n bytes into records, rec[tag] for each tag (the
 * others not present). Each record's tag, element type, count (against the
 * bytes that remain, by division, so no product can wrap) and padding is
 * checked; a tag may appear once. */
rfx_status rfx__parse_records(const unsigned char *p, size_t n, const char *name,
                              rfx__record rec[RFX__TAG_END]);

/* The value of a scalar record; an f64 record's values into out. */
uint64_t rfx__rec_u64(const rfx__record *r);
double rfx__rec_f64(const rfx__record *r);
void rfx__rec_decode_f64s(const rfx__record *r, double *out);

/* Checks of rec[tag] (messages name the field and end "(corrupt file)"):
 * _dim: a size, 1 .. 2147483647 (the int range BLAS and LAPACK take);
 * _enum: 0 .. max; _count: exactly expected values when present (shape
 * names the product in the message); _scalar: a finite f64 >= 0. */
rfx_status rfx__rec_dim(const rfx__record *rec, int tag, const char *name, size_t *out);
rfx_status rfx__rec_enum(const rfx__record *rec, int tag, uint64_t max, const char *name,
                         uint64_t *out);
rfx_status rfx__rec_check_count(const rfx__record *rec, int tag, size_t expected,
                                const char *shape, const char *name);
rfx_status rfx__rec_check_scalar(const rfx__record *rec, int tag, const char *name);
/* The optional input scaler: both of x_mean and x_scale with d values, or
 * neither. */
rfx_status rfx__rec_check_scaler(const rfx__record *rec, size_t d, const char *name);
/* Every one of n values of field tag finite (and > 0 when positive). */
rfx_status rfx__rec_check_values(const double *v, size_t n, int positive, int tag,
                                 const char *name);
/* *out = a * b for a shape the records imply: RFX_EOVERFLOW naming what,
 * with the file's name in front. */
rfx_status rfx__rec_mul(size_t a, size_t b, size_t *out, const char *what, const char *name);
/* The status of building a part of the model from checked records: a
 * value no valid writer produces (RFX_EINVAL) becomes RFX_EFORMAT "NAME:
 * <its message> (corrupt file)"; another failure gets the name in front. */
rfx_status rfx__rec_failure(rfx_status st, const char *name);
/* An f64 record decoded into a fresh array (bounded by the record's bytes;
 * what names it in an allocation failure). */
rfx_status rfx__rec_decode_new(const rfx__record *r, double **out, const char *what);

#endif /* RFX_RECORDS_H */
