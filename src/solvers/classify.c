/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Classification on random features (rfx/classify.h): the logistic,
 * softmax, hinge and squared hinge objectives, minimised by L-BFGS, dual
 * coordinate descent or averaged SGD, on rows in memory or from a source.
 *
 * Everything runs over "passes": the rows come in blocks (all n rows in
 * memory are one block; a source gives its own), each block in chunks of
 * rfx__chunk_rows(D) rows rounded down to a multiple of 64 (never longer
 * than the longest block, rounded up), each chunk in tiles of 64
 * rows aligned with its start. Per chunk: the features (from the cache, or
 * computed tile by tile), the scores S = Z W + b tile by tile, the loss
 * and the residuals R = dJ/dS tile by tile (each tile's loss stored, then
 * the tiles summed in order), and the gradient Z^T R by fixed slices of 64
 * features, each one BLAS call on one thread. No reduction depends on the
 * number of threads, and a cached chunk has the same bits as a recomputed
 * one, so models are bitwise the same for any n_threads, cached or not.
 *
 * Row weights (sample_weight, rows in memory): row i's loss counts s_i
 * c_{y_i} times, and the mean is over the n' rows of positive weight, so a
 * row of weight 0 is a row left out; unweighted, every s_i is 1.0 and the
 * products change no bit.
 */
#include "solvers/classify_internal.h"

#include <math.h>
#include <string.h>

#define LBFGS_MEMORY 10
#define WOLFE_C1 1e-4
#define WOLFE_C2 0.9
#define LINE_SEARCH_EVALS 30
#define SLICE 64                /* features per slice of Z^T R            */
#define BRACKET_STEPS 60        /* doublings when bracketing the intercept */
#define BISECT_STEPS 100
#define BISECT_WIDTH 1e-12      /* relative width of the intercept bracket */
/* Multiply-adds below which a loop runs on the calling thread: waking a
 * team costs more than such a loop (the results are the same either way) */
#define PARALLEL_MIN_WORK ((size_t)1 << 20)
/* Philox streams (the key's second word) of the random orders */
#define STREAM_CD 0x4344u
#define STREAM_SGD 0x534744u

rfx_classify_params rfx_classify_params_default(void)
{
    rfx_classify_params p;
    memset(&p, 0, sizeof p);
    p.loss = RFX_LOSS_LOGISTIC;
    p.multiclass = RFX_MULTICLASS_OVR;
    p.optimizer = RFX_OPTIMIZER_AUTO;
    p.lambda = 1e-4;
    p.fit_intercept = 1;
    p.class_weights = NULL;
    p.n_class_weights = 0;
    p.balanced = 0;
    p.max_iter = 1000;
    p.tol = 1e-6;
    p.epochs = 10;
    p.batch_size = 16;
    p.learning_rate = 0.0;
    p.seed = 0;
    p.cache_bytes = (size_t)1 << 30;
    p.n_threads = 0;
    p.sample_weight = NULL;
    return p;
}

/* ---- labels ------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The position of v among the sorted classes, or C when absent. */
static size_t class_of(double v, const double *classes, size_t C)
{
    size_t lo = 0, hi = C;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (classes[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < C && classes[lo] == v ? lo : C;
}

/* The sorted distinct values of n finite labels (what names them in a
 * message). *classes is NULL when n is 0. */
static rfx_status find_classes(const double *labels, size_t n, size_t stride, const char *what,
                               double **classes, size_t *C)
{
    double *v = NULL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(labels[i * stride]))
            return rfx__error(RFX_EPARSE, "%s: row %zu: %g is not a finite label", what, i,
                              labels[i * stride]);
    size_t k = 0;
    if (n > 0) {
        RFX__TRY(rfx__alloc(n, sizeof *v, (void **)&v, "classify: classes"));
        for (size_t i = 0; i < n; i++) v[i] = labels[i * stride];
        qsort(v, n, sizeof *v, cmp_double);
        k = 1;
        for (size_t i = 1; i < n; i++)
            if (v[i] != v[k - 1]) v[k++] = v[i];
    }
    *classes = v;
    *C = k;
    return RFX_OK;
}

rfx_status rfx_classes_find(const double *labels, size_t n, size_t stride, double **classes,
                            size_t *k)
{
    if (!classes || !k) return rfx__error(RFX_EINVAL, "classes_find: classes or k is NULL");
    if (n > 0 && !labels) return rfx__error(RFX_EINVAL, "classes_find: labels is NULL");
    if (n > 1 && stride == 0) return rfx__error(RFX_EINVAL, "classes_find: stride is 0");
    return find_classes(labels, n, stride, "classes_find", classes, k);
}

rfx_status rfx__classify_classes(const double *labels, size_t n, size_t stride, const char *what,
                                 double **classes, size_t *C)
{
    double *v;
    size_t k;
    if (n == 0) return rfx__error(RFX_EINVAL, "%s: no rows, so no classes", what);
    RFX__TRY(find_classes(labels, n, stride, what, &v, &k));
    if (k < 2) {
        double only = v[0];
        free(v);
        return rfx__error(RFX_EINVAL, "%s: every one of the %zu rows has the label %g; "
                          "classification needs at least 2 classes", what, n, only);
    }
    if (k > RFX_CLASSIFY_MAX_CLASSES) {
        free(v);
        return rfx__error(RFX_EINVAL, "%s: %zu distinct labels, more than the %d classes allowed "
                          "(are these class labels?)", what, k, RFX_CLASSIFY_MAX_CLASSES);
    }
    *classes = v;
    *C = k;
    return RFX_OK;
}

/* A label as it reads back: the shortest of %.15g .. %.17g that does. */
static void format_label(double v, char *buf, size_t size)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) return;
    }
}

rfx_status rfx_class_weights_map(const double *classes, size_t C, const double *labels,
                                 const double *label_weights, size_t n_pairs,
                                 const char *target, double *weights)
{
    if (!classes || !weights || (n_pairs > 0 && (!labels || !label_weights)))
        return rfx__error(RFX_EINVAL, "class_weights_map: NULL argument");
    for (size_t j = 0; j < n_pairs; j++) {
        const double l = labels[j], w = label_weights[j];
        if (!isfinite(l) || !isfinite(w) || w < 0)
            return rfx__error(RFX_EINVAL, "pair %zu: the label must be finite and the weight a "
                              "finite number >= 0", j + 1);
        for (size_t i = 0; i < j; i++)
            if (labels[i] == l) return rfx__error(RFX_EINVAL, "label %.17g is given twice", l);
    }
    for (size_t j = 0; j < n_pairs; j++) {
        size_t k = class_of(labels[j], classes, C);
        if (k == C) {
            /* the label, then at most 20 classes, then "... (C in all)" */
            char msg[1024], b[40];
            size_t len;
            format_label(labels[j], b, sizeof b);
            snprintf(msg, sizeof msg, "%s is not a label of the target%s%s%s (its classes: ", b,
                     target ? " '" : "", target ? target : "", target ? "'" : "");
            for (size_t c = 0; c < C && c < 20; c++) {
                format_label(classes[c], b, sizeof b);
                len = strlen(msg);
                snprintf(msg + len, sizeof msg - len, "%s%s", c ? " " : "", b);
            }
            len = strlen(msg);
            if (C > 20) snprintf(msg + len, sizeof msg - len, " ... (%zu in all))", C);
            else snprintf(msg + len, sizeof msg - len, ")");
            return rfx__error(RFX_EINVAL, "%s", msg);
        }
    }
    for (size_t k = 0; k < C; k++) weights[k] = 1.0;
    for (size_t j = 0; j < n_pairs; j++) weights[class_of(labels[j], classes, C)] = label_weights[j];
    return RFX_OK;
}

void rfx__classify_index(const double *labels, size_t n, size_t stride, const double *classes,
                         size_t C, uint32_t *idx)
{
    for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)class_of(labels[i * stride], classes, C);
}

/* ---- the problem ---------------------------------------------------------- */

typedef struct problem {
    const rfx_features *f;
    size_t n, d, D, C, K; /* rows, inputs, features, classes, score columns */
    rfx_loss loss;
    int softmax;          /* softmax scores (C > 2)                          */
    int intercept;
    double lambda;
    double *cw;           /* C class weights                                 */
    const double *sw;     /* n row weights (rows in memory), or NULL         */
    double n_loss;        /* the mean's count: rows of positive weight       */
    int nt;
    /* the rows: in memory (X, y), or from a source */
    rfx_cmat X;
    const uint32_t *y;    /* n labels (memory mode, or the cache's)          */
    rfx_source *src;      /* uncached source mode                            */
    const double *classes;
    size_t *blocks;       /* block sizes: {n} in memory, a source's as seen  */
    size_t n_blocks, max_block;
    double *Z;            /* cached features (n x D), or NULL                */
    uint32_t *ycache;     /* the cache's labels (source mode)                */
    int rowwise;          /* features made one row at a time (SGD)           */
    size_t chunk;         /* rows per chunk, a multiple of 64                */
    /* workspaces */
    double *Zw;           /* chunk x D: features of an uncached chunk        */
    uint32_t *yw;         /* max(chunk, max_block): a source block's labels  */
    double *S;            /* chunk x K: scores, then residuals               */
    double *tl;           /* the loss of each tile of a chunk                */
    size_t passes;
    /* L-BFGS's gradient scale max(1, |g(0)|_inf), of the first fit from 0
     * (0 until then): a fit started elsewhere stops at the same gradient */
    double g0;
    /* a shard of a fit over workers (rfx_classify_fit_shard), or NULL */
    const rfx_classify_shard *shard;
    double *sumbuf;       /* 1 + N values: the loss and gradient to sum      */
} problem;

/* Z (rows x D) = z(rows of X): tiles of 64 rows aligned with X's first row,
 * or one row at a time in row-wise mode; OpenMP over the tiles. */
static void featurise(const problem *pb, const double *X, size_t ldx, size_t rows, double *Z)
{
    const size_t T = pb->rowwise ? 1 : RFX__ROW_TILE, tiles = (rows + T - 1) / T, D = pb->D;
    const int par = tiles > 1 && rows * D * (pb->d + 16) >= PARALLEL_MIN_WORK;
#pragma omp parallel num_threads(pb->nt) if (par)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < tiles; t++) {
            size_t r0 = t * T, rr = rows - r0 < T ? rows - r0 : T;
            rfx__transform_tile(pb->f, X + r0 * ldx, ldx, rr, Z + r0 * D, D);
        }
    }
}

/* Row-wise features of the rows idx[0..rows) of X (SGD windows). */
static void featurise_rows(const problem *pb, const double *X, size_t ldx, const size_t *idx,
                           size_t rows, double *Z)
{
    const size_t D = pb->D;
    const int par = rows > 1 && rows * D * (pb->d + 16) >= PARALLEL_MIN_WORK;
#pragma omp parallel num_threads(pb->nt) if (par)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t i = 0; i < rows; i++)
            rfx__transform_tile(pb->f, X + idx[i] * ldx, ldx, 1, Z + i * D, D);
    }
}

/* A source block's rows checked: shape, finite values, known labels
 * (first: the first pass, which has no classes yet). row0: the global
 * index of its first row, for messages. */
static rfx_status check_block(const problem *pb, const rfx_block *b, size_t row0)
{
    if (b->rows > 0 && (!b->x || b->stride < b->cols))
        return rfx__error(RFX_EINVAL, "classify source: a block of %zu rows has no data or a "
                          "stride %zu < %zu columns", b->rows, b->stride, b->cols);
    if (b->rows > 0 && b->cols != pb->d)
        return rfx__error(RFX_EDIM, "classify source: rows %zu.. have %zu columns, the features "
                          "take %zu", row0, b->cols, pb->d);
    if (b->rows > 0 && (b->ny != 1 || !b->y))
        return rfx__error(RFX_EDIM, "classify source: rows %zu.. have %zu target columns, "
                          "expected 1 (the labels)", row0, b->ny);
    rfx_cmat xb = {b->x, b->rows, b->cols, b->stride};
    size_t r, c;
    if (b->rows > 0 && !rfx__all_finite(xb, &r, &c))
        return rfx__error(RFX_EPARSE, "classify source: row %zu, column %zu: %g is not finite",
                          row0 + r, c, b->x[r * b->stride + c]);
    for (size_t i = 0; i < b->rows; i++)
        if (!isfinite(b->y[i * b->y_stride]))
            return rfx__error(RFX_EPARSE, "classify source: row %zu: %g is not a finite label",
                              row0 + i, b->y[i * b->y_stride]);
    return RFX_OK;
}

/* Labels of a source block as class indices; an unknown one is an error. */
static rfx_status map_labels(const problem *pb, const rfx_block *b, size_t off, size_t rows,
                             size_t row0, uint32_t *out)
{
    for (size_t i = 0; i < rows; i++) {
        double v = b->y[(off + i) * b->y_stride];
        size_t k = class_of(v, pb->classes, pb->C);
        if (k == pb->C)
            return rfx__error(RFX_EINVAL, "classify source: row %zu has the label %g, not seen in "
                              "the first pass (the source changed between passes)", row0 + off + i,
                              v);
        out[i] = (uint32_t)k;
    }
    return RFX_OK;
}

/* Walks the blocks of one pass. */
typedef struct cursor {
    problem *pb;
    size_t b;        /* blocks begun; the current one is b - 1             */
    size_t rows;     /* rows of the current block                          */
    size_t off;      /* rows of it already given                           */
    size_t row0;     /* global index of its first row                      */
    rfx_block blk;   /* uncached source mode: the current block            */
} cursor;

static rfx_status cursor_start(problem *pb, cursor *c)
{
    memset(c, 0, sizeof *c);
    c->pb = pb;
    if (pb->src && !pb->Z) {
        rfx_status st = pb->src->rewind(pb->src);
        if (st) {
            rfx__error_prefix("classify source: rewind");
            return st;
        }
    }
    return RFX_OK;
}

/* The next non-empty block of the source, or *end. */
static rfx_status source_next(problem *pb, rfx_block *b, int *end)
{
    for (;;) {
        rfx_status st = pb->src->next(pb->src, b, end);
        if (st) {
            rfx__error_prefix("classify source");
            return st;
        }
        if (*end || b->rows > 0) return RFX_OK;
    }
}

/* Move to the next block of the pass (*done after the last): its rows in
 * *rows, its first row's global index in c->row0. A source must give the
 * blocks of the first pass again. */
static rfx_status cursor_block(cursor *c, size_t *rows, int *done)
{
    problem *pb = c->pb;
    const int reading = pb->src && !pb->Z;
    int end = 0;
    c->row0 += c->rows;
    c->rows = c->off = 0;
    *rows = 0;
    *done = c->b >= pb->n_blocks;
    if (*done) {
        if (reading) {
            RFX__TRY(source_next(pb, &c->blk, &end));
            if (!end)
                return rfx__error(RFX_EINVAL, "classify source: pass %zu gives more than the %zu "
                                  "rows of the first pass; a source must give the same rows on "
                                  "every pass", pb->passes + 1, pb->n);
        }
        return RFX_OK;
    }
    c->rows = pb->blocks[c->b++];
    if (reading) {
        RFX__TRY(source_next(pb, &c->blk, &end));
        if (end || c->blk.rows != c->rows)
            return rfx__error(RFX_EINVAL, "classify source: pass %zu gives %s at row %zu than the "
                              "first pass; a source must give the same rows in the same blocks "
                              "on every pass", pb->passes + 1,
                              end ? "fewer rows" : "another block", c->row0);
        RFX__TRY(check_block(pb, &c->blk, c->row0));
    }
    *rows = c->rows;
    return RFX_OK;
}

/* The next chunk of the pass: Z (rows x D, row stride D) and the labels
 * y; *done at the end. */
static rfx_status cursor_chunk(cursor *c, const double **Z, const uint32_t **y,
                               const double **sw, size_t *rows, int *done)
{
    problem *pb = c->pb;
    *done = 0;
    while (c->off >= c->rows) {
        size_t br = 0;
        RFX__TRY(cursor_block(c, &br, done));
        if (*done) return RFX_OK;
    }
    const size_t off = c->off, left = c->rows - off;
    const size_t r = left < pb->chunk ? left : pb->chunk, g = c->row0 + off;
    *sw = pb->sw ? pb->sw + g : NULL; /* weights: rows in memory only */
    if (pb->Z) {
        *Z = pb->Z + g * pb->D;
        *y = pb->y + g;
    } else if (pb->src) {
        featurise(pb, c->blk.x + off * c->blk.stride, c->blk.stride, r, pb->Zw);
        RFX__TRY(map_labels(pb, &c->blk, off, r, c->row0, pb->yw));
        *Z = pb->Zw;
        *y = pb->yw;
    } else {
        featurise(pb, pb->X.data + g * pb->X.stride, pb->X.stride, r, pb->Zw);
        *Z = pb->Zw;
        *y = pb->y + g;
    }
    *rows = r;
    c->off += r;
    return RFX_OK;
}

/* ---- losses --------------------------------------------------------------- */

/* log(1 + exp(-t)) without overflow or cancellation. */
static double softplus_neg(double t)
{
    return t > 0 ? log1p(exp(-t)) : -t + log1p(exp(t));
}

/* d/dt log(1 + exp(-t)) = -1 / (1 + exp(t)). */
static double softplus_neg_d(double t)
{
    if (t > 0) {
        double e = exp(-t);
        return -e / (1.0 + e);
    }
    return -1.0 / (1.0 + exp(t));
}

/* The loss of margin t and its derivative in t (the hinge's subgradient
 * with loss'(1) = 0). */
static double margin_loss(rfx_loss loss, double t, double *dl)
{
    switch (loss) {
    case RFX_LOSS_LOGISTIC:
        *dl = softplus_neg_d(t);
        return softplus_neg(t);
    case RFX_LOSS_HINGE:
        *dl = t < 1 ? -1.0 : 0.0;
        return t < 1 ? 1.0 - t : 0.0;
    case RFX_LOSS_SQUARED: {
        double m = 1.0 - t;
        *dl = -2.0 * m;
        return m * m;
    }
    case RFX_LOSS_SQUARED_HINGE:
    default: {
        double m = 1.0 - t;
        *dl = m > 0 ? -2.0 * m : 0.0;
        return m > 0 ? m * m : 0.0;
    }
    }
}

/* The weighted loss sum_i c_i loss_i of rows of scores S (rows x K) with
 * labels y, c_i the class weight times the row weight sw[i] (sw NULL: 1);
 * with grad, S is overwritten by scale c_i dloss_i / dS_i. */
static double rows_loss(const problem *pb, double *S, const uint32_t *y, const double *sw,
                        size_t rows, int grad, double scale)
{
    const size_t K = pb->K;
    double sum = 0;
    for (size_t i = 0; i < rows; i++) {
        double *s = S + i * K, c = pb->cw[y[i]] * (sw ? sw[i] : 1.0), l = 0;
        if (pb->softmax) {
            double mx = s[0], se = 0;
            for (size_t k = 1; k < K; k++)
                if (s[k] > mx) mx = s[k];
            for (size_t k = 0; k < K; k++) se += exp(s[k] - mx);
            l = mx + log(se) - s[y[i]];
            if (grad)
                for (size_t k = 0; k < K; k++)
                    s[k] = scale * c * (exp(s[k] - mx) / se - (k == y[i] ? 1.0 : 0.0));
        } else {
            for (size_t k = 0; k < K; k++) {
                double yk = (K == 1 ? y[i] == 1 : y[i] == k) ? 1.0 : -1.0, dl;
                l += margin_loss(pb->loss, yk * s[k], &dl);
                if (grad) s[k] = scale * c * yk * dl;
            }
        }
        sum += c * l;
    }
    return sum;
}

/* ---- objective and gradient --------------------------------------------- */

/* J at x = [W (D x K, row-major); b (K) with an intercept] and, when g is
 * not NULL, its gradient (same layout). One pass over the rows. */
static rfx_status evaluate(problem *pb, const double *x, double *fval, double *g)
{
    const size_t D = pb->D, K = pb->K, T = RFX__ROW_TILE;
    const size_t N = D * K + (pb->intercept ? K : 0);
    const double *W = x, *b = pb->intercept ? x + D * K : NULL;
    const double inv_n = 1.0 / pb->n_loss;
    double *gW = g, *gb = g && pb->intercept ? g + D * K : NULL, loss = 0;
    const int nt = pb->nt;
    cursor c;
    if (g) memset(g, 0, N * sizeof *g);
    rfx_status st = cursor_start(pb, &c);
    while (!st) {
        const double *Zc = NULL;
        const uint32_t *yc = NULL;
        const double *swc = NULL;
        size_t rows = 0;
        int done = 0;
        st = cursor_chunk(&c, &Zc, &yc, &swc, &rows, &done);
        if (st || done) break;
        const size_t tiles = (rows + T - 1) / T;
        const int par = rows * D * K >= PARALLEL_MIN_WORK;
        double *S = pb->S, *tl = pb->tl;
#pragma omp parallel num_threads(nt) if (tiles > 1 && par)
        {
            RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
            for (size_t t = 0; t < tiles; t++) {
                size_t r0 = t * T, rr = rows - r0 < T ? rows - r0 : T;
                double *St = S + r0 * K;
                for (size_t i = 0; i < rr; i++)
                    for (size_t k = 0; k < K; k++) St[i * K + k] = b ? b[k] : 0.0;
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rr, (int)K, (int)D,
                            1.0, Zc + r0 * D, (int)D, W, (int)K, 1.0, St, (int)K);
                tl[t] = rows_loss(pb, St, yc + r0, swc ? swc + r0 : NULL, rr, g != NULL, inv_n) *
                        inv_n;
            }
        }
        for (size_t t = 0; t < tiles; t++) loss += tl[t];
        if (g) {
            const size_t slices = (D + SLICE - 1) / SLICE;
#pragma omp parallel num_threads(nt) if (slices > 1 && par)
            {
                RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
                for (size_t q = 0; q < slices; q++) {
                    size_t j0 = q * SLICE, nj = D - j0 < SLICE ? D - j0 : SLICE;
                    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)nj, (int)K,
                                (int)rows, 1.0, Zc + j0, (int)D, S, (int)K, 1.0, gW + j0 * K,
                                (int)K);
                }
            }
            if (gb)
                for (size_t i = 0; i < rows; i++)
                    for (size_t k = 0; k < K; k++) gb[k] += S[i * K + k];
        }
    }
    if (pb->shard) {
        /* the rows' part of J and its gradient, summed over the workers
         * (each with its own status: a failure anywhere fails everywhere) */
        double *v = pb->sumbuf;
        v[0] = loss;
        if (g) memcpy(v + 1, g, N * sizeof *g);
        st = pb->shard->sum(pb->shard->user, v, g ? N + 1 : 1, st);
        if (!st) {
            loss = v[0];
            if (g) memcpy(g, v + 1, N * sizeof *g);
        }
    }
    if (st) return st;
    pb->passes++;
    double pen = 0;
    for (size_t j = 0; j < D * K; j++) pen += W[j] * W[j];
    loss += 0.5 * pb->lambda * pen;
    if (gW)
        for (size_t j = 0; j < D * K; j++) gW[j] += pb->lambda * W[j];
    if (!isfinite(loss))
        return rfx__error(RFX_ENUMERIC, "classify: the objective is not finite (%g)", loss);
    *fval = loss;
    return RFX_OK;
}

static double norm_inf(const double *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(v[i]) > m) m = fabs(v[i]);
    return m;
}

static int cancelled(const rfx_classify_params *p, double frac)
{
    return p->progress && p->progress(p->progress_user, "classify", frac);
}

/* ---- L-BFGS ------------------------------------------------------------- */

/* One trial point of the line search: x + a d, its objective, gradient
 * and directional derivative. */
typedef struct trial {
    double a, f, df;
    double *x, *g;
} trial;

static rfx_status probe(problem *pb, const double *x, const double *dir, size_t N, trial *t)
{
    for (size_t i = 0; i < N; i++) t->x[i] = x[i] + t->a * dir[i];
    RFX__TRY(evaluate(pb, t->x, &t->f, t->g));
    t->df = rfx__dot(t->g, dir, N);
    return RFX_OK;
}

static void trial_copy(trial *to, const trial *from, size_t N)
{
    to->a = from->a;
    to->f = from->f;
    to->df = from->df;
    memcpy(to->x, from->x, N * sizeof(double));
    memcpy(to->g, from->g, N * sizeof(double));
}

/* The minimiser of the cubic through (a, fa, da) and (b, fb, db), kept in
 * the middle 80% of [a, b]; the midpoint when the cubic has none. */
static double cubic_step(double a, double fa, double da, double b, double fb, double db)
{
    double lo = a < b ? a : b, hi = a < b ? b : a, w = hi - lo, x;
    double d1 = da + db - 3.0 * (fa - fb) / (a - b), disc = d1 * d1 - da * db;
    if (disc >= 0 && isfinite(disc)) {
        double d2 = (b > a ? 1.0 : -1.0) * sqrt(disc);
        x = b - (b - a) * (db + d2 - d1) / (db - da + 2.0 * d2);
    } else {
        x = 0.5 * (a + b);
    }
    if (!isfinite(x) || x < lo + 0.1 * w || x > hi - 0.1 * w) x = 0.5 * (a + b);
    return x;
}

/* A step along the descent direction dir satisfying the strong Wolfe
 * conditions (Nocedal & Wright, Algorithms 3.5 and 3.6), or their
 * approximate form once the objective is flat to rounding (f within
 * 1e-12 |f| of f0 and the curvature condition met: Hager & Zhang 2005).
 * On success *best holds the point; returns 0 when no step was found. */
static rfx_status line_search(problem *pb, const double *x, double f0, double df0,
                              const double *dir, size_t N, double a1, trial *cur, trial *lo,
                              trial *hi, int *found)
{
    const double flat = 1e-12 * fabs(f0);
    trial *prev = lo; /* a_{i-1}, starting at 0 */
    int have_prev = 0, evals = 0;
    *found = 0;
    prev->a = 0;
    prev->f = f0;
    prev->df = df0;
#define ACCEPTABLE(t) (fabs((t)->df) <= -WOLFE_C2 * df0 && \
                       ((t)->f <= f0 + WOLFE_C1 * (t)->a * df0 || (t)->f <= f0 + flat))
    cur->a = a1;
    for (;;) {
        RFX__TRY(probe(pb, x, dir, N, cur));
        evals++;
        if (ACCEPTABLE(cur)) {
            *found = 1;
            trial_copy(lo, cur, N);
            return RFX_OK;
        }
        if (cur->f > f0 + WOLFE_C1 * cur->a * df0 || (have_prev && cur->f >= prev->f)) {
            trial_copy(hi, cur, N); /* zoom(prev, cur); prev is lo */
            break;
        }
        if (cur->df >= 0) { /* zoom(cur, prev): prev is lo */
            trial_copy(hi, prev, N);
            trial_copy(lo, cur, N);
            break;
        }
        trial_copy(lo, cur, N);
        have_prev = 1;
        if (evals >= LINE_SEARCH_EVALS) return RFX_OK;
        cur->a *= 2.0;
    }
    /* zoom: lo has the lower objective and satisfies sufficient decrease */
    while (evals < LINE_SEARCH_EVALS) {
        cur->a = cubic_step(lo->a, lo->f, lo->df, hi->a, hi->f, hi->df);
        if (fabs(hi->a - lo->a) <= 1e-16 * fabs(lo->a)) break;
        RFX__TRY(probe(pb, x, dir, N, cur));
        evals++;
        if (ACCEPTABLE(cur)) {
            *found = 1;
            trial_copy(lo, cur, N);
            return RFX_OK;
        }
        if (cur->f > f0 + WOLFE_C1 * cur->a * df0 || cur->f >= lo->f) {
            trial_copy(hi, cur, N);
        } else {
            if (cur->df * (hi->a - lo->a) >= 0) trial_copy(hi, lo, N);
            trial_copy(lo, cur, N);
        }
    }
#undef ACCEPTABLE
    /* no Wolfe point, but a decrease is still progress */
    if (lo->a > 0 && lo->f < f0) *found = 1;
    return RFX_OK;
}

static rfx_status lbfgs(problem *pb, const rfx_classify_params *p, double *x,
                        rfx_classify_report *rep)
{
    const size_t D = pb->D, K = pb->K, N = D * K + (pb->intercept ? K : 0), M = LBFGS_MEMORY;
    double *buf = NULL;
    size_t total;
    RFX__TRY(rfx__mul(N, 2 * M + 9, &total, "classify: L-BFGS workspace"));
    RFX__TRY(rfx__alloc(total, sizeof(double), (void **)&buf, "classify: L-BFGS workspace"));
    double *g = buf, *dir = g + N, *Sm = dir + N, *Ym = Sm + M * N;
    trial cur = {0, 0, 0, Ym + M * N, Ym + M * N + N};
    trial lo = {0, 0, 0, cur.g + N, cur.g + 2 * N};
    trial hi = {0, 0, 0, lo.g + N, lo.g + 2 * N};
    double rho[LBFGS_MEMORY], alpha[LBFGS_MEMORY], f = 0;
    size_t head = 0, count = 0, it = 0;
    int converged = 0;
    rfx_status st = evaluate(pb, x, &f, g);
    if (!st && !(pb->g0 > 0)) pb->g0 = norm_inf(g, N) > 1.0 ? norm_inf(g, N) : 1.0;
    const double g0 = st ? 1.0 : pb->g0;
    while (!st) {
        if (norm_inf(g, N) <= p->tol * g0) {
            converged = 1;
            break;
        }
        if (it >= p->max_iter) break;
        /* two-loop recursion: dir = -H g */
        for (size_t i = 0; i < N; i++) dir[i] = -g[i];
        for (size_t j = 0; j < count; j++) {
            size_t s = (head + M - 1 - j) % M;
            alpha[s] = rho[s] * rfx__dot(Sm + s * N, dir, N);
            for (size_t i = 0; i < N; i++) dir[i] -= alpha[s] * Ym[s * N + i];
        }
        if (count > 0) {
            size_t s = (head + M - 1) % M;
            double gam = rfx__dot(Sm + s * N, Ym + s * N, N) / rfx__dot(Ym + s * N, Ym + s * N, N);
            for (size_t i = 0; i < N; i++) dir[i] *= gam;
        }
        for (size_t j = count; j-- > 0;) {
            size_t s = (head + M - 1 - j) % M;
            double beta = rho[s] * rfx__dot(Ym + s * N, dir, N);
            for (size_t i = 0; i < N; i++) dir[i] += (alpha[s] - beta) * Sm[s * N + i];
        }
        double df0 = rfx__dot(dir, g, N);
        if (!(df0 < 0)) { /* not a descent direction: restart from the gradient */
            for (size_t i = 0; i < N; i++) dir[i] = -g[i];
            df0 = -rfx__dot(g, g, N);
            count = 0;
        }
        double a1 = 1.0;
        if (count == 0) {
            double gn = sqrt(rfx__dot(g, g, N));
            a1 = gn > 1.0 ? 1.0 / gn : 1.0;
        }
        int found = 0;
        st = line_search(pb, x, f, df0, dir, N, a1, &cur, &lo, &hi, &found);
        if (st) break;
        if (!found) {
            if (count == 0) break; /* even the gradient step failed: rounding */
            count = 0;             /* forget the curvature pairs and retry */
            continue;
        }
        double *s = Sm + head * N, *yv = Ym + head * N;
        for (size_t i = 0; i < N; i++) {
            s[i] = lo.x[i] - x[i];
            yv[i] = lo.g[i] - g[i];
        }
        double sy = rfx__dot(s, yv, N);
        if (sy > 1e-14 * sqrt(rfx__dot(s, s, N) * rfx__dot(yv, yv, N))) {
            rho[head] = 1.0 / sy;
            head = (head + 1) % M;
            if (count < M) count++;
        }
        memcpy(x, lo.x, N * sizeof *x);
        memcpy(g, lo.g, N * sizeof *g);
        f = lo.f;
        it++;
        if (cancelled(p, (double)it / (double)p->max_iter))
            st = rfx__error(RFX_ECANCELLED, "classify: cancelled by the progress callback");
    }
    if (!st) {
        rep->iterations = it;
        rep->objective = f;
        rep->grad_norm = norm_inf(g, N);
        rep->converged = converged;
    }
    free(buf);
    return st;
}

/* ---- dual coordinate descent ------------------------------------------- */

/* Why a column failed (set on a worker thread, reported by the caller). */
enum cd_fail { CD_OK = 0, CD_BRACKET = 1 };

typedef struct cd_work {
    double *a;    /* n dual variables                                       */
    double *w;    /* D weights                                              */
    size_t *perm; /* n                                                      */
} cd_work;

/* Dual CD epochs for column k at intercept b (margins e_i = 1 - y_i b),
 * warm-started from a, w, until the projected gradients span at most eps
 * (*conv) or the column's budget of max_iter epochs is spent. With
 * shrinking (Hsieh et al. 2008, section 3.2; liblinear's rule): a variable
 * at a bound whose gradient points out of the box by more than the last
 * epoch's extreme projected gradient leaves the active set; when the active
 * set has converged, one epoch over all rows decides (the shrunk variables
 * come back if that check fails). Every epoch visits its active rows in an
 * order drawn from (seed, column, epoch): the result does not depend on the
 * thread count. */
static void cd_solve(const problem *pb, const rfx_classify_params *p, size_t k, double b,
                     double eps, const double *qii, cd_work *wk, size_t *epochs, int *conv)
{
    const size_t n = pb->n, D = pb->D;
    const int squared = pb->loss == RFX_LOSS_SQUARED_HINGE;
    const double scale = 1.0 / (pb->n_loss * pb->lambda);
    double *a = wk->a, *w = wk->w;
    size_t *perm = wk->perm, active = n;
    double pgmax_old = INFINITY, pgmin_old = -INFINITY;
    for (size_t i = 0; i < n; i++) perm[i] = i;
    *conv = 0;
    while (*epochs < p->max_iter) {
        rfx__rng rng;
        rfx__rng_init(&rng, p->seed, STREAM_CD + ((uint64_t)k << 20), (uint64_t)*epochs);
        rfx__rng_shuffle(&rng, perm, active);
        double pgmax = -INFINITY, pgmin = INFINITY;
        size_t q = 0;
        while (q < active) {
            size_t i = perm[q];
            double Ci = pb->cw[pb->y[i]] * (pb->sw ? pb->sw[i] : 1.0) * scale;
            if (!(Ci > 0)) {
                q++;
                continue;
            }
            const double *z = pb->Z + i * D;
            double yi = (pb->K == 1 ? pb->y[i] == 1 : pb->y[i] == k) ? 1.0 : -1.0;
            double Dii = squared ? 0.5 / Ci : 0.0, U = squared ? INFINITY : Ci;
            double G = yi * rfx__dot(w, z, D) - (1.0 - yi * b) + Dii * a[i], PG = 0;
            int shrink = 0;
            if (a[i] <= 0) {
                if (G > pgmax_old) shrink = 1;
                else if (G < 0) PG = G;
            } else if (a[i] >= U) {
                if (G < pgmin_old) shrink = 1;
                else if (G > 0) PG = G;
            } else {
                PG = G;
            }
            if (shrink) { /* swap with the last active row; look at q again */
                active--;
                perm[q] = perm[active];
                perm[active] = i;
                continue;
            }
            if (PG > pgmax) pgmax = PG;
            if (PG < pgmin) pgmin = PG;
            double qb = qii[i] + Dii;
            if (PG != 0 && qb > 0) {
                double an = a[i] - G / qb;
                an = an < 0 ? 0 : an > U ? U : an;
                double da = an - a[i];
                if (da != 0) {
                    for (size_t j = 0; j < D; j++) w[j] += da * yi * z[j];
                    a[i] = an;
                }
            }
            q++;
        }
        (*epochs)++;
        if (!(pgmax - pgmin > eps)) { /* also when no row has weight */
            if (active == n) {
                *conv = 1;
                return;
            }
            active = n; /* check every row before stopping */
            pgmax_old = INFINITY;
            pgmin_old = -INFINITY;
            continue;
        }
        pgmax_old = pgmax > 0 ? pgmax : INFINITY;
        pgmin_old = pgmin < 0 ? pgmin : -INFINITY;
    }
}

/* -sum_i a_i y_i: the derivative in b of the optimal value of the scaled
 * problem (dJ/db = lambda times it). */
static double cd_slope(const problem *pb, size_t k, const double *a)
{
    double s = 0;
    for (size_t i = 0; i < pb->n; i++) {
        double yi = (pb->K == 1 ? pb->y[i] == 1 : pb->y[i] == k) ? 1.0 : -1.0;
        s -= a[i] * yi;
    }
    return s;
}

/* Column k: weights into wk->w, intercept into *b. With an intercept, the
 * root of the non-decreasing slope g(b) is bracketed (steps 1, 2, 4, ..
 * from 0) and then found by regula falsi with the Illinois modification
 * (a bisection step when it stalls), each solve warm-started and asked
 * for a projected-gradient span of max(tol, width / 100), width the
 * bracket's; it stops when the bracket is narrower than 1e-12 max(1, |b|)
 * or |g| <= tol sum_i C_i (|dJ/db| <= tol mean c_i), and ends with a solve
 * to tol at the last b. */
static enum cd_fail cd_column(const problem *pb, const rfx_classify_params *p, size_t k,
                              const double *qii, cd_work *wk, double *b, size_t *epochs, int *conv)
{
    const double tol = p->tol, coarse = tol > 0.1 ? tol : 0.1;
    double csum = 0;
    memset(wk->a, 0, pb->n * sizeof(double));
    memset(wk->w, 0, pb->D * sizeof(double));
    *epochs = 0;
    *b = 0;
    if (!pb->intercept) {
        cd_solve(pb, p, k, 0.0, tol, qii, wk, epochs, conv);
        return CD_OK;
    }
    for (size_t i = 0; i < pb->n; i++) csum += pb->cw[pb->y[i]] * (pb->sw ? pb->sw[i] : 1.0);
    const double gtol = tol * csum / (pb->n_loss * pb->lambda);
    cd_solve(pb, p, k, 0.0, coarse, qii, wk, epochs, conv);
    double x = 0, g = cd_slope(pb, k, wk->a), lo = 0, hi = 0, glo = g, ghi = g, eps = coarse;
    if (fabs(g) > gtol) {
        /* bracket: g(lo) <= 0 <= g(hi) */
        const double dir = g > 0 ? -1.0 : 1.0;
        double step = 1.0, prev = 0, gprev = g;
        for (int s = 0;; s++) {
            if (s >= BRACKET_STEPS) return CD_BRACKET;
            x = dir * step;
            cd_solve(pb, p, k, x, coarse, qii, wk, epochs, conv);
            g = cd_slope(pb, k, wk->a);
            if (dir * g >= 0 || *epochs >= p->max_iter) break;
            prev = x;
            gprev = g;
            step *= 2;
        }
        if (dir * g < 0) { /* the budget ran out while bracketing */
            *b = x;
            return CD_OK;
        }
        if (dir > 0) {
            lo = prev, glo = gprev, hi = x, ghi = g;
        } else {
            lo = x, glo = g, hi = prev, ghi = gprev;
        }
        int side = 0;
        for (int s = 0; s < BISECT_STEPS && *epochs < p->max_iter && fabs(g) > gtol; s++) {
            double big = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi), width = hi - lo;
            if (width <= BISECT_WIDTH * (big > 1 ? big : 1)) break;
            x = ghi > glo ? (lo * ghi - hi * glo) / (ghi - glo) : 0.5 * (lo + hi);
            if (!(x > lo + 1e-3 * width && x < hi - 1e-3 * width)) x = 0.5 * (lo + hi);
            eps = width / 100 > tol ? width / 100 : tol;
            cd_solve(pb, p, k, x, eps, qii, wk, epochs, conv);
            g = cd_slope(pb, k, wk->a);
            if (g < 0) {
                lo = x, glo = g;
                if (side == -1) ghi /= 2;
                side = -1;
            } else {
                hi = x, ghi = g;
                if (side == 1) glo /= 2;
                side = 1;
            }
        }
    }
    *b = x;
    if (eps > tol || !*conv) cd_solve(pb, p, k, x, tol, qii, wk, epochs, conv);
    return CD_OK;
}

static rfx_status dual_cd(problem *pb, const rfx_classify_params *p, double *x,
                          rfx_classify_report *rep)
{
    const size_t n = pb->n, D = pb->D, K = pb->K;
    const int nt = (size_t)pb->nt < K ? pb->nt : (int)K;
    double *qii = NULL, *wsd = NULL, *bk = NULL;
    size_t *wsp = NULL, *ep = NULL;
    int *conv = NULL, *fail = NULL;
    rfx_status st = rfx__alloc(n, sizeof *qii, (void **)&qii, "classify: dual CD");
    size_t per = 0, pern = 0;
    if (!st) st = rfx__add(n, D, &per, "classify: dual CD workspace");
    if (!st) st = rfx__mul((size_t)nt, per, &pern, "classify: dual CD workspace");
    if (!st) st = rfx__alloc(pern, sizeof *wsd, (void **)&wsd, "classify: dual CD workspace");
    if (!st) st = rfx__mul((size_t)nt, n, &pern, "classify: dual CD workspace");
    if (!st) st = rfx__alloc(pern, sizeof *wsp, (void **)&wsp, "classify: dual CD workspace");
    if (!st) st = rfx__calloc(K, sizeof *bk, (void **)&bk, "classify: dual CD");
    if (!st) st = rfx__calloc(K, sizeof *ep, (void **)&ep, "classify: dual CD");
    if (!st) st = rfx__calloc(K, sizeof *conv, (void **)&conv, "classify: dual CD");
    if (!st) st = rfx__calloc(K, sizeof *fail, (void **)&fail, "classify: dual CD");
    if (st) goto done;
#pragma omp parallel for num_threads(pb->nt) schedule(static) if (n * D >= PARALLEL_MIN_WORK)
    for (size_t i = 0; i < n; i++) qii[i] = rfx__dot(pb->Z + i * D, pb->Z + i * D, D);
    /* the columns in rounds of nt, one per thread: progress between rounds */
    for (size_t k0 = 0; k0 < K && !st; k0 += (size_t)nt) {
        size_t k1 = k0 + (size_t)nt < K ? k0 + (size_t)nt : K;
#pragma omp parallel num_threads(nt) if (k1 - k0 > 1 && n * D >= PARALLEL_MIN_WORK / 64)
        {
#ifdef _OPENMP
            size_t me = (size_t)omp_get_thread_num();
#else
            size_t me = 0;
#endif
            cd_work wk = {wsd + me * per, wsd + me * per + n, wsp + me * n};
#pragma omp for schedule(static)
            for (size_t k = k0; k < k1; k++) {
                fail[k] = cd_column(pb, p, k, qii, &wk, &bk[k], &ep[k], &conv[k]);
                for (size_t j = 0; j < D; j++) x[j * K + k] = wk.w[j];
            }
        }
        for (size_t k = k0; k < k1; k++)
            if (fail[k] == CD_BRACKET) {
                st = rfx__error(RFX_ENUMERIC, "classify: the intercept of column %zu could not be "
                                "bracketed within |b| <= 2^%d", k, BRACKET_STEPS);
                break;
            }
        if (!st && cancelled(p, (double)k1 / (double)K))
            st = rfx__error(RFX_ECANCELLED, "classify: cancelled by the progress callback");
    }
    if (!st) {
        int all = 1;
        size_t most = 0;
        for (size_t k = 0; k < K; k++) {
            /* w = sum_i a_i y_i z_i minimises J too: J = lambda x the dual's primal */
            if (pb->intercept) x[D * K + k] = bk[k];
            all &= conv[k];
            if (ep[k] > most) most = ep[k];
        }
        rep->iterations = most;
        rep->converged = all;
    }
done:
    free(qii);
    free(wsd);
    free(wsp);
    free(bk);
    free(ep);
    free(conv);
    free(fail);
    return st;
}

/* ---- averaged SGD ------------------------------------------------------- */

/* The curvature bound k of the loss in the score (see the header). */
static double curvature(const problem *pb)
{
    if (pb->softmax) return 0.5;
    switch (pb->loss) {
    case RFX_LOSS_LOGISTIC: return 0.25;
    case RFX_LOSS_SQUARED_HINGE:
    case RFX_LOSS_SQUARED: return 2.0;
    case RFX_LOSS_HINGE:
    default: return 1.0;
    }
}

static rfx_status sgd(problem *pb, const rfx_classify_params *p, double *x,
                      rfx_classify_report *rep)
{
    const size_t D = pb->D, K = pb->K, N = D * K + (pb->intercept ? K : 0);
    const size_t bs = p->batch_size;
    size_t win = pb->chunk / bs * bs;
    if (win < bs) win = bs;
    double *avg = NULL, *R = NULL, *Zwin = NULL;
    size_t *perm = NULL, *gidx = NULL;
    size_t zsz = 0;
    rfx_status st = rfx__calloc(N, sizeof *avg, (void **)&avg, "classify: SGD average");
    if (!st) st = rfx__mul(bs, K, &zsz, "classify: SGD residuals");
    if (!st) st = rfx__alloc(zsz, sizeof *R, (void **)&R, "classify: SGD residuals");
    if (!st) st = rfx__alloc(pb->max_block, sizeof *perm, (void **)&perm, "classify: SGD order");
    if (!st) st = rfx__alloc(win, sizeof *gidx, (void **)&gidx, "classify: SGD order");
    if (!st && !pb->Z) st = rfx__mul(win, D, &zsz, "classify: SGD window");
    if (!st && !pb->Z) st = rfx__alloc(zsz, sizeof *Zwin, (void **)&Zwin, "classify: SGD window");
    if (st) goto done;
    double *W = x, *b = pb->intercept ? x + D * K : NULL;
    double eta0 = p->learning_rate;
    size_t t = 0, n_avg = 0;
    for (size_t e = 0; e < p->epochs && !st; e++) {
        const int averaging = e >= 1 || p->epochs == 1;
        cursor c;
        st = cursor_start(pb, &c);
        for (size_t blk = 0; !st; blk++) {
            size_t brows = 0;
            int end = 0;
            st = cursor_block(&c, &brows, &end);
            if (st || end) break;
            if (brows == 0) continue;
            const size_t row0 = c.row0;
            const double *Xb = NULL;
            size_t ldx = 0;
            const uint32_t *yb;
            if (pb->Z) {
                yb = pb->y + row0;
            } else if (pb->src) {
                st = map_labels(pb, &c.blk, 0, brows, row0, pb->yw);
                if (st) break;
                yb = pb->yw;
                Xb = c.blk.x;
                ldx = c.blk.stride;
            } else {
                yb = pb->y;
                Xb = pb->X.data;
                ldx = pb->X.stride;
            }
            c.off = brows;
            /* this epoch's order of the block's rows */
            rfx__rng rng;
            rfx__rng_init(&rng, p->seed, STREAM_SGD, ((uint64_t)e << 32) ^ (uint64_t)blk);
            for (size_t i = 0; i < brows; i++) perm[i] = i;
            rfx__rng_shuffle(&rng, perm, brows);
            for (size_t w0 = 0; w0 < brows; w0 += win) {
                size_t wr = brows - w0 < win ? brows - w0 : win;
                if (!pb->Z) featurise_rows(pb, Xb, ldx, perm + w0, wr, Zwin);
                for (size_t q = 0; q < wr; q += bs) {
                    size_t m = wr - q < bs ? wr - q : bs;
                    for (size_t j = 0; j < m; j++) gidx[j] = perm[w0 + q + j];
                    if (eta0 <= 0) { /* the automatic step, from the first mini-batch */
                        double rho = 0;
                        for (size_t j = 0; j < m; j++) {
                            const double *z = pb->Z ? pb->Z + (row0 + gidx[j]) * D
                                                    : Zwin + (q + j) * D;
                            double v = rfx__dot(z, z, D);
                            if (v > rho) rho = v;
                        }
                        eta0 = 1.0 / (curvature(pb) * (1.0 + rho));
                    }
                    /* scores and residuals, row by row */
                    for (size_t j = 0; j < m; j++) {
                        const double *z = pb->Z ? pb->Z + (row0 + gidx[j]) * D
                                                : Zwin + (q + j) * D;
                        double *r = R + j * K;
                        for (size_t k = 0; k < K; k++) r[k] = b ? b[k] : 0.0;
                        for (size_t l = 0; l < D; l++)
                            for (size_t k = 0; k < K; k++) r[k] += z[l] * W[l * K + k];
                        uint32_t yy = yb[gidx[j]];
                        rows_loss(pb, r, &yy, NULL, 1, 1, 1.0);
                    }
                    const double eta = eta0 / pow(1.0 + pb->lambda * eta0 * (double)t, 0.75);
                    const double shrink = 1.0 - eta * pb->lambda, step = eta / (double)m;
                    for (size_t l = 0; l < D * K; l++) W[l] *= shrink;
                    for (size_t j = 0; j < m; j++) {
                        const double *z = pb->Z ? pb->Z + (row0 + gidx[j]) * D
                                                : Zwin + (q + j) * D;
                        const double *r = R + j * K;
                        for (size_t l = 0; l < D; l++)
                            for (size_t k = 0; k < K; k++) W[l * K + k] -= step * z[l] * r[k];
                        if (b)
                            for (size_t k = 0; k < K; k++) b[k] -= step * r[k];
                    }
                    t++;
                    if (averaging) {
                        n_avg++;
                        const double inv = 1.0 / (double)n_avg;
                        for (size_t l = 0; l < N; l++) avg[l] += (x[l] - avg[l]) * inv;
                    }
                }
            }
        }
        if (!st && !isfinite(norm_inf(x, N)))
            st = rfx__error(RFX_ENUMERIC, "classify: SGD diverged in epoch %zu (learning_rate "
                            "%g too large?)", e, eta0);
        if (!st) pb->passes++;
        if (!st && cancelled(p, (double)(e + 1) / (double)p->epochs))
            st = rfx__error(RFX_ECANCELLED, "classify: cancelled by the progress callback");
    }
    if (!st && n_avg > 0) memcpy(x, avg, N * sizeof *x);
    if (!st) {
        rep->iterations = p->epochs;
        rep->converged = 0;
    }
done:
    free(avg);
    free(R);
    free(perm);
    free(gidx);
    free(Zwin);
    return st;
}

/* ---- checks, set-up, the driver ----------------------------------------- */

rfx_status rfx_classify_params_check(const rfx_classify_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "classify: params is NULL");
    if (p->loss == RFX_LOSS_AUTO)
        return rfx__error(RFX_EINVAL, "classify.loss: auto is the one-call fit's (least squares, "
                          "refined by the squared hinge); this fit needs the loss itself");
    if ((unsigned)p->loss > RFX_LOSS_AUTO)
        return rfx__error(RFX_EINVAL, "classify.loss: %d is not an rfx_loss", (int)p->loss);
    if ((unsigned)p->multiclass > RFX_MULTICLASS_SOFTMAX)
        return rfx__error(RFX_EINVAL, "classify.multiclass: %d is not an rfx_multiclass",
                          (int)p->multiclass);
    if ((unsigned)p->optimizer > RFX_OPTIMIZER_SGD)
        return rfx__error(RFX_EINVAL, "classify.optimizer: %d is not an rfx_optimizer",
                          (int)p->optimizer);
    if (!(isfinite(p->lambda) && p->lambda > 0))
        return rfx__error(RFX_EINVAL, "classify.lambda: must be > 0 and finite, got %g",
                          p->lambda);
    if (p->fit_intercept != 0 && p->fit_intercept != 1)
        return rfx__error(RFX_EINVAL, "classify.fit_intercept: must be 0 or 1, got %d",
                          p->fit_intercept);
    if (p->balanced != 0 && p->balanced != 1)
        return rfx__error(RFX_EINVAL, "classify.balanced: must be 0 or 1, got %d", p->balanced);
    if (p->balanced && p->class_weights)
        return rfx__error(RFX_EINVAL, "classify.balanced: give class_weights or balanced, not "
                                      "both");
    if (!p->class_weights && p->n_class_weights != 0)
        return rfx__error(RFX_EINVAL, "classify.class_weights: NULL with n_class_weights = %zu",
                          p->n_class_weights);
    if (p->class_weights) {
        int any = 0;
        for (size_t k = 0; k < p->n_class_weights; k++) {
            double w = p->class_weights[k];
            if (!(isfinite(w) && w >= 0))
                return rfx__error(RFX_EINVAL, "classify.class_weights[%zu]: must be >= 0 and "
                                  "finite, got %g", k, w);
            any |= w > 0;
        }
        if (!any)
            return rfx__error(RFX_EINVAL, "classify.class_weights: all %zu weights are zero",
                              p->n_class_weights);
    }
    if (p->max_iter == 0) return rfx__error(RFX_EINVAL, "classify.max_iter: must be >= 1, got 0");
    if (!(isfinite(p->tol) && p->tol > 0))
        return rfx__error(RFX_EINVAL, "classify.tol: must be > 0 and finite, got %g", p->tol);
    if (p->epochs == 0) return rfx__error(RFX_EINVAL, "classify.epochs: must be >= 1, got 0");
    if (p->batch_size == 0)
        return rfx__error(RFX_EINVAL, "classify.batch_size: must be >= 1, got 0");
    if (!(isfinite(p->learning_rate) && p->learning_rate >= 0))
        return rfx__error(RFX_EINVAL, "classify.learning_rate: must be >= 0 and finite (0: "
                          "automatic), got %g", p->learning_rate);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "classify.n_threads: must be >= 0, got %d", p->n_threads);
    if (p->multiclass == RFX_MULTICLASS_SOFTMAX && p->loss != RFX_LOSS_LOGISTIC)
        return rfx__error(RFX_EINVAL, "classify.multiclass: softmax takes the logistic loss, not "
                          "%s", rfx_loss_name(p->loss));
    if (p->optimizer == RFX_OPTIMIZER_LBFGS && p->loss == RFX_LOSS_HINGE)
        return rfx__error(RFX_EINVAL, "classify.optimizer: lbfgs needs a differentiable loss; "
                          "the hinge loss takes dual-cd or sgd");
    if (p->sample_weight && p->optimizer == RFX_OPTIMIZER_SGD)
        return rfx__error(RFX_EINVAL, "classify.sample_weight: the sgd optimizer takes no sample "
                                      "weights; use lbfgs, dual-cd or auto");
    if (p->optimizer == RFX_OPTIMIZER_DUAL_CD &&
        (p->loss == RFX_LOSS_LOGISTIC || p->loss == RFX_LOSS_SQUARED))
        return rfx__error(RFX_EINVAL, "classify.optimizer: dual-cd is for the hinge and squared "
                          "hinge losses, not %s", rfx_loss_name(p->loss));
    return RFX_OK;
}

/* Class weights from the parameters and the class counts (the sums of
 * their rows' weights, when weighted) out of n (their sum). */
static rfx_status class_weights(const rfx_classify_params *p, const double *counts, size_t C,
                                double n, double *cw)
{
    if (p->class_weights && p->n_class_weights != C)
        return rfx__error(RFX_EINVAL, "classify.class_weights: %zu weights for %zu classes",
                          p->n_class_weights, C);
    for (size_t k = 0; k < C; k++) {
        if (p->class_weights) cw[k] = p->class_weights[k];
        else if (p->balanced && counts[k] > 0)
            cw[k] = n / ((double)C * counts[k]);
        else cw[k] = 1.0;
    }
    return RFX_OK;
}

static void problem_free(problem *pb)
{
    free(pb->cw);
    free(pb->blocks);
    free(pb->Z);
    free(pb->ycache);
    free(pb->Zw);
    free(pb->yw);
    free(pb->S);
    free(pb->tl);
    free(pb->sumbuf);
}

/* The optimizer that runs, and whether the features are cached. */
static rfx_status resolve(problem *pb, const rfx_classify_params *p, rfx_optimizer *opt,
                          int *cache)
{
    size_t bytes = 0;
    *cache = p->cache_bytes > 0 && !rfx__mul3(pb->n, pb->D, sizeof(double), &bytes, "cache") &&
             bytes <= p->cache_bytes;
    rfx_clear_error();
    *opt = p->optimizer;
    if (*opt == RFX_OPTIMIZER_AUTO)
        *opt = pb->loss != RFX_LOSS_HINGE ? RFX_OPTIMIZER_LBFGS
               : *cache                  ? RFX_OPTIMIZER_DUAL_CD
                                         : RFX_OPTIMIZER_SGD;
    if (*opt == RFX_OPTIMIZER_SGD && pb->sw)
        return rfx__error(RFX_EINVAL, "classify.sample_weight: the hinge loss without the "
                          "features cached runs sgd, which takes no sample weights (raise "
                          "cache_bytes to %zu for dual-cd)", bytes);
    if (*opt == RFX_OPTIMIZER_DUAL_CD && !*cache)
        return rfx__error(RFX_EINVAL, "classify.optimizer: dual-cd needs the %zu x %zu features "
                          "cached, which cache_bytes = %zu does not allow", pb->n, pb->D,
                          p->cache_bytes);
    pb->rowwise = *opt == RFX_OPTIMIZER_SGD;
    return RFX_OK;
}

/* Workspaces of the passes. */
static rfx_status problem_workspace(problem *pb)
{
    size_t cz = 0, cs = 0;
    pb->chunk = rfx__chunk_rows(pb->D) / RFX__ROW_TILE * RFX__ROW_TILE;
    if (pb->chunk < RFX__ROW_TILE) pb->chunk = RFX__ROW_TILE;
    if (pb->chunk > pb->max_block) /* no chunk is longer than a block */
        pb->chunk = (pb->max_block + RFX__ROW_TILE - 1) / RFX__ROW_TILE * RFX__ROW_TILE;
    RFX__TRY(rfx__mul(pb->chunk, pb->D, &cz, "classify: feature block"));
    RFX__TRY(rfx__mul(pb->chunk, pb->K, &cs, "classify: scores"));
    if (!pb->Z) RFX__TRY(rfx__alloc(cz, sizeof(double), (void **)&pb->Zw, "classify: feature block"));
    RFX__TRY(rfx__alloc(cs, sizeof(double), (void **)&pb->S, "classify: scores"));
    RFX__TRY(rfx__alloc(pb->chunk / RFX__ROW_TILE + 1, sizeof(double), (void **)&pb->tl,
                        "classify: tile losses"));
    if (pb->src && !pb->Z) {
        size_t m = pb->chunk > pb->max_block ? pb->chunk : pb->max_block;
        RFX__TRY(rfx__alloc(m, sizeof(uint32_t), (void **)&pb->yw, "classify: labels"));
    }
    return RFX_OK;
}

/* Run the optimizer and build the model. */
/* The number of unknowns: the weights and the intercepts. */
static size_t n_unknowns(const problem *pb)
{
    return pb->D * pb->K + (pb->intercept ? pb->K : 0);
}

/* Fit from the start x (n_unknowns values; L-BFGS starts there, dual CD
 * and SGD from 0 whatever x holds), which receives the solution; the
 * model into *out. */
static rfx_status run_from(problem *pb, const rfx_classify_params *p, rfx_optimizer opt,
                           double *x, rfx_model **out, rfx_classify_report *report)
{
    const size_t D = pb->D, K = pb->K, N = n_unknowns(pb);
    rfx_classify_report rep;
    rfx_model *m = NULL;
    memset(&rep, 0, sizeof rep);
    rep.optimizer = opt;
    rep.n_classes = pb->C;
    rep.cached = pb->Z != NULL;
    if (!pb->S) RFX__TRY(problem_workspace(pb)); /* a shard makes it before its first sum */
    if (opt != RFX_OPTIMIZER_LBFGS) memset(x, 0, N * sizeof *x);
    rfx_status st = RFX_OK;
    if (cancelled(p, 0.0))
        st = rfx__error(RFX_ECANCELLED, "classify: cancelled by the progress callback");
    if (!st) {
        if (opt == RFX_OPTIMIZER_LBFGS) st = lbfgs(pb, p, x, &rep);
        else if (opt == RFX_OPTIMIZER_DUAL_CD) st = dual_cd(pb, p, x, &rep);
        else st = sgd(pb, p, x, &rep);
    }
    if (!st && opt != RFX_OPTIMIZER_LBFGS) { /* the report's objective: one more pass */
        double *g = NULL;
        st = rfx__alloc(N, sizeof *g, (void **)&g, "classify: gradient");
        if (!st) st = evaluate(pb, x, &rep.objective, g);
        if (!st) rep.grad_norm = norm_inf(g, N);
        free(g);
    }
    if (!st) st = rfx__classify_model_new(pb->f, pb->classes, pb->C, &m);
    if (st) return st;
    memcpy(m->W, x, D * K * sizeof(double));
    if (pb->intercept) memcpy(m->intercept, x + D * K, K * sizeof(double));
    m->loss = (int)pb->loss;
    m->multiclass = pb->softmax ? RFX_MULTICLASS_SOFTMAX : (int)p->multiclass;
    m->lambda = pb->lambda;
    m->n_train = (size_t)pb->n_loss;
    m->fit_intercept = pb->intercept;
    rep.passes = pb->passes;
    if (report) *report = rep;
    *out = m;
    return RFX_OK;
}

/* Fit from 0. */
static rfx_status run(problem *pb, const rfx_classify_params *p, rfx_optimizer opt,
                      rfx_model **out, rfx_classify_report *report)
{
    double *x = NULL;
    RFX__TRY(rfx__calloc(n_unknowns(pb), sizeof *x, (void **)&x, "classify: weights"));
    rfx_status st = run_from(pb, p, opt, x, out, report);
    free(x);
    return st;
}

rfx_status rfx__classify_model_new(const rfx_features *f, const double *classes, size_t C,
                                   rfx_model **out)
{
    rfx_features *fc = NULL;
    rfx_model *m = NULL;
    RFX__TRY(rfx__features_copy(f, &fc));
    rfx_status st = rfx__model_alloc(RFX_METHOD_CLASSIFY, fc, C == 2 ? 1 : C, 0, &m);
    if (st) {
        rfx_features_free(fc);
        return st;
    }
    if ((st = rfx__alloc(C, sizeof(double), (void **)&m->classes, "classify: classes"))) {
        rfx_model_free(m);
        return st;
    }
    memcpy(m->classes, classes, C * sizeof(double));
    m->n_classes = C;
    *out = m;
    return RFX_OK;
}

static void problem_init(problem *pb, const rfx_features *f, const rfx_classify_params *p,
                         size_t C)
{
    memset(pb, 0, sizeof *pb);
    pb->f = f;
    pb->d = f->d;
    pb->D = f->D;
    pb->C = C;
    pb->K = C == 2 ? 1 : C;
    pb->loss = p->loss;
    pb->softmax = p->multiclass == RFX_MULTICLASS_SOFTMAX && C > 2;
    pb->intercept = p->fit_intercept;
    pb->lambda = p->lambda;
    pb->nt = rfx__threads(p->n_threads);
    pb->sw = NULL;
    pb->n_loss = 0;
}

rfx_status rfx__classify_fit_indexed(const rfx_features *f, rfx_cmat X, const uint32_t *y,
                                     const double *classes, size_t C,
                                     const rfx_classify_params *params, rfx_model **out,
                                     rfx_classify_report *report)
{
    if (!out) return rfx__error(RFX_EINVAL, "classify: out is NULL");
    return rfx__classify_fit_path(f, X, y, classes, C, params, &params->lambda, 1, out, report);
}

rfx_status rfx__classify_fit_path(const rfx_features *f, rfx_cmat X, const uint32_t *y,
                                  const double *classes, size_t C,
                                  const rfx_classify_params *params, const double *lambdas,
                                  size_t n_lambdas, rfx_model **out, rfx_classify_report *report)
{
    if (!f) return rfx__error(RFX_EINVAL, "classify: f is NULL");
    if (!out || !lambdas || n_lambdas == 0)
        return rfx__error(RFX_EINVAL, "classify: no lambdas or no models to fit");
    RFX__TRY(rfx_classify_params_check(params));
    for (size_t l = 0; l < n_lambdas; l++)
        if (!(lambdas[l] > 0) || isinf(lambdas[l]))
            return rfx__error(RFX_EINVAL, "classify: lambda %zu is %g, must be finite and > 0", l,
                              lambdas[l]);
    RFX__TRY(rfx__check_cmat(X, "classify: X"));
    if (X.cols != f->d)
        return rfx__error(RFX_EDIM, "classify: X has %zu columns, the features take %zu", X.cols,
                          f->d);
    if (X.rows < 2)
        return rfx__error(RFX_EDIM, "classify: X has %zu rows, at least 2 are needed", X.rows);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "classify: X row %zu, column %zu: %g is not finite", r, c,
                          X.data[r * X.stride + c]);
    const double *sw = params->sample_weight;
    if (sw) RFX__TRY(rfx__check_weights(sw, X.rows, "classify.sample_weight"));
    problem pb;
    problem_init(&pb, f, params, C);
    pb.n = X.rows;
    pb.X = X;
    pb.y = y;
    pb.sw = sw;
    pb.n_loss = (double)X.rows;
    if (sw) {
        size_t pos = 0;
        for (size_t i = 0; i < X.rows; i++) pos += sw[i] > 0;
        pb.n_loss = (double)pos;
    }
    pb.classes = classes;
    pb.max_block = X.rows;
    double *counts = NULL, total = 0;
    rfx_optimizer opt;
    int cache;
    rfx_status st = rfx__calloc(C, sizeof *counts, (void **)&counts, "classify: class counts");
    if (!st) st = rfx__alloc(C, sizeof(double), (void **)&pb.cw, "classify: class weights");
    if (!st) st = rfx__alloc(1, sizeof(size_t), (void **)&pb.blocks, "classify: blocks");
    if (st) goto done;
    pb.blocks[0] = X.rows;
    pb.n_blocks = 1;
    for (size_t i = 0; i < X.rows; i++) {
        counts[y[i]] += sw ? sw[i] : 1.0;
        total += sw ? sw[i] : 1.0;
    }
    if ((st = class_weights(params, counts, C, total, pb.cw))) goto done;
    if ((st = resolve(&pb, params, &opt, &cache))) goto done;
    if (cache) {
        size_t nd;
        if ((st = rfx__mul(X.rows, pb.D, &nd, "classify: feature cache"))) goto done;
        if ((st = rfx__alloc(nd, sizeof(double), (void **)&pb.Z, "classify: feature cache")))
            goto done;
        featurise(&pb, X.data, X.stride, X.rows, pb.Z);
    }
    {
        double *x = NULL;
        size_t made = 0;
        st = rfx__calloc(n_unknowns(&pb), sizeof *x, (void **)&x, "classify: weights");
        for (; made < n_lambdas && !st; made++) {
            pb.lambda = lambdas[made];
            st = run_from(&pb, params, opt, x, &out[made], report ? &report[made] : NULL);
            if (st) break;
        }
        if (st)
            for (size_t l = 0; l < made; l++) {
                rfx_model_free(out[l]);
                out[l] = NULL;
            }
        free(x);
    }
done:
    free(counts);
    problem_free(&pb);
    return st;
}

rfx_status rfx_classify_fit(const rfx_features *f, rfx_cmat X, const double *labels,
                            const rfx_classify_params *params, rfx_model **out,
                            rfx_classify_report *report)
{
    if (!f) return rfx__error(RFX_EINVAL, "classify: f is NULL");
    if (!out) return rfx__error(RFX_EINVAL, "classify: out is NULL");
    RFX__TRY(rfx_classify_params_check(params));
    RFX__TRY(rfx__check_cmat(X, "classify: X"));
    if (!labels && X.rows > 0) return rfx__error(RFX_EINVAL, "classify: labels is NULL");
    if (X.cols != f->d)
        return rfx__error(RFX_EDIM, "classify: X has %zu columns, the features take %zu", X.cols,
                          f->d);
    if (X.rows < 2)
        return rfx__error(RFX_EDIM, "classify: X has %zu rows, at least 2 are needed", X.rows);
    double *classes = NULL;
    uint32_t *y = NULL;
    size_t C = 0;
    RFX__TRY(rfx__classify_classes(labels, X.rows, 1, "classify: labels", &classes, &C));
    rfx_status st = rfx__alloc(X.rows, sizeof *y, (void **)&y, "classify: labels");
    if (!st) {
        rfx__classify_index(labels, X.rows, 1, classes, C, y);
        st = rfx__classify_fit_indexed(f, X, y, classes, C, params, out, report);
    }
    free(classes);
    free(y);
    return st;
}

/* ---- from a source -------------------------------------------------------- */

/* A first pass over the source: check every block, record n and the block
 * sizes in pb, and hand each block's labels (its rows from row0) to
 * labels. */
typedef rfx_status (*labels_fn)(void *user, const problem *pb, const rfx_block *b, size_t row0);

static rfx_status scan_blocks(problem *pb, rfx_source *src, labels_fn labels, void *user)
{
    size_t cap = 0, nb = 0, n = 0, maxb = 0, *blocks = NULL;
    rfx_status st = src->rewind(src);
    if (st) rfx__error_prefix("classify source: rewind");
    while (!st) {
        rfx_block b;
        int end = 0;
        st = src->next(src, &b, &end);
        if (st) {
            rfx__error_prefix("classify source");
            break;
        }
        if (end) break;
        if (b.rows == 0) continue;
        if ((st = check_block(pb, &b, n))) break;
        if (nb == cap) {
            size_t nc = cap ? 2 * cap : 16;
            size_t *t = realloc(blocks, nc * sizeof *t);
            if (!t) {
                st = rfx__error(RFX_ENOMEM, "classify source: cannot allocate the block list");
                break;
            }
            blocks = t;
            cap = nc;
        }
        blocks[nb++] = b.rows;
        if (b.rows > maxb) maxb = b.rows;
        st = labels(user, pb, &b, n);
        if (!st && n > SIZE_MAX - b.rows)
            st = rfx__error(RFX_EOVERFLOW, "classify source: the row count overflows size_t");
        n += b.rows;
    }
    if (st) {
        free(blocks);
        return st;
    }
    pb->n = n;
    pb->blocks = blocks;
    pb->n_blocks = nb;
    pb->max_block = maxb;
    return RFX_OK;
}

/* The classes of a source as they come: sorted, with their counts. */
typedef struct class_set {
    double *cl;
    size_t *cn;
    size_t k, cap;
} class_set;

static rfx_status collect_classes(void *user, const problem *pb, const rfx_block *b, size_t row0)
{
    class_set *cs = user;
    (void)pb;
    (void)row0;
    for (size_t i = 0; i < b->rows; i++) {
        double v = b->y[i * b->y_stride];
        size_t lo = 0, hi = cs->k;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cs->cl[mid] < v) lo = mid + 1;
            else hi = mid;
        }
        if (lo < cs->k && cs->cl[lo] == v) {
            cs->cn[lo]++;
            continue;
        }
        if (cs->k == RFX_CLASSIFY_MAX_CLASSES)
            return rfx__error(RFX_EINVAL, "classify source: more than %d distinct labels (are "
                              "these class labels?)", RFX_CLASSIFY_MAX_CLASSES);
        if (cs->k == cs->cap) {
            size_t nc = cs->cap ? 2 * cs->cap : 16;
            double *t1 = realloc(cs->cl, nc * sizeof *t1);
            if (t1) cs->cl = t1;
            size_t *t2 = t1 ? realloc(cs->cn, nc * sizeof *t2) : NULL;
            if (t2) cs->cn = t2;
            if (!t1 || !t2)
                return rfx__error(RFX_ENOMEM, "classify source: cannot allocate the classes");
            cs->cap = nc;
        }
        memmove(cs->cl + lo + 1, cs->cl + lo, (cs->k - lo) * sizeof *cs->cl);
        memmove(cs->cn + lo + 1, cs->cn + lo, (cs->k - lo) * sizeof *cs->cn);
        cs->cl[lo] = v;
        cs->cn[lo] = 1;
        cs->k++;
    }
    return RFX_OK;
}

/* The first pass: check every block, collect the classes with their counts,
 * n and the block sizes. */
static rfx_status scan_source(problem *pb, rfx_source *src, double **classes, size_t **counts,
                              size_t *C)
{
    class_set cs = {NULL, NULL, 0, 0};
    rfx_status st = scan_blocks(pb, src, collect_classes, &cs);
    const int scanned = st == RFX_OK;
    if (!st && pb->n < 2)
        st = rfx__error(RFX_EDIM, "classify source: %zu rows, at least 2 are needed", pb->n);
    if (!st && cs.k < 2)
        st = rfx__error(RFX_EINVAL, "classify source: every one of the %zu rows has the label %g; "
                        "classification needs at least 2 classes", pb->n, cs.cl[0]);
    if (st) {
        free(cs.cl);
        free(cs.cn);
        if (scanned) { /* the caller frees no problem on this failure */
            free(pb->blocks);
            pb->blocks = NULL;
        }
        return st;
    }
    *classes = cs.cl;
    *counts = cs.cn;
    *C = cs.k;
    return RFX_OK;
}

/* A shard's labels: counts of the C given classes (a label outside them is
 * an error). */
static rfx_status count_given(void *user, const problem *pb, const rfx_block *b, size_t row0)
{
    size_t *counts = user;
    for (size_t i = 0; i < b->rows; i++) {
        double v = b->y[i * b->y_stride];
        size_t k = class_of(v, pb->classes, pb->C);
        if (k == pb->C)
            return rfx__error(RFX_EINVAL, "classify source: row %zu has the label %g, not one "
                              "of the %zu classes given", row0 + i, v, pb->C);
        counts[k]++;
    }
    return RFX_OK;
}

/* The first pass of a shard: check every block, count the rows of each of
 * the C given classes, n and the block sizes. A shard may hold no rows. */
static rfx_status scan_shard(problem *pb, rfx_source *src, size_t *counts)
{
    RFX__TRY(scan_blocks(pb, src, count_given, counts));
    if (pb->max_block == 0) pb->max_block = 1; /* workspaces of one tile when empty */
    return RFX_OK;
}

/* The second pass, when the features fit: cache them and the labels, by
 * the same chunks and tiles as an uncached pass. */
static rfx_status fill_cache(problem *pb)
{
    size_t nd;
    RFX__TRY(rfx__mul(pb->n, pb->D, &nd, "classify: feature cache"));
    RFX__TRY(rfx__alloc(nd, sizeof(double), (void **)&pb->Z, "classify: feature cache"));
    RFX__TRY(rfx__alloc(pb->n, sizeof(uint32_t), (void **)&pb->ycache, "classify: labels"));
    /* run the cursor over the source itself: Z must be NULL while reading */
    double *Z = pb->Z;
    pb->Z = NULL;
    cursor c;
    rfx_status st = cursor_start(pb, &c);
    while (!st) {
        size_t brows = 0;
        int end = 0;
        st = cursor_block(&c, &brows, &end);
        if (st || end) break;
        const size_t row0 = c.row0;
        st = map_labels(pb, &c.blk, 0, brows, row0, pb->ycache + row0);
        for (size_t off = 0; off < brows && !st; off += pb->chunk) {
            size_t r = brows - off < pb->chunk ? brows - off : pb->chunk;
            featurise(pb, c.blk.x + off * c.blk.stride, c.blk.stride, r, Z + (row0 + off) * pb->D);
        }
        c.off = brows;
    }
    pb->Z = Z;
    pb->y = pb->ycache;
    if (!st) pb->passes++;
    return st;
}

rfx_status rfx_classify_fit_source(const rfx_features *f, rfx_source *src,
                                   const rfx_classify_params *params, rfx_model **out,
                                   rfx_classify_report *report)
{
    if (!f) return rfx__error(RFX_EINVAL, "classify: f is NULL");
    if (!out) return rfx__error(RFX_EINVAL, "classify: out is NULL");
    if (!src || !src->next || !src->rewind)
        return rfx__error(RFX_EINVAL, "classify: src is NULL or lacks next / rewind");
    RFX__TRY(rfx_classify_params_check(params));
    if (params->sample_weight)
        return rfx__error(RFX_EINVAL, "classify.sample_weight: a source's rows carry no weights; "
                                      "use rfx_classify_fit");
    problem pb;
    double *classes = NULL;
    size_t *counts = NULL, C = 0;
    rfx_optimizer opt;
    int cache;
    problem_init(&pb, f, params, 2);
    pb.src = src;
    rfx_status st = scan_source(&pb, src, &classes, &counts, &C);
    if (st) return st;
    pb.passes = 1;
    pb.n_loss = (double)pb.n;
    pb.C = C;
    pb.K = C == 2 ? 1 : C;
    pb.softmax = params->multiclass == RFX_MULTICLASS_SOFTMAX && C > 2;
    pb.classes = classes;
    st = rfx__alloc(C, sizeof(double), (void **)&pb.cw, "classify: class weights");
    double *dcounts = NULL;
    if (!st) st = rfx__alloc(C, sizeof *dcounts, (void **)&dcounts, "classify: class counts");
    if (!st) {
        for (size_t k = 0; k < C; k++) dcounts[k] = (double)counts[k];
        st = class_weights(params, dcounts, C, (double)pb.n, pb.cw);
    }
    free(dcounts);
    if (!st) st = resolve(&pb, params, &opt, &cache);
    if (!st) {
        /* the chunk size is needed by the cache fill */
        pb.chunk = rfx__chunk_rows(pb.D) / RFX__ROW_TILE * RFX__ROW_TILE;
        if (pb.chunk < RFX__ROW_TILE) pb.chunk = RFX__ROW_TILE;
        if (pb.chunk > pb.max_block)
            pb.chunk = (pb.max_block + RFX__ROW_TILE - 1) / RFX__ROW_TILE * RFX__ROW_TILE;
    }
    if (!st && cache) st = fill_cache(&pb);
    if (!st) st = run(&pb, params, opt, out, report);
    free(classes);
    free(counts);
    problem_free(&pb);
    return st;
}

/* ---- a shard of a fit over workers ------------------------------------ */

/* Every check and allocation that can fail on one worker alone comes
 * before the first sum, and its status goes into it: the workers then
 * fail together, or go on together. */
rfx_status rfx_classify_fit_shard(const rfx_features *f, rfx_source *src,
                                  const rfx_classify_params *params,
                                  const rfx_classify_shard *shard, rfx_model **out,
                                  rfx_classify_report *report)
{
    if (!shard || !shard->sum)
        return rfx__error(RFX_EINVAL, "classify shard: the shard or its sum is NULL");
    rfx_classify_params p = params ? *params : rfx_classify_params_default();
    const size_t C = shard->n_classes;
    rfx_status st = RFX_OK;
    if (!f || !out || !params)
        st = rfx__error(RFX_EINVAL, "classify shard: f, params or out is NULL");
    else if (!src || !src->next || !src->rewind)
        st = rfx__error(RFX_EINVAL, "classify: src is NULL or lacks next / rewind");
    if (!st) st = rfx_classify_params_check(&p);
    if (!st && p.sample_weight)
        st = rfx__error(RFX_EINVAL, "classify.sample_weight: a source's rows carry no weights");
    if (!st && p.optimizer != RFX_OPTIMIZER_AUTO && p.optimizer != RFX_OPTIMIZER_LBFGS)
        st = rfx__error(RFX_EINVAL, "classify.optimizer: a sharded fit runs lbfgs (or auto), "
                        "not %s", rfx_optimizer_name(p.optimizer));
    if (!st && p.loss == RFX_LOSS_HINGE)
        st = rfx__error(RFX_EINVAL, "classify.loss: a sharded fit runs lbfgs, which needs a "
                        "differentiable loss, not hinge");
    if (!st && (!shard->classes || C < 2 || C > RFX_CLASSIFY_MAX_CLASSES))
        st = rfx__error(RFX_EINVAL, "classify shard: %zu classes given, 2 to %d are needed", C,
                        RFX_CLASSIFY_MAX_CLASSES);
    for (size_t k = 0; !st && k < C; k++)
        if (!isfinite(shard->classes[k]) || (k && !(shard->classes[k] > shard->classes[k - 1])))
            st = rfx__error(RFX_EINVAL, "classify shard: classes[%zu] = %g is not finite or not "
                            "above the one before", k, shard->classes[k]);
    /* the progress callback of one worker could stop it alone: the sums
     * are where a distributed caller reports progress */
    p.progress = NULL;
    p.optimizer = RFX_OPTIMIZER_LBFGS;
    problem pb;
    memset(&pb, 0, sizeof pb);
    double *v = NULL;
    size_t *counts = NULL;
    rfx_optimizer opt = RFX_OPTIMIZER_LBFGS;
    int cache = 0;
    if (!st) {
        problem_init(&pb, f, &p, C);
        pb.src = src;
        pb.shard = shard;
        pb.classes = shard->classes;
        const size_t N = pb.D * pb.K + (pb.intercept ? pb.K : 0);
        st = rfx__calloc(C + 1, sizeof *v, (void **)&v, "classify: class counts");
        if (!st) st = rfx__calloc(C, sizeof *counts, (void **)&counts, "classify: class counts");
        if (!st) st = rfx__alloc(C, sizeof(double), (void **)&pb.cw, "classify: class weights");
        if (!st) st = rfx__alloc(N + 1, sizeof(double), (void **)&pb.sumbuf, "classify: sums");
    }
    if (!st) st = scan_shard(&pb, src, counts);
    if (!st) {
        pb.passes = 1;
        st = resolve(&pb, &p, &opt, &cache);
    }
    if (!st) {
        /* the chunk size first: the cache fill needs it */
        pb.chunk = rfx__chunk_rows(pb.D) / RFX__ROW_TILE * RFX__ROW_TILE;
        if (pb.chunk < RFX__ROW_TILE) pb.chunk = RFX__ROW_TILE;
        if (pb.chunk > pb.max_block)
            pb.chunk = (pb.max_block + RFX__ROW_TILE - 1) / RFX__ROW_TILE * RFX__ROW_TILE;
    }
    if (!st && cache && pb.n) st = fill_cache(&pb);
    if (!st) st = problem_workspace(&pb);
    if (!st) {
        for (size_t k = 0; k < C; k++) v[k] = (double)counts[k];
        v[C] = (double)pb.n;
    }
    /* the first sum: the class counts and the rows of every worker */
    double one = 0;
    st = shard->sum(shard->user, v ? v : &one, v ? C + 1 : 1, st);
    if (!st && v[C] < 2)
        st = rfx__error(RFX_EDIM, "classify shard: %g rows in all, at least 2 are needed", v[C]);
    if (!st) {
        pb.n_loss = v[C];
        st = class_weights(&p, v, C, v[C], pb.cw);
    }
    if (!st) st = run(&pb, &p, opt, out, report);
    free(v);
    free(counts);
    problem_free(&pb);
    return st;
}
